/* openmetrics: the exposition of a live model fed through live.h, exact
 * lines; label escaping, credentials cut from endpoints, the histogram
 * buckets; the HTTP server's answers (metrics_server.h) on loopback. */
#include <check.h>
#include "check_main.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "histogram.h"
#include "live.h"
#include "metrics_server.h"
#include "openmetrics.h"

/* The exposition of live at now, as a string (owned by the caller). */
static char *
s_render (const sb_live_t *live, double now)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    ck_assert_ptr_nonnull (f);
    ck_assert_int_eq (sb_openmetrics_render (live, now, f), 0);
    ck_assert_int_eq (fclose (f), 0);
    return buf;
}

/* text holds line as a whole line */
static void
s_has_line (const char *text, const char *line)
{
    size_t n = strlen (line);
    for (const char *p = text; (p = strstr (p, line)); p++)
        if ((p == text || p[-1] == '\n') && p[n] == '\n')
            return;
    fprintf (stderr, "--- in:\n%s---\n", text);
    ck_abort_msg ("line not found: %s", line);
}

static void
s_lacks (const char *text, const char *what)
{
    if (strstr (text, what)) {
        fprintf (stderr, "--- in:\n%s---\n", text);
        ck_abort_msg ("'%s' found", what);
    }
}

START_TEST (test_label)
{
    char out[64];
    ck_assert_str_eq (sb_openmetrics_label ("node-a", out, sizeof out), "node-a");
    ck_assert_str_eq (sb_openmetrics_label ("a\"b\\c\nd", out, sizeof out), "a\\\"b\\\\c\\nd");
    /* a control byte and a byte that is not UTF-8: U+FFFD; UTF-8 kept */
    ck_assert_str_eq (sb_openmetrics_label ("x\001y\377z\xc3\xa9", out, sizeof out),
                      "x\xef\xbf\xbdy\xef\xbf\xbdz\xc3\xa9");
    /* cut before an escape that does not fit, never inside it */
    char small[4];
    ck_assert_str_eq (sb_openmetrics_label ("ab\"c", small, sizeof small), "ab");
    ck_assert_str_eq (sb_openmetrics_label (NULL, out, sizeof out), "");
}
END_TEST

START_TEST (test_endpoint)
{
    char out[256];
    ck_assert_str_eq (sb_openmetrics_endpoint ("https://user:p@ss@s3.example:9000/bucket?X-Amz-Signature=abc#f", out,
                                               sizeof out), "https://s3.example:9000/bucket");
    ck_assert_str_eq (sb_openmetrics_endpoint ("http://127.0.0.1:4568", out, sizeof out), "http://127.0.0.1:4568");
    ck_assert_str_eq (sb_openmetrics_endpoint ("s3://bucket/prefix?token=1", out, sizeof out), "s3://bucket/prefix");
    ck_assert_str_eq (sb_openmetrics_endpoint ("key:secret@host:80", out, sizeof out), "host:80");
    ck_assert_str_eq (sb_openmetrics_endpoint ("http://h/a@b", out, sizeof out), "http://h/a@b");  /* '@' in a path */
}
END_TEST

START_TEST (test_buckets)
{
    /* each bound starts a bin: a bucket holds whole bins */
    for (size_t b = 0; b < SB_OPENMETRICS_BUCKETS; b++) {
        ck_assert_uint_eq (sb_histogram_bin_low (sb_histogram_bin (sb_openmetrics_bucket_us[b])),
                           sb_openmetrics_bucket_us[b]);
        if (b)
            ck_assert_uint_gt (sb_openmetrics_bucket_us[b], sb_openmetrics_bucket_us[b - 1]);
    }
}
END_TEST

START_TEST (test_render_empty)
{
    char *t = s_render (NULL, 0);
    s_has_line (t, "# HELP shardbench_phase_info The phase the run is in (listing, datagen, train, eval,"
                   " checkpoint_write, checkpoint_read; none before the first): 1");
    s_has_line (t, "# TYPE shardbench_phase_info gauge");
    s_has_line (t, "shardbench_phase_info{phase=\"none\"} 1");
    s_has_line (t, "shardbench_ranks 0");
    s_has_line (t, "# TYPE shardbench_samples_total counter");
    s_has_line (t, "shardbench_samples_total 0");
    s_has_line (t, "# TYPE shardbench_host_read_latency_seconds histogram");
    s_has_line (t, "# TYPE shardbench_endpoint_latency_seconds histogram");
    /* not known: no sample */
    s_lacks (t, "\nshardbench_epoch_au_ratio ");
    s_lacks (t, "\nshardbench_run_eta_seconds ");
    s_lacks (t, "\nshardbench_progress_ratio ");
    s_lacks (t, "{rank=");
    free (t);
}
END_TEST

