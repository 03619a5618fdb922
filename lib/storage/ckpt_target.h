/* ckpt_target: where checkpoints go, from checkpoint.checkpoint_folder's
 * own scheme, whatever storage the dataset is on.
 *
 * DLIO opens the checkpoint folder as a storage of its own: its checkpoint
 * writers join checkpoint_folder and the file name into one URI, and the
 * URI's scheme picks the back end (s3dlio: s3:// objects, file:// files;
 * mlcommons/storage's hybrid_storage.yaml reads its dataset from an object
 * store and writes checkpoints to file:///nvme/...; multi_endpoint_*.yaml
 * read store A and checkpoint into s3://B/). shardbench does the same:
 *   SCHEME://STORE[/PREFIX]
 *                          objects in STORE under PREFIX/ through the
 *                          engine that serves SCHEME (the registry), on the
 *                          dataset's endpoints and credentials and that
 *                          engine's options (with a local dataset: the
 *                          storage.storage_options endpoint keys must name
 *                          an endpoint)
 *   file://PATH, direct://PATH, /PATH
 *                          local files under PATH, with any dataset
 *   RELATIVE               a dataset in an object store: key prefix
 *                          RELATIVE/ in the dataset's store; otherwise a
 *                          local folder
 * Other schemes are refused, naming the key.
 *
 * The coordinator sends the target to workers as one string (PHASE_START
 * ckpt_root): "SCHEME://STORE/PREFIX/" or an absolute local folder ending
 * in '/'. No credential is ever part of it. */
#ifndef SB_CKPT_TARGET_H
#define SB_CKPT_TARGET_H

#include <limits.h>
#include <stddef.h>

#include "config.h"
#include "storage.h"
#include "workload.h"

typedef struct {
    char engine[16];        /* an object store's engine ("s3", "azure"); "": local files */
    char scheme[16];        /* its URI scheme ("s3", "az") */
    int  direct;            /* the folder was given as direct:// (written like file://) */
    char store[256];        /* object store: its top-level name */
    char path[PATH_MAX];    /* object store: key prefix, '/'-ended or ""; files: the folder as given, without scheme */
} sb_ckpt_target_t;

/* The target of wl->ckpt.folder for a dataset on wl->storage (see above).
 * Returns 0, or -1 with err naming checkpoint.checkpoint_folder. */
int sb_ckpt_target_resolve (const sb_workload_t *wl, sb_ckpt_target_t *t, char *err, size_t err_size);

/* A target in an object store with a local dataset needs a configured endpoint: 0, or
 * -1 with err naming the key and how to give one. */
int sb_ckpt_target_endpoints (const sb_workload_t *wl, const sb_ckpt_target_t *t, char *err, size_t err_size);

/* At load, after the endpoints (workload.c): when the checkpoint folder is
 * in an object store and the dataset is not, its endpoints are checked as a dataset's
 * (http(s)://HOST[:PORT]; HOST:PORT gets http://). With checkpoints during
 * training (workflow.train and workflow.checkpoint) the folder must resolve
 * and one in an object store needs an endpoint; otherwise the `checkpoint` command's
 * session resolves it (sb_ckpt_target_resolve, _endpoints). Errors name
 * file:line and the key. Returns 0 or -1. */
int sb_ckpt_target_check (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size);

/* The wire form (PHASE_START ckpt_root): "SCHEME://STORE/PREFIX" or a local
 * folder (made absolute by the caller), into out. Returns 0, or -1 when it
 * does not fit. */
int sb_ckpt_target_uri (const sb_ckpt_target_t *t, char *out, size_t size);

/* A worker's side: ckpt_root (the wire form, or "" then data_root, a
 * dataset root of storage's engine) into the storage to use (a copy of
 * storage, with the engine and store of the target, or "file" for a
 * local folder; the dataset engine's options go only with that engine) and
 * root, the prefix of every checkpoint file's path or key. Returns 0, or -1
 * with err. */
int sb_ckpt_target_open (const char *ckpt_root, const char *data_root, const sb_storage_cfg_t *storage,
                         sb_storage_cfg_t *out, char *root, size_t root_size, char *err, size_t err_size);

/* Bytes that writing files names[0..n) of sizes[0..n) in place into folder
 * (a local folder, ending with '/') still takes from its file system: each
 * file's size less the blocks a regular file of that name holds there now
 * (stat st_blocks), which its truncation frees first. A rewritten
 * checkpoint needs only what it adds; a file another writer is writing
 * counts with what it has so far, as the file system's free space does.
 * Saturates at UINT64_MAX. */
uint64_t sb_ckpt_target_more_bytes (const char *folder, char *const *names, const uint64_t *sizes, size_t n);

#endif
