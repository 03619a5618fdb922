/* checkpoint: one rank's model and optimizer state, written or read back. */
#include "checkpoint.h"
#include "dataset.h"
#include "log.h"
#include "s3_client.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const sb_ckpt_rank_t *r;
    uint64_t              epoch;
    uint8_t              *buf;
    size_t                buf_size;
    sb_s3_t              *s3;
    int                   stopped;
    uint64_t              seed;     /* content of the file being written */
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

/* Write size bytes of seeded content to path, in place, fsync'ed when asked. */
static int
s_write_file (s_run_t *self, const char *path, uint64_t size, int do_fsync)
{
    char err[PATH_MAX + 256];
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENOENT) {
        char folder[PATH_MAX];
        snprintf (folder, sizeof folder, "%s", path);
        char *slash = strrchr (folder, '/');
        if (slash)
            *slash = '\0';
        if (sb_mkdirs (folder, err, sizeof err) != 0) {
            s_fail (self, "write", path, errno, err, NULL);
            return -1;
        }
        fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        int e = errno;
        snprintf (err, sizeof err, "open %s for writing: %s", path, strerror (e));
        s_fail (self, "open", path, e, err, NULL);
        return -1;
    }
    uint64_t done = 0;
    while (done < size && !s_should_stop (self)) {
        size_t n = size - done < self->buf_size ? (size_t) (size - done) : self->buf_size;
        sb_content_fill (self->seed, done, self->buf, n);
        size_t put = 0;
        while (put < n) {
            ssize_t w = write (fd, self->buf + put, n - put);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                int e = w < 0 ? errno : ENOSPC;
                snprintf (err, sizeof err, "write %s at offset %llu: %s", path, (unsigned long long) (done + put),
                          strerror (e));
                s_fail (self, "write", path, e, err, NULL);
                close (fd);
                return -1;
            }
            put += (size_t) w;
        }
        done += n;
        s_progress (self, n);
    }
    /* the checkpoint counts as written once it is on stable storage */
    if (!self->stopped && do_fsync && fsync (fd) != 0) {
        int e = errno;
        snprintf (err, sizeof err, "fsync %s: %s", path, strerror (e));
        s_fail (self, "fsync", path, e, err, NULL);
        close (fd);
        return -1;
    }
    /* written and on disk: drop it from this host's page cache, so that a
     * read of it later in the run measures the storage, not memory (a hint:
     * a file system that ignores it is not an error) */
    if (!self->stopped && do_fsync)
        (void) posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED);
    if (close (fd) != 0) {
        int e = errno;
        snprintf (err, sizeof err, "close %s: %s", path, strerror (e));
        s_fail (self, "close", path, e, err, NULL);
        return -1;
    }
    return self->stopped ? -1 : 0;
}

/* Read path whole; it must hold exactly size bytes. */
static int
s_read_file (s_run_t *self, const char *path, uint64_t size)
{
    char err[PATH_MAX + 256];
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf (err, sizeof err, "open %s: %s%s", path, strerror (e),
                  e == ENOENT ? " (write the checkpoint first: checkpoint.num_checkpoints_write)" : "");
        s_fail (self, "open", path, e, err, NULL);
        return -1;
    }
    (void) posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED);  /* clean pages: read them from storage */
    uint64_t got = 0;
    for (;;) {
        if (s_should_stop (self))
            break;
        ssize_t n = read (fd, self->buf, self->buf_size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            snprintf (err, sizeof err, "read %s at offset %llu: %s", path, (unsigned long long) got, strerror (e));
            s_fail (self, "read", path, e, err, NULL);
            close (fd);
            return -1;
        }
        if (n == 0)
            break;
        got += (uint64_t) n;
        s_progress (self, (uint64_t) n);
    }
    close (fd);
    if (self->stopped)
        return -1;
    if (got != size) {
        snprintf (err, sizeof err, "%s holds %llu bytes, the checkpoint has %llu", path, (unsigned long long) got,
                  (unsigned long long) size);
        s_fail (self, "read", path, 0, err, NULL);
        return -1;
    }
    return 0;
}

static void
s_fill (void *arg, uint64_t offset, uint8_t *buf, size_t len)
{
    sb_content_fill (((s_run_t *) arg)->seed, offset, buf, len);
}

static void
s_s3_failure (s_run_t *self, const char *op, const char *key, const sb_s3_error_t *e)
{
    sb_read_result_t f = { .error = e->os_errno ? e->os_errno : -1, .http_status = e->http_status,
                           .curl_code = e->curl_code, .attempt = e->attempt };
    snprintf (f.message, sizeof f.message, "%s", e->text);
    snprintf (f.target, sizeof f.target, "%s", key);
    snprintf (f.endpoint, sizeof f.endpoint, "%s", e->endpoint);
    snprintf (f.s3_code, sizeof f.s3_code, "%s", e->s3_code);
    s_fail (self, op, key, e->os_errno, e->text, &f);
}

