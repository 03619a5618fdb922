/* wire: protocol messages over ZeroMQ.
 *
 * Opt-in trace: when the environment variable SHARDBENCH_WIRE_TRACE names a
 * file, sb_wire_send and sb_wire_recv append every payload frame they send
 * or receive to it, as one record per frame:
 *
 *   SBWIRE <send|recv> <pid> <TYPE> <bytes>\n<the raw msgpack bytes>\n
 *
 * (TYPE is the message type, `?` for a frame that did not decode). The file
 * is opened once per process with O_APPEND and mode 0600, and each record is
 * one write(2), so the coordinator, workers and threads of one run can share
 * a file without interleaving records. It captures what the processes say to
 * each other, before encryption, e.g. to check that no secret is in it; the
 * frames the worker agent decodes itself (coordinator -> agent after WELCOME)
 * are in the trace as the coordinator's sends. Tracing failures are reported
 * once and never fail a send. */
#include "wire.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <stdio.h>
#include <string.h>

static pthread_once_t s_trace_once = PTHREAD_ONCE_INIT;
static int s_trace_fd = -1;
static int s_trace_warned;

static void
s_trace_open (void)
{
    const char *path = getenv ("SHARDBENCH_WIRE_TRACE");
    if (!path || !*path)
        return;
    s_trace_fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (s_trace_fd < 0)
        sb_warn ("SHARDBENCH_WIRE_TRACE: cannot open %s: %s; messages are not traced", path, strerror (errno));
}

/* Append one record (see the banner) when tracing is on. */
static void
s_trace (const char *dir, int type, const uint8_t *data, size_t size)
{
    pthread_once (&s_trace_once, s_trace_open);
    if (s_trace_fd < 0)
        return;
    char head[96];
    int n = snprintf (head, sizeof head, "SBWIRE %s %ld %s %zu\n", dir, (long) getpid (), sb_proto_type_name (type),
                      size);
    if (n < 0 || (size_t) n >= sizeof head)
        return;
    char *rec = malloc ((size_t) n + size + 1);
    int err = rec ? 0 : ENOMEM;
    if (rec) {
        memcpy (rec, head, (size_t) n);
        if (size)
            memcpy (rec + n, data, size);
        rec[(size_t) n + size] = '\n';
        ssize_t w = write (s_trace_fd, rec, (size_t) n + size + 1);
        err = w < 0 ? errno : EIO;      /* EIO: a short write */
        free (rec);
        if (w == (ssize_t) ((size_t) n + size + 1))
            return;
    }
    if (!__atomic_exchange_n (&s_trace_warned, 1, __ATOMIC_SEQ_CST))
        sb_warn ("SHARDBENCH_WIRE_TRACE: a record could not be written: %s", strerror (err));
}

int
sb_wire_send (zsock_t *sock, zframe_t *identity, const sb_msg_t *msg)
{
    uint8_t *data = NULL;
    size_t size = 0;
    if (sb_proto_encode (msg, &data, &size) != 0)
        return -1;
    if (size > SB_PROTO_MAX_FRAME) {    /* the peer would drop the connection: refuse it here (EMSGSIZE) */
        free (data);
        errno = EMSGSIZE;
        return -1;
    }
    s_trace ("send", (int) msg->type, data, size);
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
        char *host, *software;
        int other = 0;
        if ((st == SB_PROTO_EVERSION || st == SB_PROTO_EFIELD)
            && sb_proto_hello_any (zframe_data (f), zframe_size (f), &host, &software, &other) == 0) {
            if (st == SB_PROTO_EVERSION || other) {
                msg->type = SB_MSG_HELLO;   /* who speaks another version (wire.h) */
                msg->u.hello.host = host;
                msg->u.hello.software = software;
            }
            else {
                free (host);
                free (software);
            }
        }
        s_trace ("recv", st == SB_PROTO_OK ? (int) msg->type : -1, zframe_data (f), zframe_size (f));   /* -1: "?" */
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
    return sb_wire_wait_fds_s (socks, n, NULL, 0, timeout_s);
}

int
sb_wire_wait_fds_s (zsock_t **socks, size_t n, const int *fds, size_t nfds, double timeout_s)
{
    size_t all = n + nfds;
    struct pollfd stack_fds[16], *pfds = all <= 16 ? stack_fds : calloc (all, sizeof *pfds);
    if (!pfds || all == 0) {
        errno = all == 0 ? EINVAL : ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < all; i++) {
        pfds[i].fd = i < n ? zsock_fd (socks[i]) : fds[i - n];
        pfds[i].events = POLLIN;
        pfds[i].revents = 0;
    }
    struct timespec ts, *tsp = NULL;
    if (timeout_s >= 0) {
        ts.tv_sec = (time_t) timeout_s;
        ts.tv_nsec = (long) ((timeout_s - (double) ts.tv_sec) * 1e9);
        tsp = &ts;
    }
    int rc = ppoll (pfds, (nfds_t) all, tsp, NULL);
    if (pfds != stack_fds)
        free (pfds);
    return rc;
}
