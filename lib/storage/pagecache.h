/* pagecache: evict a file's pages from the page cache and measure how much
 * of a byte range is resident, without root.
 *
 * Eviction is posix_fadvise (POSIX_FADV_DONTNEED) over the whole file, after
 * sync_file_range has written back and waited for any dirty pages (DONTNEED
 * skips dirty and under-writeback pages, so a file just written by datagen
 * would otherwise stay cached). It is what DLIO's per-epoch
 * `echo 3 > /proc/sys/vm/drop_caches` intends, limited to the files named and
 * needing no privilege. Pages stay when another process maps or locks them,
 * and on file systems without a page cache to drop (tmpfs keeps its pages:
 * they are the file) the call succeeds and changes nothing.
 *
 * Residency is cachestat(2) over the range's pages (Linux 6.5 and later:
 * one call for the whole pages, one for each page the range covers in
 * part), else mincore(2) over a read-only shared mapping of them (one mmap,
 * one mincore per 16 MiB, one munmap). Neither touches or reads in a page.
 * Costs are in docs/PERFORMANCE.md, "Page cache checks".
 *
 * Every function reports failures in err as "OP PATH: strerror" (the path
 * as given, joined to the root for the batch), and returns -1 with errno
 * set; nothing is logged. */
#ifndef SB_PAGECACHE_H
#define SB_PAGECACHE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of a range found resident, and bytes checked (the range clipped to
 * the file's size: a range past the end checks 0 bytes). */
typedef struct {
    uint64_t resident;
    uint64_t checked;
} sb_residency_t;

/* Evict the pages of the open file fd (any open mode; name is only for the
 * error). Returns 0, or -1 with err set. */
int sb_pagecache_evict_fd (int fd, const char *name, char *err, size_t err_size);

/* Evict the file at path, relative to the directory dirfd (AT_FDCWD: the
 * working directory; an absolute path ignores dirfd). Opens it read-only,
 * without blocking (a FIFO is refused, not waited on); only regular files.
 * Returns 0, or -1 with err set. */
int sb_pagecache_evict_at (int dirfd, const char *path, char *err, size_t err_size);

/* Residency of [offset, offset + length) of the open file fd (length 0: up
 * to the end of the file) into *out. A file of 0 bytes, or a range past its
 * end, gives 0 of 0. The counts are bytes of the range itself: a page
 * partly inside the range counts only its bytes inside. name is only for
 * the error. Returns 0, or -1 with err set (e.g. fd not a regular file, or
 * a file that cannot be mapped). */
int sb_pagecache_residency (int fd, uint64_t offset, uint64_t length, sb_residency_t *out, const char *name,
                            char *err, size_t err_size);
/* The same, for a regular file fd of size bytes that the caller has just
 * fstat-ed (no fstat of its own). */
int sb_pagecache_residency_sized (int fd, uint64_t size, uint64_t offset, uint64_t length, sb_residency_t *out,
                                  const char *name, char *err, size_t err_size);

/* Tests: 1 to measure residency with mincore even where cachestat works,
 * 0 to use cachestat again where it works. */
void sb_pagecache_force_mincore (int on);

/* What sb_pagecache_evict_batch did. */
typedef struct {
    uint64_t evicted;       /* files whose pages were dropped */
    uint64_t failed;        /* files that could not be (missing, not regular, ...) */
    int      first_errno;   /* errno of the first failure in path order, 0 when none */
    char     first_error[1200]; /* its message, naming ROOT/PATH; "" when none */
} sb_pagecache_batch_t;

/* Evict the n files paths[0..n-1], relative to root (NULL or "": the
 * working directory; an absolute path ignores root), with up to threads
 * threads (0 counts as 1; never more than n). Every path is tried, failures
 * are counted and the first one (lowest index) is kept in *res. The
 * calling thread is one of the threads: one that cannot be started leaves
 * its share to the others. Returns 0 when every file was evicted, -1 when
 * one or more failed or root cannot be opened (res->first_error says which
 * and why). */
int sb_pagecache_evict_batch (const char *root, const char *const *paths, size_t n, size_t threads,
                              sb_pagecache_batch_t *res);

#endif
