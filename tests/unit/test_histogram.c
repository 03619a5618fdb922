/* histogram: the log-linear latency histogram (lib/metrics/histogram.h).
 * Exact bucket edges, adding, merging by bucket counts, percentiles against
 * a sorted-array oracle within the documented bound (1/16 of the value), and
 * reset. */
#include <check.h>
#include "check_main.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"

/* A fixed stream of latencies: a 64-bit LCG spread over 2^0 .. 2^30 us on a
 * log scale, so every octave gets values. */
static uint64_t
s_next (uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    unsigned octave = (unsigned) (*state >> 59) % 31;  /* 0..30 */
    uint64_t low = (*state >> 20) & ((1ull << octave) - 1);
    return (1ull << octave) + low - (octave == 0);     /* 0 .. 2^31-1 */
}

static int
s_cmp_u64 (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

/* Below 16 every value has its own bucket; from 16 on each octave has 16
 * linear buckets; the last bucket (607) starts at 2^40 + 15 x 2^36 and takes
 * everything from there on, 2^41 and above included. */
START_TEST (test_bucket_edges)
{
    ck_assert_int_eq (SB_HISTOGRAM_BINS, 608);
    for (uint64_t v = 0; v < 16; v++) {
        ck_assert_uint_eq (sb_histogram_bin (v), v);
        ck_assert_uint_eq (sb_histogram_bin_low (v), v);
    }
    /* first octave split in 16: width 1 */
    ck_assert_uint_eq (sb_histogram_bin (16), 16);
    ck_assert_uint_eq (sb_histogram_bin (31), 31);
    /* second octave: width 2 */
    ck_assert_uint_eq (sb_histogram_bin (32), 32);
    ck_assert_uint_eq (sb_histogram_bin (33), 32);
    ck_assert_uint_eq (sb_histogram_bin (34), 33);
    ck_assert_uint_eq (sb_histogram_bin (63), 47);
    ck_assert_uint_eq (sb_histogram_bin (64), 48);
    ck_assert_uint_eq (sb_histogram_bin_low (33), 34);
    ck_assert_uint_eq (sb_histogram_bin_low (47), 62);
    ck_assert_uint_eq (sb_histogram_bin_low (48), 64);
    /* 1000 us: octave 512..1023 (e = 9), width 32: 512 + 15 x 32 = 992 */
    ck_assert_uint_eq (sb_histogram_bin (1000), 16 + 5 * 16 + 15);
    ck_assert_uint_eq (sb_histogram_bin_low (16 + 5 * 16 + 15), 992);
    ck_assert_uint_eq (sb_histogram_bin (991), 16 + 5 * 16 + 14);
    ck_assert_uint_eq (sb_histogram_bin (1024), 16 + 6 * 16);
    /* the top: 2^41 - 1 is the last value of bucket 607, 2^41 and beyond
     * (overflow) land in it too */
    ck_assert_uint_eq (sb_histogram_bin_low (607), 2130303778816ull);
    ck_assert_uint_eq (sb_histogram_bin_low (606), 2061584302080ull);
    ck_assert_uint_eq (sb_histogram_bin (2130303778816ull - 1), 606);
    ck_assert_uint_eq (sb_histogram_bin (2130303778816ull), 607);
    ck_assert_uint_eq (sb_histogram_bin ((1ull << 41) - 1), 607);
    ck_assert_uint_eq (sb_histogram_bin (1ull << 41), 607);
    ck_assert_uint_eq (sb_histogram_bin (1ull << 50), 607);
    ck_assert_uint_eq (sb_histogram_bin (UINT64_MAX), 607);
}
END_TEST

/* Every bucket: its low end maps to it, the value before the next bucket's
 * low end maps to it, the lows increase, and a bucket's width is at most
 * 1/16 of its low end from bucket 16 on (the documented bound). */
START_TEST (test_bucket_round_trip)
{
    for (size_t b = 0; b < SB_HISTOGRAM_BINS; b++) {
        uint64_t low = sb_histogram_bin_low (b);
        ck_assert_uint_eq (sb_histogram_bin (low), b);
        if (b + 1 < SB_HISTOGRAM_BINS) {
            uint64_t next = sb_histogram_bin_low (b + 1);
            ck_assert_uint_gt (next, low);
            ck_assert_uint_eq (sb_histogram_bin (next - 1), b);
            if (b >= 16)
                ck_assert_uint_le ((next - low) * 16, low);
            else
                ck_assert_uint_eq (next - low, 1);
        }
    }
}
END_TEST

START_TEST (test_add_and_reset)
{
    sb_histogram_t h;
    memset (&h, 0xa5, sizeof h);    /* reset must not rely on zeroed memory */
    sb_histogram_reset (&h);
    sb_histogram_t zero;
    memset (&zero, 0, sizeof zero);
    ck_assert_int_eq (memcmp (&h, &zero, sizeof h), 0);
    ck_assert_double_eq (sb_histogram_quantile (&h, 0.5), 0);
    ck_assert_double_eq (sb_histogram_quantile (&h, 0.99), 0);

    const uint64_t values[] = { 0, 0, 15, 16, 33, 1000, 1ull << 41, UINT64_MAX / 4 };
    uint64_t sum = 0;
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        sb_histogram_add (&h, values[i]);
        sum += values[i];
    }
    ck_assert_uint_eq (h.total, 8);
    ck_assert_uint_eq (h.sum_us, sum);
    ck_assert_uint_eq (h.max_us, UINT64_MAX / 4);
    ck_assert_uint_eq (h.counts[0], 2);
    ck_assert_uint_eq (h.counts[15], 1);
    ck_assert_uint_eq (h.counts[16], 1);
    ck_assert_uint_eq (h.counts[32], 1);
    ck_assert_uint_eq (h.counts[16 + 5 * 16 + 15], 1);
    ck_assert_uint_eq (h.counts[607], 2);     /* both overflow values */
    uint64_t counted = 0;
    for (size_t b = 0; b < SB_HISTOGRAM_BINS; b++)
        counted += h.counts[b];
    ck_assert_uint_eq (counted, 8);

    /* the lowest rank is the lowest value's bucket midpoint; the top is the
     * last bucket's low end + 1/2 (it has no upper end) */
    ck_assert_double_eq (sb_histogram_quantile (&h, 0), 0.5);
    ck_assert_double_eq (sb_histogram_quantile (&h, 1), 2130303778816.5);
    /* rank floor(0.5 x 8) = 4 (0-based): 33, bucket [32, 34) */
    ck_assert_double_eq (sb_histogram_quantile (&h, 0.5), 33.0);
    /* rank 5: 1000, bucket [992, 1024) */
    ck_assert_double_eq (sb_histogram_quantile (&h, 0.7), 1008.0);

    sb_histogram_reset (&h);
    ck_assert_int_eq (memcmp (&h, &zero, sizeof h), 0);
    sb_histogram_add (&h, 7);
    ck_assert_uint_eq (h.total, 1);
    ck_assert_uint_eq (h.max_us, 7);
    ck_assert_double_eq (sb_histogram_quantile (&h, 0.5), 7.5);
}
END_TEST

