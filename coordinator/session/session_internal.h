/* session_internal: the state of one coordinator session, shared by the
 * files of coordinator/session/ (not part of the public API: session.h).
 *
 * Ownership: sess_t is made and torn down by session.c (s_run_kind,
 * s_session_run); every other file works on the session it is handed and
 * owns none of its fields. Fields marked "owned" are freed by session.c at
 * the end of the command (or by the phase that replaces them). The options
 * (o) and everything they point to are the caller's. Every function here
 * runs on the session's one thread.
 *
 * Who writes what: admission.c the workers array; loop.c the loop's clock
 * and heartbeats; barrier.c and phase_*.c the phase and epoch figures;
 * storage_setup.c the storage fields (objects, key_prefix, folder, lock, probe)
 * and the catalogs' info; run_record.c run_id and run_open. A failure is
 * recorded once with sess_fail (the first cause wins). */
#ifndef SB_SESSION_INTERNAL_H
#define SB_SESSION_INTERNAL_H

#include "session.h"
#include "catalog.h"
#include "ckpt_plan.h"
#include "datafolder.h"
#include "dataset.h"
#include "histogram.h"
#include "launch.h"
#include "live.h"
#include "progress.h"
#include "proto.h"
#include "engine.h"
#include "sampler.h"
#include "sampler_plan.h"

#include <czmq.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* A worker admitted by HELLO (admission.c); the session's workers array
 * holds them in order of admission, id = index. */
typedef struct {
    zframe_t *identity;     /* owned */
    char      host[256];
    uint64_t  pid, cores, memory;
    uint64_t  id, first_rank, ranks;
    int       ready;
    uint64_t  steps_reached;/* STEP (or BARRIER_UP) messages received this epoch */
    double    held_s;       /* this epoch: how long the other workers waited at step barriers for its STEP
                             * (barrier.c: the last arrival, from the one before it of another host) */
    /* its place in the step barrier's tree (barrier.c), with one: the
     * workers it relays (first_child.., children), its subtree's size, and
     * where its relay listens (RELAY_AT; "" not yet, or no relay) */
    uint64_t  first_child, children, subtree;
    char      relay_endpoint[256];
    char      relay_key[48];
    double    last_seen;
    double    grace;        /* seconds the coordinator stalled since last_seen: not counted against it */
    int       gone;
    /* the worker's clock minus ours (NTP-style over WELCOME and READY): its
     * RANK_DONE times are corrected by it */
    double    welcome_sent_at;
    double    clock_offset, clock_rtt;
    int       clock_known;
    /* its host as DLIO describes it, from HELLO
     * (lib/base/host_proc.h), recorded in run_host_info */
    char      processor[64];        /* uname -m */
    char     *cpuinfo, *meminfo;    /* owned; "" unknown */
} sess_worker_t;

/* What the workers are doing now: which messages are expected. */
typedef enum { SESS_PHASE_NONE, SESS_PHASE_DATAGEN, SESS_PHASE_TRAIN, SESS_PHASE_CHECKPOINT, SESS_PHASE_EVAL,
               SESS_PHASE_KVCACHE } sess_phase_t;

/* A rank of a KV-cache trial, between its KV_READY and its RANK_DONE. */
typedef struct {
    uint64_t users_by_type[3], users_by_qos[3];
    char     check[512];        /* its storage check's line */
    int      ready, result;     /* KV_READY, KV_RESULT seen this trial */
} sess_kv_rank_t;

/* Per-endpoint totals of the current run, merged from ENDPOINT_STATS. */
typedef struct {
    char           endpoint[256];
    uint64_t       requests, bytes, errors, retries;
    sb_histogram_t latency;
} sess_endpoint_total_t;

/* A HELLO that came before workers could be admitted (the socket is bound
 * before the dataset is listed): answered once the listing is done. */
typedef struct {
    zframe_t *identity;     /* owned */
    sb_msg_t  hello;        /* owned (sb_proto_fini) */
} sess_held_t;

