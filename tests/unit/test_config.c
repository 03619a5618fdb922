/* Config parsing, overrides and errors that name file, line and key. */
#include <check.h>
#include "check_main.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

/* Bad input, each with the whole message it must produce: origin, line,
 * key and what is wrong. Malformed YAML names the line where
 * libyaml stopped and where the broken construct began. */
static const struct {
    const char *yaml;
    const char *expect;
} s_exact[] = {
    /* malformed YAML */
    { "dataset:\n  num_files_train: [1, 2\n",
      "bad.yaml:3: malformed YAML: did not find expected ',' or ']' while parsing a flow sequence started at line 2" },
    { "reader:\n\tbatch_size: 4\n",
      "bad.yaml:2: malformed YAML: found character that cannot start any token while scanning for the next token "
      "started at line 2 (indent YAML with spaces, not tabs)" },
    { "reader:\n  batch_size: 4\n   read_threads: 2\n",
      "bad.yaml:3: malformed YAML: mapping values are not allowed in this context" },
    { "reader: {batch_size: 4\n",
      "bad.yaml:2: malformed YAML: did not find expected ',' or '}' while parsing a flow mapping started at line 1" },
    { "model:\n  name: \"unet3d\n",
      "bad.yaml:3: malformed YAML: found unexpected end of stream while scanning a quoted scalar started at line 2" },
    { "reader:\n  batch_size: 4\n---\nreader:\n  batch_size: 5\n",
      "bad.yaml:4: a workload file holds one YAML document, a second one starts here" },
    { "reader:\n  batch_size: 4\nreader:\n  read_threads: 2\n", "bad.yaml:3: key 'reader' appears twice (first at line 2)" },
    { "reader:\n  batch_size: 4\n  batch_size: 8\n",
      "bad.yaml:3: key 'reader.batch_size' appears twice (first at line 2)" },
    { "? [a, b]\n: 1\n", "bad.yaml:1: mapping keys must be plain names" },
    /* wrong types */
    { "reader:\n  batch_size:\n    value: 4\n",
      "bad.yaml:3: key 'reader.batch_size': expected a single value, got a mapping (with 'value')" },
    { "reader: 4\n",
      "bad.yaml:1: key 'reader': expected a section of keys (such as 'reader.batch_size'), got a single value" },
    { "storage: [s3]\n",
      "bad.yaml:1: key 'storage': expected a section of keys (such as 'storage.storage_type'), got a list" },
    { "reader:\n  batch_size: true\n", "bad.yaml:2: key 'reader.batch_size': expected a non-negative integer, got 'true'" },
    { "reader:\n  batch_size: 4.5\n", "bad.yaml:2: key 'reader.batch_size': expected a non-negative integer, got '4.5'" },
    { "reader:\n  batch_size:\n", "bad.yaml:2: key 'reader.batch_size': expected a non-negative integer, got no value" },
    { "dataset:\n  num_files_train: 1e3\n",
      "bad.yaml:2: key 'dataset.num_files_train': expected a non-negative integer, got '1e3'" },
    { "train:\n  computation_time: nan\n", "bad.yaml:2: key 'train.computation_time': expected a number, got 'nan'" },
    { "storage:\n  storage_type: hdfs\n",
      "bad.yaml:2: key 'storage.storage_type': expected local_fs, parallel_fs, direct_fs, s3, s3dlio, object or synthetic, got 'hdfs'" },
    { "storage:\n  storage_options:\n    endpoint_urls: [[a]]\n",
      "bad.yaml:3: key 'storage.storage_options.endpoint_urls': list items must be plain values" },
    /* negative, zero and too large sizes */
    { "dataset:\n  record_length_bytes: -1\n",
      "bad.yaml:2: key 'dataset.record_length_bytes': expected a non-negative integer, got '-1'" },
    { "dataset:\n  record_length_bytes: 0\n", "bad.yaml:2: key 'dataset.record_length_bytes': 0 is out of range [1, 1000000000000]" },
    { "dataset:\n  num_samples_per_file: 0\n",
      "bad.yaml:2: key 'dataset.num_samples_per_file': 0 is out of range [1, 1000000000]" },
    { "dataset:\n  num_files_train: 99999999999999999999\n",
      "bad.yaml:2: key 'dataset.num_files_train': 99999999999999999999 is out of range [1, 18000000000000000000]" },
    { "train:\n  epochs: -2\n", "bad.yaml:2: key 'train.epochs': expected a non-negative integer, got '-2'" },
    { "shardbench:\n  io_buffer_bytes: 0\n", "bad.yaml:2: key 'shardbench.io_buffer_bytes': 0 is out of range [4096, 1073741824]" },
    { "shardbench:\n  keys_page: 0\n", "bad.yaml:2: key 'shardbench.keys_page': 0 is out of range [1, 65536]" },
    { "storage:\n  storage_options:\n    multipart_part_bytes: 0\n",
      "bad.yaml:3: key 'storage.storage_options.multipart_part_bytes': 0 is out of range [5242880, 5368709120]" },
    { "shardbench:\n  heartbeat_interval_s: 0\n",
      "bad.yaml:2: key 'shardbench.heartbeat_interval_s': 0 is out of range [0.05, 60]" },
    { "shardbench:\n  barrier_fanout: 1\n", "bad.yaml:2: key 'shardbench.barrier_fanout': 1 is out of range [2, 65536]" },
    { "shardbench:\n  barrier_fanout: 65537\n",
      "bad.yaml:2: key 'shardbench.barrier_fanout': 65537 is out of range [2, 65536]" },
};

