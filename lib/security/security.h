/* security: who may talk to the coordinator (ZeroMQ CURVE, CZMQ zcert and
 * zauth).
 *
 * A key directory, made by `shardbench keys`, holds:
 *   coordinator.cert          the coordinator's public certificate (workers need it)
 *   coordinator.cert_secret   its secret half (only on the coordinator's node)
 *   NAME.cert, NAME.cert_secret  a worker certificate (default NAME: worker)
 *   allowed/NAME.cert         public certificates the coordinator admits
 * With CURVE the coordinator's ROUTER is a CURVE server that admits only
 * clients whose public key is in allowed/; everything on the wire is
 * encrypted. A worker without an admitted certificate fails the handshake
 * and receives nothing, not even a REJECT. */
#ifndef SB_SECURITY_H
#define SB_SECURITY_H

#include <czmq.h>
#include <stddef.h>

/* 1 when a ZeroMQ endpoint is reachable only from this host (ipc://,
 * inproc://, tcp:// on 127.0.0.0/8, ::1 or localhost), else 0. */
int sb_endpoint_is_local (const char *endpoint);

/* Create dir (and dir/allowed) when missing, the coordinator's certificate
 * when missing, and worker certificate `name` (also copied into allowed/)
 * when missing. Existing certificates are never replaced. Each file made is
 * reported through note (may be NULL). Returns 0, or -1 with err set. */
int sb_keys_create (const char *dir, const char *name, void (*note) (const char *path, void *ctx), void *ctx,
                    char *err, size_t err_size);

/* Coordinator side: make router (not yet bound) a CURVE server with the
 * certificate of dir, and start the authenticator that admits the
 * certificates in dir/allowed (*auth_p; destroy it after the socket).
 * Returns 0, or -1 with err set. */
int sb_curve_server (zsock_t *router, const char *dir, zactor_t **auth_p, char *err, size_t err_size);

/* Worker side: present certificate dir/NAME.cert (NAME: name, or "worker"
 * when NULL) to the coordinator whose public certificate is
 * dir/coordinator.cert. Call before connecting. Returns 0, or -1 with err. */
int sb_curve_client (zsock_t *dealer, const char *dir, const char *name, char *err, size_t err_size);

/* Watch a socket's handshakes (call before connecting; curve: the socket
 * presents a certificate). sb_handshake_failure then tells, without
 * waiting, whether a handshake failed and why (text in why): 1 failed, 0
 * nothing to report. It also counts lost connections:
 * sb_handshake_disconnects returns how many it saw since the last call. */
typedef struct sb_handshake_watch sb_handshake_watch_t;
sb_handshake_watch_t *sb_handshake_watch_new (zsock_t *sock, int curve);
int sb_handshake_failure (sb_handshake_watch_t *self, char *why, size_t why_size);
unsigned sb_handshake_disconnects (sb_handshake_watch_t *self);
/* The socket the watch's events arrive on (borrowed), to wait on with the
 * watched socket so that a lost connection wakes the caller; NULL for NULL. */
zsock_t *sb_handshake_watch_sock (sb_handshake_watch_t *self);
void sb_handshake_watch_destroy (sb_handshake_watch_t **self_p);

#endif
