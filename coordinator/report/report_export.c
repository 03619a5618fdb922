/* report_export: a run's results as JSON (DLIO summary.json metric names) or
 * CSV, and two runs side by side, read back from the result database.
 *
 * The JSON object uses the keys DLIO's StatsCounter writes to summary.json at
 * the end of a run, so tools written for DLIO / MLPerf Storage can read it:
 * "start", "end", "num_accelerators", "num_hosts", "hostname",
 * "host_memory_GB" and "host_cpu_count" (one entry per host), "epochs", and
 * under "metric" DLIO's figures as shardbench stored them (computed as DLIO
 * computes them, lib/metrics/dlio_metrics.h): the per-epoch AU in percent and
 * samples per second with their mean and population standard deviation, the
 * I/O rate in MiB per second (samples/s x the nominal record size / 2^20,
 * DLIO's "MB") and "train_au_meet_expectation" ("success" | "fail"; "success"
 * needs the run to have succeeded as well, runs.passed). A run recorded
 * before schema 9 has no DLIO figures: those values are null. shardbench's
 * own measured figures (every sample, the bytes read) go into a "shardbench"
 * object; its per-epoch entries carry the measured page-cache
 * "resident_fraction" and "served_from_memory" (epochs table).
 * "potential_caching" is DLIO's per-host flag (1 unless the host's memory is
 * at most the data it reads per epoch; sb_report_host_caching), from the
 * bytes the host read rather than samples x nominal record length.
 *
 * Real numbers are printed with 6 decimals (%.6f); a value that is not
 * finite, or NULL in the database, is JSON null (empty in CSV). */
#include "report.h"
#include "export_query.h"
#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the run's row, as the three writers need it, and its model name */
typedef struct {
    int64_t         id;
    sb_export_run_t row;
    char            model[128];     /* model.name of runs.config */
} s_run_t;

/* a nullable figure of an epochs row: NAN when NULL */
static double
s_or_nan (int has, double v)
{
    return has ? v : NAN;
}

/* Load run `id`. Returns 0; -1 when it does not exist or SQLite fails
 * (message on stderr, prefixed with `who`; nothing to fini). */
static int
s_run_load (sqlite3 *db, int64_t id, s_run_t *r, const char *who)
{
    memset (r, 0, sizeof *r);
    int got = sb_export_run (db, id, &r->row);
    if (got != 1) {
        if (got == 0)
            fprintf (stderr, "shardbench %s: no run %lld in this database\n", who, (long long) id);
        else
            fprintf (stderr, "shardbench %s: %s\n", who, sb_report_error (db));
        sb_export_run_fini (&r->row);
        return -1;
    }
    r->id = id;
    sb_workload_model_name (r->row.config, r->model, sizeof r->model);
    return 0;
}

static void
s_run_fini (s_run_t *r)
{
    sb_export_run_fini (&r->row);
}

/* The epochs rows of run `id` in epoch order (sb_report_epochs; the caller
 * frees *out), *n rows. Returns 0 or -1 (message on stderr). */
static int
s_epochs_load (sqlite3 *db, int64_t id, sb_report_epoch_t **out, size_t *n, const char *who)
{
    if (sb_report_epochs (db, id, out, n) != 0) {
        fprintf (stderr, "shardbench %s: %s\n", who, sb_report_error (db));
        return -1;
    }
    return 0;
}

/* mean and population standard deviation (numpy's np.std) of v[0..n-1];
 * NAN when n is 0 */
static void
s_mean_std (const double *v, size_t n, double *mean, double *std)
{
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    *mean = n ? sum / (double) n : NAN;
    for (size_t i = 0; i < n; i++)
        sq += (v[i] - *mean) * (v[i] - *mean);
    *std = n ? sqrt (sq / (double) n) : NAN;
}

/* ---- JSON ------------------------------------------------------------------- */

static void
s_json_str (FILE *out, const char *s)
{
    if (!s) {
        fputs ("null", out);
        return;
    }
    fputc ('"', out);
    for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf (out, "\\%c", *p);
        else if (*p == '\n')
            fputs ("\\n", out);
        else if (*p == '\r')
            fputs ("\\r", out);
        else if (*p == '\t')
            fputs ("\\t", out);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf (out, "\\u%04x", *p);
        else
            fputc (*p, out);   /* UTF-8 passes through; SQLite TEXT is UTF-8 */
    }
    fputc ('"', out);
}

