/* storage_setup: the storage a session works on, before and around its
 * phases: the dataset's naming, the S3 key prefix and the coordinator's own
 * endpoint preflight, the checkpoint target, the local data folder (lock,
 * probe, release), the dataset marker (local file or S3 object) and its
 * check, existence spot checks, and listing into the catalog. */
#include "session_internal.h"
#include "catalog.h"
#include "ckpt_plan.h"
#include "ckpt_target.h"
#include "datafolder.h"
#include "dataset.h"
#include "engine.h"
#include "format.h"
#include "log.h"
#include "sample_range.h"
#include "util.h"
#include "progress.h"

#include <ctype.h>
#include <czmq.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The dataset's naming and sizes, as the workload and seed define them. */
void
sess_dataset (sess_t *self, sb_dataset_t *ds)
{
    const sb_workload_t *wl = self->o->wl;
    *ds = (sb_dataset_t) {
        .prefix = wl->file_prefix, .format = wl->format, .files = wl->num_files_train,
        .subfolders = wl->num_subfolders_train, .samples_per_file = wl->num_samples_per_file,
        .record_length = wl->record_length_bytes, .record_stdev = wl->record_length_bytes_stdev,
        .seed = self->o->seed, .element_type = wl->record_element_type, .record_dims = wl->record_dims,
        .record_ndims = wl->record_ndims,
        /* the parquet layout: the generator's object sizes depend on it */
        .parquet_columns = wl->parquet_columns, .parquet_row_group = wl->parquet_row_group,
        .parquet_compression = wl->compression,
    };
}

/* The dataset as its marker records it (sess_dataset: the naming and the
 * parquet layout). */
void
sess_marker_dataset (sess_t *self, sb_dataset_t *ds)
{
    sess_dataset (self, ds);
}

/* Does object i exist? 1 yes, 0 no (why in err), -1 cannot tell (err). */
int
sess_object_exists (sess_t *self, const sb_dataset_t *ds, uint64_t i, char *key, size_t key_size, char *err,
                    size_t err_size)
{
    if (sb_dataset_key (ds, i, key, key_size) != 0) {
        snprintf (err, err_size, "object %llu: name too long", (unsigned long long) i);
        return -1;
    }
    char full[PATH_MAX + 1100];
    snprintf (full, sizeof full, "%s%s", self->catalog_info.prefix, key);
    if (sb_storage_caps (&self->o->wl->storage) & SB_ENGINE_NO_IO)
        return 1;
    /* the session's object store client, else one of the folder's engine
     * for this check alone (it holds no more than a small buffer) */
    sb_storage_t *client = self->objects;
    sb_storage_error_t e;
    if (!client) {
        sb_storage_open_t how = { .root = "", .rank = 0, .depth = 1, .buffer_bytes = 4096 };
        if (!(client = sb_storage_open (&self->o->wl->storage, &how, &e))) {
            snprintf (err, err_size, "%s", e.text);
            return -1;
        }
    }
    uint64_t size = 0;
    int rc = sb_storage_stat (client, full, &size, &e) == 0 ? 1 : e.missing ? 0 : -1;
    if (rc != 1)
        snprintf (err, err_size, "%s", e.text);
    if (client != self->objects)
        sb_storage_close (&client);
    return rc;
}

/* skip_listing: HEAD (or stat) every k-th object and the last one; fail
 * fast naming the first that is missing. Returns 0, or -1 with err. */
int
sess_spot_check (sess_t *self, char *err, size_t err_size)
{
    sb_dataset_t ds;
    sess_dataset (self, &ds);
    return sess_check_objects (self, &ds, "dataset.skip_listing", err, err_size);
}

/* Check that objects 0, k, 2k, ... and the last of ds exist (k:
 * dataset.listing_validation_interval); `what` names the check in
 * messages. Returns 0, or -1 with err. */
