/* s3_client: an S3 client on libcurl's multi interface.
 *
 * One sb_s3_t belongs to one thread. It keeps connections alive across
 * requests, spreads requests over several endpoints (round robin or least
 * connections), signs every request with SigV4 (s3_sign.c), retries
 * transient failures with jittered exponential backoff, and counts requests,
 * bytes, errors, retries and latency per endpoint.
 *
 * Every failure is described completely in an sb_s3_error_t: endpoint,
 * operation, key, attempt, HTTP status, S3 error code and message, curl code
 * and text, and errno. Retried: connect failures, resets, empty replies,
 * timeouts, short bodies, HTTP 408/429/500/502/503/504. Never retried:
 * other 4xx (400, 403, 404, ...) and verification mismatches.
 *
 * Blocking calls (list, put, check, get) are for the coordinator and for
 * datagen; the asynchronous GET calls are the read engine of a rank. */
#ifndef SB_S3_CLIENT_H
#define SB_S3_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "histogram.h"
#include "http_stats.h"
#include "storage.h"

typedef struct sb_s3 sb_s3_t;

typedef struct {
    char endpoint[256];
    char op[24];            /* GET, HEAD, LIST, PUT, MULTIPART-INIT, ... */
    char key[1024];
    int  attempt;           /* 1-based attempt that failed last */
    long http_status;       /* 0 when no HTTP reply */
    char s3_code[64];       /* from the XML error body; "" when none */
    char s3_message[256];
    int  curl_code;         /* CURLE_*; 0 when curl succeeded */
    char curl_text[256];
    int  os_errno;          /* errno of the transfer (connect, recv); 0 when none */
    int  cancelled;         /* 1: a signal or the client's stop ended it (sb_s3_set_stop), not the storage */
    char text[2048];        /* all of the above in one sentence */
} sb_s3_error_t;

/* requests, bytes, errors, retries and latency of one endpoint */
typedef sb_http_stats_t sb_s3_endpoint_stats_t;

/* The S3 engine's own settings, its options (storage.s3.KEY, or DLIO's
 * storage.storage_options spellings: lib/storage/s3/s3_config.c). */
typedef struct {
    char     region[64];            /* signing region */
    int      path_style;            /* 1: /bucket/key; 0: bucket.host/key */
    uint64_t multipart_threshold;   /* bytes: multipart upload from this size */
    uint64_t multipart_part;        /* bytes */
    int      sign_payload;          /* 1: hash PUT bodies; 0: UNSIGNED-PAYLOAD */
    uint64_t list_page_size;        /* max-keys per ListObjectsV2 request */
} sb_s3_settings_t;

/* cfg's S3 settings: its s3 options as configured, else their defaults. */
void sb_s3_settings (const sb_storage_cfg_t *cfg, sb_s3_settings_t *out);

/* Create a client for cfg and set (both copied). Loads credentials from
 * this process's environment. max_in_flight bounds concurrent requests (and
 * connections per endpoint). NULL with err set on failure. */
sb_s3_t *sb_s3_new (const sb_storage_cfg_t *cfg, const sb_s3_settings_t *set, size_t max_in_flight, char *err,
                    size_t err_size);
/* Abort transfers, free; accepts NULL and nulls the pointer. */
void sb_s3_destroy (sb_s3_t **self_p);

/* Requests end at once, whatever their timeouts and retries, when a
 * signal set zsys_interrupted (the coordinator's handler, CZMQ's in a
 * worker) or when stop (arg) returns non-zero (NULL: signals only): a
 * transfer in flight is aborted from curl's progress callback or the next
 * turn of the multi loop (at most 100 ms for the blocking calls; at once
 * after sb_s3_wakeup for sb_s3_run), and a retry waiting for its backoff
 * is dropped. Each such request fails with e->cancelled set and "interrupted
 * by a signal" (or "stopped") as its cause, never retried, not counted as an
 * endpoint error. stop is called from the thread that drives the client. */
void sb_s3_set_stop (sb_s3_t *self, int (*stop) (void *arg), void *arg);