static void
s_json_num (FILE *out, double v)
{
    if (isfinite (v))
        fprintf (out, "%.6f", v);
    else
        fputs ("null", out);
}

/* DLIO's time format, "%Y-%m-%dT%H:%M:%S.%f" in UTC */
static void
s_json_time (FILE *out, double t)
{
    if (!isfinite (t) || t < 0) {
        fputs ("null", out);
        return;
    }
    time_t sec = (time_t) t;
    long usec = (long) ((t - (double) sec) * 1e6);
    if (usec > 999999)
        usec = 999999;
    struct tm tm;
    char buf[64];
    if (!gmtime_r (&sec, &tm) || strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
        fputs ("null", out);
        return;
    }
    fprintf (out, "\"%s.%06ld\"", buf, usec);
}

/* one JSON list of v[0..n-1] */
static void
s_json_list (FILE *out, const double *v, size_t n)
{
    fputc ('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs (", ", out);
        s_json_num (out, v[i]);
    }
    fputc (']', out);
}

/* per-host memory (GiB) and cores, in the order the hosts joined: the
 * memory list goes to out, the cores list to cores (both buffers) */
typedef struct {
    FILE *out, *cores;
    int   first;
} s_host_lists_t;

static int
s_json_host (void *ctx, const sb_export_host_t *h)
{
    s_host_lists_t *hl = ctx;
    fputs (hl->first ? "" : ", ", hl->out);
    fputs (hl->first ? "" : ", ", hl->cores);
    hl->first = 0;
    s_json_num (hl->out, h->memory_bytes / 1073741824.0);
    if (!h->has_cores)
        fputs ("null", hl->cores);
    else
        fprintf (hl->cores, "%lld", (long long) h->cores);
    return 0;
}

/* The two lists go to out once the query has run, or has given a row
 * before it failed (a query that fails at once writes nothing). */
static int
s_json_hosts (sqlite3 *db, int64_t id, FILE *out)
{
    char *memory = NULL, *cores = NULL;
    size_t memory_size = 0, cores_size = 0;
    FILE *mf = open_memstream (&memory, &memory_size);
    FILE *cf = mf ? open_memstream (&cores, &cores_size) : NULL;
    if (!cf) {
        if (mf)
            fclose (mf);
        free (memory);
        return -1;
    }
    s_host_lists_t hl = { .out = mf, .cores = cf, .first = 1 };
    int rc = sb_export_hosts (db, id, s_json_host, &hl);
    fclose (mf);
    fclose (cf);
    if (rc == 0 || !hl.first)
        fprintf (out, "  \"host_memory_GB\": [%s],\n  \"host_cpu_count\": [%s],\n", memory ? memory : "",
                 cores ? cores : "");
    free (memory);
    free (cores);
    return rc == 0 ? 0 : -1;
}

typedef struct {
    FILE *out;
    int   first;
} s_caching_list_t;

static void
s_json_caching_host (void *ctx, const sb_report_host_caching_t *h)
{
    s_caching_list_t *cl = ctx;
    fputs (cl->first ? "" : ", ", cl->out);
    cl->first = 0;
    if (h->potential_caching < 0)
        fputs ("null", cl->out);
    else
        fprintf (cl->out, "%d", h->potential_caching);
}

