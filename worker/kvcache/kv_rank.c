/* kv_rank: one rank's trial: setup, the window's threads, the figures. */
#include "kv_rank.h"
#include "kv_entry_io.h"
#include "kv_json.h"
#include "kv_params.h"
#include "kv_probe.h"
#include "kv_report.h"
#include "kv_stats.h"
#include "kv_tiers.h"
#include "kv_users.h"
#include "engine.h"
#include "rank_report.h"
#include "reader.h"
#include "log.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>


#define S_MAX_WORKERS   500     /* run(): min(num_users, 500) service threads */
#define S_DECODE_BATCH  32      /* config.yaml decode.batch_size */
#define S_PREFIX_P      0.2     /* prefix_cache.system_prompt_hit_probability */
#define S_JOIN_GRACE_S  2.0     /* run(): thread.join(timeout=2.0) */

/* PrefixMatcher.COMMON_SYSTEM_PROMPTS: their word counts (the tokens a hit
 * takes off the context) and their keys, kv_system_ + sha256("TEXT_WORDS")[:16]
 * as the reference names them. No entry is ever written under these keys (the
 * reference never allocates them), so every access is a miss without I/O. */
static const struct {
    unsigned    words;
    const char *key;
} s_prompts[3] = {
    { 5, "kv_system_0b7588a77cb9c73b" },
    { 9, "kv_system_ea8ffc489f80c165" },
    { 6, "kv_system_2ed87f49657692a2" },
};

/* qos_profiles: target_latency_p95_ms */
static const int s_qos_p95_ms[SB_KV_QOS] = { 50, 100, 1000 };

typedef struct s_run {
    const sb_kv_rank_t *r;
    sb_kv_params_t      p;
    const sb_kv_model_t *model;
    uint64_t            trial, seed;
    double              gen_timing;     /* seconds per generated token */
    sb_kv_rng_t         rng;
    sb_kv_user_t       *users;
    sb_kv_tiers_t       tiers;
    sb_kv_flow_t        flow;
    atomic_int          abort;          /* I/O gives up between chunks */
    atomic_int          window_over;
    /* the reference's results (res_lock) */
    pthread_mutex_t     res_lock;
    pthread_cond_t      res_cond;       /* a service thread ended */
    int                 res_closed;
    uint64_t            requests, tokens, mt_hits, mt_misses;
    double              total_storage, total_gen;
    uint64_t            by_type[SB_KV_TYPES], by_qos[SB_KV_QOS], qos_viol[SB_KV_QOS];
    sb_kv_samples_t     e2e, storage, gen, qos_ms[SB_KV_QOS];
    uint64_t            prefix_hits, prefix_misses, system_prompt_reuse, bytes_saved;
    int                 oom;            /* a sample could not be kept */
    /* an object store's counters per endpoint, gathered from every thread's
     * client as it ends (res_lock), sent as ENDPOINT_STATS before KV_RESULT */
    sb_reader_endpoint_t *eps;
    size_t              neps;
    /* threads */
    pthread_t          *threads;
    struct s_thread    *th;             /* each service thread's argument and call record */
    size_t              nthreads, live;
    int                 stopped;        /* stop() said 1 */
    int                 left_behind;    /* a thread never returned: this state stays (s_free) */
    _Atomic uint64_t    moved_ns;       /* the last time any file call of the rank began, moved or ended */
    struct s_run       *next_left;      /* the runs left behind */
} s_run_t;

/* A service thread's argument: its run and the file call it is in. */
typedef struct s_thread {
    s_run_t     *run;
    sb_kv_call_t call;
} s_thread_t;

/* ---- reports ---- */

static void
s_fail (s_run_t *self, const char *op, const char *target, int errno_val, const char *message)
{
    if (!self->stopped)
        sb_report_failure (self->r->out, self->r->rank, op, target, errno_val, message, NULL);
}

static int
s_should_stop (s_run_t *self)
{
    if (!self->stopped && self->r->stop && self->r->stop (self->r->stop_arg))
        self->stopped = 1;
    return self->stopped;
}

/* ---- the folder ---- */

