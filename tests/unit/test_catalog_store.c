/* catalog_store: the catalog's SQL on a real result database. Each test
 * writes rows through the store's functions and reads back the exact rows
 * (with the store, and with plain SQL where the store has no reader). */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_store.h"
#include "resultdb.h"

static char s_dir[64];
static char s_path[128];

static void
s_setup (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/sbcatstoreXXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
    snprintf (s_path, sizeof s_path, "%s/results.db", s_dir);
}

static void
s_teardown (void)
{
    sb_check_remove_tree (s_dir);
}

/* The rows seen by a pass (key or "(named)", size), joined by ';'. */
typedef struct {
    char     text[1024];
    int      stop_after;    /* nonzero: stop the pass after this many rows */
    int      rows;
} s_seen_t;

static int
s_seen_row (void *ctx, const char *key, size_t len, uint64_t size)
{
    s_seen_t *s = ctx;
    size_t used = strlen (s->text);
    snprintf (s->text + used, sizeof s->text - used, "%.*s=%llu;", (int) len, key, (unsigned long long) size);
    s->rows++;
    return s->stop_after && s->rows >= s->stop_after;
}

static int
s_seen_index (void *ctx, uint64_t idx, int stored, int64_t size)
{
    s_seen_t *s = ctx;
    size_t used = strlen (s->text);
    snprintf (s->text + used, sizeof s->text - used, "%llu:%d:%lld;", (unsigned long long) idx, stored,
              (long long) size);
    s->rows++;
    return 0;
}

