/* Derived datasets: names, DLIO indices and sizes of objects past 2^32 with
 * no catalog (the derived reader of a synthetic run, the naming reader of
 * skip_listing) and the sampler over such a count: 64-bit all the way, no
 * per-object state. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "dataset.h"
#include "resultdb.h"
#include "sampler.h"

#define TWO32 4294967296ull
#define N17 17022569999ull      /* `shardbench datasize retinanet_b200 --hosts 1000 --host-memory-gb 1024 --accelerators 8000` */

/* The name DLIO gives object i of files in folders (0, 1: none), written
 * here with printf as an independent check of the generator's. */
static void
s_dlio_name (uint64_t i, uint64_t files, uint64_t folders, char *out, size_t size)
{
    int width = snprintf (NULL, 0, "%llu", (unsigned long long) files);
    int fwidth = snprintf (NULL, 0, "%llu", (unsigned long long) folders);
    if (folders > 1)
        snprintf (out, size, "train/%0*llu/img_%0*llu_of_%llu.npz", fwidth, (unsigned long long) (i % folders), width,
                  (unsigned long long) i, (unsigned long long) files);
    else
        snprintf (out, size, "train/img_%0*llu_of_%llu.npz", width, (unsigned long long) i,
                  (unsigned long long) files);
}

START_TEST (test_names_past_2_32)
{
    sb_dataset_t ds = { .prefix = "img", .format = "npz", .files = N17, .subfolders = 0, .samples_per_file = 1,
                        .record_length = 322957, .seed = 123 };
    char key[256], want[256];
    ck_assert_int_eq (sb_dataset_key (&ds, TWO32, key, sizeof key), 0);
    ck_assert_str_eq (key, "train/img_04294967296_of_17022569999.npz");
    ck_assert_int_eq (sb_dataset_key (&ds, N17 - 1, key, sizeof key), 0);
    ck_assert_str_eq (key, "train/img_17022569998_of_17022569999.npz");
    /* a derived reader (a synthetic run's train/: name order) and a naming
     * reader (skip_listing: index order) agree with DLIO's names past 2^32,
     * and the sizes are the generator's: 568^2 bytes (568^2 <= 322957 < 569^2) */
    char err[256] = "";
    sb_catalog_reader_t *derived = sb_catalog_reader_new_derived (&ds, 1, err, sizeof err);
    sb_catalog_reader_t *naming = sb_catalog_reader_new_naming (&ds, 1, err, sizeof err);
    ck_assert_msg (derived && naming, "%s", err);
    ck_assert_int_eq (sb_catalog_reader_is_derived (derived), 1);
    ck_assert_int_eq (sb_catalog_reader_exact_sizes (derived), 1);
    for (uint64_t k = 0; k < 3000; k++) {
        uint64_t p = TWO32 - 1000 + k, size = 0, dlio = 0;
        s_dlio_name (p, N17, 0, want, sizeof want);
        ck_assert_int_eq (sb_catalog_reader_locate (derived, p, &size, &dlio), 1);
        ck_assert_uint_eq (dlio, p);      /* no subfolders: name order is index order */
        ck_assert_uint_eq (size, 568ull * 568);
        ck_assert_int_eq (sb_catalog_reader_get (derived, p, key, sizeof key, &size), 0);
        ck_assert_str_eq (key, want);
        ck_assert_int_eq (sb_catalog_reader_get (naming, p, key, sizeof key, &size), 0);
        ck_assert_str_eq (key, want);
    }
    uint64_t size, dlio;
    ck_assert_int_eq (sb_catalog_reader_locate (derived, N17, &size, &dlio), -1);
    ck_assert_int_eq (sb_catalog_reader_get (derived, N17, key, sizeof key, &size), -1);
    sb_catalog_reader_destroy (&derived);
    sb_catalog_reader_destroy (&naming);

    /* mlpstorage's 1702256 subfolders: name order is folder by folder, so a
     * position past 2^32 maps to a DLIO index of its own; names strictly
     * increase, each index's folder is index mod folders, and the name of
     * the index is the reader's key */
    ds.subfolders = 1702256;
    derived = sb_catalog_reader_new_derived (&ds, 1, err, sizeof err);
    ck_assert_ptr_nonnull (derived);
    char prev[256] = "";
    for (uint64_t k = 0; k < 3000; k++) {
        uint64_t p = TWO32 - 1000 + k;
        ck_assert_int_eq (sb_catalog_reader_locate (derived, p, &size, &dlio), 1);
        ck_assert_uint_lt (dlio, N17);
        ck_assert_uint_eq (dlio, sb_dataset_index_at (&ds, p));
        s_dlio_name (dlio, N17, ds.subfolders, want, sizeof want);
        ck_assert_int_eq (sb_catalog_reader_get (derived, p, key, sizeof key, &size), 0);
        ck_assert_str_eq (key, want);
        ck_assert_int_gt (strcmp (key, prev), 0);
        snprintf (prev, sizeof prev, "%s", key);
    }
    /* the last position is the last index of the last folder */
    ck_assert_int_eq (sb_catalog_reader_get (derived, N17 - 1, key, sizeof key, &size), 0);
    uint64_t last = N17 - 1 - (N17 - 1) % ds.subfolders + ds.subfolders - 1;
    if (last >= N17)
        last -= ds.subfolders;
    s_dlio_name (last, N17, ds.subfolders, want, sizeof want);
    ck_assert_str_eq (key, want);
    sb_catalog_reader_destroy (&derived);
}
END_TEST

