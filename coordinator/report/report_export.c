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
#include "config_diff.h"
#include "export_query.h"
#include "json_out.h"
#include "kv_export.h"
#include "kv_report.h"
#include "workload.h"
#include "csv_out.h"

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

/* ---- the figures every output carries --------- */

/* the rows of sb_report_latencies and sb_report_slowest, copied */
typedef struct {
    sb_report_latency_t *v;
    size_t               n, cap;
    int                  oom;
} s_lat_list_t;

static void
s_lat_add (void *ctx, const sb_report_latency_t *l)
{
    s_lat_list_t *ll = ctx;
    if (ll->oom)
        return;
    if (ll->n == ll->cap) {
        size_t cap = ll->cap ? 2 * ll->cap : 16;
        sb_report_latency_t *v = realloc (ll->v, cap * sizeof *v);
        if (!v) {
            ll->oom = 1;
            return;
        }
        ll->v = v;
        ll->cap = cap;
    }
    ll->v[ll->n] = *l;
    ll->v[ll->n].host = l->host ? strdup (l->host) : NULL;
    if (l->host && !ll->v[ll->n].host)
        ll->oom = 1;
    ll->n++;
}

static void
s_lat_list_fini (s_lat_list_t *ll)
{
    for (size_t i = 0; i < ll->n; i++)
        free ((char *) ll->v[i].host);
    free (ll->v);
    memset (ll, 0, sizeof *ll);
}

/* Load the latency rows of run `id` grouped by `by`. Returns 0 or -1
 * (message on stderr). */
static int
s_lat_load (sqlite3 *db, int64_t id, sb_report_latency_by_t by, s_lat_list_t *ll, const char *who)
{
    memset (ll, 0, sizeof *ll);
    if (sb_report_latencies (db, id, by, s_lat_add, ll) != 0 || ll->oom) {
        fprintf (stderr, "shardbench %s: %s\n", who, ll->oom ? "out of memory" : sb_report_error (db));
        s_lat_list_fini (ll);
        return -1;
    }
    return 0;
}

typedef struct {
    sb_report_slowest_t *v;
    size_t               n, cap;
    int                  oom;
} s_slow_list_t;

static void
s_slow_add (void *ctx, const sb_report_slowest_t *r)
{
    s_slow_list_t *sl = ctx;
    if (sl->oom)
        return;
    if (sl->n == sl->cap) {
        size_t cap = sl->cap ? 2 * sl->cap : 16;
        sb_report_slowest_t *v = realloc (sl->v, cap * sizeof *v);
        if (!v) {
            sl->oom = 1;
            return;
        }
        sl->v = v;
        sl->cap = cap;
    }
    sl->v[sl->n] = *r;
    sl->v[sl->n].host = strdup (r->host);
    sl->oom = !sl->v[sl->n].host;
    sl->n++;
}

static void
s_slow_list_fini (s_slow_list_t *sl)
{
    for (size_t i = 0; i < sl->n; i++)
        free ((char *) sl->v[i].host);
    free (sl->v);
    memset (sl, 0, sizeof *sl);
}

static int
s_slow_load (sqlite3 *db, int64_t id, s_slow_list_t *sl, const char *who)
{
    memset (sl, 0, sizeof *sl);
    if (sb_report_slowest (db, id, s_slow_add, sl) != 0 || sl->oom) {
        fprintf (stderr, "shardbench %s: %s\n", who, sl->oom ? "out of memory" : sb_report_error (db));
        s_slow_list_fini (sl);
        return -1;
    }
    return 0;
}

/* the entry of `epoch` in a list, NULL when none */
static const sb_report_latency_t *
s_lat_find (const s_lat_list_t *ll, int64_t epoch)
{
    for (size_t i = 0; i < ll->n; i++)
        if (ll->v[i].epoch == epoch)
            return &ll->v[i];
    return NULL;
}

static const sb_report_slowest_t *
s_slow_find (const s_slow_list_t *sl, int64_t epoch)
{
    for (size_t i = 0; i < sl->n; i++)
        if (sl->v[i].epoch == epoch)
            return &sl->v[i];
    return NULL;
}

/* ---- JSON ------------------------------------------------------------------- */

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
        sb_json_num (out, v[i]);
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
    sb_json_num (hl->out, h->memory_bytes / 1073741824.0);
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

/* "reads": N, "read_p50_ms": ..., "read_p999_ms": ... of l (nulls when NULL) */
static void
s_json_latency (FILE *out, const sb_report_latency_t *l)
{
    if (l)
        fprintf (out, "\"reads\": %lld, \"read_p50_ms\": ", (long long) l->reads);
    else
        fputs ("\"reads\": 0, \"read_p50_ms\": ", out);
    sb_json_num (out, l ? l->p50_ms : NAN);
    fputs (", \"read_p90_ms\": ", out);
    sb_json_num (out, l ? l->p90_ms : NAN);
    fputs (", \"read_p99_ms\": ", out);
    sb_json_num (out, l ? l->p99_ms : NAN);
    fputs (", \"read_p999_ms\": ", out);
    sb_json_num (out, l ? l->p999_ms : NAN);
}

typedef struct {
    FILE *out;
    int   first;
} s_json_list_t;

static void
s_json_endpoint (void *ctx, const sb_report_endpoint_t *e)
{
    s_json_list_t *jl = ctx;
    FILE *out = jl->out;
    fputs (jl->first ? "\n      {\"endpoint\": " : ",\n      {\"endpoint\": ", out);
    jl->first = 0;
    sb_json_str (out, e->endpoint);
    fprintf (out, ", \"requests\": %lld, \"bytes\": %lld, \"errors\": %lld, \"retries\": %lld, \"mean_ms\": ",
             (long long) e->requests, (long long) e->bytes, (long long) e->errors, (long long) e->retries);
    sb_json_num (out, e->mean_ms);
    fputs (", \"p50_ms\": ", out);
    sb_json_num (out, e->p50_ms);
    fputs (", \"p90_ms\": ", out);
    sb_json_num (out, e->p90_ms);
    fputs (", \"p99_ms\": ", out);
    sb_json_num (out, e->p99_ms);
    fputs (", \"max_ms\": ", out);
    sb_json_num (out, e->max_ms);
    fputc ('}', out);
}

static void
s_json_host_caching (void *ctx, const sb_report_host_caching_t *h)
{
    s_json_list_t *jl = ctx;
    FILE *out = jl->out;
    fputs (jl->first ? "\n      {\"host\": " : ",\n      {\"host\": ", out);
    jl->first = 0;
    sb_json_str (out, h->host);
    fputs (", \"memory_GB\": ", out);
    sb_json_num (out, h->memory_bytes < 0 ? NAN : (double) h->memory_bytes / 1073741824.0);
    fputs (", \"data_per_epoch_GB\": ", out);
    sb_json_num (out, (double) h->data_bytes / 1073741824.0);
    if (h->potential_caching < 0)
        fputs (", \"potential_caching\": null}", out);
    else
        fprintf (out, ", \"potential_caching\": %d}", h->potential_caching);
}

/* ,\n    "requests": ..., "retries": ..., "endpoints": [...] of a run (the
 * "shardbench" object). Returns 0 or -1 (sb_report_error). */
static int
s_json_failures (sqlite3 *db, int64_t id, FILE *out)
{
    sb_report_failures_t f;
    if (sb_report_failures (db, id, &f) != 0)
        return -1;
    fprintf (out, ",\n    \"requests\": %lld,\n    \"retries\": %lld,\n    \"request_errors\": %lld,"
             "\n    \"error_rows\": %lld,\n    \"endpoints\": [", (long long) f.requests, (long long) f.retries,
             (long long) f.request_errors, (long long) f.error_rows);
    s_json_list_t jl = { out, 1 };
    if (sb_report_endpoints (db, id, s_json_endpoint, &jl) != 0)
        return -1;
    fputs (jl.first ? "]" : "\n    ]", out);
    return 0;
}

/* One "key": value line of the checkpoint metrics, ",\n    " before it
 * (or "\n    " for the first). */
typedef struct {
    const char *key;
    double      v;
    size_t      count;
} s_ckpt_key_t;

