/* phase_datagen: generating the dataset. The phase itself (every rank
 * writes its share), the checks before a datagen writes into a local folder
 * or under an S3 prefix (another generation there, free space, --clean),
 * the bytes it will write, and datagen --dry-run. */
#include "session_internal.h"
#include "datafolder.h"
#include "dataset.h"
#include "format.h"
#include "engine.h"
#include "log.h"
#include "util.h"
#include "progress.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
sess_phase_datagen (sess_t *self)
{
    if (sess_begin_run (self, "datagen") < 0)
        return -1;
    uint64_t n = self->o->wl->num_files_train, eval = self->o->wl->num_files_eval;
    if (eval)
        sb_info ("generating %llu files under %strain/ and %llu under %svalid/ (%llu ranks)", (unsigned long long) n,
                 self->catalog_info.prefix, (unsigned long long) eval, self->catalog_info.prefix,
                 (unsigned long long) self->o->accelerators);
    else
        sb_info ("generating %llu files under %s (%llu ranks)", (unsigned long long) n, self->catalog_info.prefix,
                 (unsigned long long) self->o->accelerators);
    {   /* images too small to be DLIO's dim1 x dim2 bytes */
        sb_dataset_t ds;
        sess_marker_dataset (self, &ds);
        uint64_t first = 0, inexact = sb_format_is_image (ds.format) ? sb_format_image_inexact (&ds, &first) : 0;
        if (inexact > 0) {
            uint64_t size = 0;
            int exact;
            char why[256];
            if (sb_format_image_object_size (&ds, first, &size, &exact, why, sizeof why) != 0)
                size = 0;
            sb_warn ("dataset.record_length_bytes=%llu: %llu of %llu %s files cannot be DLIO's dim1 x dim2 bytes"
                     " (e.g. object %llu: %llu bytes, %llu wanted); they are written as the smallest valid image"
                     " (docs/FORMATS.md)",
                     (unsigned long long) ds.record_length, (unsigned long long) inexact, (unsigned long long) ds.files,
                     ds.format, (unsigned long long) first, (unsigned long long) size,
                     (unsigned long long) sb_dataset_object_size (&ds, first));
        }
    }
    self->phase = SESS_PHASE_DATAGEN;
    self->epoch = 0;
    self->ranks_done = 0;
    self->ep_samples = self->ep_bytes = self->ep_ranks = 0;
    memset (self->rank_done, 0, self->o->accelerators);
    sb_msg_t start = { .type = SB_MSG_PHASE_START };
    start.u.phase_start.phase = "datagen";
    start.u.phase_start.run_id = (uint64_t) self->run_id;
    start.u.phase_start.epoch = 0;
    start.u.phase_start.items = n;
    sess_broadcast (self, &start);
    sb_live_phase (self->live, "datagen", 0, 0, 0, n + eval, 0, sb_now ());
    sb_progress_phase (self->progress, sb_now ());
    int rc = sess_pump_until (self, sess_all_ranks_done, 0, "generating the dataset");
    sb_live_phase_end (self->live, NAN, sb_now ());
    sb_progress_end_phase (self->progress, sb_now ());
    if (rc == 0 && sb_resultdb_close_epoch (self->o->db, self->run_id, 0, 0, 0, 0) != 0)
        sess_fail (self, "cannot record the datagen totals: %s", sb_resultdb_errmsg (self->o->db));
    if (rc == 0 && !self->failed && self->generating) {
        /* the dataset is whole: say what generated it (before the run counts
         * as succeeded); the bytes are the ranks' RANK_DONE totals, tallied in
         * memory (the result rows may still be queued to the writer) */
        uint64_t written = self->ep_bytes;
        char why[1024];
        sb_dataset_t ds;
        sess_marker_dataset (self, &ds);
        if ((self->objects ? sess_objects_marker_write (self, "complete", written, why, sizeof why)
                      : sb_datafolder_marker_write (self->folder, &ds, "complete", written, why, sizeof why)) != 0)
            sess_fail (self, "%s", why);
        else
            self->generating = 0;
    }
    self->phase = SESS_PHASE_NONE;
    sess_end_run (self);     /* written: the summary reads it back */
    if (!self->failed) {
        sb_epoch_totals_t t;
        if (sb_resultdb_epoch_totals (self->o->db, self->run_id, 0, &t) == 1)
            printf ("datagen (run %lld): %lld files, %.1f MiB in %.2f s, %.1f MB/s\n", (long long) self->run_id,
                    (long long) t.samples, (double) t.bytes / 1048576.0, t.duration_s, t.mb_per_s);
        fflush (stdout);
    }
    return self->failed ? -1 : 0;
}

