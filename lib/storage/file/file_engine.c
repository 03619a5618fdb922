/* file_engine: POSIX files under a root folder (engine.h, file_engine.h). */
#include "file_engine.h"
#include "datafolder.h"
#include "pagecache.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    const char *name;           /* "file" or "direct" (static) */
    int         direct;         /* data files read with O_DIRECT */
    char        root[PATH_MAX]; /* "" or ending with '/' */
    size_t      buffer_bytes;   /* a multiple of SB_FILE_DIRECT_ALIGN */
    uint8_t    *buf;            /* aligned; owned */
    uint8_t    *expect;         /* verification; owned, made on first use */
    uint64_t   *progress_ns;    /* the opener's, or NULL */
    int       (*stop) (void *arg); /* the opener's, or NULL (sb_storage_open_t) */
    void      (*got) (void *arg, uint64_t bytes);   /* the opener's, or NULL */
    void       *stop_arg;       /* the argument of both */
    char        writer[256];    /* host name in temporary names; "" until first needed (gethostname) */
    int         woken;          /* sb_file_engine_wakeup (atomic) */
    int         queued;         /* io holds a read not yet performed */
    sb_io_t     io;             /* its key is owned; expect_name points at expect_name */
    char        expect_name[32];
} s_file_t;

#define S_DEFAULT_BUFFER (1u << 20)

static void
s_progress (s_file_t *self)
{
    if (self->progress_ns)
        __atomic_store_n (self->progress_ns, sb_mono_ns (), __ATOMIC_RELEASE);
}

/* Fill e for this client: op on key, where is the root folder. Returns -1. */
static int
s_fail (const s_file_t *self, sb_storage_error_t *e, const char *op, const char *key, int os_errno,
        const char *fmt, ...) __attribute__ ((format (printf, 6, 7)));
static int
s_fail (const s_file_t *self, sb_storage_error_t *e, const char *op, const char *key, int os_errno,
        const char *fmt, ...)
{
    char text[sizeof e->text];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    sb_storage_fail (e, self->name, op, key, os_errno, "%s", text);
    snprintf (e->where, sizeof e->where, "%s", self->root);
    e->missing = os_errno == ENOENT;
    e->transient = os_errno == EINTR || os_errno == EAGAIN;
    return -1;
}

/* 1 when the opener's stop says the op must end now. */
static int
s_stop_asked (const s_file_t *self)
{
    return self->stop && self->stop (self->stop_arg);
}

/* Fail op on key because the opener asked to stop: e->stopped. Returns -1. */
static int
s_fail_stopped (const s_file_t *self, sb_storage_error_t *e, const char *op, const char *key, const char *path,
                uint64_t done, uint64_t size)
{
    s_fail (self, e, op, key, 0, "%s %s: stopped after %llu of %llu bytes (the session ended)",
            strcmp (op, "read") == 0 ? "read" : "write", path, (unsigned long long) done, (unsigned long long) size);
    e->stopped = 1;
    return -1;
}

static uint8_t *
s_aligned_alloc (size_t size)
{
    void *p = NULL;
    return posix_memalign (&p, SB_FILE_DIRECT_ALIGN, size) == 0 ? p : NULL;
}

int
sb_file_engine_open (const char *name, int direct, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    s_file_t *self = calloc (1, sizeof *self);
    if (!self)
        return sb_storage_fail (e, name, "open", how->root, ENOMEM, "%s engine: out of memory", name);
    self->name = name;
    self->direct = direct;
    self->progress_ns = how->progress_ns;
    self->stop = how->stop;
    self->got = how->got;
    self->stop_arg = how->stop_arg;
    if (how->writer && sb_strf (self->writer, sizeof self->writer, "%s", how->writer) != 0) {
        free (self);
        return sb_storage_fail (e, name, "open", how->writer, ENAMETOOLONG, "%s engine: writer host name %s: too"
                                " long", name, how->writer);
    }
    const char *root = how->root ? how->root : "";
    if (sb_strf (self->root, sizeof self->root, "%s", root) != 0) {
        free (self);
        return sb_storage_fail (e, name, "open", root, ENAMETOOLONG, "%s engine: root folder %s: path too long",
                                name, root);
    }
    size_t want = how->buffer_bytes ? how->buffer_bytes : S_DEFAULT_BUFFER;
    self->buffer_bytes = (want + SB_FILE_DIRECT_ALIGN - 1) / SB_FILE_DIRECT_ALIGN * SB_FILE_DIRECT_ALIGN;
    if (!(self->buf = s_aligned_alloc (self->buffer_bytes))) {
        free (self);
        return sb_storage_fail (e, name, "open", root, ENOMEM, "%s engine: out of memory for a %zu-byte buffer",
                                name, want);
    }
    *client = self;
    return 0;
}

