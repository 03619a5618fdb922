/* resultdb: the rows and read-backs the session records through the
 * result-database module (the session calls no sqlite3_*):
 * checkpoint rank rows and their checkpoints row, and the totals read back
 * for the log lines, without and with the writer thread; and the typed
 * queries of the run summaries (coordinator/db/report_query.h). */
#include <check.h>
#include "check_main.h"
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_query.h"
#include "resultdb.h"

static char s_dir[64];
static char s_path[128];

static void
s_setup (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/sbrdbXXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
    snprintf (s_path, sizeof s_path, "%s/results.db", s_dir);
}

static void
s_teardown (void)
{
    sb_check_remove_tree (s_dir);
}

/* A database with one run begun; *run_id its id. writer: rows go through
 * the writer thread. */
static sb_resultdb_t *
s_open (int writer, int64_t *run_id)
{
    char err[512] = "";
    sb_resultdb_t *db = sb_resultdb_open (s_path, err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    if (writer)
        ck_assert_msg (sb_resultdb_start_writer (db, 10, err, sizeof err) == 0, "%s", err);
    sb_run_info_t info = { .kind = "checkpoint", .workload = "unit", .config = "", .accelerators = 2, .hosts = 1,
                           .workers = 1, .seed = 1 };
    *run_id = sb_resultdb_run_begin (db, &info);
    ck_assert_int_gt (*run_id, 0);
    return db;
}

/* One value of a query on the caller's connection (a double; NULL: NAN). */
static double
s_value (sb_resultdb_t *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq (sqlite3_prepare_v2 (sb_resultdb_handle (db), sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
    double v = sqlite3_column_type (st, 0) == SQLITE_NULL ? NAN : sqlite3_column_double (st, 0);
    sqlite3_finalize (st);
    return v;
}

static const uint64_t GIB = 1073741824ull;

/* Two ranks of checkpoint 1 (seq 1): 1 GiB in 2 s and 1 GiB in 4 s. */
static void
s_two_ranks (sb_resultdb_t *db, int64_t run_id)
{
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, run_id, 1, "write", 1, 0, "h0", 3, GIB, 100.0, 102.0), 0);
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, run_id, 1, "write", 1, 1, "h1", 4, GIB, 101.0, 105.0), 0);
    ck_assert_int_eq (sb_resultdb_close_ckpt (db, run_id, 1, 2 * GIB, 0), 0);
}

START_TEST (test_ckpt_rows_and_totals)
{
    int64_t run_id;
    sb_resultdb_t *db = s_open (0, &run_id);
    s_two_ranks (db, run_id);
    ck_assert_int_eq (sb_resultdb_flush (db), 0);
    /* the ranks' rows: duration and MB/s each */
    ck_assert_double_eq_tol (s_value (db, "SELECT duration_s FROM checkpoint_ranks WHERE rank = 0"), 2.0, 1e-9);
    ck_assert_double_eq_tol (s_value (db, "SELECT mb_per_s FROM checkpoint_ranks WHERE rank = 0"), GIB / 1e6 / 2, 1e-6);
    ck_assert_double_eq_tol (s_value (db, "SELECT files FROM checkpoints WHERE seq = 1"), 7, 1e-9);
    ck_assert_double_eq_tol (s_value (db, "SELECT ranks FROM checkpoints WHERE seq = 1"), 2, 1e-9);
    /* span: first start to last finish; the slowest rank's MB/s */
    ck_assert_double_eq_tol (s_value (db, "SELECT span_s FROM checkpoints WHERE seq = 1"), 5.0, 1e-9);
    ck_assert_double_eq_tol (s_value (db, "SELECT min_rank_mb_per_s FROM checkpoints WHERE seq = 1"), GIB / 1e6 / 4,
                             1e-6);
    sb_ckpt_totals_t t;
    ck_assert_int_eq (sb_resultdb_ckpt_totals (db, run_id, 1, &t), 1);
    ck_assert_int_eq (t.bytes, (int64_t) (2 * GIB));
    ck_assert_double_eq_tol (t.duration_s, 4.0, 1e-9);     /* the slowest rank */
    ck_assert_double_eq_tol (t.gib_per_s, 0.5, 1e-9);
    sb_resultdb_destroy (&db);
    ck_assert_ptr_null (db);
}
END_TEST

/* A rank that took no time: no MB/s (NULL), and no throughput for the
 * checkpoint; the totals read NULL as 0. */
