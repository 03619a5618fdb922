/* openmetrics: the live model in the Prometheus text format (openmetrics.h). */
#include "openmetrics.h"

#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const uint64_t sb_openmetrics_bucket_us[SB_OPENMETRICS_BUCKETS] = {
    1ull << 5,  1ull << 6,  1ull << 7,  1ull << 8,  1ull << 9,  1ull << 10, 1ull << 11,
    1ull << 12, 1ull << 13, 1ull << 14, 1ull << 15, 1ull << 16, 1ull << 17, 1ull << 18,
    1ull << 19, 1ull << 20, 1ull << 21, 1ull << 22, 1ull << 23, 1ull << 24,
};

/* ---------------------------------------------------------------- text */

const char *
sb_openmetrics_label (const char *in, char *out, size_t size)
{
    if (!size)
        return out;
    size_t o = 0;
    const unsigned char *p = (const unsigned char *) (in ? in : "");
    while (*p) {
        char esc[4] = "";
        size_t take = 1;        /* bytes of in consumed */
        const char *put;
        size_t put_len;
        size_t seq = sb_utf8_seq (p);
        if (*p == '\\' || *p == '"' || *p == '\n') {
            esc[0] = '\\';
            esc[1] = *p == '\n' ? 'n' : (char) *p;
            put = esc;
            put_len = 2;
        }
        else if (!seq || *p < 0x20 || *p == 0x7f) {
            put = "\xef\xbf\xbd";   /* U+FFFD: the format wants UTF-8, a line wants no control byte */
            put_len = 3;
        }
        else {
            put = (const char *) p;
            put_len = take = seq;
        }
        if (o + put_len >= size)
            break;
        memcpy (out + o, put, put_len);
        o += put_len;
        p += take;
    }
    out[o] = '\0';
    return out;
}

const char *
sb_openmetrics_endpoint (const char *in, char *out, size_t size)
{
    if (!size)
        return out;
    if (!in)
        in = "";
    /* scheme://[userinfo@]authority[/path][?query][#fragment] */
    const char *authority = strstr (in, "://");
    size_t scheme_len = authority ? (size_t) (authority - in) + 3 : 0;
    authority = in + scheme_len;
    size_t auth_len = strcspn (authority, "/?#");
    const char *at = NULL;
    for (const char *c = authority; c < authority + auth_len; c++)
        if (*c == '@')
            at = c;     /* the last one: a password may hold '@' unescaped */
    const char *host = at ? at + 1 : authority;
    size_t rest_len = strcspn (host, "?#");
    snprintf (out, size, "%.*s%.*s", (int) scheme_len, in, (int) rest_len, host);
    return out;
}

/* The shortest decimal that reads back as v (Prometheus parses it as a
 * float64), "NaN", "+Inf" or "-Inf". */
static const char *
s_num (double v, char *buf, size_t size)
{
    if (isnan (v))
        return "NaN";
    if (isinf (v))
        return v > 0 ? "+Inf" : "-Inf";
    for (int prec = 6; prec <= 17; prec++) {
        snprintf (buf, size, "%.*g", prec, v);
        if (strtod (buf, NULL) == v)
            break;
    }
    return buf;
}

/* ---------------------------------------------------------------- families */

typedef struct {
    FILE       *out;
    double      now;
} s_ctx_t;

static void
s_family (s_ctx_t *c, const char *name, const char *type, const char *help)
{
    fprintf (c->out, "# HELP shardbench_%s %s\n# TYPE shardbench_%s %s\n", name, help, name, type);
}

static void
s_u64 (s_ctx_t *c, const char *name, const char *labels, uint64_t v)
{
    fprintf (c->out, "shardbench_%s%s%s%s %" PRIu64 "\n", name, labels ? "{" : "", labels ? labels : "",
             labels ? "}" : "", v);
}

static void
s_dbl (s_ctx_t *c, const char *name, const char *labels, double v)
{
    char num[40];
    fprintf (c->out, "shardbench_%s%s%s%s %s\n", name, labels ? "{" : "", labels ? labels : "", labels ? "}" : "",
             s_num (v, num, sizeof num));
}

