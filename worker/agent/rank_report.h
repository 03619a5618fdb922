/* report: the messages a rank sends about itself (ERROR, STATS,
 * ENDPOINT_STATS), shared by datagen (worker/datagen/rank.c) and training
 * (worker/trainer/trainer.c). Each goes out through a sender the caller supplies. */
#ifndef SB_RANK_REPORT_H
#define SB_RANK_REPORT_H

#include <stdint.h>

#include "proto.h"
#include "reader.h"
#include "engine.h"

/* Where a rank's messages go: fn (ctx, msg) returns 0 or -1. */
typedef struct {
    int  (*fn) (void *ctx, const sb_msg_t *msg);
    void  *ctx;
} sb_sender_t;

/* Counters of a rank since its last STATS (deltas), and when the next is due. */
typedef struct {
    uint64_t samples, bytes, reads, read_ns, compute_ns;
    uint64_t steps, metric_compute_ns, excluded_ns, io_wait_ns, barrier_ns;
    uint64_t in_flight;     /* a level: set before each report */
    double   next;          /* sb_now () time of the next STATS */
} sb_interval_t;

/* ERROR that ends the run; detail (may be NULL: a failure of no engine with
 * endpoints) adds the request's endpoint, HTTP status, the service's and the
 * client library's error codes and the attempt. Also logged. */
void sb_report_failure (const sb_sender_t *out, uint64_t rank, const char *op, const char *target, int errno_val,
                        const char *message, const sb_read_result_t *detail);

/* ENDPOINT_STATS for every endpoint with traffic. */
void sb_report_endpoints (const sb_sender_t *out, uint64_t rank, const sb_reader_endpoint_t *eps, size_t n);
/* The counters per endpoint or device that client gathered since the last
 * call (sb_storage_stats, which resets them), sent as sb_report_endpoints
 * sends them; nothing when the engine keeps none. */
void sb_report_storage_stats (const sb_sender_t *out, uint64_t rank, sb_storage_t *client);

/* STATS with the interval's counters when a second has passed (or force),
 * then the counters restart. now: sb_now (). */
void sb_report_interval (const sb_sender_t *out, uint64_t rank, uint64_t epoch, sb_interval_t *st, double now,
                         int force);

#endif
