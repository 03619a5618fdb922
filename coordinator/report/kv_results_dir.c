/* kv_results_dir: a KV-cache run as MLPerf Storage's results directory (see
 * kv_results_dir.h). The run is read through db/kv_query.h; its hosts,
 * inputs and overrides through db/results_dir_query.h, the rows a training
 * run's results directory reads. */
#include "kv_results_dir.h"
#include "config.h"
#include "json_doc.h"
#include "json_out.h"
#include "kv_query.h"
#include "results_dir_query.h"
#include "results_leaf.h"
#include "results_stamp.h"
#include "safe_file.h"
#include "sb_version.h"
#include "util.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define S_GIB 1073741824.0

/* ------------------------------------------------------------ the run */

typedef struct {
    sb_kv_run_t kv;
    sb_results_host_t *host;    /* distinct worker hosts, in worker order (their strings this run's own) */
    size_t      nhosts;
    int64_t     npernode;       /* ranks on every host, -1 when hosts differ */
    char      **ovr;            /* run_overrides in order */
    size_t      novr;
    char       *version, *command_line, *full_config;
    char       *cache_dir;      /* kvcache.cache_dir of the configuration, NULL: not recorded */
    const char *division, *verification;
    char        why[512];
    const char *submitter, *system, *root;
    char        org[256];
    char        model[128];     /* kv_runs.model as a path segment */
    char        ts[32];
    char        leaf[PATH_MAX];
    int         made_leaf, replace;
} s_run_t;

static void
s_run_free (s_run_t *run)
{
    sb_kv_run_fini (&run->kv);
    for (size_t i = 0; i < run->nhosts; i++) {
        free ((char *) run->host[i].host);
        free ((char *) run->host[i].processor);
    }
    free (run->host);
    for (size_t i = 0; i < run->novr; i++)
        free (run->ovr[i]);
    free (run->ovr);
    free (run->version);
    free (run->command_line);
    free (run->full_config);
    free (run->cache_dir);
}

/* why a row callback stopped (sb_rdq_rows returns it) */
enum { S_ROW_OOM = 1, S_ROW_SHAPE = 2 };

static int
s_oom (char *err, size_t err_size)
{
    snprintf (err, err_size, "results directory: out of memory");
    return -1;
}

/* a text column copied; "" for NULL, as SQLite gives text of NULL */
static char *
s_dup (const sb_rdq_val_t *v, int *oom)
{
    char *copy = strdup (v->t);
    if (!copy)
        *oom = 1;
    return copy;
}

/* SB_RDQ_WORKERS rows (host, ranks, first_rank, cores, memory): distinct
 * hosts, in worker order, with their ranks summed */
static int
s_worker_row (const sb_rdq_val_t *v, int n, void *ctx)
{
    s_run_t *run = ctx;
    if (n < 5)
        return S_ROW_SHAPE;
    size_t i = 0;
    while (i < run->nhosts && strcmp (run->host[i].host, v[0].t) != 0)
        i++;
    if (i == run->nhosts) {
        sb_results_host_t *grown = realloc (run->host, (run->nhosts + 1) * sizeof *grown);
        if (!grown)
            return S_ROW_OOM;
        run->host = grown;
        memset (&run->host[i], 0, sizeof run->host[i]);
        run->nhosts++;
        int oom = 0;
        run->host[i].host = s_dup (&v[0], &oom);
        run->host[i].cores = v[3].i;
        run->host[i].memory = v[4].i;
        if (oom)
            return S_ROW_OOM;
    }
    run->host[i].ranks += v[1].i;
    return 0;
}

/* SB_RDQ_HOST_INFO rows (host, processor, cpuinfo, meminfo): the processor
 * beside the worker host of that name */
static int
s_host_info_row (const sb_rdq_val_t *v, int n, void *ctx)
{
    s_run_t *run = ctx;
    if (n < 2)
        return S_ROW_SHAPE;
    for (size_t i = 0; i < run->nhosts; i++)
        if (!strcmp (run->host[i].host, v[0].t) && !run->host[i].processor && v[1].type != SB_RDQ_NULL) {
            int oom = 0;
            run->host[i].processor = s_dup (&v[1], &oom);
            if (oom)
                return S_ROW_OOM;
        }
    return 0;
}

