/* reader: the I/O engine of a rank.
 *
 * A rank pushes read requests to its reader and gets completions back,
 * both through channels (lib/base/chan.h: a mutex and a list, no system
 * call while both ends are busy; the rank's poll loop sleeps on the
 * completions' eventfd). Each read thread has its own lane of requests
 * and reads them one after another in the order they came: the caller
 * names the lane of each read, as DLIO's PyTorch loader hands each batch to
 * one worker process, which reads the batch's samples one at a time
 * (a pool sharing one queue would have the next D samples in flight
 * together, adjacent files that the block layer merges into one request;
 * DLIO has one sample of each of D batches in flight). Behind them sit clients of the
 * storage engine the rank's storage names (lib/storage/engine.h); the
 * reader never asks which engine it is, only what it can do:
 * - SB_ENGINE_NO_IO (synthetic): no threads; a read completes inside
 *   sb_reader_submit (see sb_reader_take_inline);
 * - SB_ENGINE_ASYNC (one client keeps many reads in flight: an object
 *   store's HTTP multi handle, uring's ring): one thread per reader (a reader is one rank's)
 *   with one client of depth D, where D is the engine's own option
 *   "iodepth" when it is set (storage.<engine>.iodepth), else
 *   storage.max_in_flight for an object store (s3), else the
 *   read_threads the reader was given (uring: as many reads in flight as
 *   DLIO's loader threads); the thread waits in sb_storage_getevents and
 *   sb_reader_submit wakes it (sb_storage_wakeup); with
 *   SB_ENGINE_QUEUE_AHEAD (uring) it keeps up to D more reads queued,
 *   waiting in the engine for a slot, so that the engine starts the next
 *   read as one ends (still D in flight at most);
 * - anything else (file, direct): read_threads lanes, each read by one
 *   thread, or by storage.loader_depth threads where DLIO's iterable
 *   readers keep that many reads in flight per loader worker
 *   (lib/dataset/loader_depth.h: its parquet row-group pool), each thread
 *   with one client of depth 1 whose sb_storage_getevents performs the
 *   read (pread into the client's io_buffer buffer): memory is the
 *   threads x io_buffer whatever the object sizes.
 * With storage.loader_depth set, an SB_ENGINE_ASYNC client's depth D is
 *   read_threads x loader_depth (DLIO's reads in flight per rank) unless
 *   the engine's own "iodepth" is set.
 * Engines with SB_ENGINE_PAGE_CACHE get SB_IO_EVICT and sampled
 * SB_IO_RESIDENCY flags (lib/storage/pagecache.h); engines with
 * SB_ENGINE_ENDPOINTS served by one thread report per-endpoint counters.
 * Bytes are never held whole, and a read counts only when all its bytes
 * arrived. */
#ifndef SB_READER_H
#define SB_READER_H

#include <stdint.h>

#include "dataset.h"
#include "histogram.h"
#include "storage.h"

typedef struct sb_reader sb_reader_t;

typedef struct {
    uint64_t bytes;         /* bytes that arrived */
    uint64_t latency_ns;
    double   issued_s;      /* Unix seconds the engine issued the read (its completion less latency_ns) */
    uint64_t tag;           /* the tag the read was submitted with */
    int      error;         /* errno, or -1 for a short read / verify mismatch / HTTP failure; 0 when fine */
    char     message[2048]; /* what failed, naming the path or endpoint and key */
    char     target[1024];  /* path or key */
    char     endpoint[256]; /* engines with endpoints only */
    long     http_status;
    char     service_code[64]; /* sb_storage_error_t code: the service's error code */
    int      library_code;     /* sb_storage_error_t lib_code: the client library's code */
    int      attempt;
    /* file engine, page cache: bytes of the read's range that were
     * resident just before it was read, of checked bytes (0 of 0 when the
     * read was not sampled, read with O_DIRECT or not from a file) */
    uint64_t resident_bytes, checked_bytes;
} sb_read_result_t;

/* O_DIRECT alignment of buffers, offsets and lengths (the direct engine's
 * SB_FILE_DIRECT_ALIGN, lib/storage/file/file_engine.h). O_DIRECT wants all
 * three to be multiples of the device's logical block size: 512 bytes on
 * most disks, 4096 on 4Kn disks and NVMe namespaces formatted with 4 KiB
 * blocks. 4096 is a multiple of both (and the page size on x86-64 and
 * 4K-page arm64), so it is right on every common device without asking it;
 * it is also DLIO's alignment (its O_DIRECT readers' default). A device
 * with larger logical blocks refuses the reads (EINVAL, reported). */
#define SB_READER_DIRECT_ALIGN 4096u

