/* client: an engine instance, and the ops called through it (engine.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "util.h"

struct sb_storage {
    const sb_engine_ops_t *ops;
    void                  *client;     /* the engine's own state; owned */
};

int
sb_storage_fail (sb_storage_error_t *e, const char *engine, const char *op, const char *target, int os_errno,
                 const char *fmt, ...)
{
    if (!e)
        return -1;
    memset (e, 0, sizeof *e);
    snprintf (e->engine, sizeof e->engine, "%s", engine ? engine : "");
    snprintf (e->op, sizeof e->op, "%s", op ? op : "");
    snprintf (e->target, sizeof e->target, "%s", target ? target : "");
    e->os_errno = os_errno;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (e->text, sizeof e->text, fmt, ap);
    va_end (ap);
    return -1;
}

const char *
sb_storage_opt_of (const sb_storage_cfg_t *cfg, const char *engine, const char *key)
{
    for (size_t i = 0; i < cfg->nopts && i < SB_STORAGE_OPTS_MAX; i++)
        if (!strcmp (cfg->opts[i].key, key) && !strcmp (cfg->opts[i].engine, engine))
            return cfg->opts[i].value;
    const sb_engine_ops_t *ops = sb_engine_find (engine);
    for (const sb_engine_option_t *o = ops ? ops->options : NULL; o && o->key; o++)
        if (!strcmp (o->key, key))
            return o->dflt;
    return NULL;
}

const char *
sb_storage_opt (const sb_storage_cfg_t *cfg, const char *key)
{
    return sb_storage_opt_of (cfg, cfg->engine, key);
}

int
sb_storage_opt_set (sb_storage_cfg_t *cfg, const char *engine, const char *key, const char *value)
{
    sb_storage_opt_t *o = NULL;
    for (size_t i = 0; i < cfg->nopts && i < SB_STORAGE_OPTS_MAX; i++)
        if (!strcmp (cfg->opts[i].key, key) && !strcmp (cfg->opts[i].engine, engine))
            o = &cfg->opts[i];
    if (!o && cfg->nopts >= SB_STORAGE_OPTS_MAX)
        return -1;
    sb_storage_opt_t next;
    if (sb_strf (next.engine, sizeof next.engine, "%s", engine) != 0 || sb_strf (next.key, sizeof next.key, "%s", key) != 0
        || sb_strf (next.value, sizeof next.value, "%s", value) != 0)
        return -1;
    *(o ? o : &cfg->opts[cfg->nopts++]) = next;
    return 0;
}

sb_storage_t *
sb_storage_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, sb_storage_error_t *e)
{
    const sb_engine_ops_t *ops = sb_engine_of (cfg);
    if (!ops) {
        sb_storage_fail (e, cfg->engine, "open", "", 0, "storage engine '%s' is not built into this shardbench",
                         cfg->engine);
        return NULL;
    }
    sb_storage_t *self = calloc (1, sizeof *self);
    if (!self) {
        sb_storage_fail (e, ops->name, "open", "", 0, "%s engine: out of memory", ops->name);
        return NULL;
    }
    self->ops = ops;
    if (ops->open (cfg, how, &self->client, e) != 0) {
        free (self);
        return NULL;
    }
    return self;
}

void
sb_storage_close (sb_storage_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_storage_t *self = *self_p;
    self->ops->close (self->client);
    free (self);
    *self_p = NULL;
}

const sb_engine_ops_t *
sb_storage_ops (const sb_storage_t *self)
{
    return self->ops;
}

unsigned
sb_storage_client_caps (const sb_storage_t *self)
{
    return self->ops->caps;
}

/* an op this engine does not have */
static int
s_lacks (const sb_storage_t *self, const char *op, const char *target, sb_storage_error_t *e)
{
    return sb_storage_fail (e, self->ops->name, op, target, 0, "the %s engine cannot %s (%s)", self->ops->name, op,
                            target && *target ? target : "-");
}

int
sb_storage_preflight (sb_storage_t *self, int write, sb_storage_check_fn check, void *ctx)
{
    return self->ops->preflight ? self->ops->preflight (self->client, write, check, ctx) : 0;
}

int
sb_storage_list (sb_storage_t *self, const char *prefix, const char *start_after, const char *end_at,
                 sb_storage_list_fn fn, void *ctx, sb_storage_error_t *e)
{
    return self->ops->list ? self->ops->list (self->client, prefix, start_after, end_at, fn, ctx, e)
                           : s_lacks (self, "list", prefix, e);
}

int
sb_storage_fingerprint (sb_storage_t *self, const char *prefix, char *out, size_t out_size, sb_storage_error_t *e)
{
    if (!self->ops->fingerprint) {
        if (out_size)
            *out = '\0';
        return 0;
    }
    return self->ops->fingerprint (self->client, prefix, out, out_size, e);
}

