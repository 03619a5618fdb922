/* nprandom: numpy's legacy global generator (np.random.seed / np.random.shuffle,
 * i.e. RandomState over MT19937) bit for bit, as DLIO seeds and shuffles with it.
 *
 * - seeding: np.random.seed(int) takes 0 .. 2**32-1 and raises ValueError
 *   otherwise; in range it is MT19937's init_genrand(seed) (the 624-word
 *   state, position 624);
 * - sb_np_next32: one 32-bit output (tempered MT19937 word);
 * - sb_np_interval(max): numpy's random_interval, a uniform integer in
 *   [0, max]: mask = smallest 2**n - 1 >= max, draw & mask until <= max, with
 *   32-bit outputs while max <= 0xffffffff and 64-bit ones above (a 64-bit
 *   one is two 32-bit outputs, the first giving the high half);
 * - shuffle: Fisher-Yates from the end, for i = n-1 down to 1 swap x[i] with
 *   x[random_interval(i)]; numpy does the same for a 1-D array and a list.
 * tests/unit/test_nprandom.c checks all of it against numpy's own output. */
#ifndef SB_NPRANDOM_H
#define SB_NPRANDOM_H

#include <stdint.h>

#define SB_NP_MT_N 624

typedef struct {
    uint32_t key[SB_NP_MT_N];
    int      pos;
} sb_np_mt_t;

/* The largest seed np.random.seed accepts. */
#define SB_NP_SEED_MAX 0xffffffffull

/* np.random.seed(seed). Returns 0, or -1 (state untouched) for a seed above
 * SB_NP_SEED_MAX, where numpy raises ValueError. */
int sb_np_seed (sb_np_mt_t *mt, uint64_t seed);

uint32_t sb_np_next32 (sb_np_mt_t *mt);

/* Two 32-bit outputs, the first the high half. */
uint64_t sb_np_next64 (sb_np_mt_t *mt);

/* numpy's random_interval: uniform in [0, max]. */
uint64_t sb_np_interval (sb_np_mt_t *mt, uint64_t max);

/* np.random.shuffle of n elements of 4 or 8 bytes in place. */
void sb_np_shuffle_u32 (sb_np_mt_t *mt, uint32_t *x, uint64_t n);
void sb_np_shuffle_u64 (sb_np_mt_t *mt, uint64_t *x, uint64_t n);

#endif