void
sb_file_engine_close (void *client)
{
    s_file_t *self = client;
    if (!self)
        return;
    if (self->queued && self->io.expect_free)
        self->io.expect_free (self->io.expect_ctx);
    free ((char *) self->io.key);
    free (self->buf);
    free (self->expect);
    free (self);
}

/* ---- reads ---- */

/* What path is, when not a regular file (st: its stat). */
static int
s_not_regular (const s_file_t *self, const char *path, const char *key, const struct stat *st,
               sb_storage_error_t *e)
{
    mode_t m = st->st_mode;
    const char *what = S_ISFIFO (m) ? "a FIFO" : S_ISCHR (m) ? "a character device" : S_ISBLK (m) ? "a block device"
                       : S_ISDIR (m) ? "a directory" : S_ISSOCK (m) ? "a socket" : "not a file";
    struct stat lst;
    int link = lstat (path, &lst) == 0 && S_ISLNK (lst.st_mode);
    return s_fail (self, e, "open", key, 0,
                   "open %s: not a regular file (%s%s): a dataset object must be a regular file", path,
                   link ? "a symbolic link to " : "", what);
}

/* Open path (root + key) for reading, a regular file only: a FIFO would
 * block the open, a device (a link to /dev/zero) would be read for ever.
 * stat first (a FIFO's stat does not block), then fstat what was opened
 * (it may have been replaced). The fd, or -1 with e set. */
