/* reader: storage clients (engine.h) driven by threads, fed through
 * channels (chan.h). Nothing here knows which engine it drives: the engine's
 * capabilities decide how many threads and how deep each client's queue
 * is (see reader.h). */
#include "reader.h"
#include "chan.h"
#include "dataset.h"
#include "engine.h"
#include "format.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct sb_reader {
    sb_storage_cfg_t storage;   /* storage.engine set (sb_reader_new's bridge) */
    unsigned   caps;            /* the engine's SB_ENGINE_* */
    size_t     depth;           /* reads in flight at once per client */
    size_t     queue_limit;     /* reads queued at once per client: depth, and as many
                                 * again waiting for a slot with SB_ENGINE_QUEUE_AHEAD */
    char       root[PATH_MAX];
    size_t     buffer_bytes;
    int        verify;
    uint64_t   residency_every; /* sample 1 read in this many (0: none) */
    uint64_t   seed;
    sb_dataset_t ds;        /* framed formats: how objects are generated */
    char       ds_prefix[256];
    char       ds_format[64];
    int        framed;      /* verify against the format, not raw bytes */
    int        endpoint_stats;  /* per-endpoint counters: one thread answers S_STATS and follows failures with them */
    sb_chan_t **lanes;      /* requests: lane i is thread i's, read in its order (reader.h); owned */
    size_t     nlanes;      /* the threads (1 for an SB_ENGINE_ASYNC engine, 0 for NO_IO) */
    sb_chan_t *done;        /* completions, to the rank (with an fd for its poll loop); owned */
    sb_storage_t *inline_client;    /* SB_ENGINE_NO_IO: reads complete in sb_reader_submit; owned */
    uint64_t   inline_reads;    /* completed, not yet taken */
    uint64_t   inline_bytes;
    int        inline_failed;
    sb_storage_error_t *inline_error;   /* scratch of the inline path; owned */
    pthread_t *threads;
    struct s_thread_ctx *ctxs;
    size_t     nthreads;
    pthread_mutex_t lock;   /* the threads' current keys */
    int        stuck;       /* sb_reader_stalled found a read that does not return */
    int        stopping;    /* sb_reader_stop: an interrupted read gives up (atomic) */
};

typedef enum { S_READ = 0, S_STATS = 2 } s_kind_t;

typedef struct s_thread_ctx {
    sb_reader_t  *reader;
    sb_chan_t    *lane;     /* the requests this thread reads, in their order (the reader's) */
    sb_storage_t *client;   /* owned by the thread while it runs (atomic: sb_reader_set_direct_io) */
    sb_storage_t *retired[2];   /* clients sb_reader_set_direct_io replaced: the thread may still hold
                                 * one for a moment, so they are closed with the thread's */
    uint64_t      progress_ns;  /* sb_mono_ns of the reads' last progress, 0 idle (atomic) */
    char          key[PATH_MAX];    /* the key read last (reader->lock) */
    int           failed_send;  /* a completion could not be passed on: the thread ends */
    sb_chan_msg_t     **flight; /* the requests of the reads in the engine (queued, not completed), so
                                 * that a failure of the engine itself names each read; owned */
    uint64_t           *flight_tag; /* their tags, side by side: a completion's lookup reads one array */
    size_t              nflight;
    sb_read_result_t   *res;    /* scratch: the completion being sent; owned */
    sb_storage_error_t *error;  /* scratch: why a queue or getevents failed; owned */
    int           joined;   /* teardown: the thread ended and was joined */
    int           wakes;    /* teardown: wake signals sent (sb_reader_wake) */
    int           given_up; /* teardown: still stuck after the last wake */
} s_thread_ctx_t;

/* A thread's reads made progress (one started, or a call returned). */
static void
s_progress (s_thread_ctx_t *ctx, int busy)
{
    __atomic_store_n (&ctx->progress_ns, busy ? sb_mono_ns () : 0, __ATOMIC_RELEASE);
}

static sb_storage_t *
s_client (s_thread_ctx_t *ctx)
{
    return __atomic_load_n (&ctx->client, __ATOMIC_ACQUIRE);
}

/* A thread stuck in a call that may never return (a FIFO, a lease, a hung
 * NFS or FUSE mount) is woken by this signal at teardown: its handler does
 * nothing and is installed without SA_RESTART, so an interruptible wait
 * ends with EINTR and the engine, woken by sb_storage_wakeup, gives up the
 * read. (pthread_cancel would do the same but unwinds the stack under the
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
    uint8_t  kind;          /* s_kind_t */
    uint8_t  evict;         /* SB_READ_EVICT: drop the file's pages before reading */
    uint8_t  tail;          /* SB_READ_PARQUET_TAIL: the bytes must be "PAR1" */
    char     key[];
} s_request_t;

