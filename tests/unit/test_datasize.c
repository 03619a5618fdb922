/* datasize: the MLPerf Storage minimum dataset in mlpstorage's arithmetic
 * (mlpstorage_py/rules/utils.py calculate_training_data_size at mlcommons/
 * storage 2f15ab69): known answers worked out by that formula,
 *   files = max (ceil (5 x H x M x 2^30 / (spf x record)),
 *                ceil (500 x A x batch / spf)),
 *   bytes = int (files x spf x record), subfolders = int (files / 10000)
 *   above 10,000 files,
 * for every training preset on three clusters, and the rounding edges. */
#include <check.h>
#include "check_main.h"

#include <math.h>
#include <string.h>

#include "config.h"
#include "datasize.h"
#include "embedded.h"
#include "workload.h"

typedef struct {
    const char      *name;
    sb_datasize_in_t in;
    uint64_t         files, subfolders, bytes;
} s_case_t;

static void
s_check (const s_case_t *c)
{
    sb_datasize_t out;
    char err[256] = "";
    ck_assert_msg (sb_datasize (&c->in, &out, err, sizeof err) == 0, "%s: %s", c->name, err);
    ck_assert_msg (out.files == c->files && out.subfolders == c->subfolders && out.bytes == c->bytes,
                   "%s (%llu hosts x %g GiB, %llu accelerators): %llu files, %llu subfolders, %llu bytes;"
                   " mlpstorage: %llu, %llu, %llu", c->name, (unsigned long long) c->in.hosts, c->in.host_memory_gb,
                   (unsigned long long) c->in.accelerators, (unsigned long long) out.files,
                   (unsigned long long) out.subfolders, (unsigned long long) out.bytes,
                   (unsigned long long) c->files, (unsigned long long) c->subfolders,
                   (unsigned long long) c->bytes);
    ck_assert_uint_eq (out.samples, c->files * c->in.samples_per_file);
}

/* { hosts, GiB per host, accelerators, batch, record length as written,
 *   samples per file, measured bytes }, files, subfolders, bytes. The
 * batch, record length and samples per file are the presets' (checked
 * against them below). */
