/* agent: the worker's main thread and its one event loop. It owns the
 * DEALER connection to the coordinator, runs the training of every local
 * rank (worker/trainer/trainer.h), forwards datagen frames to and from the rank
 * actors (worker/datagen/rank.h), and keeps heartbeats both ways. */
#include "agent.h"
#include "barrier_tree.h"
#include "datafolder.h"
#include "dataset.h"
#include "event_loop.h"
#include "host_proc.h"
#include "log.h"
#include "rank.h"
#include "reader.h"
#include "engine.h"
#include "sb_version.h"
#include "security.h"
#include "trainer.h"
#include "util.h"
#include "wire.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>


/* the last stretch before a compute deadline that the loop polls rather
 * than sleeps through (timer slack and wake-up latency are larger) */
#define S_SPIN_S 0.00005
/* how long a worker polls for the GO of a step barrier before it sleeps */
#define S_BARRIER_SPIN_S 0.001
#define S_SPARE_CORES 4
/* frames received from one socket before the loop turns to its other work */
#define S_DRAIN_CAP 1024

/* Refused connection probes, one a second, after which a worker without
 * --timeout says nothing listens at the coordinator's address and exits. */
#define S_REFUSED_PROBES 3

/* After the coordinator closed its end: how long to wait for a frame it
 * sent before closing (ABORT, BYE) that has not come through yet, and again
 * after each one, before the session counts as lost (milliseconds). */
#define S_LAST_WORDS_MS 100

typedef struct {
    const sb_agent_opts_t *o;
    zsock_t          *dealer;
    zsock_t          *up;           /* PULL: every rank's frames */
    char              up_endpoint[96];
    zpoller_t        *poller;
    sb_handshake_watch_t *handshakes;   /* why a connection was refused (CURVE) */
    sb_msg_t          welcome;      /* owned; ranks borrow its fields */
    double            welcome_received_at; /* our clock: READY reports it (clock offset) */
    sb_storage_cfg_t  storage;      /* from welcome; ranks borrow it */
    zactor_t        **ranks;
    sb_rank_args_t   *rank_args;
    size_t            nranks;
    sb_trainer_t     *trainer;      /* training of every local rank */
    sb_btree_t       *btree;        /* the step barrier's tree: STEP and GO through relays (barrier_tree.h) */
    atomic_int        stop;         /* the session ended: rank writes stop (worker/datagen/rank.h) */
    double            last_heard;
    double            next_heartbeat;
    double            heartbeat_s, timeout_s;
    int               spare_cores;  /* at least S_SPARE_CORES online: barrier waits may poll */
    int               exit_code;
    int               done;
    int               hello_unsent; /* HELLO found no connection to go on yet: sent again while waiting */
    int               kv_phase;     /* the ranks run a kvcache trial: its GO is theirs (worker/kvcache) */
} s_agent_t;

static int
s_send (s_agent_t *self, const sb_msg_t *msg)
{
    if (sb_wire_send (self->dealer, NULL, msg) != 0) {
        sb_error ("cannot send %s to the coordinator: %s", sb_proto_type_name (msg->type), zmq_strerror (zmq_errno ()));
        return -1;
    }
    /* any message tells the coordinator this worker lives: a heartbeat is
     * due only after a silence (a training rank's STATS come every second,
     * so a thousand workers do not double the coordinator's traffic) */
    if (self->heartbeat_s > 0)
        self->next_heartbeat = sb_now () + self->heartbeat_s;
    return 0;
}

static void
s_forward_to_ranks (s_agent_t *self, zmsg_t *zm, int64_t only_rank)
{
    for (size_t i = 0; i < self->nranks; i++) {
        if (only_rank >= 0 && self->rank_args[i].rank != (uint64_t) only_rank)
            continue;
        zmsg_t *copy = zmsg_dup (zm);
        if (!copy || zmsg_send (&copy, self->ranks[i]) != 0) {
            zmsg_destroy (&copy);
            sb_error ("cannot pass a message to rank %llu", (unsigned long long) self->rank_args[i].rank);
        }
    }
}

static void
s_stop_ranks (s_agent_t *self)
{
    /* a rank in the middle of a write sees this within one buffer, not
     * only after its object (and its $TERM) */
    atomic_store (&self->stop, 1);
    for (size_t i = 0; i < self->nranks; i++)
        zactor_destroy (&self->ranks[i]);
    self->nranks = 0;
}

/* The barrier tree cannot go on: the coordinator is told why (BYE, which
 * fails the run naming this worker) and the worker ends. */
static void
s_tree_failed (s_agent_t *self, const char *why)
{
    sb_error ("%s", why);
    sb_msg_t bye = { .type = SB_MSG_BYE };
    bye.u.bye.reason = (char *) why;
    (void) s_send (self, &bye);
    atomic_store (&self->stop, 1);
    self->exit_code = 1;
    self->done = 1;
}

static long s_open_fds (void);

/* A relay's socket and its children's connections need descriptors, and
 * CZMQ aborts on a socket it cannot create: check before binding. Returns
 * 0, or -1 with why (the numbers and the fix). */
static int
s_relay_fds_fit (s_agent_t *self, uint64_t children, char *why, size_t size)
{
    (void) self;
    uint64_t soft, hard;
    if (sb_fd_limit_raise (&soft, &hard, why, size) != 0)
        return -1;
    long open = s_open_fds ();
    /* the ROUTER's mailbox and listener, one connection per child, slack */
    uint64_t need = (uint64_t) (open > 0 ? open : 0) + children + 8;
    if (need <= soft)
        return 0;
    snprintf (why, size, "cannot relay the step barrier for %llu workers: %llu file descriptors needed, limit %llu (hard"
              " limit %llu): raise it with `ulimit -n` or LimitNOFILE, or lower shardbench.barrier_fanout",
              (unsigned long long) children, (unsigned long long) need, (unsigned long long) soft,
              hard == UINT64_MAX ? 0ull : (unsigned long long) hard);
    return -1;
}

