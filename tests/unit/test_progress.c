/* progress and live: the status text for a live model fed by hand, exact
 * strings; steps (not reads) make the progress, DLIO's AU, silent hosts. */
#include <check.h>
#include "check_main.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "live.h"
#include "log.h"
#include "progress.h"

START_TEST (test_eta)
{
    static const struct { double s; const char *text; } cases[] = {
        { 0, "0:00" }, { 5.4, "0:05" }, { 59.6, "1:00" }, { 65, "1:05" }, { 3599, "59:59" },
        { 3600, "1:00:00" }, { 3723, "1:02:03" }, { -1, "--:--" }, { NAN, "--:--" }, { INFINITY, "--:--" },
        { 1e9, "--:--" },
    };
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_progress_format_eta (cases[i].s, buf, sizeof buf);
        ck_assert_str_eq (buf, cases[i].text);
    }
}
END_TEST

/* 4 ranks on 2 hosts (h0: 0-1, h1: 2-3), 10 steps of batch 2, epoch 1 of 2
 * from t = 100. At 101 the ranks of h0 computed 4 steps and read 12
 * samples (prefetch runs ahead), those of h1 2 steps and 10 samples. */
static sb_live_t *
s_two_hosts (void)
{
    sb_live_t *live = sb_live_new (4, 1.5);
    ck_assert_ptr_nonnull (live);
    ck_assert_int_eq (sb_live_join (live, 0, 2, "h0", 99.0), 0);
    ck_assert_int_eq (sb_live_join (live, 2, 2, "h1", 99.0), 0);
    sb_live_phase (live, "train", 1, 2, 10, 40, 2, 100.0);
    sb_live_heard (live, 2, 2, 100.0);
    for (uint64_t r = 0; r < 4; r++) {
        int fast = r < 2;
        /* the first step (0.2 s of proc time) is out of DLIO's window */
        sb_live_interval_t d = { .samples = fast ? 12 : 10, .bytes = 1048576, .steps = fast ? 4 : 2,
                                 .metric_compute_ns = fast ? 300000000 : 100000000, .excluded_ns = 200000000,
                                 .in_flight = r == 0 ? 3 : 0 };
        sb_live_stats (live, r, &d, 101.0);
    }
    sb_live_heard (live, 0, 2, 101.9);
    return live;
}

START_TEST (test_train_block)
{
    sb_live_t *live = s_two_hosts ();
    sb_live_endpoint (live, 1, "http://127.0.0.1:9000", 10, 0, 1, 2, NULL, 0);
    char buf[2048];
    /* at 102: 12 of 40 steps (30%), the step everyone passed is 2; 44
     * samples and 4 MiB in 2 s; AU as of the ranks' last STATS (101): h0's
     * ranks 0.3 / (1 - 0.2) = 37.50%, h1's 0.1 / 0.8 = 12.50%, the mean 25.00%; ETA 2 x 28 / 12 = 4.7 s,
     * the run's adds an epoch as long as this one will be (6.7 s); h1 was
     * last heard at 100: silent for 2.0 s, over the 1.5 s limit */
    ck_assert_int_eq (sb_progress_format (live, 102.0, 4, " | ", buf, sizeof buf), 5);
    ck_assert_str_eq (buf, "train epoch 1/2 step 2/10 (30.0%), ETA 0:05 (run 0:11)"
                           " | 22.0 samples/s, 2.0 MiB/s, 3 reads in flight, AU 25.00%"
                           " | 2 hosts, 1 silent, ranks done 0/4; errors 1, retries 2;"
                           " http://127.0.0.1:9000: 1 errors, 2 retries"
                           " | host h1 ranks 2-3: step 2/10, AU 12.50%, SILENT 2.0 s"
                           " | host h0 ranks 0-1: step 4/10, AU 37.50%");
    /* one host line asked for: the slowest, and how many more */
    ck_assert_int_eq (sb_progress_format (live, 102.0, 1, "\n", buf, sizeof buf), 5);
    ck_assert_ptr_nonnull (strstr (buf, "\nhost h1 ranks 2-3: step 2/10, AU 12.50%, SILENT 2.0 s\n(1 more hosts)"));
    /* a small buffer is cut, never overrun */
    char small[16];
    memset (small, 'x', sizeof small);
    sb_progress_format (live, 102.0, 4, " | ", small, sizeof small);
    ck_assert_uint_eq (strlen (small), sizeof small - 1);
    sb_live_destroy (&live);
    ck_assert_ptr_null (live);
}
END_TEST

