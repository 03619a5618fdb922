/* reader: a pread thread pool or a curl multi thread, fed over inproc
 * sockets. */
#include "reader.h"
#include "dataset.h"
#include "format.h"
#include "log.h"
#include "pagecache.h"
#include "s3_client.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct sb_reader {
    sb_storage_cfg_t storage;
    sb_s3_t   *s3;          /* s3 engine: owned by its thread while it runs */
    char       root[PATH_MAX];
    size_t     buffer_bytes;    /* file engine: a multiple of SB_READER_DIRECT_ALIGN */
    int        verify;
    int        odirect;         /* reader.odirect: open with O_DIRECT */
    uint64_t   residency_every; /* sample 1 read in this many (0: none) */
    uint64_t   seed;
    sb_dataset_t ds;        /* framed formats: how objects are generated */
    char       ds_prefix[256];
    char       ds_format[64];
    int        framed;      /* verify against the format, not raw bytes */
    char       work_ep[128];
    char       done_ep[128];
    zsock_t   *work;        /* PUSH, bound */
    zsock_t   *done;        /* PULL, bound */
    uint64_t   inline_reads;    /* synthetic: completed, not yet taken */
    uint64_t   inline_bytes;
    uint8_t   *inline_buf;      /* synthetic + verify: where content is generated */
    pthread_t *threads;
    struct s_thread_ctx *ctxs;
    size_t     nthreads;
    pthread_mutex_t lock;   /* the file threads' current keys */
    int        stuck;       /* sb_reader_stalled found a read that does not return */
    int        stopping;    /* sb_reader_destroy: an interrupted read gives up (atomic) */
};

typedef enum { S_READ = 0, S_STOP = 1, S_STATS = 2 } s_kind_t;

typedef struct s_thread_ctx {
    sb_reader_t *reader;
    zsock_t     *work;      /* PULL, connected; owned by the thread */
    zsock_t     *done;      /* PUSH, connected; owned by the thread */
    uint8_t     *buf;       /* owned by the thread */
    uint8_t     *expect;    /* owned by the thread; NULL unless verifying */
    uint64_t     progress_ns;   /* file: sb_mono_ns of the read's last progress, 0 idle (atomic) */
    char         key[PATH_MAX]; /* file: the key being read (reader->lock) */
    int          joined;    /* teardown: the thread ended and was joined */
    int          wakes;     /* teardown: wake signals sent (sb_reader_wake) */
    int          given_up;  /* teardown: still stuck after the last wake */
} s_thread_ctx_t;

/* A file thread's read made progress (it started, or a call returned). */
static void
s_progress (s_thread_ctx_t *ctx, int busy)
{
    __atomic_store_n (&ctx->progress_ns, busy ? sb_mono_ns () : 0, __ATOMIC_RELEASE);
}

/* A file thread stuck in a call that may never return (a FIFO, a lease, a
 * hung NFS or FUSE mount) is woken by this signal at teardown: its handler
 * does nothing and is installed without SA_RESTART, so an interruptible
 * wait ends with EINTR and the thread, seeing `stopping`, gives up the read.
 * (pthread_cancel would do the same but unwinds the stack under the
 * sanitizers' feet.) An uninterruptible wait (D state) ignores it. */
#define S_WAKE_SIGNAL (SIGRTMIN + 1)

static void
s_wake_handler (int sig)
{
    (void) sig;
}

static pthread_once_t s_wake_once = PTHREAD_ONCE_INIT;
static int s_wake_ok;

static void
s_wake_install (void)
{
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_wake_handler;
    sigemptyset (&sa.sa_mask);
    s_wake_ok = sigaction (S_WAKE_SIGNAL, &sa, NULL) == 0;
}

typedef struct {
    uint64_t offset;
    uint64_t length;
    uint64_t tag;           /* the caller's, returned with the completion */
    uint8_t  stop;          /* s_kind_t */
    uint8_t  evict;         /* SB_READ_EVICT: drop the file's pages before reading */
    char     key[];
} s_request_t;

/* Reply of the s3 thread to S_STATS, on the completion socket. */
typedef struct {
    size_t               count;
    sb_reader_endpoint_t endpoints[SB_MAX_ENDPOINTS];
} s_stats_reply_t;

/* The generator of the object named key (a DLIO name: its index decides
 * its record length). Returns 0, or -1 with err set. */
