/* ckpt_rank (worker/checkpoint/ckpt_rank.c) on local files: a worker whose
 * ranks' checkpoint files do not fit in the free space of the checkpoint
 * folder on its host refuses before the first write (the `checkpoint`
 * command's ranks and a checkpoint during training alike), naming the
 * folder, the bytes needed and free, with ENOSPC; nothing is created. No
 * mount: the files are 1 PiB each, more than any disk holds. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "ckpt_rank.h"
#include "proto.h"
#include "util.h"

#define S_PIB (1ull << 50)

static char s_root[256];                /* the checkpoint folder, '/'-ended */
static char s_error[2048], s_op[32], s_target[1024];
static int s_errors, s_errno, s_done;

static int
s_capture (void *ctx, const sb_msg_t *msg)
{
    (void) ctx;
    if (msg->type == SB_MSG_ERROR) {
        if (!s_errors++) {
            snprintf (s_error, sizeof s_error, "%s", msg->u.error.message);
            snprintf (s_op, sizeof s_op, "%s", msg->u.error.op);
            snprintf (s_target, sizeof s_target, "%s", msg->u.error.target);
            s_errno = (int) msg->u.error.errno_val;
        }
    }
    else if (msg->type == SB_MSG_RANK_DONE)
        s_done++;
    return 0;
}

static void
s_setup (void)
{
    char tmpl[256];
    snprintf (tmpl, sizeof tmpl, "%s/sb-ckpt-rank.XXXXXX", getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (tmpl));     /* a private folder of a name nobody could plant */
    snprintf (s_root, sizeof s_root, "%s/", tmpl);
    s_error[0] = s_op[0] = s_target[0] = '\0';
    s_errors = s_errno = s_done = 0;
}

static void
s_teardown (void)
{
    char cmd[300];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_root);
    ck_assert_int_eq (system (cmd), 0);
}

/* Files of 2 ranks, 2 each (rank 1's second of 0 bytes: not written). */
static char *s_names[] = { "a_model_states.pt", "a_optim_states.pt", "b_model_states.pt", "b_optim_states.pt" };
static uint64_t s_sizes[] = { S_PIB, S_PIB, S_PIB, 0 };
static uint64_t s_first[] = { 0, 2, 4 };

static sb_msg_phase_start_t
s_phase (void)
{
    sb_msg_phase_start_t ps;
    memset (&ps, 0, sizeof ps);
    ps.phase = "checkpoint_write";
    ps.epoch = 1;
    ps.checkpoint = 3;
    ps.ckpt_root = s_root;
    ps.ckpt_names = (sb_strs_t) { .items = s_names, .count = 4 };
    ps.ckpt_bytes = (sb_u64s_t) { .items = s_sizes, .count = 4 };
    ps.ckpt_first = (sb_u64s_t) { .items = s_first, .count = 3 };
    return ps;
}

static sb_msg_welcome_t
s_welcome (void)
{
    sb_msg_welcome_t w;
    memset (&w, 0, sizeof w);
    w.first_rank = 0;
    w.ranks = 2;
    w.total_ranks = 2;
    w.data_root = "";
    w.io_buffer = 65536;
    w.seed = 1;
    return w;
}

/* The message's free bytes, checked against statvfs now (other writers on
 * this disk move it a little); the whole message against the expected one
 * with those bytes. */
static void
s_check_message (const char *folder, const char *who, uint64_t need)
{
    const char *at = strstr (s_error, " more there, ");
    ck_assert_msg (at != NULL, "%s", s_error);
    unsigned long long free_bytes = strtoull (at + 13, NULL, 10);
    uint64_t now;
    char err[512];
    ck_assert_int_eq (sb_free_bytes (folder, folder, &now, err, sizeof err), 0);
    ck_assert_msg (free_bytes + (1ull << 30) > now && now + (1ull << 30) > free_bytes, "%llu free, statvfs %llu",
                   free_bytes, (unsigned long long) now);
    char want[2048];
    snprintf (want, sizeof want, "not enough space in %s: %s on this host need%s %llu bytes (%.2f GiB) more there,"
              " %llu bytes (%.2f GiB) are free; nothing was written", folder, who, strstr (who, "files") ? "" : "s",
              (unsigned long long) need,
              need / 1073741824.0, free_bytes, free_bytes / 1073741824.0);
    ck_assert_str_eq (s_error, want);
    ck_assert_str_eq (s_op, "write");
    ck_assert_str_eq (s_target, folder);
    ck_assert_int_eq (s_errno, ENOSPC);
}

