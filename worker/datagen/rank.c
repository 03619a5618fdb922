/* rank: one rank's share of dataset generation, on its own thread. */
#include "rank.h"
#include "ckpt_rank.h"
#include "datafolder.h"
#include "dataset.h"
#include "format.h"
#include "log.h"
#include "reader.h"
#include "rank_report.h"
#include "engine.h"
#include "shard.h"
#include "util.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    zsock_t              *pipe;
    zsock_t              *up;       /* PUSH to the agent */
    const sb_msg_welcome_t *cfg;
    const sb_storage_cfg_t *storage;
    uint64_t              rank;
    const char           *host;
    const atomic_int     *stop;         /* the agent's end-of-session flag (may be NULL) */
    int                   terminated;   /* $TERM received */
    /* interval counters for STATS */
    sb_interval_t         interval;
    uint64_t              epoch;
} s_rank_t;

static int
s_send (s_rank_t *self, const sb_msg_t *msg)
{
    if (sb_wire_send (self->up, NULL, msg) != 0) {
        sb_error ("rank %llu: cannot send %s to the agent", (unsigned long long) self->rank,
                  sb_proto_type_name (msg->type));
        return -1;
    }
    return 0;
}

static int
s_send_cb (void *ctx, const sb_msg_t *msg)
{
    return s_send ((s_rank_t *) ctx, msg);
}

static void
s_report_failure (s_rank_t *self, const char *op, const char *target, int errno_val, const char *message,
                  const sb_read_result_t *s3)
{
    sb_sender_t out = { s_send_cb, self };
    sb_report_failure (&out, self->rank, op, target, errno_val, message, s3);
}

static void
s_report_error (s_rank_t *self, const char *op, const char *target, int errno_val, const char *message)
{
    s_report_failure (self, op, target, errno_val, message, NULL);
}

static void
s_flush_stats (s_rank_t *self, int force)
{
    sb_sender_t out = { s_send_cb, self };
    sb_report_interval (&out, self->rank, self->epoch, &self->interval, sb_now (), force);
}

/* Is this pipe frame the actor's $TERM command? */
static int
s_is_term (zmsg_t *zm)
{
    zframe_t *f = zmsg_first (zm);
    return f && zframe_streq (f, "$TERM");
}

/* Receive one protocol message from the pipe. Returns 0 with *msg set, 1 on
 * $TERM or interrupt (self->terminated set), -1 on a bad frame. */