int
sb_report_json (sqlite3 *db, int64_t run_id, FILE *out)
{
    s_run_t r;
    sb_report_epoch_t *ep = NULL;
    double *au = NULL, *tput = NULL, *io = NULL;
    size_t n = 0;
    int rc = -1;
    if (s_run_load (db, run_id, &r, "report") != 0)
        return -1;
    if (strcmp (r.row.kind, "train") != 0) {
        fprintf (stderr, "shardbench report: run %lld is a %s run; --json describes train runs\n",
                 (long long) run_id, r.row.kind);
        goto done;
    }
    if (s_epochs_load (db, run_id, &ep, &n, "report") != 0)
        goto done;
    au = calloc (n + 1, sizeof *au);
    tput = calloc (n + 1, sizeof *tput);
    io = calloc (n + 1, sizeof *io);
    if (!au || !tput || !io) {
        fprintf (stderr, "shardbench report: out of memory\n");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        au[i] = s_or_nan (ep[i].has_dlio, ep[i].dlio_au_percentage);
        tput[i] = s_or_nan (ep[i].has_dlio_samples, ep[i].dlio_samples_per_s);
        io[i] = ep[i].mib_per_s;
    }
    double m_tput, s_tput, m_mib, s_mib;     /* shardbench's measured rates: means over epochs */
    s_mean_std (io, n, &m_mib, &s_mib);
    for (size_t i = 0; i < n; i++)
        io[i] = ep[i].samples_per_s;
    s_mean_std (io, n, &m_tput, &s_tput);

    fputs ("{\n  \"start\": ", out);
    s_json_time (out, r.row.started_at);
    fputs (",\n  \"end\": ", out);
    s_json_time (out, r.row.finished_at);
    fprintf (out, ",\n  \"num_accelerators\": %lld,\n  \"num_hosts\": %lld,\n  \"hostname\": ",
             (long long) r.row.accelerators, (long long) r.row.hosts);
    s_json_str (out, r.row.host);
    fputs (",\n", out);
    if (s_json_hosts (db, run_id, out) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        goto done;
    }
    /* DLIO's summary key: per host, 1 unless its memory is at most the data it reads per epoch */
    s_caching_list_t cl = { .out = out, .first = 1 };
    fputs ("  \"potential_caching\": [", out);
    if (sb_report_host_caching (db, run_id, s_json_caching_host, &cl) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        goto done;
    }
    fputs ("],\n", out);
    fprintf (out, "  \"epochs\": %zu,\n  \"metric\": {\n    \"train_au_percentage\": ", n);
    s_json_list (out, au, n);
    fputs (",\n    \"train_au_mean_percentage\": ", out);
    s_json_num (out, r.row.dlio_au_mean);
    fprintf (out, ",\n    \"train_au_meet_expectation\": \"%s\"", r.row.passed == 1 ? "success" : "fail");
    fputs (",\n    \"train_au_stdev_percentage\": ", out);
    s_json_num (out, r.row.dlio_au_stdev);
    fputs (",\n    \"train_throughput_samples_per_second\": ", out);
    s_json_list (out, tput, n);
    fputs (",\n    \"train_throughput_mean_samples_per_second\": ", out);
    s_json_num (out, r.row.dlio_tput_mean);
    fputs (",\n    \"train_throughput_stdev_samples_per_second\": ", out);
    s_json_num (out, r.row.dlio_tput_stdev);
    fputs (",\n    \"train_io_mean_MB_per_second\": ", out);
    s_json_num (out, r.row.dlio_io_mean);
    fputs (",\n    \"train_io_stdev_MB_per_second\": ", out);
    s_json_num (out, r.row.dlio_io_stdev);
    fprintf (out, "\n  },\n  \"shardbench\": {\n    \"run_id\": %lld,\n    \"kind\": ", (long long) r.id);
    s_json_str (out, r.row.kind);
    fputs (",\n    \"workload\": ", out);
    s_json_str (out, r.row.workload);
    fputs (",\n    \"model\": ", out);
    s_json_str (out, r.model);
    fputs (",\n    \"status\": ", out);
    s_json_str (out, r.row.status);
    fputs (",\n    \"error\": ", out);
    s_json_str (out, r.row.error);
    fprintf (out, ",\n    \"passed\": %s", r.row.passed == 1 ? "true" : r.row.passed == 0 ? "false" : "null");
    fputs (",\n    \"au_threshold_percentage\": ", out);
    s_json_num (out, 100 * r.row.au_threshold);
    fputs (",\n    \"au_mean_percentage\": ", out);
    s_json_num (out, 100 * r.row.au_mean);
    fputs (",\n    \"samples_per_s_mean\": ", out);
    s_json_num (out, m_tput);
    fputs (",\n    \"MiB_per_s_mean\": ", out);
    s_json_num (out, m_mib);
    fputs (",\n    \"record_size_bytes\": ", out);
    if (r.row.record_size >= 0)
        fprintf (out, "%lld", (long long) r.row.record_size);
    else
        fputs ("null", out);
    fprintf (out, ",\n    \"workers\": %lld,\n    \"seed\": %lld,\n    \"duration_s\": ", (long long) r.row.workers,
             (long long) r.row.seed);
    s_json_num (out, r.row.finished_at - r.row.started_at);
    fputs (",\n    \"epochs\": [", out);
    for (size_t i = 0; i < n; i++) {
        const sb_report_epoch_t *e = &ep[i];
        fprintf (out, "%s\n      {\"epoch\": %lld, \"samples\": %lld, \"dropped\": %lld, \"bytes\": %lld,"
                 " \"steps\": %lld, \"duration_s\": ", i ? "," : "", (long long) e->epoch, (long long) e->samples,
                 (long long) e->dropped, (long long) e->bytes, (long long) e->batches);
        s_json_num (out, e->duration_s);
        fputs (", \"samples_per_s\": ", out);
        s_json_num (out, e->samples_per_s);
        fputs (", \"MiB_per_s\": ", out);
        s_json_num (out, e->mib_per_s);
        fputs (", \"au_percentage\": ", out);
        s_json_num (out, 100 * s_or_nan (e->has_au_mean, e->au_mean));
        fputs (", \"barrier_p50_ms\": ", out);
        s_json_num (out, s_or_nan (e->has_barrier, e->barrier_p50_ms));
        fputs (", \"barrier_p99_ms\": ", out);
        s_json_num (out, s_or_nan (e->has_barrier_p99, e->barrier_p99_ms));
        fputs (", \"train_au_percentage\": ", out);
        s_json_num (out, s_or_nan (e->has_dlio, e->dlio_au_percentage));
        fputs (", \"train_throughput_samples_per_second\": ", out);
        s_json_num (out, s_or_nan (e->has_dlio_samples, e->dlio_samples_per_s));
        fputs (", \"train_io_MB_per_second\": ", out);
        s_json_num (out, s_or_nan (e->has_dlio_io, e->dlio_io_mb_per_s));
        fputs (", \"resident_fraction\": ", out);
        s_json_num (out, s_or_nan (e->has_resident, e->resident_fraction));
        fprintf (out, ", \"served_from_memory\": %s}",
                 !e->has_from_memory ? "null" : e->from_memory ? "true" : "false");
    }
    fputs (n ? "\n    ]\n  }\n}\n" : "]\n  }\n}\n", out);
    rc = 0;
done:
    free (au);
    free (tput);
    free (io);
    free (ep);
    s_run_fini (&r);
    return rc;
}

