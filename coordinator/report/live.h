/* live: the run's figures as they stand now, for whoever watches a run
 * (the progress block, progress.h; the OpenMetrics endpoint).
 *
 * The session feeds it what the workers report (STATS every second per
 * busy rank, RANK_DONE, ENDPOINT_STATS, any message as a sign of life) and
 * what it decides (a phase or epoch begins, a step is released); readers
 * take views. Everything is counted as the recorded figures are, so that
 * what a watcher sees at the end of an epoch is what the database keeps:
 *
 * - progress is in steps computed (a rank's step counts once its compute
 *   ended), never in reads: prefetch runs ahead of the steps;
 * - AU is DLIO's (lib/metrics/dlio_metrics.h): per rank the compute of the
 *   steps in DLIO's window over the rank's time less the proc time of the
 *   steps DLIO leaves out, from its STATS (a finished rank's stops at its
 *   end; its recorded figure is beside it); an epoch's is the mean over
 *   ranks, the run's the mean of the finished epochs' recorded figures;
 * - a host is silent when none of its workers sent anything for longer
 *   than stall_after_s (a live worker sends at least a heartbeat per
 *   heartbeat interval, so 1.5 intervals name a frozen host within two).
 *
 * Ownership: the caller owns the model (sb_live_new / sb_live_destroy);
 * views and the strings in them are borrowed and valid until the next
 * call that feeds the model. One thread: the session's. */
#ifndef SB_LIVE_H
#define SB_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "histogram.h"

#define SB_MAX_LIVE_ENDPOINTS 256   /* endpoints counted; more are left out */

typedef struct _sb_live_t sb_live_t;

/* ranks: the run's ranks (rank ids 0..ranks-1). stall_after_s: the silence
 * after which a host is reported silent. NULL when out of memory. */
sb_live_t *sb_live_new (uint64_t ranks, double stall_after_s);
void sb_live_destroy (sb_live_t **self_p);

/* --------------------------------------------------------------- feeding */

/* A worker joined: ranks [first, first + count) run on host (copied).
 * Returns 0, or -1 when out of memory. */
int sb_live_join (sb_live_t *self, uint64_t first, uint64_t count, const char *host, double now);

/* A phase begins ("train", "eval", "datagen", "checkpoint"): epoch of
 * epochs (0 of 0: none), steps per rank (0: not a stepped phase; then
 * progress is in items: total_items per phase, 0 unknown), the batch size.
 * Per-phase counters restart; run totals (bytes, samples, errors) go on. */
void sb_live_phase (sb_live_t *self, const char *phase, uint64_t epoch, uint64_t epochs, uint64_t steps,
                    uint64_t total_items, uint64_t batch_size, double now);

/* A worker whose ranks are [first, first + count) was heard from (any
 * message) at now. */
void sb_live_heard (sb_live_t *self, uint64_t first, uint64_t count, double now);

/* One STATS interval of a rank (deltas since its last). */
typedef struct {
    uint64_t samples, bytes, reads, read_ns, compute_ns;
    uint64_t steps;             /* steps whose compute ended */
    uint64_t metric_compute_ns; /* compute of those in DLIO's window */
    uint64_t excluded_ns;       /* proc time of those DLIO leaves out */
    uint64_t io_wait_ns, barrier_ns;
    uint64_t in_flight;         /* reads outstanding when sent (a level, not a delta) */
} sb_live_interval_t;
void sb_live_stats (sb_live_t *self, uint64_t rank, const sb_live_interval_t *d, double now);

/* A rank finished the phase: its recorded DLIO AU (percent; NAN: none),
 * its time split (s) and when it started and finished (the coordinator's
 * clock). read_latency: its per-sample read latency bins (n bins; may be
 * NULL), merged into its host's. */
typedef struct {
    double dlio_au_pct;
    double started_at, finished_at;
    double compute_s, io_wait_s, barrier_s;
    const uint64_t *read_latency;
    size_t          read_latency_bins;
} sb_live_rank_done_t;
void sb_live_rank_done (sb_live_t *self, uint64_t rank, const sb_live_rank_done_t *d, double now);

/* The phase is over. A train epoch's recorded DLIO AU (percent) joins the
 * run's mean (NAN: none for this phase). */
void sb_live_phase_end (sb_live_t *self, double epoch_dlio_au_pct, double now);

/* Step `released` (1-based count) of the step barrier was released. */
void sb_live_step_released (sb_live_t *self, uint64_t released, double now);