/* SB_RDQ_INPUTS (version, command_line, full_config, df): its one row
 * (run_id is the key) */
static int
s_inputs_row (const sb_rdq_val_t *v, int n, void *ctx)
{
    s_run_t *run = ctx;
    if (n < 3)
        return S_ROW_SHAPE;
    if (run->version)
        return 0;
    int oom = 0;
    run->version = s_dup (&v[0], &oom);
    run->command_line = s_dup (&v[1], &oom);
    run->full_config = s_dup (&v[2], &oom);
    return oom ? S_ROW_OOM : 0;
}

/* SB_RDQ_OVERRIDES (override): in order */
static int
s_override_row (const sb_rdq_val_t *v, int n, void *ctx)
{
    s_run_t *run = ctx;
    if (n < 1)
        return S_ROW_SHAPE;
    char **grown = realloc (run->ovr, (run->novr + 1) * sizeof *grown);
    if (!grown)
        return S_ROW_OOM;
    run->ovr = grown;
    int oom = 0;
    run->ovr[run->novr++] = s_dup (&v[0], &oom);
    return oom ? S_ROW_OOM : 0;
}

/* rows of `which` through fn: 0, or -1 with err */
static int
s_rows (sqlite3 *db, s_run_t *run, sb_rdq_t which, sb_rdq_row_fn fn, char *err, size_t err_size)
{
    int rc = sb_rdq_rows (db, which, run->kv.id, fn, run, err, err_size);
    if (rc == S_ROW_OOM)
        return s_oom (err, err_size);
    if (rc == S_ROW_SHAPE)
        snprintf (err, err_size, "results directory: kvcache run %lld: query %d has too few columns",
                  (long long) run->kv.id, (int) which);
    return rc == 0 ? 0 : -1;
}

/* run_workers as distinct hosts with their ranks summed; run_host_info's
 * processor beside each */
static int
s_load_hosts (sqlite3 *db, s_run_t *run, char *err, size_t err_size)
{
    if (s_rows (db, run, SB_RDQ_WORKERS, s_worker_row, err, err_size) != 0
        || s_rows (db, run, SB_RDQ_HOST_INFO, s_host_info_row, err, err_size) != 0)
        return -1;
    run->npernode = run->nhosts ? run->host[0].ranks : -1;
    for (size_t i = 1; i < run->nhosts; i++)
        if (run->host[i].ranks != run->npernode)
            run->npernode = -1;
    return 0;
}

static int
s_load_inputs (sqlite3 *db, s_run_t *run, char *err, size_t err_size)
{
    if (s_rows (db, run, SB_RDQ_INPUTS, s_inputs_row, err, err_size) != 0
        || s_rows (db, run, SB_RDQ_OVERRIDES, s_override_row, err, err_size) != 0)
        return -1;
    int oom = 0;
    /* the cache folder, where the configuration says (a configuration that
     * does not parse only loses this one value) */
    sb_config_t *cfg = run->full_config ? sb_config_new () : NULL;
    char cerr[512];
    if (cfg && sb_config_load_string (cfg, run->full_config, "run_inputs.full_config", cerr, sizeof cerr) == 0) {
        const sb_config_entry_t *e = sb_config_get (cfg, "kvcache.cache_dir");
        if (e && e->value && *e->value && !(run->cache_dir = strdup (e->value)))
            oom = 1;
    }
    sb_config_destroy (&cfg);
    return oom ? s_oom (err, err_size) : 0;
}

static int
s_load (sqlite3 *db, int64_t id, const sb_results_dir_opts_t *opts, s_run_t *run, char *err, size_t err_size)
{
    char qerr[1024];
    int found = sb_kv_run_load (db, id, &run->kv, qerr, sizeof qerr);
    if (found <= 0) {
        snprintf (err, err_size, "results directory: %s", qerr);
        return -1;
    }
    if (!strcmp (run->kv.status, "running")) {
        snprintf (err, err_size, "run %lld is still running", (long long) id);
        return -1;
    }
    if (s_load_hosts (db, run, err, err_size) != 0 || s_load_inputs (db, run, err, err_size) != 0)
        return -1;
    run->verification = sb_kv_division (&run->kv, run->why, sizeof run->why);
    run->division = !strcmp (run->verification, "closed") ? "closed" : "open";
    snprintf (run->model, sizeof run->model, "%s", run->kv.model);
    sb_results_leaf_segment (run->model);
    if (sb_results_leaf_submitter (opts, run->org, sizeof run->org, &run->submitter, err, err_size) != 0)
        return -1;
    run->system = opts->system ? opts->system : run->kv.coordinator_host ? run->kv.coordinator_host : "unknown";
    run->root = opts->root;
    return 0;
}

