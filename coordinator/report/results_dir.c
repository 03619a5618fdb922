/* results_dir: a run as MLPerf Storage's results directory (see
 * results_dir.h). The rows are read through db/results_dir_query.h into a
 * model of the run (s_run_t), then each file is written from it. */
#include "results_dir.h"
#include "config.h"
#include "json_doc.h"
#include "json_out.h"
#include "kv_results_dir.h"
#include "report.h"
#include "results_dir_query.h"
#include "results_leaf.h"
#include "results_stamp.h"
#include "safe_file.h"
#include "sb_version.h"
#include "util.h"
#include "workload.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define S_GIB 1073741824.0

/* ------------------------------------------------------------ rows */

typedef struct {
    sb_rdq_val_t *v;
    int           n;
} s_row_t;

typedef struct {
    s_row_t *rows;
    size_t   n, cap;
} s_rows_t;

static int
s_collect (const sb_rdq_val_t *cols, int n, void *ctx)
{
    s_rows_t *rows = ctx;
    if (rows->n == rows->cap) {
        size_t cap = rows->cap ? 2 * rows->cap : 16;
        s_row_t *grown = realloc (rows->rows, cap * sizeof *grown);
        if (!grown)
            return 2;
        rows->rows = grown;
        rows->cap = cap;
    }
    s_row_t *r = &rows->rows[rows->n];
    r->n = n;
    r->v = calloc ((size_t) (n ? n : 1), sizeof *r->v);
    if (!r->v)
        return 2;
    rows->n++;
    for (int c = 0; c < n; c++) {
        r->v[c] = cols[c];
        if (!(r->v[c].t = strdup (cols[c].t)))
            return 2;
    }
    return 0;
}

static void
s_rows_free (s_rows_t *rows)
{
    for (size_t i = 0; i < rows->n; i++) {
        for (int c = 0; c < rows->rows[i].n; c++)
            free ((char *) rows->rows[i].v[c].t);
        free (rows->rows[i].v);
    }
    free (rows->rows);
    memset (rows, 0, sizeof *rows);
}

static int
s_load (sqlite3 *db, sb_rdq_t which, int64_t id, s_rows_t *rows, char *err, size_t err_size)
{
    int rc = sb_rdq_rows (db, which, id, s_collect, rows, err, err_size);
    if (rc == 2)
        snprintf (err, err_size, "results directory: run %lld: out of memory", (long long) id);
    return rc == 0 ? 0 : -1;
}

/* column c of row r: text, number, null */
#define T(r, c) ((r)->v[c].t)
#define D(r, c) ((r)->v[c].d)
#define I(r, c) ((r)->v[c].i)
#define NUL(r, c) ((r)->v[c].type == SB_RDQ_NULL)

/* ------------------------------------------------------------ the run */

typedef struct {
    int64_t     id;
    s_rows_t    run, inputs, overrides, hostinfo, workers, epochs, evals, rank_epochs, eval_ranks, ckpts, ckpt_ranks,
                errors;
    const s_row_t *r;           /* the runs row */
    sb_config_t *cfg;           /* the full effective configuration */
    sb_results_host_t    *hosts;         /* distinct worker hosts in rank order */
    size_t      nhosts;
    const char **ovr;           /* the overrides, borrowed from `overrides` */
    size_t      novr;
    /* derived */
    int         checkpointing;  /* a checkpoint run: checkpointing/MODEL/TS */
    int         datagen;
    char        model[128], accel[32];
    const char *division, *verification;
    const char *type;           /* training | checkpointing */
    const char *command;        /* run | datagen */
    char        prefix[64];     /* training_run, training_datagen, checkpointing_run */
    char        ts[32];         /* the leaf's name */
    char        leaf[PATH_MAX];
    int         made_leaf;      /* s_make_leaf made leaf (under a root): removed again on failure */
    int         replace;        /* files of these names in the leaf are replaced (--overwrite) */
    int         dlio_only;      /* a leaf given (hydra.run.dir): DLIO's files only, the caller's (mlpstorage's)
                                 * metadata and stdout/stderr logs are the caller's to write */
    int         config_own;     /* the configuration folder's config.yaml, overrides.yaml: this command's */
    char        subdir[256];    /* the configuration folder's name ("": none) */
    const char *submitter, *system, *root;
    char        org[256];       /* the organisation the root's sentinel pins */
    double      record_length;
    uint64_t    files_train, files_eval, samples_per_file;
    double      data_size_per_host_gb;
} s_run_t;

static void
s_run_free (s_run_t *run)
{
    s_rows_t *all[] = { &run->run, &run->inputs, &run->overrides, &run->hostinfo, &run->workers, &run->epochs,
                        &run->evals, &run->rank_epochs, &run->eval_ranks, &run->ckpts, &run->ckpt_ranks,
                        &run->errors };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        s_rows_free (all[i]);
    sb_config_destroy (&run->cfg);
    free (run->hosts);
    free (run->ovr);
}

static uint64_t
s_cfg_u64 (sb_config_t *cfg, const char *key, uint64_t dflt)
{
    const sb_config_entry_t *e = sb_config_get (cfg, key);
    char *end = NULL;
    double v = e && e->value ? strtod (e->value, &end) : 0;
    /* a value past what 64 bits hold (or inf, NaN) is no count: the default */
    return e && e->value && end != e->value && v >= 0 && v < 18446744073709551616.0 ? (uint64_t) v : dflt;
}

static const char *
s_cfg_str (sb_config_t *cfg, const char *key, const char *dflt)
{
    const sb_config_entry_t *e = sb_config_get (cfg, key);
    return e && e->value ? e->value : dflt;
}

int
sb_results_dir_name_ok (const char *name)
{
    if (!name || !*name || !strcmp (name, ".") || !strcmp (name, ".."))
        return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.'
              || *p == '-' || *p == '_'))
            return 0;
    return 1;
}

/* mlpstorage_py's checkpointing models (LLM_ALLOWED_VALUES): processes a
 * data-parallel replica and the closed division's process count. */
static const struct {
    const char *model;
    int64_t     per_dp, closed;
} s_llms[] = { { "llama3-8b", 8, 8 }, { "llama3-70b", 8, 64 }, { "llama3-405b", 256, 512 },
               { "llama3-1t", 512, 1024 } };

/* The model and accelerator mlpstorage would name: a preset MODEL_ACCEL
 * (unet3d_h100) gives both, llama3_8b the model llama3-8b; otherwise the
 * model is model.name with '_' as '-', and llama-SIZE (the name in
 * mlpstorage's own llama3_SIZE.yaml files, run by path) the LLM
 * llama3-SIZE where that is one of mlpstorage's. */
static void
s_model (s_run_t *run)
{
    static const char *const accels[] = { "a100", "h100", "b200", "mi355" };
    const char *wl = T (run->r, 1), *us = strrchr (wl, '_');
    run->accel[0] = '\0';
    int preset = !strchr (wl, '/') && !strstr (wl, ".yaml") && !strstr (wl, ".yml");
    if (preset && !strncmp (wl, "llama3_", 7))
        snprintf (run->model, sizeof run->model, "llama3-%s", wl + 7);
    else {
        int known = 0;
        for (size_t i = 0; preset && us && i < sizeof accels / sizeof accels[0]; i++)
            known |= !strcmp (us + 1, accels[i]);
        if (known) {
            snprintf (run->model, sizeof run->model, "%.*s", (int) (us - wl), wl);
            snprintf (run->accel, sizeof run->accel, "%s", us + 1);
        }
        else {
            snprintf (run->model, sizeof run->model, "%s", s_cfg_str (run->cfg, "model.name", "custom"));
            for (char *p = run->model; *p; p++)
                if (*p == '_')
                    *p = '-';
            for (size_t i = 0; !strncmp (run->model, "llama-", 6) && i < sizeof s_llms / sizeof s_llms[0]; i++)
                if (!strcmp (run->model + 6, s_llms[i].model + 7)) {
                    snprintf (run->model, sizeof run->model, "%s", s_llms[i].model);
                    break;
                }
        }
    }
    sb_results_leaf_segment (run->model);
}

