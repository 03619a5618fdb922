/* phase_kvcache: MLPerf Storage's KV-cache benchmark (`shardbench
 * kvcache`), trial by trial.
 *
 * The reference (mlcommons/storage kv_cache_benchmark, one MPI process per
 * client) starts each process when mpirun does and lets each run its own
 * window; mlpstorage then reads whatever per-rank JSON files are in the
 * results folder and averages over those it finds. Here every rank sets
 * itself up (its users, its folder, the storage check) and says KV_READY;
 * one GO to every worker then starts every rank's window at the same
 * instant, and a rank that does not report fails the run, naming it: no
 * figure is ever an average over the ranks that happened to finish. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kv_params.h"
#include "log.h"
#include "kv_stats.h"
#include "resultdb_kv.h"
#include "session_internal.h"
#include "util.h"

/* KV_RESULT's latency vectors: [mean, p50, p95, p99, p99.9, p99.99] in ns, or none */
#define S_LAT_VALUES 6

static int
s_all_ready (sess_t *self)
{
    return self->kv_ready == self->o->accelerators;
}

static int
s_pause_over (sess_t *self)
{
    return sb_now () >= self->wait_until;
}

static sess_kv_rank_t *
s_rank (sess_t *self, sess_worker_t *w, uint64_t rank, uint64_t trial, const char *what)
{
    char span[64];
    if (self->phase != SESS_PHASE_KVCACHE || trial != self->epoch || rank < w->first_rank
        || rank >= w->first_rank + w->ranks) {
        sess_fail (self, "worker %llu on %s (%s) sent %s of rank %llu for trial %llu unexpectedly",
                   (unsigned long long) w->id, w->host, sess_rank_span (w, span, sizeof span), what,
                   (unsigned long long) rank, (unsigned long long) trial);
        return NULL;
    }
    return &self->kv_ranks[rank];
}

void
sess_on_kv_ready (sess_t *self, sess_worker_t *w, const sb_msg_kv_ready_t *m)
{
    sess_kv_rank_t *r = s_rank (self, w, m->rank, m->trial, "KV_READY");
    if (!r)
        return;
    if (r->ready || m->users_by_type.count != 3 || m->users_by_qos.count != 3) {
        sess_fail (self, "rank %llu on %s: %s for trial %llu", (unsigned long long) m->rank, w->host,
                   r->ready ? "ready twice" : "a KV_READY without its three user types and QoS classes",
                   (unsigned long long) m->trial);
        return;
    }
    memcpy (r->users_by_type, m->users_by_type.items, sizeof r->users_by_type);
    memcpy (r->users_by_qos, m->users_by_qos.items, sizeof r->users_by_qos);
    snprintf (r->check, sizeof r->check, "%s", m->probe ? m->probe : "");
    if (strncmp (r->check, "UNVERIFIABLE", 12) == 0)     /* sb_kv_probe_status_name, first in the line */
        self->kv_unverified = 1;
    r->ready = 1;
    self->kv_ready++;
}

/* The figures a rank sent must add up before they are recorded: a count
 * that does not would make every table and chart built on it wrong. */
static const char *
s_result_problem (const sb_msg_kv_result_t *m)
{
    if (m->requests_by_type.count != 3 || m->requests_by_qos.count != 3)
        return "not three user types and three QoS classes";
    if (m->ops.count != SB_KV_OP_COUNT || m->tier_bytes.count != 4)
        return "a wrong number of counters";
    const sb_u64s_t *lat[] = { &m->write_device, &m->write_host, &m->read_device, &m->read_host, &m->write_total,
                               &m->read_total, &m->cpu_total, &m->request_storage, &m->request_e2e };
    for (size_t i = 0; i < sizeof lat / sizeof lat[0]; i++)
        if (lat[i]->count != 0 && lat[i]->count != S_LAT_VALUES)
            return "a latency vector of the wrong length";
    const uint64_t *t = m->requests_by_type.items, *q = m->requests_by_qos.items;
    if (t[0] + t[1] + t[2] != m->requests || q[0] + q[1] + q[2] != m->requests)
        return "requests per user type or per QoS class that do not add up to its requests";
    if (!(m->elapsed_s > 0 && isfinite (m->elapsed_s)))
        return "an impossible window";
    if (!m->results_json || !*m->results_json)
        return "no results JSON";
    return NULL;
}