/* ------------------------------------------------------------ files and folders */

/* dir/name made, or there already as a folder of its own: a link there (put
 * by someone) is refused, what is written through it would go where its
 * maker chose */
static int
s_subdir (const char *dir, const char *name, char *path, size_t size, char *err, size_t err_size)
{
    if (sb_strf (path, size, "%s/%s", dir, name) != 0) {
        snprintf (err, err_size, "%s/%s: path too long", dir, name);
        return -1;
    }
    if (mkdir (path, 0755) == 0)
        return 0;
    if (errno != EEXIST) {
        snprintf (err, err_size, "cannot make %s: %s", path, strerror (errno));
        return -1;
    }
    struct stat st;
    if (lstat (path, &st) != 0) {
        snprintf (err, err_size, "cannot read %s: %s", path, strerror (errno));
        return -1;
    }
    if (!S_ISDIR (st.st_mode)) {
        snprintf (err, err_size, "%s is %s, not a folder: refused (results are never written through a link or over a"
                  " file)", path, S_ISLNK (st.st_mode) ? "a symbolic link" : "a file");
        return -1;
    }
    return 0;
}

static int
s_commit (sb_safe_file_t *sf, char *err, size_t err_size)
{
    if (ferror (sf->f))
        sf->failed = 1;
    return sb_safe_file_commit (sf, err, err_size);
}

/* option_O/trial_T/rank_R/kvcache_results_TS.json, every rank of every trial */
static int
s_write_ranks (s_run_t *run, char *err, size_t err_size)
{
    char opt[64], odir[PATH_MAX], tdir[PATH_MAX], rdir[PATH_MAX];
    snprintf (opt, sizeof opt, "option_%lld", (long long) run->kv.option);
    if (s_subdir (run->leaf, opt, odir, sizeof odir, err, err_size) != 0)
        return -1;
    for (size_t i = 0; i < run->kv.nranks; i++) {
        const sb_kv_rank_row_t *r = &run->kv.rank[i];
        char tname[64], rname[64], fname[96], ts[32];
        /* mlpstorage numbers the trial folders from 0 (range(trials)) */
        snprintf (tname, sizeof tname, "trial_%lld", (long long) (r->trial - 1));
        snprintf (rname, sizeof rname, "rank_%lld", (long long) r->rank);
        double start = run->kv.started_at;
        for (size_t t = 0; t < run->kv.ntrials; t++)
            if (run->kv.trial[t].trial == r->trial)
                start = run->kv.trial[t].started_at;
        sb_results_leaf_ts (start, ts, sizeof ts);
        snprintf (fname, sizeof fname, "kvcache_results_%s.json", ts);
        if (s_subdir (odir, tname, tdir, sizeof tdir, err, err_size) != 0
            || s_subdir (tdir, rname, rdir, sizeof rdir, err, err_size) != 0)
            return -1;
        sb_safe_file_t sf;
        if (sb_safe_file_open (&sf, rdir, fname, run->replace, err, err_size) != 0)
            return -1;
        /* as the rank wrote it: the checker reads these bytes */
        fputs (r->results_json, sf.f);
        if (s_commit (&sf, err, err_size) != 0)
            return -1;
    }
    return 0;
}

/* the path mlpstorage records of a rank file (str(result_file)) */
static void
s_rank_path (const s_run_t *run, const sb_kv_rank_row_t *r, char *buf, size_t size)
{
    char ts[32];
    double start = run->kv.started_at;
    for (size_t t = 0; t < run->kv.ntrials; t++)
        if (run->kv.trial[t].trial == r->trial)
            start = run->kv.trial[t].started_at;
    sb_results_leaf_ts (start, ts, sizeof ts);
    if (sb_strf (buf, size, "%s/option_%lld/trial_%lld/rank_%lld/kvcache_results_%s.json", run->leaf,
                 (long long) run->kv.option, (long long) (r->trial - 1), (long long) r->rank, ts) != 0)
        snprintf (buf, size, "rank_%lld", (long long) r->rank);
}

