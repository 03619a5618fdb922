/* nprandom reproduces numpy's legacy generator: every constant below was
 * printed by python3-numpy 1.24 (np.random.seed, np.random.randint with
 * dtype uint32 / int64, np.random.get_state, np.random.shuffle). */
#include <check.h>
#include "check_main.h"

#include "nprandom.h"

/* np.random.seed(s); np.random.randint(0, 2**32, size=5, dtype=np.uint32) */
START_TEST (test_outputs)
{
    static const struct { uint64_t seed; uint32_t out[5]; } cases[] = {
        { 0, { 0x8c7f0aac, 0x97c4aa2f, 0xb716a675, 0xd821ccc0, 0x9a4eb343 } },
        { 123, { 0xb24bcdfe, 0xb6843d6d, 0x49406d7e, 0x6db04542, 0x3a12efdc } },
        { 4294967295ull, { 0x18fe69a3, 0x1c924122, 0xe991ec0c, 0x900cac47, 0xc9fe37b4 } },
    };
    for (unsigned c = 0; c < sizeof cases / sizeof *cases; c++) {
        sb_np_mt_t mt;
        ck_assert_int_eq (sb_np_seed (&mt, cases[c].seed), 0);
        for (int i = 0; i < 5; i++)
            ck_assert_msg (sb_np_next32 (&mt) == cases[c].out[i], "seed %llu output %d",
                           (unsigned long long) cases[c].seed, i);
    }
    /* np.random.seed(5); randint(0, 2**32, size=1001, dtype=np.uint32)[1000]: past the first refill */
    sb_np_mt_t mt;
    ck_assert_int_eq (sb_np_seed (&mt, 5), 0);
    for (int i = 0; i < 1000; i++)
        sb_np_next32 (&mt);
    ck_assert_uint_eq (sb_np_next32 (&mt), 0xe395762a);
}
END_TEST

/* np.random.seed(123); np.random.get_state()[1][0, 1, 623] and position 624 */
START_TEST (test_state)
{
    sb_np_mt_t mt;
    ck_assert_int_eq (sb_np_seed (&mt, 123), 0);
    ck_assert_uint_eq (mt.key[0], 123);
    ck_assert_uint_eq (mt.key[1], 3885958024u);
    ck_assert_uint_eq (mt.key[623], 3987333491u);
    ck_assert_int_eq (mt.pos, 624);
}
END_TEST

/* np.random.seed raises ValueError above 2**32 - 1: refused, state untouched */
START_TEST (test_seed_range)
{
    sb_np_mt_t mt;
    ck_assert_int_eq (sb_np_seed (&mt, 9), 0);
    ck_assert_int_eq (sb_np_seed (&mt, 4294967296ull), -1);
    ck_assert_int_eq (sb_np_seed (&mt, UINT64_MAX), -1);
    ck_assert_uint_eq (mt.key[0], 9);
}
END_TEST

/* random_interval: np.random.randint(0, max + 1, dtype=np.int64) after seed(123)
 * (legacy randint uses the same masked rejection) */
START_TEST (test_interval)
{
    sb_np_mt_t mt;
    sb_np_seed (&mt, 123);
    static const uint64_t small[] = { 66, 92, 98, 17, 83, 57 };
    for (int i = 0; i < 6; i++)
        ck_assert_uint_eq (sb_np_interval (&mt, 100), small[i]);
    /* above 32 bits: 64-bit draws, the first 32-bit output the high half */
    sb_np_seed (&mt, 123);
    static const uint64_t wide[] = { 990931205137ull, 358591625322ull, 531631171129ull, 920887908065ull };
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq (sb_np_interval (&mt, (1ull << 40) + 5), wide[i]);
    sb_np_seed (&mt, 123);
    ck_assert_uint_eq (sb_np_interval (&mt, 0), 0);
    ck_assert_uint_eq (sb_np_next32 (&mt), 0xb24bcdfe);   /* max 0 draws nothing */
}
END_TEST

/* np.random.seed(7); x = np.arange(10); np.random.shuffle(x) and a list after seed(2**32 - 100) */
START_TEST (test_shuffle)
{
    sb_np_mt_t mt;
    uint64_t a[10];
    for (int i = 0; i < 10; i++)
        a[i] = (uint64_t) i;
    sb_np_seed (&mt, 7);
    sb_np_shuffle_u64 (&mt, a, 10);
    static const uint64_t want_a[] = { 8, 5, 0, 2, 1, 9, 7, 3, 6, 4 };
    for (int i = 0; i < 10; i++)
        ck_assert_uint_eq (a[i], want_a[i]);

    uint32_t l[20];
    for (int i = 0; i < 20; i++)
        l[i] = (uint32_t) i;
    sb_np_seed (&mt, 4294967196ull);
    sb_np_shuffle_u32 (&mt, l, 20);
    static const uint32_t want_l[] = { 18, 13, 11, 14, 8, 15, 1, 16, 0, 12, 4, 6, 7, 3, 2, 5, 17, 9, 10, 19 };
    for (int i = 0; i < 20; i++)
        ck_assert_uint_eq (l[i], want_l[i]);

    /* 0 and 1 elements draw nothing */
    sb_np_seed (&mt, 123);
    sb_np_shuffle_u32 (&mt, l, 0);
    sb_np_shuffle_u32 (&mt, l, 1);
    ck_assert_uint_eq (sb_np_next32 (&mt), 0xb24bcdfe);
}
END_TEST

static Suite *
nprandom_suite (void)
{
    Suite *s = suite_create ("nprandom");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_outputs);
    tcase_add_test (tc, test_state);
    tcase_add_test (tc, test_seed_range);
    tcase_add_test (tc, test_interval);
    tcase_add_test (tc, test_shuffle);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (nprandom_suite)
