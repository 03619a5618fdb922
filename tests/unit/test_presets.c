/* Workload presets (the MLPerf Storage parameters, exactly), DLIO / mlpstorage
 * YAML with mlpstorage's overrides, and the forms of train.computation_time. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "embedded.h"
#include "workload.h"

/* MLPerf Storage configs/dlio/workload/<name>.yaml (see the preset files). */
static const struct {
    const char *name, *model, *framework, *format;
    uint64_t    files, samples_per_file, record, stdev, batch, read_threads, epochs;
    double      compute, au;
} s_expected[] = {
    { "unet3d_a100", "unet3d", "pytorch", "npz", 168, 1, 146600628, 68341808, 7, 4, 5, 0.636, 0.90 },
    { "unet3d_h100", "unet3d", "pytorch", "npz", 168, 1, 146600628, 68341808, 7, 4, 5, 0.323, 0.90 },
    { "unet3d_b200", "unet3d", "pytorch", "npz", 7200, 1, 146600628, 68341808, 7, 4, 5, 0.162, 0.90 },
    { "resnet50_a100", "resnet50", "tensorflow", "tfrecord", 1024, 1251, 114660, 0, 400, 8, 5, 0.435, 0.90 },
    { "resnet50_h100", "resnet50", "tensorflow", "tfrecord", 1024, 1251, 114660, 0, 400, 8, 5, 0.224, 0.90 },
    { "cosmoflow_a100", "cosmoflow", "tensorflow", "tfrecord", 524288, 1, 2828486, 71311, 1, 4, 5, 0.00551, 0.70 },
    { "cosmoflow_h100", "cosmoflow", "tensorflow", "tfrecord", 524288, 1, 2828486, 71311, 1, 4, 5, 0.00350, 0.70 },
    { "retinanet_b200", "retinanet", "pytorch", "jpeg", 1170301, 1, 322957, 0, 24, 8, 8, 0.04755, 0.85 },
    { "retinanet_mi355", "retinanet", "pytorch", "jpeg", 1170301, 1, 322957, 0, 32, 8, 8, 0.0634, 0.85 },
    { "dlrm_b200", "dlrm", "pytorch", "parquet", 1024, 4718592, 761, 0, 16384, 4, 1, 0.000375, 0.70 },
    { "flux_b200", "flux", "pytorch", "parquet", 4296, 288, 2164832, 0, 48, 8, 1, 1.35, 0.90 },
    { "retinanet_a100", "retinanet", "pytorch", "jpeg", 1743042, 1, 153600, 51200, 16, 8, 5, 0.210, 0.85 },
    { "retinanet_h100", "retinanet", "pytorch", "jpeg", 1743042, 1, 153600, 51200, 16, 8, 5, 0.180, 0.85 },
    { "dlrm_a100", "dlrm", "pytorch", "npz", 65536, 1, 512, 0, 8192, 8, 1, 0.007, 0.70 },
    { "dlrm_h100", "dlrm", "pytorch", "npz", 65536, 1, 512, 0, 8192, 8, 1, 0.005, 0.70 },
    { "dlrm_mi355", "dlrm", "pytorch", "parquet", 1024, 4718592, 761, 0, 16384, 4, 1, 0.0005625, 0.70 },
    { "flux_a100", "flux", "pytorch", "jpeg", 1099776, 1, 307200, 102400, 8, 8, 5, 1.100, 0.80 },
    { "flux_h100", "flux", "pytorch", "jpeg", 1099776, 1, 307200, 102400, 8, 8, 5, 0.850, 0.80 },
    { "flux_mi355", "flux", "pytorch", "parquet", 4296, 288, 2164832, 0, 72, 8, 1, 2.025, 0.90 },
};
#define S_NEXPECTED (sizeof s_expected / sizeof s_expected[0])

static const char *
s_preset (const char *name)
{
    for (const sb_embedded_t *p = sb_presets; p->name; p++)
        if (strcmp (p->name, name) == 0)
            return p->text;
    return NULL;
}