typedef struct {
    double read, write, avg_tokens, storage_tokens;     /* mean over the trials of the per-trial sums */
    double p95_storage, p95_read_total, p95_read_device, p95_write_device;  /* largest over ranks and trials */
    int    has_p95;
    size_t trials;
    int    partial;
} s_agg_t;

/* mlpstorage's _aggregate_option_results over the trials that finished: in
 * each trial the ranks' figures summed (the latencies: their largest), over
 * the trials the sums' mean (fmean) and the latencies' largest. A rank that
 * did not report leaves the run partial, as a missing rank file does. */
static void
s_aggregate (const s_run_t *run, s_agg_t *a)
{
    memset (a, 0, sizeof *a);
    for (size_t t = 0; t < run->kv.ntrials; t++) {
        sb_kv_trial_sum_t s;
        sb_kv_trial_sum (&run->kv, run->kv.trial[t].trial, &s);
        a->read += s.read_gib_per_s;
        a->write += s.write_gib_per_s;
        a->avg_tokens += s.avg_tokens_per_s;
        a->storage_tokens += s.storage_tokens_per_s;
        double p[] = { s.lat_max[SB_KV_LAT_REQUEST_STORAGE][1], s.lat_max[SB_KV_LAT_READ_TOTAL][1],
                       s.lat_max[SB_KV_LAT_READ_DEVICE][1], s.lat_max[SB_KV_LAT_WRITE_DEVICE][1] };
        double *into[] = { &a->p95_storage, &a->p95_read_total, &a->p95_read_device, &a->p95_write_device };
        for (int k = 0; k < 4; k++)
            if (p[k] > *into[k])
                *into[k] = p[k];
        a->has_p95 = 1;
        if ((int64_t) s.ranks != run->kv.accelerators)
            a->partial = 1;
        a->trials++;
    }
    if (a->trials) {
        a->read /= (double) a->trials;
        a->write /= (double) a->trials;
        a->avg_tokens /= (double) a->trials;
        a->storage_tokens /= (double) a->trials;
    }
    if ((int64_t) a->trials != run->kv.trials)
        a->partial = 1;
}

/* the figures reportgen copies (report_generator.py _aggregate_kvcache) */
static void
s_jfigures (sb_jdoc_t *j, const s_agg_t *a)
{
    sb_jdoc_num (j, "aggregated_read_bandwidth_gbps", a->read);
    sb_jdoc_num (j, "aggregated_write_bandwidth_gbps", a->write);
    sb_jdoc_num (j, "aggregated_avg_throughput_tokens_per_sec", a->avg_tokens);
    sb_jdoc_num (j, "aggregated_storage_throughput_tokens_per_sec", a->storage_tokens);
    if (a->has_p95)
        sb_jdoc_num (j, "aggregated_p95_latency_ms", a->p95_storage);
    else
        sb_jdoc_raw (j, "aggregated_p95_latency_ms", "null");
}

