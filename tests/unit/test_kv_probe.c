/* kv_probe: the storage honesty check on real folders: this build's disk
 * (OK, buffered and O_DIRECT), /dev/shm (UNVERIFIABLE), and through
 * kv_probe_cli run with LD_PRELOAD shims that make posix_fadvise or fsync
 * do nothing (REFUSED by where the functions come from, and by what the
 * device counts when that check is left out). */
#include <check.h>
#include "check_main.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kv_probe.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

static char s_dir[PATH_MAX];

static const char *
s_env (const char *name)
{
    const char *v = getenv (name);
    ck_assert_msg (v && v[0], "%s is not set (tests/meson.build sets it)", name);
    return v;
}

static void
s_setup (void)
{
    const char *base = getenv ("KV_PROBE_DIR");
    if (!base || !base[0])
        base = getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp";
    snprintf (s_dir, sizeof s_dir, "%s/sb-kvprobe-XXXXXX", base);
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
}

static void
s_teardown (void)
{
    sb_check_remove_tree (s_dir);
}

/* entries in dir besides . and .. (the probe must leave none) */
static int
s_entries (const char *dir)
{
    DIR *d = opendir (dir);
    ck_assert_ptr_nonnull (d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir (d)))
        if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0)
            n++;
    closedir (d);
    return n;
}

/* Is there a block device with counters behind dir? Found here on its own
 * (not with the code under test): the device of st_dev, or for an
 * anonymous device (major 0) the mount's source in /proc/self/mountinfo
 * when it is a block device; then its /sys/dev/block stat file. */
static int
s_has_device (const char *dir)
{
    struct stat st;
    ck_assert_int_eq (stat (dir, &st), 0);
    unsigned maj = major (st.st_dev), min = minor (st.st_dev);
    if (maj == 0) {
        FILE *f = fopen ("/proc/self/mountinfo", "r");
        ck_assert_ptr_nonnull (f);
        char line[4096], want[32], src[1024] = "";
        snprintf (want, sizeof want, " %u:%u ", maj, min);
        while (fgets (line, sizeof line, f)) {
            char *dash = strstr (line, " - ");
            if (strstr (line, want) && dash && sscanf (dash, " - %*s %1023s", src) == 1)
                break;
            src[0] = '\0';
        }
        fclose (f);
        struct stat bs;
        if (src[0] != '/' || stat (src, &bs) != 0 || !S_ISBLK (bs.st_mode))
            return 0;
        maj = major (bs.st_rdev);
        min = minor (bs.st_rdev);
    }
    char path[64];
    snprintf (path, sizeof path, "/sys/dev/block/%u:%u/stat", maj, min);
    return access (path, R_OK) == 0;
}

/* run kv_probe_cli with args (NULL-terminated) and LD_PRELOAD=preload
 * (NULL: none); its stdout and stderr into out; its exit status */
