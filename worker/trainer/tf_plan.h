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
 *     opens, the footer and a read of every row group of the file (its
 *     open submits them all), which serve the thread's samples however
 *     often the shuffled samples come back to a group (its reader keeps
 *     what it read until the epoch ends). Where the groups are not known
 *     (compressed pages, other writers' files) a group is read when the
 *     thread's first sample of it needs it.
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
    SB_TF_WHOLE_FILE,   /* npz, npy (several samples a file), tfrecord: one whole-file read per (thread, file) */
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

/* ---- parquet files whose row groups are known: DLIO's open reads them all
 * ParquetReaderFileIterable.open submits a read of every row group of the
 * file when the thread opens it, whichever its samples fall in. The trainer
 * opens (sb_tf_plan_open), queues every group in file order
 * (sb_tf_plan_queue), issues them as slots allow (sb_tf_plan_next_pending,
 * sb_tf_plan_issued), records their completion (sb_tf_plan_done), and
 * serves each position from its group's read (sb_tf_plan_get): the first
 * position a read serves carries the read in the trace. */
typedef enum { SB_TF_PENDING = 1, SB_TF_IN_FLIGHT, SB_TF_DONE } sb_tf_state_t;

typedef struct {
    sb_tf_state_t state;
    uint64_t      slot, seq;            /* IN_FLIGHT */
    uint64_t      bytes, latency_us;    /* DONE */
    double        start;                /* DONE: when it was queued */
    int           used;                 /* a position was served from it */
} sb_tf_read_t;

/* thread opens file: its previous file is forgotten. 0, or -1 out of memory. */
int sb_tf_plan_open (sb_tf_plan_t *self, size_t thread, uint64_t file);
/* Queue a read of the open file. 0, or -1 out of memory. */
int sb_tf_plan_queue (sb_tf_plan_t *self, size_t thread, uint64_t offset, uint64_t length);
/* The thread's next queued read not issued: 1 with *offset, *length; else 0. */
int sb_tf_plan_next_pending (const sb_tf_plan_t *self, size_t thread, uint64_t *offset, uint64_t *length);
/* That read was issued as `seq` in `slot`. */
void sb_tf_plan_issued (sb_tf_plan_t *self, size_t thread, uint64_t slot, uint64_t seq);
/* 1 when a thread has queued reads not issued. */
int sb_tf_plan_pending (const sb_tf_plan_t *self);
/* The read of [offset, +length) of file by thread, NULL when none (valid
 * until the thread's next open, queue or add). */
sb_tf_read_t *sb_tf_plan_get (sb_tf_plan_t *self, size_t thread, uint64_t file, uint64_t offset, uint64_t length);
/* The read of [offset, +length) of file by thread completed (ignored when
 * the thread has opened another file since). */
void sb_tf_plan_done (sb_tf_plan_t *self, size_t thread, uint64_t file, uint64_t offset, uint64_t length,
                      uint64_t bytes, uint64_t latency_us, double start);

#endif
