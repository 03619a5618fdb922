/* rank: one rank's share of dataset generation (datagen), run as a CZMQ
 * actor (its own thread, so the writes of a worker's ranks overlap).
 *
 * The agent thread forwards PHASE_START to the rank's pipe; the rank sends
 * STATS, ENDPOINT_STATS, RANK_DONE and ERROR frames to the agent's one PULL
 * socket, which the agent forwards to the coordinator. Training does not
 * use these threads: it runs in the agent's event loop (worker/trainer/trainer.h). */
#ifndef SB_RANK_H
#define SB_RANK_H

#include <czmq.h>
#include <stdatomic.h>
#include <stdint.h>

#include "proto.h"
#include "storage.h"

typedef struct {
    const sb_msg_welcome_t *cfg;    /* borrowed, outlives the actor */
    const sb_storage_cfg_t *storage;/* borrowed, outlives the actor */
    uint64_t                rank;
    const char             *host;   /* borrowed */
    const char             *up;     /* borrowed: inproc endpoint of the agent's PULL socket */
    const atomic_int       *stop;   /* borrowed, may be NULL: set by the agent when the session ends
                                     * (ABORT, coordinator lost, signal); a datagen write stops
                                     * within one buffer and removes its temporary */
} sb_rank_args_t;

/* zactor_fn: pass a sb_rank_args_t * as args. */
void sb_rank_actor (zsock_t *pipe, void *args);

#endif