START_TEST (test_ckpt_zero_duration)
{
    int64_t run_id;
    sb_resultdb_t *db = s_open (0, &run_id);
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, run_id, 2, "read", 1, 0, "h0", 1, 4096, 50.0, 50.0), 0);
    ck_assert_int_eq (sb_resultdb_close_ckpt (db, run_id, 2, 4096, 1), 0);
    ck_assert (isnan (s_value (db, "SELECT dlio_gib_per_s FROM checkpoints WHERE seq = 2")));
    ck_assert (isnan (s_value (db, "SELECT mb_per_s FROM checkpoint_ranks WHERE seq = 2")));
    ck_assert (isnan (s_value (db, "SELECT gib_per_s FROM checkpoints WHERE seq = 2")));
    sb_ckpt_totals_t t;
    ck_assert_int_eq (sb_resultdb_ckpt_totals (db, run_id, 2, &t), 1);
    ck_assert_int_eq (t.bytes, 4096);
    ck_assert_double_eq (t.duration_s, 0);
    ck_assert_double_eq (t.gib_per_s, 0);
    sb_resultdb_destroy (&db);
}
END_TEST

/* A datagen's epoch 0: the ranks' files and bytes summed, first start to
 * last finish. */
START_TEST (test_epoch_totals)
{
    int64_t run_id;
    sb_resultdb_t *db = s_open (0, &run_id);
    sb_rank_epoch_t a = { .epoch = 0, .rank = 0, .samples = 3, .bytes = 1000000, .host = "h0", .started_at = 10,
                          .finished_at = 12 };
    sb_rank_epoch_t b = { .epoch = 0, .rank = 1, .samples = 4, .bytes = 3000000, .host = "h0", .started_at = 11,
                          .finished_at = 14 };
    ck_assert_int_eq (sb_resultdb_add_rank_epoch (db, run_id, &a), 0);
    ck_assert_int_eq (sb_resultdb_add_rank_epoch (db, run_id, &b), 0);
    ck_assert_int_eq (sb_resultdb_close_epoch (db, run_id, 0, 0, 0, 0), 0);
    sb_epoch_totals_t t;
    ck_assert_int_eq (sb_resultdb_epoch_totals (db, run_id, 0, &t), 1);
    ck_assert_int_eq (t.samples, 7);
    ck_assert_int_eq (t.bytes, 4000000);
    ck_assert_double_eq_tol (t.duration_s, 4.0, 1e-9);
    ck_assert_double_eq_tol (t.mb_per_s, 1.0, 1e-9);
    sb_resultdb_destroy (&db);
}
END_TEST

/* DLIO's figures of a checkpoint (statscounter.py end_save_ckpt): its
 * checkpoint_size over rank 0's own time, not the slowest rank's; with
 * checkpoint.rank_sync rank 0's clock runs until the last rank is done;
 * the size is the plan's count of DLIO's, not the bytes written. */
