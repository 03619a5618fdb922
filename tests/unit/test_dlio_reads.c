/* Keys read as DLIO_local_changes reads them, form by form:
 * - reader.file_shuffle: any value given shuffles the files (DLIO keeps the
 *   value as written and compares it with its enum), only a missing key does
 *   not; a value that reads as off is warned about once;
 * - the files DLIO refuses (storage_type s3dlio or object, sample_shuffle
 *   given as a boolean, a custom loader class without a sampler, s3 with
 *   pytorch and no storage_library) are
 *   refused naming file, line, key, DLIO's refusal and the fix, or run with
 *   a warning under shardbench.lenient: true;
 * - dataset.parquet.columns given on the command line as a list of mappings
 *   is read as the YAML form is. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "workload.h"
#include "workload_load.h"

static sb_workload_t s_wl;      /* large: not on the stack */
static const char *s_err = "";
static char s_log[65536];

static const char *
s_load (const char *yaml, const char *const *overrides)
{
    s_err = sb_test_workload_load_logged (yaml, overrides, &s_wl, s_log, sizeof s_log);
    return s_err;
}

/* How many times needle occurs in s_log. */
static int
s_logged (const char *needle)
{
    int n = 0;
    for (const char *p = strstr (s_log, needle); p; p = strstr (p + 1, needle))
        n++;
    return n;
}

static const char *const s_none[] = { NULL };

/* A file's forms: a missing key is the only one without a file shuffle */
START_TEST (test_file_shuffle_file_forms)
{
    ck_assert_str_eq (s_load ("reader:\n  batch_size: 2\n", NULL), "");
    ck_assert_int_eq (s_wl.file_shuffle, SB_SHUFFLE_OFF);
    ck_assert_int_eq (s_logged ("reader.file_shuffle"), 0);
    static const struct { const char *yaml; sb_shuffle_t want; int warned; } forms[] = {
        { "reader:\n  batch_size: 2\n  file_shuffle: off\n", SB_SHUFFLE_SEED, 1 },     /* YAML 1.1: False */
        { "reader:\n  batch_size: 2\n  file_shuffle: \"off\"\n", SB_SHUFFLE_SEED, 1 }, /* the text 'off' */
        { "reader:\n  batch_size: 2\n  file_shuffle: 'off'\n", SB_SHUFFLE_SEED, 1 },
        { "reader:\n  batch_size: 2\n  file_shuffle: Off\n", SB_SHUFFLE_SEED, 1 },
        { "reader:\n  batch_size: 2\n  file_shuffle: false\n", SB_SHUFFLE_SEED, 1 },
        { "reader:\n  batch_size: 2\n  file_shuffle: no\n", SB_SHUFFLE_SEED, 1 },
        { "reader:\n  batch_size: 2\n  file_shuffle: seed\n", SB_SHUFFLE_SEED, 0 },
        { "reader:\n  batch_size: 2\n  file_shuffle: true\n", SB_SHUFFLE_SEED, 0 },
        { "reader:\n  batch_size: 2\n  file_shuffle: on\n", SB_SHUFFLE_SEED, 0 },
        { "reader:\n  batch_size: 2\n  file_shuffle: random\n", SB_SHUFFLE_RANDOM, 0 },
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        ck_assert_msg (!strcmp (s_load (forms[i].yaml, NULL), ""), "%s: %s", forms[i].yaml, s_err);
        ck_assert_msg (s_wl.file_shuffle == forms[i].want, "%s: file_shuffle %d, expected %d", forms[i].yaml,
                       (int) s_wl.file_shuffle, (int) forms[i].want);
        ck_assert_msg (s_logged ("w.yaml:3: key 'reader.file_shuffle':") == forms[i].warned, "%s: %s",
                       forms[i].yaml, s_log);
    }
    ck_assert_str_eq (s_load ("reader:\n  batch_size: 2\n  file_shuffle: off\n", NULL), "");
    ck_assert_msg (strstr (s_log, "w.yaml:3: key 'reader.file_shuffle': 'off' shuffles the files, as"
                                  " DLIO_local_changes reads it: DLIO keeps the value as given (YAML 1.1, unquoted,"
                                  " reads off as the boolean false) and shuffles files whenever it is not its own"
                                  " Shuffle.OFF, which no file or command line can give; leave the key out for no"
                                  " file shuffle") != NULL, "%s", s_log);
    ck_assert_str_eq (s_load ("reader:\n  batch_size: 2\n  file_shuffle: \"off\"\n", NULL), "");
    ck_assert_int_eq (s_logged ("w.yaml:3: key 'reader.file_shuffle': 'off' shuffles the files, as DLIO_local_changes"
                                " reads it: DLIO keeps the value as given (the text 'off', quoted)"), 1);
    /* a word DLIO would also shuffle with is still a typo here */
    ck_assert_str_ne (s_load ("reader:\n  file_shuffle: sometimes\n", NULL), "");
    ck_assert_msg (strstr (s_err, "w.yaml:2: key 'reader.file_shuffle': expected off, seed or random") == s_err, "%s",
                   s_err);
}
END_TEST

