/* results_dir: MLPerf Storage's division of a
 * run by its overrides (mlpstorage's CLOSED / OPEN parameter lists), the
 * path segments it accepts, and the errors of sb_results_dir_write on a
 * real result database: an unknown run, a run still running, options that
 * are not path segments, a leaf holding results already, the next second
 * taken when a leaf exists. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "resultdb.h"
#include "results_dir.h"
#include "util.h"
#include "workload.h"

static char s_dir[64];

static void
s_setup (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/sbresdirXXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
}

static void
s_teardown (void)
{
    sb_check_remove_tree (s_dir);
}

START_TEST (test_division)
{
    const char *closed[] = { "dataset.num_files_train=3500", "++workload.dataset.data_folder=/mnt/d",
                             "+workload.reader.read_threads=8", "workload.reader.odirect=True",
                             "checkpoint.checkpoint_folder=/c", "workflow.generate_data=False",
                             "++workload.workflow.train=True" };
    ck_assert_str_eq (sb_results_dir_division (closed, sizeof closed / sizeof closed[0]), "closed");
    ck_assert_str_eq (sb_results_dir_division (NULL, 0), "closed");
    const char *open[] = { "dataset.num_files_train=3500", "++workload.dataset.num_samples_per_file=2",
                           "framework=tensorflow", "reader.data_loader=dali" };
    ck_assert_str_eq (sb_results_dir_division (open, 4), "open");
    ck_assert_str_eq (sb_results_dir_division (open + 2, 1), "open");
    /* anything neither list names is invalid, and invalid beats open */
    const char *invalid[] = { "framework=tensorflow", "reader.batch_size=4" };
    ck_assert_str_eq (sb_results_dir_division (invalid, 2), "invalid");
    const char *prefix[] = { "dataset.num_files_train_x=1" };   /* a key, not a prefix, matches */
    ck_assert_str_eq (sb_results_dir_division (prefix, 1), "invalid");
    const char *shardbench[] = { "shardbench.sampler=global" };
    ck_assert_str_eq (sb_results_dir_division (shardbench, 1), "invalid");
}
END_TEST

/* checkpointing runs: mlpstorage_py's checkpointing checker, by model and
 * process count */
START_TEST (test_ckpt_division)
{
    ck_assert_str_eq (sb_results_dir_ckpt_division ("llama3-8b", 8), "closed");
    ck_assert_str_eq (sb_results_dir_ckpt_division ("llama3-8b", 16), "open");
    ck_assert_str_eq (sb_results_dir_ckpt_division ("llama3-8b", 2), "invalid");
    ck_assert_str_eq (sb_results_dir_ckpt_division ("llama3-70b", 64), "closed");
    ck_assert_str_eq (sb_results_dir_ckpt_division ("llama3-70b", 8), "open");
    ck_assert_str_eq (sb_results_dir_ckpt_division ("llama3-405b", 512), "closed");
    ck_assert_str_eq (sb_results_dir_ckpt_division ("llama3-405b", 256), "open");
    ck_assert_str_eq (sb_results_dir_ckpt_division ("llama3-405b", 8), "invalid");
    ck_assert_str_eq (sb_results_dir_ckpt_division ("llama3-1t", 1024), "closed");
    ck_assert_str_eq (sb_results_dir_ckpt_division ("llama3-1t", 1536), "open");
    ck_assert_str_eq (sb_results_dir_ckpt_division ("llama3-1t", 0), "invalid");
    ck_assert_str_eq (sb_results_dir_ckpt_division ("unet3d", 8), "invalid");
}
END_TEST

START_TEST (test_name_ok)
{
    ck_assert_int_eq (sb_results_dir_name_ok ("acme-Corp_1.x"), 1);
    ck_assert_int_eq (sb_results_dir_name_ok (""), 0);
    ck_assert_int_eq (sb_results_dir_name_ok ("."), 0);
    ck_assert_int_eq (sb_results_dir_name_ok (".."), 0);
    ck_assert_int_eq (sb_results_dir_name_ok ("a/b"), 0);
    ck_assert_int_eq (sb_results_dir_name_ok ("a b"), 0);
    ck_assert_int_eq (sb_results_dir_name_ok (NULL), 0);
}
END_TEST

