/* kv_tiers: MultiTierCache's metadata, eviction, allocate and access.
 *
 * Lock order: an entry's lock, then stats_lock, then meta_lock, then
 * mem_lock (each may be taken alone). */
#include "kv_tiers.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct sb_kv_entry {
    sb_kv_entry_t *next;
    uint64_t       hash;
    char           key[SB_KV_KEY];
    int            loc;
    uint64_t       size, tokens;
    double         last_access;
    uint64_t       access_count;
};

/* The reference's eviction settings (config.yaml eviction:). */
#define S_MAX_RECURSION   10
#define S_TARGET_RATIO    0.8
#define S_LARGE_RATIO     0.95
#define S_EVICT_HARD_CAP  5000
#define S_EVICT_MIN       1000

static uint64_t
s_hash (const char *key)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *) key; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h;
}

static pthread_mutex_t *
s_entry_lock (sb_kv_tiers_t *c, const char *key)
{
    return &c->entry_locks[s_hash (key) % 1024];
}

int
sb_kv_tiers_init (sb_kv_tiers_t *c, const sb_kv_io_t *io, double cpu_limit, double storage_limit, uint64_t max_allocs)
{
    memset (c, 0, sizeof *c);
    c->io = *io;
    c->cpu_limit = cpu_limit;
    c->storage_limit = storage_limit;
    c->max_allocs = max_allocs;
    c->buckets = 1024;
    if (!(c->table = calloc (c->buckets, sizeof *c->table)))
        return -1;
    pthread_mutex_init (&c->meta_lock, NULL);
    pthread_mutex_init (&c->mem_lock, NULL);
    pthread_mutex_init (&c->stats_lock, NULL);
    pthread_mutex_init (&c->sem_lock, NULL);
    pthread_cond_init (&c->sem_cond, NULL);
    for (size_t i = 0; i < 1024; i++)
        pthread_mutex_init (&c->entry_locks[i], NULL);
    sb_kv_samples_t *all[] = { &c->st.cpu_read_lat, &c->st.cpu_write_lat, &c->st.storage_read_lat,
                               &c->st.storage_write_lat, &c->st.storage_read_device, &c->st.storage_read_host,
                               &c->st.storage_write_device, &c->st.storage_write_host };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sb_kv_samples_init (all[i]);
    atomic_init (&c->failed, 0);
    return 0;
}

void
sb_kv_tiers_free (sb_kv_tiers_t *c)
{
    for (size_t b = 0; c->table && b < c->buckets; b++)
        for (sb_kv_entry_t *e = c->table[b], *n; e; e = n) {
            n = e->next;
            free (e);
        }
    free (c->table);
    c->table = NULL;
    sb_kv_samples_t *all[] = { &c->st.cpu_read_lat, &c->st.cpu_write_lat, &c->st.storage_read_lat,
                               &c->st.storage_write_lat, &c->st.storage_read_device, &c->st.storage_read_host,
                               &c->st.storage_write_device, &c->st.storage_write_host };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sb_kv_samples_free (all[i]);
    pthread_mutex_destroy (&c->meta_lock);
    pthread_mutex_destroy (&c->mem_lock);
    pthread_mutex_destroy (&c->stats_lock);
    pthread_mutex_destroy (&c->sem_lock);
    pthread_cond_destroy (&c->sem_cond);
    for (size_t i = 0; i < 1024; i++)
        pthread_mutex_destroy (&c->entry_locks[i]);
}

/* ---- the table (meta_lock held) ---- */

static sb_kv_entry_t *
s_find (sb_kv_tiers_t *c, const char *key)
{
    uint64_t h = s_hash (key);
    for (sb_kv_entry_t *e = c->table[h % c->buckets]; e; e = e->next)
        if (e->hash == h && strcmp (e->key, key) == 0)
            return e;
    return NULL;
}

static void
s_grow (sb_kv_tiers_t *c)
{
    size_t nb = c->buckets * 2;
    sb_kv_entry_t **t = calloc (nb, sizeof *t);
    if (!t)
        return;     /* longer chains, still correct */
    for (size_t b = 0; b < c->buckets; b++)
        for (sb_kv_entry_t *e = c->table[b], *n; e; e = n) {
            n = e->next;
            e->next = t[e->hash % nb];
            t[e->hash % nb] = e;
        }
    free (c->table);
    c->table = t;
    c->buckets = nb;
}