void
sess_on_kv_result (sess_t *self, sess_worker_t *w, const sb_msg_kv_result_t *m)
{
    sess_kv_rank_t *r = s_rank (self, w, m->rank, m->trial, "KV_RESULT");
    if (!r)
        return;
    const char *problem = !r->ready ? "figures before it said it was ready" : r->result ? "figures twice"
                        : s_result_problem (m);
    if (problem) {
        sess_fail (self, "rank %llu on %s sent %s for trial %llu", (unsigned long long) m->rank, w->host, problem,
                   (unsigned long long) m->trial);
        return;
    }
    r->result = 1;
    if (sb_resultdb_kv_add_rank (self->o->db, self->run_id, w->host, m, r->users_by_type, r->users_by_qos, r->check)
        != 0)
        sess_fail (self, "cannot record rank %llu of trial %llu: %s", (unsigned long long) m->rank,
                   (unsigned long long) m->trial, sb_resultdb_errmsg (self->o->db));
    self->kv_requests += m->requests;
    self->kv_read_bytes += m->tier_bytes.items[1];
    self->kv_write_bytes += m->tier_bytes.items[0];
    self->kv_read_gibs += (double) m->tier_bytes.items[1] / 1073741824.0 / m->elapsed_s;
    self->kv_write_gibs += (double) m->tier_bytes.items[0] / 1073741824.0 / m->elapsed_s;
    if (m->request_storage.count == S_LAT_VALUES && (double) m->request_storage.items[2] / 1e6 > self->kv_p95_ms)
        self->kv_p95_ms = (double) m->request_storage.items[2] / 1e6;
}

void
sess_on_kv_rank_done (sess_t *self, sess_worker_t *w, const sb_msg_rank_done_t *m, double started_at,
                      double finished_at)
{
    if (!self->kv_ranks[m->rank].result) {
        sess_fail (self, "rank %llu on %s finished trial %llu without sending its figures", (unsigned long long) m->rank,
                   w->host, (unsigned long long) m->epoch);
        return;
    }
    sb_live_rank_done_t live = {
        .dlio_au_pct = NAN, .started_at = started_at, .finished_at = finished_at,
    };
    sb_live_rank_done (self->live, m->rank, &live, sb_now ());
    if (sb_resultdb_kv_rank_window (self->o->db, self->run_id, m->epoch, m->rank, started_at, finished_at) != 0)
        sess_fail (self, "cannot record rank %llu of trial %llu: %s", (unsigned long long) m->rank,
                   (unsigned long long) m->epoch, sb_resultdb_errmsg (self->o->db));
    if (!self->kv_ranks_done++ || started_at < self->kv_first_start)
        self->kv_first_start = started_at;
    if (started_at > self->kv_last_start)
        self->kv_last_start = started_at;
    if (finished_at > self->kv_last_finish)
        self->kv_last_finish = finished_at;
    self->ranks_done++;
}

/* After a wait for every rank timed out: name the ranks that did not get
 * there (ready, or done), with their workers' hosts, the first 8. */
static void
s_name_missing (sess_t *self, int ready)
{
    char text[1024] = "";
    size_t at = 0, n = 0;
    for (size_t i = 0; i < self->nworkers; i++) {
        const sess_worker_t *w = &self->workers[i];
        for (uint64_t r = w->first_rank; r < w->first_rank + w->ranks; r++) {
            int there = ready ? self->kv_ranks[r].ready : self->rank_done[r];
            if (there)
                continue;
            if (n++ < 8 && at < sizeof text)
                at += (size_t) snprintf (text + at, sizeof text - at, "%srank %llu on %s (worker %llu, pid %llu)",
                                         n > 1 ? ", " : "", (unsigned long long) r, w->host,
                                         (unsigned long long) w->id, (unsigned long long) w->pid);
        }
    }
    if (n)
        sb_error ("kvcache: %zu rank(s) not %s: %s%s", n, ready ? "ready" : "done", text, n > 8 ? ", ..." : "");
}

