/* nprandom: numpy's legacy MT19937 generator (see nprandom.h). */
#include "nprandom.h"

#define MT_M          397
#define MT_MATRIX_A   0x9908b0dfu
#define MT_UPPER_MASK 0x80000000u
#define MT_LOWER_MASK 0x7fffffffu

int
sb_np_seed (sb_np_mt_t *mt, uint64_t seed)
{
    if (seed > SB_NP_SEED_MAX)
        return -1;
    uint32_t s = (uint32_t) seed;
    for (int pos = 0; pos < SB_NP_MT_N; pos++) {
        mt->key[pos] = s;
        s = 1812433253u * (s ^ (s >> 30)) + (uint32_t) pos + 1u;
    }
    mt->pos = SB_NP_MT_N;
    return 0;
}

/* Refill the state (MT19937's generation step). */
static void
s_twist (sb_np_mt_t *mt)
{
    uint32_t *k = mt->key;
    int i;
    for (i = 0; i < SB_NP_MT_N - MT_M; i++) {
        uint32_t y = (k[i] & MT_UPPER_MASK) | (k[i + 1] & MT_LOWER_MASK);
        k[i] = k[i + MT_M] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
    }
    for (; i < SB_NP_MT_N - 1; i++) {
        uint32_t y = (k[i] & MT_UPPER_MASK) | (k[i + 1] & MT_LOWER_MASK);
        k[i] = k[i + (MT_M - SB_NP_MT_N)] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
    }
    uint32_t y = (k[SB_NP_MT_N - 1] & MT_UPPER_MASK) | (k[0] & MT_LOWER_MASK);
    k[SB_NP_MT_N - 1] = k[MT_M - 1] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
    mt->pos = 0;
}

uint32_t
sb_np_next32 (sb_np_mt_t *mt)
{
    if (mt->pos >= SB_NP_MT_N)
        s_twist (mt);
    uint32_t y = mt->key[mt->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

uint64_t
sb_np_next64 (sb_np_mt_t *mt)
{
    uint64_t high = sb_np_next32 (mt);
    uint64_t low = sb_np_next32 (mt);
    return high << 32 | low;
}

uint64_t
sb_np_interval (sb_np_mt_t *mt, uint64_t max)
{
    if (max == 0)
        return 0;
    uint64_t mask = max;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    uint64_t value;
    if (max <= 0xffffffffull) {
        do
            value = sb_np_next32 (mt) & mask;
        while (value > max);
    }
    else {
        do
            value = sb_np_next64 (mt) & mask;
        while (value > max);
    }
    return value;
}

void
sb_np_shuffle_u32 (sb_np_mt_t *mt, uint32_t *x, uint64_t n)
{
    for (uint64_t i = n > 0 ? n - 1 : 0; i >= 1; i--) {
        uint64_t j = sb_np_interval (mt, i);
        uint32_t t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
}

void
sb_np_shuffle_u64 (sb_np_mt_t *mt, uint64_t *x, uint64_t n)
{
    for (uint64_t i = n > 0 ? n - 1 : 0; i >= 1; i--) {
        uint64_t j = sb_np_interval (mt, i);
        uint64_t t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
}