static int
s_write_summary (s_run_t *run, char *err, size_t err_size)
{
    sb_safe_file_t sf;
    if (sb_safe_file_open (&sf, run->leaf, "summary.json", run->replace, err, err_size) != 0)
        return -1;
    s_agg_t a;
    s_aggregate (run, &a);
    sb_jdoc_t j = { .f = sf.f, .indent = 2 };
    char opt[32];
    snprintf (opt, sizeof opt, "%lld", (long long) run->kv.option);
    sb_jdoc_open (&j, NULL, '{');
    sb_jdoc_str (&j, "schema_version", "1.0");
    sb_jdoc_str (&j, "run_datetime", run->ts);
    if (run->npernode >= 0)
        sb_jdoc_int (&j, "npernode", run->npernode);
    else
        sb_jdoc_raw (&j, "npernode", "null");
    sb_jdoc_int (&j, "host_count", (int64_t) run->nhosts);
    sb_jdoc_int (&j, "total_ranks", run->kv.accelerators);
    sb_jdoc_int (&j, "trials_per_option", run->kv.trials);
    sb_jdoc_int (&j, "trials", run->kv.trials);
    sb_jdoc_str (&j, "model", run->kv.model);
    sb_jdoc_str (&j, "performance_profile", "latency");
    /* one Option per shardbench run: the run's figures are the Option's */
    s_jfigures (&j, &a);
    sb_jdoc_open (&j, "options", '{');
    sb_jdoc_open (&j, opt, '{');
    sb_jdoc_int (&j, "option", run->kv.option);
    s_jfigures (&j, &a);
    /* what reportgen's KVCache table shows as P95 Read Latency, and the
     * device spans Rules.md 6.3.4.3 scores */
    if (a.has_p95) {
        sb_jdoc_num (&j, "aggregated_storage_read_p95_ms", a.p95_read_total);
        sb_jdoc_num (&j, "aggregated_device_read_p95_ms", a.p95_read_device);
        sb_jdoc_num (&j, "aggregated_device_write_p95_ms", a.p95_write_device);
    }
    sb_jdoc_int (&j, "rank_count", run->kv.accelerators);
    sb_jdoc_int (&j, "trial_count", (int64_t) a.trials);
    sb_jdoc_raw (&j, "partial_failure", a.partial ? "true" : "false");
    /* a rank folder without its file, as mlpstorage lists it */
    sb_jdoc_open (&j, "missing_files", '[');
    for (size_t t = 0; t < run->kv.ntrials; t++)
        for (int64_t r = 0; r < run->kv.accelerators; r++) {
            int have = 0;
            for (size_t i = 0; i < run->kv.nranks && !have; i++)
                have = run->kv.rank[i].trial == run->kv.trial[t].trial && run->kv.rank[i].rank == r;
            if (have)
                continue;
            char path[PATH_MAX + 64];
            snprintf (path, sizeof path, "%s/option_%lld/trial_%lld/rank_%lld", run->leaf, (long long) run->kv.option,
                      (long long) (run->kv.trial[t].trial - 1), (long long) r);
            sb_jdoc_str (&j, NULL, path);
        }
    sb_jdoc_close (&j, ']');
    sb_jdoc_open (&j, "cpu_tier_ranks", '[');
    for (size_t i = 0; i < run->kv.nranks; i++)
        if (run->kv.rank[i].storage_entries == 0) {
            char path[PATH_MAX + 128];
            s_rank_path (run, &run->kv.rank[i], path, sizeof path);
            sb_jdoc_str (&j, NULL, path);
        }
    sb_jdoc_close (&j, ']');
    sb_jdoc_close (&j, '}');
    sb_jdoc_close (&j, '}');
    sb_jdoc_raw (&j, "partial_failure", a.partial ? "true" : "false");
    /* trials asked for that did not finish (mlpstorage: an mpirun that
     * exited non-zero) */
    sb_jdoc_open (&j, "trial_failures", '[');
    for (int64_t t = 1; t <= run->kv.trials; t++) {
        int done = 0;
        for (size_t i = 0; i < run->kv.ntrials; i++)
            done |= run->kv.trial[i].trial == t;
        if (!done)
            sb_jdoc_int (&j, NULL, t - 1);
    }
    sb_jdoc_close (&j, ']');
    /* shardbench's own figures as the database holds them (kv_runs): the
     * same aggregation, kept beside mlpstorage's so a reader sees both */
    sb_jdoc_open (&j, "shardbench", '{');
    sb_jdoc_int (&j, "run_id", run->kv.id);
    sb_jdoc_str (&j, "status", run->kv.status);
    sb_jdoc_str (&j, "storage_check", run->kv.storage_check);
    sb_jdoc_str (&j, "verification", run->verification);
    sb_jdoc_str (&j, "verification_reason", run->why);
    if (run->kv.has_read)
        sb_jdoc_num (&j, "read_gib_per_s", run->kv.read_gib_per_s);
    if (run->kv.has_write)
        sb_jdoc_num (&j, "write_gib_per_s", run->kv.write_gib_per_s);
    if (run->kv.has_storage_p95)
        sb_jdoc_num (&j, "storage_p95_ms", run->kv.storage_p95_ms);
    sb_jdoc_close (&j, '}');
    sb_jdoc_close (&j, '}');
    fputc ('\n', sf.f);
    return s_commit (&sf, err, err_size);
}