/* One run row written through resultdb, with its inputs and a worker. */
static sb_resultdb_t *
s_db_with_run (const char *status)
{
    char path[128], err[512];
    snprintf (path, sizeof path, "%s/r.db", s_dir);
    sb_resultdb_t *db = sb_resultdb_open (path, err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    const char *ovr[] = { "dataset.num_files_train=8" };
    sb_run_inputs_t in = { .version = "9.9", .command_line = "shardbench run x", .full_config = "dataset:\n"
                           "  num_files_train: 8\n", .overrides = ovr, .noverrides = 1 };
    sb_run_info_t info = { .kind = "train", .workload = "unet3d_h100", .config = "dataset:\n  num_files_train: 8\n",
                           .accelerators = 1, .hosts = 1, .workers = 1, .seed = 1, .au_threshold = 0.9,
                           .inputs = &in };
    ck_assert_int_eq (sb_resultdb_run_begin (db, &info), 1);
    ck_assert_int_eq (sb_resultdb_add_worker (db, 1, 0, "h", 1, 1, 0, 2, 1 << 30), 0);
    if (strcmp (status, "running") != 0)
        ck_assert_int_eq (sb_resultdb_run_finish (db, 1, status, NULL), 0);
    return db;
}

START_TEST (test_write_errors)
{
    sb_resultdb_t *db = s_db_with_run ("running");
    char root[128], leaf[4096], err[1024];
    snprintf (root, sizeof root, "%s/res", s_dir);
    sb_results_dir_opts_t o = { .root = root };
    ck_assert_int_eq (sb_results_dir_write (sb_resultdb_handle (db), 2, &o, leaf, sizeof leaf, err, sizeof err), -1);
    ck_assert_str_eq (err, "run 2 does not exist");
    ck_assert_int_eq (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, leaf, sizeof leaf, err, sizeof err), -1);
    ck_assert_str_eq (err, "run 1 is still running");
    o.submitter = "a/b";
    ck_assert_int_eq (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, leaf, sizeof leaf, err, sizeof err), -1);
    ck_assert_str_eq (err, "--submitter and --system are names of letters, digits, '.', '_' and '-'");
    sb_results_dir_opts_t both = { .root = root, .leaf = root };
    ck_assert_int_eq (sb_results_dir_write (sb_resultdb_handle (db), 1, &both, leaf, sizeof leaf, err, sizeof err), -1);
    ck_assert_str_eq (err, "results directory: give a root or a leaf");
    sb_resultdb_destroy (&db);
}
END_TEST

/* a write that fails half way (files limited to 200 bytes, as a full disk
 * would cut them) leaves no half leaf behind: summary.json without its
 * metadata would read as a run */
START_TEST (test_write_fails_half_way)
{
    sb_resultdb_t *db = s_db_with_run ("succeeded");
    char root[128];
    snprintf (root, sizeof root, "%s/res", s_dir);
    /* in a child of its own: Check's own result file is cut short too */
    pid_t pid = fork ();
    ck_assert_int_ge (pid, 0);
    if (pid == 0) {
        char leaf[4096], err[1024];
        sb_results_dir_opts_t o = { .root = root };
        struct rlimit small = { 200, 200 };
        struct stat st;
        if (signal (SIGXFSZ, SIG_IGN) == SIG_ERR || setrlimit (RLIMIT_FSIZE, &small) != 0)
            _exit (10);
        if (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, leaf, sizeof leaf, err, sizeof err) != -1)
            _exit (11);
        if (!strstr (err, " was removed)") || !strstr (err, leaf)) {
            fprintf (stderr, "error: %s\n", err);
            _exit (12);
        }
        _exit (stat (leaf, &st) == -1 && errno == ENOENT ? 0 : 13);
    }
    int status;
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0, "child: status %d", status);
    /* the layout above the leaf stays, with no leaf in it */
    char parent[512];
    snprintf (parent, sizeof parent, "%s/closed/shardbench/results", root);
    struct stat st;
    ck_assert_int_eq (stat (parent, &st), 0);
    sb_resultdb_destroy (&db);
}
END_TEST

