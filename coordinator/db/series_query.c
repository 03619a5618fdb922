/* series_query: the series table and the series columns of runs
 * (series_query.h). */
#include "series_query.h"
#include "report_query.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
s_copy (char *dst, size_t size, const unsigned char *src)
{
    snprintf (dst, size, "%s", src ? (const char *) src : "");
}

int64_t
sb_series_begin (sb_resultdb_t *rdb, const sb_series_info_t *info, char *err, size_t err_size)
{
    sqlite3 *db = sb_resultdb_handle (rdb);
    sqlite3_stmt *st = NULL;
    int64_t id = -1;
    if (sqlite3_prepare_v2 (db, "INSERT INTO series (kind, workload, label, runs, warmup, status, started_at,"
                            " coordinator_host, coordinator_pid) VALUES (?,?,?,?,?,'running',?,?,?)", -1, &st,
                            NULL) == SQLITE_OK
        && sqlite3_bind_text (st, 1, info->kind, -1, SQLITE_STATIC) == SQLITE_OK
        && sqlite3_bind_text (st, 2, info->workload, -1, SQLITE_STATIC) == SQLITE_OK
        && (info->label ? sqlite3_bind_text (st, 3, info->label, -1, SQLITE_STATIC)
                        : sqlite3_bind_null (st, 3)) == SQLITE_OK
        && sqlite3_bind_int64 (st, 4, (sqlite3_int64) info->runs) == SQLITE_OK
        && sqlite3_bind_int64 (st, 5, (sqlite3_int64) info->warmup) == SQLITE_OK
        && sqlite3_bind_double (st, 6, sb_now ()) == SQLITE_OK
        && sqlite3_bind_text (st, 7, sb_resultdb_hostname (), -1, SQLITE_STATIC) == SQLITE_OK
        && sqlite3_bind_int64 (st, 8, (sqlite3_int64) getpid ()) == SQLITE_OK
        && sqlite3_step (st) == SQLITE_DONE)
        id = sqlite3_last_insert_rowid (db);
    else
        snprintf (err, err_size, "%s: cannot record the series: %s", sb_resultdb_path (rdb), sqlite3_errmsg (db));
    sqlite3_finalize (st);
    return id;
}

int
sb_series_tag_run (sb_resultdb_t *db, int64_t run_id, const char *label, int64_t series_id, uint64_t index,
                   int warmup)
{
    if (series_id > 0)
        return sb_resultdb_exec (db, "UPDATE runs SET label = ?, series_id = ?, series_index = ?, warmup = ?"
                                 " WHERE id = ?", "tiiii", label, series_id, (int64_t) index, (int64_t) !!warmup,
                                 run_id);
    return sb_resultdb_exec (db, "UPDATE runs SET label = ? WHERE id = ?", "ti", label, run_id);
}

int
sb_series_finish (sb_resultdb_t *db, int64_t series_id, const char *status)
{
    if (sb_resultdb_exec (db, "UPDATE series SET status = ?, finished_at = ? WHERE id = ?", "tdi", status, sb_now (),
                          series_id) != 0)
        return -1;
    sb_resultdb_flush (db);
    return sb_resultdb_sync (db);
}

int
sb_series_mark_interrupted (sb_resultdb_t *rdb)
{
    /* it ended with the last of its runs, as far as anyone knows */
    return sb_resultdb_mark_stale (rdb, "series",
                                   "UPDATE series SET status = 'interrupted', finished_at = max(started_at,"
                                   " coalesce((SELECT max(finished_at) FROM runs WHERE series_id = ?1), 0))"
                                   " WHERE id = ?1");
}