START_TEST (test_ckpt_dlio_figures)
{
    int64_t run_id;
    sb_resultdb_t *db = s_open (0, &run_id);
    /* seq 1: rank 0 1 GiB in 2 s (100-102), rank 1 1 GiB in 4 s (101-105) */
    s_two_ranks (db, run_id);
    /* seq 2: the same times, rank_sync: rank 0 from 100 until 105 */
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, run_id, 2, "write", 2, 0, "h0", 3, GIB, 100.0, 102.0), 0);
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, run_id, 2, "write", 2, 1, "h1", 4, GIB, 101.0, 105.0), 0);
    ck_assert_int_eq (sb_resultdb_close_ckpt (db, run_id, 2, 2 * GIB, 1), 0);
    /* seq 3: rank_sync where rank 0 is the last (clock offsets): never below its own time */
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, run_id, 3, "read", 1, 0, "h0", 3, GIB, 100.0, 106.0), 0);
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, run_id, 3, "read", 1, 1, "h1", 4, GIB, 99.0, 100.5), 0);
    ck_assert_int_eq (sb_resultdb_close_ckpt (db, run_id, 3, 2 * GIB, 1), 0);
    /* seq 4: DLIO counts 10240 of the 2 GiB written (a megatron_deepspeed layout) */
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, run_id, 4, "write", 3, 0, "h0", 3, GIB, 100.0, 102.0), 0);
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, run_id, 4, "write", 3, 1, "h1", 4, GIB, 101.0, 105.0), 0);
    ck_assert_int_eq (sb_resultdb_close_ckpt (db, run_id, 4, 10240, 0), 0);
    ck_assert_int_eq (sb_resultdb_flush (db), 0);
    ck_assert_double_eq (s_value (db, "SELECT group_concat(rank_sync, '') FROM checkpoints ORDER BY seq"), 110);
    static const struct {
        int    seq;
        double bytes, dlio_s, dlio_gibps, slowest_s, slowest_gibps;
    } want[] = {
        { 1, 2.0 * GIB, 2.0, 1.0, 4.0, 0.5 },
        { 2, 2.0 * GIB, 5.0, 0.4, 4.0, 0.5 },
        { 3, 2.0 * GIB, 6.0, 1.0 / 3.0, 6.0, 1.0 / 3.0 },
        { 4, 10240.0, 2.0, 10240.0 / GIB / 2.0, 4.0, 0.5 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        sb_ckpt_totals_t t;
        ck_assert_int_eq (sb_resultdb_ckpt_totals (db, run_id, (uint64_t) want[i].seq, &t), 1);
        ck_assert_int_eq (t.dlio_bytes, (int64_t) want[i].bytes);
        ck_assert_double_eq_tol (t.dlio_duration_s, want[i].dlio_s, 1e-9);
        ck_assert_double_eq_tol (t.dlio_gib_per_s, want[i].dlio_gibps, 1e-12);
        ck_assert_double_eq_tol (t.duration_s, want[i].slowest_s, 1e-9);
        ck_assert_double_eq_tol (t.gib_per_s, want[i].slowest_gibps, 1e-12);
        ck_assert_int_eq (t.bytes, (int64_t) (2 * GIB));
    }
    /* the report's metrics: DLIO's names from DLIO's figures (mean and
     * population stdev over the writes: 1.0, 0.4, 10240 / 2^30 / 2), and
     * the slowest rank's beside them; checkpoint_size_GB the first write's
     * DLIO size, checkpoint_written_GB its bytes */
    sb_report_checkpoint_t *rows;
    size_t n;
    ck_assert_int_eq (sb_report_checkpoints (sb_resultdb_handle (db), run_id, &rows, &n), 0);
    ck_assert_uint_eq (n, 4);
    sb_report_ckpt_metrics_t m;
    sb_report_ckpt_metrics (rows, n, &m);
    sb_report_checkpoints_free (rows, n);
    double w[3] = { 1.0, 0.4, 10240.0 / GIB / 2.0 }, mean = (w[0] + w[1] + w[2]) / 3, var = 0;
    for (int i = 0; i < 3; i++)
        var += (w[i] - mean) * (w[i] - mean) / 3;
    ck_assert_uint_eq (m.saves, 3);
    ck_assert_uint_eq (m.loads, 1);
    ck_assert_double_eq_tol (m.save_gbps_mean, mean, 1e-12);
    ck_assert_double_eq_tol (m.save_gbps_stdev, sqrt (var), 1e-12);
    ck_assert_double_eq_tol (m.save_s_mean, 3.0, 1e-9);                /* 2, 5, 2 */
    ck_assert_double_eq_tol (m.load_gbps_mean, 1.0 / 3.0, 1e-12);
    ck_assert_double_eq_tol (m.load_s_mean, 6.0, 1e-9);
    ck_assert_double_eq_tol (m.size_gb, 2.0, 1e-12);
    ck_assert_double_eq_tol (m.slowest_save_gbps_mean, 0.5, 1e-12);
    ck_assert_double_eq_tol (m.slowest_save_gbps_stdev, 0.0, 1e-12);
    ck_assert_double_eq_tol (m.slowest_save_s_mean, 4.0, 1e-9);
    ck_assert_double_eq_tol (m.slowest_load_s_mean, 6.0, 1e-9);
    ck_assert_double_eq_tol (m.written_gb, 2.0, 1e-12);
    sb_resultdb_destroy (&db);
}
END_TEST

/* No such row: 0, and the totals zeroed. */
START_TEST (test_totals_missing)
{
    int64_t run_id;
    sb_resultdb_t *db = s_open (0, &run_id);
    sb_epoch_totals_t e = { .samples = 9, .bytes = 9, .duration_s = 9, .mb_per_s = 9 };
    ck_assert_int_eq (sb_resultdb_epoch_totals (db, run_id, 5, &e), 0);
    ck_assert_int_eq (e.samples, 0);
    ck_assert_int_eq (e.bytes, 0);
    ck_assert_double_eq (e.duration_s, 0);
    sb_ckpt_totals_t c = { .bytes = 9, .duration_s = 9, .gib_per_s = 9 };
    ck_assert_int_eq (sb_resultdb_ckpt_totals (db, run_id + 1, 1, &c), 0);
    ck_assert_int_eq (c.bytes, 0);
    ck_assert_double_eq (c.gib_per_s, 0);
    sb_resultdb_destroy (&db);
}
END_TEST

