/* sampler_plan: every rank's file list under DLIO's file_shuffle, planned
 * once per epoch in one place (the coordinator) and served to the workers
 * in pages, so that no worker keeps another rank's list.
 *
 * DLIO's reshard (config.py _reshard_files, see sampler.h) is cumulative:
 * a rank's list in epoch e depends on every rank's list of epoch e-1, so
 * one place must hold all of them. The plan holds them at 4 bytes per used
 * file (8 once a catalog index needs more than 32 bits) plus one bit per
 * used file: the deal between ranks is applied in place, following its
 * cycles with a visited bit per position, and the shared first shuffle is
 * replayed on each rank's list (it is the same permutation for all: the
 * same seed, the same length) instead of being kept as an order.
 *
 * An epoch can be planned in a background thread (sb_plan_start, then
 * sb_plan_poll or sb_plan_wait): the event loop that owns the plan keeps
 * running, and reads the lists (sb_plan_files) only once the epoch is
 * planned. */
#ifndef SB_SAMPLER_PLAN_H
#define SB_SAMPLER_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "sampler.h"

typedef struct sb_plan sb_plan_t;

/* A plan for cfg's run (its kind, listed, expected, ranks, seed,
 * file_shuffle, seed_change_epoch; the other fields do not matter). NULL
 * with err set when file_shuffle is off, the kind is GLOBAL, or memory ran
 * out. Epoch 0's lists (DLIO's round-robin listing) are set. */
sb_plan_t *sb_plan_new (const sb_sampler_cfg_t *cfg, char *err, size_t err_size);

/* Accepts NULL; nulls the pointer. A plan being made is told to stop and
 * waited for up to a second; one still running then is left to its thread
 * (its memory is not freed: the process is ending). */
void sb_plan_destroy (sb_plan_t **self_p);

/* Plan epoch `epoch` (the next one: epochs in order from 1) in this
 * thread. 0, or -1 with err set (a seed numpy refuses, as DLIO stops). */
int sb_plan_epoch (sb_plan_t *self, uint64_t epoch, char *err, size_t err_size);

/* Plan epoch `epoch` in a background thread. 0, or -1 with err set when
 * the thread cannot start. */
int sb_plan_start (sb_plan_t *self, uint64_t epoch, char *err, size_t err_size);

/* Whether the background planning has ended: 1 (its result with
 * sb_plan_wait, which then does not block), 0 still planning, -1 none
 * started. */
int sb_plan_poll (sb_plan_t *self);

/* Wait for the background planning: 0, or -1 with err set (the planning's
 * error). *seconds (NULL: not wanted): how long it took, CPU of its thread. */
int sb_plan_wait (sb_plan_t *self, double *seconds, char *err, size_t err_size);

/* The epoch whose lists the plan holds (0: the listing only). */
uint64_t sb_plan_epoch_planned (const sb_plan_t *self);

/* Files per rank (f). */
uint64_t sb_plan_files_per_rank (const sb_plan_t *self);
/* Local files a page served from the plan (sb_sampler_page_files of its cfg). */
uint64_t sb_plan_page_files (const sb_plan_t *self);

/* Bytes the plan holds (its lists and visited bits). */
uint64_t sb_plan_bytes (const sb_plan_t *self);

/* Rank `rank`'s local files first .. first+count-1 (catalog indices) into
 * out. 0, or -1 for a rank or range outside the lists, or while planning. */
int sb_plan_files (const sb_plan_t *self, uint64_t rank, uint64_t first, uint64_t count, uint64_t *out);

#endif
