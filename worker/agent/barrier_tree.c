/* barrier_tree: the worker's part in the step barrier's tree (barrier_tree.h). */
#include "barrier_tree.h"
#include "security.h"
#include "wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct sb_btree {
    uint64_t      worker;
    sb_btree_io_t io;
    int           in_use;
    zsock_t      *router;       /* the relay's: children connect here (NULL: not a relay) */
    zsock_t      *parent;       /* DEALER to the parent relay (NULL: the parent is the coordinator) */
    uint64_t      parent_id;
    uint64_t      first_child, children;
    zframe_t    **child_id;     /* each child's routing id, once it spoke */
    uint8_t      *child_in;     /* arrived at the barrier under way */
    int           own_in;
    /* the barrier under way: its step, who arrived, the workers they stand for */
    uint64_t      epoch, step, arrived, workers, last;
};

sb_btree_t *
sb_btree_new (uint64_t worker, const sb_btree_io_t *io)
{
    sb_btree_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->worker = worker;
    self->io = *io;
    self->parent_id = UINT64_MAX;
    return self;
}

void
sb_btree_destroy (sb_btree_t **self_p)
{
    sb_btree_t *self = *self_p;
    if (!self)
        return;
    for (uint64_t i = 0; self->child_id && i < self->children; i++)
        zframe_destroy (&self->child_id[i]);
    free (self->child_id);
    free (self->child_in);
    zsock_destroy (&self->router);
    zsock_destroy (&self->parent);
    free (self);
    *self_p = NULL;
}

/* The address this host reaches the coordinator from, as a ZeroMQ bind
 * endpoint with an ephemeral port: children on other hosts reach the relay
 * where this host reaches the coordinator (the route's source address, as
 * the kernel picks it for a UDP connect, which sends nothing). An ipc://
 * coordinator is on this host: the relay's socket goes into the same
 * folder. */
static int
s_bind_endpoint (const char *coordinator, char *out, size_t size, int *ipv6, char *err, size_t err_size)
{
    *ipv6 = 0;
    if (strncmp (coordinator, "ipc://", 6) == 0) {
        const char *path = coordinator + 6;
        const char *slash = strrchr (path, '/');
        if (path[0] == '@' || !slash) {
            /* an abstract (or relative) coordinator socket is as open to
             * this host's users as the relay's would be: nothing to guard */
            snprintf (out, size, "ipc://@shardbench-relay-%d-%08" PRIx32, (int) getpid (), (uint32_t) zclock_usecs ());
            return 0;
        }
        /* beside the coordinator's socket, in the folder --local made private
         * (mode 0700): a Unix socket in the abstract namespace could be
         * reached by any local user, who could then pose as a child (the
         * relay knows its children by the routing ids they declare) and
         * release the barrier early. "r" PID ".sock" is never longer than
         * "coordinator.sock", so it fits where the coordinator's fits. */
        char name[32];
        snprintf (name, sizeof name, "r%d.sock", (int) getpid ());
        size_t dir_len = (size_t) (slash - path) + 1;
        if (dir_len + strlen (name) >= sizeof ((struct sockaddr_un *) 0)->sun_path
            || (size_t) snprintf (out, size, "ipc://%.*s%s", (int) dir_len, path, name) >= size) {
            snprintf (err, err_size, "cannot relay the step barrier: the folder of %s leaves no room for a socket"
                      " name", coordinator);
            return -1;
        }
        return 0;
    }
    const char *hp = strncmp (coordinator, "tcp://", 6) == 0 ? coordinator + 6 : NULL;
    const char *colon = hp ? strrchr (hp, ':') : NULL;
    if (!hp || !colon || colon == hp || strchr (coordinator, ';')) {
        snprintf (err, err_size, "cannot relay the step barrier: coordinator endpoint %s is not tcp://HOST:PORT or"
                  " ipc://PATH", coordinator);
        return -1;
    }
    char host[256], port[16];
    size_t hlen = (size_t) (colon - hp);
    if (hp[0] == '[' && hlen >= 2 && hp[hlen - 1] == ']') {
        hp++;
        hlen -= 2;
    }
    if (hlen == 0 || hlen >= sizeof host || strlen (colon + 1) >= sizeof port) {
        snprintf (err, err_size, "cannot relay the step barrier: bad coordinator endpoint %s", coordinator);
        return -1;
    }
    memcpy (host, hp, hlen);
    host[hlen] = '\0';
    snprintf (port, sizeof port, "%s", colon + 1);
    struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *res = NULL;
    int gai = getaddrinfo (host, port, &hints, &res);
    if (gai != 0) {
        snprintf (err, err_size, "cannot relay the step barrier: %s: %s", host, gai_strerror (gai));
        return -1;
    }
    int rc = -1, e = 0;
    for (struct addrinfo *ai = res; ai && rc != 0; ai = ai->ai_next) {
        int fd = socket (ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            e = errno;
            continue;
        }
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        char addr[INET6_ADDRSTRLEN];
        if (connect (fd, ai->ai_addr, ai->ai_addrlen) == 0 && getsockname (fd, (struct sockaddr *) &ss, &len) == 0
            && inet_ntop (ss.ss_family, ss.ss_family == AF_INET6 ? (void *) &((struct sockaddr_in6 *) &ss)->sin6_addr
                                                                 : (void *) &((struct sockaddr_in *) &ss)->sin_addr,
                          addr, sizeof addr)) {
            *ipv6 = ss.ss_family == AF_INET6;
            snprintf (out, size, *ipv6 ? "tcp://[%s]:*" : "tcp://%s:*", addr);
            rc = 0;
        }
        else
            e = errno;
        close (fd);
    }
    freeaddrinfo (res);
    if (rc != 0)
        snprintf (err, err_size, "cannot relay the step barrier: no route to the coordinator at %s: %s", coordinator,
                  strerror (e));
    return rc;
}