int
sb_storage_stat (sb_storage_t *self, const char *key, uint64_t *size, sb_storage_error_t *e)
{
    return self->ops->stat ? self->ops->stat (self->client, key, size, e) : s_lacks (self, "stat", key, e);
}

int
sb_storage_put (sb_storage_t *self, const char *key, uint64_t size, sb_storage_fill_fn fill, void *ctx,
                unsigned flags, sb_storage_error_t *e)
{
    return self->ops->put ? self->ops->put (self->client, key, size, fill, ctx, flags, e)
                          : s_lacks (self, "write", key, e);
}

int
sb_storage_put_prepared (sb_storage_t *self, const char *key, sb_storage_prepare_fn prepare, sb_storage_fill_fn fill,
                         void *ctx, unsigned flags, sb_storage_error_t *e)
{
    if (self->ops->put_prepared)
        return self->ops->put_prepared (self->client, key, prepare, fill, ctx, flags, e);
    if (!self->ops->put)
        return s_lacks (self, "write", key, e);
    uint64_t size = 0;
    if (prepare (ctx, &size) != 0)
        return sb_storage_fail (e, self->ops->name, "write", key, 0, "write %s: its bytes could not be made", key);
    return self->ops->put (self->client, key, size, fill, ctx, flags, e);
}

int
sb_storage_get_small (sb_storage_t *self, const char *key, char *buf, size_t cap, size_t *len, sb_storage_error_t *e)
{
    return self->ops->get_small ? self->ops->get_small (self->client, key, buf, cap, len, e)
                                : s_lacks (self, "read", key, e);
}

int
sb_storage_get (sb_storage_t *self, const char *key, uint64_t offset, uint64_t length, unsigned flags,
                uint64_t *received, sb_storage_error_t *e)
{
    return self->ops->get ? self->ops->get (self->client, key, offset, length, flags, received, e)
                          : s_lacks (self, "read", key, e);
}

int
sb_storage_remove (sb_storage_t *self, const char *key, sb_storage_error_t *e)
{
    return self->ops->remove ? self->ops->remove (self->client, key, e) : s_lacks (self, "delete", key, e);
}

int
sb_storage_queue (sb_storage_t *self, const sb_io_t *io, sb_storage_error_t *e)
{
    if (!self->ops->queue) {
        if (io->expect_free)
            io->expect_free (io->expect_ctx);
        return s_lacks (self, "read", io->key, e);
    }
    return self->ops->queue (self->client, io, e);
}

int
sb_storage_getevents (sb_storage_t *self, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e)
{
    return self->ops->getevents ? self->ops->getevents (self->client, timeout_ms, fn, ctx, e) : 0;
}

void
sb_storage_wakeup (sb_storage_t *self)
{
    if (self && self->ops->wakeup)
        self->ops->wakeup (self->client);
}

size_t
sb_storage_pending (const sb_storage_t *self)
{
    return self->ops->pending ? self->ops->pending (self->client) : 0;
}

size_t
sb_storage_stats (sb_storage_t *self, sb_storage_stats_t *out, size_t max)
{
    return self->ops->stats ? self->ops->stats (self->client, out, max) : 0;
}

const char *
sb_storage_credentials_source (const sb_storage_t *self)
{
    return self->ops->credentials_source ? self->ops->credentials_source (self->client) : "";
}

struct sb_storage_expect {
    sb_storage_fill_fn fill;
    void              *ctx;
    void             (*free_fn) (void *ctx);
    uint64_t           size;
    unsigned           refs;    /* the requests that hold it */
};

sb_storage_expect_t *
sb_storage_expect_new (const sb_io_t *io)
{
    sb_storage_expect_t *x = malloc (sizeof *x);
    if (!x)
        return NULL;
    *x = (sb_storage_expect_t) { .fill = io->expect, .ctx = io->expect_ctx, .free_fn = io->expect_free,
                                 .size = io->expect_size, .refs = 1 };
    return x;
}

void
sb_storage_expect_hold (sb_storage_expect_t *x)
{
    x->refs++;
}

void
sb_storage_expect_fill (void *arg, uint64_t offset, uint8_t *buf, size_t len)
{
    sb_storage_expect_t *x = arg;
    uint64_t have = offset < x->size ? x->size - offset : 0;
    size_t n = have < len ? (size_t) have : len;
    if (n)
        x->fill (x->ctx, offset, buf, n);
    if (n < len)
        memset (buf + n, 0, len - n);
}

void
sb_storage_expect_release (void *arg)
{
    sb_storage_expect_t *x = arg;
    if (--x->refs > 0)
        return;
    if (x->free_fn)
        x->free_fn (x->ctx);
    free (x);
}