/* The sampler over 17e9 listed objects, file_shuffle off: a rank's reads
 * past 2^32 name the right catalog index (rank r keeps r, r + R, ...), and
 * the plan holds no per-object array (it is made at once). */
START_TEST (test_sampler_past_2_32)
{
    sb_sampler_cfg_t cfg = {
        .kind = SB_SAMPLER_DLIO_INDEX, .listed = N17, .expected = N17, .samples_per_file = 1, .ranks = 8,
        .batch_size = 24, .threads = 2, .seed = 123, .sample_shuffle = SB_SHUFFLE_SEED,
        .file_shuffle = SB_SHUFFLE_OFF, .first_rank = 0, .nranks = 8,
    };
    char err[256] = "";
    sb_sampler_t *s = sb_sampler_new (&cfg, err, sizeof err);
    ck_assert_msg (s != NULL, "%s", err);
    ck_assert_int_eq (sb_sampler_epoch (s, 1, err, sizeof err), 0);
    const sb_sampler_epoch_t *info = sb_sampler_info (s);
    ck_assert_uint_eq (info->files_per_rank, N17 / 8);
    ck_assert_uint_eq (info->steps, N17 / 8 / 24);
    ck_assert_uint_eq (info->unused_files, N17 % 8);
    sb_sample_ref_t ref;
    /* rank 7, local file 600000000: catalog index 7 + 8 x 600000000 */
    ck_assert_int_eq (sb_sampler_at (s, 7, 600000000, &ref), 0);
    ck_assert_uint_eq (ref.file, 4800000007ull);
    ck_assert_uint_eq (ref.sample, 0);
    /* the last position of rank 3 */
    uint64_t last = info->samples_per_rank - 1;
    ck_assert_int_eq (sb_sampler_at (s, 3, last, &ref), 0);
    ck_assert_uint_eq (ref.file, 3 + 8 * last);
    ck_assert_uint_gt (ref.file, TWO32);
    ck_assert_int_eq (sb_sampler_at (s, 3, last + 1, &ref), -1);
    sb_sampler_destroy (&s);
}
END_TEST

/* A listing whose every key is the DLIO name of its position and whose
 * every size is the same stores no object row: the catalogs row (naming,
 * count, bytes) is all a reader needs, reused as it is; one size apart,
 * every row is stored as before. */
