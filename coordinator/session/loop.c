/* loop: the coordinator's one event loop.
 *
 * Everything happens on one thread: the ROUTER socket is drained, each
 * message dispatched to its handler (admission.c, barrier.c,
 * shard_service.c, worker_stats.c, phase_checkpoint.c), then heartbeats
 * are sent, silent workers detected and exited local workers reaped, and
 * the loop sleeps on the socket until the next frame or a short timeout.
 * Also sending to workers and the keep-alive used during long calls. */
#include "session_internal.h"
#include "catalog.h"
#include "launch.h"
#include "log.h"
#include "util.h"
#include "event_loop.h"
#include "wire.h"
#include "progress.h"
#include "sb_version.h"

#include <czmq.h>
#include <errno.h>
#include <stdio.h>

/* messages dispatched before the loop turns to its housekeeping */
#define S_DRAIN_CAP 4096
/* --local: seconds of each turn of the loop spent starting workers, the
 * rest answering those already started; and how many may be starting at
 * once (started, not yet READY). Each start-up takes CPU (exec, libraries,
 * ZeroMQ, the ranks' setup, the preflight): a thousand at once would leave
 * the coordinator a thousandth of the cores, and the workers would give up
 * waiting for their WELCOME */
#define S_SPAWN_BUDGET_S 0.005
#define S_SPAWN_WINDOW   64

int
sess_send (sess_t *self, sess_worker_t *w, const sb_msg_t *msg)
{
    if (w->gone)
        return 0;
    if (sb_wire_send (self->router, w->identity, msg) != 0) {
        int e = zmq_errno ();
        if (e == EMSGSIZE)
            sess_fail (self, "the coordinator built a %s message for worker %llu on %s larger than the protocol's %d MiB"
                       " frame limit (not sent)", sb_proto_type_name (msg->type), (unsigned long long) w->id, w->host,
                       SB_PROTO_MAX_FRAME >> 20);
        else if (e == EHOSTUNREACH) {
            /* ROUTER_MANDATORY: the worker's connection is gone (its process
             * died and the kernel closed the socket): a lost worker, found
             * before its heartbeat timeout */
            char why[128];
            snprintf (why, sizeof why, "connection closed (%s not delivered)", sb_proto_type_name (msg->type));
            sess_lost (self, w, "connection", why);
        }
        else
            sess_fail (self, "cannot send %s to worker %llu on %s: %s", sb_proto_type_name (msg->type),
                       (unsigned long long) w->id, w->host, zmq_strerror (e));
        return -1;
    }
    return 0;
}

void
sess_broadcast (sess_t *self, const sb_msg_t *msg)
{
    for (size_t i = 0; i < self->nworkers; i++)
        sess_send (self, &self->workers[i], msg);
}

/* Tell the sender of a frame this coordinator cannot read why (REJECT):
 * the protocol versions, or the decoder's reason. `who` names the sender in
 * the debug line when the REJECT cannot be sent. */
static void
s_reject_frame (sess_t *self, zframe_t *identity, sb_proto_status_t st, unsigned long long peer_version,
                const char *reason, const char *who)
{
    sb_msg_t rej = { .type = SB_MSG_REJECT };
    char text[320];
    if (st == SB_PROTO_EVERSION)
        snprintf (text, sizeof text, "coordinator speaks protocol version %d, you sent version %llu",
                  SB_PROTO_VERSION, peer_version);
    else
        snprintf (text, sizeof text, "frame rejected: %s", reason);
    rej.u.reject.reason = text;
    if (sb_wire_send (self->router, identity, &rej) != 0)
        sb_debug ("%s could not be told: %s", who, zmq_strerror (zmq_errno ()));
}

