/* az_client: an Azure Blob Storage client on libcurl's multi interface.
 *
 * One sb_az_t belongs to one thread. It keeps connections alive, spreads
 * requests over its endpoints (round robin or least connections), signs
 * every request with Shared Key (az_auth.h) or appends a SAS token,
 * retries transient failures (connect errors, resets, timeouts, short
 * bodies, HTTP 408/429/500/502/503/504) with jittered exponential backoff,
 * and counts requests, bytes, errors, retries and latency per endpoint.
 *
 * Failures are sb_storage_error_t: op, endpoint, container/key, HTTP
 * status, the service's x-ms-error-code (BlobNotFound, ...) as code, the
 * curl code as lib_code, missing for 404, transient as above, and one
 * sentence saying all of it. No credential is ever in one.
 *
 * An endpoint is the account's Blob URL: https://ACCOUNT.blob.core.windows.net,
 * or with the account in the path as Azurite serves it,
 * http://127.0.0.1:10000/devstoreaccount1. */
#ifndef SB_AZ_CLIENT_H
#define SB_AZ_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "histogram.h"
#include "http_stats.h"
#include "storage.h"

typedef struct sb_az sb_az_t;

/* requests, bytes, errors, retries and latency of one endpoint */
typedef sb_http_stats_t sb_az_stats_t;

/* Azure's limits on block blobs (service version 2019-12-12 and later). */
#define SB_AZ_BLOCK_MAX      (4000ull << 20)    /* one Put Block */
#define SB_AZ_BLOCKS_MAX     50000ull           /* committed blocks of a blob */
#define SB_AZ_PUT_BLOB_MAX   (5000ull << 20)    /* one Put Blob */
#define SB_AZ_LIST_PAGE_MAX  5000ull            /* maxresults of List Blobs */

/* Create a client for cfg (copied): cfg->store is the container. Reads the
 * credentials from this process's environment (sb_az_creds_load).
 * max_in_flight bounds connections per endpoint. NULL with err set. */
sb_az_t *sb_az_new (const sb_storage_cfg_t *cfg, size_t max_in_flight, char *err, size_t err_size);
void sb_az_destroy (sb_az_t **self_p);

/* As sb_s3_set_stop: a signal or stop (arg) non-zero ends every request
 * in flight or waiting for a retry at once (at most 100 ms for blocking
 * calls), failed with e->stopped, never retried. */
void sb_az_set_stop (sb_az_t *self, int (*stop) (void *arg), void *arg);

const char *sb_az_credentials_source (const sb_az_t *self);
size_t sb_az_endpoint_count (const sb_az_t *self);
const char *sb_az_endpoint (const sb_az_t *self, size_t i);
sb_az_stats_t *sb_az_stats (sb_az_t *self, size_t i);

/* Endpoint i reaches the container (Get Container Properties); with write,
 * also a probe blob named probe_key is created and deleted. No retry. */
int sb_az_check (sb_az_t *self, size_t i, int write, const char *probe_key, sb_storage_error_t *e);

/* List Blobs under prefix, in order, page_size per request (0: 5000),
 * following NextMarker; keys sorting at or before start_after are left out
 * (List Blobs has no start-after: they are skipped here), the listing ends
 * past end_at. fn gets the full blob name. 0, or -1 with e set. */
typedef int (*sb_az_list_fn) (void *ctx, const char *key, uint64_t size);
int sb_az_list (sb_az_t *self, const char *prefix, const char *start_after, const char *end_at, size_t page_size,
                sb_az_list_fn fn, void *ctx, sb_storage_error_t *e);

int sb_az_head (sb_az_t *self, const char *key, uint64_t *size, sb_storage_error_t *e);
/* length 0: the whole object. */
int sb_az_get (sb_az_t *self, const char *key, uint64_t offset, uint64_t length, uint64_t *received,
               sb_storage_error_t *e);
/* 0, 1 when absent (e set), -1. A larger object than cap is an error. */
int sb_az_get_small (sb_az_t *self, const char *key, char *buf, size_t cap, size_t *len, sb_storage_error_t *e);
int sb_az_delete (sb_az_t *self, const char *key, sb_storage_error_t *e);

/* Put Blob when size <= single_put; else Put Block of block bytes (raised
 * to fit 50,000 blocks), window of them in flight, then Put Block List. */
typedef void (*sb_az_fill_fn) (void *ctx, uint64_t offset, uint8_t *buf, size_t len);
int sb_az_put (sb_az_t *self, const char *key, uint64_t size, sb_az_fill_fn fill, void *ctx, uint64_t block,
               uint64_t single_put, uint64_t window, sb_storage_error_t *e);

/* Get Block List (committed): how many blocks, their bytes. */
int sb_az_block_list (sb_az_t *self, const char *key, uint64_t *count, uint64_t *bytes, sb_storage_error_t *e);

/* ---- asynchronous ranged GETs ---- */

typedef struct {
    uint64_t           tag;
    uint64_t           bytes;
    uint64_t           latency_ns;
    int                failed;
    sb_storage_error_t error;
} sb_az_done_t;

/* Start a GET of length bytes at offset (0: the whole object); with
 * expect, every byte is compared with expect's. The request owns
 * expect_ctx (expect_free on it when done, or at once on failure).
 * 0, or -1 when out of memory. */
int sb_az_get_start (sb_az_t *self, uint64_t tag, const char *key, uint64_t offset, uint64_t length,
                     sb_az_fill_fn expect, void *expect_ctx, void (*expect_free) (void *ctx));
size_t sb_az_pending (const sb_az_t *self);
/* Wait up to timeout_ms, call fn per completed GET; the number delivered, or -1. */
int sb_az_run (sb_az_t *self, int timeout_ms, void (*fn) (void *ctx, const sb_az_done_t *done), void *ctx);
void sb_az_wakeup (sb_az_t *self);

#endif