/* Bytes the dataset will take: exact for raw files, else the payload of
 * every object plus the framing (or compression) of object 0 scaled to all.
 * *exact says which. Returns 0, or -1 with err. */
static int
s_plan_bytes (const sb_dataset_t *ds, uint64_t *bytes, int *exact, char *err, size_t err_size)
{
    char key[PATH_MAX];
    sb_format_obj_t obj;
    if (sb_dataset_key (ds, 0, key, sizeof key) != 0) {
        snprintf (err, err_size, "object 0: name too long");
        return -1;
    }
    if (sb_format_open (&obj, ds, 0, key, err, err_size) != 0)
        return -1;
    uint64_t size0 = obj.size, payload0 = sb_dataset_object_size (ds, 0);
    sb_format_close (&obj);
    long double payload = 0;
    for (uint64_t i = 0; i < ds->files; i++)
        payload += (long double) sb_dataset_object_size (ds, i);
    long double total = size0 >= payload0 ? payload + (long double) (size0 - payload0) * (long double) ds->files
                                          : payload * ((long double) size0 / (long double) (payload0 ? payload0 : 1));
    *bytes = total > 1.8e19L ? UINT64_MAX : (uint64_t) total;
    *exact = sb_format_is_raw (ds->format) || size0 == payload0;
    return 0;
}

/* Bytes a datagen writes: the training set, and the evaluation set under
 * valid/ (dataset.num_files_eval) when there is one. Returns 0, or -1 with err. */
static int
s_plan_datagen_bytes (sess_t *self, uint64_t *bytes, int *exact, char *err, size_t err_size)
{
    sb_dataset_t ds;
    sess_marker_dataset (self, &ds);
    if (s_plan_bytes (&ds, bytes, exact, err, err_size) != 0)
        return -1;
    if (self->o->wl->num_files_eval == 0)
        return 0;
    ds.split = "valid";
    ds.files = self->o->wl->num_files_eval;
    ds.subfolders = self->o->wl->num_subfolders_eval;
    uint64_t eval_bytes;
    int eval_exact;
    if (s_plan_bytes (&ds, &eval_bytes, &eval_exact, err, err_size) != 0)
        return -1;
    *bytes = eval_bytes > UINT64_MAX - *bytes ? UINT64_MAX : *bytes + eval_bytes;
    *exact = *exact && eval_exact;
    return 0;
}

/* What is under KEY_PREFIX/train/ of an S3 dataset: keys named as DLIO
 * names dataset files (train/NAME or train/SUB/NAME), and others. */
typedef struct {
    const char *prefix;         /* KEY_PREFIX + "train/", the listed prefix */
    size_t   skip;              /* its length */
    uint64_t dataset_files, dataset_bytes, others;
    char     other[1100];       /* the first other key */
    char   **keys;              /* the dataset keys, when collect */
    size_t   nkeys, cap;
    int      collect, oom;
} s_s3_scan_t;


static int
s_s3_scan_key (void *ctx, const char *listed, size_t listed_len, uint64_t size)
{
    s_s3_scan_t *sc = ctx;
    char key[2400];     /* the whole key: the listing gives it relative to the prefix */
    if (snprintf (key, sizeof key, "%s%.*s", sc->prefix, (int) listed_len, listed) >= (int) sizeof key) {
        if (!sc->others++)
            snprintf (sc->other, sizeof sc->other, "%s%.*s", sc->prefix, (int) listed_len, listed);
        return 0;
    }
    const char *rel = strlen (key) > sc->skip ? key + sc->skip : "";
    size_t n = strlen (rel);
    if (n == 0 || rel[n - 1] == '/')
        return 0;       /* a folder placeholder ("train/", "train/SUB/") that a console made: no data */
    const char *slash = strchr (rel, '/');
    const char *name = slash ? slash + 1 : rel;
    int ok = slash != rel && !strchr (name, '/') && sb_datafolder_is_dataset_name (name);
    if (!ok) {
        if (!sc->others++)
            snprintf (sc->other, sizeof sc->other, "%s", key);
        return 0;
    }
    sc->dataset_files++;
    sc->dataset_bytes += size;
    if (!sc->collect)
        return 0;
    if (sc->nkeys == sc->cap) {
        size_t want = sc->cap ? sc->cap * 2 : 256;
        char **grown = realloc (sc->keys, want * sizeof *grown);
        if (!grown) {
            sc->oom = 1;
            return 1;
        }
        sc->keys = grown;
        sc->cap = want;
    }
    if (!(sc->keys[sc->nkeys] = strdup (key))) {
        sc->oom = 1;
        return 1;
    }
    sc->nkeys++;
    return 0;
}