START_TEST (test_write_twice)
{
    sb_resultdb_t *db = s_db_with_run ("succeeded");
    char root[128], leaf1[4096], leaf2[4096], err[1024];
    snprintf (root, sizeof root, "%s/res", s_dir);
    sb_results_dir_opts_t o = { .root = root, .submitter = "acme", .system = "sut" };
    ck_assert_int_eq (mkdir (root, 0755), 0);
    ck_assert_msg (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, leaf1, sizeof leaf1, err, sizeof err) == 0,
                   "%s", err);
    ck_assert_msg (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, leaf2, sizeof leaf2, err, sizeof err) == 0,
                   "%s", err);
    /* closed (only num_files_train), unet3d on h100, then the next second */
    char want[4096];
    char real[4096];
    ck_assert_ptr_nonnull (realpath (root, real));
    snprintf (want, sizeof want, "%s/closed/acme/results/sut/training/unet3d/run/", real);
    ck_assert_int_eq (strncmp (leaf1, want, strlen (want)), 0);
    ck_assert_int_eq (strncmp (leaf2, want, strlen (want)), 0);
    ck_assert_str_ne (leaf1, leaf2);
    ck_assert_int_eq (strlen (leaf1), strlen (want) + 15);
    long long t1 = atoll (leaf1 + strlen (leaf1) - 6), t2 = atoll (leaf2 + strlen (leaf2) - 6);
    ck_assert_msg (t2 == t1 + 1 || t2 % 100 == 0, "%s then %s", leaf1, leaf2);
    /* a leaf given holding a summary.json is refused */
    sb_results_dir_opts_t l = { .leaf = leaf1 };
    ck_assert_int_eq (sb_results_dir_write (sb_resultdb_handle (db), 1, &l, leaf2, sizeof leaf2, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "holds the results of a run already (summary.json): not overwritten"));
    sb_resultdb_destroy (&db);
}
END_TEST

/* the run's second and the S_BUMPS (10) after it all taken: the error names
 * that range, from the run's own start to ten seconds later */
START_TEST (test_write_all_taken)
{
    sb_resultdb_t *db = s_db_with_run ("succeeded");
    char root[128], parent[512], real[4096], leaf[4096], err[2048], want[8192];
    snprintf (root, sizeof root, "%s/res", s_dir);
    snprintf (parent, sizeof parent, "%s/closed/acme/results/sut/training/unet3d/run", root);
    ck_assert_int_eq (sb_mkdirs (parent, err, sizeof err), 0);
    ck_assert_ptr_nonnull (realpath (parent, real));
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq (sqlite3_prepare_v2 (sb_resultdb_handle (db), "SELECT started_at FROM runs WHERE id = 1", -1,
                                          &st, NULL), SQLITE_OK);
    ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
    time_t start = (time_t) sqlite3_column_double (st, 0);
    sqlite3_finalize (st);
    char first[32] = "", last[32] = "";
    for (int bump = 0; bump <= 10; bump++) {
        time_t t = start + bump;
        struct tm tm;
        char ts[32], dir[4200];
        localtime_r (&t, &tm);
        strftime (ts, sizeof ts, "%Y%m%d_%H%M%S", &tm);
        snprintf (dir, sizeof dir, "%s/%s", real, ts);
        ck_assert_int_eq (mkdir (dir, 0755), 0);
        snprintf (bump ? last : first, sizeof first, "%s", ts);
    }
    sb_results_dir_opts_t o = { .root = root, .submitter = "acme", .system = "sut" };
    ck_assert_int_eq (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, leaf, sizeof leaf, err, sizeof err), -1);
    snprintf (want, sizeof want, "%s to %s (the run's start and the 10 seconds after it) exist already under %s:"
              " not overwritten", first, last, real);
    ck_assert_str_eq (err, want);
    sb_resultdb_destroy (&db);
}
END_TEST