static const s_case_t s_presets[] = {
        { "unet3d_a100", { 16, 1024, 128, 7, 146600628, 1, 0 }, 600004, 60, 87960963202512ULL },
        { "unet3d_a100", { 1, 64, 8, 7, 146600628, 1, 0 }, 28000, 2, 4104817584000ULL },
        { "unet3d_a100", { 2, 512, 72, 7, 146600628, 1, 0 }, 252000, 25, 36943358256000ULL },
        { "unet3d_h100", { 16, 1024, 128, 7, 146600628, 1, 0 }, 600004, 60, 87960963202512ULL },
        { "unet3d_h100", { 1, 64, 8, 7, 146600628, 1, 0 }, 28000, 2, 4104817584000ULL },
        { "unet3d_h100", { 2, 512, 72, 7, 146600628, 1, 0 }, 252000, 25, 36943358256000ULL },
        { "unet3d_b200", { 16, 1024, 128, 7, 146600628, 1, 0 }, 600004, 60, 87960963202512ULL },
        { "unet3d_b200", { 1, 64, 8, 7, 146600628, 1, 0 }, 28000, 2, 4104817584000ULL },
        { "unet3d_b200", { 2, 512, 72, 7, 146600628, 1, 0 }, 252000, 25, 36943358256000ULL },
        { "resnet50_a100", { 16, 1024, 128, 400, 114660.07, 1251, 0 }, 613226, 61, 87960982643360ULL },
        { "resnet50_a100", { 1, 64, 8, 400, 114660.07, 1251, 0 }, 2396, 0, 343681635177ULL },
        { "resnet50_a100", { 2, 512, 72, 400, 114660.07, 1251, 0 }, 38327, 3, 5497615205115ULL },
        { "resnet50_h100", { 16, 1024, 128, 400, 114660.07, 1251, 0 }, 613226, 61, 87960982643360ULL },
        { "resnet50_h100", { 1, 64, 8, 400, 114660.07, 1251, 0 }, 2396, 0, 343681635177ULL },
        { "resnet50_h100", { 2, 512, 72, 400, 114660.07, 1251, 0 }, 38327, 3, 5497615205115ULL },
        { "cosmoflow_a100", { 16, 1024, 128, 1, 2828486, 1, 0 }, 31098238, 3109, 87960930807668ULL },
        { "cosmoflow_a100", { 1, 64, 8, 1, 2828486, 1, 0 }, 121478, 12, 343598822308ULL },
        { "cosmoflow_a100", { 2, 512, 72, 1, 2828486, 1, 0 }, 1943640, 194, 5497558529040ULL },
        { "cosmoflow_h100", { 16, 1024, 128, 1, 2828486, 1, 0 }, 31098238, 3109, 87960930807668ULL },
        { "cosmoflow_h100", { 1, 64, 8, 1, 2828486, 1, 0 }, 121478, 12, 343598822308ULL },
        { "cosmoflow_h100", { 2, 512, 72, 1, 2828486, 1, 0 }, 1943640, 194, 5497558529040ULL },
        { "retinanet_a100", { 16, 1024, 128, 16, 153600, 1, 0 }, 572662307, 57266, 87960930355200ULL },
        { "retinanet_a100", { 1, 64, 8, 16, 153600, 1, 0 }, 2236963, 223, 343597516800ULL },
        { "retinanet_a100", { 2, 512, 72, 16, 153600, 1, 0 }, 35791395, 3579, 5497558272000ULL },
        { "retinanet_h100", { 16, 1024, 128, 16, 153600, 1, 0 }, 572662307, 57266, 87960930355200ULL },
        { "retinanet_h100", { 1, 64, 8, 16, 153600, 1, 0 }, 2236963, 223, 343597516800ULL },
        { "retinanet_h100", { 2, 512, 72, 16, 153600, 1, 0 }, 35791395, 3579, 5497558272000ULL },
        { "retinanet_b200", { 16, 1024, 128, 24, 322957, 1, 0 }, 272361120, 27236, 87960930231840ULL },
        { "retinanet_b200", { 1, 64, 8, 24, 322957, 1, 0 }, 1063911, 106, 343597504827ULL },
        { "retinanet_b200", { 2, 512, 72, 24, 322957, 1, 0 }, 17022570, 1702, 5497558139490ULL },
        { "retinanet_mi355", { 16, 1024, 128, 32, 322957, 1, 0 }, 272361120, 27236, 87960930231840ULL },
        { "retinanet_mi355", { 1, 64, 8, 32, 322957, 1, 0 }, 1063911, 106, 343597504827ULL },
        { "retinanet_mi355", { 2, 512, 72, 32, 322957, 1, 0 }, 17022570, 1702, 5497558139490ULL },
        { "dlrm_a100", { 16, 1024, 128, 8192, 512, 1, 0 }, 171798691840, 17179869, 87960930222080ULL },
        { "dlrm_a100", { 1, 64, 8, 8192, 512, 1, 0 }, 671088640, 67108, 343597383680ULL },
        { "dlrm_a100", { 2, 512, 72, 8192, 512, 1, 0 }, 10737418240, 1073741, 5497558138880ULL },
        { "dlrm_h100", { 16, 1024, 128, 8192, 512, 1, 0 }, 171798691840, 17179869, 87960930222080ULL },
        { "dlrm_h100", { 1, 64, 8, 8192, 512, 1, 0 }, 671088640, 67108, 343597383680ULL },
        { "dlrm_h100", { 2, 512, 72, 8192, 512, 1, 0 }, 10737418240, 1073741, 5497558138880ULL },
        { "dlrm_b200", { 16, 1024, 128, 16384, 761, 4718592, 0 }, 24496, 2, 87961425149952ULL },
        { "dlrm_b200", { 1, 64, 8, 16384, 761, 4718592, 0 }, 96, 0, 344721457152ULL },
        { "dlrm_b200", { 2, 512, 72, 16384, 761, 4718592, 0 }, 1531, 0, 5497589071872ULL },
        { "dlrm_mi355", { 16, 1024, 128, 16384, 761, 4718592, 0 }, 24496, 2, 87961425149952ULL },
        { "dlrm_mi355", { 1, 64, 8, 16384, 761, 4718592, 0 }, 96, 0, 344721457152ULL },
        { "dlrm_mi355", { 2, 512, 72, 16384, 761, 4718592, 0 }, 1531, 0, 5497589071872ULL },
        { "flux_a100", { 16, 1024, 128, 8, 307200, 1, 0 }, 286331154, 28633, 87960930508800ULL },
        { "flux_a100", { 1, 64, 8, 8, 307200, 1, 0 }, 1118482, 111, 343597670400ULL },
        { "flux_a100", { 2, 512, 72, 8, 307200, 1, 0 }, 17895698, 1789, 5497558425600ULL },
        { "flux_h100", { 16, 1024, 128, 8, 307200, 1, 0 }, 286331154, 28633, 87960930508800ULL },
        { "flux_h100", { 1, 64, 8, 8, 307200, 1, 0 }, 1118482, 111, 343597670400ULL },
        { "flux_h100", { 2, 512, 72, 8, 307200, 1, 0 }, 17895698, 1789, 5497558425600ULL },
        { "flux_b200", { 16, 1024, 128, 48, 2164832, 288, 0 }, 141083, 14, 87961246000128ULL },
        { "flux_b200", { 1, 64, 8, 48, 2164832, 288, 0 }, 667, 0, 415855567872ULL },
        { "flux_b200", { 2, 512, 72, 48, 2164832, 288, 0 }, 8818, 0, 5497772709888ULL },
        { "flux_mi355", { 16, 1024, 128, 72, 2164832, 288, 0 }, 141083, 14, 87961246000128ULL },
        { "flux_mi355", { 1, 64, 8, 72, 2164832, 288, 0 }, 1000, 0, 623471616000ULL },
        { "flux_mi355", { 2, 512, 72, 72, 2164832, 288, 0 }, 9000, 0, 5611244544000ULL },
};

