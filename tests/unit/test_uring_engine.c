/* uring_engine: the io_uring engine's own rules, beyond the conformance
 * suite every engine passes (test_storage_engines.c): the ring never has
 * more chunks in flight than its queue depth, many reads split into
 * chunks and in flight at once each complete with exactly their bytes,
 * and the wakeup op ends a getevents that waits on a read that does
 * not complete.
 *
 * The files live in a scratch folder under the working directory (meson
 * runs unit tests in the build folder). Where io_uring cannot be set up
 * (kernel.io_uring_disabled, a seccomp filter) the suite is skipped
 * (exit 77) saying so. */
#include <check.h>
#include "check_main.h"
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "uring_engine.h"
#include "workload_load.h"

static char s_dir[PATH_MAX];
static char s_root[PATH_MAX + 1];

/* The byte of file f at offset o: differs between files and offsets. */
static uint8_t
s_byte (uint64_t f, uint64_t o)
{
    return (uint8_t) ((o * 131u + f * 7u + (o >> 12)) & 0xff);
}

static void
s_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    uint64_t f = (uint64_t) (uintptr_t) ctx;
    for (size_t i = 0; i < len; i++)
        buf[i] = s_byte (f, offset + i);
}

static void
s_write (uint64_t f, size_t size)
{
    char path[PATH_MAX + 32];
    snprintf (path, sizeof path, "%sobj_%llu", s_root, (unsigned long long) f);
    uint8_t *buf = malloc (size ? size : 1);
    ck_assert_ptr_nonnull (buf);
    s_fill ((void *) (uintptr_t) f, 0, buf, size);
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (write (fd, buf, size), (ssize_t) size);
    ck_assert_int_eq (close (fd), 0);
    free (buf);
}

static void
s_setup (void)
{
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull (getcwd (cwd, sizeof cwd));
    snprintf (s_dir, sizeof s_dir, "%s/sb-uring-XXXXXX", cwd);
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
    snprintf (s_root, sizeof s_root, "%s/", s_dir);
}

static void
s_teardown (void)
{
    sb_check_remove_tree (s_dir);
}

/* The ops are called on the engine's own client (not through
 * sb_storage_t), so that the sb_uring_* probes can look at it. */
static void *
s_open (size_t depth, size_t buffer_bytes, const char *iodepth)
{
    sb_storage_cfg_t cfg;
    memset (&cfg, 0, sizeof cfg);
    snprintf (cfg.engine, sizeof cfg.engine, "uring");
    if (iodepth) {
        snprintf (cfg.opts[0].engine, sizeof cfg.opts[0].engine, "uring");
        snprintf (cfg.opts[0].key, sizeof cfg.opts[0].key, "iodepth");
        snprintf (cfg.opts[0].value, sizeof cfg.opts[0].value, "%s", iodepth);
        cfg.nopts = 1;
    }
    sb_storage_open_t how = { .root = s_root, .depth = depth, .buffer_bytes = buffer_bytes };
    sb_storage_error_t e;
    void *st = NULL;
    ck_assert_msg (sb_engine_uring.open (&cfg, &how, &st, &e) == 0, "open: %s", e.text);
    return st;
}

static void
s_close (void **st)
{
    sb_engine_uring.close (*st);
    *st = NULL;
}

static int
s_getevents (void *st, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e)
{
    return sb_engine_uring.getevents (st, timeout_ms, fn, ctx, e);
}

typedef struct {
    size_t   done;
    uint64_t bytes[256];
    int      failed[256];
    char     text[256][256];
} s_seen_t;

static void
s_on_done (void *ctx, const sb_io_done_t *d)
{
    s_seen_t *seen = ctx;
    ck_assert_uint_lt (d->tag, 256);
    seen->bytes[d->tag] = d->bytes;
    seen->failed[d->tag] = d->failed;
    snprintf (seen->text[d->tag], sizeof seen->text[d->tag], "%s", d->failed ? d->error.text : "");
    seen->done++;
}