/* With the writer thread: the rows are read back once synced, as the
 * checkpoint phase does (close, flush, sync, then read). */
START_TEST (test_totals_after_writer_sync)
{
    int64_t run_id;
    sb_resultdb_t *db = s_open (1, &run_id);
    s_two_ranks (db, run_id);
    ck_assert_int_eq (sb_resultdb_flush (db), 0);
    ck_assert_int_eq (sb_resultdb_sync (db), 0);
    sb_ckpt_totals_t t;
    ck_assert_int_eq (sb_resultdb_ckpt_totals (db, run_id, 1, &t), 1);
    ck_assert_int_eq (t.bytes, (int64_t) (2 * GIB));
    ck_assert_double_eq_tol (t.gib_per_s, 0.5, 1e-9);
    sb_resultdb_destroy (&db);
}
END_TEST

/* A read that SQLite refuses is -1 with the cause in sb_resultdb_errmsg. */
START_TEST (test_totals_error)
{
    int64_t run_id;
    sb_resultdb_t *db = s_open (0, &run_id);
    ck_assert_int_eq (sqlite3_exec (sb_resultdb_handle (db), "DROP TABLE checkpoints", NULL, NULL, NULL), SQLITE_OK);
    sb_ckpt_totals_t t;
    ck_assert_int_eq (sb_resultdb_ckpt_totals (db, run_id, 1, &t), -1);
    ck_assert_ptr_nonnull (strstr (sb_resultdb_errmsg (db), "checkpoints"));
    sb_resultdb_destroy (&db);
}
END_TEST

/* ---- report_query: the summaries' queries, on rows the session writes */

/* The checkpoints rows in order, with their figures; none for another run. */
START_TEST (test_report_checkpoints)
{
    int64_t run_id;
    sb_resultdb_t *db = s_open (0, &run_id);
    s_two_ranks (db, run_id);
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, run_id, 2, "read", 1, 0, "h0", 3, GIB, 200.0, 201.0), 0);
    ck_assert_int_eq (sb_resultdb_close_ckpt (db, run_id, 2, GIB, 0), 0);
    sqlite3 *h = sb_resultdb_handle (db);
    sb_report_checkpoint_t *rows;
    size_t n;
    ck_assert_int_eq (sb_report_checkpoints (h, run_id, &rows, &n), 0);
    ck_assert_uint_eq (n, 2);
    ck_assert_str_eq (rows[0].op, "write");
    ck_assert_int_eq (rows[0].ranks, 2);
    ck_assert_int_eq (rows[0].files, 7);
    ck_assert_int_eq (rows[0].bytes, (int64_t) (2 * GIB));
    ck_assert_double_eq_tol (rows[0].duration_s, 4.0, 1e-9);
    ck_assert_double_eq_tol (rows[0].gib_per_s, 0.5, 1e-9);
    ck_assert_double_eq_tol (rows[0].min_rank_mb_per_s, GIB / 1e6 / 4, 1e-6);
    ck_assert_str_eq (rows[1].op, "read");
    ck_assert_int_eq (rows[1].checkpoint, 1);
    sb_report_checkpoints_free (rows, n);
    ck_assert_int_eq (sb_report_checkpoints (h, run_id + 1, &rows, &n), 0);
    ck_assert_uint_eq (n, 0);
    sb_report_checkpoints_free (rows, n);
    sb_resultdb_destroy (&db);
}
END_TEST

