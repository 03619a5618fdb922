/* pagecache: posix_fadvise eviction; cachestat or mincore residency. */
#include "pagecache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* mincore's vector on the stack: one byte per page, 16 MiB of 4 KiB pages
 * per call */
#define S_VEC_PAGES 4096

static void
s_err (char *err, size_t err_size, const char *op, const char *name, int e)
{
    if (err && err_size)
        snprintf (err, err_size, "%s %s: %s", op, name ? name : "(file)", strerror (e));
    errno = e;
}

int
sb_pagecache_evict_fd (int fd, const char *name, char *err, size_t err_size)
{
    /* write back and wait for dirty pages first: DONTNEED drops only clean
     * pages that are not under writeback. On a clean file this is a lookup,
     * no device flush (unlike fdatasync) */
    if (sync_file_range (fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER)
        != 0 && errno != ESPIPE) {
        s_err (err, err_size, "sync_file_range", name, errno);
        return -1;
    }
    int rc = posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED);   /* returns the error, not -1 */
    if (rc != 0) {
        s_err (err, err_size, "posix_fadvise(DONTNEED)", name, rc);
        return -1;
    }
    return 0;
}

int
sb_pagecache_evict_at (int dirfd, const char *path, char *err, size_t err_size)
{
    /* O_NONBLOCK: opening a FIFO does not wait for a writer */
    int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        s_err (err, err_size, "open", path, errno);
        return -1;
    }
    struct stat st;
    if (fstat (fd, &st) != 0) {
        int e = errno;
        close (fd);
        s_err (err, err_size, "fstat", path, e);
        return -1;
    }
    if (!S_ISREG (st.st_mode)) {
        close (fd);
        if (err && err_size)
            snprintf (err, err_size, "evict %s: not a regular file", path);
        errno = EINVAL;
        return -1;
    }
    int rc = sb_pagecache_evict_fd (fd, path, err, err_size);
    int e = errno;
    close (fd);
    errno = e;
    return rc;
}

/* cachestat(2) (Linux 6.5): the page-cache state of a range of a file in
 * one call, without a mapping. Not in Debian 12's headers: its number is
 * 451 on every architecture. */
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif

typedef struct {
    uint64_t off, len;
} s_cachestat_range_t;

typedef struct {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
} s_cachestat_t;

static int s_no_cachestat;  /* set once the kernel (or a seccomp filter) refused it (atomic) */

/* Resident pages among pages [first, first + count) of fd into *pages.
 * Returns 0, 1 when cachestat is not available (use mincore), -1 on error. */
static int
s_cachestat_pages (int fd, uint64_t page, uint64_t first, uint64_t count, uint64_t *pages)
{
    if (__atomic_load_n (&s_no_cachestat, __ATOMIC_RELAXED))
        return 1;
    s_cachestat_range_t range = { .off = first * page, .len = count * page };
    s_cachestat_t cs;
    if (syscall (SYS_cachestat, fd, &range, &cs, 0) != 0) {
        if (errno == ENOSYS || errno == EPERM || errno == EOPNOTSUPP) {
            __atomic_store_n (&s_no_cachestat, 1, __ATOMIC_RELAXED);
            return 1;
        }
        return -1;
    }
    *pages = cs.nr_cache;
    return 0;
}

/* The bytes of [offset, end) in resident pages, by cachestat: the whole
 * pages in one call, a page the range covers only in part in a call of its
 * own (its bytes inside the range count). Returns as s_cachestat_pages. */
static int
s_residency_cachestat (int fd, uint64_t page, uint64_t offset, uint64_t end, uint64_t *resident)
{
    uint64_t first = offset / page, last = (end - 1) / page, got, bytes = 0;
    int rc;
    if (first == last) {
        if ((rc = s_cachestat_pages (fd, page, first, 1, &got)) != 0)
            return rc;
        *resident = got ? end - offset : 0;
        return 0;
    }
    uint64_t whole_from = first, whole_to = last + 1;   /* pages wholly inside, [from, to) */
    if (offset % page) {
        if ((rc = s_cachestat_pages (fd, page, first, 1, &got)) != 0)
            return rc;
        bytes += got ? (first + 1) * page - offset : 0;
        whole_from++;
    }
    if (end % page) {
        if ((rc = s_cachestat_pages (fd, page, last, 1, &got)) != 0)
            return rc;
        bytes += got ? end - last * page : 0;
        whole_to--;
    }
    if (whole_to > whole_from) {
        if ((rc = s_cachestat_pages (fd, page, whole_from, whole_to - whole_from, &got)) != 0)
            return rc;
        bytes += got * page;
    }
    *resident = bytes;
    return 0;
}

/* The same by mincore over a read-only mapping of the range's pages. */
static int
s_residency_mincore (int fd, uint64_t page, uint64_t offset, uint64_t end, uint64_t *resident, const char *name,
                     char *err, size_t err_size)
{
    uint64_t map_start = offset / page * page, map_len = end - map_start;
    if (map_len > (uint64_t) SIZE_MAX) {
        s_err (err, err_size, "mmap", name, EFBIG);
        return -1;
    }
    void *map = mmap (NULL, (size_t) map_len, PROT_READ, MAP_SHARED, fd, (off_t) map_start);
    if (map == MAP_FAILED) {
        s_err (err, err_size, "mmap", name, errno);
        return -1;
    }
    unsigned char vec[S_VEC_PAGES];
    uint64_t bytes = 0;
    int rc = 0;
    for (uint64_t at = map_start; at < end;) {
        uint64_t chunk = end - at < S_VEC_PAGES * page ? end - at : S_VEC_PAGES * page;
        if (mincore ((char *) map + (at - map_start), (size_t) chunk, vec) != 0) {
            s_err (err, err_size, "mincore", name, errno);
            rc = -1;
            break;
        }
        uint64_t pages = (chunk + page - 1) / page;
        for (uint64_t p = 0; p < pages; p++) {
            if (!(vec[p] & 1))
                continue;
            /* the bytes of this page inside [offset, end) */
            uint64_t lo = at + p * page, hi = lo + page;
            if (lo < offset)
                lo = offset;
            if (hi > end)
                hi = end;
            bytes += hi - lo;
        }
        at += chunk;
    }
    int e = errno;
    munmap (map, (size_t) map_len);
    errno = e;
    *resident = bytes;
    return rc;
}

