/* resultdb: the result database (schemas/results.sql) and its writers.
 *
 * Every row is committed when it arrives (WAL, synchronous=NORMAL), so a
 * coordinator that dies loses at most the rows of the moment. */
#ifndef SB_RESULTDB_H
#define SB_RESULTDB_H

#include "histogram.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sb_resultdb sb_resultdb_t;

#define SB_RESULTDB_VERSION 7

/* Open (creating when absent) the database at path and apply the schema.
 * Returns NULL with a reason in err. */
sb_resultdb_t *sb_resultdb_open (const char *path, char *err, size_t err_size);
/* Close; accepts NULL and nulls the pointer. */
void sb_resultdb_destroy (sb_resultdb_t **self_p);

/* The SQLite handle (borrowed), for the catalog and reports. */
sqlite3 *sb_resultdb_handle (sb_resultdb_t *self);

typedef struct {
    const char *kind;           /* "train" | "datagen" */
    const char *workload;
    const char *config;         /* YAML text */
    uint64_t    accelerators;
    uint64_t    hosts;
    uint64_t    workers;
    uint64_t    seed;
    double      au_threshold;
} sb_run_info_t;

/* Insert a run with status 'running'; returns its id, or -1. */
int64_t sb_resultdb_run_begin (sb_resultdb_t *self, const sb_run_info_t *info);
/* Record host and worker counts once every worker has joined. */
int sb_resultdb_run_hosts (sb_resultdb_t *self, int64_t run_id, uint64_t hosts, uint64_t workers);
/* Close a run: status and (nullable) error; computes au_mean and passed for
 * train runs from the epochs table. */
int sb_resultdb_run_finish (sb_resultdb_t *self, int64_t run_id, const char *status, const char *error);

int sb_resultdb_add_worker (sb_resultdb_t *self, int64_t run_id, uint64_t worker, const char *host,
                            uint64_t pid, uint64_t ranks, uint64_t first_rank, uint64_t cores, uint64_t memory);

typedef struct {
    uint64_t epoch, rank, samples, batches, bytes;
    const char *host;
    double started_at, finished_at, compute_s, au, io_wait_s, barrier_s;
    int    has_au;
} sb_rank_epoch_t;

int sb_resultdb_add_rank_epoch (sb_resultdb_t *self, int64_t run_id, const sb_rank_epoch_t *re);

/* Aggregate the epoch's rank rows into an epochs row (samples, bytes,
 * duration from first start to last finish, rates, mean AU). */
int sb_resultdb_close_epoch (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, uint64_t dropped,
                             uint64_t batches, int with_au);

/* Step barrier round-trip percentiles of an epoch (milliseconds). */
int sb_resultdb_epoch_barrier (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, double p50_ms, double p99_ms);

/* Per-sample read latency of an epoch, merged over its ranks: one
 * read_latency row per non-empty bucket, and read_p50_ms / read_p99_ms on
 * the epochs row (left NULL when the histogram is empty). */
int sb_resultdb_epoch_read_latency (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, const sb_histogram_t *h);

int sb_resultdb_add_stats (sb_resultdb_t *self, int64_t run_id, double t, uint64_t epoch, uint64_t rank,
                           uint64_t samples, uint64_t bytes, uint64_t reads, double read_s, double compute_s);

/* rank < 0: not tied to a rank. host, target may be NULL. */
int sb_resultdb_add_error (sb_resultdb_t *self, int64_t run_id, int64_t rank, const char *host,
                           const char *op, const char *target, int64_t errno_val, const char *message);

/* An S3 failure: the same plus endpoint (may be NULL), HTTP status, S3 code,
 * curl code and attempt. */
typedef struct {
    const char *endpoint;
    int64_t     http_status;
    const char *s3_code;
    int64_t     curl_code;
    int64_t     attempt;
} sb_error_detail_t;
int sb_resultdb_add_error_detail (sb_resultdb_t *self, int64_t run_id, int64_t rank, const char *host,
                                  const char *op, const char *target, int64_t errno_val, const char *message,
                                  const sb_error_detail_t *detail);

/* One endpoints row (replaced when it exists). Latencies in milliseconds. */
int sb_resultdb_add_endpoint (sb_resultdb_t *self, int64_t run_id, const char *endpoint, uint64_t requests,
                              uint64_t bytes, uint64_t errors, uint64_t retries, double mean_ms, double p50_ms,
                              double p90_ms, double p99_ms, double max_ms);

/* Mark runs left 'running' by a coordinator that died as 'interrupted';
 * returns how many, or -1. */
int sb_resultdb_mark_interrupted (sb_resultdb_t *self);

/* Batching: while a batch is open every write (and every catalog lookup)
 * runs inside one transaction, which sb_resultdb_flush_if_due commits once
 * a second: per-statement locking and page-cache revalidation would
 * otherwise cost more than the work itself at 10^6 lookups per second. A
 * crash loses at most the last second of rows, as DESIGN.md allows.
 * Listing (catalog.c) runs with no batch open. Return 0 or -1. */
int sb_resultdb_batch_begin (sb_resultdb_t *self);
int sb_resultdb_flush (sb_resultdb_t *self);
int sb_resultdb_flush_if_due (sb_resultdb_t *self);

/* Last SQLite error text of the handle (borrowed). */
const char *sb_resultdb_errmsg (sb_resultdb_t *self);

#endif
