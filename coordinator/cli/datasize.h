/* datasize: the MLPerf Storage rule for the minimum training dataset, as
 * mlpstorage computes it (mlpstorage_py/rules/utils.py,
 * calculate_training_data_size, and TrainingBenchmark.datasize):
 *
 *   memory      = hosts x host_memory_GiB x 2^30, or the measured total
 *                 memory of the hosts when that is larger (storage#785)
 *   file_bytes  = num_samples_per_file x record_length_bytes
 *                 (record_length_bytes as written, fractional: 114660.07)
 *   files_mem   = ceil (5 x memory / file_bytes)           (0 when file_bytes is 0)
 *   files_steps = ceil (500 x accelerators x batch / num_samples_per_file)
 *   files       = max (files_mem, files_steps)
 *   bytes       = int (files x file_bytes)
 *   subfolders  = int (files / 10000) when files > 10000, else 0
 *                 (mlpstorage's hint "--params dataset.num_subfolders_train=N")
 *
 * Every step is done as Python does it there: whole numbers exactly, then
 * IEEE double true divisions and products in the same order, so the counts
 * are equal in every case (for datasets under 9e18 bytes). The
 * record length comes from the workload as written (sb_datasize_record_length
 * in cli.c reads it, or sums the Parquet columns as mlpstorage does). */
#ifndef SB_DATASIZE_H
#define SB_DATASIZE_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define SB_DATASIZE_STEPS 500           /* minimum steps per epoch */
#define SB_DATASIZE_MEMORY_FACTOR 5     /* dataset >= 5 x the hosts' memory */
#define SB_DATASIZE_FILES_PER_FOLDER 10000

typedef struct {
    uint64_t hosts;
    double   host_memory_gb;    /* declared, per host, GiB (2^30 bytes) */
    uint64_t accelerators;      /* across all hosts (mlpstorage's num_processes) */
    uint64_t batch_size;
    double   record_length;     /* bytes per sample, as written (may be fractional); 0: unknown */
    uint64_t samples_per_file;
    uint64_t measured_memory_bytes;     /* the hosts' measured total memory; 0: not measured */
} sb_datasize_in_t;

typedef struct {
    double   memory_bytes;      /* the memory the dataset is sized against */
    int      memory_measured;   /* 1 when the measured memory won over the declared */
    double   file_bytes;        /* samples_per_file x record_length */
    uint64_t samples_steps;     /* 500 x batch x accelerators */
    uint64_t files_memory;      /* ceil (5 x memory / file_bytes) */
    uint64_t files_steps;       /* ceil (samples_steps / samples_per_file) */
    uint64_t files;             /* the larger */
    uint64_t samples;           /* files x samples_per_file */
    uint64_t bytes;             /* int (files x file_bytes) */
    uint64_t subfolders;        /* int (files / 10000) above 10,000 files, else 0 */
    double   gib;               /* bytes / 2^30 */
} sb_datasize_t;

/* Bytes a listed catalog of files objects takes in the result database:
 * about 16 an object when every key is a DLIO name and the sizes differ
 * (measured 16.1 to 16.7, docs/LIMITS.md "Bytes per object"; other names
 * add their key); none when the sizes are all the same, nor for derived
 * datasets (synthetic storage, dataset.skip_listing). */
#define SB_DATASIZE_CATALOG_BYTES_PER_OBJECT 16
double sb_datasize_catalog_gib (uint64_t files);

/* Returns 0, or -1 with err set when hosts, declared memory, accelerators,
 * batch size or samples per file is not > 0, the record length is negative
 * or not finite, or a count does not fit in 64 bits. */
int sb_datasize (const sb_datasize_in_t *in, sb_datasize_t *out, char *err, size_t err_size);

/* The record length mlpstorage sizes a dataset of format `format` with:
 * dataset.record_length_bytes of cfg as written (a fraction stays), else
 * for parquet the sum over dataset.parquet.columns of size x (8 for
 * float64/int64, 1 for uint8/bool, else 4; size default 1, dtype default
 * float32), else 0 (mlpstorage then sizes by the 500 steps alone; the
 * older spelling dataset.record_length is not read there either). *how
 * (static text) says which. Returns 0, or -1 with "origin:line: key 'k':
 * ..." in err. */
int sb_datasize_record_length (sb_config_t *cfg, const char *format, double *out, const char **how,
                               char *err, size_t err_size);

#endif
