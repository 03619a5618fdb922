/* barrier: where ranks meet. STEP messages release a step once every
 * worker reached it (GO, workload sync=step); RANK_DONE ends a rank's part of
 * a phase (checked, merged into the epoch's figures, recorded); a phase is
 * over when every rank is done.
 *
 * With more workers than shardbench.barrier_fanout (k) the arrivals meet in
 * a tree (worker/agent/barrier_tree.h): workers 0..k-1 report to the
 * coordinator, and worker j relays workers (j+1)k .. (j+1)k+k-1, so the
 * coordinator handles k arrivals and k GOs per step whatever the number of
 * workers, and a step's release takes log_k(workers) hops each way. Only
 * STEP and GO take the tree: every worker's heartbeats, RANK_DONE and errors
 * still come here, so a lost worker, relay or not, is named as before (its
 * ranks, host and pid; a relay also as the relay of its workers). */
#include "session_internal.h"
#include "ckpt_plan.h"
#include "dlio_metrics.h"
#include "histogram.h"
#include "log.h"
#include "progress.h"
#include "util.h"

#include <math.h>
#include <string.h>

/* Workers in worker i's subtree (itself included) of a heap-shaped tree of
 * n workers with k children each below the top level. */
static uint64_t
s_subtree (uint64_t i, uint64_t n, uint64_t k)
{
    uint64_t size = 0, lo = i, hi = i;
    while (lo < n) {
        size += (hi < n ? hi : n - 1) - lo + 1;
        if (lo > (UINT64_MAX - k) / k || hi > (UINT64_MAX - 2 * k) / k)
            break;
        lo = (lo + 1) * k;
        hi = (hi + 1) * k + k - 1;
    }
    return size;
}

void
sess_barrier_admit (sess_t *self, sess_worker_t *w)
{
    const sb_workload_t *wl = self->o->wl;
    uint64_t n = self->expected, k = wl->barrier_fanout;
    /* a tree pays only where the coordinator would take more arrivals than a relay */
    if (wl->sync != SB_SYNC_STEP || k < 2 || n <= k) {
        self->barrier_fanout = self->barrier_top = 0;
        return;
    }
    self->barrier_fanout = k;
    self->barrier_top = k;
    w->first_child = (w->id + 1) * k;
    w->children = w->first_child < n ? (n - w->first_child < k ? n - w->first_child : k) : 0;
    w->subtree = s_subtree (w->id, n, k);
    w->relay_endpoint[0] = '\0';
    if (!w->children)
        return;
    sb_msg_t bind = { .type = SB_MSG_RELAY_BIND };
    bind.u.relay_bind.first_child = w->first_child;
    bind.u.relay_bind.children = w->children;
    sess_send (self, w, &bind);
}

void
sess_on_relay_at (sess_t *self, sess_worker_t *w, const sb_msg_relay_at_t *m)
{
    if (!self->barrier_fanout || !w->children || w->relay_endpoint[0] || !m->endpoint[0]
        || strlen (m->endpoint) >= sizeof w->relay_endpoint || strlen (m->public_key) >= sizeof w->relay_key
        || (self->o->keys_dir && strlen (m->public_key) != 40)) {
        sess_fail (self, "worker %llu on %s sent an unexpected RELAY_AT", (unsigned long long) w->id, w->host);
        return;
    }
    snprintf (w->relay_endpoint, sizeof w->relay_endpoint, "%s", m->endpoint);
    snprintf (w->relay_key, sizeof w->relay_key, "%s", m->public_key);
}

int
sess_barrier_relays_ready (sess_t *self)
{
    if (!self->barrier_fanout)
        return 1;
    for (size_t i = 0; i < self->nworkers; i++)
        if (self->workers[i].children && !self->workers[i].relay_endpoint[0])
            return 0;
    return 1;
}

void
sess_barrier_tree_send (sess_t *self)
{
    if (!self->barrier_fanout)
        return;
    uint64_t k = self->barrier_fanout;
    for (size_t i = 0; i < self->nworkers; i++) {
        sess_worker_t *w = &self->workers[i];
        sb_msg_t m = { .type = SB_MSG_BARRIER_TREE };
        sb_msg_barrier_tree_t *t = &m.u.barrier_tree;
        t->parent = w->id < k ? UINT64_MAX : w->id / k - 1;
        t->parent_endpoint = t->parent == UINT64_MAX ? "" : self->workers[t->parent].relay_endpoint;
        t->parent_key = t->parent == UINT64_MAX ? "" : self->workers[t->parent].relay_key;
        t->first_child = w->first_child;
        t->children = w->children;
        t->subtree = w->subtree;
        sess_send (self, w, &m);
    }
    sb_info ("step barrier: a tree of %llu relay workers, %llu children each, %llu workers at the top",
             (unsigned long long) ((self->nworkers - 1) / k), (unsigned long long) k, (unsigned long long) k);
}

