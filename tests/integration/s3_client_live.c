/* The S3 client against a real S3 server (started by test_s3.sh): multipart
 * round trip, ranged reads, multi-page listing, errors that name their
 * cause. Endpoints come from $S3_ENDPOINTS ("URL URL"), the bucket from
 * $S3_BUCKET, credentials from the environment. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "s3_client.h"
#include "util.h"

static sb_storage_cfg_t s_cfg;
static sb_s3_settings_t s_set;   /* the S3 engine's own settings */

static void
s_setup (void)
{
    memset (&s_cfg, 0, sizeof s_cfg);
    memset (&s_set, 0, sizeof s_set);
    snprintf (s_cfg.engine, sizeof s_cfg.engine, "s3");
    snprintf (s_cfg.store, sizeof s_cfg.store, "%s", getenv ("S3_BUCKET") ? getenv ("S3_BUCKET") : "sbtest");
    char list[2048];
    snprintf (list, sizeof list, "%s", getenv ("S3_ENDPOINTS") ? getenv ("S3_ENDPOINTS") : "");
    for (char *save = NULL, *t = strtok_r (list, " ", &save); t; t = strtok_r (NULL, " ", &save))
        snprintf (s_cfg.endpoints[s_cfg.nendpoints++], sizeof s_cfg.endpoints[0], "%s", t);
    ck_assert_uint_ge (s_cfg.nendpoints, 1);
    snprintf (s_set.region, sizeof s_set.region, "us-east-1");
    s_set.path_style = 1;
    s_cfg.max_in_flight = 8;
    s_cfg.connect_timeout_s = 2;
    s_cfg.request_timeout_s = 20;
    s_cfg.max_retries = 2;
    s_set.multipart_threshold = 6 << 20;
    s_set.multipart_part = 5 << 20;
}

static void
s_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    sb_content_fill (*(uint64_t *) ctx, offset, buf, len);
}

static void on_done (void *ctx, const sb_s3_done_t *d);

static int
s_collect (void *ctx, const char *key, uint64_t size)
{
    char *out = ctx;
    size_t n = strlen (out);
    snprintf (out + n, 8192 - n, "%s:%llu ", key, (unsigned long long) size);
    return 0;
}

