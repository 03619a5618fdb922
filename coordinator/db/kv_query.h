/* kv_query: a KV-cache run (runs.kind 'kvcache') read back from the result
 * database: its runs row, kv_runs, kv_trials and every kv_ranks row with
 * the latency figures of kv_latency beside it. What the results directory
 * (coordinator/report/kv_results_dir.h) and the report
 * (coordinator/report/kv_report.h) say of a run is read through here, so
 * that both say the same. */
#ifndef SB_KV_QUERY_H
#define SB_KV_QUERY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* kv_latency.what read beside each rank, in this order */
typedef enum {
    SB_KV_LAT_REQUEST_STORAGE,  /* a request's storage I/O: the reference's storage_io_latency_ms */
    SB_KV_LAT_READ_TOTAL,       /* a storage-tier read, whole: cache_stats.storage_read_*_ms */
    SB_KV_LAT_WRITE_TOTAL,
    SB_KV_LAT_READ_DEVICE,      /* the load span: cache_stats.storage_read_device_*_ms */
    SB_KV_LAT_WRITE_DEVICE,     /* the fsync span: cache_stats.storage_write_device_*_ms */
    SB_KV_LAT_N
} sb_kv_lat_t;

typedef struct {
    double mean, p50, p95, p99;
    int    has;                 /* 0: no kv_latency row (no such operation in the trial) */
} sb_kv_lat_row_t;

typedef struct {
    int64_t trial, rank;
    char   *host;
    double  elapsed_s;
    int64_t requests, generated;
    int64_t chatbot, coding, document;          /* requests completed per user type */
    int64_t interactive, responsive, batch;     /* and per QoS class */
    int64_t storage_entries;
    int64_t storage_read_bytes, storage_write_bytes;
    double  read_gib_per_s, write_gib_per_s;    /* tier_storage_{read,write}_bandwidth_gbps */
    double  avg_tokens_per_s;                   /* summary.avg_throughput_tokens_per_sec of results_json */
    double  storage_tokens_per_s;               /* summary.storage_throughput_tokens_per_sec */
    int     has_avg_tokens, has_storage_tokens; /* 0: results_json has no such number (read as 0, as mlpstorage) */
    sb_kv_lat_row_t lat[SB_KV_LAT_N];
    char   *storage_check;                      /* NULL: none recorded */
    char   *results_json;
} sb_kv_rank_row_t;

typedef struct {
    int64_t trial;
    double  started_at, finished_at;
    int64_t ranks, requests, generated, storage_read_bytes, storage_write_bytes;
    double  read_gib_per_s, write_gib_per_s, storage_p95_ms;
    int     has_storage_p95;
} sb_kv_trial_row_t;

typedef struct {
    /* runs */
    int64_t id;
    char   *kind, *workload, *status, *error, *coordinator_host;
    double  started_at, finished_at;
    int     has_finished;
    int64_t accelerators, hosts, workers, seed, coordinator_pid;
    /* kv_runs */
    int64_t option, users, trials, max_concurrent_allocs, kv_seed, bytes_per_position;
    char   *model, *generation_mode, *storage_check;
    double  duration_s, cpu_mem_gb;
    double  read_gib_per_s, write_gib_per_s, storage_p95_ms;
    int     has_read, has_write, has_storage_p95;
    /* kv_trials, kv_ranks (by trial, then rank) */
    sb_kv_trial_row_t *trial;
    size_t             ntrials;
    sb_kv_rank_row_t  *rank;
    size_t             nranks;
} sb_kv_run_t;

/* Read run run_id. Returns 1 with *run filled (sb_kv_run_fini frees it), 0
 * when there is no such run or it has no kv_runs row (err says which), -1
 * when SQLite fails or memory runs out (err says so). */
int sb_kv_run_load (sqlite3 *db, int64_t run_id, sb_kv_run_t *run, char *err, size_t err_size);
void sb_kv_run_fini (sb_kv_run_t *run);

/* The figures of one trial over its ranks, as mlpstorage aggregates the rank
 * files of a trial (benchmarks/kvcache.py _aggregate_option_results): the
 * bandwidths and token rates summed, the latencies the largest of the ranks'
 * (a rank without the figure counts as 0, as mlpstorage's .get(.., 0.0)). */
typedef struct {
    size_t ranks;
    int64_t requests, generated;
    double read_gib_per_s, write_gib_per_s, avg_tokens_per_s, storage_tokens_per_s;
    double lat_max[SB_KV_LAT_N][3];     /* p50, p95, p99: largest over the ranks */
    int    lat_has[SB_KV_LAT_N];
    int64_t chatbot, coding, document, interactive, responsive, batch;
} sb_kv_trial_sum_t;

void sb_kv_trial_sum (const sb_kv_run_t *run, int64_t trial, sb_kv_trial_sum_t *sum);

/* A KV-cache run's division as mlpstorage judges one Option of a run:
 * "closed" when option is 1..3 and every per-Option parameter is the
 * Option's (benchmarks/kvcache.py WORKLOAD_PARAMS: model, users per client,
 * duration, cpu tier, max-concurrent-allocs, generation mode; the gpu tier
 * is always 0 here) with the CLOSED sequence locks (seed 42, 3 trials);
 * "open" when only what OPEN may change differs (model among
 * config.KVCACHE_MODELS, users, duration, cpu tier, generation mode, seed,
 * trials; option 0: settings of one's own, with a max-concurrent-allocs one
 * of the Options has); "invalid" when
 * max-concurrent-allocs differs from the Option's (OPEN cannot set it), the
 * model or generation mode is none mlpstorage knows, users < 1 or duration
 * < 30 s (rules/run_checkers/kvcache.py), or the storage check refused the
 * folder. why (may be NULL) says the first reason it is not closed. */
const char *sb_kv_division (const sb_kv_run_t *run, char *why, size_t why_size);

#endif
