/* report: summaries from the result database. */
#include "report.h"
#include "kv_report.h"
#include "workload.h"
#include "log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows of a table with a row per epoch: all of them up to S_EPOCH_ROWS,
 * past that the first and last S_EPOCH_ROWS / 2 with one line for those
 * left out (the summary must not grow with epochs either). Returns 1 when
 * row `index` (0-based) of n is printed; prints the gap line before the
 * first row after it. */
#define S_EPOCH_ROWS 6
static int
s_epoch_row (FILE *out, size_t index, size_t n)
{
    size_t half = S_EPOCH_ROWS / 2;
    if (n <= S_EPOCH_ROWS || index < half || index >= n - half) {
        if (n > S_EPOCH_ROWS && index == n - half)
            fprintf (out, "  %5s %zu epochs left out (every epoch: report --csv epochs, --csv detail)\n", "...",
                     n - S_EPOCH_ROWS);
        return 1;
    }
    return 0;
}

/* the hosts where DLIO would set potential_caching, a line each for the
 * first S_CACHING_LINES, then how many more (the summary must not grow with
 * hosts: every host is in report --csv hosts and the HTML page) */
#define S_CACHING_LINES 3
typedef struct {
    FILE  *out;
    size_t flagged;
} s_caching_lines_t;

static void
s_print_caching_host (void *ctx, const sb_report_host_caching_t *h)
{
    s_caching_lines_t *c = ctx;
    if (h->potential_caching != 1 || h->data_bytes <= 0)
        return;
    if (c->flagged++ < S_CACHING_LINES)
        fprintf (c->out, "  potential_caching: host %s has %.1f GiB of memory, more than the %.3f GiB its ranks read per"
                 " epoch: its page cache can serve the epochs from memory\n", h->host,
                 (double) h->memory_bytes / 1073741824.0, (double) h->data_bytes / 1073741824.0);
}

/* The checkpoint table of a run (the summary of `shardbench checkpoint` and
 * `report`). Returns 0 or -1. */
static int
s_print_checkpoints (sqlite3 *db, int64_t run_id, FILE *out)
{
    sb_report_checkpoint_t *rows;
    size_t nrows;
    if (sb_report_checkpoints (db, run_id, &rows, &nrows) != 0)
        return -1;
    /* time s and GiB/s: the slowest rank's; DLIO s and DLIO GiB/s: DLIO's checkpoint_size over rank 0's time */
    fprintf (out, "  %-5s %4s %6s %7s %12s %10s %10s %10s %16s %10s %10s\n", "op", "ckpt", "ranks", "files", "GiB",
             "time s", "GiB/s", "MB/s", "min rank MB/s", "DLIO s", "DLIO GiB/s");
    double sum_gib[2] = { 0, 0 }, sum_s[2] = { 0, 0 };
    int n[2] = { 0, 0 };
    for (size_t i = 0; i < nrows; i++) {
        const sb_report_checkpoint_t *c = &rows[i];
        int read = c->op && !strcmp (c->op, "read");
        double gib = (double) c->bytes / 1073741824.0, d = c->duration_s;
        fprintf (out, "  %-5s %4lld %6lld %7lld %12.3f %10.3f %10.3f %10.1f %16.1f %10.3f %10.3f\n",
                 c->op ? c->op : "?", (long long) c->checkpoint, (long long) c->ranks, (long long) c->files, gib, d,
                 c->gib_per_s, c->mb_per_s, c->min_rank_mb_per_s, c->dlio_duration_s, c->dlio_gib_per_s);
        sum_gib[read] += gib;
        sum_s[read] += d;
        n[read]++;
    }
    sb_report_checkpoints_free (rows, nrows);
    for (int r = 0; r < 2; r++)
        if (n[r] && sum_s[r] > 0)
            fprintf (out, "  %s: %d checkpoints, mean %.3f s each, %.3f GiB/s (bytes over summed durations)\n",
                     r ? "read" : "write", n[r], sum_s[r] / n[r], sum_gib[r] / sum_s[r]);
    return 0;
}

/* the phases the command ran, and the evaluations
 * (evals) with DLIO's evaluation figures, after the training epochs.
 * Returns 0, or -1 (sb_report_error). */