static int
s_insert (sb_kv_tiers_t *c, const char *key, int loc, uint64_t size, uint64_t tokens)
{
    sb_kv_entry_t *e = s_find (c, key);
    if (!e) {
        if (!(e = calloc (1, sizeof *e)))
            return -1;
        e->hash = s_hash (key);
        snprintf (e->key, sizeof e->key, "%s", key);
        if (c->count + 1 > c->buckets)
            s_grow (c);
        e->next = c->table[e->hash % c->buckets];
        c->table[e->hash % c->buckets] = e;
        c->count++;
    }
    e->loc = loc;
    e->size = size;
    e->tokens = tokens;
    e->last_access = sb_kv_clock ();
    e->access_count = 1;
    return 0;
}

static void
s_remove (sb_kv_tiers_t *c, const char *key)
{
    uint64_t h = s_hash (key);
    for (sb_kv_entry_t **p = &c->table[h % c->buckets]; *p; p = &(*p)->next)
        if ((*p)->hash == h && strcmp ((*p)->key, key) == 0) {
            sb_kv_entry_t *e = *p;
            *p = e->next;
            free (e);
            c->count--;
            return;
        }
}

/* ---- failures ---- */

int
sb_kv_tiers_fail (sb_kv_tiers_t *c, const char *op, const char *target, int err_no, const char *err)
{
    if (err_no == ECANCELED)
        return -1;      /* the rank was told to stop: not a failure of storage */
    pthread_mutex_lock (&c->stats_lock);
    if (!atomic_load (&c->failed)) {
        snprintf (c->err_op, sizeof c->err_op, "%s", op);
        snprintf (c->err_target, sizeof c->err_target, "%s", target);
        snprintf (c->err, sizeof c->err, "%s", err);
        c->err_no = err_no;
        atomic_store (&c->failed, 1);
    }
    pthread_mutex_unlock (&c->stats_lock);
    return -1;
}

/* An entry's I/O failed: the rank fails, naming the operation and the
 * entry's file (or object; its key when the path does not fit). */
static int
s_io_fail (sb_kv_tiers_t *c, const char *op, const char *key, int err_no, const char *err)
{
    char target[4096];
    if (sb_kv_entry_path (&c->io, key, target, sizeof target) != 0)
        snprintf (target, sizeof target, "%s", key);
    return sb_kv_tiers_fail (c, op, target, err_no, err);
}

/* ---- usage (mem_lock) ---- */

static double *
s_used (sb_kv_tiers_t *c, int tier)
{
    return tier == SB_KV_LOC_CPU ? &c->cpu_used : &c->storage_used;
}

static void
s_use (sb_kv_tiers_t *c, int tier, double delta)
{
    pthread_mutex_lock (&c->mem_lock);
    double *u = s_used (c, tier);
    *u = fmax (0.0, *u + delta);
    pthread_mutex_unlock (&c->mem_lock);
}

/* ---- LRU ---- */

typedef struct {
    char     key[SB_KV_KEY];
    uint64_t size;
    double   last_access;
    uint64_t access_count;
} s_lru_t;

static int
s_lru_cmp (const void *a, const void *b)
{
    const s_lru_t *x = a, *y = b;
    if (x->last_access != y->last_access)
        return x->last_access < y->last_access ? -1 : 1;
    return x->access_count < y->access_count ? -1 : x->access_count > y->access_count;
}

/* The entries of tier by (last_access, access_count): _get_lru_entries_in_tier. */
static s_lru_t *
s_lru (sb_kv_tiers_t *c, int tier, size_t *n)
{
    pthread_mutex_lock (&c->meta_lock);
    size_t k = 0;
    for (size_t b = 0; b < c->buckets; b++)
        for (sb_kv_entry_t *e = c->table[b]; e; e = e->next)
            k += e->loc == tier;
    s_lru_t *v = malloc ((k ? k : 1) * sizeof *v);
    size_t i = 0;
    for (size_t b = 0; v && b < c->buckets; b++)
        for (sb_kv_entry_t *e = c->table[b]; e; e = e->next)
            if (e->loc == tier && i < k) {
                memcpy (v[i].key, e->key, sizeof v[i].key);
                v[i].size = e->size;
                v[i].last_access = e->last_access;
                v[i].access_count = e->access_count;
                i++;
            }
    pthread_mutex_unlock (&c->meta_lock);
    if (v)
        qsort (v, i, sizeof *v, s_lru_cmp);
    *n = v ? i : 0;
    return v;
}