/* The workflow and the evaluations: absent until recorded, then as written. */
START_TEST (test_report_workflow_and_evals)
{
    int64_t run_id;
    sb_resultdb_t *db = s_open (0, &run_id);
    sqlite3 *h = sb_resultdb_handle (db);
    sb_report_workflow_t w;
    ck_assert_int_eq (sb_report_workflow (h, run_id, &w), 1);
    ck_assert_int_eq (w.has_workflow, 0);
    ck_assert_int_eq (w.evals, 0);
    ck_assert_int_eq (sb_report_workflow (h, run_id + 1, &w), 0);
    ck_assert_int_eq (sb_resultdb_run_workflow (db, run_id, "datagen,train,eval"), 0);
    sb_eval_t e1 = { .epoch = 1, .samples = 10, .steps = 5, .bytes = 1048576, .duration_s = 2, .au_percentage = 90,
                     .samples_per_s = 5 };
    sb_eval_t e2 = { .epoch = 3, .samples = 10, .steps = 5, .bytes = 1048576, .duration_s = 1, .au_percentage = 80,
                     .samples_per_s = 10 };
    ck_assert_int_eq (sb_resultdb_add_eval (db, run_id, &e2), 0);
    ck_assert_int_eq (sb_resultdb_add_eval (db, run_id, &e1), 0);
    sb_dlio_summary_t sum = { .au_mean = 85, .au_stdev = 5, .throughput_mean = 7.5, .io_mean = 0.5, .meet = 1 };
    ck_assert_int_eq (sb_resultdb_run_eval (db, run_id, &sum), 0);
    ck_assert_int_eq (sb_report_workflow (h, run_id, &w), 1);
    ck_assert_int_eq (w.has_workflow, 1);
    ck_assert_str_eq (w.workflow, "datagen,train,eval");
    ck_assert_int_eq (w.evals, 1);
    ck_assert_double_eq_tol (w.au_mean, 85, 1e-9);
    ck_assert_double_eq_tol (w.au_stdev, 5, 1e-9);
    ck_assert_double_eq_tol (w.tput_mean, 7.5, 1e-9);
    sb_report_eval_t *rows;
    size_t n;
    ck_assert_int_eq (sb_report_evals (h, run_id, &rows, &n), 0);
    ck_assert_uint_eq (n, 2);
    ck_assert_int_eq (rows[0].epoch, 1);    /* epoch order */
    ck_assert_int_eq (rows[1].epoch, 3);
    ck_assert_double_eq_tol (rows[0].mib_per_s, 0.5, 1e-9);
    ck_assert_double_eq_tol (rows[1].au_percentage, 80, 1e-9);
    ck_assert_double_eq_tol (rows[1].samples_per_s, 10, 1e-9);
    free (rows);
    sb_resultdb_destroy (&db);
}
END_TEST

/* The newest run (of a kind), DLIO's run figures (none before they are
 * recorded), and an error for a query SQLite refuses. */
START_TEST (test_report_last_run_and_dlio)
{
    int64_t run_id;
    sb_resultdb_t *db = s_open (0, &run_id);
    sqlite3 *h = sb_resultdb_handle (db);
    ck_assert_int_eq (sb_report_last_run (h, NULL), run_id);
    ck_assert_int_eq (sb_report_last_run (h, "checkpoint"), run_id);
    ck_assert_int_eq (sb_report_last_run (h, "train"), -1);
    sb_report_dlio_run_t d;
    ck_assert_int_eq (sb_report_dlio_run (h, run_id, &d), 0);
    ck_assert_int_eq (d.dlio, 0);
    sb_dlio_summary_t sum = { .au_mean = 95, .au_stdev = 1, .throughput_mean = 100, .throughput_stdev = 2,
                              .io_mean = 12.5, .io_stdev = 0.25, .meet = 1 };
    ck_assert_int_eq (sb_resultdb_run_dlio (db, run_id, &sum, 131072), 0);
    ck_assert_int_eq (sb_report_dlio_run (h, run_id, &d), 0);
    ck_assert_int_eq (d.dlio, 1);
    ck_assert_double_eq_tol (d.au_mean, 95, 1e-9);
    ck_assert_double_eq_tol (d.io_stdev, 0.25, 1e-9);
    ck_assert_int_eq (d.record_size, 131072);
    ck_assert_int_eq (sqlite3_exec (h, "DROP TABLE evals", NULL, NULL, NULL), SQLITE_OK);
    sb_report_eval_t *rows;
    size_t n;
    ck_assert_int_eq (sb_report_evals (h, run_id, &rows, &n), -1);
    ck_assert_ptr_null (rows);
    sb_resultdb_destroy (&db);
}
END_TEST

/* A run's row and its epochs for the summary: strings copied, NULLs
 * flagged; none for a run that does not exist. */
