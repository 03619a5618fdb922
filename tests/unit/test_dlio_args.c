/* dlio_args: the command line mlpstorage builds for dlio_benchmark
 * (DLIOBenchmark.generate_dlio_command: "dlio_benchmark workload=NAME
 * ++hydra.run.dir=DIR ++hydra.output_subdir=dlio_config ++workload.K=V ...
 * --config-dir=CONFIGS/dlio"), word for word, and the malformed forms. */
#include <check.h>
#include "check_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dlio_args.h"

/* Feed argv through sb_dlio_arg as cli.c does; returns -1 at the first
 * error (err set), else how many arguments were not DLIO forms. The
 * overrides to apply are collected in overrides. */
static int
s_parse (sb_dlio_args_t *d, const char **argv, int argc, const char **overrides, size_t *noverrides, char *err,
         size_t err_size)
{
    int others = 0;
    *noverrides = 0;
    for (int i = 0; i < argc; i++) {
        int used = 0;
        const char *ov = NULL;
        int rc = sb_dlio_arg (d, argv[i], i + 1 < argc ? argv[i + 1] : NULL, &used, &ov, err, err_size);
        if (rc < 0)
            return -1;
        others += rc == 0;
        i += used;
        if (ov)
            overrides[(*noverrides)++] = ov;
    }
    return others;
}

/* mlpstorage training run for unet3d on h100: workload, hydra folders, the
 * --params it forwards (dataset.data_folder from --data-dir, skip_listing),
 * then --config-dir */
START_TEST (test_mlpstorage_training_argv)
{
    static const char *argv[] = {
        "workload=unet3d_h100",
        "++hydra.run.dir=/results/closed/acme/results/sys1/training/unet3d/run/20250613_120000",
        "++hydra.output_subdir=dlio_config",
        "++workload.dataset.num_files_train=3500",
        "++workload.dataset.data_folder=/mnt/data/unet3d",
        "++workload.dataset.skip_listing=True",
        "++workload.dataset.listing_validation_interval=1",
        "--config-dir=/opt/mlpstorage/configs/dlio",
    };
    sb_dlio_args_t d = { 0 };
    const char *ov[8];
    size_t nov;
    char err[512] = "";
    ck_assert_int_eq (s_parse (&d, argv, 8, ov, &nov, err, sizeof err), 0);
    ck_assert_str_eq (d.workload, "unet3d_h100");
    ck_assert_str_eq (d.run_dir, "/results/closed/acme/results/sys1/training/unet3d/run/20250613_120000");
    ck_assert_str_eq (d.output_subdir, "dlio_config");
    ck_assert_int_eq (d.output_subdir_null, 0);
    ck_assert_str_eq (d.config_dir, "/opt/mlpstorage/configs/dlio");
    ck_assert_uint_eq (nov, 4);
    ck_assert_str_eq (ov[0], "++workload.dataset.num_files_train=3500");
    ck_assert_str_eq (ov[3], "++workload.dataset.listing_validation_interval=1");
    /* overrides.yaml gets workload=NAME and the workload overrides, not hydra's */
    ck_assert_uint_eq (d.ntask, 5);
    ck_assert_str_eq (d.task[0], "workload=unet3d_h100");
    sb_dlio_args_fini (&d);
}
END_TEST

/* mlpstorage checkpointing, subset: llama3_1t on 8 processes gets
 * checkpoint.mode=subset and model.parallelism.data=2; --config-dir as two
 * words (Hydra takes both), under mpirun's prefix (not ours to see) */