static int
s_open_regular (s_file_t *self, const char *path, const char *key, int direct, struct stat *st,
                sb_storage_error_t *e)
{
    int rc = stat (path, st);
    s_progress (self);
    if (rc != 0)
        return s_fail (self, e, "open", key, errno, "open %s: %s", path, strerror (errno));
    if (!S_ISREG (st->st_mode))
        return s_not_regular (self, path, key, st, e);
    int fd = open (path, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
    s_progress (self);
    if (fd < 0) {
        int err = errno;
        if (direct && err == EINVAL)
            return s_fail (self, e, "open", key, err,
                           "open %s with O_DIRECT (reader.odirect: true): %s: its file system refuses direct I/O"
                           " (tmpfs did before Linux 6.6); put the dataset on one that supports it or set"
                           " reader.odirect: false", path, strerror (err));
        return s_fail (self, e, "open", key, err, "open %s%s: %s", path, direct ? " with O_DIRECT" : "",
                       strerror (err));
    }
    if (fstat (fd, st) != 0) {
        int err = errno;
        close (fd);
        return s_fail (self, e, "open", key, err, "fstat %s: %s", path, strerror (err));
    }
    if (!S_ISREG (st->st_mode)) {
        close (fd);
        return s_not_regular (self, path, key, st, e);
    }
    return fd;
}

/* the generator's name for verification errors, "" when not given */
#define S_NAME(io) ((io)->expect_name ? (io)->expect_name : "")

/* Perform io into done (tag and error set; done->failed on failure). */
static void
s_read (s_file_t *self, const sb_io_t *io, sb_io_done_t *done)
{
    sb_storage_error_t *e = &done->error;
    char path[PATH_MAX];
    uint64_t t0 = sb_mono_ns ();
    if (sb_strf (path, sizeof path, "%s%s", self->root, io->key) != 0) {
        done->failed = 1;
        s_fail (self, e, "open", io->key, ENAMETOOLONG, "open %s%s: path too long", self->root, io->key);
        return;
    }
    const int direct = self->direct;
    struct stat st;
    int fd = s_open_regular (self, path, io->key, direct, &st, e);
    if (fd < 0) {
        done->failed = 1;
        return;
    }
    if (io->expect && !self->expect && !(self->expect = malloc (self->buffer_bytes))) {
        done->failed = 1;
        s_fail (self, e, "read", io->key, ENOMEM, "verify %s: out of memory", path);
        close (fd);
        return;
    }
    /* a whole object (length 0) is the size the open file has, never more:
     * a file that grows while read is read up to that */
    const int to_eof = io->length == 0;
    const uint64_t length = to_eof ? (uint64_t) st.st_size : io->length;
    uint64_t check_ns = 0;  /* eviction and residency checks: not part of the read's latency */
    if ((io->flags & SB_IO_EVICT) && !direct) {
        /* the epoch's first read of this file: its pages go first, as DLIO's
         * drop_caches before the epoch intends (shardbench.drop_page_cache) */
        char why[512];
        uint64_t c0 = sb_mono_ns ();
        if (sb_pagecache_evict_fd (fd, path, why, sizeof why) != 0) {
            done->failed = 1;
            s_fail (self, e, "evict", io->key, 0, "%s (shardbench.drop_page_cache: true; false reads what the"
                    " page cache holds)", why);
            close (fd);
            return;
        }
        check_ns += sb_mono_ns () - c0;
    }
    if ((io->flags & SB_IO_RESIDENCY) && !direct) {
        /* how much of the range the page cache holds now, before reading it
         * (a file that cannot be mapped is not counted) */
        sb_residency_t r;
        char why[256];
        uint64_t c0 = sb_mono_ns ();
        if (sb_pagecache_residency (fd, io->offset, length, &r, path, why, sizeof why) == 0) {
            done->resident_bytes = r.resident;
            done->checked_bytes = r.checked;
        }
        check_ns += sb_mono_ns () - c0;
    }
    /* [want, want_end) is what was asked for; reads go from pos to
     * read_end, which O_DIRECT widens to whole aligned blocks (the last one
     * cut short by the end of the file): only the asked bytes count */
    const uint64_t align = SB_FILE_DIRECT_ALIGN;
    const uint64_t want = io->offset, want_end = io->offset + length;
    uint64_t pos = direct ? want / align * align : want;
    const uint64_t read_end = direct ? (want_end + align - 1) / align * align : want_end;
    uint64_t got_bytes = 0;
    uint8_t *buf = self->buf, *expect = self->expect;
    while (pos < want_end) {
        if (s_stop_asked (self)) {
            done->failed = 1;
            s_fail_stopped (self, e, "read", io->key, path, got_bytes, length);
            break;
        }
        size_t chunk = read_end - pos >= self->buffer_bytes ? self->buffer_bytes : (size_t) (read_end - pos);
        ssize_t n = pread (fd, buf, chunk, (off_t) pos);
        s_progress (self);
        if (n < 0) {
            int err = errno;
            if (err == EINTR && !__atomic_load_n (&self->woken, __ATOMIC_ACQUIRE))
                continue;
            done->failed = 1;
            if (direct && err == EINVAL)
                s_fail (self, e, "read", io->key, err,
                        "read %s at offset %llu with O_DIRECT (reader.odirect: true): %s: the file system or"
                        " device refuses direct reads of %u-byte aligned blocks", path,
                        (unsigned long long) pos, strerror (err), SB_FILE_DIRECT_ALIGN);
            else
                s_fail (self, e, "read", io->key, err, "read %s at offset %llu: %s", path,
                        (unsigned long long) (pos > want ? pos : want), strerror (err));
            break;
        }
        /* the bytes of this read inside the asked range */
        uint64_t lo = pos > want ? pos : want, hi = pos + (uint64_t) n < want_end ? pos + (uint64_t) n : want_end;
        /* an O_DIRECT read cut short ends the file: the next read would not be aligned */
        int ended = n == 0 || (direct && (size_t) n < chunk && hi < want_end);
        if (hi > lo) {
            size_t m = (size_t) (hi - lo);
            const uint8_t *got = buf + (lo - pos);
            if (io->expect && hi > io->expect_size) {
                done->failed = 1;
                s_fail (self, e, "verify", io->key, 0,
                        "verify %s: the file goes on past offset %llu, where the %s%sgenerator ends", path,
                        (unsigned long long) io->expect_size, S_NAME (io), *S_NAME (io) ? " " : "");
                got_bytes += m;
                break;
            }
            if (io->expect) {
                io->expect (io->expect_ctx, lo, expect, m);
                if (memcmp (got, expect, m) != 0) {
                    size_t at = 0;
                    while (at < m && got[at] == expect[at])
                        at++;
                    done->failed = 1;
                    s_fail (self, e, "verify", io->key, 0, "verify %s: byte %llu differs from the generator", path,
                            (unsigned long long) (lo + at));
                    got_bytes += m;
                    break;
                }
            }
            got_bytes += m;
            if (self->got)
                self->got (self->stop_arg, m);
        }
        if (ended) {
            done->failed = 1;
            s_fail (self, e, "read", io->key, 0,
                    "short read %s: file ends at offset %llu, expected %llu bytes from offset %llu%s", path,
                    (unsigned long long) (want + got_bytes), (unsigned long long) length,
                    (unsigned long long) want, to_eof ? " (its size when opened)" : "");
            break;
        }
        pos += (uint64_t) n;
    }
    if (io->expect && io->expect_size != UINT64_MAX && to_eof && !done->failed && got_bytes != io->expect_size) {
        done->failed = 1;
        s_fail (self, e, "verify", io->key, 0, "verify %s: %llu bytes, the %s%sgenerator makes %llu", path,
                (unsigned long long) got_bytes, S_NAME (io), *S_NAME (io) ? " " : "",
                (unsigned long long) io->expect_size);
    }
    close (fd);
    done->bytes = got_bytes;
    done->latency_ns = sb_mono_ns () - t0 - check_ns;
}

int
sb_file_engine_queue (void *client, const sb_io_t *io, sb_storage_error_t *e)
{
    s_file_t *self = client;
    if (self->queued || !io->key) {
        if (io->expect_free)
            io->expect_free (io->expect_ctx);
        return s_fail (self, e, "read", io->key ? io->key : "", 0,
                       self->queued ? "%s engine: one read at a time per client (depth 1): %s not queued"
                                    : "%s engine: a read without a key%s", self->name, io->key ? io->key : "");
    }
    char *key = strdup (io->key);
    if (!key) {
        if (io->expect_free)
            io->expect_free (io->expect_ctx);
        return s_fail (self, e, "read", io->key, ENOMEM, "read %s%s: out of memory", self->root, io->key);
    }
    free ((char *) self->io.key);
    self->io = *io;
    self->io.key = key;
    snprintf (self->expect_name, sizeof self->expect_name, "%s", io->expect_name ? io->expect_name : "");
    self->io.expect_name = self->expect_name;
    self->queued = 1;
    return 0;
}

int
sb_file_engine_getevents (void *client, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e)
{
    s_file_t *self = client;
    (void) timeout_ms;  /* the read is performed now, whatever it takes */
    (void) e;
    if (!self->queued)
        return 0;
    sb_io_done_t done;
    memset (&done, 0, sizeof done);
    done.tag = self->io.tag;
    s_read (self, &self->io, &done);
    self->queued = 0;
    if (self->io.expect_free)
        self->io.expect_free (self->io.expect_ctx);
    self->io.expect_free = NULL;
    fn (ctx, &done);
    return 1;
}

void
sb_file_engine_wakeup (void *client)
{
    s_file_t *self = client;
    __atomic_store_n (&self->woken, 1, __ATOMIC_RELEASE);
}

size_t
sb_file_engine_pending (const void *client)
{
    const s_file_t *self = client;
    return self->queued ? 1 : 0;
}

int
sb_file_engine_get (void *client, const char *key, uint64_t offset, uint64_t length, unsigned flags,
                    uint64_t *received, sb_storage_error_t *e)
{
    s_file_t *self = client;
    sb_io_t io = { .key = key, .offset = offset, .length = length, .flags = flags & SB_IO_EVICT,
                   .expect_size = UINT64_MAX };
    sb_io_done_t *done = calloc (1, sizeof *done);
    if (!done)
        return s_fail (self, e, "read", key, ENOMEM, "read %s%s: out of memory", self->root, key);
    s_read (self, &io, done);
    *received = done->bytes;
    int rc = done->failed ? -1 : 0;
    if (rc && e)
        *e = done->error;
    free (done);
    return rc;
}

int
sb_file_engine_get_small (void *client, const char *key, char *buf, size_t cap, size_t *len, sb_storage_error_t *e)
{
    s_file_t *self = client;
    char path[PATH_MAX];
    if (sb_strf (path, sizeof path, "%s%s", self->root, key) != 0)
        return s_fail (self, e, "read", key, ENAMETOOLONG, "open %s%s: path too long", self->root, key);
    struct stat st;
    int fd = s_open_regular (self, path, key, 0, &st, e);
    if (fd < 0)
        return e && e->missing ? 1 : -1;
    size_t have = 0;
    for (;;) {
        char extra;
        ssize_t n = have < cap ? read (fd, buf + have, cap - have) : read (fd, &extra, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            close (fd);
            return s_fail (self, e, "read", key, err, "read %s: %s", path, strerror (err));
        }
        if (n == 0)
            break;
        if (have >= cap) {
            close (fd);
            return s_fail (self, e, "read", key, EFBIG, "read %s: larger than %zu bytes", path, cap);
        }
        have += (size_t) n;
    }
    close (fd);
    *len = have;
    return 0;
}

int
sb_file_engine_stat (void *client, const char *key, uint64_t *size, sb_storage_error_t *e)
{
    s_file_t *self = client;
    char path[PATH_MAX];
    struct stat st;
    if (sb_strf (path, sizeof path, "%s%s", self->root, key) != 0)
        return s_fail (self, e, "stat", key, ENAMETOOLONG, "stat %s%s: path too long", self->root, key);
    if (stat (path, &st) != 0)
        return s_fail (self, e, "stat", key, errno, "stat %s: %s", path, strerror (errno));
    if (!S_ISREG (st.st_mode))
        return s_not_regular (self, path, key, &st, e);
    *size = (uint64_t) st.st_size;
    return 0;
}

int
sb_file_engine_remove (void *client, const char *key, sb_storage_error_t *e)
{
    s_file_t *self = client;
    char path[PATH_MAX];
    if (sb_strf (path, sizeof path, "%s%s", self->root, key) != 0)
        return s_fail (self, e, "delete", key, ENAMETOOLONG, "unlink %s%s: path too long", self->root, key);
    if (unlink (path) != 0 && errno != ENOENT)
        return s_fail (self, e, "delete", key, errno, "unlink %s: %s", path, strerror (errno));
    return 0;
}

/* ---- writes ---- */

static int
s_write_all (int fd, const uint8_t *buf, size_t n, size_t *put)
{
    *put = 0;
    while (*put < n) {
        ssize_t w = write (fd, buf + *put, n - *put);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return -1;
        }
        *put += (size_t) w;
    }
    return 0;
}