void
sess_relay_note (const sess_t *self, const sess_worker_t *w, char *buf, size_t size)
{
    if (self->barrier_fanout && w->children == 1)
        snprintf (buf, size, " (relay of the step barrier for worker %llu)", (unsigned long long) w->first_child);
    else if (self->barrier_fanout && w->children)
        snprintf (buf, size, " (relay of the step barrier for workers %llu-%llu)", (unsigned long long) w->first_child,
                  (unsigned long long) (w->first_child + w->children - 1));
    else if (size)
        buf[0] = '\0';
}

/* A worker's arrival at the step barrier (its STEP, or a relay's BARRIER_UP
 * for its part of the tree, `last` the worker whose STEP completed that
 * part). When it completes the barrier, the others waited for it from the
 * arrival before it of a worker on another host (of any worker when all
 * are on one host): that time is its, and its host's, hold on the run. */
static void
s_arrival (sess_t *self, size_t worker, int completes)
{
    double now = sb_now ();
    const char *host = worker < self->nworkers ? self->workers[worker].host : "";
    double before = 0;      /* the arrival before this one, of any worker */
    if (self->barrier_arrived > 1 && self->arrived_last < self->nworkers) {
        before = self->arrived_last_at;
        if (strcmp (host, self->workers[self->arrived_last].host) != 0)
            self->arrived_other_at = self->arrived_last_at;     /* the latest of another host */
    }
    self->arrived_last_at = now;
    self->arrived_last = worker;
    if (!completes)
        return;
    double from = self->arrived_other_at > 0 ? self->arrived_other_at : before;
    if (worker < self->nworkers && from > 0)
        self->workers[worker].held_s += now - from;
    self->arrived_last_at = self->arrived_other_at = 0;
    self->arrived_last = SIZE_MAX;
}

void
sess_on_barrier_up (sess_t *self, sess_worker_t *w, const sb_msg_barrier_up_t *m)
{
    if (self->phase != SESS_PHASE_TRAIN || m->epoch != self->epoch || !self->barrier_fanout || w->id >= self->barrier_top) {
        sess_fail (self, "worker %llu on %s sent an unexpected BARRIER_UP (epoch %llu, step %llu)",
                   (unsigned long long) w->id, w->host, (unsigned long long) m->epoch, (unsigned long long) m->step);
        return;
    }
    if (m->step != self->barrier_step || w->steps_reached != m->step) {
        sess_fail (self, "worker %llu on %s reached step %llu with the workers it relays while the barrier is at step %llu",
                   (unsigned long long) w->id, w->host, (unsigned long long) m->step,
                   (unsigned long long) self->barrier_step);
        return;
    }
    if (m->workers != w->subtree || m->last >= self->nworkers) {
        sess_fail (self, "worker %llu on %s reported %llu workers at step %llu (last worker %llu), its part of the"
                   " barrier tree has %llu", (unsigned long long) w->id, w->host, (unsigned long long) m->workers,
                   (unsigned long long) m->step, (unsigned long long) m->last, (unsigned long long) w->subtree);
        return;
    }
    w->steps_reached = m->step + 1;
    ++self->barrier_arrived;
    s_arrival (self, m->last, self->barrier_arrived == self->barrier_top);
    if (self->barrier_arrived < self->barrier_top)
        return;
    sb_msg_t go = { .type = SB_MSG_GO };
    go.u.go.epoch = self->epoch;
    go.u.go.step = self->barrier_step;
    go.u.go.worker = m->last;   /* its STEP completed the barrier: it measures the barrier's own cost */
    for (uint64_t i = 0; i < self->barrier_top; i++)
        sess_send (self, &self->workers[i], &go);
    self->barrier_step++;
    sb_live_step_released (self->live, self->barrier_step, sb_now ());
    self->barrier_arrived = 0;
}