int
sb_btree_bind (sb_btree_t *self, const char *coordinator_endpoint, int curve, uint64_t first_child, uint64_t children,
               sb_msg_t *relay_at, char *err, size_t err_size)
{
    if (self->router || children == 0 || children > 65536 || first_child <= self->worker) {
        snprintf (err, err_size, "the coordinator asked worker %llu to relay %llu workers from worker %llu%s",
                  (unsigned long long) self->worker, (unsigned long long) children, (unsigned long long) first_child,
                  self->router ? " a second time" : "");
        return -1;
    }
    char bind[320];
    int ipv6 = 0;
    if (s_bind_endpoint (coordinator_endpoint, bind, sizeof bind, &ipv6, err, err_size) != 0)
        return -1;
    self->child_id = calloc (children, sizeof (zframe_t *));
    self->child_in = calloc (children, 1);
    self->router = zsock_new (ZMQ_ROUTER);
    if (!self->child_id || !self->child_in || !self->router) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    self->first_child = first_child;
    self->children = children;
    sb_wire_configure (self->router, 0);
    zsock_set_router_mandatory (self->router, 1);
    zsock_set_rcvtimeo (self->router, 0);
    if (ipv6)
        zsock_set_ipv6 (self->router, 1);
    memset (relay_at, 0, sizeof *relay_at);
    relay_at->type = SB_MSG_RELAY_AT;
    if (curve) {
        /* a key pair for this run only: its public half goes to the children
         * over their encrypted connections to the coordinator, so only the
         * run's admitted workers can complete a handshake with the relay */
        zcert_t *cert = zcert_new ();
        if (!cert) {
            snprintf (err, err_size, "cannot make the relay's CURVE key pair");
            return -1;
        }
        zcert_apply (cert, self->router);
        zsock_set_curve_server (self->router, 1);
        int rc = sb_proto_set_str (&relay_at->u.relay_at.public_key, zcert_public_txt (cert));
        zcert_destroy (&cert);
        if (rc != 0) {
            snprintf (err, err_size, "out of memory");
            return -1;
        }
    }
    else if (sb_proto_set_str (&relay_at->u.relay_at.public_key, "") != 0) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    if (zsock_bind (self->router, "%s", bind) < 0) {
        snprintf (err, err_size, "cannot bind the step barrier's relay at %s: %s", bind, zmq_strerror (zmq_errno ()));
        return -1;
    }
    char *last = zsock_last_endpoint (self->router);
    int rc = sb_proto_set_str (&relay_at->u.relay_at.endpoint, last ? last : "");
    zstr_free (&last);
    if (rc != 0 || !relay_at->u.relay_at.endpoint[0]) {
        snprintf (err, err_size, "cannot tell where the step barrier's relay listens");
        return -1;
    }
    return 0;
}

