/* trainer over the fake engine (tests/unit/fake_engine.h): the real
 * training loop of worker/trainer/trainer.c, driven as the agent drives it
 * (worker/agent/agent.c: pump, sleep on the completion sockets until the
 * pump's deadline, GO and ENTRIES from the coordinator), with reads that
 * touch no storage and take scripted times. Every message the trainer sends
 * is captured (through the wire codec, as it would leave the worker) and
 * checked: exact counts of samples, steps, bytes and reads; DLIO's AU
 * (lib/metrics/dlio_metrics.h) against the scripted compute and read times;
 * the step barrier (STEP, nothing read past the prefetch window until GO);
 * drop_last; a failed read's ERROR.
 *
 * The dataset: `files` raw objects of one 4096-byte sample each (a 64 x 64
 * uint8 record), DLIO-named in index order and of the generator's sizes
 * (PHASE_START catalog_names 2, catalog_sizes 1: no ENTRIES to ask), read
 * in DLIO's map-style order (dlio_index, no shuffle): rank r of R reads
 * files r, r + R, ... */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "dlio_metrics.h"
#include "fake_engine.h"
#include "histogram.h"
#include "proto.h"
#include "shard.h"
#include "trainer.h"
#include "util.h"
#include "wire.h"

#define S_RECORD 4096u          /* bytes of a sample (and of an object: one sample per file) */
#define S_MAX_MSGS 512

/* ------------------------------------------------------------ the harness */

/* What the trainer sent, decoded copies in order. */
typedef struct {
    sb_msg_t msgs[S_MAX_MSGS];
    size_t   n;
} s_box_t;

static s_box_t s_box;

static int
s_capture (void *ctx, const sb_msg_t *msg)
{
    s_box_t *box = ctx;
    ck_assert_uint_lt (box->n, S_MAX_MSGS);
    uint8_t *data = NULL;
    size_t size = 0;
    char why[256] = "";
    ck_assert_int_eq (sb_proto_encode (msg, &data, &size), 0);
    ck_assert_msg (sb_proto_decode (data, size, &box->msgs[box->n], why, sizeof why, NULL) == SB_PROTO_OK, "%s", why);
    free (data);
    box->n++;
    return 0;
}

static void
s_box_clear (s_box_t *box)
{
    for (size_t i = 0; i < box->n; i++)
        sb_proto_fini (&box->msgs[i]);
    box->n = 0;
}

static size_t
s_count (const s_box_t *box, sb_msg_type_t type)
{
    size_t n = 0;
    for (size_t i = 0; i < box->n; i++)
        n += box->msgs[i].type == type;
    return n;
}

/* The i-th message of type (0-based), or NULL. */
static const sb_msg_t *
s_nth (const s_box_t *box, sb_msg_type_t type, size_t i)
{
    for (size_t j = 0; j < box->n; j++)
        if (box->msgs[j].type == type && i-- == 0)
            return &box->msgs[j];
    return NULL;
}

/* One training run's settings (what WELCOME and PHASE_START say). */
typedef struct {
    uint64_t ranks, total_ranks, files, batch, threads, prefetch;
    double   compute_s;
    uint64_t exclude_start, exclude_end;
    uint64_t max_in_flight;     /* storage.max_in_flight (0: 1) */
} s_run_t;

/* A trainer, its WELCOME and storage (borrowed by it for its life). */
typedef struct {
    sb_msg_welcome_t  welcome;
    sb_storage_cfg_t  storage;
    sb_trainer_t     *trainer;
} s_rig_t;

/* WELCOME and storage of run into rig (no trainer yet). */
static void
s_rig_fill (s_rig_t *rig, const s_run_t *run)
{
    memset (rig, 0, sizeof *rig);
    sb_msg_welcome_t *w = &rig->welcome;
    w->worker = 0;
    w->first_rank = 0;
    w->ranks = run->ranks;
    w->total_ranks = run->total_ranks;
    w->data_root = "";
    w->format = "raw";
    w->file_prefix = "img";
    w->num_files = run->files;
    w->samples_per_file = 1;
    w->record_length = S_RECORD;
    w->parquet_columns = "";
    w->parquet_compression = "";
    w->parquet_read_columns = "";
    w->batch_size = run->batch;
    w->read_threads = run->threads;
    w->prefetch_size = run->prefetch;
    w->computation_time = run->compute_s;
    w->compute_dist = "";
    w->sync = "step";
    w->seed = 7;
    w->io_buffer = 65536;
    w->keys_page = 1000;
    w->engine = "";
    w->data_probe = "";
    w->metric_steps = sb_dlio_nominal_steps (1, run->files, run->batch, run->total_ranks, -1);
    w->metric_exclude_start = run->exclude_start;
    w->metric_exclude_end = run->exclude_end;
    w->sampler = "dlio_index";
    w->expected = run->files;
    w->sample_shuffle = SB_SHUFFLE_OFF;
    w->file_shuffle = SB_SHUFFLE_OFF;
    w->loader_threads = run->threads;
    w->trace = "";
    w->record_element_type = "uint8";
    w->preprocess_dist = "";
    snprintf (rig->storage.engine, sizeof rig->storage.engine, SB_FAKE_ENGINE_NAME);
    rig->storage.max_in_flight = run->max_in_flight ? run->max_in_flight : 1;
}