/* An override's key without '+' and "workload.", into key. */
static void
s_override_key (const char *o, char *key, size_t size)
{
    o += strspn (o, "+");
    if (!strncmp (o, "workload.", 9))
        o += 9;
    const char *eq = strchr (o, '=');
    snprintf (key, size, "%.*s", eq ? (int) (eq - o) : (int) strlen (o), o);
}

const char *
sb_results_dir_division (const char *const *overrides, size_t n)
{
    /* mlpstorage_py rules/run_checkers/training.py: TOOL_INJECTED_PARAMS and
     * CLOSED_ALLOWED_PARAMS (CLOSED), OPEN_ALLOWED_PARAMS (OPEN) */
    static const char *const closed[] = {
        "dataset.skip_listing", "dataset.listing_validation_interval", "dataset.num_files_generated",
        "dataset.data_folder", "storage.storage_type", "storage.storage_root",
        "storage.storage_options.storage_library", "storage.storage_options.uri_scheme",
        "storage.s3_force_path_style", "dataset.total_disk_bytes", "dataset.num_files_train",
        "dataset.num_subfolders_train", "reader.read_threads", "reader.computation_threads", "reader.transfer_size",
        "reader.odirect", "reader.prefetch_size", "checkpoint.checkpoint_folder",
        "storage.storage_options.prefetch_window", NULL };
    static const char *const open[] = { "framework", "dataset.format", "dataset.num_samples_per_file",
                                        "reader.data_loader", NULL };
    int worst = 0;  /* 0 closed, 1 open, 2 invalid */
    for (size_t i = 0; i < n; i++) {
        char key[512];
        s_override_key (overrides[i], key, sizeof key);
        if (!strncmp (key, "workflow", 8))
            continue;
        int level = 2;
        for (const char *const *k = closed; level == 2 && *k; k++)
            if (!strcmp (key, *k))
                level = 0;
        for (const char *const *k = open; level == 2 && *k; k++)
            if (!strcmp (key, *k))
                level = 1;
        if (level > worst)
            worst = level;
    }
    return worst == 0 ? "closed" : worst == 1 ? "open" : "invalid";
}

const char *
sb_results_dir_ckpt_division (const char *model, int64_t processes)
{
    for (size_t i = 0; i < sizeof s_llms / sizeof s_llms[0]; i++)
        if (!strcmp (model, s_llms[i].model))
            return processes == s_llms[i].closed ? "closed"
                 : processes > 0 && processes % s_llms[i].per_dp == 0 ? "open" : "invalid";
    return "invalid";   /* check_model: not an LLM */
}

static const s_row_t *s_host_info (const s_run_t *run, const char *host);

static int
s_load_run (sqlite3 *db, int64_t id, const sb_results_dir_opts_t *opts, s_run_t *run, char *err, size_t err_size)
{
    run->id = id;
    if (s_load (db, SB_RDQ_RUN, id, &run->run, err, err_size) != 0)
        return -1;
    if (run->run.n == 0) {
        snprintf (err, err_size, "run %lld does not exist", (long long) id);
        return -1;
    }
    run->r = &run->run.rows[0];
    if (!strcmp (T (run->r, 3), "running")) {
        snprintf (err, err_size, "run %lld is still running", (long long) id);
        return -1;
    }
    struct { sb_rdq_t q; s_rows_t *rows; } loads[] = {
        { SB_RDQ_INPUTS, &run->inputs }, { SB_RDQ_OVERRIDES, &run->overrides }, { SB_RDQ_HOST_INFO, &run->hostinfo },
        { SB_RDQ_WORKERS, &run->workers }, { SB_RDQ_EPOCHS, &run->epochs }, { SB_RDQ_EVALS, &run->evals },
        { SB_RDQ_RANK_EPOCHS, &run->rank_epochs }, { SB_RDQ_EVAL_RANKS, &run->eval_ranks },
        { SB_RDQ_CHECKPOINTS, &run->ckpts }, { SB_RDQ_CKPT_RANKS, &run->ckpt_ranks }, { SB_RDQ_ERRORS, &run->errors },
    };
    for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++)
        if (s_load (db, loads[i].q, id, loads[i].rows, err, err_size) != 0)
            return -1;
    /* the full configuration: stored (schema 13), else runs.config with the defaults */
    const char *yaml = run->inputs.n ? T (&run->inputs.rows[0], 2) : T (run->r, 2);
    char cerr[1024];
    if (!(run->cfg = sb_config_new ()) || sb_config_load_string (run->cfg, yaml, "runs.config", cerr, sizeof cerr) != 0
        || sb_workload_add_defaults (run->cfg) < 0) {
        snprintf (err, err_size, "run %lld: its configuration does not parse: %s", (long long) id,
                  run->cfg ? cerr : "out of memory");
        return -1;
    }
    /* hosts in rank order */
    run->hosts = calloc (run->workers.n + 1, sizeof *run->hosts);
    run->ovr = calloc (run->overrides.n + 1, sizeof *run->ovr);
    if (!run->hosts || !run->ovr) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < run->workers.n; i++) {
        const s_row_t *w = &run->workers.rows[i];
        size_t h = 0;
        while (h < run->nhosts && strcmp (run->hosts[h].host, T (w, 0)) != 0)
            h++;
        if (h == run->nhosts)
            run->hosts[run->nhosts++] = (sb_results_host_t) { .host = T (w, 0), .cores = I (w, 3),
                                                              .memory = I (w, 4) };
    }
    for (size_t h = 0; h < run->nhosts; h++) {
        const s_row_t *hi = s_host_info (run, run->hosts[h].host);
        run->hosts[h].processor = hi ? T (hi, 1) : NULL;
    }
    for (size_t i = 0; i < run->overrides.n; i++)
        run->ovr[run->novr++] = T (&run->overrides.rows[i], 0);
    /* what the run is */
    const char *kind = T (run->r, 0);
    run->checkpointing = !strcmp (kind, "checkpoint");
    run->datagen = !strcmp (kind, "datagen");
    run->type = run->checkpointing ? "checkpointing" : "training";
    run->command = run->datagen ? "datagen" : "run";
    snprintf (run->prefix, sizeof run->prefix, "%s_%s", run->type, run->command);
    s_model (run);
    run->verification = run->checkpointing ? sb_results_dir_ckpt_division (run->model, I (run->r, 7))
                                           : sb_results_dir_division (run->ovr, run->novr);
    run->division = !strcmp (run->verification, "closed") ? "closed" : "open";
    if (sb_results_leaf_submitter (opts, run->org, sizeof run->org, &run->submitter, err, err_size) != 0)
        return -1;
    run->system = opts->system ? opts->system : T (run->r, 9);
    run->root = opts->root;
    run->record_length = !NUL (run->r, 10) ? D (run->r, 10)
                       : (double) s_cfg_u64 (run->cfg, "dataset.record_length_bytes", 65536);
    run->files_train = s_cfg_u64 (run->cfg, "dataset.num_files_train", 0);
    run->files_eval = s_cfg_u64 (run->cfg, "dataset.num_files_eval", 0);
    run->samples_per_file = s_cfg_u64 (run->cfg, "dataset.num_samples_per_file", 1);
    /* DLIO: npernode x samples per file x files // ranks x record length / 2^30 */
    int64_t ranks = I (run->r, 7), nhosts = run->nhosts ? (int64_t) run->nhosts : 1;
    uint64_t per_host = ranks > 0 ? (uint64_t) (ranks / nhosts) * run->samples_per_file * run->files_train
                                        / (uint64_t) ranks : 0;
    run->data_size_per_host_gb = (double) per_host * run->record_length / S_GIB;
    return 0;
}

