/* report_query: the queries behind the run summaries (coordinator/report/),
 * each returning typed rows, so that the printing code holds no SQL.
 *
 * db is a connection to a result database (sb_resultdb_handle, or a
 * read-only one); it is borrowed. Strings in returned rows are copies the
 * caller frees with the row (each function says how). Every function
 * returns -1 when SQLite fails (sb_report_error (db) says why). */
#ifndef SB_REPORT_QUERY_H
#define SB_REPORT_QUERY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* Why the last call on db failed: SQLite's message (sqlite3_errmsg),
 * borrowed until the next call on db. */
const char *sb_report_error (sqlite3 *db);

/* Text of column col of a result row, "" for NULL (borrowed from st). */
const char *sb_report_column_text (sqlite3_stmt *st, int col);

/* Column col of a result row as a real, NAN for NULL. */
double sb_report_real (sqlite3_stmt *st, int col);

/* The helpers of the query files of coordinator/db/ (report_query.c,
 * export_query.c, html_query.c): prepare sql and bind run_id to ?1
 * (returns 0, or -1 with *st NULL: nothing to finalize); and the result of
 * a statement stepped to its end while fn was called on each row (st
 * finalized here): 1 when fn stopped it (stopped), else 0 when step is
 * SQLITE_DONE, or -1. */
int sb_report_prepare (sqlite3 *db, const char *sql, int64_t run_id, sqlite3_stmt **st);
int sb_report_step_end (sqlite3_stmt *st, int step, int stopped);

/* Id of the newest run (any kind when kind is NULL); -1 when none. */
int64_t sb_report_last_run (sqlite3 *db, const char *kind);

/* One host of a train run and DLIO's potential_caching for it
 * (utils/statscounter.py: 1 unless the host's memory is at most the data
 * it reads per epoch). data_bytes: the bytes the host's ranks read in the
 * epoch they read most (measured; DLIO multiplies the samples by the
 * nominal record length); memory_bytes < 0 when unknown, and then
 * potential_caching is -1. */
typedef struct {
    const char *host;   /* borrowed for the call */
    int64_t     memory_bytes, data_bytes;
    int         potential_caching;
} sb_report_host_caching_t;

/* Call fn for each host of run_id in worker order (the order of
 * host_memory_GB). Returns 0, or -1 when SQLite fails. */
int sb_report_host_caching (sqlite3 *db, int64_t run_id, void (*fn) (void *ctx, const sb_report_host_caching_t *h),
                            void *ctx);

/* DLIO's figures of a train run (runs.train_*; dlio 0 when they are NULL,
 * runs recorded before schema 9), the metric window and steps of its
 * ranks (the smallest over rank_epochs). Returns 0 (all zero when the run
 * does not exist), or -1. */
typedef struct {
    int     dlio;
    double  au_mean, au_stdev, tput_mean, tput_stdev, io_mean, io_stdev;
    int64_t record_size, window_steps, steps;
} sb_report_dlio_run_t;
int sb_report_dlio_run (sqlite3 *db, int64_t run_id, sb_report_dlio_run_t *d);

/* The checkpoints rows of a run in order (seq): *rows (caller frees with
 * sb_report_checkpoints_free) and *n. A NULL column reads as 0, a NULL op
 * as NULL. Returns 0, or -1 (nothing to free). */
typedef struct {
    char   *op;             /* "write" | "read" (owned) */
    int64_t checkpoint, ranks, files, bytes;
    double  duration_s, gib_per_s, mb_per_s, min_rank_mb_per_s;
    int64_t seq;            /* checkpoints.seq */
    double  span_s;         /* first rank start to last rank finish */
    int64_t dlio_bytes;     /* DLIO's checkpoint_size, rank 0's time as DLIO takes it, their GiB/s */
    double  dlio_duration_s, dlio_gib_per_s;
} sb_report_checkpoint_t;
int sb_report_checkpoints (sqlite3 *db, int64_t run_id, sb_report_checkpoint_t **rows, size_t *n);
void sb_report_checkpoints_free (sb_report_checkpoint_t *rows, size_t n);

/* the phases a run ran (runs.workflow, "" when NULL)
 * and DLIO's evaluation figures over its evaluations (evals 0 when it had
 * none). Returns 1, 0 when the run does not exist, or -1. */
