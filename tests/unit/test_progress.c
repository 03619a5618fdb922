/* progress: the status text for given states, exact strings. */
#include <check.h>
#include "check_main.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

START_TEST (test_train_line)
{
    /* 2 ranks, 10 s in: 480 of 1280 samples at 48/s leaves 800 / 48 = 16.7 s;
     * 10 MiB in 10 s; 15 s of compute over 2 ranks x 10 s is AU 75% */
    sb_progress_state_t s = { .phase = "train", .unit = "samples", .epoch = 2, .epochs = 3, .step = 15, .steps = 40,
                              .done = 480, .total = 1280, .bytes = 10 * 1048576, .elapsed_s = 10, .compute_s = 15,
                              .ranks = 2, .errors = 1, .retries = 4, .slow_rank = 1, .slow_host = "node-b",
                              .slow_done = 200 };
    char buf[512];
    ck_assert_int_eq (sb_progress_format (&s, " | ", buf, sizeof buf), 3);
    ck_assert_str_eq (buf, "train epoch 2/3 step 15/40, 480/1280 samples (37.5%) | 48.0 samples/s, 1.0 MiB/s,"
                           " AU 75.00%, ETA 0:17 | errors 1, retries 4, slowest rank 1 on node-b (200 samples)");
    ck_assert_int_eq (sb_progress_format (&s, "\n", buf, sizeof buf), 3);
    ck_assert_str_eq (buf, "train epoch 2/3 step 15/40, 480/1280 samples (37.5%)\n48.0 samples/s, 1.0 MiB/s,"
                           " AU 75.00%, ETA 0:17\nerrors 1, retries 4, slowest rank 1 on node-b (200 samples)");
}
END_TEST

START_TEST (test_other_phases)
{
    char buf[512];
    /* listing: no total, so no ETA; no ranks */
    sb_progress_state_t l = { .phase = "listing", .unit = "objects", .done = 3072, .elapsed_s = 2, .slow_rank = -1 };
    sb_progress_format (&l, " | ", buf, sizeof buf);
    ck_assert_str_eq (buf, "listing, 3072 objects | 1536.0 objects/s, 0.0 MiB/s, ETA --:-- | errors 0, retries 0");
    /* datagen: files of total, no AU; nothing done yet: ETA unknown */
    sb_progress_state_t d = { .phase = "datagen", .unit = "files", .done = 0, .total = 100, .elapsed_s = 1,
                              .ranks = 4, .slow_rank = 3, .slow_host = "", .slow_done = 0 };
    sb_progress_format (&d, " | ", buf, sizeof buf);
    ck_assert_str_eq (buf, "datagen, 0/100 files (0.0%) | 0.0 files/s, 0.0 MiB/s, ETA --:--"
                           " | errors 0, retries 0, slowest rank 3 on ? (0 files)");
    /* a small buffer is cut, never overrun */
    char small[16];
    memset (small, 'x', sizeof small);
    sb_progress_format (&d, " | ", small, sizeof small);
    ck_assert_uint_eq (strlen (small), sizeof small - 1);
}
END_TEST

/* The tracker: slowest rank is the one with the fewest samples this epoch,
 * step and errors show, a new epoch resets the counts but not the errors. */
START_TEST (test_tracker)
{
    FILE *f = tmpfile ();
    ck_assert_ptr_nonnull (f);
    sb_progress_t *p = sb_progress_new (SB_PROGRESS_PLAIN, f, 1, 3);
    ck_assert_ptr_nonnull (p);
    sb_progress_phase (p, "train", "samples", 1, 2, 60, 10, 100.0);
    sb_progress_stats (p, 0, "h0", 20, 1048576, 1.0);
    sb_progress_stats (p, 1, "h1", 5, 1048576, 1.0);
    sb_progress_stats (p, 2, "h2", 10, 1048576, 1.0);
    sb_progress_step (p, 3);
    sb_progress_errors (p, 2, 5);
    sb_progress_tick (p, 100.5);    /* not due yet */
    sb_progress_tick (p, 101.0);
    sb_progress_phase (p, "train", "samples", 2, 2, 60, 10, 102.0);
    sb_progress_stats (p, 1, "h1", 4, 0, 0);
    sb_progress_tick (p, 103.0);
    sb_progress_destroy (&p);
    ck_assert_ptr_null (p);
    sb_progress_destroy (&p);
    ck_assert_ptr_null (sb_progress_new (SB_PROGRESS_OFF, f, 1, 3));
    rewind (f);
    char text[1024] = "";
    size_t n = fread (text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose (f);
    ck_assert_str_eq (text,
                      "progress: train epoch 1/2 step 3/10, 35/60 samples (58.3%) | 35.0 samples/s, 3.0 MiB/s,"
                      " AU 100.00%, ETA 0:01 | errors 2, retries 5, slowest rank 1 on h1 (5 samples)\n"
                      "progress: train epoch 2/2 step 0/10, 4/60 samples (6.7%) | 4.0 samples/s, 0.0 MiB/s,"
                      " AU 0.00%, ETA 0:14 | errors 2, retries 5, slowest rank 0 on h0 (0 samples)\n");
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
    sb_progress_t *p = sb_progress_new (SB_PROGRESS_TTY, block, 1, 2);
    ck_assert_ptr_nonnull (p);
    sb_progress_phase (p, "train", "samples", 1, 1, 60, 0, 100.0);
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
    tcase_add_test (tc, test_train_line);
    tcase_add_test (tc, test_other_phases);
    tcase_add_test (tc, test_tracker);
    tcase_add_test (tc, test_parse_mode);
    tcase_add_test (tc, test_log_other_thread);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