/* A test hook (tests/integration/test_datagen_safety.sh): with
 * SHARDBENCH_TEST_STOP_AT_TEMPORARY=N in its environment (read once, at the
 * first temporary) the process stops itself (SIGSTOP, all its threads)
 * once it has created its N-th temporary, so that a test holds a writer
 * with a temporary in place without racing it. Unset (always, outside
 * that test) it does nothing. */
static void
s_test_stop_at_temporary (void)
{
    static unsigned long made, stop_at = ULONG_MAX;    /* ULONG_MAX: not read yet; 0: never */
    unsigned long at = __atomic_load_n (&stop_at, __ATOMIC_RELAXED);
    if (at == ULONG_MAX) {
        const char *v = getenv ("SHARDBENCH_TEST_STOP_AT_TEMPORARY");
        char *end = NULL;
        errno = 0;
        at = v && *v ? strtoul (v, &end, 10) : 0;
        if (!v || !*v || *end || errno || at == ULONG_MAX)
            at = 0;
        __atomic_store_n (&stop_at, at, __ATOMIC_RELAXED);
    }
    if (at && __atomic_add_fetch (&made, 1, __ATOMIC_RELAXED) == at)
        (void) raise (SIGSTOP);
}

/* Writes are buffered on both engines (direct reads only): a writer's
 * durability is SB_PUT_FSYNC. SB_PUT_EVICT drops the written pages on the
 * file engine (the direct engine's reads do not see the page cache); a file
 * system that keeps them anyway (tmpfs: its pages are the file) is not an
 * error, as the eviction is a hint. */
