/* barrier_tree: the worker's part in the step barrier's tree.
 *
 * With more workers than shardbench.barrier_fanout the coordinator does not
 * take every worker's STEP: worker j relays the arrivals of its children
 * (workers (j+1)*fanout .. (j+1)*fanout+fanout-1), and only the top
 * workers (those under no relay) report to the coordinator. Per step every
 * process handles at most fanout + 1 arrivals and fanout GOs, so the
 * coordinator's cost does not grow with the workers and the barrier's
 * latency grows with the tree's depth (log_fanout workers).
 *
 * A relay binds a ROUTER on the address its connection to the coordinator
 * leaves from (ephemeral port; with CURVE a key pair made for the run,
 * whose public half travels to its children through the coordinator); a
 * child connects a DEALER to it with its worker id as routing id. STEP of
 * the local ranks and BARRIER_UP of the children are counted; when all
 * arrived one BARRIER_UP goes up (to the parent relay, or to the
 * coordinator through the agent's connection). GO comes down the same way:
 * a relay passes it to its children first, then to its own ranks.
 *
 * Nothing else goes through a relay: heartbeats, RANK_DONE, errors go
 * straight to the coordinator, which therefore still names any lost worker
 * (relay or not) by its ranks, host and pid. */
#ifndef SB_BARRIER_TREE_H
#define SB_BARRIER_TREE_H

#include "proto.h"

#include <czmq.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sb_btree sb_btree_t;

typedef struct {
    /* send msg to the coordinator (the agent's connection); 0 or -1 */
    int  (*to_coordinator) (void *ctx, const sb_msg_t *msg);
    /* a GO for this worker's ranks (after the children got theirs) */
    void (*go) (void *ctx, sb_msg_t *go);
    void *ctx;
} sb_btree_io_t;

/* worker: this worker's id. NULL out of memory. */
sb_btree_t *sb_btree_new (uint64_t worker, const sb_btree_io_t *io);
void sb_btree_destroy (sb_btree_t **self_p);

/* RELAY_BIND: bind the relay's socket for children first_child ..
 * first_child+children-1, reachable where coordinator_endpoint is reached
 * from here; curve: the run uses CURVE. Fills *relay_at (RELAY_AT, owned:
 * sb_proto_fini). Returns 0, or -1 with err. */
int sb_btree_bind (sb_btree_t *self, const char *coordinator_endpoint, int curve, uint64_t first_child,
                   uint64_t children, sb_msg_t *relay_at, char *err, size_t err_size);

/* BARRIER_TREE: from now on this worker's STEPs go through the tree;
 * connect to the parent relay (keys_dir, cert_name: this worker's CURVE
 * certificate, NULL without CURVE). Returns 0, or -1 with err. */
int sb_btree_join (sb_btree_t *self, const sb_msg_barrier_tree_t *m, const char *keys_dir, const char *cert_name,
                   char *err, size_t err_size);

/* 1 once BARRIER_TREE came: STEP and GO go through sb_btree_step and
 * sb_btree_go, not straight to and from the coordinator. */
int sb_btree_in_use (const sb_btree_t *self);

/* The local ranks' STEP. Returns 0, or -1 with err (out of order, a send
 * failed). */
int sb_btree_step (sb_btree_t *self, const sb_msg_step_t *m, char *err, size_t err_size);

/* GO from the coordinator (top workers): to the children, then the
 * ranks. Returns 0, or -1 with err. */
int sb_btree_go (sb_btree_t *self, sb_msg_t *go, char *err, size_t err_size);

/* Receive one frame from a child or the parent relay (non-blocking) and
 * handle it. Returns 1 when one was handled, 0 when none was queued, -1
 * with err (a frame out of order or from a stranger, a send failed). */
int sb_btree_recv_one (sb_btree_t *self, char *err, size_t err_size);

/* The tree's sockets to wait on (at most 2) into socks; returns how many.
 * The tree may have sent on each of them since it last drained them. */
size_t sb_btree_socks (sb_btree_t *self, zsock_t **socks);

#endif