static void
s_json_ckpt_keys (FILE *out, const s_ckpt_key_t *keys, size_t nkeys, int first)
{
    for (size_t i = 0; i < nkeys; i++) {
        if (!keys[i].count)
            continue;   /* DLIO writes the load_* keys only when there were loads */
        fprintf (out, "%s\n    \"%s\": ", first ? "" : ",", keys[i].key);
        first = 0;
        sb_json_num (out, keys[i].v);
    }
}

/* DLIO's checkpoint metric keys (statscounter.py) of rows, as DLIO
 * computes them (its checkpoint_size over rank 0's time: report_query.h),
 * each line starting ",\n    " (inside "metric"; "\n    " for the first
 * when first); nothing without checkpoints */
static void
s_json_ckpt_metrics (FILE *out, const sb_report_checkpoint_t *rows, size_t n, int first)
{
    sb_report_ckpt_metrics_t m;
    sb_report_ckpt_metrics (rows, n, &m);
    const s_ckpt_key_t keys[] = {
        { "save_checkpoint_io_mean_GB_per_second", m.save_gbps_mean, m.saves },
        { "save_checkpoint_io_stdev_GB_per_second", m.save_gbps_stdev, m.saves },
        { "save_checkpoint_duration_mean_seconds", m.save_s_mean, m.saves },
        { "save_checkpoint_duration_stdev_seconds", m.save_s_stdev, m.saves },
        { "load_checkpoint_io_mean_GB_per_second", m.load_gbps_mean, m.loads },
        { "load_checkpoint_io_stdev_GB_per_second", m.load_gbps_stdev, m.loads },
        { "load_checkpoint_duration_mean_seconds", m.load_s_mean, m.loads },
        { "load_checkpoint_duration_stdev_seconds", m.load_s_stdev, m.loads },
        { "checkpoint_size_GB", m.size_gb, m.saves },
    };
    s_json_ckpt_keys (out, keys, sizeof keys / sizeof keys[0], first);
}

/* shardbench's own checkpoint figures beside DLIO's (in "shardbench"): the
 * bytes of all ranks over the slowest rank's time, and the bytes written */
static void
s_json_ckpt_own_metrics (FILE *out, const sb_report_checkpoint_t *rows, size_t n)
{
    sb_report_ckpt_metrics_t m;
    sb_report_ckpt_metrics (rows, n, &m);
    const s_ckpt_key_t keys[] = {
        { "save_checkpoint_slowest_rank_io_mean_GB_per_second", m.slowest_save_gbps_mean, m.saves },
        { "save_checkpoint_slowest_rank_io_stdev_GB_per_second", m.slowest_save_gbps_stdev, m.saves },
        { "save_checkpoint_slowest_rank_duration_mean_seconds", m.slowest_save_s_mean, m.saves },
        { "save_checkpoint_slowest_rank_duration_stdev_seconds", m.slowest_save_s_stdev, m.saves },
        { "load_checkpoint_slowest_rank_io_mean_GB_per_second", m.slowest_load_gbps_mean, m.loads },
        { "load_checkpoint_slowest_rank_io_stdev_GB_per_second", m.slowest_load_gbps_stdev, m.loads },
        { "load_checkpoint_slowest_rank_duration_mean_seconds", m.slowest_load_s_mean, m.loads },
        { "load_checkpoint_slowest_rank_duration_stdev_seconds", m.slowest_load_s_stdev, m.loads },
        { "checkpoint_written_GB", m.written_gb, m.saves },
    };
    s_json_ckpt_keys (out, keys, sizeof keys / sizeof keys[0], 0);
}

typedef struct {
    FILE   *out;
    int64_t seq;
    int     first;
} s_json_ckpt_ranks_t;

static void
s_json_ckpt_rank (void *ctx, const sb_report_ckpt_rank_t *r)
{
    s_json_ckpt_ranks_t *jr = ctx;
    if (r->seq != jr->seq)
        return;
    FILE *out = jr->out;
    fputs (jr->first ? "\n        {\"rank\": " : ",\n        {\"rank\": ", out);
    jr->first = 0;
    fprintf (out, "%lld, \"host\": ", (long long) r->rank);
    sb_json_str (out, r->host);
    fprintf (out, ", \"files\": %lld, \"bytes\": %lld, \"duration_s\": ", (long long) r->files, (long long) r->bytes);
    sb_json_num (out, r->duration_s);
    fputs (", \"GB_per_second\": ", out);
    sb_json_num (out, r->duration_s > 0 ? (double) r->bytes / 1073741824.0 / r->duration_s : NAN);
    fputs (", \"MB_per_s\": ", out);
    sb_json_num (out, r->mb_per_s);
    fputc ('}', out);
}

/* shardbench's own checkpoint metrics, then ,\n    "checkpoints": [...]
 * with each checkpoint's ranks and DLIO's figures of it. Returns 0 or -1. */
static int
s_json_checkpoints (sqlite3 *db, int64_t id, const sb_report_checkpoint_t *rows, size_t n, FILE *out)
{
    s_json_ckpt_own_metrics (out, rows, n);
    fputs (",\n    \"checkpoints\": [", out);
    for (size_t i = 0; i < n; i++) {
        const sb_report_checkpoint_t *c = &rows[i];
        fprintf (out, "%s\n      {\"seq\": %lld, \"op\": ", i ? "," : "", (long long) c->seq);
        sb_json_str (out, c->op);
        fprintf (out, ", \"checkpoint\": %lld, \"ranks\": %lld, \"files\": %lld, \"bytes\": %lld, \"duration_s\": ",
                 (long long) c->checkpoint, (long long) c->ranks, (long long) c->files, (long long) c->bytes);
        sb_json_num (out, c->duration_s);
        fputs (", \"span_s\": ", out);
        sb_json_num (out, c->span_s);
        fputs (", \"GB_per_second\": ", out);
        sb_json_num (out, c->gib_per_s);
        fputs (", \"MB_per_s\": ", out);
        sb_json_num (out, c->mb_per_s);
        fputs (", \"min_rank_MB_per_s\": ", out);
        sb_json_num (out, c->min_rank_mb_per_s);
        fprintf (out, ", \"dlio_bytes\": %lld, \"dlio_duration_s\": ", (long long) c->dlio_bytes);
        sb_json_num (out, c->dlio_duration_s);
        fputs (", \"dlio_GB_per_second\": ", out);
        sb_json_num (out, c->dlio_gib_per_s);
        fputs (", \"per_rank\": [", out);
        s_json_ckpt_ranks_t jr = { out, c->seq, 1 };
        if (sb_report_checkpoint_ranks (db, id, s_json_ckpt_rank, &jr) != 0)
            return -1;
        fputs (jr.first ? "]}" : "\n      ]}", out);
    }
    fputs (n ? "\n    ]" : "]", out);
    return 0;
}

/* The JSON of a checkpoint run: DLIO's summary keys a checkpoint-only run
 * has (start, end, num_accelerators, num_hosts, hostname, host lists,
 * epochs 0, its checkpoint metrics) and a "shardbench" object with every
 * checkpoint and rank. Returns 0 or -1 (message on stderr). */
static int
s_json_checkpoint_run (sqlite3 *db, const s_run_t *r, FILE *out)
{
    sb_report_checkpoint_t *rows;
    size_t n;
    if (sb_report_checkpoints (db, r->id, &rows, &n) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        return -1;
    }
    int rc = -1;
    fputs ("{\n  \"start\": ", out);
    s_json_time (out, r->row.started_at);
    fputs (",\n  \"end\": ", out);
    s_json_time (out, r->row.finished_at);
    fprintf (out, ",\n  \"num_accelerators\": %lld,\n  \"num_hosts\": %lld,\n  \"hostname\": ",
             (long long) r->row.accelerators, (long long) r->row.hosts);
    sb_json_str (out, r->row.host);
    fputs (",\n", out);
    if (s_json_hosts (db, r->id, out) != 0)
        goto done;
    fputs ("  \"epochs\": 0,\n  \"metric\": {", out);
    s_json_ckpt_metrics (out, rows, n, 1);
    fprintf (out, "\n  },\n  \"shardbench\": {\n    \"run_id\": %lld,\n    \"kind\": ", (long long) r->id);
    sb_json_str (out, r->row.kind);
    fputs (",\n    \"workload\": ", out);
    sb_json_str (out, r->row.workload);
    fputs (",\n    \"model\": ", out);
    sb_json_str (out, r->model);
    fputs (",\n    \"status\": ", out);
    sb_json_str (out, r->row.status);
    fputs (",\n    \"error\": ", out);
    sb_json_str (out, r->row.error);
    fprintf (out, ",\n    \"workers\": %lld,\n    \"seed\": %lld,\n    \"duration_s\": ", (long long) r->row.workers,
             (long long) r->row.seed);
    sb_json_num (out, r->row.finished_at - r->row.started_at);
    if (s_json_failures (db, r->id, out) != 0 || s_json_checkpoints (db, r->id, rows, n, out) != 0)
        goto done;
    fputs ("\n  }\n}\n", out);
    rc = 0;
done:
    if (rc != 0)
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
    sb_report_checkpoints_free (rows, n);
    return rc;
}

