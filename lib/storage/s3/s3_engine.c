/* s3_engine: S3-compatible object stores through s3_client.h.
 *
 * A client is one sb_s3_t (one curl multi handle, its connections, the
 * per-endpoint counters) for the endpoints of the rank it is opened for
 * (sb_storage_for_rank). Keys are the client's root (a key prefix) followed
 * by the key asked for; listings give keys back relative to the listed
 * prefix. Reads are ranged GETs kept in flight together, up to the open's
 * depth (SB_ENGINE_ASYNC); bodies are counted (and verified when asked) as
 * they stream in, and dropped.
 *
 * With storage.storage_library (the option "library", s3_shape.h) the
 * requests are the library's: a read the library's client splits is
 * queued as its range GETs (after s3dlio's HEAD) and delivered once, when
 * all are in; a client
 * opened for a checkpoint (the option "ckpt_ranks", the run's ranks) puts
 * and gets objects as DLIO's checkpoint writers and readers do. */
#include "engine.h"
#include "s3_client.h"
#include "s3_config.h"
#include "s3_engine.h"
#include "s3_shape.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct s_group s_group_t;
static void s_group_free (s_group_t *g);
static void s_group_pop_free (s_group_t **list);

typedef struct {
    char     engine[16];    /* "s3", or an engine on the same client (gcs): errors name it */
    sb_s3_t *s3;            /* owned */
    char     root[PATH_MAX];
    size_t   page_size;     /* max-keys per ListObjectsV2 request */
    sb_s3_ckpt_shape_t ckpt;    /* shaped: a checkpoint client of a library */
    int      split;         /* the library's client splits larger GETs (s3torchconnector) */
    uint64_t split_part, split_window;
    int      s3dlio;        /* s3dlio's GETs: a HEAD first, range GETs once the size is known */
    int      skip_head;     /* DLIO's latch: no HEAD, the size known from the object's first GET */
    uint64_t cores;         /* this host's online CPUs (s3dlio's concurrency) */
    uint64_t *known;        /* hashes of the keys whose size s3dlio would have cached (open addressing, 0: free) */
    size_t   nknown, known_cap;
    s_group_t *groups;      /* split reads in flight */
    size_t   group_parts;   /* their range GETs in flight */
    size_t   ngroups;
} s_s3_t;

/* sb_s3_error_t into the engine's error. Returns -1. */
static int
s_error (const s_s3_t *self, const sb_s3_error_t *s, sb_storage_error_t *e)
{
    if (!e)
        return -1;
    sb_storage_fail (e, self->engine, s->op, s->key, s->os_errno, "%s", s->text);
    snprintf (e->where, sizeof e->where, "%s", s->endpoint);
    e->status = s->http_status;
    snprintf (e->code, sizeof e->code, "%s", s->s3_code);
    e->lib_code = s->curl_code;
    e->attempt = s->attempt;
    e->missing = s->http_status == 404;
    e->transient = sb_s3_error_is_transient (s);
    e->stopped = s->cancelled;
    return -1;
}

/* root + key into out; -1 with e set when too long. */
static int
s_key (const s_s3_t *self, const char *key, char *out, size_t size, const char *op, sb_storage_error_t *e)
{
    if (sb_strf (out, size, "%s%s", self->root, key ? key : "") == 0)
        return 0;
    return sb_storage_fail (e, self->engine, op, key ? key : "", ENAMETOOLONG, "%s %s%s: key too long", op, self->root,
                            key ? key : "");
}