/* 4 ranks: node-a holds 0-1, a host with a hostile name 2-3; one train
 * epoch of 10 steps, rank 0 done, an object store endpoint with
 * credentials in its URL */
static sb_live_t *
s_model (double t0)
{
    sb_live_t *live = sb_live_new (4, 1.5);
    ck_assert_ptr_nonnull (live);
    ck_assert_int_eq (sb_live_join (live, 0, 2, "node-a", t0), 0);
    ck_assert_int_eq (sb_live_join (live, 2, 2, "we\"ird\\host\n", t0), 0);
    sb_live_phase (live, "train", 1, 2, 10, 0, 2, t0);
    for (uint64_t r = 0; r < 4; r++) {
        sb_live_interval_t d = { .samples = 2 * (r + 1), .bytes = 4096 * 2 * (r + 1), .reads = 2 * (r + 1),
                                 .read_ns = 1000000 * (r + 1), .compute_ns = 500000000 * (r + 1), .steps = r + 1,
                                 .metric_compute_ns = 500000000 * (r + 1), .io_wait_ns = 250000000,
                                 .barrier_ns = 125000000, .in_flight = r };
        sb_live_stats (live, r, &d, t0 + 1);
        sb_live_heard (live, r, 1, t0 + 1);
    }
    /* rank 0 ends the epoch: 10 us x3, 100 us x2, 5 s, 100 s */
    uint64_t bins[SB_HISTOGRAM_BINS] = { 0 };
    bins[sb_histogram_bin (10)] = 3;
    bins[sb_histogram_bin (100)] = 2;
    bins[sb_histogram_bin (5000000)] = 1;
    bins[sb_histogram_bin (100000000)] = 1;
    sb_live_rank_done_t done = { .dlio_au_pct = 87.5, .started_at = t0, .finished_at = t0 + 2, .compute_s = 0.5,
                                 .io_wait_s = 0.25, .barrier_s = 0.125, .read_latency = bins,
                                 .read_latency_bins = SB_HISTOGRAM_BINS };
    sb_live_rank_done (live, 0, &done, t0 + 2);
    uint64_t ep[SB_HISTOGRAM_BINS] = { 0 };
    ep[sb_histogram_bin (2000)] = 5;
    sb_live_endpoint (live, 1, "https://AKIAKEY:s3cr3t@s3.example:9000/bucket?X-Amz-Signature=abc", 7, 70000, 2, 1,
                      ep, SB_HISTOGRAM_BINS);
    return live;
}

