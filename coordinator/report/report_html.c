/* report_html: a train or checkpoint run as one self-contained HTML page,
 * read back from the result database.
 *
 * The page needs nothing but itself: no script, no style sheet, font or image
 * from elsewhere, so it can be mailed or archived with the run and opened
 * offline. In order:
 *   run-error         a run that did not succeed: its status and first error,
 *                     then the errors table, before anything else
 *   run-retries       a run that succeeded after retries, failed attempts or
 *                     errors: how many, before anything else
 *   summary, origin   the run's row; the version and command line it was
 *                     started with where the database records them
 *                     (html_query.h: sb_html_run_origin)
 * then for a train run the charts, inline SVG drawn here:
 *   chart-throughput  MiB/s over time, one line per host (timeseries rows
 *                     spread over the time bins they cover, ranks mapped to
 *                     hosts through run_workers; a bin a host read nothing in
 *                     is 0), a dashed line where each epoch began
 *   chart-au          AU per epoch (DLIO's epochs.train_au_percentage; epochs.au_mean for runs
 *                     recorded before it) against runs.au_threshold
 *   chart-split-host  compute, I/O wait and barrier wait per host (mean of its
 *   chart-split-rank  ranks) and per rank, stacked bars (rank_epochs)
 *   chart-latency     sample read latency over all epochs (read_latency),
 *                     two bins per power of two on a log axis, p50 and p99
 *   chart-endpoints   requests and errors per endpoint (endpoints)
 * the epochs table (barrier p50/p99, page cache), the rank the others
 * waited for in each epoch (table waited-for), read latency p50/p90/p99/p99.9 per epoch (table
 * read-latency, chart-latency-epochs) and per host (table host-latency) and
 * the endpoints' latency (table endpoint-latency); for a checkpoint run the
 * checkpoints table, chart-checkpoint-throughput (GiB/s per checkpoint
 * written and read) and chart-checkpoint-ranks (MB/s per rank); then the
 * errors (a run that succeeded) and the parameters (run_inputs.full_config
 * or runs.config, key by key).
 * A chart with nothing to draw is left out: one line (p.no-chart) says why.
 * Every string from the database goes through sb_report_html_escape; numbers
 * are printed with printf in the C locale (shardbench never calls setlocale).
 */
#include "report.h"
#include "kv_report.h"
#include "config.h"
#include "export_query.h"
#include "histogram.h"
#include "html_query.h"
#include "sb_version.h"
#include "workload.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define S_W      900        /* chart size, SVG user units (= CSS px) */
#define S_H      320
#define S_LEFT   80         /* plot area margins */
#define S_RIGHT  170        /* room for the legend */
#define S_TOP    36
#define S_BOTTOM 56
#define S_MAX_POINTS 600    /* throughput bins per host: longer runs get wider bins */
#define S_MAX_TICKS 50      /* ticks per axis, a bound whatever the data */
#define S_MAX_ERRORS 200    /* rows of the errors table */

static const char *const s_colors[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};
#define S_NCOLORS (sizeof s_colors / sizeof s_colors[0])

void
sb_report_html_escape (FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs ("&amp;", out); break;
        case '<': fputs ("&lt;", out); break;
        case '>': fputs ("&gt;", out); break;
        case '"': fputs ("&quot;", out); break;
        case '\'': fputs ("&#39;", out); break;
        default: fputc (*s, out); break;
        }
    }
}


