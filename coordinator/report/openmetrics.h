/* openmetrics: the run's live figures (live.h) in the Prometheus text
 * exposition format (version 0.0.4, which OpenMetrics parsers read too),
 * for `--metrics ADDR` (metrics_server.h) and Prometheus, Grafana.
 *
 * Every family is prefixed shardbench_, names carry their unit (_seconds,
 * _bytes, _ratio), counters end in _total, and each has HELP and TYPE
 * lines; docs/METRICS.md lists them. Labels are bounded: rank and host per
 * rank, host per host, endpoint per endpoint (at most the live model's
 * endpoints), phase on one info gauge.
 *
 * What is not known yet (an ETA, an AU before the first step) is left out,
 * not written as 0. Endpoint labels never carry credentials: the userinfo
 * (user:password@), the query and the fragment of a URL are cut. */
#ifndef SB_OPENMETRICS_H
#define SB_OPENMETRICS_H

#include <stddef.h>
#include <stdio.h>

#include "live.h"

/* The Content-Type of what sb_openmetrics_render writes. */
#define SB_OPENMETRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The latency histograms' upper bounds, in microseconds: 2^5 .. 2^24 (32 us
 * to 16.8 s), each the lowest value of a bin of lib/metrics/histogram.h, so
 * that a bucket holds exactly the bins below it (+Inf follows). */
#define SB_OPENMETRICS_BUCKETS 20
extern const uint64_t sb_openmetrics_bucket_us[SB_OPENMETRICS_BUCKETS];

/* Write the exposition of live as it stands at now (the clock of its
 * feeding, sb_now) to out. live may be NULL: the families without samples.
 * A pure function of the model and now. Returns 0, or -1 when out fails
 * (errno). */
int sb_openmetrics_render (const sb_live_t *live, double now, FILE *out);

/* Label value text as the format wants it: backslash, double quote and
 * newline escaped; other control bytes and bytes that are not UTF-8 as
 * U+FFFD. Writes at most size bytes with the NUL (cut before a character
 * that does not fit). Returns out. */
const char *sb_openmetrics_label (const char *in, char *out, size_t size);

/* An endpoint as it may be shown: a URL without its userinfo, query and
 * fragment ("https://user:key@host:9000/b?sig=x" is
 * "https://host:9000/b"); other text as it is. Returns out. */
const char *sb_openmetrics_endpoint (const char *in, char *out, size_t size);

#endif
