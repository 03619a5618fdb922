/* http_multi: requests on a curl multi handle, balanced, retried, stoppable. */
#include "http_multi.h"
#include "log.h"
#include "util.h"

#include <czmq.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define S_ERROR_BODY_CAP 65536      /* the head of an error reply is enough for its code and message */
#define S_VERIFY_CHUNK   65536

typedef struct {
    size_t          in_flight;
    sb_http_stats_t stats;
} s_endpoint_t;

struct sb_http_pool {
    sb_http_cfg_t        cfg;
    const sb_http_ops_t *ops;
    void                *ctx;
    CURLM               *multi;
    s_endpoint_t        *endpoints;     /* cfg.nendpoints (a histogram each: not 32 slots per client) */
    size_t               rr_next;
    sb_http_req_t       *active;        /* inside the multi handle */
    sb_http_req_t       *retry_list;    /* waiting for their due time */
    sb_http_req_t       *done_list;     /* async completions not yet delivered */
    sb_http_req_t       *done_tail;
    size_t               pending;       /* async requests not yet delivered */
    CURL               **easy_pool;
    size_t               npool;
    uint64_t             rng;
    int                (*stop) (void *arg);     /* sb_http_set_stop */
    void                *stop_arg;
};

static pthread_once_t s_global_once = PTHREAD_ONCE_INIT;
static CURLcode s_global_rc = CURLE_FAILED_INIT;

/* curl_global_init is not thread-safe in curl 7.88, and clients are made
 * from several threads (ranks, catalog streams): run it exactly once, and
 * make every other caller wait until it has finished. */
static void
s_global_init (void)
{
    s_global_rc = curl_global_init (CURL_GLOBAL_DEFAULT);
}

