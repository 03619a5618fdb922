/* report_query: the queries behind the run summaries (report_query.h). */
#include "report_query.h"
#include "histogram.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
sb_report_error (sqlite3 *db)
{
    /* a damaged page is met by the query that reads it (no command checks
     * every page first): say which file, and that the rest can be read */
    int code = sqlite3_errcode (db);
    if (code != SQLITE_CORRUPT && code != SQLITE_NOTADB)
        return sqlite3_errmsg (db);
    static __thread char text[4096 + 512];
    const char *file = sqlite3_db_filename (db, "main");
    snprintf (text, sizeof text, "%s: the result database is corrupt where this reads (%s): what lies elsewhere can"
              " still be read (`shardbench runs` lists the runs); move the file aside or restore a copy",
              file && *file ? file : "(in memory)", sqlite3_errmsg (db));
    return text;
}

const char *
sb_report_column_text (sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text (st, col);
    return t ? (const char *) t : "";
}

double
sb_report_real (sqlite3_stmt *st, int col)
{
    return sqlite3_column_type (st, col) == SQLITE_NULL ? NAN : sqlite3_column_double (st, col);
}

int
sb_report_prepare (sqlite3 *db, const char *sql, int64_t run_id, sqlite3_stmt **st)
{
    *st = NULL;
    if (sqlite3_prepare_v2 (db, sql, -1, st, NULL) == SQLITE_OK && sqlite3_bind_int64 (*st, 1, run_id) == SQLITE_OK)
        return 0;
    sqlite3_finalize (*st);
    *st = NULL;
    return -1;
}

int
sb_report_step_end (sqlite3_stmt *st, int step, int stopped)
{
    sqlite3_finalize (st);
    return stopped ? 1 : step == SQLITE_DONE ? 0 : -1;
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
        /* statscounter.py: 0 when host_memory_GB <= data_size_per_host_GB, else 1;
         * unknown (-1) without the memory or without an epoch's bytes (a
         * checkpoint run, a train run that finished no epoch) */
        int no_data = sqlite3_column_type (st, 2) == SQLITE_NULL;
        h.potential_caching = h.memory_bytes < 0 || no_data ? -1 : h.memory_bytes <= h.data_bytes ? 0 : 1;
        fn (ctx, &h);
    }
    sqlite3_finalize (st);
    return step == SQLITE_DONE ? 0 : -1;
}

int
sb_report_dlio_run (sqlite3 *db, int64_t run_id, sb_report_dlio_run_t *d)
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

/* Make room for one more row of size `size` in *rows (capacity *cap).
 * Returns 0, or -1 when out of memory. */
static int
s_grow (void **rows, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t want = *cap ? *cap * 2 : 8;
    void *grown = realloc (*rows, want * size);
    if (!grown)
        return -1;
    *rows = grown;
    *cap = want;
    return 0;
}

void
sb_report_checkpoints_free (sb_report_checkpoint_t *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++)
        free (rows[i].op);
    free (rows);
}

int
sb_report_checkpoints (sqlite3 *db, int64_t run_id, sb_report_checkpoint_t **rows_p, size_t *n_p)
{
    *rows_p = NULL;
    *n_p = 0;
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT op, checkpoint, ranks, files, bytes, duration_s, gib_per_s, mb_per_s,"
                           " min_rank_mb_per_s, seq, span_s, dlio_bytes, dlio_duration_s, dlio_gib_per_s"
                           " FROM checkpoints WHERE run_id = ? ORDER BY seq",
                           run_id, &st) != 0)
        return -1;
    sb_report_checkpoint_t *rows = NULL;
    size_t n = 0, cap = 0;
    int step = SQLITE_DONE, oom = 0;
    while (!oom && (step = sqlite3_step (st)) == SQLITE_ROW) {
        const unsigned char *op = sqlite3_column_text (st, 0);
        if (s_grow ((void **) &rows, n, &cap, sizeof *rows) != 0) {
            oom = 1;
            break;
        }
        sb_report_checkpoint_t *r = &rows[n];
        *r = (sb_report_checkpoint_t) {
            .op = op ? strdup ((const char *) op) : NULL,
            .checkpoint = sqlite3_column_int64 (st, 1), .ranks = sqlite3_column_int64 (st, 2),
            .files = sqlite3_column_int64 (st, 3), .bytes = sqlite3_column_int64 (st, 4),
            .duration_s = sqlite3_column_double (st, 5), .gib_per_s = sb_report_real (st, 6),
            .mb_per_s = sb_report_real (st, 7), .min_rank_mb_per_s = sb_report_real (st, 8),
            .seq = sqlite3_column_int64 (st, 9), .span_s = sb_report_real (st, 10),
            .dlio_bytes = sqlite3_column_int64 (st, 11), .dlio_duration_s = sb_report_real (st, 12),
            .dlio_gib_per_s = sb_report_real (st, 13),
        };
        oom = op && !r->op;
        n++;
    }
    sqlite3_finalize (st);
    if (oom || step != SQLITE_DONE) {
        sb_report_checkpoints_free (rows, n);
        return -1;
    }
    *rows_p = rows;
    *n_p = n;
    return 0;
}

