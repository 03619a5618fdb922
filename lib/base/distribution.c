/* distribution: counter-based random emulated compute times. */
#include "distribution.h"

#include <math.h>
#include <stdio.h>
#include <strings.h>

static const char *s_names[] = { "constant", "normal", "uniform", "gamma", "exponential", "poisson" };
#define S_NTYPES (sizeof s_names / sizeof s_names[0])

const char *
sb_dist_name (sb_dist_type_t type)
{
    return (size_t) type < S_NTYPES ? s_names[type] : "?";
}

int
sb_dist_parse (const char *name, sb_dist_type_t *type)
{
    for (size_t i = 0; i < S_NTYPES; i++)
        if (strcasecmp (name, s_names[i]) == 0) {
            *type = (sb_dist_type_t) i;
            return 0;
        }
    return -1;
}

int
sb_dist_check (const sb_dist_t *d, char *err, size_t err_size)
{
    if (!isfinite (d->a) || !isfinite (d->b)) {
        snprintf (err, err_size, "%s: parameters must be finite numbers", sb_dist_name (d->type));
        return -1;
    }
    switch (d->type) {
    case SB_DIST_CONSTANT:
        if (d->a < 0)
            break;
        return 0;
    case SB_DIST_NORMAL:
        if (d->a < 0 || d->b < 0)
            break;
        return 0;
    case SB_DIST_UNIFORM:
        if (d->a < 0 || d->b < d->a) {
            snprintf (err, err_size, "uniform: needs 0 <= min <= max, got min %g, max %g", d->a, d->b);
            return -1;
        }
        return 0;
    case SB_DIST_GAMMA:
        if (!(d->a > 0) || !(d->b > 0)) {
            snprintf (err, err_size, "gamma: shape and scale must be positive, got shape %g, scale %g", d->a, d->b);
            return -1;
        }
        return 0;
    case SB_DIST_EXPONENTIAL:
    case SB_DIST_POISSON:
        if (!(d->a > 0)) {
            snprintf (err, err_size, "%s: %s must be positive, got %g", sb_dist_name (d->type),
                      d->type == SB_DIST_POISSON ? "lam" : "scale", d->a);
            return -1;
        }
        return 0;
    default:
        snprintf (err, err_size, "unknown distribution type %d", (int) d->type);
        return -1;
    }
    snprintf (err, err_size, "%s: parameters must not be negative (got %g, %g)", sb_dist_name (d->type), d->a, d->b);
    return -1;
}

double
sb_dist_mean (const sb_dist_t *d)
{
    switch (d->type) {
    case SB_DIST_UNIFORM: return (d->a + d->b) / 2;
    case SB_DIST_GAMMA:   return d->a * d->b;
    default:              return d->a;
    }
}

/* splitmix64 (Steele, Lea, Flood 2014): a bijective mixer and a Weyl
 * sequence; statistically sound for this use and trivially reproducible. */
static uint64_t
s_mix (uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct {
    uint64_t state;
} s_rng_t;

static s_rng_t
s_rng (uint64_t seed, uint64_t stream, uint64_t index)
{
    uint64_t s = s_mix (seed + 0x9e3779b97f4a7c15ULL);
    s = s_mix (s ^ (stream + 0x632be59bd9b4e019ULL));
    s = s_mix (s ^ (index + 0x8cb92ba72f3d8dd7ULL));
    return (s_rng_t) { s };
}

/* [0, 1), 53 bits */
static double
s_u01 (s_rng_t *r)
{
    r->state += 0x9e3779b97f4a7c15ULL;
    return (double) (s_mix (r->state) >> 11) * 0x1.0p-53;
}

/* standard normal (Box-Muller, cosine branch) */
static double
s_normal (s_rng_t *r)
{
    double u1 = 1.0 - s_u01 (r);    /* (0, 1] */
    double u2 = s_u01 (r);
    return sqrt (-2.0 * log (u1)) * cos (2.0 * M_PI * u2);
}

/* Gamma(shape, 1): Marsaglia and Tsang (2000); shape < 1 by boosting. */
static double
s_gamma (s_rng_t *r, double shape)
{
    if (shape < 1.0) {
        double g = s_gamma (r, shape + 1.0);
        return g * pow (1.0 - s_u01 (r), 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt (9.0 * d);
    for (int tries = 0; tries < 1000; tries++) {   /* accepts > 95% of the time */
        double x = s_normal (r), v = 1.0 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = 1.0 - s_u01 (r);
        if (u < 1.0 - 0.0331 * x * x * x * x || log (u) < 0.5 * x * x + d * (1.0 - v + log (v)))
            return d * v;
    }
    return d;   /* not reached in practice: the mode */
}

/* Poisson(lam): Knuth's product of uniforms, in pieces of at most 30 so
 * exp(-piece) never underflows (a sum of Poissons is Poisson). */
static double
s_poisson (s_rng_t *r, double lam)
{
    double k = 0;
    while (lam > 0) {
        double piece = lam > 30 ? 30 : lam, limit = exp (-piece), p = 1.0;
        lam -= piece;
        for (;;) {
            p *= s_u01 (r);
            if (p <= limit)
                break;
            k++;
        }
    }
    return k;
}

double
sb_dist_uniform01 (uint64_t seed, uint64_t stream, uint64_t index)
{
    s_rng_t r = s_rng (seed, stream, index);
    return s_u01 (&r);
}

double
sb_dist_draw (const sb_dist_t *d, uint64_t seed, uint64_t stream, uint64_t index)
{
    s_rng_t r = s_rng (seed, stream, index);
    double v;
    switch (d->type) {
    case SB_DIST_CONSTANT:    v = d->a; break;
    case SB_DIST_NORMAL:      v = d->a + d->b * s_normal (&r); break;
    case SB_DIST_UNIFORM:     v = d->a + (d->b - d->a) * s_u01 (&r); break;
    case SB_DIST_GAMMA:       v = d->b * s_gamma (&r, d->a); break;
    case SB_DIST_EXPONENTIAL: v = -d->a * log (1.0 - s_u01 (&r)); break;
    case SB_DIST_POISSON:     v = s_poisson (&r, d->a); break;
    default:                  return NAN;
    }
    return fabs (v);    /* DLIO sleeps abs(draw) */
}
