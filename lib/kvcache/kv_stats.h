/* kv_stats: the KV-cache reference's summary figures over a rank's samples.
 *
 * The reference keeps every latency of a trial in a list (seconds) and
 * summarises it with np.mean and np.percentile(..., q) (numpy's default
 * 'linear' method); these do the same arithmetic in the same order, so a
 * figure here equals numpy's to the last bit on the same samples:
 * - mean: numpy's sum (buffers of 8192 values added in turn, each summed
 *   pairwise: eight running sums up to 128 values, halves beyond) divided
 *   by the count;
 * - percentile(q): virtual index (n - 1) * (q / 100), the two neighbours of
 *   the sorted samples, interpolated as numpy's _lerp (a + (b - a) t below
 *   t = 0.5, b - (b - a)(1 - t) from 0.5).
 * Samples are 8 bytes each (the memory stays flat per request, not per
 * byte); the array grows by doubling. Not thread safe: the caller locks.
 * tests/unit/test_kv_stats.c checks it against numpy's own figures. */
#ifndef SB_KV_STATS_H
#define SB_KV_STATS_H

#include <stddef.h>
#include <stdint.h>

/* The counters of KV_RESULT.ops, in the order of schemas/messages.def. */
typedef enum {
    SB_KV_OP_WRITE_OPERATIONS,
    SB_KV_OP_READ_OPERATIONS,
    SB_KV_OP_PREFILL_WRITES,
    SB_KV_OP_DECODE_READS,
    SB_KV_OP_CACHE_HITS,
    SB_KV_OP_CACHE_MISSES,
    SB_KV_OP_MULTI_TURN_HITS,
    SB_KV_OP_MULTI_TURN_MISSES,
    SB_KV_OP_STORAGE_ENTRIES,
    SB_KV_OP_CPU_ENTRIES,
    SB_KV_OP_EVICTIONS,
    SB_KV_OP_OFFLOADS_CPU,
    SB_KV_OP_OFFLOADS_STORAGE,
    SB_KV_OP_SYSTEM_PROMPT_HITS,
    SB_KV_OP_QUEUE_MAX,
    SB_KV_OP_COUNT
} sb_kv_op_t;

/* The reference's name of counter op ("write_operations"), NULL past the end. */
const char *sb_kv_op_name (unsigned op);

/* The latency vector of KV_RESULT: [mean, p50, p95, p99, p99.9, p99.99]. */
enum { SB_KV_LAT_COUNT = 6 };
/* Its percentiles (q of np.percentile), index 1 .. 5 of the vector. */
extern const double sb_kv_lat_q[SB_KV_LAT_COUNT - 1];

typedef struct {
    double *v;       /* seconds, in the order added (sorted by the figures) */
    size_t  n, cap;
    int     sorted;  /* v is sorted ascending */
    /* numpy's mean depends on the order summed (pairwise rounding): it is
     * taken in the order added, before the first percentile sorts v, and
     * kept */
    double  mean;
    int     mean_ok;
} sb_kv_samples_t;

void sb_kv_samples_init (sb_kv_samples_t *s);
void sb_kv_samples_free (sb_kv_samples_t *s);
/* Forget the samples, keep the memory (a new trial). */
void sb_kv_samples_clear (sb_kv_samples_t *s);
/* Append one sample (seconds, finite: numpy's NaN rules are not followed). Returns 0, or -1 when memory runs out (the
 * sample is not kept). */
int sb_kv_samples_add (sb_kv_samples_t *s, double seconds);
size_t sb_kv_samples_count (const sb_kv_samples_t *s);

/* np.mean(samples) in the order added; 0 when there are none (numpy would
 * give nan and warn). A sample added after a percentile is summed after
 * the others in sorted order: take the figures once, at the end. */
double sb_kv_samples_mean (sb_kv_samples_t *s);
/* np.percentile(samples, q), 0 <= q <= 100; sorts the samples in place
 * (once); 0 when there are none (numpy raises). */
double sb_kv_samples_percentile (sb_kv_samples_t *s, double q);

/* The same two over a plain array of n >= 1 values (percentile: sorted). */
double sb_kv_mean (const double *v, size_t n);
double sb_kv_percentile_sorted (const double *v, size_t n, double q);

/* Seconds to whole nanoseconds, rounded to nearest (negative: 0). */
uint64_t sb_kv_ns (double seconds);

/* The KV_RESULT latency vector in nanoseconds: out[0] the mean, out[1..5]
 * the percentiles sb_kv_lat_q. Returns the number of values written:
 * SB_KV_LAT_COUNT, or 0 when there are no samples (KV_RESULT sends []). */
size_t sb_kv_samples_lat_ns (sb_kv_samples_t *s, uint64_t out[SB_KV_LAT_COUNT]);

#endif
