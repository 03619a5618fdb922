/* index_array: catalog indices of 4 bytes each while they fit, else 8 (a
 * catalog of more than 2^32 objects), for the DLIO samplers' file lists
 * (sampler_dlio.c) and the coordinator's plan of them (sampler_plan.c).
 * The array owns its memory. */
#ifndef SB_INDEX_ARRAY_H
#define SB_INDEX_ARRAY_H

#include <stdint.h>
#include <stdlib.h>

#include "nprandom.h"

typedef struct {
    void *p;
    int   wide;     /* 8 bytes an index */
} sb_index_array_t;

static inline uint64_t
sb_ia_get (const sb_index_array_t *a, uint64_t i)
{
    return a->wide ? ((const uint64_t *) a->p)[i] : ((const uint32_t *) a->p)[i];
}

static inline void
sb_ia_set (sb_index_array_t *a, uint64_t i, uint64_t v)
{
    if (a->wide)
        ((uint64_t *) a->p)[i] = v;
    else
        ((uint32_t *) a->p)[i] = (uint32_t) v;
}

/* n entries: 0, or -1 out of memory (a->p NULL) */
static inline int
sb_ia_alloc (sb_index_array_t *a, uint64_t n, int wide)
{
    a->wide = wide;
    a->p = NULL;
    size_t width = wide ? sizeof (uint64_t) : sizeof (uint32_t);
    if (n > SIZE_MAX / width)
        return -1;
    a->p = malloc (n ? (size_t) n * width : 1);
    return a->p ? 0 : -1;
}

static inline void
sb_ia_free (sb_index_array_t *a)
{
    free (a->p);
    a->p = NULL;
}

/* np.random.shuffle of entries [offset, offset + n) */
static inline void
sb_ia_shuffle (sb_np_mt_t *mt, sb_index_array_t *a, uint64_t offset, uint64_t n)
{
    if (a->wide)
        sb_np_shuffle_u64 (mt, (uint64_t *) a->p + offset, n);
    else
        sb_np_shuffle_u32 (mt, (uint32_t *) a->p + offset, n);
}

#endif