/* kvcache_optO_trialT_TS.stdout.log and .stderr.log of every trial asked
 * for: what each rank reported, and the run's error in the trial it ended */
static int
s_write_logs (s_run_t *run, char *err, size_t err_size)
{
    for (int64_t t = 1; t <= run->kv.trials; t++) {
        char name[128];
        sb_safe_file_t sf;
        snprintf (name, sizeof name, "kvcache_opt%lld_trial%lld_%s.stdout.log", (long long) run->kv.option,
                  (long long) (t - 1), run->ts);
        if (sb_safe_file_open (&sf, run->leaf, name, run->replace, err, err_size) != 0)
            return -1;
        int done = 0;
        for (size_t i = 0; i < run->kv.nranks; i++) {
            const sb_kv_rank_row_t *r = &run->kv.rank[i];
            if (r->trial != t)
                continue;
            done = 1;
            fprintf (sf.f, "rank %lld on %s: %lld requests, %lld tokens in %.3f s; storage read %.6f GiB/s,"
                     " write %.6f GiB/s; storage check: %s\n", (long long) r->rank, r->host, (long long) r->requests,
                     (long long) r->generated, r->elapsed_s, r->read_gib_per_s, r->write_gib_per_s,
                     r->storage_check ? r->storage_check : "not recorded");
        }
        if (s_commit (&sf, err, err_size) != 0)
            return -1;
        snprintf (name, sizeof name, "kvcache_opt%lld_trial%lld_%s.stderr.log", (long long) run->kv.option,
                  (long long) (t - 1), run->ts);
        if (sb_safe_file_open (&sf, run->leaf, name, run->replace, err, err_size) != 0)
            return -1;
        /* the first trial that did not finish is where the run failed */
        int failed_here = !done && run->kv.error;
        for (int64_t k = 1; failed_here && k < t; k++) {
            int earlier = 0;
            for (size_t i = 0; i < run->kv.nranks; i++)
                earlier |= run->kv.rank[i].trial == k;
            failed_here = earlier;
        }
        if (failed_here)
            fprintf (sf.f, "shardbench: error: %s\n", run->kv.error);
        if (s_commit (&sf, err, err_size) != 0)
            return -1;
    }
    return 0;
}

/* The run's settings as mlpstorage writes them twice in the metadata: in
 * "parameters" (model) and at the top level (kvcache_model). */
static void
s_jsettings (sb_jdoc_t *j, const s_run_t *run, const char *model_key)
{
    const sb_kv_run_t *kv = &run->kv;
    sb_jdoc_str (j, model_key, kv->model);
    sb_jdoc_int (j, "num_users", kv->users);
    sb_jdoc_num (j, "duration", kv->duration_s);
    sb_jdoc_num (j, "gpu_mem_gb", 0);
    sb_jdoc_num (j, "cpu_mem_gb", kv->cpu_mem_gb);
    sb_jdoc_str (j, "cache_dir", run->cache_dir);
    sb_jdoc_str (j, "generation_mode", kv->generation_mode);
    sb_jdoc_str (j, "performance_profile", "latency");
}

