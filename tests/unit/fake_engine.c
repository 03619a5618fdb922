/* fake_engine: scripted reads, no I/O (fake_engine.h). */
#include "fake_engine.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    char    *key;
    uint64_t size;
} s_object_t;

typedef struct {
    char     part[256];
    uint64_t nth, seen;
    int      os_errno, missing, transient;
    long     status;
} s_rule_t;

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static s_object_t *s_objects;       /* sorted by key */
static size_t s_nobjects;
static s_rule_t s_rules[8];
static size_t s_nrules;
static uint64_t s_latency_ns, s_delay_ns;
static int s_lenient;   /* sb_fake_engine_set_lenient */
static sb_fake_engine_counts_t s_counts;
static int s_getevents_errno;       /* the next getevents with reads fails with it (0: none) */
static int s_direct_registered, s_direct_open_errno;
static int s_registered;
static sb_fake_engine_read_t s_log[SB_FAKE_ENGINE_LOG];   /* the first reads queued, in order */
static size_t s_nlog;

/* one read in flight */
typedef struct {
    uint64_t     due_ns;
    sb_io_done_t done;
} s_slot_t;

/* due_ns of a read queued beyond the depth (SB_ENGINE_QUEUE_AHEAD), not
 * started until one in flight ends */
#define S_WAITING UINT64_MAX

typedef struct {
    uint64_t        id;         /* 1 for the first client opened since the reset, 2 for the next, ... */
    size_t          depth, count;
    size_t          capacity;   /* reads held at once: depth, twice that with SB_ENGINE_QUEUE_AHEAD */
    s_slot_t       *slots;      /* count in use, in queue order; the first depth of them in flight */
    pthread_mutex_t wake_lock;
    pthread_cond_t  wake;
    int             woken;
} s_fake_t;

static sb_engine_ops_t s_ops;

static int
s_cmp (const void *a, const void *b)
{
    return strcmp (((const s_object_t *) a)->key, ((const s_object_t *) b)->key);
}

/* the object called key, or NULL (s_lock held) */
static s_object_t *
s_find (const char *key)
{
    s_object_t probe = { .key = (char *) key };
    return s_nobjects ? bsearch (&probe, s_objects, s_nobjects, sizeof *s_objects, s_cmp) : NULL;
}

static int
s_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    (void) cfg;
    s_fake_t *self = calloc (1, sizeof *self);
    if (self) {
        self->depth = how->depth ? how->depth : 1;
        self->capacity = (s_ops.caps & SB_ENGINE_QUEUE_AHEAD) ? 2 * self->depth : self->depth;
        self->slots = calloc (self->capacity, sizeof *self->slots);
    }
    if (!self || !self->slots) {
        if (self)
            free (self->slots);
        free (self);
        return sb_storage_fail (e, SB_FAKE_ENGINE_NAME, "open", "", ENOMEM, "fake engine: out of memory");
    }
    pthread_mutex_init (&self->wake_lock, NULL);
    pthread_cond_init (&self->wake, NULL);
    pthread_mutex_lock (&s_lock);
    self->id = ++s_counts.opens;
    pthread_mutex_unlock (&s_lock);
    *client = self;
    return 0;
}

static void
s_close (void *client)
{
    s_fake_t *self = client;
    if (!self)
        return;
    pthread_mutex_destroy (&self->wake_lock);
    pthread_cond_destroy (&self->wake);
    free (self->slots);
    free (self);
}

/* s_lock held: the most reads started and not done at once */
static void
s_note_in_flight (const s_fake_t *self)
{
    size_t n = 0;
    for (size_t i = 0; i < self->count; i++)
        n += self->slots[i].due_ns != S_WAITING;
    if (n > s_counts.max_in_flight)
        s_counts.max_in_flight = n;
}

