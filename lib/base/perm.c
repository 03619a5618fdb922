/* perm: Feistel bijection with cycle walking. */
#include "perm.h"
#include "util.h"

#define S_ROUNDS 4

void
sb_perm_init (sb_perm_t *self, uint64_t n, uint64_t key)
{
    self->n = n;
    self->key = key;
    unsigned bits = 0;
    while (bits < 64 && (1ull << bits) < n)
        bits++;
    self->half_bits = bits < 2 ? 1 : (bits + 1) / 2;
    self->half_mask = (1ull << self->half_bits) - 1;
}

static uint64_t
s_feistel (const sb_perm_t *self, uint64_t x)
{
    uint64_t left = x >> self->half_bits;
    uint64_t right = x & self->half_mask;
    for (unsigned r = 0; r < S_ROUNDS; r++) {
        uint64_t f = sb_mix (self->key + r, right) & self->half_mask;
        uint64_t next = left ^ f;
        left = right;
        right = next;
    }
    return (left << self->half_bits) | right;
}

uint64_t
sb_perm_apply (const sb_perm_t *self, uint64_t i)
{
    if (self->n <= 1)
        return 0;
    /* The Feistel domain is at most 4n, so the walk ends after a few steps
     * on average; it always ends because the Feistel map is a bijection on
     * its domain and i itself lies in [0, n). */
    uint64_t x = s_feistel (self, i);
    while (x >= self->n)
        x = s_feistel (self, x);
    return x;
}
