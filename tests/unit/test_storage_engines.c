/* storage engines: one conformance suite run against every registered
 * engine that stores bytes (lib/storage/engine.h), and the synthetic
 * engine's own test.
 *
 * The suite walks the registry (sb_engine_at): each engine has a fixture
 * below saying how to open a client of it here or why it is skipped, and
 * an engine without one fails the suite. file, direct and uring run in a
 * scratch folder (direct and uring are skipped, with a message, where the
 * file system or kernel refuses them); s3 and azure run against servers
 * that tests/integration/test_storage_engines.sh starts (s3rver, Azurite)
 * and names in the environment. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "dataset.h"
#include "engine.h"
#include "pagecache.h"
#include "util.h"

/* ---- the engines under test ---- */

typedef struct {
    char             engine[16];
    sb_storage_cfg_t cfg;
    char             root[512];     /* folder ending with '/', or key prefix */
    char             skip[256];     /* why this engine is not run here; "" runs it */
    int              no_fixture;    /* the engine has no fixture below: the suite fails */
} s_target_t;

/* every engine built, in registry order (sb_engine_at); more than the
 * build has are empty iterations */
#define S_TARGETS_MAX 12
static s_target_t s_targets[S_TARGETS_MAX];
static size_t s_ntargets;
static char s_dir[400];

/* 1 when the scratch folder's file system takes O_DIRECT reads */
static int
s_direct_ok (char *why, size_t why_size)
{
    char path[600];
    snprintf (path, sizeof path, "%s/.probe", s_dir);
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        snprintf (why, why_size, "cannot write %s: %s", path, strerror (errno));
        return 0;
    }
    close (fd);
    fd = open (path, O_RDONLY | O_DIRECT);
    int err = errno;
    unlink (path);
    if (fd < 0) {
        snprintf (why, why_size, "%s refuses O_DIRECT (%s)", s_dir, strerror (err));
        return 0;
    }
    close (fd);
    return 1;
}

/* ---- fixtures: one per engine, saying how to open a client of it here
 * (from the environment the wrapper sets), or why it is skipped. The
 * suite walks the registry, and an engine without a fixture fails it
 * (test_fixtures_cover_registry): a new engine cannot be left out. ---- */

/* a folder of the scratch folder */
static void
s_fix_folder (s_target_t *t)
{
    snprintf (t->root, sizeof t->root, "%s/%s/", s_dir, t->engine);
}

static void
s_fix_direct (s_target_t *t)
{
    s_fix_folder (t);
    if (!s_direct_ok (t->skip, sizeof t->skip))
        return;
}

/* the io_uring engine reads the same folder tree; skipped where io_uring
 * cannot be set up */
static void
s_fix_uring (s_target_t *t)
{
    s_fix_folder (t);
    sb_storage_open_t how = { .root = t->root, .depth = 1, .buffer_bytes = 64 << 10 };
    sb_storage_error_t e;
    sb_storage_t *probe = sb_storage_open (&t->cfg, &how, &e);
    if (!probe)
        snprintf (t->skip, sizeof t->skip, "%s", e.text);
    sb_storage_close (&probe);
}

/* a prefix of this run alone: the bucket or container outlives it */
static void
s_run_prefix (s_target_t *t)
{
    snprintf (t->root, sizeof t->root, "conformance-%d-%llu/", (int) getpid (),
              (unsigned long long) (sb_mono_ns () % 1000000007ull));
}

/* $S3_ENDPOINTS ("URL [URL]") and $S3_BUCKET name a server
 * (tests/integration/test_storage_engines.sh starts s3rver,
 * test_radosgw.sh radosgw). The gcs engine is the same client with GCS's
 * defaults (its XML API speaks S3's protocol, signed for the location
 * "auto"): no GCS emulator is reachable here, so its fixture is the same
 * S3 server, which tests the protocol and its signing scope, not GCS. */
static void
s_fix_s3 (s_target_t *t)
{
    const char *eps = getenv ("S3_ENDPOINTS");
    if (!eps || !*eps) {
        snprintf (t->skip, sizeof t->skip, "no S3_ENDPOINTS (tests/integration/test_storage_engines.sh sets it)");
        return;
    }
    sb_storage_cfg_t *c = &t->cfg;
    snprintf (c->store, sizeof c->store, "%s", getenv ("S3_BUCKET") ? getenv ("S3_BUCKET") : "sbtest");
    char list[2048];
    snprintf (list, sizeof list, "%s", eps);
    for (char *save = NULL, *tok = strtok_r (list, " ", &save); tok && c->nendpoints < SB_MAX_ENDPOINTS;
         tok = strtok_r (NULL, " ", &save))
        snprintf (c->endpoints[c->nendpoints++], sizeof c->endpoints[0], "%s", tok);
    c->max_in_flight = 4;
    c->connect_timeout_s = 2;
    c->request_timeout_s = 20;
    c->max_retries = 1;
    /* the S3 client's own settings, as the workload loader stores them:
     * the engine's configure op (the region from the environment) and
     * small parts, so that the suite's objects go as multipart uploads */
    char err[512];
    ck_assert_int_eq (sb_storage_opt_set (c, "s3", "multipart_threshold", "6291456"), 0);
    ck_assert_int_eq (sb_storage_opt_set (c, "s3", "multipart_part", "5242880"), 0);
    const sb_engine_ops_t *ops = sb_engine_find (t->engine);
    ck_assert_msg (ops->configure (c, &(sb_engine_setup_t) { .scheme = ops->schemes[0] }, err, sizeof err) == 0, "%s",
                   err);
    s_run_prefix (t);
}

/* $AZURE_TEST_CONTAINER names a container, the endpoint and credentials
 * come from the environment as a workload's would (the engine's configure
 * op: AZURE_STORAGE_CONNECTION_STRING; tests/integration/
 * test_storage_engines.sh starts Azurite and sets both). Small blocks,
 * so that the suite's objects of S_SIZE bytes go as staged blocks. */
