/* export_query: the queries behind the exports of a run (export_query.h). */
#include "export_query.h"
#include "report_query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A heap copy of column col, NULL when NULL (or out of memory). */
static char *
s_dup (sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type (st, col) == SQLITE_NULL)
        return NULL;
    return strdup (sb_report_column_text (st, col));
}

int
sb_export_run (sqlite3 *db, int64_t run_id, sb_export_run_t *r)
{
    memset (r, 0, sizeof *r);
    sqlite3_stmt *st;
    if (sb_report_prepare (db,
                           "SELECT kind, status, workload, error, coordinator_host, started_at, finished_at,"
                           " accelerators, hosts, workers, seed, au_threshold, au_mean, passed, config,"
                           " train_au_mean_percentage, train_au_stdev_percentage,"
                           " train_throughput_mean_samples_per_second, train_throughput_stdev_samples_per_second,"
                           " train_io_mean_MB_per_second, train_io_stdev_MB_per_second, record_size_bytes"
                           " FROM runs WHERE id = ?1", run_id, &st) != 0)
        return -1;
    int step = sqlite3_step (st);
    if (step != SQLITE_ROW) {
        sqlite3_finalize (st);
        return step == SQLITE_DONE ? 0 : -1;
    }
    snprintf (r->kind, sizeof r->kind, "%s", sb_report_column_text (st, 0));
    snprintf (r->status, sizeof r->status, "%s", sb_report_column_text (st, 1));
    r->workload = s_dup (st, 2);
    r->error = s_dup (st, 3);
    r->host = s_dup (st, 4);
    r->config = s_dup (st, 14);
    r->started_at = sqlite3_column_double (st, 5);
    r->finished_at = sb_report_real (st, 6);
    r->accelerators = sqlite3_column_int64 (st, 7);
    r->hosts = sqlite3_column_int64 (st, 8);
    r->workers = sqlite3_column_int64 (st, 9);
    r->seed = sqlite3_column_int64 (st, 10);
    r->au_threshold = sb_report_real (st, 11);
    r->au_mean = sb_report_real (st, 12);
    r->passed = sqlite3_column_type (st, 13) == SQLITE_NULL ? -1 : sqlite3_column_int (st, 13) != 0;
    r->dlio_au_mean = sb_report_real (st, 15);
    r->dlio_au_stdev = sb_report_real (st, 16);
    r->dlio_tput_mean = sb_report_real (st, 17);
    r->dlio_tput_stdev = sb_report_real (st, 18);
    r->dlio_io_mean = sb_report_real (st, 19);
    r->dlio_io_stdev = sb_report_real (st, 20);
    r->record_size = sqlite3_column_type (st, 21) == SQLITE_NULL ? -1 : sqlite3_column_int64 (st, 21);
    sqlite3_finalize (st);
    return 1;
}

void
sb_export_run_fini (sb_export_run_t *r)
{
    free (r->workload);
    free (r->error);
    free (r->host);
    free (r->config);
    r->workload = r->error = r->host = r->config = NULL;
}

int
sb_export_hosts (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_export_host_t *h), void *ctx)
{
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT host, max(memory), max(cores) FROM run_workers WHERE run_id = ?1"
                           " GROUP BY host ORDER BY min(worker)", run_id, &st) != 0)
        return -1;
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_export_host_t h = {
            .host = sb_report_column_text (st, 0),
            .memory_bytes = sb_report_real (st, 1),
            .has_cores = sqlite3_column_type (st, 2) != SQLITE_NULL,
            .cores = sqlite3_column_int64 (st, 2),
        };
        stopped = fn (ctx, &h) != 0;
    }
    return sb_report_step_end (st, step, stopped);
}