START_TEST (test_listing_without_rows)
{
    char dir[64], path[128], err[512] = "";
    snprintf (dir, sizeof dir, "/tmp/sbderivedXXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (dir));
    snprintf (path, sizeof path, "%s/results.db", dir);
    sb_resultdb_t *db = sb_resultdb_open (path, err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    sqlite3 *h = sb_resultdb_handle (db);
    sb_dataset_t ds = { .prefix = "img", .format = "npz", .files = 100003, .subfolders = 7, .samples_per_file = 2,
                        .record_length = 4096, .record_stdev = 0, .seed = 42 };
    uint64_t size = sb_dataset_object_size (&ds, 0);
    sb_catalog_info_t info;
    ck_assert_int_eq (sb_catalog_ensure_synthetic (h, &ds, 0, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_uint_eq (info.count, 100003);
    ck_assert_uint_eq (info.bytes, 100003 * size);
    ck_assert_int_eq (info.rowless, 1);
    sqlite3_stmt *st;
    ck_assert_int_eq (sqlite3_prepare_v2 (h, "SELECT (SELECT count(*) FROM objects WHERE catalog_id = ?1),"
                                          " (SELECT naming FROM catalogs WHERE id = ?1)", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64 (st, 1, info.id);
    ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
    ck_assert_int_eq (sqlite3_column_int (st, 0), 0);
    ck_assert_str_eq ((const char *) sqlite3_column_text (st, 1), "dlio img npz 100003 7");
    sqlite3_finalize (st);
    for (int pass = 0; pass < 2; pass++) {      /* listed, then reused */
        sb_catalog_reader_t *r = sb_catalog_reader_new (h, info.id, err, sizeof err);
        ck_assert_msg (r != NULL, "%s", err);
        ck_assert_int_eq (sb_catalog_reader_is_derived (r), 0);
        ck_assert_int_eq (sb_catalog_reader_all_named (r), 1);
        char key[256], want[256], prev[256] = "";
        for (uint64_t p = 0; p < ds.files; p++) {
            uint64_t sz = 0, dlio = 0;
            ck_assert_int_eq (sb_catalog_reader_locate (r, p, &sz, &dlio), 1);
            ck_assert_uint_eq (sz, size);
            ck_assert_uint_eq (dlio, sb_dataset_index_at (&ds, p));
            ck_assert_int_eq (sb_catalog_reader_get (r, p, key, sizeof key, &sz), 0);
            ck_assert_int_eq (sb_dataset_key (&ds, dlio, want, sizeof want), 0);
            ck_assert_str_eq (key, want);
            ck_assert_int_gt (strcmp (key, prev), 0);
            snprintf (prev, sizeof prev, "%s", key);
        }
        uint64_t sz, dlio;
        ck_assert_int_eq (sb_catalog_reader_locate (r, ds.files, &sz, &dlio), -1);
        ck_assert_int_eq (sb_catalog_reader_get (r, ds.files, key, sizeof key, &sz), -1);
        sb_catalog_reader_destroy (&r);
        ck_assert_int_eq (sb_catalog_ensure_synthetic (h, &ds, 0, &info, err, sizeof err), SB_CATALOG_OK);
        ck_assert_int_eq (info.reused, 1);
    }
    /* sizes drawn: every row stored, keys still NULL */
    ds.record_stdev = 900;
    ck_assert_int_eq (sb_catalog_ensure_synthetic (h, &ds, 0, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_int_eq (info.rowless, 0);
    ck_assert_int_eq (sqlite3_prepare_v2 (h, "SELECT count(*), count(key) FROM objects WHERE catalog_id = ?", -1, &st,
                                          NULL), SQLITE_OK);
    sqlite3_bind_int64 (st, 1, info.id);
    ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
    ck_assert_int_eq (sqlite3_column_int (st, 0), 100003);
    ck_assert_int_eq (sqlite3_column_int (st, 1), 0);
    sqlite3_finalize (st);
    sb_resultdb_destroy (&db);
    sb_check_remove_tree (dir);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("derived");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_names_past_2_32);
    tcase_add_test (tc, test_sampler_past_2_32);
    tcase_add_test (tc, test_listing_without_rows);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