/* ------------------------------------------------------------ JSON */

/* column c of row r as a JSON number, or null */
static void
s_jcol (sb_jdoc_t *j, const char *key, const s_row_t *r, int c)
{
    if (NUL (r, c))
        sb_jdoc_raw (j, key, "null");
    else
        sb_jdoc_num (j, key, D (r, c));
}

/* A YAML scalar as JSON: true/false, null, a number, else a string. */
static void
s_jscalar (sb_jdoc_t *j, const char *key, const char *v)
{
    if (!strcmp (v, "true") || !strcmp (v, "True"))
        sb_jdoc_raw (j, key, "true");
    else if (!strcmp (v, "false") || !strcmp (v, "False"))
        sb_jdoc_raw (j, key, "false");
    else if (!strcmp (v, "null") || !strcmp (v, "~") || !strcmp (v, "None"))
        sb_jdoc_raw (j, key, "null");
    else {
        /* JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
        const char *p = v + (*v == '-');
        int ok = *p >= '0' && *p <= '9' && !(p[0] == '0' && p[1] >= '0' && p[1] <= '9');
        while (ok && *p >= '0' && *p <= '9')
            p++;
        if (ok && *p == '.') {
            ok = p[1] >= '0' && p[1] <= '9';
            for (p++; *p >= '0' && *p <= '9'; p++)
                ;
        }
        if (ok && (*p == 'e' || *p == 'E')) {
            p += 1 + (p[1] == '+' || p[1] == '-');
            ok = *p >= '0' && *p <= '9';
            while (*p >= '0' && *p <= '9')
                p++;
        }
        if (ok && !*p)
            sb_jdoc_raw (j, key, v);
        else
            sb_jdoc_str (j, key, v);
    }
}

static int
s_entry_cmp (const void *a, const void *b)
{
    return strcmp ((*(const sb_config_entry_t *const *) a)->key, (*(const sb_config_entry_t *const *) b)->key);
}

/* The configuration as nested JSON objects (DLIO's workload section). */
static int
s_jconfig (sb_jdoc_t *j, const char *key, sb_config_t *cfg)
{
    size_t n = sb_config_count (cfg);
    const sb_config_entry_t **e = malloc ((n ? n : 1) * sizeof *e);
    if (!e)
        return -1;
    for (size_t i = 0; i < n; i++)
        e[i] = sb_config_at (cfg, i);
    qsort (e, n, sizeof *e, s_entry_cmp);
    sb_jdoc_open (j, key, '{');
    const char *prev = NULL;
    int levels = 0;     /* sections of prev open */
    for (size_t i = 0; i < n; i++) {
        const char *k = e[i]->key, *seg = k;
        /* the sections k shares with prev stay open, the others close */
        int shared = 0;
        for (const char *a = prev, *b = k; a && shared < levels; shared++) {
            const char *da = strchr (a, '.'), *db = strchr (b, '.');
            if (!da || !db || da - a != db - b || strncmp (a, b, (size_t) (da - a)) != 0)
                break;
            a = da + 1;
            b = db + 1;
        }
        for (; levels > shared; levels--)
            sb_jdoc_close (j, '}');
        for (int d = 0; d < shared; d++)
            seg = strchr (seg, '.') + 1;
        /* a section per segment while the writer's depth allows (SB_JDOC_DEPTH);
         * deeper segments stay in the member's name, dots and all */
        for (const char *dot; j->depth < SB_JDOC_DEPTH - 2 && (dot = strchr (seg, '.')); seg = dot + 1, levels++) {
            char name[256];
            snprintf (name, sizeof name, "%.*s", (int) (dot - seg), seg);
            sb_jdoc_open (j, name, '{');
        }
        prev = k;
        if (e[i]->items) {
            sb_jdoc_open (j, seg, '[');
            for (size_t t = 0; e[i]->items[t]; t++)
                s_jscalar (j, NULL, e[i]->items[t]);
            sb_jdoc_close (j, ']');
        }
        else
            s_jscalar (j, seg, e[i]->value ? e[i]->value : "");
    }
    for (; levels > 0; levels--)
        sb_jdoc_close (j, '}');
    sb_jdoc_close (j, '}');
    free (e);
    return 0;
}

/* /proc/cpuinfo or /proc/meminfo text as a JSON object of "key: value"
 * lines, trimmed; a key seen again takes the later value at the first
 * place (a Python dict), keys named skip left out. As DLIO's lines_to_dict,
 * only a line with exactly one ':' counts. */
static void
s_jproc (sb_jdoc_t *j, const char *key, const char *text, const char *skip)
{
    enum { S_MAX = 512 };
    char *k[S_MAX], *v[S_MAX];
    size_t n = 0;
    char *copy = strdup (text ? text : "");
    if (!copy && j->failed)
        *j->failed = 1;
    for (char *save = NULL, *line = copy ? strtok_r (copy, "\n", &save) : NULL; line;
         line = strtok_r (NULL, "\n", &save)) {
        char *colon = strchr (line, ':');
        if (!colon || strchr (colon + 1, ':'))
            continue;
        char *end = colon;
        while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        *end = '\0';
        char *val = colon + 1;
        val += strspn (val, " \t");
        for (char *e = val + strlen (val); e > val && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'); e--)
            e[-1] = '\0';
        if (!*line || (skip && !strcmp (line, skip)))
            continue;
        size_t i = 0;
        while (i < n && strcmp (k[i], line) != 0)
            i++;
        if (i == n && n == S_MAX)
            continue;
        k[i] = line;
        v[i] = val;
        n += i == n;
    }
    sb_jdoc_open (j, key, '{');
    for (size_t i = 0; i < n; i++)
        sb_jdoc_str (j, k[i], v[i]);
    sb_jdoc_close (j, '}');
    free (copy);
}

/* ------------------------------------------------------------ files */

typedef struct {
    sb_safe_file_t sf;
    FILE          *f;       /* sf.f */
    int           *failed;  /* &sf.failed: a part was not written (out of memory), the file is dropped */
} s_out_t;

/* The temporary of dir/name (safe_file.h: never through a link, never over
 * a file there), replacing a file of that name when replace. */
static int
s_out_open (s_out_t *o, const char *dir, const char *name, int replace, char *err, size_t err_size)
{
    if (sb_safe_file_open (&o->sf, dir, name, replace, err, err_size) != 0)
        return -1;
    o->f = o->sf.f;
    o->failed = &o->sf.failed;
    return 0;
}

static int
s_out_commit (s_out_t *o, char *err, size_t err_size)
{
    return sb_safe_file_commit (&o->sf, err, err_size);
}

/* DLIO's timestamp (utcnow(): local time despite the name), microseconds. */
static const char *
s_ts_dlio (double t, char *buf, size_t size)
{
    double whole = floor (t);
    long us = lround ((t - whole) * 1e6);
    if (us >= 1000000) {
        whole += 1;
        us -= 1000000;
    }
    time_t s = (time_t) whole;
    struct tm tm;
    localtime_r (&s, &tm);
    char head[32];
    strftime (head, sizeof head, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf (buf, size, "%s.%06ld", head, us);
    return buf;
}

static double
s_end_time (const s_run_t *run)
{
    return NUL (run->r, 6) ? D (run->r, 5) : D (run->r, 6);
}

static const s_row_t *
s_host_info (const s_run_t *run, const char *host)
{
    for (size_t i = 0; i < run->hostinfo.n; i++)
        if (!strcmp (T (&run->hostinfo.rows[i], 0), host))
            return &run->hostinfo.rows[i];
    return NULL;
}

/* The host of rank r ("" when no worker row holds it). */
static const char *
s_rank_host (const s_run_t *run, int64_t r)
{
    for (size_t i = 0; i < run->workers.n; i++) {
        const s_row_t *w = &run->workers.rows[i];
        if (r >= I (w, 2) && r < I (w, 2) + I (w, 1))
            return T (w, 0);
    }
    return "";
}

static const sb_results_host_t *
s_host (const s_run_t *run, const char *host)
{
    for (size_t i = 0; i < run->nhosts; i++)
        if (!strcmp (run->hosts[i].host, host))
            return &run->hosts[i];
    return NULL;
}

static void
s_mean_std (const double *v, size_t n, double *mean, double *std)
{
    double s = 0, q = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    *mean = n ? s / (double) n : 0;
    for (size_t i = 0; i < n; i++)
        q += (v[i] - *mean) * (v[i] - *mean);
    *std = n ? sqrt (q / (double) n) : 0;
}

/* The checkpoint figures of DLIO's summary (save_/load_checkpoint_*) over
 * the checkpoints rows of op ("write" or "read"): GiB/s and seconds. */
static void
s_jckpt (sb_jdoc_t *j, const s_run_t *run, const char *op, const char *name)
{
    size_t n = 0;
    double *gib = calloc (run->ckpts.n + 1, sizeof *gib), *dur = calloc (run->ckpts.n + 1, sizeof *dur);
    if (!gib || !dur) {
        free (gib);
        free (dur);
        if (j->failed)
            *j->failed = 1;
        return;
    }
    for (size_t i = 0; i < run->ckpts.n; i++) {
        const s_row_t *c = &run->ckpts.rows[i];
        if (strcmp (T (c, 1), op) != 0)
            continue;
        gib[n] = D (c, 5);
        dur[n++] = D (c, 4);
    }
    if (n) {
        char key[96];
        double m, s;
        s_mean_std (gib, n, &m, &s);
        snprintf (key, sizeof key, "%s_checkpoint_io_mean_GB_per_second", name);
        sb_jdoc_num (j, key, m);
        snprintf (key, sizeof key, "%s_checkpoint_io_stdev_GB_per_second", name);
        sb_jdoc_num (j, key, s);
        s_mean_std (dur, n, &m, &s);
        snprintf (key, sizeof key, "%s_checkpoint_duration_mean_seconds", name);
        sb_jdoc_num (j, key, m);
        snprintf (key, sizeof key, "%s_checkpoint_duration_stdev_seconds", name);
        sb_jdoc_num (j, key, s);
    }
    free (gib);
    free (dur);
}

/* DLIO's metric object; lists_only: only the list-valued keys (what
 * mlpstorage's reportgen keeps as a run's metrics). */
static void
s_jmetric (sb_jdoc_t *j, const char *key, const s_run_t *run, int lists_only)
{
    sb_jdoc_open (j, key, '{');
    const s_row_t *r = run->r;
    static const char *const names[] = { "au_percentage", "au_mean_percentage", "au_meet_expectation",
                                         "au_stdev_percentage", "throughput_samples_per_second",
                                         "throughput_mean_samples_per_second", "throughput_stdev_samples_per_second",
                                         "io_mean_MB_per_second", "io_stdev_MB_per_second" };
    /* runs columns of train_* (13..19) and eval_* (20..26) in names' order less the lists */
    for (int eval = 0; eval < 2 && !strcmp (T (r, 0), "train"); eval++) {
        const s_rows_t *rows = eval ? &run->evals : &run->epochs;
        if (eval && rows->n == 0)
            break;
        int base = eval ? 20 : 13;
        int col[] = { -1, base, base + 2, base + 1, -2, base + 3, base + 4, base + 5, base + 6 };
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            char name[96];
            snprintf (name, sizeof name, "%s_%s", eval ? "eval" : "train", names[k]);
            if (col[k] < 0) {
                sb_jdoc_open (j, name, '[');
                for (size_t e = 0; e < rows->n; e++)
                    s_jcol (j, NULL, &rows->rows[e], col[k] == -1 ? 1 : 2);
                sb_jdoc_close (j, ']');
            }
            else if (lists_only)
                continue;
            else if (k == 2)
                /* a run that did not succeed never meets it, whatever its
                 * finished epochs gave (DLIO writes no summary then) */
                sb_jdoc_str (j, name, strcmp (T (r, 3), "succeeded") ? "fail" : NUL (r, col[k]) ? NULL : T (r, col[k]));
            else
                s_jcol (j, name, r, col[k]);
        }
    }
    if (!lists_only && run->ckpts.n) {
        s_jckpt (j, run, "write", "save");
        s_jckpt (j, run, "read", "load");
        for (size_t i = 0; i < run->ckpts.n; i++)
            if (!strcmp (T (&run->ckpts.rows[i], 1), "write")) {
                sb_jdoc_num (j, "checkpoint_size_GB", D (&run->ckpts.rows[i], 3) / S_GIB);
                break;
            }
    }
    sb_jdoc_close (j, '}');
}

static int
s_write_summary (const s_run_t *run, char *err, size_t err_size)
{
    s_out_t o;
    if (s_out_open (&o, run->leaf, "summary.json", run->replace, err, err_size) != 0)
        return -1;
    sb_jdoc_t j = { .f = o.f, .indent = 4, .failed = o.failed };
    char ts[64];
    const char *host0 = run->nhosts ? run->hosts[0].host : T (run->r, 9);
    const s_row_t *hi = s_host_info (run, host0);
    sb_jdoc_open (&j, NULL, '{');
    sb_jdoc_str (&j, "start", s_ts_dlio (D (run->r, 5), ts, sizeof ts));
    sb_jdoc_int (&j, "num_accelerators", I (run->r, 7));
    sb_jdoc_int (&j, "num_hosts", I (run->r, 8));
    sb_jdoc_str (&j, "hostname", host0);
    s_jmetric (&j, "metric", run, 0);
    sb_jdoc_int (&j, "num_files_train", (int64_t) run->files_train);
    sb_jdoc_int (&j, "num_files_eval", (int64_t) run->files_eval);
    sb_jdoc_int (&j, "num_samples_per_file", (int64_t) run->samples_per_file);
    sb_jdoc_open (&j, "host_cpu_count", '[');
    for (size_t h = 0; h < run->nhosts; h++)
        sb_jdoc_int (&j, NULL, run->hosts[h].cores);
    sb_jdoc_close (&j, ']');
    sb_jdoc_str (&j, "host_processor_name", hi ? T (hi, 1) : "");
    sb_jdoc_open (&j, "potential_caching", '[');
    for (size_t h = 0; h < run->nhosts; h++)
        sb_jdoc_int (&j, NULL, (double) run->hosts[h].memory / S_GIB > run->data_size_per_host_gb);
    sb_jdoc_close (&j, ']');
    s_jproc (&j, "host_cpuinfo", hi ? T (hi, 2) : "", "processor");
    s_jproc (&j, "host_meminfo", hi ? T (hi, 3) : "", NULL);
    sb_jdoc_open (&j, "host_memory_GB", '[');
    for (size_t h = 0; h < run->nhosts; h++)
        sb_jdoc_num (&j, NULL, (double) run->hosts[h].memory / S_GIB);
    sb_jdoc_close (&j, ']');
    sb_jdoc_num (&j, "data_size_per_host_GB", run->data_size_per_host_gb);
    if (!run->datagen)
        sb_jdoc_int (&j, "epochs", (int64_t) run->epochs.n);
    sb_jdoc_str (&j, "end", s_ts_dlio (s_end_time (run), ts, sizeof ts));
    sb_jdoc_close (&j, '}');
    fputc ('\n', o.f);
    return s_out_commit (&o, err, err_size);
}

static void
s_jspan (sb_jdoc_t *j, const char *key, double start, double end, int duration_text)
{
    char ts[64];
    sb_jdoc_open (j, key, '{');
    sb_jdoc_str (j, "start", s_ts_dlio (start, ts, sizeof ts));
    sb_jdoc_str (j, "end", s_ts_dlio (end, ts, sizeof ts));
    if (duration_text) {
        char d[64];
        snprintf (d, sizeof d, "%.2f", end - start);
        sb_jdoc_str (j, "duration", d);
    }
}

/* RANK_per_epoch_stats.json and RANK_output.json of every rank. */
static int
s_write_ranks (const s_run_t *run, char *err, size_t err_size)
{
    char ts[64];
    for (int64_t rank = 0; rank < I (run->r, 7); rank++) {
        char name[64];
        s_out_t o;
        snprintf (name, sizeof name, "%lld_per_epoch_stats.json", (long long) rank);
        if (s_out_open (&o, run->leaf, name, run->replace, err, err_size) != 0)
            return -1;
        sb_jdoc_t j = { .f = o.f, .indent = 4, .failed = o.failed };
        sb_jdoc_open (&j, NULL, '{');
        if (!run->datagen)
            for (size_t i = 0; i < run->rank_epochs.n; i++) {
                const s_row_t *re = &run->rank_epochs.rows[i];
                if (I (re, 0) != rank || I (re, 1) < 1)
                    continue;
                char epoch[32];
                snprintf (epoch, sizeof epoch, "%lld", (long long) I (re, 1));
                s_jspan (&j, epoch, D (re, 3), D (re, 4), 1);
                s_jspan (&j, "block1", D (re, 3), D (re, 4), 1);
                sb_jdoc_close (&j, '}');
                for (size_t e = 0; e < run->eval_ranks.n; e++) {
                    const s_row_t *er = &run->eval_ranks.rows[e];
                    if (I (er, 0) == rank && I (er, 1) == I (re, 1)) {
                        s_jspan (&j, "eval", D (er, 2), D (er, 3), 1);
                        sb_jdoc_close (&j, '}');
                    }
                }
                sb_jdoc_close (&j, '}');
            }
        /* a checkpoint run's checkpoints, as DLIO's checkpoint-only runs keep them in epoch 1 */
        int opened = 0;
        for (size_t i = 0; run->checkpointing && i < run->ckpt_ranks.n; i++) {
            const s_row_t *c = &run->ckpt_ranks.rows[i];
            if (I (c, 0) != rank)
                continue;
            if (!opened++) {
                double first = D (c, 4), last = D (c, 5);
                for (size_t k = i; k < run->ckpt_ranks.n; k++)
                    if (I (&run->ckpt_ranks.rows[k], 0) == rank)
                        last = D (&run->ckpt_ranks.rows[k], 5) > last ? D (&run->ckpt_ranks.rows[k], 5) : last;
                s_jspan (&j, "1", first, last, 0);
            }
            char key[64];
            snprintf (key, sizeof key, "%s_ckpt%lld", strcmp (T (c, 2), "write") ? "load" : "save",
                      (long long) I (c, 3));
            s_jspan (&j, key, D (c, 4), D (c, 5), 0);
            sb_jdoc_num (&j, "duration", D (c, 6));
            sb_jdoc_num (&j, "throughput", D (c, 6) > 0 ? D (c, 7) / S_GIB / D (c, 6) : 0);
            sb_jdoc_close (&j, '}');
        }
        if (opened)
            sb_jdoc_close (&j, '}');
        sb_jdoc_close (&j, '}');
        fputc ('\n', o.f);
        if (s_out_commit (&o, err, err_size) != 0)
            return -1;

        snprintf (name, sizeof name, "%lld_output.json", (long long) rank);
        if (s_out_open (&o, run->leaf, name, run->replace, err, err_size) != 0)
            return -1;
        j = (sb_jdoc_t) { .f = o.f, .indent = 4, .failed = o.failed };
        const char *host = s_rank_host (run, rank);
        const sb_results_host_t *h = s_host (run, host);
        const s_row_t *hi = s_host_info (run, host);
        sb_jdoc_open (&j, NULL, '{');
        sb_jdoc_num (&j, "host_memory_GB", h ? (double) h->memory / S_GIB : 0);
        sb_jdoc_int (&j, "host_cpu_count", h ? h->cores : 0);
        sb_jdoc_str (&j, "host_processor_name", hi ? T (hi, 1) : "");
        sb_jdoc_int (&j, "potential_caching", h && (double) h->memory / S_GIB > run->data_size_per_host_gb);
        s_jproc (&j, "host_cpuinfo", hi ? T (hi, 2) : "", "processor");
        s_jproc (&j, "host_meminfo", hi ? T (hi, 3) : "", NULL);
        for (size_t i = 0; !run->datagen && i < run->rank_epochs.n; i++) {
            const s_row_t *re = &run->rank_epochs.rows[i];
            if (I (re, 0) != rank || I (re, 1) < 1)
                continue;
            char epoch[32];
            snprintf (epoch, sizeof epoch, "%lld", (long long) I (re, 1));
            sb_jdoc_open (&j, epoch, '{');
            sb_jdoc_str (&j, "start", s_ts_dlio (D (re, 3), ts, sizeof ts));
            sb_jdoc_str (&j, "end", s_ts_dlio (D (re, 4), ts, sizeof ts));
            sb_jdoc_open (&j, "throughput", '{');
            s_jcol (&j, "block1", re, 6);
            sb_jdoc_close (&j, '}');
            sb_jdoc_open (&j, "au", '{');
            s_jcol (&j, "block1", re, 5);
            sb_jdoc_close (&j, '}');
            sb_jdoc_close (&j, '}');
        }
        sb_jdoc_str (&j, "hostname", host);
        sb_jdoc_close (&j, '}');
        fputc ('\n', o.f);
        if (s_out_commit (&o, err, err_size) != 0)
            return -1;
    }
    return 0;
}

static int
s_write_metadata (const s_run_t *run, char *err, size_t err_size)
{
    char name[128], ts[64];
    snprintf (name, sizeof name, "%s_%s_metadata.json", run->type, run->ts);
    s_out_t o;
    if (s_out_open (&o, run->leaf, name, run->replace, err, err_size) != 0)
        return -1;
    sb_jdoc_t j = { .f = o.f, .indent = 2, .failed = o.failed };
    const char *cmdline = run->inputs.n ? T (&run->inputs.rows[0], 1) : "";
    sb_jdoc_open (&j, NULL, '{');
    sb_jdoc_str (&j, "benchmark_type", run->type);
    sb_jdoc_str (&j, "model", run->model);
    sb_jdoc_str (&j, "command", run->command);
    sb_jdoc_str (&j, "run_datetime", run->ts);
    sb_jdoc_int (&j, "num_processes", I (run->r, 7));
    sb_jdoc_str (&j, "accelerator", run->accel[0] ? run->accel : NULL);
    sb_jdoc_str (&j, "result_dir", run->leaf);
    if (s_jconfig (&j, "parameters", run->cfg) != 0) {
        sb_safe_file_abort (&o.sf);
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    sb_jdoc_open (&j, "override_parameters", '{');
    for (size_t i = 0; i < run->novr; i++) {
        char key[512];
        s_override_key (run->ovr[i], key, sizeof key);
        const char *eq = strchr (run->ovr[i], '=');
        sb_jdoc_str (&j, key, eq ? eq + 1 : "");
    }
    sb_jdoc_close (&j, '}');
    /* the hosts as mlpstorage's ClusterInformation describes them */
    int64_t min_mem = sb_results_leaf_system_info (&j, run->hosts, run->nhosts);
    sb_jdoc_num (&j, "runtime", s_end_time (run) - D (run->r, 5));
    sb_jdoc_str (&j, "verification", run->verification);
    sb_jdoc_str (&j, "executed_command", cmdline);
    char out[PATH_MAX + 64];
    sb_jdoc_open (&j, "command_output_files", '[');
    sb_jdoc_open (&j, NULL, '{');
    sb_jdoc_str (&j, "command", cmdline);
    snprintf (out, sizeof out, "%s/%s.stdout.log", run->leaf, run->prefix);
    sb_jdoc_str (&j, "stdout", out);
    snprintf (out, sizeof out, "%s/%s.stderr.log", run->leaf, run->prefix);
    sb_jdoc_str (&j, "stderr", out);
    sb_jdoc_close (&j, '}');
    sb_jdoc_close (&j, ']');
    sb_jdoc_open (&j, "args", '{');
    sb_jdoc_str (&j, "program", run->type);
    sb_jdoc_str (&j, "command", run->command);
    sb_jdoc_str (&j, "model", run->model);
    sb_jdoc_str (&j, "accelerator_type", run->accel[0] ? run->accel : NULL);
    sb_jdoc_int (&j, "num_processes", I (run->r, 7));
    sb_jdoc_open (&j, "hosts", '[');
    for (size_t h = 0; h < run->nhosts; h++)
        sb_jdoc_str (&j, NULL, run->hosts[h].host);
    sb_jdoc_close (&j, ']');
    sb_jdoc_num (&j, "client_host_memory_in_gb", (double) min_mem / S_GIB);
    sb_jdoc_str (&j, "data_dir", s_cfg_str (run->cfg, "dataset.data_folder", ""));
    sb_jdoc_str (&j, "checkpoint_folder", s_cfg_str (run->cfg, "checkpoint.checkpoint_folder", ""));
    sb_jdoc_str (&j, "results_dir", run->root ? run->root : run->leaf);
    sb_jdoc_raw (&j, "closed", !strcmp (run->division, "closed") ? "true" : "false");
    sb_jdoc_int (&j, "loops", 1);
    sb_jdoc_str (&j, "mode", run->division);
    sb_jdoc_str (&j, "orgname", run->submitter);
    sb_jdoc_str (&j, "systemname", run->system);
    sb_jdoc_close (&j, '}');
    sb_jdoc_str (&j, "end_datetime", s_ts_dlio (s_end_time (run), ts, sizeof ts));
    s_jmetric (&j, "metrics", run, 1);
    /* provenance.py METADATA_PROVENANCE_KEY: the leaf has the sidecar, and
     * the checker's PROV-01 then requires it */
    sb_jdoc_str (&j, "provenance_file", SB_RESULTS_PROVENANCE);
    sb_jdoc_open (&j, "shardbench", '{');
    sb_jdoc_int (&j, "run_id", run->id);
    sb_jdoc_str (&j, "version", run->inputs.n ? T (&run->inputs.rows[0], 0) : NULL);
    sb_jdoc_str (&j, "kind", T (run->r, 0));
    sb_jdoc_str (&j, "workload", T (run->r, 1));
    sb_jdoc_str (&j, "workflow", NUL (run->r, 12) ? NULL : T (run->r, 12));
    sb_jdoc_str (&j, "status", T (run->r, 3));
    sb_jdoc_str (&j, "error", NUL (run->r, 4) ? NULL : T (run->r, 4));
    sb_jdoc_open (&j, "overrides", '[');
    for (size_t i = 0; i < run->novr; i++)
        sb_jdoc_str (&j, NULL, run->ovr[i]);
    sb_jdoc_close (&j, ']');
    sb_jdoc_close (&j, '}');
    sb_jdoc_close (&j, '}');
    fputc ('\n', o.f);
    return s_out_commit (&o, err, err_size);
}

/* A YAML single-quoted scalar ('' for a quote). */
static void
s_yquote (FILE *f, const char *s)
{
    /* single-quoted YAML keeps every printable character as it is (a
     * quote doubled); a line break or another control character, or bytes
     * that are no UTF-8, need a double-quoted scalar: JSON's escapes are
     * YAML's there */
    int plain = sb_utf8_valid (s);
    for (const unsigned char *p = (const unsigned char *) s; plain && *p; p++)
        plain = *p >= 0x20 && *p != 0x7f;
    if (!plain) {
        sb_json_str (f, s);
        return;
    }
    fputc ('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc ('\'', f);
        fputc (*s, f);
    }
    fputc ('\'', f);
}

/* The task overrides as DLIO would have been given them: workload=PRESET
 * (when the workload is a preset, not a file), then ++workload.KEY=VALUE. */
static int
s_task_list (FILE *f, const s_run_t *run, const char *indent)
{
    const char *wl = T (run->r, 1);
    int items = 0;
    if (!strchr (wl, '/') && !strstr (wl, ".yaml") && !strstr (wl, ".yml")) {
        fprintf (f, "%s- ", indent);
        char w[512];
        snprintf (w, sizeof w, "workload=%s", wl);
        s_yquote (f, w);
        fputc ('\n', f);
        items++;
    }
    for (size_t i = 0; i < run->novr; i++) {
        const char *o = run->ovr[i] + strspn (run->ovr[i], "+");
        if (!strncmp (o, "workload.", 9))
            o += 9;
        size_t len = strlen (o) + 16;
        char *t = malloc (len);
        if (!t)
            return -1;
        snprintf (t, len, "++workload.%s", o);
        fprintf (f, "%s- ", indent);
        s_yquote (f, t);
        fputc ('\n', f);
        free (t);
        items++;
    }
    if (!items)
        fprintf (f, "%s[]\n", indent);
    return 0;
}

static int
s_write_config (const s_run_t *run, char *err, size_t err_size)
{
    if (!run->subdir[0])
        return 0;
    char dir[PATH_MAX];
    if (sb_strf (dir, sizeof dir, "%s/%s", run->leaf, run->subdir) != 0) {
        snprintf (err, err_size, "%s/%s: path too long", run->leaf, run->subdir);
        return -1;
    }
    if (sb_mkdirs (dir, err, err_size) != 0)
        return -1;
    s_out_t o;
    if (s_out_open (&o, dir, "config.yaml", run->replace || run->config_own, err, err_size) != 0)
        return -1;
    /* what Hydra composes for DLIO: the workload and its overrides
     * (runs.config, as the run wrote it before it began), under workload: */
    fputs ("workload:\n", o.f);
    int in_workflow = 0;
    for (const char *line = T (run->r, 2); *line;) {
        size_t n = strcspn (line, "\n");
        /* a datagen run did what DLIO's *_datagen.yaml says, whatever the
         * workload's workflow section: its own is written instead (below),
         * so that mlpstorage, reading a leaf by its configuration
         * (DLIOResultParser: workflow.train makes a "run"), reads a datagen */
        if (run->datagen && n && line[0] != ' ' && line[0] != '#')
            in_workflow = !strncmp (line, "workflow:", 9);
        if (!(run->datagen && in_workflow))
            fprintf (o.f, "%s%.*s\n", n ? "  " : "", (int) n, line);
        line += n + (line[n] == '\n');
    }
    if (run->datagen)
        fputs ("  workflow:\n    generate_data: True\n    train: False\n    checkpoint: False\n", o.f);
    if (s_out_commit (&o, err, err_size) != 0 || s_out_open (&o, dir, "overrides.yaml", run->replace || run->config_own, err, err_size) != 0)
        return -1;
    *o.failed = s_task_list (o.f, run, "") != 0;
    if (s_out_commit (&o, err, err_size) != 0 || s_out_open (&o, dir, "hydra.yaml", run->replace, err, err_size) != 0)
        return -1;
    /* Hydra's runtime configuration: only its existence is checked; these
     * are the parts that say where and how the run was written */
    fputs ("hydra:\n  run:\n    dir: ", o.f);
    s_yquote (o.f, run->leaf);
    fputs ("\n  output_subdir: ", o.f);
    s_yquote (o.f, run->subdir);
    fputs ("\n  job:\n    name: dlio\n  overrides:\n    hydra:\n", o.f);
    char h[PATH_MAX + 64];
    snprintf (h, sizeof h, "++hydra.run.dir=%s", run->leaf);
    fputs ("    - ", o.f);
    s_yquote (o.f, h);
    snprintf (h, sizeof h, "++hydra.output_subdir=%s", run->subdir);
    fputs ("\n    - ", o.f);
    s_yquote (o.f, h);
    fputs ("\n    task:\n", o.f);
    *o.failed = s_task_list (o.f, run, "    ") != 0;
    fputs ("  runtime:\n    version: ", o.f);
    char v[256];
    snprintf (v, sizeof v, "shardbench %s", run->inputs.n ? T (&run->inputs.rows[0], 0) : "");
    s_yquote (o.f, v);
    fputc ('\n', o.f);
    return s_out_commit (&o, err, err_size);
}

/* dlio.log (the run's course), PREFIX.stdout.log (the summary shardbench
 * printed) and PREFIX.stderr.log (the run's errors). */
static int
s_write_logs (sqlite3 *db, const s_run_t *run, char *err, size_t err_size)
{
    char ts[64], name[96];
    s_out_t o;
    if (s_out_open (&o, run->leaf, "dlio.log", run->replace, err, err_size) != 0)
        return -1;
    fprintf (o.f, "[INFO] %s shardbench %s run %lld: %s of %s, %lld accelerator(s) on %lld host(s)\n",
             s_ts_dlio (D (run->r, 5), ts, sizeof ts), run->inputs.n ? T (&run->inputs.rows[0], 0) : "?",
             (long long) run->id, T (run->r, 0), T (run->r, 1), (long long) I (run->r, 7), (long long) I (run->r, 8));
    for (size_t i = 0; i < run->epochs.n; i++) {
        const s_row_t *e = &run->epochs.rows[i];
        double end = 0;
        for (size_t k = 0; k < run->rank_epochs.n; k++)
            if (I (&run->rank_epochs.rows[k], 1) == I (e, 0) && D (&run->rank_epochs.rows[k], 4) > end)
                end = D (&run->rank_epochs.rows[k], 4);
        fprintf (o.f, "[INFO] %s Ending epoch %lld: train_au_percentage %.6f, train_throughput_samples_per_second"
                 " %.6f\n", s_ts_dlio (end, ts, sizeof ts), (long long) I (e, 0), D (e, 1), D (e, 2));
    }
    for (size_t i = 0; i < run->ckpts.n; i++) {
        const s_row_t *c = &run->ckpts.rows[i];
        fprintf (o.f, "[INFO] checkpoint %lld %s: %lld bytes in %.6f s, %.6f GiB/s\n", (long long) I (c, 2),
                 T (c, 1), (long long) I (c, 3), D (c, 4), D (c, 5));
    }
    for (size_t i = 0; i < run->errors.n; i++) {
        const s_row_t *e = &run->errors.rows[i];
        fprintf (o.f, "[ERROR] %s %s%s%s: %s\n", s_ts_dlio (D (e, 0), ts, sizeof ts), T (e, 3), *T (e, 4) ? " " : "",
                 T (e, 4), T (e, 5));
    }
    fprintf (o.f, "[INFO] %s run %lld %s\n", s_ts_dlio (s_end_time (run), ts, sizeof ts), (long long) run->id,
             T (run->r, 3));
    if (s_out_commit (&o, err, err_size) != 0)
        return -1;
    /* under mlpstorage (a leaf given) the command's output is mlpstorage's:
     * it writes PREFIX.stdout.log and .stderr.log itself when the command
     * ends, as it does after DLIO */
    if (run->dlio_only)
        return 0;

    snprintf (name, sizeof name, "%s.stdout.log", run->prefix);
    if (s_out_open (&o, run->leaf, name, run->replace, err, err_size) != 0)
        return -1;
    if (run->inputs.n)
        fprintf (o.f, "%s\n", T (&run->inputs.rows[0], 1));
    /* df(1) of the data and results file systems at the run's start, ended
     * by a blank line, where mlpstorage's rule 3.4.2 looks for it */
    if (run->inputs.n && !NUL (&run->inputs.rows[0], 3))
        fprintf (o.f, "%s\n", T (&run->inputs.rows[0], 3));
    fflush (o.f);
    if (sb_report_print (db, run->id, o.f) != 0)
        fprintf (o.f, "(no summary of run %lld)\n", (long long) run->id);
    if (s_out_commit (&o, err, err_size) != 0)
        return -1;

    snprintf (name, sizeof name, "%s.stderr.log", run->prefix);
    if (s_out_open (&o, run->leaf, name, run->replace, err, err_size) != 0)
        return -1;
    for (size_t i = 0; i < run->errors.n; i++) {
        const s_row_t *e = &run->errors.rows[i];
        fprintf (o.f, "shardbench: error: %s%s%s: %s\n", T (e, 3), *T (e, 4) ? " " : "", T (e, 4), T (e, 5));
    }
    return s_out_commit (&o, err, err_size);
}

/* dir a symbolic link that neither this user nor root made: refused with
 * err (what is written through it goes where its owner chose). */
static int
s_foreign_link (const char *dir, char *err, size_t err_size)
{
    /* "D/" would be the folder the link names: the link itself is D */
    char link[PATH_MAX];
    snprintf (link, sizeof link, "%s", dir);
    for (size_t n = strlen (link); n > 1 && link[n - 1] == '/'; n--)
        link[n - 1] = '\0';
    struct stat st;
    if (lstat (link, &st) != 0 || !S_ISLNK (st.st_mode) || st.st_uid == geteuid () || st.st_uid == 0)
        return 0;
    snprintf (err, err_size, "%s is a symbolic link of user %u, not yours: refused (results written through it would"
              " go where its owner chose)", dir, (unsigned) st.st_uid);
    return -1;
}

/* Is name one of the files a leaf holds (results_dir.h)? 1 summary.json
 * (what makes a folder a run), 2 dlio.log, 3 another, 0 none. */
static int
s_result_name (const char *name)
{
    static const char *const ends[] = { "_output.json", "_per_epoch_stats.json", "_metadata.json", ".stdout.log",
                                        ".stderr.log" };
    size_t n = strlen (name);
    if (!strcmp (name, "summary.json"))
        return 1;
    if (!strcmp (name, "dlio.log"))
        return 2;
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        if (n > strlen (ends[i]) && !strcmp (name + n - strlen (ends[i]), ends[i]))
            return 3;
    return 0;
}

int
sb_results_dir_leaf_check (const char *leaf, const char *subdir, unsigned flags, char *err, size_t err_size)
{
    char sub[PATH_MAX];
    if (subdir && sb_strf (sub, sizeof sub, "%s/%s", leaf, subdir) != 0) {
        snprintf (err, err_size, "%s/%s: path too long", leaf, subdir);
        return -1;
    }
    if (s_foreign_link (leaf, err, err_size) != 0 || (subdir && s_foreign_link (sub, err, err_size) != 0))
        return -1;
    if (flags & SB_RESULTS_DIR_OVERWRITE)
        return 0;
    /* summary.json, else dlio.log, else the first such name in byte order:
     * the message does not depend on the order the folder lists them */
    char found[512] = "";
    int rank = 0;
    DIR *d = opendir (leaf);
    if (!d && errno != ENOENT) {
        snprintf (err, err_size, "cannot read %s: %s", leaf, strerror (errno));
        return -1;
    }
    for (struct dirent *e; d && (e = readdir (d));) {
        int r = s_result_name (e->d_name);
        if (r && (!rank || r < rank || (r == rank && strcmp (e->d_name, found) < 0))) {
            snprintf (found, sizeof found, "%s", e->d_name);
            rank = r;
        }
    }
    if (d)
        closedir (d);
    static const char *const config[] = { "config.yaml", "overrides.yaml", "hydra.yaml" };
    for (size_t i = (flags & SB_RESULTS_DIR_CONFIG_WRITTEN) ? 2 : 0; !found[0] && subdir && i < 3; i++) {
        char path[PATH_MAX + 32];
        struct stat st;
        if (sb_strf (path, sizeof path, "%s/%s", sub, config[i]) == 0 && lstat (path, &st) == 0)
            snprintf (found, sizeof found, "%s/%s", subdir, config[i]);
    }
    if (!found[0])
        return 0;
    snprintf (err, err_size, "%s holds the results of a run already (%s): not overwritten (--overwrite replaces them)",
              leaf, found);
    return -1;
}

/* Make the leaf: under root, ROOT/.../TS, the next second while it exists;
 * or the leaf given. */
static int
s_make_leaf (s_run_t *run, const sb_results_dir_opts_t *opts, char *err, size_t err_size)
{
    double start = D (run->r, 5);
    sb_results_leaf_ts (start, run->ts, sizeof run->ts);
    if (opts->leaf) {
        snprintf (run->subdir, sizeof run->subdir, "%s",
                  opts->no_config ? "" : opts->config_subdir ? opts->config_subdir : "dlio_config");
        if (sb_results_leaf_given (opts->leaf, run->subdir[0] ? run->subdir : NULL,
                                   (opts->config_written ? SB_RESULTS_DIR_CONFIG_WRITTEN : 0)
                                   | (opts->overwrite ? SB_RESULTS_DIR_OVERWRITE : 0), run->leaf, sizeof run->leaf,
                                   err, err_size) != 0)
            return -1;
        run->replace = opts->overwrite;
        run->dlio_only = 1;
        run->config_own = opts->config_written;
        return 0;
    }
    snprintf (run->subdir, sizeof run->subdir, "dlio_config");
    char system[256];
    snprintf (system, sizeof system, "%s", run->system);
    sb_results_leaf_segment (system);
    char parent[PATH_MAX];
    int rc = run->checkpointing
        ? sb_strf (parent, sizeof parent, "%s/%s/%s/results/%s/checkpointing/%s", opts->root, run->division,
                   run->submitter, system, run->model)
        : sb_strf (parent, sizeof parent, "%s/%s/%s/results/%s/training/%s/%s", opts->root, run->division,
                   run->submitter, system, run->model, run->command);
    if (rc != 0) {
        snprintf (err, err_size, "%s: path too long", opts->root);
        return -1;
    }
    if (sb_results_leaf_make (parent, start, run->ts, sizeof run->ts, run->leaf, sizeof run->leaf, err, err_size) != 0)
        return -1;
    run->made_leaf = 1;
    return 0;
}

/* ------------------------------------------------------------ mlpstorage 3.0's files */

/* ROOT/mlperf-results.yaml: made by the first run written there, then the
 * organisation of every later one (results_stamp.h) */
static int
s_write_sentinel (const s_run_t *run, char *err, size_t err_size)
{
    return sb_results_sentinel_ensure (run->root, run->submitter, err, err_size);
}

/* LEAF/provenance.json, LEAF/fs_separation.json (results_stamp.h) */
static int
s_write_stamps (const s_run_t *run, char *err, size_t err_size)
{
    /* mlpstorage's rule 3.4.2 (4.4.2 for checkpointing) is about the
     * folder the run wrote or read: the checkpoint folder of a checkpoint run */
    const char *probe = s_cfg_str (run->cfg, run->checkpointing ? "checkpoint.checkpoint_folder"
                                                                 : "dataset.data_folder", "");
    /* the build is known only of the run this process ran itself (the
     * database records the version, not the build) */
    int own = sb_results_leaf_own_run (T (run->r, 9), I (run->r, 28));
    int written = 0;
    return sb_results_provenance_write (run->leaf, run->replace, run->type,
                                        run->inputs.n ? T (&run->inputs.rows[0], 0) : NULL, own ? SB_BUILD : NULL,
                                        probe, err, err_size) == 0
                && sb_results_fs_separation_write (run->leaf, run->replace, probe, &written, err, err_size) == 0
             ? 0 : -1;
}

/* 1 when run_id is a KV-cache run (runs.kind 'kvcache'), 0 when not (or no
 * such run: s_load_run says so), -1 with err when SQLite fails. */
static int
s_is_kvcache (sqlite3 *db, int64_t run_id, char *err, size_t err_size)
{
    char kind[32];
    int found = sb_rdq_run_kind (db, run_id, kind, sizeof kind, err, err_size);
    return found < 0 ? -1 : found && !strcmp (kind, "kvcache");
}

int
sb_results_dir_write (sqlite3 *db, int64_t run_id, const sb_results_dir_opts_t *opts, char *leaf_out,
                      size_t leaf_size, char *err, size_t err_size)
{
    if (sb_results_leaf_opts_check (opts, err, err_size) != 0)
        return -1;
    /* a KV-cache run has mlpstorage's kv_cache layout, not DLIO's */
    int kv = s_is_kvcache (db, run_id, err, err_size);
    if (kv < 0)
        return -1;
    if (kv)
        return sb_kv_results_dir_write (db, run_id, opts, leaf_out, leaf_size, err, err_size);
    s_run_t run;
    memset (&run, 0, sizeof run);
    int rc = s_load_run (db, run_id, opts, &run, err, err_size) == 0
          && (!opts->root || s_write_sentinel (&run, err, err_size) == 0)
          && s_make_leaf (&run, opts, err, err_size) == 0
          && s_write_config (&run, err, err_size) == 0
          /* DLIO writes its statistics only when it trains or checkpoints
           * (main.py finalize: not for generate_only): a datagen leaf holds
           * none, as mlpstorage's checker and reportgen expect of one */
          && (run.datagen || s_write_summary (&run, err, err_size) == 0)
          && (run.datagen || s_write_ranks (&run, err, err_size) == 0) && s_write_logs (db, &run, err, err_size) == 0
          /* mlpstorage's own files of a leaf it made; in a leaf given,
           * mlpstorage writes them (its probe runs before DLIO starts) */
          && (run.dlio_only || s_write_stamps (&run, err, err_size) == 0)
          /* the metadata last, as mlpstorage writes it last; into a leaf
           * given, none: mlpstorage writes its own there, under its name
           * (TYPE_ITS-START_metadata.json), and a second one would make its
           * reportgen skip the leaf */
          && (run.dlio_only || s_write_metadata (&run, err, err_size) == 0) ? 0 : -1;
    /* half a leaf would read as a run (summary.json without its metadata):
     * the leaf made here goes again */
    if (rc != 0 && run.made_leaf)
        sb_results_leaf_remove (run.leaf, err, err_size);
    if (leaf_out && leaf_size)
        snprintf (leaf_out, leaf_size, "%s", run.leaf);
    s_run_free (&run);
    return rc;
}
