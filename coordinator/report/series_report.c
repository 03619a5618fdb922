/* series_report: a series' summary and the list of runs (series_report.h). */
#include "series_report.h"
#include "json_out.h"
#include "report_query.h"
#include "log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ aggregate */

static int
s_is_train (const sb_series_t *s)
{
    return strcmp (s->kind, "checkpoint") != 0;
}

/* MB/s of bytes over s seconds, MB as DLIO's (2^20 bytes); NAN without time */
static double
s_mb_per_s (int64_t bytes, double s)
{
    return s > 0 ? (double) bytes / 1048576.0 / s : NAN;
}

/* checkpoint MB/s: MB = 10^6 bytes, as the checkpoints table's mb_per_s
 * and the run's checkpoint summary; NAN without time */
static double
s_ckpt_mb_per_s (int64_t bytes, double s)
{
    return s > 0 ? (double) bytes / 1e6 / s : NAN;
}

/* the run's figure k across the series: train AU %, samples/s, MB/s;
 * checkpoint write MB/s, read MB/s */
static double
s_figure (const sb_series_t *s, const sb_series_run_t *r, int k)
{
    if (s_is_train (s))
        return k == 0 ? r->au_percentage : k == 1 ? r->samples_per_s : r->mb_per_s;
    return k < 2 ? s_ckpt_mb_per_s (r->ckpt_bytes[k], r->ckpt_time_s[k]) : NAN;
}

static int
s_measured (const sb_series_run_t *r)
{
    return r->warmup != 1 && strcmp (r->status, "succeeded") == 0;
}

void
sb_series_verdict (const sb_series_t *s, const sb_series_run_t *runs, size_t n, sb_series_verdict_t *v)
{
    memset (v, 0, sizeof *v);
    int train = s_is_train (s);
    v->runs = n;
    v->all_succeeded = n == s->runs;
    v->au_ok = n > 0;
    v->count_ok = n > 0;
    for (size_t i = 0; i < n; i++) {
        const sb_series_run_t *r = &runs[i];
        v->warmup += r->warmup == 1;
        if (strcmp (r->status, "succeeded") != 0)
            v->all_succeeded = 0;
        /* the submission checker's AU rule (3.3.2) reads every run directory */
        if (train && strcmp (r->meet, "success") != 0)
            v->au_ok = 0;
        if (!s_measured (r))
            continue;
        v->measured++;
        v->samples += r->samples;
        v->bytes += r->bytes;
        v->time_s += r->epoch_time_s;
        for (int op = 0; op < 2; op++) {
            v->ckpt_bytes[op] += r->ckpt_bytes[op];
            v->ckpt_time_s[op] += r->ckpt_time_s[op];
        }
        if (!train && (r->ckpt_count[0] < SB_SERIES_CKPT_OPS || r->ckpt_count[1] < SB_SERIES_CKPT_OPS))
            v->count_ok = 0;
    }
    /* mean and population standard deviation (numpy.std) across the
     * measured runs, summed in series order */
    for (int k = 0; k < 3; k++) {
        double sum = 0, dev = 0;
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (s_measured (&runs[i]) && isfinite (s_figure (s, &runs[i], k))) {
                sum += s_figure (s, &runs[i], k);
                m++;
            }
        v->mean[k] = m ? sum / (double) m : NAN;
        for (size_t i = 0; i < n; i++)
            if (s_measured (&runs[i]) && isfinite (s_figure (s, &runs[i], k))) {
                double d = s_figure (s, &runs[i], k) - v->mean[k];
                dev += d * d;
            }
        v->stdev[k] = m ? sqrt (dev / (double) m) : NAN;
    }
    v->total_samples_per_s = v->time_s > 0 ? (double) v->samples / v->time_s : NAN;
    v->total_mb_per_s = s_mb_per_s (v->bytes, v->time_s);
    for (int op = 0; op < 2; op++)
        v->total_ckpt_mb_per_s[op] = s_ckpt_mb_per_s (v->ckpt_bytes[op], v->ckpt_time_s[op]);
    if (train)
        v->count_ok = n == SB_SERIES_TRAIN_RUNS && v->measured >= SB_SERIES_TRAIN_MEASURED;
    else if (v->measured == 0)
        v->count_ok = 0;
    /* the gap rule (2.1.18): each start-to-start gap, in the whole seconds
     * of the run directories' names, under 2 x the shortest run */
    v->gap_ok = train && n > 0;
    v->shortest_s = NAN;
    for (size_t i = 0; i < n; i++) {
        double d = runs[i].finished_at - runs[i].started_at;
        if (!isfinite (d))
            v->gap_ok = 0;
        else if (!isfinite (v->shortest_s) || d < v->shortest_s)
            v->shortest_s = d;
        if (i > 0) {
            double gap = floor (runs[i].started_at) - floor (runs[i - 1].started_at);
            if (gap > v->max_gap_s)
                v->max_gap_s = gap;
        }
    }
    if (v->gap_ok && !(v->max_gap_s < SB_SERIES_GAP_FACTOR * v->shortest_s))
        v->gap_ok = 0;
    v->passed = v->all_succeeded && v->count_ok && (train ? v->au_ok && v->gap_ok : 1);
}

