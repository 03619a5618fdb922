/* kv_report: KV_RESULT and the reference's results JSON. */
#include "kv_report.h"
#include "kv_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_GIB 1073741824.0

static const double s_q[5] = { 50, 95, 99, 99.9, 99.99 };
static const char *const s_qname[5] = { "p50", "p95", "p99", "p999", "p9999" };

/* {mean, p50, ... p9999} in ms of samples in seconds (the mean first: numpy's
 * sum runs in the order the samples came, before any sort). */
static void
s_latency_block (sb_kv_json_t *j, const char *key, sb_kv_samples_t *s)
{
    sb_kv_json_open (j, key, '{');
    sb_kv_json_float (j, "mean", sb_kv_samples_mean (s) * 1000);
    for (int i = 0; i < 5; i++)
        sb_kv_json_float (j, s_qname[i], sb_kv_samples_percentile (s, s_q[i]) * 1000);
    sb_kv_json_close (j, '}');
}

/* {prefix}_p50_ms ... {prefix}_p9999_ms when there are samples (get_stats). */
static void
s_pcts (sb_kv_json_t *j, const char *prefix, sb_kv_samples_t *s)
{
    if (!sb_kv_samples_count (s))
        return;
    for (int i = 0; i < 5; i++) {
        char k[64];
        snprintf (k, sizeof k, "%s_%s_ms", prefix, s_qname[i]);
        sb_kv_json_float (j, k, sb_kv_samples_percentile (s, s_q[i]) * 1000);
    }
}

/* x / duration, or the int 0 when the duration is not positive. */
static void
s_rate (sb_kv_json_t *j, const char *key, double x, double duration)
{
    if (duration > 0)
        sb_kv_json_float (j, key, x / duration);
    else
        sb_kv_json_int (j, key, 0);
}

typedef struct {
    const char *name, *unit;
    double      target, actual;
    int         int_target, passed;
} s_criterion_t;

/* _evaluate_storage_performance, the default 'latency' profile. */
static void
s_health (sb_kv_json_t *j, sb_kv_tier_stats_t *st)
{
    s_criterion_t cr[4];
    int n = 0, passed = 0;
    if (sb_kv_samples_count (&st->storage_write_device)) {
        double p95 = sb_kv_samples_percentile (&st->storage_write_device, 95) * 1000;
        cr[n++] = (s_criterion_t) { "Storage Tier Write Device P95 < 500ms", "ms", 500, p95, 1, p95 < 500 };
    }
    if (sb_kv_samples_count (&st->storage_read_device)) {
        double p95 = sb_kv_samples_percentile (&st->storage_read_device, 95) * 1000;
        cr[n++] = (s_criterion_t) { "Storage Tier Read Device P95 < 200ms", "ms", 200, p95, 1, p95 < 200 };
    }
    if (sb_kv_samples_count (&st->cpu_read_lat) || sb_kv_samples_count (&st->cpu_write_lat)) {
        sb_kv_samples_t both;
        sb_kv_samples_init (&both);
        for (size_t i = 0; i < st->cpu_read_lat.n; i++)
            sb_kv_samples_add (&both, st->cpu_read_lat.v[i]);
        for (size_t i = 0; i < st->cpu_write_lat.n; i++)
            sb_kv_samples_add (&both, st->cpu_write_lat.v[i]);
        double p95 = sb_kv_samples_percentile (&both, 95) * 1000;
        sb_kv_samples_free (&both);
        cr[n++] = (s_criterion_t) { "CPU RAM P95 < 150ms", "ms", 150, p95, 1, p95 < 150 };
    }
    uint64_t accesses = st->cache_hits + st->cache_misses;
    if (accesses > 0) {
        double rate = (double) st->cache_hits / (double) accesses;
        cr[n++] = (s_criterion_t) { "Cache Hit Rate > 30%", "ratio", 0.3, rate, 0, rate > 0.3 };
    }
    for (int i = 0; i < n; i++)
        passed += cr[i].passed;
    sb_kv_json_open (j, "storage_health", '{');
    sb_kv_json_str (j, "overall_status", passed == n ? "PASS" : "FAIL");
    sb_kv_json_open (j, "criteria", '[');
    for (int i = 0; i < n; i++) {
        sb_kv_json_open (j, NULL, '{');
        sb_kv_json_str (j, "name", cr[i].name);
        if (cr[i].int_target)
            sb_kv_json_int (j, "target", (int64_t) cr[i].target);
        else
            sb_kv_json_float (j, "target", cr[i].target);
        sb_kv_json_float (j, "actual", cr[i].actual);
        sb_kv_json_str (j, "unit", cr[i].unit);
        sb_kv_json_bool (j, "passed", cr[i].passed);
        sb_kv_json_close (j, '}');
    }
    sb_kv_json_close (j, ']');
    sb_kv_json_int (j, "passed_count", passed);
    sb_kv_json_int (j, "total_count", n);
    sb_kv_json_close (j, '}');
}

