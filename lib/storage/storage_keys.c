/* storage_keys: DLIO's storage keys into shardbench's engine and settings. */
#include "storage_keys.h"
#include "engine.h"
#include "log.h"
#include "util.h"
#include "workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *
s_value (const sb_config_entry_t *e)
{
    return e && e->value ? e->value : "";
}

const char *
sb_storage_keys_family (const char *storage_type)
{
    /* DLIO's local file systems, then mlcommons/storage's s3dlio and object
     * (the URI scheme decides: s3 until then), then every engine's own */
    static const struct { const char *given, *family; } families[] = {
        { "local_fs", "file" }, { "parallel_fs", "file" }, { "direct_fs", "file" },
        { "s3dlio", "s3" }, { "object", "s3" },
    };
    for (size_t i = 0; storage_type && i < sizeof families / sizeof families[0]; i++)
        if (!strcasecmp (storage_type, families[i].given))
            return families[i].family;
    const sb_engine_ops_t *ops = storage_type ? sb_engine_for_storage_type (storage_type) : NULL;
    return ops ? ops->name : NULL;
}

const char *
sb_storage_keys_engine (const char *scheme, const sb_workload_t *wl)
{
    if (!strcmp (scheme, "file") || !strcmp (scheme, "direct"))
        return wl->odirect ? "direct" : "file";
    const sb_engine_ops_t *ops = sb_engine_for_scheme (scheme);
    return ops ? ops->name : NULL;
}

int
sb_storage_keys_is_reader_option (const char *key)
{
    return strcmp (key, "reader.storage_options") == 0 || strncmp (key, "reader.storage_options.", 23) == 0;
}

/* 1 when a reader: storage value points away from the local file system. */
static int
s_reader_value_remote (const char *key, const char *v)
{
    char scheme[16];
    const char *rest = sb_uri_scheme (v, scheme, sizeof scheme);
    if (rest)
        return strcmp (scheme, "file") != 0 && strcmp (scheme, "direct") != 0;
    if (!strcmp (key, "reader.storage_type"))
        return !strcasecmp (v, "s3") || !strcasecmp (v, "object") || !strcasecmp (v, "aistore");
    if (!strcmp (key, "reader.protocol"))
        return *v && strcasecmp (v, "file") != 0 && strcasecmp (v, "direct") != 0;
    if (!strcmp (key, "reader.storage_root"))
        return *v && *v != '/' && *v != '.';      /* STORE[/PREFIX] */
    if (!strcmp (key, "reader.endpoint_uris") || !strcmp (key, "reader.storage_options.endpoint_url"))
        return *v != '\0';
    return 0;
}

/* 1 for an absent key or an empty value ("": the upstream files' "given
 * on the command line"), which neither conflicts nor is taken. */
static int
s_empty (const sb_config_entry_t *e)
{
    return !e || (!e->items && !*s_value (e));
}

/* 1 when two entries hold the same value or the same list. */
static int
s_same_value (const sb_config_entry_t *a, const sb_config_entry_t *b)
{
    if (!a->items != !b->items)
        return 0;
    if (!a->items)
        return strcmp (s_value (a), s_value (b)) == 0;
    if (a->nitems != b->nitems)
        return 0;
    for (size_t i = 0; i < a->nitems; i++)
        if (strcmp (a->items[i], b->items[i]) != 0)
            return 0;
    return 1;
}

/* A reader: storage key and its storage: counterpart disagree: -1 with an
 * error naming both lines (values of credentials not repeated). */
static int
s_reader_conflict (const sb_config_entry_t *r, const sb_config_entry_t *st, char *err, size_t err_size)
{
    char where[1200], w2[1200];
    if (sb_workload_is_secret_key (r->key) || r->items || st->items)
        snprintf (err, err_size, "%s: key '%s' disagrees with %s (%s): give the storage keys once, under storage:",
                  sb_config_where (r, where, sizeof where), r->key, st->key, sb_config_where (st, w2, sizeof w2));
    else
        snprintf (err, err_size, "%s: key '%s': '%s' disagrees with %s '%s' (%s): give the storage keys once, under"
                  " storage:", sb_config_where (r, where, sizeof where), r->key, s_value (r), st->key, s_value (st),
                  sb_config_where (st, w2, sizeof w2));
    return -1;
}