static void
s_s3_scan_free (s_s3_scan_t *sc)
{
    for (size_t i = 0; i < sc->nkeys; i++)
        free (sc->keys[i]);
    free (sc->keys);
    sc->keys = NULL;
    sc->nkeys = sc->cap = 0;
}

static int
s_s3_scan (sess_t *self, int collect, s_s3_scan_t *sc, char *err, size_t err_size)
{
    char prefix[1200];
    snprintf (prefix, sizeof prefix, "%strain/", self->key_prefix);
    *sc = (s_s3_scan_t) { .prefix = prefix, .skip = strlen (prefix), .collect = collect };
    sb_storage_error_t e;
    if (sb_storage_list (self->objects, prefix, NULL, NULL, s_s3_scan_key, sc, &e) < 0) {
        snprintf (err, err_size, "cannot list the dataset: %s", e.text);
        s_s3_scan_free (sc);
        return -1;
    }
    if (sc->oom) {
        snprintf (err, err_size, "out of memory listing %s://%s/%s", self->o->wl->storage.engine,
                  self->o->wl->storage.store, prefix);
        s_s3_scan_free (sc);
        return -1;
    }
    return 0;
}

/* How to clear another generation's files: `datagen --clean`; a run
 * (workflow.generate_data) has no --clean. */
static const char *
s_clean_hint (const sb_session_opts_t *o)
{
    return o->kind == SB_SESSION_DATAGEN ? "pass --clean"
                                         : "run `shardbench datagen --clean` with this workload (it has no --clean)";
}

/* Before a datagen writes under an S3 prefix: as sess_datagen_check does for
 * a local folder, refuse objects of another generation under train/
 * (unless --clean, which deletes them and the marker first), state the
 * bytes, and PUT the marker with state=generating. Returns 0, or an exit
 * code (1, 2) with err. */
int
sess_objects_datagen_check (sess_t *self, char *err, size_t err_size)
{
    const sb_session_opts_t *o = self->o;
    char store[300];      /* SCHEME://STORE, as the messages name the objects */
    snprintf (store, sizeof store, "%s://%s", sb_storage_scheme (&o->wl->storage), o->wl->storage.store);
    sb_dataset_t ds;
    sess_marker_dataset (self, &ds);
    sb_datafolder_marker_t m;
    char why[2048], diff[2048] = "", key[1200];
    sess_objects_marker_key (self, key, sizeof key);
    int have = sess_objects_marker_read (self, &m, why, sizeof why);
    if (have < 0 && !o->clean) {
        snprintf (err, err_size, "%s: %s to replace it and the dataset objects", why, s_clean_hint (o));
        return 2;
    }
    s_s3_scan_t scan;
    if (s_s3_scan (self, o->clean, &scan, err, err_size) != 0)
        return 1;
    int same = have == 1
               && sb_datafolder_marker_diff (&m, &ds, SB_DATAFOLDER_DIFF_FILES | SB_DATAFOLDER_DIFF_SEED, diff,
                                             sizeof diff) == 0;
    if (scan.others) {
        snprintf (err, err_size, "%s/%s is not a dataset object (train/PREFIX_I_of_N.EXT): datagen writes only"
                  " under a prefix holding nothing else under train/ (%llu such keys); delete them, or choose"
                  " another dataset.data_folder", store, scan.other, (unsigned long long) scan.others);
        s_s3_scan_free (&scan);
        return 2;
    }
    if (scan.dataset_files && !same && !o->clean) {
        snprintf (err, err_size, "%s/%strain/ holds %llu objects (%.1f MiB) of another generation (%s/%s:"
                  " %s): a datagen there would mix two datasets; %s to delete them first, or choose"
                  " another dataset.data_folder", store, self->key_prefix, (unsigned long long) scan.dataset_files,
                  scan.dataset_bytes / 1048576.0, store, key,
                  have == 1 ? diff : have == 0 ? "no marker says what generated them" : why, s_clean_hint (o));
        s_s3_scan_free (&scan);
        return 2;
    }
    uint64_t total;
    int exact;
    if (s_plan_datagen_bytes (self, &total, &exact, err, err_size) != 0) {
        s_s3_scan_free (&scan);
        return 2;
    }
    sb_info ("datagen: %llu objects, %s%llu bytes (%.2f GiB) into %s/%strain/", (unsigned long long) ds.files,
             exact ? "" : "about ", (unsigned long long) total, total / 1073741824.0, store, self->key_prefix);
    if (o->clean) {
        sb_storage_error_t e;     /* a missing object is no error of sb_storage_remove */
        for (size_t i = 0; i < scan.nkeys; i++)
            if (sb_storage_remove (self->objects, scan.keys[i], &e) != 0) {
                snprintf (err, err_size, "--clean: cannot delete a dataset object: %s", e.text);
                s_s3_scan_free (&scan);
                return 1;
            }
        if (sb_storage_remove (self->objects, key, &e) != 0) {
            snprintf (err, err_size, "--clean: cannot delete the dataset marker: %s", e.text);
            s_s3_scan_free (&scan);
            return 1;
        }
        sb_info ("--clean: deleted %llu dataset objects (%.1f MiB) under %s/%strain/",
                 (unsigned long long) scan.nkeys, scan.dataset_bytes / 1048576.0, store, self->key_prefix);
    }
    s_s3_scan_free (&scan);
    if (sess_objects_marker_write (self, "generating", total, err, err_size) != 0)
        return 1;
    self->generating = 1;
    return 0;
}

