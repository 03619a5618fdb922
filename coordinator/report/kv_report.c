/* kv_report: a KV-cache run's summary (see kv_report.h). The figures are
 * computed once (s_figures) and written three ways. */
#include "kv_report.h"
#include "json_out.h"
#include "kv_query.h"
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t           trial;
    sb_kv_trial_sum_t sum;
    double            tokens_per_s;     /* each rank's generated / elapsed_s, summed */
} s_trial_t;

typedef struct {
    sb_kv_run_t kv;
    s_trial_t  *trial;
    size_t      ntrials;
    double      read, write, tokens;    /* means over the trials */
    double      storage_p95;            /* largest over ranks and trials */
    int         has_storage_p95;
    int64_t     chatbot, coding, document, interactive, responsive, batch;
    const char *division;
    char        why[512];
} s_fig_t;

static void
s_fig_free (s_fig_t *f)
{
    sb_kv_run_fini (&f->kv);
    free (f->trial);
}

/* Load run_id's figures: 1, or 0 when it has no kv_runs row (err says so;
 * nothing to free), or -1 (err says why; nothing to free). */
static int
s_figures_load (sqlite3 *db, int64_t run_id, s_fig_t *f, char *err, size_t err_size)
{
    memset (f, 0, sizeof *f);
    int found = sb_kv_run_load (db, run_id, &f->kv, err, err_size);
    if (found <= 0) {
        sb_kv_run_fini (&f->kv);
        return found;
    }
    f->trial = calloc (f->kv.ntrials + 1, sizeof *f->trial);
    if (!f->trial) {
        snprintf (err, err_size, "out of memory");
        sb_kv_run_fini (&f->kv);
        return -1;
    }
    f->ntrials = f->kv.ntrials;
    for (size_t t = 0; t < f->ntrials; t++) {
        s_trial_t *tr = &f->trial[t];
        tr->trial = f->kv.trial[t].trial;
        sb_kv_trial_sum (&f->kv, tr->trial, &tr->sum);
        for (size_t i = 0; i < f->kv.nranks; i++)
            if (f->kv.rank[i].trial == tr->trial && f->kv.rank[i].elapsed_s > 0)
                tr->tokens_per_s += (double) f->kv.rank[i].generated / f->kv.rank[i].elapsed_s;
        f->read += tr->sum.read_gib_per_s;
        f->write += tr->sum.write_gib_per_s;
        f->tokens += tr->tokens_per_s;
        if (tr->sum.lat_has[SB_KV_LAT_REQUEST_STORAGE]
            && (!f->has_storage_p95 || tr->sum.lat_max[SB_KV_LAT_REQUEST_STORAGE][1] > f->storage_p95)) {
            f->storage_p95 = tr->sum.lat_max[SB_KV_LAT_REQUEST_STORAGE][1];
            f->has_storage_p95 = 1;
        }
        f->chatbot += tr->sum.chatbot;
        f->coding += tr->sum.coding;
        f->document += tr->sum.document;
        f->interactive += tr->sum.interactive;
        f->responsive += tr->sum.responsive;
        f->batch += tr->sum.batch;
    }
    if (f->ntrials) {
        f->read /= (double) f->ntrials;
        f->write /= (double) f->ntrials;
        f->tokens /= (double) f->ntrials;
    }
    f->division = sb_kv_division (&f->kv, f->why, sizeof f->why);
    return 1;
}

static int
s_figures (sqlite3 *db, int64_t run_id, s_fig_t *f)
{
    char err[1024];
    if (s_figures_load (db, run_id, f, err, sizeof err) == 1)
        return 0;
    fprintf (stderr, "shardbench: report: %s\n", err);
    return -1;
}

/* p50/p95/p99 of latency w, or "-" */
static void
s_lat_text (char *buf, size_t size, const sb_kv_trial_sum_t *s, int w)
{
    if (s->lat_has[w])
        snprintf (buf, size, "%.3f/%.3f/%.3f", s->lat_max[w][0], s->lat_max[w][1], s->lat_max[w][2]);
    else
        snprintf (buf, size, "-");
}

/* A trial's latency cells of the text and HTML tables: its storage p95 and
 * its device write and read p50/p95/p99, "-" where no rank had a sample. */
typedef struct {
    char p95[32], wd[64], rd[64];
} s_cells_t;

