/* Upstream workload keys: storage types and libraries, S3 bucket
 * and prefix, reader: storage keys, placeholders, credentials, DLIO's older
 * spellings, keys accepted without effect, and 200+ parquet columns. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "proto.h"
#include "engine.h"
#include "s3_client.h"
#include "workload.h"
#include "workload_load.h"
#include "s3_shape.h"
#include "loader_depth.h"

/* what the loader says of a scheme no engine serves: head, then the
 * schemes of this build's engines, in registry order */
static const char *
s_unserved (const char *head)
{
    static char out[1024];
    size_t used = (size_t) snprintf (out, sizeof out, "%s is not served by this shardbench (it serves ", head);
    const char *sep = "";
    for (size_t i = 0; sb_engine_at (i); i++)
        for (const char *const *sc = sb_engine_at (i)->schemes; sc && *sc; sc++, sep = ", ")
            used += (size_t) snprintf (out + used, sizeof out - used, "%s%s://", sep, *sc);
    snprintf (out + used, sizeof out - used, ")");
    return out;
}

/* the S3 engine's settings as its client takes them */
static sb_s3_settings_t
s_s3_set (const sb_storage_cfg_t *cfg)
{
    sb_s3_settings_t set;
    sb_s3_settings (cfg, &set);
    return set;
}

static sb_workload_t s_wl;  /* large: not on the stack */

/* storage_root and data_folder into bucket and prefix, as DLIO forms URIs */
static const struct {
    const char *root, *folder, *bucket, *data_folder;
} s_locations[] = {
    { "bkt", "s3://bkt", "bkt", "s3://bkt/" },                  /* no trailing '/': the same bucket */
    { "bkt", "s3://bkt/", "bkt", "s3://bkt/" },
    { "bkt", "s3://bkt/pre/fix/", "bkt", "s3://bkt/pre/fix" },
    { "", "s3://bkt/pre", "bkt", "s3://bkt/pre" },              /* the bucket from data_folder alone */
    { "bkt/root", "data/unet3d", "bkt", "s3://bkt/root/data/unet3d" },
    { "s3://bkt/root/", "./data/", "bkt", "s3://bkt/root/data" },
    { "bkt", ".", "bkt", "s3://bkt/" },
    { "bkt", "/abs/path", "bkt", "s3://bkt/abs/path" },
};

START_TEST (test_s3_location)
{
    char yaml[512];
    for (size_t i = 0; i < sizeof s_locations / sizeof s_locations[0]; i++) {
        snprintf (yaml, sizeof yaml, "dataset:\n  data_folder: '%s'\nstorage:\n  storage_type: s3\n%s%s%s"
                  "  storage_options:\n    endpoint_url: http://127.0.0.1:9000\n", s_locations[i].folder,
                  *s_locations[i].root ? "  storage_root: '" : "", s_locations[i].root,
                  *s_locations[i].root ? "'\n" : "");
        ck_assert_str_eq (sb_test_workload_load (yaml, NULL, &s_wl), "");
        ck_assert_str_eq (s_wl.storage.engine, "s3");
        ck_assert_str_eq (s_wl.storage.store, s_locations[i].bucket);
        ck_assert_str_eq (s_wl.data_folder, s_locations[i].data_folder);
    }
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: s3://other/x\nstorage:\n  storage_type: s3\n"
                                             "  storage_root: bkt\n", NULL, &s_wl),
                      "w.yaml:2: key 'dataset.data_folder': 's3://other/x' names 'other', storage.storage_root"
                      " (w.yaml:5) names 'bkt': one run reads one store");
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: s3\n  storage_root: /mnt/x\n", NULL, &s_wl),
                      "w.yaml:3: key 'storage.storage_root': '/mnt/x' is a local path, but the storage is an object"
                      " store (s3://): give STORE[/PREFIX], or storage.storage_type local_fs (or direct_fs for"
                      " O_DIRECT)");
}
END_TEST

/* storage_type s3dlio and object (mlcommons/storage's) are refused as
 * DLIO_local_changes refuses them (test_dlio_reads.c); these tests read
 * them as shardbench.lenient runs them */
static const char *const s_lenient[] = { "shardbench.lenient=true", NULL };

