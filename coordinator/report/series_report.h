/* series_report: runs as a series , read back from
 * the result database (coordinator/db/series_query.h): the summary printed
 * at the end of `shardbench run --runs N` and by `shardbench series`, as
 * text or JSON, and the list of `shardbench runs`.
 *
 * A series' figures are computed two ways over its measured runs (the
 * warm-up runs left out): the mean and population standard deviation across
 * the runs of each run's DLIO figure (AU %, samples/s, MB/s; MB as DLIO's,
 * 2^20 bytes), and the measured totals, every epoch's samples and bytes over
 * the epochs' summed time. The verdict applies MLPerf Storage's rules to the
 * series (sb_series_verdict). */
#ifndef SB_SERIES_REPORT_H
#define SB_SERIES_REPORT_H

#include "series_query.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* MLPerf Storage training: 6 run directories (submission checker rule
 * 2.1.17, RUN_TIMESTAMP_COUNT), of which reportgen counts at least 5
 * (REQUIRED_RUNS); the runs' start-to-start gap under 2 x the shortest run
 * (rule 2.1.18). Checkpointing: 10 writes and 10 reads (REQUIRED_WRITES,
 * REQUIRED_READS) in one invocation. */
#define SB_SERIES_TRAIN_RUNS 6
#define SB_SERIES_TRAIN_MEASURED 5
#define SB_SERIES_GAP_FACTOR 2
#define SB_SERIES_CKPT_OPS 10

/* The aggregate of a series' runs. */
typedef struct {
    size_t  runs, warmup, measured;     /* recorded; of them warm-up; of them measured with figures */
    /* across the measured runs (train: AU %, samples/s, MB/s; checkpoint:
     * write MB/s, read MB/s, -): mean and population stdev */
    double  mean[3], stdev[3];
    /* totals over the measured runs: train samples and bytes over the epochs'
     * summed time; checkpoint bytes over the summed durations per op */
    int64_t samples, bytes, ckpt_bytes[2];
    double  time_s, ckpt_time_s[2];
    double  total_samples_per_s, total_mb_per_s, total_ckpt_mb_per_s[2];
    /* the rules */
    int     all_succeeded;      /* every run recorded succeeded */
    int     count_ok;           /* train: 6 runs, >= 5 measured; checkpoint: every measured run 10 + 10 */
    int     au_ok;              /* train: every run (warm-up included) train_au_meet_expectation success */
    int     gap_ok;             /* train: every start-to-start gap < 2 x the shortest run */
    double  max_gap_s, shortest_s;  /* the largest gap (whole seconds, as the directory names), the shortest run */
    int     passed;
} sb_series_verdict_t;

/* Compute v from the runs of s (sb_series_runs, in series order). */
void sb_series_verdict (const sb_series_t *s, const sb_series_run_t *runs, size_t n, sb_series_verdict_t *v);

/* Print the summary of series series_id. Returns 0, or -1 when it does not
 * exist or SQLite fails (message on stderr). */
int sb_series_print (sqlite3 *db, int64_t series_id, FILE *out);
/* The same as one JSON object. */
int sb_series_json (sqlite3 *db, int64_t series_id, FILE *out);

/* Print every run of the database, oldest first, as a table (json 0) or a
 * JSON array. Returns 0 or -1 (message on stderr). */
int sb_runs_print (sqlite3 *db, int json, FILE *out);

#endif
