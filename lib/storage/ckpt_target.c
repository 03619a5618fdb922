/* ckpt_target: the checkpoint folder's own storage (files, or an object
 * store: the engine that serves its URI scheme). */
#include "ckpt_target.h"
#include "engine.h"
#include "storage_keys.h"
#include "util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Copy s without leading and trailing '/' (and leading "./") into out,
 * '/'-ended unless empty. Returns 0, or -1 when it does not fit. */
static int
s_prefix (const char *s, char *out, size_t size)
{
    while (strncmp (s, "./", 2) == 0 || *s == '/')
        s += *s == '/' ? 1 : 2;
    size_t n = strlen (s);
    while (n && s[n - 1] == '/')
        n--;
    if (n == 1 && s[0] == '.')
        n = 0;
    if (n + 2 > size)
        return -1;
    memcpy (out, s, n);
    if (n)
        out[n++] = '/';
    out[n] = '\0';
    return 0;
}

/* "SCHEME://STORE[/PREFIX]" (after the scheme: rest) of ops into t. */
static int
s_object (const sb_engine_ops_t *ops, const char *scheme, const char *given, const char *rest, sb_ckpt_target_t *t,
          char *err, size_t err_size)
{
    size_t bn = strcspn (rest, "/");
    if (bn == 0) {
        snprintf (err, err_size, "key 'checkpoint.checkpoint_folder': '%s' names no store (%s://STORE[/PREFIX])",
                  given, scheme);
        return -1;
    }
    if (bn >= sizeof t->store || s_prefix (rest + bn, t->path, sizeof t->path) != 0) {
        snprintf (err, err_size, "key 'checkpoint.checkpoint_folder': '%s' is too long", given);
        return -1;
    }
    memcpy (t->store, rest, bn);
    t->store[bn] = '\0';
    snprintf (t->engine, sizeof t->engine, "%s", ops->name);
    snprintf (t->scheme, sizeof t->scheme, "%s", scheme);
    return 0;
}

int
sb_ckpt_target_resolve (const sb_workload_t *wl, sb_ckpt_target_t *t, char *err, size_t err_size)
{
    memset (t, 0, sizeof *t);
    const char *given = wl->ckpt.folder;
    char scheme[16];
    const char *rest = sb_uri_scheme (given, scheme, sizeof scheme);
    if (!rest)
        rest = given;   /* no scheme: a path */
    if (!*given) {
        snprintf (err, err_size, "key 'checkpoint.checkpoint_folder' is empty: give a folder, file://PATH or"
                  " SCHEME://STORE[/PREFIX] of an object store");
        return -1;
    }
    const sb_engine_ops_t *ops = *rest && *scheme ? sb_engine_for_scheme (scheme) : NULL;
    if (ops && (ops->caps & SB_ENGINE_OBJECTS))
        return s_object (ops, scheme, given, rest, t, err, err_size);
    if (!strcmp (scheme, "file") || !strcmp (scheme, "direct") || !*scheme) {
        t->direct = !strcmp (scheme, "direct");
        if (!*rest) {
            snprintf (err, err_size, "key 'checkpoint.checkpoint_folder': '%s' names no folder", given);
            return -1;
        }
        if (*scheme || *rest == '/' || !(sb_storage_caps (&wl->storage) & SB_ENGINE_OBJECTS)) {
            /* a local folder, whatever storage the dataset is on */
            if (sb_strf (t->path, sizeof t->path, "%s", rest) != 0) {
                snprintf (err, err_size, "key 'checkpoint.checkpoint_folder': '%s' is too long", given);
                return -1;
            }
            return 0;
        }
        /* relative, with a dataset in an object store: a key prefix in the
         * dataset's store */
        const sb_engine_ops_t *data = sb_engine_of (&wl->storage);
        char data_scheme[16] = "";
        (void) sb_uri_scheme (wl->data_folder, data_scheme, sizeof data_scheme);
        if (sb_strf (t->store, sizeof t->store, "%s", wl->storage.store) != 0
            || s_prefix (rest, t->path, sizeof t->path) != 0
            || sb_strf (t->scheme, sizeof t->scheme, "%s", *data_scheme ? data_scheme
                        : data && data->schemes ? data->schemes[0] : wl->storage.engine) != 0) {
            snprintf (err, err_size, "key 'checkpoint.checkpoint_folder': '%s' is too long for a key prefix", given);
            return -1;
        }
        snprintf (t->engine, sizeof t->engine, "%s", wl->storage.engine);
        return 0;
    }
    snprintf (err, err_size, "key 'checkpoint.checkpoint_folder': %s:// ('%s') is not served: checkpoints go to"
              " local files (file://PATH or a path) or an object store this shardbench serves", scheme, given);
    return -1;
}

