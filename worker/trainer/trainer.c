/* trainer: every local rank's training loop as a state machine.
 *
 * A rank derives its reads itself: the sampler (lib/dataset/sampler.h) gives the
 * catalog index and sample of each position of its epoch, the catalog's
 * names and sizes come from the DLIO naming and the generator when the
 * coordinator says they follow them (PHASE_START catalog_names,
 * catalog_sizes), else from pages of entries asked once per epoch
 * (worker/trainer/entries.h), and lib/dataset/sample_range.h turns them into a byte
 * range. A parquet row group is read once per epoch: samples of a group a
 * read of the same loader thread (or the rank's last read) brought in, or is
 * bringing in, complete with it and cost no I/O. With DLIO's tensorflow
 * loader (tf_plan.h) each loader thread keeps what it read: an npz file is
 * read whole once per (thread, file), a parquet row group once per (thread,
 * file, group), and a thread never serves another thread's samples.
 *
 * with reader.preprocess_time (WELCOME preprocess_dist)
 * each of a rank's loader threads works as one of DLIO's loader workers: it
 * reads one sample (or one row group's run of samples) at a time, then
 * spends a drawn preprocess time on each sample, which joins its batch only
 * then, and starts its next read only after that (s_loaders_advance). */
#include "trainer.h"
#include "engine.h"
#include "ckpt_rank.h"
#include "dataset.h"
#include "dlio_metrics.h"
#include "distribution.h"
#include "entries.h"
#include "lists.h"
#include "histogram.h"
#include "log.h"
#include "reader.h"
#include "sample_range.h"
#include "sampler.h"
#include "tf_plan.h"
#include "trace.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define S_PAGES_IN_FLIGHT 4     /* ENTRIES_REQ pages asked and not answered */
#define S_SIZE_CACHE 4096       /* generator sizes remembered (direct-mapped by catalog index) */

/* A read in flight: the positions it serves. */
typedef struct {
    uint64_t seq;           /* the rank's read number, 0: the slot is free */
    uint64_t position;      /* first position it serves ... */
    uint64_t run;           /* ... and the consecutive positions of its batch it serves */
    uint64_t count;         /* every position it serves (later ones of its row group included) */
    uint64_t file, offset, length, dlio;
    uint64_t sample;        /* the sample in the file of `position` (the run's are the next ones) */
    const char *stored;     /* the entry's stored key (borrowed from the entries) or NULL */
    double   start;
    uint32_t loader;        /* the loader thread + 1 whose read this is (0: none) */
    uint8_t  in_batch;      /* counted in the batch_pending of its position's batch */
    uint8_t  tail;          /* a parquet file's last 4 bytes, which must be "PAR1" (SB_READ_PARQUET_TAIL) */
    uint32_t footer_of;     /* footers first: the loader thread + 1 whose footer read this is (0: none) */
    uint32_t eager;         /* the loader thread + 1 of a row group read its reader's open submitted (tf_plan.h) */
} s_slot_t;

/* The last row group a loader thread read (or is reading). */
typedef struct {
    uint64_t file, offset, length;
    uint64_t slot, seq;     /* in flight while slots[slot].seq == seq */
    int      valid;
} s_group_t;

/* the file a loader thread's tf.data reader has open (tf_plan.h): what its
 * queued row-group reads are of */
typedef struct {
    uint64_t    file, dlio, size;
    const char *stored;     /* borrowed from the entries for the epoch, or NULL */
    int         valid;
} s_tf_file_t;

/* a loader thread of a rank, with reader.preprocess_time.
 * Positions of the thread below `at` are in; it is on the `n` positions
 * from `at` (all of them its own, one read's), or idle (n == 0). */
typedef enum {
    S_LOADER_IDLE, S_LOADER_READING, S_LOADER_WAITING, S_LOADER_ARRIVED, S_LOADER_PREPROCESS
} s_loader_state_t;

typedef struct {
    s_loader_state_t state;
    uint64_t at, n;
    uint64_t done;          /* PREPROCESS: of the n, preprocessed */
    uint64_t slot, seq;     /* WAITING: the read of another thread bringing its row group in */
    double   until;         /* PREPROCESS: when the current sample's preprocess ends */
} s_loader_t;

/* A file whose footer a loader thread reads before any row group (footers first). */
typedef struct {
    uint64_t    file, size, dlio;
    uint64_t    position;   /* the rank's first position reading it */
    const char *stored;
    int         group;
} s_footer_file_t;

/* One rank's epoch. Counters are positions in the rank's order (0..k). */
typedef struct {
    uint64_t       rank;
    sb_reader_t   *reader;          /* owned */
    s_slot_t      *slots;           /* nslots (owned) */
    uint32_t      *free_slots;      /* stack of free slot indices (owned) */
    size_t         nfree;
    s_group_t     *groups;          /* threads + 1: each loader thread's last group, then the rank's (owned) */
    sb_tf_plan_t  *tf;              /* tf_mode: what each loader thread's reader read this epoch (owned) */
    s_tf_file_t   *tf_files;        /* tf_mode: each loader thread's open file (threads of them, owned) */
    s_loader_t    *loaders;         /* threads of them (owned) */
    uint32_t      *batch_pending;   /* nslots + 1: reads in flight of batch q at [q % (nslots + 1)] (owned) */
    double        *batch_at;        /* nslots + 1: when batch q's last sample came in, as its read's engine
                                     * recorded it (issued + latency), at [q % (nslots + 1)] (owned) */
    uint64_t       next_seq;
    uint64_t       submitted, completed, step, bytes;
    uint64_t       resident_bytes, checked_bytes;   /* page-cache residency sampled before reads */
    int            running;         /* in an epoch, RANK_DONE not sent */
    int            computing;       /* a batch is being computed until compute_until */
    int            waiting_go;      /* at the barrier of `step` */
    double         compute_started, compute_until;
    double         compute_length;  /* the batch's drawn compute seconds (exact, unlike until - started) */
    double         count_at;        /* the latest time of the samples counted in (s_count_samples) */
    double         free_at;         /* when the rank was free to compute its next batch: its last compute's
                                     * deadline, the local barrier's release, a GO's arrival (s_start_at) */
    double         started, first_step_end, compute_after_first, compute_all;
    double         io_wait, barrier, wait_since, barrier_since;
    /* DLIO's per-step sums (lib/metrics/dlio_metrics.h): a step's load starts at
     * the rank's last release (load_since), its proc time ends with its compute */
    double         load_since, metric_compute, head_proc, tail_proc;
    uint64_t       metric_steps;
    sb_histogram_t barrier_latency; /* STEP sent to GO received, microseconds */
    sb_histogram_t read_latency;    /* the I/O engine's time per sample read, microseconds */
    sb_interval_t  interval;
    /* footers first (s_footers_advance): each loader thread's files of the
     * epoch, thread t's at ff[ff_start[t] .. ff_start[t + 1]); its cursor
     * ff_at[t], the footer range ff_range[t] of that file next, its reads in
     * flight ff_busy[t]; ff_left: threads not done (0: the phase is over) */
    s_footer_file_t *ff;            /* owned */
    size_t        *ff_start, *ff_at, *ff_range;    /* threads + 1, threads, threads (owned) */
    uint32_t      *ff_busy;         /* threads: footer reads in flight (owned) */
    size_t         ff_left;
    /* stagger: positions of loader threads whose first read of the epoch is
     * held back (WELCOME loader_stagger), counted as submitted and in their
     * batch's pending reads, issued in order once their thread starts */
    uint64_t      *held;            /* held_cap of them (owned) */
    size_t         nheld, held_cap;
    /* the checkpoint the rank is writing (it waits for it, as in DLIO) */
    sb_ckpt_job_t *ckpt_job;        /* owned, NULL: none */
    size_t         ckpt_next;       /* index of its next checkpoint in the epoch's ckpt_steps */
    double         ckpt_s;          /* seconds in checkpoints this epoch */
} s_rank_t;

/* a set of files the ranks read, with what depends on
 * it: the training set (train/, PHASE_START "train") or the evaluation set
 * (valid/, "eval": WELCOME eval_files, eval_batch_size, eval_time). The
 * epoch loop is the same for both. */
typedef struct {
    sb_dataset_t     ds;            /* the set's naming and sizes */
    uint64_t         batch_size;    /* samples per step per rank */
    sb_dist_t        compute;       /* compute seconds per step */
    uint64_t         compute_seed;  /* the stream the times come from */
    uint64_t         preprocess_seed;   /* the stream of the preprocess times */
    uint64_t         metric_steps;  /* DLIO's nominal steps (the metric window) */
    int              step_sync;     /* a barrier per step: train with train.sync step; DLIO's eval has none */
    /* the sampler and the catalog, from the set's first PHASE_START */
    sb_sampler_t    *sampler;       /* owned */
    uint64_t         prepared;      /* the last epoch the sampler prepared (0: none) */
    uint8_t         *touched;       /* WELCOME drop_page_cache: a bit per catalog file, set at the file's first read
                                     * of the epoch on this worker, which drops its pages first (owned; NULL: off) */
    uint8_t         *footered;      /* parquet: a bit per catalog file whose footer was read this epoch (owned) */
    int              footers_kept;  /* footer_tail: the footers were read (the first epoch): never again */
    int              monotone;      /* positions of a batch read a file's samples in order (see s_run) */
    uint64_t         listed;
    int              catalog_names, catalog_sizes;  /* PHASE_START's: names 1 name order, 2 index order */
    int              asking;        /* entries come from the coordinator */
    uint64_t         size_of[S_SIZE_CACHE], size_key[S_SIZE_CACHE];   /* generator sizes, key file + 1 */
    uint64_t         same_size;     /* synthetic with record_length_bytes_stdev 0: every object's generator
                                     * size, known once (0: look each one up) */
} s_set_t;

enum { S_SET_TRAIN, S_SET_EVAL };

struct sb_trainer {
    const sb_msg_welcome_t *cfg;
    unsigned         storage_caps;  /* SB_ENGINE_* of the dataset's engine */
    sb_sender_t      out;
    s_set_t          sets[2];       /* S_SET_TRAIN, S_SET_EVAL */
    s_set_t         *set;           /* the one this phase reads */
    s_rank_t        *ranks;         /* cfg->ranks of them (owned) */
    size_t           nranks;
    size_t           nslots;        /* reads in flight per rank at most: the prefetch window */
    uint64_t         threads;       /* loader threads per rank (WELCOME loader_threads) */
    int              needs_keys;    /* the engines need names (all alike) */
    sb_entries_t    *entries;       /* owned; used when the set is asking */
    sb_lists_t      *lists;         /* owned; pages of the ranks' file lists when the sampler is served */
    sb_sample_ranger_t ranger;
    sb_trace_t      *trace;         /* owned, NULL: no trace */
    /* the epoch */
    uint64_t         epoch, k, batches, window;
    sb_dlio_window_t metric;        /* DLIO's metric window over this epoch's steps */
    int              step_sync;
    int              local_barrier; /* every rank of the run is here: no coordinator round trip per step */
    size_t           running;       /* ranks that have not sent RANK_DONE */
    uint64_t         barrier_step;  /* step whose barrier the ranks are reaching */
    size_t           arrivals;      /* ranks at barrier_step */
    double           step_sent_at;  /* when this worker's STEP of barrier_step - 1 left */
    int              awaiting_go;   /* that STEP has had no GO yet */
    sb_histogram_t   barrier_own;   /* the barrier's own cost per step, microseconds */
    int              failed;        /* an ERROR was sent: nothing more this epoch */
    int              released;      /* a local barrier released ranks during this pump */
    double           barrier_last;  /* the latest compute deadline of the ranks at barrier_step */
    double           late_s;        /* a test's lateness of the loop at each compute deadline (s_late_wake) */
    double           stall_s;       /* shardbench.stall_timeout_s (0: never) */
    double           next_stall_check;
    /* the epoch's checkpoints: a decoded copy of its PHASE_START (owned) */
    sb_msg_t         ckpt_ps;       /* SB_MSG_NONE: none this epoch */
    const sb_storage_cfg_t *storage;
    /* reader.preprocess_time per sample (WELCOME preprocess_*) */
    sb_dist_t        preprocess;
    int              preprocessing; /* not a constant 0: the loader threads run (s_loaders_advance) */
    int              loader_lanes;  /* a pool of one-read clients (no SB_ENGINE_ASYNC): a loader thread's
                                     * reads wait in its own lane, DLIO's window ahead (s_window) */
    int              grouped;       /* a read serves many samples (row groups): s_completions_wanted is 1 */
    size_t           depth;         /* DLIO's reads in flight per rank (storage loader_depth x threads), 0: none */
    double           stagger_s;     /* loader thread t's first read of an epoch waits t x this (WELCOME loader_stagger) */
    uint64_t         footer_tail;   /* footers first: bytes from each file's end, once a run (WELCOME
                                     * parquet_footer_tail), 0: pyarrow's footer reads every epoch */
    uint64_t         footer_batch;  /* with footer_tail: files a loader thread reads the footers of at once */
    int              footers_first; /* parquet with DLIO's sliding row-group window: every footer of a loader
                                     * thread's files first, one at a time (lib/dataset/loader_depth.h) */
    sb_tf_mode_t     tf_mode;       /* DLIO's tf.data reads per loader thread (tf_plan.h), or SB_TF_NONE */
    /* an epoch's sampler (sb_sampler_new, sb_sampler_epoch: O(dataset), seconds
     * at tens of millions of files) is prepared on a thread of its own while
     * the agent's loop goes on, sending and hearing heartbeats: done inline,
     * the worker fell silent for as long, and past shardbench.heartbeat_timeout_s
     * the coordinator dropped it (and it the coordinator) and the run failed */
    pthread_t        prep_thread;
    int              preparing;     /* the thread was started and not joined */
    atomic_int       prep_done;     /* the thread's work is over (prep_rc, prep_err set) */
    int              prep_fd;       /* eventfd it signals then (sb_trainer_wait_fds) */
    int              prep_rc;
    char             prep_err[1024];
    sb_msg_t         prep_ps;       /* a decoded copy of the PHASE_START being prepared (owned) */
    int              free_reads;    /* a read completes at once with its length and nothing else (synthetic
                                     * storage, no verification: sb_reader_reads_free): a single sample's
                                     * read is counted in place, with no slot, queue or completion (s_submit) */
};

/* ENDPOINT_STATS of rank r: its engine's counters since the phase began,
 * asked for (at the end of its epoch) or sent behind a failed read. */
static void
s_report_endpoint_counters (sb_trainer_t *self, s_rank_t *r, int after_failure)
{
    sb_reader_endpoint_t *eps = calloc (SB_MAX_ENDPOINTS, sizeof *eps);
    int n = !eps ? -1
            : after_failure ? sb_reader_failure_stats (r->reader, eps, SB_MAX_ENDPOINTS)
                            : sb_reader_endpoint_stats (r->reader, eps, SB_MAX_ENDPOINTS);
    if (n < 0)
        sb_warn ("rank %llu: per-endpoint counters of epoch %llu are lost", (unsigned long long) r->rank,
                 (unsigned long long) self->epoch);
    else
        sb_report_endpoints (&self->out, r->rank, eps, (size_t) n);
    free (eps);
}

static void
s_fail (sb_trainer_t *self, const s_rank_t *r, const char *op, const char *target, int errno_val,
        const char *message, const sb_read_result_t *s3)
{
    sb_report_failure (&self->out, r ? r->rank : self->cfg->first_rank, op, target, errno_val, message, s3);
    self->failed = 1;
}

