/* checkpoint: one rank's model and optimizer state, written or read back. */
#include "ckpt_rank.h"
#include "ckpt_target.h"
#include "dataset.h"
#include "log.h"
#include "engine.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    const sb_ckpt_rank_t *r;
    const sb_storage_cfg_t *storage;    /* the checkpoint folder's (sb_ckpt_target_open), borrowed */
    uint64_t              epoch;
    size_t                buf_size;
    sb_storage_t         *client;   /* the checkpoint storage's engine */
    int                   stopped;
    uint64_t              seed;     /* content of the file being written */
    uint64_t              filled;   /* the end of its furthest byte filled, or bytes read (progress) */
    int                   sized_reads;  /* a DLIO library's checkpoint reads: the checkpoint's size, not the object's */
} s_run_t;

static void
s_fail (s_run_t *self, const char *op, const char *target, int errno_val, const char *message,
        const sb_read_result_t *s3)
{
    if (!self->stopped)
        sb_report_failure (self->r->out, self->r->rank, op, target, errno_val, message, s3);
}

static int
s_should_stop (s_run_t *self)
{
    if (!self->stopped && self->r->stop && self->r->stop (self->r->stop_arg))
        self->stopped = 1;
    return self->stopped;
}

static void
s_progress (s_run_t *self, uint64_t bytes)
{
    self->r->interval->bytes += bytes;
    sb_report_interval (self->r->out, self->r->rank, self->epoch, self->r->interval, sb_now (), 0);
}

/* The engine's fill: the file's bytes, counted as progress as they are
 * made, buffer by buffer (a refill, for a hash or a retry, counts nothing
 * twice). */
static void
s_fill (void *arg, uint64_t offset, uint8_t *buf, size_t len)
{
    s_run_t *self = arg;
    sb_content_fill (self->seed, offset, buf, len);
    if (offset + len > self->filled) {
        uint64_t more = offset + len - self->filled;
        self->filled = offset + len;
        s_progress (self, more);
    }
}

/* The engine's got (sb_storage_open_t): a read's bytes, buffer by buffer. */
static void
s_got_cb (void *arg, uint64_t bytes)
{
    s_run_t *self = arg;
    self->filled += bytes;
    s_progress (self, bytes);
}

/* The engine's stop (sb_storage_open_t): between buffers of a file. */
static int
s_stop_cb (void *arg)
{
    return s_should_stop (arg);
}

/* A failed storage op as the rank's failure: with an engine that has
 * endpoints, the endpoint's status and code go with it. */
static void
s_storage_failure (s_run_t *self, const char *op, const char *key, const sb_storage_error_t *e, const char *hint)
{
    char message[sizeof e->text + 128];
    snprintf (message, sizeof message, "%s%s", e->text, hint && e->missing ? hint : "");
    if (!(sb_storage_client_caps (self->client) & SB_ENGINE_ENDPOINTS)) {
        s_fail (self, e->op[0] ? e->op : op, key, e->os_errno, message, NULL);
        return;
    }
    sb_read_result_t f = { .error = e->os_errno ? e->os_errno : -1, .http_status = e->status,
                           .library_code = e->lib_code, .attempt = e->attempt };
    snprintf (f.message, sizeof f.message, "%s", message);
    snprintf (f.target, sizeof f.target, "%s", key);
    snprintf (f.endpoint, sizeof f.endpoint, "%s", e->where);
    snprintf (f.service_code, sizeof f.service_code, "%s", e->code);
    s_fail (self, op, key, e->os_errno, message, &f);
}

/* A write that failed or stopped midway leaves a file cut short (files are
 * written in place, truncated first): it is removed, so a failed run
 * leaves no partial checkpoint behind to fill the disk or to be read as
 * one. An object store keeps no part of a failed PUT (and keeps the object
 * it replaced whole), so there is nothing to remove there. What was done
 * goes into note (appended to the failure's text). */