/* Progress never reaches 100% before every rank computed its last step,
 * however far reads ran ahead; done ranks give the first / last done. */
START_TEST (test_steps_not_reads)
{
    sb_live_t *live = s_two_hosts ();
    /* every sample of the epoch is read, ranks 0-2 computed all 10 steps, rank 3 nine */
    for (uint64_t r = 0; r < 4; r++) {
        sb_live_interval_t d = { .samples = r < 2 ? 8 : 10, .steps = r < 3 ? (r < 2 ? 6 : 8) : 7 };
        sb_live_stats (live, r, &d, 103.0);
    }
    sb_live_run_view_t v;
    sb_live_run_view (live, 103.0, &v);
    ck_assert_uint_eq (v.samples, 80);
    ck_assert_uint_eq (v.steps_done, 39);
    ck_assert_uint_eq (v.step_min, 9);
    ck_assert_double_gt (v.epoch_eta_s, 0);
    sb_live_rank_done_t d = { .dlio_au_pct = 50, .compute_s = 1 };
    sb_live_rank_done (live, 0, &d, 103.5);
    sb_live_rank_done (live, 2, &d, 104.0);
    sb_live_run_view (live, 104.0, &v);
    ck_assert_uint_eq (v.ranks_done, 2);
    ck_assert_double_eq_tol (v.first_done_s, 3.5, 1e-9);
    ck_assert_double_lt (v.last_done_s, 0);    /* not all done */
    sb_live_rank_view_t rv;
    ck_assert_int_eq (sb_live_rank_view (live, 0, 104.0, &rv), 0);
    ck_assert_double_eq_tol (rv.recorded_au_pct, 50, 1e-9);
    ck_assert_int_eq (sb_live_rank_view (live, 4, 104.0, &rv), -1);
    sb_live_phase_end (live, 48.0, 105.0);
    sb_live_phase (live, "train", 2, 2, 10, 40, 2, 105.0);
    char buf[2048];
    sb_progress_format (live, 105.0, 0, " | ", buf, sizeof buf);
    /* the new epoch: nothing yet, AU unknown (not 0), the run's mean is epoch 1's recorded one */
    ck_assert_str_eq (buf, "train epoch 2/2 step 0/10 (0.0%), ETA --:-- | 0.0 samples/s, 0.0 MiB/s,"
                           " 0 reads in flight, AU - (run 48.00% over 1 epoch) | 2 hosts, 2 silent,"
                           " ranks done 0/4; errors 0, retries 0");
    sb_live_destroy (&live);
}
END_TEST

/* Plain lines: one when due, one at the end of the phase whatever its
 * length (ties in steps and AU: the host quiet longest first); a host silent past the limit is warned of at once, and again when
 * heard from. */