/* One command's session (made by s_run_kind in session.c). */
typedef struct {
    const sb_session_opts_t *o;   /* borrowed */
    zsock_t        *router;
    zpoller_t      *poller;
    zactor_t       *auth;           /* CURVE authenticator (zauth), NULL without keys */
    char            endpoint[256];
    sb_launcher_t  *launcher;
    sess_worker_t     *workers;
    size_t          nworkers;
    /* the workers by ROUTER identity (admission.c): an open-addressing
     * table of worker index + 1 (0: empty), every message is looked up in
     * it (a scan of a thousand identities per message was a quarter of the
     * coordinator's time); owned */
    uint32_t       *by_identity;
    size_t          by_identity_size;   /* a power of two, over twice the workers */
    /* before admission (the listing and the checks before it): HELLOs are
     * held, their senders heartbeaten so that they keep waiting */
    int             holding;
    sess_held_t    *held;           /* owned */
    size_t          nheld;
    size_t          expected;
    uint64_t        ranks_per_worker;
    int64_t         run_id;
    /* phase */
    sess_phase_t       phase;
    uint64_t        epoch;
    uint64_t        files;          /* files used this run (num_files_train) */
    /* the sampler, for rank 0: the figures of every epoch (steps, samples,
     * dropped) that the workers' samplers must agree with (owned) */
    sb_sampler_t   *sampler;
    sb_sampler_epoch_t ep_info;
    /* reader.file_shuffle: every rank's file list, planned once an epoch in
     * a background thread and served in pages (LIST_REQ); NULL without
     * file_shuffle (owned, for the training phase) */
    sb_plan_t      *plan;
    uint64_t        loader_threads; /* worker 0's (the sampler's) */
    int             catalog_names;  /* PHASE_START catalog_names, catalog_sizes */
    int             catalog_sizes;
    uint64_t        ranks_done;
    uint8_t        *rank_done;      /* per rank: finished this phase */
    uint64_t        barrier_step;   /* next step to release */
    sb_histogram_t  barrier_latency;/* this epoch, merged from RANK_DONE */
    sb_histogram_t  read_latency;   /* this epoch, merged from RANK_DONE */
    sb_histogram_t  barrier_own;    /* this epoch: the barrier's own cost per step, from RANK_DONE */
    uint64_t        barrier_arrived;
    /* this step's arrivals so far: the latest (when, whose) and the latest
     * of a worker on another host than the latest's (0: none yet) */
    double          arrived_last_at, arrived_other_at;
    size_t          arrived_last;
    /* the step barrier's tree (barrier.c): children per relay, 0 when every
     * worker's STEP comes to the coordinator; the top workers (ids below
     * barrier_top) report for their subtrees with BARRIER_UP */
    uint64_t        barrier_fanout;
    uint64_t        barrier_top;
    /* this epoch's totals, from RANK_DONE (the epochs row is the writer's;
     * the log line must not wait for it) */
    uint64_t        ep_samples, ep_bytes, ep_ranks;
    double          ep_first_start, ep_last_finish, ep_au_sum;
    /* DLIO's figures (lib/metrics/dlio_metrics.h): this epoch's sums over ranks
     * of their AU (percent) and samples/s, and the finished epochs' values */
    double          ep_dlio_au_sum, ep_dlio_tput_sum;
    double         *dlio_au, *dlio_tput;   /* per finished epoch (owned) */
    size_t          dlio_epochs;
    uint64_t        record_size;    /* DLIO's nominal record size (StatsCounter.record_size) */
    sb_ckpt_plan_t  ckpt;           /* checkpoint: bytes per rank */
    const char     *ckpt_op;        /* "write" | "read" during a checkpoint phase */
    uint64_t        ckpt_index;     /* checkpoint number of that phase */
    double          wait_until;     /* checkpoint.time_between_checkpoints */
    sb_catalog_reader_t *catalog;
    sb_catalog_info_t    catalog_info;
    int             catalog_derived; /* no catalog: names and sizes follow the naming (sess_derive) */
    sb_dataset_t    dataset;
    int             names_match;    /* the catalog's naming is the one WELCOME gives workers */
    /* storage */
    sb_storage_t   *objects;        /* the coordinator's own client of an object store (SB_ENGINE_OBJECTS): preflight, listing, marker */
    char            key_prefix[1100];
    sess_endpoint_total_t endpoints[SB_MAX_ENDPOINTS];
    size_t          nendpoints;
    char           *preflight;      /* failures reported in READY: the table text */
    size_t          preflight_len;
    /* outcome */
    int             failed;
    int             aborted;
    char            failure[2048];
    double          next_heartbeat;
    /* the coordinator's own stalls (stopped, swapped out, a long call): time
     * in which it could not hear workers is not counted against them */
    double          loop_at;        /* when the loop (or a keep-alive) last ran; 0: not yet */
    double          stalled_s;      /* the last stall, and when it ended */
    double          stalled_until;
    uint64_t        rejected_frames;
    sb_live_t      *live;           /* the run's live figures (owned; NULL only before the workers are sized) */
    sb_progress_t  *progress;       /* live status, drawn from live (owned) */
    /* a local data folder (lib/dataset/datafolder.h) */
    int             lock_fd;        /* its .shardbench.lock, -1: none */
    int             lock_exclusive; /* held exclusive (this session generates) */
    char            folder[PATH_MAX];   /* its real path, no trailing '/' */
    char            probe_dir[PATH_MAX];/* where the probe is ("" none) */
    char            probe[64];      /* the probe's name there, "" none */
    int             generating;     /* a datagen of this session may have written */
    int             read_only;      /* the data folder is read-only here: not locked */
    int             run_open;       /* run_id is begun and not yet finished: errors rows go to it */
    /* checkpoints during training (wl->ckpt.in_train; the files: ckpt) */
    uint64_t       *ckpt_steps;     /* this epoch's, as PHASE_START ckpt_steps (owned) */
    uint64_t       *ckpt_arrived;   /* per checkpoint of this epoch: ranks that reported it (owned) */
    uint64_t       *ckpt_rank_next; /* per rank: its next checkpoint of this epoch, as it reports them in
                                     * order (owned; a repeated report fails the run) */
    size_t          ckpt_nsteps;
    uint64_t        ckpt_first;     /* run-wide number of this epoch's first checkpoint */
    uint64_t        ckpt_written;   /* checkpoints of the run every rank reported */
    /* a KV-cache trial (phase_kvcache.c): per rank what its KV_READY said
     * (users per type and QoS class, its storage check) until its KV_RESULT
     * is recorded; owned */
    sess_kv_rank_t *kv_ranks;
    uint64_t        kv_ready;       /* ranks ready this trial */
    double          kv_go_at;       /* when GO went out (the window's start, coordinator clock) */
    double          kv_last_finish; /* the latest rank's window end (coordinator clock) */
    double          kv_first_start, kv_last_start;  /* the earliest and latest rank's window start */
    uint64_t        kv_ranks_done;
    int             kv_unverified;  /* some rank's storage check could not be made */
    int             kv_refused;     /* a rank's storage check refused the storage (its ERROR) */
    /* this trial's figures for its log line (the rows are the writer's) */
    uint64_t        kv_requests, kv_read_bytes, kv_write_bytes;
    double          kv_read_gibs, kv_write_gibs, kv_p95_ms;
    char            ckpt_root[PATH_MAX];    /* checkpoint.checkpoint_folder as workers see it: PHASE_START */
                                            /* ckpt_root, "SCHEME://STORE/PREFIX/" or "/abs/folder/" (ckpt_target.h) */
    /* the phases this command ran so far, in order
     * ("datagen,train"): each run row records them (runs.workflow) */
    char            workflow[128];
    /* the evaluation set (workflow.evaluation): its sampler (rank 0's,
     * owned), this evaluation's figures, and DLIO's per evaluation */
    sb_sampler_t   *eval_sampler;
    sb_sampler_epoch_t eval_info;
    int             eval_sizes;     /* PHASE_START catalog_sizes of valid/: 1 the generator's, 2 unknown, 0 served */
    /* valid/ listed into its own catalog as train/ is (none with
     * skip_listing or synthetic storage: DLIO's names, the generator's
     * sizes or unknown): its reader (owned, made at the first evaluation),
     * PHASE_START catalog_names for it */
    sb_catalog_reader_t *eval_catalog;
    sb_catalog_info_t    eval_catalog_info;
    int             eval_listed;    /* eval_catalog_info holds a listing */
    int             eval_names;
    uint64_t        eval_prepared;  /* the last epoch the evaluation sampler prepared (0: none) */
    double         *eval_au, *eval_tput;   /* per evaluation (owned) */
    size_t          evals;
} sess_t;