int
sess_check_objects (sess_t *self, const sb_dataset_t *ds_in, const char *what, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    sb_dataset_t ds = *ds_in;
    uint64_t k = wl->listing_validation_interval, checked = 0, n = ds.files;
    char key[PATH_MAX], why[2048];
    uint64_t t0 = sb_mono_ns ();
    if (sb_storage_caps (&wl->storage) & SB_ENGINE_NO_IO) {
        /* synthetic storage holds every object it names: n / k checks that
         * cannot fail would cost seconds at billions of objects */
        sb_info ("%s: synthetic storage: the %llu objects are not checked (nothing is stored)", what,
                 (unsigned long long) n);
        return 0;
    }
    for (uint64_t i = 0; i < n; i = (i + k < n || i == n - 1) ? i + k : n - 1) {
        if (sess_keep_alive (self)) {
            snprintf (err, err_size, "interrupted by %s while checking the objects of %s", sess_signal_name (), what);
            return -1;
        }
        int rc = sess_object_exists (self, &ds, i, key, sizeof key, why, sizeof why);
        checked++;
        if (rc != 1) {
            snprintf (err, err_size, "%s: %s '%s' (object %llu of %llu; every %llu-th object is checked): %s", what,
                      rc == 0 ? "missing object" : "cannot check object", key, (unsigned long long) i,
                      (unsigned long long) n, (unsigned long long) k, why);
            return -1;
        }
        if (i == n - 1)
            break;
    }
    sb_info ("%s: %llu of %llu objects checked (every %llu-th and the last) in %.3f s", what, (unsigned long long) checked,
             (unsigned long long) n, (unsigned long long) k, (double) (sb_mono_ns () - t0) / 1e9);
    return 0;
}

/* Ensure the catalog of a split (train/, or valid/ with eval): list, or
 * report the set missing (*missing = 1). */
static int
s_list_split (sess_t *self, int eval, int relist, int *missing, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    if (sb_resultdb_flush (self->o->db) != 0) {
        snprintf (err, err_size, "cannot commit to the result database: %s", sb_resultdb_errmsg (self->o->db));
        return -1;
    }
    sb_dataset_t ds;
    if (eval)
        sess_eval_dataset (self, &ds);
    else
        sess_dataset (self, &ds);
    const char *split = sb_dataset_split (&ds);
    sb_catalog_info_t *info = eval ? &self->eval_catalog_info : &self->catalog_info;
    sb_catalog_set_progress (sess_keep_alive, self);
    int own_progress = !self->progress;     /* listing before the session's status exists */
    if (own_progress) {
        self->live = sb_live_new (0, sess_silence_limit (wl));
        self->progress = self->live ? sb_progress_new ((sb_progress_mode_t) self->o->progress, stderr,
                                                       self->o->progress_interval_s, self->live) : NULL;
        if (!self->progress) {
            sb_live_destroy (&self->live);
            snprintf (err, err_size, "out of memory for the live status");
            return -1;
        }
    }
    sb_live_phase (self->live, "listing", 0, 0, 0, 0, 0, sb_now ());
    sb_progress_phase (self->progress, sb_now ());
    sb_catalog_status_t st = (sb_storage_caps (&wl->storage) & SB_ENGINE_NO_IO)
        ? sb_catalog_ensure_synthetic (sb_resultdb_handle (self->o->db), &ds, relist, info, err, err_size)
        : self->objects
        ? sb_catalog_ensure_objects_split (sb_resultdb_handle (self->o->db), self->objects, &wl->storage, split, &ds,
                                           self->key_prefix, relist, info, err, err_size)
        : sb_catalog_ensure_folder (sb_resultdb_handle (self->o->db), &wl->storage, wl->data_folder, split, &ds,
                                    relist, info, err, err_size);
    sb_catalog_set_progress (NULL, NULL);
    sb_progress_end_phase (self->progress, sb_now ());
    if (own_progress) {
        sb_progress_destroy (&self->progress);
        sb_live_destroy (&self->live);
    }
    *missing = st == SB_CATALOG_MISSING;
    if (st == SB_CATALOG_ERROR && zsys_interrupted) {
        char why[1024];
        snprintf (why, sizeof why, "%s", err);
        snprintf (err, err_size, "interrupted by %s while listing the %s (%s; no catalog was recorded)",
                  sess_signal_name (), eval ? "evaluation set" : "dataset", why);
    }
    if (st == SB_CATALOG_ERROR)
        return -1;
    if (st == SB_CATALOG_OK) {
        /* where, as a user would write it */
        char where[1400];
        if (self->objects)
            snprintf (where, sizeof where, "%s://%s/%s%s", sb_storage_scheme (&wl->storage), wl->storage.store, info->prefix, split);
        else if (sb_storage_caps (&wl->storage) & SB_ENGINE_NO_IO)
            snprintf (where, sizeof where, "%s (synthetic)", wl->data_folder);
        else
            snprintf (where, sizeof where, "%s%s", info->prefix, split);
        if (info->reused)
            sb_info ("catalog %lld reused: %llu objects, %.1f MiB under %s", (long long) info->id,
                     (unsigned long long) info->count, info->bytes / 1048576.0, where);
        else
            sb_info ("listed %s: %llu objects, %.1f MiB in %.3f s (catalog %lld%s)", where,
                     (unsigned long long) info->count, info->bytes / 1048576.0, info->list_s, (long long) info->id,
                     info->rowless ? ": DLIO's names of one size, no object row stored" : "");
        if (info->count == 0)
            *missing = 1;
    }
    return 0;
}