int
sb_pagecache_residency (int fd, uint64_t offset, uint64_t length, sb_residency_t *out, const char *name, char *err,
                        size_t err_size)
{
    out->resident = out->checked = 0;
    struct stat st;
    if (fstat (fd, &st) != 0) {
        s_err (err, err_size, "fstat", name, errno);
        return -1;
    }
    if (!S_ISREG (st.st_mode)) {
        s_err (err, err_size, "mincore", name, EINVAL);
        return -1;
    }
    return sb_pagecache_residency_sized (fd, (uint64_t) st.st_size, offset, length, out, name, err, err_size);
}

int
sb_pagecache_residency_sized (int fd, uint64_t size, uint64_t offset, uint64_t length, sb_residency_t *out,
                              const char *name, char *err, size_t err_size)
{
    out->resident = out->checked = 0;
    if (offset >= size)
        return 0;
    uint64_t end = length == 0 || length > size - offset ? size : offset + length;
    long ps = sysconf (_SC_PAGESIZE);
    uint64_t page = ps > 0 ? (uint64_t) ps : 4096, resident = 0;
    int rc = s_residency_cachestat (fd, page, offset, end, &resident);
    if (rc < 0) {
        s_err (err, err_size, "cachestat", name, errno);
        return -1;
    }
    if (rc == 1 && s_residency_mincore (fd, page, offset, end, &resident, name, err, err_size) != 0)
        return -1;
    out->resident = resident;
    out->checked = end - offset;
    return 0;
}

/* Tests: 1 to use mincore even where cachestat works. */
void
sb_pagecache_force_mincore (int on)
{
    __atomic_store_n (&s_no_cachestat, on, __ATOMIC_RELAXED);
}

/* ---- batch ------------------------------------------------------------- */

typedef struct {
    const char *const *paths;
    const char *root;
    size_t      n;
    int         dirfd;
    size_t      next;           /* next index to take (atomic) */
    pthread_mutex_t lock;       /* the counters and first error below */
    sb_pagecache_batch_t *res;
    size_t      first_index;    /* index of res->first_error, n when none */
} s_batch_t;

static void *
s_batch_worker (void *arg)
{
    s_batch_t *b = arg;
    for (;;) {
        size_t i = __atomic_fetch_add (&b->next, 1, __ATOMIC_RELAXED);
        if (i >= b->n)
            break;
        char why[1024];
        int rc = sb_pagecache_evict_at (b->dirfd, b->paths[i], why, sizeof why);
        int e = errno;
        pthread_mutex_lock (&b->lock);
        if (rc == 0)
            b->res->evicted++;
        else {
            b->res->failed++;
            if (i < b->first_index) {
                b->first_index = i;
                b->res->first_errno = e;
                if (b->root && b->root[0] && b->paths[i][0] != '/')
                    snprintf (b->res->first_error, sizeof b->res->first_error, "%s (under %s)", why, b->root);
                else
                    snprintf (b->res->first_error, sizeof b->res->first_error, "%s", why);
            }
        }
        pthread_mutex_unlock (&b->lock);
    }
    return NULL;
}

int
sb_pagecache_evict_batch (const char *root, const char *const *paths, size_t n, size_t threads,
                          sb_pagecache_batch_t *res)
{
    memset (res, 0, sizeof *res);
    s_batch_t b = { .paths = paths, .root = root, .n = n, .dirfd = AT_FDCWD, .res = res, .first_index = n };
    if (root && root[0]) {
        b.dirfd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (b.dirfd < 0) {
            res->first_errno = errno;
            snprintf (res->first_error, sizeof res->first_error, "open %s: %s", root, strerror (errno));
            res->failed = n;
            return -1;
        }
    }
    if (pthread_mutex_init (&b.lock, NULL) != 0) {
        res->first_errno = ENOMEM;
        snprintf (res->first_error, sizeof res->first_error, "evict: cannot create a mutex");
        res->failed = n;
        if (b.dirfd != AT_FDCWD)
            close (b.dirfd);
        return -1;
    }
    if (threads == 0)
        threads = 1;
    if (threads > n)
        threads = n ? n : 1;
    pthread_t *tids = threads > 1 ? calloc (threads - 1, sizeof *tids) : NULL;
    size_t started = 0;
    for (size_t t = 0; tids && t + 1 < threads; t++) {
        if (pthread_create (&tids[t], NULL, s_batch_worker, &b) != 0)
            break;      /* the others, this thread included, take its share */
        started++;
    }
    s_batch_worker (&b);
    for (size_t t = 0; t < started; t++)
        pthread_join (tids[t], NULL);
    free (tids);
    pthread_mutex_destroy (&b.lock);
    if (b.dirfd != AT_FDCWD)
        close (b.dirfd);
    return res->failed ? -1 : 0;
}