int
sb_report_json (sqlite3 *db, int64_t run_id, FILE *out)
{
    s_run_t r;
    sb_report_epoch_t *ep = NULL;
    double *au = NULL, *tput = NULL, *io = NULL;
    size_t n = 0, nckpt = 0;
    int rc = -1;
    s_lat_list_t lat_ep = { 0 }, lat_host = { 0 }, lat_run = { 0 };
    s_slow_list_t slow = { 0 };
    sb_report_checkpoint_t *ckpt = NULL;
    if (s_run_load (db, run_id, &r, "report") != 0)
        return -1;
    if (!strcmp (r.row.kind, "checkpoint")) {
        rc = s_json_checkpoint_run (db, &r, out);
        goto done;
    }
    if (!strcmp (r.row.kind, "kvcache")) {
        rc = sb_kv_report_json (db, run_id, out);
        goto done;
    }
    if (strcmp (r.row.kind, "train") != 0) {
        fprintf (stderr, "shardbench report: run %lld is a %s run; --json describes train and checkpoint runs\n",
                 (long long) run_id, r.row.kind);
        goto done;
    }
    if (s_epochs_load (db, run_id, &ep, &n, "report") != 0
        || s_lat_load (db, run_id, SB_REPORT_LATENCY_EPOCHS, &lat_ep, "report") != 0
        || s_lat_load (db, run_id, SB_REPORT_LATENCY_HOSTS, &lat_host, "report") != 0
        || s_lat_load (db, run_id, SB_REPORT_LATENCY_RUN, &lat_run, "report") != 0
        || s_slow_load (db, run_id, &slow, "report") != 0)
        goto done;
    if (sb_report_checkpoints (db, run_id, &ckpt, &nckpt) != 0) {  /* checkpoints during training */
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        goto done;
    }
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
    sb_json_str (out, r.row.host);
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
    sb_json_num (out, r.row.dlio_au_mean);
    fprintf (out, ",\n    \"train_au_meet_expectation\": \"%s\"", r.row.passed == 1 ? "success" : "fail");
    fputs (",\n    \"train_au_stdev_percentage\": ", out);
    sb_json_num (out, r.row.dlio_au_stdev);
    fputs (",\n    \"train_throughput_samples_per_second\": ", out);
    s_json_list (out, tput, n);
    fputs (",\n    \"train_throughput_mean_samples_per_second\": ", out);
    sb_json_num (out, r.row.dlio_tput_mean);
    fputs (",\n    \"train_throughput_stdev_samples_per_second\": ", out);
    sb_json_num (out, r.row.dlio_tput_stdev);
    fputs (",\n    \"train_io_mean_MB_per_second\": ", out);
    sb_json_num (out, r.row.dlio_io_mean);
    fputs (",\n    \"train_io_stdev_MB_per_second\": ", out);
    sb_json_num (out, r.row.dlio_io_stdev);
    s_json_ckpt_metrics (out, ckpt, nckpt, 0);
    fprintf (out, "\n  },\n  \"shardbench\": {\n    \"run_id\": %lld,\n    \"kind\": ", (long long) r.id);
    sb_json_str (out, r.row.kind);
    fputs (",\n    \"workload\": ", out);
    sb_json_str (out, r.row.workload);
    fputs (",\n    \"model\": ", out);
    sb_json_str (out, r.model);
    fputs (",\n    \"status\": ", out);
    sb_json_str (out, r.row.status);
    fputs (",\n    \"error\": ", out);
    sb_json_str (out, r.row.error);
    fprintf (out, ",\n    \"passed\": %s", r.row.passed == 1 ? "true" : r.row.passed == 0 ? "false" : "null");
    fputs (",\n    \"au_threshold_percentage\": ", out);
    sb_json_num (out, 100 * r.row.au_threshold);
    fputs (",\n    \"au_mean_percentage\": ", out);
    sb_json_num (out, 100 * r.row.au_mean);
    fputs (",\n    \"samples_per_s_mean\": ", out);
    sb_json_num (out, m_tput);
    fputs (",\n    \"MiB_per_s_mean\": ", out);
    sb_json_num (out, m_mib);
    fputs (",\n    \"record_size_bytes\": ", out);
    if (r.row.record_size >= 0)
        fprintf (out, "%lld", (long long) r.row.record_size);
    else
        fputs ("null", out);
    fprintf (out, ",\n    \"workers\": %lld,\n    \"seed\": %lld,\n    \"duration_s\": ", (long long) r.row.workers,
             (long long) r.row.seed);
    sb_json_num (out, r.row.finished_at - r.row.started_at);
    /* the run's read latency, retries and failures, page-cache flags per host */
    fputs (",\n    \"read_latency\": {", out);
    s_json_latency (out, lat_run.n ? &lat_run.v[0] : NULL);
    fputc ('}', out);
    if (s_json_failures (db, run_id, out) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        goto done;
    }
    int from_memory = 0;
    for (size_t i = 0; i < n; i++)
        from_memory += ep[i].has_from_memory && ep[i].from_memory;
    fprintf (out, ",\n    \"epochs_served_from_memory\": %d,\n    \"hosts\": [", from_memory);
    s_json_list_t hosts = { out, 1 };
    if (sb_report_host_caching (db, run_id, s_json_host_caching, &hosts) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        goto done;
    }
    fputs (hosts.first ? "]" : "\n    ]", out);
    if (nckpt && s_json_checkpoints (db, run_id, ckpt, nckpt, out) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        goto done;
    }
    fputs (",\n    \"epochs\": [", out);
    for (size_t i = 0; i < n; i++) {
        const sb_report_epoch_t *e = &ep[i];
        fprintf (out, "%s\n      {\"epoch\": %lld, \"samples\": %lld, \"dropped\": %lld, \"bytes\": %lld,"
                 " \"steps\": %lld, \"duration_s\": ", i ? "," : "", (long long) e->epoch, (long long) e->samples,
                 (long long) e->dropped, (long long) e->bytes, (long long) e->batches);
        sb_json_num (out, e->duration_s);
        fputs (", \"samples_per_s\": ", out);
        sb_json_num (out, e->samples_per_s);
        fputs (", \"MiB_per_s\": ", out);
        sb_json_num (out, e->mib_per_s);
        fputs (", \"au_percentage\": ", out);
        sb_json_num (out, 100 * s_or_nan (e->has_au_mean, e->au_mean));
        fputs (", \"barrier_p50_ms\": ", out);
        sb_json_num (out, s_or_nan (e->has_barrier, e->barrier_p50_ms));
        fputs (", \"barrier_p99_ms\": ", out);
        sb_json_num (out, s_or_nan (e->has_barrier_p99, e->barrier_p99_ms));
        fputs (", \"train_au_percentage\": ", out);
        sb_json_num (out, s_or_nan (e->has_dlio, e->dlio_au_percentage));
        fputs (", \"train_throughput_samples_per_second\": ", out);
        sb_json_num (out, s_or_nan (e->has_dlio_samples, e->dlio_samples_per_s));
        fputs (", \"train_io_MB_per_second\": ", out);
        sb_json_num (out, s_or_nan (e->has_dlio_io, e->dlio_io_mb_per_s));
        fputs (", \"resident_fraction\": ", out);
        sb_json_num (out, s_or_nan (e->has_resident, e->resident_fraction));
        fprintf (out, ", \"served_from_memory\": %s, ",
                 !e->has_from_memory ? "null" : e->from_memory ? "true" : "false");
        /* read latency percentiles, the barrier's own cost and wait, the slowest rank, per host */
        s_json_latency (out, s_lat_find (&lat_ep, e->epoch));
        fputs (", \"barrier_own_p50_ms\": ", out);
        sb_json_num (out, s_or_nan (e->has_barrier_own, e->barrier_own_p50_ms));
        fputs (", \"barrier_own_p99_ms\": ", out);
        sb_json_num (out, s_or_nan (e->has_barrier_own_p99, e->barrier_own_p99_ms));
        const sb_report_slowest_t *sr = s_slow_find (&slow, e->epoch);
        fputs (", \"barrier_wait_mean_s\": ", out);
        sb_json_num (out, sr ? sr->barrier_mean_s : NAN);
        fputs (",\n       \"waited_for_rank\": ", out);
        if (sr) {
            fprintf (out, "{\"rank\": %lld, \"host\": ", (long long) sr->rank);
            sb_json_str (out, sr->host);
            fputs (", \"held_s\": ", out);
            sb_json_num (out, sr->held_s);
            fputs (", \"window_s\": ", out);
            sb_json_num (out, sr->window_s);
            fputs (", \"wall_s\": ", out);
            sb_json_num (out, sr->wall_s);
            fputs (", \"own_s\": ", out);
            sb_json_num (out, sr->own_s);
            fputs (", \"compute_s\": ", out);
            sb_json_num (out, sr->compute_s);
            fputs (", \"io_wait_s\": ", out);
            sb_json_num (out, sr->io_wait_s);
            fputs (", \"barrier_s\": ", out);
            sb_json_num (out, sr->barrier_s);
            fputs (", \"other_s\": ", out);
            sb_json_num (out, sr->other_s);
            fputs (", \"idle_s\": ", out);
            sb_json_num (out, sr->idle_s);
            fputc ('}', out);
        }
        else
            fputs ("null", out);
        fputs (",\n       \"hosts\": [", out);
        int first = 1;
        for (size_t h = 0; h < lat_host.n; h++) {
            if (lat_host.v[h].epoch != e->epoch)
                continue;
            fputs (first ? "{\"host\": " : ", {\"host\": ", out);
            first = 0;
            sb_json_str (out, lat_host.v[h].host);
            fputs (", ", out);
            s_json_latency (out, &lat_host.v[h]);
            fputc ('}', out);
        }
        fputs ("]}", out);
    }
    fputs (n ? "\n    ]\n  }\n}\n" : "]\n  }\n}\n", out);
    rc = 0;
done:
    free (au);
    free (tput);
    free (io);
    free (ep);
    s_lat_list_fini (&lat_ep);
    s_lat_list_fini (&lat_host);
    s_lat_list_fini (&lat_run);
    s_slow_list_fini (&slow);
    sb_report_checkpoints_free (ckpt, nckpt);
    s_run_fini (&r);
    return rc;
}

