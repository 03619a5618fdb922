/* report_html: a train run as one self-contained HTML page, read back from
 * the result database.
 *
 * The page needs nothing but itself: no script, no style sheet, font or image
 * from elsewhere, so it can be mailed or archived with the run and opened
 * offline. The charts are inline SVG drawn here:
 *   chart-throughput  MiB/s over time, one line per host (timeseries rows
 *                     binned by second since the run start, ranks mapped to
 *                     hosts through run_workers)
 *   chart-au          AU per epoch (DLIO's epochs.train_au_percentage; epochs.au_mean for runs
 *                     recorded before it) against runs.au_threshold
 *   chart-latency     sample read latency over all epochs (read_latency),
 *                     two bins per power of two on a log axis, p50 and p99
 *   chart-endpoints   requests and errors per S3 endpoint (endpoints), or a
 *                     line saying the run used none
 * Every string from the database goes through sb_report_html_escape; numbers
 * are printed with printf in the C locale (shardbench never calls setlocale).
 */
#include "report.h"
#include "export_query.h"
#include "histogram.h"
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

/* Open a chart: <figure>, <svg> with id and title (s_svg_close adds the caption). */
static void
s_svg_open (FILE *out, const char *id, const char *title)
{
    fprintf (out, "<figure>\n<svg id=\"%s\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
             " role=\"img\" aria-labelledby=\"%s-title\">\n<title id=\"%s-title\">", id, S_W, S_H, S_W, S_H, id, id);
    sb_report_html_escape (out, title);
    fprintf (out, "</title>\n<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n"
             "<text class=\"chart-title\" x=\"%d\" y=\"22\">", S_W, S_H, S_LEFT);
    sb_report_html_escape (out, title);
    fprintf (out, "</text>\n");
}

static void
s_svg_close (FILE *out, const char *caption)
{
    fprintf (out, "</svg>\n<figcaption>");
    sb_report_html_escape (out, caption);
    fprintf (out, "</figcaption>\n</figure>\n");
}

/* A chart with nothing to draw: the reason in its middle. */
static void
s_svg_empty (FILE *out, const char *text)
{
    fprintf (out, "<text class=\"empty\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", S_W / 2, S_H / 2);
    sb_report_html_escape (out, text);
    fprintf (out, "</text>\n");
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

/* the run's row and its model name */
typedef struct {
    sb_export_page_run_t row;
    char                 model[128];     /* model.name of runs.config */
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
    fprintf (out, "</td></tr>\n<tr><th>status</th><td>");
    sb_report_html_escape (out, r->row.status);
    if (isfinite (r->row.duration_s))
        fprintf (out, " after %.2f s", r->row.duration_s);
    fprintf (out, "</td></tr>\n<tr><th>started</th><td>%s</td></tr>\n", when);
    fprintf (out, "<tr><th>accelerators</th><td>%lld</td></tr>\n<tr><th>workers</th><td>%lld</td></tr>\n"
             "<tr><th>hosts</th><td>%lld</td></tr>\n<tr><th>seed</th><td>%lld</td></tr>\n"
             "<tr><th>epochs</th><td>%lld</td></tr>\n", (long long) r->row.accelerators, (long long) r->row.workers,
             (long long) r->row.hosts, (long long) r->row.seed, (long long) r->row.epochs);
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
             "<th>read p99 ms</th></tr>\n");
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
        fprintf (out, "</tr>\n");
    }
    fprintf (out, "</table>\n");
}

/* A point of a host's throughput line: x seconds since the run start, y MiB/s. */
typedef struct {
    size_t   host;
    double   x, y;
    uint64_t bytes;     /* read in the bin */
} s_point_t;

/* The throughput of many hosts (more than colours): per bin the lowest and
 * highest host (a polygon), the mean over hosts (a line), and the line of
 * the host with the fewest bytes over the run (the first in name order of
 * those tied). pts: n points sorted by host,
 * x the middle of bins of `bin` seconds. Returns 0, or -1 out of memory
 * (nothing written then). */
