/* html_query: the queries behind a run's HTML page; see html_query.h. */
#include "html_query.h"
#include "report_query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prepare sql with run_id bound to ?1. Returns 0, or -1 (nothing to finalize). */
static int
s_prepare (sqlite3 *db, const char *sql, int64_t run_id, sqlite3_stmt **st)
{
    *st = NULL;
    if (sqlite3_prepare_v2 (db, sql, -1, st, NULL) != SQLITE_OK || sqlite3_bind_int64 (*st, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize (*st);
        *st = NULL;
        return -1;
    }
    return 0;
}

/* The result of stepping a statement to its end (finalized here): 1 when
 * fn stopped it, else 0 when step is SQLITE_DONE, or -1. */
static int
s_finish (sqlite3_stmt *st, int step, int stopped)
{
    sqlite3_finalize (st);
    return stopped ? 1 : step == SQLITE_DONE ? 0 : -1;
}

/* A real column, NAN when NULL. */
static double
s_real (sqlite3_stmt *st, int col)
{
    return sqlite3_column_type (st, col) == SQLITE_NULL ? NAN : sqlite3_column_double (st, col);
}

/* An owned copy of a text column, NULL when NULL. Returns 0, or -1 out of
 * memory. */
static int
s_dup (sqlite3_stmt *st, int col, char **out)
{
    *out = NULL;
    if (sqlite3_column_type (st, col) == SQLITE_NULL)
        return 0;
    const char *s = (const char *) sqlite3_column_text (st, col);
    if (!s || !(*out = strdup (s)))
        return -1;
    return 0;
}

/* The columns sb_html_run_origin reads, in order of preference per field:
 * fixed names, so they may be written into the SQL text. */
static const char *const s_command_cols[] = { "command_line", "command" };
static const char *const s_version_cols[] = { "shardbench_version", "version" };
static const char *const s_overrides_cols[] = { "overrides" };

/* The first of names[0..n-1] that is a column of runs (cols: the names
 * PRAGMA table_info gave, ncols of them), or NULL. */
static const char *
s_pick (const char *const *names, size_t n, char cols[][64], size_t ncols)
{
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < ncols; c++)
            if (!strcmp (names[i], cols[c]))
                return names[i];
    return NULL;
}

int
sb_html_run_origin (sqlite3 *db, int64_t run_id, sb_html_run_origin_t *o)
{
    memset (o, 0, sizeof *o);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (db, "SELECT name FROM pragma_table_info('runs')", -1, &st, NULL) != SQLITE_OK)
        return -1;
    char cols[256][64];
    size_t ncols = 0;
    int step;
    while ((step = sqlite3_step (st)) == SQLITE_ROW)
        if (ncols < sizeof cols / sizeof cols[0])
            snprintf (cols[ncols++], sizeof cols[0], "%s", sb_report_column_text (st, 0));
    sqlite3_finalize (st);
    if (step != SQLITE_DONE)
        return -1;
    const char *pick[3] = {
        s_pick (s_command_cols, sizeof s_command_cols / sizeof s_command_cols[0], cols, ncols),
        s_pick (s_version_cols, sizeof s_version_cols / sizeof s_version_cols[0], cols, ncols),
        s_pick (s_overrides_cols, sizeof s_overrides_cols / sizeof s_overrides_cols[0], cols, ncols),
    };
    o->has_command_line = pick[0] != NULL;
    o->has_version = pick[1] != NULL;
    o->has_overrides = pick[2] != NULL;
    if (!pick[0] && !pick[1] && !pick[2])
        return 0;
    /* a column absent selects NULL in its place */
    char sql[256];
    snprintf (sql, sizeof sql, "SELECT %s, %s, %s FROM runs WHERE id = ?1", pick[0] ? pick[0] : "NULL",
              pick[1] ? pick[1] : "NULL", pick[2] ? pick[2] : "NULL");
    if (s_prepare (db, sql, run_id, &st) != 0)
        return -1;
    step = sqlite3_step (st);
    int rc = 0;
    if (step == SQLITE_ROW) {
        char **out[3] = { &o->command_line, &o->version, &o->overrides };
        for (int c = 0; c < 3 && rc == 0; c++)
            rc = s_dup (st, c, out[c]);
    }
    else if (step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize (st);
    return rc;
}

void
sb_html_run_origin_fini (sb_html_run_origin_t *o)
{
    free (o->command_line);
    free (o->version);
    free (o->overrides);
    o->command_line = o->version = o->overrides = NULL;
}

