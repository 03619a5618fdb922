/* sampler_dlio: DLIO's sampler kinds. Not written yet: every DLIO kind is
 * refused with a clear error until this file implements sampler_dlio.h. */
#include "sampler_dlio.h"

#include <stdio.h>

sb_sampler_dlio_t *
sb_sampler_dlio_new (const sb_sampler_cfg_t *cfg, char *err, size_t err_size)
{
    snprintf (err, err_size, "sampler: kind %s is not available in this build", sb_sampler_kind_name (cfg->kind));
    return NULL;
}

void
sb_sampler_dlio_destroy (sb_sampler_dlio_t **self_p)
{
    (void) self_p;
}

int
sb_sampler_dlio_epoch (sb_sampler_dlio_t *self, sb_sampler_epoch_t *info, char *err, size_t err_size)
{
    (void) self;
    (void) info;
    snprintf (err, err_size, "sampler: not available");
    return -1;
}

int
sb_sampler_dlio_at (const sb_sampler_dlio_t *self, uint64_t rank, uint64_t position, sb_sample_ref_t *out)
{
    (void) self;
    (void) rank;
    (void) position;
    (void) out;
    return -1;
}
