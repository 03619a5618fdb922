/* live: the run's live figures (see live.h). Per-rank and per-host arrays
 * sized at the start, hosts found by name in a small open-addressing table
 * (thousands of hosts join once each), endpoints in a short list. */
#include "live.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t host;                  /* index into hosts */
    uint64_t steps, samples, bytes, reads;
    uint64_t read_ns, compute_ns, io_wait_ns, barrier_ns;
    uint64_t metric_compute_ns, excluded_ns;
    uint64_t in_flight;
    double   last_stats;            /* 0: none this phase */
    double   done_at;               /* 0: not done */
    double   au_done;               /* recorded AU once done */
} s_rank_t;

typedef struct {
    char          *name;            /* owned */
    uint64_t       first_rank, ranks, lowest_rank;
    int            contiguous;
    double         last_heard;
    uint64_t       run_samples, run_bytes;
    sb_histogram_t read_latency;
} s_host_t;

typedef struct {
    char          *name;            /* owned */
    uint64_t       requests, bytes, errors, retries;
    sb_histogram_t latency;
} s_endpoint_t;

struct _sb_live_t {
    uint64_t   nranks;
    double     stall_after_s;
    s_rank_t  *ranks;               /* owned, nranks */
    s_host_t  *hosts;               /* owned */
    size_t     nhosts, hosts_cap;
    uint32_t  *host_index;          /* open addressing: host index + 1; owned */
    size_t     host_index_size;     /* a power of two */
    s_endpoint_t *endpoints;        /* owned */
    size_t     nendpoints;
    char       phase[32];
    uint64_t   epoch, epochs, steps, items_done, items_total, batch_size;
    double     phase_started, run_started;
    uint64_t   released;
    uint64_t   run_samples, run_bytes, errors, retries;
    double     au_sum;              /* finished train epochs' recorded AU */
    uint64_t   au_epochs;
    double     epoch_s_sum;         /* finished train epochs' durations */
    uint64_t   epochs_timed;
};

sb_live_t *
sb_live_new (uint64_t ranks, double stall_after_s)
{
    sb_live_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->nranks = ranks;
    self->stall_after_s = stall_after_s > 0 ? stall_after_s : 1.5;
    self->ranks = calloc (ranks ? ranks : 1, sizeof *self->ranks);
    self->endpoints = calloc (SB_MAX_LIVE_ENDPOINTS, sizeof *self->endpoints);
    if (!self->ranks || !self->endpoints) {
        sb_live_destroy (&self);
        return NULL;
    }
    for (uint64_t r = 0; r < ranks; r++)
        self->ranks[r].host = UINT64_MAX;
    return self;
}

void
sb_live_destroy (sb_live_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_live_t *self = *self_p;
    for (size_t h = 0; h < self->nhosts; h++)
        free (self->hosts[h].name);
    for (size_t e = 0; e < self->nendpoints; e++)
        free (self->endpoints[e].name);
    free (self->hosts);
    free (self->host_index);
    free (self->endpoints);
    free (self->ranks);
    free (self);
    *self_p = NULL;
}

/* ---------------------------------------------------------------- hosts */

static uint64_t
s_hash (const char *s)
{
    uint64_t h = 1469598103934665603ULL;    /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char) *s) * 1099511628211ULL;
    return h;
}

static int
s_index_grow (sb_live_t *self)
{
    size_t size = self->host_index_size ? self->host_index_size * 2 : 64;
    uint32_t *table = calloc (size, sizeof *table);
    if (!table)
        return -1;
    for (size_t h = 0; h < self->nhosts; h++) {
        size_t i = s_hash (self->hosts[h].name) & (size - 1);
        while (table[i])
            i = (i + 1) & (size - 1);
        table[i] = (uint32_t) h + 1;
    }
    free (self->host_index);
    self->host_index = table;
    self->host_index_size = size;
    return 0;
}

