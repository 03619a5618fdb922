/* sampler: the per-rank read order of an epoch (see sampler.h). */
#include "sampler.h"
#include "sampler_dlio.h"
#include "sampler_pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sb_sampler {
    sb_sampler_cfg_t   cfg;
    sb_sampler_epoch_t info;
    int                prepared;
    uint64_t           next_epoch;  /* epochs are prepared in order */
    sb_sampler_dlio_t *dlio;        /* the DLIO kinds (owned) */
    sb_shard_plan_t    plan;        /* SB_SAMPLER_GLOBAL */
    sb_epoch_order_t   order;
};

static const char *s_kind_names[] = { "dlio_index", "dlio_iterative", "dlio_files", "global" };

const char *
sb_sampler_kind_name (sb_sampler_kind_t kind)
{
    return (unsigned) kind < sizeof s_kind_names / sizeof *s_kind_names ? s_kind_names[kind] : "?";
}

int
sb_sampler_kind_parse (const char *name, sb_sampler_kind_t *kind)
{
    for (unsigned i = 0; name && i < sizeof s_kind_names / sizeof *s_kind_names; i++)
        if (strcmp (name, s_kind_names[i]) == 0) {
            *kind = (sb_sampler_kind_t) i;
            return 0;
        }
    return -1;
}

sb_sampler_t *
sb_sampler_new (const sb_sampler_cfg_t *cfg, char *err, size_t err_size)
{
    if (cfg->samples_per_file == 0 || cfg->ranks == 0 || cfg->batch_size == 0 || cfg->threads == 0
        || cfg->nranks == 0 || cfg->first_rank >= cfg->ranks || cfg->nranks > cfg->ranks - cfg->first_rank) {
        snprintf (err, err_size, "sampler: samples per file, ranks, batch size and threads must be at least 1, and"
                  " ranks %llu..%llu within the run's %llu", (unsigned long long) cfg->first_rank,
                  (unsigned long long) (cfg->first_rank + cfg->nranks - 1), (unsigned long long) cfg->ranks);
        return NULL;
    }
    if (sb_sampler_kind_name (cfg->kind)[0] == '?') {
        snprintf (err, err_size, "sampler: unknown kind %d", (int) cfg->kind);
        return NULL;
    }
    sb_sampler_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "sampler: out of memory");
        return NULL;
    }
    self->cfg = *cfg;
    self->next_epoch = 1;
    if (cfg->kind != SB_SAMPLER_GLOBAL && !(self->dlio = sb_sampler_dlio_new (cfg, err, err_size))) {
        free (self);
        return NULL;
    }
    return self;
}

void
sb_sampler_destroy (sb_sampler_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_sampler_dlio_destroy (&(*self_p)->dlio);
    free (*self_p);
    *self_p = NULL;
}

/* shardbench's global order: one keyed permutation of every sample, equal
 * contiguous shards (lib/dataset/shard.h); threads take batches in turn. */
static int
s_global_epoch (sb_sampler_t *self, uint64_t epoch, char *err, size_t err_size)
{
    const sb_sampler_cfg_t *c = &self->cfg;
    uint64_t files = c->expected && c->expected < c->listed ? c->expected : c->listed;
    if (sb_shard_plan (files, c->samples_per_file, c->ranks, c->batch_size, &self->plan, err, err_size) != 0)
        return -1;
    uint64_t steps = self->plan.batches;
    if (c->max_steps && steps > c->max_steps)
        steps = c->max_steps;
    sb_epoch_order_init (&self->order, &self->plan, c->sample_shuffle, c->file_shuffle, c->seed, epoch);
    self->info = (sb_sampler_epoch_t) {
        .epoch = epoch, .files_per_rank = files / c->ranks, .steps = steps,
        .samples_per_rank = steps * c->batch_size,
        .dropped = self->plan.samples - steps * c->batch_size * c->ranks, .unused_files = c->listed - files,
    };
    return 0;
}

int
sb_sampler_epoch (sb_sampler_t *self, uint64_t epoch, char *err, size_t err_size)
{
    if (epoch != self->next_epoch) {
        snprintf (err, err_size, "sampler: epoch %llu prepared out of order (next is %llu)",
                  (unsigned long long) epoch, (unsigned long long) self->next_epoch);
        return -1;
    }
    self->prepared = 0;
    int rc;
    if (self->cfg.kind == SB_SAMPLER_GLOBAL)
        rc = s_global_epoch (self, epoch, err, err_size);
    else {
        self->info = (sb_sampler_epoch_t) { .epoch = epoch };
        rc = sb_sampler_dlio_epoch (self->dlio, &self->info, err, err_size);
    }
    if (rc != 0)
        return -1;
    self->prepared = 1;
    self->next_epoch = epoch + 1;
    return 0;
}

const sb_sampler_epoch_t *
sb_sampler_info (const sb_sampler_t *self)
{
    return &self->info;
}

