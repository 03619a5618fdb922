/* reader over the fake engine (tests/unit/fake_engine.h): the capability
 * rule of worker/trainer/reader.h, without any I/O: a pool of depth-1
 * clients, one client keeping many reads in flight, inline completion, and
 * failures carried to the rank with their cause. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "fake_engine.h"
#include "reader.h"

static sb_storage_cfg_t
s_cfg (uint64_t max_in_flight)
{
    sb_storage_cfg_t cfg;
    memset (&cfg, 0, sizeof cfg);
    snprintf (cfg.engine, sizeof cfg.engine, SB_FAKE_ENGINE_NAME);
    cfg.max_in_flight = max_in_flight;
    return cfg;
}

/* submit n reads of 100 + i bytes, take them all; returns the bytes */
static uint64_t
s_run (sb_reader_t *r, int n)
{
    for (int i = 0; i < n; i++) {
        char key[32];
        snprintf (key, sizeof key, "obj-%02d", i);
        ck_assert_int_eq (sb_reader_submit (r, key, 10, 100 + (uint64_t) i, (uint64_t) i, (uint64_t) i, 0), 0);
    }
    uint64_t bytes = 0, tags = 0;
    for (int i = 0; i < n; i++) {
        sb_read_result_t res;
        ck_assert_int_eq (sb_reader_take (r, &res), 0);
        ck_assert_msg (res.error == 0, "%s", res.message);
        bytes += res.bytes;
        tags |= 1ull << res.tag;
    }
    ck_assert_uint_eq (tags, (1ull << n) - 1);
    return bytes;
}

START_TEST (test_pool_of_depth_one)
{
    ck_assert_int_eq (sb_fake_engine_reset (), 0);
    sb_storage_cfg_t cfg = s_cfg (8);
    char err[256];
    sb_reader_t *r = sb_reader_new (&cfg, "", 3, 4096, 0, 1, err, sizeof err);
    ck_assert_msg (r != NULL, "%s", err);
    ck_assert_uint_eq (s_run (r, 20), 20 * 100 + 190);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.opens, 3);        /* read_threads clients */
    ck_assert_uint_eq (c.max_pending, 1);  /* of depth 1 */
    ck_assert_uint_eq (c.reads, 20);
    ck_assert_int_eq (sb_reader_needs_keys (r), 1);
    sb_reader_endpoint_t eps[4];
    ck_assert_int_eq (sb_reader_endpoint_stats (r, eps, 4), 0);
    sb_reader_destroy (&r);
    ck_assert_ptr_null (r);
}
END_TEST

/* A pool's threads each read their own lane, in its order: reads 0..11 on
 * lanes (i / 2) % 3 (batches of 2 dealt to 3 loader threads in turn, as
 * DLIO's PyTorch loader deals batches to its workers), 5 ms each, through 3
 * read_threads. Each lane's reads go to one client, in the order they were
 * submitted, and no two lanes share a client: a free thread does not take
 * another lane's next read (with one queue shared by the threads, reads 0
 * and 1 would be in flight together on two clients). */
START_TEST (test_pool_lanes)
{
    ck_assert_int_eq (sb_fake_engine_reset (), 0);
    sb_fake_engine_set_latency (1000, 5000000);
    sb_storage_cfg_t cfg = s_cfg (8);
    char err[256];
    sb_reader_t *r = sb_reader_new (&cfg, "", 3, 4096, 0, 1, err, sizeof err);
    ck_assert_msg (r != NULL, "%s", err);
    for (int i = 0; i < 12; i++) {
        char key[32];
        snprintf (key, sizeof key, "obj-%02d", i);
        ck_assert_int_eq (sb_reader_submit (r, key, 0, 100, (uint64_t) i, (uint64_t) (i / 2) % 3, 0), 0);
    }
    for (int i = 0; i < 12; i++) {
        sb_read_result_t res;
        ck_assert_int_eq (sb_reader_take (r, &res), 0);
        ck_assert_msg (res.error == 0, "%s", res.message);
    }
    sb_reader_destroy (&r);
    sb_fake_engine_read_t log[16];
    ck_assert_uint_eq (sb_fake_engine_reads (log, 16), 12);
    uint64_t client_of[3] = { 0, 0, 0 };
    int last_of[3] = { -1, -1, -1 };
    for (size_t j = 0; j < 12; j++) {
        int i = atoi (log[j].key + 4), lane = (i / 2) % 3;
        if (!client_of[lane])
            client_of[lane] = log[j].client;
        ck_assert_msg (log[j].client == client_of[lane], "read %d of lane %d on client %llu, the lane's is %llu", i,
                       lane, (unsigned long long) log[j].client, (unsigned long long) client_of[lane]);
        ck_assert_msg (i > last_of[lane], "lane %d read %d after %d", lane, i, last_of[lane]);
        last_of[lane] = i;
    }
    ck_assert_uint_ne (client_of[0], client_of[1]);
    ck_assert_uint_ne (client_of[0], client_of[2]);
    ck_assert_uint_ne (client_of[1], client_of[2]);
    for (int lane = 0; lane < 3; lane++)
        ck_assert_int_eq (last_of[lane], 7 + 2 * lane);
}
END_TEST