int
sb_storage_keys_reader (sb_config_t *cfg, char *err, size_t err_size)
{
    static const char *const keys[] = { "reader.storage_type", "reader.protocol", "reader.storage_library",
                                        "reader.storage_root", "reader.endpoint_uris",
                                        "reader.load_balance_strategy", "reader.use_mpi_endpoint_distribution",
                                        NULL };
    char where[1200], target[600], taken[512] = "";
    size_t used = 0;
    const sb_config_entry_t *first = NULL, *remote;
    /* the keys to take: the fixed ones, then reader.storage_options.* */
    const char *names[256];
    size_t n = 0;
    for (int i = 0; keys[i]; i++)
        if (!s_empty (sb_config_get (cfg, keys[i])))
            names[n++] = keys[i];
    for (size_t i = 0; i < sb_config_count (cfg) && n < sizeof names / sizeof names[0]; i++) {
        const sb_config_entry_t *e = sb_config_at (cfg, i);
        if (strncmp (e->key, "reader.storage_options.", 23) == 0 && !s_empty (e))
            names[n++] = e->key;
    }
    /* the checks first, then the copies (which may move the entries) */
    for (size_t i = 0; i < n; i++) {
        const sb_config_entry_t *e = sb_config_get (cfg, names[i]);
        snprintf (target, sizeof target, "storage.%s", names[i] + 7);
        const sb_config_entry_t *st = sb_config_get (cfg, target);
        if (!s_empty (st) && !s_same_value (e, st))
            return s_reader_conflict (e, st, err, err_size);
        first = first ? first : e;
    }
    /* reader.data_loader_root: where those files' training reads, as an
     * object store URI; their dataset.data_folder is "only used when
     * generating". A file:// one is the local data, which data_folder names
     * already (pytorch_file_backend.yaml: data_folder/train). */
    const sb_config_entry_t *root = sb_config_get (cfg, "reader.data_loader_root");
    const sb_config_entry_t *df = sb_config_get (cfg, "dataset.data_folder");
    int root_remote = root && !root->items && s_reader_value_remote (root->key, s_value (root));
    char scheme[16];
    if (root_remote && df && sb_uri_scheme (s_value (df), scheme, sizeof scheme) && strcmp (s_value (df), s_value (root)))
        return s_reader_conflict (root, df, err, err_size);
    first = first ? first : root;
    if (!first)
        return 0;
    const char *first_key = first->key;     /* the entries may move as keys are added; their texts stay */
    for (size_t i = 0; i < n; i++) {
        snprintf (target, sizeof target, "storage.%s", names[i] + 7);
        if (!s_empty (sb_config_get (cfg, target)))
            continue;   /* the same value under storage: already */
        if (sb_config_copy (cfg, names[i], target) != 0) {
            snprintf (err, err_size, "%s: key '%s': out of memory", sb_config_where (sb_config_get (cfg, names[i]), where,
                      sizeof where), names[i]);
            return -1;
        }
        if (strncmp (names[i], "reader.storage_options.", 23) != 0 || !strstr (taken, "storage_options"))
            used += (size_t) snprintf (taken + used, used < sizeof taken ? sizeof taken - used : 0, "%s%s",
                                       used ? ", " : "", strncmp (names[i], "reader.storage_options.", 23) == 0
                                       ? "storage_options" : names[i] + 7);
        if (used >= sizeof taken)
            used = sizeof taken - 1;
    }
    root = sb_config_get (cfg, "reader.data_loader_root");
    df = sb_config_get (cfg, "dataset.data_folder");
    if (root_remote && (!df || strcmp (s_value (df), s_value (root)) != 0)) {
        if (sb_config_copy (cfg, "reader.data_loader_root", "dataset.data_folder") != 0) {
            /* the copy may have moved the entries: look root up again */
            snprintf (err, err_size, "%s: key 'reader.data_loader_root': out of memory",
                      sb_config_where (sb_config_get (cfg, "reader.data_loader_root"), where, sizeof where));
            return -1;
        }
        used += (size_t) snprintf (taken + used, used < sizeof taken ? sizeof taken - used : 0, "%s%s",
                                   used ? ", " : "", "data_loader_root as dataset.data_folder");
        if (used >= sizeof taken)
            used = sizeof taken - 1;
    }
    /* an object store named under reader: with no storage_type anywhere:
     * object, whose URIs' scheme (or protocol) decides */
    remote = NULL;
    for (size_t i = 0; i < n && !remote; i++) {
        const sb_config_entry_t *e = sb_config_get (cfg, names[i]);
        const char *v = e->items ? (e->nitems ? e->items[0] : "") : s_value (e);
        if (s_reader_value_remote (names[i], v))
            remote = e;
    }
    if (!remote && root_remote)
        remote = sb_config_get (cfg, "reader.data_loader_root");
    if (remote && !sb_config_get (cfg, "storage.storage_type")) {
        const char *remote_key = remote->key;   /* its text stays when the entries move */
        if (sb_config_set_at (cfg, "storage.storage_type", "object", remote->origin, remote->line) != 0) {
            snprintf (err, err_size, "%s: key '%s': out of memory",
                      sb_config_where (sb_config_get (cfg, remote_key), where, sizeof where), remote_key);
            return -1;
        }
        used += (size_t) snprintf (taken + used, used < sizeof taken ? sizeof taken - used : 0, "%s%s",
                                   used ? ", " : "", "storage_type object for its URI");
        if (used >= sizeof taken)
            used = sizeof taken - 1;
    }
    if (!used)
        return 0;
    first = sb_config_get (cfg, first_key);
    sb_warn ("%s: storage keys under reader: taken as the storage: section's (%s): DLIO_local_changes reads no"
             " storage key under reader: and would run on the local files of dataset.data_folder; give them under"
             " storage: to run the same under both", sb_config_where (first, where, sizeof where), taken);
    return 0;
}