START_TEST (test_mlpstorage_checkpoint_argv)
{
    static const char *argv[] = {
        "workload=llama3_1t", "++hydra.run.dir=/results/checkpointing/llama3-1t/20250613_120000",
        "++hydra.output_subdir=dlio_config", "++workload.checkpoint.mode=subset",
        "++workload.model.parallelism.data=2", "++workload.checkpoint.num_checkpoints_read=10",
        "++workload.checkpoint.num_checkpoints_write=10",
        "++workload.checkpoint.checkpoint_folder=/mnt/ckpt/llama3-1t", "--config-dir", "/opt/configs/dlio",
        "--accelerators", "8",
    };
    sb_dlio_args_t d = { 0 };
    const char *ov[12];
    size_t nov;
    char err[512] = "";
    /* --accelerators and 8 are shardbench's own: two arguments left */
    ck_assert_int_eq (s_parse (&d, argv, 12, ov, &nov, err, sizeof err), 2);
    ck_assert_str_eq (d.workload, "llama3_1t");
    ck_assert_str_eq (d.config_dir, "/opt/configs/dlio");
    ck_assert_uint_eq (nov, 5);
    ck_assert_str_eq (ov[1], "++workload.model.parallelism.data=2");
    sb_dlio_args_fini (&d);
}
END_TEST

