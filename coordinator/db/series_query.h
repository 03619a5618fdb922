/* series_query: the SQL of runs as a series:
 * `shardbench run|checkpoint --runs N --warmup K --label TEXT` records a
 * series row and tags each of its runs (runs.series_id, series_index,
 * warmup, label; schemas/results.sql); `shardbench series` and `shardbench
 * runs` read them back as typed rows, so that the printing code
 * (coordinator/report/series_report.c) holds no SQL.
 *
 * The writers take the result database (resultdb.h); the readers a borrowed
 * SQLite connection (sb_resultdb_handle, or a read-only one). Every function
 * returns -1 when SQLite fails; sqlite3_errmsg (db) says why. */
#ifndef SB_SERIES_QUERY_H
#define SB_SERIES_QUERY_H

#include "resultdb.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *kind;       /* "train" | "checkpoint" */
    const char *workload;
    const char *label;      /* NULL: none */
    uint64_t    runs, warmup;
} sb_series_info_t;

/* Insert a series with status 'running' on the caller's connection, at once:
 * call it before sb_resultdb_start_writer. Returns its id, or -1 with err. */
int64_t sb_series_begin (sb_resultdb_t *db, const sb_series_info_t *info, char *err, size_t err_size);

/* Tag run_id: its label (NULL: none) and, with series_id > 0, its place in
 * that series (1-based index, warm-up or not). Queued like every row. */
int sb_series_tag_run (sb_resultdb_t *db, int64_t run_id, const char *label, int64_t series_id, uint64_t index,
                       int warmup);

/* Close a series: status ('succeeded' | 'failed' | 'aborted') and its end,
 * then wait until it is written. Returns 0 or -1 (sb_resultdb_errmsg). */
int sb_series_finish (sb_resultdb_t *db, int64_t series_id, const char *status);

/* Mark the series left 'running' by a coordinator of this host that is gone
 * as 'interrupted' (as sb_resultdb_mark_interrupted does for runs); returns
 * how many, or -1. */
int sb_series_mark_interrupted (sb_resultdb_t *db);

/* One series row. Strings are copies inside the struct (truncated). */
typedef struct {
    int64_t  id;
    char     kind[16], workload[1024], label[256], status[16];
    int      has_label;
    uint64_t runs, warmup;
    double   started_at, finished_at;   /* finished_at < 0: not finished */
} sb_series_t;

/* The series id: 1 and *s, 0 when there is none, -1. */
int sb_series_get (sqlite3 *db, int64_t id, sb_series_t *s);
/* Id of the newest series, 0 when there is none, -1. */
int64_t sb_series_last (sqlite3 *db);

/* One run as the series summary and `shardbench runs` show it. Figures a
 * run lacks (NULL columns, a run of another kind) are NAN; counts are 0. */
typedef struct {
    int64_t  id;
    char     kind[16], workload[1024], label[256], status[16], meet[16];
    int      has_label;
    int64_t  series_id;                 /* 0: none */
    int64_t  series_index;              /* 0: none */
    int      warmup;                    /* 1, 0, or -1 outside a series */
    int      passed;                    /* runs.passed: 1, 0, -1 NULL */
    double   started_at, finished_at;   /* finished_at NAN: not finished */
    /* train: DLIO's run figures (runs.train_*) */
    double   au_percentage, samples_per_s, mb_per_s, au_threshold;
    /* train: the epochs' totals (shardbench's measured figures) */
    int64_t  epochs, samples, bytes;
    double   epoch_time_s;              /* sum of epochs.duration_s */
    /* checkpoint: the checkpoints rows by op (index 0 write, 1 read) */
    int64_t  ckpt_count[2], ckpt_bytes[2];
    double   ckpt_time_s[2];            /* sum of checkpoints.duration_s */
    /* kvcache: kv_runs.storage_check ("" when the run has no kv_runs row) */
    char     kv_storage_check[16];
} sb_series_run_t;

/* The runs of series series_id in series order (series_id <= 0: every run of
 * the database, oldest first) into *rows (caller frees) and *n. Returns 0,
 * or -1 (nothing to free). */
int sb_series_runs (sqlite3 *db, int64_t series_id, sb_series_run_t **rows, size_t *n);

#endif
