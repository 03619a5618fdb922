/* resultdb_kv: kv_runs, kv_trials, kv_ranks and kv_latency rows. */
#include "resultdb_kv.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* KV_RESULT latency vectors: [mean, p50, p95, p99, p99.9, p99.99] in ns */
#define S_LAT_VALUES 6

int
sb_resultdb_kv_begin_run (sb_resultdb_t *db, int64_t run_id, const sb_kv_run_row_t *row)
{
    return sb_resultdb_exec (db,
                             "INSERT INTO kv_runs (run_id, option, model, users, duration_s, trials, cpu_mem_gb,"
                             " max_concurrent_allocs, seed, generation_mode, kv_bytes_per_position, storage_check)"
                             " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                             "iitididiitit", run_id, (int64_t) row->option, row->model, (int64_t) row->users,
                             row->duration_s, (int64_t) row->trials, row->cpu_mem_gb,
                             (int64_t) row->max_concurrent_allocs, (int64_t) row->seed, row->generation_mode,
                             (int64_t) row->bytes_per_position, row->storage_check);
}

static int
s_add_latency (sb_resultdb_t *db, int64_t run_id, const sb_msg_kv_result_t *r, const char *what, const sb_u64s_t *v)
{
    if (v->count != S_LAT_VALUES)   /* no sample: no row */
        return 0;
    double ms[S_LAT_VALUES];
    for (size_t i = 0; i < S_LAT_VALUES; i++)
        ms[i] = (double) v->items[i] / 1e6;
    return sb_resultdb_exec (db,
                             "INSERT INTO kv_latency (run_id, trial, rank, what, mean_ms, p50_ms, p95_ms, p99_ms,"
                             " p999_ms, p9999_ms) VALUES (?,?,?,?,?,?,?,?,?,?)",
                             "iiitdddddd", run_id, (int64_t) r->trial, (int64_t) r->rank, what, ms[0], ms[1], ms[2],
                             ms[3], ms[4], ms[5]);
}

int
sb_resultdb_kv_add_rank (sb_resultdb_t *db, int64_t run_id, const char *host, const sb_msg_kv_result_t *r,
                         const uint64_t users_by_type[3], const uint64_t users_by_qos[3], const char *check)
{
    const uint64_t *op = r->ops.items, *tb = r->tier_bytes.items;
    /* the reference's tier_storage_{read,write}_bandwidth_gbps: GiB over the rank's own window */
    double gib = 1073741824.0, rd = r->elapsed_s > 0 ? (double) tb[1] / gib / r->elapsed_s : 0,
           wr = r->elapsed_s > 0 ? (double) tb[0] / gib / r->elapsed_s : 0;
    if (sb_resultdb_exec (db,
                          "INSERT INTO kv_ranks (run_id, trial, rank, host, elapsed_s, requests, generated, chatbot,"
                          " coding, document, interactive, responsive, batch, users_chatbot, users_coding,"
                          " users_document, users_interactive, users_responsive, users_batch, write_ops, read_ops,"
                          " prefill_writes, decode_reads, cache_hits, cache_misses, multi_turn_hits,"
                          " multi_turn_misses, storage_entries, cpu_entries, evictions, offloads_cpu,"
                          " offloads_storage, system_prompt_hits, queue_max, storage_write_bytes,"
                          " storage_read_bytes, cpu_write_bytes, cpu_read_bytes, read_gib_per_s, write_gib_per_s,"
                          " storage_check, results_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                          "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                          "iiitdiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiddtt", run_id, (int64_t) r->trial, (int64_t) r->rank,
                          host, r->elapsed_s, (int64_t) r->requests, (int64_t) r->generated,
                          (int64_t) r->requests_by_type.items[0], (int64_t) r->requests_by_type.items[1],
                          (int64_t) r->requests_by_type.items[2], (int64_t) r->requests_by_qos.items[0],
                          (int64_t) r->requests_by_qos.items[1], (int64_t) r->requests_by_qos.items[2],
                          (int64_t) users_by_type[0], (int64_t) users_by_type[1], (int64_t) users_by_type[2],
                          (int64_t) users_by_qos[0], (int64_t) users_by_qos[1], (int64_t) users_by_qos[2],
                          (int64_t) op[0], (int64_t) op[1], (int64_t) op[2], (int64_t) op[3], (int64_t) op[4],
                          (int64_t) op[5], (int64_t) op[6], (int64_t) op[7], (int64_t) op[8], (int64_t) op[9],
                          (int64_t) op[10], (int64_t) op[11], (int64_t) op[12], (int64_t) op[13], (int64_t) op[14],
                          (int64_t) tb[0], (int64_t) tb[1], (int64_t) tb[2], (int64_t) tb[3], rd, wr,
                          check && *check ? check : NULL, r->results_json) != 0)
        return -1;
    static const struct { const char *what; size_t off; } lat[] = {
        { "write_device", offsetof (sb_msg_kv_result_t, write_device) },
        { "write_host", offsetof (sb_msg_kv_result_t, write_host) },
        { "read_device", offsetof (sb_msg_kv_result_t, read_device) },
        { "read_host", offsetof (sb_msg_kv_result_t, read_host) },
        { "write_total", offsetof (sb_msg_kv_result_t, write_total) },
        { "read_total", offsetof (sb_msg_kv_result_t, read_total) },
        { "cpu_total", offsetof (sb_msg_kv_result_t, cpu_total) },
        { "request_storage", offsetof (sb_msg_kv_result_t, request_storage) },
        { "request_e2e", offsetof (sb_msg_kv_result_t, request_e2e) },
    };
    for (size_t i = 0; i < sizeof lat / sizeof lat[0]; i++)
        if (s_add_latency (db, run_id, r, lat[i].what, (const sb_u64s_t *) ((const char *) r + lat[i].off)) != 0)
            return -1;
    return 0;
}

