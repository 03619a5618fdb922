/* session: the coordinator's one event loop.
 *
 * Everything happens on one thread: a zpoller over the ROUTER socket with a
 * short timeout, after which heartbeats are sent, silent workers detected and
 * exited local workers reaped. Phases (admission, datagen, each epoch) are
 * loops of the same pump with a different "done" condition. */
#include "session.h"
#include "catalog.h"
#include "ckpt_plan.h"
#include "ckpt_target.h"
#include "datafolder.h"
#include "datasize.h"
#include "distribution.h"
#include "dlio_metrics.h"
#include "dataset.h"
#include "format.h"
#include "histogram.h"
#include "s3_client.h"
#include "security.h"
#include "launch.h"
#include "log.h"
#include "util.h"
#include "wire.h"
#include "progress.h"
#include "sample_range.h"
#include "sampler.h"
#include "sampler_kind.h"

#include <czmq.h>
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    zframe_t *identity;     /* owned */
    char      host[256];
    uint64_t  pid, cores, memory;
    uint64_t  id, first_rank, ranks;
    int       ready;
    uint64_t  steps_reached;/* STEP messages received this epoch */
    double    last_seen;
    double    grace;        /* seconds the coordinator stalled since last_seen: not counted against it */
    int       gone;
    /* the worker's clock minus ours (NTP-style over WELCOME and READY): its
     * RANK_DONE times are corrected by it */
    double    welcome_sent_at;
    double    clock_offset, clock_rtt;
    int       clock_known;
} s_worker_t;

typedef enum { S_PHASE_NONE, S_PHASE_DATAGEN, S_PHASE_TRAIN, S_PHASE_CHECKPOINT, S_PHASE_EVAL } s_phase_t;

/* Per-endpoint totals of the current run, merged from ENDPOINT_STATS. */
typedef struct {
    char           endpoint[256];
    uint64_t       requests, bytes, errors, retries;
    sb_histogram_t latency;
} s_endpoint_total_t;

