/* results_dir: one run of the result database as MLPerf Storage's results
 * directory (helper resultsdir, issue 17), the files DLIO and mlpstorage
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
 * rank, TYPE_TS_metadata.json, dlio_config/{config.yaml,overrides.yaml,
 * hydra.yaml}, dlio.log, and TYPE_COMMAND.stdout.log / .stderr.log. Every
 * file is written under a temporary name and renamed. */
#ifndef SB_RESULTS_DIR_H
#define SB_RESULTS_DIR_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *root;           /* --results-dir: the leaf is made under it (one of root, leaf) */
    const char *leaf;           /* ++hydra.run.dir: the files go straight into this folder, made when
                                 * absent; refused when it holds a summary.json already */
    const char *config_subdir;  /* with leaf: hydra.output_subdir (NULL: dlio_config) */
    int         no_config;      /* with leaf: hydra.output_subdir=null: no configuration folder */
    const char *submitter;      /* --submitter (NULL: "shardbench") */
    const char *system;         /* --system (NULL: the run's coordinator host) */
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

/* 1 when name is a safe path segment ([A-Za-z0-9._-]+, not . or ..), as
 * mlpstorage requires of every segment of the layout. */
int sb_results_dir_name_ok (const char *name);

#endif