/* ---- CSV -------------------------------------------------------------------- */

/* one RFC 4180 field: quoted when it holds a comma, a quote or a line break */
static void
s_csv_str (FILE *out, const char *s)
{
    if (!strpbrk (s, ",\"\r\n")) {
        fputs (s, out);
        return;
    }
    fputc ('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc ('"', out);
        fputc (*s, out);
    }
    fputc ('"', out);
}

static void
s_csv_num (FILE *out, double v)
{
    if (isfinite (v))
        fprintf (out, "%.6f", v);
}

/* one rank_epochs row of --csv --ranks */
typedef struct {
    FILE   *out;
    int64_t run_id;
    int     header_done;
} s_csv_rank_t;

/* the header line, once: before the first row (so that a query that fails
 * at once writes nothing), or after none */
static void
s_csv_rank_header (s_csv_rank_t *cr)
{
    if (cr->header_done)
        return;
    cr->header_done = 1;
    fputs ("run_id,epoch,rank,host,samples,steps,bytes,started_at,finished_at,wall_s,compute_s,au,io_wait_s,"
           "barrier_s,metric_steps,metric_compute_s,metric_excluded_s,metric_time_s,dlio_au_percentage,"
           "dlio_throughput_samples_per_second\n", cr->out);
}

static int
s_csv_rank_epoch (void *ctx, const sb_export_rank_epoch_t *e)
{
    s_csv_rank_t *cr = ctx;
    FILE *out = cr->out;
    s_csv_rank_header (cr);
    fprintf (out, "%lld,%lld,%lld,", (long long) cr->run_id, (long long) e->epoch, (long long) e->rank);
    s_csv_str (out, e->host);
    fprintf (out, ",%lld,%lld,%lld,", (long long) e->samples, (long long) e->batches, (long long) e->bytes);
    s_csv_num (out, e->started_at);
    fputc (',', out);
    s_csv_num (out, e->finished_at);
    fputc (',', out);
    s_csv_num (out, e->finished_at - e->started_at);
    const double mid[] = { e->compute_s, e->au, e->io_wait_s, e->barrier_s };
    for (size_t c = 0; c < sizeof mid / sizeof mid[0]; c++) {
        fputc (',', out);
        s_csv_num (out, mid[c]);
    }
    fputc (',', out);
    if (e->has_metric_steps)
        fprintf (out, "%lld", (long long) e->metric_steps);
    const double tail[] = { e->metric_compute_s, e->metric_excluded_s, e->metric_time_s, e->dlio_au_percentage,
                            e->dlio_samples_per_s };
    for (size_t c = 0; c < sizeof tail / sizeof tail[0]; c++) {
        fputc (',', out);
        s_csv_num (out, tail[c]);
    }
    fputc ('\n', out);
    return 0;
}

