/* storage_keys: how the storage keys of a DLIO workload choose shardbench's
 * engine (lib/storage/engine.h), as DLIO_local_changes and mlcommons/storage's
 * files use them. The one place that maps DLIO's storage types to engines.
 *
 * - storage.storage_type: local_fs, parallel_fs (file); direct_fs (the
 *   direct engine: files with O_DIRECT, DLIO's s3dlio direct:// scheme, as
 *   reader.odirect: true); s3; synthetic; s3dlio and object
 *   (mlcommons/storage's files: the URI scheme of data_folder or
 *   storage_root, or storage.protocol, says s3, file or direct).
 * - storage.storage_library (or storage.storage_options.storage_library):
 *   s3dlio | s3torchconnector | minio, DLIO's S3 client: recorded, the I/O is
 *   shardbench's own S3 engine.
 * - An object store's location as DLIO forms object URIs: a data_folder
 *   SCHEME://STORE[/PREFIX] names it itself; otherwise storage_root
 *   STORE[/PREFIX] (or SCHEME://STORE[/PREFIX]) followed by data_folder.
 *   The scheme's engine is found in the registry (lib/storage/engine.h).
 * - Storage keys under reader: are read by no DLIO code; shardbench takes
 *   them as the storage: section's (sb_storage_keys_reader).
 *
 * Errors name file:line and key; credentials are never part of a message.
 * Called by workload.c only. */
#ifndef SB_STORAGE_KEYS_H
#define SB_STORAGE_KEYS_H

#include <stddef.h>

#include "config.h"
#include "engine.h"
#include "workload.h"

/* The family a storage.storage_type names ("file", "s3", "synthetic"), the
 * engine until sb_storage_keys_resolve chooses one; NULL when it names
 * none. Borrowed. */
const char *sb_storage_keys_family (const char *storage_type);

/* The engine that serves a workload whose location has scheme ("file",
 * "direct", "s3", "synthetic"): file, or direct when the files are read
 * with O_DIRECT (wl->odirect); s3; synthetic. NULL for a scheme no engine
 * serves. The one function that names the engine of a workload. Borrowed. */
const char *sb_storage_keys_engine (const char *scheme, const sb_workload_t *wl);

/* setup for an engine's configure or export_credentials op over cfg's keys
 * (borrows cfg and scheme). */
void sb_storage_keys_setup (sb_config_t *cfg, const char *scheme, sb_engine_setup_t *setup);

/* 1 for reader.storage_options and its keys (read by sb_storage_keys_reader). */
int sb_storage_keys_is_reader_option (const char *key);

/* Storage keys under reader: (storage_type, protocol, storage_library,
 * storage_root, endpoint_uris, load_balance_strategy,
 * use_mpi_endpoint_distribution, storage_options.*; mlcommons/storage's
 * s3dlio files). DLIO_local_changes reads none of them and would run on the
 * local files of dataset.data_folder; shardbench takes each as its storage:
 * key when storage: lacks it (copied with its origin and line), logging one
 * warning. Empty values are no value. reader.data_loader_root naming an
 * object store is the data folder (those files' data_folder is "unused");
 * a file:// one is recorded. An object store named this way with no
 * storage_type anywhere sets storage.storage_type object (the URI's scheme
 * decides). A reader: value that disagrees with its storage: one (or an
 * s3:// data_folder) is an error naming both lines. Call before any key is
 * read. Returns 0 or -1 with err. */
int sb_storage_keys_reader (sb_config_t *cfg, char *err, size_t err_size);

/* A storage value left as an upstream placeholder (NAME_PLACEHOLDER, in a
 * storage key or an engine option's alias): -1 with an error saying which
 * override sets it, else 0. */
int sb_storage_keys_placeholders (sb_config_t *cfg, char *err, size_t err_size);

/* Choose the engine (wl->storage.engine, sb_storage_keys_engine; an engine
 * this build lacks is an error naming the key), an object store's STORE and prefix
 * (written back as wl->storage.store and wl->data_folder "SCHEME://STORE/PREFIX"), the
 * local folder of file:// and direct:// URIs (wl->data_folder; direct sets
 * wl->odirect), and wl->storage_type_given, storage_library,
 * storage_protocol, storage_summary and credentials_in_file. Runs after the
 * key table, before the endpoints. Returns 0 or -1 with err. */
int sb_storage_keys_resolve (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size);

/* DLIO's spellings of S3 client settings, after the endpoints:
 * s3_force_path_style (path_style), s3_max_attempts (max_retries + 1),
 * load_balance_strategy (load_balance), use_mpi_endpoint_distribution.
 * A DLIO spelling that disagrees with shardbench's own key is an error.
 * Returns 0 or -1 with err. */
int sb_storage_keys_finish (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size);

/* After the engine options (sb_workload_engine_options): with the s3
 * engine and a storage_library, the engine options that make its requests
 * the library's (lib/storage/s3/s3_shape.h): "library", "record_length"
 * (dataset.record_length_bytes, which s3dlio's HEADs depend on), and, when given,
 * storage_options.multipart_part_bytes as "ckpt_part" and
 * multipart_threshold_bytes as "ckpt_threshold" (they override the
 * library's checkpoint parts). Not keys a file can set. Returns 0 or -1
 * with err. */
int sb_storage_keys_engine_defaults (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size);

/* What DLIO_local_changes refuses in the storage: section as written
 * (before sb_storage_keys_reader copies reader: keys, which DLIO never
 * reads). check 0: storage.storage_type s3dlio or object (mlcommons/storage's),
 * which are not values of DLIO's StorageType, so LoadConfig raises. check 1:
 * storage_type s3 with framework pytorch and neither storage.storage_library
 * nor storage.storage_options.storage_library, which validate raises on.
 * Returns 1 with *at the key's entry and why holding DLIO's refusal and the
 * DLIO-valid spelling of the same run, else 0. */
int sb_storage_keys_dlio_refused (sb_config_t *cfg, int check, const sb_config_entry_t **at, char *why,
                                  size_t size);

#endif