/* The command line: KEY=off, ++workload.KEY=off (Hydra's text 'off') and
 * =false (Hydra's boolean) shuffle too */
START_TEST (test_file_shuffle_command_line)
{
    static const char *const plain[] = { "reader.file_shuffle=off", NULL };
    static const char *const hydra[] = { "++workload.reader.file_shuffle=off", NULL };
    static const char *const boolean[] = { "reader.file_shuffle=false", NULL };
    static const char *const seed[] = { "workload.reader.file_shuffle=seed", NULL };
    const char *file = "reader:\n  batch_size: 2\n";
    ck_assert_str_eq (s_load (file, plain), "");
    ck_assert_int_eq (s_wl.file_shuffle, SB_SHUFFLE_SEED);
    ck_assert_int_eq (s_logged ("command line: key 'reader.file_shuffle': 'off' shuffles the files, as"
                                " DLIO_local_changes reads it: DLIO keeps the value as given (the text 'off' from the"
                                " command line)"), 1);
    ck_assert_str_eq (s_load (file, hydra), "");
    ck_assert_int_eq (s_wl.file_shuffle, SB_SHUFFLE_SEED);
    ck_assert_int_eq (s_logged ("command line: key 'reader.file_shuffle': 'off' shuffles the files"), 1);
    ck_assert_str_eq (s_load (file, boolean), "");
    ck_assert_int_eq (s_wl.file_shuffle, SB_SHUFFLE_SEED);
    ck_assert_int_eq (s_logged ("(Hydra reads false as the boolean false)"), 1);
    ck_assert_str_eq (s_load (file, seed), "");
    ck_assert_int_eq (s_wl.file_shuffle, SB_SHUFFLE_SEED);
    ck_assert_int_eq (s_logged ("reader.file_shuffle"), 0);
    /* an override of a file's seed by off still shuffles; sample_shuffle's off is off (DLIO converts it) */
    static const char *const both[] = { "reader.file_shuffle=off", "reader.sample_shuffle=off", NULL };
    ck_assert_str_eq (s_load ("reader:\n  file_shuffle: seed\n  sample_shuffle: seed\n", both), "");
    ck_assert_int_eq (s_wl.file_shuffle, SB_SHUFFLE_SEED);
    ck_assert_int_eq (s_wl.sample_shuffle, SB_SHUFFLE_OFF);
    ck_assert_int_eq (s_logged ("reader.sample_shuffle"), 0);
}
END_TEST

/* reader.sample_shuffle as a boolean (a bare off, or Hydra's false): DLIO's
 * Shuffle(False) stops LoadConfig; the text off (quoted, or the command
 * line's off) is off */
