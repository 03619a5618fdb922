/* kv_stats against numpy: python3 with numpy (1.24 on Debian 12) draws
 * latency-like samples, prints them (float.hex) with np.mean and
 * np.percentile of the list as the reference computes them, and the test
 * checks ours equal bit for bit, over sizes around numpy's summation blocks
 * (8, 128) and buffers (8192), ties, one and two samples. The KV_RESULT counters are checked
 * against the order schemas/messages.def gives. */
#include <check.h>
#include "check_main.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "kv_stats.h"

#define NQ 11
static const double s_q[NQ] = { 0, 0.01, 12.5, 25, 33.3, 50, 95, 99, 99.9, 99.99, 100 };

static const char *s_script =
    "import random, sys\n"
    "import numpy as np\n"
    "random.seed(5)\n"
    "Q = [0, 0.01, 12.5, 25, 33.3, 50, 95, 99, 99.9, 99.99, 100]\n"
    "w = sys.stdout.write\n"
    "def case(name, xs):\n"
    "    w('#%s %d\\n' % (name, len(xs)))\n"
    "    for x in xs: w(float(x).hex() + '\\n')\n"
    "    w(float(np.mean(xs)).hex() + '\\n')\n"
    "    for q in Q: w(float(np.percentile(xs, q)).hex() + '\\n')\n"
    "    v = [np.mean(xs)] + [np.percentile(xs, q) for q in (50, 95, 99, 99.9, 99.99)]\n"
    "    w(' '.join('%d' % int(round(float(x) * 1e9)) for x in v) + '\\n')\n"
    "lat = lambda n: [random.lognormvariate(-5, 1.5) for _ in range(n)]\n"
    "case('one', [0.0123])\n"
    "case('two', [0.5, 0.1])\n"
    "case('three-equal', [0.2, 0.2, 0.2])\n"
    "case('ties', [random.choice([0.001, 0.002, 0.0025, 0.01, 0.3]) for _ in range(1000)])\n"
    "case('zeros', [0.0] * 10)\n"
    "for n in [3, 7, 8, 9, 15, 16, 17, 127, 128, 129, 130, 255, 256, 257, 1000, 1023, 1024, 4097, 8191, 8192, 8193, 16385, 100003]:\n"
    "    case('lat%d' % n, lat(n))\n"
    "case('magnitudes', [10 ** random.uniform(-9, 3) for _ in range(5000)])\n"
    "case('ascending', sorted(lat(2000)))\n"
    "case('descending', sorted(lat(2000), reverse=True))\n"
    "w('#end 0\\n')\n";

/* The first python3 with numpy: PATH's, else Debian's. */
static const char *
s_python (void)
{
    if (system ("python3 -c 'import numpy' >/dev/null 2>&1") == 0)
        return "python3";
    return "/usr/bin/python3";
}

static char s_line[4096];

static const char *
s_next (FILE *f)
{
    ck_assert_msg (fgets (s_line, sizeof s_line, f) != NULL, "python's output ended early");
    s_line[strcspn (s_line, "\n")] = '\0';
    return s_line;
}

static double
s_hex (const char *l)
{
    char *end;
    double x = strtod (l, &end);
    ck_assert_msg (*l && !*end, "not a float.hex: '%s'", l);
    return x;
}

static int
s_same (double a, double b)
{
    return memcmp (&a, &b, sizeof a) == 0;
}

START_TEST (test_against_numpy)
{
    char cmd[256];
    const char *py = s_python ();
    snprintf (cmd, sizeof cmd, "%s -c 'import numpy' 2>/dev/null", py);
    ck_assert_msg (system (cmd) == 0, "python3-numpy is needed (deploy/install-deps.sh --tests installs it)");
    ck_assert_int_eq (setenv ("SB_KV_STATS_SCRIPT", s_script, 1), 0);
    snprintf (cmd, sizeof cmd, "%s -c \"$SB_KV_STATS_SCRIPT\"", py);
    FILE *f = popen (cmd, "r");
    ck_assert_ptr_nonnull (f);
    sb_kv_samples_t s;
    sb_kv_samples_init (&s);
    int cases = 0;
    for (;;) {
        char name[64];
        size_t n;
        ck_assert_int_eq (sscanf (s_next (f), "#%63s %zu", name, &n), 2);
        if (!strcmp (name, "end"))
            break;
        sb_kv_samples_clear (&s);
        for (size_t i = 0; i < n; i++)
            ck_assert_int_eq (sb_kv_samples_add (&s, s_hex (s_next (f))), 0);
        ck_assert_uint_eq (sb_kv_samples_count (&s), n);
        double mean = s_hex (s_next (f)), q[NQ];
        for (int i = 0; i < NQ; i++)
            q[i] = s_hex (s_next (f));
        /* every other case asks a percentile first: the mean must still be
         * summed in the order added, as numpy sums the list */
        double got_mean = 0;
        if (cases % 2 == 0)
            got_mean = sb_kv_samples_mean (&s);
        for (int i = 0; i < NQ; i++) {
            double got = sb_kv_samples_percentile (&s, s_q[i]);
            ck_assert_msg (s_same (got, q[i]), "%s: percentile %g: %a, numpy %a", name, s_q[i], got, q[i]);
        }
        if (cases % 2 == 1)
            got_mean = sb_kv_samples_mean (&s);
        ck_assert_msg (s_same (got_mean, mean), "%s: mean %a, numpy %a", name, got_mean, mean);
        uint64_t vec[SB_KV_LAT_COUNT];
        ck_assert_uint_eq (sb_kv_samples_lat_ns (&s, vec), SB_KV_LAT_COUNT);
        const char *l = s_next (f);
        for (int i = 0; i < SB_KV_LAT_COUNT; i++) {
            char *end;
            uint64_t want = strtoull (l, &end, 10);
            ck_assert_msg (end != l, "%s: the ns vector is short", name);
            ck_assert_msg (vec[i] == want, "%s: ns[%d] %" PRIu64 ", python %" PRIu64, name, i, vec[i], want);
            l = end;
        }
        cases++;
    }
    ck_assert_int_eq (cases, 31);
    ck_assert_int_eq (pclose (f), 0);
    sb_kv_samples_free (&s);
}
END_TEST