static void
s_queue (void *st, uint64_t tag, uint64_t f, uint64_t offset, uint64_t length, int verify)
{
    char key[64];
    snprintf (key, sizeof key, "obj_%llu", (unsigned long long) f);
    sb_io_t io = { .tag = tag, .key = key, .offset = offset, .length = length,
                   .expect = verify ? s_fill : NULL, .expect_ctx = (void *) (uintptr_t) f,
                   .expect_size = UINT64_MAX };
    sb_storage_error_t e;
    ck_assert_msg (sb_engine_uring.queue (st, &io, &e) == 0, "queue %s: %s", key, e.text);
}

/* Queue whole reads of files 0 .. n-1, tagged with their numbers, checked. */
static void
s_queue_files (void *st, uint64_t n)
{
    for (uint64_t f = 0; f < n; f++)
        s_queue (st, f, f, 0, 0, 1);
}

/* Reads 0 .. n-1 each delivered whole: size bytes, not failed. */
static void
s_assert_whole (const s_seen_t *seen, uint64_t n, uint64_t size)
{
    for (uint64_t f = 0; f < n; f++) {
        ck_assert_msg (!seen->failed[f], "read %llu: %s", (unsigned long long) f, seen->text[f]);
        ck_assert_uint_eq (seen->bytes[f], size);
    }
}

START_TEST (depth_respected)
{
    /* 1 MiB files read in 64 KiB chunks: each read is 16 chunks, and 12
     * of them queued would be 192 chunks; 4 slots are in flight at most */
    for (uint64_t f = 0; f < 12; f++)
        s_write (f, 1u << 20);
    void *st = s_open (4, 64 * 1024, NULL);
    void *c = st;
    ck_assert_uint_eq (sb_uring_slots (c), 4);
    s_seen_t *seen = calloc (1, sizeof *seen);
    for (uint64_t f = 0; f < 12; f++) {
        s_queue (st, f, f, 0, 0, 1);
        ck_assert_uint_le (sb_uring_in_flight (c), 4);
    }
    ck_assert_uint_eq (sb_uring_in_flight (c), 4);
    ck_assert_uint_eq (sb_engine_uring.pending (st), 12);
    sb_storage_error_t e;
    while (seen->done < 12) {
        ck_assert_int_ge (s_getevents (st, 5000, s_on_done, seen, &e), 0);
        ck_assert_uint_le (sb_uring_in_flight (c), 4);
    }
    s_assert_whole (seen, 12, 1u << 20);
    ck_assert_uint_eq (sb_engine_uring.pending (st), 0);
    s_close (&st);

    /* storage.uring.iodepth overrides the reader's depth */
    st = s_open (4, 64 * 1024, "2");
    ck_assert_uint_eq (sb_uring_slots (st), 2);
    s_queue (st, 0, 0, 0, 0, 1);
    ck_assert_uint_eq (sb_uring_in_flight (st), 2);
    s_close (&st);
    free (seen);
}
END_TEST

/* Files open in this process now. */
static int
s_open_files (void)
{
    int n = 0;
    char path[64];
    for (int fd = 0; fd < 4096; fd++) {
        snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
        n += access (path, F_OK) == 0;
    }
    return n;
}

/* A rank queues its prefetch window at once: the ring opens a file only
 * when a slot is free for it, so it holds at most one file per slot (the
 * worker's fd budget counts the ring's depth), and a missing file is still
 * a failed read of its own, in order. */
START_TEST (files_open_at_most_depth)
{
    for (uint64_t f = 0; f < 60; f++)
        s_write (f, 8192);
    void *st = s_open (4, 64 * 1024, NULL);
    int before = s_open_files ();
    s_seen_t *seen = calloc (1, sizeof *seen);
    s_queue_files (st, 60);
    s_queue (st, 60, 999, 0, 0, 0);     /* no such file */
    ck_assert_int_le (s_open_files () - before, 4);
    ck_assert_uint_eq (sb_engine_uring.pending (st), 61);
    sb_storage_error_t e;
    while (seen->done < 61) {
        ck_assert_int_ge (s_getevents (st, 5000, s_on_done, seen, &e), 0);
        ck_assert_int_le (s_open_files () - before, 4);
    }
    s_assert_whole (seen, 60, 8192);
    ck_assert_int_eq (seen->failed[60], 1);
    ck_assert_msg (strstr (seen->text[60], "obj_999: No such file or directory") != NULL, "%s", seen->text[60]);
    /* each read went to the kernel in a submission of its own */
    ck_assert_uint_eq (sb_uring_most_submitted (st), 1);
    ck_assert_uint_eq (sb_engine_uring.pending (st), 0);
    ck_assert_int_eq (s_open_files (), before);
    s_close (&st);
    free (seen);
}
END_TEST

