/* tf_plan: DLIO's tf.data reads per loader thread (see tf_plan.h). */
#include "tf_plan.h"
#include "format.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* a range a thread read of its current file: an open-addressing table keyed
 * by offset (the row groups of one file have distinct offsets) */
typedef struct {
    uint64_t     offset, length;
    sb_tf_read_t read;
    int          used;      /* the table entry is taken */
} s_range_t;

typedef struct {
    uint64_t   file;
    int        has_file;
    s_range_t *tab;
    size_t     cap, n;      /* cap a power of two (or 0) */
    /* the open file's queued reads, in file order: [0, nqueued), issued below `issued` */
    sb_parquet_range_t *queue;
    size_t     nqueued, qcap, issued;
} s_thread_t;

struct sb_tf_plan {
    s_thread_t *t;
    size_t      threads;
};

sb_tf_mode_t
sb_tf_mode (const char *sampler, const char *format, uint64_t samples_per_file)
{
    if (!sampler || !format)
        return SB_TF_NONE;
    /* PyTorch's iterable readers of whole objects (TorchIterableDatasetSimple
     * on S3 and direct_fs: _s3_stream_next, _localfs_stream_next) fetch each
     * file of a loader worker once, whole, and yield its samples */
    if (strcasecmp (sampler, "dlio_files") == 0)
        return (strcasecmp (format, "npz") == 0 || strcasecmp (format, "npy") == 0) && samples_per_file > 1
                   ? SB_TF_WHOLE_FILE : SB_TF_NONE;
    if (strcasecmp (sampler, "dlio_iterative") != 0)
        return SB_TF_NONE;
    if ((strcasecmp (format, "npz") == 0 || strcasecmp (format, "npy") == 0) && samples_per_file > 1)
        return SB_TF_WHOLE_FILE;
    if (strcasecmp (format, "tfrecord") == 0)     /* TFRecordDataset streams each file, whole */
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
    for (size_t i = 0; i < (*self_p)->threads; i++) {
        free ((*self_p)->t[i].tab);
        free ((*self_p)->t[i].queue);
    }
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
    t->nqueued = 0;
    t->issued = 0;
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
            *slot = e->read.slot;
            *seq = e->read.seq;
            return 1;
        }
    }
}

sb_tf_read_t *
sb_tf_plan_get (sb_tf_plan_t *self, size_t thread, uint64_t file, uint64_t offset, uint64_t length)
{
    s_thread_t *t = s_thread (self, thread);
    if (!t->has_file || t->file != file || t->cap == 0)
        return NULL;
    for (size_t i = s_hash (offset, t->cap);; i = (i + 1) & (t->cap - 1)) {
        s_range_t *e = &t->tab[i];
        if (!e->used)
            return NULL;
        if (e->offset == offset && e->length == length)
            return &e->read;
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

/* put a read into the table of t's current file */
static int
s_insert (s_thread_t *t, uint64_t offset, uint64_t length, const sb_tf_read_t *read)
{
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
    s_range_t e = { .offset = offset, .length = length, .read = *read, .used = 1 };
    s_put (t->tab, t->cap, &e);
    t->n++;
    return 0;
}

int
sb_tf_plan_add (sb_tf_plan_t *self, size_t thread, uint64_t file, uint64_t offset, uint64_t length, uint64_t slot,
                uint64_t seq)
{
    s_thread_t *t = s_thread (self, thread);
    if (!t->has_file || t->file != file)
        sb_tf_plan_open (self, thread, file);
    sb_tf_read_t read = { .state = SB_TF_IN_FLIGHT, .slot = slot, .seq = seq, .used = 1 };
    return s_insert (t, offset, length, &read);
}

int
sb_tf_plan_open (sb_tf_plan_t *self, size_t thread, uint64_t file)
{
    s_thread_t *t = s_thread (self, thread);
    s_forget (t);
    t->file = file;
    t->has_file = 1;
    return 0;
}

int
sb_tf_plan_queue (sb_tf_plan_t *self, size_t thread, uint64_t offset, uint64_t length)
{
    s_thread_t *t = s_thread (self, thread);
    if (sb_tf_plan_get (self, thread, t->file, offset, length))
        return 0;   /* a group queued already (a layout of one group) */
    if (t->nqueued == t->qcap) {
        size_t cap = t->qcap ? t->qcap * 2 : 16;
        sb_parquet_range_t *grown = realloc (t->queue, cap * sizeof *grown);
        if (!grown)
            return -1;
        t->queue = grown;
        t->qcap = cap;
    }
    sb_tf_read_t read = { .state = SB_TF_PENDING };
    if (s_insert (t, offset, length, &read) != 0)
        return -1;
    t->queue[t->nqueued++] = (sb_parquet_range_t) { .offset = offset, .length = length };
    return 0;
}

int
sb_tf_plan_next_pending (const sb_tf_plan_t *self, size_t thread, uint64_t *offset, uint64_t *length)
{
    const s_thread_t *t = s_thread (self, thread);
    if (t->issued >= t->nqueued)
        return 0;
    *offset = t->queue[t->issued].offset;
    *length = t->queue[t->issued].length;
    return 1;
}

void
sb_tf_plan_issued (sb_tf_plan_t *self, size_t thread, uint64_t slot, uint64_t seq)
{
    s_thread_t *t = s_thread (self, thread);
    if (t->issued >= t->nqueued)
        return;
    sb_parquet_range_t q = t->queue[t->issued++];
    sb_tf_read_t *e = sb_tf_plan_get (self, thread, t->file, q.offset, q.length);
    if (e) {
        e->state = SB_TF_IN_FLIGHT;
        e->slot = slot;
        e->seq = seq;
    }
}

int
sb_tf_plan_pending (const sb_tf_plan_t *self)
{
    for (size_t i = 0; i < self->threads; i++)
        if (self->t[i].issued < self->t[i].nqueued)
            return 1;
    return 0;
}

void
sb_tf_plan_done (sb_tf_plan_t *self, size_t thread, uint64_t file, uint64_t offset, uint64_t length, uint64_t bytes,
                 uint64_t latency_us, double start)
{
    sb_tf_read_t *e = sb_tf_plan_get (self, thread, file, offset, length);
    if (!e || e->state != SB_TF_IN_FLIGHT)
        return;
    e->state = SB_TF_DONE;
    e->bytes = bytes;
    e->latency_us = latency_us;
    e->start = start;
}