static int
s_open_object (const sb_reader_t *self, const char *key, sb_format_obj_t *obj, char *err, size_t err_size)
{
    uint64_t i;
    char why[512];
    if (sb_format_key_index (key, &i) != 0) {
        snprintf (err, err_size, "verify %s: not a DLIO name (PREFIX_I_of_N.%s): cannot tell its generator", key,
                  self->ds_format);
        return -1;
    }
    if (sb_format_open (obj, &self->ds, i, key, why, sizeof why) != 0) {
        snprintf (err, err_size, "verify %s: %s", key, why);
        return -1;
    }
    return 0;
}

static void
s_s3_expect_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    sb_format_obj_t *obj = ctx;
    /* past the generator's end (the object is longer than it should be):
     * zeros, which the seeded bytes of a longer object will not match */
    uint64_t have = offset < obj->size ? obj->size - offset : 0;
    size_t n = have < len ? (size_t) have : len;
    sb_format_fill (obj, offset, buf, n);
    for (size_t k = n; k < len; k++)
        buf[k] = 0;
}

static void
s_s3_expect_free (void *ctx)
{
    sb_format_close (ctx);
    free (ctx);
}

/* What path is, when not a regular file (st: its stat). */
static void
s_not_regular (const char *path, const struct stat *st, sb_read_result_t *res)
{
    mode_t m = st->st_mode;
    const char *what = S_ISFIFO (m) ? "a FIFO" : S_ISCHR (m) ? "a character device" : S_ISBLK (m) ? "a block device"
                       : S_ISDIR (m) ? "a directory" : S_ISSOCK (m) ? "a socket" : "not a file";
    struct stat lst;
    int link = lstat (path, &lst) == 0 && S_ISLNK (lst.st_mode);
    res->error = -1;
    snprintf (res->message, sizeof res->message,
              "open %s: not a regular file (%s%s): a dataset object must be a regular file", path,
              link ? "a symbolic link to " : "", what);
}

/* 1 when the read of key at offset is one of the 1 in `every` whose
 * residency is sampled: FNV-1a of the key and offset, so the choice is the
 * same every epoch and every run. */
static int
s_residency_sampled (uint64_t every, const char *key, uint64_t offset)
{
    if (every <= 1)
        return every == 1;
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *c = (const unsigned char *) key; *c; c++)
        h = (h ^ *c) * 1099511628211ull;
    for (int i = 0; i < 8; i++)
        h = (h ^ ((offset >> (8 * i)) & 0xff)) * 1099511628211ull;
    return h % every == 0;
}

