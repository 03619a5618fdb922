/* datafolder: what a local data folder holds beside its dataset, so that two
 * generations never mix and a write never leaves litter behind.
 *
 * - The lock, DATA_FOLDER/.shardbench.lock (flock(2)): the coordinator holds
 *   it for its whole session, exclusive while it generates, shared while it
 *   only reads. The exclusive holder writes "host H pid P ..." into it, so
 *   that a refused second datagen can name it. The kernel drops the lock
 *   when its holder dies: a lock is never stale.
 * - The marker, DATA_FOLDER/.shardbench-dataset: key=value lines saying what
 *   generated train/ (the workload keys that decide names, sizes and
 *   content) and whether that datagen finished (state=complete) or not
 *   (state=generating, written before the first file). A run over a
 *   complete one also compares every listed file with the size its
 *   generator wrote (coordinator/session/storage_setup.c).
 * - The probe, DATA_FOLDER/.shardbench-probe-TOKEN holding TOKEN: a worker
 *   that cannot read it back does not see the coordinator's folder.
 * - Temporaries of writes in progress: .NAME.HOST.PID.RAND.tmp beside NAME,
 *   renamed to NAME when whole. Any ".*.tmp" under train/ is one of ours
 *   (or of an older shardbench); only a session holding the exclusive lock
 *   removes them.
 *
 * Dataset files are the names DLIO gives: PREFIX_DIGITS_of_DIGITS.EXT in
 * train/ or train/SUB/ (PREFIX may be empty: _DIGITS_of_DIGITS.EXT). */
#ifndef SB_DATAFOLDER_H
#define SB_DATAFOLDER_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

#define SB_DATAFOLDER_LOCK   ".shardbench.lock"
#define SB_DATAFOLDER_MARKER ".shardbench-dataset"
#define SB_DATAFOLDER_PROBE  ".shardbench-probe-"

/* Take the lock of folder (which must exist), without waiting: exclusive
 * (datagen) or shared (a run that only reads). what ("datagen", "run") goes
 * into the holder line of an exclusive lock. Returns the lock's descriptor
 * (>= 0; close it, or sb_datafolder_unlock, to release), -1 with err
 * naming the folder and the holder, or (shared only) -2 with err when the
 * folder is read-only here and holds no lock file: a read-only dataset is
 * read without a lock. */
int sb_datafolder_lock (const char *folder, int exclusive, const char *what, char *err, size_t err_size);

/* Turn a shared lock fd into an exclusive one, without waiting. Returns 0,
 * or -1 with err naming the folder (another session reads or writes it). */
int sb_datafolder_lock_upgrade (int fd, const char *folder, const char *what, char *err, size_t err_size);

/* Release a lock (fd < 0 does nothing) and set *fd_p to -1. */
void sb_datafolder_unlock (int *fd_p);

typedef struct {
    char     state[16];             /* "generating" | "complete" */
    char     format[32];
    char     file_prefix[64];
    uint64_t files, subfolders, samples_per_file, record_length, record_stdev, seed;
    char     parquet_columns[32768];    /* SB_WORKLOAD_COLUMNS_MAX */
    uint64_t parquet_row_group;
    char     compression[16];   /* dataset.compression of parquet pages ("" in older markers: none) */
    uint64_t bytes;                 /* bytes of the dataset (complete) or planned (generating) */
    /* dataset.record_element_type and dataset.record_dims ("a,b,c", "" none):
     * they decide the files' sizes too; has_shape 0 when the marker
     * predates them (not compared then) */
    char     element_type[16];
    char     record_dims[200];
    int      has_shape;
} sb_datafolder_marker_t;

#define SB_DATAFOLDER_MARKER_MAX 65536    /* bytes: a marker is far smaller */

/* The marker's text (local file and S3 object alike) for ds with state and
 * bytes into buf (cap bytes): *len gets its length. Returns 0, or -1 with
 * err when it does not fit. */
int sb_datafolder_marker_format (const sb_dataset_t *ds, const char *state, uint64_t bytes, char *buf, size_t cap,
                                 size_t *len, char *err, size_t err_size);

/* Parse a marker's text (len bytes; name, a path or key, names it in err).
 * Returns 0 with *m set, or -1 with err naming name and line. */