void
sess_derive (sess_t *self)
{
    const sb_workload_t *wl = self->o->wl;
    sb_dataset_t ds;
    sess_dataset (self, &ds);
    sb_catalog_info_t *info = &self->catalog_info;
    memset (info, 0, sizeof *info);
    info->count = ds.files;
    /* every object has the same size unless record_length_bytes_stdev
     * picks them; then their sum is not computed (that would be a pass over
     * every object) and the run's byte estimates use the nominal size */
    info->bytes = ds.record_stdev == 0 && ds.files ? sb_dataset_object_size (&ds, 0) * ds.files : 0;
    self->catalog_derived = 1;
    sb_info ("%s (synthetic): %llu objects derived (DLIO's names in name order, the generator's sizes%s): no listing,"
             " no catalog rows", wl->data_folder, (unsigned long long) info->count,
             info->bytes ? "" : ", drawn per object");
}

/* Ensure train/'s catalog (s_list_split). */
int
sess_list (sess_t *self, int relist, int *missing, char *err, size_t err_size)
{
    return s_list_split (self, 0, relist, missing, err, err_size);
}

/* valid/ listed into its own catalog (a run that evaluates, on real
 * storage, without skip_listing): 0 listed and whole (eval_listed set),
 * 1 missing or short (err says what), -1 error (err). */
int
sess_list_eval (sess_t *self, int relist, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    int missing = 0;
    self->eval_listed = 0;
    if (s_list_split (self, 1, relist, &missing, err, err_size) != 0)
        return -1;
    const char *where = self->objects ? self->key_prefix : self->catalog_info.prefix;
    if (missing) {
        snprintf (err, err_size, "evaluation set: no objects under %s%svalid/ (dataset.num_files_eval=%llu)",
                  self->objects ? "s3 prefix " : "", where, (unsigned long long) wl->num_files_eval);
        return 1;
    }
    if (self->eval_catalog_info.count < wl->num_files_eval) {
        snprintf (err, err_size, "evaluation set: %s%svalid/ holds %llu objects but the workload needs"
                  " dataset.num_files_eval=%llu", self->objects ? "s3 prefix " : "", where,
                  (unsigned long long) self->eval_catalog_info.count, (unsigned long long) wl->num_files_eval);
        return 1;
    }
    self->eval_listed = 1;
    return 0;
}

int
sess_prepare_folder (const char *folder, char *prefix, size_t size, char *err, size_t err_size)
{
    if (sb_mkdirs (folder, err, err_size) != 0)
        return -1;
    char real[PATH_MAX];
    if (!realpath (folder, real)) {
        snprintf (err, err_size, "data folder '%s': %s", folder, strerror (errno));
        return -1;
    }
    snprintf (prefix, size, "%s/", real);
    return 0;
}

/* The key prefix of a dataset in an object store: dataset.data_folder
 * without "./", a leading "/" or a "SCHEME://STORE/" head ("s3://STORE/",
 * as lib/storage/storage_keys.c writes it), ending with '/' (or empty). */
int
sess_key_prefix (const sb_workload_t *wl, char *out, size_t size, char *err, size_t err_size)
{
    const char *p = wl->data_folder;
    char head[300];
    snprintf (head, sizeof head, "%s://%s/", sb_storage_scheme (&wl->storage), wl->storage.store);
    if (strncmp (p, head, strlen (head)) == 0)
        p += strlen (head);
    else if (strstr (p, "://")) {
        snprintf (err, err_size, "dataset.data_folder '%s' names another store than storage.storage_root '%s'",
                  wl->data_folder, wl->storage.store);
        return -1;
    }
    while (strncmp (p, "./", 2) == 0 || *p == '/')
        p += *p == '/' ? 1 : 2;
    size_t n = strlen (p);
    while (n && p[n - 1] == '/')
        n--;
    if (n == 1 && p[0] == '.')
        n = 0;
    if (n + 2 > size) {
        snprintf (err, err_size, "dataset.data_folder is too long for an S3 key prefix");
        return -1;
    }
    memcpy (out, p, n);
    if (n)
        out[n++] = '/';
    out[n] = '\0';
    return 0;
}

/* The rows of the coordinator's preflight table (sess_preflight_own). */
typedef struct {
    const char *host;
    char       *err;
    size_t      err_size;
    int         n, bad;
} s_own_check_t;

