/* phase_train: the training epochs (DLIO's train loop) and the
 * evaluations between them: the catalog and its naming mode, rank 0's
 * sampler (the figures every worker's sampler must agree with), under
 * file_shuffle every rank's file lists planned once an epoch in a
 * background thread (lib/dataset/sampler_plan.h: while epoch e's lists are
 * served the next are not planned, so the plan of e+1 runs from the end of
 * epoch e's reads, alongside its records, evaluation and checkpoint, with
 * the loop answering heartbeats and frames), per-epoch PHASE_START, the
 * epoch's rows and DLIO's metrics. */
#include "session_internal.h"
#include "engine.h"
#include "catalog.h"
#include "ckpt_plan.h"
#include "datasize.h"
#include "distribution.h"
#include "dlio_metrics.h"
#include "dlio_tf.h"
#include "dataset.h"
#include "histogram.h"
#include "log.h"
#include "util.h"
#include "progress.h"
#include "sample_range.h"
#include "sampler.h"
#include "sampler_kind.h"

#include <czmq.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rank finished an evaluation: DLIO's figures of the rank
 * (compute_metrics_eval: AU over the metric window, 0 without compute;
 * throughput over every step and the whole span) and its eval_ranks row. */
void
sess_on_eval_rank_done (sess_t *self, sess_worker_t *w, const sb_msg_rank_done_t *m, double started_at,
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
        sess_fail (self, "cannot record rank %llu of the evaluation after epoch %llu: %s", (unsigned long long) m->rank,
                   (unsigned long long) m->epoch, sb_resultdb_errmsg (self->o->db));
    self->ranks_done++;
}

/* MLPerf Storage wants the dataset at least 5x the memory of the hosts
 * that read it, or their page cache could serve it: warn when it is not
 * (memory as the workers reported it, each host once). */