/* Each malformed form is refused, naming the argument. */
START_TEST (test_malformed)
{
    static const struct {
        const char *argv[2];
        const char *error;
    } cases[] = {
        { { "workload=", NULL }, "'workload=': workload=NAME needs a name" },
        { { "workload=../etc/x", NULL }, "'workload=../etc/x': workload=NAME needs a name" },
        { { "++workload=unet3d_h100", NULL }, "'++workload=unet3d_h100': the workload is chosen with workload=NAME" },
        { { "+++workload.train.epochs=2", NULL }, "not 3" },
        { { "++workload.train.epochs", NULL }, "'++workload.train.epochs' is not ++workload.KEY=VALUE" },
        { { "++workload.=2", NULL }, "'++workload.=2': 'workload.' is not a dotted key" },
        { { "++workload.train..epochs=2", NULL }, "'workload.train..epochs' is not a dotted key" },
        { { "++dataset.num_files_train=8", NULL }, "'++dataset.num_files_train=8': shardbench takes ++workload." },
        { { "++hydra.run.dir=", NULL }, "'++hydra.run.dir=': hydra.run.dir needs a folder" },
        { { "++hydra.output_subdir=../up", NULL }, "hydra.output_subdir is a folder under hydra.run.dir" },
        { { "++hydra.output_subdir=/abs", NULL }, "hydra.output_subdir is a folder under hydra.run.dir" },
        { { "--config-dir", NULL }, "'--config-dir' needs a folder" },
        { { "--config-dir", "--db" }, "'--config-dir' needs a folder" },
        { { "--config-dir=", NULL }, "'--config-dir=' needs a folder" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_dlio_args_t d = { 0 };
        const char *ov[2];
        size_t nov;
        char err[512] = "";
        int argc = cases[i].argv[1] ? 2 : 1;
        ck_assert_msg (s_parse (&d, (const char **) cases[i].argv, argc, ov, &nov, err, sizeof err) == -1, "%s accepted",
                       cases[i].argv[0]);
        ck_assert_msg (strstr (err, cases[i].error) != NULL, "%s: '%s'", cases[i].argv[0], err);
        sb_dlio_args_fini (&d);
    }
    /* two workload= */
    sb_dlio_args_t d = { 0 };
    const char *two[] = { "workload=a", "workload=b" }, *ov[2];
    size_t nov;
    char err[512] = "";
    ck_assert_int_eq (s_parse (&d, two, 2, ov, &nov, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "'workload=b': the workload is already a"));
    sb_dlio_args_fini (&d);
}
END_TEST

/* Not DLIO forms: shardbench's own arguments pass through untouched. */
START_TEST (test_passthrough)
{
    static const char *argv[] = { "unet3d_h100", "reader.batch_size=4", "model=unet3d", "--local", "2", "-v" };
    sb_dlio_args_t d = { 0 };
    const char *ov[6];
    size_t nov;
    char err[512] = "";
    ck_assert_int_eq (s_parse (&d, argv, 6, ov, &nov, err, sizeof err), 6);
    ck_assert_uint_eq (nov, 0);
    ck_assert_ptr_null (d.workload);
    /* hydra.output_subdir=null: no configuration written; other hydra keys ignored */
    const char *more[] = { "hydra.output_subdir=null", "++hydra.job.chdir=False", "+workload.train.epochs=3",
                           "workload.reader.read_threads=2" };
    ck_assert_int_eq (s_parse (&d, more, 4, ov, &nov, err, sizeof err), 0);
    ck_assert_int_eq (d.output_subdir_null, 1);
    ck_assert_uint_eq (nov, 2);
    ck_assert_str_eq (ov[0], "+workload.train.epochs=3");
    ck_assert_str_eq (ov[1], "workload.reader.read_threads=2");
    sb_dlio_args_fini (&d);
}
END_TEST

/* --config-dir: DIR/workload/NAME.yaml when there, else the caller's presets. */
START_TEST (test_workload_path_and_outputs)
{
    char dir[] = "/tmp/sb_dlio_args_XXXXXX", path[4096], sub[4200], err[512] = "";
    ck_assert_ptr_nonnull (mkdtemp (dir));
    snprintf (sub, sizeof sub, "%s/workload", dir);
    ck_assert_int_eq (mkdir (sub, 0755), 0);
    snprintf (sub, sizeof sub, "%s/workload/mine.yaml", dir);
    FILE *f = fopen (sub, "w");
    ck_assert_ptr_nonnull (f);
    fputs ("model:\n  name: mine\n", f);
    fclose (f);
    sb_dlio_args_t d = { .config_dir = dir };
    ck_assert_int_eq (sb_dlio_workload_path (&d, "mine", path, sizeof path, err, sizeof err), 1);
    ck_assert_str_eq (path, sub);
    ck_assert_int_eq (sb_dlio_workload_path (&d, "unet3d_h100", path, sizeof path, err, sizeof err), 0);
    sb_dlio_args_t none = { .config_dir = "/nonexistent/sb" };
    ck_assert_int_eq (sb_dlio_workload_path (&none, "mine", path, sizeof path, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "--config-dir /nonexistent/sb"));

    /* outputs: RUN_DIR/SUBDIR/config.yaml under workload:, overrides.yaml with secrets redacted */
    const char *argv[] = { "workload=mine", "++hydra.run.dir=X", "++workload.storage.storage_options.secret_access_key=k'ey",
                           "++workload.train.epochs=2" };
    char run_dir[4200];
    snprintf (run_dir, sizeof run_dir, "%s/out/run", dir);
    const char *ov[4];
    size_t nov;
    ck_assert_int_eq (s_parse (&d, argv, 4, ov, &nov, err, sizeof err), 0);
    d.run_dir = run_dir;
    ck_assert_int_eq (sb_dlio_write_outputs (&d, "model:\n  name: mine\n", err, sizeof err), 0);
    char text[1024];
    snprintf (sub, sizeof sub, "%s/.hydra/config.yaml", run_dir);
    f = fopen (sub, "r");
    ck_assert_ptr_nonnull (f);
    size_t n = fread (text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose (f);
    ck_assert_str_eq (text, "workload:\n  model:\n    name: mine\n");
    snprintf (sub, sizeof sub, "%s/.hydra/overrides.yaml", run_dir);
    f = fopen (sub, "r");
    ck_assert_ptr_nonnull (f);
    n = fread (text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose (f);
    ck_assert_str_eq (text, "- 'workload=mine'\n- '++workload.storage.storage_options.secret_access_key=<redacted>'\n"
                      "- '++workload.train.epochs=2'\n");
    sb_dlio_args_fini (&d);
    sb_check_remove_tree (dir);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("dlio_args");
    TCase *tc = tcase_create ("dlio_args");
    tcase_add_test (tc, test_mlpstorage_training_argv);
    tcase_add_test (tc, test_mlpstorage_checkpoint_argv);
    tcase_add_test (tc, test_malformed);
    tcase_add_test (tc, test_passthrough);
    tcase_add_test (tc, test_workload_path_and_outputs);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
