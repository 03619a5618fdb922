/* histogram: log-linear latency histogram, mergeable by adding bins.
 *
 * Values are microseconds. Below 16 every value has its own bin; above,
 * each power of two is split into 16 linear bins, so any percentile is
 * known to within 1/16 (6.25 %) of its value. Histograms from many ranks and
 * workers merge exactly by adding their bin counts. */
#ifndef SB_HISTOGRAM_H
#define SB_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define SB_HISTOGRAM_BINS 608   /* covers up to 2^41 us (25 days) */

typedef struct {
    uint64_t counts[SB_HISTOGRAM_BINS];
    uint64_t total;
    uint64_t sum_us;
    uint64_t max_us;
} sb_histogram_t;

void sb_histogram_reset (sb_histogram_t *self);
void sb_histogram_add (sb_histogram_t *self, uint64_t value_us);
/* Add every bin of counts (n bins, n <= SB_HISTOGRAM_BINS). */
void sb_histogram_merge_counts (sb_histogram_t *self, const uint64_t *counts, size_t n);
/* Value (us) below which fraction q (0..1) of the values lie: the midpoint
 * of the bin that holds that rank. 0 when empty. */
double sb_histogram_quantile (const sb_histogram_t *self, double q);
/* Bin index of a value, and the lowest value of a bin. */
size_t sb_histogram_bin (uint64_t value_us);
uint64_t sb_histogram_bin_low (size_t bin);

#endif
