/* sampler_dlio: DLIO's sampler kinds (see sampler.h for the rules and
 * tests/dlio_model.py for the oracle they are checked against).
 *
 * Memory: without file_shuffle a rank's local files are implicit (rank r's
 * j-th file is catalog index r + j*R). With file_shuffle and cfg.served the
 * lists are planned elsewhere (sampler_plan.h) and only the pages of them
 * that were put are kept (sampler_pages.h). Else every rank's list is
 * kept (R * files_per_rank catalog indices, 4 bytes each while the catalog
 * index fits, else 8) plus a second array the reshard deals into and the
 * shared first-shuffle order (files_per_rank). The iterative kind with
 * sample_shuffle keeps one permutation of the k local samples: every rank
 * seeds it with the same seed and the same k, so it is the same for all ranks.
 * Preparing an epoch is O(files) (+ O(k) for that permutation); a read is
 * O(log threads) with no allocation. */
#include "sampler_dlio.h"

#include "nprandom.h"
#include "index_array.h"
#include "sampler_pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One segment of the turn-taking: rounds [round0, round0 + rounds) in which
 * `active` sources (their ids at first_active..) each give one batch. */
typedef struct {
    uint64_t step0;        /* first step of the segment */
    uint64_t round0;
    uint64_t active;
    uint64_t first_active; /* into turn_sources */
} turn_segment_t;

struct sb_sampler_dlio {
    sb_sampler_cfg_t cfg;
    int              wide;            /* catalog indices need 8 bytes */
    uint64_t         files_per_rank;  /* f */
    uint64_t         per_rank;        /* k = f * spf */
    uint64_t         steps;
    uint64_t         epoch;
    /* file_shuffle */
    sb_index_array_t    lists;           /* rank r's files at [r*f, (r+1)*f) */
    sb_index_array_t    dealt;           /* the reshard deals into this, then the two swap */
    sb_index_array_t    first_order;     /* shuffle(arange(f)) with the epoch's first seed */
    uint64_t        *fill;            /* per destination rank (R) */
    uint64_t         page_files;      /* served: local files a page (sb_sampler_page_files) */
    sb_pages_t      *pages;           /* served: pages of the asked ranks' lists (owned) */
    /* iterative kind with sample_shuffle */
    sb_index_array_t    perm;            /* np.arange(k) shuffled */
    uint64_t         perm_seed;       /* the seed perm was made with */
    int              perm_ready;
    /* iterative and files kinds: per loader thread (T) */
    uint64_t         samples_per_thread;  /* iterative: the block size of the thread split */
    uint64_t        *thread_samples;  /* entries of each thread */
    uint64_t        *thread_batches;  /* full batches each thread yields */
    uint64_t        *tail_start;      /* T+1: prefix of what threads leave (< batch each) */
    uint64_t         turn_steps;      /* DLIO's own batches: sum of thread_batches */
    turn_segment_t  *segments;        /* T at most */
    uint64_t         nsegments;
    uint64_t        *turn_sources;    /* T * nsegments at most */
    uint64_t         turn_sources_cap;
};