int
sb_storage_keys_placeholders (sb_config_t *cfg, char *err, size_t err_size)
{
    static const struct { const char *key, *example; } keys[] = {
        { "storage.storage_root", "storage.storage_root=STORE" },
        { "storage.storage_library", "storage.storage_library=s3dlio" },
        { "storage.storage_options.storage_library", "storage.storage_options.storage_library=s3dlio" },
        { "storage.storage_options.endpoint_url", "storage.storage_options.endpoint_url=http(s)://HOST:PORT" },
        { "dataset.data_folder", "dataset.data_folder=FOLDER" },
    };
    char where[1200], example[300];
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const sb_config_entry_t *e = sb_config_get (cfg, keys[i].key);
        const char *v = s_value (e);
        if (!strstr (v, "_PLACEHOLDER"))
            continue;
        snprintf (err, err_size, "%s: key '%s': '%s' is a placeholder of the upstream file: set it on the command"
                  " line, e.g. %s", sb_config_where (e, where, sizeof where), keys[i].key, v, keys[i].example);
        return -1;
    }
    /* and the engines' own settings in DLIO's spellings */
    for (size_t i = 0; sb_engine_at (i); i++)
        for (const sb_engine_option_t *o = sb_engine_at (i)->options; o && o->key; o++) {
            const sb_config_entry_t *e = o->alias ? sb_config_get (cfg, o->alias) : NULL;
            const char *v = s_value (e);
            if (!strstr (v, "_PLACEHOLDER"))
                continue;
            snprintf (example, sizeof example, "%s=VALUE", o->alias);
            snprintf (err, err_size, "%s: key '%s': '%s' is a placeholder of the upstream file: set it on the"
                      " command line, e.g. %s", sb_config_where (e, where, sizeof where), o->alias, v, example);
            return -1;
        }
    return 0;
}

/* Copy n bytes of s into out (size bytes) without leading and trailing '/'. */
static int
s_trim_slashes (const char *s, size_t n, char *out, size_t size)
{
    while (n && *s == '/')
        s++, n--;
    while (n && s[n - 1] == '/')
        n--;
    if (n >= size)
        return -1;
    memcpy (out, s, n);
    out[n] = '\0';
    return 0;
}

/* A local data folder as a path: data_folder with its file:// or direct://
 * scheme removed; a relative one under a storage_root that names a local
 * folder (s3dlio's URIs are storage_root/data_folder). */
static int
s_local_folder (sb_config_t *cfg, sb_workload_t *wl, const char *root, char *err, size_t err_size)
{
    char scheme[16], path[sizeof wl->data_folder];
    const char *rest = sb_uri_scheme (wl->data_folder, scheme, sizeof scheme);
    const char *rroot = NULL;
    char rscheme[16];
    if (*root)
        rroot = sb_uri_scheme (root, rscheme, sizeof rscheme);
    if (rest)
        snprintf (path, sizeof path, "%s", rest);
    else if (wl->data_folder[0] != '/' && rroot && *rroot && strcmp (wl->data_folder, ".") != 0) {
        const char *rel = wl->data_folder;
        while (strncmp (rel, "./", 2) == 0)
            rel += 2;
        size_t rn = strlen (rroot);
        while (rn > 1 && rroot[rn - 1] == '/')
            rn--;
        int w = snprintf (path, sizeof path, "%.*s/%s", (int) rn, rroot, rel);
        if (w < 0 || (size_t) w >= sizeof path) {
            char where[1200];
            snprintf (err, err_size, "%s: key 'dataset.data_folder': with storage.storage_root the folder is too long",
                      sb_config_where (sb_config_get (cfg, "dataset.data_folder"), where, sizeof where));
            return -1;
        }
    }
    else if (rroot && *rroot && strcmp (wl->data_folder, ".") == 0)
        snprintf (path, sizeof path, "%s", rroot);
    else
        return 0;
    if (!*path) {
        char where[1200];
        snprintf (err, err_size, "%s: key 'dataset.data_folder': '%s' names no folder",
                  sb_config_where (sb_config_get (cfg, "dataset.data_folder"), where, sizeof where), wl->data_folder);
        return -1;
    }
    snprintf (wl->data_folder, sizeof wl->data_folder, "%s", path);
    return 0;
}

/* An object store's top-level name (cfg->store) and key prefix, as DLIO forms URIs:
 * ObjStoreLibStorage keeps a data_folder URI as it is (its store and
 * path), else prefixes storage_root (the "namespace": STORE[/PREFIX]) to
 * it. scheme is the store's ("s3", "az"). */
