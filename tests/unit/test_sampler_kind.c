/* Sampler kind and loader threads as DLIO_local_changes chooses them
 * (lib/dataset/sampler_kind.h): every branch of the rule, and the read_threads
 * auto-raise. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <string.h>

#include "sampler_kind.h"

static sb_workload_t
s_wl (const char *framework, const char *loader, const char *loader_sampler, const char *format,
      const char *storage, const char *sampler)
{
    sb_workload_t wl;
    memset (&wl, 0, sizeof wl);
    snprintf (wl.framework, sizeof wl.framework, "%s", framework);
    snprintf (wl.data_loader, sizeof wl.data_loader, "%s", loader);
    snprintf (wl.data_loader_sampler, sizeof wl.data_loader_sampler, "%s", loader_sampler);
    snprintf (wl.format, sizeof wl.format, "%s", format);
    snprintf (wl.sampler, sizeof wl.sampler, "%s", sampler);
    snprintf (wl.storage.engine, sizeof wl.storage.engine, "%s", storage);
    return wl;
}

START_TEST (test_kind)
{
    const struct {
        const char *framework, *loader, *loader_sampler, *format;
        const char *storage;
        const char *sampler;
        sb_sampler_kind_t want;
    } cases[] = {
        /* shardbench.sampler=global wins over everything */
        { "tensorflow", "", "iterative", "tfrecord", "file", "global", SB_SAMPLER_GLOBAL },
        { "pytorch", "", "", "parquet", "s3", "global", SB_SAMPLER_GLOBAL },
        /* reader.data_loader_sampler next */
        { "tensorflow", "", "index", "tfrecord", "file", "dlio", SB_SAMPLER_DLIO_INDEX },
        { "pytorch", "", "iterative", "npz", "file", "dlio", SB_SAMPLER_DLIO_ITERATIVE },
        /* tensorflow: iterative, whatever the format */
        { "tensorflow", "", "", "tfrecord", "file", "dlio", SB_SAMPLER_DLIO_ITERATIVE },
        { "pytorch", "tensorflow", "", "npz", "s3", "dlio", SB_SAMPLER_DLIO_ITERATIVE },
        /* pytorch: parquet on any storage, npz/npy/jpeg/png on object storage: iterable datasets */
        { "pytorch", "", "", "parquet", "file", "dlio", SB_SAMPLER_DLIO_FILES },
        { "pytorch", "", "", "parquet", "synthetic", "dlio", SB_SAMPLER_DLIO_FILES },
        { "pytorch", "", "", "npz", "s3", "dlio", SB_SAMPLER_DLIO_FILES },
        { "pytorch", "", "", "npy", "s3", "dlio", SB_SAMPLER_DLIO_FILES },
        { "pytorch", "", "", "jpeg", "s3", "dlio", SB_SAMPLER_DLIO_FILES },
        { "pytorch", "", "", "png", "s3", "dlio", SB_SAMPLER_DLIO_FILES },
        /* ... else map-style index */
        { "pytorch", "", "", "npz", "file", "dlio", SB_SAMPLER_DLIO_INDEX },
        { "pytorch", "", "", "jpeg", "file", "dlio", SB_SAMPLER_DLIO_INDEX },
        { "pytorch", "", "", "tfrecord", "s3", "dlio", SB_SAMPLER_DLIO_INDEX },
        { "pytorch", "", "", "hdf5", "s3", "dlio", SB_SAMPLER_DLIO_INDEX },
        { "tensorflow", "pytorch", "", "npz", "file", "dlio", SB_SAMPLER_DLIO_INDEX },
        { "pytorch", "dali", "", "parquet", "file", "dlio", SB_SAMPLER_DLIO_INDEX },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sb_workload_t wl = s_wl (cases[i].framework, cases[i].loader, cases[i].loader_sampler, cases[i].format,
                                 cases[i].storage, cases[i].sampler);
        ck_assert_msg (sb_sampler_kind_for (&wl) == cases[i].want, "case %zu: got %s, want %s", i,
                       sb_sampler_kind_name (sb_sampler_kind_for (&wl)), sb_sampler_kind_name (cases[i].want));
    }
}
END_TEST

START_TEST (test_threads)
{
    /* read_threads=1: min(cores // local ranks, 8), at least 1 */
    ck_assert_uint_eq (sb_loader_threads (1, 16, 4), 4);
    ck_assert_uint_eq (sb_loader_threads (1, 128, 8), 8);
    ck_assert_uint_eq (sb_loader_threads (1, 2, 8), 1);
    ck_assert_uint_eq (sb_loader_threads (1, 17, 2), 8);
    ck_assert_uint_eq (sb_loader_threads (1, 7, 2), 3);
    ck_assert_uint_eq (sb_loader_threads (1, 7, 0), 7);
    /* explicit values stay; 0 (in-process loading) is one */
    ck_assert_uint_eq (sb_loader_threads (4, 128, 8), 4);
    ck_assert_uint_eq (sb_loader_threads (64, 2, 8), 64);
    ck_assert_uint_eq (sb_loader_threads (0, 128, 1), 1);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("sampler_kind");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_kind);
    tcase_add_test (tc, test_threads);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