int
sb_report_workflow (sqlite3 *db, int64_t run_id, sb_report_workflow_t *w)
{
    memset (w, 0, sizeof *w);
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT workflow, eval_au_mean_percentage, eval_au_stdev_percentage,"
                           " eval_throughput_mean_samples_per_second, eval_io_mean_MB_per_second"
                           " FROM runs WHERE id = ?",
                           run_id, &st) != 0)
        return -1;
    int step = sqlite3_step (st);
    if (step == SQLITE_ROW) {
        w->has_workflow = sqlite3_column_type (st, 0) != SQLITE_NULL;
        snprintf (w->workflow, sizeof w->workflow, "%s", sb_report_column_text (st, 0));
        w->evals = sqlite3_column_type (st, 1) != SQLITE_NULL;
        w->au_mean = sqlite3_column_double (st, 1);
        w->au_stdev = sqlite3_column_double (st, 2);
        w->tput_mean = sqlite3_column_double (st, 3);
        w->io_mean = sqlite3_column_double (st, 4);
    }
    sqlite3_finalize (st);
    return step == SQLITE_ROW ? 1 : step == SQLITE_DONE ? 0 : -1;
}

int
sb_report_evals (sqlite3 *db, int64_t run_id, sb_report_eval_t **rows_p, size_t *n_p)
{
    *rows_p = NULL;
    *n_p = 0;
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT epoch, samples, steps, duration_s, mib_per_s, eval_au_percentage,"
                           " eval_throughput_samples_per_second FROM evals WHERE run_id = ? ORDER BY"
                           " epoch", run_id, &st)
        != 0)
        return -1;
    sb_report_eval_t *rows = NULL;
    size_t n = 0, cap = 0;
    int step;
    while ((step = sqlite3_step (st)) == SQLITE_ROW) {
        if (s_grow ((void **) &rows, n, &cap, sizeof *rows) != 0)
            break;
        rows[n++] = (sb_report_eval_t) {
            .epoch = sqlite3_column_int64 (st, 0), .samples = sqlite3_column_int64 (st, 1),
            .steps = sqlite3_column_int64 (st, 2), .duration_s = sqlite3_column_double (st, 3),
            .mib_per_s = sqlite3_column_double (st, 4), .au_percentage = sqlite3_column_double (st, 5),
            .samples_per_s = sqlite3_column_double (st, 6),
        };
    }
    sqlite3_finalize (st);
    if (step != SQLITE_DONE) {
        free (rows);
        return -1;
    }
    *rows_p = rows;
    *n_p = n;
    return 0;
}

/* A copy of column col's text: "" for NULL when empty_for_null, else NULL.
 * Sets *oom when the copy fails. */
static char *
s_text_dup (sqlite3_stmt *st, int col, int empty_for_null, int *oom)
{
    const unsigned char *t = sqlite3_column_text (st, col);
    if (!t && !empty_for_null)
        return NULL;
    char *copy = strdup (t ? (const char *) t : "");
    if (!copy)
        *oom = 1;
    return copy;
}

void
sb_report_run_fini (sb_report_run_t *r)
{
    free (r->kind);
    free (r->workload);
    free (r->status);
    free (r->error);
    free (r->config);
    memset (r, 0, sizeof *r);
}

