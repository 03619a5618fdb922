/* resultdb: the rows and read-backs the session records through the
 * result-database module (issue 16: the session calls no sqlite3_*):
 * checkpoint rank rows and their checkpoints row, and the totals read back
 * for the log lines, without and with the writer thread. */
#include <check.h>
#include "check_main.h"
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    ck_assert_int_eq (sb_resultdb_close_ckpt (db, run_id, 1), 0);
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
    ck_assert_int_eq (sb_resultdb_close_ckpt (db, run_id, 2), 0);
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

static Suite *
resultdb_suite (void)
{
    Suite *s = suite_create ("resultdb");
    TCase *tc = tcase_create ("session rows");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_ckpt_rows_and_totals);
    tcase_add_test (tc, test_ckpt_zero_duration);
    tcase_add_test (tc, test_epoch_totals);
    tcase_add_test (tc, test_totals_missing);
    tcase_add_test (tc, test_totals_after_writer_sync);
    tcase_add_test (tc, test_totals_error);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (resultdb_suite)