/* Runs 20 reads of 30 ms through a reader of 3 read_threads over the fake
 * engine with caps and storage.max_in_flight 5; returns the most reads the
 * engine held at once, after checking that one client served them all. */
static uint64_t
s_async_max_pending (unsigned caps)
{
    ck_assert_int_eq (sb_fake_engine_reset (), 0);
    sb_fake_engine_set_caps (caps);
    sb_fake_engine_set_latency (1000, 30000000);   /* each read takes 30 ms */
    sb_storage_cfg_t cfg = s_cfg (5);
    char err[256];
    sb_reader_t *r = sb_reader_new (&cfg, "", 3, 4096, 0, 1, err, sizeof err);
    ck_assert_msg (r != NULL, "%s", err);
    ck_assert_uint_eq (s_run (r, 20), 20 * 100 + 190);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.opens, 1);        /* one client, whatever read_threads says */
    sb_reader_destroy (&r);
    return c.max_pending;
}

START_TEST (test_async_one_client)
{
    /* an object store keeps storage.max_in_flight at once */
    ck_assert_uint_eq (s_async_max_pending (SB_ENGINE_OBJECTS | SB_ENGINE_ASYNC), 5);
}
END_TEST

/* an engine of local files keeping many reads in flight (uring) keeps as
 * many as DLIO's loader threads would: read_threads, not max_in_flight */
START_TEST (test_async_local_depth)
{
    ck_assert_uint_eq (s_async_max_pending (SB_ENGINE_FOLDER | SB_ENGINE_ASYNC), 3);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.max_in_flight, 3);
}
END_TEST

/* an engine that keeps reads queued beyond its depth waiting without
 * starting them (uring: SB_ENGINE_QUEUE_AHEAD) is given a depth more, so
 * the next read is there when one ends (its own test shows it never has
 * more than the depth in flight) */
START_TEST (test_async_queue_ahead)
{
    ck_assert_uint_eq (s_async_max_pending (SB_ENGINE_FOLDER | SB_ENGINE_ASYNC | SB_ENGINE_QUEUE_AHEAD), 6);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.max_in_flight, 3);
    ck_assert_uint_eq (c.reads, 20);
}
END_TEST

START_TEST (test_failure_carries_cause)
{
    ck_assert_int_eq (sb_fake_engine_reset (), 0);
    ck_assert_int_eq (sb_fake_engine_fail ("bad", 0, EIO, 0, 0, 0), 0);
    sb_storage_cfg_t cfg = s_cfg (1);
    char err[256];
    sb_reader_t *r = sb_reader_new (&cfg, "", 2, 4096, 0, 1, err, sizeof err);
    ck_assert_msg (r != NULL, "%s", err);
    ck_assert_int_eq (sb_reader_submit (r, "train/bad.npz", 0, 10, 9, 0, 0), 0);
    sb_read_result_t res;
    ck_assert_int_eq (sb_reader_take (r, &res), 0);
    ck_assert_uint_eq (res.tag, 9);
    ck_assert_int_eq (res.error, EIO);
    ck_assert_str_eq (res.target, "train/bad.npz");
    ck_assert_ptr_nonnull (strstr (res.message, "train/bad.npz"));
    ck_assert_str_eq (res.endpoint, "");   /* not an SB_ENGINE_ENDPOINTS engine */
    sb_reader_destroy (&r);
}
END_TEST

START_TEST (test_no_io_inline)
{
    ck_assert_int_eq (sb_fake_engine_reset (), 0);
    sb_fake_engine_set_caps (SB_ENGINE_NO_IO);
    sb_storage_cfg_t cfg = s_cfg (1);
    char err[256];
    sb_reader_t *r = sb_reader_new (&cfg, "", 4, 4096, 0, 1, err, sizeof err);
    ck_assert_msg (r != NULL, "%s", err);
    ck_assert_int_eq (sb_reader_needs_keys (r), 0);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq (sb_reader_submit (r, NULL, 0, 1000, (uint64_t) i, 0, 0), 0);
    uint64_t bytes = 0;
    ck_assert_uint_eq (sb_reader_take_inline (r, &bytes), 10);
    ck_assert_uint_eq (bytes, 10000);
    ck_assert_uint_eq (sb_reader_take_inline (r, &bytes), 0);
    sb_read_result_t res;
    ck_assert_int_eq (sb_reader_try_take (r, &res), 1);    /* nothing on the socket */
    sb_reader_destroy (&r);
}
END_TEST