static void
s_own_check (void *ctx, const char *where, const sb_storage_error_t *e)
{
    s_own_check_t *c = ctx;
    if (!e)
        return;
    c->bad++;
    const char *why = e->os_errno ? strerror (e->os_errno) : e->code;
    if (c->n > 0 && (size_t) c->n < c->err_size)
        c->n += snprintf (c->err + c->n, c->err_size - (size_t) c->n, "  %-20s %-28s %s%s%s\n", c->host, where,
                          why && *why ? why : "", why && *why ? ": " : "", e->text);
}

/* The coordinator checks every endpoint itself before listing
 * (sb_storage_preflight): a table of endpoint and cause when any fails. */
int
sess_preflight_own (sess_t *self, char *err, size_t err_size)
{
    char host[256];
    if (gethostname (host, sizeof host - 1) != 0)
        snprintf (host, sizeof host, "coordinator");
    int n = snprintf (err, err_size, "preflight failed: the coordinator cannot use its storage:\n  %-20s %-28s %s\n",
                      "host", "endpoint", "cause");
    s_own_check_t c = { .host = host, .err = err, .err_size = err_size, .n = n };
    (void) sb_storage_preflight (self->objects, 0, s_own_check, &c);    /* the failures are in the table */
    n = c.n;
    if (c.bad && n > 0 && (size_t) n < err_size && err[n - 1] == '\n')
        err[n - 1] = '\0';
    if (!c.bad)
        err[0] = '\0';
    return c.bad ? -1 : 0;
}

/* The coordinator's client of cfg's storage: every endpoint, whatever the
 * ranks' distribution (storage.use_mpi_endpoint_distribution), since the
 * coordinator is no rank. NULL with e set. */
sb_storage_t *
sess_storage_open (const sb_storage_cfg_t *cfg, size_t depth, sb_storage_error_t *e)
{
    sb_storage_cfg_t *mine = malloc (sizeof *mine);
    if (!mine) {
        sb_storage_fail (e, cfg->engine, "open", "", ENOMEM, "out of memory");
        return NULL;
    }
    *mine = *cfg;
    if (mine->lb == SB_LB_PER_RANK)
        mine->lb = SB_LB_ROUND_ROBIN;
    sb_storage_open_t how = { .root = "", .rank = 0, .depth = depth };
    sb_storage_t *client = sb_storage_open (mine, &how, e);
    free (mine);
    return client;
}

/* An endpoint of the checkpoint store checked (sess_ckpt_target): the
 * first failure into err. */
typedef struct {
    const char *folder, *store;
    char       *err;
    size_t      err_size;
    int         bad;
} s_ckpt_check_t;

static void
s_ckpt_check (void *ctx, const char *where, const sb_storage_error_t *e)
{
    s_ckpt_check_t *c = ctx;
    if (!e || c->bad++)
        return;
    snprintf (c->err, c->err_size, "checkpoint.checkpoint_folder %s: the coordinator cannot use '%s' at %s: %s",
              c->folder, c->store, where, e->text);
}

/* where checkpoints go (lib/storage/ckpt_target.h), into
 * self->ckpt_root as workers get it: a local folder made (and made absolute)
 * here, or an object store's STORE and prefix whose endpoints this host
 * checks when it is not the dataset's store. A read-only invocation (read_n > 0: no write)
 * finds every file of checkpoints 1..read_n there first. Returns 0, 1 (the
 * storage failed) or 2 (the configuration) with err. */