static int
s_object_location (sb_config_t *cfg, sb_workload_t *wl, const char *root_given, const char *scheme_want, char *err,
                   size_t err_size)
{
    char where[1200], w2[1200];
    const sb_config_entry_t *re = sb_config_get (cfg, "storage.storage_root");
    const sb_config_entry_t *de = sb_config_get (cfg, "dataset.data_folder");
    char scheme[16], store[256] = "", root_prefix[1024] = "", prefix[1024] = "";
    const char *root = sb_uri_scheme (root_given, scheme, sizeof scheme);
    if (root && strcmp (scheme, scheme_want) != 0) {
        snprintf (err, err_size, "%s: key 'storage.storage_root': '%s' is not a %s:// location (%s://STORE[/PREFIX] or"
                  " STORE[/PREFIX])", sb_config_where (re, where, sizeof where), root_given, scheme_want, scheme_want);
        return -1;
    }
    root = root ? root : root_given;
    if (*root == '/' && !sb_config_get (cfg, "storage.protocol")) {
        snprintf (err, err_size, "%s: key 'storage.storage_root': '%s' is a local path, but the storage is an object"
                  " store (%s://): give STORE[/PREFIX], or storage.storage_type local_fs (or direct_fs for O_DIRECT)",
                  sb_config_where (re, where, sizeof where), root_given, scheme_want);
        return -1;
    }
    size_t bn = strcspn (root, "/");
    if (bn >= sizeof store || s_trim_slashes (root + bn, strlen (root + bn), root_prefix, sizeof root_prefix) != 0)
        goto too_long;
    memcpy (store, root, bn);
    store[bn] = '\0';
    const char *df = wl->data_folder;
    const char *rest = sb_uri_scheme (df, scheme, sizeof scheme);
    if (rest) {
        if (strcmp (scheme, scheme_want) != 0) {
            snprintf (err, err_size, "%s: key 'dataset.data_folder': '%s' is not a %s:// location, but the storage"
                      " is", sb_config_where (de, where, sizeof where), df, scheme_want);
            return -1;
        }
        size_t dn = strcspn (rest, "/");
        if (dn == 0) {
            snprintf (err, err_size, "%s: key 'dataset.data_folder': '%s' names no store (%s://STORE/PREFIX)",
                      sb_config_where (de, where, sizeof where), df, scheme_want);
            return -1;
        }
        if (*store && (strlen (store) != dn || strncmp (store, rest, dn) != 0)) {
            snprintf (err, err_size, "%s: key 'dataset.data_folder': '%s' names '%.*s', storage.storage_root (%s)"
                      " names '%s': one run reads one store", sb_config_where (de, where, sizeof where), df, (int) dn,
                      rest, sb_config_where (re, w2, sizeof w2), store);
            return -1;
        }
        if (dn >= sizeof store || s_trim_slashes (rest + dn, strlen (rest + dn), prefix, sizeof prefix) != 0)
            goto too_long;
        memcpy (store, rest, dn);
        store[dn] = '\0';
    }
    else {
        const char *p = df;
        while (strncmp (p, "./", 2) == 0 || *p == '/')
            p += *p == '/' ? 1 : 2;
        char tail[1024];
        if (s_trim_slashes (p, strlen (p), tail, sizeof tail) != 0)
            goto too_long;
        if (!strcmp (tail, "."))
            tail[0] = '\0';
        int w = snprintf (prefix, sizeof prefix, "%s%s%s", root_prefix, *root_prefix && *tail ? "/" : "", tail);
        if (w < 0 || (size_t) w >= sizeof prefix)
            goto too_long;
    }
    /* no store named: the engine's configure says what it needs */
    snprintf (wl->storage.store, sizeof wl->storage.store, "%s", store);
    if (*store && snprintf (wl->data_folder, sizeof wl->data_folder, "%s://%s/%s", scheme_want, store, prefix)
        >= (int) sizeof wl->data_folder)
        goto too_long;
    return 0;
too_long:
    snprintf (err, err_size, "%s: key 'dataset.data_folder': the %s:// location (with storage.storage_root) is too"
              " long", sb_config_where (de, where, sizeof where), scheme_want);
    return -1;
}

/* Record the engine (wl->storage.engine), refusing one this build lacks;
 * why names the key that chose it. 0 or -1 with err. */
static int
s_engine_chosen (sb_config_t *cfg, sb_workload_t *wl, const char *engine, const sb_config_entry_t *why, char *err,
                 size_t err_size)
{
    char where[1200];
    if (!engine || !sb_engine_find (engine)) {
        snprintf (err, err_size, "%s: key '%s': the %s storage engine is not built into this shardbench",
                  sb_config_where (why ? why : sb_config_get (cfg, "storage.storage_type"), where, sizeof where),
                  why ? why->key : "storage.storage_type", engine ? engine : "chosen");
        return -1;
    }
    snprintf (wl->storage.engine, sizeof wl->storage.engine, "%s", engine);
    if (!strcmp (engine, "synthetic"))
        snprintf (wl->storage_summary, sizeof wl->storage_summary, "synthetic");
    return 0;
}

/* ---- storage.engine, shardbench's own key ----
 * Another engine of the local file system than the one storage_type
 * chose (file, or direct with reader.odirect): the uring engine. Only an
 * engine that reads a folder tree (SB_ENGINE_FOLDER) may replace one that
 * does. *chosen and *why become the engine named and its key. 0, or -1
 * with err. */
static int
s_engine_override (sb_config_t *cfg, const sb_workload_t *wl, const char **chosen, const sb_config_entry_t **why,
                   char *err, size_t err_size)
{
    const sb_config_entry_t *ee = sb_config_get (cfg, "storage.engine");
    if (!ee || !*s_value (ee))
        return 0;
    char where[1200];
    const char *name = s_value (ee);
    const sb_engine_ops_t *want = sb_engine_find (name), *had = sb_engine_find (*chosen);
    if (!want || !(want->caps & SB_ENGINE_FOLDER) || !had || !(had->caps & SB_ENGINE_FOLDER)) {
        snprintf (err, err_size, "%s: key 'storage.engine': '%s' %s", sb_config_where (ee, where, sizeof where), name,
                  !want ? "is not a storage engine this shardbench is built with"
                  : !(want->caps & SB_ENGINE_FOLDER) ? "does not read a local folder (storage.storage_type chooses s3"
                                                        " and synthetic)"
                  : "reads a local folder, but the storage is not the local file system (storage.storage_type)");
        return -1;
    }
    if (wl->odirect && strcmp (want->name, "direct") != 0) {
        snprintf (err, err_size, "%s: key 'storage.engine': %s with reader.odirect: true; O_DIRECT is the direct"
                  " engine (or storage.%s.direct where the %s engine has that option)",
                  sb_config_where (ee, where, sizeof where), want->name, want->name, want->name);
        return -1;
    }
    *chosen = want->name;
    *why = ee;
    return 0;
}
/* ---- end of storage.engine ---- */

