/* pagecache: eviction and residency on real files, with util-linux fincore
 * as the oracle of how many bytes of a file the page cache holds.
 *
 * The files live in a scratch folder under the working directory (meson
 * runs unit tests in the build folder), not under TMPDIR, which may be a
 * tmpfs: there pages are the file and cannot be dropped. A working
 * directory on tmpfs or ramfs skips the suite (exit 77) saying so.
 * Residency is checked both ways: cachestat (where the kernel has it) and
 * mincore. */
#include <check.h>
#include "check_main.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "pagecache.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef RAMFS_MAGIC
#define RAMFS_MAGIC 0x858458f6
#endif

static char s_dir[PATH_MAX];
static long s_page;

static void
s_setup (void)
{
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull (getcwd (cwd, sizeof cwd));
    snprintf (s_dir, sizeof s_dir, "%s/sb-pagecache-XXXXXX", cwd);
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
    s_page = sysconf (_SC_PAGESIZE);
}

static void
s_teardown (void)
{
    sb_check_remove_tree (s_dir);
}

static void
s_path (char *out, size_t size, const char *rel)
{
    snprintf (out, size, "%s/%s", s_dir, rel);
}

/* Write size bytes of a pattern to rel (left dirty: no fsync). */
static void
s_write (const char *rel, size_t size)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, rel);
    FILE *f = fopen (path, "wb");
    ck_assert_ptr_nonnull (f);
    for (size_t i = 0; i < size; i++)
        ck_assert_int_ne (fputc ((int) (i * 131 % 251), f), EOF);
    ck_assert_int_eq (fclose (f), 0);
}

/* Read all of rel through the page cache. */
static void
s_read_all (const char *rel)
{
    char path[PATH_MAX], buf[65536];
    s_path (path, sizeof path, rel);
    int fd = open (path, O_RDONLY);
    ck_assert_int_ge (fd, 0);
    ssize_t n;
    while ((n = read (fd, buf, sizeof buf)) > 0)
        ;
    ck_assert_int_eq (n, 0);
    close (fd);
}

/* Resident bytes of rel according to util-linux fincore (pages x page size). */
static long long
s_fincore (const char *rel)
{
    char path[PATH_MAX], cmd[PATH_MAX + 64], line[128] = "";
    s_path (path, sizeof path, rel);
    snprintf (cmd, sizeof cmd, "fincore --bytes --noheadings --output RES '%s'", path);
    FILE *p = popen (cmd, "r");
    ck_assert_ptr_nonnull (p);
    char *got = fgets (line, sizeof line, p);
    int rc = pclose (p);
    ck_assert_msg (got && rc == 0, "fincore failed on %s (util-linux fincore missing?)", path);
    return atoll (line);
}

static int
s_open (const char *rel)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, rel);
    int fd = open (path, O_RDONLY);
    ck_assert_int_ge (fd, 0);
    return fd;
}

