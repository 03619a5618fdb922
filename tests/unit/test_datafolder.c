/* datafolder: lock, marker, scan, probe and temporary names of a local data
 * folder, on real files in a scratch folder. */
#include <check.h>
#include "check_main.h"
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datafolder.h"

static char s_dir[PATH_MAX];

static void
s_setup (void)
{
    snprintf (s_dir, sizeof s_dir, "%s/sb-datafolder-XXXXXX", getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
}

static void
s_teardown (void)
{
    char cmd[PATH_MAX + 16];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    ck_assert_int_eq (system (cmd), 0);
}

static void
s_touch (const char *rel, const char *content)
{
    char path[PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", s_dir, rel);
    FILE *f = fopen (path, "w");
    ck_assert_ptr_nonnull (f);
    fputs (content, f);
    ck_assert_int_eq (fclose (f), 0);
}

static int
s_exists (const char *rel)
{
    char path[PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", s_dir, rel);
    return access (path, F_OK) == 0;
}

static const sb_dataset_t s_ds = { .prefix = "img", .format = "npz", .files = 8, .subfolders = 0,
                                   .samples_per_file = 1, .record_length = 4096, .record_stdev = 0, .seed = 123 };

START_TEST (test_marker)
{
    char err[1024], diff[1024];
    sb_datafolder_marker_t m;
    ck_assert_int_eq (sb_datafolder_marker_read (s_dir, &m, err, sizeof err), 0);
    ck_assert_int_eq (sb_datafolder_marker_write (s_dir, &s_ds, "complete", 36560, err, sizeof err), 0);
    ck_assert_int_eq (sb_datafolder_marker_read (s_dir, &m, err, sizeof err), 1);
    ck_assert_str_eq (m.state, "complete");
    ck_assert_str_eq (m.format, "npz");
    ck_assert_str_eq (m.file_prefix, "img");
    ck_assert_uint_eq (m.files, 8);
    ck_assert_uint_eq (m.record_length, 4096);
    ck_assert_uint_eq (m.seed, 123);
    ck_assert_uint_eq (m.bytes, 36560);
    int flags = SB_DATAFOLDER_DIFF_FILES | SB_DATAFOLDER_DIFF_SEED;
    ck_assert_int_eq (sb_datafolder_marker_diff (&m, &s_ds, flags, diff, sizeof diff), 0);
    ck_assert_str_eq (diff, "");
    sb_dataset_t other = s_ds;
    other.prefix = "x";
    other.files = 4;
    other.seed = 5;
    ck_assert_int_eq (sb_datafolder_marker_diff (&m, &other, flags, diff, sizeof diff), 3);
    ck_assert_str_eq (diff, "dataset.file_prefix: generated 'img', workload 'x'; dataset.num_files_train: generated 8,"
                            " workload 4; seed: generated 123, workload 5");
    /* a run may read fewer files; the seed is compared on request */
    ck_assert_int_eq (sb_datafolder_marker_diff (&m, &other, 0, diff, sizeof diff), 1);
    ck_assert_str_eq (diff, "dataset.file_prefix: generated 'img', workload 'x'");
    /* no temporary left beside it */
    char cmd[PATH_MAX + 64];
    snprintf (cmd, sizeof cmd, "test -z \"$(find '%s' -name '*.tmp')\"", s_dir);
    ck_assert_int_eq (system (cmd), 0);
    /* garbage is named by file and line, never taken as a marker */
    s_touch (SB_DATAFOLDER_MARKER, "state=complete\ndataset.num_files_train=12x\n");
    ck_assert_int_eq (sb_datafolder_marker_read (s_dir, &m, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "/.shardbench-dataset:2: bad value for dataset.num_files_train: '12x'"));
    s_touch (SB_DATAFOLDER_MARKER, "hello\n");
    ck_assert_int_eq (sb_datafolder_marker_read (s_dir, &m, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "/.shardbench-dataset:1: not KEY=VALUE"));
    s_touch (SB_DATAFOLDER_MARKER, "seed=1\n");
    ck_assert_int_eq (sb_datafolder_marker_read (s_dir, &m, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "not a shardbench dataset marker"));
    ck_assert_int_eq (sb_datafolder_marker_remove (s_dir, err, sizeof err), 0);
    ck_assert_int_eq (sb_datafolder_marker_read (s_dir, &m, err, sizeof err), 0);
}
END_TEST

START_TEST (test_scan)
{
    char err[1024], path[PATH_MAX];
    snprintf (path, sizeof path, "%s/train/3", s_dir);
    char mk[PATH_MAX + 16];
    snprintf (mk, sizeof mk, "mkdir -p '%s'", path);
    ck_assert_int_eq (system (mk), 0);
    s_touch ("train/img_0_of_8.npz", "12345");
    s_touch ("train/3/other_03_of_10.jpeg", "123");
    s_touch ("train/.img_1_of_8.npz.node.42.0badcafe.tmp", "x");
    s_touch ("train/3/.img_2_of_8.npz.tmp", "x");
    s_touch ("train/notes.txt", "mine");
    s_touch ("train/img_of_8.npz", "no index");
    s_touch ("train/_1_of_8.npz", "no prefix");     /* an empty dataset.file_prefix: DLIO's name */
    s_touch ("train/2_of_8.npz", "no _");
    sb_datafolder_scan_t scan;
    ck_assert_int_eq (sb_datafolder_scan (s_dir, 0, &scan, err, sizeof err), 0);
    ck_assert_uint_eq (scan.dataset_files, 3);
    ck_assert_uint_eq (scan.dataset_bytes, 17);
    ck_assert_uint_eq (scan.temporaries, 2);
    ck_assert_uint_eq (scan.others, 3);
    ck_assert_uint_eq (scan.removed, 0);
    ck_assert_int_eq (sb_datafolder_scan (s_dir, SB_DATAFOLDER_REMOVE_TEMPORARIES, &scan, err, sizeof err), 0);
    ck_assert_uint_eq (scan.removed, 2);
    ck_assert (s_exists ("train/img_0_of_8.npz"));
    ck_assert (!s_exists ("train/3/.img_2_of_8.npz.tmp"));
    ck_assert_int_eq (sb_datafolder_scan (s_dir, SB_DATAFOLDER_REMOVE_DATASET, &scan, err, sizeof err), 0);
    ck_assert_uint_eq (scan.removed, 3);
    ck_assert (!s_exists ("train/img_0_of_8.npz"));
    ck_assert (!s_exists ("train/_1_of_8.npz"));
    ck_assert (s_exists ("train/2_of_8.npz"));
    ck_assert (!s_exists ("train/3"));          /* emptied subfolder removed */
    ck_assert (s_exists ("train/notes.txt"));   /* never removed */
    ck_assert (s_exists ("train/img_of_8.npz"));
    ck_assert (s_exists ("train"));
    /* a missing train/ is empty */
    snprintf (mk, sizeof mk, "rm -rf '%s/train'", s_dir);
    ck_assert_int_eq (system (mk), 0);
    ck_assert_int_eq (sb_datafolder_scan (s_dir, 0, &scan, err, sizeof err), 0);
    ck_assert_uint_eq (scan.dataset_files + scan.temporaries + scan.others, 0);
}
END_TEST

START_TEST (test_probe)
{
    char err[1024], name[64], root[PATH_MAX];
    snprintf (root, sizeof root, "%s/", s_dir);
    ck_assert_int_eq (sb_datafolder_probe_create (s_dir, name, sizeof name, err, sizeof err), 0);
    ck_assert_uint_eq (strlen (name), strlen (SB_DATAFOLDER_PROBE) + 32);
    ck_assert_int_eq (sb_datafolder_probe_check (root, name, err, sizeof err), 0);
    /* names from the coordinator are checked, not trusted */
    ck_assert_int_eq (sb_datafolder_probe_check (root, "../../etc/passwd", err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "malformed probe name '../../etc/passwd'"));
    ck_assert_int_eq (sb_datafolder_probe_check (root, ".shardbench-probe-../../../../../etc/passwd", err, sizeof err),
                      -1);
    ck_assert_ptr_nonnull (strstr (err, "malformed probe name"));
    /* another token's file: absent */
    char other[64];
    snprintf (other, sizeof other, "%s%032d", SB_DATAFOLDER_PROBE, 7);
    ck_assert_int_eq (sb_datafolder_probe_check (root, other, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "No such file or directory"));
    /* the right name, other content (another folder at that path) */
    s_touch (other, "00000000000000000000000000000008\n");
    ck_assert_int_eq (sb_datafolder_probe_check (root, other, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "holds other bytes than the coordinator wrote (33 bytes)"));
}
END_TEST

START_TEST (test_lock)
{
    char err[1024];
    int a = sb_datafolder_lock (s_dir, 1, "datagen", err, sizeof err);
    ck_assert_int_ge (a, 0);
    char host[256] = "";
    gethostname (host, sizeof host - 1);
    char want[600];
    snprintf (want, sizeof want, "data folder %s is in use: datagen on host %s pid %ld since ", s_dir, host,
              (long) getpid ());
    ck_assert_int_eq (sb_datafolder_lock (s_dir, 1, "datagen", err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, want));
    ck_assert_int_eq (sb_datafolder_lock (s_dir, 0, "run", err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, want));
    sb_datafolder_unlock (&a);
    ck_assert_int_eq (a, -1);
    /* readers share; a writer waits for them */
    int r1 = sb_datafolder_lock (s_dir, 0, "run", err, sizeof err);
    int r2 = sb_datafolder_lock (s_dir, 0, "run", err, sizeof err);
    ck_assert_int_ge (r1, 0);
    ck_assert_int_ge (r2, 0);
    ck_assert_int_eq (sb_datafolder_lock (s_dir, 1, "datagen", err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "is in use by another shardbench session reading it"));
    ck_assert_int_eq (sb_datafolder_lock_upgrade (r1, s_dir, "run", err, sizeof err), -1);
    sb_datafolder_unlock (&r2);
    ck_assert_int_eq (sb_datafolder_lock_upgrade (r1, s_dir, "run", err, sizeof err), 0);
    ck_assert_int_eq (sb_datafolder_lock (s_dir, 0, "run", err, sizeof err), -1);
    sb_datafolder_unlock (&r1);
}
END_TEST

START_TEST (test_temp_name)
{
    char a[PATH_MAX], b[PATH_MAX];
    ck_assert_int_eq (sb_datafolder_temp_name (a, sizeof a, "/d/train", "img_1_of_8.npz", "node a/b"), 0);
    ck_assert_int_eq (sb_datafolder_temp_name (b, sizeof b, "/d/train", "img_1_of_8.npz", "node a/b"), 0);
    char head[128];
    snprintf (head, sizeof head, "/d/train/.img_1_of_8.npz.node_a_b.%ld.", (long) getpid ());
    ck_assert_int_eq (strncmp (a, head, strlen (head)), 0);
    ck_assert_uint_eq (strlen (a), strlen (head) + 8 + 4);
    ck_assert_str_eq (a + strlen (a) - 4, ".tmp");
    ck_assert_str_ne (a, b);    /* two writers in one process: two names */
    char small[24];
    ck_assert_int_eq (sb_datafolder_temp_name (small, sizeof small, "/d/train", "img_1_of_8.npz", "h"), -1);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("datafolder");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 100);
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_marker);
    tcase_add_test (tc, test_scan);
    tcase_add_test (tc, test_probe);
    tcase_add_test (tc, test_lock);
    tcase_add_test (tc, test_temp_name);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
