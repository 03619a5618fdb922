/* report_html: HTML escaping, and a page built from a database whose strings
 * hold markup, exact strings. */
#include <check.h>
#include "check_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "resultdb.h"

/* what sb_report_html_escape writes for s */
static char *
s_escaped (const char *s)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&buf, &size);
    ck_assert_ptr_nonnull (f);
    sb_report_html_escape (f, s);
    ck_assert_int_eq (fclose (f), 0);
    return buf;
}

START_TEST (test_escape)
{
    static const struct { const char *in, *out; } cases[] = {
        { "plain text 1.5 MiB/s", "plain text 1.5 MiB/s" },
        { "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;" },
        { "a & b", "a &amp; b" },
        { "\"quoted\" 'single'", "&quot;quoted&quot; &#39;single&#39;" },
        { "&amp;", "&amp;amp;" },
        { "", "" },
        { "caf\xc3\xa9", "caf\xc3\xa9" },   /* UTF-8 passes through */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = s_escaped (cases[i].in);
        ck_assert_str_eq (got, cases[i].out);
        free (got);
    }
    char *got = s_escaped (NULL);
    ck_assert_str_eq (got, "");
    free (got);
}
END_TEST

/* a page built from a database; NULL when sb_report_html failed */
static char *
s_page (sqlite3 *db, int64_t run_id)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&buf, &size);
    ck_assert_ptr_nonnull (f);
    int rc = sb_report_html (db, run_id, f);
    ck_assert_int_eq (fclose (f), 0);
    if (rc != 0) {
        free (buf);
        return NULL;
    }
    return buf;
}