/* Percentiles of 100 000 values against the sorted values: the value of
 * rank floor(q x n) (the header's "below which fraction q lie") lies in the
 * returned bucket's range, so the estimate is its bucket's midpoint, within
 * 1/16 of the value (values >= 16) or 1/2 (values < 16, a bucket each). */
START_TEST (test_quantile_oracle)
{
    enum { N = 100000 };
    uint64_t *v = malloc (N * sizeof *v);
    ck_assert_ptr_nonnull (v);
    sb_histogram_t h;
    sb_histogram_reset (&h);
    uint64_t state = 42;
    for (size_t i = 0; i < N; i++) {
        v[i] = s_next (&state);
        sb_histogram_add (&h, v[i]);
    }
    qsort (v, N, sizeof *v, s_cmp_u64);
    ck_assert_uint_eq (h.max_us, v[N - 1]);
    const double qs[] = { 0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 1 };
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        size_t rank = (size_t) (qs[i] * N);
        if (rank >= N)
            rank = N - 1;
        uint64_t truth = v[rank];
        size_t b = sb_histogram_bin (truth);
        double low = (double) sb_histogram_bin_low (b), high = (double) sb_histogram_bin_low (b + 1);
        double got = sb_histogram_quantile (&h, qs[i]);
        ck_assert_double_eq (got, (low + high) / 2);
        double bound = truth < 16 ? 0.5 : (double) truth / 16;
        ck_assert_msg (got >= (double) truth - bound && got <= (double) truth + bound,
                       "q %g: %g for %llu (bound %g)", qs[i], got, (unsigned long long) truth, bound);
    }
    /* a small exact case: 1..100, p50 is 51 (rank 50), p99 is 100 (rank 99) */
    sb_histogram_reset (&h);
    for (uint64_t x = 1; x <= 100; x++)
        sb_histogram_add (&h, x);
    ck_assert_double_eq (sb_histogram_quantile (&h, 0.5), 51.0);   /* [50, 52) */
    ck_assert_double_eq (sb_histogram_quantile (&h, 0.99), 102.0); /* [100, 104) */
    ck_assert_double_eq (sb_histogram_quantile (&h, 0.1), 11.5);   /* rank 10: 11, own bucket */
    free (v);
}
END_TEST

/* Merging the bucket counts of two histograms gives the counts, total and
 * percentiles of one histogram fed with both streams. The counts carry no
 * sum or maximum: those become the bucket low ends (lower bounds). */