static int
s_write_metadata (s_run_t *run, char *err, size_t err_size)
{
    char name[128], out[PATH_MAX + 64];
    snprintf (name, sizeof name, "kv_cache_%s_metadata.json", run->ts);
    sb_safe_file_t sf;
    if (sb_safe_file_open (&sf, run->leaf, name, run->replace, err, err_size) != 0)
        return -1;
    const sb_kv_run_t *kv = &run->kv;
    sb_jdoc_t j = { .f = sf.f, .indent = 2 };
    sb_jdoc_open (&j, NULL, '{');
    sb_jdoc_str (&j, "benchmark_type", "kv_cache");
    sb_jdoc_str (&j, "model", kv->model);
    sb_jdoc_str (&j, "command", "run");
    sb_jdoc_str (&j, "run_datetime", run->ts);
    sb_jdoc_int (&j, "num_processes", kv->accelerators);
    sb_jdoc_raw (&j, "accelerator", "null");
    sb_jdoc_str (&j, "result_dir", run->leaf);
    /* what mlpstorage's run checker and reportgen read (metadata
     * ['parameters'], benchmarks/kvcache.py metadata) */
    sb_jdoc_open (&j, "parameters", '{');
    s_jsettings (&j, run, "model");
    sb_jdoc_int (&j, "max_concurrent_allocs", kv->max_concurrent_allocs);
    sb_jdoc_int (&j, "option", kv->option);
    sb_jdoc_int (&j, "seed", kv->kv_seed);
    sb_jdoc_int (&j, "trials", kv->trials);
    sb_jdoc_close (&j, '}');
    sb_jdoc_open (&j, "override_parameters", '{');
    for (size_t i = 0; i < run->novr; i++) {
        const char *eq = strchr (run->ovr[i], '=');
        char key[512];
        snprintf (key, sizeof key, "%.*s", eq ? (int) (eq - run->ovr[i]) : (int) strlen (run->ovr[i]), run->ovr[i]);
        sb_jdoc_str (&j, key, eq ? eq + 1 : "");
    }
    sb_jdoc_close (&j, '}');
    sb_results_leaf_system_info (&j, run->host, run->nhosts);
    sb_jdoc_num (&j, "runtime", kv->finished_at - kv->started_at);
    sb_jdoc_str (&j, "verification", run->verification);
    sb_jdoc_str (&j, "executed_command", run->command_line ? run->command_line : "");
    sb_jdoc_open (&j, "command_output_files", '[');
    for (int64_t t = 1; t <= kv->trials; t++) {
        sb_jdoc_open (&j, NULL, '{');
        sb_jdoc_str (&j, "command", run->command_line ? run->command_line : "");
        snprintf (out, sizeof out, "%s/kvcache_opt%lld_trial%lld_%s.stdout.log", run->leaf, (long long) kv->option,
                  (long long) (t - 1), run->ts);
        sb_jdoc_str (&j, "stdout", out);
        snprintf (out, sizeof out, "%s/kvcache_opt%lld_trial%lld_%s.stderr.log", run->leaf, (long long) kv->option,
                  (long long) (t - 1), run->ts);
        sb_jdoc_str (&j, "stderr", out);
        sb_jdoc_close (&j, '}');
    }
    sb_jdoc_close (&j, ']');
    sb_jdoc_open (&j, "args", '{');
    sb_jdoc_str (&j, "program", "kvcache");
    sb_jdoc_str (&j, "command", "run");
    sb_jdoc_str (&j, "model", kv->model);
    sb_jdoc_int (&j, "num_processes", kv->accelerators);
    if (run->npernode >= 0)
        sb_jdoc_int (&j, "npernode", run->npernode);
    else
        sb_jdoc_raw (&j, "npernode", "null");
    sb_jdoc_open (&j, "hosts", '[');
    for (size_t h = 0; h < run->nhosts; h++)
        sb_jdoc_str (&j, NULL, run->host[h].host);
    sb_jdoc_close (&j, ']');
    sb_jdoc_int (&j, "seed", kv->kv_seed);
    sb_jdoc_int (&j, "trials", kv->trials);
    sb_jdoc_str (&j, "cache_dir", run->cache_dir);
    sb_jdoc_str (&j, "results_dir", run->root ? run->root : run->leaf);
    sb_jdoc_raw (&j, "closed", !strcmp (run->division, "closed") ? "true" : "false");
    sb_jdoc_str (&j, "mode", run->division);
    sb_jdoc_str (&j, "orgname", run->submitter);
    sb_jdoc_str (&j, "systemname", run->system);
    sb_jdoc_close (&j, '}');
    /* benchmarks/kvcache.py's own keys */
    s_jsettings (&j, run, "kvcache_model");
    sb_jdoc_open (&j, "hosts", '[');
    for (size_t h = 0; h < run->nhosts; h++)
        sb_jdoc_str (&j, NULL, run->host[h].host);
    sb_jdoc_close (&j, ']');
    /* the run's figures where mlpstorage's older reportgen looks
     * (BenchmarkRunData.metrics); the newer one reads summary.json */
    s_agg_t a;
    s_aggregate (run, &a);
    sb_jdoc_open (&j, "metrics", '{');
    s_jfigures (&j, &a);
    sb_jdoc_close (&j, '}');
    sb_jdoc_str (&j, "provenance_file", SB_RESULTS_PROVENANCE);
    sb_jdoc_open (&j, "shardbench", '{');
    sb_jdoc_int (&j, "run_id", kv->id);
    sb_jdoc_str (&j, "version", run->version);
    sb_jdoc_str (&j, "kind", kv->kind);
    sb_jdoc_str (&j, "workload", kv->workload);
    sb_jdoc_str (&j, "status", kv->status);
    sb_jdoc_str (&j, "error", kv->error);
    sb_jdoc_str (&j, "storage_check", kv->storage_check);
    sb_jdoc_str (&j, "verification_reason", run->why);
    sb_jdoc_int (&j, "kv_bytes_per_position", kv->bytes_per_position);
    sb_jdoc_open (&j, "overrides", '[');
    for (size_t i = 0; i < run->novr; i++)
        sb_jdoc_str (&j, NULL, run->ovr[i]);
    sb_jdoc_close (&j, ']');
    sb_jdoc_close (&j, '}');
    sb_jdoc_close (&j, '}');
    fputc ('\n', sf.f);
    return s_commit (&sf, err, err_size);
}

