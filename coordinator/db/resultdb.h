/* resultdb: the result database (schemas/results.sql) and its writer.
 *
 * A file is checked when opened: its header and schema (a damaged page
 * elsewhere is SQLite's error when a query reads it); every page (PRAGMA
 * quick_check) only before writing into a database whose last coordinator
 * stopped uncleanly (resultdb.c says why). Once sb_resultdb_start_writer ran, every row goes to a writer
 * thread with its own connection and is committed as it arrives (WAL,
 * synchronous=NORMAL), so a coordinator that dies loses at most the rows of
 * the moment and a database locked by another process delays rows, never
 * the caller: the writer retries the lock up to its limit and counts the wait
 * into runs.db_locked_s. Without a writer (in-memory databases) rows are
 * written at once on the caller's connection. */
#ifndef SB_RESULTDB_H
#define SB_RESULTDB_H

#include "dlio_metrics.h"
#include "histogram.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sb_resultdb sb_resultdb_t;

#define SB_RESULTDB_VERSION 17

/* Open (creating when absent) the database at path for writing, check it
 * (a corrupt file is an error naming it) and apply or upgrade the schema.
 * Returns NULL with a reason in err. */
sb_resultdb_t *sb_resultdb_open (const char *path, char *err, size_t err_size);
/* Open path read-only (reports): no write access needed, to the file or its
 * folder. check: check the header and schema first (never every page). A database of an
 * older schema is an error saying it needs upgrading with write access.
 * Returns NULL with a reason in err. */
sb_resultdb_t *sb_resultdb_open_readonly (const char *path, int check, char *err, size_t err_size);
/* Stop the writer (once everything queued is written, or it gave up) and
 * close; accepts NULL and nulls the pointer. */
void sb_resultdb_destroy (sb_resultdb_t **self_p);

/* Write rows from now on in a thread of their own (file databases only;
 * nothing happens for an in-memory one). lock_limit_s: how long rows may
 * wait for another process's lock before the writer gives up and says so
 * (0: forever). Returns 0, or -1 with err. */
int sb_resultdb_start_writer (sb_resultdb_t *self, double lock_limit_s, char *err, size_t err_size);
/* Take the writer's news without waiting: a lock wait and its end are
 * logged as warnings. Returns -1 once a row was lost (the writer gave up on
 * a lock or SQLite failed; sb_resultdb_errmsg says why), else 0. */
int sb_resultdb_poll (sb_resultdb_t *self);
/* Wait until every row queued so far is committed, running the keep-alive
 * meanwhile. Returns -1 when a row was lost (sb_resultdb_errmsg), else 0. */
int sb_resultdb_sync (sb_resultdb_t *self);
/* fn(arg) runs about every 100 ms while sb_resultdb_sync or
 * sb_resultdb_run_begin waits for the writer (heartbeats); NULL: none. */
void sb_resultdb_set_keep_alive (sb_resultdb_t *self, void (*fn) (void *), void *arg);
/* Queue one statement (run it at once without a writer). fmt has one
 * letter per parameter, passed after it: 't' const char * (NULL: SQL NULL),
 * 'i' int64_t, 'd' double, 'n' SQL NULL (no argument), 'L' the seconds the
 * writer waited for other processes' locks since the run began (no
 * argument). Returns 0, or -1 when the row could not be queued (or, without
 * a writer, written). */
int sb_resultdb_exec (sb_resultdb_t *self, const char *sql, const char *fmt, ...);

/* The SQLite handle of the caller's connection (borrowed), for the catalog
 * and reports: rows queued to the writer are there after sb_resultdb_sync. */
sqlite3 *sb_resultdb_handle (sb_resultdb_t *self);
/* The path the database was opened with (borrowed). */
const char *sb_resultdb_path (sb_resultdb_t *self);

typedef struct {
    const char *kind;           /* "train" | "datagen" */
    const char *workload;
    const char *config;         /* YAML text */
    uint64_t    accelerators;
    uint64_t    hosts;
    uint64_t    workers;
    uint64_t    seed;
    double      au_threshold;
    const struct sb_run_inputs *inputs;   /* what the run was given (NULL: not recorded) */
} sb_run_info_t;

