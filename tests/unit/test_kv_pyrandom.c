/* pyrandom against CPython's own random module: the test runs python3 for
 * each seed, which prints thousands of draws of every function the
 * KV-cache reference uses (and the ones they are built on), and checks each
 * of ours equal, doubles bit for bit (printed with float.hex). A few
 * constants printed by python3.11 come first, so that a wrong generator
 * fails even where the comparison would share a mistake. */
#include <check.h>
#include "check_main.h"

#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "pyrandom.h"

/* Python's draws for one seed, section by section; each section reseeds.
 * Integers print in decimal, floats with float.hex. */
static const char *s_script =
    "import random, sys\n"
    "s = int(sys.argv[1])\n"
    "w = sys.stdout.write\n"
    "def sec(name):\n"
    "    random.seed(s); w('#' + name + '\\n')\n"
    "sec('random')\n"
    "for i in range(5000): w(random.random().hex() + '\\n')\n"
    "sec('getrandbits')\n"
    "for i in range(3000): w('%d\\n' % random.getrandbits(i % 65))\n"
    "NS = [1, 2, 3, 5, 7, 8, 10, 16, 17, 100, 255, 256, 1000, 2**31, 2**32 - 1, 2**32, 2**32 + 1,\n"
    "      2**40 + 3, 2**53, 2**63 + 12345, 2**64 - 1]\n"
    "sec('randbelow')\n"
    "for i in range(4000): w('%d\\n' % random.randrange(NS[i % len(NS)]))\n"
    "AB = [(1, 100), (-50, 50), (0, 0), (1000, 100000), (-2**40, 2**40), (5, 6), (1, 2**31),\n"
    "      (-2**62, 2**62), (0, 2**63 - 1), (-2**63, 0)]\n"
    "sec('randint')\n"
    "for i in range(4000): a, b = AB[i % len(AB)]; w('%d\\n' % random.randint(a, b))\n"
    "UV = [(0.8, 1.2), (-3.5, 7.25), (0.0, 1.0), (1e-3, 5e6), (2.0, 1.0)]\n"
    "sec('uniform')\n"
    "for i in range(4000): a, b = UV[i % len(UV)]; w(random.uniform(a, b).hex() + '\\n')\n"
    "LS = [1, 2, 3, 10, 100, 1000, 12345]\n"
    "sec('choice')\n"
    "for i in range(3000): w('%d\\n' % random.choice(range(LS[i % len(LS)])))\n"
    "RR = [(0, 100, 3), (10, 0, -3), (-7, 50, 5), (100, -100, -7), (5, 6, 2), (0, 2**40, 2**20 + 1)]\n"
    "sec('randrange')\n"
    "for i in range(3000): a, b, c = RR[i % len(RR)]; w('%d\\n' % random.randrange(a, b, c))\n"
    "sec('shuffle')\n"
    "for n in [0, 1, 2, 5, 10, 50, 1000]:\n"
    "    x = list(range(n)); random.shuffle(x); w(' '.join(map(str, x)) + '\\n')\n"
    "sec('mix')\n"
    "for i in range(4000):\n"
    "    k = i % 4\n"
    "    if k == 0: w(random.random().hex() + '\\n')\n"
    "    elif k == 1: w('%d\\n' % random.randint(1, 10000))\n"
    "    elif k == 2: w(random.uniform(0.8, 1.2).hex() + '\\n')\n"
    "    else: w('%d\\n' % random.choice(['chatbot', 'coding', 'document']).__len__())\n"
    "w('#end\\n')\n";

