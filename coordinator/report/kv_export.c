/* kv_export: a KV-cache run's CSV views (see kv_export.h). The rows are
 * kv_export_query.h's; only the run view adds figures computed here, from
 * the same loader as the text summary (kv_report.h), so that both agree. */
#include "kv_export.h"
#include "kv_export_query.h"
#include "kv_report.h"
#include "report_query.h"
#include "csv_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char sb_kv_csv_views_text[] = "trials (the default), ranks, latency, run, endpoints";

int
sb_kv_csv_view_own (const char *view)
{
    return !strcmp (view, "trials") || !strcmp (view, "ranks") || !strcmp (view, "latency") || !strcmp (view, "run");
}

int
sb_kv_csv_view_only (const char *view)
{
    return !strcmp (view, "trials") || !strcmp (view, "latency");
}

typedef struct {
    FILE                  *out;
    const sb_kv_summary_t *extra;   /* the run view's computed columns; NULL for the other views */
    int                    have_extra;
} s_csv_t;

static int
s_header (void *ctx, const char *const *names, size_t ncols)
{
    s_csv_t *c = ctx;
    for (size_t i = 0; i < ncols; i++) {
        if (i)
            fputc (',', c->out);
        sb_csv_str (c->out, names[i]);
    }
    if (c->extra)
        fputs (",tokens_per_s,division,division_reason", c->out);
    fputc ('\n', c->out);
    return 0;
}

static int
s_row (void *ctx, const sb_kv_cell_t *cells, size_t ncols)
{
    s_csv_t *c = ctx;
    for (size_t i = 0; i < ncols; i++) {
        if (i)
            fputc (',', c->out);
        const sb_kv_cell_t *x = &cells[i];
        if (x->type == SB_KV_CELL_INT)
            fprintf (c->out, "%lld", (long long) x->i);
        else if (x->type == SB_KV_CELL_REAL)
            sb_csv_num (c->out, x->d);
        else if (x->type == SB_KV_CELL_TEXT)
            sb_csv_str (c->out, x->s);
    }
    if (c->extra) {
        fputc (',', c->out);
        if (c->have_extra) {
            sb_csv_num (c->out, c->extra->tokens_per_s);
            fputc (',', c->out);
            sb_csv_str (c->out, c->extra->division);
            fputc (',', c->out);
            sb_csv_str (c->out, c->extra->division_reason);
        }
        else
            fputs (",,", c->out);   /* no kv_runs row: nothing to judge */
    }
    fputc ('\n', c->out);
    return 0;
}

int
sb_kv_report_csv (sqlite3 *db, int64_t run_id, const char *view, FILE *out)
{
    if (!view)
        view = "trials";
    sb_kv_view_t v = !strcmp (view, "trials") ? SB_KV_VIEW_TRIALS
                   : !strcmp (view, "ranks") ? SB_KV_VIEW_RANKS
                   : !strcmp (view, "latency") ? SB_KV_VIEW_LATENCY
                   : SB_KV_VIEW_RUN;
    sb_kv_summary_t sum;
    s_csv_t c = { .out = NULL, .extra = NULL, .have_extra = 0 };
    if (v == SB_KV_VIEW_RUN) {
        int found = sb_kv_report_summary (db, run_id, &sum);
        if (found < 0)
            return -1;
        c.extra = &sum;
        c.have_extra = found;
    }
    /* into a buffer first, so that a failure half way prints nothing */
    char *text = NULL;
    size_t size = 0;
    c.out = open_memstream (&text, &size);
    if (!c.out) {
        fprintf (stderr, "shardbench report: out of memory\n");
        return -1;
    }
    int rc = sb_kv_export_view (db, run_id, v, s_header, s_row, &c);
    if (fclose (c.out) != 0 || !text) {
        free (text);
        fprintf (stderr, "shardbench report: out of memory\n");
        return -1;
    }
    if (rc != 0) {
        fprintf (stderr, "shardbench report: --csv %s of run %lld: %s\n", view, (long long) run_id,
                 sb_report_error (db));
        free (text);
        return -1;
    }
    fputs (text, out);
    free (text);
    return 0;
}