START_TEST (test_render_model)
{
    double t0 = 1000;
    sb_live_t *live = s_model (t0);
    char *t = s_render (live, t0 + 2);
    /* the run */
    s_has_line (t, "shardbench_phase_info{phase=\"train\"} 1");
    s_has_line (t, "shardbench_epoch 1");
    s_has_line (t, "shardbench_epochs 2");
    s_has_line (t, "shardbench_steps 10");
    s_has_line (t, "shardbench_ranks 4");
    s_has_line (t, "shardbench_hosts 2");
    s_has_line (t, "shardbench_ranks_done 1");
    /* samples 2+4+6+8; bytes x4096 */
    s_has_line (t, "shardbench_samples_total 20");
    s_has_line (t, "shardbench_bytes_total 81920");
    s_has_line (t, "shardbench_phase_samples 20");
    s_has_line (t, "shardbench_errors_total 2");
    s_has_line (t, "shardbench_retries_total 1");
    s_has_line (t, "shardbench_silent_hosts 0");
    /* per rank: labels rank and host, the host's name escaped */
    s_has_line (t, "# TYPE shardbench_rank_samples_total counter");
    s_has_line (t, "shardbench_rank_samples_total{rank=\"0\",host=\"node-a\"} 2");
    s_has_line (t, "shardbench_rank_samples_total{rank=\"3\",host=\"we\\\"ird\\\\host\\n\"} 8");
    s_has_line (t, "shardbench_rank_bytes_total{rank=\"2\",host=\"we\\\"ird\\\\host\\n\"} 24576");
    s_has_line (t, "shardbench_rank_reads_total{rank=\"1\",host=\"node-a\"} 4");
    s_has_line (t, "shardbench_rank_read_seconds_total{rank=\"1\",host=\"node-a\"} 0.002");
    s_has_line (t, "shardbench_rank_compute_seconds_total{rank=\"0\",host=\"node-a\"} 0.5");
    s_has_line (t, "shardbench_rank_io_wait_seconds_total{rank=\"0\",host=\"node-a\"} 0.25");
    s_has_line (t, "shardbench_rank_barrier_seconds_total{rank=\"0\",host=\"node-a\"} 0.125");
    s_has_line (t, "shardbench_rank_reads_in_flight{rank=\"3\",host=\"we\\\"ird\\\\host\\n\"} 3");
    s_has_line (t, "shardbench_rank_done{rank=\"0\",host=\"node-a\"} 1");
    s_has_line (t, "shardbench_rank_done{rank=\"1\",host=\"node-a\"} 0");
    /* rank 0's recorded AU; the others' from their STATS (capped at 100 %); the
     * epoch's and the host's are means over them */
    s_has_line (t, "shardbench_rank_au_ratio{rank=\"0\",host=\"node-a\"} 0.875");
    s_has_line (t, "shardbench_rank_au_ratio{rank=\"1\",host=\"node-a\"} 1");
    s_has_line (t, "shardbench_host_au_ratio{host=\"node-a\"} 0.9375");
    s_has_line (t, "shardbench_epoch_au_ratio 0.96875");
    /* per host: the run's totals, the read latency histogram of rank 0's bins */
    s_has_line (t, "shardbench_host_samples_total{host=\"node-a\"} 6");
    s_has_line (t, "shardbench_host_bytes_total{host=\"we\\\"ird\\\\host\\n\"} 57344");
    s_has_line (t, "shardbench_host_ranks{host=\"node-a\"} 2");
    s_has_line (t, "shardbench_host_ranks_done{host=\"node-a\"} 1");
    s_has_line (t, "shardbench_host_silent_seconds{host=\"node-a\"} 0");
    s_has_line (t, "shardbench_host_read_latency_seconds_bucket{host=\"node-a\",le=\"0.000032\"} 3");
    s_has_line (t, "shardbench_host_read_latency_seconds_bucket{host=\"node-a\",le=\"0.000064\"} 3");
    s_has_line (t, "shardbench_host_read_latency_seconds_bucket{host=\"node-a\",le=\"0.000128\"} 5");
    s_has_line (t, "shardbench_host_read_latency_seconds_bucket{host=\"node-a\",le=\"4.194304\"} 5");
    s_has_line (t, "shardbench_host_read_latency_seconds_bucket{host=\"node-a\",le=\"8.388608\"} 6");
    s_has_line (t, "shardbench_host_read_latency_seconds_bucket{host=\"node-a\",le=\"16.777216\"} 6");
    s_has_line (t, "shardbench_host_read_latency_seconds_bucket{host=\"node-a\",le=\"+Inf\"} 7");
    /* the sum of the bins' lowest values: 3 x 10 + 2 x 100 + 4980736 + 96468992 us */
    s_has_line (t, "shardbench_host_read_latency_seconds_sum{host=\"node-a\"} 101.449958");
    s_has_line (t, "shardbench_host_read_latency_seconds_count{host=\"node-a\"} 7");
    s_has_line (t, "shardbench_host_read_latency_seconds_count{host=\"we\\\"ird\\\\host\\n\"} 0");
    /* per endpoint, without its credentials and query */
    s_has_line (t, "shardbench_endpoint_requests_total{endpoint=\"https://s3.example:9000/bucket\"} 7");
    s_has_line (t, "shardbench_endpoint_bytes_total{endpoint=\"https://s3.example:9000/bucket\"} 70000");
    s_has_line (t, "shardbench_endpoint_errors_total{endpoint=\"https://s3.example:9000/bucket\"} 2");
    s_has_line (t, "shardbench_endpoint_retries_total{endpoint=\"https://s3.example:9000/bucket\"} 1");
    s_has_line (t, "shardbench_endpoint_latency_seconds_bucket{endpoint=\"https://s3.example:9000/bucket\","
                   "le=\"0.001024\"} 0");
    s_has_line (t, "shardbench_endpoint_latency_seconds_bucket{endpoint=\"https://s3.example:9000/bucket\","
                   "le=\"0.002048\"} 5");
    /* 2000 us is in the bin from 1984 us */
    s_has_line (t, "shardbench_endpoint_latency_seconds_sum{endpoint=\"https://s3.example:9000/bucket\"} 0.00992");
    s_has_line (t, "shardbench_endpoint_latency_seconds_count{endpoint=\"https://s3.example:9000/bucket\"} 5");
    s_lacks (t, "s3cr3t");
    s_lacks (t, "AKIAKEY");
    s_lacks (t, "Signature");
    /* every family once, HELP before TYPE before its samples; no line empty */
    s_lacks (t, "\n\n");
    free (t);
    sb_live_destroy (&live);
}
END_TEST