/* A step of 1, 2 or 5 x 10^n giving about `ticks` ticks over range. */
static double
s_nice_step (double range, int ticks)
{
    if (!(range > 0) || !isfinite (range))
        return 1;
    double raw = range / ticks, mag = pow (10, floor (log10 (raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* The plot area of a chart: data x0..x1, y0..y1 onto the SVG rectangle. */
typedef struct {
    double x0, x1, y0, y1;
} s_plot_t;

static double
s_px (const s_plot_t *p, double x)
{
    return S_LEFT + (x - p->x0) / (p->x1 > p->x0 ? p->x1 - p->x0 : 1) * (S_W - S_LEFT - S_RIGHT);
}

static double
s_py (const s_plot_t *p, double y)
{
    return S_H - S_BOTTOM - (y - p->y0) / (p->y1 > p->y0 ? p->y1 - p->y0 : 1) * (S_H - S_TOP - S_BOTTOM);
}

/* Open a chart of height h: <figure>, <svg> with id and title (s_svg_close
 * adds the caption). */
static void
s_svg_open_h (FILE *out, const char *id, const char *title, int h)
{
    fprintf (out, "<figure>\n<svg id=\"%s\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
             " role=\"img\" aria-labelledby=\"%s-title\">\n<title id=\"%s-title\">", id, S_W, h, S_W, h, id, id);
    sb_report_html_escape (out, title);
    fprintf (out, "</title>\n<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n"
             "<text class=\"chart-title\" x=\"%d\" y=\"22\">", S_W, h, S_LEFT);
    sb_report_html_escape (out, title);
    fprintf (out, "</text>\n");
}

/* The same, S_H high. */
static void
s_svg_open (FILE *out, const char *id, const char *title)
{
    s_svg_open_h (out, id, title, S_H);
}

static void
s_svg_close (FILE *out, const char *caption)
{
    fprintf (out, "</svg>\n<figcaption>");
    sb_report_html_escape (out, caption);
    fprintf (out, "</figcaption>\n</figure>\n");
}

/* A chart with nothing to draw is left out: in its place one line with
 * its title and why (class no-chart, data-chart its id). */
static void
s_no_chart (FILE *out, const char *id, const char *title, const char *why)
{
    fprintf (out, "<p class=\"no-chart\" data-chart=\"%s\">", id);
    sb_report_html_escape (out, title);
    fprintf (out, ": ");
    sb_report_html_escape (out, why);
    fprintf (out, ".</p>\n");
}

/* Axes, grid and tick labels of a linear y axis; x ticks when x_linear. */
static void
s_axes (FILE *out, const s_plot_t *p, int x_linear, const char *xlabel, const char *ylabel)
{
    double step = s_nice_step (p->y1 - p->y0, 5);
    fprintf (out, "<g class=\"axis y-axis\">\n");
    /* at most S_MAX_TICKS ticks, whatever the range (a non-finite one gives step 1) */
    int ticks = 0;
    for (double y = ceil (p->y0 / step) * step; y <= p->y1 + step * 1e-9 && ticks++ < S_MAX_TICKS; y += step) {
        double py = s_py (p, y);
        fprintf (out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
                 "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                 S_LEFT, S_W - S_RIGHT, py, py, S_LEFT - 6, py + 4, fabs (y) < step * 1e-9 ? 0.0 : y);
    }
    fprintf (out, "</g>\n<g class=\"axis x-axis\">\n");
    if (x_linear) {
        step = s_nice_step (p->x1 - p->x0, 8);
        ticks = 0;
        for (double x = ceil (p->x0 / step) * step; x <= p->x1 + step * 1e-9 && ticks++ < S_MAX_TICKS; x += step)
            fprintf (out, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                     s_px (p, x), S_H - S_BOTTOM + 18, fabs (x) < step * 1e-9 ? 0.0 : x);
    }
    fprintf (out, "</g>\n<line class=\"frame\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
             "<line class=\"frame\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
             S_LEFT, S_TOP, S_LEFT, S_H - S_BOTTOM, S_LEFT, S_H - S_BOTTOM, S_W - S_RIGHT, S_H - S_BOTTOM);
    fprintf (out, "<text class=\"axis-label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n"
             "<text class=\"axis-label\" transform=\"translate(18 %d) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
             (S_LEFT + S_W - S_RIGHT) / 2, S_H - 12, xlabel, (S_TOP + S_H - S_BOTTOM) / 2, ylabel);
}

/* the run's row, its model name and its place in a series */
typedef struct {
    sb_export_page_run_t row;
    char                 model[128];     /* model.name of runs.config */
    sb_html_run_series_t series;
} s_run_t;

/* a nullable figure of an epochs row: NAN when NULL */
static double
s_or_nan (int has, double v)
{
    return has ? v : NAN;
}

/* the SQLite error of the last query, on stderr */
static void
s_query_failed (sqlite3 *db)
{
    fprintf (stderr, "shardbench report: --html: %s\n", sb_report_error (db));
}

static void
s_summary (FILE *out, const s_run_t *r, int64_t run_id)
{
    char when[64] = "?";
    time_t t = (time_t) r->row.started_at;
    struct tm tm;
    if (gmtime_r (&t, &tm))
        strftime (when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    const char *verdict = strcmp (r->row.status, "succeeded") != 0 ? "no verdict (run did not finish)"
                        : r->row.passed == 1 ? "PASS" : r->row.passed == 0 ? "FAIL" : "-";
    fprintf (out, "<table id=\"summary\" class=\"summary\">\n<tr><th>run</th><td>%lld</td></tr>\n<tr><th>workload</th><td>",
             (long long) run_id);
    sb_report_html_escape (out, r->row.workload);
    fprintf (out, "</td></tr>\n<tr><th>model</th><td>");
    sb_report_html_escape (out, r->model);
    fprintf (out, "</td></tr>\n");
    if (r->series.label) {
        fprintf (out, "<tr><th>label</th><td id=\"label\">");
        sb_report_html_escape (out, r->series.label);
        fprintf (out, "</td></tr>\n");
    }
    if (r->series.series_id > 0)
        fprintf (out, "<tr><th>series</th><td id=\"series\">series %lld: run %lld of %lld%s</td></tr>\n",
                 (long long) r->series.series_id, (long long) r->series.series_index,
                 (long long) r->series.series_runs, r->series.warmup == 1 ? ", warm-up" : "");
    fprintf (out, "<tr><th>status</th><td>");
    sb_report_html_escape (out, r->row.status);
    if (isfinite (r->row.duration_s))
        fprintf (out, " after %.2f s", r->row.duration_s);
    fprintf (out, "</td></tr>\n<tr><th>started</th><td>%s</td></tr>\n", when);
    fprintf (out, "<tr><th>accelerators</th><td>%lld</td></tr>\n<tr><th>workers</th><td>%lld</td></tr>\n"
             "<tr><th>hosts</th><td>%lld</td></tr>\n<tr><th>seed</th><td>%lld</td></tr>\n",
             (long long) r->row.accelerators, (long long) r->row.workers, (long long) r->row.hosts,
             (long long) r->row.seed);
    if (strcmp (r->row.kind, "train") != 0) {
        /* a checkpoint run: its figures are in the checkpoints table below */
        if (r->row.error) {
            fprintf (out, "<tr><th>error</th><td>");
            sb_report_html_escape (out, r->row.error);
            fprintf (out, "</td></tr>\n");
        }
        fprintf (out, "</table>\n");
        return;
    }
    fprintf (out, "<tr><th>epochs</th><td>%lld</td></tr>\n", (long long) r->row.epochs);
    if (isfinite (r->row.sps))
        fprintf (out, "<tr><th>samples/s (mean of epochs)</th><td>%.1f</td></tr>\n"
                 "<tr><th>MiB/s (mean of epochs)</th><td>%.1f</td></tr>\n", r->row.sps, r->row.mibps);
    fprintf (out, "<tr><th>AU mean / threshold</th><td>");
    if (isfinite (r->row.au_mean))
        fprintf (out, "%.2f%%", 100 * r->row.au_mean);
    else
        fprintf (out, "-");
    if (isfinite (r->row.au_threshold))
        fprintf (out, " / %.2f%%", 100 * r->row.au_threshold);
    fprintf (out, "</td></tr>\n<tr><th>verdict</th><td id=\"verdict\" class=\"%s\">%s</td></tr>\n",
             !strcmp (verdict, "PASS") ? "pass" : !strcmp (verdict, "FAIL") ? "fail" : "none", verdict);
    if (r->row.error) {
        fprintf (out, "<tr><th>error</th><td>");
        sb_report_html_escape (out, r->row.error);
        fprintf (out, "</td></tr>\n");
    }
    fprintf (out, "</table>\n");
}

static void
s_epoch_table (const sb_report_epoch_t *ep, size_t n, FILE *out)
{
    fprintf (out, "<table id=\"epochs\" class=\"data\">\n<tr><th>epoch</th><th>samples</th><th>dropped</th>"
             "<th>time s</th><th>samples/s</th><th>MiB/s</th><th>AU %%</th><th>read p50 ms</th>"
             "<th>read p99 ms</th><th>barrier p50 ms</th><th>barrier p99 ms</th><th>page cache</th></tr>\n");
    for (size_t i = 0; i < n; i++) {
        const sb_report_epoch_t *e = &ep[i];
        fprintf (out, "<tr><td>%lld</td><td>%lld</td><td>%lld</td><td>%.3f</td><td>%.1f</td><td>%.1f</td>",
                 (long long) e->epoch, (long long) e->samples, (long long) e->dropped, e->duration_s,
                 e->samples_per_s, e->mib_per_s);
        const double v[3] = { s_or_nan (e->has_au_mean, e->au_mean), s_or_nan (e->has_read_p50, e->read_p50_ms),
                              s_or_nan (e->has_read_p99, e->read_p99_ms) };
        for (int c = 0; c < 3; c++) {
            if (!isfinite (v[c]))
                fprintf (out, "<td>-</td>");
            else
                fprintf (out, c == 0 ? "<td>%.2f</td>" : "<td>%.3f</td>", c == 0 ? 100 * v[c] : v[c]);
        }
        /* the step barrier's round trip; whether the epoch was read from the page cache */
        const double b[2] = { s_or_nan (e->has_barrier, e->barrier_p50_ms), s_or_nan (e->has_barrier_p99, e->barrier_p99_ms) };
        for (int c = 0; c < 2; c++)
            if (isfinite (b[c]))
                fprintf (out, "<td>%.3f</td>", b[c]);
            else
                fprintf (out, "<td>-</td>");
        if (e->has_from_memory && e->has_resident)
            fprintf (out, "<td class=\"%s\">%s, %.0f%% resident</td>", e->from_memory ? "cached" : "uncached",
                     e->from_memory ? "yes" : "no", 100 * e->resident_fraction);
        else
            fprintf (out, "<td>-</td>");
        fprintf (out, "</tr>\n");
    }
    fprintf (out, "</table>\n");
}

/* The bytes each host read per time bin, spread from the timeseries rows.
 * A row holds what its rank read in the interval that ended at t: since
 * the rank's previous row, and at most the 1 s a worker sums over
 * (worker/agent/rank_report.c), so its bytes are spread over that
 * interval's bins in proportion. A bin no row reaches stays 0: an idle
 * host is drawn at zero, not joined across its gap. */
typedef struct {
    char    **hosts;        /* in the order first seen; s_bins_sort puts them in name order */
    double  **bytes;        /* per host, nb bins */
    int64_t  *total;        /* per host: bytes of its rows, summed exactly */
    size_t    nhosts, nb;
    double    start, bin;
    size_t    host;         /* the host of the previous row's rank */
    int64_t   last_rank;    /* the previous row */
    double    last_t;
    int       have_last;
} s_bins_t;

/* Add v, read over [lo, hi] (seconds since the run start), to the bins it
 * overlaps, in proportion; a point interval or one outside the chart goes
 * to the nearest bin. */
static void
s_spread (double *bins, size_t nb, double bin, double lo, double hi, double v)
{
    lo = lo > 0 ? lo : 0;
    double end = (double) nb * bin;
    hi = hi < end ? hi : end;
    if (!(hi > lo)) {
        double x = hi > 0 ? hi : 0;
        size_t b = (size_t) (x / bin);
        bins[b < nb ? b : nb - 1] += v;
        return;
    }
    size_t b0 = (size_t) (lo / bin), b1 = (size_t) (hi / bin);
    for (size_t b = b0; b <= b1 && b < nb; b++) {
        double a = (double) b * bin, z = a + bin;
        double overlap = (hi < z ? hi : z) - (lo > a ? lo : a);
        if (overlap > 0)
            bins[b] += v * overlap / (hi - lo);
    }
}

/* The index of host name in a, added when new (the previous row's host
 * first: rows come by rank). Returns 0 with *h set, or -1 out of memory. */
static int
s_host_index (s_bins_t *a, const char *name, size_t *h)
{
    if (a->nhosts && !strcmp (a->hosts[a->host], name)) {
        *h = a->host;
        return 0;
    }
    for (size_t i = 0; i < a->nhosts; i++)
        if (!strcmp (a->hosts[i], name)) {
            *h = a->host = i;
            return 0;
        }
    char **hosts = realloc (a->hosts, (a->nhosts + 1) * sizeof *hosts);
    if (hosts)
        a->hosts = hosts;
    double **bytes = realloc (a->bytes, (a->nhosts + 1) * sizeof *bytes);
    if (bytes)
        a->bytes = bytes;
    int64_t *total = realloc (a->total, (a->nhosts + 1) * sizeof *total);
    if (total)
        a->total = total;
    if (!hosts || !bytes || !total)
        return -1;
    a->hosts[a->nhosts] = strdup (name);
    a->bytes[a->nhosts] = calloc (a->nb, sizeof **a->bytes);
    a->total[a->nhosts] = 0;
    a->nhosts++;    /* freed with the others whatever failed */
    if (!a->hosts[a->nhosts - 1] || !a->bytes[a->nhosts - 1])
        return -1;
    *h = a->host = a->nhosts - 1;
    return 0;
}

/* sb_html_host_rows' fn: one row. Returns 0, or -1 out of memory. */
static int
s_add_row (void *ctx, const sb_html_host_row_t *row)
{
    s_bins_t *a = ctx;
    size_t h = a->host;
    if (!a->have_last || a->last_rank != row->rank) {
        /* a rank's first row: its host, and no previous row */
        a->have_last = 0;
        if (s_host_index (a, row->host, &h) != 0)
            return -1;
    }
    double hi = row->t - a->start, lo = hi - 1.0;
    if (a->have_last && a->last_t - a->start > lo)
        lo = a->last_t - a->start;
    a->have_last = 1;
    a->last_rank = row->rank;
    a->last_t = row->t;
    if (row->bytes > 0 && isfinite (hi)) {
        s_spread (a->bytes[h], a->nb, a->bin, lo, hi, (double) row->bytes);
        a->total[h] += row->bytes;
    }
    return 0;
}

/* Put the hosts of a in name order. Returns 0. */
static int
s_bins_sort (s_bins_t *a)
{
    for (size_t i = 1; i < a->nhosts; i++) {
        /* insertion sort: the hosts come mostly in order (ranks are numbered by worker) */
        char *host = a->hosts[i];
        double *bytes = a->bytes[i];
        int64_t total = a->total[i];
        size_t j = i;
        for (; j > 0 && strcmp (a->hosts[j - 1], host) > 0; j--) {
            a->hosts[j] = a->hosts[j - 1];
            a->bytes[j] = a->bytes[j - 1];
            a->total[j] = a->total[j - 1];
        }
        a->hosts[j] = host;
        a->bytes[j] = bytes;
        a->total[j] = total;
    }
    return 0;
}

static void
s_bins_fini (s_bins_t *a)
{
    for (size_t h = 0; h < a->nhosts; h++) {
        free (a->hosts[h]);
        free (a->bytes[h]);
    }
    free (a->hosts);
    free (a->bytes);
    free (a->total);
}

/* The epochs' spans read so far (at most S_MAX_EPOCH_MARKS). */
#define S_MAX_EPOCH_MARKS 4096
typedef struct {
    sb_html_epoch_span_t *e;
    size_t                n, cap;
} s_spans_t;

/* sb_html_epoch_spans' fn. Returns 0, or -1 out of memory. */
static int
s_add_span (void *ctx, const sb_html_epoch_span_t *e)
{
    s_spans_t *s = ctx;
    if (s->n == S_MAX_EPOCH_MARKS)
        return 0;
    if (s->n == s->cap) {
        size_t c = s->cap ? 2 * s->cap : 64;
        void *more = realloc (s->e, c * sizeof *s->e);
        if (!more)
            return -1;
        s->e = more;
        s->cap = c;
    }
    s->e[s->n++] = *e;
    return 0;
}

/* The epoch marks of a time chart: a dashed vertical line where each epoch
 * began (its first rank's start), labelled with the epoch where there is
 * room for the label. */
static void
s_epoch_marks (FILE *out, const s_plot_t *p, const s_spans_t *s, double start)
{
    fprintf (out, "<g class=\"epoch-marks\">\n");
    double last_label = -1e9;
    for (size_t i = 0; i < s->n; i++) {
        double x = s->e[i].started_at - start;
        if (!isfinite (x))
            continue;
        double px = s_px (p, x < p->x0 ? p->x0 : x > p->x1 ? p->x1 : x);
        fprintf (out, "<line class=\"epoch-mark\" data-epoch=\"%lld\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\""
                 " stroke=\"#555555\" stroke-width=\"1\" stroke-dasharray=\"4 3\"><title>epoch %lld began at %.2f s"
                 "</title></line>\n", (long long) s->e[i].epoch, px, px, S_TOP, S_H - S_BOTTOM,
                 (long long) s->e[i].epoch, x);
        if (px - last_label >= 28) {
            fprintf (out, "<text class=\"epoch-label\" x=\"%.1f\" y=\"%d\">e%lld</text>\n", px + 2, S_TOP + 10,
                     (long long) s->e[i].epoch);
            last_label = px;
        }
    }
    fprintf (out, "</g>\n");
}

/* chart-throughput: MiB/s per host over time, every bin drawn (idle ones
 * at zero), with the epochs' starts marked. */
static int
s_chart_throughput (sqlite3 *db, int64_t run_id, const s_run_t *r, FILE *out)
{
    static const char title[] = "Read throughput per host (MiB/s)";
    double span = 0;
    if (sb_export_timeseries_span (db, run_id, r->row.started_at, &span) != 0) {
        s_query_failed (db);
        return -1;
    }
    s_spans_t spans = { 0 };
    int got = sb_html_epoch_spans (db, run_id, s_add_span, &spans);
    if (got != 0) {
        if (got > 0)
            fprintf (stderr, "shardbench report: --html: out of memory\n");
        else
            s_query_failed (db);
        free (spans.e);
        return -1;
    }
    if (!isfinite (span) || span < 0)
        span = 0;
    for (size_t i = 0; i < spans.n; i++) {
        double x = spans.e[i].started_at - r->row.started_at;
        if (isfinite (x) && x > span && x < span + 86400)
            span = x;   /* an epoch that began after the last row still gets its mark */
    }
    /* bins of whole seconds since the run start; wide enough that no line
     * has more than S_MAX_POINTS points */
    double bin = span > S_MAX_POINTS ? ceil (span / S_MAX_POINTS) : 1;
    size_t nb = (size_t) ceil (span / bin);
    nb = nb ? nb : 1;
    s_bins_t a = { .nb = nb, .bin = bin, .start = r->row.started_at };
    int ret = -1;
    got = sb_html_host_rows (db, run_id, s_add_row, &a);
    if (got > 0)
        goto oom;
    if (got < 0) {
        s_query_failed (db);
        goto done;
    }
    if (s_bins_sort (&a) != 0)
        goto oom;
    size_t nhosts = a.nhosts;
    int64_t all = 0;
    for (size_t h = 0; h < nhosts; h++)
        all += a.total[h];
    if (!nhosts || !all) {
        s_no_chart (out, "chart-throughput", title, "no throughput samples recorded for this run");
        ret = 0;
        goto done;
    }
    s_plot_t p = { 0, (double) nb * bin, 0, 0 };
    double *mibps = malloc (nhosts * nb * sizeof *mibps);
    if (!mibps)
        goto oom;
    for (size_t h = 0; h < nhosts; h++)
        for (size_t b = 0; b < nb; b++) {
            double y = a.bytes[h][b] / 1048576.0 / bin;
            mibps[h * nb + b] = y;
            p.y1 = y > p.y1 ? y : p.y1;
        }
    p.y1 = p.y1 > 0 ? p.y1 * 1.1 : 1;
    s_svg_open (out, "chart-throughput", title);
    char xlabel[80];
    snprintf (xlabel, sizeof xlabel, "seconds since run start (bins of %g s)", bin);
    s_axes (out, &p, 1, xlabel, "MiB/s");
    s_epoch_marks (out, &p, &spans, r->row.started_at);
#define S_X(b) s_px (&p, (double) (b) * bin + bin / 2)
    if (nhosts > S_NCOLORS) {
        /* too many hosts for a line each: the band from the slowest to the
         * fastest host of each bin, their mean, and the host that read least */
        size_t slow = 0;
        for (size_t h = 1; h < nhosts; h++)
            if (a.total[h] < a.total[slow])
                slow = h;
        fprintf (out, "<polygon class=\"host-band\" fill=\"%s\" fill-opacity=\"0.25\" stroke=\"none\" points=\"",
                 s_colors[0]);
        for (size_t pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < nb; i++) {
                size_t b = pass ? nb - 1 - i : i;
                double v = mibps[b];
                for (size_t h = 1; h < nhosts; h++) {
                    double y = mibps[h * nb + b];
                    v = pass ? (y < v ? y : v) : (y > v ? y : v);
                }
                fprintf (out, "%s%.1f,%.1f", pass || i ? " " : "", S_X (b), s_py (&p, v));
            }
        fprintf (out, "\"/>\n<polyline class=\"host-mean\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                 s_colors[0]);
        for (size_t b = 0; b < nb; b++) {
            double sum = 0;
            for (size_t h = 0; h < nhosts; h++)
                sum += mibps[h * nb + b];
            fprintf (out, "%s%.1f,%.1f", b ? " " : "", S_X (b), s_py (&p, sum / (double) nhosts));
        }
        fprintf (out, "\"/>\n<polyline class=\"host-line host-slowest\" data-host=\"");
        sb_report_html_escape (out, a.hosts[slow]);
        fprintf (out, "\" data-bins=\"%zu\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" points=\"", nb);
        for (size_t b = 0; b < nb; b++)
            fprintf (out, "%s%.1f,%.1f", b ? " " : "", S_X (b), s_py (&p, mibps[slow * nb + b]));
        int x = S_W - S_RIGHT + 12, y = S_TOP + 10;
        fprintf (out, "\"/>\n<g class=\"legend\">\n"
                 "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"10\" fill=\"%s\" fill-opacity=\"0.25\"/>"
                 "<text x=\"%d\" y=\"%d\">%zu hosts: min to max</text>\n"
                 "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/>"
                 "<text x=\"%d\" y=\"%d\">mean of the hosts</text>\n"
                 "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"#d62728\"/>"
                 "<text x=\"%d\" y=\"%d\">least bytes:</text>\n<text class=\"legend-host\" x=\"%d\" y=\"%d\">",
                 x, y - 8, s_colors[0], x + 20, y + 1, nhosts, x, y + 14, s_colors[0], x + 20, y + 19, x, y + 32, x + 20,
                 y + 37, x + 20, y + 55);
        sb_report_html_escape (out, a.hosts[slow]);
        fprintf (out, "</text>\n</g>\n");
    }
    else {
        for (size_t h = 0; h < nhosts; h++) {
            const char *color = s_colors[h % S_NCOLORS];
            fprintf (out, "<polyline class=\"host-line\" data-host=\"");
            sb_report_html_escape (out, a.hosts[h]);
            fprintf (out, "\" data-bins=\"%zu\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", nb, color);
            for (size_t b = 0; b < nb; b++)
                fprintf (out, "%s%.1f,%.1f", b ? " " : "", S_X (b), s_py (&p, mibps[h * nb + b]));
            fprintf (out, "\"/>\n");
            /* a dot per bin that read something, so that a run shorter than
             * two bins still shows its point */
            fprintf (out, "<g class=\"host-points\" fill=\"%s\">", color);
            for (size_t b = 0; b < nb; b++)
                if (mibps[h * nb + b] > 0)
                    fprintf (out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>", S_X (b), s_py (&p, mibps[h * nb + b]));
            fprintf (out, "</g>\n");
        }
        fprintf (out, "<g class=\"legend\">\n");
        for (size_t h = 0; h < nhosts; h++) {
            int y = S_TOP + 10 + (int) h * 18;
            fprintf (out, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/>"
                     "<text class=\"legend-host\" x=\"%d\" y=\"%d\">", S_W - S_RIGHT + 12, y - 4,
                     s_colors[h % S_NCOLORS], S_W - S_RIGHT + 32, y + 1);
            sb_report_html_escape (out, a.hosts[h]);
            fprintf (out, "</text>\n");
        }
        fprintf (out, "</g>\n");
    }
#undef S_X
    free (mibps);
    s_svg_close (out, nhosts > S_NCOLORS
                 ? "Bytes read per host, summed over its ranks, per time bin since the run start (timeseries"
                   " table; a row's bytes spread over the interval it covers): the band spans the slowest to the"
                   " fastest host of each bin, the line is their mean, and the host that read least over the run is"
                   " drawn on its own. A bin in which a host read nothing is drawn at 0. Dashed lines: the start of"
                   " each epoch."
                 : "Bytes read per host, summed over its ranks, per time bin since the run start (timeseries"
                   " table; a row's bytes spread over the interval it covers). A bin in which a host read nothing"
                   " is drawn at 0. Dashed lines: the start of each epoch.");
    ret = 0;
    goto done;
oom:
    fprintf (stderr, "shardbench report: --html: out of memory\n");
done:
    s_bins_fini (&a);
    free (spans.e);
    return ret;
}

/* chart-au: AU per epoch against the threshold: DLIO's
 * train_au_percentage, else au_mean, of the epochs rows ep[0..nep-1]. */
static void
s_chart_au (const sb_report_epoch_t *ep, size_t nep, const s_run_t *r, FILE *out)
{
    int64_t epochs[1024];
    double au[1024];
    size_t n = 0;
    for (size_t i = 0; i < nep && n < sizeof au / sizeof au[0]; i++) {
        if (!ep[i].has_dlio && !ep[i].has_au_mean)
            continue;
        double v = 100 * (ep[i].has_dlio ? ep[i].dlio_au_percentage / 100 : ep[i].au_mean);
        if (!isfinite (v) || v < 0)
            continue;   /* not an AU: the coordinator refuses such figures, an edited database may hold them */
        epochs[n] = ep[i].epoch;
        au[n++] = v;
    }
    if (!n) {
        s_no_chart (out, "chart-au", "Accelerator utilization (AU) per epoch", "no finished epoch in this run");
        return;
    }
    s_svg_open (out, "chart-au", "Accelerator utilization (AU) per epoch");
    {
        s_plot_t p = { 0, (double) n, 0, 100 };
        for (size_t i = 0; i < n; i++)
            if (au[i] > p.y1)
                p.y1 = au[i];
        p.y1 *= 1.1;    /* room for the values above the bars */
        s_axes (out, &p, 0, "epoch", "AU %");
        double slot = (double) (S_W - S_LEFT - S_RIGHT) / (double) n, w = slot * 0.6;
        for (size_t i = 0; i < n; i++) {
            double x = s_px (&p, (double) i) + (slot - w) / 2, y = s_py (&p, au[i]);
            fprintf (out, "<rect class=\"au-bar\" data-epoch=\"%lld\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\""
                     " height=\"%.1f\" fill=\"%s\"><title>epoch %lld: AU %.2f%%</title></rect>\n"
                     "<text class=\"bar-value\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.1f</text>\n"
                     "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%lld</text>\n",
                     (long long) epochs[i], x, y, w, s_py (&p, 0) - y, s_colors[0], (long long) epochs[i], au[i],
                     x + w / 2, y - 4, au[i], x + w / 2, S_H - S_BOTTOM + 18, (long long) epochs[i]);
        }
        if (isfinite (r->row.au_threshold)) {
            double y = s_py (&p, 100 * r->row.au_threshold);
            fprintf (out, "<line class=\"au-threshold\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\""
                     " stroke-width=\"2\" stroke-dasharray=\"8 5\"/>\n"
                     "<text class=\"threshold-label\" x=\"%d\" y=\"%.1f\">threshold %.1f%%</text>\n",
                     S_LEFT, S_W - S_RIGHT, y, y, S_W - S_RIGHT + 8, y + 4, 100 * r->row.au_threshold);
        }
    }
    s_svg_close (out, "Mean AU of the ranks per epoch (bars) and the workload's metric.au threshold (dashed).");
}

/* bin 0: [0, 1) us; bin 1: [1, 2); then [2^e, 1.5 * 2^e) and [1.5 * 2^e, 2^(e+1)) for e = 1..62 */
#define S_LAT_BINS (2 + 2 * 62)

/* The read latency histogram bins read so far: the merged histogram and
 * the chart's own bins. */
typedef struct {
    sb_histogram_t *h;
    uint64_t        bins[S_LAT_BINS];
} s_latency_t;

/* sb_export_latency_bins' fn: one histogram bin. Returns 0. */
static int
s_add_latency (void *ctx, int64_t low, int64_t count)
{
    s_latency_t *l = ctx;
    if (low < 0 || count <= 0)
        return 0;   /* not something shardbench wrote */
    uint64_t c = (uint64_t) count, v = (uint64_t) low;
    l->h->counts[sb_histogram_bin (v)] += c;
    l->h->total += c;
    size_t b;
    if (v < 2)
        b = (size_t) v;
    else {
        unsigned e = 63 - (unsigned) __builtin_clzll (v);
        b = 2 + 2 * (e - 1) + (v >= (3ull << (e - 1)));
    }
    l->bins[b < S_LAT_BINS ? b : S_LAT_BINS - 1] += c;
    return 0;
}

/* chart-latency: the merged read latency histogram, two bins per power of
 * two. The histogram's log-linear bins nest in these exactly: below 16 us
 * every value has its own bin, above every power of two is split in 16. */
static int
s_chart_latency (sqlite3 *db, int64_t run_id, FILE *out)
{
    s_latency_t *l = calloc (1, sizeof *l);
    sb_histogram_t *h = calloc (1, sizeof *h);
    if (!l || !h) {
        free (l);
        free (h);
        fprintf (stderr, "shardbench report: --html: out of memory\n");
        return -1;
    }
    l->h = h;
    enum { NBINS = S_LAT_BINS };
    uint64_t *bins = l->bins;
    if (sb_export_latency_bins (db, run_id, s_add_latency, l) != 0) {
        s_query_failed (db);
        free (h);
        free (l);
        return -1;
    }
    if (!h->total) {
        s_no_chart (out, "chart-latency", "Sample read latency (all epochs)", "no read latency recorded for this run");
        free (h);
        free (l);
        return 0;
    }
    s_svg_open (out, "chart-latency", "Sample read latency (all epochs)");
    {
        size_t first = NBINS, last = 0;
        uint64_t top = 0;
        for (size_t b = 0; b < NBINS; b++)
            if (bins[b]) {
                first = b < first ? b : first;
                last = b;
                top = bins[b] > top ? bins[b] : top;
            }
        /* bin edges as log2 of microseconds; [0, 1) is drawn as [0.5, 1) */
#define S_LO(b) ((b) == 0 ? -1.0 : (b) == 1 ? 0.0 : (double) (((b) - 2) / 2 + 1) + ((b) % 2 ? log2 (1.5) : 0.0))
#define S_HI(b) ((b) == 0 ? 0.0 : (b) == 1 ? 1.0 : (b) % 2 ? (double) (((b) - 2) / 2 + 2) : S_LO (b) + log2 (1.5))
        s_plot_t p = { floor (S_LO (first)) - 0.5, ceil (S_HI (last)) + 0.5, 0, (double) top * 1.1 };
        s_axes (out, &p, 0, "read latency (log scale)", "samples");
        for (size_t b = first; b <= last; b++) {
            if (!bins[b])
                continue;
            double x0 = s_px (&p, S_LO (b)), x1 = s_px (&p, S_HI (b)), y = s_py (&p, (double) bins[b]);
            fprintf (out, "<rect class=\"lat-bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                     "<title>%g to %g us: %llu samples</title></rect>\n", x0 + 0.5, y, x1 - x0 - 1 > 1 ? x1 - x0 - 1 : 1,
                     s_py (&p, 0) - y, s_colors[2], b == 0 ? 0.0 : exp2 (S_LO (b)), exp2 (S_HI (b)),
                     (unsigned long long) bins[b]);
        }
#undef S_LO
#undef S_HI
        /* x ticks at 1, 2, 5 x 10^n us */
        for (int d = 0; d < 10; d++)
            for (int k = 0; k < 3; k++) {
                static const double mult[] = { 1, 2, 5 };
                double us = mult[k] * pow (10, d), lx = log2 (us);
                if (lx < p.x0 || lx > p.x1)
                    continue;
                fprintf (out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
                         "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g %s</text>\n", s_px (&p, lx),
                         s_px (&p, lx), S_TOP, S_H - S_BOTTOM, s_px (&p, lx), S_H - S_BOTTOM + 18,
                         us < 1e3 ? us : us < 1e6 ? us / 1e3 : us / 1e6, us < 1e3 ? "us" : us < 1e6 ? "ms" : "s");
            }
        static const struct { const char *cls; double q; const char *color; } marks[] = {
            { "lat-p50", 0.5, "#1f77b4" }, { "lat-p99", 0.99, "#d62728" },
        };
        for (size_t m = 0; m < 2; m++) {
            double us = sb_histogram_quantile (h, marks[m].q), x = s_px (&p, log2 (us > 0.5 ? us : 0.5));
            fprintf (out, "<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\""
                     " stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n"
                     "<text class=\"mark-label\" x=\"%.1f\" y=\"%d\" fill=\"%s\">p%g %.3f ms</text>\n",
                     marks[m].cls, x, x, S_TOP, S_H - S_BOTTOM, marks[m].color, x + 4, S_TOP + 12 + 14 * (int) m,
                     marks[m].color, 100 * marks[m].q, us / 1000);
        }
    }
    s_svg_close (out, "Time the I/O engine took per sample read, over every sample of every rank and epoch"
                 " (read_latency table), with the median (p50) and 99th percentile (p99).");
    free (h);
    free (l);
    return 0;
}

/* The endpoint bars drawn so far. */
typedef struct {
    FILE          *out;
    const s_plot_t *p;
    double         slot, w;
    int64_t        i;
} s_endpoint_bars_t;

/* sb_report_endpoints' fn: the bars of one endpoint. */
static void
s_endpoint_bar (void *ctx, const sb_report_endpoint_t *e)
{
    s_endpoint_bars_t *eb = ctx;
    FILE *out = eb->out;
    const s_plot_t *p = eb->p;
    double slot = eb->slot, w = eb->w;
    double x = s_px (p, (double) eb->i++) + slot * 0.15;
    int64_t v[2] = { e->requests, e->errors };
    static const char *const cls[] = { "ep-requests", "ep-errors" }, *const fill[] = { "#1f77b4", "#d62728" };
    for (int k = 0; k < 2; k++) {
        double y = s_py (p, (double) v[k]), h = s_py (p, 0) - y;
        fprintf (out, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                 "<title>%s: %lld</title></rect>\n<text class=\"bar-value\" x=\"%.1f\" y=\"%.1f\""
                 " text-anchor=\"middle\">%lld</text>\n", cls[k], x + k * w, h < 1 ? y - 1 : y, w, h < 1 ? 1 : h,
                 fill[k], k ? "errors" : "requests", (long long) v[k], x + k * w + w / 2, y - 4, (long long) v[k]);
    }
    fprintf (out, "<text class=\"tick endpoint-name\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x + w,
             S_H - S_BOTTOM + 18);
    sb_report_html_escape (out, e->endpoint);
    fprintf (out, "</text>\n");
}

/* chart-endpoints: requests and errors per endpoint. */
static int
s_chart_endpoints (sqlite3 *db, int64_t run_id, FILE *out)
{
    int64_t n = 0, top = 0;
    if (sb_export_endpoint_count (db, run_id, &n, &top) != 0) {
        s_query_failed (db);
        return -1;
    }
    if (!n) {
        s_no_chart (out, "chart-endpoints", "Requests and errors per object-store endpoint",
                    "no object-store endpoints in this run (file or synthetic storage)");
        return 0;
    }
    s_svg_open (out, "chart-endpoints", "Requests and errors per object-store endpoint");
    s_plot_t p = { 0, (double) n, 0, top > 0 ? (double) top * 1.15 : 1 };
    s_axes (out, &p, 0, "endpoint", "requests");
    double slot = (double) (S_W - S_LEFT - S_RIGHT) / (double) n;
    s_endpoint_bars_t eb = { .out = out, .p = &p, .slot = slot, .w = slot * 0.35 };
    if (sb_report_endpoints (db, run_id, s_endpoint_bar, &eb) != 0) {
        s_query_failed (db);
        return -1;
    }
    fprintf (out, "<g class=\"legend\"><rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#1f77b4\"/>"
             "<text x=\"%d\" y=\"%d\">requests</text><rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\""
             " fill=\"#d62728\"/><text x=\"%d\" y=\"%d\">errors</text></g>\n", S_W - S_RIGHT + 12, S_TOP,
             S_W - S_RIGHT + 30, S_TOP + 11, S_W - S_RIGHT + 12, S_TOP + 20, S_W - S_RIGHT + 30, S_TOP + 31);
    s_svg_close (out, "Requests (retries included) and failed attempts per object-store endpoint (endpoints table).");
    return 0;
}

/* The rows of the errors table written so far. */
typedef struct {
    FILE  *out;
    double started_at;
    int    rows;
} s_error_rows_t;

/* sb_export_errors' fn: one row (the first S_MAX_ERRORS shown). Returns 0. */
static int
s_error_row (void *ctx, const sb_export_error_t *e)
{
    s_error_rows_t *er = ctx;
    FILE *out = er->out;
    if (er->rows == 0)
        fprintf (out, "<h2>Errors</h2>\n<table id=\"errors\" class=\"data\">\n<tr><th>s</th><th>rank</th>"
                 "<th>host</th><th>op</th><th>target</th><th>endpoint</th><th>HTTP</th><th>service code</th>"
                 "<th>library code</th><th>message</th></tr>\n");
    if (++er->rows > S_MAX_ERRORS)
        return 0;
    fprintf (out, "<tr><td>%.2f</td><td>", e->t - er->started_at);
    if (e->has_rank)
        fprintf (out, "%lld", (long long) e->rank);
    const char *const text[] = { e->host, e->op, e->target, e->endpoint };
    for (size_t c = 0; c < sizeof text / sizeof text[0]; c++) {
        fprintf (out, "</td><td>");
        sb_report_html_escape (out, text[c]);
    }
    fprintf (out, "</td><td>");
    if (e->has_http_status)
        fprintf (out, "%lld", (long long) e->http_status);
    fprintf (out, "</td><td>");
    sb_report_html_escape (out, e->service_code);
    fprintf (out, "</td><td>");
    if (e->has_library_code && e->library_code != 0)    /* 0: the library reported nothing */
        fprintf (out, "%lld", (long long) e->library_code);
    fprintf (out, "</td><td>");
    sb_report_html_escape (out, e->message);
    fprintf (out, "</td></tr>\n");
    return 0;
}

static int
s_errors_table (sqlite3 *db, int64_t run_id, const s_run_t *r, FILE *out)
{
    s_error_rows_t er = { .out = out, .started_at = r->row.started_at };
    int rc = sb_export_errors (db, run_id, s_error_row, &er);
    if (er.rows)
        fprintf (out, "</table>\n");
    if (er.rows > S_MAX_ERRORS)
        fprintf (out, "<p>%d more errors not shown (errors table).</p>\n", er.rows - S_MAX_ERRORS);
    if (rc != 0) {
        s_query_failed (db);
        return -1;
    }
    return 0;
}

/* A horizontal bar chart: a row per label, nseries bars per row, stacked
 * (one bar split in parts) or grouped (side by side). */
#define S_HB_LEFT    190    /* room for the row labels */
#define S_HB_MAXROWS 256    /* rows drawn; the rest are counted in a line */
typedef struct {
    const char        *id, *title, *caption;
    const char        *xlabel;      /* the values' unit */
    const char        *attr;        /* attribute naming the row on each bar: "data-host", "data-rank", ... */
    int                nseries, stacked;
    const char *const *series;      /* legend names */
    const char *const *cls;         /* class of each series' bars */
    const char *const *colors;
} s_hbars_t;

/* Draw the chart of n rows: labels[i], values v[i * nseries + k] (NAN: no
 * bar), or the line saying why it is left out when no value is above 0. */
static void
s_chart_hbars (FILE *out, const s_hbars_t *c, char *const *labels, const double *v, size_t n, const char *empty)
{
    size_t ns = (size_t) c->nseries, shown = n < S_HB_MAXROWS ? n : S_HB_MAXROWS;
    double top = 0;
    for (size_t i = 0; i < shown; i++) {
        double sum = 0;
        for (size_t k = 0; k < ns; k++) {
            double x = v[i * ns + k];
            if (!isfinite (x) || x < 0)
                continue;
            sum = c->stacked ? sum + x : (x > sum ? x : sum);
        }
        top = sum > top ? sum : top;
    }
    if (!(top > 0)) {
        s_no_chart (out, c->id, c->title, empty);
        return;
    }
    int row = c->stacked ? 20 : 6 + 8 * c->nseries, h = S_TOP + 8 + (int) shown * row + S_BOTTOM;
    int x0 = S_HB_LEFT, x1 = S_W - S_RIGHT;
    top *= 1.05;
    s_svg_open_h (out, c->id, c->title, h);
    double step = s_nice_step (top, 6);
    int ticks = 0;
    fprintf (out, "<g class=\"axis x-axis\">\n");
    for (double x = 0; x <= top && ticks++ < S_MAX_TICKS; x += step) {
        double px = x0 + x / top * (x1 - x0);
        fprintf (out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
                 "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", px, px, S_TOP,
                 h - S_BOTTOM, px, h - S_BOTTOM + 18, x);
    }
    fprintf (out, "</g>\n<line class=\"frame\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
             "<line class=\"frame\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n"
             "<text class=\"axis-label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", x0, S_TOP, x0, h - S_BOTTOM, x0,
             h - S_BOTTOM, x1, h - S_BOTTOM, (x0 + x1) / 2, h - 12);
    sb_report_html_escape (out, c->xlabel);
    fprintf (out, "</text>\n");
    for (size_t i = 0; i < shown; i++) {
        int y = S_TOP + 8 + (int) i * row;
        fprintf (out, "<text class=\"tick row-label\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", x0 - 6, y + row / 2 + 4);
        sb_report_html_escape (out, labels[i]);
        fprintf (out, "</text>\n");
        double at = 0;
        for (size_t k = 0; k < ns; k++) {
            double x = v[i * ns + k];
            if (!isfinite (x) || x < 0)
                continue;
            double px = x0 + at / top * (x1 - x0), w = x / top * (x1 - x0);
            double by = c->stacked ? y + 3 : y + 3 + 8 * (double) k, bh = c->stacked ? row - 6 : 7;
            fprintf (out, "<rect class=\"%s\" %s=\"", c->cls[k], c->attr);
            sb_report_html_escape (out, labels[i]);
            fprintf (out, "\" data-value=\"%.6g\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                     x, px, by, w > 0.5 ? w : 0.5, bh, c->colors[k]);
            sb_report_html_escape (out, labels[i]);
            fprintf (out, ": %s %.4g</title></rect>\n", c->series[k], x);
            if (c->stacked)
                at += x;
        }
    }
    fprintf (out, "<g class=\"legend\">\n");
    for (size_t k = 0; k < ns; k++)
        fprintf (out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
                 x1 + 12, S_TOP + 18 * (int) k, c->colors[k], x1 + 30, S_TOP + 11 + 18 * (int) k, c->series[k]);
    fprintf (out, "</g>\n");
    if (shown < n)
        fprintf (out, "<text class=\"tick\" x=\"%d\" y=\"%d\">%zu more not drawn</text>\n", x0, h - 30, n - shown);
    s_svg_close (out, c->caption);
}

/* The time of each rank and host summed over epochs: compute, I/O wait,
 * barrier wait (rank_epochs). */
typedef struct {
    double  *rank;          /* 3 per rank */
    size_t  *rank_host;     /* host index + 1 of each rank, 0: none seen */
    size_t   nranks;
    char   **hosts;
    size_t   nhosts;
    int      oom;
} s_split_t;

#define S_MAX_RANK 1048576  /* ranks above are not something shardbench wrote */

/* sb_export_rank_epochs' fn: one row. Returns 0, or -1 out of memory. */
static int
s_add_split (void *ctx, const sb_export_rank_epoch_t *e)
{
    s_split_t *s = ctx;
    if (e->rank < 0 || e->rank >= S_MAX_RANK)
        return 0;
    size_t r = (size_t) e->rank;
    if (r >= s->nranks) {
        size_t n = r + 1;
        double *rank = realloc (s->rank, 3 * n * sizeof *rank);
        if (rank)
            s->rank = rank;
        size_t *rank_host = realloc (s->rank_host, n * sizeof *rank_host);
        if (rank_host)
            s->rank_host = rank_host;
        if (!rank || !rank_host)
            return -1;
        for (size_t i = s->nranks; i < n; i++) {
            s->rank[3 * i] = s->rank[3 * i + 1] = s->rank[3 * i + 2] = 0;
            s->rank_host[i] = 0;
        }
        s->nranks = n;
    }
    if (!s->rank_host[r]) {
        size_t h = 0;
        while (h < s->nhosts && strcmp (s->hosts[h], e->host) != 0)
            h++;
        if (h == s->nhosts) {
            char **hosts = realloc (s->hosts, (s->nhosts + 1) * sizeof *hosts);
            if (!hosts)
                return -1;
            s->hosts = hosts;
            if (!(s->hosts[s->nhosts] = strdup (e->host)))
                return -1;
            s->nhosts++;
        }
        s->rank_host[r] = h + 1;
    }
    const double v[3] = { e->compute_s, e->io_wait_s, e->barrier_s };
    for (int k = 0; k < 3; k++)
        if (isfinite (v[k]) && v[k] > 0)
            s->rank[3 * r + (size_t) k] += v[k];
    return 0;
}

/* chart-split-host and chart-split-rank: compute, I/O wait and barrier
 * wait per host (the mean of its ranks) and per rank, summed over epochs. */
static int
s_charts_split (sqlite3 *db, int64_t run_id, FILE *out)
{
    static const char *const series[] = { "compute", "I/O wait", "barrier wait" };
    static const char *const cls[] = { "split-compute", "split-io", "split-barrier" };
    static const char *const colors[] = { "#2ca02c", "#ff7f0e", "#9467bd" };
    s_split_t s = { 0 };
    int got = sb_export_rank_epochs (db, run_id, s_add_split, &s), ret = -1;
    char **labels = NULL;
    double *v = NULL;
    size_t nlabels = 0;
    if (got < 0) {
        s_query_failed (db);
        goto done;
    }
    if (got > 0)
        goto oom;
    /* per host: the mean over its ranks */
    v = calloc (3 * (s.nhosts > s.nranks ? s.nhosts : s.nranks) + 3, sizeof *v);
    double *count = calloc (s.nhosts + 1, sizeof *count);
    labels = calloc (s.nranks + 1, sizeof *labels);
    if (!v || !count || !labels) {
        free (count);
        goto oom;
    }
    for (size_t r = 0; r < s.nranks; r++) {
        if (!s.rank_host[r])
            continue;
        size_t h = s.rank_host[r] - 1;
        count[h]++;
        for (int k = 0; k < 3; k++)
            v[3 * h + (size_t) k] += s.rank[3 * r + (size_t) k];
    }
    for (size_t h = 0; h < s.nhosts; h++)
        for (int k = 0; k < 3; k++)
            v[3 * h + (size_t) k] /= count[h] > 0 ? count[h] : 1;
    free (count);
    s_hbars_t c = {
        .id = "chart-split-host", .title = "Where the time went, per host (mean of its ranks)",
        .caption = "Seconds per rank, summed over the epochs and averaged over the host's ranks: emulated compute,"
                   " waiting for data (I/O wait) and waiting in step barriers for the other ranks (rank_epochs:"
                   " compute_s, io_wait_s, barrier_s).",
        .xlabel = "seconds per rank", .attr = "data-host", .nseries = 3, .stacked = 1, .series = series, .cls = cls,
        .colors = colors,
    };
    s_chart_hbars (out, &c, s.hosts, v, s.nhosts, "no rank recorded a finished epoch");
    /* per rank, in rank order (ranks never seen are left out) */
    for (size_t r = 0; r < s.nranks; r++) {
        if (!s.rank_host[r])
            continue;
        char buf[64];
        snprintf (buf, sizeof buf, "rank %zu", r);
        if (!(labels[nlabels] = strdup (buf)))
            goto oom;
        for (int k = 0; k < 3; k++)
            v[3 * nlabels + (size_t) k] = s.rank[3 * r + (size_t) k];
        nlabels++;
    }
    c.id = "chart-split-rank";
    c.title = "Where the time went, per rank";
    c.caption = "Seconds of each rank summed over the epochs: emulated compute, I/O wait and barrier wait"
                " (rank_epochs).";
    c.xlabel = "seconds";
    c.attr = "data-rank";
    s_chart_hbars (out, &c, labels, v, nlabels, "no rank recorded a finished epoch");
    ret = 0;
    goto done;
oom:
    fprintf (stderr, "shardbench report: --html: out of memory\n");
done:
    for (size_t i = 0; i < nlabels; i++)
        free (labels[i]);
    free (labels);
    free (v);
    for (size_t h = 0; h < s.nhosts; h++)
        free (s.hosts[h]);
    free (s.hosts);
    free (s.rank);
    free (s.rank_host);
    return ret;
}

/* The read latency percentiles of each epoch as sb_report_latencies gives
 * them (p50_ms, p90_ms, p99_ms, p999_ms), in that order. */
static const double s_lat_q[] = { 0.5, 0.9, 0.99, 0.999 };
static const char *const s_lat_name[] = { "p50", "p90", "p99", "p99.9" };
#define S_NQ 4
typedef struct {
    int64_t  epoch;
    uint64_t samples;
    double   ms[S_NQ];
} s_epoch_lat_t;

typedef struct {
    s_epoch_lat_t *e;
    size_t         n, cap;
    int            oom;
} s_epoch_lats_t;

/* sb_report_latencies' fn: one epoch's percentiles into a row (oom set
 * when there is no room). */
static void
s_add_epoch_lat (void *ctx, const sb_report_latency_t *l)
{
    s_epoch_lats_t *a = ctx;
    if (a->oom)
        return;
    if (a->n == a->cap) {
        size_t c = a->cap ? 2 * a->cap : 64;
        void *more = realloc (a->e, c * sizeof *a->e);
        if (!more) {
            a->oom = 1;
            return;
        }
        a->e = more;
        a->cap = c;
    }
    a->e[a->n++] = (s_epoch_lat_t) {
        .epoch = l->epoch, .samples = (uint64_t) l->reads, .ms = { l->p50_ms, l->p90_ms, l->p99_ms, l->p999_ms },
    };
}

/* table read-latency and chart-latency-epochs: p50, p90, p99 and p99.9 of
 * the sample read latency of each epoch. */
static int
s_latency_epochs (sqlite3 *db, int64_t run_id, FILE *out)
{
    static const char title[] = "Read latency percentiles per epoch (ms)";
    static const char *const colors[] = { "#1f77b4", "#2ca02c", "#ff7f0e", "#d62728" };
    s_epoch_lats_t a = { 0 };
    int got = sb_report_latencies (db, run_id, SB_REPORT_LATENCY_EPOCHS, s_add_epoch_lat, &a);
    if (got == 0 && a.oom)
        got = 1;
    if (got != 0) {
        if (got > 0)
            fprintf (stderr, "shardbench report: --html: out of memory\n");
        else
            s_query_failed (db);
        free (a.e);
        return -1;
    }
    if (!a.n) {
        s_no_chart (out, "chart-latency-epochs", title, "no read latency recorded for this run");
        free (a.e);
        return 0;
    }
    fprintf (out, "<table id=\"read-latency\" class=\"data\">\n<tr><th>epoch</th><th>samples</th>");
    for (int q = 0; q < S_NQ; q++)
        fprintf (out, "<th>read %s ms</th>", s_lat_name[q]);
    fprintf (out, "</tr>\n");
    double top = 0;
    for (size_t i = 0; i < a.n; i++) {
        fprintf (out, "<tr><td>%lld</td><td>%llu</td>", (long long) a.e[i].epoch, (unsigned long long) a.e[i].samples);
        for (int q = 0; q < S_NQ; q++) {
            fprintf (out, "<td>%.3f</td>", a.e[i].ms[q]);
            top = a.e[i].ms[q] > top ? a.e[i].ms[q] : top;
        }
        fprintf (out, "</tr>\n");
    }
    fprintf (out, "</table>\n");
    s_plot_t p = { 0, (double) a.n, 0, top > 0 ? top * 1.1 : 1 };
    s_svg_open (out, "chart-latency-epochs", title);
    s_axes (out, &p, 0, "epoch", "ms");
    double slot = (double) (S_W - S_LEFT - S_RIGHT) / (double) a.n;
    for (size_t i = 0; i < a.n; i++)
        if (a.n <= 40 || i % ((a.n + 39) / 40) == 0)
            fprintf (out, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%lld</text>\n",
                     s_px (&p, (double) i) + slot / 2, S_H - S_BOTTOM + 18, (long long) a.e[i].epoch);
    for (int q = 0; q < S_NQ; q++) {
        fprintf (out, "<polyline class=\"lat-epoch lat-epoch-p%g\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\""
                 " points=\"", 100 * s_lat_q[q], colors[q]);
        for (size_t i = 0; i < a.n; i++)
            fprintf (out, "%s%.1f,%.1f", i ? " " : "", s_px (&p, (double) i) + slot / 2, s_py (&p, a.e[i].ms[q]));
        fprintf (out, "\"/>\n<g fill=\"%s\">", colors[q]);
        for (size_t i = 0; i < a.n; i++)
            fprintf (out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>epoch %lld %s: %.3f ms</title></circle>",
                     s_px (&p, (double) i) + slot / 2, s_py (&p, a.e[i].ms[q]), (long long) a.e[i].epoch,
                     s_lat_name[q], a.e[i].ms[q]);
        fprintf (out, "</g>\n");
    }
    fprintf (out, "<g class=\"legend\">\n");
    for (int q = 0; q < S_NQ; q++)
        fprintf (out, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
                 S_W - S_RIGHT + 12, S_TOP + 6 + 18 * q, colors[q], S_W - S_RIGHT + 32, S_TOP + 11 + 18 * q,
                 s_lat_name[q]);
    fprintf (out, "</g>\n");
    s_svg_close (out, "Sample read latency of each epoch over every rank (read_latency table): the median (p50),"
                 " 90th, 99th and 99.9th percentiles, from log-linear bins (within 1/16 of a power of two).");
    free (a.e);
    return 0;
}

/* The waited-for table written so far. */
typedef struct {
    FILE *out;
    int   rows;
} s_slowest_rows_t;

/* sb_report_slowest's fn: one row of the waited-for table (the table
 * opened on the first). */
static void
s_slowest_row (void *ctx, const sb_report_slowest_t *s)
{
    s_slowest_rows_t *sr = ctx;
    FILE *out = sr->out;
    if (!sr->rows++)
        fprintf (out, "<h2>The rank the others waited for, each epoch</h2>\n<table id=\"waited-for\" class=\"data\">\n"
                 "<tr><th>epoch</th><th>rank</th><th>host</th><th>held s</th><th>window s</th><th>own s</th>"
                 "<th>compute s</th><th>I/O wait s</th><th>barrier s</th><th>other s</th><th>idle s</th>"
                 "<th>mean barrier s of the ranks</th><th>ranks</th></tr>\n");
    fprintf (out, "<tr><td>%lld</td><td>%lld</td><td class=\"name\">", (long long) s->epoch, (long long) s->rank);
    sb_report_html_escape (out, s->host);
    if (isfinite (s->held_s))
        fprintf (out, "</td><td>%.3f", s->held_s);
    else
        fputs ("</td><td>-", out);
    fprintf (out, "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>"
             "<td>%.3f</td><td>%lld</td></tr>\n", s->window_s, s->own_s, s->compute_s, s->io_wait_s, s->barrier_s,
             s->other_s, s->idle_s, s->barrier_mean_s, (long long) s->ranks);
}

/* table waited-for: the rank the others waited for, each epoch, and where
 * the epoch's window went for it (nothing when no rank finished an epoch). */
static int
s_slowest_table (sqlite3 *db, int64_t run_id, FILE *out)
{
    s_slowest_rows_t sr = { .out = out };
    if (sb_report_slowest (db, run_id, s_slowest_row, &sr) != 0) {
        s_query_failed (db);
        return -1;
    }
    if (!sr.rows)
        return 0;
    fprintf (out, "</table>\n<p class=\"note\">The rank whose worker held the step barriers longest (held: the"
             " others waited that long for its STEP, as the coordinator timed the arrivals), else the one with the"
             " most time of its own (its wall time less its barrier wait; the lowest rank of equal ones), and its"
             " split of the epoch's window (first rank's start to last rank's finish): emulated compute of every"
             " step, I/O wait, barrier wait, other, idle (rank_epochs), beside the mean barrier wait of all the"
             " epoch's ranks.</p>\n");
    return 0;
}

/* The per-host read latency read so far: one histogram per host. */
typedef struct {
    FILE           *out;
    sb_histogram_t *h;
    char            host[256];
    int             rows;
} s_host_lat_t;

/* Write the row of the current host and start the next. */
static void
s_host_lat_flush (s_host_lat_t *a)
{
    if (!a->h->total)
        return;
    if (!a->rows++)
        fprintf (a->out, "<table id=\"host-latency\" class=\"data\">\n<tr><th>host</th><th>reads</th><th>read p50 ms</th>"
                 "<th>read p90 ms</th><th>read p99 ms</th><th>read p99.9 ms</th></tr>\n");
    fprintf (a->out, "<tr><td class=\"name\">");
    sb_report_html_escape (a->out, a->host);
    fprintf (a->out, "</td><td>%llu</td>", (unsigned long long) a->h->total);
    for (int q = 0; q < S_NQ; q++)
        fprintf (a->out, "<td>%.3f</td>", sb_histogram_quantile (a->h, s_lat_q[q]) / 1000);
    fprintf (a->out, "</tr>\n");
    sb_histogram_reset (a->h);
}

/* sb_html_host_latency's fn: one histogram bin. Returns 0. */
static int
s_add_host_lat (void *ctx, const char *host, int64_t low, int64_t count)
{
    s_host_lat_t *a = ctx;
    if (strcmp (host, a->host) != 0) {
        s_host_lat_flush (a);
        snprintf (a->host, sizeof a->host, "%s", host);
    }
    if (low >= 0 && count > 0) {
        a->h->counts[sb_histogram_bin ((uint64_t) low)] += (uint64_t) count;
        a->h->total += (uint64_t) count;
    }
    return 0;
}

/* table host-latency: read latency percentiles per host over all epochs
 * (host_read_latency), or a line saying the run has none. */
static int
s_host_latency (sqlite3 *db, int64_t run_id, FILE *out)
{
    s_host_lat_t a = { .out = out, .h = calloc (1, sizeof (sb_histogram_t)) };
    if (!a.h) {
        fprintf (stderr, "shardbench report: --html: out of memory\n");
        return -1;
    }
    fprintf (out, "<h3>Read latency per host (all epochs)</h3>\n");
    int got = sb_html_host_latency (db, run_id, s_add_host_lat, &a);
    if (got == 0)
        s_host_lat_flush (&a);
    free (a.h);
    if (got != 0) {
        s_query_failed (db);
        return -1;
    }
    if (a.rows)
        fprintf (out, "</table>\n");
    else
        fprintf (out, "<p class=\"note\">No per-host read latency recorded for this run (host_read_latency:"
                 " runs of schema 12 and later).</p>\n");
    return 0;
}

/* sb_report_endpoints' fn: one row of the endpoint-latency table. */
static void
s_endpoint_row (void *ctx, const sb_report_endpoint_t *e)
{
    FILE *out = ctx;
    fprintf (out, "<tr><td class=\"name\">");
    sb_report_html_escape (out, e->endpoint);
    fprintf (out, "</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.1f</td>", (long long) e->requests,
             (long long) e->errors, (long long) e->retries, (double) e->bytes / 1e6);
    const double ms[] = { e->mean_ms, e->p50_ms, e->p90_ms, e->p99_ms, e->max_ms };
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        if (isfinite (ms[i]))
            fprintf (out, "<td>%.3f</td>", ms[i]);
        else
            fprintf (out, "<td>-</td>");
    fprintf (out, "</tr>\n");
}

/* table endpoint-latency: requests, errors, retries and latency per
 * endpoint (nothing when the run used none). */
static int
s_endpoint_table (sqlite3 *db, int64_t run_id, FILE *out)
{
    int64_t n = 0, top = 0;
    if (sb_export_endpoint_count (db, run_id, &n, &top) != 0) {
        s_query_failed (db);
        return -1;
    }
    if (!n)
        return 0;
    fprintf (out, "<h2>Object-store endpoints</h2>\n<table id=\"endpoint-latency\" class=\"data\">\n<tr><th>endpoint</th>"
             "<th>requests</th><th>errors</th><th>retries</th><th>MB</th><th>mean ms</th><th>p50 ms</th>"
             "<th>p90 ms</th><th>p99 ms</th><th>max ms</th></tr>\n");
    if (sb_report_endpoints (db, run_id, s_endpoint_row, out) != 0) {
        s_query_failed (db);
        return -1;
    }
    fprintf (out, "</table>\n<p class=\"note\">Latency of the successful requests to each endpoint (endpoints"
             " table); requests count every attempt, retries included.</p>\n");
    return 0;
}

/* The write and read figures of each rank of a checkpoint run, read so far
 * (rows come by rank). */
typedef struct {
    char  **labels;
    double *v;              /* 2 per rank: write MB/s, read MB/s (NAN: none) */
    double  sum[4];         /* the current rank: write bytes, write s, read bytes, read s */
    int64_t rank;
    size_t  n, cap;
} s_ck_ranks_t;

/* Close the current rank into a row. Returns 0, or -1 out of memory. */
static int
s_ck_rank_flush (s_ck_ranks_t *a)
{
    if (a->rank < 0) {
        memset (a->sum, 0, sizeof a->sum);  /* not a rank shardbench writes */
        return 0;
    }
    if (a->n == a->cap) {
        size_t c = a->cap ? 2 * a->cap : 64;
        char **labels = realloc (a->labels, c * sizeof *labels);
        if (labels)
            a->labels = labels;
        double *v = realloc (a->v, 2 * c * sizeof *v);
        if (v)
            a->v = v;
        if (!labels || !v)
            return -1;
        a->cap = c;
    }
    char buf[64];
    snprintf (buf, sizeof buf, "rank %lld", (long long) a->rank);
    if (!(a->labels[a->n] = strdup (buf)))
        return -1;
    for (int k = 0; k < 2; k++)
        a->v[2 * a->n + (size_t) k] = a->sum[2 * k + 1] > 0 ? a->sum[2 * k] / 1e6 / a->sum[2 * k + 1] : NAN;
    a->n++;
    memset (a->sum, 0, sizeof a->sum);
    return 0;
}

/* sb_html_checkpoint_ranks' fn: one row. Returns 0, or -1 out of memory. */
static int
s_add_ck_rank (void *ctx, const sb_html_checkpoint_rank_t *r)
{
    s_ck_ranks_t *a = ctx;
    if (r->rank != a->rank) {
        if (s_ck_rank_flush (a) != 0)
            return -1;
        a->rank = r->rank;
    }
    int k = !strcmp (r->op, "write") ? 0 : !strcmp (r->op, "read") ? 1 : -1;
    if (k >= 0 && r->bytes > 0 && isfinite (r->duration_s) && r->duration_s > 0) {
        a->sum[2 * k] += (double) r->bytes;
        a->sum[2 * k + 1] += r->duration_s;
    }
    return 0;
}

static int
s_int64_cmp (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

/* A checkpoint run: table checkpoints, chart-checkpoint-throughput (GiB/s
 * of each checkpoint's write and read) and chart-checkpoint-ranks (MB/s of
 * each rank's writes and reads). */
static int
s_checkpoint_section (sqlite3 *db, int64_t run_id, FILE *out)
{
    static const char *const series[] = { "write", "read" };
    static const char *const colors[] = { "#1f77b4", "#ff7f0e" };
    sb_report_checkpoint_t *rows = NULL;
    size_t n = 0;
    if (sb_report_checkpoints (db, run_id, &rows, &n) != 0) {
        s_query_failed (db);
        return -1;
    }
    int ret = -1;
    s_ck_ranks_t a = { .rank = -1 };
    int64_t *nums = malloc ((n + 1) * sizeof *nums);
    char **labels = calloc (n + 1, sizeof *labels);
    double *v = malloc (2 * (n + 1) * sizeof *v);
    size_t nnums = 0;
    if (!nums || !labels || !v)
        goto oom;
    fprintf (out, "<h2>Checkpoints</h2>\n");
    if (!n)
        fprintf (out, "<p class=\"no-chart\" data-chart=\"checkpoints\">No checkpoint finished in this run.</p>\n");
    else {
        fprintf (out, "<table id=\"checkpoints\" class=\"data\">\n<tr><th>op</th><th>checkpoint</th><th>ranks</th>"
                 "<th>files</th><th>bytes</th><th>time s</th><th>GiB/s</th><th>MB/s</th>"
                 "<th>slowest rank MB/s</th></tr>\n");
        for (size_t i = 0; i < n; i++) {
            const sb_report_checkpoint_t *c = &rows[i];
            fprintf (out, "<tr><td class=\"name\">");
            sb_report_html_escape (out, c->op ? c->op : "");
            fprintf (out, "</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.3f</td><td>%.3f</td>"
                     "<td>%.1f</td><td>%.1f</td></tr>\n", (long long) c->checkpoint, (long long) c->ranks,
                     (long long) c->files, (long long) c->bytes, c->duration_s, c->gib_per_s, c->mb_per_s,
                     c->min_rank_mb_per_s);
        }
        fprintf (out, "</table>\n");
    }
    /* one row per checkpoint number, its write and its read side by side */
    for (size_t i = 0; i < n; i++)
        nums[nnums++] = rows[i].checkpoint;
    qsort (nums, nnums, sizeof *nums, s_int64_cmp);
    size_t k = 0;
    for (size_t i = 0; i < nnums; i++)
        if (!k || nums[k - 1] != nums[i])
            nums[k++] = nums[i];
    nnums = k;
    for (size_t i = 0; i < nnums; i++) {
        char buf[64];
        snprintf (buf, sizeof buf, "checkpoint %lld", (long long) nums[i]);
        if (!(labels[i] = strdup (buf)))
            goto oom;
        v[2 * i] = v[2 * i + 1] = NAN;
        for (size_t j = 0; j < n; j++)
            if (rows[j].checkpoint == nums[i] && rows[j].op)
                v[2 * i + (strcmp (rows[j].op, "write") ? 1 : 0)] = rows[j].gib_per_s;
    }
    static const char *const ck_cls[] = { "ck-write", "ck-read" };
    s_hbars_t c = {
        .id = "chart-checkpoint-throughput", .title = "Throughput per checkpoint (GiB/s)",
        .caption = "Bytes of all ranks over the slowest rank's time, per checkpoint written and read back"
                   " (checkpoints table: gib_per_s).",
        .xlabel = "GiB/s", .attr = "data-checkpoint", .nseries = 2, .stacked = 0, .series = series, .cls = ck_cls,
        .colors = colors,
    };
    s_chart_hbars (out, &c, labels, v, nnums, "no checkpoint finished in this run");
    int got = sb_html_checkpoint_ranks (db, run_id, s_add_ck_rank, &a);
    if (got == 0 && s_ck_rank_flush (&a) != 0)
        got = 1;
    if (got > 0)
        goto oom;
    if (got < 0) {
        s_query_failed (db);
        goto done;
    }
    static const char *const rank_cls[] = { "ck-rank-write", "ck-rank-read" };
    c.id = "chart-checkpoint-ranks";
    c.title = "Write and read throughput per rank (MB/s)";
    c.caption = "Each rank's own bytes over its own time, over every checkpoint it wrote and read (checkpoint_ranks"
                " table; MB = 10^6 bytes).";
    c.xlabel = "MB/s";
    c.attr = "data-rank";
    c.cls = rank_cls;
    s_chart_hbars (out, &c, a.labels, a.v, a.n, "no rank wrote or read a checkpoint");
    ret = 0;
    goto done;
oom:
    fprintf (stderr, "shardbench report: --html: out of memory\n");
done:
    for (size_t i = 0; i < a.n; i++)
        free (a.labels[i]);
    free (a.labels);
    free (a.v);
    for (size_t i = 0; labels && i < nnums; i++)
        free (labels[i]);
    free (labels);
    free (nums);
    free (v);
    sb_report_checkpoints_free (rows, n);
    return ret;
}

/* How the run was started: the version of shardbench that ran it, its
 * command line and overrides where the database records them (tables of
 * schema 13: html_query.h), and the version that made this page. */
static void
s_origin (const sb_html_run_origin_t *o, FILE *out)
{
    const char *missing = o->has_inputs ? "not recorded with this run"
                                        : "not recorded: this database predates run_inputs (schema 13)";
    fprintf (out, "<table id=\"origin\" class=\"summary\">\n<tr><th>shardbench version of the run</th>"
             "<td id=\"run-version\">");
    if (o->version)
        sb_report_html_escape (out, o->version);
    else
        fprintf (out, "%s", missing);
    fprintf (out, "</td></tr>\n<tr><th>page made by</th><td id=\"page-version\">shardbench %s</td></tr>\n"
             "<tr><th>command line</th><td id=\"command-line\">", SB_VERSION);
    if (o->command_line) {
        fprintf (out, "<code>");
        sb_report_html_escape (out, o->command_line);
        fprintf (out, "</code>");
    }
    else
        fprintf (out, "%s", missing);
    fprintf (out, "</td></tr>\n<tr><th>overrides</th><td id=\"overrides\">");
    if (o->overrides) {
        /* one per line, as given */
        fprintf (out, "<code>");
        for (const char *c = o->overrides; *c; c++) {
            if (*c == '\n')
                fprintf (out, "</code><br><code>");
            else {
                char one[2] = { *c, 0 };
                sb_report_html_escape (out, one);
            }
        }
        fprintf (out, "</code>");
    }
    else
        fprintf (out, "%s", o->has_inputs ? "none" : missing);
    fprintf (out, "</td></tr>\n</table>\n");
}

/* Write the keys of cfg with their values; with given, the keys it holds
 * (those the run was given) are marked (class given). */
static void
s_parameter_rows (sb_config_t *cfg, sb_config_t *given, FILE *out)
{
    for (size_t i = 0; i < sb_config_count (cfg); i++) {
        const sb_config_entry_t *e = sb_config_at (cfg, i);
        fprintf (out, "<tr%s><th>", given && sb_config_get (given, e->key) ? " class=\"given\"" : "");
        sb_report_html_escape (out, e->key);
        fprintf (out, "</th><td>");
        if (e->value)
            sb_report_html_escape (out, e->value);
        else {
            fprintf (out, "[");
            for (size_t k = 0; k < e->nitems; k++) {
                if (k)
                    fprintf (out, ", ");
                sb_report_html_escape (out, e->items[k]);
            }
            fprintf (out, "]");
        }
        fprintf (out, "</td></tr>\n");
    }
}

/* The workload's parameters: every key of the effective configuration
 * with its value, in the order stored: run_inputs.full_config (defaults
 * filled in) with the keys of runs.config (those given) in bold, else
 * runs.config alone; the YAML text as stored when it does not parse.
 * Returns 0, or -1 out of memory. */
static int
s_parameters (const s_run_t *r, const sb_html_run_origin_t *o, FILE *out)
{
    fprintf (out, "<h2>Parameters</h2>\n");
    int full = o->full_config && *o->full_config;
    const char *text = full ? o->full_config : r->row.config;
    if (!text || !*text) {
        fprintf (out, "<p id=\"parameters\">No configuration stored with this run.</p>\n");
        return 0;
    }
    sb_config_t *cfg = sb_config_new (), *given = NULL;
    if (!cfg) {
        fprintf (stderr, "shardbench report: --html: out of memory\n");
        return -1;
    }
    char err[512];
    if (sb_config_load_string (cfg, text, full ? "run_inputs.full_config" : "runs.config", err, sizeof err) != 0) {
        fprintf (out, "<p>The stored configuration does not parse (");
        sb_report_html_escape (out, err);
        fprintf (out, "); as stored:</p>\n<pre id=\"parameters\">");
        sb_report_html_escape (out, text);
        fprintf (out, "</pre>\n");
        sb_config_destroy (&cfg);
        return 0;
    }
    if (full && r->row.config && *r->row.config) {
        given = sb_config_new ();
        if (given && sb_config_load_string (given, r->row.config, "runs.config", err, sizeof err) != 0)
            sb_config_destroy (&given);     /* nothing marked then */
    }
    fprintf (out, "<table id=\"parameters\" class=\"params\">\n<tr><th>key</th><th>value</th></tr>\n");
    s_parameter_rows (cfg, given, out);
    fprintf (out, "</table>\n<p class=\"note\">%s</p>\n", full
             ? "The effective configuration of the run with every default filled in (run_inputs.full_config);"
               " in bold the keys the run was given by its workload and overrides (runs.config). Secrets are"
               " not stored."
             : "The effective configuration stored with the run (runs.config): the workload with its overrides"
               " applied; secrets are not stored.");
    sb_config_destroy (&given);
    sb_config_destroy (&cfg);
    return 0;
}

static const char s_style[] =
    "body{font-family:'DejaVu Sans',sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:28px}"
    "table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}"
    "table.data td{text-align:right}th{background:#f2f2f2}"
    "td.pass{color:#1a7f1a;font-weight:bold}td.fail{color:#c01818;font-weight:bold}"
    "figure{margin:16px 0}figcaption{font-size:13px;color:#555;max-width:900px}"
    "svg.chart{border:1px solid #ddd;font-family:'DejaVu Sans',sans-serif}"
    "svg .chart-title{font-size:15px;font-weight:bold;fill:#222}svg .tick{font-size:11px;fill:#444}"
    "svg .axis-label{font-size:12px;fill:#222}svg .grid{stroke:#e5e5e5}svg .frame{stroke:#444}"
    "svg .legend text,svg .legend-host{font-size:12px;fill:#222}svg .bar-value{font-size:11px;fill:#222}"
    "svg .threshold-label{font-size:12px;fill:#d62728}svg .mark-label{font-size:12px}"
    "svg .empty{font-size:14px;fill:#666}svg .epoch-label{font-size:11px;fill:#555}"
    "p.no-chart{color:#555;font-style:italic}p.note{font-size:13px;color:#555;max-width:900px}"
    "div.warn{border:2px solid #b35c00;background:#fff4e5;color:#6b3700;padding:10px 14px;margin:12px 0;"
    "max-width:900px;font-size:15px}"
    "div.alert{border:2px solid #c01818;background:#fdecec;color:#7a0c0c;padding:10px 14px;margin:12px 0;"
    "max-width:900px;font-size:15px}"
    "table.params{font-size:12px}table.params th{font-weight:normal;font-family:monospace}"
    "table.params tr.given th,table.params tr.given td{font-weight:bold}"
    "table.data td.name{text-align:left}code{font-size:13px}td.cached{color:#b35c00;font-weight:bold}";

/* A run that did not succeed: its status and first error at the top of the
 * page, then the errors table, before anything else. */
static void
s_alert (FILE *out, const s_run_t *r)
{
    fprintf (out, "<div id=\"run-error\" class=\"alert\"><strong>Run ");
    sb_report_html_escape (out, r->row.status);
    fprintf (out, "</strong>");
    if (r->row.error) {
        fprintf (out, ": ");
        sb_report_html_escape (out, r->row.error);
    }
    else
        fprintf (out, " (no error recorded)");
    fprintf (out, "</div>\n");
}

int
sb_report_html (sqlite3 *db, int64_t run_id, FILE *out)
{
    s_run_t r = { 0 };
    sb_html_run_origin_t origin = { 0 };
    sb_report_epoch_t *ep = NULL;
    size_t nep = 0;
    int rc = -1;
    int got = sb_export_page_run (db, run_id, &r.row);
    if (got < 0) {
        s_query_failed (db);
        sb_export_page_run_fini (&r.row);
        return -1;
    }
    if (got == 0) {
        fprintf (stderr, "shardbench report: no run %lld in this database\n", (long long) run_id);
        sb_export_page_run_fini (&r.row);
        return -1;
    }
    sb_workload_model_name (r.row.config, r.model, sizeof r.model);
    if (sb_html_run_origin (db, run_id, &origin) != 0 || sb_html_run_series (db, run_id, &r.series) != 0) {
        s_query_failed (db);
        goto done;
    }
    if (!r.row.kind || !r.row.workload || !r.row.status) {
        fprintf (stderr, "shardbench report: --html: run %lld: incomplete runs row\n", (long long) run_id);
        goto done;
    }
    if (!strcmp (r.row.kind, "kvcache")) {
        /* the KV-cache section (kv_report.h) in the same page */
        fprintf (out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>shardbench run"
                 " %lld: ", (long long) run_id);
        sb_report_html_escape (out, r.row.workload);
        fprintf (out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>shardbench kvcache run %lld: ", s_style,
                 (long long) run_id);
        sb_report_html_escape (out, r.row.workload);
        fprintf (out, "</h1>\n");
        if (sb_kv_report_html (db, run_id, out) == 0) {
            fprintf (out, "</body>\n</html>\n");
            rc = 0;
        }
        goto done;
    }
    int train = !strcmp (r.row.kind, "train"), checkpoint = !strcmp (r.row.kind, "checkpoint");
    if (!train && !checkpoint) {
        fprintf (stderr, "shardbench report: --html: run %lld is a %s run; --html reports train runs and"
                 " checkpoint runs\n", (long long) run_id, r.row.kind);
        goto done;
    }
    fprintf (out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>shardbench run %lld: ",
             (long long) run_id);
    sb_report_html_escape (out, r.row.workload);
    fprintf (out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>shardbench %s run %lld: ", s_style,
             train ? "train" : "checkpoint", (long long) run_id);
    sb_report_html_escape (out, r.row.workload);
    fprintf (out, "</h1>\n");
    /* a run that did not succeed: what went wrong first */
    int errors_first = strcmp (r.row.status, "succeeded") != 0;
    sb_report_failures_t f;
    if (sb_report_failures (db, run_id, &f) != 0) {
        s_query_failed (db);
        goto done;
    }
    if (errors_first) {
        s_alert (out, &r);
        if (s_errors_table (db, run_id, &r, out) != 0)
            goto done;
    }
    else if (f.retries > 0 || f.request_errors > 0 || f.error_rows > 0) {
        /* it succeeded, but not without trouble: say so at the top */
        fprintf (out, "<div id=\"run-retries\" class=\"warn\">Succeeded after %lld retried and %lld failed"
                 " attempts of %lld requests to %lld object-store endpoint%s, with %lld error%s recorded (see"
                 " Object-store endpoints and Errors below).</div>\n", (long long) f.retries,
                 (long long) f.request_errors, (long long) f.requests, (long long) f.endpoints,
                 f.endpoints == 1 ? "" : "s", (long long) f.error_rows, f.error_rows == 1 ? "" : "s");
    }
    s_summary (out, &r, run_id);
    s_origin (&origin, out);
    if (train) {
        if (sb_report_epochs (db, run_id, &ep, &nep) != 0) {
            s_query_failed (db);
            goto done;
        }
        fprintf (out, "<h2>Charts</h2>\n");
        if (s_chart_throughput (db, run_id, &r, out) != 0)
            goto done;
        s_chart_au (ep, nep, &r, out);
        if (s_charts_split (db, run_id, out) != 0 || s_chart_latency (db, run_id, out) != 0
            || s_chart_endpoints (db, run_id, out) != 0)
            goto done;
        fprintf (out, "<h2>Epochs</h2>\n");
        if (nep)
            s_epoch_table (ep, nep, out);
        else
            fprintf (out, "<p>No epoch finished in this run.</p>\n");
        if (s_slowest_table (db, run_id, out) != 0)
            goto done;
        fprintf (out, "<h2>Read latency per epoch</h2>\n");
        if (s_latency_epochs (db, run_id, out) != 0 || s_host_latency (db, run_id, out) != 0
            || s_endpoint_table (db, run_id, out) != 0)
            goto done;
    }
    else if (s_checkpoint_section (db, run_id, out) != 0)
        goto done;
    if (!errors_first && s_errors_table (db, run_id, &r, out) != 0)
        goto done;
    if (s_parameters (&r, &origin, out) != 0)
        goto done;
    fprintf (out, "</body>\n</html>\n");
    rc = 0;
done:
    free (ep);
    sb_html_run_origin_fini (&origin);
    free (r.series.label);
    sb_export_page_run_fini (&r.row);
    return rc;
}

int
sb_report_html_file (sqlite3 *db, int64_t run_id, const char *path)
{
    if (!strcmp (path, "-")) {
        int rc = sb_report_html (db, run_id, stdout);
        if (fflush (stdout) != 0 || ferror (stdout)) {
            fprintf (stderr, "shardbench report: --html: writing to stdout: %s\n", strerror (errno));
            return -1;
        }
        return rc;
    }
    size_t len = strlen (path) + 16;
    char *tmp = malloc (len);
    if (!tmp) {
        fprintf (stderr, "shardbench report: --html: out of memory\n");
        return -1;
    }
    /* next to the page, so the rename stays on one file system */
    snprintf (tmp, len, "%s.tmp.XXXXXX", path);
    int fd = mkstemp (tmp);
    if (fd < 0) {
        fprintf (stderr, "shardbench report: --html: cannot create %s: %s\n", tmp, strerror (errno));
        free (tmp);
        return -1;
    }
    mode_t mask = umask (0);
    umask (mask);
    FILE *out = fdopen (fd, "w");
    int rc = -1;
    if (!out || fchmod (fd, 0666 & ~mask) != 0) {
        fprintf (stderr, "shardbench report: --html: %s: %s\n", tmp, strerror (errno));
        if (out)
            fclose (out);
        else
            close (fd);
    }
    else {
        rc = sb_report_html (db, run_id, out);
        int werr = ferror (out) || fflush (out) != 0;
        int saved = errno;
        if (fclose (out) != 0 && !werr) {
            werr = 1;
            saved = errno;
        }
        if (rc == 0 && werr) {
            fprintf (stderr, "shardbench report: --html: writing %s: %s\n", tmp, strerror (saved));
            rc = -1;
        }
        if (rc == 0 && rename (tmp, path) != 0) {
            fprintf (stderr, "shardbench report: --html: cannot rename %s to %s: %s\n", tmp, path, strerror (errno));
            rc = -1;
        }
    }
    if (rc != 0)
        unlink (tmp);
    free (tmp);
    return rc;
}