int
sb_report_run (sqlite3 *db, int64_t run_id, sb_report_run_t *r)
{
    memset (r, 0, sizeof *r);
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT kind, workload, status, error, accelerators, hosts, workers, seed, au_threshold,"
                           " au_mean, passed, finished_at - started_at, config, db_locked_s FROM runs WHERE id = ?",
                           run_id, &st) != 0)
        return -1;
    int step = sqlite3_step (st), oom = 0;
    if (step == SQLITE_ROW) {
        r->kind = s_text_dup (st, 0, 1, &oom);
        r->workload = s_text_dup (st, 1, 1, &oom);
        r->status = s_text_dup (st, 2, 1, &oom);
        r->error = s_text_dup (st, 3, 0, &oom);
        r->accelerators = sqlite3_column_int64 (st, 4);
        r->hosts = sqlite3_column_int64 (st, 5);
        r->workers = sqlite3_column_int64 (st, 6);
        r->seed = sqlite3_column_int64 (st, 7);
        r->au_threshold = sqlite3_column_double (st, 8);
        r->has_au_mean = sqlite3_column_type (st, 9) != SQLITE_NULL;
        r->au_mean = sqlite3_column_double (st, 9);
        r->passed = sqlite3_column_int64 (st, 10);
        r->has_duration = sqlite3_column_type (st, 11) != SQLITE_NULL;
        r->duration_s = sqlite3_column_double (st, 11);
        r->config = s_text_dup (st, 12, 0, &oom);
        r->db_locked_s = sqlite3_column_double (st, 13);
    }
    sqlite3_finalize (st);
    if (oom) {
        sb_report_run_fini (r);
        return -1;
    }
    return step == SQLITE_ROW ? 1 : step == SQLITE_DONE ? 0 : -1;
}

int
sb_report_full_config (sqlite3 *db, int64_t run_id, char **yaml)
{
    *yaml = NULL;
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT full_config FROM run_inputs WHERE run_id = ?", run_id, &st) != 0)
        return -1;
    int step = sqlite3_step (st), oom = 0;
    if (step == SQLITE_ROW)
        *yaml = s_text_dup (st, 0, 0, &oom);
    sqlite3_finalize (st);
    if (oom || (step != SQLITE_ROW && step != SQLITE_DONE)) {
        free (*yaml);
        *yaml = NULL;
        return -1;
    }
    return 0;
}

int
sb_report_epochs (sqlite3 *db, int64_t run_id, sb_report_epoch_t **rows_p, size_t *n_p)
{
    *rows_p = NULL;
    *n_p = 0;
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT epoch, samples, dropped, bytes, duration_s, samples_per_s, mib_per_s, au_mean,"
                           " batches, barrier_p50_ms, barrier_p99_ms, train_au_percentage,"
                           " train_throughput_samples_per_second, train_io_MB_per_second, resident_fraction,"
                           " from_memory,"
                           " barrier_own_p50_ms, read_p50_ms, read_p99_ms, barrier_own_p99_ms"
                           " FROM epochs WHERE run_id = ? ORDER BY epoch", run_id, &st) != 0)
        return -1;
    sb_report_epoch_t *rows = NULL;
    size_t n = 0, cap = 0;
    int step;
    while ((step = sqlite3_step (st)) == SQLITE_ROW) {
        if (s_grow ((void **) &rows, n, &cap, sizeof *rows) != 0)
            break;
        rows[n++] = (sb_report_epoch_t) {
            .epoch = sqlite3_column_int64 (st, 0), .samples = sqlite3_column_int64 (st, 1),
            .dropped = sqlite3_column_int64 (st, 2), .bytes = sqlite3_column_int64 (st, 3),
            .duration_s = sqlite3_column_double (st, 4), .samples_per_s = sqlite3_column_double (st, 5),
            .mib_per_s = sqlite3_column_double (st, 6), .au_mean = sqlite3_column_double (st, 7),
            .batches = sqlite3_column_int64 (st, 8),
            .has_barrier = sqlite3_column_type (st, 9) != SQLITE_NULL,
            .barrier_p50_ms = sqlite3_column_double (st, 9), .barrier_p99_ms = sqlite3_column_double (st, 10),
            .has_dlio = sqlite3_column_type (st, 11) != SQLITE_NULL,
            .dlio_au_percentage = sqlite3_column_double (st, 11),
            .dlio_samples_per_s = sqlite3_column_double (st, 12), .dlio_io_mb_per_s = sqlite3_column_double (st, 13),
            .has_resident = sqlite3_column_type (st, 14) != SQLITE_NULL,
            .resident_fraction = sqlite3_column_double (st, 14), .from_memory = sqlite3_column_int (st, 15) == 1,
            .has_barrier_own = sqlite3_column_type (st, 16) != SQLITE_NULL,
            .barrier_own_p50_ms = sqlite3_column_double (st, 16),
            .has_read_p50 = sqlite3_column_type (st, 17) != SQLITE_NULL, .read_p50_ms = sqlite3_column_double (st, 17),
            .has_read_p99 = sqlite3_column_type (st, 18) != SQLITE_NULL, .read_p99_ms = sqlite3_column_double (st, 18),
            .has_au_mean = sqlite3_column_type (st, 7) != SQLITE_NULL,
            .has_barrier_p99 = sqlite3_column_type (st, 10) != SQLITE_NULL,
            .has_dlio_samples = sqlite3_column_type (st, 12) != SQLITE_NULL,
            .has_dlio_io = sqlite3_column_type (st, 13) != SQLITE_NULL,
            .has_from_memory = sqlite3_column_type (st, 15) != SQLITE_NULL,
            .has_barrier_own_p99 = sqlite3_column_type (st, 19) != SQLITE_NULL,
            .barrier_own_p99_ms = sqlite3_column_double (st, 19),
        };
    }
    sqlite3_finalize (st);
    if (step != SQLITE_DONE) {
        free (rows);
        return -1;
    }
    *rows_p = rows;
    *n_p = n;
    return 0;
}