static int
s_recv_pipe (s_rank_t *self, sb_msg_t *msg)
{
    memset (msg, 0, sizeof *msg);
    zmsg_t *zm = zmsg_recv (self->pipe);
    if (!zm || s_is_term (zm)) {
        zmsg_destroy (&zm);
        self->terminated = 1;
        return 1;
    }
    char reason[256];
    zframe_t *f = zmsg_first (zm);
    sb_proto_status_t st = f ? sb_proto_decode (zframe_data (f), zframe_size (f), msg, reason, sizeof reason, NULL)
                             : SB_PROTO_EMALFORMED;
    zmsg_destroy (&zm);
    if (st != SB_PROTO_OK) {
        sb_warn ("rank %llu: bad frame from the agent: %s", (unsigned long long) self->rank, f ? reason : "empty");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- datagen */

/* This rank's host name for temporary names (the agent's --host, else gethostname). */
static const char *
s_hostname (void)
{
    static _Thread_local char host[256];
    if (!host[0] && gethostname (host, sizeof host - 1) != 0)
        snprintf (host, sizeof host, "host");
    return host;
}

/* Has the session ended (the agent's flag, or a signal to this process)? */
static int
s_stopping (const s_rank_t *self)
{
    return zsys_interrupted || (self->stop && atomic_load (self->stop));
}

/* Key of object i, or of its companion index object c (KEY + suffix;
 * SIZE_MAX: the object itself). Returns 0, or -1 when it does not fit. */
static int
s_object_key (const sb_dataset_t *ds, uint64_t i, size_t companion, char *key, size_t size)
{
    char base[PATH_MAX];
    if (sb_dataset_key (ds, i, base, sizeof base) != 0)
        return -1;
    return sb_strf (key, size, "%s%s", base, companion == SIZE_MAX ? "" : sb_format_companion_suffix (companion));
}

/* Write one object (or its companion c, SIZE_MAX: the object) through a
 * hidden temporary name of this writer, then rename it, so a listing never
 * sees a partial object. Returns 0, -1 with
 * err, or 1 when the session ended meanwhile (nothing left behind). */
static int
s_write_one (s_rank_t *self, const sb_dataset_t *ds, uint64_t i, size_t companion, uint8_t *buf, size_t buf_size,
             uint64_t *bytes_out, char *err, size_t err_size, int *errno_out, char *path, size_t path_size)
{
    const char *root = self->cfg->data_root;
    char key[PATH_MAX], dir[256], tmp[PATH_MAX];
    *errno_out = 0;
    if (s_object_key (ds, i, companion, key, sizeof key) != 0 || sb_dataset_folder (ds, i, dir, sizeof dir) != 0
        || sb_strf (path, path_size, "%s%s", root, key) != 0) {
        snprintf (err, err_size, "object %llu: name too long", (unsigned long long) i);
        return -1;
    }
    char unsafe[128];
    if (sb_dataset_check_name (key, unsafe, sizeof unsafe) != 0) {
        snprintf (err, err_size, "rank %llu: object %llu: name '%s' %s", (unsigned long long) self->rank,
                  (unsigned long long) i, key, unsafe);
        return -1;
    }
    const char *base = strrchr (key, '/') ? strrchr (key, '/') + 1 : key;
    char folder[PATH_MAX];
    /* a name of this writer alone: two datagens (or two coordinators' ranks)
     * never write through one temporary */
    if (sb_strf (folder, sizeof folder, "%s%s", root, dir) != 0
        || sb_datafolder_temp_name (tmp, sizeof tmp, folder, base, self->host ? self->host : s_hostname ()) != 0) {
        snprintf (err, err_size, "object %llu: name too long", (unsigned long long) i);
        return -1;
    }
    int fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENOENT) {
        if (sb_mkdirs (folder, err, err_size) != 0) {
            *errno_out = errno;
            return -1;
        }
        fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        *errno_out = errno;
        snprintf (err, err_size, "open %s for writing: %s", tmp, strerror (errno));
        return -1;
    }
    sb_format_obj_t obj;
    char why[512];
    int opened = companion == SIZE_MAX ? sb_format_open (&obj, ds, i, key, why, sizeof why)
                                       : sb_format_open_companion (&obj, ds, i, companion, why, sizeof why);
    if (opened != 0) {
        snprintf (err, err_size, "%s: %s", path, why);
        close (fd);
        unlink (tmp);
        return -1;
    }
    uint64_t size = obj.size;
    uint64_t done = 0;
    while (done < size) {
        if (s_stopping (self)) {
            /* the session ended: no more bytes, and no litter */
            close (fd);
            unlink (tmp);
            sb_format_close (&obj);
            snprintf (err, err_size, "stopped writing %s: the session ended", path);
            return 1;
        }
        size_t n = size - done < buf_size ? (size_t) (size - done) : buf_size;
        sb_format_fill (&obj, done, buf, n);
        if (obj.failed) {
            *errno_out = ENOMEM;
            snprintf (err, err_size, "generate %s at offset %llu: out of memory producing the object's bytes", path,
                      (unsigned long long) done);
            close (fd);
            unlink (tmp);
            sb_format_close (&obj);
            return -1;
        }
        size_t put = 0;
        while (put < n) {
            ssize_t w = write (fd, buf + put, n - put);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                *errno_out = w < 0 ? errno : ENOSPC;
                snprintf (err, err_size, "write %s at offset %llu: %s", tmp, (unsigned long long) (done + put),
                          strerror (*errno_out));
                close (fd);
                unlink (tmp);
                sb_format_close (&obj);
                return -1;
            }
            put += (size_t) w;
        }
        done += n;
        self->interval.bytes += n;
    }
    sb_format_close (&obj);
    if (close (fd) != 0) {
        *errno_out = errno;
        snprintf (err, err_size, "close %s: %s", tmp, strerror (errno));
        unlink (tmp);
        return -1;
    }
    if (s_stopping (self)) {
        unlink (tmp);
        snprintf (err, err_size, "stopped writing %s: the session ended", path);
        return 1;
    }
    if (rename (tmp, path) != 0) {
        *errno_out = errno;
        snprintf (err, err_size, "rename %s to %s: %s", tmp, path, strerror (errno));
        unlink (tmp);
        return -1;
    }
    *bytes_out = size;
    return 0;
}

/* Write object i (companion SIZE_MAX in s_write_one), then its companion
 * index objects (indexed_binary: KEY.off.idx, KEY.sz.idx, as DLIO writes
 * them beside KEY); *bytes_out counts them all. Same returns. */