typedef struct {
    const sb_session_opts_t *o;
    zsock_t        *router;
    zpoller_t      *poller;
    zactor_t       *auth;           /* CURVE authenticator (zauth), NULL without keys */
    char            endpoint[256];
    sb_launcher_t  *launcher;
    s_worker_t     *workers;
    size_t          nworkers;
    size_t          expected;
    uint64_t        ranks_per_worker;
    int64_t         run_id;
    /* phase */
    s_phase_t       phase;
    uint64_t        epoch;
    uint64_t        files;          /* files used this run (num_files_train) */
    /* the sampler, for rank 0: the figures of every epoch (steps, samples,
     * dropped) that the workers' samplers must agree with (owned) */
    sb_sampler_t   *sampler;
    sb_sampler_epoch_t ep_info;
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
    sb_dataset_t    dataset;
    int             names_match;    /* the catalog's naming is the one WELCOME gives workers */
    /* storage */
    sb_s3_t        *s3;             /* the coordinator's own client (s3): preflight, listing */
    char            key_prefix[1100];
    s_endpoint_total_t endpoints[SB_MAX_ENDPOINTS];
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
    sb_progress_t  *progress;       /* live status, NULL: off */
    /* a local data folder (lib/dataset/datafolder.h) */
    int             lock_fd;        /* its .shardbench.lock, -1: none */
    int             lock_exclusive; /* held exclusive (this session generates) */
    char            folder[PATH_MAX];   /* its real path, no trailing '/' */
    char            probe_dir[PATH_MAX];/* where the probe is ("" none) */
    char            probe[64];      /* the probe's name there, "" none */
    int             generating;     /* a datagen of this session may have written */
    int             read_only;      /* the data folder is read-only here: not locked */
    int             run_open;       /* run_id is begun and not yet finished: errors rows go to it */
    /* issue 15, ckpt: checkpoints during training (wl->ckpt.in_train; the files: ckpt) */
    uint64_t       *ckpt_steps;     /* this epoch's, as PHASE_START ckpt_steps (owned) */
    uint64_t       *ckpt_arrived;   /* per checkpoint of this epoch: ranks that reported it (owned) */
    uint64_t       *ckpt_rank_next; /* per rank: its next checkpoint of this epoch, as it reports them in
                                     * order (owned; a repeated report fails the run) */
    size_t          ckpt_nsteps;
    uint64_t        ckpt_first;     /* run-wide number of this epoch's first checkpoint */
    uint64_t        ckpt_written;   /* checkpoints of the run every rank reported */
    char            ckpt_root[PATH_MAX];    /* checkpoint.checkpoint_folder as workers see it: PHASE_START */
                                            /* ckpt_root, "s3://BUCKET/PREFIX/" or "/abs/folder/" (ckpt_target.h) */
    /* issue 15, workflow: the phases this command ran so far, in order
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
} s_session_t;

/* issue 15, ckpt: checkpoints during training (defined with s_phase_checkpoint) */
static void s_on_ckpt_done (s_session_t *self, s_worker_t *w, const sb_msg_ckpt_done_t *m);
static int s_ckpt_epoch (s_session_t *self, uint64_t e, uint64_t batches, sb_msg_phase_start_t *ps);

/* ---------------------------------------------------------------- signals */

/* The first SIGINT, SIGTERM or SIGHUP asks for a clean stop: every phase
 * (listing, waiting for workers, datagen, training) checks zsys_interrupted
 * within a fraction of a second, ABORTs the workers, records the run and
 * prints the summary; the process then exits 128 + the signal number. A
 * second signal while stopping ends the process at once (default action). */
static volatile sig_atomic_t s_caught;

static void
s_on_signal (int sig)
{
    if (s_caught) {
        signal (sig, SIG_DFL);
        raise (sig);
        return;
    }
    s_caught = sig;
    zsys_interrupted = 1;
    zctx_interrupted = 1;
}

int
sb_session_catch_signals (void)
{
    zsys_handler_set (NULL);    /* CZMQ's own handler knows neither SIGHUP nor the signal number */
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sa.sa_flags = SA_RESTART;
    if (sigemptyset (&sa.sa_mask) != 0 || sigaction (SIGINT, &sa, NULL) != 0 || sigaction (SIGTERM, &sa, NULL) != 0)
        return -1;
    /* under nohup SIGHUP stays ignored, as nohup asked */
    struct sigaction old;
    if (sigaction (SIGHUP, NULL, &old) != 0)
        return -1;
    if (old.sa_handler != SIG_IGN && sigaction (SIGHUP, &sa, NULL) != 0)
        return -1;
    return 0;
}

int
sb_session_signal (void)
{
    return s_caught;
}

static const char *
s_signal_name (void)
{
    return s_caught == SIGINT ? "SIGINT" : s_caught == SIGTERM ? "SIGTERM" : s_caught == SIGHUP ? "SIGHUP" : "a signal";
}

/* ---------------------------------------------------------------- limits */

/* Descriptors of the coordinator itself: stdio, the result database and its
 * journal, ZeroMQ's context, reaper and io thread, the CURVE authenticator,
 * a listing in progress (2 connections per listing stream and 4 of its own
 * client), with room to spare. */
#define S_FDS_BASE 64

/* Raise the soft RLIMIT_NOFILE to the hard limit, then check that the
 * workers' connections fit: one socket per worker, plus the file that keeps
 * ssh's errors per --hosts host. Returns 0, or -1 with the numbers in err. */
int
sb_session_check_limits (const sb_session_opts_t *o, char *err, size_t err_size)
{
    size_t workers = o->kind == SB_SESSION_CATALOG ? 0
                   : o->nhosts ? o->nhosts : o->local_workers ? o->local_workers : o->remote_workers;
    uint64_t soft, hard;
    if (sb_fd_limit_raise (&soft, &hard, err, err_size) != 0)
        return -1;
    uint64_t per_worker = o->nhosts && !o->slurm ? 2 : 1;
    uint64_t s3 = o->wl->storage.type == SB_STORAGE_S3 ? 4 + 2 * o->wl->storage.list_parallelism : 0;
    uint64_t need = (uint64_t) workers * per_worker + S_FDS_BASE + s3;
    if (soft < need) {
        snprintf (err, err_size,
                  "need %llu file descriptors for %zu worker(s) (%llu per worker connection%s, %d for the coordinator"
                  "%s%.0llu), limit is %llu (hard limit %llu): raise it with `ulimit -n %llu` or LimitNOFILE=%llu"
                  " (systemd), or use fewer workers",
                  (unsigned long long) need, workers, (unsigned long long) per_worker,
                  per_worker > 1 ? " and ssh error file" : "", S_FDS_BASE, s3 ? ", S3 listing " : "",
                  (unsigned long long) s3, (unsigned long long) soft,
                  hard == UINT64_MAX ? 0ull : (unsigned long long) hard, (unsigned long long) need,
                  (unsigned long long) need);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- helpers */

static void s_dataset (s_session_t *self, sb_dataset_t *ds);
static void s_marker_dataset (s_session_t *self, sb_dataset_t *ds);
static int s_s3_marker_write (s_session_t *self, const char *state, uint64_t bytes, char *err, size_t err_size);
static int s_keep_alive (void *arg);
static int s_check_objects (s_session_t *self, const sb_dataset_t *ds, const char *what, char *err, size_t err_size);
static void s_lost (s_session_t *self, s_worker_t *w, const char *op, const char *why);
static void s_end_run (s_session_t *self);
static void s_stall_note (s_session_t *self, char *buf, size_t size);

static void
s_fail (s_session_t *self, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_fail (s_session_t *self, const char *fmt, ...)
{
    if (self->failed)
        return;     /* keep the first cause */
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (self->failure, sizeof self->failure, fmt, ap);
    va_end (ap);
    self->failed = 1;
    sb_error ("%s", self->failure);
}

static s_worker_t *
s_worker_by_identity (s_session_t *self, zframe_t *identity)
{
    for (size_t i = 0; i < self->nworkers; i++)
        if (zframe_eq (self->workers[i].identity, identity))
            return &self->workers[i];
    return NULL;
}

/* A worker that joined as host and is not gone (ssh children: one per host). */
static s_worker_t *
s_worker_by_host (s_session_t *self, const char *host)
{
    s_worker_t *gone = NULL;
    for (size_t i = 0; i < self->nworkers; i++)
        if (!strcmp (self->workers[i].host, host)) {
            if (!self->workers[i].gone)
                return &self->workers[i];
            gone = &self->workers[i];
        }
    return gone;
}

static s_worker_t *
s_worker_by_pid (s_session_t *self, pid_t pid)
{
    for (size_t i = 0; i < self->nworkers; i++)
        if (self->workers[i].pid == (uint64_t) pid)
            return &self->workers[i];
    return NULL;
}

static const char *
s_rank_span (const s_worker_t *w, char *buf, size_t size)
{
    if (w->ranks == 1)
        snprintf (buf, size, "rank %llu", (unsigned long long) w->first_rank);
    else
        snprintf (buf, size, "ranks %llu-%llu", (unsigned long long) w->first_rank,
                  (unsigned long long) (w->first_rank + w->ranks - 1));
    return buf;
}

static void
s_clock_text (double t, char *buf, size_t size)
{
    time_t secs = (time_t) t;
    struct tm tm;
    localtime_r (&secs, &tm);
    snprintf (buf, size, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec, (int) ((t - (double) secs) * 1000));
}

static int
s_send (s_session_t *self, s_worker_t *w, const sb_msg_t *msg)
{
    if (w->gone)
        return 0;
    if (sb_wire_send (self->router, w->identity, msg) != 0) {
        int e = zmq_errno ();
        if (e == EMSGSIZE)
            s_fail (self, "the coordinator built a %s message for worker %llu on %s larger than the protocol's %d MiB"
                    " frame limit (not sent)", sb_proto_type_name (msg->type), (unsigned long long) w->id, w->host,
                    SB_PROTO_MAX_FRAME >> 20);
        else if (e == EHOSTUNREACH) {
            /* ROUTER_MANDATORY: the worker's connection is gone (its process
             * died and the kernel closed the socket): a lost worker, found
             * before its heartbeat timeout */
            char why[128];
            snprintf (why, sizeof why, "connection closed (%s not delivered)", sb_proto_type_name (msg->type));
            s_lost (self, w, "connection", why);
        }
        else
            s_fail (self, "cannot send %s to worker %llu on %s: %s", sb_proto_type_name (msg->type),
                    (unsigned long long) w->id, w->host, zmq_strerror (e));
        return -1;
    }
    return 0;
}

static void
s_broadcast (s_session_t *self, const sb_msg_t *msg)
{
    for (size_t i = 0; i < self->nworkers; i++)
        s_send (self, &self->workers[i], msg);
}

static void
s_record_error (s_session_t *self, int64_t rank, const char *host, const char *op, const char *target,
                int64_t errno_val, const char *message)
{
    /* a row that cannot be queued is an error of its own (logged) */
    if (self->run_open && sb_resultdb_add_error (self->o->db, self->run_id, rank, host, op, target, errno_val,
                                                   message) != 0)
        s_fail (self, "%s", sb_resultdb_errmsg (self->o->db));
}

/* A worker that can no longer be reached: its ranks, host, pid and the time
 * it was last heard from go into the failure and an errors row. */
static void
s_lost (s_session_t *self, s_worker_t *w, const char *op, const char *why)
{
    char span[64], when[32], detail[1024], note[384];
    s_clock_text (w->last_seen, when, sizeof when);
    s_stall_note (self, note, sizeof note);
    snprintf (detail, sizeof detail, "%s, last contact at %s%s", why, when, note);
    w->gone = 1;
    s_record_error (self, (int64_t) w->first_rank, w->host, op, NULL, 0, detail);
    s_fail (self, "lost worker %llu on %s (%s, pid %llu): %s", (unsigned long long) w->id, w->host,
            s_rank_span (w, span, sizeof span), (unsigned long long) w->pid, detail);
}

/* ---------------------------------------------------------------- handlers */

static void
s_on_hello (s_session_t *self, zframe_t *identity, sb_msg_hello_t *m)
{
    sb_msg_t reply = { 0 };
    if (self->nworkers >= self->expected) {
        reply.type = SB_MSG_REJECT;
        reply.u.reject.reason = "the run already has all its workers";
        sb_warn ("refused worker on %s (pid %llu): run is full", m->host, (unsigned long long) m->pid);
        if (sb_wire_send (self->router, identity, &reply) != 0)
            sb_debug ("the refused worker on %s could not be told: %s", m->host, zmq_strerror (zmq_errno ()));
        return;
    }
    s_worker_t *w = &self->workers[self->nworkers];
    memset (w, 0, sizeof *w);
    if (!(w->identity = zframe_dup (identity))) {
        s_fail (self, "out of memory admitting the worker on %s (pid %llu)", m->host, (unsigned long long) m->pid);
        return;
    }
    snprintf (w->host, sizeof w->host, "%s", m->host);
    w->pid = m->pid;
    w->cores = m->cores;
    w->memory = m->memory;
    w->id = self->nworkers;
    w->ranks = self->ranks_per_worker;
    w->first_rank = w->id * self->ranks_per_worker;
    w->last_seen = sb_now ();
    self->nworkers++;

    const sb_workload_t *wl = self->o->wl;
    sb_msg_welcome_t *r = &reply.u.welcome;
    reply.type = SB_MSG_WELCOME;
    r->worker = w->id;
    r->first_rank = w->first_rank;
    r->ranks = w->ranks;
    r->total_ranks = self->o->accelerators;
    r->heartbeat_ms = (uint64_t) (wl->heartbeat_interval_s * 1000);
    r->timeout_ms = (uint64_t) (wl->heartbeat_timeout_s * 1000);
    r->data_root = self->catalog_info.prefix;
    r->format = (char *) wl->format;
    r->file_prefix = (char *) wl->file_prefix;
    r->num_files = wl->num_files_train;
    r->num_subfolders = wl->num_subfolders_train;
    r->samples_per_file = wl->num_samples_per_file;
    r->record_length = wl->record_length_bytes;
    r->record_stdev = wl->record_length_bytes_stdev;
    r->parquet_columns = (char *) wl->parquet_columns;
    r->parquet_row_group = wl->parquet_row_group;
    r->parquet_compression = (char *) wl->compression;
    r->parquet_read_columns = (char *) wl->parquet_read_columns;
    r->batch_size = wl->batch_size;
    r->read_threads = wl->read_threads;
    r->prefetch_size = wl->prefetch_size;
    r->computation_time = wl->computation_time;
    r->compute_dist = (char *) sb_dist_name (wl->compute.type);
    r->compute_a = wl->compute.a;
    r->compute_b = wl->compute.b;
    r->sync = (char *) sb_workload_sync_name (wl->sync);
    r->seed = self->o->seed;
    r->io_buffer = wl->io_buffer_bytes;
    r->verify = (uint64_t) wl->verify;
    r->keys_page = wl->keys_page;
    r->data_probe = self->probe;
    r->stall_timeout_ms = (uint64_t) (wl->stall_timeout_s * 1000);
    r->odirect = (uint64_t) wl->odirect;
    r->drop_page_cache = (uint64_t) wl->drop_page_cache;
    r->metric_steps = sb_dlio_nominal_steps (wl->num_samples_per_file, wl->num_files_train, wl->batch_size,
                                             self->o->accelerators, wl->total_training_steps);
    r->metric_exclude_start = wl->exclude_start_steps;
    r->metric_exclude_end = wl->exclude_end_steps;
    r->sampler = (char *) sb_sampler_kind_name (sb_sampler_kind_for (wl));
    r->expected = wl->num_files_train;
    r->sample_shuffle = (uint64_t) wl->sample_shuffle;
    r->file_shuffle = (uint64_t) wl->file_shuffle;
    r->seed_change_epoch = (uint64_t) wl->seed_change_epoch;
    r->max_steps = wl->total_training_steps > 0 ? (uint64_t) wl->total_training_steps : 0;
    r->loader_threads = sb_loader_threads (wl->read_threads, w->cores, w->ranks);
    r->trace = (char *) wl->trace;
    r->record_element_type = (char *) wl->record_element_type;     /* issue 15, formats */
    r->record_dims = (sb_u64s_t) { wl->record_ndims, (uint64_t *) wl->record_dims };
    /* the evaluation set: datagen writes it, eval phases read it */
    r->eval_files = wl->num_files_eval;
    r->eval_subfolders = wl->num_subfolders_eval;
    r->eval_batch_size = wl->batch_size_eval;
    r->eval_time = wl->eval_time;
    r->eval_time_stdev = wl->eval_time_stdev;
    /* issue 15, preproc: where DLIO's reader sleeps it (s_sampler_new warns where it does not) */
    sb_dist_t pre = sb_preprocess_applies (sb_sampler_kind_for (wl), wl) ? wl->preprocess
                                                                          : (sb_dist_t) { SB_DIST_CONSTANT, 0, 0 };
    r->preprocess_dist = (char *) sb_dist_name (pre.type);
    r->preprocess_a = pre.a;
    r->preprocess_b = pre.b;
    if (sb_storage_to_welcome (&wl->storage, r) != 0) {
        s_fail (self, "out of memory");
        return;
    }
    char span[64];
    sb_info ("worker %llu joined: %s pid %llu, %s", (unsigned long long) w->id, w->host,
             (unsigned long long) w->pid, s_rank_span (w, span, sizeof span));
    w->welcome_sent_at = sb_now ();
    s_send (self, w, &reply);   /* borrowed strings: only the endpoints array is ours */
    free (r->endpoints.items);
}

/* The worker's clock offset from one round trip: WELCOME sent (c0, ours),
 * received (w1, its), READY sent (w2, its), received (c3, ours). The offset
 * is right within half the round trip (c3 - c0) - (w2 - w1). */
static void
s_measure_clock (s_session_t *self, s_worker_t *w, const sb_msg_ready_t *m)
{
    double c0 = w->welcome_sent_at, c3 = sb_now (), w1 = m->welcome_received_at, w2 = m->sent_at;
    double rtt = (c3 - c0) - (w2 - w1), offset = ((w1 - c0) + (w2 - c3)) / 2;
    if (!(isfinite (w1) && isfinite (w2) && w1 > 0 && w2 >= w1 && rtt > -1e-3 && isfinite (offset))) {
        sb_warn ("worker %llu on %s sent clock times that make no sense (WELCOME received at %.6f, READY sent at"
                 " %.6f): its times are taken as they are", (unsigned long long) w->id, w->host, w1, w2);
        return;
    }
    w->clock_offset = offset;
    w->clock_rtt = rtt > 0 ? rtt : 0;
    w->clock_known = 1;
    if (fabs (offset) > 0.05 && fabs (offset) > w->clock_rtt)
        sb_warn ("worker %llu on %s: its clock is %.3f s %s the coordinator's (measured within %.1f ms): its rank"
                 " times are corrected", (unsigned long long) w->id, w->host, fabs (offset),
                 offset > 0 ? "ahead of" : "behind", w->clock_rtt * 1000 / 2);
}

/* READY: the worker's clock offset; its preflight failures become rows of
 * one table. */
static void
s_on_ready (s_session_t *self, s_worker_t *w, const sb_msg_ready_t *m)
{
    w->ready = 1;
    s_measure_clock (self, w, m);
    for (size_t i = 0; i < m->causes.count && i < m->failed_endpoints.count; i++) {
        char row[2048];
        int n = snprintf (row, sizeof row, "  %-20s %-28s %s\n", w->host, m->failed_endpoints.items[i], m->causes.items[i]);
        if (n <= 0)
            continue;
        if ((size_t) n >= sizeof row)
            n = (int) sizeof row - 1;     /* snprintf says what it would have written */
        char *grown = realloc (self->preflight, self->preflight_len + (size_t) n + 1);
        if (!grown) {   /* a preflight failure must not be lost: the run would go on */
            s_fail (self, "out of memory recording the preflight failure of %s on %s: %s", m->failed_endpoints.items[i],
                    w->host, m->causes.items[i]);
            return;
        }
        self->preflight = grown;
        memcpy (self->preflight + self->preflight_len, row, (size_t) n + 1);
        self->preflight_len += (size_t) n;
    }
}

static void
s_on_endpoint_stats (s_session_t *self, const sb_msg_endpoint_stats_t *m)
{
    s_endpoint_total_t *t = NULL;
    for (size_t i = 0; i < self->nendpoints && !t; i++)
        if (strcmp (self->endpoints[i].endpoint, m->endpoint) == 0)
            t = &self->endpoints[i];
    if (!t) {
        if (self->nendpoints == SB_MAX_ENDPOINTS) {
            sb_warn ("more than %d endpoints reported: %s not counted", SB_MAX_ENDPOINTS, m->endpoint);
            return;
        }
        t = &self->endpoints[self->nendpoints++];
        memset (t, 0, sizeof *t);
        snprintf (t->endpoint, sizeof t->endpoint, "%s", m->endpoint);
    }
    t->requests += m->requests;
    t->bytes += m->bytes;
    t->errors += m->errors;
    t->retries += m->retries;
    sb_progress_errors (self->progress, m->errors, m->retries);
    sb_histogram_merge_counts (&t->latency, m->latency.items, m->latency.count);
}

static void s_dataset (s_session_t *self, sb_dataset_t *ds);

/* ENTRIES_REQ: the catalog entries a worker cannot derive, one lookup in
 * the in-memory index per entry (a SQLite seek only for a stored key). */
static void
s_on_entries_req (s_session_t *self, s_worker_t *w, const sb_msg_entries_req_t *m)
{
    if ((self->phase != S_PHASE_TRAIN && self->phase != S_PHASE_EVAL) || m->epoch != self->epoch) {
        sb_debug ("stale ENTRIES_REQ for epoch %llu ignored", (unsigned long long) m->epoch);
        return;
    }
    /* the set this phase reads: train/'s catalog, or valid/'s */
    int eval = self->phase == S_PHASE_EVAL;
    sb_catalog_reader_t *catalog = eval ? self->eval_catalog : self->catalog;
    const sb_catalog_info_t *info = eval ? &self->eval_catalog_info : &self->catalog_info;
    if (!catalog) {
        s_fail (self, "worker %llu on %s asked for catalog entries of %s, which has no catalog (dataset.skip_listing"
                " or synthetic storage)", (unsigned long long) w->id, w->host, eval ? "valid/" : "train/");
        return;
    }
    size_t n = m->indices.count;
    if (n == 0 || n > self->o->wl->keys_page) {
        s_fail (self, "worker %llu on %s asked for %zu catalog entries in one page (1 to shardbench.keys_page=%llu)",
                (unsigned long long) w->id, w->host, n, (unsigned long long) self->o->wl->keys_page);
        return;
    }
    sb_msg_t reply = { .type = SB_MSG_ENTRIES };
    sb_msg_entries_t *r = &reply.u.entries;
    r->epoch = m->epoch;
    r->seq = m->seq;
    r->sizes.items = calloc (n, sizeof (uint64_t));
    r->dlio.items = calloc (n, sizeof (uint64_t));
    int with_keys = !(eval ? self->eval_names : self->catalog_names);
    if (!r->sizes.items || !r->dlio.items || (with_keys && !(r->keys.items = calloc (n, sizeof (char *))))) {
        s_fail (self, "out of memory serving catalog entries");
        goto done;
    }
    r->sizes.count = r->dlio.count = n;
    const sb_dataset_t *naming = sb_catalog_reader_naming (catalog);
    uint64_t key_bytes = 0;
    for (size_t j = 0; j < n; j++) {
        uint64_t idx = m->indices.items[j], size = 0, dlio = 0;
        int named = sb_catalog_reader_locate (catalog, idx, &size, &dlio);
        if (named < 0) {
            s_fail (self, "worker %llu on %s asked for object %llu of catalog %lld, which has %llu",
                    (unsigned long long) w->id, w->host, (unsigned long long) idx, (long long) info->id,
                    (unsigned long long) info->count);
            goto done;
        }
        r->sizes.items[j] = size;
        r->dlio.items[j] = named ? dlio : SB_NO_DLIO_INDEX;
        if (!with_keys)
            continue;
        char key[PATH_MAX];
        uint64_t ignored;
        if (named ? !naming || sb_dataset_key (naming, dlio, key, sizeof key) != 0
                  : sb_catalog_reader_get (catalog, idx, key, sizeof key, &ignored) != 0) {
            s_fail (self, "catalog %lld has no key for object %llu", (long long) info->id,
                    (unsigned long long) idx);
            goto done;
        }
        if (!(r->keys.items[j] = strdup (key))) {
            s_fail (self, "out of memory serving catalog entries");
            goto done;
        }
        r->keys.count = j + 1;
        key_bytes += strlen (key);
    }
    /* the page must fit in one frame (workers drop the connection of a
     * larger one, which would look like a lost worker): the keys, about 9
     * bytes for each of size and index, and a margin for the rest */
    uint64_t estimate = key_bytes + (uint64_t) n * 24 + 4096;
    if (estimate > SB_PROTO_MAX_FRAME) {
        s_fail (self, "the coordinator cannot send worker %llu its page of %zu catalog entries: about %llu bytes (%llu"
                " of keys), over the protocol's %d MiB frame limit: lower shardbench.keys_page (now %llu)",
                (unsigned long long) w->id, n, (unsigned long long) estimate, (unsigned long long) key_bytes,
                SB_PROTO_MAX_FRAME >> 20, (unsigned long long) self->o->wl->keys_page);
        goto done;
    }
    s_send (self, w, &reply);
done:
    sb_proto_fini (&reply);
}

static void
s_on_step (s_session_t *self, s_worker_t *w, const sb_msg_step_t *m)
{
    if (self->phase != S_PHASE_TRAIN || m->epoch != self->epoch || self->o->wl->sync != SB_SYNC_STEP) {
        s_fail (self, "worker %llu on %s sent an unexpected STEP (epoch %llu, step %llu)", (unsigned long long) w->id,
                w->host, (unsigned long long) m->epoch, (unsigned long long) m->step);
        return;
    }
    if (m->step != self->barrier_step || w->steps_reached != m->step) {
        s_fail (self, "worker %llu on %s reached step %llu while the barrier is at step %llu",
                (unsigned long long) w->id, w->host, (unsigned long long) m->step,
                (unsigned long long) self->barrier_step);
        return;
    }
    w->steps_reached = m->step + 1;
    if (++self->barrier_arrived < self->nworkers)
        return;
    sb_msg_t go = { .type = SB_MSG_GO };
    go.u.go.epoch = self->epoch;
    go.u.go.step = self->barrier_step;
    go.u.go.worker = w->id;     /* its STEP completed the barrier: it measures the barrier's own cost */
    s_broadcast (self, &go);
    self->barrier_step++;
    sb_progress_step (self->progress, self->barrier_step);
    self->barrier_arrived = 0;
}

/* A rank finished an evaluation: DLIO's figures of the rank
 * (compute_metrics_eval: AU over the metric window, 0 without compute;
 * throughput over every step and the whole span) and its eval_ranks row. */
static void
s_on_eval_rank_done (s_session_t *self, s_worker_t *w, const sb_msg_rank_done_t *m, double started_at,
                     double finished_at)
{
    uint64_t batch = self->o->wl->batch_size_eval;
    double span = m->finished_at - m->started_at;
    sb_dlio_rank_t fig;
    sb_dlio_rank_figures (span, m->head_proc_s, m->tail_proc_s, m->metric_compute_s, m->metric_steps, m->batches,
                          batch, &fig);
    sb_eval_rank_t er = {
        .epoch = m->epoch, .rank = m->rank, .samples = m->samples, .steps = m->batches, .bytes = m->bytes,
        .host = w->host, .started_at = started_at, .finished_at = finished_at, .compute_s = m->compute_s,
        .io_wait_s = m->io_wait_s, .au_percentage = m->metric_compute_s > 0 ? fig.au_percentage : 0,
        .samples_per_s = span > 0 ? (double) m->batches * (double) batch / span : 0,
    };
    self->ep_dlio_au_sum += er.au_percentage;
    self->ep_dlio_tput_sum += er.samples_per_s;
    sb_histogram_merge_counts (&self->read_latency, m->read_latency.items, m->read_latency.count);
    if (!self->ep_ranks++ || started_at < self->ep_first_start)
        self->ep_first_start = started_at;
    if (finished_at > self->ep_last_finish)
        self->ep_last_finish = finished_at;
    self->ep_samples += m->samples;
    self->ep_bytes += m->bytes;
    if (sb_resultdb_add_eval_rank (self->o->db, self->run_id, &er) != 0)
        s_fail (self, "cannot record rank %llu of the evaluation after epoch %llu: %s", (unsigned long long) m->rank,
                (unsigned long long) m->epoch, sb_resultdb_errmsg (self->o->db));
    self->ranks_done++;
}

static void
s_on_rank_done (s_session_t *self, s_worker_t *w, const sb_msg_rank_done_t *m)
{
    char span[64];
    if (m->rank < w->first_rank || m->rank >= w->first_rank + w->ranks || m->epoch != self->epoch
        || self->phase == S_PHASE_NONE) {
        s_fail (self, "worker %llu on %s (%s) reported rank %llu done for epoch %llu unexpectedly",
                (unsigned long long) w->id, w->host, s_rank_span (w, span, sizeof span), (unsigned long long) m->rank,
                (unsigned long long) m->epoch);
        return;
    }
    if (self->rank_done[m->rank]) {
        s_fail (self, "worker %llu on %s reported rank %llu done twice for epoch %llu", (unsigned long long) w->id,
                w->host, (unsigned long long) m->rank, (unsigned long long) m->epoch);
        return;
    }
    /* times are finite and not negative, AU a fraction: anything else would poison every mean and chart */
    if (!(m->started_at >= 0 && isfinite (m->started_at) && m->finished_at >= 0 && isfinite (m->finished_at)
          && m->compute_s >= 0 && isfinite (m->compute_s) && m->io_wait_s >= 0 && isfinite (m->io_wait_s)
          && m->barrier_s >= 0 && isfinite (m->barrier_s) && m->au >= 0 && m->au <= 1
          && m->resident_bytes <= m->checked_bytes)) {
        s_fail (self, "rank %llu on %s reported impossible figures for epoch %llu: started %g, finished %g, compute %g s,"
                " io wait %g s, barrier %g s, AU %g, %llu of %llu checked bytes resident", (unsigned long long) m->rank,
                w->host, (unsigned long long) m->epoch, m->started_at, m->finished_at, m->compute_s, m->io_wait_s,
                m->barrier_s, m->au, (unsigned long long) m->resident_bytes, (unsigned long long) m->checked_bytes);
        return;
    }
    if (self->phase == S_PHASE_TRAIN
        && !(m->ckpt_s >= 0 && m->ckpt_s <= m->finished_at - m->started_at)) {
        s_fail (self, "rank %llu on %s reported %g s of checkpoints in epoch %llu of %g s", (unsigned long long) m->rank,
                w->host, m->ckpt_s, (unsigned long long) m->epoch, m->finished_at - m->started_at);
        return;
    }
    if ((self->phase == S_PHASE_TRAIN || self->phase == S_PHASE_EVAL)
        && !(m->metric_steps <= m->batches && m->metric_compute_s >= 0 && isfinite (m->metric_compute_s)
             && m->head_proc_s >= 0 && isfinite (m->head_proc_s) && m->tail_proc_s >= 0 && isfinite (m->tail_proc_s))) {
        s_fail (self, "rank %llu on %s reported impossible DLIO metric sums for epoch %llu: %llu of %llu steps in the"
                " window, their compute %g s, excluded proc time %g s + %g s", (unsigned long long) m->rank, w->host,
                (unsigned long long) m->epoch, (unsigned long long) m->metric_steps, (unsigned long long) m->batches,
                m->metric_compute_s, m->head_proc_s, m->tail_proc_s);
        return;
    }
    if (self->phase == S_PHASE_TRAIN
        && (m->samples != self->ep_info.samples_per_rank || m->batches != self->ep_info.steps)) {
        s_fail (self, "rank %llu on %s finished epoch %llu with %llu samples and %llu steps, expected %llu and %llu",
                (unsigned long long) m->rank, w->host, (unsigned long long) m->epoch, (unsigned long long) m->samples,
                (unsigned long long) m->batches, (unsigned long long) self->ep_info.samples_per_rank,
                (unsigned long long) self->ep_info.steps);
        return;
    }
    if (self->phase == S_PHASE_EVAL
        && (m->samples != self->eval_info.samples_per_rank || m->batches != self->eval_info.steps)) {
        s_fail (self, "rank %llu on %s finished the evaluation after epoch %llu with %llu samples and %llu steps,"
                " expected %llu and %llu", (unsigned long long) m->rank, w->host, (unsigned long long) m->epoch,
                (unsigned long long) m->samples, (unsigned long long) m->batches,
                (unsigned long long) self->eval_info.samples_per_rank, (unsigned long long) self->eval_info.steps);
        return;
    }
    self->rank_done[m->rank] = 1;
    /* on the coordinator's clock: an epoch spans ranks of several hosts */
    double offset = w->clock_known ? w->clock_offset : 0, started_at = m->started_at - offset,
           finished_at = m->finished_at - offset;
    if (self->phase == S_PHASE_EVAL) {
        s_on_eval_rank_done (self, w, m, started_at, finished_at);
        return;
    }
    if (self->phase == S_PHASE_CHECKPOINT) {
        uint64_t want = self->ckpt.model_bytes[m->rank] + self->ckpt.optim_bytes[m->rank];
        if (m->bytes != want)
            s_fail (self, "rank %llu on %s %s %llu bytes of checkpoint %llu, expected %llu", (unsigned long long) m->rank,
                    w->host, strcmp (self->ckpt_op, "write") == 0 ? "wrote" : "read", (unsigned long long) m->bytes,
                    (unsigned long long) self->ckpt_index, (unsigned long long) want);
        else if (sb_ckpt_add_rank (self->o->db, self->run_id, m->epoch, self->ckpt_op,
                                   self->ckpt_index, m->rank, w->host, m->samples, m->bytes, started_at,
                                   finished_at) != 0)
            s_fail (self, "cannot record rank %llu of checkpoint %llu: %s", (unsigned long long) m->rank,
                    (unsigned long long) self->ckpt_index, sb_resultdb_errmsg (self->o->db));
        self->ranks_done++;
        return;
    }
    sb_rank_epoch_t re = {
        .epoch = m->epoch, .rank = m->rank, .samples = m->samples, .batches = m->batches, .bytes = m->bytes,
        .host = w->host, .started_at = started_at, .finished_at = finished_at, .compute_s = m->compute_s,
        .au = m->au, .io_wait_s = m->io_wait_s, .barrier_s = m->barrier_s, .has_au = self->phase == S_PHASE_TRAIN,
        .resident_bytes = m->resident_bytes, .checked_bytes = m->checked_bytes,
    };
    if (self->phase == S_PHASE_TRAIN) {
        /* DLIO's figures of the rank, over its own clock's span */
        sb_dlio_rank_t fig;
        /* checkpoints are out of DLIO's blocks (StatsCounter end_block before save_ckpt) */
        sb_dlio_rank_figures (m->finished_at - m->started_at - m->ckpt_s, m->head_proc_s, m->tail_proc_s,
                              m->metric_compute_s,
                              m->metric_steps, m->batches, self->o->wl->batch_size, &fig);
        re.metric_steps = m->metric_steps;
        re.metric_compute_s = m->metric_compute_s;
        re.metric_excluded_s = m->head_proc_s + m->tail_proc_s;
        re.metric_time_s = fig.total_time_s;
        re.dlio_au_percentage = fig.au_percentage;
        re.dlio_samples_per_s = fig.samples_per_second;
        self->ep_dlio_au_sum += fig.au_percentage;
        self->ep_dlio_tput_sum += fig.samples_per_second;
    }
    sb_histogram_merge_counts (&self->barrier_latency, m->barrier_latency.items, m->barrier_latency.count);
    sb_histogram_merge_counts (&self->read_latency, m->read_latency.items, m->read_latency.count);
    sb_histogram_merge_counts (&self->barrier_own, m->barrier_own.items, m->barrier_own.count);
    if (!self->ep_ranks++ || re.started_at < self->ep_first_start)
        self->ep_first_start = re.started_at;
    if (re.finished_at > self->ep_last_finish)
        self->ep_last_finish = re.finished_at;
    self->ep_samples += re.samples;
    self->ep_bytes += re.bytes;
    self->ep_au_sum += re.au;
    if (sb_resultdb_add_rank_epoch (self->o->db, self->run_id, &re) != 0)
        s_fail (self, "cannot record rank %llu of epoch %llu: %s", (unsigned long long) m->rank,
                (unsigned long long) m->epoch, sb_resultdb_errmsg (self->o->db));
    self->ranks_done++;
}

static void
s_on_error (s_session_t *self, s_worker_t *w, const sb_msg_error_t *m)
{
    sb_error_detail_t d = { .endpoint = m->endpoint, .http_status = m->http_status, .s3_code = m->s3_code,
                            .curl_code = m->curl_code, .attempt = m->attempt };
    if (self->run_id > 0 && sb_resultdb_add_error_detail (self->o->db, self->run_id, m->rank, w->host, m->op, m->target,
                                                          m->errno_val, m->message, &d) != 0)
        sb_error ("cannot record the error of worker %llu: %s", (unsigned long long) w->id,
                  sb_resultdb_errmsg (self->o->db));
    if (m->rank >= 0)
        s_fail (self, "rank %lld on %s: %s", (long long) m->rank, w->host, m->message);
    else
        s_fail (self, "worker %llu on %s: %s", (unsigned long long) w->id, w->host, m->message);
}

static void
s_on_stats (s_session_t *self, s_worker_t *w, const sb_msg_stats_t *m)
{
    if (m->rank < w->first_rank || m->rank >= w->first_rank + w->ranks || m->epoch != self->epoch) {
        self->rejected_frames++;
        sb_warn ("STATS for rank %llu epoch %llu from worker %llu on %s ignored (not its rank or not this epoch)",
                 (unsigned long long) m->rank, (unsigned long long) m->epoch, (unsigned long long) w->id, w->host);
        return;
    }
    if (self->run_id > 0 && self->phase != S_PHASE_EVAL   /* timeseries: the training epochs' seconds */
        && sb_resultdb_add_stats (self->o->db, self->run_id, sb_now (), m->epoch, m->rank, m->samples, m->bytes,
                                  m->reads, (double) m->read_ns / 1e9, (double) m->compute_ns / 1e9) != 0)
        s_fail (self, "cannot record the counters of rank %llu: %s", (unsigned long long) m->rank,
                sb_resultdb_errmsg (self->o->db));
    sb_progress_stats (self->progress, m->rank, w->host, m->samples, m->bytes, (double) m->compute_ns / 1e9);
}

/* Receive and dispatch one message; 0 when none was waiting. */
static int
s_dispatch (s_session_t *self)
{
    zframe_t *identity = NULL;
    sb_msg_t msg;
    char reason[256];
    uint64_t peer_version = 0;
    int interrupted = 0;
    sb_proto_status_t st = sb_wire_recv (self->router, &identity, &msg, reason, sizeof reason, &peer_version,
                                         &interrupted);
    if (interrupted)
        return 0;   /* nothing queued (the socket does not block) */
    s_worker_t *w = identity ? s_worker_by_identity (self, identity) : NULL;
    if (st != SB_PROTO_OK) {
        self->rejected_frames++;
        sb_warn ("rejected a frame from %s: %s", w ? w->host : "an unknown peer", reason);
        /* Tell the sender why, unless it is an admitted worker (REJECT would end it). */
        if (identity && (st == SB_PROTO_EVERSION || !w)) {
            sb_msg_t rej = { .type = SB_MSG_REJECT };
            char text[320];
            if (st == SB_PROTO_EVERSION)
                snprintf (text, sizeof text, "coordinator speaks protocol version %d, you sent version %llu",
                          SB_PROTO_VERSION, (unsigned long long) peer_version);
            else
                snprintf (text, sizeof text, "frame rejected: %s", reason);
            rej.u.reject.reason = text;
            if (sb_wire_send (self->router, identity, &rej) != 0)
                sb_debug ("the sender of the rejected frame could not be told: %s", zmq_strerror (zmq_errno ()));
        }
        zframe_destroy (&identity);
        return 1;
    }
    if (w) {
        w->last_seen = sb_now ();
        w->grace = 0;
    }
    if (msg.type == SB_MSG_HELLO) {
        if (w)
            sb_warn ("duplicate HELLO from worker %llu ignored", (unsigned long long) w->id);
        else
            s_on_hello (self, identity, &msg.u.hello);
    }
    else if (!w) {
        self->rejected_frames++;
        sb_warn ("%s from a peer that never said HELLO ignored", sb_proto_type_name (msg.type));
    }
    else {
        char span[64];
        switch (msg.type) {
        case SB_MSG_READY: s_on_ready (self, w, &msg.u.ready); break;
        case SB_MSG_ENDPOINT_STATS:
            if (msg.u.endpoint_stats.rank < w->first_rank || msg.u.endpoint_stats.rank >= w->first_rank + w->ranks) {
                self->rejected_frames++;
                sb_warn ("ENDPOINT_STATS for rank %llu from worker %llu ignored (not its rank)",
                         (unsigned long long) msg.u.endpoint_stats.rank, (unsigned long long) w->id);
            }
            else
                s_on_endpoint_stats (self, &msg.u.endpoint_stats);
            break;
        case SB_MSG_HEARTBEAT: break;
        case SB_MSG_ENTRIES_REQ: s_on_entries_req (self, w, &msg.u.entries_req); break;
        case SB_MSG_STEP: s_on_step (self, w, &msg.u.step); break;
        case SB_MSG_STATS: s_on_stats (self, w, &msg.u.stats); break;
        case SB_MSG_RANK_DONE: s_on_rank_done (self, w, &msg.u.rank_done); break;
        case SB_MSG_CKPT_DONE: s_on_ckpt_done (self, w, &msg.u.ckpt_done); break;
        case SB_MSG_ERROR: s_on_error (self, w, &msg.u.error); break;
        case SB_MSG_BYE: {
            char note[384];
            s_stall_note (self, note, sizeof note);
            w->gone = 1;
            s_fail (self, "worker %llu on %s (%s) left: %s%s", (unsigned long long) w->id, w->host,
                    s_rank_span (w, span, sizeof span), msg.u.bye.reason, note);
            break;
        }
        default:
            self->rejected_frames++;
            sb_warn ("unexpected %s from worker %llu ignored", sb_proto_type_name (msg.type), (unsigned long long) w->id);
        }
    }
    sb_proto_fini (&msg);
    zframe_destroy (&identity);
    return 1;
}

/* The srun step running every worker (--slurm) ended: before they all
 * joined, or while some still run, the run fails naming srun, with the
 * tail of its stderr (which carries the workers' own). */
static void
s_srun_ended (s_session_t *self, pid_t pid, const char *how)
{
    size_t running = 0;
    for (size_t i = 0; i < self->nworkers; i++)
        running += !self->workers[i].gone;
    if (self->nworkers == self->expected && running == 0)
        return;     /* every worker was already reported gone */
    char out[512];
    sb_launcher_output (self->launcher, pid, out, sizeof out);
    if (self->nworkers < self->expected)
        s_fail (self, "srun ended before all %zu workers joined (%zu did; %s)%s%s", self->expected, self->nworkers,
                how, *out ? ": " : "", out);
    else {
        for (size_t i = 0; i < self->nworkers; i++)
            if (!self->workers[i].gone) {
                self->workers[i].gone = 1;
                s_record_error (self, (int64_t) self->workers[i].first_rank, self->workers[i].host, "worker", NULL, 0,
                                how);
            }
        s_fail (self, "srun ended while %zu worker(s) still ran (%s)%s%s", running, how, *out ? ": " : "", out);
    }
}

/* The coordinator's loop (or a keep-alive during a listing) runs: a gap
 * since the last run longer than max(1 s, heartbeat interval) was a stall
 * of the coordinator itself, and every worker's deadline moves by it (it
 * could not hear them meanwhile; their queued messages come next). */
static void
s_loop_ran (s_session_t *self, double now)
{
    double gap = self->loop_at > 0 ? now - self->loop_at : 0;
    double limit = self->o->wl->heartbeat_interval_s > 1 ? self->o->wl->heartbeat_interval_s : 1;
    self->loop_at = now;
    if (gap <= limit)
        return;
    self->stalled_s = gap;
    self->stalled_until = now;
    for (size_t i = 0; i < self->nworkers; i++)
        self->workers[i].grace += gap;
    if (self->nworkers)
        sb_warn ("the coordinator itself did not run for %.1f s (stopped, swapped out or busy): the workers' heartbeat"
                 " deadlines move by as much", gap);
}

/* For a failure that names a worker: when the coordinator itself stalled
 * lately for longer than the heartbeat timeout, say so (the worker most
 * likely gave up on the coordinator, not the other way round). "" else. */
static void
s_stall_note (s_session_t *self, char *buf, size_t size)
{
    buf[0] = '\0';
    double timeout = self->o->wl->heartbeat_timeout_s;
    if (self->stalled_s <= 0 || self->stalled_s < timeout / 2 || sb_now () - self->stalled_until > 2 * timeout + 1)
        return;
    char until[32];
    s_clock_text (self->stalled_until, until, sizeof until);
    snprintf (buf, size, "; the coordinator itself did not run for %.1f s until %s (stopped, swapped out or busy)%s",
              self->stalled_s, until, self->stalled_s >= timeout
              ? ", longer than the heartbeat timeout: the worker most likely gave up on the coordinator" : "");
}

/* Heartbeats, silent workers, exited local workers. */
static void
s_housekeeping (s_session_t *self, int backlog)
{
    if (sb_resultdb_flush_if_due (self->o->db) != 0)
        s_fail (self, "cannot commit to the result database: %s", sb_resultdb_errmsg (self->o->db));
    /* the writer's news: a lock is logged; a row lost fails the run */
    if (sb_resultdb_poll (self->o->db) != 0)
        s_fail (self, "%s", sb_resultdb_errmsg (self->o->db));
    double now = sb_now ();
    const sb_workload_t *wl = self->o->wl;
    sb_progress_tick (self->progress, now);
    if (now >= self->next_heartbeat) {
        sb_msg_t hb = { .type = SB_MSG_HEARTBEAT };
        s_broadcast (self, &hb);
        self->next_heartbeat = now + wl->heartbeat_interval_s;
    }
    char span[64];
    /* with frames still queued (the drain stopped at its cap), a silence is
     * the coordinator's backlog, not the worker's: no verdict yet */
    for (size_t i = 0; i < self->nworkers && !self->failed && !backlog; i++) {
        s_worker_t *w = &self->workers[i];
        if (!w->gone && now - w->last_seen - w->grace > wl->heartbeat_timeout_s) {
            char why[64];
            snprintf (why, sizeof why, "no message for %.1f s", now - w->last_seen);
            s_lost (self, w, "heartbeat", why);
        }
    }
    pid_t pid;
    int status;
    while (self->launcher && sb_launcher_poll (self->launcher, &pid, &status)) {
        char how[128];
        sb_launcher_describe (status, how, sizeof how);
        if (sb_launcher_is_srun (self->launcher, pid)) {
            s_srun_ended (self, pid, how);
            continue;
        }
        const char *host = sb_launcher_host (self->launcher, pid);
        s_worker_t *w = host ? s_worker_by_host (self, host) : s_worker_by_pid (self, pid);
        if (host && (!w || !w->gone)) {
            char out[512];
            sb_launcher_output (self->launcher, pid, out, sizeof out);
            if (!w)
                s_fail (self, "host %s: ssh ended before its worker joined (%s)%s%s", host, how, *out ? ": " : "", out);
            else {
                w->gone = 1;
                s_record_error (self, (int64_t) w->first_rank, w->host, "worker", NULL, 0, how);
                char note[384];
                s_stall_note (self, note, sizeof note);
                s_fail (self, "worker %llu on %s (%s) ended: ssh %s%s%s%s", (unsigned long long) w->id, host,
                        s_rank_span (w, span, sizeof span), how, *out ? ": " : "", out, note);
            }
        }
        else if (host)
            ;   /* its worker was already reported gone (heartbeat, BYE) */
        else if (w && !w->gone) {
            w->gone = 1;
            s_record_error (self, (int64_t) w->first_rank, w->host, "worker", NULL, 0, how);
            char note[384];
            s_stall_note (self, note, sizeof note);
            s_fail (self, "local worker %llu on %s (%s, pid %d) ended: %s%s", (unsigned long long) w->id, w->host,
                    s_rank_span (w, span, sizeof span), (int) pid, how, note);
        }
        else if (!w)
            s_fail (self, "local worker pid %d ended before joining: %s", (int) pid, how);
    }
}

static int s_all_joined (s_session_t *self);

/* Append text to buf (NUL-terminated, size bytes), cut at the end. */
static void
s_append (char *buf, size_t size, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static void
s_append (char *buf, size_t size, const char *fmt, ...)
{
    size_t n = strlen (buf);
    if (n + 1 >= size)
        return;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf + n, size - n, fmt, ap);
    va_end (ap);
}

/* Who joined and who is missing, for a join timeout: the workers that said
 * HELLO (host and pid), those among them still in their preflight, and the
 * ones never heard from, by host (--hosts) or pid (--local) when known. */
static void
s_join_detail (s_session_t *self, char *buf, size_t size)
{
    buf[0] = '\0';
    s_append (buf, size, ": %zu of %zu joined", self->nworkers, self->expected);
    for (size_t i = 0; i < self->nworkers && i < 16; i++)
        s_append (buf, size, "%s%s pid %llu", i ? ", " : " (", self->workers[i].host,
                  (unsigned long long) self->workers[i].pid);
    if (self->nworkers > 16)
        s_append (buf, size, ", ... %zu more", self->nworkers - 16);
    if (self->nworkers)
        s_append (buf, size, ")");
    size_t unready = 0;
    for (size_t i = 0; i < self->nworkers; i++)
        unready += !self->workers[i].ready;
    if (unready)
        s_append (buf, size, "; %zu of them did not finish their preflight (READY)", unready);
    if (self->nworkers >= self->expected)
        return;
    size_t listed = 0, missing = self->expected - self->nworkers;
    if (self->o->nhosts) {
        s_append (buf, size, "; missing: ");
        for (size_t h = 0; h < self->o->nhosts; h++) {
            size_t i = 0;
            while (i < self->nworkers && strcmp (self->workers[i].host, self->o->hosts[h]) != 0)
                i++;
            if (i < self->nworkers)
                continue;
            if (listed < 16)
                s_append (buf, size, "%s%s", listed ? ", " : "", self->o->hosts[h]);
            listed++;
        }
        if (listed > 16)
            s_append (buf, size, ", ... %zu more", listed - 16);
    }
    else if (self->launcher && self->o->local_workers) {
        s_append (buf, size, "; missing: local worker pid ");
        for (size_t c = 0; c < sb_launcher_count (self->launcher); c++) {
            pid_t pid = sb_launcher_pid (self->launcher, c);
            if (s_worker_by_pid (self, pid))
                continue;
            if (listed < 16)
                s_append (buf, size, "%s%d", listed ? ", " : "", (int) pid);
            listed++;
        }
        if (listed > 16)
            s_append (buf, size, ", ... %zu more", listed - 16);
    }
    else
        s_append (buf, size, "; %zu worker(s) started elsewhere never said HELLO (is `shardbench-worker --coordinator"
                  " %s` running on every node, can it reach this address?)", missing, self->endpoint);
}

/* Pump until done(self) or failure or interrupt. Returns 0 when done. */
static int
s_pump_until (s_session_t *self, int (*done) (s_session_t *), double timeout_s, const char *what)
{
    double deadline = timeout_s > 0 ? sb_now () + timeout_s : 0;
    double next_note = sb_now () + 10;
    while (!self->failed) {
        if (done (self))
            return 0;
        if (zsys_interrupted) {
            self->aborted = 1;
            s_fail (self, "interrupted by %s while %s", s_signal_name (), what);
            break;
        }
        double now = sb_now ();
        s_loop_ran (self, now);
        if (deadline && now > deadline) {
            char detail[1024] = "";
            if (done == s_all_joined)
                s_join_detail (self, detail, sizeof detail);
            s_fail (self, "timed out after %.0f s %s%s", timeout_s, what, detail);
            break;
        }
        if (now > next_note) {
            sb_info ("still %s", what);
            next_note = now + 10;
        }
        /* drain what is queued before housekeeping (the socket's receive
         * timeout is 0: the receive that finds the queue empty ends the
         * loop), then sleep on the socket's ZMQ_FD (sb_wire_wait_s) */
        sb_resultdb_batch_begin (self->o->db);
        int i = 0;
        while (i < 4096 && !self->failed && s_dispatch (self))
            i++;
        s_housekeeping (self, i >= 4096 || (zsock_events (self->router) & ZMQ_POLLIN));
        /* housekeeping may have sent (heartbeats), and a send can consume
         * the signal of a frame that arrived since the drain: ask the socket
         * (ZMQ_EVENTS) before sleeping on its ZMQ_FD */
        if (i < 4096 && !self->failed && !done (self) && !(zsock_events (self->router) & ZMQ_POLLIN)) {
            zsock_t *socks[1] = { self->router };
            sb_wire_wait_s (socks, 1, 0.05);
        }
    }
    return -1;
}

static int
s_all_joined (s_session_t *self)
{
    if (self->nworkers < self->expected)
        return 0;
    for (size_t i = 0; i < self->nworkers; i++)
        if (!self->workers[i].ready)
            return 0;
    return 1;
}

static int
s_all_ranks_done (s_session_t *self)
{
    return self->ranks_done == self->o->accelerators;
}

/* ---------------------------------------------------------------- phases */

/* Append phase to the phases this command ran (runs.workflow). */
static void
s_workflow_add (s_session_t *self, const char *phase)
{
    size_t n = strlen (self->workflow);
    snprintf (self->workflow + n, sizeof self->workflow - n, "%s%s", n ? "," : "", phase);
}

static int64_t
s_begin_run (s_session_t *self, const char *kind)
{
    size_t nhosts = 0;     /* distinct host names: a worker counts when no earlier one has its name */
    for (size_t i = 0; i < self->nworkers; i++) {
        size_t h = 0;
        while (h < i && strcmp (self->workers[h].host, self->workers[i].host) != 0)
            h++;
        nhosts += h == i;
    }
    sb_run_info_t info = {
        .kind = kind, .workload = self->o->workload_name, .config = self->o->config_yaml,
        .accelerators = self->o->accelerators, .hosts = nhosts, .workers = self->nworkers, .seed = self->o->seed,
        .au_threshold = self->o->wl->au,
    };
    s_workflow_add (self, kind);
    int64_t id = sb_resultdb_run_begin (self->o->db, &info);
    if (id < 0) {
        s_fail (self, "cannot write the run to the result database: %s", sb_resultdb_errmsg (self->o->db));
        return -1;
    }
    self->run_id = id;
    self->run_open = 1;
    for (size_t i = 0; i < self->nworkers; i++) {
        s_worker_t *w = &self->workers[i];
        if (sb_resultdb_add_worker (self->o->db, id, w->id, w->host, w->pid, w->ranks, w->first_rank, w->cores,
                                    w->memory) != 0
            || (w->clock_known && sb_resultdb_worker_clock (self->o->db, id, w->id, w->clock_offset,
                                                            w->clock_rtt * 1000) != 0)) {
            s_fail (self, "cannot record worker %llu: %s", (unsigned long long) w->id, sb_resultdb_errmsg (self->o->db));
            s_end_run (self);   /* recorded failed, not left 'running' */
            return -1;
        }
    }
    return id;
}

static void
s_end_run (s_session_t *self)
{
    if (self->run_id <= 0)
        return;
    sb_resultdb_flush (self->o->db);
    /* every row of the run is written before it is closed (a lost one
     * fails it), however long another process holds the database */
    if (sb_resultdb_sync (self->o->db) != 0)
        s_fail (self, "%s", sb_resultdb_errmsg (self->o->db));
    for (size_t i = 0; i < self->nendpoints; i++) {
        s_endpoint_total_t *t = &self->endpoints[i];
        const sb_histogram_t *h = &t->latency;
        if (sb_resultdb_add_endpoint (self->o->db, self->run_id, t->endpoint, t->requests, t->bytes, t->errors,
                                      t->retries, h->total ? (double) h->sum_us / (double) h->total / 1000.0 : 0,
                                      sb_histogram_quantile (h, 0.5) / 1000.0, sb_histogram_quantile (h, 0.9) / 1000.0,
                                      sb_histogram_quantile (h, 0.99) / 1000.0, (double) h->max_us / 1000.0) != 0)
            sb_error ("cannot record endpoint %s: %s", t->endpoint, sb_resultdb_errmsg (self->o->db));
    }
    self->nendpoints = 0;
    const char *status = !self->failed ? "succeeded" : self->aborted ? "aborted" : "failed";
    if (self->failed)
        s_record_error (self, -1, NULL, "run", NULL, 0, self->failure);
    /* closed: what happens from here on (a worker lost while the rows
     * drain, or before the next phase's run) belongs to no row of this run */
    self->run_open = 0;
    if (sb_resultdb_run_workflow (self->o->db, self->run_id, self->workflow) != 0)
        s_fail (self, "cannot record the workflow of run %lld: %s", (long long) self->run_id,
                sb_resultdb_errmsg (self->o->db));
    if (sb_resultdb_run_finish (self->o->db, self->run_id, status, self->failed ? self->failure : NULL) != 0
        || sb_resultdb_sync (self->o->db) != 0)
        s_fail (self, "cannot close run %lld: %s", (long long) self->run_id, sb_resultdb_errmsg (self->o->db));
}

static int
s_phase_datagen (s_session_t *self)
{
    if (s_begin_run (self, "datagen") < 0)
        return -1;
    uint64_t n = self->o->wl->num_files_train, eval = self->o->wl->num_files_eval;
    if (eval)
        sb_info ("generating %llu files under %strain/ and %llu under %svalid/ (%llu ranks)", (unsigned long long) n,
                 self->catalog_info.prefix, (unsigned long long) eval, self->catalog_info.prefix,
                 (unsigned long long) self->o->accelerators);
    else
        sb_info ("generating %llu files under %s (%llu ranks)", (unsigned long long) n, self->catalog_info.prefix,
                 (unsigned long long) self->o->accelerators);
    {   /* issue 15, imgsize: images too small to be DLIO's dim1 x dim2 bytes */
        sb_dataset_t ds;
        s_marker_dataset (self, &ds);
        uint64_t first = 0, inexact = sb_format_is_image (ds.format) ? sb_format_image_inexact (&ds, &first) : 0;
        if (inexact > 0) {
            uint64_t size = 0;
            int exact;
            char why[256];
            if (sb_format_image_object_size (&ds, first, &size, &exact, why, sizeof why) != 0)
                size = 0;
            sb_warn ("dataset.record_length_bytes=%llu: %llu of %llu %s files cannot be DLIO's dim1 x dim2 bytes"
                     " (e.g. object %llu: %llu bytes, %llu wanted); they are written as the smallest valid image"
                     " (docs/FORMATS.md)",
                     (unsigned long long) ds.record_length, (unsigned long long) inexact, (unsigned long long) ds.files,
                     ds.format, (unsigned long long) first, (unsigned long long) size,
                     (unsigned long long) sb_dataset_object_size (&ds, first));
        }
    }
    self->phase = S_PHASE_DATAGEN;
    self->epoch = 0;
    self->ranks_done = 0;
    self->ep_samples = self->ep_bytes = self->ep_ranks = 0;
    memset (self->rank_done, 0, self->o->accelerators);
    sb_msg_t start = { .type = SB_MSG_PHASE_START };
    start.u.phase_start.phase = "datagen";
    start.u.phase_start.run_id = (uint64_t) self->run_id;
    start.u.phase_start.epoch = 0;
    start.u.phase_start.items = n;
    s_broadcast (self, &start);
    sb_progress_phase (self->progress, "datagen", "files", 0, 0, n + eval, 0, sb_now ());
    int rc = s_pump_until (self, s_all_ranks_done, 0, "generating the dataset");
    sb_progress_clear (self->progress);
    if (rc == 0 && sb_resultdb_close_epoch (self->o->db, self->run_id, 0, 0, 0, 0) != 0)
        s_fail (self, "cannot record the datagen totals: %s", sb_resultdb_errmsg (self->o->db));
    if (rc == 0 && !self->failed && self->generating) {
        /* the dataset is whole: say what generated it (before the run counts
         * as succeeded); the bytes are the ranks' RANK_DONE totals, tallied in
         * memory (the result rows may still be queued to the writer) */
        uint64_t written = self->ep_bytes;
        char why[1024];
        sb_dataset_t ds;
        s_marker_dataset (self, &ds);
        if ((self->s3 ? s_s3_marker_write (self, "complete", written, why, sizeof why)
                      : sb_datafolder_marker_write (self->folder, &ds, "complete", written, why, sizeof why)) != 0)
            s_fail (self, "%s", why);
        else
            self->generating = 0;
    }
    self->phase = S_PHASE_NONE;
    s_end_run (self);     /* written: the summary reads it back */
    if (!self->failed) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2 (sb_resultdb_handle (self->o->db),
                                "SELECT samples, bytes, duration_s, mb_per_s FROM epochs WHERE run_id = ? AND epoch = 0",
                                -1, &st, NULL) == SQLITE_OK
            && sqlite3_bind_int64 (st, 1, self->run_id) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
            printf ("datagen (run %lld): %lld files, %.1f MiB in %.2f s, %.1f MB/s\n", (long long) self->run_id,
                    sqlite3_column_int64 (st, 0), sqlite3_column_double (st, 1) / 1048576.0,
                    sqlite3_column_double (st, 2), sqlite3_column_double (st, 3));
        sqlite3_finalize (st);
        fflush (stdout);
    }
    return self->failed ? -1 : 0;
}

/* MLPerf Storage wants the dataset at least 5x the memory of the hosts
 * that read it, or their page cache could serve it: warn when it is not
 * (memory as the workers reported it, each host once). */
static void
s_check_dataset_size (s_session_t *self)
{
    const sb_workload_t *wl = self->o->wl;
    if (wl->storage.type == SB_STORAGE_SYNTHETIC)
        return;
    uint64_t memory = 0, hosts = 0;
    for (size_t i = 0; i < self->nworkers; i++) {
        size_t j = 0;
        while (j < i && strcmp (self->workers[j].host, self->workers[i].host) != 0)
            j++;
        if (j == i) {
            memory += self->workers[i].memory;
            hosts++;
        }
    }
    /* bytes of the objects this run reads (the catalog may hold more) */
    double bytes = self->catalog_info.count && self->catalog_info.bytes
        ? (double) self->catalog_info.bytes * (double) self->files / (double) self->catalog_info.count
        : (double) self->files * (double) wl->num_samples_per_file * (double) wl->record_length_bytes;
    double need = (double) SB_DATASIZE_MEMORY_FACTOR * (double) memory;
    if (memory == 0 || bytes >= need)
        return;
    sb_datasize_in_t in = {
        .hosts = hosts, .host_memory_gb = (double) memory / (double) hosts / 1073741824.0,
        .accelerators = self->o->accelerators, .batch_size = wl->batch_size,
        .record_length = wl->record_length_bytes, .samples_per_file = wl->num_samples_per_file,
    };
    sb_datasize_t ds;
    char err[256];
    if (sb_datasize (&in, &ds, err, sizeof err) != 0)
        return;
    sb_warn ("the dataset (%.2f GiB) is smaller than %d x the memory of its %llu host(s) (%.2f GiB): their page"
             " cache can serve it, so this measures memory more than storage; MLPerf Storage needs at least %llu"
             " files here (`shardbench datasize --hosts %llu --host-memory-gb %.2f --accelerators %llu`)",
             bytes / 1073741824.0, SB_DATASIZE_MEMORY_FACTOR, (unsigned long long) hosts, need / 1073741824.0,
             (unsigned long long) ds.files, (unsigned long long) hosts, in.host_memory_gb,
             (unsigned long long) self->o->accelerators);
}

/* How workers know the catalog (PHASE_START catalog_names, catalog_sizes):
 * names are DLIO's when every key is the DLIO name of its position under
 * the run's naming; sizes are the generator's when, on top, every object
 * has the size the generator gives it (checked once per run, one pass over
 * the in-memory index). skip_listing: DLIO names in index order (names 2),
 * sizes exact for synthetic storage, else unknown. */
static void
s_catalog_mode_of (s_session_t *self, sb_catalog_reader_t *catalog, uint64_t count, const sb_dataset_t *ds,
                   int *names, int *sizes)
{
    const sb_workload_t *wl = self->o->wl;
    int synthetic = wl->storage.type == SB_STORAGE_SYNTHETIC;
    *names = *sizes = 0;
    if (wl->skip_listing) {
        /* DLIO's skip_listing deals its names in index order (main.py
         * initialize: index r, r + R, ... to rank r), not in name order */
        *names = 2;
        *sizes = synthetic ? 1 : 2;
        return;
    }
    const sb_dataset_t *naming = sb_catalog_reader_naming (catalog);
    int names_match = naming && strcmp (naming->prefix, ds->prefix) == 0 && strcmp (naming->format, ds->format) == 0
        && strcmp (sb_dataset_split (naming), sb_dataset_split (ds)) == 0
        && naming->files == ds->files && (naming->subfolders > 1 ? naming->subfolders : 1)
        == (ds->subfolders > 1 ? ds->subfolders : 1);
    *names = names_match && count == ds->files && sb_catalog_reader_all_named (catalog);
    if (!*names || !sb_generator_size_known (ds, synthetic))
        return;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t size = 0, dlio = 0, want = 0;
        char why[512];
        if ((i & 65535) == 65535 && s_keep_alive (self))
            return;
        if (sb_catalog_reader_locate (catalog, i, &size, &dlio) != 1
            || sb_generator_size (ds, synthetic, dlio, &want, why, sizeof why) != 0 || size != want)
            return;     /* the workers ask for the sizes */
    }
    *sizes = 1;
}

static void
s_catalog_mode (s_session_t *self, const sb_dataset_t *ds)
{
    s_catalog_mode_of (self, self->catalog, self->catalog_info.count, ds, &self->catalog_names, &self->catalog_sizes);
}

/* The sampler of rank 0 with worker 0's loader threads; the DLIO kinds
 * whose order depends on the threads need every worker to run as many. */
static int
s_sampler_new (s_session_t *self, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    sb_sampler_kind_t kind = sb_sampler_kind_for (wl);
    self->loader_threads = sb_loader_threads (wl->read_threads, self->workers[0].cores, self->ranks_per_worker);
    /* issue 15, preproc: say when DLIO's reader of this format and loader never sleeps it */
    if (!(wl->preprocess.type == SB_DIST_CONSTANT && wl->preprocess.a == 0) && !sb_preprocess_applies (kind, wl))
        sb_warn ("reader.preprocess_time: not slept: DLIO_local_changes' %s reader with the %s loader does not call"
                 " its preprocess (docs/DLIO.md), so neither does shardbench", wl->format, sb_sampler_kind_name (kind));
    for (size_t i = 1; i < self->nworkers && kind != SB_SAMPLER_GLOBAL && kind != SB_SAMPLER_DLIO_INDEX; i++) {
        uint64_t t = sb_loader_threads (wl->read_threads, self->workers[i].cores, self->ranks_per_worker);
        if (t != self->loader_threads) {
            snprintf (err, err_size, "the %s sampler's order depends on the loader threads, and reader.read_threads=1"
                      " raises them to %llu on %s (%llu cores) but to %llu on %s (%llu cores): set reader.read_threads"
                      " explicitly", sb_sampler_kind_name (kind), (unsigned long long) self->loader_threads,
                      self->workers[0].host, (unsigned long long) self->workers[0].cores, (unsigned long long) t,
                      self->workers[i].host, (unsigned long long) self->workers[i].cores);
            return -1;
        }
    }
    sb_sampler_cfg_t sc = {
        .kind = kind, .listed = self->catalog_info.count, .expected = wl->num_files_train,
        .samples_per_file = wl->num_samples_per_file, .ranks = self->o->accelerators, .batch_size = wl->batch_size,
        .threads = self->loader_threads, .seed = self->o->seed, .sample_shuffle = wl->sample_shuffle,
        .file_shuffle = wl->file_shuffle, .seed_change_epoch = wl->seed_change_epoch,
        .max_steps = wl->total_training_steps > 0 ? (uint64_t) wl->total_training_steps : 0,
        .first_rank = 0, .nranks = 1,
    };
    self->sampler = sb_sampler_new (&sc, err, err_size);
    return self->sampler ? 0 : -1;
}

/* The evaluation set as DLIO names it: valid/, num_files_eval files in
 * num_subfolders_eval subfolders, otherwise the training set's layout. */
static void
s_eval_dataset (s_session_t *self, sb_dataset_t *ds)
{
    const sb_workload_t *wl = self->o->wl;
    s_dataset (self, ds);
    ds->split = "valid";
    ds->files = wl->num_files_eval;
    ds->subfolders = wl->num_subfolders_eval;
}

/* One evaluation after training epoch e, as DLIO's _eval: every rank reads
 * its share of valid/ in the training set's sampler order (over the
 * evaluation files, batch reader.batch_size_eval, no step limit) and
 * computes evaluation.eval_time per step, with no barrier between steps.
 * Its figures go to evals and eval_ranks, not to the epochs. Returns 0, or
 * -1 when the run failed. */
static int
s_phase_eval (s_session_t *self, uint64_t e)
{
    const sb_workload_t *wl = self->o->wl;
    char err[512];
    /* objects of valid/ the sampler draws from: the listing's (DLIO lists
     * the folder), else DLIO's names of num_files_eval */
    uint64_t listed = self->eval_listed ? self->eval_catalog_info.count : wl->num_files_eval;
    if (!self->eval_sampler) {
        sb_sampler_cfg_t sc = {
            .kind = sb_sampler_kind_for (wl), .listed = listed, .expected = wl->num_files_eval,
            .samples_per_file = wl->num_samples_per_file, .ranks = self->o->accelerators,
            .batch_size = wl->batch_size_eval, .threads = self->loader_threads, .seed = self->o->seed,
            .sample_shuffle = wl->sample_shuffle, .file_shuffle = wl->file_shuffle,
            .seed_change_epoch = wl->seed_change_epoch, .max_steps = 0, .first_rank = 0, .nranks = 1,
        };
        if (!(self->eval_sampler = sb_sampler_new (&sc, err, sizeof err))) {
            s_fail (self, "evaluation: %s", err);
            return -1;
        }
        sb_dataset_t ds;
        s_eval_dataset (self, &ds);
        int synthetic = wl->storage.type == SB_STORAGE_SYNTHETIC;
        if (self->eval_listed) {
            /* valid/'s own catalog: names derived by the workers when they
             * are DLIO's, sizes the generator's when every object has that
             * size, else served in pages (ENTRIES) as train/'s are */
            sb_catalog_set_progress (s_keep_alive, self);
            self->eval_catalog = sb_catalog_reader_new (sb_resultdb_handle (self->o->db), self->eval_catalog_info.id,
                                                        err, sizeof err);
            sb_catalog_set_progress (NULL, NULL);
            if (!self->eval_catalog) {
                s_fail (self, "evaluation: the catalog of valid/: %s", err);
                return -1;
            }
            s_catalog_mode_of (self, self->eval_catalog, self->eval_catalog_info.count, &ds, &self->eval_names,
                               &self->eval_sizes);
        }
        else {
            /* no listing (skip_listing, synthetic storage): DLIO's names,
             * in index order with skip_listing as DLIO deals them; the
             * generator's sizes on synthetic storage and where train/'s
             * are, else unknown */
            self->eval_names = wl->skip_listing ? 2 : 1;
            self->eval_sizes = synthetic || (self->catalog_sizes == 1 && sb_generator_size_known (&ds, 0)) ? 1 : 2;
        }
        sb_info ("evaluation set: %llu objects of valid/%s; names %s, sizes %s", (unsigned long long) listed,
                 self->eval_listed ? " listed" : "", self->eval_names ? "derived by workers" : "served in pages",
                 self->eval_sizes == 1 ? "the generator's" : self->eval_sizes == 2 ? "unknown" : "served in pages");
        self->eval_au = calloc (wl->epochs, sizeof *self->eval_au);
        self->eval_tput = calloc (wl->epochs, sizeof *self->eval_tput);
        if (!self->eval_au || !self->eval_tput) {
            s_fail (self, "out of memory for the evaluation metrics of %llu epochs", (unsigned long long) wl->epochs);
            return -1;
        }
        s_workflow_add (self, "eval");
    }
    /* DLIO reshuffles both sets every epoch: the evaluation sampler goes
     * through the epochs without an evaluation too, in order */
    while (self->eval_prepared < e)
        if (sb_sampler_epoch (self->eval_sampler, ++self->eval_prepared, err, sizeof err) != 0) {
            s_fail (self, "evaluation: %s", err);
            return -1;
        }
    self->eval_info = *sb_sampler_info (self->eval_sampler);
    const sb_sampler_epoch_t *info = &self->eval_info;
    self->phase = S_PHASE_EVAL;
    self->epoch = e;
    self->ranks_done = 0;
    memset (self->rank_done, 0, self->o->accelerators);
    sb_histogram_reset (&self->read_latency);
    self->ep_samples = self->ep_bytes = self->ep_ranks = 0;
    self->ep_first_start = self->ep_last_finish = 0;
    self->ep_dlio_au_sum = self->ep_dlio_tput_sum = 0;
    uint64_t samples = info->samples_per_rank * self->o->accelerators;
    sb_msg_t start = { .type = SB_MSG_PHASE_START };
    start.u.phase_start.phase = "eval";
    start.u.phase_start.run_id = (uint64_t) self->run_id;
    start.u.phase_start.epoch = e;
    start.u.phase_start.items = samples;
    start.u.phase_start.samples_per_rank = info->samples_per_rank;
    start.u.phase_start.batches = info->steps;
    start.u.phase_start.listed = listed;
    start.u.phase_start.catalog_names = (uint64_t) self->eval_names;
    start.u.phase_start.catalog_sizes = (uint64_t) self->eval_sizes;
    s_broadcast (self, &start);
    sb_progress_phase (self->progress, "eval", "samples", e, wl->epochs, samples, 0, sb_now ());
    char what[64];
    snprintf (what, sizeof what, "evaluating after epoch %llu", (unsigned long long) e);
    int pumped = s_pump_until (self, s_all_ranks_done, 0, what);
    sb_progress_clear (self->progress);
    self->phase = S_PHASE_NONE;
    if (pumped != 0 || self->failed)
        return -1;
    /* DLIO's figures of the evaluation: the ranks' AU over comm_size, their samples/s summed */
    double au = self->ep_dlio_au_sum / (double) self->o->accelerators, tput = self->ep_dlio_tput_sum;
    const sb_histogram_t *rl = &self->read_latency;
    sb_eval_t ev = {
        .epoch = e, .samples = self->ep_samples, .dropped = info->dropped, .bytes = self->ep_bytes,
        .steps = info->steps, .duration_s = self->ep_last_finish - self->ep_first_start, .au_percentage = au,
        .samples_per_s = tput, .io_mib_per_s = sb_dlio_io_mib (tput, self->record_size),
        .read_p50_ms = rl->total ? sb_histogram_quantile (rl, 0.5) / 1000.0 : NAN,
        .read_p99_ms = rl->total ? sb_histogram_quantile (rl, 0.99) / 1000.0 : NAN,
    };
    if (sb_resultdb_add_eval (self->o->db, self->run_id, &ev) != 0 || sb_resultdb_flush (self->o->db) != 0) {
        s_fail (self, "cannot record the evaluation after epoch %llu: %s", (unsigned long long) e,
                sb_resultdb_errmsg (self->o->db));
        return -1;
    }
    self->eval_au[self->evals] = au;
    self->eval_tput[self->evals++] = tput;
    double d = ev.duration_s > 1e-9 ? ev.duration_s : 1e-9;
    sb_info ("evaluation after epoch %llu: %llu samples of valid/ in %.2f s, %.1f samples/s, %.1f MiB/s;"
             " DLIO's eval AU %.2f%%, %.1f samples/s", (unsigned long long) e, (unsigned long long) ev.samples,
             ev.duration_s, (double) ev.samples / d, (double) ev.bytes / 1048576.0 / d, au, tput);
    return 0;
}

static int
s_phase_train (s_session_t *self)
{
    const sb_workload_t *wl = self->o->wl;
    char err[512];
    self->record_size = sb_dlio_record_size (wl->record_length_bytes, wl->parquet_columns);
    self->dlio_epochs = 0;
    free (self->dlio_au);
    free (self->dlio_tput);
    self->dlio_au = calloc (wl->epochs ? wl->epochs : 1, sizeof *self->dlio_au);
    self->dlio_tput = calloc (wl->epochs ? wl->epochs : 1, sizeof *self->dlio_tput);
    if (!self->dlio_au || !self->dlio_tput) {
        s_fail (self, "out of memory for the metrics of %llu epochs", (unsigned long long) wl->epochs);
        return -1;
    }
    sb_dataset_t ds;
    s_dataset (self, &ds);
    double plan_started = sb_now ();
    sb_catalog_set_progress (s_keep_alive, self);    /* loading a large index: heartbeats, signals */
    self->catalog = wl->skip_listing
        ? sb_catalog_reader_new_naming (&ds, wl->storage.type == SB_STORAGE_SYNTHETIC, err, sizeof err)
        : sb_catalog_reader_new (sb_resultdb_handle (self->o->db), self->catalog_info.id, err, sizeof err);
    sb_catalog_set_progress (NULL, NULL);
    if (!self->catalog) {
        if (zsys_interrupted) {
            self->aborted = 1;
            s_fail (self, "interrupted by %s while loading the catalog (%s)", s_signal_name (), err);
        }
        else
            s_fail (self, "%s", err);
        return -1;
    }
    s_catalog_mode (self, &ds);
    if (s_sampler_new (self, err, sizeof err) != 0 || sb_sampler_epoch (self->sampler, 1, err, sizeof err) != 0) {
        s_fail (self, "%s", err);
        return -1;
    }
    self->ep_info = *sb_sampler_info (self->sampler);
    if (s_begin_run (self, "train") < 0)
        return -1;
    if (sb_resultdb_run_sampler (self->o->db, self->run_id, sb_sampler_kind_name (sb_sampler_kind_for (wl)),
                                 self->loader_threads) != 0) {
        s_fail (self, "cannot record the sampler: %s", sb_resultdb_errmsg (self->o->db));
        return -1;
    }
    sb_info ("training: %s sampler, %llu loader threads per rank, %llu objects listed; epoch 1: %llu steps of %llu"
             " samples per rank, %llu dropped, %llu files unused; catalog names %s, sizes %s (planned in %.2f s)",
             sb_sampler_kind_name (sb_sampler_kind_for (wl)), (unsigned long long) self->loader_threads,
             (unsigned long long) self->catalog_info.count, (unsigned long long) self->ep_info.steps,
             (unsigned long long) wl->batch_size, (unsigned long long) self->ep_info.dropped,
             (unsigned long long) self->ep_info.unused_files,
             self->catalog_names ? "derived by workers" : "served in pages",
             self->catalog_sizes == 1 ? "the generator's" : self->catalog_sizes == 2 ? "unknown" : "served in pages",
             sb_now () - plan_started);
    s_check_dataset_size (self);
    self->ckpt_first = 1;
    if (wl->ckpt.in_train) {
        /* issue 15, ckpt: DLIO's checkpoints during training, into checkpoint.checkpoint_folder */
        if (sb_ckpt_plan_init (&self->ckpt, &wl->ckpt, self->o->accelerators, err, sizeof err) != 0) {
            s_fail (self, "%s", err);
            s_end_run (self);
            return -1;
        }
        sb_info ("checkpoints during training into %s: %llu bytes in %llu files each, %s",
                 wl->ckpt.folder, (unsigned long long) self->ckpt.total_bytes, (unsigned long long) self->ckpt.nfiles,
                 wl->ckpt.steps_between >= 0 ? "by step" : "by epoch");
    }
    uint64_t next_eval = wl->eval_after_epoch;  /* DLIO's schedule: eval_after_epoch, then every epochs_between_evals */
    for (uint64_t e = 1; e <= wl->epochs && !self->failed; e++) {
        self->phase = S_PHASE_TRAIN;
        self->epoch = e;
        self->ranks_done = 0;
        memset (self->rank_done, 0, self->o->accelerators);
        self->barrier_step = 0;
        self->barrier_arrived = 0;
        if (e > 1) {
            if (sb_sampler_epoch (self->sampler, e, err, sizeof err) != 0) {
                s_fail (self, "%s", err);
                break;
            }
            self->ep_info = *sb_sampler_info (self->sampler);
        }
        const sb_sampler_epoch_t *info = &self->ep_info;
        uint64_t epoch_samples = info->samples_per_rank * self->o->accelerators;
        sb_histogram_reset (&self->barrier_latency);
        sb_histogram_reset (&self->read_latency);
        sb_histogram_reset (&self->barrier_own);
        self->ep_samples = self->ep_bytes = self->ep_ranks = 0;
        self->ep_first_start = self->ep_last_finish = self->ep_au_sum = 0;
        self->ep_dlio_au_sum = self->ep_dlio_tput_sum = 0;
        for (size_t i = 0; i < self->nworkers; i++)
            self->workers[i].steps_reached = 0;
        sb_msg_t start = { .type = SB_MSG_PHASE_START };
        start.u.phase_start.phase = "train";
        start.u.phase_start.run_id = (uint64_t) self->run_id;
        start.u.phase_start.epoch = e;
        start.u.phase_start.items = epoch_samples;
        start.u.phase_start.samples_per_rank = info->samples_per_rank;
        start.u.phase_start.batches = info->steps;
        start.u.phase_start.listed = self->catalog_info.count;
        start.u.phase_start.catalog_names = (uint64_t) self->catalog_names;
        start.u.phase_start.catalog_sizes = (uint64_t) self->catalog_sizes;
        if (s_ckpt_epoch (self, e, info->steps, &start.u.phase_start) != 0)
            break;
        s_broadcast (self, &start);
        sb_progress_phase (self->progress, "train", "samples", e, wl->epochs, epoch_samples,
                           wl->sync == SB_SYNC_STEP && self->nworkers > 1 ? info->steps : 0, sb_now ());
        char what[64];
        snprintf (what, sizeof what, "training epoch %llu", (unsigned long long) e);
        int pumped = s_pump_until (self, s_all_ranks_done, 0, what);
        sb_progress_clear (self->progress);
        if (pumped != 0)
            break;
        if (self->ckpt_written != self->ckpt_first - 1 + self->ckpt_nsteps) {
            s_fail (self, "epoch %llu ended with %llu of its %zu checkpoints reported by every rank",
                    (unsigned long long) e, (unsigned long long) (self->ckpt_written + 1 - self->ckpt_first),
                    self->ckpt_nsteps);
            break;
        }
        const sb_histogram_t *bl = &self->barrier_latency, *own = &self->barrier_own;
        if (sb_resultdb_close_epoch (self->o->db, self->run_id, e, info->dropped, info->steps, 1) != 0
            || sb_resultdb_epoch_sampler (self->o->db, self->run_id, e, info->unused_files,
                                          own->total ? sb_histogram_quantile (own, 0.5) / 1000 : -1,
                                          own->total ? sb_histogram_quantile (own, 0.99) / 1000 : -1) != 0
            || (bl->total && sb_resultdb_epoch_barrier (self->o->db, self->run_id, e, sb_histogram_quantile (bl, 0.5) / 1000,
                                                        sb_histogram_quantile (bl, 0.99) / 1000) != 0)
                || sb_resultdb_epoch_read_latency (self->o->db, self->run_id, e, &self->read_latency) != 0
            || sb_resultdb_flush (self->o->db) != 0) {     /* the writer commits a finished epoch at once */
            s_fail (self, "cannot record epoch %llu: %s", (unsigned long long) e, sb_resultdb_errmsg (self->o->db));
            break;
        }
        /* DLIO's epoch figures (end_run): the ranks' AU summed over comm_size, their samples/s summed */
        double dlio_au = self->ep_dlio_au_sum / (double) self->o->accelerators, dlio_tput = self->ep_dlio_tput_sum;
        self->dlio_au[self->dlio_epochs] = dlio_au;
        self->dlio_tput[self->dlio_epochs++] = dlio_tput;
        if (sb_resultdb_epoch_dlio (self->o->db, self->run_id, e, dlio_au, dlio_tput,
                                    sb_dlio_io_mib (dlio_tput, self->record_size)) != 0) {
            s_fail (self, "cannot record epoch %llu: %s", (unsigned long long) e, sb_resultdb_errmsg (self->o->db));
            break;
        }
        /* the figures of the epochs row (sb_resultdb_close_epoch), from
         * memory: the row may wait for a lock */
        double span = self->ep_last_finish - self->ep_first_start, d = span > 1e-9 ? span : 1e-9;
        sb_info ("epoch %llu/%llu: %llu samples in %.2f s, %.1f samples/s, %.1f MiB/s, AU %.2f%% measured;"
                 " DLIO's AU %.2f%%, %.1f samples/s, %.1f MiB/s",
                 (unsigned long long) e, (unsigned long long) wl->epochs, (unsigned long long) self->ep_samples, span,
                 (double) self->ep_samples / d, (double) self->ep_bytes / 1048576.0 / d,
                 self->ep_ranks ? 100 * self->ep_au_sum / (double) self->ep_ranks : 0.0, dlio_au, dlio_tput,
                 sb_dlio_io_mib (dlio_tput, self->record_size));
        if (wl->do_eval && e >= next_eval) {
            next_eval += wl->epochs_between_evals;
            if (s_phase_eval (self, e) != 0)
                break;
        }
    }
    self->phase = S_PHASE_NONE;
    if (self->dlio_epochs > 0) {
        /* DLIO's run figures over the epochs that finished (the verdict: runs.passed, sb_resultdb_run_finish) */
        sb_dlio_summary_t sum;
        sb_dlio_summarise (self->dlio_au, self->dlio_tput, self->dlio_epochs, self->record_size, wl->au, &sum);
        if (sb_resultdb_run_dlio (self->o->db, self->run_id, &sum, self->record_size) != 0)
            s_fail (self, "cannot record the run's DLIO metrics: %s", sb_resultdb_errmsg (self->o->db));
    }
    if (self->evals > 0) {
        /* DLIO's evaluation figures over the evaluations (end_run, do_eval) */
        sb_dlio_summary_t sum;
        sb_dlio_summarise (self->eval_au, self->eval_tput, self->evals, self->record_size, wl->au, &sum);
        if (sb_resultdb_run_eval (self->o->db, self->run_id, &sum) != 0)
            s_fail (self, "cannot record the run's DLIO evaluation metrics: %s", sb_resultdb_errmsg (self->o->db));
    }
    s_end_run (self);
    return self->failed ? -1 : 0;
}

/* issue 15, ckpt: the plan's files into a PHASE_START (borrowed). */
static void
s_ckpt_files (const sb_ckpt_plan_t *plan, sb_msg_phase_start_t *ps)
{
    ps->ckpt_names = (sb_strs_t) { .items = plan->names, .count = plan->nfiles };
    ps->ckpt_bytes = (sb_u64s_t) { .items = plan->file_bytes, .count = plan->nfiles };
    ps->ckpt_first = (sb_u64s_t) { .items = plan->first, .count = plan->ranks + 1 };
}

/* issue 15, ckpt: one rank wrote its part of a checkpoint during a train
 * epoch. Once every rank has, the checkpoint's row is written. */
static void
s_on_ckpt_done (s_session_t *self, s_worker_t *w, const sb_msg_ckpt_done_t *m)
{
    uint64_t k = m->checkpoint - self->ckpt_first;
    if (self->phase != S_PHASE_TRAIN || m->epoch != self->epoch || m->rank < w->first_rank
        || m->rank >= w->first_rank + w->ranks || m->checkpoint < self->ckpt_first || k >= self->ckpt_nsteps
        || m->step != self->ckpt_steps[k] || !(m->started_at >= 0 && m->finished_at >= m->started_at)
        || !isfinite (m->finished_at) || self->ckpt_rank_next[m->rank] != k) {
        s_fail (self, "worker %llu on %s reported checkpoint %llu (step %llu) of rank %llu in epoch %llu unexpectedly",
                (unsigned long long) w->id, w->host, (unsigned long long) m->checkpoint, (unsigned long long) m->step,
                (unsigned long long) m->rank, (unsigned long long) m->epoch);
        return;
    }
    const sb_ckpt_plan_t *plan = &self->ckpt;
    uint64_t want = plan->model_bytes[m->rank] + plan->optim_bytes[m->rank];
    uint64_t files = plan->first[m->rank + 1] - plan->first[m->rank];
    if (m->bytes != want || m->files != files) {
        s_fail (self, "rank %llu on %s wrote %llu bytes in %llu files of checkpoint %llu, expected %llu in %llu",
                (unsigned long long) m->rank, w->host, (unsigned long long) m->bytes, (unsigned long long) m->files,
                (unsigned long long) m->checkpoint, (unsigned long long) want, (unsigned long long) files);
        return;
    }
    double offset = w->clock_known ? w->clock_offset : 0;
    if (sb_ckpt_add_rank (self->o->db, self->run_id, m->checkpoint, "write", m->checkpoint, m->rank, w->host, m->files,
                          m->bytes, m->started_at - offset, m->finished_at - offset) != 0) {
        s_fail (self, "cannot record rank %llu of checkpoint %llu: %s", (unsigned long long) m->rank,
                (unsigned long long) m->checkpoint, sb_resultdb_errmsg (self->o->db));
        return;
    }
    self->ckpt_rank_next[m->rank]++;
    if (++self->ckpt_arrived[k] < self->o->accelerators)
        return;
    if (sb_ckpt_close (self->o->db, self->run_id, m->checkpoint) != 0) {
        s_fail (self, "cannot record checkpoint %llu: %s", (unsigned long long) m->checkpoint,
                sb_resultdb_errmsg (self->o->db));
        return;
    }
    self->ckpt_written++;
    sb_info ("checkpoint %llu (global_epoch%llu_step%llu) written during training: %llu bytes in %llu files",
             (unsigned long long) m->checkpoint, (unsigned long long) m->epoch, (unsigned long long) m->step,
             (unsigned long long) plan->total_bytes, (unsigned long long) plan->nfiles);
}

/* issue 15, ckpt: epoch e's checkpoints into its PHASE_START. Returns 0 or -1 (failed). */
static int
s_ckpt_epoch (s_session_t *self, uint64_t e, uint64_t batches, sb_msg_phase_start_t *ps)
{
    const sb_ckpt_cfg_t *c = &self->o->wl->ckpt;
    self->ckpt_first += self->ckpt_nsteps;
    self->ckpt_nsteps = 0;
    if (!c->in_train)
        return 0;
    size_t max = (size_t) batches + 1;
    free (self->ckpt_steps);
    free (self->ckpt_arrived);
    free (self->ckpt_rank_next);
    self->ckpt_steps = calloc (max, sizeof *self->ckpt_steps);
    self->ckpt_arrived = calloc (max, sizeof *self->ckpt_arrived);
    self->ckpt_rank_next = calloc ((size_t) self->o->accelerators, sizeof *self->ckpt_rank_next);
    if (!self->ckpt_steps || !self->ckpt_arrived || !self->ckpt_rank_next) {
        s_fail (self, "out of memory for the checkpoints of epoch %llu", (unsigned long long) e);
        return -1;
    }
    self->ckpt_nsteps = sb_ckpt_train_steps (c, e, batches, self->ckpt_steps, max);
    if (self->ckpt_nsteps == 0)
        return 0;
    s_ckpt_files (&self->ckpt, ps);
    ps->ckpt_steps = (sb_u64s_t) { .items = self->ckpt_steps, .count = self->ckpt_nsteps };
    ps->ckpt_root = self->ckpt_root;
    ps->checkpoint = self->ckpt_first;
    ps->model_parallel = self->ckpt.tensor * self->ckpt.pipeline;
    ps->fsync = (uint64_t) c->fsync;
    return 0;
}

static int
s_wait_over (s_session_t *self)
{
    return sb_now () >= self->wait_until;
}

/* checkpoint: num_checkpoints_write checkpoints, then num_checkpoints_read
 * reads of checkpoints 1, 2, ...; every rank starts each one together (the
 * PHASE_START broadcast stands for DLIO's barrier) with its bytes from the
 * plan (coordinator/session/ckpt_plan.h), already checked by sb_session_run. */
static int
s_phase_checkpoint (s_session_t *self)
{
    const sb_ckpt_cfg_t *c = &self->o->wl->ckpt;
    sb_ckpt_plan_t *plan = &self->ckpt;
    char err[512];
    if (sb_ckpt_plan_init (plan, c, self->o->accelerators, err, sizeof err) != 0) {
        s_fail (self, "%s", err);
        return -1;
    }
    if (s_begin_run (self, "checkpoint") < 0)
        return -1;
    sb_info ("checkpoint: %llu parameters, tensor %llu x pipeline %llu x data %llu, ZeRO %llu%s; %llu ranks write"
             " %llu bytes in %llu files per checkpoint (%.6g of %.3f GiB: model %.3f GiB, optimizer %.3f GiB)",
             (unsigned long long) plan->num_parameters, (unsigned long long) plan->tensor,
             (unsigned long long) plan->pipeline, (unsigned long long) plan->data, (unsigned long long) plan->zero_stage,
             plan->subset ? ", subset" : "", (unsigned long long) plan->ranks, (unsigned long long) plan->total_bytes,
             (unsigned long long) plan->files, plan->scale,
             (double) (plan->full_model_bytes + plan->full_optim_bytes) / 1073741824.0,
             (double) plan->full_model_bytes / 1073741824.0, (double) plan->full_optim_bytes / 1073741824.0);
    uint64_t seq = 0;
    for (int read = 0; read < 2 && !self->failed; read++) {
        uint64_t n = read ? c->num_read : c->num_write;
        for (uint64_t k = 1; k <= n && !self->failed; k++) {
            char what[96];
            if (c->time_between > 0) {
                self->wait_until = sb_now () + c->time_between;
                if (s_pump_until (self, s_wait_over, 0, "between checkpoints") != 0)
                    break;
            }
            self->phase = S_PHASE_CHECKPOINT;
            self->epoch = ++seq;
            self->ckpt_op = read ? "read" : "write";
            self->ckpt_index = k;
            self->ranks_done = 0;
            memset (self->rank_done, 0, self->o->accelerators);
            sb_msg_t start = { .type = SB_MSG_PHASE_START };
            sb_msg_phase_start_t *ps = &start.u.phase_start;
            ps->phase = read ? "checkpoint_read" : "checkpoint_write";
            ps->run_id = (uint64_t) self->run_id;
            ps->epoch = seq;
            ps->checkpoint = k;
            ps->model_parallel = plan->tensor * plan->pipeline;
            ps->fsync = (uint64_t) c->fsync;
            ps->model_bytes = (sb_u64s_t) { .items = plan->model_bytes, .count = plan->ranks };
            ps->optim_bytes = (sb_u64s_t) { .items = plan->optim_bytes, .count = plan->ranks };
            s_ckpt_files (plan, ps);
            ps->ckpt_root = self->ckpt_root;
            s_broadcast (self, &start);
            snprintf (what, sizeof what, "%s checkpoint %llu", read ? "reading" : "writing", (unsigned long long) k);
            if (s_pump_until (self, s_all_ranks_done, 0, what) != 0)
                break;
            sqlite3 *db = sb_resultdb_handle (self->o->db);
            sqlite3_stmt *st = NULL;
            /* written before it is read back for the log line (between
             * checkpoints: no rank's timing waits for it) */
            if (sb_ckpt_close (self->o->db, self->run_id, seq) != 0 || sb_resultdb_flush (self->o->db) != 0
                || sb_resultdb_sync (self->o->db) != 0) {
                s_fail (self, "cannot record checkpoint %llu: %s", (unsigned long long) k, sb_resultdb_errmsg (self->o->db));
                break;
            }
            if (sqlite3_prepare_v2 (db, "SELECT bytes, duration_s, gib_per_s FROM checkpoints WHERE run_id = ? AND seq = ?",
                                    -1, &st, NULL) == SQLITE_OK
                && sqlite3_bind_int64 (st, 1, self->run_id) == SQLITE_OK
                && sqlite3_bind_int64 (st, 2, (int64_t) seq) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
                sb_info ("checkpoint %s %llu/%llu: %lld bytes in %.3f s, %.3f GiB/s", self->ckpt_op,
                         (unsigned long long) k, (unsigned long long) n, sqlite3_column_int64 (st, 0),
                         sqlite3_column_double (st, 1), sqlite3_column_double (st, 2));
            sqlite3_finalize (st);
        }
    }
    self->phase = S_PHASE_NONE;
    s_end_run (self);
    return self->failed ? -1 : 0;
}

/* The dataset's naming and sizes, as the workload and seed define them. */
static void
s_dataset (s_session_t *self, sb_dataset_t *ds)
{
    const sb_workload_t *wl = self->o->wl;
    *ds = (sb_dataset_t) {
        .prefix = wl->file_prefix, .format = wl->format, .files = wl->num_files_train,
        .subfolders = wl->num_subfolders_train, .samples_per_file = wl->num_samples_per_file,
        .record_length = wl->record_length_bytes, .record_stdev = wl->record_length_bytes_stdev,
        .seed = self->o->seed, .element_type = wl->record_element_type, .record_dims = wl->record_dims,
        .record_ndims = wl->record_ndims,
        /* the parquet layout: the generator's object sizes depend on it */
        .parquet_columns = wl->parquet_columns, .parquet_row_group = wl->parquet_row_group,
        .parquet_compression = wl->compression,
    };
}

/* The dataset as its marker records it (s_dataset: the naming and the
 * parquet layout). */
static void
s_marker_dataset (s_session_t *self, sb_dataset_t *ds)
{
    s_dataset (self, ds);
}

/* Does object i exist? 1 yes, 0 no (why in err), -1 cannot tell (err). */
static int
s_object_exists (s_session_t *self, const sb_dataset_t *ds, uint64_t i, char *key, size_t key_size, char *err,
                 size_t err_size)
{
    if (sb_dataset_key (ds, i, key, key_size) != 0) {
        snprintf (err, err_size, "object %llu: name too long", (unsigned long long) i);
        return -1;
    }
    char full[PATH_MAX + 1100];
    snprintf (full, sizeof full, "%s%s", self->catalog_info.prefix, key);
    if (self->o->wl->storage.type == SB_STORAGE_SYNTHETIC)
        return 1;
    if (self->s3) {
        uint64_t size = 0;
        sb_s3_error_t e;
        if (sb_s3_head (self->s3, full, &size, &e) == 0)
            return 1;
        snprintf (err, err_size, "%s", e.text);
        return e.http_status == 404 ? 0 : -1;
    }
    struct stat st;
    if (stat (full, &st) == 0)
        return 1;
    snprintf (err, err_size, "%s: %s", full, strerror (errno));
    return errno == ENOENT ? 0 : -1;
}

/* skip_listing: HEAD (or stat) every k-th object and the last one; fail
 * fast naming the first that is missing. Returns 0, or -1 with err. */
static int
s_spot_check (s_session_t *self, char *err, size_t err_size)
{
    sb_dataset_t ds;
    s_dataset (self, &ds);
    return s_check_objects (self, &ds, "dataset.skip_listing", err, err_size);
}

/* Check that objects 0, k, 2k, ... and the last of ds exist (k:
 * dataset.listing_validation_interval); `what` names the check in
 * messages. Returns 0, or -1 with err. */
static int
s_check_objects (s_session_t *self, const sb_dataset_t *ds_in, const char *what, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    sb_dataset_t ds = *ds_in;
    uint64_t k = wl->listing_validation_interval, checked = 0, n = ds.files;
    char key[PATH_MAX], why[2048];
    uint64_t t0 = sb_mono_ns ();
    for (uint64_t i = 0; i < n; i = (i + k < n || i == n - 1) ? i + k : n - 1) {
        if (s_keep_alive (self)) {
            snprintf (err, err_size, "interrupted by %s while checking the objects of %s", s_signal_name (), what);
            return -1;
        }
        int rc = s_object_exists (self, &ds, i, key, sizeof key, why, sizeof why);
        checked++;
        if (rc != 1) {
            snprintf (err, err_size, "%s: %s '%s' (object %llu of %llu; every %llu-th object is checked): %s", what,
                      rc == 0 ? "missing object" : "cannot check object", key, (unsigned long long) i,
                      (unsigned long long) n, (unsigned long long) k, why);
            return -1;
        }
        if (i == n - 1)
            break;
    }
    sb_info ("%s: %llu of %llu objects checked (every %llu-th and the last) in %.3f s", what, (unsigned long long) checked,
             (unsigned long long) n, (unsigned long long) k, (double) (sb_mono_ns () - t0) / 1e9);
    return 0;
}

/* Heartbeats while the coordinator is busy listing or checking (workers
 * would otherwise count it as lost). */
static int
s_keep_alive (void *arg)
{
    s_session_t *self = arg;
    double now = sb_now ();
    sb_progress_items (self->progress, sb_catalog_progress_count ());
    sb_progress_tick (self->progress, now);
    if (zsys_interrupted)
        return 1;   /* a signal: the listing stops */
    s_loop_ran (self, now);
    if (self->nworkers == 0 || now < self->next_heartbeat)
        return 0;
    sb_msg_t hb = { .type = SB_MSG_HEARTBEAT };
    for (size_t i = 0; i < self->nworkers; i++)
        s_send (self, &self->workers[i], &hb);  /* a worker found gone fails the run (s_lost) */
    self->next_heartbeat = now + self->o->wl->heartbeat_interval_s;
    return 0;
}

/* The same while the result writer drains (its return cannot stop a drain:
 * the writer watches signals itself). */
static void
s_keep_alive_db (void *arg)
{
    (void) s_keep_alive (arg);
}

/* Ensure the catalog of a split (train/, or valid/ with eval): list, or
 * report the set missing (*missing = 1). */
static int
s_list_split (s_session_t *self, int eval, int relist, int *missing, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    if (sb_resultdb_flush (self->o->db) != 0) {
        snprintf (err, err_size, "cannot commit to the result database: %s", sb_resultdb_errmsg (self->o->db));
        return -1;
    }
    sb_dataset_t ds;
    if (eval)
        s_eval_dataset (self, &ds);
    else
        s_dataset (self, &ds);
    const char *split = sb_dataset_split (&ds);
    sb_catalog_info_t *info = eval ? &self->eval_catalog_info : &self->catalog_info;
    sb_catalog_set_progress (s_keep_alive, self);
    int own_progress = !self->progress;     /* listing before the session's status exists */
    if (own_progress)
        self->progress = sb_progress_new ((sb_progress_mode_t) self->o->progress, stderr, self->o->progress_interval_s,
                                          self->o->accelerators);
    sb_progress_phase (self->progress, "listing", "objects", 0, 0, 0, 0, sb_now ());
    sb_catalog_status_t st = wl->storage.type == SB_STORAGE_SYNTHETIC
        ? sb_catalog_ensure_synthetic (sb_resultdb_handle (self->o->db), &ds, relist, info, err, err_size)
        : self->s3
        ? sb_catalog_ensure_s3_split (sb_resultdb_handle (self->o->db), self->s3, &wl->storage, split, &ds,
                                      self->key_prefix, relist, info, err, err_size)
        : sb_catalog_ensure_split (sb_resultdb_handle (self->o->db), wl->data_folder, split, &ds, relist, info, err,
                                   err_size);
    sb_catalog_set_progress (NULL, NULL);
    if (own_progress)
        sb_progress_destroy (&self->progress);
    else
        sb_progress_clear (self->progress);
    *missing = st == SB_CATALOG_MISSING;
    if (st == SB_CATALOG_ERROR && zsys_interrupted) {
        char why[1024];
        snprintf (why, sizeof why, "%s", err);
        snprintf (err, err_size, "interrupted by %s while listing the %s (%s; no catalog was recorded)",
                  s_signal_name (), eval ? "evaluation set" : "dataset", why);
    }
    if (st == SB_CATALOG_ERROR)
        return -1;
    if (st == SB_CATALOG_OK) {
        /* where, as a user would write it */
        char where[1400];
        if (self->s3)
            snprintf (where, sizeof where, "s3://%s/%s%s", wl->storage.bucket, info->prefix, split);
        else if (wl->storage.type == SB_STORAGE_SYNTHETIC)
            snprintf (where, sizeof where, "%s (synthetic)", wl->data_folder);
        else
            snprintf (where, sizeof where, "%s%s", info->prefix, split);
        if (info->reused)
            sb_info ("catalog %lld reused: %llu objects, %.1f MiB under %s", (long long) info->id,
                     (unsigned long long) info->count, info->bytes / 1048576.0, where);
        else
            sb_info ("listed %s: %llu objects, %.1f MiB in %.3f s (catalog %lld)", where,
                     (unsigned long long) info->count, info->bytes / 1048576.0, info->list_s, (long long) info->id);
        if (info->count == 0)
            *missing = 1;
    }
    return 0;
}

/* Ensure train/'s catalog (s_list_split). */
static int
s_list (s_session_t *self, int relist, int *missing, char *err, size_t err_size)
{
    return s_list_split (self, 0, relist, missing, err, err_size);
}

/* valid/ listed into its own catalog (a run that evaluates, on real
 * storage, without skip_listing): 0 listed and whole (eval_listed set),
 * 1 missing or short (err says what), -1 error (err). */
static int
s_list_eval (s_session_t *self, int relist, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    int missing = 0;
    self->eval_listed = 0;
    if (s_list_split (self, 1, relist, &missing, err, err_size) != 0)
        return -1;
    const char *where = self->s3 ? self->key_prefix : self->catalog_info.prefix;
    if (missing) {
        snprintf (err, err_size, "evaluation set: no objects under %s%svalid/ (dataset.num_files_eval=%llu)",
                  self->s3 ? "s3 prefix " : "", where, (unsigned long long) wl->num_files_eval);
        return 1;
    }
    if (self->eval_catalog_info.count < wl->num_files_eval) {
        snprintf (err, err_size, "evaluation set: %s%svalid/ holds %llu objects but the workload needs"
                  " dataset.num_files_eval=%llu", self->s3 ? "s3 prefix " : "", where,
                  (unsigned long long) self->eval_catalog_info.count, (unsigned long long) wl->num_files_eval);
        return 1;
    }
    self->eval_listed = 1;
    return 0;
}

static int
s_prepare_folder (const char *folder, char *prefix, size_t size, char *err, size_t err_size)
{
    if (sb_mkdirs (folder, err, err_size) != 0)
        return -1;
    char real[PATH_MAX];
    if (!realpath (folder, real)) {
        snprintf (err, err_size, "data folder '%s': %s", folder, strerror (errno));
        return -1;
    }
    snprintf (prefix, size, "%s/", real);
    return 0;
}

/* The S3 key prefix of the dataset: dataset.data_folder without "./", a
 * leading "/" or an "s3://BUCKET/" head, ending with '/' (or empty). */
static int
s_key_prefix (const sb_workload_t *wl, char *out, size_t size, char *err, size_t err_size)
{
    const char *p = wl->data_folder;
    char head[300];
    snprintf (head, sizeof head, "s3://%s/", wl->storage.bucket);
    if (strncmp (p, head, strlen (head)) == 0)
        p += strlen (head);
    else if (strncmp (p, "s3://", 5) == 0) {
        snprintf (err, err_size, "dataset.data_folder '%s' names another bucket than storage.storage_root '%s'",
                  wl->data_folder, wl->storage.bucket);
        return -1;
    }
    while (strncmp (p, "./", 2) == 0 || *p == '/')
        p += *p == '/' ? 1 : 2;
    size_t n = strlen (p);
    while (n && p[n - 1] == '/')
        n--;
    if (n == 1 && p[0] == '.')
        n = 0;
    if (n + 2 > size) {
        snprintf (err, err_size, "dataset.data_folder is too long for an S3 key prefix");
        return -1;
    }
    memcpy (out, p, n);
    if (n)
        out[n++] = '/';
    out[n] = '\0';
    return 0;
}

/* The coordinator checks every endpoint itself before listing: a table of
 * endpoint and cause when any fails. */
static int
s_preflight_own (s_session_t *self, char *err, size_t err_size)
{
    char host[256];
    if (gethostname (host, sizeof host - 1) != 0)
        snprintf (host, sizeof host, "coordinator");
    int n = snprintf (err, err_size, "preflight failed: the coordinator cannot use its storage:\n  %-20s %-28s %s\n",
                      "host", "endpoint", "cause");
    int bad = 0;
    for (size_t i = 0; i < sb_s3_endpoint_count (self->s3); i++) {
        sb_s3_error_t e;
        if (sb_s3_check_endpoint (self->s3, i, &e) == 0)
            continue;
        bad++;
        const char *why = e.curl_code ? (e.os_errno ? strerror (e.os_errno) : e.curl_text) : e.s3_code;
        if (n > 0 && (size_t) n < err_size)
            n += snprintf (err + n, err_size - (size_t) n, "  %-20s %-28s %s%s%s\n", host, sb_s3_endpoint (self->s3, i),
                           why && *why ? why : "", why && *why ? ": " : "", e.text);
    }
    if (bad && n > 0 && (size_t) n < err_size && err[n - 1] == '\n')
        err[n - 1] = '\0';
    if (!bad)
        err[0] = '\0';
    return bad ? -1 : 0;
}

/* issue 15, ckpt: where checkpoints go (lib/storage/ckpt_target.h), into
 * self->ckpt_root as workers get it: a local folder made (and made absolute)
 * here, or an S3 bucket and prefix whose endpoints this host checks when it
 * is not the dataset's bucket. A read-only invocation (read_n > 0: no write)
 * finds every file of checkpoints 1..read_n there first. Returns 0, 1 (the
 * storage failed) or 2 (the configuration) with err. */
static int
s_ckpt_target (s_session_t *self, const sb_workload_t *wl, uint64_t read_n, char *err, size_t err_size)
{
    sb_ckpt_target_t t;
    char why[2048];
    if (sb_ckpt_target_resolve (wl, &t, why, sizeof why) != 0 || sb_ckpt_target_endpoints (wl, &t, why, sizeof why)
                                                                     != 0) {
        snprintf (err, err_size, "%s", why);
        return 2;
    }
    if (!t.s3) {
        if (s_prepare_folder (t.path, self->ckpt_root, sizeof self->ckpt_root, err, err_size) != 0)
            return 2;
        if (t.direct)
            sb_info ("checkpoint.checkpoint_folder %s: direct:// is written as a local folder, fsync'ed and dropped"
                     " from the page cache (checkpoint.fsync), not with O_DIRECT", wl->ckpt.folder);
        sb_info ("checkpoints: local files under %s", self->ckpt_root);
        if (read_n == 0)
            return 0;
        sb_ckpt_plan_t probe;
        if (sb_ckpt_plan_init (&probe, &wl->ckpt, self->o->accelerators, err, err_size) != 0)
            return 2;
        int missing = sb_ckpt_check_written (&probe, self->ckpt_root, read_n, err, err_size);
        sb_ckpt_plan_fini (&probe);
        return missing ? 2 : 0;
    }
    if (sb_ckpt_target_uri (&t, self->ckpt_root, sizeof self->ckpt_root) != 0) {
        snprintf (err, err_size, "key 'checkpoint.checkpoint_folder': '%s' is too long", wl->ckpt.folder);
        return 2;
    }
    int own_bucket = wl->storage.type == SB_STORAGE_S3 && !strcmp (t.bucket, wl->storage.bucket);
    sb_info ("checkpoints: S3 objects under %s (%s)", self->ckpt_root,
             own_bucket ? "the dataset's bucket" : "the dataset's S3 endpoints and credentials");
    if (own_bucket && read_n == 0)
        return 0;   /* checked with the dataset */
    sb_storage_cfg_t *st = malloc (sizeof *st);
    if (!st) {
        snprintf (err, err_size, "out of memory");
        return 1;
    }
    *st = wl->storage;
    st->type = SB_STORAGE_S3;
    snprintf (st->bucket, sizeof st->bucket, "%s", t.bucket);
    sb_s3_t *s3 = sb_s3_new (st, 1, err, err_size);
    free (st);
    if (!s3)
        return 1;
    int rc = 0;
    for (size_t i = 0; !own_bucket && i < sb_s3_endpoint_count (s3) && rc == 0; i++) {
        sb_s3_error_t e;
        if (sb_s3_check_endpoint (s3, i, &e) != 0) {
            snprintf (err, err_size, "checkpoint.checkpoint_folder %s: the coordinator cannot use bucket '%s' at %s:"
                      " %s", wl->ckpt.folder, t.bucket, sb_s3_endpoint (s3, i), e.text);
            rc = 1;
        }
    }
    if (rc == 0 && read_n > 0) {
        sb_ckpt_plan_t probe;
        if (sb_ckpt_plan_init (&probe, &wl->ckpt, self->o->accelerators, err, err_size) != 0)
            rc = 2;
        else {
            rc = sb_ckpt_check_written_s3 (&probe, s3, t.bucket, t.path, read_n, err, err_size) ? 2 : 0;
            sb_ckpt_plan_fini (&probe);
        }
    }
    sb_s3_destroy (&s3);
    return rc;
}

/* The endpoint ZeroMQ can bind for `bind`: ZeroMQ takes a host name there
 * for a network interface (so tcp://localhost:P fails with ENODEV), and an
 * IPv6 address only on a socket with ZMQ_IPV6. A name is resolved to its
 * first address (IPv4 first); *ipv6 tells whether the socket needs ZMQ_IPV6.
 * Returns 0, or -1 with err. */
static int
s_bind_endpoint (const char *bind, char *out, size_t size, int *ipv6, char *err, size_t err_size)
{
    *ipv6 = 0;
    if (sb_strf (out, size, "%s", bind) != 0) {
        snprintf (err, err_size, "--bind %s: too long", bind);
        return -1;
    }
    if (strncmp (bind, "tcp://", 6) != 0)
        return 0;
    const char *host = bind + 6, *colon = strrchr (host, ':');
    if (!colon || colon == host || strchr (host, ';'))
        return 0;   /* ZeroMQ says what is wrong with it */
    size_t n = (size_t) (colon - host);
    if (host[0] == '[') {
        *ipv6 = 1;
        return 0;
    }
    char name[256];
    if (n >= sizeof name)
        return 0;
    memcpy (name, host, n);
    name[n] = '\0';
    if (!strcmp (name, "*") || strspn (name, "0123456789.") == n)
        return 0;   /* every interface, or an IPv4 address */
    if (if_nametoindex (name) != 0)
        return 0;   /* a network interface (tcp://ib0:5555): ZeroMQ binds its address */
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
    int rc = getaddrinfo (name, NULL, &hints, &ai);
    if (rc != 0) {
        snprintf (err, err_size, "cannot bind %s: host '%s': %s", bind, name, gai_strerror (rc));
        return -1;
    }
    const struct addrinfo *pick = NULL;
    for (const struct addrinfo *p = ai; p && !pick; p = p->ai_next)
        if (p->ai_family == AF_INET)
            pick = p;
    for (const struct addrinfo *p = ai; p && !pick; p = p->ai_next)
        if (p->ai_family == AF_INET6)
            pick = p;
    char addr[INET6_ADDRSTRLEN] = "";
    int family = pick ? pick->ai_family : AF_UNSPEC;
    if (pick && pick->ai_family == AF_INET)
        inet_ntop (AF_INET, &((const struct sockaddr_in *) pick->ai_addr)->sin_addr, addr, sizeof addr);
    else if (pick)
        inet_ntop (AF_INET6, &((const struct sockaddr_in6 *) pick->ai_addr)->sin6_addr, addr, sizeof addr);
    freeaddrinfo (ai);
    if (!addr[0]) {
        snprintf (err, err_size, "cannot bind %s: host '%s' has no IPv4 or IPv6 address", bind, name);
        return -1;
    }
    *ipv6 = family == AF_INET6;
    if (sb_strf (out, size, "tcp://%s%s%s%s", *ipv6 ? "[" : "", addr, *ipv6 ? "]" : "", colon) != 0) {
        snprintf (err, err_size, "--bind %s: too long", bind);
        return -1;
    }
    sb_debug ("--bind %s: %s is %s", bind, name, addr);
    return 0;
}

static void
s_shutdown_workers (s_session_t *self)
{
    sb_msg_t msg = { 0 };
    if (self->failed) {
        msg.type = SB_MSG_ABORT;
        msg.u.abort.reason = self->failure;
    }
    else {
        msg.type = SB_MSG_BYE;
        msg.u.bye.reason = "run finished";
    }
    /* Best effort: a worker that is already gone cannot be told, and that
     * must not turn a finished run into a failed one. */
    for (size_t i = 0; i < self->nworkers; i++)
        if (!self->workers[i].gone && sb_wire_send (self->router, self->workers[i].identity, &msg) != 0)
            sb_debug ("worker %zu on %s could not be told the session ended: %s", i, self->workers[i].host,
                      zmq_strerror (zmq_errno ()));
    if (self->launcher)
        sb_launcher_stop (self->launcher, 5.0);
}

/* ---------------------------------------------------------------- data folder */

/* Bytes the dataset will take: exact for raw files, else the payload of
 * every object plus the framing (or compression) of object 0 scaled to all.
 * *exact says which. Returns 0, or -1 with err. */
static int
s_plan_bytes (const sb_dataset_t *ds, uint64_t *bytes, int *exact, char *err, size_t err_size)
{
    char key[PATH_MAX];
    sb_format_obj_t obj;
    if (sb_dataset_key (ds, 0, key, sizeof key) != 0) {
        snprintf (err, err_size, "object 0: name too long");
        return -1;
    }
    if (sb_format_open (&obj, ds, 0, key, err, err_size) != 0)
        return -1;
    uint64_t size0 = obj.size, payload0 = sb_dataset_object_size (ds, 0);
    sb_format_close (&obj);
    long double payload = 0;
    for (uint64_t i = 0; i < ds->files; i++)
        payload += (long double) sb_dataset_object_size (ds, i);
    long double total = size0 >= payload0 ? payload + (long double) (size0 - payload0) * (long double) ds->files
                                          : payload * ((long double) size0 / (long double) (payload0 ? payload0 : 1));
    *bytes = total > 1.8e19L ? UINT64_MAX : (uint64_t) total;
    *exact = sb_format_is_raw (ds->format) || size0 == payload0;
    return 0;
}

/* Bytes a datagen writes: the training set, and the evaluation set under
 * valid/ (dataset.num_files_eval) when there is one. Returns 0, or -1 with err. */
static int
s_plan_datagen_bytes (s_session_t *self, uint64_t *bytes, int *exact, char *err, size_t err_size)
{
    sb_dataset_t ds;
    s_marker_dataset (self, &ds);
    if (s_plan_bytes (&ds, bytes, exact, err, err_size) != 0)
        return -1;
    if (self->o->wl->num_files_eval == 0)
        return 0;
    ds.split = "valid";
    ds.files = self->o->wl->num_files_eval;
    ds.subfolders = self->o->wl->num_subfolders_eval;
    uint64_t eval_bytes;
    int eval_exact;
    if (s_plan_bytes (&ds, &eval_bytes, &eval_exact, err, err_size) != 0)
        return -1;
    *bytes = eval_bytes > UINT64_MAX - *bytes ? UINT64_MAX : *bytes + eval_bytes;
    *exact = *exact && eval_exact;
    return 0;
}

/* Create (with its parents) and lock the local data folder for the whole
 * session: exclusive for a datagen, shared for a run that reads. */
static int
s_folder_lock (s_session_t *self, int exclusive, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    if (sb_mkdirs (wl->data_folder, err, err_size) != 0)
        return -1;
    char real[PATH_MAX];
    if (!realpath (wl->data_folder, real)) {
        snprintf (err, err_size, "data folder '%s': %s", wl->data_folder, strerror (errno));
        return -1;
    }
    snprintf (self->folder, sizeof self->folder, "%s", real);
    self->lock_fd = sb_datafolder_lock (self->folder, exclusive, self->o->kind == SB_SESSION_DATAGEN ? "datagen"
                                        : "run", err, err_size);
    if (self->lock_fd == -2) {  /* read-only: nothing can generate there either */
        sb_info ("%s", err);
        err[0] = '\0';
        self->lock_fd = -1;
        self->read_only = 1;
        return 0;
    }
    if (self->lock_fd < 0)
        return -1;
    self->lock_exclusive = exclusive;
    return 0;
}

/* ---- the marker of an S3 dataset: the object KEY_PREFIX.shardbench-dataset,
 * beside train/ (where a local folder has its marker file), same text */

static void
s_s3_marker_key (s_session_t *self, char *key, size_t size)
{
    snprintf (key, size, "%s%s", self->key_prefix, SB_DATAFOLDER_MARKER);
}

static void
s_fill_text (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    memcpy (buf, (const char *) ctx + offset, len);
}

/* PUT the marker object with state and bytes. Returns 0, or -1 with err. */
static int
s_s3_marker_write (s_session_t *self, const char *state, uint64_t bytes, char *err, size_t err_size)
{
    sb_dataset_t ds;
    s_marker_dataset (self, &ds);
    char key[1200], why[256];
    s_s3_marker_key (self, key, sizeof key);
    char *text = malloc (SB_DATAFOLDER_MARKER_MAX);
    if (!text) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    size_t len = 0;
    int rc = -1;
    sb_s3_error_t e;
    if (sb_datafolder_marker_format (&ds, state, bytes, text, SB_DATAFOLDER_MARKER_MAX, &len, why, sizeof why) != 0)
        snprintf (err, err_size, "s3://%s/%s: %s", self->o->wl->storage.bucket, key, why);
    else if (sb_s3_put (self->s3, key, len, s_fill_text, text, &e) != 0)
        snprintf (err, err_size, "cannot write the dataset marker: %s", e.text);
    else
        rc = 0;
    free (text);
    return rc;
}

/* GET the marker object. Returns 1 with *m set, 0 when there is none, -1
 * with err (the GET failed, or the object is not a marker). */
static int
s_s3_marker_read (s_session_t *self, sb_datafolder_marker_t *m, char *err, size_t err_size)
{
    char key[1200], name[1500];
    s_s3_marker_key (self, key, sizeof key);
    snprintf (name, sizeof name, "s3://%s/%s", self->o->wl->storage.bucket, key);
    memset (m, 0, sizeof *m);
    char *text = malloc (SB_DATAFOLDER_MARKER_MAX);
    if (!text) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    size_t len = 0;
    sb_s3_error_t e;
    int rc = sb_s3_get_small (self->s3, key, text, SB_DATAFOLDER_MARKER_MAX, &len, &e);
    if (rc == 1)
        rc = 0;
    else if (rc != 0) {
        snprintf (err, err_size, "cannot read the dataset marker %s: %s", name, e.text);
        rc = -1;
    }
    else
        rc = sb_datafolder_marker_parse (text, len, name, m, err, err_size) == 0 ? 1 : -1;
    free (text);
    return rc;
}

/* A run that reads an existing dataset (a local folder, or an S3 prefix):
 * the marker must say it was generated whole with this workload's
 * parameters. Returns 0, or -1 with err. */
static int
s_dataset_check (s_session_t *self, char *err, size_t err_size)
{
    sb_dataset_t ds;
    s_marker_dataset (self, &ds);
    sb_datafolder_marker_t m;
    char why[2048], where[1400], marker[1500];
    if (self->s3) {
        size_t n = strlen (self->key_prefix);
        snprintf (where, sizeof where, "s3://%s%s%.*s", self->o->wl->storage.bucket, n ? "/" : "",
                  n ? (int) n - 1 : 0, self->key_prefix);
        snprintf (marker, sizeof marker, "s3://%s/%s%s", self->o->wl->storage.bucket, self->key_prefix,
                  SB_DATAFOLDER_MARKER);
    }
    else {
        snprintf (where, sizeof where, "%s", self->folder);
        snprintf (marker, sizeof marker, "%s/%s", self->folder, SB_DATAFOLDER_MARKER);
    }
    int have = self->s3 ? s_s3_marker_read (self, &m, why, sizeof why)
                        : sb_datafolder_marker_read (self->folder, &m, why, sizeof why);
    if (have < 0) {
        snprintf (err, err_size, "%s: regenerate the dataset with `shardbench datagen --clean`", why);
        return -1;
    }
    if (have == 0) {
        sb_warn ("%s/train has no %s marker saying what generated it (another tool, or shardbench before 0.2):"
                 " its files are read as this workload names and sizes them; `shardbench datagen --clean`"
                 " regenerates it with a marker", where, SB_DATAFOLDER_MARKER);
        return 0;
    }
    if (strcmp (m.state, "complete") != 0) {
        snprintf (err, err_size, "the dataset in %s is incomplete: its datagen did not finish (%s says state=%s):"
                  " run `shardbench datagen` again", where, marker, m.state);
        return -1;
    }
    /* fewer files than generated is a subset (the first in name order); more is refused below */
    if (sb_datafolder_marker_diff (&m, &ds, 0, why, sizeof why) > 0) {
        snprintf (err, err_size, "the dataset in %s was generated with other parameters than this workload's (%s):"
                  " run with the workload it was generated with, or regenerate it with `shardbench datagen --clean`",
                  where, why);
        return -1;
    }
    if (sb_datafolder_marker_diff (&m, &ds, SB_DATAFOLDER_DIFF_SEED, why, sizeof why) > 0) {
        if (self->o->wl->verify) {
            snprintf (err, err_size, "the dataset in %s was generated with seed %llu, this run uses seed %llu and"
                      " reader.verify checks every byte against it: pass --seed %llu", where,
                      (unsigned long long) m.seed, (unsigned long long) ds.seed, (unsigned long long) m.seed);
            return -1;
        }
        sb_warn ("the dataset in %s was generated with seed %llu, this run uses seed %llu: its content and sizes"
                 " are those of seed %llu", where, (unsigned long long) m.seed, (unsigned long long) ds.seed,
                 (unsigned long long) m.seed);
    }
    return 0;
}

/* What is under KEY_PREFIX/train/ of an S3 dataset: keys named as DLIO
 * names dataset files (train/NAME or train/SUB/NAME), and others. */
typedef struct {
    size_t   skip;              /* length of KEY_PREFIX + "train/" */
    uint64_t dataset_files, dataset_bytes, others;
    char     other[1100];       /* the first other key */
    char   **keys;              /* the dataset keys, when collect */
    size_t   nkeys, cap;
    int      collect, oom;
} s_s3_scan_t;

static int
s_s3_scan_key (void *ctx, const char *key, uint64_t size)
{
    s_s3_scan_t *sc = ctx;
    const char *rel = strlen (key) > sc->skip ? key + sc->skip : "";
    size_t n = strlen (rel);
    if (n == 0 || rel[n - 1] == '/')
        return 0;       /* a folder placeholder ("train/", "train/SUB/") that a console made: no data */
    const char *slash = strchr (rel, '/');
    const char *name = slash ? slash + 1 : rel;
    int ok = slash != rel && !strchr (name, '/') && sb_datafolder_is_dataset_name (name);
    if (!ok) {
        if (!sc->others++)
            snprintf (sc->other, sizeof sc->other, "%s", key);
        return 0;
    }
    sc->dataset_files++;
    sc->dataset_bytes += size;
    if (!sc->collect)
        return 0;
    if (sc->nkeys == sc->cap) {
        size_t want = sc->cap ? sc->cap * 2 : 256;
        char **grown = realloc (sc->keys, want * sizeof *grown);
        if (!grown) {
            sc->oom = 1;
            return 1;
        }
        sc->keys = grown;
        sc->cap = want;
    }
    if (!(sc->keys[sc->nkeys] = strdup (key))) {
        sc->oom = 1;
        return 1;
    }
    sc->nkeys++;
    return 0;
}

static void
s_s3_scan_free (s_s3_scan_t *sc)
{
    for (size_t i = 0; i < sc->nkeys; i++)
        free (sc->keys[i]);
    free (sc->keys);
    sc->keys = NULL;
    sc->nkeys = sc->cap = 0;
}

static int
s_s3_scan (s_session_t *self, int collect, s_s3_scan_t *sc, char *err, size_t err_size)
{
    char prefix[1200];
    snprintf (prefix, sizeof prefix, "%strain/", self->key_prefix);
    *sc = (s_s3_scan_t) { .skip = strlen (prefix), .collect = collect };
    sb_s3_error_t e;
    if (sb_s3_list (self->s3, prefix, NULL, NULL, (size_t) self->o->wl->storage.list_page_size, s_s3_scan_key, sc,
                    &e) != 0) {
        snprintf (err, err_size, "cannot list the dataset: %s", e.text);
        s_s3_scan_free (sc);
        return -1;
    }
    if (sc->oom) {
        snprintf (err, err_size, "out of memory listing s3://%s/%s", self->o->wl->storage.bucket, prefix);
        s_s3_scan_free (sc);
        return -1;
    }
    return 0;
}

/* How to clear another generation's files: `datagen --clean`; a run
 * (workflow.generate_data) has no --clean. */
static const char *
s_clean_hint (const sb_session_opts_t *o)
{
    return o->kind == SB_SESSION_DATAGEN ? "pass --clean"
                                         : "run `shardbench datagen --clean` with this workload (it has no --clean)";
}

/* Before a datagen writes under an S3 prefix: as s_datagen_check does for
 * a local folder, refuse objects of another generation under train/
 * (unless --clean, which deletes them and the marker first), state the
 * bytes, and PUT the marker with state=generating. Returns 0, or an exit
 * code (1, 2) with err. */
static int
s_s3_datagen_check (s_session_t *self, char *err, size_t err_size)
{
    const sb_session_opts_t *o = self->o;
    const char *bucket = o->wl->storage.bucket;
    sb_dataset_t ds;
    s_marker_dataset (self, &ds);
    sb_datafolder_marker_t m;
    char why[2048], diff[2048] = "", key[1200];
    s_s3_marker_key (self, key, sizeof key);
    int have = s_s3_marker_read (self, &m, why, sizeof why);
    if (have < 0 && !o->clean) {
        snprintf (err, err_size, "%s: %s to replace it and the dataset objects", why, s_clean_hint (o));
        return 2;
    }
    s_s3_scan_t scan;
    if (s_s3_scan (self, o->clean, &scan, err, err_size) != 0)
        return 1;
    int same = have == 1
               && sb_datafolder_marker_diff (&m, &ds, SB_DATAFOLDER_DIFF_FILES | SB_DATAFOLDER_DIFF_SEED, diff,
                                             sizeof diff) == 0;
    if (scan.others) {
        snprintf (err, err_size, "s3://%s/%s is not a dataset object (train/PREFIX_I_of_N.EXT): datagen writes only"
                  " under a prefix holding nothing else under train/ (%llu such keys); delete them, or choose"
                  " another dataset.data_folder", bucket, scan.other, (unsigned long long) scan.others);
        s_s3_scan_free (&scan);
        return 2;
    }
    if (scan.dataset_files && !same && !o->clean) {
        snprintf (err, err_size, "s3://%s/%strain/ holds %llu objects (%.1f MiB) of another generation (s3://%s/%s:"
                  " %s): a datagen there would mix two datasets; %s to delete them first, or choose"
                  " another dataset.data_folder", bucket, self->key_prefix, (unsigned long long) scan.dataset_files,
                  scan.dataset_bytes / 1048576.0, bucket, key,
                  have == 1 ? diff : have == 0 ? "no marker says what generated them" : why, s_clean_hint (o));
        s_s3_scan_free (&scan);
        return 2;
    }
    uint64_t total;
    int exact;
    if (s_plan_datagen_bytes (self, &total, &exact, err, err_size) != 0) {
        s_s3_scan_free (&scan);
        return 2;
    }
    sb_info ("datagen: %llu objects, %s%llu bytes (%.2f GiB) into s3://%s/%strain/", (unsigned long long) ds.files,
             exact ? "" : "about ", (unsigned long long) total, total / 1073741824.0, bucket, self->key_prefix);
    if (o->clean) {
        sb_s3_error_t e;
        for (size_t i = 0; i < scan.nkeys; i++)
            if (sb_s3_delete (self->s3, scan.keys[i], &e) != 0 && e.http_status != 404) {
                snprintf (err, err_size, "--clean: cannot delete a dataset object: %s", e.text);
                s_s3_scan_free (&scan);
                return 1;
            }
        if (sb_s3_delete (self->s3, key, &e) != 0 && e.http_status != 404) {
            snprintf (err, err_size, "--clean: cannot delete the dataset marker: %s", e.text);
            s_s3_scan_free (&scan);
            return 1;
        }
        sb_info ("--clean: deleted %llu dataset objects (%.1f MiB) under s3://%s/%strain/",
                 (unsigned long long) scan.nkeys, scan.dataset_bytes / 1048576.0, bucket, self->key_prefix);
    }
    s_s3_scan_free (&scan);
    if (s_s3_marker_write (self, "generating", total, err, err_size) != 0)
        return 1;
    self->generating = 1;
    return 0;
}

/* Before a datagen writes into a local folder: hold the lock exclusive,
 * refuse a folder holding another generation (unless --clean), remove
 * stale temporaries, state the bytes, check the free space, and mark the
 * folder "generating". Returns 0, or an exit code (1, 2) with err. */
static int
s_datagen_check (s_session_t *self, char *err, size_t err_size)
{
    const sb_session_opts_t *o = self->o;
    if (!self->lock_exclusive) {
        if (sb_datafolder_lock_upgrade (self->lock_fd, self->folder, "run (generating)", err, err_size) != 0)
            return 1;
        self->lock_exclusive = 1;
    }
    sb_dataset_t ds;
    s_marker_dataset (self, &ds);
    sb_datafolder_marker_t m;
    char why[2048], diff[2048] = "";
    int have = sb_datafolder_marker_read (self->folder, &m, why, sizeof why);
    if (have < 0 && !o->clean) {
        snprintf (err, err_size, "%s: %s to replace it and the dataset files", why, s_clean_hint (o));
        return 2;
    }
    sb_datafolder_scan_t scan;
    if (sb_datafolder_scan (self->folder, 0, &scan, err, err_size) != 0)
        return 1;
    int same = have == 1
               && sb_datafolder_marker_diff (&m, &ds, SB_DATAFOLDER_DIFF_FILES | SB_DATAFOLDER_DIFF_SEED, diff,
                                             sizeof diff) == 0;
    if (scan.others) {
        snprintf (err, err_size, "%s/%s is not a dataset file (PREFIX_I_of_N.EXT) nor a temporary: datagen writes"
                  " only into a folder holding nothing else under train/ (%llu such entries); remove them, or"
                  " choose another dataset.data_folder", self->folder, scan.other, (unsigned long long) scan.others);
        return 2;
    }
    if (scan.dataset_files && !same && !o->clean) {
        snprintf (err, err_size, "%s/train holds %llu files (%.1f MiB) of another generation (%s): a datagen there"
                  " would mix two datasets; %s to remove them first, or choose another"
                  " dataset.data_folder", self->folder, (unsigned long long) scan.dataset_files,
                  scan.dataset_bytes / 1048576.0,
                  have == 1 ? diff : have == 0 ? "no " SB_DATAFOLDER_MARKER " marker says what generated them" : why,
                  s_clean_hint (o));
        return 2;
    }
    uint64_t total, free_bytes;
    int exact;
    if (s_plan_datagen_bytes (self, &total, &exact, err, err_size) != 0)
        return 2;
    if (sb_datafolder_free_bytes (self->folder, &free_bytes, err, err_size) != 0)
        return 1;
    /* files of this generation are replaced one by one; --clean frees the others first */
    uint64_t reclaim = same || o->clean ? scan.dataset_bytes : 0;
    sb_info ("datagen: %llu files, %s%llu bytes (%.2f GiB) into %s/train; %llu bytes (%.2f GiB) free there",
             (unsigned long long) ds.files, exact ? "" : "about ", (unsigned long long) total, total / 1073741824.0,
             self->folder, (unsigned long long) free_bytes, free_bytes / 1073741824.0);
    if (total > free_bytes && total - free_bytes > reclaim) {
        snprintf (err, err_size, "not enough space in %s: the dataset needs %s%llu bytes (%.2f GiB), %llu bytes"
                  " (%.2f GiB) are free%s: free space, or lower dataset.num_files_train", self->folder,
                  exact ? "" : "about ", (unsigned long long) total, total / 1073741824.0,
                  (unsigned long long) free_bytes, free_bytes / 1073741824.0,
                  reclaim ? " besides the files it replaces" : "");
        return 2;
    }
    int remove = SB_DATAFOLDER_REMOVE_TEMPORARIES | (o->clean ? SB_DATAFOLDER_REMOVE_DATASET : 0);
    if (scan.temporaries || o->clean) {
        sb_datafolder_scan_t gone;
        if (sb_datafolder_scan (self->folder, remove, &gone, err, err_size) != 0)
            return 1;
        if (gone.temporaries)
            sb_info ("removed %llu stale temporaries (.*.tmp) under %s/train", (unsigned long long) gone.temporaries,
                     self->folder);
        if (o->clean)
            sb_info ("--clean: removed %llu dataset files (%.1f MiB) under %s/train",
                     (unsigned long long) gone.dataset_files, gone.dataset_bytes / 1048576.0, self->folder);
    }
    if (o->clean && sb_datafolder_marker_remove (self->folder, err, err_size) != 0)
        return 1;
    if (sb_datafolder_marker_write (self->folder, &ds, "generating", total, err, err_size) != 0)
        return 1;
    self->generating = 1;
    return 0;
}

/* A probe in the folder the workers get as data_root, which each worker
 * must read back (agent preflight). Returns 0, -1 with err, or -2 when the
 * folder is not writable here (err says why). */
static int
s_probe_create (s_session_t *self, char *err, size_t err_size)
{
    snprintf (self->probe_dir, sizeof self->probe_dir, "%s", self->catalog_info.prefix);
    size_t n = strlen (self->probe_dir);
    while (n > 1 && self->probe_dir[n - 1] == '/')
        self->probe_dir[--n] = '\0';
    int rc = sb_datafolder_probe_create (self->probe_dir, self->probe, sizeof self->probe, err, err_size);
    if (rc != 0) {
        self->probe_dir[0] = '\0';
        self->probe[0] = '\0';
        return rc;
    }
    return 0;
}

/* End of session: probe removed; after a datagen that did not finish, the
 * temporaries its writers left (a killed worker cannot remove its own) are
 * removed while the lock is still held; lock released. */
static void
s_folder_release (s_session_t *self)
{
    if (self->probe[0]) {
        char path[PATH_MAX + 64];
        snprintf (path, sizeof path, "%s/%s", self->probe_dir, self->probe);
        if (unlink (path) != 0 && errno != ENOENT)
            sb_warn ("cannot remove the probe %s: %s", path, strerror (errno));
    }
    if (self->generating && self->lock_exclusive) {
        char why[1024];
        sb_datafolder_scan_t gone;
        if (sb_datafolder_scan (self->folder, SB_DATAFOLDER_REMOVE_TEMPORARIES, &gone, why, sizeof why) != 0)
            sb_warn ("cannot remove the temporaries of the unfinished datagen: %s", why);
        else if (gone.temporaries)
            sb_info ("removed %llu temporaries of the unfinished datagen under %s/train",
                     (unsigned long long) gone.temporaries, self->folder);
    }
    sb_datafolder_unlock (&self->lock_fd);
}

/* datagen --dry-run: what it would write, and where; writes nothing. */
static int
s_dry_run (s_session_t *self, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    if (wl->storage.type == SB_STORAGE_SYNTHETIC) {
        printf ("datagen --dry-run: synthetic storage (%s): nothing to write\n", wl->data_folder);
        return 0;
    }
    sb_dataset_t ds;
    s_marker_dataset (self, &ds);
    uint64_t total;
    int exact;
    if (s_plan_datagen_bytes (self, &total, &exact, err, err_size) != 0)
        return 2;
    char where[PATH_MAX + 400];
    if (wl->storage.type == SB_STORAGE_S3) {
        char prefix[1100];
        if (s_key_prefix (wl, prefix, sizeof prefix, err, err_size) != 0)
            return 2;
        snprintf (where, sizeof where, "s3://%s/%strain", wl->storage.bucket, prefix);
    }
    else {
        char real[PATH_MAX], cwd[PATH_MAX];
        const char *f = wl->data_folder;
        while (f[0] == '.' && f[1] == '/')
            f += 2;
        if (realpath (wl->data_folder, real))
            snprintf (where, sizeof where, "%s/train", real);
        else if (f[0] != '/' && getcwd (cwd, sizeof cwd))    /* not made yet: where it would be */
            snprintf (where, sizeof where, "%s/%s%strain", cwd, f, f[0] && f[strlen (f) - 1] != '/' ? "/" : "");
        else
            snprintf (where, sizeof where, "%s/train", wl->data_folder);
    }
    printf ("datagen --dry-run: would write %llu files (%llu subfolders), %s%llu bytes (%.2f GiB) under %s\n",
            (unsigned long long) ds.files, (unsigned long long) (ds.subfolders > 1 ? ds.subfolders : 0),
            exact ? "" : "about ", (unsigned long long) total, total / 1073741824.0, where);
    if (wl->num_files_eval)
        printf ("datagen --dry-run: and %llu evaluation files (%llu subfolders) under valid/ beside it, in the bytes above\n",
                (unsigned long long) wl->num_files_eval,
                (unsigned long long) (wl->num_subfolders_eval > 1 ? wl->num_subfolders_eval : 0));
    int rc = 0;
    if (wl->storage.type == SB_STORAGE_FILE) {
        uint64_t free_bytes;
        if (sb_datafolder_free_bytes (wl->data_folder, &free_bytes, err, err_size) != 0)
            return 1;
        printf ("datagen --dry-run: %llu bytes (%.2f GiB) free there%s\n", (unsigned long long) free_bytes,
                free_bytes / 1073741824.0, total > free_bytes ? ": NOT ENOUGH, datagen would refuse" : "");
        sb_datafolder_scan_t scan;
        char why[1024];
        if (sb_datafolder_scan (wl->data_folder, 0, &scan, why, sizeof why) == 0 && (scan.dataset_files || scan.others))
            printf ("datagen --dry-run: the folder already holds %llu dataset files and %llu other entries\n",
                    (unsigned long long) scan.dataset_files, (unsigned long long) scan.others);
        rc = total > free_bytes ? 2 : 0;
        if (rc)
            snprintf (err, err_size, "not enough space in %s: %llu bytes needed, %llu free", wl->data_folder,
                      (unsigned long long) total, (unsigned long long) free_bytes);
    }
    printf ("datagen --dry-run: nothing written\n");
    fflush (stdout);
    return rc;
}

static int
s_session_run (s_session_t *self, const sb_session_opts_t *opts, int64_t *run_id, char *err, size_t err_size)
{
    *run_id = -1;
    int exit_code = 1;
    const sb_workload_t *wl = opts->wl;

    self->expected = opts->nhosts ? opts->nhosts : opts->local_workers ? opts->local_workers : opts->remote_workers;
    if (self->expected == 0 || opts->accelerators == 0 || opts->accelerators % self->expected != 0) {
        snprintf (err, err_size, "%llu accelerators cannot be split evenly over %zu workers",
                  (unsigned long long) opts->accelerators, self->expected);
        return 2;
    }
    self->ranks_per_worker = opts->accelerators / self->expected;
    if (self->ranks_per_worker > 4096) {
        snprintf (err, err_size, "%llu accelerators over %zu workers is %llu ranks per worker; at most 4096 run in one"
                  " worker: use more workers", (unsigned long long) opts->accelerators, self->expected,
                  (unsigned long long) self->ranks_per_worker);
        return 2;
    }
    /* the workers' connections must fit, and their tables in memory, before
     * anything is listed (a listing can take hours) */
    if (sb_session_check_limits (opts, err, err_size) != 0)
        return 2;
    if (opts->kind != SB_SESSION_CATALOG) {
        self->workers = calloc (self->expected, sizeof (s_worker_t));
        self->rank_done = calloc (opts->accelerators, 1);
        self->progress = sb_progress_new ((sb_progress_mode_t) opts->progress, stderr, opts->progress_interval_s,
                                          opts->accelerators);
        if (!self->workers || !self->rank_done
            || (!self->progress && opts->progress != SB_PROGRESS_OFF)) {
            snprintf (err, err_size, "out of memory for %zu workers and %llu ranks", self->expected,
                      (unsigned long long) opts->accelerators);
            return 2;
        }
    }
    self->files = wl->num_files_train;
    if (opts->kind == SB_SESSION_CHECKPOINT) {
        /* the sizes are checked before anything starts */
        if (wl->storage.type == SB_STORAGE_SYNTHETIC) {
            snprintf (err, err_size, "checkpoint: storage.storage_type must be local_fs or s3, not synthetic");
            return 2;
        }
        sb_ckpt_plan_t probe;
        if (sb_ckpt_plan_init (&probe, &wl->ckpt, opts->accelerators, err, err_size) != 0)
            return 2;
        sb_ckpt_plan_fini (&probe);
    }
    if (opts->kind == SB_SESSION_TRAIN && wl->ckpt.in_train) {
        /* issue 15, ckpt: the checkpoints a training run writes, and where */
        sb_ckpt_plan_t probe;
        if (sb_ckpt_plan_init (&probe, &wl->ckpt, opts->accelerators, err, err_size) != 0)
            return 2;
        sb_ckpt_plan_fini (&probe);
        int bad = s_ckpt_target (self, wl, 0, err, err_size);
        if (bad)
            return bad;
    }
    if (opts->kind == SB_SESSION_TRAIN) {
        /* Check the shard arithmetic before starting anything. */
        sb_shard_plan_t plan;
        char why[256];
        if (sb_shard_plan (wl->num_files_train, wl->num_samples_per_file, opts->accelerators, wl->batch_size, &plan,
                           why, sizeof why) != 0) {
            snprintf (err, err_size, "%s: key 'reader.batch_size': %s", wl->batch_size_origin, why);
            return 2;
        }
        /* the evaluation set, when the workflow evaluates (issue 15) */
        if (wl->do_eval && wl->num_files_eval == 0) {
            snprintf (err, err_size, "workflow.evaluation needs an evaluation set: set dataset.num_files_eval (the"
                      " files under valid/, which datagen writes), or workflow.evaluation=False");
            return 2;
        }
        if (wl->do_eval && sb_shard_plan (wl->num_files_eval, wl->num_samples_per_file, opts->accelerators,
                                          wl->batch_size_eval, &plan, why, sizeof why) != 0) {
            snprintf (err, err_size, "key 'reader.batch_size_eval': the evaluation set (dataset.num_files_eval=%llu): %s",
                      (unsigned long long) wl->num_files_eval, why);
            return 2;
        }
    }

    sb_info ("storage: %s", wl->storage_summary);  /* the engine, and the keys that chose it */
    /* Object storage: every endpoint must answer before anything is listed. */
    if (wl->storage.type == SB_STORAGE_S3) {
        if (s_key_prefix (wl, self->key_prefix, sizeof self->key_prefix, err, err_size) != 0)
            return 2;
        self->s3 = sb_s3_new (&wl->storage, 4, err, err_size);
        if (!self->s3)
            return 1;
        sb_info ("S3 credentials from %s", sb_s3_credentials_source (self->s3));
        if (s_preflight_own (self, err, err_size) != 0) {
            sb_s3_destroy (&self->s3);
            return 1;
        }
    }

    /* A local data folder is locked for the session: one datagen at a time,
     * and none while a run reads it (lib/dataset/datafolder.h). */
    if (wl->storage.type == SB_STORAGE_FILE && (opts->kind == SB_SESSION_TRAIN || opts->kind == SB_SESSION_DATAGEN)
        && s_folder_lock (self, opts->kind == SB_SESSION_DATAGEN, err, err_size) != 0)
        return 1;

    /* Dataset: list once, or generate first. With skip_listing there is no
     * listing: names follow DLIO's convention; the first object tells
     * whether the dataset exists, spot checks after that whether it is whole. */
    int missing = 0;
    if (opts->kind == SB_SESSION_CHECKPOINT) {
        /* no dataset: the checkpoint folder is the storage (PHASE_START ckpt_root, and WELCOME's data_root);
         * a read-only invocation reads what an earlier one wrote: all of it, checked now */
        int bad = s_ckpt_target (self, wl, wl->ckpt.num_write == 0 ? wl->ckpt.num_read : 0, err, err_size);
        if (bad) {
            sb_s3_destroy (&self->s3);
            return bad;
        }
        snprintf (self->catalog_info.prefix, sizeof self->catalog_info.prefix, "%s", self->ckpt_root);
    }
    else if (wl->skip_listing) {
        if (self->s3)
            snprintf (self->catalog_info.prefix, sizeof self->catalog_info.prefix, "%s", self->key_prefix);
        else if (wl->storage.type == SB_STORAGE_FILE) {
            char real[PATH_MAX];
            if (realpath (wl->data_folder, real))
                snprintf (self->catalog_info.prefix, sizeof self->catalog_info.prefix, "%s/", real);
        }
        self->catalog_info.count = wl->num_files_train;
        sb_dataset_t ds;
        s_dataset (self, &ds);
        char key[PATH_MAX], why[2048];
        int first = self->catalog_info.prefix[0] || wl->storage.type != SB_STORAGE_FILE
                  ? s_object_exists (self, &ds, 0, key, sizeof key, why, sizeof why) : 0;
        if (first < 0) {
            snprintf (err, err_size, "dataset.skip_listing: cannot check the first object: %s", why);
            return 1;
        }
        missing = first == 0;
        if (!missing && opts->kind == SB_SESSION_TRAIN && s_spot_check (self, err, err_size) != 0)
            return 2;
    }
    else if (s_list (self, opts->relist, &missing, err, err_size) != 0)
        return 1;
    /* A datagen generates; a run generates only when workflow.generate_data
     * asks (as DLIO), and then not again over a whole dataset of this
     * workload (the generator is deterministic: the same bytes) */
    int synthetic = wl->storage.type == SB_STORAGE_SYNTHETIC;
    int asked = opts->kind == SB_SESSION_DATAGEN || (opts->kind == SB_SESSION_TRAIN && wl->generate_data);
    int short_set = !missing && opts->kind == SB_SESSION_TRAIN && self->catalog_info.count < wl->num_files_train;
    int need_datagen = asked && !synthetic && (opts->kind == SB_SESSION_DATAGEN || missing || short_set);
    if (!need_datagen && !missing && opts->kind == SB_SESSION_TRAIN
        && (self->lock_fd >= 0 || self->read_only || self->s3)) {
        char why[4096];
        if (s_dataset_check (self, why, sizeof why) != 0) {
            if (!asked) {
                snprintf (err, err_size, "%s", why);
                return 2;
            }
            sb_info ("workflow.generate_data: generating the dataset again: %s", why);
            need_datagen = 1;
        }
        else if (asked && !synthetic)
            sb_info ("workflow.generate_data: the dataset in %s%s is whole and of this workload: not generated again",
                     self->s3 ? "s3 prefix " : "", self->s3 ? self->key_prefix : wl->data_folder);
    }
    if (opts->kind == SB_SESSION_TRAIN && wl->do_eval && !need_datagen && !missing && !synthetic) {
        /* valid/ listed into its own catalog as train/ is; with
         * skip_listing, as DLIO names it, spot-checked as train/ is */
        sb_dataset_t eds;
        s_eval_dataset (self, &eds);
        char why[3072];
        int listed = wl->skip_listing ? 0 : s_list_eval (self, opts->relist, why, sizeof why);
        if (listed < 0) {
            snprintf (err, err_size, "%s", why);
            return 1;
        }
        if (listed > 0 || (wl->skip_listing && s_check_objects (self, &eds, "evaluation set", why, sizeof why) != 0)) {
            if (!asked) {
                snprintf (err, err_size, "%s: generate the evaluation set with `shardbench datagen` and the same"
                          " workload (dataset.num_files_eval=%llu writes valid/), or run with"
                          " workflow.generate_data=True", why, (unsigned long long) wl->num_files_eval);
                return 2;
            }
            sb_info ("workflow.generate_data: generating the dataset again: %s", why);
            need_datagen = 1;
        }
    }
    if (!need_datagen && missing && !synthetic) {
        snprintf (err, err_size, "no dataset in %s%s (no train/ objects): generate it with `shardbench datagen`"
                  " and the same workload and overrides, or run with workflow.generate_data=True",
                  self->s3 ? "s3 prefix " : "", self->s3 ? self->key_prefix : wl->data_folder);
        return 2;
    }
    if (!need_datagen && opts->kind != SB_SESSION_CHECKPOINT && self->catalog_info.count < wl->num_files_train) {
        snprintf (err, err_size, "%strain holds %llu files but the workload needs dataset.num_files_train=%llu:"
                  " generate it with `shardbench datagen` into an empty folder, or run with"
                  " workflow.generate_data=True, or lower num_files_train",
                  self->catalog_info.prefix, (unsigned long long) self->catalog_info.count,
                  (unsigned long long) wl->num_files_train);
        return 2;
    }
    if (need_datagen && self->s3)
        snprintf (self->catalog_info.prefix, sizeof self->catalog_info.prefix, "%s", self->key_prefix);
    else if (need_datagen && s_prepare_folder (wl->data_folder, self->catalog_info.prefix,
                                               sizeof self->catalog_info.prefix, err, err_size) != 0)
        return 1;
    if (need_datagen && (self->lock_fd >= 0 || self->s3)) {
        int refused = self->s3 ? s_s3_datagen_check (self, err, err_size) : s_datagen_check (self, err, err_size);
        if (refused)
            return refused;
    }

    if (opts->kind == SB_SESSION_CATALOG) {
        if (wl->skip_listing)
            return s_spot_check (self, err, err_size) == 0 ? 0 : 2;
        if (missing) {
            snprintf (err, err_size, "no dataset under %s%s (nothing to list)", self->s3 ? "s3 prefix " : "",
                      self->catalog_info.prefix[0] ? self->catalog_info.prefix : wl->data_folder);
            return 1;
        }
        printf ("catalog %lld: %llu objects, %llu bytes, %s in %.3f s\n", (long long) self->catalog_info.id,
                (unsigned long long) self->catalog_info.count, (unsigned long long) self->catalog_info.bytes,
                self->catalog_info.reused ? "reused" : "listed", self->catalog_info.list_s);
        sb_s3_destroy (&self->s3);
        return 0;
    }

    /* every worker must see the coordinator's local folder (not one of its own) */
    if (wl->storage.type == SB_STORAGE_FILE && self->catalog_info.prefix[0] == '/') {
        int prc = s_probe_create (self, err, err_size);
        if (prc == -2) {    /* a read-only dataset: nothing to write a probe with */
            sb_warn ("%s: whether every worker sees this folder is not checked", err);
            err[0] = '\0';
        }
        else if (prc != 0)
            return 1;
    }

    self->router = zsock_new (ZMQ_ROUTER);
    if (!self->router) {
        snprintf (err, err_size, "cannot create the ZeroMQ socket: %s", zmq_strerror (zmq_errno ()));
        goto done;
    }
    sb_wire_configure (self->router, 1000);
    zsock_set_router_mandatory (self->router, 1);
    zsock_set_rcvtimeo (self->router, 0);
    if (opts->keys_dir && sb_curve_server (self->router, opts->keys_dir, &self->auth, err, err_size) != 0) {
        exit_code = 2;
        goto done;
    }
    char bind[512];
    int ipv6 = 0;
    if (s_bind_endpoint (opts->bind, bind, sizeof bind, &ipv6, err, err_size) != 0) {
        exit_code = 2;
        goto done;
    }
    if (ipv6)
        zsock_set_ipv6 (self->router, 1);
    int port = zsock_bind (self->router, "%s", bind);
    if (port < 0) {
        snprintf (err, err_size, "cannot bind %s: %s", opts->bind, zmq_strerror (zmq_errno ()));
        exit_code = 2;
        goto done;
    }
    char *last = zsock_last_endpoint (self->router);
    snprintf (self->endpoint, sizeof self->endpoint, "%s", last ? last : opts->bind);
    zstr_free (&last);
    self->poller = zpoller_new (self->router, NULL);
    if (!self->poller) {
        snprintf (err, err_size, "out of memory");
        goto done;
    }
    if (opts->nhosts || opts->local_workers) {
        /* --slurm: one srun step; --hosts: ssh per host; --local: fork */
        int rc = -1;
        if (!(self->launcher = sb_launcher_new (opts->worker_path)))
            snprintf (err, err_size, "out of memory");
        else if (opts->nhosts && opts->slurm)
            rc = sb_launcher_start_srun (self->launcher, opts->hosts, opts->nhosts, opts->srun_cmd, opts->remote_worker,
                                         self->endpoint, wl->heartbeat_timeout_s, opts->keys_dir, err, err_size);
        else if (opts->nhosts)
            rc = sb_launcher_start_ssh (self->launcher, opts->hosts, opts->nhosts, opts->ssh_cmd, opts->remote_worker,
                                        self->endpoint, wl->heartbeat_timeout_s, opts->keys_dir, err, err_size);
        else
            rc = sb_launcher_start (self->launcher, opts->local_workers, self->endpoint, wl->heartbeat_timeout_s,
                                    opts->keys_dir, err, err_size);
        if (rc != 0)
            goto done;
    }
    else
        sb_info ("waiting for %zu workers: start `shardbench-worker --coordinator %s%s%s` on each node%s",
                 self->expected, self->endpoint, opts->keys_dir ? " --keys " : "", opts->keys_dir ? opts->keys_dir : "",
                 opts->keys_dir ? " (CURVE: copy coordinator.cert and a worker certificate there)" : "");

    /* heartbeats go on while a run's first row waits for the writer */
    sb_resultdb_set_keep_alive (opts->db, s_keep_alive_db, self);
    char what[128];
    snprintf (what, sizeof what, "waiting for %zu workers to join %s", self->expected, self->endpoint);
    if (s_pump_until (self, s_all_joined, opts->join_timeout_s, what) != 0)
        goto done;
    if (self->preflight) {
        s_fail (self, "preflight failed: some workers cannot use their storage:\n  %-20s %-28s %s\n%s",
                "host", "endpoint", "cause", self->preflight);
        goto done;
    }

    if (need_datagen) {
        if (s_phase_datagen (self) != 0) {
            *run_id = self->run_id;
            goto done;
        }
        if (opts->kind == SB_SESSION_TRAIN && wl->skip_listing) {
            if (s_spot_check (self, err, err_size) != 0) {
                s_fail (self, "%s", err);
                goto done;
            }
        }
        else if (opts->kind == SB_SESSION_TRAIN || (self->s3 && !wl->skip_listing)) {
            /* an object store has no change marker: list what was written,
             * so that the next run reuses a current catalog */
            if (s_list (self, 1, &missing, err, err_size) != 0) {
                s_fail (self, "%s", err);
                goto done;
            }
            if (self->catalog_info.count < wl->num_files_train) {
                s_fail (self, "after generation %strain holds %llu files, expected %llu", self->catalog_info.prefix,
                        (unsigned long long) self->catalog_info.count, (unsigned long long) wl->num_files_train);
                goto done;
            }
            /* and valid/, which the same datagen wrote, for the evaluations */
            if (opts->kind == SB_SESSION_TRAIN && wl->do_eval && !synthetic
                && s_list_eval (self, 1, err, err_size) != 0) {
                s_fail (self, "after generation: %s", err);
                goto done;
            }
        }
    }
    if (opts->kind == SB_SESSION_TRAIN)
        s_phase_train (self);
    else if (opts->kind == SB_SESSION_CHECKPOINT)
        s_phase_checkpoint (self);
    *run_id = self->run_id;
    exit_code = self->failed ? 1 : 0;

done:
    if (self->failed)   /* the first cause, also over what err held */
        snprintf (err, err_size, "%s", self->failure);
    if (self->router)
        s_shutdown_workers (self);
    if (self->rejected_frames)
        sb_warn ("%llu malformed or unexpected frames were rejected", (unsigned long long) self->rejected_frames);
    sb_progress_destroy (&self->progress);
    sb_launcher_destroy (&self->launcher);
    sb_catalog_reader_destroy (&self->catalog);
    sb_catalog_reader_destroy (&self->eval_catalog);
    sb_s3_destroy (&self->s3);
    free (self->preflight);
    sb_sampler_destroy (&self->sampler);
    sb_sampler_destroy (&self->eval_sampler);
    zpoller_destroy (&self->poller);
    zsock_destroy (&self->router);
    zactor_destroy (&self->auth);
    for (size_t i = 0; i < self->nworkers; i++)
        zframe_destroy (&self->workers[i].identity);
    free (self->workers);
    self->workers = NULL;
    free (self->rank_done);
    self->rank_done = NULL;
    sb_ckpt_plan_fini (&self->ckpt);
    free (self->ckpt_steps);
    free (self->ckpt_arrived);
    free (self->ckpt_rank_next);
    self->ckpt_steps = self->ckpt_arrived = self->ckpt_rank_next = NULL;
    sb_resultdb_set_keep_alive (opts->db, NULL, NULL);
    if (*run_id < 0)
        *run_id = self->run_id;
    return exit_code;
}

/* s_workflow_kind's kind for train false with generate_data and checkpoint
 * true: two runs, datagen then checkpoint */
#define S_DATAGEN_THEN_CHECKPOINT 100

/* What `shardbench run` does, from the workflow section as DLIO's main.py
 * and LoadConfig read it: train (default), generating the dataset first
 * only with workflow.generate_data; with workflow.train false, generate only
 * (generate_data), the checkpoint workflow (checkpoint), or both in turn.
 * `datagen`, `checkpoint` and `catalog` are what they say, whatever the
 * section says. Returns the kind to run, or -1 with err (a usage error:
 * exit 2). */
static int
s_workflow_kind (const sb_session_opts_t *o, char *err, size_t err_size)
{
    const sb_workload_t *wl = o->wl;
    if (o->kind != SB_SESSION_TRAIN || wl->do_train)
        return (int) o->kind;
    if (wl->do_checkpoint && wl->generate_data) {
        if (o->remote_workers) {
            /* workers started elsewhere serve one command */
            snprintf (err, err_size, "workflow: train false with both generate_data and checkpoint true runs two"
                      " commands, which workers started with --workers cannot both serve: generate the dataset"
                      " with `shardbench datagen`, then run the checkpoint workflow with"
                      " workflow.generate_data=False (or `shardbench checkpoint`)");
            return -1;
        }
        sb_info ("workflow: train false, generate_data and checkpoint true: generate the dataset, then the"
                 " checkpoint workflow (as DLIO's main.py)");
        return S_DATAGEN_THEN_CHECKPOINT;
    }
    if (wl->do_checkpoint) {
        sb_info ("workflow: train false, checkpoint true: the checkpoint workflow (as `shardbench checkpoint`)");
        return SB_SESSION_CHECKPOINT;
    }
    if (wl->generate_data) {
        sb_info ("workflow: train false, generate_data true: generate the dataset only (as `shardbench datagen`)");
        return SB_SESSION_DATAGEN;
    }
    snprintf (err, err_size, "workflow: train, generate_data and checkpoint are all false: nothing to run (set"
              " workflow.train=True, workflow.generate_data=True or workflow.checkpoint=True)");
    return -1;
}

/* One command of the kind the workflow chose. */
static int
s_run_kind (const sb_session_opts_t *opts_in, sb_session_kind_t kind, int64_t *run_id, char *err, size_t err_size)
{
    sb_session_opts_t eff = *opts_in;
    eff.kind = kind;
    const sb_session_opts_t *opts = &eff;
    s_session_t s = { .o = opts, .run_id = -1, .lock_fd = -1 };
    if (opts->kind == SB_SESSION_DATAGEN && opts->dry_run) {
        *run_id = -1;
        return s_dry_run (&s, err, err_size);
    }
    int rc = s_session_run (&s, opts, run_id, err, err_size);
    /* what the early returns (before the event loop) leave */
    s_folder_release (&s);
    free (s.workers);
    free (s.rank_done);
    free (s.dlio_au);
    free (s.dlio_tput);
    free (s.eval_au);
    free (s.eval_tput);
    sb_progress_destroy (&s.progress);
    sb_s3_destroy (&s.s3);     /* also wipes the client's credentials */
    return rc;
}

int
sb_session_run (const sb_session_opts_t *opts_in, int64_t *run_id, char *err, size_t err_size)
{
    err[0] = '\0';
    *run_id = -1;
    int kind = s_workflow_kind (opts_in, err, err_size);
    if (kind < 0)
        return 2;
    int rc;
    if (kind == S_DATAGEN_THEN_CHECKPOINT) {
        /* DLIO's generate_data with checkpoint_only: the dataset, then the
         * checkpoints, each its own run row (runs.workflow) */
        rc = s_run_kind (opts_in, SB_SESSION_DATAGEN, run_id, err, err_size);
        if (rc == 0 && !s_caught && !opts_in->dry_run) {
            sb_info ("workflow: datagen run %lld done; the checkpoint workflow follows", (long long) *run_id);
            rc = s_run_kind (opts_in, SB_SESSION_CHECKPOINT, run_id, err, err_size);
        }
    }
    else
        rc = s_run_kind (opts_in, (sb_session_kind_t) kind, run_id, err, err_size);
    if (!s_caught)
        return rc;
    /* stopped by a signal, in whatever phase: say so, and exit 128 + N */
    if (!strstr (err, "interrupted")) {
        char why[1024];
        snprintf (why, sizeof why, "%s", err);
        snprintf (err, err_size, "interrupted by %s%s%s", s_signal_name (), why[0] ? ": " : "", why);
    }
    return 128 + s_caught;
}
