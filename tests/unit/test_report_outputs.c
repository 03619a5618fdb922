/* report_outputs (issue 17, helper outputs): the pure parts behind
 * `shardbench compare` and the checkpoint figures of every output:
 * sb_config_diff (keys of runs.config that differ between runs, in
 * first-seen order, absent keys and lists) and sb_report_ckpt_metrics
 * (DLIO's save_/load_checkpoint_* means and population standard
 * deviations, checkpoint_size_GB), against values worked out by hand. */
#include <check.h>
#include "check_main.h"

#include <math.h>
#include <string.h>

#include "config_diff.h"
#include "report_query.h"

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
        "model:\n  name: a\ntrain:\n  epochs: 2\n  computation_time: 0.1\nreader:\n  batch_size: 2\n"
        "dataset:\n  shuffle: [a, b]\n",
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
    sb_report_checkpoint_t rows[] = {
        { .op = "write", .bytes = 2147483648LL, .duration_s = 1.0, .gib_per_s = 2.0 },
        { .op = "write", .bytes = 2147483648LL, .duration_s = 3.0, .gib_per_s = 4.0 },
        { .op = "read", .bytes = 2147483648LL, .duration_s = 0.5, .gib_per_s = 4.0 },
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
    /* no reads: the load figures are NAN (DLIO writes no load_* keys) */
    sb_report_ckpt_metrics (rows, 2, &m);
    ck_assert_uint_eq (m.loads, 0);
    ck_assert (isnan (m.load_gbps_mean) && isnan (m.load_s_stdev));
    sb_report_ckpt_metrics (NULL, 0, &m);
    ck_assert (isnan (m.save_gbps_mean) && isnan (m.size_gb));
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
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