int
sb_series_get (sqlite3 *db, int64_t id, sb_series_t *s)
{
    sqlite3_stmt *st = NULL;
    memset (s, 0, sizeof *s);
    if (sqlite3_prepare_v2 (db, "SELECT id, kind, workload, label, runs, warmup, status, started_at,"
                            " coalesce(finished_at, -1) FROM series WHERE id = ?", -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (st, 1, id) != SQLITE_OK) {
        sqlite3_finalize (st);
        return -1;
    }
    int rc = sqlite3_step (st), found = 0;
    if (rc == SQLITE_ROW) {
        s->id = sqlite3_column_int64 (st, 0);
        s_copy (s->kind, sizeof s->kind, sqlite3_column_text (st, 1));
        s_copy (s->workload, sizeof s->workload, sqlite3_column_text (st, 2));
        s->has_label = sqlite3_column_type (st, 3) != SQLITE_NULL;
        s_copy (s->label, sizeof s->label, sqlite3_column_text (st, 3));
        s->runs = (uint64_t) sqlite3_column_int64 (st, 4);
        s->warmup = (uint64_t) sqlite3_column_int64 (st, 5);
        s_copy (s->status, sizeof s->status, sqlite3_column_text (st, 6));
        s->started_at = sqlite3_column_double (st, 7);
        s->finished_at = sqlite3_column_double (st, 8);
        found = 1;
    }
    else if (rc != SQLITE_DONE)
        found = -1;
    sqlite3_finalize (st);
    return found;
}

int64_t
sb_series_last (sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int64_t id = -1;
    if (sqlite3_prepare_v2 (db, "SELECT coalesce(max(id), 0) FROM series", -1, &st, NULL) == SQLITE_OK
        && sqlite3_step (st) == SQLITE_ROW)
        id = sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
    return id;
}

int
sb_series_runs (sqlite3 *db, int64_t series_id, sb_series_run_t **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    static const char sql[] =
        "SELECT r.id, r.kind, r.workload, r.label, r.status, r.train_au_meet_expectation, r.series_id,"
        " r.series_index, r.warmup, r.passed, r.started_at, r.finished_at, r.train_au_mean_percentage,"
        " r.train_throughput_mean_samples_per_second, r.train_io_mean_MB_per_second, r.au_threshold,"
        " (SELECT count(*) FROM epochs e WHERE e.run_id = r.id AND e.epoch > 0),"
        " (SELECT coalesce(sum(samples), 0) FROM epochs e WHERE e.run_id = r.id AND e.epoch > 0),"
        " (SELECT coalesce(sum(bytes), 0) FROM epochs e WHERE e.run_id = r.id AND e.epoch > 0),"
        " (SELECT coalesce(sum(duration_s), 0) FROM epochs e WHERE e.run_id = r.id AND e.epoch > 0),"
        " (SELECT count(*) FROM checkpoints c WHERE c.run_id = r.id AND c.op = 'write'),"
        " (SELECT coalesce(sum(bytes), 0) FROM checkpoints c WHERE c.run_id = r.id AND c.op = 'write'),"
        " (SELECT coalesce(sum(duration_s), 0) FROM checkpoints c WHERE c.run_id = r.id AND c.op = 'write'),"
        " (SELECT count(*) FROM checkpoints c WHERE c.run_id = r.id AND c.op = 'read'),"
        " (SELECT coalesce(sum(bytes), 0) FROM checkpoints c WHERE c.run_id = r.id AND c.op = 'read'),"
        " (SELECT coalesce(sum(duration_s), 0) FROM checkpoints c WHERE c.run_id = r.id AND c.op = 'read'),"
        " (SELECT storage_check FROM kv_runs k WHERE k.run_id = r.id)"
        " FROM runs r WHERE ?1 <= 0 OR r.series_id = ?1"
        " ORDER BY CASE WHEN ?1 > 0 THEN r.series_index ELSE r.id END, r.id";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_bind_int64 (st, 1, series_id) != SQLITE_OK) {
        sqlite3_finalize (st);
        return -1;
    }
    sb_series_run_t *v = NULL;
    size_t count = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
        if (count == cap) {
            size_t grown_cap = cap ? 2 * cap : 16;
            sb_series_run_t *grown = realloc (v, grown_cap * sizeof *grown);
            if (!grown) {
                rc = SQLITE_NOMEM;
                break;
            }
            v = grown;
            cap = grown_cap;
        }
        sb_series_run_t *r = &v[count++];
        memset (r, 0, sizeof *r);
        r->id = sqlite3_column_int64 (st, 0);
        s_copy (r->kind, sizeof r->kind, sqlite3_column_text (st, 1));
        s_copy (r->workload, sizeof r->workload, sqlite3_column_text (st, 2));
        r->has_label = sqlite3_column_type (st, 3) != SQLITE_NULL;
        s_copy (r->label, sizeof r->label, sqlite3_column_text (st, 3));
        s_copy (r->status, sizeof r->status, sqlite3_column_text (st, 4));
        s_copy (r->meet, sizeof r->meet, sqlite3_column_text (st, 5));
        r->series_id = sqlite3_column_int64 (st, 6);
        r->series_index = sqlite3_column_int64 (st, 7);
        r->warmup = sqlite3_column_type (st, 8) == SQLITE_NULL ? -1 : sqlite3_column_int (st, 8) != 0;
        r->passed = sqlite3_column_type (st, 9) == SQLITE_NULL ? -1 : sqlite3_column_int (st, 9) != 0;
        r->started_at = sqlite3_column_double (st, 10);
        r->finished_at = sb_report_real (st, 11);
        r->au_percentage = sb_report_real (st, 12);
        r->samples_per_s = sb_report_real (st, 13);
        r->mb_per_s = sb_report_real (st, 14);
        r->au_threshold = sb_report_real (st, 15);
        r->epochs = sqlite3_column_int64 (st, 16);
        r->samples = sqlite3_column_int64 (st, 17);
        r->bytes = sqlite3_column_int64 (st, 18);
        r->epoch_time_s = sqlite3_column_double (st, 19);
        for (int op = 0; op < 2; op++) {
            r->ckpt_count[op] = sqlite3_column_int64 (st, 20 + 3 * op);
            r->ckpt_bytes[op] = sqlite3_column_int64 (st, 21 + 3 * op);
            r->ckpt_time_s[op] = sqlite3_column_double (st, 22 + 3 * op);
        }
        s_copy (r->kv_storage_check, sizeof r->kv_storage_check, sqlite3_column_text (st, 26));
    }
    sqlite3_finalize (st);
    if (rc != SQLITE_DONE) {
        free (v);
        return -1;
    }
    *rows = v;
    *n = count;
    return 0;
}