int
sb_s3e_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    sb_storage_cfg_t *mine = malloc (sizeof *mine);
    s_s3_t *self = calloc (1, sizeof *self);
    if (!mine || !self) {
        free (mine);
        free (self);
        return sb_storage_fail (e, cfg->engine, "open", "", ENOMEM, "s3 engine: out of memory");
    }
    const char *root = how->root ? how->root : "";
    snprintf (self->engine, sizeof self->engine, "%s", cfg->engine);
    if (sb_strf (self->root, sizeof self->root, "%s", root) != 0) {
        free (mine);
        free (self);
        return sb_storage_fail (e, cfg->engine, "open", root, ENAMETOOLONG, "s3 engine: key prefix %s too long", root);
    }
    /* a rank's client talks to the rank's endpoints (per_rank: one) */
    sb_storage_for_rank (cfg, how->rank, mine);
    sb_s3_settings_t set;
    sb_s3_settings (cfg, &set);
    self->page_size = (size_t) set.list_page_size;
    size_t depth = how->depth ? how->depth : 1;
    const char *ranks = sb_storage_opt (cfg, "ckpt_ranks");
    if (ranks) {
        sb_s3_ckpt_shape (cfg, strtoull (ranks, NULL, 10), &self->ckpt);
        if (self->ckpt.shaped && sb_s3_ckpt_depth (&self->ckpt) > depth)
            depth = (size_t) sb_s3_ckpt_depth (&self->ckpt);
    }
    self->split = sb_s3_get_split (cfg, &self->split_part, &self->split_window);
    self->s3dlio = sb_s3_lib (cfg) == SB_S3_LIB_S3DLIO;
    const char *rl = sb_storage_opt (cfg, "record_length");
    self->skip_head = rl && strtoull (rl, NULL, 10) < SB_S3DLIO_HEAD_RECORD;
    long ncpu = sysconf (_SC_NPROCESSORS_ONLN);
    self->cores = ncpu > 0 ? (uint64_t) ncpu : 1;
    char why[1024] = "";
    self->s3 = sb_s3_new (mine, &set, depth, why, sizeof why);
    free (mine);
    if (!self->s3) {
        free (self);
        int rc = sb_storage_fail (e, cfg->engine, "open", "", 0, "%s", why);
        if (cfg->nendpoints)
            snprintf (e->where, sizeof e->where, "%s", cfg->endpoints[0]);
        return rc;
    }
    /* a signal, or the opener's stop (a rank's ABORT, a reader's teardown),
     * ends a request in flight at once, not at its timeout */
    sb_s3_set_stop (self->s3, how->stop, how->stop_arg);
    *client = self;
    return 0;
}

void
sb_s3e_close (void *client)
{
    s_s3_t *self = client;
    if (!self)
        return;
    sb_s3_destroy (&self->s3);
    free (self->known);
    while (self->groups)
        s_group_pop_free (&self->groups);
    free (self);
}

int
sb_s3e_preflight (void *client, int write, sb_storage_check_fn check, void *ctx)
{
    s_s3_t *self = client;
    (void) write;   /* a signed HEAD of the bucket: writes are checked by their first PUT */
    int failed = 0;
    for (size_t i = 0; i < sb_s3_endpoint_count (self->s3); i++) {
        sb_s3_error_t s;
        if (sb_s3_check_endpoint (self->s3, i, &s) == 0)
            check (ctx, sb_s3_endpoint (self->s3, i), NULL);
        else {
            sb_storage_error_t e;
            s_error (self, &s, &e);
            check (ctx, sb_s3_endpoint (self->s3, i), &e);
            failed++;
        }
    }
    return failed;
}

typedef struct {
    sb_storage_list_fn fn;
    void              *ctx;
    const char        *prefix;  /* the listed prefix (root included) */
    size_t             skip;    /* its length */
    int                rc;      /* fn's non-zero return */
    uint64_t           count;   /* keys listed */
    char               outside[1100];   /* a key not under prefix, when one came */
} s_list_t;

static int
s_on_key (void *arg, const char *key, uint64_t size)
{
    s_list_t *l = arg;
    size_t n = strlen (key);
    /* sb_s3_list refuses such a reply (naming its page); cut, the key would
     * name another object */
    if (n < l->skip || memcmp (key, l->prefix, l->skip) != 0) {
        snprintf (l->outside, sizeof l->outside, "%s", key);
        return -1;
    }
    l->count++;
    l->rc = l->fn (l->ctx, key + l->skip, n - l->skip, size);
    return l->rc;
}

