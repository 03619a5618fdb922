/* metrics_server: `--metrics ADDR`, the run's live figures over plain HTTP
 * (GET /metrics, the Prometheus text format of openmetrics.h).
 *
 * A thread of its own accepts one connection at a time and reads its
 * request within bounds (8 KiB, 2 s): a slow or silent client holds that
 * thread for 2 s at most and never the session's. For GET /metrics it asks
 * the session's thread for a rendering (a flag under a mutex) and waits
 * for it on a condition variable: the session renders from the live model
 * in its housekeeping (sb_metrics_server_poll, at least every 50 ms), so
 * the model is only ever read on the thread that feeds it. When the session
 * cannot answer within 2 s (a long blocking step) the last rendering is
 * sent, or 503 when there is none. A rendering less than 1 s old is sent
 * again without asking (the workers report once a second; a client that
 * scrapes back to back must not keep the session rendering). Other paths
 * get 404, other methods 405.
 *
 * Between and after sessions (sb_metrics_server_end), every scrape gets the
 * final rendering of the last session at once: the figures as recorded.
 * The server serves until it is destroyed, when the command exits.
 *
 * Nothing secret is served: the figures only (openmetrics.h cuts
 * credentials out of endpoint URLs). */
#ifndef SB_METRICS_SERVER_H
#define SB_METRICS_SERVER_H

#include <stddef.h>

#include "live.h"

typedef struct _sb_metrics_server_t sb_metrics_server_t;

/* Parse ADDR ("HOST:PORT", "[IPV6]:PORT", ":PORT" for every address; port 0
 * picks a free one), bind it, listen and start the thread; logs the info
 * line "metrics: serving http://ADDR/metrics" with the bound address.
 * NULL with the reason in err (a bad ADDR, an address that cannot be
 * bound). */
sb_metrics_server_t *sb_metrics_server_new (const char *addr, char *err, size_t err_size);

/* Stop the thread (a scrape in progress is cut) and free everything. */
void sb_metrics_server_destroy (sb_metrics_server_t **self_p);

/* "http://HOST:PORT/metrics" as bound (borrowed). */
const char *sb_metrics_server_url (const sb_metrics_server_t *self);

/* A session feeds a live model from now on: scrapes wait for a rendering
 * by sb_metrics_server_poll. NULL self: nothing (no --metrics). */
void sb_metrics_server_begin (sb_metrics_server_t *self);

/* On the session's thread, often (its housekeeping): when a scrape waits,
 * render live at now for it. Returns 1 when it rendered, else 0. */
int sb_metrics_server_poll (sb_metrics_server_t *self, const sb_live_t *live, double now);

/* The session is over: render live at now once more, the final figures
 * every later scrape gets until the next sb_metrics_server_begin. */
void sb_metrics_server_end (sb_metrics_server_t *self, const sb_live_t *live, double now);

#endif
