/* s3_engine: the ops of the engines that speak S3's protocol through one
 * client (s3_client.c): the s3 engine and gcs (Google Cloud Storage's XML
 * API, lib/storage/gcs/), which differ only in their names, schemes and
 * defaults (their configure ops). */
#ifndef SB_S3_ENGINE_H
#define SB_S3_ENGINE_H

#include "engine.h"

int    sb_s3e_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e);
void   sb_s3e_close (void *client);
int    sb_s3e_preflight (void *client, int write, sb_storage_check_fn check, void *ctx);
int    sb_s3e_list (void *client, const char *prefix, const char *start_after, const char *end_at,
                    sb_storage_list_fn fn, void *ctx, sb_storage_error_t *e);
int    sb_s3e_stat (void *client, const char *key, uint64_t *size, sb_storage_error_t *e);
int    sb_s3e_put (void *client, const char *key, uint64_t size, sb_storage_fill_fn fill, void *ctx, unsigned flags,
                   sb_storage_error_t *e);
int    sb_s3e_get_small (void *client, const char *key, char *buf, size_t cap, size_t *len, sb_storage_error_t *e);
int    sb_s3e_get (void *client, const char *key, uint64_t offset, uint64_t length, unsigned flags,
                   uint64_t *received, sb_storage_error_t *e);
int    sb_s3e_remove (void *client, const char *key, sb_storage_error_t *e);
int    sb_s3e_queue (void *client, const sb_io_t *io, sb_storage_error_t *e);
int    sb_s3e_getevents (void *client, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e);
void   sb_s3e_wakeup (void *client);
size_t sb_s3e_pending (const void *client);
size_t sb_s3e_stats (void *client, sb_storage_stats_t *out, size_t max);
const char *sb_s3e_credentials_source (const void *client);

#define SB_S3_ENGINE_CAPS (SB_ENGINE_OBJECTS | SB_ENGINE_ENDPOINTS | SB_ENGINE_LIST_ORDERED | SB_ENGINE_ASYNC)
/* the ops, as designated initializers of an sb_engine_ops_t */
#define SB_S3_ENGINE_OPS                                                                                           \
    .open = sb_s3e_open, .close = sb_s3e_close, .preflight = sb_s3e_preflight, .list = sb_s3e_list,                \
    .stat = sb_s3e_stat, .put = sb_s3e_put, .get_small = sb_s3e_get_small, .get = sb_s3e_get,                      \
    .remove = sb_s3e_remove, .queue = sb_s3e_queue, .getevents = sb_s3e_getevents, .wakeup = sb_s3e_wakeup,        \
    .pending = sb_s3e_pending, .stats = sb_s3e_stats, .credentials_source = sb_s3e_credentials_source

#endif
