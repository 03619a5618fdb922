/* shard: the arithmetic of equal shards, steps and shuffles.
 *
 * S samples over R ranks: every rank owns k = floor(S/R) positions
 * [r*k, (r+1)*k) of the epoch's order; S - R*k samples (at most R-1) are
 * dropped that epoch. Every rank runs floor(k / batch) steps, so no rank can
 * reach a barrier the others never reach. */
#ifndef SB_SHARD_H
#define SB_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "perm.h"

typedef enum { SB_SHUFFLE_OFF, SB_SHUFFLE_SEED, SB_SHUFFLE_RANDOM } sb_shuffle_t;

typedef struct {
    uint64_t files;             /* objects in the dataset */
    uint64_t samples_per_file;
    uint64_t samples;           /* S = files * samples_per_file */
    uint64_t ranks;             /* R */
    uint64_t per_rank;          /* k = floor(S / R) */
    uint64_t dropped;           /* S - R*k */
    uint64_t batch_size;
    uint64_t batches;           /* floor(k / batch_size) */
} sb_shard_plan_t;

/* Compute the plan. Returns 0, or -1 with a reason in err when no rank would
 * get a full batch (or an input is zero or overflows). */
int sb_shard_plan (uint64_t files, uint64_t samples_per_file, uint64_t ranks, uint64_t batch_size,
                   sb_shard_plan_t *plan, char *err, size_t err_size);

/* The order of one epoch: which sample sits at each position. */
typedef struct {
    const sb_shard_plan_t *plan;  /* borrowed */
    int      shuffle_samples;     /* permute samples */
    int      shuffle_files;       /* permute files, samples of a file stay together */
    sb_perm_t perm;
} sb_epoch_order_t;

/* Order for epoch `epoch` of a run seeded with `seed`. */
void sb_epoch_order_init (sb_epoch_order_t *self, const sb_shard_plan_t *plan,
                          sb_shuffle_t sample_shuffle, sb_shuffle_t file_shuffle,
                          uint64_t seed, uint64_t epoch);

/* Sample index (0..S-1) at position `position` (0..k-1) of rank `rank`. */
uint64_t sb_epoch_order_sample (const sb_epoch_order_t *self, uint64_t rank, uint64_t position);

/* Files [*first, *first + *count) that rank `rank` of `ranks` generates. */
void sb_shard_files (uint64_t files, uint64_t ranks, uint64_t rank, uint64_t *first, uint64_t *count);

#endif
