/* sampler_kind: DLIO's choice of sampler and loader threads (see sampler_kind.h). */
#include "sampler_kind.h"
#include "engine.h"

#include <string.h>
#include <strings.h>

#define S_MAX_AUTO_READ_THREADS 8   /* DLIO_MAX_AUTO_THREADS' default */

static int
s_one_of (const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcasecmp (s, *list) == 0)
            return 1;
    return 0;
}

sb_sampler_kind_t
sb_sampler_kind_for (const sb_workload_t *wl)
{
    if (strcasecmp (wl->sampler, "global") == 0)
        return SB_SAMPLER_GLOBAL;
    if (strcasecmp (wl->data_loader_sampler, "index") == 0)
        return SB_SAMPLER_DLIO_INDEX;
    if (strcasecmp (wl->data_loader_sampler, "iterative") == 0)
        return SB_SAMPLER_DLIO_ITERATIVE;
    const char *loader = wl->data_loader[0] ? wl->data_loader : wl->framework;
    if (strcasecmp (loader, "tensorflow") == 0)
        return SB_SAMPLER_DLIO_ITERATIVE;
    if (strcasecmp (loader, "pytorch") == 0) {
        static const char *const per_file_formats[] = { "npz", "npy", "jpeg", "jpg", "png", NULL };
        if (strcasecmp (wl->format, "parquet") == 0)
            return SB_SAMPLER_DLIO_FILES;
        /* TorchIterableDatasetSimple: object stores and direct_fs */
        if (((sb_storage_caps (&wl->storage) & SB_ENGINE_OBJECTS) || !strcasecmp (wl->storage_type_given, "direct_fs"))
            && s_one_of (wl->format, per_file_formats))
            return SB_SAMPLER_DLIO_FILES;
    }
    return SB_SAMPLER_DLIO_INDEX;
}

uint64_t
sb_loader_threads (uint64_t read_threads, uint64_t cores, uint64_t local_ranks)
{
    if (read_threads == 1) {
        uint64_t per_rank = cores / (local_ranks ? local_ranks : 1);
        if (per_rank < 1)
            per_rank = 1;
        return per_rank < S_MAX_AUTO_READ_THREADS ? per_rank : S_MAX_AUTO_READ_THREADS;
    }
    return read_threads ? read_threads : 1;
}

int
sb_preprocess_applies (sb_sampler_kind_t kind, const sb_workload_t *wl)
{
    static const char *const base_next[] = { "hdf5", "h5", "indexed_binary", "mmap_indexed_binary", NULL };
    static const char *const npy_like[] = { "npz", "npy", NULL };
    if (strcasecmp (wl->format, "parquet") == 0)
        return 0;
    if (kind == SB_SAMPLER_GLOBAL || kind == SB_SAMPLER_DLIO_INDEX)
        return 1;
    if (s_one_of (wl->format, base_next))
        return 1;
    if (s_one_of (wl->format, npy_like))
        return (wl->odirect && !(kind == SB_SAMPLER_DLIO_FILES && wl->storage.direct_fs_iterable))
            || ((sb_storage_caps (&wl->storage) & SB_ENGINE_OBJECTS) && !wl->storage_library[0]);
    return 0;
}