/* what a run was given, recorded with it
 * (run_inputs, run_overrides, run_host_info), so that the results directory
 * (coordinator/report/results_dir.h) can be written from the database alone.
 * Every string is borrowed and must hold no credential (redacted by the
 * caller); NULL host_* fields: no host row. */
typedef struct sb_run_inputs {
    const char         *version;        /* SB_VERSION */
    const char         *command_line;   /* argv, shell-quoted, secrets <redacted> */
    const char         *full_config;    /* effective configuration with every default, YAML */
    const char         *df;             /* df(1) lines of the data and results file systems (NULL: none) */
    const char *const  *overrides;      /* KEY=VALUE as given, in order, secrets <redacted> */
    size_t              noverrides;
    const char         *host;           /* the coordinator's host name */
    const char         *host_processor; /* its machine (uname -m) */
    const char         *host_cpuinfo;   /* its /proc/cpuinfo: the last processor's block (host_proc.h) */
    const char         *host_meminfo;   /* its /proc/meminfo */
} sb_run_inputs_t;

/* Insert a run with status 'running'; returns its id, or -1. With a
 * writer this waits for it (the keep-alive runs meanwhile). */
int64_t sb_resultdb_run_begin (sb_resultdb_t *self, const sb_run_info_t *info);
/* Record host and worker counts once every worker has joined. */
int sb_resultdb_run_hosts (sb_resultdb_t *self, int64_t run_id, uint64_t hosts, uint64_t workers);
/* Close a run: status and (nullable) error; computes au_mean (shardbench's
 * own AU) for train runs from the epochs table, passed from
 * train_au_meet_expectation (sb_resultdb_run_dlio, queued before), and
 * records db_locked_s. */
int sb_resultdb_run_finish (sb_resultdb_t *self, int64_t run_id, const char *status, const char *error);

int sb_resultdb_add_worker (sb_resultdb_t *self, int64_t run_id, uint64_t worker, const char *host,
                            uint64_t pid, uint64_t ranks, uint64_t first_rank, uint64_t cores, uint64_t memory);

/* The clock of a worker against the coordinator's: offset_s = worker clock
 * minus coordinator clock, measured over a round trip of rtt_ms. */
/* a host as a worker described it in HELLO
 * (lib/base/host_proc.h) into run_host_info; it replaces a row of that host
 * already there (the coordinator's own, written by sb_resultdb_run_begin
 * when the coordinator runs on a host of that name). */
int sb_resultdb_add_host_info (sb_resultdb_t *self, int64_t run_id, const char *host, const char *processor,
                               const char *cpuinfo, const char *meminfo);
int sb_resultdb_worker_clock (sb_resultdb_t *self, int64_t run_id, uint64_t worker, double offset_s, double rtt_ms);

typedef struct {
    uint64_t epoch, rank, samples, batches, bytes;
    const char *host;
    double started_at, finished_at, compute_s, au, io_wait_s, barrier_s;
    double compute_all_s;   /* every step's compute (compute_s leaves the first out) */
    double held_s;          /* how long the other workers waited for its worker at step barriers */
    uint64_t resident_bytes, checked_bytes; /* page-cache residency sampled before reads (0 of 0: none) */
    int    has_au;          /* a train epoch: au and the DLIO figures below are stored (else NULL) */
    /* DLIO's figures of the rank (lib/metrics/dlio_metrics.h) */
    uint64_t metric_steps;
    double metric_compute_s, metric_excluded_s, metric_time_s, dlio_au_percentage, dlio_samples_per_s;
} sb_rank_epoch_t;

int sb_resultdb_add_rank_epoch (sb_resultdb_t *self, int64_t run_id, const sb_rank_epoch_t *re);

/* Aggregate the epoch's rank rows into an epochs row (samples, bytes,
 * duration from first start to last finish, rates, mean AU, and the
 * page-cache residency: resident and checked bytes summed, their ratio
 * and from_memory, 1 when at least half the checked bytes were resident;
 * both NULL when no byte was checked). */
