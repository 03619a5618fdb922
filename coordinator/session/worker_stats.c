/* worker_stats: what the workers report besides their progress through a
 * phase: per-endpoint totals (ENDPOINT_STATS), per-rank counters (STATS,
 * the timeseries and the live status) and errors (ERROR, which fail the
 * run). */
#include "session_internal.h"
#include "histogram.h"
#include "log.h"
#include "util.h"
#include "progress.h"

#include <stdio.h>
#include <string.h>

void
sess_on_endpoint_stats (sess_t *self, const sb_msg_endpoint_stats_t *m)
{
    sess_endpoint_total_t *t = NULL;
    char endpoint[sizeof t->endpoint];  /* the worker's text: escaped for the log, the summary and the database */
    sb_log_escape (m->endpoint, endpoint, sizeof endpoint);
    for (size_t i = 0; i < self->nendpoints && !t; i++)
        if (strcmp (self->endpoints[i].endpoint, endpoint) == 0)
            t = &self->endpoints[i];
    if (!t) {
        if (self->nendpoints == SB_MAX_ENDPOINTS) {
            sb_warn ("more than %d endpoints reported: %s not counted", SB_MAX_ENDPOINTS, endpoint);
            return;
        }
        t = &self->endpoints[self->nendpoints++];
        memset (t, 0, sizeof *t);
        snprintf (t->endpoint, sizeof t->endpoint, "%s", endpoint);
    }
    t->requests += m->requests;
    t->bytes += m->bytes;
    t->errors += m->errors;
    t->retries += m->retries;
    sb_histogram_merge_counts (&t->latency, m->latency.items, m->latency.count);
    sb_live_endpoint (self->live, m->rank, endpoint, m->requests, m->bytes, m->errors, m->retries, m->latency.items,
                      m->latency.count);
}

/* ERROR: its text is the worker's, escaped (sb_log_escape) before it
 * reaches the log, the failure or the errors table: a newline or an escape
 * sequence in it would forge log lines or drive the terminal. */
void
sess_on_error (sess_t *self, sess_worker_t *w, const sb_msg_error_t *m)
{
    char op[64], target[1024], message[2048], endpoint[512], service_code[128];
    sb_log_escape (m->op, op, sizeof op);
    sb_log_escape (m->target, target, sizeof target);
    sb_log_escape (m->message, message, sizeof message);
    sb_log_escape (m->endpoint, endpoint, sizeof endpoint);
    sb_log_escape (m->service_code, service_code, sizeof service_code);
    sb_error_detail_t d = { .endpoint = endpoint, .http_status = m->http_status, .service_code = service_code,
                            .library_code = m->library_code, .attempt = m->attempt };
    if (self->run_id > 0 && sb_resultdb_add_error_detail (self->o->db, self->run_id, m->rank, w->host, op, target,
                                                          m->errno_val, message, &d) != 0)
        sb_error ("cannot record the error of worker %llu: %s", (unsigned long long) w->id,
                  sb_resultdb_errmsg (self->o->db));
    if (self->phase == SESS_PHASE_KVCACHE && strcmp (m->op, "kvcache_check") == 0)
        self->kv_refused = 1;     /* the storage check refused: kv_runs.storage_check says so */
    if (m->rank >= 0)
        sess_fail (self, "rank %lld on %s: %s", (long long) m->rank, w->host, message);
    else
        sess_fail (self, "worker %llu on %s: %s", (unsigned long long) w->id, w->host, message);
}

void
sess_on_stats (sess_t *self, sess_worker_t *w, const sb_msg_stats_t *m)
{
    if (m->rank < w->first_rank || m->rank >= w->first_rank + w->ranks || m->epoch != self->epoch) {
        self->rejected_frames++;
        sb_warn ("STATS for rank %llu epoch %llu from worker %llu on %s ignored (not its rank or not this epoch)",
                 (unsigned long long) m->rank, (unsigned long long) m->epoch, (unsigned long long) w->id, w->host);
        return;
    }
    if (self->run_id > 0 && self->phase != SESS_PHASE_EVAL   /* timeseries: the training epochs' seconds */
        && sb_resultdb_add_stats (self->o->db, self->run_id, sb_now (), m->epoch, m->rank, m->samples, m->bytes,
                                  m->reads, (double) m->read_ns / 1e9, (double) m->compute_ns / 1e9) != 0)
        sess_fail (self, "cannot record the counters of rank %llu: %s", (unsigned long long) m->rank,
                   sb_resultdb_errmsg (self->o->db));
    sb_live_interval_t d = {
        .samples = m->samples, .bytes = m->bytes, .reads = m->reads, .read_ns = m->read_ns,
        .compute_ns = m->compute_ns, .steps = m->steps, .metric_compute_ns = m->metric_compute_ns,
        .excluded_ns = m->excluded_ns, .io_wait_ns = m->io_wait_ns, .barrier_ns = m->barrier_ns,
        .in_flight = m->in_flight,
    };
    sb_live_stats (self->live, m->rank, &d, sb_now ());
}
