/* histogram: log-linear latency histogram, mergeable by adding buckets.
 *
 * Values are microseconds. Below 16 every value has its own bucket; above,
 * each power of two is split into 16 linear buckets, so any percentile is
 * known to within 1/16 (6.25 %) of its value. Histograms from many ranks and
 * workers merge exactly by adding their bucket counts. */
#ifndef SB_HISTOGRAM_H
#define SB_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define SB_HISTOGRAM_BUCKETS 608   /* covers up to 2^41 us (25 days) */

typedef struct {
    uint64_t counts[SB_HISTOGRAM_BUCKETS];
    uint64_t total;
    uint64_t sum_us;
    uint64_t max_us;
} sb_histogram_t;

void sb_histogram_reset (sb_histogram_t *self);
void sb_histogram_add (sb_histogram_t *self, uint64_t value_us);
/* Add every bucket of counts (n buckets, n <= SB_HISTOGRAM_BUCKETS). */
void sb_histogram_merge_counts (sb_histogram_t *self, const uint64_t *counts, size_t n);
/* Value (us) below which fraction q (0..1) of the values lie: the midpoint
 * of the bucket that holds that rank. 0 when empty. */
double sb_histogram_quantile (const sb_histogram_t *self, double q);
/* Bucket index of a value, and the lowest value of a bucket. */
size_t sb_histogram_bucket (uint64_t value_us);
uint64_t sb_histogram_bucket_low (size_t bucket);

#endif
