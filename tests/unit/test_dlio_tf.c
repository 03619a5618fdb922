/* DLIO's tensorflow loader notes (lib/dataset/dlio_tf.h): the count of
 * (loader thread, file) pairs of build_sample_map_iter, each a whole-file
 * read of DLIO's npz reader, against every entry walked one by one; and the
 * lines a run prints (none where DLIO neither loses nor repeats data). */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlio_tf.h"

/* entry i: thread (i / spt) % T, file i / spf; count the distinct pairs */
static uint64_t
s_walk (uint64_t files, uint64_t spf, uint64_t threads)
{
    uint64_t k = files * spf, spt = k / threads ? k / threads : 1, pairs = 0;
    uint8_t *seen = calloc ((size_t) (threads * files) + 1, 1);
    ck_assert_ptr_nonnull (seen);
    for (uint64_t i = 0; i < k; i++) {
        uint64_t t = (i / spt) % threads, f = i / spf;
        if (!seen[t * files + f]) {
            seen[t * files + f] = 1;
            pairs++;
        }
    }
    free (seen);
    return pairs;
}

START_TEST (test_thread_files)
{
    /* blocks that cut files, so one file is read by several threads: 10 files of 3 samples on 4 threads */
    ck_assert_uint_eq (sb_dlio_tf_thread_files (10, 3, 4), 13);
    ck_assert_uint_eq (sb_dlio_tf_thread_files (5, 3, 2), 7);
    ck_assert_uint_eq (sb_dlio_tf_thread_files (10, 3, 2), 10);
    ck_assert_uint_eq (sb_dlio_tf_thread_files (0, 3, 2), 0);
    for (uint64_t files = 1; files <= 23; files++)
        for (uint64_t spf = 1; spf <= 9; spf++)
            for (uint64_t t = 1; t <= 11; t++)
                ck_assert_msg (sb_dlio_tf_thread_files (files, spf, t) == s_walk (files, spf, t),
                               "%llu files of %llu on %llu threads: %llu, walked %llu", (unsigned long long) files,
                               (unsigned long long) spf, (unsigned long long) t,
                               (unsigned long long) sb_dlio_tf_thread_files (files, spf, t),
                               (unsigned long long) s_walk (files, spf, t));
}
END_TEST

static sb_workload_t
s_wl (const char *framework, const char *format, uint64_t files, uint64_t spf)
{
    sb_workload_t wl;
    memset (&wl, 0, sizeof wl);
    snprintf (wl.framework, sizeof wl.framework, "%s", framework);
    snprintf (wl.format, sizeof wl.format, "%s", format);
    wl.num_files_train = files;
    wl.num_samples_per_file = spf;
    return wl;
}

