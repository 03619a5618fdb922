/* export_query: the queries behind the exports of a run (report --json,
 * --csv, --html and compare, coordinator/report/report_export.c and
 * report_html.c) that report_query.h does not already answer, each
 * returning typed rows, so that the writing code holds no SQL. The epochs
 * rows come from sb_report_epochs.
 *
 * db is a connection to a result database; it is borrowed. Every function
 * returns -1 when SQLite fails (sb_report_error (db) says why). The
 * functions that call fn for each row pass rows borrowed for the call;
 * fn returns 0 to go on, anything else to stop, and then the function
 * returns 1. */
#ifndef SB_EXPORT_QUERY_H
#define SB_EXPORT_QUERY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* A run's row as the JSON, CSV and compare writers need it. A real figure
 * that is NULL reads as NAN. Strings: kind and status are copied ("" when
 * NULL, cut to fit); workload, error, host (coordinator_host) and config
 * are owned copies, NULL when NULL (free with sb_export_run_fini). */
typedef struct {
    char    kind[32], status[32];
    char   *workload, *error, *host, *config;
    double  started_at, finished_at;    /* started_at 0 when NULL */
    int64_t accelerators, hosts, workers, seed;
    double  au_threshold, au_mean;
    int     passed;                     /* -1 when NULL */
    /* DLIO's run figures (NAN: not a train run, or recorded before schema 9) */
    double  dlio_au_mean, dlio_au_stdev, dlio_tput_mean, dlio_tput_stdev, dlio_io_mean, dlio_io_stdev;
    int64_t record_size;                /* -1 when NULL */
} sb_export_run_t;

/* Load run run_id into *r (zeroed first; fini it whatever the result).
 * Returns 1, 0 when the run does not exist, or -1. */
int sb_export_run (sqlite3 *db, int64_t run_id, sb_export_run_t *r);
void sb_export_run_fini (sb_export_run_t *r);

/* One host of a run (run_workers grouped by host): its largest memory in
 * bytes (NAN when NULL) and cores (has_cores 0 when NULL). */
typedef struct {
    const char *host;
    double      memory_bytes;
    int64_t     cores;
    int         has_cores;
} sb_export_host_t;

/* Call fn for each host of run_id in the order the hosts joined. Returns 0,
 * 1 when fn stopped it, or -1. */
int sb_export_hosts (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_export_host_t *h), void *ctx);

/* One rank_epochs row. A real figure that is NULL reads as NAN (started_at
 * and finished_at as 0); host "" when NULL. */
typedef struct {
    int64_t     epoch, rank;
    const char *host;
    int64_t     samples, batches, bytes;
    double      started_at, finished_at, compute_s, au, io_wait_s, barrier_s;
    int64_t     metric_steps;
    int         has_metric_steps;
    double      metric_compute_s, metric_excluded_s, metric_time_s, dlio_au_percentage, dlio_samples_per_s;
    double      compute_all_s;  /* every step's compute; NAN before schema 16 */
    double      window_s;       /* the epoch's window: its ranks' first start to last finish */
    double      held_s;         /* the others' wait at step barriers for its worker; NAN before schema 16 */
} sb_export_rank_epoch_t;

/* Call fn for each rank_epochs row of run_id, by epoch then rank. Returns
 * 0, 1 when fn stopped it, or -1. */
int sb_export_rank_epochs (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_export_rank_epoch_t *e),
                           void *ctx);

/* A train run's row as its HTML page shows it. Figures derived in SQL:
 * duration_s (finished_at - started_at), au_mean (DLIO's
 * train_au_mean_percentage / 100, else runs.au_mean), and over its epochs
 * rows epochs (count), sps and mibps (avg). A real figure that is NULL
 * reads as NAN. kind, workload, status, error and config are owned
 * copies, NULL when NULL (free with sb_export_page_run_fini). */
typedef struct {
    char   *kind, *workload, *status, *error, *config;
    int64_t accelerators, hosts, workers, seed, epochs;
    double  started_at, duration_s, au_threshold, au_mean, sps, mibps;
    int     passed;     /* -1 when NULL */
} sb_export_page_run_t;

/* Load run run_id into *r (zeroed first; fini it whatever the result).
 * Returns 1, 0 when the run does not exist, or -1. */
int sb_export_page_run (sqlite3 *db, int64_t run_id, sb_export_page_run_t *r);
void sb_export_page_run_fini (sb_export_page_run_t *r);

/* The last timeseries t of run_id less start (0 when there is none) into
 * *span. Returns 0 or -1. */
int sb_export_timeseries_span (sqlite3 *db, int64_t run_id, double start, double *span);

/* The bytes read per host and time bin: timeseries rows of run_id, ranks
 * mapped to hosts through run_workers, bin = (t - start) / bin_s cast to
 * an integer, by host then bin. */
typedef struct {
    const char *host;
    int64_t     bin, bytes;
} sb_export_host_bin_t;

/* Call fn for each host and bin. Returns 0, 1 when fn stopped it, or -1. */
int sb_export_host_bins (sqlite3 *db, int64_t run_id, double start, int64_t bin_s,
                         int (*fn) (void *ctx, const sb_export_host_bin_t *b), void *ctx);

/* Call fn with each read_latency bin of run_id (its low bound in us and
 * the count summed over ranks and epochs), by low bound. Returns 0, 1 when
 * fn stopped it, or -1. */
int sb_export_latency_bins (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, int64_t low_us, int64_t count),
                               void *ctx);

/* How many endpoints rows run_id has, and the most requests of one (0 when
 * none). Returns 0 or -1. */
int sb_export_endpoint_count (sqlite3 *db, int64_t run_id, int64_t *n, int64_t *max_requests);

/* One errors row. Strings "" when NULL; t 0 when NULL. service_code and
 * library_code: the storage service's and the client library's error codes
 * (library_code 0 and has_library_code 0 when NULL). */
typedef struct {
    double      t;
    int64_t     rank, http_status, library_code;
    int         has_rank, has_http_status, has_library_code;
    const char *host, *op, *target, *endpoint, *message, *service_code;
} sb_export_error_t;

/* Call fn for each errors row of run_id in time order. Returns 0, 1 when
 * fn stopped it, or -1. */
int sb_export_errors (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_export_error_t *e), void *ctx);

#endif