int
sb_ckpt_target_endpoints (const sb_workload_t *wl, const sb_ckpt_target_t *t, char *err, size_t err_size)
{
    if (t->engine[0] && (sb_storage_caps (&wl->storage) & SB_ENGINE_OBJECTS) && strcmp (t->engine, wl->storage.engine)) {
        /* the endpoints and credentials are the dataset's: another kind of
         * store cannot be reached through them */
        snprintf (err, err_size, "key 'checkpoint.checkpoint_folder': '%s' is on %s:// but the dataset is on"
                  " %s:// (the %s engine): a run reaches one kind of object store through its endpoints; put the"
                  " checkpoints in a %s:// folder or in local files", wl->ckpt.folder, t->scheme,
                  sb_storage_scheme (&wl->storage), wl->storage.engine, sb_storage_scheme (&wl->storage));
        return -1;
    }
    if (!t->engine[0] || (sb_storage_caps (&wl->storage) & SB_ENGINE_OBJECTS) || wl->storage.nendpoints > 0)
        return 0;
    snprintf (err, err_size, "key 'checkpoint.checkpoint_folder': '%s' is in an object store (%s://) but the dataset"
              " is local, and no endpoint is configured: give storage.storage_options.endpoint_url=http(s)://HOST:PORT"
              " (or storage.endpoint_uris), with the store's credentials in the environment (docs/STORAGE.md)",
              wl->ckpt.folder, t->scheme);
    return -1;
}

/* A checkpoint store of a local dataset: its engine's configure op, told
 * that it may take an endpoint from the environment but not fall back to
 * its service's own (sb_engine_setup_t.checkpoints_only), fills in the
 * endpoints and options the workers will use (kept in wl->storage, whose
 * file engine ignores them). 0, or -1 with err. */
static int
s_configure_target (sb_config_t *cfg, sb_workload_t *wl, const sb_ckpt_target_t *t, char *err, size_t err_size)
{
    const sb_engine_ops_t *ops = t->engine[0] ? sb_engine_find (t->engine) : NULL;
    if (!ops || !ops->configure || (sb_storage_caps (&wl->storage) & SB_ENGINE_OBJECTS))
        return 0;
    sb_storage_cfg_t *c = malloc (sizeof *c);
    if (!c) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    *c = wl->storage;
    snprintf (c->engine, sizeof c->engine, "%s", t->engine);
    snprintf (c->store, sizeof c->store, "%s", t->store);
    sb_engine_setup_t setup;
    sb_storage_keys_setup (cfg, t->scheme, &setup);
    setup.checkpoints_only = 1;
    char why[1024];
    int rc = ops->configure (c, &setup, why, sizeof why);
    if (rc != 0)
        snprintf (err, err_size, "key 'checkpoint.checkpoint_folder': '%s' is in an object store (%s://) but the"
                  " dataset is local: %s", wl->ckpt.folder, t->scheme, why);
    else {
        memcpy (wl->storage.endpoints, c->endpoints, sizeof c->endpoints);
        wl->storage.nendpoints = c->nendpoints;
        memcpy (wl->storage.opts, c->opts, sizeof c->opts);
        wl->storage.nopts = c->nopts;
        wl->storage.list_parallelism = c->list_parallelism;
    }
    free (c);
    return rc;
}

int
sb_ckpt_target_check (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    char where[1200], why[1536];
    const sb_config_entry_t *fe = sb_config_get (cfg, "checkpoint.checkpoint_folder");
    sb_storage_cfg_t *st = &wl->storage;
    if (sb_storage_caps (st) & SB_ENGINE_NO_IO)
        return 0;   /* a synthetic run writes no checkpoint (the session says so when asked to) */
    sb_ckpt_target_t t;
    int bad = sb_ckpt_target_resolve (wl, &t, why, sizeof why) != 0;
    if (!bad && s_configure_target (cfg, wl, &t, why, sizeof why) != 0) {
        if (!wl->ckpt.in_train)
            return 0;   /* no checkpoint during training; `shardbench checkpoint` resolves it again and says so */
        snprintf (err, err_size, "%s: %s", sb_config_where (fe, where, sizeof where), why);
        return -1;
    }
    bad = bad || sb_ckpt_target_endpoints (wl, &t, why, sizeof why) != 0;
    if (bad) {
        if (!wl->ckpt.in_train)
            return 0;   /* no checkpoint during training; `shardbench checkpoint` resolves it again and says so */
        snprintf (err, err_size, "%s: %s", sb_config_where (fe, where, sizeof where), why);
        return -1;
    }
    if (!t.engine[0] || (sb_storage_caps (st) & SB_ENGINE_OBJECTS))
        return 0;   /* local files, or the dataset's store settings, checked with it */
    for (size_t i = 0; i < st->nendpoints; i++) {
        /* HOST:PORT, as for a dataset on S3: http */
        int bad_url = sb_storage_endpoint_normalize (st->endpoints[i], sizeof st->endpoints[0]) != 0;
        const char *v = st->endpoints[i];
        if (bad_url || strchr (v, '@')) {
            snprintf (err, err_size, "%s: key 'checkpoint.checkpoint_folder': '%s' is in an object store, but endpoint %zu"
                      " '%s' is not http(s)://HOST[:PORT] (storage.storage_options.endpoint_url or"
                      " storage.endpoint_uris)", sb_config_where (fe, where, sizeof where), wl->ckpt.folder, i + 1,
                      strchr (v, '@') ? "(holds a user name or password)" : v);
            return -1;
        }
    }
    return 0;
}