/* The interpreter: Debian's when there, else the first python3 on PATH. */
static const char *
s_python (void)
{
    return access ("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

typedef struct {
    FILE *f;
    char  line[1 << 16];
    int   n;   /* lines read, for messages */
} s_reader_t;

static const char *
s_next (s_reader_t *r)
{
    ck_assert_msg (fgets (r->line, sizeof r->line, r->f) != NULL, "python's output ended at line %d", r->n);
    r->n++;
    r->line[strcspn (r->line, "\n")] = '\0';
    return r->line;
}

static void
s_section (s_reader_t *r, sb_py_random_t *g, int64_t seed, uint64_t useed, int big, const char *name)
{
    const char *l = s_next (r);
    ck_assert_msg (l[0] == '#' && !strcmp (l + 1, name), "expected section %s, python printed '%s'", name, l);
    if (big)
        sb_py_seed_u64 (g, useed);
    else
        sb_py_seed (g, seed);
}

static double
s_hex (const char *l)
{
    char *end;
    double x = strtod (l, &end);
    ck_assert_msg (*l && !*end, "not a float.hex: '%s'", l);
    return x;
}

static uint64_t
s_u (const char *l)
{
    char *end;
    uint64_t x = strtoull (l, &end, 10);
    ck_assert_msg (*l && !*end, "not an unsigned integer: '%s'", l);
    return x;
}

static int64_t
s_i (const char *l)
{
    char *end;
    int64_t x = strtoll (l, &end, 10);
    ck_assert_msg (*l && !*end, "not an integer: '%s'", l);
    return x;
}

/* Every section for one seed (big: a seed past int64, given as uint64). */
static void
s_compare_seed (const char *seed_text, int64_t seed, uint64_t useed, int big)
{
    char cmd[8192];
    ck_assert_int_lt (snprintf (cmd, sizeof cmd, "%s -c \"$SB_PYRANDOM_SCRIPT\" %s", s_python (), seed_text),
                      (int) sizeof cmd);
    ck_assert_int_eq (setenv ("SB_PYRANDOM_SCRIPT", s_script, 1), 0);
    s_reader_t *r = calloc (1, sizeof *r);
    ck_assert_ptr_nonnull (r);
    r->f = popen (cmd, "r");
    ck_assert_msg (r->f != NULL, "cannot run %s", s_python ());
    sb_py_random_t g;

    s_section (r, &g, seed, useed, big, "random");
    for (int i = 0; i < 5000; i++) {
        double want = s_hex (s_next (r)), got = sb_py_random (&g);
        ck_assert_msg (memcmp (&want, &got, sizeof got) == 0, "seed %s random() #%d: %a, python %a", seed_text, i,
                       got, want);
    }
    s_section (r, &g, seed, useed, big, "getrandbits");
    for (int i = 0; i < 3000; i++) {
        uint64_t want = s_u (s_next (r)), got = sb_py_getrandbits (&g, (unsigned) (i % 65));
        ck_assert_msg (want == got, "seed %s getrandbits(%d) #%d: %" PRIu64 ", python %" PRIu64, seed_text, i % 65, i,
                       got, want);
    }
    static const uint64_t ns[] = { 1, 2, 3, 5, 7, 8, 10, 16, 17, 100, 255, 256, 1000, 1ull << 31, (1ull << 32) - 1,
                                   1ull << 32, (1ull << 32) + 1, (1ull << 40) + 3, 1ull << 53,
                                   (1ull << 63) + 12345, UINT64_MAX };
    const int nn = (int) (sizeof ns / sizeof *ns);
    s_section (r, &g, seed, useed, big, "randbelow");
    for (int i = 0; i < 4000; i++) {
        uint64_t want = s_u (s_next (r)), got = sb_py_randbelow (&g, ns[i % nn]);
        ck_assert_msg (want == got, "seed %s randrange(%" PRIu64 ") #%d: %" PRIu64 ", python %" PRIu64, seed_text,
                       ns[i % nn], i, got, want);
    }
    static const int64_t ab[][2] = { { 1, 100 }, { -50, 50 }, { 0, 0 }, { 1000, 100000 },
                                     { -(1ll << 40), 1ll << 40 }, { 5, 6 }, { 1, 1ll << 31 },
                                     { -(1ll << 62), 1ll << 62 }, { 0, INT64_MAX }, { INT64_MIN, 0 } };
    const int nab = (int) (sizeof ab / sizeof *ab);
    s_section (r, &g, seed, useed, big, "randint");
    for (int i = 0; i < 4000; i++) {
        int64_t want = s_i (s_next (r)), got = sb_py_randint (&g, ab[i % nab][0], ab[i % nab][1]);
        ck_assert_msg (want == got, "seed %s randint(%" PRId64 ", %" PRId64 ") #%d: %" PRId64 ", python %" PRId64,
                       seed_text, ab[i % nab][0], ab[i % nab][1], i, got, want);
    }
    static const double uv[][2] = { { 0.8, 1.2 }, { -3.5, 7.25 }, { 0.0, 1.0 }, { 1e-3, 5e6 }, { 2.0, 1.0 } };
    const int nuv = (int) (sizeof uv / sizeof *uv);
    s_section (r, &g, seed, useed, big, "uniform");
    for (int i = 0; i < 4000; i++) {
        double want = s_hex (s_next (r)), got = sb_py_uniform (&g, uv[i % nuv][0], uv[i % nuv][1]);
        ck_assert_msg (memcmp (&want, &got, sizeof got) == 0, "seed %s uniform(%g, %g) #%d: %a, python %a",
                       seed_text, uv[i % nuv][0], uv[i % nuv][1], i, got, want);
    }
    static const size_t ls[] = { 1, 2, 3, 10, 100, 1000, 12345 };
    const int nls = (int) (sizeof ls / sizeof *ls);
    s_section (r, &g, seed, useed, big, "choice");
    for (int i = 0; i < 3000; i++) {
        uint64_t want = s_u (s_next (r)), got = sb_py_choice (&g, ls[i % nls]);
        ck_assert_msg (want == got, "seed %s choice(range(%zu)) #%d: %" PRIu64 ", python %" PRIu64, seed_text,
                       ls[i % nls], i, got, want);
    }
    static const int64_t rr[][3] = { { 0, 100, 3 }, { 10, 0, -3 }, { -7, 50, 5 }, { 100, -100, -7 }, { 5, 6, 2 },
                                     { 0, 1ll << 40, (1ll << 20) + 1 } };
    const int nrr = (int) (sizeof rr / sizeof *rr);
    s_section (r, &g, seed, useed, big, "randrange");
    for (int i = 0; i < 3000; i++) {
        const int64_t *a = rr[i % nrr];
        int64_t want = s_i (s_next (r)), got = sb_py_randrange (&g, a[0], a[1], a[2]);
        ck_assert_msg (want == got, "seed %s randrange(%" PRId64 ", %" PRId64 ", %" PRId64 ") #%d: %" PRId64
                       ", python %" PRId64, seed_text, a[0], a[1], a[2], i, got, want);
    }
    /* shuffle: 4-byte elements, and 100-byte ones (the swap in pieces)
     * shuffled alongside from the same state must give the same order */
    s_section (r, &g, seed, useed, big, "shuffle");
    static const size_t sn[] = { 0, 1, 2, 5, 10, 50, 1000 };
    for (size_t c = 0; c < sizeof sn / sizeof *sn; c++) {
        uint32_t *x = calloc (sn[c] + 1, sizeof *x);
        struct { uint32_t id; char pad[96]; } *wide = calloc (sn[c] + 1, sizeof *wide);
        ck_assert (x && wide);
        for (size_t i = 0; i < sn[c]; i++)
            x[i] = wide[i].id = (uint32_t) i;
        sb_py_random_t copy = g;
        sb_py_shuffle (&g, x, sn[c], sizeof *x);
        sb_py_shuffle (&copy, wide, sn[c], sizeof *wide);
        char *p = (char *) s_next (r);
        for (size_t i = 0; i < sn[c]; i++) {
            char *end;
            unsigned long v = strtoul (p, &end, 10);
            ck_assert_msg (end != p, "seed %s shuffle(%zu): python printed fewer values", seed_text, sn[c]);
            ck_assert_msg (v == x[i] && v == wide[i].id, "seed %s shuffle(%zu)[%zu]: %u (wide %u), python %lu",
                           seed_text, sn[c], i, x[i], wide[i].id, v);
            p = end;
        }
        ck_assert_msg (*p == '\0', "seed %s shuffle(%zu): python printed more values", seed_text, sn[c]);
        free (x);
        free (wide);
    }
    s_section (r, &g, seed, useed, big, "mix");
    for (int i = 0; i < 4000; i++) {
        const char *l = s_next (r);
        switch (i % 4) {
        case 0:
        case 2: {
            double want = s_hex (l), got = i % 4 == 0 ? sb_py_random (&g) : sb_py_uniform (&g, 0.8, 1.2);
            ck_assert_msg (memcmp (&want, &got, sizeof got) == 0, "seed %s mix #%d: %a, python %a", seed_text, i, got,
                           want);
            break;
        }
        case 1:
            ck_assert_msg (s_i (l) == sb_py_randint (&g, 1, 10000), "seed %s mix #%d: randint", seed_text, i);
            break;
        default: {
            static const char *types[] = { "chatbot", "coding", "document" };
            ck_assert_msg (s_u (l) == strlen (types[sb_py_choice (&g, 3)]), "seed %s mix #%d: choice", seed_text, i);
        }
        }
    }
    ck_assert_str_eq (s_next (r), "#end");
    ck_assert_int_eq (pclose (r->f), 0);
    free (r);
}

/* printed by python3.11: random.seed(42); random.random(); random.randint(1, 100)
 * and random.seed(0); random.random(); random.seed(2**32 + 5); random.getrandbits(64) */
START_TEST (test_constants)
{
    sb_py_random_t g;
    sb_py_seed (&g, 42);
    ck_assert (sb_py_random (&g) == 0x1.4762f307200c5p-1);   /* 0.6394267984578837 */
    ck_assert_int_eq (sb_py_randint (&g, 1, 100), 4);
    sb_py_seed (&g, 0);
    ck_assert (sb_py_random (&g) == 0.8444218515250481);
    sb_py_seed (&g, (1ll << 32) + 5);
    ck_assert_uint_eq (sb_py_getrandbits (&g, 64), 8955819811489906899ull);
}
END_TEST

START_TEST (test_against_python)
{
    static const struct { const char *text; int64_t seed; uint64_t useed; int big; } seeds[] = {
        { "0", 0, 0, 0 },
        { "42", 42, 0, 0 },
        { "43", 43, 0, 0 },
        { "1", 1, 0, 0 },
        { "4294967295", 4294967295ll, 0, 0 },
        { "4294967301", 4294967301ll, 0, 0 },   /* 2**32 + 5: a two-word key */
        { "-7", -7, 0, 0 },                     /* seeded by its absolute value */
        { "123456789", 123456789, 0, 0 },
        { "18446744073709551615", 0, UINT64_MAX, 1 },
    };
    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++)
        s_compare_seed (seeds[i].text, seeds[i].seed, seeds[i].useed, seeds[i].big);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("kv_pyrandom");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 100);
    tcase_add_test (tc, test_constants);
    tcase_add_test (tc, test_against_python);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