START_TEST (test_evict_and_residency_whole_file)
{
    sb_pagecache_force_mincore (_i);   /* 0: cachestat where the kernel has it, 1: mincore */
    /* 1 MiB + 100 bytes: the last page is partly the file's */
    const size_t size = 1048576 + 100;
    const long long pages_bytes = (long long) ((size + (size_t) s_page - 1) / (size_t) s_page * (size_t) s_page);
    s_write ("a.bin", size);
    char err[512] = "";
    /* dirty pages are written back first, then dropped */
    int fd = s_open ("a.bin");
    ck_assert_msg (sb_pagecache_evict_fd (fd, "a.bin", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq (s_fincore ("a.bin"), 0);
    sb_residency_t r = { 7, 7 };
    ck_assert_msg (sb_pagecache_residency (fd, 0, 0, &r, "a.bin", err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq (r.resident, 0);
    ck_assert_uint_eq (r.checked, size);
    /* read it: all resident, fincore agrees (in whole pages) */
    s_read_all ("a.bin");
    ck_assert_int_eq (s_fincore ("a.bin"), pages_bytes);
    ck_assert_msg (sb_pagecache_residency (fd, 0, 0, &r, "a.bin", err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq (r.resident, size);
    ck_assert_uint_eq (r.checked, size);
    /* a range: counted in bytes of the range, clipped at the end */
    ck_assert_int_eq (sb_pagecache_residency (fd, 100, 5000, &r, "a.bin", err, sizeof err), 0);
    ck_assert_uint_eq (r.resident, 5000);
    ck_assert_uint_eq (r.checked, 5000);
    ck_assert_int_eq (sb_pagecache_residency (fd, size - 10, 4096, &r, "a.bin", err, sizeof err), 0);
    ck_assert_uint_eq (r.resident, 10);
    ck_assert_uint_eq (r.checked, 10);
    /* the same with the size given (the caller's fstat): clipped at that size */
    ck_assert_int_eq (sb_pagecache_residency_sized (fd, size, 100, 5000, &r, "a.bin", err, sizeof err), 0);
    ck_assert_uint_eq (r.resident, 5000);
    ck_assert_uint_eq (r.checked, 5000);
    ck_assert_int_eq (sb_pagecache_residency_sized (fd, size, 0, 0, &r, "a.bin", err, sizeof err), 0);
    ck_assert_uint_eq (r.resident, size);
    ck_assert_uint_eq (r.checked, size);
    ck_assert_int_eq (sb_pagecache_residency_sized (fd, size, size, 10, &r, "a.bin", err, sizeof err), 0);
    ck_assert_uint_eq (r.checked, 0);
    /* evicted again by path, relative to a folder */
    int dirfd = open (s_dir, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge (dirfd, 0);
    ck_assert_msg (sb_pagecache_evict_at (dirfd, "a.bin", err, sizeof err) == 0, "%s", err);
    close (dirfd);
    ck_assert_int_eq (s_fincore ("a.bin"), 0);
    ck_assert_int_eq (sb_pagecache_residency (fd, 0, 0, &r, "a.bin", err, sizeof err), 0);
    ck_assert_uint_eq (r.resident, 0);
    ck_assert_uint_eq (r.checked, size);
    close (fd);
}
END_TEST

START_TEST (test_residency_partial_pages)
{
    sb_pagecache_force_mincore (_i);   /* 0: cachestat where the kernel has it, 1: mincore */
    /* 16 pages; only pages 2 and 3 read (readahead off): the counts are the
     * bytes of each range that fall in those two pages */
    const size_t page = (size_t) s_page, size = 16 * page;
    s_write ("p.bin", size);
    char err[512] = "";
    int fd = s_open ("p.bin");
    ck_assert_int_eq (sb_pagecache_evict_fd (fd, "p.bin", err, sizeof err), 0);
    ck_assert_int_eq (s_fincore ("p.bin"), 0);
    ck_assert_int_eq (posix_fadvise (fd, 0, 0, POSIX_FADV_RANDOM), 0);
    char *buf = malloc (2 * page);
    ck_assert_ptr_nonnull (buf);
    ck_assert_int_eq (pread (fd, buf, 2 * page, (off_t) (2 * page)), (ssize_t) (2 * page));
    free (buf);
    ck_assert_int_eq (s_fincore ("p.bin"), (long long) (2 * page));
    sb_residency_t r;
    ck_assert_int_eq (sb_pagecache_residency (fd, 0, 0, &r, "p.bin", err, sizeof err), 0);
    ck_assert_uint_eq (r.resident, 2 * page);
    ck_assert_uint_eq (r.checked, size);
    /* from the middle of page 1 to the middle of page 3: half a page of 3 and all of 2 */
    ck_assert_int_eq (sb_pagecache_residency (fd, page + page / 2, 2 * page, &r, "p.bin", err, sizeof err), 0);
    ck_assert_uint_eq (r.resident, page + page / 2);
    ck_assert_uint_eq (r.checked, 2 * page);
    /* pages 5..15: none */
    ck_assert_int_eq (sb_pagecache_residency (fd, 5 * page, 0, &r, "p.bin", err, sizeof err), 0);
    ck_assert_uint_eq (r.resident, 0);
    ck_assert_uint_eq (r.checked, 11 * page);
    close (fd);
}
END_TEST

START_TEST (test_empty_and_past_end)
{
    sb_pagecache_force_mincore (_i);   /* 0: cachestat where the kernel has it, 1: mincore */
    s_write ("empty.bin", 0);
    s_write ("small.bin", 10);
    char err[512] = "";
    int fd = s_open ("empty.bin");
    sb_residency_t r = { 1, 1 };
    ck_assert_msg (sb_pagecache_residency (fd, 0, 0, &r, "empty.bin", err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq (r.resident, 0);
    ck_assert_uint_eq (r.checked, 0);
    ck_assert_msg (sb_pagecache_evict_fd (fd, "empty.bin", err, sizeof err) == 0, "%s", err);
    close (fd);
    fd = s_open ("small.bin");
    ck_assert_int_eq (sb_pagecache_residency (fd, 10, 5, &r, "small.bin", err, sizeof err), 0);
    ck_assert_uint_eq (r.checked, 0);
    ck_assert_int_eq (sb_pagecache_residency (fd, 4096, 0, &r, "small.bin", err, sizeof err), 0);
    ck_assert_uint_eq (r.checked, 0);
    close (fd);
}
END_TEST

START_TEST (test_errors_name_the_file)
{
    char err[512] = "";
    ck_assert_int_eq (sb_pagecache_evict_at (AT_FDCWD, "/nonexistent-sb/x.npz", err, sizeof err), -1);
    ck_assert_int_eq (errno, ENOENT);
    ck_assert_str_eq (err, "open /nonexistent-sb/x.npz: No such file or directory");
    /* a FIFO: refused at once, not waited on */
    char fifo[PATH_MAX];
    s_path (fifo, sizeof fifo, "fifo");
    ck_assert_int_eq (mkfifo (fifo, 0600), 0);
    ck_assert_int_eq (sb_pagecache_evict_at (AT_FDCWD, fifo, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "not a regular file"));
    ck_assert_ptr_nonnull (strstr (err, fifo));
    /* residency of a pipe */
    int p[2];
    ck_assert_int_eq (pipe (p), 0);
    sb_residency_t r;
    ck_assert_int_eq (sb_pagecache_residency (p[0], 0, 0, &r, "the pipe", err, sizeof err), -1);
    ck_assert_str_eq (err, "mincore the pipe: Invalid argument");
    close (p[0]);
    close (p[1]);
}
END_TEST

START_TEST (test_batch)
{
    enum { N = 40 };
    char names[N][32];
    const char *paths[N];
    for (int i = 0; i < N; i++) {
        snprintf (names[i], sizeof names[i], "f%02d.npz", i);
        s_write (names[i], 20000 + (size_t) i * 1000);
        s_read_all (names[i]);
        paths[i] = names[i];
    }
    long long before = 0;
    for (int i = 0; i < N; i++)
        before += s_fincore (names[i]);
    ck_assert_int_gt (before, 0);
    sb_pagecache_batch_t res;
    ck_assert_msg (sb_pagecache_evict_batch (s_dir, paths, N, 4, &res) == 0, "%s", res.first_error);
    ck_assert_uint_eq (res.evicted, N);
    ck_assert_uint_eq (res.failed, 0);
    ck_assert_int_eq (res.first_errno, 0);
    ck_assert_str_eq (res.first_error, "");
    for (int i = 0; i < N; i++)
        ck_assert_int_eq (s_fincore (names[i]), 0);
    /* two missing files among them: every other file is still evicted, the
     * first failure in path order is reported with the root */
    for (int i = 0; i < N; i++)
        s_read_all (names[i]);
    const char *mixed[N + 2];
    for (int i = 0; i < 10; i++)
        mixed[i] = names[i];
    mixed[10] = "missing-a.npz";
    for (int i = 10; i < 30; i++)
        mixed[i + 1] = names[i];
    mixed[31] = "missing-b.npz";
    for (int i = 30; i < N; i++)
        mixed[i + 2] = names[i];
    ck_assert_int_eq (sb_pagecache_evict_batch (s_dir, mixed, N + 2, 8, &res), -1);
    ck_assert_uint_eq (res.evicted, N);
    ck_assert_uint_eq (res.failed, 2);
    ck_assert_int_eq (res.first_errno, ENOENT);
    char want[PATH_MAX + 128];
    snprintf (want, sizeof want, "open missing-a.npz: No such file or directory (under %s)", s_dir);
    ck_assert_str_eq (res.first_error, want);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq (s_fincore (names[i]), 0);
    /* more threads than files, and no files at all */
    s_read_all (names[0]);
    ck_assert_int_eq (sb_pagecache_evict_batch (s_dir, paths, 1, 16, &res), 0);
    ck_assert_uint_eq (res.evicted, 1);
    ck_assert_int_eq (s_fincore (names[0]), 0);
    ck_assert_int_eq (sb_pagecache_evict_batch (s_dir, paths, 0, 4, &res), 0);
    ck_assert_uint_eq (res.evicted, 0);
    /* a root that does not exist */
    ck_assert_int_eq (sb_pagecache_evict_batch ("/nonexistent-sb-root", paths, 3, 2, &res), -1);
    ck_assert_uint_eq (res.failed, 3);
    ck_assert_str_eq (res.first_error, "open /nonexistent-sb-root: No such file or directory");
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("pagecache");
    TCase *tc = tcase_create ("core");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_loop_test (tc, test_evict_and_residency_whole_file, 0, 2);
    tcase_add_loop_test (tc, test_residency_partial_pages, 0, 2);
    tcase_add_loop_test (tc, test_empty_and_past_end, 0, 2);
    tcase_add_test (tc, test_errors_name_the_file);
    tcase_add_test (tc, test_batch);
    suite_add_tcase (s, tc);
    return s;
}

int
main (void)
{
    struct statfs fs;
    if (statfs (".", &fs) == 0 && ((unsigned long) fs.f_type == TMPFS_MAGIC || (unsigned long) fs.f_type == RAMFS_MAGIC)) {
        printf ("skip: the working directory is on tmpfs or ramfs, whose pages cannot be evicted\n");
        return 77;
    }
    if (system ("fincore --version >/dev/null 2>&1") != 0) {
        printf ("FAIL: util-linux fincore is missing (deploy/install-deps.sh --tests installs util-linux)\n");
        return EXIT_FAILURE;
    }
    SRunner *sr = srunner_create (s_suite ());
    srunner_run_all (sr, CK_NORMAL);
    int failed = srunner_ntests_failed (sr);
    srunner_free (sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