/* A frame from the coordinator. */
static void
s_on_coordinator (s_agent_t *self, zmsg_t *zm)
{
    self->last_heard = sb_now ();
    zframe_t *f = zmsg_first (zm);
    sb_msg_t m;
    char reason[256], text[2048];   /* text: the coordinator's, escaped (sb_log_escape) */
    sb_proto_status_t st = f && zmsg_size (zm) == 1
        ? sb_proto_decode (zframe_data (f), zframe_size (f), &m, reason, sizeof reason, NULL)
        : SB_PROTO_EMALFORMED;
    if (st != SB_PROTO_OK) {
        sb_warn ("rejected a frame from the coordinator: %s", f && zmsg_size (zm) == 1 ? reason : "not one frame");
        if (st == SB_PROTO_EVERSION) {
            sb_error ("the coordinator speaks another protocol version: %s", reason);
            self->exit_code = 1;
            self->done = 1;
        }
        zmsg_destroy (&zm);
        return;
    }
    switch (m.type) {
    case SB_MSG_PHASE_START:
        /* every phase says whose its GO is: a kvcache trial's goes to the ranks */
        self->kv_phase = strcmp (m.u.phase_start.phase, "kvcache") == 0;
        if (strcmp (m.u.phase_start.phase, "train") != 0 && strcmp (m.u.phase_start.phase, "eval") != 0)
            s_forward_to_ranks (self, zm, -1);
        else if (self->trainer)
            sb_trainer_start (self->trainer, &m.u.phase_start);
        else    /* READY said why; the coordinator should not have started */
            sb_error ("cannot train: the ranks could not be set up");
        break;
    case SB_MSG_GO:
        if (self->kv_phase)    /* the coordinator sends a trial's GO to every worker itself */
            s_forward_to_ranks (self, zm, -1);
        else if (sb_btree_in_use (self->btree)) {
            /* a top worker of the tree: its children first */
            if (sb_btree_go (self->btree, &m, text, sizeof text) != 0)
                s_tree_failed (self, text);
        }
        else if (self->trainer)
            sb_trainer_on_message (self->trainer, &m);
        break;
    case SB_MSG_ENTRIES:
    case SB_MSG_LIST:
        if (self->trainer)
            sb_trainer_on_message (self->trainer, &m);
        break;
    case SB_MSG_RELAY_BIND: {
        sb_msg_t at = { 0 };
        if (s_relay_fds_fit (self, m.u.relay_bind.children, text, sizeof text) != 0)
            s_tree_failed (self, text);
        else if (!self->btree
            || sb_btree_bind (self->btree, self->o->endpoint, self->o->keys_dir != NULL, m.u.relay_bind.first_child,
                              m.u.relay_bind.children, &at, text, sizeof text) != 0)
            s_tree_failed (self, self->btree ? text : "out of memory");
        else {
            sb_debug ("relaying the step barrier of workers %llu-%llu at %s",
                      (unsigned long long) m.u.relay_bind.first_child,
                      (unsigned long long) (m.u.relay_bind.first_child + m.u.relay_bind.children - 1),
                      at.u.relay_at.endpoint);
            if (s_send (self, &at) != 0)
                self->done = 1, self->exit_code = 1;
        }
        sb_proto_fini (&at);
        break;
    }
    case SB_MSG_BARRIER_TREE:
        if (!self->btree || sb_btree_join (self->btree, &m.u.barrier_tree, self->o->keys_dir, self->o->cert_name,
                                           text, sizeof text) != 0)
            s_tree_failed (self, self->btree ? text : "out of memory");
        break;
    case SB_MSG_HEARTBEAT:
        break;
    case SB_MSG_ABORT:
        atomic_store (&self->stop, 1);
        sb_error ("run aborted by the coordinator: %s", sb_log_escape (m.u.abort.reason, text, sizeof text));
        self->exit_code = 1;
        self->done = 1;
        break;
    case SB_MSG_BYE:
        sb_info ("coordinator ended the session: %s", sb_log_escape (m.u.bye.reason, text, sizeof text));
        self->exit_code = 0;
        self->done = 1;
        break;
    case SB_MSG_REJECT:
        sb_error ("refused by the coordinator: %s", sb_log_escape (m.u.reject.reason, text, sizeof text));
        self->exit_code = 1;
        self->done = 1;
        break;
    default:
        sb_warn ("unexpected %s from the coordinator ignored", sb_proto_type_name (m.type));
    }
    sb_proto_fini (&m);
    zmsg_destroy (&zm);
}

/* A frame from a rank actor (datagen): forwarded as it is. */
static void
s_on_rank (s_agent_t *self, zmsg_t *zm)
{
    if (zmsg_send (&zm, self->dealer) != 0)
        sb_error ("cannot forward a rank's frame to the coordinator");
    zmsg_destroy (&zm);
}

/* sb_event_drain's receivers: one frame from the coordinator, or from a
 * rank actor; 0 when none is queued or the session is done. */
static int
s_recv_coordinator (void *ctx)
{
    s_agent_t *self = ctx;
    zmsg_t *zm = self->done ? NULL : zmsg_recv (self->dealer);
    if (!zm)
        return 0;
    s_on_coordinator (self, zm);
    return 1;
}