START_TEST (test_presets_known_answers)
{
    for (size_t i = 0; i < sizeof s_presets / sizeof s_presets[0]; i++)
        s_check (&s_presets[i]);
}
END_TEST

/* The table's batch, record length and samples per file are those of the
 * built-in presets, the record length read as mlpstorage reads it (flux_b200
 * and flux_mi355 have no record_length_bytes: their Parquet columns). */
START_TEST (test_presets_parameters)
{
    size_t checked = 0;
    for (size_t i = 0; i < sizeof s_presets / sizeof s_presets[0]; i++) {
        const sb_embedded_t *p = sb_presets;
        while (p->name && strcmp (p->name, s_presets[i].name) != 0)
            p++;
        ck_assert_msg (p->name != NULL, "preset %s is not built in", s_presets[i].name);
        sb_config_t *cfg = sb_config_new ();
        char err[4096] = "";
        ck_assert_msg (sb_config_load_string (cfg, p->text, p->name, err, sizeof err) == 0, "%s", err);
        const sb_config_entry_t *format = sb_config_get (cfg, "dataset.format");
        const sb_config_entry_t *batch = sb_config_get (cfg, "reader.batch_size");
        const sb_config_entry_t *spf = sb_config_get (cfg, "dataset.num_samples_per_file");
        ck_assert (format && batch && spf);
        double record = -1;
        const char *how = NULL;
        ck_assert_msg (sb_datasize_record_length (cfg, format->value, &record, &how, err, sizeof err) == 0, "%s", err);
        ck_assert_msg (record == s_presets[i].in.record_length, "%s: record length %.17g (%s), table %.17g",
                       p->name, record, how, s_presets[i].in.record_length);
        ck_assert_uint_eq (strtoull (batch->value, NULL, 10), s_presets[i].in.batch_size);
        ck_assert_uint_eq (strtoull (spf->value, NULL, 10), s_presets[i].in.samples_per_file);
        sb_config_destroy (&cfg);
        checked++;
    }
    ck_assert_uint_eq (checked, 57);
}
END_TEST