START_TEST (test_plain_and_silence)
{
    FILE *f = tmpfile (), *err = tmpfile ();
    ck_assert_ptr_nonnull (f);
    ck_assert_ptr_nonnull (err);
    ck_assert_int_ne (dup2 (fileno (err), STDERR_FILENO), -1);
    sb_live_t *live = sb_live_new (2, 1.5);
    ck_assert_int_eq (sb_live_join (live, 0, 1, "a", 100.0), 0);
    ck_assert_int_eq (sb_live_join (live, 1, 1, "b", 100.0), 0);
    sb_progress_t *p = sb_progress_new (SB_PROGRESS_PLAIN, f, 5, live);
    ck_assert_ptr_nonnull (p);
    sb_live_phase (live, "train", 1, 1, 4, 8, 2, 100.0);
    sb_progress_phase (p, 100.0);
    sb_live_heard (live, 0, 1, 101.0);
    sb_progress_tick (p, 101.0);                /* nothing due, nobody silent */
    sb_live_heard (live, 0, 1, 101.6);
    sb_progress_tick (p, 101.6);                /* b: 1.6 s */
    sb_live_heard (live, 1, 1, 102.0);
    sb_progress_tick (p, 102.0);                /* b: heard again */
    sb_live_interval_t d = { .samples = 8, .steps = 4, .metric_compute_ns = 500000000 };
    sb_live_stats (live, 0, &d, 102.0);
    sb_live_stats (live, 1, &d, 102.0);
    sb_progress_end_phase (p, 102.0);           /* a 2 s epoch: its line at the end */
    sb_progress_destroy (&p);
    fflush (stderr);
    char text[2048] = "";
    rewind (f);
    text[fread (text, 1, sizeof text - 1, f)] = 0;
    ck_assert_str_eq (text, "progress: train epoch 1/1 step 4/4 (100.0%), ETA 0:00 (run 0:00) | 8.0 samples/s,"
                            " 0.0 MiB/s, 0 reads in flight, AU 25.00% | 2 hosts, 0 silent, ranks done 0/2;"
                            " errors 0, retries 0 | host a rank 0: step 4/4, AU 25.00% | host b rank 1: step 4/4,"
                            " AU 25.00%\n");
    rewind (err);
    text[fread (text, 1, sizeof text - 1, err)] = 0;
    ck_assert_ptr_nonnull (strstr (text, "warning: host b (rank 1) silent: nothing heard from it for 1.6 s\n"));
    ck_assert_ptr_nonnull (strstr (text, "warning: host b (rank 1) heard again\n"));
    ck_assert_ptr_null (strstr (text, "host a"));
    sb_live_destroy (&live);
    fclose (f);
}
END_TEST

/* The slowest hosts of many, in order, without sorting them all. */
START_TEST (test_slowest_hosts)
{
    sb_live_t *live = sb_live_new (100, 1.5);
    for (uint64_t h = 0; h < 100; h++) {
        char name[16];
        snprintf (name, sizeof name, "n%03llu", (unsigned long long) h);
        ck_assert_int_eq (sb_live_join (live, h, 1, name, 100.0), 0);
    }
    sb_live_phase (live, "train", 1, 1, 200, 200, 1, 100.0);
    for (uint64_t r = 0; r < 100; r++) {
        sb_live_interval_t d = { .steps = 100 + (r * 37) % 100, .metric_compute_ns = 1000000 };
        sb_live_stats (live, r, &d, 101.0);
    }
    sb_live_heard (live, 0, 100, 101.0);
    size_t idx[3];
    ck_assert_uint_eq (sb_live_slowest_hosts (live, 101.0, idx, 3), 3);
    /* 100 + (r x 37) % 100 is smallest for r = 0, then 73 (1), 46 (2) */
    ck_assert_uint_eq (idx[0], 0);
    ck_assert_uint_eq (idx[1], 73);
    ck_assert_uint_eq (idx[2], 46);
    sb_live_destroy (&live);
}
END_TEST

/* A host whose workers' ranks are not one run says how many and from where. */
START_TEST (test_host_ranks_apart)
{
    sb_live_t *live = sb_live_new (6, 1.5);
    ck_assert_int_eq (sb_live_join (live, 0, 2, "a", 100.0), 0);
    ck_assert_int_eq (sb_live_join (live, 2, 2, "b", 100.0), 0);
    ck_assert_int_eq (sb_live_join (live, 4, 2, "a", 100.0), 0);
    sb_live_phase (live, "train", 1, 1, 10, 60, 1, 100.0);
    sb_live_heard (live, 0, 6, 100.5);
    sb_live_interval_t d = { .steps = 3 };
    sb_live_stats (live, 4, &d, 100.5);
    char buf[2048];
    sb_progress_format (live, 101.0, 2, " | ", buf, sizeof buf);
    ck_assert_ptr_nonnull (strstr (buf, " | host a 4 ranks from 0: step 0/10, AU 0.00%"));
    ck_assert_ptr_nonnull (strstr (buf, " | host b ranks 2-3: step 0/10, AU -"));
    sb_live_host_view_t v;
    ck_assert_int_eq (sb_live_host_view (live, 0, 101.0, &v), 0);
    ck_assert_uint_eq (v.steps_done, 3);    /* rank 4 is a's */
    ck_assert_uint_eq (v.ranks, 4);
    sb_live_destroy (&live);
}
END_TEST