static void
s_trial_cells (const s_trial_t *tr, s_cells_t *c)
{
    if (tr->sum.lat_has[SB_KV_LAT_REQUEST_STORAGE])
        snprintf (c->p95, sizeof c->p95, "%.3f", tr->sum.lat_max[SB_KV_LAT_REQUEST_STORAGE][1]);
    else
        snprintf (c->p95, sizeof c->p95, "-");
    s_lat_text (c->wd, sizeof c->wd, &tr->sum, SB_KV_LAT_WRITE_DEVICE);
    s_lat_text (c->rd, sizeof c->rd, &tr->sum, SB_KV_LAT_READ_DEVICE);
}

int
sb_kv_report_text (sqlite3 *db, int64_t run_id, FILE *out)
{
    s_fig_t f;
    if (s_figures (db, run_id, &f) != 0)
        return -1;
    const sb_kv_run_t *kv = &f.kv;
    fprintf (out, "\nshardbench kvcache run %lld: option %lld, model %s, %lld users per rank, %g s per trial,"
             " %lld trial(s) asked, %lld rank(s) on %lld host(s), seed %lld\n", (long long) run_id,
             (long long) kv->option, kv->model, (long long) kv->users, kv->duration_s, (long long) kv->trials,
             (long long) kv->accelerators, (long long) kv->hosts, (long long) kv->kv_seed);
    fprintf (out, "  status: %s%s%s\n", kv->status, kv->error ? ": " : "", kv->error ? kv->error : "");
    fprintf (out, "  storage check: %s\n", kv->storage_check);
    fprintf (out, "  %5s %5s %9s %12s %10s %11s %14s %24s %24s\n", "trial", "ranks", "requests", "tokens/s",
             "read GiB/s", "write GiB/s", "storage p95 ms", "write dev p50/p95/p99 ms", "read dev p50/p95/p99 ms");
    for (size_t t = 0; t < f.ntrials; t++) {
        const s_trial_t *tr = &f.trial[t];
        s_cells_t c;
        s_trial_cells (tr, &c);
        fprintf (out, "  %5lld %5zu %9lld %12.2f %10.4f %11.4f %14s %24s %24s\n", (long long) tr->trial,
                 tr->sum.ranks, (long long) tr->sum.requests, tr->tokens_per_s, tr->sum.read_gib_per_s,
                 tr->sum.write_gib_per_s, c.p95, c.wd, c.rd);
    }
    if (f.ntrials) {
        fprintf (out, "  run: storage read %.4f GiB/s, write %.4f GiB/s, %.2f tokens/s (mean over %zu trial(s)),",
                 f.read, f.write, f.tokens, f.ntrials);
        if (f.has_storage_p95)
            fprintf (out, " storage p95 %.3f ms (largest of the ranks')\n", f.storage_p95);
        else
            fprintf (out, " no storage I/O timed\n");
    }
    else
        fprintf (out, "  run: no trial finished\n");
    fprintf (out, "  requests by user type: chatbot %lld, coding %lld, document %lld; by QoS: interactive %lld,"
             " responsive %lld, batch %lld\n", (long long) f.chatbot, (long long) f.coding, (long long) f.document,
             (long long) f.interactive, (long long) f.responsive, (long long) f.batch);
    fprintf (out, "  MLPerf Storage division: %s (%s)\n", f.division, f.why);
    s_fig_free (&f);
    return ferror (out) ? -1 : 0;
}

static void
s_jlat (FILE *out, const char *key, const sb_kv_trial_sum_t *s, int w)
{
    fprintf (out, ", \"%s\": ", key);
    if (!s->lat_has[w]) {
        fputs ("null", out);
        return;
    }
    fputs ("{\"p50\": ", out);
    sb_json_repr (out, s->lat_max[w][0], 0);
    fputs (", \"p95\": ", out);
    sb_json_repr (out, s->lat_max[w][1], 0);
    fputs (", \"p99\": ", out);
    sb_json_repr (out, s->lat_max[w][2], 0);
    fputc ('}', out);
}

