/* http_stats: the counters an HTTP object-store client keeps per endpoint.
 *
 * Apart from http_multi.h so that a client's public header can name them
 * without pulling libcurl's header into every file that includes it. */
#ifndef SB_HTTP_STATS_H
#define SB_HTTP_STATS_H

#include <stdint.h>

#include "histogram.h"

typedef struct {
    uint64_t       requests;    /* attempts sent, retries included */
    uint64_t       bytes;       /* payload bytes received or sent */
    uint64_t       errors;      /* failed attempts */
    uint64_t       retries;     /* attempts that were retried */
    sb_histogram_t latency;     /* per successful request, microseconds */
} sb_http_stats_t;

#endif