START_TEST (test_page)
{
    char err[256];
    sb_resultdb_t *rdb = sb_resultdb_open (":memory:", err, sizeof err);
    ck_assert_msg (rdb != NULL, "%s", err);
    sqlite3 *db = sb_resultdb_handle (rdb);
    ck_assert_int_eq (sqlite3_exec (db,
        "INSERT INTO runs (id, kind, workload, config, status, error, started_at, finished_at, accelerators, hosts,"
        " seed, workers, au_threshold, au_mean, passed) VALUES"
        " (1, 'train', '<b>wl</b>', 'dataset:\n  num_files_train: 8\nmodel:\n  name: <m>\n', 'failed',"
        " 'x < y & \"z\"', 100, 110, 2, 1, 1, 1, 0.9, 0.5, 0),"
        " (2, 'checkpoint', 'ck', '', 'succeeded', NULL, 100, 110, 2, 1, 1, 1, NULL, NULL, NULL),"
        " (4, 'datagen', 'dg', '', 'succeeded', NULL, 100, 110, 2, 1, 1, 1, NULL, NULL, NULL);"
        "INSERT INTO errors (run_id, t, op, message) VALUES (1, 105, 'read', 'boom');"
        "INSERT INTO epochs (run_id, epoch, samples, dropped, bytes, duration_s, samples_per_s, mib_per_s, mb_per_s,"
        " au_mean) VALUES (1, 1, 10, 0, 100, 1, 10, 0.1, 0.1, 0.5), (1, 2, 10, 0, 100, 1, 10, 0.1, 0.1, 0.5);"
        "INSERT INTO read_latency VALUES (1, 1, 20, 21, 4), (1, 1, 40, 42, 6), (1, 2, 20, 21, 10);",
        NULL, NULL, NULL), SQLITE_OK);
    char *page = s_page (db, 1);
    ck_assert_ptr_nonnull (page);
    ck_assert_ptr_nonnull (strstr (page, "<title>shardbench run 1: &lt;b&gt;wl&lt;/b&gt;</title>"));
    ck_assert_ptr_nonnull (strstr (page, "<td>x &lt; y &amp; &quot;z&quot;</td>"));
    ck_assert_ptr_null (strstr (page, "<b>wl"));
    ck_assert_ptr_nonnull (strstr (page, "<td id=\"verdict\" class=\"none\">no verdict (run did not finish)</td>"));
    /* two AU bars; latency 20 us (14 samples) and 40 us (6) fall in two bins */
    size_t bars = 0, lat = 0;
    for (const char *p = page; (p = strstr (p, "class=\"au-bar\"")); p++)
        bars++;
    for (const char *p = page; (p = strstr (p, "class=\"lat-bar\"")); p++)
        lat++;
    ck_assert_uint_eq (bars, 2);
    ck_assert_uint_eq (lat, 2);
    ck_assert_ptr_nonnull (strstr (page, "<title>16 to 24 us: 14 samples</title>"));
    ck_assert_ptr_nonnull (strstr (page, "<title>32 to 48 us: 6 samples</title>"));
    ck_assert_ptr_nonnull (strstr (page, "no throughput samples recorded for this run"));
    ck_assert_ptr_nonnull (strstr (page, "no object-store endpoints in this run (file or synthetic storage)"));
    /* a failed run shows its error, then its errors, before the
     * summary; charts with no data are left out with a line saying why */
    const char *alert = strstr (page, "<div id=\"run-error\" class=\"alert\"><strong>Run failed</strong>: "
                                      "x &lt; y &amp; &quot;z&quot;</div>");
    const char *errors = strstr (page, "<table id=\"errors\""), *summary = strstr (page, "<table id=\"summary\"");
    ck_assert_ptr_nonnull (alert);
    ck_assert_ptr_nonnull (errors);
    ck_assert_ptr_nonnull (summary);
    ck_assert (alert < errors && errors < summary);
    ck_assert_ptr_null (strstr (page, "id=\"chart-throughput\""));
    ck_assert_ptr_nonnull (strstr (page, "<p class=\"no-chart\" data-chart=\"chart-throughput\">Read throughput per"
                                         " host (MiB/s): no throughput samples recorded for this run.</p>"));
    ck_assert_ptr_null (strstr (page, "id=\"chart-endpoints\""));
    /* read latency per epoch: epoch 1 has 4 samples in [20, 21) us and 6 in
     * [40, 42), so from its 6th sample on the middle of the second bucket;
     * epoch 2 has 10 in [20, 21) */
    ck_assert_ptr_nonnull (strstr (page, "<tr><td>1</td><td>10</td><td>0.041</td><td>0.041</td><td>0.041</td>"
                                         "<td>0.041</td></tr>"));
    ck_assert_ptr_nonnull (strstr (page, "<tr><td>2</td><td>10</td><td>0.021</td><td>0.021</td><td>0.021</td>"
                                         "<td>0.021</td></tr>"));
    /* the parameters of runs.config, key by key */
    ck_assert_ptr_nonnull (strstr (page, "<tr><th>dataset.num_files_train</th><td>8</td></tr>"));
    ck_assert_ptr_nonnull (strstr (page, "<tr><th>model.name</th><td>&lt;m&gt;</td></tr>"));
    /* nothing recorded of how the run was started: a line says so */
    ck_assert_ptr_nonnull (strstr (page, "<td id=\"command-line\">not recorded"));
    free (page);
    /* where the database records them (schema 11: run_inputs and
     * run_overrides, made here as that schema makes them when this one
     * lacks them), the version, command line, overrides and every default
     * of the run are shown, escaped, the keys it was given in bold */
    ck_assert_int_eq (sqlite3_exec (db,
        "CREATE TABLE IF NOT EXISTS run_inputs (run_id INTEGER PRIMARY KEY REFERENCES runs(id),"
        " version TEXT NOT NULL, command_line TEXT NOT NULL, full_config TEXT NOT NULL);"
        "CREATE TABLE IF NOT EXISTS run_overrides (run_id INTEGER NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL,"
        " override TEXT NOT NULL, PRIMARY KEY (run_id, seq));"
        "INSERT INTO run_inputs (run_id, version, command_line, full_config) VALUES (1, '9.9.9',"
        " 'shardbench run <x> --db a.db', 'dataset:\n  num_files_train: 8\n  num_files_eval: 0\n"
        "model:\n  name: <m>\n');"
        "INSERT INTO run_overrides (run_id, seq, override) VALUES (1, 2, 'b=2'), (1, 1, 'a=<1>');",
        NULL, NULL, NULL), SQLITE_OK);
    page = s_page (db, 1);
    ck_assert_ptr_nonnull (page);
    ck_assert_ptr_nonnull (strstr (page, "<td id=\"command-line\"><code>shardbench run &lt;x&gt; --db a.db</code></td>"));
    ck_assert_ptr_nonnull (strstr (page, "<td id=\"run-version\">9.9.9</td>"));
    ck_assert_ptr_nonnull (strstr (page, "<td id=\"overrides\"><code>a=&lt;1&gt;</code><br><code>b=2</code></td>"));
    ck_assert_ptr_nonnull (strstr (page, "<tr class=\"given\"><th>dataset.num_files_train</th><td>8</td></tr>"));
    ck_assert_ptr_nonnull (strstr (page, "<tr><th>dataset.num_files_eval</th><td>0</td></tr>"));
    free (page);
    /* a run's label and its place in a series */
    ck_assert_int_eq (sqlite3_exec (db,
        "INSERT INTO series (id, kind, workload, label, runs, warmup, status, started_at)"
        " VALUES (7, 'train', 'wl', 'a<b', 6, 1, 'succeeded', 100);"
        "UPDATE runs SET label = 'a<b', series_id = 7, series_index = 1, warmup = 1 WHERE id = 1;",
        NULL, NULL, NULL), SQLITE_OK);
    page = s_page (db, 1);
    ck_assert_ptr_nonnull (page);
    ck_assert_ptr_nonnull (strstr (page, "<tr><th>label</th><td id=\"label\">a&lt;b</td></tr>\n"
                                         "<tr><th>series</th><td id=\"series\">series 7: run 1 of 6, warm-up</td></tr>"));
    free (page);
    /* a checkpoint run with no checkpoint rows renders, saying so */
    page = s_page (db, 2);
    ck_assert_ptr_nonnull (page);
    ck_assert_ptr_nonnull (strstr (page, "<h1>shardbench checkpoint run 2: ck</h1>"));
    ck_assert_ptr_nonnull (strstr (page, "No checkpoint finished in this run."));
    ck_assert_ptr_null (strstr (page, "<svg"));
    free (page);
    ck_assert_ptr_null (s_page (db, 4));    /* a datagen run */
    ck_assert_ptr_null (s_page (db, 3));    /* no such run */
    sb_resultdb_destroy (&rdb);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("report_html");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_escape);
    tcase_add_test (tc, test_page);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