int
sb_s3e_list (void *client, const char *prefix, const char *start_after, const char *end_at, sb_storage_list_fn fn,
        void *ctx, sb_storage_error_t *e)
{
    s_s3_t *self = client;
    char full[PATH_MAX], after[PATH_MAX], end[PATH_MAX];
    if (s_key (self, prefix, full, sizeof full, "LIST", e) != 0
        || (start_after && sb_strf (after, sizeof after, "%s%s", full, start_after) != 0)
        || (end_at && sb_strf (end, sizeof end, "%s%s", full, end_at) != 0))
        return sb_storage_fail (e, self->engine, "LIST", prefix ? prefix : "", ENAMETOOLONG, "LIST %s: key too long", full);
    s_list_t l = { .fn = fn, .ctx = ctx, .prefix = full, .skip = strlen (full) };
    sb_s3_error_t s;
    int rc = sb_s3_list (self->s3, full, start_after ? after : NULL, end_at ? end : NULL, self->page_size, s_on_key,
                         &l, &s);
    if (l.outside[0])
        return sb_storage_fail (e, self->engine, "LIST", prefix ? prefix : "", 0,
                                "LIST %s: key '%s' is not under the prefix that was asked for", full, l.outside);
    if (l.rc)
        return l.rc;
    if (rc != 0)
        return s_error (self, &s, e);
    return l.count ? 0 : 1;     /* nothing under the prefix */
}

int
sb_s3e_stat (void *client, const char *key, uint64_t *size, sb_storage_error_t *e)
{
    s_s3_t *self = client;
    char full[PATH_MAX];
    sb_s3_error_t s;
    if (s_key (self, key, full, sizeof full, "HEAD", e) != 0)
        return -1;
    return sb_s3_head (self->s3, full, size, &s) == 0 ? 0 : s_error (self, &s, e);
}

int
sb_s3e_put (void *client, const char *key, uint64_t size, sb_storage_fill_fn fill, void *ctx, unsigned flags,
       sb_storage_error_t *e)
{
    s_s3_t *self = client;
    (void) flags;   /* a PUT is whole and durable when it returns (S3's semantics); nothing to evict */
    char full[PATH_MAX];
    sb_s3_error_t s;
    if (s_key (self, key, full, sizeof full, "PUT", e) != 0)
        return -1;
    const sb_s3_ckpt_shape_t *c = &self->ckpt;
    if (c->shaped)
        return sb_s3_put_parts (self->s3, full, size, c->part, c->threshold, c->upload_window, fill, ctx, &s) == 0
                   ? 0 : s_error (self, &s, e);
    return sb_s3_put (self->s3, full, size, fill, ctx, &s) == 0 ? 0 : s_error (self, &s, e);
}

int
sb_s3e_get_small (void *client, const char *key, char *buf, size_t cap, size_t *len, sb_storage_error_t *e)
{
    s_s3_t *self = client;
    char full[PATH_MAX];
    sb_s3_error_t s;
    if (s_key (self, key, full, sizeof full, "GET", e) != 0)
        return -1;
    int rc = sb_s3_get_small (self->s3, full, buf, cap, len, &s);
    if (rc != 0)
        s_error (self, &s, e);
    return rc;
}

int
sb_s3e_get (void *client, const char *key, uint64_t offset, uint64_t length, unsigned flags, uint64_t *received,
       sb_storage_error_t *e)
{
    s_s3_t *self = client;
    (void) flags;   /* no page cache on this host to evict (SB_IO_EVICT) */
    char full[PATH_MAX];
    sb_s3_error_t s;
    if (s_key (self, key, full, sizeof full, "GET", e) != 0)
        return -1;
    const sb_s3_ckpt_shape_t *c = &self->ckpt;
    if (c->shaped && offset == 0 && length > 0)    /* a checkpoint's load: DLIO's readers know its size */
        return sb_s3_get_blocks (self->s3, full, length, c->read_streams, c->read_chunk, c->read_window, received, &s)
                   == 0 ? 0 : s_error (self, &s, e);
    return sb_s3_get (self->s3, full, offset, length, received, &s) == 0 ? 0 : s_error (self, &s, e);
}