/* Receive and dispatch one message; 0 when none was waiting. */
static int
s_dispatch (sess_t *self)
{
    zframe_t *identity = NULL;
    sb_msg_t msg;
    char reason[256];
    uint64_t peer_version = 0;
    int interrupted = 0;
    sb_proto_status_t st = sb_wire_recv (self->router, &identity, &msg, reason, sizeof reason, &peer_version,
                                         &interrupted);
    if (interrupted)
        return 0;   /* nothing queued (the socket does not block) */
    sess_worker_t *w = identity ? sess_worker_by_identity (self, identity) : NULL;
    if ((st == SB_PROTO_EVERSION || st == SB_PROTO_EFIELD) && msg.type == SB_MSG_HELLO && !w
        && self->nworkers < self->expected) {
        /* a worker of another version came to join: it is told and goes,
         * and the run would wait for it until the join timeout */
        char host[1024], software[512];
        sb_log_escape (msg.u.hello.host, host, sizeof host);
        sb_log_escape (msg.u.hello.software, software, sizeof software);
        s_reject_frame (self, identity, st, peer_version, reason, "the worker of another version");
        if (st == SB_PROTO_EVERSION)
            sess_fail (self, "the worker on %s (%s) speaks protocol version %llu; this coordinator (shardbench %s, build"
                       " %s) speaks protocol version %d: run the same shardbench version on every node", host,
                       *software ? software : "software not named", (unsigned long long) peer_version, SB_VERSION,
                       SB_BUILD, SB_PROTO_VERSION);
        else    /* the same version number, another layout: another build */
            sess_fail (self, "the worker on %s (%s) sent a HELLO this coordinator (shardbench %s, build %s) cannot read"
                       " (%s): another build of protocol version %d; run the same shardbench build on every node",
                       host, *software ? software : "software not named", SB_VERSION, SB_BUILD, reason,
                       SB_PROTO_VERSION);
        sb_proto_fini (&msg);
        zframe_destroy (&identity);
        return 1;
    }
    if (st != SB_PROTO_OK) {
        sb_proto_fini (&msg);   /* a HELLO of another version: what names its sender (wire.h) */
        self->rejected_frames++;
        sb_warn ("rejected a frame from %s: %s", w ? w->host : "an unknown peer", reason);
        /* Tell the sender why, unless it is an admitted worker (REJECT would end it). */
        if (identity && (st == SB_PROTO_EVERSION || !w))
            s_reject_frame (self, identity, st, peer_version, reason, "the sender of the rejected frame");
        zframe_destroy (&identity);
        return 1;
    }
    if (w) {
        w->last_seen = sb_now ();
        w->grace = 0;
        sb_live_heard (self->live, w->first_rank, w->ranks, w->last_seen);
    }
    if (msg.type == SB_MSG_HELLO && !w && self->holding) {
        sess_hold_hello (self, identity, &msg);     /* takes both */
        return 1;
    }
    if (msg.type == SB_MSG_HELLO) {
        if (w)
            sb_warn ("duplicate HELLO from worker %llu ignored", (unsigned long long) w->id);
        else
            sess_on_hello (self, identity, &msg.u.hello);
    }
    else if (!w) {
        self->rejected_frames++;
        sb_warn ("%s from a peer that never said HELLO ignored", sb_proto_type_name (msg.type));
    }
    else {
        char span[64];
        switch (msg.type) {
        case SB_MSG_READY: sess_on_ready (self, w, &msg.u.ready); break;
        case SB_MSG_ENDPOINT_STATS:
            if (msg.u.endpoint_stats.rank < w->first_rank || msg.u.endpoint_stats.rank >= w->first_rank + w->ranks) {
                self->rejected_frames++;
                sb_warn ("ENDPOINT_STATS for rank %llu from worker %llu ignored (not its rank)",
                         (unsigned long long) msg.u.endpoint_stats.rank, (unsigned long long) w->id);
            }
            else
                sess_on_endpoint_stats (self, &msg.u.endpoint_stats);
            break;
        case SB_MSG_HEARTBEAT: break;
        case SB_MSG_ENTRIES_REQ: sess_on_entries_req (self, w, &msg.u.entries_req); break;
        case SB_MSG_LIST_REQ: sess_on_list_req (self, w, &msg.u.list_req); break;
        case SB_MSG_STEP: sess_on_step (self, w, &msg.u.step); break;
        case SB_MSG_BARRIER_UP: sess_on_barrier_up (self, w, &msg.u.barrier_up); break;
        case SB_MSG_RELAY_AT: sess_on_relay_at (self, w, &msg.u.relay_at); break;
        case SB_MSG_STATS: sess_on_stats (self, w, &msg.u.stats); break;
        case SB_MSG_RANK_DONE: sess_on_rank_done (self, w, &msg.u.rank_done); break;
        case SB_MSG_CKPT_DONE: sess_on_ckpt_done (self, w, &msg.u.ckpt_done); break;
        case SB_MSG_KV_READY: sess_on_kv_ready (self, w, &msg.u.kv_ready); break;
        case SB_MSG_KV_RESULT: sess_on_kv_result (self, w, &msg.u.kv_result); break;
        case SB_MSG_ERROR: sess_on_error (self, w, &msg.u.error); break;
        case SB_MSG_BYE: {
            char note[384];
            sess_stall_note (self, note, sizeof note);
            w->gone = 1;
            char reason_text[1024];  /* the worker's text, escaped */
            sess_fail (self, "worker %llu on %s (%s) left: %s%s", (unsigned long long) w->id, w->host,
                       sess_rank_span (w, span, sizeof span),
                       sb_log_escape (msg.u.bye.reason, reason_text, sizeof reason_text), note);
            break;
        }
        default:
            self->rejected_frames++;
            sb_warn ("unexpected %s from worker %llu ignored", sb_proto_type_name (msg.type), (unsigned long long) w->id);
        }
    }
    sb_proto_fini (&msg);
    zframe_destroy (&identity);
    return 1;
}

