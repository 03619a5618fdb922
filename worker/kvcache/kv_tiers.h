/* kv_tiers: the reference's MultiTierCache (kv_cache/cache.py) for one rank:
 * the entries' metadata (location, size, last access, access count), the
 * tiers' usage and limits, LRU eviction (_ensure_space_in_tier: the CPU tier
 * kept at 80% of its limit by demoting its least recently used entries to
 * storage, the storage tier, terminal, at its full limit by deleting files),
 * allocate_cache (a write unless the key is cached, under the
 * max_concurrent_allocs semaphore) and access_cache (a read of a cached entry,
 * a miss with no I/O otherwise), with the counters and latency samples of
 * get_stats. No entry's bytes are kept: sizes only (kv_entry_io.h).
 *
 * Threads: any number call allocate / access at once. As the reference, an
 * entry's reads, its demotion and its deletion exclude each other (a lock per
 * entry: here one of 1024 by the key's hash). Once sb_kv_tiers_close was
 * called the counters and samples stay as they were (the trial's window is
 * over) and an entry written after it is removed again, so that the files
 * in the folder stay the entries the figures count. */
#ifndef SB_KV_TIERS_H
#define SB_KV_TIERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kv_entry_io.h"
#include "kv_stats.h"

enum { SB_KV_LOC_NONE, SB_KV_LOC_CPU, SB_KV_LOC_STORAGE };
enum { SB_KV_PHASE_PREFILL, SB_KV_PHASE_DECODE, SB_KV_PHASE_BOTH };
enum { SB_KV_TYPE_USER, SB_KV_TYPE_SYSTEM, SB_KV_TYPE_COMMON, SB_KV_TYPE_MULTI_TURN };

#define SB_KV_KEY 96

typedef struct sb_kv_entry sb_kv_entry_t;

/* The counters of MultiTierCache.stats (the GPU tier's stay 0: no GPU tier here). */
typedef struct {
    uint64_t cache_hits, cache_misses, evictions, offloads_cpu, offloads_storage;
    uint64_t prefill_writes, decode_reads;
    uint64_t cpu_written, storage_written, cpu_read, storage_read;     /* tier_*_kv_bytes_* */
    uint64_t system_prompt_hits, common_phrase_hits, user_cache_hits, multi_turn_hits;
    uint64_t total_read_bytes, total_write_bytes, read_operations, write_operations;
    double   storage_tokens_processed;  /* a float in the reference (a read adds size / bytes per token) */
    sb_kv_samples_t cpu_read_lat, cpu_write_lat, storage_read_lat, storage_write_lat;
    sb_kv_samples_t storage_read_device, storage_read_host, storage_write_device, storage_write_host;
} sb_kv_tier_stats_t;

typedef struct {
    sb_kv_io_t       io;
    double           cpu_limit, storage_limit;  /* bytes; storage: the capacity (INFINITY: unknown) */
    double           cpu_used, storage_used;
    uint64_t         max_allocs;                /* the allocation semaphore's count, 0 none */
    /* metadata: a hash table of entries by key */
    sb_kv_entry_t  **table;
    size_t           buckets, count;
    pthread_mutex_t  meta_lock, mem_lock, stats_lock, sem_lock;
    pthread_cond_t   sem_cond;
    uint64_t         sem_taken;
    pthread_mutex_t  entry_locks[1024];
    sb_kv_tier_stats_t st;
    int              closed;                    /* under stats_lock */
    atomic_int       failed;                    /* an I/O failed: the first failure is kept below */
    int              err_no;
    char             err_op[32], err_target[4096], err[4096];
} sb_kv_tiers_t;

/* io is copied; limits in bytes. 0, or -1 when out of memory. */
int  sb_kv_tiers_init (sb_kv_tiers_t *c, const sb_kv_io_t *io, double cpu_limit, double storage_limit,
                       uint64_t max_allocs);
void sb_kv_tiers_free (sb_kv_tiers_t *c);

/* allocate_cache(key, tokens, PREFILL): 1 written (or already cached), 0 not
 * (the reference's failure: nothing written), -1 an I/O failure (kept in c,
 * failed set) or stopped; *latency the write's total seconds (0 when cached). */
int sb_kv_allocate (sb_kv_tiers_t *c, const char *key, uint64_t tokens, sb_kv_buf_t *chunk, double *latency);

/* access_cache(key, phase, cache_type): *loc the entry's tier (SB_KV_LOC_NONE:
 * a miss), *latency the read's total seconds. 0, or -1 an I/O failure / stop. */
int sb_kv_access (sb_kv_tiers_t *c, const char *key, int phase, int cache_type, sb_kv_buf_t *chunk, int *loc,
                  double *latency);

/* Keep the first failure (op, target, errno, message) and set failed; -1.
 * ECANCELED (a stop) is not kept. */
int sb_kv_tiers_fail (sb_kv_tiers_t *c, const char *op, const char *target, int err_no, const char *err);

/* The window is over: counters freeze (see above). */
void sb_kv_tiers_close (sb_kv_tiers_t *c);

/* Entries per tier now. */
void sb_kv_tiers_entries (sb_kv_tiers_t *c, uint64_t *cpu, uint64_t *storage);

/* Call fn for every entry (the table locked): key, location, tokens. */
void sb_kv_tiers_each (sb_kv_tiers_t *c, void (*fn) (void *ctx, const char *key, int loc, uint64_t tokens),
                       void *ctx);

#endif
