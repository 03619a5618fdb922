/* catalog: list once, sort in SQLite, reuse by fingerprint. */
#include "catalog.h"
#include "catalog_store.h"
#include "engine.h"
#include "dataset.h"
#include "engine.h"
#include "format.h"
#include "log.h"
#include "util.h"

#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where listed objects go: straight into objects(idx) when the lister
 * yields keys in order (object stores, synthetic), else into a staging
 * table that SQLite sorts at the end (readdir order). */
typedef struct {
    sb_catalog_listing_t *listing;  /* the store's listing (the caller's) */
    int           sorted;
    int64_t       catalog_id;
    uint64_t      count;
    uint64_t      bytes;
    char         *last;         /* previous key, to check the order (sorted) */
    size_t        last_len, last_cap;
    const sb_dataset_t *naming; /* keys equal to the DLIO name of their position are stored NULL */
    uint64_t      compact;      /* how many were */
    /* Rows held back: while every object so far is the DLIO name of its
     * position with the first one's size, the catalog needs no row at all
     * (the reader derives each from the naming and bytes / count); the
     * first object that is not writes the held ones out (s_flush_held). */
    int           holding;
    uint64_t      held_size;
    char         *err;          /* where s_emit_row reports (rows read back from the store) */
    size_t        err_size;
} s_emit_t;

static int (*s_progress_fn) (void *);
static void *s_progress_ctx;
static double s_progress_next;
static uint64_t s_progress_count;   /* objects listed so far (atomic: listing threads) */
/* Nonzero once the progress function asked to stop (a signal): every
 * listing loop checks it and ends with SB_CATALOG_ERROR, its transaction
 * rolled back, so no partial catalog is ever reused. Sticky until the next
 * sb_catalog_set_progress. */
static int s_stop;


uint64_t
sb_catalog_progress_count (void)
{
    return __atomic_load_n (&s_progress_count, __ATOMIC_RELAXED);
}

void
sb_catalog_set_progress (int (*fn) (void *ctx), void *ctx)
{
    s_progress_fn = fn;
    s_progress_ctx = ctx;
    s_progress_next = 0;
    __atomic_store_n (&s_stop, 0, __ATOMIC_RELAXED);
    __atomic_store_n (&s_progress_count, 0, __ATOMIC_RELAXED);
}

static int
s_progress (void)
{
    if (!s_progress_fn || __atomic_load_n (&s_stop, __ATOMIC_RELAXED))
        return __atomic_load_n (&s_stop, __ATOMIC_RELAXED);
    double now = sb_now ();
    if (now >= s_progress_next) {
        s_progress_next = now + 0.2;
        if (s_progress_fn (s_progress_ctx) != 0)
            __atomic_store_n (&s_stop, 1, __ATOMIC_RELAXED);
    }
    return __atomic_load_n (&s_stop, __ATOMIC_RELAXED);
}

/* SQLite's progress handler during the long statements of a listing (the
 * sort of the staged keys): nonzero interrupts the statement. */
static int
s_sqlite_progress (void *unused)
{
    (void) unused;
    return s_progress ();
}

static int
s_stopped (char *err, size_t err_size)
{
    snprintf (err, err_size, "listing interrupted");
    return -1;
}

/* Write the rows held back (objects 0 .. count-1: DLIO names, one size)
 * and store every row from now on. */
static int
s_flush_held (s_emit_t *e, char *err, size_t err_size)
{
    e->holding = 0;
    for (uint64_t j = 0; j < e->count; j++) {
        if ((j & 65535) == 65535 && s_progress ())
            return s_stopped (err, err_size);
        if (sb_catalog_listing_put_object (e->listing, j, NULL, 0, e->held_size, err, err_size) != 0)
            return -1;
    }
    return 0;
}

/* Store the next object of a sorted listing (its key NULL when compact),
 * or hold it back while every object is derivable. */
static int
s_put_sorted (s_emit_t *e, int compact, const char *key, size_t len, uint64_t size, char *err, size_t err_size)
{
    if (e->holding) {
        if (compact && (e->count == 0 || size == e->held_size)) {
            e->held_size = size;
            return 0;
        }
        if (s_flush_held (e, err, err_size) != 0)
            return -1;
    }
    return sb_catalog_listing_put_object (e->listing, e->count, compact ? NULL : key, len, size, err, err_size);
}

