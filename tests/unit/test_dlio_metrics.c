/* dlio_metrics: DLIO's metric formulas (statscounter.py) with hand-computed
 * figures: nominal steps, the metric window under Python's slice rules, a
 * rank's AU and samples/s, the nominal record size, and the run summary,
 * whose means and deviations must equal numpy's to the last bit (the values
 * below were printed by numpy 1.24's np.mean / np.std; the plain sums give
 * other last digits for n = 300 and, for the deviation, n = 9). */
#include <check.h>
#include "check_main.h"
#include <math.h>
#include <string.h>

#include "dlio_metrics.h"

START_TEST (test_nominal_steps)
{
    /* floor(samples per file x files / batch / ranks) */
    ck_assert_uint_eq (sb_dlio_nominal_steps (4, 24, 4, 3, -1), 8);
    ck_assert_uint_eq (sb_dlio_nominal_steps (4, 5, 1, 2, -1), 10);
    ck_assert_uint_eq (sb_dlio_nominal_steps (1, 100, 7, 3, -1), 4);     /* 100 / 7 / 3 = 4.76 */
    ck_assert_uint_eq (sb_dlio_nominal_steps (1, 100, 7, 3, 0), 4);      /* 0: not set */
    /* total_training_steps > 0 overrides */
    ck_assert_uint_eq (sb_dlio_nominal_steps (4, 24, 4, 3, 5), 5);
    ck_assert_uint_eq (sb_dlio_nominal_steps (4, 24, 0, 3, -1), 0);
}
END_TEST

static void
s_window (uint64_t n, uint64_t s, uint64_t e, uint64_t steps, uint64_t head_end, uint64_t tail_start,
          uint64_t first, uint64_t end)
{
    sb_dlio_window_t w;
    sb_dlio_window (n, s, e, steps, &w);
    ck_assert_msg (w.head_end == head_end && w.tail_start == tail_start && w.first == first && w.end == end,
                   "N %llu S %llu E %llu steps %llu: head [0,%llu) tail [%llu,) window [%llu,%llu), expected"
                   " [0,%llu) [%llu,) [%llu,%llu)", (unsigned long long) n, (unsigned long long) s,
                   (unsigned long long) e, (unsigned long long) steps, (unsigned long long) w.head_end,
                   (unsigned long long) w.tail_start, (unsigned long long) w.first, (unsigned long long) w.end,
                   (unsigned long long) head_end, (unsigned long long) tail_start, (unsigned long long) first,
                   (unsigned long long) end);
}

START_TEST (test_window)
{
    /* DLIO's defaults: the first step out, nothing at the end */
    s_window (16, 1, 0, 16, 1, 16, 1, 16);
    s_window (16, 3, 2, 16, 3, 14, 3, 14);
    s_window (16, 0, 0, 16, 0, 16, 0, 16);
    /* fewer steps than nominal: compute[1:10] of 8 items is [1,8); proc[10:] is empty */
    s_window (10, 1, 0, 8, 1, 8, 1, 8);
    s_window (10, 1, 3, 8, 1, 7, 1, 7);
    /* N - E < 0 counts from the end: compute[1:-3] of 2 items is empty, proc[-3:] is all of them */
    s_window (2, 1, 5, 2, 1, 0, 1, 0);
    /* N - E = -1 over 4 steps: proc[-1:] is the last step; window [1, 3) */
    s_window (3, 1, 4, 4, 1, 3, 1, 3);
    /* one step: all of it excluded */
    s_window (1, 1, 0, 1, 1, 1, 1, 1);
    s_window (16, 20, 0, 16, 16, 16, 16, 16);
    s_window (0, 1, 0, 0, 0, 0, 0, 0);
    /* more steps than nominal (total_training_steps below the plan): the tail is counted from N */
    s_window (10, 1, 2, 16, 1, 8, 1, 8);
    sb_dlio_window_t w;
    sb_dlio_window (16, 3, 2, 16, &w);
    ck_assert_int_eq (sb_dlio_in_window (&w, 2), 0);
    ck_assert_int_eq (sb_dlio_in_window (&w, 3), 1);
    ck_assert_int_eq (sb_dlio_in_window (&w, 13), 1);
    ck_assert_int_eq (sb_dlio_in_window (&w, 14), 0);
}
END_TEST