/* Hand the histogram of one group to fn and empty it. */
static void
s_latency_emit (sb_histogram_t *h, int64_t epoch, const char *host,
                void (*fn) (void *ctx, const sb_report_latency_t *l), void *ctx)
{
    if (!h->total)
        return;
    sb_report_latency_t l = {
        .epoch = epoch, .host = host, .reads = (int64_t) h->total,
        .p50_ms = sb_histogram_quantile (h, 0.5) / 1000, .p90_ms = sb_histogram_quantile (h, 0.9) / 1000,
        .p99_ms = sb_histogram_quantile (h, 0.99) / 1000, .p999_ms = sb_histogram_quantile (h, 0.999) / 1000,
    };
    fn (ctx, &l);
    sb_histogram_reset (h);
}

int
sb_report_latencies (sqlite3 *db, int64_t run_id, sb_report_latency_by_t by,
                     void (*fn) (void *ctx, const sb_report_latency_t *l), void *ctx)
{
    static const char *const sql[] = {
        [SB_REPORT_LATENCY_EPOCHS] = "SELECT epoch, NULL, bin_low_us, count FROM read_latency WHERE run_id = ?"
                                     " ORDER BY epoch, bin_low_us",
        [SB_REPORT_LATENCY_HOSTS] = "SELECT epoch, host, bin_low_us, count FROM host_read_latency WHERE run_id = ?"
                                    " ORDER BY epoch, host, bin_low_us",
        [SB_REPORT_LATENCY_RUN] = "SELECT 0, NULL, bin_low_us, sum(count) FROM read_latency WHERE run_id = ?"
                                  " GROUP BY bin_low_us ORDER BY bin_low_us",
    };
    sqlite3_stmt *st;
    if (sb_report_prepare (db, sql[by], run_id, &st) != 0)
        return -1;
    sb_histogram_t *h = calloc (1, sizeof *h);
    char *host = NULL;      /* the group's host (owned) */
    int64_t epoch = -1;
    int step = SQLITE_DONE, oom = !h;
    while (!oom && (step = sqlite3_step (st)) == SQLITE_ROW) {
        int64_t e = sqlite3_column_int64 (st, 0);
        const unsigned char *hn = sqlite3_column_text (st, 1);
        if (e != epoch || (hn && (!host || strcmp (host, (const char *) hn) != 0))) {
            s_latency_emit (h, epoch, host, fn, ctx);
            free (host);
            host = hn ? strdup ((const char *) hn) : NULL;
            oom = hn && !host;
            epoch = e;
        }
        int64_t low = sqlite3_column_int64 (st, 2), count = sqlite3_column_int64 (st, 3);
        if (low >= 0 && count > 0) {
            h->counts[sb_histogram_bin ((uint64_t) low)] += (uint64_t) count;
            h->total += (uint64_t) count;
        }
    }
    if (!oom && step == SQLITE_DONE)
        s_latency_emit (h, epoch, host, fn, ctx);
    sqlite3_finalize (st);
    free (host);
    free (h);
    return !oom && step == SQLITE_DONE ? 0 : -1;
}

