/* kv_results_dir and kv_report: a KV-cache run (2 ranks x 2 trials) put in a
 * real result database, written as MLPerf Storage's kv_cache results
 * directory and read back: every path of the tree, the per-rank files byte
 * for byte, summary.json and the metadata parsed by Python's json module
 * and compared with the rows; the division by the Option's parameters; a
 * link planted in a leaf refused; the report's text exactly. */
#include <check.h>
#include "check_main.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kv_query.h"
#include "kv_report.h"
#include "kv_results_dir.h"
#include "report.h"
#include "resultdb.h"
#include "results_dir.h"

#define S_START 1780000000.0    /* 2026-05-28 20:26:40 UTC */

static char s_dir[64];

/* rank r of trial t: its JSON as sent (spacing and a trailing line end kept:
 * the file must hold exactly these bytes) */
static const char *const s_json[2][2] = {
    { "{\"summary\":  {\"avg_throughput_tokens_per_sec\": 100.5, \"storage_throughput_tokens_per_sec\": 250.25,"
      " \"cache_stats\": {\"tier_storage_read_bandwidth_gbps\": 1.5, \"storage_entries\": 40}}, \"rank\": 0}\n",
      "{\"summary\": {\"avg_throughput_tokens_per_sec\": 200.25, \"storage_throughput_tokens_per_sec\": 125.5,"
      " \"cache_stats\": {\"tier_storage_read_bandwidth_gbps\": 2.25, \"storage_entries\": 41}}, \"rank\": 1}" },
    { "{\"summary\": {\"avg_throughput_tokens_per_sec\": 150.0, \"storage_throughput_tokens_per_sec\": 300,"
      " \"cache_stats\": {\"tier_storage_read_bandwidth_gbps\": 1.25, \"storage_entries\": 42}}, \"rank\": 0}",
      "{\"summary\": {\"avg_throughput_tokens_per_sec\": 50.5, \"storage_throughput_tokens_per_sec\": 100.0,"
      " \"cache_stats\": {\"tier_storage_read_bandwidth_gbps\": 3.5, \"storage_entries\": 0}},"
      " \"note\": \"caf\\u00e9 \\\"quoted\\\"\", \"rank\": 1}" },
};

static void
s_setup (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/sbkvresXXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
    /* the leaf's name is the run's start in local time */
    ck_assert_int_eq (setenv ("TZ", "UTC", 1), 0);
    tzset ();
}

static void
s_teardown (void)
{
    sb_check_remove_tree (s_dir);
}

static void
s_exec (sqlite3 *h, const char *sql)
{
    char *msg = NULL;
    ck_assert_msg (sqlite3_exec (h, sql, NULL, NULL, &msg) == SQLITE_OK, "%s: %s", sql, msg ? msg : "");
}

/* Run 1, kind kvcache: option 1 with 2 trials (so OPEN: CLOSED runs 3), two
 * ranks on one worker host. storage_check as given. */