START_TEST (test_render_progress)
{
    /* 2 ranks, 4 steps: 3 of 8 steps computed; the model's ETA and AU come out as they are */
    sb_live_t *live = sb_live_new (2, 1.5);
    ck_assert_int_eq (sb_live_join (live, 0, 2, "h", 0), 0);
    sb_live_phase (live, "train", 1, 1, 4, 0, 1, 10);
    sb_live_interval_t d = { .samples = 2, .bytes = 2, .steps = 2, .compute_ns = 1000000000,
                             .metric_compute_ns = 1000000000 };
    sb_live_stats (live, 0, &d, 12);
    d.steps = 1;
    sb_live_stats (live, 1, &d, 12);
    char *t = s_render (live, 12);
    s_has_line (t, "shardbench_progress_ratio 0.375");
    s_has_line (t, "shardbench_step 1");
    sb_live_run_view_t v;
    sb_live_run_view (live, 12, &v);
    char line[128];
    snprintf (line, sizeof line, "shardbench_epoch_au_ratio %.17g", v.au_pct / 100);
    /* the shortest text of the same double */
    char *num = strrchr (line, ' ') + 1;
    ck_assert (isfinite (v.au_pct));
    const char *at = strstr (t, "\nshardbench_epoch_au_ratio ");
    ck_assert_ptr_nonnull (at);
    ck_assert_double_eq (strtod (at + strlen ("\nshardbench_epoch_au_ratio "), NULL), strtod (num, NULL));
    ck_assert (v.epoch_eta_s >= 0);
    at = strstr (t, "\nshardbench_epoch_eta_seconds ");
    ck_assert_ptr_nonnull (at);
    ck_assert_double_eq (strtod (at + strlen ("\nshardbench_epoch_eta_seconds "), NULL), v.epoch_eta_s);
    free (t);
    sb_live_destroy (&live);
}
END_TEST

/* ---------------------------------------------------------------- the server */

static int
s_connect (const char *url)
{
    unsigned port = 0;
    ck_assert_int_eq (sscanf (url, "http://127.0.0.1:%u/metrics", &port), 1);
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge (fd, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    ck_assert_int_eq (connect (fd, (struct sockaddr *) &sa, sizeof sa), 0);
    return fd;
}

/* Everything the server answers until it closes (owned). */
static char *
s_read_all (int fd)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc (cap);
    ck_assert_ptr_nonnull (buf);
    for (;;) {
        if (len + 1 == cap)
            ck_assert_ptr_nonnull (buf = realloc (buf, cap *= 2));
        ssize_t n = read (fd, buf + len, cap - len - 1);
        ck_assert_int_ge (n, 0);
        if (!n)
            break;
        len += (size_t) n;
    }
    buf[len] = '\0';
    close (fd);
    return buf;
}

static char *
s_request (const char *url, const char *req)
{
    int fd = s_connect (url);
    ck_assert_int_eq (write (fd, req, strlen (req)), (ssize_t) strlen (req));
    return s_read_all (fd);
}