/* ------------------------------------------------------------ the leaf */

static int
s_make_leaf (s_run_t *run, const sb_results_dir_opts_t *opts, char *err, size_t err_size)
{
    double start = run->kv.started_at;
    sb_results_leaf_ts (start, run->ts, sizeof run->ts);
    if (opts->leaf) {
        if (sb_results_leaf_given (opts->leaf, NULL, opts->overwrite ? SB_RESULTS_DIR_OVERWRITE : 0, run->leaf,
                                   sizeof run->leaf, err, err_size) != 0)
            return -1;
        run->replace = opts->overwrite;
        return 0;
    }
    char system[256], parent[PATH_MAX];
    snprintf (system, sizeof system, "%s", run->system);
    sb_results_leaf_segment (system);
    if (sb_strf (parent, sizeof parent, "%s/%s/%s/results/%s/kv_cache/%s/run", opts->root, run->division,
                 run->submitter, system, run->model) != 0) {
        snprintf (err, err_size, "%s: path too long", opts->root);
        return -1;
    }
    if (sb_results_leaf_make (parent, start, run->ts, sizeof run->ts, run->leaf, sizeof run->leaf, err, err_size) != 0)
        return -1;
    run->made_leaf = 1;
    return 0;
}

static int
s_write_stamps (s_run_t *run, char *err, size_t err_size)
{
    /* the build is known only of a run this process ran itself */
    int own = sb_results_leaf_own_run (run->kv.coordinator_host, run->kv.coordinator_pid);
    int written = 0;
    return sb_results_provenance_write (run->leaf, run->replace, "kv_cache", run->version, own ? SB_BUILD : NULL,
                                        run->cache_dir ? run->cache_dir : "", err, err_size) == 0
                && sb_results_fs_separation_write (run->leaf, run->replace, run->cache_dir ? run->cache_dir : "",
                                                   &written, err, err_size) == 0
             ? 0 : -1;
}

int
sb_kv_results_dir_write (sqlite3 *db, int64_t run_id, const sb_results_dir_opts_t *opts, char *leaf_out,
                         size_t leaf_size, char *err, size_t err_size)
{
    if (sb_results_leaf_opts_check (opts, err, err_size) != 0)
        return -1;
    s_run_t run;
    memset (&run, 0, sizeof run);
    int rc = s_load (db, run_id, opts, &run, err, err_size) == 0
          && (!opts->root || sb_results_sentinel_ensure (opts->root, run.submitter, err, err_size) == 0)
          && s_make_leaf (&run, opts, err, err_size) == 0 && s_write_ranks (&run, err, err_size) == 0
          && s_write_summary (&run, err, err_size) == 0 && s_write_logs (&run, err, err_size) == 0
          && s_write_stamps (&run, err, err_size) == 0
          /* the metadata last, as mlpstorage writes it last */
          && s_write_metadata (&run, err, err_size) == 0 ? 0 : -1;
    /* half a leaf would read as a run: the leaf made here goes again */
    if (rc != 0 && run.made_leaf)
        sb_results_leaf_remove (run.leaf, err, err_size);
    if (leaf_out && leaf_size)
        snprintf (leaf_out, leaf_size, "%s", run.leaf);
    s_run_free (&run);
    return rc;
}
