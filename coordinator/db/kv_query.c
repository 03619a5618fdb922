/* kv_query: a KV-cache run read back from the result database (see
 * kv_query.h). */
#include "kv_query.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const s_lat_what[SB_KV_LAT_N] = { "request_storage", "read_total", "write_total", "read_device",
                                                     "write_device" };

static char *
s_dup (sqlite3_stmt *st, int c, int *oom)
{
    const unsigned char *t = sqlite3_column_text (st, c);
    if (!t)
        return NULL;
    char *copy = strdup ((const char *) t);
    if (!copy)
        *oom = 1;
    return copy;
}

static int
s_prepare (sqlite3 *db, const char *sql, int64_t run_id, sqlite3_stmt **st, char *err, size_t err_size)
{
    if (sqlite3_prepare_v2 (db, sql, -1, st, NULL) != SQLITE_OK || sqlite3_bind_int64 (*st, 1, run_id) != SQLITE_OK) {
        snprintf (err, err_size, "kvcache run %lld: %s", (long long) run_id, sqlite3_errmsg (db));
        sqlite3_finalize (*st);
        *st = NULL;
        return -1;
    }
    return 0;
}

static int
s_step_failed (sqlite3 *db, int64_t run_id, int rc, char *err, size_t err_size)
{
    if (rc == SQLITE_DONE)
        return 0;
    snprintf (err, err_size, "kvcache run %lld: %s", (long long) run_id, sqlite3_errmsg (db));
    return -1;
}

static int
s_load_run (sqlite3 *db, int64_t id, sb_kv_run_t *run, char *err, size_t err_size)
{
    sqlite3_stmt *st;
    if (s_prepare (db, "SELECT kind, workload, status, error, coordinator_host, started_at, finished_at, accelerators,"
                   " hosts, workers, seed, coordinator_pid FROM runs WHERE id = ?", id, &st, err, err_size) != 0)
        return -1;
    int rc = sqlite3_step (st), oom = 0;
    if (rc != SQLITE_ROW) {
        sqlite3_finalize (st);
        if (s_step_failed (db, id, rc, err, err_size) != 0)
            return -1;
        snprintf (err, err_size, "run %lld does not exist", (long long) id);
        return 0;
    }
    run->kind = s_dup (st, 0, &oom);
    run->workload = s_dup (st, 1, &oom);
    run->status = s_dup (st, 2, &oom);
    run->error = s_dup (st, 3, &oom);
    run->coordinator_host = s_dup (st, 4, &oom);
    run->started_at = sqlite3_column_double (st, 5);
    run->has_finished = sqlite3_column_type (st, 6) != SQLITE_NULL;
    run->finished_at = run->has_finished ? sqlite3_column_double (st, 6) : run->started_at;
    run->accelerators = sqlite3_column_int64 (st, 7);
    run->hosts = sqlite3_column_int64 (st, 8);
    run->workers = sqlite3_column_int64 (st, 9);
    run->seed = sqlite3_column_int64 (st, 10);
    run->coordinator_pid = sqlite3_column_int64 (st, 11);
    sqlite3_finalize (st);
    if (oom || !run->kind || !run->workload || !run->status) {
        snprintf (err, err_size, "kvcache run %lld: %s", (long long) id, oom ? "out of memory" : "incomplete runs row");
        return -1;
    }

    if (s_prepare (db, "SELECT option, model, users, duration_s, trials, cpu_mem_gb, max_concurrent_allocs, seed,"
                   " generation_mode, kv_bytes_per_position, storage_check, read_gib_per_s, write_gib_per_s,"
                   " storage_p95_ms FROM kv_runs WHERE run_id = ?", id, &st, err, err_size) != 0)
        return -1;
    rc = sqlite3_step (st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize (st);
        if (s_step_failed (db, id, rc, err, err_size) != 0)
            return -1;
        snprintf (err, err_size, "run %lld (%s) has no kv_runs row: no KV-cache run was recorded", (long long) id,
                  run->kind);
        return 0;
    }
    run->option = sqlite3_column_int64 (st, 0);
    run->model = s_dup (st, 1, &oom);
    run->users = sqlite3_column_int64 (st, 2);
    run->duration_s = sqlite3_column_double (st, 3);
    run->trials = sqlite3_column_int64 (st, 4);
    run->cpu_mem_gb = sqlite3_column_double (st, 5);
    run->max_concurrent_allocs = sqlite3_column_int64 (st, 6);
    run->kv_seed = sqlite3_column_int64 (st, 7);
    run->generation_mode = s_dup (st, 8, &oom);
    run->bytes_per_position = sqlite3_column_int64 (st, 9);
    run->storage_check = s_dup (st, 10, &oom);
    run->has_read = sqlite3_column_type (st, 11) != SQLITE_NULL;
    run->read_gib_per_s = sqlite3_column_double (st, 11);
    run->has_write = sqlite3_column_type (st, 12) != SQLITE_NULL;
    run->write_gib_per_s = sqlite3_column_double (st, 12);
    run->has_storage_p95 = sqlite3_column_type (st, 13) != SQLITE_NULL;
    run->storage_p95_ms = sqlite3_column_double (st, 13);
    sqlite3_finalize (st);
    if (oom || !run->model || !run->generation_mode || !run->storage_check) {
        snprintf (err, err_size, "kvcache run %lld: %s", (long long) id, oom ? "out of memory" : "incomplete kv_runs row");
        return -1;
    }
    return 1;
}