/* storage.storage_options.uri_scheme: the scheme DLIO_local_changes hands
 * s3dlio (obj_store_lib.py, default s3) and, as direct, the O_DIRECT switch
 * of its local npz, npy, jpeg and png readers (_local_fs_iterable_mixin.py).
 * It must agree with the scheme shardbench chose (`scheme`): a store it
 * does not serve, or local URIs for S3 storage, are refused; direct on
 * local files read without O_DIRECT is warned about. 0, or -1 with err. */
static int
s_uri_scheme_option (sb_config_t *cfg, const sb_workload_t *wl, const char *scheme, char *err, size_t err_size)
{
    const sb_config_entry_t *ue = sb_config_get (cfg, "storage.storage_options.uri_scheme");
    if (s_empty (ue))
        return 0;
    char where[1200], v[16];
    const char *given = ue->items ? "" : s_value (ue);
    size_t n = strcspn (given, ":/");
    if (ue->items || n == 0 || n >= sizeof v || given[n + strspn (given + n, ":/")] != '\0') {
        snprintf (err, err_size, "%s: key '%s': expected a URI scheme (s3, file or direct), got '%s'",
                  sb_config_where (ue, where, sizeof where), ue->key, ue->items ? "a list" : given);
        return -1;
    }
    snprintf (v, sizeof v, "%.*s", (int) n, given);
    if (!sb_engine_for_scheme (v)) {
        snprintf (err, err_size, "%s: key '%s': %s:// is not served by this shardbench",
                  sb_config_where (ue, where, sizeof where), ue->key, v);
        return -1;
    }
    int local = !strcmp (scheme, "file") || !strcmp (scheme, "direct");
    int v_local = !strcmp (v, "file") || !strcmp (v, "direct");
    if (!local && strcmp (v, scheme)) {
        snprintf (err, err_size, "%s: key '%s': %s:// URIs, but the storage is %s:// (storage.storage_type %s)%s",
                  sb_config_where (ue, where, sizeof where), ue->key, v, scheme,
                  wl->storage_type_given[0] ? wl->storage_type_given : scheme,
                  v_local ? ": for local files use storage_type local_fs (direct_fs for O_DIRECT)" : "");
        return -1;
    }
    if (local && !strcmp (v, "direct") && !wl->odirect)
        sb_warn ("%s: key '%s': direct: DLIO's npz, npy, jpeg and png readers of local files then read with"
                 " O_DIRECT; shardbench reads these files through the page cache unless reader.odirect is true"
                 " (or storage.storage_type is direct_fs)", sb_config_where (ue, where, sizeof where), ue->key);
    return 0;
}

