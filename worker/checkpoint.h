/* checkpoint: one rank's part of a checkpoint write or read (`shardbench
 * checkpoint`), on the rank's own thread (worker/rank.c).
 *
 * A rank writes its model state and its optimizer state as two files (S3
 * objects) named as DeepSpeed / DLIO name them, under WELCOME's data_root,
 * which is the checkpoint folder in a checkpoint run:
 *   global_epoch1_step{K}/zero_pp_rank_{D}_mp_rank_{MM}_model_states.pt
 *   global_epoch1_step{K}/zero_pp_rank_{D}_mp_rank_{MM}_optim_states.pt
 * with K the checkpoint number, D = rank / (tensor x pipeline) and
 * MM = rank mod (tensor x pipeline). A state of 0 bytes has no file. Files
 * are written in place and fsync'ed when PHASE_START says so; S3 objects
 * are PUT (multipart from the configured threshold). A read reads both back
 * whole and checks their lengths. The byte counts come from the coordinator
 * (coordinator/checkpoint.c), one per rank in PHASE_START. */
#ifndef SB_WORKER_CHECKPOINT_H
#define SB_WORKER_CHECKPOINT_H

#include <stdint.h>

#include "proto.h"
#include "report.h"
#include "storage.h"

typedef struct {
    const sb_msg_welcome_t *cfg;        /* borrowed */
    const sb_storage_cfg_t *storage;    /* borrowed */
    uint64_t                rank;
    const sb_sender_t      *out;        /* STATS, ENDPOINT_STATS, ERROR, RANK_DONE */
    sb_interval_t          *interval;   /* the rank's STATS counters */
    int                   (*stop) (void *arg);  /* 1: the rank must stop now ($TERM) */
    void                   *stop_arg;
} sb_ckpt_rank_t;

/* Run phase ps ("checkpoint_write" or "checkpoint_read") for self->rank.
 * Ends with RANK_DONE (samples = files, bytes, start and finish times), or
 * with an ERROR; sends nothing more once stop() said 1. */
void sb_ckpt_rank_run (const sb_ckpt_rank_t *self, const sb_msg_phase_start_t *ps);

#endif