static int
s_print_workflow (sqlite3 *db, int64_t run_id, FILE *out)
{
    sb_report_workflow_t w;
    if (sb_report_workflow (db, run_id, &w) != 1)
        return -1;
    if (w.has_workflow)
        fprintf (out, "  workflow: %s\n", w.workflow);
    if (!w.evals)
        return 0;
    sb_report_eval_t *rows;
    size_t nrows;
    if (sb_report_evals (db, run_id, &rows, &nrows) != 0)
        return -1;
    fprintf (out, "  evaluations (valid/, after the epoch; DLIO's eval AU and samples/s):\n");
    fprintf (out, "  %5s %10s %7s %10s %10s %10s %12s\n", "epoch", "samples", "steps", "time s", "MiB/s", "AU %",
             "samples/s");
    for (size_t i = 0; i < nrows; i++)
        fprintf (out, "  %5lld %10lld %7lld %10.3f %10.1f %10.2f %12.1f\n", (long long) rows[i].epoch,
                 (long long) rows[i].samples, (long long) rows[i].steps, rows[i].duration_s, rows[i].mib_per_s,
                 rows[i].au_percentage, rows[i].samples_per_s);
    free (rows);
    fprintf (out, "  eval AU mean %.2f%% (stdev %.2f), %.1f samples/s, %.1f MiB/s\n", w.au_mean, w.au_stdev,
             w.tput_mean, w.io_mean);
    return 0;
}

/* ---- latency, barrier wait, slowest rank, endpoints ---- */

/* where a table's rows go, and how many went */
typedef struct {
    FILE  *out;
    size_t rows;
    size_t epochs;      /* rows to come of a table per epoch (s_epoch_row) */
} s_rows_t;

static void
s_print_latency (void *ctx, const sb_report_latency_t *l)
{
    s_rows_t *t = ctx;
    if (!s_epoch_row (t->out, t->rows++, t->epochs))
        return;
    fprintf (t->out, "  %5lld %10lld %10.3f %10.3f %10.3f %10.3f\n", (long long) l->epoch, (long long) l->reads,
             l->p50_ms, l->p90_ms, l->p99_ms, l->p999_ms);
}

static void
s_print_host_row (FILE *out, const sb_report_latency_t *l)
{
    char host[1024];    /* a worker's text: escaped for the terminal (an older database's is as it came) */
    fprintf (out, "  %5lld %-24s %10lld %10.3f %10.3f\n", (long long) l->epoch, sb_log_escape (l->host, host, sizeof host),
             (long long) l->reads, l->p50_ms, l->p99_ms);
}

/* Read latency per host: every row while there are few; past that the
 * S_HOST_ROWS with the highest p99 (host and epoch), so that the summary
 * does not grow with hosts x epochs (the rest: report --csv hosts). */
#define S_HOST_ROWS 4
typedef struct {
    FILE  *out;
    size_t rows;
    sb_report_latency_t top[S_HOST_ROWS];
    char   host[S_HOST_ROWS][256];
    size_t ntop;
} s_host_rows_t;

static void
s_keep_host_latency (void *ctx, const sb_report_latency_t *l)
{
    s_host_rows_t *t = ctx;
    t->rows++;
    size_t at = t->ntop;
    while (at > 0 && l->p99_ms > t->top[at - 1].p99_ms)
        at--;
    if (at >= S_HOST_ROWS)
        return;
    size_t move = (t->ntop < S_HOST_ROWS ? t->ntop : S_HOST_ROWS - 1) - at;
    memmove (&t->top[at + 1], &t->top[at], move * sizeof t->top[0]);
    memmove (&t->host[at + 1], &t->host[at], move * sizeof t->host[0]);
    t->top[at] = *l;
    snprintf (t->host[at], sizeof t->host[at], "%s", l->host ? l->host : "");
    t->top[at].host = NULL;
    if (t->ntop < S_HOST_ROWS)
        t->ntop++;
    for (size_t i = 0; i < t->ntop; i++)
        t->top[i].host = t->host[i];
}