int
sb_s3e_remove (void *client, const char *key, sb_storage_error_t *e)
{
    s_s3_t *self = client;
    char full[PATH_MAX];
    sb_s3_error_t s;
    if (s_key (self, key, full, sizeof full, "DELETE", e) != 0)
        return -1;
    if (sb_s3_delete (self->s3, full, &s) == 0 || s.http_status == 404)
        return 0;
    return s_error (self, &s, e);
}


/* A read the library's client splits (s3_shape.h, sb_s3_get_split): its
 * range GETs carry the group's address as their tag; the reader gets one
 * completion, its own tag, once the last is in. */
struct s_group {
    s_group_t  *next;
    uint64_t    tag;            /* the reader's */
    char       *key;            /* root + key */
    uint64_t    next_off, end;  /* the next range GET's offset; the read's end */
    uint64_t    part, window;   /* range GETs of part bytes, window at once once the first is in */
    size_t      in_flight;
    int         first_done;
    int         first_alone;    /* the first range GET alone (the CRT learns the size from it) */
    int         head;           /* a HEAD in flight before the range GETs (s3dlio) */
    uint64_t    bytes;
    uint64_t    started_ns;
    int         failed;
    sb_s3_done_t fail;          /* the first failure */
    sb_storage_expect_t *x;              /* NULL: no verification */
};

/* Free the first group of *list (at close: its GETs are gone). */
static void
s_group_pop_free (s_group_t **list)
{
    s_group_t *g = *list;
    *list = g->next;
    s_group_free (g);
}

static void
s_group_free (s_group_t *g)
{
    if (!g)
        return;
    if (g->x)
        sb_storage_expect_release (g->x);
    free (g->key);
    free (g);
}

/* Start the group's range GETs its window allows; -1 when out of memory
 * (the group then fails once those in flight are in). */
static int
s_group_start (s_s3_t *self, s_group_t *g)
{
    uint64_t window = g->first_alone && !g->first_done ? 1 : g->window;
    while (!g->head && g->in_flight < window && g->next_off < g->end) {
        uint64_t len = g->end - g->next_off < g->part ? g->end - g->next_off : g->part;
        if (g->x)
            sb_storage_expect_hold (g->x);
        if (sb_s3_get_start_fill (self->s3, (uint64_t) (uintptr_t) g, g->key, g->next_off, len, g->x != NULL, 0,
                                  g->x ? sb_storage_expect_fill : NULL, g->x, g->x ? sb_storage_expect_release : NULL) != 0)
            return -1;
        g->next_off += len;
        g->in_flight++;
        self->group_parts++;
    }
    return 0;
}

/* Has s3dlio's size cache key (the client's reads so far)? 1 yes, 0 no
 * (it has now), -1 out of memory. A 64-bit hash stands for the key. */
static int
s_known (s_s3_t *self, const char *key)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *) key; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    h = h ? h : 1;
    if ((self->nknown + 1) * 2 > self->known_cap) {
        size_t cap = self->known_cap ? self->known_cap * 2 : 1024;
        uint64_t *t = calloc (cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < self->known_cap; i++)
            if (self->known[i]) {
                size_t j = (size_t) (self->known[i] % cap);
                while (t[j])
                    j = (j + 1) % cap;
                t[j] = self->known[i];
            }
        free (self->known);
        self->known = t;
        self->known_cap = cap;
    }
    size_t j = (size_t) (h % self->known_cap);
    while (self->known[j]) {
        if (self->known[j] == h)
            return 1;
        j = (j + 1) % self->known_cap;
    }
    self->known[j] = h;
    self->nknown++;
    return 0;
}

