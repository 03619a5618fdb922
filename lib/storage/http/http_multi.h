/* http_multi: a pool of HTTP requests on one libcurl multi handle.
 *
 * The machinery the object-store clients (S3, Azure Blob) share: the multi
 * handle and a pool of easy handles kept alive across requests, the lists
 * of requests in flight, waiting for a retry and done, retries of transient
 * failures with jittered exponential backoff, a stop (a signal, or the
 * client's stop callback) that ends every request at once, a wakeup from
 * another thread, endpoint picking (round robin or least connections) and
 * per-endpoint counters. It speaks no protocol: the client (the "engine"
 * here) supplies the URL, headers and signature of each attempt, the
 * classification of a reply's headers and range, and its own error
 * record, through sb_http_ops_t.
 *
 * Ownership: the engine allocates its request with an sb_http_req_t as
 * its first member and hands it to the pool with sb_http_start (blocking
 * use: sb_http_perform) or sb_http_submit (asynchronous); it takes an
 * asynchronous one back from sb_http_next_done, and gives every
 * request back with sb_http_req_done, which frees what the pool allocated
 * for it, calls owned_free on what the request owns, and frees the request
 * (one allocation: the engine's part holds no other). A request the pool
 * still holds when it is destroyed is freed the same way.
 *
 * One pool belongs to one thread, the one that drives it (sb_http_pump,
 * sb_http_perform); only sb_http_wakeup may be called from another. */
#ifndef SB_HTTP_MULTI_H
#define SB_HTTP_MULTI_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "http_stats.h"
#include "storage.h"

typedef struct sb_http_pool sb_http_pool_t;
typedef struct sb_http_req sb_http_req_t;

/* Produces len bytes of a payload at offset (an upload's body, or what a
 * download is compared with). */
typedef void (*sb_http_fill_fn) (void *ctx, uint64_t offset, uint8_t *buf, size_t len);

/* What a successful attempt adds to its endpoint's byte counter. */
typedef enum {
    SB_HTTP_COUNT_UPLOAD,       /* up_size (0 for a request without a body) */
    SB_HTTP_COUNT_RECEIVED,     /* received: a download */
    SB_HTTP_COUNT_BODY          /* body_len: a reply kept whole (a listing) */
} sb_http_count_t;

struct sb_http_req {
    /* ---- set by the engine before the request starts */
    int       async;            /* delivered through sb_http_next_done; else finished is set */
    uint64_t  tag;              /* the engine's, for an asynchronous request */
    int       fixed_endpoint;   /* -1 (sb_http_req_init): balance; else always this endpoint */
    int       no_retry;         /* report the first failure (a preflight) */
    int       ranged;           /* a GET of [offset, offset + length) */
    uint64_t  offset, length;
    int       download;         /* a GET: its 2xx payload is counted in received, verified, dropped */
    int       keep_body;        /* ... unless kept in body, up to body_limit bytes */
    size_t    body_limit;
    size_t    body_max;         /* the bound on body_len + 1 of a kept 2xx reply (set by ops->prepare) */
    sb_http_count_t count;
    int       upload;           /* send up_size bytes: up_body, or fill from up_base */
    const char *up_body;        /* borrowed for the request */
    sb_http_fill_fn fill;
    void     *fill_ctx;
    uint64_t  up_base, up_size;
    struct curl_slist *headers; /* this attempt's (ops->prepare); freed by the pool */
    void     *owned;            /* the request owns it: owned_free (owned) when it is freed */
    void    (*owned_free) (void *ctx);
    /* ---- the reply of the last attempt */
    long      status;           /* HTTP status; 0 when none */
    uint64_t  received;         /* payload bytes */
    char     *body;             /* kept reply (error replies: their head), NUL-terminated */
    size_t    body_len;
    int       body_over;        /* a kept 2xx reply grew past body_max: the transfer was stopped */
    int       verify_failed;
    uint64_t  mismatch_at;      /* the first byte that differs */
    char      content_range[128];
    int       range_checked;
    char      range_why[512];   /* the reply does not answer the range asked: never retried */
    char      errbuf[CURL_ERROR_SIZE];
    /* ---- bookkeeping */
    CURL     *easy;             /* borrowed from the pool while the request lives */
    size_t    endpoint;         /* of the last attempt */
    int       attempt;          /* 1-based */
    uint64_t  started_ns;
    uint64_t  latency_ns;       /* of the successful attempt */
    uint64_t  due_ns;           /* retry time */
    int       failed;           /* the engine's error record says why */
    int       finished;         /* a blocking request ended */
    /* ---- the pool's own */
    sb_http_pool_t *pool;
    const char *error_text;     /* the sentence of the engine's error record (sb_http_req_init) */
    sb_http_fill_fn verify_fill;
    void     *verify_ctx;
    uint8_t  *verify_buf;
    size_t    body_cap, up_pos;
    sb_http_req_t *next;        /* retry or done list */
    sb_http_req_t *active_prev, *active_next;
};