/* The index of host, added when new. Returns -1 when out of memory. */
static int64_t
s_host (sb_live_t *self, const char *name)
{
    if (self->host_index_size) {
        size_t i = s_hash (name) & (self->host_index_size - 1);
        for (; self->host_index[i]; i = (i + 1) & (self->host_index_size - 1))
            if (!strcmp (self->hosts[self->host_index[i] - 1].name, name))
                return self->host_index[i] - 1;
    }
    if (self->nhosts >= UINT32_MAX - 1)
        return -1;
    if ((self->nhosts + 1) * 2 > self->host_index_size && s_index_grow (self) != 0)
        return -1;
    if (self->nhosts == self->hosts_cap) {
        size_t cap = self->hosts_cap ? self->hosts_cap * 2 : 16;
        s_host_t *hosts = realloc (self->hosts, cap * sizeof *hosts);
        if (!hosts)
            return -1;
        self->hosts = hosts;
        self->hosts_cap = cap;
    }
    s_host_t *h = &self->hosts[self->nhosts];
    memset (h, 0, sizeof *h);
    h->name = strdup (name);
    if (!h->name)
        return -1;
    size_t i = s_hash (name) & (self->host_index_size - 1);
    while (self->host_index[i])
        i = (i + 1) & (self->host_index_size - 1);
    self->host_index[i] = (uint32_t) self->nhosts + 1;
    return (int64_t) self->nhosts++;
}

int
sb_live_join (sb_live_t *self, uint64_t first, uint64_t count, const char *host, double now)
{
    if (!self)
        return 0;
    int64_t hi = s_host (self, host ? host : "");
    if (hi < 0)
        return -1;
    s_host_t *h = &self->hosts[hi];
    for (uint64_t r = first; r < first + count && r < self->nranks; r++)
        self->ranks[r].host = (uint64_t) hi;
    if (!h->ranks) {
        h->first_rank = h->lowest_rank = first;
        h->contiguous = 1;
    }
    else {
        if (first != h->first_rank + h->ranks)
            h->contiguous = 0;
        if (first < h->lowest_rank)
            h->lowest_rank = first;
    }
    h->ranks += count;
    h->last_heard = now;
    if (!self->run_started)
        self->run_started = now;
    return 0;
}

/* ---------------------------------------------------------------- feeding */

void
sb_live_phase (sb_live_t *self, const char *phase, uint64_t epoch, uint64_t epochs, uint64_t steps,
               uint64_t total_items, uint64_t batch_size, double now)
{
    if (!self)
        return;
    snprintf (self->phase, sizeof self->phase, "%s", phase ? phase : "");
    self->epoch = epoch;
    self->epochs = epochs;
    self->steps = steps;
    self->items_total = total_items;
    self->items_done = 0;
    self->batch_size = batch_size;
    self->phase_started = now;
    self->released = 0;
    if (!self->run_started)
        self->run_started = now;
    for (uint64_t r = 0; r < self->nranks; r++) {
        uint64_t host = self->ranks[r].host;
        memset (&self->ranks[r], 0, sizeof self->ranks[r]);
        self->ranks[r].host = host;
        self->ranks[r].au_done = NAN;
    }
}

void
sb_live_heard (sb_live_t *self, uint64_t first, uint64_t count, double now)
{
    if (!self || first >= self->nranks)
        return;
    uint64_t last_host = UINT64_MAX;
    for (uint64_t r = first; r < first + count && r < self->nranks; r++)
        if (self->ranks[r].host != last_host && self->ranks[r].host < self->nhosts) {
            last_host = self->ranks[r].host;
            self->hosts[last_host].last_heard = now;
        }
}

void
sb_live_stats (sb_live_t *self, uint64_t rank, const sb_live_interval_t *d, double now)
{
    if (!self || rank >= self->nranks)
        return;
    s_rank_t *r = &self->ranks[rank];
    r->steps += d->steps;
    r->samples += d->samples;
    r->bytes += d->bytes;
    r->reads += d->reads;
    r->read_ns += d->read_ns;
    r->compute_ns += d->compute_ns;
    r->io_wait_ns += d->io_wait_ns;
    r->barrier_ns += d->barrier_ns;
    r->metric_compute_ns += d->metric_compute_ns;
    r->excluded_ns += d->excluded_ns;
    r->in_flight = d->in_flight;
    r->last_stats = now;
    self->run_samples += d->samples;
    self->run_bytes += d->bytes;
    if (r->host < self->nhosts) {
        self->hosts[r->host].run_samples += d->samples;
        self->hosts[r->host].run_bytes += d->bytes;
    }
}