int
sb_btree_join (sb_btree_t *self, const sb_msg_barrier_tree_t *m, const char *keys_dir, const char *cert_name,
               char *err, size_t err_size)
{
    if (self->in_use || m->children != self->children || (m->children && m->first_child != self->first_child)
        || (m->parent != UINT64_MAX && (m->parent >= self->worker || !m->parent_endpoint[0]))) {
        snprintf (err, err_size, "worker %llu got a place in the barrier tree it cannot take (parent %llu, %llu"
                  " children from %llu; it relays %llu)", (unsigned long long) self->worker,
                  (unsigned long long) m->parent, (unsigned long long) m->children,
                  (unsigned long long) m->first_child, (unsigned long long) self->children);
        return -1;
    }
    self->parent_id = m->parent;
    if (m->parent != UINT64_MAX) {
        self->parent = zsock_new (ZMQ_DEALER);
        if (!self->parent) {
            snprintf (err, err_size, "out of memory");
            return -1;
        }
        sb_wire_configure (self->parent, 0);
        zsock_set_rcvtimeo (self->parent, 0);
        char id[32];
        snprintf (id, sizeof id, "w%llu", (unsigned long long) self->worker);
        zsock_set_identity (self->parent, id);
        if (strstr (m->parent_endpoint, "://["))
            zsock_set_ipv6 (self->parent, 1);
        if (keys_dir) {
            /* this worker's certificate, the relay's key instead of the coordinator's */
            if (sb_curve_client (self->parent, keys_dir, cert_name, err, err_size) != 0)
                return -1;
            if (!m->parent_key[0]) {
                snprintf (err, err_size, "the relay of worker %llu has no CURVE key", (unsigned long long) m->parent);
                return -1;
            }
            zsock_set_curve_serverkey (self->parent, m->parent_key);
        }
        if (zsock_connect (self->parent, "%s", m->parent_endpoint) != 0) {
            snprintf (err, err_size, "cannot connect to the barrier relay of worker %llu at %s: %s",
                      (unsigned long long) m->parent, m->parent_endpoint, zmq_strerror (zmq_errno ()));
            return -1;
        }
    }
    self->in_use = 1;
    return 0;
}

int
sb_btree_in_use (const sb_btree_t *self)
{
    return self && self->in_use;
}

/* One arrival: the local ranks (child < 0) or child's subtree. The last
 * one sends BARRIER_UP for the whole subtree and opens the next barrier. */
static int
s_arrive (sb_btree_t *self, int64_t child, uint64_t epoch, uint64_t step, uint64_t workers, uint64_t last, char *err,
          size_t err_size)
{
    char who[64];
    if (child < 0)
        snprintf (who, sizeof who, "worker %llu", (unsigned long long) self->worker);
    else
        snprintf (who, sizeof who, "worker %llu", (unsigned long long) (self->first_child + (uint64_t) child));
    if (self->arrived == 0) {
        self->epoch = epoch;
        self->step = step;
        self->workers = 0;
    }
    else if (epoch != self->epoch || step != self->step) {
        snprintf (err, err_size, "%s reached step %llu of epoch %llu while its barrier relay (worker %llu) is at step"
                  " %llu of epoch %llu", who, (unsigned long long) step, (unsigned long long) epoch,
                  (unsigned long long) self->worker, (unsigned long long) self->step, (unsigned long long) self->epoch);
        return -1;
    }
    uint8_t *in = child < 0 ? (uint8_t *) NULL : &self->child_in[child];
    if (child < 0 ? self->own_in : *in) {
        snprintf (err, err_size, "%s reached step %llu of epoch %llu twice", who, (unsigned long long) step,
                  (unsigned long long) epoch);
        return -1;
    }
    if (in)
        *in = 1;
    else
        self->own_in = 1;
    self->arrived++;
    self->workers += workers;
    self->last = last;
    if (self->arrived < 1 + self->children)
        return 0;
    sb_msg_t up = { .type = SB_MSG_BARRIER_UP };
    up.u.barrier_up.epoch = self->epoch;
    up.u.barrier_up.step = self->step;
    up.u.barrier_up.workers = self->workers;
    up.u.barrier_up.last = self->last;
    self->arrived = 0;
    self->own_in = 0;
    if (self->children)
        memset (self->child_in, 0, self->children);
    int rc = self->parent ? sb_wire_send (self->parent, NULL, &up) : self->io.to_coordinator (self->io.ctx, &up);
    if (rc != 0) {
        snprintf (err, err_size, "cannot send the barrier of step %llu up to %s%.0llu: %s",
                  (unsigned long long) up.u.barrier_up.step, self->parent ? "the relay of worker " : "the coordinator",
                  (unsigned long long) (self->parent ? self->parent_id : 0), zmq_strerror (zmq_errno ()));
        return -1;
    }
    return 0;
}

int
sb_btree_step (sb_btree_t *self, const sb_msg_step_t *m, char *err, size_t err_size)
{
    return s_arrive (self, -1, m->epoch, m->step, 1, self->worker, err, err_size);
}

