/* event_loop: drain then wait on ZeroMQ sockets (the rule: event_loop.h). */
#include "event_loop.h"
#include "wire.h"

size_t
sb_event_drain (sb_event_recv_fn *recv_one, void *ctx, size_t cap)
{
    size_t handled = 0;
    while (handled < cap && recv_one (ctx))
        handled++;
    return handled;
}

int
sb_event_queued (zsock_t **socks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (zsock_events (socks[i]) & ZMQ_POLLIN)
            return 1;
    return 0;
}

int
sb_event_wait (zsock_t **socks, size_t n, size_t sent_on, double timeout_s)
{
    return sb_event_wait_fds (socks, n, sent_on, NULL, 0, timeout_s);
}

int
sb_event_wait_fds (zsock_t **socks, size_t n, size_t sent_on, const int *fds, size_t nfds, double timeout_s)
{
    if (sb_event_queued (socks, sent_on < n ? sent_on : n))
        return 1;
    /* drained, and no signal consumed by a send: the ZMQ_FDs tell of the
     * next frame */
    return sb_wire_wait_fds_s (socks, n, fds, nfds, timeout_s);
}
