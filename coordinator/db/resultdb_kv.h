/* resultdb_kv: the rows of a KV-cache run (`shardbench kvcache`):
 * kv_runs, kv_trials, kv_ranks and kv_latency (schemas/results.sql). Every
 * row goes through the result database's writer (sb_resultdb_exec); the
 * trial's and the run's figures are computed by SQL from the rank rows
 * already queued, so they are the ranks' exactly. */
#ifndef SB_RESULTDB_KV_H
#define SB_RESULTDB_KV_H

#include <stdint.h>

#include "proto.h"
#include "resultdb.h"

/* The run's settings row (at the run's start; the figures come with
 * sb_resultdb_kv_close_run). */
typedef struct {
    uint64_t    option;
    const char *model;
    uint64_t    users;
    double      duration_s;
    uint64_t    trials;
    double      cpu_mem_gb;
    uint64_t    max_concurrent_allocs;
    uint64_t    seed;
    const char *generation_mode;
    uint64_t    bytes_per_position;
    const char *storage_check;      /* 'ok', 'unverifiable', 'refused' */
} sb_kv_run_row_t;

int sb_resultdb_kv_begin_run (sb_resultdb_t *db, int64_t run_id, const sb_kv_run_row_t *row);

/* One rank's figures of a trial: the KV_RESULT, the KV_READY's user counts
 * and storage check line, and the rank's host. The latency vectors go to
 * kv_latency (those the rank had samples of). */
int sb_resultdb_kv_add_rank (sb_resultdb_t *db, int64_t run_id, const char *host, const sb_msg_kv_result_t *r,
                             const uint64_t users_by_type[3], const uint64_t users_by_qos[3], const char *check);

/* The trial's row from its rank rows: started_at is when GO went out,
 * finished_at the last rank's end (the coordinator's clock). */
int sb_resultdb_kv_close_trial (sb_resultdb_t *db, int64_t run_id, uint64_t trial, double started_at,
                                double finished_at);

/* The run's figures over its finished trials, and its storage check. */
int sb_resultdb_kv_close_run (sb_resultdb_t *db, int64_t run_id, const char *storage_check);

#endif