sb_sampler_dlio_t *
sb_sampler_dlio_new (const sb_sampler_cfg_t *cfg, char *err, size_t err_size)
{
    sb_sampler_dlio_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "sampler: out of memory");
        return NULL;
    }
    self->cfg = *cfg;
    const sb_sampler_cfg_t *c = &self->cfg;
    uint64_t effective = c->expected && c->expected < c->listed ? c->expected : c->listed;
    self->files_per_rank = effective / c->ranks;
    self->wide = c->listed > (uint64_t) UINT32_MAX + 1;
    if (self->files_per_rank && c->samples_per_file > UINT64_MAX / self->files_per_rank) {
        snprintf (err, err_size, "sampler: %llu files of %llu samples per rank overflow",
                  (unsigned long long) self->files_per_rank, (unsigned long long) c->samples_per_file);
        free (self);
        return NULL;
    }
    self->per_rank = self->files_per_rank * c->samples_per_file;
    uint64_t t = c->threads;
    int oom = 0;
    self->page_files = sb_sampler_page_files (c);
    if (c->file_shuffle != SB_SHUFFLE_OFF && c->served)
        oom |= !(self->pages = sb_pages_new (c->nranks));
    else if (c->file_shuffle != SB_SHUFFLE_OFF) {
        uint64_t used = self->files_per_rank * c->ranks;
        oom |= sb_ia_alloc (&self->lists, used, self->wide) != 0;
        oom |= sb_ia_alloc (&self->dealt, used, self->wide) != 0;
        oom |= sb_ia_alloc (&self->first_order, self->files_per_rank, self->wide) != 0;
        oom |= !(self->fill = calloc (c->ranks, sizeof *self->fill));
        if (!oom)   /* main.py initialize: the round-robin listing, trimmed */
            for (uint64_t r = 0; r < c->ranks; r++)
                for (uint64_t j = 0; j < self->files_per_rank; j++)
                    sb_ia_set (&self->lists, r * self->files_per_rank + j, r + j * c->ranks);
    }
    if (c->kind != SB_SAMPLER_DLIO_INDEX) {
        oom |= !(self->thread_samples = calloc (t, sizeof (uint64_t)));
        oom |= !(self->thread_batches = calloc (t, sizeof (uint64_t)));
        oom |= !(self->tail_start = calloc (t + 1, sizeof (uint64_t)));
        oom |= !(self->segments = calloc (t, sizeof (turn_segment_t)));
    }
    if (c->kind == SB_SAMPLER_DLIO_ITERATIVE && c->sample_shuffle != SB_SHUFFLE_OFF)
        oom |= sb_ia_alloc (&self->perm, self->per_rank, self->per_rank > (uint64_t) UINT32_MAX + 1) != 0;
    if (oom) {
        snprintf (err, err_size, "sampler: out of memory for %llu ranks of %llu files (%s)",
                  (unsigned long long) c->ranks, (unsigned long long) self->files_per_rank,
                  sb_sampler_kind_name (c->kind));
        sb_sampler_dlio_destroy (&self);
        return NULL;
    }
    return self;
}

void
sb_sampler_dlio_destroy (sb_sampler_dlio_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_sampler_dlio_t *self = *self_p;
    sb_ia_free (&self->lists);
    sb_ia_free (&self->dealt);
    sb_ia_free (&self->first_order);
    sb_ia_free (&self->perm);
    sb_pages_destroy (&self->pages);
    free (self->fill);
    free (self->thread_samples);
    free (self->thread_batches);
    free (self->tail_start);
    free (self->segments);
    free (self->turn_sources);
    free (self);
    *self_p = NULL;
}

/* np.random.seed(seed), failing as numpy does above 2**32 - 1 */
int
sb_sampler_dlio_seed (sb_np_mt_t *mt, uint64_t seed, const char *what, uint64_t epoch, char *err, size_t err_size)
{
    if (sb_np_seed (mt, seed) == 0)
        return 0;
    snprintf (err, err_size, "sampler: epoch %llu: %s seed %llu is above 2**32-1, where numpy's"
              " np.random.seed raises and DLIO stops", (unsigned long long) epoch, what,
              (unsigned long long) seed);
    return -1;
}