static int
s_emit (s_emit_t *e, const char *key, size_t len, uint64_t size, char *err, size_t err_size)
{
    /* DLIO's index files beside indexed_binary data
     * files are not samples (DLIO lists by the format's extension) */
    if (e->naming && sb_format_is_companion (e->naming->format, key, len))
        return 0;
    /* sizes are stored as SQLite's signed 64 bits: a larger one would come
     * back negative (engines bound theirs; S3 at 5 TiB) */
    if (size > (uint64_t) INT64_MAX) {
        snprintf (err, err_size, "object '%.*s' has size %llu, over the catalog's limit of %lld bytes", (int) len, key,
                  (unsigned long long) size, (long long) INT64_MAX);
        return -1;
    }
    if ((e->count & 1023) == 0) {
        __atomic_store_n (&s_progress_count, e->count, __ATOMIC_RELAXED);
        if (s_progress ())
            return s_stopped (err, err_size);
    }
    int rc;
    if (e->sorted) {
        size_t n = len < e->last_len ? len : e->last_len;
        int cmp = e->count ? memcmp (key, e->last, n) : 1;
        if (e->count && (cmp < 0 || (cmp == 0 && len <= e->last_len))) {
            snprintf (err, err_size, "listing out of order: '%.*s' after '%.*s'", (int) len, key, (int) e->last_len,
                      e->last);
            return -1;
        }
        if (len > e->last_cap) {
            char *grown = realloc (e->last, len * 2);
            if (!grown) {
                snprintf (err, err_size, "out of memory");
                return -1;
            }
            e->last = grown;
            e->last_cap = len * 2;
        }
        memcpy (e->last, key, len);
        e->last_len = len;
        char expect[512];
        int compact = e->naming && sb_dataset_key_sorted (e->naming, e->count, expect, sizeof expect) == 0
                      && strlen (expect) == len && memcmp (expect, key, len) == 0;
        e->compact += compact;
        rc = s_put_sorted (e, compact, key, len, size, err, err_size);
    }
    else
        rc = sb_catalog_listing_stage (e->listing, key, len, size, err, err_size);
    if (rc != 0)
        return -1;
    e->count++;
    e->bytes += size;
    return 0;
}

/* Append the next object of a listing that yields exactly the DLIO names
 * of e->naming in name order (synthetic): its key is stored NULL without
 * being built and compared. Only for sorted emitters with naming. */
static int
s_emit_named (s_emit_t *e, uint64_t size, char *err, size_t err_size)
{
    if ((e->count & 1023) == 0) {
        __atomic_store_n (&s_progress_count, e->count, __ATOMIC_RELAXED);
        if (s_progress ())
            return s_stopped (err, err_size);
    }
    if (s_put_sorted (e, 1, NULL, 0, size, err, err_size) != 0)
        return -1;
    e->count++;
    e->compact++;
    e->bytes += size;
    return 0;
}

/* The newest catalog of uri with this fingerprint. 1 found (info filled),
 * 0 none, -1 error. */
static int
s_lookup (sqlite3 *db, const char *uri, const char *fingerprint, sb_catalog_info_t *info, char *err, size_t err_size)
{
    int found = sb_catalog_store_lookup (db, uri, fingerprint, &info->id, &info->count, &info->bytes, err, err_size);
    if (found > 0)
        info->reused = 1;
    return found;
}

/* A lister streams (key relative to the prefix, size) rows into emit. */
typedef int (*s_lister_fn) (void *ctx, int base_fd, s_emit_t *emit, char *err, size_t err_size);

/* A row read back from the store (a staged listing in key order, a
 * partition of a parallel listing) through the emitter ctx, so keys are
 * compacted and the order checked the same way. */
static int
s_emit_row (void *ctx, const char *key, size_t len, uint64_t size)
{
    s_emit_t *out = ctx;
    return s_emit (out, key, len, size, out->err, out->err_size);
}

/* One transaction: a new catalogs row, its objects either appended in order
 * (sorted listers) or staged and sorted by SQLite. */
static sb_catalog_status_t
s_list_into (sqlite3 *db, const char *uri, const char *prefix, const char *fingerprint, s_lister_fn lister,
             void *ctx, int base_fd, int sorted, const sb_dataset_t *naming, sb_catalog_info_t *info, char *err,
             size_t err_size)
{
    uint64_t t0 = sb_mono_ns ();
    s_emit_t emit = { .sorted = sorted, .naming = naming, .holding = naming != NULL, .err = err, .err_size = err_size };
    /* a signal also stops SQLite's own long steps (sorting the staged keys) */
    emit.listing = sb_catalog_listing_begin (db, uri, prefix, fingerprint, !sorted, s_sqlite_progress, NULL,
                                             &emit.catalog_id, err, err_size);
    if (!emit.listing)
        goto rollback;
    info->id = emit.catalog_id;
    int rc = lister (ctx, base_fd, &emit, err, err_size);
    free (emit.last);
    if (rc != 0)
        goto rollback;
    int rowless = emit.holding;
    if (!sorted) {
        s_emit_t out = { .listing = emit.listing, .sorted = 1, .naming = naming, .catalog_id = info->id,
                         .holding = naming != NULL, .err = err, .err_size = err_size };
        rc = sb_catalog_listing_each_sorted (emit.listing, s_emit_row, &out, err, err_size);
        free (out.last);
        if (rc != 0)
            goto rollback;
        emit.compact = out.compact;
        rowless = out.holding;
    }
    info->count = emit.count;
    info->bytes = emit.bytes;
    info->reused = 0;
    info->rowless = rowless && emit.count > 0;
    info->list_s = (double) (sb_mono_ns () - t0) / 1e9;
    char naming_text[256];
    if (emit.compact) {
        /* the split only when it is not train/ (the text older catalogs have) */
        const char *split = sb_dataset_split (naming);
        snprintf (naming_text, sizeof naming_text, "dlio %s %s %llu %llu%s%s", naming->prefix, naming->format,
                  (unsigned long long) naming->files, (unsigned long long) naming->subfolders,
                  strcmp (split, "train") == 0 ? "" : " ", strcmp (split, "train") == 0 ? "" : split);
    }
    if (sb_catalog_listing_record (emit.listing, info->list_s, emit.count, emit.bytes,
                                   emit.compact ? naming_text : NULL, err, err_size) != 0)
        goto rollback;
    if (s_progress ()) {     /* not committed: a stopped listing leaves no catalog */
        s_stopped (err, err_size);
        goto rollback;
    }
    if (sb_catalog_listing_commit (&emit.listing, err, err_size) != 0)
        goto rollback;
    return SB_CATALOG_OK;
rollback:
    if (__atomic_load_n (&s_stop, __ATOMIC_RELAXED))
        s_stopped (err, err_size);
    sb_catalog_listing_abort (&emit.listing);
    return SB_CATALOG_ERROR;
}