int
sb_kv_report_json (sqlite3 *db, int64_t run_id, FILE *out)
{
    s_fig_t f;
    if (s_figures (db, run_id, &f) != 0)
        return -1;
    const sb_kv_run_t *kv = &f.kv;
    fprintf (out, "{\"run_id\": %lld, \"kind\": \"kvcache\", \"option\": %lld, \"model\": ", (long long) run_id,
             (long long) kv->option);
    sb_json_str (out, kv->model);
    fprintf (out, ", \"users\": %lld, \"duration_s\": ", (long long) kv->users);
    sb_json_repr (out, kv->duration_s, 0);
    fprintf (out, ", \"trials_asked\": %lld, \"ranks\": %lld, \"hosts\": %lld, \"seed\": %lld, \"status\": ",
             (long long) kv->trials, (long long) kv->accelerators, (long long) kv->hosts, (long long) kv->kv_seed);
    sb_json_str (out, kv->status);
    fputs (", \"error\": ", out);
    sb_json_str (out, kv->error);
    fputs (", \"storage_check\": ", out);
    sb_json_str (out, kv->storage_check);
    fputs (", \"division\": ", out);
    sb_json_str (out, f.division);
    fputs (", \"division_reason\": ", out);
    sb_json_str (out, f.why);
    fputs (", \"trials\": [", out);
    for (size_t t = 0; t < f.ntrials; t++) {
        const s_trial_t *tr = &f.trial[t];
        fprintf (out, "%s{\"trial\": %lld, \"ranks\": %zu, \"requests\": %lld, \"tokens_per_s\": ", t ? ", " : "",
                 (long long) tr->trial, tr->sum.ranks, (long long) tr->sum.requests);
        sb_json_repr (out, tr->tokens_per_s, 0);
        fputs (", \"read_gib_per_s\": ", out);
        sb_json_repr (out, tr->sum.read_gib_per_s, 0);
        fputs (", \"write_gib_per_s\": ", out);
        sb_json_repr (out, tr->sum.write_gib_per_s, 0);
        fputs (", \"storage_p95_ms\": ", out);
        if (tr->sum.lat_has[SB_KV_LAT_REQUEST_STORAGE])
            sb_json_repr (out, tr->sum.lat_max[SB_KV_LAT_REQUEST_STORAGE][1], 0);
        else
            fputs ("null", out);
        s_jlat (out, "write_device_ms", &tr->sum, SB_KV_LAT_WRITE_DEVICE);
        s_jlat (out, "read_device_ms", &tr->sum, SB_KV_LAT_READ_DEVICE);
        fputc ('}', out);
    }
    fputs ("], \"read_gib_per_s\": ", out);
    sb_json_repr (out, f.read, 0);
    fputs (", \"write_gib_per_s\": ", out);
    sb_json_repr (out, f.write, 0);
    fputs (", \"tokens_per_s\": ", out);
    sb_json_repr (out, f.tokens, 0);
    fputs (", \"storage_p95_ms\": ", out);
    if (f.has_storage_p95)
        sb_json_repr (out, f.storage_p95, 0);
    else
        fputs ("null", out);
    fprintf (out, ", \"requests_by_user_type\": {\"chatbot\": %lld, \"coding\": %lld, \"document\": %lld},"
             " \"requests_by_qos\": {\"interactive\": %lld, \"responsive\": %lld, \"batch\": %lld}}\n",
             (long long) f.chatbot, (long long) f.coding, (long long) f.document, (long long) f.interactive,
             (long long) f.responsive, (long long) f.batch);
    s_fig_free (&f);
    return ferror (out) ? -1 : 0;
}