typedef struct {
    /* Before each attempt, the reply fields cleared and r->endpoint picked:
     * set body_max and count, build r->headers, set CURLOPT_URL,
     * CURLOPT_HTTPHEADER and the method's options on r->easy (the pool sets
     * the callbacks, timeouts, and the upload's options). 0, or -1 with why. */
    int  (*prepare) (void *ctx, sb_http_req_t *r, char *why, size_t why_size);
    /* A header line of the reply other than Content-Range (n bytes, CRLF
     * included). May be NULL. */
    void (*header) (sb_http_req_t *r, const char *data, size_t n);
    /* A ranged GET's 2xx reply (status and content_range set): set
     * range_why when it does not answer the range asked. */
    void (*check_range) (sb_http_req_t *r);
    /* Fill the engine's error record of r: curl code cc (CURLE_OK when the
     * cause is the reply or extra), extra (NULL or more words). Returns 1
     * when the failure is transient, else 0 (the pool also retries a 2xx
     * reply whose body came short, up to cfg.max_retries). */
    int  (*fail) (void *ctx, sb_http_req_t *r, CURLcode cc, const char *extra);
    /* Fill the engine's error record of r ended by the stop or a signal. */
    void (*cancelled) (void *ctx, sb_http_req_t *r);
} sb_http_ops_t;

typedef struct {
    size_t   nendpoints;
    size_t   max_in_flight;     /* requests at once: easy handles kept, connections per endpoint */
    sb_lb_t  lb;                /* SB_LB_LEAST_CONNECTIONS, else round robin */
    uint64_t max_retries;       /* retries of a transient failure */
    long     connect_timeout_ms;
    long     request_timeout_ms;
    int      count_kept;        /* received counts a kept 2xx reply too */
} sb_http_cfg_t;

/* curl_global_init, once per process whoever calls first (it is not
 * thread-safe in curl 7.88). 0, or -1 with err set. */
int sb_http_global_init (char *err, size_t err_size);

/* cfg's request settings (endpoints, balancing, retries, timeouts) for
 * max_in_flight requests at once. */
void sb_http_cfg_from (const sb_storage_cfg_t *cfg, size_t max_in_flight, sb_http_cfg_t *out);

/* A pool for cfg; ops and ctx are borrowed for its life. NULL with err set. */
sb_http_pool_t *sb_http_pool_new (const sb_http_cfg_t *cfg, const sb_http_ops_t *ops, void *ctx, char *err,
                                  size_t err_size);
/* Abort transfers and free every request the pool holds; accepts NULL and
 * nulls the pointer. */
void sb_http_pool_destroy (sb_http_pool_t **self_p);

/* Requests end at once when a signal set zsys_interrupted or stop (arg)
 * returns non-zero (NULL: signals only): see sb_s3_set_stop. */
void sb_http_set_stop (sb_http_pool_t *self, int (*stop) (void *arg), void *arg);
/* Must the requests end now? */
int sb_http_cancelled (sb_http_pool_t *self);
/* Wake the thread blocked in sb_http_pump; safe from any thread. */
void sb_http_wakeup (sb_http_pool_t *self);

sb_http_stats_t *sb_http_stats (sb_http_pool_t *self, size_t endpoint);
/* Asynchronous requests submitted and not yet taken back. */
size_t sb_http_pending (const sb_http_pool_t *self);

/* Set up r (an engine's request just allocated, zeroed) for the pool;
 * error_text: where the engine's error record of r keeps its sentence
 * (logged when a failure is retried). */
void sb_http_req_init (sb_http_pool_t *self, sb_http_req_t *r, const char *error_text);
/* Compare a download's payload with fill (ctx borrowed): allocates the
 * comparison buffer. 0, or -1 when out of memory. */
int sb_http_req_verify (sb_http_req_t *r, sb_http_fill_fn fill, void *ctx);
/* Give r back: its easy handle to the pool, its buffers and what it owns
 * freed, then r. Accepts NULL. */
void sb_http_req_done (sb_http_pool_t *self, sb_http_req_t *r);

/* Start r's next attempt. 0, or -1 with r->failed set and its error filled. */
int sb_http_start (sb_http_pool_t *self, sb_http_req_t *r);
/* Start an asynchronous request; one that cannot start is delivered as a
 * failure. */
void sb_http_submit (sb_http_pool_t *self, sb_http_req_t *r);
/* Start an asynchronous GET r of [offset, offset + length) (length 0: the
 * whole object, no range) delivered under tag; with verify (not NULL) its
 * payload is compared with verify's bytes (verify_ctx borrowed). r owns
 * owned from now on (owned_free on it once done; may be NULL); when r is
 * NULL (the engine could not make it) owned is freed at once. 0, or -1
 * when out of memory (r given back). */
int sb_http_submit_get (sb_http_pool_t *self, sb_http_req_t *r, uint64_t tag, uint64_t offset, uint64_t length,
                        sb_http_fill_fn verify, void *verify_ctx, void *owned, void (*owned_free) (void *ctx));
/* Run a blocking request to its end (retries included). 0, or -1 with
 * r->failed set. */
int sb_http_perform (sb_http_pool_t *self, sb_http_req_t *r);
/* After a failed sb_http_pump: take r out of the pool when it has not
 * finished, failed with "curl multi failure", finished set. */
void sb_http_abandon (sb_http_pool_t *self, sb_http_req_t *r);

/* Drive the transfers: start due retries, run what can run and, only when
 * nothing finished, wait up to timeout_ms for the network or a wakeup.
 * 0, or -1 on a curl multi failure. */
int sb_http_pump (sb_http_pool_t *self, int timeout_ms);
/* The next finished asynchronous request, in the order they finished
 * (taken from the pool: the caller gives it back with sb_http_req_done),
 * or NULL. */
sb_http_req_t *sb_http_next_done (sb_http_pool_t *self);
/* Has an asynchronous request finished and not been taken? */
int sb_http_has_done (const sb_http_pool_t *self);

/* The value of header name in a header line (data, n bytes), blanks and
 * CRLF trimmed: 1 with *value and *len set, or 0 when it is another one. */
int sb_http_header (const char *data, size_t n, const char *name, const char **value, size_t *len);

#endif
