/* catalog: list once, sort in SQLite, reuse by fingerprint. */
#include "catalog.h"
#include "log.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Fingerprint: FNV-1a over (relative path, dev, inode, mtime) of every
 * folder under train/, in walk order. Files are not stat'ed for it: adding,
 * removing or renaming a file changes its folder's mtime. */
typedef struct {
    uint64_t hash;
    uint64_t folders;
} s_fingerprint_t;

static void
s_fp_add (s_fingerprint_t *fp, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        fp->hash = (fp->hash ^ p[i]) * 0x100000001b3ull;
}

typedef struct {
    sqlite3      *db;
    sqlite3_stmt *ins;
    uint64_t      count;
    uint64_t      bytes;
    s_fingerprint_t fp;
    int           fingerprint_only;
    char         *err;
    size_t        err_size;
} s_walk_t;

/* Walk folder `rel` (relative to base, "train" at the top). */
static int
s_walk (s_walk_t *w, int base_fd, const char *rel)
{
    int fd = openat (base_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf (w->err, w->err_size, "cannot open folder '%s': %s", rel, strerror (errno));
        return -1;
    }
    struct stat st;
    if (fstat (fd, &st) != 0) {
        snprintf (w->err, w->err_size, "cannot stat folder '%s': %s", rel, strerror (errno));
        close (fd);
        return -1;
    }
    s_fp_add (&w->fp, rel, strlen (rel) + 1);
    s_fp_add (&w->fp, &st.st_dev, sizeof st.st_dev);
    s_fp_add (&w->fp, &st.st_ino, sizeof st.st_ino);
    s_fp_add (&w->fp, &st.st_mtim, sizeof st.st_mtim);
    w->fp.folders++;
    DIR *dir = fdopendir (fd);
    if (!dir) {
        snprintf (w->err, w->err_size, "cannot read folder '%s': %s", rel, strerror (errno));
        close (fd);
        return -1;
    }
    int rc = 0;
    struct dirent *de;
    errno = 0;
    while (rc == 0 && (de = readdir (dir))) {
        const char *name = de->d_name;
        if (name[0] == '.')
            continue;   /* ., .., hidden and in-progress (.tmp) files */
        char path[PATH_MAX];
        if (sb_strf (path, sizeof path, "%s/%s", rel, name) != 0) {
            snprintf (w->err, w->err_size, "path too long under '%s'", rel);
            rc = -1;
            break;
        }
        int is_dir = de->d_type == DT_DIR;
        int is_reg = de->d_type == DT_REG;
        struct stat fst;
        int have_stat = 0;
        if (de->d_type == DT_UNKNOWN || de->d_type == DT_LNK || (is_reg && !w->fingerprint_only)) {
            if (fstatat (base_fd, path, &fst, 0) != 0) {
                snprintf (w->err, w->err_size, "cannot stat '%s': %s", path, strerror (errno));
                rc = -1;
                break;
            }
            have_stat = 1;
            is_dir = S_ISDIR (fst.st_mode);
            is_reg = S_ISREG (fst.st_mode);
        }
        if (is_dir)
            rc = s_walk (w, base_fd, path);
        else if (is_reg && !w->fingerprint_only) {
            (void) have_stat;
            sqlite3_reset (w->ins);
            if (sqlite3_bind_text (w->ins, 1, path, -1, SQLITE_TRANSIENT) != SQLITE_OK
                || sqlite3_bind_int64 (w->ins, 2, (int64_t) fst.st_size) != SQLITE_OK
                || sqlite3_step (w->ins) != SQLITE_DONE) {
                snprintf (w->err, w->err_size, "catalog insert: %s", sqlite3_errmsg (w->db));
                rc = -1;
                break;
            }
            w->count++;
            w->bytes += (uint64_t) fst.st_size;
        }
        errno = 0;
    }
    if (rc == 0 && errno != 0) {
        snprintf (w->err, w->err_size, "cannot read folder '%s': %s", rel, strerror (errno));
        rc = -1;
    }
    closedir (dir);
    return rc;
}

