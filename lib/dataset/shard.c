/* shard: equal shards, steps and per-epoch shuffles. */
#include "shard.h"
#include "util.h"

#include <stdio.h>

int
sb_shard_plan (uint64_t files, uint64_t samples_per_file, uint64_t ranks, uint64_t batch_size,
               sb_shard_plan_t *plan, char *err, size_t err_size)
{
    if (files == 0 || samples_per_file == 0 || ranks == 0 || batch_size == 0) {
        snprintf (err, err_size, "files (%llu), samples per file (%llu), ranks (%llu) and batch size (%llu) must all be > 0",
                  (unsigned long long) files, (unsigned long long) samples_per_file,
                  (unsigned long long) ranks, (unsigned long long) batch_size);
        return -1;
    }
    if (files > UINT64_MAX / samples_per_file) {
        snprintf (err, err_size, "files x samples per file overflows");
        return -1;
    }
    plan->files = files;
    plan->samples_per_file = samples_per_file;
    plan->samples = files * samples_per_file;
    plan->ranks = ranks;
    plan->per_rank = plan->samples / ranks;
    plan->dropped = plan->samples - plan->per_rank * ranks;
    plan->batch_size = batch_size;
    plan->batches = plan->per_rank / batch_size;
    if (plan->batches == 0) {
        snprintf (err, err_size, "%llu samples over %llu ranks gives %llu per rank, less than one batch of %llu",
                  (unsigned long long) plan->samples, (unsigned long long) ranks,
                  (unsigned long long) plan->per_rank, (unsigned long long) batch_size);
        return -1;
    }
    return 0;
}

void
sb_epoch_order_init (sb_epoch_order_t *self, const sb_shard_plan_t *plan,
                     sb_shuffle_t sample_shuffle, sb_shuffle_t file_shuffle,
                     uint64_t seed, uint64_t epoch)
{
    self->plan = plan;
    self->shuffle_samples = sample_shuffle != SB_SHUFFLE_OFF;
    self->shuffle_files = !self->shuffle_samples && file_shuffle != SB_SHUFFLE_OFF;
    uint64_t key = sb_mix (seed, 0x5368756666ull + epoch);
    sb_perm_init (&self->perm, self->shuffle_samples ? plan->samples : plan->files, key);
}

uint64_t
sb_epoch_order_sample (const sb_epoch_order_t *self, uint64_t rank, uint64_t position)
{
    uint64_t global = rank * self->plan->per_rank + position;
    if (self->shuffle_samples)
        return sb_perm_apply (&self->perm, global);
    if (self->shuffle_files) {
        uint64_t spf = self->plan->samples_per_file;
        return sb_perm_apply (&self->perm, global / spf) * spf + global % spf;
    }
    return global;
}

void
sb_shard_files (uint64_t files, uint64_t ranks, uint64_t rank, uint64_t *first, uint64_t *count)
{
    /* Balanced split: the first files % ranks ranks write one file more. */
    uint64_t base = files / ranks, extra = files % ranks;
    *first = rank * base + (rank < extra ? rank : extra);
    *count = base + (rank < extra ? 1 : 0);
}