int
sb_s3e_queue (void *client, const sb_io_t *io, sb_storage_error_t *e)
{
    s_s3_t *self = client;
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
                                : sb_storage_fail (e, self->engine, "GET", io->key, ENOMEM, "GET %s%s: out of memory",
                                                   self->root, io->key);
    }
    uint64_t part = 0, window = 0;
    int first_alone = 0, head = 0, grouped = 0;
    if (self->split && io->length > self->split_part) {
        part = self->split_part;
        window = self->split_window;
        first_alone = 1;
        grouped = 1;
    }
    else if (self->s3dlio && io->offset == 0 && io->length > 0) {
        /* a whole object: s3dlio knows its size once it has read it, or
         * asks with a HEAD unless DLIO set skip_head; with skip_head an
         * object too small to split is one plain GET whatever s3dlio knows,
         * so nothing is remembered of it (the record stays as small as the
         * objects that can be split) */
        uint64_t split_part = 0, split_window = 0;
        int splits = sb_s3_s3dlio_split (io->length, self->cores, &split_part, &split_window);
        if (splits || !self->skip_head) {
            int known = s_known (self, full);
            if (known < 0) {
                if (x)
                    sb_storage_expect_release (x);
                return sb_storage_fail (e, self->engine, "GET", io->key, ENOMEM, "GET %s: out of memory", full);
            }
            head = !known && !self->skip_head;
            if ((known || head) && splits) {
                part = split_part;
                window = split_window;
                grouped = 1;
            }
            else if (head) {
                part = io->length;      /* a HEAD, then one GET */
                window = 1;
                grouped = 1;
            }
        }
    }
    if (grouped) {
        s_group_t *g = calloc (1, sizeof *g);
        if (!g || !(g->key = strdup (full))) {
            free (g);
            if (x)
                sb_storage_expect_release (x);
            return sb_storage_fail (e, self->engine, "GET", io->key, ENOMEM, "GET %s: out of memory", full);
        }
        g->tag = io->tag;
        g->next_off = io->offset;
        g->end = io->offset + io->length;
        g->part = part;
        g->window = window;
        g->first_alone = first_alone;
        g->started_ns = sb_mono_ns ();
        g->x = x;   /* the group holds one reference until it is freed */
        g->next = self->groups;
        self->groups = g;
        self->ngroups++;
        if (head) {
            if (sb_s3_head_start (self->s3, (uint64_t) (uintptr_t) g, g->key) == 0) {
                g->head = 1;
                g->in_flight++;
                self->group_parts++;
            }
        }
        else
            (void) s_group_start (self, g);     /* what did not start starts as the others end */
        if (g->in_flight == 0) {
            self->groups = g->next;
            self->ngroups--;
            s_group_free (g);
            return sb_storage_fail (e, self->engine, "GET", io->key, ENOMEM, "GET %s: cannot start the request", full);
        }
        return 0;
    }
    /* the request owns x from here, also when it cannot start */
    if (sb_s3_get_start_fill (self->s3, io->tag, full, io->offset, io->length, x != NULL, 0,
                              x ? sb_storage_expect_fill : NULL, x, x ? sb_storage_expect_release : NULL) != 0)
        return sb_storage_fail (e, self->engine, "GET", io->key, ENOMEM,
                                "GET %s: cannot start the request (out of memory or key too long)", full);
    return 0;
}

typedef struct {
    sb_io_done_fn fn;
    void         *ctx;
    sb_io_done_t  done;
    s_s3_t       *self;
} s_sink_t;

static void s_deliver (s_sink_t *sink, const sb_s3_done_t *d);

/* A range GET of a split read: once the last one is in, the read is
 * delivered whole (its bytes counted once, its latency from its first
 * GET's start). */
