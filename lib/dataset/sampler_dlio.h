/* sampler_dlio: the DLIO kinds of lib/dataset/sampler.h (internal to sampler.c).
 * Every function has the contract of its sampler.h namesake. */
#ifndef SB_SAMPLER_DLIO_H
#define SB_SAMPLER_DLIO_H

#include "sampler.h"
#include "nprandom.h"

typedef struct sb_sampler_dlio sb_sampler_dlio_t;

sb_sampler_dlio_t *sb_sampler_dlio_new (const sb_sampler_cfg_t *cfg, char *err, size_t err_size);
void sb_sampler_dlio_destroy (sb_sampler_dlio_t **self_p);
/* Prepare epoch info->epoch's lists and fill the rest of *info. */
int sb_sampler_dlio_epoch (sb_sampler_dlio_t *self, sb_sampler_epoch_t *info, char *err, size_t err_size);
int sb_sampler_dlio_at (const sb_sampler_dlio_t *self, uint64_t rank, uint64_t position, sb_sample_ref_t *out);
int sb_sampler_dlio_page_of (const sb_sampler_dlio_t *self, uint64_t rank, uint64_t position, uint64_t *page,
                             uint64_t *run);
/* served: the pages (NULL when the lists are not served); 1 when catalog
 * indices need 8 bytes */
struct sb_pages *sb_sampler_dlio_pages (sb_sampler_dlio_t *self);
int sb_sampler_dlio_wide (const sb_sampler_dlio_t *self);

/* Shared with sampler_plan.c, which plans the same reshard: np.random.seed
 * (0, or -1 with err saying numpy raises above 2**32 - 1 and DLIO stops),
 * and a + b saturated so that an overflow reads as out of numpy's range. */
int sb_sampler_dlio_seed (sb_np_mt_t *mt, uint64_t seed, const char *what, uint64_t epoch, char *err,
                          size_t err_size);
uint64_t sb_sampler_dlio_seed_add (uint64_t a, uint64_t b);

#endif