/* How long the ranks may take to set up a trial (their folder emptied, the
 * storage check's probe file written, fsynced and read back) and past the
 * window's end to stop (I/O in progress is given 2 s, a file call moving
 * more, one that does not return fails its rank: worker/kvcache/kv_rank.c):
 * shardbench.stall_timeout_s, the bound of a training read that does not
 * return; 0: no bound. A rank past it fails the run, named. */
static double
s_grace (const sess_t *self)
{
    return self->o->wl->stall_timeout_s;
}

/* Did a wait from since fail by running out its limit (not a rank's own
 * failure, a lost worker or a signal)? Then the ranks it waited for are named. */
static int
s_timed_out (const sess_t *self, double since, double limit)
{
    return !self->aborted && limit > 0 && sb_now () - since >= limit;
}

/* One trial; 0, or -1 when the run failed or was stopped. */
static int
s_trial (sess_t *self, const sb_kv_params_t *kv, uint64_t trial, char **strs, size_t nstrs)
{
    char what[192];
    self->phase = SESS_PHASE_KVCACHE;
    self->epoch = trial;
    self->ranks_done = 0;
    self->kv_ready = 0;
    self->kv_requests = self->kv_read_bytes = self->kv_write_bytes = 0;
    self->kv_read_gibs = self->kv_write_gibs = self->kv_p95_ms = 0;
    self->kv_last_finish = self->kv_first_start = self->kv_last_start = 0;
    self->kv_ranks_done = 0;
    memset (self->rank_done, 0, self->o->accelerators);
    memset (self->kv_ranks, 0, self->o->accelerators * sizeof *self->kv_ranks);
    sb_msg_t start = { .type = SB_MSG_PHASE_START };
    sb_msg_phase_start_t *ps = &start.u.phase_start;
    ps->phase = "kvcache";
    ps->run_id = (uint64_t) self->run_id;
    ps->epoch = trial;
    ps->kv = (sb_strs_t) { .items = strs, .count = nstrs };
    sess_broadcast (self, &start);
    snprintf (what, sizeof what, "waiting for the ranks to set up kvcache trial %llu (shardbench.stall_timeout_s)",
              (unsigned long long) trial);
    double waited_from = sb_now ();
    if (sess_pump_until (self, s_all_ready, s_grace (self), what) != 0) {
        if (s_timed_out (self, waited_from, s_grace (self)))
            s_name_missing (self, 1);
        return -1;
    }
    /* every rank's window starts now */
    sb_msg_t go = { .type = SB_MSG_GO };
    go.u.go = (sb_msg_go_t) { .epoch = trial, .step = 0, .worker = UINT64_MAX };
    self->kv_go_at = sb_now ();
    sess_broadcast (self, &go);
    sb_info ("kvcache trial %llu/%llu: %llu ranks started, %.0f s", (unsigned long long) trial,
             (unsigned long long) kv->trials, (unsigned long long) self->o->accelerators, kv->duration_s);
    sb_live_phase (self->live, "kvcache", trial, kv->trials, 0, 0, 0, sb_now ());
    sb_progress_phase (self->progress, sb_now ());
    snprintf (what, sizeof what, "in kvcache trial %llu (%.6g s window + shardbench.stall_timeout_s %.6g s)",
              (unsigned long long) trial, kv->duration_s, s_grace (self));
    double limit = s_grace (self) > 0 ? kv->duration_s + s_grace (self) : 0;
    waited_from = sb_now ();
    int pumped = sess_pump_until (self, sess_all_ranks_done, limit, what);
    if (pumped != 0 && s_timed_out (self, waited_from, limit))
        s_name_missing (self, 0);
    sb_live_phase_end (self->live, NAN, sb_now ());
    sb_progress_end_phase (self->progress, sb_now ());
    if (pumped != 0)
        return -1;
    if (sb_resultdb_kv_close_trial (self->o->db, self->run_id, trial, self->kv_go_at, self->kv_last_finish) != 0) {
        sess_fail (self, "cannot record trial %llu: %s", (unsigned long long) trial, sb_resultdb_errmsg (self->o->db));
        return -1;
    }
    sb_info ("kvcache trial %llu/%llu: %llu ranks, their windows started within %.1f ms; %llu requests, storage read"
             " %.3f GiB/s, write %.3f GiB/s (sums over ranks), storage I/O p95 %.3f ms (the largest rank's)",
             (unsigned long long) trial, (unsigned long long) kv->trials, (unsigned long long) self->o->accelerators,
             (self->kv_last_start - self->kv_first_start) * 1e3, (unsigned long long) self->kv_requests,
             self->kv_read_gibs, self->kv_write_gibs, self->kv_p95_ms);
    return 0;
}