/* rank_<r>/ under data_root, made, its *.npy removed (NVMeBackend.__init__). */
static int
s_folder (s_run_t *self, char *dir, size_t size)
{
    const char *root = self->r->cfg->data_root ? self->r->cfg->data_root : "";
    size_t n = strlen (root);
    char err[PATH_MAX + 256];
    if (!*root) {
        s_fail (self, "kvcache", "", EINVAL, "kvcache: no cache folder (kvcache.cache_dir, WELCOME data_root is empty)");
        return -1;
    }
    if (sb_strf (dir, size, "%s%srank_%llu", root, n && root[n - 1] == '/' ? "" : "/",
                 (unsigned long long) self->r->rank) != 0) {
        s_fail (self, "mkdir", root, ENAMETOOLONG, "kvcache: the cache folder's path is too long");
        return -1;
    }
    if (sb_mkdirs (dir, err, sizeof err) != 0) {
        s_fail (self, "mkdir", dir, errno, err);
        return -1;
    }
    DIR *d = opendir (dir);
    if (!d) {
        snprintf (err, sizeof err, "opendir %s: %s", dir, strerror (errno));
        s_fail (self, "opendir", dir, errno, err);
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while ((e = readdir (d))) {
        size_t len = strlen (e->d_name);
        if (len < 4 || strcmp (e->d_name + len - 4, ".npy") != 0)
            continue;
        if (unlinkat (dirfd (d), e->d_name, 0) != 0 && errno != ENOENT) {
            /* the reference ignores such a file; a file left there would count
             * against the capacity and mix with this trial's entries */
            snprintf (err, sizeof err, "remove %s/%s (an entry left from before): %s", dir, e->d_name,
                      strerror (errno));
            s_fail (self, "remove", dir, errno, err);
            rc = -1;
            break;
        }
    }
    closedir (d);
    return rc;
}

/* Objects: the keys rank_<r>/ under data_root (a prefix of the store), the
 * *.npy there removed as the reference empties its folder. */
typedef struct {
    char  **keys;
    size_t  n, cap;
    int     oom;
} s_keys_t;

static int
s_list_npy (void *ctx, const char *key, size_t len, uint64_t size)
{
    (void) size;
    s_keys_t *k = ctx;
    if (len < 4 || memcmp (key + len - 4, ".npy", 4) != 0 || memchr (key, '/', len))
        return 0;
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 64;
        char **v = realloc (k->keys, cap * sizeof *v);
        if (!v)
            return k->oom = 1;
        k->keys = v;
        k->cap = cap;
    }
    if (!(k->keys[k->n] = strndup (key, len)))
        return k->oom = 1;
    k->n++;
    return 0;
}

static int
s_prefix (s_run_t *self, char *prefix, size_t size)
{
    const char *root = self->r->cfg->data_root ? self->r->cfg->data_root : "";
    size_t n = strlen (root);
    if (sb_strf (prefix, size, "%s%srank_%llu/", root, n && root[n - 1] != '/' ? "/" : "",
                 (unsigned long long) self->r->rank) != 0) {
        s_fail (self, "kvcache", root, ENAMETOOLONG, "kvcache: the cache's key prefix is too long");
        return -1;
    }
    sb_storage_cfg_t *mine = malloc (sizeof *mine);
    if (!mine) {
        s_fail (self, "kvcache", prefix, ENOMEM, "kvcache: out of memory");
        return -1;
    }
    sb_storage_for_rank (self->r->storage, self->r->rank, mine);
    sb_storage_open_t how = { .root = "", .rank = self->r->rank, .depth = 1, .buffer_bytes = SB_KV_CHUNK };
    sb_storage_error_t e;
    sb_storage_t *client = sb_storage_open (mine, &how, &e);
    free (mine);
    if (!client) {
        s_fail (self, "open", prefix, e.os_errno, e.text);
        return -1;
    }
    s_keys_t k = { 0 };
    int rc = sb_storage_list (client, prefix, NULL, NULL, s_list_npy, &k, &e);
    if (rc < 0 || k.oom)
        s_fail (self, "list", prefix, k.oom ? ENOMEM : e.os_errno, k.oom ? "kvcache: out of memory listing" : e.text);
    for (size_t i = 0; rc >= 0 && !k.oom && i < k.n; i++) {
        char key[PATH_MAX];
        if (sb_strf (key, sizeof key, "%s%s", prefix, k.keys[i]) != 0)
            continue;
        if (sb_storage_remove (client, key, &e) != 0 && !e.missing) {
            s_fail (self, "remove", key, e.os_errno, e.text);
            rc = -1;
        }
    }
    for (size_t i = 0; i < k.n; i++)
        free (k.keys[i]);
    free (k.keys);
    sb_storage_close (&client);
    return rc < 0 || k.oom ? -1 : 0;
}

/* The storage tier's capacity: storage_capacity_gb, else 95% of the free
 * space (statvfs f_bavail x f_frsize), else unlimited (MultiTierCache). */
static double
s_capacity (const s_run_t *self, const char *dir, int objects)
{
    if (self->p.storage_capacity_gb > 0)
        return self->p.storage_capacity_gb * 1073741824.0;
    if (objects)
        return INFINITY;    /* an object store's room is not known: the reference's "inf" */
    struct statvfs st;
    if (statvfs (dir, &st) != 0)
        return INFINITY;
    return (double) st.f_bavail * (double) st.f_frsize * 0.95;
}

/* ---- one request: process_requests' steps ---- */

static int
s_over (s_run_t *self)
{
    return atomic_load (&self->window_over);
}

/* Sleep seconds unless the window ends first (then 1). */
static int
s_sleep (s_run_t *self, double seconds)
{
    double end = sb_kv_clock () + seconds;
    for (;;) {
        if (s_over (self))
            return 1;
        double left = end - sb_kv_clock ();
        if (left <= 0)
            return 0;
        if (left > 0.1)
            left = 0.1;
        struct timespec ts = { (time_t) left, (long) ((left - floor (left)) * 1e9) };
        nanosleep (&ts, NULL);
    }
}