/* s_on_done, and the slots busy as each read is delivered */
typedef struct {
    s_seen_t *seen;
    void     *st;
    size_t    busy[256];    /* by tag: sb_uring_in_flight at its delivery */
    size_t    pending[256]; /* by tag: reads not delivered then, itself not counted */
} s_busy_seen_t;

static void
s_on_done_busy (void *ctx, const sb_io_done_t *d)
{
    s_busy_seen_t *b = ctx;
    ck_assert_uint_lt (d->tag, 256);
    b->busy[d->tag] = sb_uring_in_flight (b->st);
    b->pending[d->tag] = sb_engine_uring.pending (b->st);
    s_on_done (b->seen, d);
}

/* A slot that frees goes to the next read waiting, and that read is
 * submitted, before the read that ended is delivered and before the next
 * completion is looked at, so one getevents moves a queue along: six
 * reads of files in the page cache (each completes as it is submitted)
 * waiting on two slots come back from the first call but the last one or
 * two (their submissions go in as the call returns), and as each is
 * delivered both slots are busy while reads are left. Refilled only after
 * every completion was handled, the first call returned one or two, and
 * a read was delivered with its slot still free. */
START_TEST (slot_refilled_as_it_frees)
{
    for (uint64_t f = 0; f < 6; f++)
        s_write (f, 8192);
    void *st = s_open (2, 64 * 1024, NULL);
    s_seen_t *seen = calloc (1, sizeof *seen);
    s_busy_seen_t *b = calloc (1, sizeof *b);
    b->seen = seen;
    b->st = st;
    s_queue_files (st, 6);
    ck_assert_uint_eq (sb_uring_in_flight (st), 2);
    sb_storage_error_t e;
    int first = s_getevents (st, 5000, s_on_done_busy, b, &e);
    ck_assert_int_ge (first, 4);
    while (seen->done < 6)
        ck_assert_int_ge (s_getevents (st, 5000, s_on_done_busy, b, &e), 0);
    for (uint64_t f = 0; f < 6; f++) {
        size_t want = b->pending[f] < 2 ? b->pending[f] : 2;
        ck_assert_msg (b->busy[f] == want, "read %llu delivered with %zu slots busy and %zu reads left",
                       (unsigned long long) f, b->busy[f], b->pending[f]);
    }
    free (b);
    s_assert_whole (seen, 6, 8192);
    ck_assert_uint_eq (sb_uring_most_submitted (st), 1);
    s_close (&st);
    free (seen);
}
END_TEST

/* The closes of reads delivered ride with the next read's submission;
 * when no read waits (the tail of an epoch) they go in together with the
 * submission a getevents call ends with, not one system call each: four
 * reads of files in the page cache, on four slots, come back from one
 * call with a single submission that carries no read, and every file is
 * closed when it returns. Submitted at each completion, the closes took
 * one submission a read (4). */
START_TEST (closes_ride_with_reads)
{
    for (uint64_t f = 0; f < 4; f++)
        s_write (f, 8192);
    void *st = s_open (4, 64 * 1024, NULL);
    int before = s_open_files ();
    s_seen_t *seen = calloc (1, sizeof *seen);
    s_queue_files (st, 4);
    ck_assert_uint_eq (sb_uring_in_flight (st), 4);
    size_t armed = sb_uring_submitted_no_read (st);  /* the wakeup's read, at open */
    sb_storage_error_t e;
    size_t calls = 0;
    while (seen->done < 4) {
        int n = s_getevents (st, 5000, s_on_done, seen, &e);
        ck_assert_int_ge (n, 0);
        calls += n > 0;
    }
    size_t alone = sb_uring_submitted_no_read (st) - armed;
    ck_assert_msg (alone <= calls, "%zu submissions of closes alone for %zu calls", alone, calls);
    ck_assert_int_eq (s_open_files (), before);
    s_assert_whole (seen, 4, 8192);
    s_close (&st);
    free (seen);
}
END_TEST