static int
s_write_object (s_rank_t *self, const sb_dataset_t *ds, uint64_t i, uint8_t *buf, size_t buf_size,
                uint64_t *bytes_out, char *err, size_t err_size, int *errno_out, char *path, size_t path_size)
{
    int rc = s_write_one (self, ds, i, SIZE_MAX, buf, buf_size, bytes_out, err, err_size, errno_out, path, path_size);
    for (size_t c = 0; rc == 0 && c < sb_format_companions (ds->format); c++) {
        uint64_t n = 0;
        rc = s_write_one (self, ds, i, c, buf, buf_size, &n, err, err_size, errno_out, path, path_size);
        *bytes_out += n;
    }
    return rc;
}

static void
s_fill_content (void *arg, uint64_t offset, uint8_t *buf, size_t len)
{
    sb_format_fill ((sb_format_obj_t *) arg, offset, buf, len);
}

/* A failed storage op as a rank's failure (the endpoint's status, code and
 * cause with an engine that has endpoints). */
static void
s_failure_of (sb_read_result_t *failure, const char *target, const sb_storage_error_t *e)
{
    snprintf (failure->message, sizeof failure->message, "%s", e->text);
    snprintf (failure->target, sizeof failure->target, "%s", target);
    snprintf (failure->endpoint, sizeof failure->endpoint, "%s", e->where);
    failure->http_status = e->status;
    snprintf (failure->s3_code, sizeof failure->s3_code, "%s", e->code);
    failure->curl_code = e->lib_code;
    failure->attempt = e->attempt;
    failure->error = e->os_errno;
}

/* Put one object through the storage engine (an object store's PUT,
 * multipart above the threshold; SB_PUT_REPLACE: never seen half written). */
static int
s_put_one (s_rank_t *self, sb_storage_t *st, const sb_dataset_t *ds, uint64_t i, size_t companion, uint64_t *bytes_out,
           sb_read_result_t *failure)
{
    char key[PATH_MAX], full[PATH_MAX];
    memset (failure, 0, sizeof *failure);
    if (s_object_key (ds, i, companion, key, sizeof key) != 0
        || sb_strf (full, sizeof full, "%s%s", self->cfg->data_root, key) != 0) {
        snprintf (failure->message, sizeof failure->message, "object %llu: key too long", (unsigned long long) i);
        return -1;
    }
    char why[128];
    if (sb_dataset_check_name (key, why, sizeof why) != 0) {
        snprintf (failure->message, sizeof failure->message, "rank %llu: object %llu: name '%s' %s",
                  (unsigned long long) self->rank, (unsigned long long) i, key, why);
        return -1;
    }
    /* the same bytes as a file of the format */
    sb_format_obj_t obj;
    int opened = companion == SIZE_MAX
                     ? sb_format_open (&obj, ds, i, key, failure->message, sizeof failure->message)
                     : sb_format_open_companion (&obj, ds, i, companion, failure->message, sizeof failure->message);
    if (opened != 0) {
        snprintf (failure->target, sizeof failure->target, "%s", full);
        return -1;
    }
    uint64_t size = obj.size;
    /* bytes count once the PUT succeeded: hashing and retries refill */
    sb_storage_error_t e;
    int rc = sb_storage_put (st, full, size, s_fill_content, &obj, SB_PUT_REPLACE, &e);
    int bad_bytes = obj.failed;
    sb_format_close (&obj);
    if (rc == 0 && bad_bytes) {
        /* the object went up with bytes that are not its content */
        snprintf (failure->target, sizeof failure->target, "%s", full);
        snprintf (failure->message, sizeof failure->message, "rank %llu: object %llu: out of memory producing its"
                  " bytes: %s holds a wrong object (generate again)", (unsigned long long) self->rank,
                  (unsigned long long) i, full);
        return -1;
    }
    if (rc != 0) {
        s_failure_of (failure, full, &e);
        return -1;
    }
    self->interval.bytes += size;
    *bytes_out = size;
    return 0;
}

/* PUT object i, then its companion index objects (s_write_object). */
static int
s_put_object (s_rank_t *self, sb_storage_t *st, const sb_dataset_t *ds, uint64_t i, uint64_t *bytes_out,
              sb_read_result_t *failure)
{
    int rc = s_put_one (self, st, ds, i, SIZE_MAX, bytes_out, failure);
    for (size_t c = 0; rc == 0 && c < sb_format_companions (ds->format); c++) {
        uint64_t n = 0;
        rc = s_put_one (self, st, ds, i, c, &n, failure);
        *bytes_out += n;
    }
    return rc;
}