/* A folder engine's listing of one split (sb_storage_list, keys relative
 * to the split), into the catalog as keys relative to the data folder
 * ("train/..."). */
typedef struct {
    sb_storage_t *client;
    const char   *split;
    s_emit_t     *emit;
    int           failed;   /* the catalog refused a key: err is set */
    char         *err;
    size_t        err_size;
} s_folder_list_t;

static int
s_folder_on_key (void *arg, const char *key, size_t key_len, uint64_t size)
{
    s_folder_list_t *l = arg;
    char path[PATH_MAX];
    if (sb_strf (path, sizeof path, "%s/%.*s", l->split, (int) key_len, key) != 0) {
        snprintf (l->err, l->err_size, "path too long under '%s'", l->split);
        l->failed = 1;
        return 1;
    }
    if (s_emit (l->emit, path, strlen (path), size, l->err, l->err_size) != 0) {
        l->failed = 1;
        return 1;
    }
    return 0;
}

static int
s_folder_lister (void *ctx, int base_fd, s_emit_t *emit, char *err, size_t err_size)
{
    s_folder_list_t *l = ctx;
    (void) base_fd;
    l->emit = emit;
    char prefix[64];
    snprintf (prefix, sizeof prefix, "%s/", l->split);
    sb_storage_error_t *e = malloc (sizeof *e);
    if (!e) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    /* 1: nothing under it (the fingerprint found the folder: an empty split) */
    int rc = sb_storage_list (l->client, prefix, NULL, NULL, s_folder_on_key, l, e);
    if (l->failed || rc < 0) {
        if (!l->failed)
            snprintf (err, err_size, "%s", e->text);
        free (e);
        return -1;
    }
    free (e);
    return 0;
}

/* The folder a split lists: "train" or "valid" (anything else is a bug of
 * the caller, refused). */
static int
s_split_ok (const char *split, char *err, size_t err_size)
{
    if (split && (strcmp (split, "train") == 0 || strcmp (split, "valid") == 0))
        return 0;
    snprintf (err, err_size, "catalog: no such split '%s' (train or valid)", split ? split : "(null)");
    return -1;
}

sb_catalog_status_t
sb_catalog_ensure (sqlite3 *db, const char *data_folder, const sb_dataset_t *naming, int relist,
                   sb_catalog_info_t *info, char *err, size_t err_size)
{
    return sb_catalog_ensure_split (db, data_folder, "train", naming, relist, info, err, err_size);
}

sb_catalog_status_t
sb_catalog_ensure_split (sqlite3 *db, const char *data_folder, const char *split, const sb_dataset_t *naming,
                         int relist, sb_catalog_info_t *info, char *err, size_t err_size)
{
    /* a plain folder: the local file system's own engine */
    sb_storage_cfg_t storage;
    sb_storage_cfg_local (&storage);
    return sb_catalog_ensure_folder (db, &storage, data_folder, split, naming, relist, info, err, err_size);
}

sb_catalog_status_t
sb_catalog_ensure_folder (sqlite3 *db, const sb_storage_cfg_t *storage, const char *data_folder, const char *split,
                          const sb_dataset_t *naming, int relist, sb_catalog_info_t *info, char *err, size_t err_size)
{
    memset (info, 0, sizeof *info);
    if (s_split_ok (split, err, err_size) != 0)
        return SB_CATALOG_ERROR;
    if (!(sb_storage_caps (storage) & SB_ENGINE_FOLDER)) {
        snprintf (err, err_size, "catalog: storage engine '%s' does not keep a folder tree", storage->engine);
        return SB_CATALOG_ERROR;
    }
    char root[PATH_MAX];
    if (!realpath (data_folder, root)) {
        if (errno == ENOENT)
            return SB_CATALOG_MISSING;
        snprintf (err, err_size, "data folder '%s': %s", data_folder, strerror (errno));
        return SB_CATALOG_ERROR;
    }
    snprintf (info->prefix, sizeof info->prefix, "%s/", root);
    char uri[PATH_MAX + 16];
    snprintf (uri, sizeof uri, "file://%s/%s", root, split);

    sb_storage_error_t *e = malloc (sizeof *e);
    if (!e) {
        snprintf (err, err_size, "out of memory");
        return SB_CATALOG_ERROR;
    }
    sb_storage_open_t how = { .root = info->prefix, .depth = 1, .buffer_bytes = 4096 };
    sb_storage_t *client = sb_storage_open (storage, &how, e);
    if (!client) {
        snprintf (err, err_size, "data folder '%s': %s", root, e->text);
        free (e);
        return SB_CATALOG_ERROR;
    }
    /* the fingerprint: identity and mtime of every folder of the split */
    char prefix[64], fingerprint[64];
    snprintf (prefix, sizeof prefix, "%s/", split);
    sb_catalog_status_t status = SB_CATALOG_ERROR;
    if (sb_storage_fingerprint (client, prefix, fingerprint, sizeof fingerprint, e) != 0) {
        if (e->missing)
            status = SB_CATALOG_MISSING;
        else
            snprintf (err, err_size, "%s", e->text);
        free (e);
        sb_storage_close (&client);
        return status;
    }
    free (e);
    int found = relist ? 0 : s_lookup (db, uri, fingerprint, info, err, err_size);
    if (found > 0)
        status = SB_CATALOG_OK;
    else if (found == 0) {
        s_folder_list_t l = { .client = client, .split = split, .err = err, .err_size = err_size };
        status = s_list_into (db, uri, info->prefix, fingerprint, s_folder_lister, &l, -1, 0, naming, info, err,
                              err_size);
    }
    sb_storage_close (&client);
    return status;
}

