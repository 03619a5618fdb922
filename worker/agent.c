/* agent: the worker's main thread and its one event loop. It owns the
 * DEALER connection to the coordinator, runs the training of every local
 * rank (worker/trainer.h), forwards datagen frames to and from the rank
 * actors (worker/rank.h), and keeps heartbeats both ways. */
#include "agent.h"
#include "log.h"
#include "rank.h"
#include "s3_client.h"
#include "security.h"
#include "trainer.h"
#include "util.h"
#include "wire.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

typedef struct {
    const sb_agent_opts_t *o;
    zsock_t          *dealer;
    zsock_t          *up;           /* PULL: every rank's frames */
    char              up_endpoint[96];
    zpoller_t        *poller;
    sb_handshake_watch_t *handshakes;   /* why a connection was refused (CURVE) */
    sb_msg_t          welcome;      /* owned; ranks borrow its fields */
    sb_storage_cfg_t  storage;      /* from welcome; ranks borrow it */
    zactor_t        **ranks;
    sb_rank_args_t   *rank_args;
    size_t            nranks;
    sb_trainer_t     *trainer;      /* training of every local rank */
    double            last_heard;
    double            next_heartbeat;
    double            heartbeat_s, timeout_s;
    int               exit_code;
    int               done;
} s_agent_t;

static int
s_send (s_agent_t *self, const sb_msg_t *msg)
{
    if (sb_wire_send (self->dealer, NULL, msg) != 0) {
        sb_error ("cannot send %s to the coordinator: %s", sb_proto_type_name (msg->type), zmq_strerror (zmq_errno ()));
        return -1;
    }
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
    for (size_t i = 0; i < self->nranks; i++)
        zactor_destroy (&self->ranks[i]);
    self->nranks = 0;
}

/* A frame from the coordinator. */
static void
s_on_coordinator (s_agent_t *self, zmsg_t *zm)
{
    self->last_heard = sb_now ();
    zframe_t *f = zmsg_first (zm);
    sb_msg_t m;
    char reason[256];
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
        if (strcmp (m.u.phase_start.phase, "train") != 0)
            s_forward_to_ranks (self, zm, -1);
        else if (self->trainer)
            sb_trainer_start (self->trainer, &m.u.phase_start);
        else    /* READY said why; the coordinator should not have started */
            sb_error ("cannot train: the ranks could not be set up");
        break;
    case SB_MSG_KEYS:
    case SB_MSG_GO:
        if (self->trainer)
            sb_trainer_on_message (self->trainer, &m);
        break;
    case SB_MSG_HEARTBEAT:
        break;
    case SB_MSG_ABORT:
        sb_error ("run aborted by the coordinator: %s", m.u.abort.reason);
        self->exit_code = 1;
        self->done = 1;
        break;
    case SB_MSG_BYE:
        sb_info ("coordinator ended the session: %s", m.u.bye.reason);
        self->exit_code = 0;
        self->done = 1;
        break;
    case SB_MSG_REJECT:
        sb_error ("refused by the coordinator: %s", m.u.reject.reason);
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

static int
s_send_cb (void *ctx, const sb_msg_t *msg)
{
    return s_send ((s_agent_t *) ctx, msg);
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
    m.u.hello.software = "shardbench-worker 0.1.0";
    return s_send (self, &m);
}

/* Wait for WELCOME (or REJECT) within the start-up timeout; timeout_s 0
 * waits for as long as it takes (a long-lived agent, deploy/systemd/). */
static int
s_await_welcome (s_agent_t *self)
{
    double deadline = self->o->timeout_s > 0 ? sb_now () + self->o->timeout_s : INFINITY;
    while (!zsys_interrupted) {
        double left = deadline - sb_now ();
        if (left <= 0) {
            sb_error ("no answer from the coordinator at %s within %.0f s", self->o->endpoint, self->o->timeout_s);
            return -1;
        }
        void *which = zpoller_wait (self->poller, (int) (left * 1000 < 200 ? left * 1000 + 1 : 200));
        char why[512];
        if (sb_handshake_failure (self->handshakes, why, sizeof why)) {
            sb_error ("cannot join the coordinator at %s: %s", self->o->endpoint, why);
            return -1;
        }
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
        char reason[256];
        sb_proto_status_t st = sb_wire_recv (self->dealer, NULL, &self->welcome, reason, sizeof reason, NULL, NULL);
        if (st != SB_PROTO_OK) {
            sb_error ("bad answer from the coordinator: %s", reason);
            return -1;
        }
        if (self->welcome.type == SB_MSG_WELCOME)
            return 0;
        if (self->welcome.type == SB_MSG_REJECT)
            sb_error ("refused by the coordinator: %s", self->welcome.u.reject.reason);
        else if (self->welcome.type == SB_MSG_ABORT)
            sb_error ("the coordinator aborted: %s", self->welcome.u.abort.reason);
        else if (self->welcome.type == SB_MSG_HEARTBEAT) {
            sb_proto_fini (&self->welcome);
            continue;
        }
        else
            sb_error ("expected WELCOME, got %s", sb_proto_type_name (self->welcome.type));
        return -1;
    }
    return -1;
}

/* Raise the soft file-descriptor limit to the hard one and check that the
 * S3 connections of every rank fit. Returns 0, or -1 with a cause. */
static int
s_check_fd_limit (s_agent_t *self, char *cause, size_t size)
{
    const sb_msg_welcome_t *w = &self->welcome.u.welcome;
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) != 0) {
        snprintf (cause, size, "getrlimit(RLIMIT_NOFILE): %s", strerror (errno));
        return -1;
    }
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit raised = { rl.rlim_max, rl.rlim_max };
        if (setrlimit (RLIMIT_NOFILE, &raised) == 0)
            rl = raised;
    }
    /* per rank: one connection per in-flight request and endpoint, plus
     * about 8 inproc/zmq descriptors; plus 64 for the agent itself */
    uint64_t per_rank = self->storage.type == SB_STORAGE_S3
        ? self->storage.max_in_flight * self->storage.nendpoints + 8 : w->read_threads + 8;
    uint64_t need = w->ranks * per_rank + 64;
    if ((uint64_t) rl.rlim_cur < need && self->storage.type == SB_STORAGE_S3) {
        snprintf (cause, size,
                  "file descriptors: %llu ranks x (%llu in flight x %zu endpoints + 8) + 64 = %llu needed, limit is %llu"
                  " (raise `ulimit -n` or lower max_in_flight)",
                  (unsigned long long) w->ranks, (unsigned long long) self->storage.max_in_flight,
                  self->storage.nendpoints, (unsigned long long) need, (unsigned long long) rl.rlim_cur);
        return -1;
    }
    if ((uint64_t) rl.rlim_cur < need) {     /* local files: one open file per read thread */
        snprintf (cause, size,
                  "file descriptors: %llu ranks x (%llu read threads + 8) + 64 = %llu needed, limit is %llu"
                  " (raise `ulimit -n` or lower reader.read_threads)",
                  (unsigned long long) w->ranks, (unsigned long long) w->read_threads, (unsigned long long) need,
                  (unsigned long long) rl.rlim_cur);
        return -1;
    }
    return 0;
}

