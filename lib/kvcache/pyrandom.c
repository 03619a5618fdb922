/* pyrandom: CPython's random module over MT19937 (see pyrandom.h). */
#include "pyrandom.h"

#include <string.h>

#define MT_M          397
#define MT_MATRIX_A   0x9908b0dfu
#define MT_UPPER_MASK 0x80000000u
#define MT_LOWER_MASK 0x7fffffffu

/* MT19937's init_genrand */
static void
s_init_genrand (sb_py_random_t *r, uint32_t s)
{
    r->state[0] = s;
    for (int i = 1; i < SB_PY_MT_N; i++)
        r->state[i] = 1812433253u * (r->state[i - 1] ^ (r->state[i - 1] >> 30)) + (uint32_t) i;
    r->index = SB_PY_MT_N;
}

/* MT19937's init_by_array, which CPython's random_seed uses for every int */
static void
s_init_by_array (sb_py_random_t *r, const uint32_t *key, size_t len)
{
    uint32_t *mt = r->state;
    s_init_genrand (r, 19650218u);
    size_t i = 1, j = 0;
    size_t k = SB_PY_MT_N > len ? SB_PY_MT_N : len;
    for (; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t) j;
        i++;
        j++;
        if (i >= SB_PY_MT_N) {
            mt[0] = mt[SB_PY_MT_N - 1];
            i = 1;
        }
        if (j >= len)
            j = 0;
    }
    for (k = SB_PY_MT_N - 1; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t) i;
        i++;
        if (i >= SB_PY_MT_N) {
            mt[0] = mt[SB_PY_MT_N - 1];
            i = 1;
        }
    }
    mt[0] = 0x80000000u;   /* MSB 1: a non-zero initial state */
    r->index = SB_PY_MT_N;
}

void
sb_py_seed_u64 (sb_py_random_t *r, uint64_t seed)
{
    /* the int's 32-bit words, least significant first, no leading zero
     * words, but at least one (seed 0 is the key [0]) */
    uint32_t key[2] = { (uint32_t) seed, (uint32_t) (seed >> 32) };
    s_init_by_array (r, key, key[1] ? 2 : 1);
}

void
sb_py_seed (sb_py_random_t *r, int64_t seed)
{
    /* CPython seeds with abs(n); the magnitude of INT64_MIN fits in uint64 */
    uint64_t mag = seed < 0 ? (uint64_t) 0 - (uint64_t) seed : (uint64_t) seed;
    sb_py_seed_u64 (r, mag);
}

/* Refill the state (MT19937's generation step). */
static void
s_twist (sb_py_random_t *r)
{
    uint32_t *mt = r->state;
    int i;
    for (i = 0; i < SB_PY_MT_N - MT_M; i++) {
        uint32_t y = (mt[i] & MT_UPPER_MASK) | (mt[i + 1] & MT_LOWER_MASK);
        mt[i] = mt[i + MT_M] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
    }
    for (; i < SB_PY_MT_N - 1; i++) {
        uint32_t y = (mt[i] & MT_UPPER_MASK) | (mt[i + 1] & MT_LOWER_MASK);
        mt[i] = mt[i + (MT_M - SB_PY_MT_N)] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
    }
    uint32_t y = (mt[SB_PY_MT_N - 1] & MT_UPPER_MASK) | (mt[0] & MT_LOWER_MASK);
    mt[SB_PY_MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
    r->index = 0;
}

uint32_t
sb_py_genrand (sb_py_random_t *r)
{
    if (r->index >= SB_PY_MT_N)
        s_twist (r);
    uint32_t y = r->state[r->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

double
sb_py_random (sb_py_random_t *r)
{
    uint32_t a = sb_py_genrand (r) >> 5, b = sb_py_genrand (r) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

uint64_t
sb_py_getrandbits (sb_py_random_t *r, unsigned k)
{
    if (k == 0)
        return 0;
    if (k > 64)
        k = 64;
    if (k <= 32)
        return sb_py_genrand (r) >> (32 - k);
    /* words from the least significant; the last one keeps its top bits */
    uint64_t low = sb_py_genrand (r);
    uint64_t high = sb_py_genrand (r) >> (64 - k);
    return high << 32 | low;
}

uint64_t
sb_py_randbelow (sb_py_random_t *r, uint64_t n)
{
    if (n == 0)
        return 0;
    unsigned k = 64 - (unsigned) __builtin_clzll (n);   /* n.bit_length() */
    uint64_t v;
    do
        v = sb_py_getrandbits (r, k);
    while (v >= n);
    return v;
}

int64_t
sb_py_randint (sb_py_random_t *r, int64_t a, int64_t b)
{
    /* randrange(a, b + 1): b + 1 in unsigned arithmetic, so that b may be
     * INT64_MAX */
    uint64_t width = (uint64_t) b - (uint64_t) a + 1;
    return (int64_t) ((uint64_t) a + sb_py_randbelow (r, width));
}

int64_t
sb_py_randrange (sb_py_random_t *r, int64_t start, int64_t stop, int64_t step)
{
    /* random.py: width = stop - start; step 1: start + _randbelow(width);
     * else n = ceil(width / step) and start + step * _randbelow(n) */
    uint64_t width = (uint64_t) stop - (uint64_t) start;
    if (step == 1)
        return (int64_t) ((uint64_t) start + sb_py_randbelow (r, width));
    uint64_t n;
    if (step > 0)
        n = (width + (uint64_t) step - 1) / (uint64_t) step;
    else {
        uint64_t back = (uint64_t) start - (uint64_t) stop, s = (uint64_t) 0 - (uint64_t) step;
        n = (back + s - 1) / s;
    }
    return (int64_t) ((uint64_t) start + (uint64_t) step * sb_py_randbelow (r, n));
}

size_t
sb_py_choice (sb_py_random_t *r, size_t n)
{
    return (size_t) sb_py_randbelow (r, n);
}

double
sb_py_uniform (sb_py_random_t *r, double a, double b)
{
    return a + (b - a) * sb_py_random (r);
}

void
sb_py_shuffle (sb_py_random_t *r, void *x, size_t n, size_t size)
{
    unsigned char *p = x, tmp[64];
    for (size_t i = n; i-- > 1;) {
        size_t j = (size_t) sb_py_randbelow (r, i + 1);
        if (j == i)
            continue;
        /* swap in pieces of the stack buffer: any element size */
        for (size_t off = 0; off < size; off += sizeof tmp) {
            size_t len = size - off < sizeof tmp ? size - off : sizeof tmp;
            memcpy (tmp, p + i * size + off, len);
            memcpy (p + i * size + off, p + j * size + off, len);
            memcpy (p + j * size + off, tmp, len);
        }
    }
}