void
sb_live_rank_done (sb_live_t *self, uint64_t rank, const sb_live_rank_done_t *d, double now)
{
    if (!self || rank >= self->nranks)
        return;
    s_rank_t *r = &self->ranks[rank];
    r->done_at = now;
    r->au_done = d->dlio_au_pct;
    r->in_flight = 0;
    /* its recorded split replaces the intervals' (the same counters, summed by the worker) */
    r->compute_ns = (uint64_t) (d->compute_s * 1e9);
    r->io_wait_ns = (uint64_t) (d->io_wait_s * 1e9);
    r->barrier_ns = (uint64_t) (d->barrier_s * 1e9);
    if (r->steps < self->steps && !strcmp (self->phase, "train"))
        r->steps = self->steps;
    if (r->host < self->nhosts && d->read_latency && d->read_latency_bins)
        sb_histogram_merge_counts (&self->hosts[r->host].read_latency, d->read_latency,
                                   d->read_latency_bins < SB_HISTOGRAM_BINS ? d->read_latency_bins
                                                                            : SB_HISTOGRAM_BINS);
}

void
sb_live_phase_end (sb_live_t *self, double epoch_dlio_au_pct, double now)
{
    if (!self)
        return;
    if (isfinite (epoch_dlio_au_pct)) {
        self->au_sum += epoch_dlio_au_pct;
        self->au_epochs++;
    }
    if (!strcmp (self->phase, "train") && now > self->phase_started) {
        self->epoch_s_sum += now - self->phase_started;
        self->epochs_timed++;
    }
}

void
sb_live_step_released (sb_live_t *self, uint64_t released, double now)
{
    (void) now;
    if (self)
        self->released = released;
}

void
sb_live_items (sb_live_t *self, uint64_t done)
{
    if (self)
        self->items_done = done;
}

void
sb_live_endpoint (sb_live_t *self, uint64_t rank, const char *endpoint, uint64_t requests, uint64_t bytes,
                  uint64_t errors, uint64_t retries, const uint64_t *bins, size_t n)
{
    (void) rank;
    if (!self || !endpoint)
        return;
    s_endpoint_t *e = NULL;
    for (size_t i = 0; i < self->nendpoints && !e; i++)
        if (!strcmp (self->endpoints[i].name, endpoint))
            e = &self->endpoints[i];
    if (!e) {
        if (self->nendpoints == SB_MAX_LIVE_ENDPOINTS)
            return;
        e = &self->endpoints[self->nendpoints];
        memset (e, 0, sizeof *e);
        e->name = strdup (endpoint);
        if (!e->name)
            return;
        self->nendpoints++;
    }
    e->requests += requests;
    e->bytes += bytes;
    e->errors += errors;
    e->retries += retries;
    self->errors += errors;
    self->retries += retries;
    if (bins && n)
        sb_histogram_merge_counts (&e->latency, bins, n < SB_HISTOGRAM_BINS ? n : SB_HISTOGRAM_BINS);
}

/* ---------------------------------------------------------------- views */

/* DLIO's AU of a rank so far, from its STATS: the compute of its window's
 * steps over its time (from the phase's start on the coordinator's clock
 * to its last STATS) less the excluded steps' proc time. Not the recorded figure once done:
 * that one is shown beside it (recorded_au_pct), and the two agree to
 * within the messages' delay. */
static double
s_rank_au (const sb_live_t *self, const s_rank_t *r, double now)
{
    (void) now;
    if (!r->steps)
        return NAN;
    /* as of its last report (the compute since then is not in yet); a finished rank's stops at its end */
    double end = r->done_at > 0 ? r->done_at : r->last_stats;
    double span = end - self->phase_started - (double) r->excluded_ns / 1e9;
    if (span <= 0)
        return NAN;
    double au = 100.0 * ((double) r->metric_compute_ns / 1e9) / span;
    return au > 100 ? 100 : au;
}

static int
s_silent (const sb_live_t *self, const s_host_t *h, double now, double *silent_s)
{
    double quiet = now - h->last_heard;
    *silent_s = h->last_heard > 0 && quiet > self->stall_after_s ? quiet : 0;
    return *silent_s > 0;
}

static int
s_stepped (const sb_live_t *self)
{
    return self->steps > 0;
}

const char *
sb_live_phase_name (const sb_live_t *self)
{
    return self ? self->phase : "";
}