static int
s_put (s_file_t *self, const char *key, uint64_t size, sb_storage_prepare_fn prepare, sb_storage_fill_fn fill,
       void *ctx, unsigned flags, sb_storage_error_t *e)
{
    char path[PATH_MAX], folder[PATH_MAX], tmp[PATH_MAX];
    if (sb_strf (path, sizeof path, "%s%s", self->root, key) != 0
        || sb_strf (folder, sizeof folder, "%s", path) != 0)
        return s_fail (self, e, "write", key, ENAMETOOLONG, "write %s%s: path too long", self->root, key);
    char *slash = strrchr (folder, '/');
    const char *base = slash ? slash + 1 : path;
    if (slash)
        *slash = '\0';
    else
        snprintf (folder, sizeof folder, ".");
    const int replace = (flags & SB_PUT_REPLACE) != 0;
    /* a name of this writer alone (its --host, else this host's name): two
     * writers never write through one temporary */
    if (replace && !self->writer[0]) {
        if (gethostname (self->writer, sizeof self->writer - 1) != 0 || !self->writer[0])
            snprintf (self->writer, sizeof self->writer, "host");
        self->writer[sizeof self->writer - 1] = '\0';
    }
    if (replace && sb_datafolder_temp_name (tmp, sizeof tmp, folder, base, self->writer) != 0)
        return s_fail (self, e, "write", key, ENAMETOOLONG, "write %s: temporary name too long", path);
    const char *target = replace ? tmp : path;
    const int oflags = O_WRONLY | O_CREAT | O_CLOEXEC | (replace ? O_EXCL : O_TRUNC);
    int fd = open (target, oflags, 0644);
    if (fd < 0 && errno == ENOENT) {
        char why[512];
        if (sb_mkdirs (folder, why, sizeof why) != 0)
            return s_fail (self, e, "write", key, errno, "%s", why);
        fd = open (target, oflags, 0644);
    }
    if (fd < 0)
        return s_fail (self, e, "write", key, errno, "open %s for writing: %s", target, strerror (errno));
    if (replace)
        s_test_stop_at_temporary ();
    /* the temporary claims the name while the object is made */
    if (prepare && prepare (ctx, &size) != 0) {
        close (fd);
        unlink (target);
        return s_fail (self, e, "write", key, 0, "write %s: its bytes could not be made", path);
    }
    uint64_t done = 0;
    while (done < size) {
        if (s_stop_asked (self)) {
            close (fd);
            if (replace)
                unlink (tmp);
            return s_fail_stopped (self, e, "write", key, path, done, size);
        }
        size_t n = size - done < self->buffer_bytes ? (size_t) (size - done) : self->buffer_bytes, put;
        fill (ctx, done, self->buf, n);
        if (s_write_all (fd, self->buf, n, &put) != 0) {
            int err = errno;
            close (fd);
            if (replace)
                unlink (tmp);
            return s_fail (self, e, "write", key, err, "write %s at offset %llu: %s", target,
                           (unsigned long long) (done + put), strerror (err));
        }
        done += n;
    }
    /* the session may have ended with the last buffer: the object does not
     * count (and a temporary is not renamed into place) */
    if (s_stop_asked (self)) {
        close (fd);
        if (replace)
            unlink (tmp);
        return s_fail_stopped (self, e, "write", key, path, done, size);
    }
    if ((flags & SB_PUT_FSYNC) && fsync (fd) != 0) {
        int err = errno;
        close (fd);
        if (replace)
            unlink (tmp);
        return s_fail (self, e, "fsync", key, err, "fsync %s: %s", target, strerror (err));
    }
    if ((flags & SB_PUT_EVICT) && !self->direct) {
        char why[512];
        (void) sb_pagecache_evict_fd (fd, target, why, sizeof why);    /* a hint (above) */
    }
    if (close (fd) != 0) {
        int err = errno;
        if (replace)
            unlink (tmp);
        return s_fail (self, e, "write", key, err, "close %s: %s", target, strerror (err));
    }
    if (replace && rename (tmp, path) != 0) {
        int err = errno;
        unlink (tmp);
        return s_fail (self, e, "rename", key, err, "rename %s to %s: %s", tmp, path, strerror (err));
    }
    return 0;
}

