/* session: the coordinator's event loop for one command.
 *
 * Binds the ROUTER, admits workers (HELLO/WELCOME), generates the dataset
 * when the workflow asks, lists it into the catalog, runs the training epochs
 * with per-step or per-epoch barriers, serves key pages, records everything
 * in the result database as it arrives, and ends every worker. */
#ifndef SB_SESSION_H
#define SB_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "kv_params.h"
#include "metrics_server.h"
#include "resultdb.h"
#include "workload.h"

/* TRAIN: what the workflow section says (sb_session_run): train, after
 * generating with workflow.generate_data; with workflow.train false generate
 * only, or the checkpoint workflow; DATAGEN: generate only;
 * CATALOG: check the storage and list (or reuse) the catalog, no workers;
 * CHECKPOINT: write then read checkpoints (coordinator/session/ckpt_plan.h), no dataset;
 * KVCACHE: MLPerf Storage's KV-cache benchmark (phase_kvcache.c, opts->kv), no dataset. */
typedef enum { SB_SESSION_TRAIN, SB_SESSION_DATAGEN, SB_SESSION_CATALOG, SB_SESSION_CHECKPOINT,
               SB_SESSION_KVCACHE } sb_session_kind_t;

typedef struct {
    sb_session_kind_t    kind;
    const sb_workload_t *wl;            /* borrowed */
    const char          *workload_name; /* preset name or YAML path */
    const char          *config_yaml;   /* effective configuration */
    sb_resultdb_t       *db;            /* borrowed */
    uint64_t             accelerators;  /* total ranks */
    uint64_t             local_workers; /* start this many local workers ... */
    uint64_t             remote_workers;/* ... or wait for this many ... */
    const char *const   *hosts;         /* ... or start one per host over ssh */
    size_t               nhosts;
    const char          *ssh_cmd;       /* with hosts: the ssh command ("ssh") */
    const char          *remote_worker; /* with hosts: the worker binary there */
    int                  slurm;         /* hosts are the nodes of our Slurm job: one srun step */
    const char          *srun_cmd;      /* with slurm: the srun command ("srun") */
    const char          *bind;          /* ZeroMQ endpoint to bind */
    const char          *keys_dir;      /* CURVE key directory (lib/security/security.h), NULL: plain */
    const char          *worker_path;   /* for local workers */
    uint64_t             seed;
    int                  relist;
    double               join_timeout_s;/* how long to wait for workers (0: forever) */
    int                  progress;      /* sb_progress_mode_t (progress.h), 0: auto */
    double               progress_interval_s; /* between plain progress lines (0: 5 s) */
    int                  clean;         /* datagen: remove another generation's files first */
    int                  dry_run;       /* datagen: say what would be written, write nothing */
    /* the run rows' label (NULL: none) and, with
     * series_id > 0, the place of the train or checkpoint row in that series
     * (coordinator/db/series_query.h); a datagen row gets the label only */
    const char          *label;
    int64_t              series_id;
    uint64_t             series_index;  /* 1-based */
    int                  warmup;        /* 1: a warm-up run */
    const sb_run_inputs_t *inputs;      /* recorded with every run row (resultdb.h); NULL: none */
    sb_metrics_server_t *metrics;       /* --metrics: fed from the live model (borrowed); NULL: none */
    const sb_kv_params_t *kv;           /* KVCACHE: its settings (borrowed) */
} sb_session_opts_t;

/* Run the command. Returns the process exit code: 0 success, 1 the run
 * failed, 128 + N interrupted by signal N (sb_session_signal), 2 a usage or configuration error found late
 * (e.g. too few files). *run_id is the id of the last run row written (-1
 * when none). err receives the failure. */
int sb_session_run (const sb_session_opts_t *opts, int64_t *run_id, char *err, size_t err_size);

/* Raise the soft RLIMIT_NOFILE to the hard limit and check that the
 * workers' connections and the coordinator's own descriptors fit. Call
 * before making any ZeroMQ socket (the result writer's too): CZMQ asserts
 * when it cannot make one. Returns 0, or -1 with the numbers and the fix in
 * err (a usage error: exit 2). */
int sb_session_check_limits (const sb_session_opts_t *opts, char *err, size_t err_size);

/* Install the coordinator's handler of SIGINT, SIGTERM and SIGHUP (in place
 * of CZMQ's): the first one sets zsys_interrupted, which every phase of
 * sb_session_run checks to stop cleanly; a second one ends the process.
 * Call once before sb_session_run. Returns 0, -1 when sigaction fails. */
int sb_session_catch_signals (void);
/* The signal caught (SIGINT, SIGTERM, SIGHUP), 0 when none: the command then
 * exits 128 + its number. */
int sb_session_signal (void);

#endif