static void
s_check_dataset_size (sess_t *self)
{
    const sb_workload_t *wl = self->o->wl;
    if ((sb_storage_caps (&wl->storage) & SB_ENGINE_NO_IO) != 0)
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
s_catalog_mode_of (sess_t *self, sb_catalog_reader_t *catalog, uint64_t count, const sb_dataset_t *ds,
                   int *names, int *sizes)
{
    const sb_workload_t *wl = self->o->wl;
    int synthetic = (sb_storage_caps (&wl->storage) & SB_ENGINE_NO_IO) != 0;
    *names = *sizes = 0;
    if (wl->skip_listing) {
        /* DLIO's skip_listing deals its names in index order (main.py
         * initialize: index r, r + R, ... to rank r), not in name order */
        *names = 2;
        *sizes = synthetic ? 1 : 2;
        return;
    }
    if (sb_catalog_reader_is_derived (catalog)) {
        /* no catalog (synthetic): names and sizes follow the naming, no pass */
        *names = 1;
        *sizes = sb_catalog_reader_exact_sizes (catalog) ? 1 : 2;
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
        if ((i & 65535) == 65535 && sess_keep_alive (self))
            return;
        if (sb_catalog_reader_locate (catalog, i, &size, &dlio) != 1
            || sb_generator_size (ds, synthetic, dlio, &want, why, sizeof why) != 0 || size != want)
            return;     /* the workers ask for the sizes */
    }
    *sizes = 1;
}

static void
s_catalog_mode (sess_t *self, const sb_dataset_t *ds)
{
    s_catalog_mode_of (self, self->catalog, self->catalog_info.count, ds, &self->catalog_names, &self->catalog_sizes);
}

/* The sampler of rank 0 with worker 0's loader threads; the DLIO kinds
 * whose order depends on the threads need every worker to run as many. */
int
sess_sampler_new (sess_t *self, char *err, size_t err_size)
{
    const sb_workload_t *wl = self->o->wl;
    sb_sampler_kind_t kind = sb_sampler_kind_for (wl);
    self->loader_threads = sb_loader_threads (wl->read_threads, self->workers[0].cores, self->ranks_per_worker);
    /* say when DLIO's reader of this format and loader never sleeps it */
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
    /* say once where DLIO's tensorflow loader would repeat or lose data */
    char note[1024];
    if (sb_dlio_tf_note (wl, kind, self->o->accelerators, self->catalog_info.count, self->loader_threads, note,
                         sizeof note))
        sb_warn ("%s", note);
    if (sb_dlio_tf_stop_note (wl, note, sizeof note))
        sb_warn ("%s", note);
    sb_sampler_cfg_t sc = {
        .kind = kind, .listed = self->catalog_info.count, .expected = wl->num_files_train,
        .samples_per_file = wl->num_samples_per_file, .ranks = self->o->accelerators, .batch_size = wl->batch_size,
        .threads = self->loader_threads, .seed = self->o->seed, .sample_shuffle = wl->sample_shuffle,
        .file_shuffle = wl->file_shuffle, .seed_change_epoch = wl->seed_change_epoch,
        .max_steps = wl->total_training_steps > 0 ? (uint64_t) wl->total_training_steps : 0,
        .first_rank = 0, .nranks = 1,
        /* the lists are planned once, here, for every rank (sb_plan_t): the
         * sampler that gives the figures keeps none */
        .served = wl->file_shuffle != SB_SHUFFLE_OFF && kind != SB_SAMPLER_GLOBAL,
    };
    if (!(self->sampler = sb_sampler_new (&sc, err, err_size)))
        return -1;
    if (sc.served && !(self->plan = sb_plan_new (&sc, err, err_size)))
        return -1;
    return 0;
}

/* the loop's passes while the plan runs: how often, and the longest gap */
static double s_plan_pass_at, s_plan_gap;
static uint64_t s_plan_passes;

static int
s_plan_ended (sess_t *self)
{
    double now = sb_now ();
    if (now - s_plan_pass_at > s_plan_gap)
        s_plan_gap = now - s_plan_pass_at;
    s_plan_pass_at = now;
    s_plan_passes++;
    return sb_plan_poll (self->plan) != 0;
}

/* Wait for the plan of epoch e (started by s_plan_start) with the loop
 * running, and say what it took. 0, or -1 when the run failed. */
static int
s_plan_wait (sess_t *self, uint64_t e)
{
    if (!self->plan)
        return 0;
    char what[96], err[512];
    snprintf (what, sizeof what, "planning the file lists of epoch %llu", (unsigned long long) e);
    double waited = sb_now (), cpu = 0;
    s_plan_pass_at = waited;
    s_plan_gap = 0;
    s_plan_passes = 0;
    /* a small plan ends within milliseconds: look for it a little before
     * the loop's first sleep (up to 50 ms) would */
    for (int i = 0; i < 20 && sb_plan_poll (self->plan) == 0; i++)
        zclock_sleep (1);
    if (sess_pump_until (self, s_plan_ended, 0, what) != 0)
        return -1;
    waited = sb_now () - waited;
    if (sb_plan_wait (self->plan, &cpu, err, sizeof err) != 0) {
        sess_fail (self, "%s", err);
        return -1;
    }
    uint64_t files = sb_plan_files_per_rank (self->plan) * self->o->accelerators;
    sb_info ("file_shuffle: epoch %llu's file lists (%llu ranks x %llu files) planned in a background thread in %.2f s"
             " of CPU (%.3f s per million files); the loop waited %.2f s for it, %llu passes, at most %.0f ms apart;"
             " %llu bytes held (%.3f per file)", (unsigned long long) e, (unsigned long long) self->o->accelerators,
             (unsigned long long) sb_plan_files_per_rank (self->plan), cpu,
             files ? cpu * 1e6 / (double) files : 0.0, waited, (unsigned long long) s_plan_passes, s_plan_gap * 1e3,
             (unsigned long long) sb_plan_bytes (self->plan),
             files ? (double) sb_plan_bytes (self->plan) / (double) files : 0.0);
    return 0;
}

static int
s_plan_start (sess_t *self, uint64_t e)
{
    char err[512];
    if (self->plan && sb_plan_start (self->plan, e, err, sizeof err) != 0) {
        sess_fail (self, "%s", err);
        return -1;
    }
    return 0;
}

/* The evaluation set as DLIO names it: valid/, num_files_eval files in
 * num_subfolders_eval subfolders, otherwise the training set's layout. */
void
sess_eval_dataset (sess_t *self, sb_dataset_t *ds)
{
    const sb_workload_t *wl = self->o->wl;
    sess_dataset (self, ds);
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
s_phase_eval (sess_t *self, uint64_t e)
{
    const sb_workload_t *wl = self->o->wl;
    char err[512];
    /* objects of valid/ the sampler picks from: the listing's (DLIO lists
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
            sess_fail (self, "evaluation: %s", err);
            return -1;
        }
        sb_dataset_t ds;
        sess_eval_dataset (self, &ds);
        int synthetic = (sb_storage_caps (&wl->storage) & SB_ENGINE_NO_IO) != 0;
        if (self->eval_listed) {
            /* valid/'s own catalog: names derived by the workers when they
             * are DLIO's, sizes the generator's when every object has that
             * size, else served in pages (ENTRIES) as train/'s are */
            sb_catalog_set_progress (sess_keep_alive, self);
            self->eval_catalog = sb_catalog_reader_new (sb_resultdb_handle (self->o->db), self->eval_catalog_info.id,
                                                        err, sizeof err);
            sb_catalog_set_progress (NULL, NULL);
            if (!self->eval_catalog) {
                sess_fail (self, "evaluation: the catalog of valid/: %s", err);
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
            sess_fail (self, "out of memory for the evaluation metrics of %llu epochs", (unsigned long long) wl->epochs);
            return -1;
        }
        sess_workflow_add (self, "eval");
    }
    /* DLIO reshuffles both sets every epoch: the evaluation sampler goes
     * through the epochs without an evaluation too, in order */
    while (self->eval_prepared < e)
        if (sb_sampler_epoch (self->eval_sampler, ++self->eval_prepared, err, sizeof err) != 0) {
            sess_fail (self, "evaluation: %s", err);
            return -1;
        }
    self->eval_info = *sb_sampler_info (self->eval_sampler);
    const sb_sampler_epoch_t *info = &self->eval_info;
    self->phase = SESS_PHASE_EVAL;
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
    sess_broadcast (self, &start);
    sb_live_phase (self->live, "eval", e, wl->epochs, info->steps, samples, wl->batch_size, sb_now ());
    sb_progress_phase (self->progress, sb_now ());
    char what[64];
    snprintf (what, sizeof what, "evaluating after epoch %llu", (unsigned long long) e);
    int pumped = sess_pump_until (self, sess_all_ranks_done, 0, what);
    sb_live_phase_end (self->live, NAN, sb_now ());
    sb_progress_end_phase (self->progress, sb_now ());
    self->phase = SESS_PHASE_NONE;
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
        sess_fail (self, "cannot record the evaluation after epoch %llu: %s", (unsigned long long) e,
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

static int s_phase_train (sess_t *self);

int
sess_phase_train (sess_t *self)
{
    int rc = s_phase_train (self);
    sb_plan_destroy (&self->plan);      /* waits for a planning thread */
    return rc;
}

static int
s_phase_train (sess_t *self)
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
        sess_fail (self, "out of memory for the metrics of %llu epochs", (unsigned long long) wl->epochs);
        return -1;
    }
    sb_dataset_t ds;
    sess_dataset (self, &ds);
    double plan_started = sb_now ();
    sb_catalog_set_progress (sess_keep_alive, self);    /* loading a large index: heartbeats, signals */
    self->catalog = wl->skip_listing
        ? sb_catalog_reader_new_naming (&ds, (sb_storage_caps (&wl->storage) & SB_ENGINE_NO_IO) != 0, err, sizeof err)
        : self->catalog_derived ? sb_catalog_reader_new_derived (&ds, 1, err, sizeof err)
        : sb_catalog_reader_new (sb_resultdb_handle (self->o->db), self->catalog_info.id, err, sizeof err);
    sb_catalog_set_progress (NULL, NULL);
    if (!self->catalog) {
        if (zsys_interrupted) {
            self->aborted = 1;
            sess_fail (self, "interrupted by %s while loading the catalog (%s)", sess_signal_name (), err);
        }
        else
            sess_fail (self, "%s", err);
        return -1;
    }
    s_catalog_mode (self, &ds);
    if (sess_sampler_new (self, err, sizeof err) != 0 || sb_sampler_epoch (self->sampler, 1, err, sizeof err) != 0) {
        sess_fail (self, "%s", err);
        return -1;
    }
    if (s_plan_start (self, 1) != 0 || s_plan_wait (self, 1) != 0)
        return -1;
    self->ep_info = *sb_sampler_info (self->sampler);
    if (sess_begin_run (self, "train") < 0)
        return -1;
    if (sb_resultdb_run_sampler (self->o->db, self->run_id, sb_sampler_kind_name (sb_sampler_kind_for (wl)),
                                 self->loader_threads) != 0) {
        sess_fail (self, "cannot record the sampler: %s", sb_resultdb_errmsg (self->o->db));
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
        /* DLIO's checkpoints during training, into checkpoint.checkpoint_folder */
        if (sb_ckpt_plan_init (&self->ckpt, &wl->ckpt, self->o->accelerators, err, sizeof err) != 0) {
            sess_fail (self, "%s", err);
            sess_end_run (self);
            return -1;
        }
        sb_info ("checkpoints during training into %s: %llu bytes in %llu files each, %s",
                 wl->ckpt.folder, (unsigned long long) self->ckpt.total_bytes, (unsigned long long) self->ckpt.nfiles,
                 wl->ckpt.steps_between >= 0 ? "by step" : "by epoch");
        sb_ckpt_note_dlio_size (&self->ckpt);
    }
    uint64_t next_eval = wl->eval_after_epoch;  /* DLIO's schedule: eval_after_epoch, then every epochs_between_evals */
    for (uint64_t e = 1; e <= wl->epochs && !self->failed; e++) {
        self->phase = SESS_PHASE_TRAIN;
        self->epoch = e;
        self->ranks_done = 0;
        memset (self->rank_done, 0, self->o->accelerators);
        self->barrier_step = 0;
        self->barrier_arrived = 0;
        if (e > 1) {
            if (sb_sampler_epoch (self->sampler, e, err, sizeof err) != 0) {
                sess_fail (self, "%s", err);
                break;
            }
            self->ep_info = *sb_sampler_info (self->sampler);
            self->phase = SESS_PHASE_NONE;     /* no page is served while the lists change */
            if (s_plan_wait (self, e) != 0)
                break;
            self->phase = SESS_PHASE_TRAIN;
        }
        const sb_sampler_epoch_t *info = &self->ep_info;
        uint64_t epoch_samples = info->samples_per_rank * self->o->accelerators;
        sb_histogram_reset (&self->barrier_latency);
        sb_histogram_reset (&self->read_latency);
        sb_histogram_reset (&self->barrier_own);
        self->ep_samples = self->ep_bytes = self->ep_ranks = 0;
        self->ep_first_start = self->ep_last_finish = self->ep_au_sum = 0;
        self->ep_dlio_au_sum = self->ep_dlio_tput_sum = 0;
        for (size_t i = 0; i < self->nworkers; i++) {
            self->workers[i].steps_reached = 0;
            self->workers[i].held_s = 0;
        }
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
        if (sess_ckpt_epoch (self, e, info->steps, &start.u.phase_start) != 0)
            break;
        sess_broadcast (self, &start);
        sb_live_phase (self->live, "train", e, wl->epochs, info->steps, epoch_samples, wl->batch_size, sb_now ());
        sb_progress_phase (self->progress, sb_now ());
        char what[64];
        snprintf (what, sizeof what, "training epoch %llu", (unsigned long long) e);
        int pumped = sess_pump_until (self, sess_all_ranks_done, 0, what);
        /* DLIO's epoch AU, as recorded below (the ranks' summed over comm_size) */
        sb_live_phase_end (self->live, pumped == 0 ? self->ep_dlio_au_sum / (double) self->o->accelerators : NAN,
                           sb_now ());
        sb_progress_end_phase (self->progress, sb_now ());
        if (pumped != 0)
            break;
        /* every rank read its last file: the next epoch's lists can be planned */
        if (e < wl->epochs && s_plan_start (self, e + 1) != 0)
            break;
        if (self->ckpt_written != self->ckpt_first - 1 + self->ckpt_nsteps) {
            sess_fail (self, "epoch %llu ended with %llu of its %zu checkpoints reported by every rank",
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
            sess_fail (self, "cannot record epoch %llu: %s", (unsigned long long) e, sb_resultdb_errmsg (self->o->db));
            break;
        }
        /* DLIO's epoch figures (end_run): the ranks' AU summed over comm_size, their samples/s summed */
        double dlio_au = self->ep_dlio_au_sum / (double) self->o->accelerators, dlio_tput = self->ep_dlio_tput_sum;
        self->dlio_au[self->dlio_epochs] = dlio_au;
        self->dlio_tput[self->dlio_epochs++] = dlio_tput;
        if (sb_resultdb_epoch_dlio (self->o->db, self->run_id, e, dlio_au, dlio_tput,
                                    sb_dlio_io_mib (dlio_tput, self->record_size)) != 0) {
            sess_fail (self, "cannot record epoch %llu: %s", (unsigned long long) e, sb_resultdb_errmsg (self->o->db));
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
    self->phase = SESS_PHASE_NONE;
    if (self->dlio_epochs > 0) {
        /* DLIO's run figures over the epochs that finished (the verdict: runs.passed, sb_resultdb_run_finish) */
        sb_dlio_summary_t sum;
        sb_dlio_summarise (self->dlio_au, self->dlio_tput, self->dlio_epochs, self->record_size, wl->au, &sum);
        if (sb_resultdb_run_dlio (self->o->db, self->run_id, &sum, self->record_size) != 0)
            sess_fail (self, "cannot record the run's DLIO metrics: %s", sb_resultdb_errmsg (self->o->db));
    }
    if (self->evals > 0) {
        /* DLIO's evaluation figures over the evaluations (end_run, do_eval) */
        sb_dlio_summary_t sum;
        sb_dlio_summarise (self->eval_au, self->eval_tput, self->evals, self->record_size, wl->au, &sum);
        if (sb_resultdb_run_eval (self->o->db, self->run_id, &sum) != 0)
            sess_fail (self, "cannot record the run's DLIO evaluation metrics: %s", sb_resultdb_errmsg (self->o->db));
    }
    sess_end_run (self);
    return self->failed ? -1 : 0;
}