/* the run's blame, over epochs: the rank named most often, and its host */
typedef struct {
    FILE   *out;
    int64_t rank[8];
    char    host[8][256];
    size_t  times[8], n, epochs, nepochs;
    double  own_s[8], rank_held_s[8], barrier_mean_s;
} s_blame_t;

static void
s_print_slowest (void *ctx, const sb_report_slowest_t *r)
{
    s_blame_t *b = ctx;
    char host[1024];
    char held[32] = "-";
    int shown = s_epoch_row (b->out, b->epochs, b->nepochs);
    if (isfinite (r->held_s))
        snprintf (held, sizeof held, "%.3f", r->held_s);
    sb_log_escape (r->host, host, sizeof host);
    if (shown)
        fprintf (b->out, "  %5lld %5lld %-16s %8s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %12.3f\n", (long long) r->epoch,
                 (long long) r->rank, host, held, r->window_s, r->own_s, r->compute_s, r->io_wait_s, r->barrier_s,
                 r->other_s, r->idle_s, r->barrier_mean_s);
    b->epochs++;
    b->barrier_mean_s += r->barrier_mean_s;
    size_t i = 0;
    while (i < b->n && b->rank[i] != r->rank)
        i++;
    if (i == b->n && b->n < 8) {
        b->rank[b->n] = r->rank;
        snprintf (b->host[b->n], sizeof b->host[b->n], "%s", host);
        b->times[b->n] = 0;
        b->rank_held_s[b->n] = 0;
        b->own_s[b->n++] = 0;
    }
    if (i < b->n) {
        b->times[i]++;
        b->own_s[i] += r->own_s;
        b->rank_held_s[i] += isfinite (r->held_s) ? r->held_s : 0;
    }
}

static void
s_print_latency_host_cb (void *ctx, const sb_report_latency_t *l)
{
    s_rows_t *t = ctx;
    t->rows++;
    s_print_host_row (t->out, l);
}

static void
s_print_endpoint (void *ctx, const sb_report_endpoint_t *e)
{
    char p50[32] = "-", p99[32] = "-";
    if (isfinite (e->p50_ms))
        snprintf (p50, sizeof p50, "%.3f", e->p50_ms);
    if (isfinite (e->p99_ms))
        snprintf (p99, sizeof p99, "%.3f", e->p99_ms);
    char endpoint[1024];
    fprintf (ctx, "  %-32s %10lld %12.1f %8lld %8lld %10s %10s\n", sb_log_escape (e->endpoint, endpoint, sizeof endpoint),
             (long long) e->requests,
             (double) e->bytes / 1048576.0, (long long) e->errors, (long long) e->retries, p50, p99);
}

typedef struct {
    int64_t hosts, flagged, unknown;
} s_caching_count_t;

static void
s_count_caching (void *ctx, const sb_report_host_caching_t *h)
{
    s_caching_count_t *c = ctx;
    c->hosts++;
    c->flagged += h->potential_caching == 1;
    c->unknown += h->potential_caching < 0;
}

/* The figures every output carries for a train run: read latency
 * percentiles per epoch and per host, the rank the others waited for in
 * each epoch with its split of the epoch's window, the page-cache flags. Returns 0
 * or -1 (sb_report_error). */