static sb_resultdb_t *
s_db (const char *storage_check)
{
    char path[128], err[512], cache[128], full[512];
    snprintf (path, sizeof path, "%s/r.db", s_dir);
    snprintf (cache, sizeof cache, "%s/cache", s_dir);
    ck_assert_int_eq (mkdir (cache, 0755), 0);
    snprintf (full, sizeof full, "kvcache:\n  cache_dir: %s\n  users: 200\n  trials: 2\n", cache);
    sb_resultdb_t *db = sb_resultdb_open (path, err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    const char *ovr[] = { "kvcache.trials=2" };
    sb_run_inputs_t in = { .version = "9.9", .command_line = "shardbench kvcache 1 kvcache.trials=2 --local 2",
                           .full_config = full, .overrides = ovr, .noverrides = 1 };
    sb_run_info_t info = { .kind = "kvcache", .workload = "kvcache-option-1", .config = "kvcache:\n  trials: 2\n",
                           .accelerators = 2, .hosts = 1, .workers = 1, .seed = 42, .inputs = &in };
    ck_assert_int_eq (sb_resultdb_run_begin (db, &info), 1);
    ck_assert_int_eq (sb_resultdb_add_worker (db, 1, 0, "hostA", 4242, 2, 0, 8, (int64_t) 16 << 30), 0);
    ck_assert_int_eq (sb_resultdb_add_host_info (db, 1, "hostA", "x86_64", "model name: X\n", "MemTotal: 1 kB\n"), 0);
    ck_assert_int_eq (sb_resultdb_run_finish (db, 1, "succeeded", NULL), 0);
    ck_assert_int_eq (sb_resultdb_sync (db), 0);
    sqlite3 *h = sb_resultdb_handle (db);
    char sql[4096];
    snprintf (sql, sizeof sql, "UPDATE runs SET started_at = %.1f, finished_at = %.1f WHERE id = 1", S_START,
              S_START + 800);
    s_exec (h, sql);
    snprintf (sql, sizeof sql, "INSERT INTO kv_runs VALUES (1, 1, 'llama3.1-8b', 200, 300.0, 2, 0.0, 16, 42, 'none',"
              " 131072, '%s', 4.25, 1.25, 20.5)", storage_check);
    s_exec (h, sql);
    snprintf (sql, sizeof sql, "INSERT INTO kv_trials VALUES (1, 1, %.1f, %.1f, 2, 30, 4000, 1000, 2000, 3.75, 1.25,"
              " 12.25), (1, 2, %.1f, %.1f, 2, 34, 5000, 1100, 2100, 4.75, 1.25, 20.5)", S_START + 90, S_START + 390,
              S_START + 400, S_START + 700);
    s_exec (h, sql);
    /* per trial and rank: requests, generated, per type, per class, users,
     * storage_entries, bandwidths */
    static const struct {
        int     trial, rank;
        int64_t requests, generated, chatbot, coding, document, interactive, responsive, batch, entries;
        double  read, write;
    } rows[] = {
        { 1, 0, 14, 1800, 7, 4, 3, 5, 6, 3, 40, 1.5, 0.5 },
        { 1, 1, 16, 2200, 8, 5, 3, 6, 6, 4, 41, 2.25, 0.75 },
        { 2, 0, 15, 2400, 6, 6, 3, 4, 7, 4, 42, 1.25, 0.25 },
        { 2, 1, 19, 2600, 9, 7, 3, 8, 7, 4, 0, 3.5, 1.0 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sqlite3_stmt *st;
        ck_assert_int_eq (sqlite3_prepare_v2 (h, "INSERT INTO kv_ranks VALUES (1, ?1, ?2, 'hostA', 300.0, NULL, NULL, ?3, ?4, ?5,"
                                              " ?6, ?7, ?8, ?9, ?10, 100, 60, 40, 70, 70, 60, 900, 1200, 300, 800,"
                                              " 2, 0, 0, 0, ?11, 0, 0, 0, 0, 5, 3, 1000, 2000, 0, 0, ?12, ?13,"
                                              " 'ok', ?14)", -1, &st, NULL),
                          SQLITE_OK);
        sqlite3_bind_int (st, 1, rows[i].trial);
        sqlite3_bind_int (st, 2, rows[i].rank);
        int64_t v[] = { rows[i].requests, rows[i].generated, rows[i].chatbot, rows[i].coding, rows[i].document,
                        rows[i].interactive, rows[i].responsive, rows[i].batch, rows[i].entries };
        for (int k = 0; k < 9; k++)
            sqlite3_bind_int64 (st, 3 + k, v[k]);
        sqlite3_bind_double (st, 12, rows[i].read);
        sqlite3_bind_double (st, 13, rows[i].write);
        sqlite3_bind_text (st, 14, s_json[rows[i].trial - 1][rows[i].rank], -1, SQLITE_STATIC);
        ck_assert_int_eq (sqlite3_step (st), SQLITE_DONE);
        sqlite3_finalize (st);
    }
    /* latency: trial, rank, what, mean, p50, p95, p99 */
    s_exec (h, "INSERT INTO kv_latency VALUES"
               " (1, 1, 0, 'request_storage', 5, 4, 10.5, 11, 12, 13), (1, 1, 1, 'request_storage', 6, 5, 12.25, 14, 15, 16),"
               " (1, 2, 0, 'request_storage', 4, 3, 9.0, 10, 11, 12), (1, 2, 1, 'request_storage', 8, 7, 20.5, 22, 23, 24),"
               " (1, 1, 0, 'read_total', 2, 1.5, 5, 6, 7, 8), (1, 1, 1, 'read_total', 2, 1.5, 6, 7, 8, 9),"
               " (1, 2, 0, 'read_total', 2, 1.5, 7, 8, 9, 10), (1, 2, 1, 'read_total', 2, 1.5, 8, 9, 10, 11),"
               " (1, 1, 0, 'read_device', 1, 1.25, 4, 4.5, 5, 6), (1, 1, 1, 'read_device', 1, 1.5, 5, 5.5, 6, 7),"
               " (1, 2, 0, 'read_device', 1, 1.0, 6, 6.5, 7, 8), (1, 2, 1, 'read_device', 1, 2.0, 7.5, 9, 10, 11),"
               " (1, 1, 0, 'write_device', 9, 10, 30, 35, 40, 41), (1, 1, 1, 'write_device', 9, 11, 31, 33, 40, 41),"
               " (1, 2, 0, 'write_device', 9, 12, 29, 36, 40, 41), (1, 2, 1, 'write_device', 9, 9, 28.5, 34, 40, 41),"
               " (1, 1, 0, 'write_host', 1, 1, 1, 1, 1, 1)");
    return db;
}

/* every path under dir down to depth levels, relative, sorted, one a line */
static char *
s_tree_to (const char *dir, int depth)
{
    char cmd[512];
    snprintf (cmd, sizeof cmd, "cd '%s' && find . -mindepth 1 -maxdepth %d | LC_ALL=C sort", dir, depth);
    FILE *p = popen (cmd, "r");
    ck_assert_ptr_nonnull (p);
    static char buf[8192];
    size_t n = fread (buf, 1, sizeof buf - 1, p);
    buf[n] = '\0';
    ck_assert_int_eq (pclose (p), 0);
    return buf;
}

static char *
s_tree (const char *dir)
{
    return s_tree_to (dir, 64);
}

static char *
s_slurp (const char *path, size_t *len)
{
    FILE *f = fopen (path, "rb");
    ck_assert_msg (f != NULL, "%s", path);
    static char buf[65536];
    *len = fread (buf, 1, sizeof buf - 1, f);
    buf[*len] = '\0';
    fclose (f);
    return buf;
}

/* what /usr/bin/python3 prints running script with argv[1] = path */
static char *
s_python (const char *script, const char *path)
{
    char file[128], cmd[512];
    snprintf (file, sizeof file, "%s/check.py", s_dir);
    FILE *f = fopen (file, "w");
    ck_assert_ptr_nonnull (f);
    fputs (script, f);
    fclose (f);
    snprintf (cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s'", file, path);
    FILE *p = popen (cmd, "r");
    ck_assert_ptr_nonnull (p);
    static char buf[8192];
    size_t n = fread (buf, 1, sizeof buf - 1, p);
    buf[n] = '\0';
    ck_assert_int_eq (pclose (p), 0);
    return buf;
}

START_TEST (test_layout)
{
    sb_resultdb_t *db = s_db ("ok");
    char root[128], leaf[4096], err[1024];
    snprintf (root, sizeof root, "%s/res", s_dir);
    sb_results_dir_opts_t o = { .root = root, .system = "sysA" };
    /* through sb_results_dir_write: the dispatch on runs.kind */
    ck_assert_msg (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, leaf, sizeof leaf, err, sizeof err) == 0,
                   "%s", err);
    char want_leaf[4096], real_root[4096];
    ck_assert_ptr_nonnull (realpath (root, real_root));
    snprintf (want_leaf, sizeof want_leaf, "%s/open/shardbench/results/sysA/kv_cache/llama3.1-8b/run/20260528_202640",
              real_root);
    ck_assert_str_eq (leaf, want_leaf);
    /* down to the leaf */
    ck_assert_str_eq (s_tree_to (root, 8),
                      "./mlperf-results.yaml\n"
                      "./open\n"
                      "./open/shardbench\n"
                      "./open/shardbench/results\n"
                      "./open/shardbench/results/sysA\n"
                      "./open/shardbench/results/sysA/kv_cache\n"
                      "./open/shardbench/results/sysA/kv_cache/llama3.1-8b\n"
                      "./open/shardbench/results/sysA/kv_cache/llama3.1-8b/run\n"
                      "./open/shardbench/results/sysA/kv_cache/llama3.1-8b/run/20260528_202640\n");
    ck_assert_str_eq (s_tree (leaf),
                      "./fs_separation.json\n"
                      "./kv_cache_20260528_202640_metadata.json\n"
                      "./kvcache_opt1_trial0_20260528_202640.stderr.log\n"
                      "./kvcache_opt1_trial0_20260528_202640.stdout.log\n"
                      "./kvcache_opt1_trial1_20260528_202640.stderr.log\n"
                      "./kvcache_opt1_trial1_20260528_202640.stdout.log\n"
                      "./option_1\n"
                      "./option_1/trial_0\n"
                      "./option_1/trial_0/rank_0\n"
                      "./option_1/trial_0/rank_0/kvcache_results_20260528_202810.json\n"
                      "./option_1/trial_0/rank_1\n"
                      "./option_1/trial_0/rank_1/kvcache_results_20260528_202810.json\n"
                      "./option_1/trial_1\n"
                      "./option_1/trial_1/rank_0\n"
                      "./option_1/trial_1/rank_0/kvcache_results_20260528_203320.json\n"
                      "./option_1/trial_1/rank_1\n"
                      "./option_1/trial_1/rank_1/kvcache_results_20260528_203320.json\n"
                      "./provenance.json\n"
                      "./summary.json\n");
    /* each rank's file: the bytes it sent */
    const char *ts[] = { "20260528_202810", "20260528_203320" };
    for (int t = 0; t < 2; t++)
        for (int r = 0; r < 2; r++) {
            char path[4200];
            size_t len;
            snprintf (path, sizeof path, "%s/option_1/trial_%d/rank_%d/kvcache_results_%s.json", leaf, t, r, ts[t]);
            const char *got = s_slurp (path, &len);
            ck_assert_uint_eq (len, strlen (s_json[t][r]));
            ck_assert_int_eq (memcmp (got, s_json[t][r], len), 0);
        }
    /* summary.json as reportgen and mlpstorage read it: per trial the
     * ranks summed (3.75, 4.75 GiB/s read), over the trials the mean
     * (4.25; summing every file, as an older mlpstorage did, would say 8.5),
     * the largest p95 (20.5 ms) */
    char path[4200];
    snprintf (path, sizeof path, "%s/summary.json", leaf);
    const char *py = "import json, sys\n"
                     "d = json.load(open(sys.argv[1]))\n"
                     "o = d['options']['1']\n"
                     "print(sorted(d))\n"
                     "print(d['schema_version'], d['run_datetime'], d['npernode'], d['host_count'], d['total_ranks'],"
                     " d['trials_per_option'], d['trials'], d['model'], d['performance_profile'], d['partial_failure'],"
                     " d['trial_failures'])\n"
                     "for k in ('aggregated_read_bandwidth_gbps', 'aggregated_write_bandwidth_gbps',"
                     " 'aggregated_avg_throughput_tokens_per_sec', 'aggregated_storage_throughput_tokens_per_sec',"
                     " 'aggregated_p95_latency_ms'):\n"
                     "    print(k, repr(d[k]), repr(o[k]))\n"
                     "print(o['option'], repr(o['aggregated_storage_read_p95_ms']), repr(o['aggregated_device_read_p95_ms']),"
                     " repr(o['aggregated_device_write_p95_ms']), o['rank_count'], o['trial_count'], o['partial_failure'],"
                     " o['missing_files'], [p[len(sys.argv[1]) - len('summary.json'):] for p in o['cpu_tier_ranks']])\n"
                     "s = d['shardbench']\n"
                     "print(s['run_id'], s['status'], s['storage_check'], s['verification'], s['verification_reason'],"
                     " s['read_gib_per_s'], s['write_gib_per_s'], s['storage_p95_ms'])\n";
    ck_assert_str_eq (s_python (py, path),
                      "['aggregated_avg_throughput_tokens_per_sec', 'aggregated_p95_latency_ms',"
                      " 'aggregated_read_bandwidth_gbps', 'aggregated_storage_throughput_tokens_per_sec',"
                      " 'aggregated_write_bandwidth_gbps', 'host_count', 'model', 'npernode', 'options',"
                      " 'partial_failure', 'performance_profile', 'run_datetime', 'schema_version', 'shardbench',"
                      " 'total_ranks', 'trial_failures', 'trials', 'trials_per_option']\n"
                      "1.0 20260528_202640 2 1 2 2 2 llama3.1-8b latency False []\n"
                      "aggregated_read_bandwidth_gbps 4.25 4.25\n"
                      "aggregated_write_bandwidth_gbps 1.25 1.25\n"
                      "aggregated_avg_throughput_tokens_per_sec 250.625 250.625\n"
                      "aggregated_storage_throughput_tokens_per_sec 387.875 387.875\n"
                      "aggregated_p95_latency_ms 20.5 20.5\n"
                      "1 8.0 7.5 31.0 2 2 False [] ['option_1/trial_1/rank_1/kvcache_results_20260528_203320.json']\n"
                      "1 succeeded ok open trials 2: CLOSED runs 3 4.25 1.25 20.5\n");
    /* the metadata mlpstorage's reportgen and run checker read */
    snprintf (path, sizeof path, "%s/kv_cache_20260528_202640_metadata.json", leaf);
    py = "import json, sys\n"
         "d = json.load(open(sys.argv[1]))\n"
         "p = d['parameters']\n"
         "print(d['benchmark_type'], d['model'], d['command'], d['run_datetime'], d['num_processes'], d['accelerator'],"
         " d['result_dir'] == sys.argv[1].rsplit('/', 1)[0], d['verification'], d['runtime'])\n"
         "print(p['model'], p['num_users'], p['duration'], p['gpu_mem_gb'], p['cpu_mem_gb'],"
         " p['cache_dir'].endswith('/cache'), p['generation_mode'], p['performance_profile'], p['max_concurrent_allocs'],"
         " p['option'], p['seed'], p['trials'])\n"
         "print(d['override_parameters'], d['system_info']['num_hosts'], d['system_info']['total_cores'],"
         " d['system_info']['hosts'][0]['hostname'], d['system_info']['hosts'][0]['cpu']['architecture'])\n"
         "a = d['args']\n"
         "print(a['mode'], a['closed'], a['orgname'], a['systemname'], a['hosts'], a['npernode'], d['executed_command'])\n"
         "print(len(d['command_output_files']), d['command_output_files'][1]['stdout'].rsplit('/', 1)[1])\n"
         "s = d['shardbench']\n"
         "print(s['run_id'], s['kind'], s['status'], s['error'], s['storage_check'], s['overrides'])\n"
         "print(sorted(d['metrics'].items()))\n";
    ck_assert_str_eq (s_python (py, path),
                      "kv_cache llama3.1-8b run 20260528_202640 2 None True open 800.0\n"
                      "llama3.1-8b 200 300.0 0.0 0.0 True none latency 16 1 42 2\n"
                      "{'kvcache.trials': '2'} 1 8 hostA x86_64\n"
                      "open False shardbench sysA ['hostA'] 2 shardbench kvcache 1 kvcache.trials=2 --local 2\n"
                      "2 kvcache_opt1_trial1_20260528_202640.stdout.log\n"
                      "1 kvcache succeeded None ok ['kvcache.trials=2']\n"
                      "[('aggregated_avg_throughput_tokens_per_sec', 250.625), ('aggregated_p95_latency_ms', 20.5),"
                      " ('aggregated_read_bandwidth_gbps', 4.25), ('aggregated_storage_throughput_tokens_per_sec',"
                      " 387.875), ('aggregated_write_bandwidth_gbps', 1.25)]\n");
    /* a trial's log: what each rank reported */
    size_t len;
    snprintf (path, sizeof path, "%s/kvcache_opt1_trial1_20260528_202640.stdout.log", leaf);
    ck_assert_str_eq (s_slurp (path, &len),
                      "rank 0 on hostA: 15 requests, 2400 tokens in 300.000 s; storage read 1.250000 GiB/s, write"
                      " 0.250000 GiB/s; storage check: ok\n"
                      "rank 1 on hostA: 19 requests, 2600 tokens in 300.000 s; storage read 3.500000 GiB/s, write"
                      " 1.000000 GiB/s; storage check: ok\n");
    snprintf (path, sizeof path, "%s/kvcache_opt1_trial1_20260528_202640.stderr.log", leaf);
    s_slurp (path, &len);
    ck_assert_uint_eq (len, 0);

    /* the same run again: the next second, the first leaf untouched */
    char leaf2[4096];
    ck_assert_msg (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, leaf2, sizeof leaf2, err, sizeof err) == 0,
                   "%s", err);
    ck_assert_ptr_nonnull (strstr (leaf2, "/run/20260528_202641"));
    sb_resultdb_destroy (&db);
}
END_TEST

/* mlpstorage's own reportgen over the layout, where a Python that imports
 * its package is at hand (MLPSTORAGE_PYTHON, default python3; PYTHONPATH
 * as set): it must find the run as a kv_cache run with the parameters and,
 * where it has the KVCache columns, the figures of summary.json. Without
 * mlpstorage the case says SKIP and passes. */
START_TEST (test_reportgen)
{
    const char *py = getenv ("MLPSTORAGE_PYTHON") ? getenv ("MLPSTORAGE_PYTHON") : "python3";
    char cmd[512];
    snprintf (cmd, sizeof cmd, "'%s' -c 'import mlpstorage_py.report_generator' >/dev/null 2>&1", py);
    if (system (cmd) != 0) {
        printf ("SKIP: %s cannot import mlpstorage_py (set MLPSTORAGE_PYTHON, PYTHONPATH)\n", py);
        return;
    }
    sb_resultdb_t *db = s_db ("ok");
    char root[128], leaf[4096], err[1024], script[256];
    snprintf (root, sizeof root, "%s/res", s_dir);
    sb_results_dir_opts_t o = { .root = root, .system = "sysA" };
    ck_assert_msg (sb_results_dir_write (sb_resultdb_handle (db), 1, &o, leaf, sizeof leaf, err, sizeof err) == 0,
                   "%s", err);
    /* the current reportgen takes the initialised root; an older one the
     * folder that holds kv_cache/ */
    snprintf (script, sizeof script, "%s/reportgen.py", s_dir);
    FILE *f = fopen (script, "w");
    ck_assert_ptr_nonnull (f);
    fputs ("import json, os, sys\n"
           "from argparse import Namespace\n"
           "from mlpstorage_py.report_generator import ReportGenerator\n"
           "root = sys.argv[1]\n"
           "out = sys.stdout\n"
           "for d in (root, os.path.join(root, 'open', 'shardbench', 'results', 'sysA')):\n"
           "    args = Namespace(debug=False, verbose=False, stream_log_level='WARNING', results_dir=d, output_dir=d)\n"
           "    sys.stdout = sys.stderr\n"
           "    try:\n"
           "        ReportGenerator(d, args).generate_reports()\n"
           "    except (SystemExit, Exception) as e:\n"
           "        print('reportgen', d, repr(e), file=sys.stderr)\n"
           "        continue\n"
           "    finally:\n"
           "        sys.stdout = out\n"
           "    p = os.path.join(d, 'results.json')\n"
           "    rows = json.load(open(p)) if os.path.exists(p) else []\n"
           "    kv = [r for r in rows if 'kv_cache' in r.values()]\n"
           "    if not kv:\n"
           "        continue\n"
           "    r = kv[0]\n"
           "    col = 'KVCache llama3.1-8b Storage Only - Read B/W (GiB/s)'\n"
           "    if col in r:\n"
           "        print('read', r[col])\n"
           "    else:\n"
           "        print('users', r['parameters']['num_users'], 'processes', r['num_processes'])\n"
           "    sys.exit(0)\n"
           "print('no kv_cache row')\n", f);
    ck_assert_int_eq (fclose (f), 0);
    char run[1024];
    snprintf (run, sizeof run, "'%s' '%s' '%s' 2>/dev/null", py, script, root);
    FILE *p = popen (run, "r");
    ck_assert_ptr_nonnull (p);
    char out[256] = "";
    size_t n = fread (out, 1, sizeof out - 1, p);
    out[n] = '\0';
    ck_assert_int_eq (pclose (p), 0);
    ck_assert_msg (!strcmp (out, "read 4.25\n") || !strcmp (out, "users 200 processes 2\n"), "reportgen: %s", out);
    printf ("mlpstorage reportgen: %s", out);
    sb_resultdb_destroy (&db);
}
END_TEST

/* A run that lost a rank in its second trial and never ran its third: the
 * layout says so as mlpstorage would (partial_failure, the missing rank
 * folder, the failed trial), the figures are over what was reported, and the
 * run's error is in the log of the trial it ended in. A kvcache run with no
 * kv_runs row is refused, naming the run. */
START_TEST (test_partial)
{
    sb_resultdb_t *db = s_db ("ok");
    sqlite3 *h = sb_resultdb_handle (db);
    s_exec (h, "DELETE FROM kv_ranks WHERE trial = 2 AND rank = 1");
    s_exec (h, "UPDATE kv_runs SET trials = 3");
    s_exec (h, "UPDATE runs SET status = 'failed', error = 'rank 1 lost its worker'");
    char root[128], leaf[4096], err[1024], path[4200];
    snprintf (root, sizeof root, "%s/res", s_dir);
    sb_results_dir_opts_t o = { .root = root, .system = "sysA" };
    ck_assert_msg (sb_results_dir_write (h, 1, &o, leaf, sizeof leaf, err, sizeof err) == 0, "%s", err);
    snprintf (path, sizeof path, "%s/summary.json", leaf);
    ck_assert_str_eq (s_python ("import json, sys\nd = json.load(open(sys.argv[1]))\no = d['options']['1']\n"
                                "print(d['partial_failure'], d['trial_failures'], o['trial_count'], o['partial_failure'],"
                                " [p[len(sys.argv[1]) - len('summary.json'):] for p in o['missing_files']],"
                                " o['aggregated_read_bandwidth_gbps'], o['aggregated_p95_latency_ms'], o['cpu_tier_ranks'],"
                                " d['shardbench']['status'])\n", path),
                      "True [2] 2 True ['option_1/trial_1/rank_1'] 2.5 12.25 [] failed\n");
    size_t len;
    snprintf (path, sizeof path, "%s/kvcache_opt1_trial2_20260528_202640.stderr.log", leaf);
    ck_assert_str_eq (s_slurp (path, &len), "shardbench: error: rank 1 lost its worker\n");
    snprintf (path, sizeof path, "%s/kvcache_opt1_trial1_20260528_202640.stderr.log", leaf);
    s_slurp (path, &len);
    ck_assert_uint_eq (len, 0);
    /* no kv_runs row: nothing to lay out */
    s_exec (h, "DELETE FROM kv_runs");
    ck_assert_int_eq (sb_results_dir_write (h, 1, &o, leaf, sizeof leaf, err, sizeof err), -1);
    ck_assert_str_eq (err, "results directory: run 1 (kvcache) has no kv_runs row: no KV-cache run was recorded");
    sb_resultdb_destroy (&db);
}
END_TEST

/* A link someone put in a leaf given: never written through. */
START_TEST (test_planted_links)
{
    sb_resultdb_t *db = s_db ("ok");
    char leaf[128], elsewhere[128], link[192], out[4096], err[1024];
    snprintf (leaf, sizeof leaf, "%s/leaf", s_dir);
    snprintf (elsewhere, sizeof elsewhere, "%s/elsewhere", s_dir);
    ck_assert_int_eq (mkdir (leaf, 0755), 0);
    ck_assert_int_eq (mkdir (elsewhere, 0755), 0);
    snprintf (link, sizeof link, "%s/option_1", leaf);
    ck_assert_int_eq (symlink (elsewhere, link), 0);
    sb_results_dir_opts_t o = { .leaf = leaf };
    ck_assert_int_eq (sb_kv_results_dir_write (sb_resultdb_handle (db), 1, &o, out, sizeof out, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "option_1 is a symbolic link, not a folder: refused") != NULL, "%s", err);
    ck_assert_str_eq (s_tree (elsewhere), "");
    /* a results file's name taken by a link: the leaf holds a run already */
    ck_assert_int_eq (unlink (link), 0);
    snprintf (link, sizeof link, "%s/summary.json", leaf);
    ck_assert_int_eq (symlink ("/etc/passwd", link), 0);
    ck_assert_int_eq (sb_kv_results_dir_write (sb_resultdb_handle (db), 1, &o, out, sizeof out, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "holds the results of a run already (summary.json)") != NULL, "%s", err);
    /* and the leaf, once clear, takes the run */
    ck_assert_int_eq (unlink (link), 0);
    ck_assert_msg (sb_kv_results_dir_write (sb_resultdb_handle (db), 1, &o, out, sizeof out, err, sizeof err) == 0,
                   "%s", err);
    ck_assert_str_eq (s_tree (leaf),
                      "./fs_separation.json\n"
                      "./kv_cache_20260528_202640_metadata.json\n"
                      "./kvcache_opt1_trial0_20260528_202640.stderr.log\n"
                      "./kvcache_opt1_trial0_20260528_202640.stdout.log\n"
                      "./kvcache_opt1_trial1_20260528_202640.stderr.log\n"
                      "./kvcache_opt1_trial1_20260528_202640.stdout.log\n"
                      "./option_1\n"
                      "./option_1/trial_0\n"
                      "./option_1/trial_0/rank_0\n"
                      "./option_1/trial_0/rank_0/kvcache_results_20260528_202810.json\n"
                      "./option_1/trial_0/rank_1\n"
                      "./option_1/trial_0/rank_1/kvcache_results_20260528_202810.json\n"
                      "./option_1/trial_1\n"
                      "./option_1/trial_1/rank_0\n"
                      "./option_1/trial_1/rank_0/kvcache_results_20260528_203320.json\n"
                      "./option_1/trial_1/rank_1\n"
                      "./option_1/trial_1/rank_1/kvcache_results_20260528_203320.json\n"
                      "./provenance.json\n"
                      "./summary.json\n");
    /* a second time into the same leaf: refused, nothing replaced */
    ck_assert_int_eq (sb_kv_results_dir_write (sb_resultdb_handle (db), 1, &o, out, sizeof out, err, sizeof err), -1);
    ck_assert_msg (strstr (err, "holds the results of a run already") != NULL, "%s", err);
    sb_resultdb_destroy (&db);
}
END_TEST

/* The division by the Option's parameters (mlpstorage's WORKLOAD_PARAMS,
 * the CLOSED sequence locks, what OPEN may change). */
START_TEST (test_division)
{
    char why[256];
    sb_kv_run_t r = { .option = 1, .model = "llama3.1-8b", .users = 200, .duration_s = 300, .cpu_mem_gb = 0,
                      .max_concurrent_allocs = 16, .kv_seed = 42, .trials = 3, .generation_mode = "none",
                      .storage_check = "ok" };
    ck_assert_str_eq (sb_kv_division (&r, why, sizeof why), "closed");
    ck_assert_str_eq (why, "Option 1 as MLPerf Storage fixes it");
    r.storage_check = "unverifiable";
    ck_assert_str_eq (sb_kv_division (&r, NULL, 0), "closed");
    r.users = 100;
    ck_assert_str_eq (sb_kv_division (&r, why, sizeof why), "open");
    ck_assert_str_eq (why, "users 100: Option 1 has 200");
    r.option = 2;       /* 100 users is Option 2's, with a 4 GiB CPU tier */
    ck_assert_str_eq (sb_kv_division (&r, why, sizeof why), "open");
    ck_assert_str_eq (why, "cpu_mem_gb 0: Option 2 has 4");
    r.cpu_mem_gb = 4;
    ck_assert_str_eq (sb_kv_division (&r, NULL, 0), "closed");
    r.kv_seed = 7;
    ck_assert_str_eq (sb_kv_division (&r, why, sizeof why), "open");
    ck_assert_str_eq (why, "seed 7: CLOSED runs seed 42");
    r.kv_seed = 42;
    r.max_concurrent_allocs = 8;    /* OPEN cannot set it */
    ck_assert_str_eq (sb_kv_division (&r, why, sizeof why), "invalid");
    ck_assert_str_eq (why, "max_concurrent_allocs 8: Option 2 has 16 and OPEN cannot set it");
    sb_kv_run_t o3 = { .option = 3, .model = "llama3.1-70b-instruct", .users = 70, .duration_s = 300,
                       .max_concurrent_allocs = 4, .kv_seed = 42, .trials = 3, .generation_mode = "none",
                       .storage_check = "ok" };
    ck_assert_str_eq (sb_kv_division (&o3, NULL, 0), "closed");
    o3.generation_mode = "realistic";
    ck_assert_str_eq (sb_kv_division (&o3, why, sizeof why), "open");
    ck_assert_str_eq (why, "generation mode realistic: Option 3 has none");
    o3.generation_mode = "slow";
    ck_assert_str_eq (sb_kv_division (&o3, NULL, 0), "invalid");
    o3.generation_mode = "none";
    o3.model = "llama9";
    ck_assert_str_eq (sb_kv_division (&o3, why, sizeof why), "invalid");
    ck_assert_str_eq (why, "model llama9 is none of mlpstorage's KV-cache models");
    o3.model = "llama3.1-70b-instruct";
    o3.duration_s = 10;
    ck_assert_str_eq (sb_kv_division (&o3, NULL, 0), "invalid");
    o3.duration_s = 300;
    o3.storage_check = "refused";
    ck_assert_str_eq (sb_kv_division (&o3, why, sizeof why), "invalid");
    /* settings of one's own: open when max-concurrent-allocs is an Option's */
    sb_kv_run_t own = { .option = 0, .model = "tiny-1b", .users = 5, .duration_s = 60, .max_concurrent_allocs = 4,
                        .kv_seed = 1, .trials = 1, .generation_mode = "fast", .storage_check = "ok" };
    ck_assert_str_eq (sb_kv_division (&own, NULL, 0), "open");
    own.max_concurrent_allocs = 0;
    ck_assert_str_eq (sb_kv_division (&own, NULL, 0), "invalid");
}
END_TEST

/* The report of the run: exact text; a run that is no KV-cache run refused. */
START_TEST (test_report_text)
{
    sb_resultdb_t *db = s_db ("unverifiable");
    char path[128];
    snprintf (path, sizeof path, "%s/report.txt", s_dir);
    FILE *f = fopen (path, "w+");
    ck_assert_ptr_nonnull (f);
    ck_assert_int_eq (sb_kv_report_text (sb_resultdb_handle (db), 1, f), 0);
    ck_assert_int_eq (fclose (f), 0);
    size_t len;
    ck_assert_str_eq (s_slurp (path, &len),
                      "\nshardbench kvcache run 1: option 1, model llama3.1-8b, 200 users per rank, 300 s per trial,"
                      " 2 trial(s) asked, 2 rank(s) on 1 host(s), seed 42\n"
                      "  status: succeeded\n"
                      "  storage check: unverifiable\n"
                      "  trial ranks  requests     tokens/s read GiB/s write GiB/s storage p95 ms"
                      " write dev p50/p95/p99 ms  read dev p50/p95/p99 ms\n"
                      "      1     2        30        13.33     3.7500      1.2500         12.250"
                      "     11.000/31.000/35.000        1.500/5.000/5.500\n"
                      "      2     2        34        16.67     4.7500      1.2500         20.500"
                      "     12.000/29.000/36.000        2.000/7.500/9.000\n"
                      "  run: storage read 4.2500 GiB/s, write 1.2500 GiB/s, 15.00 tokens/s (mean over 2 trial(s)),"
                      " storage p95 20.500 ms (largest of the ranks')\n"
                      "  requests by user type: chatbot 30, coding 22, document 12; by QoS: interactive 23,"
                      " responsive 26, batch 15\n"
                      "  MLPerf Storage division: open (trials 2: CLOSED runs 3)\n");
    /* sb_report_print goes the same way for a kvcache run */
    snprintf (path, sizeof path, "%s/report2.txt", s_dir);
    f = fopen (path, "w+");
    ck_assert_int_eq (sb_report_print (sb_resultdb_handle (db), 1, f), 0);
    ck_assert_int_eq (fclose (f), 0);
    char first[8192];
    snprintf (first, sizeof first, "%s", s_slurp (path, &len));
    snprintf (path, sizeof path, "%s/report.txt", s_dir);
    ck_assert_str_eq (first, s_slurp (path, &len));
    /* JSON: parsed, the run's figures */
    snprintf (path, sizeof path, "%s/report.json", s_dir);
    f = fopen (path, "w+");
    ck_assert_int_eq (sb_report_json (sb_resultdb_handle (db), 1, f), 0);
    ck_assert_int_eq (fclose (f), 0);
    ck_assert_str_eq (s_python ("import json, sys\nd = json.load(open(sys.argv[1]))\n"
                                "print(d['read_gib_per_s'], d['write_gib_per_s'], d['storage_p95_ms'], d['division'],"
                                " [(t['trial'], t['read_gib_per_s'], t['write_device_ms']['p95']) for t in d['trials']],"
                                " d['requests_by_qos'])\n", path),
                      "4.25 1.25 20.5 open [(1, 3.75, 31), (2, 4.75, 29)] {'interactive': 23, 'responsive': 26,"
                      " 'batch': 15}\n");
    /* the HTML page: the KV-cache section with the trial rows */
    snprintf (path, sizeof path, "%s/report.html", s_dir);
    f = fopen (path, "w+");
    ck_assert_int_eq (sb_report_html (sb_resultdb_handle (db), 1, f), 0);
    ck_assert_int_eq (fclose (f), 0);
    const char *html = s_slurp (path, &len);
    ck_assert_ptr_nonnull (strstr (html, "<h1>shardbench kvcache run 1: kvcache-option-1</h1>\n<section class=\"kvcache\">"));
    ck_assert_ptr_nonnull (strstr (html, "<tr><td>2</td><td>2</td><td>34</td><td>16.67</td><td>4.7500</td>"
                                         "<td>1.2500</td><td>20.500</td><td>12.000/29.000/36.000</td>"
                                         "<td>2.000/7.500/9.000</td></tr>\n"));
    ck_assert_ptr_nonnull (strstr (html, "MLPerf Storage division: open (trials 2: CLOSED runs 3)."));
    ck_assert_ptr_nonnull (strstr (html, "</section>\n</body>\n</html>\n"));
    /* no such run */
    f = fopen ("/dev/null", "w");
    ck_assert_int_eq (sb_kv_report_text (sb_resultdb_handle (db), 2, f), -1);
    fclose (f);
    sb_resultdb_destroy (&db);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("kv_results_dir");
    TCase *tc = tcase_create ("core");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_layout);
    tcase_add_test (tc, test_partial);
    tcase_add_test (tc, test_reportgen);
    tcase_add_test (tc, test_planted_links);
    tcase_add_test (tc, test_division);
    tcase_add_test (tc, test_report_text);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
