/* wire: send and receive protocol messages on ZeroMQ sockets.
 *
 * A ROUTER socket carries [identity, payload]; every other socket carries
 * [payload]. Payload is one msgpack frame (see proto.h).
 *
 * SHARDBENCH_WIRE_TRACE=FILE in the environment makes sb_wire_send and
 * sb_wire_recv append every payload frame to FILE (format in wire.c). */
#ifndef SB_WIRE_H
#define SB_WIRE_H

#include <czmq.h>

#include "proto.h"

/* Encode and send msg. identity (borrowed) is the ROUTER peer, NULL on other
 * sockets. Returns 0, or -1 when encoding or sending failed. */
int sb_wire_send (zsock_t *sock, zframe_t *identity, const sb_msg_t *msg);

/* Receive one message. On a ROUTER socket *identity_p receives the peer's
 * identity (caller destroys); pass NULL otherwise. Returns SB_PROTO_OK with
 * *msg filled (caller calls sb_proto_fini), or a status with reason set; when
 * the receive itself failed (interrupted, socket closed) returns
 * SB_PROTO_EMALFORMED with reason "interrupted" and *interrupted = 1.
 * SB_PROTO_EVERSION for a HELLO, or SB_PROTO_EFIELD for a HELLO with
 * another number of fields (another build that kept the version number),
 * leaves *msg a HELLO with only its host and software (sb_proto_hello_any),
 * to name the peer: call sb_proto_fini (it does nothing to the empty
 * message of any other failure). */
sb_proto_status_t sb_wire_recv (zsock_t *sock, zframe_t **identity_p, sb_msg_t *msg,
                                char *reason, size_t reason_size, uint64_t *peer_version,
                                int *interrupted);

/* Block until one of n sockets may have frames, up to timeout_s seconds
 * (negative: no limit; nanosecond resolution), with one ppoll(2) on their
 * ZMQ_FDs. Unlike zmq_poll, which asks every socket for ZMQ_EVENTS before
 * and after waiting (a syscall each when idle), this costs one syscall per
 * wake-up. The ZMQ_FD contract applies: call it only after every socket
 * was drained until a receive found nothing (EAGAIN) and nothing was sent
 * on it since (a send can consume the signal of a frame that arrived meanwhile:
 * check zsock_events () first), or it may sleep with frames queued. Returns the number of sockets signalled, 0 on timeout, -1
 * on error (EINTR included). Loops call sb_event_wait (event_loop.h), which
 * applies that rule, not this. */
int sb_wire_wait_s (zsock_t **socks, size_t n, double timeout_s);

/* sb_wire_wait_s on the n sockets and also on nfds plain file descriptors
 * (POLLIN; e.g. an sb_chan_fd armed by sb_chan_arm): the count of sockets
 * and fds ready. n + nfds must be at least 1. */
int sb_wire_wait_fds_s (zsock_t **socks, size_t n, const int *fds, size_t nfds, double timeout_s);

/* Apply the socket options every shardbench socket gets: ZMQ_MAXMSGSIZE,
 * no linger beyond linger_ms, and unlimited high-water marks for control
 * traffic (flow is bounded by credits in the protocol). */
void sb_wire_configure (zsock_t *sock, int linger_ms);

#endif
