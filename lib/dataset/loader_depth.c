/* loader_depth: DLIO's reads in flight per loader worker (see loader_depth.h). */
#include "loader_depth.h"
#include "engine.h"
#include "sampler_kind.h"

#include <strings.h>

#define S_S3DLIO_WINDOW 64      /* _s3_stream_s3dlio: prefetch_window's default */
#define S_CHUNK 256             /* _s3_stream_next: prefetch_window's default for the chunked libraries */
#define S_MINIO_THREADS 16      /* _prefetch_minio: min(16, objects of the chunk) */
#define S_LOCAL_THREADS 64      /* _local_fs_iterable_mixin.py: 64 reads of a chunk at once */
#define S_RG_WINDOW 64          /* TorchIterableDataset: prefetch_window's default */
#define S_RG_WORKERS 64         /* the parquet readers' prefetch_workers default */
#define S_S3DLIO_PQ_THREADS 32  /* parquet_reader_s3dlio.py: prefetch_workers, else prefetch, else 32 */
#define S_S3DLIO_PQ_MAX 1024    /* its max_outstanding cap (before the free-memory one) */
#define S_S3DLIO_PQ_COALESCE 8  /* its coalesce_rgs */
#define S_S3DLIO_FOOTER_CAP (4ull << 20)    /* its footer_cap */
#define S_S3DLIO_FOOTER_BATCH 16            /* its footer_batch_size */

static int
s_is (const char *s, const char *a)
{
    return strcasecmp (s, a) == 0;
}

/* The sliding row-group window of TorchIterableDataset: which readers run it. */
static int
s_rg_window (const sb_workload_t *wl)
{
    if (!s_is (wl->format, "parquet") || sb_sampler_kind_for (wl) != SB_SAMPLER_DLIO_FILES)
        return 0;
    if (sb_storage_caps (&wl->storage) & SB_ENGINE_OBJECTS)
        return s_is (wl->storage_library, "s3torchconnector");
    return wl->storage_library[0] == '\0';
}

/* DLIO's s3dlio parquet reader with TorchIterableDataset's iter_epoch. */
static int
s_s3dlio_parquet (const sb_workload_t *wl)
{
    return s_is (wl->format, "parquet") && sb_sampler_kind_for (wl) == SB_SAMPLER_DLIO_FILES
        && s_is (wl->storage_library, "s3dlio");
}

uint64_t
sb_loader_coalesce (const sb_workload_t *wl)
{
    if (!s_s3dlio_parquet (wl))
        return 1;
    return wl->storage.coalesce_rgs ? wl->storage.coalesce_rgs : S_S3DLIO_PQ_COALESCE;
}

uint64_t
sb_loader_depth (const sb_workload_t *wl)
{
    const sb_storage_cfg_t *s = &wl->storage;
    if (s_s3dlio_parquet (wl)) {
        uint64_t threads = s->prefetch_workers ? s->prefetch_workers : s->prefetch ? s->prefetch : S_S3DLIO_PQ_THREADS;
        uint64_t cap = s->max_outstanding ? s->max_outstanding : S_S3DLIO_PQ_MAX;
        return threads < cap ? threads : cap;
    }
    if (s_rg_window (wl)) {
        uint64_t workers = s->prefetch_workers ? s->prefetch_workers : S_RG_WORKERS;
        uint64_t window = (s->prefetch_window ? s->prefetch_window : S_RG_WINDOW) + 1;
        return workers < window ? workers : window;
    }
    if (sb_sampler_kind_for (wl) != SB_SAMPLER_DLIO_FILES || s_is (wl->format, "parquet"))
        return 0;
    if (s->direct_fs_iterable) {    /* _localfs_stream_next: chunks of prefetch_window, 64 at once */
        uint64_t chunk = s->prefetch_window ? s->prefetch_window : S_CHUNK;
        return chunk < S_LOCAL_THREADS ? chunk : S_LOCAL_THREADS;
    }
    if (!(sb_storage_caps (s) & SB_ENGINE_OBJECTS))
        return 0;
    if (s_is (wl->storage_library, "s3dlio"))
        return s->prefetch_window ? s->prefetch_window : S_S3DLIO_WINDOW;
    if (s_is (wl->storage_library, "minio")) {
        uint64_t chunk = s->prefetch_window ? s->prefetch_window : S_CHUNK;
        return chunk < S_MINIO_THREADS ? chunk : S_MINIO_THREADS;
    }
    if (s_is (wl->storage_library, "s3torchconnector"))
        return 1;
    return 0;
}

double
sb_loader_stagger_s (const sb_workload_t *wl)
{
    if (!wl->storage.stagger_workers || sb_loader_depth (wl) == 0 || s_is (wl->format, "parquet")
        || !(s_is (wl->storage_library, "minio") || s_is (wl->storage_library, "s3torchconnector")
             || wl->storage.direct_fs_iterable))
        return 0;
    return wl->computation_time > 0 ? wl->computation_time : 0;
}

void
sb_loader_footers (const sb_workload_t *wl, uint64_t *tail, uint64_t *batch)
{
    *tail = 0;
    *batch = 1;
    if (!s_s3dlio_parquet (wl))
        return;
    *tail = wl->storage.footer_cap ? wl->storage.footer_cap : S_S3DLIO_FOOTER_CAP;
    *batch = wl->storage.footer_batch_size ? wl->storage.footer_batch_size : S_S3DLIO_FOOTER_BATCH;
}

int
sb_loader_footers_first (const sb_workload_t *wl)
{
    return s_rg_window (wl) || s_s3dlio_parquet (wl);
}