static int
s_recv_rank (void *ctx)
{
    s_agent_t *self = ctx;
    zmsg_t *zm = self->done ? NULL : zmsg_recv (self->up);
    if (!zm)
        return 0;
    s_on_rank (self, zm);
    return 1;
}

static int
s_send_cb (void *ctx, const sb_msg_t *msg)
{
    s_agent_t *self = ctx;
    if (msg->type == SB_MSG_STEP && sb_btree_in_use (self->btree)) {
        char err[512];
        if (sb_btree_step (self->btree, &msg->u.step, err, sizeof err) != 0) {
            s_tree_failed (self, err);
            return -1;
        }
        return 0;
    }
    return s_send (self, msg);
}

/* The tree's callbacks: BARRIER_UP of a top worker to the coordinator, GO
 * for the local ranks. */
static int
s_tree_up (void *ctx, const sb_msg_t *msg)
{
    return s_send ((s_agent_t *) ctx, msg);
}

static void
s_tree_go (void *ctx, sb_msg_t *go)
{
    s_agent_t *self = ctx;
    if (self->trainer)
        sb_trainer_on_message (self->trainer, go);
}

/* sb_event_drain's receiver for the tree's sockets. */
static int
s_recv_tree (void *ctx)
{
    s_agent_t *self = ctx;
    if (self->done || !self->btree)
        return 0;
    char err[512];
    int rc = sb_btree_recv_one (self->btree, err, sizeof err);
    if (rc < 0) {
        s_tree_failed (self, err);
        return 0;
    }
    return rc;
}

static int
s_hello (s_agent_t *self)
{
    char host[256];
    if (self->o->host)
        snprintf (host, sizeof host, "%s", self->o->host);
    else if (gethostname (host, sizeof host - 1) != 0)
        snprintf (host, sizeof host, "unknown");
    long cores = sysconf (_SC_NPROCESSORS_ONLN);
    long pages = sysconf (_SC_PHYS_PAGES), page_size = sysconf (_SC_PAGESIZE);
    sb_msg_t m = { .type = SB_MSG_HELLO };
    m.u.hello.host = host;
    m.u.hello.pid = (uint64_t) getpid ();
    m.u.hello.cores = cores > 0 ? (uint64_t) cores : 0;
    m.u.hello.memory = pages > 0 && page_size > 0 ? (uint64_t) pages * (uint64_t) page_size : 0;
    m.u.hello.software = SB_WORKER_SOFTWARE;
    /* the host as DLIO describes it (host_proc.h: bounded, nothing secret) */
    sb_host_proc_t hp;
    if (sb_host_proc_read (&hp) != 0) {
        sb_error ("out of memory reading this host's /proc/cpuinfo and /proc/meminfo");
        return -1;
    }
    m.u.hello.processor = hp.processor;
    m.u.hello.cpuinfo = hp.cpuinfo;
    m.u.hello.meminfo = hp.meminfo;
    /* the DEALER sends without waiting until the WELCOME (sb_agent_run):
     * a connection whose handshake failed (a CURVE coordinator, and this
     * worker without keys) leaves it nothing to queue the HELLO on, and a
     * send would wait for ever; s_await_welcome tries again, and says
     * why the handshake failed */
    int rc = sb_wire_send (self->dealer, NULL, &m);
    self->hello_unsent = rc != 0 && zmq_errno () == EAGAIN;
    if (rc != 0 && !self->hello_unsent)
        sb_error ("cannot send HELLO to the coordinator: %s", zmq_strerror (zmq_errno ()));
    sb_host_proc_fini (&hp);
    return rc != 0 && !self->hello_unsent ? -1 : 0;
}

/* Can a Unix socket at endpoint, ipc://PATH (ipc://@NAME: abstract), be
 * connected to? Returns 0 when it accepts (or the name does not fit), else
 * the errno of connect: ECONNREFUSED or ENOENT (no coordinator there yet),
 * EACCES, ENOTDIR, ... (it never will be). */
static int
s_ipc_error (const char *endpoint)
{
    const char *path = endpoint + 6;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    size_t n = strlen (path);
    if (n == 0 || n >= sizeof sa.sun_path)
        return 0;
    memcpy (sa.sun_path, path, n);
    if (path[0] == '@')
        sa.sun_path[0] = '\0';    /* abstract, as ZeroMQ names it */
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    socklen_t len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + n + (path[0] == '@' ? 0 : 1));
    int e = connect (fd, (const struct sockaddr *) &sa, len) == 0 ? 0 : errno;
    close (fd);
    return e;
}

/* Does endpoint, a plain tcp://HOST:PORT, refuse TCP connections on every
 * address HOST resolves to? ZeroMQ retries a refused connect in silence, so
 * the agent asks the kernel itself. Returns 1 when refused, 0 otherwise (it
 * accepts, does not answer within 500 ms, does not resolve, or the endpoint
 * is not plain tcp://HOST:PORT). An ipc:// endpoint: *ipc_errno gets the
 * error of connecting to its socket (s_ipc_error), and 1 is returned when
 * there is one. */