static void
s_remove_partial (s_run_t *self, const char *key, char *note, size_t note_size)
{
    struct stat st;
    if (!(sb_storage_client_caps (self->client) & SB_ENGINE_FOLDER) || lstat (key, &st) != 0 || !S_ISREG (st.st_mode))
        return;
    sb_storage_error_t e;
    if (sb_storage_remove (self->client, key, &e) == 0)
        snprintf (note, note_size, " (the partial file, %llu bytes, was removed)", (unsigned long long) st.st_size);
    else
        snprintf (note, note_size, " (the partial file, %llu bytes, could not be removed: %s)",
                  (unsigned long long) st.st_size, e.text);
}

/* Write key: size bytes of seeded content (in place; durable before it
 * counts with do_fsync: fsync, or the object store's commit). Once durable
 * its pages leave this host's page cache (SB_PUT_EVICT), so a read of it
 * later in the run measures the storage, not memory. */
static int
s_put (s_run_t *self, const char *key, uint64_t size, int do_fsync)
{
    sb_storage_error_t e;
    unsigned flags = do_fsync ? SB_PUT_FSYNC | SB_PUT_EVICT : 0;
    self->filled = 0;
    if (sb_storage_put (self->client, key, size, s_fill, self, flags, &e) != 0) {
        if (e.stopped)
            self->stopped = 1;      /* nothing to report: the rank was told to stop */
        size_t len = strlen (e.text);
        s_remove_partial (self, key, e.text + len, sizeof e.text - len);
        s_storage_failure (self, "write", key, &e, NULL);
        return -1;
    }
    if (size > self->filled)        /* an engine that takes no bytes (synthetic) */
        s_progress (self, size - self->filled);
    return 0;
}

/* Read key whole; it must hold exactly size bytes. */
static int
s_get (s_run_t *self, const char *key, uint64_t size)
{
    sb_storage_error_t e;
    uint64_t got = 0;
    /* clean pages of it go first: it is read from storage (SB_IO_EVICT).
     * DLIO's object store readers read the size the checkpoint has, in
     * range GETs (lib/storage/s3/s3_shape.h); elsewhere the whole file is
     * read and its length checked */
    uint64_t length = self->sized_reads ? size : 0;
    self->filled = 0;
    if (sb_storage_get (self->client, key, 0, length, SB_IO_EVICT, &got, &e) != 0) {
        if (e.stopped)
            self->stopped = 1;
        s_storage_failure (self, "read", key, &e, " (write the checkpoint first: checkpoint.num_checkpoints_write)");
        return -1;
    }
    if (got != size) {
        char err[1400];
        snprintf (err, sizeof err, "%s holds %llu bytes, the checkpoint has %llu", key, (unsigned long long) got,
                  (unsigned long long) size);
        s_fail (self, "read", key, 0, err, NULL);
        return -1;
    }
    if (size > self->filled)        /* an engine that reads it whole (an object store's GET) */
        s_progress (self, size - self->filled);
    return 0;
}

/* Open the client of the checkpoint folder's storage (its engine). */
static int
s_open (s_run_t *self, int write)
{
    sb_storage_cfg_t mine;     /* use_mpi_endpoint_distribution: the rank's own endpoint */
    sb_storage_for_rank (self->storage, self->r->rank, &mine);
    /* the run's ranks: DLIO's object store checkpoints keep about 16
     * uploads and range GETs in flight over all of them (the engine's
     * "library" option says whose requests, lib/storage/s3/s3_shape.h) */
    self->sized_reads = sb_storage_opt (&mine, "library") != NULL;
    char ranks[24];
    snprintf (ranks, sizeof ranks, "%llu", (unsigned long long) self->r->cfg->total_ranks);
    if (self->sized_reads && sb_storage_opt_set (&mine, mine.engine, "ckpt_ranks", ranks) != 0)
        self->sized_reads = 0;
    sb_storage_open_t how = { .root = "", .rank = self->r->rank, .depth = 1, .buffer_bytes = self->buf_size,
                              .stop = s_stop_cb, .got = s_got_cb, .stop_arg = self };
    sb_storage_error_t e;
    if (!(self->client = sb_storage_open (&mine, &how, &e))) {
        s_fail (self, write ? "write" : "read", NULL, e.os_errno, e.text, NULL);
        return -1;
    }
    return 0;
}