static int
s_sql (sqlite3 *db, const char *sql, char *err, size_t err_size)
{
    char *msg = NULL;
    if (sqlite3_exec (db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf (err, err_size, "catalog: %s", msg ? msg : sqlite3_errmsg (db));
        sqlite3_free (msg);
        return -1;
    }
    return 0;
}

/* The newest catalog of uri with this fingerprint. 1 found (info filled),
 * 0 none, -1 error. */
static int
s_lookup (sqlite3 *db, const char *uri, const char *fingerprint, sb_catalog_info_t *info, char *err, size_t err_size)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2 (db, "SELECT id, count, bytes FROM catalogs WHERE uri = ? AND fingerprint = ?"
                            " ORDER BY id DESC LIMIT 1", -1, &q, NULL) != SQLITE_OK
        || sqlite3_bind_text (q, 1, uri, -1, SQLITE_TRANSIENT) != SQLITE_OK
        || sqlite3_bind_text (q, 2, fingerprint, -1, SQLITE_TRANSIENT) != SQLITE_OK) {
        snprintf (err, err_size, "catalog lookup: %s", sqlite3_errmsg (db));
        sqlite3_finalize (q);
        return -1;
    }
    int found = 0;
    if (sqlite3_step (q) == SQLITE_ROW) {
        info->id = sqlite3_column_int64 (q, 0);
        info->count = (uint64_t) sqlite3_column_int64 (q, 1);
        info->bytes = (uint64_t) sqlite3_column_int64 (q, 2);
        info->reused = 1;
        found = 1;
    }
    sqlite3_finalize (q);
    return found;
}

/* A lister streams (key relative to the prefix, size) rows into ins. */
typedef int (*s_lister_fn) (void *ctx, int base_fd, sqlite3 *db, sqlite3_stmt *ins, uint64_t *count, uint64_t *bytes,
                            char *err, size_t err_size);

/* One transaction: staging table filled by the lister, sorted by SQLite
 * into objects(idx) under a new catalogs row. */
static sb_catalog_status_t
s_list_into (sqlite3 *db, const char *uri, const char *prefix, const char *fingerprint, s_lister_fn lister,
             void *ctx, int base_fd, sb_catalog_info_t *info, char *err, size_t err_size)
{
    uint64_t t0 = sb_mono_ns ();
    sqlite3_stmt *ins = NULL, *q = NULL;
    uint64_t count = 0, bytes = 0;
    if (s_sql (db, "BEGIN IMMEDIATE; CREATE TEMP TABLE IF NOT EXISTS catalog_staging (key TEXT NOT NULL, size INTEGER NOT NULL);"
               " DELETE FROM temp.catalog_staging;", err, err_size) != 0)
        return SB_CATALOG_ERROR;
    if (sqlite3_prepare_v2 (db, "INSERT INTO temp.catalog_staging (key, size) VALUES (?, ?)", -1, &ins, NULL) != SQLITE_OK) {
        snprintf (err, err_size, "catalog: %s", sqlite3_errmsg (db));
        goto rollback;
    }
    int rc = lister (ctx, base_fd, db, ins, &count, &bytes, err, err_size);
    sqlite3_finalize (ins);
    if (rc != 0)
        goto rollback;
    if (sqlite3_prepare_v2 (db, "INSERT INTO catalogs (uri, prefix, fingerprint, listed_at, list_s, count, bytes)"
                            " VALUES (?, ?, ?, ?, 0, ?, ?)", -1, &q, NULL) != SQLITE_OK
        || sqlite3_bind_text (q, 1, uri, -1, SQLITE_TRANSIENT) != SQLITE_OK
        || sqlite3_bind_text (q, 2, prefix, -1, SQLITE_TRANSIENT) != SQLITE_OK
        || sqlite3_bind_text (q, 3, fingerprint, -1, SQLITE_TRANSIENT) != SQLITE_OK
        || sqlite3_bind_double (q, 4, sb_now ()) != SQLITE_OK
        || sqlite3_bind_int64 (q, 5, (int64_t) count) != SQLITE_OK
        || sqlite3_bind_int64 (q, 6, (int64_t) bytes) != SQLITE_OK
        || sqlite3_step (q) != SQLITE_DONE) {
        snprintf (err, err_size, "catalog: %s", sqlite3_errmsg (db));
        sqlite3_finalize (q);
        goto rollback;
    }
    sqlite3_finalize (q);
    info->id = sqlite3_last_insert_rowid (db);
    char sql[512];
    snprintf (sql, sizeof sql,
              "INSERT INTO objects (catalog_id, idx, key, size)"
              " SELECT %lld, row_number() OVER (ORDER BY key) - 1, key, size FROM temp.catalog_staging ORDER BY key;"
              " DELETE FROM temp.catalog_staging;", (long long) info->id);
    if (s_sql (db, sql, err, err_size) != 0)
        goto rollback;
    info->count = count;
    info->bytes = bytes;
    info->reused = 0;
    info->list_s = (double) (sb_mono_ns () - t0) / 1e9;
    snprintf (sql, sizeof sql, "UPDATE catalogs SET list_s = %.6f WHERE id = %lld; COMMIT;", info->list_s,
              (long long) info->id);
    if (s_sql (db, sql, err, err_size) != 0)
        goto rollback;
    return SB_CATALOG_OK;
rollback:
    sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
    return SB_CATALOG_ERROR;
}