START_TEST (test_sorted_listing)
{
    char err[512] = "";
    sb_resultdb_t *db = sb_resultdb_open (s_path, err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    sqlite3 *h = sb_resultdb_handle (db);

    int64_t id = 0, found_id = 0;
    uint64_t count = 0, bytes = 0;
    ck_assert_int_eq (sb_catalog_store_lookup (h, "file:///d/train", "fp1", &found_id, &count, &bytes, err, sizeof err), 0);

    sb_catalog_listing_t *l = sb_catalog_listing_begin (h, "file:///d/train", "/d/", "fp1", 0, NULL, NULL, &id, err,
                                                        sizeof err);
    ck_assert_msg (l != NULL, "%s", err);
    ck_assert_int_gt (id, 0);
    ck_assert_int_eq (sb_catalog_listing_put_object (l, 0, NULL, 0, 100, err, sizeof err), 0);
    ck_assert_int_eq (sb_catalog_listing_put_object (l, 1, "train/odd.npzXX", 13, 7, err, sizeof err), 0);
    /* not staged: stage is refused */
    ck_assert_int_eq (sb_catalog_listing_stage (l, "x", 1, 1, err, sizeof err), -1);
    ck_assert_int_eq (sb_catalog_listing_record (l, 1.5, 2, 107, "dlio img npz 2 0", err, sizeof err), 0);
    ck_assert_int_eq (sb_catalog_listing_commit (&l, err, sizeof err), 0);
    ck_assert_ptr_null (l);

    /* the exact rows */
    sqlite3_stmt *q = NULL;
    ck_assert_int_eq (sqlite3_prepare_v2 (h, "SELECT uri, prefix, fingerprint, list_s, count, bytes, naming"
                                          " FROM catalogs WHERE id = ?", -1, &q, NULL), SQLITE_OK);
    sqlite3_bind_int64 (q, 1, id);
    ck_assert_int_eq (sqlite3_step (q), SQLITE_ROW);
    ck_assert_str_eq ((const char *) sqlite3_column_text (q, 0), "file:///d/train");
    ck_assert_str_eq ((const char *) sqlite3_column_text (q, 1), "/d/");
    ck_assert_str_eq ((const char *) sqlite3_column_text (q, 2), "fp1");
    ck_assert_double_eq_tol (sqlite3_column_double (q, 3), 1.5, 1e-9);
    ck_assert_int_eq (sqlite3_column_int64 (q, 4), 2);
    ck_assert_int_eq (sqlite3_column_int64 (q, 5), 107);
    ck_assert_str_eq ((const char *) sqlite3_column_text (q, 6), "dlio img npz 2 0");
    sqlite3_finalize (q);
    ck_assert_int_eq (sqlite3_prepare_v2 (h, "SELECT oid, key, size FROM objects ORDER BY oid", -1, &q, NULL),
                      SQLITE_OK);
    ck_assert_int_eq (sqlite3_step (q), SQLITE_ROW);
    ck_assert_int_eq (sqlite3_column_int64 (q, 0), SB_CATALOG_STORE_OID (id, 0));
    ck_assert_int_eq (sqlite3_column_type (q, 1), SQLITE_NULL);
    ck_assert_int_eq (sqlite3_column_int64 (q, 2), 100);
    ck_assert_int_eq (sqlite3_step (q), SQLITE_ROW);
    ck_assert_int_eq (sqlite3_column_int64 (q, 0), SB_CATALOG_STORE_OID (id, 1));
    ck_assert_str_eq ((const char *) sqlite3_column_text (q, 1), "train/odd.npz");
    ck_assert_int_eq (sqlite3_column_int64 (q, 2), 7);
    ck_assert_int_eq (sqlite3_step (q), SQLITE_DONE);
    sqlite3_finalize (q);

    /* looked up by uri and fingerprint only */
    ck_assert_int_eq (sb_catalog_store_lookup (h, "file:///d/train", "fp1", &found_id, &count, &bytes, err, sizeof err), 1);
    ck_assert_int_eq (found_id, id);
    ck_assert_uint_eq (count, 2);
    ck_assert_uint_eq (bytes, 107);
    ck_assert_int_eq (sb_catalog_store_lookup (h, "file:///d/train", "fp2", &found_id, &count, &bytes, err, sizeof err), 0);

    /* the reader's reads */
    char *naming = sb_catalog_store_naming (h, id);
    ck_assert_ptr_nonnull (naming);
    ck_assert_str_eq (naming, "dlio img npz 2 0");
    free (naming);
    ck_assert_uint_eq (sb_catalog_store_count (h, id, &count, err, sizeof err), 0);
    ck_assert_uint_eq (count, 2);
    ck_assert_int_eq (sb_catalog_store_count (h, id + 99, &count, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "cannot read its size"));
    s_seen_t seen = { .text = "" };
    ck_assert_int_eq (sb_catalog_store_scan (h, id, s_seen_index, &seen, err, sizeof err), 0);
    ck_assert_str_eq (seen.text, "0:0:100;1:1:7;");
    sb_catalog_objects_t *o = sb_catalog_objects_open (h, id, err, sizeof err);
    ck_assert_msg (o != NULL, "%s", err);
    char key[64] = "";
    int named = -1;
    uint64_t size = 0;
    ck_assert_int_eq (sb_catalog_objects_get (o, 0, key, sizeof key, &named, &size), 0);
    ck_assert_int_eq (named, 1);
    ck_assert_uint_eq (size, 100);
    ck_assert_int_eq (sb_catalog_objects_get (o, 1, key, sizeof key, &named, &size), 0);
    ck_assert_int_eq (named, 0);
    ck_assert_str_eq (key, "train/odd.npz");
    ck_assert_uint_eq (size, 7);
    ck_assert_int_eq (sb_catalog_objects_get (o, 1, key, 4, &named, &size), -1);     /* too long for key_buf */
    ck_assert_int_eq (sb_catalog_objects_get (o, 2, key, sizeof key, &named, &size), -1);
    sb_catalog_objects_close (&o);
    ck_assert_ptr_null (o);
    sb_resultdb_destroy (&db);
}
END_TEST

START_TEST (test_staged_listing_and_abort)
{
    char err[512] = "";
    sb_resultdb_t *db = sb_resultdb_open (s_path, err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    sqlite3 *h = sb_resultdb_handle (db);

    /* an aborted listing leaves no catalog and no object */
    int64_t id = 0;
    sb_catalog_listing_t *l = sb_catalog_listing_begin (h, "file:///d/train", "/d/", "fp", 0, NULL, NULL, &id, err,
                                                        sizeof err);
    ck_assert_msg (l != NULL, "%s", err);
    ck_assert_int_eq (sb_catalog_listing_put_object (l, 0, "train/a", 7, 1, err, sizeof err), 0);
    sb_catalog_listing_abort (&l);
    ck_assert_ptr_null (l);
    int64_t found_id = 0;
    uint64_t count = 0, bytes = 0;
    ck_assert_int_eq (sb_catalog_store_lookup (h, "file:///d/train", "fp", &found_id, &count, &bytes, err, sizeof err), 0);
    sqlite3_stmt *q = NULL;
    ck_assert_int_eq (sqlite3_prepare_v2 (h, "SELECT count(*) FROM objects", -1, &q, NULL), SQLITE_OK);
    ck_assert_int_eq (sqlite3_step (q), SQLITE_ROW);
    ck_assert_int_eq (sqlite3_column_int64 (q, 0), 0);
    sqlite3_finalize (q);

    /* staged: rows come back in key order, then the staging table is empty */
    l = sb_catalog_listing_begin (h, "file:///d/train", "/d/", "fp", 1, NULL, NULL, &id, err, sizeof err);
    ck_assert_msg (l != NULL, "%s", err);
    ck_assert_int_eq (sb_catalog_listing_stage (l, "train/c", 7, 3, err, sizeof err), 0);
    ck_assert_int_eq (sb_catalog_listing_stage (l, "train/a", 7, 1, err, sizeof err), 0);
    ck_assert_int_eq (sb_catalog_listing_stage (l, "train/b", 7, 2, err, sizeof err), 0);
    s_seen_t seen = { .text = "" };
    ck_assert_int_eq (sb_catalog_listing_each_sorted (l, s_seen_row, &seen, err, sizeof err), 0);
    ck_assert_str_eq (seen.text, "train/a=1;train/b=2;train/c=3;");
    ck_assert_int_eq (sqlite3_prepare_v2 (h, "SELECT count(*) FROM temp.catalog_staging", -1, &q, NULL), SQLITE_OK);
    ck_assert_int_eq (sqlite3_step (q), SQLITE_ROW);
    ck_assert_int_eq (sqlite3_column_int64 (q, 0), 0);
    sqlite3_finalize (q);
    ck_assert_int_eq (sb_catalog_listing_record (l, 0.25, 0, 0, NULL, err, sizeof err), 0);
    ck_assert_int_eq (sb_catalog_listing_commit (&l, err, sizeof err), 0);
    ck_assert_ptr_null (sb_catalog_store_naming (h, id));
    ck_assert_int_eq (sb_catalog_store_lookup (h, "file:///d/train", "fp", &found_id, &count, &bytes, err, sizeof err), 1);
    ck_assert_int_eq (found_id, id);
    ck_assert_uint_eq (count, 0);
    sb_resultdb_destroy (&db);
}
END_TEST

START_TEST (test_partition)
{
    char err[512] = "";
    sb_catalog_part_t *p = sb_catalog_part_open (err, sizeof err);
    ck_assert_msg (p != NULL, "%s", err);
    /* read back in the order appended, not in key order */
    ck_assert_int_eq (sb_catalog_part_add (p, "train/z", 26, err, sizeof err), 0);
    ck_assert_int_eq (sb_catalog_part_add (p, "train/a", 1, err, sizeof err), 0);
    ck_assert_int_eq (sb_catalog_part_add (p, "train/m", 13, err, sizeof err), 0);
    ck_assert_int_eq (sb_catalog_part_commit (p, err, sizeof err), 0);
    s_seen_t seen = { .text = "" };
    ck_assert_int_eq (sb_catalog_part_each (p, s_seen_row, &seen, err, sizeof err), 0);
    ck_assert_str_eq (seen.text, "train/z=26;train/a=1;train/m=13;");
    /* a nonzero fn stops the pass */
    s_seen_t two = { .text = "", .stop_after = 2 };
    ck_assert_int_eq (sb_catalog_part_each (p, s_seen_row, &two, err, sizeof err), -1);
    ck_assert_str_eq (two.text, "train/z=26;train/a=1;");
    sb_catalog_part_close (&p);
    ck_assert_ptr_null (p);
    sb_catalog_part_close (&p);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("catalog_store");
    TCase *tc = tcase_create ("core");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_sorted_listing);
    tcase_add_test (tc, test_staged_listing_and_abort);
    tcase_add_test (tc, test_partition);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