START_TEST (test_storage_types)
{
    /* s3dlio with s3:// is S3, the library recorded */
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: s3://benchmark/training-data/resnet50\nstorage:\n"
                                             "  storage_type: s3dlio\n  storage_root: s3://benchmark/training-data/resnet50\n"
                                             "  storage_library: s3dlio\n  storage_options:\n    endpoint_url: localhost:9000\n",
                                             s_lenient, &s_wl), "");
    ck_assert_str_eq (s_wl.storage.engine, "s3");
    ck_assert_str_eq (s_wl.storage.store, "benchmark");
    ck_assert_str_eq (s_wl.data_folder, "s3://benchmark/training-data/resnet50");
    ck_assert_str_eq (s_wl.storage_summary, "s3 (storage_type s3dlio, storage_library s3dlio)");
    ck_assert_str_eq (s_wl.storage.endpoints[0], "http://localhost:9000");   /* no scheme: http, as DLIO's minio */
    /* s3dlio with file:// is the local file system at the path */
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: file:///mnt/scratch/dlio-test\nstorage:\n"
                                             "  storage_type: s3dlio\n  storage_root: file:///mnt/scratch/dlio-test\n", s_lenient, &s_wl),
                      "");
    ck_assert_str_eq (s_wl.storage.engine, "file");
    ck_assert_str_eq (s_wl.data_folder, "/mnt/scratch/dlio-test");
    ck_assert_int_eq (s_wl.odirect, 0);
    ck_assert_str_eq (s_wl.storage_summary, "file (storage_type s3dlio)");
    /* direct_fs: O_DIRECT local files */
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: /mnt/nvme/d\nstorage:\n  storage_type: direct_fs\n"
                                             "  storage_options:\n    storage_library: s3dlio\n", NULL, &s_wl), "");
    ck_assert_str_eq (s_wl.storage.engine, "direct");
    ck_assert_int_eq (s_wl.odirect, 1);
    ck_assert_str_eq (s_wl.data_folder, "/mnt/nvme/d");
    ck_assert_str_eq (s_wl.storage_summary, "file, O_DIRECT (storage_type direct_fs, storage_library s3dlio)");
    /* object + protocol s3, storage_root BUCKET/PREFIX */
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: .\nstorage:\n  storage_type: object\n  protocol: s3\n"
                                             "  storage_library: minio\n  storage_root: pr1-test-bucket/unet3d\n"
                                             "  storage_options:\n    endpoint_url: \"\"\n    s3_force_path_style: false\n"
                                             "    s3_max_attempts: 5\n", (const char *[]) {
                                     "storage.storage_options.endpoint_url=http://127.0.0.1:9000", "shardbench.lenient=true",
                                     NULL }, &s_wl), "");
    ck_assert_str_eq (s_wl.storage.engine, "s3");
    ck_assert_str_eq (s_wl.storage.store, "pr1-test-bucket");
    ck_assert_str_eq (s_wl.data_folder, "s3://pr1-test-bucket/unet3d");
    ck_assert_str_eq (s_wl.storage_summary, "s3 (storage_type object, storage_library minio)");
    ck_assert_int_eq (s_s3_set (&s_wl.storage).path_style, 0);
    ck_assert_uint_eq (s_wl.storage.max_retries, 4);
    /* s3 with s3torchconnector; parallel_fs is local files */
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: s3\n  storage_root: b\n  storage_library: s3torchconnector\n"
                                             "  storage_options:\n    endpoint_url: http://h:1\n", NULL, &s_wl), "");
    ck_assert_str_eq (s_wl.storage_summary, "s3 (storage_library s3torchconnector)");
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: parallel_fs\n", NULL, &s_wl), "");
    ck_assert_str_eq (s_wl.storage.engine, "file");
    ck_assert_str_eq (s_wl.storage_summary, "file (storage_type parallel_fs)");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  batch_size: 1\n", NULL, &s_wl), "");
    ck_assert_str_eq (s_wl.storage_summary, "file");
    /* refused, with the reason */
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: aistore\n", NULL, &s_wl),
                      "w.yaml:2: key 'storage.storage_type': aistore (AIStore's native API) is not served: shardbench"
                      " speaks S3 and POSIX; AIStore's S3 API needs the /s3 path on its endpoint, which"
                      " storage.storage_options.endpoint_url (http(s)://HOST[:PORT]) cannot give: put an S3 gateway in"
                      " front of it, or use local_fs on a mount of its store");
    /* a scheme no engine serves: the message lists the ones that are */
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: hdfs://c/p\nstorage:\n  storage_type: s3dlio\n", s_lenient, &s_wl),
                      s_unserved ("w.yaml:4: key 'storage.storage_type': hdfs://"));
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: s3\n  storage_root: b\n  storage_library: boto3\n", NULL,
                                             &s_wl),
                      "w.yaml:4: key 'storage.storage_library': expected s3dlio, s3torchconnector or minio, got 'boto3'");
}
END_TEST

START_TEST (test_endpoints_and_placeholders)
{
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: s3dlio\n  storage_root: s3://training-bucket/data/\n"
                                             "  endpoint_uris:\n    - http://e1:9000\n    - http://e2:9000\n    - http://e3:9000\n"
                                             "  load_balance_strategy: least_connections\n  use_mpi_endpoint_distribution: true\n",
                                             s_lenient, &s_wl), "");
    ck_assert_uint_eq (s_wl.storage.nendpoints, 3);
    ck_assert_str_eq (s_wl.storage.endpoints[2], "http://e3:9000");
    ck_assert_int_eq (s_wl.storage.lb, SB_LB_PER_RANK);      /* one endpoint per rank: no balancing */
    ck_assert_str_eq (s_wl.load_balance_strategy, "least_connections");
    ck_assert_int_eq (s_wl.endpoint_per_rank, 1);
    ck_assert_str_eq (s_wl.data_folder, "s3://training-bucket/data/shardbench-data");
    /* rank r: endpoint r mod 3, alone */
    static const char *const mine[] = { "http://e1:9000", "http://e2:9000", "http://e3:9000", "http://e1:9000",
                                        "http://e2:9000" };
    for (uint64_t r = 0; r < 5; r++) {
        sb_storage_cfg_t one;
        sb_storage_for_rank (&s_wl.storage, r, &one);
        ck_assert_uint_eq (one.nendpoints, 1);
        ck_assert_str_eq (one.endpoints[0], mine[r]);
        ck_assert_str_eq (one.store, "training-bucket");
    }
    /* and through WELCOME to the workers */
    sb_msg_welcome_t w;
    memset (&w, 0, sizeof w);
    ck_assert_int_eq (sb_storage_to_welcome (&s_wl.storage, &w), 0);
    ck_assert_str_eq (w.load_balance, "per_rank");
    sb_storage_cfg_t back;
    char err[128];
    ck_assert_int_eq (sb_storage_from_welcome (&w, &back, err, sizeof err), 0);
    free (w.endpoints.items);
    ck_assert_int_eq (back.lb, SB_LB_PER_RANK);
    ck_assert_uint_eq (back.nendpoints, 3);
    /* without the key every rank balances over all of them */
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: s3\n  storage_root: b\n  endpoint_uris: [http://e1:1, http://e2:1]\n",
                                             NULL, &s_wl), "");
    sb_storage_cfg_t all;
    sb_storage_for_rank (&s_wl.storage, 1, &all);
    ck_assert_uint_eq (all.nendpoints, 2);
    ck_assert_str_eq (all.endpoints[0], "http://e1:1");
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: s3\n  storage_root: b\n  endpoint_uris: [http://e1:1]\n"
                                             "  load_balance_strategy: random\n", NULL, &s_wl),
                      "w.yaml:5: key 'storage.load_balance_strategy': expected round_robin or least_connections, got"
                      " 'random' (random is not implemented)");
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: s3\n  storage_root: b\n  storage_options:\n"
                                             "    endpoint_url: ENDPOINT_PLACEHOLDER\n", NULL, &s_wl),
                      "w.yaml:5: key 'storage.storage_options.endpoint_url': 'ENDPOINT_PLACEHOLDER' is a placeholder"
                      " of the upstream file: set it on the command line, e.g."
                      " storage.storage_options.endpoint_url=http(s)://HOST:PORT");
    /* the override fixes it */
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: s3\n  storage_root: b\n  storage_options:\n"
                                             "    endpoint_url: ENDPOINT_PLACEHOLDER\n", (const char *[]) {
                                     "++workload.storage.storage_options.endpoint_url=http://h:9", NULL }, &s_wl), "");
    ck_assert_str_eq (s_wl.storage.endpoints[0], "http://h:9");
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: s3\n  storage_root: b\n  storage_options:\n"
                                             "    path_style: true\n    s3_force_path_style: false\n", NULL, &s_wl),
                      "w.yaml:6: key 'storage.storage_options.s3_force_path_style': disagrees with"
                      " storage.storage_options.path_style (w.yaml:5)");
}
END_TEST

