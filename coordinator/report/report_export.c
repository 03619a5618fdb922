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
#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the run's row, as the three writers need it */
typedef struct {
    int64_t id;
    char    kind[32], status[32];
    char   *workload, *error, *host;    /* heap copies, NULL when NULL */
    char    model[128];                 /* model.name of runs.config */
    double  started_at, finished_at;    /* finished_at NAN when NULL */
    int64_t accelerators, hosts, workers, seed;
    double  au_threshold, au_mean;      /* NAN when NULL */
    int     passed;                     /* -1 when NULL */
    /* DLIO's run figures (NAN when NULL: not a train run, or recorded before schema 9) */
    double  dlio_au_mean, dlio_au_std, dlio_tput_mean, dlio_tput_std, dlio_io_mean, dlio_io_std;
    int64_t record_size;                /* -1 when NULL */
} s_run_t;

/* per-epoch rows of a run (train: epochs >= 1) */
typedef struct {
    int64_t epoch, samples, dropped, bytes, batches;
    double  duration_s, samples_per_s, mib_per_s, au, p50, p99;   /* NAN when NULL */
    double  resident_fraction;  /* page cache, NAN when nothing was checked */
    int     from_memory;        /* -1 when nothing was checked */
    double  dlio_au, dlio_tput, dlio_io;    /* DLIO's: train_au_percentage, ..._samples_per_second, train_io_MB_... */
} s_epoch_t;

static char *
s_dup_col (sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type (st, col) == SQLITE_NULL)
        return NULL;
    const unsigned char *t = sqlite3_column_text (st, col);
    return t ? strdup ((const char *) t) : NULL;
}

static double
s_real_col (sqlite3_stmt *st, int col)
{
    return sqlite3_column_type (st, col) == SQLITE_NULL ? NAN : sqlite3_column_double (st, col);
}

static void
s_run_fini (s_run_t *r)
{
    free (r->workload);
    free (r->error);
    free (r->host);
    r->workload = r->error = r->host = NULL;
}

/* Load run `id`. Returns 0; -1 when it does not exist or SQLite fails
 * (message on stderr, prefixed with `who`). */
static int
s_run_load (sqlite3 *db, int64_t id, s_run_t *r, const char *who)
{
    memset (r, 0, sizeof *r);
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2 (db,
                            "SELECT kind, status, workload, error, coordinator_host, started_at, finished_at,"
                            " accelerators, hosts, workers, seed, au_threshold, au_mean, passed, config,"
                            " train_au_mean_percentage, train_au_stdev_percentage,"
                            " train_throughput_mean_samples_per_second, train_throughput_stdev_samples_per_second,"
                            " train_io_mean_MB_per_second, train_io_stdev_MB_per_second, record_size_bytes"
                            " FROM runs WHERE id = ?", -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (st, 1, id) != SQLITE_OK) {
        fprintf (stderr, "shardbench %s: %s\n", who, sqlite3_errmsg (db));
        goto done;
    }
    int step = sqlite3_step (st);
    if (step != SQLITE_ROW) {
        if (step == SQLITE_DONE)
            fprintf (stderr, "shardbench %s: no run %lld in this database\n", who, (long long) id);
        else
            fprintf (stderr, "shardbench %s: %s\n", who, sqlite3_errmsg (db));
        goto done;
    }
    r->id = id;
    const unsigned char *t;
    snprintf (r->kind, sizeof r->kind, "%s", (t = sqlite3_column_text (st, 0)) ? (const char *) t : "");
    snprintf (r->status, sizeof r->status, "%s", (t = sqlite3_column_text (st, 1)) ? (const char *) t : "");
    r->workload = s_dup_col (st, 2);
    r->error = s_dup_col (st, 3);
    r->host = s_dup_col (st, 4);
    r->started_at = sqlite3_column_double (st, 5);
    r->finished_at = s_real_col (st, 6);
    r->accelerators = sqlite3_column_int64 (st, 7);
    r->hosts = sqlite3_column_int64 (st, 8);
    r->workers = sqlite3_column_int64 (st, 9);
    r->seed = sqlite3_column_int64 (st, 10);
    r->au_threshold = s_real_col (st, 11);
    r->au_mean = s_real_col (st, 12);
    r->passed = sqlite3_column_type (st, 13) == SQLITE_NULL ? -1 : sqlite3_column_int (st, 13) != 0;
    sb_workload_model_name ((const char *) sqlite3_column_text (st, 14), r->model, sizeof r->model);
    r->dlio_au_mean = s_real_col (st, 15);
    r->dlio_au_std = s_real_col (st, 16);
    r->dlio_tput_mean = s_real_col (st, 17);
    r->dlio_tput_std = s_real_col (st, 18);
    r->dlio_io_mean = s_real_col (st, 19);
    r->dlio_io_std = s_real_col (st, 20);
    r->record_size = sqlite3_column_type (st, 21) == SQLITE_NULL ? -1 : sqlite3_column_int64 (st, 21);
    rc = 0;
done:
    sqlite3_finalize (st);
    return rc;
}