int
sb_report_csv (sqlite3 *db, int64_t run_id, int ranks, FILE *out)
{
    s_run_t r;
    if (s_run_load (db, run_id, &r, "report") != 0)
        return -1;
    s_run_fini (&r);
    if (!ranks) {
        sb_report_epoch_t *ep = NULL;
        size_t n = 0;
        if (s_epochs_load (db, run_id, &ep, &n, "report") != 0)
            return -1;
        fputs ("run_id,epoch,samples,dropped,steps,bytes,duration_s,samples_per_s,MiB_per_s,au,"
               "barrier_p50_ms,barrier_p99_ms,train_au_percentage,train_throughput_samples_per_second,"
               "train_io_MB_per_second\n", out);
        for (size_t i = 0; i < n; i++) {
            const sb_report_epoch_t *e = &ep[i];
            fprintf (out, "%lld,%lld,%lld,%lld,%lld,%lld,", (long long) run_id, (long long) e->epoch,
                     (long long) e->samples, (long long) e->dropped, (long long) e->batches, (long long) e->bytes);
            s_csv_num (out, e->duration_s);
            fputc (',', out);
            s_csv_num (out, e->samples_per_s);
            fputc (',', out);
            s_csv_num (out, e->mib_per_s);
            fputc (',', out);
            s_csv_num (out, s_or_nan (e->has_au_mean, e->au_mean));
            fputc (',', out);
            s_csv_num (out, s_or_nan (e->has_barrier, e->barrier_p50_ms));
            fputc (',', out);
            s_csv_num (out, s_or_nan (e->has_barrier_p99, e->barrier_p99_ms));
            fputc (',', out);
            s_csv_num (out, s_or_nan (e->has_dlio, e->dlio_au_percentage));
            fputc (',', out);
            s_csv_num (out, s_or_nan (e->has_dlio_samples, e->dlio_samples_per_s));
            fputc (',', out);
            s_csv_num (out, s_or_nan (e->has_dlio_io, e->dlio_io_mb_per_s));
            fputc ('\n', out);
        }
        free (ep);
        return 0;
    }
    s_csv_rank_t cr = { .out = out, .run_id = run_id };
    if (sb_export_rank_epochs (db, run_id, s_csv_rank_epoch, &cr) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        return -1;
    }
    s_csv_rank_header (&cr);
    return 0;
}

/* ---- compare ---------------------------------------------------------------- */

typedef struct {
    s_run_t r;
    size_t  epochs;
    double  tput, mib, au, p50, p99;   /* means over epochs; p99: max over epochs */
} s_side_t;

static int
s_side_load (sqlite3 *db, int64_t id, s_side_t *s)
{
    memset (s, 0, sizeof *s);
    if (s_run_load (db, id, &s->r, "compare") != 0)
        return -1;
    sb_report_epoch_t *ep = NULL;
    size_t n = 0;
    if (s_epochs_load (db, id, &ep, &n, "compare") != 0) {
        s_run_fini (&s->r);
        return -1;
    }
    double tput = 0, mib = 0, au = 0, p50 = 0, p99 = NAN;
    size_t nau = 0, np = 0;
    for (size_t i = 0; i < n; i++) {
        double e_au = s_or_nan (ep[i].has_au_mean, ep[i].au_mean);
        double e_p50 = s_or_nan (ep[i].has_barrier, ep[i].barrier_p50_ms);
        double e_p99 = s_or_nan (ep[i].has_barrier_p99, ep[i].barrier_p99_ms);
        tput += ep[i].samples_per_s;
        mib += ep[i].mib_per_s;
        if (isfinite (e_au)) {
            au += 100 * e_au;
            nau++;
        }
        if (isfinite (e_p50)) {
            p50 += e_p50;
            np++;
        }
        if (isfinite (e_p99) && !(e_p99 <= p99))
            p99 = e_p99;
    }
    s->epochs = n;
    s->tput = n ? tput / (double) n : NAN;
    s->mib = n ? mib / (double) n : NAN;
    s->au = nau ? au / (double) nau : NAN;
    s->p50 = np ? p50 / (double) np : NAN;
    s->p99 = p99;
    free (ep);
    return 0;
}

