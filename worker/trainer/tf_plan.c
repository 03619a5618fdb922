/* tf_plan: DLIO's tf.data reads per loader thread (see tf_plan.h). */
#include "tf_plan.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* a range a thread read of its current file: an open-addressing table keyed
 * by offset (the row groups of one file have distinct offsets) */
typedef struct {
    uint64_t offset, length, slot, seq;
    int      used;
} s_range_t;

typedef struct {
    uint64_t   file;
    int        has_file;
    s_range_t *tab;
    size_t     cap, n;      /* cap a power of two (or 0) */
} s_thread_t;

struct sb_tf_plan {
    s_thread_t *t;
    size_t      threads;
};

sb_tf_mode_t
sb_tf_mode (const char *sampler, const char *format, uint64_t samples_per_file)
{
    if (!sampler || !format || strcasecmp (sampler, "dlio_iterative") != 0)
        return SB_TF_NONE;
    if ((strcasecmp (format, "npz") == 0 || strcasecmp (format, "npy") == 0) && samples_per_file > 1)
        return SB_TF_WHOLE_FILE;
    if (strcasecmp (format, "parquet") == 0)
        return SB_TF_GROUPS;
    return SB_TF_NONE;
}

sb_tf_plan_t *
sb_tf_plan_new (size_t threads)
{
    sb_tf_plan_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->threads = threads ? threads : 1;
    if (!(self->t = calloc (self->threads, sizeof *self->t))) {
        free (self);
        return NULL;
    }
    return self;
}

void
sb_tf_plan_destroy (sb_tf_plan_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    for (size_t i = 0; i < (*self_p)->threads; i++)
        free ((*self_p)->t[i].tab);
    free ((*self_p)->t);
    free (*self_p);
    *self_p = NULL;
}

static void
s_forget (s_thread_t *t)
{
    if (t->tab)
        memset (t->tab, 0, t->cap * sizeof *t->tab);
    t->n = 0;
    t->has_file = 0;
}

void
sb_tf_plan_reset (sb_tf_plan_t *self)
{
    for (size_t i = 0; i < self->threads; i++)
        s_forget (&self->t[i]);
}

static s_thread_t *
s_thread (const sb_tf_plan_t *self, size_t thread)
{
    return &self->t[thread < self->threads ? thread : 0];
}

int
sb_tf_plan_opens (const sb_tf_plan_t *self, size_t thread, uint64_t file)
{
    const s_thread_t *t = s_thread (self, thread);
    return !t->has_file || t->file != file;
}

static size_t
s_hash (uint64_t offset, size_t cap)
{
    offset ^= offset >> 33;
    offset *= 0xff51afd7ed558ccdULL;
    offset ^= offset >> 33;
    return (size_t) offset & (cap - 1);
}

int
sb_tf_plan_find (const sb_tf_plan_t *self, size_t thread, uint64_t file, uint64_t offset, uint64_t length,
                 uint64_t *slot, uint64_t *seq)
{
    const s_thread_t *t = s_thread (self, thread);
    if (!t->has_file || t->file != file || t->cap == 0)
        return 0;
    for (size_t i = s_hash (offset, t->cap);; i = (i + 1) & (t->cap - 1)) {
        const s_range_t *e = &t->tab[i];
        if (!e->used)
            return 0;
        if (e->offset == offset && e->length == length) {
            *slot = e->slot;
            *seq = e->seq;
            return 1;
        }
    }
}

static void
s_put (s_range_t *tab, size_t cap, const s_range_t *e)
{
    size_t i = s_hash (e->offset, cap);
    while (tab[i].used && !(tab[i].offset == e->offset && tab[i].length == e->length))
        i = (i + 1) & (cap - 1);
    tab[i] = *e;
}

int
sb_tf_plan_add (sb_tf_plan_t *self, size_t thread, uint64_t file, uint64_t offset, uint64_t length, uint64_t slot,
                uint64_t seq)
{
    s_thread_t *t = s_thread (self, thread);
    if (!t->has_file || t->file != file) {
        s_forget (t);
        t->file = file;
        t->has_file = 1;
    }
    if ((t->n + 1) * 2 > t->cap) {     /* at most half full: probes stay short */
        size_t cap = t->cap ? t->cap * 2 : 16;
        s_range_t *grown = calloc (cap, sizeof *grown);
        if (!grown)
            return -1;
        for (size_t i = 0; i < t->cap; i++)
            if (t->tab[i].used)
                s_put (grown, cap, &t->tab[i]);
        free (t->tab);
        t->tab = grown;
        t->cap = cap;
    }
    s_range_t e = { .offset = offset, .length = length, .slot = slot, .seq = seq, .used = 1 };
    s_put (t->tab, t->cap, &e);
    t->n++;
    return 0;
}