static void
s_rig_new (s_rig_t *rig, const s_run_t *run)
{
    s_rig_fill (rig, run);
    sb_msg_welcome_t *w = &rig->welcome;
    char err[1024] = "";
    sb_sender_t out = { s_capture, &s_box };
    rig->trainer = sb_trainer_new (w, &rig->storage, &out, err, sizeof err);
    ck_assert_msg (rig->trainer != NULL, "%s", err);
}

/* PHASE_START of training epoch 1 with the coordinator's counts. */
static sb_msg_phase_start_t
s_phase (uint64_t files, uint64_t samples_per_rank, uint64_t batches)
{
    sb_msg_phase_start_t ps;
    memset (&ps, 0, sizeof ps);
    ps.phase = "train";
    ps.run_id = 1;
    ps.epoch = 1;
    ps.samples_per_rank = samples_per_rank;
    ps.batches = batches;
    ps.listed = files;
    ps.catalog_names = 2;
    ps.catalog_sizes = 1;
    ps.ckpt_root = "";
    return ps;
}

/* DLIO's drop_last, read independently of the sampler: with R ranks over F
 * one-sample files each rank keeps floor(F / R) files (k samples) and
 * computes floor(k / B) full batches; what cannot fill a batch is not read. */
static sb_msg_phase_start_t
s_dlio_phase (const s_run_t *run)
{
    uint64_t k = run->files / run->total_ranks, steps = k / run->batch;
    return s_phase (run->files, steps * run->batch, steps);
}

/* Drive the trainer as the agent does until `type` has been sent `count`
 * times (SB_MSG_NONE: never), an ERROR was sent, or max_s passed. Returns 1
 * when it stopped for the message or the ERROR, 0 on time. */
static int
s_drive (sb_trainer_t *t, sb_msg_type_t type, size_t count, double max_s)
{
    double deadline = sb_now () + max_s;
    for (;;) {
        int busy = 0;
        double wake = sb_trainer_pump (t, &busy);
        if ((type && s_count (&s_box, type) >= count) || s_count (&s_box, SB_MSG_ERROR) > 0)
            return 1;
        double now = sb_now ();
        if (now >= deadline)
            return 0;
        if (busy)
            continue;
        int fds[16], queued;
        size_t n = sb_trainer_wait_fds (t, fds, 16, &queued);
        if (queued)
            continue;
        double timeout = 0.05;
        if (wake > 0 && wake - now < timeout)
            timeout = wake - now;
        if (deadline - now < timeout)
            timeout = deadline - now;
        if (timeout > 0 && n > 0)
            (void) sb_wire_wait_fds_s (NULL, 0, fds, n, timeout);
    }
}

static void
s_go (sb_trainer_t *t, uint64_t step)
{
    sb_msg_t m = { .type = SB_MSG_GO };
    m.u.go = (sb_msg_go_t) { .epoch = 1, .step = step, .worker = 0 };
    sb_trainer_on_message (t, &m);
}

/* Sums of every STATS a rank sent. */
typedef struct {
    uint64_t samples, bytes, reads, read_ns, compute_ns;
} s_stats_t;

static s_stats_t
s_stats_of (uint64_t rank)
{
    s_stats_t s = { 0 };
    for (size_t i = 0; i < s_box.n; i++) {
        const sb_msg_t *m = &s_box.msgs[i];
        if (m->type != SB_MSG_STATS || m->u.stats.rank != rank)
            continue;
        ck_assert_uint_eq (m->u.stats.epoch, 1);
        s.samples += m->u.stats.samples;
        s.bytes += m->u.stats.bytes;
        s.reads += m->u.stats.reads;
        s.read_ns += m->u.stats.read_ns;
        s.compute_ns += m->u.stats.compute_ns;
    }
    return s;
}

/* The RANK_DONE of rank, which must be there. */
static const sb_msg_rank_done_t *
s_done_of (uint64_t rank)
{
    for (size_t i = 0; i < s_box.n; i++)
        if (s_box.msgs[i].type == SB_MSG_RANK_DONE && s_box.msgs[i].u.rank_done.rank == rank)
            return &s_box.msgs[i].u.rank_done;
    ck_abort_msg ("no RANK_DONE from rank %llu", (unsigned long long) rank);
    return NULL;
}

/* Samples a histogram's buckets hold, and how many are in the bucket of us. */
static uint64_t
s_hist_total (const sb_msg_rank_done_t *d, uint64_t us, uint64_t *in_bucket)
{
    uint64_t total = 0;
    size_t b = sb_histogram_bin (us);
    *in_bucket = 0;
    for (size_t i = 0; i < d->read_latency.count; i++) {
        total += d->read_latency.items[i];
        if (i == b)
            *in_bucket = d->read_latency.items[i];
    }
    return total;
}

/* DLIO's AU in percent of a rank's epoch, from its RANK_DONE alone, as the
 * coordinator computes it. */
static double
s_dlio_au (const sb_msg_rank_done_t *d, uint64_t batch)
{
    sb_dlio_rank_t f;
    sb_dlio_rank_figures (d->finished_at - d->started_at, d->head_proc_s, d->tail_proc_s, d->metric_compute_s,
                          d->metric_steps, d->batches, batch, &f);
    return f.au_percentage;
}

