/* catalog_store: the catalog's SQL (catalogs, objects, staging, partitions). */
#include "catalog_store.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int
sb_catalog_store_lookup (sqlite3 *db, const char *uri, const char *fingerprint, int64_t *id, uint64_t *count,
                         uint64_t *bytes, char *err, size_t err_size)
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
        *id = sqlite3_column_int64 (q, 0);
        *count = (uint64_t) sqlite3_column_int64 (q, 1);
        *bytes = (uint64_t) sqlite3_column_int64 (q, 2);
        found = 1;
    }
    sqlite3_finalize (q);
    return found;
}

/* ---- a listing ---- */

struct sb_catalog_listing {
    sqlite3      *db;           /* the caller's */
    int64_t       catalog_id;
    sqlite3_stmt *put;          /* INSERT INTO objects */
    sqlite3_stmt *stage;        /* INSERT INTO temp.catalog_staging; NULL when not staged */
};

static void
s_listing_free (sb_catalog_listing_t *self)
{
    sqlite3_finalize (self->put);
    sqlite3_finalize (self->stage);
    free (self);
}

void
sb_catalog_listing_abort (sb_catalog_listing_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_catalog_listing_t *self = *self_p;
    sqlite3_progress_handler (self->db, 0, NULL, NULL);
    sqlite3 *db = self->db;
    s_listing_free (self);
    sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
    *self_p = NULL;
}

sb_catalog_listing_t *
sb_catalog_listing_begin (sqlite3 *db, const char *uri, const char *prefix, const char *fingerprint, int staged,
                          int (*interrupt) (void *ctx), void *ctx, int64_t *catalog_id, char *err, size_t err_size)
{
    sb_catalog_listing_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->db = db;
    if (s_sql (db, "PRAGMA cache_size = -65536; BEGIN IMMEDIATE;", err, err_size) != 0) {
        free (self);
        return NULL;
    }
    /* a signal also stops SQLite's own long steps (sorting the staged keys) */
    if (interrupt)
        sqlite3_progress_handler (db, 100000, interrupt, ctx);
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2 (db, "INSERT INTO catalogs (uri, prefix, fingerprint, listed_at, list_s, count, bytes)"
                            " VALUES (?, ?, ?, ?, 0, 0, 0)", -1, &q, NULL) != SQLITE_OK
        || sqlite3_bind_text (q, 1, uri, -1, SQLITE_TRANSIENT) != SQLITE_OK
        || sqlite3_bind_text (q, 2, prefix, -1, SQLITE_TRANSIENT) != SQLITE_OK
        || sqlite3_bind_text (q, 3, fingerprint, -1, SQLITE_TRANSIENT) != SQLITE_OK
        || sqlite3_bind_double (q, 4, sb_now ()) != SQLITE_OK
        || sqlite3_step (q) != SQLITE_DONE) {
        snprintf (err, err_size, "catalog: %s", sqlite3_errmsg (db));
        sqlite3_finalize (q);
        sb_catalog_listing_abort (&self);
        return NULL;
    }
    sqlite3_finalize (q);
    self->catalog_id = *catalog_id = sqlite3_last_insert_rowid (db);
    if (staged && s_sql (db, "CREATE TEMP TABLE IF NOT EXISTS catalog_staging (key TEXT NOT NULL, size INTEGER NOT NULL);"
                         " DELETE FROM temp.catalog_staging;", err, err_size) != 0) {
        sb_catalog_listing_abort (&self);
        return NULL;
    }
    if (sqlite3_prepare_v2 (db, "INSERT INTO objects (oid, key, size) VALUES (?1, ?2, ?3)", -1, &self->put, NULL)
            != SQLITE_OK
        || (staged && sqlite3_prepare_v2 (db, "INSERT INTO temp.catalog_staging (key, size) VALUES (?1, ?2)", -1,
                                          &self->stage, NULL) != SQLITE_OK)) {
        snprintf (err, err_size, "catalog: %s", sqlite3_errmsg (db));
        sb_catalog_listing_abort (&self);
        return NULL;
    }
    return self;
}

int
sb_catalog_listing_put_object (sb_catalog_listing_t *self, uint64_t idx, const char *key, size_t len, uint64_t size,
                               char *err, size_t err_size)
{
    sqlite3_reset (self->put);
    int rc = sqlite3_bind_int64 (self->put, 1, SB_CATALOG_STORE_OID (self->catalog_id, idx));
    rc |= key ? sqlite3_bind_text (self->put, 2, key, (int) len, SQLITE_STATIC) : sqlite3_bind_null (self->put, 2);
    rc |= sqlite3_bind_int64 (self->put, 3, (int64_t) size);
    if (rc != SQLITE_OK || sqlite3_step (self->put) != SQLITE_DONE) {
        snprintf (err, err_size, "catalog insert: %s", sqlite3_errmsg (self->db));
        return -1;
    }
    return 0;
}