typedef struct {
    char    workflow[256];
    int     has_workflow;
    int     evals;
    double  au_mean, au_stdev, tput_mean, io_mean;
} sb_report_workflow_t;
int sb_report_workflow (sqlite3 *db, int64_t run_id, sb_report_workflow_t *w);

/* The evals rows of a run in epoch order: *rows (caller frees) and *n.
 * Returns 0, or -1 (nothing to free). */
typedef struct {
    int64_t epoch, samples, steps;
    double  duration_s, mib_per_s, au_percentage, samples_per_s;
} sb_report_eval_t;
int sb_report_evals (sqlite3 *db, int64_t run_id, sb_report_eval_t **rows, size_t *n);

/* A run's row for its summary. Strings are owned (free with
 * sb_report_run_fini); error and config are NULL when NULL. Returns 1, 0
 * when the run does not exist, or -1. */
typedef struct {
    char   *kind, *workload, *status;      /* "" when NULL */
    char   *error, *config;
    int64_t accelerators, hosts, workers, seed, passed;
    double  au_threshold, au_mean, duration_s, db_locked_s;
    int     has_au_mean, has_duration;
} sb_report_run_t;
int sb_report_run (sqlite3 *db, int64_t run_id, sb_report_run_t *r);
void sb_report_run_fini (sb_report_run_t *r);

/* The run's effective configuration with every default filled in
 * (run_inputs.full_config, YAML) into *yaml (caller frees; NULL for a run
 * recorded before schema 13, which has none). Returns 0, or -1 when SQLite
 * fails or memory runs out. */
int sb_report_full_config (sqlite3 *db, int64_t run_id, char **yaml);

/* The epochs rows of a run in order: *rows (caller frees) and *n. The has_
 * flags say which nullable figures are there (a NULL figure reads as 0):
 * has_barrier, has_dlio and has_resident the first column of their group
 * (barrier_p50_ms, train_au_percentage, resident_fraction), the others one
 * column each. Returns 0, or -1 (nothing to free). */
typedef struct {
    int64_t epoch, samples, dropped, bytes, batches;
    double  duration_s, samples_per_s, mib_per_s, au_mean;
    double  barrier_p50_ms, barrier_p99_ms, barrier_own_p50_ms;
    double  dlio_au_percentage, dlio_samples_per_s, dlio_io_mb_per_s;  /* train_* columns */
    double  resident_fraction;
    int     from_memory;
    double  read_p50_ms, read_p99_ms;   /* sample read latency */
    int     has_barrier, has_barrier_own, has_dlio, has_resident;
    int     has_au_mean, has_barrier_p99, has_dlio_samples, has_dlio_io, has_from_memory;
    int     has_read_p50, has_read_p99;
    double  barrier_own_p99_ms;
    int     has_barrier_own_p99;
} sb_report_epoch_t;
int sb_report_epochs (sqlite3 *db, int64_t run_id, sb_report_epoch_t **rows, size_t *n);

/* ---- every output tells the same story ---- */

/* Sample read latency of a train run from its histogram rows, as
 * sb_histogram_quantile computes percentiles (the midpoint of the bin
 * holding the rank), in milliseconds: over every read of an epoch
 * (read_latency; host NULL), of one host's ranks in an epoch
 * (host_read_latency), or of the whole run (read_latency over every epoch;
 * epoch 0, host NULL). */
typedef struct {
    int64_t     epoch;
    const char *host;       /* borrowed for the call */
    int64_t     reads;
    double      p50_ms, p90_ms, p99_ms, p999_ms;
} sb_report_latency_t;

typedef enum {
    SB_REPORT_LATENCY_EPOCHS,   /* one per epoch, every host merged */
    SB_REPORT_LATENCY_HOSTS,    /* one per epoch and host, by epoch then host name */
    SB_REPORT_LATENCY_RUN       /* one for the run (none when it has no rows) */
} sb_report_latency_by_t;

/* Call fn for each group (by) of run_id's latency rows. Returns 0, or -1
 * (SQLite failed or out of memory). */
int sb_report_latencies (sqlite3 *db, int64_t run_id, sb_report_latency_by_t by,
                         void (*fn) (void *ctx, const sb_report_latency_t *l), void *ctx);