static void
s_fix_azure (s_target_t *t)
{
    const char *container = getenv ("AZURE_TEST_CONTAINER");
    if (!container || !*container) {
        snprintf (t->skip, sizeof t->skip,
                  "no AZURE_TEST_CONTAINER (tests/integration/test_storage_engines.sh starts Azurite and sets it)");
        return;
    }
    sb_storage_cfg_t *c = &t->cfg;
    snprintf (c->store, sizeof c->store, "%s", container);
    char err[512];
    const sb_engine_ops_t *ops = sb_engine_find ("azure");
    ck_assert_msg (ops->configure (c, &(sb_engine_setup_t) { .scheme = "az" }, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq (c->nendpoints, 1);
    c->max_in_flight = 4;
    c->connect_timeout_s = 2;
    c->request_timeout_s = 20;
    c->max_retries = 1;
    ck_assert_int_eq (sb_storage_opt_set (c, "azure", "block_bytes", "65536"), 0);
    ck_assert_int_eq (sb_storage_opt_set (c, "azure", "single_put_bytes", "131072"), 0);
    s_run_prefix (t);
}

/* nothing stored: test_synthetic below is its test */
static void
s_fix_synthetic (s_target_t *t)
{
    snprintf (t->skip, sizeof t->skip, "stores nothing; test_synthetic is its own test");
}

static const struct {
    const char *engine;
    void      (*setup) (s_target_t *t);
} s_fixtures[] = {
    { "file", s_fix_folder },
    { "direct", s_fix_direct },
    { "uring", s_fix_uring },
    { "s3", s_fix_s3 },
    { "gcs", s_fix_s3 },
    { "azure", s_fix_azure },
    { "synthetic", s_fix_synthetic },
};

/* The fixture of engine name, or -1. */
static int
s_fixture_of (const char *name)
{
    for (size_t i = 0; i < sizeof s_fixtures / sizeof s_fixtures[0]; i++)
        if (!strcmp (s_fixtures[i].engine, name))
            return (int) i;
    return -1;
}

static void
s_targets_init (void)
{
    if (s_ntargets)
        return;
    const char *tmp = getenv ("TMPDIR") && *getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp";
    ck_assert_int_lt (snprintf (s_dir, sizeof s_dir, "%s/sb-engines-XXXXXX", tmp), (int) sizeof s_dir);
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
    const sb_engine_ops_t *ops;
    for (size_t i = 0; (ops = sb_engine_at (i)) && s_ntargets < S_TARGETS_MAX; i++) {
        s_target_t *t = &s_targets[s_ntargets++];
        snprintf (t->engine, sizeof t->engine, "%s", ops->name);
        snprintf (t->cfg.engine, sizeof t->cfg.engine, "%s", ops->name);
        int f = s_fixture_of (ops->name);
        if (f < 0) {
            t->no_fixture = 1;
            snprintf (t->skip, sizeof t->skip, "no fixture in tests/unit/test_storage_engines.c");
        }
        else
            s_fixtures[f].setup (t);
    }
}

/* The engine the suite's folder tests use (file), by name. */
static const s_target_t *
s_target (const char *engine)
{
    s_targets_init ();
    for (size_t i = 0; i < s_ntargets; i++)
        if (!strcmp (s_targets[i].engine, engine))
            return &s_targets[i];
    ck_abort_msg ("no %s engine in the registry", engine);
    return NULL;
}

/* The target of loop iteration i, opened; NULL when skipped (said why). */
static sb_storage_t *
s_open (int i, size_t depth, const s_target_t **out)
{
    s_targets_init ();
    *out = NULL;
    if (i >= (int) s_ntargets)
        return NULL;    /* a registry shorter than S_TARGETS_MAX */
    const s_target_t *t = &s_targets[i];
    *out = t;
    ck_assert_msg (!t->no_fixture, "the %s engine has no fixture in tests/unit/test_storage_engines.c", t->engine);
    if (t->skip[0]) {
        printf ("storage engines: %s engine skipped: %s\n", t->engine, t->skip);
        return NULL;
    }
    ck_assert_ptr_nonnull (sb_engine_find (t->engine));
    sb_storage_open_t how = { .root = t->root, .depth = depth, .buffer_bytes = 64 << 10 };
    sb_storage_error_t e;
    sb_storage_t *s = sb_storage_open (&t->cfg, &how, &e);
    ck_assert_msg (s != NULL, "%s: %s", t->engine, e.text);
    ck_assert_str_eq (sb_storage_ops (s)->name, t->engine);
    return s;
}

/* ---- helpers ---- */

static void
s_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    sb_content_fill (*(const uint64_t *) ctx, offset, buf, len);
}

/* the expected bytes of a read: seeded, ending at size */
typedef struct {
    uint64_t seed;
    int     *freed;
} s_expect_t;

static void
s_expect_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    s_expect_t *x = ctx;
    sb_content_fill (x->seed, offset, buf, len);
}

static void
s_expect_free (void *ctx)
{
    s_expect_t *x = ctx;
    (*x->freed)++;
    free (x);
}

typedef struct {
    size_t       n;
    sb_io_done_t done[16];
} s_reaped_t;

static void
s_on_done (void *ctx, const sb_io_done_t *d)
{
    s_reaped_t *r = ctx;
    ck_assert_uint_lt (r->n, 16);
    r->done[r->n++] = *d;
}

/* Read [offset, offset + length) of key, verified against seed when
 * size_expected is not 0 (the generator's end), and reap it. */
static sb_io_done_t
s_read (sb_storage_t *s, const char *key, uint64_t offset, uint64_t length, uint64_t seed, uint64_t expect_size,
        int *freed)
{
    sb_io_t io = { .tag = 42, .key = key, .offset = offset, .length = length, .expect_size = UINT64_MAX };
    if (expect_size) {
        s_expect_t *x = malloc (sizeof *x);
        ck_assert_ptr_nonnull (x);
        x->seed = seed;
        x->freed = freed;
        io.expect = s_expect_fill;
        io.expect_ctx = x;
        io.expect_free = s_expect_free;
        io.expect_size = expect_size;
    }
    sb_storage_error_t e;
    ck_assert_msg (sb_storage_queue (s, &io, &e) == 0, "queue %s: %s", key, e.text);
    ck_assert_uint_eq (sb_storage_pending (s), 1);
    s_reaped_t r = { 0 };
    uint64_t t0 = sb_mono_ns ();
    while (r.n == 0) {
        int n = sb_storage_getevents (s, 100, s_on_done, &r, &e);
        ck_assert_msg (n >= 0, "getevents: %s", e.text);
        ck_assert_msg (sb_mono_ns () - t0 < 60000000000ull, "read of %s never completed", key);
    }
    ck_assert_uint_eq (r.n, 1);
    ck_assert_uint_eq (sb_storage_pending (s), 0);
    ck_assert_uint_eq (r.done[0].tag, 42);
    return r.done[0];
}