START_TEST (test_server)
{
    char err[512];
    /* bad addresses: a clear reason */
    static const struct { const char *addr, *why; } bad[] = {
        { "9464", "no port" }, { "localhost:http", "the port must be a number 0..65535" },
        { "127.0.0.1:65536", "the port must be a number 0..65535" }, { "::1:9464", "an IPv6 address goes in brackets" },
        { "[::1]9464", "expected HOST:PORT" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ck_assert_ptr_null (sb_metrics_server_new (bad[i].addr, err, sizeof err));
        if (!strstr (err, bad[i].why))
            ck_abort_msg ("%s: '%s' does not say '%s'", bad[i].addr, err, bad[i].why);
    }
    sb_metrics_server_t *srv = sb_metrics_server_new ("127.0.0.1:0", err, sizeof err);
    ck_assert_msg (srv != NULL, "%s", err);
    const char *url = sb_metrics_server_url (srv);
    ck_assert (strncmp (url, "http://127.0.0.1:", 17) == 0 && strcmp (url, "http://127.0.0.1:0/metrics") != 0);
    /* before a session: the families without samples, at once */
    char *r = s_request (url, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    ck_assert_msg (strncmp (r, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", r);
    s_has_line (r, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r");
    s_has_line (r, "shardbench_ranks 0");
    free (r);
    r = s_request (url, "GET /other HTTP/1.1\r\n\r\n");
    ck_assert_msg (strncmp (r, "HTTP/1.1 404 Not Found\r\n", 24) == 0, "%s", r);
    free (r);
    r = s_request (url, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    ck_assert_msg (strncmp (r, "HTTP/1.1 405 Method Not Allowed\r\n", 33) == 0, "%s", r);
    s_has_line (r, "Allow: GET, HEAD\r");
    free (r);
    r = s_request (url, "garbage\r\n\r\n");
    ck_assert_msg (strncmp (r, "HTTP/1.1 400 Bad Request\r\n", 26) == 0, "%s", r);
    free (r);
    /* during a session: the scrape waits for the session's rendering */
    sb_live_t *live = s_model (1000);
    sb_metrics_server_begin (srv);
    ck_assert_int_eq (sb_metrics_server_poll (srv, live, 1002), 0);    /* nobody asked */
    int fd = s_connect (url);
    const char *get = "GET /metrics?x=1 HTTP/1.0\r\n\r\n";
    ck_assert_int_eq (write (fd, get, strlen (get)), (ssize_t) strlen (get));
    int polls = 0;
    while (!sb_metrics_server_poll (srv, live, 1002)) {
        usleep (1000);
        ck_assert_int_lt (++polls, 10000);
    }
    r = s_read_all (fd);
    s_has_line (r, "shardbench_samples_total 20");
    free (r);
    /* a scrape right after: the rendering of less than a second ago, the session not asked */
    r = s_request (url, "GET /metrics HTTP/1.1\r\n\r\n");
    s_has_line (r, "shardbench_samples_total 20");
    free (r);
    ck_assert_int_eq (sb_metrics_server_poll (srv, live, 1002), 0);
    /* the end: the final rendering, for every later scrape, at once */
    sb_metrics_server_end (srv, live, 1002);
    sb_live_destroy (&live);
    r = s_request (url, "GET /metrics HTTP/1.1\r\n\r\n");
    s_has_line (r, "shardbench_samples_total 20");
    free (r);
    /* a request of 8 KiB without its end is refused */
    char big[8192 + 1];
    memset (big, 'a', sizeof big - 1);
    memcpy (big, "GET /", 5);
    big[sizeof big - 1] = '\0';
    r = s_request (url, big);
    ck_assert_msg (strncmp (r, "HTTP/1.1 431 ", 13) == 0, "%.200s", r);
    free (r);
    sb_metrics_server_destroy (&srv);
    ck_assert_ptr_null (srv);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("openmetrics");
    TCase *tc = tcase_create ("openmetrics");
    tcase_add_test (tc, test_label);
    tcase_add_test (tc, test_endpoint);
    tcase_add_test (tc, test_buckets);
    tcase_add_test (tc, test_render_empty);
    tcase_add_test (tc, test_render_model);
    tcase_add_test (tc, test_render_progress);
    tcase_add_test (tc, test_server);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
