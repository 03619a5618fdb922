/* kv_entry_io: the bytes of one KV-cache entry, as the reference's tiers move
 * them (kv_cache/backends.py), without ever holding an entry in memory.
 *
 * Storage tier (files): an entry is <dir>/<key>.npy, numpy's .npy 1.0 of a
 * float16 array shaped (layers, 2, tokens, kv_heads, head_dim) as the
 * reference's KVCacheGenerator makes it; np.save's header byte for byte. A
 * write opens (O_CREAT | O_TRUNC), writes header and body, fsyncs and
 * closes: host time = open + writes, device time = fsync (NVMeBackend.write).
 * A read opens, drops the file's pages (posix_fadvise DONTNEED), closes
 * (host), then opens, reads it whole and closes (device: np.load), then
 * copies the entry's bytes once in memory (host: the reference's np.array of
 * the loaded array), as NVMeBackend.read. The body streams from one process-wide read-only noise
 * buffer at an offset of the entry's key, the first 8 bytes of every 4 KiB
 * block stamped with the key and the block's index (no two blocks alike: a
 * deduplicating store cannot shrink it, as the reference's XOR stamp), through
 * the caller's chunk buffer: memory stays flat whatever the entry's size.
 * With odirect the file is written and read with O_DIRECT; its size is the
 * exact .npy size (header + body, not a multiple of 4 KiB), so the last
 * piece of a write, shorter than a block, goes through the page cache (the
 * fsync covers it).
 *
 * Object storage (an engine with endpoints): an entry is the object
 * <prefix><key>.npy, PUT whole (device time = the PUT, durable when it
 * returns), read with one GET of the whole object (device time = the GET),
 * removed on eviction; the same bytes as the file.
 *
 * CPU tier: the reference copies the entry's array in RAM (np.copy) on a
 * write and on a read; sb_kv_cpu_copy copies the same number of bytes from
 * the noise buffer through the chunk buffer, so the time is a real memcpy
 * of that size while no entry is kept. */
#ifndef SB_KV_ENTRY_IO_H
#define SB_KV_ENTRY_IO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "kv_params.h"

/* The chunk buffer each thread owns (aligned for O_DIRECT): 1 MiB, so that
 * the reference's 200 or 500 service threads hold 200 or 500 MiB at most. */
#define SB_KV_CHUNK (1u << 20)

typedef struct {
    double total, device, host;     /* seconds, as the reference's IOTiming */
} sb_kv_timing_t;

/* The file call a thread is in, for the rank's watch of calls that do not
 * return (a stuck NFS or FUSE mount; shardbench.stall_timeout_s): set around
 * each open, write, fsync, posix_fadvise, read, close and remove of an
 * entry's file, moved on by every chunk written or read. An object store's
 * requests are bounded by its own request timeout instead. The owner thread
 * writes it, the rank's thread reads it (sb_kv_call_stalled); lock guards
 * op, path and since_ns. Every change also stamps rank_moved, shared by the
 * rank's threads: the last time any of its file calls began, moved or ended. */
typedef struct {
    pthread_mutex_t lock;
    const char     *op;             /* a literal; NULL: no call in progress */
    char            path[4096];
    uint64_t        since_ns;       /* sb_mono_ns when it began or last moved on */
    atomic_int      ended;          /* the thread returned: it can be joined */
    _Atomic uint64_t *rank_moved;   /* borrowed; NULL: none */
} sb_kv_call_t;

/* A thread's means of I/O: its chunk buffer, its client of the object store
 * when entries are objects (a client serves one thread at a time), and its
 * call record (NULL: not watched). cut_short: the object whose PUT abort
 * gave up (its owner removes it: a store may keep a cut-short upload's first
 * bytes as the object, as s3rver does, where S3 keeps nothing). */
typedef struct sb_storage sb_storage_t;
typedef struct {
    uint8_t      *chunk;
    sb_storage_t *client;
    sb_kv_call_t *call;
    char          cut_short[4096];
} sb_kv_buf_t;

/* A call record with no call in progress, stamping rank_moved (may be
 * NULL); 0, or -1 (errno). */
int sb_kv_call_init (sb_kv_call_t *c, _Atomic uint64_t *rank_moved);
void sb_kv_call_fini (sb_kv_call_t *c);

/* 1 when c's call has not returned nor moved on for limit_s seconds: the
 * call into *op (a literal) and path, its age into *for_s; 0 otherwise. */
int sb_kv_call_stalled (sb_kv_call_t *c, double limit_s, const char **op, char *path, size_t path_size,
                        double *for_s);

typedef struct {
    char        dir[4096];          /* the rank's folder, no trailing '/'; objects: the key prefix, '/'-ended */
    int         objects;            /* entries are objects <dir><key>.npy of the client's store */
    int         odirect;
    const sb_kv_model_t *model;     /* the entry's shape (sb_kv_model_shape) and element size */
    uint64_t    bytes_per_token;
    const atomic_int *abort;        /* non-zero: give up between chunks (ECANCELED) */
} sb_kv_io_t;

/* np.save's header for an entry of tokens tokens: into out (room >= 256);
 * returns its length (a multiple of 64), 0 when it does not fit. */
size_t sb_kv_npy_header (const sb_kv_io_t *io, uint64_t tokens, uint8_t *out, size_t room);

/* A chunk buffer of SB_KV_CHUNK bytes aligned to 4 KiB (free()), NULL when out of memory. */
uint8_t *sb_kv_chunk_new (void);

/* <dir>/<key>.npy (objects: <dir><key>.npy) into path; 0, or -1 when it does not fit. */
int sb_kv_entry_path (const sb_kv_io_t *io, const char *key, char *path, size_t size);

/* Write the entry key of tokens tokens (body tokens x bytes_per_token bytes).
 * 0 with *t; -1 with *err_no and err (a file cut short is removed; ECANCELED:
 * abort said so). */
int sb_kv_entry_write (const sb_kv_io_t *io, const char *key, uint64_t tokens, sb_kv_buf_t *b, sb_kv_timing_t *t,
                       int *err_no, char *err, size_t err_size);

/* Read the entry back whole; it must hold header + tokens x bytes_per_token bytes. */
int sb_kv_entry_read (const sb_kv_io_t *io, const char *key, uint64_t tokens, sb_kv_buf_t *b, sb_kv_timing_t *t,
                      int *err_no, char *err, size_t err_size);

/* Remove the entry's file (one that is not there is fine). */
int sb_kv_entry_delete (const sb_kv_io_t *io, const char *key, sb_kv_buf_t *b, int *err_no, char *err, size_t err_size);

/* A CPU-tier copy of bytes bytes (see above); its time in *t (total = device = host). */
void sb_kv_cpu_copy (const char *key, uint64_t bytes, sb_kv_buf_t *b, sb_kv_timing_t *t);

/* Fill buf with the entry's file bytes [offset, offset + len) (header included). */
void sb_kv_entry_fill (const sb_kv_io_t *io, const char *key, uint64_t tokens, uint64_t offset, uint8_t *buf,
                       size_t len);

/* Seconds on the monotonic clock (the reference's time.perf_counter). */
double sb_kv_clock (void);

#endif