/* Per-endpoint counters of an SB_ENGINE_ENDPOINTS engine (see sb_reader_endpoint_stats). */
typedef struct {
    char           endpoint[256];
    uint64_t       requests, bytes, errors, retries;
    sb_histogram_t latency;
} sb_reader_endpoint_t;

/* Start the engine for storage (copied; storage->engine names the engine)
 * reading below
 * root (a folder ending with '/' for files, a key prefix for objects);
 * threads: read_threads (engines without SB_ENGINE_ASYNC or NO_IO);
 * verify: compare bytes with the generator, seeded by seed. NULL on failure
 * (err set). */
sb_reader_t *sb_reader_new (const sb_storage_cfg_t *storage, const char *root, size_t threads, size_t buffer_bytes,
                            int verify, uint64_t seed, char *err, size_t err_size);

/* How many reads a reader for storage with threads (as sb_reader_new)
 * keeps in flight: 0 for an SB_ENGINE_NO_IO engine, the client's depth for
 * an SB_ENGINE_ASYNC one, else threads x storage.loader_depth (1 when 0).
 * What the fd budget counts. */
size_t sb_reader_reads_in_flight (const sb_storage_cfg_t *storage, size_t threads);

/* How the objects were generated (copied): with a framed dataset.format
 * (npz, npy, tfrecord, png, jpeg) verification compares with that format's
 * generator; without this call, with the raw content stream. Call before
 * the first read. Returns 0, or -1 with err set (a format that cannot be
 * read). */
int sb_reader_set_dataset (sb_reader_t *self, const sb_dataset_t *ds, char *err, size_t err_size);

/* reader.odirect: 1 to open files with O_DIRECT: a reader of an engine
 * with SB_ENGINE_FOLDER and without SB_ENGINE_DIRECT switches to the
 * engine that reads the same folders with O_DIRECT (direct); the other
 * engines ignore it. A bridge until callers name the engine in
 * storage.engine. Reads then cover the sample's range widened to
 * SB_READER_DIRECT_ALIGN (offset aligned down, end aligned up, the last
 * block cut short by the end of the file), and count only the bytes the
 * sample asked for. A file system that refuses O_DIRECT (EINVAL at open,
 * e.g. tmpfs before Linux 6.6) fails the read with an error naming the
 * file and the key. Call before the first read. Returns 0 (switched, or
 * nothing to switch), or -1 with err naming the folder (and the engine's
 * errno) when the switch cannot be made: the engine names no O_DIRECT
 * engine (engine.h direct_engine) or one not built, or a client of it
 * cannot be opened; the reader then stays as it was, buffered, and must
 * not be used as if it read with O_DIRECT. */
int sb_reader_set_direct_io (sb_reader_t *self, int on, char *err, size_t err_size);

/* Sample the page-cache residency of 1 read in every (1: every read, 0:
 * none) before it is read, chosen by the key's hash, so the same samples
 * are checked every epoch and on every run. The default is 1: a check
 * costs 1 to 70 us with cachestat (Linux 6.5+; 64 KiB to a cached 140 MiB
 * file), 12 us to 2.6 ms with the mincore fallback (docs/PERFORMANCE.md,
 * "Page cache checks"), against milliseconds for reading the same bytes
 * from a device, and is left out of the read's latency. Reads with O_DIRECT are never sampled: they do not come from
 * the page cache. Call before the first read. */
void sb_reader_set_residency_sampling (sb_reader_t *self, uint64_t every);

/* Per-endpoint counters since the last call, then reset; only between
 * reads (no read in flight). Writes up to max entries into out and returns
 * how many (0 without SB_ENGINE_ENDPOINTS), or -1. */
int sb_reader_endpoint_stats (sb_reader_t *self, sb_reader_endpoint_t *out, size_t max);

/* After sb_reader_try_take gave a failed read of an SB_ENGINE_ENDPOINTS engine: the per-endpoint counters
 * the engine sends right behind every failed read, then resets, so a failed
 * run still records the attempts, errors and retries that led to it. Waits
 * up to 1 s. Returns how many entries were written (0 without SB_ENGINE_ENDPOINTS),
 * or -1. */
int sb_reader_failure_stats (sb_reader_t *self, sb_reader_endpoint_t *out, size_t max);
/* A read of this engine that has made no progress (its open, stat or one
 * read call has not returned: sb_storage_open_t.progress_ns) for timeout_s
 * seconds: 1 with its key (relative to root) and how long in *for_s, else
 * 0 (always 0 for engines without I/O, and for object stores, whose
 * requests are bounded by their own timeouts: s3; a local engine with many
 * reads in flight, uring, has stalled when none of them completed for
 * timeout_s while reads were pending). Once
 * it returned 1, sb_reader_destroy does not wait for the stuck thread. */
int sb_reader_stalled (sb_reader_t *self, double timeout_s, char *key, size_t key_size, double *for_s);

