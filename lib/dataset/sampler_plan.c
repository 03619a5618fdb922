/* sampler_plan: DLIO's file_shuffle lists of every rank, planned in one
 * place (see sampler_plan.h). */
#include "sampler_plan.h"
#include "index_array.h"
#include "sampler_dlio.h"

#include "nprandom.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct sb_plan {
    sb_sampler_cfg_t cfg;
    uint64_t   f;           /* files per rank */
    uint64_t   n;           /* used files: ranks * f */
    sb_index_array_t lists; /* rank r's files at [r*f, (r+1)*f) */
    uint8_t   *visited;     /* one bit per used file: the in-place deal */
    uint64_t   epoch;       /* planned */
    /* the background planning */
    pthread_t  thread;
    int        started;     /* a thread runs or ended and was not joined */
    atomic_int done;
    atomic_int stop;        /* sb_plan_destroy: end the planning at its next check */
    uint64_t   want;        /* the epoch it plans */
    int        rc;
    double     cpu_s;
    char       err[256];
};

sb_plan_t *
sb_plan_new (const sb_sampler_cfg_t *cfg, char *err, size_t err_size)
{
    if (cfg->file_shuffle == SB_SHUFFLE_OFF || cfg->kind == SB_SAMPLER_GLOBAL || cfg->ranks == 0) {
        snprintf (err, err_size, "sampler plan: only DLIO's samplers with file_shuffle have lists to plan");
        return NULL;
    }
    sb_plan_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "sampler plan: out of memory");
        return NULL;
    }
    self->cfg = *cfg;
    uint64_t effective = cfg->expected && cfg->expected < cfg->listed ? cfg->expected : cfg->listed;
    self->f = effective / cfg->ranks;
    self->n = self->f * cfg->ranks;
    if (sb_ia_alloc (&self->lists, self->n, cfg->listed > (uint64_t) UINT32_MAX + 1) != 0
        || !(self->visited = malloc ((size_t) (self->n / 8 + 1)))) {
        snprintf (err, err_size, "sampler plan: out of memory for %llu ranks of %llu files",
                  (unsigned long long) cfg->ranks, (unsigned long long) self->f);
        sb_ia_free (&self->lists);
        free (self);
        return NULL;
    }
    /* main.py initialize: rank r lists r, r + R, ..., trimmed to f */
    for (uint64_t r = 0; r < cfg->ranks; r++)
        for (uint64_t j = 0; j < self->f; j++)
            sb_ia_set (&self->lists, r * self->f + j, r + j * cfg->ranks);
    return self;
}

void
sb_plan_destroy (sb_plan_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_plan_t *self = *self_p;
    *self_p = NULL;
    if (self->started) {
        /* a signal ends every phase within a second: the thread stops at
         * its next check (between ranks' shuffles, every 2^20 moves of the
         * deal); one still busy after a second (a single shuffle of tens of
         * millions of files) is left to end on its own with the plan, which
         * it owns from then on, as the process exits */
        atomic_store (&self->stop, 1);
        for (int i = 0; i < 1000 && !atomic_load (&self->done); i++)
            nanosleep (&(struct timespec) { .tv_sec = 0, .tv_nsec = 1000000 }, NULL);
        if (!atomic_load (&self->done)) {
            pthread_detach (self->thread);
            return;
        }
        pthread_join (self->thread, NULL);
    }
    sb_ia_free (&self->lists);
    free (self->visited);
    free (self);
}

/* Of the cyclic run of residues s, s+1, ..., s+len-1 (mod R, len <= R), how
 * many are below rem. */
static uint64_t
s_below (uint64_t s, uint64_t len, uint64_t ranks, uint64_t rem)
{
    uint64_t end = s + len, count = 0;
    uint64_t hi = end < ranks ? end : ranks;
    if (s < rem)
        count += (hi < rem ? hi : rem) - s;
    if (end > ranks) {
        uint64_t wrap = end - ranks;
        count += wrap < rem ? wrap : rem;
    }
    return count;
}

/* Where the deal sends position x = r*f + i (of r's list after the first
 * shuffle): to rank d = (i + r) % R, after what d got from ranks 0..r-1 and
 * from r's positions before i with the same residue. From rank r' rank d
 * gets the positions i' = (d - r') mod R (mod R), q + (that < rem) of them
 * (q = f / R, rem = f % R); over r' < r those residues are d-r+1 .. d. */
static uint64_t
s_dest (uint64_t x, uint64_t f, uint64_t ranks)
{
    uint64_t r = x / f, i = x % f, d = (i % ranks + r) % ranks;
    uint64_t q = f / ranks, rem = f % ranks;
    uint64_t before = r * q + (r ? s_below ((d + ranks - (r - 1) % ranks) % ranks, r, ranks, rem) : 0);
    return d * f + before + i / ranks;
}

/* the plan was told to stop (a signal, a failed run): its lists are left
 * half dealt, and nothing serves them any more */
static int
s_stopped (char *err, size_t err_size)
{
    snprintf (err, err_size, "sampler plan: stopped");
    return -1;
}

