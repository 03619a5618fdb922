/* kv_report: a rank's KV_RESULT of a trial, with results_json: the
 * reference's results file (IntegratedBenchmark.results after
 * _calculate_stats, as kv-cache.py dumps it with json indent 4) less its raw
 * lists of latencies (end_to_end_latencies, storage_latencies,
 * generation_latencies, prefill_latencies, decode_latencies): the same keys,
 * nesting and order, each figure computed as the reference computes it
 * (numpy's mean and linear percentiles: lib/kvcache/kv_stats.h), e.g.
 * summary.cache_stats.tier_storage_read_bandwidth_gbps = the storage tier's
 * bytes read / 2^30 / the window's seconds. Without a completed request
 * there is no "summary", as the reference's _calculate_stats returns early. */
#ifndef SB_KV_REPORT_H
#define SB_KV_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "kv_stats.h"
#include "kv_tiers.h"
#include "kv_users.h"
#include "rank_report.h"

typedef struct {
    uint64_t         rank, trial, seed;
    double           elapsed;
    int              prefix_caching;
    sb_kv_tiers_t   *tiers;             /* its counters and samples (closed) */
    size_t           queue_max;
    uint64_t         requests, tokens, mt_hits, mt_misses;
    double           total_storage, total_gen;
    sb_kv_samples_t *e2e, *storage, *gen;           /* seconds, per request */
    uint64_t         by_type[SB_KV_TYPES], by_qos[SB_KV_QOS], qos_viol[SB_KV_QOS];
    sb_kv_samples_t *qos_ms[SB_KV_QOS];             /* per class, milliseconds */
    int              qos_p95_ms[SB_KV_QOS];
    uint64_t         prefix_hits, prefix_misses, system_prompt_reuse, bytes_saved;
} sb_kv_report_t;

/* The results JSON (malloc'ed), NULL when out of memory. */
char *sb_kv_report_json (const sb_kv_report_t *rep);

/* Send KV_RESULT through out. 0, or -1 when out of memory. */
int sb_kv_report_send (const sb_kv_report_t *rep, const sb_sender_t *out);

#endif
