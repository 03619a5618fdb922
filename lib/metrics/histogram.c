/* histogram: log-linear bins. */
#include "histogram.h"

#include <string.h>

void
sb_histogram_reset (sb_histogram_t *self)
{
    memset (self, 0, sizeof *self);
}

size_t
sb_histogram_bin (uint64_t v)
{
    if (v < 16)
        return (size_t) v;
    unsigned e = 63 - (unsigned) __builtin_clzll (v);    /* floor(log2 v) >= 4 */
    size_t b = 16 + (size_t) (e - 4) * 16 + (size_t) ((v >> (e - 4)) & 15);
    return b < SB_HISTOGRAM_BINS ? b : SB_HISTOGRAM_BINS - 1;
}

uint64_t
sb_histogram_bin_low (size_t b)
{
    if (b < 16)
        return b;
    size_t e = (b - 16) / 16 + 4, sub = (b - 16) % 16;
    return (1ull << e) + ((uint64_t) sub << (e - 4));
}

void
sb_histogram_add (sb_histogram_t *self, uint64_t v)
{
    self->counts[sb_histogram_bin (v)]++;
    self->total++;
    self->sum_us += v;
    if (v > self->max_us)
        self->max_us = v;
}

void
sb_histogram_merge_counts (sb_histogram_t *self, const uint64_t *counts, size_t n)
{
    if (n > SB_HISTOGRAM_BINS)
        n = SB_HISTOGRAM_BINS;
    for (size_t i = 0; i < n; i++) {
        if (!counts[i])
            continue;
        self->counts[i] += counts[i];
        self->total += counts[i];
        uint64_t low = sb_histogram_bin_low (i);
        self->sum_us += counts[i] * low;
        if (low > self->max_us)
            self->max_us = low;
    }
}

double
sb_histogram_quantile (const sb_histogram_t *self, double q)
{
    if (!self->total)
        return 0;
    uint64_t rank = (uint64_t) (q * (double) self->total);
    if (rank >= self->total)
        rank = self->total - 1;
    uint64_t seen = 0;
    for (size_t b = 0; b < SB_HISTOGRAM_BINS; b++) {
        seen += self->counts[b];
        if (seen > rank) {
            uint64_t low = sb_histogram_bin_low (b);
            uint64_t high = b + 1 < SB_HISTOGRAM_BINS ? sb_histogram_bin_low (b + 1) : low + 1;
            return ((double) low + (double) high) / 2.0;
        }
    }
    return (double) self->max_us;
}