START_TEST (test_merge_equals_both_streams)
{
    sb_histogram_t a, b, both, merged;
    sb_histogram_reset (&a);
    sb_histogram_reset (&b);
    sb_histogram_reset (&both);
    uint64_t sa = 1, sb = 2;
    for (int i = 0; i < 5000; i++) {
        uint64_t x = s_next (&sa);
        sb_histogram_add (&a, x);
        sb_histogram_add (&both, x);
    }
    for (int i = 0; i < 7000; i++) {
        uint64_t x = s_next (&sb) / 8;  /* another distribution */
        sb_histogram_add (&b, x);
        sb_histogram_add (&both, x);
    }
    sb_histogram_reset (&merged);
    sb_histogram_merge_counts (&merged, a.counts, SB_HISTOGRAM_BINS);
    sb_histogram_merge_counts (&merged, b.counts, SB_HISTOGRAM_BINS);
    ck_assert_uint_eq (merged.total, 12000);
    ck_assert_int_eq (memcmp (merged.counts, both.counts, sizeof both.counts), 0);
    const double qs[] = { 0, 0.01, 0.5, 0.9, 0.99, 0.999, 1 };
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        ck_assert_double_eq (sb_histogram_quantile (&merged, qs[i]), sb_histogram_quantile (&both, qs[i]));
    /* the maximum and sum from counts: the low ends of the buckets */
    uint64_t low_sum = 0, top = 0;
    for (size_t k = 0; k < SB_HISTOGRAM_BINS; k++) {
        low_sum += both.counts[k] * sb_histogram_bin_low (k);
        if (both.counts[k])
            top = sb_histogram_bin_low (k);
    }
    ck_assert_uint_eq (merged.sum_us, low_sum);
    ck_assert_uint_eq (merged.max_us, top);
    ck_assert_uint_le (merged.max_us, both.max_us);
    ck_assert_uint_eq (merged.max_us, sb_histogram_bin_low (sb_histogram_bin (both.max_us)));

    /* merging into a histogram that has values keeps its own maximum when
     * it is the larger */
    sb_histogram_t c;
    sb_histogram_reset (&c);
    sb_histogram_add (&c, 1000000);
    uint64_t small[20] = { 0 };
    small[3] = 4;
    small[17] = 2;
    sb_histogram_merge_counts (&c, small, 20);
    ck_assert_uint_eq (c.total, 7);
    ck_assert_uint_eq (c.max_us, 1000000);
    ck_assert_uint_eq (c.sum_us, 1000000 + 4 * 3 + 2 * 17);
    ck_assert_uint_eq (c.counts[3], 4);
    ck_assert_uint_eq (c.counts[17], 2);
    /* fewer buckets than the histogram has (trailing zero buckets omitted,
     * as ENDPOINT_STATS sends them): the rest is untouched */
    sb_histogram_merge_counts (&c, small, 4);
    ck_assert_uint_eq (c.counts[3], 8);
    ck_assert_uint_eq (c.counts[17], 2);
    ck_assert_uint_eq (c.total, 11);
    /* an empty merge changes nothing */
    sb_histogram_t before = c;
    sb_histogram_merge_counts (&c, small, 0);
    ck_assert_int_eq (memcmp (&before, &c, sizeof c), 0);
}
END_TEST

/* More counts than buckets (a peer's longer array): the extra ones are
 * ignored, never written past the histogram. */
START_TEST (test_merge_clamps_bucket_count)
{
    enum { EXTRA = 64 };
    uint64_t *counts = calloc (SB_HISTOGRAM_BINS + EXTRA, sizeof *counts);
    ck_assert_ptr_nonnull (counts);
    for (size_t i = 0; i < SB_HISTOGRAM_BINS + EXTRA; i++)
        counts[i] = 1;
    /* a canary after the histogram in one allocation (ASan sees overruns too) */
    struct { sb_histogram_t h; uint64_t canary[EXTRA]; } *box = calloc (1, sizeof *box);
    ck_assert_ptr_nonnull (box);
    sb_histogram_merge_counts (&box->h, counts, SB_HISTOGRAM_BINS + EXTRA);
    ck_assert_uint_eq (box->h.total, SB_HISTOGRAM_BINS);
    for (size_t i = 0; i < EXTRA; i++)
        ck_assert_uint_eq (box->canary[i], 0);
    ck_assert_uint_eq (box->h.max_us, sb_histogram_bin_low (SB_HISTOGRAM_BINS - 1));
    free (box);
    free (counts);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("histogram");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_bucket_edges);
    tcase_add_test (tc, test_bucket_round_trip);
    tcase_add_test (tc, test_add_and_reset);
    tcase_add_test (tc, test_quantile_oracle);
    tcase_add_test (tc, test_merge_equals_both_streams);
    tcase_add_test (tc, test_merge_clamps_bucket_count);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