/* ---- CSV -------------------------------------------------------------------- */

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
           "dlio_throughput_samples_per_second,compute_all_s,other_s,idle_s,window_s,held_s\n", cr->out);
}

static int
s_csv_rank_epoch (void *ctx, const sb_export_rank_epoch_t *e)
{
    s_csv_rank_t *cr = ctx;
    FILE *out = cr->out;
    s_csv_rank_header (cr);
    fprintf (out, "%lld,%lld,%lld,", (long long) cr->run_id, (long long) e->epoch, (long long) e->rank);
    sb_csv_str (out, e->host);
    fprintf (out, ",%lld,%lld,%lld,", (long long) e->samples, (long long) e->batches, (long long) e->bytes);
    sb_csv_num (out, e->started_at);
    fputc (',', out);
    sb_csv_num (out, e->finished_at);
    fputc (',', out);
    sb_csv_num (out, e->finished_at - e->started_at);
    const double mid[] = { e->compute_s, e->au, e->io_wait_s, e->barrier_s };
    for (size_t c = 0; c < sizeof mid / sizeof mid[0]; c++) {
        fputc (',', out);
        sb_csv_num (out, mid[c]);
    }
    fputc (',', out);
    if (e->has_metric_steps)
        fprintf (out, "%lld", (long long) e->metric_steps);
    /* the rank's split of the epoch's window: compute (every step), I/O wait, barrier, other, idle */
    double wall = e->finished_at - e->started_at;
    double other = isfinite (e->compute_all_s) ? wall - e->compute_all_s - e->io_wait_s - e->barrier_s : NAN;
    double idle = e->window_s - wall;
    const double tail[] = { e->metric_compute_s, e->metric_excluded_s, e->metric_time_s, e->dlio_au_percentage,
                            e->dlio_samples_per_s, e->compute_all_s, other < 0 ? 0 : other, idle < 0 ? 0 : idle,
                            e->window_s, e->held_s };
    for (size_t c = 0; c < sizeof tail / sizeof tail[0]; c++) {
        fputc (',', out);
        sb_csv_num (out, tail[c]);
    }
    fputc ('\n', out);
    return 0;
}

