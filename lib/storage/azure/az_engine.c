/* az_engine: Azure Blob Storage through az_client.h.
 *
 * Data folders are az://CONTAINER/PATH: the container is cfg->store, PATH
 * the client's root (a key prefix). A client is one sb_az_t (one curl
 * multi handle, its connections, the per-endpoint counters) for the
 * endpoints of the rank it is opened for (sb_storage_for_rank). Reads are
 * ranged GETs kept in flight together, up to the open's depth
 * (SB_ENGINE_ASYNC); bodies are counted (and verified when asked) as they
 * stream in, and dropped. Writes are one Put Blob up to single_put_bytes,
 * else staged blocks (Put Block, block_window of them in flight) and a
 * Put Block List. */
#include "az_auth.h"
#include "az_client.h"
#include "engine.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Azure's limits bound the options: a block of at most 4000 MiB, one Put
 * Blob of at most 5000 MiB, at most 5000 names a List Blobs page. */
static const sb_engine_option_t s_options[] = {
    { .key = "block_bytes", .type = SB_OPT_SIZE, .dflt = "8388608", .min = 64ull << 10, .max = SB_AZ_BLOCK_MAX,
      .help = "bytes of one staged block (Put Block) of an object larger than single_put_bytes; raised to fit"
              " Azure's 50,000 blocks" },
    { .key = "single_put_bytes", .type = SB_OPT_SIZE, .dflt = "33554432", .min = 0, .max = SB_AZ_PUT_BLOB_MAX,
      .help = "objects of at most this many bytes are written with one Put Blob; larger ones in blocks" },
    { .key = "block_window", .type = SB_OPT_UINT, .dflt = "4", .min = 1, .max = 64,
      .help = "staged blocks of one object in flight at once" },
    { .key = "list_page_size", .type = SB_OPT_UINT, .dflt = "5000", .min = 1, .max = SB_AZ_LIST_PAGE_MAX,
      .help = "names per List Blobs request (maxresults)" },
    { .key = NULL },
};

static const char *const s_types[] = { "az", "azure", NULL };
static const char *const s_schemes[] = { "az", NULL };

typedef struct {
    sb_az_t *az;
    char     root[PATH_MAX];
    char     writer[256];
    uint64_t block, single_put, window, page;
} s_az_t;

static uint64_t
s_opt (const sb_storage_cfg_t *cfg, const char *key)
{
    const char *v = sb_storage_opt (cfg, key);
    return v ? strtoull (v, NULL, 10) : 0;
}

/* root + key into out; -1 with e set when too long. */
static int
s_key (const s_az_t *self, const char *key, char *out, size_t size, const char *op, sb_storage_error_t *e)
{
    if (sb_strf (out, size, "%s%s", self->root, key ? key : "") == 0 && strlen (out) <= 1024)
        return 0;
    return sb_storage_fail (e, "azure", op, key ? key : "", ENAMETOOLONG, "%s %s%s: blob name over 1024 bytes", op,
                            self->root, key ? key : "");
}

static int
s_configure (sb_storage_cfg_t *cfg, const sb_engine_setup_t *setup, char *err, size_t err_size)
{
    /* List Blobs cannot start after a name (its marker is opaque): a
     * listing stream over a later key range reads every page before it
     * and drops them (sb_az_list), so streams past the first only add
     * requests. One stream; said when the workload asked for more. */
    if (cfg->list_parallelism > 1) {
        char where[256];
        const char *at = setup && setup->where
                             ? setup->where (setup->ctx, "storage.storage_options.list_parallelism", where, sizeof where)
                             : NULL;
        if (at)
            sb_info ("%s: storage.storage_options.list_parallelism %llu taken as 1 for Azure Blob Storage: List Blobs"
                     " cannot start after a name, so every further stream would read the pages before its range"
                     " again", at, (unsigned long long) cfg->list_parallelism);
        cfg->list_parallelism = 1;
    }
    if (cfg->nendpoints > 0)
        return 0;
    /* the endpoint only: credentials stay in each host's environment */
    if (sb_az_endpoint_from_env (cfg->endpoints[0], sizeof cfg->endpoints[0], err, err_size) != 0)
        return -1;
    cfg->nendpoints = 1;
    return 0;
}

