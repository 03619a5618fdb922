/* Config parsing, overrides and errors that name file, line and key. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "workload.h"

static const char *s_good =
    "model:\n"
    "  name: unet3d\n"
    "dataset:\n"
    "  data_folder: /data/unet3d\n"
    "  num_files_train: 168\n"
    "  num_samples_per_file: 1\n"
    "  record_length_bytes: 146600628\n"
    "  record_length_bytes_stdev: 68341808\n"
    "reader:\n"
    "  batch_size: 7\n"
    "  read_threads: 4\n"
    "  sample_shuffle: seed\n"
    "train:\n"
    "  epochs: 5\n"
    "  computation_time: 0.323\n"
    "metric:\n"
    "  au: 0.90\n"
    "storage:\n"
    "  storage_options:\n"
    "    endpoint_urls: [http://a:9000, http://b:9000]\n";

START_TEST (test_parse_good)
{
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    ck_assert_int_eq (sb_config_load_string (cfg, s_good, "good.yaml", err, sizeof err), 0);
    const sb_config_entry_t *e = sb_config_get (cfg, "reader.batch_size");
    ck_assert_ptr_nonnull (e);
    ck_assert_str_eq (e->value, "7");
    ck_assert_int_eq (e->line, 10);
    ck_assert_str_eq (e->origin, "good.yaml");
    e = sb_config_get (cfg, "storage.storage_options.endpoint_urls");
    ck_assert_ptr_nonnull (e);
    ck_assert_ptr_null (e->value);
    ck_assert_uint_eq (e->nitems, 2);
    ck_assert_str_eq (e->items[1], "http://b:9000");
    sb_workload_t wl;
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_str_eq (wl.model_name, "unet3d");
    ck_assert_uint_eq (wl.num_files_train, 168);
    ck_assert_uint_eq (wl.record_length_bytes, 146600628);
    ck_assert_uint_eq (wl.batch_size, 7);
    ck_assert_uint_eq (wl.read_threads, 4);
    ck_assert_int_eq (wl.sample_shuffle, SB_SHUFFLE_SEED);
    ck_assert_int_eq (wl.file_shuffle, SB_SHUFFLE_OFF);
    ck_assert_double_eq_tol (wl.computation_time, 0.323, 1e-12);
    ck_assert_double_eq_tol (wl.au, 0.90, 1e-12);
    ck_assert_uint_eq (wl.epochs, 5);
    ck_assert_int_eq (wl.sync, SB_SYNC_STEP);
    ck_assert_uint_eq (wl.prefetch_size, 2);     /* default */
    sb_config_destroy (&cfg);
    ck_assert_ptr_null (cfg);
}
END_TEST