/* Figures by hand: the interpolation from both ends, no samples. */
START_TEST (test_by_hand)
{
    sb_kv_samples_t s;
    sb_kv_samples_init (&s);
    uint64_t vec[SB_KV_LAT_COUNT];
    ck_assert_uint_eq (sb_kv_samples_lat_ns (&s, vec), 0);   /* KV_RESULT sends [] */
    ck_assert (sb_kv_samples_mean (&s) == 0);
    ck_assert (sb_kv_samples_percentile (&s, 50) == 0);
    static const double v[] = { 4, 1, 3, 2 };   /* sorted 1 2 3 4 */
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq (sb_kv_samples_add (&s, v[i]), 0);
    ck_assert (sb_kv_samples_mean (&s) == 2.5);
    ck_assert (sb_kv_samples_percentile (&s, 50) == 2.5);    /* index 1.5 */
    ck_assert (sb_kv_samples_percentile (&s, 25) == 1.75);   /* index 0.75: from the upper end */
    ck_assert (sb_kv_samples_percentile (&s, 0) == 1);
    ck_assert (sb_kv_samples_percentile (&s, 100) == 4);
    ck_assert_uint_eq (sb_kv_samples_lat_ns (&s, vec), SB_KV_LAT_COUNT);
    ck_assert_uint_eq (vec[0], 2500000000ull);
    ck_assert_uint_eq (vec[1], 2500000000ull);
    ck_assert_uint_eq (vec[2], 3850000000ull);   /* index 2.85 */
    sb_kv_samples_free (&s);
    ck_assert_uint_eq (sb_kv_ns (-1), 0);
    ck_assert_uint_eq (sb_kv_ns (NAN), 0);
    ck_assert_uint_eq (sb_kv_ns (0.0000000014), 1);
    ck_assert_uint_eq (sb_kv_ns (1), 1000000000ull);
}
END_TEST

/* SB_KV_OP_* follow the names schemas/messages.def gives KV_RESULT.ops in
 * its comments, in order. */
START_TEST (test_ops_order)
{
    const char *path = getenv ("SB_MESSAGES_DEF");
    ck_assert_msg (path != NULL, "SB_MESSAGES_DEF (tests/meson.build) names schemas/messages.def");
    FILE *f = fopen (path, "r");
    ck_assert_msg (f != NULL, "cannot open %s", path);
    char line[1024];
    int in = 0, n = 0;
    while (fgets (line, sizeof line, f)) {
        if (strstr (line, "SB_FIELD(kv_result, U64S, ops)"))
            in = 1;
        else if (in && strstr (line, "SB_FIELD("))
            break;
        if (!in)
            continue;
        char *c = strstr (line, "/*"), *e = c ? strstr (c, "*/") : NULL;
        ck_assert_msg (c && e, "a line of KV_RESULT.ops' comment without /* */: %s", line);
        *e = '\0';
        char *lib = strstr (c, "(lib/");
        if (lib)
            *lib = '\0';
        for (char *tok = strtok (c + 2, ", \t"); tok; tok = strtok (NULL, ", \t")) {
            ck_assert_msg (n < SB_KV_OP_COUNT, "messages.def names more counters than SB_KV_OP_COUNT");
            ck_assert_msg (!strcmp (tok, sb_kv_op_name ((unsigned) n)), "ops[%d]: messages.def '%s', kv_stats '%s'",
                           n, tok, sb_kv_op_name ((unsigned) n));
            n++;
        }
    }
    fclose (f);
    ck_assert_int_eq (n, SB_KV_OP_COUNT);
    ck_assert_int_eq (SB_KV_OP_COUNT, 15);
    ck_assert_ptr_null (sb_kv_op_name (SB_KV_OP_COUNT));
    ck_assert_str_eq (sb_kv_op_name (SB_KV_OP_QUEUE_MAX), "queue_max");
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("kv_stats");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 100);
    tcase_add_test (tc, test_by_hand);
    tcase_add_test (tc, test_ops_order);
    tcase_add_test (tc, test_against_numpy);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
