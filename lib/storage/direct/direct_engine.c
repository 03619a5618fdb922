/* direct_engine: the file engine's folder tree with data files read through
 * O_DIRECT: reads are widened to SB_FILE_DIRECT_ALIGN blocks (offset
 * aligned down, end aligned up, the last block cut short by the end of the
 * file) and count only the bytes asked for; the page cache is neither read
 * nor evicted nor sampled. A file system that refuses O_DIRECT (EINVAL at
 * open, e.g. tmpfs before Linux 6.6) fails the read with an error naming
 * the file. Everything else is the file engine (file_engine.h). */
#include "file_engine.h"

static int
s_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    (void) cfg;
    return sb_file_engine_open ("direct", 1, how, client, e);
}

static const char *const s_schemes[] = { "direct", NULL };

const sb_engine_ops_t sb_engine_direct = {
    .name = "direct",
    .schemes = s_schemes,
    .caps = SB_ENGINE_DIRECT | SB_ENGINE_FOLDER,
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