/* Items done so far of a phase counted in items (listing: objects listed). */
void sb_live_items (sb_live_t *self, uint64_t done);

/* ENDPOINT_STATS of a rank: totals since the last (deltas), merged into
 * the endpoint's run totals. endpoint copied; bins n <= SB_HISTOGRAM_BINS. */
void sb_live_endpoint (sb_live_t *self, uint64_t rank, const char *endpoint, uint64_t requests, uint64_t bytes,
                       uint64_t errors, uint64_t retries, const uint64_t *bins, size_t n);

/* ----------------------------------------------------------------- views */

/* The phase now ("" before the first). */
const char *sb_live_phase_name (const sb_live_t *self);

typedef struct {
    const char *phase;          /* "" before the first phase */
    uint64_t    epoch, epochs;
    uint64_t    steps;          /* per rank this phase; 0: counted in items */
    uint64_t    ranks, hosts;
    uint64_t    steps_done;     /* over ranks: progress = steps_done / (steps x ranks) */
    uint64_t    step_min;       /* the fewest steps a rank computed (the step everyone passed) */
    uint64_t    items_done, items_total;
    uint64_t    samples, bytes; /* this phase, read by the ranks */
    uint64_t    run_samples, run_bytes;
    uint64_t    in_flight;      /* reads outstanding, summed over ranks */
    uint64_t    ranks_done;
    double      phase_elapsed_s, run_elapsed_s;
    double      epoch_eta_s, run_eta_s;     /* < 0: unknown */
    double      au_pct;         /* this epoch so far, DLIO's definition; NAN: no step yet */
    double      run_au_pct;     /* mean over the finished train epochs; NAN: none yet */
    uint64_t    run_au_epochs;
    double      first_done_s, last_done_s;  /* since the phase began: first / last rank done; < 0 not yet */
    uint64_t    errors, retries;
    uint64_t    silent_hosts;   /* hosts silent now (sb_live_host_view .silent_s > 0) */
} sb_live_run_view_t;
void sb_live_run_view (const sb_live_t *self, double now, sb_live_run_view_t *v);

typedef struct {
    uint64_t       rank;
    uint64_t       host;        /* index into the hosts */
    uint64_t       steps, samples, bytes, reads;
    double         read_s, compute_s, io_wait_s, barrier_s;     /* this phase */
    double         au_pct;      /* DLIO's, this epoch so far from its STATS; NAN: none */
    double         recorded_au_pct; /* once done, the figure recorded from RANK_DONE; else NAN */
    uint64_t       in_flight;
    int            done;
    double         last_stats_s;/* seconds since its last STATS; < 0: none this phase */
} sb_live_rank_view_t;
/* rank < ranks; returns 0, or -1 for an unknown rank. */
int sb_live_rank_view (const sb_live_t *self, uint64_t rank, double now, sb_live_rank_view_t *v);

typedef struct {
    const char    *host;
    uint64_t       first_rank, ranks;   /* its ranks: first_rank .. + ranks - 1 when contiguous, else the lowest */
    int            contiguous;
    uint64_t       steps_min, steps_done;
    uint64_t       samples, bytes;      /* this phase */
    uint64_t       run_samples, run_bytes;
    double         au_pct;              /* mean over its ranks; NAN: none */
    uint64_t       ranks_done;
    double         done_s;              /* since the phase began, its last rank done; < 0 not yet */
    double         silent_s;            /* > 0: seconds since it was last heard, over the stall limit; else 0 */
    double         last_heard_s;        /* seconds since it was last heard */
    const sb_histogram_t *read_latency; /* run's samples read on it, merged at each rank's end */
    double         barrier_s, io_wait_s;
} sb_live_host_view_t;
size_t sb_live_hosts (const sb_live_t *self);
/* host < sb_live_hosts; returns 0 or -1. */
int sb_live_host_view (const sb_live_t *self, size_t host, double now, sb_live_host_view_t *v);
/* Up to n host indexes into out, slowest first (fewest steps, then lowest
 * AU, then silent longest). Returns how many. */
size_t sb_live_slowest_hosts (const sb_live_t *self, double now, size_t *out, size_t n);

typedef struct {
    const char    *endpoint;
    uint64_t       requests, bytes, errors, retries;
    const sb_histogram_t *latency;
} sb_live_endpoint_view_t;
size_t sb_live_endpoints (const sb_live_t *self);
int sb_live_endpoint_view (const sb_live_t *self, size_t index, sb_live_endpoint_view_t *v);

#endif
