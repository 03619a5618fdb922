/* dlio_tf: what DLIO_local_changes' tensorflow loader would do where it
 * loses or repeats data, as one line a run prints once (docs/DLIO.md).
 *
 * - tfrecord (reader/tf_reader.py TFReader.next, one tf.data pipeline per
 *   rank built once for the run): the rank's list, already 1/R of the set,
 *   is sharded again by comm_size (files when it has at least R, else
 *   records) and the dataset repeats, so each epoch's steps re-read a 1/R
 *   slice of the rank's files about R times and (R-1)/R of the set is never
 *   read. shardbench reads each rank's files once an epoch in the iterative
 *   order (the same steps and, for files of one size, the same bytes).
 * - npz or npy with several samples per file (reader/npz_reader_iterable.py,
 *   npy_reader_iterable.py: _localfs_stream_next): each loader thread yields every sample of every
 *   file its entries touch, so a file whose entries two threads share has
 *   its samples yielded twice while the loop's step limit leaves as many
 *   others out. shardbench reads as DLIO does (a file once, whole, per
 *   thread that needs it) and serves each entry of the iterative map once. */
/* - npz, npy, jpeg or png read by DLIO's iterable readers (local files
 *   without reader.odirect, or S3 through a storage_library): their next()
 *   (_local_fs_iterable_mixin.py _localfs_stream_next, _s3_iterable_mixin.py
 *   _s3_stream_next) yields one image per batch, while the loader's
 *   tf.data.Dataset.from_generator (data_loader/tf_data_loader.py) declares
 *   batches of (batch_size, max_dimension, max_dimension): TensorFlow's shape
 *   check stops the run at its first batch, in the warm-up before epoch 1,
 *   after the first files were read. shardbench runs the epochs. */
#ifndef SB_DLIO_TF_H
#define SB_DLIO_TF_H

#include <stddef.h>
#include <stdint.h>

#include "sampler.h"
#include "workload.h"

/* The (loader thread, file) pairs of one rank's build_sample_map_iter:
 * files of spf samples split in blocks of max(1, k / threads) entries,
 * block b to thread b % threads (k = files * spf). */
uint64_t sb_dlio_tf_thread_files (uint64_t files, uint64_t spf, uint64_t threads);

/* The line to print once for a run of wl with `kind`, `ranks` ranks,
 * `listed` files listed and `threads` loader threads per rank, into buf:
 * 1 when there is one, 0 when DLIO's loader neither loses nor repeats data
 * here. */
int sb_dlio_tf_note (const sb_workload_t *wl, sb_sampler_kind_t kind, uint64_t ranks, uint64_t listed,
                     uint64_t threads, char *buf, size_t size);

/* tfrecord with the tensorflow loader (not reader.odirect): the size of
 * each read of a file, as DLIO's TFRecordDataset(buffer_size=
 * reader.transfer_size) reads it front to back (TensorFlow's 256 KiB when
 * transfer_size is not given); 0 elsewhere. */
uint64_t sb_dlio_tf_read_size (const sb_workload_t *wl);

/* The line to print once where DLIO's tensorflow loader would stop at its
 * first batch (see above), into buf: 1 when there is one, else 0. */
int sb_dlio_tf_stop_note (const sb_workload_t *wl, char *buf, size_t size);

#endif