static int
s_refused (const char *endpoint, int *ipc_errno)
{
    *ipc_errno = 0;
    if (strncmp (endpoint, "ipc://", 6) == 0)
        return (*ipc_errno = s_ipc_error (endpoint)) != 0;
    if (strncmp (endpoint, "tcp://", 6) != 0 || strchr (endpoint, ';'))
        return 0;
    const char *hp = endpoint + 6, *colon = strrchr (hp, ':');
    char host[256], port[16];
    if (!colon || colon == hp || !colon[1] || strlen (colon + 1) >= sizeof port)
        return 0;
    size_t hlen = (size_t) (colon - hp);
    if (hp[0] == '[' && hlen >= 2 && hp[hlen - 1] == ']') {
        hp++;
        hlen -= 2;
    }
    if (hlen == 0 || hlen >= sizeof host)
        return 0;
    memcpy (host, hp, hlen);
    host[hlen] = '\0';
    snprintf (port, sizeof port, "%s", colon + 1);
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
    if (getaddrinfo (host, port, &hints, &res) != 0)
        return 0;
    int refused = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket (ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        int e = connect (fd, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : errno;
        if (e == EINPROGRESS) {
            struct pollfd p = { .fd = fd, .events = POLLOUT };
            socklen_t len = sizeof e;
            if (poll (&p, 1, 500) != 1)
                e = ETIMEDOUT;
            else if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
                e = errno;
        }
        close (fd);
        if (e != ECONNREFUSED) {
            refused = 0;
            break;
        }
        refused = 1;
    }
    freeaddrinfo (res);
    return refused;
}

/* Wait for WELCOME (or REJECT) within the start-up timeout; timeout_s 0
 * waits for as long as it takes (a long-lived agent, deploy/systemd/). A
 * HEARTBEAT before the WELCOME (a coordinator still listing its dataset
 * holds the HELLO) starts the timeout again.
 * An address that refuses S_REFUSED_PROBES probes (0.5 s, 1.5 s, 2.5 s
 * after the start) fails at once
 * unless the command line asked to wait (--timeout): then it is said once
 * and the wait goes on. An ipc:// socket counts as refused while it is
 * missing or refuses; one that can never be connected to (permission, a
 * path through a file) fails at the first probe, --timeout or not. */
static int
s_await_welcome (s_agent_t *self)
{
    double start = sb_now ();
    double deadline = self->o->timeout_s > 0 ? start + self->o->timeout_s : INFINITY;
    double next_probe = start + 0.5, refused_since = 0;
    int told = 0, refusals = 0, busy = 0;
    char refusal[160] = "connection refused";  /* the last probe's */
    while (!zsys_interrupted) {
        double now = sb_now (), left = deadline - now;
        if (left <= 0) {
            if (refused_since > 0)
                sb_error ("nothing listens at %s (%s for %.0f s); is the coordinator running?", self->o->endpoint, refusal,
                          now - refused_since);
            else
                sb_error ("no answer from the coordinator at %s within %.0f s", self->o->endpoint, self->o->timeout_s);
            return -1;
        }
        if (now >= next_probe) {
            int ipc_errno = 0;
            if (s_refused (self->o->endpoint, &ipc_errno)) {
                now = sb_now ();
                if (refused_since == 0)
                    refused_since = now;
                refusals++;
                snprintf (refusal, sizeof refusal, "connection refused");
                if (ipc_errno)
                    snprintf (refusal, sizeof refusal, "cannot connect to its socket: %s, errno %d", strerror (ipc_errno),
                              ipc_errno);
                if (ipc_errno && ipc_errno != ENOENT && ipc_errno != ECONNREFUSED) {
                    sb_error ("nothing can listen at %s (%s)", self->o->endpoint, refusal);
                    return -1;
                }
                if (refusals >= S_REFUSED_PROBES && !self->o->wait_refused) {
                    sb_error ("nothing listens at %s (%s); is the coordinator running?", self->o->endpoint, refusal);
                    return -1;
                }
                if (refusals >= S_REFUSED_PROBES && !told) {
                    sb_warn ("nothing listens at %s (%s); waiting for the coordinator%s", self->o->endpoint, refusal,
                             self->o->timeout_s > 0 ? "" : " for as long as it takes");
                    told = 1;
                }
            }
            else {
                refused_since = 0;
                told = refusals = 0;
            }
            next_probe += 1.0;
            left = deadline - sb_now ();
        }
        void *which = zpoller_wait (self->poller, (int) (left * 1000 < 200 ? left * 1000 + 1 : 200));
        char why[512];
        if (sb_handshake_failure (self->handshakes, why, sizeof why)) {
            sb_error ("cannot join the coordinator at %s: %s", self->o->endpoint, why);
            return -1;
        }
        if (self->hello_unsent && s_hello (self) != 0)
            return -1;
        /* A coordinator that took our HELLO and went away without answering (one
         * closing after its run, or killed) used it up: say HELLO again, for
         * whichever coordinator listens there next. */
        if (sb_handshake_disconnects (self->handshakes)) {
            sb_info ("the coordinator at %s closed the connection before answering: saying HELLO again",
                     self->o->endpoint);
            if (s_hello (self) != 0)
                return -1;
        }
        if (which != self->dealer)
            continue;
        char reason[256], text[2048];   /* text: the coordinator's, escaped (sb_log_escape) */
        sb_proto_status_t st = sb_wire_recv (self->dealer, NULL, &self->welcome, reason, sizeof reason, NULL, NULL);
        if (st != SB_PROTO_OK) {
            sb_proto_fini (&self->welcome);     /* a HELLO of another version holds its names (wire.h) */
            sb_error ("bad answer from the coordinator: %s", reason);
            return -1;
        }
        if (self->welcome.type == SB_MSG_WELCOME) {
            self->welcome_received_at = sb_now ();
            return 0;
        }
        if (self->welcome.type == SB_MSG_REJECT)
            sb_error ("refused by the coordinator: %s", sb_log_escape (self->welcome.u.reject.reason, text, sizeof text));
        else if (self->welcome.type == SB_MSG_ABORT)
            sb_error ("the coordinator aborted: %s", sb_log_escape (self->welcome.u.abort.reason, text, sizeof text));
        else if (self->welcome.type == SB_MSG_HEARTBEAT) {
            /* the coordinator holds our HELLO while it lists the dataset:
             * it is there, so the wait goes on for as long as it says so */
            sb_proto_fini (&self->welcome);
            if (!busy)
                sb_info ("the coordinator at %s took the HELLO and is not admitting workers yet (listing its dataset):"
                         " waiting", self->o->endpoint);
            busy = 1;
            if (self->o->timeout_s > 0)
                deadline = sb_now () + self->o->timeout_s;
            continue;
        }
        else
            sb_error ("expected WELCOME, got %s", sb_proto_type_name (self->welcome.type));
        return -1;
    }
    return -1;
}

/* Descriptors open now (/proc/self/fd), or -1 where that cannot be read. */
static long
s_open_fds (void)
{
    DIR *d = opendir ("/proc/self/fd");
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir (d)))
        n += e->d_name[0] != '.';
    closedir (d);
    return n - 1;   /* the directory's own */
}