/* The whole content of path, or "" (at most size - 1 bytes). */
static const char *
s_slurp (const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen (path, "r");
    if (!f)
        return buf;
    size_t n = fread (buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose (f);
    return buf;
}

/* a leaf given (++hydra.run.dir) where someone planted .summary.json.tmp as
 * a link to a file of theirs to be overwritten: the file keeps its bytes,
 * summary.json is a file of its own, and a summary.json that is a link is
 * replaced, never written through */
START_TEST (test_leaf_planted_links)
{
    sb_resultdb_t *db = s_db_with_run ("succeeded");
    char leaf[128], victim[128], link[256], summary[256], out[4096], err[2048], buf[256];
    snprintf (leaf, sizeof leaf, "%s/leaf", s_dir);
    snprintf (victim, sizeof victim, "%s/victim", s_dir);
    ck_assert_int_eq (mkdir (leaf, 0755), 0);
    FILE *f = fopen (victim, "w");
    ck_assert_ptr_nonnull (f);
    fputs ("precious\n", f);
    ck_assert_int_eq (fclose (f), 0);
    snprintf (link, sizeof link, "%s/.summary.json.tmp", leaf);
    ck_assert_int_eq (symlink (victim, link), 0);
    sb_results_dir_opts_t o = { .leaf = leaf, .config_subdir = "dlio_config" };
    int rc = sb_results_dir_write (sb_resultdb_handle (db), 1, &o, out, sizeof out, err, sizeof err);
    ck_assert_str_eq (s_slurp (victim, buf, sizeof buf), "precious\n");
    ck_assert_msg (rc == 0, "%s", err);
    struct stat st;
    snprintf (summary, sizeof summary, "%s/summary.json", leaf);
    ck_assert_int_eq (lstat (summary, &st), 0);
    ck_assert_msg (S_ISREG (st.st_mode), "summary.json is no regular file");
    ck_assert_int_eq (lstat (link, &st), 0);        /* theirs, left alone */
    ck_assert_msg (S_ISLNK (st.st_mode), "the planted link is gone");
    /* written again with --overwrite over a summary.json that is a link */
    ck_assert_int_eq (unlink (summary), 0);
    ck_assert_int_eq (symlink (victim, summary), 0);
    o.overwrite = 1;
    ck_assert_msg (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, out, sizeof out, err, sizeof err) == 0, "%s",
                   err);
    ck_assert_str_eq (s_slurp (victim, buf, sizeof buf), "precious\n");
    ck_assert_int_eq (lstat (summary, &st), 0);
    ck_assert_msg (S_ISREG (st.st_mode), "summary.json is no regular file");
    sb_resultdb_destroy (&db);
}
END_TEST

/* a leaf given that holds a file of another run's results (dlio.log) is
 * refused, naming it, and the file kept; with overwrite it is replaced */
