/* report: summaries from the result database. */
#include "report.h"
#include "workload.h"

#include <string.h>

/* DLIO's figures of a train run (NULL columns before schema 9: dlio 0) */
typedef struct {
    int     dlio;
    double  au_mean, au_stdev, tput_mean, tput_stdev, io_mean, io_stdev;
    int64_t record_size, window_steps, steps;
} s_dlio_run_t;

static int
s_dlio_load (sqlite3 *db, int64_t run_id, s_dlio_run_t *d)
{
    sqlite3_stmt *st = NULL;
    memset (d, 0, sizeof *d);
    int rc = -1;
    if (sqlite3_prepare_v2 (db,
                            "SELECT train_au_mean_percentage, train_au_stdev_percentage,"
                            " train_throughput_mean_samples_per_second, train_throughput_stdev_samples_per_second,"
                            " train_io_mean_MB_per_second, train_io_stdev_MB_per_second, record_size_bytes,"
                            " (SELECT min(metric_steps) FROM rank_epochs WHERE run_id = runs.id),"
                            " (SELECT min(batches) FROM rank_epochs WHERE run_id = runs.id)"
                            " FROM runs WHERE id = ?", -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (st, 1, run_id) != SQLITE_OK)
        goto done;
    if (sqlite3_step (st) == SQLITE_ROW) {
        d->dlio = sqlite3_column_type (st, 0) != SQLITE_NULL;
        d->au_mean = sqlite3_column_double (st, 0);
        d->au_stdev = sqlite3_column_double (st, 1);
        d->tput_mean = sqlite3_column_double (st, 2);
        d->tput_stdev = sqlite3_column_double (st, 3);
        d->io_mean = sqlite3_column_double (st, 4);
        d->io_stdev = sqlite3_column_double (st, 5);
        d->record_size = sqlite3_column_int64 (st, 6);
        d->window_steps = sqlite3_column_int64 (st, 7);
        d->steps = sqlite3_column_int64 (st, 8);
    }
    rc = 0;
done:
    sqlite3_finalize (st);
    return rc;
}

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
sb_report_host_caching (sqlite3 *db, int64_t run_id, void (*fn) (void *ctx, const sb_report_host_caching_t *h),
                        void *ctx)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (db,
                            "SELECT w.host, max(w.memory), (SELECT max(b) FROM (SELECT sum(re.bytes) AS b"
                            "  FROM rank_epochs re WHERE re.run_id = ?1 AND re.host = w.host AND re.epoch >= 1"
                            "  GROUP BY re.epoch))"
                            " FROM run_workers w WHERE w.run_id = ?1 GROUP BY w.host ORDER BY min(w.worker)",
                            -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (st, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize (st);
        return -1;
    }
    int step;
    while ((step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_report_host_caching_t h = {
            .host = sb_report_column_text (st, 0),
            .memory_bytes = sqlite3_column_type (st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64 (st, 1),
            .data_bytes = sqlite3_column_int64 (st, 2),
        };
        /* statscounter.py: 0 when host_memory_GB <= data_size_per_host_GB, else 1 */
        h.potential_caching = h.memory_bytes < 0 ? -1 : h.memory_bytes <= h.data_bytes ? 0 : 1;
        fn (ctx, &h);
    }
    sqlite3_finalize (st);
    return step == SQLITE_DONE ? 0 : -1;
}

/* the hosts where DLIO would set potential_caching, as one line */
static void
s_print_caching_host (void *ctx, const sb_report_host_caching_t *h)
{
    FILE *out = ctx;
    if (h->potential_caching == 1 && h->data_bytes > 0)
        fprintf (out, "  potential_caching: host %s has %.1f GiB of memory, more than the %.3f GiB its ranks read per"
                 " epoch: its page cache can serve the epochs from memory\n", h->host,
                 (double) h->memory_bytes / 1073741824.0, (double) h->data_bytes / 1073741824.0);
}

/* The checkpoint table of a run (the summary of `shardbench checkpoint` and
 * `report`). Returns 0 or -1. */
static int
s_print_checkpoints (sqlite3 *db, int64_t run_id, FILE *out)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (db,
                            "SELECT op, checkpoint, ranks, files, bytes, duration_s, gib_per_s, mb_per_s,"
                            " min_rank_mb_per_s FROM checkpoints WHERE run_id = ? ORDER BY seq", -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (st, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize (st);
        return -1;
    }
    fprintf (out, "  %-5s %4s %6s %7s %12s %10s %10s %10s %16s\n", "op", "ckpt", "ranks", "files", "GiB", "time s",
             "GiB/s", "MB/s", "min rank MB/s");
    double sum_gib[2] = { 0, 0 }, sum_s[2] = { 0, 0 };
    int n[2] = { 0, 0 };
    while (sqlite3_step (st) == SQLITE_ROW) {
        const char *op = (const char *) sqlite3_column_text (st, 0);
        int read = op && !strcmp (op, "read");
        double gib = (double) sqlite3_column_int64 (st, 4) / 1073741824.0, d = sqlite3_column_double (st, 5);
        fprintf (out, "  %-5s %4lld %6lld %7lld %12.3f %10.3f %10.3f %10.1f %16.1f\n", op ? op : "?",
                 sqlite3_column_int64 (st, 1), sqlite3_column_int64 (st, 2), sqlite3_column_int64 (st, 3), gib, d,
                 sqlite3_column_double (st, 6), sqlite3_column_double (st, 7), sqlite3_column_double (st, 8));
        sum_gib[read] += gib;
        sum_s[read] += d;
        n[read]++;
    }
    sqlite3_finalize (st);
    for (int r = 0; r < 2; r++)
        if (n[r] && sum_s[r] > 0)
            fprintf (out, "  %s: %d checkpoints, mean %.3f s each, %.3f GiB/s (bytes over summed durations)\n",
                     r ? "read" : "write", n[r], sum_s[r] / n[r], sum_gib[r] / sum_s[r]);
    return 0;
}

/* issue 15, workflow: the phases the command ran, and the evaluations
 * (evals) with DLIO's evaluation figures, after the training epochs.
 * Returns 0, or -1 (sqlite3_errmsg). */
static int
s_print_workflow (sqlite3 *db, int64_t run_id, FILE *out)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2 (db, "SELECT workflow, eval_au_mean_percentage, eval_au_stdev_percentage,"
                            " eval_throughput_mean_samples_per_second, eval_io_mean_MB_per_second FROM runs WHERE id = ?",
                            -1, &st, NULL) != SQLITE_OK || sqlite3_bind_int64 (st, 1, run_id) != SQLITE_OK)
        goto done;
    if (sqlite3_step (st) != SQLITE_ROW)
        goto done;
    if (sqlite3_column_type (st, 0) != SQLITE_NULL)
        fprintf (out, "  workflow: %s\n", sb_report_column_text (st, 0));
    int evals = sqlite3_column_type (st, 1) != SQLITE_NULL;
    double au = sqlite3_column_double (st, 1), au_sd = sqlite3_column_double (st, 2),
           tput = sqlite3_column_double (st, 3), io = sqlite3_column_double (st, 4);
    sqlite3_finalize (st);
    st = NULL;
    if (!evals)
        return 0;
    if (sqlite3_prepare_v2 (db, "SELECT epoch, samples, steps, duration_s, mib_per_s, eval_au_percentage,"
                            " eval_throughput_samples_per_second FROM evals WHERE run_id = ? ORDER BY epoch", -1, &st,
                            NULL) != SQLITE_OK || sqlite3_bind_int64 (st, 1, run_id) != SQLITE_OK)
        goto done;
    fprintf (out, "  evaluations (valid/, after the epoch; DLIO's eval AU and samples/s):\n");
    fprintf (out, "  %5s %10s %7s %10s %10s %10s %12s\n", "epoch", "samples", "steps", "time s", "MiB/s", "AU %",
             "samples/s");
    int step;
    while ((step = sqlite3_step (st)) == SQLITE_ROW)
        fprintf (out, "  %5lld %10lld %7lld %10.3f %10.1f %10.2f %12.1f\n", sqlite3_column_int64 (st, 0),
                 sqlite3_column_int64 (st, 1), sqlite3_column_int64 (st, 2), sqlite3_column_double (st, 3),
                 sqlite3_column_double (st, 4), sqlite3_column_double (st, 5), sqlite3_column_double (st, 6));
    if (step != SQLITE_DONE)
        goto done;
    fprintf (out, "  eval AU mean %.2f%% (stdev %.2f), %.1f samples/s, %.1f MiB/s\n", au, au_sd, tput, io);
    rc = 0;
done:
    sqlite3_finalize (st);
    return rc;
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
    s_dlio_run_t dlio;
    if ((train && s_dlio_load (db, run_id, &dlio) != 0)
        || sqlite3_prepare_v2 (db,
                               "SELECT epoch, samples, dropped, bytes, duration_s, samples_per_s, mib_per_s, au_mean,"
                               " batches, barrier_p50_ms, barrier_p99_ms, train_au_percentage,"
                               " train_throughput_samples_per_second, train_io_MB_per_second, resident_fraction, from_memory,"
                               " barrier_own_p50_ms"
                               " FROM epochs WHERE run_id = ? ORDER BY epoch", -1, &ep, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (ep, 1, run_id) != SQLITE_OK) {
        fprintf (stderr, "shardbench: report: %s\n", sqlite3_errmsg (db));
        goto done;
    }
    if (train && dlio.dlio) {
        /* the headline: DLIO's metrics (lib/metrics/dlio_metrics.h), then shardbench's measured figures */
        fprintf (out, "  DLIO's metrics (%lld of the %lld steps of each rank counted, %lld-byte records):\n",
                 (long long) dlio.window_steps, (long long) dlio.steps, (long long) dlio.record_size);
        fprintf (out, "  %5s %10s %12s %10s\n", "epoch", "AU %", "samples/s", "MiB/s");
        while (sqlite3_step (ep) == SQLITE_ROW)
            if (sqlite3_column_type (ep, 11) != SQLITE_NULL)
                fprintf (out, "  %5lld %10.2f %12.1f %10.1f\n", sqlite3_column_int64 (ep, 0),
                         sqlite3_column_double (ep, 11), sqlite3_column_double (ep, 12),
                         sqlite3_column_double (ep, 13));
        fprintf (out, "  %5s %10.2f %12.1f %10.1f\n", "mean", dlio.au_mean, dlio.tput_mean, dlio.io_mean);
        fprintf (out, "  %5s %10.2f %12.1f %10.1f\n", "stdev", dlio.au_stdev, dlio.tput_stdev, dlio.io_stdev);
        fprintf (out, "  measured by shardbench (every sample read, the bytes read, first rank's start to last"
                 " rank's finish):\n");
        sqlite3_reset (ep);
    }
    if (train)
        fprintf (out, "  %5s %10s %8s %7s %10s %12s %10s %8s %17s %11s %9s\n", "epoch", "samples", "dropped", "steps",
                 "time s", "samples/s", "MiB/s", "AU %", "barrier p50/p99 ms", "own p50 ms", "cached %");
    else if (!ckpt)
        fprintf (out, "  %5s %10s %12s %10s %12s %10s\n", "", "files", "MiB", "time s", "files/s", "MiB/s");
    int from_memory = 0;    /* epochs served from memory */
    while (sqlite3_step (ep) == SQLITE_ROW) {
        if (train)
        {
            char barrier[48] = "-", own[32] = "-";
            if (sqlite3_column_type (ep, 9) != SQLITE_NULL)
                snprintf (barrier, sizeof barrier, "%.3f/%.3f", sqlite3_column_double (ep, 9),
                          sqlite3_column_double (ep, 10));
            /* page cache: the share of the checked bytes resident before they were read; `*`: served from memory */
            char cached[32] = "-";
            if (sqlite3_column_type (ep, 14) != SQLITE_NULL) {
                int mem = sqlite3_column_int (ep, 15) == 1;
                snprintf (cached, sizeof cached, "%.1f%s", 100 * sqlite3_column_double (ep, 14), mem ? " *" : "");
                from_memory += mem;
            }
            if (sqlite3_column_type (ep, 16) != SQLITE_NULL)     /* the barrier's own cost (no waiting for ranks) */
                snprintf (own, sizeof own, "%.3f", sqlite3_column_double (ep, 16));
            fprintf (out, "  %5lld %10lld %8lld %7lld %10.3f %12.1f %10.1f %8.2f %17s %11s %9s\n",
                     sqlite3_column_int64 (ep, 0), sqlite3_column_int64 (ep, 1), sqlite3_column_int64 (ep, 2),
                     sqlite3_column_int64 (ep, 8), sqlite3_column_double (ep, 4), sqlite3_column_double (ep, 5),
                     sqlite3_column_double (ep, 6), 100 * sqlite3_column_double (ep, 7), barrier, own, cached);
        }
        else
            fprintf (out, "  %5s %10lld %12.1f %10.3f %12.1f %10.1f\n", "", sqlite3_column_int64 (ep, 1),
                     sqlite3_column_double (ep, 3) / 1048576.0, sqlite3_column_double (ep, 4),
                     sqlite3_column_double (ep, 5), sqlite3_column_double (ep, 6));
    }
    if (from_memory)
        fprintf (out, "  * served from memory: at least half the bytes checked were in the page cache before they were"
                 " read, so %s measure%s memory, not the storage\n",
                 from_memory > 1 ? "these epochs" : "this epoch", from_memory > 1 ? "" : "s");
    if (train && sb_report_host_caching (db, run_id, s_print_caching_host, out) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sqlite3_errmsg (db));
        goto done;
    }
    if (s_print_workflow (db, run_id, out) != 0) {
        fprintf (stderr, "shardbench: report: %s\n", sqlite3_errmsg (db));
        goto done;
    }
    if (ckpt && s_print_checkpoints (db, run_id, out) != 0) {
        fprintf (stderr, "shardbench: report: %s\n", sqlite3_errmsg (db));
        goto done;
    }
    const char *status = sb_report_column_text (run, 2);
    if (train && (dlio.dlio || sqlite3_column_type (run, 9) != SQLITE_NULL)) {
        /* the verdict: DLIO's train_au_mean_percentage (shardbench's own AU mean for runs recorded before it) */
        double au = dlio.dlio ? dlio.au_mean / 100 : sqlite3_column_double (run, 9),
               threshold = sqlite3_column_double (run, 8);
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
