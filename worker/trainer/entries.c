/* entries: catalog entries asked in pages (see entries.h). */
#include "entries.h"
#include "dataset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sb_entries {
    uint64_t  epoch;
    uint64_t *files;        /* in order of first need (owned) */
    uint64_t *sizes, *dlio; /* per listed file, valid below `received` (owned) */
    char    **keys;         /* per listed file, NULL: derived (owned) */
    uint64_t  count, cap;
    uint64_t  received;     /* entries that arrived: the first `received` of files */
    uint64_t  asked;        /* entries asked for */
    uint64_t  pages_asked, pages_received;
    uint64_t  page;         /* entries per page (the last may be shorter) */
    uint64_t *slots;        /* hash: file + 1 (0 empty) ... */
    uint64_t *where;        /* ... and its index in files */
    uint64_t  nslots;       /* a power of two, > 2 * count */
};

sb_entries_t *
sb_entries_new (void)
{
    return calloc (1, sizeof (sb_entries_t));
}

static void
s_free_keys (sb_entries_t *self)
{
    if (self->keys)
        for (uint64_t i = 0; i < self->count; i++)
            free (self->keys[i]);
}

void
sb_entries_destroy (sb_entries_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_entries_t *self = *self_p;
    s_free_keys (self);
    free (self->files);
    free (self->sizes);
    free (self->dlio);
    free (self->keys);
    free (self->slots);
    free (self->where);
    free (self);
    *self_p = NULL;
}

void
sb_entries_reset (sb_entries_t *self, uint64_t epoch)
{
    s_free_keys (self);
    if (self->keys)
        memset (self->keys, 0, self->cap * sizeof *self->keys);
    if (self->slots)
        memset (self->slots, 0, self->nslots * sizeof *self->slots);
    self->epoch = epoch;
    self->count = self->received = self->asked = self->pages_asked = self->pages_received = 0;
}

static uint64_t
s_hash (uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* Slot of file: where it is, or the empty slot it would take. */
static uint64_t
s_slot (const sb_entries_t *self, uint64_t file)
{
    uint64_t mask = self->nslots - 1, i = s_hash (file) & mask;
    while (self->slots[i] && self->slots[i] != file + 1)
        i = (i + 1) & mask;
    return i;
}

static int
s_grow (sb_entries_t *self)
{
    uint64_t cap = self->cap ? 2 * self->cap : 1024;
    uint64_t *files = realloc (self->files, cap * sizeof *files);
    if (files)
        self->files = files;
    uint64_t *sizes = realloc (self->sizes, cap * sizeof *sizes);
    if (sizes)
        self->sizes = sizes;
    uint64_t *dlio = realloc (self->dlio, cap * sizeof *dlio);
    if (dlio)
        self->dlio = dlio;
    char **keys = realloc (self->keys, cap * sizeof *keys);
    if (keys) {
        self->keys = keys;
        memset (keys + self->cap, 0, (cap - self->cap) * sizeof *keys);
    }
    if (!files || !sizes || !dlio || !keys)
        return -1;
    self->cap = cap;
    /* the hash: twice the capacity, rebuilt */
    uint64_t nslots = 2 * cap;
    uint64_t *slots = calloc (nslots, sizeof *slots), *where = malloc (nslots * sizeof *where);
    if (!slots || !where) {
        free (slots);
        free (where);
        return -1;
    }
    free (self->slots);
    free (self->where);
    self->slots = slots;
    self->where = where;
    self->nslots = nslots;
    for (uint64_t j = 0; j < self->count; j++) {
        uint64_t i = s_slot (self, self->files[j]);
        self->slots[i] = self->files[j] + 1;
        self->where[i] = j;
    }
    return 0;
}

int
sb_entries_want (sb_entries_t *self, uint64_t file)
{
    if (self->nslots) {
        uint64_t i = s_slot (self, file);
        if (self->slots[i])
            return 0;
    }
    if (self->count == self->cap && s_grow (self) != 0)
        return -1;
    uint64_t i = s_slot (self, file);
    self->slots[i] = file + 1;
    self->where[i] = self->count;
    self->files[self->count++] = file;
    return 0;
}

uint64_t
sb_entries_count (const sb_entries_t *self)
{
    return self->count;
}

int
sb_entries_get (const sb_entries_t *self, uint64_t file, uint64_t *size, uint64_t *dlio, const char **key)
{
    if (!self->nslots)
        return -1;
    uint64_t i = s_slot (self, file);
    if (!self->slots[i])
        return -1;
    uint64_t j = self->where[i];
    if (j >= self->received)
        return 1;
    *size = self->sizes[j];
    *dlio = self->dlio[j];
    *key = self->keys[j];
    return 0;
}

int
sb_entries_next_request (sb_entries_t *self, uint64_t page, uint64_t max_in_flight, sb_msg_t *msg)
{
    if (self->asked >= self->count || self->pages_asked - self->pages_received >= max_in_flight)
        return 0;
    uint64_t n = self->count - self->asked < page ? self->count - self->asked : page;
    self->page = page;
    memset (msg, 0, sizeof *msg);
    msg->type = SB_MSG_ENTRIES_REQ;
    msg->u.entries_req.epoch = self->epoch;
    msg->u.entries_req.seq = self->pages_asked++;
    msg->u.entries_req.indices.items = self->files + self->asked;
    msg->u.entries_req.indices.count = (size_t) n;
    self->asked += n;
    return 1;
}

int
sb_entries_on_page (sb_entries_t *self, sb_msg_entries_t *m, int with_keys, const char **bad_name, char *err,
                    size_t err_size)
{
    *bad_name = NULL;
    if (m->epoch != self->epoch || m->seq != self->pages_received || self->pages_received >= self->pages_asked) {
        snprintf (err, err_size, "ENTRIES page %llu of epoch %llu out of order (epoch %llu, %llu pages asked, %llu"
                  " received)", (unsigned long long) m->seq, (unsigned long long) m->epoch,
                  (unsigned long long) self->epoch, (unsigned long long) self->pages_asked,
                  (unsigned long long) self->pages_received);
        return -1;
    }
    /* pages are answered in order and each is as long as it was asked */
    uint64_t left = self->asked - self->received, want = left < self->page ? left : self->page;
    size_t n = m->sizes.count;
    if (n != want || m->dlio.count != n || (with_keys ? m->keys.count != n : m->keys.count != 0)) {
        snprintf (err, err_size, "ENTRIES page %llu has %zu sizes, %zu keys and %zu DLIO indices for %llu"
                  " entries (keys expected: %s)", (unsigned long long) m->seq, n, m->keys.count, m->dlio.count,
                  (unsigned long long) want, with_keys ? "yes" : "no");
        return -1;
    }
    for (size_t j = 0; j < m->keys.count; j++) {
        char why[128];
        if (sb_dataset_check_name (m->keys.items[j], why, sizeof why) != 0) {
            snprintf (err, err_size, "the coordinator sent object name '%s', which %s", m->keys.items[j], why);
            *bad_name = m->keys.items[j];
            return -1;
        }
    }
    for (size_t j = 0; j < n; j++) {
        uint64_t at = self->received + j;
        self->sizes[at] = m->sizes.items[j];
        self->dlio[at] = m->dlio.items[j];
        if (m->keys.count) {
            self->keys[at] = m->keys.items[j];
            m->keys.items[j] = NULL;    /* moved */
        }
    }
    self->received += n;
    self->pages_received++;
    return 0;
}