int sb_resultdb_close_epoch (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, uint64_t dropped,
                             uint64_t batches, int with_au);

/* DLIO's figures of a closed epoch: AU (percent, the ranks' mean), samples/s
 * (the ranks' sum) and samples/s x record size / 2^20. */
int sb_resultdb_epoch_dlio (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, double au_percentage,
                            double samples_per_s, double io_mib_per_s);

/* DLIO's run figures (the epochs' means and deviations, the verdict) and
 * its nominal record size; before sb_resultdb_run_finish, which takes the
 * verdict into runs.passed. */
int sb_resultdb_run_dlio (sb_resultdb_t *self, int64_t run_id, const sb_dlio_summary_t *s, uint64_t record_size);

/* The run's sampler (sb_sampler_kind_name) and loader threads per rank. */
int sb_resultdb_run_sampler (sb_resultdb_t *self, int64_t run_id, const char *sampler, uint64_t loader_threads);

/* an evaluation (the evals and eval_ranks tables):
 * one rank's, then the totals with DLIO's figures, and the run's DLIO
 * evaluation figures over its evaluations (sb_dlio_summarise of them). */
typedef struct {
    uint64_t    epoch, rank, samples, steps, bytes;
    const char *host;
    double      started_at, finished_at, compute_s, io_wait_s;
    double      au_percentage, samples_per_s;   /* DLIO's figures of the rank */
} sb_eval_rank_t;
int sb_resultdb_add_eval_rank (sb_resultdb_t *self, int64_t run_id, const sb_eval_rank_t *e);
typedef struct {
    uint64_t epoch, samples, dropped, bytes, steps;
    double   duration_s;
    double   au_percentage, samples_per_s, io_mib_per_s;   /* DLIO's: the ranks' mean AU, summed samples/s */
    double   read_p50_ms, read_p99_ms;
} sb_eval_t;
int sb_resultdb_add_eval (sb_resultdb_t *self, int64_t run_id, const sb_eval_t *e);
int sb_resultdb_run_eval (sb_resultdb_t *self, int64_t run_id, const sb_dlio_summary_t *s);
/* The phases the command ran, in order, as "datagen,train" (runs.workflow). */
int sb_resultdb_run_workflow (sb_resultdb_t *self, int64_t run_id, const char *phases);
/* An epoch's files no rank read, and the step barrier's own cost
 * percentiles (milliseconds; own_p50_ms < 0: no barrier, left NULL). */
int sb_resultdb_epoch_sampler (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, uint64_t unused_files,
                               double own_p50_ms, double own_p99_ms);

/* Step barrier round-trip percentiles of an epoch (milliseconds). */
int sb_resultdb_epoch_barrier (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, double p50_ms, double p99_ms);

/* Per-sample read latency of an epoch, merged over its ranks: one
 * read_latency row per non-empty bin, and read_p50_ms / read_p99_ms on
 * the epochs row (left NULL when the histogram is empty). */
int sb_resultdb_epoch_read_latency (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, const sb_histogram_t *h);

/* Add one rank's per-sample read latency histogram of a train epoch (n
 * bin counts of lib/metrics/histogram.h, as RANK_DONE carries them) to
 * the host_read_latency rows of its host: each non-empty bin's count is
 * added to the row's. */
int sb_resultdb_host_read_latency (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, const char *host,
                                   const uint64_t *counts, size_t n);

int sb_resultdb_add_stats (sb_resultdb_t *self, int64_t run_id, double t, uint64_t epoch, uint64_t rank,
                           uint64_t samples, uint64_t bytes, uint64_t reads, double read_s, double compute_s);

/* rank < 0: not tied to a rank. host, target may be NULL. */
int sb_resultdb_add_error (sb_resultdb_t *self, int64_t run_id, int64_t rank, const char *host,
                           const char *op, const char *target, int64_t errno_val, const char *message);

/* A failure of an engine with endpoints: the same plus endpoint (may be
 * NULL), HTTP status, the service's and the client library's error codes
 * (sb_storage_error_t's code and lib_code: lib/storage/engine.h) and the
 * attempt. An empty service_code is stored as NULL. */
