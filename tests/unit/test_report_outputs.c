/* report_outputs: the pure parts behind
 * `shardbench compare` and the checkpoint figures of every output:
 * sb_config_diff (keys of runs.config that differ between runs, in
 * first-seen order, absent keys and lists) and sb_report_ckpt_metrics
 * (DLIO's save_/load_checkpoint_* means and population standard
 * deviations, checkpoint_size_GB); and the queries of report_query.c on
 * rows written by hand into a real result database: read latency
 * percentiles per epoch, per host and per run, the slowest rank (ties to
 * the lowest rank) and the failures; all against values worked out by
 * hand. */
#include <check.h>
#include "check_main.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_diff.h"
#include "report_query.h"
#include "resultdb.h"

/* the diff of the texts as "key=v1|v2|...;" lines, (absent) as "-" */
static void
s_diff_text (const char *const *yaml, size_t n, char *buf, size_t size)
{
    sb_config_diff_t d;
    char err[512] = "";
    ck_assert_msg (sb_config_diff (yaml, n, &d, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq (d.nruns, n);
    buf[0] = '\0';
    for (size_t k = 0; k < d.nrows; k++) {
        size_t len = strlen (buf);
        snprintf (buf + len, size - len, "%s=", d.rows[k].key);
        for (size_t r = 0; r < n; r++) {
            len = strlen (buf);
            snprintf (buf + len, size - len, "%s%s", r ? "|" : "", d.rows[k].values[r] ? d.rows[k].values[r] : "-");
        }
        len = strlen (buf);
        snprintf (buf + len, size - len, ";");
    }
    sb_config_diff_fini (&d);
    ck_assert_ptr_null (d.rows);
}

START_TEST (test_diff_same)
{
    const char *yaml[] = { "model:\n  name: a\ntrain:\n  epochs: 3\n", "model:\n  name: a\ntrain:\n  epochs: 3\n" };
    char buf[1024];
    s_diff_text (yaml, 2, buf, sizeof buf);
    ck_assert_str_eq (buf, "");
}
END_TEST

START_TEST (test_diff_three)
{
    const char *yaml[] = {
        "model:\n  name: a\ntrain:\n  epochs: 3\n  computation_time: 0.1\nreader:\n  batch_size: 2\n",
        ("model:\n  name: a\ntrain:\n  epochs: 2\n  computation_time: 0.1\nreader:\n  batch_size: 2\n"
         "dataset:\n  shuffle: [a, b]\n"),
        "model:\n  name: b\ntrain:\n  epochs: 3\nreader:\n  batch_size: 2\n",
    };
    char buf[1024];
    s_diff_text (yaml, 3, buf, sizeof buf);
    /* run 1's keys in its order, then the key only run 2 has; equal keys left out */
    ck_assert_str_eq (buf, "model.name=a|a|b;train.epochs=3|2|3;train.computation_time=0.1|0.1|-;"
                           "dataset.shuffle=-|[a, b]|-;");
}
END_TEST

START_TEST (test_diff_bad_yaml)
{
    const char *yaml[] = { "a: 1\n", "a: [\n" };
    sb_config_diff_t d;
    char err[512] = "";
    ck_assert_int_eq (sb_config_diff (yaml, 2, &d, err, sizeof err), -1);
    ck_assert_msg (strncmp (err, "run 2's configuration: ", 23) == 0, "%s", err);
    ck_assert_uint_eq (d.nrows, 0);
    sb_config_diff_fini (&d);
}
END_TEST

START_TEST (test_ckpt_metrics)
{
    /* DLIO's names take DLIO's figures (dlio_*: its size over rank 0's
     * time); the slowest rank's go under shardbench's names */
    sb_report_checkpoint_t rows[] = {
        { .op = "write", .bytes = 2147483648LL, .duration_s = 2.0, .gib_per_s = 1.0, .dlio_bytes = 2147483648LL,
          .dlio_duration_s = 1.0, .dlio_gib_per_s = 2.0 },
        { .op = "write", .bytes = 2147483648LL, .duration_s = 4.0, .gib_per_s = 0.5, .dlio_bytes = 2147483648LL,
          .dlio_duration_s = 3.0, .dlio_gib_per_s = 4.0 },
        { .op = "read", .bytes = 2147483648LL, .duration_s = 0.5, .gib_per_s = 4.0, .dlio_bytes = 2147483648LL,
          .dlio_duration_s = 0.5, .dlio_gib_per_s = 4.0 },
    };
    sb_report_ckpt_metrics_t m;
    sb_report_ckpt_metrics (rows, 3, &m);
    ck_assert_uint_eq (m.saves, 2);
    ck_assert_uint_eq (m.loads, 1);
    ck_assert_double_eq (m.save_gbps_mean, 3.0);
    ck_assert_double_eq (m.save_gbps_stdev, 1.0);     /* np.std: population */
    ck_assert_double_eq (m.save_s_mean, 2.0);
    ck_assert_double_eq (m.save_s_stdev, 1.0);
    ck_assert_double_eq (m.load_gbps_mean, 4.0);
    ck_assert_double_eq (m.load_gbps_stdev, 0.0);
    ck_assert_double_eq (m.load_s_mean, 0.5);
    ck_assert_double_eq (m.size_gb, 2.0);
    ck_assert_double_eq (m.slowest_save_gbps_mean, 0.75);
    ck_assert_double_eq (m.slowest_save_gbps_stdev, 0.25);
    ck_assert_double_eq (m.slowest_save_s_mean, 3.0);
    ck_assert_double_eq (m.slowest_load_s_mean, 0.5);
    ck_assert_double_eq (m.written_gb, 2.0);
    /* no reads: the load figures are NAN (DLIO writes no load_* keys) */
    sb_report_ckpt_metrics (rows, 2, &m);
    ck_assert_uint_eq (m.loads, 0);
    ck_assert (isnan (m.load_gbps_mean) && isnan (m.load_s_stdev));
    sb_report_ckpt_metrics (NULL, 0, &m);
    ck_assert (isnan (m.save_gbps_mean) && isnan (m.size_gb));
}
END_TEST

/* ---- queries on hand-made rows ---- */

static char s_dir[] = "/tmp/sb-report-outputs-XXXXXX";

static void
s_exec (sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    ck_assert_msg (sqlite3_exec (db, sql, NULL, NULL, &msg) == SQLITE_OK, "%s: %s", sql, msg ? msg : "");
}

/* latencies as "epoch host reads p50 p90 p99 p999;" (ms, %.4f) */
static void
s_lat_text (void *ctx, const sb_report_latency_t *l)
{
    char *buf = ctx;
    size_t len = strlen (buf);
    snprintf (buf + len, 1024 - len, "%lld %s %lld %.4f %.4f %.4f %.4f;", (long long) l->epoch,
              l->host ? l->host : "-", (long long) l->reads, l->p50_ms, l->p90_ms, l->p99_ms, l->p999_ms);
}

static void
s_slow_text (void *ctx, const sb_report_slowest_t *r)
{
    char *buf = ctx;
    size_t len = strlen (buf);
    snprintf (buf + len, 1024 - len, "%lld r%lld %s %.2f %.2f %.2f %.2f of %lld mean %.2f;", (long long) r->epoch,
              (long long) r->rank, r->host, r->wall_s, r->compute_s, r->io_wait_s, r->barrier_s, (long long) r->ranks,
              r->barrier_mean_s);
}

START_TEST (test_queries)
{
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
    char path[256], err[1024] = "";
    snprintf (path, sizeof path, "%s/q.db", s_dir);
    sb_resultdb_t *rdb = sb_resultdb_open (path, err, sizeof err);
    ck_assert_msg (rdb != NULL, "%s", err);
    sqlite3 *db = sb_resultdb_handle (rdb);
    /* buckets (lib/metrics/histogram.c): [0,1) us, [100,104) us, [992,1024) us */
    s_exec (db, "INSERT INTO runs (id, kind, workload, config, status, started_at, accelerators, hosts, seed)"
                " VALUES (1, 'train', 'w', '', 'succeeded', 0, 3, 2, 1);"
                "INSERT INTO read_latency VALUES (1, 1, 0, 1, 990), (1, 1, 100, 104, 9), (1, 1, 992, 1024, 1),"
                " (1, 2, 0, 1, 10);"
                "INSERT INTO host_read_latency VALUES (1, 1, 'h2', 0, 1, 490), (1, 1, 'h2', 100, 104, 5),"
                " (1, 1, 'h2', 992, 1024, 1), (1, 1, 'h1', 0, 1, 500), (1, 1, 'h1', 100, 104, 4),"
                " (1, 2, 'h1', 0, 1, 10);"
                "INSERT INTO rank_epochs (run_id, epoch, rank, host, samples, batches, bytes, started_at, finished_at,"
                " compute_s, io_wait_s, barrier_s) VALUES (1, 1, 0, 'h1', 1, 1, 1, 10, 12, 1, 0.5, 0.25),"
                " (1, 1, 1, 'h2', 1, 1, 1, 10, 13, 1, 1.5, 0.25), (1, 1, 2, 'h2', 1, 1, 1, 11, 14, 1, 1.25, 0.5),"
                " (1, 2, 0, 'h1', 1, 1, 1, 20, 21, 0.5, 0, 0), (1, 2, 1, 'h2', 1, 1, 1, 20, 20.5, 0.25, 0, 0),"
                " (1, 0, 0, 'h1', 1, 1, 1, 0, 100, 0, 0, 0);"
                "INSERT INTO endpoints (run_id, endpoint, requests, bytes, errors, retries)"
                " VALUES (1, 'a', 10, 1, 3, 2), (1, 'b', 5, 1, 1, 1);"
                "INSERT INTO errors (run_id, t, op, message) VALUES (1, 0, 'read', 'x');");
    char buf[1024] = "";
    /* epoch 1: 1000 reads; rank 500 and 900 in [0,1), 990 in [100,104), 999 in [992,1024) */
    ck_assert_int_eq (sb_report_latencies (db, 1, SB_REPORT_LATENCY_EPOCHS, s_lat_text, buf), 0);
    ck_assert_str_eq (buf, "1 - 1000 0.0005 0.0005 0.1020 1.0080;2 - 10 0.0005 0.0005 0.0005 0.0005;");
    buf[0] = '\0';
    /* h1 504 reads: rank 498 in [0,1); h2 496: rank 491 in [100,104), 495 in [992,1024) */
    ck_assert_int_eq (sb_report_latencies (db, 1, SB_REPORT_LATENCY_HOSTS, s_lat_text, buf), 0);
    ck_assert_str_eq (buf, "1 h1 504 0.0005 0.0005 0.0005 0.1020;1 h2 496 0.0005 0.0005 0.1020 1.0080;"
                           "2 h1 10 0.0005 0.0005 0.0005 0.0005;");
    buf[0] = '\0';
    /* the run: 1010 reads, p99 rank 999 still in [0,1), p99.9 rank 1008 in [100,104) */
    ck_assert_int_eq (sb_report_latencies (db, 1, SB_REPORT_LATENCY_RUN, s_lat_text, buf), 0);
    ck_assert_str_eq (buf, "0 - 1010 0.0005 0.0005 0.0005 0.1020;");
    buf[0] = '\0';
    ck_assert_int_eq (sb_report_latencies (db, 2, SB_REPORT_LATENCY_RUN, s_lat_text, buf), 0);
    ck_assert_str_eq (buf, "");
    /* epoch 1: ranks 1 and 2 both 3 s: the lower; epoch 2: rank 0; datagen's epoch 0 left out */
    ck_assert_int_eq (sb_report_slowest (db, 1, s_slow_text, buf), 0);
    ck_assert_str_eq (buf, "1 r1 h2 3.00 1.00 1.50 0.25 of 3 mean 0.33;2 r0 h1 1.00 0.50 0.00 0.00 of 2 mean 0.00;");
    sb_report_failures_t f;
    ck_assert_int_eq (sb_report_failures (db, 1, &f), 0);
    ck_assert (f.endpoints == 2 && f.requests == 15 && f.request_errors == 4 && f.retries == 3 && f.error_rows == 1);
    ck_assert_int_eq (sb_report_failures (db, 2, &f), 0);
    ck_assert (f.endpoints == 0 && f.requests == 0 && f.retries == 0 && f.error_rows == 0);
    sb_resultdb_destroy (&rdb);
    ck_assert_int_eq (unlink (path), 0);
    char cmd[300];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    ck_assert_int_eq (system (cmd), 0);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("report_outputs");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_diff_same);
    tcase_add_test (tc, test_diff_three);
    tcase_add_test (tc, test_diff_bad_yaml);
    tcase_add_test (tc, test_ckpt_metrics);
    tcase_add_test (tc, test_queries);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
