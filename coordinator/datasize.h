/* datasize: the MLPerf Storage rule for the minimum training dataset.
 *
 * min_samples = max (steps_per_epoch x batch x accelerators,
 *                    hosts x host_memory_GB x 5 x 2^30 / record_length)
 * with steps_per_epoch = 500; files = min_samples / samples_per_file
 * (rounded up), bytes = min_samples x record_length. The second term keeps
 * the dataset at five times the hosts' memory, so the page cache cannot
 * serve it (MLPerf Storage submission rules, "Minimum dataset size"). */
#ifndef SB_DATASIZE_H
#define SB_DATASIZE_H

#include <stddef.h>
#include <stdint.h>

#define SB_DATASIZE_STEPS 500           /* minimum steps per epoch */
#define SB_DATASIZE_MEMORY_FACTOR 5     /* HOST_MEMORY_MULTIPLIER */
#define SB_DATASIZE_FILES_PER_FOLDER 10000

typedef struct {
    uint64_t hosts;
    double   host_memory_gb;    /* per host, GiB as the rules count them (2^30 bytes) */
    uint64_t accelerators;      /* across all hosts */
    uint64_t batch_size;
    uint64_t record_length;     /* bytes per sample */
    uint64_t samples_per_file;
} sb_datasize_in_t;

typedef struct {
    uint64_t samples_steps;     /* 500 x batch x accelerators */
    uint64_t samples_memory;    /* hosts x memory x 5 / record length, rounded up */
    uint64_t samples;           /* the larger */
    uint64_t files;             /* samples / samples_per_file, rounded up */
    uint64_t subfolders;        /* 0 up to 10,000 files, else one per 10,000 files */
    double   gib;               /* samples x record_length / 2^30 */
} sb_datasize_t;

/* Returns 0, or -1 with err set when an input is zero or the result does
 * not fit in 64 bits. */
int sb_datasize (const sb_datasize_in_t *in, sb_datasize_t *out, char *err, size_t err_size);

#endif