int
sb_ckpt_target_uri (const sb_ckpt_target_t *t, char *out, size_t size)
{
    if (t->engine[0])
        return sb_strf (out, size, "%s://%s/%s", t->scheme, t->store, t->path);
    return sb_strf (out, size, "%s", t->path);
}

/* The checkpoint storage's engine: the dataset's options go with the
 * dataset's engine only. */
static void
s_engine (sb_storage_cfg_t *out, const char *engine)
{
    if (strcmp (out->engine, engine) != 0)
        out->nopts = 0;
    snprintf (out->engine, sizeof out->engine, "%s", engine);
}

int
sb_ckpt_target_open (const char *ckpt_root, const char *data_root, const sb_storage_cfg_t *storage,
                     sb_storage_cfg_t *out, char *root, size_t root_size, char *err, size_t err_size)
{
    *out = *storage;
    if (!ckpt_root || !*ckpt_root) {
        /* the dataset's own root, on the dataset's storage; a local
         * folder's checkpoints are files written and read with buffered
         * I/O, whatever engine reads the dataset (direct, uring) */
        if (sb_storage_caps (out) & SB_ENGINE_FOLDER)
            s_engine (out, "file");
        if (sb_strf (root, root_size, "%s", data_root ? data_root : "") != 0) {
            snprintf (err, err_size, "checkpoint folder too long");
            return -1;
        }
        return 0;
    }
    char scheme[16];
    const char *rest = sb_uri_scheme (ckpt_root, scheme, sizeof scheme);
    const sb_engine_ops_t *ops = rest ? sb_engine_for_scheme (scheme) : NULL;
    if (ops && (ops->caps & SB_ENGINE_OBJECTS)) {
        size_t bn = strcspn (rest, "/");
        if (bn == 0 || bn >= sizeof out->store) {
            snprintf (err, err_size, "checkpoint folder '%s': no store, or too long", ckpt_root);
            return -1;
        }
        memcpy (out->store, rest, bn);
        out->store[bn] = '\0';
        s_engine (out, ops->name);
        rest += bn;
        if (*rest == '/')
            rest++;
        if (sb_strf (root, root_size, "%s", rest) != 0) {
            snprintf (err, err_size, "checkpoint folder '%s' too long", ckpt_root);
            return -1;
        }
        if (out->nendpoints == 0) {
            snprintf (err, err_size, "checkpoint folder '%s' is in an object store (%s://), but no endpoint came with"
                      " the workload", ckpt_root, scheme);
            return -1;
        }
        return 0;
    }
    if (ckpt_root[0] != '/') {
        snprintf (err, err_size, "checkpoint folder '%s' is neither SCHEME://STORE/PREFIX/ of an object store nor an"
                  " absolute path",
                  ckpt_root);
        return -1;
    }
    s_engine (out, "file");   /* checkpoints are written as files, whatever engine reads the dataset */
    if (sb_strf (root, root_size, "%s", ckpt_root) != 0) {
        snprintf (err, err_size, "checkpoint folder '%s' too long", ckpt_root);
        return -1;
    }
    return 0;
}

uint64_t
sb_ckpt_target_more_bytes (const char *folder, char *const *names, const uint64_t *sizes, size_t n)
{
    uint64_t need = 0;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        struct stat st;
        uint64_t have = 0;
        if (sizes[i] && sb_strf (path, sizeof path, "%s%s", folder, names[i]) == 0 && stat (path, &st) == 0
            && S_ISREG (st.st_mode))
            have = (uint64_t) st.st_blocks * 512u;
        uint64_t more = sizes[i] > have ? sizes[i] - have : 0;
        need = need > UINT64_MAX - more ? UINT64_MAX : need + more;
    }
    return need;
}