/* A gauge of one sample, left out when v is not known (NaN or < 0 with unknown_below_zero). */
static void
s_gauge (s_ctx_t *c, const char *name, const char *help, double v, int known)
{
    s_family (c, name, "gauge", help);
    if (known)
        s_dbl (c, name, NULL, v);
}

static void
s_gauge_u64 (s_ctx_t *c, const char *name, const char *help, uint64_t v)
{
    s_family (c, name, "gauge", help);
    s_u64 (c, name, NULL, v);
}

static void
s_counter_u64 (s_ctx_t *c, const char *name, const char *help, uint64_t v)
{
    s_family (c, name, "counter", help);
    s_u64 (c, name, NULL, v);
}

/* The samples of a histogram of log-linear bins (histogram.h): cumulative
 * buckets at sb_openmetrics_bucket_us, +Inf, _sum and _count. labels: the
 * series' own ("host=\"h\""), without braces. */
static void
s_histogram (s_ctx_t *c, const char *name, const char *labels, const sb_histogram_t *h)
{
    static const sb_histogram_t empty;
    if (!h)
        h = &empty;
    uint64_t below = 0;
    size_t bin = 0;
    const char *sep = labels && *labels ? "," : "";
    for (size_t b = 0; b < SB_OPENMETRICS_BUCKETS; b++) {
        size_t end = sb_histogram_bin (sb_openmetrics_bucket_us[b]);     /* the bin that starts there */
        for (; bin < end; bin++)
            below += h->counts[bin];
        uint64_t us = sb_openmetrics_bucket_us[b];
        fprintf (c->out, "shardbench_%s_bucket{%s%sle=\"%" PRIu64 ".%06" PRIu64 "\"} %" PRIu64 "\n", name,
                 labels ? labels : "", sep, us / 1000000, us % 1000000, below);
    }
    uint64_t total = 0;
    for (size_t b = 0; b < SB_HISTOGRAM_BINS; b++)
        total += h->counts[b];
    char num[40];
    fprintf (c->out, "shardbench_%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name, labels ? labels : "", sep, total);
    fprintf (c->out, "shardbench_%s_sum%s%s%s %s\n", name, labels && *labels ? "{" : "", labels ? labels : "",
             labels && *labels ? "}" : "", s_num ((double) h->sum_us / 1e6, num, sizeof num));
    fprintf (c->out, "shardbench_%s_count%s%s%s %" PRIu64 "\n", name, labels && *labels ? "{" : "",
             labels ? labels : "", labels && *labels ? "}" : "", total);
}

/* ---------------------------------------------------------------- the run */

static void
s_run (s_ctx_t *c, const sb_live_run_view_t *v)
{
    char label[256], labels[300];
    s_family (c, "phase_info", "gauge",
              "The phase the run is in (listing, datagen, train, eval, checkpoint_write, checkpoint_read; none"
              " before the first): 1");
    snprintf (labels, sizeof labels, "phase=\"%s\"",
              sb_openmetrics_label (v->phase && *v->phase ? v->phase : "none", label, sizeof label));
    s_u64 (c, "phase_info", labels, 1);
    s_gauge_u64 (c, "epoch", "The epoch of this phase (1-based; 0: none)", v->epoch);
    s_gauge_u64 (c, "epochs", "The epochs of the run (train.epochs; 0: none)", v->epochs);
    s_gauge_u64 (c, "step", "Steps every rank has computed this phase (the slowest rank's)", v->step_min);
    s_gauge_u64 (c, "steps", "Steps per rank this phase (0: the phase is counted in items)", v->steps);
    s_gauge_u64 (c, "phase_items_done", "Items done this phase, when it is counted in items (objects listed,"
                 " files written)", v->items_done);
    s_gauge_u64 (c, "phase_items", "Items of this phase, when counted in items (0: unknown)", v->items_total);
    double progress = NAN;
    if (v->steps && v->ranks)
        progress = (double) v->steps_done / ((double) v->steps * (double) v->ranks);
    else if (!v->steps && v->items_total)
        progress = (double) v->items_done / (double) v->items_total;
    if (progress > 1)
        progress = 1;
    s_gauge (c, "progress_ratio", "This phase's progress: steps computed over steps x ranks, or items done over"
             " items (0..1)", progress, !isnan (progress));
    s_gauge (c, "epoch_au_ratio", "DLIO's accelerator utilization of this epoch so far: mean over the ranks'"
             " shardbench_rank_au_ratio (the recorded train_au_percentage / 100 once every rank is done)",
             v->au_pct / 100, isfinite (v->au_pct));
    s_gauge (c, "run_au_ratio", "DLIO's accelerator utilization of the run: mean over the finished train epochs"
             " (/ 100)", v->run_au_pct / 100, isfinite (v->run_au_pct));
    s_gauge_u64 (c, "run_au_epochs", "Train epochs in shardbench_run_au_ratio", v->run_au_epochs);
    s_gauge (c, "epoch_eta_seconds", "Seconds until this phase ends, at its pace so far", v->epoch_eta_s,
             v->epoch_eta_s >= 0);
    s_gauge (c, "run_eta_seconds", "Seconds until the last train epoch ends, at the pace so far", v->run_eta_s,
             v->run_eta_s >= 0);
    s_gauge (c, "phase_elapsed_seconds", "Seconds since this phase began", v->phase_elapsed_s, 1);
    s_gauge (c, "run_elapsed_seconds", "Seconds since the run began", v->run_elapsed_s, 1);
    s_counter_u64 (c, "samples_total", "Samples read by the ranks in the run (every phase)", v->run_samples);
    s_counter_u64 (c, "bytes_total", "Bytes read by the ranks in the run (every phase)", v->run_bytes);
    s_gauge_u64 (c, "phase_samples", "Samples read by the ranks this phase", v->samples);
    s_gauge_u64 (c, "phase_bytes", "Bytes read by the ranks this phase", v->bytes);
    s_counter_u64 (c, "errors_total", "Failed storage requests of the run (all endpoints)", v->errors);
    s_counter_u64 (c, "retries_total", "Retried storage requests of the run (all endpoints)", v->retries);
    s_gauge_u64 (c, "ranks", "Ranks (emulated accelerators) of the run", v->ranks);
    s_gauge_u64 (c, "ranks_done", "Ranks that finished this phase", v->ranks_done);
    s_gauge_u64 (c, "hosts", "Hosts whose workers joined", v->hosts);
    s_gauge_u64 (c, "silent_hosts", "Hosts none of whose workers was heard for longer than the stall limit",
                 v->silent_hosts);
    s_gauge_u64 (c, "reads_in_flight", "Reads outstanding, over the ranks", v->in_flight);
}

/* ---------------------------------------------------------------- ranks */

typedef struct {
    const char *name, *type, *help;
    int         kind;   /* what of the rank view */
} s_rank_family_t;

enum { R_SAMPLES, R_BYTES, R_READS, R_STEPS, R_READ_S, R_COMPUTE_S, R_IO_WAIT_S, R_BARRIER_S, R_IN_FLIGHT, R_AU,
       R_DONE };

static const s_rank_family_t s_rank_families[] = {
    { "rank_samples_total", "counter", "Samples the rank read this phase (restarts at each phase)", R_SAMPLES },
    { "rank_bytes_total", "counter", "Bytes the rank read this phase (restarts at each phase)", R_BYTES },
    { "rank_reads_total", "counter", "Reads the rank issued this phase (restarts at each phase)", R_READS },
    { "rank_steps_total", "counter", "Steps the rank computed this phase (restarts at each phase)", R_STEPS },
    { "rank_read_seconds_total", "counter", "Seconds of the rank's sample reads this phase (restarts at each"
      " phase)", R_READ_S },
    { "rank_compute_seconds_total", "counter", "Seconds of emulated compute of the rank this phase (restarts at"
      " each phase)", R_COMPUTE_S },
    { "rank_io_wait_seconds_total", "counter", "Seconds the rank's accelerator waited for data this phase"
      " (restarts at each phase)", R_IO_WAIT_S },
    { "rank_barrier_seconds_total", "counter", "Seconds the rank spent in step barriers this phase (restarts at"
      " each phase)", R_BARRIER_S },
    { "rank_reads_in_flight", "gauge", "Reads of the rank outstanding at its last report", R_IN_FLIGHT },
    { "rank_au_ratio", "gauge", "DLIO's accelerator utilization of the rank this epoch so far, from its reports;"
      " once it is done its recorded dlio_au_percentage / 100", R_AU },
    { "rank_done", "gauge", "1 when the rank finished this phase, else 0", R_DONE },
};

static void
s_ranks (s_ctx_t *c, const sb_live_rank_view_t *rv, uint64_t nranks, char *const *host_labels, size_t nhosts)
{
    for (size_t f = 0; f < sizeof s_rank_families / sizeof s_rank_families[0]; f++) {
        const s_rank_family_t *fam = &s_rank_families[f];
        s_family (c, fam->name, fam->type, fam->help);
        for (uint64_t r = 0; r < nranks; r++) {
            const sb_live_rank_view_t *v = &rv[r];
            if (v->host >= nhosts)
                continue;   /* its worker has not joined: no host to name */
            char labels[600];
            snprintf (labels, sizeof labels, "rank=\"%" PRIu64 "\",host=\"%s\"", v->rank, host_labels[v->host]);
            switch (fam->kind) {
            case R_SAMPLES: s_u64 (c, fam->name, labels, v->samples); break;
            case R_BYTES: s_u64 (c, fam->name, labels, v->bytes); break;
            case R_READS: s_u64 (c, fam->name, labels, v->reads); break;
            case R_STEPS: s_u64 (c, fam->name, labels, v->steps); break;
            case R_READ_S: s_dbl (c, fam->name, labels, v->read_s); break;
            case R_COMPUTE_S: s_dbl (c, fam->name, labels, v->compute_s); break;
            case R_IO_WAIT_S: s_dbl (c, fam->name, labels, v->io_wait_s); break;
            case R_BARRIER_S: s_dbl (c, fam->name, labels, v->barrier_s); break;
            case R_IN_FLIGHT: s_u64 (c, fam->name, labels, v->in_flight); break;
            case R_AU:
                if (isfinite (v->au_pct))
                    s_dbl (c, fam->name, labels, v->au_pct / 100);
                break;
            case R_DONE: s_u64 (c, fam->name, labels, v->done ? 1 : 0); break;
            default: break;
            }
        }
    }
}

/* ---------------------------------------------------------------- hosts */

static void
s_hosts (s_ctx_t *c, const sb_live_host_view_t *hv, size_t nhosts, char *const *host_labels)
{
    char labels[600];
#define S_EACH_HOST(stmt) \
    for (size_t h = 0; h < nhosts; h++) { \
        snprintf (labels, sizeof labels, "host=\"%s\"", host_labels[h]); \
        const sb_live_host_view_t *v = &hv[h]; \
        stmt; \
    }
    s_family (c, "host_samples_total", "counter", "Samples read by the host's ranks in the run");
    S_EACH_HOST (s_u64 (c, "host_samples_total", labels, v->run_samples));
    s_family (c, "host_bytes_total", "counter", "Bytes read by the host's ranks in the run");
    S_EACH_HOST (s_u64 (c, "host_bytes_total", labels, v->run_bytes));
    s_family (c, "host_au_ratio", "gauge", "DLIO's accelerator utilization of the host this epoch: mean over its"
              " ranks' shardbench_rank_au_ratio");
    S_EACH_HOST (if (isfinite (v->au_pct)) s_dbl (c, "host_au_ratio", labels, v->au_pct / 100));
    s_family (c, "host_step", "gauge", "Steps every rank of the host has computed this phase (its slowest rank's)");
    S_EACH_HOST (s_u64 (c, "host_step", labels, v->steps_min));
    s_family (c, "host_ranks", "gauge", "Ranks on the host");
    S_EACH_HOST (s_u64 (c, "host_ranks", labels, v->ranks));
    s_family (c, "host_ranks_done", "gauge", "Ranks of the host that finished this phase");
    S_EACH_HOST (s_u64 (c, "host_ranks_done", labels, v->ranks_done));
    s_family (c, "host_silent_seconds", "gauge", "Seconds since the host was last heard, when over the stall"
              " limit (a silent host); else 0");
    S_EACH_HOST (s_dbl (c, "host_silent_seconds", labels, v->silent_s));
    s_family (c, "host_last_heard_seconds", "gauge", "Seconds since any worker of the host was last heard");
    S_EACH_HOST (s_dbl (c, "host_last_heard_seconds", labels, v->last_heard_s));
    s_family (c, "host_read_latency_seconds", "histogram", "Latency of the samples read on the host in the run,"
              " merged as each rank finishes a phase (the recorded host_read_latency bins)");
    S_EACH_HOST (s_histogram (c, "host_read_latency_seconds", labels, v->read_latency));
#undef S_EACH_HOST
}

/* ---------------------------------------------------------------- endpoints */

static void
s_endpoints (s_ctx_t *c, const sb_live_t *live)
{
    size_t n = sb_live_endpoints (live);
    /* the label of each (names) and what it was before a duplicate got its number (bases) */
    char (*names)[600] = n ? calloc (n, sizeof *names) : NULL;
    char (*bases)[560] = n ? calloc (n, sizeof *bases) : NULL;
    sb_live_endpoint_view_t *ev = n ? calloc (n, sizeof *ev) : NULL;
    if (n && (!names || !bases || !ev))
        n = 0;  /* out of memory: the families without samples */
    size_t have = 0;
    for (size_t i = 0; i < n; i++) {
        if (sb_live_endpoint_view (live, i, &ev[have]) != 0)
            continue;
        char shown[512];
        sb_openmetrics_label (sb_openmetrics_endpoint (ev[have].endpoint, shown, sizeof shown), bases[have],
                              sizeof bases[have]);
        /* two endpoints the same once their credentials are cut keep two series */
        int same = 0;
        for (size_t j = 0; j < have; j++)
            same += !strcmp (bases[j], bases[have]);
        if (same)
            snprintf (names[have], sizeof names[have], "%s (%d)", bases[have], same + 1);
        else
            snprintf (names[have], sizeof names[have], "%s", bases[have]);
        have++;
    }
    char labels[700];
#define S_EACH_ENDPOINT(stmt) \
    for (size_t i = 0; i < have; i++) { \
        snprintf (labels, sizeof labels, "endpoint=\"%s\"", names[i]); \
        const sb_live_endpoint_view_t *v = &ev[i]; \
        stmt; \
    }
    s_family (c, "endpoint_requests_total", "counter", "Requests sent to the endpoint in the run, retries included");
    S_EACH_ENDPOINT (s_u64 (c, "endpoint_requests_total", labels, v->requests));
    s_family (c, "endpoint_bytes_total", "counter", "Payload bytes received from or sent to the endpoint in the run");
    S_EACH_ENDPOINT (s_u64 (c, "endpoint_bytes_total", labels, v->bytes));
    s_family (c, "endpoint_errors_total", "counter", "Failed requests to the endpoint in the run");
    S_EACH_ENDPOINT (s_u64 (c, "endpoint_errors_total", labels, v->errors));
    s_family (c, "endpoint_retries_total", "counter", "Requests to the endpoint that were retried in the run");
    S_EACH_ENDPOINT (s_u64 (c, "endpoint_retries_total", labels, v->retries));
    s_family (c, "endpoint_latency_seconds", "histogram", "Latency of the successful requests to the endpoint in the"
              " run");
    S_EACH_ENDPOINT (s_histogram (c, "endpoint_latency_seconds", labels, v->latency));
#undef S_EACH_ENDPOINT
    free (names);
    free (bases);
    free (ev);
}

/* ---------------------------------------------------------------- render */

/* A finished rank's AU is its recorded figure (rank_epochs.dlio_au_percentage),
 * a running rank's the live one from its STATS; the epoch's and each host's
 * are means over those, so that once every rank is done the epoch's is the
 * recorded train_au_percentage (the mean over ranks). */
static void
s_recorded_au (sb_live_run_view_t *run, sb_live_rank_view_t *rv, uint64_t nranks, sb_live_host_view_t *hv,
               size_t nhosts)
{
    double sum = 0;
    uint64_t n = 0;
    double *host_sum = nhosts ? calloc (nhosts, sizeof *host_sum) : NULL;
    uint64_t *host_n = nhosts ? calloc (nhosts, sizeof *host_n) : NULL;
    for (uint64_t r = 0; r < nranks; r++) {
        if (rv[r].done && isfinite (rv[r].recorded_au_pct))
            rv[r].au_pct = rv[r].recorded_au_pct;
        if (!isfinite (rv[r].au_pct))
            continue;
        sum += rv[r].au_pct;
        n++;
        if (host_sum && host_n && rv[r].host < nhosts) {
            host_sum[rv[r].host] += rv[r].au_pct;
            host_n[rv[r].host]++;
        }
    }
    if (nranks)
        run->au_pct = n ? sum / (double) n : NAN;
    for (size_t h = 0; host_sum && host_n && h < nhosts; h++)
        hv[h].au_pct = host_n[h] ? host_sum[h] / (double) host_n[h] : NAN;
    free (host_sum);
    free (host_n);
}

int
sb_openmetrics_render (const sb_live_t *live, double now, FILE *out)
{
    s_ctx_t c = { .out = out, .now = now };
    sb_live_run_view_t run;
    memset (&run, 0, sizeof run);
    run.phase = "";
    run.au_pct = run.run_au_pct = NAN;
    run.epoch_eta_s = run.run_eta_s = -1;
    if (live)
        sb_live_run_view (live, now, &run);
    size_t nhosts = live ? sb_live_hosts (live) : 0;
    uint64_t nranks = live ? run.ranks : 0;
    sb_live_host_view_t *hv = nhosts ? calloc (nhosts, sizeof *hv) : NULL;
    char **host_labels = nhosts ? calloc (nhosts, sizeof *host_labels) : NULL;
    sb_live_rank_view_t *rv = nranks ? calloc (nranks, sizeof *rv) : NULL;
    int rc = -1;
    if ((nhosts && (!hv || !host_labels)) || (nranks && !rv)) {
        errno = ENOMEM;
        goto done;
    }
    for (size_t h = 0; h < nhosts; h++) {
        if (sb_live_host_view (live, h, now, &hv[h]) != 0)
            memset (&hv[h], 0, sizeof hv[h]);
        char label[560];
        sb_openmetrics_label (hv[h].host ? hv[h].host : "", label, sizeof label);
        if (!(host_labels[h] = strdup (label))) {
            errno = ENOMEM;
            goto done;
        }
    }
    for (uint64_t r = 0; r < nranks; r++)
        if (sb_live_rank_view (live, r, now, &rv[r]) != 0)
            rv[r].host = UINT64_MAX;
    s_recorded_au (&run, rv, nranks, hv, nhosts);
    s_run (&c, &run);
    s_ranks (&c, rv, nranks, host_labels, nhosts);
    s_hosts (&c, hv, nhosts, host_labels);
    s_endpoints (&c, live);
    rc = fflush (out) == 0 && !ferror (out) ? 0 : -1;
done:
    for (size_t h = 0; host_labels && h < nhosts; h++)
        free (host_labels[h]);
    free (host_labels);
    free (hv);
    free (rv);
    return rc;
}