/* Raise the soft file-descriptor limit to the hard one and check that every
 * rank fits before any of its sockets is made: CZMQ aborts on a socket it
 * cannot create (zsock_new_checked asserts), so running out must never
 * happen. Counts, measured on libzmq 4.3 (each socket holds one eventfd):
 * a rank's actor 3 sockets, its reader's completion channel one eventfd
 * (lib/base/chan.c; its request channel none); a local engine one open
 * file per read in flight (sb_reader_reads_in_flight), and an async one
 * (uring) its ring, its wake-up eventfd and as many files again, delivered
 * and closed with the ring's next submission; an object store's engine one connection per request
 * in flight and endpoint, 2 for its HTTP library's wake-up, and the datagen/checkpoint
 * client one per endpoint plus 2; 2 more per rank for checkpoint files.
 * Returns 0, or -1 with a cause that gives the numbers and the fix. */
static int
s_check_fd_limit (s_agent_t *self, char *cause, size_t size)
{
    const sb_msg_welcome_t *w = &self->welcome.u.welcome;
    uint64_t soft, hard;
    if (sb_fd_limit_raise (&soft, &hard, cause, size) != 0)
        return -1;
    uint64_t nep = self->storage.nendpoints, inflight = self->storage.max_in_flight;
    int endpoints = (sb_storage_caps (&self->storage) & SB_ENGINE_ENDPOINTS) != 0;   /* connections per endpoint */
    uint64_t loader_threads = w->loader_threads ? w->loader_threads : w->read_threads;
    uint64_t threads = endpoints ? 1 : loader_threads;
    uint64_t reads = sb_reader_reads_in_flight (&self->storage, (size_t) threads);
    if (endpoints && self->storage.loader_depth)    /* DLIO's iterable readers' depth: loader threads x theirs */
        inflight = sb_reader_reads_in_flight (&self->storage, (size_t) loader_threads);
    uint64_t ring = (sb_storage_caps (&self->storage) & SB_ENGINE_ASYNC) ? 2 + reads : 0;
    uint64_t per_rank = 3 + 1 + 2 + (endpoints ? inflight * nep + 2 + nep + 2 : reads + ring);
    long open_now = s_open_fds ();
    uint64_t base = (open_now > 0 ? (uint64_t) open_now : 32) + 32 + (endpoints ? nep + 2 : 0);
    uint64_t need = w->ranks * per_rank + base;
    if (soft >= need)
        return 0;
    char what[160];
    if (endpoints)
        snprintf (what, sizeof what, "%llu in flight x %llu endpoints + %llu", (unsigned long long) inflight,
                  (unsigned long long) nep, (unsigned long long) (per_rank - inflight * nep));
    else if (ring)
        snprintf (what, sizeof what, "%llu reads in flight + %llu files closing + %llu", (unsigned long long) reads,
                  (unsigned long long) reads, (unsigned long long) (per_rank - 2 * reads));
    else
        snprintf (what, sizeof what, "%llu reads in flight + %llu", (unsigned long long) reads,
                  (unsigned long long) (per_rank - reads));
    snprintf (cause, size,
              "file descriptors: %llu ranks x %llu (%s) + %llu for the agent = %llu needed, the limit is %llu"
              " (hard limit %llu): raise it (`ulimit -n %llu`, LimitNOFILE= for a service) or run fewer ranks per"
              " worker%s",
              (unsigned long long) w->ranks, (unsigned long long) per_rank, what, (unsigned long long) base,
              (unsigned long long) need, (unsigned long long) soft,
              (unsigned long long) (hard == UINT64_MAX ? soft : hard),
              (unsigned long long) need, endpoints ? " or a lower storage.max_in_flight" : " or fewer reader.read_threads");
    return -1;
}

/* Add a failed check to READY. Returns 0, or -1 out of memory. */
static int
s_ready_fail (sb_msg_ready_t *r, const char *endpoint, const char *cause)
{
    char *ep = strdup (endpoint), *why = strdup (cause);
    if (!ep || !why) {
        free (ep);
        free (why);
        return -1;
    }
    r->failed_endpoints.items[r->failed_endpoints.count++] = ep;
    r->causes.items[r->causes.count++] = why;
    return 0;
}

/* One endpoint checked by the engine's preflight: a failure goes into
 * READY, and a heartbeat goes out after each check. */
typedef struct {
    s_agent_t      *agent;
    sb_msg_ready_t *ready;
    size_t          cap;
    int             oom;
} s_check_t;