int
sb_file_engine_put (void *client, const char *key, uint64_t size, sb_storage_fill_fn fill, void *ctx,
                    unsigned flags, sb_storage_error_t *e)
{
    return s_put (client, key, size, NULL, fill, ctx, flags, e);
}

int
sb_file_engine_put_prepared (void *client, const char *key, sb_storage_prepare_fn prepare, sb_storage_fill_fn fill,
                             void *ctx, unsigned flags, sb_storage_error_t *e)
{
    return s_put (client, key, 0, prepare, fill, ctx, flags, e);
}

/* ---- the folder ---- */

int
sb_file_engine_preflight (void *client, int write, sb_storage_check_fn check, void *ctx)
{
    s_file_t *self = client;
    sb_storage_error_t e;
    const char *root = self->root[0] ? self->root : ".";
    struct stat st;
    int bad = 0;
    if (stat (root, &st) != 0)
        bad = s_fail (self, &e, "stat", "", errno, "data folder %s: %s", root, strerror (errno));
    else if (!S_ISDIR (st.st_mode))
        bad = s_fail (self, &e, "stat", "", ENOTDIR, "data folder %s: not a folder", root);
    else if (access (root, R_OK | X_OK) != 0)
        bad = s_fail (self, &e, "open", "", errno, "data folder %s: cannot read it: %s", root, strerror (errno));
    else if (write && access (root, W_OK) != 0)
        bad = s_fail (self, &e, "write", "", errno, "data folder %s: cannot write into it: %s", root,
                      strerror (errno));
    check (ctx, root, bad ? &e : NULL);
    return bad ? 1 : 0;
}

