/* dlio_args: the command-line forms of dlio_benchmark (Hydra) that
 * mlpstorage passes, so a script calling DLIO can call shardbench:
 *
 *   dlio_benchmark workload=NAME ++hydra.run.dir=DIR ++hydra.output_subdir=SUB
 *                  ++workload.K=V ... --config-dir=CONFIG_DIR
 *
 * workload=NAME      CONFIG_DIR/workload/NAME.yaml, as Hydra finds it, else the
 *                    built-in preset NAME (DLIO's packaged configs)
 * --config-dir DIR   also --config-dir=DIR
 * ++workload.K=V, +workload.K=V, workload.K=V   override workload key K
 * ++hydra.run.dir=DIR        the run's output folder (created)
 * ++hydra.output_subdir=SUB  where, under it, the configuration is written
 *                    (Hydra's default .hydra; null: not written)
 * other hydra.*      accepted and ignored, with a warning (Hydra internals)
 *
 * The caller owns the argv strings; sb_dlio_args_t borrows them and owns
 * only its array of task overrides. */
#ifndef SB_DLIO_ARGS_H
#define SB_DLIO_ARGS_H

#include <stddef.h>

typedef struct {
    const char  *workload;      /* workload=NAME, or NULL */
    const char  *config_dir;    /* --config-dir, or NULL */
    const char  *run_dir;       /* hydra.run.dir, or NULL */
    const char  *output_subdir; /* hydra.output_subdir; NULL: ".hydra" */
    int          output_subdir_null;    /* hydra.output_subdir=null */
    const char **task;          /* the task overrides as given (overrides.yaml) */
    size_t       ntask;
} sb_dlio_args_t;

/* Release the array of task overrides; the struct can be reused zeroed. */
void sb_dlio_args_fini (sb_dlio_args_t *self);

/* Look at argv's arg (next: the argument after it, or NULL). Returns 1 when
 * it is a DLIO/Hydra form, taken into self (*used_next = 1 when it took
 * next too; *override = the text to give sb_config_override, or NULL); 0
 * when it is none (a shardbench argument); -1 with err naming the argument
 * when it is a malformed one. */
int sb_dlio_arg (sb_dlio_args_t *self, const char *arg, const char *next, int *used_next, const char **override,
                 char *err, size_t err_size);

/* The file of workload `name` under --config-dir, as Hydra resolves the
 * workload group: CONFIG_DIR/workload/NAME.yaml. Returns 1 with the path
 * in path, 0 when there is no --config-dir or no such file (the caller
 * tries its presets), -1 with err when --config-dir names no folder. */
int sb_dlio_workload_path (const sb_dlio_args_t *self, const char *name, char *path, size_t size,
                           char *err, size_t err_size);

/* With hydra.run.dir: create it, and unless output_subdir is null write
 * RUN_DIR/SUBDIR/config.yaml (the effective workload under `workload:`, as
 * Hydra saves DLIO's task configuration; config_yaml must be redacted
 * already) and RUN_DIR/SUBDIR/overrides.yaml (the task overrides, secret
 * values replaced by <redacted>). No-op without hydra.run.dir. Returns 0,
 * or -1 with err naming the path. */
int sb_dlio_write_outputs (const sb_dlio_args_t *self, const char *config_yaml, char *err, size_t err_size);

#endif
