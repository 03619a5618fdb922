/* report: summaries from the result database. */
#include "report.h"
#include "checkpoint.h"
#include "workload.h"

#include <string.h>

int64_t
sb_report_last_run (sqlite3 *db, const char *kind)
{
    sqlite3_stmt *st = NULL;
    int64_t id = -1;
    const char *sql = kind ? "SELECT max(id) FROM runs WHERE kind = ?" : "SELECT max(id) FROM runs";
    if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) == SQLITE_OK
        && (!kind || sqlite3_bind_text (st, 1, kind, -1, SQLITE_STATIC) == SQLITE_OK)
        && sqlite3_step (st) == SQLITE_ROW && sqlite3_column_type (st, 0) != SQLITE_NULL)
        id = sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
    return id;
}

const char *
sb_report_column_text (sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text (st, col);
    return t ? (const char *) t : "";
}


int
sb_report_print (sqlite3 *db, int64_t run_id, FILE *out)
{
    sqlite3_stmt *run = NULL, *ep = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2 (db,
                            "SELECT kind, workload, status, error, accelerators, hosts, workers, seed, au_threshold,"
                            " au_mean, passed, finished_at - started_at, config, db_locked_s FROM runs WHERE id = ?", -1, &run, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (run, 1, run_id) != SQLITE_OK) {
        fprintf (stderr, "shardbench: report: %s\n", sqlite3_errmsg (db));
        goto done;
    }
    if (sqlite3_step (run) != SQLITE_ROW) {
        fprintf (stderr, "shardbench: report: no run %lld in this database\n", (long long) run_id);
        goto done;
    }
    const char *kind = sb_report_column_text (run, 0);
    int train = strcmp (kind, "train") == 0, ckpt = strcmp (kind, "checkpoint") == 0;
    char model[128];    /* model.name of runs.config: what DLIO calls the workload */
    sb_workload_model_name ((const char *) sqlite3_column_text (run, 12), model, sizeof model);
    fprintf (out, "\nshardbench %s run %lld: workload %s (model %s), %lld accelerators on %lld workers (%lld hosts),"
             " seed %lld\n", kind, (long long) run_id, sb_report_column_text (run, 1), model, sqlite3_column_int64 (run, 4),
             sqlite3_column_int64 (run, 6), sqlite3_column_int64 (run, 5), sqlite3_column_int64 (run, 7));
    if (sqlite3_prepare_v2 (db,
                            "SELECT epoch, samples, dropped, bytes, duration_s, samples_per_s, mib_per_s, au_mean, batches,"
                            " barrier_p50_ms, barrier_p99_ms, barrier_own_p50_ms"
                            " FROM epochs WHERE run_id = ? ORDER BY epoch", -1, &ep, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (ep, 1, run_id) != SQLITE_OK) {
        fprintf (stderr, "shardbench: report: %s\n", sqlite3_errmsg (db));
        goto done;
    }
    if (train)
        fprintf (out, "  %5s %10s %8s %7s %10s %12s %10s %8s %17s %11s\n", "epoch", "samples", "dropped", "steps",
                 "time s", "samples/s", "MiB/s", "AU %", "barrier p50/p99 ms", "own p50 ms");
    else if (!ckpt)
        fprintf (out, "  %5s %10s %12s %10s %12s %10s\n", "", "files", "MiB", "time s", "files/s", "MiB/s");
    while (sqlite3_step (ep) == SQLITE_ROW) {
        if (train)
        {
            char barrier[48] = "-", own[32] = "-";
            if (sqlite3_column_type (ep, 9) != SQLITE_NULL)
                snprintf (barrier, sizeof barrier, "%.3f/%.3f", sqlite3_column_double (ep, 9),
                          sqlite3_column_double (ep, 10));
            if (sqlite3_column_type (ep, 11) != SQLITE_NULL)     /* the barrier's own cost (no waiting for ranks) */
                snprintf (own, sizeof own, "%.3f", sqlite3_column_double (ep, 11));
            fprintf (out, "  %5lld %10lld %8lld %7lld %10.3f %12.1f %10.1f %8.2f %17s %11s\n",
                     sqlite3_column_int64 (ep, 0), sqlite3_column_int64 (ep, 1), sqlite3_column_int64 (ep, 2),
                     sqlite3_column_int64 (ep, 8), sqlite3_column_double (ep, 4), sqlite3_column_double (ep, 5),
                     sqlite3_column_double (ep, 6), 100 * sqlite3_column_double (ep, 7), barrier, own);
        }
        else
            fprintf (out, "  %5s %10lld %12.1f %10.3f %12.1f %10.1f\n", "", sqlite3_column_int64 (ep, 1),
                     sqlite3_column_double (ep, 3) / 1048576.0, sqlite3_column_double (ep, 4),
                     sqlite3_column_double (ep, 5), sqlite3_column_double (ep, 6));
    }
    if (ckpt && sb_ckpt_report_print (db, run_id, out) != 0) {
        fprintf (stderr, "shardbench: report: %s\n", sqlite3_errmsg (db));
        goto done;
    }
    const char *status = sb_report_column_text (run, 2);
    if (train && sqlite3_column_type (run, 9) != SQLITE_NULL) {
        double au = sqlite3_column_double (run, 9), threshold = sqlite3_column_double (run, 8);
        int finished = strcmp (status, "succeeded") == 0;
        fprintf (out, "  AU mean %.2f%% against threshold %.2f%%: %s\n", 100 * au, 100 * threshold,
                 !finished ? "no verdict (run did not finish)" : sqlite3_column_int64 (run, 10) ? "PASS" : "FAIL");
    }
    fprintf (out, "  status: %s", status);
    if (sqlite3_column_type (run, 11) != SQLITE_NULL)
        fprintf (out, " after %.2f s", sqlite3_column_double (run, 11));
    fprintf (out, "\n");
    if (sqlite3_column_type (run, 3) != SQLITE_NULL)
        fprintf (out, "  error: %s\n", sb_report_column_text (run, 3));
    if (sqlite3_column_double (run, 13) > 0)
        fprintf (out, "  note: the result database was locked by another process for %.1f s during this run;"
                 " results were written late (timing was not affected)\n", sqlite3_column_double (run, 13));
    rc = 0;
done:
    sqlite3_finalize (ep);
    sqlite3_finalize (run);
    return rc;
}