static int
s_load_trials (sqlite3 *db, int64_t id, sb_kv_run_t *run, char *err, size_t err_size)
{
    sqlite3_stmt *st;
    if (s_prepare (db, "SELECT trial, started_at, finished_at, ranks, requests, generated, storage_read_bytes,"
                   " storage_write_bytes, read_gib_per_s, write_gib_per_s, storage_p95_ms FROM kv_trials"
                   " WHERE run_id = ? ORDER BY trial", id, &st, err, err_size) != 0)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
        if (run->ntrials == cap) {
            cap = cap ? 2 * cap : 4;
            sb_kv_trial_row_t *grown = realloc (run->trial, cap * sizeof *grown);
            if (!grown) {
                sqlite3_finalize (st);
                snprintf (err, err_size, "kvcache run %lld: out of memory", (long long) id);
                return -1;
            }
            run->trial = grown;
        }
        sb_kv_trial_row_t *t = &run->trial[run->ntrials++];
        t->trial = sqlite3_column_int64 (st, 0);
        t->started_at = sqlite3_column_double (st, 1);
        t->finished_at = sqlite3_column_double (st, 2);
        t->ranks = sqlite3_column_int64 (st, 3);
        t->requests = sqlite3_column_int64 (st, 4);
        t->generated = sqlite3_column_int64 (st, 5);
        t->storage_read_bytes = sqlite3_column_int64 (st, 6);
        t->storage_write_bytes = sqlite3_column_int64 (st, 7);
        t->read_gib_per_s = sqlite3_column_double (st, 8);
        t->write_gib_per_s = sqlite3_column_double (st, 9);
        t->has_storage_p95 = sqlite3_column_type (st, 10) != SQLITE_NULL;
        t->storage_p95_ms = sqlite3_column_double (st, 10);
    }
    sqlite3_finalize (st);
    return s_step_failed (db, id, rc, err, err_size);
}