typedef struct {
    char     keys[8][64];
    uint64_t sizes[8];
    size_t   n;
} s_listing_t;

static int
s_collect (void *ctx, const char *key, size_t key_len, uint64_t size)
{
    s_listing_t *l = ctx;
    ck_assert_uint_lt (l->n, 8);
    ck_assert_uint_lt (key_len, sizeof l->keys[0]);
    memcpy (l->keys[l->n], key, key_len);
    l->keys[l->n][key_len] = '\0';
    l->sizes[l->n++] = size;
    return 0;
}

static int
s_cmp_entry (const void *a, const void *b)
{
    return strcmp (a, b);
}

typedef struct {
    int checked, failed;
} s_checks_t;

static void
s_on_check (void *ctx, const char *where, const sb_storage_error_t *e)
{
    s_checks_t *c = ctx;
    ck_assert_ptr_nonnull (where);
    c->checked++;
    if (e)
        c->failed++;
}

/* ---- the conformance suite (one loop iteration per engine) ---- */

#define S_SIZE 300000u     /* several buffers of 64 KiB, not block-aligned */

START_TEST (test_put_read_ranges)
{
    const s_target_t *t;
    sb_storage_t *s = s_open (_i, 1, &t);
    if (!s)
        return;
    sb_storage_error_t e;
    uint64_t seed = 1234;
    ck_assert_msg (sb_storage_put (s, "conf/a/obj1", S_SIZE, s_fill, &seed, SB_PUT_REPLACE | SB_PUT_FSYNC, &e) == 0,
                   "%s: put: %s", t->engine, e.text);
    /* ranges: whole, inside, across a 4096 edge and buffers, up to the end */
    const uint64_t ranges[][2] = { { 0, 0 }, { 0, S_SIZE }, { 1000, 5000 }, { 4095, 70000 }, { S_SIZE - 1000, 1000 },
                                   { 65536, 65536 } };
    int freed = 0;
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        sb_io_done_t d = s_read (s, "conf/a/obj1", ranges[i][0], ranges[i][1], seed, S_SIZE, &freed);
        ck_assert_msg (!d.failed, "%s: read %llu+%llu: %s", t->engine, (unsigned long long) ranges[i][0],
                       (unsigned long long) ranges[i][1], d.error.text);
        ck_assert_uint_eq (d.bytes, ranges[i][1] ? ranges[i][1] : S_SIZE);
    }
    ck_assert_int_eq (freed, (int) (sizeof ranges / sizeof ranges[0]));
    /* bytes that differ from the expected ones fail the read, naming the key */
    sb_io_done_t d = s_read (s, "conf/a/obj1", 100, 1000, seed + 1, S_SIZE, &freed);
    ck_assert_msg (d.failed, "%s: a read with other bytes than expected passed", t->engine);
    ck_assert_msg (strstr (d.error.text, "conf/a/obj1") != NULL, "%s: %s", t->engine, d.error.text);
    ck_assert_str_eq (d.error.engine, t->engine);
    /* an object longer than its generator fails a whole read */
    d = s_read (s, "conf/a/obj1", 0, 0, seed, S_SIZE - 10, &freed);
    ck_assert_msg (d.failed, "%s: an object past the generator's end passed", t->engine);
    ck_assert_int_eq (freed, (int) (sizeof ranges / sizeof ranges[0]) + 2);
    /* blocking reads */
    uint64_t got = 0;
    ck_assert_msg (sb_storage_get (s, "conf/a/obj1", 10, 20000, 0, &got, &e) == 0, "%s: get: %s", t->engine, e.text);
    ck_assert_uint_eq (got, 20000);
    ck_assert_msg (sb_storage_get (s, "conf/a/obj1", 0, 0, 0, &got, &e) == 0, "%s: get: %s", t->engine, e.text);
    ck_assert_uint_eq (got, S_SIZE);
    uint64_t size = 0;
    ck_assert_msg (sb_storage_stat (s, "conf/a/obj1", &size, &e) == 0, "%s: stat: %s", t->engine, e.text);
    ck_assert_uint_eq (size, S_SIZE);
    ck_assert_int_eq (sb_storage_remove (s, "conf/a/obj1", &e), 0);
    sb_storage_close (&s);
    ck_assert_ptr_null (s);
}
END_TEST

START_TEST (test_short_object)
{
    const s_target_t *t;
    sb_storage_t *s = s_open (_i, 1, &t);
    if (!s)
        return;
    sb_storage_error_t e;
    uint64_t seed = 99;
    ck_assert_msg (sb_storage_put (s, "conf/short", 100, s_fill, &seed, SB_PUT_REPLACE, &e) == 0, "%s: put: %s",
                   t->engine, e.text);
    int freed = 0;
    /* a range past its end fails, naming the key */
    sb_io_done_t d = s_read (s, "conf/short", 50, 200, seed, 0, &freed);
    ck_assert_msg (d.failed, "%s: a read past the end of a 100-byte object passed", t->engine);
    ck_assert_msg (strstr (d.error.text, "conf/short") != NULL, "%s: %s", t->engine, d.error.text);
    ck_assert_msg (strstr (d.error.text, "short") != NULL, "%s: not a short read: %s", t->engine, d.error.text);
    ck_assert_str_eq (d.error.engine, t->engine);
    ck_assert_uint_le (d.bytes, 50);
    ck_assert_int_eq (d.error.missing, 0);
    /* the whole of it, and its size */
    d = s_read (s, "conf/short", 0, 0, seed, 100, &freed);
    ck_assert_msg (!d.failed, "%s: %s", t->engine, d.error.text);
    ck_assert_uint_eq (d.bytes, 100);
    char small[256];
    size_t len = 0;
    ck_assert_msg (sb_storage_get_small (s, "conf/short", small, sizeof small, &len, &e) == 0, "%s: %s", t->engine,
                   e.text);
    ck_assert_uint_eq (len, 100);
    uint8_t want[100];
    sb_content_fill (seed, 0, want, sizeof want);
    ck_assert_int_eq (memcmp (small, want, 100), 0);
    /* a buffer too small is an error, not a cut object */
    ck_assert_int_eq (sb_storage_get_small (s, "conf/short", small, 10, &len, &e), -1);
    ck_assert_int_eq (sb_storage_remove (s, "conf/short", &e), 0);
    sb_storage_close (&s);
}
END_TEST

