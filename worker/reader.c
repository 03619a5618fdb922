/* reader: pread thread pool fed over inproc sockets. */
#include "reader.h"
#include "dataset.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sb_reader {
    char       root[PATH_MAX];
    size_t     buffer_bytes;
    int        verify;
    uint64_t   seed;
    char       work_ep[128];
    char       done_ep[128];
    zsock_t   *work;        /* PUSH, bound */
    zsock_t   *done;        /* PULL, bound */
    pthread_t *threads;
    struct s_thread_ctx *ctxs;
    size_t     nthreads;
};

typedef struct {
    uint64_t offset;
    uint64_t length;
    uint8_t  stop;
    char     key[];
} s_request_t;

static void
s_read_one (sb_reader_t *self, const s_request_t *rq, uint8_t *buf, uint8_t *expect, sb_read_result_t *res)
{
    char path[PATH_MAX];
    memset (res, 0, sizeof *res);
    uint64_t t0 = sb_mono_ns ();
    if (sb_strf (path, sizeof path, "%s%s", self->root, rq->key) != 0) {
        res->error = ENAMETOOLONG;
        snprintf (res->message, sizeof res->message, "open %s%s: path too long", self->root, rq->key);
        return;
    }
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        res->error = errno;
        snprintf (res->message, sizeof res->message, "open %s: %s", path, strerror (errno));
        return;
    }
    uint64_t content_seed = self->verify ? sb_dataset_content_seed (self->seed, rq->key) : 0;
    uint64_t done = 0;
    while (done < rq->length) {
        size_t want = rq->length - done < self->buffer_bytes ? (size_t) (rq->length - done) : self->buffer_bytes;
        ssize_t n = pread (fd, buf, want, (off_t) (rq->offset + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            res->error = errno;
            snprintf (res->message, sizeof res->message, "read %s at offset %llu: %s", path,
                      (unsigned long long) (rq->offset + done), strerror (errno));
            break;
        }
        if (n == 0) {
            res->error = -1;
            snprintf (res->message, sizeof res->message,
                      "short read %s: file ends at offset %llu, expected %llu bytes from offset %llu", path,
                      (unsigned long long) (rq->offset + done), (unsigned long long) rq->length,
                      (unsigned long long) rq->offset);
            break;
        }
        if (self->verify) {
            sb_content_fill (content_seed, rq->offset + done, expect, (size_t) n);
            if (memcmp (buf, expect, (size_t) n) != 0) {
                size_t at = 0;
                while (at < (size_t) n && buf[at] == expect[at])
                    at++;
                res->error = -1;
                snprintf (res->message, sizeof res->message, "verify %s: byte %llu differs from the generator",
                          path, (unsigned long long) (rq->offset + done + at));
                done += (uint64_t) n;
                break;
            }
        }
        done += (uint64_t) n;
    }
    close (fd);
    res->bytes = done;
    res->latency_ns = sb_mono_ns () - t0;
}

typedef struct s_thread_ctx {
    sb_reader_t *reader;
    zsock_t     *work;      /* PULL, connected; owned by the thread */
    zsock_t     *done;      /* PUSH, connected; owned by the thread */
    uint8_t     *buf;       /* owned by the thread */
    uint8_t     *expect;    /* owned by the thread; NULL unless verifying */
} s_thread_ctx_t;

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
        s_read_one (ctx->reader, rq, ctx->buf, ctx->expect, &res);
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

sb_reader_t *
sb_reader_new (const char *root, size_t threads, size_t buffer_bytes, int verify, uint64_t seed, char *err,
               size_t err_size)
{
    static unsigned long long s_counter;
    sb_reader_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    snprintf (self->root, sizeof self->root, "%s", root);
    self->buffer_bytes = buffer_bytes;
    self->verify = verify;
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
        ctx->buf = malloc (buffer_bytes);
        ctx->expect = verify ? malloc (buffer_bytes) : NULL;
        if (!ctx->work || !ctx->done || !ctx->buf || (verify && !ctx->expect)
            || zsock_connect (ctx->work, "%s", self->work_ep) != 0 || zsock_connect (ctx->done, "%s", self->done_ep) != 0) {
            snprintf (err, err_size, "cannot set up reader thread %zu: out of memory or sockets", i);
            s_ctx_free (ctx);
            goto fail;
        }
        zsock_set_sndhwm (ctx->done, 0);
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
sb_reader_destroy (sb_reader_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_reader_t *self = *self_p;
    s_request_t stop = { .stop = 1 };
    for (size_t i = 0; i < self->nthreads; i++)
        zsock_send (self->work, "b", &stop, sizeof stop);
    for (size_t i = 0; i < self->nthreads; i++) {
        pthread_join (self->threads[i], NULL);
        s_ctx_free (&self->ctxs[i]);
    }
    free (self->threads);
    free (self->ctxs);
    zsock_destroy (&self->work);
    zsock_destroy (&self->done);
    free (self);
    *self_p = NULL;
}

int
sb_reader_submit (sb_reader_t *self, const char *key, uint64_t offset, uint64_t length)
{
    size_t klen = strlen (key);
    size_t size = sizeof (s_request_t) + klen + 1;
    zframe_t *f = zframe_new (NULL, size);
    if (!f)
        return -1;
    s_request_t *rq = (s_request_t *) zframe_data (f);
    memset (rq, 0, sizeof *rq);
    rq->offset = offset;
    rq->length = length;
    memcpy (rq->key, key, klen + 1);
    return zframe_send (&f, self->work, 0);
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