int
sess_ckpt_target (sess_t *self, const sb_workload_t *wl, uint64_t read_n, char *err, size_t err_size)
{
    sb_ckpt_target_t t;
    char why[2048];
    if (sb_ckpt_target_resolve (wl, &t, why, sizeof why) != 0 || sb_ckpt_target_endpoints (wl, &t, why, sizeof why)
                                                                     != 0) {
        snprintf (err, err_size, "%s", why);
        return 2;
    }
    int own_store = 0;
    if (!t.engine[0]) {
        if (sess_prepare_folder (t.path, self->ckpt_root, sizeof self->ckpt_root, err, err_size) != 0)
            return 2;
        if (t.direct)
            sb_info ("checkpoint.checkpoint_folder %s: direct:// is written as a local folder, fsync'ed and dropped"
                     " from the page cache (checkpoint.fsync), not with O_DIRECT", wl->ckpt.folder);
        sb_info ("checkpoints: local files under %s", self->ckpt_root);
        if (read_n == 0)
            return 0;
    }
    else {
        if (sb_ckpt_target_uri (&t, self->ckpt_root, sizeof self->ckpt_root) != 0) {
            snprintf (err, err_size, "key 'checkpoint.checkpoint_folder': '%s' is too long", wl->ckpt.folder);
            return 2;
        }
        own_store = (sb_storage_caps (&wl->storage) & SB_ENGINE_OBJECTS) && !strcmp (t.engine, wl->storage.engine)
                    && !strcmp (t.store, wl->storage.store);
        sb_info ("checkpoints: %s objects under %s (%s)", t.engine, self->ckpt_root,
                 own_store ? "the dataset's store" : "the dataset's endpoints and credentials");
        if (own_store && read_n == 0)
            return 0;   /* checked with the dataset */
    }
    /* the checkpoint folder's own storage, as the workers open it */
    sb_storage_cfg_t *st = malloc (sizeof *st);
    char root[PATH_MAX];
    if (!st) {
        snprintf (err, err_size, "out of memory");
        return 1;
    }
    if (sb_ckpt_target_open (self->ckpt_root, "", &wl->storage, st, root, sizeof root, err, err_size) != 0) {
        free (st);
        return 2;
    }
    sb_storage_error_t e;
    sb_storage_t *client = sess_storage_open (st, 1, &e);
    free (st);
    if (!client) {
        snprintf (err, err_size, "checkpoint.checkpoint_folder %s: %s", wl->ckpt.folder, e.text);
        return 1;
    }
    int rc = 0;
    if (t.engine[0] && !own_store) {
        s_ckpt_check_t c = { .folder = wl->ckpt.folder, .store = t.store, .err = err, .err_size = err_size };
        (void) sb_storage_preflight (client, 0, s_ckpt_check, &c);   /* the first failure is in err */
        rc = c.bad ? 1 : 0;
    }
    if (rc == 0 && read_n > 0) {
        sb_ckpt_plan_t probe;
        if (sb_ckpt_plan_init (&probe, &wl->ckpt, self->o->accelerators, err, err_size) != 0)
            rc = 2;
        else {
            char where[PATH_MAX + 16];
            snprintf (where, sizeof where, "%s", self->ckpt_root);
            if (t.engine[0])   /* SCHEME://STORE/PREFIX, without the '/' the wire form ends with */
                snprintf (where, sizeof where, "%s://%s/%s", t.scheme, t.store, t.path);
            rc = sb_ckpt_check_written (&probe, client, where, root, read_n, err, err_size) ? 2 : 0;
            sb_ckpt_plan_fini (&probe);
        }
    }
    sb_storage_close (&client);
    return rc;
}

/* Create (with its parents) and lock the local data folder for the whole
 * session: exclusive for a datagen, shared for a run that reads. */
int
sess_folder_lock (sess_t *self, int exclusive, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    if (sb_mkdirs (wl->data_folder, err, err_size) != 0)
        return -1;
    char real[PATH_MAX];
    if (!realpath (wl->data_folder, real)) {
        snprintf (err, err_size, "data folder '%s': %s", wl->data_folder, strerror (errno));
        return -1;
    }
    snprintf (self->folder, sizeof self->folder, "%s", real);
    self->lock_fd = sb_datafolder_lock (self->folder, exclusive, self->o->kind == SB_SESSION_DATAGEN ? "datagen"
                                        : "run", err, err_size);
    if (self->lock_fd == -2) {  /* read-only: nothing can generate there either */
        sb_info ("%s", err);
        err[0] = '\0';
        self->lock_fd = -1;
        self->read_only = 1;
        return 0;
    }
    if (self->lock_fd < 0)
        return -1;
    self->lock_exclusive = exclusive;
    return 0;
}

/* ---- the marker of an S3 dataset: the object KEY_PREFIX.shardbench-dataset,
 * beside train/ (where a local folder has its marker file), same text */


void
sess_objects_marker_key (sess_t *self, char *key, size_t size)
{
    snprintf (key, size, "%s%s", self->key_prefix, SB_DATAFOLDER_MARKER);
}

static void
s_fill_text (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    memcpy (buf, (const char *) ctx + offset, len);
}

/* PUT the marker object with state and bytes. Returns 0, or -1 with err. */
int
sess_objects_marker_write (sess_t *self, const char *state, uint64_t bytes, char *err, size_t err_size)
{
    sb_dataset_t ds;
    sess_marker_dataset (self, &ds);
    char key[1200], why[256];
    sess_objects_marker_key (self, key, sizeof key);
    char *text = malloc (SB_DATAFOLDER_MARKER_MAX);
    if (!text) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    size_t len = 0;
    int rc = -1;
    sb_storage_error_t e;
    if (sb_datafolder_marker_format (&ds, state, bytes, text, SB_DATAFOLDER_MARKER_MAX, &len, why, sizeof why) != 0)
        snprintf (err, err_size, "%s://%s/%s: %s", sb_storage_scheme (&self->o->wl->storage), self->o->wl->storage.store, key, why);
    else if (sb_storage_put (self->objects, key, len, s_fill_text, text, 0, &e) != 0)
        snprintf (err, err_size, "cannot write the dataset marker: %s", e.text);
    else
        rc = 0;
    free (text);
    return rc;
}

