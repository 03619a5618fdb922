/* The configuration failures of the upstream workload files, one test each, in the shapes
 * the upstream workload files (mlcommons/storage, DLIO_local_changes) give
 * them: what was rejected loads with the exact fields, what was run wrong
 * is read into the fields that decide the run, and DLIO keys that only
 * warned "unknown key" are known. (Storage keys, credentials and the
 * parquet column limit: test_storage_keys.c.) */
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

static sb_workload_t s_wl;  /* large: not on the stack */
static const char *s_err = "";   /* the last s_load's error */
static char s_log[65536];       /* what the last s_load logged */

/* Load yaml into s_wl with stderr captured into s_log. Returns the error
 * text ("" on success). */
static const char *
s_load (const char *yaml)
{
    s_err = sb_test_workload_load_logged (yaml, NULL, &s_wl, s_log, sizeof s_log);
    return s_err;
}

/* `model: resnet50` (a scalar, as DLIO accepts it) names the model */
START_TEST (test_model_scalar)
{
    ck_assert_str_eq (s_load ("model: resnet50\nframework: pytorch\n"), "");
    ck_assert_str_eq (s_wl.model_name, "resnet50");
    ck_assert_str_eq (s_load ("model:\n  name: unet3d\n  type: cnn\n"), "");
    ck_assert_str_eq (s_wl.model_name, "unet3d");
    ck_assert_str_eq (s_wl.ckpt.model_type, "cnn");
}
END_TEST

/* DLIO_local_changes's dlrm.yaml and megatron_deepspeed_LLNL.yaml: the
 * indexed binary formats load; csv is refused naming the key */
START_TEST (test_indexed_binary_formats)
{
    ck_assert_str_eq (s_load ("dataset:\n  format: indexed_binary\n  num_files_train: 1\n"
                              "  num_samples_per_file: 1024\n  record_length_bytes: 4096\n"), "");
    ck_assert_str_eq (s_wl.format, "indexed_binary");
    ck_assert_uint_eq (s_wl.num_samples_per_file, 1024);
    ck_assert_str_eq (s_load ("dataset:\n  format: mmap_indexed_binary\n"), "");
    ck_assert_str_eq (s_wl.format, "mmap_indexed_binary");
    ck_assert_str_ne (s_load ("dataset:\n  format: csv\n"), "");
    ck_assert_msg (strstr (s_err, "w.yaml:2: key 'dataset.format'") == s_err, "%s", s_err);
}
END_TEST

/* workflow.*: read as DLIO's defaults and values (the session decides
 * the phases from these fields: test_workflow.sh) */
START_TEST (test_workflow_flags)
{
    ck_assert_str_eq (s_load ("train:\n  epochs: 1\n"), "");
    ck_assert_int_eq (s_wl.generate_data, 0);
    ck_assert_int_eq (s_wl.do_train, 1);
    ck_assert_int_eq (s_wl.do_eval, 0);
    ck_assert_int_eq (s_wl.do_checkpoint, 0);
    ck_assert_int_eq (s_wl.ckpt.in_train, 0);
    /* a *_datagen.yaml */
    ck_assert_str_eq (s_load ("workflow:\n  generate_data: True\n  train: False\n"), "");
    ck_assert_int_eq (s_wl.generate_data, 1);
    ck_assert_int_eq (s_wl.do_train, 0);
    /* llama3_*.yaml: the checkpoint workflow, no checkpoints during training */
    ck_assert_str_eq (s_load ("workflow:\n  generate_data: False\n  train: False\n  checkpoint: True\n"), "");
    ck_assert_int_eq (s_wl.do_checkpoint, 1);
    ck_assert_int_eq (s_wl.ckpt.in_train, 0);
    /* unet3d_a100.yaml: checkpoints during training */
    ck_assert_str_eq (s_load ("workflow:\n  train: True\n  checkpoint: True\n  evaluation: True\n"), "");
    ck_assert_int_eq (s_wl.ckpt.in_train, 1);
    ck_assert_int_eq (s_wl.do_eval, 1);
    ck_assert_str_ne (s_load ("workflow:\n  train: maybe\n"), "");
    ck_assert_msg (strstr (s_err, "w.yaml:2: key 'workflow.train'") == s_err, "%s", s_err);
}
END_TEST

/* evaluation: num_files_eval, batch_size_eval, eval_time and the schedule,
 * with dlrm_s3dlio_s3.yaml's epochs_between_evals 0 */