static void
s_cache_stats (sb_kv_json_t *j, const sb_kv_report_t *rep)
{
    sb_kv_tiers_t *c = rep->tiers;
    sb_kv_tier_stats_t *st = &c->st;
    double d = rep->elapsed;
    uint64_t cpu_entries, storage_entries;
    sb_kv_tiers_entries (c, &cpu_entries, &storage_entries);
    sb_kv_json_open (j, "cache_stats", '{');
    uint64_t accesses = st->cache_hits + st->cache_misses;
    if (accesses > 0)
        sb_kv_json_float (j, "cache_hit_rate", (double) st->cache_hits / (double) accesses);
    else
        sb_kv_json_int (j, "cache_hit_rate", 0);
    sb_kv_json_int (j, "cache_hits", (int64_t) st->cache_hits);
    sb_kv_json_int (j, "cache_misses", (int64_t) st->cache_misses);
    sb_kv_json_int (j, "gpu_entries", 0);
    sb_kv_json_int (j, "cpu_entries", (int64_t) cpu_entries);
    sb_kv_json_int (j, "storage_entries", (int64_t) storage_entries);
    sb_kv_json_float (j, "gpu_memory_used_gb", 0.0);
    sb_kv_json_float (j, "cpu_memory_used_gb", c->cpu_used / S_GIB);
    sb_kv_json_int (j, "offloads_cpu", (int64_t) st->offloads_cpu);
    sb_kv_json_int (j, "offloads_storage", (int64_t) st->offloads_storage);
    s_health (j, st);
    sb_kv_json_int (j, "prefill_writes", (int64_t) st->prefill_writes);
    sb_kv_json_int (j, "decode_reads", (int64_t) st->decode_reads);
    sb_kv_json_float (j, "tier_gpu_kv_bytes_written_gb", 0.0);
    sb_kv_json_float (j, "tier_cpu_kv_bytes_written_gb", (double) st->cpu_written / S_GIB);
    sb_kv_json_float (j, "tier_storage_kv_bytes_written_gb", (double) st->storage_written / S_GIB);
    sb_kv_json_float (j, "tier_gpu_kv_bytes_read_gb", 0.0);
    sb_kv_json_float (j, "tier_cpu_kv_bytes_read_gb", (double) st->cpu_read / S_GIB);
    sb_kv_json_float (j, "tier_storage_kv_bytes_read_gb", (double) st->storage_read / S_GIB);
    s_rate (j, "tier_gpu_read_bandwidth_gbps", 0.0, d);
    s_rate (j, "tier_gpu_write_bandwidth_gbps", 0.0, d);
    s_rate (j, "tier_cpu_read_bandwidth_gbps", (double) st->cpu_read / S_GIB, d);
    s_rate (j, "tier_cpu_write_bandwidth_gbps", (double) st->cpu_written / S_GIB, d);
    s_rate (j, "tier_storage_read_bandwidth_gbps", (double) st->storage_read / S_GIB, d);
    s_rate (j, "tier_storage_write_bandwidth_gbps", (double) st->storage_written / S_GIB, d);
    sb_kv_json_int (j, "system_prompt_hits", (int64_t) st->system_prompt_hits);
    sb_kv_json_int (j, "common_phrase_hits", (int64_t) st->common_phrase_hits);
    sb_kv_json_int (j, "user_cache_hits", (int64_t) st->user_cache_hits);
    sb_kv_json_int (j, "multi_turn_hits", (int64_t) st->multi_turn_hits);
    sb_kv_json_int (j, "total_read_bytes", (int64_t) st->total_read_bytes);
    sb_kv_json_int (j, "total_write_bytes", (int64_t) st->total_write_bytes);
    sb_kv_json_float (j, "total_read_gb", (double) st->total_read_bytes / S_GIB);
    sb_kv_json_float (j, "total_write_gb", (double) st->total_write_bytes / S_GIB);
    sb_kv_json_float (j, "read_write_ratio", (double) st->total_read_bytes
                                             / (double) (st->total_write_bytes > 1 ? st->total_write_bytes : 1));
    sb_kv_json_int (j, "read_iops", (int64_t) st->read_operations);
    sb_kv_json_int (j, "write_iops", (int64_t) st->write_operations);
    /* an int while only writes added whole token counts; a read adds size / bytes per token, a float */
    if (sb_kv_samples_count (&st->storage_read_lat))
        sb_kv_json_float (j, "storage_tokens_processed", st->storage_tokens_processed);
    else
        sb_kv_json_int (j, "storage_tokens_processed", (int64_t) st->storage_tokens_processed);
    s_pcts (j, "cpu_read", &st->cpu_read_lat);
    s_pcts (j, "cpu_write", &st->cpu_write_lat);
    s_pcts (j, "storage_read", &st->storage_read_lat);
    s_pcts (j, "storage_write", &st->storage_write_lat);
    s_pcts (j, "storage_read_device", &st->storage_read_device);
    s_pcts (j, "storage_read_host", &st->storage_read_host);
    s_pcts (j, "storage_write_device", &st->storage_write_device);
    s_pcts (j, "storage_write_host", &st->storage_write_host);
    sb_kv_json_close (j, '}');
}