int
sb_sampler_at (const sb_sampler_t *self, uint64_t rank, uint64_t position, sb_sample_ref_t *out)
{
    const sb_sampler_cfg_t *c = &self->cfg;
    if (!self->prepared || rank < c->first_rank || rank - c->first_rank >= c->nranks
        || position >= self->info.samples_per_rank)
        return -1;
    if (c->kind != SB_SAMPLER_GLOBAL)
        return sb_sampler_dlio_at (self->dlio, rank, position, out);
    uint64_t sample = sb_epoch_order_sample (&self->order, rank, position);
    out->file = sample / c->samples_per_file;
    out->sample = sample % c->samples_per_file;
    out->thread = (position / c->batch_size) % c->threads;
    return 0;
}

/* ------------------------------------------------------------ served lists */

static sb_pages_t *
s_pages (const sb_sampler_t *self)
{
    return self && self->dlio ? sb_sampler_dlio_pages (self->dlio) : NULL;
}

int
sb_sampler_served (const sb_sampler_t *self)
{
    return s_pages (self) != NULL;
}

int
sb_sampler_page_of (const sb_sampler_t *self, uint64_t rank, uint64_t position, uint64_t *page, uint64_t *run)
{
    const sb_sampler_cfg_t *c = &self->cfg;
    if (!self->prepared || !s_pages (self) || rank < c->first_rank || rank - c->first_rank >= c->nranks)
        return -1;
    return sb_sampler_dlio_page_of (self->dlio, rank, position, page, run);
}

static int
s_slot (const sb_sampler_t *self, uint64_t rank, uint64_t *slot)
{
    if (!s_pages (self) || rank < self->cfg.first_rank || rank - self->cfg.first_rank >= self->cfg.nranks)
        return -1;
    *slot = rank - self->cfg.first_rank;
    return 0;
}

int
sb_sampler_page_state (const sb_sampler_t *self, uint64_t rank, uint64_t page)
{
    uint64_t slot;
    return s_slot (self, rank, &slot) == 0 ? sb_pages_state (s_pages (self), slot, page) : 0;
}

int
sb_sampler_page_ask (sb_sampler_t *self, uint64_t rank, uint64_t page, uint64_t last)
{
    uint64_t slot;
    return s_slot (self, rank, &slot) == 0 ? sb_pages_ask (s_pages (self), slot, page, last) : -1;
}

void
sb_sampler_page_touch (sb_sampler_t *self, uint64_t rank, uint64_t page, uint64_t last)
{
    uint64_t slot;
    if (s_slot (self, rank, &slot) == 0)
        sb_pages_touch (s_pages (self), slot, page, last);
}

uint64_t
sb_sampler_page_size (const sb_sampler_t *self)
{
    return sb_sampler_page_files (&self->cfg);
}

uint64_t
sb_sampler_page_files (const sb_sampler_cfg_t *cfg)
{
    uint64_t spf = cfg->samples_per_file ? cfg->samples_per_file : 1;
    uint64_t batch_files = cfg->batch_size / spf + 1;
    uint64_t page = SB_SAMPLER_PAGE;
    while (page < 2 * batch_files && page < SB_SAMPLER_PAGE_MAX)
        page *= 2;
    return page;
}

int
sb_sampler_page_put (sb_sampler_t *self, uint64_t rank, uint64_t page, const uint64_t *files, size_t count,
                     char *err, size_t err_size)
{
    uint64_t slot, f = self->info.files_per_rank, per = sb_sampler_page_files (&self->cfg);
    uint64_t first = page * per;
    uint64_t want = first < f ? (f - first < per ? f - first : per) : 0;
    if (s_slot (self, rank, &slot) != 0 || sb_pages_state (s_pages (self), slot, page) != 1) {
        snprintf (err, err_size, "page %llu of rank %llu's file list was not asked for", (unsigned long long) page,
                  (unsigned long long) rank);
        return -1;
    }
    if (count != want) {
        snprintf (err, err_size, "page %llu of rank %llu's file list has %zu files, not %llu",
                  (unsigned long long) page, (unsigned long long) rank, count, (unsigned long long) want);
        return -1;
    }
    for (size_t i = 0; i < count; i++)
        if (files[i] >= self->cfg.listed) {
            snprintf (err, err_size, "page %llu of rank %llu's file list names catalog object %llu of %llu",
                      (unsigned long long) page, (unsigned long long) rank, (unsigned long long) files[i],
                      (unsigned long long) self->cfg.listed);
            return -1;
        }
    if (sb_pages_put (s_pages (self), slot, page, files, count, sb_sampler_dlio_wide (self->dlio)) != 0) {
        snprintf (err, err_size, "out of memory for a page of rank %llu's file list", (unsigned long long) rank);
        return -1;
    }
    return 0;
}

void
sb_sampler_page_release (sb_sampler_t *self, uint64_t rank, uint64_t position)
{
    uint64_t slot;
    if (s_slot (self, rank, &slot) == 0)
        sb_pages_release (s_pages (self), slot, position);
}

uint64_t
sb_sampler_page_held (const sb_sampler_t *self, uint64_t *bytes)
{
    if (bytes)
        *bytes = 0;
    return s_pages (self) ? sb_pages_held (s_pages (self), bytes) : 0;
}
