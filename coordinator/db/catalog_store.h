/* catalog_store: every SQL statement behind the catalog (catalog.h).
 *
 * The catalog module decides what is listed, in which order and how keys are
 * compacted; this module alone talks to SQLite about it: the catalogs row,
 * its objects(oid, key, size) (schemas/results.sql), the staging table a
 * listing in directory order is sorted through, the temporary databases of
 * a parallel listing's streams, and the reads of a catalog reader.
 *
 * The sqlite3 handle is the caller's (the result database's): no function
 * here opens or closes it. Every object made here (listing, partition,
 * object reader) is owned by its caller and ended by the matching
 * commit/abort/close. Error texts name the operation and SQLite's cause. */
#ifndef SB_CATALOG_STORE_H
#define SB_CATALOG_STORE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* Row id of object idx of a catalog: the same value as catalog.h's
 * SB_CATALOG_OID. */
#define SB_CATALOG_STORE_OID(catalog_id, idx) ((int64_t) (((uint64_t) (catalog_id) << 40) | (uint64_t) (idx)))

/* The newest catalog of uri with this fingerprint: 1 when found (*id,
 * *count, *bytes set), 0 when there is none, -1 on error (err set). */
int sb_catalog_store_lookup (sqlite3 *db, const char *uri, const char *fingerprint, int64_t *id, uint64_t *count,
                             uint64_t *bytes, char *err, size_t err_size);

/* ---- a listing: one transaction that writes one catalog ---- */

typedef struct sb_catalog_listing sb_catalog_listing_t;

/* Begin a listing in one transaction (BEGIN IMMEDIATE): a new catalogs row
 * for uri, prefix and fingerprint (its id in *catalog_id) with no objects
 * yet. staged: keys come in any order and are appended with
 * sb_catalog_listing_stage into a staging table (temp.catalog_staging,
 * emptied here) that sb_catalog_listing_each_sorted reads back in key order;
 * else they come in key order and go straight to
 * sb_catalog_listing_put_object. interrupt (may be NULL) is called by
 * SQLite during long statements (the sort): nonzero stops the statement.
 * Returns the listing (the caller's, until commit or abort), or NULL with
 * err set and nothing written. */
sb_catalog_listing_t *sb_catalog_listing_begin (sqlite3 *db, const char *uri, const char *prefix,
                                                const char *fingerprint, int staged, int (*interrupt) (void *ctx),
                                                void *ctx, int64_t *catalog_id, char *err, size_t err_size);

/* Object idx of the catalog: key (len bytes, not copied beyond the call) or
 * NULL when the key is the DLIO name of idx (stored NULL), and its size.
 * 0, or -1 with err set ("catalog insert: ..."). */
int sb_catalog_listing_put_object (sb_catalog_listing_t *self, uint64_t idx, const char *key, size_t len,
                                   uint64_t size, char *err, size_t err_size);

/* A (key, size) of a staged listing, in any order. 0, or -1 with err set
 * ("catalog insert: ..."). */
int sb_catalog_listing_stage (sb_catalog_listing_t *self, const char *key, size_t len, uint64_t size, char *err,
                              size_t err_size);

/* The staged rows in key order, each given to fn (key valid during the
 * call only); a nonzero fn stops the pass (fn sets err). Then the staging
 * table is emptied. 0, or -1 (err set). */
int sb_catalog_listing_each_sorted (sb_catalog_listing_t *self,
                                    int (*fn) (void *ctx, const char *key, size_t len, uint64_t size), void *ctx,
                                    char *err, size_t err_size);

/* Record the listing's totals on its catalogs row: the time it took, its
 * count and bytes, and naming (may be NULL: none), the text a reader
 * rebuilds NULL keys from. Not committed yet. 0, or -1 (err set). */
int sb_catalog_listing_record (sb_catalog_listing_t *self, double list_s, uint64_t count, uint64_t bytes,
                               const char *naming, char *err, size_t err_size);

/* Commit the listing and free it (*self_p NULL after). On failure it is
 * rolled back instead: -1 with err set. */
int sb_catalog_listing_commit (sb_catalog_listing_t **self_p, char *err, size_t err_size);

/* Roll the listing back (no catalog is left of it) and free it. */
void sb_catalog_listing_abort (sb_catalog_listing_t **self_p);

/* ---- a partition of a parallel listing ---- */

/* One stream's keys, in the order listed, in a private temporary database
 * (SQLite names it and unlinks it at once: nothing is left behind). Made
 * and filled on the stream's thread, read back and closed by the caller. */
typedef struct sb_catalog_part sb_catalog_part_t;

/* A new, empty partition, its insert transaction open; NULL with err set. */
sb_catalog_part_t *sb_catalog_part_open (char *err, size_t err_size);
/* Append (key, size). 0, or -1 with err set. */
int sb_catalog_part_add (sb_catalog_part_t *self, const char *key, uint64_t size, char *err, size_t err_size);
/* Commit what was appended. 0, or -1 with err set. */
int sb_catalog_part_commit (sb_catalog_part_t *self, char *err, size_t err_size);
/* Every row in the order appended, to fn (key valid during the call only);
 * a nonzero fn stops (fn sets err). 0, or -1 (err set). */
int sb_catalog_part_each (sb_catalog_part_t *self, int (*fn) (void *ctx, const char *key, size_t len, uint64_t size),
                          void *ctx, char *err, size_t err_size);
/* Close the partition (its temporary database goes). NULL is fine. */
void sb_catalog_part_close (sb_catalog_part_t **self_p);

/* ---- a catalog reader's reads ---- */

/* The naming text of a catalog (see sb_catalog_listing_record): a copy the
 * caller frees, or NULL when it has none (or it cannot be read). */
char *sb_catalog_store_naming (sqlite3 *db, int64_t catalog_id);

/* The object count of a catalog into *count. 0, or -1 with err set. */
int sb_catalog_store_count (sqlite3 *db, int64_t catalog_id, uint64_t *count, char *err, size_t err_size);
/* The bytes of a catalog (the sum of its sizes) into *bytes. 0, or -1 with err set. */
int sb_catalog_store_bytes (sqlite3 *db, int64_t catalog_id, uint64_t *bytes, char *err, size_t err_size);

/* One sequential pass over a catalog's objects in idx order, each given to
 * fn: its idx, whether its key is stored (not NULL) and its size. The page
 * cache is kept at 8 MiB during the pass and restored after. A nonzero fn
 * stops the pass (fn sets err). 0 when every row was given, -1 (err set). */
int sb_catalog_store_scan (sqlite3 *db, int64_t catalog_id,
                           int (*fn) (void *ctx, uint64_t idx, int stored, int64_t size), void *ctx, char *err,
                           size_t err_size);

/* Free what SQLite caches for db (before and after a reader's pass). */
void sb_catalog_store_release_cache (sqlite3 *db);

/* Reads of single objects of one catalog (a prepared statement on db, which
 * must outlive it; the caller's). NULL with err set on failure. */
typedef struct sb_catalog_objects sb_catalog_objects_t;

sb_catalog_objects_t *sb_catalog_objects_open (sqlite3 *db, int64_t catalog_id, char *err, size_t err_size);
/* Object idx: its stored key copied into key_buf (*named 0), or *named 1
 * when its key is NULL (a DLIO name, key_buf untouched), and its size.
 * 0, or -1 when absent, too long for key_buf or on error. */
int sb_catalog_objects_get (sb_catalog_objects_t *self, uint64_t idx, char *key_buf, size_t key_size, int *named,
                            uint64_t *size);
void sb_catalog_objects_close (sb_catalog_objects_t **self_p);

#endif