/* GET the marker object. Returns 1 with *m set, 0 when there is none, -1
 * with err (the GET failed, or the object is not a marker). */
int
sess_objects_marker_read (sess_t *self, sb_datafolder_marker_t *m, char *err, size_t err_size)
{
    char key[1200], name[1500];
    sess_objects_marker_key (self, key, sizeof key);
    snprintf (name, sizeof name, "%s://%s/%s", sb_storage_scheme (&self->o->wl->storage), self->o->wl->storage.store, key);
    memset (m, 0, sizeof *m);
    char *text = malloc (SB_DATAFOLDER_MARKER_MAX);
    if (!text) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    size_t len = 0;
    sb_storage_error_t e;
    int rc = sb_storage_get_small (self->objects, key, text, SB_DATAFOLDER_MARKER_MAX, &len, &e);
    if (rc == 1)
        rc = 0;
    else if (rc != 0) {
        snprintf (err, err_size, "cannot read the dataset marker %s: %s", name, e.text);
        rc = -1;
    }
    else
        rc = sb_datafolder_marker_parse (text, len, name, m, err, err_size) == 0 ? 1 : -1;
    free (text);
    return rc;
}

/* ---- the listed sizes against the generator's ---- */

/* N of a DLIO name ..._I_of_N.EXT (the last "_of_" of its base name).
 * Returns 0, or -1 when key is no such name. */
static int
s_key_total (const char *key, uint64_t *total)
{
    const char *base = strrchr (key, '/') ? strrchr (key, '/') + 1 : key;
    const char *of = NULL;
    for (const char *p = strstr (base, "_of_"); p; p = strstr (p + 1, "_of_"))
        of = p;
    if (!of || !isdigit ((unsigned char) of[4]))
        return -1;
    errno = 0;
    char *end;
    unsigned long long n = strtoull (of + 4, &end, 10);
    if (errno || *end != '.' || n == 0)
        return -1;
    *total = n;
    return 0;
}

/* Where the dataset is, as a user writes it (messages). */
static void
s_dataset_where (sess_t *self, char *where, size_t size)
{
    if (self->objects) {
        size_t n = strlen (self->key_prefix);
        snprintf (where, size, "%s://%s%s%.*s", sb_storage_scheme (&self->o->wl->storage), self->o->wl->storage.store,
                  n ? "/" : "", n ? (int) n - 1 : 0, self->key_prefix);
    }
    else
        snprintf (where, size, "%s", self->folder);
}

/* Every object of train/'s catalog named as the generator names its files
 * is compared with the size the generator wrote (seed: the marker's), so
 * that a file truncated, grown or replaced after its datagen fails the run
 * here, before any worker reads fewer bytes than the dataset holds and
 * counts them as a whole epoch. Objects of other
 * names are not the generator's (another tool's files): not compared.
 * Formats whose sizes only their encoder knows (hdf5) or that depend on
 * the content (compressed parquet: the coordinator would compress the
 * whole dataset again) are left to the reads' own checks. Returns 0, or -1
 * with err naming the first file that differs, its listed size and the
 * generator's, and how many differ. */