START_TEST (test_report_run_and_epochs)
{
    int64_t run_id;
    sb_resultdb_t *db = s_open (0, &run_id);
    sqlite3 *h = sb_resultdb_handle (db);
    sb_report_run_t r;
    ck_assert_int_eq (sb_report_run (h, run_id + 1, &r), 0);
    ck_assert_int_eq (sb_report_run (h, run_id, &r), 1);
    ck_assert_str_eq (r.kind, "checkpoint");
    ck_assert_str_eq (r.workload, "unit");
    ck_assert_str_eq (r.status, "running");
    ck_assert_ptr_null (r.error);
    ck_assert_int_eq (r.accelerators, 2);
    ck_assert_int_eq (r.has_duration, 0);
    ck_assert_int_eq (r.has_au_mean, 0);
    sb_report_run_fini (&r);
    ck_assert_int_eq (sb_resultdb_run_finish (db, run_id, "failed", "it broke"), 0);
    ck_assert_int_eq (sb_report_run (h, run_id, &r), 1);
    ck_assert_str_eq (r.status, "failed");
    ck_assert_str_eq (r.error, "it broke");
    ck_assert_int_eq (r.has_duration, 1);
    sb_report_run_fini (&r);
    sb_rank_epoch_t a = { .epoch = 2, .rank = 0, .samples = 8, .batches = 4, .bytes = 2097152, .host = "h0",
                          .started_at = 10, .finished_at = 12, .au = 0.5, .has_au = 1 };
    sb_rank_epoch_t b = { .epoch = 1, .rank = 0, .samples = 8, .batches = 4, .bytes = 1048576, .host = "h0",
                          .started_at = 1, .finished_at = 2, .au = 0.25, .has_au = 1 };
    ck_assert_int_eq (sb_resultdb_add_rank_epoch (db, run_id, &a), 0);
    ck_assert_int_eq (sb_resultdb_add_rank_epoch (db, run_id, &b), 0);
    ck_assert_int_eq (sb_resultdb_close_epoch (db, run_id, 2, 1, 4, 1), 0);
    ck_assert_int_eq (sb_resultdb_close_epoch (db, run_id, 1, 0, 4, 1), 0);
    ck_assert_int_eq (sb_resultdb_epoch_barrier (db, run_id, 2, 1.5, 3.5), 0);
    sb_report_epoch_t *eps;
    size_t n;
    ck_assert_int_eq (sb_report_epochs (h, run_id, &eps, &n), 0);
    ck_assert_uint_eq (n, 2);
    ck_assert_int_eq (eps[0].epoch, 1);     /* epoch order */
    ck_assert_int_eq (eps[0].has_barrier, 0);
    ck_assert_int_eq (eps[0].has_resident, 0);
    ck_assert_double_eq_tol (eps[0].au_mean, 0.25, 1e-9);
    ck_assert_int_eq (eps[1].epoch, 2);
    ck_assert_int_eq (eps[1].dropped, 1);
    ck_assert_int_eq (eps[1].batches, 4);
    ck_assert_int_eq (eps[1].bytes, 2097152);
    ck_assert_double_eq_tol (eps[1].duration_s, 2, 1e-9);
    ck_assert_double_eq_tol (eps[1].mib_per_s, 1, 1e-9);
    ck_assert_int_eq (eps[1].has_barrier, 1);
    ck_assert_double_eq_tol (eps[1].barrier_p99_ms, 3.5, 1e-9);
    free (eps);
    sb_resultdb_destroy (&db);
}
END_TEST

static Suite *
resultdb_suite (void)
{
    Suite *s = suite_create ("resultdb");
    TCase *tc = tcase_create ("session rows");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_ckpt_rows_and_totals);
    tcase_add_test (tc, test_ckpt_zero_duration);
    tcase_add_test (tc, test_ckpt_dlio_figures);
    tcase_add_test (tc, test_epoch_totals);
    tcase_add_test (tc, test_totals_missing);
    tcase_add_test (tc, test_totals_after_writer_sync);
    tcase_add_test (tc, test_totals_error);
    suite_add_tcase (s, tc);
    TCase *rq = tcase_create ("report queries");
    tcase_add_checked_fixture (rq, s_setup, s_teardown);
    tcase_add_test (rq, test_report_checkpoints);
    tcase_add_test (rq, test_report_workflow_and_evals);
    tcase_add_test (rq, test_report_last_run_and_dlio);
    tcase_add_test (rq, test_report_run_and_epochs);
    suite_add_tcase (s, rq);
    return s;
}

SB_CHECK_MAIN (resultdb_suite)