static void
s_close (s_run_t *self)
{
    if (self->client) {
        if (!self->stopped && (sb_storage_client_caps (self->client) & SB_ENGINE_ENDPOINTS))
            sb_report_storage_stats (self->r->out, self->r->rank, self->client);
        sb_storage_close (&self->client);
    }
}

/* Before the first write of a checkpoint into a local folder: the files
 * of this worker's ranks, names / sizes [first, last) (they share this
 * host's file systems), must fit in the free space of folder dir under
 * root, less what rewriting files there frees (sb_ckpt_target_more_bytes).
 * Files the other ranks began count with what they hold so far, as the
 * free space does, so every rank of the worker comes to the same answer
 * whenever it looks. 0, or -1 (reported: op write, ENOSPC, the folder,
 * the bytes needed and free). */
static int
s_check_space (s_run_t *self, const char *root, const char *dir, char *const *names, const uint64_t *sizes,
               size_t first, size_t last, uint64_t rank_first, uint64_t rank_last)
{
    char folder[PATH_MAX], slashed[PATH_MAX], err[PATH_MAX + 512];
    if (!(sb_storage_client_caps (self->client) & SB_ENGINE_FOLDER)
        || sb_strf (folder, sizeof folder, "%s%s", root, dir) != 0
        || sb_strf (slashed, sizeof slashed, "%s/", folder) != 0)
        return 0;   /* objects: no file system here; a name too long: the write says so */
    uint64_t need = sb_ckpt_target_more_bytes (slashed, names + first, sizes + first, last - first), free_bytes;
    if (sb_free_bytes (folder, folder, &free_bytes, err, sizeof err) != 0) {
        s_fail (self, "write", folder, 0, err, NULL);
        return -1;
    }
    if (need <= free_bytes)
        return 0;
    size_t files = 0;
    for (size_t i = first; i < last; i++)
        files += sizes[i] > 0;
    char ranks[64];
    if (rank_last > rank_first)
        snprintf (ranks, sizeof ranks, "ranks %llu-%llu", (unsigned long long) rank_first,
                  (unsigned long long) rank_last);
    else
        snprintf (ranks, sizeof ranks, "rank %llu", (unsigned long long) rank_first);
    snprintf (err, sizeof err, "not enough space in %s: the %zu file%s of %s on this host need%s %llu bytes (%.2f GiB)"
              " more there, %llu bytes (%.2f GiB) are free; nothing was written", folder, files, files == 1 ? "" : "s",
              ranks, files == 1 ? "s" : "",
              (unsigned long long) need, need / 1073741824.0, (unsigned long long) free_bytes,
              free_bytes / 1073741824.0);
    s_fail (self, "write", folder, ENOSPC, err, NULL);
    return -1;
}

/* Write or read files [first, last) of names / sizes in folder dir under
 * root; counts what was done into *files and *bytes. 0 or -1 (reported). */
static int
s_files (s_run_t *self, const char *root, const char *dir, char *const *names, const uint64_t *sizes, size_t first,
         size_t last, int write, int do_fsync, uint64_t *files, uint64_t *bytes)
{
    for (size_t i = first; i < last; i++) {
        if (s_should_stop (self))
            return -1;
        if (sizes[i] == 0)
            continue;
        char key[512], full[PATH_MAX];
        if (sb_strf (key, sizeof key, "%s/%s", dir, names[i]) != 0
            || sb_strf (full, sizeof full, "%s%s", root, key) != 0) {
            s_fail (self, write ? "write" : "read", names[i], ENAMETOOLONG, "checkpoint path too long", NULL);
            return -1;
        }
        self->seed = sb_dataset_content_seed (self->r->cfg->seed, key);
        int rc = write ? s_put (self, full, sizes[i], do_fsync) : s_get (self, full, sizes[i]);
        if (rc != 0)
            return -1;
        *bytes += sizes[i];
        (*files)++;
        self->r->interval->samples++;
    }
    return 0;
}

