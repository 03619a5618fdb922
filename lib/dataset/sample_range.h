/* sample_range: the bytes one sample's read covers, and the size the
 * generator gives an object, so that a worker derives its reads from the
 * catalog position and the sampler alone (no key or range travels).
 *
 * A sample of an object of `size` bytes holding spf samples:
 * - size unknown (dataset.skip_listing on real storage): spf > 1: the
 *   nominal record [in_file * record_length, +record_length); spf == 1:
 *   the whole object (length 0);
 * - parquet with spf > 1, a DLIO-named object whose size has the layout
 *   format_parquet computes from the sizes: the row group holding the
 *   sample (its column chunks), as DLIO's parquet reader reads it; samples
 *   of one group share it (*group set: the caller reads it once; *run_end:
 *   the sample after the group's last). On synthetic storage (sizes without
 *   parquet's framing) the group is its rows' equal shares, read as one;
 * - else the sample's equal share: record = size / spf, the last sample
 *   taking the remainder. */
#ifndef SB_SAMPLE_RANGE_H
#define SB_SAMPLE_RANGE_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "format.h"

#define SB_SIZE_UNKNOWN UINT64_MAX
#define SB_NO_DLIO_INDEX UINT64_MAX

/* Caches the parquet layout of the last record size (owned), and for
 * uncompressed files DLIO's read plan of it (sb_parquet_plan_parse over
 * the footer the generator writes for that size, every file of the size
 * having the same): a group is then read from its first byte to the end of
 * the last column read (storage.storage_options.columns), and each file's
 * footer reads are known (sb_sample_range_footer). */
typedef struct {
    sb_parquet_layout_t *layout;
    uint64_t             record;
    int                  failed;    /* the layout of `record` cannot be computed */
    uint64_t             per;       /* rows per group of the layout */
    sb_parquet_plan_t   *plan;      /* NULL: compressed pages, or no plan */
    uint64_t             plan_size; /* the size of the files the plan is for */
    sb_parquet_range_t   footer[2]; /* the footer reads of such a file */
    size_t               nfooter;
} sb_sample_ranger_t;

void sb_sample_ranger_fini (sb_sample_ranger_t *self);

/* Range of sample in_file of the object at DLIO index dlio
 * (SB_NO_DLIO_INDEX: not a DLIO name) of ds, size bytes (SB_SIZE_UNKNOWN
 * allowed). Returns 0, or -1 with err set when the object holds fewer
 * bytes than samples (key names it in the message). */
int sb_sample_range (sb_sample_ranger_t *self, const sb_dataset_t *ds, uint64_t size, uint64_t dlio,
                     uint64_t in_file, const char *key, uint64_t *offset, uint64_t *length, uint64_t *run_end,
                     int *group, char *err, size_t err_size);

/* The footer reads DLIO's parquet reader makes of the object at DLIO index
 * dlio (size bytes) once per epoch (pyarrow: the last 64 KiB, and the
 * metadata again when it does not fit), after sb_sample_range gave one of
 * its samples a group: up to 2 ranges into out, their count returned; 0
 * when unknown (compressed pages, other layouts: not read). */
size_t sb_sample_range_footer (const sb_sample_ranger_t *self, uint64_t size, sb_parquet_range_t out[2]);

/* 1 when the size of every object of ds's format is computable without
 * encoding it (synthetic storage, raw, npy, npz, tfrecord, parquet, png and
 * jpeg: sb_format_image_size), else 0 (hdf5: its encoder decides the size). */
int sb_generator_size_known (const sb_dataset_t *ds, int synthetic);

/* The size the generator gives object dlio of ds: synthetic storage: the
 * payload (sb_dataset_object_size); else the framed object's size.
 * Returns 0, or -1 with err set. */
int sb_generator_size (const sb_dataset_t *ds, int synthetic, uint64_t dlio, uint64_t *size, char *err,
                       size_t err_size);

#endif