static int
s_load_ranks (sqlite3 *db, int64_t id, sb_kv_run_t *run, char *err, size_t err_size)
{
    /* the token rates are in the rank's JSON only; json_valid first, as
     * json_extract fails the whole statement on text that is no JSON */
    sqlite3_stmt *st;
    if (s_prepare (db, "SELECT trial, rank, host, elapsed_s, requests, generated, chatbot, coding, document,"
                   " interactive, responsive, batch, storage_entries, storage_read_bytes, storage_write_bytes,"
                   " read_gib_per_s, write_gib_per_s,"
                   " CASE WHEN json_valid (results_json) THEN json_extract (results_json,"
                   "   '$.summary.avg_throughput_tokens_per_sec') END,"
                   " CASE WHEN json_valid (results_json) THEN json_extract (results_json,"
                   "   '$.summary.storage_throughput_tokens_per_sec') END,"
                   " storage_check, results_json FROM kv_ranks WHERE run_id = ? ORDER BY trial, rank",
                   id, &st, err, err_size) != 0)
        return -1;
    size_t cap = 0;
    int rc, oom = 0;
    while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
        if (run->nranks == cap) {
            cap = cap ? 2 * cap : 8;
            sb_kv_rank_row_t *grown = realloc (run->rank, cap * sizeof *grown);
            if (!grown) {
                oom = 1;
                break;
            }
            run->rank = grown;
        }
        sb_kv_rank_row_t *r = &run->rank[run->nranks++];
        memset (r, 0, sizeof *r);
        r->trial = sqlite3_column_int64 (st, 0);
        r->rank = sqlite3_column_int64 (st, 1);
        r->host = s_dup (st, 2, &oom);
        r->elapsed_s = sqlite3_column_double (st, 3);
        int64_t *counts[] = { &r->requests, &r->generated, &r->chatbot, &r->coding, &r->document, &r->interactive,
                              &r->responsive, &r->batch, &r->storage_entries, &r->storage_read_bytes,
                              &r->storage_write_bytes };
        for (int c = 0; c < (int) (sizeof counts / sizeof counts[0]); c++)
            *counts[c] = sqlite3_column_int64 (st, 4 + c);
        r->read_gib_per_s = sqlite3_column_double (st, 15);
        r->write_gib_per_s = sqlite3_column_double (st, 16);
        /* a number only: a string or an object there is no rate */
        r->has_avg_tokens = sqlite3_column_type (st, 17) == SQLITE_FLOAT || sqlite3_column_type (st, 17) == SQLITE_INTEGER;
        r->avg_tokens_per_s = r->has_avg_tokens ? sqlite3_column_double (st, 17) : 0;
        r->has_storage_tokens = sqlite3_column_type (st, 18) == SQLITE_FLOAT
                             || sqlite3_column_type (st, 18) == SQLITE_INTEGER;
        r->storage_tokens_per_s = r->has_storage_tokens ? sqlite3_column_double (st, 18) : 0;
        r->storage_check = s_dup (st, 19, &oom);
        r->results_json = s_dup (st, 20, &oom);
        if (!r->host || !r->results_json)
            oom = 1;
        if (oom)
            break;
    }
    sqlite3_finalize (st);
    if (oom) {
        snprintf (err, err_size, "kvcache run %lld: out of memory", (long long) id);
        return -1;
    }
    if (s_step_failed (db, id, rc, err, err_size) != 0)
        return -1;

    if (s_prepare (db, "SELECT trial, rank, what, mean_ms, p50_ms, p95_ms, p99_ms FROM kv_latency WHERE run_id = ?",
                   id, &st, err, err_size) != 0)
        return -1;
    while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
        int64_t trial = sqlite3_column_int64 (st, 0), rank = sqlite3_column_int64 (st, 1);
        const char *what = (const char *) sqlite3_column_text (st, 2);
        int w = 0;
        while (what && w < SB_KV_LAT_N && strcmp (what, s_lat_what[w]) != 0)
            w++;
        if (!what || w == SB_KV_LAT_N)
            continue;   /* a figure neither output shows (write_host, cpu_total, ...) */
        for (size_t i = 0; i < run->nranks; i++)
            if (run->rank[i].trial == trial && run->rank[i].rank == rank) {
                sb_kv_lat_row_t *l = &run->rank[i].lat[w];
                l->mean = sqlite3_column_double (st, 3);
                l->p50 = sqlite3_column_double (st, 4);
                l->p95 = sqlite3_column_double (st, 5);
                l->p99 = sqlite3_column_double (st, 6);
                l->has = 1;
                break;
            }
    }
    sqlite3_finalize (st);
    return s_step_failed (db, id, rc, err, err_size);
}

int
sb_kv_run_load (sqlite3 *db, int64_t run_id, sb_kv_run_t *run, char *err, size_t err_size)
{
    memset (run, 0, sizeof *run);
    run->id = run_id;
    int found = s_load_run (db, run_id, run, err, err_size);
    if (found <= 0)
        return found;
    return s_load_trials (db, run_id, run, err, err_size) == 0 && s_load_ranks (db, run_id, run, err, err_size) == 0
         ? 1 : -1;
}

void
sb_kv_run_fini (sb_kv_run_t *run)
{
    char *texts[] = { run->kind, run->workload, run->status, run->error, run->coordinator_host, run->model,
                      run->generation_mode, run->storage_check };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        free (texts[i]);
    for (size_t i = 0; i < run->nranks; i++) {
        free (run->rank[i].host);
        free (run->rank[i].storage_check);
        free (run->rank[i].results_json);
    }
    free (run->rank);
    free (run->trial);
    memset (run, 0, sizeof *run);
}

void
sb_kv_trial_sum (const sb_kv_run_t *run, int64_t trial, sb_kv_trial_sum_t *sum)
{
    memset (sum, 0, sizeof *sum);
    for (size_t i = 0; i < run->nranks; i++) {
        const sb_kv_rank_row_t *r = &run->rank[i];
        if (r->trial != trial)
            continue;
        sum->ranks++;
        sum->requests += r->requests;
        sum->generated += r->generated;
        sum->read_gib_per_s += r->read_gib_per_s;
        sum->write_gib_per_s += r->write_gib_per_s;
        sum->avg_tokens_per_s += r->avg_tokens_per_s;
        sum->storage_tokens_per_s += r->storage_tokens_per_s;
        sum->chatbot += r->chatbot;
        sum->coding += r->coding;
        sum->document += r->document;
        sum->interactive += r->interactive;
        sum->responsive += r->responsive;
        sum->batch += r->batch;
        for (int w = 0; w < SB_KV_LAT_N; w++) {
            if (!r->lat[w].has)
                continue;
            double v[3] = { r->lat[w].p50, r->lat[w].p95, r->lat[w].p99 };
            for (int k = 0; k < 3; k++)
                if (!sum->lat_has[w] || v[k] > sum->lat_max[w][k])
                    sum->lat_max[w][k] = v[k];
            sum->lat_has[w] = 1;
        }
    }
}