static int
s_queue (void *client, const sb_io_t *io, sb_storage_error_t *e)
{
    s_fake_t *self = client;
    const char *key = io->key ? io->key : "";
    if (self->count >= self->capacity) {
        if (io->expect_free)
            io->expect_free (io->expect_ctx);
        return sb_storage_fail (e, SB_FAKE_ENGINE_NAME, "read", key, 0, "fake engine: %s %zu exceeded",
                                self->capacity > self->depth ? "queue of" : "depth", self->capacity);
    }
    s_slot_t *slot = &self->slots[self->count++];
    memset (slot, 0, sizeof *slot);
    sb_io_done_t *d = &slot->done;
    d->tag = io->tag;
    pthread_mutex_lock (&s_lock);
    if (s_nlog < SB_FAKE_ENGINE_LOG) {
        s_log[s_nlog].client = self->id;
        snprintf (s_log[s_nlog].key, sizeof s_log[s_nlog].key, "%s", key);
        s_nlog++;
    }
    if (self->count > s_counts.max_pending)
        s_counts.max_pending = self->count;
    uint64_t length = io->length;
    const s_object_t *obj = s_find (key);
    const s_rule_t *fail = NULL;
    for (size_t i = 0; i < s_nrules; i++) {
        s_rule_t *r = &s_rules[i];
        if (strstr (key, r->part) && (++r->seen == r->nth || r->nth == 0)) {
            fail = r;
            break;
        }
    }
    if (fail) {
        sb_storage_fail (&d->error, SB_FAKE_ENGINE_NAME, "read", key, fail->os_errno,
                         "fake read %s: scripted failure (errno %d, status %ld)", key, fail->os_errno, fail->status);
        d->error.status = fail->status;
        d->error.missing = fail->missing;
        d->error.transient = fail->transient;
        d->failed = 1;
    }
    else if (s_nobjects && !obj) {
        sb_storage_fail (&d->error, SB_FAKE_ENGINE_NAME, "read", key, ENOENT, "fake read %s: no such object", key);
        d->error.missing = 1;
        d->failed = 1;
    }
    else if (obj && s_lenient && length && io->offset + length > obj->size)
        d->bytes = io->offset < obj->size ? obj->size - io->offset : 0;     /* short, and no error said */
    else if (obj && (length == 0 ? 0 : io->offset + length > obj->size)) {
        d->bytes = io->offset < obj->size ? obj->size - io->offset : 0;
        sb_storage_fail (&d->error, SB_FAKE_ENGINE_NAME, "read", key, 0,
                         "short read %s: object ends at offset %llu, expected %llu bytes from offset %llu", key,
                         (unsigned long long) obj->size, (unsigned long long) length,
                         (unsigned long long) io->offset);
        d->failed = 1;
    }
    else
        d->bytes = length ? length : obj ? obj->size - (io->offset < obj->size ? io->offset : obj->size) : 0;
    d->latency_ns = s_latency_ns;
    slot->due_ns = self->count <= self->depth ? sb_mono_ns () + s_delay_ns : S_WAITING;
    s_note_in_flight (self);
    pthread_mutex_unlock (&s_lock);
    if (io->expect && !d->failed) {
        uint8_t buf[4096];
        for (uint64_t done = 0; done < d->bytes;) {
            size_t n = d->bytes - done < sizeof buf ? (size_t) (d->bytes - done) : sizeof buf;
            io->expect (io->expect_ctx, io->offset + done, buf, n);
            done += n;
        }
    }
    if (io->expect_free)
        io->expect_free (io->expect_ctx);
    return 0;
}

