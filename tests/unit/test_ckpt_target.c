/* the checkpoint folder's own storage (lib/storage/ckpt_target.h)
 * from its scheme, whatever the dataset's: s3://BUCKET/PREFIX in any bucket,
 * file:// and absolute paths local even with a dataset on S3, relative ones
 * in the dataset's bucket or local; the refusals at load name file:line and
 * the key; the wire form and a worker's reading of it. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_target.h"
#include "config.h"
#include "workload.h"
#include "workload_load.h"

static sb_workload_t s_wl;

/* Load yaml and overrides into s_wl, with no AWS_ENDPOINT_URL from the
 * environment; the load's error ("" on success). */
static const char *
s_load (const char *yaml, const char *const *overrides)
{
    unsetenv ("AWS_ENDPOINT_URL");
    return sb_test_workload_load (yaml, overrides, &s_wl);
}

static const char s_s3_yaml[] = "storage:\n  storage_type: s3\n  storage_root: s3://training-bucket/data/\n"
                                "  endpoint_uris: [http://127.0.0.1:9000, http://127.0.0.1:9001]\n"
                                "dataset:\n  data_folder: /tmp/dlio\n"
                                "workflow:\n  train: True\n  checkpoint: True\n"
                                "checkpoint:\n  checkpoint_folder: %s\n";

static void
s_target (const char *folder, sb_ckpt_target_t *t)
{
    char yaml[1024];
    snprintf (yaml, sizeof yaml, s_s3_yaml, folder);
    const char *e = s_load (yaml, NULL);
    ck_assert_msg (!*e, "%s", e);
    char err[1024];
    ck_assert_msg (sb_ckpt_target_resolve (&s_wl, t, err, sizeof err) == 0, "%s", err);
}

START_TEST (test_dataset_on_s3)
{
    sb_ckpt_target_t t;
    char uri[PATH_MAX];
    /* hybrid_storage.yaml: local files */
    s_target ("file:///nvme/checkpoints/resnet50/", &t);
    ck_assert_str_eq (t.engine, "");
    ck_assert_str_eq (t.path, "/nvme/checkpoints/resnet50/");
    ck_assert_int_eq (sb_ckpt_target_uri (&t, uri, sizeof uri), 0);
    ck_assert_str_eq (uri, "/nvme/checkpoints/resnet50/");
    s_target ("/tmp/ck", &t);
    ck_assert_str_eq (t.engine, "");
    ck_assert_str_eq (t.path, "/tmp/ck");
    s_target ("direct:///mnt/ck", &t);
    ck_assert_str_eq (t.engine, "");
    ck_assert_int_eq (t.direct, 1);
    ck_assert_str_eq (t.path, "/mnt/ck");
    /* multi_endpoint_*.yaml: another bucket */
    s_target ("s3://checkpoint-bucket/checkpoints/", &t);
    ck_assert_str_eq (t.engine, "s3");
    ck_assert_str_eq (t.store, "checkpoint-bucket");
    ck_assert_str_eq (t.path, "checkpoints/");
    ck_assert_int_eq (sb_ckpt_target_uri (&t, uri, sizeof uri), 0);
    ck_assert_str_eq (uri, "s3://checkpoint-bucket/checkpoints/");
    s_target ("s3://checkpoint-bucket", &t);
    ck_assert_str_eq (t.store, "checkpoint-bucket");
    ck_assert_str_eq (t.path, "");
    /* relative: a key prefix of the dataset's bucket */
    s_target ("./checkpoints/unet3d", &t);
    ck_assert_str_eq (t.engine, "s3");
    ck_assert_str_eq (t.store, "training-bucket");
    ck_assert_str_eq (t.path, "checkpoints/unet3d/");
}
END_TEST

START_TEST (test_refusals)
{
    char yaml[1024];
    snprintf (yaml, sizeof yaml, s_s3_yaml, "hdfs://nn/ck");
    ck_assert_str_eq (s_load (yaml, NULL), "w.yaml:11: key 'checkpoint.checkpoint_folder': hdfs:// ('hdfs://nn/ck')"
                      " is not served: checkpoints go to local files (file://PATH or a path) or an object store this"
                      " shardbench serves");
    snprintf (yaml, sizeof yaml, s_s3_yaml, "s3:///x");
    ck_assert_str_eq (s_load (yaml, NULL), "w.yaml:11: key 'checkpoint.checkpoint_folder': 's3:///x' names no store"
                      " (s3://STORE[/PREFIX])");
    /* no checkpoint during training: the `checkpoint` command's session says it */
    const char *const no_ckpt[] = { "workflow.checkpoint=False", NULL };
    ck_assert_str_eq (s_load (yaml, no_ckpt), "");
}
END_TEST