/* The coordinator's loop (or a keep-alive during a listing) runs: a gap
 * since the last run longer than max(1 s, heartbeat interval) was a stall
 * of the coordinator itself, and every worker's deadline moves by it (it
 * could not hear them meanwhile; their queued messages come next). */
static void
s_loop_ran (sess_t *self, double now)
{
    double gap = self->loop_at > 0 ? now - self->loop_at : 0;
    double limit = self->o->wl->heartbeat_interval_s > 1 ? self->o->wl->heartbeat_interval_s : 1;
    self->loop_at = now;
    if (gap <= limit)
        return;
    self->stalled_s = gap;
    self->stalled_until = now;
    for (size_t i = 0; i < self->nworkers; i++)
        self->workers[i].grace += gap;
    if (self->nworkers)
        sb_warn ("the coordinator itself did not run for %.1f s (stopped, swapped out or busy): the workers' heartbeat"
                 " deadlines move by as much", gap);
}

/* sb_event_drain's receiver: one message, unless the run failed. */
static int
s_dispatch_one (void *arg)
{
    sess_t *self = arg;
    return !self->failed && s_dispatch (self);
}

double
sess_silence_limit (const sb_workload_t *wl)
{
    double i = wl->heartbeat_interval_s;
    return 1.5 * i > i + 0.5 ? 1.5 * i : i + 0.5;
}

/* Heartbeats, silent workers, exited local workers. */
static void
s_housekeeping (sess_t *self, int backlog)
{
    if (sb_resultdb_flush_if_due (self->o->db) != 0)
        sess_fail (self, "cannot commit to the result database: %s", sb_resultdb_errmsg (self->o->db));
    /* the writer's news: a lock is logged; a row lost fails the run */
    if (sb_resultdb_poll (self->o->db) != 0)
        sess_fail (self, "%s", sb_resultdb_errmsg (self->o->db));
    double now = sb_now ();
    const sb_workload_t *wl = self->o->wl;
    sb_progress_tick (self->progress, now);
    sb_metrics_server_poll (self->o->metrics, self->live, now);    /* a scrape waits: render */
    if (now >= self->next_heartbeat) {
        sb_msg_t hb = { .type = SB_MSG_HEARTBEAT };
        sess_broadcast (self, &hb);
        self->next_heartbeat = now + wl->heartbeat_interval_s;
    }
    char span[64];
    /* with frames still queued (the drain stopped at its cap), a silence is
     * the coordinator's backlog, not the worker's: no verdict yet */
    for (size_t i = 0; i < self->nworkers && !self->failed && !backlog; i++) {
        sess_worker_t *w = &self->workers[i];
        if (!w->gone && now - w->last_seen - w->grace > wl->heartbeat_timeout_s) {
            char why[64];
            snprintf (why, sizeof why, "no message for %.1f s", now - w->last_seen);
            sess_lost (self, w, "heartbeat", why);
        }
    }
    if (sb_launcher_pending (self->launcher) && !self->failed) {
        size_t started = sb_launcher_count (self->launcher), settled = 0;
        for (size_t i = 0; i < self->nworkers; i++)
            settled += self->workers[i].ready || self->workers[i].gone;
        size_t starting = started > settled ? started - settled : 0;
        char err[512];
        if (starting < S_SPAWN_WINDOW
            && sb_launcher_start_more (self->launcher, S_SPAWN_BUDGET_S, S_SPAWN_WINDOW - starting, err,
                                       sizeof err) != 0)
            sess_fail (self, "%s", err);
    }
    pid_t pid;
    int status;
    while (self->launcher && sb_launcher_poll (self->launcher, &pid, &status)) {
        char how[128];
        sb_launcher_describe (status, how, sizeof how);
        if (sb_launcher_is_srun (self->launcher, pid)) {
            sess_srun_ended (self, pid, how);
            continue;
        }
        const char *host = sb_launcher_host (self->launcher, pid);
        sess_worker_t *w = host ? sess_worker_by_host (self, host) : sess_worker_by_pid (self, pid);
        if (host && (!w || !w->gone)) {
            char out[512];
            sb_launcher_output (self->launcher, pid, out, sizeof out);
            if (!w)
                sess_fail (self, "host %s: ssh ended before its worker joined (%s)%s%s", host, how, *out ? ": " : "", out);
            else {
                w->gone = 1;
                sess_record_error (self, (int64_t) w->first_rank, w->host, "worker", NULL, 0, how);
                char note[384];
                sess_stall_note (self, note, sizeof note);
                sess_fail (self, "worker %llu on %s (%s) ended: ssh %s%s%s%s", (unsigned long long) w->id, host,
                           sess_rank_span (w, span, sizeof span), how, *out ? ": " : "", out, note);
            }
        }
        else if (host)
            ;   /* its worker was already reported gone (heartbeat, BYE) */
        else if (w && !w->gone)
            sess_local_ended (self, w, pid, status);
        else if (!w)
            sess_fail (self, "local worker pid %d ended before joining: %s", (int) pid, how);
    }
}