/* ---- object stores (an engine with SB_ENGINE_LIST_ORDERED) ---- */

typedef struct {
    s_emit_t   *emit;
    const char *head;
    int         failed;
    char       *err;
    size_t      err_size;
} s_objects_list_t;

/* The catalog key of a listed object, or NULL for what a dataset never
 * holds: hidden objects (in-progress uploads) and folder markers. */
static const char *
s_listed_key (const char *key)
{
    const char *base = strrchr (key, '/') ? strrchr (key, '/') + 1 : key;
    return base[0] == '.' || key[strlen (key) - 1] == '/' ? NULL : key;
}

/* A listed key (relative to the listed prefix, which is the catalog's
 * prefix followed by head, "train/") as the catalog holds it, relative to
 * the catalog's prefix, into buf; NULL for what a dataset never holds
 * (s_listed_key) or a key too long. */
static const char *
s_catalog_key (const char *head, const char *key, size_t key_len, char *buf, size_t size)
{
    if (sb_strf (buf, size, "%s%.*s", head, (int) key_len, key) != 0)
        return NULL;
    return s_listed_key (buf);
}

static int
s_objects_on_key (void *arg, const char *key, size_t key_len, uint64_t size)
{
    s_objects_list_t *l = arg;
    char buf[1400];
    const char *rel = s_catalog_key (l->head, key, key_len, buf, sizeof buf);
    if (!rel)
        return 0;
    if (s_emit (l->emit, rel, strlen (rel), size, l->err, l->err_size) != 0) {
        l->failed = 1;
        return 1;
    }
    return 0;
}

/* Parallel listing: P streams over contiguous key ranges whose boundaries
 * come from the naming scheme (every N/P-th DLIO name in name order). Each
 * stream has its own storage client on its own thread and writes its keys, in
 * order, into its own temporary SQLite file; the partitions are then
 * appended to the catalog one after the other. Ranges are contiguous and
 * disjoint whatever the keys are, so the result is the single-stream
 * listing; the naming scheme only decides how evenly the work is spread.
 * No process holds the key list in memory. */
typedef struct {
    const sb_storage_cfg_t *cfg;
    const char *list_prefix;
    const char *head;
    char        start_after[1200];  /* relative to list_prefix; "" from the start */
    char        end_at[1200];       /* relative to list_prefix; "" to the end */
    sb_catalog_part_t *part;    /* the stream's keys (a temporary database; closed by the coordinator) */
    uint64_t    count;
    int         rc;
    char        err[2048];
    int         done;           /* set by the thread when it ends */
} s_part_t;

static int
s_part_on_key (void *arg, const char *key, size_t key_len, uint64_t size)
{
    s_part_t *p = arg;
    if (__atomic_load_n (&s_stop, __ATOMIC_RELAXED)) {
        s_stopped (p->err, sizeof p->err);
        return 1;
    }
    char buf[1400];
    const char *rel = s_catalog_key (p->head, key, key_len, buf, sizeof buf);
    if (!rel)
        return 0;
    if (sb_catalog_part_add (p->part, rel, size, p->err, sizeof p->err) != 0)
        return 1;
    p->count++;
    return 0;
}