/* Check every storage endpoint from this host (TCP connect and a signed
 * HEAD of the bucket). Failures go into READY. */
static int
s_preflight (s_agent_t *self, sb_msg_t *ready)
{
    sb_msg_ready_t *r = &ready->u.ready;
    size_t cap = self->storage.nendpoints + 1;
    r->failed_endpoints.items = calloc (cap, sizeof (char *));
    r->causes.items = calloc (cap, sizeof (char *));
    if (!r->failed_endpoints.items || !r->causes.items)
        return -1;
    char cause[1024];
#define S_FAIL(ep, ...) do { snprintf (cause, sizeof cause, __VA_ARGS__); \
        r->failed_endpoints.items[r->failed_endpoints.count++] = strdup (ep); \
        r->causes.items[r->causes.count++] = strdup (cause); } while (0)
    char fd_cause[512];
    if (s_check_fd_limit (self, fd_cause, sizeof fd_cause) != 0) {
        S_FAIL ("(this host)", "%s", fd_cause);
        return 0;
    }
    if (self->storage.type != SB_STORAGE_S3)
        return 0;
    /* each check must end well within the coordinator's patience, and a
     * heartbeat goes out between checks */
    sb_storage_cfg_t cfg = self->storage;
    double budget = self->timeout_s / 3;
    if (cfg.connect_timeout_s > budget)
        cfg.connect_timeout_s = budget;
    if (cfg.request_timeout_s > budget)
        cfg.request_timeout_s = budget;
    char err[1024];
    sb_s3_t *s3 = sb_s3_new (&cfg, 1, err, sizeof err);
    if (!s3) {
        S_FAIL ("(credentials)", "%s", err);
        return 0;
    }
    for (size_t i = 0; i < sb_s3_endpoint_count (s3); i++) {
        sb_msg_t hb = { .type = SB_MSG_HEARTBEAT };
        s_send (self, &hb);
        sb_s3_error_t e;
        if (sb_s3_check_endpoint (s3, i, &e) != 0) {
            const char *why = e.curl_code ? (e.os_errno ? strerror (e.os_errno) : e.curl_text) : e.s3_code;
            S_FAIL (sb_s3_endpoint (s3, i), "%s%s%s", why && *why ? why : "", why && *why ? ": " : "", e.text);
        }
    }
    sb_s3_destroy (&s3);