START_TEST (test_reader_storage_keys)
{
    static char log[8192];
    /* test_unet3d_train_s3.yaml's form: taken as storage:, with one warning */
    const char *yaml = "dataset:\n  data_folder: .\nreader:\n  storage_type: object\n  protocol: s3\n"
                       "  storage_library: minio\n  storage_root: pr1-test-bucket/unet3d\n  storage_options:\n"
                       "    access_key_id: \"\"\n    endpoint_url: \"\"\n    s3_force_path_style: false\n";
    ck_assert_str_eq (sb_test_workload_load_logged (yaml, NULL, &s_wl, log, sizeof log), "");
    ck_assert_str_eq (s_wl.storage.engine, "s3");
    ck_assert_str_eq (s_wl.storage.store, "pr1-test-bucket");
    ck_assert_str_eq (s_wl.data_folder, "s3://pr1-test-bucket/unet3d");
    ck_assert_str_eq (s_wl.storage_summary, "s3 (storage_type object, storage_library minio)");
    ck_assert_int_eq (s_s3_set (&s_wl.storage).path_style, 0);
    ck_assert_msg (strstr (log, "w.yaml:4: storage keys under reader: taken as the storage: section's (storage_type,"
                                " protocol, storage_library, storage_root, storage_options): DLIO_local_changes reads no"
                                " storage key under reader: and would run on the local files of dataset.data_folder;"
                                " give them under storage: to run the same under both\n") != NULL, "%s", log);
    ck_assert_ptr_null (strstr (strstr (log, "storage keys under reader:") + 1, "storage keys under reader:"));
    /* the same value under storage: is no conflict, nor an empty one; another one is refused, naming both */
    ck_assert_str_eq (sb_test_workload_load (yaml, (const char *[]) { "storage.storage_type=object",
                                                                      "storage.storage_options.endpoint_url=http://h:1",
                                                                      "shardbench.lenient=true", NULL },
                                             &s_wl), "");
    ck_assert_str_eq (s_wl.storage.endpoints[0], "http://h:1");     /* "" under reader: is no value */
    ck_assert_str_eq (sb_test_workload_load (yaml, (const char *[]) { "storage.storage_type=s3", NULL }, &s_wl),
                      "w.yaml:4: key 'reader.storage_type': 'object' disagrees with storage.storage_type 's3' (command"
                      " line): give the storage keys once, under storage:");
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_options:\n    secret_access_key: one\nreader:\n"
                                             "  storage_options:\n    secret_access_key: two\n", NULL, &s_wl),
                      "w.yaml:6: key 'reader.storage_options.secret_access_key' disagrees with"
                      " storage.storage_options.secret_access_key (w.yaml:3): give the storage keys once, under"
                      " storage:");
    /* pytorch_s3dlio.yaml's form: data_loader_root is the data folder, storage_type object for its URI */
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: /tmp/dlio_data_unused\nreader:\n  storage_library: s3dlio\n"
                                             "  data_loader_root: s3://my-bucket/training-data\n  storage_options:\n"
                                             "    endpoint_url: http://localhost:9000\n    region: ${AWS_REGION}\n", NULL, &s_wl), "");
    ck_assert_str_eq (s_wl.storage.engine, "s3");
    ck_assert_str_eq (s_wl.storage.store, "my-bucket");
    ck_assert_str_eq (s_wl.data_folder, "s3://my-bucket/training-data");
    ck_assert_str_eq (s_wl.storage_summary, "s3 (storage_type object, storage_library s3dlio)");
    ck_assert_str_eq (s_wl.storage.endpoints[0], "http://localhost:9000");
    /* its multi-endpoint form */
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  storage_library: s3dlio\n  data_loader_root: s3://b/p\n"
                                             "  endpoint_uris:\n    - http://m1:9000\n    - http://m2:9000\n"
                                             "  load_balance_strategy: least_connections\n  use_mpi_endpoint_distribution: true\n",
                                             NULL, &s_wl), "");
    ck_assert_uint_eq (s_wl.storage.nendpoints, 2);
    ck_assert_str_eq (s_wl.storage.endpoints[1], "http://m2:9000");
    ck_assert_int_eq (s_wl.storage.lb, SB_LB_PER_RANK);
    ck_assert_str_eq (s_wl.load_balance_strategy, "least_connections");
    ck_assert_int_eq (s_wl.endpoint_per_rank, 1);
    /* a data_loader_root that names another location than an s3:// data_folder */
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: s3://a/x\nreader:\n  data_loader_root: s3://b/y\n", NULL,
                                             &s_wl),
                      "w.yaml:4: key 'reader.data_loader_root': 's3://b/y' disagrees with dataset.data_folder"
                      " 's3://a/x' (w.yaml:2): give the storage keys once, under storage:");
    /* an hdfs:// one is refused as under storage: */
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  data_loader_root: hdfs://c/p\n", NULL, &s_wl),
                      s_unserved ("w.yaml:2: key 'storage.storage_type': hdfs://"));
    /* local ones: the library recorded, dataset.data_folder read as DLIO reads it */
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: /tmp/d\nreader:\n  storage_library: s3dlio\n"
                                             "  data_loader_root: file:///tmp/d/train\n  storage_root: file:///tmp/d\n", NULL,
                                             &s_wl), "");
    ck_assert_str_eq (s_wl.storage.engine, "file");
    ck_assert_str_eq (s_wl.data_folder, "/tmp/d");
    ck_assert_str_eq (s_wl.storage_summary, "file (storage_library s3dlio)");
    /* an empty storage_options: is an empty section */
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: s3dlio\n  storage_root: file:///tmp/z/\n"
                                             "  storage_options:\n", s_lenient, &s_wl), "");
    ck_assert_str_eq (s_wl.data_folder, "/tmp/z/shardbench-data");
}
END_TEST

