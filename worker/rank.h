/* rank: one emulated accelerator, run as a CZMQ actor (its own thread).
 *
 * The agent thread forwards PHASE_START, KEYS and GO frames to the rank's
 * pipe; the rank sends KEYS_REQ, STEP, STATS, RANK_DONE and ERROR frames
 * to the agent's one PULL socket (so the agent polls two sockets, not one
 * per rank), which the agent forwards to the coordinator (STEP is aggregated over
 * the worker's ranks first). Inside, read_threads I/O threads read samples
 * pushed to them over inproc sockets; the rank thread assembles batches and
 * emulates the accelerator's compute. */
#ifndef SB_RANK_H
#define SB_RANK_H

#include <czmq.h>
#include <stdint.h>

#include "proto.h"
#include "storage.h"

typedef struct {
    const sb_msg_welcome_t *cfg;    /* borrowed, outlives the actor */
    const sb_storage_cfg_t *storage;/* borrowed, outlives the actor */
    uint64_t                rank;
    const char             *host;   /* borrowed */
    const char             *up;     /* borrowed: inproc endpoint of the agent's PULL socket */
} sb_rank_args_t;

/* zactor_fn: pass a sb_rank_args_t * as args. */
void sb_rank_actor (zsock_t *pipe, void *args);

#endif