int
sb_catalog_listing_stage (sb_catalog_listing_t *self, const char *key, size_t len, uint64_t size, char *err,
                          size_t err_size)
{
    if (!self->stage) {
        snprintf (err, err_size, "catalog insert: listing %lld is not staged", (long long) self->catalog_id);
        return -1;
    }
    sqlite3_reset (self->stage);
    int rc = sqlite3_bind_text (self->stage, 1, key, (int) len, SQLITE_STATIC);
    rc |= sqlite3_bind_int64 (self->stage, 2, (int64_t) size);
    if (rc != SQLITE_OK || sqlite3_step (self->stage) != SQLITE_DONE) {
        snprintf (err, err_size, "catalog insert: %s", sqlite3_errmsg (self->db));
        return -1;
    }
    return 0;
}

int
sb_catalog_listing_each_sorted (sb_catalog_listing_t *self,
                                int (*fn) (void *ctx, const char *key, size_t len, uint64_t size), void *ctx,
                                char *err, size_t err_size)
{
    if (!self->stage) {
        snprintf (err, err_size, "catalog: listing %lld is not staged", (long long) self->catalog_id);
        return -1;
    }
    sqlite3_finalize (self->stage);
    self->stage = NULL;
    sqlite3_stmt *sel = NULL;
    if (sqlite3_prepare_v2 (self->db, "SELECT key, size FROM temp.catalog_staging ORDER BY key", -1, &sel, NULL)
        != SQLITE_OK) {
        snprintf (err, err_size, "catalog: %s", sqlite3_errmsg (self->db));
        sqlite3_finalize (sel);
        return -1;
    }
    int src;
    while ((src = sqlite3_step (sel)) == SQLITE_ROW
           && fn (ctx, (const char *) sqlite3_column_text (sel, 0), (size_t) sqlite3_column_bytes (sel, 0),
                  (uint64_t) sqlite3_column_int64 (sel, 1)) == 0)
        ;
    sqlite3_finalize (sel);
    if (src != SQLITE_DONE) {
        if (src != SQLITE_ROW)
            snprintf (err, err_size, "catalog: %s", sqlite3_errmsg (self->db));
        return -1;
    }
    return s_sql (self->db, "DELETE FROM temp.catalog_staging;", err, err_size);
}

int
sb_catalog_listing_record (sb_catalog_listing_t *self, double list_s, uint64_t count, uint64_t bytes,
                           const char *naming, char *err, size_t err_size)
{
    char sql[512];
    snprintf (sql, sizeof sql, "UPDATE catalogs SET list_s = %.6f, count = %llu, bytes = %llu WHERE id = %lld;",
              list_s, (unsigned long long) count, (unsigned long long) bytes, (long long) self->catalog_id);
    if (s_sql (self->db, sql, err, err_size) != 0)
        return -1;
    if (!naming)
        return 0;
    sqlite3_stmt *u = NULL;
    if (sqlite3_prepare_v2 (self->db, "UPDATE catalogs SET naming = ? WHERE id = ?", -1, &u, NULL) != SQLITE_OK
        || sqlite3_bind_text (u, 1, naming, -1, SQLITE_TRANSIENT) != SQLITE_OK
        || sqlite3_bind_int64 (u, 2, self->catalog_id) != SQLITE_OK || sqlite3_step (u) != SQLITE_DONE) {
        snprintf (err, err_size, "catalog: %s", sqlite3_errmsg (self->db));
        sqlite3_finalize (u);
        return -1;
    }
    sqlite3_finalize (u);
    return 0;
}

int
sb_catalog_listing_commit (sb_catalog_listing_t **self_p, char *err, size_t err_size)
{
    sb_catalog_listing_t *self = *self_p;
    sqlite3_progress_handler (self->db, 0, NULL, NULL);
    sqlite3_finalize (self->put);
    sqlite3_finalize (self->stage);
    self->put = self->stage = NULL;
    if (s_sql (self->db, "COMMIT;", err, err_size) != 0) {
        sb_catalog_listing_abort (self_p);
        return -1;
    }
    free (self);
    *self_p = NULL;
    return 0;
}

/* ---- a partition of a parallel listing ---- */

struct sb_catalog_part {
    sqlite3      *db;           /* private temporary database: lives as long as this connection */
    sqlite3_stmt *ins;
};