#undef S_FAIL
    return 0;
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
    self->poller = zpoller_new (self->dealer, self->up, NULL);
    if (!self->poller || s_hello (self) != 0 || s_await_welcome (self) != 0)
        goto done;
    /* from here on, wake-ups drain every queued frame without waiting */
    zsock_set_rcvtimeo (self->dealer, 0);
    zsock_set_rcvtimeo (self->up, 0);

    const sb_msg_welcome_t *w = &self->welcome.u.welcome;
    if (w->ranks == 0 || w->ranks > 4096 || w->batch_size == 0 || w->read_threads == 0 || w->read_threads > 1024
        || w->keys_page == 0 || w->keys_page > 65536
        || w->io_buffer < 4096 || w->io_buffer > (1ull << 30) || w->samples_per_file == 0 || w->num_files == 0) {
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
    self->heartbeat_s = (double) w->heartbeat_ms / 1000.0;
    self->timeout_s = (double) w->timeout_ms / 1000.0;
    sb_info ("joined as worker %llu: ranks %llu-%llu of %llu, data in %s", (unsigned long long) w->worker,
             (unsigned long long) w->first_rank, (unsigned long long) (w->first_rank + w->ranks - 1),
             (unsigned long long) w->total_ranks, w->data_root);
    self->ranks = calloc (w->ranks, sizeof (zactor_t *));
    self->rank_args = calloc (w->ranks, sizeof (sb_rank_args_t));
    if (!self->ranks || !self->rank_args) {
        sb_error ("out of memory");
        goto done;
    }
    for (uint64_t r = 0; r < w->ranks; r++) {
        self->rank_args[r].cfg = w;
        self->rank_args[r].storage = &self->storage;
        self->rank_args[r].up = self->up_endpoint;
        self->rank_args[r].rank = w->first_rank + r;
        self->rank_args[r].host = opts->host;
        self->ranks[r] = zactor_new (sb_rank_actor, &self->rank_args[r]);
        if (!self->ranks[r]) {
            sb_error ("cannot start rank %llu", (unsigned long long) (w->first_rank + r));
            goto done;
        }
        self->nranks++;
    }
    char terr[512] = "";
    sb_sender_t out = { s_send_cb, self };
    self->trainer = sb_trainer_new (w, &self->storage, &out, terr, sizeof terr);
    sb_msg_t ready = { .type = SB_MSG_READY };
    ready.u.ready.worker = w->worker;
    if (s_preflight (self, &ready) != 0) {
        sb_proto_fini (&ready);
        sb_error ("out of memory");
        goto done;
    }
    if (!self->trainer) {   /* the run cannot start: say why in READY */
        sb_msg_ready_t *r = &ready.u.ready;
        r->failed_endpoints.items[r->failed_endpoints.count++] = strdup ("(this host)");
        r->causes.items[r->causes.count++] = strdup (terr);
    }
    for (size_t i = 0; i < ready.u.ready.causes.count; i++)
        sb_error ("preflight: %s: %s", ready.u.ready.failed_endpoints.items[i] ? ready.u.ready.failed_endpoints.items[i] : "?",
                  ready.u.ready.causes.items[i] ? ready.u.ready.causes.items[i] : "?");
    int sent = s_send (self, &ready);
    sb_proto_fini (&ready);
    if (sent != 0)
        goto done;

    self->last_heard = sb_now ();
    self->next_heartbeat = 0;
    size_t nsocks = 2 + self->nranks;
    zsock_t **socks = calloc (nsocks, sizeof (zsock_t *));
    if (!socks) {
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
        if (now - self->last_heard > self->timeout_s) {
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
        int pending = 0;
        zmsg_t *zm;
        int i;
        for (i = 0; i < 1024 && !self->done && (zm = zmsg_recv (self->dealer)); i++)
            s_on_coordinator (self, zm);
        pending |= i == 1024;
        for (i = 0; i < 1024 && !self->done && (zm = zmsg_recv (self->up)); i++)
            s_on_rank (self, zm);
        pending |= i == 1024;
        int busy = 0;
        double wake = self->done || !self->trainer ? 0 : sb_trainer_pump (self->trainer, &busy);
        /* the pump sent on the DEALER after it was drained, and a send can
         * consume the signal of a frame that arrived meanwhile: ask the
         * socket itself (ZMQ_EVENTS) before sleeping on its ZMQ_FD */
        if (!pending && !busy && !self->done && !(zsock_events (self->dealer) & ZMQ_POLLIN)) {
            socks[0] = self->dealer;
            socks[1] = self->up;
            size_t n = 2 + (self->trainer ? sb_trainer_sockets (self->trainer, socks + 2, nsocks - 2) : 0);
            double now = sb_now (), timeout = 0.1;
            if (wake > 0 && wake - now < timeout)
                timeout = wake - now;
            if (self->next_heartbeat - now < timeout)
                timeout = self->next_heartbeat - now;
            sb_wire_wait_s (socks, n, timeout > 0 ? timeout : 0);
        }
    }
    free (socks);
done:
    sb_trainer_destroy (&self->trainer);
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