/* DLIO's prefetch window in samples (torch_data_loader.py: the PyTorch
 * DataLoader's prefetch_factor = ceil(prefetch_size / threads), 2 when
 * that is 0, batches ahead per loader worker): the positions a rank's
 * loader threads may have read ahead of the batch it computes. */
static uint64_t
s_window (uint64_t prefetch_size, uint64_t threads, uint64_t batch_size)
{
    uint64_t factor = prefetch_size ? (prefetch_size + threads - 1) / threads : 2;
    return factor * threads * batch_size;
}

sb_trainer_t *
sb_trainer_new (const sb_msg_welcome_t *cfg, const sb_storage_cfg_t *storage, const sb_sender_t *out, char *err,
                size_t err_size)
{
    sb_trainer_t *self = calloc (1, sizeof *self);
    if (!self || !(self->entries = sb_entries_new ()) || !(self->lists = sb_lists_new (cfg->ranks))) {
        snprintf (err, err_size, "out of memory");
        if (self)
            sb_entries_destroy (&self->entries);
        free (self);
        return NULL;
    }
    self->cfg = cfg;
    /* SHARDBENCH_TEST_LATE_WAKE_MS=X (read once): the loop sleeps X ms
     * when it notices a compute deadline, as a loaded host's late wake-up
     * would, so that a test can show that lateness does not count */
    const char *late = getenv ("SHARDBENCH_TEST_LATE_WAKE_MS");
    if (late && *late) {
        self->late_s = strtod (late, NULL) / 1e3;
        sb_warn ("test hook: the loop sleeps %g ms at each compute deadline it notices", self->late_s * 1e3);
    }
    self->prep_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (self->prep_fd < 0) {
        snprintf (err, err_size, "cannot make an eventfd: %s", strerror (errno));
        sb_entries_destroy (&self->entries);
        free (self);
        return NULL;
    }
    self->storage_caps = sb_storage_caps (storage);
    self->storage = storage;
    self->out = *out;
    s_set_t *train = &self->sets[S_SET_TRAIN], *eval = &self->sets[S_SET_EVAL];
    train->ds = (sb_dataset_t) {
        .prefix = cfg->file_prefix, .format = cfg->format, .files = cfg->num_files, .subfolders = cfg->num_subfolders,
        .samples_per_file = cfg->samples_per_file, .record_length = cfg->record_length,
        .record_stdev = cfg->record_stdev, .seed = cfg->seed, .parquet_columns = cfg->parquet_columns, .parquet_compression = cfg->parquet_compression,
        .parquet_read_columns = cfg->parquet_read_columns,
        .parquet_row_group = cfg->parquet_row_group, .parquet_coalesce = cfg->parquet_coalesce,
        .element_type = cfg->record_element_type, .record_dims = cfg->record_dims.items,
        .record_ndims = cfg->record_dims.count,
    };
    train->batch_size = cfg->batch_size;
    train->compute = (sb_dist_t) { SB_DIST_CONSTANT, cfg->computation_time, 0 };
    if (cfg->compute_dist && *cfg->compute_dist) {
        train->compute.a = cfg->compute_a;
        train->compute.b = cfg->compute_b;
        if (sb_dist_parse (cfg->compute_dist, &train->compute.type) != 0) {
            snprintf (err, err_size, "WELCOME names an unknown compute distribution '%.64s'", cfg->compute_dist);
            sb_trainer_destroy (&self);
            return NULL;
        }
    }
    train->compute_seed = cfg->seed;
    train->metric_steps = cfg->metric_steps;
    train->step_sync = strcmp (cfg->sync, "step") == 0;
    /* the evaluation set: valid/, its batch and time per step, DLIO's eval
     * steps as the nominal ones, no barrier between steps (DLIO's _eval) */
    eval->ds = train->ds;
    eval->ds.split = "valid";
    eval->ds.files = cfg->eval_files;
    eval->ds.subfolders = cfg->eval_subfolders;
    eval->batch_size = cfg->eval_batch_size ? cfg->eval_batch_size : 1;
    eval->compute = cfg->eval_time_stdev > 0 ? (sb_dist_t) { SB_DIST_NORMAL, cfg->eval_time, cfg->eval_time_stdev }
                                             : (sb_dist_t) { SB_DIST_CONSTANT, cfg->eval_time, 0 };
    eval->compute_seed = sb_mix (cfg->seed, 0x6576616c);   /* "eval": a stream of its own */
    eval->metric_steps = sb_dlio_nominal_steps (cfg->samples_per_file, cfg->eval_files, eval->batch_size,
                                                cfg->total_ranks, -1);
    eval->step_sync = 0;
    /* the preprocess time of every sample (both sets: DLIO's readers serve both) */
    self->preprocess = (sb_dist_t) { SB_DIST_CONSTANT, 0, 0 };
    if (cfg->preprocess_dist && *cfg->preprocess_dist) {
        char why[256];
        self->preprocess.a = cfg->preprocess_a;
        self->preprocess.b = cfg->preprocess_b;
        if (sb_dist_parse (cfg->preprocess_dist, &self->preprocess.type) != 0
            || sb_dist_check (&self->preprocess, why, sizeof why) != 0) {
            snprintf (err, err_size, "WELCOME's preprocess time '%.64s' (%g, %g) is not a distribution",
                      cfg->preprocess_dist, cfg->preprocess_a, cfg->preprocess_b);
            sb_trainer_destroy (&self);
            return NULL;
        }
    }
    self->preprocessing = !(self->preprocess.type == SB_DIST_CONSTANT && self->preprocess.a == 0);
    train->preprocess_seed = sb_mix (cfg->seed, 0x70726570);    /* "prep" */
    eval->preprocess_seed = sb_mix (eval->compute_seed, 0x70726570);
    self->set = train;
    self->stall_s = (double) cfg->stall_timeout_ms / 1000.0;
    self->threads = cfg->loader_threads ? cfg->loader_threads : 1;
    self->tf_mode = sb_tf_mode (cfg->sampler, cfg->format, cfg->samples_per_file);
    uint64_t batch_max = cfg->eval_files && eval->batch_size > cfg->batch_size ? eval->batch_size : cfg->batch_size;
    self->nslots = (size_t) ((cfg->prefetch_size + 1) * batch_max);
    if (self->nslots < 3)   /* a parquet file's first group goes with its (up to 2) footer reads */
        self->nslots = 3;
    if (self->preprocessing && self->nslots < self->threads + 2)   /* a read per loader thread */
        self->nslots = (size_t) self->threads + 2;
    /* a pool's loader threads each read their own batches (reader.h): DLIO's
     * window of batches (a batch more while one computes: s_window_end) is
     * queued at once, so it needs as many slots */
    self->loader_lanes = !self->preprocessing && !(self->storage_caps & (SB_ENGINE_ASYNC | SB_ENGINE_NO_IO));
    uint64_t lanes_slots = s_window (cfg->prefetch_size, self->threads, batch_max) + batch_max + 2;
    if (self->loader_lanes && self->nslots < lanes_slots)
        self->nslots = (size_t) lanes_slots;
    /* DLIO's iterable readers keep loader_depth reads in flight per loader
     * worker, however far ahead of the batches that reaches: the rank's
     * reads in flight are the engine's (threads x loader_depth); twice as
     * many slots, so that reads queued behind them keep every lane full */
    if (storage->loader_depth && !(self->storage_caps & SB_ENGINE_NO_IO)) {
        self->depth = sb_reader_reads_in_flight (storage, (size_t) self->threads);
        if (self->nslots < 2 * self->depth + 4)
            self->nslots = 2 * self->depth + 4;
        self->footers_first = strcmp (cfg->format, "parquet") == 0 && strcmp (cfg->sampler, "dlio_files") == 0;
        self->stagger_s = cfg->loader_stagger > 0 && !self->footers_first ? cfg->loader_stagger : 0;
        self->footer_tail = self->footers_first ? cfg->parquet_footer_tail : 0;
        self->footer_batch = cfg->parquet_footer_batch ? cfg->parquet_footer_batch : 1;
    }
    self->ranks = calloc ((size_t) cfg->ranks, sizeof (s_rank_t));
    if (!self->ranks) {
        snprintf (err, err_size, "out of memory for %llu ranks", (unsigned long long) cfg->ranks);
        sb_trainer_destroy (&self);
        return NULL;
    }
    for (uint64_t i = 0; i < cfg->ranks; i++, self->nranks++) {
        s_rank_t *r = &self->ranks[i];
        r->rank = cfg->first_rank + i;
        char why[512];
        sb_storage_cfg_t mine;     /* use_mpi_endpoint_distribution: the rank's own endpoint */
        sb_storage_for_rank (storage, r->rank, &mine);
        r->reader = sb_reader_new (&mine, cfg->data_root, (size_t) self->threads, (size_t) cfg->io_buffer,
                                   (int) cfg->verify, cfg->seed, why, sizeof why);
        r->slots = calloc (self->nslots, sizeof *r->slots);
        r->free_slots = calloc (self->nslots, sizeof *r->free_slots);
        r->groups = calloc ((size_t) self->threads + 1, sizeof *r->groups);
        r->loaders = calloc ((size_t) self->threads, sizeof *r->loaders);
        r->batch_pending = calloc (self->nslots + 1, sizeof *r->batch_pending);
        r->batch_at = calloc (self->nslots + 1, sizeof *r->batch_at);
        r->ff_start = calloc ((size_t) self->threads + 1, sizeof *r->ff_start);
        r->ff_at = calloc ((size_t) self->threads, sizeof *r->ff_at);
        r->ff_range = calloc ((size_t) self->threads, sizeof *r->ff_range);
        r->ff_busy = calloc ((size_t) self->threads, sizeof *r->ff_busy);
        r->tf = self->tf_mode != SB_TF_NONE ? sb_tf_plan_new ((size_t) self->threads) : NULL;
        r->tf_files = self->tf_mode != SB_TF_NONE ? calloc ((size_t) self->threads, sizeof *r->tf_files) : NULL;
        if (!r->reader || !r->slots || !r->free_slots || !r->groups || !r->loaders || !r->batch_pending || !r->batch_at
            || !r->ff_start || !r->ff_at || !r->ff_range || !r->ff_busy
            || (self->tf_mode != SB_TF_NONE && (!r->tf || !r->tf_files))) {
            snprintf (err, err_size, "rank %llu: %s", (unsigned long long) r->rank,
                      r->reader ? "out of memory for its reads in flight" : why);
            self->nranks++;
            sb_trainer_destroy (&self);
            return NULL;
        }
        if (sb_reader_set_dataset (r->reader, &self->set->ds, why, sizeof why) != 0) {
            snprintf (err, err_size, "rank %llu: %s", (unsigned long long) r->rank, why);
            self->nranks++;
            sb_trainer_destroy (&self);
            return NULL;
        }
        if (sb_reader_set_direct_io (r->reader, (int) cfg->odirect, why, sizeof why) != 0) {
            snprintf (err, err_size, "rank %llu: %s", (unsigned long long) r->rank, why);
            self->nranks++;
            sb_trainer_destroy (&self);
            return NULL;
        }
        self->needs_keys = sb_reader_needs_keys (r->reader);
        self->free_reads = sb_reader_reads_free (r->reader);
    }
    if (cfg->trace && cfg->trace[0] && !(self->trace = sb_trace_open (cfg->trace, err, err_size))) {
        sb_trainer_destroy (&self);
        return NULL;
    }
    return self;
}

void
sb_trainer_destroy (sb_trainer_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_trainer_t *self = *self_p;
    if (self->preparing)    /* it ends on its own (it waits for nothing) */
        pthread_join (self->prep_thread, NULL);
    if (self->prep_fd >= 0)
        close (self->prep_fd);
    sb_proto_fini (&self->prep_ps);
    /* stop every rank's reader, then join them all against one deadline a
     * second at a time, waking the stuck threads of all ranks together: a
     * hung mount costs the worker about 4 s, not 4 s per read thread */
    for (size_t i = 0; i < self->nranks; i++)
        sb_reader_stop (self->ranks[i].reader);
    for (;;) {
        uint64_t until = sb_mono_ns () + 1000000000ull;
        size_t waiting = 0;
        for (size_t i = 0; i < self->nranks; i++)
            waiting += sb_reader_join_until (self->ranks[i].reader, until);
        if (!waiting)
            break;
        for (size_t i = 0; i < self->nranks; i++)
            sb_reader_wake (self->ranks[i].reader);
    }
    for (size_t i = 0; self->ranks && i < self->nranks; i++)
        sb_ckpt_job_finish (&self->ranks[i].ckpt_job, 1, NULL);
    sb_proto_fini (&self->ckpt_ps);
    for (size_t i = 0; self->ranks && i < self->nranks; i++) {
        s_rank_t *r = &self->ranks[i];
        free (r->slots);
        free (r->free_slots);
        free (r->groups);
        free (r->loaders);
        free (r->batch_pending);
        free (r->batch_at);
        free (r->ff);
        free (r->ff_start);
        free (r->ff_at);
        free (r->ff_range);
        free (r->ff_busy);
        free (r->held);
        sb_tf_plan_destroy (&r->tf);
        free (r->tf_files);
        sb_reader_destroy (&r->reader);
    }
    char err[PATH_MAX + 128];
    if (sb_trace_close (&self->trace, err, sizeof err) != 0)
        sb_error ("%s", err);
    for (int i = 0; i < 2; i++) {
        sb_sampler_destroy (&self->sets[i].sampler);
        free (self->sets[i].touched);
        free (self->sets[i].footered);
    }
    sb_entries_destroy (&self->entries);
    sb_lists_destroy (&self->lists);
    sb_sample_ranger_fini (&self->ranger);
    free (self->ranks);
    free (self);
    *self_p = NULL;
}

/* ------------------------------------------------------------ what to read */

/* The read of one position. */
typedef struct {
    sb_sample_ref_t ref;
    uint64_t        size, dlio;
    const char     *stored;     /* key from the coordinator, NULL: the DLIO name of dlio */
    uint64_t        offset, length;
    uint64_t        run_end;    /* the sample after the last of its row group (group), else sample + 1 */
    int             group;
} s_read_t;

static int
s_generator_size (sb_trainer_t *self, uint64_t file, uint64_t dlio, uint64_t *size, char *err, size_t err_size)
{
    if (self->set->same_size) {
        *size = self->set->same_size;
        return 0;
    }
    size_t at = (size_t) (file % S_SIZE_CACHE);
    if (self->set->size_key[at] == file + 1) {
        *size = self->set->size_of[at];
        return 0;
    }
    if (sb_generator_size (&self->set->ds, (self->storage_caps & SB_ENGINE_NO_IO) != 0, dlio, size, err, err_size) != 0)
        return -1;
    self->set->size_key[at] = file + 1;
    self->set->size_of[at] = *size;
    return 0;
}

/* Key of a read into buf: the stored one or the DLIO name. -1 when there is none. */
static int
s_key (const sb_trainer_t *self, const char *stored, uint64_t dlio, char *buf, size_t size)
{
    if (stored)
        return sb_strf (buf, size, "%s", stored);
    if (dlio == SB_NO_DLIO_INDEX || dlio >= self->set->ds.files)
        return -1;
    return sb_dataset_key (&self->set->ds, dlio, buf, size);
}