START_TEST (test_interpolation)
{
    /* resnet50_s3dlio_test.yaml: data_folder from storage_root, overrides included */
    const char *yaml = "storage:\n  storage_type: s3dlio\n  storage_root: file:///tmp/mlp/resnet50\n"
                       "dataset:\n  data_folder: ${storage.storage_root}/train\n";
    ck_assert_str_eq (sb_test_workload_load (yaml, s_lenient, &s_wl), "");
    ck_assert_str_eq (s_wl.storage.engine, "file");
    ck_assert_str_eq (s_wl.data_folder, "/tmp/mlp/resnet50/train");
    ck_assert_str_eq (sb_test_workload_load (yaml, (const char *[]) { "storage.storage_root=file:///x",
                                                                      "shardbench.lenient=true", NULL }, &s_wl), "");
    ck_assert_str_eq (s_wl.data_folder, "/x/train");
    /* relative, chained, escaped */
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  batch_size: 4\n  read_threads: ${.batch_size}\n"
                                             "  prefetch_size: ${reader.read_threads}\ndataset:\n  data_folder: /d/\\${x}\n",
                                             NULL, &s_wl), "");
    ck_assert_uint_eq (s_wl.read_threads, 4);
    ck_assert_uint_eq (s_wl.prefetch_size, 4);
    ck_assert_str_eq (s_wl.data_folder, "/d/${x}");
    /* the environment */
    setenv ("SB_TEST_K2_DIR", "/data/x", 1);
    unsetenv ("SB_TEST_K2_UNSET");
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: ${oc.env:SB_TEST_K2_DIR}/d\n  file_prefix:"
                                             " ${oc.env:SB_TEST_K2_UNSET,'part'}\n", NULL, &s_wl), "");
    ck_assert_str_eq (s_wl.data_folder, "/data/x/d");
    ck_assert_str_eq (s_wl.file_prefix, "part");
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: ${oc.env:SB_TEST_K2_UNSET}\n", NULL, &s_wl),
                      "w.yaml:2: key 'dataset.data_folder': '${oc.env:SB_TEST_K2_UNSET}' names environment variable"
                      " SB_TEST_K2_UNSET, which is not set (give a default: ${oc.env:SB_TEST_K2_UNSET,DEFAULT})");
    /* errors name file:line, key and reference */
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: ${storage.nope}/train\n", NULL, &s_wl),
                      "w.yaml:2: key 'dataset.data_folder': '${storage.nope}' refers to no key of the configuration");
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: ${BUCKET}\n", NULL, &s_wl),
                      "w.yaml:2: key 'dataset.data_folder': '${BUCKET}' refers to no key of the configuration (an"
                      " environment variable is ${oc.env:NAME})");
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: ${now:%Y}\n", NULL, &s_wl),
                      "w.yaml:2: key 'dataset.data_folder': '${now:%Y}' uses resolver 'now', which shardbench does not"
                      " have (only oc.env)");
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: ${dataset.file_prefix\n", NULL, &s_wl),
                      "w.yaml:2: key 'dataset.data_folder': '${dataset.file_prefix}' has no closing '}'");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  batch_size: ${reader.read_threads}\n  read_threads: ${reader.batch_size}\n",
                                             NULL, &s_wl),
                      "w.yaml:2: key 'reader.batch_size': '${reader.read_threads}' leads through more than 16"
                      " references (a loop?)");
    /* a credential never lands in a recorded key, and is never quoted */
    const char *err = sb_test_workload_load ("storage:\n  storage_options:\n    secret_access_key: s3cr3t\n"
                                             "dataset:\n  data_folder: /d/${storage.storage_options.secret_access_key}\n", NULL,
                                             &s_wl);
    ck_assert_str_eq (err, "w.yaml:5: key 'dataset.data_folder': '${storage.storage_options.secret_access_key}' would"
                           " copy a credential into a key that is recorded and shown");
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  data_folder: ${oc.env:AWS_SECRET_ACCESS_KEY,x}\n", NULL, &s_wl),
                      "w.yaml:2: key 'dataset.data_folder': '${oc.env:AWS_SECRET_ACCESS_KEY,x}' would copy a credential"
                      " into a key that is recorded and shown: give credentials as storage.storage_options.access_key_id"
                      " and secret_access_key");
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_options:\n    access_key_id: a\n    secret_access_key: ab${cd}\n",
                                             NULL, &s_wl),
                      "w.yaml:4: key 'storage.storage_options.secret_access_key': a reference in its value refers to"
                      " no key of the configuration");
    /* ${AWS_REGION} of the s3dlio files: the environment's region, as the credentials */
    const char *s3 = "storage:\n  storage_type: s3\n  storage_root: b\n  storage_options:\n"
                     "    endpoint_url: http://h:1\n    region: ${AWS_REGION}\n    access_key_id: ${AWS_ACCESS_KEY_ID}\n";
    setenv ("AWS_REGION", "eu-west-3", 1);
    ck_assert_str_eq (sb_test_workload_load (s3, NULL, &s_wl), "");
    ck_assert_str_eq (s_s3_set (&s_wl.storage).region, "eu-west-3");
    ck_assert_int_eq (s_wl.credentials_in_file, 0);
    unsetenv ("AWS_REGION");
    unsetenv ("AWS_DEFAULT_REGION");
    ck_assert_str_eq (sb_test_workload_load (s3, NULL, &s_wl), "");
    ck_assert_str_eq (s_s3_set (&s_wl.storage).region, "us-east-1");
}
END_TEST

START_TEST (test_record_length_spellings)
{
    static char log[8192];
    /* DLIO_local_changes reads only the _bytes spellings: 65536-byte records */
    ck_assert_str_eq (sb_test_workload_load_logged ("dataset:\n  record_length: 204800\n  record_length_stdev: 0\n"
                                                    "  record_length_resize: 204800\n", NULL, &s_wl, log, sizeof log), "");
    ck_assert_uint_eq (s_wl.record_length_bytes, 65536);
    ck_assert_uint_eq (s_wl.record_length_bytes_stdev, 0);
    ck_assert_msg (strstr (log, "w.yaml:2: key 'dataset.record_length' not used, as DLIO_local_changes does not read it"
                                " (it reads dataset.record_length_bytes): dataset.record_length_bytes is 65536 (DLIO's"
                                " default)\n") != NULL, "%s", log);
    ck_assert_msg (strstr (log, "w.yaml:3: key 'dataset.record_length_stdev' not used, as DLIO_local_changes does not"
                                " read it (it reads dataset.record_length_bytes_stdev): dataset.record_length_bytes_stdev"
                                " is 0 (the default)\n") != NULL, "%s", log);
    ck_assert_msg (strstr (log, "w.yaml:4: key 'dataset.record_length_resize' not used, as DLIO_local_changes does not"
                                " read it (it reads dataset.record_length_bytes_resize): dataset.record_length_bytes_resize"
                                " decides\n") != NULL, "%s", log);
    ck_assert_ptr_null (strstr (log, "unknown key"));
    ck_assert_str_eq (sb_test_workload_load ("dataset:\n  record_length: 5\n  record_length_bytes: 1000\n", NULL, &s_wl), "");
    ck_assert_uint_eq (s_wl.record_length_bytes, 1000);
    /* parquet rows are the columns' sum either way (flux) */
    ck_assert_str_eq (sb_test_workload_load_logged ("dataset:\n  format: parquet\n  record_length: 2164832\n  parquet:\n"
                                                    "    columns:\n      - {name: a, dtype: float32, size: 10}\n", NULL, &s_wl,
                                                    log, sizeof log), "");
    ck_assert_uint_eq (s_wl.record_length_bytes, 40);
    ck_assert_msg (strstr (log, "w.yaml:3: key 'dataset.record_length' not used, as DLIO_local_changes does not read it"
                                " (it reads dataset.record_length_bytes): rows are 40 bytes, the sum of"
                                " dataset.parquet.columns\n") != NULL, "%s", log);
}
END_TEST