static int
s_getevents (void *client, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e)
{
    s_fake_t *self = client;
    if (self->count == 0)
        return 0;
    pthread_mutex_lock (&s_lock);
    int broken = s_getevents_errno;
    s_getevents_errno = 0;
    pthread_mutex_unlock (&s_lock);
    if (broken)
        return sb_storage_fail (e, SB_FAKE_ENGINE_NAME, "getevents", "", broken,
                                "fake getevents: scripted failure of the engine with %zu reads held", self->count);
    uint64_t until = sb_mono_ns () + (uint64_t) (timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;
    uint64_t first = UINT64_MAX;
    for (size_t i = 0; i < self->count; i++)
        first = self->slots[i].due_ns < first ? self->slots[i].due_ns : first;
    /* wait for the first due read, a wakeup, or the timeout */
    pthread_mutex_lock (&self->wake_lock);
    for (;;) {
        uint64_t now = sb_mono_ns ();
        if (now >= first || now >= until || self->woken)
            break;
        uint64_t wait_ns = (first < until ? first : until) - now;
        struct timespec ts;
        clock_gettime (CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t) ts.tv_nsec + wait_ns;
        ts.tv_sec += (time_t) (ns / 1000000000ull);
        ts.tv_nsec = (long) (ns % 1000000000ull);
        pthread_cond_timedwait (&self->wake, &self->wake_lock, &ts);
    }
    self->woken = 0;
    pthread_mutex_unlock (&self->wake_lock);
    uint64_t now = sb_mono_ns ();
    int n = 0;
    for (size_t i = 0; i < self->count;) {
        if (self->slots[i].due_ns > now) {
            i++;
            continue;
        }
        sb_io_done_t done = self->slots[i].done;
        memmove (&self->slots[i], &self->slots[i + 1], (self->count - i - 1) * sizeof *self->slots);
        self->count--;
        /* the first read waiting takes the place in flight (due later) */
        if (self->count >= self->depth && self->slots[self->depth - 1].due_ns == S_WAITING)
            self->slots[self->depth - 1].due_ns = now + s_delay_ns + 1;
        pthread_mutex_lock (&s_lock);
        s_counts.reads++;
        if (done.failed)
            s_counts.failed++;
        else
            s_counts.bytes += done.bytes;
        pthread_mutex_unlock (&s_lock);
        fn (ctx, &done);
        n++;
    }
    return n;
}

static void
s_wakeup (void *client)
{
    s_fake_t *self = client;
    pthread_mutex_lock (&self->wake_lock);
    self->woken = 1;
    pthread_cond_signal (&self->wake);
    pthread_mutex_unlock (&self->wake_lock);
}

static size_t
s_pending (const void *client)
{
    const s_fake_t *self = client;
    return self->count;
}

static int
s_put (void *client, const char *key, uint64_t size, sb_storage_fill_fn fill, void *ctx, unsigned flags,
       sb_storage_error_t *e)
{
    (void) client;
    (void) fill;
    (void) ctx;
    (void) flags;
    if (sb_fake_engine_add_object (key, size) != 0)
        return sb_storage_fail (e, SB_FAKE_ENGINE_NAME, "write", key, ENOMEM, "fake write %s: out of memory", key);
    pthread_mutex_lock (&s_lock);
    s_counts.puts++;
    s_counts.put_bytes += size;
    pthread_mutex_unlock (&s_lock);
    return 0;
}

static int
s_stat (void *client, const char *key, uint64_t *size, sb_storage_error_t *e)
{
    (void) client;
    pthread_mutex_lock (&s_lock);
    const s_object_t *obj = s_find (key);
    if (obj)
        *size = obj->size;
    pthread_mutex_unlock (&s_lock);
    if (obj)
        return 0;
    sb_storage_fail (e, SB_FAKE_ENGINE_NAME, "stat", key, ENOENT, "fake stat %s: no such object", key);
    e->missing = 1;
    return -1;
}

static int
s_remove (void *client, const char *key, sb_storage_error_t *e)
{
    (void) client;
    (void) e;
    pthread_mutex_lock (&s_lock);
    s_object_t *obj = s_find (key);
    if (obj) {
        size_t i = (size_t) (obj - s_objects);
        free (obj->key);
        memmove (&s_objects[i], &s_objects[i + 1], (s_nobjects - i - 1) * sizeof *s_objects);
        s_nobjects--;
    }
    s_counts.removes++;
    pthread_mutex_unlock (&s_lock);
    return 0;
}

static int
s_list (void *client, const char *prefix, const char *start_after, const char *end_at, sb_storage_list_fn fn,
        void *ctx, sb_storage_error_t *e)
{
    (void) client;
    (void) e;
    size_t plen = prefix ? strlen (prefix) : 0;
    int rc = 1;     /* nothing under the prefix */
    pthread_mutex_lock (&s_lock);
    for (size_t i = 0; i < s_nobjects; i++) {
        const char *key = s_objects[i].key;
        if (plen && strncmp (key, prefix, plen) != 0)
            continue;
        const char *rel = key + plen;
        if ((start_after && strcmp (rel, start_after) <= 0) || (end_at && strcmp (rel, end_at) > 0))
            continue;
        rc = fn (ctx, rel, strlen (rel), s_objects[i].size);
        if (rc != 0)
            break;
    }
    pthread_mutex_unlock (&s_lock);
    return rc;
}

static sb_engine_ops_t s_ops = {
    .name = SB_FAKE_ENGINE_NAME,
    .caps = SB_ENGINE_OBJECTS | SB_ENGINE_LIST_ORDERED,
    .open = s_open,
    .close = s_close,
    .list = s_list,
    .stat = s_stat,
    .put = s_put,
    .remove = s_remove,
    .queue = s_queue,
    .getevents = s_getevents,
    .wakeup = s_wakeup,
    .pending = s_pending,
};

/* SB_FAKE_ENGINE_DIRECT's open: the fake's, or the scripted failure. */
static int
s_direct_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    pthread_mutex_lock (&s_lock);
    int fail = s_direct_open_errno;
    pthread_mutex_unlock (&s_lock);
    if (fail)
        return sb_storage_fail (e, SB_FAKE_ENGINE_DIRECT, "open", how->root ? how->root : "", fail,
                                "fake_direct open %s: scripted failure", how->root ? how->root : "");
    return s_open (cfg, how, client, e);
}