int
sb_report_slowest (sqlite3 *db, int64_t run_id, void (*fn) (void *ctx, const sb_report_slowest_t *s), void *ctx)
{
    sqlite3_stmt *st;
    /* one pass per epoch (window functions), not a subquery per rank: runs of thousands of ranks */
    if (sb_report_prepare (db, "SELECT epoch, rank, host, wall, compute, io_wait_s, barrier_s, n, mean, win,"
                           " compute_mean, io_mean, held_s FROM"
                           " (SELECT epoch, rank, host, finished_at - started_at AS wall,"
                           "  coalesce(compute_all_s, compute_s) AS compute, io_wait_s, barrier_s, held_s,"
                           "  count(*) OVER e AS n, avg(barrier_s) OVER e AS mean,"
                           "  max(finished_at) OVER e - min(started_at) OVER e AS win,"
                           "  avg(coalesce(compute_all_s, compute_s)) OVER e AS compute_mean,"
                           "  avg(io_wait_s) OVER e AS io_mean,"
                           "  row_number() OVER (PARTITION BY epoch ORDER BY coalesce(held_s, 0) DESC,"
                           "   finished_at - started_at - barrier_s DESC, rank) AS k"
                           "  FROM rank_epochs WHERE run_id = ?1 AND epoch >= 1 WINDOW e AS (PARTITION BY epoch))"
                           " WHERE k = 1 ORDER BY epoch", run_id, &st) != 0)
        return -1;
    int step;
    while ((step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_report_slowest_t s = {
            .epoch = sqlite3_column_int64 (st, 0), .rank = sqlite3_column_int64 (st, 1),
            .host = sb_report_column_text (st, 2), .wall_s = sqlite3_column_double (st, 3),
            .compute_s = sqlite3_column_double (st, 4), .io_wait_s = sqlite3_column_double (st, 5),
            .barrier_s = sqlite3_column_double (st, 6), .ranks = sqlite3_column_int64 (st, 7),
            .barrier_mean_s = sqlite3_column_double (st, 8), .window_s = sqlite3_column_double (st, 9),
            .compute_mean_s = sqlite3_column_double (st, 10), .io_wait_mean_s = sqlite3_column_double (st, 11),
            .held_s = sb_report_real (st, 12),
        };
        s.own_s = s.wall_s - s.barrier_s;
        s.other_s = s.wall_s - s.compute_s - s.io_wait_s - s.barrier_s;
        if (s.other_s < 0)
            s.other_s = 0;  /* clock granularity */
        s.idle_s = s.window_s - s.wall_s;
        if (s.idle_s < 0)
            s.idle_s = 0;
        fn (ctx, &s);
    }
    sqlite3_finalize (st);
    return step == SQLITE_DONE ? 0 : -1;
}

int
sb_report_endpoints (sqlite3 *db, int64_t run_id, void (*fn) (void *ctx, const sb_report_endpoint_t *e), void *ctx)
{
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT endpoint, requests, bytes, errors, retries, mean_ms, p50_ms, p90_ms,"
                           " p99_ms, max_ms FROM endpoints WHERE run_id = ? ORDER BY endpoint", run_id, &st) != 0)
        return -1;
    int step;
    while ((step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_report_endpoint_t e = {
            .endpoint = sb_report_column_text (st, 0), .requests = sqlite3_column_int64 (st, 1),
            .bytes = sqlite3_column_int64 (st, 2), .errors = sqlite3_column_int64 (st, 3),
            .retries = sqlite3_column_int64 (st, 4), .mean_ms = sb_report_real (st, 5),
            .p50_ms = sb_report_real (st, 6),
            .p90_ms = sb_report_real (st, 7), .p99_ms = sb_report_real (st, 8), .max_ms = sb_report_real (st, 9),
        };
        fn (ctx, &e);
    }
    sqlite3_finalize (st);
    return step == SQLITE_DONE ? 0 : -1;
}

int
sb_report_failures (sqlite3 *db, int64_t run_id, sb_report_failures_t *f)
{
    memset (f, 0, sizeof *f);
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT count(*), coalesce(sum(requests), 0), coalesce(sum(errors), 0),"
                           " coalesce(sum(retries), 0), (SELECT count(*) FROM errors WHERE run_id = ?1)"
                           " FROM endpoints WHERE run_id = ?1", run_id, &st) != 0)
        return -1;
    int step = sqlite3_step (st);
    if (step == SQLITE_ROW) {
        f->endpoints = sqlite3_column_int64 (st, 0);
        f->requests = sqlite3_column_int64 (st, 1);
        f->request_errors = sqlite3_column_int64 (st, 2);
        f->retries = sqlite3_column_int64 (st, 3);
        f->error_rows = sqlite3_column_int64 (st, 4);
    }
    sqlite3_finalize (st);
    return step == SQLITE_ROW ? 0 : -1;
}

