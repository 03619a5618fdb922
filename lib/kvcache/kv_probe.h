/* kv_probe: is a folder's storage honest enough for the KV-cache benchmark's
 * timings?
 *
 * The KV-cache benchmark takes the time of fsync after a buffered write as
 * the device's write time, and the time of a read after
 * posix_fadvise(POSIX_FADV_DONTNEED) as the device's read time. Nothing in
 * it checks that either call did what it is trusted to do: a library
 * preloaded in front of the C library that makes them return 0 and do
 * nothing turns both figures into page-cache figures. This module checks,
 * in this order, and measures:
 *
 *  1. the functions the benchmark's I/O goes through (posix_fadvise, fsync,
 *     fdatasync, open, openat, read, write, pread, pwrite, mincore and their
 *     64-bit names) resolve, for this process, to the C library's own
 *     definitions (else REFUSED naming the function and the library that
 *     replaced it). A sanitizer's runtime, which calls the C library's
 *     function after its own bookkeeping, is accepted and said.
 *  2. a probe file (.shardbench-kvprobe-XXXXXX in the folder, removed at the
 *     end) of probe_bytes incompressible, never-zero bytes is written and
 *     fsync'ed: the block device behind the folder must show at least
 *     probe_bytes more written sectors across the fsync (across the write
 *     and the fsync with O_DIRECT, whose writes reach the device before
 *     fsync). Other writers on the device only add.
 *  3. (buffered only) the file's pages, resident after the write (mincore),
 *     must be at most 1/8 resident after posix_fadvise(DONTNEED), and a
 *     re-read of the whole file must fetch at least 7/8 of it from the
 *     device (this process's /proc/self/io read_bytes, else the device's
 *     read sectors).
 *
 * A folder with no block device behind it (tmpfs, overlay on tmpfs, NFS,
 * FUSE, ZFS: no /sys/dev/block statistics to read) is UNVERIFIABLE, said
 * with its file system type, and nothing is written there.
 *
 * Not caught: a shim that also fakes /sys or /proc statistics or mincore;
 * a device whose volatile write cache acknowledges flushes before the data
 * is stable (the counters count what the host sent, not what the media
 * kept). */
#ifndef SB_KV_PROBE_H
#define SB_KV_PROBE_H

#include <stdint.h>

typedef enum { SB_KV_PROBE_OK, SB_KV_PROBE_REFUSED, SB_KV_PROBE_UNVERIFIABLE } sb_kv_probe_status_t;

typedef struct {
    sb_kv_probe_status_t status;
    char line[512];     /* what was measured, one line: each check done, "; " between them */
    char why[1024];     /* REFUSED / UNVERIFIABLE (and -1): the cause, naming the folder; "" when OK */
} sb_kv_probe_t;

/* the probe file's size when probe_bytes is 0, and the largest accepted */
#define SB_KV_PROBE_DEFAULT_BYTES (8u << 20)
#define SB_KV_PROBE_MAX_BYTES     (1ull << 30)

/* flags of sb_kv_probe_folder_flags */
#define SB_KV_PROBE_MEASURE_ONLY 1u   /* skip check 1: only what the device counts decides (tests: a shim
                                         caught by measurement alone) */

/* "OK", "REFUSED", "UNVERIFIABLE" */
const char *sb_kv_probe_status_name (sb_kv_probe_status_t s);

/* Probe folder (an existing directory) with a file of probe_bytes (0: the
 * default; rounded up to whole 4 KiB pages; at most SB_KV_PROBE_MAX_BYTES),
 * written and read with O_DIRECT when odirect is non-zero (then check 3 is
 * left out: no page cache is involved; the O_DIRECT open itself must
 * work). Returns 0 with out->status set; -1 only for an error of its own
 * (bad arguments, the probe file cannot be created or written: out->why
 * names the folder and the errno; out->status is then REFUSED, so that a
 * caller that looks only at the status does not run). The probe file is
 * removed before it returns, whatever happened. Blocks only in the I/O of
 * probe_bytes on a local block device (a network or FUSE folder is not
 * written). */
int sb_kv_probe_folder (const char *folder, uint64_t probe_bytes, int odirect, sb_kv_probe_t *out);
int sb_kv_probe_folder_flags (const char *folder, uint64_t probe_bytes, int odirect, unsigned flags,
                              sb_kv_probe_t *out);

/* Check 1 alone: 0 with out->status OK or REFUSED (out->why names folder
 * when given, else "this process"). */
int sb_kv_probe_symbols (const char *folder, sb_kv_probe_t *out);

#endif