int
sb_storage_keys_resolve (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    char where[1200], w2[1200];
    const sb_config_entry_t *te = sb_config_get (cfg, "storage.storage_type");
    const sb_config_entry_t *le = sb_config_get (cfg, "storage.storage_library");
    const sb_config_entry_t *le2 = sb_config_get (cfg, "storage.storage_options.storage_library");
    const sb_config_entry_t *pe = sb_config_get (cfg, "storage.protocol");
    if (le && le2 && strcmp (s_value (le), s_value (le2)) != 0) {
        snprintf (err, err_size, "%s: key 'storage.storage_options.storage_library': '%s' disagrees with"
                  " storage.storage_library '%s' (%s)", sb_config_where (le2, where, sizeof where), s_value (le2),
                  s_value (le), sb_config_where (le, w2, sizeof w2));
        return -1;
    }
    le = le ? le : le2;
    const char *lib = s_value (le);
    if (le && strcmp (lib, "s3dlio") && strcmp (lib, "s3torchconnector") && strcmp (lib, "minio")) {
        snprintf (err, err_size, "%s: key '%s': expected s3dlio, s3torchconnector or minio, got '%s'",
                  sb_config_where (le, where, sizeof where), le->key, lib);
        return -1;
    }
    snprintf (wl->storage_library, sizeof wl->storage_library, "%s", lib);
    snprintf (wl->storage_type_given, sizeof wl->storage_type_given, "%s", te ? s_value (te) : "");
    snprintf (wl->storage_protocol, sizeof wl->storage_protocol, "%s", s_value (pe));
    const sb_config_entry_t *id = sb_config_get (cfg, "storage.storage_options.access_key_id");
    wl->credentials_in_file = id && *s_value (id) && strncmp (s_value (id), "${", 2) != 0;
    if (!strcmp (wl->storage.engine, "synthetic"))
        return s_engine_chosen (cfg, wl, "synthetic", te, err, err_size);
    /* the scheme that decides: DLIO's storage_type, or for s3dlio and
     * object the URIs' scheme or storage.protocol */
    const char *given = te ? s_value (te) : "local_fs";
    char root[sizeof wl->storage.store];
    snprintf (root, sizeof root, "%s", wl->storage.store);
    char scheme[16] = "", tmp[16];
    const sb_engine_ops_t *typed = sb_engine_for_storage_type (given);
    const sb_engine_ops_t *by_uri = sb_uri_scheme (wl->data_folder, tmp, sizeof tmp) ? sb_engine_for_scheme (tmp)
                                                                                     : NULL;
    if (!te && by_uri && (by_uri->caps & SB_ENGINE_OBJECTS))
        snprintf (scheme, sizeof scheme, "%s", tmp);    /* az://C/P alone names its store */
    else if (!strcasecmp (given, "direct_fs"))
        snprintf (scheme, sizeof scheme, "direct");
    else if (typed && typed->schemes && typed->schemes[0])
        snprintf (scheme, sizeof scheme, "%s", typed->schemes[0]);
    else if (!strcasecmp (given, "s3dlio") || !strcasecmp (given, "object")) {
        if (pe && *s_value (pe))
            snprintf (scheme, sizeof scheme, "%s", s_value (pe));
        else if (sb_uri_scheme (wl->data_folder, tmp, sizeof tmp))
            snprintf (scheme, sizeof scheme, "%s", tmp);
        else if (sb_uri_scheme (root, tmp, sizeof tmp))
            snprintf (scheme, sizeof scheme, "%s", tmp);
        else
            snprintf (scheme, sizeof scheme, "s3");     /* s3dlio's default uri_scheme */
    }
    else
        snprintf (scheme, sizeof scheme, "file");
    /* DLIO's s3 storage through s3dlio reaches other stores by its
     * storage_options.uri_scheme (obj_store_lib.py forms SCHEME://STORE/KEY):
     * storage_type s3 with uri_scheme az or gs is that store's engine */
    const sb_config_entry_t *ue = sb_config_get (cfg, "storage.storage_options.uri_scheme");
    if (typed && (typed->caps & SB_ENGINE_OBJECTS) && !s_empty (ue) && !ue->items) {
        char want[16];
        const char *u = s_value (ue);
        size_t un = strcspn (u, ":/");
        const sb_engine_ops_t *by = un < sizeof want ? (snprintf (want, sizeof want, "%.*s", (int) un, u),
                                                        sb_engine_for_scheme (want)) : NULL;
        if (by && (by->caps & SB_ENGINE_OBJECTS))
            snprintf (scheme, sizeof scheme, "%s", want);
    }
    const sb_config_entry_t *why_e = pe && *s_value (pe) ? pe : te;
    const sb_engine_ops_t *store_ops = sb_engine_for_scheme (scheme);
    if (store_ops && (store_ops->caps & SB_ENGINE_OBJECTS)) {
        if (s_object_location (cfg, wl, root, scheme, err, err_size) != 0)
            return -1;
    }
    else if (!strcmp (scheme, "file") || !strcmp (scheme, "direct")) {
        /* DLIO reads npz, npy, jpeg, png on direct_fs with its local
         * iterable readers unless reader.odirect picks its O_DIRECT readers */
        wl->storage.direct_fs_iterable = !strcasecmp (given, "direct_fs") && !wl->odirect;
        if (!strcmp (scheme, "direct"))
            wl->odirect = 1;    /* s3dlio's direct:// is O_DIRECT I/O */
        if (strcasecmp (given, "local_fs") != 0 && strcasecmp (given, "parallel_fs") != 0
            && s_local_folder (cfg, wl, root, err, err_size) != 0)
            return -1;
        if (sb_uri_scheme (wl->data_folder, tmp, sizeof tmp)) {
            snprintf (err, err_size, "%s: key 'dataset.data_folder': '%s' is a %s:// location, but the storage is"
                      " the local file system (storage.storage_type %s)", sb_config_where (sb_config_get (cfg,
                      "dataset.data_folder"), where, sizeof where), wl->data_folder, tmp, given);
            return -1;
        }
    }
    else if (!store_ops || strcmp (scheme, "synthetic") != 0) {
        char served[256] = "";
        size_t used = 0;
        for (size_t i = 0; sb_engine_at (i) && used < sizeof served; i++)
            for (const char *const *sc = sb_engine_at (i)->schemes; sc && *sc && used < sizeof served; sc++)
                used += (size_t) snprintf (served + used, sizeof served - used, "%s%s://", used ? ", " : "", *sc);
        snprintf (err, err_size, "%s: key '%s': %s:// is not served by this shardbench (it serves %s)",
                  sb_config_where (why_e, where, sizeof where), why_e ? why_e->key : "storage.storage_type", scheme,
                  served);
        return -1;
    }
    if (s_uri_scheme_option (cfg, wl, scheme, err, err_size) != 0)
        return -1;
    const char *chosen = sb_storage_keys_engine (scheme, wl);
    if (s_engine_override (cfg, wl, &chosen, &why_e, err, err_size) != 0)
        return -1;
    if (s_engine_chosen (cfg, wl, chosen, why_e, err, err_size) != 0)
        return -1;
    /* the engine, and the keys that chose it, for the run's summary */
    const char *family = sb_storage_keys_family (given);
    char given_part[64] = "", lib_part[64] = "";
    if (te && (!family || strcasecmp (given, family) != 0) && strcasecmp (given, "local_fs") != 0)
        snprintf (given_part, sizeof given_part, "storage_type %s", given);
    if (*lib)
        snprintf (lib_part, sizeof lib_part, "storage_library %s", lib);
    /* the direct engine keeps the summary it had as files read with O_DIRECT */
    const char *engine = !strcmp (wl->storage.engine, "direct") ? "file, O_DIRECT" : wl->storage.engine;
    snprintf (wl->storage_summary, sizeof wl->storage_summary, "%s%s%s%s%s%s", engine,
              *given_part || *lib_part ? " (" : "", given_part, *given_part && *lib_part ? ", " : "", lib_part,
              *given_part || *lib_part ? ")" : "");
    return 0;
}

