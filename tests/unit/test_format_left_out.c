/* The format registry of a build that left out the optional formats
 * (meson -Dimages=disabled -Dhdf5=disabled -Dparquet=disabled), in any
 * build: tests/meson.build compiles lib/format/format.c into this test
 * without SB_HAVE_IMAGES, SB_HAVE_HDF5 and SB_HAVE_PARQUET. A left-out
 * format is refused naming the meson option, is never taken for raw bytes,
 * and fails to open; the formats always built are unchanged. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <string.h>

#include "format.h"

#if defined SB_HAVE_IMAGES || defined SB_HAVE_HDF5 || defined SB_HAVE_PARQUET
#error "test_format_left_out is compiled without the optional formats (tests/meson.build)"
#endif

static const struct {
    const char *format;
    const char *option;
} s_left_out[] = {
    { "hdf5", "hdf5" }, { "h5", "hdf5" },   { "png", "images" },
    { "jpeg", "images" }, { "jpg", "images" }, { "parquet", "parquet" },
};

START_TEST (test_check_names_option)
{
    const char *format = s_left_out[_i].format, *option = s_left_out[_i].option;
    char err[256], expect[256];
    snprintf (expect, sizeof expect, "dataset.format '%s': shardbench was built without %s (meson -D%s=enabled)",
              format, option, option);
    ck_assert_int_eq (sb_format_check (format, err, sizeof err), -1);
    ck_assert_str_eq (err, expect);
    err[0] = 0;
    ck_assert_int_eq (sb_format_left_out (format, err, sizeof err), -1);
    ck_assert_str_eq (err, expect);
}
END_TEST

START_TEST (test_not_raw_and_open_fails)
{
    const char *format = s_left_out[_i].format, *option = s_left_out[_i].option;
    const sb_format_ops_t *ops = sb_format_find (format);
    ck_assert_ptr_nonnull (ops);
    ck_assert_ptr_ne (ops, &sb_format_raw);
    ck_assert (!sb_format_is_raw (format));
    sb_format_obj_t obj;
    char err[256], expect[128];
    ck_assert_int_eq (sb_format_open_with (&obj, ops, 1, 4, 100, err, sizeof err), -1);
    snprintf (expect, sizeof expect, "shardbench was built without %s (meson -D%s=enabled)", option, option);
    ck_assert_ptr_nonnull (strstr (err, expect));
    /* a dataset of the format: sb_format_open fails the same way */
    sb_dataset_t ds = { .prefix = "img", .format = format, .files = 2, .subfolders = 1, .samples_per_file = 1,
                        .record_length = 100, .seed = 7 };
    char key[64];
    snprintf (key, sizeof key, "train/img_0_of_2.%s", format);
    ck_assert_int_eq (sb_format_open (&obj, &ds, 0, key, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, expect));
}
END_TEST

START_TEST (test_built_formats_unchanged)
{
    char err[256] = "";
    ck_assert_ptr_eq (sb_format_find ("npz"), &sb_format_npz);
    ck_assert_ptr_eq (sb_format_find ("npy"), &sb_format_npy);
    ck_assert_ptr_eq (sb_format_find ("tfrecord"), &sb_format_tfrecord);
    ck_assert_ptr_eq (sb_format_find ("bin"), &sb_format_raw);
    ck_assert_int_eq (sb_format_left_out ("npz", err, sizeof err), 0);
    ck_assert_int_eq (sb_format_check ("npz", err, sizeof err), 0);
    ck_assert_int_eq (sb_format_check ("bin", err, sizeof err), 0);
    ck_assert_int_eq (sb_format_check ("indexed_binary", err, sizeof err), 0);
    ck_assert_int_eq (sb_format_check ("csv", err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "'csv' is not supported yet"));
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("format_left_out");
    TCase *tc = tcase_create ("core");
    int n = (int) (sizeof s_left_out / sizeof s_left_out[0]);
    tcase_add_loop_test (tc, test_check_names_option, 0, n);
    tcase_add_loop_test (tc, test_not_raw_and_open_fails, 0, n);
    tcase_add_test (tc, test_built_formats_unchanged);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