/* The rank the others waited for, each epoch of a train run (rank_epochs,
 * epoch >= 1): the one whose worker held the step barriers longest (held_s:
 * the coordinator saw its STEP come last, that long after another host's),
 * then (no step barrier, or older runs) the one with the most time of its
 * own, its wall time (finished_at - started_at) less its wait at step
 * barriers (the longest wall time names a rank that waited for it as often
 * as the one waited for; a frozen worker's own clock counts its freeze as
 * barrier wait when it froze waiting for the release), the lowest rank of
 * equal ones; its split of the epoch's window (the
 * first rank's start to the last one's finish) into emulated compute (every
 * step's: compute_all_s, else compute_s for runs before schema 16), waiting
 * for data, step barriers, other (the rest of its wall time) and idle (the
 * window outside its wall time); and over the epoch's ranks the mean time
 * in barriers and the mean compute and I/O wait. */
typedef struct {
    int64_t     epoch, rank, ranks;
    const char *host;       /* borrowed for the call */
    double      wall_s, compute_s, io_wait_s, barrier_s;
    double      own_s, window_s, other_s, idle_s;
    double      held_s;     /* NAN: not recorded (before schema 16) */
    double      barrier_mean_s, compute_mean_s, io_wait_mean_s;
} sb_report_slowest_t;

/* Call fn for each epoch in order. Returns 0, or -1. */
int sb_report_slowest (sqlite3 *db, int64_t run_id, void (*fn) (void *ctx, const sb_report_slowest_t *s), void *ctx);

/* One endpoints row (a run's traffic to one endpoint); a NULL latency reads as NAN. */
typedef struct {
    const char *endpoint;   /* borrowed for the call */
    int64_t     requests, bytes, errors, retries;
    double      mean_ms, p50_ms, p90_ms, p99_ms, max_ms;
} sb_report_endpoint_t;

/* Call fn for each endpoints row of run_id by endpoint. Returns 0, or -1. */
int sb_report_endpoints (sqlite3 *db, int64_t run_id, void (*fn) (void *ctx, const sb_report_endpoint_t *e), void *ctx);

/* A run's retries and failures in one place: over its endpoints rows the
 * endpoints, requests, failed attempts (errors) and retried attempts, and
 * the rows of the errors table. Returns 0, or -1. */
typedef struct {
    int64_t endpoints, requests, request_errors, retries, error_rows;
} sb_report_failures_t;
int sb_report_failures (sqlite3 *db, int64_t run_id, sb_report_failures_t *f);

/* One checkpoint_ranks row. */
typedef struct {
    int64_t     seq, checkpoint, rank, files, bytes;
    const char *op, *host;  /* borrowed for the call, "" when NULL */
    double      started_at, finished_at, duration_s, mb_per_s;
} sb_report_ckpt_rank_t;

/* Call fn for each checkpoint_ranks row of run_id by seq then rank.
 * Returns 0, or -1. */
int sb_report_checkpoint_ranks (sqlite3 *db, int64_t run_id, void (*fn) (void *ctx, const sb_report_ckpt_rank_t *r),
                                void *ctx);

/* DLIO's checkpoint metrics (statscounter's save_checkpoint_* and
 * load_checkpoint_*) over a run's checkpoints rows: the mean and
 * population standard deviation of each write's (read's) DLIO GiB/s
 * (dlio_gib_per_s: DLIO's checkpoint_size / 2^30 over rank 0's time, as
 * DLIO's end_save_ckpt divides) and of that duration, and
 * checkpoint_size_GB (the first write's dlio_bytes / 2^30); beside them
 * shardbench's own (slowest_*: the bytes of all ranks over the slowest
 * rank's time, gib_per_s and duration_s; written_gb: the first write's
 * bytes / 2^30). NAN where there is no such checkpoint. A pure function
 * of the rows. */
typedef struct {
    size_t  saves, loads;
    double  save_gbps_mean, save_gbps_stdev, save_s_mean, save_s_stdev;
    double  load_gbps_mean, load_gbps_stdev, load_s_mean, load_s_stdev;
    double  size_gb;
    double  slowest_save_gbps_mean, slowest_save_gbps_stdev, slowest_save_s_mean, slowest_save_s_stdev;
    double  slowest_load_gbps_mean, slowest_load_gbps_stdev, slowest_load_s_mean, slowest_load_s_stdev;
    double  written_gb;
} sb_report_ckpt_metrics_t;
void sb_report_ckpt_metrics (const sb_report_checkpoint_t *rows, size_t n, sb_report_ckpt_metrics_t *m);

#endif