/* The DLIO index of catalog entry `file` of a set named as DLIO names it:
 * itself in index order, else its place in name order; with one folder
 * that is itself too (and sb_dataset_index_at's four divisions are a good
 * part of a synthetic read's cost). */
static inline uint64_t
s_dlio_index (const s_set_t *set, uint64_t file)
{
    return set->catalog_names == 2 || set->ds.subfolders <= 1 ? file : sb_dataset_index_at (&set->ds, file);
}

/* The read of position p of rank r: 0 with *rd set, 1 when its catalog
 * entry has not arrived, -1 when the rank failed (reported). */
static int
s_read_at (sb_trainer_t *self, s_rank_t *r, uint64_t p, s_read_t *rd)
{
    char text[PATH_MAX + 512];
    if (sb_sampler_at (self->set->sampler, r->rank, p, &rd->ref) != 0) {
        snprintf (text, sizeof text, "the sampler has no position %llu for rank %llu in epoch %llu",
                  (unsigned long long) p, (unsigned long long) r->rank, (unsigned long long) self->epoch);
        s_fail (self, r, "sampler", NULL, 0, text, NULL);
        return -1;
    }
    uint64_t file = rd->ref.file;
    rd->stored = NULL;
    rd->dlio = SB_NO_DLIO_INDEX;
    if (!self->set->asking) {
        if (file >= self->set->ds.files) {
            snprintf (text, sizeof text, "the sampler chose catalog object %llu of a dataset of %llu",
                      (unsigned long long) file, (unsigned long long) self->set->ds.files);
            s_fail (self, r, "sampler", NULL, 0, text, NULL);
            return -1;
        }
        rd->dlio = s_dlio_index (self->set, file);
        rd->size = SB_SIZE_UNKNOWN;
        if (self->set->catalog_sizes == 1 && s_generator_size (self, file, rd->dlio, &rd->size, text, sizeof text) != 0) {
            s_fail (self, r, "size", NULL, 0, text, NULL);
            return -1;
        }
    }
    else {
        int rc = sb_entries_get (self->entries, file, &rd->size, &rd->dlio, &rd->stored);
        if (rc == 1)
            return 1;
        if (rc < 0) {
            snprintf (text, sizeof text, "rank %llu reads catalog object %llu, which was not asked for",
                      (unsigned long long) r->rank, (unsigned long long) file);
            s_fail (self, r, "sampler", NULL, 0, text, NULL);
            return -1;
        }
        if (self->set->catalog_names && file < self->set->ds.files)
            rd->dlio = s_dlio_index (self->set, file);
    }
    char key[PATH_MAX];     /* not `= ""`: that zeroes 4 KiB for every read (most of a small read's cost) */
    key[0] = '\0';
    if (rd->size != SB_SIZE_UNKNOWN && rd->size < self->set->ds.samples_per_file
        && s_key (self, rd->stored, rd->dlio, key, sizeof key) != 0)
        snprintf (key, sizeof key, "#%llu", (unsigned long long) file);
    if (sb_sample_range (&self->ranger, &self->set->ds, rd->size, rd->dlio, rd->ref.sample, key, &rd->offset,
                         &rd->length, &rd->run_end, &rd->group, text, sizeof text) != 0) {
        s_fail (self, r, "size", key, 0, text, NULL);
        return -1;
    }
    if (self->tf_mode == SB_TF_WHOLE_FILE) {
        /* DLIO's npz reader reads each file of its thread once, whole
         * (length 0 when the size is unknown: the whole object) */
        rd->offset = 0;
        rd->length = rd->size == SB_SIZE_UNKNOWN ? 0 : rd->size;
        rd->run_end = rd->ref.sample + 1;
        rd->group = 1;
    }
    return 0;
}

/* 1 when position p of rank r reads sample `sample` of `file`. */
static int
s_reads (const sb_trainer_t *self, const s_rank_t *r, uint64_t p, uint64_t file, uint64_t sample)
{
    sb_sample_ref_t ref;
    return sb_sampler_at (self->set->sampler, r->rank, p, &ref) == 0 && ref.file == file && ref.sample == sample;
}

/* How many positions from p (at most max) read samples ref.sample,
 * ref.sample + 1, ... of ref.file. Only for samplers where, within a batch,
 * positions read a file's samples in order and a file never comes back
 * (monotone): then the property holds for a prefix, found by bisection. */
static uint64_t
s_run (const sb_trainer_t *self, const s_rank_t *r, uint64_t p, const sb_sample_ref_t *ref, uint64_t max)
{
    uint64_t bs = self->set->batch_size, batch_end = (p / bs + 1) * bs;
    if (max > batch_end - p)
        max = batch_end - p;
    if (max <= 1 || !self->set->monotone)
        return 1;
    if (s_reads (self, r, p + max - 1, ref->file, ref->sample + max - 1))
        return max;
    uint64_t good = 1, bad = max;     /* counts: `good` positions read in order, `bad` do not */
    while (bad - good > 1) {
        uint64_t mid = good + (bad - good) / 2;
        if (s_reads (self, r, p + mid - 1, ref->file, ref->sample + mid - 1))
            good = mid;
        else
            bad = mid;
    }
    return good;
}

/* ------------------------------------------------------------ completions */

static void
s_trace_line (sb_trainer_t *self, s_rank_t *r, int serves, uint64_t position, uint64_t file, uint64_t sample,
              const char *stored, uint64_t dlio, uint64_t offset, uint64_t length, double start, uint64_t latency_us,
              uint64_t bytes)
{
    if (!self->trace || self->failed)
        return;
    char key[PATH_MAX], err[PATH_MAX + 128];
    if (s_key (self, stored, dlio, key, sizeof key) != 0)
        snprintf (key, sizeof key, "#%llu", (unsigned long long) file);
    sb_trace_line_t line = {
        .rank = r->rank, .epoch = self->epoch, .step = position / self->set->batch_size, .position = position,
        .file = file, .sample = sample, .key = key, .offset = offset, .length = length, .start_s = start,
        .latency_us = latency_us, .bytes = bytes, .no_sample = !serves,
    };
    if (sb_trace_write (self->trace, &line, err, sizeof err) != 0)
        s_fail (self, r, "trace", NULL, errno, err, NULL);
}

static void
s_trace (sb_trainer_t *self, s_rank_t *r, uint64_t position, uint64_t file, uint64_t sample, const char *stored,
         uint64_t dlio, uint64_t offset, uint64_t length, double start, uint64_t latency_us, uint64_t bytes)
{
    s_trace_line (self, r, 1, position, file, sample, stored, dlio, offset, length, start, latency_us, bytes);
}

/* The read of `count` positions of rank r is in: it took latency_ns and
 * brought `bytes` (0 for samples of a row group already in). */
static void
s_count_read (s_rank_t *r, uint64_t count, uint64_t bytes, uint64_t latency_ns, int read)
{
    r->bytes += bytes;
    r->interval.bytes += bytes;
    r->interval.reads += (uint64_t) read;
    r->interval.read_ns += latency_ns;
    r->read_latency.counts[sb_histogram_bin (latency_ns / 1000)] += count;
    r->read_latency.total += count;
}

/* Batch q of rank r: one of its samples came in at `at`. */
static void
s_batch_in_at (const sb_trainer_t *self, s_rank_t *r, uint64_t q, double at)
{
    double *b = &r->batch_at[q % (self->nslots + 1)];
    if (at > *b)
        *b = at;
}

/* `count` positions of rank r joined their batches at `at`. Where a batch
 * is in once the count covers it (row groups, s_batch_in), it came in at
 * the latest time of the counts so far, not the one that crossed (reads
 * are taken out of their engines' order); else its own reads' latest
 * time says (s_complete, s_read_free). */
static void
s_count_samples (const sb_trainer_t *self, s_rank_t *r, uint64_t count, double at)
{
    const uint64_t bs = self->set->batch_size;
    if (at > r->count_at)
        r->count_at = at;
    for (uint64_t q = r->completed / bs; self->grouped && bs > 0 && (q + 1) * bs <= r->completed + count; q++)
        s_batch_in_at (self, r, q, r->count_at);
    r->completed += count;
    r->interval.samples += count;
}

/* Both: the positions are in with their read (no preprocess). */
static void
s_count (const sb_trainer_t *self, s_rank_t *r, uint64_t count, uint64_t bytes, uint64_t latency_ns, int read,
         double at)
{
    s_count_samples (self, r, count, at);
    s_count_read (r, count, bytes, latency_ns, read);
}

/* The read in slot i of rank r completed; the engine issued it at `issued`
 * (Unix seconds) and it took latency_ns from there. */
static void
s_complete (sb_trainer_t *self, s_rank_t *r, size_t i, uint64_t bytes, uint64_t latency_ns, double issued)
{
    s_slot_t *s = &r->slots[i];
    double done = issued + (double) latency_ns / 1e9;   /* the engine's own clock, not when the loop took it */
    if (s->footer_of)   /* the loader thread's next footer read may go */
        r->ff_busy[s->footer_of - 1]--;
    if (s->loader) {    /* its samples join the batch after their preprocess */
        s_count_read (r, s->count, bytes, latency_ns, 1);
        r->loaders[s->loader - 1].state = S_LOADER_ARRIVED;
    }
    else
        s_count (self, r, s->count, bytes, latency_ns, 1, done);
    if (s->in_batch) {
        r->batch_pending[(s->position / self->set->batch_size) % (self->nslots + 1)]--;
        s_batch_in_at (self, r, s->position / self->set->batch_size, done);
    }
    /* the read's line starts when the engine issued it, so that the reads
     * in flight at any moment can be counted from the trace */
    if (s->eager && r->tf)  /* positions served from it later carry it in the trace */
        sb_tf_plan_done (r->tf, s->eager - 1, s->file, s->offset, s->length, bytes, latency_ns / 1000, issued);
    if (s->run > 0)
        s_trace (self, r, s->position, s->file, s->sample, s->stored, s->dlio, s->offset, s->length, issued,
                 latency_ns / 1000, bytes);
    else if (!s->eager)     /* a parquet footer read serves no sample: no step nor position */
        s_trace_line (self, r, 0, 0, s->file, 0, s->stored, s->dlio, s->offset, s->length, issued, latency_ns / 1000,
                      bytes);
    for (uint64_t j = 1; self->trace && j < s->run; j++)
        s_trace (self, r, s->position + j, s->file, s->sample + j, s->stored, s->dlio, s->offset, s->length,
                 issued + (double) latency_ns / 1e9, 0, 0);
    s->seq = 0;
    r->free_slots[r->nfree++] = (uint32_t) i;
}


/* SB_READ_EVICT for the epoch's first read of file on this worker (drop_page_cache), else 0. */
static unsigned
s_evict_flag (sb_trainer_t *self, uint64_t file)
{
    if (!self->set->touched || file >= self->set->listed || (self->set->touched[file / 8] & (1u << (file % 8))))
        return 0;
    self->set->touched[file / 8] |= (uint8_t) (1u << (file % 8));
    return SB_READ_EVICT;
}

/* Hand slot i's read of [offset, +length) of `name` (NULL: the engine
 * names no object) to loader thread lane's queue, with the epoch's evict
 * flag of `file` and `flags`; a synthetic read completes at once. Returns
 * 0, or -1 when the reader refused it (the run failed). */
static int
s_submit_slot (sb_trainer_t *self, s_rank_t *r, size_t i, const char *name, uint64_t offset, uint64_t length,
               uint64_t lane, uint64_t file, unsigned flags, double now)
{
    if (sb_reader_submit (r->reader, name, offset, length, i, lane, s_evict_flag (self, file) | flags) != 0) {
        s_fail (self, r, "read", name, errno, "cannot queue a read", NULL);
        return -1;
    }
    uint64_t bytes = 0;
    if (sb_reader_take_inline (r->reader, &bytes))  /* synthetic: done, in no time */
        s_complete (self, r, i, bytes, 0, now);
    return 0;
}

/* ------------------------------------------------------------ epochs */

static int s_footers_plan (sb_trainer_t *self, s_rank_t *r, char *err, size_t err_size);

static int
s_build_sampler (sb_trainer_t *self, const sb_msg_phase_start_t *ps, char *err, size_t err_size)
{
    const sb_msg_welcome_t *c = self->cfg;
    int eval = self->set == &self->sets[S_SET_EVAL];
    /* the evaluation set is sampled as DLIO samples it: the training set's
     * rules over its own files and batch, with no step limit */
    sb_sampler_cfg_t sc = {
        .listed = ps->listed, .expected = eval ? c->eval_files : c->expected, .samples_per_file = c->samples_per_file,
        .ranks = c->total_ranks, .batch_size = self->set->batch_size, .threads = self->threads, .seed = c->seed,
        .sample_shuffle = (sb_shuffle_t) c->sample_shuffle, .file_shuffle = (sb_shuffle_t) c->file_shuffle,
        .seed_change_epoch = (int) c->seed_change_epoch, .max_steps = eval ? 0 : c->max_steps,
        .first_rank = c->first_rank, .nranks = c->ranks,
    };
    if (sb_sampler_kind_parse (c->sampler, &sc.kind) != 0) {
        snprintf (err, err_size, "WELCOME names an unknown sampler '%.64s'", c->sampler ? c->sampler : "");
        return -1;
    }
    /* file_shuffle: the coordinator plans every rank's lists (DLIO's
     * reshard needs them all) and this worker asks for the pages of its
     * ranks' that its next reads need (lists.h). Not where every file of
     * the epoch is wanted at its start: entries asked of the coordinator,
     * parquet footers first; nor for the evaluation set (the coordinator
     * plans the training set's). */
    int names = ps->catalog_names == 1 || ps->catalog_names == 2;
    sc.served = !eval && sc.kind != SB_SAMPLER_GLOBAL && sc.file_shuffle != SB_SHUFFLE_OFF
        && names && ps->catalog_sizes != 0 && !self->footers_first;
    if (!(self->set->sampler = sb_sampler_new (&sc, err, err_size)))
        return -1;
    int in_order = sc.sample_shuffle == SB_SHUFFLE_OFF;
    self->set->monotone = sc.kind == SB_SAMPLER_DLIO_INDEX || sc.kind == SB_SAMPLER_DLIO_FILES
        || ((sc.kind == SB_SAMPLER_GLOBAL || sc.kind == SB_SAMPLER_DLIO_ITERATIVE) && in_order);
    self->set->listed = ps->listed;
    self->set->catalog_names = ps->catalog_names == 1 || ps->catalog_names == 2 ? (int) ps->catalog_names : 0;
    self->set->catalog_sizes = (int) ps->catalog_sizes;
    self->set->asking = !(self->set->catalog_names && self->set->catalog_sizes != 0);
    /* synthetic sizes are the generator's, which with no size spread are the
     * same for every object: worked out once, not once a read */
    self->set->same_size = 0;
    if ((self->storage_caps & SB_ENGINE_NO_IO) && self->set->catalog_sizes == 1 && self->set->ds.record_stdev == 0)
        self->set->same_size = sb_dataset_object_size (&self->set->ds, 0);
    if (!self->set->asking && self->set->listed != self->set->ds.files) {
        snprintf (err, err_size, "the coordinator says the catalog of %llu objects is DLIO-named, but the run's"
                  " naming has %llu", (unsigned long long) self->set->listed, (unsigned long long) self->set->ds.files);
        return -1;
    }
    return 0;
}

/* The files this worker's ranks read this epoch, in about the order they
 * are first needed, for the entries to ask. */
