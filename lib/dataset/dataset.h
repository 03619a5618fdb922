/* dataset: DLIO's dataset layout, names and object sizes.
 *
 * Object i of N lives at  train/[SUB/]PREFIX_III_of_N.FORMAT  (valid/ for the
 * evaluation set: sb_dataset_t.split) where III is i
 * zero-padded to the digits of N and SUB (only when num_subfolders > 1) is
 * i % num_subfolders zero-padded to the digits of num_subfolders, exactly as
 * DLIO's data generator names them. Sizes and content derive from the run
 * seed, so a generator and a verifier agree without sharing any list. */
#ifndef SB_DATASET_H
#define SB_DATASET_H

#include <stddef.h>
#include <stdint.h>

#define SB_DATASET_MAX_DIMS 8   /* dataset.record_dims: at most this many dimensions */

typedef struct {
    const char *prefix;          /* borrowed: dataset.file_prefix, e.g. "img" */
    const char *format;          /* borrowed: dataset.format, e.g. "npz" */
    uint64_t    files;           /* dataset.num_files_train */
    uint64_t    subfolders;      /* dataset.num_subfolders_train */
    uint64_t    samples_per_file;
    uint64_t    record_length;   /* bytes per sample */
    uint64_t    record_stdev;
    uint64_t    seed;
    const char *parquet_columns; /* borrowed: "name:dtype:size,..." or NULL (format.h) */
    uint64_t    parquet_row_group; /* rows per parquet row group, 0: 1 MiB of records */
    uint64_t    parquet_coalesce;  /* consecutive row groups one read covers (DLIO's s3dlio coalesce_rgs), 0 or 1: one */
    const char *parquet_compression; /* borrowed: dataset.compression, page codec (NULL or "none": none) */
    const char *parquet_read_columns;/* borrowed: storage.storage_options.columns "a,b" (NULL or "": all) */
    /* DLIO's array shape of a sample */
    const char *element_type;    /* borrowed: dataset.record_element_type, numpy's name ("uint8"; NULL: uint8) */
    const uint64_t *record_dims; /* borrowed: dataset.record_dims (NULL or ndims 0: DLIO's dim1 x dim2) */
    size_t      record_ndims;
    /* the folder of the set, "train" (NULL) or "valid"
     * (DLIO's evaluation files: files = num_files_eval, subfolders =
     * num_subfolders_eval, named as train/ is) */
    const char *split;
} sb_dataset_t;

/* Key of object i, relative to the data folder ("train/img_07_of_64.npz").
 * Returns 0, or -1 when it does not fit in size bytes. */
int sb_dataset_key (const sb_dataset_t *self, uint64_t i, char *key, size_t size);

/* Key of the object at position p (0..files-1) of the name order (folder
 * by folder when there are subfolders). */
int sb_dataset_key_sorted (const sb_dataset_t *self, uint64_t p, char *key, size_t size);

/* DLIO index i of the object at position p (p < files) of the name order:
 * sb_dataset_key_sorted (p) == sb_dataset_key (sb_dataset_index_at (p)). */
uint64_t sb_dataset_index_at (const sb_dataset_t *self, uint64_t p);

/* The set's folder: "train", or sb_dataset_t.split ("valid"). Borrowed. */
const char *sb_dataset_split (const sb_dataset_t *self);

/* Folder of object i relative to the data folder ("train" or "train/3"). */
int sb_dataset_folder (const sb_dataset_t *self, uint64_t i, char *dir, size_t size);

/* The payload bytes of object i: samples_per_file records. A record is
 * dim1 x dim2 elements as DLIO generates it (sb_dataset_record_dims), so a
 * record_length that is not a square is rounded down to one, as DLIO writes
 * it, or the product of record_dims when given; an element is the
 * itemsize of element_type (DLIO's record_element_type: float32 makes a
 * record 4 x dim1 x dim2 bytes, as DLIO writes it); parquet records come
 * from N(record_length, record_stdev), at least 1 byte (its rows follow its
 * columns); png and jpeg objects are dim1 x dim2 bytes (DLIO writes one
 * sample's uint8 bytes a file, whatever samples_per_file and element_type). */
uint64_t sb_dataset_object_size (const sb_dataset_t *self, uint64_t i);

/* DLIO's two dimensions of object i's records: d = floor(sqrt(record_length))
 * each, or with record_stdev each drawn from N(d, record_stdev / 2 /
 * sqrt(record_length)), truncated and at least 1 (DLIO's distribution; its
 * per-file values depend on numpy's stream in each datagen rank, which
 * shardbench does not replay: docs/DLIO.md). */
void sb_dataset_record_dims (const sb_dataset_t *self, uint64_t i, uint64_t *dim1, uint64_t *dim2);

/* Bytes of one element of element_type (NULL: uint8, 1), 0 when the name
 * is not one of numpy's uint8, int8, uint16, int16, float16, uint32, int32,
 * float32, uint64, int64, float64; *descr (may be NULL) gets numpy's type
 * string ('|u1', '<f4', ...). */
size_t sb_dataset_element_size (const char *element_type, const char **descr);

/* The shape of one sample of object i, as DLIO's generators shape it:
 * record_dims when given (*listed 1), else (dim1, dim2) of
 * sb_dataset_record_dims (*listed 0). Up to max dims; returns the count. */
size_t sb_dataset_sample_shape (const sb_dataset_t *self, uint64_t i, uint64_t *dims, size_t max, int *listed);

/* Seed of the content of the object named key (relative key, as from
 * sb_dataset_key). Derived from the name, so a reader that knows only the
 * key can verify what it reads. */
uint64_t sb_dataset_content_seed (uint64_t run_seed, const char *key);

/* Check a part of every object name (dataset.file_prefix, dataset.format):
 * no '/', no "..", no control character (bytes below 0x20, 0x7f). Returns 0,
 * or -1 with the reason in why (the value is not repeated there). */
int sb_dataset_check_part (const char *part, char *why, size_t why_size);

/* Check an object name relative to the data folder before it is opened,
 * created or sent: not empty, relative (no leading '/'), no ".." component,
 * no control character, so that data folder + name stays under the data
 * folder. Returns 0, or -1 with the reason in why. */
int sb_dataset_check_name (const char *name, char *why, size_t why_size);

#endif