START_TEST (test_overrides)
{
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    ck_assert_int_eq (sb_config_load_string (cfg, s_good, "good.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_override (cfg, "reader.batch_size=4", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_override (cfg, "++workload.dataset.num_files_train=13", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_override (cfg, "+workload.train.epochs=2", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_override (cfg, "train.computation_time=0", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_override (cfg, "storage.storage_options.endpoint_urls=[http://x:1,http://y:2,http://z:3]",
                                          err, sizeof err), 0);
    const sb_config_entry_t *e = sb_config_get (cfg, "storage.storage_options.endpoint_urls");
    ck_assert_uint_eq (e->nitems, 3);
    ck_assert_str_eq (e->items[2], "http://z:3");
    e = sb_config_get (cfg, "reader.batch_size");
    ck_assert_str_eq (e->origin, "command line");
    ck_assert_int_eq (e->line, 0);
    sb_workload_t wl;
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_uint_eq (wl.batch_size, 4);
    ck_assert_uint_eq (wl.num_files_train, 13);
    ck_assert_uint_eq (wl.epochs, 2);
    ck_assert_double_eq (wl.computation_time, 0);
    ck_assert_int_eq (sb_config_override (cfg, "noequals", err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "KEY=VALUE"));
    ck_assert_int_eq (sb_config_override (cfg, "bad..key=1", err, sizeof err), -1);
    ck_assert_int_eq (sb_config_override (cfg, "=1", err, sizeof err), -1);

    /* the effective YAML parses back to the same values */
    char *yaml = sb_config_to_yaml (cfg);
    ck_assert_ptr_nonnull (yaml);
    sb_config_t *again = sb_config_new ();
    ck_assert_int_eq (sb_config_load_string (again, yaml, "effective", err, sizeof err), 0);
    ck_assert_uint_eq (sb_config_count (again), sb_config_count (cfg));
    for (size_t i = 0; i < sb_config_count (cfg); i++) {
        const sb_config_entry_t *a = sb_config_at (cfg, i);
        const sb_config_entry_t *b = sb_config_get (again, a->key);
        ck_assert_msg (b != NULL, "key %s lost", a->key);
        if (a->value)
            ck_assert_str_eq (a->value, b->value);
        else
            ck_assert_uint_eq (a->nitems, b->nitems);
    }
    free (yaml);
    sb_config_destroy (&again);
    sb_config_destroy (&cfg);
}
END_TEST

/* Each bad input and the text its error must carry. */
static const struct {
    const char *yaml;
    const char *expect;
} s_bad[] = {
    { "dataset:\n  num_files_train: [1, 2\n", "bad.yaml:3: malformed YAML" },
    { "dataset:\n  num_files_train: abc\n", "bad.yaml:2: key 'dataset.num_files_train': expected a non-negative integer, got 'abc'" },
    { "dataset:\n  num_files_train: -5\n", "bad.yaml:2: key 'dataset.num_files_train'" },
    { "dataset:\n  num_files_train: 0\n", "bad.yaml:2: key 'dataset.num_files_train': 0 is out of range" },
    { "reader:\n  batch_size: 0\n", "bad.yaml:2: key 'reader.batch_size': 0 is out of range" },
    { "\n\ntrain:\n  computation_time: fast\n", "bad.yaml:4: key 'train.computation_time': expected a number" },
    { "train:\n  computation_time: -1\n", "bad.yaml:2: key 'train.computation_time': -1 is out of range" },
    { "reader:\n  sample_shuffle: sometimes\n", "bad.yaml:2: key 'reader.sample_shuffle': expected off, seed or random" },
    { "train:\n  sync: never\n", "bad.yaml:2: key 'train.sync': expected step or epoch" },
    { "reader:\n  verify: maybe\n", "bad.yaml:2: key 'reader.verify': expected true or false" },
    { "metric:\n  au: 1.5\n", "bad.yaml:2: key 'metric.au': 1.5 is out of range" },
    { "dataset:\n  batch_size:\n    - 1\n", "bad.yaml:3: key 'dataset.batch_size'" },
    { "reader:\n  batch_size: [1, 2]\n", "bad.yaml:2: key 'reader.batch_size': expected a single value, got a list" },
    { "- a\n- b\n", "bad.yaml:1: a workload is a mapping" },
    { "dataset:\n  data_folder: ''\n", "bad.yaml:2: key 'dataset.data_folder': value is empty" },
    { "dataset:\n  format: a/b\n", "bad.yaml:2: key 'dataset.format'" },
    { "shardbench:\n  heartbeat_interval_s: 5\n  heartbeat_timeout_s: 2\n", "bad.yaml:3: key 'shardbench.heartbeat_timeout_s'" },
};

START_TEST (test_errors)
{
    /* a list where a scalar is expected is a workload error, the rest parse errors */
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    int rc = sb_config_load_string (cfg, s_bad[_i].yaml, "bad.yaml", err, sizeof err);
    if (rc == 0) {
        sb_workload_t wl;
        rc = sb_workload_from_config (cfg, &wl, err, sizeof err);
    }
    if (strstr (s_bad[_i].expect, "dataset.batch_size")) {
        /* an unknown key is only a warning: the workload is valid */
        ck_assert_int_eq (rc, 0);
    }
    else {
        ck_assert_int_eq (rc, -1);
        ck_assert_msg (strstr (err, s_bad[_i].expect) != NULL, "case %d: got '%s', expected '%s'", _i, err,
                       s_bad[_i].expect);
    }
    sb_config_destroy (&cfg);
}
END_TEST

START_TEST (test_override_error_names_command_line)
{
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    ck_assert_int_eq (sb_config_override (cfg, "reader.batch_size=many", err, sizeof err), 0);
    sb_workload_t wl;
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), -1);
    ck_assert_str_eq (err, "command line: key 'reader.batch_size': expected a non-negative integer, got 'many'");
    sb_config_destroy (&cfg);
}
END_TEST

START_TEST (test_file)
{
    char path[] = "/tmp/sbcfgXXXXXX";
    int fd = mkstemp (path);
    ck_assert_int_ge (fd, 0);
    const char *text = "train:\n  epochs: 3\n  seed: x\n";
    ck_assert_int_eq (write (fd, text, strlen (text)), (ssize_t) strlen (text));
    close (fd);
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "", expect[600];
    ck_assert_int_eq (sb_config_load_file (cfg, path, err, sizeof err), 0);
    sb_workload_t wl;
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), -1);
    snprintf (expect, sizeof expect, "%s:3: key 'train.seed'", path);
    ck_assert_ptr_nonnull (strstr (err, expect));
    unlink (path);
    ck_assert_int_eq (sb_config_load_file (cfg, path, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "cannot open workload file"));
    sb_config_destroy (&cfg);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("config");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_parse_good);
    tcase_add_test (tc, test_overrides);
    tcase_add_loop_test (tc, test_errors, 0, (int) (sizeof s_bad / sizeof s_bad[0]));
    tcase_add_test (tc, test_override_error_names_command_line);
    tcase_add_test (tc, test_file);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
