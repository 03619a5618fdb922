/* rank: one rank of a worker on its own thread: its share of dataset generation, of a checkpoint, or a
 * KV-cache trial (worker/kvcache/kv_rank.h). */
#include "rank.h"
#include "ckpt_rank.h"
#include "kv_rank.h"
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    const int            *put_bad;      /* the object being put could not make its bytes (NULL: none) */
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

/* Has the session ended (the agent's flag, or a signal to this process)? */
static int
s_stopping (const s_rank_t *self)
{
    return zsys_interrupted || (self->stop && atomic_load (self->stop));
}

/* s_stopping for the storage engine (sb_storage_open_t.stop): a write
 * stops between buffers, not only between objects. */
static int
s_stop_cb (void *arg)
{
    const s_rank_t *self = arg;
    /* an object whose bytes could not be made (out of memory) stops too:
     * a folder engine then removes its temporary instead of renaming a
     * wrong object into place */
    return s_stopping (self) || (self->put_bad && *self->put_bad);
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

/* The object being put: which it is, its generator (made by s_prepare),
 * and how far it has been filled. */
typedef struct {
    s_rank_t           *rank;
    const sb_dataset_t *ds;
    uint64_t            i;
    size_t              companion;  /* SIZE_MAX: the object itself */
    const char         *key;
    sb_format_obj_t     obj;
    int                 opened;     /* obj is open (close it) */
    int                 bad;        /* obj.failed once opened: its bytes are not its content */
    char                why[1024];  /* why it could not be made */
    uint64_t            filled;     /* the end of the furthest byte filled */
} s_putting_t;

/* The engine's prepare: make the object (an encoder runs here, while a
 * folder engine's temporary already claims the name) and say its size. */
static int
s_prepare (void *arg, uint64_t *size)
{
    s_putting_t *p = arg;
    int rc = p->companion == SIZE_MAX
                 ? sb_format_open (&p->obj, p->ds, p->i, p->key, p->why, sizeof p->why)
                 : sb_format_open_companion (&p->obj, p->ds, p->i, p->companion, p->why, sizeof p->why);
    if (rc != 0)
        return -1;
    p->opened = 1;
    *size = p->obj.size;
    return 0;
}

/* The engine's fill: the object's bytes, counted as they are made (a
 * refill, for a hash or a retry, counts nothing twice). */
static void
s_fill_content (void *arg, uint64_t offset, uint8_t *buf, size_t len)
{
    s_putting_t *p = arg;
    sb_format_fill (&p->obj, offset, buf, len);
    p->bad = p->obj.failed;
    if (offset + len > p->filled) {
        p->rank->interval.bytes += offset + len - p->filled;
        p->filled = offset + len;
    }
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
    snprintf (failure->service_code, sizeof failure->service_code, "%s", e->code);
    failure->library_code = e->lib_code;
    failure->attempt = e->attempt;
    failure->error = e->os_errno;
}

/* Put one object through the storage engine (a folder's file through a
 * hidden temporary name of this writer, then renamed; an object store's PUT,
 * multipart above the threshold): SB_PUT_REPLACE, never seen half written.
 * Returns 0, -1 with failure set, or 1 when the session ended meanwhile
 * (nothing left behind; failure->message says what stopped). */
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
    /* the same bytes as a file of the format; they count as they are made
     * (s_fill_content), and an engine that takes no bytes (synthetic)
     * counts the object when it is put */
    s_putting_t *p = calloc (1, sizeof *p);
    if (!p) {
        snprintf (failure->message, sizeof failure->message, "%s: out of memory", full);
        snprintf (failure->target, sizeof failure->target, "%s", full);
        failure->error = ENOMEM;
        return -1;
    }
    *p = (s_putting_t) { .rank = self, .ds = ds, .i = i, .companion = companion, .key = key };
    sb_storage_error_t e;
    self->put_bad = &p->bad;
    int rc = sb_storage_put_prepared (st, full, s_prepare, s_fill_content, p, SB_PUT_REPLACE, &e);
    self->put_bad = NULL;
    int bad_bytes = p->opened && p->obj.failed;
    uint64_t size = p->opened ? p->obj.size : 0, filled = p->filled;
    int unmade = !p->opened;
    if (p->opened)
        sb_format_close (&p->obj);
    if (rc != 0 && unmade && p->why[0]) {
        /* the format could not make the object: nothing was written */
        if (sb_storage_client_caps (st) & SB_ENGINE_FOLDER)
            snprintf (failure->message, sizeof failure->message, "%s: %s", full, p->why);
        else
            snprintf (failure->message, sizeof failure->message, "%s", p->why);
        snprintf (failure->target, sizeof failure->target, "%s", full);
        free (p);
        return -1;
    }
    free (p);
    if (bad_bytes) {
        /* bytes that are not its content: a folder engine stopped and left
         * nothing in place; an object store's PUT may have gone up whole */
        snprintf (failure->target, sizeof failure->target, "%s", full);
        snprintf (failure->message, sizeof failure->message, "rank %llu: object %llu: out of memory producing its"
                  " bytes: %s%s", (unsigned long long) self->rank, (unsigned long long) i, full,
                  rc == 0 ? " holds a wrong object (generate again)" : " was not written");
        failure->error = ENOMEM;
        return -1;
    }
    if (rc != 0) {
        s_failure_of (failure, full, &e);
        return e.stopped ? 1 : -1;
    }
    if (size > filled)
        self->interval.bytes += size - filled;
    *bytes_out = size;
    return 0;
}

