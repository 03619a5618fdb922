/* catalog: the dataset listed once into SQLite and reused.
 *
 * A catalog is a catalogs row plus objects(idx, key, size) in name order.
 * Listing streams directory entries into a staging table and lets SQLite
 * sort them, so the coordinator never holds the key list in memory. A later
 * run reuses the catalog unless the folder changed (its fingerprint: the
 * identity and mtime of every folder in train/) or --relist is given.
 * The evaluation set (valid/) is listed the same way into its own catalog
 * (sb_catalog_ensure_split). */
#ifndef SB_CATALOG_H
#define SB_CATALOG_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "engine.h"

typedef struct {
    int64_t  id;
    uint64_t count;         /* objects listed */
    uint64_t bytes;
    double   list_s;        /* time the listing took (0 when reused) */
    int      reused;
    int      rowless;       /* listed now: no object row stored (every key the DLIO name of its
                             * position, every size bytes / count: the reader derives them) */
    char     prefix[1100];  /* absolute data folder + "/" */
} sb_catalog_info_t;

typedef enum { SB_CATALOG_OK = 0, SB_CATALOG_MISSING = 1, SB_CATALOG_ERROR = -1 } sb_catalog_status_t;

/* Called from time to time (about every 0.2 s) during a long listing or
 * index load, on the calling thread: the coordinator keeps its heartbeats
 * going with it. When fn returns nonzero (a signal), the listing stops: the
 * call ends with SB_CATALOG_ERROR (or the reader with NULL), err says it
 * was interrupted, and nothing of it is committed. NULL to unset. Not
 * thread-safe: set it before listing. */
void sb_catalog_set_progress (int (*fn) (void *ctx), void *ctx);
/* Objects listed so far by the listing in progress (to the nearest 1024). */
uint64_t sb_catalog_progress_count (void);

/* Every listing stores keys compactly: relative to the catalog's prefix,
 * and NULL for an object whose key is the DLIO name that naming (may be
 * NULL: no compaction) gives its position; the reader rebuilds those. When
 * every key is and every size is the same, no object row is stored at all:
 * the catalogs row (naming, count, bytes) says everything.
 *
 * List (or reuse) the objects under data_folder/train. Returns
 * SB_CATALOG_MISSING when data_folder/train does not exist (nothing is
 * written), SB_CATALOG_ERROR with err set on failure. */
sb_catalog_status_t sb_catalog_ensure (sqlite3 *db, const char *data_folder, const sb_dataset_t *naming,
                                       int relist, sb_catalog_info_t *info, char *err, size_t err_size);

/* The same for a split of the data folder: "train" (sb_catalog_ensure), or
 * "valid", DLIO's evaluation set, listed into a catalog of its own
 * (uri file://ROOT/valid, keys "valid/..." relative to the same prefix) and
 * reused while current as train/'s is. naming, when given, has that split
 * (its DLIO names are under it). */
sb_catalog_status_t sb_catalog_ensure_split (sqlite3 *db, const char *data_folder, const char *split,
                                             const sb_dataset_t *naming, int relist, sb_catalog_info_t *info,
                                             char *err, size_t err_size);
/* sb_catalog_ensure_split through storage's engine, which must keep a
 * folder tree (SB_ENGINE_FOLDER: file, direct): its listing
 * (sb_storage_list) and fingerprint (sb_storage_fingerprint) of
 * data_folder/split. sb_catalog_ensure_split is this with the file engine. */
sb_catalog_status_t sb_catalog_ensure_folder (sqlite3 *db, const sb_storage_cfg_t *storage, const char *data_folder,
                                              const char *split, const sb_dataset_t *naming, int relist,
                                              sb_catalog_info_t *info, char *err, size_t err_size);

/* List (or reuse) the objects under KEY_PREFIXtrain/ of an object store
 * (an engine with SB_ENGINE_LIST_ORDERED) through client
 * (key_prefix empty or ending with '/'; the catalog's URI is
 * ENGINE://STORE/KEY_PREFIXtrain, STORE the object store's top-level name). Keys are stored relative to key_prefix.
 * With cfg->list_parallelism > 1 the listing runs as that many streams over
 * key ranges cut at the names ds would have (ds may be NULL: one stream),
 * each on a client of its own opened from cfg; the result is the same as
 * one stream's. An object store has no cheap change marker: the newest
 * catalog of the same URI is reused unless relist. SB_CATALOG_MISSING when
 * the listing finds no object. */