static void
s_qos (sb_kv_json_t *j, const sb_kv_report_t *rep)
{
    sb_kv_json_open (j, "qos_metrics", '{');
    for (int q = 0; q < SB_KV_QOS; q++) {
        sb_kv_samples_t *s = rep->qos_ms[q];
        sb_kv_json_open (j, sb_kv_qos_names[q], '{');
        size_t n = sb_kv_samples_count (s);
        if (!n) {
            sb_kv_json_bool (j, "no_data", 1);
            sb_kv_json_close (j, '}');
            continue;
        }
        sb_kv_json_int (j, "total_requests", (int64_t) n);
        sb_kv_json_open (j, "latency_ms", '{');
        sb_kv_json_float (j, "mean", sb_kv_samples_mean (s));
        sb_kv_json_float (j, "p50", sb_kv_samples_percentile (s, 50));
        sb_kv_json_float (j, "p95", sb_kv_samples_percentile (s, 95));
        sb_kv_json_float (j, "p99", sb_kv_samples_percentile (s, 99));
        sb_kv_json_float (j, "max", sb_kv_samples_percentile (s, 100));
        sb_kv_json_close (j, '}');
        double compliance = 1.0 - (double) rep->qos_viol[q] / (double) n;
        sb_kv_json_open (j, "sla", '{');
        sb_kv_json_int (j, "target_p95_ms", rep->qos_p95_ms[q]);
        sb_kv_json_float (j, "actual_p95_ms", sb_kv_samples_percentile (s, 95));
        sb_kv_json_float (j, "compliance", compliance);
        sb_kv_json_bool (j, "met", compliance >= 0.95);
        sb_kv_json_close (j, '}');
        sb_kv_json_close (j, '}');
    }
    sb_kv_json_close (j, '}');
}

