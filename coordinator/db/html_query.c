/* html_query: the queries behind a run's HTML page; see html_query.h. */
#include "html_query.h"
#include "report_query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Whether table has column col (0 when the table does not exist). Returns
 * 1, 0, or -1. table and col are fixed names of this file. */
static int
s_has_column (sqlite3 *db, const char *table, const char *col)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_text (st, 1, table, -1, SQLITE_STATIC) != SQLITE_OK
        || sqlite3_bind_text (st, 2, col, -1, SQLITE_STATIC) != SQLITE_OK || sqlite3_step (st) != SQLITE_ROW) {
        sqlite3_finalize (st);
        return -1;
    }
    int has = sqlite3_column_int64 (st, 0) > 0;
    sqlite3_finalize (st);
    return has;
}

/* The text of the one-column, one-row query sql for run_id into *out (an
 * owned copy; NULL when there is no row or it is NULL). Returns 0 or -1. */
static int
s_one_text (sqlite3 *db, const char *sql, int64_t run_id, char **out)
{
    sqlite3_stmt *st;
    *out = NULL;
    if (sb_report_prepare (db, sql, run_id, &st) != 0)
        return -1;
    int step = sqlite3_step (st), rc = 0;
    if (step == SQLITE_ROW)
        rc = s_dup (st, 0, out);
    else if (step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize (st);
    return rc;
}

int
sb_html_run_origin (sqlite3 *db, int64_t run_id, sb_html_run_origin_t *o)
{
    memset (o, 0, sizeof *o);
    /* fixed column names, so they may be written into the SQL text */
    static const char *const cols[] = { "version", "command_line", "full_config" };
    char **out[] = { &o->version, &o->command_line, &o->full_config };
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        int has = s_has_column (db, "run_inputs", cols[i]);
        if (has < 0)
            return -1;
        if (!has)
            continue;
        o->has_inputs = 1;
        char sql[128];
        snprintf (sql, sizeof sql, "SELECT %s FROM run_inputs WHERE run_id = ?1", cols[i]);
        if (s_one_text (db, sql, run_id, out[i]) != 0)
            return -1;
    }
    int has = s_has_column (db, "run_overrides", "override");
    if (has < 0)
        return -1;
    if (has && s_one_text (db, "SELECT group_concat(override, char(10)) FROM (SELECT override FROM run_overrides"
                           " WHERE run_id = ?1 ORDER BY seq)", run_id, &o->overrides) != 0)
        return -1;
    return 0;
}

void
sb_html_run_origin_fini (sb_html_run_origin_t *o)
{
    free (o->version);
    free (o->command_line);
    free (o->full_config);
    free (o->overrides);
    o->version = o->command_line = o->full_config = o->overrides = NULL;
}

int
sb_html_epoch_spans (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_html_epoch_span_t *e), void *ctx)
{
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT epoch, min(started_at), max(finished_at) FROM rank_epochs WHERE run_id = ?1"
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
    return sb_report_step_end (st, step, stopped);
}

/* The ranks of one run_workers row. */
typedef struct {
    char   *host;
    int64_t first, ranks;
} s_worker_t;