static int
s_print_story (sqlite3 *db, int64_t run_id, int from_memory, size_t epochs, FILE *out)
{
    fprintf (out, "  read latency, ms (the I/O engine's time per sample read, over every rank):\n");
    fprintf (out, "  %5s %10s %10s %10s %10s %10s\n", "epoch", "reads", "p50", "p90", "p99", "p99.9");
    s_rows_t t = { out, 0, epochs };
    if (sb_report_latencies (db, run_id, SB_REPORT_LATENCY_EPOCHS, s_print_latency, &t) != 0)
        return -1;
    if (!t.rows)
        fprintf (out, "  (none recorded: a run before result schema 7)\n");
    s_host_rows_t *hr = calloc (1, sizeof *hr);
    if (!hr)
        return -1;
    hr->out = out;
    if (sb_report_latencies (db, run_id, SB_REPORT_LATENCY_HOSTS, s_keep_host_latency, hr) != 0) {
        free (hr);
        return -1;
    }
    if (hr->rows > S_HOST_ROWS)
        fprintf (out, "  read latency per host, ms: the %d highest p99 of %zu (every host and epoch: report --csv hosts):\n",
                 S_HOST_ROWS, hr->rows);
    else
        fprintf (out, "  read latency per host, ms:\n");
    fprintf (out, "  %5s %-24s %10s %10s %10s\n", "epoch", "host", "reads", "p50", "p99");
    if (!hr->rows)
        fprintf (out, "  (none recorded: a run before result schema 12)\n");
    /* few rows: in their order (epoch, host); many: the highest p99 first */
    if (hr->rows <= S_HOST_ROWS && hr->rows) {
        t.rows = 0;
        hr->ntop = 0;
        if (sb_report_latencies (db, run_id, SB_REPORT_LATENCY_HOSTS, s_print_latency_host_cb, &t) != 0) {
            free (hr);
            return -1;
        }
    }
    else
        for (size_t i = 0; i < hr->ntop; i++)
            s_print_host_row (out, &hr->top[i]);
    free (hr);
    fprintf (out, "  the rank the others waited for, each epoch (held: how long they waited at step barriers for its\n"
                  "  worker; own: its wall time less its barrier wait) and where the epoch's window went for it, s\n"
                  "  (every rank: report --csv ranks):\n");
    fprintf (out, "  %5s %5s %-16s %8s %8s %8s %8s %8s %8s %8s %8s %12s\n", "epoch", "rank", "host", "held", "window",
             "own", "compute", "I/O wait", "barrier", "other", "idle", "mean barrier");
    s_blame_t b = { .out = out, .nepochs = epochs };
    if (sb_report_slowest (db, run_id, s_print_slowest, &b) != 0)
        return -1;
    if (b.n) {
        /* the run's: the rank that held the others longest, else the one named most often, then by its own time */
        size_t best = 0;
        for (size_t i = 1; i < b.n; i++)
            if (b.rank_held_s[i] > b.rank_held_s[best]
                || (b.rank_held_s[i] == b.rank_held_s[best]
                    && (b.times[i] > b.times[best] || (b.times[i] == b.times[best] && b.own_s[i] > b.own_s[best]))))
                best = i;
        char why[64];
        if (b.rank_held_s[best] > 0)
            snprintf (why, sizeof why, "held the others %.3f s", b.rank_held_s[best]);
        else
            snprintf (why, sizeof why, "most time of its own");
        fprintf (out, "  waited for: rank %lld on %s (%zu of %zu epochs, %s); the ranks' barrier wait, mean %.3f s an"
                      " epoch\n", (long long) b.rank[best], b.host[best], b.times[best], b.epochs, why,
                 b.barrier_mean_s / (double) b.epochs);
    }
    s_caching_count_t c = { 0, 0, 0 };
    if (sb_report_host_caching (db, run_id, s_count_caching, &c) != 0)
        return -1;
    if (c.hosts)
        fprintf (out, "  page cache: potential_caching 1 on %lld of %lld hosts%s;", (long long) c.flagged,
                 (long long) c.hosts, c.unknown ? " (unknown on some: no memory or no epoch recorded)" : "");
    else
        fprintf (out, "  page cache: no host recorded (potential_caching unknown);");
    fprintf (out, " %d of %zu epochs read mostly from the page cache (measured)\n", from_memory, epochs);
    return 0;
}

/* Traffic per endpoint (engines with endpoints), when the run has any. Returns 0 or -1. */
static int
s_print_endpoints (sqlite3 *db, int64_t run_id, const sb_report_failures_t *f, FILE *out)
{
    if (!f->endpoints)
        return 0;
    fprintf (out, "  object-store endpoints (attempts, retries included; latency of the successful ones):\n");
    fprintf (out, "  %-32s %10s %12s %8s %8s %10s %10s\n", "endpoint", "requests", "MiB", "errors", "retries",
             "p50 ms", "p99 ms");
    return sb_report_endpoints (db, run_id, s_print_endpoint, out);
}

/* the slowest rank of each checkpoint (the one whose time is the
 * checkpoint's duration), one line per checkpoint as its ranks come */