static int
s_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    sb_storage_cfg_t *mine = malloc (sizeof *mine);
    s_az_t *self = calloc (1, sizeof *self);
    if (!mine || !self) {
        free (mine);
        free (self);
        return sb_storage_fail (e, "azure", "open", "", ENOMEM, "azure engine: out of memory");
    }
    const char *root = how->root ? how->root : "";
    if (sb_strf (self->root, sizeof self->root, "%s", root) != 0) {
        free (mine);
        free (self);
        return sb_storage_fail (e, "azure", "open", root, ENAMETOOLONG, "azure engine: key prefix %s too long", root);
    }
    if (how->writer)
        snprintf (self->writer, sizeof self->writer, "%s", how->writer);
    else if (gethostname (self->writer, sizeof self->writer) != 0)
        snprintf (self->writer, sizeof self->writer, "host");
    self->block = s_opt (cfg, "block_bytes");
    self->single_put = s_opt (cfg, "single_put_bytes");
    self->window = s_opt (cfg, "block_window");
    self->page = s_opt (cfg, "list_page_size");
    sb_storage_for_rank (cfg, how->rank, mine);
    char why[1024] = "";
    self->az = sb_az_new (mine, how->depth ? how->depth : 1, why, sizeof why);
    free (mine);
    if (!self->az) {
        free (self);
        int rc = sb_storage_fail (e, "azure", "open", "", 0, "azure engine: %s", why);
        if (cfg->nendpoints)
            snprintf (e->where, sizeof e->where, "%s", cfg->endpoints[0]);
        return rc;
    }
    sb_az_set_stop (self->az, how->stop, how->stop_arg);
    *client = self;
    return 0;
}

static void
s_close (void *client)
{
    s_az_t *self = client;
    if (!self)
        return;
    sb_az_destroy (&self->az);
    free (self);
}

static int
s_preflight (void *client, int write, sb_storage_check_fn check, void *ctx)
{
    s_az_t *self = client;
    int failed = 0;
    /* a probe of this writer alone: hidden ('.'), named after host and process */
    char probe[PATH_MAX];
    snprintf (probe, sizeof probe, "%s.shardbench-preflight.%.64s.%d.%llx", self->root, self->writer, (int) getpid (),
              (unsigned long long) (sb_mono_ns () & 0xffffffffull));
    for (size_t i = 0; i < sb_az_endpoint_count (self->az); i++) {
        sb_storage_error_t e;
        if (sb_az_check (self->az, i, write, probe, &e) == 0)
            check (ctx, sb_az_endpoint (self->az, i), NULL);
        else {
            check (ctx, sb_az_endpoint (self->az, i), &e);
            failed++;
        }
    }
    return failed;
}

typedef struct {
    sb_storage_list_fn fn;
    void              *ctx;
    size_t             skip;
    int                rc;
    uint64_t           count;
} s_list_t;

static int
s_on_key (void *arg, const char *key, uint64_t size)
{
    s_list_t *l = arg;
    l->count++;
    l->rc = l->fn (l->ctx, key + l->skip, strlen (key) - l->skip, size);
    return l->rc;
}

static int
s_list (void *client, const char *prefix, const char *start_after, const char *end_at, sb_storage_list_fn fn,
        void *ctx, sb_storage_error_t *e)
{
    s_az_t *self = client;
    char full[PATH_MAX], after[PATH_MAX], end[PATH_MAX];
    if (s_key (self, prefix, full, sizeof full, "LIST", e) != 0
        || (start_after && sb_strf (after, sizeof after, "%s%s", full, start_after) != 0)
        || (end_at && sb_strf (end, sizeof end, "%s%s", full, end_at) != 0))
        return sb_storage_fail (e, "azure", "LIST", prefix ? prefix : "", ENAMETOOLONG, "LIST %s: name too long", full);
    s_list_t l = { .fn = fn, .ctx = ctx, .skip = strlen (full) };
    int rc = sb_az_list (self->az, full, start_after ? after : NULL, end_at ? end : NULL, (size_t) self->page,
                         s_on_key, &l, e);
    if (l.rc)
        return l.rc;
    if (rc != 0)
        return -1;
    return l.count ? 0 : 1;
}

static int
s_stat (void *client, const char *key, uint64_t *size, sb_storage_error_t *e)
{
    s_az_t *self = client;
    char full[PATH_MAX];
    if (s_key (self, key, full, sizeof full, "HEAD", e) != 0)
        return -1;
    return sb_az_head (self->az, full, size, e);
}

static int
s_put (void *client, const char *key, uint64_t size, sb_storage_fill_fn fill, void *ctx, unsigned flags,
       sb_storage_error_t *e)
{
    s_az_t *self = client;
    (void) flags;   /* a blob is whole and durable once Put Blob or Put Block List returns; nothing to evict */
    char full[PATH_MAX];
    if (s_key (self, key, full, sizeof full, "PUT", e) != 0)
        return -1;
    return sb_az_put (self->az, full, size, fill, ctx, self->block, self->single_put, self->window, e);
}

static int
s_get_small (void *client, const char *key, char *buf, size_t cap, size_t *len, sb_storage_error_t *e)
{
    s_az_t *self = client;
    char full[PATH_MAX];
    if (s_key (self, key, full, sizeof full, "GET", e) != 0)
        return -1;
    return sb_az_get_small (self->az, full, buf, cap, len, e);
}