static int
s_group_done (s_sink_t *sink, const sb_s3_done_t *d)
{
    s_s3_t *self = sink->self;
    s_group_t **pp = &self->groups;
    while (*pp && (uint64_t) (uintptr_t) *pp != d->tag)
        pp = &(*pp)->next;
    s_group_t *g = *pp;
    if (!g)
        return 0;
    g->in_flight--;
    self->group_parts--;
    if (g->head)
        g->head = 0;    /* the HEAD's answer: the range GETs may start */
    else
        g->first_done = 1;
    g->bytes += d->bytes;
    if (d->failed && !g->failed) {
        g->failed = 1;
        g->fail = *d;
    }
    if (!g->failed && s_group_start (self, g) != 0 && !g->failed) {
        g->failed = 1;
        g->fail = *d;
        g->fail.failed = 1;
        snprintf (g->fail.error.text, sizeof g->fail.error.text, "GET %s: out of memory for its range GETs", g->key);
    }
    if (g->in_flight > 0)
        return 1;
    *pp = g->next;
    self->ngroups--;
    sb_s3_done_t whole = g->failed ? g->fail : *d;
    whole.tag = g->tag;
    whole.bytes = g->bytes;
    whole.latency_ns = sb_mono_ns () - g->started_ns;
    s_group_free (g);
    s_deliver (sink, &whole);
    return 1;
}

static void
s_on_done (void *arg, const sb_s3_done_t *d)
{
    s_sink_t *sink = arg;
    if (sink->self->groups && s_group_done (sink, d))
        return;
    s_deliver (sink, d);
}

static void
s_deliver (s_sink_t *sink, const sb_s3_done_t *d)
{
    sb_io_done_t *done = &sink->done;
    done->tag = d->tag;
    done->bytes = d->bytes;
    done->latency_ns = d->latency_ns;
    done->failed = d->failed;
    if (d->failed)
        s_error (sink->self, &d->error, &done->error);
    else
        done->error.text[0] = '\0';
    sink->fn (sink->ctx, done);
}

int
sb_s3e_getevents (void *client, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e)
{
    s_s3_t *self = client;
    s_sink_t sink = { .fn = fn, .ctx = ctx, .self = self };
    int n = sb_s3_run (self->s3, timeout_ms, s_on_done, &sink);
    if (n < 0)
        return sb_storage_fail (e, self->engine, "getevents", "", 0, "S3 engine stopped: curl multi interface failure");
    return n;
}

void
sb_s3e_wakeup (void *client)
{
    s_s3_t *self = client;
    sb_s3_wakeup (self->s3);
}

size_t
sb_s3e_pending (const void *client)
{
    const s_s3_t *self = client;
    /* a split read is one read for the caller, however many GETs it has in flight */
    return sb_s3_pending (self->s3) - self->group_parts + self->ngroups;
}

size_t
sb_s3e_stats (void *client, sb_storage_stats_t *out, size_t max)
{
    s_s3_t *self = client;
    size_t n = 0;
    for (size_t i = 0; i < sb_s3_endpoint_count (self->s3) && n < max; i++) {
        sb_s3_endpoint_stats_t *st = sb_s3_stats (self->s3, i);
        sb_storage_stats_t *o = &out[n++];
        snprintf (o->where, sizeof o->where, "%s", sb_s3_endpoint (self->s3, i));
        o->requests = st->requests;
        o->bytes = st->bytes;
        o->errors = st->errors;
        o->retries = st->retries;
        o->latency = st->latency;
        memset (st, 0, sizeof *st);
    }
    return n;
}

const char *
sb_s3e_credentials_source (const void *client)
{
    const s_s3_t *self = client;
    return sb_s3_credentials_source (self->s3);
}

static const char *const s_names[] = { "s3", NULL };

const sb_engine_ops_t sb_engine_s3 = {
    .name = "s3",
    .caps = SB_S3_ENGINE_CAPS,
    .options = sb_s3_options,
    .storage_types = s_names,
    .schemes = s_names,
    .configure = sb_s3_configure,
    .export_credentials = sb_s3_export_credentials,
    SB_S3_ENGINE_OPS,
};