/* The files of ranks [rank, rank_end) in ps: [*first, *last). 0, or -1
 * when ps does not hold them. */
static int
s_ranks_span (const sb_msg_phase_start_t *ps, uint64_t rank, uint64_t rank_end, size_t *first, size_t *last)
{
    if (rank_end <= rank || rank_end >= ps->ckpt_first.count || ps->ckpt_names.count != ps->ckpt_bytes.count)
        return -1;
    uint64_t a = ps->ckpt_first.items[rank], b = ps->ckpt_first.items[rank_end];
    if (a > b || b > ps->ckpt_names.count)
        return -1;
    /* file names from the coordinator: plain names inside the checkpoint's
     * folder, none leading out of it */
    for (uint64_t i = a; i < b; i++) {
        const char *n = ps->ckpt_names.items[i];
        if (!n || !*n || strchr (n, '/') || strcmp (n, ".") == 0 || strcmp (n, "..") == 0)
            return -1;
    }
    *first = (size_t) a;
    *last = (size_t) b;
    return 0;
}

/* Rank r's files in ps: [*first, *last). 0, or -1 when ps does not hold them. */
static int
s_rank_span (const sb_msg_phase_start_t *ps, uint64_t rank, size_t *first, size_t *last)
{
    return s_ranks_span (ps, rank, rank + 1, first, last);
}

/* The files of the worker's ranks (WELCOME first_rank, ranks) in ps, into
 * [*first, *last); rank's own, [own_first, own_last), when ps does not
 * hold them all around those. */
static void
s_worker_span (const sb_msg_welcome_t *cfg, const sb_msg_phase_start_t *ps, uint64_t rank, size_t own_first,
               size_t own_last, size_t *first, size_t *last, uint64_t *rank_first, uint64_t *rank_last)
{
    uint64_t end = cfg->first_rank + cfg->ranks;
    if (cfg->ranks > 0 && end > cfg->first_rank && rank >= cfg->first_rank && rank < end
        && s_ranks_span (ps, cfg->first_rank, end, first, last) == 0 && *first <= own_first && own_last <= *last) {
        *rank_first = cfg->first_rank;
        *rank_last = end - 1;
        return;
    }
    *first = own_first;
    *last = own_last;
    *rank_first = *rank_last = rank;
}