static int
s_sizes_check (sess_t *self, uint64_t seed, char *err, size_t err_size)
{
    const sb_catalog_info_t *info = &self->catalog_info;
    sb_dataset_t gen;
    sess_dataset (self, &gen);
    gen.seed = seed;
    int compressed = !strcmp (gen.format, "parquet") && gen.parquet_compression && *gen.parquet_compression
        && strcmp (gen.parquet_compression, "none") != 0;
    if ((sb_storage_caps (&self->o->wl->storage) & SB_ENGINE_NO_IO) || compressed || !sb_generator_size_known (&gen, 0)
        || info->id <= 0)
        return 0;
    char where[1400], why[1024];
    s_dataset_where (self, where, sizeof where);
    sb_catalog_set_progress (sess_keep_alive, self);
    sb_catalog_reader_t *rd = sb_catalog_reader_new (sb_resultdb_handle (self->o->db), info->id, why, sizeof why);
    sb_catalog_set_progress (NULL, NULL);
    if (!rd) {
        snprintf (err, err_size, "the dataset in %s: cannot read its catalog %lld: %s", where, (long long) info->id,
                  why);
        return -1;
    }
    const sb_dataset_t *naming = sb_catalog_reader_naming (rd);
    char *key = malloc (PATH_MAX), *expect = malloc (PATH_MAX), *first = malloc (PATH_MAX);
    uint64_t differ = 0, compared = 0, first_size = 0, first_want = 0;
    int rc = key && expect && first ? 0 : -1;
    if (rc)
        snprintf (err, err_size, "out of memory");
    for (uint64_t i = 0; rc == 0 && i < info->count; i++) {
        if ((i & 65535) == 65535 && sess_keep_alive (self)) {
            snprintf (err, err_size, "interrupted by %s while checking the sizes of the dataset in %s",
                      sess_signal_name (), where);
            rc = -1;
            break;
        }
        uint64_t size = 0, dlio = 0, index, total, want;
        int named = sb_catalog_reader_locate (rd, i, &size, &dlio);
        if (named == 1 ? !naming || sb_dataset_key (naming, dlio, key, PATH_MAX) != 0
                       : named != 0 || sb_catalog_reader_get (rd, i, key, PATH_MAX, &size) != 0) {
            snprintf (err, err_size, "the dataset in %s: cannot read object %llu of its catalog %lld", where,
                      (unsigned long long) i, (long long) info->id);
            rc = -1;
            break;
        }
        if (sb_format_key_index (key, &index) != 0 || s_key_total (key, &total) != 0 || index >= total)
            continue;
        gen.files = total;
        if (sb_dataset_key (&gen, index, expect, PATH_MAX) != 0 || strcmp (expect, key) != 0)
            continue;   /* not a name this generator gives (another folder, prefix or format) */
        if (sb_generator_size (&gen, 0, index, &want, why, sizeof why) != 0) {
            snprintf (err, err_size, "the dataset in %s: the size its generator gives %s: %s", where, key, why);
            rc = -1;
            break;
        }
        compared++;
        if (size != want && !differ++) {
            snprintf (first, PATH_MAX, "%s", key);
            first_size = size;
            first_want = want;
        }
    }
    sb_catalog_reader_destroy (&rd);
    if (rc == 0 && differ) {
        char path[PATH_MAX + 1400];
        if (self->objects)
            snprintf (path, sizeof path, "%s://%s/%s%s", sb_storage_scheme (&self->o->wl->storage), self->o->wl->storage.store,
                      self->key_prefix, first);
        else
            snprintf (path, sizeof path, "%s%s", info->prefix, first);
        if (differ == compared && compared > 1)   /* not one file: rather a parameter an older marker does not record */
            snprintf (err, err_size, "the dataset in %s does not hold what this workload's generator writes: none of"
                      " its %llu files has that size (%s is %llu bytes, the generator writes %llu, sizes as listed in"
                      " catalog %lld%s): it was generated with parameters its marker does not record (an older"
                      " shardbench's marker: dataset.record_element_type, dataset.record_dims), or every file was"
                      " changed: run with the workload it was generated with, or regenerate it with"
                      " `shardbench datagen --clean`", where, (unsigned long long) compared, path,
                      (unsigned long long) first_size, (unsigned long long) first_want, (long long) info->id,
                      info->reused ? ", reused: --relist lists it again" : "");
        else
            snprintf (err, err_size, "the dataset in %s does not hold what its generator wrote: %s is %llu bytes,"
                      " its generator wrote %llu bytes (%llu of %llu files differ): a file truncated, grown or"
                      " replaced since its datagen (sizes as listed in catalog %lld%s): regenerate it with"
                      " `shardbench datagen --clean`", where, path, (unsigned long long) first_size,
                      (unsigned long long) first_want, (unsigned long long) differ, (unsigned long long) compared,
                      (long long) info->id, info->reused ? ", reused: --relist lists it again" : "");
        rc = -1;
    }
    free (key);
    free (expect);
    free (first);
    return rc;
}

/* A run that reads an existing dataset (a local folder, or an S3 prefix):
 * the marker must say it was generated whole with this workload's
 * parameters. Returns 0, or -1 with err. */