static void
s_setup (void)
{
    ck_assert_int_eq (sb_fake_engine_reset (), 0);
    s_box_clear (&s_box);
}

static void
s_teardown (void)
{
    s_box_clear (&s_box);
}

/* Rig run's trainer, start epoch 1 in DLIO's order and drive it to its
 * RANK_DONE without an ERROR; returns rank 0's RANK_DONE. */
static const sb_msg_rank_done_t *
s_one_epoch (s_rig_t *rig, const s_run_t *run)
{
    s_rig_new (rig, run);
    sb_msg_phase_start_t ps = s_dlio_phase (run);
    ck_assert_int_eq (sb_trainer_start (rig->trainer, &ps), 0);
    ck_assert_int_eq (s_drive (rig->trainer, SB_MSG_RANK_DONE, 1, 5.0), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 0);
    return s_done_of (0);
}

/* ------------------------------------------------------------ AU */

/* Reads far faster than compute, batches prefetched: only the first
 * batch's reads are waited for, B of them one after another on the loader
 * thread of batch 0 (as DLIO's worker reads its batch), so AU is
 * C x steps over C x steps + B x L. */
START_TEST (test_au_reads_faster_than_compute)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 1, .files = 24, .batch = 4, .threads = 4, .prefetch = 2,
                          .compute_s = 0.06 };
    const uint64_t L_ns = 2000000;     /* 2 ms a read: a batch on its thread in 8 ms */
    const uint64_t steps = 6, samples = 24;
    sb_fake_engine_set_latency (L_ns, L_ns);
    s_rig_t rig;
    s_rig_new (&rig, &run);
    sb_msg_phase_start_t ps = s_dlio_phase (&run);
    ck_assert_uint_eq (ps.batches, steps);
    ck_assert_int_eq (sb_trainer_start (rig.trainer, &ps), 0);
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_RANK_DONE, 1, 5.0), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 0);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_STEP), 0);  /* every rank of the run is here: local barrier */

    const sb_msg_rank_done_t *d = s_done_of (0);
    ck_assert_uint_eq (d->epoch, 1);
    ck_assert_uint_eq (d->samples, samples);
    ck_assert_uint_eq (d->batches, steps);
    ck_assert_uint_eq (d->bytes, samples * S_RECORD);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.reads, samples);
    ck_assert_uint_eq (c.bytes, samples * S_RECORD);
    ck_assert_uint_eq (c.opens, run.threads);   /* read_threads clients of depth 1 */
    ck_assert_uint_eq (c.max_pending, 1);
    uint64_t in_bucket;
    ck_assert_uint_eq (s_hist_total (d, L_ns / 1000, &in_bucket), samples);
    ck_assert_uint_eq (in_bucket, samples);    /* the engine's latency, per sample */

    /* compute is counted at its drawn length, not as the loop saw it */
    ck_assert_double_eq_tol (d->metric_compute_s, steps * run.compute_s, 1e-9);
    ck_assert_uint_eq (d->metric_steps, steps);
    ck_assert_double_eq_tol (d->compute_s, (steps - 1) * run.compute_s, 1e-9);
    ck_assert_double_eq_tol (d->head_proc_s, 0, 1e-12);
    ck_assert_double_eq_tol (d->tail_proc_s, 0, 1e-12);

    /* the first batch's reads are waited for; the others came during computes */
    double L = (double) L_ns / 1e9, C = run.compute_s, first = (double) run.batch * L;
    ck_assert_msg (d->io_wait_s >= 0.9 * first && d->io_wait_s < 0.25 * steps * C, "io_wait %g s", d->io_wait_s);
    double au = s_dlio_au (d, run.batch), ceiling = 100.0 * steps * C / (steps * C + first);
    /* the floor leaves room for a loaded host waking the loop late after
     * computes (that lateness is barrier time, not I/O wait) */
    ck_assert_msg (au <= ceiling + 1e-6 && au >= 60.0, "DLIO AU %g%%, at most %g%%", au, ceiling);
    ck_assert_msg (d->au > 0.6 && d->au <= 1.0, "shardbench AU %g", d->au);

    /* the STATS intervals add up to the totals */
    s_stats_t st = s_stats_of (0);
    ck_assert_uint_eq (st.samples, samples);
    ck_assert_uint_eq (st.bytes, samples * S_RECORD);
    ck_assert_uint_eq (st.reads, samples);
    ck_assert_uint_eq (st.read_ns, samples * L_ns);
    ck_assert_msg (llabs ((long long) st.compute_ns - (long long) (steps * C * 1e9)) <= (long long) steps,
                   "compute_ns %llu", (unsigned long long) st.compute_ns);
    sb_trainer_destroy (&rig.trainer);
    ck_assert_ptr_null (rig.trainer);
}
END_TEST

/* Reads slower than compute, prefetch_size 0: as DLIO's PyTorch loader,
 * each of the T loader threads reads whole batches, one sample after
 * another (batch q on thread q % T), prefetch_factor 2 batches ahead each:
 * batches 0 and 1 are in after B reads of L (4L), steps 0 and 1 compute
 * (2C) while batches 2 and 3 are read, which are in at 8L. The rank waits
 * 8L - 2C in all; AU = 4C / (4C + that wait). */