void
sb_ckpt_rank_run (const sb_ckpt_rank_t *r, const sb_msg_phase_start_t *ps)
{
    s_run_t run = { .r = r, .epoch = ps->epoch, .buf_size = r->cfg->io_buffer };
    s_run_t *self = &run;
    int write = strcmp (ps->phase, "checkpoint_write") == 0;
    size_t first, last;
    if (s_rank_span (ps, r->rank, &first, &last) != 0) {
        char err[256];
        snprintf (err, sizeof err, "PHASE_START %s gives the files of %zu ranks, not of rank %llu, or a name that"
                  " is not a plain file name", ps->phase, ps->ckpt_first.count ? ps->ckpt_first.count - 1 : 0,
                  (unsigned long long) r->rank);
        s_fail (self, "protocol", NULL, 0, err, NULL);
        return;
    }
    /* the checkpoint folder's own storage: files or S3, whatever the dataset's */
    sb_storage_cfg_t *storage = malloc (sizeof *storage);
    char root[PATH_MAX], err[PATH_MAX + 256];
    if (!storage) {
        s_fail (self, write ? "write" : "read", NULL, ENOMEM, "out of memory", NULL);
        return;
    }
    if (sb_ckpt_target_open (ps->ckpt_root, r->cfg->data_root, r->storage, storage, root, sizeof root, err,
                             sizeof err) != 0) {
        s_fail (self, "protocol", NULL, 0, err, NULL);
        free (storage);
        return;
    }
    self->storage = storage;
    if (s_open (self, write) != 0) {
        free (storage);
        return;
    }
    char dir[64];
    snprintf (dir, sizeof dir, "global_epoch1_step%llu", (unsigned long long) ps->checkpoint);
    double started = sb_now ();
    uint64_t bytes = 0, files = 0;
    size_t wfirst, wlast;
    uint64_t rfirst, rlast;
    s_worker_span (r->cfg, ps, r->rank, first, last, &wfirst, &wlast, &rfirst, &rlast);
    int rc = write ? s_check_space (self, root, dir, ps->ckpt_names.items, ps->ckpt_bytes.items, wfirst, wlast,
                                    rfirst, rlast) : 0;
    if (rc == 0)
        rc = s_files (self, root, dir, ps->ckpt_names.items, ps->ckpt_bytes.items, first, last, write,
                      ps->fsync != 0, &files, &bytes);
    double finished = sb_now ();
    s_close (self);
    free (storage);
    if (rc != 0 || self->stopped)
        return;
    sb_report_interval (r->out, r->rank, self->epoch, r->interval, sb_now (), 1);
    sb_msg_t done = { .type = SB_MSG_RANK_DONE };
    done.u.rank_done.rank = r->rank;
    done.u.rank_done.epoch = ps->epoch;
    done.u.rank_done.samples = files;
    done.u.rank_done.bytes = bytes;
    done.u.rank_done.started_at = started;
    done.u.rank_done.finished_at = finished;
    if (r->out->fn (r->out->ctx, &done) != 0)
        sb_error ("rank %llu: cannot report checkpoint %llu done", (unsigned long long) r->rank,
                  (unsigned long long) ps->checkpoint);
}

/* ------------------------------------------------ checkpoints during training */

struct sb_ckpt_job {
    pthread_t        thread;
    sb_ckpt_rank_t   r;
    sb_storage_cfg_t storage;       /* the checkpoint folder's (sb_ckpt_target_open) */
    sb_sender_t      out;
    sb_interval_t    interval;
    char             root[PATH_MAX], dir[64];
    char           **names;         /* the files of the worker's ranks (owned) */
    uint64_t        *sizes;
    size_t           n;
    size_t           own_first, own_last;   /* the rank's own: [own_first, own_last) of them */
    uint64_t         rank_first, rank_last; /* the worker's ranks */
    int              fsync;
    atomic_int       done, stop;
    sb_ckpt_result_t result;
};

/* The job's messages: the first ERROR is kept for the trainer to send; STATS and the rest are not sent. */
static int
s_job_send (void *ctx, const sb_msg_t *msg)
{
    sb_ckpt_job_t *job = ctx;
    if (msg->type == SB_MSG_ERROR && !job->result.failed) {
        const sb_msg_error_t *e = &msg->u.error;
        job->result.failed = 1;
        job->result.errno_val = (int) e->errno_val;
        snprintf (job->result.op, sizeof job->result.op, "%s", e->op ? e->op : "write");
        snprintf (job->result.target, sizeof job->result.target, "%s", e->target ? e->target : "");
        snprintf (job->result.message, sizeof job->result.message, "%s", e->message ? e->message : "");
    }
    return 0;
}

static int
s_job_stop (void *arg)
{
    return atomic_load (&((sb_ckpt_job_t *) arg)->stop);
}

static void *
s_job_main (void *arg)
{
    sb_ckpt_job_t *job = arg;
    s_run_t run = { .r = &job->r, .storage = &job->storage, .epoch = 0, .buf_size = job->r.cfg->io_buffer };
    job->result.started_at = sb_now ();
    if (s_open (&run, 1) == 0) {
        if (s_check_space (&run, job->root, job->dir, job->names, job->sizes, 0, job->n, job->rank_first,
                           job->rank_last) == 0)
            (void) s_files (&run, job->root, job->dir, job->names, job->sizes, job->own_first, job->own_last, 1,
                            job->fsync, &job->result.files, &job->result.bytes);
        s_close (&run);
    }
    job->result.finished_at = sb_now ();
    if (run.stopped && !job->result.failed) {
        job->result.failed = 1;
        snprintf (job->result.message, sizeof job->result.message, "stopped");
    }
    atomic_store (&job->done, 1);
    return NULL;
}