/* 0 done or abandoned (the window ended), -1 failed or stopped. */
static int
s_serve (s_run_t *self, const sb_kv_request_t *req, sb_kv_buf_t *chunk)
{
    sb_kv_tiers_t *c = &self->tiers;
    double storage = 0, lat;
    int cache_type = SB_KV_TYPE_USER, loc;
    uint64_t context = req->context;
    /* 1. a prefix: one of the common system prompts, 20% of requests */
    if (self->p.prefix_caching) {
        pthread_mutex_lock (&self->rng.lock);
        int hit = sb_py_random (&self->rng.r) < S_PREFIX_P;
        size_t which = hit ? sb_py_choice (&self->rng.r, 3) : 0;
        pthread_mutex_unlock (&self->rng.lock);
        pthread_mutex_lock (&self->res_lock);
        if (!self->res_closed) {
            if (hit) {
                self->prefix_hits++;
                self->system_prompt_reuse++;
                self->bytes_saved += s_prompts[which].words * self->tiers.io.bytes_per_token;
            }
            else
                self->prefix_misses++;
        }
        pthread_mutex_unlock (&self->res_lock);
        if (hit) {
            cache_type = SB_KV_TYPE_SYSTEM;
            if (sb_kv_access (c, s_prompts[which].key, req->phase, SB_KV_TYPE_SYSTEM, chunk, &loc, &lat) != 0)
                return -1;
            storage += lat;
            context = context > s_prompts[which].words ? context - s_prompts[which].words : 0;
        }
    }
    /* 2. a later turn of a conversation: every other turn's entry still cached is read */
    if (req->turn > 1) {
        char id[64], key[SB_KV_KEY];
        uint64_t turns[64];
        size_t n = sb_kv_flow_prev_turns (&self->flow, req, id, sizeof id, turns, 64);
        for (size_t i = 0; i < n; i++) {
            if (s_over (self))
                return 0;
            snprintf (key, sizeof key, "%s_turn_%llu", id, (unsigned long long) turns[i]);
            if (sb_kv_access (c, key, SB_KV_PHASE_DECODE, SB_KV_TYPE_MULTI_TURN, chunk, &loc, &lat) != 0)
                return -1;
            pthread_mutex_lock (&self->res_lock);
            if (!self->res_closed) {
                if (loc != SB_KV_LOC_NONE)
                    self->mt_hits++;
                else
                    self->mt_misses++;
            }
            pthread_mutex_unlock (&self->res_lock);
            if (loc != SB_KV_LOC_NONE)
                storage += lat;
        }
    }
    if (s_over (self))
        return 0;
    /* 3. prefill: the entry written (unless cached) */
    if (req->phase == SB_KV_PHASE_PREFILL || req->phase == SB_KV_PHASE_BOTH) {
        if (sb_kv_allocate (c, req->key, context, chunk, &lat) < 0)
            return -1;
        storage += lat;
    }
    /* 5. decode: one read, then one per batch of 32 generated tokens; a miss writes it */
    if (req->phase == SB_KV_PHASE_DECODE || req->phase == SB_KV_PHASE_BOTH) {
        if (s_over (self))
            return 0;
        if (sb_kv_access (c, req->key, SB_KV_PHASE_DECODE, cache_type, chunk, &loc, &lat) != 0)
            return -1;
        storage += lat;
        if (loc == SB_KV_LOC_NONE) {
            if (sb_kv_allocate (c, req->key, context, chunk, &lat) < 0)
                return -1;
            storage += lat;
        }
        else {
            uint64_t reads = (req->generation + S_DECODE_BATCH - 1) / S_DECODE_BATCH;
            for (uint64_t i = 0; i < (reads ? reads : 1); i++) {
                if (s_over (self))
                    return 0;
                if (sb_kv_access (c, req->key, SB_KV_PHASE_DECODE, cache_type, chunk, &loc, &lat) != 0)
                    return -1;
                storage += lat;
            }
        }
    }
    /* 6. generation */
    double gen = (double) req->generation * self->gen_timing;
    if (gen > 0 && s_sleep (self, gen))
        return 0;
    double complete = sb_kv_clock ();
    /* 7. the request's figures, if the window is still open */
    double total_ms = (complete - req->submit) * 1000;
    pthread_mutex_lock (&self->res_lock);
    if (!self->res_closed) {
        self->requests++;
        self->tokens += req->generation;
        self->total_storage += storage;
        self->total_gen += gen;
        self->by_type[req->type]++;
        self->by_qos[req->qos]++;
        if (total_ms > s_qos_p95_ms[req->qos])
            self->qos_viol[req->qos]++;
        if (sb_kv_samples_add (&self->e2e, total_ms / 1000) != 0 || sb_kv_samples_add (&self->storage, storage) != 0
            || sb_kv_samples_add (&self->gen, gen) != 0 || sb_kv_samples_add (&self->qos_ms[req->qos], total_ms) != 0)
            self->oom = 1;
    }
    pthread_mutex_unlock (&self->res_lock);
    return 0;
}