START_TEST (many_in_flight_exact)
{
    /* sizes that end inside a chunk, on a chunk boundary, below one chunk,
     * and empty; whole reads, ranges across chunks, and a range at the end */
    static const size_t sizes[] = { 0, 1, 4095, 4096, 65536, 65537, 200000, 1u << 20, (1u << 20) + 17 };
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    for (uint64_t f = 0; f < 64; f++)
        s_write (f, sizes[f % nsizes]);
    void *st = s_open (32, 64 * 1024, NULL);
    ck_assert (sb_uring_registered (st) == 0 || sb_uring_registered (st) == 1);
    s_seen_t *seen = calloc (1, sizeof *seen);
    uint64_t want[256];
    size_t n = 0;
    for (uint64_t f = 0; f < 64; f++) {
        size_t size = sizes[f % nsizes];
        want[n] = size;
        s_queue (st, n++, f, 0, 0, 1);
        if (size > 10) {
            uint64_t off = size / 3, len = size - off - 5;
            want[n] = len;
            s_queue (st, n++, f, off, len, 1);
        }
    }
    sb_storage_error_t e;
    while (seen->done < n)
        ck_assert_int_ge (s_getevents (st, 5000, s_on_done, seen, &e), 0);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg (!seen->failed[i], "read %zu: %s", i, seen->text[i]);
        ck_assert_uint_eq (seen->bytes[i], want[i]);
    }
    ck_assert_uint_eq (sb_uring_most_submitted (st), 1);

    /* a range past the end: a short read naming the path and where the file ends */
    memset (seen, 0, sizeof *seen);
    s_queue (st, 0, 6, 100000, 150000, 0);     /* obj_6 has 200000 bytes */
    while (seen->done < 1)
        ck_assert_int_ge (s_getevents (st, 5000, s_on_done, seen, &e), 0);
    ck_assert (seen->failed[0]);
    ck_assert_uint_eq (seen->bytes[0], 100000);
    ck_assert_msg (strstr (seen->text[0], "short read") && strstr (seen->text[0], "obj_6")
                   && strstr (seen->text[0], "offset 200000"), "%s", seen->text[0]);

    /* bytes that differ from the expected ones: the first differing offset */
    memset (seen, 0, sizeof *seen);
    char key[] = "obj_7";      /* 1 MiB; compared with obj_8's bytes */
    sb_io_t io = { .tag = 1, .key = key, .expect = s_fill, .expect_ctx = (void *) (uintptr_t) 8,
                   .expect_size = UINT64_MAX };
    ck_assert_int_eq (sb_engine_uring.queue (st, &io, &e), 0);
    while (seen->done < 1)
        ck_assert_int_ge (s_getevents (st, 5000, s_on_done, seen, &e), 0);
    ck_assert (seen->failed[1]);
    ck_assert_msg (strstr (seen->text[1], "verify") && strstr (seen->text[1], "obj_7")
                   && strstr (seen->text[1], "differs"), "%s", seen->text[1]);

    /* a file longer than its generator: the offset where the generator
     * ends, and the format's name (as the file engine says it) */
    memset (seen, 0, sizeof *seen);
    sb_io_t longer = { .tag = 1, .key = key, .expect = s_fill, .expect_ctx = (void *) (uintptr_t) 7,
                       .expect_size = 4096, .expect_name = "npy" };
    ck_assert_int_eq (sb_engine_uring.queue (st, &longer, &e), 0);
    while (seen->done < 1)
        ck_assert_int_ge (s_getevents (st, 5000, s_on_done, seen, &e), 0);
    ck_assert (seen->failed[1]);
    ck_assert_msg (strstr (seen->text[1], "obj_7") && strstr (seen->text[1], "past offset 4096")
                   && strstr (seen->text[1], "the npy generator ends"), "%s", seen->text[1]);

    /* a missing file fails (as a completion), naming the path and the cause */
    memset (seen, 0, sizeof *seen);
    sb_io_t miss = { .tag = 2, .key = "nope", .expect_size = UINT64_MAX };
    ck_assert_int_eq (sb_engine_uring.queue (st, &miss, &e), 0);
    /* so does a folder: only regular files are read */
    ck_assert_int_eq (mkdir (strcat (strcpy ((char[PATH_MAX + 8]) { 0 }, s_root), "sub"), 0755), 0);
    sb_io_t dir = { .tag = 3, .key = "sub", .expect_size = UINT64_MAX };
    ck_assert_int_eq (sb_engine_uring.queue (st, &dir, &e), 0);
    /* a FIFO (its open would wait for a writer) and a link to a
     * character device (never read): refused at once, before any open,
     * whole files or a range, with what they are */
    char other[PATH_MAX + 8];
    snprintf (other, sizeof other, "%sfifo", s_root);
    ck_assert_int_eq (mkfifo (other, 0600), 0);
    snprintf (other, sizeof other, "%szero", s_root);
    ck_assert_int_eq (symlink ("/dev/zero", other), 0);
    sb_io_t fifo = { .tag = 4, .key = "fifo", .expect_size = UINT64_MAX };
    sb_io_t zero = { .tag = 5, .key = "zero", .length = 4096, .expect_size = UINT64_MAX };
    ck_assert_int_eq (sb_engine_uring.queue (st, &fifo, &e), 0);
    ck_assert_int_eq (sb_engine_uring.queue (st, &zero, &e), 0);
    while (seen->done < 4)
        ck_assert_int_ge (s_getevents (st, 5000, s_on_done, seen, &e), 0);
    ck_assert (seen->failed[2] && seen->failed[3] && seen->failed[4] && seen->failed[5]);
    ck_assert_msg (strstr (seen->text[2], "nope") && strstr (seen->text[2], strerror (ENOENT)), "%s", seen->text[2]);
    ck_assert_msg (strstr (seen->text[3], "not a regular file (a directory)"), "%s", seen->text[3]);
    ck_assert_msg (strstr (seen->text[4], "fifo: not a regular file (a FIFO)"), "%s", seen->text[4]);
    ck_assert_msg (strstr (seen->text[5], "zero: not a regular file (a symbolic link to a character device)"), "%s",
                   seen->text[5]);
    ck_assert_uint_eq (sb_engine_uring.pending (st), 0);
    s_close (&st);
    free (seen);
}
END_TEST