int
sb_export_rank_epochs (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_export_rank_epoch_t *e),
                       void *ctx)
{
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT epoch, rank, host, samples, batches, bytes, started_at, finished_at, compute_s,"
                           " au, io_wait_s, barrier_s, metric_steps, metric_compute_s, metric_excluded_s,"
                           " metric_time_s, dlio_au_percentage, dlio_throughput_samples_per_second, compute_all_s,"
                           " max(finished_at) OVER e - min(started_at) OVER e, held_s"
                           " FROM rank_epochs WHERE run_id = ?1 WINDOW e AS (PARTITION BY epoch) ORDER BY epoch, rank",
                           run_id, &st) != 0)
        return -1;
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_export_rank_epoch_t e = {
            .epoch = sqlite3_column_int64 (st, 0), .rank = sqlite3_column_int64 (st, 1),
            .host = sb_report_column_text (st, 2),
            .samples = sqlite3_column_int64 (st, 3), .batches = sqlite3_column_int64 (st, 4),
            .bytes = sqlite3_column_int64 (st, 5),
            .started_at = sqlite3_column_double (st, 6), .finished_at = sqlite3_column_double (st, 7),
            .compute_s = sb_report_real (st, 8), .au = sb_report_real (st, 9), .io_wait_s = sb_report_real (st, 10),
            .barrier_s = sb_report_real (st, 11),
            .has_metric_steps = sqlite3_column_type (st, 12) != SQLITE_NULL,
            .metric_steps = sqlite3_column_int64 (st, 12),
            .metric_compute_s = sb_report_real (st, 13), .metric_excluded_s = sb_report_real (st, 14),
            .metric_time_s = sb_report_real (st, 15),
            .dlio_au_percentage = sb_report_real (st, 16), .dlio_samples_per_s = sb_report_real (st, 17),
            .compute_all_s = sb_report_real (st, 18), .window_s = sb_report_real (st, 19),
            .held_s = sb_report_real (st, 20),
        };
        stopped = fn (ctx, &e) != 0;
    }
    return sb_report_step_end (st, step, stopped);
}

int
sb_export_page_run (sqlite3 *db, int64_t run_id, sb_export_page_run_t *r)
{
    memset (r, 0, sizeof *r);
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT kind, workload, status, error, accelerators, hosts, workers, seed, started_at,"
                           " finished_at - started_at, au_threshold, coalesce(train_au_mean_percentage / 100, au_mean),"
                           " passed,"
                           " (SELECT count(*) FROM epochs WHERE run_id = ?1), (SELECT avg(samples_per_s) FROM epochs"
                           " WHERE run_id = ?1), (SELECT avg(mib_per_s) FROM epochs WHERE run_id = ?1), config FROM"
                           " runs WHERE id = ?1",
                           run_id, &st) != 0)
        return -1;
    int step = sqlite3_step (st);
    if (step != SQLITE_ROW) {
        sqlite3_finalize (st);
        return step == SQLITE_DONE ? 0 : -1;
    }
    r->kind = s_dup (st, 0);
    r->workload = s_dup (st, 1);
    r->status = s_dup (st, 2);
    r->error = s_dup (st, 3);
    r->accelerators = sqlite3_column_int64 (st, 4);
    r->hosts = sqlite3_column_int64 (st, 5);
    r->workers = sqlite3_column_int64 (st, 6);
    r->seed = sqlite3_column_int64 (st, 7);
    r->started_at = sqlite3_column_double (st, 8);
    r->duration_s = sb_report_real (st, 9);
    r->au_threshold = sb_report_real (st, 10);
    r->au_mean = sb_report_real (st, 11);
    r->passed = sqlite3_column_type (st, 12) == SQLITE_NULL ? -1 : sqlite3_column_int (st, 12) != 0;
    r->epochs = sqlite3_column_int64 (st, 13);
    r->sps = sb_report_real (st, 14);
    r->mibps = sb_report_real (st, 15);
    r->config = s_dup (st, 16);
    sqlite3_finalize (st);
    return 1;
}

void
sb_export_page_run_fini (sb_export_page_run_t *r)
{
    free (r->kind);
    free (r->workload);
    free (r->status);
    free (r->error);
    free (r->config);
    r->kind = r->workload = r->status = r->error = r->config = NULL;
}

int
sb_export_timeseries_span (sqlite3 *db, int64_t run_id, double start, double *span)
{
    sqlite3_stmt *st;
    *span = 0;
    if (sb_report_prepare (db, "SELECT max(t) - ?2 FROM timeseries WHERE run_id = ?1", run_id, &st) != 0)
        return -1;
    if (sqlite3_bind_double (st, 2, start) != SQLITE_OK || sqlite3_step (st) != SQLITE_ROW) {
        sqlite3_finalize (st);
        return -1;
    }
    *span = sqlite3_column_double (st, 0);
    sqlite3_finalize (st);
    return 0;
}