int
sb_kv_report_html (sqlite3 *db, int64_t run_id, FILE *out)
{
    s_fig_t f;
    if (s_figures (db, run_id, &f) != 0)
        return -1;
    const sb_kv_run_t *kv = &f.kv;
    fprintf (out, "<section class=\"kvcache\">\n<h2>KV cache</h2>\n<p>Option %lld, model ", (long long) kv->option);
    sb_report_html_escape (out, kv->model);
    fprintf (out, ", %lld users per rank, %g s per trial, %lld trial(s) asked, %lld rank(s) on %lld host(s),"
             " seed %lld. Status: ", (long long) kv->users, kv->duration_s, (long long) kv->trials,
             (long long) kv->accelerators, (long long) kv->hosts, (long long) kv->kv_seed);
    sb_report_html_escape (out, kv->status);
    fputs (". Storage check: ", out);
    sb_report_html_escape (out, kv->storage_check);
    fputs (". MLPerf Storage division: ", out);
    sb_report_html_escape (out, f.division);
    fputs (" (", out);
    sb_report_html_escape (out, f.why);
    fputs (").</p>\n<table>\n<tr><th>trial</th><th>ranks</th><th>requests</th><th>tokens/s</th>"
           "<th>read GiB/s</th><th>write GiB/s</th><th>storage p95 ms</th><th>write dev p50/p95/p99 ms</th>"
           "<th>read dev p50/p95/p99 ms</th></tr>\n", out);
    for (size_t t = 0; t < f.ntrials; t++) {
        const s_trial_t *tr = &f.trial[t];
        s_cells_t c;
        s_trial_cells (tr, &c);
        fprintf (out, "<tr><td>%lld</td><td>%zu</td><td>%lld</td><td>%.2f</td><td>%.4f</td><td>%.4f</td>"
                 "<td>%s</td><td>%s</td><td>%s</td></tr>\n", (long long) tr->trial, tr->sum.ranks,
                 (long long) tr->sum.requests, tr->tokens_per_s, tr->sum.read_gib_per_s, tr->sum.write_gib_per_s,
                 c.p95, c.wd, c.rd);
    }
    fputs ("</table>\n", out);
    if (f.ntrials) {
        fprintf (out, "<p>Run: storage read %.4f GiB/s, write %.4f GiB/s, %.2f tokens/s (mean over %zu trial(s))",
                 f.read, f.write, f.tokens, f.ntrials);
        if (f.has_storage_p95)
            fprintf (out, ", storage p95 %.3f ms (largest of the ranks').</p>\n", f.storage_p95);
        else
            fputs (", no storage I/O timed.</p>\n", out);
    }
    fprintf (out, "<p>Requests by user type: chatbot %lld, coding %lld, document %lld; by QoS: interactive %lld,"
             " responsive %lld, batch %lld.</p>\n</section>\n", (long long) f.chatbot, (long long) f.coding,
             (long long) f.document, (long long) f.interactive, (long long) f.responsive, (long long) f.batch);
    s_fig_free (&f);
    return ferror (out) ? -1 : 0;
}

int
sb_kv_report_summary (sqlite3 *db, int64_t run_id, sb_kv_summary_t *s)
{
    memset (s, 0, sizeof *s);
    s_fig_t f;
    char err[1024];
    int found = s_figures_load (db, run_id, &f, err, sizeof err);
    if (found <= 0) {
        if (found < 0)
            fprintf (stderr, "shardbench: %s\n", err);
        return found;
    }
    const sb_kv_run_t *kv = &f.kv;
    snprintf (s->model, sizeof s->model, "%s", kv->model);
    snprintf (s->storage_check, sizeof s->storage_check, "%s", kv->storage_check);
    snprintf (s->division, sizeof s->division, "%s", f.division);
    snprintf (s->division_reason, sizeof s->division_reason, "%s", f.why);
    s->option = kv->option;
    s->users = kv->users;
    s->trials_finished = (int64_t) f.ntrials;
    s->read_gib_per_s = s->write_gib_per_s = s->tokens_per_s = NAN;
    s->storage_p95_ms = s->write_device_p95_ms = s->read_device_p95_ms = NAN;
    if (f.ntrials) {
        s->read_gib_per_s = f.read;
        s->write_gib_per_s = f.write;
        s->tokens_per_s = f.tokens;
    }
    if (f.has_storage_p95)
        s->storage_p95_ms = f.storage_p95;
    for (size_t t = 0; t < f.ntrials; t++) {
        const sb_kv_trial_sum_t *sum = &f.trial[t].sum;
        /* the largest of any rank's p95 in any trial, as storage p95 */
        const double wd = sum->lat_max[SB_KV_LAT_WRITE_DEVICE][1], rd = sum->lat_max[SB_KV_LAT_READ_DEVICE][1];
        if (sum->lat_has[SB_KV_LAT_WRITE_DEVICE] && !(wd <= s->write_device_p95_ms))
            s->write_device_p95_ms = wd;
        if (sum->lat_has[SB_KV_LAT_READ_DEVICE] && !(rd <= s->read_device_p95_ms))
            s->read_device_p95_ms = rd;
        s->requests += sum->requests;
    }
    s->chatbot = f.chatbot;
    s->coding = f.coding;
    s->document = f.document;
    s->interactive = f.interactive;
    s->responsive = f.responsive;
    s->batch = f.batch;
    s_fig_free (&f);
    return 1;
}