/* Reply of a thread to S_STATS, on the completion socket. */
typedef struct {
    size_t               count;
    sb_reader_endpoint_t endpoints[SB_MAX_ENDPOINTS];
} s_stats_reply_t;

/* ---- what a read is compared with ---- */

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
s_format_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
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
s_format_free (void *ctx)
{
    sb_format_close (ctx);
    free (ctx);
}

/* The raw content stream of one object (sb_content_fill). */
static void
s_content_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    sb_content_fill (*(const uint64_t *) ctx, offset, buf, len);
}

/* Parquet's magic, expected over [*at, *at + 4) (zeros elsewhere, which
 * a read of only those 4 bytes never compares). */
static void
s_magic_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    uint64_t at = *(const uint64_t *) ctx;
    for (size_t k = 0; k < len; k++) {
        uint64_t o = offset + k;
        buf[k] = o >= at && o - at < 4 ? (uint8_t) "PAR1"[o - at] : 0;
    }
}

/* Set io's expected bytes to parquet's magic at its offset. Returns 0, or
 * -1 with why set (out of memory). */
static int
s_expect_magic (const sb_reader_t *self, const char *key, sb_io_t *io, char *why, size_t why_size)
{
    uint64_t *at = malloc (sizeof *at);
    if (!at) {
        snprintf (why, why_size, "parquet %s%s: out of memory", self->root, key);
        return -1;
    }
    *at = io->offset;
    io->expect = s_magic_fill;
    io->expect_ctx = at;
    io->expect_free = free;
    io->expect_size = UINT64_MAX;
    io->expect_name = "parquet";
    return 0;
}

/* Set io's expected bytes for key (verification on). Returns 0, or -1 with
 * why set (out of memory, or a framed object whose generator cannot be
 * opened). */
