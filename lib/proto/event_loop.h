/* event_loop: the one rule for waiting on ZeroMQ sockets, shared by the
 * coordinator's loop (coordinator/session/loop.c) and the worker's
 * (worker/agent/agent.c).
 *
 * A socket's ZMQ_FD is edge-triggered: it turns readable when the socket's
 * state changes, not while frames are queued. A loop that sleeps on it
 * must therefore
 *   1. drain: receive from every socket until a receive finds nothing
 *      (EAGAIN), or stop at a cap and not sleep (sb_event_drain);
 *   2. before sleeping, ask every socket it sent on since draining whether
 *      a frame is queued (ZMQ_EVENTS): a send processes the socket's
 *      commands and can consume the signal of a frame that arrived
 *      meanwhile (sb_event_wait does this first);
 *   3. only then sleep on the ZMQ_FDs (sb_event_wait, one ppoll).
 * Otherwise it may sleep with frames queued until its timeout. */
#ifndef SB_EVENT_LOOP_H
#define SB_EVENT_LOOP_H

#include <czmq.h>
#include <stddef.h>

/* Receive and handle one message (ctx: the caller's). Returns 1 when it
 * handled one, 0 when none was queued (the receive found nothing) or the
 * caller wants the drain to stop (its loop is done). The receive must not
 * block (receive timeout 0, or ZMQ_DONTWAIT). */
typedef int (sb_event_recv_fn) (void *ctx);

/* Drain: call recv_one until it returns 0 or it has handled cap messages.
 * Returns how many it handled; cap means frames may still be queued (the
 * caller must not sleep before draining again). */
size_t sb_event_drain (sb_event_recv_fn *recv_one, void *ctx, size_t cap);

/* 1 when one of the n sockets has a frame queued (ZMQ_EVENTS), else 0. */
int sb_event_queued (zsock_t **socks, size_t n);

/* Sleep until one of the n sockets may have frames, up to timeout_s
 * seconds (0: do not sleep; negative: no limit). Call it only after every
 * socket was drained (sb_event_drain returned below its cap). The first
 * sent_on sockets are those the caller sent on since draining them: when
 * one of them has a frame queued (ZMQ_EVENTS) it returns at once, without
 * sleeping. Returns the number of sockets ready (at least 1 when a frame
 * was found queued), 0 on timeout, -1 on error (EINTR included: a signal). */
int sb_event_wait (zsock_t **socks, size_t n, size_t sent_on, double timeout_s);

/* sb_event_wait that also sleeps on nfds plain file descriptors (POLLIN),
 * each made ready to sleep on by its owner first (e.g. sb_chan_arm, which
 * says when messages are queued and the loop must not sleep). */
int sb_event_wait_fds (zsock_t **socks, size_t n, size_t sent_on, const int *fds, size_t nfds, double timeout_s);

#endif