static void
s_preflight_check (void *ctx, const char *where, const sb_storage_error_t *e)
{
    s_check_t *c = ctx;
    sb_msg_t hb = { .type = SB_MSG_HEARTBEAT };
    (void) s_send (c->agent, &hb);  /* a failed send is logged; READY will fail the same way */
    if (!e)
        return;
    if (c->ready->failed_endpoints.count >= c->cap) {
        c->oom = 1;   /* more failures than endpoints: the engine is not keeping its word */
        return;
    }
    /* the most specific cause first, as the coordinator's table shows it */
    const char *why = e->os_errno ? strerror (e->os_errno) : e->code;
    char cause[1024];
    snprintf (cause, sizeof cause, "%s%s%s", why && *why ? why : "", why && *why ? ": " : "", e->text);
    if (s_ready_fail (c->ready, where, cause) != 0)
        c->oom = 1;
}

/* Check every storage endpoint from this host (an engine with endpoints:
 * TCP connect and a signed request to the store, sb_storage_preflight).
 * Failures go into READY: the host's own (host_cause, when set) first,
 * which skips the endpoint checks. Returns 0, or -1 out of memory. */
static int
s_preflight (s_agent_t *self, sb_msg_t *ready, const char *host_cause)
{
    sb_msg_ready_t *r = &ready->u.ready;
    size_t cap = self->storage.nendpoints + 2;
    r->failed_endpoints.items = calloc (cap, sizeof (char *));
    r->causes.items = calloc (cap, sizeof (char *));
    if (!r->failed_endpoints.items || !r->causes.items)
        return -1;
    char cause[1024];
#define S_FAIL(ep, ...) do { snprintf (cause, sizeof cause, __VA_ARGS__); \
        if (s_ready_fail (r, ep, cause) != 0) return -1; } while (0)
    if (host_cause && *host_cause) {
        S_FAIL ("(this host)", "%s", host_cause);
        return 0;
    }
    unsigned caps = sb_storage_caps (&self->storage);
    /* a local data folder must be the coordinator's, not one of this host's own */
    if ((caps & SB_ENGINE_FOLDER) && self->welcome.u.welcome.data_probe && self->welcome.u.welcome.data_probe[0]) {
        char perr[1024];
        if (sb_datafolder_probe_check (self->welcome.u.welcome.data_root, self->welcome.u.welcome.data_probe, perr,
                                       sizeof perr) != 0)
            S_FAIL (self->welcome.u.welcome.data_root, "this host does not see the coordinator's data folder (%s):"
                    " share it between the nodes (NFS, a parallel file system) at the same path", perr);
    }
    if (!(caps & SB_ENGINE_ENDPOINTS))
        return 0;
    /* each check must end well within the coordinator's patience, and a
     * heartbeat goes out between checks */
    sb_storage_cfg_t cfg = self->storage;
    if (cfg.lb == SB_LB_PER_RANK)
        cfg.lb = SB_LB_ROUND_ROBIN;     /* every endpoint, not one rank's */
    double budget = self->timeout_s / 3;
    if (cfg.connect_timeout_s > budget)
        cfg.connect_timeout_s = budget;
    if (cfg.request_timeout_s > budget)
        cfg.request_timeout_s = budget;
    sb_storage_error_t e;
    sb_storage_open_t how = { .root = "", .rank = 0, .depth = 1 };
    sb_storage_t *client = sb_storage_open (&cfg, &how, &e);
    if (!client) {
        S_FAIL ("(credentials)", "%s", e.text);
        return 0;
    }
    s_check_t check = { .agent = self, .ready = r, .cap = cap };
    (void) sb_storage_preflight (client, 0, s_preflight_check, &check);   /* the failures are in READY */
    sb_storage_close (&client);
#undef S_FAIL
    return check.oom ? -1 : 0;
}