static int
s_list_wanted (sb_trainer_t *self, char *err, size_t err_size)
{
    sb_entries_reset (self->entries, self->epoch);
    uint64_t bs = self->set->batch_size;
    for (uint64_t q = 0; q * bs < self->k; q++)
        for (size_t i = 0; i < self->nranks; i++) {
            s_rank_t *r = &self->ranks[i];
            for (uint64_t p = q * bs; p < (q + 1) * bs && p < self->k;) {
                sb_sample_ref_t ref;
                if (sb_sampler_at (self->set->sampler, r->rank, p, &ref) != 0) {
                    snprintf (err, err_size, "the sampler has no position %llu for rank %llu",
                              (unsigned long long) p, (unsigned long long) r->rank);
                    return -1;
                }
                if (sb_entries_want (self->entries, ref.file) != 0) {
                    snprintf (err, err_size, "out of memory listing the files of epoch %llu",
                              (unsigned long long) self->epoch);
                    return -1;
                }
                p += s_run (self, r, p, &ref, self->set->ds.samples_per_file - ref.sample);
            }
        }
    return 0;
}

/* keep the epoch's checkpoint schedule and files (a
 * copy of ps, through the codec). Returns 0 or -1 (reported). */
static int
s_ckpt_keep (sb_trainer_t *self, const sb_msg_phase_start_t *ps)
{
    for (size_t i = 0; i < self->nranks; i++)   /* none is left from a failed epoch */
        sb_ckpt_job_finish (&self->ranks[i].ckpt_job, 1, NULL);
    sb_proto_fini (&self->ckpt_ps);
    if (ps->ckpt_steps.count == 0)
        return 0;
    /* outside input: the steps a rank saves after, from 1, ascending */
    for (size_t i = 0; i < ps->ckpt_steps.count; i++)
        if (ps->ckpt_steps.items[i] == 0 || (i && ps->ckpt_steps.items[i] <= ps->ckpt_steps.items[i - 1])) {
            s_fail (self, NULL, "protocol", NULL, 0, "PHASE_START ckpt_steps are not ascending steps from 1", NULL);
            return -1;
        }
    sb_msg_t m = { .type = SB_MSG_PHASE_START };
    m.u.phase_start = *ps;
    uint8_t *data = NULL;
    size_t size = 0;
    char why[256] = "out of memory";
    if (sb_proto_encode (&m, &data, &size) != 0
        || sb_proto_decode (data, size, &self->ckpt_ps, why, sizeof why, NULL) != SB_PROTO_OK) {
        free (data);
        s_fail (self, NULL, "checkpoint", NULL, ENOMEM, why, NULL);
        return -1;
    }
    free (data);
    return 0;
}

/* rank r finished step r->step (1-based count): start the
 * checkpoint DLIO writes after it, if any (PHASE_START ckpt_steps). */
static void
s_ckpt_after_step (sb_trainer_t *self, s_rank_t *r)
{
    const sb_msg_phase_start_t *ps = &self->ckpt_ps.u.phase_start;
    if (self->ckpt_ps.type != SB_MSG_PHASE_START || r->ckpt_next >= ps->ckpt_steps.count)
        return;
    uint64_t name = ps->ckpt_steps.items[r->ckpt_next], after = name < self->batches ? name : self->batches;
    if (after != r->step)
        return;
    char err[512];
    if (!(r->ckpt_job = sb_ckpt_job_start (self->cfg, self->storage, r->rank, ps, self->epoch, name, err,
                                           sizeof err)))
        s_fail (self, r, "checkpoint", NULL, 0, err, NULL);
}

/* rank r's checkpoint finished: report it (CKPT_DONE) and
 * go on from the save's end, the checkpoint's time out of DLIO's metrics.
 * Returns that end (now, or later when the save ended after now was read). */
static double
s_ckpt_done (sb_trainer_t *self, s_rank_t *r, double now)
{
    const sb_msg_phase_start_t *ps = &self->ckpt_ps.u.phase_start;
    sb_ckpt_result_t res;
    sb_ckpt_job_finish (&r->ckpt_job, 0, &res);
    if (res.failed) {
        s_fail (self, r, res.op, res.target[0] ? res.target : NULL, res.errno_val, res.message, NULL);
        return now;
    }
    sb_msg_t m = { .type = SB_MSG_CKPT_DONE };
    m.u.ckpt_done = (sb_msg_ckpt_done_t) { .rank = r->rank, .epoch = self->epoch,
                                           .checkpoint = ps->checkpoint + r->ckpt_next,
                                           .step = ps->ckpt_steps.items[r->ckpt_next], .files = res.files,
                                           .bytes = res.bytes, .started_at = res.started_at,
                                           .finished_at = res.finished_at };
    r->ckpt_next++;
    /* now was read before this pump pass, the save's clock on its own
     * thread: a save that began and ended within the pass ends after now */
    double end = now > res.finished_at ? now : res.finished_at;
    r->ckpt_s += end - res.started_at;
    r->load_since = end;    /* DLIO: the next block starts after the save */
    r->free_at = end;
    if (self->out.fn (self->out.ctx, &m) != 0)
        self->failed = 1;
    return end;
}

static int s_start_epoch (sb_trainer_t *self, const sb_msg_phase_start_t *ps);

/* The thread that prepares the set's sampler for the phase of prep_ps: it
 * touches the sampler and the set's catalog fields only, which nothing else
 * reads until s_prepared has joined it. */
static void *
s_prepare (void *arg)
{
    sb_trainer_t *self = arg;
    const sb_msg_phase_start_t *ps = &self->prep_ps.u.phase_start;
    s_set_t *set = self->set;
    int rc = 0;
    if (!set->sampler && s_build_sampler (self, ps, self->prep_err, sizeof self->prep_err) != 0)
        rc = -1;
    while (rc == 0 && set->prepared < ps->epoch)
        if (sb_sampler_epoch (set->sampler, ++set->prepared, self->prep_err, sizeof self->prep_err) != 0)
            rc = -1;
    self->prep_rc = rc;
    atomic_store (&self->prep_done, 1);
    uint64_t one = 1;
    if (write (self->prep_fd, &one, sizeof one) != (ssize_t) sizeof one) {
        /* the counter cannot overflow at one write an epoch: nothing to do,
         * the loop looks at prep_done at its next turn anyway */
    }
    return NULL;
}

/* With an epoch being prepared: 1 while it is, else (joined) 0 after the
 * epoch started, or failed (reported). */
static int
s_prepared (sb_trainer_t *self)
{
    if (!atomic_load (&self->prep_done))
        return 1;
    uint64_t count;
    if (read (self->prep_fd, &count, sizeof count) < 0 && errno != EAGAIN)
        sb_warn ("trainer: reading its eventfd: %s", strerror (errno));
    pthread_join (self->prep_thread, NULL);
    self->preparing = 0;
    if (!self->failed) {
        if (self->prep_rc != 0)
            s_fail (self, NULL, "sampler", NULL, 0, self->prep_err, NULL);
        else
            (void) s_start_epoch (self, &self->prep_ps.u.phase_start);
    }
    sb_proto_fini (&self->prep_ps);
    return 0;
}

int
sb_trainer_start (sb_trainer_t *self, const sb_msg_phase_start_t *ps)
{
    char err[1024];
    if (self->running > 0 && !self->failed) {
        s_fail (self, NULL, "protocol", NULL, 0, "a training phase started while one is running", NULL);
        return -1;
    }
    const sb_msg_welcome_t *c = self->cfg;
    self->failed = 0;
    s_set_t *set = &self->sets[strcmp (ps->phase, "eval") == 0 ? S_SET_EVAL : S_SET_TRAIN];
    if (set == &self->sets[S_SET_EVAL] && c->eval_files == 0) {
        s_fail (self, NULL, "protocol", NULL, 0, "an evaluation phase started, and WELCOME gave no evaluation set", NULL);
        return -1;
    }
    if (set != self->set) {     /* the engines read the other set's names and sizes from now on */
        self->set = set;
        for (size_t i = 0; i < self->nranks; i++)
            if (sb_reader_set_dataset (self->ranks[i].reader, &set->ds, err, sizeof err) != 0) {
                s_fail (self, &self->ranks[i], "dataset", NULL, 0, err, NULL);
                return -1;
            }
    }
    /* epochs come in order; the evaluation set's skips those without an
     * evaluation, and its sampler goes through them (DLIO reshuffles both sets every epoch) */
    if (ps->epoch <= set->prepared) {
        snprintf (err, sizeof err, "%s phase of epoch %llu after epoch %llu", ps->phase, (unsigned long long) ps->epoch,
                  (unsigned long long) set->prepared);
        s_fail (self, NULL, "sampler", NULL, 0, err, NULL);
        return -1;
    }
    if (self->preparing) {
        s_fail (self, NULL, "protocol", NULL, 0, "a training phase started while the last one was being prepared",
                NULL);
        return -1;
    }
    /* the sampler is prepared on its thread; s_prepared starts the epoch */
    sb_msg_t m = { .type = SB_MSG_PHASE_START };
    m.u.phase_start = *ps;
    uint8_t *data = NULL;
    size_t size = 0;
    char why[256] = "out of memory";
    sb_proto_fini (&self->prep_ps);
    if (sb_proto_encode (&m, &data, &size) != 0
        || sb_proto_decode (data, size, &self->prep_ps, why, sizeof why, NULL) != SB_PROTO_OK) {
        free (data);
        s_fail (self, NULL, "sampler", NULL, ENOMEM, why, NULL);
        return -1;
    }
    free (data);
    atomic_store (&self->prep_done, 0);
    int rc = pthread_create (&self->prep_thread, NULL, s_prepare, self);
    if (rc != 0) {
        snprintf (err, sizeof err, "cannot start the thread that prepares epoch %llu: %s",
                  (unsigned long long) ps->epoch, strerror (rc));
        s_fail (self, NULL, "sampler", NULL, rc, err, NULL);
        return -1;
    }
    self->preparing = 1;
    return 0;
}

/* The prepared epoch's sampler agrees with the coordinator: start it. */
static int
s_start_epoch (sb_trainer_t *self, const sb_msg_phase_start_t *ps)
{
    char err[1024];
    const sb_msg_welcome_t *c = self->cfg;
    s_set_t *set = self->set;
    const sb_sampler_epoch_t *info = sb_sampler_info (self->set->sampler);
    if (info->steps != ps->batches || info->samples_per_rank != ps->samples_per_rank) {
        snprintf (err, sizeof err, "epoch %llu: this worker's sampler gives %llu steps of %llu samples per rank, the"
                  " coordinator's %llu of %llu", (unsigned long long) ps->epoch, (unsigned long long) info->steps,
                  (unsigned long long) info->samples_per_rank, (unsigned long long) ps->batches,
                  (unsigned long long) ps->samples_per_rank);
        s_fail (self, NULL, "sampler", NULL, 0, err, NULL);
        return -1;
    }
    /* every file's first read this epoch drops its pages (a bit per catalog
     * file; synthetic storage has no pages to drop, and no bits) */
    if (c->drop_page_cache && !c->odirect && !(self->storage_caps & SB_ENGINE_NO_IO)) {
        size_t bytes = (size_t) (self->set->listed / 8 + 1);
        if (!self->set->touched && !(self->set->touched = malloc (bytes))) {
            s_fail (self, NULL, "memory", NULL, ENOMEM, "out of memory for the page-cache drop's file bits", NULL);
            return -1;
        }
        memset (self->set->touched, 0, bytes);
    }
    if (strcmp (c->format, "parquet") == 0) {    /* DLIO reads each file's footer once an epoch */
        size_t bytes = (size_t) (self->set->listed / 8 + 1);
        if (!self->set->footered && !(self->set->footered = malloc (bytes))) {
            s_fail (self, NULL, "memory", NULL, ENOMEM, "out of memory for the parquet footers' file bits", NULL);
            return -1;
        }
        /* s3dlio keeps the footers it read for the rest of the run: read once */
        memset (self->set->footered, self->footer_tail && self->set->footers_kept ? 0xff : 0, bytes);
    }
    if (s_ckpt_keep (self, ps) != 0)
        return -1;
    self->epoch = ps->epoch;
    self->k = ps->samples_per_rank;
    self->batches = ps->batches;
    self->window = (c->prefetch_size + 1) * set->batch_size;
    if (self->preprocessing || self->loader_lanes)
        self->window = s_window (c->prefetch_size, self->threads, set->batch_size);
    if (self->depth) {
        /* DLIO's iterable readers read ahead as far as their reads in
         * flight reach, not prefetch_size batches: the window holds twice
         * the rank's depth of reads (a row group's rows each) and a batch */
        uint64_t per_read = 1;
        if (strcmp (c->format, "parquet") == 0)
            per_read = set->ds.parquet_row_group && set->ds.parquet_row_group < set->ds.samples_per_file
                       ? set->ds.parquet_row_group * (set->ds.parquet_coalesce ? set->ds.parquet_coalesce : 1)
                       : set->ds.samples_per_file;
        uint64_t reach = 2 * (uint64_t) self->depth * (per_read ? per_read : 1) + set->batch_size;
        if (self->window < reach)
            self->window = reach;
    }
    self->step_sync = set->step_sync;
    self->local_barrier = c->ranks == c->total_ranks;
    self->barrier_step = 0;
    self->barrier_last = 0;
    self->arrivals = 0;
    self->awaiting_go = 0;
    sb_histogram_reset (&self->barrier_own);
    self->running = self->nranks;
    sb_dlio_window (set->metric_steps, c->metric_exclude_start, c->metric_exclude_end, self->batches, &self->metric);
    double now = sb_now ();
    for (size_t i = 0; i < self->nranks; i++) {
        s_rank_t *r = &self->ranks[i];
        s_rank_t keep = *r;
        memset (r, 0, sizeof *r);
        r->rank = keep.rank;
        r->reader = keep.reader;
        r->slots = keep.slots;
        r->free_slots = keep.free_slots;
        r->groups = keep.groups;
        r->loaders = keep.loaders;
        r->batch_pending = keep.batch_pending;
        r->batch_at = keep.batch_at;
        r->ff = keep.ff;
        r->ff_start = keep.ff_start;
        r->ff_at = keep.ff_at;
        r->ff_range = keep.ff_range;
        r->ff_busy = keep.ff_busy;
        r->held = keep.held;
        r->held_cap = keep.held_cap;
        r->tf = keep.tf;
        r->tf_files = keep.tf_files;
        if (r->tf) {    /* DLIO's loader makes each thread's reader afresh every epoch */
            sb_tf_plan_reset (r->tf);
            memset (r->tf_files, 0, (size_t) self->threads * sizeof *r->tf_files);
        }
        memset (r->loaders, 0, (size_t) self->threads * sizeof *r->loaders);
        memset (r->batch_pending, 0, (self->nslots + 1) * sizeof *r->batch_pending);
        memset (r->batch_at, 0, (self->nslots + 1) * sizeof *r->batch_at);
        memset (r->slots, 0, self->nslots * sizeof *r->slots);
        memset (r->groups, 0, ((size_t) self->threads + 1) * sizeof *r->groups);
        for (size_t j = 0; j < self->nslots; j++)
            r->free_slots[j] = (uint32_t) (self->nslots - 1 - j);
        r->nfree = self->nslots;
        r->running = 1;
        r->started = now;
        r->load_since = now;
        r->free_at = now;
        r->interval.next = now + 1.0;
    }
    if (sb_sampler_served (set->sampler))  /* pages for the window and 4 pages of files further */
        sb_lists_reset (self->lists, self->epoch, self->k, set->batch_size,
                        self->window + 2 * set->batch_size
                            + 4 * sb_sampler_page_size (set->sampler) * set->ds.samples_per_file);
    if (self->set->asking && s_list_wanted (self, err, sizeof err) != 0) {
        s_fail (self, NULL, "sampler", NULL, 0, err, NULL);
        return -1;
    }
    for (size_t i = 0; self->stagger_s > 0 && i < self->nranks; i++) {
        s_rank_t *r = &self->ranks[i];
        size_t cap = (size_t) (self->window + set->batch_size);   /* positions the window can hold back */
        if (r->held_cap < cap) {
            uint64_t *h = realloc (r->held, cap * sizeof *h);
            if (!h) {
                s_fail (self, r, "memory", NULL, ENOMEM, "out of memory for the staggered loader threads", NULL);
                return -1;
            }
            r->held = h;
            r->held_cap = cap;
        }
    }
    for (size_t i = 0; i < self->nranks; i++)
        if (s_footers_plan (self, &self->ranks[i], err, sizeof err) != 0) {
            if (!self->failed)
                s_fail (self, &self->ranks[i], "sampler", NULL, 0, err, NULL);
            return -1;
        }
    if (self->footer_tail && self->footers_first && !self->set->asking)
        self->set->footers_kept = 1;
    return 0;
}


