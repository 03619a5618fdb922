/* datafolder: lock, marker, scan, probe and temporary names of a local data
 * folder, on real files in a scratch folder. */
#include <check.h>
#include "check_main.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
    sb_check_remove_tree (s_dir);
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

/* A subfolder of train/ swapped for a symbolic link between the scan's
 * look at it and its opening (another host on a shared file system): this
 * test's opendir and openat64 stand in front of the C library's and, when
 * armed, make the swap just before the subfolder s_swap_name is opened. */
static const char *s_swap_name;
static int s_swapped;

static void
s_swap_maybe (const char *name)
{
    const char *base = strrchr (name, '/');
    base = base ? base + 1 : name;
    if (!s_swap_name || strcmp (base, s_swap_name) != 0)
        return;
    char dir[PATH_MAX], away[PATH_MAX], victim[PATH_MAX];
    snprintf (dir, sizeof dir, "%s/train/%s", s_dir, s_swap_name);
    snprintf (away, sizeof away, "%s/away", s_dir);
    snprintf (victim, sizeof victim, "%s/victim", s_dir);
    s_swap_name = NULL;
    if (rename (dir, away) == 0 && symlink (victim, dir) == 0)
        s_swapped = 1;
}

DIR *
opendir (const char *name)
{
    union { void *p; DIR *(*f) (const char *); } real = { dlsym (RTLD_NEXT, "opendir") };
    s_swap_maybe (name);
    return real.f (name);
}

int
openat64 (int fd, const char *name, int flags, ...)
{
    union { void *p; int (*f) (int, const char *, int, ...); } real = { dlsym (RTLD_NEXT, "openat64") };
    unsigned mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start (ap, flags);
        mode = va_arg (ap, unsigned);
        va_end (ap);
    }
    s_swap_maybe (name);
    return real.f (fd, name, flags, mode);
}

static int
s_is_link (const char *rel)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf (path, sizeof path, "%s/%s", s_dir, rel);
    return lstat (path, &st) == 0 && S_ISLNK (st.st_mode);
}