static int
s_host_band (FILE *out, const s_plot_t *p, const s_point_t *pts, size_t n, char **hosts, size_t nhosts, int64_t bin)
{
    size_t nb = 0;
    for (size_t i = 0; i < n; i++) {
        const s_point_t *q = &pts[i];
        size_t b = (size_t) (q->x / (double) bin);
        if (b + 1 > nb)
            nb = b + 1;
    }
    double *lo = malloc (nb * sizeof *lo), *hi = calloc (nb, sizeof *hi), *sum = calloc (nb, sizeof *sum);
    double *one = calloc (nb, sizeof *one);
    uint64_t *total = calloc (nhosts, sizeof *total);
    if (!lo || !hi || !sum || !one || !total) {
        free (lo), free (hi), free (sum), free (one), free (total);
        return -1;
    }
    for (size_t b = 0; b < nb; b++)
        lo[b] = INFINITY;
    for (size_t h = 0, i = 0; h < nhosts; h++) {
        memset (one, 0, nb * sizeof *one);
        for (; i < n; i++) {
            const s_point_t *q = &pts[i];
            if (q->host != h)
                break;
            one[(size_t) (q->x / (double) bin)] = q->y;
            total[h] += q->bytes;
        }
        for (size_t b = 0; b < nb; b++) {
            lo[b] = one[b] < lo[b] ? one[b] : lo[b];
            hi[b] = one[b] > hi[b] ? one[b] : hi[b];
            sum[b] += one[b];
        }
    }
    size_t slow = 0;
    for (size_t h = 1; h < nhosts; h++)
        if (total[h] < total[slow])
            slow = h;
    double half = (double) bin / 2;
    fprintf (out, "<polygon class=\"host-band\" fill=\"%s\" fill-opacity=\"0.25\" stroke=\"none\" points=\"",
             s_colors[0]);
    for (size_t b = 0; b < nb; b++)
        fprintf (out, "%s%.1f,%.1f", b ? " " : "", s_px (p, (double) b * (double) bin + half), s_py (p, hi[b]));
    for (size_t b = nb; b-- > 0;)
        fprintf (out, " %.1f,%.1f", s_px (p, (double) b * (double) bin + half), s_py (p, lo[b]));
    fprintf (out, "\"/>\n<polyline class=\"host-mean\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
             s_colors[0]);
    for (size_t b = 0; b < nb; b++)
        fprintf (out, "%s%.1f,%.1f", b ? " " : "", s_px (p, (double) b * (double) bin + half),
                 s_py (p, sum[b] / (double) nhosts));
    fprintf (out, "\"/>\n<polyline class=\"host-line host-slowest\" data-host=\"");
    sb_report_html_escape (out, hosts[slow]);
    fprintf (out, "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" points=\"");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const s_point_t *q = &pts[i];
        if (q->host == slow)
            fprintf (out, "%s%.1f,%.1f", k++ ? " " : "", s_px (p, q->x), s_py (p, q->y));
    }
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
    sb_report_html_escape (out, hosts[slow]);
    fprintf (out, "</text>\n</g>\n");
    free (lo), free (hi), free (sum), free (one), free (total);
    return 0;
}

/* The throughput points read so far: rows in host order (host index, x
 * seconds, MiB/s), the hosts' names, and the plot's upper bounds. */
typedef struct {
    s_point_t *pts;
    size_t     n, cap, nhosts;
    char     **hosts;
    int64_t    bin;
    s_plot_t   p;
} s_points_t;

/* sb_export_host_bins' fn: one point. Returns 0, or -1 out of memory. */
static int
s_add_point (void *ctx, const sb_export_host_bin_t *row)
{
    s_points_t *a = ctx;
    if (!a->nhosts || strcmp (a->hosts[a->nhosts - 1], row->host) != 0) {
        char **more = realloc (a->hosts, (a->nhosts + 1) * sizeof *a->hosts);
        if (!more)
            return -1;
        a->hosts = more;
        if (!(a->hosts[a->nhosts] = strdup (row->host)))
            return -1;
        a->nhosts++;
    }
    if (a->n == a->cap) {
        size_t c = a->cap ? 2 * a->cap : 256;
        void *more = realloc (a->pts, c * sizeof *a->pts);
        if (!more)
            return -1;
        a->pts = more;
        a->cap = c;
    }
    s_point_t *q = &a->pts[a->n];
    q->host = a->nhosts - 1;
    q->x = (double) (row->bin * a->bin) + (double) a->bin / 2;
    q->bytes = (uint64_t) row->bytes;
    q->y = (double) q->bytes / 1048576.0 / (double) a->bin;
    if (q->x > a->p.x1)
        a->p.x1 = q->x;
    if (q->y > a->p.y1)
        a->p.y1 = q->y;
    a->n++;
    return 0;
}