START_TEST (test_missing_object)
{
    const s_target_t *t;
    sb_storage_t *s = s_open (_i, 1, &t);
    if (!s)
        return;
    int freed = 0;
    sb_io_done_t d = s_read (s, "conf/nope", 0, 10, 1, 0, &freed);
    ck_assert (d.failed);
    ck_assert_str_eq (d.error.engine, t->engine);
    ck_assert_msg (d.error.op[0] != '\0', "%s: no op", t->engine);
    ck_assert_msg (strstr (d.error.target, "conf/nope") != NULL, "%s: target '%s'", t->engine, d.error.target);
    ck_assert_msg (strstr (d.error.text, "conf/nope") != NULL, "%s: %s", t->engine, d.error.text);
    ck_assert_int_eq (d.error.missing, 1);
    ck_assert_int_eq (d.error.transient, 0);
    /* the cause: errno for files, the HTTP status for object stores */
    if (sb_storage_client_caps (s) & SB_ENGINE_OBJECTS) {
        ck_assert_int_eq (d.error.status, 404);
        ck_assert_msg (d.error.where[0] != '\0', "%s: no endpoint", t->engine);
    }
    else
        ck_assert_int_eq (d.error.os_errno, ENOENT);
    /* verified or not, a missing object frees its expectation */
    d = s_read (s, "conf/nope", 0, 10, 1, 10, &freed);
    ck_assert (d.failed);
    ck_assert_int_eq (freed, 1);
    sb_storage_error_t e;
    uint64_t size = 7;
    ck_assert_int_eq (sb_storage_stat (s, "conf/nope", &size, &e), -1);
    ck_assert_int_eq (e.missing, 1);
    ck_assert_str_eq (e.engine, t->engine);
    ck_assert_msg (strstr (e.text, "conf/nope") != NULL, "%s: %s", t->engine, e.text);
    char small[16];
    size_t len;
    ck_assert_int_eq (sb_storage_get_small (s, "conf/nope", small, sizeof small, &len, &e), 1);
    uint64_t got;
    ck_assert_int_eq (sb_storage_get (s, "conf/nope", 0, 10, 0, &got, &e), -1);
    ck_assert_int_eq (e.missing, 1);
    /* removing what is not there is fine */
    ck_assert_int_eq (sb_storage_remove (s, "conf/nope", &e), 0);
    sb_storage_close (&s);
}
END_TEST

START_TEST (test_list_stat_remove)
{
    const s_target_t *t;
    sb_storage_t *s = s_open (_i, 1, &t);
    if (!s)
        return;
    sb_storage_error_t e;
    uint64_t seed = 5;
    const char *keys[] = { "list/b/two", "list/a/one", "list/c", "list/a/three" };
    const uint64_t sizes[] = { 2000, 1000, 3, 0 };
    for (size_t i = 0; i < 4; i++)
        ck_assert_msg (sb_storage_put (s, keys[i], sizes[i], s_fill, &seed, SB_PUT_REPLACE, &e) == 0, "%s: %s",
                       t->engine, e.text);
    s_listing_t l = { 0 };
    ck_assert_msg (sb_storage_list (s, "list/", NULL, NULL, s_collect, &l, &e) == 0, "%s: list: %s", t->engine,
                   e.text);
    ck_assert_uint_eq (l.n, 4);
    if (!(sb_storage_client_caps (s) & SB_ENGINE_LIST_ORDERED)) {
        /* a walk gives no order: sort (key, size) pairs together */
        struct { char key[64]; uint64_t size; } pairs[8];
        for (size_t i = 0; i < l.n; i++) {
            snprintf (pairs[i].key, sizeof pairs[i].key, "%s", l.keys[i]);
            pairs[i].size = l.sizes[i];
        }
        qsort (pairs, l.n, sizeof pairs[0], s_cmp_entry);
        for (size_t i = 0; i < l.n; i++) {
            snprintf (l.keys[i], sizeof l.keys[i], "%s", pairs[i].key);
            l.sizes[i] = pairs[i].size;
        }
    }
    /* keys relative to the listed prefix, in byte order */
    ck_assert_str_eq (l.keys[0], "a/one");
    ck_assert_str_eq (l.keys[1], "a/three");
    ck_assert_str_eq (l.keys[2], "b/two");
    ck_assert_str_eq (l.keys[3], "c");
    ck_assert_uint_eq (l.sizes[0], 1000);
    ck_assert_uint_eq (l.sizes[1], 0);
    ck_assert_uint_eq (l.sizes[2], 2000);
    ck_assert_uint_eq (l.sizes[3], 3);
    uint64_t size;
    ck_assert_int_eq (sb_storage_stat (s, "list/b/two", &size, &e), 0);
    ck_assert_uint_eq (size, 2000);
    /* a prefix that holds nothing */
    s_listing_t none = { 0 };
    int rc = sb_storage_list (s, "nothing-here/", NULL, NULL, s_collect, &none, &e);
    ck_assert_msg (rc == 1, "%s: %d: %s", t->engine, rc, e.text);
    ck_assert_uint_eq (none.n, 0);
    /* an ordered engine bounds the range: after a/one, up to b/two */
    if (sb_storage_client_caps (s) & SB_ENGINE_LIST_ORDERED) {
        s_listing_t part = { 0 };
        ck_assert_msg (sb_storage_list (s, "list/", "a/one", "b/two", s_collect, &part, &e) == 0, "%s", e.text);
        ck_assert_uint_eq (part.n, 2);
        ck_assert_str_eq (part.keys[0], "a/three");
        ck_assert_str_eq (part.keys[1], "b/two");
    }
    /* remove: gone from stat and from the listing */
    ck_assert_int_eq (sb_storage_remove (s, "list/a/one", &e), 0);
    ck_assert_int_eq (sb_storage_stat (s, "list/a/one", &size, &e), -1);
    ck_assert_int_eq (e.missing, 1);
    memset (&l, 0, sizeof l);
    ck_assert_int_eq (sb_storage_list (s, "list/", NULL, NULL, s_collect, &l, &e), 0);
    ck_assert_uint_eq (l.n, 3);
    for (size_t i = 1; i < 4; i++)
        ck_assert_int_eq (sb_storage_remove (s, keys[i], &e), 0);
    /* reachable, readable, writable */
    s_checks_t c = { 0 };
    ck_assert_int_eq (sb_storage_preflight (s, 1, s_on_check, &c), 0);
    ck_assert_int_ge (c.checked, 1);
    ck_assert_int_eq (c.failed, 0);
    sb_storage_close (&s);
}
END_TEST