/* The object store's stop (sb_storage_open_t): the rank gives up. */
static int
s_abort_cb (void *arg)
{
    return atomic_load (&((s_run_t *) arg)->abort);
}

/* A client of the rank's object store for one thread; NULL (reported) when it cannot be opened. */
/* A client of the rank's store: a service thread's (stoppable: abort gives
 * up its requests; a client that cannot be opened fails the rank), or the
 * clean-up's after the window (not stoppable; a failure is only said). */
static sb_storage_t *
s_client (s_run_t *self, int stoppable)
{
    sb_storage_cfg_t *mine = malloc (sizeof *mine);
    if (!mine) {
        if (stoppable)
            sb_kv_tiers_fail (&self->tiers, "kvcache", "", ENOMEM, "kvcache: out of memory for a storage client");
        else
            sb_warn ("rank %llu: out of memory for a storage client", (unsigned long long) self->r->rank);
        return NULL;
    }
    sb_storage_for_rank (self->r->storage, self->r->rank, mine);
    sb_storage_open_t how = { .root = "", .rank = self->r->rank, .depth = 1,
                              .buffer_bytes = self->r->cfg->io_buffer ? self->r->cfg->io_buffer : SB_KV_CHUNK,
                              .stop = stoppable ? s_abort_cb : NULL, .stop_arg = self };
    sb_storage_error_t e;
    sb_storage_t *client = sb_storage_open (mine, &how, &e);
    free (mine);
    if (!client && stoppable)
        sb_kv_tiers_fail (&self->tiers, "open", self->tiers.io.dir, e.os_errno ? e.os_errno : EIO, e.text);
    else if (!client)
        sb_warn ("rank %llu: cannot open a client of %s: %s", (unsigned long long) self->r->rank, self->tiers.io.dir,
                 e.text);
    return client;
}

/* Add a thread's client's counters per endpoint to the rank's (before the
 * client closes): the actor thread sends them. */
static void
s_gather_endpoints (s_run_t *self, sb_storage_t *client)
{
    sb_storage_stats_t *stats = calloc (SB_MAX_ENDPOINTS, sizeof *stats);
    size_t n = stats ? sb_storage_stats (client, stats, SB_MAX_ENDPOINTS) : 0;
    pthread_mutex_lock (&self->res_lock);
    if (n && !self->eps)
        self->eps = calloc (SB_MAX_ENDPOINTS, sizeof *self->eps);
    for (size_t i = 0; i < n && self->eps; i++) {
        size_t j = 0;
        while (j < self->neps && strcmp (self->eps[j].endpoint, stats[i].where) != 0)
            j++;
        if (j == self->neps) {
            if (self->neps == SB_MAX_ENDPOINTS)
                continue;
            snprintf (self->eps[j].endpoint, sizeof self->eps[j].endpoint, "%s", stats[i].where);
            self->neps++;
        }
        self->eps[j].requests += stats[i].requests;
        self->eps[j].bytes += stats[i].bytes;
        self->eps[j].errors += stats[i].errors;
        self->eps[j].retries += stats[i].retries;
        sb_histogram_merge_counts (&self->eps[j].latency, stats[i].latency.counts, SB_HISTOGRAM_BINS);
    }
    pthread_mutex_unlock (&self->res_lock);
    free (stats);
}

/* An object whose PUT the window's end (or a stop) cut short is removed
 * after the window, as a file cut short is, through a client of its own
 * that abort does not stop (the DELETE is bounded by the store's request
 * timeout), and not counted. */
static void
s_remove_cut_short (s_run_t *self, const char *name)
{
    sb_storage_t *client = s_client (self, 0);
    if (!client)
        return;
    sb_storage_error_t e;
    if (sb_storage_remove (client, name, &e) != 0 && !e.missing)
        sb_warn ("rank %llu: cannot remove %s, whose upload the window's end cut short: %s",
                 (unsigned long long) self->r->rank, name, e.text);
    sb_storage_close (&client);
}

static void *
s_worker_main (void *arg)
{
    s_thread_t *th = arg;
    s_run_t *self = th->run;
    sb_kv_buf_t b = { .chunk = sb_kv_chunk_new (), .call = &th->call };
    int ready = b.chunk != NULL;
    if (!ready)
        sb_kv_tiers_fail (&self->tiers, "kvcache", "", ENOMEM, "kvcache: out of memory for a thread's buffer");
    else if (self->tiers.io.objects)
        ready = (b.client = s_client (self, 1)) != NULL;
    sb_kv_request_t req;
    while (ready && !atomic_load (&self->tiers.failed)) {
        int r = sb_kv_flow_take (&self->flow, &req);
        if (r < 0)
            break;
        if (r == 0)
            continue;
        if (s_serve (self, &req, &b) != 0)
            break;
    }
    free (b.chunk);
    if (b.client) {
        s_gather_endpoints (self, b.client);
        sb_storage_close (&b.client);
    }
    if (b.cut_short[0])
        s_remove_cut_short (self, b.cut_short);
    pthread_mutex_lock (&self->res_lock);
    self->live--;
    pthread_cond_broadcast (&self->res_cond);
    pthread_mutex_unlock (&self->res_lock);
    atomic_store (&th->call.ended, 1);     /* the last touch: s_join may join it now */
    return NULL;
}