/* The client's counters per endpoint (sb_storage_stats) to the agent. */
static void
s_report_storage_stats (s_rank_t *self, sb_storage_t *st)
{
    sb_storage_stats_t *stats = calloc (SB_MAX_ENDPOINTS, sizeof *stats);
    sb_reader_endpoint_t *eps = calloc (SB_MAX_ENDPOINTS, sizeof *eps);
    size_t n = stats && eps ? sb_storage_stats (st, stats, SB_MAX_ENDPOINTS) : 0;
    for (size_t i = 0; i < n; i++) {
        snprintf (eps[i].endpoint, sizeof eps[i].endpoint, "%s", stats[i].where);
        eps[i].requests = stats[i].requests;
        eps[i].bytes = stats[i].bytes;
        eps[i].errors = stats[i].errors;
        eps[i].retries = stats[i].retries;
        eps[i].latency = stats[i].latency;
    }
    if (eps)
        sb_report_endpoints (&(sb_sender_t) { s_send_cb, self }, self->rank, eps, n);
    free (stats);
    free (eps);
}

/* The run's dataset layout, as WELCOME gives it (strings borrowed). */
static sb_dataset_t
s_dataset (const s_rank_t *self)
{
    const sb_msg_welcome_t *c = self->cfg;
    return (sb_dataset_t) {
        .prefix = c->file_prefix, .format = c->format, .files = c->num_files, .subfolders = c->num_subfolders,
        .samples_per_file = c->samples_per_file, .record_length = c->record_length,
        .record_stdev = c->record_stdev, .seed = c->seed, .parquet_columns = c->parquet_columns,
        .parquet_row_group = c->parquet_row_group, .parquet_compression = c->parquet_compression,
        .element_type = c->record_element_type, .record_dims = c->record_dims.items,
        .record_ndims = c->record_dims.count,
    };
}

/* $TERM between two writes or reads of a checkpoint (worker/checkpoint/ckpt_rank.c). */
static int
s_checkpoint_stop (void *arg)
{
    s_rank_t *self = arg;
    if (!self->terminated && (zsock_events (self->pipe) & ZMQ_POLLIN)) {
        sb_msg_t m;
        if (s_recv_pipe (self, &m) == 0)
            sb_proto_fini (&m);
    }
    return self->terminated;
}

static void
s_checkpoint (s_rank_t *self, const sb_msg_phase_start_t *ps)
{
    sb_sender_t out = { s_send_cb, self };
    sb_ckpt_rank_t r = { .cfg = self->cfg, .storage = self->storage, .rank = self->rank, .out = &out,
                         .interval = &self->interval, .stop = s_checkpoint_stop, .stop_arg = self };
    sb_ckpt_rank_run (&r, ps);
}