START_TEST (test_refuse_sample_shuffle_boolean)
{
    ck_assert_str_ne (s_load ("reader:\n  batch_size: 2\n  sample_shuffle: off\n", NULL), "");
    ck_assert_str_eq (s_err, "w.yaml:3: key 'reader.sample_shuffle': DLIO_local_changes refuses the boolean off (YAML"
                      " 1.1 reads it so unquoted): config.py's LoadConfig converts sample_shuffle with its Shuffle enum,"
                      " which has no boolean value, and stops; write sample_shuffle: \"off\" (quoted, the text) or"
                      " leave the key out for no sample shuffle, seed to shuffle; or set shardbench.lenient: true to"
                      " run it anyway, with a warning");
    static const char *const bools[] = { "no", "False", "OFF", "true", "yes", "On" };
    for (size_t i = 0; i < sizeof bools / sizeof bools[0]; i++) {
        char yaml[128];
        snprintf (yaml, sizeof yaml, "reader:\n  sample_shuffle: %s\n", bools[i]);
        ck_assert_msg (strstr (s_load (yaml, NULL), "w.yaml:2: key 'reader.sample_shuffle': DLIO_local_changes refuses"
                                                     " the boolean ") == s_err, "%s: %s", bools[i], s_err);
    }
    /* the text: quoted, or the command line's off (Hydra's text); seed */
    ck_assert_str_eq (s_load ("reader:\n  sample_shuffle: \"off\"\n", NULL), "");
    ck_assert_int_eq (s_wl.sample_shuffle, SB_SHUFFLE_OFF);
    ck_assert_str_eq (s_load ("reader:\n  sample_shuffle: 'off'\n", NULL), "");
    ck_assert_str_eq (s_load ("reader:\n  sample_shuffle: seed\n", NULL), "");
    ck_assert_int_eq (s_wl.sample_shuffle, SB_SHUFFLE_SEED);
    static const char *const text[] = { "++workload.reader.sample_shuffle=off", NULL };
    ck_assert_str_eq (s_load ("reader:\n  sample_shuffle: seed\n", text), "");
    ck_assert_int_eq (s_wl.sample_shuffle, SB_SHUFFLE_OFF);
    ck_assert_int_eq (s_logged ("DLIO_local_changes refuses"), 0);
    /* Hydra's false is a boolean; a file's refused value overridden by text is not refused */
    static const char *const boolean[] = { "reader.sample_shuffle=false", NULL };
    ck_assert_str_ne (s_load ("reader:\n  batch_size: 2\n", boolean), "");
    ck_assert_msg (strstr (s_err, "command line: key 'reader.sample_shuffle': DLIO_local_changes refuses the boolean"
                                  " false (Hydra reads true and false so)") == s_err, "%s", s_err);
    ck_assert_str_eq (s_load ("reader:\n  sample_shuffle: off\n", text), "");
    /* lenient: read as off, with the warning */
    static const char *const lenient[] = { "shardbench.lenient=true", NULL };
    ck_assert_str_eq (s_load ("reader:\n  batch_size: 2\n  sample_shuffle: off\n", lenient), "");
    ck_assert_int_eq (s_wl.sample_shuffle, SB_SHUFFLE_OFF);
    ck_assert_int_eq (s_logged ("w.yaml:3: key 'reader.sample_shuffle': DLIO_local_changes refuses the boolean off"), 1);
    /* an alias of a bare off is a boolean too; a flow list item is text to no key here */
    ck_assert_str_ne (s_load ("x: &o off\nreader:\n  sample_shuffle: *o\n", NULL), "");
    ck_assert_msg (strstr (s_err, "w.yaml:1: key 'reader.sample_shuffle': DLIO_local_changes refuses the boolean off")
                   == s_err, "%s", s_err);
}
END_TEST

/* the effective configuration (runs.config, Hydra's config.yaml) keeps the
 * types DLIO got: text that YAML 1.1 would read as a boolean is quoted, a
 * boolean is not; read back, each is what it was */