char *
sb_kv_report_json (const sb_kv_report_t *rep)
{
    sb_kv_json_t j = { 0 };
    double d = rep->elapsed;
    sb_kv_json_open (&j, NULL, '{');
    sb_kv_json_int (&j, "requests_completed", (int64_t) rep->requests);
    sb_kv_json_int (&j, "total_tokens_generated", (int64_t) rep->tokens);
    sb_kv_json_float (&j, "total_storage_io_latency", rep->total_storage);
    sb_kv_json_float (&j, "total_generation_latency", rep->total_gen);
    sb_kv_json_open (&j, "throughput_timeline", '[');   /* filled only by the autoscaler's monitor */
    sb_kv_json_close (&j, ']');
    sb_kv_json_int (&j, "multi_turn_cache_hits", (int64_t) rep->mt_hits);
    sb_kv_json_int (&j, "multi_turn_cache_misses", (int64_t) rep->mt_misses);
    sb_kv_json_int (&j, "seed", (int64_t) rep->seed);
    if (rep->requests > 0) {
        sb_kv_json_open (&j, "summary", '{');
        sb_kv_json_int (&j, "total_requests", (int64_t) rep->requests);
        sb_kv_json_int (&j, "total_tokens", (int64_t) rep->tokens);
        sb_kv_json_float (&j, "elapsed_time", d);
        sb_kv_json_float (&j, "avg_throughput_tokens_per_sec", (double) rep->tokens / d);
        sb_kv_json_float (&j, "total_storage_io_time", rep->total_storage);
        if (rep->total_storage > 0)
            sb_kv_json_float (&j, "storage_throughput_tokens_per_sec", (double) rep->tokens / rep->total_storage);
        else
            sb_kv_json_int (&j, "storage_throughput_tokens_per_sec", 0);
        sb_kv_json_float (&j, "requests_per_second", (double) rep->requests / d);
        s_latency_block (&j, "end_to_end_latency_ms", rep->e2e);
        s_latency_block (&j, "storage_io_latency_ms", rep->storage);
        s_latency_block (&j, "generation_latency_ms", rep->gen);
        s_cache_stats (&j, rep);
        s_qos (&j, rep);
        sb_kv_json_open (&j, "prefix_cache_stats", '{');
        if (rep->prefix_caching) {
            sb_kv_json_int (&j, "prefix_hits", (int64_t) rep->prefix_hits);
            sb_kv_json_int (&j, "prefix_misses", (int64_t) rep->prefix_misses);
            sb_kv_json_int (&j, "system_prompt_reuse", (int64_t) rep->system_prompt_reuse);
            sb_kv_json_int (&j, "common_phrase_reuse", 0);
            sb_kv_json_int (&j, "bytes_saved", (int64_t) rep->bytes_saved);
        }
        sb_kv_json_close (&j, '}');
        sb_kv_json_open (&j, "autoscaling_stats", '[');
        sb_kv_json_close (&j, ']');
        sb_kv_json_null (&j, "autoscaling_summary");
        sb_kv_json_open (&j, "multi_turn_stats", '{');
        sb_kv_json_int (&j, "cache_hits", (int64_t) rep->mt_hits);
        sb_kv_json_int (&j, "cache_misses", (int64_t) rep->mt_misses);
        uint64_t all = rep->mt_hits + rep->mt_misses;
        sb_kv_json_float (&j, "hit_rate", (double) rep->mt_hits / (double) (all > 1 ? all : 1));
        sb_kv_json_close (&j, '}');
        sb_kv_json_close (&j, '}');
    }
    sb_kv_json_close (&j, '}');
    if (j.failed) {
        free (j.buf);
        return NULL;
    }
    return j.buf;
}

