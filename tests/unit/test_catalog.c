/* Catalog: exact counts and bytes, name order, reuse, relist on change,
 * DLIO names. Uses a real SQLite file and a real folder. */
#include <check.h>
#include <math.h>
#include "check_main.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "dataset.h"
#include "resultdb.h"

static char s_dir[64];

static void
s_write (const char *rel, size_t size)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s", s_dir, rel);
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge (fd, 0);
    char buf[1024] = { 0 };
    while (size) {
        size_t n = size < sizeof buf ? size : sizeof buf;
        ck_assert_int_eq (write (fd, buf, n), (ssize_t) n);
        size -= n;
    }
    close (fd);
}

static void
s_setup (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/sbcatXXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
}

static void
s_teardown (void)
{
    sb_check_remove_tree (s_dir);
}

START_TEST (test_list_reuse_relist)
{
    char err[512] = "", path[256];
    snprintf (path, sizeof path, "%s/results.db", s_dir);
    sb_resultdb_t *db = sb_resultdb_open (path, err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    sqlite3 *h = sb_resultdb_handle (db);
    char data[256];
    snprintf (data, sizeof data, "%s/data", s_dir);
    sb_catalog_info_t info;
    ck_assert_int_eq (sb_catalog_ensure (h, data, NULL, 0, &info, err, sizeof err), SB_CATALOG_MISSING);
    ck_assert_int_eq (mkdir (data, 0755), 0);
    snprintf (path, sizeof path, "%s/train", data);
    ck_assert_int_eq (mkdir (path, 0755), 0);
    snprintf (path, sizeof path, "%s/train/1", data);
    ck_assert_int_eq (mkdir (path, 0755), 0);
    s_write ("data/train/b.npz", 100);
    s_write ("data/train/a.npz", 2000);
    s_write ("data/train/1/c.npz", 7);
    s_write ("data/train/.hidden.tmp", 5);  /* in-progress objects are skipped */

    ck_assert_int_eq (sb_catalog_ensure (h, data, NULL, 0, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_uint_eq (info.count, 3);
    ck_assert_uint_eq (info.bytes, 2107);
    ck_assert_int_eq (info.reused, 0);
    int64_t first_id = info.id;
    sb_catalog_reader_t *r = sb_catalog_reader_new (h, info.id, err, sizeof err);
    ck_assert_ptr_nonnull (r);
    char key[256];
    uint64_t size;
    ck_assert_int_eq (sb_catalog_reader_get (r, 0, key, sizeof key, &size), 0);
    ck_assert_str_eq (key, "train/1/c.npz");
    ck_assert_uint_eq (size, 7);
    ck_assert_int_eq (sb_catalog_reader_get (r, 1, key, sizeof key, &size), 0);
    ck_assert_str_eq (key, "train/a.npz");
    ck_assert_uint_eq (size, 2000);
    ck_assert_int_eq (sb_catalog_reader_get (r, 2, key, sizeof key, &size), 0);
    ck_assert_str_eq (key, "train/b.npz");
    ck_assert_int_eq (sb_catalog_reader_get (r, 3, key, sizeof key, &size), -1);
    /* the in-memory index: sizes, and these keys are stored, not DLIO names */
    uint64_t dlio = 99;
    ck_assert_int_eq (sb_catalog_reader_locate (r, 0, &size, &dlio), 0);
    ck_assert_uint_eq (size, 7);
    ck_assert_int_eq (sb_catalog_reader_locate (r, 1, &size, &dlio), 0);
    ck_assert_uint_eq (size, 2000);
    ck_assert_int_eq (sb_catalog_reader_locate (r, 2, &size, &dlio), 0);
    ck_assert_uint_eq (size, 100);
    ck_assert_int_eq (sb_catalog_reader_locate (r, 3, &size, &dlio), -1);
    ck_assert_uint_eq (dlio, 99);
    sb_catalog_reader_destroy (&r);
    ck_assert_ptr_null (r);

    /* unchanged: reused */
    ck_assert_int_eq (sb_catalog_ensure (h, data, NULL, 0, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_int_eq (info.reused, 1);
    ck_assert_int_eq (info.id, first_id);
    ck_assert_uint_eq (info.count, 3);
    /* --relist: a new listing */
    ck_assert_int_eq (sb_catalog_ensure (h, data, NULL, 1, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_int_eq (info.reused, 0);
    ck_assert_int_ne (info.id, first_id);
    int64_t second_id = info.id;
    /* a file added: the folder changed, so it is listed again */
    sleep (1);      /* mtime granularity of some file systems */
    s_write ("data/train/d.npz", 10);
    ck_assert_int_eq (sb_catalog_ensure (h, data, NULL, 0, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_int_eq (info.reused, 0);
    ck_assert_int_ne (info.id, second_id);
    ck_assert_uint_eq (info.count, 4);
    ck_assert_uint_eq (info.bytes, 2117);
    sqlite3_stmt *st;
    ck_assert_int_eq (sqlite3_prepare_v2 (h, "SELECT count(key), sum(size) FROM objects WHERE catalog_id = ?", -1, &st, NULL),
                      SQLITE_OK);
    sqlite3_bind_int64 (st, 1, info.id);
    ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
    ck_assert_int_eq (sqlite3_column_int (st, 0), 4);
    ck_assert_int_eq (sqlite3_column_int (st, 1), 2117);
    sqlite3_finalize (st);
    sb_resultdb_destroy (&db);
}
END_TEST

START_TEST (test_dlio_names)
{
    sb_dataset_t ds = { .prefix = "img", .format = "npz", .files = 168, .subfolders = 0,
                        .samples_per_file = 1, .record_length = 1000, .seed = 1 };
    char key[256];
    ck_assert_int_eq (sb_dataset_key (&ds, 7, key, sizeof key), 0);
    ck_assert_str_eq (key, "train/img_007_of_168.npz");
    ds.subfolders = 1;      /* one subfolder is no subfolder in DLIO */
    ck_assert_int_eq (sb_dataset_key (&ds, 7, key, sizeof key), 0);
    ck_assert_str_eq (key, "train/img_007_of_168.npz");
    ds.subfolders = 12;
    ck_assert_int_eq (sb_dataset_key (&ds, 7, key, sizeof key), 0);
    ck_assert_str_eq (key, "train/07/img_007_of_168.npz");
    ck_assert_int_eq (sb_dataset_key (&ds, 167, key, sizeof key), 0);
    ck_assert_str_eq (key, "train/11/img_167_of_168.npz");
    ds.files = 10;
    ds.subfolders = 0;
    ck_assert_int_eq (sb_dataset_key (&ds, 9, key, sizeof key), 0);
    ck_assert_str_eq (key, "train/img_09_of_10.npz");   /* padded to the digits of 10 */
    /* sizes as DLIO draws them: records of int(sqrt(record_length))^2 bytes
     * without stdev (1000 -> 31 x 31), spread and reproducible with it */
    ck_assert_uint_eq (sb_dataset_object_size (&ds, 3), 961);
    ds.samples_per_file = 4;
    ck_assert_uint_eq (sb_dataset_object_size (&ds, 3), 3844);
    ds.record_length = 146600628;   /* unet3d: 12107^2 = 146579449 <= it < 12108^2 */
    ck_assert_uint_eq (sb_dataset_object_size (&ds, 3), 4ull * 146579449);
    ds.record_length = 4096;        /* a square stays itself */
    ck_assert_uint_eq (sb_dataset_object_size (&ds, 3), 4ull * 4096);
    /* with stdev each dimension ~ N(d, stdev / 2 / sqrt(record_length)), truncated, at least 1 */
    ds.record_length = 1000;
    ds.record_stdev = 400;          /* dimension stdev 400 / 2 / sqrt(1000) = 6.32 */
    double sum = 0, sq = 0;
    uint64_t n = 20000, d1, d2;
    for (uint64_t i = 0; i < n; i++) {
        sb_dataset_record_dims (&ds, i, &d1, &d2);
        ck_assert_uint_eq (sb_dataset_object_size (&ds, i), d1 * d2 * 4);
        ck_assert_uint_ge (d1, 1);
        sum += (double) d1;
        sq += (double) d1 * (double) d1;
    }
    double mean = sum / (double) n, sd = sqrt (sq / (double) n - mean * mean);
    ck_assert_msg (mean > 30.0 && mean < 31.0, "dimension mean %g, expected about 30.5 (int() of N(31, 6.32))", mean);
    ck_assert_msg (sd > 6.0 && sd < 6.7, "dimension stdev %g, expected about 6.3", sd);
    ds.record_stdev = 0;
    ds.record_stdev = 100;
    uint64_t a = sb_dataset_object_size (&ds, 3), b = sb_dataset_object_size (&ds, 4);
    ck_assert_uint_eq (a, sb_dataset_object_size (&ds, 3));
    ck_assert_uint_ne (a, b);
    ck_assert_uint_eq (a % 4, 0);
    ck_assert_uint_eq (sb_dataset_content_seed (1, "train/a"), sb_dataset_content_seed (1, "train/a"));
    ck_assert_uint_ne (sb_dataset_content_seed (1, "train/a"), sb_dataset_content_seed (1, "train/b"));
}
END_TEST

START_TEST (test_synthetic)
{
    char err[512] = "", path[256];
    snprintf (path, sizeof path, "%s/results.db", s_dir);
    sb_resultdb_t *db = sb_resultdb_open (path, err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    sqlite3 *h = sb_resultdb_handle (db);
    sb_dataset_t ds = { .prefix = "img", .format = "npz", .files = 1003, .subfolders = 7, .samples_per_file = 2,
                        .record_length = 5000, .record_stdev = 900, .seed = 42 };
    uint64_t bytes = 0;
    for (uint64_t i = 0; i < ds.files; i++)
        bytes += sb_dataset_object_size (&ds, i);
    sb_catalog_info_t info;
    ck_assert_int_eq (sb_catalog_ensure_synthetic (h, &ds, 0, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_uint_eq (info.count, 1003);
    ck_assert_uint_eq (info.bytes, bytes);
    ck_assert_int_eq (info.reused, 0);
    int64_t id = info.id;
    /* compact keys: every name is the DLIO name of its position, so every
     * key is stored NULL and rebuilt by the reader, in name order */
    sqlite3_stmt *st;
    ck_assert_int_eq (sqlite3_prepare_v2 (h, "SELECT count(*), count(key), (SELECT naming FROM catalogs WHERE id = ?1)"
                                          " FROM objects WHERE catalog_id = ?1", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64 (st, 1, id);
    ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
    ck_assert_int_eq (sqlite3_column_int (st, 0), 1003);
    ck_assert_int_eq (sqlite3_column_int (st, 1), 0);
    ck_assert_str_eq ((const char *) sqlite3_column_text (st, 2), "dlio img npz 1003 7");
    sqlite3_finalize (st);
    sb_catalog_reader_t *cr = sb_catalog_reader_new (h, id, err, sizeof err);
    ck_assert_ptr_nonnull (cr);
    char prev[256] = "", expect[256], key[256];
    uint64_t sz, n = 0, sum = 0;
    for (n = 0; n < 1003; n++) {
        ck_assert_int_eq (sb_catalog_reader_get (cr, n, key, sizeof key, &sz), 0);
        ck_assert_int_gt (strcmp (key, prev), 0);
        ck_assert_int_eq (sb_dataset_key_sorted (&ds, n, expect, sizeof expect), 0);
        ck_assert_str_eq (key, expect);
        /* the index has the same size and the DLIO index behind the name */
        uint64_t isz = 0, dlio = 0;
        ck_assert_int_eq (sb_catalog_reader_locate (cr, n, &isz, &dlio), 1);
        ck_assert_uint_eq (isz, sz);
        ck_assert_uint_eq (isz, sb_dataset_object_size (&ds, dlio));
        ck_assert_int_eq (sb_dataset_key (&ds, dlio, expect, sizeof expect), 0);
        ck_assert_str_eq (key, expect);
        snprintf (prev, sizeof prev, "%s", key);
        sum += sz;
    }
    uint64_t isz, dlio;
    ck_assert_int_eq (sb_catalog_reader_locate (cr, 1003, &isz, &dlio), -1);
    ck_assert_uint_eq (sum, bytes);
    ck_assert_int_eq (sb_catalog_reader_get (cr, 1003, key, sizeof key, &sz), -1);
    sb_catalog_reader_destroy (&cr);
    ck_assert_str_eq (prev, "train/6/img_1000_of_1003.npz");   /* last folder, last index */
    ck_assert_int_eq (sb_dataset_key_sorted (&ds, 1003, expect, sizeof expect), -1);
    /* the O(1) position -> name mapping agrees with a walk folder by folder */
    sb_dataset_t odd = ds;
    for (uint64_t files = 1; files < 40; files++)
        for (uint64_t sub = 0; sub < 9; sub++) {
            odd.files = files;
            odd.subfolders = sub;
            uint64_t folders = sub > 1 ? sub : 1, pos = 0;
            for (uint64_t f = 0; f < folders; f++)
                for (uint64_t i = f; i < files; i += folders, pos++) {
                    char a[128], b[128];
                    ck_assert_int_eq (sb_dataset_key (&odd, i, a, sizeof a), 0);
                    ck_assert_int_eq (sb_dataset_key_sorted (&odd, pos, b, sizeof b), 0);
                    ck_assert_str_eq (a, b);
                }
            ck_assert_uint_eq (pos, files);
        }
    /* reused, then relisted on demand */
    ck_assert_int_eq (sb_catalog_ensure_synthetic (h, &ds, 0, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_int_eq (info.reused, 1);
    ck_assert_int_eq (info.id, id);
    ck_assert_int_eq (sb_catalog_ensure_synthetic (h, &ds, 1, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_int_eq (info.reused, 0);
    ck_assert_int_ne (info.id, id);
    /* another seed is another dataset */
    ds.seed = 43;
    ck_assert_int_eq (sb_catalog_ensure_synthetic (h, &ds, 0, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_int_eq (info.reused, 0);
    /* a reader by idx and a naming reader agree on keys */
    sb_catalog_reader_t *r = sb_catalog_reader_new (h, info.id, err, sizeof err);
    sb_catalog_reader_t *nr = sb_catalog_reader_new_naming (&ds, 1, err, sizeof err);
    ck_assert_ptr_nonnull (r);
    ck_assert_ptr_nonnull (nr);
    char k1[256], k2[256];
    uint64_t s1, s2;
    ck_assert_int_eq (sb_catalog_reader_get (r, 0, k1, sizeof k1, &s1), 0);
    ck_assert_int_eq (sb_catalog_reader_get (nr, 0, k2, sizeof k2, &s2), 0);
    ck_assert_str_eq (k1, k2);          /* object 0 sorts first */
    ck_assert_uint_eq (s1, s2);
    ck_assert_int_eq (sb_catalog_reader_get (nr, 1003, k2, sizeof k2, &s2), -1);
    sb_catalog_reader_destroy (&r);
    sb_catalog_reader_destroy (&nr);
    sb_resultdb_destroy (&db);
}
END_TEST

/* valid/ (DLIO's evaluation set) listed into a
 * catalog of its own beside train/'s; its compact keys are rebuilt under
 * valid/, not train/ */
START_TEST (test_valid_split)
{
    char err[512] = "", path[256];
    snprintf (path, sizeof path, "%s/results.db", s_dir);
    sb_resultdb_t *db = sb_resultdb_open (path, err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    sqlite3 *h = sb_resultdb_handle (db);
    char data[256];
    snprintf (data, sizeof data, "%s/data", s_dir);
    ck_assert_int_eq (mkdir (data, 0755), 0);
    snprintf (path, sizeof path, "%s/train", data);
    ck_assert_int_eq (mkdir (path, 0755), 0);
    s_write ("data/train/img_0_of_1.npz", 3);
    sb_dataset_t ds = { .prefix = "img", .format = "npz", .files = 2, .samples_per_file = 1, .record_length = 10,
                        .split = "valid" };
    sb_catalog_info_t info, train;
    ck_assert_int_eq (sb_catalog_ensure_split (h, data, "valid", &ds, 0, &info, err, sizeof err), SB_CATALOG_MISSING);
    snprintf (path, sizeof path, "%s/valid", data);
    ck_assert_int_eq (mkdir (path, 0755), 0);
    s_write ("data/valid/img_1_of_2.npz", 20);
    s_write ("data/valid/img_0_of_2.npz", 10);
    s_write ("data/valid/zz.npz", 5);          /* not a DLIO name: its key is stored */
    ck_assert_int_eq (sb_catalog_ensure_split (h, data, "valid", &ds, 0, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_uint_eq (info.count, 3);
    ck_assert_uint_eq (info.bytes, 35);
    ck_assert_int_eq (info.reused, 0);
    ck_assert_int_eq (sb_catalog_ensure (h, data, NULL, 0, &train, err, sizeof err), SB_CATALOG_OK);
    ck_assert_uint_eq (train.count, 1);
    ck_assert_int_ne (train.id, info.id);
    ck_assert_str_eq (train.prefix, info.prefix);   /* keys of both relative to the data folder */

    sb_catalog_reader_t *r = sb_catalog_reader_new (h, info.id, err, sizeof err);
    ck_assert_msg (r != NULL, "%s", err);
    ck_assert_str_eq (sb_dataset_split (sb_catalog_reader_naming (r)), "valid");
    ck_assert_int_eq (sb_catalog_reader_all_named (r), 0);
    uint64_t size = 0, dlio = 99;
    ck_assert_int_eq (sb_catalog_reader_locate (r, 1, &size, &dlio), 1);
    ck_assert_uint_eq (size, 20);
    ck_assert_uint_eq (dlio, 1);
    ck_assert_int_eq (sb_catalog_reader_locate (r, 2, &size, &dlio), 0);
    ck_assert_uint_eq (size, 5);
    char key[256];
    ck_assert_int_eq (sb_catalog_reader_get (r, 0, key, sizeof key, &size), 0);
    ck_assert_str_eq (key, "valid/img_0_of_2.npz");
    ck_assert_uint_eq (size, 10);
    ck_assert_int_eq (sb_catalog_reader_get (r, 2, key, sizeof key, &size), 0);
    ck_assert_str_eq (key, "valid/zz.npz");
    ck_assert_int_eq (sb_dataset_key (sb_catalog_reader_naming (r), 1, key, sizeof key), 0);
    ck_assert_str_eq (key, "valid/img_1_of_2.npz");
    sb_catalog_reader_destroy (&r);
    sqlite3_stmt *st;
    ck_assert_int_eq (sqlite3_prepare_v2 (h, "SELECT naming, uri FROM catalogs WHERE id = ?", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64 (st, 1, info.id);
    ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
    ck_assert_str_eq ((const char *) sqlite3_column_text (st, 0), "dlio img npz 2 0 valid");
    ck_assert_ptr_nonnull (strstr ((const char *) sqlite3_column_text (st, 1), "/data/valid"));
    sqlite3_finalize (st);

    /* unchanged: reused; a split that is neither train nor valid: refused */
    int64_t id = info.id;
    ck_assert_int_eq (sb_catalog_ensure_split (h, data, "valid", &ds, 0, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_int_eq (info.reused, 1);
    ck_assert_int_eq (info.id, id);
    ck_assert_int_eq (sb_catalog_ensure_split (h, data, "../x", &ds, 0, &info, err, sizeof err), SB_CATALOG_ERROR);
    ck_assert_ptr_nonnull (strstr (err, "no such split '../x'"));
    sb_resultdb_destroy (&db);
}
END_TEST

/* A negative size in a catalog (2^63 listed from S3 before listings were
 * bounded was stored so) is named as such when the catalog is loaded,
 * with the object's index; it read "object 1 found where 1 was expected". */
START_TEST (test_negative_size)
{
    char err[512] = "", path[256];
    snprintf (path, sizeof path, "%s/results.db", s_dir);
    sb_resultdb_t *db = sb_resultdb_open (path, err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    sqlite3 *h = sb_resultdb_handle (db);
    char data[256];
    snprintf (data, sizeof data, "%s/data", s_dir);
    ck_assert_int_eq (mkdir (data, 0755), 0);
    snprintf (path, sizeof path, "%s/train", data);
    ck_assert_int_eq (mkdir (path, 0755), 0);
    s_write ("data/train/a.npz", 10);
    s_write ("data/train/b.npz", 20);
    sb_catalog_info_t info;
    ck_assert_int_eq (sb_catalog_ensure (h, data, NULL, 0, &info, err, sizeof err), SB_CATALOG_OK);
    ck_assert_uint_eq (info.count, 2);
    char sql[256];
    snprintf (sql, sizeof sql, "UPDATE objects SET size = %lld WHERE catalog_id = %lld AND idx = 1",
              (long long) (-9223372036854775807LL - 1), (long long) info.id);
    ck_assert_int_eq (sqlite3_exec (h, sql, NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_eq (sqlite3_changes (h), 1);
    err[0] = '\0';
    sb_catalog_reader_t *r = sb_catalog_reader_new (h, info.id, err, sizeof err);
    ck_assert_ptr_null (r);
    char want[256];
    snprintf (want, sizeof want, "catalog %lld is damaged: object 1 has size -9223372036854775808; list again with"
              " --relist", (long long) info.id);
    ck_assert_str_eq (err, want);
    sb_resultdb_destroy (&db);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("catalog");
    TCase *tc = tcase_create ("core");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_list_reuse_relist);
    tcase_add_test (tc, test_dlio_names);
    tcase_add_test (tc, test_synthetic);
    tcase_add_test (tc, test_valid_split);
    tcase_add_test (tc, test_negative_size);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