START_TEST (test_evaluation_keys)
{
    ck_assert_str_eq (s_load ("dataset:\n  num_files_eval: 4\n  num_subfolders_eval: 2\nreader:\n  batch_size_eval: 3\n"
                              "evaluation:\n  eval_time: 0.5\n  eval_time_stdev: 0.1\n  eval_after_epoch: 2\n"
                              "  epochs_between_evals: 0\n"), "");
    ck_assert_uint_eq (s_wl.num_files_eval, 4);
    ck_assert_uint_eq (s_wl.num_subfolders_eval, 2);
    ck_assert_uint_eq (s_wl.batch_size_eval, 3);
    ck_assert (s_wl.eval_time == 0.5);
    ck_assert (s_wl.eval_time_stdev == 0.1);
    ck_assert_uint_eq (s_wl.eval_after_epoch, 2);
    ck_assert_uint_eq (s_wl.epochs_between_evals, 0);
    /* the mapping form */
    ck_assert_str_eq (s_load ("evaluation:\n  eval_time:\n    mean: 0.25\n    stdev: 0.05\n"), "");
    ck_assert (s_wl.eval_time == 0.25);
    ck_assert (s_wl.eval_time_stdev == 0.05);
    ck_assert_str_ne (s_load ("reader:\n  batch_size_eval: 0\n"), "");
    ck_assert_msg (strstr (s_err, "w.yaml:2: key 'reader.batch_size_eval'") == s_err, "%s", s_err);
}
END_TEST

/* unet3d_a100.yaml's checkpoint schedule and the model size DLIO reads */
START_TEST (test_checkpoint_schedule)
{
    ck_assert_str_eq (s_load ("model:\n  name: unet3d\n  type: cnn\n  model_size_bytes: 499153191\n"
                              "checkpoint:\n  checkpoint_folder: ckpt/unet3d\n  checkpoint_after_epoch: 5\n"
                              "  epochs_between_checkpoints: 2\n"), "");
    ck_assert_int_eq (s_wl.ckpt.after_epoch, 5);
    ck_assert_int_eq (s_wl.ckpt.epochs_between, 2);
    ck_assert_int_eq (s_wl.ckpt.steps_between, -1);
    ck_assert_uint_eq (s_wl.ckpt.model_size, 499153191);
    ck_assert_str_eq (s_wl.ckpt.folder, "ckpt/unet3d");
    ck_assert_str_eq (s_load ("checkpoint:\n  steps_between_checkpoints: 4\n"), "");
    ck_assert_int_eq (s_wl.ckpt.steps_between, 4);
    /* model.model_size is not DLIO's key: DLIO's default 10240 bytes, with a warning */
    ck_assert_str_eq (s_load ("model:\n  type: cnn\n  model_size: 499153191\n"), "");
    ck_assert_uint_eq (s_wl.ckpt.model_size, 10240);
    ck_assert_msg (strstr (s_log, "w.yaml:3: key 'model.model_size' is not read by DLIO") != NULL, "%s", s_log);
}
END_TEST

/* dataset.record_element_type and record_dims size records as DLIO does */
START_TEST (test_record_shape)
{
    ck_assert_str_eq (s_load ("dataset:\n  format: npz\n  record_element_type: float32\n  record_dims: [2, 3, 4]\n"),
                      "");
    ck_assert_str_eq (s_wl.record_element_type, "float32");
    ck_assert_uint_eq (s_wl.record_ndims, 3);
    ck_assert_uint_eq (s_wl.record_dims[0], 2);
    ck_assert_uint_eq (s_wl.record_dims[2], 4);
    ck_assert_uint_eq (s_wl.record_length_bytes, 2 * 3 * 4 * 4);
    ck_assert_str_ne (s_load ("dataset:\n  record_element_type: float128\n"), "");
    ck_assert_msg (strstr (s_err, "w.yaml:2: key 'dataset.record_element_type'") == s_err, "%s", s_err);
}
END_TEST

/* DLIO keys upstream files use, once warned as "unknown key": all known now */
START_TEST (test_dlio_keys_known)
{
    ck_assert_str_eq (s_load ("reader:\n  odirect: false\n  preprocess_time: 0\n  pin_memory: true\n"
                              "  file_access: multi\n  data_loader_sampler: index\n"
                              "  multiprocessing_context: spawn\n  batch_size_eval: 2\n"
                              "train:\n  computation_time: 0.1\n  computation_time_stdev: 0.01\n"
                              "dataset:\n  record_dims: [64, 64]\n  record_element_type: uint8\n"
                              "  num_files_eval: 2\n"
                              "workflow:\n  debug: false\n  profiling: false\n"), "");
    ck_assert_msg (strstr (s_log, "unknown key") == NULL, "%s", s_log);
    ck_assert_str_eq (s_wl.data_loader_sampler, "index");
    ck_assert_uint_eq (s_wl.record_length_bytes, 4096);
    ck_assert_int_eq (s_wl.compute.type, SB_DIST_NORMAL);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("upstream_config");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_model_scalar);
    tcase_add_test (tc, test_indexed_binary_formats);
    tcase_add_test (tc, test_workflow_flags);
    tcase_add_test (tc, test_evaluation_keys);
    tcase_add_test (tc, test_checkpoint_schedule);
    tcase_add_test (tc, test_record_shape);
    tcase_add_test (tc, test_dlio_keys_known);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