/* The `checkpoint` command's rank 1 counts the worker's ranks 0 and 1. */
START_TEST (test_rank_refuses)
{
    sb_msg_welcome_t w = s_welcome ();
    sb_storage_cfg_t st;
    memset (&st, 0, sizeof st);
    snprintf (st.engine, sizeof st.engine, "file");
    sb_interval_t interval = { .next = 1e300 };
    sb_sender_t out = { s_capture, NULL };
    sb_ckpt_rank_t r = { .cfg = &w, .storage = &st, .rank = 1, .out = &out, .interval = &interval };
    sb_msg_phase_start_t ps = s_phase ();
    sb_ckpt_rank_run (&r, &ps);
    ck_assert_int_eq (s_errors, 1);
    ck_assert_int_eq (s_done, 0);
    char folder[300];
    snprintf (folder, sizeof folder, "%sglobal_epoch1_step3", s_root);
    s_check_message (folder, "the 3 files of ranks 0-1", 3 * S_PIB);
    struct stat sb;
    ck_assert_int_eq (stat (folder, &sb), -1);     /* nothing made */
    ck_assert_int_eq (errno, ENOENT);
}
END_TEST

/* A rank alone on its worker counts its own files. */
START_TEST (test_rank_alone)
{
    sb_msg_welcome_t w = s_welcome ();
    w.first_rank = 1;
    w.ranks = 1;
    sb_storage_cfg_t st;
    memset (&st, 0, sizeof st);
    snprintf (st.engine, sizeof st.engine, "file");
    sb_interval_t interval = { .next = 1e300 };
    sb_sender_t out = { s_capture, NULL };
    sb_ckpt_rank_t r = { .cfg = &w, .storage = &st, .rank = 1, .out = &out, .interval = &interval };
    sb_msg_phase_start_t ps = s_phase ();
    sb_ckpt_rank_run (&r, &ps);
    char folder[300];
    snprintf (folder, sizeof folder, "%sglobal_epoch1_step3", s_root);
    s_check_message (folder, "the 1 file of rank 1", S_PIB);
}
END_TEST

/* A checkpoint during training refuses the same way (its job's result). */
START_TEST (test_job_refuses)
{
    sb_msg_welcome_t w = s_welcome ();
    sb_storage_cfg_t st;
    memset (&st, 0, sizeof st);
    snprintf (st.engine, sizeof st.engine, "file");
    sb_msg_phase_start_t ps = s_phase ();
    char err[512];
    sb_ckpt_job_t *job = sb_ckpt_job_start (&w, &st, 0, &ps, 2, 7, err, sizeof err);
    ck_assert_msg (job != NULL, "%s", err);
    sb_ckpt_result_t res;
    sb_ckpt_job_finish (&job, 0, &res);
    ck_assert_int_eq (res.failed, 1);
    ck_assert_uint_eq (res.files, 0);
    char folder[300];
    snprintf (folder, sizeof folder, "%sglobal_epoch2_step7", s_root);
    snprintf (s_error, sizeof s_error, "%s", res.message);
    snprintf (s_op, sizeof s_op, "%s", res.op);
    snprintf (s_target, sizeof s_target, "%s", res.target);
    s_errno = res.errno_val;
    s_check_message (folder, "the 3 files of ranks 0-1", 3 * S_PIB);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("ckpt_rank");
    TCase *tc = tcase_create ("space");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_rank_refuses);
    tcase_add_test (tc, test_rank_alone);
    tcase_add_test (tc, test_job_refuses);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
