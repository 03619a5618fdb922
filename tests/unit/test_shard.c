/* Shard arithmetic over a grid: equal steps on every rank, bounded drops,
 * no sample owned twice, every epoch order a bijection. */
#include <check.h>
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "shard.h"

START_TEST (test_grid)
{
    uint8_t *seen = malloc (500);
    ck_assert_ptr_nonnull (seen);
    char err[256];
    const sb_shuffle_t modes[][2] = { { SB_SHUFFLE_OFF, SB_SHUFFLE_OFF },
                                      { SB_SHUFFLE_SEED, SB_SHUFFLE_OFF },
                                      { SB_SHUFFLE_OFF, SB_SHUFFLE_SEED } };
    for (uint64_t S = 1; S <= 500; S++)
        for (uint64_t R = 1; R <= 17; R++)
            for (uint64_t B = 1; B <= 9; B++) {
                sb_shard_plan_t p;
                int rc = sb_shard_plan (S, 1, R, B, &p, err, sizeof err);
                if (S / R < B) {
                    ck_assert_int_eq (rc, -1);
                    ck_assert_ptr_nonnull (strstr (err, "less than one batch"));
                    continue;
                }
                ck_assert_int_eq (rc, 0);
                ck_assert_uint_eq (p.per_rank, S / R);
                ck_assert_uint_eq (p.dropped, S - R * (S / R));
                ck_assert_uint_le (p.dropped, R - 1);
                ck_assert_uint_eq (p.batches, (S / R) / B);
                ck_assert_uint_ge (p.batches, 1);
                /* every rank steps floor(k/B) times: same k for all ranks */
                ck_assert_uint_le (p.batches * B, p.per_rank);
                ck_assert_uint_gt ((p.batches + 1) * B, p.per_rank);
                /* ownership does not depend on the batch size: check it once per (S, R) */
                if (B != 1)
                    continue;
                for (size_t m = 0; m < 3; m++) {
                    sb_epoch_order_t o;
                    sb_epoch_order_init (&o, &p, modes[m][0], modes[m][1], 42, 1 + S % 3);
                    memset (seen, 0, S);
                    uint64_t owned = 0;
                    for (uint64_t r = 0; r < R; r++)
                        for (uint64_t pos = 0; pos < p.per_rank; pos++) {
                            uint64_t s = sb_epoch_order_sample (&o, r, pos);
                            ck_assert_uint_lt (s, S);
                            ck_assert_msg (!seen[s], "S=%llu R=%llu: sample %llu owned twice",
                                           (unsigned long long) S, (unsigned long long) R, (unsigned long long) s);
                            seen[s] = 1;
                            owned++;
                        }
                    ck_assert_uint_eq (owned, R * p.per_rank);
                    ck_assert_uint_eq (owned + p.dropped, S);
                }
            }
    free (seen);
}
END_TEST

START_TEST (test_issue_example)
{
    /* S=100 samples, 7 ranks, batch 3: 14 samples and 4 batches per rank, 2 dropped */
    sb_shard_plan_t p;
    char err[256];
    ck_assert_int_eq (sb_shard_plan (100, 1, 7, 3, &p, err, sizeof err), 0);
    ck_assert_uint_eq (p.per_rank, 14);
    ck_assert_uint_eq (p.batches, 4);
    ck_assert_uint_eq (p.dropped, 2);
}
END_TEST

START_TEST (test_samples_per_file)
{
    /* file shuffle keeps the samples of one file together and in order */
    sb_shard_plan_t p;
    char err[256];
    ck_assert_int_eq (sb_shard_plan (10, 4, 3, 2, &p, err, sizeof err), 0);
    ck_assert_uint_eq (p.samples, 40);
    ck_assert_uint_eq (p.per_rank, 13);
    ck_assert_uint_eq (p.dropped, 1);
    sb_epoch_order_t o;
    sb_epoch_order_init (&o, &p, SB_SHUFFLE_OFF, SB_SHUFFLE_SEED, 7, 2);
    for (uint64_t g = 0; g + 1 < 39; g++) {
        uint64_t a = sb_epoch_order_sample (&o, g / 13, g % 13), b = sb_epoch_order_sample (&o, (g + 1) / 13, (g + 1) % 13);
        if ((g + 1) % 4 != 0)
            ck_assert_uint_eq (b, a + 1);
    }
}
END_TEST

START_TEST (test_shuffle_changes_with_epoch)
{
    sb_shard_plan_t p;
    char err[256];
    ck_assert_int_eq (sb_shard_plan (1000, 1, 4, 8, &p, err, sizeof err), 0);
    sb_epoch_order_t a, b, a2;
    sb_epoch_order_init (&a, &p, SB_SHUFFLE_SEED, SB_SHUFFLE_OFF, 9, 1);
    sb_epoch_order_init (&b, &p, SB_SHUFFLE_SEED, SB_SHUFFLE_OFF, 9, 2);
    sb_epoch_order_init (&a2, &p, SB_SHUFFLE_SEED, SB_SHUFFLE_OFF, 9, 1);
    int differ = 0;
    for (uint64_t i = 0; i < 250; i++) {
        ck_assert_uint_eq (sb_epoch_order_sample (&a, 0, i), sb_epoch_order_sample (&a2, 0, i));
        differ += sb_epoch_order_sample (&a, 0, i) != sb_epoch_order_sample (&b, 0, i);
    }
    ck_assert_int_gt (differ, 200);
}
END_TEST

START_TEST (test_files_split)
{
    for (uint64_t n = 0; n < 60; n++)
        for (uint64_t r = 1; r < 9; r++) {
            uint64_t next = 0;
            for (uint64_t k = 0; k < r; k++) {
                uint64_t first, count;
                sb_shard_files (n, r, k, &first, &count);
                ck_assert_uint_eq (first, next);
                ck_assert_uint_le (count, n / r + 1);
                next = first + count;
            }
            ck_assert_uint_eq (next, n);
        }
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("shard");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 100);
    tcase_add_test (tc, test_grid);
    tcase_add_test (tc, test_issue_example);
    tcase_add_test (tc, test_samples_per_file);
    tcase_add_test (tc, test_shuffle_changes_with_epoch);
    tcase_add_test (tc, test_files_split);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