START_TEST (test_au_reads_slower_than_compute)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 1, .files = 16, .batch = 4, .threads = 2, .prefetch = 0,
                          .compute_s = 0.02 };
    const uint64_t L_ns = 30000000;    /* 30 ms a read; a batch's 4 reads on one thread: 120 ms */
    const uint64_t steps = 4, samples = 16;
    sb_fake_engine_set_latency (L_ns, L_ns);
    s_rig_t rig;
    s_rig_new (&rig, &run);
    sb_msg_phase_start_t ps = s_dlio_phase (&run);
    ck_assert_int_eq (sb_trainer_start (rig.trainer, &ps), 0);
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_RANK_DONE, 1, 5.0), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 0);

    const sb_msg_rank_done_t *d = s_done_of (0);
    ck_assert_uint_eq (d->samples, samples);
    ck_assert_uint_eq (d->batches, steps);
    ck_assert_uint_eq (d->bytes, samples * S_RECORD);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.reads, samples);
    ck_assert_double_eq_tol (d->metric_compute_s, steps * run.compute_s, 1e-9);
    ck_assert_uint_eq (d->metric_steps, steps);

    double L = (double) L_ns / 1e9, C = run.compute_s, wait = 8 * L - 2 * C;
    /* the reads are waited for: at least their scripted time less the computes they overlap */
    ck_assert_msg (d->io_wait_s >= 0.95 * wait && d->io_wait_s < 3.0 * wait,
                   "io_wait %g s for %g s of scripted reads", d->io_wait_s, wait);
    /* DLIO's AU: at most 4C / (4C + the wait), the scripted model,
     * and what the rank's own wait times say, within 3 points */
    double au = s_dlio_au (d, run.batch), model = 100.0 * steps * C / (steps * C + wait);
    ck_assert_msg (au <= model + 1e-6 && au >= 0.5 * model, "DLIO AU %g%%, model %g%%", au, model);
    double measured = 100.0 * steps * C / (steps * C + d->io_wait_s + d->barrier_s);
    ck_assert_msg (fabs (au - measured) < 3.0, "DLIO AU %g%%, C / (C + wait) %g%%", au, measured);
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

/* DLIO's metric window (output.metric.exclude_start_steps = 1,
 * exclude_end_steps = 1 of 5 steps): compute is summed over steps 1..3,
 * and the proc times of steps 0 and 4 (their load from the rank's release,
 * then their compute) are taken out of the span. One loader thread reads
 * prefetch_factor 2 batches ahead (DLIO's at prefetch_size 0), a batch in
 * 2L < C: step 0's proc is its batch's two reads and its compute, and the
 * reads of every later batch are done while the one before computes, so
 * the steps of the window follow each other (DLIO's AU at most 100 %) and
 * the last step's proc is at least its compute. (With 2L = C, as before,
 * the bounds would be the loop's timing: a late start of step 0 raises
 * the AU above C / 2L and a late start of step 3 shortens step 4.) */
START_TEST (test_au_metric_window)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 1, .files = 10, .batch = 2, .threads = 1, .prefetch = 0,
                          .compute_s = 0.05, .exclude_start = 1, .exclude_end = 1 };
    const uint64_t L_ns = 10000000;    /* 2 reads on 1 thread: 20 ms a batch */
    const uint64_t steps = 5;
    sb_fake_engine_set_latency (L_ns, L_ns);
    s_rig_t rig;
    s_rig_new (&rig, &run);
    ck_assert_uint_eq (rig.welcome.metric_steps, steps);
    sb_msg_phase_start_t ps = s_dlio_phase (&run);
    ck_assert_uint_eq (ps.batches, steps);
    ck_assert_int_eq (sb_trainer_start (rig.trainer, &ps), 0);
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_RANK_DONE, 1, 5.0), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 0);
    const sb_msg_rank_done_t *d = s_done_of (0);
    ck_assert_uint_eq (d->batches, steps);
    ck_assert_uint_eq (d->samples, 10);
    ck_assert_uint_eq (d->metric_steps, 3);
    ck_assert_double_eq_tol (d->metric_compute_s, 3 * run.compute_s, 1e-9);
    double C = run.compute_s, proc = 2 * (double) L_ns / 1e9 + C;
    ck_assert_msg (d->head_proc_s >= proc - 1e-6 && d->head_proc_s < 3 * proc, "head %g s, at least %g", d->head_proc_s,
                   proc);
    /* step 4 starts at step 3's compute deadline: its proc is C, a
     * difference of clock readings near 2^31 s, exact to about a microsecond */
    ck_assert_msg (d->tail_proc_s >= C - 1e-5 && d->tail_proc_s < 3 * C, "tail %.9f s, at least %g", d->tail_proc_s, C);
    double au = s_dlio_au (d, run.batch);
    ck_assert_msg (au <= 100.0 + 1e-6 && au >= 50.0, "DLIO AU %g%%, the reads hidden: 100%%", au);
    /* the shardbench AU counts every step after the first instead */
    ck_assert_double_eq_tol (d->compute_s, (steps - 1) * C, 1e-9);
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

/* ------------------------------------------------------------ barriers */

/* One rank of two on this worker: each step ends with a STEP, and nothing
 * past the prefetch window is read until GO comes. */