static int
s_cli (const char *preload, char *out, size_t out_size, const char *const *args)
{
    const char *cli = s_env ("KV_PROBE_CLI");
    char *argv[16];
    int n = 0;
    argv[n++] = (char *) cli;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = (char *) args[n - 1];
    argv[n] = NULL;
    int pfd[2];
    ck_assert_int_eq (pipe (pfd), 0);
    pid_t pid = fork ();
    ck_assert_int_ge (pid, 0);
    if (pid == 0) {
        dup2 (pfd[1], 1);
        dup2 (pfd[1], 2);
        close (pfd[0]);
        close (pfd[1]);
        if (preload)
            setenv ("LD_PRELOAD", preload, 1);
        else
            unsetenv ("LD_PRELOAD");
        /* an AddressSanitizer build refuses a preloaded library ahead of
         * its runtime unless told not to check the order */
        char asan[1024];
        const char *prev = getenv ("ASAN_OPTIONS");
        snprintf (asan, sizeof asan, "%s%sverify_asan_link_order=0", prev ? prev : "", prev && prev[0] ? ":" : "");
        setenv ("ASAN_OPTIONS", asan, 1);
        execv (cli, argv);
        _exit (127);
    }
    close (pfd[1]);
    size_t len = 0;
    for (;;) {
        ssize_t r = read (pfd[0], out + len, out_size - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        ck_assert_int_ge (r, 0);
        if (r == 0)
            break;
        len += (size_t) r;
        ck_assert_uint_lt (len, out_size - 1);
    }
    out[len] = '\0';
    close (pfd[0]);
    int status;
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert_msg (WIFEXITED (status), "kv_probe_cli did not exit: status %d; output: %s", status, out);
    return WEXITSTATUS (status);
}

static void
s_has (const char *text, const char *part)
{
    ck_assert_msg (strstr (text, part), "expected \"%s\" in: %s", part, text);
}

/* the drop and re-read figures of an OK buffered probe's line */
static void
s_check_drop_line (const char *line, uint64_t pages)
{
    const char *d = strstr (line, "drop: ");
    ck_assert_msg (d, "no drop figures in: %s", line);
    uint64_t before, total, after;
    ck_assert_int_eq (sscanf (d, "drop: %" SCNu64 "/%" SCNu64 " pages resident before, %" SCNu64 " after", &before,
                              &total, &after), 3);
    ck_assert_uint_eq (total, pages);
    ck_assert_uint_ge (before, pages - pages / 8);
    ck_assert_uint_le (after, pages / 8);
    const char *r = strstr (line, "re-read: ");
    ck_assert_msg (r, "no re-read figures in: %s", line);
    double got, of;
    ck_assert_int_eq (sscanf (r, "re-read: %lf MiB of %lf MiB fetched from storage", &got, &of), 2);
    ck_assert_double_eq_tol (of, (double) (pages * 4096) / 1048576.0, 0.006);
    ck_assert_double_ge (got, of * 7 / 8 - 0.01);
}

/* the written figure of an OK probe's fsync: at least the file's size */
static void
s_check_fsync_line (const char *line, double mib)
{
    const char *f = strstr (line, "fsync: device ");
    ck_assert_msg (f, "no fsync figures in: %s", line);
    const char *w = strstr (f, " wrote ");
    ck_assert_ptr_nonnull (w);
    double wrote, of;
    ck_assert_int_eq (sscanf (w, " wrote %lf MiB during", &wrote), 1);
    const char *o = strstr (w, " of ");
    ck_assert_ptr_nonnull (o);
    ck_assert_int_eq (sscanf (o, " of %lf MiB", &of), 1);
    ck_assert_double_eq_tol (of, mib, 0.006);
    ck_assert_double_ge (wrote, of - 0.005);
}

START_TEST (test_buffered_ok)
{
    sb_kv_probe_t r;
    int dev = s_has_device (s_dir);
    ck_assert_int_eq (sb_kv_probe_folder (s_dir, 0, 0, &r), 0);
    if (!dev) {
        /* only where nothing counts the folder's I/O */
        ck_assert_int_eq (r.status, SB_KV_PROBE_UNVERIFIABLE);
        s_has (r.why, s_dir);
        s_has (r.why, "no block device");
        ck_assert_int_eq (s_entries (s_dir), 0);
        return;
    }
    ck_assert_msg (r.status == SB_KV_PROBE_OK, "%s: %s / %s", sb_kv_probe_status_name (r.status), r.line, r.why);
    ck_assert_str_eq (r.why, "");
    /* every function from the C library (or a sanitizer's runtime in
     * front of it): 15 names on x86-64 */
    unsigned libc = 0, san = 0;
    if (sscanf (r.line, "symbols: %u from the C library, %u through", &libc, &san) < 1)
        ck_abort_msg ("no symbols figure in: %s", r.line);
    ck_assert_uint_ge (libc + san, 10);
    s_check_fsync_line (r.line, 8.0);
    s_check_drop_line (r.line, 2048);
    ck_assert_int_eq (s_entries (s_dir), 0);       /* the probe file is gone */
}
END_TEST

/* 100000 bytes: whole pages, 25 of them */
START_TEST (test_buffered_small)
{
    if (!s_has_device (s_dir))
        return;
    sb_kv_probe_t r;
    ck_assert_int_eq (sb_kv_probe_folder (s_dir, 100000, 0, &r), 0);
    ck_assert_msg (r.status == SB_KV_PROBE_OK, "%s: %s / %s", sb_kv_probe_status_name (r.status), r.line, r.why);
    s_check_fsync_line (r.line, 102400.0 / 1048576.0);
    s_check_drop_line (r.line, 25);
    ck_assert_int_eq (s_entries (s_dir), 0);
}
END_TEST

START_TEST (test_odirect_ok)
{
    sb_kv_probe_t r;
    int dev = s_has_device (s_dir);
    ck_assert_int_eq (sb_kv_probe_folder (s_dir, 4u << 20, 1, &r), 0);
    if (!dev) {
        ck_assert_int_eq (r.status, SB_KV_PROBE_UNVERIFIABLE);
        return;
    }
    ck_assert_msg (r.status == SB_KV_PROBE_OK, "%s: %s / %s", sb_kv_probe_status_name (r.status), r.line, r.why);
    s_has (r.line, "during the O_DIRECT writes and fsync");
    s_check_fsync_line (r.line, 4.0);
    s_has (r.line, "O_DIRECT: opened, written and flushed");
    ck_assert_ptr_null (strstr (r.line, "drop: "));   /* no page cache involved */
    ck_assert_int_eq (s_entries (s_dir), 0);
}
END_TEST

/* /dev/shm (tmpfs): nothing counts what reaches its storage; nothing is
 * written there */
START_TEST (test_tmpfs_unverifiable)
{
    struct statfs sf;
    if (statfs ("/dev/shm", &sf) != 0 || (unsigned long) sf.f_type != TMPFS_MAGIC) {
        fprintf (stderr, "kv_probe: /dev/shm is not a tmpfs here: that case is not run\n");
        return;
    }
    char shm[] = "/dev/shm/sb-kvprobe-XXXXXX";
    ck_assert_ptr_nonnull (mkdtemp (shm));
    sb_kv_probe_t r;
    int rc = sb_kv_probe_folder (shm, 0, 0, &r);
    int left = s_entries (shm);
    char out[4096];
    int cli = s_cli (NULL, out, sizeof out, (const char *[]) {shm, NULL});
    ck_assert_int_eq (rmdir (shm), 0);
    ck_assert_int_eq (rc, 0);
    ck_assert_int_eq (r.status, SB_KV_PROBE_UNVERIFIABLE);
    s_has (r.why, shm);
    s_has (r.why, "a tmpfs file system (source tmpfs) with no block device behind it");
    s_has (r.line, "device: none for st_dev 0:");
    s_has (r.line, "(tmpfs)");
    ck_assert_int_eq (left, 0);
    ck_assert_int_eq (cli, 4);
    ck_assert_int_eq (strncmp (out, "UNVERIFIABLE: symbols: ", 23), 0);
    s_has (out, "why: ");
}
END_TEST

/* errors of its own: -1, REFUSED, the folder and the errno named */
START_TEST (test_bad_folder)
{
    sb_kv_probe_t r;
    char missing[PATH_MAX];
    snprintf (missing, sizeof missing, "%s/not-here", s_dir);
    ck_assert_int_eq (sb_kv_probe_folder (missing, 0, 0, &r), -1);
    ck_assert_int_eq (r.status, SB_KV_PROBE_REFUSED);
    char want[PATH_MAX + 64];
    snprintf (want, sizeof want, "%s: stat: No such file or directory", missing);
    ck_assert_str_eq (r.why, want);

    char file[PATH_MAX];
    snprintf (file, sizeof file, "%s/plain", s_dir);
    int fd = open (file, O_CREAT | O_WRONLY, 0600);
    ck_assert_int_ge (fd, 0);
    close (fd);
    ck_assert_int_eq (sb_kv_probe_folder (file, 0, 0, &r), -1);
    snprintf (want, sizeof want, "%s: not a directory", file);
    ck_assert_str_eq (r.why, want);
    ck_assert_int_eq (unlink (file), 0);

    ck_assert_int_eq (sb_kv_probe_folder (s_dir, (1ull << 30) + 1, 0, &r), -1);
    s_has (r.why, "more than the 1073741824 accepted");
    ck_assert_int_eq (sb_kv_probe_folder ("", 0, 0, &r), -1);
    ck_assert_str_eq (r.why, "no folder given to probe");

    /* a folder this process may not write into (root may write anywhere) */
    if (geteuid () != 0 && s_has_device (s_dir)) {
        ck_assert_int_eq (chmod (s_dir, 0500), 0);
        int rc = sb_kv_probe_folder (s_dir, 0, 0, &r);
        ck_assert_int_eq (chmod (s_dir, 0700), 0);
        ck_assert_int_eq (rc, -1);
        s_has (r.why, "cannot create the probe file");
        s_has (r.why, "Permission denied");
    }
    ck_assert_int_eq (s_entries (s_dir), 0);
}
END_TEST

/* the probe in its own process: OK on this disk */
START_TEST (test_cli_ok)
{
    char out[4096];
    int rc = s_cli (NULL, out, sizeof out, (const char *[]) {s_dir, NULL});
    if (!s_has_device (s_dir)) {
        ck_assert_int_eq (rc, 4);
        return;
    }
    ck_assert_msg (rc == 0, "exit %d: %s", rc, out);
    ck_assert_int_eq (strncmp (out, "OK: symbols: ", 13), 0);
    ck_assert_ptr_null (strstr (out, "why: "));
    ck_assert_int_eq (s_entries (s_dir), 0);
}
END_TEST

/* LD_PRELOAD of the no-op posix_fadvise: refused by where it comes from,
 * before anything is written */
START_TEST (test_preload_fadvise)
{
    const char *shim = s_env ("NOOP_FADVISE");
    char out[4096], want[PATH_MAX + 128];
    int rc = s_cli (shim, out, sizeof out, (const char *[]) {s_dir, NULL});
    ck_assert_msg (rc == 3, "exit %d: %s", rc, out);
    ck_assert_int_eq (strncmp (out, "REFUSED: symbols: posix_fadvise from ", 37), 0);
    snprintf (want, sizeof want, "why: %s: posix_fadvise comes from %s (LD_PRELOAD), not the C library (", s_dir, shim);
    s_has (out, want);
    s_has (out, "): the page-cache drop before each read cannot be trusted (also replaced: posix_fadvise64)\n");
    ck_assert_int_eq (s_entries (s_dir), 0);
}
END_TEST

START_TEST (test_preload_fsync)
{
    const char *shim = s_env ("NOOP_FSYNC");
    char out[4096], want[PATH_MAX + 128];
    int rc = s_cli (shim, out, sizeof out, (const char *[]) {"--odirect", s_dir, NULL});
    ck_assert_msg (rc == 3, "exit %d: %s", rc, out);
    snprintf (want, sizeof want, "why: %s: fsync comes from %s (LD_PRELOAD), not the C library (", s_dir, shim);
    s_has (out, want);
    s_has (out, "): the device write time (fsync) cannot be trusted (also replaced: fdatasync)\n");
    ck_assert_int_eq (s_entries (s_dir), 0);
}
END_TEST

/* the same shims with the symbol check left out: what the device counts
 * catches them on its own */
START_TEST (test_measured_fsync)
{
    const char *shim = s_env ("NOOP_FSYNC");
    char out[4096], want[PATH_MAX * 2 + 128];
    int rc = s_cli (shim, out, sizeof out, (const char *[]) {"--measure-only", s_dir, NULL});
    if (!s_has_device (s_dir)) {
        ck_assert_int_eq (rc, 4);
        return;
    }
    ck_assert_msg (rc == 3, "exit %d: %s", rc, out);
    ck_assert_int_eq (strncmp (out, "REFUSED: fsync: device ", 23), 0);
    snprintf (want, sizeof want, "why: %s: fsync of the 8388608-byte probe file %s/.shardbench-kvprobe-", s_dir, s_dir);
    s_has (out, want);
    s_has (out, " returned 0 but its device ");
    s_has (out, "during it (best of 3 tries), expected at least 8388608: fsync does not reach the device");
    ck_assert_int_eq (s_entries (s_dir), 0);
}
END_TEST

START_TEST (test_measured_fadvise)
{
    const char *shim = s_env ("NOOP_FADVISE");
    char out[4096], want[PATH_MAX + 128];
    int rc = s_cli (shim, out, sizeof out, (const char *[]) {"--measure-only", "--bytes", "1048576", s_dir, NULL});
    if (!s_has_device (s_dir)) {
        ck_assert_int_eq (rc, 4);
        return;
    }
    ck_assert_msg (rc == 3, "exit %d: %s", rc, out);
    ck_assert_int_eq (strncmp (out, "REFUSED: fsync: device ", 23), 0);
    snprintf (want, sizeof want, "why: %s: posix_fadvise(POSIX_FADV_DONTNEED) returned 0 but ", s_dir);
    s_has (out, want);
    s_has (out, " of the 256 pages of the probe file ");
    s_has (out, " stay resident (mincore; at most 32 expected)");
    /* the residency the shim left: more than 1/8 of 256 pages */
    const char *d = strstr (out, "drop: ");
    ck_assert_ptr_nonnull (d);
    unsigned before, total, after;
    ck_assert_int_eq (sscanf (d, "drop: %u/%u pages resident before, %u after", &before, &total, &after), 3);
    ck_assert_uint_eq (total, 256);
    ck_assert_uint_gt (after, 32);
    ck_assert_int_eq (s_entries (s_dir), 0);
}
END_TEST

/* the drop faked all the way (posix_fadvise a no-op, mincore saying
 * "nothing resident" after it): the re-read, counted by the kernel, still
 * finds the pages in memory */
START_TEST (test_measured_fake_drop)
{
    char out[4096], want[PATH_MAX + 128];
    const char *shim = s_env ("FAKE_DROP");
    int rc = s_cli (shim, out, sizeof out, (const char *[]) {"--measure-only", "--bytes", "1048576", s_dir, NULL});
    if (!s_has_device (s_dir)) {
        ck_assert_int_eq (rc, 4);
        return;
    }
    ck_assert_msg (rc == 3, "exit %d: %s", rc, out);
    s_has (out, "drop: 256/256 pages resident before, 0 after posix_fadvise(DONTNEED); re-read: 0.00 MiB of 1.00 MiB");
    snprintf (want, sizeof want, "why: %s: after posix_fadvise(POSIX_FADV_DONTNEED) a re-read of the probe file ", s_dir);
    s_has (out, want);
    s_has (out, " fetched only 0 bytes from storage (/proc/self/io read_bytes), expected at least 917504: reads would "
                "be timed from memory\n");
    /* with the symbol check: refused before anything is written, naming
     * the first function replaced and the others */
    rc = s_cli (shim, out, sizeof out, (const char *[]) {s_dir, NULL});
    ck_assert_msg (rc == 3, "exit %d: %s", rc, out);
    snprintf (want, sizeof want, "why: %s: posix_fadvise comes from %s (LD_PRELOAD), not the C library (", s_dir, shim);
    s_has (out, want);
    s_has (out, "(also replaced: posix_fadvise64, mincore)\n");
    ck_assert_int_eq (s_entries (s_dir), 0);
}
END_TEST

/* mincore saying "nothing resident" from the start: a drop cannot be told
 * from no cache */
START_TEST (test_measured_no_residency)
{
    char out[4096], want[PATH_MAX + 128];
    ck_assert_int_eq (setenv ("FAKE_DROP_NONE", "1", 1), 0);
    int rc = s_cli (s_env ("FAKE_DROP"), out, sizeof out,
                    (const char *[]) {"--measure-only", "--bytes", "1048576", s_dir, NULL});
    ck_assert_int_eq (unsetenv ("FAKE_DROP_NONE"), 0);
    if (!s_has_device (s_dir)) {
        ck_assert_int_eq (rc, 4);
        return;
    }
    ck_assert_msg (rc == 4, "exit %d: %s", rc, out);
    s_has (out, "drop: 0/256 pages resident after the write and a read\n");
    snprintf (want, sizeof want, "why: %s: only 0 of the 256 pages of the probe file ", s_dir);
    s_has (out, want);
    s_has (out, " stay in the page cache after it was written and read (mincore): a drop cannot be told from no "
                "cache\n");
    ck_assert_int_eq (s_entries (s_dir), 0);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("kv_probe");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 100);
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_buffered_ok);
    tcase_add_test (tc, test_buffered_small);
    tcase_add_test (tc, test_odirect_ok);
    tcase_add_test (tc, test_tmpfs_unverifiable);
    tcase_add_test (tc, test_bad_folder);
    tcase_add_test (tc, test_cli_ok);
    tcase_add_test (tc, test_preload_fadvise);
    tcase_add_test (tc, test_preload_fsync);
    tcase_add_test (tc, test_measured_fsync);
    tcase_add_test (tc, test_measured_fadvise);
    tcase_add_test (tc, test_measured_fake_drop);
    tcase_add_test (tc, test_measured_no_residency);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