sb_catalog_status_t sb_catalog_ensure_objects (sqlite3 *db, sb_storage_t *client, const sb_storage_cfg_t *cfg,
                                               const sb_dataset_t *ds, const char *key_prefix, int relist,
                                               sb_catalog_info_t *info, char *err, size_t err_size);
/* The same under KEY_PREFIX<split>/ ("train" or "valid"; ds, when given,
 * names that split's objects). */
sb_catalog_status_t sb_catalog_ensure_objects_split (sqlite3 *db, sb_storage_t *client, const sb_storage_cfg_t *cfg,
                                                     const char *split, const sb_dataset_t *ds,
                                                     const char *key_prefix, int relist, sb_catalog_info_t *info,
                                                     char *err, size_t err_size);

/* List (or reuse) the objects of a synthetic dataset: DLIO names and seeded
 * sizes for ds->files objects, no I/O. Keys are appended in name order. */
sb_catalog_status_t sb_catalog_ensure_synthetic (sqlite3 *db, const sb_dataset_t *ds, int relist,
                                                 sb_catalog_info_t *info, char *err, size_t err_size);

/* Row id of object idx of a catalog (schemas/results.sql). */
#define SB_CATALOG_OID(catalog_id, idx) ((int64_t) (((uint64_t) (catalog_id) << 40) | (uint64_t) (idx)))

/* Reader of one catalog's objects by idx: an in-memory index of sizes, and
 * a prepared statement for stored keys. */
typedef struct sb_catalog_reader sb_catalog_reader_t;

sb_catalog_reader_t *sb_catalog_reader_new (sqlite3 *db, int64_t catalog_id, char *err, size_t err_size);
/* Size of an object a naming reader cannot know (read it whole). */
#define SB_CATALOG_SIZE_UNKNOWN UINT64_MAX

/* A reader with no catalog at all (dataset.skip_listing): keys follow
 * DLIO's naming convention for object idx of ds (copied); sizes are exact
 * for synthetic datasets (exact_sizes), else SB_CATALOG_SIZE_UNKNOWN. */
sb_catalog_reader_t *sb_catalog_reader_new_naming (const sb_dataset_t *ds, int exact_sizes, char *err,
                                                   size_t err_size);
/* A reader with no catalog at all whose positions are in name order, as a
 * listing of ds would give them (synthetic storage: what listing it would
 * have stored, derived instead): position p is the object sb_dataset_key_sorted
 * names, locate's DLIO index sb_dataset_index_at (p). Holds no per-object
 * state: a billion objects cost what ten do. sizes as new_naming's. */
sb_catalog_reader_t *sb_catalog_reader_new_derived (const sb_dataset_t *ds, int exact_sizes, char *err,
                                                    size_t err_size);
/* 1 when the reader holds no catalog (new_naming, new_derived): every
 * name and, with exact sizes, every size follows from the naming alone. */
int sb_catalog_reader_is_derived (const sb_catalog_reader_t *self);
/* 1 when a derived reader gives the generator's exact sizes. */
int sb_catalog_reader_exact_sizes (const sb_catalog_reader_t *self);
void sb_catalog_reader_destroy (sb_catalog_reader_t **self_p);

/* Size of object idx, from memory (no SQLite): returns 1 when its key is
 * the DLIO name of object *dlio_index under sb_catalog_reader_naming, 0 when
 * the key is stored (sb_catalog_reader_get has it), -1 when idx is out of
 * range. A database reader loads the index (4 bytes per object, none when
 * all sizes are equal) when it is made. */
int sb_catalog_reader_locate (sb_catalog_reader_t *self, uint64_t idx, uint64_t *size, uint64_t *dlio_index);

/* The naming rule behind locate's DLIO indices (owned by the reader), or
 * NULL when the catalog has none. */
const sb_dataset_t *sb_catalog_reader_naming (const sb_catalog_reader_t *self);

/* 1 when every object's key is the DLIO name of its position under
 * sb_catalog_reader_naming (no key stored, as many objects as the naming
 * holds), else 0. */
int sb_catalog_reader_all_named (const sb_catalog_reader_t *self);

/* Key (relative to the catalog prefix) and size of object idx. key is
 * copied into key_buf. Returns 0, or -1 when absent or on error. */
int sb_catalog_reader_get (sb_catalog_reader_t *self, uint64_t idx, char *key_buf, size_t key_size,
                           uint64_t *size);

#endif
