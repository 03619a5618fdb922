/* The azure engine against Azurite (started by test_azure.sh), for what the
 * conformance suite (tests/unit/test_storage_engines.c) does not cover:
 * listings over several pages, staged blocks, the fields of errors, SAS
 * credentials, two endpoints, a stop while a request hangs.
 *
 * Environment: AZURE_TEST_CONTAINER, the credentials of the test that runs
 * (AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with
 * AZURE_STORAGE_SAS_TOKEN), AZURE_TEST_ENDPOINT2 (a second URL of the same
 * server), AZURE_TEST_HANG_PORT (a port that accepts and never answers),
 * AZURE_TEST_SECRET (text that must be in no error), AZURE_TEST_ONLY (run
 * one test by name: CK_RUN_CASE is not enough when the environment differs
 * per test). */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "az_client.h"
#include "check_main.h"
#include "engine.h"
#include "util.h"

/* a prefix of this run alone */
static char s_prefix[128];

/* cfg of the azure engine for the container, the endpoint from the
 * environment (the engine's configure op), plus extra endpoints */
static void
s_cfg (sb_storage_cfg_t *c, const char *opt_block, const char *opt_single)
{
    memset (c, 0, sizeof *c);
    snprintf (c->engine, sizeof c->engine, "azure");
    const char *container = getenv ("AZURE_TEST_CONTAINER");
    ck_assert_ptr_nonnull (container);
    snprintf (c->store, sizeof c->store, "%s", container);
    char err[512];
    const char *given = getenv ("AZURE_TEST_ENDPOINT");    /* as storage.endpoint_uris gives it */
    if (given && *given) {
        snprintf (c->endpoints[0], sizeof c->endpoints[0], "%s", given);
        c->nendpoints = 1;
    }
    ck_assert_msg (sb_engine_find ("azure")->configure (c, &(sb_engine_setup_t) { .scheme = "az" }, err, sizeof err)
                       == 0, "%s", err);
    ck_assert_uint_eq (c->nendpoints, 1);
    c->max_in_flight = 4;
    c->connect_timeout_s = 2;
    c->request_timeout_s = 60;
    c->max_retries = 1;
    if (opt_block) {
        ck_assert_int_eq (sb_storage_opt_set (c, "azure", "block_bytes", opt_block), 0);
    }
    if (opt_single) {
        ck_assert_int_eq (sb_storage_opt_set (c, "azure", "single_put_bytes", opt_single), 0);
    }
    if (!s_prefix[0])
        snprintf (s_prefix, sizeof s_prefix, "live-%d-%llu/", (int) getpid (),
                  (unsigned long long) (sb_mono_ns () % 1000000007ull));
}

static sb_storage_t *
s_open (const sb_storage_cfg_t *c, size_t depth)
{
    sb_storage_open_t how = { .root = s_prefix, .depth = depth };
    sb_storage_error_t e;
    sb_storage_t *s = sb_storage_open (c, &how, &e);
    ck_assert_msg (s != NULL, "%s", e.text);
    return s;
}

static void
s_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    sb_content_fill (*(uint64_t *) ctx, offset, buf, len);
}

/* no secret of the run in text */
static void
s_no_secret (const char *text)
{
    const char *secret = getenv ("AZURE_TEST_SECRET");
    if (secret && *secret)
        ck_assert_msg (strstr (text, secret) == NULL, "a credential in an error: %s", text);
}

typedef struct {
    char   names[64][32];
    size_t n;
} s_names_t;

static int
s_collect (void *ctx, const char *key, size_t len, uint64_t size)
{
    s_names_t *l = ctx;
    ck_assert_uint_lt (l->n, 64);
    ck_assert_uint_lt (len, 32);
    ck_assert_uint_eq (size, 10 + len);
    memcpy (l->names[l->n], key, len);
    l->names[l->n++][len] = '\0';
    return 0;
}

/* 23 blobs listed 5 a page: 5 pages through NextMarker, every name once,
 * in order; start_after and end_at across page edges */