/* ------------------------------------------------------------ loading */

/* The series and its runs; 0, or -1 after a message. */
static int
s_load (sqlite3 *db, int64_t id, sb_series_t *s, sb_series_run_t **runs, size_t *n)
{
    int found = sb_series_get (db, id, s);
    if (found == 0) {
        fprintf (stderr, "shardbench: series: no series %lld in this database\n", (long long) id);
        return -1;
    }
    if (found < 0 || sb_series_runs (db, id, runs, n) != 0) {
        fprintf (stderr, "shardbench: series: %s\n", sb_report_error (db));
        return -1;
    }
    return 0;
}

static const char *
s_verdict_word (const sb_series_run_t *r)
{
    /* a KV-cache run has no AU to judge: what it can say of itself is
     * whether its storage check found the cache folder honest */
    if (!strcmp (r->kind, "kvcache"))
        return r->kv_storage_check[0] ? r->kv_storage_check : "-";
    if (strcmp (r->kind, "train") != 0 || strcmp (r->status, "succeeded") != 0)
        return "-";
    return r->passed == 1 ? "PASS" : r->passed == 0 ? "FAIL" : "-";
}

static const char *
s_ok (int ok)
{
    return ok ? "ok" : "NOT MET";
}

/* ------------------------------------------------------------ text */

static void
s_fmt (char *buf, size_t size, const char *fmt, double v)
{
    if (isfinite (v))
        snprintf (buf, size, fmt, v);
    else
        snprintf (buf, size, "-");
}