START_TEST (test_preset_parameters)
{
    size_t i = (size_t) _i;
    const char *text = s_preset (s_expected[i].name);
    ck_assert_msg (text != NULL, "preset %s is not built in", s_expected[i].name);
    sb_config_t *cfg = sb_config_new ();
    char err[1024] = "";
    ck_assert_msg (sb_config_load_string (cfg, text, s_expected[i].name, err, sizeof err) == 0, "%s", err);
    sb_workload_t wl;
    ck_assert_msg (sb_workload_from_config (cfg, &wl, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq (wl.model_name, s_expected[i].model);
    ck_assert_str_eq (wl.framework, s_expected[i].framework);
    ck_assert_str_eq (wl.format, s_expected[i].format);
    ck_assert_uint_eq (wl.num_files_train, s_expected[i].files);
    ck_assert_uint_eq (wl.num_samples_per_file, s_expected[i].samples_per_file);
    ck_assert_uint_eq (wl.record_length_bytes, s_expected[i].record);
    ck_assert_uint_eq (wl.record_length_bytes_stdev, s_expected[i].stdev);
    ck_assert_uint_eq (wl.batch_size, s_expected[i].batch);
    ck_assert_uint_eq (wl.read_threads, s_expected[i].read_threads);
    ck_assert_uint_eq (wl.epochs, s_expected[i].epochs);
    ck_assert (wl.computation_time == s_expected[i].compute);   /* the same decimal, parsed the same way */
    ck_assert_int_eq (wl.compute.type, SB_DIST_CONSTANT);
    ck_assert (wl.compute.a == s_expected[i].compute);
    ck_assert (wl.au == s_expected[i].au);
    ck_assert_int_eq (wl.file_shuffle, SB_SHUFFLE_SEED * (strncmp (s_expected[i].name, "resnet50", 8) != 0));
    /* flux names its parquet columns; their row (float32 x 541208) is its record length */
    if (!strcmp (s_expected[i].name, "flux_b200") || !strcmp (s_expected[i].name, "flux_mi355"))
        ck_assert_str_eq (wl.parquet_columns, "t5_encodings:float32:524328,clip_encodings:float32:409,"
                          "mean:float32:8232,logvar:float32:8232,timestamp:float32:7");
    else if (!strncmp (s_expected[i].name, "dlrm_b200", 9) || !strcmp (s_expected[i].name, "dlrm_mi355")) {
        /* dlrm's 200 columns, exactly as MLPerf Storage lists them (needs
         * dataset.parquet.columns over 4095 characters) */
        ck_assert_msg (strncmp (wl.parquet_columns, "feature_000:float16", 19) == 0, "%s", wl.parquet_columns);
        size_t commas = 0;
        for (const char *c = wl.parquet_columns; *c; c++)
            commas += *c == ',';
        ck_assert_uint_eq (commas, 199);
        ck_assert_ptr_nonnull (strstr (wl.parquet_columns, "feature_199:float16"));
    }
    else
        ck_assert_str_eq (wl.parquet_columns, "");
    sb_config_destroy (&cfg);
}
END_TEST

/* Every preset of the table is built in, and every built-in preset but
 * quickstart (and presets of other engineers' commands) is in the table. */
START_TEST (test_preset_list)
{
    size_t training = 0;
    for (const sb_embedded_t *p = sb_presets; p->name; p++) {
        int known = 0;
        for (size_t i = 0; i < S_NEXPECTED; i++)
            known |= strcmp (p->name, s_expected[i].name) == 0;
        training += known;
        if (!known)
            ck_assert_msg (strcmp (p->name, "quickstart") == 0 || strncmp (p->name, "llama3", 6) == 0,
                           "preset %s has no row in the table of test_presets.c", p->name);
    }
    ck_assert_uint_eq (training, S_NEXPECTED);
    ck_assert_ptr_nonnull (s_preset ("quickstart"));
}
END_TEST

/* A workload in the form MLPerf Storage ships (sections, comments, keys
 * shardbench does not use, a fractional record length, a list of Parquet
 * column mappings, the spelling record_length, which DLIO_local_changes
 * does not read). */
static const char *s_mlperf =
    "model: \n"
    "  name: unet3d\n"
    "  type: cnn\n"
    "  model_size: 499153191\n"
    "\n"
    "framework: pytorch\n"
    "\n"
    "workflow:\n"
    "  generate_data: False\n"
    "  train: True\n"
    "  checkpoint: True\n"
    "\n"
    "dataset: \n"
    "  data_folder: data/unet3d/\n"
    "  format: npz\n"
    "  num_files_train: 168        # files of the reference dataset\n"
    "  num_samples_per_file: 1\n"
    "  record_length: 146600627.6\n"
    "  record_length_bytes_stdev: 68341808\n"
    "  record_length_bytes_resize: 2097152\n"
    "  compression: none\n"
    "  parquet:\n"
    "    row_group_size: 6144\n"
    "    columns:\n"
    "      - name: feature_000\n"
    "        dtype: float16\n"
    "      - name: feature_001\n"
    "        dtype: float64\n"
    "  \n"
    "reader: \n"
    "  data_loader: pytorch\n"
    "  batch_size: 7\n"
    "  read_threads: 4\n"
    "  file_shuffle: seed\n"
    "  sample_shuffle: seed\n"
    "  shuffle_size: 2\n"
    "\n"
    "train:\n"
    "  epochs: 5\n"
    "  computation_time: 0.323\n"
    "\n"
    "checkpoint:\n"
    "  checkpoint_after_epoch: 5\n"
    "  epochs_between_checkpoints: 2\n"
    "\n"
    "metric:\n"
    "  au: 0.90\n";

/* Run sb_workload_from_config with stderr in a file; the log is returned
 * (caller frees). */
static char *
s_load_logged (sb_config_t *cfg, sb_workload_t *wl, int *rc, char *err, size_t err_size)
{
    FILE *f = tmpfile ();
    ck_assert_ptr_nonnull (f);
    int fd = fileno (f);
    fflush (stderr);
    int saved = dup (2);
    dup2 (fd, 2);
    *rc = sb_workload_from_config (cfg, wl, err, err_size);
    fflush (stderr);
    dup2 (saved, 2);
    close (saved);
    off_t size = lseek (fd, 0, SEEK_END);
    char *text = calloc (1, (size_t) size + 1);
    ck_assert_int_eq (pread (fd, text, (size_t) size, 0), size);
    fclose (f);
    return text;
}

START_TEST (test_dlio_yaml_with_mlpstorage_overrides)
{
    sb_config_t *cfg = sb_config_new ();
    char err[1024] = "";
    ck_assert_msg (sb_config_load_string (cfg, s_mlperf, "unet3d_h100.yaml", err, sizeof err) == 0, "%s", err);
    /* what mlpstorage appends to the dlio_benchmark command line */
    static const char *overrides[] = {
        "++workload.dataset.num_files_train=3500", "++workload.dataset.data_folder=/mnt/nfs/unet3d",
        "++workload.reader.read_threads=6", "++workload.workflow.generate_data=False",
        "++workload.workflow.train=True", "++workload.workflow.checkpoint=False",
        "++workload.train.epochs=2", "++workload.reader.batch_size=4",
        "++workload.dataset.num_subfolders_train=16", "++workload.train.computation_time=0.5",
        "++workload.reader.prefetch_size=3", "++workload.storage.storage_type=local_fs",
    };
    for (size_t i = 0; i < sizeof overrides / sizeof overrides[0]; i++)
        ck_assert_msg (sb_config_override (cfg, overrides[i], err, sizeof err) == 0, "%s: %s", overrides[i], err);
    sb_workload_t wl;
    int rc;
    char *log = s_load_logged (cfg, &wl, &rc, err, sizeof err);
    ck_assert_msg (rc == 0, "%s", err);
    ck_assert_uint_eq (wl.num_files_train, 3500);
    ck_assert_str_eq (wl.data_folder, "/mnt/nfs/unet3d");
    ck_assert_uint_eq (wl.read_threads, 6);
    ck_assert_uint_eq (wl.epochs, 2);
    ck_assert_uint_eq (wl.batch_size, 4);
    ck_assert_uint_eq (wl.num_subfolders_train, 16);
    ck_assert_uint_eq (wl.prefetch_size, 3);
    ck_assert (wl.computation_time == 0.5);
    /* record_length is not read by DLIO_local_changes: its default 65536, and a warning */
    ck_assert_uint_eq (wl.record_length_bytes, 65536);
    ck_assert_msg (strstr (log, "unet3d_h100.yaml:18: key 'dataset.record_length' not used, as DLIO_local_changes"
                           " does not read it (it reads dataset.record_length_bytes): dataset.record_length_bytes is"
                           " 65536 (DLIO's default)\n") != NULL, "%s", log);
    ck_assert_uint_eq (wl.record_length_bytes_stdev, 68341808);
    ck_assert_str_eq (wl.format, "npz");
    /* dataset.parquet: the row group size and the columns (size 1 when not given) */
    ck_assert_uint_eq (wl.parquet_row_group, 6144);
    ck_assert_str_eq (wl.parquet_columns, "feature_000:float16:1,feature_001:float64:1");
    /* the workflow section is read, not ignored */
    ck_assert_int_eq (wl.generate_data, 0);
    ck_assert_int_eq (wl.do_train, 1);
    ck_assert_int_eq (wl.do_checkpoint, 0);
    ck_assert_int_eq (wl.do_eval, 0);
    /* the keys shardbench does not act on: one line, each key once, a list
     * of mappings as one entry; no "unknown key" warning */
    ck_assert_msg (strstr (log, "unknown key") == NULL, "%s", log);
    const char *line = strstr (log, "DLIO keys this version ignores: ");
    ck_assert_msg (line != NULL, "%s", log);
    ck_assert_ptr_null (strstr (line + 1, "DLIO keys this version ignores: "));
    /* (model.type, workflow.*, reader.shuffle_size and the checkpoint schedule are acted on or accepted) */
    char expected[] = "DLIO keys this version ignores: model.model_size, dataset.record_length_bytes_resize\n";
    ck_assert_msg (strstr (line, expected) == line, "got: %s", line);
    free (log);
    sb_config_destroy (&cfg);
}
END_TEST

/* train.computation_time as a number, {mean, stdev} and {type, ...}; a
 * YAML given as text and the same keys given on the command line. */
static const struct {
    const char    *yaml;      /* train: section body */
    const char    *override;  /* or NULL */
    sb_dist_type_t type;
    double         a, b, mean;
} s_compute_ok[] = {
    { "  computation_time: 0.25\n", NULL, SB_DIST_CONSTANT, 0.25, 0, 0.25 },
    { "  computation_time:\n    mean: 0.4\n", NULL, SB_DIST_CONSTANT, 0.4, 0, 0.4 },
    { "  computation_time:\n    mean: 0.4\n    stdev: 0.05\n", NULL, SB_DIST_NORMAL, 0.4, 0.05, 0.4 },
    { "  computation_time: {type: normal, mean: 0.3, stdev: 0.01}\n", NULL, SB_DIST_NORMAL, 0.3, 0.01, 0.3 },
    { "  computation_time: {type: uniform, min: 0.1, max: 0.3}\n", NULL, SB_DIST_UNIFORM, 0.1, 0.3, 0.2 },
    { "  computation_time: {type: gamma, shape: 2, scale: 0.5}\n", NULL, SB_DIST_GAMMA, 2, 0.5, 1.0 },
    { "  computation_time: {type: exponential, scale: 0.7}\n", NULL, SB_DIST_EXPONENTIAL, 0.7, 0, 0.7 },
    { "  computation_time: {type: poisson, lam: 3}\n", NULL, SB_DIST_POISSON, 3, 0, 3 },
    /* the command line wins over the file, in either direction */
    { "  computation_time: {type: poisson, lam: 3}\n", "++workload.train.computation_time=0.5", SB_DIST_CONSTANT, 0.5,
      0, 0.5 },
    { "  computation_time: 0.5\n", "train.computation_time.mean=0.2", SB_DIST_CONSTANT, 0.2, 0, 0.2 },
    { "  computation_time: 0.5\n", "++workload.train.computation_time={type: gamma, shape: 2, scale: 0.5}",
      SB_DIST_GAMMA, 2, 0.5, 1.0 },
    { "  epochs: 1\n", "train.computation_time={mean:0.3,stdev:0.02}", SB_DIST_NORMAL, 0.3, 0.02, 0.3 },
};

START_TEST (test_compute_forms)
{
    size_t i = (size_t) _i;
    char text[512], err[1024] = "";
    snprintf (text, sizeof text, "train:\n%s", s_compute_ok[i].yaml);
    sb_config_t *cfg = sb_config_new ();
    ck_assert_msg (sb_config_load_string (cfg, text, "c.yaml", err, sizeof err) == 0, "%s", err);
    if (s_compute_ok[i].override)
        ck_assert_int_eq (sb_config_override (cfg, s_compute_ok[i].override, err, sizeof err), 0);
    sb_workload_t wl;
    ck_assert_msg (sb_workload_from_config (cfg, &wl, err, sizeof err) == 0, "case %zu: %s", i, err);
    ck_assert_int_eq (wl.compute.type, s_compute_ok[i].type);
    ck_assert (wl.compute.a == s_compute_ok[i].a);
    ck_assert (wl.compute.b == s_compute_ok[i].b);
    ck_assert_double_eq_tol (wl.computation_time, s_compute_ok[i].mean, 1e-12);
    sb_config_destroy (&cfg);
}
END_TEST

static const struct {
    const char *yaml;
    const char *err;
} s_compute_bad[] = {
    { "train:\n  computation_time: {type: lognormal, mean: 1}\n",
      "c.yaml:2: key 'train.computation_time.type': expected normal, uniform, gamma, exponential or poisson, got"
      " 'lognormal'" },
    { "train:\n  computation_time: {type: normal, mean: 1}\n",
      "c.yaml:2: key 'train.computation_time': normal needs 'stdev'" },
    { "train:\n  computation_time: {type: uniform, min: 0.1, max: 0.3, mean: 0.2}\n",
      "c.yaml:2: key 'train.computation_time.mean': not a parameter of uniform" },
    { "train:\n  computation_time: {type: uniform, min: 0.3, max: 0.1}\n",
      "c.yaml:2: key 'train.computation_time': uniform: needs 0 <= min <= max, got min 0.3, max 0.1" },
    { "train:\n  computation_time: {type: gamma, shape: 0, scale: 1}\n",
      "c.yaml:2: key 'train.computation_time': gamma: shape and scale must be positive, got shape 0, scale 1" },
    { "train:\n  computation_time:\n    mean: -1\n",
      "c.yaml:3: key 'train.computation_time.mean': expected a number in [0, 3600], got '-1'" },
    { "train:\n  computation_time:\n    stdev: 0.1\n",
      "c.yaml:3: key 'train.computation_time': a mapping without type needs 'mean'" },
    { "train:\n  computation_time:\n    mean: 1\n    sigma: 0.1\n",
      "c.yaml:4: key 'train.computation_time.sigma': not a parameter of train.computation_time (type, mean, stdev,"
      " min, max, shape, scale, lam)" },
    { "dataset:\n  record_length_bytes: -5.5\n",
      "c.yaml:2: key 'dataset.record_length_bytes': expected a non-negative integer, got '-5.5'" },
    { "dataset:\n  record_length_bytes: 0.2\n",
      "c.yaml:2: key 'dataset.record_length_bytes': 0.2 is out of range [1, 1000000000000]" },
};

START_TEST (test_override_mapping_errors)
{
    char err[1024] = "";
    sb_config_t *cfg = sb_config_new ();
    ck_assert_int_eq (sb_config_override (cfg, "train.computation_time={type: normal, mean}", err, sizeof err), -1);
    ck_assert_str_eq (err, "command line: 'train.computation_time={type: normal, mean}': expected {name: value, ...}"
                      " with plain values");
    ck_assert_int_eq (sb_config_override (cfg, "train.computation_time={a: {b: 1}}", err, sizeof err), -1);
    sb_config_destroy (&cfg);
}
END_TEST

START_TEST (test_compute_errors)
{
    size_t i = (size_t) _i;
    char err[1024] = "";
    sb_config_t *cfg = sb_config_new ();
    ck_assert_int_eq (sb_config_load_string (cfg, s_compute_bad[i].yaml, "c.yaml", err, sizeof err), 0);
    sb_workload_t wl;
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), -1);
    ck_assert_str_eq (err, s_compute_bad[i].err);
    sb_config_destroy (&cfg);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("presets");
    TCase *tc = tcase_create ("presets");
    tcase_add_loop_test (tc, test_preset_parameters, 0, (int) S_NEXPECTED);
    tcase_add_test (tc, test_preset_list);
    suite_add_tcase (s, tc);
    tc = tcase_create ("dlio");
    tcase_add_test (tc, test_dlio_yaml_with_mlpstorage_overrides);
    tcase_add_loop_test (tc, test_compute_forms, 0, (int) (sizeof s_compute_ok / sizeof s_compute_ok[0]));
    tcase_add_test (tc, test_override_mapping_errors);
    tcase_add_loop_test (tc, test_compute_errors, 0, (int) (sizeof s_compute_bad / sizeof s_compute_bad[0]));
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