/* A boolean the way the key table reads one: 1, 0, or -1 when not one. */
static int
s_bool (const char *v)
{
    if (!strcasecmp (v, "true") || !strcasecmp (v, "yes") || !strcasecmp (v, "on") || !strcmp (v, "1"))
        return 1;
    if (!strcasecmp (v, "false") || !strcasecmp (v, "no") || !strcasecmp (v, "off") || !strcmp (v, "0"))
        return 0;
    return -1;
}

int
sb_storage_keys_finish (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    char where[1200], w2[1200];
    sb_storage_cfg_t *st = &wl->storage;
    const sb_config_entry_t *e = sb_config_get (cfg, "storage.storage_options.s3_max_attempts");
    if (e) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull (s_value (e), &end, 10);
        const sb_config_entry_t *own = sb_config_get (cfg, "storage.storage_options.max_retries");
        if (e->items || !*s_value (e) || *end || errno || *s_value (e) == '-' || v < 1 || v > 101) {
            snprintf (err, err_size, "%s: key '%s': expected 1 to 101 attempts, got '%s'",
                      sb_config_where (e, where, sizeof where), e->key, e->items ? "a list" : s_value (e));
            return -1;
        }
        if (own && v - 1 != st->max_retries) {
            snprintf (err, err_size, "%s: key '%s': %llu attempts disagree with storage.storage_options.max_retries"
                      " %llu (%s)", sb_config_where (e, where, sizeof where), e->key, v,
                      (unsigned long long) st->max_retries, sb_config_where (own, w2, sizeof w2));
            return -1;
        }
        st->max_retries = v - 1;
    }
    e = sb_config_get (cfg, "storage.load_balance_strategy");
    if (e) {
        const char *v = s_value (e);
        const sb_config_entry_t *own = sb_config_get (cfg, "storage.storage_options.load_balance");
        sb_lb_t lb;
        if (!strcmp (v, "round_robin"))
            lb = SB_LB_ROUND_ROBIN;
        else if (!strcmp (v, "least_connections"))
            lb = SB_LB_LEAST_CONNECTIONS;
        else {
            snprintf (err, err_size, "%s: key '%s': expected round_robin or least_connections, got '%s'%s",
                      sb_config_where (e, where, sizeof where), e->key, e->items ? "a list" : v,
                      !strcmp (v, "random") ? " (random is not implemented)" : "");
            return -1;
        }
        if (own && lb != st->lb) {
            snprintf (err, err_size, "%s: key '%s': %s disagrees with storage.storage_options.load_balance (%s)",
                      sb_config_where (e, where, sizeof where), e->key, v, sb_config_where (own, w2, sizeof w2));
            return -1;
        }
        st->lb = lb;
        snprintf (wl->load_balance_strategy, sizeof wl->load_balance_strategy, "%s", v);
    }
    e = sb_config_get (cfg, "storage.use_mpi_endpoint_distribution");
    if (e) {
        int v = s_bool (s_value (e));
        if (v < 0) {
            snprintf (err, err_size, "%s: key '%s': expected true or false, got '%s'", sb_config_where (e, where, sizeof where),
                      e->key, e->items ? "a list" : s_value (e));
            return -1;
        }
        wl->endpoint_per_rank = v;
        if (v)
            st->lb = SB_LB_PER_RANK;    /* rank r: endpoint r mod N (sb_storage_for_rank) */
    }
    return 0;
}

/* sb_engine_setup_t over a loaded configuration */
static const char *
s_setup_where (void *ctx, const char *key, char *buf, size_t size)
{
    const sb_config_entry_t *e = sb_config_get (ctx, key);
    return e ? sb_config_where (e, buf, size) : NULL;
}

static const char *
s_setup_value (void *ctx, const char *key)
{
    const sb_config_entry_t *e = sb_config_get (ctx, key);
    return e && !e->items ? s_value (e) : NULL;
}

void
sb_storage_keys_setup (sb_config_t *cfg, const char *scheme, sb_engine_setup_t *setup)
{
    *setup = (sb_engine_setup_t) { .scheme = scheme ? scheme : "", .where = s_setup_where, .value = s_setup_value,
                                   .ctx = cfg };
}

