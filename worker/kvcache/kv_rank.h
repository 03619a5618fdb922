/* kv_rank: one rank's KV-cache emulator for one trial (`shardbench kvcache`),
 * on the rank actor's thread (worker/datagen/rank.c runs it for PHASE_START
 * "kvcache"): the reference's IntegratedBenchmark.run for one rank
 * (/kv_cache_benchmark/kv_cache/benchmark.py of mlcommons/storage), in C.
 *
 * Sequence: the kvcache.* settings from PHASE_START kv; the folder rank_<r>/
 * under WELCOME data_root (made; *.npy left there removed, as the reference's
 * NVMeBackend does); the user set (kv_users.h) from seed + rank; with
 * kvcache.verify_storage the folder's storage check (lib/kvcache/kv_probe.h:
 * refused: ERROR op "kvcache_check" and the rank ends); KV_READY; wait_go
 * (the trial's GO); the window of duration_s: the generator and min(users,
 * 500) service threads each doing process_requests' steps for one request
 * at a time (kv_rank.c), STATS every second; then the end as the reference's
 * (its stop event, then a join of 2 s): no request and no counter counts
 * after the window; a thread busy in an I/O finishes it (and leaves its
 * request uncounted) unless 2 s pass, after which it gives up between
 * chunks; KV_RESULT (with results_json: the reference's results file, less
 * its raw latency lists) and RANK_DONE. Any failure: ERROR (op, target,
 * errno, message) and nothing more; stop() saying 1: the rank ends within
 * about a second and sends nothing more. */
#ifndef SB_KV_RANK_H
#define SB_KV_RANK_H

#include <stdint.h>

#include "proto.h"
#include "rank_report.h"
#include "storage.h"

typedef struct {
    const sb_msg_welcome_t *cfg;        /* borrowed: data_root is kvcache.cache_dir */
    const sb_storage_cfg_t *storage;    /* borrowed */
    uint64_t                rank;
    const sb_sender_t      *out;        /* KV_READY, STATS, KV_RESULT, RANK_DONE, ERROR: from this thread only */
    sb_interval_t          *interval;   /* the rank's STATS counters */
    int                   (*stop) (void *arg);      /* 1: end now, send nothing more */
    void                   *stop_arg;
    int                   (*wait_go) (void *arg, uint64_t trial);  /* blocks until GO(trial): 0, or -1 stop */
    void                   *go_arg;
} sb_kv_rank_t;

void sb_kv_rank_run (const sb_kv_rank_t *self, const sb_msg_phase_start_t *ps);

#endif