static void
s_datagen (s_rank_t *self, const sb_msg_phase_start_t *ps)
{
    const sb_msg_welcome_t *c = self->cfg;
    /* the training set (items files), then the evaluation set (WELCOME
     * eval_files under valid/), each shared out over the ranks as DLIO's
     * generator shares its files */
    sb_dataset_t sets[2] = { s_dataset (self), s_dataset (self) };
    sets[1].split = "valid";
    sets[1].files = c->eval_files;
    sets[1].subfolders = c->eval_subfolders;
    uint64_t set_files[2] = { ps->items, c->eval_files };
    uint8_t *buf = malloc (c->io_buffer);
    if (!buf) {
        s_report_error (self, "write", NULL, ENOMEM, "out of memory for the write buffer");
        return;
    }
    /* A folder tree is written here, through this writer's own temporary
     * names (its --host) and stopping between buffers (s_write_one); any
     * other engine takes whole objects (sb_storage_put). */
    sb_storage_t *st = NULL;
    unsigned caps = sb_storage_caps (self->storage);
    if (!(caps & SB_ENGINE_FOLDER)) {
        sb_storage_cfg_t mine;     /* use_mpi_endpoint_distribution: the rank's own endpoint */
        sb_storage_for_rank (self->storage, self->rank, &mine);
        sb_storage_open_t how = { .root = "", .rank = self->rank, .depth = 1, .buffer_bytes = c->io_buffer };
        sb_storage_error_t e;
        st = sb_storage_open (&mine, &how, &e);
        if (!st) {
            s_report_error (self, "write", NULL, e.os_errno, e.text);
            free (buf);
            return;
        }
    }
    double started = sb_now ();
    uint64_t bytes = 0, files = 0;
    for (int set = 0; set < 2; set++) {
        const sb_dataset_t *dsp = &sets[set];
        uint64_t first, count;
        sb_shard_files (set_files[set], c->total_ranks, self->rank, &first, &count);
        for (uint64_t i = first; i < first + count; i++) {
            /* stay responsive to $TERM between objects */
            if (s_stopping (self))
                goto written;
            if (zsock_events (self->pipe) & ZMQ_POLLIN) {
                sb_msg_t m;
                if (s_recv_pipe (self, &m) == 1)
                    goto written;
                sb_proto_fini (&m);
            }
            char err[1024], path[PATH_MAX];
            int errno_val = 0;
            uint64_t n = 0;
            if (st) {
                sb_read_result_t failure;
                if (s_put_object (self, st, dsp, i, &n, &failure) != 0) {
                    s_report_failure (self, "write", failure.target, failure.error, failure.message, &failure);
                    sb_storage_close (&st);
                    free (buf);
                    return;
                }
            }
            else {
                int wrc = s_write_object (self, dsp, i, buf, c->io_buffer, &n, err, sizeof err, &errno_val, path,
                                          sizeof path);
                if (wrc == 1) {
                    sb_info ("rank %llu: %s", (unsigned long long) self->rank, err);
                    free (buf);
                    return;
                }
                if (wrc != 0) {
                    s_report_error (self, "write", path, errno_val, err);
                    free (buf);
                    return;
                }
            }
            bytes += n;
            files++;
            self->interval.samples++;
            s_flush_stats (self, 0);
        }
    }
written:
    free (buf);
    if (st) {
        if (!self->terminated && (caps & SB_ENGINE_ENDPOINTS))
            s_report_storage_stats (self, st);
        sb_storage_close (&st);
    }
    if (self->terminated || s_stopping (self))
        return;
    s_flush_stats (self, 1);
    sb_msg_t done = { .type = SB_MSG_RANK_DONE };
    done.u.rank_done.rank = self->rank;
    done.u.rank_done.epoch = 0;
    done.u.rank_done.samples = files;
    done.u.rank_done.bytes = bytes;
    done.u.rank_done.started_at = started;
    done.u.rank_done.finished_at = sb_now ();
    s_send (self, &done);
}

void
sb_rank_actor (zsock_t *pipe, void *args)
{
    const sb_rank_args_t *a = args;
    s_rank_t r = { .pipe = pipe, .cfg = a->cfg, .storage = a->storage, .rank = a->rank, .host = a->host,
                   .stop = a->stop };
    s_rank_t *self = &r;
    char err[512];
    self->up = zsock_new (ZMQ_PUSH);
    if (self->up) {
        sb_wire_configure (self->up, 1000);
        if (zsock_connect (self->up, "%s", a->up) != 0)
            zsock_destroy (&self->up);
    }
    if (!self->up) {
        zsock_signal (pipe, 0);
        sb_error ("rank %llu: cannot connect to the agent", (unsigned long long) self->rank);
        while (!self->terminated) {
            sb_msg_t m;
            if (s_recv_pipe (self, &m) == 0)
                sb_proto_fini (&m);
        }
        return;
    }
    zsock_signal (pipe, 0);
    while (!self->terminated) {
        sb_msg_t m;
        if (s_recv_pipe (self, &m) != 0)
            continue;
        if (m.type == SB_MSG_PHASE_START) {
            self->epoch = m.u.phase_start.epoch;
            self->interval.next = sb_now () + 1.0;
            if (strcmp (m.u.phase_start.phase, "datagen") == 0)
                s_datagen (self, &m.u.phase_start);
            else if (strcmp (m.u.phase_start.phase, "checkpoint_write") == 0
                     || strcmp (m.u.phase_start.phase, "checkpoint_read") == 0)
                s_checkpoint (self, &m.u.phase_start);
            else {
                snprintf (err, sizeof err, "unknown phase '%s'", m.u.phase_start.phase);
                s_report_error (self, "protocol", NULL, 0, err);
            }
        }
        /* anything else between phases (a late GO after a failure) is dropped */
        sb_proto_fini (&m);
    }
    zsock_destroy (&self->up);
}
