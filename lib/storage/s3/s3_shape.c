/* s3_shape: DLIO's S3 client libraries' request sizes and counts (s3_shape.h). */
#include "s3_shape.h"

#include <stdlib.h>
#include <string.h>

/* StreamingCheckpointing's figures as pytorch_obj_store_checkpointing.py
 * sets them: 32 MiB chunks and parts, reads of 4 chunks, and about 16
 * streams over all ranks (at least 2 per rank). */
#define S_DLIO_PART        (32ull << 20)
#define S_DLIO_READ_CHUNK  (128ull << 20)
#define S_DLIO_STREAMS     16u

sb_s3_lib_t
sb_s3_lib (const sb_storage_cfg_t *cfg)
{
    const char *v = sb_storage_opt (cfg, "library");
    if (!v)
        return SB_S3_LIB_NONE;
    if (!strcmp (v, "minio"))
        return SB_S3_LIB_MINIO;
    if (!strcmp (v, "s3dlio"))
        return SB_S3_LIB_S3DLIO;
    if (!strcmp (v, "s3torchconnector"))
        return SB_S3_LIB_S3TORCH;
    return SB_S3_LIB_NONE;
}

/* An engine option as a number; dflt when absent or not a number. */
static uint64_t
s_opt_u64 (const sb_storage_cfg_t *cfg, const char *key, uint64_t dflt)
{
    const char *v = sb_storage_opt (cfg, key);
    if (!v || !*v)
        return dflt;
    char *end = NULL;
    unsigned long long n = strtoull (v, &end, 10);
    return end && !*end ? (uint64_t) n : dflt;
}

void
sb_s3_ckpt_shape (const sb_storage_cfg_t *cfg, uint64_t total_ranks, sb_s3_ckpt_shape_t *out)
{
    memset (out, 0, sizeof *out);
    sb_s3_lib_t lib = sb_s3_lib (cfg);
    if (lib == SB_S3_LIB_NONE)
        return;
    uint64_t ranks = total_ranks ? total_ranks : 1;
    /* DLIO reads the world size from MPI's environment: ceil(16 / ranks), at least 2 */
    uint64_t streams = (S_DLIO_STREAMS + ranks - 1) / ranks;
    if (streams < 2)
        streams = 2;
    out->shaped = 1;
    out->read_streams = streams;
    if (lib == SB_S3_LIB_S3TORCH) {
        out->part = SB_S3_CRT_PART;
        out->upload_window = SB_S3_CRT_IN_FLIGHT;
        out->read_chunk = SB_S3_CRT_PART;
        out->read_window = SB_S3_CRT_IN_FLIGHT;
    }
    else {
        out->part = S_DLIO_PART;
        out->upload_window = streams;
        out->read_chunk = S_DLIO_READ_CHUNK;
        out->read_window = 1;
    }
    out->part = s_opt_u64 (cfg, "ckpt_part", out->part);
    out->threshold = s_opt_u64 (cfg, "ckpt_threshold", 0);
}

uint64_t
sb_s3_ckpt_depth (const sb_s3_ckpt_shape_t *shape)
{
    uint64_t reads = shape->read_streams * shape->read_window;
    return reads > shape->upload_window ? reads : shape->upload_window;
}

int
sb_s3_get_split (const sb_storage_cfg_t *cfg, uint64_t *part, uint64_t *window)
{
    if (sb_s3_lib (cfg) != SB_S3_LIB_S3TORCH)
        return 0;
    *part = SB_S3_CRT_PART;
    *window = SB_S3_CRT_IN_FLIGHT;
    return 1;
}

int
sb_s3_s3dlio_split (uint64_t size, uint64_t cores, uint64_t *chunk, uint64_t *window)
{
    const uint64_t mib = 1ull << 20;
    if (size < 32 * mib)
        return 0;
    *chunk = size < 16 * mib ? mib : size < 256 * mib ? 4 * mib : 8 * mib;
    uint64_t w = size < 32 * mib ? cores / 2 : size < 512 * mib ? cores : 2 * cores;
    uint64_t floor = size < 32 * mib ? 2 : size < 512 * mib ? 4 : 8;
    *window = w > floor ? w : floor;
    return size > *chunk;
}
