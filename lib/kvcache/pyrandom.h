/* pyrandom: CPython's `random` module (the global Random instance: MT19937
 * with CPython's seeding and its conversions) bit for bit, because the
 * KV-cache reference draws its users, contexts, think times and branch
 * decisions with it: the same seed must give the same draws here.
 *
 * - seeding: random.seed(n) for an int n takes |n| and feeds its 32-bit words,
 *   least significant first, to MT19937's init_by_array (key length at least
 *   1: seed 0 is the key [0]);
 * - sb_py_random: random.random(), a = out >> 5, b = out >> 6,
 *   (a * 2**26 + b) / 2**53;
 * - sb_py_getrandbits(k): k <= 32 is out >> (32 - k); above, 32-bit words
 *   from the least significant up, the last one shifted right to fill k bits;
 * - sb_py_randbelow(n): Random._randbelow_with_getrandbits: k = n.bit_length(),
 *   getrandbits(k) until below n (so n = 2**j draws j + 1 bits);
 * - randint, randrange, choice, shuffle, uniform as random.py writes them on
 *   top of these.
 * tests/unit/test_kv_pyrandom.c compares long sequences with the output of
 * python3's own random module. */
#ifndef SB_PYRANDOM_H
#define SB_PYRANDOM_H

#include <stddef.h>
#include <stdint.h>

#define SB_PY_MT_N 624

typedef struct {
    uint32_t state[SB_PY_MT_N];
    int      index;
} sb_py_random_t;

/* random.seed(seed) for an int seed (negative seeds are seeded by their
 * absolute value, as CPython). */
void sb_py_seed (sb_py_random_t *r, int64_t seed);
/* random.seed(seed) for an int seed past int64 (e.g. 2**64 - 1). */
void sb_py_seed_u64 (sb_py_random_t *r, uint64_t seed);

/* One 32-bit MT19937 output (genrand_uint32). */
uint32_t sb_py_genrand (sb_py_random_t *r);

/* random.random(): [0, 1) with 53 random bits. */
double sb_py_random (sb_py_random_t *r);

/* random.getrandbits(k), 0 <= k <= 64 (0 draws nothing and gives 0). */
uint64_t sb_py_getrandbits (sb_py_random_t *r, unsigned k);

/* Random._randbelow(n): uniform in [0, n); n 0 gives 0 and draws nothing
 * (CPython returns 0 for n 0 too). */
uint64_t sb_py_randbelow (sb_py_random_t *r, uint64_t n);

/* random.randint(a, b), a <= b and b - a < 2**64 - 1: a + _randbelow(b - a + 1). */
int64_t sb_py_randint (sb_py_random_t *r, int64_t a, int64_t b);

/* random.randrange(start, stop, step), step != 0 and a non-empty range of
 * fewer than 2**64 values (CPython raises ValueError for an empty one:
 * here the caller's to check). */
int64_t sb_py_randrange (sb_py_random_t *r, int64_t start, int64_t stop, int64_t step);

/* random.choice(seq) for a sequence of n >= 1 elements: the index drawn
 * (_randbelow(n)). */
size_t sb_py_choice (sb_py_random_t *r, size_t n);

/* random.uniform(a, b): a + (b - a) * random(). */
double sb_py_uniform (sb_py_random_t *r, double a, double b);

/* random.shuffle(x) of n elements of `size` bytes in place: for i from n - 1
 * down to 1, swap x[i] with x[_randbelow(i + 1)]. */
void sb_py_shuffle (sb_py_random_t *r, void *x, size_t n, size_t size);

#endif