static int
s_csv_train (sqlite3 *db, int64_t run_id, int ranks, FILE *out)
{
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
            sb_csv_num (out, e->duration_s);
            fputc (',', out);
            sb_csv_num (out, e->samples_per_s);
            fputc (',', out);
            sb_csv_num (out, e->mib_per_s);
            fputc (',', out);
            sb_csv_num (out, s_or_nan (e->has_au_mean, e->au_mean));
            fputc (',', out);
            sb_csv_num (out, s_or_nan (e->has_barrier, e->barrier_p50_ms));
            fputc (',', out);
            sb_csv_num (out, s_or_nan (e->has_barrier_p99, e->barrier_p99_ms));
            fputc (',', out);
            sb_csv_num (out, s_or_nan (e->has_dlio, e->dlio_au_percentage));
            fputc (',', out);
            sb_csv_num (out, s_or_nan (e->has_dlio_samples, e->dlio_samples_per_s));
            fputc (',', out);
            sb_csv_num (out, s_or_nan (e->has_dlio_io, e->dlio_io_mb_per_s));
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

/* ---- CSV views: latency, barrier wait, slowest rank, page cache ---- */

/* one number, or nothing when not finite, after a comma */
static void
s_csv_next (FILE *out, double v)
{
    fputc (',', out);
    sb_csv_num (out, v);
}

typedef struct {
    FILE   *out;
    int64_t run_id;
} s_csv_ctx_t;

static void
s_csv_latency (void *ctx, const sb_report_latency_t *l)
{
    s_csv_ctx_t *c = ctx;
    fprintf (c->out, "%lld,%lld,", (long long) c->run_id, (long long) l->epoch);
    sb_csv_str (c->out, l->host ? l->host : "");
    fprintf (c->out, ",%lld", (long long) l->reads);
    s_csv_next (c->out, l->p50_ms);
    s_csv_next (c->out, l->p90_ms);
    s_csv_next (c->out, l->p99_ms);
    s_csv_next (c->out, l->p999_ms);
    fputc ('\n', c->out);
}

static void
s_csv_endpoint (void *ctx, const sb_report_endpoint_t *e)
{
    s_csv_ctx_t *c = ctx;
    fprintf (c->out, "%lld,", (long long) c->run_id);
    sb_csv_str (c->out, e->endpoint);
    fprintf (c->out, ",%lld,%lld,%lld,%lld", (long long) e->requests, (long long) e->bytes, (long long) e->errors,
             (long long) e->retries);
    s_csv_next (c->out, e->mean_ms);
    s_csv_next (c->out, e->p50_ms);
    s_csv_next (c->out, e->p90_ms);
    s_csv_next (c->out, e->p99_ms);
    s_csv_next (c->out, e->max_ms);
    fputc ('\n', c->out);
}

static void
s_csv_ckpt_rank (void *ctx, const sb_report_ckpt_rank_t *r)
{
    s_csv_ctx_t *c = ctx;
    fprintf (c->out, "%lld,%lld,", (long long) c->run_id, (long long) r->seq);
    sb_csv_str (c->out, r->op);
    fprintf (c->out, ",%lld,%lld,", (long long) r->checkpoint, (long long) r->rank);
    sb_csv_str (c->out, r->host);
    fprintf (c->out, ",%lld,%lld", (long long) r->files, (long long) r->bytes);
    s_csv_next (c->out, r->started_at);
    s_csv_next (c->out, r->finished_at);
    s_csv_next (c->out, r->duration_s);
    s_csv_next (c->out, r->duration_s > 0 ? (double) r->bytes / 1073741824.0 / r->duration_s : NAN);
    s_csv_next (c->out, r->mb_per_s);
    fputc ('\n', c->out);
}

/* --csv checkpoints (a checkpoint run's default): one row per checkpoint */
static int
s_csv_checkpoints (sqlite3 *db, int64_t run_id, FILE *out)
{
    sb_report_checkpoint_t *rows;
    size_t n;
    if (sb_report_checkpoints (db, run_id, &rows, &n) != 0)
        return -1;
    fputs ("run_id,seq,op,checkpoint,ranks,files,bytes,duration_s,span_s,GB_per_second,MB_per_s,min_rank_MB_per_s,"
           "dlio_bytes,dlio_duration_s,dlio_GB_per_second\n", out);
    for (size_t i = 0; i < n; i++) {
        const sb_report_checkpoint_t *c = &rows[i];
        fprintf (out, "%lld,%lld,", (long long) run_id, (long long) c->seq);
        sb_csv_str (out, c->op ? c->op : "");
        fprintf (out, ",%lld,%lld,%lld,%lld", (long long) c->checkpoint, (long long) c->ranks, (long long) c->files,
                 (long long) c->bytes);
        s_csv_next (out, c->duration_s);
        s_csv_next (out, c->span_s);
        s_csv_next (out, c->gib_per_s);
        s_csv_next (out, c->mb_per_s);
        s_csv_next (out, c->min_rank_mb_per_s);
        fprintf (out, ",%lld", (long long) c->dlio_bytes);
        s_csv_next (out, c->dlio_duration_s);
        s_csv_next (out, c->dlio_gib_per_s);
        fputc ('\n', out);
    }
    sb_report_checkpoints_free (rows, n);
    return 0;
}

/* --csv detail: per epoch of a train run, the read latency percentiles,
 * barrier figures, page-cache residency and the slowest rank */
static int
s_csv_detail (sqlite3 *db, int64_t run_id, FILE *out)
{
    sb_report_epoch_t *ep = NULL;
    size_t n = 0;
    s_lat_list_t lat;
    s_slow_list_t slow;
    if (s_epochs_load (db, run_id, &ep, &n, "report") != 0)
        return -1;
    if (s_lat_load (db, run_id, SB_REPORT_LATENCY_EPOCHS, &lat, "report") != 0) {
        free (ep);
        return -1;
    }
    if (s_slow_load (db, run_id, &slow, "report") != 0) {
        free (ep);
        s_lat_list_fini (&lat);
        return -1;
    }
    fputs ("run_id,epoch,reads,read_p50_ms,read_p90_ms,read_p99_ms,read_p999_ms,barrier_p50_ms,barrier_p99_ms,"
           "barrier_own_p50_ms,barrier_own_p99_ms,barrier_wait_mean_s,resident_fraction,served_from_memory,"
           "waited_for_rank,waited_for_host,waited_for_wall_s,waited_for_compute_s,waited_for_io_wait_s,"
           "waited_for_barrier_s,waited_for_own_s,waited_for_other_s,waited_for_idle_s,window_s,waited_for_held_s\n", out);
    for (size_t i = 0; i < n; i++) {
        const sb_report_epoch_t *e = &ep[i];
        const sb_report_latency_t *l = s_lat_find (&lat, e->epoch);
        const sb_report_slowest_t *sr = s_slow_find (&slow, e->epoch);
        fprintf (out, "%lld,%lld,%lld", (long long) run_id, (long long) e->epoch, (long long) (l ? l->reads : 0));
        s_csv_next (out, l ? l->p50_ms : NAN);
        s_csv_next (out, l ? l->p90_ms : NAN);
        s_csv_next (out, l ? l->p99_ms : NAN);
        s_csv_next (out, l ? l->p999_ms : NAN);
        s_csv_next (out, s_or_nan (e->has_barrier, e->barrier_p50_ms));
        s_csv_next (out, s_or_nan (e->has_barrier_p99, e->barrier_p99_ms));
        s_csv_next (out, s_or_nan (e->has_barrier_own, e->barrier_own_p50_ms));
        s_csv_next (out, s_or_nan (e->has_barrier_own_p99, e->barrier_own_p99_ms));
        s_csv_next (out, sr ? sr->barrier_mean_s : NAN);
        s_csv_next (out, s_or_nan (e->has_resident, e->resident_fraction));
        fputc (',', out);
        if (e->has_from_memory)
            fputc (e->from_memory ? '1' : '0', out);
        fputc (',', out);
        if (sr) {
            fprintf (out, "%lld,", (long long) sr->rank);
            sb_csv_str (out, sr->host);
        }
        else
            fputc (',', out);
        s_csv_next (out, sr ? sr->wall_s : NAN);
        s_csv_next (out, sr ? sr->compute_s : NAN);
        s_csv_next (out, sr ? sr->io_wait_s : NAN);
        s_csv_next (out, sr ? sr->barrier_s : NAN);
        s_csv_next (out, sr ? sr->own_s : NAN);
        s_csv_next (out, sr ? sr->other_s : NAN);
        s_csv_next (out, sr ? sr->idle_s : NAN);
        s_csv_next (out, sr ? sr->window_s : NAN);
        s_csv_next (out, sr ? sr->held_s : NAN);
        fputc ('\n', out);
    }
    free (ep);
    s_lat_list_fini (&lat);
    s_slow_list_fini (&slow);
    return 0;
}

typedef struct {
    int64_t flagged, known;
} s_csv_caching_t;

static void
s_csv_count_caching (void *ctx, const sb_report_host_caching_t *h)
{
    s_csv_caching_t *c = ctx;
    c->flagged += h->potential_caching == 1;
    c->known += h->potential_caching >= 0;
}

/* --csv run: one row of the run's own figures */
static int
s_csv_run (sqlite3 *db, const s_run_t *r, FILE *out)
{
    sb_report_failures_t f;
    sb_report_epoch_t *ep = NULL;
    size_t n = 0, nckpt = 0;
    sb_report_checkpoint_t *ckpt = NULL;
    s_csv_caching_t cc = { 0, 0 };
    if (sb_report_failures (db, r->id, &f) != 0 || sb_report_host_caching (db, r->id, s_csv_count_caching, &cc) != 0
        || sb_report_checkpoints (db, r->id, &ckpt, &nckpt) != 0) {
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
        return -1;
    }
    if (s_epochs_load (db, r->id, &ep, &n, "report") != 0) {
        sb_report_checkpoints_free (ckpt, nckpt);
        return -1;
    }
    int from_memory = 0;
    for (size_t i = 0; i < n; i++)
        from_memory += ep[i].has_from_memory && ep[i].from_memory;
    free (ep);
    sb_report_ckpt_metrics_t m;
    sb_report_ckpt_metrics (ckpt, nckpt, &m);
    sb_report_checkpoints_free (ckpt, nckpt);
    fputs ("run_id,kind,workload,model,status,error,passed,started_at,duration_s,accelerators,hosts,workers,epochs,"
           "requests,retries,request_errors,error_rows,epochs_served_from_memory,potential_caching_hosts,"
           "train_au_mean_percentage,train_throughput_mean_samples_per_second,train_io_mean_MB_per_second,"
           "checkpoints,save_checkpoint_io_mean_GB_per_second,save_checkpoint_duration_mean_seconds,"
           "load_checkpoint_io_mean_GB_per_second,load_checkpoint_duration_mean_seconds,checkpoint_size_GB,"
           "save_checkpoint_slowest_rank_io_mean_GB_per_second,save_checkpoint_slowest_rank_duration_mean_seconds,"
           "load_checkpoint_slowest_rank_io_mean_GB_per_second,load_checkpoint_slowest_rank_duration_mean_seconds,"
           "checkpoint_written_GB\n", out);
    fprintf (out, "%lld,", (long long) r->id);
    sb_csv_str (out, r->row.kind);
    fputc (',', out);
    sb_csv_str (out, r->row.workload ? r->row.workload : "");
    fputc (',', out);
    sb_csv_str (out, r->model);
    fputc (',', out);
    sb_csv_str (out, r->row.status);
    fputc (',', out);
    sb_csv_str (out, r->row.error ? r->row.error : "");
    fputc (',', out);
    if (r->row.passed >= 0)
        fputc (r->row.passed ? '1' : '0', out);
    s_csv_next (out, r->row.started_at);
    s_csv_next (out, r->row.finished_at - r->row.started_at);
    fprintf (out, ",%lld,%lld,%lld,%zu,%lld,%lld,%lld,%lld,%d,", (long long) r->row.accelerators,
             (long long) r->row.hosts, (long long) r->row.workers, n, (long long) f.requests, (long long) f.retries,
             (long long) f.request_errors, (long long) f.error_rows, from_memory);
    if (cc.known)
        fprintf (out, "%lld", (long long) cc.flagged);
    s_csv_next (out, r->row.dlio_au_mean);
    s_csv_next (out, r->row.dlio_tput_mean);
    s_csv_next (out, r->row.dlio_io_mean);
    fprintf (out, ",%zu", nckpt);
    s_csv_next (out, m.save_gbps_mean);
    s_csv_next (out, m.save_s_mean);
    s_csv_next (out, m.load_gbps_mean);
    s_csv_next (out, m.load_s_mean);
    s_csv_next (out, m.size_gb);
    s_csv_next (out, m.slowest_save_gbps_mean);
    s_csv_next (out, m.slowest_save_s_mean);
    s_csv_next (out, m.slowest_load_gbps_mean);
    s_csv_next (out, m.slowest_load_s_mean);
    s_csv_next (out, m.written_gb);
    fputc ('\n', out);
    return 0;
}

static const char *const s_csv_views[] = { "epochs", "ranks", "detail", "hosts", "endpoints", "run", "checkpoints",
                                           "trials", "latency" };

int
sb_report_csv_view_known (const char *view)
{
    for (size_t i = 0; i < sizeof s_csv_views / sizeof s_csv_views[0]; i++)
        if (!strcmp (view, s_csv_views[i]))
            return 1;
    return 0;
}

int
sb_report_csv (sqlite3 *db, int64_t run_id, const char *view, FILE *out)
{
    s_run_t r;
    int view_given = view != NULL;
    if (!view)
        view = "epochs";
    if (s_run_load (db, run_id, &r, "report") != 0)
        return -1;
    int ckpt = !strcmp (r.row.kind, "checkpoint"), rc = -1;
    s_csv_ctx_t c = { out, run_id };
    /* a KV-cache run has views of its own (kv_export.h); those of training
     * and checkpointing describe figures it does not have, and its own
     * describe figures no other run has: either asked of the other kind is
     * refused, naming the views that kind has */
    int kv = !strcmp (r.row.kind, "kvcache");
    if (kv && (!view_given || sb_kv_csv_view_own (view)))
        rc = sb_kv_report_csv (db, run_id, view_given ? view : NULL, out) == 0 ? 0 : -2;
    else if (kv && strcmp (view, "endpoints") != 0) {
        fprintf (stderr, "shardbench report: run %lld is a kvcache run: --csv %s describes training or"
                 " checkpointing; its views are %s\n", (long long) run_id, view, sb_kv_csv_views_text);
        rc = -2;
    }
    else if (!kv && sb_kv_csv_view_only (view)) {
        fprintf (stderr, "shardbench report: run %lld is a %s run: --csv %s describes a kvcache run; its views"
                 " are epochs (the default), ranks, detail, hosts, endpoints, run, checkpoints\n",
                 (long long) run_id, r.row.kind, view);
        rc = -2;
    }
    else if (!strcmp (view, "run"))
        rc = s_csv_run (db, &r, out);
    else if (!strcmp (view, "checkpoints") || (ckpt && !strcmp (view, "epochs")))
        rc = s_csv_checkpoints (db, run_id, out);
    else if (ckpt && !strcmp (view, "ranks")) {
        fputs ("run_id,seq,op,checkpoint,rank,host,files,bytes,started_at,finished_at,duration_s,GB_per_second,"
               "MB_per_s\n", out);
        rc = sb_report_checkpoint_ranks (db, run_id, s_csv_ckpt_rank, &c);
    }
    else if (!strcmp (view, "epochs") || !strcmp (view, "ranks"))
        rc = s_csv_train (db, run_id, !strcmp (view, "ranks"), out) == 0 ? 0 : -2;
    else if (!strcmp (view, "detail"))
        rc = s_csv_detail (db, run_id, out) == 0 ? 0 : -2;
    else if (!strcmp (view, "hosts")) {
        fputs ("run_id,epoch,host,reads,read_p50_ms,read_p90_ms,read_p99_ms,read_p999_ms\n", out);
        rc = sb_report_latencies (db, run_id, SB_REPORT_LATENCY_HOSTS, s_csv_latency, &c);
    }
    else if (!strcmp (view, "endpoints")) {
        fputs ("run_id,endpoint,requests,bytes,errors,retries,mean_ms,p50_ms,p90_ms,p99_ms,max_ms\n", out);
        rc = sb_report_endpoints (db, run_id, s_csv_endpoint, &c);
    }
    else
        fprintf (stderr, "shardbench report: unknown --csv view '%s'\n", view), rc = -2;
    if (rc == -1)
        fprintf (stderr, "shardbench report: %s\n", sb_report_error (db));
    s_run_fini (&r);
    return rc == 0 ? 0 : -1;
}

/* ---- compare ---------------------------------------------------------------- */

/* the most runs `compare` takes (A..H) */
#define S_CMP_MAX 8

typedef struct {
    s_run_t r;
    size_t  epochs;
    double  tput, mib, au, p50, p99;   /* means over epochs; p99: max over epochs */
    sb_report_failures_t fail;
    double  read_p50, read_p90, read_p99, read_p999;     /* over the run's reads */
    double  barrier_wait;              /* mean over epochs of the ranks' mean barrier time */
    double  slowest_io_wait;           /* mean over epochs of the slowest rank's I/O wait */
    int     from_memory, caching_hosts;
    size_t  checkpoints;
    sb_report_ckpt_metrics_t ckpt;
    char   *full_config;    /* run_inputs.full_config (owned; NULL: recorded before schema 13) */
    sb_kv_summary_t kv;     /* a KV-cache run's figures (kv_report.h), when has_kv */
    int     has_kv;
} s_side_t;

static void
s_side_latency (void *ctx, const sb_report_latency_t *l)
{
    s_side_t *s = ctx;
    s->read_p50 = l->p50_ms;
    s->read_p90 = l->p90_ms;
    s->read_p99 = l->p99_ms;
    s->read_p999 = l->p999_ms;
}

typedef struct {
    double wait, io;
    size_t n;
} s_side_slow_t;

static void
s_side_slowest (void *ctx, const sb_report_slowest_t *r)
{
    s_side_slow_t *ss = ctx;
    ss->wait += r->barrier_mean_s;
    ss->io += r->io_wait_s;
    ss->n++;
}

static void
s_side_caching (void *ctx, const sb_report_host_caching_t *h)
{
    s_side_t *s = ctx;
    s->caching_hosts += h->potential_caching == 1;
}

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
        s->from_memory += ep[i].has_from_memory && ep[i].from_memory;
    }
    s->epochs = n;
    s->tput = n ? tput / (double) n : NAN;
    s->mib = n ? mib / (double) n : NAN;
    s->au = nau ? au / (double) nau : NAN;
    s->p50 = np ? p50 / (double) np : NAN;
    s->p99 = p99;
    free (ep);
    s->read_p50 = s->read_p90 = s->read_p99 = s->read_p999 = NAN;
    s_side_slow_t ss = { 0, 0, 0 };
    sb_report_checkpoint_t *ck = NULL;
    if (sb_report_failures (db, id, &s->fail) != 0
        || sb_report_latencies (db, id, SB_REPORT_LATENCY_RUN, s_side_latency, s) != 0
        || sb_report_slowest (db, id, s_side_slowest, &ss) != 0
        || sb_report_host_caching (db, id, s_side_caching, s) != 0
        || sb_report_checkpoints (db, id, &ck, &s->checkpoints) != 0
        || sb_report_full_config (db, id, &s->full_config) != 0) {
        fprintf (stderr, "shardbench compare: %s\n", sb_report_error (db));
        sb_report_checkpoints_free (ck, s->checkpoints);
        s_run_fini (&s->r);
        return -1;
    }
    if (!strcmp (s->r.row.kind, "kvcache")) {
        int found = sb_kv_report_summary (db, id, &s->kv);
        if (found < 0) {
            sb_report_checkpoints_free (ck, s->checkpoints);
            s_run_fini (&s->r);
            free (s->full_config);
            return -1;
        }
        s->has_kv = found;
        /* the model a KV-cache run emulated, not the workload section's */
        if (found)
            snprintf (s->r.model, sizeof s->r.model, "%s", s->kv.model);
    }
    s->barrier_wait = ss.n ? ss.wait / (double) ss.n : NAN;
    s->slowest_io_wait = ss.n ? ss.io / (double) ss.n : NAN;
    sb_report_ckpt_metrics (ck, s->checkpoints, &s->ckpt);
    sb_report_checkpoints_free (ck, s->checkpoints);
    return 0;
}