START_TEST (test_notes)
{
    char buf[1024];
    sb_workload_t wl = s_wl ("tensorflow", "tfrecord", 8, 2);
    ck_assert_int_eq (sb_dlio_tf_note (&wl, SB_SAMPLER_DLIO_ITERATIVE, 2, 8, 2, buf, sizeof buf), 1);
    ck_assert_ptr_nonnull (strstr (buf, "shards each rank's 4 files again by the 2 ranks"));
    ck_assert_ptr_nonnull (strstr (buf, "reads 2 of its files (rank 0), each about 2 times, and 4 of the 8 files"));
    /* 1 rank: nothing re-sharded */
    ck_assert_int_eq (sb_dlio_tf_note (&wl, SB_SAMPLER_DLIO_ITERATIVE, 1, 8, 2, buf, sizeof buf), 0);
    /* 8 files on 3 ranks: 2 each, fewer than ranks: records sharded */
    ck_assert_int_eq (sb_dlio_tf_note (&wl, SB_SAMPLER_DLIO_ITERATIVE, 3, 8, 2, buf, sizeof buf), 1);
    ck_assert_ptr_nonnull (strstr (buf, "fewer files (2) than ranks (3)"));
    /* 7 files a rank on 3 ranks: rank r keeps 3, 2, 2: 14 of 21 never read */
    wl.num_files_train = 21;
    ck_assert_int_eq (sb_dlio_tf_note (&wl, SB_SAMPLER_DLIO_ITERATIVE, 3, 21, 2, buf, sizeof buf), 1);
    ck_assert_ptr_nonnull (strstr (buf, "reads 3 of its files (rank 0), each about 3 times, and 14 of the 21 files"));
    /* pytorch's index kind never takes TFReader */
    ck_assert_int_eq (sb_dlio_tf_note (&wl, SB_SAMPLER_DLIO_INDEX, 3, 21, 2, buf, sizeof buf), 0);
    /* npz: split files only */
    sb_workload_t npz = s_wl ("tensorflow", "npz", 10, 3);
    ck_assert_int_eq (sb_dlio_tf_note (&npz, SB_SAMPLER_DLIO_ITERATIVE, 1, 10, 4, buf, sizeof buf), 1);
    ck_assert_ptr_nonnull (strstr (buf, "a rank's 10 files make 13 (thread, file) pairs"));
    ck_assert_ptr_nonnull (strstr (buf, "39 samples for the 30 entries"));
    ck_assert_ptr_nonnull (strstr (buf, "npz with 3 samples per file on 4 loader threads"));
    sb_workload_t npy = s_wl ("tensorflow", "npy", 10, 3);
    ck_assert_int_eq (sb_dlio_tf_note (&npy, SB_SAMPLER_DLIO_ITERATIVE, 1, 10, 4, buf, sizeof buf), 1);
    ck_assert_ptr_nonnull (strstr (buf, "npy reader reads a file once"));
    ck_assert_int_eq (sb_dlio_tf_note (&npz, SB_SAMPLER_DLIO_ITERATIVE, 1, 10, 2, buf, sizeof buf), 0);
    npz.num_samples_per_file = 1;
    ck_assert_int_eq (sb_dlio_tf_note (&npz, SB_SAMPLER_DLIO_ITERATIVE, 1, 10, 4, buf, sizeof buf), 0);
}
END_TEST

/* DLIO's iterable npz/npy/jpeg/png readers yield one image per batch where
 * tf.data's from_generator declares a batch: TensorFlow stops at the first */
START_TEST (test_stop_note)
{
    char buf[1024];
    sb_workload_t wl = s_wl ("tensorflow", "npz", 10, 3);
    wl.batch_size = 4;
    snprintf (wl.storage.engine, sizeof wl.storage.engine, "file");
    ck_assert_int_eq (sb_dlio_tf_stop_note (&wl, buf, sizeof buf), 1);
    ck_assert_ptr_nonnull (strstr (buf, "npz with the tensorflow loader"));
    ck_assert_ptr_nonnull (strstr (buf, "declares batches of 4, so with TensorFlow DLIO stops at its first batch"));
    snprintf (wl.format, sizeof wl.format, "png");
    ck_assert_int_eq (sb_dlio_tf_stop_note (&wl, buf, sizeof buf), 1);
    /* the map-style readers yield whole batches: O_DIRECT, S3 without a storage_library */
    wl.odirect = 1;
    ck_assert_int_eq (sb_dlio_tf_stop_note (&wl, buf, sizeof buf), 0);
    wl.odirect = 0;
    snprintf (wl.storage.engine, sizeof wl.storage.engine, "s3");
    ck_assert_int_eq (sb_dlio_tf_stop_note (&wl, buf, sizeof buf), 0);
    snprintf (wl.storage_library, sizeof wl.storage_library, "s3dlio");
    ck_assert_int_eq (sb_dlio_tf_stop_note (&wl, buf, sizeof buf), 1);
    /* other formats and loaders */
    snprintf (wl.format, sizeof wl.format, "tfrecord");
    ck_assert_int_eq (sb_dlio_tf_stop_note (&wl, buf, sizeof buf), 0);
    sb_workload_t pt = s_wl ("pytorch", "npz", 10, 3);
    ck_assert_int_eq (sb_dlio_tf_stop_note (&pt, buf, sizeof buf), 0);
    snprintf (pt.data_loader, sizeof pt.data_loader, "tensorflow");
    ck_assert_int_eq (sb_dlio_tf_stop_note (&pt, buf, sizeof buf), 1);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("dlio_tf");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_thread_files);
    tcase_add_test (tc, test_notes);
    tcase_add_test (tc, test_stop_note);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