int
sb_html_epoch_spans (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_html_epoch_span_t *e), void *ctx)
{
    sqlite3_stmt *st;
    if (s_prepare (db, "SELECT epoch, min(started_at), max(finished_at) FROM rank_epochs WHERE run_id = ?1"
                   " GROUP BY epoch ORDER BY epoch", run_id, &st) != 0)
        return -1;
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_html_epoch_span_t e = {
            .epoch = sqlite3_column_int64 (st, 0), .started_at = sqlite3_column_double (st, 1),
            .finished_at = sqlite3_column_double (st, 2),
        };
        stopped = fn (ctx, &e) != 0;
    }
    return s_finish (st, step, stopped);
}

int
sb_html_host_rows (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_html_host_row_t *r), void *ctx)
{
    sqlite3_stmt *st;
    if (s_prepare (db, "SELECT w.host, ts.rank, ts.t, ts.bytes FROM timeseries ts JOIN run_workers w"
                   " ON w.run_id = ts.run_id AND ts.rank >= w.first_rank AND ts.rank < w.first_rank + w.ranks"
                   " WHERE ts.run_id = ?1 ORDER BY ts.rank, ts.t", run_id, &st) != 0)
        return -1;
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_html_host_row_t r = {
            .host = sb_report_column_text (st, 0), .rank = sqlite3_column_int64 (st, 1),
            .t = sqlite3_column_double (st, 2), .bytes = sqlite3_column_int64 (st, 3),
        };
        stopped = fn (ctx, &r) != 0;
    }
    return s_finish (st, step, stopped);
}

int
sb_html_epoch_latency (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, int64_t epoch, int64_t low_us, int64_t count),
                       void *ctx)
{
    sqlite3_stmt *st;
    if (s_prepare (db, "SELECT epoch, bucket_low_us, count FROM read_latency WHERE run_id = ?1"
                   " ORDER BY epoch, bucket_low_us", run_id, &st) != 0)
        return -1;
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW)
        stopped = fn (ctx, sqlite3_column_int64 (st, 0), sqlite3_column_int64 (st, 1), sqlite3_column_int64 (st, 2)) != 0;
    return s_finish (st, step, stopped);
}

int
sb_html_endpoints (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_html_endpoint_t *e), void *ctx)
{
    sqlite3_stmt *st;
    if (s_prepare (db, "SELECT endpoint, requests, bytes, errors, retries, mean_ms, p50_ms, p90_ms, p99_ms, max_ms"
                   " FROM endpoints WHERE run_id = ?1 ORDER BY endpoint", run_id, &st) != 0)
        return -1;
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_html_endpoint_t e = {
            .endpoint = sb_report_column_text (st, 0), .requests = sqlite3_column_int64 (st, 1),
            .bytes = sqlite3_column_int64 (st, 2), .errors = sqlite3_column_int64 (st, 3),
            .retries = sqlite3_column_int64 (st, 4), .mean_ms = s_real (st, 5), .p50_ms = s_real (st, 6),
            .p90_ms = s_real (st, 7), .p99_ms = s_real (st, 8), .max_ms = s_real (st, 9),
        };
        stopped = fn (ctx, &e) != 0;
    }
    return s_finish (st, step, stopped);
}

int
sb_html_checkpoint_ranks (sqlite3 *db, int64_t run_id,
                          int (*fn) (void *ctx, const sb_html_checkpoint_rank_t *r), void *ctx)
{
    sqlite3_stmt *st;
    if (s_prepare (db, "SELECT seq, rank, checkpoint, files, bytes, op, host, duration_s, mb_per_s"
                   " FROM checkpoint_ranks WHERE run_id = ?1 ORDER BY rank, seq", run_id, &st) != 0)
        return -1;
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_html_checkpoint_rank_t r = {
            .seq = sqlite3_column_int64 (st, 0), .rank = sqlite3_column_int64 (st, 1),
            .checkpoint = sqlite3_column_int64 (st, 2), .files = sqlite3_column_int64 (st, 3),
            .bytes = sqlite3_column_int64 (st, 4), .op = sb_report_column_text (st, 5),
            .host = sb_report_column_text (st, 6), .duration_s = sqlite3_column_double (st, 7),
            .mb_per_s = s_real (st, 8),
        };
        stopped = fn (ctx, &r) != 0;
    }
    return s_finish (st, step, stopped);
}