static int
s_file_lister (void *ctx, int base_fd, sqlite3 *db, sqlite3_stmt *ins, uint64_t *count, uint64_t *bytes, char *err,
               size_t err_size)
{
    s_walk_t *w = ctx;
    w->ins = ins;
    if (s_walk (w, base_fd, "train") != 0)
        return -1;
    *count = w->count;
    *bytes = w->bytes;
    return 0;
}

sb_catalog_status_t
sb_catalog_ensure (sqlite3 *db, const char *data_folder, int relist, sb_catalog_info_t *info,
                   char *err, size_t err_size)
{
    memset (info, 0, sizeof *info);
    char root[PATH_MAX];
    if (!realpath (data_folder, root)) {
        if (errno == ENOENT)
            return SB_CATALOG_MISSING;
        snprintf (err, err_size, "data folder '%s': %s", data_folder, strerror (errno));
        return SB_CATALOG_ERROR;
    }
    int base_fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (base_fd < 0) {
        snprintf (err, err_size, "data folder '%s': %s", root, strerror (errno));
        return SB_CATALOG_ERROR;
    }
    struct stat st;
    if (fstatat (base_fd, "train", &st, 0) != 0) {
        close (base_fd);
        if (errno == ENOENT)
            return SB_CATALOG_MISSING;
        snprintf (err, err_size, "data folder '%s/train': %s", root, strerror (errno));
        return SB_CATALOG_ERROR;
    }
    snprintf (info->prefix, sizeof info->prefix, "%s/", root);
    char uri[PATH_MAX + 16];
    snprintf (uri, sizeof uri, "file://%s/train", root);

    s_walk_t w = { .db = db, .err = err, .err_size = err_size, .fingerprint_only = 1 };
    w.fp.hash = 0xcbf29ce484222325ull;
    if (s_walk (&w, base_fd, "train") != 0) {
        close (base_fd);
        return SB_CATALOG_ERROR;
    }
    char fingerprint[64];
    snprintf (fingerprint, sizeof fingerprint, "%016llx/%llu", (unsigned long long) w.fp.hash,
              (unsigned long long) w.fp.folders);

    int found = relist ? 0 : s_lookup (db, uri, fingerprint, info, err, err_size);
    sb_catalog_status_t status = SB_CATALOG_ERROR;
    if (found > 0)
        status = SB_CATALOG_OK;
    else if (found == 0) {
        w.fingerprint_only = 0;
        w.fp.hash = 0xcbf29ce484222325ull;
        w.fp.folders = 0;
        status = s_list_into (db, uri, info->prefix, fingerprint, s_file_lister, &w, base_fd, info, err, err_size);
    }
    close (base_fd);
    return status;
}

/* ---- S3 ---- */

typedef struct {
    sqlite3_stmt *ins;
    size_t        prefix_len;
    uint64_t      count, bytes;
    int           failed;
    char         *err;
    size_t        err_size;
    sqlite3      *db;
} s_s3_list_t;

static int
s_s3_on_key (void *arg, const char *key, uint64_t size)
{
    s_s3_list_t *l = arg;
    const char *rel = key + l->prefix_len;
    const char *base = strrchr (rel, '/') ? strrchr (rel, '/') + 1 : rel;
    if (base[0] == '.' || key[strlen (key) - 1] == '/')
        return 0;   /* hidden objects and folder markers */
    sqlite3_reset (l->ins);
    if (sqlite3_bind_text (l->ins, 1, rel, -1, SQLITE_TRANSIENT) != SQLITE_OK
        || sqlite3_bind_int64 (l->ins, 2, (int64_t) size) != SQLITE_OK || sqlite3_step (l->ins) != SQLITE_DONE) {
        snprintf (l->err, l->err_size, "catalog insert: %s", sqlite3_errmsg (l->db));
        l->failed = 1;
        return 1;
    }
    l->count++;
    l->bytes += size;
    return 0;
}