int
sb_workload_export_credentials (sb_config_t *cfg, char *err, size_t err_size)
{
    sb_engine_setup_t setup;
    sb_storage_keys_setup (cfg, "", &setup);
    int any = 0;
    for (size_t i = 0; sb_engine_at (i); i++) {
        const sb_engine_ops_t *ops = sb_engine_at (i);
        int seen = 0;   /* engines sharing one client share its op: once */
        for (size_t j = 0; j < i; j++)
            seen |= sb_engine_at (j)->export_credentials == ops->export_credentials;
        if (!ops->export_credentials || seen)
            continue;
        int rc = ops->export_credentials (&setup, err, err_size);
        if (rc < 0)
            return -1;
        any |= rc;
    }
    return any;
}

/* A value YAML reads as null (Python's None in DLIO): absent. */
static int
s_null (const sb_config_entry_t *e)
{
    const char *v = s_value (e);
    return !e || (!e->items && (!*v || !strcmp (v, "~") || !strcasecmp (v, "null")));
}

int
sb_storage_keys_dlio_refused (sb_config_t *cfg, int check, const sb_config_entry_t **at, char *why, size_t size)
{
    const sb_config_entry_t *te = sb_config_get (cfg, "storage.storage_type");
    const sb_config_entry_t *le = sb_config_get (cfg, "storage.storage_library");
    if (s_null (le))
        le = sb_config_get (cfg, "storage.storage_options.storage_library");
    const char *type = s_value (te), *lib = s_null (le) ? "" : s_value (le);
    if (check == 0 && (!strcasecmp (type, "s3dlio") || !strcasecmp (type, "object"))) {
        /* the DLIO spelling of what shardbench runs for it (sb_storage_keys_resolve):
         * storage.protocol, else the URIs' scheme, else s3 */
        const sb_config_entry_t *pe = sb_config_get (cfg, "storage.protocol");
        char scheme[16] = "s3";
        if (!s_null (pe))
            snprintf (scheme, sizeof scheme, "%s", s_value (pe));
        else if (!sb_uri_scheme (s_value (sb_config_get (cfg, "dataset.data_folder")), scheme, sizeof scheme)
                 && !sb_uri_scheme (s_value (sb_config_get (cfg, "storage.storage_root")), scheme, sizeof scheme))
            snprintf (scheme, sizeof scheme, "s3");
        char fix[160];
        if (!strcmp (scheme, "file"))
            snprintf (fix, sizeof fix, "storage_type: local_fs");
        else if (!strcmp (scheme, "direct"))
            snprintf (fix, sizeof fix, "storage_type: direct_fs with storage_library: s3dlio");
        else
            snprintf (fix, sizeof fix, "storage_type: s3 with storage_library: %s", *lib ? lib : "s3dlio");
        *at = te;
        snprintf (why, size, "DLIO_local_changes refuses '%s': it is not one of DLIO's storage types (local_fs,"
                  " parallel_fs, direct_fs, s3, aistore), so config.py's LoadConfig stops before anything runs;"
                  " write %s under storage: (the same I/O in shardbench)", type, fix);
        return 1;
    }
    /* validate(): with PyTorch an S3 workload names its client library;
     * DLIO's framework default is TensorFlow, which is not checked */
    if (check == 1 && !strcmp (type, "s3") && !strcmp (s_value (sb_config_get (cfg, "framework")), "pytorch") && !*lib) {
        *at = te;
        snprintf (why, size, "DLIO_local_changes refuses storage_type s3 with framework pytorch and no"
                  " storage_library (config.py's validate stops, after datagen when the workflow generates data);"
                  " add storage_library: s3dlio (or s3torchconnector, or minio) under storage:, or"
                  " ++workload.storage.storage_options.storage_library=s3dlio on the command line: shardbench's S3"
                  " engine does the I/O whichever is named, and records the name");
        return 1;
    }
    return 0;
}

/* One engine option into wl->storage.opts; -1 with err when full. */
static int
s_add_opt (sb_workload_t *wl, const char *key, const char *value, char *err, size_t err_size)
{
    if (sb_storage_opt_set (&wl->storage, wl->storage.engine, key, value) != 0) {
        snprintf (err, err_size, "storage.storage_library: too many storage engine options (at most %d)",
                  SB_STORAGE_OPTS_MAX);
        return -1;
    }
    return 0;
}

int
sb_storage_keys_engine_defaults (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    if (strcmp (wl->storage.engine, "s3") != 0 || !wl->storage_library[0])
        return 0;
    char v[32];
    if (s_add_opt (wl, "library", wl->storage_library, err, err_size) != 0)
        return -1;
    /* DLIO's s3dlio reader decides s3dlio's HEADs from the record length */
    snprintf (v, sizeof v, "%llu", (unsigned long long) wl->record_length_bytes);
    if (s_add_opt (wl, "record_length", v, err, err_size) != 0)
        return -1;
    /* the user's own part size and threshold (given in either spelling)
     * win over the library's */
    static const struct { const char *given, *as; } own[] = {
        { "multipart_part", "ckpt_part" }, { "multipart_threshold", "ckpt_threshold" },
    };
    for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
        for (size_t i = 0; i < wl->storage.nopts; i++)
            if (!strcmp (wl->storage.opts[i].engine, "s3") && !strcmp (wl->storage.opts[i].key, own[k].given)
                && s_add_opt (wl, own[k].as, wl->storage.opts[i].value, err, err_size) != 0)
                return -1;
    (void) cfg;
    return 0;
}