START_TEST (test_rounding_edges)
{
    static const s_case_t cases[] = {
        /* a 16-host resnet50 cluster: 5 x 16 x 1024 GiB = 87960930222080 bytes over
         * 1251 x 114660.07 = 143439747.57 bytes a file = 613225.63: 613226
         * (a record rounded to 114660 bytes, samples first, gave 613227) */
        { "resnet50_h100 16 hosts", { 16, 1024, 128, 400, 114660.07, 1251, 0 }, 613226, 61, 87960982643360ULL },
        /* 5 GiB over 1 MiB files is exactly 5120: ceil adds nothing */
        { "exact multiple", { 1, 1, 1, 1, 1048576, 1, 0 }, 5120, 0, 5368709120ULL },
        /* one byte more a file: 5119.995 -> 5120 (a floor would give 5119) */
        { "just short", { 1, 1, 1, 1, 1048577, 1, 0 }, 5120, 0, 5368714240ULL },
        /* steps decide: 500 x 8 x 7 = 28000 samples in 1, 7 and 3 a file */
        { "steps, 1 a file", { 1, 1, 8, 7, 1e12, 1, 0 }, 28000, 2, 28000000000000000ULL },
        { "steps, exact", { 1, 1, 8, 7, 1e12, 7, 0 }, 4000, 0, 28000000000000000ULL },
        { "steps, 9333.3", { 1, 1, 8, 7, 1e12, 3, 0 }, 9334, 0, 28002000000000000ULL },
        /* a fraction of a GiB: 251.5 x 2^30 x 5 / 146600628 = 9210.76 */
        { "251.5 GiB", { 1, 251.5, 1, 1, 146600628, 1, 0 }, 9211, 0, 1350338384508ULL },
        /* measured 200 GiB over the declared 2 x 64: 1073741.824 -> 1073742 */
        { "measured wins", { 2, 64, 1, 1, 1000000, 1, 200ULL << 30 }, 1073742, 107, 1073742000000ULL },
        /* measured 100 GiB under the declared 128: 687194.77 -> 687195 */
        { "declared wins", { 2, 64, 1, 1, 1000000, 1, 100ULL << 30 }, 687195, 68, 687195000000ULL },
        /* no record length: the 500 steps alone, 20000 / 3 -> 6667, 0 bytes */
        { "no record length", { 1, 64, 4, 10, 0, 3, 0 }, 6667, 0, 0 },
        /* subfolders, int (files / 10000) above 10,000 files */
        { "10000 files", { 1, 1, 1, 1, 536870.912, 1, 0 }, 10000, 0, 5368709120ULL },
        { "10001 files", { 1, 1, 1, 1, 536818, 1, 0 }, 10001, 1, 5368716818ULL },
        { "19999 files", { 1, 1, 1, 1, 268449, 1, 0 }, 19999, 1, 5368711551ULL },
        { "20000 files", { 1, 1, 1, 1, 268436, 1, 0 }, 20000, 2, 5368720000ULL },
        { "20001 files", { 1, 1, 1, 1, 268435, 1, 0 }, 20001, 2, 5368968435ULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        s_check (&cases[i]);
    sb_datasize_t out;
    char err[64];
    ck_assert_int_eq (sb_datasize (&cases[7].in, &out, err, sizeof err), 0);
    ck_assert_int_eq (out.memory_measured, 1);
    ck_assert (out.memory_bytes == 200.0 * 1073741824.0);
    ck_assert_int_eq (sb_datasize (&cases[8].in, &out, err, sizeof err), 0);
    ck_assert_int_eq (out.memory_measured, 0);
    ck_assert (out.memory_bytes == 128.0 * 1073741824.0);
}
END_TEST

/* The record length from the columns, as mlpstorage sums them: float64 and
 * int64 8 bytes, uint8 and bool 1, anything else (float16 too) 4; size
 * default 1; record_length_bytes, when given, wins. */
START_TEST (test_record_length_from_columns)
{
    static const char *yaml =
        "dataset:\n"
        "  format: parquet\n"
        "  parquet:\n"
        "    columns:\n"
        "      - {name: a, dtype: float64}\n"
        "      - {name: b, dtype: int64, size: 3}\n"
        "      - {name: c, dtype: uint8, size: 10}\n"
        "      - {name: d, dtype: bool}\n"
        "      - {name: e, dtype: float16, size: 2}\n"
        "      - {name: f}\n"
        "      - {name: g, dtype: int32, size: 5}\n";
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    ck_assert_msg (sb_config_load_string (cfg, yaml, "cols.yaml", err, sizeof err) == 0, "%s", err);
    double record = -1;
    const char *how = NULL;
    ck_assert_int_eq (sb_datasize_record_length (cfg, "parquet", &record, &how, err, sizeof err), 0);
    ck_assert (record == 8 + 24 + 10 + 1 + 8 + 4 + 20);
    ck_assert_str_eq (how, "the sum of dataset.parquet.columns");
    ck_assert_int_eq (sb_datasize_record_length (cfg, "npz", &record, &how, err, sizeof err), 0);
    ck_assert (record == 0);
    ck_assert_int_eq (sb_config_override (cfg, "dataset.record_length_bytes=114660.07", err, sizeof err), 0);
    ck_assert_int_eq (sb_datasize_record_length (cfg, "parquet", &record, &how, err, sizeof err), 0);
    ck_assert (record == 114660.07);
    ck_assert_int_eq (sb_config_override (cfg, "dataset.record_length_bytes=abc", err, sizeof err), 0);
    ck_assert_int_eq (sb_datasize_record_length (cfg, "parquet", &record, &how, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "key 'dataset.record_length_bytes': 'abc' is not a number"));
    sb_config_destroy (&cfg);
    cfg = sb_config_new ();
    ck_assert_int_eq (sb_config_load_string (cfg, "dataset:\n  parquet:\n    columns:\n      - {name: a, size: 1.5}\n",
                                             "bad.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_datasize_record_length (cfg, "parquet", &record, &how, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "bad.yaml:4: key 'dataset.parquet.columns.0.size': '1.5' is not a whole"));
    sb_config_destroy (&cfg);
}
END_TEST

START_TEST (test_bad_input)
{
    sb_datasize_t out;
    char err[256] = "";
    sb_datasize_in_t in = { 1, 0, 8, 7, 1000, 1, 0 };
    ck_assert_int_eq (sb_datasize (&in, &out, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "must all be > 0"));
    in = (sb_datasize_in_t) { 1, 1, 8, 7, -1, 1, 0 };
    ck_assert_int_eq (sb_datasize (&in, &out, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "record length must be a finite number >= 0"));
    in = (sb_datasize_in_t) { 1, 1e30, 8, 7, 1, 1, 0 };
    ck_assert_int_eq (sb_datasize (&in, &out, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "more than 9e18"));
    in = (sb_datasize_in_t) { 1, 1, 8, 7, 1, 1, UINT64_MAX };
    ck_assert_int_eq (sb_datasize (&in, &out, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "measured memory is over"));
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("datasize");
    TCase *tc = tcase_create ("datasize");
    tcase_add_test (tc, test_presets_known_answers);
    tcase_add_test (tc, test_presets_parameters);
    tcase_add_test (tc, test_rounding_edges);
    tcase_add_test (tc, test_record_length_from_columns);
    tcase_add_test (tc, test_bad_input);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
