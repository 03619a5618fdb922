/* kv_export_query: the statements behind a KV-cache run's CSV views (see
 * kv_export_query.h). Every column has its AS name: SQLite leaves the name
 * of a column without one unspecified, and the names are the CSV header. */
#include "kv_export_query.h"
#include "report_query.h"

#include <stdlib.h>

/* column c of table alias a, named c */
#define S_COL(a, c) a "." #c " AS " #c

/* the largest over a trial's ranks of percentile p of kv_latency what w */
#define S_TRIAL_MAX(w, p)                                                                                              \
    " (SELECT max(l." #p "_ms) FROM kv_latency l WHERE l.run_id = t.run_id AND l.trial = t.trial AND l.what = '" w   \
    "') AS " w "_" #p "_ms"

static const char s_trials_sql[] =
    "SELECT " S_COL ("t", run_id) ", " S_COL ("t", trial) ", " S_COL ("t", started_at) ", " S_COL ("t", finished_at)
    ", " S_COL ("t", ranks) ", " S_COL ("t", requests) ", " S_COL ("t", generated) ", "
    S_COL ("t", storage_read_bytes) ", " S_COL ("t", storage_write_bytes) ", " S_COL ("t", read_gib_per_s) ", "
    S_COL ("t", write_gib_per_s) ", " S_COL ("t", storage_p95_ms) ","
    S_TRIAL_MAX ("write_device", p50) "," S_TRIAL_MAX ("write_device", p95) "," S_TRIAL_MAX ("write_device", p99) ","
    S_TRIAL_MAX ("read_device", p50) "," S_TRIAL_MAX ("read_device", p95) "," S_TRIAL_MAX ("read_device", p99) ","
    /* as the text summary: each rank's tokens over its own window, summed */
    " (SELECT total(CAST(k.generated AS REAL) / k.elapsed_s) FROM kv_ranks k WHERE k.run_id = t.run_id"
    "   AND k.trial = t.trial AND k.elapsed_s > 0) AS tokens_per_s"
    " FROM kv_trials t WHERE t.run_id = ?1 ORDER BY t.trial";

/* the six figures of kv_latency row alias a, named w_... */
#define S_LAT(a, w)                                                                                                    \
    ", " a ".mean_ms AS " w "_mean_ms, " a ".p50_ms AS " w "_p50_ms, " a ".p95_ms AS " w "_p95_ms, " a               \
    ".p99_ms AS " w "_p99_ms, " a ".p999_ms AS " w "_p999_ms, " a ".p9999_ms AS " w "_p9999_ms"
#define S_LAT_JOIN(a, w)                                                                                               \
    " LEFT JOIN kv_latency " a " ON " a ".run_id = r.run_id AND " a ".trial = r.trial AND " a ".rank = r.rank AND " a \
    ".what = '" w "'"

static const char s_ranks_sql[] =
    "SELECT " S_COL ("r", run_id) ", " S_COL ("r", trial) ", " S_COL ("r", rank) ", " S_COL ("r", host) ", "
    S_COL ("r", elapsed_s) ", " S_COL ("r", started_at) ", " S_COL ("r", finished_at) ", " S_COL ("r", requests) ", " S_COL ("r", generated) ", " S_COL ("r", chatbot) ", "
    S_COL ("r", coding) ", " S_COL ("r", document) ", " S_COL ("r", interactive) ", " S_COL ("r", responsive) ", "
    S_COL ("r", batch) ", " S_COL ("r", users_chatbot) ", " S_COL ("r", users_coding) ", "
    S_COL ("r", users_document) ", " S_COL ("r", users_interactive) ", " S_COL ("r", users_responsive) ", "
    S_COL ("r", users_batch) ", " S_COL ("r", write_ops) ", " S_COL ("r", read_ops) ", " S_COL ("r", prefill_writes)
    ", " S_COL ("r", decode_reads) ", " S_COL ("r", cache_hits) ", " S_COL ("r", cache_misses) ", "
    S_COL ("r", multi_turn_hits) ", " S_COL ("r", multi_turn_misses) ", " S_COL ("r", storage_entries) ", "
    S_COL ("r", cpu_entries) ", " S_COL ("r", evictions) ", " S_COL ("r", offloads_cpu) ", "
    S_COL ("r", offloads_storage) ", " S_COL ("r", system_prompt_hits) ", " S_COL ("r", queue_max) ", "
    S_COL ("r", storage_write_bytes) ", " S_COL ("r", storage_read_bytes) ", " S_COL ("r", cpu_write_bytes) ", "
    S_COL ("r", cpu_read_bytes) ", " S_COL ("r", read_gib_per_s) ", " S_COL ("r", write_gib_per_s) ", "
    S_COL ("r", storage_check)
    S_LAT ("wd", "write_device") S_LAT ("rd", "read_device") S_LAT ("rs", "request_storage") S_LAT ("re", "request_e2e")
    " FROM kv_ranks r" S_LAT_JOIN ("wd", "write_device") S_LAT_JOIN ("rd", "read_device")
    S_LAT_JOIN ("rs", "request_storage") S_LAT_JOIN ("re", "request_e2e")
    " WHERE r.run_id = ?1 ORDER BY r.trial, r.rank";