typedef struct {
    const char *endpoint;
    int64_t     http_status;
    const char *service_code;
    int64_t     library_code;
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

/* This host's name as runs.coordinator_host and series.coordinator_host
 * record it (a static buffer). */
const char *sb_resultdb_hostname (void);

/* The rows of table ("runs" or "series") that a coordinator of this host
 * left 'running' and whose process is gone: run update on each (its id
 * bound to ?1). sb_resultdb_mark_interrupted and sb_series_mark_interrupted
 * share it. Returns how many it marked, or -1. */
int sb_resultdb_mark_stale (sb_resultdb_t *self, const char *table, const char *update);

/* Batching on the caller's connection: while a batch is open every catalog
 * lookup (and, without a writer, every write) runs inside one transaction,
 * which sb_resultdb_flush_if_due ends once a second: per-statement locking
 * and page-cache revalidation would otherwise cost more than the work
 * itself at 10^6 lookups per second. A crash loses at most the last second
 * of rows, as DESIGN.md allows. Listing (catalog.c) runs with no batch
 * open. Return 0 or -1. */
int sb_resultdb_batch_begin (sb_resultdb_t *self);
int sb_resultdb_flush (sb_resultdb_t *self);
int sb_resultdb_flush_if_due (sb_resultdb_t *self);

/* The first failure of a write (or the last SQLite error of the handle);
 * borrowed. */
const char *sb_resultdb_errmsg (sb_resultdb_t *self);

/* ---- the session's remaining rows and read-backs (it
 * calls no sqlite3_* itself) */

/* Checkpoints (coordinator/session/ckpt_plan.h): one rank finished
 * checkpoint phase seq (op "write" | "read", checkpoint its number), a
 * checkpoint_ranks row with its duration and MB/s (NULL when the duration
 * is not positive). Queued to the writer. Returns 0 or -1 (sb_resultdb_errmsg). */
int sb_resultdb_add_ckpt_rank (sb_resultdb_t *self, int64_t run_id, uint64_t seq, const char *op, uint64_t checkpoint,
                               uint64_t rank, const char *host, uint64_t files, uint64_t bytes, double started_at,
                               double finished_at);
/* Every rank finished phase seq: its checkpoints row from the
 * checkpoint_ranks rows (duration = slowest rank, MLPerf Storage's "maximum
 * time across all processes"; throughput = bytes over that duration; the
 * slowest rank's MB/s), and DLIO's figures: dlio_bytes (the plan's count of
 * DLIO's checkpoint_size) over rank 0's own duration, or with rank_sync
 * over rank 0's start to the last rank's finish (DLIO's barrier before
 * rank 0 stops its clock). Returns 0 or -1. */
int sb_resultdb_close_ckpt (sb_resultdb_t *self, int64_t run_id, uint64_t seq, uint64_t dlio_bytes, int rank_sync);

/* Read-backs on the caller's connection, for the log lines and summaries
 * of a phase just recorded: rows queued to the writer are there after
 * sb_resultdb_sync (or sb_resultdb_flush without a writer). Each returns 1
 * with *t filled, 0 when there is no such row, -1 on error
 * (sb_resultdb_errmsg). A NULL column reads as 0. */
typedef struct {
    int64_t samples;        /* a datagen's epoch 0: files written */
    int64_t bytes;
    double  duration_s;     /* first rank's start to last rank's finish */
    double  mb_per_s;
} sb_epoch_totals_t;
int sb_resultdb_epoch_totals (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, sb_epoch_totals_t *t);

typedef struct {
    int64_t bytes;
    double  duration_s;     /* the slowest rank's */
    double  gib_per_s;
    int64_t dlio_bytes;     /* DLIO's checkpoint_size, its duration and GiB/s (sb_resultdb_close_ckpt) */
    double  dlio_duration_s, dlio_gib_per_s;
} sb_ckpt_totals_t;
int sb_resultdb_ckpt_totals (sb_resultdb_t *self, int64_t run_id, uint64_t seq, sb_ckpt_totals_t *t);

#endif