int
sb_html_host_rows (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_html_host_row_t *r), void *ctx)
{
    /* the workers first, then the rows alone: mapping ranks to hosts here
     * rather than joining in SQL saves a join per row of a table that may
     * hold millions */
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT host, first_rank, ranks FROM run_workers WHERE run_id = ?1 ORDER BY first_rank",
                           run_id, &st) != 0)
        return -1;
    s_worker_t *w = NULL;
    size_t nw = 0;
    int step, rc = -1;
    while ((step = sqlite3_step (st)) == SQLITE_ROW) {
        s_worker_t *more = realloc (w, (nw + 1) * sizeof *w);
        if (!more)
            break;
        w = more;
        w[nw] = (s_worker_t) { .first = sqlite3_column_int64 (st, 1), .ranks = sqlite3_column_int64 (st, 2) };
        if (s_dup (st, 0, &w[nw].host) != 0 || !w[nw].host)
            break;
        nw++;
    }
    sqlite3_finalize (st);
    if (step != SQLITE_DONE)
        goto done;
    if (sb_report_prepare (db, "SELECT rank, t, bytes FROM timeseries WHERE run_id = ?1 ORDER BY rank, t",
                           run_id, &st) != 0)
        goto done;
    int stopped = 0;
    int64_t rank = -1;
    const char *host = NULL;    /* of rank; NULL: no worker has it */
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_html_host_row_t r = {
            .rank = sqlite3_column_int64 (st, 0), .t = sqlite3_column_double (st, 1),
            .bytes = sqlite3_column_int64 (st, 2),
        };
        if (r.rank != rank || !host) {
            rank = r.rank;
            host = NULL;
            for (size_t i = 0; i < nw && !host; i++)
                if (r.rank >= w[i].first && r.rank - w[i].first < w[i].ranks)
                    host = w[i].host;
        }
        if (!host)
            continue;
        r.host = host;
        stopped = fn (ctx, &r) != 0;
    }
    rc = sb_report_step_end (st, step, stopped);
done:
    for (size_t i = 0; i < nw; i++)
        free (w[i].host);
    free (w);
    return rc;
}

int
sb_html_checkpoint_ranks (sqlite3 *db, int64_t run_id,
                          int (*fn) (void *ctx, const sb_html_checkpoint_rank_t *r), void *ctx)
{
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT seq, rank, checkpoint, files, bytes, op, host, duration_s, mb_per_s"
                           " FROM checkpoint_ranks WHERE run_id = ?1 ORDER BY rank, seq", run_id, &st) != 0)
        return -1;
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_html_checkpoint_rank_t r = {
            .seq = sqlite3_column_int64 (st, 0), .rank = sqlite3_column_int64 (st, 1),
            .checkpoint = sqlite3_column_int64 (st, 2), .files = sqlite3_column_int64 (st, 3),
            .bytes = sqlite3_column_int64 (st, 4), .op = sb_report_column_text (st, 5),
            .host = sb_report_column_text (st, 6), .duration_s = sqlite3_column_double (st, 7),
            .mb_per_s = sb_report_real (st, 8),
        };
        stopped = fn (ctx, &r) != 0;
    }
    return sb_report_step_end (st, step, stopped);
}

int
sb_html_host_latency (sqlite3 *db, int64_t run_id,
                      int (*fn) (void *ctx, const char *host, int64_t low_us, int64_t count), void *ctx)
{
    int has = s_has_column (db, "host_read_latency", "bin_low_us");
    if (has <= 0)
        return has;
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT host, bin_low_us, sum(count) FROM host_read_latency WHERE run_id = ?1"
                           " GROUP BY host, bin_low_us ORDER BY host, bin_low_us", run_id, &st) != 0)
        return -1;
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW)
        stopped = fn (ctx, sb_report_column_text (st, 0), sqlite3_column_int64 (st, 1), sqlite3_column_int64 (st, 2)) != 0;
    return sb_report_step_end (st, step, stopped);
}

int
sb_html_run_series (sqlite3 *db, int64_t run_id, sb_html_run_series_t *s)
{
    memset (s, 0, sizeof *s);
    s->warmup = -1;
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT r.label, r.series_id, r.series_index, r.warmup, s.runs FROM runs r"
                           " LEFT JOIN series s ON s.id = r.series_id WHERE r.id = ?1", run_id, &st) != 0)
        return -1;
    int step = sqlite3_step (st), rc = 0;
    if (step == SQLITE_ROW) {
        rc = s_dup (st, 0, &s->label);
        s->series_id = sqlite3_column_int64 (st, 1);
        s->series_index = sqlite3_column_int64 (st, 2);
        if (sqlite3_column_type (st, 3) != SQLITE_NULL)
            s->warmup = (int) sqlite3_column_int64 (st, 3);
        s->series_runs = sqlite3_column_int64 (st, 4);
    }
    else if (step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize (st);
    return rc;
}