START_TEST (test_put_get_list)
{
    char err[512];
    sb_s3_t *s3 = sb_s3_new (&s_cfg, &s_set, 8, err, sizeof err);
    ck_assert_msg (s3 != NULL, "%s", err);
    sb_s3_error_t e;
    uint64_t seed = 77;
    /* 9 small objects, then list them 2 per page */
    for (int i = 0; i < 9; i++) {
        char key[64];
        snprintf (key, sizeof key, "live/page/obj-%02d", i);
        ck_assert_msg (sb_s3_put (s3, key, 1000 + (uint64_t) i, s_fill, &seed, &e) == 0, "%s", e.text);
    }
    char *seen = calloc (1, 8192);
    ck_assert_msg (sb_s3_list (s3, "live/page/", NULL, NULL, 2, s_collect, seen, &e) == 0, "%s", e.text);
    ck_assert_str_eq (seen, "live/page/obj-00:1000 live/page/obj-01:1001 live/page/obj-02:1002 live/page/obj-03:1003 "
                            "live/page/obj-04:1004 live/page/obj-05:1005 live/page/obj-06:1006 live/page/obj-07:1007 "
                            "live/page/obj-08:1008 ");
    /* a key range: after obj-02, up to obj-05 */
    seen[0] = '\0';
    ck_assert_msg (sb_s3_list (s3, "live/page/", "live/page/obj-02", "live/page/obj-05", 2, s_collect, seen, &e) == 0,
                   "%s", e.text);
    ck_assert_str_eq (seen, "live/page/obj-03:1003 live/page/obj-04:1004 live/page/obj-05:1005 ");
    free (seen);

    /* multipart: 12 MiB + 3 in parts of 5 MiB, then ranged reads across part edges */
    uint64_t size = (12u << 20) + 3;
    ck_assert_msg (sb_s3_put (s3, "live/big.bin", size, s_fill, &seed, &e) == 0, "%s", e.text);
    uint64_t got = 0;
    ck_assert_msg (sb_s3_get (s3, "live/big.bin", 0, 0, &got, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (got, size);
    ck_assert_msg (sb_s3_get (s3, "live/big.bin", (5u << 20) - 10, 20, &got, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (got, 20);

    /* asynchronous verified reads over every endpoint */
    struct { uint64_t n, bytes, failed; } acc = { 0, 0, 0 };
    for (uint64_t i = 0; i < 40; i++)
        ck_assert_int_eq (sb_s3_get_start (s3, i, "live/big.bin", i * 300001, 4096 + i, 1, seed), 0);
    while (sb_s3_pending (s3) > 0) {
        ck_assert_int_ge (sb_s3_run (s3, 100, on_done, &acc), 0);
    }
    ck_assert_uint_eq (acc.n, 40);
    ck_assert_uint_eq (acc.failed, 0);
    ck_assert_uint_eq (acc.bytes, 40 * 4096 + 780);
    uint64_t requests = 0;
    for (size_t i = 0; i < sb_s3_endpoint_count (s3); i++) {
        ck_assert_uint_gt (sb_s3_stats (s3, i)->requests, 0);
        requests += sb_s3_stats (s3, i)->requests;
    }
    ck_assert_uint_ge (requests, 40);

    /* a missing key: 404 NoSuchKey, not retried */
    ck_assert_int_eq (sb_s3_get (s3, "live/none", 0, 10, &got, &e), -1);
    ck_assert_int_eq (e.http_status, 404);
    ck_assert_str_eq (e.s3_code, "NoSuchKey");
    ck_assert_int_eq (e.attempt, 1);
    ck_assert_ptr_nonnull (strstr (e.text, "live/none"));
    ck_assert_int_eq (sb_s3_delete (s3, "live/big.bin", &e), 0);
    ck_assert_int_eq (sb_s3_get (s3, "live/big.bin", 0, 10, &got, &e), -1);
    ck_assert_int_eq (e.http_status, 404);
    ck_assert_int_eq (sb_s3_check_endpoint (s3, 0, &e), 0);
    sb_s3_destroy (&s3);
    ck_assert_ptr_null (s3);
}
END_TEST

static void
on_done (void *ctx, const sb_s3_done_t *d)
{
    struct { uint64_t n, bytes, failed; } *acc = ctx;
    acc->n++;
    acc->bytes += d->bytes;
    acc->failed += d->failed != 0;
    if (d->failed)
        fprintf (stderr, "GET %llu failed: %s\n", (unsigned long long) d->tag, d->error.text);
}

START_TEST (test_wrong_secret)
{
    setenv ("AWS_SECRET_ACCESS_KEY", "not-the-secret", 1);
    char err[512];
    sb_s3_t *s3 = sb_s3_new (&s_cfg, &s_set, 4, err, sizeof err);
    ck_assert_msg (s3 != NULL, "%s", err);
    sb_s3_error_t e;
    ck_assert_int_eq (sb_s3_check_endpoint (s3, 0, &e), -1);
    ck_assert_int_eq (e.http_status, 403);
    ck_assert_str_eq (e.s3_code, "SignatureDoesNotMatch");
    ck_assert_ptr_nonnull (strstr (e.text, s_cfg.endpoints[0]));
    ck_assert_ptr_null (strstr (e.text, "not-the-secret"));
    sb_s3_destroy (&s3);
    setenv ("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
}
END_TEST

START_TEST (test_closed_port)
{
    sb_storage_cfg_t cfg = s_cfg;
    snprintf (cfg.endpoints[0], sizeof cfg.endpoints[0], "http://127.0.0.1:%s",
              getenv ("S3_CLOSED_PORT") ? getenv ("S3_CLOSED_PORT") : "9");
    cfg.nendpoints = 1;
    char err[512];
    sb_s3_t *s3 = sb_s3_new (&cfg, &s_set, 4, err, sizeof err);
    ck_assert_msg (s3 != NULL, "%s", err);
    sb_s3_error_t e;
    ck_assert_int_eq (sb_s3_check_endpoint (s3, 0, &e), -1);
    ck_assert_int_eq (e.http_status, 0);
    ck_assert_int_ne (e.curl_code, 0);
    ck_assert_msg (strstr (e.text, "Connection refused") != NULL, "%s", e.text);
    ck_assert_ptr_nonnull (strstr (e.text, cfg.endpoints[0]));
    /* a GET retries connect failures max_retries times, then names the last attempt */
    uint64_t got;
    ck_assert_int_eq (sb_s3_get (s3, "k", 0, 1, &got, &e), -1);
    ck_assert_int_eq (e.attempt, 3);
    ck_assert_uint_eq (sb_s3_stats (s3, 0)->retries, 2);
    sb_s3_destroy (&s3);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("s3_client_live");
    TCase *tc = tcase_create ("live");
    tcase_add_checked_fixture (tc, s_setup, NULL);
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_put_get_list);
    tcase_add_test (tc, test_wrong_secret);
    tcase_add_test (tc, test_closed_port);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