START_TEST (test_dlio_spellings)
{
    ck_assert_str_eq (sb_test_workload_load ("train:\n  computation_time: 0.5\n  computation_time_stdev: 0.1\n", NULL, &s_wl), "");
    ck_assert_int_eq (s_wl.compute.type, SB_DIST_NORMAL);
    ck_assert (s_wl.compute.a == 0.5 && s_wl.compute.b == 0.1);
    ck_assert (s_wl.computation_time == 0.5);
    ck_assert_str_eq (sb_test_workload_load ("train:\n  computation_time: 0.5\n  computation_time_stdev: 0\n", NULL, &s_wl), "");
    ck_assert_int_eq (s_wl.compute.type, SB_DIST_CONSTANT);
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time: 0\n  preprocess_time_stdev: 0\n  pin_memory: true\n"
                                             "  multiprocessing_context: spawn\n  file_access: multi\n", NULL, &s_wl), "");
    /* acted on (tests/unit/test_preprocess.c) */
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  preprocess_time: 0.002\n", NULL, &s_wl), "");
    ck_assert_str_eq (sb_test_workload_load ("reader:\n  file_access: shared\n", NULL, &s_wl),
                      "w.yaml:2: key 'reader.file_access': 'shared' is not served: shardbench reads one file per set of"
                      " samples (multi, DLIO's default); shared, collective, mpio and posix put every sample in one"
                      " file");
}
END_TEST