int
sb_export_host_bins (sqlite3 *db, int64_t run_id, double start, int64_t bin_s,
                     int (*fn) (void *ctx, const sb_export_host_bin_t *b), void *ctx)
{
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT w.host, CAST((ts.t - ?2) / ?3 AS INTEGER) AS b, sum(ts.bytes)"
                           " FROM timeseries ts JOIN run_workers w ON w.run_id = ts.run_id"
                           "  AND ts.rank >= w.first_rank AND ts.rank < w.first_rank + w.ranks"
                           " WHERE ts.run_id = ?1 GROUP BY w.host, b ORDER BY w.host, b", run_id, &st) != 0)
        return -1;
    if (sqlite3_bind_double (st, 2, start) != SQLITE_OK || sqlite3_bind_int64 (st, 3, bin_s) != SQLITE_OK) {
        sqlite3_finalize (st);
        return -1;
    }
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_export_host_bin_t b = {
            .host = sb_report_column_text (st, 0), .bin = sqlite3_column_int64 (st, 1),
            .bytes = sqlite3_column_int64 (st, 2),
        };
        stopped = fn (ctx, &b) != 0;
    }
    return sb_report_step_end (st, step, stopped);
}

int
sb_export_latency_bins (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, int64_t low_us, int64_t count),
                           void *ctx)
{
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT bin_low_us, sum(count) FROM read_latency WHERE run_id = ?1"
                           " GROUP BY bin_low_us ORDER BY bin_low_us", run_id, &st) != 0)
        return -1;
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        stopped = fn (ctx, sqlite3_column_int64 (st, 0), sqlite3_column_int64 (st, 1)) != 0;
    }
    return sb_report_step_end (st, step, stopped);
}

int
sb_export_endpoint_count (sqlite3 *db, int64_t run_id, int64_t *n, int64_t *max_requests)
{
    sqlite3_stmt *st;
    *n = *max_requests = 0;
    if (sb_report_prepare (db, "SELECT count(*), max(requests) FROM endpoints WHERE run_id = ?1", run_id, &st) != 0)
        return -1;
    if (sqlite3_step (st) != SQLITE_ROW) {
        sqlite3_finalize (st);
        return -1;
    }
    *n = sqlite3_column_int64 (st, 0);
    *max_requests = sqlite3_column_int64 (st, 1);
    sqlite3_finalize (st);
    return 0;
}

int
sb_export_errors (sqlite3 *db, int64_t run_id, int (*fn) (void *ctx, const sb_export_error_t *e), void *ctx)
{
    sqlite3_stmt *st;
    if (sb_report_prepare (db, "SELECT t, rank, host, op, target, endpoint, http_status, message, service_code,"
                           " library_code FROM errors WHERE run_id = ?1 ORDER BY t, rowid", run_id, &st) != 0)
        return -1;
    int step = SQLITE_DONE, stopped = 0;
    while (!stopped && (step = sqlite3_step (st)) == SQLITE_ROW) {
        sb_export_error_t e = {
            .t = sqlite3_column_double (st, 0),
            .has_rank = sqlite3_column_type (st, 1) != SQLITE_NULL, .rank = sqlite3_column_int64 (st, 1),
            .host = sb_report_column_text (st, 2), .op = sb_report_column_text (st, 3),
            .target = sb_report_column_text (st, 4), .endpoint = sb_report_column_text (st, 5),
            .has_http_status = sqlite3_column_type (st, 6) != SQLITE_NULL, .http_status = sqlite3_column_int64 (st, 6),
            .message = sb_report_column_text (st, 7), .service_code = sb_report_column_text (st, 8),
            .has_library_code = sqlite3_column_type (st, 9) != SQLITE_NULL, .library_code = sqlite3_column_int64 (st, 9),
        };
        stopped = fn (ctx, &e) != 0;
    }
    return sb_report_step_end (st, step, stopped);
}