/* Every local rank waiting at step `step` goes on. */
static void
s_release (sb_trainer_t *self, uint64_t step, double now)
{
    for (size_t i = 0; i < self->nranks; i++) {
        s_rank_t *r = &self->ranks[i];
        if (!r->waiting_go || r->step != step)
            continue;
        r->barrier += now - r->barrier_since;
        r->interval.barrier_ns += (uint64_t) ((now - r->barrier_since) * 1e9);
        sb_histogram_add (&r->barrier_latency, (uint64_t) ((now - r->barrier_since) * 1e6));
        if (r->step == 0)
            r->first_step_end = now;
        r->waiting_go = 0;
        r->step++;
        r->load_since = now;    /* DLIO's next step loads from its release */
        r->free_at = now;
        self->released = 1;
        s_ckpt_after_step (self, r);
    }
}

static void
s_on_go (sb_trainer_t *self, const sb_msg_go_t *go)
{
    if (!self->step_sync || self->local_barrier || go->epoch != self->epoch || go->step + 1 != self->barrier_step) {
        char text[256];
        snprintf (text, sizeof text, "GO for step %llu of epoch %llu out of order (training epoch %llu, last barrier"
                  " reached: %llu)", (unsigned long long) go->step, (unsigned long long) go->epoch,
                  (unsigned long long) self->epoch, (unsigned long long) self->barrier_step);
        s_fail (self, NULL, "protocol", NULL, 0, text, NULL);
        return;
    }
    double now = sb_now ();
    self->awaiting_go = 0;
    if (go->worker == self->cfg->worker)     /* this worker's STEP completed the barrier */
        sb_histogram_add (&self->barrier_own, (uint64_t) ((now - self->step_sent_at) * 1e6));
    s_release (self, go->step, now);
}

static void
s_on_entries (sb_trainer_t *self, sb_msg_entries_t *m)
{
    char err[PATH_MAX + 256], text[PATH_MAX + 300], span[64];
    const char *bad_name = NULL;
    if (!self->set->asking || self->running == 0) {
        snprintf (err, sizeof err, "ENTRIES page %llu of epoch %llu came unasked", (unsigned long long) m->seq,
                  (unsigned long long) m->epoch);
        s_fail (self, NULL, "protocol", NULL, 0, err, NULL);
        return;
    }
    if (sb_entries_on_page (self->entries, m, !self->set->catalog_names, &bad_name, err, sizeof err) == 0)
        return;
    if (self->nranks == 1)
        snprintf (span, sizeof span, "rank %llu", (unsigned long long) self->cfg->first_rank);
    else
        snprintf (span, sizeof span, "ranks %llu-%llu", (unsigned long long) self->cfg->first_rank,
                  (unsigned long long) (self->cfg->first_rank + self->nranks - 1));
    snprintf (text, sizeof text, "%s: %s", span, err);
    s_fail (self, NULL, bad_name ? "name" : "protocol", bad_name, 0, text, NULL);
}

/* A page of a rank's file list (the training set's served sampler; a page
 * of an epoch that is over is dropped by the lists). */
static void
s_on_list (sb_trainer_t *self, const sb_msg_list_t *m)
{
    char err[256] = "this worker's sampler has no served lists";
    /* a phase being prepared began after the lists' epoch ended: its pages
     * are of no use, and the sampler belongs to the preparing thread */
    if (self->preparing)
        return;
    sb_sampler_t *train = self->sets[S_SET_TRAIN].sampler;
    if (!sb_sampler_served (train)
        || sb_lists_on_page (self->lists, train, m, self->cfg->first_rank, err, sizeof err) != 0) {
        char text[320];
        snprintf (text, sizeof text, "LIST page %llu of rank %llu, epoch %llu: %s", (unsigned long long) m->page,
                  (unsigned long long) m->rank, (unsigned long long) m->epoch, err);
        s_fail (self, NULL, "protocol", NULL, 0, text, NULL);
    }
}

/* The lowest position rank r may still read: its batch being computed or
 * waited for, and with loader threads the lowest a thread is at. */
static uint64_t
s_low_water (const sb_trainer_t *self, const s_rank_t *r)
{
    uint64_t low = r->step * self->set->batch_size;
    for (uint64_t t = 0; self->preprocessing && t < self->threads; t++)
        if (r->loaders[t].at < low)
            low = r->loaders[t].at;
    return low;
}

void
sb_trainer_on_message (sb_trainer_t *self, sb_msg_t *msg)
{
    if (self->failed)
        return;
    if (msg->type == SB_MSG_ENTRIES)
        s_on_entries (self, &msg->u.entries);
    else if (msg->type == SB_MSG_LIST)
        s_on_list (self, &msg->u.list);
    else if (msg->type == SB_MSG_GO)
        s_on_go (self, &msg->u.go);
}

/* The rank computed its batch: count the compute, then wait at the barrier
 * (sync step; the worker's STEP goes when its last rank arrives, or, when
 * every rank of the run is here, the worker releases them itself) or go on. */
static void
s_end_compute (sb_trainer_t *self, s_rank_t *r, double now)
{
    /* the compute lasted computation_time: it ended at its deadline, however
     * late the loop came to it (that lateness is the worker's, not compute,
     * so it must not raise AU; from here it counts as barrier or I/O wait) */
    double spent = 0;
    if (r->computing) {
        spent = r->compute_length;
        now = r->compute_until;
    }
    r->computing = 0;
    r->interval.compute_ns += (uint64_t) (spent * 1e9);
    r->compute_all += spent;
    if (r->step > 0)
        r->compute_after_first += spent;
    /* DLIO's sums: proc[:S] and proc[N-E:] are subtracted (a step in both, twice, as
     * DLIO does; its window is then empty), compute[S:N-E] counted */
    double proc = now - r->load_since;
    if (r->step < self->metric.head_end) {
        r->head_proc += proc;
        r->interval.excluded_ns += (uint64_t) (proc * 1e9);
    }
    if (r->step >= self->metric.tail_start) {
        r->tail_proc += proc;
        r->interval.excluded_ns += (uint64_t) (proc * 1e9);
    }
    if (sb_dlio_in_window (&self->metric, r->step)) {
        r->metric_compute += spent;
        r->metric_steps++;
        r->interval.metric_compute_ns += (uint64_t) (spent * 1e9);
    }
    r->interval.steps++;
    if (!self->step_sync) {
        if (r->step == 0)
            r->first_step_end = now;
        r->step++;
        r->load_since = now;
        r->free_at = now;
        s_ckpt_after_step (self, r);
        return;
    }
    r->waiting_go = 1;
    r->barrier_since = now;
    if (now > self->barrier_last)
        self->barrier_last = now;
    if (r->step != self->barrier_step) {
        char text[256];
        snprintf (text, sizeof text, "rank reached step %llu while the worker is at step %llu",
                  (unsigned long long) r->step, (unsigned long long) self->barrier_step);
        s_fail (self, r, "protocol", NULL, 0, text, NULL);
        return;
    }
    if (++self->arrivals < self->nranks)
        return;
    self->arrivals = 0;
    uint64_t step = self->barrier_step++;
    double last = self->barrier_last;
    self->barrier_last = 0;
    if (self->local_barrier) {
        /* its own cost: from the last arrival (the latest compute deadline)
         * to when the loop released the ranks. They go on from that
         * deadline: a real barrier releases when its last rank arrives;
         * the loop's late wake-up is the emulator's, not a wait of theirs */
        double released = sb_now ();
        sb_histogram_add (&self->barrier_own, (uint64_t) ((released > last ? released - last : 0) * 1e6));
        s_release (self, step, last < released ? last : released);
        return;
    }
    sb_msg_t m = { .type = SB_MSG_STEP };
    m.u.step.epoch = self->epoch;
    m.u.step.step = step;
    self->step_sent_at = sb_now ();
    self->awaiting_go = 1;
    if (self->out.fn (self->out.ctx, &m) != 0)
        self->failed = 1;
}

double
sb_trainer_awaiting_go_since (const sb_trainer_t *self)
{
    return self->awaiting_go && !self->failed && self->running > 0 ? self->step_sent_at : 0;
}

static void
s_finish (sb_trainer_t *self, s_rank_t *r, double now)
{
    r->running = 0;
    self->running--;
    if (self->trace && self->running == 0) {
        char err[PATH_MAX + 128];
        if (sb_trace_flush (self->trace, err, sizeof err) != 0) {
            s_fail (self, r, "trace", NULL, errno, err, NULL);
            return;
        }
    }
    r->interval.in_flight = 0;
    sb_report_interval (&self->out, r->rank, self->epoch, &r->interval, now, 1);
    if (self->storage_caps & SB_ENGINE_ENDPOINTS)
        s_report_endpoint_counters (self, r, 0);
    sb_msg_t done = { .type = SB_MSG_RANK_DONE };
    sb_msg_rank_done_t *d = &done.u.rank_done;
    d->rank = r->rank;
    d->epoch = self->epoch;
    d->samples = r->completed;
    d->batches = r->step;
    d->bytes = r->bytes;
    d->started_at = r->started;
    d->finished_at = now;
    /* shardbench's own AU: compute after the first step over the time after its
     * release (DLIO's own definition travels as the metric_* sums below) */
    /* checkpoints  are not training time: out of the span, as in DLIO */
    if (self->batches >= 2) {
        d->compute_s = r->compute_after_first;
        double span = now - r->first_step_end - r->ckpt_s;
        d->au = span > 0 ? r->compute_after_first / span : 0;
    }
    else {
        d->compute_s = r->compute_all;
        double span = now - r->started - r->ckpt_s;
        d->au = span > 0 ? r->compute_all / span : 0;
    }
    d->compute_all_s = r->compute_all;
    d->ckpt_s = r->ckpt_s;
    if (d->au > 1)
        d->au = 1;  /* clock granularity */
    d->io_wait_s = r->io_wait;
    d->barrier_s = r->barrier;
    d->metric_steps = r->metric_steps;
    d->metric_compute_s = r->metric_compute;
    d->head_proc_s = r->head_proc;
    d->tail_proc_s = r->tail_proc;
    size_t bins = SB_HISTOGRAM_BINS;
    while (bins > 0 && r->barrier_latency.counts[bins - 1] == 0)
        bins--;
    d->barrier_latency.count = bins;
    d->barrier_latency.items = r->barrier_latency.counts;
    bins = SB_HISTOGRAM_BINS;
    while (bins > 0 && r->read_latency.counts[bins - 1] == 0)
        bins--;
    d->read_latency.count = bins;
    d->read_latency.items = r->read_latency.counts;
    d->resident_bytes = r->resident_bytes;
    d->checked_bytes = r->checked_bytes;
    if (r == &self->ranks[0]) {     /* the worker's barriers, once */
        bins = SB_HISTOGRAM_BINS;
        while (bins > 0 && self->barrier_own.counts[bins - 1] == 0)
            bins--;
        d->barrier_own.count = bins;
        d->barrier_own.items = self->barrier_own.counts;
    }
    if (self->out.fn (self->out.ctx, &done) != 0)
        self->failed = 1;
}

/* Take the completions queued for a rank. Returns 1 when frames were left
 * (more than one turn's worth), else 0. */
static int
s_take_completions (sb_trainer_t *self, s_rank_t *r)
{
    for (int i = 0; i < 4096; i++) {
        sb_read_result_t res;
        int rc = sb_reader_try_take (r->reader, &res);
        if (rc == 1)
            return 0;
        if (rc < 0) {
            s_fail (self, r, "read", NULL, 0, "the I/O engine stopped answering", NULL);
            return 0;
        }
        if (res.error) {
            /* the failing rank's counters go first, so the endpoints table has them */
            if ((self->storage_caps & SB_ENGINE_ENDPOINTS) && res.endpoint[0] && !self->failed)
                s_report_endpoint_counters (self, r, 1);
            const s_slot_t *t = res.tag < self->nslots && r->slots[res.tag].seq ? &r->slots[res.tag] : NULL;
            if (t && t->tail && strstr (res.message, "differs from the generator")) {
                /* the magic did not match: say so, not "the generator" */
                char key[PATH_MAX], msg[PATH_MAX + 256];
                if (s_key (self, t->stored, t->dlio, key, sizeof key) != 0)
                    snprintf (key, sizeof key, "%s", res.target);
                snprintf (msg, sizeof msg, "parquet %s%s does not end with PAR1 (its last 4 bytes, at offset %llu of"
                          " its %llu): cut short, or not a parquet file", self->cfg->data_root, key,
                          (unsigned long long) t->offset, (unsigned long long) (t->offset + 4));
                s_fail (self, r, "read", key, 0, msg, &res);
                return 0;
            }
            s_fail (self, r, "read", res.target, res.error > 0 ? res.error : 0, res.message, &res);
            return 0;
        }
        r->resident_bytes += res.resident_bytes;
        r->checked_bytes += res.checked_bytes;
        if (res.tag >= self->nslots || r->slots[res.tag].seq == 0) {
            s_fail (self, r, "read", NULL, 0, "the I/O engine completed a read that was not in flight", NULL);
            return 0;
        }
        const s_slot_t *s = &r->slots[res.tag];
        if (s->length && res.bytes < s->length) {
            /* every engine fails a read the object ends inside; one that
             * did not would have the epoch count bytes nobody read */
            char key[PATH_MAX], msg[PATH_MAX + 256];
            if (s_key (self, s->stored, s->dlio, key, sizeof key) != 0)
                snprintf (key, sizeof key, "(object %llu)", (unsigned long long) s->file);
            snprintf (msg, sizeof msg, "short read %s: %llu of %llu bytes from offset %llu arrived, and the %s engine"
                      " said no error", key, (unsigned long long) res.bytes, (unsigned long long) s->length,
                      (unsigned long long) s->offset, self->storage->engine);
            s_fail (self, r, "read", key, 0, msg, NULL);
            return 0;
        }
        s_complete (self, r, (size_t) res.tag, res.bytes, res.latency_ns, res.issued_s);
        if (self->failed)
            return 0;
    }
    return 1;
}

