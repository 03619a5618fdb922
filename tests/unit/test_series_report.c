/* test_series_report: sb_series_verdict (coordinator/report/series_report.h),
 * the aggregate and the rules of a series , on runs
 * built here with known figures. */
#include "check_main.h"
#include "series_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A train series of n runs, the first warmup of them warm-up runs: run i
 * starts at 1000 + 10 i and lasts 6 s, AU 90 + 2 i, samples/s 100 i,
 * MB/s 10 i, 100 samples and 2^20 bytes in 2 s of epochs each. */
static void
s_train (sb_series_t *s, sb_series_run_t *runs, size_t n, size_t warmup)
{
    memset (s, 0, sizeof *s);
    snprintf (s->kind, sizeof s->kind, "train");
    s->runs = n;
    s->warmup = warmup;
    for (size_t i = 0; i < n; i++) {
        sb_series_run_t *r = &runs[i];
        memset (r, 0, sizeof *r);
        r->id = (int64_t) i + 1;
        r->series_index = (int64_t) i + 1;
        r->warmup = i < warmup;
        snprintf (r->kind, sizeof r->kind, "train");
        snprintf (r->status, sizeof r->status, "succeeded");
        snprintf (r->meet, sizeof r->meet, "success");
        r->passed = 1;
        r->started_at = 1000.25 + 10.0 * (double) i;
        r->finished_at = r->started_at + 6;
        r->au_percentage = 90 + 2.0 * (double) i;
        r->samples_per_s = 100.0 * (double) i;
        r->mb_per_s = 10.0 * (double) i;
        r->samples = 100;
        r->bytes = 1048576;
        r->epoch_time_s = 2;
        r->epochs = 1;
    }
}

START_TEST (test_six_runs_pass)
{
    sb_series_t s;
    sb_series_run_t runs[6];
    sb_series_verdict_t v;
    s_train (&s, runs, 6, 1);
    sb_series_verdict (&s, runs, 6, &v);
    ck_assert_uint_eq (v.runs, 6);
    ck_assert_uint_eq (v.warmup, 1);
    ck_assert_uint_eq (v.measured, 5);
    /* AU of runs 2..6: 92 94 96 98 100: mean 96, population stdev sqrt(8) */
    ck_assert_double_eq_tol (v.mean[0], 96, 1e-12);
    ck_assert_double_eq_tol (v.stdev[0], sqrt (8), 1e-12);
    ck_assert_double_eq_tol (v.mean[1], 300, 1e-12);
    ck_assert_double_eq_tol (v.stdev[1], sqrt (20000), 1e-9);
    ck_assert_double_eq_tol (v.mean[2], 30, 1e-12);
    /* totals: 500 samples and 5 MiB in 10 s */
    ck_assert_int_eq (v.samples, 500);
    ck_assert_int_eq (v.bytes, 5 * 1048576);
    ck_assert_double_eq_tol (v.time_s, 10, 1e-12);
    ck_assert_double_eq_tol (v.total_samples_per_s, 50, 1e-12);
    ck_assert_double_eq_tol (v.total_mb_per_s, 0.5, 1e-12);
    /* gaps of 10 s under 2 x 6 s */
    ck_assert_double_eq (v.max_gap_s, 10);
    ck_assert_double_eq (v.shortest_s, 6);
    ck_assert_int_eq (v.all_succeeded, 1);
    ck_assert_int_eq (v.count_ok, 1);
    ck_assert_int_eq (v.au_ok, 1);
    ck_assert_int_eq (v.gap_ok, 1);
    ck_assert_int_eq (v.passed, 1);
}
END_TEST

/* The warm-up's AU fails the series (rule 3.3.2 reads every run), though
 * the measured runs' aggregate leaves it out. */
START_TEST (test_warmup_au_fails)
{
    sb_series_t s;
    sb_series_run_t runs[6];
    sb_series_verdict_t v;
    s_train (&s, runs, 6, 1);
    snprintf (runs[0].meet, sizeof runs[0].meet, "fail");
    runs[0].au_percentage = 10;
    sb_series_verdict (&s, runs, 6, &v);
    ck_assert_double_eq_tol (v.mean[0], 96, 1e-12);
    ck_assert_int_eq (v.au_ok, 0);
    ck_assert_int_eq (v.count_ok, 1);
    ck_assert_int_eq (v.passed, 0);
}
END_TEST

/* 5 runs, or 6 with 2 warm-ups, are not the rules' 6 with 5 measured; 6
 * measured runs are. */
START_TEST (test_run_count)
{
    sb_series_t s;
    sb_series_run_t runs[7];
    sb_series_verdict_t v;
    s_train (&s, runs, 5, 0);
    sb_series_verdict (&s, runs, 5, &v);
    ck_assert_int_eq (v.count_ok, 0);
    ck_assert_int_eq (v.passed, 0);
    s_train (&s, runs, 6, 2);
    sb_series_verdict (&s, runs, 6, &v);
    ck_assert_uint_eq (v.measured, 4);
    ck_assert_int_eq (v.count_ok, 0);
    s_train (&s, runs, 6, 0);
    sb_series_verdict (&s, runs, 6, &v);
    ck_assert_int_eq (v.count_ok, 1);
    ck_assert_int_eq (v.passed, 1);
    s_train (&s, runs, 7, 1);
    sb_series_verdict (&s, runs, 7, &v);
    ck_assert_int_eq (v.count_ok, 0);
}
END_TEST