static void *
s_log_from_thread (void *arg)
{
    (void) arg;
    sb_warn ("from a listing thread");
    return NULL;
}

static long
s_size (FILE *f)
{
    fflush (f);
    return ftell (f);
}

/* The terminal block is erased and drawn by the thread that owns it only:
 * a line logged by another thread leaves the block alone and comes out,
 * block erased, on the owner's next tick. */
START_TEST (test_log_other_thread)
{
    FILE *block = tmpfile (), *err = tmpfile ();
    ck_assert_ptr_nonnull (block);
    ck_assert_ptr_nonnull (err);
    ck_assert_int_ne (dup2 (fileno (err), STDERR_FILENO), -1);
    sb_live_t *live = sb_live_new (2, 1.5);
    sb_progress_t *p = sb_progress_new (SB_PROGRESS_TTY, block, 1, live);
    ck_assert_ptr_nonnull (p);
    sb_live_phase (live, "train", 1, 1, 30, 60, 2, 100.0);
    sb_progress_phase (p, 100.0);
    sb_progress_tick (p, 101.0);                /* the block is drawn */
    long drawn = s_size (block);
    ck_assert_int_gt (drawn, 0);
    pthread_t t;
    ck_assert_int_eq (pthread_create (&t, NULL, s_log_from_thread, NULL), 0);
    ck_assert_int_eq (pthread_join (t, NULL), 0);
    ck_assert_int_eq (s_size (block), drawn);   /* the other thread neither erased nor drew */
    fflush (stderr);
    ck_assert_int_eq (s_size (err), 0);         /* its line waits */
    sb_progress_tick (p, 101.1);                /* the owner: erase, the line, draw */
    ck_assert_int_gt (s_size (block), drawn);
    fflush (stderr);
    char text[512] = "";
    rewind (err);
    size_t n = fread (text, 1, sizeof text - 1, err);
    text[n] = 0;
    ck_assert_ptr_nonnull (strstr (text, ": warning: from a listing thread\n"));
    sb_progress_destroy (&p);
    sb_live_destroy (&live);
    fclose (block);
}
END_TEST

START_TEST (test_parse_mode)
{
    sb_progress_mode_t m = SB_PROGRESS_OFF;
    ck_assert_int_eq (sb_progress_parse_mode ("auto", &m), 0);
    ck_assert_int_eq (m, SB_PROGRESS_AUTO);
    ck_assert_int_eq (sb_progress_parse_mode ("tty", &m), 0);
    ck_assert_int_eq (m, SB_PROGRESS_TTY);
    ck_assert_int_eq (sb_progress_parse_mode ("plain", &m), 0);
    ck_assert_int_eq (m, SB_PROGRESS_PLAIN);
    ck_assert_int_eq (sb_progress_parse_mode ("off", &m), 0);
    ck_assert_int_eq (m, SB_PROGRESS_OFF);
    ck_assert_int_eq (sb_progress_parse_mode ("yes", &m), -1);
    ck_assert_int_eq (sb_progress_parse_mode (NULL, &m), -1);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("progress");
    TCase *tc = tcase_create ("progress");
    tcase_add_test (tc, test_eta);
    tcase_add_test (tc, test_train_block);
    tcase_add_test (tc, test_steps_not_reads);
    tcase_add_test (tc, test_plain_and_silence);
    tcase_add_test (tc, test_slowest_hosts);
    tcase_add_test (tc, test_host_ranks_apart);
    tcase_add_test (tc, test_parse_mode);
    tcase_add_test (tc, test_log_other_thread);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