/* Put object i, then its companion index objects (indexed_binary:
 * KEY.off.idx, KEY.sz.idx, as DLIO writes them beside KEY); *bytes_out
 * counts them all. Same returns as s_put_one. */
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

/* kvcache: the rank waits for its trial's GO (every rank's window starts
 * with it); $TERM or the end of the session: -1. Other frames meanwhile
 * (none are expected) are dropped. */
static int
s_kv_wait_go (void *arg, uint64_t trial)
{
    s_rank_t *self = arg;
    while (!self->terminated && !s_stopping (self)) {
        if (!(zsock_events (self->pipe) & ZMQ_POLLIN)) {
            zpoller_t *p = zpoller_new (self->pipe, NULL);
            if (!p)
                return -1;
            (void) zpoller_wait (p, 100);
            zpoller_destroy (&p);
            continue;
        }
        sb_msg_t m;
        if (s_recv_pipe (self, &m) != 0)
            continue;
        int go = m.type == SB_MSG_GO && m.u.go.epoch == trial;
        sb_proto_fini (&m);
        if (go)
            return 0;
    }
    return -1;
}

static int
s_kv_stop (void *arg)
{
    s_rank_t *self = arg;
    return s_checkpoint_stop (self) || s_stopping (self);
}

static void
s_kvcache (s_rank_t *self, const sb_msg_phase_start_t *ps)
{
    sb_sender_t out = { s_send_cb, self };
    sb_kv_rank_t r = { .cfg = self->cfg, .storage = self->storage, .rank = self->rank, .out = &out,
                       .interval = &self->interval, .stop = s_kv_stop, .stop_arg = self,
                       .wait_go = s_kv_wait_go, .go_arg = self };
    sb_kv_rank_run (&r, ps);
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
    /* Every object through the storage engine: a folder's files under this
     * writer's own temporary names (its --host), stopping between buffers
     * when the session ends; an object store's PUTs. */
    unsigned caps = sb_storage_caps (self->storage);
    sb_storage_cfg_t mine;     /* use_mpi_endpoint_distribution: the rank's own endpoint */
    sb_storage_for_rank (self->storage, self->rank, &mine);
    sb_storage_open_t how = { .root = "", .rank = self->rank, .depth = 1, .buffer_bytes = c->io_buffer,
                              .stop = s_stop_cb, .stop_arg = self, .writer = self->host };
    sb_storage_error_t e;
    sb_storage_t *st = sb_storage_open (&mine, &how, &e);
    if (!st) {
        s_report_error (self, "write", NULL, e.os_errno, e.text);
        return;
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
            uint64_t n = 0;
            sb_read_result_t failure;
            int rc = s_put_object (self, st, dsp, i, &n, &failure);
            if (rc == 1)    /* the session ended: no more bytes, and no litter */
                sb_info ("rank %llu: %s", (unsigned long long) self->rank, failure.message);
            else if (rc != 0)   /* the endpoint's status and code with an engine that has endpoints */
                s_report_failure (self, "write", failure.target, failure.error, failure.message,
                                  (caps & SB_ENGINE_ENDPOINTS) ? &failure : NULL);
            if (rc != 0) {
                sb_storage_close (&st);
                return;
            }
            bytes += n;
            files++;
            self->interval.samples++;
            s_flush_stats (self, 0);
        }
    }
written:
    if (!self->terminated && (caps & SB_ENGINE_ENDPOINTS))
        sb_report_storage_stats (&(sb_sender_t) { s_send_cb, self }, self->rank, st);
    sb_storage_close (&st);
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
            else if (strcmp (m.u.phase_start.phase, "kvcache") == 0)
                s_kvcache (self, &m.u.phase_start);
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
