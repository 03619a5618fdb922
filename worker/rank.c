/* rank: an emulated accelerator: key pages in, samples read, batches
 * computed, barriers kept, totals reported. */
#include "rank.h"
#include "dataset.h"
#include "log.h"
#include "reader.h"
#include "s3_client.h"
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
    char    *key;           /* owned; NULL: the DLIO name of object `name` */
    uint64_t name;
    uint64_t offset, length;
} s_sample_t;

typedef struct {
    zsock_t              *pipe;
    zsock_t              *up;       /* PUSH to the agent */
    const sb_msg_welcome_t *cfg;
    const sb_storage_cfg_t *storage;
    uint64_t              rank;
    const char           *host;
    sb_reader_t          *reader;
    zpoller_t            *poller;
    int                   terminated;   /* $TERM received */
    /* interval counters for STATS */
    uint64_t              st_samples, st_bytes, st_reads, st_read_ns, st_compute_ns;
    double                next_stats;
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

/* Report a failure that ends the run. s3 (may be NULL) adds the request's
 * endpoint, HTTP status, S3 code, curl code and attempt. */
static void
s_report_failure (s_rank_t *self, const char *op, const char *target, int errno_val, const char *message,
                  const sb_read_result_t *s3)
{
    sb_msg_t m = { .type = SB_MSG_ERROR };
    m.u.error.rank = (int64_t) self->rank;
    m.u.error.op = (char *) op;
    m.u.error.target = (char *) (target ? target : "");
    m.u.error.errno_val = errno_val;
    m.u.error.message = (char *) message;
    m.u.error.endpoint = s3 ? (char *) s3->endpoint : "";
    m.u.error.http_status = s3 ? s3->http_status : 0;
    m.u.error.s3_code = s3 ? (char *) s3->s3_code : "";
    m.u.error.curl_code = s3 ? s3->curl_code : 0;
    m.u.error.attempt = s3 ? s3->attempt : 0;
    sb_error ("rank %llu: %s", (unsigned long long) self->rank, message);
    s_send (self, &m);
}

static void
s_report_error (s_rank_t *self, const char *op, const char *target, int errno_val, const char *message)
{
    s_report_failure (self, op, target, errno_val, message, NULL);
}

/* ENDPOINT_STATS for every endpoint with traffic (sent before RANK_DONE). */
static void
s_send_endpoint_stats (s_rank_t *self, const sb_reader_endpoint_t *eps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const sb_reader_endpoint_t *e = &eps[i];
        if (!e->requests)
            continue;
        size_t buckets = SB_HISTOGRAM_BUCKETS;
        while (buckets > 0 && e->latency.counts[buckets - 1] == 0)
            buckets--;
        sb_msg_t m = { .type = SB_MSG_ENDPOINT_STATS };
        m.u.endpoint_stats.rank = self->rank;
        m.u.endpoint_stats.endpoint = (char *) e->endpoint;
        m.u.endpoint_stats.requests = e->requests;
        m.u.endpoint_stats.bytes = e->bytes;
        m.u.endpoint_stats.errors = e->errors;
        m.u.endpoint_stats.retries = e->retries;
        m.u.endpoint_stats.latency.count = buckets;
        m.u.endpoint_stats.latency.items = (uint64_t *) e->latency.counts;
        s_send (self, &m);
    }
}