/* ---- the window ---- */

typedef struct {
    uint64_t requests, bytes, reads;
} s_totals_t;

static s_totals_t
s_totals (s_run_t *self)
{
    s_totals_t t;
    pthread_mutex_lock (&self->res_lock);
    t.requests = self->requests;
    pthread_mutex_unlock (&self->res_lock);
    pthread_mutex_lock (&self->tiers.stats_lock);
    t.bytes = self->tiers.st.storage_read + self->tiers.st.storage_written;
    t.reads = sb_kv_samples_count (&self->tiers.st.storage_read_lat);
    pthread_mutex_unlock (&self->tiers.stats_lock);
    return t;
}

/* STATS with what happened since the last (force: now). */
static void
s_stats (s_run_t *self, s_totals_t *last, int force)
{
    s_totals_t now = s_totals (self);
    sb_interval_t *iv = self->r->interval;
    iv->samples += now.requests - last->requests;
    iv->bytes += now.bytes - last->bytes;
    iv->reads += now.reads - last->reads;
    size_t depth, max;
    sb_kv_flow_depth (&self->flow, &depth, &max);
    iv->in_flight = depth;
    *last = now;
    sb_report_interval (self->r->out, self->r->rank, self->trial, iv, sb_now (), force);
}

/* Start the generator and the service threads; 0, or -1 (reported). */
static int
s_start (s_run_t *self)
{
    size_t n = self->p.users < S_MAX_WORKERS ? (size_t) self->p.users : S_MAX_WORKERS;
    if (!(self->threads = calloc (n, sizeof *self->threads)) || !(self->th = calloc (n, sizeof *self->th))) {
        s_fail (self, "kvcache", "", ENOMEM, "kvcache: out of memory for the service threads");
        return -1;
    }
    if (sb_kv_flow_start (&self->flow) != 0) {
        int e = errno;
        char err[256];
        snprintf (err, sizeof err, "kvcache: cannot start the request generator: %s", strerror (e));
        s_fail (self, "thread", "", e, err);
        return -1;
    }
    pthread_attr_t attr;
    pthread_attr_init (&attr);
    pthread_attr_setstacksize (&attr, 1 << 20);    /* 500 threads: 1 MiB each is room for an object store client's calls */
    for (size_t i = 0; i < n; i++) {
        self->th[i].run = self;
        int rc = sb_kv_call_init (&self->th[i].call, &self->moved_ns) != 0 ? errno : 0;
        if (rc == 0) {
            pthread_mutex_lock (&self->res_lock);
            self->live++;
            pthread_mutex_unlock (&self->res_lock);
            rc = pthread_create (&self->threads[i], &attr, s_worker_main, &self->th[i]);
            if (rc != 0) {
                sb_kv_call_fini (&self->th[i].call);
                pthread_mutex_lock (&self->res_lock);
                self->live--;
                pthread_mutex_unlock (&self->res_lock);
            }
        }
        if (rc != 0) {
            pthread_attr_destroy (&attr);
            char err[256];
            snprintf (err, sizeof err, "kvcache: cannot start service thread %zu of %zu: %s", i + 1, n, strerror (rc));
            s_fail (self, "thread", "", rc, err);
            return -1;
        }
        self->nthreads++;
    }
    pthread_attr_destroy (&attr);
    return 0;
}

/* A file call of a service thread that has not returned for
 * shardbench.stall_timeout_s, while no other file call of the rank moved
 * either, fails the rank, naming the call and the file (training's bound of
 * a read that does not return); 1 when one has. Slow storage that still
 * answers moves some call (a chunk written or read, an fsync ended), so a
 * long fsync of a large entry among others is not taken for a stuck one. */
static int
s_watch (s_run_t *self)
{
    double limit = (double) self->r->cfg->stall_timeout_ms / 1000.0, for_s;
    uint64_t now = sb_mono_ns (), moved = atomic_load (&self->moved_ns);
    if (limit <= 0 || moved >= now || (double) (now - moved) / 1e9 < limit)
        return 0;
    const char *op;
    char path[4096], err[4400];
    for (size_t i = 0; i < self->nthreads; i++) {
        if (!sb_kv_call_stalled (&self->th[i].call, limit, &op, path, sizeof path, &for_s))
            continue;
        snprintf (err, sizeof err, "kvcache: %s of %s has not returned after %.1f s, nor has any other file call of the"
                  " rank moved (shardbench.stall_timeout_s %.6g s): a stuck NFS or FUSE mount, or a device that"
                  " stopped answering?", op, path, for_s, limit);
        sb_kv_tiers_fail (&self->tiers, op, path, ETIMEDOUT, err);
        return 1;
    }
    return 0;
}