static int
s_get (void *client, const char *key, uint64_t offset, uint64_t length, unsigned flags, uint64_t *received,
       sb_storage_error_t *e)
{
    s_az_t *self = client;
    (void) flags;   /* no page cache on this host (SB_IO_EVICT) */
    char full[PATH_MAX];
    if (s_key (self, key, full, sizeof full, "GET", e) != 0)
        return -1;
    return sb_az_get (self->az, full, offset, length, received, e);
}

static int
s_remove (void *client, const char *key, sb_storage_error_t *e)
{
    s_az_t *self = client;
    char full[PATH_MAX];
    if (s_key (self, key, full, sizeof full, "DELETE", e) != 0)
        return -1;
    if (sb_az_delete (self->az, full, e) == 0 || e->missing)
        return 0;
    return -1;
}


static int
s_queue (void *client, const sb_io_t *io, sb_storage_error_t *e)
{
    s_az_t *self = client;
    char full[PATH_MAX];
    sb_storage_expect_t *x = NULL;
    if (io->expect)
        x = sb_storage_expect_new (io);
    if ((io->expect && !x) || s_key (self, io->key, full, sizeof full, "GET", e) != 0) {
        if (x)
            sb_storage_expect_release (x);
        else if (io->expect_free)
            io->expect_free (io->expect_ctx);
        return x || !io->expect ? -1
                                : sb_storage_fail (e, "azure", "GET", io->key, ENOMEM, "GET %s%s: out of memory",
                                                   self->root, io->key);
    }
    /* the request owns x from here, also when it cannot start */
    if (sb_az_get_start (self->az, io->tag, full, io->offset, io->length, x ? sb_storage_expect_fill : NULL, x,
                         x ? sb_storage_expect_release : NULL) != 0)
        return sb_storage_fail (e, "azure", "GET", io->key, ENOMEM, "GET %s: cannot start the request (out of memory"
                                " or name too long)", full);
    return 0;
}

typedef struct {
    sb_io_done_fn fn;
    void         *ctx;
    sb_io_done_t  done;
} s_sink_t;

static void
s_on_done (void *arg, const sb_az_done_t *d)
{
    s_sink_t *sink = arg;
    sb_io_done_t *done = &sink->done;
    done->tag = d->tag;
    done->bytes = d->bytes;
    done->latency_ns = d->latency_ns;
    done->failed = d->failed;
    if (d->failed)
        done->error = d->error;
    else
        done->error.text[0] = '\0';
    sink->fn (sink->ctx, done);
}

static int
s_getevents (void *client, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e)
{
    s_az_t *self = client;
    s_sink_t sink = { .fn = fn, .ctx = ctx };
    int n = sb_az_run (self->az, timeout_ms, s_on_done, &sink);
    if (n < 0)
        return sb_storage_fail (e, "azure", "getevents", "", 0, "Azure engine stopped: curl multi interface failure");
    return n;
}

static void
s_wakeup (void *client)
{
    s_az_t *self = client;
    sb_az_wakeup (self->az);
}

static size_t
s_pending (const void *client)
{
    const s_az_t *self = client;
    return sb_az_pending (self->az);
}

static size_t
s_stats (void *client, sb_storage_stats_t *out, size_t max)
{
    s_az_t *self = client;
    size_t n = 0;
    for (size_t i = 0; i < sb_az_endpoint_count (self->az) && n < max; i++) {
        sb_az_stats_t *st = sb_az_stats (self->az, i);
        sb_storage_stats_t *o = &out[n++];
        snprintf (o->where, sizeof o->where, "%s", sb_az_endpoint (self->az, i));
        o->requests = st->requests;
        o->bytes = st->bytes;
        o->errors = st->errors;
        o->retries = st->retries;
        o->latency = st->latency;
        memset (st, 0, sizeof *st);
    }
    return n;
}

static const char *
s_credentials_source (const void *client)
{
    const s_az_t *self = client;
    return sb_az_credentials_source (self->az);
}

const sb_engine_ops_t sb_engine_azure = {
    .name = "azure",
    /* List Blobs gives names in lexicographic order, as ListObjectsV2 does */
    .caps = SB_ENGINE_OBJECTS | SB_ENGINE_ENDPOINTS | SB_ENGINE_LIST_ORDERED | SB_ENGINE_ASYNC,
    .options = s_options,
    .storage_types = s_types,
    .schemes = s_schemes,
    .configure = s_configure,
    .open = s_open,
    .close = s_close,
    .preflight = s_preflight,
    .list = s_list,
    .stat = s_stat,
    .put = s_put,
    .get_small = s_get_small,
    .get = s_get,
    .remove = s_remove,
    .queue = s_queue,
    .getevents = s_getevents,
    .wakeup = s_wakeup,
    .pending = s_pending,
    .stats = s_stats,
    .credentials_source = s_credentials_source,
};