static int
s_put (s_run_t *self, const char *key, uint64_t size)
{
    sb_s3_error_t e;
    if (sb_s3_put (self->s3, key, size, s_fill, self, &e) != 0) {
        s_s3_failure (self, "write", key, &e);
        return -1;
    }
    s_progress (self, size);
    return 0;
}

static int
s_get (s_run_t *self, const char *key, uint64_t size)
{
    sb_s3_error_t e;
    uint64_t got = 0;
    if (sb_s3_get (self->s3, key, 0, 0, &got, &e) != 0) {
        s_s3_failure (self, "read", key, &e);
        return -1;
    }
    if (got != size) {
        char err[1400];
        snprintf (err, sizeof err, "s3 object %s holds %llu bytes, the checkpoint has %llu", key,
                  (unsigned long long) got, (unsigned long long) size);
        s_fail (self, "read", key, 0, err, NULL);
        return -1;
    }
    s_progress (self, size);
    return 0;
}

static void
s_endpoint_stats (s_run_t *self)
{
    sb_reader_endpoint_t *eps = calloc (SB_MAX_ENDPOINTS, sizeof *eps);
    size_t n = 0;
    for (size_t e = 0; eps && e < sb_s3_endpoint_count (self->s3); e++, n++) {
        const sb_s3_endpoint_stats_t *st = sb_s3_stats (self->s3, e);
        snprintf (eps[n].endpoint, sizeof eps[n].endpoint, "%s", sb_s3_endpoint (self->s3, e));
        eps[n].requests = st->requests;
        eps[n].bytes = st->bytes;
        eps[n].errors = st->errors;
        eps[n].retries = st->retries;
        eps[n].latency = st->latency;
    }
    sb_report_endpoints (self->r->out, self->r->rank, eps, n);
    free (eps);
}

void
sb_ckpt_rank_run (const sb_ckpt_rank_t *r, const sb_msg_phase_start_t *ps)
{
    s_run_t run = { .r = r, .epoch = ps->epoch, .buf_size = r->cfg->io_buffer };
    s_run_t *self = &run;
    int write = strcmp (ps->phase, "checkpoint_write") == 0;
    if (r->rank >= ps->model_bytes.count || r->rank >= ps->optim_bytes.count || ps->model_parallel == 0) {
        char err[256];
        snprintf (err, sizeof err, "PHASE_START %s gives sizes for %zu ranks, not for rank %llu", ps->phase,
                  ps->model_bytes.count, (unsigned long long) r->rank);
        s_fail (self, "protocol", NULL, 0, err, NULL);
        return;
    }
    uint64_t sizes[2] = { ps->model_bytes.items[r->rank], ps->optim_bytes.items[r->rank] };
    static const char *const kinds[2] = { "model_states", "optim_states" };
    if (!(self->buf = malloc (self->buf_size))) {
        s_fail (self, write ? "write" : "read", NULL, ENOMEM, "out of memory for the checkpoint buffer", NULL);
        return;
    }
    if (r->storage->type == SB_STORAGE_S3) {
        char err[1024];
        if (!(self->s3 = sb_s3_new (r->storage, 1, err, sizeof err))) {
            s_fail (self, write ? "write" : "read", NULL, 0, err, NULL);
            free (self->buf);
            return;
        }
    }
    double started = sb_now ();
    uint64_t bytes = 0, files = 0;
    int rc = 0;
    for (int f = 0; f < 2 && rc == 0; f++) {
        if (sizes[f] == 0)
            continue;
        char key[512], full[PATH_MAX];
        snprintf (key, sizeof key, "global_epoch1_step%llu/zero_pp_rank_%llu_mp_rank_%02llu_%s.pt",
                  (unsigned long long) ps->checkpoint, (unsigned long long) (r->rank / ps->model_parallel),
                  (unsigned long long) (r->rank % ps->model_parallel), kinds[f]);
        if (sb_strf (full, sizeof full, "%s%s", r->cfg->data_root, key) != 0) {
            s_fail (self, write ? "write" : "read", key, ENAMETOOLONG, "checkpoint path too long", NULL);
            rc = -1;
            break;
        }
        self->seed = sb_dataset_content_seed (r->cfg->seed, key);
        if (self->s3)
            rc = write ? s_put (self, full, sizes[f]) : s_get (self, full, sizes[f]);
        else
            rc = write ? s_write_file (self, full, sizes[f], ps->fsync != 0) : s_read_file (self, full, sizes[f]);
        if (rc == 0) {
            bytes += sizes[f];
            files++;
            r->interval->samples++;
        }
    }
    double finished = sb_now ();
    free (self->buf);
    if (self->s3) {
        if (!self->stopped)
            s_endpoint_stats (self);
        sb_s3_destroy (&self->s3);
    }
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