START_TEST (test_leaf_holds_results)
{
    sb_resultdb_t *db = s_db_with_run ("succeeded");
    char leaf[128], log[256], out[4096], err[2048], want[1024], buf[4096];
    snprintf (leaf, sizeof leaf, "%s/leaf", s_dir);
    ck_assert_int_eq (mkdir (leaf, 0755), 0);
    snprintf (log, sizeof log, "%s/dlio.log", leaf);
    FILE *f = fopen (log, "w");
    ck_assert_ptr_nonnull (f);
    fputs ("an earlier run\n", f);
    ck_assert_int_eq (fclose (f), 0);
    sb_results_dir_opts_t o = { .leaf = leaf, .config_subdir = "dlio_config" };
    ck_assert_int_eq (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, out, sizeof out, err, sizeof err), -1);
    snprintf (want, sizeof want, "%s holds the results of a run already (dlio.log): not overwritten (--overwrite"
              " replaces them)", leaf);
    ck_assert_str_eq (err, want);
    ck_assert_str_eq (s_slurp (log, buf, sizeof buf), "an earlier run\n");
    char summary[256];
    snprintf (summary, sizeof summary, "%s/summary.json", leaf);
    ck_assert_int_eq (access (summary, F_OK), -1);
    /* the configuration folder counts too */
    ck_assert_int_eq (sb_results_dir_leaf_check (leaf, "dlio_config", 0, err, sizeof err), -1);
    ck_assert_str_eq (err, want);
    ck_assert_int_eq (unlink (log), 0);
    ck_assert_int_eq (sb_results_dir_leaf_check (leaf, "dlio_config", 0, err, sizeof err), 0);
    char cfg[256];
    snprintf (cfg, sizeof cfg, "%s/dlio_config", leaf);
    ck_assert_int_eq (mkdir (cfg, 0755), 0);
    snprintf (cfg, sizeof cfg, "%s/dlio_config/overrides.yaml", leaf);
    f = fopen (cfg, "w");
    ck_assert_ptr_nonnull (f);
    ck_assert_int_eq (fclose (f), 0);
    ck_assert_int_eq (sb_results_dir_leaf_check (leaf, "dlio_config", 0, err, sizeof err), -1);
    snprintf (want, sizeof want, "%s holds the results of a run already (dlio_config/overrides.yaml): not"
              " overwritten (--overwrite replaces them)", leaf);
    ck_assert_str_eq (err, want);
    /* ... unless this command wrote it at its start */
    ck_assert_int_eq (sb_results_dir_leaf_check (leaf, "dlio_config", 1, err, sizeof err), 0);
    ck_assert_int_eq (unlink (cfg), 0);
    f = fopen (log, "w");
    ck_assert_ptr_nonnull (f);
    ck_assert_int_eq (fclose (f), 0);
    o.overwrite = 1;
    ck_assert_msg (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, out, sizeof out, err, sizeof err) == 0, "%s",
                   err);
    ck_assert_int_eq (strncmp (s_slurp (log, buf, sizeof buf), "[INFO] ", 7), 0);
    ck_assert_int_eq (access (summary, F_OK), 0);
    sb_resultdb_destroy (&db);
}
END_TEST

/* a leaf that is a symbolic link another user made (in /tmp, say) is
 * refused: results would go where that user chose */
START_TEST (test_leaf_foreign_link)
{
    if (geteuid () != 0)
        return;     /* a link of another owner needs root to make */
    sb_resultdb_t *db = s_db_with_run ("succeeded");
    char leaf[128], target[128], out[4096], err[2048], want[1024];
    snprintf (leaf, sizeof leaf, "%s/leaf", s_dir);
    snprintf (target, sizeof target, "%s/theirs", s_dir);
    ck_assert_int_eq (mkdir (target, 0755), 0);
    ck_assert_int_eq (symlink (target, leaf), 0);
    ck_assert_int_eq (lchown (leaf, 4242, 4242), 0);
    sb_results_dir_opts_t o = { .leaf = leaf, .config_subdir = "dlio_config", .overwrite = 1 };
    ck_assert_int_eq (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, out, sizeof out, err, sizeof err), -1);
    snprintf (want, sizeof want, "%s is a symbolic link of user 4242, not yours: refused (results written through"
              " it would go where its owner chose)", leaf);
    ck_assert_str_eq (err, want);
    char slash[160];
    snprintf (slash, sizeof slash, "%s/", leaf);    /* the link still, not the folder it names */
    o.leaf = slash;
    ck_assert_int_eq (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, out, sizeof out, err, sizeof err), -1);
    snprintf (want, sizeof want, "%s is a symbolic link of user 4242, not yours: refused (results written through"
              " it would go where its owner chose)", slash);
    ck_assert_str_eq (err, want);
    o.leaf = leaf;
    char summary[256];
    snprintf (summary, sizeof summary, "%s/summary.json", target);
    ck_assert_int_eq (access (summary, F_OK), -1);
    /* a link of one's own is followed */
    ck_assert_int_eq (lchown (leaf, geteuid (), getegid ()), 0);
    ck_assert_msg (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, out, sizeof out, err, sizeof err) == 0, "%s",
                   err);
    ck_assert_int_eq (access (summary, F_OK), 0);
    sb_resultdb_destroy (&db);
}
END_TEST