/* the table being printed: its runs, and whether rows that fewer than two
 * runs have are left out (runs of different kinds) */
typedef struct {
    FILE   *out;
    size_t  n;
    int     shared_only;
} s_cmp_t;

static void
s_cmp_text (const s_cmp_t *t, const char *name, const char *const *v)
{
    fprintf (t->out, "  %-40s", name);
    for (size_t i = 0; i < t->n; i++)
        fprintf (t->out, " %16s", v[i] ? v[i] : "-");
    fputc ('\n', t->out);
}

/* a row of numbers: fmt for the values, the ratio of each to A with 3
 * decimals ("-" when a value is missing or A is 0) */
static void
s_cmp_num (const s_cmp_t *t, const char *name, const char *fmt, const double *v)
{
    size_t have = 0;
    for (size_t i = 0; i < t->n; i++)
        have += isfinite (v[i]) != 0;
    if (t->shared_only && have < 2)
        return;
    fprintf (t->out, "  %-40s", name);
    for (size_t i = 0; i < t->n; i++) {
        char sv[32] = "-";
        if (isfinite (v[i]))
            snprintf (sv, sizeof sv, fmt, v[i]);
        fprintf (t->out, " %16s", sv);
    }
    for (size_t i = 1; i < t->n; i++) {
        char ratio[32] = "-";
        if (isfinite (v[0]) && isfinite (v[i]) && v[0] != 0 && isfinite (v[i] / v[0]))
            snprintf (ratio, sizeof ratio, "%.3f", v[i] / v[0]);
        fprintf (t->out, " %10s", ratio);
    }
    fputc ('\n', t->out);
}

