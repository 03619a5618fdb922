/* file_engine: the file engine's ops, shared with the direct engine.
 *
 * The file engine (file_engine.c) and the direct engine
 * (lib/storage/direct/direct_engine.c) read the same folder tree; direct
 * opens data files with O_DIRECT and widens reads to aligned blocks. Both
 * ops tables point at these functions; only open differs (the flag). A
 * client keeps one read in flight (depth 1): sb_storage_queue stores it and
 * sb_storage_getevents performs it with pread into the client's buffer, as
 * fio's sync engines do; a pool of clients, one per thread, is the pread
 * pool (worker/trainer/reader.c). */
#ifndef SB_FILE_ENGINE_H
#define SB_FILE_ENGINE_H

#include "engine.h"

/* O_DIRECT alignment of buffers, offsets and lengths (4096: a multiple of
 * 512 and 4K logical blocks; DLIO's O_DIRECT default). */
#define SB_FILE_DIRECT_ALIGN 4096u

/* Open a client of root (how->root) for engine name; direct: 1 to open data
 * files for reading with O_DIRECT. The buffer of a read in flight is
 * how->buffer_bytes rounded up to whole aligned blocks (1 MiB when 0). */
int  sb_file_engine_open (const char *name, int direct, const sb_storage_open_t *how, void **client,
                          sb_storage_error_t *e);
void sb_file_engine_close (void *client);
int  sb_file_engine_preflight (void *client, int write, sb_storage_check_fn check, void *ctx);
int  sb_file_engine_list (void *client, const char *prefix, const char *start_after, const char *end_at,
                          sb_storage_list_fn fn, void *ctx, sb_storage_error_t *e);
int  sb_file_engine_fingerprint (void *client, const char *prefix, char *out, size_t out_size, sb_storage_error_t *e);
int  sb_file_engine_stat (void *client, const char *key, uint64_t *size, sb_storage_error_t *e);
int  sb_file_engine_put (void *client, const char *key, uint64_t size, sb_storage_fill_fn fill, void *ctx,
                         unsigned flags, sb_storage_error_t *e);
int  sb_file_engine_get_small (void *client, const char *key, char *buf, size_t cap, size_t *len,
                               sb_storage_error_t *e);
int  sb_file_engine_get (void *client, const char *key, uint64_t offset, uint64_t length, uint64_t *received,
                         sb_storage_error_t *e);
int  sb_file_engine_remove (void *client, const char *key, sb_storage_error_t *e);
int  sb_file_engine_queue (void *client, const sb_io_t *io, sb_storage_error_t *e);
int  sb_file_engine_getevents (void *client, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e);
/* From now on a read interrupted by a signal (EINTR) gives up instead of
 * retrying: how a reader stops a thread stuck in a read (a FIFO, a hung
 * mount) with a signal. Any thread may call it. */
void sb_file_engine_wakeup (void *client);
size_t sb_file_engine_pending (const void *client);

#endif