int
sb_kv_report_send (const sb_kv_report_t *rep, const sb_sender_t *out)
{
    /* the JSON first: its means run over the samples in the order they came (numpy's) */
    char *json = sb_kv_report_json (rep);
    if (!json)
        return -1;
    sb_kv_tier_stats_t *st = &rep->tiers->st;
    uint64_t cpu_entries, storage_entries;
    sb_kv_tiers_entries (rep->tiers, &cpu_entries, &storage_entries);
    uint64_t ops[SB_KV_OP_COUNT] = { 0 };
    ops[SB_KV_OP_WRITE_OPERATIONS] = st->write_operations;
    ops[SB_KV_OP_READ_OPERATIONS] = st->read_operations;
    ops[SB_KV_OP_PREFILL_WRITES] = st->prefill_writes;
    ops[SB_KV_OP_DECODE_READS] = st->decode_reads;
    ops[SB_KV_OP_CACHE_HITS] = st->cache_hits;
    ops[SB_KV_OP_CACHE_MISSES] = st->cache_misses;
    ops[SB_KV_OP_MULTI_TURN_HITS] = rep->mt_hits;
    ops[SB_KV_OP_MULTI_TURN_MISSES] = rep->mt_misses;
    ops[SB_KV_OP_STORAGE_ENTRIES] = storage_entries;
    ops[SB_KV_OP_CPU_ENTRIES] = cpu_entries;
    ops[SB_KV_OP_EVICTIONS] = st->evictions;
    ops[SB_KV_OP_OFFLOADS_CPU] = st->offloads_cpu;
    ops[SB_KV_OP_OFFLOADS_STORAGE] = st->offloads_storage;
    ops[SB_KV_OP_SYSTEM_PROMPT_HITS] = st->system_prompt_hits;
    ops[SB_KV_OP_QUEUE_MAX] = rep->queue_max;
    uint64_t tier_bytes[4] = { st->storage_written, st->storage_read, st->cpu_written, st->cpu_read };
    uint64_t wd[SB_KV_LAT_COUNT], wh[SB_KV_LAT_COUNT], rd[SB_KV_LAT_COUNT], rh[SB_KV_LAT_COUNT];
    uint64_t wt[SB_KV_LAT_COUNT], rt[SB_KV_LAT_COUNT], ct[SB_KV_LAT_COUNT], rs[SB_KV_LAT_COUNT], re[SB_KV_LAT_COUNT];
    sb_kv_samples_t cpu;
    sb_kv_samples_init (&cpu);
    for (size_t i = 0; i < st->cpu_read_lat.n; i++)
        sb_kv_samples_add (&cpu, st->cpu_read_lat.v[i]);
    for (size_t i = 0; i < st->cpu_write_lat.n; i++)
        sb_kv_samples_add (&cpu, st->cpu_write_lat.v[i]);
    sb_msg_t m = { .type = SB_MSG_KV_RESULT };
    sb_msg_kv_result_t *k = &m.u.kv_result;
    k->rank = rep->rank;
    k->trial = rep->trial;
    k->elapsed_s = rep->elapsed;
    k->requests = rep->requests;
    k->generated = rep->tokens;
    uint64_t by_type[SB_KV_TYPES], by_qos[SB_KV_QOS];
    memcpy (by_type, rep->by_type, sizeof by_type);
    memcpy (by_qos, rep->by_qos, sizeof by_qos);
    k->requests_by_type = (sb_u64s_t) { SB_KV_TYPES, by_type };
    k->requests_by_qos = (sb_u64s_t) { SB_KV_QOS, by_qos };
    k->ops = (sb_u64s_t) { SB_KV_OP_COUNT, ops };
    k->tier_bytes = (sb_u64s_t) { 4, tier_bytes };
    k->write_device = (sb_u64s_t) { sb_kv_samples_lat_ns (&st->storage_write_device, wd), wd };
    k->write_host = (sb_u64s_t) { sb_kv_samples_lat_ns (&st->storage_write_host, wh), wh };
    k->read_device = (sb_u64s_t) { sb_kv_samples_lat_ns (&st->storage_read_device, rd), rd };
    k->read_host = (sb_u64s_t) { sb_kv_samples_lat_ns (&st->storage_read_host, rh), rh };
    k->write_total = (sb_u64s_t) { sb_kv_samples_lat_ns (&st->storage_write_lat, wt), wt };
    k->read_total = (sb_u64s_t) { sb_kv_samples_lat_ns (&st->storage_read_lat, rt), rt };
    k->cpu_total = (sb_u64s_t) { sb_kv_samples_lat_ns (&cpu, ct), ct };
    k->request_storage = (sb_u64s_t) { sb_kv_samples_lat_ns (rep->storage, rs), rs };
    k->request_e2e = (sb_u64s_t) { sb_kv_samples_lat_ns (rep->e2e, re), re };
    k->results_json = json;
    int rc = out->fn (out->ctx, &m);
    (void) rc;      /* a failed send is the agent's to notice (its link is gone) */
    sb_kv_samples_free (&cpu);
    free (json);
    return 0;
}