/* Where the credentials came from ("environment", "FILE [profile]"). Borrowed. */
const char *sb_s3_credentials_source (const sb_s3_t *self);
size_t sb_s3_endpoint_count (const sb_s3_t *self);
const char *sb_s3_endpoint (const sb_s3_t *self, size_t i);
/* Counters of endpoint i (borrowed; the caller may reset them). */
sb_s3_endpoint_stats_t *sb_s3_stats (sb_s3_t *self, size_t i);

/* 1 when requests to endpoint url use path-style URLs (/BUCKET/KEY): when
 * path_style is set, and also without it when the host is an IP literal
 * (IPv4, [IPv6]) or "localhost", whose names cannot carry the bucket
 * (BUCKET.127.0.0.1 resolves nowhere); else 0 (BUCKET.HOST/KEY). The first
 * client that overrides path_style so says it once, at info. */
int sb_s3_endpoint_path_style (const char *url, int path_style);

/* Preflight of endpoint i: a signed HEAD of the bucket (TCP connect
 * included); when refused, a signed GET tells the S3 error code. No retry.
 * Returns 0, or -1 with e filled. */
int sb_s3_check_endpoint (sb_s3_t *self, size_t i, sb_s3_error_t *e);

/* ListObjectsV2 of every key under prefix that sorts after start_after
 * (NULL: from the start) and, when end_at is not NULL, at or before end_at.
 * fn is called per key in order, each key starting with prefix and sorting
 * after start_after and after the key before it; a reply with a key that
 * does not, a Size over SB_S3_OBJECT_MAX or a page over SB_S3_LIST_PAGE_MAX
 * bytes fails the listing. A non-zero return of fn stops the listing.
 * page_size: max-keys per request (0: 1000). Returns 0, or -1 with e set. */
typedef int (*sb_s3_list_fn) (void *ctx, const char *key, uint64_t size);
int sb_s3_list (sb_s3_t *self, const char *prefix, const char *start_after, const char *end_at,
                size_t page_size, sb_s3_list_fn fn, void *ctx, sb_s3_error_t *e);

/* The largest ListObjectsV2 reply taken, in bytes: 1000 keys of 1024 bytes
 * with their ETag, date and owner are about 1.5 MB, and 5.5 MB if every
 * key byte were an escaped '&'; a typical page is about 300 KB. */
#define SB_S3_LIST_PAGE_MAX (8ull << 20)

/* S3's multipart limits: parts of 5 MiB to 5 GiB (the last one may be
 * smaller), at most 10,000 of them, objects of at most 5 TiB. */
#define SB_S3_PART_MIN   (5ull << 20)
#define SB_S3_PART_MAX   (5ull << 30)
#define SB_S3_PARTS_MAX  10000ull
#define SB_S3_OBJECT_MAX (5ull << 40)

/* Plan a multipart upload of size bytes in parts of part bytes (configured,
 * SB_S3_PART_MIN..SB_S3_PART_MAX). When that makes more than 10,000 parts,
 * the part size is raised to the smallest multiple of 1 MiB that fits.
 * Sets *part_out and *nparts; returns 0, 1 when the part size was raised,
 * or -1 with why set (the object is over 5 TiB, or part is out of range). */
int sb_s3_part_plan (uint64_t size, uint64_t part, uint64_t *part_out, uint64_t *nparts, char *why, size_t why_size);

/* PUT an object of size bytes whose content fill() produces; multipart
 * upload when size >= the configured threshold (parts of the configured
 * size, raised to fit 10,000 parts, see sb_s3_part_plan; aborted on
 * failure). Returns 0, or -1 with e set. */
typedef void (*sb_s3_fill_fn) (void *ctx, uint64_t offset, uint8_t *buf, size_t len);
int sb_s3_put (sb_s3_t *self, const char *key, uint64_t size, sb_s3_fill_fn fill, void *ctx, sb_s3_error_t *e);

/* sb_s3_put with the request shapes of a DLIO library (s3_shape.h): a
 * multipart upload when size >= threshold (0: every object, a single part
 * when it fits in one), parts of part bytes (raised to fit 10,000), window
 * of them in flight at once. Returns 0, or -1 with e set. */