static void
s_read_one (s_thread_ctx_t *ctx, const s_request_t *rq, sb_read_result_t *res)
{
    sb_reader_t *self = ctx->reader;
    uint8_t *buf = ctx->buf, *expect = ctx->expect;
    char path[PATH_MAX];
    memset (res, 0, sizeof *res);
    snprintf (res->target, sizeof res->target, "%s", rq->key);
    uint64_t t0 = sb_mono_ns ();
    if (sb_strf (path, sizeof path, "%s%s", self->root, rq->key) != 0) {
        res->error = ENAMETOOLONG;
        snprintf (res->message, sizeof res->message, "open %s%s: path too long", self->root, rq->key);
        return;
    }
    /* only regular files: a FIFO would block the open, a device (a link to
     * /dev/zero) would be read for ever. stat first (a FIFO's stat does not
     * block), then fstat what was opened (it may have been replaced) */
    struct stat st;
    int rc = stat (path, &st);
    if (rc != 0) {
        res->error = errno;
        snprintf (res->message, sizeof res->message, "open %s: %s", path, strerror (errno));
        return;
    }
    if (!S_ISREG (st.st_mode)) {
        s_not_regular (path, &st, res);
        return;
    }
    const int direct = self->odirect;
    int fd = open (path, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
    if (fd < 0) {
        res->error = errno;
        if (direct && errno == EINVAL)
            snprintf (res->message, sizeof res->message,
                      "open %s with O_DIRECT (reader.odirect: true): %s: its file system refuses direct I/O"
                      " (tmpfs did before Linux 6.6); put the dataset on one that supports it or set reader.odirect: false",
                      path, strerror (errno));
        else
            snprintf (res->message, sizeof res->message, "open %s%s: %s", path, direct ? " with O_DIRECT" : "",
                      strerror (errno));
        return;
    }
    if (fstat (fd, &st) != 0) {
        res->error = errno;
        snprintf (res->message, sizeof res->message, "fstat %s: %s", path, strerror (errno));
        close (fd);
        return;
    }
    if (!S_ISREG (st.st_mode)) {
        s_not_regular (path, &st, res);
        close (fd);
        return;
    }
    uint64_t content_seed = self->verify ? sb_dataset_content_seed (self->seed, rq->key) : 0;
    sb_format_obj_t obj;
    int framed = 0;
    if (self->verify && self->framed) {
        if (s_open_object (self, rq->key, &obj, res->message, sizeof res->message) != 0) {
            res->error = -1;
            close (fd);
            return;
        }
        framed = 1;
    }
    /* a whole object (skip_listing: no catalog size) is the size the open
     * file has, never more: a file that grows while read is read up to that */
    int to_eof = rq->length == 0;
    uint64_t length = to_eof ? (uint64_t) st.st_size : rq->length;
    /* how much of the range the page cache holds now, before reading it
     * (a file that cannot be mapped is not counted) */
    uint64_t check_ns = 0;  /* not part of the read's latency */
    if (rq->evict && !direct) {
        /* the epoch's first read of this file: its pages go first, as DLIO's
         * drop_caches before the epoch intends (shardbench.drop_page_cache) */
        char why[512];
        uint64_t c0 = sb_mono_ns ();
        if (sb_pagecache_evict_fd (fd, path, why, sizeof why) != 0) {
            res->error = -1;
            snprintf (res->message, sizeof res->message, "%s (shardbench.drop_page_cache: true; false reads what the"
                      " page cache holds)", why);
            close (fd);
            return;
        }
        check_ns += sb_mono_ns () - c0;
    }
    if (!direct && s_residency_sampled (self->residency_every, rq->key, rq->offset)) {
        sb_residency_t r;
        char why[256];
        uint64_t c0 = sb_mono_ns ();
        if (sb_pagecache_residency (fd, rq->offset, length, &r, path, why, sizeof why) == 0) {
            res->resident_bytes = r.resident;
            res->checked_bytes = r.checked;
        }
        check_ns += sb_mono_ns () - c0;
    }
    /* [want, want_end) is what the sample asked for; reads go from pos to
     * read_end, which O_DIRECT widens to whole aligned blocks (the last one
     * cut short by the end of the file): only the asked bytes count */
    const uint64_t align = SB_READER_DIRECT_ALIGN;
    const uint64_t want = rq->offset, want_end = rq->offset + length;
    uint64_t pos = direct ? want / align * align : want;
    const uint64_t read_end = direct ? (want_end + align - 1) / align * align : want_end;
    uint64_t done = 0;
    while (pos < want_end) {
        size_t chunk = read_end - pos >= self->buffer_bytes ? self->buffer_bytes : (size_t) (read_end - pos);
        ssize_t n = pread (fd, buf, chunk, (off_t) pos);
        s_progress (ctx, 1);
        if (n < 0) {
            if (errno == EINTR && !__atomic_load_n (&self->stopping, __ATOMIC_ACQUIRE))
                continue;
            res->error = errno;
            if (direct && errno == EINVAL)
                snprintf (res->message, sizeof res->message,
                          "read %s at offset %llu with O_DIRECT (reader.odirect: true): %s: the file system or"
                          " device refuses direct reads of %u-byte aligned blocks", path,
                          (unsigned long long) pos, strerror (errno), SB_READER_DIRECT_ALIGN);
            else
                snprintf (res->message, sizeof res->message, "read %s at offset %llu: %s", path,
                          (unsigned long long) (pos > want ? pos : want), strerror (errno));
            break;
        }
        /* the bytes of this read inside the asked range */
        uint64_t lo = pos > want ? pos : want, hi = pos + (uint64_t) n < want_end ? pos + (uint64_t) n : want_end;
        /* an O_DIRECT read cut short ends the file: the next read would not be aligned */
        int ended = n == 0 || (direct && (size_t) n < chunk && hi < want_end);
        if (hi > lo) {
            size_t m = (size_t) (hi - lo);
            const uint8_t *got = buf + (lo - pos);
            if (framed && hi > obj.size) {
                res->error = -1;
                snprintf (res->message, sizeof res->message,
                          "verify %s: the file goes on past offset %llu, where the %s generator ends", path,
                          (unsigned long long) obj.size, obj.ops->name);
                done += m;
                break;
            }
            if (self->verify) {
                if (framed)
                    sb_format_fill (&obj, lo, expect, m);
                else
                    sb_content_fill (content_seed, lo, expect, m);
                if (memcmp (got, expect, m) != 0) {
                    size_t at = 0;
                    while (at < m && got[at] == expect[at])
                        at++;
                    res->error = -1;
                    snprintf (res->message, sizeof res->message, "verify %s: byte %llu differs from the generator",
                              path, (unsigned long long) (lo + at));
                    done += m;
                    break;
                }
            }
            done += m;
        }
        if (ended) {
            res->error = -1;
            snprintf (res->message, sizeof res->message,
                      "short read %s: file ends at offset %llu, expected %llu bytes from offset %llu%s", path,
                      (unsigned long long) (want + done), (unsigned long long) length,
                      (unsigned long long) want, to_eof ? " (its size when opened)" : "");
            break;
        }
        pos += (uint64_t) n;
    }
    if (framed && to_eof && !res->error && done != obj.size) {
        res->error = -1;
        snprintf (res->message, sizeof res->message, "verify %s: %llu bytes, the %s generator makes %llu", path,
                  (unsigned long long) done, obj.ops->name, (unsigned long long) obj.size);
    }
    if (framed)
        sb_format_close (&obj);
    close (fd);
    res->bytes = done;
    res->latency_ns = sb_mono_ns () - t0 - check_ns;
}

/* Sockets and buffers are made by sb_reader_new, so a failure is reported
 * there; the thread takes them over (pthread_create is the memory barrier
 * ZeroMQ asks for when a socket changes threads). */
static void *
s_thread (void *arg)
{
    s_thread_ctx_t *ctx = arg;
    for (;;) {
        zframe_t *f = zframe_recv (ctx->work);
        if (!f)
            break;
        const s_request_t *rq = (const s_request_t *) zframe_data (f);
        if (zframe_size (f) < sizeof (s_request_t) + 1 || rq->stop) {
            zframe_destroy (&f);
            break;
        }
        sb_read_result_t res;
        pthread_mutex_lock (&ctx->reader->lock);
        snprintf (ctx->key, sizeof ctx->key, "%s", rq->key);
        pthread_mutex_unlock (&ctx->reader->lock);
        s_progress (ctx, 1);
        s_read_one (ctx, rq, &res);
        res.tag = rq->tag;
        s_progress (ctx, 0);
        zframe_destroy (&f);
        if (zsock_send (ctx->done, "b", &res, sizeof res) != 0)
            break;
    }
    return NULL;
}

static void
s_ctx_free (s_thread_ctx_t *ctx)
{
    zsock_destroy (&ctx->work);
    zsock_destroy (&ctx->done);
    free (ctx->buf);
    free (ctx->expect);
}

typedef struct {
    s_thread_ctx_t *ctx;
    int             failed_send;
} s_s3_sink_t;

/* Returns 0, or -1 when the reply could not be sent (the thread ends). */
static int
s_s3_stats_reply (s_thread_ctx_t *ctx)
{
    sb_reader_t *self = ctx->reader;
    s_stats_reply_t *reply = calloc (1, sizeof *reply);
    if (reply) {
        for (size_t i = 0; i < sb_s3_endpoint_count (self->s3) && i < SB_MAX_ENDPOINTS; i++) {
            sb_s3_endpoint_stats_t *st = sb_s3_stats (self->s3, i);
            sb_reader_endpoint_t *out = &reply->endpoints[reply->count++];
            snprintf (out->endpoint, sizeof out->endpoint, "%s", sb_s3_endpoint (self->s3, i));
            out->requests = st->requests;
            out->bytes = st->bytes;
            out->errors = st->errors;
            out->retries = st->retries;
            out->latency = st->latency;
            memset (st, 0, sizeof *st);
        }
        int rc = zsock_send (ctx->done, "b", reply, sizeof *reply);
        free (reply);
        return rc;
    }
    return zsock_send (ctx->done, "b", "", (size_t) 0);
}

static void
s_s3_on_done (void *arg, const sb_s3_done_t *d)
{
    s_s3_sink_t *sink = arg;
    sb_read_result_t res;
    memset (&res, 0, sizeof res);
    res.bytes = d->bytes;
    res.latency_ns = d->latency_ns;
    res.tag = d->tag;
    if (d->failed) {
        const sb_s3_error_t *e = &d->error;
        res.error = e->os_errno ? e->os_errno : -1;
        snprintf (res.message, sizeof res.message, "%s", e->text);
        snprintf (res.target, sizeof res.target, "%s", e->key);
        snprintf (res.endpoint, sizeof res.endpoint, "%s", e->endpoint);
        res.http_status = e->http_status;
        snprintf (res.s3_code, sizeof res.s3_code, "%s", e->s3_code);
        res.curl_code = e->curl_code;
        res.attempt = e->attempt;
    }
    if (zsock_send (sink->ctx->done, "b", &res, sizeof res) != 0)
        sink->failed_send = 1;
    else if (d->failed && s_s3_stats_reply (sink->ctx) != 0)   /* right behind it: sb_reader_failure_stats */
        sink->failed_send = 1;
}

/* The s3 engine: take requests while fewer than max_in_flight are pending,
 * move transfers along, report completions. sb_reader_submit wakes it. */
static void *
s_s3_thread (void *arg)
{
    s_thread_ctx_t *ctx = arg;
    sb_reader_t *self = ctx->reader;
    s_s3_sink_t sink = { .ctx = ctx };
    size_t limit = (size_t) self->storage.max_in_flight;
    int stopping = 0;
    while (!sink.failed_send) {
        while (!stopping && sb_s3_pending (self->s3) < limit) {
            zframe_t *f = NULL;
            if (zsock_events (ctx->work) & ZMQ_POLLIN)
                f = zframe_recv (ctx->work);
            if (!f)
                break;
            const s_request_t *rq = (const s_request_t *) zframe_data (f);
            if (zframe_size (f) < sizeof (s_request_t) + 1 || rq->stop == S_STOP)
                stopping = 1;
            else if (rq->stop == S_STATS) {
                if (s_s3_stats_reply (ctx) != 0)
                    sink.failed_send = 1;
            }
            else {
                char key[PATH_MAX];
                uint64_t seed = self->verify ? sb_dataset_content_seed (self->seed, rq->key) : 0;
                sb_format_obj_t *obj = NULL;
                char why[1024] = "";
                int key_ok = sb_strf (key, sizeof key, "%s%s", self->root, rq->key) == 0;
                if (key_ok && self->verify && self->framed) {
                    obj = malloc (sizeof *obj);
                    if (obj && s_open_object (self, rq->key, obj, why, sizeof why) != 0) {
                        free (obj);
                        obj = NULL;
                    }
                }
                if (why[0]) {
                    sb_read_result_t res = { .error = -1, .tag = rq->tag };
                    snprintf (res.message, sizeof res.message, "%s", why);
                    snprintf (res.target, sizeof res.target, "%s", rq->key);
                    if (zsock_send (ctx->done, "b", &res, sizeof res) != 0)
                        sink.failed_send = 1;
                }
                else if (!key_ok || (self->verify && self->framed && !obj)
                    || sb_s3_get_start_fill (self->s3, rq->tag, key, rq->offset, rq->length, self->verify, seed,
                                             obj ? s_s3_expect_fill : NULL, obj, obj ? s_s3_expect_free : NULL) != 0) {
                    sb_read_result_t res = { .error = ENOMEM, .tag = rq->tag };
                    snprintf (res.message, sizeof res.message, "GET %s%s: cannot start the request (out of memory or key too long)",
                              self->root, rq->key);
                    snprintf (res.target, sizeof res.target, "%s", rq->key);
                    if (zsock_send (ctx->done, "b", &res, sizeof res) != 0)
                        sink.failed_send = 1;
                }
            }
            zframe_destroy (&f);
        }
        if (stopping && sb_s3_pending (self->s3) == 0)
            break;
        if (sb_s3_run (self->s3, sb_s3_pending (self->s3) ? 100 : 20, s_s3_on_done, &sink) < 0) {
            /* the engine cannot go on: every read still pending fails, so
             * the rank reports it instead of waiting for ever */
            sb_read_result_t res = { .error = -1 };
            snprintf (res.message, sizeof res.message, "S3 engine stopped: curl multi interface failure");
            for (size_t n = sb_s3_pending (self->s3); n > 0; n--)
                if (zsock_send (ctx->done, "b", &res, sizeof res) != 0)
                    break;
            break;
        }
    }
    if (sink.failed_send)
        sb_error ("s3 reader: cannot pass a completion to the rank: %s", zmq_strerror (zmq_errno ()));
    return NULL;
}

static uint8_t *
s_aligned_alloc (size_t size)
{
    void *p = NULL;
    return posix_memalign (&p, SB_READER_DIRECT_ALIGN, size ? size : SB_READER_DIRECT_ALIGN) == 0 ? p : NULL;
}

void
sb_reader_set_direct_io (sb_reader_t *self, int on)
{
    self->odirect = on && !self->s3 && self->storage.type != SB_STORAGE_SYNTHETIC;
}

void
sb_reader_set_residency_sampling (sb_reader_t *self, uint64_t every)
{
    self->residency_every = every;
}

sb_reader_t *
sb_reader_new (const sb_storage_cfg_t *storage, const char *root, size_t threads, size_t buffer_bytes, int verify,
               uint64_t seed, char *err, size_t err_size)
{
    static unsigned long long s_counter;
    sb_reader_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    pthread_once (&s_wake_once, s_wake_install);
    if (pthread_mutex_init (&self->lock, NULL) != 0) {
        snprintf (err, err_size, "cannot create a mutex");
        free (self);
        return NULL;
    }
    snprintf (self->root, sizeof self->root, "%s", root);
    self->storage = *storage;
    if (storage->type == SB_STORAGE_S3) {
        self->s3 = sb_s3_new (storage, (size_t) storage->max_in_flight, err, err_size);
        if (!self->s3) {
            pthread_mutex_destroy (&self->lock);
            free (self);
            return NULL;
        }
        threads = 1;    /* one thread drives every transfer of the rank */
    }
    /* file engine: whole O_DIRECT blocks (reader.odirect may be set later) */
    if (storage->type == SB_STORAGE_FILE)
        buffer_bytes = (buffer_bytes + SB_READER_DIRECT_ALIGN - 1) / SB_READER_DIRECT_ALIGN * SB_READER_DIRECT_ALIGN;
    self->buffer_bytes = buffer_bytes;
    self->verify = verify;
    self->residency_every = 1;
    if (storage->type == SB_STORAGE_SYNTHETIC) {
        /* no threads, no sockets to feed: reads complete in submit */
        if (verify && !(self->inline_buf = malloc (buffer_bytes))) {
            snprintf (err, err_size, "out of memory");
            pthread_mutex_destroy (&self->lock);
            free (self);
            return NULL;
        }
        threads = 0;
    }
    self->seed = seed;
    unsigned long long id = __atomic_add_fetch (&s_counter, 1, __ATOMIC_RELAXED);
    snprintf (self->work_ep, sizeof self->work_ep, "inproc://sb-reader-%d-%llu-work", (int) getpid (), id);
    snprintf (self->done_ep, sizeof self->done_ep, "inproc://sb-reader-%d-%llu-done", (int) getpid (), id);
    self->work = zsock_new (ZMQ_PUSH);
    self->done = zsock_new (ZMQ_PULL);
    if (!self->work || !self->done || zsock_bind (self->work, "%s", self->work_ep) != 0
        || zsock_bind (self->done, "%s", self->done_ep) != 0) {
        snprintf (err, err_size, "cannot create reader sockets: %s", zmq_strerror (zmq_errno ()));
        goto fail;
    }
    zsock_set_sndhwm (self->work, 0);
    zsock_set_rcvhwm (self->done, 0);
    self->threads = calloc (threads, sizeof (pthread_t));
    self->ctxs = calloc (threads, sizeof (s_thread_ctx_t));
    if (!self->threads || !self->ctxs) {
        snprintf (err, err_size, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < threads; i++) {
        s_thread_ctx_t *ctx = &self->ctxs[i];
        ctx->reader = self;
        ctx->work = zsock_new (ZMQ_PULL);
        ctx->done = zsock_new (ZMQ_PUSH);
        /* aligned for O_DIRECT (sb_reader_set_direct_io) */
        ctx->buf = self->s3 ? NULL : s_aligned_alloc (buffer_bytes);
        ctx->expect = verify && !self->s3 ? malloc (buffer_bytes) : NULL;
        if (!ctx->work || !ctx->done || (!self->s3 && (!ctx->buf || (verify && !ctx->expect)))
            || zsock_connect (ctx->work, "%s", self->work_ep) != 0 || zsock_connect (ctx->done, "%s", self->done_ep) != 0) {
            snprintf (err, err_size, "cannot set up reader thread %zu: out of memory or sockets", i);
            s_ctx_free (ctx);
            goto fail;
        }
        zsock_set_sndhwm (ctx->done, 0);
        int rc = pthread_create (&self->threads[i], NULL, self->s3 ? s_s3_thread : s_thread, ctx);
        if (rc != 0) {
            snprintf (err, err_size, "cannot start reader thread: %s", strerror (rc));
            s_ctx_free (ctx);
            goto fail;
        }
        self->nthreads++;
    }
    return self;
fail:
    sb_reader_destroy (&self);
    return NULL;
}

void
sb_reader_stop (sb_reader_t *self)
{
    if (!self || __atomic_load_n (&self->stopping, __ATOMIC_ACQUIRE))
        return;
    s_request_t stop = { .stop = S_STOP };
    __atomic_store_n (&self->stopping, 1, __ATOMIC_RELEASE);
    for (size_t i = 0; i < self->nthreads; i++)
        if (zsock_send (self->work, "b", &stop, sizeof stop) != 0)
            sb_warn ("cannot tell a reader thread to stop: %s", zmq_strerror (zmq_errno ()));
    if (self->s3)
        sb_s3_wakeup (self->s3);
}

/* 1 when thread i is stuck: a file thread in one call for over a second,
 * or any file thread of a reader sb_reader_stalled found stuck. */
static int
s_busy (sb_reader_t *self, size_t i)
{
    const uint64_t second = 1000000000ull;
    if (self->s3)
        return 0;   /* bounded by its own timeouts, woken by sb_s3_wakeup */
    if (self->stuck)
        return 1;
    uint64_t since = __atomic_load_n (&self->ctxs[i].progress_ns, __ATOMIC_ACQUIRE), now = sb_mono_ns ();
    return since != 0 && now >= since && now - since >= second;
}

size_t
sb_reader_join_until (sb_reader_t *self, uint64_t until_ns)
{
    if (!self)
        return 0;
    size_t waiting = 0;
    for (size_t i = 0; i < self->nthreads; i++) {
        s_thread_ctx_t *ctx = &self->ctxs[i];
        if (ctx->joined || ctx->given_up)
            continue;
        uint64_t now = sb_mono_ns ();
        int rc;
        if (until_ns > now) {
            struct timespec until;
            clock_gettime (CLOCK_REALTIME, &until);
            uint64_t ns = (uint64_t) until.tv_nsec + (until_ns - now);
            until.tv_sec += (time_t) (ns / 1000000000ull);
            until.tv_nsec = (long) (ns % 1000000000ull);
            rc = pthread_timedjoin_np (self->threads[i], NULL, &until);
        } else
            rc = pthread_tryjoin_np (self->threads[i], NULL);
        if (rc == 0) {
            ctx->joined = 1;
            s_ctx_free (ctx);
        } else if (ctx->wakes >= 3 && s_busy (self, i))
            ctx->given_up = 1;      /* a second after its third wake */
        else
            waiting++;
    }
    return waiting;
}

void
sb_reader_wake (sb_reader_t *self)
{
    if (!self)
        return;
    for (size_t i = 0; i < self->nthreads; i++) {
        s_thread_ctx_t *ctx = &self->ctxs[i];
        if (ctx->joined || ctx->given_up || ctx->wakes >= 3 || !s_busy (self, i))
            continue;
        if (s_wake_ok)
            pthread_kill (self->threads[i], S_WAKE_SIGNAL);
        ctx->wakes++;
    }
}

void
sb_reader_destroy (sb_reader_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_reader_t *self = *self_p;
    sb_reader_stop (self);
    while (sb_reader_join_until (self, sb_mono_ns () + 1000000000ull) > 0)
        sb_reader_wake (self);
    size_t left = 0;
    for (size_t i = 0; i < self->nthreads; i++)
        if (!self->ctxs[i].joined) {
            pthread_detach (self->threads[i]);
            left++;
        }
    *self_p = NULL;
    if (left) {
        /* a thread that never returned still holds its context and reads
         * the reader's settings: both stay, the process is about to end */
        sb_warn ("%zu reader thread(s) stuck in a read left behind (root %s)", left, self->root);
        return;
    }
    free (self->threads);
    free (self->ctxs);
    free (self->inline_buf);
    sb_s3_destroy (&self->s3);
    zsock_destroy (&self->work);
    zsock_destroy (&self->done);
    pthread_mutex_destroy (&self->lock);
    free (self);
}

int
sb_reader_stalled (sb_reader_t *self, double timeout_s, char *key, size_t key_size, double *for_s)
{
    if (self->s3 || timeout_s <= 0)
        return 0;
    uint64_t now = sb_mono_ns (), limit = (uint64_t) (timeout_s * 1e9);
    for (size_t i = 0; i < self->nthreads; i++) {
        s_thread_ctx_t *ctx = &self->ctxs[i];
        uint64_t since = __atomic_load_n (&ctx->progress_ns, __ATOMIC_ACQUIRE);
        if (since == 0 || now < since || now - since < limit)
            continue;
        pthread_mutex_lock (&self->lock);
        snprintf (key, key_size, "%s", ctx->key);
        pthread_mutex_unlock (&self->lock);
        *for_s = (double) (now - since) / 1e9;
        self->stuck = 1;
        return 1;
    }
    return 0;
}

int
sb_reader_set_dataset (sb_reader_t *self, const sb_dataset_t *ds, char *err, size_t err_size)
{
    if (sb_format_check (ds->format, err, err_size) != 0)
        return -1;
    if (sb_strf (self->ds_prefix, sizeof self->ds_prefix, "%s", ds->prefix) != 0
        || sb_strf (self->ds_format, sizeof self->ds_format, "%s", ds->format) != 0) {
        snprintf (err, err_size, "dataset.file_prefix or dataset.format too long");
        return -1;
    }
    self->ds = *ds;
    self->ds.prefix = self->ds_prefix;
    self->ds.format = self->ds_format;
    self->framed = !sb_format_is_raw (ds->format) && self->storage.type != SB_STORAGE_SYNTHETIC;
    return 0;
}

uint64_t
sb_reader_take_inline (sb_reader_t *self, uint64_t *bytes)
{
    uint64_t n = self->inline_reads;
    *bytes += self->inline_bytes;
    self->inline_reads = self->inline_bytes = 0;
    return n;
}

int
sb_reader_needs_keys (const sb_reader_t *self)
{
    return self->storage.type != SB_STORAGE_SYNTHETIC || self->inline_buf != NULL;
}

int
sb_reader_submit (sb_reader_t *self, const char *key, uint64_t offset, uint64_t length, uint64_t tag, unsigned flags)
{
    if (!key && sb_reader_needs_keys (self))
        return -1;
    if (self->storage.type == SB_STORAGE_SYNTHETIC) {
        if (self->inline_buf) {
            uint64_t seed = sb_dataset_content_seed (self->seed, key);
            for (uint64_t done = 0; done < length;) {
                size_t n = length - done < self->buffer_bytes ? (size_t) (length - done) : self->buffer_bytes;
                sb_content_fill (seed, offset + done, self->inline_buf, n);
                done += n;
            }
        }
        self->inline_reads++;
        self->inline_bytes += length;
        return 0;
    }
    size_t klen = strlen (key);
    size_t size = sizeof (s_request_t) + klen + 1;
    zframe_t *f = zframe_new (NULL, size);
    if (!f)
        return -1;
    s_request_t *rq = (s_request_t *) zframe_data (f);
    memset (rq, 0, sizeof *rq);
    rq->offset = offset;
    rq->length = length;
    rq->tag = tag;
    rq->evict = (flags & SB_READ_EVICT) != 0;
    memcpy (rq->key, key, klen + 1);
    if (zframe_send (&f, self->work, 0) != 0)
        return -1;
    if (self->s3)
        sb_s3_wakeup (self->s3);
    return 0;
}

static int s_recv_stats (sb_reader_t *self, int timeout_ms, sb_reader_endpoint_t *out, size_t max);

int
sb_reader_endpoint_stats (sb_reader_t *self, sb_reader_endpoint_t *out, size_t max)
{
    if (!self->s3)
        return 0;
    uint8_t frame[sizeof (s_request_t) + 1] = { 0 };
    ((s_request_t *) frame)->stop = S_STATS;
    if (zsock_send (self->work, "b", frame, sizeof frame) != 0)
        return -1;
    sb_s3_wakeup (self->s3);
    return s_recv_stats (self, 10000, out, max);
}

int
sb_reader_failure_stats (sb_reader_t *self, sb_reader_endpoint_t *out, size_t max)
{
    return self->s3 ? s_recv_stats (self, 1000, out, max) : 0;
}

/* The engine's reply to S_STATS (or the counters behind a failed read):
 * the next frame on the completion socket, within timeout_ms. */
static int
s_recv_stats (sb_reader_t *self, int timeout_ms, sb_reader_endpoint_t *out, size_t max)
{
    zpoller_t *wait = zpoller_new (self->done, NULL);
    void *ready = wait ? zpoller_wait (wait, timeout_ms) : NULL;
    zpoller_destroy (&wait);
    if (!ready)
        return -1;  /* the engine did not answer in time */
    zframe_t *f = zframe_recv (self->done);
    if (!f || zframe_size (f) != sizeof (s_stats_reply_t)) {
        zframe_destroy (&f);
        return -1;
    }
    const s_stats_reply_t *reply = (const s_stats_reply_t *) zframe_data (f);
    size_t n = reply->count < max ? reply->count : max;
    memcpy (out, reply->endpoints, n * sizeof *out);
    zframe_destroy (&f);
    return (int) n;
}

zsock_t *
sb_reader_completions (sb_reader_t *self)
{
    return self->done;
}

int
sb_reader_take (sb_reader_t *self, sb_read_result_t *result)
{
    zframe_t *f = zframe_recv (self->done);
    if (!f)
        return -1;
    if (zframe_size (f) != sizeof *result) {
        zframe_destroy (&f);
        return -1;
    }
    memcpy (result, zframe_data (f), sizeof *result);
    zframe_destroy (&f);
    return 0;
}

int
sb_reader_try_take (sb_reader_t *self, sb_read_result_t *result)
{
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    if (zmq_msg_recv (&frame, zsock_resolve (self->done), ZMQ_DONTWAIT) < 0) {
        int e = zmq_errno ();
        zmq_msg_close (&frame);
        return e == EAGAIN || e == EINTR ? 1 : -1;
    }
    int rc = -1;
    if (zmq_msg_size (&frame) == sizeof *result && !zmq_msg_more (&frame)) {
        memcpy (result, zmq_msg_data (&frame), sizeof *result);
        rc = 0;
    }
    zmq_msg_close (&frame);
    return rc;
}