static const sb_engine_ops_t s_direct_ops = {
    .name = SB_FAKE_ENGINE_DIRECT,
    .caps = SB_ENGINE_DIRECT | SB_ENGINE_FOLDER,
    .open = s_direct_open,
    .close = s_close,
    .list = s_list,
    .stat = s_stat,
    .put = s_put,
    .remove = s_remove,
    .queue = s_queue,
    .getevents = s_getevents,
    .wakeup = s_wakeup,
    .pending = s_pending,
};

int
sb_fake_engine_set_direct (int open_errno)
{
    pthread_mutex_lock (&s_lock);
    int rc = 0;
    if (!s_direct_registered) {
        rc = sb_engine_register (&s_direct_ops);
        s_direct_registered = rc == 0;
    }
    s_direct_open_errno = open_errno;
    if (rc == 0)
        s_ops.direct_engine = SB_FAKE_ENGINE_DIRECT;
    pthread_mutex_unlock (&s_lock);
    return rc;
}

int
sb_fake_engine_reset (void)
{
    pthread_mutex_lock (&s_lock);
    for (size_t i = 0; i < s_nobjects; i++)
        free (s_objects[i].key);
    free (s_objects);
    s_objects = NULL;
    s_nobjects = 0;
    s_nrules = 0;
    s_latency_ns = s_delay_ns = 0;
    s_lenient = 0;
    memset (&s_counts, 0, sizeof s_counts);
    s_nlog = 0;
    s_getevents_errno = 0;
    s_direct_open_errno = 0;
    s_ops.direct_engine = NULL;
    s_ops.caps = SB_ENGINE_OBJECTS | SB_ENGINE_LIST_ORDERED;
    int rc = 0;
    if (!s_registered) {
        rc = sb_engine_register (&s_ops);
        s_registered = rc == 0;
    }
    pthread_mutex_unlock (&s_lock);
    return rc;
}

void
sb_fake_engine_set_lenient (int on)
{
    pthread_mutex_lock (&s_lock);
    s_lenient = on;
    pthread_mutex_unlock (&s_lock);
}

void
sb_fake_engine_set_caps (unsigned caps)
{
    s_ops.caps = caps;
}

void
sb_fake_engine_set_latency (uint64_t latency_ns, uint64_t delay_ns)
{
    pthread_mutex_lock (&s_lock);
    s_latency_ns = latency_ns;
    s_delay_ns = delay_ns;
    pthread_mutex_unlock (&s_lock);
}

int
sb_fake_engine_add_object (const char *key, uint64_t size)
{
    pthread_mutex_lock (&s_lock);
    int rc = 0;
    s_object_t *obj = s_find (key);
    if (obj)
        obj->size = size;
    else {
        s_object_t *grown = realloc (s_objects, (s_nobjects + 1) * sizeof *s_objects);
        char *copy = strdup (key);
        if (!grown || !copy) {
            free (copy);
            if (grown)
                s_objects = grown;
            rc = -1;
        }
        else {
            s_objects = grown;
            s_objects[s_nobjects++] = (s_object_t) { .key = copy, .size = size };
            qsort (s_objects, s_nobjects, sizeof *s_objects, s_cmp);
        }
    }
    pthread_mutex_unlock (&s_lock);
    return rc;
}

int
sb_fake_engine_fail (const char *key_part, uint64_t nth, int os_errno, long status, int missing, int transient)
{
    pthread_mutex_lock (&s_lock);
    int rc = -1;
    if (s_nrules < sizeof s_rules / sizeof s_rules[0]) {
        s_rule_t *r = &s_rules[s_nrules++];
        memset (r, 0, sizeof *r);
        snprintf (r->part, sizeof r->part, "%s", key_part ? key_part : "");
        r->nth = nth;
        r->os_errno = os_errno;
        r->status = status;
        r->missing = missing;
        r->transient = transient;
        rc = 0;
    }
    pthread_mutex_unlock (&s_lock);
    return rc;
}

void
sb_fake_engine_fail_getevents (int os_errno)
{
    pthread_mutex_lock (&s_lock);
    s_getevents_errno = os_errno;
    pthread_mutex_unlock (&s_lock);
}

void
sb_fake_engine_counts (sb_fake_engine_counts_t *out)
{
    pthread_mutex_lock (&s_lock);
    *out = s_counts;
    pthread_mutex_unlock (&s_lock);
}

size_t
sb_fake_engine_reads (sb_fake_engine_read_t *out, size_t max)
{
    pthread_mutex_lock (&s_lock);
    size_t n = s_nlog < max ? s_nlog : max;
    memcpy (out, s_log, n * sizeof *out);
    pthread_mutex_unlock (&s_lock);
    return n;
}
