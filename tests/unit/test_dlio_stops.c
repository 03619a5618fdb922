/* Where DLIO_local_changes stops before its first epoch (lib/dataset/
 * dlio_stops.h): the lines a run prints, exactly where they apply. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <string.h>

#include "dlio_stops.h"

static sb_workload_t
s_wl (const char *format, const char *engine, const char *type, const char *library)
{
    sb_workload_t wl;
    memset (&wl, 0, sizeof wl);
    snprintf (wl.framework, sizeof wl.framework, "pytorch");
    snprintf (wl.format, sizeof wl.format, "%s", format);
    snprintf (wl.storage.engine, sizeof wl.storage.engine, "%s", engine);
    snprintf (wl.storage_type_given, sizeof wl.storage_type_given, "%s", type);
    snprintf (wl.storage_library, sizeof wl.storage_library, "%s", library);
    wl.storage.direct_fs_iterable = strcmp (type, "direct_fs") == 0;   /* as storage_keys.c sets it */
    return wl;
}

/* the lines of wl, joined by '|' */
static const char *
s_lines (const sb_workload_t *wl, int trains)
{
    static char all[4096];
    char one[1024];
    all[0] = 0;
    for (size_t i = 0; sb_dlio_stop_note (wl, trains, i, one, sizeof one); i++) {
        ck_assert_uint_lt (i, 3);
        strncat (all, one, sizeof all - strlen (all) - 2);
        strcat (all, "|");
    }
    return all;
}

START_TEST (test_minio)
{
    sb_workload_t wl = s_wl ("npz", "s3", "s3", "minio");
    const char *l = s_lines (&wl, 1);
    ck_assert_ptr_nonnull (strstr (l, "storage_library minio: DLIO_local_changes stops before any I/O"));
    ck_assert_ptr_nonnull (strstr (l, "an existence check of the store that its MinIOAdapter lacks"));
    ck_assert_int_eq ((int) (strchr (l, '|') - l) + 1, (int) strlen (l));   /* one line */
    /* datagen and checkpoints construct the same storage */
    ck_assert_str_eq (s_lines (&wl, 0), l);
    wl = s_wl ("npz", "s3", "s3", "s3dlio");
    ck_assert_str_eq (s_lines (&wl, 1), "");
    wl = s_wl ("npz", "s3", "s3", "s3torchconnector");
    ck_assert_str_eq (s_lines (&wl, 1), "");
}
END_TEST

START_TEST (test_direct_fs)
{
    sb_workload_t wl = s_wl ("png", "direct", "direct_fs", "s3dlio");
    ck_assert_ptr_nonnull (strstr (s_lines (&wl, 1), "png on direct_fs with the pytorch loader: DLIO_local_changes"
                                                     " stops at its first read"));
    ck_assert_str_eq (s_lines (&wl, 0), "");            /* datagen reads nothing */
    wl.storage.direct_fs_iterable = 0;                   /* reader.odirect: DLIO's O_DIRECT map-style readers */
    ck_assert_str_eq (s_lines (&wl, 1), "");
    wl = s_wl ("npz", "file", "local_fs", "");           /* map-style on local files */
    ck_assert_str_eq (s_lines (&wl, 1), "");
    wl = s_wl ("hdf5", "direct", "direct_fs", "s3dlio");
    ck_assert_str_eq (s_lines (&wl, 1), "");
    wl = s_wl ("npz", "direct", "direct_fs", "s3dlio");
    snprintf (wl.data_loader, sizeof wl.data_loader, "tensorflow");
    ck_assert_str_eq (s_lines (&wl, 1), "");
}
END_TEST

START_TEST (test_parquet_columns)
{
    sb_workload_t wl = s_wl ("parquet", "file", "local_fs", "");
    ck_assert_str_eq (s_lines (&wl, 1), "");             /* the legacy uint8 column: dictionary encoded */
    snprintf (wl.parquet_columns, sizeof wl.parquet_columns, "a:uint8:4,b:int8:1");
    ck_assert_str_eq (s_lines (&wl, 1), "");
    snprintf (wl.parquet_columns, sizeof wl.parquet_columns, "a:uint8:4,b:float32:16");
    ck_assert_ptr_nonnull (strstr (s_lines (&wl, 1), "parquet columns other than 8-bit ints"));
    snprintf (wl.parquet_columns, sizeof wl.parquet_columns, "x:int16:1");
    ck_assert_ptr_nonnull (strstr (s_lines (&wl, 1), "dictionary_page_offset"));
    ck_assert_str_eq (s_lines (&wl, 0), "");
    /* s3dlio's own parquet reader plans from its index */
    sb_workload_t s3 = s_wl ("parquet", "s3", "s3", "s3dlio");
    snprintf (s3.parquet_columns, sizeof s3.parquet_columns, "x:float64:1");
    ck_assert_str_eq (s_lines (&s3, 1), "");
    /* minio and the columns: two lines, in order */
    s3 = s_wl ("parquet", "s3", "s3", "minio");
    snprintf (s3.parquet_columns, sizeof s3.parquet_columns, "x:float64:1");
    const char *l = s_lines (&s3, 1);
    ck_assert_ptr_nonnull (strstr (l, "storage_library minio"));
    const char *a = strstr (l, "storage_library minio"), *b = strstr (l, "parquet columns other");
    ck_assert (a != NULL && b != NULL && a < b);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("dlio_stops");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_minio);
    tcase_add_test (tc, test_direct_fs);
    tcase_add_test (tc, test_parquet_columns);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
