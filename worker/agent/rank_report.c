/* report: ERROR, STATS and ENDPOINT_STATS of a rank. */
#include "rank_report.h"

#include <stdio.h>
#include <stdlib.h>

#include "log.h"

void
sb_report_failure (const sb_sender_t *out, uint64_t rank, const char *op, const char *target, int errno_val,
                   const char *message, const sb_read_result_t *detail)
{
    sb_msg_t m = { .type = SB_MSG_ERROR };
    m.u.error.rank = (int64_t) rank;
    m.u.error.op = (char *) op;
    m.u.error.target = (char *) (target ? target : "");
    m.u.error.errno_val = errno_val;
    m.u.error.message = (char *) message;
    const sb_read_result_t *d = detail;
    m.u.error.endpoint = d ? (char *) d->endpoint : "";
    m.u.error.http_status = d ? d->http_status : 0;
    m.u.error.service_code = d ? (char *) d->service_code : "";
    m.u.error.library_code = d ? d->library_code : 0;
    m.u.error.attempt = d ? d->attempt : 0;
    sb_error ("rank %llu: %s", (unsigned long long) rank, message);
    out->fn (out->ctx, &m);
}

void
sb_report_endpoints (const sb_sender_t *out, uint64_t rank, const sb_reader_endpoint_t *eps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const sb_reader_endpoint_t *e = &eps[i];
        if (!e->requests)
            continue;
        size_t bins = SB_HISTOGRAM_BINS;     /* trailing empty bins are not sent */
        while (bins > 0 && e->latency.counts[bins - 1] == 0)
            bins--;
        sb_msg_t m = { .type = SB_MSG_ENDPOINT_STATS };
        m.u.endpoint_stats.rank = rank;
        m.u.endpoint_stats.endpoint = (char *) e->endpoint;
        m.u.endpoint_stats.requests = e->requests;
        m.u.endpoint_stats.bytes = e->bytes;
        m.u.endpoint_stats.errors = e->errors;
        m.u.endpoint_stats.retries = e->retries;
        m.u.endpoint_stats.latency.count = bins;
        m.u.endpoint_stats.latency.items = (uint64_t *) e->latency.counts;
        out->fn (out->ctx, &m);
    }
}

void
sb_report_interval (const sb_sender_t *out, uint64_t rank, uint64_t epoch, sb_interval_t *st, double now, int force)
{
    if (!force && now < st->next)
        return;
    st->next = now + 1.0;
    if (!force && !st->samples && !st->bytes && !st->compute_ns && !st->steps && !st->io_wait_ns && !st->barrier_ns)
        return;
    sb_msg_t m = { .type = SB_MSG_STATS };
    m.u.stats.rank = rank;
    m.u.stats.epoch = epoch;
    m.u.stats.samples = st->samples;
    m.u.stats.bytes = st->bytes;
    m.u.stats.reads = st->reads;
    m.u.stats.read_ns = st->read_ns;
    m.u.stats.compute_ns = st->compute_ns;
    m.u.stats.steps = st->steps;
    m.u.stats.metric_compute_ns = st->metric_compute_ns;
    m.u.stats.excluded_ns = st->excluded_ns;
    m.u.stats.io_wait_ns = st->io_wait_ns;
    m.u.stats.barrier_ns = st->barrier_ns;
    m.u.stats.in_flight = st->in_flight;
    out->fn (out->ctx, &m);
    st->samples = st->bytes = st->reads = st->read_ns = st->compute_ns = 0;
    st->steps = st->metric_compute_ns = st->excluded_ns = st->io_wait_ns = st->barrier_ns = 0;
}

void
sb_report_storage_stats (const sb_sender_t *out, uint64_t rank, sb_storage_t *client)
{
    sb_storage_stats_t *stats = calloc (SB_MAX_ENDPOINTS, sizeof *stats);
    sb_reader_endpoint_t *eps = calloc (SB_MAX_ENDPOINTS, sizeof *eps);
    size_t n = stats && eps ? sb_storage_stats (client, stats, SB_MAX_ENDPOINTS) : 0;
    for (size_t i = 0; i < n; i++) {
        snprintf (eps[i].endpoint, sizeof eps[i].endpoint, "%s", stats[i].where);
        eps[i].requests = stats[i].requests;
        eps[i].bytes = stats[i].bytes;
        eps[i].errors = stats[i].errors;
        eps[i].retries = stats[i].retries;
        eps[i].latency = stats[i].latency;
    }
    if (n > 0)
        sb_report_endpoints (out, rank, eps, n);
    free (stats);
    free (eps);
}
