/* reader.preprocess_time and reader.preprocess_time_stdev:
 * read as DLIO_local_changes' LoadConfig and sleep() read them
 * (a number, a mapping, the stdev key over either; a stdev without a mean
 * sleeps nothing), the errors naming file:line and key, and where DLIO's
 * readers sleep it at all (sb_preprocess_applies). */
#include <check.h>
#include "check_main.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "distribution.h"
#include "sampler_kind.h"
#include "workload.h"
#include "workload_load.h"

static sb_workload_t s_wl;  /* large: not on the stack */

static void
s_expect (sb_dist_type_t type, double a, double b, double mean)
{
    ck_assert_int_eq (s_wl.preprocess.type, type);
    ck_assert_msg (s_wl.preprocess.a == a && s_wl.preprocess.b == b, "got %s(%g, %g), want (%g, %g)",
                   sb_dist_name (s_wl.preprocess.type), s_wl.preprocess.a, s_wl.preprocess.b, a, b);
    ck_assert_msg (fabs (s_wl.preprocess_time - mean) < 1e-12, "mean %g, want %g", s_wl.preprocess_time, mean);
}

START_TEST (test_values)
{
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  batch_size: 4\n", NULL, &s_wl), "");
    s_expect (SB_DIST_CONSTANT, 0, 0, 0);
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time: 0.05\n", NULL, &s_wl), "");
    s_expect (SB_DIST_CONSTANT, 0.05, 0, 0.05);
    /* the stdev key: normal around the number (DLIO: {"mean": x, "stdev": s}) */
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time: 0.05\n  preprocess_time_stdev: 0.01\n", NULL, &s_wl), "");
    s_expect (SB_DIST_NORMAL, 0.05, 0.01, 0.05);
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time: 0.05\n  preprocess_time_stdev: 0\n", NULL, &s_wl), "");
    s_expect (SB_DIST_CONSTANT, 0.05, 0, 0.05);
    /* a mean of 0 is a mean: |normal(0, s)| is slept */
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time: 0\n  preprocess_time_stdev: 0.02\n", NULL, &s_wl), "");
    s_expect (SB_DIST_NORMAL, 0, 0.02, 0);
    /* no mean at all: DLIO's sleep() draws nothing (a warning) */
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time_stdev: 0.02\n", NULL, &s_wl), "");
    s_expect (SB_DIST_CONSTANT, 0, 0, 0);
    /* the mapping forms */
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    mean: 0.2\n    stdev: 0.1\n", NULL, &s_wl), "");
    s_expect (SB_DIST_NORMAL, 0.2, 0.1, 0.2);
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    mean: 0.2\n", NULL, &s_wl), "");
    s_expect (SB_DIST_CONSTANT, 0.2, 0, 0.2);
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    type: uniform\n    min: 0.01\n    max: 0.05\n",
                                             NULL, &s_wl), "");
    s_expect (SB_DIST_UNIFORM, 0.01, 0.05, 0.03);
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    type: exponential\n    scale: 0.04\n", NULL, &s_wl),
                      "");
    s_expect (SB_DIST_EXPONENTIAL, 0.04, 0, 0.04);
    /* the stdev key over a mapping's own stdev (LoadConfig sets it last) */
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    mean: 0.2\n    stdev: 0.1\n"
                                             "  preprocess_time_stdev: 0.3\n", NULL, &s_wl), "");
    s_expect (SB_DIST_NORMAL, 0.2, 0.3, 0.2);
    /* the command line over the file, in either form */
    static const char *const cli_number[] = { "reader.preprocess_time=0.07", NULL };
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    mean: 0.2\n    stdev: 0.1\n", cli_number, &s_wl),
                      "");
    s_expect (SB_DIST_CONSTANT, 0.07, 0, 0.07);
    static const char *const cli_map[] = { "reader.preprocess_time={type: gamma, shape: 2, scale: 0.01}", NULL };
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time: 0.5\n", cli_map, &s_wl), "");
    s_expect (SB_DIST_GAMMA, 2, 0.01, 0.02);
    /* train.computation_time is read as before, apart from it */
    ck_assert_str_eq (sb_test_workload_load ("train:\n  computation_time: 0.5\n  computation_time_stdev: 0.1\n"
                                             "reader:\n  preprocess_time: 0.05\n", NULL, &s_wl), "");
    ck_assert_int_eq (s_wl.compute.type, SB_DIST_NORMAL);
    ck_assert (s_wl.compute.a == 0.5 && s_wl.compute.b == 0.1 && s_wl.computation_time == 0.5);
    s_expect (SB_DIST_CONSTANT, 0.05, 0, 0.05);
}
END_TEST

