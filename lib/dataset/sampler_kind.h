/* sampler_kind: which sampler a workload runs and with how many loader
 * threads, as DLIO_local_changes decides them.
 *
 * Kind (sb_sampler_kind_for):
 *   shardbench.sampler: global        -> SB_SAMPLER_GLOBAL (shardbench's own);
 *   reader.data_loader_sampler set    -> index: DLIO_INDEX, iterative: DLIO_ITERATIVE;
 *   else the data loader (reader.data_loader, default the framework):
 *     tensorflow                      -> DLIO_ITERATIVE (config.py derive_configurations);
 *     pytorch (and others)            -> DLIO_FILES for parquet on any storage, or npz, npy,
 *                                        jpeg, png on object storage or direct_fs (torch_data_loader.py
 *                                        TorchDataLoader.read: its iterable datasets);
 *                                        else DLIO_INDEX (map-style dlio_sampler).
 * Threads (sb_loader_threads): reader.read_threads, raised when it is 1 to
 * min(cores // local ranks, 8) (config.py derive_configurations, "PR-5"),
 * computed per host; 0 (tensorflow's and pytorch's in-process loading) is 1. */
#ifndef SB_SAMPLER_KIND_H
#define SB_SAMPLER_KIND_H

#include <stdint.h>

#include "sampler.h"
#include "workload.h"

sb_sampler_kind_t sb_sampler_kind_for (const sb_workload_t *wl);

/* The loader threads per rank on a host of `cores` cores running
 * `local_ranks` ranks. Always >= 1. */
uint64_t sb_loader_threads (uint64_t read_threads, uint64_t cores, uint64_t local_ranks);

/* 1 when DLIO_local_changes sleeps reader.preprocess_time
 * on each sample that wl's loader of `kind` reads, else 0. The sleep is
 * FormatReader.preprocess (reader/reader_handler.py), called by the base
 * read_index and next; readers that override them without calling it skip
 * it:
 *   map-style loading (DLIO_INDEX: read_index; GLOBAL reads the same way):
 *     every format but parquet (its readers' read_index has no preprocess);
 *   reader.next() (DLIO_ITERATIVE: tf.data and iterative; DLIO_FILES:
 *     PyTorch's iterable datasets): hdf5, indexed_binary and
 *     mmap_indexed_binary (FormatReader.next); npz and npy with
 *     reader.odirect (not direct_fs's own O_DIRECT: its local iterable readers) or on S3 without a storage_library (NPZReaderODIRECT,
 *     NPYReaderODirect, NPZReaderS3, NPYReaderS3); not tfrecord (TFReader's
 *     tf.data pipeline), jpeg, png, local npz/npy, S3 with a library (the
 *     streaming _localfs_/_s3_stream_next) nor parquet. */
int sb_preprocess_applies (sb_sampler_kind_t kind, const sb_workload_t *wl);

#endif