static int
s_expect (const sb_reader_t *self, const char *key, sb_io_t *io, char *why, size_t why_size)
{
    if (self->framed) {
        sb_format_obj_t *obj = malloc (sizeof *obj);
        if (!obj) {
            snprintf (why, why_size, "verify %s%s: out of memory", self->root, key);
            return -1;
        }
        if (s_open_object (self, key, obj, why, why_size) != 0) {
            free (obj);
            return -1;
        }
        io->expect = s_format_fill;
        io->expect_ctx = obj;
        io->expect_free = s_format_free;
        io->expect_size = obj->size;
        io->expect_name = obj->ops->name;
        return 0;
    }
    uint64_t *seed = malloc (sizeof *seed);
    if (!seed) {
        snprintf (why, why_size, "verify %s%s: out of memory", self->root, key);
        return -1;
    }
    *seed = sb_dataset_content_seed (self->seed, key);
    io->expect = s_content_fill;
    io->expect_ctx = seed;
    io->expect_free = free;
    io->expect_size = UINT64_MAX;
    return 0;
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

/* The read rq asks for, as an engine read (expectations not set). */
static sb_io_t
s_io (const sb_reader_t *self, const char *key, uint64_t offset, uint64_t length, uint64_t tag, int evict)
{
    sb_io_t io = { .tag = tag, .key = key, .offset = offset, .length = length, .expect_size = UINT64_MAX };
    if (self->caps & SB_ENGINE_PAGE_CACHE) {
        if (evict)
            io.flags |= SB_IO_EVICT;
        if (key && s_residency_sampled (self->residency_every, key, offset))
            io.flags |= SB_IO_RESIDENCY;
    }
    return io;
}

/* ---- the threads ---- */

/* A completion as the rank takes it. */
static void
s_result (const sb_reader_t *self, const sb_io_done_t *d, sb_read_result_t *res)
{
    memset (res, 0, sizeof *res);
    res->bytes = d->bytes;
    res->latency_ns = d->latency_ns;
    /* the engine's latency runs from the moment it issued the read: the
     * read was in flight over [issued_s, issued_s + latency] */
    res->issued_s = sb_now () - (double) d->latency_ns / 1e9;
    res->tag = d->tag;
    res->resident_bytes = d->resident_bytes;
    res->checked_bytes = d->checked_bytes;
    if (!d->failed)
        return;
    const sb_storage_error_t *e = &d->error;
    res->error = e->os_errno ? e->os_errno : -1;
    snprintf (res->message, sizeof res->message, "%s", e->text);
    snprintf (res->target, sizeof res->target, "%s", e->target);
    if (self->caps & SB_ENGINE_ENDPOINTS)
        snprintf (res->endpoint, sizeof res->endpoint, "%s", e->where);
    res->http_status = e->status;
    snprintf (res->service_code, sizeof res->service_code, "%s", e->code);
    res->library_code = e->lib_code;
    res->attempt = e->attempt;
}

/* The client's per-endpoint counters, to the rank. Returns 0, or -1 when
 * the reply could not be sent (the thread ends). */
static int
s_stats_reply (s_thread_ctx_t *ctx)
{
    s_stats_reply_t *reply = calloc (1, sizeof *reply);
    sb_storage_stats_t *st = calloc (SB_MAX_ENDPOINTS, sizeof *st);
    if (!reply || !st) {
        free (reply);
        free (st);
        return sb_chan_push (ctx->reader->done, "", 0, 0);
    }
    size_t n = sb_storage_stats (s_client (ctx), st, SB_MAX_ENDPOINTS);
    for (size_t i = 0; i < n; i++) {
        sb_reader_endpoint_t *out = &reply->endpoints[reply->count++];
        snprintf (out->endpoint, sizeof out->endpoint, "%s", st[i].where);
        out->requests = st[i].requests;
        out->bytes = st[i].bytes;
        out->errors = st[i].errors;
        out->retries = st[i].retries;
        out->latency = st[i].latency;
    }
    int rc = sb_chan_push (ctx->reader->done, reply, sizeof *reply, 0);
    free (reply);
    free (st);
    return rc;
}

static void
s_send (s_thread_ctx_t *ctx, const sb_read_result_t *res)
{
    /* a failure wakes the rank's loop at once; a read that went well only
     * when it brings what the loop waits for (sb_reader_arm) */
    if (sb_chan_push (ctx->reader->done, res, sizeof *res, res->error ? SB_CHAN_URGENT : 0) != 0)
        ctx->failed_send = 1;
}

/* The read of tag left the engine: its request is no longer in flight. */
static void
s_flight_end (s_thread_ctx_t *ctx, uint64_t tag)
{
    for (size_t i = 0; i < ctx->nflight; i++)
        if (ctx->flight_tag[i] == tag) {
            sb_chan_msg_free (ctx->flight[i]);
            ctx->nflight--;
            ctx->flight[i] = ctx->flight[ctx->nflight];
            ctx->flight_tag[i] = ctx->flight_tag[ctx->nflight];
            return;
        }
}

static void
s_on_done (void *arg, const sb_io_done_t *d)
{
    s_thread_ctx_t *ctx = arg;
    s_flight_end (ctx, d->tag);
    s_result (ctx->reader, d, ctx->res);
    s_send (ctx, ctx->res);
    /* right behind a read the engine failed: sb_reader_failure_stats (not
     * behind one that failed before it reached the engine) */
    if (d->failed && !ctx->failed_send && ctx->reader->endpoint_stats && s_stats_reply (ctx) != 0)
        ctx->failed_send = 1;
}

/* A read that failed before it reached the engine. */
static void
s_fail_read (s_thread_ctx_t *ctx, uint64_t tag, const char *key, int error, const char *message)
{
    sb_read_result_t *res = ctx->res;
    memset (res, 0, sizeof *res);
    res->tag = tag;
    res->error = error;
    snprintf (res->message, sizeof res->message, "%s", message);
    snprintf (res->target, sizeof res->target, "%s", key);
    s_send (ctx, res);
}

/* Hand rq to the thread's client (a completion follows in any case).
 * Returns 1 when the engine took it (it is in flight), 0 when it failed
 * here (its completion is sent). */
static int
s_queue (s_thread_ctx_t *ctx, const s_request_t *rq)
{
    sb_reader_t *self = ctx->reader;
    sb_io_t io = s_io (self, rq->key, rq->offset, rq->length, rq->tag, rq->evict);
    char why[1024];
    if (rq->tail ? s_expect_magic (self, rq->key, &io, why, sizeof why) != 0
                 : self->verify && s_expect (self, rq->key, &io, why, sizeof why) != 0) {
        s_fail_read (ctx, rq->tag, rq->key, -1, why);
        return 0;
    }
    pthread_mutex_lock (&self->lock);
    snprintf (ctx->key, sizeof ctx->key, "%s", rq->key);
    pthread_mutex_unlock (&self->lock);
    sb_storage_error_t *e = ctx->error;
    if (sb_storage_queue (s_client (ctx), &io, e) != 0) {
        s_fail_read (ctx, rq->tag, rq->key, e->os_errno ? e->os_errno : -1, e->text);
        return 0;
    }
    return 1;
}

/* The engine failed as a whole (getevents): every read in flight fails,
 * each naming its key, offset and length, the engine, the operation and
 * the errno, so the rank reports the reads it lost instead of waiting for
 * ever (or of an error that names no read). */
static void
s_fail_in_flight (s_thread_ctx_t *ctx, size_t pending)
{
    const sb_storage_error_t *e = ctx->error;
    char *why = malloc (sizeof ctx->res->message);
    for (size_t i = 0; i < ctx->nflight && !ctx->failed_send; i++) {
        const s_request_t *rq = (const s_request_t *) ctx->flight[i]->data;
        if (why)
            snprintf (why, sizeof ctx->res->message, "read %s%s at offset %llu (%llu bytes) was in flight when the %s"
                      " engine's %s failed (errno %d%s%s): %s", ctx->reader->root, rq->key,
                      (unsigned long long) rq->offset, (unsigned long long) rq->length,
                      e->engine[0] ? e->engine : ctx->reader->storage.engine, e->op[0] ? e->op : "getevents",
                      e->os_errno, e->os_errno ? ", " : "", e->os_errno ? strerror (e->os_errno) : "", e->text);
        s_fail_read (ctx, rq->tag, rq->key, e->os_errno ? e->os_errno : -1, why ? why : e->text);
    }
    /* reads the engine holds that were never seen here (none): as before */
    for (size_t k = ctx->nflight; k < pending && !ctx->failed_send; k++)
        s_fail_read (ctx, 0, "", e->os_errno ? e->os_errno : -1, e->text);
    free (why);
}

/* One thread, one client: take requests while the client has room (waiting
 * for one only when nothing is in flight), move reads along with
 * getevents, pass completions on. A client of depth 1 performs its read in
 * getevents (a pread pool); a deeper one keeps many in flight, and
 * sb_reader_submit wakes its wait when a request arrives. The client is
 * made by sb_reader_new, so a failure is reported there; the thread takes
 * it over. */
static void *
s_thread (void *arg)
{
    s_thread_ctx_t *ctx = arg;
    sb_reader_t *self = ctx->reader;
    int stopping = 0;
    while (!ctx->failed_send) {
        size_t pending;
        while (!stopping && !ctx->failed_send && (pending = sb_storage_pending (s_client (ctx))) < self->queue_limit) {
            sb_chan_msg_t *f = NULL;
            /* nothing to move along: wait for work (idle, also after reads
             * that failed as they were queued); else only take what is
             * there. A wait ends empty only when sb_reader_stop closed the
             * requests (after the ones queued before it) */
            if (pending == 0)
                s_progress (ctx, 0);
            if (sb_chan_take (ctx->lane, &f, pending == 0 ? -1 : 0) != 0) {
                if (pending == 0)
                    stopping = 1;
                break;
            }
            const s_request_t *rq = (const s_request_t *) f->data;
            if (f->size < sizeof (s_request_t) + 1)
                stopping = 1;   /* not a request: cannot happen, ends the thread rather than guess */
            else if (rq->kind == S_STATS) {
                if (s_stats_reply (ctx) != 0)
                    ctx->failed_send = 1;
            }
            else {
                /* an engine may open the file as it queues the read (uring):
                 * a call that may not return, watched as the reads in
                 * flight are (a thread idle until now is busy from here) */
                if (__atomic_load_n (&ctx->progress_ns, __ATOMIC_ACQUIRE) == 0)
                    s_progress (ctx, 1);
                if (s_queue (ctx, rq) && ctx->nflight < self->queue_limit) {
                    ctx->flight_tag[ctx->nflight] = rq->tag;
                    ctx->flight[ctx->nflight++] = f;   /* freed as it completes */
                    f = NULL;
                }
            }
            sb_chan_msg_free (f);
        }
        sb_storage_t *client = s_client (ctx);
        if (sb_storage_pending (client) == 0) {
            if (stopping)
                break;
            continue;
        }
        /* a client of depth 1 performs its read in getevents: progress is
         * each call; one with many reads in flight (self->depth > 1) waits
         * in getevents in slices, so its progress is its last completion
         * (the engine stamps progress_ns) or the moment reads became
         * pending, never a slice that completed nothing (a hung read would
         * then never look stalled); an object store's requests are bounded
         * by their own timeouts and never look stalled (reader.h) */
        int many = self->depth > 1 && !(self->caps & SB_ENGINE_OBJECTS);
        if (!many || __atomic_load_n (&ctx->progress_ns, __ATOMIC_ACQUIRE) == 0)
            s_progress (ctx, 1);
        int n = sb_storage_getevents (client, 100, s_on_done, ctx, ctx->error);
        if (!many || n > 0 || sb_storage_pending (client) == 0)
            s_progress (ctx, sb_storage_pending (client) > 0);
        if (n < 0) {
            s_fail_in_flight (ctx, sb_storage_pending (client));
            break;
        }
    }
    if (ctx->failed_send)
        sb_error ("reader: cannot pass a completion to the rank: out of memory");
    return NULL;
}

static void
s_ctx_free (s_thread_ctx_t *ctx)
{
    sb_storage_close (&ctx->client);
    for (size_t i = 0; i < sizeof ctx->retired / sizeof ctx->retired[0]; i++)
        sb_storage_close (&ctx->retired[i]);
    for (size_t i = 0; i < ctx->nflight; i++)
        sb_chan_msg_free (ctx->flight[i]);
    free (ctx->flight);
    free (ctx->flight_tag);
    ctx->flight_tag = NULL;
    free (ctx->res);
    free (ctx->error);
    ctx->flight = NULL;
    ctx->nflight = 0;
    ctx->res = NULL;
    ctx->error = NULL;
}

/* ---- the engine ---- */

/* sb_storage_open_t.stop of an object store's client: sb_reader_stop. */
static int
s_stopping (void *arg)
{
    const sb_reader_t *self = arg;
    return __atomic_load_n (&self->stopping, __ATOMIC_ACQUIRE);
}

/* Open a client of the reader's engine for one thread. NULL with err set
 * (and *os_errno, when not NULL: the engine's errno, 0 when none). */
static sb_storage_t *
s_open_client (sb_reader_t *self, uint64_t *progress_ns, char *err, size_t err_size, int *os_errno)
{
    sb_storage_open_t how = { .root = self->root, .rank = 0, .depth = self->depth,
                              .buffer_bytes = self->buffer_bytes, .progress_ns = progress_ns };
    /* an object store's requests in flight end when the reader stops (an
     * ABORT, a signal): not at their timeouts, which the join would wait
     * out; a folder's reads are woken by the wake signal instead */
    if (self->caps & SB_ENGINE_OBJECTS) {
        how.stop = s_stopping;
        how.stop_arg = self;
    }
    sb_storage_error_t *e = malloc (sizeof *e);
    if (os_errno)
        *os_errno = 0;
    if (!e) {
        snprintf (err, err_size, "out of memory");
        if (os_errno)
            *os_errno = ENOMEM;
        return NULL;
    }
    /* the caller gave the rank's storage (sb_storage_for_rank): rank 0 of it */
    sb_storage_t *client = sb_storage_open (&self->storage, &how, e);
    if (!client) {
        snprintf (err, err_size, "%s", e->text);
        if (os_errno)
            *os_errno = e->os_errno;
    }
    free (e);
    return client;
}

int
sb_reader_set_direct_io (sb_reader_t *self, int on, char *err, size_t err_size)
{
    /* an engine with many reads in flight per client has its own O_DIRECT
     * option (storage.uring.direct): the depth-1 direct engine cannot take
     * its place */
    if (!on || !(self->caps & SB_ENGINE_FOLDER) || (self->caps & (SB_ENGINE_DIRECT | SB_ENGINE_ASYNC)))
        return 0;
    const sb_engine_ops_t *ops = sb_engine_of (&self->storage);
    const sb_engine_ops_t *direct = ops && ops->direct_engine ? sb_engine_find (ops->direct_engine) : NULL;
    const unsigned want = SB_ENGINE_DIRECT | SB_ENGINE_FOLDER;
    if (!direct || (direct->caps & want) != want) {
        snprintf (err, err_size, "reader.odirect: the %s engine reading %s has no O_DIRECT engine%s%s%s built into"
                  " this shardbench: its reads would go through the page cache", self->storage.engine, self->root,
                  ops && ops->direct_engine ? " (" : "", ops && ops->direct_engine ? ops->direct_engine : "",
                  ops && ops->direct_engine ? ")" : "");
        return -1;
    }
    /* called before the first read: each thread gets a client of the
     * direct engine in place of its own; a thread may still look at the
     * old one's pending count for a moment, so that one is kept (retired)
     * and closed with the thread's */
    for (size_t i = 0; i < self->nthreads; i++) {
        s_thread_ctx_t *ctx = &self->ctxs[i];
        size_t slot = 0;
        while (slot < sizeof ctx->retired / sizeof ctx->retired[0] && ctx->retired[slot])
            slot++;
        if (slot == sizeof ctx->retired / sizeof ctx->retired[0]) {
            snprintf (err, err_size, "reader.odirect: the engine reading %s was switched too often", self->root);
            return -1;
        }
    }
    /* every new client first: a failure leaves the reader as it was */
    sb_storage_cfg_t was = self->storage;
    snprintf (self->storage.engine, sizeof self->storage.engine, "%s", direct->name);
    sb_storage_t **fresh = calloc (self->nthreads ? self->nthreads : 1, sizeof *fresh);
    if (!fresh)
        snprintf (err, err_size, "reader.odirect: out of memory for the %s engine's clients reading %s", direct->name,
                  self->root);
    for (size_t i = 0; fresh && i < self->nthreads; i++) {
        char why[1024];
        int os_errno;
        if (!(fresh[i] = s_open_client (self, &self->ctxs[i].progress_ns, why, sizeof why, &os_errno))) {
            snprintf (err, err_size, "reader.odirect: cannot open a client of the %s engine for %s: %s (errno %d%s%s)",
                      direct->name, self->root, why, os_errno, os_errno ? ", " : "",
                      os_errno ? strerror (os_errno) : "");
            for (size_t k = 0; k < i; k++)
                sb_storage_close (&fresh[k]);
            free (fresh);
            fresh = NULL;
        }
    }
    if (!fresh) {
        self->storage = was;
        return -1;
    }
    for (size_t i = 0; i < self->nthreads; i++) {
        s_thread_ctx_t *ctx = &self->ctxs[i];
        size_t slot = 0;
        while (ctx->retired[slot])
            slot++;
        ctx->retired[slot] = __atomic_exchange_n (&ctx->client, fresh[i], __ATOMIC_ACQ_REL);
    }
    free (fresh);
    self->caps = direct->caps;
    return 0;
}

void
sb_reader_set_residency_sampling (sb_reader_t *self, uint64_t every)
{
    self->residency_every = every;
}

/* Reads in flight per loader thread: DLIO's iterable readers' depth
 * (storage.loader_depth, lib/dataset/loader_depth.h), else 1. */
static size_t
s_per_lane (const sb_storage_cfg_t *cfg)
{
    return cfg->loader_depth ? (size_t) cfg->loader_depth : 1;
}

/* The depth of one client of an engine that keeps many reads in flight:
 * the engine's own option "iodepth" when it is set; else, where DLIO's
 * iterable readers keep many reads in flight per loader worker, threads x
 * that depth (DLIO's reads in flight per rank); else, for an object store,
 * storage.max_in_flight (requests per rank); else threads (reader.read_threads:
 * DLIO's loader threads, each with one read in flight, so a local ring
 * keeps as many reads in flight as DLIO does). */
static size_t
s_async_depth (const sb_storage_cfg_t *cfg, unsigned caps, size_t threads)
{
    const char *v = sb_storage_opt (cfg, "iodepth");
    char *end;
    unsigned long long d = v ? strtoull (v, &end, 10) : 0;
    if (v && *v && !*end && d > 0)
        return (size_t) d;
    if (cfg->loader_depth)
        return (threads ? threads : 1) * s_per_lane (cfg);
    if (!(caps & (SB_ENGINE_OBJECTS | SB_ENGINE_ENDPOINTS)))
        return threads ? threads : 1;
    return cfg->max_in_flight ? (size_t) cfg->max_in_flight : 1;
}

size_t
sb_reader_reads_in_flight (const sb_storage_cfg_t *storage, size_t threads)
{
    unsigned caps = sb_storage_caps (storage);
    if (caps & SB_ENGINE_NO_IO)
        return 0;
    if (caps & SB_ENGINE_ASYNC)
        return s_async_depth (storage, caps, threads);
    return (threads ? threads : 1) * s_per_lane (storage);
}

sb_reader_t *
sb_reader_new (const sb_storage_cfg_t *storage, const char *root, size_t threads, size_t buffer_bytes, int verify,
               uint64_t seed, char *err, size_t err_size)
{
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
    const sb_engine_ops_t *ops = sb_engine_of (&self->storage);
    if (!ops) {
        snprintf (err, err_size, "storage engine '%s' is not built into this shardbench", self->storage.engine);
        pthread_mutex_destroy (&self->lock);
        free (self);
        return NULL;
    }
    self->caps = ops->caps;
    self->buffer_bytes = buffer_bytes;
    self->verify = verify;
    self->residency_every = 1;
    self->seed = seed;
    /* the rule (reader.h): no I/O, no threads; a client that keeps many
     * reads in flight, one thread; else a pool of depth-1 clients */
    if (self->caps & SB_ENGINE_NO_IO) {
        threads = 0;
        self->depth = 1;
        self->inline_client = s_open_client (self, NULL, err, err_size, NULL);
        if (self->inline_client && !(self->inline_error = malloc (sizeof *self->inline_error))) {
            snprintf (err, err_size, "out of memory");
            sb_storage_close (&self->inline_client);
        }
        if (!self->inline_client) {
            pthread_mutex_destroy (&self->lock);
            free (self);
            return NULL;
        }
    }
    else if (self->caps & SB_ENGINE_ASYNC) {
        self->depth = s_async_depth (&self->storage, self->caps, threads);
        threads = 1;
    }
    else {
        threads = threads ? threads : 1;
        self->depth = 1;
    }
    /* a pool's lane (a loader thread) has as many depth-1 clients as DLIO's
     * worker keeps reads in flight (its prefetch_workers threads): they
     * take the lane's reads in its order */
    size_t nlanes = threads, per_lane = 1;
    if (!(self->caps & (SB_ENGINE_NO_IO | SB_ENGINE_ASYNC))) {
        per_lane = s_per_lane (&self->storage);
        threads = nlanes * per_lane;
    }
    /* an engine that keeps queued reads waiting without starting them gets
     * a depth more: the next read is there when one ends, and the engine
     * starts it in the same getevents */
    self->queue_limit = (self->caps & SB_ENGINE_QUEUE_AHEAD) ? 2 * self->depth : self->depth;
    self->endpoint_stats = (self->caps & SB_ENGINE_ENDPOINTS) && threads == 1;
    self->lanes = calloc (nlanes ? nlanes : 1, sizeof *self->lanes);
    if (!self->lanes || !(self->done = sb_chan_new (1))) {
        snprintf (err, err_size, "cannot create the reader's queues: %s", self->lanes ? strerror (errno) : "out of memory");
        goto fail;
    }
    for (; self->nlanes < nlanes; self->nlanes++)
        if (!(self->lanes[self->nlanes] = sb_chan_new (0))) {
            snprintf (err, err_size, "cannot create the reader's queues: %s", strerror (errno));
            goto fail;
        }
    self->threads = calloc (threads ? threads : 1, sizeof (pthread_t));
    self->ctxs = calloc (threads ? threads : 1, sizeof (s_thread_ctx_t));
    if (!self->threads || !self->ctxs) {
        snprintf (err, err_size, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < threads; i++) {
        s_thread_ctx_t *ctx = &self->ctxs[i];
        ctx->reader = self;
        ctx->lane = self->lanes[i / per_lane];
        ctx->res = malloc (sizeof *ctx->res);
        ctx->error = malloc (sizeof *ctx->error);
        ctx->flight = calloc (self->queue_limit, sizeof *ctx->flight);
        ctx->flight_tag = calloc (self->queue_limit, sizeof *ctx->flight_tag);
        if (!ctx->res || !ctx->error || !ctx->flight || !ctx->flight_tag) {
            snprintf (err, err_size, "cannot set up reader thread %zu: out of memory", i);
            s_ctx_free (ctx);
            goto fail;
        }
        if (!(ctx->client = s_open_client (self, &ctx->progress_ns, err, err_size, NULL))) {
            s_ctx_free (ctx);
            goto fail;
        }
        int rc = pthread_create (&self->threads[i], NULL, s_thread, ctx);
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
    __atomic_store_n (&self->stopping, 1, __ATOMIC_RELEASE);
    for (size_t i = 0; i < self->nlanes; i++)   /* the threads take what is queued, then end */
        sb_chan_close (self->lanes[i]);
    /* a thread waiting in its engine looks at its requests; one stuck in a
     * read gives it up when the wake signal interrupts it */
    for (size_t i = 0; i < self->nthreads; i++)
        sb_storage_wakeup (s_client (&self->ctxs[i]));
}

/* 1 when thread i is stuck: in one call for over a second, or any thread
 * of a reader sb_reader_stalled found stuck. A thread whose engine returns
 * from getevents every 100 ms (an engine bounded by its own timeouts) is
 * never stuck. */
static int
s_busy (sb_reader_t *self, size_t i)
{
    const uint64_t second = 1000000000ull;
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
    sb_storage_close (&self->inline_client);
    free (self->inline_error);
    for (size_t i = 0; i < self->nlanes; i++)
        sb_chan_destroy (&self->lanes[i]);
    free (self->lanes);
    sb_chan_destroy (&self->done);
    pthread_mutex_destroy (&self->lock);
    free (self);
}

int
sb_reader_stalled (sb_reader_t *self, double timeout_s, char *key, size_t key_size, double *for_s)
{
    if (timeout_s <= 0)
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
    /* nothing stored: a read generates the raw content stream */
    self->framed = !sb_format_is_raw (ds->format) && !(self->caps & SB_ENGINE_NO_IO);
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
    return !(self->caps & SB_ENGINE_NO_IO) || self->verify;
}

int
sb_reader_reads_free (const sb_reader_t *self)
{
    return self->inline_client != NULL && !self->verify && (self->caps & SB_ENGINE_READS_FREE);
}

static void
s_inline_done (void *arg, const sb_io_done_t *d)
{
    sb_reader_t *self = arg;
    if (d->failed) {
        sb_error ("reader: %s", d->error.text);
        self->inline_failed = 1;
        return;
    }
    self->inline_reads++;
    self->inline_bytes += d->bytes;
}

/* SB_ENGINE_NO_IO: the read completes here, in the caller's thread. */
static int
s_submit_inline (sb_reader_t *self, const char *key, uint64_t offset, uint64_t length, uint64_t tag)
{
    sb_io_t io = s_io (self, key, offset, length, tag, 0);
    char why[1024];
    if (self->verify && s_expect (self, key, &io, why, sizeof why) != 0) {
        sb_error ("reader: %s", why);
        return -1;
    }
    sb_storage_error_t *e = self->inline_error;
    int rc = sb_storage_queue (self->inline_client, &io, e) == 0
             && sb_storage_getevents (self->inline_client, 0, s_inline_done, self, e) >= 0 ? 0 : -1;
    if (rc != 0)
        sb_error ("reader: %s", e->text);
    if (self->inline_failed) {
        self->inline_failed = 0;
        return -1;
    }
    return rc;
}

int
sb_reader_submit (sb_reader_t *self, const char *key, uint64_t offset, uint64_t length, uint64_t tag, uint64_t lane,
                  unsigned flags)
{
    if (!key && sb_reader_needs_keys (self))
        return -1;
    if (self->inline_client)
        return s_submit_inline (self, key, offset, length, tag);
    size_t klen = strlen (key);
    size_t size = sizeof (s_request_t) + klen + 1;
    _Alignas (s_request_t) unsigned char stack[sizeof (s_request_t) + 1024];
    s_request_t *rq = size <= sizeof stack ? (s_request_t *) stack : malloc (size);
    if (!rq)
        return -1;
    memset (rq, 0, sizeof *rq);
    rq->offset = offset;
    rq->length = length;
    rq->tag = tag;
    rq->evict = (flags & SB_READ_EVICT) != 0;
    rq->tail = (flags & SB_READ_PARQUET_TAIL) != 0;
    memcpy (rq->key, key, klen + 1);
    int rc = self->nlanes ? sb_chan_push (self->lanes[lane % self->nlanes], rq, size, 0) : -1;
    if ((unsigned char *) rq != stack)
        free (rq);
    if (rc != 0)
        return -1;
    /* a client with reads in flight waits in its engine, not on the socket */
    if (self->depth > 1)
        sb_storage_wakeup (s_client (&self->ctxs[0]));
    return 0;
}

static int s_recv_stats (sb_reader_t *self, int timeout_ms, sb_reader_endpoint_t *out, size_t max);

int
sb_reader_endpoint_stats (sb_reader_t *self, sb_reader_endpoint_t *out, size_t max)
{
    if (!self->endpoint_stats)
        return 0;
    uint8_t frame[sizeof (s_request_t) + 1] = { 0 };
    ((s_request_t *) frame)->kind = S_STATS;
    if (sb_chan_push (self->lanes[0], frame, sizeof frame, 0) != 0)
        return -1;
    sb_storage_wakeup (s_client (&self->ctxs[0]));
    return s_recv_stats (self, 10000, out, max);
}

int
sb_reader_failure_stats (sb_reader_t *self, sb_reader_endpoint_t *out, size_t max)
{
    return self->endpoint_stats ? s_recv_stats (self, 1000, out, max) : 0;
}

/* The engine's reply to S_STATS (or the counters behind a failed read):
 * the next message of the completions, within timeout_ms. */
static int
s_recv_stats (sb_reader_t *self, int timeout_ms, sb_reader_endpoint_t *out, size_t max)
{
    sb_chan_msg_t *f;
    if (sb_chan_take (self->done, &f, timeout_ms) != 0)
        return -1;  /* the engine did not answer in time */
    if (f->size != sizeof (s_stats_reply_t)) {
        sb_chan_msg_free (f);
        return -1;
    }
    const s_stats_reply_t *reply = (const s_stats_reply_t *) f->data;
    size_t n = reply->count < max ? reply->count : max;
    memcpy (out, reply->endpoints, n * sizeof *out);
    sb_chan_msg_free (f);
    return (int) n;
}

int
sb_reader_completion_fd (const sb_reader_t *self)
{
    return sb_chan_fd (self->done);
}

int
sb_reader_arm (sb_reader_t *self, size_t want)
{
    return sb_chan_arm (self->done, want);
}

/* The next completion into *result within timeout_ms (negative: for
 * ever). 0, 1 when none came, -1 when it was not a completion. */
static int
s_take (sb_reader_t *self, sb_read_result_t *result, int timeout_ms)
{
    sb_chan_msg_t *f;
    if (sb_chan_take (self->done, &f, timeout_ms) != 0)
        return 1;
    int rc = -1;
    if (f->size == sizeof *result) {
        memcpy (result, f->data, sizeof *result);
        rc = 0;
    }
    sb_chan_msg_free (f);
    return rc;
}

int
sb_reader_take (sb_reader_t *self, sb_read_result_t *result)
{
    return s_take (self, result, -1) == 0 ? 0 : -1;
}

int
sb_reader_try_take (sb_reader_t *self, sb_read_result_t *result)
{
    return s_take (self, result, 0);
}