int
sb_http_global_init (char *err, size_t err_size)
{
    if (pthread_once (&s_global_once, s_global_init) != 0 || s_global_rc != CURLE_OK) {
        snprintf (err, err_size, "curl_global_init failed: %s", curl_easy_strerror (s_global_rc));
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- set-up */

void
sb_http_cfg_from (const sb_storage_cfg_t *cfg, size_t max_in_flight, sb_http_cfg_t *out)
{
    *out = (sb_http_cfg_t) {
        .nendpoints = cfg->nendpoints, .max_in_flight = max_in_flight, .lb = cfg->lb,
        .max_retries = cfg->max_retries, .connect_timeout_ms = (long) (cfg->connect_timeout_s * 1000),
        .request_timeout_ms = (long) (cfg->request_timeout_s * 1000),
    };
}

sb_http_pool_t *
sb_http_pool_new (const sb_http_cfg_t *cfg, const sb_http_ops_t *ops, void *ctx, char *err, size_t err_size)
{
    sb_http_pool_t *self = calloc (1, sizeof *self);
    if (!self || !(self->endpoints = calloc (cfg->nendpoints ? cfg->nendpoints : 1, sizeof *self->endpoints))) {
        free (self);
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->cfg = *cfg;
    self->cfg.max_in_flight = cfg->max_in_flight ? cfg->max_in_flight : 1;
    self->ops = ops;
    self->ctx = ctx;
    self->rng = sb_mix ((uint64_t) time (NULL), (uint64_t) (uintptr_t) self);
    self->multi = curl_multi_init ();
    self->easy_pool = calloc (self->cfg.max_in_flight + 4, sizeof (CURL *));
    if (!self->multi || !self->easy_pool) {
        snprintf (err, err_size, "cannot create a curl multi handle");
        sb_http_pool_destroy (&self);
        return NULL;
    }
    /* Concurrency is bounded by the caller (max_in_flight requests), so no
     * per-host connection limit is set: with one, curl 7.88 parks a new
     * transfer as "pending" until another completes, even when an idle
     * connection is in the cache, and each request then waits a full poll
     * timeout. The cache keeps one connection per possible request. */
    long per_host = (long) self->cfg.max_in_flight;
    if (curl_multi_setopt (self->multi, CURLMOPT_MAXCONNECTS, per_host * (long) self->cfg.nendpoints + 4) != CURLM_OK) {
        snprintf (err, err_size, "cannot configure the curl multi handle");
        sb_http_pool_destroy (&self);
        return NULL;
    }
    return self;
}

/* Free what the pool allocated for r, what r owns, and r. */
static void
s_req_free (sb_http_req_t *r)
{
    curl_slist_free_all (r->headers);   /* may hold an Authorization header */
    free (r->body);
    free (r->verify_buf);
    if (r->owned_free)
        r->owned_free (r->owned);
    free (r);
}

void
sb_http_pool_destroy (sb_http_pool_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_http_pool_t *self = *self_p;
    /* requests still in the multi handle */
    for (sb_http_req_t *r = self->active, *next; r; r = next) {
        next = r->active_next;
        if (curl_multi_remove_handle (self->multi, r->easy) != CURLM_OK)
            sb_debug ("curl_multi_remove_handle failed while destroying an HTTP request pool");
        curl_easy_cleanup (r->easy);
        s_req_free (r);
    }
    for (sb_http_req_t *lists[] = { self->retry_list, self->done_list }, **l = lists; l < lists + 2; l++)
        for (sb_http_req_t *r = *l, *next; r; r = next) {
            next = r->next;
            if (r->easy)
                curl_easy_cleanup (r->easy);
            s_req_free (r);
        }
    for (size_t i = 0; i < self->npool; i++)
        curl_easy_cleanup (self->easy_pool[i]);
    free (self->easy_pool);
    if (self->multi)
        curl_multi_cleanup (self->multi);
    free (self->endpoints);
    free (self);
    *self_p = NULL;
}

sb_http_stats_t *sb_http_stats (sb_http_pool_t *self, size_t endpoint) { return &self->endpoints[endpoint].stats; }
size_t sb_http_pending (const sb_http_pool_t *self) { return self->pending; }

void
sb_http_set_stop (sb_http_pool_t *self, int (*stop) (void *arg), void *arg)
{
    self->stop = stop;
    self->stop_arg = arg;
}

int
sb_http_cancelled (sb_http_pool_t *self)
{
    return zsys_interrupted || (self->stop && self->stop (self->stop_arg));
}

void
sb_http_wakeup (sb_http_pool_t *self)
{
    CURLMcode mc = curl_multi_wakeup (self->multi);
    if (mc != CURLM_OK)
        sb_warn ("curl_multi_wakeup: %s", curl_multi_strerror (mc));
}

void
sb_http_req_init (sb_http_pool_t *self, sb_http_req_t *r, const char *error_text)
{
    r->pool = self;
    r->error_text = error_text;
    r->fixed_endpoint = -1;
}

int
sb_http_req_verify (sb_http_req_t *r, sb_http_fill_fn fill, void *ctx)
{
    r->verify_fill = fill;
    r->verify_ctx = ctx;
    if (!r->verify_buf && !(r->verify_buf = malloc (S_VERIFY_CHUNK)))
        return -1;
    return 0;
}

void
sb_http_req_done (sb_http_pool_t *self, sb_http_req_t *r)
{
    if (!r)
        return;
    if (r->easy) {
        if (self->npool < self->cfg.max_in_flight + 4) {
            curl_easy_reset (r->easy);
            self->easy_pool[self->npool++] = r->easy;
        }
        else
            curl_easy_cleanup (r->easy);
        r->easy = NULL;
    }
    s_req_free (r);
}

int
sb_http_header (const char *data, size_t n, const char *name, const char **value, size_t *len)
{
    size_t nl = strlen (name);
    if (n <= nl || strncasecmp (data, name, nl) != 0 || data[nl] != ':')
        return 0;
    const char *v = data + nl + 1;
    while (v < data + n && *v == ' ')
        v++;
    size_t l = (size_t) (data + n - v);
    while (l && (v[l - 1] == '\r' || v[l - 1] == '\n' || v[l - 1] == ' '))
        l--;
    *value = v;
    *len = l;
    return 1;
}

/* ---------------------------------------------------------------- callbacks */

/* The status of r's reply, once its headers are in. */
static void
s_status (sb_http_req_t *r)
{
    if (!r->status && curl_easy_getinfo (r->easy, CURLINFO_RESPONSE_CODE, &r->status) != CURLE_OK)
        r->status = 0;
}

/* A download's payload, compared with verify_fill when asked. */
static void
s_verify (sb_http_req_t *r, const char *data, size_t n)
{
    for (size_t done = 0; done < n;) {
        size_t chunk = n - done < S_VERIFY_CHUNK ? n - done : S_VERIFY_CHUNK;
        r->verify_fill (r->verify_ctx, r->offset + r->received + done, r->verify_buf, chunk);
        if (memcmp (r->verify_buf, data + done, chunk) != 0) {
            size_t at = 0;
            while (at < chunk && r->verify_buf[at] == (uint8_t) data[done + at])
                at++;
            r->verify_failed = 1;
            r->mismatch_at = r->offset + r->received + done + at;
            return;
        }
        done += chunk;
    }
}

static size_t
s_on_body (char *data, size_t size, size_t nmemb, void *userp)
{
    sb_http_req_t *r = userp;
    size_t n = size * nmemb;
    s_status (r);
    if (r->ranged && r->status >= 200 && r->status < 300 && !r->range_checked) {
        r->range_checked = 1;
        r->pool->ops->check_range (r);
        if (r->range_why[0])
            return 0;   /* stop the transfer now: not one more byte of the object */
    }
    int keep = r->status >= 300 || r->keep_body || !r->download;
    if (!keep) {
        /* payload: counted, verified when asked, dropped */
        if (r->verify_fill && !r->verify_failed)
            s_verify (r, data, n);
        r->received += n;
        return n;
    }
    size_t cap = r->status >= 300 ? S_ERROR_BODY_CAP : r->body_max;
    if (r->body_len + n + 1 > cap) {
        r->body_over = r->status < 300;     /* the caller names the bound, not curl's write error */
        return r->status >= 300 ? n : 0;    /* error bodies: keep the head; replies: too large, fail */
    }
    if (r->body_len + n + 1 > r->body_cap) {
        size_t want = r->body_cap ? r->body_cap * 2 : 16384;
        while (want < r->body_len + n + 1)
            want *= 2;
        char *grown = realloc (r->body, want);
        if (!grown)
            return 0;
        r->body = grown;
        r->body_cap = want;
    }
    memcpy (r->body + r->body_len, data, n);
    r->body_len += n;
    r->body[r->body_len] = '\0';
    if (r->status < 300 && r->pool->cfg.count_kept)
        r->received += n;
    return n;
}

static size_t
s_on_header (char *data, size_t size, size_t nmemb, void *userp)
{
    sb_http_req_t *r = userp;
    size_t n = size * nmemb;
    const char *v;
    size_t len;
    if (sb_http_header (data, n, "content-range", &v, &len))
        snprintf (r->content_range, sizeof r->content_range, "%.*s", (int) len, v);
    else if (r->pool->ops->header)
        r->pool->ops->header (r, data, n);
    return n;
}

static size_t
s_on_upload (char *buf, size_t size, size_t nmemb, void *userp)
{
    sb_http_req_t *r = userp;
    size_t room = size * nmemb;
    uint64_t left = r->up_size - r->up_pos;
    size_t n = left < room ? (size_t) left : room;
    if (n == 0)
        return 0;
    if (r->up_body)
        memcpy (buf, r->up_body + r->up_pos, n);
    else
        r->fill (r->fill_ctx, r->up_base + r->up_pos, (uint8_t *) buf, n);
    r->up_pos += n;
    return n;
}

/* curl rewinds an upload to send it again (a redirect, a reused connection
 * that closed). */
static int
s_on_seek (void *userp, curl_off_t offset, int origin)
{
    sb_http_req_t *r = userp;
    if (origin != SEEK_SET || offset < 0 || (uint64_t) offset > r->up_size)
        return CURL_SEEKFUNC_FAIL;
    r->up_pos = (uint64_t) offset;
    return CURL_SEEKFUNC_OK;
}

/* curl calls it while a transfer runs (waiting for a reply included):
 * non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK), so a signal
 * ends a request that would otherwise wait out its timeout. */
static int
s_on_progress (void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void) dltotal, (void) dlnow, (void) ultotal, (void) ulnow;
    sb_http_req_t *r = userp;
    return sb_http_cancelled (r->pool);
}

/* ---------------------------------------------------------------- requests */

static size_t
s_pick_endpoint (sb_http_pool_t *self, sb_http_req_t *r)
{
    size_t n = self->cfg.nendpoints;
    if (r->fixed_endpoint >= 0)
        return (size_t) r->fixed_endpoint;
    if (self->cfg.lb == SB_LB_LEAST_CONNECTIONS) {
        size_t best = self->rr_next % n;
        for (size_t k = 0; k < n; k++) {
            size_t i = (self->rr_next + k) % n;
            if (self->endpoints[i].in_flight < self->endpoints[best].in_flight)
                best = i;
        }
        self->rr_next = (best + 1) % n;
        return best;
    }
    size_t i = self->rr_next;
    self->rr_next = (self->rr_next + 1) % n;
    return i;
}

/* Configure r->easy for its next attempt: a fresh reply, the engine's
 * URL, headers and signature, and the callbacks. */
static int
s_prepare (sb_http_pool_t *self, sb_http_req_t *r, char *why, size_t why_size)
{
    r->status = 0;
    r->received = 0;
    r->body_len = 0;
    r->body_over = 0;
    r->up_pos = 0;
    r->verify_failed = 0;
    r->content_range[0] = '\0';
    r->range_checked = 0;
    r->range_why[0] = '\0';
    r->errbuf[0] = '\0';
    curl_slist_free_all (r->headers);
    r->headers = NULL;
    if (self->ops->prepare (self->ctx, r, why, why_size) != 0)
        return -1;

    CURL *e = r->easy;
    CURLcode rc = CURLE_OK;
#define SET(opt, val) do { if (rc == CURLE_OK) rc = curl_easy_setopt (e, opt, val); } while (0)
    SET (CURLOPT_PRIVATE, (char *) r);
    SET (CURLOPT_WRITEFUNCTION, s_on_body);
    SET (CURLOPT_WRITEDATA, r);
    SET (CURLOPT_HEADERFUNCTION, s_on_header);
    SET (CURLOPT_HEADERDATA, r);
    SET (CURLOPT_ERRORBUFFER, r->errbuf);
    SET (CURLOPT_XFERINFOFUNCTION, s_on_progress);
    SET (CURLOPT_XFERINFODATA, r);
    SET (CURLOPT_NOPROGRESS, 0L);
    SET (CURLOPT_NOSIGNAL, 1L);
    SET (CURLOPT_TCP_KEEPALIVE, 1L);
    SET (CURLOPT_BUFFERSIZE, 262144L);
    SET (CURLOPT_CONNECTTIMEOUT_MS, self->cfg.connect_timeout_ms);
    SET (CURLOPT_TIMEOUT_MS, self->cfg.request_timeout_ms);
    SET (CURLOPT_PROTOCOLS_STR, "http,https");
    if (r->upload) {
        SET (CURLOPT_UPLOAD, 1L);
        SET (CURLOPT_READFUNCTION, s_on_upload);
        SET (CURLOPT_READDATA, r);
        SET (CURLOPT_SEEKFUNCTION, s_on_seek);
        SET (CURLOPT_SEEKDATA, r);
        SET (CURLOPT_INFILESIZE_LARGE, (curl_off_t) r->up_size);
    }
#undef SET
    if (rc != CURLE_OK) {
        snprintf (why, why_size, "curl_easy_setopt: %s", curl_easy_strerror (rc));
        return -1;
    }
    return 0;
}

static void
s_active_add (sb_http_pool_t *self, sb_http_req_t *r)
{
    r->active_prev = NULL;
    r->active_next = self->active;
    if (self->active)
        self->active->active_prev = r;
    self->active = r;
}

static void
s_active_remove (sb_http_pool_t *self, sb_http_req_t *r)
{
    if (r->active_prev)
        r->active_prev->active_next = r->active_next;
    else
        self->active = r->active_next;
    if (r->active_next)
        r->active_next->active_prev = r->active_prev;
    r->active_prev = r->active_next = NULL;
    CURLMcode mc = curl_multi_remove_handle (self->multi, r->easy);
    if (mc != CURLM_OK)
        sb_warn ("curl_multi_remove_handle: %s", curl_multi_strerror (mc));
}

int
sb_http_start (sb_http_pool_t *self, sb_http_req_t *r)
{
    if (!r->easy) {
        r->easy = self->npool ? self->easy_pool[--self->npool] : curl_easy_init ();
        if (!r->easy)
            return -1;
    }
    r->endpoint = s_pick_endpoint (self, r);
    r->attempt++;
    char why[512];
    if (s_prepare (self, r, why, sizeof why) != 0) {
        self->ops->fail (self->ctx, r, CURLE_OK, why);
        r->failed = 1;
        return -1;
    }
    r->started_ns = sb_mono_ns ();
    if (curl_multi_add_handle (self->multi, r->easy) != CURLM_OK) {
        self->ops->fail (self->ctx, r, CURLE_OK, "curl_multi_add_handle failed");
        r->failed = 1;
        return -1;
    }
    s_active_add (self, r);
    self->endpoints[r->endpoint].in_flight++;
    self->endpoints[r->endpoint].stats.requests++;
    return 0;
}

static uint64_t
s_backoff_ns (sb_http_pool_t *self, int attempt)
{
    /* equal jitter over 50 ms x 2^(attempt-1), capped at 5 s */
    uint64_t base = 50000000ull << (attempt > 7 ? 7 : attempt - 1);
    if (base > 5000000000ull)
        base = 5000000000ull;
    return base / 2 + sb_splitmix64 (&self->rng) % (base / 2 + 1);
}

static void
s_complete (sb_http_pool_t *self, sb_http_req_t *r)
{
    if (r->async) {
        r->next = NULL;
        if (self->done_tail)
            self->done_tail->next = r;
        else
            self->done_list = r;
        self->done_tail = r;
    }
    else
        r->finished = 1;
}

void
sb_http_submit (sb_http_pool_t *self, sb_http_req_t *r)
{
    r->async = 1;
    self->pending++;
    if (sb_http_start (self, r) != 0)
        s_complete (self, r);   /* delivered as a failure */
}

int
sb_http_submit_get (sb_http_pool_t *self, sb_http_req_t *r, uint64_t tag, uint64_t offset, uint64_t length,
                    sb_http_fill_fn verify, void *verify_ctx, void *owned, void (*owned_free) (void *ctx))
{
    if (!r) {
        if (owned_free)
            owned_free (owned);
        return -1;
    }
    r->owned = owned;
    r->owned_free = owned_free;
    r->tag = tag;
    r->offset = offset;
    r->length = length;
    r->ranged = length > 0;
    if (verify && sb_http_req_verify (r, verify, verify_ctx) != 0) {
        sb_http_req_done (self, r);
        return -1;
    }
    sb_http_submit (self, r);
    return 0;
}

/* r ended by a signal or the stop: not a failure of the storage. */
static void
s_cancel (sb_http_pool_t *self, sb_http_req_t *r)
{
    self->ops->cancelled (self->ctx, r);
    r->failed = 1;
    s_complete (self, r);
}

/* A transfer finished: success, retry, or failure. */
static void
s_on_finished (sb_http_pool_t *self, sb_http_req_t *r, CURLcode cc)
{
    s_endpoint_t *ep = &self->endpoints[r->endpoint];
    ep->in_flight--;
    if (curl_easy_getinfo (r->easy, CURLINFO_RESPONSE_CODE, &r->status) != CURLE_OK)
        r->status = 0;      /* unknown: the request fails below */
    if (cc == CURLE_ABORTED_BY_CALLBACK && !r->range_why[0]) {     /* s_on_progress: a signal or stop */
        s_active_remove (self, r);
        s_cancel (self, r);
        return;
    }
    const char *extra = NULL;
    char text[256];
    if (r->keep_body && cc == CURLE_WRITE_ERROR && r->body_over) {
        snprintf (text, sizeof text, "the object is larger than %zu bytes", r->body_limit);
        extra = text;
    }
    if (r->ranged && r->status >= 200 && r->status < 300 && !r->range_checked
        && (cc == CURLE_OK || cc == CURLE_PARTIAL_FILE)) {
        r->range_checked = 1;   /* a reply without a body byte */
        self->ops->check_range (r);
    }
    int permanent = r->range_why[0] != '\0';
    if (permanent) {
        extra = r->range_why;
        cc = CURLE_OK;          /* the write error was ours: the cause is the reply */
    }
    int ok = !permanent && cc == CURLE_OK && r->status >= 200 && r->status < 300;
    if (ok && r->verify_failed) {
        snprintf (text, sizeof text, "verify: byte %llu differs from the generator",
                  (unsigned long long) r->mismatch_at);
        extra = text;
        ok = 0;
    }
    else if (ok && r->ranged && r->received != r->length) {
        snprintf (text, sizeof text, "short body: %llu of %llu bytes arrived", (unsigned long long) r->received,
                  (unsigned long long) r->length);
        extra = text;
        ok = 0;
    }
    if (ok) {
        uint64_t ns = sb_mono_ns () - r->started_ns;
        ep->stats.bytes += r->count == SB_HTTP_COUNT_RECEIVED ? r->received
                         : r->count == SB_HTTP_COUNT_BODY ? r->body_len : r->up_size;
        sb_histogram_add (&ep->stats.latency, ns / 1000);
        s_active_remove (self, r);
        r->failed = 0;
        r->latency_ns = ns;
        s_complete (self, r);
        return;
    }
    ep->stats.errors++;
    int transient = self->ops->fail (self->ctx, r, cc, extra);
    s_active_remove (self, r);
    /* a 2xx reply whose body came short is retried too */
    transient = !permanent && (transient || (cc == CURLE_OK && r->status < 300 && !r->verify_failed));
    if (transient && (uint64_t) r->attempt <= self->cfg.max_retries && !r->no_retry) {
        ep->stats.retries++;
        sb_debug ("%s; retrying", r->error_text);
        r->due_ns = sb_mono_ns () + s_backoff_ns (self, r->attempt);
        r->next = self->retry_list;
        self->retry_list = r;
        return;
    }
    r->failed = 1;
    s_complete (self, r);
}

/* Start retries that are due; returns ms until the next one (or -1). */
static long
s_start_due (sb_http_pool_t *self)
{
    uint64_t now = sb_mono_ns ();
    long wait_ms = -1;
    sb_http_req_t **pp = &self->retry_list;
    while (*pp) {
        sb_http_req_t *r = *pp;
        if (r->due_ns <= now) {
            *pp = r->next;
            r->next = NULL;
            if (sb_http_start (self, r) != 0)
                s_complete (self, r);
            continue;
        }
        long ms = (long) ((r->due_ns - now) / 1000000) + 1;
        if (wait_ms < 0 || ms < wait_ms)
            wait_ms = ms;
        pp = &r->next;
    }
    return wait_ms;
}

/* Collect finished transfers; returns how many finished. */
static int
s_collect (sb_http_pool_t *self)
{
    int finished = 0;
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read (self->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        sb_http_req_t *r = NULL;
        if (curl_easy_getinfo (msg->easy_handle, CURLINFO_PRIVATE, (char **) &r) != CURLE_OK)
            r = NULL;
        if (r) {
            s_on_finished (self, r, msg->data.result);
            finished++;
        }
    }
    return finished;
}

/* A signal or the stop: every request in the multi handle or waiting for
 * its retry ends now, failed (ops->cancelled). Returns 1 when it ended
 * any, else 0 (with none, the caller's wait goes on: no loop that spins
 * while the session stops). */
static int
s_cancel_all (sb_http_pool_t *self)
{
    if ((!self->active && !self->retry_list) || !sb_http_cancelled (self))
        return 0;
    while (self->active) {
        sb_http_req_t *r = self->active;
        self->endpoints[r->endpoint].in_flight--;
        if (curl_easy_getinfo (r->easy, CURLINFO_RESPONSE_CODE, &r->status) != CURLE_OK)
            r->status = 0;
        s_active_remove (self, r);
        s_cancel (self, r);
    }
    while (self->retry_list) {
        sb_http_req_t *r = self->retry_list;
        self->retry_list = r->next;
        r->next = NULL;
        s_cancel (self, r);
    }
    return 1;
}

/* Run what can run; only when nothing finished, wait up to timeout_ms for
 * the network (or sb_http_wakeup) and run again. On loopback a whole
 * transfer can finish inside one perform call, so waiting before
 * collecting would cost a full timeout per request. */
int
sb_http_pump (sb_http_pool_t *self, int timeout_ms)
{
    if (s_cancel_all (self))
        return 0;
    long retry_ms = s_start_due (self);
    if (retry_ms >= 0 && retry_ms < timeout_ms)
        timeout_ms = (int) retry_ms;
    int running = 0;
    CURLMcode mc = curl_multi_perform (self->multi, &running);
    if (mc == CURLM_OK && s_collect (self) == 0 && timeout_ms > 0) {
        mc = curl_multi_poll (self->multi, NULL, 0, timeout_ms, NULL);
        if (mc == CURLM_OK && s_cancel_all (self))
            return 0;   /* a signal woke the poll, or the caller's wakeup after its stop */
        if (mc == CURLM_OK)
            mc = curl_multi_perform (self->multi, &running);
        if (mc == CURLM_OK)
            s_collect (self);
    }
    if (mc != CURLM_OK) {
        sb_error ("curl multi: %s", curl_multi_strerror (mc));
        return -1;
    }
    s_start_due (self);
    return 0;
}

void
sb_http_abandon (sb_http_pool_t *self, sb_http_req_t *r)
{
    if (r->finished)
        return;
    int found = 0;
    for (sb_http_req_t *a = self->active; a && !found; a = a->active_next)
        if (a == r) {
            self->endpoints[r->endpoint].in_flight--;
            s_active_remove (self, r);
            found = 1;
        }
    for (sb_http_req_t **pp = &self->retry_list; *pp && !found; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            r->next = NULL;
            found = 1;
        }
    self->ops->fail (self->ctx, r, CURLE_OK, "curl multi failure");
    r->failed = 1;
    r->finished = 1;
}

int
sb_http_perform (sb_http_pool_t *self, sb_http_req_t *r)
{
    r->async = 0;
    if (sb_http_start (self, r) != 0)
        return -1;
    while (!r->finished)
        if (sb_http_pump (self, 100) != 0) {
            sb_http_abandon (self, r);
            break;
        }
    return r->failed ? -1 : 0;
}

int
sb_http_has_done (const sb_http_pool_t *self)
{
    return self->done_list != NULL;
}

sb_http_req_t *
sb_http_next_done (sb_http_pool_t *self)
{
    sb_http_req_t *r = self->done_list;
    if (!r)
        return NULL;
    self->done_list = r->next;
    if (!self->done_list)
        self->done_tail = NULL;
    r->next = NULL;
    self->pending--;
    return r;
}