/* Teardown, in steps a caller with many readers runs for all of them at
 * once, so that stuck threads are woken and waited for in parallel (one
 * deadline for the whole worker, not 4 s per thread):
 *   sb_reader_stop every reader; then, until no reader has threads left
 *   to wait for: sb_reader_join_until every reader with one shared
 *   deadline a second ahead, then sb_reader_wake every reader;
 *   last sb_reader_destroy, which leaves stuck threads behind.
 * sb_reader_stop tells the threads to stop (an interrupted read gives up);
 * it does not wait. Accepts NULL; a second call does nothing. */
void sb_reader_stop (sb_reader_t *self);
/* Join every thread that ends by until_ns (sb_mono_ns clock; already past:
 * only those that ended). Returns how many threads are still worth waiting
 * for: a thread that is moving (each call returns within a second) is
 * waited for however long its reads take; one stuck in a read (see
 * sb_reader_stalled, or in one call for over a second) is given up when it
 * has not returned a deadline after its third sb_reader_wake. */
size_t sb_reader_join_until (sb_reader_t *self, uint64_t until_ns);
/* Interrupt each stuck thread with a signal, at most 3 times in all. */
void sb_reader_wake (sb_reader_t *self);
/* Stop and join the threads (the steps above, if the caller did not run
 * them); accepts NULL and nulls the pointer. A stuck thread that still
 * does not return (about 4 s) is left behind with the memory it uses. */
void sb_reader_destroy (sb_reader_t **self_p);

/* Flags of a read: SB_READ_EVICT drops the file's pages from the page cache
 * (posix_fadvise, lib/storage/pagecache.h) after opening it and before reading
 * (engines with SB_ENGINE_PAGE_CACHE; the others ignore it); its cost is not
 * part of the read's latency, and a failure fails the read. */
#define SB_READ_EVICT 1u
/* SB_READ_PARQUET_TAIL: the read is the last 4 bytes of a parquet file,
 * which must be parquet's magic "PAR1" (pyarrow refuses a file that does
 * not end with it): other bytes fail the read as a verification does
 * ("... differs from the generator"), whatever reader.verify says. */
#define SB_READ_PARQUET_TAIL 2u

/* Queue a read of [offset, offset+length) of key, tagged with tag (the
 * completion carries it back), with SB_READ_* flags, on lane `lane` (the
 * loader thread that reads it, taken modulo the reader's threads: a pool's
 * thread reads its lane's reads in their order; one thread of an
 * SB_ENGINE_ASYNC engine reads every lane's in the order they came). key
 * may be NULL when sb_reader_needs_keys says so. Returns 0 or -1. */
int sb_reader_submit (sb_reader_t *self, const char *key, uint64_t offset, uint64_t length, uint64_t tag,
                      uint64_t lane, unsigned flags);

/* 0 when reads need no key (SB_ENGINE_NO_IO without verification), else 1. */
int sb_reader_needs_keys (const sb_reader_t *self);

/* 1 when a read does nothing but complete, at once, with the bytes asked
 * for (SB_ENGINE_NO_IO and SB_ENGINE_READS_FREE without verification: the
 * engine neither reads, generates nor fails anything), so that the caller may count it as completed without
 * queueing it: the per-read queue and completion bookkeeping are most of the
 * cost of a read that does nothing. Else 0. */
int sb_reader_reads_free (const sb_reader_t *self);

/* An SB_ENGINE_NO_IO engine completes every read inside sb_reader_submit (it
 * fills a buffer at memory speed when verifying): this takes those
 * completions, summed. Returns the number of reads (0 for other engines)
 * and adds their bytes to *bytes. */
uint64_t sb_reader_take_inline (sb_reader_t *self, uint64_t *bytes);

/* A poll loop waits for completions on this fd (POLLIN), and only after
 * sb_reader_arm returned 0: the completion that makes them `want` (or a
 * failed one) then makes it readable. */
int sb_reader_completion_fd (const sb_reader_t *self);
/* Right before sleeping on sb_reader_completion_fd, for `want` completions
 * (0 counts as 1; no fewer can move the rank on, so the loop sleeps
 * through the others): 1 when that many are queued (take them; do not
 * sleep), 0 when armed. */
int sb_reader_arm (sb_reader_t *self, size_t want);

/* Take one completion (blocks if none). Returns 0, or -1 when what came
 * was not a completion. */
int sb_reader_take (sb_reader_t *self, sb_read_result_t *result);
/* sb_reader_take without waiting: 0 with *result set, 1 when no completion
 * is queued, -1 when what came was not a completion (an engine's stats
 * reply out of turn). */
int sb_reader_try_take (sb_reader_t *self, sb_read_result_t *result);

#endif
