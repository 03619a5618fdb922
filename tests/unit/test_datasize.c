/* datasize: the MLPerf Storage minimum dataset, with known answers. */
#include <check.h>
#include "check_main.h"

#include <math.h>
#include <string.h>

#include "datasize.h"

START_TEST (test_known_answers)
{
    static const struct {
        sb_datasize_in_t in;
        uint64_t steps, memory, samples, files, subfolders;
        double gib;
    } cases[] = {
        /* unet3d, 36 H100 on one 251 GB host: the MLPerf Storage v1.0 script printed
         * "Minimum 126000 files are required which will consume 17203 GB" */
        { { 1, 251, 36, 7, 146600628, 1 }, 126000, 9192, 126000, 126000, 13, 17203.0918 },
        /* memory decides: 2 hosts of 512 GiB, 8 accelerators */
        { { 2, 512, 8, 7, 146600628, 1 }, 28000, 37501, 37501, 37501, 4, 5120.1043 },
        /* many samples per file (resnet50-like): files rounded up */
        { { 4, 256, 32, 400, 114660, 1251 }, 6400000, 47946609, 47946609, 38327, 4, 5120.0000 },
        /* steps decide, fewer than 10,000 files: no subfolders */
        { { 1, 64, 1, 1, 1073741824, 1 }, 500, 320, 500, 500, 0, 500.0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_datasize_t out;
        char err[256];
        ck_assert_int_eq (sb_datasize (&cases[i].in, &out, err, sizeof err), 0);
        ck_assert_uint_eq (out.samples_steps, cases[i].steps);
        ck_assert_uint_eq (out.samples_memory, cases[i].memory);
        ck_assert_uint_eq (out.samples, cases[i].samples);
        ck_assert_uint_eq (out.files, cases[i].files);
        ck_assert_uint_eq (out.subfolders, cases[i].subfolders);
        ck_assert_msg (fabs (out.gib - cases[i].gib) < 0.001, "case %zu: %.4f GiB", i, out.gib);
    }
}
END_TEST

START_TEST (test_bad_input)
{
    sb_datasize_t out;
    char err[256] = "";
    sb_datasize_in_t in = { 1, 0, 8, 7, 1000, 1 };
    ck_assert_int_eq (sb_datasize (&in, &out, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "must all be > 0"));
    in = (sb_datasize_in_t) { 1, 1e30, 8, 7, 1, 1 };
    ck_assert_int_eq (sb_datasize (&in, &out, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "more than 9e18 samples"));
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("datasize");
    TCase *tc = tcase_create ("datasize");
    tcase_add_test (tc, test_known_answers);
    tcase_add_test (tc, test_bad_input);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