/* Before a datagen writes into a local folder: hold the lock exclusive,
 * refuse a folder holding another generation (unless --clean), remove
 * stale temporaries, state the bytes, check the free space, and mark the
 * folder "generating". Returns 0, or an exit code (1, 2) with err. */
int
sess_datagen_check (sess_t *self, char *err, size_t err_size)
{
    const sb_session_opts_t *o = self->o;
    if (!self->lock_exclusive) {
        if (sb_datafolder_lock_upgrade (self->lock_fd, self->folder, "run (generating)", err, err_size) != 0)
            return 1;
        self->lock_exclusive = 1;
    }
    sb_dataset_t ds;
    sess_marker_dataset (self, &ds);
    sb_datafolder_marker_t m;
    char why[2048], diff[2048] = "";
    int have = sb_datafolder_marker_read (self->folder, &m, why, sizeof why);
    if (have < 0 && !o->clean) {
        snprintf (err, err_size, "%s: %s to replace it and the dataset files", why, s_clean_hint (o));
        return 2;
    }
    sb_datafolder_scan_t scan;
    if (sb_datafolder_scan (self->folder, 0, &scan, err, err_size) != 0)
        return 1;
    int same = have == 1
               && sb_datafolder_marker_diff (&m, &ds, SB_DATAFOLDER_DIFF_FILES | SB_DATAFOLDER_DIFF_SEED, diff,
                                             sizeof diff) == 0;
    if (scan.others) {
        snprintf (err, err_size, "%s/%s is not a dataset file (PREFIX_I_of_N.EXT) nor a temporary: datagen writes"
                  " only into a folder holding nothing else under train/ (%llu such entries); remove them, or"
                  " choose another dataset.data_folder", self->folder, scan.other, (unsigned long long) scan.others);
        return 2;
    }
    if (scan.dataset_files && !same && !o->clean) {
        snprintf (err, err_size, "%s/train holds %llu files (%.1f MiB) of another generation (%s): a datagen there"
                  " would mix two datasets; %s to remove them first, or choose another"
                  " dataset.data_folder", self->folder, (unsigned long long) scan.dataset_files,
                  scan.dataset_bytes / 1048576.0,
                  have == 1 ? diff : have == 0 ? "no " SB_DATAFOLDER_MARKER " marker says what generated them" : why,
                  s_clean_hint (o));
        return 2;
    }
    uint64_t total, free_bytes;
    int exact;
    if (s_plan_datagen_bytes (self, &total, &exact, err, err_size) != 0)
        return 2;
    if (sb_datafolder_free_bytes (self->folder, &free_bytes, err, err_size) != 0)
        return 1;
    /* files of this generation are replaced one by one; --clean frees the others first */
    uint64_t reclaim = same || o->clean ? scan.dataset_bytes : 0;
    sb_info ("datagen: %llu files, %s%llu bytes (%.2f GiB) into %s/train; %llu bytes (%.2f GiB) free there",
             (unsigned long long) ds.files, exact ? "" : "about ", (unsigned long long) total, total / 1073741824.0,
             self->folder, (unsigned long long) free_bytes, free_bytes / 1073741824.0);
    if (total > free_bytes && total - free_bytes > reclaim) {
        snprintf (err, err_size, "not enough space in %s: the dataset needs %s%llu bytes (%.2f GiB), %llu bytes"
                  " (%.2f GiB) are free%s: free space, or lower dataset.num_files_train", self->folder,
                  exact ? "" : "about ", (unsigned long long) total, total / 1073741824.0,
                  (unsigned long long) free_bytes, free_bytes / 1073741824.0,
                  reclaim ? " besides the files it replaces" : "");
        return 2;
    }
    int remove = SB_DATAFOLDER_REMOVE_TEMPORARIES | (o->clean ? SB_DATAFOLDER_REMOVE_DATASET : 0);
    if (scan.temporaries || o->clean) {
        sb_datafolder_scan_t gone;
        if (sb_datafolder_scan (self->folder, remove, &gone, err, err_size) != 0)
            return 1;
        if (gone.temporaries)
            sb_info ("removed %llu stale temporaries (.*.tmp) under %s/train", (unsigned long long) gone.temporaries,
                     self->folder);
        if (o->clean)
            sb_info ("--clean: removed %llu dataset files (%.1f MiB) under %s/train",
                     (unsigned long long) gone.dataset_files, gone.dataset_bytes / 1048576.0, self->folder);
    }
    if (o->clean && sb_datafolder_marker_remove (self->folder, err, err_size) != 0)
        return 1;
    if (sb_datafolder_marker_write (self->folder, &ds, "generating", total, err, err_size) != 0)
        return 1;
    self->generating = 1;
    return 0;
}