int sb_s3_put_parts (sb_s3_t *self, const char *key, uint64_t size, uint64_t part, uint64_t threshold, uint64_t window,
                     sb_s3_fill_fn fill, void *ctx, sb_s3_error_t *e);

/* Blocking read of the first size bytes of key as DLIO's checkpoint
 * readers read it: streams blocks of ceil(size / streams) bytes read at
 * once, each with range GETs of at most chunk bytes, window of them in
 * flight per block. *received: the bytes that arrived. Returns 0, or -1
 * with e set (the first failure) once no GET is in flight. */
int sb_s3_get_blocks (sb_s3_t *self, const char *key, uint64_t size, uint64_t streams, uint64_t chunk, uint64_t window,
                      uint64_t *received, sb_s3_error_t *e);

/* Blocking GET of [offset, offset+length) (length 0: the whole object, any
 * size). *received: bytes that arrived. Returns 0, or -1 with e set. */
int sb_s3_get (sb_s3_t *self, const char *key, uint64_t offset, uint64_t length, uint64_t *received,
               sb_s3_error_t *e);

/* Blocking GET of a whole small object into buf (at most cap bytes, for
 * example a dataset marker): *len gets its length. Returns 0, 1 when the
 * object is absent (HTTP 404; e set), or -1 with e set (a larger object
 * is an error). */
int sb_s3_get_small (sb_s3_t *self, const char *key, char *buf, size_t cap, size_t *len, sb_s3_error_t *e);

/* HEAD an object: *size gets its Content-Length. Returns 0, or -1 with e
 * set (a missing object is HTTP 404, s3_code "NoSuchKey"). */
int sb_s3_head (sb_s3_t *self, const char *key, uint64_t *size, sb_s3_error_t *e);

/* DELETE an object. Returns 0, or -1 with e set. */
int sb_s3_delete (sb_s3_t *self, const char *key, sb_s3_error_t *e);

/* ---- asynchronous ranged GETs ---- */

typedef struct {
    uint64_t      tag;
    uint64_t      bytes;        /* bytes that arrived (all of them, or the request failed) */
    uint64_t      latency_ns;   /* of the successful attempt */
    int           failed;
    sb_s3_error_t error;        /* when failed */
} sb_s3_done_t;

/* Start a GET of exactly length bytes at offset of key; length 0 reads the
 * whole object, whatever its size (no Range header). When
 * verify, every byte is compared with sb_content_fill(content_seed, ...).
 * Returns 0, or -1 when out of memory. */
int sb_s3_get_start (sb_s3_t *self, uint64_t tag, const char *key, uint64_t offset, uint64_t length,
                     int verify, uint64_t content_seed);

/* sb_s3_get_start verifying against expect (bytes at an offset of the
 * object) instead of the raw content stream. The request owns expect_ctx
 * and calls expect_free (may be NULL) on it when done, or at once when
 * this fails. */
int sb_s3_get_start_fill (sb_s3_t *self, uint64_t tag, const char *key, uint64_t offset, uint64_t length,
                          int verify, uint64_t content_seed, sb_s3_fill_fn expect, void *expect_ctx,
                          void (*expect_free) (void *ctx));

/* Start a HEAD of key, delivered by sb_s3_run as a GET is (bytes 0).
 * Returns 0, or -1 when out of memory. */
int sb_s3_head_start (sb_s3_t *self, uint64_t tag, const char *key);

/* Requests started and not yet delivered (retries waiting included). */
size_t sb_s3_pending (const sb_s3_t *self);

/* Move transfers along: wait up to timeout_ms for network activity or
 * sb_s3_wakeup, then call fn for every GET that completed. Returns the
 * number delivered, or -1 on a curl multi failure. */
int sb_s3_run (sb_s3_t *self, int timeout_ms, void (*fn) (void *ctx, const sb_s3_done_t *done), void *ctx);

/* Wake a thread blocked in sb_s3_run; safe from any thread. */
void sb_s3_wakeup (sb_s3_t *self);

/* Is this failure worth retrying (for callers classifying errors)? */
int sb_s3_error_is_transient (const sb_s3_error_t *e);

#endif
