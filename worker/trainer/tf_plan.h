/* tf_plan: the reads of DLIO's tf.data loader (FormatReader.next in a
 * reader per loader thread, created afresh every epoch), where they are not
 * one read per sample.
 *
 * DLIO_local_changes' tensorflow loader (data_loader/tf_data_loader.py) runs
 * one reader per loader thread each epoch, over that thread's entries of
 * build_sample_map_iter (the iterative sampler kind). What a reader reads
 * depends on the format:
 *   npz and npy (reader/npz_reader_iterable.py, npy_reader_iterable.py:
 *     _LocalFSIterableMixin._localfs_stream_next): every file of the
 *     thread's entries once, whole, before serving its samples; a file whose
 *     entries two threads share is read by both (the O_DIRECT readers and
 *     S3 without a storage_library read a file whole when FormatReader.next
 *     opens it, which is the same but for a thread whose entries start
 *     inside a file: its closes then fall inside files, and such a file is
 *     opened, so read, again: not reproduced);
 *   parquet (reader/parquet_reader_file_iterable.py): per file the thread
 *     opens, the footer, and each row group once (its reader keeps what it
 *     read until the epoch ends), however often the shuffled samples come
 *     back to it.
 * A thread's entries visit its files in increasing order and never come
 * back to one (entry i reads local file i / spf), so the plan keeps, per
 * loader thread, only its current file and the row groups of it read this
 * epoch; memory is the groups of one file per thread. */
#ifndef SB_TF_PLAN_H
#define SB_TF_PLAN_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    SB_TF_NONE = 0,     /* one read per sample (or shardbench's own row-group rule) */
    SB_TF_WHOLE_FILE,   /* npz, npy: one whole-file read per (thread, file) */
    SB_TF_GROUPS,       /* parquet: one read per (thread, file, row group), footer per (thread, file) */
} sb_tf_mode_t;

/* The mode of a run: sampler kind name (WELCOME sampler), format,
 * samples per file. Only the iterative kind reads through reader.next(). */
sb_tf_mode_t sb_tf_mode (const char *sampler, const char *format, uint64_t samples_per_file);

typedef struct sb_tf_plan sb_tf_plan_t;

/* A plan for `threads` loader threads. NULL when out of memory. */
sb_tf_plan_t *sb_tf_plan_new (size_t threads);
/* Accepts NULL; nulls the pointer. */
void sb_tf_plan_destroy (sb_tf_plan_t **self_p);
/* A new epoch: every thread's reader starts with nothing read. */
void sb_tf_plan_reset (sb_tf_plan_t *self);

/* 1 when `file` is not thread's current file (its reader opens it: the
 * parquet footer is read first), else 0. */
int sb_tf_plan_opens (const sb_tf_plan_t *self, size_t thread, uint64_t file);

/* 1 when thread read (or is reading) [offset, +length) of file this epoch:
 * *slot and *seq name the read; else 0. */
int sb_tf_plan_find (const sb_tf_plan_t *self, size_t thread, uint64_t file, uint64_t offset, uint64_t length,
                     uint64_t *slot, uint64_t *seq);

/* thread reads [offset, +length) of file as read `seq` in `slot`; a new
 * file forgets the thread's previous one. 0, or -1 out of memory. */
int sb_tf_plan_add (sb_tf_plan_t *self, size_t thread, uint64_t file, uint64_t offset, uint64_t length,
                    uint64_t slot, uint64_t seq);

#endif