#define S_PART_ERR "listing partition (temporary database): %s"

sb_catalog_part_t *
sb_catalog_part_open (char *err, size_t err_size)
{
    sb_catalog_part_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, S_PART_ERR, "out of memory");
        return NULL;
    }
    /* "": SQLite's own temporary file (random name, opened exclusively,
     * unlinked right after open): nothing is left behind, even after SIGKILL */
    if (sqlite3_open_v2 ("", &self->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK
        || sqlite3_exec (self->db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                         " CREATE TABLE part (key TEXT NOT NULL, size INTEGER NOT NULL); BEGIN;", NULL, NULL, NULL) != SQLITE_OK
        || sqlite3_prepare_v2 (self->db, "INSERT INTO part (key, size) VALUES (?, ?)", -1, &self->ins, NULL) != SQLITE_OK) {
        snprintf (err, err_size, S_PART_ERR, self->db ? sqlite3_errmsg (self->db) : "out of memory");
        sqlite3_close (self->db);
        free (self);
        return NULL;
    }
    return self;
}

int
sb_catalog_part_add (sb_catalog_part_t *self, const char *key, uint64_t size, char *err, size_t err_size)
{
    sqlite3_reset (self->ins);
    if (sqlite3_bind_text (self->ins, 1, key, -1, SQLITE_STATIC) != SQLITE_OK
        || sqlite3_bind_int64 (self->ins, 2, (int64_t) size) != SQLITE_OK || sqlite3_step (self->ins) != SQLITE_DONE) {
        snprintf (err, err_size, S_PART_ERR, sqlite3_errmsg (self->db));
        return -1;
    }
    return 0;
}

int
sb_catalog_part_commit (sb_catalog_part_t *self, char *err, size_t err_size)
{
    sqlite3_finalize (self->ins);
    self->ins = NULL;
    if (sqlite3_exec (self->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf (err, err_size, S_PART_ERR, sqlite3_errmsg (self->db));
        return -1;
    }
    return 0;
}

int
sb_catalog_part_each (sb_catalog_part_t *self, int (*fn) (void *ctx, const char *key, size_t len, uint64_t size),
                      void *ctx, char *err, size_t err_size)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2 (self->db, "SELECT key, size FROM part ORDER BY rowid", -1, &q, NULL) != SQLITE_OK) {
        snprintf (err, err_size, S_PART_ERR, sqlite3_errmsg (self->db));
        sqlite3_finalize (q);
        return -1;
    }
    int rc = 0;
    while (rc == 0 && sqlite3_step (q) == SQLITE_ROW) {
        const char *key = (const char *) sqlite3_column_text (q, 0);
        int len = sqlite3_column_bytes (q, 0);
        if (fn (ctx, key, (size_t) len, (uint64_t) sqlite3_column_int64 (q, 1)) != 0)
            rc = -1;
    }
    sqlite3_finalize (q);
    return rc;
}

void
sb_catalog_part_close (sb_catalog_part_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sqlite3_finalize ((*self_p)->ins);
    sqlite3_close ((*self_p)->db);
    free (*self_p);
    *self_p = NULL;
}

/* ---- a catalog reader's reads ---- */

char *
sb_catalog_store_naming (sqlite3 *db, int64_t catalog_id)
{
    sqlite3_stmt *q = NULL;
    char *naming = NULL;
    if (sqlite3_prepare_v2 (db, "SELECT naming FROM catalogs WHERE id = ?", -1, &q, NULL) == SQLITE_OK
        && sqlite3_bind_int64 (q, 1, catalog_id) == SQLITE_OK && sqlite3_step (q) == SQLITE_ROW
        && sqlite3_column_type (q, 0) != SQLITE_NULL)
        naming = strdup ((const char *) sqlite3_column_text (q, 0));
    sqlite3_finalize (q);
    return naming;
}

int
sb_catalog_store_count (sqlite3 *db, int64_t catalog_id, uint64_t *count, char *err, size_t err_size)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2 (db, "SELECT count FROM catalogs WHERE id = ?", -1, &q, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (q, 1, catalog_id) != SQLITE_OK || sqlite3_step (q) != SQLITE_ROW) {
        snprintf (err, err_size, "catalog %lld: cannot read its size: %s", (long long) catalog_id, sqlite3_errmsg (db));
        sqlite3_finalize (q);
        return -1;
    }
    *count = (uint64_t) sqlite3_column_int64 (q, 0);
    sqlite3_finalize (q);
    return 0;
}

