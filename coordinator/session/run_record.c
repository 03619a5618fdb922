/* run_record: the run rows of the result database (coordinator/db/resultdb.h):
 * a run begun with its workers, its errors, its workflow, its end (status
 * and failure, per-endpoint totals). */
#include "session_internal.h"
#include "histogram.h"
#include "log.h"
#include "series_query.h"

#include <stdio.h>
#include <string.h>

void
sess_record_error (sess_t *self, int64_t rank, const char *host, const char *op, const char *target,
                   int64_t errno_val, const char *message)
{
    /* a row that cannot be queued is an error of its own (logged) */
    if (self->run_open && sb_resultdb_add_error (self->o->db, self->run_id, rank, host, op, target, errno_val,
                                                   message) != 0)
        sess_fail (self, "%s", sb_resultdb_errmsg (self->o->db));
}

/* Append phase to the phases this command ran (runs.workflow). */
void
sess_workflow_add (sess_t *self, const char *phase)
{
    size_t n = strlen (self->workflow);
    snprintf (self->workflow + n, sizeof self->workflow - n, "%s%s", n ? "," : "", phase);
}

int64_t
sess_begin_run (sess_t *self, const char *kind)
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
        .au_threshold = self->o->wl->au, .inputs = self->o->inputs,
    };
    sess_workflow_add (self, kind);
    int64_t id = sb_resultdb_run_begin (self->o->db, &info);
    if (id < 0) {
        sess_fail (self, "cannot write the run to the result database: %s", sb_resultdb_errmsg (self->o->db));
        return -1;
    }
    self->run_id = id;
    self->run_open = 1;
    /* the label, and the run's place in its series */
    int member = self->o->series_id > 0 && strcmp (kind, "datagen") != 0;
    if ((self->o->label || member)
        && sb_series_tag_run (self->o->db, id, self->o->label, member ? self->o->series_id : 0,
                              self->o->series_index, self->o->warmup) != 0) {
        sess_fail (self, "cannot record the series of run %lld: %s", (long long) id, sb_resultdb_errmsg (self->o->db));
        sess_end_run (self);
        return -1;
    }
    for (size_t i = 0; i < self->nworkers; i++) {
        sess_worker_t *w = &self->workers[i];
        if (sb_resultdb_add_worker (self->o->db, id, w->id, w->host, w->pid, w->ranks, w->first_rank, w->cores,
                                    w->memory) != 0
            || (w->clock_known && sb_resultdb_worker_clock (self->o->db, id, w->id, w->clock_offset,
                                                            w->clock_rtt * 1000) != 0)) {
            sess_fail (self, "cannot record worker %llu: %s", (unsigned long long) w->id, sb_resultdb_errmsg (self->o->db));
            sess_end_run (self);   /* recorded failed, not left 'running' */
            return -1;
        }
    }
    /* one run_host_info row per worker host, from the first
     * worker of that name that could read its /proc; it replaces the
     * coordinator's own row of that host name (the worker's is the host its
     * ranks ran on), and the coordinator's row stays for a host no worker ran on */
    for (size_t i = 0; i < self->nworkers; i++) {
        sess_worker_t *w = &self->workers[i];
        size_t h = 0;
        while (h < i && (strcmp (self->workers[h].host, w->host) != 0
                         || !(*self->workers[h].cpuinfo || *self->workers[h].meminfo)))
            h++;
        if (h < i || !(*w->cpuinfo || *w->meminfo))
            continue;
        if (sb_resultdb_add_host_info (self->o->db, id, w->host, w->processor, w->cpuinfo, w->meminfo) != 0) {
            sess_fail (self, "cannot record the host of worker %llu (%s): %s", (unsigned long long) w->id, w->host,
                       sb_resultdb_errmsg (self->o->db));
            sess_end_run (self);
            return -1;
        }
    }
    return id;
}

void
sess_end_run (sess_t *self)
{
    if (self->run_id <= 0)
        return;
    sb_resultdb_flush (self->o->db);
    /* every row of the run is written before it is closed (a lost one
     * fails it), however long another process holds the database */
    if (sb_resultdb_sync (self->o->db) != 0)
        sess_fail (self, "%s", sb_resultdb_errmsg (self->o->db));
    for (size_t i = 0; i < self->nendpoints; i++) {
        sess_endpoint_total_t *t = &self->endpoints[i];
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
        sess_record_error (self, -1, NULL, "run", NULL, 0, self->failure);
    /* closed: what happens from here on (a worker lost while the rows
     * drain, or before the next phase's run) belongs to no row of this run */
    self->run_open = 0;
    if (sb_resultdb_run_workflow (self->o->db, self->run_id, self->workflow) != 0)
        sess_fail (self, "cannot record the workflow of run %lld: %s", (long long) self->run_id,
                   sb_resultdb_errmsg (self->o->db));
    if (sb_resultdb_run_finish (self->o->db, self->run_id, status, self->failed ? self->failure : NULL) != 0
        || sb_resultdb_sync (self->o->db) != 0)
        sess_fail (self, "cannot close run %lld: %s", (long long) self->run_id, sb_resultdb_errmsg (self->o->db));
}
