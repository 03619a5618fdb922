/* sampler_pages: pages of served file lists (see sampler_pages.h). */
#include "sampler_pages.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t page;
    uint64_t last;      /* the last position known to need it */
    int      present;
    int      wide;
    size_t   n;
    void    *files;     /* n catalog indices, u32 or u64 (owned) */
} page_t;

typedef struct {
    page_t *pages;
    size_t  count, cap;
} slot_t;

struct sb_pages {
    slot_t  *slots;
    uint64_t nslots;
};

sb_pages_t *
sb_pages_new (uint64_t nranks)
{
    sb_pages_t *self = calloc (1, sizeof *self);
    if (!self || !(self->slots = calloc (nranks ? nranks : 1, sizeof *self->slots))) {
        free (self);
        return NULL;
    }
    self->nslots = nranks;
    return self;
}

void
sb_pages_reset (sb_pages_t *self)
{
    for (uint64_t s = 0; s < self->nslots; s++) {
        for (size_t i = 0; i < self->slots[s].count; i++)
            free (self->slots[s].pages[i].files);
        self->slots[s].count = 0;
    }
}

void
sb_pages_destroy (sb_pages_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_pages_t *self = *self_p;
    sb_pages_reset (self);
    for (uint64_t s = 0; s < self->nslots; s++)
        free (self->slots[s].pages);
    free (self->slots);
    free (self);
    *self_p = NULL;
}

static page_t *
s_find (const sb_pages_t *self, uint64_t slot, uint64_t page)
{
    if (slot >= self->nslots)
        return NULL;
    const slot_t *s = &self->slots[slot];
    for (size_t i = 0; i < s->count; i++)
        if (s->pages[i].page == page)
            return &s->pages[i];
    return NULL;
}

int
sb_pages_state (const sb_pages_t *self, uint64_t slot, uint64_t page)
{
    const page_t *p = s_find (self, slot, page);
    return !p ? 0 : p->present ? 2 : 1;
}

int
sb_pages_ask (sb_pages_t *self, uint64_t slot, uint64_t page, uint64_t last)
{
    if (slot >= self->nslots || s_find (self, slot, page))
        return -1;
    slot_t *s = &self->slots[slot];
    if (s->count == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        page_t *grown = realloc (s->pages, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->pages = grown;
        s->cap = cap;
    }
    s->pages[s->count++] = (page_t) { .page = page, .last = last };
    return 0;
}

void
sb_pages_touch (sb_pages_t *self, uint64_t slot, uint64_t page, uint64_t last)
{
    page_t *p = s_find (self, slot, page);
    if (p && p->last < last)
        p->last = last;
}

int
sb_pages_put (sb_pages_t *self, uint64_t slot, uint64_t page, const uint64_t *files, size_t n, int wide)
{
    page_t *p = s_find (self, slot, page);
    if (!p || p->present)
        return -1;
    void *a = malloc (n ? n * (wide ? sizeof (uint64_t) : sizeof (uint32_t)) : 1);
    if (!a)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (wide)
            ((uint64_t *) a)[i] = files[i];
        else
            ((uint32_t *) a)[i] = (uint32_t) files[i];
    p->files = a;
    p->n = n;
    p->wide = wide;
    p->present = 1;
    return 0;
}

int
sb_pages_get (const sb_pages_t *self, uint64_t slot, uint64_t page, uint64_t j, uint64_t *file)
{
    const page_t *p = s_find (self, slot, page);
    if (!p || !p->present || j >= p->n)
        return -1;
    *file = p->wide ? ((const uint64_t *) p->files)[j] : ((const uint32_t *) p->files)[j];
    return 0;
}

void
sb_pages_release (sb_pages_t *self, uint64_t slot, uint64_t position)
{
    if (slot >= self->nslots)
        return;
    slot_t *s = &self->slots[slot];
    size_t kept = 0;
    for (size_t i = 0; i < s->count; i++) {
        if (s->pages[i].present && s->pages[i].last < position) {
            free (s->pages[i].files);
            continue;
        }
        s->pages[kept++] = s->pages[i];
    }
    s->count = kept;
}

uint64_t
sb_pages_held (const sb_pages_t *self, uint64_t *bytes)
{
    uint64_t count = 0, b = 0;
    for (uint64_t s = 0; s < self->nslots; s++)
        for (size_t i = 0; i < self->slots[s].count; i++) {
            const page_t *p = &self->slots[s].pages[i];
            count++;
            b += p->present ? p->n * (p->wide ? 8 : 4) : 0;
        }
    if (bytes)
        *bytes = b;
    return count;
}