int
sb_btree_go (sb_btree_t *self, sb_msg_t *go, char *err, size_t err_size)
{
    for (uint64_t i = 0; i < self->children; i++) {
        if (!self->child_id[i])
            continue;   /* it never arrived: no GO can be for it (the coordinator names it) */
        if (sb_wire_send (self->router, self->child_id[i], go) != 0) {
            if (zmq_errno () == EHOSTUNREACH)
                continue;   /* the child is gone: the coordinator sees it lost and names it */
            snprintf (err, err_size, "cannot pass GO to worker %llu: %s",
                      (unsigned long long) (self->first_child + i), zmq_strerror (zmq_errno ()));
            return -1;
        }
    }
    self->io.go (self->io.ctx, go);
    return 0;
}

/* A frame from a child (the relay's ROUTER). */
static int
s_from_child (sb_btree_t *self, char *err, size_t err_size)
{
    zframe_t *identity = NULL;
    sb_msg_t m;
    char reason[256];
    int interrupted = 0;
    sb_proto_status_t st = sb_wire_recv (self->router, &identity, &m, reason, sizeof reason, NULL, &interrupted);
    if (interrupted)
        return 0;
    int rc = 1;
    /* the routing id is "w" and the child's worker id */
    char id[32] = "";
    size_t n = identity ? zframe_size (identity) : 0;
    if (n > 0 && n < sizeof id)
        memcpy (id, zframe_data (identity), n);
    id[n < sizeof id ? n : 0] = '\0';
    char *end = NULL;
    unsigned long long child = id[0] == 'w' ? strtoull (id + 1, &end, 10) : 0;
    if (st != SB_PROTO_OK) {
        snprintf (err, err_size, "barrier relay (worker %llu): bad frame from %s: %s", (unsigned long long) self->worker,
                  id[0] ? id : "a peer", reason);
        rc = -1;
    }
    else if (!end || *end || child < self->first_child || child >= self->first_child + self->children) {
        snprintf (err, err_size, "barrier relay (worker %llu): %s from a peer that is none of its workers (%llu-%llu)",
                  (unsigned long long) self->worker, sb_proto_type_name (m.type),
                  (unsigned long long) self->first_child,
                  (unsigned long long) (self->first_child + self->children - 1));
        rc = -1;
    }
    else if (m.type != SB_MSG_BARRIER_UP) {
        snprintf (err, err_size, "barrier relay (worker %llu): unexpected %s from worker %llu",
                  (unsigned long long) self->worker, sb_proto_type_name (m.type), child);
        rc = -1;
    }
    else {
        uint64_t i = child - self->first_child;
        if (!self->child_id[i]) {
            self->child_id[i] = identity;
            identity = NULL;
        }
        if (s_arrive (self, (int64_t) i, m.u.barrier_up.epoch, m.u.barrier_up.step, m.u.barrier_up.workers,
                      m.u.barrier_up.last, err, err_size) != 0)
            rc = -1;
    }
    sb_proto_fini (&m);
    zframe_destroy (&identity);
    return rc;
}

/* A frame from the parent relay: GO. */
static int
s_from_parent (sb_btree_t *self, char *err, size_t err_size)
{
    sb_msg_t m;
    char reason[256];
    int interrupted = 0;
    sb_proto_status_t st = sb_wire_recv (self->parent, NULL, &m, reason, sizeof reason, NULL, &interrupted);
    if (interrupted)
        return 0;
    int rc = 1;
    if (st != SB_PROTO_OK) {
        snprintf (err, err_size, "bad frame from the barrier relay (worker %llu): %s",
                  (unsigned long long) self->parent_id, reason);
        rc = -1;
    }
    else if (m.type != SB_MSG_GO) {
        snprintf (err, err_size, "unexpected %s from the barrier relay (worker %llu)", sb_proto_type_name (m.type),
                  (unsigned long long) self->parent_id);
        rc = -1;
    }
    else if (sb_btree_go (self, &m, err, err_size) != 0)
        rc = -1;
    sb_proto_fini (&m);
    return rc;
}

int
sb_btree_recv_one (sb_btree_t *self, char *err, size_t err_size)
{
    if (self->router && (zsock_events (self->router) & ZMQ_POLLIN)) {
        int rc = s_from_child (self, err, err_size);
        if (rc != 0)
            return rc;
    }
    if (self->parent && (zsock_events (self->parent) & ZMQ_POLLIN))
        return s_from_parent (self, err, err_size);
    return 0;
}

size_t
sb_btree_socks (sb_btree_t *self, zsock_t **socks)
{
    size_t n = 0;
    if (self && self->router)
        socks[n++] = self->router;
    if (self && self->parent)
        socks[n++] = self->parent;
    return n;
}
