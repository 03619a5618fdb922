/* distribution: exact first draws for a fixed seed, reproducibility, rank
 * streams, parameter checks and (deterministic) statistical sanity. */
#include <check.h>
#include "check_main.h"
#include <math.h>
#include <string.h>

#include "distribution.h"

#define SEED 123
#define N 20000

/* The first draws of stream 0 under seed 123. Uniform, normal, exponential
 * and poisson were computed independently (Python, the same splitmix64
 * streams, Box-Muller, inverse CDF, Knuth); gamma is this implementation's
 * (Marsaglia-Tsang) and guards against unnoticed changes of the sequence. */
static const struct {
    sb_dist_t d;
    double    first[3];
} s_first[] = {
    { { SB_DIST_CONSTANT, 0.323, 0 }, { 0.323, 0.323, 0.323 } },
    { { SB_DIST_NORMAL, 0.5, 0.1 }, { 0.733129890758305, 0.45263648147563434, 0.649358835294728 } },
    { { SB_DIST_UNIFORM, 0.2, 0.4 }, { 0.3912384244912204, 0.25092954516734933, 0.3781970826988644 } },
    { { SB_DIST_EXPONENTIAL, 0.3, 0 }, { 0.9383824875512594, 0.08816949634069385, 0.6648820753659699 } },
    { { SB_DIST_POISSON, 4, 0 }, { 9, 3, 4 } },
    { { SB_DIST_POISSON, 75, 0 }, { 62, 71, 79 } },
    { { SB_DIST_GAMMA, 2.0, 0.25 }, { 1.7128783142549791, 0.28173370819001209, 1.1085178170489536 } },
    { { SB_DIST_GAMMA, 0.5, 1.0 }, { 0.13025605149302194, 0.55176033200258034, 0.30052078942977295 } },
};

START_TEST (test_first_values)
{
    ck_assert_double_eq_tol (sb_dist_uniform01 (SEED, 0, 0), 0.956192122456102, 1e-15);
    ck_assert_double_eq_tol (sb_dist_uniform01 (SEED, 0, 1), 0.25464772583674666, 1e-15);
    for (size_t t = 0; t < sizeof s_first / sizeof s_first[0]; t++)
        for (uint64_t i = 0; i < 3; i++) {
            double v = sb_dist_draw (&s_first[t].d, SEED, 0, i);
            ck_assert_msg (fabs (v - s_first[t].first[i]) <= 1e-12 * fabs (s_first[t].first[i]),
                           "%s draw %llu: %.17g, expected %.17g", sb_dist_name (s_first[t].d.type),
                           (unsigned long long) i, v, s_first[t].first[i]);
        }
}
END_TEST

START_TEST (test_reproducible_and_per_rank)
{
    sb_dist_t d = { SB_DIST_NORMAL, 0.5, 0.1 };
    size_t same_index_equal = 0;
    double sum0 = 0, sum1 = 0, sum01 = 0, sq0 = 0, sq1 = 0;
    for (uint64_t i = 0; i < N; i++) {
        double a = sb_dist_draw (&d, SEED, 0, i), b = sb_dist_draw (&d, SEED, 1, i);
        ck_assert (a == sb_dist_draw (&d, SEED, 0, i));     /* pure: same seed, rank, index */
        same_index_equal += a == b;
        sum0 += a, sum1 += b, sum01 += a * b, sq0 += a * a, sq1 += b * b;
    }
    ck_assert_uint_eq (same_index_equal, 0);    /* rank 1 is not rank 0's sequence */
    double m0 = sum0 / N, m1 = sum1 / N;
    double corr = (sum01 / N - m0 * m1) / sqrt ((sq0 / N - m0 * m0) * (sq1 / N - m1 * m1));
    ck_assert_msg (fabs (corr) < 0.03, "ranks 0 and 1 correlate: %g", corr);
    /* another seed, another sequence */
    ck_assert (sb_dist_draw (&d, SEED + 1, 0, 0) != sb_dist_draw (&d, SEED, 0, 0));
    /* the trainer's index: epoch in the high half, step in the low */
    ck_assert (sb_dist_draw (&d, SEED, 0, 1ull << 32) != sb_dist_draw (&d, SEED, 0, 0));
}
END_TEST

/* mean and variance of N draws of stream 3 */
static void
s_moments (const sb_dist_t *d, double *mean, double *var, double *lo, double *hi)
{
    double sum = 0, sq = 0;
    *lo = INFINITY, *hi = -INFINITY;
    for (uint64_t i = 0; i < N; i++) {
        double v = sb_dist_draw (d, SEED, 3, i);
        sum += v, sq += v * v;
        *lo = v < *lo ? v : *lo;
        *hi = v > *hi ? v : *hi;
    }
    *mean = sum / N;
    *var = sq / N - *mean * *mean;
}