int
sb_series_print (sqlite3 *db, int64_t id, FILE *out)
{
    sb_series_t s;
    sb_series_run_t *runs = NULL;
    size_t n = 0;
    if (s_load (db, id, &s, &runs, &n) != 0)
        return -1;
    int train = s_is_train (&s);
    sb_series_verdict_t v;
    sb_series_verdict (&s, runs, n, &v);
    /* the label is a user's text, and an older database's may hold control
     * bytes: escaped for the terminal (sb_log_escape) */
    char label[4 * sizeof s.label], workload[4 * sizeof s.workload];
    fprintf (out, "\nshardbench series %lld%s%s%s: %s, workload %s, %llu runs asked (%llu warm-up), %zu recorded,"
             " status %s\n", (long long) s.id, s.has_label ? " \"" : "",
             s.has_label ? sb_log_escape (s.label, label, sizeof label) : "", s.has_label ? "\"" : "", s.kind,
             sb_log_escape (s.workload, workload, sizeof workload), (unsigned long long) s.runs,
             (unsigned long long) s.warmup, n, s.status);
    char a[32], b[32], c[32];
    if (train)
        fprintf (out, "  %3s %8s %-8s %-11s %10s %12s %10s %10s %8s\n", "#", "run", "warm-up", "status", "AU %",
                 "samples/s", "MB/s", "time s", "verdict");
    else
        fprintf (out, "  %3s %8s %-8s %-11s %7s %12s %7s %12s\n", "#", "run", "warm-up", "status", "writes",
                 "write MB/s", "reads", "read MB/s");
    for (size_t i = 0; i < n; i++) {
        const sb_series_run_t *r = &runs[i];
        if (train) {
            s_fmt (a, sizeof a, "%.2f", r->au_percentage);
            s_fmt (b, sizeof b, "%.1f", r->samples_per_s);
            s_fmt (c, sizeof c, "%.1f", r->mb_per_s);
            fprintf (out, "  %3lld %8lld %-8s %-11s %10s %12s %10s %10.3f %8s\n", (long long) r->series_index,
                     (long long) r->id, r->warmup == 1 ? "yes" : "no", r->status, a, b, c, r->epoch_time_s,
                     s_verdict_word (r));
        }
        else {
            s_fmt (a, sizeof a, "%.1f", s_figure (&s, r, 0));
            s_fmt (b, sizeof b, "%.1f", s_figure (&s, r, 1));
            fprintf (out, "  %3lld %8lld %-8s %-11s %7lld %12s %7lld %12s\n", (long long) r->series_index,
                     (long long) r->id, r->warmup == 1 ? "yes" : "no", r->status, (long long) r->ckpt_count[0], a,
                     (long long) r->ckpt_count[1], b);
        }
    }
    fprintf (out, "  over the %zu measured run(s) (warm-up left out):\n", v.measured);
    if (train) {
        fprintf (out, "  %-28s %10s %12s %10s\n", "", "AU %", "samples/s", "MB/s");
        s_fmt (a, sizeof a, "%.2f", v.mean[0]), s_fmt (b, sizeof b, "%.1f", v.mean[1]), s_fmt (c, sizeof c, "%.1f", v.mean[2]);
        fprintf (out, "  %-28s %10s %12s %10s\n", "mean across runs", a, b, c);
        s_fmt (a, sizeof a, "%.2f", v.stdev[0]), s_fmt (b, sizeof b, "%.1f", v.stdev[1]), s_fmt (c, sizeof c, "%.1f", v.stdev[2]);
        fprintf (out, "  %-28s %10s %12s %10s\n", "stdev across runs", a, b, c);
        s_fmt (b, sizeof b, "%.1f", v.total_samples_per_s), s_fmt (c, sizeof c, "%.1f", v.total_mb_per_s);
        fprintf (out, "  %-28s %10s %12s %10s\n", "total over total time", "", b, c);
        fprintf (out, "  (%lld samples and %.3f MiB read in %.3f s of epochs; the runs' figures are DLIO's, the"
                 " totals measured)\n", (long long) v.samples, (double) v.bytes / 1048576.0, v.time_s);
    }
    else {
        fprintf (out, "  %-28s %12s %12s\n", "", "write MB/s", "read MB/s");
        s_fmt (a, sizeof a, "%.1f", v.mean[0]), s_fmt (b, sizeof b, "%.1f", v.mean[1]);
        fprintf (out, "  %-28s %12s %12s\n", "mean across runs", a, b);
        s_fmt (a, sizeof a, "%.1f", v.stdev[0]), s_fmt (b, sizeof b, "%.1f", v.stdev[1]);
        fprintf (out, "  %-28s %12s %12s\n", "stdev across runs", a, b);
        s_fmt (a, sizeof a, "%.1f", v.total_ckpt_mb_per_s[0]), s_fmt (b, sizeof b, "%.1f", v.total_ckpt_mb_per_s[1]);
        fprintf (out, "  %-28s %12s %12s\n", "total over total time", a, b);
    }
    fprintf (out, "  rules (MLPerf Storage %s):\n", train ? "training" : "checkpointing");
    fprintf (out, "    every run asked for succeeded (%zu recorded of %llu asked): %s\n", n, (unsigned long long) s.runs,
             s_ok (v.all_succeeded));
    if (train) {
        fprintf (out, "    %d runs, at least %d measured (%zu recorded, %zu warm-up, %zu measured): %s\n",
                 SB_SERIES_TRAIN_RUNS, SB_SERIES_TRAIN_MEASURED, n, v.warmup, v.measured, s_ok (v.count_ok));
        fprintf (out, "    every run's train_au_meet_expectation is success (warm-up included): %s\n", s_ok (v.au_ok));
        s_fmt (a, sizeof a, "%.3f", v.shortest_s);
        fprintf (out, "    start-to-start gaps under %d x the shortest run (largest %.0f s, shortest run %s s): %s\n",
                 SB_SERIES_GAP_FACTOR, v.max_gap_s, a, s_ok (v.gap_ok));
    }
    else
        fprintf (out, "    every measured run wrote and read %d checkpoints: %s\n", SB_SERIES_CKPT_OPS,
                 s_ok (v.count_ok));
    fprintf (out, "  series: %s\n", v.passed ? "PASS" : "FAIL");
    free (runs);
    return 0;
}

