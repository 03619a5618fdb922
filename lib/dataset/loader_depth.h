/* loader_depth: how many reads each of DLIO's loader workers keeps in
 * flight on the paths where DLIO_local_changes' PyTorch loader runs its
 * iterable datasets (torch_data_loader.py TorchIterableDataset and
 * TorchIterableDatasetSimple), which read ahead of the batches on their
 * own instead of one sample per worker:
 *
 *   npz, npy, jpeg, png on an object store (_s3_iterable_mixin.py
 *   _s3_stream_next), by storage_library:
 *     s3dlio            prefetch_window GETs (default 64): its loader keeps
 *                       that many in flight (PyBytesAsyncDataLoader);
 *     minio             min(16, prefetch_window): chunks of prefetch_window
 *                       objects (default 256), each fetched by a pool of 16
 *                       threads (_prefetch_minio), one chunk at a time;
 *     s3torchconnector  1: S3IterableDataset read object after object
 *                       (_prefetch_s3torchconnector, sequential reader);
 *   npz, npy, jpeg, png on direct_fs without reader.odirect
 *   (_local_fs_iterable_mixin.py _localfs_stream_next): chunks of
 *   prefetch_window files (256), 64 read at once, one chunk at a time:
 *   min(64, prefetch_window); stagger as minio's;
 *   parquet on local files without a storage_library, and on an object store
 *   with s3torchconnector (parquet_reader_file_iterable.py,
 *   parquet_reader_s3_iterable.py, driven by TorchIterableDataset's sliding
 *   window): every footer of the worker's files first, one at a time, then
 *   min(prefetch_workers, prefetch_window + 1) row-group reads (the window
 *   submits the next row group before it waits for the current one; the
 *   pool has prefetch_workers threads; both default 64).
 *
 * Everywhere else 0: shardbench's own rule (worker/trainer/reader.h). The
 * rank's reads in flight are then loader threads x this depth. */
#ifndef SB_LOADER_DEPTH_H
#define SB_LOADER_DEPTH_H

#include <stdint.h>

#include "workload.h"

/* The reads in flight per loader thread of wl (0: shardbench's rule). */
uint64_t sb_loader_depth (const sb_workload_t *wl);

/* Seconds loader worker k holds its first fetch of each epoch back, per k:
 * the chunked S3 path (minio, s3torchconnector; npz, npy, jpeg, png) sleeps
 * k x train.computation_time (its mean) before its first chunk unless
 * storage_options.stagger_workers is false (_s3_stream_next); 0 elsewhere
 * (s3dlio's path does not stagger). */
double sb_loader_stagger_s (const sb_workload_t *wl);

/* Consecutive parquet row groups one read covers: DLIO's s3dlio parquet
 * reader (parquet_reader_s3dlio.py, storage_library s3dlio with the pytorch
 * loader) reads coalesce_rgs (8) of them by one GET, from the first one's
 * first byte to the last one's end; 1 elsewhere (one read per row group). */
uint64_t sb_loader_coalesce (const sb_workload_t *wl);

/* How the footers are read when sb_loader_footers_first: DLIO's s3dlio
 * parquet reader (s3dlio's ParquetIndex) reads the last footer_cap bytes
 * (4 MiB) of each file, after a stat, footer_batch_size (16) files at once
 * and the next batch when the last is in, once a process (its index is
 * kept across epochs): *tail the bytes, *batch the files at once; else
 * *tail 0 (pyarrow's footer reads, every epoch) and *batch 1. */
void sb_loader_footers (const sb_workload_t *wl, uint64_t *tail, uint64_t *batch);

/* 1 when wl's parquet loader reads every footer of a loader thread's files
 * before its first row group (the sliding-window path above), else 0. */
int sb_loader_footers_first (const sb_workload_t *wl);

#endif