/* mlpstorage_py benchmarks/kvcache.py WORKLOAD_PARAMS (gpu-mem-gb 0 in every
 * Option; shardbench has no GPU tier) */
typedef struct {
    const char *model;
    int64_t     users;
    double      duration_s, cpu_mem_gb;
    int64_t     max_concurrent_allocs;
    const char *generation_mode;
} s_option_t;

static const s_option_t s_options[] = {
    { "llama3.1-8b", 200, 300, 0, 16, "none" },
    { "llama3.1-8b", 100, 300, 4, 16, "none" },
    { "llama3.1-70b-instruct", 70, 300, 0, 4, "none" },
};

static const char *
s_why (char *why, size_t why_size, const char *division, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));

static const char *
s_why (char *why, size_t why_size, const char *division, const char *fmt, ...)
{
    if (why && why_size) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (why, why_size, fmt, ap);
        va_end (ap);
    }
    return division;
}

const char *
sb_kv_division (const sb_kv_run_t *run, char *why, size_t why_size)
{
    /* config.KVCACHE_MODELS, KVCACHE_GENERATION_MODES */
    static const char *const models[] = { "tiny-1b", "mistral-7b", "llama2-7b", "llama3.1-8b",
                                          "llama3.1-70b-instruct" };
    static const char *const modes[] = { "none", "fast", "realistic" };
    int known = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        known |= !strcmp (run->model, models[i]);
    if (!known)
        return s_why (why, why_size, "invalid", "model %s is none of mlpstorage's KV-cache models", run->model);
    known = 0;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        known |= !strcmp (run->generation_mode, modes[i]);
    if (!known)
        return s_why (why, why_size, "invalid", "generation mode %s is none of none, fast, realistic",
                      run->generation_mode);
    if (run->users < 1)
        return s_why (why, why_size, "invalid", "users %lld: at least 1", (long long) run->users);
    if (run->duration_s < 30)
        return s_why (why, why_size, "invalid", "duration %g s: at least 30 s", run->duration_s);
    if (!strcmp (run->storage_check, "refused"))
        return s_why (why, why_size, "invalid", "the storage check refused the cache folder");
    if (run->option < 1 || run->option > 3) {
        /* settings of one's own: OPEN starts from an Option and cannot set
         * max-concurrent-allocs, so it must be one an Option has */
        for (size_t i = 0; i < sizeof s_options / sizeof s_options[0]; i++)
            if (run->max_concurrent_allocs == s_options[i].max_concurrent_allocs)
                return s_why (why, why_size, "open", "no Option (1, 2, 3) named: settings of one's own");
        return s_why (why, why_size, "invalid", "max_concurrent_allocs %lld is no Option's (16 or 4) and OPEN"
                      " cannot set it", (long long) run->max_concurrent_allocs);
    }
    const s_option_t *o = &s_options[run->option - 1];
    if (run->max_concurrent_allocs != o->max_concurrent_allocs)
        return s_why (why, why_size, "invalid", "max_concurrent_allocs %lld: Option %lld has %lld and OPEN cannot"
                      " set it", (long long) run->max_concurrent_allocs, (long long) run->option,
                      (long long) o->max_concurrent_allocs);
    if (strcmp (run->model, o->model) != 0)
        return s_why (why, why_size, "open", "model %s: Option %lld has %s", run->model, (long long) run->option,
                      o->model);
    if (run->users != o->users)
        return s_why (why, why_size, "open", "users %lld: Option %lld has %lld", (long long) run->users,
                      (long long) run->option, (long long) o->users);
    if (run->duration_s != o->duration_s)
        return s_why (why, why_size, "open", "duration %g s: Option %lld has %g s", run->duration_s,
                      (long long) run->option, o->duration_s);
    if (run->cpu_mem_gb != o->cpu_mem_gb)
        return s_why (why, why_size, "open", "cpu_mem_gb %g: Option %lld has %g", run->cpu_mem_gb,
                      (long long) run->option, o->cpu_mem_gb);
    if (strcmp (run->generation_mode, o->generation_mode) != 0)
        return s_why (why, why_size, "open", "generation mode %s: Option %lld has %s", run->generation_mode,
                      (long long) run->option, o->generation_mode);
    if (run->kv_seed != 42)
        return s_why (why, why_size, "open", "seed %lld: CLOSED runs seed 42", (long long) run->kv_seed);
    if (run->trials != 3)
        return s_why (why, why_size, "open", "trials %lld: CLOSED runs 3", (long long) run->trials);
    return s_why (why, why_size, "closed", "Option %lld as MLPerf Storage fixes it", (long long) run->option);
}
