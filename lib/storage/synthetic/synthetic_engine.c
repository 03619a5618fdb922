/* synthetic_engine: nothing stored (fio's null engine).
 *
 * A read completes inside sb_storage_queue: its bytes are the length asked
 * for (0 for a whole object: the engine knows no sizes); with verification
 * the expected bytes are generated (at memory speed, so the cost of a
 * verifying reader shows) and not compared with anything. Writes are
 * counted and dropped; nothing is ever found (stat, get_small), and a
 * listing is empty: the catalog makes a synthetic dataset's listing from
 * its names (coordinator/catalog/catalog.c). Made to run every other part
 * of shardbench at 10^8 objects. */
#include "engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t       buffer_bytes;
    uint8_t     *buf;       /* where expected bytes are generated; owned, made on first use */
    size_t       depth;
    size_t       count;     /* completed reads not yet reaped */
    uint64_t    *tags;      /* their tags and bytes: depth entries each; owned */
    uint64_t    *bytes;
    sb_io_done_t done;      /* reused for every completion (its error is never set) */
    uint64_t     puts, put_bytes;
} s_synthetic_t;

static int
s_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    (void) cfg;
    s_synthetic_t *self = calloc (1, sizeof *self);
    size_t depth = how->depth ? how->depth : 1;
    if (self) {
        self->tags = calloc (depth, sizeof *self->tags);
        self->bytes = calloc (depth, sizeof *self->bytes);
    }
    if (!self || !self->tags || !self->bytes) {
        if (self) {
            free (self->tags);
            free (self->bytes);
        }
        free (self);
        return sb_storage_fail (e, "synthetic", "open", "", ENOMEM, "synthetic engine: out of memory");
    }
    self->depth = depth;
    self->buffer_bytes = how->buffer_bytes ? how->buffer_bytes : (1u << 20);
    *client = self;
    return 0;
}

static void
s_close (void *client)
{
    s_synthetic_t *self = client;
    if (!self)
        return;
    free (self->buf);
    free (self->tags);
    free (self->bytes);
    free (self);
}

static int
s_queue (void *client, const sb_io_t *io, sb_storage_error_t *e)
{
    s_synthetic_t *self = client;
    if (self->count >= self->depth || (io->expect && !self->buf && !(self->buf = malloc (self->buffer_bytes)))) {
        if (io->expect_free)
            io->expect_free (io->expect_ctx);
        return sb_storage_fail (e, "synthetic", "read", io->key ? io->key : "", self->count ? 0 : ENOMEM,
                                self->count ? "synthetic engine: %zu reads queued and not reaped (depth %zu)"
                                            : "synthetic engine: out of memory (%zu of %zu)", self->count,
                                self->depth);
    }
    if (io->expect) {
        for (uint64_t done = 0; done < io->length;) {
            size_t n = io->length - done < self->buffer_bytes ? (size_t) (io->length - done) : self->buffer_bytes;
            io->expect (io->expect_ctx, io->offset + done, self->buf, n);
            done += n;
        }
    }
    if (io->expect_free)
        io->expect_free (io->expect_ctx);
    self->tags[self->count] = io->tag;
    self->bytes[self->count] = io->length;
    self->count++;
    return 0;
}

static int
s_getevents (void *client, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e)
{
    s_synthetic_t *self = client;
    (void) timeout_ms;
    (void) e;
    size_t n = self->count;
    for (size_t i = 0; i < n; i++) {
        self->done.tag = self->tags[i];
        self->done.bytes = self->bytes[i];
        fn (ctx, &self->done);
    }
    self->count = 0;
    return (int) n;
}

static size_t
s_pending (const void *client)
{
    const s_synthetic_t *self = client;
    return self->count;
}

static int
s_put (void *client, const char *key, uint64_t size, sb_storage_fill_fn fill, void *ctx, unsigned flags,
       sb_storage_error_t *e)
{
    s_synthetic_t *self = client;
    (void) key;
    (void) fill;
    (void) ctx;
    (void) flags;
    (void) e;
    self->puts++;
    self->put_bytes += size;
    return 0;
}

static int
s_get (void *client, const char *key, uint64_t offset, uint64_t length, unsigned flags, uint64_t *received,
       sb_storage_error_t *e)
{
    (void) client;
    (void) key;
    (void) offset;
    (void) flags;   /* nothing cached, nothing to evict */
    (void) e;
    *received = length;
    return 0;
}

static int
s_stat (void *client, const char *key, uint64_t *size, sb_storage_error_t *e)
{
    (void) client;
    (void) size;
    sb_storage_fail (e, "synthetic", "stat", key, ENOENT, "synthetic engine: %s: nothing is stored", key);
    e->missing = 1;
    return -1;
}

static int
s_get_small (void *client, const char *key, char *buf, size_t cap, size_t *len, sb_storage_error_t *e)
{
    (void) client;
    (void) buf;
    (void) cap;
    *len = 0;
    sb_storage_fail (e, "synthetic", "read", key, ENOENT, "synthetic engine: %s: nothing is stored", key);
    e->missing = 1;
    return 1;
}

static int
s_remove (void *client, const char *key, sb_storage_error_t *e)
{
    (void) client;
    (void) key;
    (void) e;
    return 0;
}

static int
s_list (void *client, const char *prefix, const char *start_after, const char *end_at, sb_storage_list_fn fn,
        void *ctx, sb_storage_error_t *e)
{
    (void) client;
    (void) prefix;
    (void) start_after;
    (void) end_at;
    (void) fn;
    (void) ctx;
    (void) e;
    return 1;   /* holds nothing */
}

static const char *const s_names[] = { "synthetic", NULL };

const sb_engine_ops_t sb_engine_synthetic = {
    .name = "synthetic",
    .storage_types = s_names,
    .schemes = s_names,
    .caps = SB_ENGINE_NO_IO | SB_ENGINE_READS_FREE,
    .open = s_open,
    .close = s_close,
    .list = s_list,
    .stat = s_stat,
    .put = s_put,
    .get_small = s_get_small,
    .get = s_get,
    .remove = s_remove,
    .queue = s_queue,
    .getevents = s_getevents,
    .pending = s_pending,
};