/* an engine that keeps many reads in flight delivers each once */
START_TEST (test_depth)
{
    const s_target_t *t;
    sb_storage_t *s = s_open (_i, 4, &t);
    if (!s)
        return;
    sb_storage_error_t e;
    uint64_t seed = 8;
    ck_assert_int_eq (sb_storage_put (s, "conf/depth", 50000, s_fill, &seed, SB_PUT_REPLACE, &e), 0);
    size_t depth = (sb_storage_client_caps (s) & SB_ENGINE_ASYNC) ? 4 : 1;
    s_reaped_t r = { 0 };
    int freed = 0;
    size_t queued = 0;
    uint64_t bytes = 0;
    while (r.n < 8) {
        while (queued < 8 && sb_storage_pending (s) < depth) {
            s_expect_t *x = malloc (sizeof *x);
            x->seed = seed;
            x->freed = &freed;
            sb_io_t io = { .tag = queued, .key = "conf/depth", .offset = queued * 1000, .length = 1000 + queued,
                           .expect = s_expect_fill, .expect_ctx = x, .expect_free = s_expect_free,
                           .expect_size = 50000 };
            ck_assert_msg (sb_storage_queue (s, &io, &e) == 0, "%s", e.text);
            queued++;
        }
        ck_assert_int_ge (sb_storage_getevents (s, 100, s_on_done, &r, &e), 0);
    }
    uint64_t tags = 0;
    for (size_t i = 0; i < r.n; i++) {
        ck_assert_msg (!r.done[i].failed, "%s: %s", t->engine, r.done[i].error.text);
        bytes += r.done[i].bytes;
        tags |= 1ull << r.done[i].tag;
    }
    ck_assert_uint_eq (tags, 0xff);
    ck_assert_uint_eq (bytes, 8 * 1000 + 28);
    ck_assert_int_eq (freed, 8);
    ck_assert_int_eq (sb_storage_remove (s, "conf/depth", &e), 0);
    sb_storage_close (&s);
}
END_TEST

/* ---- synthetic ---- */

static int s_fills;

static void
s_count_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    (void) ctx;
    (void) offset;
    (void) buf;
    s_fills += len > 0;
}

START_TEST (test_synthetic)
{
    sb_storage_cfg_t cfg = { .nopts = 0 };
    snprintf (cfg.engine, sizeof cfg.engine, "synthetic");
    ck_assert_uint_eq (sb_storage_caps (&cfg), SB_ENGINE_NO_IO | SB_ENGINE_READS_FREE);
    sb_storage_open_t how = { .root = "", .depth = 1, .buffer_bytes = 4096 };
    sb_storage_error_t e;
    sb_storage_t *s = sb_storage_open (&cfg, &how, &e);
    ck_assert_ptr_nonnull (s);
    /* completes inside queue: pending before any getevents */
    sb_io_t io = { .tag = 7, .key = NULL, .offset = 10, .length = 10000, .expect_size = UINT64_MAX };
    ck_assert_int_eq (sb_storage_queue (s, &io, &e), 0);
    ck_assert_uint_eq (sb_storage_pending (s), 1);
    s_reaped_t r = { 0 };
    ck_assert_int_eq (sb_storage_getevents (s, 0, s_on_done, &r, &e), 1);
    ck_assert_uint_eq (r.n, 1);
    ck_assert_uint_eq (r.done[0].tag, 7);
    ck_assert_uint_eq (r.done[0].bytes, 10000);
    ck_assert_int_eq (r.done[0].failed, 0);
    ck_assert_uint_eq (sb_storage_pending (s), 0);
    /* depth 1: a second read before reaping is refused */
    ck_assert_int_eq (sb_storage_queue (s, &io, &e), 0);
    ck_assert_int_eq (sb_storage_queue (s, &io, &e), -1);
    ck_assert_int_eq (sb_storage_getevents (s, 0, s_on_done, &r, &e), 1);
    /* verification generates the expected bytes in buffer-sized pieces */
    int freed = 0;
    s_expect_t *x = malloc (sizeof *x);
    x->seed = 1;
    x->freed = &freed;
    sb_io_t v = { .tag = 8, .key = "k", .length = 10000, .expect = s_count_fill, .expect_ctx = x,
                  .expect_free = s_expect_free, .expect_size = UINT64_MAX };
    s_fills = 0;
    ck_assert_int_eq (sb_storage_queue (s, &v, &e), 0);
    ck_assert_int_eq (s_fills, 3);
    ck_assert_int_eq (freed, 1);
    ck_assert_int_eq (sb_storage_getevents (s, 0, s_on_done, &r, &e), 1);
    ck_assert_uint_eq (r.done[2].bytes, 10000);
    /* nothing is stored: writes are dropped, nothing is found */
    uint64_t seed = 1;
    ck_assert_int_eq (sb_storage_put (s, "k", 1 << 20, s_fill, &seed, SB_PUT_FSYNC, &e), 0);
    uint64_t size;
    ck_assert_int_eq (sb_storage_stat (s, "k", &size, &e), -1);
    ck_assert_int_eq (e.missing, 1);
    sb_storage_close (&s);
}
END_TEST