START_TEST (test_barrier_waits_for_go)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 2, .files = 16, .batch = 2, .threads = 2, .prefetch = 1,
                          .compute_s = 0.005 };
    const uint64_t steps = 4, samples = 8;      /* rank 0 keeps files 0, 2, ..., 14 */
    sb_fake_engine_set_latency (1000000, 1000000);
    s_rig_t rig;
    s_rig_new (&rig, &run);
    sb_msg_phase_start_t ps = s_dlio_phase (&run);
    ck_assert_uint_eq (ps.batches, steps);
    ck_assert_int_eq (sb_trainer_start (rig.trainer, &ps), 0);
    const double hold = 0.3;
    for (uint64_t step = 0; step < steps; step++) {
        ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_STEP, step + 1, 5.0), 1);
        ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 0);
        const sb_msg_t *m = s_nth (&s_box, SB_MSG_STEP, step);
        ck_assert_uint_eq (m->u.step.epoch, 1);
        ck_assert_uint_eq (m->u.step.step, step);
        ck_assert_double_gt (sb_trainer_awaiting_go_since (rig.trainer), 0);
        /* without GO it stays at the barrier: no other STEP, no RANK_DONE,
         * and no read past DLIO's window once batch `step` was yielded
         * (prefetch_factor = ceil(prefetch / threads) batches per loader
         * thread beyond it) */
        ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_NONE, 0, step == 0 ? hold : 0.05), 0);
        ck_assert_uint_eq (s_count (&s_box, SB_MSG_STEP), step + 1);
        ck_assert_uint_eq (s_count (&s_box, SB_MSG_RANK_DONE), 0);
        sb_fake_engine_counts_t c;
        sb_fake_engine_counts (&c);
        uint64_t factor = (run.prefetch + run.threads - 1) / run.threads;
        uint64_t window = (step + 1) * run.batch + factor * run.threads * run.batch;
        ck_assert_uint_eq (c.reads, window < samples ? window : samples);
        s_go (rig.trainer, step);
        ck_assert_double_eq (sb_trainer_awaiting_go_since (rig.trainer), 0);
    }
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_RANK_DONE, 1, 5.0), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 0);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_STEP), steps);
    const sb_msg_rank_done_t *d = s_done_of (0);
    ck_assert_uint_eq (d->samples, samples);
    ck_assert_uint_eq (d->batches, steps);
    ck_assert_uint_eq (d->bytes, samples * S_RECORD);
    ck_assert_msg (d->barrier_s >= hold, "barrier %g s, GO held %g s", d->barrier_s, hold);
    uint64_t barriers = 0;
    for (size_t i = 0; i < d->barrier_latency.count; i++)
        barriers += d->barrier_latency.items[i];
    ck_assert_uint_eq (barriers, steps);
    /* the barrier's time is neither compute nor I/O wait in DLIO's AU */
    ck_assert_double_eq_tol (d->metric_compute_s, steps * run.compute_s, 1e-9);
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

/* A GO for a step the worker has not reached is a protocol error. */
START_TEST (test_go_out_of_order)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 2, .files = 16, .batch = 2, .threads = 2, .prefetch = 1,
                          .compute_s = 0.001 };
    s_rig_t rig;
    s_rig_new (&rig, &run);
    sb_msg_phase_start_t ps = s_dlio_phase (&run);
    ck_assert_int_eq (sb_trainer_start (rig.trainer, &ps), 0);
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_STEP, 1, 5.0), 1);
    s_go (rig.trainer, 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 1);
    const sb_msg_error_t *e = &s_nth (&s_box, SB_MSG_ERROR, 0)->u.error;
    ck_assert_str_eq (e->op, "protocol");
    ck_assert_str_eq (e->message, "GO for step 1 of epoch 1 out of order (training epoch 1, last barrier reached: 1)");
    /* a failed trainer sends nothing more */
    size_t sent = s_box.n;
    int busy = 0;
    ck_assert_double_eq (sb_trainer_pump (rig.trainer, &busy), 0);
    ck_assert_uint_eq (s_box.n, sent);
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

/* ------------------------------------------------------------ drop_last */

/* 10 samples a rank, batch 4: DLIO's drop_last gives 2 steps of 8 samples;
 * the 2 that cannot fill a batch are not read. */
START_TEST (test_drop_last_one_rank)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 1, .files = 10, .batch = 4, .threads = 2, .prefetch = 1,
                          .compute_s = 0.001 };
    sb_msg_phase_start_t ps = s_dlio_phase (&run);
    ck_assert_uint_eq (ps.batches, 2);
    ck_assert_uint_eq (ps.samples_per_rank, 8);
    s_rig_t rig;
    s_rig_new (&rig, &run);
    ck_assert_int_eq (sb_trainer_start (rig.trainer, &ps), 0);
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_RANK_DONE, 1, 5.0), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 0);
    const sb_msg_rank_done_t *d = s_done_of (0);
    ck_assert_uint_eq (d->samples, 8);
    ck_assert_uint_eq (d->batches, 2);
    ck_assert_uint_eq (d->bytes, 8 * S_RECORD);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.reads, 8);
    ck_assert_uint_eq (s_stats_of (0).samples, 8);
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