/* one figure of every side into v (a field of s_side_t, by expression) */
#define S_CMP_ROW(t, name, fmt, sides, expr)                                                                           \
    do {                                                                                                               \
        double v_[S_CMP_MAX];                                                                                          \
        for (size_t i_ = 0; i_ < (t)->n; i_++) {                                                                       \
            const s_side_t *x = &(sides)[i_];                                                                          \
            v_[i_] = (expr);                                                                                           \
        }                                                                                                              \
        s_cmp_num ((t), (name), (fmt), v_);                                                                            \
    } while (0)

/* The configuration diff: workers, hosts and accelerators, then every key
 * whose value differs: of the full configurations (defaults filled in,
 * run_inputs.full_config) when every run has one, so a key one run was
 * given and another left at its default shows both values; else of
 * runs.config (the keys given). Returns 0 or -1 (message on stderr). */
static int
s_cmp_config (const s_cmp_t *t, const s_side_t *sides)
{
    FILE *out = t->out;
    const char *yaml[S_CMP_MAX];
    int full = 1;
    for (size_t i = 0; i < t->n; i++)
        full &= sides[i].full_config != NULL;
    for (size_t i = 0; i < t->n; i++)
        yaml[i] = full ? sides[i].full_config : sides[i].r.row.config;
    sb_config_diff_t d;
    char err[1024];
    if (sb_config_diff (yaml, t->n, &d, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench compare: %s\n", err);
        sb_config_diff_fini (&d);
        return -1;
    }
    fprintf (out, "  configuration (workers, hosts, accelerators, then each key of the effective configuration"
             " that differs):\n");
    const char *names[] = { "workers", "hosts", "accelerators" };
    for (size_t k = 0; k < 3; k++) {
        fprintf (out, "    %-38s", names[k]);
        for (size_t i = 0; i < t->n; i++) {
            const sb_export_run_t *r = &sides[i].r.row;
            fprintf (out, " %16lld", (long long) (k == 0 ? r->workers : k == 1 ? r->hosts : r->accelerators));
        }
        fputc ('\n', out);
    }
    for (size_t k = 0; k < d.nrows; k++) {
        fprintf (out, "    %-38s", d.rows[k].key);
        for (size_t i = 0; i < t->n; i++)
            fprintf (out, " %16s", d.rows[k].values[i] ? d.rows[k].values[i] : "(absent)");
        fputc ('\n', out);
    }
    if (!d.nrows)
        fprintf (out, "    (no key of the configuration differs)\n");
    sb_config_diff_fini (&d);
    return 0;
}

int
sb_report_compare (sqlite3 *db, const int64_t *ids, size_t n, FILE *out)
{
    if (n < 2 || n > S_CMP_MAX) {
        fprintf (stderr, "shardbench compare: %zu runs: give 2 to %d\n", n, S_CMP_MAX);
        return -1;
    }
    s_side_t sides[S_CMP_MAX];
    size_t loaded = 0;
    int rc = -1;
    for (; loaded < n; loaded++)
        if (s_side_load (db, ids[loaded], &sides[loaded]) != 0)
            goto done;
    int kinds_differ = 0, any_train = 0, any_ckpt = 0;
    for (size_t i = 0; i < n; i++) {
        kinds_differ |= strcmp (sides[i].r.row.kind, sides[0].r.row.kind) != 0;
        any_train |= !strcmp (sides[i].r.row.kind, "train");
        any_ckpt |= sides[i].checkpoints > 0;
    }
    /* what is printed goes to a buffer first, so that a failure prints nothing */
    char *text = NULL;
    size_t size = 0;
    FILE *buf = open_memstream (&text, &size);
    if (!buf) {
        fprintf (stderr, "shardbench compare: out of memory\n");
        goto done;
    }
    s_cmp_t t = { .out = buf, .n = n, .shared_only = kinds_differ };
    fputs ("shardbench compare: ", buf);
    for (size_t i = 0; i < n; i++)
        fprintf (buf, "%srun %lld (%c)", i == 0 ? "" : i + 1 == n ? " and " : ", ", (long long) ids[i], (int) ('A' + i));
    fputc ('\n', buf);
    if (s_cmp_config (&t, sides) != 0) {
        fclose (buf);
        free (text);
        goto done;
    }
    if (kinds_differ) {
        fprintf (buf, "  these runs differ in kind (");
        for (size_t i = 0; i < n; i++)
            fprintf (buf, "%s%c %s", i ? ", " : "", (int) ('A' + i), sides[i].r.row.kind);
        fprintf (buf, "): only the figures at least two of them have are compared\n");
    }
    fprintf (buf, "  %-40s", "");
    for (size_t i = 0; i < n; i++)
        fprintf (buf, " %16c", (int) ('A' + i));
    for (size_t i = 1; i < n; i++) {
        char h[8];
        snprintf (h, sizeof h, "%c/A", (int) ('A' + i));
        fprintf (buf, " %10s", h);
    }
    fputc ('\n', buf);
    const char *v[S_CMP_MAX];
    char ids_text[S_CMP_MAX][32];
    for (size_t i = 0; i < n; i++) {
        snprintf (ids_text[i], sizeof ids_text[i], "%lld", (long long) ids[i]);
        v[i] = ids_text[i];
    }
    s_cmp_text (&t, "run", v);
    for (size_t i = 0; i < n; i++)
        v[i] = sides[i].r.row.kind;
    s_cmp_text (&t, "kind", v);
    for (size_t i = 0; i < n; i++)
        v[i] = sides[i].r.row.workload;
    s_cmp_text (&t, "workload", v);
    for (size_t i = 0; i < n; i++)
        v[i] = sides[i].r.model;
    s_cmp_text (&t, "model", v);
    for (size_t i = 0; i < n; i++)
        v[i] = sides[i].r.row.status;
    s_cmp_text (&t, "status", v);
    for (size_t i = 0; i < n; i++)
        v[i] = sides[i].r.row.passed == 1 ? "yes" : sides[i].r.row.passed == 0 ? "no" : "-";
    s_cmp_text (&t, "passed", v);
    S_CMP_ROW (&t, "accelerators", "%.0f", sides, (double) x->r.row.accelerators);
    S_CMP_ROW (&t, "hosts", "%.0f", sides, (double) x->r.row.hosts);
    if (any_train) {
        S_CMP_ROW (&t, "epochs", "%.0f", sides, !strcmp (x->r.row.kind, "train") ? (double) x->epochs : NAN);
        /* DLIO's figures first (the headline), then shardbench's measured ones */
        S_CMP_ROW (&t, "train_au_mean_percentage", "%.2f", sides, x->r.row.dlio_au_mean);
        S_CMP_ROW (&t, "train_throughput_mean_samples_per_second", "%.1f", sides, x->r.row.dlio_tput_mean);
        S_CMP_ROW (&t, "train_io_mean_MB_per_second", "%.1f", sides, x->r.row.dlio_io_mean);
        S_CMP_ROW (&t, "samples/s (mean)", "%.1f", sides, x->epochs ? x->tput : NAN);
        S_CMP_ROW (&t, "MiB/s (mean)", "%.1f", sides, x->epochs ? x->mib : NAN);
        S_CMP_ROW (&t, "AU % (mean)", "%.2f", sides, x->au);
        S_CMP_ROW (&t, "barrier p50 ms (mean)", "%.3f", sides, x->p50);
        S_CMP_ROW (&t, "barrier p99 ms (max)", "%.3f", sides, x->p99);
        /* read latency over the run, barrier wait, the slowest rank, the page cache */
        S_CMP_ROW (&t, "read p50 ms (run)", "%.3f", sides, x->read_p50);
        S_CMP_ROW (&t, "read p90 ms (run)", "%.3f", sides, x->read_p90);
        S_CMP_ROW (&t, "read p99 ms (run)", "%.3f", sides, x->read_p99);
        S_CMP_ROW (&t, "read p99.9 ms (run)", "%.3f", sides, x->read_p999);
        S_CMP_ROW (&t, "barrier wait s per rank (mean)", "%.3f", sides, x->barrier_wait);
        S_CMP_ROW (&t, "slowest rank I/O wait s (mean)", "%.3f", sides, x->slowest_io_wait);
        S_CMP_ROW (&t, "served from memory (epochs)", "%.0f", sides,
                   !strcmp (x->r.row.kind, "train") ? (double) x->from_memory : NAN);
        S_CMP_ROW (&t, "potential_caching (hosts)", "%.0f", sides,
                   !strcmp (x->r.row.kind, "train") ? (double) x->caching_hosts : NAN);
    }
    if (any_ckpt) {
        S_CMP_ROW (&t, "save_checkpoint_io_mean_GB_per_second", "%.3f", sides, x->ckpt.save_gbps_mean);
        S_CMP_ROW (&t, "save_checkpoint_duration_mean_seconds", "%.3f", sides, x->ckpt.save_s_mean);
        S_CMP_ROW (&t, "load_checkpoint_io_mean_GB_per_second", "%.3f", sides, x->ckpt.load_gbps_mean);
        S_CMP_ROW (&t, "load_checkpoint_duration_mean_seconds", "%.3f", sides, x->ckpt.load_s_mean);
        S_CMP_ROW (&t, "checkpoint_size_GB", "%.3f", sides, x->ckpt.size_gb);
        S_CMP_ROW (&t, "save_checkpoint_slowest_rank_io_mean_GB_per_second", "%.3f", sides,
                   x->ckpt.slowest_save_gbps_mean);
        S_CMP_ROW (&t, "load_checkpoint_slowest_rank_io_mean_GB_per_second", "%.3f", sides,
                   x->ckpt.slowest_load_gbps_mean);
        S_CMP_ROW (&t, "checkpoint_written_GB", "%.3f", sides, x->ckpt.written_gb);
    }
    size_t nkv = 0;
    for (size_t i = 0; i < n; i++)
        nkv += sides[i].has_kv;
    if (nkv >= 2) {
        /* the KV-cache figures of the summary (kv_report.h); read/write and
         * tokens/s: means over each run's trials; p95: the largest rank's */
        for (size_t i = 0; i < n; i++)
            v[i] = sides[i].has_kv ? sides[i].kv.storage_check : NULL;
        s_cmp_text (&t, "storage check", v);
        for (size_t i = 0; i < n; i++)
            v[i] = sides[i].has_kv ? sides[i].kv.division : NULL;
        s_cmp_text (&t, "MLPerf Storage division", v);
        S_CMP_ROW (&t, "kvcache option", "%.0f", sides, x->has_kv ? (double) x->kv.option : NAN);
        S_CMP_ROW (&t, "users per rank", "%.0f", sides, x->has_kv ? (double) x->kv.users : NAN);
        S_CMP_ROW (&t, "trials finished", "%.0f", sides, x->has_kv ? (double) x->kv.trials_finished : NAN);
        S_CMP_ROW (&t, "storage read GiB/s (mean)", "%.4f", sides, x->has_kv ? x->kv.read_gib_per_s : NAN);
        S_CMP_ROW (&t, "storage write GiB/s (mean)", "%.4f", sides, x->has_kv ? x->kv.write_gib_per_s : NAN);
        S_CMP_ROW (&t, "storage p95 ms (largest rank)", "%.3f", sides, x->has_kv ? x->kv.storage_p95_ms : NAN);
        S_CMP_ROW (&t, "write device p95 ms (largest rank)", "%.3f", sides,
                   x->has_kv ? x->kv.write_device_p95_ms : NAN);
        S_CMP_ROW (&t, "read device p95 ms (largest rank)", "%.3f", sides, x->has_kv ? x->kv.read_device_p95_ms : NAN);
        S_CMP_ROW (&t, "requests completed", "%.0f", sides, x->has_kv ? (double) x->kv.requests : NAN);
        S_CMP_ROW (&t, "tokens/s (mean)", "%.2f", sides, x->has_kv ? x->kv.tokens_per_s : NAN);
        S_CMP_ROW (&t, "requests chatbot", "%.0f", sides, x->has_kv ? (double) x->kv.chatbot : NAN);
        S_CMP_ROW (&t, "requests coding", "%.0f", sides, x->has_kv ? (double) x->kv.coding : NAN);
        S_CMP_ROW (&t, "requests document", "%.0f", sides, x->has_kv ? (double) x->kv.document : NAN);
        S_CMP_ROW (&t, "requests interactive", "%.0f", sides, x->has_kv ? (double) x->kv.interactive : NAN);
        S_CMP_ROW (&t, "requests responsive", "%.0f", sides, x->has_kv ? (double) x->kv.responsive : NAN);
        S_CMP_ROW (&t, "requests batch", "%.0f", sides, x->has_kv ? (double) x->kv.batch : NAN);
    }
    S_CMP_ROW (&t, "duration s", "%.2f", sides, x->r.row.finished_at - x->r.row.started_at);
    S_CMP_ROW (&t, "retries", "%.0f", sides, (double) x->fail.retries);
    S_CMP_ROW (&t, "failed requests", "%.0f", sides, (double) x->fail.request_errors);
    S_CMP_ROW (&t, "errors recorded", "%.0f", sides, (double) x->fail.error_rows);
    if (fclose (buf) != 0 || !text) {
        free (text);
        fprintf (stderr, "shardbench compare: out of memory\n");
        goto done;
    }
    fputs (text, out);
    free (text);
    rc = 0;
done:
    for (size_t i = 0; i < loaded; i++) {
        s_run_fini (&sides[i].r);
        free (sides[i].full_config);
    }
    return rc;
}