/* datagen --dry-run: what it would write, and where; writes nothing. */
int
sess_dry_run (sess_t *self, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    unsigned caps = sb_storage_caps (&wl->storage);
    if (caps & SB_ENGINE_NO_IO) {
        printf ("datagen --dry-run: %s storage (%s): nothing to write\n", wl->storage.engine, wl->data_folder);
        return 0;
    }
    sb_dataset_t ds;
    sess_marker_dataset (self, &ds);
    uint64_t total;
    int exact;
    if (s_plan_datagen_bytes (self, &total, &exact, err, err_size) != 0)
        return 2;
    char where[PATH_MAX + 400];
    if (caps & SB_ENGINE_OBJECTS) {
        char prefix[1100];
        if (sess_key_prefix (wl, prefix, sizeof prefix, err, err_size) != 0)
            return 2;
        snprintf (where, sizeof where, "%s://%s/%strain", wl->storage.engine, wl->storage.store, prefix);
    }
    else {
        char real[PATH_MAX], cwd[PATH_MAX];
        const char *f = wl->data_folder;
        while (f[0] == '.' && f[1] == '/')
            f += 2;
        if (realpath (wl->data_folder, real))
            snprintf (where, sizeof where, "%s/train", real);
        else if (f[0] != '/' && getcwd (cwd, sizeof cwd))    /* not made yet: where it would be */
            snprintf (where, sizeof where, "%s/%s%strain", cwd, f, f[0] && f[strlen (f) - 1] != '/' ? "/" : "");
        else
            snprintf (where, sizeof where, "%s/train", wl->data_folder);
    }
    printf ("datagen --dry-run: would write %llu files (%llu subfolders), %s%llu bytes (%.2f GiB) under %s\n",
            (unsigned long long) ds.files, (unsigned long long) (ds.subfolders > 1 ? ds.subfolders : 0),
            exact ? "" : "about ", (unsigned long long) total, total / 1073741824.0, where);
    if (wl->num_files_eval)
        printf ("datagen --dry-run: and %llu evaluation files (%llu subfolders) under valid/ beside it, in the bytes above\n",
                (unsigned long long) wl->num_files_eval,
                (unsigned long long) (wl->num_subfolders_eval > 1 ? wl->num_subfolders_eval : 0));
    int rc = 0;
    if (caps & SB_ENGINE_FOLDER) {
        uint64_t free_bytes;
        if (sb_datafolder_free_bytes (wl->data_folder, &free_bytes, err, err_size) != 0)
            return 1;
        printf ("datagen --dry-run: %llu bytes (%.2f GiB) free there%s\n", (unsigned long long) free_bytes,
                free_bytes / 1073741824.0, total > free_bytes ? ": NOT ENOUGH, datagen would refuse" : "");
        sb_datafolder_scan_t scan;
        char why[1024];
        if (sb_datafolder_scan (wl->data_folder, 0, &scan, why, sizeof why) == 0 && (scan.dataset_files || scan.others))
            printf ("datagen --dry-run: the folder already holds %llu dataset files and %llu other entries\n",
                    (unsigned long long) scan.dataset_files, (unsigned long long) scan.others);
        rc = total > free_bytes ? 2 : 0;
        if (rc)
            snprintf (err, err_size, "not enough space in %s: %llu bytes needed, %llu free", wl->data_folder,
                      (unsigned long long) total, (unsigned long long) free_bytes);
    }
    printf ("datagen --dry-run: nothing written\n");
    fflush (stdout);
    return rc;
}