/* 11 files over 2 ranks, batch 2: each rank keeps 5 files (one is unused),
 * computes 2 steps and drops its fifth sample. */
START_TEST (test_drop_last_two_ranks)
{
    const s_run_t run = { .ranks = 2, .total_ranks = 2, .files = 11, .batch = 2, .threads = 2, .prefetch = 1,
                          .compute_s = 0.001 };
    sb_msg_phase_start_t ps = s_dlio_phase (&run);
    ck_assert_uint_eq (ps.batches, 2);
    ck_assert_uint_eq (ps.samples_per_rank, 4);
    s_rig_t rig;
    s_rig_new (&rig, &run);
    ck_assert_int_eq (sb_trainer_start (rig.trainer, &ps), 0);
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_RANK_DONE, 2, 5.0), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 0);
    for (uint64_t rank = 0; rank < 2; rank++) {
        const sb_msg_rank_done_t *d = s_done_of (rank);
        ck_assert_uint_eq (d->samples, 4);
        ck_assert_uint_eq (d->batches, 2);
        ck_assert_uint_eq (d->bytes, 4 * S_RECORD);
    }
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.reads, 8);
    ck_assert_uint_eq (c.opens, 2 * run.threads);   /* each rank its own reader */
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

/* drop_last false (a last, partial batch: 3 steps, 10 samples) is not
 * DLIO's rule: the worker's sampler disagrees and the epoch does not start
 * (the sampler is prepared on its own thread: the ERROR comes from the pump
 * that sees it prepared). */
START_TEST (test_partial_batch_refused)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 1, .files = 10, .batch = 4, .threads = 2, .prefetch = 1,
                          .compute_s = 0.001 };
    s_rig_t rig;
    s_rig_new (&rig, &run);
    sb_msg_phase_start_t ps = s_phase (run.files, 10, 3);
    ck_assert_int_eq (sb_trainer_start (rig.trainer, &ps), 0);
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_ERROR, 1, 5.0), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 1);
    const sb_msg_error_t *e = &s_nth (&s_box, SB_MSG_ERROR, 0)->u.error;
    ck_assert_str_eq (e->op, "sampler");
    ck_assert_str_eq (e->message, "epoch 1: this worker's sampler gives 2 steps of 8 samples per rank, the"
                                  " coordinator's 3 of 10");
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_NONE, 0, 0.05), 1);     /* the ERROR stands; nothing runs */
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.reads, 0);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_RANK_DONE), 0);
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

/* ------------------------------------------------------------ failures */

/* A read the engine fails ends the rank with an ERROR naming the key and
 * carrying the engine's own text and errno. */
START_TEST (test_read_failure_error)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 1, .files = 16, .batch = 4, .threads = 2, .prefetch = 1,
                          .compute_s = 0.001 };
    ck_assert_int_eq (sb_fake_engine_fail ("img_05_of_16", 1, EIO, 0, 0, 0), 0);
    s_rig_t rig;
    s_rig_new (&rig, &run);
    sb_msg_phase_start_t ps = s_dlio_phase (&run);
    ck_assert_int_eq (sb_trainer_start (rig.trainer, &ps), 0);
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_RANK_DONE, 1, 5.0), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_RANK_DONE), 0);
    const sb_msg_error_t *e = &s_nth (&s_box, SB_MSG_ERROR, 0)->u.error;
    ck_assert_int_eq (e->rank, 0);
    ck_assert_str_eq (e->op, "read");
    ck_assert_str_eq (e->target, "train/img_05_of_16.raw");
    ck_assert_int_eq (e->errno_val, EIO);
    ck_assert_str_eq (e->message, "fake read train/img_05_of_16.raw: scripted failure (errno 5, status 0)");
    ck_assert_str_eq (e->endpoint, "");
    /* nothing after it */
    size_t sent = s_box.n;
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_NONE, 0, 0.05), 1);
    ck_assert_uint_eq (s_box.n, sent);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.failed, 1);
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

/* reader.odirect on an engine of local folders switches every rank's
 * reader to the engine's O_DIRECT counterpart; when that cannot be done the
 * worker refuses the run naming the rank, the folder and the errno (it
 * used to go on reading through the page cache while O_DIRECT was
 * recorded). */