void
sb_live_run_view (const sb_live_t *self, double now, sb_live_run_view_t *v)
{
    memset (v, 0, sizeof *v);
    v->phase = self->phase;
    v->epoch = self->epoch;
    v->epochs = self->epochs;
    v->steps = self->steps;
    v->ranks = self->nranks;
    v->hosts = self->nhosts;
    v->items_total = self->items_total;
    v->run_samples = self->run_samples;
    v->run_bytes = self->run_bytes;
    v->errors = self->errors;
    v->retries = self->retries;
    v->phase_elapsed_s = self->phase_started > 0 ? now - self->phase_started : 0;
    v->run_elapsed_s = self->run_started > 0 ? now - self->run_started : 0;
    v->first_done_s = v->last_done_s = -1;
    v->run_au_pct = self->au_epochs ? self->au_sum / (double) self->au_epochs : NAN;
    v->run_au_epochs = self->au_epochs;
    v->step_min = UINT64_MAX;
    double au_sum = 0;
    uint64_t au_n = 0;
    for (uint64_t i = 0; i < self->nranks; i++) {
        const s_rank_t *r = &self->ranks[i];
        uint64_t steps = self->steps && r->steps > self->steps ? self->steps : r->steps;
        v->steps_done += steps;
        if (steps < v->step_min)
            v->step_min = steps;
        v->samples += r->samples;
        v->bytes += r->bytes;
        v->in_flight += r->in_flight;
        if (r->done_at > 0) {
            v->ranks_done++;
            double at = r->done_at - self->phase_started;
            if (v->first_done_s < 0 || at < v->first_done_s)
                v->first_done_s = at;
            if (at > v->last_done_s)
                v->last_done_s = at;
        }
        double au = s_rank_au (self, r, now);
        if (isfinite (au)) {
            au_sum += au;
            au_n++;
        }
    }
    if (v->step_min == UINT64_MAX)
        v->step_min = 0;
    if (v->ranks_done < self->nranks)
        v->last_done_s = -1;
    /* DLIO's epoch AU is the sum over ranks over comm_size: a rank without
     * a step yet is not in it until it has one (not a 0 that drags the mean) */
    v->au_pct = au_n ? au_sum / (double) au_n : NAN;
    if (!s_stepped (self))
        v->items_done = self->items_done ? self->items_done : v->samples;
    for (size_t h = 0; h < self->nhosts; h++) {
        double silent;
        v->silent_hosts += (uint64_t) s_silent (self, &self->hosts[h], now, &silent);
    }
    /* ETAs from the steps' pace this epoch; the run's adds the epochs to come at the finished ones' mean length */
    v->epoch_eta_s = v->run_eta_s = -1;
    uint64_t total = self->steps * self->nranks;
    double elapsed = v->phase_elapsed_s;
    if (s_stepped (self) && total) {
        if (v->steps_done >= total)
            v->epoch_eta_s = 0;
        else if (v->steps_done > 0 && elapsed > 0)
            v->epoch_eta_s = elapsed * (double) (total - v->steps_done) / (double) v->steps_done;
    }
    else if (!s_stepped (self) && self->items_total && v->items_done > 0 && elapsed > 0)
        v->epoch_eta_s = v->items_done >= self->items_total ? 0
                       : elapsed * (double) (self->items_total - v->items_done) / (double) v->items_done;
    if (v->epoch_eta_s >= 0 && !strcmp (self->phase, "train") && self->epochs >= self->epoch) {
        uint64_t to_come = self->epochs - self->epoch;
        double per_epoch = self->epochs_timed ? self->epoch_s_sum / (double) self->epochs_timed
                                              : elapsed + v->epoch_eta_s;
        v->run_eta_s = v->epoch_eta_s + (double) to_come * per_epoch;
    }
    else if (v->epoch_eta_s >= 0 && strcmp (self->phase, "train"))
        v->run_eta_s = -1;
}

int
sb_live_rank_view (const sb_live_t *self, uint64_t rank, double now, sb_live_rank_view_t *v)
{
    if (!self || rank >= self->nranks)
        return -1;
    const s_rank_t *r = &self->ranks[rank];
    memset (v, 0, sizeof *v);
    v->rank = rank;
    v->host = r->host;
    v->steps = r->steps;
    v->samples = r->samples;
    v->bytes = r->bytes;
    v->reads = r->reads;
    v->read_s = (double) r->read_ns / 1e9;
    v->compute_s = (double) r->compute_ns / 1e9;
    v->io_wait_s = (double) r->io_wait_ns / 1e9;
    v->barrier_s = (double) r->barrier_ns / 1e9;
    v->au_pct = s_rank_au (self, r, now);
    v->recorded_au_pct = r->done_at > 0 ? r->au_done : NAN;
    v->in_flight = r->in_flight;
    v->done = r->done_at > 0;
    v->last_stats_s = r->last_stats > 0 ? now - r->last_stats : -1;
    return 0;
}