/* A gap of 12 s (whole seconds of the start) is not under 2 x the 6 s run;
 * 11 s is. */
START_TEST (test_gap)
{
    sb_series_t s;
    sb_series_run_t runs[6];
    sb_series_verdict_t v;
    s_train (&s, runs, 6, 1);
    runs[3].started_at = runs[2].started_at + 11.9;     /* 1020.25 -> 1032.15: 12 s by the names */
    runs[3].finished_at = runs[3].started_at + 6;
    sb_series_verdict (&s, runs, 6, &v);
    ck_assert_double_eq (v.max_gap_s, 12);
    ck_assert_int_eq (v.gap_ok, 0);
    ck_assert_int_eq (v.passed, 0);
    runs[3].started_at = runs[2].started_at + 10.9;     /* 1031.15: 11 s */
    runs[3].finished_at = runs[3].started_at + 6;
    sb_series_verdict (&s, runs, 6, &v);
    ck_assert_double_eq (v.max_gap_s, 11);
    ck_assert_int_eq (v.gap_ok, 1);
    ck_assert_int_eq (v.passed, 1);
}
END_TEST

/* A series stopped by a failed run: not every run asked for succeeded; the
 * failed run is not measured. */
START_TEST (test_failed_run)
{
    sb_series_t s;
    sb_series_run_t runs[6];
    sb_series_verdict_t v;
    s_train (&s, runs, 6, 1);
    snprintf (runs[2].status, sizeof runs[2].status, "failed");
    runs[2].au_percentage = NAN;
    runs[2].finished_at = NAN;
    snprintf (runs[2].meet, sizeof runs[2].meet, "%s", "");
    sb_series_verdict (&s, runs, 3, &v);
    ck_assert_uint_eq (v.measured, 1);
    ck_assert_double_eq_tol (v.mean[0], 92, 1e-12);
    ck_assert_double_eq_tol (v.stdev[0], 0, 1e-12);
    ck_assert_int_eq (v.all_succeeded, 0);
    ck_assert_int_eq (v.gap_ok, 0);
    ck_assert_int_eq (v.passed, 0);
}
END_TEST

/* Checkpoint series: write and read MB/s per run, mean across runs and the
 * totals; every measured run needs 10 writes and 10 reads. */
START_TEST (test_checkpoint)
{
    sb_series_t s;
    sb_series_run_t runs[3];
    sb_series_verdict_t v;
    memset (&s, 0, sizeof s);
    snprintf (s.kind, sizeof s.kind, "checkpoint");
    s.runs = 3;
    s.warmup = 1;
    for (int i = 0; i < 3; i++) {
        memset (&runs[i], 0, sizeof runs[i]);
        snprintf (runs[i].kind, sizeof runs[i].kind, "checkpoint");
        snprintf (runs[i].status, sizeof runs[i].status, "succeeded");
        runs[i].warmup = i == 0;
        runs[i].started_at = 1000 + i;
        runs[i].finished_at = 1001 + i;
        runs[i].ckpt_count[0] = runs[i].ckpt_count[1] = 10;
        runs[i].ckpt_bytes[0] = 10 * 1000000;   /* checkpoint MB: 10^6 bytes */
        runs[i].ckpt_time_s[0] = 1 + i;         /* 10, 5, 3.33 MB/s */
        runs[i].ckpt_bytes[1] = 20 * 1000000;
        runs[i].ckpt_time_s[1] = 1;             /* 20 MB/s */
    }
    sb_series_verdict (&s, runs, 3, &v);
    ck_assert_uint_eq (v.measured, 2);
    ck_assert_double_eq_tol (v.mean[0], (5 + 10.0 / 3) / 2, 1e-12);
    ck_assert_double_eq_tol (v.mean[1], 20, 1e-12);
    ck_assert_double_eq_tol (v.stdev[1], 0, 1e-12);
    ck_assert_double_eq_tol (v.total_ckpt_mb_per_s[0], 20.0 / 5, 1e-12);
    ck_assert_double_eq_tol (v.total_ckpt_mb_per_s[1], 40.0 / 2, 1e-12);
    ck_assert_int_eq (v.count_ok, 1);
    ck_assert_int_eq (v.passed, 1);
    runs[2].ckpt_count[1] = 9;
    sb_series_verdict (&s, runs, 3, &v);
    ck_assert_int_eq (v.count_ok, 0);
    ck_assert_int_eq (v.passed, 0);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("series_report");
    TCase *tc = tcase_create ("verdict");
    tcase_add_test (tc, test_six_runs_pass);
    tcase_add_test (tc, test_warmup_au_fails);
    tcase_add_test (tc, test_run_count);
    tcase_add_test (tc, test_gap);
    tcase_add_test (tc, test_failed_run);
    tcase_add_test (tc, test_checkpoint);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