/* A read that fails as it is queued (verification of a key that is not a
 * DLIO name) leaves its thread idle, waiting for work: never a stall. (The
 * thread counts as busy from the moment it queues a read, since an engine
 * may open the file there: uring.) */
START_TEST (test_failed_queue_is_no_stall)
{
    ck_assert_int_eq (sb_fake_engine_reset (), 0);
    sb_storage_cfg_t cfg = s_cfg (8);
    char err[256];
    sb_reader_t *r = sb_reader_new (&cfg, "", 1, 4096, 1, 1, err, sizeof err);
    ck_assert_msg (r != NULL, "%s", err);
    sb_dataset_t ds;
    memset (&ds, 0, sizeof ds);
    ds.prefix = "img";
    ds.format = "npz";
    ck_assert_msg (sb_reader_set_dataset (r, &ds, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq (sb_reader_submit (r, "not-a-dlio-name", 0, 100, 7, 0, 0), 0);
    sb_read_result_t res;
    ck_assert_int_eq (sb_reader_take (r, &res), 0);
    ck_assert_uint_eq (res.tag, 7);
    ck_assert_msg (res.error != 0 && strstr (res.message, "not a DLIO name"), "%d %s", res.error, res.message);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.reads, 0);     /* it never reached the engine */
    char key[256];
    double for_s = 0;
    for (int i = 0; i < 30; i++) {      /* 0.3 s, three times the timeout */
        ck_assert_msg (sb_reader_stalled (r, 0.1, key, sizeof key, &for_s) == 0, "stalled on '%s' for %.2f s", key,
                       for_s);
        usleep (10000);
    }
    sb_reader_destroy (&r);
}
END_TEST

/* An engine that fails as a whole (getevents) with reads in flight: each
 * of them comes back failed with its own tag, naming its key and offset,
 * the engine, the operation and the errno (they came back with tag 0 and
 * an empty key). */
START_TEST (test_getevents_failure_names_reads)
{
    ck_assert_int_eq (sb_fake_engine_reset (), 0);
    sb_fake_engine_set_caps (SB_ENGINE_OBJECTS | SB_ENGINE_ASYNC);
    sb_fake_engine_set_latency (1000, 60000000000ull);     /* in flight until the failure */
    sb_storage_cfg_t cfg = s_cfg (4);
    char err[256];
    sb_reader_t *r = sb_reader_new (&cfg, "pre/", 1, 4096, 0, 1, err, sizeof err);
    ck_assert_msg (r != NULL, "%s", err);
    ck_assert_int_eq (sb_reader_submit (r, "train/a.npz", 4096, 100, 11, 0, 0), 0);
    ck_assert_int_eq (sb_reader_submit (r, "train/b.npz", 0, 200, 12, 0, 0), 0);
    /* both queued in the engine before it breaks */
    for (int i = 0; i < 500; i++) {
        sb_fake_engine_counts_t c;
        sb_fake_engine_counts (&c);
        if (c.max_pending == 2)
            break;
        usleep (2000);
    }
    sb_fake_engine_fail_getevents (EIO);
    sb_read_result_t res[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq (sb_reader_take (r, &res[i]), 0);
    if (res[0].tag == 12) {
        sb_read_result_t t = res[0];
        res[0] = res[1];
        res[1] = t;
    }
    ck_assert_uint_eq (res[0].tag, 11);
    ck_assert_int_eq (res[0].error, EIO);
    ck_assert_str_eq (res[0].target, "train/a.npz");
    ck_assert_str_eq (res[0].message, "read pre/train/a.npz at offset 4096 (100 bytes) was in flight when the fake"
                      " engine's getevents failed (errno 5, Input/output error): fake getevents: scripted failure"
                      " of the engine with 2 reads held");
    ck_assert_uint_eq (res[1].tag, 12);
    ck_assert_int_eq (res[1].error, EIO);
    ck_assert_str_eq (res[1].target, "train/b.npz");
    ck_assert_str_eq (res[1].message, "read pre/train/b.npz at offset 0 (200 bytes) was in flight when the fake"
                      " engine's getevents failed (errno 5, Input/output error): fake getevents: scripted failure"
                      " of the engine with 2 reads held");
    sb_reader_destroy (&r);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("reader_engines");
    TCase *tc = tcase_create ("rule");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_pool_of_depth_one);
    tcase_add_test (tc, test_pool_lanes);
    tcase_add_test (tc, test_async_one_client);
    tcase_add_test (tc, test_async_local_depth);
    tcase_add_test (tc, test_async_queue_ahead);
    tcase_add_test (tc, test_failure_carries_cause);
    tcase_add_test (tc, test_no_io_inline);
    tcase_add_test (tc, test_failed_queue_is_no_stall);
    tcase_add_test (tc, test_getevents_failure_names_reads);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