START_TEST (test_local_dataset)
{
    const char yaml[] = "dataset:\n  data_folder: ./data\nworkflow:\n  train: True\n  checkpoint: True\n"
                        "checkpoint:\n  checkpoint_folder: s3://ck-bucket/run\n";
    ck_assert_str_eq (s_load (yaml, NULL), "w.yaml:7: key 'checkpoint.checkpoint_folder': 's3://ck-bucket/run' is in an"
                      " object store (s3://) but the dataset is local: no endpoint is configured: give"
                      " storage.storage_options.endpoint_url=http(s)://HOST:PORT (or storage.endpoint_uris, or the"
                      " environment's AWS_ENDPOINT_URL), with credentials in AWS_ACCESS_KEY_ID and"
                      " AWS_SECRET_ACCESS_KEY");
    /* the store's engine takes an endpoint from the environment (its
     * configure op), as it would for a dataset there, but never its
     * service's public one */
    setenv ("AWS_ENDPOINT_URL", "http://127.0.0.1:9100", 1);
    ck_assert_str_eq (sb_test_workload_load (yaml, NULL, &s_wl), "");
    unsetenv ("AWS_ENDPOINT_URL");
    ck_assert_uint_eq (s_wl.storage.nendpoints, 1);
    ck_assert_str_eq (s_wl.storage.endpoints[0], "http://127.0.0.1:9100");
    ck_assert_str_eq (sb_storage_opt_of (&s_wl.storage, "s3", "region"), "us-east-1");
    const char *const ep[] = { "storage.storage_options.endpoint_url=127.0.0.1:9000", NULL };
    ck_assert_str_eq (s_load (yaml, ep), "");
    ck_assert_str_eq (s_wl.storage.endpoints[0], "http://127.0.0.1:9000");     /* as a dataset's */
    sb_ckpt_target_t t;
    char err[1024];
    ck_assert_int_eq (sb_ckpt_target_resolve (&s_wl, &t, err, sizeof err), 0);
    ck_assert_str_eq (t.engine, "s3");
    ck_assert_str_eq (t.store, "ck-bucket");
    ck_assert_str_eq (t.path, "run/");
    const char *const bad[] = { "storage.storage_options.endpoint_url=ftp://h:1", NULL };
    ck_assert_str_eq (s_load (yaml, bad), "w.yaml:7: key 'checkpoint.checkpoint_folder': 's3://ck-bucket/run' is in an"
                      " object store, but endpoint 1 'ftp://h:1' is not http(s)://HOST[:PORT]"
                      " (storage.storage_options.endpoint_url or storage.endpoint_uris)");
    /* a relative folder with a local dataset is local */
    const char *const rel[] = { "checkpoint.checkpoint_folder=ck/x", NULL };
    ck_assert_str_eq (s_load (yaml, rel), "");
    ck_assert_int_eq (sb_ckpt_target_resolve (&s_wl, &t, err, sizeof err), 0);
    ck_assert_str_eq (t.engine, "");
    ck_assert_str_eq (t.path, "ck/x");
}
END_TEST

/* a worker's side: the wire form into its storage and root */
START_TEST (test_open)
{
    sb_storage_cfg_t base, out;
    memset (&base, 0, sizeof base);
    snprintf (base.engine, sizeof base.engine, "file");
    snprintf (base.endpoints[0], sizeof base.endpoints[0], "http://127.0.0.1:9000");
    base.nendpoints = 1;
    char root[PATH_MAX], err[512];
    ck_assert_int_eq (sb_ckpt_target_open ("s3://ck-b/run1/", "/data/", &base, &out, root, sizeof root, err,
                                           sizeof err), 0);
    ck_assert_str_eq (out.engine, "s3");
    ck_assert_str_eq (out.store, "ck-b");
    ck_assert_str_eq (root, "run1/");
    ck_assert_str_eq (out.endpoints[0], "http://127.0.0.1:9000");
    ck_assert_int_eq (sb_ckpt_target_open ("s3://ck-b", "/data/", &base, &out, root, sizeof root, err, sizeof err), 0);
    ck_assert_str_eq (root, "");
    snprintf (base.engine, sizeof base.engine, "s3");
    snprintf (base.store, sizeof base.store, "data-a");
    ck_assert_int_eq (sb_ckpt_target_open ("/nvme/ck/", "ds/", &base, &out, root, sizeof root, err, sizeof err), 0);
    ck_assert_str_eq (out.engine, "file");
    ck_assert_str_eq (root, "/nvme/ck/");
    ck_assert_int_eq (sb_ckpt_target_open ("", "ds/", &base, &out, root, sizeof root, err, sizeof err), 0);
    ck_assert_str_eq (out.engine, "s3");
    ck_assert_str_eq (out.store, "data-a");
    ck_assert_str_eq (root, "ds/");
    ck_assert_int_eq (sb_ckpt_target_open ("rel/x", "ds/", &base, &out, root, sizeof root, err, sizeof err), -1);
    ck_assert_str_eq (err, "checkpoint folder 'rel/x' is neither SCHEME://STORE/PREFIX/ of an object store nor an"
                      " absolute path");
    base.nendpoints = 0;
    ck_assert_int_eq (sb_ckpt_target_open ("s3://b/", "", &base, &out, root, sizeof root, err, sizeof err), -1);
    ck_assert_str_eq (err, "checkpoint folder 's3://b/' is in an object store (s3://), but no endpoint came with the"
                      " workload");
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("ckpt_target");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_dataset_on_s3);
    tcase_add_test (tc, test_refusals);
    tcase_add_test (tc, test_local_dataset);
    tcase_add_test (tc, test_open);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