void
sess_local_ended (sess_t *self, sess_worker_t *w, pid_t pid, int status)
{
    char how[128], span[64], note[384], relay[96];
    sb_launcher_describe (status, how, sizeof how);
    w->gone = 1;
    sess_record_error (self, (int64_t) w->first_rank, w->host, "worker", NULL, 0, how);
    sess_stall_note (self, note, sizeof note);
    sess_relay_note (self, w, relay, sizeof relay);
    sess_fail (self, "local worker %llu on %s (%s, pid %d)%s ended: %s%s", (unsigned long long) w->id, w->host,
               sess_rank_span (w, span, sizeof span), (int) pid, relay, how, note);
}

/* Pump until done(self) or failure or interrupt. Returns 0 when done. */
int
sess_pump_until (sess_t *self, int (*done) (sess_t *), double timeout_s, const char *what)
{
    double deadline = timeout_s > 0 ? sb_now () + timeout_s : 0;
    double next_note = sb_now () + 10;
    while (!self->failed) {
        if (done (self))
            return 0;
        if (zsys_interrupted) {
            self->aborted = 1;
            sess_fail (self, "interrupted by %s while %s", sess_signal_name (), what);
            break;
        }
        double now = sb_now ();
        s_loop_ran (self, now);
        if (deadline && now > deadline) {
            char detail[1024] = "";
            if (done == sess_all_joined)
                sess_join_detail (self, detail, sizeof detail);
            sess_fail (self, "timed out after %.0f s %s%s", timeout_s, what, detail);
            break;
        }
        if (now > next_note) {
            sb_info ("still %s", what);
            next_note = now + 10;
        }
        /* drain what is queued before housekeeping (the socket's receive
         * timeout is 0: the receive that finds the queue empty ends the
         * loop), then sleep on the socket's ZMQ_FD (sb_event_wait) */
        sb_resultdb_batch_begin (self->o->db);
        zsock_t *socks[1] = { self->router };
        size_t handled = sb_event_drain (s_dispatch_one, self, S_DRAIN_CAP);
        s_housekeeping (self, handled == S_DRAIN_CAP || sb_event_queued (socks, 1));
        /* housekeeping may have sent (heartbeats), and a send can consume
         * the signal of a frame that arrived since the drain: the ROUTER
         * counts as sent on (sb_event_wait asks it for ZMQ_EVENTS before
         * sleeping on its ZMQ_FD) */
        if (handled < S_DRAIN_CAP && !self->failed && !done (self))
            sb_event_wait (socks, 1, 1, 0.05);
    }
    return -1;
}

/* Heartbeats while the coordinator is busy listing or checking (workers
 * would otherwise count it as lost). */
int
sess_keep_alive (void *arg)
{
    sess_t *self = arg;
    double now = sb_now ();
    sb_live_items (self->live, sb_catalog_progress_count ());
    sb_progress_tick (self->progress, now);
    sb_metrics_server_poll (self->o->metrics, self->live, now);
    if (zsys_interrupted)
        return 1;   /* a signal: the listing stops */
    s_loop_ran (self, now);
    if (self->router && self->holding) {
        /* bound before the listing: HELLOs are held (their senders told
         * to wait by heartbeats), other frames refused as always */
        sb_event_drain (s_dispatch_one, self, S_DRAIN_CAP);
        if (self->failed)
            return 1;   /* a worker of another version: the listing stops */
        if (now >= self->next_heartbeat) {
            sess_heartbeat_held (self);
            self->next_heartbeat = now + self->o->wl->heartbeat_interval_s;
        }
        return 0;
    }
    if (self->nworkers == 0 || now < self->next_heartbeat)
        return 0;
    sb_msg_t hb = { .type = SB_MSG_HEARTBEAT };
    for (size_t i = 0; i < self->nworkers; i++)
        sess_send (self, &self->workers[i], &hb);  /* a worker found gone fails the run (sess_lost) */
    self->next_heartbeat = now + self->o->wl->heartbeat_interval_s;
    return 0;
}

/* The same while the result writer drains (its return cannot stop a drain:
 * the writer watches signals itself). */
void
sess_keep_alive_db (void *arg)
{
    (void) sess_keep_alive (arg);
}