/* ---------------------------------------------------------------- session.c: the command, signals, failure */

/* The name of the signal caught ("SIGINT", ...), for messages. */
const char *sess_signal_name (void);

/* Fail the run with a message (logged); the first cause is kept, later
 * ones are dropped. The phases and the loop stop at self->failed. */
void sess_fail (sess_t *self, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* The silence after which the live status names a host silent: one and a
 * half heartbeat intervals (a live worker sends at least a heartbeat per
 * interval), and at least half a second more than one, so that a busy host's
 * late heartbeat is not an alarm; a frozen host is named within two. */
double sess_silence_limit (const sb_workload_t *wl);

/* ---------------------------------------------------------------- loop.c: the event loop and message dispatch */

/* Send msg to worker w (nothing when it is gone). A worker whose connection
 * is gone is lost (sess_lost), any other failure fails the run. Returns 0
 * or -1. */
int sess_send (sess_t *self, sess_worker_t *w, const sb_msg_t *msg);

/* Send msg to every worker (sess_send). */
void sess_broadcast (sess_t *self, const sb_msg_t *msg);

/* Pump until done(self) or failure or interrupt. Returns 0 when done. */
int sess_pump_until (sess_t *self, int (*done) (sess_t *), double timeout_s, const char *what);

/* Heartbeats while the coordinator is busy listing or checking (workers
 * would otherwise count it as lost). */
int sess_keep_alive (void *arg);

/* The same while the result writer drains (its return cannot stop a drain:
 * the writer watches signals itself). */
void sess_keep_alive_db (void *arg);

/* ---------------------------------------------------------------- admission.c: workers: admission, registry, lost workers */

/* The admitted worker with this ROUTER identity, NULL when none. */
sess_worker_t *sess_worker_by_identity (sess_t *self, zframe_t *identity);

/* A worker that joined as host and is not gone (ssh children: one per host). */
sess_worker_t *sess_worker_by_host (sess_t *self, const char *host);

/* The worker whose process has this pid, NULL when none. */
sess_worker_t *sess_worker_by_pid (sess_t *self, pid_t pid);

/* "rank N" or "ranks A-B" of worker w into buf; returns buf. */
const char *sess_rank_span (const sess_worker_t *w, char *buf, size_t size);

/* A worker that can no longer be reached: its ranks, host, pid and the time
 * it was last heard from go into the failure and an errors row; a local
 * worker whose process ended is named with how it ended (sess_local_ended). */
void sess_lost (sess_t *self, sess_worker_t *w, const char *op, const char *why);

/* A local worker's process ended (status: waitpid's): the run fails naming
 * the worker, its ranks, host and pid and how it ended; an errors row. */
void sess_local_ended (sess_t *self, sess_worker_t *w, pid_t pid, int status);

/* HELLO: admit the worker (its ranks, id) and send it WELCOME with the
 * workload; a worker over the expected count gets REJECT. */
void sess_on_hello (sess_t *self, zframe_t *identity, sb_msg_hello_t *m);

/* A HELLO before admission (self->holding): kept, in order, and its sender
 * sent a HEARTBEAT now and at each heartbeat interval (the agent waits on
 * while it hears from the coordinator). Takes identity and the message. */
void sess_hold_hello (sess_t *self, zframe_t *identity, sb_msg_t *msg);

/* Heartbeat the held HELLOs' senders (sess_keep_alive). */
void sess_heartbeat_held (sess_t *self);

/* Admission opens: stop holding, admit every held HELLO in its order. */
void sess_admit_held (sess_t *self);

/* Tell every held HELLO's sender why the coordinator stops before
 * admitting it (REJECT with reason), and free them. */
void sess_release_held (sess_t *self, const char *reason);

/* READY: the worker's clock offset; its preflight failures become rows of
 * one table. */
void sess_on_ready (sess_t *self, sess_worker_t *w, const sb_msg_ready_t *m);

/* The srun step running every worker (--slurm) ended: before they all
 * joined, or while some still run, the run fails naming srun, with the
 * tail of its stderr (which carries the workers' own). */
void sess_srun_ended (sess_t *self, pid_t pid, const char *how);

/* For a failure that names a worker: when the coordinator itself stalled
 * lately for longer than the heartbeat timeout, say so (the worker most
 * likely gave up on the coordinator, not the other way round). "" else. */
void sess_stall_note (sess_t *self, char *buf, size_t size);

/* Who joined and who is missing, for a join timeout: the workers that said
 * HELLO (host and pid), those among them still in their preflight, and the
 * ones never heard from, by host (--hosts) or pid (--local) when known. */
void sess_join_detail (sess_t *self, char *buf, size_t size);

/* Done condition: every expected worker joined and is READY. */
int sess_all_joined (sess_t *self);

/* End the session for every worker: BYE after success, ABORT with the
 * failure otherwise (best effort); stop the launched workers. */
void sess_shutdown_workers (sess_t *self);

/* ---------------------------------------------------------------- worker_stats.c: counters and errors the workers report */

/* ENDPOINT_STATS: merge a rank's per-endpoint totals into the run's
 * (recorded by sess_end_run). */
void sess_on_endpoint_stats (sess_t *self, const sb_msg_endpoint_stats_t *m);

/* ERROR: recorded with its detail, and the run fails naming the rank. */
void sess_on_error (sess_t *self, sess_worker_t *w, const sb_msg_error_t *m);

/* STATS: a rank's counters into the timeseries (training epochs) and the
 * live status. */
void sess_on_stats (sess_t *self, sess_worker_t *w, const sb_msg_stats_t *m);

/* ---------------------------------------------------------------- shard_service.c: catalog entries served to workers */

/* ENTRIES_REQ: the catalog entries a worker cannot derive, one lookup in
 * the in-memory index per entry (a SQLite seek only for a stored key). */
void sess_on_entries_req (sess_t *self, sess_worker_t *w, const sb_msg_entries_req_t *m);
/* LIST_REQ: a page of one of the worker's ranks' file lists (shard_service.c). */
void sess_on_list_req (sess_t *self, sess_worker_t *w, const sb_msg_list_req_t *m);

/* ---------------------------------------------------------------- barrier.c: step barriers and ranks done */

/* STEP: worker w reached the barrier's step; the last one releases it
 * (GO to every worker). A STEP out of order fails the run. */
void sess_on_step (sess_t *self, sess_worker_t *w, const sb_msg_step_t *m);

/* Admission of worker w (its id set): with a tree, its place in it, and
 * RELAY_BIND when it relays (after its WELCOME). */
void sess_barrier_admit (sess_t *self, sess_worker_t *w);

/* RELAY_AT: where worker w's relay listens. */
void sess_on_relay_at (sess_t *self, sess_worker_t *w, const sb_msg_relay_at_t *m);

/* 1 when every relay said where it listens (or there is no tree). */
int sess_barrier_relays_ready (sess_t *self);

/* Once every worker joined: every worker's place in the tree (BARRIER_TREE;
 * nothing without a tree). */
void sess_barrier_tree_send (sess_t *self);

/* BARRIER_UP: top worker w's subtree reached the barrier's step; the last
 * of the top workers releases it (GO to the top workers, which pass it
 * down). Anything out of order fails the run. */
void sess_on_barrier_up (sess_t *self, sess_worker_t *w, const sb_msg_barrier_up_t *m);

/* For a failure that names worker w: when it relays the step barrier,
 * " (relay of the step barrier for workers A-B)", else "". */
void sess_relay_note (const sess_t *self, const sess_worker_t *w, char *buf, size_t size);

/* RANK_DONE: a rank finished its part of the phase: checked, merged into
 * the epoch's figures and recorded (train, eval, checkpoint rows). */
void sess_on_rank_done (sess_t *self, sess_worker_t *w, const sb_msg_rank_done_t *m);

/* Done condition: every rank reported RANK_DONE for this phase. */
int sess_all_ranks_done (sess_t *self);

/* ---------------------------------------------------------------- run_record.c: run rows in the result database */

/* An errors row of the open run (none when no run is open); a row that
 * cannot be queued fails the run. */
void sess_record_error (sess_t *self, int64_t rank, const char *host, const char *op, const char *target,
                        int64_t errno_val, const char *message);

/* Append phase to the phases this command ran (runs.workflow). */
void sess_workflow_add (sess_t *self, const char *phase);

/* Begin a run row of this kind ("datagen", "train", "checkpoint") with
 * its workers. Returns the run id, or -1 (the run failed). */
int64_t sess_begin_run (sess_t *self, const char *kind);

/* Close the open run row: every row written first, the per-endpoint totals,
 * the failure as an errors row, the workflow, status and failure. */
void sess_end_run (sess_t *self);

/* ---------------------------------------------------------------- phase_datagen.c: the datagen phase and its checks */

/* The datagen phase: every rank writes its share of the dataset (and of
 * valid/); the marker then says complete. Returns 0, or -1 (failed). */
int sess_phase_datagen (sess_t *self);

/* Before a datagen writes under an S3 prefix: as sess_datagen_check does for
 * a local folder, refuse objects of another generation under train/
 * (unless --clean, which deletes them and the marker first), state the
 * bytes, and PUT the marker with state=generating. Returns 0, or an exit
 * code (1, 2) with err. */
int sess_objects_datagen_check (sess_t *self, char *err, size_t err_size);

/* Before a datagen writes into a local folder: hold the lock exclusive,
 * refuse a folder holding another generation (unless --clean), remove
 * stale temporaries, state the bytes, check the free space, and mark the
 * folder "generating". Returns 0, or an exit code (1, 2) with err. */
int sess_datagen_check (sess_t *self, char *err, size_t err_size);

/* datagen --dry-run: what it would write, and where; writes nothing. */
int sess_dry_run (sess_t *self, char *err, size_t err_size);

/* ---------------------------------------------------------------- phase_train.c: the training epochs and evaluations */

/* A rank finished an evaluation: DLIO's figures of the rank
 * (compute_metrics_eval: AU over the metric window, 0 without compute;
 * throughput over every step and the whole span) and its eval_ranks row. */
void sess_on_eval_rank_done (sess_t *self, sess_worker_t *w, const sb_msg_rank_done_t *m, double started_at,
                             double finished_at);

/* The sampler of rank 0 with worker 0's loader threads; the DLIO kinds
 * whose order depends on the threads need every worker to run as many. */
int sess_sampler_new (sess_t *self, char *err, size_t err_size);

/* The evaluation set as DLIO names it: valid/, num_files_eval files in
 * num_subfolders_eval subfolders, otherwise the training set's layout. */
void sess_eval_dataset (sess_t *self, sb_dataset_t *ds);

/* The training epochs, with evaluations and checkpoints as the workload
 * asks; the epoch rows and DLIO's run figures. Returns 0, or -1 (failed). */
int sess_phase_train (sess_t *self);

/* ---------------------------------------------------------------- phase_kvcache.c: MLPerf Storage's KV-cache benchmark */

/* kvcache: o->kv's trials, each: PHASE_START "kvcache" to every worker,
 * every rank's KV_READY, one GO to every worker (every rank's window starts
 * together), every rank's KV_RESULT and RANK_DONE; the rows of
 * coordinator/db/resultdb_kv.h. */
int sess_phase_kvcache (sess_t *self);
void sess_on_kv_ready (sess_t *self, sess_worker_t *w, const sb_msg_kv_ready_t *m);
void sess_on_kv_result (sess_t *self, sess_worker_t *w, const sb_msg_kv_result_t *m);
/* a rank's RANK_DONE of a trial (after its KV_RESULT) */
void sess_on_kv_rank_done (sess_t *self, sess_worker_t *w, const sb_msg_rank_done_t *m, double started_at,
                           double finished_at);

/* ---------------------------------------------------------------- phase_checkpoint.c: the checkpoint workflow, checkpoints during training */

/* one rank wrote its part of a checkpoint during a train
 * epoch. Once every rank has, the checkpoint's row is written. */
void sess_on_ckpt_done (sess_t *self, sess_worker_t *w, const sb_msg_ckpt_done_t *m);

/* epoch e's checkpoints into its PHASE_START. Returns 0 or -1 (failed). */
int sess_ckpt_epoch (sess_t *self, uint64_t e, uint64_t batches, sb_msg_phase_start_t *ps);

/* checkpoint: num_checkpoints_write checkpoints, then num_checkpoints_read
 * reads of checkpoints 1, 2, ...; every rank starts each one together (the
 * PHASE_START broadcast stands for DLIO's barrier) with its bytes from the
 * plan (coordinator/session/ckpt_plan.h), already checked by sb_session_run. */
int sess_phase_checkpoint (sess_t *self);
/* checkpoint: before any worker starts, what checkpoint.num_checkpoints_write
 * checkpoints of the plan write into a local checkpoint folder (all of them
 * stay, each in its folder global_epoch1_step{K}/; what rewriting files
 * already there frees is counted) must fit in its file system's free space
 * (statvfs, as the coordinator sees the folder). Returns 0 (fits, or not a
 * local folder), 1 (cannot tell) or 2 (does not fit: err names the folder,
 * the bytes needed and free). */
int sess_ckpt_space (sess_t *self, char *err, size_t err_size);

/* ---------------------------------------------------------------- storage_setup.c: storage preflight, data folder, markers, listing */

/* The dataset's naming and sizes, as the workload and seed define them. */
void sess_dataset (sess_t *self, sb_dataset_t *ds);

/* The dataset as its marker records it (sess_dataset: the naming and the
 * parquet layout). */
void sess_marker_dataset (sess_t *self, sb_dataset_t *ds);

/* Does object i exist? 1 yes, 0 no (why in err), -1 cannot tell (err). */
int sess_object_exists (sess_t *self, const sb_dataset_t *ds, uint64_t i, char *key, size_t key_size, char *err,
                        size_t err_size);

/* skip_listing: HEAD (or stat) every k-th object and the last one; fail
 * fast naming the first that is missing. Returns 0, or -1 with err. */
int sess_spot_check (sess_t *self, char *err, size_t err_size);

/* Check that objects 0, k, 2k, ... and the last of ds exist (k:
 * dataset.listing_validation_interval); `what` names the check in
 * messages. Returns 0, or -1 with err. */
int sess_check_objects (sess_t *self, const sb_dataset_t *ds_in, const char *what, char *err, size_t err_size);

/* train/ with no listing and no catalog rows (synthetic storage): the
 * objects a listing would find are DLIO's names of the workload, in name
 * order, with the generator's sizes, so catalog_info is set from the
 * workload alone (O(1) in the objects) and catalog_derived set. */
void sess_derive (sess_t *self);

/* Ensure train/'s catalog (s_list_split). */
int sess_list (sess_t *self, int relist, int *missing, char *err, size_t err_size);

/* valid/ listed into its own catalog (a run that evaluates, on real
 * storage, without skip_listing): 0 listed and whole (eval_listed set),
 * 1 missing or short (err says what), -1 error (err). */
int sess_list_eval (sess_t *self, int relist, char *err, size_t err_size);

/* Make folder (with its parents) and put its real path with a trailing
 * '/' into prefix. Returns 0, or -1 with err. */
int sess_prepare_folder (const char *folder, char *prefix, size_t size, char *err, size_t err_size);

/* The key prefix of a dataset in an object store: dataset.data_folder
 * without "./", a leading "/" or a "SCHEME://STORE/" head, ending with
 * '/' (or empty). */
int sess_key_prefix (const sb_workload_t *wl, char *out, size_t size, char *err, size_t err_size);

/* The coordinator checks every endpoint itself before listing: a table of
 * endpoint and cause when any fails. */
int sess_preflight_own (sess_t *self, char *err, size_t err_size);
/* The coordinator's client of cfg's storage: every endpoint, whatever the
 * ranks' distribution (the coordinator is no rank). NULL with e set. */
sb_storage_t *sess_storage_open (const sb_storage_cfg_t *cfg, size_t depth, sb_storage_error_t *e);

/* where checkpoints go (lib/storage/ckpt_target.h), into
 * self->ckpt_root as workers get it: a local folder made (and made absolute)
 * here, or an object store's STORE and prefix whose endpoints this host
 * checks when it is not the dataset's store. A read-only invocation (read_n > 0: no write)
 * finds every file of checkpoints 1..read_n there first. Returns 0, 1 (the
 * storage failed) or 2 (the configuration) with err. */
int sess_ckpt_target (sess_t *self, const sb_workload_t *wl, uint64_t read_n, char *err, size_t err_size);

/* Create (with its parents) and lock the local data folder for the whole
 * session: exclusive for a datagen, shared for a run that reads. */
int sess_folder_lock (sess_t *self, int exclusive, char *err, size_t err_size);

/* The key of an S3 dataset's marker object (KEY_PREFIX.shardbench-dataset). */
void sess_objects_marker_key (sess_t *self, char *key, size_t size);

/* PUT the marker object with state and bytes. Returns 0, or -1 with err. */
int sess_objects_marker_write (sess_t *self, const char *state, uint64_t bytes, char *err, size_t err_size);

/* GET the marker object. Returns 1 with *m set, 0 when there is none, -1
 * with err (the GET failed, or the object is not a marker). */
int sess_objects_marker_read (sess_t *self, sb_datafolder_marker_t *m, char *err, size_t err_size);

/* A run that reads an existing dataset (a local folder, or an S3 prefix):
 * the marker must say it was generated whole with this workload's
 * parameters. Returns 0, or -1 with err. */
int sess_dataset_check (sess_t *self, char *err, size_t err_size);

/* A probe in the folder the workers get as data_root, which each worker
 * must read back (agent preflight). Returns 0, -1 with err, or -2 when the
 * folder is not writable here (err says why). */
int sess_probe_create (sess_t *self, char *err, size_t err_size);

/* End of session: probe removed; after a datagen that did not finish, the
 * temporaries its writers left (a killed worker cannot remove its own) are
 * removed while the lock is still held; lock released. */
void sess_folder_release (sess_t *self);

#endif