static void
s_sh (const char *fmt, const char *arg)
{
    char cmd[4 * PATH_MAX];
    snprintf (cmd, sizeof cmd, fmt, arg, arg, arg, arg);
    ck_assert_int_eq (system (cmd), 0);
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
    /* the element type and the dims decide the sizes too: recorded and compared */
    ck_assert_str_eq (m.element_type, "uint8");
    ck_assert_str_eq (m.record_dims, "");
    other = s_ds;
    other.element_type = "float32";
    const uint64_t dims[3] = { 1, 64, 64 };
    other.record_dims = dims;
    other.record_ndims = 3;
    ck_assert_int_eq (sb_datafolder_marker_diff (&m, &other, flags, diff, sizeof diff), 2);
    ck_assert_str_eq (diff, "dataset.record_element_type: generated 'uint8', workload 'float32';"
                            " dataset.record_dims: generated '', workload '1,64,64'");
    ck_assert_int_eq (sb_datafolder_marker_write (s_dir, &other, "complete", 1, err, sizeof err), 0);
    ck_assert_int_eq (sb_datafolder_marker_read (s_dir, &m, err, sizeof err), 1);
    ck_assert_str_eq (m.element_type, "float32");
    ck_assert_str_eq (m.record_dims, "1,64,64");
    ck_assert_int_eq (sb_datafolder_marker_diff (&m, &other, flags, diff, sizeof diff), 0);
    /* a marker of an older shardbench has neither: not compared */
    s_touch (SB_DATAFOLDER_MARKER, "state=complete\ndataset.format=npz\ndataset.file_prefix=img\n"
             "dataset.num_files_train=8\ndataset.num_subfolders_train=0\ndataset.num_samples_per_file=1\n"
             "dataset.record_length_bytes=4096\ndataset.record_length_bytes_stdev=0\nseed=123\n");
    ck_assert_int_eq (sb_datafolder_marker_read (s_dir, &m, err, sizeof err), 1);
    ck_assert_int_eq (sb_datafolder_marker_diff (&m, &other, flags, diff, sizeof diff), 0);
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

/* train -> elsewhere (the user's layout): scanned and cleaned inside its
 * target; the link and its target folder stay */
START_TEST (test_scan_linked_train)
{
    char err[1024];
    sb_datafolder_scan_t scan;
    s_sh ("mkdir -p '%s/elsewhere/3' && ln -s elsewhere '%s/train'", s_dir);
    s_touch ("elsewhere/img_0_of_8.npz", "12345");
    s_touch ("elsewhere/3/img_1_of_8.npz", "123");
    s_touch ("elsewhere/.img_2_of_8.npz.node.42.0badcafe.tmp", "x");
    ck_assert_int_eq (sb_datafolder_scan (s_dir, 0, &scan, err, sizeof err), 0);
    ck_assert_uint_eq (scan.dataset_files, 2);
    ck_assert_uint_eq (scan.dataset_bytes, 8);
    ck_assert_uint_eq (scan.temporaries, 1);
    ck_assert_uint_eq (scan.others, 0);
    int all = SB_DATAFOLDER_REMOVE_DATASET | SB_DATAFOLDER_REMOVE_TEMPORARIES;
    err[0] = '\0';
    ck_assert_msg (sb_datafolder_scan (s_dir, all, &scan, err, sizeof err) == 0, "scan failed: %s", err);
    ck_assert_uint_eq (scan.removed, 3);
    ck_assert (s_is_link ("train"));
    ck_assert (s_exists ("elsewhere"));
    ck_assert (!s_exists ("elsewhere/img_0_of_8.npz"));
    ck_assert (!s_exists ("elsewhere/3"));      /* an emptied subfolder inside the target goes */
    /* a link to nothing is named, not taken for a missing train/ */
    s_sh ("rm '%s/train' && ln -s nowhere '%s/train'", s_dir);
    ck_assert_int_eq (sb_datafolder_scan (s_dir, 0, &scan, err, sizeof err), -1);
    char want[PATH_MAX + 200];
    snprintf (want, sizeof want, "%s/train is a symbolic link to 'nowhere', which cannot be opened as a folder:"
              " No such file or directory", s_dir);
    ck_assert_str_eq (err, want);
    ck_assert (s_is_link ("train"));
}
END_TEST

/* links inside train/ are other entries: never followed, never removed */
START_TEST (test_scan_links_inside)
{
    char err[1024];
    sb_datafolder_scan_t scan;
    s_sh ("mkdir -p '%s/victim' '%s/train/3' && ln -s ../victim '%s/train/v' && ln -s ../../victim '%s/train/3/v'",
          s_dir);
    s_touch ("victim/img_0_of_8.npz", "12345");
    s_touch ("victim/.x.tmp", "x");
    s_touch ("train/img_1_of_8.npz", "123");
    int all = SB_DATAFOLDER_REMOVE_DATASET | SB_DATAFOLDER_REMOVE_TEMPORARIES;
    ck_assert_int_eq (sb_datafolder_scan (s_dir, SB_DATAFOLDER_REMOVE_TEMPORARIES, &scan, err, sizeof err), 0);
    ck_assert_int_eq (sb_datafolder_scan (s_dir, all, &scan, err, sizeof err), 0);
    ck_assert_uint_eq (scan.dataset_files, 1);
    ck_assert_uint_eq (scan.temporaries, 0);
    ck_assert_uint_eq (scan.others, 2);
    ck_assert_uint_eq (scan.removed, 1);
    ck_assert (s_exists ("victim/img_0_of_8.npz"));
    ck_assert (s_exists ("victim/.x.tmp"));
    ck_assert (s_is_link ("train/v"));
    ck_assert (s_is_link ("train/3/v"));
}
END_TEST

/* a subfolder swapped for a link to another folder just before the scan
 * opens it: counted as other, nothing in the link's target removed */
START_TEST (test_scan_swapped_subfolder)
{
    char err[1024];
    sb_datafolder_scan_t scan;
    s_sh ("mkdir -p '%s/victim' '%s/train/sub'", s_dir);
    s_touch ("victim/img_0_of_8.npz", "12345");
    s_touch ("victim/.x.tmp", "x");
    s_touch ("train/sub/img_1_of_8.npz", "123");
    s_swapped = 0;
    s_swap_name = "sub";
    int all = SB_DATAFOLDER_REMOVE_DATASET | SB_DATAFOLDER_REMOVE_TEMPORARIES;
    int rc = sb_datafolder_scan (s_dir, all, &scan, err, sizeof err);
    s_swap_name = NULL;
    ck_assert_int_eq (s_swapped, 1);
    ck_assert_msg (s_exists ("victim/img_0_of_8.npz"), "the link's target lost its dataset-named file");
    ck_assert_msg (s_exists ("victim/.x.tmp"), "the link's target lost its temporary-named file");
    ck_assert_msg (rc == 0, "scan failed: %s", err);
    ck_assert_uint_eq (scan.removed, 0);
    ck_assert_uint_eq (scan.others, 1);
    ck_assert_str_eq (scan.other, "train/sub");
    ck_assert (s_is_link ("train/sub"));
    ck_assert (s_exists ("away/img_1_of_8.npz"));
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

/* The holder's time is shown as a UTC time and its age, not as the
 * seconds since 1970 the lock file keeps */
static void
s_holder_line (const char *line)
{
    char path[PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", s_dir, SB_DATAFOLDER_LOCK);
    int fd = open (path, O_WRONLY | O_TRUNC);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (write (fd, line, strlen (line)), (ssize_t) strlen (line));
    close (fd);
}

START_TEST (test_lock_holder_time)
{
    char err[1024], line[128], want[600];
    int a = sb_datafolder_lock (s_dir, 1, "datagen", err, sizeof err);
    ck_assert_int_ge (a, 0);
    s_holder_line ("datagen on host h1 pid 7 since 86400\n");
    ck_assert_int_eq (sb_datafolder_lock (s_dir, 1, "datagen", err, sizeof err), -1);
    snprintf (want, sizeof want, "data folder %s is in use: datagen on host h1 pid 7 since 1970-01-02 00:00:00 UTC ("
              , s_dir);
    ck_assert_msg (strstr (err, want) != NULL, "%s", err);
    ck_assert_msg (strstr (err, " d ") && strstr (err, " h ago) holds "), "%s", err);
    ck_assert_ptr_null (strstr (err, "since 86400"));
    /* two hours ago (and up to 29 s of delay before the refusal) */
    time_t then = time (NULL) - 7200 - 30;
    struct tm tm;
    char when[64];
    gmtime_r (&then, &tm);
    strftime (when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    snprintf (line, sizeof line, "run on host h2 pid 8 since %lld\n", (long long) then);
    s_holder_line (line);
    ck_assert_int_eq (sb_datafolder_lock (s_dir, 0, "run", err, sizeof err), -1);
    snprintf (want, sizeof want, "run on host h2 pid 8 since %s (2 h 00 min ago) holds %s/%s", when, s_dir,
              SB_DATAFOLDER_LOCK);
    ck_assert_msg (strstr (err, want) != NULL, "%s", err);
    /* a line of another form is shown as it is */
    s_holder_line ("an older tool\n");
    ck_assert_int_eq (sb_datafolder_lock (s_dir, 1, "datagen", err, sizeof err), -1);
    ck_assert_msg (strstr (err, "is in use: an older tool holds "), "%s", err);
    sb_datafolder_unlock (&a);
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
    tcase_add_test (tc, test_scan_linked_train);
    tcase_add_test (tc, test_scan_links_inside);
    tcase_add_test (tc, test_scan_swapped_subfolder);
    tcase_add_test (tc, test_probe);
    tcase_add_test (tc, test_lock);
    tcase_add_test (tc, test_lock_holder_time);
    tcase_add_test (tc, test_temp_name);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