/* Fingerprint: FNV-1a over (relative path, dev, inode, mtime) of every
 * folder under the prefix, in walk order. Files are not stat'ed for it:
 * adding, removing or renaming a file changes its folder's mtime. */
typedef struct {
    s_file_t          *self;
    int                base_fd;
    size_t             key_from;    /* where a key relative to the listed prefix starts in a path */
    sb_storage_list_fn fn;          /* NULL: fingerprint only */
    void              *ctx;
    uint64_t           hash, folders;
    uint64_t           listed;      /* keys given to fn */
    sb_storage_error_t *e;
} s_walk_t;

static void
s_fp_add (s_walk_t *w, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        w->hash = (w->hash ^ p[i]) * 0x100000001b3ull;
}

/* Walk folder rel (relative to the root). 0, non-zero from fn, or -1 with
 * w->e set. Hidden names (., .., in-progress .tmp files) are left out. */
static int
s_walk (s_walk_t *w, const char *rel)
{
    int fd = openat (w->base_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return s_fail (w->self, w->e, "list", rel, errno, "cannot open folder '%s': %s", rel, strerror (errno));
    struct stat st;
    if (fstat (fd, &st) != 0) {
        int err = errno;
        close (fd);
        return s_fail (w->self, w->e, "list", rel, err, "cannot stat folder '%s': %s", rel, strerror (err));
    }
    s_fp_add (w, rel, strlen (rel) + 1);
    s_fp_add (w, &st.st_dev, sizeof st.st_dev);
    s_fp_add (w, &st.st_ino, sizeof st.st_ino);
    s_fp_add (w, &st.st_mtim, sizeof st.st_mtim);
    w->folders++;
    DIR *dir = fdopendir (fd);
    if (!dir) {
        int err = errno;
        close (fd);
        return s_fail (w->self, w->e, "list", rel, err, "cannot read folder '%s': %s", rel, strerror (err));
    }
    int rc = 0;
    struct dirent *de;
    errno = 0;
    while (rc == 0 && (de = readdir (dir))) {
        const char *name = de->d_name;
        if (name[0] == '.')
            continue;   /* ., .., hidden and in-progress (.tmp) files */
        char path[PATH_MAX];
        if (sb_strf (path, sizeof path, "%s/%s", rel, name) != 0) {
            rc = s_fail (w->self, w->e, "list", rel, ENAMETOOLONG, "path too long under '%s'", rel);
            break;
        }
        int is_dir = de->d_type == DT_DIR;
        int is_reg = de->d_type == DT_REG;
        struct stat fst;
        if (de->d_type == DT_UNKNOWN || de->d_type == DT_LNK || (is_reg && w->fn)) {
            if (fstatat (w->base_fd, path, &fst, 0) != 0) {
                rc = s_fail (w->self, w->e, "list", path, errno, "cannot stat '%s': %s", path, strerror (errno));
                break;
            }
            is_dir = S_ISDIR (fst.st_mode);
            is_reg = S_ISREG (fst.st_mode);
        }
        if (is_dir)
            rc = s_walk (w, path);
        else if (is_reg && w->fn) {
            const char *key = path + w->key_from;
            w->listed++;
            rc = w->fn (w->ctx, key, strlen (key), (uint64_t) fst.st_size);
        }
        errno = 0;
    }
    if (rc == 0 && errno != 0)
        rc = s_fail (w->self, w->e, "list", rel, errno, "cannot read folder '%s': %s", rel, strerror (errno));
    closedir (dir);
    return rc;
}

/* Walk prefix (relative to the root; "" or ending with '/'). 1 when it does
 * not exist. */
static int
s_walk_prefix (s_walk_t *w, const char *prefix)
{
    s_file_t *self = w->self;
    const char *root = self->root[0] ? self->root : ".";
    char top[PATH_MAX];
    size_t n = strlen (prefix);
    if (n && prefix[n - 1] == '/')
        n--;
    if (n == 0)
        snprintf (top, sizeof top, ".");
    else if (n >= sizeof top)
        return s_fail (self, w->e, "list", prefix, ENAMETOOLONG, "path too long: '%s'", prefix);
    else {
        memcpy (top, prefix, n);
        top[n] = '\0';
    }
    w->key_from = strlen (top) + 1;
    w->hash = 0xcbf29ce484222325ull;
    w->folders = 0;
    w->base_fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (w->base_fd < 0) {
        int err = errno;
        s_fail (self, w->e, "list", prefix, err, "data folder '%s': %s", root, strerror (err));
        return err == ENOENT ? 1 : -1;
    }
    struct stat st;
    if (fstatat (w->base_fd, top, &st, 0) != 0) {
        int err = errno;
        close (w->base_fd);
        s_fail (self, w->e, "list", prefix, err, "data folder '%s%s': %s", self->root, top, strerror (err));
        return err == ENOENT ? 1 : -1;
    }
    int rc = s_walk (w, top);
    close (w->base_fd);
    return rc;
}

int
sb_file_engine_list (void *client, const char *prefix, const char *start_after, const char *end_at,
                     sb_storage_list_fn fn, void *ctx, sb_storage_error_t *e)
{
    (void) start_after;     /* a directory walk has no order to bound */
    (void) end_at;
    s_walk_t w = { .self = client, .fn = fn, .ctx = ctx, .e = e };
    int rc = s_walk_prefix (&w, prefix ? prefix : "");
    return rc == 0 && w.listed == 0 ? 1 : rc;   /* 1: nothing under the prefix */
}

int
sb_file_engine_fingerprint (void *client, const char *prefix, char *out, size_t out_size, sb_storage_error_t *e)
{
    s_walk_t w = { .self = client, .e = e };
    int rc = s_walk_prefix (&w, prefix ? prefix : "");
    if (rc == 1) {
        e->missing = 1;     /* the prefix itself */
        return -1;
    }
    if (rc != 0) {
        e->missing = 0;     /* something under it vanished while walked: an error */
        return -1;
    }
    snprintf (out, out_size, "%016llx/%llu", (unsigned long long) w.hash, (unsigned long long) w.folders);
    return 0;
}

static int
s_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    (void) cfg;
    return sb_file_engine_open ("file", 0, how, client, e);
}

static const char *const s_storage_types[] = { "file", "posix", NULL };
static const char *const s_schemes[] = { "file", NULL };

const sb_engine_ops_t sb_engine_file = {
    .name = "file",
    .storage_types = s_storage_types,
    .schemes = s_schemes,
    .caps = SB_ENGINE_PAGE_CACHE | SB_ENGINE_FOLDER,
    .direct_engine = "direct",
    .open = s_open,
    .close = sb_file_engine_close,
    .preflight = sb_file_engine_preflight,
    .list = sb_file_engine_list,
    .fingerprint = sb_file_engine_fingerprint,
    .stat = sb_file_engine_stat,
    .put = sb_file_engine_put,
    .put_prepared = sb_file_engine_put_prepared,
    .get_small = sb_file_engine_get_small,
    .get = sb_file_engine_get,
    .remove = sb_file_engine_remove,
    .queue = sb_file_engine_queue,
    .getevents = sb_file_engine_getevents,
    .wakeup = sb_file_engine_wakeup,
    .pending = sb_file_engine_pending,
};