typedef struct {
    FILE   *out;
    int64_t seq, rank;
    double  duration_s;
    char    op[16], host[256];
} s_ckpt_slowest_t;

static void
s_ckpt_slowest_flush (s_ckpt_slowest_t *c)
{
    if (c->seq > 0)
        fprintf (c->out, "  %5lld %-5s %5lld %-24s %10.3f\n", (long long) c->seq, c->op, (long long) c->rank, c->host,
                 c->duration_s);
}

static void
s_ckpt_slowest (void *ctx, const sb_report_ckpt_rank_t *r)
{
    s_ckpt_slowest_t *c = ctx;
    if (r->seq != c->seq) {
        s_ckpt_slowest_flush (c);
        c->seq = r->seq;
        c->duration_s = -1;
    }
    if (r->duration_s > c->duration_s) {   /* the lowest rank of equal ones */
        c->rank = r->rank;
        c->duration_s = r->duration_s;
        snprintf (c->op, sizeof c->op, "%s", r->op);
        sb_log_escape (r->host, c->host, sizeof c->host);
    }
}

/* DLIO's checkpoint metrics of the rows, under DLIO's names (its
 * checkpoint_size over rank 0's time), and shardbench's beside them (the
 * bytes of all ranks over the slowest rank's time). */
static void
s_print_ckpt_metrics (sqlite3 *db, int64_t run_id, FILE *out)
{
    sb_report_checkpoint_t *rows;
    size_t n;
    if (sb_report_checkpoints (db, run_id, &rows, &n) != 0 || !n) {
        sb_report_checkpoints_free (rows, 0);
        return;
    }
    sb_report_ckpt_metrics_t m;
    sb_report_ckpt_metrics (rows, n, &m);
    sb_report_checkpoints_free (rows, n);
    if (m.saves)
        fprintf (out, "  DLIO: save_checkpoint_io_mean_GB_per_second %.3f (stdev %.3f),"
                 " save_checkpoint_duration_mean_seconds %.3f (stdev %.3f), checkpoint_size_GB %.3f\n",
                 m.save_gbps_mean, m.save_gbps_stdev, m.save_s_mean, m.save_s_stdev, m.size_gb);
    if (m.loads)
        fprintf (out, "  DLIO: load_checkpoint_io_mean_GB_per_second %.3f (stdev %.3f),"
                 " load_checkpoint_duration_mean_seconds %.3f (stdev %.3f)\n",
                 m.load_gbps_mean, m.load_gbps_stdev, m.load_s_mean, m.load_s_stdev);
    if (m.saves)
        fprintf (out, "  shardbench: save_checkpoint_slowest_rank_io_mean_GB_per_second %.3f (stdev %.3f),"
                 " save_checkpoint_slowest_rank_duration_mean_seconds %.3f (stdev %.3f), checkpoint_written_GB %.3f\n",
                 m.slowest_save_gbps_mean, m.slowest_save_gbps_stdev, m.slowest_save_s_mean, m.slowest_save_s_stdev,
                 m.written_gb);
    if (m.loads)
        fprintf (out, "  shardbench: load_checkpoint_slowest_rank_io_mean_GB_per_second %.3f (stdev %.3f),"
                 " load_checkpoint_slowest_rank_duration_mean_seconds %.3f (stdev %.3f)\n",
                 m.slowest_load_gbps_mean, m.slowest_load_gbps_stdev, m.slowest_load_s_mean, m.slowest_load_s_stdev);
}

