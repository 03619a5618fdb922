/* results_dir: one run of the result database as MLPerf Storage's results
 * directory , the files DLIO and mlpstorage
 * write, written from the database alone (docs/DLIO.md, "Results
 * directory"):
 *
 *   ROOT/DIVISION/SUBMITTER/results/SYSTEM/training/MODEL/{datagen,run}/TS/
 *   ROOT/DIVISION/SUBMITTER/results/SYSTEM/checkpointing/MODEL/TS/
 *
 * TS is the run's start, local time, YYYYMMDD_HHMMSS; a leaf that exists is
 * never written into: the next second is tried, up to 10 times, as
 * mlpstorage does. DIVISION is closed or open, from the run's overrides by
 * mlpstorage's parameter lists (sb_results_dir_division). The leaf holds
 * summary.json, RANK_per_epoch_stats.json and RANK_output.json for every
 * rank (not for a datagen: DLIO's data generation writes no statistics),
 * TYPE_TS_metadata.json, dlio_config/{config.yaml,overrides.yaml,
 * hydra.yaml}, dlio.log, and TYPE_COMMAND.stdout.log / .stderr.log; a leaf
 * given (hydra.run.dir, mlpstorage's) only DLIO's files of these, the
 * metadata and the logs being mlpstorage's to write there. Every
 * file is written under a new temporary name, flushed to disk and renamed
 * (safe_file.h): never through a link someone put in the leaf, and never
 * over a file already there unless told to (--overwrite). */
#ifndef SB_RESULTS_DIR_H
#define SB_RESULTS_DIR_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *root;           /* --results-dir: the leaf is made under it (one of root, leaf) */
    const char *leaf;           /* ++hydra.run.dir: the files go straight into this folder, made when
                                 * absent; refused when it holds a run's results already
                                 * (sb_results_dir_leaf_check) */
    const char *config_subdir;  /* with leaf: hydra.output_subdir (NULL: dlio_config) */
    int         no_config;      /* with leaf: hydra.output_subdir=null: no configuration folder */
    const char *submitter;      /* --submitter (NULL: "shardbench") */
    const char *system;         /* --system (NULL: the run's coordinator host) */
    int         overwrite;      /* with leaf: --overwrite, replace the files of an earlier run there */
    int         config_written; /* with leaf: SUBDIR/config.yaml and overrides.yaml were written by this
                                 * command at its start (sb_dlio_write_outputs): replaced */
} sb_results_dir_opts_t;

/* Write run run_id of db. On success returns 0 with the leaf's path in
 * leaf_out; -1 with err naming the run, path and cause (unknown run,
 * unwritable folder, SQLite). A leaf made under a root is removed again when
 * a file in it could not be written; in a leaf given, files already written
 * are left (each whole). */
int sb_results_dir_write (sqlite3 *db, int64_t run_id, const sb_results_dir_opts_t *opts, char *leaf_out,
                          size_t leaf_size, char *err, size_t err_size);

/* MLPerf Storage's category of a run given these overrides (KEY=VALUE,
 * ++workload.KEY=VALUE): "closed" when every key is one a CLOSED run may
 * set (or one mlpstorage injects itself), "open" when some key is one only
 * an OPEN run may set, "invalid" when any other key is set; workflow.* keys
 * are not counted (mlpstorage_py rules/run_checkers/training.py). */
const char *sb_results_dir_division (const char *const *overrides, size_t n);

/* The category of a checkpointing run of model (llama3-8b, -70b, -405b,
 * -1t) with processes ranks, as mlpstorage_py's checkpointing checker
 * judges it (rules/run_checkers/checkpointing.py, config.py's
 * LLM_ALLOWED_VALUES; its overrides are not judged): "closed" at exactly the
 * model's CLOSED process count (8, 64, 512, 1024), "open" at another
 * positive multiple of its GPUs per data-parallel instance (8, 8, 256,
 * 512), else "invalid" (another model too). */
const char *sb_results_dir_ckpt_division (const char *model, int64_t processes);

#define SB_RESULTS_DIR_CONFIG_WRITTEN 1u    /* SUBDIR/config.yaml, overrides.yaml are this command's own */
#define SB_RESULTS_DIR_OVERWRITE      2u    /* --overwrite: files of an earlier run may be replaced */

/* May the results of a run go into leaf (++hydra.run.dir), its configuration
 * into leaf/subdir (NULL: none)? Not when leaf or subdir is a symbolic link
 * that neither this user nor root made (someone else chose where it
 * points), nor, without SB_RESULTS_DIR_OVERWRITE, when leaf holds a file of
 * a run's results (summary.json, dlio.log, *_output.json,
 * *_per_epoch_stats.json, *_metadata.json, *.stdout.log, *.stderr.log, a
 * link of such a name included) or subdir a config.yaml, overrides.yaml
 * (unless SB_RESULTS_DIR_CONFIG_WRITTEN) or hydra.yaml. Returns 0, or -1
 * with err naming the folder and the file. A leaf that does not exist
 * passes. */
int sb_results_dir_leaf_check (const char *leaf, const char *subdir, unsigned flags, char *err, size_t err_size);

/* 1 when name is a safe path segment ([A-Za-z0-9._-]+, not . or ..), as
 * mlpstorage requires of every segment of the layout. */
int sb_results_dir_name_ok (const char *name);

#endif