/* Every engine in the registry has a fixture; one added without a fixture
 * is found (and its loop iterations fail, s_open). */
static int
s_open_none (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    (void) cfg, (void) how, (void) e;
    *client = NULL;
    return 0;
}

static void
s_close_none (void *client)
{
    (void) client;
}

static const sb_engine_ops_t s_unfixtured = { .name = "no-fixture", .caps = SB_ENGINE_OBJECTS,
                                               .open = s_open_none, .close = s_close_none };

/* The first engine of the registry without a fixture, or NULL. */
static const char *
s_missing_fixture (void)
{
    const sb_engine_ops_t *ops;
    for (size_t i = 0; (ops = sb_engine_at (i)); i++)
        if (s_fixture_of (ops->name) < 0)
            return ops->name;
    return NULL;
}

START_TEST (test_fixtures_cover_registry)
{
    const char *missing = s_missing_fixture ();
    ck_assert_msg (missing == NULL, "the %s engine has no fixture in tests/unit/test_storage_engines.c: add one"
                   " (how to open a client of it here, or why it is skipped)", missing);
    /* the engines the suite ran over, for the wrapper to check */
    char names[256] = "";
    size_t n = 0, used = 0;
    for (; sb_engine_at (n); n++)
        used += (size_t) snprintf (names + used, used < sizeof names ? sizeof names - used : 0, " %s",
                                   sb_engine_at (n)->name);
    printf ("storage engines: registry:%s\n", names);
    ck_assert_uint_le (n, S_TARGETS_MAX);   /* every engine gets its loop iteration */
    /* the rule bites: an engine registered without a fixture is found */
    ck_assert_int_eq (sb_engine_register (&s_unfixtured), 0);
    ck_assert_str_eq (s_missing_fixture (), "no-fixture");
}
END_TEST

/* the registry: built engines, and one added at run time */
static int
s_fake_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    (void) cfg;
    (void) how;
    (void) e;
    *client = NULL;
    return 0;
}

static void
s_fake_close (void *client)
{
    (void) client;
}

static const sb_engine_ops_t s_fake = { .name = "fake-conf", .caps = SB_ENGINE_OBJECTS, .open = s_fake_open,
                                        .close = s_fake_close };

START_TEST (test_registry)
{
    ck_assert_ptr_nonnull (sb_engine_find ("file"));
    ck_assert_ptr_nonnull (sb_engine_find ("direct"));
    ck_assert_ptr_nonnull (sb_engine_find ("synthetic"));
    ck_assert_ptr_null (sb_engine_find ("nope"));
    ck_assert_int_eq (sb_engine_register (&s_fake), 0);
    ck_assert_int_eq (sb_engine_register (&s_fake), -1);   /* a name once */
    ck_assert_ptr_eq (sb_engine_find ("fake-conf"), &s_fake);
    sb_storage_cfg_t cfg = { 0 };
    snprintf (cfg.engine, sizeof cfg.engine, "fake-conf");
    ck_assert_uint_eq (sb_storage_caps (&cfg), SB_ENGINE_OBJECTS);
    size_t n = 0;
    while (sb_engine_at (n))
        n++;
    ck_assert_ptr_eq (sb_engine_at (n - 1), &s_fake);
    /* an op the engine lacks fails, naming the engine and the op */
    sb_storage_open_t how = { .root = "" };
    sb_storage_error_t e;
    sb_storage_t *s = sb_storage_open (&cfg, &how, &e);
    ck_assert_ptr_nonnull (s);
    uint64_t size;
    ck_assert_int_eq (sb_storage_stat (s, "x", &size, &e), -1);
    ck_assert_ptr_nonnull (strstr (e.text, "fake-conf"));
    ck_assert_str_eq (e.op, "stat");
    sb_storage_close (&s);
    snprintf (cfg.engine, sizeof cfg.engine, "nope");
    ck_assert_ptr_null (sb_storage_open (&cfg, &how, &e));
    ck_assert_ptr_nonnull (strstr (e.text, "nope"));
}
END_TEST

/* the file engine's own errors: what is not a regular file, a path too long */
START_TEST (test_file_not_regular)
{
    const s_target_t *t;
    ck_assert_str_eq (s_target ("file")->engine, "file");
    sb_storage_t *s = s_open ((int) (s_target ("file") - s_targets), 1, &t);
    char path[700];
    snprintf (path, sizeof path, "%sfolder.npz", t->root);
    ck_assert_int_eq (mkdir (t->root, 0755) == 0 || errno == EEXIST, 1);
    ck_assert_int_eq (mkdir (path, 0755), 0);
    int freed = 0;
    sb_io_done_t d = s_read (s, "folder.npz", 0, 10, 1, 0, &freed);
    ck_assert (d.failed);
    ck_assert_ptr_nonnull (strstr (d.error.text, "not a regular file (a directory)"));
    ck_assert_int_eq (rmdir (path), 0);
    sb_storage_close (&s);
}
END_TEST

/* the file engine's page cache flags and progress; direct ignores the flags */
START_TEST (test_file_page_cache)
{
    const char *const folders[] = { "file", "direct" };
    for (int i = 0; i < 2; i++) {
        const s_target_t *t = s_target (folders[i]);
        if (t->skip[0])
            continue;
        uint64_t progress = 0;
        sb_storage_open_t how = { .root = t->root, .depth = 1, .buffer_bytes = 64 << 10, .progress_ns = &progress };
        sb_storage_error_t e;
        sb_storage_t *s = sb_storage_open (&t->cfg, &how, &e);
        ck_assert_ptr_nonnull (s);
        uint64_t seed = 3;
        ck_assert_int_eq (sb_storage_put (s, "pc/obj", 100000, s_fill, &seed, SB_PUT_REPLACE, &e), 0);
        sb_io_t io = { .tag = 1, .key = "pc/obj", .offset = 0, .length = 100000, .flags = SB_IO_EVICT,
                       .expect_size = UINT64_MAX };
        s_reaped_t r = { 0 };
        ck_assert_int_eq (sb_storage_queue (s, &io, &e), 0);
        ck_assert_int_eq (sb_storage_getevents (s, 0, s_on_done, &r, &e), 1);
        ck_assert_msg (!r.done[0].failed, "%s", r.done[0].error.text);
        ck_assert_uint_gt (progress, 0);    /* the engine said it moved */
        io.flags = SB_IO_RESIDENCY;
        ck_assert_int_eq (sb_storage_queue (s, &io, &e), 0);
        ck_assert_int_eq (sb_storage_getevents (s, 0, s_on_done, &r, &e), 1);
        ck_assert_msg (!r.done[1].failed, "%s", r.done[1].error.text);
        if (sb_storage_client_caps (s) & SB_ENGINE_PAGE_CACHE)
            ck_assert_uint_eq (r.done[1].checked_bytes, 100000);
        else
            ck_assert_uint_eq (r.done[1].checked_bytes, 0);
        ck_assert_uint_le (r.done[1].resident_bytes, r.done[1].checked_bytes);
        ck_assert_int_eq (sb_storage_remove (s, "pc/obj", &e), 0);
        sb_storage_close (&s);
    }
}
END_TEST