/* seed + epoch, saturated so that an overflow reads as out of numpy's range */
uint64_t
sb_sampler_dlio_seed_add (uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* config.py _reshard_files on every rank, the alltoall included: rank r
 * shuffles its list with the first seed (the same for every rank, and every
 * list has f files, so one order serves all), deals position i to rank
 * (i + r) % R; rank d takes what it is dealt in source-rank order and
 * shuffles it with seed + epoch + 31 * d. */
static int
s_reshard (sb_sampler_dlio_t *self, uint64_t epoch, char *err, size_t err_size)
{
    const sb_sampler_cfg_t *c = &self->cfg;
    uint64_t f = self->files_per_rank, ranks = c->ranks;
    sb_np_mt_t mt;
    uint64_t first_seed = c->seed_change_epoch ? sb_sampler_dlio_seed_add (c->seed, epoch) : c->seed;
    if (sb_sampler_dlio_seed (&mt, first_seed, "file_shuffle", epoch, err, err_size) != 0)
        return -1;
    uint64_t last_seed = sb_sampler_dlio_seed_add (sb_sampler_dlio_seed_add (c->seed, epoch), ranks > UINT64_MAX / 31 ? UINT64_MAX : 31 * (ranks - 1));
    if (last_seed > SB_NP_SEED_MAX)
        return sb_sampler_dlio_seed (&mt, last_seed, "file_shuffle (rank-dependent)", epoch, err, err_size);
    if (self->pages) {      /* served: the lists are planned elsewhere (sampler_plan.h); the last epoch's pages go */
        sb_pages_reset (self->pages);
        return 0;
    }
    for (uint64_t i = 0; i < f; i++)
        sb_ia_set (&self->first_order, i, i);
    sb_ia_shuffle (&mt, &self->first_order, 0, f);
    for (uint64_t d = 0; d < ranks; d++)
        self->fill[d] = 0;
    for (uint64_t r = 0; r < ranks; r++) {
        uint64_t d = r;      /* (i + r) % R for i = 0 */
        for (uint64_t i = 0; i < f; i++) {
            uint64_t file = sb_ia_get (&self->lists, r * f + sb_ia_get (&self->first_order, i));
            sb_ia_set (&self->dealt, d * f + self->fill[d]++, file);
            if (++d == ranks)
                d = 0;
        }
    }
    for (uint64_t d = 0; d < ranks; d++) {
        if (sb_sampler_dlio_seed (&mt, c->seed + epoch + 31 * d, "file_shuffle", epoch, err, err_size) != 0)
            return -1;
        sb_ia_shuffle (&mt, &self->dealt, d * f, f);
    }
    sb_index_array_t swap = self->lists;
    self->lists = self->dealt;
    self->dealt = swap;
    return 0;
}

/* build_sample_map_iter's sample_list (and VirtualIndexMap's, which only
 * matters for its seed): np.arange(k) shuffled with seed (+ epoch). */
static int
s_sample_shuffle (sb_sampler_dlio_t *self, uint64_t epoch, char *err, size_t err_size)
{
    const sb_sampler_cfg_t *c = &self->cfg;
    uint64_t seed = c->seed_change_epoch ? sb_sampler_dlio_seed_add (c->seed, epoch) : c->seed;
    sb_np_mt_t mt;
    if (sb_sampler_dlio_seed (&mt, seed, "sample_shuffle", epoch, err, err_size) != 0)
        return -1;
    if (c->kind != SB_SAMPLER_DLIO_ITERATIVE || (self->perm_ready && self->perm_seed == seed))
        return 0;
    for (uint64_t i = 0; i < self->per_rank; i++)
        sb_ia_set (&self->perm, i, i);
    sb_ia_shuffle (&mt, &self->perm, 0, self->per_rank);
    self->perm_seed = seed;
    self->perm_ready = 1;
    return 0;
}

/* The entries of each loader thread, the full batches it yields, and what
 * it leaves (less than a batch). */
static void
s_thread_counts (sb_sampler_dlio_t *self)
{
    const sb_sampler_cfg_t *c = &self->cfg;
    uint64_t t_count = c->threads, k = self->per_rank, f = self->files_per_rank;
    if (c->kind == SB_SAMPLER_DLIO_ITERATIVE) {
        /* blocks of spt entries, block b to thread b % T; only the last block may be short */
        uint64_t spt = k / t_count ? k / t_count : 1;
        uint64_t blocks = (k + spt - 1) / spt;
        self->samples_per_thread = spt;
        for (uint64_t t = 0; t < t_count; t++) {
            uint64_t mine = t < blocks ? (blocks - t + t_count - 1) / t_count : 0;
            uint64_t n = mine * spt;
            if (mine && (blocks - 1) % t_count == t)
                n -= blocks * spt - k;
            self->thread_samples[t] = n;
        }
    }
    else
        for (uint64_t t = 0; t < t_count; t++)
            self->thread_samples[t] = (t < f ? (f - t + t_count - 1) / t_count : 0) * c->samples_per_file;
    self->turn_steps = 0;
    self->tail_start[0] = 0;
    for (uint64_t t = 0; t < t_count; t++) {
        self->thread_batches[t] = self->thread_samples[t] / c->batch_size;
        self->turn_steps += self->thread_batches[t];
        self->tail_start[t + 1] = self->tail_start[t] + self->thread_samples[t] % c->batch_size;
    }
}

/* The turn-taking of threads (tf.data interleave, PyTorch's DataLoader over
 * iterable workers): round j takes one batch from each thread that has more
 * than j, in thread order. Rounds with the same threads form a segment. */
static int
s_turns (sb_sampler_dlio_t *self)
{
    uint64_t t_count = self->cfg.threads;
    self->nsegments = 0;
    uint64_t round = 0, step = 0, used = 0;
    for (;;) {
        /* the next level: the smallest batch count above `round` */
        uint64_t level = UINT64_MAX;
        for (uint64_t t = 0; t < t_count; t++)
            if (self->thread_batches[t] > round && self->thread_batches[t] < level)
                level = self->thread_batches[t];
        if (level == UINT64_MAX)
            break;
        uint64_t active = 0;
        for (uint64_t t = 0; t < t_count; t++)
            active += self->thread_batches[t] > round;
        if (used + active > self->turn_sources_cap) {
            uint64_t cap = self->turn_sources_cap ? self->turn_sources_cap * 2 : t_count * 2;
            while (cap < used + active)
                cap *= 2;
            uint64_t *grown = realloc (self->turn_sources, cap * sizeof *grown);
            if (!grown)
                return -1;
            self->turn_sources = grown;
            self->turn_sources_cap = cap;
        }
        turn_segment_t *s = &self->segments[self->nsegments++];
        *s = (turn_segment_t) { .step0 = step, .round0 = round, .active = active, .first_active = used };
        for (uint64_t t = 0; t < t_count; t++)
            if (self->thread_batches[t] > round)
                self->turn_sources[used++] = t;
        step += (level - round) * active;
        round = level;
    }
    return 0;
}

int
sb_sampler_dlio_epoch (sb_sampler_dlio_t *self, sb_sampler_epoch_t *info, char *err, size_t err_size)
{
    const sb_sampler_cfg_t *c = &self->cfg;
    uint64_t epoch = info->epoch;
    self->steps = 0;
    /* config.py reconfigure(epoch): the reshard, then the sample map's seed */
    if (c->file_shuffle != SB_SHUFFLE_OFF && s_reshard (self, epoch, err, err_size) != 0)
        return -1;
    if (c->sample_shuffle != SB_SHUFFLE_OFF && self->files_per_rank > 0
        && s_sample_shuffle (self, epoch, err, err_size) != 0)
        return -1;
    uint64_t steps = self->per_rank / c->batch_size;
    if (steps == 0) {
        snprintf (err, err_size, "sampler: %llu listed files (%llu used) give each of %llu ranks %llu files of"
                  " %llu samples, which do not fill one batch of %llu", (unsigned long long) c->listed,
                  (unsigned long long) (c->expected ? c->expected : c->listed), (unsigned long long) c->ranks,
                  (unsigned long long) self->files_per_rank, (unsigned long long) c->samples_per_file,
                  (unsigned long long) c->batch_size);
        return -1;
    }
    if (c->kind != SB_SAMPLER_DLIO_INDEX) {
        s_thread_counts (self);
        if (s_turns (self) != 0) {
            snprintf (err, err_size, "sampler: out of memory for %llu loader threads",
                      (unsigned long long) c->threads);
            return -1;
        }
    }
    if (c->max_steps && steps > c->max_steps)
        steps = c->max_steps;
    self->steps = steps;
    self->epoch = epoch;
    info->files_per_rank = self->files_per_rank;
    info->steps = steps;
    info->samples_per_rank = steps * c->batch_size;
    info->dropped = c->ranks * (self->per_rank - steps * c->batch_size);
    info->unused_files = c->listed - c->ranks * self->files_per_rank;
    return 0;
}

/* rank's j-th local file (catalog index): 0, or 1 when it is served and
 * its page has not arrived */
static inline int
s_local_file (const sb_sampler_dlio_t *self, uint64_t rank, uint64_t j, uint64_t *file)
{
    if (self->pages)
        return sb_pages_get (self->pages, rank - self->cfg.first_rank, j / self->page_files, j % self->page_files,
                             file) == 0 ? 0 : 1;
    if (self->cfg.file_shuffle != SB_SHUFFLE_OFF)
        *file = sb_ia_get (&self->lists, rank * self->files_per_rank + j);
    else
        *file = rank + j * self->cfg.ranks;
    return 0;
}

/* step q of the turn-taking: thread *t's batch *j (q < turn_steps) */
static void
s_turn_at (const sb_sampler_dlio_t *self, uint64_t q, uint64_t *t, uint64_t *j)
{
    uint64_t lo = 0, hi = self->nsegments;   /* the last segment with step0 <= q */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (self->segments[mid].step0 <= q)
            lo = mid;
        else
            hi = mid;
    }
    const turn_segment_t *s = &self->segments[lo];
    uint64_t r = q - s->step0;
    *t = self->turn_sources[s->first_active + r % s->active];
    *j = s->round0 + r / s->active;
}