static void
s_job_free (sb_ckpt_job_t *job)
{
    for (size_t i = 0; job->names && i < job->n; i++)
        free (job->names[i]);
    free (job->names);
    free (job->sizes);
    free (job);
}

sb_ckpt_job_t *
sb_ckpt_job_start (const sb_msg_welcome_t *cfg, const sb_storage_cfg_t *storage, uint64_t rank,
                   const sb_msg_phase_start_t *ps, uint64_t epoch, uint64_t step, char *err, size_t err_size)
{
    size_t first, last;
    if (s_rank_span (ps, rank, &first, &last) != 0) {
        snprintf (err, err_size, "PHASE_START of epoch %llu names checkpoints but not the files of rank %llu"
                  " (or a name that is not a plain file name)", (unsigned long long) epoch, (unsigned long long) rank);
        return NULL;
    }
    size_t wfirst, wlast;
    uint64_t rfirst, rlast;
    s_worker_span (cfg, ps, rank, first, last, &wfirst, &wlast, &rfirst, &rlast);
    sb_ckpt_job_t *job = calloc (1, sizeof *job);
    if (!job || !(job->names = calloc (wlast - wfirst + 1, sizeof *job->names))
        || !(job->sizes = calloc (wlast - wfirst + 1, sizeof *job->sizes))) {
        if (job)
            s_job_free (job);
        snprintf (err, err_size, "out of memory for a checkpoint");
        return NULL;
    }
    job->own_first = first - wfirst;
    job->own_last = last - wfirst;
    job->rank_first = rfirst;
    job->rank_last = rlast;
    for (size_t i = wfirst; i < wlast; i++, job->n++) {
        if (!(job->names[job->n] = strdup (ps->ckpt_names.items[i]))) {
            s_job_free (job);
            snprintf (err, err_size, "out of memory for a checkpoint");
            return NULL;
        }
        job->sizes[job->n] = ps->ckpt_bytes.items[i];
    }
    if (sb_ckpt_target_open (ps->ckpt_root, cfg->data_root, storage, &job->storage, job->root, sizeof job->root, err,
                             err_size) != 0) {
        s_job_free (job);
        return NULL;
    }
    snprintf (job->dir, sizeof job->dir, "global_epoch%llu_step%llu", (unsigned long long) epoch,
              (unsigned long long) step);
    job->fsync = ps->fsync != 0;
    job->out = (sb_sender_t) { s_job_send, job };
    job->r = (sb_ckpt_rank_t) { .cfg = cfg, .storage = storage, .rank = rank, .out = &job->out,
                                .interval = &job->interval, .stop = s_job_stop, .stop_arg = job };
    job->interval.next = 1e300;     /* no STATS from the job */
    atomic_init (&job->done, 0);
    atomic_init (&job->stop, 0);
    int rc = pthread_create (&job->thread, NULL, s_job_main, job);
    if (rc != 0) {
        s_job_free (job);
        snprintf (err, err_size, "cannot start a checkpoint thread: %s", strerror (rc));
        return NULL;
    }
    return job;
}

int
sb_ckpt_job_done (const sb_ckpt_job_t *job)
{
    return atomic_load (&((sb_ckpt_job_t *) job)->done);
}

void
sb_ckpt_job_finish (sb_ckpt_job_t **job_p, int stop, sb_ckpt_result_t *result)
{
    sb_ckpt_job_t *job = *job_p;
    if (!job)
        return;
    if (stop)
        atomic_store (&job->stop, 1);
    pthread_join (job->thread, NULL);
    if (result)
        *result = job->result;
    s_job_free (job);
    *job_p = NULL;
}