size_t
sb_live_hosts (const sb_live_t *self)
{
    return self ? self->nhosts : 0;
}

int
sb_live_host_view (const sb_live_t *self, size_t host, double now, sb_live_host_view_t *v)
{
    if (!self || host >= self->nhosts)
        return -1;
    const s_host_t *h = &self->hosts[host];
    memset (v, 0, sizeof *v);
    v->host = h->name;
    v->first_rank = h->contiguous ? h->first_rank : h->lowest_rank;
    v->contiguous = h->contiguous;
    v->ranks = h->ranks;
    v->run_samples = h->run_samples;
    v->run_bytes = h->run_bytes;
    v->read_latency = &h->read_latency;
    v->last_heard_s = h->last_heard > 0 ? now - h->last_heard : 0;
    s_silent (self, h, now, &v->silent_s);
    v->steps_min = UINT64_MAX;
    v->done_s = -1;
    double au_sum = 0, last_done = 0;
    uint64_t au_n = 0;
    /* its ranks: contiguous ranges are walked directly, else every rank is looked at */
    uint64_t from = h->contiguous ? h->first_rank : 0;
    uint64_t to = h->contiguous ? h->first_rank + h->ranks : self->nranks;
    for (uint64_t i = from; i < to && i < self->nranks; i++) {
        const s_rank_t *r = &self->ranks[i];
        if (r->host != host)
            continue;
        uint64_t steps = self->steps && r->steps > self->steps ? self->steps : r->steps;
        v->steps_done += steps;
        if (steps < v->steps_min)
            v->steps_min = steps;
        v->samples += r->samples;
        v->bytes += r->bytes;
        v->barrier_s += (double) r->barrier_ns / 1e9;
        v->io_wait_s += (double) r->io_wait_ns / 1e9;
        if (r->done_at > 0) {
            v->ranks_done++;
            if (r->done_at > last_done)
                last_done = r->done_at;
        }
        double au = s_rank_au (self, r, now);
        if (isfinite (au)) {
            au_sum += au;
            au_n++;
        }
    }
    if (v->steps_min == UINT64_MAX)
        v->steps_min = 0;
    v->au_pct = au_n ? au_sum / (double) au_n : NAN;
    if (v->ranks && v->ranks_done == v->ranks)
        v->done_s = last_done - self->phase_started;
    return 0;
}

/* slowest first: silent, then fewest steps, then lowest AU, then longest quiet */
static int
s_slower (const sb_live_host_view_t *a, const sb_live_host_view_t *b)
{
    if ((a->silent_s > 0) != (b->silent_s > 0))
        return a->silent_s > 0;
    if (a->steps_min != b->steps_min)
        return a->steps_min < b->steps_min;
    double au_a = isfinite (a->au_pct) ? a->au_pct : -1, au_b = isfinite (b->au_pct) ? b->au_pct : -1;
    if (au_a != au_b)
        return au_a < au_b;
    return a->last_heard_s > b->last_heard_s;
}

size_t
sb_live_slowest_hosts (const sb_live_t *self, double now, size_t *out, size_t n)
{
    if (!self || !n)
        return 0;
    sb_live_host_view_t *best = calloc (n, sizeof *best);
    if (!best)
        return 0;
    size_t have = 0;
    /* one pass keeping the n slowest in order (n is a screenful) */
    for (size_t h = 0; h < self->nhosts; h++) {
        sb_live_host_view_t v;
        if (sb_live_host_view (self, h, now, &v) != 0)
            continue;
        size_t at = have;
        while (at > 0 && s_slower (&v, &best[at - 1]))
            at--;
        if (at >= n)
            continue;
        size_t move = (have < n ? have : n - 1) - at;
        memmove (&best[at + 1], &best[at], move * sizeof *best);
        memmove (&out[at + 1], &out[at], move * sizeof *out);
        best[at] = v;
        out[at] = h;
        if (have < n)
            have++;
    }
    free (best);
    return have;
}

size_t
sb_live_endpoints (const sb_live_t *self)
{
    return self ? self->nendpoints : 0;
}

int
sb_live_endpoint_view (const sb_live_t *self, size_t index, sb_live_endpoint_view_t *v)
{
    if (!self || index >= self->nendpoints)
        return -1;
    const s_endpoint_t *e = &self->endpoints[index];
    v->endpoint = e->name;
    v->requests = e->requests;
    v->bytes = e->bytes;
    v->errors = e->errors;
    v->retries = e->retries;
    v->latency = &e->latency;
    return 0;
}
