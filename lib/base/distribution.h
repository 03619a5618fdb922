/* distribution: the emulated compute time of a batch, a constant or a draw
 * from one of the distributions DLIO accepts for train.computation_time.
 *
 * Every draw is counter-based: a pure function of (seed, stream,
 * index), so a rank (stream) sees the same sequence for the same seed in
 * every run, different ranks see independent sequences, and no generator
 * state is kept or shared. Parameters are named as DLIO names them
 * (dlio_benchmark/utils/utility.py, sleep()):
 *   constant     a = seconds
 *   normal       a = mean, b = stdev
 *   uniform      a = min,  b = max
 *   gamma        a = shape, b = scale
 *   exponential  a = scale (the mean)
 *   poisson      a = lam
 * As in DLIO, a draw is returned as its absolute value. */
#ifndef SB_DISTRIBUTION_H
#define SB_DISTRIBUTION_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    SB_DIST_CONSTANT,
    SB_DIST_NORMAL,
    SB_DIST_UNIFORM,
    SB_DIST_GAMMA,
    SB_DIST_EXPONENTIAL,
    SB_DIST_POISSON,
} sb_dist_type_t;

typedef struct {
    sb_dist_type_t type;
    double         a, b;    /* parameters, see above */
} sb_dist_t;

/* Name of a type ("normal", ...). Borrowed, static. */
const char *sb_dist_name (sb_dist_type_t type);

/* Type of a name (case-insensitive). Returns 0, or -1 for an unknown name. */
int sb_dist_parse (const char *name, sb_dist_type_t *type);

/* Check the parameters (finite, non-negative, min <= max, shape, scale and
 * lam positive). Returns 0, or -1 with the problem in err. */
int sb_dist_check (const sb_dist_t *d, char *err, size_t err_size);

/* Mean of the distribution, as DLIO would sleep on average before taking
 * the absolute value (for reports and AU expectations). */
double sb_dist_mean (const sb_dist_t *d);

/* Draw number `index` of stream `stream` under `seed`: >= 0, or NaN for a
 * type that is not a sb_dist_type_t. Pure: same arguments, same value. */
double sb_dist_draw (const sb_dist_t *d, uint64_t seed, uint64_t stream, uint64_t index);

/* Uniform double in [0, 1) of the same counter-based generator (exposed for
 * tests). */
double sb_dist_uniform01 (uint64_t seed, uint64_t stream, uint64_t index);

#endif