START_TEST (test_errors)
{
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time: -0.05\n", NULL, &s_wl),
                      "w.yaml:2: key 'reader.preprocess_time': -0.05 is out of range [0, 3600]");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time: soon\n", NULL, &s_wl),
                      "w.yaml:2: key 'reader.preprocess_time': expected a number, got 'soon'");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time: 0.05\n  preprocess_time_stdev: -0.1\n", NULL, &s_wl),
                      "w.yaml:3: key 'reader.preprocess_time_stdev': expected a number in [0, 3600], got '-0.1'");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time: 0.05\n  preprocess_time_stdev: [1, 2]\n", NULL, &s_wl),
                      "w.yaml:3: key 'reader.preprocess_time_stdev': expected a number in [0, 3600], got 'a list'");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    mean: -1\n", NULL, &s_wl),
                      "w.yaml:3: key 'reader.preprocess_time.mean': expected a number in [0, 3600], got '-1'");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    type: uniform\n    min: 0.01\n    max: 0.05\n"
                                             "  preprocess_time_stdev: 0.1\n", NULL, &s_wl),
                      "w.yaml:6: key 'reader.preprocess_time_stdev': reader.preprocess_time is a uniform"
                      " distribution; a stdev applies to a number or a normal one");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    type: normal\n    mean: 0.1\n", NULL, &s_wl),
                      "w.yaml:3: key 'reader.preprocess_time': normal needs 'stdev'");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    type: cauchy\n", NULL, &s_wl),
                      "w.yaml:3: key 'reader.preprocess_time.type': expected normal, uniform, gamma, exponential or"
                      " poisson, got 'cauchy'");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    median: 0.1\n", NULL, &s_wl),
                      "w.yaml:3: key 'reader.preprocess_time.median': not a parameter of reader.preprocess_time"
                      " (type, mean, stdev, min, max, shape, scale, lam)");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time:\n    type: uniform\n    min: 0.05\n    max: 0.01\n",
                                             NULL, &s_wl),
                      "w.yaml:3: key 'reader.preprocess_time': uniform: needs 0 <= min <= max, got min 0.05, max 0.01");
    /* the same errors as before for train.computation_time */
    ck_assert_str_eq (sb_test_workload_load ("train:\n  computation_time:\n    type: normal\n    mean: 0.1\n", NULL, &s_wl),
                      "w.yaml:3: key 'train.computation_time': normal needs 'stdev'");
}
END_TEST

/* where DLIO_local_changes' readers call preprocess (sampler_kind.h) */
START_TEST (test_applies)
{
    static const struct {
        sb_sampler_kind_t kind;
        const char *format;
        const char *storage;
        const char *library;
        int odirect, applies;
    } cases[] = {
        { SB_SAMPLER_DLIO_INDEX, "npz", "file", "", 0, 1 },          /* read_index */
        { SB_SAMPLER_DLIO_INDEX, "jpeg", "s3", "s3dlio", 0, 1 },
        { SB_SAMPLER_DLIO_INDEX, "tfrecord", "file", "", 0, 1 },
        { SB_SAMPLER_GLOBAL, "npy", "file", "", 0, 1 },
        { SB_SAMPLER_DLIO_INDEX, "parquet", "file", "", 0, 0 },      /* its read_index does not */
        { SB_SAMPLER_DLIO_FILES, "parquet", "s3", "s3dlio", 0, 0 },
        { SB_SAMPLER_DLIO_ITERATIVE, "tfrecord", "file", "", 0, 0 }, /* TFReader's tf.data */
        { SB_SAMPLER_DLIO_ITERATIVE, "npz", "file", "", 0, 0 },      /* _localfs_stream_next */
        { SB_SAMPLER_DLIO_ITERATIVE, "npz", "file", "", 1, 1 },      /* NPZReaderODIRECT */
        { SB_SAMPLER_DLIO_FILES, "npz", "s3", "", 0, 1 },            /* NPZReaderS3 */
        { SB_SAMPLER_DLIO_FILES, "npz", "s3", "minio", 0, 0 },       /* _s3_stream_next */
        { SB_SAMPLER_DLIO_FILES, "png", "s3", "", 0, 0 },
        { SB_SAMPLER_DLIO_ITERATIVE, "hdf5", "file", "", 0, 1 },     /* FormatReader.next */
        { SB_SAMPLER_DLIO_ITERATIVE, "indexed_binary", "file", "", 0, 1 },
        { SB_SAMPLER_DLIO_ITERATIVE, "mmap_indexed_binary", "file", "", 0, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset (&s_wl, 0, sizeof s_wl);
        snprintf (s_wl.format, sizeof s_wl.format, "%s", cases[i].format);
        snprintf (s_wl.storage_library, sizeof s_wl.storage_library, "%s", cases[i].library);
        snprintf (s_wl.storage.engine, sizeof s_wl.storage.engine, "%s", cases[i].storage);
        s_wl.odirect = cases[i].odirect;
        ck_assert_msg (sb_preprocess_applies (cases[i].kind, &s_wl) == cases[i].applies, "case %zu (%s)", i,
                       cases[i].format);
    }
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("preprocess");
    TCase *tc = tcase_create ("keys");
    tcase_add_test (tc, test_values);
    tcase_add_test (tc, test_errors);
    tcase_add_test (tc, test_applies);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