int
sb_report_checkpoint_ranks (sqlite3 *db, int64_t run_id, void (*fn) (void *ctx, const sb_report_ckpt_rank_t *r),
                            void *ctx)
{
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT seq, checkpoint, rank, files, bytes, op, host, started_at, finished_at,"
                           " duration_s, mb_per_s FROM checkpoint_ranks WHERE run_id = ? ORDER BY seq, rank",
                           run_id, &st) != 0)
        return -1;
    int step;
    while ((step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_report_ckpt_rank_t r = {
            .seq = sqlite3_column_int64 (st, 0), .checkpoint = sqlite3_column_int64 (st, 1),
            .rank = sqlite3_column_int64 (st, 2), .files = sqlite3_column_int64 (st, 3),
            .bytes = sqlite3_column_int64 (st, 4), .op = sb_report_column_text (st, 5),
            .host = sb_report_column_text (st, 6), .started_at = sqlite3_column_double (st, 7),
            .finished_at = sqlite3_column_double (st, 8), .duration_s = sqlite3_column_double (st, 9),
            .mb_per_s = sb_report_real (st, 10),
        };
        fn (ctx, &r);
    }
    sqlite3_finalize (st);
    return step == SQLITE_DONE ? 0 : -1;
}

/* the checkpoints column a mean and stdev are taken of */
typedef enum { S_CKPT_DLIO_GIBPS, S_CKPT_DLIO_S, S_CKPT_SLOWEST_GIBPS, S_CKPT_SLOWEST_S } s_ckpt_col_t;

/* mean and population standard deviation (np.std) over the rows of one op
 * (read: the reads, else the writes) of column col; NAN when there is none */
static void
s_ckpt_mean_std (const sb_report_checkpoint_t *rows, size_t n, int read, s_ckpt_col_t col, double *mean, double *std)
{
    double sum = 0, sq = 0;
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            if ((rows[i].op && !strcmp (rows[i].op, "read")) != read)
                continue;
            double v = col == S_CKPT_DLIO_GIBPS ? rows[i].dlio_gib_per_s
                     : col == S_CKPT_DLIO_S ? rows[i].dlio_duration_s
                     : col == S_CKPT_SLOWEST_GIBPS ? rows[i].gib_per_s : rows[i].duration_s;
            if (!isfinite (v))
                continue;   /* NULL: no time or no bytes measured (sb_report_real) */
            if (pass == 0) {
                sum += v;
                k++;
            }
            else
                sq += (v - sum / (double) k) * (v - sum / (double) k);
        }
    *mean = k ? sum / (double) k : NAN;
    *std = k ? sqrt (sq / (double) k) : NAN;
}

void
sb_report_ckpt_metrics (const sb_report_checkpoint_t *rows, size_t n, sb_report_ckpt_metrics_t *m)
{
    memset (m, 0, sizeof *m);
    m->size_gb = m->written_gb = NAN;
    for (size_t i = 0; i < n; i++) {
        int read = rows[i].op && !strcmp (rows[i].op, "read");
        if (!read && !m->saves) {
            m->size_gb = (double) rows[i].dlio_bytes / 1073741824.0;
            m->written_gb = (double) rows[i].bytes / 1073741824.0;
        }
        if (read)
            m->loads++;
        else
            m->saves++;
    }
    s_ckpt_mean_std (rows, n, 0, S_CKPT_DLIO_GIBPS, &m->save_gbps_mean, &m->save_gbps_stdev);
    s_ckpt_mean_std (rows, n, 0, S_CKPT_DLIO_S, &m->save_s_mean, &m->save_s_stdev);
    s_ckpt_mean_std (rows, n, 1, S_CKPT_DLIO_GIBPS, &m->load_gbps_mean, &m->load_gbps_stdev);
    s_ckpt_mean_std (rows, n, 1, S_CKPT_DLIO_S, &m->load_s_mean, &m->load_s_stdev);
    s_ckpt_mean_std (rows, n, 0, S_CKPT_SLOWEST_GIBPS, &m->slowest_save_gbps_mean, &m->slowest_save_gbps_stdev);
    s_ckpt_mean_std (rows, n, 0, S_CKPT_SLOWEST_S, &m->slowest_save_s_mean, &m->slowest_save_s_stdev);
    s_ckpt_mean_std (rows, n, 1, S_CKPT_SLOWEST_GIBPS, &m->slowest_load_gbps_mean, &m->slowest_load_gbps_stdev);
    s_ckpt_mean_std (rows, n, 1, S_CKPT_SLOWEST_S, &m->slowest_load_s_mean, &m->slowest_load_s_stdev);
}
