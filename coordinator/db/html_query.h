/* html_query: the queries behind a run's HTML page (report_html.c) that
 * report_query.h and export_query.h do not already answer, each returning
 * typed rows, so that the page code holds no SQL.
 *
 * db is a connection to a result database; it is borrowed. Every function
 * returns -1 when SQLite fails (sb_report_error (db) says why). The
 * functions that call fn for each row pass rows borrowed for the call; fn
 * returns 0 to go on, anything else to stop, and then the function returns
 * 1. */
#ifndef SB_HTML_QUERY_H
#define SB_HTML_QUERY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* What a run recorded about how it was started, from tables that
 * databases of older schemas lack (schema 13, run_inputs and
 * run_overrides; their absence, or that of a column, is no error). Owned
 * copies (free with sb_html_run_origin_fini), NULL when not recorded:
 *   version       run_inputs.version: the shardbench that ran it
 *   command_line  run_inputs.command_line
 *   full_config   run_inputs.full_config: the effective configuration with
 *                 every default filled in, YAML (runs.config: the keys given)
 *   overrides     run_overrides.override in order, one per line
 * has_inputs: the database has a run_inputs table (0: an older schema). */
typedef struct {
    char *version, *command_line, *full_config, *overrides;
    int   has_inputs;
} sb_html_run_origin_t;

/* Load them for run_id into *o (zeroed first; fini it whatever the
 * result). Returns 0 (a run that does not exist leaves the strings NULL),
 * or -1. */
int sb_html_run_origin (sqlite3 *db, int64_t run_id, sb_html_run_origin_t *o);
void sb_html_run_origin_fini (sb_html_run_origin_t *o);

/* One epoch's span: the first start and the last finish of its
 * rank_epochs rows (Unix seconds). */
typedef struct {
    int64_t epoch;
    double  started_at, finished_at;
} sb_html_epoch_span_t;

/* Call fn for each epoch of run_id that has rank_epochs rows, by epoch.
 * Returns 0, 1 when fn stopped it, or -1. */
int sb_html_epoch_spans (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_html_epoch_span_t *e), void *ctx);

/* One timeseries row with the host of its rank (run_workers): bytes read
 * by the rank in the interval that ended at t. */
typedef struct {
    const char *host;
    int64_t     rank, bytes;
    double      t;
} sb_html_host_row_t;

/* Call fn for each timeseries row of run_id whose rank a run_workers row
 * maps to a host, by rank and t (the order of the timeseries_run index: no
 * sort). Returns 0, 1 when fn stopped it, or -1. */
int sb_html_host_rows (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_html_host_row_t *r), void *ctx);

/* One checkpoint_ranks row; op and host "" when NULL, mb_per_s NAN when
 * NULL. */
typedef struct {
    int64_t     seq, rank, checkpoint, files, bytes;
    const char *op, *host;
    double      duration_s, mb_per_s;
} sb_html_checkpoint_rank_t;

/* Call fn for each checkpoint_ranks row of run_id by rank, then seq.
 * Returns 0, 1 when fn stopped it, or -1. */
int sb_html_checkpoint_ranks (sqlite3 *db, int64_t run_id,
                              int (*fn) (void *ctx, const sb_html_checkpoint_rank_t *r), void *ctx);

/* Call fn with each histogram bin of run_id's per-host read latency summed over
 * its epochs (host_read_latency, schema 12: a database without that table
 * has none), by host then low bound. Returns 0, 1 when fn stopped it, or
 * -1. */
int sb_html_host_latency (sqlite3 *db, int64_t run_id,
                          int (*fn) (void *ctx, const char *host, int64_t low_us, int64_t count), void *ctx);

/* A run's label and its place in a series (runs.label, series_id,
 * series_index, warmup; series.runs): label NULL (owned, free it) when
 * none, series_id 0 outside a series, warmup -1 when NULL. Returns 0 (all
 * empty when the run does not exist) or -1. */
typedef struct {
    char   *label;
    int64_t series_id, series_index, series_runs;
    int     warmup;
} sb_html_run_series_t;
int sb_html_run_series (sqlite3 *db, int64_t run_id, sb_html_run_series_t *s);

#endif