START_TEST (test_config_yaml_types)
{
    char err[1024];
    sb_config_t *cfg = sb_config_new ();
    ck_assert_ptr_nonnull (cfg);
    ck_assert_int_eq (sb_config_load_string (cfg, "reader:\n  file_shuffle: off\n  sample_shuffle: \"off\"\n"
                                             "workflow:\n  train: True\n", "w.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_override (cfg, "train.seed_change_epoch=false", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_override (cfg, "++workload.workflow.debug=off", err, sizeof err), 0);
    char *yaml = sb_config_to_yaml (cfg);
    ck_assert_ptr_nonnull (yaml);
    ck_assert_msg (strstr (yaml, "reader:\n  file_shuffle: off\n  sample_shuffle: \"off\"\n") != NULL, "%s", yaml);
    ck_assert_msg (strstr (yaml, "  seed_change_epoch: false\n") != NULL, "%s", yaml);
    ck_assert_msg (strstr (yaml, "  debug: \"off\"\n") != NULL && strstr (yaml, "  train: True\n") != NULL, "%s", yaml);
    sb_config_t *back = sb_config_new ();
    ck_assert_int_eq (sb_config_load_string (back, yaml, "runs.config", err, sizeof err), 0);
    static const struct { const char *key; int is_bool; } want[] = {
        { "reader.file_shuffle", 1 }, { "reader.sample_shuffle", 0 }, { "workflow.train", 1 },
        { "train.seed_change_epoch", 1 }, { "workflow.debug", 0 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        ck_assert_int_eq (sb_config_get (cfg, want[i].key)->is_bool, want[i].is_bool);
        ck_assert_int_eq (sb_config_get (back, want[i].key)->is_bool, want[i].is_bool);
    }
    free (yaml);
    sb_config_destroy (&back);
    sb_config_destroy (&cfg);
}
END_TEST

/* storage_type s3dlio and object: refused at their line, with the DLIO
 * spelling of the same run; lenient: a warning and the run as before */
START_TEST (test_refuse_storage_type)
{
    const char *s3dlio = "framework: pytorch\nstorage:\n  storage_type: s3dlio\n  storage_root: bkt\n"
                         "  storage_options:\n    endpoint_url: http://127.0.0.1:9000\n";
    ck_assert_str_ne (s_load (s3dlio, NULL), "");
    ck_assert_str_eq (s_err, "w.yaml:3: key 'storage.storage_type': DLIO_local_changes refuses 's3dlio': it is not one"
                      " of DLIO's storage types (local_fs, parallel_fs, direct_fs, s3, aistore), so config.py's"
                      " LoadConfig stops before anything runs; write storage_type: s3 with storage_library: s3dlio"
                      " under storage: (the same I/O in shardbench); or set shardbench.lenient: true to run it"
                      " anyway, with a warning");
    /* object with file:// data: local_fs; with direct://: direct_fs */
    ck_assert_str_ne (s_load ("storage:\n  storage_type: object\ndataset:\n  data_folder: file:///tmp/d\n", NULL), "");
    ck_assert_msg (strstr (s_err, "w.yaml:2: key 'storage.storage_type': DLIO_local_changes refuses 'object': ")
                   == s_err && strstr (s_err, "write storage_type: local_fs under storage:"), "%s", s_err);
    ck_assert_str_ne (s_load ("storage:\n  storage_type: object\n  protocol: direct\n", NULL), "");
    ck_assert_msg (strstr (s_err, "write storage_type: direct_fs with storage_library: s3dlio under storage:"), "%s",
                   s_err);
    ck_assert_str_ne (s_load ("storage:\n  storage_type: object\n  storage_library: minio\n  storage_root: b\n", NULL),
                      "");
    ck_assert_msg (strstr (s_err, "write storage_type: s3 with storage_library: minio under storage:"), "%s", s_err);
    /* the command line */
    static const char *const obj[] = { "++workload.storage.storage_type=object", NULL };
    ck_assert_str_ne (s_load ("dataset:\n  data_folder: file:///tmp/d\n", obj), "");
    ck_assert_msg (strstr (s_err, "command line: key 'storage.storage_type': DLIO_local_changes refuses 'object'")
                   == s_err, "%s", s_err);
    /* lenient: the run shardbench made of it before, and one warning */
    static const char *const lenient[] = { "shardbench.lenient=true", NULL };
    ck_assert_str_eq (s_load (s3dlio, lenient), "");
    ck_assert_str_eq (s_wl.storage.engine, "s3");
    ck_assert_str_eq (s_wl.storage.store, "bkt");
    ck_assert_int_eq (s_logged ("w.yaml:3: key 'storage.storage_type': DLIO_local_changes refuses 's3dlio': "), 1);
    ck_assert_int_eq (s_logged ("; running it anyway (shardbench.lenient: true)"), 1);
    /* under reader: DLIO reads no storage key (it runs local_fs): not refused */
    ck_assert_str_eq (s_load ("reader:\n  storage_type: s3dlio\n  storage_root: file:///tmp/x\n", NULL), "");
    ck_assert_int_eq (s_logged ("DLIO_local_changes refuses"), 0);
    /* shardbench.lenient is a boolean */
    ck_assert_str_ne (s_load ("shardbench:\n  lenient: sometimes\n", NULL), "");
    ck_assert_msg (strstr (s_err, "w.yaml:2: key 'shardbench.lenient': expected true or false") == s_err, "%s", s_err);
}
END_TEST

/* a data_loader_classname without data_loader_sampler */
START_TEST (test_refuse_loader_class)
{
    const char *yaml = "framework: pytorch\nreader:\n  data_loader: pytorch\n"
                       "  data_loader_classname: my.module.Loader\n";
    ck_assert_str_ne (s_load (yaml, NULL), "");
    ck_assert_str_eq (s_err, "w.yaml:4: key 'reader.data_loader_classname': DLIO_local_changes refuses a custom data"
                      " loader class without reader.data_loader_sampler (config.py's validate stops, after datagen"
                      " when the workflow generates data); add reader.data_loader_sampler: index (the sampler of"
                      " PyTorch's loader, the one shardbench runs for this file) or iterative; or set"
                      " shardbench.lenient: true to run it anyway, with a warning");
    static const char *const sampler[] = { "reader.data_loader_sampler=index", NULL };
    ck_assert_str_eq (s_load (yaml, sampler), "");
    ck_assert_str_eq (s_wl.data_loader_sampler, "index");
    ck_assert_int_eq (s_logged ("DLIO_local_changes refuses"), 0);
    /* null is no class (Python's None) */
    ck_assert_str_eq (s_load ("reader:\n  data_loader_classname: null\n", NULL), "");
    ck_assert_str_eq (s_load ("reader:\n  data_loader_classname:\n", NULL), "");
    static const char *const lenient[] = { "++workload.shardbench.lenient=true", NULL };
    ck_assert_str_eq (s_load (yaml, lenient), "");
    ck_assert_str_eq (s_wl.data_loader_sampler, "");
    ck_assert_int_eq (s_logged ("w.yaml:4: key 'reader.data_loader_classname': DLIO_local_changes refuses a custom"
                                " data loader class"), 1);
}
END_TEST

/* storage_type s3 with framework pytorch and no storage_library */
START_TEST (test_refuse_s3_library)
{
    const char *yaml = "framework: pytorch\nstorage:\n  storage_type: s3\n  storage_root: bkt\n"
                       "  storage_options:\n    endpoint_url: http://127.0.0.1:9000\n";
    ck_assert_str_ne (s_load (yaml, NULL), "");
    ck_assert_str_eq (s_err, "w.yaml:3: key 'storage.storage_type': DLIO_local_changes refuses storage_type s3 with"
                      " framework pytorch and no storage_library (config.py's validate stops, after datagen when the"
                      " workflow generates data); add storage_library: s3dlio (or s3torchconnector, or minio) under"
                      " storage:, or ++workload.storage.storage_options.storage_library=s3dlio on the command line:"
                      " shardbench's S3 engine does the I/O whichever is named, and records the name; or set"
                      " shardbench.lenient: true to run it anyway, with a warning");
    static const char *const lib1[] = { "++workload.storage.storage_options.storage_library=s3dlio", NULL };
    static const char *const lib2[] = { "storage.storage_library=minio", NULL };
    static const char *const tf[] = { "framework=tensorflow", NULL };
    ck_assert_str_eq (s_load (yaml, lib1), "");
    ck_assert_str_eq (s_wl.storage_library, "s3dlio");
    ck_assert_str_eq (s_load (yaml, lib2), "");
    ck_assert_str_eq (s_wl.storage_library, "minio");
    /* DLIO checks the library with PyTorch only */
    ck_assert_str_eq (s_load (yaml, tf), "");
    ck_assert_str_eq (s_load (yaml + strlen ("framework: pytorch\n"), NULL), "");   /* DLIO's default: tensorflow */
    /* a library under reader: is not DLIO's (it reads no storage key there) */
    char with_reader[512];
    snprintf (with_reader, sizeof with_reader, "%sreader:\n  storage_library: s3dlio\n", yaml);
    ck_assert_str_ne (s_load (with_reader, NULL), "");
    ck_assert_msg (strstr (s_err, "w.yaml:3: key 'storage.storage_type': DLIO_local_changes refuses storage_type s3")
                   == s_err, "%s", s_err);
    static const char *const lenient[] = { "shardbench.lenient=yes", NULL };
    ck_assert_str_eq (s_load (yaml, lenient), "");
    ck_assert_str_eq (s_wl.storage.engine, "s3");
    ck_assert_int_eq (s_logged ("running it anyway (shardbench.lenient: true)"), 1);
}
END_TEST

/* the refusals in DLIO's order: LoadConfig's storage type first; validate's
 * loader check before its S3 one; lenient warns for each */
START_TEST (test_refusal_order)
{
    const char *yaml = "framework: pytorch\nstorage:\n  storage_type: s3\n  storage_root: bkt\n"
                       "reader:\n  data_loader_classname: a.B\n";
    ck_assert_str_ne (s_load (yaml, NULL), "");
    ck_assert_msg (strstr (s_err, "w.yaml:6: key 'reader.data_loader_classname': ") == s_err, "%s", s_err);
    static const char *const lenient[] = { "shardbench.lenient=true", NULL };
    ck_assert_str_eq (s_load (yaml, lenient), "");
    ck_assert_int_eq (s_logged ("running it anyway (shardbench.lenient: true)"), 2);
    const char *yaml2 = "storage:\n  storage_type: s3dlio\n  storage_root: bkt\nreader:\n  data_loader_classname: a.B\n";
    ck_assert_str_ne (s_load (yaml2, NULL), "");
    ck_assert_msg (strstr (s_err, "w.yaml:2: key 'storage.storage_type': ") == s_err, "%s", s_err);
}
END_TEST

/* dataset.parquet.columns=[{...}, ...] on the command line: the YAML form's keys and rows */
START_TEST (test_columns_command_line)
{
    const char *file = "dataset:\n  format: parquet\n  record_length_bytes: 131072\n";
    ck_assert_str_eq (s_load ("dataset:\n  format: parquet\n  record_length_bytes: 131072\n  parquet:\n    columns:\n"
                              "      - {name: feat, dtype: float32, size: 20}\n      - {name: label, dtype: int8}\n"
                              "      - {name: id, dtype: int64, size: 1}\n"
                              "      - {name: w, dtype: float16, size: 5}\n", s_none), "");
    char yaml_cols[256];
    snprintf (yaml_cols, sizeof yaml_cols, "%s", s_wl.parquet_columns);
    ck_assert_str_eq (yaml_cols, "feat:float32:20,label:int8:1,id:int64:1,w:float16:5");
    ck_assert_uint_eq (s_wl.record_length_bytes, 80 + 1 + 8 + 10);
    static const char *const forms[][2] = {
        { "dataset.parquet.columns=[{name: feat, dtype: float32, size: 20}, {name: label, dtype: int8},"
          " {name: id, dtype: int64, size: 1}, {name: w, dtype: float16, size: 5}]", NULL },
        { "++workload.dataset.parquet.columns=[{name: feat, dtype: float32, size: 20},{name: label, dtype: int8},"
          "{name: id, dtype: int64, size: 1},{name: w, dtype: float16, size: 5}]", NULL },
        { "+workload.dataset.parquet.columns=[ {name: feat,dtype: float32,size: 20}, {name: label, dtype: int8} ,"
          " {name: id, dtype: int64, size: 1}, {name: w, dtype: float16, size: 5} ]", NULL },
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        ck_assert_msg (!strcmp (s_load (file, forms[i]), ""), "%s: %s", forms[i][0], s_err);
        ck_assert_str_eq (s_wl.parquet_columns, yaml_cols);
        ck_assert_uint_eq (s_wl.record_length_bytes, 99);
        ck_assert_msg (strstr (s_log, "DLIO keys this version ignores") == NULL, "%s", s_log);
    }
    /* replaces a file's list whole: no item of the longer list stays */
    static const char *const one[] = { "dataset.parquet.columns=[{name: x, dtype: float64, size: 3}]", NULL };
    ck_assert_str_eq (s_load ("dataset:\n  format: parquet\n  parquet:\n    columns:\n"
                              "      - {name: a, dtype: float32, size: 2}\n      - {name: b, dtype: int8}\n", one), "");
    ck_assert_str_eq (s_wl.parquet_columns, "x:float64:3");
    ck_assert_uint_eq (s_wl.record_length_bytes, 24);
    static const char *const none[] = { "dataset.parquet.columns=[]", NULL };
    ck_assert_str_eq (s_load ("dataset:\n  format: parquet\n  parquet:\n    columns:\n"
                              "      - {name: a, dtype: float32, size: 2}\n", none), "");
    ck_assert_str_eq (s_wl.parquet_columns, "");
    static const char *const plain[] = { "dataset.parquet.columns=[a, b]", NULL };
    ck_assert_str_ne (s_load (file, plain), "");
    ck_assert_str_eq (s_err, "command line: key 'dataset.parquet.columns': expected a list of mappings [{name: ..,"
                      " dtype: .., size: ..}, ...], got a list of plain values");
    /* an item that is not a mapping, or one without a dtype: errors naming the key */
    static const char *const mixed[] = { "dataset.parquet.columns=[{name: a, dtype: int8}, b]", NULL };
    char err[2048];
    sb_config_t *cfg = sb_config_new ();
    ck_assert_int_eq (sb_config_override (cfg, mixed[0], err, sizeof err), -1);
    ck_assert_msg (strstr (err, "command line: key 'dataset.parquet.columns': expected a list of mappings") == err, "%s",
                   err);
    sb_config_destroy (&cfg);
    static const char *const nodtype[] = { "dataset.parquet.columns=[{name: a, dtype: int8}, {name: b}]", NULL };
    ck_assert_str_ne (s_load (file, nodtype), "");
    ck_assert_msg (strstr (s_err, "command line: key 'dataset.parquet.columns': item 1 needs a name") == s_err, "%s",
                   s_err);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("dlio_reads");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_file_shuffle_file_forms);
    tcase_add_test (tc, test_file_shuffle_command_line);
    tcase_add_test (tc, test_refuse_sample_shuffle_boolean);
    tcase_add_test (tc, test_config_yaml_types);
    tcase_add_test (tc, test_refuse_storage_type);
    tcase_add_test (tc, test_refuse_loader_class);
    tcase_add_test (tc, test_refuse_s3_library);
    tcase_add_test (tc, test_refusal_order);
    tcase_add_test (tc, test_columns_command_line);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