/* Compute seconds of rank r's next batch: the set's (train.computation_time,
 * or evaluation.eval_time for the evaluation set), a constant or a draw from the rank's own stream, indexed by epoch and step
 * (same seed, same times in every run; other ranks, other times). Fails the
 * rank on a distribution it does not know or bad parameters. */
static double
s_compute_time (sb_trainer_t *self, const s_rank_t *r)
{
    const s_set_t *set = self->set;
    char why[300];
    if (sb_dist_check (&set->compute, why, sizeof why) != 0) {
        s_fail (self, r, "compute", NULL, 0, why, NULL);
        return 0;
    }
    return sb_dist_draw (&set->compute, set->compute_seed, r->rank, self->epoch << 32 | r->step);
}

/* The row group of rd into *out, when a read of its loader thread (or the
 * rank's last) brought it in or is bringing it in: 1, else 0. DLIO's
 * tf.data readers (tf_mode) keep what their own thread read this epoch, and
 * a thread never serves another's. */
static int
s_group_of (sb_trainer_t *self, s_rank_t *r, const s_read_t *rd, s_group_t *out)
{
    if (self->tf_mode != SB_TF_NONE) {
        *out = (s_group_t) { .file = rd->ref.file, .offset = rd->offset, .length = rd->length, .valid = 1 };
        return sb_tf_plan_find (r->tf, (size_t) (rd->ref.thread < self->threads ? rd->ref.thread : 0), rd->ref.file,
                                rd->offset, rd->length, &out->slot, &out->seq);
    }
    s_group_t *candidates[2] = { &r->groups[rd->ref.thread < self->threads ? rd->ref.thread : 0],
                                 &r->groups[self->threads] };
    for (int i = 0; i < 2; i++) {
        s_group_t *g = candidates[i];
        if (g->valid && g->file == rd->ref.file && g->offset == rd->offset && g->length == rd->length) {
            *out = *g;
            return 1;
        }
    }
    return 0;
}

/* The reader's lane of rd: the loader thread that reads it (reader.h). */
static uint64_t
s_lane (const sb_trainer_t *self, const s_read_t *rd)
{
    return rd->ref.thread < self->threads ? rd->ref.thread : 0;
}

/* The footer reads of a parquet file of `size` bytes (group: its reads are
 * row groups; whole: its only read is the whole file) into fr, *tail set
 * when that is the 4-byte magic check. Returns how many (0..2), or -1 when
 * the file cannot be parquet (reported, naming name). */
static int
s_footer_ranges (sb_trainer_t *self, s_rank_t *r, uint64_t size, int group, int whole, const char *name,
                 sb_parquet_range_t fr[2], int *tail)
{
    size_t nf = group ? sb_sample_range_footer (&self->ranger, size, fr) : 0;
    /* a file whose footer reads are not planned (not the generator's
     * layout: another writer's file, one cut short; compressed pages)
     * has its last 4 bytes read, which must be parquet's magic, as
     * pyarrow refuses a file without it; a file of one sample, read
     * whole as its only read, is not read twice for it */
    *tail = nf == 0 && size != SB_SIZE_UNKNOWN && !(self->storage_caps & SB_ENGINE_NO_IO) && !whole;
    if (*tail && size < 12) {
        char msg[PATH_MAX + 256];
        snprintf (msg, sizeof msg, "parquet %s%s is %llu bytes: not a parquet file (the smallest is 12 bytes:"
                  " PAR1, its footer's length, PAR1)", self->cfg->data_root, name ? name : "",
                  (unsigned long long) size);
        s_fail (self, r, "read", name, 0, msg, NULL);
        return -1;
    }
    if (*tail) {
        fr[0] = (sb_parquet_range_t) { .offset = size - 4, .length = 4 };
        nf = 1;
    }
    return (int) nf;
}

/* Footers first: the epoch's files of each loader thread of rank r, in the
 * order the thread first reads them (as DLIO's TorchIterableDataset reads
 * every footer of its worker's files before its first row group). Only
 * when names and sizes are known without asking (else each footer is read
 * before its file's first row group). Returns 0, or -1 with err set. */
static int
s_footers_plan (sb_trainer_t *self, s_rank_t *r, char *err, size_t err_size)
{
    r->ff_left = 0;
    if (!self->footers_first || self->set->asking || !self->set->footered
        || (self->footer_tail && self->set->footers_kept))
        return 0;
    uint8_t *seen = calloc ((size_t) (self->set->listed / 8 + 1), 1);
    size_t n = 0, cap = 0;
    s_footer_file_t *all = NULL;
    uint32_t *thread_of = NULL;
    int oom = !seen;
    for (uint64_t p = 0; !oom && p < self->k;) {
        s_read_t rd;
        if (s_read_at (self, r, p, &rd) != 0) {
            snprintf (err, err_size, "rank %llu: cannot plan its parquet footers", (unsigned long long) r->rank);
            goto fail;
        }
        uint64_t at = p, step = rd.group ? s_run (self, r, p, &rd.ref, rd.run_end - rd.ref.sample) : 1;
        p += step ? step : 1;
        if (rd.ref.file >= self->set->listed || (seen[rd.ref.file / 8] & (1u << (rd.ref.file % 8))))
            continue;
        seen[rd.ref.file / 8] |= (uint8_t) (1u << (rd.ref.file % 8));
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            s_footer_file_t *a = realloc (all, cap * sizeof *a);
            uint32_t *t = realloc (thread_of, cap * sizeof *t);
            if (a)
                all = a;
            if (t)
                thread_of = t;
            if (!a || !t) {
                oom = 1;
                break;
            }
        }
        all[n] = (s_footer_file_t) { .file = rd.ref.file, .size = rd.size, .dlio = rd.dlio, .stored = rd.stored,
                                     .group = rd.group, .position = at };
        thread_of[n++] = (uint32_t) (rd.ref.thread < self->threads ? rd.ref.thread : 0);
    }
    free (r->ff);
    r->ff = oom ? NULL : malloc ((n ? n : 1) * sizeof *r->ff);
    if (!r->ff) {
        snprintf (err, err_size, "rank %llu: out of memory for its parquet footers", (unsigned long long) r->rank);
        goto fail;
    }
    /* counting sort by thread, each thread's files in their order */
    memset (r->ff_start, 0, ((size_t) self->threads + 1) * sizeof *r->ff_start);
    for (size_t i = 0; i < n; i++)
        r->ff_start[thread_of[i] + 1]++;
    for (uint64_t t = 0; t < self->threads; t++)
        r->ff_start[t + 1] += r->ff_start[t];
    for (uint64_t t = 0; t < self->threads; t++)
        r->ff_at[t] = r->ff_start[t];
    for (size_t i = 0; i < n; i++)
        r->ff[r->ff_at[thread_of[i]]++] = all[i];
    for (uint64_t t = 0; t < self->threads; t++) {
        r->ff_at[t] = r->ff_start[t];
        r->ff_range[t] = 0;
        r->ff_busy[t] = 0;
        if (r->ff_start[t] < r->ff_start[t + 1])
            r->ff_left++;
    }
    free (seen);
    free (all);
    free (thread_of);
    return 0;
fail:
    free (seen);
    free (all);
    free (thread_of);
    return -1;
}

/* Footers first: each loader thread of rank r reads its next footer range
 * when its last one is in (one at a time, as DLIO's worker opens its files
 * one after another with pyarrow); with footer_tail, the last footer_tail
 * bytes of footer_batch files at once, the next batch when the last is in
 * (s3dlio's index). Returns 0, or -1 when the rank failed (reported). */
static int
s_footers_advance (sb_trainer_t *self, s_rank_t *r, double now)
{
    char key[PATH_MAX];
    size_t left = 0;
    for (uint64_t t = 0; t < self->threads; t++) {
        size_t room = r->ff_busy[t] ? 0 : self->footer_tail ? (size_t) self->footer_batch : 1;
        while (room > 0 && r->ff_at[t] < r->ff_start[t + 1] && r->nfree > 0) {
            const s_footer_file_t *f = &r->ff[r->ff_at[t]];
            const char *name = NULL;
            if (self->needs_keys) {
                if (s_key (self, f->stored, f->dlio, key, sizeof key) != 0) {
                    s_fail (self, r, "read", NULL, ENAMETOOLONG, "a catalog entry names no object of the dataset",
                            NULL);
                    return -1;
                }
                name = key;
            }
            /* the ranger plans the footer of the file it ranged last: this one */
            s_read_t rd;
            if (s_read_at (self, r, f->position, &rd) != 0 || rd.ref.file != f->file) {
                if (!self->failed)
                    s_fail (self, r, "sampler", name, 0, "the footer plan lost its file's position", NULL);
                return -1;
            }
            sb_parquet_range_t fr[2];
            int tail = 0, nf = 1;
            if (self->footer_tail && rd.size != SB_SIZE_UNKNOWN) {
                uint64_t n = rd.size < self->footer_tail ? rd.size : self->footer_tail;
                fr[0] = (sb_parquet_range_t) { .offset = rd.size - n, .length = n };
            }
            else
                nf = s_footer_ranges (self, r, rd.size, rd.group, !rd.group && rd.offset == 0 && rd.length == rd.size,
                                      name, fr, &tail);
            if (nf < 0)
                return -1;
            self->set->footered[f->file / 8] |= (uint8_t) (1u << (f->file % 8));
            if (r->ff_range[t] >= (size_t) nf) {    /* this file's footer is in: the next file */
                r->ff_at[t]++;
                r->ff_range[t] = 0;
                continue;
            }
            const sb_parquet_range_t *g = &fr[r->ff_range[t]++];
            size_t i = r->free_slots[--r->nfree];
            r->slots[i] = (s_slot_t) { .seq = ++r->next_seq, .position = 0, .run = 0, .count = 0, .file = f->file,
                                       .offset = g->offset, .length = g->length, .dlio = f->dlio, .stored = f->stored,
                                       .start = now, .tail = (uint8_t) tail, .footer_of = (uint32_t) t + 1 };
            r->ff_busy[t]++;
            if (self->footer_tail) {    /* a file's one read: on to the next file of the batch */
                r->ff_at[t]++;
                r->ff_range[t] = 0;
            }
            room--;
            if (s_submit_slot (self, r, i, name, g->offset, g->length, t, f->file, tail ? SB_READ_PARQUET_TAIL : 0,
                               now) != 0)
                return -1;
        }
        if (r->ff_busy[t] || r->ff_at[t] < r->ff_start[t + 1])
            left++;
    }
    r->ff_left = left;
    return self->failed ? -1 : 0;
}

/* Issue the read of rd at position p serving n positions (with the
 * file's footer reads first, for the first row group of a parquet file this
 * epoch) for loader thread + 1 `loader` (0: none). Returns 0 (*slot set),
 * 1 when too few slots are free, -1 when it failed (reported). */
static int
s_issue (sb_trainer_t *self, s_rank_t *r, const s_read_t *rd, uint64_t p, uint64_t n, uint32_t loader, double now,
         size_t *slot)
{
    char key[PATH_MAX];
    if (r->nfree == 0)
        return 1;
    const char *name = NULL;
    if (self->needs_keys) {
        if (s_key (self, rd->stored, rd->dlio, key, sizeof key) != 0) {
            s_fail (self, r, "read", NULL, ENAMETOOLONG, "a catalog entry names no object of the dataset", NULL);
            return -1;
        }
        name = key;
    }
    /* parquet: DLIO reads a file's footer when it opens the file, once an
     * epoch; its tf.data readers once per loader thread that opens it */
    int opens = self->tf_mode == SB_TF_GROUPS
        ? sb_tf_plan_opens (r->tf, (size_t) s_lane (self, rd), rd->ref.file)
        : self->set->footered && rd->ref.file < self->set->listed
            && !(self->set->footered[rd->ref.file / 8] & (1u << (rd->ref.file % 8)));
    if (opens && self->set->footered) {
        /* the file's first read this epoch: its footer first, as pyarrow reads it (no samples) */
        sb_parquet_range_t fr[2];
        int tail;
        int nfr = s_footer_ranges (self, r, rd->size, rd->group, !rd->group && rd->offset == 0 && rd->length == rd->size,
                                   name, fr, &tail);
        if (nfr < 0)
            return -1;
        size_t nf = (size_t) nfr;
        if (r->nfree < nf + 1)
            return 1;
        if (rd->ref.file < self->set->listed)
            self->set->footered[rd->ref.file / 8] |= (uint8_t) (1u << (rd->ref.file % 8));
        for (size_t j = 0; j < nf; j++) {
            size_t f = r->free_slots[--r->nfree];
            r->slots[f] = (s_slot_t) { .seq = ++r->next_seq, .position = p, .run = 0, .count = 0,
                                       .file = rd->ref.file, .sample = rd->ref.sample, .offset = fr[j].offset, .length = fr[j].length,
                                       .dlio = rd->dlio, .stored = rd->stored, .start = now, .tail = (uint8_t) tail };
            if (s_submit_slot (self, r, f, name, fr[j].offset, fr[j].length, s_lane (self, rd), rd->ref.file,
                               tail ? SB_READ_PARQUET_TAIL : 0, now) != 0)
                return -1;
        }
    }
    size_t i = r->free_slots[--r->nfree];
    s_slot_t *s = &r->slots[i];
    *s = (s_slot_t) { .seq = ++r->next_seq, .position = p, .run = n, .count = n, .file = rd->ref.file,
                      .sample = rd->ref.sample,
                      .offset = rd->offset, .length = rd->length, .dlio = rd->dlio, .stored = rd->stored,
                      .start = now, .loader = loader, .in_batch = !rd->group && n == 1 };
    if (s->in_batch)
        r->batch_pending[(p / self->set->batch_size) % (self->nslots + 1)]++;
    if (rd->group) {
        self->grouped = 1;
        s_group_t latest = { .file = rd->ref.file, .offset = rd->offset, .length = rd->length, .slot = i,
                             .seq = s->seq, .valid = 1 };
        r->groups[rd->ref.thread < self->threads ? rd->ref.thread : 0] = latest;
        r->groups[self->threads] = latest;
    }
    if (r->tf && sb_tf_plan_add (r->tf, (size_t) s_lane (self, rd), rd->ref.file, rd->offset, rd->length, i, s->seq)
                     != 0) {
        s_fail (self, r, "memory", NULL, ENOMEM, "out of memory for a loader thread's row groups", NULL);
        return -1;
    }
    *slot = i;
    if (s_submit_slot (self, r, i, name, rd->offset, rd->length, s_lane (self, rd), rd->ref.file, 0, now) != 0)
        return -1;
    return self->failed ? -1 : 0;
}

/* The end of rank r's prefetch window: positions before it may be read.
 * DLIO's loader (s_window) hands out the next batch as it yields one, so
 * once batch `step` is in and computing (or at its barrier) its window
 * reaches a batch further; the window of the engines that keep many reads
 * in flight counts from the batch being computed. */
static uint64_t
s_window_end (const sb_trainer_t *self, const s_rank_t *r)
{
    const uint64_t bs = self->set->batch_size;
    int yielded = (self->preprocessing || self->loader_lanes) && (r->computing || r->waiting_go);
    uint64_t end = (r->step + (uint64_t) yielded) * bs + self->window;
    if (sb_sampler_served (self->set->sampler)) {   /* no further than the file list's pages that are held */
        uint64_t ready = sb_lists_ready (self->lists, (size_t) (r - self->ranks));
        if (end > ready)
            end = ready;
    }
    return end;
}