int
sb_catalog_store_bytes (sqlite3 *db, int64_t catalog_id, uint64_t *bytes, char *err, size_t err_size)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2 (db, "SELECT bytes FROM catalogs WHERE id = ?", -1, &q, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (q, 1, catalog_id) != SQLITE_OK || sqlite3_step (q) != SQLITE_ROW) {
        snprintf (err, err_size, "catalog %lld: cannot read its bytes: %s", (long long) catalog_id,
                  sqlite3_errmsg (db));
        sqlite3_finalize (q);
        return -1;
    }
    *bytes = (uint64_t) sqlite3_column_int64 (q, 0);
    sqlite3_finalize (q);
    return 0;
}

void
sb_catalog_store_release_cache (sqlite3 *db)
{
    sqlite3_db_release_memory (db);
}

int
sb_catalog_store_scan (sqlite3 *db, int64_t catalog_id, int (*fn) (void *ctx, uint64_t idx, int stored, int64_t size),
                       void *ctx, char *err, size_t err_size)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2 (db, "SELECT oid, key IS NOT NULL, size FROM objects WHERE oid >= ? AND oid < ?", -1, &q,
                            NULL) != SQLITE_OK
        || sqlite3_bind_int64 (q, 1, SB_CATALOG_STORE_OID (catalog_id, 0)) != SQLITE_OK
        || sqlite3_bind_int64 (q, 2, SB_CATALOG_STORE_OID (catalog_id + 1, 0)) != SQLITE_OK) {
        snprintf (err, err_size, "catalog index: %s", sqlite3_errmsg (db));
        sqlite3_finalize (q);
        return -1;
    }
    /* a sequential pass needs no page cache: keep it at 8 MiB meanwhile */
    sqlite3_int64 cache_pages = 0;
    sqlite3_stmt *pragma = NULL;
    if (sqlite3_prepare_v2 (db, "PRAGMA cache_size", -1, &pragma, NULL) == SQLITE_OK
        && sqlite3_step (pragma) == SQLITE_ROW)
        cache_pages = sqlite3_column_int64 (pragma, 0);
    sqlite3_finalize (pragma);
    sqlite3_exec (db, "PRAGMA cache_size = -8192", NULL, NULL, NULL);
    int rc;
    while ((rc = sqlite3_step (q)) == SQLITE_ROW)
        if (fn (ctx, (uint64_t) sqlite3_column_int64 (q, 0) & ((1ull << 40) - 1), sqlite3_column_int (q, 1) != 0,
                sqlite3_column_int64 (q, 2)) != 0)
            break;
    sqlite3_finalize (q);
    char restore[64];
    snprintf (restore, sizeof restore, "PRAGMA cache_size = %lld", (long long) cache_pages);
    if (cache_pages != 0)
        sqlite3_exec (db, restore, NULL, NULL, NULL);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        snprintf (err, err_size, "catalog index: %s", sqlite3_errmsg (db));
    return -1;
}

struct sb_catalog_objects {
    sqlite3      *db;           /* the caller's */
    sqlite3_stmt *get;
    int64_t       catalog_id;
};

sb_catalog_objects_t *
sb_catalog_objects_open (sqlite3 *db, int64_t catalog_id, char *err, size_t err_size)
{
    sb_catalog_objects_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->db = db;
    self->catalog_id = catalog_id;
    if (sqlite3_prepare_v2 (db, "SELECT key, size FROM objects WHERE oid = ?", -1, &self->get, NULL) != SQLITE_OK) {
        snprintf (err, err_size, "catalog reader: %s", sqlite3_errmsg (db));
        sqlite3_finalize (self->get);
        free (self);
        return NULL;
    }
    return self;
}

int
sb_catalog_objects_get (sb_catalog_objects_t *self, uint64_t idx, char *key_buf, size_t key_size, int *named,
                        uint64_t *size)
{
    sqlite3_reset (self->get);
    if (idx >= (1ull << 40) || sqlite3_bind_int64 (self->get, 1, SB_CATALOG_STORE_OID (self->catalog_id, idx)) != SQLITE_OK
        || sqlite3_step (self->get) != SQLITE_ROW)
        return -1;
    const unsigned char *key = sqlite3_column_text (self->get, 0);
    *named = key == NULL;
    if (key && sb_strf (key_buf, key_size, "%s", (const char *) key) != 0) {
        sqlite3_reset (self->get);
        return -1;
    }
    *size = (uint64_t) sqlite3_column_int64 (self->get, 1);
    sqlite3_reset (self->get);
    return 0;
}

void
sb_catalog_objects_close (sb_catalog_objects_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sqlite3_finalize ((*self_p)->get);
    free (*self_p);
    *self_p = NULL;
}