/* Wait for the service threads once abort is set. A thread in a file call
 * is waited for as long as the call moves (a large entry's fsync may take a
 * while) unless it is past shardbench.stall_timeout_s (s_watch: the rank
 * fails); once the rank was stopped or failed, half a second at most. Threads
 * still in a call then are left behind: detached, the process ends without
 * them, and the run's state stays theirs (s_free). */
static void
s_join (s_run_t *self)
{
    double since = sb_kv_clock ();
    for (;;) {
        pthread_mutex_lock (&self->res_lock);
        size_t live = self->live;
        pthread_mutex_unlock (&self->res_lock);
        if (live == 0)
            break;
        if (s_should_stop (self) || atomic_load (&self->tiers.failed)) {
            if (sb_kv_clock () - since >= 0.5)
                break;
        }
        else if (s_watch (self))
            continue;       /* failed: half a second more at most */
        struct timespec ts = { 0, 20000000 };
        nanosleep (&ts, NULL);
    }
    size_t left = 0;
    char first[4096] = "";
    for (size_t i = 0; i < self->nthreads; i++) {
        if (atomic_load (&self->th[i].call.ended)) {
            pthread_join (self->threads[i], NULL);
            sb_kv_call_fini (&self->th[i].call);
            continue;
        }
        if (!left++) {
            const char *op = "a call";
            double for_s = 0;
            char path[4096] = "";
            if (sb_kv_call_stalled (&self->th[i].call, 0, &op, path, sizeof path, &for_s))
                snprintf (first, sizeof first, ": %s of %s for %.1f s", op, path, for_s);
        }
        pthread_detach (self->threads[i]);
    }
    self->nthreads = 0;
    if (left) {
        self->left_behind = 1;
        sb_warn ("rank %llu: %zu service thread(s) that never returned left behind%s", (unsigned long long) self->r->rank,
                 left, first);
    }
}

/* The end of the window: nothing counts any more; threads end after their
 * current I/O, or give it up after the grace (at once when stopped or
 * failed); s_join bounds the wait for a call that does not return. */