static void *
s_part_thread (void *arg)
{
    s_part_t *p = arg;
    p->rc = -1;
    /* every endpoint, whatever the ranks' distribution: the coordinator is no rank */
    sb_storage_cfg_t *cfg = malloc (sizeof *cfg);
    sb_storage_error_t e;
    sb_storage_open_t how = { .root = "", .depth = 2 };
    sb_storage_t *client = NULL;
    if (cfg) {
        *cfg = *p->cfg;
        if (cfg->lb == SB_LB_PER_RANK)
            cfg->lb = SB_LB_ROUND_ROBIN;
        client = sb_storage_open (cfg, &how, &e);
        free (cfg);
    }
    else
        sb_storage_fail (&e, p->cfg->engine, "open", "", ENOMEM, "out of memory");
    if (!client) {
        snprintf (p->err, sizeof p->err, "%s", e.text);
        __atomic_store_n (&p->done, 1, __ATOMIC_RELEASE);
        return NULL;
    }
    if (!(p->part = sb_catalog_part_open (p->err, sizeof p->err))) {
        sb_storage_close (&client);
        __atomic_store_n (&p->done, 1, __ATOMIC_RELEASE);
        return NULL;
    }
    p->err[0] = '\0';
    /* 1: nothing in this range (the callbacks set p->err when they stop it) */
    int rc = sb_storage_list (client, p->list_prefix, p->start_after[0] ? p->start_after : NULL,
                              p->end_at[0] ? p->end_at : NULL, s_part_on_key, p, &e);
    if (rc < 0 && !p->err[0])
        snprintf (p->err, sizeof p->err, "listing %s://%s after '%s%s': %s", p->cfg->engine, p->list_prefix,
                  p->list_prefix, p->start_after, e.text);
    if (rc >= 0 && !p->err[0] && sb_catalog_part_commit (p->part, p->err, sizeof p->err) == 0)
        p->rc = 0;
    /* the partition stays open: its temporary database lives as long as it
     * (the coordinator reads it, then closes it) */
    sb_storage_close (&client);
    __atomic_store_n (&p->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

typedef struct {
    sb_storage_t *client;
    const sb_storage_cfg_t *cfg;
    const sb_dataset_t *ds;         /* naming scheme, for the boundaries; NULL: one stream */
    const char *list_prefix;        /* the catalog's prefix followed by head */
    const char *head;               /* "train/": the split's folder */
} s_objects_ctx_t;

static int
s_objects_lister_parallel (s_objects_ctx_t *c, s_emit_t *emit, char *err, size_t err_size)
{
    size_t n = (size_t) c->cfg->list_parallelism;
    if (n > c->ds->files)
        n = (size_t) c->ds->files;
    s_part_t *parts = calloc (n, sizeof *parts);
    pthread_t *threads = calloc (n, sizeof *threads);
    size_t started = 0;
    int rc = parts && threads ? 0 : -1;
    if (rc)
        snprintf (err, err_size, "out of memory");
    for (size_t j = 0; rc == 0 && j < n; j++) {
        s_part_t *p = &parts[j];
        p->cfg = c->cfg;
        p->list_prefix = c->list_prefix;
        p->head = c->head;
        size_t head_len = strlen (c->head);
        char rel[1100];
        if (j > 0) {
            if (sb_dataset_key_sorted (c->ds, (c->ds->files * j) / n - 1, rel, sizeof rel) != 0) {
                snprintf (err, err_size, "listing boundary %zu: name too long", j);
                rc = -1;
                break;
            }
            if (strncmp (rel, c->head, head_len) != 0) {
                snprintf (err, err_size, "listing boundary %zu: '%s' is not under %s", j, rel, c->head);
                rc = -1;
                break;
            }
            snprintf (p->start_after, sizeof p->start_after, "%s", rel + head_len);
        }
        if (j + 1 < n) {
            if (sb_dataset_key_sorted (c->ds, (c->ds->files * (j + 1)) / n - 1, rel, sizeof rel) != 0) {
                snprintf (err, err_size, "listing boundary %zu: name too long", j + 1);
                rc = -1;
                break;
            }
            if (strncmp (rel, c->head, head_len) != 0) {
                snprintf (err, err_size, "listing boundary %zu: '%s' is not under %s", j + 1, rel, c->head);
                rc = -1;
                break;
            }
            snprintf (p->end_at, sizeof p->end_at, "%s", rel + head_len);
        }
        if (pthread_create (&threads[j], NULL, s_part_thread, p) != 0) {
            snprintf (err, err_size, "cannot start a listing thread");
            rc = -1;
            break;
        }
        started++;
    }
    /* wait for the streams, keeping the coordinator's heartbeats going; a
     * stop request reaches the streams through s_stop */
    for (size_t j = 0; j < started; j++) {
        while (!__atomic_load_n (&parts[j].done, __ATOMIC_ACQUIRE)) {
            s_progress ();
            sb_sleep_s (0.02);
        }
        pthread_join (threads[j], NULL);
    }
    if (rc == 0 && s_progress ())
        rc = s_stopped (err, err_size);
    for (size_t j = 0; rc == 0 && j < started; j++)
        if (parts[j].rc != 0) {
            snprintf (err, err_size, "%s", parts[j].err);
            rc = -1;
        }
    /* append the partitions in order: emit checks the order across them */
    for (size_t j = 0; rc == 0 && j < started; j++)
        rc = sb_catalog_part_each (parts[j].part, s_emit_row, emit, err, err_size);
    for (size_t j = 0; j < started; j++)
        sb_catalog_part_close (&parts[j].part);
    free (parts);
    free (threads);
    return rc;
}

static int
s_objects_lister (void *arg, int base_fd, s_emit_t *emit, char *err, size_t err_size)
{
    s_objects_ctx_t *c = arg;
    if (c->ds && c->cfg->list_parallelism > 1 && c->ds->files > 1)
        return s_objects_lister_parallel (c, emit, err, err_size);
    s_objects_list_t l = { .emit = emit, .head = c->head, .err = err, .err_size = err_size };
    sb_storage_error_t e;
    if (sb_storage_list (c->client, c->list_prefix, NULL, NULL, s_objects_on_key, &l, &e) < 0) {
        if (!l.failed)
            snprintf (err, err_size, "listing %s://%s: %s", c->cfg->engine, c->list_prefix, e.text);
        return -1;
    }
    return l.failed ? -1 : 0;
}

sb_catalog_status_t
sb_catalog_ensure_objects (sqlite3 *db, sb_storage_t *client, const sb_storage_cfg_t *cfg, const sb_dataset_t *ds,
                           const char *key_prefix, int relist, sb_catalog_info_t *info, char *err, size_t err_size)
{
    return sb_catalog_ensure_objects_split (db, client, cfg, "train", ds, key_prefix, relist, info, err, err_size);
}

sb_catalog_status_t
sb_catalog_ensure_objects_split (sqlite3 *db, sb_storage_t *client, const sb_storage_cfg_t *cfg, const char *split,
                            const sb_dataset_t *ds, const char *key_prefix, int relist, sb_catalog_info_t *info,
                            char *err, size_t err_size)
{
    memset (info, 0, sizeof *info);
    if (s_split_ok (split, err, err_size) != 0)
        return SB_CATALOG_ERROR;
    if (sb_strf (info->prefix, sizeof info->prefix, "%s", key_prefix) != 0) {
        snprintf (err, err_size, "key prefix too long");
        return SB_CATALOG_ERROR;
    }
    char uri[1400], list_prefix[1200], head[64];
    snprintf (uri, sizeof uri, "%s://%s/%s%s", sb_storage_scheme (cfg), cfg->store, key_prefix, split);
    snprintf (list_prefix, sizeof list_prefix, "%s%s/", key_prefix, split);
    snprintf (head, sizeof head, "%s/", split);
    /* An object store has no cheap change marker: a catalog is reused until
     * --relist (or a datagen, which relists). */
    int found = relist ? 0 : s_lookup (db, uri, cfg->engine, info, err, err_size);
    if (found > 0 && info->count > 0)
        return SB_CATALOG_OK;   /* an empty listing is never reused: the objects may have come since */
    if (found < 0)
        return SB_CATALOG_ERROR;
    s_objects_ctx_t ctx = { .client = client, .cfg = cfg, .ds = ds, .list_prefix = list_prefix, .head = head };
    /* ListObjectsV2 returns keys in UTF-8 binary order, SQLite's order too */
    sb_catalog_status_t st = s_list_into (db, uri, info->prefix, cfg->engine, s_objects_lister, &ctx, -1, 1, ds, info, err,
                                          err_size);
    if (st == SB_CATALOG_OK && info->count == 0)
        return SB_CATALOG_MISSING;
    return st;
}

/* ---- synthetic ---- */

static int
s_synthetic_lister (void *ctx, int base_fd, s_emit_t *emit, char *err, size_t err_size)
{
    const sb_dataset_t *ds = ctx;
    /* DLIO names in name order (zero-padded indices sort numerically; with
     * subfolders, s = i mod n, folder by folder): every key is the name of
     * its position, so none is built (test_catalog checks the mapping) */
    char key[512];
    if (ds->files && sb_dataset_key (ds, ds->files - 1, key, sizeof key) != 0) {
        snprintf (err, err_size, "synthetic objects: names too long");
        return -1;
    }
    uint64_t folders = ds->subfolders > 1 ? ds->subfolders : 1;
    for (uint64_t f = 0; f < folders; f++)
        for (uint64_t i = f; i < ds->files; i += folders)
            if (s_emit_named (emit, sb_dataset_object_size (ds, i), err, err_size) != 0)
                return -1;
    return 0;
}

sb_catalog_status_t
sb_catalog_ensure_synthetic (sqlite3 *db, const sb_dataset_t *ds, int relist, sb_catalog_info_t *info, char *err,
                             size_t err_size)
{
    memset (info, 0, sizeof *info);
    char uri[512];
    /* everything that decides the names and sizes is in the URI */
    snprintf (uri, sizeof uri, "synthetic://%s_of_%llu.%s/sub%llu/spf%llu/rl%llu+-%llu/seed%llu/train", ds->prefix,
              (unsigned long long) ds->files, ds->format, (unsigned long long) ds->subfolders,
              (unsigned long long) ds->samples_per_file, (unsigned long long) ds->record_length,
              (unsigned long long) ds->record_stdev, (unsigned long long) ds->seed);
    int found = relist ? 0 : s_lookup (db, uri, "synthetic", info, err, err_size);
    if (found > 0)
        return SB_CATALOG_OK;
    if (found < 0)
        return SB_CATALOG_ERROR;
    return s_list_into (db, uri, "", "synthetic", s_synthetic_lister, (void *) ds, -1, 1, ds, info, err, err_size);
}

struct sb_catalog_reader {
    sb_catalog_objects_t *get;  /* the store's reads of stored keys; NULL: naming mode */
    int64_t       catalog_id;
    sb_dataset_t  ds;           /* naming mode */
    char          prefix[64], format[32], split[16];
    int           exact_sizes;
    int           name_order;   /* naming mode: positions in name order (new_derived), else index order */
    int           has_naming;   /* database mode: NULL keys follow ds */
    int           rowless;      /* database mode: no row stored: every key ds's, every size uniform_size */
    /* database mode: the catalog's sizes and which keys are stored, held in
     * memory so that serving a sample costs no SQLite seek (owned) */
    uint64_t      count;
    uint64_t      uniform_size; /* every object has this size: no array */
    uint32_t     *size32;       /* sizes when all are below 4 GiB, else ... */
    uint64_t     *size64;
    uint8_t      *stored;       /* bit idx set: key is stored (not a DLIO name); NULL: none */
};

static void
s_reader_free_index (sb_catalog_reader_t *self)
{
    free (self->size32);
    free (self->size64);
    free (self->stored);
    self->size32 = NULL;
    self->size64 = NULL;
    self->stored = NULL;
}

/* The index pass's state: the next idx expected, the first size, whether
 * all sizes are that one. */
typedef struct {
    sb_catalog_reader_t *self;
    uint64_t expect, first_size;
    int      uniform;
    char    *err;
    size_t   err_size;
} s_index_pass_t;

static int
s_index_row (void *ctx, uint64_t idx, int stored, int64_t size)
{
    s_index_pass_t *x = ctx;
    sb_catalog_reader_t *self = x->self;
    char *err = x->err;
    size_t err_size = x->err_size;
    if ((x->expect & 65535) == 0 && s_progress ()) {
        snprintf (err, err_size, "loading the index of catalog %lld interrupted", (long long) self->catalog_id);
        return -1;
    }
    if (size < 0 && idx == x->expect && idx < self->count) {
        /* a size of 2^63 or more listed before listings were bounded, or a changed row */
        snprintf (err, err_size, "catalog %lld is damaged: object %llu has size %lld; list again with --relist",
                  (long long) self->catalog_id, (unsigned long long) idx, (long long) size);
        return -1;
    }
    if (idx != x->expect || idx >= self->count) {
        snprintf (err, err_size, "catalog %lld is damaged: object %llu found where %llu was expected (of %llu)",
                  (long long) self->catalog_id, (unsigned long long) idx, (unsigned long long) x->expect,
                  (unsigned long long) self->count);
        return -1;
    }
    x->expect++;
    if (idx == 0 && !(self->size32 = malloc (self->count * sizeof (uint32_t)))) {
        /* made at the first row: a catalog without rows needs none */
        snprintf (err, err_size, "out of memory for the index of %llu objects", (unsigned long long) self->count);
        return -1;
    }
    if (idx == 0)
        x->first_size = (uint64_t) size;
    else if ((uint64_t) size != x->first_size)
        x->uniform = 0;
    if (stored) {
        if (!self->stored && !(self->stored = calloc ((self->count + 7) / 8, 1))) {
            snprintf (err, err_size, "out of memory for the index");
            return -1;
        }
        self->stored[idx / 8] |= (uint8_t) (1u << (idx % 8));
    }
    if (self->size64)
        self->size64[idx] = (uint64_t) size;
    else if ((uint64_t) size < UINT32_MAX)
        self->size32[idx] = (uint32_t) size;
    else {      /* a 4 GiB object: widen */
        if (!(self->size64 = malloc (self->count * sizeof (uint64_t)))) {
            snprintf (err, err_size, "out of memory for the index");
            return -1;
        }
        for (uint64_t j = 0; j < idx; j++)
            self->size64[j] = self->size32[j];
        self->size64[idx] = (uint64_t) size;
        free (self->size32);
        self->size32 = NULL;
    }
    return 0;
}

/* One sequential pass over the catalog's rows into the in-memory index:
 * 4 bytes per object (8 if one is 4 GiB or more, none if all sizes are
 * equal) and one bit per object when some keys are stored. The page cache
 * is emptied first and kept small during the pass, since the index replaces
 * it. */
static int
s_reader_load_index (sb_catalog_reader_t *self, sqlite3 *db, char *err, size_t err_size)
{
    sb_catalog_store_release_cache (db);
    if (sb_catalog_store_count (db, self->catalog_id, &self->count, err, err_size) != 0)
        return -1;
    if (self->count == 0 || self->count >= (1ull << 40)) {
        snprintf (err, err_size, "catalog %lld has %llu objects", (long long) self->catalog_id,
                  (unsigned long long) self->count);
        return -1;
    }
    s_index_pass_t x = { .self = self, .uniform = 1, .err = err, .err_size = err_size };
    int rc = sb_catalog_store_scan (db, self->catalog_id, s_index_row, &x, err, err_size);
    uint64_t bytes = 0;
    if (rc == 0 && x.expect == 0 && self->has_naming && self->count <= self->ds.files
        && sb_catalog_store_bytes (db, self->catalog_id, &bytes, err, err_size) == 0 && bytes % self->count == 0) {
        /* no row: every object is the DLIO name of its position, every
         * size the same (s_put_sorted held them all back) */
        self->rowless = 1;
        self->uniform_size = bytes / self->count;
        return 0;
    }
    if (rc != 0 || x.expect != self->count) {
        if (rc == 0)
            snprintf (err, err_size, "catalog %lld is damaged: %llu of its %llu objects found",
                      (long long) self->catalog_id, (unsigned long long) x.expect, (unsigned long long) self->count);
        s_reader_free_index (self);
        return -1;
    }
    if (x.uniform) {
        self->uniform_size = x.first_size;
        free (self->size32);
        free (self->size64);
        self->size32 = NULL;
        self->size64 = NULL;
    }
    sb_catalog_store_release_cache (db);
    return 0;
}

sb_catalog_reader_t *
sb_catalog_reader_new_naming (const sb_dataset_t *ds, int exact_sizes, char *err, size_t err_size)
{
    sb_catalog_reader_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->ds = *ds;
    snprintf (self->prefix, sizeof self->prefix, "%s", ds->prefix);
    snprintf (self->format, sizeof self->format, "%s", ds->format);
    snprintf (self->split, sizeof self->split, "%s", sb_dataset_split (ds));
    self->ds.prefix = self->prefix;
    self->ds.format = self->format;
    self->ds.split = self->split;
    self->exact_sizes = exact_sizes;
    return self;
}

sb_catalog_reader_t *
sb_catalog_reader_new_derived (const sb_dataset_t *ds, int exact_sizes, char *err, size_t err_size)
{
    sb_catalog_reader_t *self = sb_catalog_reader_new_naming (ds, exact_sizes, err, err_size);
    if (self)
        self->name_order = 1;
    return self;
}

int
sb_catalog_reader_is_derived (const sb_catalog_reader_t *self)
{
    return self->get == NULL;
}

int
sb_catalog_reader_exact_sizes (const sb_catalog_reader_t *self)
{
    return self->get == NULL && self->exact_sizes;
}

sb_catalog_reader_t *
sb_catalog_reader_new (sqlite3 *db, int64_t catalog_id, char *err, size_t err_size)
{
    sb_catalog_reader_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->catalog_id = catalog_id;
    /* compact keys: the naming that rebuilds a NULL key */
    char *naming = sb_catalog_store_naming (db, catalog_id);
    if (naming) {
        unsigned long long files = 0, subfolders = 0;
        int fields = sscanf (naming, "dlio %63s %31s %llu %llu %15s", self->prefix, self->format, &files, &subfolders,
                             self->split);
        if (fields < 4 || (fields == 5 && strcmp (self->split, "valid") != 0)) {
            snprintf (err, err_size, "catalog %lld: unreadable naming '%s'", (long long) catalog_id, naming);
            free (naming);
            free (self);
            return NULL;
        }
        self->ds.prefix = self->prefix;
        self->ds.format = self->format;
        self->ds.files = files;
        self->ds.subfolders = subfolders;
        self->ds.split = fields == 5 ? self->split : "train";
        self->has_naming = 1;
    }
    free (naming);
    if (!(self->get = sb_catalog_objects_open (db, catalog_id, err, err_size))) {
        free (self);
        return NULL;
    }
    if (s_reader_load_index (self, db, err, err_size) != 0) {
        sb_catalog_objects_close (&self->get);
        free (self);
        return NULL;
    }
    return self;
}

void
sb_catalog_reader_destroy (sb_catalog_reader_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_catalog_objects_close (&(*self_p)->get);
    s_reader_free_index (*self_p);
    free (*self_p);
    *self_p = NULL;
}

int
sb_catalog_reader_locate (sb_catalog_reader_t *self, uint64_t idx, uint64_t *size, uint64_t *dlio_index)
{
    if (!self->get) {
        if (idx >= self->ds.files)
            return -1;
        uint64_t i = self->name_order ? sb_dataset_index_at (&self->ds, idx) : idx;
        *size = self->exact_sizes ? sb_dataset_object_size (&self->ds, i) : SB_CATALOG_SIZE_UNKNOWN;
        *dlio_index = i;
        return 1;
    }
    if (idx >= self->count)
        return -1;
    *size = self->size32 ? self->size32[idx] : self->size64 ? self->size64[idx] : self->uniform_size;
    if ((self->stored && (self->stored[idx / 8] >> (idx % 8) & 1)) || !self->has_naming || idx >= self->ds.files)
        return 0;   /* stored key (or a naming that cannot hold idx): sb_catalog_reader_get has it */
    *dlio_index = sb_dataset_index_at (&self->ds, idx);
    return 1;
}

const sb_dataset_t *
sb_catalog_reader_naming (const sb_catalog_reader_t *self)
{
    return self->get && !self->has_naming ? NULL : &self->ds;
}

int
sb_catalog_reader_all_named (const sb_catalog_reader_t *self)
{
    if (!self->get)
        return 1;
    return self->has_naming && !self->stored && self->count == self->ds.files;
}

int
sb_catalog_reader_get (sb_catalog_reader_t *self, uint64_t idx, char *key_buf, size_t key_size, uint64_t *size)
{
    if (!self->get) {
        if (idx >= self->ds.files)
            return -1;
        uint64_t i = self->name_order ? sb_dataset_index_at (&self->ds, idx) : idx;
        if (sb_dataset_key (&self->ds, i, key_buf, key_size) != 0)
            return -1;
        *size = self->exact_sizes ? sb_dataset_object_size (&self->ds, i) : SB_CATALOG_SIZE_UNKNOWN;
        return 0;
    }
    int named = 0;
    uint64_t stored_size = 0;
    if (self->rowless) {
        if (idx >= self->count || sb_dataset_key_sorted (&self->ds, idx, key_buf, key_size) != 0)
            return -1;
        *size = self->uniform_size;
        return 0;
    }
    if (sb_catalog_objects_get (self->get, idx, key_buf, key_size, &named, &stored_size) != 0)
        return -1;
    if (named && (!self->has_naming || sb_dataset_key_sorted (&self->ds, idx, key_buf, key_size) != 0))
        return -1;
    *size = stored_size;
    return 0;
}