int
sb_resultdb_kv_rank_window (sb_resultdb_t *db, int64_t run_id, uint64_t trial, uint64_t rank, double started_at,
                            double finished_at)
{
    return sb_resultdb_exec (db, "UPDATE kv_ranks SET started_at = ?4, finished_at = ?5 WHERE run_id = ?1 AND trial = ?2"
                             " AND rank = ?3", "iiidd", run_id, (int64_t) trial, (int64_t) rank, started_at, finished_at);
}

int
sb_resultdb_kv_close_trial (sb_resultdb_t *db, int64_t run_id, uint64_t trial, double started_at, double finished_at)
{
    /* mlpstorage's aggregation of a trial: the ranks' read bandwidths summed,
     * the largest of their storage_io_latency p95 */
    return sb_resultdb_exec (db,
                             "INSERT INTO kv_trials (run_id, trial, started_at, finished_at, ranks, requests, generated,"
                             " storage_read_bytes, storage_write_bytes, read_gib_per_s, write_gib_per_s, storage_p95_ms)"
                             " SELECT ?1, ?2, ?3, ?4, count(*), sum(requests), sum(generated), sum(storage_read_bytes),"
                             " sum(storage_write_bytes), sum(read_gib_per_s), sum(write_gib_per_s),"
                             " (SELECT max(l.p95_ms) FROM kv_latency l WHERE l.run_id = ?1 AND l.trial = ?2"
                             " AND l.what = 'request_storage')"
                             " FROM kv_ranks WHERE run_id = ?1 AND trial = ?2",
                             "iidd", run_id, (int64_t) trial, started_at, finished_at);
}

int
sb_resultdb_kv_close_run (sb_resultdb_t *db, int64_t run_id, const char *storage_check)
{
    return sb_resultdb_exec (db,
                             "UPDATE kv_runs SET storage_check = ?2,"
                             " read_gib_per_s = (SELECT avg(read_gib_per_s) FROM kv_trials WHERE run_id = ?1),"
                             " write_gib_per_s = (SELECT avg(write_gib_per_s) FROM kv_trials WHERE run_id = ?1),"
                             " storage_p95_ms = (SELECT max(storage_p95_ms) FROM kv_trials WHERE run_id = ?1)"
                             " WHERE run_id = ?1",
                             "it", run_id, storage_check);
}