/* what the run records of its command line: a credential's value is cut
 * off where sb_workload_secret_value says, a mapping that names one whole */
START_TEST (test_secret_value)
{
    const char *a = "storage.storage_options.secret_access_key=SK";
    ck_assert_ptr_eq (sb_workload_secret_value (a), a + strlen (a) - 2);
    const char *b = "++workload.storage.storage_options={access_key_id: AK, secret_access_key: SK}";
    ck_assert_ptr_eq (sb_workload_secret_value (b), strchr (b, '=') + 1);
    const char *c = "storage.storage_options= [session_token, x]";
    ck_assert_ptr_eq (sb_workload_secret_value (c), strchr (c, '=') + 1);
    ck_assert_ptr_null (sb_workload_secret_value ("dataset.record_length_bytes_resize={type: normal, mean: 5}"));
    ck_assert_ptr_null (sb_workload_secret_value ("reader.batch_size=4"));
    ck_assert_ptr_null (sb_workload_secret_value ("--label"));
    ck_assert_ptr_null (sb_workload_secret_value ("storage.storage_options.secret_access_key"));
    /* a key too long to tell is redacted rather than cut short */
    char k[700];
    memset (k, 'a', 600);
    snprintf (k + 600, sizeof k - 600, "=v");
    ck_assert_ptr_eq (sb_workload_secret_value (k), k + 601);
}
END_TEST

/* the JSON and YAML writers keep well-formed UTF-8 and nothing else */
START_TEST (test_utf8)
{
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "a"), 1);
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) ""), 0);
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\xc3\xa9"), 2);             /* e acute */
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\xe2\x82\xac"), 3);         /* euro */
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\xf0\x9f\x98\x80"), 4);     /* U+1F600 */
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\xf4\x8f\xbf\xbf"), 4);     /* U+10FFFF */
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\xf4\x90\x80\x80"), 0);     /* past it */
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\xc0\xaf"), 0);             /* overlong '/' */
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\xe0\x80\xaf"), 0);         /* overlong */
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\xed\xa0\x80"), 0);         /* surrogate */
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\xc3"), 0);                 /* cut short */
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\xe2\x82"), 0);
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\x80"), 0);                 /* continuation */
    ck_assert_uint_eq (sb_utf8_seq ((const unsigned char *) "\xff"), 0);
    ck_assert_int_eq (sb_utf8_valid ("caf\xc3\xa9 \xe2\x82\xac"), 1);
    ck_assert_int_eq (sb_utf8_valid ("caf\xe9"), 0);                                     /* Latin-1 */
    ck_assert_int_eq (sb_utf8_valid (""), 1);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("results_dir");
    TCase *tc = tcase_create ("core");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_division);
    tcase_add_test (tc, test_ckpt_division);
    tcase_add_test (tc, test_write_fails_half_way);
    tcase_add_test (tc, test_name_ok);
    tcase_add_test (tc, test_write_errors);
    tcase_add_test (tc, test_write_twice);
    tcase_add_test (tc, test_write_all_taken);
    tcase_add_test (tc, test_leaf_planted_links);
    tcase_add_test (tc, test_leaf_holds_results);
    tcase_add_test (tc, test_leaf_foreign_link);
    tcase_add_test (tc, test_secret_value);
    tcase_add_test (tc, test_utf8);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