/* ------------------------------------------------------------ JSON */

static const char *
s_bool (int v)
{
    return v ? "true" : "false";
}

int
sb_series_json (sqlite3 *db, int64_t id, FILE *out)
{
    sb_series_t s;
    sb_series_run_t *runs = NULL;
    size_t n = 0;
    if (s_load (db, id, &s, &runs, &n) != 0)
        return -1;
    int train = s_is_train (&s);
    sb_series_verdict_t v;
    sb_series_verdict (&s, runs, n, &v);
    fprintf (out, "{\"series_id\": %lld, \"kind\": ", (long long) s.id);
    sb_json_str (out, s.kind);
    fputs (", \"workload\": ", out);
    sb_json_str (out, s.workload);
    fputs (", \"label\": ", out);
    sb_json_str (out, s.has_label ? s.label : NULL);
    fprintf (out, ", \"runs_asked\": %llu, \"warmup\": %llu, \"status\": ", (unsigned long long) s.runs,
             (unsigned long long) s.warmup);
    sb_json_str (out, s.status);
    fputs (",\n \"runs\": [", out);
    for (size_t i = 0; i < n; i++) {
        const sb_series_run_t *r = &runs[i];
        fprintf (out, "%s\n  {\"run_id\": %lld, \"index\": %lld, \"warmup\": %s, \"status\": ", i ? "," : "",
                 (long long) r->id, (long long) r->series_index, s_bool (r->warmup == 1));
        sb_json_str (out, r->status);
        if (train) {
            fputs (", \"train_au_mean_percentage\": ", out);
            sb_json_num (out, r->au_percentage);
            fputs (", \"train_throughput_mean_samples_per_second\": ", out);
            sb_json_num (out, r->samples_per_s);
            fputs (", \"train_io_mean_MB_per_second\": ", out);
            sb_json_num (out, r->mb_per_s);
            fputs (", \"train_au_meet_expectation\": ", out);
            sb_json_str (out, r->meet[0] ? r->meet : NULL);
            fprintf (out, ", \"epochs\": %lld, \"samples\": %lld, \"bytes\": %lld, \"time_s\": ", (long long) r->epochs,
                     (long long) r->samples, (long long) r->bytes);
            sb_json_num (out, r->epoch_time_s);
        }
        else
            for (int op = 0; op < 2; op++) {
                fprintf (out, ", \"%s\": {\"checkpoints\": %lld, \"bytes\": %lld, \"time_s\": ", op ? "read" : "write",
                         (long long) r->ckpt_count[op], (long long) r->ckpt_bytes[op]);
                sb_json_num (out, r->ckpt_time_s[op]);
                fputs (", \"MB_per_second\": ", out);
                sb_json_num (out, s_figure (&s, r, op));
                fputs ("}", out);
            }
        fputs ("}", out);
    }
    fprintf (out, "],\n \"measured\": {\"runs\": %zu", v.measured);
    static const char *const train_names[3] = { "au_percentage", "throughput_samples_per_second", "io_MB_per_second" };
    static const char *const ckpt_names[2] = { "write_MB_per_second", "read_MB_per_second" };
    for (int k = 0; k < (train ? 3 : 2); k++) {
        const char *name = train ? train_names[k] : ckpt_names[k];
        fprintf (out, ", \"%s_mean\": ", name);
        sb_json_num (out, v.mean[k]);
        fprintf (out, ", \"%s_stdev\": ", name);
        sb_json_num (out, v.stdev[k]);
    }
    if (train) {
        fprintf (out, ", \"samples\": %lld, \"bytes\": %lld, \"time_s\": ", (long long) v.samples, (long long) v.bytes);
        sb_json_num (out, v.time_s);
        fputs (", \"total_samples_per_second\": ", out);
        sb_json_num (out, v.total_samples_per_s);
        fputs (", \"total_MB_per_second\": ", out);
        sb_json_num (out, v.total_mb_per_s);
    }
    else
        for (int op = 0; op < 2; op++) {
            fprintf (out, ", \"%s_bytes\": %lld, \"%s_time_s\": ", op ? "read" : "write", (long long) v.ckpt_bytes[op],
                     op ? "read" : "write");
            sb_json_num (out, v.ckpt_time_s[op]);
            fprintf (out, ", \"total_%s_MB_per_second\": ", op ? "read" : "write");
            sb_json_num (out, v.total_ckpt_mb_per_s[op]);
        }
    fprintf (out, "},\n \"rules\": {\"all_succeeded\": %s, \"run_count\": %s", s_bool (v.all_succeeded),
             s_bool (v.count_ok));
    if (train) {
        fprintf (out, ", \"au\": %s, \"gap\": %s, \"max_gap_s\": ", s_bool (v.au_ok), s_bool (v.gap_ok));
        sb_json_num (out, v.max_gap_s);
        fputs (", \"shortest_run_s\": ", out);
        sb_json_num (out, v.shortest_s);
    }
    fprintf (out, ", \"passed\": %s}}\n", s_bool (v.passed));
    free (runs);
    return 0;
}