typedef struct {
    sb_s3_t    *s3;
    const char *list_prefix;
    size_t      prefix_len;
} s_s3_ctx_t;

static int
s_s3_lister (void *arg, int base_fd, sqlite3 *db, sqlite3_stmt *ins, uint64_t *count, uint64_t *bytes, char *err,
             size_t err_size)
{
    s_s3_ctx_t *c = arg;
    s_s3_list_t l = { .ins = ins, .prefix_len = c->prefix_len, .err = err, .err_size = err_size, .db = db };
    sb_s3_error_t e;
    if (sb_s3_list (c->s3, c->list_prefix, NULL, NULL, 1000, s_s3_on_key, &l, &e) != 0) {
        if (!l.failed)
            snprintf (err, err_size, "listing s3://%s: %s", c->list_prefix, e.text);
        return -1;
    }
    if (l.failed)
        return -1;
    *count = l.count;
    *bytes = l.bytes;
    return 0;
}

sb_catalog_status_t
sb_catalog_ensure_s3 (sqlite3 *db, sb_s3_t *s3, const char *bucket, const char *key_prefix, int relist,
                      sb_catalog_info_t *info, char *err, size_t err_size)
{
    memset (info, 0, sizeof *info);
    if (sb_strf (info->prefix, sizeof info->prefix, "%s", key_prefix) != 0) {
        snprintf (err, err_size, "key prefix too long");
        return SB_CATALOG_ERROR;
    }
    char uri[1400], list_prefix[1200];
    snprintf (uri, sizeof uri, "s3://%s/%strain", bucket, key_prefix);
    snprintf (list_prefix, sizeof list_prefix, "%strain/", key_prefix);
    /* An object store has no cheap change marker: a catalog is reused until
     * --relist (or a datagen, which relists). */
    int found = relist ? 0 : s_lookup (db, uri, "s3", info, err, err_size);
    if (found > 0)
        return SB_CATALOG_OK;
    if (found < 0)
        return SB_CATALOG_ERROR;
    s_s3_ctx_t ctx = { .s3 = s3, .list_prefix = list_prefix, .prefix_len = strlen (key_prefix) };
    sb_catalog_status_t st = s_list_into (db, uri, info->prefix, "s3", s_s3_lister, &ctx, -1, info, err, err_size);
    if (st == SB_CATALOG_OK && info->count == 0)
        return SB_CATALOG_MISSING;
    return st;
}

struct sb_catalog_reader {
    sqlite3_stmt *get;
    int64_t       catalog_id;
};

sb_catalog_reader_t *
sb_catalog_reader_new (sqlite3 *db, int64_t catalog_id, char *err, size_t err_size)
{
    sb_catalog_reader_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->catalog_id = catalog_id;
    if (sqlite3_prepare_v2 (db, "SELECT key, size FROM objects WHERE catalog_id = ? AND idx = ?", -1, &self->get,
                            NULL) != SQLITE_OK) {
        snprintf (err, err_size, "catalog reader: %s", sqlite3_errmsg (db));
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
    sqlite3_finalize ((*self_p)->get);
    free (*self_p);
    *self_p = NULL;
}

int
sb_catalog_reader_get (sb_catalog_reader_t *self, uint64_t idx, char *key_buf, size_t key_size, uint64_t *size)
{
    sqlite3_reset (self->get);
    if (sqlite3_bind_int64 (self->get, 1, self->catalog_id) != SQLITE_OK
        || sqlite3_bind_int64 (self->get, 2, (int64_t) idx) != SQLITE_OK
        || sqlite3_step (self->get) != SQLITE_ROW)
        return -1;
    const unsigned char *key = sqlite3_column_text (self->get, 0);
    if (!key || sb_strf (key_buf, key_size, "%s", (const char *) key) != 0)
        return -1;
    *size = (uint64_t) sqlite3_column_int64 (self->get, 1);
    sqlite3_reset (self->get);
    return 0;
}