int
sb_report_print (sqlite3 *db, int64_t run_id, FILE *out)
{
    sb_report_run_t run;
    sb_report_epoch_t *eps = NULL;
    size_t neps = 0;
    int rc = -1;
    int found = sb_report_run (db, run_id, &run);
    if (found < 0) {
        fprintf (stderr, "shardbench: report: %s\n", sb_report_error (db));
        return -1;
    }
    if (found == 0) {
        fprintf (stderr, "shardbench: report: no run %lld in this database\n", (long long) run_id);
        return -1;
    }
    const char *kind = run.kind;
    if (!strcmp (kind, "kvcache")) {
        /* the KV-cache tables, not the epochs: kv_report.h */
        rc = sb_kv_report_text (db, run_id, out);
        goto done;
    }
    int train = strcmp (kind, "train") == 0, ckpt = strcmp (kind, "checkpoint") == 0;
    char model[128];    /* model.name of runs.config: what DLIO calls the workload */
    sb_workload_model_name (run.config, model, sizeof model);
    fprintf (out, "\nshardbench %s run %lld: workload %s (model %s), %lld accelerators on %lld workers (%lld hosts),"
             " seed %lld\n", kind, (long long) run_id, run.workload, model, (long long) run.accelerators,
             (long long) run.workers, (long long) run.hosts, (long long) run.seed);
    sb_report_dlio_run_t dlio;
    if ((train && sb_report_dlio_run (db, run_id, &dlio) != 0) || sb_report_epochs (db, run_id, &eps, &neps) != 0) {
        fprintf (stderr, "shardbench: report: %s\n", sb_report_error (db));
        goto done;
    }
    if (train && dlio.dlio) {
        /* the headline: DLIO's metrics (lib/metrics/dlio_metrics.h), then shardbench's measured figures */
        fprintf (out, "  DLIO's metrics (%lld of the %lld steps of each rank counted, %lld-byte records):\n",
                 (long long) dlio.window_steps, (long long) dlio.steps, (long long) dlio.record_size);
        fprintf (out, "  %5s %10s %12s %10s\n", "epoch", "AU %", "samples/s", "MiB/s");
        for (size_t i = 0; i < neps; i++)
            if (eps[i].has_dlio && s_epoch_row (out, i, neps))
                fprintf (out, "  %5lld %10.2f %12.1f %10.1f\n", (long long) eps[i].epoch, eps[i].dlio_au_percentage,
                         eps[i].dlio_samples_per_s, eps[i].dlio_io_mb_per_s);
        fprintf (out, "  %5s %10.2f %12.1f %10.1f\n", "mean", dlio.au_mean, dlio.tput_mean, dlio.io_mean);
        fprintf (out, "  %5s %10.2f %12.1f %10.1f\n", "stdev", dlio.au_stdev, dlio.tput_stdev, dlio.io_stdev);
        fprintf (out, "  measured by shardbench (every sample read, the bytes read, first rank's start to last"
                 " rank's finish):\n");
    }
    if (train)
        fprintf (out, "  %5s %10s %8s %7s %10s %12s %10s %8s %17s %11s %9s\n", "epoch", "samples", "dropped", "steps",
                 "time s", "samples/s", "MiB/s", "AU %", "barrier p50/p99 ms", "own p50 ms", "cached %");
    else if (!ckpt)
        fprintf (out, "  %5s %10s %12s %10s %12s %10s\n", "", "files", "MiB", "time s", "files/s", "MiB/s");
    int from_memory = 0;    /* epochs served from memory */
    for (size_t i = 0; i < neps; i++) {
        const sb_report_epoch_t *ep = &eps[i];
        if (train)
        {
            char barrier[48] = "-", own[32] = "-";
            if (ep->has_barrier)
                snprintf (barrier, sizeof barrier, "%.3f/%.3f", ep->barrier_p50_ms, ep->barrier_p99_ms);
            /* page cache: the share of the checked bytes resident before they were read; `*`: served from memory */
            char cached[32] = "-";
            if (ep->has_resident) {
                int mem = ep->from_memory;
                snprintf (cached, sizeof cached, "%.1f%s", 100 * ep->resident_fraction, mem ? " *" : "");
                from_memory += mem;
            }
            if (ep->has_barrier_own)     /* the barrier's own cost (no waiting for ranks) */
                snprintf (own, sizeof own, "%.3f", ep->barrier_own_p50_ms);
            if (s_epoch_row (out, i, neps))
                fprintf (out, "  %5lld %10lld %8lld %7lld %10.3f %12.1f %10.1f %8.2f %17s %11s %9s\n",
                     (long long) ep->epoch, (long long) ep->samples, (long long) ep->dropped, (long long) ep->batches,
                     ep->duration_s, ep->samples_per_s, ep->mib_per_s, 100 * ep->au_mean, barrier, own, cached);
        }
        else
            fprintf (out, "  %5s %10lld %12.1f %10.3f %12.1f %10.1f\n", "", (long long) ep->samples,
                     (double) ep->bytes / 1048576.0, ep->duration_s, ep->samples_per_s, ep->mib_per_s);
    }
    if (from_memory)
        fprintf (out, "  * served from memory: at least half the bytes checked were in the page cache before they were"
                 " read, so %s measure%s memory, not the storage\n",
                 from_memory > 1 ? "these epochs" : "this epoch", from_memory > 1 ? "" : "s");
    s_caching_lines_t cl = { out, 0 };
    if (train && sb_report_host_caching (db, run_id, s_print_caching_host, &cl) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        goto done;
    }
    if (cl.flagged > S_CACHING_LINES)
        fprintf (out, "  potential_caching: %zu more hosts likewise (every host: report --json, shardbench.hosts)\n",
                 cl.flagged - S_CACHING_LINES);
    if (train && neps && s_print_story (db, run_id, from_memory, neps, out) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        goto done;
    }
    sb_report_failures_t fails;
    if (sb_report_failures (db, run_id, &fails) != 0 || s_print_endpoints (db, run_id, &fails, out) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        goto done;
    }
    if (s_print_workflow (db, run_id, out) != 0) {
        fprintf (stderr, "shardbench: report: %s\n", sb_report_error (db));
        goto done;
    }
    if (ckpt && s_print_checkpoints (db, run_id, out) != 0) {
        fprintf (stderr, "shardbench: report: %s\n", sb_report_error (db));
        goto done;
    }
    if (ckpt) {
        s_print_ckpt_metrics (db, run_id, out);
        s_ckpt_slowest_t cs = { .out = out };
        fprintf (out, "  slowest rank of each checkpoint:\n  %5s %-5s %5s %-24s %10s\n", "seq", "op", "rank", "host",
                 "time s");
        if (sb_report_checkpoint_ranks (db, run_id, s_ckpt_slowest, &cs) != 0) {
            fprintf (stderr, "shardbench: report: %s\n", sb_report_error (db));
            goto done;
        }
        s_ckpt_slowest_flush (&cs);
    }
    const char *status = run.status;
    if (train && (dlio.dlio || run.has_au_mean)) {
        /* the verdict: DLIO's train_au_mean_percentage (shardbench's own AU mean for runs recorded before it) */
        double au = dlio.dlio ? dlio.au_mean / 100 : run.au_mean, threshold = run.au_threshold;
        int finished = strcmp (status, "succeeded") == 0;
        fprintf (out, "  AU mean %.2f%% against threshold %.2f%%: %s\n", 100 * au, 100 * threshold,
                 !finished ? "no verdict (run did not finish)" : run.passed ? "PASS" : "FAIL");
    }
    fprintf (out, "  status: %s", status);
    if (run.has_duration)
        fprintf (out, " after %.2f s", run.duration_s);
    /* a run that needed retries says so, whatever its status */
    if (fails.retries || fails.request_errors)
        fprintf (out, ", with %lld retr%s (%lld failed attempt%s of %lld requests to %lld object-store endpoint%s)",
                 (long long) fails.retries, fails.retries == 1 ? "y" : "ies", (long long) fails.request_errors,
                 fails.request_errors == 1 ? "" : "s", (long long) fails.requests, (long long) fails.endpoints,
                 fails.endpoints == 1 ? "" : "s");
    if (fails.error_rows)
        fprintf (out, ", %lld error%s recorded", (long long) fails.error_rows, fails.error_rows == 1 ? "" : "s");
    fprintf (out, "\n");
    if (run.error) {
        /* the failure may quote a worker's text: control bytes escaped, its
         * own lines (a preflight table) kept */
        size_t size = 4 * strlen (run.error) + 1;
        char *text = malloc (size);
        fprintf (out, "  error: %s\n", text ? sb_log_escape_lines (run.error, text, size) : "(out of memory)");
        free (text);
    }
    if (run.db_locked_s > 0)
        fprintf (out, "  note: the result database was locked by another process for %.1f s during this run;"
                 " results were written late (timing was not affected)\n", run.db_locked_s);
    rc = 0;
done:
    free (eps);
    sb_report_run_fini (&run);
    return rc;
}