/* ---- checkpoint writes: eviction after a put, stopping, the writer's name ---- */

/* Bytes of root + key resident in the page cache now; -1 when it cannot be told. */
static int64_t
s_resident (const s_target_t *t, const char *key)
{
    char path[700], why[512];
    snprintf (path, sizeof path, "%s%s", t->root, key);
    int fd = open (path, O_RDONLY);
    ck_assert_msg (fd >= 0, "open %s: %s", path, strerror (errno));
    sb_residency_t r;
    int rc = sb_pagecache_residency (fd, 0, 0, &r, path, why, sizeof why);
    if (rc != 0)
        printf ("storage engines: residency of %s: %s\n", path, why);
    close (fd);
    return rc == 0 ? (int64_t) r.resident : -1;
}

/* SB_PUT_EVICT: once written and fsync'ed, the file's pages are gone on an
 * engine with SB_ENGINE_PAGE_CACHE (where the file system drops pages at
 * all: tmpfs keeps them, being the file); other engines take the flag and
 * ignore it. SB_IO_EVICT on the blocking get reads the whole object. */
START_TEST (test_put_evict)
{
    const s_target_t *t;
    sb_storage_t *s = s_open (_i, 1, &t);
    if (!s)
        return;
    sb_storage_error_t e;
    uint64_t seed = 77, got = 0;
    ck_assert_msg (sb_storage_put (s, "ev/evicted", S_SIZE, s_fill, &seed,
                                   SB_PUT_REPLACE | SB_PUT_FSYNC | SB_PUT_EVICT, &e) == 0,
                   "%s: put: %s", t->engine, e.text);
    if (sb_storage_client_caps (s) & SB_ENGINE_PAGE_CACHE) {
        /* the same put without the flag keeps its pages: the flag is what drops them */
        ck_assert_int_eq (sb_storage_put (s, "ev/kept", S_SIZE, s_fill, &seed, SB_PUT_REPLACE | SB_PUT_FSYNC, &e), 0);
        int64_t kept = s_resident (t, "ev/kept");
        /* does this file system drop pages at all? */
        char path[700], why[512];
        snprintf (path, sizeof path, "%sev/kept", t->root);
        int fd = open (path, O_RDONLY);
        ck_assert_int_ge (fd, 0);
        ck_assert_msg (sb_pagecache_evict_fd (fd, path, why, sizeof why) == 0, "%s", why);
        close (fd);
        int64_t after = s_resident (t, "ev/kept");
        int64_t evicted = s_resident (t, "ev/evicted");
        if (kept < 0 || after != 0)
            printf ("storage engines: %s engine: SB_PUT_EVICT not checked: the file system of %s keeps its pages"
                    " (or residency cannot be measured there)\n", t->engine, t->root);
        else {
            ck_assert_msg (kept > 0, "%s: a put without SB_PUT_EVICT left no page cached (%lld)", t->engine,
                           (long long) kept);
            ck_assert_msg (evicted == 0, "%s: %lld bytes of a put with SB_PUT_EVICT still cached", t->engine,
                           (long long) evicted);
        }
        ck_assert_int_eq (sb_storage_remove (s, "ev/kept", &e), 0);
    }
    ck_assert_msg (sb_storage_get (s, "ev/evicted", 0, 0, SB_IO_EVICT, &got, &e) == 0, "%s: get: %s", t->engine,
                   e.text);
    ck_assert_uint_eq (got, S_SIZE);
    ck_assert_int_eq (sb_storage_remove (s, "ev/evicted", &e), 0);
    sb_storage_close (&s);
}
END_TEST

/* A stop that says 1 from its `after`-th call on (never when 0). */
typedef struct {
    int      calls, after;
    uint64_t got;       /* bytes the engine said a read got (sb_storage_open_t.got) */
} s_stop_t;

static void
s_got (void *arg, uint64_t bytes)
{
    ((s_stop_t *) arg)->got += bytes;
}

static int
s_stop_after (void *arg)
{
    s_stop_t *st = arg;
    return st->after && ++st->calls >= st->after;
}

/* Temporaries (.*.tmp) in folder. */
static int
s_temporaries (const char *folder)
{
    DIR *d = opendir (folder);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir (d))) {
        size_t len = strlen (de->d_name);
        n += de->d_name[0] == '.' && len > 4 && strcmp (de->d_name + len - 4, ".tmp") == 0;
    }
    closedir (d);
    return n;
}

/* sb_storage_open_t.stop: a folder engine's put and get stop between
 * buffers, fail with e->stopped, and leave no temporary behind; .got
 * hears a read's bytes as they arrive. */