START_TEST (test_statistics)
{
    /* distribution, expected mean and variance; tolerances are about 4
     * standard errors of N = 20000 draws, and the draws are fixed */
    static const struct {
        sb_dist_t d;
        double    mean, var, tol_mean, tol_var;
    } cases[] = {
        { { SB_DIST_NORMAL, 0.5, 0.1 }, 0.5, 0.01, 0.003, 0.0006 },
        { { SB_DIST_UNIFORM, 0.2, 0.4 }, 0.3, 0.04 / 12, 0.002, 0.0002 },
        { { SB_DIST_GAMMA, 2.0, 0.25 }, 0.5, 0.125, 0.01, 0.01 },
        { { SB_DIST_GAMMA, 0.5, 1.0 }, 0.5, 0.5, 0.02, 0.05 },
        { { SB_DIST_EXPONENTIAL, 0.3, 0 }, 0.3, 0.09, 0.007, 0.008 },
        { { SB_DIST_POISSON, 4, 0 }, 4, 4, 0.06, 0.3 },
        { { SB_DIST_POISSON, 75, 0 }, 75, 75, 0.3, 5 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double mean, var, lo, hi;
        s_moments (&cases[c].d, &mean, &var, &lo, &hi);
        ck_assert_msg (fabs (mean - cases[c].mean) < cases[c].tol_mean && fabs (var - cases[c].var) < cases[c].tol_var,
                       "%s(%g, %g): mean %g var %g, expected %g %g", sb_dist_name (cases[c].d.type), cases[c].d.a,
                       cases[c].d.b, mean, var, cases[c].mean, cases[c].var);
        ck_assert (lo >= 0);
        ck_assert_double_eq_tol (sb_dist_mean (&cases[c].d), cases[c].mean, 1e-12);
        if (cases[c].d.type == SB_DIST_UNIFORM)
            ck_assert (lo >= 0.2 && hi < 0.4);
        if (cases[c].d.type == SB_DIST_POISSON)
            ck_assert (floor (lo) == lo && floor (hi) == hi);
    }
    /* DLIO sleeps abs(draw): normal(0, 1) folds to a half-normal, mean sqrt(2/pi) */
    sb_dist_t half = { SB_DIST_NORMAL, 0, 1 };
    double mean, var, lo, hi;
    s_moments (&half, &mean, &var, &lo, &hi);
    ck_assert (lo >= 0);
    ck_assert_msg (fabs (mean - sqrt (2 / M_PI)) < 0.02, "half-normal mean %g", mean);
}
END_TEST

START_TEST (test_names_and_checks)
{
    sb_dist_type_t t;
    ck_assert_int_eq (sb_dist_parse ("Gamma", &t), 0);
    ck_assert_int_eq (t, SB_DIST_GAMMA);
    ck_assert_int_eq (sb_dist_parse ("lognormal", &t), -1);
    ck_assert_str_eq (sb_dist_name (SB_DIST_EXPONENTIAL), "exponential");
    char err[256] = "";
    static const struct {
        sb_dist_t   d;
        const char *err;    /* NULL: valid */
    } cases[] = {
        { { SB_DIST_CONSTANT, 0, 0 }, NULL },
        { { SB_DIST_NORMAL, 0.5, 0 }, NULL },
        { { SB_DIST_NORMAL, 0.5, -0.1 }, "normal: parameters must not be negative (got 0.5, -0.1)" },
        { { SB_DIST_UNIFORM, 0.4, 0.2 }, "uniform: needs 0 <= min <= max, got min 0.4, max 0.2" },
        { { SB_DIST_GAMMA, 0, 1 }, "gamma: shape and scale must be positive, got shape 0, scale 1" },
        { { SB_DIST_EXPONENTIAL, 0, 0 }, "exponential: scale must be positive, got 0" },
        { { SB_DIST_POISSON, -1, 0 }, "poisson: lam must be positive, got -1" },
        { { SB_DIST_NORMAL, NAN, 0 }, "normal: parameters must be finite numbers" },
        { { (sb_dist_type_t) 42, 1, 1 }, "unknown distribution type 42" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int rc = sb_dist_check (&cases[c].d, err, sizeof err);
        if (!cases[c].err)
            ck_assert_int_eq (rc, 0);
        else {
            ck_assert_int_eq (rc, -1);
            ck_assert_str_eq (err, cases[c].err);
        }
    }
    sb_dist_t bad = { (sb_dist_type_t) 42, 1, 1 };
    ck_assert (isnan (sb_dist_draw (&bad, SEED, 0, 0)));
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("distribution");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_first_values);
    tcase_add_test (tc, test_reproducible_and_per_rank);
    tcase_add_test (tc, test_statistics);
    tcase_add_test (tc, test_names_and_checks);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