/* tail position u: thread *t's entry *m among what the threads leave */
static void
s_tail_at (const sb_sampler_dlio_t *self, uint64_t u, uint64_t *t, uint64_t *m)
{
    uint64_t lo = 0, hi = self->cfg.threads;   /* the last thread with tail_start <= u */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (self->tail_start[mid] <= u)
            lo = mid;
        else
            hi = mid;
    }
    *t = lo;
    *m = self->thread_batches[lo] * self->cfg.batch_size + (u - self->tail_start[lo]);
}

/* The read at `position` of rank, with out->file the rank's local file
 * index j (not yet its catalog index). */
static void
s_locate (const sb_sampler_dlio_t *self, uint64_t position, sb_sample_ref_t *out)
{
    const sb_sampler_cfg_t *c = &self->cfg;
    uint64_t spf = c->samples_per_file, batch = c->batch_size;
    if (c->kind == SB_SAMPLER_DLIO_INDEX) {
        /* dlio_sampler yields 0..k-1; read_index: file i / spf, sample i % spf */
        out->file = position / spf;
        out->sample = position % spf;
        out->thread = (position / batch) % c->threads;
        return;
    }
    uint64_t q = position / batch, t, m;
    if (q < self->turn_steps) {
        uint64_t j;
        s_turn_at (self, q, &t, &j);
        m = j * batch + position % batch;
    }
    else
        s_tail_at (self, (q - self->turn_steps) * batch + position % batch, &t, &m);
    out->thread = t;
    if (c->kind == SB_SAMPLER_DLIO_FILES) {
        /* worker t reads every sample of local files t, t+T, ... */
        out->file = t + c->threads * (m / spf);
        out->sample = m % spf;
        return;
    }
    /* iterative: thread t's m-th entry is entry i of build_sample_map_iter */
    uint64_t spt = self->samples_per_thread;
    uint64_t i = (t + c->threads * (m / spt)) * spt + m % spt;
    uint64_t value = c->sample_shuffle != SB_SHUFFLE_OFF ? sb_ia_get (&self->perm, i) : i;
    out->file = (i / spf) % self->files_per_rank;
    out->sample = value % spf;
}