/* The epochs rows of run `id` in epoch order into a heap array *out (the
 * caller frees it), *n rows. Returns 0 or -1 (message on stderr). */
static int
s_epochs_load (sqlite3 *db, int64_t id, s_epoch_t **out, size_t *n, const char *who)
{
    sqlite3_stmt *st = NULL;
    s_epoch_t *v = NULL;
    size_t count = 0, cap = 0;
    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2 (db,
                            "SELECT epoch, samples, dropped, bytes, batches, duration_s, samples_per_s, mib_per_s,"
                            " au_mean, barrier_p50_ms, barrier_p99_ms, train_au_percentage,"
                            " train_throughput_samples_per_second, train_io_MB_per_second, resident_fraction,"
                            " from_memory"
                            " FROM epochs WHERE run_id = ? ORDER BY epoch",
                            -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (st, 1, id) != SQLITE_OK)
        goto fail;
    int step;
    while ((step = sqlite3_step (st)) == SQLITE_ROW) {
        if (count == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            s_epoch_t *nv = realloc (v, ncap * sizeof *nv);
            if (!nv) {
                fprintf (stderr, "shardbench %s: out of memory\n", who);
                free (v);
                sqlite3_finalize (st);
                return -1;
            }
            v = nv;
            cap = ncap;
        }
        s_epoch_t *e = &v[count++];
        e->epoch = sqlite3_column_int64 (st, 0);
        e->samples = sqlite3_column_int64 (st, 1);
        e->dropped = sqlite3_column_int64 (st, 2);
        e->bytes = sqlite3_column_int64 (st, 3);
        e->batches = sqlite3_column_int64 (st, 4);
        e->duration_s = sqlite3_column_double (st, 5);
        e->samples_per_s = sqlite3_column_double (st, 6);
        e->mib_per_s = sqlite3_column_double (st, 7);
        e->au = s_real_col (st, 8);
        e->p50 = s_real_col (st, 9);
        e->p99 = s_real_col (st, 10);
        e->dlio_au = s_real_col (st, 11);
        e->dlio_tput = s_real_col (st, 12);
        e->dlio_io = s_real_col (st, 13);
        e->resident_fraction = s_real_col (st, 14);
        e->from_memory = sqlite3_column_type (st, 15) == SQLITE_NULL ? -1 : sqlite3_column_int (st, 15);
    }
    if (step != SQLITE_DONE)
        goto fail;
    sqlite3_finalize (st);
    *out = v;
    *n = count;
    return 0;
fail:
    fprintf (stderr, "shardbench %s: %s\n", who, sqlite3_errmsg (db));
    free (v);
    sqlite3_finalize (st);
    return -1;
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

/* per-host memory (GiB) and cores, in the order the hosts joined */
static int
s_json_hosts (sqlite3 *db, int64_t id, FILE *out)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (db,
                            "SELECT host, max(memory), max(cores) FROM run_workers WHERE run_id = ?"
                            " GROUP BY host ORDER BY min(worker)", -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (st, 1, id) != SQLITE_OK) {
        sqlite3_finalize (st);
        return -1;
    }
    char *cores = NULL;
    size_t cores_size = 0;
    FILE *cf = open_memstream (&cores, &cores_size);
    if (!cf) {
        sqlite3_finalize (st);
        return -1;
    }
    fputs ("  \"host_memory_GB\": [", out);
    int step, first = 1;
    while ((step = sqlite3_step (st)) == SQLITE_ROW) {
        fputs (first ? "" : ", ", out);
        fputs (first ? "" : ", ", cf);
        first = 0;
        s_json_num (out, s_real_col (st, 1) / 1073741824.0);
        if (sqlite3_column_type (st, 2) == SQLITE_NULL)
            fputs ("null", cf);
        else
            fprintf (cf, "%lld", sqlite3_column_int64 (st, 2));
    }
    fclose (cf);
    fprintf (out, "],\n  \"host_cpu_count\": [%s],\n", cores ? cores : "");
    free (cores);
    sqlite3_finalize (st);
    return step == SQLITE_DONE ? 0 : -1;
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
    s_epoch_t *ep = NULL;
    double *au = NULL, *tput = NULL, *io = NULL;
    size_t n = 0;
    int rc = -1;
    if (s_run_load (db, run_id, &r, "report") != 0)
        return -1;
    if (strcmp (r.kind, "train") != 0) {
        fprintf (stderr, "shardbench report: run %lld is a %s run; --json describes train runs\n",
                 (long long) run_id, r.kind);
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
        au[i] = ep[i].dlio_au;
        tput[i] = ep[i].dlio_tput;
        io[i] = ep[i].mib_per_s;
    }
    double m_tput, s_tput, m_mib, s_mib;     /* shardbench's measured rates: means over epochs */
    s_mean_std (io, n, &m_mib, &s_mib);
    for (size_t i = 0; i < n; i++)
        io[i] = ep[i].samples_per_s;
    s_mean_std (io, n, &m_tput, &s_tput);

    fputs ("{\n  \"start\": ", out);
    s_json_time (out, r.started_at);
    fputs (",\n  \"end\": ", out);
    s_json_time (out, r.finished_at);
    fprintf (out, ",\n  \"num_accelerators\": %lld,\n  \"num_hosts\": %lld,\n  \"hostname\": ",
             (long long) r.accelerators, (long long) r.hosts);
    s_json_str (out, r.host);
    fputs (",\n", out);
    if (s_json_hosts (db, run_id, out) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sqlite3_errmsg (db));
        goto done;
    }
    /* DLIO's summary key: per host, 1 unless its memory is at most the data it reads per epoch */
    s_caching_list_t cl = { .out = out, .first = 1 };
    fputs ("  \"potential_caching\": [", out);
    if (sb_report_host_caching (db, run_id, s_json_caching_host, &cl) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sqlite3_errmsg (db));
        goto done;
    }
    fputs ("],\n", out);
    fprintf (out, "  \"epochs\": %zu,\n  \"metric\": {\n    \"train_au_percentage\": ", n);
    s_json_list (out, au, n);
    fputs (",\n    \"train_au_mean_percentage\": ", out);
    s_json_num (out, r.dlio_au_mean);
    fprintf (out, ",\n    \"train_au_meet_expectation\": \"%s\"", r.passed == 1 ? "success" : "fail");
    fputs (",\n    \"train_au_stdev_percentage\": ", out);
    s_json_num (out, r.dlio_au_std);
    fputs (",\n    \"train_throughput_samples_per_second\": ", out);
    s_json_list (out, tput, n);
    fputs (",\n    \"train_throughput_mean_samples_per_second\": ", out);
    s_json_num (out, r.dlio_tput_mean);
    fputs (",\n    \"train_throughput_stdev_samples_per_second\": ", out);
    s_json_num (out, r.dlio_tput_std);
    fputs (",\n    \"train_io_mean_MB_per_second\": ", out);
    s_json_num (out, r.dlio_io_mean);
    fputs (",\n    \"train_io_stdev_MB_per_second\": ", out);
    s_json_num (out, r.dlio_io_std);
    fprintf (out, "\n  },\n  \"shardbench\": {\n    \"run_id\": %lld,\n    \"kind\": ", (long long) r.id);
    s_json_str (out, r.kind);
    fputs (",\n    \"workload\": ", out);
    s_json_str (out, r.workload);
    fputs (",\n    \"model\": ", out);
    s_json_str (out, r.model);
    fputs (",\n    \"status\": ", out);
    s_json_str (out, r.status);
    fputs (",\n    \"error\": ", out);
    s_json_str (out, r.error);
    fprintf (out, ",\n    \"passed\": %s", r.passed == 1 ? "true" : r.passed == 0 ? "false" : "null");
    fputs (",\n    \"au_threshold_percentage\": ", out);
    s_json_num (out, 100 * r.au_threshold);
    fputs (",\n    \"au_mean_percentage\": ", out);
    s_json_num (out, 100 * r.au_mean);
    fputs (",\n    \"samples_per_s_mean\": ", out);
    s_json_num (out, m_tput);
    fputs (",\n    \"MiB_per_s_mean\": ", out);
    s_json_num (out, m_mib);
    fputs (",\n    \"record_size_bytes\": ", out);
    if (r.record_size >= 0)
        fprintf (out, "%lld", (long long) r.record_size);
    else
        fputs ("null", out);
    fprintf (out, ",\n    \"workers\": %lld,\n    \"seed\": %lld,\n    \"duration_s\": ", (long long) r.workers,
             (long long) r.seed);
    s_json_num (out, r.finished_at - r.started_at);
    fputs (",\n    \"epochs\": [", out);
    for (size_t i = 0; i < n; i++) {
        const s_epoch_t *e = &ep[i];
        fprintf (out, "%s\n      {\"epoch\": %lld, \"samples\": %lld, \"dropped\": %lld, \"bytes\": %lld,"
                 " \"steps\": %lld, \"duration_s\": ", i ? "," : "", (long long) e->epoch, (long long) e->samples,
                 (long long) e->dropped, (long long) e->bytes, (long long) e->batches);
        s_json_num (out, e->duration_s);
        fputs (", \"samples_per_s\": ", out);
        s_json_num (out, e->samples_per_s);
        fputs (", \"MiB_per_s\": ", out);
        s_json_num (out, e->mib_per_s);
        fputs (", \"au_percentage\": ", out);
        s_json_num (out, 100 * e->au);
        fputs (", \"barrier_p50_ms\": ", out);
        s_json_num (out, e->p50);
        fputs (", \"barrier_p99_ms\": ", out);
        s_json_num (out, e->p99);
        fputs (", \"train_au_percentage\": ", out);
        s_json_num (out, e->dlio_au);
        fputs (", \"train_throughput_samples_per_second\": ", out);
        s_json_num (out, e->dlio_tput);
        fputs (", \"train_io_MB_per_second\": ", out);
        s_json_num (out, e->dlio_io);
        fputs (", \"resident_fraction\": ", out);
        s_json_num (out, e->resident_fraction);
        fprintf (out, ", \"served_from_memory\": %s}",
                 e->from_memory == 1 ? "true" : e->from_memory == 0 ? "false" : "null");
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

int
sb_report_csv (sqlite3 *db, int64_t run_id, int ranks, FILE *out)
{
    s_run_t r;
    if (s_run_load (db, run_id, &r, "report") != 0)
        return -1;
    s_run_fini (&r);
    if (!ranks) {
        s_epoch_t *ep = NULL;
        size_t n = 0;
        if (s_epochs_load (db, run_id, &ep, &n, "report") != 0)
            return -1;
        fputs ("run_id,epoch,samples,dropped,steps,bytes,duration_s,samples_per_s,MiB_per_s,au,"
               "barrier_p50_ms,barrier_p99_ms,train_au_percentage,train_throughput_samples_per_second,"
               "train_io_MB_per_second\n", out);
        for (size_t i = 0; i < n; i++) {
            const s_epoch_t *e = &ep[i];
            fprintf (out, "%lld,%lld,%lld,%lld,%lld,%lld,", (long long) run_id, (long long) e->epoch,
                     (long long) e->samples, (long long) e->dropped, (long long) e->batches, (long long) e->bytes);
            s_csv_num (out, e->duration_s);
            fputc (',', out);
            s_csv_num (out, e->samples_per_s);
            fputc (',', out);
            s_csv_num (out, e->mib_per_s);
            fputc (',', out);
            s_csv_num (out, e->au);
            fputc (',', out);
            s_csv_num (out, e->p50);
            fputc (',', out);
            s_csv_num (out, e->p99);
            fputc (',', out);
            s_csv_num (out, e->dlio_au);
            fputc (',', out);
            s_csv_num (out, e->dlio_tput);
            fputc (',', out);
            s_csv_num (out, e->dlio_io);
            fputc ('\n', out);
        }
        free (ep);
        return 0;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (db,
                            "SELECT epoch, rank, host, samples, batches, bytes, started_at, finished_at, compute_s,"
                            " au, io_wait_s, barrier_s, metric_steps, metric_compute_s, metric_excluded_s,"
                            " metric_time_s, dlio_au_percentage, dlio_throughput_samples_per_second"
                            " FROM rank_epochs WHERE run_id = ? ORDER BY epoch, rank",
                            -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (st, 1, run_id) != SQLITE_OK) {
        fprintf (stderr, "shardbench report: %s\n", sqlite3_errmsg (db));
        sqlite3_finalize (st);
        return -1;
    }
    fputs ("run_id,epoch,rank,host,samples,steps,bytes,started_at,finished_at,wall_s,compute_s,au,io_wait_s,"
           "barrier_s,metric_steps,metric_compute_s,metric_excluded_s,metric_time_s,dlio_au_percentage,"
           "dlio_throughput_samples_per_second\n", out);
    int step;
    while ((step = sqlite3_step (st)) == SQLITE_ROW) {
        const unsigned char *host = sqlite3_column_text (st, 2);
        fprintf (out, "%lld,%lld,%lld,", (long long) run_id, sqlite3_column_int64 (st, 0),
                 sqlite3_column_int64 (st, 1));
        s_csv_str (out, host ? (const char *) host : "");
        fprintf (out, ",%lld,%lld,%lld,", sqlite3_column_int64 (st, 3), sqlite3_column_int64 (st, 4),
                 sqlite3_column_int64 (st, 5));
        double t0 = sqlite3_column_double (st, 6), t1 = sqlite3_column_double (st, 7);
        s_csv_num (out, t0);
        fputc (',', out);
        s_csv_num (out, t1);
        fputc (',', out);
        s_csv_num (out, t1 - t0);
        for (int c = 8; c <= 11; c++) {
            fputc (',', out);
            s_csv_num (out, s_real_col (st, c));
        }
        fputc (',', out);
        if (sqlite3_column_type (st, 12) != SQLITE_NULL)
            fprintf (out, "%lld", sqlite3_column_int64 (st, 12));
        for (int c = 13; c <= 17; c++) {
            fputc (',', out);
            s_csv_num (out, s_real_col (st, c));
        }
        fputc ('\n', out);
    }
    int rc = step == SQLITE_DONE ? 0 : -1;
    if (rc != 0)
        fprintf (stderr, "shardbench report: %s\n", sqlite3_errmsg (db));
    sqlite3_finalize (st);
    return rc;
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
    s_epoch_t *ep = NULL;
    size_t n = 0;
    if (s_epochs_load (db, id, &ep, &n, "compare") != 0) {
        s_run_fini (&s->r);
        return -1;
    }
    double tput = 0, mib = 0, au = 0, p50 = 0, p99 = NAN;
    size_t nau = 0, np = 0;
    for (size_t i = 0; i < n; i++) {
        tput += ep[i].samples_per_s;
        mib += ep[i].mib_per_s;
        if (isfinite (ep[i].au)) {
            au += 100 * ep[i].au;
            nau++;
        }
        if (isfinite (ep[i].p50)) {
            p50 += ep[i].p50;
            np++;
        }
        if (isfinite (ep[i].p99) && !(ep[i].p99 <= p99))
            p99 = ep[i].p99;
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
    s_cmp_text (out, "kind", a.r.kind, b.r.kind);
    s_cmp_text (out, "workload", a.r.workload, b.r.workload);
    s_cmp_text (out, "model", a.r.model, b.r.model);
    s_cmp_text (out, "status", a.r.status, b.r.status);
    s_cmp_text (out, "passed", a.r.passed == 1 ? "yes" : a.r.passed == 0 ? "no" : "-",
                b.r.passed == 1 ? "yes" : b.r.passed == 0 ? "no" : "-");
    s_cmp_num (out, "accelerators", "%.0f", (double) a.r.accelerators, (double) b.r.accelerators);
    s_cmp_num (out, "hosts", "%.0f", (double) a.r.hosts, (double) b.r.hosts);
    s_cmp_num (out, "epochs", "%.0f", (double) a.epochs, (double) b.epochs);
    /* DLIO's figures first (the headline), then shardbench's measured ones */
    s_cmp_num (out, "train_au_mean_percentage", "%.2f", a.r.dlio_au_mean, b.r.dlio_au_mean);
    s_cmp_num (out, "train_throughput_mean_samples_per_second", "%.1f", a.r.dlio_tput_mean, b.r.dlio_tput_mean);
    s_cmp_num (out, "train_io_mean_MB_per_second", "%.1f", a.r.dlio_io_mean, b.r.dlio_io_mean);
    s_cmp_num (out, "samples/s (mean)", "%.1f", a.tput, b.tput);
    s_cmp_num (out, "MiB/s (mean)", "%.1f", a.mib, b.mib);
    s_cmp_num (out, "AU % (mean)", "%.2f", a.au, b.au);
    s_cmp_num (out, "barrier p50 ms (mean)", "%.3f", a.p50, b.p50);
    s_cmp_num (out, "barrier p99 ms (max)", "%.3f", a.p99, b.p99);
    s_run_fini (&a.r);
    s_run_fini (&b.r);
    return 0;
}