static void
s_flush_stats (s_rank_t *self, int force)
{
    double now = sb_now ();
    if (!force && now < self->next_stats)
        return;
    self->next_stats = now + 1.0;
    if (!force && !self->st_samples && !self->st_bytes && !self->st_compute_ns)
        return;
    sb_msg_t m = { .type = SB_MSG_STATS };
    m.u.stats.rank = self->rank;
    m.u.stats.epoch = self->epoch;
    m.u.stats.samples = self->st_samples;
    m.u.stats.bytes = self->st_bytes;
    m.u.stats.reads = self->st_reads;
    m.u.stats.read_ns = self->st_read_ns;
    m.u.stats.compute_ns = self->st_compute_ns;
    s_send (self, &m);
    self->st_samples = self->st_bytes = self->st_reads = self->st_read_ns = self->st_compute_ns = 0;
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

/* s_recv_pipe without waiting: 2 when nothing is queued (the pipe is then
 * drained, as sb_wire_wait requires). Frames on the pipe are single-part. */
static int
s_try_recv_pipe (s_rank_t *self, sb_msg_t *msg)
{
    memset (msg, 0, sizeof *msg);
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    if (zmq_msg_recv (&frame, zsock_resolve (self->pipe), ZMQ_DONTWAIT) < 0) {
        int e = zmq_errno ();
        zmq_msg_close (&frame);
        if (e == EAGAIN || e == EINTR)
            return 2;
        self->terminated = 1;   /* the pipe is gone */
        return 1;
    }
    int more = zmq_msg_more (&frame);
    const void *data = zmq_msg_data (&frame);
    size_t size = zmq_msg_size (&frame);
    int rc = 0;
    char reason[256];
    if (size == 5 && memcmp (data, "$TERM", 5) == 0) {
        self->terminated = 1;
        rc = 1;
    }
    else if (more || sb_proto_decode (data, size, msg, reason, sizeof reason, NULL) != SB_PROTO_OK) {
        sb_warn ("rank %llu: bad frame from the agent: %s", (unsigned long long) self->rank,
                 more ? "more than one part" : reason);
        rc = -1;
    }
    zmq_msg_close (&frame);
    while (more) {  /* discard the rest of a multi-part message */
        zmq_msg_init (&frame);
        if (zmq_msg_recv (&frame, zsock_resolve (self->pipe), ZMQ_DONTWAIT) < 0)
            more = 0;
        else
            more = zmq_msg_more (&frame);
        zmq_msg_close (&frame);
    }
    return rc;
}

/* ---------------------------------------------------------------- datagen */

/* Write one object through a hidden temporary name, then rename it, so a
 * listing never sees a partial object. */
static int
s_write_object (s_rank_t *self, const sb_dataset_t *ds, uint64_t i, uint8_t *buf, size_t buf_size,
                uint64_t *bytes_out, char *err, size_t err_size, int *errno_out, char *path, size_t path_size)
{
    const char *root = self->cfg->data_root;
    char key[PATH_MAX], dir[256], tmp[PATH_MAX];
    *errno_out = 0;
    if (sb_dataset_key (ds, i, key, sizeof key) != 0 || sb_dataset_folder (ds, i, dir, sizeof dir) != 0
        || sb_strf (path, path_size, "%s%s", root, key) != 0) {
        snprintf (err, err_size, "object %llu: name too long", (unsigned long long) i);
        return -1;
    }
    const char *base = strrchr (key, '/') ? strrchr (key, '/') + 1 : key;
    if (sb_strf (tmp, sizeof tmp, "%s%s/.%s.tmp", root, dir, base) != 0) {
        snprintf (err, err_size, "object %llu: name too long", (unsigned long long) i);
        return -1;
    }
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENOENT) {
        char folder[PATH_MAX];
        if (sb_strf (folder, sizeof folder, "%s%s", root, dir) != 0 || sb_mkdirs (folder, err, err_size) != 0) {
            *errno_out = errno;
            return -1;
        }
        fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        *errno_out = errno;
        snprintf (err, err_size, "open %s for writing: %s", tmp, strerror (errno));
        return -1;
    }
    uint64_t size = sb_dataset_object_size (ds, i);
    uint64_t seed = sb_dataset_content_seed (ds->seed, key);
    uint64_t done = 0;
    while (done < size) {
        size_t n = size - done < buf_size ? (size_t) (size - done) : buf_size;
        sb_content_fill (seed, done, buf, n);
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
                return -1;
            }
            put += (size_t) w;
        }
        done += n;
        self->st_bytes += n;
    }
    if (close (fd) != 0) {
        *errno_out = errno;
        snprintf (err, err_size, "close %s: %s", tmp, strerror (errno));
        unlink (tmp);
        return -1;
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

typedef struct {
    uint64_t seed;
} s_fill_ctx_t;

static void
s_fill_content (void *arg, uint64_t offset, uint8_t *buf, size_t len)
{
    s_fill_ctx_t *ctx = arg;
    sb_content_fill (ctx->seed, offset, buf, len);
}

/* PUT one object to S3 (multipart above the threshold). */
static int
s_put_object (s_rank_t *self, sb_s3_t *s3, const sb_dataset_t *ds, uint64_t i, uint64_t *bytes_out,
              sb_read_result_t *failure)
{
    char key[PATH_MAX], full[PATH_MAX];
    memset (failure, 0, sizeof *failure);
    if (sb_dataset_key (ds, i, key, sizeof key) != 0
        || sb_strf (full, sizeof full, "%s%s", self->cfg->data_root, key) != 0) {
        snprintf (failure->message, sizeof failure->message, "object %llu: key too long", (unsigned long long) i);
        return -1;
    }
    uint64_t size = sb_dataset_object_size (ds, i);
    /* bytes count once the PUT succeeded: hashing and retries refill */
    s_fill_ctx_t ctx = { .seed = sb_dataset_content_seed (ds->seed, key) };
    sb_s3_error_t e;
    if (sb_s3_put (s3, full, size, s_fill_content, &ctx, &e) != 0) {
        snprintf (failure->message, sizeof failure->message, "%s", e.text);
        snprintf (failure->target, sizeof failure->target, "%s", full);
        snprintf (failure->endpoint, sizeof failure->endpoint, "%s", e.endpoint);
        failure->http_status = e.http_status;
        snprintf (failure->s3_code, sizeof failure->s3_code, "%s", e.s3_code);
        failure->curl_code = e.curl_code;
        failure->attempt = e.attempt;
        failure->error = e.os_errno;
        return -1;
    }
    self->st_bytes += size;
    *bytes_out = size;
    return 0;
}

/* The run's dataset layout, as WELCOME gives it (strings borrowed). */
static sb_dataset_t
s_dataset (const s_rank_t *self)
{
    const sb_msg_welcome_t *c = self->cfg;
    return (sb_dataset_t) {
        .prefix = c->file_prefix, .format = c->format, .files = c->num_files, .subfolders = c->num_subfolders,
        .samples_per_file = c->samples_per_file, .record_length = c->record_length,
        .record_stdev = c->record_stdev, .seed = c->seed,
    };
}

static void
s_datagen (s_rank_t *self, const sb_msg_phase_start_t *ps)
{
    const sb_msg_welcome_t *c = self->cfg;
    sb_dataset_t ds = s_dataset (self);
    uint64_t first, count;
    sb_shard_files (ps->items, c->total_ranks, self->rank, &first, &count);
    uint8_t *buf = malloc (c->io_buffer);
    if (!buf) {
        s_report_error (self, "write", NULL, ENOMEM, "out of memory for the write buffer");
        return;
    }
    sb_s3_t *s3 = NULL;
    if (self->storage->type == SB_STORAGE_S3) {
        char err[1024];
        s3 = sb_s3_new (self->storage, 1, err, sizeof err);
        if (!s3) {
            s_report_error (self, "write", NULL, 0, err);
            free (buf);
            return;
        }
    }
    double started = sb_now ();
    uint64_t bytes = 0, files = 0;
    for (uint64_t i = first; i < first + count; i++) {
        /* stay responsive to $TERM between objects */
        if (zsock_events (self->pipe) & ZMQ_POLLIN) {
            sb_msg_t m;
            if (s_recv_pipe (self, &m) == 1)
                break;
            sb_proto_fini (&m);
        }
        char err[1024], path[PATH_MAX];
        int errno_val = 0;
        uint64_t n = 0;
        if (s3) {
            sb_read_result_t failure;
            if (s_put_object (self, s3, &ds, i, &n, &failure) != 0) {
                s_report_failure (self, "write", failure.target, failure.error, failure.message, &failure);
                sb_s3_destroy (&s3);
                free (buf);
                return;
            }
        }
        else if (s_write_object (self, &ds, i, buf, c->io_buffer, &n, err, sizeof err, &errno_val, path,
                                 sizeof path) != 0) {
            s_report_error (self, "write", path, errno_val, err);
            free (buf);
            return;
        }
        bytes += n;
        files++;
        self->st_samples++;
        s_flush_stats (self, 0);
    }
    free (buf);
    if (s3) {
        sb_reader_endpoint_t *eps = calloc (SB_MAX_ENDPOINTS, sizeof *eps);
        size_t n = 0;
        for (size_t e = 0; eps && e < sb_s3_endpoint_count (s3); e++, n++) {
            const sb_s3_endpoint_stats_t *st = sb_s3_stats (s3, e);
            snprintf (eps[n].endpoint, sizeof eps[n].endpoint, "%s", sb_s3_endpoint (s3, e));
            eps[n].requests = st->requests;
            eps[n].bytes = st->bytes;
            eps[n].errors = st->errors;
            eps[n].retries = st->retries;
            eps[n].latency = st->latency;
        }
        if (!self->terminated)
            s_send_endpoint_stats (self, eps, n);
        free (eps);
        sb_s3_destroy (&s3);
    }
    if (self->terminated)
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

/* ---------------------------------------------------------------- train */

typedef struct {
    s_sample_t *items;      /* ring of received, not yet submitted samples */
    size_t      cap, head, count;
} s_queue_t;

static void
s_queue_clear (s_queue_t *q)
{
    for (size_t i = 0; i < q->count; i++)
        free (q->items[(q->head + i) % q->cap].key);
    q->head = q->count = 0;
}

static int
s_train (s_rank_t *self, const sb_msg_phase_start_t *ps)
{
    const sb_msg_welcome_t *c = self->cfg;
    const uint64_t k = ps->samples_per_rank, batches = ps->batches, bs = c->batch_size;
    const uint64_t page = c->keys_page ? c->keys_page : 256;
    const uint64_t window = (c->prefetch_size + 1) * bs;
    const int step_sync = strcmp (c->sync, "step") == 0;
    s_queue_t q = { 0 };
    q.cap = (size_t) (2 * page);
    q.items = calloc (q.cap, sizeof (s_sample_t));
    if (!q.items) {
        s_report_error (self, "read", NULL, ENOMEM, "out of memory for the key queue");
        return -1;
    }
    uint64_t requested = 0, received = 0, submitted = 0, completed = 0, step = 0, bytes = 0;
    int waiting_go = 0, failed = 0;
    double started = sb_now (), first_step_end = 0, compute_after_first = 0, compute_all = 0;
    double io_wait = 0, barrier = 0, wait_since = 0, barrier_since = 0;
    sb_histogram_t *barrier_latency = calloc (1, sizeof *barrier_latency);
    if (!barrier_latency) {
        s_report_error (self, "read", NULL, ENOMEM, "out of memory");
        free (q.items);
        return -1;
    }
    char text[1024], name[PATH_MAX];
    const sb_dataset_t ds = s_dataset (self);
    const int needs_keys = sb_reader_needs_keys (self->reader);

    while (!failed && !self->terminated) {
        /* 1. keep up to two pages of keys requested ahead of submission */
        while (requested < k && requested - submitted < 2 * page && requested - received < 2 * page) {
            uint64_t n = k - requested < page ? k - requested : page;
            if (requested + n - submitted > q.cap)
                break;
            sb_msg_t m = { .type = SB_MSG_KEYS_REQ };
            m.u.keys_req.rank = self->rank;
            m.u.keys_req.epoch = self->epoch;
            m.u.keys_req.position = requested;
            m.u.keys_req.count = n;
            if (s_send (self, &m) != 0) {
                failed = 1;
                break;
            }
            requested += n;
        }
        /* 2. submit reads within the prefetch window */
        uint64_t consumed = step * bs;
        while (q.count > 0 && submitted < consumed + window) {
            s_sample_t *s = &q.items[q.head];
            const char *key = s->key;
            if (!key && needs_keys) {
                if (sb_dataset_key (&ds, s->name, name, sizeof name) != 0) {
                    s_report_error (self, "read", NULL, ENAMETOOLONG, "object name too long");
                    failed = 1;
                    break;
                }
                key = name;
            }
            if (sb_reader_submit (self->reader, key, s->offset, s->length) != 0) {
                s_report_error (self, "read", key, errno, "cannot queue a read");
                failed = 1;
                break;
            }
            free (s->key);
            s->key = NULL;
            q.head = (q.head + 1) % q.cap;
            q.count--;
            submitted++;
        }
        if (failed)
            break;
        uint64_t inline_bytes = 0, inline_reads = sb_reader_take_inline (self->reader, &inline_bytes);
        if (inline_reads) {
            completed += inline_reads;
            bytes += inline_bytes;
            self->st_samples += inline_reads;
            self->st_bytes += inline_bytes;
            self->st_reads += inline_reads;
        }
        /* 3. compute the next batch when its samples are in */
        if (!waiting_go && step < batches && completed >= (step + 1) * bs) {
            double now = sb_now ();
            if (wait_since > 0) {
                io_wait += now - wait_since;
                wait_since = 0;
            }
            uint64_t spent = 0;
            if (c->computation_time > 0) {  /* no compute: no time, AU 0 */
                uint64_t t0 = sb_mono_ns ();
                sb_sleep_s (c->computation_time);
                spent = sb_mono_ns () - t0;
            }
            self->st_compute_ns += spent;
            compute_all += (double) spent / 1e9;
            if (step > 0)
                compute_after_first += (double) spent / 1e9;
            if (step_sync) {
                sb_msg_t m = { .type = SB_MSG_STEP };
                m.u.step.epoch = self->epoch;
                m.u.step.step = step;
                if (s_send (self, &m) != 0) {
                    failed = 1;
                    break;
                }
                waiting_go = 1;
                barrier_since = sb_now ();
            }
            else {
                if (step == 0)
                    first_step_end = sb_now ();
                step++;
            }
            continue;
        }
        if (step == batches && completed == k && !waiting_go)
            break;  /* every batch computed, the tail read */
        if (!waiting_go && step < batches && wait_since == 0)
            wait_since = sb_now ();
        /* 4. wait for a completion, a key page or a barrier release */
        s_flush_stats (self, 0);
        /* the pipe first, without waiting; then sleep: on the pipe's ZMQ_FD
         * alone for the synthetic engine (one syscall), else on a poller
         * over the pipe and the engine's completions */
        sb_msg_t m;
        int r = s_try_recv_pipe (self, &m);
        void *which = r == 2 ? NULL : self->pipe;
        if (r == 2 && self->storage->type == SB_STORAGE_SYNTHETIC) {
            zsock_t *socks[1] = { self->pipe };
            sb_wire_wait (socks, 1, 200);
            continue;
        }
        if (r == 2 && (which = zpoller_wait (self->poller, 200)) == self->pipe)
            continue;   /* taken by s_try_recv_pipe on the next turn */
        if (which == sb_reader_completions (self->reader)) {
            sb_read_result_t res;
            if (sb_reader_take (self->reader, &res) != 0) {
                s_report_error (self, "read", NULL, 0, "the I/O engine stopped answering");
                failed = 1;
                break;
            }
            if (res.error) {
                s_report_failure (self, "read", res.target, res.error > 0 ? res.error : 0, res.message, &res);
                failed = 1;
                break;
            }
            completed++;
            bytes += res.bytes;
            self->st_samples++;
            self->st_bytes += res.bytes;
            self->st_reads++;
            self->st_read_ns += res.latency_ns;
        }
        else if (which == self->pipe) {
            if (r != 0)
                continue;
            const sb_msg_keys_t *kp = &m.u.keys;
            size_t page_n = m.type == SB_MSG_KEYS ? kp->offsets.count : 0;
            if (m.type == SB_MSG_KEYS && kp->epoch == self->epoch && kp->position == received && page_n > 0
                && page_n == kp->lengths.count
                && ((kp->keys.count == page_n && kp->names.count == 0)
                    || (kp->keys.count == 0 && kp->names.count == page_n))
                && q.count + page_n <= q.cap && received + page_n <= requested) {
                for (size_t j = 0; j < page_n; j++) {
                    s_sample_t *s = &q.items[(q.head + q.count) % q.cap];
                    s->key = kp->keys.count ? kp->keys.items[j] : NULL;
                    if (kp->keys.count)
                        kp->keys.items[j] = NULL;     /* moved */
                    s->name = kp->names.count ? kp->names.items[j] : 0;
                    s->offset = kp->offsets.items[j];
                    s->length = kp->lengths.items[j];
                    q.count++;
                }
                received += page_n;
            }
            else if (m.type == SB_MSG_GO && waiting_go && m.u.go.epoch == self->epoch && m.u.go.step == step) {
                double now = sb_now ();
                barrier += now - barrier_since;
                sb_histogram_add (barrier_latency, (uint64_t) ((now - barrier_since) * 1e6));
                if (step == 0)
                    first_step_end = now;
                waiting_go = 0;
                step++;
            }
            else if (m.type == SB_MSG_KEYS || m.type == SB_MSG_GO) {
                snprintf (text, sizeof text, "%s out of order while training epoch %llu (step %llu, %llu keys received)",
                          sb_proto_type_name (m.type), (unsigned long long) self->epoch, (unsigned long long) step,
                          (unsigned long long) received);
                s_report_error (self, "protocol", NULL, 0, text);
                failed = 1;
            }
            else {
                snprintf (text, sizeof text, "unexpected %s while training epoch %llu (step %llu)",
                          sb_proto_type_name (m.type), (unsigned long long) self->epoch, (unsigned long long) step);
                s_report_error (self, "protocol", NULL, 0, text);
                failed = 1;
            }
            sb_proto_fini (&m);
        }
    }
    s_queue_clear (&q);
    free (q.items);
    if (failed || self->terminated) {
        free (barrier_latency);
        return -1;
    }
    double finished = sb_now ();
    s_flush_stats (self, 1);
    if (self->storage->type == SB_STORAGE_S3) {
        sb_reader_endpoint_t *eps = calloc (SB_MAX_ENDPOINTS, sizeof *eps);
        int n = eps ? sb_reader_endpoint_stats (self->reader, eps, SB_MAX_ENDPOINTS) : -1;
        if (n < 0)
            sb_warn ("rank %llu: per-endpoint counters of epoch %llu are lost", (unsigned long long) self->rank,
                     (unsigned long long) self->epoch);
        else
            s_send_endpoint_stats (self, eps, (size_t) n);
        free (eps);
    }
    sb_msg_t done = { .type = SB_MSG_RANK_DONE };
    sb_msg_rank_done_t *d = &done.u.rank_done;
    d->rank = self->rank;
    d->epoch = self->epoch;
    d->samples = completed;
    d->batches = step;
    d->bytes = bytes;
    d->started_at = started;
    d->finished_at = finished;
    /* AU follows DLIO: the first step (warm-up) is excluded from both sides. */
    if (batches >= 2) {
        d->compute_s = compute_after_first;
        d->au = finished > first_step_end ? compute_after_first / (finished - first_step_end) : 0;
    }
    else {
        d->compute_s = compute_all;
        d->au = finished > started ? compute_all / (finished - started) : 0;
    }
    if (d->au > 1)
        d->au = 1;  /* clock granularity */
    d->io_wait_s = io_wait;
    d->barrier_s = barrier;
    size_t buckets = SB_HISTOGRAM_BUCKETS;
    while (buckets > 0 && barrier_latency->counts[buckets - 1] == 0)
        buckets--;
    d->barrier_latency.count = buckets;
    d->barrier_latency.items = barrier_latency->counts;
    int rc = s_send (self, &done);
    free (barrier_latency);
    return rc;
}

void
sb_rank_actor (zsock_t *pipe, void *args)
{
    const sb_rank_args_t *a = args;
    s_rank_t r = { .pipe = pipe, .cfg = a->cfg, .storage = a->storage, .rank = a->rank, .host = a->host };
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
    self->reader = sb_reader_new (a->storage, a->cfg->data_root, (size_t) a->cfg->read_threads, (size_t) a->cfg->io_buffer,
                                  (int) a->cfg->verify, a->cfg->seed, err, sizeof err);
    /* the synthetic engine completes reads inline: nothing to poll for */
    if (self->reader)
        self->poller = a->storage->type == SB_STORAGE_SYNTHETIC ? zpoller_new (pipe, NULL)
                                                                 : zpoller_new (sb_reader_completions (self->reader), pipe, NULL);
    /* Signals are the agent's business: it stops the ranks with $TERM. A
     * poller that gave up on SIGINT would spin without ever reading it. */
    if (self->poller)
        zpoller_set_nonstop (self->poller, true);
    zsock_signal (pipe, 0);
    if (!self->reader || !self->poller) {
        s_report_error (self, "start", NULL, ENOMEM, self->reader ? "cannot create a poller" : err);
        /* wait for $TERM */
        while (!self->terminated) {
            sb_msg_t m;
            if (s_recv_pipe (self, &m) == 0)
                sb_proto_fini (&m);
        }
    }
    while (!self->terminated) {
        sb_msg_t m;
        if (s_recv_pipe (self, &m) != 0)
            continue;
        if (m.type == SB_MSG_PHASE_START) {
            self->epoch = m.u.phase_start.epoch;
            self->next_stats = sb_now () + 1.0;
            if (strcmp (m.u.phase_start.phase, "datagen") == 0)
                s_datagen (self, &m.u.phase_start);
            else if (strcmp (m.u.phase_start.phase, "train") == 0)
                s_train (self, &m.u.phase_start);
            else {
                snprintf (err, sizeof err, "unknown phase '%s'", m.u.phase_start.phase);
                s_report_error (self, "protocol", NULL, 0, err);
            }
        }
        /* anything else between phases (a late GO after a failure) is dropped */
        sb_proto_fini (&m);
    }
    zpoller_destroy (&self->poller);
    sb_reader_destroy (&self->reader);
    zsock_destroy (&self->up);
}