int
sb_sampler_dlio_at (const sb_sampler_dlio_t *self, uint64_t rank, uint64_t position, sb_sample_ref_t *out)
{
    if (rank >= self->cfg.ranks || position >= self->steps * self->cfg.batch_size)
        return -1;
    s_locate (self, position, out);
    return s_local_file (self, rank, out->file, &out->file);
}

/* How many positions from `position` on read files of the same page: the
 * index kind reads its files in order, to the end of the page; the others
 * the rest of the batch within one thread's run of entries and one file's
 * samples (1 where threads' leftovers are dealt, a batch a thread at most).
 * A walk over an epoch's positions steps a page or a file at a time. */
static uint64_t
s_same_file_run (const sb_sampler_dlio_t *self, uint64_t position)
{
    const sb_sampler_cfg_t *c = &self->cfg;
    uint64_t spf = c->samples_per_file, batch = c->batch_size, run;
    if (c->kind == SB_SAMPLER_DLIO_INDEX) {   /* in order: to the end of the page */
        uint64_t page_end = (position / spf / self->page_files + 1) * self->page_files;
        return page_end * spf - position;
    }
    uint64_t q = position / batch;
    if (q >= self->turn_steps)
        return 1;
    uint64_t t, j;
    s_turn_at (self, q, &t, &j);
    uint64_t m = j * batch + position % batch;
    run = batch - position % batch;
    if (c->kind == SB_SAMPLER_DLIO_FILES) {
        if (spf - m % spf < run)
            run = spf - m % spf;
        return run;
    }
    uint64_t spt = self->samples_per_thread;
    uint64_t i = (t + c->threads * (m / spt)) * spt + m % spt;
    if (spt - m % spt < run)
        run = spt - m % spt;
    if (spf - i % spf < run)
        run = spf - i % spf;
    return run;
}

int
sb_sampler_dlio_page_of (const sb_sampler_dlio_t *self, uint64_t rank, uint64_t position, uint64_t *page,
                         uint64_t *run)
{
    uint64_t end = self->steps * self->cfg.batch_size;
    if (!self->pages || rank >= self->cfg.ranks || position >= end)
        return -1;
    sb_sample_ref_t ref;
    s_locate (self, position, &ref);
    *page = ref.file / self->page_files;
    if (run) {
        *run = s_same_file_run (self, position);
        if (*run > end - position)
            *run = end - position;
    }
    return 0;
}

struct sb_pages *
sb_sampler_dlio_pages (sb_sampler_dlio_t *self)
{
    return self->pages;
}

int
sb_sampler_dlio_wide (const sb_sampler_dlio_t *self)
{
    return self->wide;
}
