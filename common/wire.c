/* wire: protocol messages over ZeroMQ. */
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>

#include <stdio.h>
#include <string.h>

int
sb_wire_send (zsock_t *sock, zframe_t *identity, const sb_msg_t *msg)
{
    uint8_t *data = NULL;
    size_t size = 0;
    if (sb_proto_encode (msg, &data, &size) != 0)
        return -1;
    zmsg_t *zm = zmsg_new ();
    if (!zm) {
        free (data);
        return -1;
    }
    int rc = 0;
    if (identity) {
        zframe_t *copy = zframe_dup (identity);
        rc = copy ? zmsg_append (zm, &copy) : -1;
    }
    if (rc == 0)
        rc = zmsg_addmem (zm, data, size);
    free (data);
    if (rc == 0)
        rc = zmsg_send (&zm, sock);
    zmsg_destroy (&zm);
    return rc == 0 ? 0 : -1;
}

sb_proto_status_t
sb_wire_recv (zsock_t *sock, zframe_t **identity_p, sb_msg_t *msg,
              char *reason, size_t reason_size, uint64_t *peer_version, int *interrupted)
{
    memset (msg, 0, sizeof *msg);
    if (interrupted)
        *interrupted = 0;
    if (identity_p)
        *identity_p = NULL;
    zmsg_t *zm = zmsg_recv (sock);
    if (!zm) {
        if (interrupted)
            *interrupted = 1;
        snprintf (reason, reason_size, "interrupted");
        return SB_PROTO_EMALFORMED;
    }
    if (identity_p) {
        *identity_p = zmsg_pop (zm);
        if (!*identity_p) {
            zmsg_destroy (&zm);
            snprintf (reason, reason_size, "message without identity");
            return SB_PROTO_EMALFORMED;
        }
    }
    sb_proto_status_t st;
    if (zmsg_size (zm) != 1) {
        snprintf (reason, reason_size, "%zu frames, expected 1", zmsg_size (zm));
        st = SB_PROTO_EMALFORMED;
    }
    else {
        zframe_t *f = zmsg_first (zm);
        st = sb_proto_decode (zframe_data (f), zframe_size (f), msg, reason, reason_size, peer_version);
    }
    zmsg_destroy (&zm);
    return st;
}

void
sb_wire_configure (zsock_t *sock, int linger_ms)
{
    zsock_set_maxmsgsize (sock, SB_PROTO_MAX_FRAME);
    zsock_set_linger (sock, linger_ms);
    zsock_set_sndhwm (sock, 0);
    zsock_set_rcvhwm (sock, 0);
}

int
sb_wire_wait_s (zsock_t **socks, size_t n, double timeout_s)
{
    struct pollfd stack_fds[16], *fds = n <= 16 ? stack_fds : calloc (n, sizeof *fds);
    if (!fds || n == 0) {
        errno = n == 0 ? EINVAL : ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        fds[i].fd = zsock_fd (socks[i]);
        fds[i].events = POLLIN;
        fds[i].revents = 0;
    }
    struct timespec ts, *tsp = NULL;
    if (timeout_s >= 0) {
        ts.tv_sec = (time_t) timeout_s;
        ts.tv_nsec = (long) ((timeout_s - (double) ts.tv_sec) * 1e9);
        tsp = &ts;
    }
    int rc = ppoll (fds, (nfds_t) n, tsp, NULL);
    if (fds != stack_fds)
        free (fds);
    return rc;
}
