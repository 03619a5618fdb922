/* results_dir_query: the SQL of the results directory
 * (coordinator/report/results_dir.h, and a KV-cache run's hosts, inputs and
 * overrides for coordinator/report/kv_results_dir.h). Each query is named by an
 * sb_rdq_t; its rows come to a callback as an array of values in the column
 * order the comment beside the name gives. Values are borrowed for the call
 * only. */
#ifndef SB_RESULTS_DIR_QUERY_H
#define SB_RESULTS_DIR_QUERY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { SB_RDQ_NULL, SB_RDQ_INT, SB_RDQ_REAL, SB_RDQ_TEXT } sb_rdq_type_t;

typedef struct {
    sb_rdq_type_t type;
    int64_t       i;        /* INT (and REAL truncated) */
    double        d;        /* REAL (and INT converted) */
    const char   *t;        /* TEXT; "" for any other type */
} sb_rdq_val_t;

typedef enum {
    /* kind, workload, config, status, error, started_at, finished_at, accelerators, hosts,
     * coordinator_host, record_size_bytes, au_threshold, workflow, train_au_mean_percentage,
     * train_au_stdev_percentage, train_au_meet_expectation, train_throughput_mean_samples_per_second,
     * train_throughput_stdev_samples_per_second, train_io_mean_MB_per_second, train_io_stdev_MB_per_second,
     * eval_au_mean_percentage, eval_au_stdev_percentage, eval_au_meet_expectation,
     * eval_throughput_mean_samples_per_second, eval_throughput_stdev_samples_per_second,
     * eval_io_mean_MB_per_second, eval_io_stdev_MB_per_second, workers, coordinator_pid */
    SB_RDQ_RUN,
    SB_RDQ_INPUTS,          /* version, command_line, full_config, df */
    SB_RDQ_OVERRIDES,       /* override (in order) */
    SB_RDQ_HOST_INFO,       /* host, processor, cpuinfo, meminfo */
    SB_RDQ_WORKERS,         /* host, ranks, first_rank, cores, memory (by first_rank) */
    SB_RDQ_EPOCHS,          /* epoch, train_au_percentage, train_throughput_samples_per_second (train epochs) */
    SB_RDQ_EVALS,           /* epoch, eval_au_percentage, eval_throughput_samples_per_second */
    /* rank, epoch, host, started_at, finished_at, dlio_au_percentage, dlio_throughput_samples_per_second
     * (by rank, epoch) */
    SB_RDQ_RANK_EPOCHS,
    /* rank, epoch, started_at, finished_at, dlio_au_percentage, dlio_throughput_samples_per_second */
    SB_RDQ_EVAL_RANKS,
    SB_RDQ_CHECKPOINTS,     /* seq, op, checkpoint, dlio_bytes, dlio_duration_s, dlio_gib_per_s (DLIO's) */
    /* rank, seq, op, checkpoint, started_at, finished_at, duration_s, bytes (by rank, seq), as DLIO's
     * per_epoch_stats time them: with rank_sync a rank finishes when the last does; bytes: the
     * checkpoint's DLIO size (dlio_bytes), which DLIO divides by each rank's time */
    SB_RDQ_CKPT_RANKS,
    SB_RDQ_ERRORS,          /* t, rank, host, op, target, message (in order) */
    SB_RDQ_RUNS_AFTER,      /* id, coordinator_host, coordinator_pid of the runs with id > the id given */
    SB_RDQ_LAST_ID,         /* the largest run id, 0 when none (the id given is not used) */
} sb_rdq_t;

/* fn returns 0 to go on, non-zero to stop (returned by sb_rdq_rows). */
typedef int (*sb_rdq_row_fn) (const sb_rdq_val_t *cols, int ncols, void *ctx);

/* Run query `which` for run_id, calling fn once per row. Returns 0 when
 * every row was passed, fn's non-zero value when it stopped, or -1 with the
 * SQLite error in err. */
int sb_rdq_rows (sqlite3 *db, sb_rdq_t which, int64_t run_id, sb_rdq_row_fn fn, void *ctx, char *err,
                 size_t err_size);

/* The run's kind (runs.kind: 'train', 'kvcache', ...) into kind, read
 * through SB_RDQ_RUN. Returns 1 when the run exists, 0 when it does not
 * (kind ""), or -1 with the SQLite error in err. */
int sb_rdq_run_kind (sqlite3 *db, int64_t run_id, char *kind, size_t kind_size, char *err, size_t err_size);

#endif