START_TEST (test_put_stop)
{
    s_targets_init ();
    if (_i >= (int) s_ntargets)
        return;
    const s_target_t *t = &s_targets[_i];
    ck_assert_msg (!t->no_fixture, "the %s engine has no fixture in tests/unit/test_storage_engines.c", t->engine);
    if (t->skip[0] || !(sb_storage_caps (&t->cfg) & SB_ENGINE_FOLDER)) {
        printf ("storage engines: %s engine: stopping within an object not checked (%s)\n", t->engine,
                t->skip[0] ? t->skip : "its PUT goes whole");
        return;
    }
    s_stop_t stop = { 0 };
    sb_storage_open_t how = { .root = t->root, .depth = 1, .buffer_bytes = 64 << 10, .stop = s_stop_after,
                              .got = s_got, .stop_arg = &stop };
    sb_storage_error_t e;
    sb_storage_t *s = sb_storage_open (&t->cfg, &how, &e);
    ck_assert_msg (s != NULL, "%s: %s", t->engine, e.text);
    uint64_t seed = 5, size = 0, got = 0;
    char folder[700];
    snprintf (folder, sizeof folder, "%sst", t->root);
    /* a replacing put: stopped at its third buffer of five, nothing left */
    stop.after = 3;
    ck_assert_int_eq (sb_storage_put (s, "st/obj", S_SIZE, s_fill, &seed, SB_PUT_REPLACE, &e), -1);
    ck_assert_msg (e.stopped, "%s: %s", t->engine, e.text);
    ck_assert_msg (strstr (e.text, "stopped") && strstr (e.text, "st/obj"), "%s", e.text);
    ck_assert_int_eq (stop.calls, 3);
    ck_assert_int_eq (sb_storage_stat (s, "st/obj", &size, &e), -1);
    ck_assert (e.missing);
    ck_assert_int_eq (s_temporaries (folder), 0);
    /* a put in place stops as well */
    stop = (s_stop_t) { .after = 2 };
    ck_assert_int_eq (sb_storage_put (s, "st/obj", S_SIZE, s_fill, &seed, 0, &e), -1);
    ck_assert_msg (e.stopped, "%s: %s", t->engine, e.text);
    /* whole, with no stop asked */
    stop = (s_stop_t) { 0 };
    ck_assert_msg (sb_storage_put (s, "st/obj", S_SIZE, s_fill, &seed, SB_PUT_REPLACE, &e) == 0, "%s", e.text);
    /* a blocking read stops between its buffers */
    stop = (s_stop_t) { .after = 2 };
    ck_assert_int_eq (sb_storage_get (s, "st/obj", 0, 0, 0, &got, &e), -1);
    ck_assert_msg (e.stopped, "%s: %s", t->engine, e.text);
    ck_assert_uint_lt (got, S_SIZE);
    stop = (s_stop_t) { 0 };
    ck_assert_int_eq (sb_storage_get (s, "st/obj", 0, 0, 0, &got, &e), 0);
    ck_assert_uint_eq (got, S_SIZE);
    ck_assert_uint_eq (stop.got, S_SIZE);   /* progress came buffer by buffer */
    ck_assert_int_eq (sb_storage_remove (s, "st/obj", &e), 0);
    sb_storage_close (&s);
}
END_TEST

/* What a fill saw of the folder it writes into. */
typedef struct {
    uint64_t seed;
    char     folder[700], prefix[128];
    int      seen;          /* a temporary named prefix...tmp was there */
} s_writer_t;

static void
s_fill_look (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    s_writer_t *w = ctx;
    sb_content_fill (w->seed, offset, buf, len);
    DIR *d = opendir (w->folder);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir (d))) {
        size_t n = strlen (de->d_name);
        if (strncmp (de->d_name, w->prefix, strlen (w->prefix)) == 0 && n > 4 && strcmp (de->d_name + n - 4, ".tmp") == 0)
            w->seen = 1;
    }
    closedir (d);
}

/* sb_storage_open_t.writer names a replacing put's temporary
 * (.NAME.HOST.PID.RAND.tmp, docs/ARCHITECTURE.md "Temporaries"). */
START_TEST (test_put_writer)
{
    const s_target_t *t = s_target ("file");
    sb_storage_open_t how = { .root = t->root, .depth = 1, .buffer_bytes = 64 << 10, .writer = "node-z" };
    sb_storage_error_t e;
    sb_storage_t *s = sb_storage_open (&t->cfg, &how, &e);
    ck_assert_msg (s != NULL, "%s", e.text);
    s_writer_t w = { .seed = 9 };
    snprintf (w.folder, sizeof w.folder, "%swr", t->root);
    snprintf (w.prefix, sizeof w.prefix, ".obj.node-z.%d.", (int) getpid ());
    ck_assert_msg (sb_storage_put (s, "wr/obj", S_SIZE, s_fill_look, &w, SB_PUT_REPLACE, &e) == 0, "%s", e.text);
    ck_assert_msg (w.seen, "no temporary %s*.tmp in %s while writing", w.prefix, w.folder);
    ck_assert_int_eq (s_temporaries (w.folder), 0);
    ck_assert_int_eq (sb_storage_remove (s, "wr/obj", &e), 0);
    sb_storage_close (&s);
}
END_TEST

static void
s_teardown (void)
{
    if (s_ntargets)
        sb_check_remove_tree (s_dir);
}

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("storage_engines");
    TCase *tc = tcase_create ("conformance");
    tcase_set_timeout (tc, 120);
    tcase_add_unchecked_fixture (tc, s_targets_init, s_teardown);
    /* one iteration per engine of the registry (s_targets_init) */
    tcase_add_loop_test (tc, test_put_read_ranges, 0, S_TARGETS_MAX);
    tcase_add_loop_test (tc, test_short_object, 0, S_TARGETS_MAX);
    tcase_add_loop_test (tc, test_missing_object, 0, S_TARGETS_MAX);
    tcase_add_loop_test (tc, test_list_stat_remove, 0, S_TARGETS_MAX);
    tcase_add_loop_test (tc, test_depth, 0, S_TARGETS_MAX);
    tcase_add_test (tc, test_file_not_regular);
    tcase_add_test (tc, test_file_page_cache);
    tcase_add_loop_test (tc, test_put_evict, 0, S_TARGETS_MAX);
    tcase_add_loop_test (tc, test_put_stop, 0, S_TARGETS_MAX);
    tcase_add_test (tc, test_put_writer);
    suite_add_tcase (s, tc);
    TCase *other = tcase_create ("engines");
    tcase_add_test (other, test_fixtures_cover_registry);
    tcase_add_test (other, test_synthetic);
    tcase_add_test (other, test_registry);
    suite_add_tcase (s, other);
    return s;
}

SB_CHECK_MAIN (s_suite)