int
sb_plan_epoch (sb_plan_t *self, uint64_t epoch, char *err, size_t err_size)
{
    const sb_sampler_cfg_t *c = &self->cfg;
    if (epoch != self->epoch + 1) {
        snprintf (err, err_size, "sampler plan: epoch %llu planned out of order (next is %llu)",
                  (unsigned long long) epoch, (unsigned long long) (self->epoch + 1));
        return -1;
    }
    uint64_t f = self->f, ranks = c->ranks;
    sb_np_mt_t mt;
    uint64_t first_seed = c->seed_change_epoch ? sb_sampler_dlio_seed_add (c->seed, epoch) : c->seed;
    if (sb_sampler_dlio_seed (&mt, first_seed, "file_shuffle", epoch, err, err_size) != 0)
        return -1;
    uint64_t last_seed = sb_sampler_dlio_seed_add (sb_sampler_dlio_seed_add (c->seed, epoch), ranks > UINT64_MAX / 31 ? UINT64_MAX : 31 * (ranks - 1));
    if (last_seed > SB_NP_SEED_MAX)
        return sb_sampler_dlio_seed (&mt, last_seed, "file_shuffle (rank-dependent)", epoch, err, err_size);
    /* every rank shuffles its list with the first seed: the same permutation */
    for (uint64_t r = 0; r < ranks && f > 1; r++) {
        if (atomic_load (&self->stop))
            return s_stopped (err, err_size);
        if (r > 0)
            sb_np_seed (&mt, first_seed);
        sb_ia_shuffle (&mt, &self->lists, r * f, f);
    }
    /* the deal, in place: follow each cycle of s_dest once */
    memset (self->visited, 0, (size_t) (self->n / 8 + 1));
    uint64_t moves = 0;
    for (uint64_t x = 0; x < self->n; x++) {
        if (self->visited[x / 8] & (1u << (x % 8)))
            continue;
        uint64_t carried = sb_ia_get (&self->lists, x), y = x;
        do {
            if ((++moves & ((1u << 20) - 1)) == 0 && atomic_load (&self->stop))
                return s_stopped (err, err_size);
            uint64_t to = s_dest (y, f, ranks), there = sb_ia_get (&self->lists, to);
            sb_ia_set (&self->lists, to, carried);
            self->visited[to / 8] |= (uint8_t) (1u << (to % 8));
            carried = there;
            y = to;
        } while (y != x);
    }
    /* rank d shuffles what it was dealt with seed + epoch + 31 * d */
    for (uint64_t d = 0; d < ranks; d++) {
        if (atomic_load (&self->stop))
            return s_stopped (err, err_size);
        if (sb_sampler_dlio_seed (&mt, c->seed + epoch + 31 * d, "file_shuffle", epoch, err, err_size) != 0)
            return -1;
        sb_ia_shuffle (&mt, &self->lists, d * f, f);
    }
    self->epoch = epoch;
    return 0;
}

static double
s_cpu_now (void)
{
    struct timespec ts;
    if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void *
s_thread (void *arg)
{
    sb_plan_t *self = arg;
    double t0 = s_cpu_now ();
    self->rc = sb_plan_epoch (self, self->want, self->err, sizeof self->err);
    self->cpu_s = s_cpu_now () - t0;
    atomic_store (&self->done, 1);
    return NULL;
}

int
sb_plan_start (sb_plan_t *self, uint64_t epoch, char *err, size_t err_size)
{
    if (self->started) {
        snprintf (err, err_size, "sampler plan: epoch %llu is still being planned", (unsigned long long) self->want);
        return -1;
    }
    self->want = epoch;
    self->rc = 0;
    self->err[0] = '\0';
    atomic_store (&self->done, 0);
    int rc = pthread_create (&self->thread, NULL, s_thread, self);
    if (rc != 0) {
        snprintf (err, err_size, "sampler plan: cannot start the planning thread: %s", strerror (rc));
        return -1;
    }
    self->started = 1;
    return 0;
}

int
sb_plan_poll (sb_plan_t *self)
{
    if (!self->started)
        return -1;
    return atomic_load (&self->done) ? 1 : 0;
}

int
sb_plan_wait (sb_plan_t *self, double *seconds, char *err, size_t err_size)
{
    if (!self->started) {
        snprintf (err, err_size, "sampler plan: no epoch is being planned");
        return -1;
    }
    pthread_join (self->thread, NULL);
    self->started = 0;
    if (seconds)
        *seconds = self->cpu_s;
    if (self->rc != 0) {
        snprintf (err, err_size, "%s", self->err);
        return -1;
    }
    return 0;
}

uint64_t
sb_plan_epoch_planned (const sb_plan_t *self)
{
    return self->epoch;
}

uint64_t
sb_plan_files_per_rank (const sb_plan_t *self)
{
    return self->f;
}

uint64_t
sb_plan_page_files (const sb_plan_t *self)
{
    return sb_sampler_page_files (&self->cfg);
}

uint64_t
sb_plan_bytes (const sb_plan_t *self)
{
    return self->n * (self->lists.wide ? 8 : 4) + self->n / 8 + 1;
}

int
sb_plan_files (const sb_plan_t *self, uint64_t rank, uint64_t first, uint64_t count, uint64_t *out)
{
    if (self->started || rank >= self->cfg.ranks || first > self->f || count > self->f - first)
        return -1;
    for (uint64_t j = 0; j < count; j++)
        out[j] = sb_ia_get (&self->lists, rank * self->f + first + j);
    return 0;
}
