/* results_stamp: the files the current mlpstorage (3.0 tooling, results
 * layout 3) writes around DLIO's in a results directory, for shardbench's
 * results directory (results_dir.h):
 *
 *   ROOT/mlperf-results.yaml   the sentinel that pins one organisation to a
 *                              results directory (mlpstorage_py/results_dir/
 *                              sentinel.py, schema.py); every mlpstorage
 *                              command taking --results-dir reads its orgname
 *   LEAF/provenance.json       what produced the leaf (provenance.py,
 *                              schema mlps-run-provenance/1)
 *   LEAF/fs_separation.json    whether the data (or checkpoint) folder and the
 *                              results are on different file systems, by
 *                              link(2)'s EXDEV (benchmarks/fs_separation_probe.py),
 *                              what the submission checker's rule 3.4.2 reads
 *
 * Each says what shardbench knows and nothing more (docs/DLIO.md, "Results
 * directory"). */
#ifndef SB_RESULTS_STAMP_H
#define SB_RESULTS_STAMP_H

#include <stddef.h>

#define SB_RESULTS_SENTINEL      "mlperf-results.yaml"
#define SB_RESULTS_LAYOUT        3      /* results_dir/__init__.py MLPERF_RESULTS_VERSION */
#define SB_RESULTS_RULES_EDITION "3.0"  /* config.RULES_EDITION, rules/editions.yaml current_edition */
#define SB_RESULTS_PROVENANCE    "provenance.json"
#define SB_RESULTS_FS_SEPARATION "fs_separation.json"

/* The organisation ROOT/mlperf-results.yaml pins. Returns 1 with org set,
 * 0 when root holds no sentinel, -1 with err naming the file, line and key
 * when it is there but unreadable or its orgname is missing or no name
 * ([A-Za-z0-9._-]+). */
int sb_results_sentinel_read (const char *root, char *org, size_t org_size, char *err, size_t err_size);

/* Make ROOT/mlperf-results.yaml for org when root has none (initialized_by
 * this shardbench); when it has one, it must pin org: else -1 with err
 * saying which organisation it pins (mlpstorage refuses the same). */
int sb_results_sentinel_ensure (const char *root, const char *org, char *err, size_t err_size);

/* LEAF/provenance.json of a run of family (training | checkpointing) that
 * version of shardbench ran (NULL: not recorded, a run before schema 13);
 * build: that shardbench's `git describe` when known (the run is this
 * process's own), else NULL; its data in data_folder (an s3:// folder names
 * shardbench's S3 client as the storage library). */
int sb_results_provenance_write (const char *leaf, int replace, const char *family, const char *version,
                                 const char *build, const char *data_folder, char *err, size_t err_size);

/* LEAF/fs_separation.json: probes now whether data_dir (a local folder;
 * relative to the working directory) and leaf are on one file system, as
 * mlpstorage's probe does (a file made in data_dir, linked into leaf,
 * EXDEV: different). Writes nothing (*written 0, returns 0) when data_dir is
 * a URI or no folder here or the probe cannot tell. Returns -1 with err only when the file cannot be written. */
int sb_results_fs_separation_write (const char *leaf, int replace, const char *data_dir, int *written,
                                    char *err, size_t err_size);

#endif
