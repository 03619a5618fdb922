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

#endif