/* chart-throughput: MiB/s per host over time. */
static int
s_chart_throughput (sqlite3 *db, int64_t run_id, const s_run_t *r, FILE *out)
{
    double span = 0;
    if (sb_export_timeseries_span (db, run_id, r->row.started_at, &span) != 0) {
        s_query_failed (db);
        return -1;
    }
    /* bins of whole seconds since the run start; wide enough that no line
     * has more than S_MAX_POINTS points */
    int64_t bin = span > S_MAX_POINTS ? (int64_t) ceil (span / S_MAX_POINTS) : 1;
    s_points_t a = { .bin = bin, .p = { 0, 1, 0, 0 } };
    int ret = -1;
    int got = sb_export_host_bins (db, run_id, r->row.started_at, bin, s_add_point, &a);
    s_point_t *pts = a.pts;
    size_t n = a.n, nhosts = a.nhosts;
    char **hosts = a.hosts;
    s_plot_t p = a.p;
    if (got > 0)
        goto oom;
    if (got < 0) {
        s_query_failed (db);
        goto done;
    }
    s_svg_open (out, "chart-throughput", "Read throughput per host (MiB/s)");
    if (!n)
        s_svg_empty (out, "no throughput samples recorded for this run");
    else {
        p.y1 = p.y1 > 0 ? p.y1 * 1.1 : 1;
        p.x1 = ceil (p.x1);
        char xlabel[64];
        snprintf (xlabel, sizeof xlabel, "seconds since run start (bins of %lld s)", (long long) bin);
        s_axes (out, &p, 1, xlabel, "MiB/s");
        if (nhosts > S_NCOLORS) {
            /* too many hosts for a line each: the band from the slowest to the
             * fastest host of each bin, their mean, and the host that read least */
            if (s_host_band (out, &p, pts, n, hosts, nhosts, bin) != 0)
                goto oom;
            goto legend_done;
        }
        for (size_t h = 0, i = 0; h < nhosts; h++) {
            const char *color = s_colors[h % S_NCOLORS];
            size_t first = i;
            fprintf (out, "<polyline class=\"host-line\" data-host=\"");
            sb_report_html_escape (out, hosts[h]);
            fprintf (out, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
            for (; i < n && pts[i].host == h; i++)
                fprintf (out, "%s%.1f,%.1f", i && pts[i - 1].host == h ? " " : "", s_px (&p, pts[i].x),
                         s_py (&p, pts[i].y));
            fprintf (out, "\"/>\n");
            /* a dot per bin, so that a run shorter than two bins still shows its point */
            fprintf (out, "<g class=\"host-points\" fill=\"%s\">", color);
            for (size_t j = first; j < i; j++)
                fprintf (out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>", s_px (&p, pts[j].x), s_py (&p, pts[j].y));
            fprintf (out, "</g>\n");
        }
        fprintf (out, "<g class=\"legend\">\n");
        for (size_t h = 0; h < nhosts; h++) {
            int y = S_TOP + 10 + (int) h * 18;
            fprintf (out, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/>"
                     "<text class=\"legend-host\" x=\"%d\" y=\"%d\">", S_W - S_RIGHT + 12, y - 4,
                     s_colors[h % S_NCOLORS], S_W - S_RIGHT + 32, y + 1);
            sb_report_html_escape (out, hosts[h]);
            fprintf (out, "</text>\n");
        }
        fprintf (out, "</g>\n");
    }
legend_done:
    s_svg_close (out, nhosts > S_NCOLORS
                 ? "Bytes read per host, summed over its ranks, per time bin since the run start (timeseries"
                   " table): the band spans the slowest to the fastest host of each bin (a host with no"
                   " interval in a bin counts as 0), the line is their mean, and the host that read least"
                   " over the run is drawn on its own."
                 : "Bytes read per host, summed over its ranks, per time bin since the run start"
                   " (timeseries table).");
    ret = 0;
    goto done;
oom:
    fprintf (stderr, "shardbench report: --html: out of memory\n");
done:
    for (size_t h = 0; h < nhosts; h++)
        free (hosts[h]);
    free (hosts);
    free (pts);
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
    s_svg_open (out, "chart-au", "Accelerator utilization (AU) per epoch");
    if (!n)
        s_svg_empty (out, "no finished epoch in this run");
    else {
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

/* The read latency buckets read so far: the merged histogram and the
 * chart's bins. */
typedef struct {
    sb_histogram_t *h;
    uint64_t        bins[S_LAT_BINS];
} s_latency_t;

/* sb_export_latency_buckets' fn: one bucket. Returns 0. */
static int
s_add_latency (void *ctx, int64_t low, int64_t count)
{
    s_latency_t *l = ctx;
    if (low < 0 || count <= 0)
        return 0;   /* not something shardbench wrote */
    uint64_t c = (uint64_t) count, v = (uint64_t) low;
    l->h->counts[sb_histogram_bucket (v)] += c;
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
 * two. The log-linear buckets nest in these bins exactly: below 16 us every
 * value has its own bucket, above every power of two is split in 16. */
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
    if (sb_export_latency_buckets (db, run_id, s_add_latency, l) != 0) {
        s_query_failed (db);
        free (h);
        free (l);
        return -1;
    }
    s_svg_open (out, "chart-latency", "Sample read latency (all epochs)");
    if (!h->total)
        s_svg_empty (out, "no read latency recorded for this run");
    else {
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

/* sb_export_endpoints' fn: the bars of one endpoint. Returns 0. */
static int
s_endpoint_bar (void *ctx, const sb_export_endpoint_t *e)
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
    return 0;
}

/* chart-endpoints: requests and errors per S3 endpoint. */
static int
s_chart_endpoints (sqlite3 *db, int64_t run_id, FILE *out)
{
    int64_t n = 0, top = 0;
    if (sb_export_endpoint_count (db, run_id, &n, &top) != 0) {
        s_query_failed (db);
        return -1;
    }
    s_svg_open (out, "chart-endpoints", "Requests and errors per object-store endpoint");
    if (!n) {
        s_svg_empty (out, "no object-store endpoints in this run (file or synthetic storage)");
        s_svg_close (out, "Requests (retries included) and failed attempts per S3 endpoint (endpoints table).");
        return 0;
    }
    s_plot_t p = { 0, (double) n, 0, top > 0 ? (double) top * 1.15 : 1 };
    s_axes (out, &p, 0, "endpoint", "requests");
    double slot = (double) (S_W - S_LEFT - S_RIGHT) / (double) n;
    s_endpoint_bars_t eb = { .out = out, .p = &p, .slot = slot, .w = slot * 0.35 };
    if (sb_export_endpoints (db, run_id, s_endpoint_bar, &eb) != 0) {
        s_query_failed (db);
        return -1;
    }
    fprintf (out, "<g class=\"legend\"><rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#1f77b4\"/>"
             "<text x=\"%d\" y=\"%d\">requests</text><rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\""
             " fill=\"#d62728\"/><text x=\"%d\" y=\"%d\">errors</text></g>\n", S_W - S_RIGHT + 12, S_TOP,
             S_W - S_RIGHT + 30, S_TOP + 11, S_W - S_RIGHT + 12, S_TOP + 20, S_W - S_RIGHT + 30, S_TOP + 31);
    s_svg_close (out, "Requests (retries included) and failed attempts per S3 endpoint (endpoints table).");
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
                 "<th>host</th><th>op</th><th>target</th><th>endpoint</th><th>HTTP</th><th>message</th></tr>\n");
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
    "svg .empty{font-size:14px;fill:#666}";

int
sb_report_html (sqlite3 *db, int64_t run_id, FILE *out)
{
    s_run_t r = { 0 };
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
    if (!r.row.kind || !r.row.workload || !r.row.status) {
        fprintf (stderr, "shardbench report: --html: run %lld: incomplete runs row\n", (long long) run_id);
        goto done;
    }
    if (strcmp (r.row.kind, "train") != 0) {
        fprintf (stderr, "shardbench report: --html: run %lld is a %s run; --html reports train runs\n",
                 (long long) run_id, r.row.kind);
        goto done;
    }
    fprintf (out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>shardbench run %lld: ",
             (long long) run_id);
    sb_report_html_escape (out, r.row.workload);
    fprintf (out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>shardbench train run %lld: ", s_style,
             (long long) run_id);
    sb_report_html_escape (out, r.row.workload);
    fprintf (out, "</h1>\n");
    s_summary (out, &r, run_id);
    fprintf (out, "<h2>Epochs</h2>\n");
    if (sb_report_epochs (db, run_id, &ep, &nep) != 0) {
        s_query_failed (db);
        goto done;
    }
    s_epoch_table (ep, nep, out);
    fprintf (out, "<h2>Charts</h2>\n");
    if (s_chart_throughput (db, run_id, &r, out) != 0)
        goto done;
    s_chart_au (ep, nep, &r, out);
    if (s_chart_latency (db, run_id, out) != 0 || s_chart_endpoints (db, run_id, out) != 0
        || s_errors_table (db, run_id, &r, out) != 0)
        goto done;
    fprintf (out, "</body>\n</html>\n");
    rc = 0;
done:
    free (ep);
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