static void
s_cmp_text (FILE *out, const char *name, const char *a, const char *b)
{
    fprintf (out, "  %-40s %16s %16s\n", name, a ? a : "-", b ? b : "-");
}

/* a row of numbers: fmt for the values, the ratio b/a with 3 decimals
 * ("-" when a value is missing or a is 0) */
static void
s_cmp_num (FILE *out, const char *name, const char *fmt, double a, double b)
{
    char sa[32] = "-", sb[32] = "-", ratio[32] = "-";
    if (isfinite (a))
        snprintf (sa, sizeof sa, fmt, a);
    if (isfinite (b))
        snprintf (sb, sizeof sb, fmt, b);
    if (isfinite (a) && isfinite (b) && a != 0 && isfinite (b / a))
        snprintf (ratio, sizeof ratio, "%.3f", b / a);
    fprintf (out, "  %-40s %16s %16s %10s\n", name, sa, sb, ratio);
}

int
sb_report_compare (sqlite3 *db, int64_t run_a, int64_t run_b, FILE *out)
{
    s_side_t a, b;
    if (s_side_load (db, run_a, &a) != 0)
        return -1;
    if (s_side_load (db, run_b, &b) != 0) {
        s_run_fini (&a.r);
        return -1;
    }
    char ida[32], idb[32];
    snprintf (ida, sizeof ida, "%lld", (long long) run_a);
    snprintf (idb, sizeof idb, "%lld", (long long) run_b);
    fprintf (out, "shardbench compare: run %lld (A) and run %lld (B)\n", (long long) run_a, (long long) run_b);
    fprintf (out, "  %-40s %16s %16s %10s\n", "", "A", "B", "B/A");
    s_cmp_text (out, "run", ida, idb);
    s_cmp_text (out, "kind", a.r.row.kind, b.r.row.kind);
    s_cmp_text (out, "workload", a.r.row.workload, b.r.row.workload);
    s_cmp_text (out, "model", a.r.model, b.r.model);
    s_cmp_text (out, "status", a.r.row.status, b.r.row.status);
    s_cmp_text (out, "passed", a.r.row.passed == 1 ? "yes" : a.r.row.passed == 0 ? "no" : "-",
                b.r.row.passed == 1 ? "yes" : b.r.row.passed == 0 ? "no" : "-");
    s_cmp_num (out, "accelerators", "%.0f", (double) a.r.row.accelerators, (double) b.r.row.accelerators);
    s_cmp_num (out, "hosts", "%.0f", (double) a.r.row.hosts, (double) b.r.row.hosts);
    s_cmp_num (out, "epochs", "%.0f", (double) a.epochs, (double) b.epochs);
    /* DLIO's figures first (the headline), then shardbench's measured ones */
    s_cmp_num (out, "train_au_mean_percentage", "%.2f", a.r.row.dlio_au_mean, b.r.row.dlio_au_mean);
    s_cmp_num (out, "train_throughput_mean_samples_per_second", "%.1f", a.r.row.dlio_tput_mean, b.r.row.dlio_tput_mean);
    s_cmp_num (out, "train_io_mean_MB_per_second", "%.1f", a.r.row.dlio_io_mean, b.r.row.dlio_io_mean);
    s_cmp_num (out, "samples/s (mean)", "%.1f", a.tput, b.tput);
    s_cmp_num (out, "MiB/s (mean)", "%.1f", a.mib, b.mib);
    s_cmp_num (out, "AU % (mean)", "%.2f", a.au, b.au);
    s_cmp_num (out, "barrier p50 ms (mean)", "%.3f", a.p50, b.p50);
    s_cmp_num (out, "barrier p99 ms (max)", "%.3f", a.p99, b.p99);
    s_run_fini (&a.r);
    s_run_fini (&b.r);
    return 0;
}