int sb_datafolder_marker_parse (const char *text, size_t len, const char *name, sb_datafolder_marker_t *m,
                                char *err, size_t err_size);

/* Write the marker of ds into folder with state and bytes, atomically (a
 * temporary renamed over it). Returns 0, or -1 with err. */
int sb_datafolder_marker_write (const char *folder, const sb_dataset_t *ds, const char *state, uint64_t bytes,
                                char *err, size_t err_size);

/* Read folder's marker. Returns 1 with *m set, 0 when there is none, -1
 * with err when it cannot be read or is not a marker (naming file and line). */
int sb_datafolder_marker_read (const char *folder, sb_datafolder_marker_t *m, char *err, size_t err_size);

#define SB_DATAFOLDER_DIFF_FILES 1     /* compare dataset.num_files_train */
#define SB_DATAFOLDER_DIFF_SEED  2     /* compare the seed */

/* The keys in which m and ds differ, as "KEY: generated A, workload B; ..."
 * in diff: format, prefix, subfolders, samples, record sizes, element
 * type and dims (when the marker has them), parquet layout, and what the
 * flags (SB_DATAFOLDER_DIFF_*) add. A run may read
 * fewer files than were generated (the first in name order): it leaves
 * out the file count. Returns how many differ. */
int sb_datafolder_marker_diff (const sb_datafolder_marker_t *m, const sb_dataset_t *ds, int flags, char *diff,
                               size_t diff_size);

/* Remove folder's marker (absent is fine). Returns 0, or -1 with err. */
int sb_datafolder_marker_remove (const char *folder, char *err, size_t err_size);

/* Is name (a file name, no '/') one DLIO gives a dataset file:
 * PREFIX_DIGITS_of_DIGITS.EXT? 1 or 0. */
int sb_datafolder_is_dataset_name (const char *name);

typedef struct {
    uint64_t dataset_files;         /* PREFIX_I_of_N.EXT names */
    uint64_t dataset_bytes;
    uint64_t temporaries;           /* .*.tmp */
    uint64_t others;                /* anything else under train/ */
    char     other[512];            /* the first of them, relative to folder */
    uint64_t removed;               /* files removed by this call */
} sb_datafolder_scan_t;

#define SB_DATAFOLDER_REMOVE_TEMPORARIES 1
#define SB_DATAFOLDER_REMOVE_DATASET     2

/* Look through folder/train and its subfolders (one level), counting what
 * is there, and remove what the flags (SB_DATAFOLDER_REMOVE_*) name, then
 * empty subfolders of train/ and train/ itself when empty. A missing train/
 * is empty. A train/ that is a symbolic link is looked through (its target
 * is the user's layout) but never removed; a link inside train/ is other,
 * never followed nor removed; every entry is examined, opened and removed
 * relative to its folder's descriptor, never by path. Returns 0, or -1
 * with err naming the path (or the link whose target is no folder). */
int sb_datafolder_scan (const char *folder, int remove, sb_datafolder_scan_t *scan, char *err, size_t err_size);

/* Bytes free to an unprivileged writer on the file system of folder/train
 * (statvfs: of its target when train/ is a link), else of folder, else of
 * its nearest existing parent. Returns 0, or -1 with err. */
int sb_datafolder_free_bytes (const char *folder, uint64_t *bytes, char *err, size_t err_size);

/* Create a probe in folder: name receives ".shardbench-probe-TOKEN"
 * (relative to folder). Returns 0, -1 with err, or -2 with err when the
 * folder is not writable here (read-only file system, permissions). */
int sb_datafolder_probe_create (const char *folder, char *name, size_t name_size, char *err, size_t err_size);

/* Check from a worker that root/name (root ends with '/', name from the
 * coordinator: checked, not trusted) holds the token of its name. Returns
 * 0, or -1 with err naming the file and what was found. */
int sb_datafolder_probe_check (const char *root, const char *name, char *err, size_t err_size);

/* The temporary path of dir/base for this writer: dir/.BASE.HOST.PID.RAND.tmp
 * (host: the characters of host that are safe in a file name). Returns 0,
 * or -1 when it does not fit. */
int sb_datafolder_temp_name (char *out, size_t size, const char *dir, const char *base, const char *host);

#endif