static const char s_latency_sql[] =
    "SELECT " S_COL ("l", run_id) ", " S_COL ("l", trial) ", " S_COL ("l", rank) ", " S_COL ("l", what) ", "
    S_COL ("l", mean_ms) ", " S_COL ("l", p50_ms) ", " S_COL ("l", p95_ms) ", " S_COL ("l", p99_ms) ", "
    S_COL ("l", p999_ms) ", " S_COL ("l", p9999_ms)
    " FROM kv_latency l WHERE l.run_id = ?1 ORDER BY l.trial, l.rank, l.what";

static const char s_run_sql[] =
    "SELECT r.id AS run_id, " S_COL ("r", kind) ", " S_COL ("r", workload) ", " S_COL ("r", status) ", "
    S_COL ("r", error) ", " S_COL ("r", started_at) ", " S_COL ("r", finished_at) ", " S_COL ("r", accelerators) ", "
    S_COL ("r", hosts) ", " S_COL ("r", workers) ", " S_COL ("k", option) ", " S_COL ("k", model) ", "
    S_COL ("k", users) ", " S_COL ("k", duration_s) ", " S_COL ("k", trials) ", " S_COL ("k", cpu_mem_gb) ", "
    S_COL ("k", max_concurrent_allocs) ", " S_COL ("k", seed) ", " S_COL ("k", generation_mode) ", "
    S_COL ("k", kv_bytes_per_position) ", " S_COL ("k", storage_check) ", " S_COL ("k", read_gib_per_s) ", "
    S_COL ("k", write_gib_per_s) ", " S_COL ("k", storage_p95_ms) ","
    " (SELECT count(*) FROM kv_trials t WHERE t.run_id = r.id) AS trials_finished,"
    " (SELECT coalesce(sum(t.requests), 0) FROM kv_trials t WHERE t.run_id = r.id) AS requests"
    " FROM runs r LEFT JOIN kv_runs k ON k.run_id = r.id WHERE r.id = ?1";

int
sb_kv_export_view (sqlite3 *db, int64_t run_id, sb_kv_view_t view,
                   int (*header) (void *ctx, const char *const *names, size_t ncols),
                   int (*row) (void *ctx, const sb_kv_cell_t *cells, size_t ncols), void *ctx)
{
    const char *sql = view == SB_KV_VIEW_TRIALS ? s_trials_sql
                    : view == SB_KV_VIEW_RANKS  ? s_ranks_sql
                    : view == SB_KV_VIEW_LATENCY ? s_latency_sql
                    : s_run_sql;
    sqlite3_stmt *st;
    if (sb_report_prepare (db, sql, run_id, &st) != 0)
        return -1;
    size_t ncols = (size_t) sqlite3_column_count (st);
    const char **names = calloc (ncols + 1, sizeof *names);
    sb_kv_cell_t *cells = calloc (ncols + 1, sizeof *cells);
    if (!names || !cells) {
        free (names);
        free (cells);
        sqlite3_finalize (st);
        return -1;
    }
    int stopped = 0, step = SQLITE_DONE;
    for (size_t c = 0; c < ncols; c++)
        names[c] = sqlite3_column_name (st, (int) c);
    for (size_t c = 0; c < ncols; c++)
        if (!names[c])
            goto oom;
    stopped = header (ctx, names, ncols) != 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        for (size_t c = 0; c < ncols; c++) {
            sb_kv_cell_t *x = &cells[c];
            int col = (int) c;
            switch (sqlite3_column_type (st, col)) {
            case SQLITE_NULL:
                x->type = SB_KV_CELL_NULL;
                break;
            case SQLITE_INTEGER:
                x->type = SB_KV_CELL_INT;
                x->i = sqlite3_column_int64 (st, col);
                break;
            case SQLITE_FLOAT:
                x->type = SB_KV_CELL_REAL;
                x->d = sqlite3_column_double (st, col);
                break;
            default:
                x->type = SB_KV_CELL_TEXT;
                x->s = (const char *) sqlite3_column_text (st, col);
                if (!x->s)
                    goto oom;
            }
        }
        stopped = row (ctx, cells, ncols) != 0;
    }
    free (names);
    free (cells);
    return sb_report_step_end (st, step, stopped);
oom:
    free (names);
    free (cells);
    sqlite3_finalize (st);
    return -1;
}