/* ------------------------------------------------------------ runs */

static void
s_local_time (char *buf, size_t size, double t)
{
    time_t sec = (time_t) t;
    struct tm tm;
    if (!isfinite (t) || !localtime_r (&sec, &tm) || strftime (buf, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf (buf, size, "-");
}

int
sb_runs_print (sqlite3 *db, int json, FILE *out)
{
    sb_series_run_t *runs = NULL;
    size_t n = 0;
    if (sb_series_runs (db, 0, &runs, &n) != 0) {
        fprintf (stderr, "shardbench: runs: %s\n", sb_report_error (db));
        return -1;
    }
    if (!json)
        fprintf (out, "%6s %-10s %-24s %-16s %-11s %-19s %10s %8s %7s %s\n", "id", "kind", "workload", "label",
                 "status", "start", "duration s", "AU %", "verdict", "series");
    else
        fputs ("[", out);
    for (size_t i = 0; i < n; i++) {
        const sb_series_run_t *r = &runs[i];
        double duration = r->finished_at - r->started_at;
        char start[32], dur[32], au[32], series[48] = "-";
        s_local_time (start, sizeof start, r->started_at);
        s_fmt (dur, sizeof dur, "%.2f", duration);
        s_fmt (au, sizeof au, "%.2f", r->au_percentage);
        if (r->series_id > 0)
            snprintf (series, sizeof series, "%lld #%lld%s", (long long) r->series_id, (long long) r->series_index,
                      r->warmup == 1 ? " warm-up" : "");
        if (!json) {
            /* label and workload: a user's text, escaped for the terminal */
            char label[4 * sizeof r->label], workload[4 * sizeof r->workload], kind[64], status[64];
            fprintf (out, "%6lld %-10s %-24s %-16s %-11s %-19s %10s %8s %7s %s\n", (long long) r->id,
                     sb_log_escape (r->kind, kind, sizeof kind), sb_log_escape (r->workload, workload, sizeof workload),
                     r->has_label ? sb_log_escape (r->label, label, sizeof label) : "-",
                     sb_log_escape (r->status, status, sizeof status), start, dur, au, s_verdict_word (r), series);
            continue;
        }
        fprintf (out, "%s\n {\"id\": %lld, \"kind\": ", i ? "," : "", (long long) r->id);
        sb_json_str (out, r->kind);
        fputs (", \"workload\": ", out);
        sb_json_str (out, r->workload);
        fputs (", \"label\": ", out);
        sb_json_str (out, r->has_label ? r->label : NULL);
        fputs (", \"status\": ", out);
        sb_json_str (out, r->status);
        fputs (", \"started_at\": ", out);
        sb_json_num (out, r->started_at);
        fputs (", \"duration_s\": ", out);
        sb_json_num (out, duration);
        fputs (", \"train_au_mean_percentage\": ", out);
        sb_json_num (out, r->au_percentage);
        fputs (", \"verdict\": ", out);
        sb_json_str (out, strcmp (s_verdict_word (r), "-") ? s_verdict_word (r) : NULL);
        if (r->series_id > 0)
            fprintf (out, ", \"series_id\": %lld, \"series_index\": %lld, \"warmup\": %s", (long long) r->series_id,
                     (long long) r->series_index, s_bool (r->warmup == 1));
        else
            fputs (", \"series_id\": null, \"series_index\": null, \"warmup\": null", out);
        fputs ("}", out);
    }
    if (json)
        fputs (n ? "\n]\n" : "]\n", out);
    free (runs);
    return 0;
}