START_TEST (test_rank_figures)
{
    sb_dlio_rank_t f;
    /* span 10 s less 0.5 s (head) and 0.25 s (tail): 9.25 s; 9 window steps computed 8.5 s, batch 4 */
    sb_dlio_rank_figures (10.0, 0.5, 0.25, 8.5, 9, 11, 4, &f);
    ck_assert_double_eq (f.total_time_s, 9.25);
    ck_assert_double_eq (f.au_percentage, 91.8918918918919);        /* 8.5 / 9.25 x 100 */
    ck_assert_double_eq (f.samples_per_second, 3.891891891891892);  /* 9 / 9.25 x 4 */
    /* constant compute c: samples/s = AU / 100 x batch / c exactly in value */
    sb_dlio_rank_figures (2.0, 0.1, 0, 15 * 0.1, 15, 16, 8, &f);
    ck_assert_double_eq_tol (f.au_percentage, 1.5 / 1.9 * 100, 1e-12);
    ck_assert_double_eq_tol (f.samples_per_second, f.au_percentage / 100 * 8 / 0.1, 1e-9);
    /* an empty window, a non-positive time, no steps: 0 */
    sb_dlio_rank_figures (10.0, 0.5, 0, 0, 0, 1, 4, &f);
    ck_assert (f.au_percentage == 0 && f.samples_per_second == 0);
    sb_dlio_rank_figures (1.0, 0.75, 0.25, 1, 3, 4, 4, &f);
    ck_assert (f.total_time_s == 0 && f.au_percentage == 0 && f.samples_per_second == 0);
    sb_dlio_rank_figures (1.0, 0, 0, 0.5, 0, 0, 4, &f);
    ck_assert (f.au_percentage == 0 && f.samples_per_second == 0);
    /* no compute (train.computation_time 0): AU 0, samples/s still counted */
    sb_dlio_rank_figures (2.0, 0, 0, 0, 10, 10, 2, &f);
    ck_assert (f.au_percentage == 0 && f.samples_per_second == 10.0);
}
END_TEST

START_TEST (test_record_size)
{
    ck_assert_uint_eq (sb_dlio_record_size (4096, NULL), 4096);
    ck_assert_uint_eq (sb_dlio_record_size (4096, ""), 4096);
    /* size x itemsize: 1 x 8 + 100 x 4 */
    ck_assert_uint_eq (sb_dlio_record_size (4096, "label:int64:1,data:float32:100"), 408);
    /* bool 3 x 1, an unknown dtype 2 x 4, uint32 without a size 1 x 4, float16 13 x 2 */
    ck_assert_uint_eq (sb_dlio_record_size (1, "a:bool:3,b:complex64:2,c:uint32,d:float16:13"), 41);
    /* dlrm_b200's columns: 1 x int64 label + 13 x float32 dense + 26 x int64 sparse */
    ck_assert_uint_eq (sb_dlio_record_size (0, "label:int64:1,dense:float32:13,sparse:int64:26"), 268);
}
END_TEST

START_TEST (test_summary)
{
    const double au[] = { 90, 92, 97 }, tput[] = { 100, 200, 300 };
    sb_dlio_summary_t s;
    sb_dlio_summarise (au, tput, 3, 1048576, 0.93, &s);
    ck_assert_double_eq (s.au_mean, 93.0);
    ck_assert_double_eq (s.au_stdev, 2.943920288775949);           /* sqrt(26 / 3) */
    ck_assert_double_eq (s.throughput_mean, 200.0);
    ck_assert_double_eq (s.throughput_stdev, 81.64965809277261);   /* sqrt(20000 / 3) */
    ck_assert_double_eq (s.io_mean, 200.0);                        /* x 2^20 bytes / 2^20 */
    ck_assert_double_eq (s.io_stdev, 81.64965809277261);
    ck_assert_int_eq (s.meet, 1);                                  /* 93 >= 93 */
    sb_dlio_summarise (au, tput, 3, 4096, 0.9301, &s);
    ck_assert_int_eq (s.meet, 0);
    ck_assert_double_eq (s.io_mean, 200.0 * 4096 / 1048576);
    sb_dlio_summarise (au, tput, 0, 4096, 0.9, &s);
    ck_assert (isnan (s.au_mean) && isnan (s.au_stdev) && s.meet == 0);
}
END_TEST

/* numpy's pairwise summation, to the last bit */
START_TEST (test_numpy_mean_std)
{
    static const struct {
        size_t n;
        double mean, std;
    } want[] = {
        { 9, 80.79841269841269, 37.93265571196617 },
        { 20, 75.88571428571427, 41.07068322305051 },
        { 300, 71.6, 41.46383966783587 },
    };
    double v[300];
    for (size_t t = 0; t < sizeof want / sizeof want[0]; t++) {
        for (size_t i = 0; i < want[t].n; i++)
            v[i] = (double) ((i * 7919) % 1000) / 7.0 + 0.1;
        double mean, std;
        sb_dlio_mean_std (v, want[t].n, &mean, &std);
        ck_assert_msg (mean == want[t].mean && std == want[t].std, "n %zu: mean %.17g std %.17g, numpy %.17g %.17g",
                       want[t].n, mean, std, want[t].mean, want[t].std);
    }
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("dlio_metrics");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_nominal_steps);
    tcase_add_test (tc, test_window);
    tcase_add_test (tc, test_rank_figures);
    tcase_add_test (tc, test_record_size);
    tcase_add_test (tc, test_summary);
    tcase_add_test (tc, test_numpy_mean_std);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