void
sess_on_step (sess_t *self, sess_worker_t *w, const sb_msg_step_t *m)
{
    if (self->phase != SESS_PHASE_TRAIN || m->epoch != self->epoch || self->o->wl->sync != SB_SYNC_STEP
        || self->barrier_fanout) {
        sess_fail (self, "worker %llu on %s sent an unexpected STEP (epoch %llu, step %llu)", (unsigned long long) w->id,
                   w->host, (unsigned long long) m->epoch, (unsigned long long) m->step);
        return;
    }
    if (m->step != self->barrier_step || w->steps_reached != m->step) {
        sess_fail (self, "worker %llu on %s reached step %llu while the barrier is at step %llu",
                   (unsigned long long) w->id, w->host, (unsigned long long) m->step,
                   (unsigned long long) self->barrier_step);
        return;
    }
    w->steps_reached = m->step + 1;
    ++self->barrier_arrived;
    s_arrival (self, w->id, self->barrier_arrived == self->nworkers);
    if (self->barrier_arrived < self->nworkers)
        return;
    sb_msg_t go = { .type = SB_MSG_GO };
    go.u.go.epoch = self->epoch;
    go.u.go.step = self->barrier_step;
    go.u.go.worker = w->id;     /* its STEP completed the barrier: it measures the barrier's own cost */
    sess_broadcast (self, &go);
    self->barrier_step++;
    sb_live_step_released (self->live, self->barrier_step, sb_now ());
    self->barrier_arrived = 0;
}