START_TEST (test_odirect_switch_fails)
{
    const s_run_t run = { .ranks = 2, .total_ranks = 2, .files = 16, .batch = 4, .threads = 2, .prefetch = 1,
                          .compute_s = 0.001 };
    sb_fake_engine_set_caps (SB_ENGINE_FOLDER);
    s_rig_t rig;
    s_rig_fill (&rig, &run);
    rig.welcome.odirect = 1;
    rig.welcome.data_root = "/data/set/";
    sb_sender_t out = { s_capture, &s_box };
    char err[1024] = "";
    /* no O_DIRECT engine named */
    ck_assert_ptr_null (sb_trainer_new (&rig.welcome, &rig.storage, &out, err, sizeof err));
    ck_assert_str_eq (err, "rank 0: reader.odirect: the fake engine reading /data/set/ has no O_DIRECT engine built"
                      " into this shardbench: its reads would go through the page cache");
    /* one whose client cannot be opened */
    ck_assert_int_eq (sb_fake_engine_set_direct (EACCES), 0);
    ck_assert_ptr_null (sb_trainer_new (&rig.welcome, &rig.storage, &out, err, sizeof err));
    ck_assert_str_eq (err, "rank 0: reader.odirect: cannot open a client of the fake_direct engine for /data/set/:"
                      " fake_direct open /data/set/: scripted failure (errno 13, Permission denied)");
    ck_assert_uint_eq (s_box.n, 0);     /* nothing was sent: the worker reports err */
    /* one that opens: every rank reads through it (2 threads each: 4 clients more) */
    ck_assert_int_eq (sb_fake_engine_set_direct (0), 0);
    sb_fake_engine_counts_t before, after;
    sb_fake_engine_counts (&before);
    sb_trainer_t *t = sb_trainer_new (&rig.welcome, &rig.storage, &out, err, sizeof err);
    ck_assert_msg (t != NULL, "%s", err);
    sb_fake_engine_counts (&after);
    ck_assert_uint_eq (after.opens - before.opens, 2 * 2 + 2 * 2);
    sb_trainer_destroy (&t);
}
END_TEST

/* An engine that completes a read with fewer bytes than asked and no
 * error (a careless one: every engine here fails such a read itself) fails
 * the rank, naming the key, the offset and both counts: never a short
 * count in the epoch's bytes. */
START_TEST (test_short_read_error)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 1, .files = 16, .batch = 4, .threads = 2, .prefetch = 1,
                          .compute_s = 0.001 };
    for (int i = 0; i < 16; i++) {
        char key[64];
        snprintf (key, sizeof key, "train/img_%02d_of_16.raw", i);
        ck_assert_int_eq (sb_fake_engine_add_object (key, i == 5 ? 1000 : S_RECORD), 0);
    }
    sb_fake_engine_set_lenient (1);
    s_rig_t rig;
    s_rig_new (&rig, &run);
    sb_msg_phase_start_t ps = s_dlio_phase (&run);
    ck_assert_int_eq (sb_trainer_start (rig.trainer, &ps), 0);
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_ERROR, 1, 5.0), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_RANK_DONE), 0);
    const sb_msg_error_t *e = &s_nth (&s_box, SB_MSG_ERROR, 0)->u.error;
    ck_assert_int_eq (e->rank, 0);
    ck_assert_str_eq (e->op, "read");
    ck_assert_str_eq (e->target, "train/img_05_of_16.raw");
    ck_assert_str_eq (e->message, "short read train/img_05_of_16.raw: 1000 of 4096 bytes from offset 0 arrived,"
                      " and the fake engine said no error");
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

/* ------------------------------------------------------------ capabilities */

/* An engine without I/O (SB_ENGINE_NO_IO, as synthetic): every read
 * completes inside the submit, on the trainer's thread, in no time. */
START_TEST (test_no_io_engine_inline)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 1, .files = 12, .batch = 4, .threads = 2, .prefetch = 1,
                          .compute_s = 0.002 };
    sb_fake_engine_set_caps (SB_ENGINE_NO_IO);
    sb_fake_engine_set_latency (5000000, 0);
    s_rig_t rig;
    const sb_msg_rank_done_t *d = s_one_epoch (&rig, &run);
    ck_assert_uint_eq (d->samples, 12);
    ck_assert_uint_eq (d->batches, 3);
    ck_assert_uint_eq (d->bytes, 12 * S_RECORD);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.opens, 1);        /* one inline client, no threads */
    ck_assert_uint_eq (c.reads, 12);
    /* the inline path counts its reads as taking no time (the engine's
     * scripted 5 ms are not seen), and they are not counted as reads in STATS */
    s_stats_t st = s_stats_of (0);
    ck_assert_uint_eq (st.samples, 12);
    ck_assert_uint_eq (st.bytes, 12 * S_RECORD);
    ck_assert_uint_eq (st.read_ns, 0);
    uint64_t in_bucket;
    ck_assert_uint_eq (s_hist_total (d, 0, &in_bucket), 12);
    ck_assert_uint_eq (in_bucket, 12);
    ck_assert_double_eq_tol (d->metric_compute_s, 3 * run.compute_s, 1e-9);
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

/* An engine that keeps many reads in flight on one client
 * (SB_ENGINE_ASYNC): one client per rank, and never more reads queued
 * than the trainer's prefetch window ((prefetch + 1) x batch). */
START_TEST (test_async_engine_window)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 1, .files = 16, .batch = 4, .threads = 2, .prefetch = 1,
                          .compute_s = 0.005, .max_in_flight = 64 };
    sb_fake_engine_set_caps (SB_ENGINE_OBJECTS | SB_ENGINE_ASYNC);
    sb_fake_engine_set_latency (20000000, 20000000);
    s_rig_t rig;
    const sb_msg_rank_done_t *d = s_one_epoch (&rig, &run);
    ck_assert_uint_eq (d->samples, 16);
    ck_assert_uint_eq (d->batches, 4);
    ck_assert_uint_eq (d->bytes, 16 * S_RECORD);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.opens, 1);
    ck_assert_uint_eq (c.reads, 16);
    ck_assert_uint_le (c.max_pending, (run.prefetch + 1) * run.batch);
    ck_assert_uint_ge (c.max_pending, 2);     /* reads overlapped: 20 ms each, queued at once */
    s_stats_t st = s_stats_of (0);
    ck_assert_uint_eq (st.reads, 16);
    ck_assert_uint_eq (st.read_ns, 16 * 20000000ull);
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