/* When loader thread t of rank r starts reading this epoch (stagger). */
static double
s_thread_start (const sb_trainer_t *self, const s_rank_t *r, uint64_t t)
{
    return r->started + (double) t * self->stagger_s;
}

/* Stagger: issue rank r's held positions whose thread has started (a
 * thread's own in their order). Returns -1 when it failed. */
static int
s_release_held (sb_trainer_t *self, s_rank_t *r, double now)
{
    size_t kept = 0;
    for (size_t i = 0; i < r->nheld; i++) {
        uint64_t p = r->held[i];
        s_read_t rd;
        int rc = s_read_at (self, r, p, &rd);
        if (rc < 0)
            return -1;
        if (rc == 0 && now >= s_thread_start (self, r, s_lane (self, &rd))) {
            /* its batch counted it when it was held: s_issue counts it again */
            r->batch_pending[(p / self->set->batch_size) % (self->nslots + 1)]--;
            size_t slot;
            rc = s_issue (self, r, &rd, p, 1, 0, now, &slot);
            if (rc < 0)
                return -1;
            if (rc == 0)
                continue;
            r->batch_pending[(p / self->set->batch_size) % (self->nslots + 1)]++;
        }
        r->held[kept++] = p;
    }
    r->nheld = kept;
    return 0;
}

/* ---- DLIO's tf.data parquet reader: a file's open reads every row group */

/* Queue a read of [offset, +length) of rd's object on loader thread `lane`
 * into a free slot (r->nfree > 0): a footer read (eager 0) or a row group
 * its reader's open submitted (eager: lane + 1). 0 (*slot set), -1 failed. */
static int
s_tf_queue_read (sb_trainer_t *self, s_rank_t *r, const s_read_t *rd, uint64_t p, uint64_t offset, uint64_t length,
                 uint64_t lane, uint32_t eager, double now, size_t *slot)
{
    char key[PATH_MAX];
    const char *name = NULL;
    if (self->needs_keys) {
        if (s_key (self, rd->stored, rd->dlio, key, sizeof key) != 0) {
            s_fail (self, r, "read", NULL, ENAMETOOLONG, "a catalog entry names no object of the dataset", NULL);
            return -1;
        }
        name = key;
    }
    size_t i = r->free_slots[--r->nfree];
    r->slots[i] = (s_slot_t) { .seq = ++r->next_seq, .position = p, .run = 0, .count = 0, .file = rd->ref.file,
                               .sample = rd->ref.sample, .offset = offset, .length = length, .dlio = rd->dlio,
                               .stored = rd->stored, .start = now, .eager = eager };
    *slot = i;
    if (eager)
        sb_tf_plan_issued (r->tf, (size_t) lane, i, r->slots[i].seq);
    if (s_submit_slot (self, r, i, name, offset, length, lane, rd->ref.file, 0, now) != 0)
        return -1;
    return self->failed ? -1 : 0;
}

/* The read identity (file, name) of loader thread t's open file into *rd:
 * 0, or -1 when it has none. */
static int
s_tf_pending_read (const sb_trainer_t *self, const s_rank_t *r, uint64_t t, s_read_t *rd)
{
    (void) self;
    const s_tf_file_t *f = &r->tf_files[t];
    if (!f->valid)
        return -1;
    rd->ref.file = f->file;
    rd->ref.sample = 0;
    rd->dlio = f->dlio;
    rd->size = f->size;
    rd->stored = f->stored;
    return 0;
}

/* Issue loader thread t's queued row-group reads while slots are free.
 * Returns 0 when none is left, 1 when slots ran out, -1 failed. */
static int
s_tf_issue_pending (sb_trainer_t *self, s_rank_t *r, uint64_t t, const s_read_t *rd, double now)
{
    uint64_t offset, length;
    while (sb_tf_plan_next_pending (r->tf, (size_t) t, &offset, &length)) {
        if (r->nfree == 0)
            return 1;
        size_t slot;
        if (s_tf_queue_read (self, r, rd, r->submitted, offset, length, t, (uint32_t) t + 1, now, &slot) != 0)
            return -1;
    }
    return 0;
}

/* 1 when rd's row groups are known (the generator's uncompressed layout of
 * its size): its reader's open can read them all. */
static int
s_tf_groups_known (const sb_trainer_t *self, const s_read_t *rd)
{
    sb_parquet_range_t fr[2];
    return self->tf_mode == SB_TF_GROUPS && rd->group && sb_sample_range_footer (&self->ranger, rd->size, fr) > 0;
}

/* Position p (and the n after it, of its row group) of rank r, read by
 * DLIO's tf.data parquet reader of its loader thread: the thread's first
 * position of a file opens it (the footer, then a read of every row group
 * of the file, as ParquetReaderFileIterable.open submits them); the
 * position is served from its group's read, the first it serves carrying
 * the read in the trace. Returns 0 done, 1 wait for free slots, -1 failed. */
static int
s_tf_groups (sb_trainer_t *self, s_rank_t *r, const s_read_t *rd, uint64_t p, uint64_t n, double now)
{
    uint64_t t = s_lane (self, rd);
    self->grouped = 1;
    if (sb_tf_plan_opens (r->tf, (size_t) t, rd->ref.file)) {
        /* the previous file's reads were all submitted at its open */
        s_read_t prev = { .ref = { .file = 0 } };
        if (s_tf_pending_read (self, r, t, &prev) == 0) {
            int rc = s_tf_issue_pending (self, r, t, &prev, now);
            if (rc != 0)
                return rc;
        }
        sb_parquet_range_t fr[2];
        size_t nf = sb_sample_range_footer (&self->ranger, rd->size, fr);
        if (r->nfree < nf)
            return 1;
        if (sb_tf_plan_open (r->tf, (size_t) t, rd->ref.file) != 0)
            return -1;
        r->tf_files[t] = (s_tf_file_t) { .file = rd->ref.file, .dlio = rd->dlio, .size = rd->size,
                                         .stored = rd->stored, .valid = 1 };
        for (size_t j = 0; j < nf; j++) {
            size_t slot;
            if (s_tf_queue_read (self, r, rd, p, fr[j].offset, fr[j].length, t, 0, now, &slot) != 0)
                return -1;
        }
        const sb_parquet_plan_t *plan = self->ranger.plan;
        for (uint64_t g = 0; g < sb_parquet_plan_groups (plan); g++) {
            sb_parquet_range_t gr[1];
            size_t ng = 0;
            if (sb_parquet_plan_group_ranges (plan, g, gr, 1, &ng) != 0 || ng != 1 || gr[0].length == 0)
                continue;   /* a group with no column read is not read */
            if (sb_tf_plan_queue (r->tf, (size_t) t, gr[0].offset, gr[0].length) != 0) {
                s_fail (self, r, "memory", NULL, ENOMEM, "out of memory for a loader thread's row groups", NULL);
                return -1;
            }
        }
    }
    sb_tf_read_t *e = sb_tf_plan_get (r->tf, (size_t) t, rd->ref.file, rd->offset, rd->length);
    while (e && e->state == SB_TF_PENDING) {   /* its group's read goes out first */
        if (r->nfree == 0)
            return 1;
        uint64_t offset, length;
        size_t slot;
        if (!sb_tf_plan_next_pending (r->tf, (size_t) t, &offset, &length)
            || s_tf_queue_read (self, r, rd, p, offset, length, t, (uint32_t) t + 1, now, &slot) != 0)
            return -1;
        e = sb_tf_plan_get (r->tf, (size_t) t, rd->ref.file, rd->offset, rd->length);
    }
    if (!e) {
        char text[256];
        snprintf (text, sizeof text, "rank %llu: position %llu falls in no row group of its file's plan",
                  (unsigned long long) r->rank, (unsigned long long) p);
        s_fail (self, r, "sampler", NULL, 0, text, NULL);
        return -1;
    }
    s_slot_t *s = &r->slots[e->slot];
    int in_flight = e->state == SB_TF_IN_FLIGHT && s->seq == e->seq && s->seq != 0;
    uint64_t first = 0;     /* positions traced here with 0 bytes start at p + first */
    if (in_flight) {
        if (!e->used) {     /* the read's own line is this position's, at its completion */
            s->position = p;
            s->sample = rd->ref.sample;
            s->run = n;
            first = n;
        }
        s->count += n;
    }
    else {
        if (!e->used && e->state == SB_TF_DONE) {
            s_trace (self, r, p, rd->ref.file, rd->ref.sample, rd->stored, rd->dlio, rd->offset, rd->length, e->start,
                     e->latency_us, e->bytes);
            first = 1;
        }
        s_count (self, r, n, 0, 0, 0, now);
    }
    e->used = 1;
    for (uint64_t j = first; self->trace && j < n; j++)
        s_trace (self, r, p + j, rd->ref.file, rd->ref.sample + j, rd->stored, rd->dlio, rd->offset, rd->length, now,
                 0, 0);
    return self->failed ? -1 : 0;
}

/* A free read (free_reads) of one sample, rd at position p of rank r: what
 * s_issue, the engine and s_complete do with it (its number, the epoch's
 * first-read mark of its file, its counts, its trace line), at once. The
 * slot, the engine's queue and the completion are skipped: a read that does
 * nothing costs no more than its sampler and range (some 65,536 a step with
 * DLRM's npz presets). */
static void
s_read_free (sb_trainer_t *self, s_rank_t *r, const s_read_t *rd, uint64_t p, double now)
{
    r->next_seq++;
    (void) s_evict_flag (self, rd->ref.file);
    s_count (self, r, 1, rd->length, 0, 1, now);
    s_batch_in_at (self, r, p / self->set->batch_size, now);
    s_trace (self, r, p, rd->ref.file, rd->ref.sample, rd->stored, rd->dlio, rd->offset, rd->length, now, 0,
             rd->length);
}

/* Submit rank r's reads within the prefetch window. Returns -1 when it failed. */
static int
s_submit (sb_trainer_t *self, s_rank_t *r, double now)
{
    const uint64_t k = self->k;
    const uint64_t limit = s_window_end (self, r);
    if (r->nheld && s_release_held (self, r, now) != 0)
        return -1;
    /* the row groups the tf.data readers' opens submitted go out as slots free */
    for (uint64_t t = 0; r->tf && t < self->threads && r->nfree > 0; t++) {
        s_read_t none = { .ref = { .file = 0 } };
        if (s_tf_pending_read (self, r, t, &none) == 0 && s_tf_issue_pending (self, r, t, &none, now) < 0)
            return -1;
    }
    while (r->submitted < k && r->submitted < limit) {
        s_read_t rd;
        int rc = s_read_at (self, r, r->submitted, &rd);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
        uint64_t p = r->submitted, n = rd.group ? s_run (self, r, p, &rd.ref, rd.run_end - rd.ref.sample) : 1;
        if (n > k - p)
            n = k - p;
        if (self->free_reads && !rd.group && n == 1 && !self->set->footered && !r->tf) {
            s_read_free (self, r, &rd, p, now);
            if (self->failed)
                return -1;
            r->submitted++;
            continue;
        }
        if (self->stagger_s > 0 && !rd.group && n == 1 && now < s_thread_start (self, r, s_lane (self, &rd))) {
            /* DLIO's loader worker t sleeps t x computation_time before its
             * first fetch of the epoch; the other workers read on */
            if (r->nheld == r->held_cap)
                return 0;
            r->held[r->nheld++] = p;
            r->batch_pending[(p / self->set->batch_size) % (self->nslots + 1)]++;
            r->submitted++;
            continue;
        }
        if (s_tf_groups_known (self, &rd)) {
            rc = s_tf_groups (self, r, &rd, p, n, now);
            if (rc != 0)
                return rc < 0 ? -1 : 0;
            r->submitted += n;
            continue;
        }
        s_group_t found, *g = rd.group && s_group_of (self, r, &rd, &found) ? &found : NULL;
        if (g) {    /* its row group is in, or on its way: no I/O */
            s_slot_t *s = &r->slots[g->slot];
            if (s->seq == g->seq && s->seq != 0)
                s->count += n;
            else
                s_count (self, r, n, 0, 0, 0, now);
            for (uint64_t j = 0; self->trace && j < n; j++)
                s_trace (self, r, p + j, rd.ref.file, rd.ref.sample + j, rd.stored, rd.dlio, rd.offset, rd.length, now, 0,
                     0);
            r->submitted += n;
            continue;
        }
        size_t slot;
        rc = s_issue (self, r, &rd, p, n, 0, now, &slot);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
        r->submitted += n;
    }
    return 0;
}

/* the preprocess seconds of position p of rank r: a
 * draw of the set's own stream, indexed by epoch and position (same seed,
 * same times in every run; other ranks, other times). */
static double
s_preprocess_time (const sb_trainer_t *self, const s_rank_t *r, uint64_t p)
{
    return sb_dist_draw (&self->preprocess, self->set->preprocess_seed, r->rank, self->epoch << 32 | p);
}

/* loader thread t of rank r, idle, takes its next
 * position within the prefetch window: the read of it (and of the later
 * positions of its row group in its batch that are the thread's too), or
 * straight to preprocessing when the group is in. Returns 1 when it took
 * one, 0 when it has none now, -1 when the rank failed. */
static int
s_loader_take (sb_trainer_t *self, s_rank_t *r, uint64_t t, double now)
{
    s_loader_t *l = &r->loaders[t];
    const uint64_t k = self->k;
    uint64_t limit = s_window_end (self, r);
    if (limit > k)
        limit = k;
    sb_sample_ref_t ref;
    for (; l->at < limit; l->at++) {
        if (sb_sampler_at (self->set->sampler, r->rank, l->at, &ref) != 0) {
            char text[256];
            snprintf (text, sizeof text, "the sampler has no position %llu for rank %llu in epoch %llu",
                      (unsigned long long) l->at, (unsigned long long) r->rank, (unsigned long long) self->epoch);
            s_fail (self, r, "sampler", NULL, 0, text, NULL);
            return -1;
        }
        if ((ref.thread < self->threads ? ref.thread : 0) == t)
            break;
    }
    if (l->at >= limit)
        return 0;
    uint64_t p = l->at;
    s_read_t rd;
    int rc = s_read_at (self, r, p, &rd);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    uint64_t n = rd.group ? s_run (self, r, p, &rd.ref, rd.run_end - rd.ref.sample) : 1;
    if (n > k - p)
        n = k - p;
    for (uint64_t j = 1; j < n; j++)    /* the thread's own positions only */
        if (sb_sampler_at (self->set->sampler, r->rank, p + j, &ref) != 0
            || (ref.thread < self->threads ? ref.thread : 0) != t) {
            n = j;
            break;
        }
    s_group_t found, *g = rd.group && s_group_of (self, r, &rd, &found) ? &found : NULL;
    l->n = n;
    l->done = 0;
    if (g) {    /* its row group is in, or on its way: no I/O */
        for (uint64_t j = 0; self->trace && j < n; j++)
            s_trace (self, r, p + j, rd.ref.file, rd.ref.sample + j, rd.stored, rd.dlio, rd.offset, rd.length, now, 0,
                     0);
        const s_slot_t *s = &r->slots[g->slot];
        if (s->seq == g->seq && s->seq != 0) {
            l->state = S_LOADER_WAITING;
            l->slot = g->slot;
            l->seq = g->seq;
        }
        else {
            s_count_read (r, n, 0, 0, 0);
            l->state = S_LOADER_ARRIVED;
        }
        return 1;
    }
    size_t slot;
    l->state = S_LOADER_READING;
    rc = s_issue (self, r, &rd, p, n, (uint32_t) t + 1, now, &slot);
    if (rc != 0) {
        l->state = S_LOADER_IDLE;
        l->n = 0;
        return rc < 0 ? -1 : 0;
    }
    return 1;
}