START_TEST (test_list_pages)
{
    sb_storage_cfg_t c;
    s_cfg (&c, NULL, NULL);
    ck_assert_int_eq (sb_storage_opt_set (&c, "azure", "list_page_size", "5"), 0);
    sb_storage_t *s = s_open (&c, 1);
    sb_storage_error_t e;
    uint64_t seed = 3;
    /* written out of order; names of different lengths */
    for (int i = 22; i >= 0; i--) {
        char key[64];
        snprintf (key, sizeof key, "pages/n%0*d", 2 + i % 3, i);
        ck_assert_msg (sb_storage_put (s, key, 10 + strlen (key) - 6, s_fill, &seed, 0, &e) == 0, "%s", e.text);
    }
    s_names_t l = { 0 };
    ck_assert_msg (sb_storage_list (s, "pages/", NULL, NULL, s_collect, &l, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (l.n, 23);
    /* byte order of the names as written */
    char want[23][32];
    for (int i = 0; i < 23; i++)
        snprintf (want[i], sizeof want[i], "n%0*d", 2 + i % 3, i);
    qsort (want, 23, sizeof want[0], (int (*) (const void *, const void *)) strcmp);
    for (int i = 0; i < 23; i++)
        ck_assert_str_eq (l.names[i], want[i]);
    /* the pages the requests took: 23 names, 5 a page */
    sb_storage_stats_t st[4];
    ck_assert_uint_eq (sb_storage_stats (s, st, 4), 1);    /* resets the counters */
    memset (&l, 0, sizeof l);
    ck_assert_int_eq (sb_storage_list (s, "pages/", NULL, NULL, s_collect, &l, &e), 0);
    ck_assert_uint_eq (sb_storage_stats (s, st, 4), 1);
    ck_assert_uint_eq (st[0].requests, 5);
    /* bounded: after the 4th name up to the 17th (pages 1 to 4) */
    memset (&l, 0, sizeof l);
    ck_assert_int_eq (sb_storage_list (s, "pages/", want[3], want[16], s_collect, &l, &e), 0);
    ck_assert_uint_eq (l.n, 13);
    ck_assert_str_eq (l.names[0], want[4]);
    ck_assert_str_eq (l.names[12], want[16]);
    for (int i = 0; i < 23; i++) {
        char key[64];
        snprintf (key, sizeof key, "pages/%s", want[i]);
        ck_assert_int_eq (sb_storage_remove (s, key, &e), 0);
    }
    sb_storage_close (&s);
}
END_TEST

/* 1 MiB + 12345 bytes in blocks of 256 KiB: 5 committed blocks, the exact
 * bytes back; Put Blob below single_put_bytes: no block */
START_TEST (test_blocks)
{
    sb_storage_cfg_t c;
    s_cfg (&c, "262144", "524288");
    sb_storage_t *s = s_open (&c, 4);
    sb_storage_error_t e;
    uint64_t seed = 11, size = (1u << 20) + 12345;
    ck_assert_msg (sb_storage_put (s, "blocks/big", size, s_fill, &seed, SB_PUT_FSYNC, &e) == 0, "%s", e.text);
    ck_assert_msg (sb_storage_put (s, "blocks/small", 4000, s_fill, &seed, 0, &e) == 0, "%s", e.text);
    /* Get Block List of the blob, through a client of its own */
    char err[512], full[256];
    sb_az_t *az = sb_az_new (&c, 1, err, sizeof err);
    ck_assert_msg (az != NULL, "%s", err);
    uint64_t count = 0, bytes = 0;
    snprintf (full, sizeof full, "%sblocks/big", s_prefix);
    ck_assert_msg (sb_az_block_list (az, full, &count, &bytes, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (count, 5);
    ck_assert_uint_eq (bytes, size);
    snprintf (full, sizeof full, "%sblocks/small", s_prefix);
    ck_assert_msg (sb_az_block_list (az, full, &count, &bytes, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (count, 0);
    sb_az_destroy (&az);
    /* the exact bytes, read back across the blocks' edges */
    uint64_t got = 0;
    ck_assert_int_eq (sb_storage_stat (s, "blocks/big", &got, &e), 0);
    ck_assert_uint_eq (got, size);
    uint8_t *buf = malloc (size), *want = malloc (size);
    ck_assert_ptr_nonnull (buf);
    ck_assert_ptr_nonnull (want);
    sb_content_fill (seed, 0, want, size);
    size_t len = 0;
    ck_assert_msg (sb_storage_get_small (s, "blocks/big", (char *) buf, size, &len, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (len, size);
    ck_assert_int_eq (memcmp (buf, want, size), 0);
    free (buf);
    free (want);
    ck_assert_int_eq (sb_storage_remove (s, "blocks/big", &e), 0);
    ck_assert_int_eq (sb_storage_remove (s, "blocks/small", &e), 0);
    sb_storage_close (&s);
}
END_TEST

/* names with bytes the URL escapes and the listing's XML escapes: the
 * signature covers the escaped path, the listing gives the name back */
START_TEST (test_names)
{
    sb_storage_cfg_t c;
    s_cfg (&c, NULL, NULL);
    sb_storage_t *s = s_open (&c, 1);
    sb_storage_error_t e;
    uint64_t seed = 4, size = 0;
    const char *name = "odd/a b+c&d=<e>'\"%20\xc3\xa9";     /* ... %20 and an e with an acute accent */
    uint64_t want = 10 + strlen (name + 4);     /* s_collect's rule */
    ck_assert_msg (sb_storage_put (s, name, want, s_fill, &seed, 0, &e) == 0, "%s", e.text);
    ck_assert_msg (sb_storage_stat (s, name, &size, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (size, want);
    s_names_t l = { 0 };
    ck_assert_msg (sb_storage_list (s, "odd/", NULL, NULL, s_collect, &l, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (l.n, 1);
    ck_assert_str_eq (l.names[0], name + 4);
    ck_assert_int_eq (sb_storage_remove (s, name, &e), 0);
    ck_assert_int_eq (sb_storage_stat (s, name, &size, &e), -1);
    ck_assert_int_eq (e.missing, 1);
    sb_storage_close (&s);
}
END_TEST

/* a missing blob: 404, BlobNotFound, missing, not transient, every field */
START_TEST (test_error_missing)
{
    sb_storage_cfg_t c;
    s_cfg (&c, NULL, NULL);
    sb_storage_t *s = s_open (&c, 1);
    sb_storage_error_t e;
    uint64_t size = 0, got = 0;
    ck_assert_int_eq (sb_storage_stat (s, "errors/none", &size, &e), -1);
    ck_assert_str_eq (e.engine, "azure");
    ck_assert_str_eq (e.op, "HEAD");
    ck_assert_str_eq (e.where, c.endpoints[0]);
    ck_assert_int_eq (e.status, 404);
    ck_assert_str_eq (e.code, "BlobNotFound");      /* from x-ms-error-code: a HEAD reply has no body */
    ck_assert_int_eq (e.lib_code, 0);
    ck_assert_int_eq (e.missing, 1);
    ck_assert_int_eq (e.transient, 0);
    char want[512];
    snprintf (want, sizeof want, "HEAD %s/%serrors/none on %s failed (attempt 1): HTTP 404 BlobNotFound", c.store,
              s_prefix, c.endpoints[0]);
    ck_assert_msg (strncmp (e.text, want, strlen (want)) == 0, "%s", e.text);
    ck_assert_int_eq (sb_storage_get (s, "errors/none", 0, 10, 0, &got, &e), -1);
    ck_assert_str_eq (e.op, "GET");
    ck_assert_str_eq (e.code, "BlobNotFound");
    ck_assert_msg (strstr (e.text, "The specified blob does not exist.") != NULL, "%s", e.text);
    s_no_secret (e.text);
    /* a container that is not there */
    snprintf (c.store, sizeof c.store, "no-such-container");
    sb_storage_t *other = s_open (&c, 1);
    ck_assert_int_eq (sb_storage_stat (other, "x", &size, &e), -1);
    ck_assert_int_eq (e.status, 404);
    ck_assert_str_eq (e.code, "ContainerNotFound");
    sb_storage_close (&other);
    sb_storage_close (&s);
}
END_TEST

/* a wrong account key (AZURE_TEST_ONLY=test_error_bad_key, run with one):
 * 403, the service's code, no credential in the text; preflight fails */
typedef struct {
    int checked, failed;
    sb_storage_error_t e;
} s_checks_t;

static void
s_on_check (void *ctx, const char *where, const sb_storage_error_t *e)
{
    s_checks_t *c = ctx;
    (void) where;
    c->checked++;
    if (e) {
        c->failed++;
        c->e = *e;
    }
}

START_TEST (test_error_bad_key)
{
    sb_storage_cfg_t c;
    s_cfg (&c, NULL, NULL);
    sb_storage_t *s = s_open (&c, 1);
    sb_storage_error_t e;
    uint64_t size = 0;
    ck_assert_int_eq (sb_storage_stat (s, "errors/any", &size, &e), -1);
    ck_assert_int_eq (e.status, 403);
    /* Azure says AuthenticationFailed; Azurite AuthorizationFailure */
    ck_assert_msg (!strcmp (e.code, "AuthenticationFailed") || !strcmp (e.code, "AuthorizationFailure"), "code '%s'",
                   e.code);
    ck_assert_int_eq (e.missing, 0);
    ck_assert_int_eq (e.transient, 0);
    ck_assert_msg (strstr (e.text, "HTTP 403") != NULL, "%s", e.text);
    s_no_secret (e.text);
    uint64_t seed = 1;
    ck_assert_int_eq (sb_storage_put (s, "errors/any", 10, s_fill, &seed, 0, &e), -1);
    ck_assert_int_eq (e.status, 403);
    s_no_secret (e.text);
    s_checks_t checks = { 0 };
    ck_assert_int_eq (sb_storage_preflight (s, 1, s_on_check, &checks), 1);
    ck_assert_int_eq (checks.failed, 1);
    ck_assert_str_eq (checks.e.op, "CHECK");
    ck_assert_int_eq (checks.e.status, 403);
    s_no_secret (checks.e.text);
    sb_storage_close (&s);
}
END_TEST

/* SAS credentials (AZURE_TEST_ONLY=test_sas, run with AZURE_STORAGE_ACCOUNT
 * and AZURE_STORAGE_SAS_TOKEN only): write, list, read, delete */
START_TEST (test_sas)
{
    sb_storage_cfg_t c;
    s_cfg (&c, "65536", "65536");
    sb_storage_t *s = s_open (&c, 2);
    ck_assert_ptr_nonnull (getenv ("AZURE_TEST_SOURCE"));
    ck_assert_str_eq (sb_storage_credentials_source (s), getenv ("AZURE_TEST_SOURCE"));
    sb_storage_error_t e;
    uint64_t seed = 5, size = 0, got = 0;
    ck_assert_msg (sb_storage_put (s, "sas/obj", 200000, s_fill, &seed, 0, &e) == 0, "%s", e.text);  /* 4 blocks */
    ck_assert_msg (sb_storage_stat (s, "sas/obj", &size, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (size, 200000);
    ck_assert_msg (sb_storage_get (s, "sas/obj", 1000, 100000, 0, &got, &e) == 0, "%s", e.text);
    ck_assert_uint_eq (got, 100000);
    s_names_t l = { 0 };
    ck_assert_int_eq (sb_storage_list (s, "nothing/", NULL, NULL, s_collect, &l, &e), 1);
    ck_assert_int_eq (sb_storage_remove (s, "sas/obj", &e), 0);
    ck_assert_int_eq (sb_storage_stat (s, "sas/obj", &size, &e), -1);
    ck_assert_int_eq (e.missing, 1);
    s_no_secret (e.text);
    s_checks_t checks = { 0 };
    ck_assert_int_eq (sb_storage_preflight (s, 1, s_on_check, &checks), 0);
    ck_assert_int_eq (checks.checked, 1);
    sb_storage_close (&s);
}
END_TEST

typedef struct {
    size_t       n;
    sb_io_done_t done[32];
} s_reaped_t;

static void
s_on_done (void *ctx, const sb_io_done_t *d)
{
    s_reaped_t *r = ctx;
    ck_assert_uint_lt (r->n, 32);
    r->done[r->n++] = *d;
}

/* two endpoints, round robin: each read goes to the next, the counters
 * are per endpoint and add up */
START_TEST (test_two_endpoints)
{
    sb_storage_cfg_t c;
    s_cfg (&c, NULL, NULL);
    const char *ep2 = getenv ("AZURE_TEST_ENDPOINT2");
    ck_assert_ptr_nonnull (ep2);
    snprintf (c.endpoints[1], sizeof c.endpoints[1], "%s", ep2);
    c.nendpoints = 2;
    c.lb = SB_LB_ROUND_ROBIN;
    sb_storage_t *s = s_open (&c, 4);
    sb_storage_error_t e;
    uint64_t seed = 9;
    ck_assert_msg (sb_storage_put (s, "rr/obj", 40000, s_fill, &seed, 0, &e) == 0, "%s", e.text);   /* endpoint 1 */
    sb_storage_stats_t st[4];
    ck_assert_uint_eq (sb_storage_stats (s, st, 4), 2);   /* reset */
    s_reaped_t r = { 0 };
    for (uint64_t i = 0; i < 10; i++) {
        sb_io_t io = { .tag = i, .key = "rr/obj", .offset = i * 1000, .length = 1000 + i, .expect_size = UINT64_MAX };
        ck_assert_msg (sb_storage_queue (s, &io, &e) == 0, "%s", e.text);
    }
    while (r.n < 10)
        ck_assert_int_ge (sb_storage_getevents (s, 100, s_on_done, &r, &e), 0);
    uint64_t bytes = 0;
    for (size_t i = 0; i < r.n; i++) {
        ck_assert_msg (!r.done[i].failed, "%s", r.done[i].error.text);
        bytes += r.done[i].bytes;
    }
    ck_assert_uint_eq (bytes, 10 * 1000 + 45);
    ck_assert_uint_eq (sb_storage_stats (s, st, 4), 2);
    ck_assert_str_eq (st[0].where, c.endpoints[0]);
    ck_assert_str_eq (st[1].where, c.endpoints[1]);
    ck_assert_uint_eq (st[0].requests, 5);
    ck_assert_uint_eq (st[1].requests, 5);
    ck_assert_uint_eq (st[0].errors + st[1].errors, 0);
    /* the put took the first endpoint: reads 0, 2, 4, 6, 8 (of 1000 + i
     * bytes) went to the second, 1, 3, 5, 7, 9 to the first */
    ck_assert_uint_eq (st[1].bytes, 5 * 1000 + 0 + 2 + 4 + 6 + 8);
    ck_assert_uint_eq (st[0].bytes, 5 * 1000 + 1 + 3 + 5 + 7 + 9);
    ck_assert_uint_eq (st[0].latency.total, 5);
    ck_assert_uint_eq (st[1].latency.total, 5);
    ck_assert_int_eq (sb_storage_remove (s, "rr/obj", &e), 0);
    sb_storage_close (&s);
}
END_TEST

/* a server that accepts and never answers: the stop ends the read at
 * once (a 60 s request timeout would otherwise hold it), failed with
 * stopped, not retried, not transient */
static atomic_int s_stop_now;

static int
s_stop (void *arg)
{
    (void) arg;
    return atomic_load (&s_stop_now);
}

static void *
s_stopper (void *arg)
{
    sb_storage_t *s = arg;
    sb_sleep_s (0.3);
    atomic_store (&s_stop_now, 1);
    sb_storage_wakeup (s);
    return NULL;
}

START_TEST (test_stop)
{
    const char *port = getenv ("AZURE_TEST_HANG_PORT");
    ck_assert_ptr_nonnull (port);
    sb_storage_cfg_t c;
    s_cfg (&c, NULL, NULL);
    snprintf (c.endpoints[0], sizeof c.endpoints[0], "http://127.0.0.1:%s/devstoreaccount1", port);
    c.max_retries = 5;
    sb_storage_open_t how = { .root = "", .depth = 1, .stop = s_stop };
    sb_storage_error_t e;
    sb_storage_t *s = sb_storage_open (&c, &how, &e);
    ck_assert_msg (s != NULL, "%s", e.text);
    sb_io_t io = { .tag = 1, .key = "hang", .offset = 0, .length = 10, .expect_size = UINT64_MAX };
    ck_assert_int_eq (sb_storage_queue (s, &io, &e), 0);
    pthread_t th;
    ck_assert_int_eq (pthread_create (&th, NULL, s_stopper, s), 0);
    s_reaped_t r = { 0 };
    while (r.n == 0)
        ck_assert_int_ge (sb_storage_getevents (s, 10000, s_on_done, &r, &e), 0);
    pthread_join (th, NULL);
    ck_assert_int_eq (r.done[0].failed, 1);
    ck_assert_int_eq (r.done[0].error.stopped, 1);
    ck_assert_int_eq (r.done[0].error.transient, 0);
    ck_assert_int_eq (r.done[0].error.attempt, 1);
    ck_assert_msg (strstr (r.done[0].error.text, "stopped") != NULL, "%s", r.done[0].error.text);
    /* a blocking call too */
    uint64_t size;
    ck_assert_int_eq (sb_storage_stat (s, "hang", &size, &e), -1);
    ck_assert_int_eq (e.stopped, 1);
    sb_storage_close (&s);
}
END_TEST

/* Switch the fault proxy in front of Azurite (tests/s3/fault_proxy.c,
 * its control file): MODE COUNT, a new tag each time. */
static void
s_fault (const char *mode, int count)
{
    static int tag;
    const char *ctl = getenv ("AZURE_TEST_FAULT_CTL");
    ck_assert_ptr_nonnull (ctl);
    char tmp[1024];
    snprintf (tmp, sizeof tmp, "%s.tmp", ctl);
    FILE *f = fopen (tmp, "w");
    ck_assert_ptr_nonnull (f);
    fprintf (f, "%s %d t%d\n", mode, count, ++tag);
    ck_assert_int_eq (fclose (f), 0);
    ck_assert_int_eq (rename (tmp, ctl), 0);
}

/* One verified read of key through s; its completion. */
static sb_io_done_t
s_read_one (sb_storage_t *s, const char *key, uint64_t length, uint64_t *seed)
{
    sb_io_t io = { .tag = 7, .key = key, .offset = 0, .length = length, .expect_size = UINT64_MAX };
    sb_storage_error_t e;
    ck_assert_msg (sb_storage_queue (s, &io, &e) == 0, "%s", e.text);
    (void) seed;
    s_reaped_t r = { 0 };
    while (r.n == 0)
        ck_assert_int_ge (sb_storage_getevents (s, 100, s_on_done, &r, &e), 0);
    return r.done[0];
}

/* Transient failures (503, a reset connection) are retried and counted
 * per endpoint; past max_retries the read fails with every field. */
START_TEST (test_retries)
{
    const char *via = getenv ("AZURE_TEST_FAULT_ENDPOINT");
    ck_assert_ptr_nonnull (via);
    sb_storage_cfg_t c;
    s_cfg (&c, NULL, NULL);
    sb_storage_t *direct = s_open (&c, 1);
    sb_storage_error_t e;
    uint64_t seed = 21;
    ck_assert_msg (sb_storage_put (direct, "faults/obj", 30000, s_fill, &seed, 0, &e) == 0, "%s", e.text);
    snprintf (c.endpoints[0], sizeof c.endpoints[0], "%s", via);
    c.max_retries = 3;
    sb_storage_t *s = s_open (&c, 1);
    sb_storage_stats_t st[2];
    /* two 503s, then the read: three requests, two errors, two retries */
    s_fault ("503", 2);
    sb_io_done_t d = s_read_one (s, "faults/obj", 30000, &seed);
    ck_assert_msg (!d.failed, "%s", d.error.text);
    ck_assert_uint_eq (d.bytes, 30000);
    ck_assert_uint_eq (sb_storage_stats (s, st, 2), 1);
    ck_assert_uint_eq (st[0].requests, 3);
    ck_assert_uint_eq (st[0].errors, 2);
    ck_assert_uint_eq (st[0].retries, 2);
    ck_assert_uint_eq (st[0].bytes, 30000);
    /* a connection reset mid-body, once: retried */
    s_fault ("reset", 1);
    d = s_read_one (s, "faults/obj", 30000, &seed);
    ck_assert_msg (!d.failed, "%s", d.error.text);
    ck_assert_uint_eq (sb_storage_stats (s, st, 2), 1);
    ck_assert_uint_eq (st[0].requests, 2);
    ck_assert_uint_eq (st[0].retries, 1);
    /* 503 every time: the fourth attempt fails, transient, with the service's code */
    s_fault ("503", -1);
    d = s_read_one (s, "faults/obj", 30000, &seed);
    ck_assert_int_eq (d.failed, 1);
    ck_assert_int_eq (d.error.status, 503);
    ck_assert_str_eq (d.error.code, "SlowDown");
    ck_assert_int_eq (d.error.transient, 1);
    ck_assert_int_eq (d.error.missing, 0);
    ck_assert_int_eq (d.error.attempt, 4);
    ck_assert_msg (strstr (d.error.text, "(attempt 4): HTTP 503 SlowDown") != NULL, "%s", d.error.text);
    ck_assert_uint_eq (sb_storage_stats (s, st, 2), 1);
    ck_assert_uint_eq (st[0].requests, 4);
    ck_assert_uint_eq (st[0].errors, 4);
    ck_assert_uint_eq (st[0].retries, 3);
    /* a dropped connection every time: the curl code, transient */
    s_fault ("drop", -1);
    d = s_read_one (s, "faults/obj", 30000, &seed);
    ck_assert_int_eq (d.failed, 1);
    ck_assert_int_eq (d.error.status, 0);
    ck_assert_int_ne (d.error.lib_code, 0);
    ck_assert_int_eq (d.error.transient, 1);
    s_fault ("none", 0);
    ck_assert_int_eq (sb_storage_remove (direct, "faults/obj", &e), 0);
    sb_storage_close (&s);
    sb_storage_close (&direct);
}
END_TEST

/* configure (no endpoint given): the connection string's BlobEndpoint,
 * else its protocol, account and suffix, else AZURE_STORAGE_ACCOUNT, else
 * an error saying what to set; an endpoint given is kept. The key is never
 * copied into cfg (which goes to workers). Run with neither variable set. */
static int
s_configure (sb_storage_cfg_t *c, char *err, size_t size)
{
    memset (c, 0, sizeof *c);
    snprintf (c->engine, sizeof c->engine, "azure");
    snprintf (c->store, sizeof c->store, "data");
    return sb_engine_find ("azure")->configure (c, &(sb_engine_setup_t) { .scheme = "az" }, err, size);
}

START_TEST (test_configure)
{
    ck_assert_ptr_null (getenv ("AZURE_STORAGE_CONNECTION_STRING"));
    ck_assert_ptr_null (getenv ("AZURE_STORAGE_ACCOUNT"));
    sb_storage_cfg_t c;
    char err[512] = "";
    ck_assert_int_eq (s_configure (&c, err, sizeof err), -1);
    ck_assert_str_eq (err, "no Azure Blob endpoint: give storage.endpoint_uris, or set AZURE_STORAGE_CONNECTION_STRING"
                      " (its BlobEndpoint, or AccountName) or AZURE_STORAGE_ACCOUNT");
    ck_assert_uint_eq (c.nendpoints, 0);
    ck_assert_int_eq (setenv ("AZURE_STORAGE_ACCOUNT", "acct1", 1), 0);
    memset (&c, 0, sizeof c);
    c.list_parallelism = 4;     /* the workload default: one stream (List Blobs has no start-after) */
    ck_assert_int_eq (sb_engine_find ("azure")->configure (&c, &(sb_engine_setup_t) { .scheme = "az" }, err, sizeof err), 0);
    ck_assert_uint_eq (c.list_parallelism, 1);
    ck_assert_int_eq (s_configure (&c, err, sizeof err), 0);
    ck_assert_uint_eq (c.nendpoints, 1);
    ck_assert_str_eq (c.endpoints[0], "https://acct1.blob.core.windows.net");
    const char *key = "c2VjcmV0LWtleS1ieXRlcy1mb3ItdGhlLXRlc3Qtb25seQ==";
    char cs[512];
    snprintf (cs, sizeof cs, "DefaultEndpointsProtocol=https;AccountName=acct2;AccountKey=%s;EndpointSuffix=core.chinacloudapi.cn",
              key);
    ck_assert_int_eq (setenv ("AZURE_STORAGE_CONNECTION_STRING", cs, 1), 0);
    ck_assert_int_eq (s_configure (&c, err, sizeof err), 0);
    ck_assert_str_eq (c.endpoints[0], "https://acct2.blob.core.chinacloudapi.cn");
    ck_assert_ptr_null (memmem (&c, sizeof c, key, strlen (key)));
    ck_assert_ptr_null (memmem (&c, sizeof c, "AccountKey", 10));
    snprintf (cs, sizeof cs, "AccountName=devstoreaccount1;AccountKey=%s;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1/",
              key);
    ck_assert_int_eq (setenv ("AZURE_STORAGE_CONNECTION_STRING", cs, 1), 0);
    ck_assert_int_eq (s_configure (&c, err, sizeof err), 0);
    ck_assert_str_eq (c.endpoints[0], "http://127.0.0.1:10000/devstoreaccount1");
    ck_assert_ptr_null (memmem (&c, sizeof c, key, strlen (key)));
    ck_assert_int_eq (setenv ("AZURE_STORAGE_CONNECTION_STRING", "UseDevelopmentStorage=true", 1), 0);
    ck_assert_int_eq (s_configure (&c, err, sizeof err), 0);
    ck_assert_str_eq (c.endpoints[0], "http://127.0.0.1:10000/devstoreaccount1");
    ck_assert_int_eq (setenv ("AZURE_STORAGE_CONNECTION_STRING", "AccountKey=abc", 1), 0);
    ck_assert_int_eq (s_configure (&c, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "neither BlobEndpoint nor AccountName"));
    /* an endpoint the workload gave is kept */
    memset (&c, 0, sizeof c);
    snprintf (c.endpoints[0], sizeof c.endpoints[0], "http://10.0.0.1:10000/acct");
    c.nendpoints = 1;
    ck_assert_int_eq (sb_engine_find ("azure")->configure (&c, &(sb_engine_setup_t) { .scheme = "az" }, err, sizeof err), 0);
    ck_assert_str_eq (c.endpoints[0], "http://10.0.0.1:10000/acct");
    /* the registry names the engine by scheme and storage type */
    ck_assert_ptr_eq (sb_engine_for_scheme ("az"), sb_engine_find ("azure"));
    ck_assert_ptr_eq (sb_engine_for_storage_type ("az"), sb_engine_find ("azure"));
    ck_assert_ptr_eq (sb_engine_for_storage_type ("azure"), sb_engine_find ("azure"));
    /* credentials: what to set when none */
    ck_assert_int_eq (unsetenv ("AZURE_STORAGE_CONNECTION_STRING"), 0);
    ck_assert_int_eq (unsetenv ("AZURE_STORAGE_ACCOUNT"), 0);
    snprintf (c.engine, sizeof c.engine, "azure");
    snprintf (c.store, sizeof c.store, "data");
    sb_storage_open_t how = { .root = "" };
    sb_storage_error_t e;
    ck_assert_ptr_null (sb_storage_open (&c, &how, &e));
    ck_assert_msg (strstr (e.text, "no Azure credentials: set AZURE_STORAGE_CONNECTION_STRING") != NULL, "%s", e.text);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("azure_client_live");
    TCase *tc = tcase_create ("azurite");
    tcase_set_timeout (tc, 120);
    const char *only = getenv ("AZURE_TEST_ONLY");
#define ADD(t) do { if (only ? !strcmp (only, #t) : strcmp (#t, "test_error_bad_key") && strcmp (#t, "test_sas") \
                                                 && strcmp (#t, "test_configure")) \
                        tcase_add_test (tc, t); } while (0)
    ADD (test_list_pages);
    ADD (test_blocks);
    ADD (test_names);
    ADD (test_error_missing);
    ADD (test_error_bad_key);
    ADD (test_sas);
    ADD (test_two_endpoints);
    ADD (test_stop);
    ADD (test_retries);
    ADD (test_configure);
#undef ADD
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