/* A pool engine (depth-1 clients, no SB_ENGINE_ASYNC) reads as DLIO's
 * PyTorch loader: batch q on loader thread q % T, its samples one after
 * another, prefetch_factor batches ahead per thread (prefetch_size 1 over
 * 2 threads: 1, so 2 batches in flight). 16 files, batch 4, 2 threads:
 * one client reads files 0-3 then 8-11, the other 4-7 then 12-15, each in
 * that order (a pool sharing one queue would have files 0 and 1 in
 * flight together on two clients). */
START_TEST (test_pool_engine_lanes)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 1, .files = 16, .batch = 4, .threads = 2, .prefetch = 1,
                          .compute_s = 0.005 };
    sb_fake_engine_set_latency (5000000, 5000000);
    s_rig_t rig;
    const sb_msg_rank_done_t *d = s_one_epoch (&rig, &run);
    ck_assert_uint_eq (d->samples, 16);
    ck_assert_uint_eq (d->batches, 4);
    sb_trainer_destroy (&rig.trainer);
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.opens, 2);
    ck_assert_uint_eq (c.max_in_flight, 1);   /* per client */
    sb_fake_engine_read_t log[32];
    ck_assert_uint_eq (sb_fake_engine_reads (log, 32), 16);
    uint64_t client_of_thread[2] = { 0, 0 };
    int last_of_thread[2] = { -1, -1 };
    for (size_t j = 0; j < 16; j++) {
        const char *digits = strstr (log[j].key, "img_");
        ck_assert_ptr_nonnull (digits);
        int file = atoi (digits + 4), thread = (file / 4) % 2;
        if (!client_of_thread[thread])
            client_of_thread[thread] = log[j].client;
        ck_assert_msg (log[j].client == client_of_thread[thread], "file %d (thread %d) read by client %llu, not %llu",
                       file, thread, (unsigned long long) log[j].client,
                       (unsigned long long) client_of_thread[thread]);
        ck_assert_msg (file > last_of_thread[thread], "thread %d read file %d after %d", thread, file,
                       last_of_thread[thread]);
        last_of_thread[thread] = file;
    }
    ck_assert_uint_ne (client_of_thread[0], client_of_thread[1]);
    ck_assert_int_eq (last_of_thread[0], 11);
    ck_assert_int_eq (last_of_thread[1], 15);
}
END_TEST

/* A failed read of an engine without I/O fails the rank at once. (Its
 * ERROR does not carry the engine's text, only logged by the reader, nor a
 * key, which such an engine is not given without verification: not
 * asserted here.) */
START_TEST (test_no_io_engine_failure)
{
    const s_run_t run = { .ranks = 1, .total_ranks = 1, .files = 16, .batch = 4, .threads = 2, .prefetch = 1,
                          .compute_s = 0.001 };
    sb_fake_engine_set_caps (SB_ENGINE_NO_IO);
    ck_assert_int_eq (sb_fake_engine_fail ("", 3, EIO, 0, 0, 0), 0);
    s_rig_t rig;
    s_rig_new (&rig, &run);
    sb_msg_phase_start_t ps = s_dlio_phase (&run);
    ck_assert_int_eq (sb_trainer_start (rig.trainer, &ps), 0);
    ck_assert_int_eq (s_drive (rig.trainer, SB_MSG_RANK_DONE, 1, 5.0), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_ERROR), 1);
    ck_assert_uint_eq (s_count (&s_box, SB_MSG_RANK_DONE), 0);
    const sb_msg_error_t *e = &s_nth (&s_box, SB_MSG_ERROR, 0)->u.error;
    ck_assert_int_eq (e->rank, 0);
    ck_assert_str_eq (e->op, "read");
    sb_fake_engine_counts_t c;
    sb_fake_engine_counts (&c);
    ck_assert_uint_eq (c.failed, 1);
    ck_assert_uint_eq (c.reads, 3);     /* nothing after the failed third */
    sb_trainer_destroy (&rig.trainer);
}
END_TEST

static Suite *
trainer_fake_suite (void)
{
    Suite *s = suite_create ("trainer_fake");
    TCase *tc = tcase_create ("core");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_au_reads_faster_than_compute);
    tcase_add_test (tc, test_au_reads_slower_than_compute);
    tcase_add_test (tc, test_au_metric_window);
    tcase_add_test (tc, test_barrier_waits_for_go);
    tcase_add_test (tc, test_go_out_of_order);
    tcase_add_test (tc, test_drop_last_one_rank);
    tcase_add_test (tc, test_drop_last_two_ranks);
    tcase_add_test (tc, test_partial_batch_refused);
    tcase_add_test (tc, test_read_failure_error);
    tcase_add_test (tc, test_odirect_switch_fails);
    tcase_add_test (tc, test_short_read_error);
    tcase_add_test (tc, test_no_io_engine_inline);
    tcase_add_test (tc, test_async_engine_window);
    tcase_add_test (tc, test_pool_engine_lanes);
    tcase_add_test (tc, test_no_io_engine_failure);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (trainer_fake_suite)