static int
s_closed (sb_kv_tiers_t *c)
{
    return c->closed;   /* stats_lock held */
}

/* _demote_entry(key, cpu, storage): 1 moved (or no longer on the CPU tier), 0 gone, -1 failed. */
static int
s_demote (sb_kv_tiers_t *c, const char *key, sb_kv_buf_t *chunk)
{
    pthread_mutex_t *lk = s_entry_lock (c, key);
    pthread_mutex_lock (lk);
    pthread_mutex_lock (&c->meta_lock);
    sb_kv_entry_t *e = s_find (c, key);
    if (!e) {
        pthread_mutex_unlock (&c->meta_lock);
        pthread_mutex_unlock (lk);
        return 0;
    }
    if (e->loc != SB_KV_LOC_CPU) {
        pthread_mutex_unlock (&c->meta_lock);
        pthread_mutex_unlock (lk);
        return 1;
    }
    uint64_t size = e->size, tokens = e->tokens;
    pthread_mutex_unlock (&c->meta_lock);
    /* read from the CPU tier, write to storage (fsync), as the reference's demotion */
    sb_kv_timing_t rt, wt;
    sb_kv_cpu_copy (key, size, chunk, &rt);
    int err_no;
    char err[4096];
    if (sb_kv_entry_write (&c->io, key, tokens, chunk, &wt, &err_no, err, sizeof err) != 0) {
        pthread_mutex_unlock (lk);
        return s_io_fail (c, "write", key, err_no, err);
    }
    pthread_mutex_lock (&c->stats_lock);
    pthread_mutex_lock (&c->meta_lock);
    if ((e = s_find (c, key)))
        e->loc = SB_KV_LOC_STORAGE;
    pthread_mutex_unlock (&c->meta_lock);
    s_use (c, SB_KV_LOC_CPU, -(double) size);
    if (!s_closed (c)) {
        c->st.evictions++;
        c->st.offloads_storage++;
        if (c->io.bytes_per_token > 0)
            c->st.storage_tokens_processed += (double) (size / c->io.bytes_per_token);
    }
    pthread_mutex_unlock (&c->stats_lock);
    pthread_mutex_unlock (lk);
    return 1;
}

/* The terminal tier's eviction of key: its file deleted. 0, or -1 failed. */
static int
s_delete (sb_kv_tiers_t *c, const char *key, sb_kv_buf_t *chunk)
{
    pthread_mutex_t *lk = s_entry_lock (c, key);
    pthread_mutex_lock (lk);
    pthread_mutex_lock (&c->meta_lock);
    sb_kv_entry_t *e = s_find (c, key);
    if (!e || e->loc != SB_KV_LOC_STORAGE) {
        pthread_mutex_unlock (&c->meta_lock);
        pthread_mutex_unlock (lk);
        return 0;       /* another thread got it */
    }
    uint64_t size = e->size;
    s_remove (c, key);
    pthread_mutex_unlock (&c->meta_lock);
    int err_no;
    char err[4096];
    if (sb_kv_entry_delete (&c->io, key, chunk, &err_no, err, sizeof err) != 0) {
        pthread_mutex_unlock (lk);
        return s_io_fail (c, "remove", key, err_no, err);
    }
    s_use (c, SB_KV_LOC_STORAGE, -(double) size);
    pthread_mutex_unlock (lk);
    pthread_mutex_lock (&c->stats_lock);
    if (!s_closed (c))
        c->st.evictions++;
    pthread_mutex_unlock (&c->stats_lock);
    return 0;
}

