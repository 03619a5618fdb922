/* perm: a keyed bijection on [0, n): O(1) memory, random access, reproducible.
 *
 * A balanced Feistel network over the smallest even number of bits that
 * covers n, with cycle walking to stay inside [0, n). The same (n, key) gives
 * the same permutation on every host, so any process can compute where any
 * position of an epoch's shuffle lands without holding a list. */
#ifndef SB_PERM_H
#define SB_PERM_H

#include <stdint.h>

typedef struct {
    uint64_t n;
    uint64_t key;
    unsigned half_bits;
    uint64_t half_mask;
} sb_perm_t;

/* Set up a permutation of [0, n) (n >= 1) for key. */
void sb_perm_init (sb_perm_t *self, uint64_t n, uint64_t key);

/* The image of i (i < n) under the permutation. */
uint64_t sb_perm_apply (const sb_perm_t *self, uint64_t i);

#endif