typedef struct {
    void *st;
    int           delay_ms;
} s_waker_t;

static void *
s_waker (void *arg)
{
    s_waker_t *w = arg;
    struct timespec ts = { .tv_sec = w->delay_ms / 1000, .tv_nsec = (long) (w->delay_ms % 1000) * 1000000L };
    nanosleep (&ts, NULL);
    sb_engine_uring.wakeup (w->st);
    return NULL;
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

START_TEST (wakeup_interrupts_getevents)
{
    void *st = s_open (4, 64 * 1024, NULL);
    /* a read that does not complete: a pipe nobody writes to */
    int p[2];
    ck_assert_int_eq (pipe (p), 0);
    sb_io_t io = { .tag = 9, .key = "pipe", .length = 100, .expect_size = UINT64_MAX };
    sb_storage_error_t e;
    ck_assert_int_eq (sb_uring_queue_fd (st, p[0], &io, &e), 0);
    ck_assert_uint_eq (sb_engine_uring.pending (st), 1);

    /* without a wakeup the wait lasts its timeout */
    s_seen_t *seen = calloc (1, sizeof *seen);
    double t0 = s_now ();
    ck_assert_int_eq (s_getevents (st, 200, s_on_done, seen, &e), 0);
    ck_assert_double_ge (s_now () - t0, 0.19);

    /* another thread's wakeup ends a 10 s wait at once */
    s_waker_t w = { .st = st, .delay_ms = 100 };
    pthread_t th;
    ck_assert_int_eq (pthread_create (&th, NULL, s_waker, &w), 0);
    t0 = s_now ();
    ck_assert_int_eq (s_getevents (st, 10000, s_on_done, seen, &e), 0);
    double waited = s_now () - t0;
    ck_assert_int_eq (pthread_join (th, NULL), 0);
    ck_assert_msg (waited < 5.0, "getevents waited %.3f s after the wakeup", waited);

    /* a wakeup before the wait is not lost: the next wait ends at once */
    sb_engine_uring.wakeup (st);
    t0 = s_now ();
    ck_assert_int_eq (s_getevents (st, 10000, s_on_done, seen, &e), 0);
    ck_assert_msg (s_now () - t0 < 5.0, "a wakeup sent before getevents was lost");

    /* the read is still pending, and completes once there are bytes */
    ck_assert_uint_eq (sb_engine_uring.pending (st), 1);
    char bytes[100];
    memset (bytes, 'x', sizeof bytes);
    ck_assert_int_eq (write (p[1], bytes, sizeof bytes), (ssize_t) sizeof bytes);
    while (seen->done < 1)
        ck_assert_int_ge (s_getevents (st, 5000, s_on_done, seen, &e), 0);
    ck_assert_msg (!seen->failed[9], "%s", seen->text[9]);
    ck_assert_uint_eq (seen->bytes[9], 100);

    /* closed with a read in flight: nothing leaks, nothing waits for ever */
    int q[2];
    ck_assert_int_eq (pipe (q), 0);
    ck_assert_int_eq (sb_uring_queue_fd (st, q[0], &io, &e), 0);
    s_close (&st);
    close (p[1]);
    close (q[1]);
    free (seen);
}
END_TEST


/* storage.engine picks the uring engine for a local data folder; its own
 * options are storage.uring.*, checked against what it declares */
START_TEST (workload_selects_uring)
{
    static const char yaml[] = "dataset:\n  data_folder: ./d\n  num_files_train: 4\n  format: npz\n"
                               "train:\n  epochs: 1\n";
    sb_workload_t *wl = calloc (1, sizeof *wl);
    ck_assert_ptr_nonnull (wl);
    const char *ok[] = { "storage.engine=uring", "storage.uring.iodepth=8", "storage.uring.direct=true", NULL };
    const char *err = sb_test_workload_load (yaml, ok, wl);
    ck_assert_msg (!*err, "%s", err);
    ck_assert_str_eq (wl->storage.engine, "uring");
    ck_assert_str_eq (sb_storage_opt (&wl->storage, "iodepth"), "8");
    ck_assert_str_eq (sb_storage_opt (&wl->storage, "direct"), "1");
    memset (wl, 0, sizeof *wl);
    /* without it, the file engine, and uring's options are refused */
    const char *other[] = { "storage.uring.iodepth=8", NULL };
    err = sb_test_workload_load (yaml, other, wl);
    ck_assert_msg (strstr (err, "storage.uring.iodepth") && strstr (err, "uring"), "%s", err);
    memset (wl, 0, sizeof *wl);
    const char *range[] = { "storage.engine=uring", "storage.uring.iodepth=0", NULL };
    err = sb_test_workload_load (yaml, range, wl);
    ck_assert_msg (strstr (err, "storage.uring.iodepth"), "%s", err);
    memset (wl, 0, sizeof *wl);
    /* an engine that does not read a folder, or none at all, is refused */
    const char *s3[] = { "storage.engine=synthetic", NULL };
    err = sb_test_workload_load (yaml, s3, wl);
    ck_assert_msg (strstr (err, "storage.engine") && strstr (err, "synthetic"), "%s", err);
    memset (wl, 0, sizeof *wl);
    const char *none[] = { "storage.engine=nvme-of", NULL };
    err = sb_test_workload_load (yaml, none, wl);
    ck_assert_msg (strstr (err, "storage.engine") && strstr (err, "nvme-of"), "%s", err);
    memset (wl, 0, sizeof *wl);
    free (wl);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("uring_engine");
    TCase *tc = tcase_create ("core");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, depth_respected);
    tcase_add_test (tc, files_open_at_most_depth);
    tcase_add_test (tc, many_in_flight_exact);
    tcase_add_test (tc, slot_refilled_as_it_frees);
    tcase_add_test (tc, closes_ride_with_reads);
    tcase_add_test (tc, wakeup_interrupts_getevents);
    tcase_add_test (tc, workload_selects_uring);
    suite_add_tcase (s, tc);
    return s;
}

int
main (void)
{
    struct io_uring ring;
    int rc = io_uring_queue_init (2, &ring, 0);
    if (rc < 0) {
        printf ("SKIP: io_uring cannot be set up here: %s\n", strerror (-rc));
        return 77;
    }
    io_uring_queue_exit (&ring);
    SRunner *sr = srunner_create (s_suite ());
    srunner_run_all (sr, CK_NORMAL);
    int failed = srunner_ntests_failed (sr);
    srunner_free (sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