START_TEST (test_not_applicable_logged)
{
    sb_config_t *cfg = sb_config_new ();
    char err[512];
    ck_assert_int_eq (sb_config_load_string (cfg, "reader:\n  pin_memory: true\n  multiprocessing_context: fork\n"
                                             "workflow:\n  debug: false\nlogging:\n  verbosity: info\n", "w.yaml", err,
                                             sizeof err), 0);
    ck_assert_int_eq (sb_workload_from_config (cfg, &s_wl, err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_log_not_applicable (cfg), 4);
    sb_config_destroy (&cfg);
}
END_TEST

/* The storage_options keys DLIO_local_changes's readers read (iterable
 * readers, s3dlio parquet readers, the object store adapter): each accepted,
 * none left to the "ignores" list; those not applied with their info line
 * (uri_scheme is acted on: test_uri_scheme; prefetch_workers,
 * prefetch_window, stagger_workers, max_outstanding, prefetch,
 * coalesce_rgs, footer_cap and footer_batch_size set the reads in flight and
 * their sizes: test_iodepth_keys). */
START_TEST (test_dlio_reader_options_logged)
{
    sb_config_t *cfg = sb_config_new ();
    char err[512];
    ck_assert_int_eq (sb_config_load_string (cfg, "storage:\n  storage_type: local_fs\n  storage_options:\n"
                                             "    prefetch_workers: 64\n    prefetch_window: 64\n"
                                             "    stagger_workers: false\n    simulate_io: false\n"
                                             "    max_outstanding: 1024\n    prefetch: 32\n    footer_cap: 4194304\n"
                                             "    footer_batch_size: 16\n    coalesce_rgs: 8\n    decode: raw\n"
                                             "    decode_output: none\n    sim_log_secs: 60\n    use_full_object_uri: false\n",
                                             "w.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_from_config (cfg, &s_wl, err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_log_not_applicable (cfg), 5);
    ck_assert_uint_eq (s_wl.storage.prefetch_workers, 64);
    ck_assert_uint_eq (s_wl.storage.prefetch_window, 64);
    ck_assert_int_eq (s_wl.storage.stagger_workers, 0);
    ck_assert_uint_eq (s_wl.storage.max_outstanding, 1024);
    ck_assert_uint_eq (s_wl.storage.prefetch, 32);
    ck_assert_uint_eq (s_wl.storage.coalesce_rgs, 8);
    ck_assert_uint_eq (s_wl.storage.footer_cap, 4194304);
    ck_assert_uint_eq (s_wl.storage.footer_batch_size, 16);
    sb_config_destroy (&cfg);
}
END_TEST

/* DLIO's reads in flight per loader worker on its iterable paths
 * (lib/dataset/loader_depth.h), from the workload's keys; 0 where DLIO's
 * loader reads one sample at a time per worker. */
static const struct {
    const char *format, *storage, *library, *options, *loader;
    uint64_t    depth;
    double      stagger;
    int         footers_first;
} s_depths[] = {
    { "npz", "s3", "s3dlio", "", "pytorch", 64, 0, 0 },
    { "jpeg", "s3", "s3dlio", "    prefetch_window: 8\n", "pytorch", 8, 0, 0 },
    { "npy", "s3", "minio", "", "pytorch", 16, 0.5, 0 },
    { "npz", "s3", "minio", "    prefetch_window: 4\n", "pytorch", 4, 0.5, 0 },
    { "npz", "s3", "minio", "    stagger_workers: false\n", "pytorch", 16, 0, 0 },
    { "png", "s3", "s3torchconnector", "", "pytorch", 1, 0.5, 0 },
    { "npz", "s3", "", "", "pytorch", 0, 0, 0 },                /* NPZReaderS3: not derived */
    { "npz", "s3", "s3dlio", "", "tensorflow", 0, 0, 0 },       /* tf.data: one read per worker */
    { "parquet", "local_fs", "", "", "pytorch", 64, 0, 1 },
    { "parquet", "local_fs", "", "    prefetch_workers: 3\n", "pytorch", 3, 0, 1 },
    { "parquet", "local_fs", "", "    prefetch_window: 4\n", "pytorch", 5, 0, 1 },
    { "parquet", "s3", "s3torchconnector", "", "pytorch", 64, 0, 1 },
    { "parquet", "s3", "minio", "", "pytorch", 0, 0, 0 },       /* no row-group pool: legacy path */
    { "parquet", "s3", "s3dlio", "", "pytorch", 32, 0, 1 },     /* parquet_reader_s3dlio.py: prefetch, 32 */
    { "parquet", "s3", "s3dlio", "    prefetch: 5\n", "pytorch", 5, 0, 1 },
    { "parquet", "s3", "s3dlio", "    prefetch: 5\n    prefetch_workers: 7\n", "pytorch", 7, 0, 1 },
    { "parquet", "s3", "s3dlio", "    max_outstanding: 2\n", "pytorch", 2, 0, 1 },
    { "parquet", "local_fs", "", "", "tensorflow", 0, 0, 0 },
    { "npz", "local_fs", "", "", "pytorch", 0, 0, 0 },          /* map-style on local files */
    { "npz", "direct_fs", "", "", "pytorch", 64, 0.5, 0 },      /* _local_fs_iterable_mixin.py */
    { "png", "direct_fs", "", "    prefetch_window: 16\n", "pytorch", 16, 0.5, 0 },
    { "npy", "direct_fs", "", "    prefetch_window: 100\n    stagger_workers: no\n", "pytorch", 64, 0, 0 },
    { "npz", "direct_fs", "", "", "tensorflow", 0, 0, 0 },
};

START_TEST (test_iodepth_keys)
{
    char yaml[1024];
    for (size_t i = 0; i < sizeof s_depths / sizeof s_depths[0]; i++) {
        int s3 = strcmp (s_depths[i].storage, "s3") == 0;
        snprintf (yaml, sizeof yaml,
                  "framework: %s\ndataset:\n  format: %s\n  data_folder: %s\nreader:\n  data_loader: %s\n"
                  "train:\n  computation_time: 0.5\n%sstorage:\n  storage_type: %s\n%s%s%s"
                  "  storage_options:\n%s%s",
                  s_depths[i].loader, s_depths[i].format, s3 ? "s3://bkt/d" : "./d", s_depths[i].loader,
                  /* DLIO refuses S3 with pytorch and no library: run it as shardbench reads it */
                  s3 && !*s_depths[i].library ? "shardbench:\n  lenient: true\n" : "",
                  s_depths[i].storage, *s_depths[i].library ? "  storage_library: " : "", s_depths[i].library,
                  *s_depths[i].library ? "\n" : "", s3 ? "    endpoint_url: http://127.0.0.1:9000\n" : "",
                  *s_depths[i].options ? s_depths[i].options : "    prefetch_window: 0\n");
        ck_assert_msg (strcmp (sb_test_workload_load (yaml, NULL, &s_wl), "") == 0, "case %zu: %s", i,
                       sb_test_workload_load (yaml, NULL, &s_wl));
        ck_assert_msg (sb_loader_depth (&s_wl) == s_depths[i].depth, "case %zu: depth %llu, DLIO's %llu", i,
                       (unsigned long long) sb_loader_depth (&s_wl), (unsigned long long) s_depths[i].depth);
        ck_assert_msg (sb_loader_stagger_s (&s_wl) == s_depths[i].stagger, "case %zu: stagger %g", i,
                       sb_loader_stagger_s (&s_wl));
        ck_assert_int_eq (sb_loader_footers_first (&s_wl), s_depths[i].footers_first);
        /* s3dlio's parquet GETs cover coalesce_rgs row groups (8); every other reader one */
        int s3dlio_pq = !strcmp (s_depths[i].format, "parquet") && !strcmp (s_depths[i].library, "s3dlio");
        ck_assert_uint_eq (sb_loader_coalesce (&s_wl), s3dlio_pq ? 8 : 1);
        /* and reads the last 4 MiB of each file for its footer, 16 files at once */
        uint64_t tail, batch;
        sb_loader_footers (&s_wl, &tail, &batch);
        ck_assert_uint_eq (tail, s3dlio_pq ? 4194304 : 0);
        ck_assert_uint_eq (batch, s3dlio_pq ? 16 : 1);
    }
    /* a value that is not a count is refused naming the key */
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_options:\n    prefetch_window: many\n", NULL, &s_wl),
                      "w.yaml:3: key 'storage.storage_options.prefetch_window': expected a non-negative integer,"
                      " got 'many'");
}
END_TEST

/* storage.storage_options.uri_scheme must agree with the storage: another
 * store, or local URIs for S3, are refused; direct on local files without
 * O_DIRECT is warned about (DLIO's local readers would use O_DIRECT). */
START_TEST (test_uri_scheme)
{
    char log[4096];
    const char *s3 = "storage:\n  storage_type: s3\n  storage_root: b\n  storage_library: s3dlio\n"
                     "  storage_options:\n    endpoint_url: http://h:1\n    uri_scheme: %s\n";
    char yaml[512];
    snprintf (yaml, sizeof yaml, s3, "s3://");
    ck_assert_str_eq (sb_test_workload_load (yaml, NULL, &s_wl), "");
    ck_assert_str_eq (s_wl.storage.engine, "s3");
    snprintf (yaml, sizeof yaml, s3, "hdfs");
    ck_assert_str_eq (sb_test_workload_load (yaml, NULL, &s_wl),
                      "w.yaml:7: key 'storage.storage_options.uri_scheme': hdfs:// is not served by this shardbench");
    snprintf (yaml, sizeof yaml, s3, "direct");
    ck_assert_str_eq (sb_test_workload_load (yaml, NULL, &s_wl),
                      "w.yaml:7: key 'storage.storage_options.uri_scheme': direct:// URIs, but the storage is s3://"
                      " (storage.storage_type s3): for local files use storage_type local_fs (direct_fs for O_DIRECT)");
    snprintf (yaml, sizeof yaml, s3, "s3:x");
    ck_assert_str_eq (sb_test_workload_load (yaml, NULL, &s_wl),
                      "w.yaml:7: key 'storage.storage_options.uri_scheme': expected a URI scheme (s3, file or direct),"
                      " got 's3:x'");
    /* local files: direct warned about without O_DIRECT, silent with it; s3 (DLIO's default) accepted */
    ck_assert_str_eq (sb_test_workload_load_logged ("storage:\n  storage_type: local_fs\n  storage_options:\n"
                                                    "    uri_scheme: direct\n", NULL, &s_wl, log, sizeof log), "");
    ck_assert_str_eq (s_wl.storage.engine, "file");
    ck_assert_int_eq (s_wl.odirect, 0);
    ck_assert_msg (strstr (log, "w.yaml:4: key 'storage.storage_options.uri_scheme': direct: DLIO's npz, npy, jpeg"
                                " and png readers of local files then read with O_DIRECT"), "%s", log);
    ck_assert_str_eq (sb_test_workload_load_logged ("storage:\n  storage_type: direct_fs\n  storage_options:\n"
                                                    "    storage_library: s3dlio\n    uri_scheme: direct\n", NULL,
                                                    &s_wl, log, sizeof log), "");
    ck_assert_str_eq (s_wl.storage.engine, "direct");
    ck_assert_ptr_null (strstr (log, "uri_scheme"));
    ck_assert_str_eq (sb_test_workload_load_logged ("storage:\n  storage_type: local_fs\n  storage_options:\n"
                                                    "    uri_scheme: s3\n", NULL, &s_wl, log, sizeof log), "");
    ck_assert_ptr_null (strstr (log, "uri_scheme"));
}
END_TEST

START_TEST (test_credentials_export)
{
    sb_config_t *cfg = sb_config_new ();
    char err[512];
    setenv ("AWS_SESSION_TOKEN", "stale", 1);
    ck_assert_int_eq (sb_config_load_string (cfg, "storage:\n  storage_options:\n    access_key_id: AKIDTEST\n"
                                             "    secret_access_key: s3cr3t\n", "w.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_from_config (cfg, &s_wl, err, sizeof err), 0);
    ck_assert_int_eq (s_wl.credentials_in_file, 1);
    ck_assert_int_eq (sb_workload_export_credentials (cfg, err, sizeof err), 1);
    ck_assert_str_eq (getenv ("AWS_ACCESS_KEY_ID"), "AKIDTEST");
    ck_assert_str_eq (getenv ("AWS_SECRET_ACCESS_KEY"), "s3cr3t");
    ck_assert_ptr_null (getenv ("AWS_SESSION_TOKEN"));      /* a stale token would not match the new pair */
    ck_assert_int_eq (sb_config_redact (cfg, sb_workload_is_secret_key, "<redacted>"), 2);
    char *yaml = sb_config_to_yaml (cfg);
    ck_assert_ptr_null (strstr (yaml, "s3cr3t"));
    ck_assert_ptr_null (strstr (yaml, "AKIDTEST"));
    free (yaml);
    sb_config_destroy (&cfg);
    /* ${VAR} and "" are absent: the environment stays */
    cfg = sb_config_new ();
    ck_assert_int_eq (sb_config_load_string (cfg, "storage:\n  storage_options:\n"
                                             "    access_key_id: ${AWS_ACCESS_KEY_ID}\n    secret_access_key: \"\"\n",
                                             "w.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_export_credentials (cfg, err, sizeof err), 0);
    ck_assert_str_eq (getenv ("AWS_ACCESS_KEY_ID"), "AKIDTEST");
    sb_config_destroy (&cfg);
    /* one of the pair: refused, the value not repeated */
    cfg = sb_config_new ();
    ck_assert_int_eq (sb_config_load_string (cfg, "storage:\n  storage_options:\n    secret_access_key: onlyme\n",
                                             "w.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_workload_export_credentials (cfg, err, sizeof err), -1);
    ck_assert_str_eq (err, "w.yaml:3: key 'storage.storage_options.secret_access_key': given without"
                           " storage.storage_options.access_key_id: give both, or neither (then the environment's"
                           " AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are used)");
    sb_config_destroy (&cfg);
}
END_TEST

/* dataset.parquet.columns of n columns feature_NNNN, float32 (size 1 by default) */
static char *
s_columns_yaml (int n)
{
    size_t cap = 128 + (size_t) n * 64;
    char *y = malloc (cap);
    ck_assert_ptr_nonnull (y);
    size_t at = (size_t) snprintf (y, cap, "dataset:\n  format: parquet\n  parquet:\n    columns:\n");
    for (int i = 0; i < n; i++)
        at += (size_t) snprintf (y + at, cap - at, "      - {name: feature_%04d, dtype: float32}\n", i);
    return y;
}

START_TEST (test_parquet_columns_limit)
{
    char *y = s_columns_yaml (200);
    ck_assert_str_eq (sb_test_workload_load (y, NULL, &s_wl), "");
    ck_assert_uint_eq (strlen (s_wl.parquet_columns), 200 * strlen ("feature_0000:float32:1,") - 1);    /* 4599 */
    ck_assert_uint_eq (s_wl.record_length_bytes, 800);
    free (y);
    /* 1300 columns fit (29899 characters); 1500 (34499) do not: the error names the column's line and the limit */
    y = s_columns_yaml (1300);
    ck_assert_str_eq (sb_test_workload_load (y, NULL, &s_wl), "");
    ck_assert_uint_eq (strlen (s_wl.parquet_columns), 1300 * 23 - 1);
    free (y);
    y = s_columns_yaml (1500);
    ck_assert_str_eq (sb_test_workload_load (y, NULL, &s_wl), "w.yaml:1429: key 'dataset.parquet.columns': the list is over 32767"
                                                              " characters");
    free (y);
    ck_assert_int_eq (SB_PROTO_MAX_STR, SB_WORKLOAD_COLUMNS_MAX - 1);    /* WELCOME carries it whole */
}
END_TEST


/* storage_library: the engine options that make the S3 requests the
 * library's (s3_shape.h), DLIO's checkpoint figures per library and ranks,
 * the user's multipart keys over them; s3torchconnector's split GETs */
START_TEST (test_library_shapes)
{
    const char *base = "storage:\n  storage_type: s3\n  storage_root: b\n  storage_options:\n    endpoint_url: http://h:1\n";
    sb_s3_ckpt_shape_t c;
    uint64_t part = 0, window = 0;
    /* no library: shardbench's own requests */
    ck_assert_str_eq (sb_test_workload_load (base, NULL, &s_wl), "");
    ck_assert_ptr_null (sb_storage_opt (&s_wl.storage, "library"));
    sb_s3_ckpt_shape (&s_wl.storage, 2, &c);
    ck_assert_int_eq (c.shaped, 0);
    ck_assert_int_eq (sb_s3_get_split (&s_wl.storage, &part, &window), 0);
    /* minio and s3dlio: 32 MiB parts, max(2, ceil(16 / ranks)) uploads and blocks, 128 MiB range GETs */
    static const struct { uint64_t ranks, streams; } r[] = { { 0, 16 }, { 1, 16 }, { 2, 8 }, { 3, 6 }, { 4, 4 },
                                                             { 8, 2 }, { 9, 2 }, { 16, 2 }, { 100, 2 } };
    const char *libs[] = { "minio", "s3dlio" };
    for (size_t l = 0; l < 2; l++) {
        const char *o[] = { NULL, NULL };
        char kv[64];
        snprintf (kv, sizeof kv, "storage.storage_library=%s", libs[l]);
        o[0] = kv;
        ck_assert_str_eq (sb_test_workload_load (base, o, &s_wl), "");
        ck_assert_str_eq (sb_storage_opt (&s_wl.storage, "library"), libs[l]);
        ck_assert_ptr_null (sb_storage_opt (&s_wl.storage, "ckpt_part"));
        ck_assert_ptr_null (sb_storage_opt (&s_wl.storage, "ckpt_threshold"));
        ck_assert_int_eq (sb_s3_get_split (&s_wl.storage, &part, &window), 0);
        for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
            sb_s3_ckpt_shape (&s_wl.storage, r[i].ranks, &c);
            ck_assert_int_eq (c.shaped, 1);
            ck_assert_uint_eq (c.part, 32ull << 20);
            ck_assert_uint_eq (c.threshold, 0);
            ck_assert_uint_eq (c.upload_window, r[i].streams);
            ck_assert_uint_eq (c.read_streams, r[i].streams);
            ck_assert_uint_eq (c.read_chunk, 128ull << 20);
            ck_assert_uint_eq (c.read_window, 1);
            ck_assert_uint_eq (sb_s3_ckpt_depth (&c), r[i].streams);
        }
    }
    /* s3torchconnector: the CRT's 8 MiB parts, 10 at once; blocks as the others */
    ck_assert_str_eq (sb_test_workload_load (base, (const char *[]) { "storage.storage_library=s3torchconnector", NULL },
                                             &s_wl), "");
    sb_s3_ckpt_shape (&s_wl.storage, 4, &c);
    ck_assert_uint_eq (c.part, 8ull << 20);
    ck_assert_uint_eq (c.upload_window, 10);
    ck_assert_uint_eq (c.read_streams, 4);
    ck_assert_uint_eq (c.read_chunk, 8ull << 20);
    ck_assert_uint_eq (c.read_window, 10);
    ck_assert_uint_eq (sb_s3_ckpt_depth (&c), 40);
    ck_assert_int_eq (sb_s3_get_split (&s_wl.storage, &part, &window), 1);
    ck_assert_uint_eq (part, 8ull << 20);
    ck_assert_uint_eq (window, 10);
    /* the user's part size and threshold win */
    ck_assert_str_eq (sb_test_workload_load (base, (const char *[]) { "storage.storage_library=minio",
                                             "storage.storage_options.multipart_part_bytes=5242880",
                                             "storage.storage_options.multipart_threshold_bytes=10485760", NULL }, &s_wl), "");
    ck_assert_str_eq (sb_storage_opt (&s_wl.storage, "ckpt_part"), "5242880");
    ck_assert_str_eq (sb_storage_opt (&s_wl.storage, "ckpt_threshold"), "10485760");
    sb_s3_ckpt_shape (&s_wl.storage, 2, &c);
    ck_assert_uint_eq (c.part, 5242880);
    ck_assert_uint_eq (c.threshold, 10485760);
    ck_assert_uint_eq (c.upload_window, 8);
    /* not a key a file can set */
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: s3\n  storage_root: b\n  storage_library: minio\n"
                                             "  s3:\n    library: s3dlio\n  storage_options:\n    endpoint_url: http://h:1\n",
                                             NULL, &s_wl),
                      "w.yaml:6: key 'storage.s3.library': the s3 storage engine has no option 'library' (region,"
                      " path_style, force_path_style, multipart_threshold, multipart_part, sign_payload, list_page_size)");
    /* s3dlio: the record length goes with it (its HEADs); its split by object size and cores */
    ck_assert_str_eq (sb_test_workload_load (base, (const char *[]) { "storage.storage_library=s3dlio",
                                             "dataset.record_length_bytes=16777216", NULL }, &s_wl), "");
    ck_assert_str_eq (sb_storage_opt (&s_wl.storage, "record_length"), "16777216");
    const uint64_t mib = 1ull << 20;
    static const struct { uint64_t size, cores; int split; uint64_t chunk, window; } sp[] = {
        { 32 * mib - 1, 64, 0, 0, 0 }, { 32 * mib, 2, 1, 4 * mib, 4 }, { 40 * mib, 16, 1, 4 * mib, 16 },
        { 256 * mib, 2, 1, 8 * mib, 4 }, { 512 * mib, 2, 1, 8 * mib, 8 }, { 512 * mib, 16, 1, 8 * mib, 32 },
    };
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        uint64_t chunk = 0, w = 0;
        ck_assert_int_eq (sb_s3_s3dlio_split (sp[i].size, sp[i].cores, &chunk, &w), sp[i].split);
        if (sp[i].split) {
            ck_assert_uint_eq (chunk, sp[i].chunk);
            ck_assert_uint_eq (w, sp[i].window);
        }
    }
    /* local files: no S3 options */
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: direct_fs\n  storage_library: s3dlio\n", NULL, &s_wl),
                      "");
    ck_assert_ptr_null (sb_storage_opt (&s_wl.storage, "library"));
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("storage_keys");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_s3_location);
    tcase_add_test (tc, test_storage_types);
    tcase_add_test (tc, test_library_shapes);
    tcase_add_test (tc, test_endpoints_and_placeholders);
    tcase_add_test (tc, test_reader_storage_keys);
    tcase_add_test (tc, test_interpolation);
    tcase_add_test (tc, test_record_length_spellings);
    tcase_add_test (tc, test_dlio_spellings);
    tcase_add_test (tc, test_not_applicable_logged);
    tcase_add_test (tc, test_dlio_reader_options_logged);
    tcase_add_test (tc, test_iodepth_keys);
    tcase_add_test (tc, test_uri_scheme);
    tcase_add_test (tc, test_credentials_export);
    tcase_add_test (tc, test_parquet_columns_limit);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