START_TEST (test_errors_exact)
{
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    int rc = sb_config_load_string (cfg, s_exact[_i].yaml, "bad.yaml", err, sizeof err);
    if (rc == 0) {
        sb_workload_t wl;
        rc = sb_workload_from_config (cfg, &wl, err, sizeof err);
    }
    ck_assert_msg (rc == -1, "case %d accepted", _i);
    ck_assert_str_eq (err, s_exact[_i].expect);
    sb_config_destroy (&cfg);
}
END_TEST

START_TEST (test_override_then_file_is_no_duplicate)
{
    /* a key repeated within one text is an error; a later text or an
     * override replacing it is how presets and overrides work */
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    ck_assert_int_eq (sb_config_load_string (cfg, "reader:\n  batch_size: 4\n", "a.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_load_string (cfg, "reader:\n  batch_size: 8\n", "b.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_override (cfg, "reader.batch_size=2", err, sizeof err), 0);
    ck_assert_str_eq (sb_config_get (cfg, "reader.batch_size")->value, "2");
    sb_config_destroy (&cfg);
}
END_TEST

START_TEST (test_batch_size_origin)
{
    /* the coordinator names this origin when a batch is larger than a shard */
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    sb_workload_t wl;
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_str_eq (wl.batch_size_origin, "default");
    ck_assert_int_eq (sb_config_load_string (cfg, "\nreader:\n  batch_size: 4\n", "w.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_str_eq (wl.batch_size_origin, "w.yaml:3");
    ck_assert_int_eq (sb_config_override (cfg, "reader.batch_size=2", err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_str_eq (wl.batch_size_origin, "command line");
    sb_config_destroy (&cfg);
}
END_TEST

START_TEST (test_alias_bomb_bounded)
{
    /* aliases expand: 8 levels of 8 references would be 8^8 keys; the
     * line is that of the key inside the anchored mapping being expanded */
    char yaml[4096];
    int n = snprintf (yaml, sizeof yaml, "a0: &a0 {x: 1, y: 2, z: 3, w: 4, v: 5, u: 6, t: 7, s: 8}\n");
    for (int level = 1; level <= 8; level++)
        n += snprintf (yaml + n, sizeof yaml - (size_t) n, "a%d: &a%d {b: *a%d, c: *a%d, d: *a%d, e: *a%d, f: *a%d, "
                       "g: *a%d, h: *a%d, i: *a%d}\n", level, level, level - 1, level - 1, level - 1, level - 1,
                       level - 1, level - 1, level - 1, level - 1);
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    ck_assert_int_eq (sb_config_load_string (cfg, yaml, "bomb.yaml", err, sizeof err), -1);
    ck_assert_str_eq (err, "bomb.yaml:2: more than 4096 keys (aliases expanding?)");
    ck_assert_uint_eq (sb_config_count (cfg), 4096);
    sb_config_destroy (&cfg);
}
END_TEST

START_TEST (test_buffer)
{
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    /* not NUL-terminated: only the given bytes are parsed */
    const char text[] = { 'r', 'e', 'a', 'd', 'e', 'r', ':', ' ', '{', 'b', 'a', 't', 'c', 'h', '_', 's', 'i', 'z',
                          'e', ':', ' ', '3', '}', 'X' };
    ck_assert_int_eq (sb_config_load_buffer (cfg, text, sizeof text - 1, "buf", err, sizeof err), 0);
    ck_assert_str_eq (sb_config_get (cfg, "reader.batch_size")->value, "3");
    ck_assert_int_eq (sb_config_load_buffer (cfg, "a: 1\0b: 2", 10, "buf", err, sizeof err), -1);
    ck_assert_str_eq (err, "buf: not a text file (NUL byte)");
    sb_config_destroy (&cfg);
}
END_TEST

/* Fuzzing finding (docs/FUZZING.md, config 1): keys were written to the
 * effective YAML unquoted, so a key holding a line break, ':' or '#' (a
 * quoted YAML key) produced a runs.config that did not parse. Keys and
 * values with any character now read back unchanged. */
START_TEST (test_effective_yaml_quotes_keys)
{
    const char *yaml =
        "\"odd\\nkey: #\": 1\n"
        "\"tab\\there\": \"line\\nbreak\\r \\x01 \\N \\L \\\" end \"\n"
        "\" lead\": [\"a:b\", \"-c\", \"\"]\n"
        "dataset:\n  \"é\": \"ü\"\n";
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    ck_assert_int_eq (sb_config_load_string (cfg, yaml, "odd.yaml", err, sizeof err), 0);
    ck_assert_uint_eq (sb_config_count (cfg), 4);
    ck_assert_str_eq (sb_config_get (cfg, "tab\there")->value, "line\nbreak\r \x01 \xc2\x85 \xe2\x80\xa8 \" end ");
    char *out = sb_config_to_yaml (cfg);
    ck_assert_ptr_nonnull (out);
    sb_config_t *again = sb_config_new ();
    ck_assert_msg (sb_config_load_string (again, out, "effective", err, sizeof err) == 0, "%s in:\n%s", err, out);
    ck_assert_uint_eq (sb_config_count (again), 4);
    for (size_t i = 0; i < sb_config_count (cfg); i++) {
        const sb_config_entry_t *a = sb_config_at (cfg, i);
        const sb_config_entry_t *b = sb_config_get (again, a->key);
        ck_assert_msg (b != NULL, "key '%s' lost in:\n%s", a->key, out);
        if (a->value)
            ck_assert_str_eq (b->value, a->value);
        else {
            ck_assert_uint_eq (b->nitems, a->nitems);
            for (size_t j = 0; j < a->nitems; j++)
                ck_assert_str_eq (b->items[j], a->items[j]);
        }
    }
    free (out);
    sb_config_destroy (&again);
    sb_config_destroy (&cfg);
}
END_TEST

/* libyaml's scanner is quadratic in the depth of flow
 * collections (a 400 KB "[[[[..." took 95 s). The depth is bounded on the
 * event stream, before the document is composed. */
static double
s_now (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

/* prefix, `open` n times, `mid`, `close` n times. Caller frees. */
static char *
s_nested (const char *prefix, const char *open, size_t n, const char *mid, const char *close)
{
    size_t size = strlen (prefix) + n * (strlen (open) + strlen (close)) + strlen (mid) + 2;
    char *s = malloc (size), *p = s;
    ck_assert_ptr_nonnull (s);
    p = stpcpy (p, prefix);
    for (size_t i = 0; i < n; i++)
        p = stpcpy (p, open);
    p = stpcpy (p, mid);
    for (size_t i = 0; i < n; i++)
        p = stpcpy (p, close);
    stpcpy (p, "\n");
    return s;
}

/* "origin:line: key 'FIRST+SEG*n' (shortened to 117 bytes and "..."
 * past 120): WHAT" into buf. */
static const char *
s_expect (char *buf, size_t size, const char *origin, int line, const char *first, const char *seg, int n,
          const char *what)
{
    char path[1024];
    int w = snprintf (path, sizeof path, "%s", first);
    for (int i = 0; i < n; i++)
        w += snprintf (path + w, sizeof path - (size_t) w, "%s", seg);
    if (w > 120)
        strcpy (path + 117, "...");
    snprintf (buf, size, "%s:%d: key '%s': %s", origin, line, path, what);
    return buf;
}

static const char *
s_load_err (const char *yaml, const char *origin, double *seconds)
{
    static char err[1024];
    err[0] = '\0';
    sb_config_t *cfg = sb_config_new ();
    double t0 = s_now ();
    int rc = sb_config_load_buffer (cfg, yaml, strlen (yaml), origin, err, sizeof err);
    if (seconds)
        *seconds = s_now () - t0;
    sb_config_destroy (&cfg);
    return rc == 0 ? "loaded" : err;
}

START_TEST (test_deep_nesting_refused)
{
    /* 200,000 levels in 400 KB: refused at level 65, fast; the message
     * names file, line, the key path (shortened) and the limit */
    char *flow = s_nested ("a: ", "[", 200000, "", "]");
    ck_assert_uint_ge (strlen (flow), 400000);
    double seconds = 0;
    char expect[1024];
    const char *deeper = "YAML nested deeper than 64 levels (the limit)";
    ck_assert_str_eq (s_load_err (flow, "deep.yaml", &seconds),
                      s_expect (expect, sizeof expect, "deep.yaml", 1, "a", ".0", 63, deeper));
    fprintf (stderr, "test_deep_nesting_refused: 400 KB of '[' refused in %.4f s\n", seconds);
    ck_assert_msg (seconds < 5.0, "took %.3f s", seconds);
    free (flow);
    /* flow mappings, one per line: the line of the 65th level */
    char *map = s_nested ("", "{k:\n", 100000, "1", "}");
    ck_assert_str_eq (s_load_err (map, "map.yaml", &seconds),
                      s_expect (expect, sizeof expect, "map.yaml", 65, "k", ".k", 63, deeper));
    ck_assert_msg (seconds < 5.0, "took %.3f s", seconds);
    free (map);
    /* block style: "- - - - x" nests a sequence per two bytes */
    char *block = s_nested ("", "- ", 200000, "x", "");
    ck_assert_str_eq (s_load_err (block, "block.yaml", &seconds),
                      s_expect (expect, sizeof expect, "block.yaml", 1, "0", ".0", 63, deeper));
    ck_assert_msg (seconds < 5.0, "took %.3f s", seconds);
    free (block);
    /* 64 levels (the root mapping and 63 lists) pass the bound and fail
     * later, as any list of lists does; 65 do not */
    char *edge = s_nested ("a: ", "[", 63, "", "]");
    ck_assert_str_eq (s_load_err (edge, "edge.yaml", NULL), "edge.yaml:1: key 'a': list items must be plain values");
    free (edge);
    edge = s_nested ("a: ", "[", 64, "", "]");
    ck_assert_ptr_nonnull (strstr (s_load_err (edge, "edge.yaml", NULL), "YAML nested deeper than 64 levels"));
    free (edge);
    /* a normal workload still loads */
    ck_assert_str_eq (s_load_err (s_good, "good.yaml", NULL), "loaded");
}
END_TEST

START_TEST (test_anchor_alias_limits)
{
    /* 20,000 anchors and aliases made libyaml's composer take 2 s
     * (quadratic alias lookup); a workload needs a handful */
    size_t size = 64 + 20000 * 24;
    char *yaml = malloc (size), *p = yaml;
    ck_assert_ptr_nonnull (yaml);
    p += sprintf (p, "a: [");
    for (int i = 0; i < 20000; i++)
        p += sprintf (p, "%s&a%d x", i ? ", " : "", i);
    p += sprintf (p, "]\nb: [");
    for (int i = 0; i < 20000; i++)
        p += sprintf (p, "%s*a19999", i ? ", " : "");
    sprintf (p, "]\n");
    double seconds = 0;
    ck_assert_str_eq (s_load_err (yaml, "anchors.yaml", &seconds),
                      "anchors.yaml:1: key 'a.256': more than 256 anchors (&name) in one file (the limit)");
    ck_assert_msg (seconds < 5.0, "took %.3f s", seconds);
    /* 1,025 aliases of one anchor */
    p = yaml + sprintf (yaml, "a: &x 1\nb: [");
    for (int i = 0; i < 1025; i++)
        p += sprintf (p, "%s*x", i ? ", " : "");
    sprintf (p, "]\n");
    ck_assert_str_eq (s_load_err (yaml, "aliases.yaml", NULL),
                      "aliases.yaml:2: key 'b.1024': more than 1024 aliases (*name) in one file (the limit)");
    /* a 129-byte anchor name */
    p = yaml + sprintf (yaml, "reader:\n  batch_size: &");
    memset (p, 'n', 129);
    strcpy (p + 129, " 4\n");
    ck_assert_str_eq (s_load_err (yaml, "long.yaml", NULL),
                      "long.yaml:2: key 'reader.batch_size': anchor or alias name longer than 128 bytes (the limit)");
    free (yaml);
}
END_TEST

START_TEST (test_alias_expansion_bounded)
{
    /* empty mappings set no key, so the key bound alone did not stop
     * 2^30 walks of {x: *a, y: *a} levels */
    char yaml[4096];
    int n = snprintf (yaml, sizeof yaml, "a0: &a0 {x: {}, y: {}}\n");
    for (int level = 1; level < 30; level++)
        n += snprintf (yaml + n, sizeof yaml - (size_t) n, "a%d: &a%d {x: *a%d, y: *a%d}\n", level, level,
                       level - 1, level - 1);
    double seconds = 0;
    ck_assert_str_eq (s_load_err (yaml, "bomb.yaml", &seconds),
                      "bomb.yaml:1: key 'a10.x.y.x.y.x.y.x.y.x.y.x': more than 16384 nodes after expanding aliases"
                      " and merge keys (the limit)");
    ck_assert_msg (seconds < 5.0, "took %.3f s", seconds);
    /* merge keys naming the same mapping twice, 40 levels: one key, but
     * 2^40 merges */
    n = snprintf (yaml, sizeof yaml, "m0: &m0 {x: 1}\n");
    for (int level = 1; level < 40; level++)
        n += snprintf (yaml + n, sizeof yaml - (size_t) n, "m%d: &m%d {<<: [*m%d, *m%d]}\n", level, level,
                       level - 1, level - 1);
    ck_assert_str_eq (s_load_err (yaml, "merges.yaml", &seconds),
                      "merges.yaml:1: key 'm12': more than 16384 nodes after expanding aliases and merge keys"
                      " (the limit)");
    ck_assert_msg (seconds < 5.0, "took %.3f s", seconds);
    /* a mapping holding itself through an alias, directly or as a merge */
    char expect[1024];
    ck_assert_str_eq (s_load_err ("a: &a {b: *a}\n", "cycle.yaml", NULL),
                      s_expect (expect, sizeof expect, "cycle.yaml", 1, "a", ".b", 64,
                                "nested deeper than 64 levels through aliases (the limit)"));
    ck_assert_str_eq (s_load_err ("x: 1\na: &a {<<: *a, b: 2}\n", "cycle.yaml", NULL),
                      "cycle.yaml:2: key 'a.<<': merge keys nested deeper than 64 levels (a mapping merging itself?)");
}
END_TEST

/* YAML merge keys were not applied ("<<" became a key). */
START_TEST (test_merge_keys)
{
    const char *yaml =
        "defaults: &defaults\n"         /* 1 */
        "  batch_size: 4\n"
        "  read_threads: 2\n"
        "io: &io\n"
        "  read_threads: 8\n"           /* 5 */
        "  prefetch_size: 3\n"
        "  computation_time: 0.5\n"
        "reader:\n"
        "  <<: [*defaults, *io]\n"
        "  batch_size: 16\n"            /* 10: explicit key wins, though after the merge */
        "train:\n"
        "  <<: &t {epochs: 7, computation_time: 0.25}\n"
        "dataset:\n"
        "  <<: *io\n"
        "  \"<<\": quoted\n"            /* 15: a quoted "<<" is a plain key */
        "metric:\n"
        "  <<: {<<: {au: 0.75}, x: 1}\n";  /* merges within merges */
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    ck_assert_msg (sb_config_load_string (cfg, yaml, "merge.yaml", err, sizeof err) == 0, "%s", err);
    const sb_config_entry_t *e = sb_config_get (cfg, "reader.batch_size");
    ck_assert_str_eq (e->value, "16");
    ck_assert_int_eq (e->line, 10);
    e = sb_config_get (cfg, "reader.read_threads");     /* the earlier mapping of the list wins */
    ck_assert_str_eq (e->value, "2");
    ck_assert_int_eq (e->line, 3);
    ck_assert_str_eq (sb_config_get (cfg, "reader.prefetch_size")->value, "3");
    ck_assert_str_eq (sb_config_get (cfg, "reader.computation_time")->value, "0.5");
    ck_assert_ptr_null (sb_config_get (cfg, "reader.<<"));
    ck_assert_str_eq (sb_config_get (cfg, "train.epochs")->value, "7");
    ck_assert_str_eq (sb_config_get (cfg, "train.computation_time")->value, "0.25");
    ck_assert_str_eq (sb_config_get (cfg, "dataset.read_threads")->value, "8");
    ck_assert_str_eq (sb_config_get (cfg, "dataset.<<")->value, "quoted");
    ck_assert_str_eq (sb_config_get (cfg, "metric.au")->value, "0.75");
    ck_assert_str_eq (sb_config_get (cfg, "metric.x")->value, "1");
    /* the effective YAML reads back the same (a "<<" key stays quoted) */
    char *out = sb_config_to_yaml (cfg);
    ck_assert_ptr_nonnull (out);
    sb_config_t *again = sb_config_new ();
    ck_assert_msg (sb_config_load_string (again, out, "effective", err, sizeof err) == 0, "%s in:\n%s", err, out);
    ck_assert_uint_eq (sb_config_count (again), sb_config_count (cfg));
    ck_assert_str_eq (sb_config_get (again, "dataset.<<")->value, "quoted");
    ck_assert_str_eq (sb_config_get (again, "reader.read_threads")->value, "2");
    free (out);
    sb_config_destroy (&again);
    /* the typed workload sees the merged values */
    sb_workload_t wl;
    ck_assert_msg (sb_workload_from_config (cfg, &wl, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq (wl.batch_size, 16);
    ck_assert_uint_eq (wl.read_threads, 2);
    ck_assert_uint_eq (wl.prefetch_size, 3);
    ck_assert_uint_eq (wl.epochs, 7);
    ck_assert_double_eq_tol (wl.computation_time, 0.25, 1e-12);
    ck_assert_double_eq_tol (wl.au, 0.75, 1e-12);
    sb_config_destroy (&cfg);
    /* a merge key names a mapping: file, line and key in the error */
    ck_assert_str_eq (s_load_err ("reader:\n  <<: 4\n", "m.yaml", NULL),
                      "m.yaml:2: key 'reader.<<': a merge key takes a mapping or a list of mappings"
                      " (an alias like *defaults)");
    ck_assert_str_eq (s_load_err ("a: &a {x: 1}\nreader:\n  <<: [*a,\n    [1]]\n", "m.yaml", NULL),
                      "m.yaml:4: key 'reader.<<': a merge key takes a mapping or a list of mappings"
                      " (an alias like *defaults)");
    /* a key written twice is still an error, a merged one is not */
    ck_assert_str_eq (s_load_err ("a: &a {x: 1}\nb:\n  <<: *a\n  y: 1\n  y: 2\n", "m.yaml", NULL),
                      "m.yaml:5: key 'b.y' appears twice (first at line 4)");
}
END_TEST

/* reports show model.name; DLIO writes it `model: {name: X}`
 * or, in older files, `model: X`. */
START_TEST (test_model_name)
{
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "", name[128];
    sb_workload_t wl;
    ck_assert_int_eq (sb_config_load_string (cfg, "model: resnet50\n", "old.yaml", err, sizeof err), 0);
    const sb_config_entry_t *e = sb_config_get (cfg, "model.name");
    ck_assert_str_eq (e->value, "resnet50");
    ck_assert_int_eq (e->line, 1);
    ck_assert_ptr_null (sb_config_get (cfg, "model"));
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_str_eq (wl.model_name, "resnet50");
    ck_assert_int_eq (sb_config_override (cfg, "++workload.model=unet3d", err, sizeof err), 0);
    ck_assert_str_eq (sb_config_get (cfg, "model.name")->value, "unet3d");
    char *yaml = sb_config_to_yaml (cfg);
    ck_assert_str_eq (yaml, "model:\n  name: unet3d\n");
    /* what the reports read back from runs.config */
    ck_assert_int_eq (sb_workload_model_name (yaml, name, sizeof name), 0);
    ck_assert_str_eq (name, "unet3d");
    free (yaml);
    ck_assert_int_eq (sb_workload_model_name ("reader:\n  batch_size: 4\n", name, sizeof name), 0);
    ck_assert_str_eq (name, "custom");
    ck_assert_int_eq (sb_workload_model_name ("model: {name: cosmoflow, type: cnn}\n", name, sizeof name), 0);
    ck_assert_str_eq (name, "cosmoflow");
    ck_assert_int_eq (sb_workload_model_name (NULL, name, sizeof name), -1);
    ck_assert_str_eq (name, "custom");
    /* both spellings in one file: a key written twice */
    ck_assert_str_eq (s_load_err ("model: x\nmodel:\n  name: y\n", "two.yaml", NULL),
                      "two.yaml:2: key 'model' appears twice (first at line 1)");
    sb_config_destroy (&cfg);
}
END_TEST

static int
s_secret_word (const char *key)
{
    return strstr (key, "secret") != NULL || strstr (key, "SECRET") != NULL;
}

static int
s_keep_region (const char *key)
{
    return strcmp (key, "s.region") == 0;
}

/* OmegaConf interpolation on the flat keys, and copies */
START_TEST (test_interpolate)
{
    sb_config_t *cfg = sb_config_new ();
    char err[512] = "";
    ck_assert_int_eq (sb_config_load_string (cfg, "s:\n  root: /r\n  region: ${AWS_REGION}\n  secret: x\n"
                                             "d:\n  list: [\"${s.root}/a\", b]\n  lit: \\${s.root}\n"
                                             "  path: ${s.root}/${.lit}\n", "c.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_override (cfg, "s.root=/o", err, sizeof err), 0);
    ck_assert_msg (sb_config_interpolate (cfg, s_secret_word, s_keep_region, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq (sb_config_get (cfg, "d.list")->items[0], "/o/a");     /* the override, as Hydra */
    ck_assert_str_eq (sb_config_get (cfg, "d.list")->items[1], "b");
    ck_assert_str_eq (sb_config_get (cfg, "d.lit")->value, "${s.root}");
    ck_assert_str_eq (sb_config_get (cfg, "d.path")->value, "/o/${s.root}");    /* a literal stays literal */
    ck_assert_str_eq (sb_config_get (cfg, "s.region")->value, "${AWS_REGION}");
    ck_assert_int_eq (sb_config_get (cfg, "d.path")->line, 8);
    /* a second pass changes nothing; a later override is resolved then */
    ck_assert_int_eq (sb_config_interpolate (cfg, s_secret_word, s_keep_region, err, sizeof err), 0);
    ck_assert_str_eq (sb_config_get (cfg, "d.lit")->value, "${s.root}");
    ck_assert_int_eq (sb_config_override (cfg, "d.more=${d.path}!", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_interpolate (cfg, s_secret_word, s_keep_region, err, sizeof err), 0);
    ck_assert_str_eq (sb_config_get (cfg, "d.more")->value, "/o/${s.root}!");
    /* a copy keeps the origin and line */
    ck_assert_int_eq (sb_config_copy (cfg, "s.root", "t.root"), 0);
    ck_assert_str_eq (sb_config_get (cfg, "t.root")->value, "/o");
    ck_assert_str_eq (sb_config_get (cfg, "t.root")->origin, "command line");
    ck_assert_int_eq (sb_config_copy (cfg, "d.list", "t.list"), 0);
    ck_assert_uint_eq (sb_config_get (cfg, "t.list")->nitems, 2);
    ck_assert_int_eq (sb_config_copy (cfg, "no.such", "t.x"), -1);
    /* errors leave every value as it was */
    ck_assert_int_eq (sb_config_override (cfg, "d.bad=${s.secret}", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_override (cfg, "d.other=${s.root}", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_interpolate (cfg, s_secret_word, s_keep_region, err, sizeof err), -1);
    ck_assert_str_eq (err, "command line: key 'd.bad': '${s.secret}' would copy a credential into a key that is recorded"
                           " and shown");
    ck_assert_str_eq (sb_config_get (cfg, "d.other")->value, "${s.root}");
    /* ${NAME} is kept only where the caller says so */
    ck_assert_int_eq (sb_config_override (cfg, "d.bad=${AWS_REGION}", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_interpolate (cfg, s_secret_word, s_keep_region, err, sizeof err), -1);
    ck_assert_str_eq (err, "command line: key 'd.bad': '${AWS_REGION}' refers to no key of the configuration (an"
                           " environment variable is ${oc.env:NAME})");
    sb_config_destroy (&cfg);
}
END_TEST

/* A typo in shardbench's own KEY=VALUE is an error naming the nearest keys;
 * Hydra's ++workload.KEY=VALUE and a workload file only warn, as DLIO
 * takes keys it does not know. */
START_TEST (test_unknown_key_command_line)
{
    static const struct { const char *arg, *expect; } cases[] = {
        { "train.epoch=1", "command line: unknown key 'train.epoch': did you mean 'train.epochs'? (`shardbench run"
          " --help` lists the keys; ++workload.train.epoch=VALUE adds a key shardbench does not know, with a"
          " warning, as DLIO's Hydra does)" },
        { "workload.train.epoch=1", "command line: unknown key 'train.epoch': did you mean 'train.epochs'?" },
        { "train.batch_size=4", "command line: unknown key 'train.batch_size': did you mean 'reader.batch_size'?" },
        { "reader.read_thread=2", "command line: unknown key 'reader.read_thread': did you mean 'reader.read_threads'?" },
        { "zzz=1", "command line: unknown key 'zzz' (`shardbench run --help` lists the keys;" },
        { "storage.storage_options.api_key=x", "command line: unknown key 'storage.storage_options.api_key'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_config_t *cfg = sb_config_new ();
        char err[1024] = "";
        ck_assert_int_eq (sb_config_override (cfg, cases[i].arg, err, sizeof err), 0);
        sb_workload_t wl;
        ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), -1);
        ck_assert_msg (strncmp (err, cases[i].expect, strlen (cases[i].expect)) == 0, "%s: got '%s'", cases[i].arg,
                       err);
        sb_config_destroy (&cfg);
    }
    /* the Hydra appends and a file: accepted, the default kept */
    const char *ok[] = { "++workload.train.epoch=1", "+workload.train.epoch=1",
                         "++workload.storage.storage_options={epoch: 1}" };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        sb_config_t *cfg = sb_config_new ();
        char err[1024] = "";
        ck_assert_int_eq (sb_config_override (cfg, ok[i], err, sizeof err), 0);
        sb_workload_t wl;
        ck_assert_msg (sb_workload_from_config (cfg, &wl, err, sizeof err) == 0, "%s: %s", ok[i], err);
        ck_assert_uint_eq (wl.epochs, 1);
        sb_config_destroy (&cfg);
    }
    sb_config_t *cfg = sb_config_new ();
    char err[1024] = "";
    ck_assert_int_eq (sb_config_load_string (cfg, "train:\n  epoch: 3\n", "w.yaml", err, sizeof err), 0);
    sb_workload_t wl;
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    /* the command line replacing a file's unknown key makes it the command line's */
    ck_assert_int_eq (sb_config_override (cfg, "train.epoch=4", err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), -1);
    sb_config_destroy (&cfg);
}
END_TEST

/* numpy's np.random.seed takes at most 2**32-1: every seed the dlio
 * sampler derives (seed + epoch, + 31 x rank with file_shuffle) is checked
 * before the run starts, naming the key and the largest seed allowed. */
START_TEST (test_seed_bound)
{
    sb_config_t *cfg = sb_config_new ();
    char err[1024] = "";
    ck_assert_int_eq (sb_config_load_string (cfg, "train:\n  epochs: 3\n  seed: 4294967293\nreader:\n"
                                             "  sample_shuffle: seed\n", "w.yaml", err, sizeof err), 0);
    sb_workload_t wl;
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_check_seed (cfg, &wl, wl.seed, 0, 4, err, sizeof err), -1);
    ck_assert_str_eq (err, "w.yaml:3: key 'train.seed': 4294967293 is too large: the shuffles of 3 epoch(s) seed numpy"
                           " with seed + epoch, up to seed + 3, and np.random.seed takes at most 2**32-1 (4294967295),"
                           " where DLIO stops; the largest seed here is 4294967292");
    ck_assert_int_eq (sb_workload_check_seed (cfg, &wl, 4294967292ull, 1, 4, err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_check_seed (cfg, &wl, 4294967293ull, 1, 4, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "--seed: 4294967293 is too large"));
    /* the seed stays when seed_change_epoch is false */
    ck_assert_int_eq (sb_config_override (cfg, "train.seed_change_epoch=false", err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_check_seed (cfg, &wl, 4294967295ull, 0, 4, err, sizeof err), 0);
    /* file_shuffle: seed + epoch + 31 x rank, whatever seed_change_epoch says */
    ck_assert_int_eq (sb_config_override (cfg, "reader.file_shuffle=seed", err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_check_seed (cfg, &wl, 4294967295ull - 96, 0, 4, err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_check_seed (cfg, &wl, 4294967295ull - 95, 0, 4, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "3 epoch(s) over 4 ranks seed numpy with seed + epoch + 31 x rank, up to"
                                        " seed + 96,"));
    ck_assert_ptr_nonnull (strstr (err, "the largest seed here is 4294967199"));
    /* no shuffle, or the global sampler: no bound */
    ck_assert_int_eq (sb_config_override (cfg, "shardbench.sampler=global", err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_check_seed (cfg, &wl, UINT64_MAX, 0, 4, err, sizeof err), 0);
    /* (file_shuffle off is the key left out: DLIO shuffles files whatever value it is given) */
    sb_config_destroy (&cfg);
    ck_assert_ptr_nonnull (cfg = sb_config_new ());
    ck_assert_int_eq (sb_config_load_string (cfg, "train:\n  epochs: 3\nreader:\n  sample_shuffle: \"off\"\n", "w.yaml",
                                             err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_check_seed (cfg, &wl, UINT64_MAX, 0, 4, err, sizeof err), 0);
    sb_config_destroy (&cfg);
}
END_TEST

/* Text that is not UTF-8 is refused as it is read, naming file, line and
 * key: stored raw in runs.config it made that column unparseable. */
START_TEST (test_invalid_utf8)
{
    sb_config_t *cfg = sb_config_new ();
    char err[1024] = "";
    ck_assert_int_eq (sb_config_load_string (cfg, "model:\n  name: a\xff\xfe" "b\n", "w.yaml", err, sizeof err), -1);
    ck_assert_str_eq (err, "w.yaml:2: key 'model.name': not valid UTF-8 (byte 0xFF at column 10)");
    ck_assert_int_eq (sb_config_load_string (cfg, "reader:\n  batch_size: 4\n# caf\xe9\n", "w.yaml", err,
                                             sizeof err), -1);
    ck_assert_str_eq (err, "w.yaml:3: not valid UTF-8 (byte 0xE9 at column 6)");
    /* overlong and surrogate forms are not UTF-8 either */
    ck_assert_int_eq (sb_config_load_string (cfg, "a: \xc0\xaf\n", "w.yaml", err, sizeof err), -1);
    ck_assert_str_eq (err, "w.yaml:1: key 'a': not valid UTF-8 (byte 0xC0 at column 4)");
    ck_assert_int_eq (sb_config_load_string (cfg, "a: \xed\xa0\x80\n", "w.yaml", err, sizeof err), -1);
    ck_assert_str_eq (err, "w.yaml:1: key 'a': not valid UTF-8 (byte 0xED at column 4)");
    ck_assert_uint_eq (sb_config_count (cfg), 0);
    /* real UTF-8 is kept */
    ck_assert_int_eq (sb_config_load_string (cfg, "model:\n  name: caf\xc3\xa9\n", "w.yaml", err, sizeof err), 0);
    ck_assert_str_eq (sb_config_get (cfg, "model.name")->value, "caf\xc3\xa9");
    /* the command line, lists and {...} included */
    ck_assert_int_eq (sb_config_override (cfg, "model.name=a\xff\xfe" "b", err, sizeof err), -1);
    ck_assert_str_eq (err, "command line: key 'model.name': not valid UTF-8 (byte 0xFF at position 2 of the value)");
    ck_assert_int_eq (sb_config_override (cfg, "++workload.model=\xff", err, sizeof err), -1);
    ck_assert_str_eq (err, "command line: key 'model.name': not valid UTF-8 (byte 0xFF at position 1 of the value)");
    ck_assert_int_eq (sb_config_override (cfg, "storage.storage_options.columns=[a,b\xc3]", err, sizeof err), -1);
    ck_assert_str_eq (err, "command line: key 'storage.storage_options.columns': not valid UTF-8 (byte 0xC3 at"
                           " position 5 of the value)");
    ck_assert_str_eq (sb_config_get (cfg, "model.name")->value, "caf\xc3\xa9");
    /* the environment through ${oc.env:VAR} */
    ck_assert_int_eq (setenv ("SB_TEST_BAD_UTF8", "x\xffy", 1), 0);
    ck_assert_int_eq (sb_config_override (cfg, "model.name=${oc.env:SB_TEST_BAD_UTF8}", err, sizeof err), 0);
    sb_workload_t wl;
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), -1);
    ck_assert_str_eq (err, "command line: key 'model.name': not valid UTF-8 (after ${...} references are resolved)");
    unsetenv ("SB_TEST_BAD_UTF8");
    sb_config_destroy (&cfg);
}
END_TEST

/* A file prefix starting with '.' names hidden files, which the listing
 * skips: datagen wrote them and every run regenerated, then found none. */
START_TEST (test_hidden_prefix)
{
    const char *bad[] = { "dataset.file_prefix=.x", "dataset.file_prefix=.", "dataset.file_prefix=.img_a" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sb_config_t *cfg = sb_config_new ();
        char err[1024] = "", expect[256];
        ck_assert_int_eq (sb_config_override (cfg, bad[i], err, sizeof err), 0);
        sb_workload_t wl;
        ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), -1);
        snprintf (expect, sizeof expect, "command line: key 'dataset.file_prefix': '%s' starts with '.': object names"
                  " would be hidden files, which the listing skips", strchr (bad[i], '=') + 1);
        ck_assert_str_eq (err, expect);
        sb_config_destroy (&cfg);
    }
    sb_config_t *cfg = sb_config_new ();
    char err[1024] = "";
    ck_assert_int_eq (sb_config_override (cfg, "dataset.file_prefix=img.x", err, sizeof err), 0);
    sb_workload_t wl;
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    sb_config_destroy (&cfg);
}
END_TEST

/* dataset.format in any case is DLIO's lower-case format, everywhere:
 * the table's value and the stored configuration. */
START_TEST (test_format_case)
{
    sb_config_t *cfg = sb_config_new ();
    char err[1024] = "";
    ck_assert_int_eq (sb_config_load_string (cfg, "dataset:\n  format: NPZ\n", "w.yaml", err, sizeof err), 0);
    sb_workload_t wl;
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_str_eq (wl.format, "npz");
    const sb_config_entry_t *e = sb_config_get (cfg, "dataset.format");
    ck_assert_str_eq (e->value, "npz");
    ck_assert_str_eq (e->origin, "w.yaml");
    ck_assert_int_eq (e->line, 2);
    ck_assert_int_eq (sb_config_override (cfg, "dataset.format=Parquet", err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_from_config (cfg, &wl, err, sizeof err), 0);
    ck_assert_str_eq (wl.format, "parquet");
    char *yaml = sb_config_to_yaml (cfg);
    ck_assert_ptr_nonnull (strstr (yaml, "format: parquet"));
    free (yaml);
    sb_config_destroy (&cfg);
}
END_TEST

/* Credentials under any of their usual names are secrets (never stored or
 * sent); names that only look alike, and every key shardbench reads but the
 * three S3 credentials, are not. */
START_TEST (test_secret_names)
{
    const char *secret[] = {
        "storage.storage_options.api_key", "storage.storage_options.apikey", "storage.storage_options.apiKey",
        "storage.storage_options.pass", "storage.storage_options.passwd", "storage.storage_options.password",
        "storage.storage_options.bearer", "storage.storage_options.bearer_token", "storage.storage_options.token",
        "storage.storage_options.key", "storage.storage_options.account_key", "storage.storage_options.sseKey",
        "storage.credentials.key", "storage.storage_options.secret", "storage.storage_options.session_token",
        "storage.storage_options.sas", "storage.storage_options.sas_token", "storage.storage_options.sasToken",
        "storage.storage_options.signature", "storage.storage_options.sig", "storage.storage_options.private_key",
        "storage.storage_options.connection_string", "storage.storage_options.authorization",
        "storage.storage_options.db_pwd", "storage.storage_options.passphrase", "storage.storage_options.client_secret",
        "storage.storage_options.access_key_id", "storage.storage_options.secret_access_key", "x.PASSWORD",
        "AWS_SECRET_ACCESS_KEY", "API_KEY",
    };
    for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++)
        ck_assert_msg (sb_workload_is_secret_key (secret[i]), "%s is a secret", secret[i]);
    const char *plain[] = {
        "storage.storage_options.bypass", "storage.storage_options.sasl_mechanism", "model.design",
        "storage.storage_options.key_prefix", "dataset.key", "storage.key", "shardbench.keys_page",
        "storage.storage_options.passes", "storage.storage_options.keys", "storage.storage_options.sign_payload",
    };
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        ck_assert_msg (!sb_workload_is_secret_key (plain[i]), "%s is not a secret", plain[i]);
    /* the keys shardbench reads (its table and the engines' options) */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    ck_assert_ptr_nonnull (f);
    sb_workload_print_keys (f);
    ck_assert_int_eq (fclose (f), 0);
    char found[512] = "";
    int n = 0;
    for (char *save = NULL, *line = strtok_r (buf, "\n", &save); line; line = strtok_r (NULL, "\n", &save)) {
        char key[128];
        if (sscanf (line, " %127s", key) == 1 && sb_workload_is_secret_key (key)) {
            strncat (found, " ", sizeof found - strlen (found) - 1);
            strncat (found, key, sizeof found - strlen (found) - 1);
        }
        n++;
    }
    free (buf);
    ck_assert_int_gt (n, 100);
    ck_assert_str_eq (found, " storage.storage_options.access_key_id storage.storage_options.secret_access_key"
                             " storage.storage_options.session_token");
    /* a {...} value on the command line naming one is redacted whole */
    const char *a = "++workload.storage.storage_options={key: K1, region: r}";
    ck_assert_ptr_eq (sb_workload_secret_value (a), strchr (a, '=') + 1);
    a = "storage.storage_options={sasToken: K1}";
    ck_assert_ptr_eq (sb_workload_secret_value (a), strchr (a, '=') + 1);
    ck_assert_ptr_null (sb_workload_secret_value ("dataset.parquet={key: x}"));
    ck_assert_ptr_null (sb_workload_secret_value ("reader.batch_size=4"));
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
    tcase_add_loop_test (tc, test_errors_exact, 0, (int) (sizeof s_exact / sizeof s_exact[0]));
    tcase_add_test (tc, test_override_then_file_is_no_duplicate);
    tcase_add_test (tc, test_batch_size_origin);
    tcase_add_test (tc, test_alias_bomb_bounded);
    tcase_add_test (tc, test_buffer);
    tcase_add_test (tc, test_effective_yaml_quotes_keys);
    tcase_add_test (tc, test_deep_nesting_refused);
    tcase_add_test (tc, test_anchor_alias_limits);
    tcase_add_test (tc, test_alias_expansion_bounded);
    tcase_add_test (tc, test_merge_keys);
    tcase_add_test (tc, test_model_name);
    tcase_add_test (tc, test_interpolate);
    tcase_add_test (tc, test_unknown_key_command_line);
    tcase_add_test (tc, test_seed_bound);
    tcase_add_test (tc, test_invalid_utf8);
    tcase_add_test (tc, test_hidden_prefix);
    tcase_add_test (tc, test_format_case);
    tcase_add_test (tc, test_secret_names);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