/* _ensure_space_in_tier: 1 room made (and taken), 0 not, -1 failed. */
static int
s_ensure_space (sb_kv_tiers_t *c, int tier, uint64_t required, int depth, sb_kv_buf_t *chunk)
{
    double req = (double) required;
    if (tier == SB_KV_LOC_STORAGE && isinf (c->storage_limit)) {
        s_use (c, tier, req);
        return 1;
    }
    if (depth > S_MAX_RECURSION)
        return 0;
    int last = tier == SB_KV_LOC_STORAGE;
    double limit = tier == SB_KV_LOC_CPU ? c->cpu_limit : c->storage_limit;
    double target = limit * S_TARGET_RATIO;
    if (!last && req > limit * S_LARGE_RATIO)
        return 0;
    double effective = last ? limit : target;
    size_t n, idx = 0;
    s_lru_t *lru = s_lru (c, tier, &n);
    if (!lru)
        return sb_kv_tiers_fail (c, "evict", c->io.dir, ENOMEM, "out of memory for the LRU order of the entries");
    size_t max_ev = n + 100 > S_EVICT_MIN ? n + 100 : S_EVICT_MIN;
    if (max_ev > S_EVICT_HARD_CAP)
        max_ev = S_EVICT_HARD_CAP;
    int rc = -2;
    for (size_t count = 0; count < max_ev && rc == -2; ) {
        pthread_mutex_lock (&c->mem_lock);
        double *u = s_used (c, tier);
        if (*u + req <= effective || *u < limit * 0.05) {
            *u += req;
            pthread_mutex_unlock (&c->mem_lock);
            rc = 1;
            break;
        }
        pthread_mutex_unlock (&c->mem_lock);
        if (idx >= n) {
            free (lru);
            if (!(lru = s_lru (c, tier, &n)))
                return sb_kv_tiers_fail (c, "evict", c->io.dir, ENOMEM, "out of memory for the LRU order of the entries");
            idx = 0;
            if (n == 0) {
                /* the tier is empty: recount its usage, then decide */
                double actual = 0;
                pthread_mutex_lock (&c->meta_lock);
                for (size_t b = 0; b < c->buckets; b++)
                    for (sb_kv_entry_t *e = c->table[b]; e; e = e->next)
                        if (e->loc == tier)
                            actual += (double) e->size;
                pthread_mutex_unlock (&c->meta_lock);
                pthread_mutex_lock (&c->mem_lock);
                u = s_used (c, tier);
                *u = actual;
                if (*u + req <= effective || last) {
                    *u += req;
                    rc = 1;
                }
                else
                    rc = 0;
                pthread_mutex_unlock (&c->mem_lock);
                break;
            }
        }
        if (idx == 0 && !last) {
            double total = 0;
            for (size_t i = 0; i < n; i++)
                total += (double) lru[i].size;
            if (total < limit * 0.2 && req > target * 0.5) {
                rc = 0;
                break;
            }
        }
        s_lru_t *pick = &lru[idx++];
        if (last) {
            if (s_delete (c, pick->key, chunk) != 0) {
                rc = -1;
                break;
            }
        }
        else {
            int r = s_ensure_space (c, SB_KV_LOC_STORAGE, pick->size, depth + 1, chunk);
            if (r <= 0) {
                rc = r;
                break;
            }
            r = s_demote (c, pick->key, chunk);
            if (r < 0) {
                rc = -1;
                break;
            }
        }
        count++;
    }
    free (lru);
    if (rc == -2) {     /* the eviction budget is spent: the last tier takes the entry anyway */
        if (last) {
            s_use (c, tier, req);
            return 1;
        }
        return 0;
    }
    return rc;
}

/* ---- the allocation semaphore ---- */