int
sb_agent_run (const sb_agent_opts_t *opts)
{
    s_agent_t a = { .o = opts, .exit_code = 1 };
    s_agent_t *self = &a;
    self->dealer = zsock_new (ZMQ_DEALER);
    if (!self->dealer) {
        sb_error ("cannot create a socket");
        return 1;
    }
    sb_wire_configure (self->dealer, 1000);
    if (strstr (opts->endpoint, "://["))
        zsock_set_ipv6 (self->dealer, 1);   /* tcp://[::1]:P: ZeroMQ connects to IPv6 only with it */
    char kerr[1024];
    if (opts->keys_dir && sb_curve_client (self->dealer, opts->keys_dir, opts->cert_name, kerr, sizeof kerr) != 0) {
        sb_error ("%s", kerr);
        zsock_destroy (&self->dealer);
        return 2;
    }
    self->handshakes = sb_handshake_watch_new (self->dealer, opts->keys_dir != NULL);
    if (zsock_connect (self->dealer, "%s", opts->endpoint) != 0) {
        sb_error ("cannot connect to %s: %s", opts->endpoint, zmq_strerror (zmq_errno ()));
        zsock_destroy (&self->dealer);
        return 2;
    }
    self->up = zsock_new (ZMQ_PULL);
    snprintf (self->up_endpoint, sizeof self->up_endpoint, "inproc://sb-agent-up-%d", (int) getpid ());
    if (!self->up || zsock_bind (self->up, "%s", self->up_endpoint) != 0) {
        sb_error ("cannot create the agent's socket");
        goto done;
    }
    sb_wire_configure (self->up, 1000);
    long online = sysconf (_SC_NPROCESSORS_ONLN);
    self->spare_cores = online >= S_SPARE_CORES;
    self->poller = zpoller_new (self->dealer, self->up, NULL);
    zsock_set_sndtimeo (self->dealer, 0);       /* the HELLO (s_hello) */
    if (!self->poller || s_hello (self) != 0 || s_await_welcome (self) != 0) {
        zsock_set_linger (self->dealer, 0);     /* no coordinator to take what is queued */
        goto done;
    }
    zsock_set_sndtimeo (self->dealer, -1);      /* a connection that the WELCOME came on */
    /* from here on, wake-ups drain every queued frame without waiting */
    zsock_set_rcvtimeo (self->dealer, 0);
    zsock_set_rcvtimeo (self->up, 0);

    const sb_msg_welcome_t *w = &self->welcome.u.welcome;
    if (w->ranks == 0 || w->ranks > 4096 || w->batch_size == 0 || w->read_threads == 0 || w->read_threads > 1024
        || w->loader_threads > 1024
        || w->keys_page == 0 || w->keys_page > 65536
        || w->io_buffer < 4096 || w->io_buffer > (1ull << 30) || w->samples_per_file == 0 || w->num_files == 0
        || (w->eval_files && (w->eval_batch_size == 0 || !(w->eval_time >= 0 && w->eval_time <= 3600)
                              || !(w->eval_time_stdev >= 0 && w->eval_time_stdev <= 3600)))) {
        sb_error ("the coordinator sent an unusable workload (ranks %llu, batch %llu, read threads %llu, buffer %llu,"
                  " key page %llu)", (unsigned long long) w->ranks, (unsigned long long) w->batch_size,
                  (unsigned long long) w->read_threads, (unsigned long long) w->io_buffer,
                  (unsigned long long) w->keys_page);
        goto done;
    }
    char serr[256];
    if (sb_storage_from_welcome (w, &self->storage, serr, sizeof serr) != 0) {
        sb_error ("the coordinator sent unusable storage settings: %s", serr);
        goto done;
    }
    /* names are built from these parts: none may lead out of the data folder */
    for (int part = 0; part < 2; part++) {
        const char *value = part == 0 ? w->file_prefix : w->format;
        if (sb_dataset_check_part (value, serr, sizeof serr) != 0) {
            sb_error ("ranks %llu-%llu: the coordinator sent dataset.%s '%s', which %s: refusing to build object names"
                      " from it", (unsigned long long) w->first_rank, (unsigned long long) (w->first_rank + w->ranks - 1),
                      part == 0 ? "file_prefix" : "format", value, serr);
            goto done;
        }
    }
    self->heartbeat_s = (double) w->heartbeat_ms / 1000.0;
    self->timeout_s = (double) w->timeout_ms / 1000.0;
    sb_info ("joined as worker %llu: ranks %llu-%llu of %llu, data in %s", (unsigned long long) w->worker,
             (unsigned long long) w->first_rank, (unsigned long long) (w->first_rank + w->ranks - 1),
             (unsigned long long) w->total_ranks, w->data_root);
    /* every descriptor the ranks need must be there before the first of
     * their sockets is made; if not, READY says why and no rank starts */
    char fd_cause[512] = "";
    int fits = s_check_fd_limit (self, fd_cause, sizeof fd_cause) == 0;
    self->ranks = calloc (w->ranks, sizeof (zactor_t *));
    self->rank_args = calloc (w->ranks, sizeof (sb_rank_args_t));
    if (!self->ranks || !self->rank_args) {
        sb_error ("out of memory");
        goto done;
    }
    for (uint64_t r = 0; fits && r < w->ranks; r++) {
        self->rank_args[r].cfg = w;
        self->rank_args[r].storage = &self->storage;
        self->rank_args[r].up = self->up_endpoint;
        self->rank_args[r].rank = w->first_rank + r;
        self->rank_args[r].host = opts->host;
        self->rank_args[r].stop = &self->stop;
        self->ranks[r] = zactor_new (sb_rank_actor, &self->rank_args[r]);
        if (!self->ranks[r]) {
            sb_error ("cannot start rank %llu", (unsigned long long) (w->first_rank + r));
            goto done;
        }
        self->nranks++;
    }
    char terr[512] = "";
    sb_btree_io_t tio = { s_tree_up, s_tree_go, self };
    if (!(self->btree = sb_btree_new (w->worker, &tio))) {
        sb_error ("out of memory");
        goto done;
    }
    sb_sender_t out = { s_send_cb, self };
    if (fits && !(self->trainer = sb_trainer_new (w, &self->storage, &out, terr, sizeof terr)) && !terr[0])
        snprintf (terr, sizeof terr, "cannot set up the ranks' I/O engines");
    sb_msg_t ready = { .type = SB_MSG_READY };
    ready.u.ready.worker = w->worker;
    /* the run cannot start without the trainer: READY says why */
    if (s_preflight (self, &ready, fits ? (self->trainer ? NULL : terr) : fd_cause) != 0) {
        sb_proto_fini (&ready);
        sb_error ("out of memory");
        goto done;
    }
    for (size_t i = 0; i < ready.u.ready.causes.count; i++)
        sb_error ("preflight: %s: %s", ready.u.ready.failed_endpoints.items[i] ? ready.u.ready.failed_endpoints.items[i] : "?",
                  ready.u.ready.causes.items[i] ? ready.u.ready.causes.items[i] : "?");
    ready.u.ready.welcome_received_at = self->welcome_received_at;
    ready.u.ready.sent_at = sb_now ();
    int sent = s_send (self, &ready);
    sb_proto_fini (&ready);
    if (sent != 0)
        goto done;

    self->last_heard = sb_now ();
    self->next_heartbeat = 0;
    size_t nsocks = 5;     /* dealer, the tree's two, up, the dealer's events */
    zsock_t **socks = calloc (nsocks, sizeof (zsock_t *));
    int *fds = calloc (self->nranks ? self->nranks : 1, sizeof (int));     /* the ranks' completions */
    if (!socks || !fds) {
        free (socks);
        free (fds);
        sb_error ("out of memory");
        goto done;
    }
    while (!self->done) {
        if (zsys_interrupted) {
            sb_error ("interrupted by signal");
            sb_msg_t bye = { .type = SB_MSG_BYE };
            bye.u.bye.reason = "worker interrupted by signal";
            s_send (self, &bye);
            self->exit_code = 1;
            break;
        }
        double now = sb_now ();
        if (now >= self->next_heartbeat) {
            sb_msg_t hb = { .type = SB_MSG_HEARTBEAT };
            s_send (self, &hb);
            self->next_heartbeat = now + self->heartbeat_s;
        }
        /* a coordinator that exited (killed, crashed) closed its end: its
         * session is over, and whoever listens there next does not know us.
         * What it sent before closing (ABORT, BYE) is read first: the
         * disconnect event and those frames reach this thread by different
         * pipes, so the event can come first; the frames are waited for a
         * moment (S_LAST_WORDS_MS), not taken as missing at once. */
        char hwhy[512];
        (void) sb_handshake_failure (self->handshakes, hwhy, sizeof hwhy);
        if (sb_handshake_disconnects (self->handshakes)) {
            atomic_store (&self->stop, 1);  /* the ranks stop now, whatever the last frames say */
            zpoller_t *last_words = zpoller_new (self->dealer, NULL);
            zmsg_t *last;
            for (int k = 0; k < 1024 && !self->done && last_words && zpoller_wait (last_words, S_LAST_WORDS_MS)
                            && (last = zmsg_recv (self->dealer)); k++)
                s_on_coordinator (self, last);
            zpoller_destroy (&last_words);
            if (self->done)
                break;
            sb_warn ("the coordinator at %s closed the connection: its session is over", opts->endpoint);
            sb_error ("lost the coordinator at %s: nothing heard for %.1f s", opts->endpoint, now - self->last_heard);
            self->exit_code = 1;
            zsock_set_linger (self->dealer, 0);
            break;
        }
        if (now - self->last_heard > self->timeout_s) {
            atomic_store (&self->stop, 1);
            sb_error ("lost the coordinator at %s: nothing heard for %.1f s", opts->endpoint, now - self->last_heard);
            self->exit_code = 1;
            /* what is queued for it will never be delivered: do not wait
             * out the linger when the socket closes */
            zsock_set_linger (self->dealer, 0);
            break;
        }
        /* drain every socket until a receive finds nothing (that receive
         * costs libzmq a poll(2); one that finds a frame does not), let the
         * ranks train as far as they can, then sleep on the sockets'
         * ZMQ_FDs until a frame or the trainer's next deadline */
        int pending = sb_event_drain (s_recv_coordinator, self, S_DRAIN_CAP) == S_DRAIN_CAP;
        pending |= sb_event_drain (s_recv_rank, self, S_DRAIN_CAP) == S_DRAIN_CAP;
        pending |= sb_event_drain (s_recv_tree, self, S_DRAIN_CAP) == S_DRAIN_CAP;
        int busy = 0;
        double wake = self->done || !self->trainer ? 0 : sb_trainer_pump (self->trainer, &busy);
        /* the pump sent on the DEALER after it was drained, and a send can
         * consume the signal of a frame that arrived meanwhile: the DEALER
         * comes first and counts as sent on (sb_event_wait asks it for
         * ZMQ_EVENTS before sleeping on the ZMQ_FDs) */
        int queued = 0;
        size_t nfds = !pending && !busy && !self->done && self->trainer
                      ? sb_trainer_wait_fds (self->trainer, fds, self->nranks, &queued) : 0;
        if (!pending && !busy && !queued && !self->done) {
            /* the tree's sockets were sent on (GO passed down, BARRIER_UP):
             * they count as sent on, after the DEALER */
            socks[0] = self->dealer;
            size_t n = 1 + sb_btree_socks (self->btree, socks + 1), sent_on = n;
            socks[n++] = self->up;
            /* a lost connection wakes the loop at once: rank writes stop promptly */
            if (sb_handshake_watch_sock (self->handshakes))
                socks[n++] = sb_handshake_watch_sock (self->handshakes);
            double now = sb_now (), timeout = 0.1;
            if (wake > 0 && wake - now < timeout)
                timeout = wake - now;
            if (self->next_heartbeat - now < timeout)
                timeout = self->next_heartbeat - now;
            /* an emulated compute ends at its deadline: sleep to a little
             * before it and poll the rest, so that the scheduler's wake-up
             * latency does not delay the next step (0.375 ms computes,
             * dlrm: docs/PERFORMANCE.md, "Calibrate") */
            if (wake > 0 && wake - now <= timeout)
                timeout = timeout > S_SPIN_S ? timeout - S_SPIN_S : 0;
            /* a step barrier's GO comes within a round trip: poll for it a
             * while (S_BARRIER_SPIN_S) before sleeping, on a host with
             * cores to spare (on 2 cores the poll takes the core the
             * coordinator or another worker needs to send it) */
            double go_since = self->trainer && self->spare_cores ? sb_trainer_awaiting_go_since (self->trainer) : 0;
            if (go_since > 0 && now - go_since < S_BARRIER_SPIN_S)
                timeout = 0;
            sb_event_wait_fds (socks, n, sent_on, fds, nfds, timeout > 0 ? timeout : 0);
        }
    }
    free (socks);
    free (fds);
done:
    sb_trainer_destroy (&self->trainer);
    sb_btree_destroy (&self->btree);
    s_stop_ranks (self);
    free (self->ranks);
    free (self->rank_args);
    sb_proto_fini (&self->welcome);
    zpoller_destroy (&self->poller);
    sb_handshake_watch_destroy (&self->handshakes);
    zsock_destroy (&self->up);
    zsock_destroy (&self->dealer);
    return self->exit_code;
}