static void
s_end (s_run_t *self)
{
    sb_kv_tiers_close (&self->tiers);
    pthread_mutex_lock (&self->res_lock);
    self->res_closed = 1;
    pthread_mutex_unlock (&self->res_lock);
    atomic_store (&self->window_over, 1);
    sb_kv_flow_close (&self->flow);
    if (self->stopped || atomic_load (&self->tiers.failed))
        atomic_store (&self->abort, 1);
    double until = sb_kv_clock () + S_JOIN_GRACE_S;
    pthread_mutex_lock (&self->res_lock);
    while (self->live > 0 && !atomic_load (&self->abort)) {
        double left = until - sb_kv_clock ();
        if (left <= 0)
            break;
        struct timespec ts;     /* res_cond waits on the wall clock: a tenth of a second at a time */
        clock_gettime (CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait (&self->res_cond, &self->res_lock, &ts);
    }
    pthread_mutex_unlock (&self->res_lock);
    atomic_store (&self->abort, 1);
    s_join (self);
    sb_kv_flow_join (&self->flow);
}

/* ---- setup ---- */

static int
s_setup (s_run_t *self, const sb_msg_phase_start_t *ps, char *dir, size_t dir_size)
{
    char err[1024];
    sb_kv_params_default (&self->p);
    if (sb_kv_params_from_strs (&self->p, ps->kv.items, ps->kv.count, err, sizeof err) != 0
        || sb_kv_params_check (&self->p, err, sizeof err) != 0) {
        char msg[1200];
        snprintf (msg, sizeof msg, "kvcache: PHASE_START's settings: %s", err);
        s_fail (self, "kvcache", "", EINVAL, msg);
        return -1;
    }
    if (!(self->model = sb_kv_model_find (self->p.model))) {
        snprintf (err, sizeof err, "kvcache: unknown model '%s'", self->p.model);
        s_fail (self, "kvcache", "", EINVAL, err);
        return -1;
    }
    int objects = self->r->storage && (sb_storage_caps (self->r->storage) & SB_ENGINE_OBJECTS);
    self->trial = ps->epoch;
    self->seed = self->p.seed + self->r->rank;
    self->gen_timing = strcmp (self->p.generation_mode, "fast") == 0 ? 0.002
                     : strcmp (self->p.generation_mode, "realistic") == 0 ? 0.030 : 0.0;
    if ((objects ? s_prefix (self, dir, dir_size) : s_folder (self, dir, dir_size)) != 0)
        return -1;
    sb_py_seed_u64 (&self->rng.r, self->seed);
    if (!(self->users = calloc (self->p.users, sizeof *self->users))) {
        s_fail (self, "kvcache", "", ENOMEM, "kvcache: out of memory for the users");
        return -1;
    }
    sb_kv_users_make (&self->rng, self->p.users, self->users);
    sb_kv_io_t io;
    memset (&io, 0, sizeof io);
    snprintf (io.dir, sizeof io.dir, "%s", dir);
    io.odirect = self->p.odirect && !objects;
    io.objects = objects;
    io.model = self->model;
    io.bytes_per_token = sb_kv_model_bytes_per_token (self->model);
    io.abort = &self->abort;
    if (sb_kv_tiers_init (&self->tiers, &io, self->p.cpu_mem_gb * 1073741824.0, s_capacity (self, dir, objects),
                          self->p.max_concurrent_allocs) != 0
        || sb_kv_flow_init (&self->flow, self->users, self->p.users, self->p.multi_turn, &self->rng) != 0) {
        s_fail (self, "kvcache", "", ENOMEM, "kvcache: out of memory for the cache");
        return -1;
    }
    return 0;
}

/* The storage check of the folder (kvcache.verify_storage): 0 with the
 * line for KV_READY, -1 refused or failed (reported). */
static int
s_check (s_run_t *self, const char *dir, char *line, size_t size)
{
    line[0] = '\0';
    if (!self->p.verify_storage)
        return 0;
    static atomic_int warned;   /* once a process: every rank of a worker would say the same */
    if (self->tiers.io.objects) {
        snprintf (line, size, "UNVERIFIABLE: %s is on object storage (engine %s): no local device to measure", dir,
                  self->r->storage->engine);
        if (!atomic_exchange (&warned, 1))
            sb_warn ("rank %llu: kvcache: %s", (unsigned long long) self->r->rank, line + 14);
        return 0;
    }
    sb_kv_probe_t pr;
    memset (&pr, 0, sizeof pr);
    int rc = sb_kv_probe_folder (dir, 0, self->p.odirect, &pr);
    if (rc != 0 || pr.status == SB_KV_PROBE_REFUSED) {
        s_fail (self, "kvcache_check", dir, 0, pr.why[0] ? pr.why : "the storage check failed");
        return -1;
    }
    if (pr.status == SB_KV_PROBE_UNVERIFIABLE) {
        if (!atomic_exchange (&warned, 1))
            sb_warn ("rank %llu: kvcache: the storage of %s cannot be checked: %s", (unsigned long long) self->r->rank,
                     dir, pr.why);
        snprintf (line, size, "%s: %s%s%s", sb_kv_probe_status_name (pr.status), pr.why, pr.line[0] ? "; " : "",
                  pr.line);
    }
    else
        snprintf (line, size, "%s: %s", sb_kv_probe_status_name (pr.status), pr.line);
    return 0;
}

static void
s_kv_ready (s_run_t *self, const char *probe)
{
    uint64_t by_type[SB_KV_TYPES] = { 0 }, by_qos[SB_KV_QOS] = { 0 };
    for (uint64_t i = 0; i < self->p.users; i++) {
        by_type[self->users[i].type]++;
        by_qos[self->users[i].qos]++;
    }
    sb_msg_t m = { .type = SB_MSG_KV_READY };
    m.u.kv_ready.rank = self->r->rank;
    m.u.kv_ready.trial = self->trial;
    m.u.kv_ready.users_by_type = (sb_u64s_t) { .count = SB_KV_TYPES, .items = by_type };
    m.u.kv_ready.users_by_qos = (sb_u64s_t) { .count = SB_KV_QOS, .items = by_qos };
    m.u.kv_ready.probe = (char *) probe;
    if (self->r->out->fn (self->r->out->ctx, &m) != 0)
        sb_error ("rank %llu: cannot report KV_READY", (unsigned long long) self->r->rank);
}

/* The runs whose threads were left behind (s_join): their state is never
 * freed, since a thread may still return into it; listed here so that it
 * stays reachable. */
static pthread_mutex_t s_left_lock = PTHREAD_MUTEX_INITIALIZER;
static s_run_t *s_left;

static void
s_free (s_run_t *self)
{
    if (self->left_behind) {
        pthread_mutex_lock (&s_left_lock);
        self->next_left = s_left;
        s_left = self;
        pthread_mutex_unlock (&s_left_lock);
        return;
    }
    free (self->eps);
    free (self->threads);
    free (self->th);
    free (self->users);
    if (self->tiers.table)
        sb_kv_tiers_free (&self->tiers);
    if (self->flow.heap)
        sb_kv_flow_free (&self->flow);
    sb_kv_samples_free (&self->e2e);
    sb_kv_samples_free (&self->storage);
    sb_kv_samples_free (&self->gen);
    for (int q = 0; q < SB_KV_QOS; q++)
        sb_kv_samples_free (&self->qos_ms[q]);
    pthread_mutex_destroy (&self->res_lock);
    pthread_cond_destroy (&self->res_cond);
    pthread_mutex_destroy (&self->rng.lock);
    free (self);
}

void
sb_kv_rank_run (const sb_kv_rank_t *r, const sb_msg_phase_start_t *ps)
{
    s_run_t *self = calloc (1, sizeof *self);
    if (!self) {
        sb_report_failure (r->out, r->rank, "kvcache", "", ENOMEM, "kvcache: out of memory", NULL);
        return;
    }
    self->r = r;
    pthread_mutex_init (&self->res_lock, NULL);
    pthread_cond_init (&self->res_cond, NULL);
    pthread_mutex_init (&self->rng.lock, NULL);
    atomic_init (&self->abort, 0);
    atomic_init (&self->window_over, 0);
    atomic_init (&self->moved_ns, 0);
    sb_kv_samples_init (&self->e2e);
    sb_kv_samples_init (&self->storage);
    sb_kv_samples_init (&self->gen);
    for (int q = 0; q < SB_KV_QOS; q++)
        sb_kv_samples_init (&self->qos_ms[q]);
    char dir[PATH_MAX], probe[1200];
    if (s_setup (self, ps, dir, sizeof dir) != 0 || s_should_stop (self) || s_check (self, dir, probe, sizeof probe) != 0
        || s_should_stop (self)) {
        s_free (self);
        return;
    }
    s_kv_ready (self, probe);
    if (!r->wait_go || r->wait_go (r->go_arg, self->trial) != 0 || s_should_stop (self)) {
        s_free (self);
        return;
    }
    /* the window */
    double started_at = sb_now (), t0 = sb_kv_clock ();
    s_totals_t last = { 0, 0, 0 };
    r->interval->next = started_at + 1.0;
    int ok = s_start (self) == 0;
    while (ok) {
        /* a tenth of a second at a time (stop() is heard within it), the last one to the window's end */
        double left = self->p.duration_s - (sb_kv_clock () - t0);
        if (left > 0) {
            double nap = left < 0.1 ? left : 0.1;
            struct timespec ts = { 0, (long) (nap * 1e9) };
            nanosleep (&ts, NULL);
        }
        if (s_should_stop (self) || atomic_load (&self->tiers.failed) || atomic_load (&self->flow.failed)
            || s_watch (self))
            break;
        if (sb_kv_clock () - t0 >= self->p.duration_s)
            break;
        s_stats (self, &last, 0);
    }
    double elapsed = sb_kv_clock () - t0, finished_at = sb_now ();
    s_end (self);
    if (self->stopped || !ok) {
        s_free (self);
        return;
    }
    if (atomic_load (&self->tiers.failed)) {
        s_fail (self, self->tiers.err_op, self->tiers.err_target, self->tiers.err_no, self->tiers.err);
        s_free (self);
        return;
    }
    if (atomic_load (&self->flow.failed) || self->oom) {
        s_fail (self, "kvcache", "", ENOMEM, "kvcache: out of memory for the requests or their figures");
        s_free (self);
        return;
    }
    s_stats (self, &last, 1);
    sb_kv_report_t rep = {
        .rank = r->rank, .trial = self->trial, .seed = self->seed, .elapsed = elapsed,
        .prefix_caching = self->p.prefix_caching, .tiers = &self->tiers, .queue_max = 0,
        .requests = self->requests, .tokens = self->tokens, .mt_hits = self->mt_hits, .mt_misses = self->mt_misses,
        .total_storage = self->total_storage, .total_gen = self->total_gen,
        .e2e = &self->e2e, .storage = &self->storage, .gen = &self->gen,
        .prefix_hits = self->prefix_hits, .prefix_misses = self->prefix_misses,
        .system_prompt_reuse = self->system_prompt_reuse, .bytes_saved = self->bytes_saved,
    };
    size_t depth;
    sb_kv_flow_depth (&self->flow, &depth, &rep.queue_max);
    for (int i = 0; i < SB_KV_TYPES; i++)
        rep.by_type[i] = self->by_type[i];
    for (int q = 0; q < SB_KV_QOS; q++) {
        rep.by_qos[q] = self->by_qos[q];
        rep.qos_viol[q] = self->qos_viol[q];
        rep.qos_ms[q] = &self->qos_ms[q];
        rep.qos_p95_ms[q] = s_qos_p95_ms[q];
    }
    if (self->neps)     /* the object store's requests, per endpoint (the endpoints table) */
        sb_report_endpoints (r->out, r->rank, self->eps, self->neps);
    if (sb_kv_report_send (&rep, r->out) != 0) {
        s_fail (self, "kvcache", "", ENOMEM, "kvcache: out of memory for the rank's figures");
        s_free (self);
        return;
    }
    sb_msg_t done = { .type = SB_MSG_RANK_DONE };
    done.u.rank_done.rank = r->rank;
    done.u.rank_done.epoch = self->trial;
    done.u.rank_done.samples = self->requests;
    done.u.rank_done.bytes = self->tiers.st.storage_read + self->tiers.st.storage_written;
    done.u.rank_done.started_at = started_at;
    done.u.rank_done.finished_at = finished_at;
    if (r->out->fn (r->out->ctx, &done) != 0)
        sb_error ("rank %llu: cannot report the kvcache trial done", (unsigned long long) r->rank);
    s_free (self);
}