void
sess_on_rank_done (sess_t *self, sess_worker_t *w, const sb_msg_rank_done_t *m)
{
    char span[64];
    if (m->rank < w->first_rank || m->rank >= w->first_rank + w->ranks || m->epoch != self->epoch
        || self->phase == SESS_PHASE_NONE) {
        sess_fail (self, "worker %llu on %s (%s) reported rank %llu done for epoch %llu unexpectedly",
                   (unsigned long long) w->id, w->host, sess_rank_span (w, span, sizeof span), (unsigned long long) m->rank,
                   (unsigned long long) m->epoch);
        return;
    }
    if (self->rank_done[m->rank]) {
        sess_fail (self, "worker %llu on %s reported rank %llu done twice for epoch %llu", (unsigned long long) w->id,
                   w->host, (unsigned long long) m->rank, (unsigned long long) m->epoch);
        return;
    }
    /* times are finite and not negative, AU a fraction: anything else would poison every mean and chart */
    if (!(m->started_at >= 0 && isfinite (m->started_at) && m->finished_at >= 0 && isfinite (m->finished_at)
          && m->compute_s >= 0 && isfinite (m->compute_s) && m->io_wait_s >= 0 && isfinite (m->io_wait_s)
          && m->barrier_s >= 0 && isfinite (m->barrier_s) && m->au >= 0 && m->au <= 1
          && m->resident_bytes <= m->checked_bytes)) {
        sess_fail (self, "rank %llu on %s reported impossible figures for epoch %llu: started %g, finished %g, compute %g s,"
                   " io wait %g s, barrier %g s, AU %g, %llu of %llu checked bytes resident", (unsigned long long) m->rank,
                   w->host, (unsigned long long) m->epoch, m->started_at, m->finished_at, m->compute_s, m->io_wait_s,
                   m->barrier_s, m->au, (unsigned long long) m->resident_bytes, (unsigned long long) m->checked_bytes);
        return;
    }
    if (self->phase == SESS_PHASE_TRAIN
        && !(m->ckpt_s >= 0 && m->ckpt_s <= m->finished_at - m->started_at)) {
        sess_fail (self, "rank %llu on %s reported %g s of checkpoints in epoch %llu of %g s", (unsigned long long) m->rank,
                   w->host, m->ckpt_s, (unsigned long long) m->epoch, m->finished_at - m->started_at);
        return;
    }
    if ((self->phase == SESS_PHASE_TRAIN || self->phase == SESS_PHASE_EVAL)
        && !(m->metric_steps <= m->batches && m->metric_compute_s >= 0 && isfinite (m->metric_compute_s)
             && m->head_proc_s >= 0 && isfinite (m->head_proc_s) && m->tail_proc_s >= 0 && isfinite (m->tail_proc_s))) {
        sess_fail (self, "rank %llu on %s reported impossible DLIO metric sums for epoch %llu: %llu of %llu steps in the"
                   " window, their compute %g s, excluded proc time %g s + %g s", (unsigned long long) m->rank, w->host,
                   (unsigned long long) m->epoch, (unsigned long long) m->metric_steps, (unsigned long long) m->batches,
                   m->metric_compute_s, m->head_proc_s, m->tail_proc_s);
        return;
    }
    if (self->phase == SESS_PHASE_TRAIN
        && (m->samples != self->ep_info.samples_per_rank || m->batches != self->ep_info.steps)) {
        sess_fail (self, "rank %llu on %s finished epoch %llu with %llu samples and %llu steps, expected %llu and %llu",
                   (unsigned long long) m->rank, w->host, (unsigned long long) m->epoch, (unsigned long long) m->samples,
                   (unsigned long long) m->batches, (unsigned long long) self->ep_info.samples_per_rank,
                   (unsigned long long) self->ep_info.steps);
        return;
    }
    if (self->phase == SESS_PHASE_EVAL
        && (m->samples != self->eval_info.samples_per_rank || m->batches != self->eval_info.steps)) {
        sess_fail (self, "rank %llu on %s finished the evaluation after epoch %llu with %llu samples and %llu steps,"
                   " expected %llu and %llu", (unsigned long long) m->rank, w->host, (unsigned long long) m->epoch,
                   (unsigned long long) m->samples, (unsigned long long) m->batches,
                   (unsigned long long) self->eval_info.samples_per_rank, (unsigned long long) self->eval_info.steps);
        return;
    }
    self->rank_done[m->rank] = 1;
    /* on the coordinator's clock: an epoch spans ranks of several hosts */
    double offset = w->clock_known ? w->clock_offset : 0, started_at = m->started_at - offset,
           finished_at = m->finished_at - offset;
    if (self->phase == SESS_PHASE_EVAL) {
        sess_on_eval_rank_done (self, w, m, started_at, finished_at);
        return;
    }
    if (self->phase == SESS_PHASE_KVCACHE) {
        sess_on_kv_rank_done (self, w, m, started_at, finished_at);
        return;
    }
    if (self->phase == SESS_PHASE_CHECKPOINT) {
        uint64_t want = self->ckpt.model_bytes[m->rank] + self->ckpt.optim_bytes[m->rank];
        if (m->bytes != want)
            sess_fail (self, "rank %llu on %s %s %llu bytes of checkpoint %llu, expected %llu", (unsigned long long) m->rank,
                       w->host, strcmp (self->ckpt_op, "write") == 0 ? "wrote" : "read", (unsigned long long) m->bytes,
                       (unsigned long long) self->ckpt_index, (unsigned long long) want);
        else if (sb_resultdb_add_ckpt_rank (self->o->db, self->run_id, m->epoch, self->ckpt_op,
                                            self->ckpt_index, m->rank, w->host, m->samples, m->bytes, started_at,
                                            finished_at) != 0)
            sess_fail (self, "cannot record rank %llu of checkpoint %llu: %s", (unsigned long long) m->rank,
                       (unsigned long long) self->ckpt_index, sb_resultdb_errmsg (self->o->db));
        self->ranks_done++;
        return;
    }
    sb_rank_epoch_t re = {
        .epoch = m->epoch, .rank = m->rank, .samples = m->samples, .batches = m->batches, .bytes = m->bytes,
        .host = w->host, .started_at = started_at, .finished_at = finished_at, .compute_s = m->compute_s,
        .compute_all_s = m->compute_all_s, .held_s = w->held_s,
        .au = m->au, .io_wait_s = m->io_wait_s, .barrier_s = m->barrier_s, .has_au = self->phase == SESS_PHASE_TRAIN,
        .resident_bytes = m->resident_bytes, .checked_bytes = m->checked_bytes,
    };
    if (self->phase == SESS_PHASE_TRAIN) {
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
    sb_live_rank_done_t live = {
        .dlio_au_pct = self->phase == SESS_PHASE_TRAIN ? re.dlio_au_percentage : NAN,
        .started_at = started_at, .finished_at = finished_at, .compute_s = m->compute_all_s,
        .io_wait_s = m->io_wait_s, .barrier_s = m->barrier_s,
        .read_latency = self->phase == SESS_PHASE_TRAIN ? m->read_latency.items : NULL,
        .read_latency_bins = m->read_latency.count,
    };
    sb_live_rank_done (self->live, m->rank, &live, sb_now ());
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
    if (sb_resultdb_add_rank_epoch (self->o->db, self->run_id, &re) != 0
        || (self->phase == SESS_PHASE_TRAIN      /* read latency per host too, not only merged */
            && sb_resultdb_host_read_latency (self->o->db, self->run_id, m->epoch, w->host, m->read_latency.items,
                                              m->read_latency.count) != 0))
        sess_fail (self, "cannot record rank %llu of epoch %llu: %s", (unsigned long long) m->rank,
                   (unsigned long long) m->epoch, sb_resultdb_errmsg (self->o->db));
    self->ranks_done++;
}

int
sess_all_ranks_done (sess_t *self)
{
    return self->ranks_done == self->o->accelerators;
}