static int
s_sem_take (sb_kv_tiers_t *c)
{
    if (!c->max_allocs)
        return 0;
    pthread_mutex_lock (&c->sem_lock);
    while (c->sem_taken >= c->max_allocs) {
        if (c->io.abort && atomic_load (c->io.abort)) {
            pthread_mutex_unlock (&c->sem_lock);
            return -1;
        }
        struct timespec ts;
        clock_gettime (CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait (&c->sem_cond, &c->sem_lock, &ts);
    }
    c->sem_taken++;
    pthread_mutex_unlock (&c->sem_lock);
    return 0;
}

static void
s_sem_give (sb_kv_tiers_t *c)
{
    if (!c->max_allocs)
        return;
    pthread_mutex_lock (&c->sem_lock);
    c->sem_taken--;
    pthread_cond_signal (&c->sem_cond);
    pthread_mutex_unlock (&c->sem_lock);
}

/* ---- allocate / access ---- */

static int
s_allocate_inner (sb_kv_tiers_t *c, const char *key, uint64_t tokens, sb_kv_buf_t *chunk, double *latency)
{
    uint64_t size = tokens * c->io.bytes_per_token;
    pthread_mutex_lock (&c->stats_lock);
    if (!s_closed (c)) {
        c->st.prefill_writes++;     /* every allocation here is the PREFILL phase's */
        c->st.write_operations++;
        c->st.total_write_bytes += size;
    }
    pthread_mutex_unlock (&c->stats_lock);
    int tier = SB_KV_LOC_NONE;
    int tiers[] = { SB_KV_LOC_CPU, SB_KV_LOC_STORAGE };
    for (size_t i = 0; i < 2; i++) {
        int r = s_ensure_space (c, tiers[i], size, 0, chunk);
        if (r < 0)
            return -1;
        if (r == 1) {
            tier = tiers[i];
            break;
        }
    }
    if (tier == SB_KV_LOC_NONE) {   /* all tiers full: the reference forces the write to storage */
        tier = SB_KV_LOC_STORAGE;
        s_use (c, tier, (double) size);
    }
    sb_kv_timing_t t;
    if (tier == SB_KV_LOC_CPU)
        sb_kv_cpu_copy (key, size, chunk, &t);
    else {
        int err_no;
        char err[4096];
        if (sb_kv_entry_write (&c->io, key, tokens, chunk, &t, &err_no, err, sizeof err) != 0) {
            s_use (c, tier, -(double) size);
            return s_io_fail (c, "write", key, err_no, err);
        }
    }
    pthread_mutex_lock (&c->stats_lock);
    if (s_closed (c)) {
        /* written after the window: not the trial's; the folder keeps only the entries counted */
        pthread_mutex_unlock (&c->stats_lock);
        s_use (c, tier, -(double) size);
        if (tier == SB_KV_LOC_STORAGE) {
            int err_no;
            char err[4096];
            (void) sb_kv_entry_delete (&c->io, key, chunk, &err_no, err, sizeof err);
        }
        *latency = t.total;
        return 1;
    }
    pthread_mutex_lock (&c->meta_lock);
    int ins = s_insert (c, key, tier, size, tokens);
    pthread_mutex_unlock (&c->meta_lock);
    if (ins != 0) {
        pthread_mutex_unlock (&c->stats_lock);
        return sb_kv_tiers_fail (c, "write", key, ENOMEM, "out of memory for the cache's entries");
    }
    if (tier == SB_KV_LOC_CPU) {
        c->st.cpu_written += size;
        c->st.offloads_cpu++;
        sb_kv_samples_add (&c->st.cpu_write_lat, t.total);
    }
    else {
        c->st.storage_written += size;
        c->st.offloads_storage++;
        sb_kv_samples_add (&c->st.storage_write_lat, t.total);
        sb_kv_samples_add (&c->st.storage_write_device, t.device);
        sb_kv_samples_add (&c->st.storage_write_host, t.host);
        c->st.storage_tokens_processed += (double) tokens;
    }
    pthread_mutex_unlock (&c->stats_lock);
    *latency = t.total;
    return 1;
}

int
sb_kv_allocate (sb_kv_tiers_t *c, const char *key, uint64_t tokens, sb_kv_buf_t *chunk, double *latency)
{
    *latency = 0;
    pthread_mutex_lock (&c->meta_lock);
    int cached = s_find (c, key) != NULL;
    pthread_mutex_unlock (&c->meta_lock);
    if (cached)
        return 1;
    if (s_sem_take (c) != 0)
        return -1;
    int rc = s_allocate_inner (c, key, tokens, chunk, latency);
    s_sem_give (c);
    return rc;
}

static void
s_miss (sb_kv_tiers_t *c)
{
    pthread_mutex_lock (&c->stats_lock);
    if (!s_closed (c))
        c->st.cache_misses++;
    pthread_mutex_unlock (&c->stats_lock);
}

int
sb_kv_access (sb_kv_tiers_t *c, const char *key, int phase, int cache_type, sb_kv_buf_t *chunk, int *loc,
              double *latency)
{
    *loc = SB_KV_LOC_NONE;
    *latency = 0;
    pthread_mutex_lock (&c->meta_lock);
    int cached = s_find (c, key) != NULL;
    pthread_mutex_unlock (&c->meta_lock);
    if (!cached) {
        s_miss (c);
        return 0;
    }
    pthread_mutex_t *lk = s_entry_lock (c, key);
    pthread_mutex_lock (lk);
    pthread_mutex_lock (&c->meta_lock);
    sb_kv_entry_t *e = s_find (c, key);
    if (!e) {
        pthread_mutex_unlock (&c->meta_lock);
        pthread_mutex_unlock (lk);
        s_miss (c);
        return 0;
    }
    e->last_access = sb_kv_clock ();
    e->access_count++;
    int where = e->loc;
    uint64_t size = e->size, tokens = e->tokens;
    pthread_mutex_unlock (&c->meta_lock);
    pthread_mutex_lock (&c->stats_lock);
    if (!s_closed (c)) {
        c->st.cache_hits++;
        if (cache_type == SB_KV_TYPE_SYSTEM)
            c->st.system_prompt_hits++;
        else if (cache_type == SB_KV_TYPE_COMMON)
            c->st.common_phrase_hits++;
        else if (cache_type == SB_KV_TYPE_MULTI_TURN)
            c->st.multi_turn_hits++;
        else
            c->st.user_cache_hits++;
        if (where == SB_KV_LOC_CPU)
            c->st.cpu_read += size;
        else
            c->st.storage_read += size;
        if (phase == SB_KV_PHASE_DECODE)
            c->st.decode_reads++;
        c->st.read_operations++;
        c->st.total_read_bytes += size;
    }
    pthread_mutex_unlock (&c->stats_lock);
    sb_kv_timing_t t;
    if (where == SB_KV_LOC_CPU)
        sb_kv_cpu_copy (key, size, chunk, &t);
    else {
        int err_no;
        char err[4096];
        if (sb_kv_entry_read (&c->io, key, tokens, chunk, &t, &err_no, err, sizeof err) != 0) {
            pthread_mutex_unlock (lk);
            return s_io_fail (c, "read", key, err_no, err);
        }
    }
    pthread_mutex_lock (&c->stats_lock);
    if (!s_closed (c)) {
        if (where == SB_KV_LOC_CPU)
            sb_kv_samples_add (&c->st.cpu_read_lat, t.total);
        else {
            sb_kv_samples_add (&c->st.storage_read_lat, t.total);
            sb_kv_samples_add (&c->st.storage_read_device, t.device);
            sb_kv_samples_add (&c->st.storage_read_host, t.host);
            if (c->io.bytes_per_token > 0)
                c->st.storage_tokens_processed += (double) size / (double) c->io.bytes_per_token;
        }
    }
    pthread_mutex_unlock (&c->stats_lock);
    pthread_mutex_unlock (lk);
    *loc = where;
    *latency = t.total;
    return 0;
}

void
sb_kv_tiers_close (sb_kv_tiers_t *c)
{
    pthread_mutex_lock (&c->stats_lock);
    c->closed = 1;
    pthread_mutex_unlock (&c->stats_lock);
}

void
sb_kv_tiers_entries (sb_kv_tiers_t *c, uint64_t *cpu, uint64_t *storage)
{
    *cpu = *storage = 0;
    pthread_mutex_lock (&c->meta_lock);
    for (size_t b = 0; b < c->buckets; b++)
        for (sb_kv_entry_t *e = c->table[b]; e; e = e->next) {
            *cpu += e->loc == SB_KV_LOC_CPU;
            *storage += e->loc == SB_KV_LOC_STORAGE;
        }
    pthread_mutex_unlock (&c->meta_lock);
}

void
sb_kv_tiers_each (sb_kv_tiers_t *c, void (*fn) (void *ctx, const char *key, int loc, uint64_t tokens), void *ctx)
{
    pthread_mutex_lock (&c->meta_lock);
    for (size_t b = 0; b < c->buckets; b++)
        for (sb_kv_entry_t *e = c->table[b]; e; e = e->next)
            fn (ctx, e->key, e->loc, e->tokens);
    pthread_mutex_unlock (&c->meta_lock);
}