int
sess_dataset_check (sess_t *self, char *err, size_t err_size)
{
    sb_dataset_t ds;
    sess_marker_dataset (self, &ds);
    sb_datafolder_marker_t m;
    char why[2048], where[1400], marker[1500];
    if (self->objects) {
        size_t n = strlen (self->key_prefix);
        snprintf (where, sizeof where, "%s://%s%s%.*s", sb_storage_scheme (&self->o->wl->storage), self->o->wl->storage.store,
                  n ? "/" : "", n ? (int) n - 1 : 0, self->key_prefix);
        snprintf (marker, sizeof marker, "%s://%s/%s%s", sb_storage_scheme (&self->o->wl->storage), self->o->wl->storage.store,
                  self->key_prefix, SB_DATAFOLDER_MARKER);
    }
    else {
        snprintf (where, sizeof where, "%s", self->folder);
        snprintf (marker, sizeof marker, "%s/%s", self->folder, SB_DATAFOLDER_MARKER);
    }
    int have = self->objects ? sess_objects_marker_read (self, &m, why, sizeof why)
                        : sb_datafolder_marker_read (self->folder, &m, why, sizeof why);
    if (have < 0) {
        snprintf (err, err_size, "%s: regenerate the dataset with `shardbench datagen --clean`", why);
        return -1;
    }
    if (have == 0) {
        sb_warn ("%s/train has no %s marker saying what generated it (another tool, or shardbench before 0.2):"
                 " its files are read as this workload names and sizes them; `shardbench datagen --clean`"
                 " regenerates it with a marker", where, SB_DATAFOLDER_MARKER);
        return 0;
    }
    if (strcmp (m.state, "complete") != 0) {
        snprintf (err, err_size, "the dataset in %s is incomplete: its datagen did not finish (%s says state=%s):"
                  " run `shardbench datagen` again", where, marker, m.state);
        return -1;
    }
    /* fewer files than generated is a subset (the first in name order); more is refused below */
    if (sb_datafolder_marker_diff (&m, &ds, 0, why, sizeof why) > 0) {
        snprintf (err, err_size, "the dataset in %s was generated with other parameters than this workload's (%s):"
                  " run with the workload it was generated with, or regenerate it with `shardbench datagen --clean`",
                  where, why);
        return -1;
    }
    if (sb_datafolder_marker_diff (&m, &ds, SB_DATAFOLDER_DIFF_SEED, why, sizeof why) > 0) {
        if (self->o->wl->verify) {
            snprintf (err, err_size, "the dataset in %s was generated with seed %llu, this run uses seed %llu and"
                      " reader.verify checks every byte against it: pass --seed %llu", where,
                      (unsigned long long) m.seed, (unsigned long long) ds.seed, (unsigned long long) m.seed);
            return -1;
        }
        sb_warn ("the dataset in %s was generated with seed %llu, this run uses seed %llu: its content and sizes"
                 " are those of seed %llu", where, (unsigned long long) m.seed, (unsigned long long) ds.seed,
                 (unsigned long long) m.seed);
    }
    /* train/'s listed sizes, the generator's (the marker says what generated
     * train/; valid/ may hold another tool's files: read as listed) */
    return s_sizes_check (self, m.seed, err, err_size);
}

/* A probe in the folder the workers get as data_root, which each worker
 * must read back (agent preflight). Returns 0, -1 with err, or -2 when the
 * folder is not writable here (err says why). */
int
sess_probe_create (sess_t *self, char *err, size_t err_size)
{
    snprintf (self->probe_dir, sizeof self->probe_dir, "%s", self->catalog_info.prefix);
    size_t n = strlen (self->probe_dir);
    while (n > 1 && self->probe_dir[n - 1] == '/')
        self->probe_dir[--n] = '\0';
    int rc = sb_datafolder_probe_create (self->probe_dir, self->probe, sizeof self->probe, err, err_size);
    if (rc != 0) {
        self->probe_dir[0] = '\0';
        self->probe[0] = '\0';
        return rc;
    }
    return 0;
}

/* End of session: probe removed; after a datagen that did not finish, the
 * temporaries its writers left (a killed worker cannot remove its own) are
 * removed while the lock is still held; lock released. */
void
sess_folder_release (sess_t *self)
{
    if (self->probe[0]) {
        char path[PATH_MAX + 64];
        snprintf (path, sizeof path, "%s/%s", self->probe_dir, self->probe);
        if (unlink (path) != 0 && errno != ENOENT)
            sb_warn ("cannot remove the probe %s: %s", path, strerror (errno));
    }
    if (self->generating && self->lock_exclusive) {
        char why[1024];
        sb_datafolder_scan_t gone;
        if (sb_datafolder_scan (self->folder, SB_DATAFOLDER_REMOVE_TEMPORARIES, &gone, why, sizeof why) != 0)
            sb_warn ("cannot remove the temporaries of the unfinished datagen: %s", why);
        else if (gone.temporaries)
            sb_info ("removed %llu temporaries of the unfinished datagen under %s/train",
                     (unsigned long long) gone.temporaries, self->folder);
    }
    sb_datafolder_unlock (&self->lock_fd);
}