/* move every loader thread of rank r as far as it goes
 * now. Returns 1 when one moved, 0 when none, -1 when the rank failed. */
static int
s_loaders_advance (sb_trainer_t *self, s_rank_t *r, double now)
{
    int moved = 0;
    for (uint64_t t = 0; t < self->threads && !self->failed; t++) {
        s_loader_t *l = &r->loaders[t];
        for (int again = 1; again;) {
            again = 0;
            switch (l->state) {
            case S_LOADER_IDLE: {
                int rc = s_loader_take (self, r, t, now);
                if (rc < 0)
                    return -1;
                again = rc;
                break;
            }
            case S_LOADER_READING:
                break;
            case S_LOADER_WAITING:
                if (r->slots[l->slot].seq != l->seq) {
                    s_count_read (r, l->n, 0, 0, 0);
                    l->state = S_LOADER_ARRIVED;
                    again = 1;
                }
                break;
            case S_LOADER_ARRIVED:     /* the bytes are in: its preprocess starts */
                l->state = S_LOADER_PREPROCESS;
                l->until = now + s_preprocess_time (self, r, l->at);
                again = 1;
                break;
            case S_LOADER_PREPROCESS:
                if (now < l->until)
                    break;
                s_count_samples (self, r, 1, l->until);
                if (++l->done < l->n)   /* the next sample's starts when this one's ended */
                    l->until += s_preprocess_time (self, r, l->at + l->done);
                else {
                    l->at += l->n;
                    l->n = 0;
                    l->state = S_LOADER_IDLE;
                }
                again = 1;
                break;
            }
            moved |= again;
        }
    }
    return moved;
}

/* 1 when every position before `end` is in (preprocessed). */
static int
s_loaders_in (const sb_trainer_t *self, const s_rank_t *r, uint64_t end)
{
    for (uint64_t t = 0; t < self->threads; t++)
        if (r->loaders[t].at < end)
            return 0;
    return 1;
}

/* the earliest end of a preprocess of rank r, 0 when none. */
static double
s_loaders_wake (const sb_trainer_t *self, const s_rank_t *r)
{
    double wake = 0;
    for (uint64_t t = 0; self->preprocessing && t < self->threads; t++)
        if (r->loaders[t].state == S_LOADER_PREPROCESS && (wake == 0 || r->loaders[t].until < wake))
            wake = r->loaders[t].until;
    return wake;
}

/* 1 when every sample of batch step of rank r is in: with loader threads
 * (preprocessing), each's position; else every position of the batch was
 * submitted and none of its reads is in flight (reads complete out of
 * order: loader threads' lanes, many reads in flight). Row groups serve
 * positions of other batches too, so with them the count of samples in
 * is what is compared. */
static int
s_batch_in (const sb_trainer_t *self, const s_rank_t *r)
{
    const uint64_t end = (r->step + 1) * self->set->batch_size;
    if (self->preprocessing)
        return s_loaders_in (self, r, end);
    if (self->grouped)
        return r->completed >= end;
    return r->submitted >= end && r->batch_pending[r->step % (self->nslots + 1)] == 0;
}

/* Rank r's wait for its batch, if it was waiting, ends now. */
static void
s_take_wait (s_rank_t *r, double now)
{
    if (r->wait_since > 0) {
        r->io_wait += now > r->wait_since ? now - r->wait_since : 0;
        r->interval.io_wait_ns += now > r->wait_since ? (uint64_t) ((now - r->wait_since) * 1e9) : 0;
        r->wait_since = 0;
    }
}

/* When rank r's next batch, which is in, starts computing: the later of
 * when the rank was free (its last compute's deadline, the local
 * barrier's release, a GO's arrival, a save's end) and when the batch's
 * last sample came in (its read's completion, as the engine recorded it);
 * not when the loop noticed them. An accelerator starts then; the loop
 * wakes some tens of microseconds to milliseconds late on a loaded host,
 * and that lateness is the emulator's, not the storage's. Never after
 * now. With loader threads the batch is in when the loop saw its last
 * preprocess end (as before); when its time is unknown, now. The batch's
 * time is then dropped: its ring entry is batch step + nslots + 1's. */
static double
s_start_at (sb_trainer_t *self, s_rank_t *r, double now)
{
    double *b = &r->batch_at[r->step % (self->nslots + 1)];
    double in = self->preprocessing || *b <= 0 ? now : *b;
    *b = 0;
    double at = r->free_at > in ? r->free_at : in;
    return at < now ? at : now;
}

/* Rank r computes its next batch, which is in, for `compute` seconds from
 * its start (s_start_at). */
static void
s_start_compute (sb_trainer_t *self, s_rank_t *r, double compute, double now)
{
    double start = s_start_at (self, r, now);
    s_take_wait (r, start);
    r->computing = 1;
    r->compute_started = start;
    r->compute_until = start + compute;
    r->compute_length = compute;
}

/* Every rank whose next batch is in starts computing it now, before any
 * rank's reads of this pass. The pump visits the ranks in turn and a
 * visit submits the rank's reads before its compute starts (s_advance): a
 * barrier's release would start rank i's compute only after ranks 0..i-1
 * read their next batches (65,536 samples a step with DLRM's npz presets on
 * one worker), and every step would wait for the last rank's late start.
 * The reads and their order are unchanged: only compute starts move, to
 * when the batch was in. Not for a rank whose compute time is 0 (s_advance
 * ends it at once, which may release a barrier), nor one at a checkpoint
 * or before its footers. */
static void
s_start_ready (sb_trainer_t *self, double now)
{
    for (size_t i = 0; i < self->nranks && !self->failed; i++) {
        s_rank_t *r = &self->ranks[i];
        if (!r->running || r->computing || r->waiting_go || r->ckpt_job || r->ff_left || r->step >= self->batches
            || !s_batch_in (self, r))
            continue;
        double compute = s_compute_time (self, r);
        if (compute > 0)
            s_start_compute (self, r, compute, now);
    }
}

/* Everything rank r can do now without waiting. */
static void
s_advance (sb_trainer_t *self, s_rank_t *r, double now)
{
    const uint64_t k = self->k;
    for (int progress = 1; progress && !self->failed && r->running;) {
        progress = 0;
        if (r->ff_left) {   /* footers first: no row group before every footer is in */
            if (s_footers_advance (self, r, now) != 0)
                return;
            if (r->ff_left)
                break;
        }
        if (self->preprocessing) {     /* the loader threads read and preprocess */
            int moved = s_loaders_advance (self, r, now);
            if (moved < 0)
                return;
            progress = moved;
        }
        else if (s_submit (self, r, now) != 0)
            return;
        if (r->ckpt_job) {     /* the rank waits for its checkpoint; reads go on */
            if (!sb_ckpt_job_done (r->ckpt_job))
                break;
            now = s_ckpt_done (self, r, now);   /* the rank goes on from the save's end */
            progress = 1;
            continue;
        }
        /* compute the next batch when its samples are in */
        if (r->computing && now >= r->compute_until) {
            s_end_compute (self, r, now);
            if (self->released)     /* the ranks it released start at once (not before the release), before its reads */
                s_start_ready (self, sb_now ());
            progress = 1;
        }
        else if (!r->computing && !r->waiting_go && r->step < self->batches && s_batch_in (self, r)) {
            double compute = s_compute_time (self, r);
            if (self->failed)
                return;
            if (compute > 0)    /* no compute: no time, AU 0 */
                s_start_compute (self, r, compute, now);
            else {
                double start = s_start_at (self, r, now);
                s_take_wait (r, start);
                s_end_compute (self, r, start);
            }
            progress = 1;
        }
    }
    if (self->failed || !r->running)
        return;
    if (r->step == self->batches && r->completed == k && r->nfree == self->nslots && !r->waiting_go
        && !r->computing && !r->ckpt_job && !(r->tf && sb_tf_plan_pending (r->tf))) {
        s_finish (self, r, now);   /* every batch computed, the tail read */
        return;
    }
    /* it waits for its batch from when it was free, however late the loop saw that */
    if (!r->waiting_go && !r->computing && !r->ckpt_job && r->step < self->batches && r->wait_since == 0)
        r->wait_since = r->free_at > 0 && r->free_at < now ? r->free_at : now;
    r->interval.in_flight = self->nslots - r->nfree;
    sb_report_interval (&self->out, r->rank, self->epoch, &r->interval, now, 0);
}

/* A read that has not moved for stall_s (checked 4 times a second) fails
 * the rank, naming the object: the thread that waits in it may never
 * return, so the reader will not wait for it either (sb_reader_destroy). */
static void
s_check_stalls (sb_trainer_t *self, double now)
{
    if (self->stall_s <= 0 || now < self->next_stall_check)
        return;
    self->next_stall_check = now + 0.25;
    for (size_t i = 0; i < self->nranks && !self->failed; i++) {
        s_rank_t *r = &self->ranks[i];
        char key[PATH_MAX], text[PATH_MAX + 512];
        double for_s = 0;
        if (!r->running || r->nfree == self->nslots
            || !sb_reader_stalled (r->reader, self->stall_s, key, sizeof key, &for_s))
            continue;
        snprintf (text, sizeof text,
                  "read %s%s: no progress for %.1f s (shardbench.stall_timeout_s = %g): the open or read has not"
                  " returned (a FIFO, a stuck NFS or FUSE mount?)",
                  self->cfg->data_root, key, for_s, self->stall_s);
        s_fail (self, r, "read", key, ETIMEDOUT, text, NULL);
    }
}

/* Ask the coordinator for the next pages of entries. */
static void
s_ask_entries (sb_trainer_t *self)
{
    sb_msg_t m;
    while (!self->failed
           && sb_entries_next_request (self->entries, self->cfg->keys_page, S_PAGES_IN_FLIGHT, &m)) {
        if (self->out.fn (self->out.ctx, &m) != 0)
            self->failed = 1;
    }
}

/* The test's late loop (SHARDBENCH_TEST_LATE_WAKE_MS): once a rank's
 * compute deadline has passed, the loop sleeps before it looks, each time. */
static void
s_late_wake (const sb_trainer_t *self)
{
    if (self->late_s <= 0)
        return;
    double now = sb_now ();
    for (size_t i = 0; i < self->nranks; i++) {
        const s_rank_t *r = &self->ranks[i];
        if (r->running && r->computing && now >= r->compute_until) {
            struct timespec ts = { .tv_sec = (time_t) self->late_s,
                                   .tv_nsec = (long) ((self->late_s - (double) (time_t) self->late_s) * 1e9) };
            while (nanosleep (&ts, &ts) != 0 && errno == EINTR)
                ;
            return;
        }
    }
}

double
sb_trainer_pump (sb_trainer_t *self, int *busy)
{
    *busy = 0;
    if (self->preparing && s_prepared (self) != 0)
        return 0;   /* the agent sleeps on prep_fd (sb_trainer_wait_fds) */
    if (self->running == 0 || self->failed)
        return 0;
    s_check_stalls (self, sb_now ());
    if (self->set->asking)
        s_ask_entries (self);
    if (self->failed)
        return 0;
    s_late_wake (self);
    double wake;
    do {    /* again when a barrier released ranks the loop had already passed */
        self->released = 0;
        wake = 0;
        s_start_ready (self, sb_now ());    /* a GO's ranks, and any whose batch came in */
        for (size_t i = 0; i < self->nranks && !self->failed; i++) {
            s_rank_t *r = &self->ranks[i];
            if (!r->running)
                continue;
            if (!(self->storage_caps & SB_ENGINE_NO_IO))
                *busy |= s_take_completions (self, r);
            if (sb_sampler_served (self->set->sampler)) {
                char err[256];
                if (sb_lists_pump (self->lists, self->set->sampler, i, r->rank, s_low_water (self, r), &self->out, err,
                                   sizeof err) != 0) {
                    s_fail (self, r, "sampler", NULL, 0, err, NULL);
                    break;
                }
            }
            double now = sb_now ();
            s_advance (self, r, now);
            if (r->running && r->computing && (wake == 0 || r->compute_until < wake))
                wake = r->compute_until;
            double preprocessed = r->running ? s_loaders_wake (self, r) : 0;
            if (preprocessed > 0 && (wake == 0 || preprocessed < wake))
                wake = preprocessed;
            if (r->running && (wake == 0 || r->interval.next < wake))
                wake = r->interval.next;
            if (r->running && r->nheld) {   /* a staggered loader thread starts */
                s_read_t rd;
                if (s_read_at (self, r, r->held[0], &rd) == 0) {
                    double at = s_thread_start (self, r, s_lane (self, &rd));
                    if (wake == 0 || at < wake)
                        wake = at;
                }
            }
            if (r->running && r->ckpt_job && (wake == 0 || now + 0.002 < wake))
                wake = now + 0.002;     /* look again for the checkpoint's end */
        }
    } while (self->released && !self->failed);
    return self->failed ? 0 : wake;
}

/* The completions rank r must receive before anything can move it on:
 * its loop sleeps until that many are queued (sb_reader_arm), not one
 * wake-up per read (each costs a futex or eventfd wake of the loop's
 * thread: some 15 us a read on a virtual machine, docs/PERFORMANCE.md).
 * Waiting for batch step + 1, each read brings one sample: the samples it
 * still lacks. Computing, at a barrier, or past the last batch: every
 * read in flight (a timer, GO or the last completion moves it). A failed
 * read wakes the loop at once anyway (reader.c). Reads that serve many
 * samples (row groups), loader threads (each takes its next read at a
 * completion) and a checkpoint in progress: 1. */
static size_t
s_completions_wanted (const sb_trainer_t *self, const s_rank_t *r)
{
    size_t in_flight = self->nslots - r->nfree;
    if (in_flight <= 1 || self->preprocessing || self->grouped || r->ckpt_job || r->ff_left)
        return 1;
    if (r->computing || r->waiting_go || r->step >= self->batches)
        return in_flight;
    uint64_t batch_end = (r->step + 1) * self->set->batch_size;
    uint64_t lacking = batch_end > r->completed ? batch_end - r->completed : 1;
    if (r->submitted >= batch_end && r->batch_pending[r->step % (self->nslots + 1)] > 0)
        lacking = r->batch_pending[r->step % (self->nslots + 1)];   /* the batch's own reads, whatever ends first */
    return lacking < in_flight ? (size_t) lacking : in_flight;
}

size_t
sb_trainer_wait_fds (sb_trainer_t *self, int *out, size_t max, int *queued)
{
    *queued = 0;
    if (self->preparing)    /* the epoch's sampler is ready when it is readable */
        return max > 0 ? (out[0] = self->prep_fd, 1) : 0;
    if (self->storage_caps & SB_ENGINE_NO_IO)
        return 0;
    size_t n = 0;   /* the ranks that expect completions; the others' are not taken */
    for (size_t i = 0; i < self->nranks && n < max; i++) {
        s_rank_t *r = &self->ranks[i];
        if (!r->running || self->failed)
            continue;
        if (sb_reader_arm (r->reader, s_completions_wanted (self, r)) == 1)
            *queued = 1;
        out[n++] = sb_reader_completion_fd (r->reader);
    }
    return n;
}