int
sess_phase_kvcache (sess_t *self)
{
    const sb_kv_params_t *kv = self->o->kv;
    const sb_kv_model_t *model = sb_kv_model_find (kv->model);
    char **strs = NULL;
    size_t nstrs = 0;
    if (!model) {       /* checked by the command already */
        sess_fail (self, "kvcache: unknown model '%s'", kv->model);
        return -1;
    }
    if (!(self->kv_ranks = calloc (self->o->accelerators, sizeof *self->kv_ranks))
        || sb_kv_params_to_strs (kv, &strs, &nstrs) != 0) {
        sess_fail (self, "out of memory for %llu ranks", (unsigned long long) self->o->accelerators);
        return -1;
    }
    if (sess_begin_run (self, "kvcache") < 0)
        goto done;
    sb_kv_run_row_t row = {
        .option = kv->option, .model = kv->model, .users = kv->users, .duration_s = kv->duration_s,
        .trials = kv->trials, .cpu_mem_gb = kv->cpu_mem_gb, .max_concurrent_allocs = kv->max_concurrent_allocs,
        .seed = kv->seed, .generation_mode = kv->generation_mode,
        .bytes_per_position = sb_kv_model_bytes_per_token (model), .storage_check = "ok",
    };
    if (sb_resultdb_kv_begin_run (self->o->db, self->run_id, &row) != 0) {
        sess_fail (self, "cannot record the run's settings: %s", sb_resultdb_errmsg (self->o->db));
        goto end;
    }
    char allocs[32] = "no limit on";
    if (kv->max_concurrent_allocs)
        snprintf (allocs, sizeof allocs, "at most %llu", (unsigned long long) kv->max_concurrent_allocs);
    sb_info ("kvcache: %s%s%s, %llu users per rank, %llu ranks, %llu trials of %.0f s, %llu bytes per token,"
             " CPU tier %.6g GiB, %s allocations at once, generation %s, seed %llu + rank",
             kv->option ? "MLPerf option " : "", kv->option ? (kv->option == 1 ? "1 " : kv->option == 2 ? "2 " : "3 ")
             : "", kv->model, (unsigned long long) kv->users, (unsigned long long) self->o->accelerators,
             (unsigned long long) kv->trials, kv->duration_s, (unsigned long long) row.bytes_per_position,
             kv->cpu_mem_gb, allocs, kv->generation_mode,
             (unsigned long long) kv->seed);
    /* the reference's figures are not the window's alone: say so once (docs/KVCACHE.md, "The window's end") */
    sb_info ("kvcache: the reference also counts the reads and writes of the requests in progress when its window"
             " ends (they go on for up to 2 s after it, divided by the window's length); shardbench counts the"
             " window only, so on slow storage its figures are lower by that share");
    for (uint64_t t = 1; t <= kv->trials && !self->failed; t++) {
        if (kv->pause_s > 0) {
            /* mlperf_wrapper.py sleeps 90 s before each pass: the device settles from the last one */
            self->wait_until = sb_now () + kv->pause_s;
            if (sess_pump_until (self, s_pause_over, 0, "the pause before a trial") != 0)
                break;
        }
        if (s_trial (self, kv, t, strs, nstrs) != 0)
            break;
    }
end:
    self->phase = SESS_PHASE_NONE;
    if (sb_resultdb_kv_close_run (self->o->db, self->run_id, self->kv_refused ? "refused"
                                  : self->kv_unverified ? "unverifiable" : "ok") != 0 && !self->failed)
        sess_fail (self, "cannot record the run's figures: %s", sb_resultdb_errmsg (self->o->db));
    sess_end_run (self);
done:
    for (size_t i = 0; i < nstrs; i++)
        free (strs[i]);
    free (strs);
    free (self->kv_ranks);
    self->kv_ranks = NULL;
    return self->failed ? -1 : 0;
}
