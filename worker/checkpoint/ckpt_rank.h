/* checkpoint: one rank's part of a checkpoint write or read (`shardbench
 * checkpoint`), on the rank's own thread (worker/datagen/rank.c).
 *
 * A rank writes its model state and its optimizer state as two files (or
 * objects) named as DeepSpeed / DLIO name them, under PHASE_START's
 * ckpt_root, the checkpoint folder with its own storage (SCHEME://STORE/PREFIX/
 * or a local folder, lib/storage/ckpt_target.h):
 *   global_epoch1_step{K}/zero_pp_rank_{D}_mp_rank_{MM}_model_states.pt
 *   global_epoch1_step{K}/zero_pp_rank_{D}_mp_rank_{MM}_optim_states.pt
 * with K the checkpoint number, D = rank / (tensor x pipeline) and
 * MM = rank mod (tensor x pipeline). A state of 0 bytes has no file. Files
 * are written in place and fsync'ed when PHASE_START says so; S3 objects
 * are PUT (multipart from the configured threshold), or with a
 * storage_library as that library uploads checkpoints in DLIO
 * (lib/storage/s3/s3_shape.h). Before the first
 * write into a local folder, the files of all the worker's ranks must fit
 * in that folder's free space on this host (else ENOSPC, nothing written);
 * a file cut short by a failed or stopped write is removed. A read reads both back
 * whole and checks their lengths (with a storage_library: the checkpoint's
 * size in the library's range GETs, as DLIO's readers read it). The byte counts come from the coordinator
 * (coordinator/session/ckpt_plan.c), one per rank in PHASE_START. */
#ifndef SB_WORKER_CHECKPOINT_H
#define SB_WORKER_CHECKPOINT_H

#include <limits.h>
#include <stdint.h>

#include "proto.h"
#include "rank_report.h"
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

/* a checkpoint written during a train epoch (DLIO saves in
 * its training loop, and the rank waits for it), on a thread of its own so
 * that the agent's loop goes on (heartbeats, the other ranks). The rank's
 * files come from ps (ckpt_names, ckpt_bytes, ckpt_first), the folder is
 * ckpt_root (or WELCOME data_root) + global_epoch{epoch}_step{step}/.
 * ckpt_root chooses the storage (lib/storage/ckpt_target.h): "SCHEME://STORE/PREFIX/"
 * objects on WELCOME's endpoints, or a local folder, whatever the dataset's. */
typedef struct sb_ckpt_job sb_ckpt_job_t;

typedef struct {
    uint64_t files, bytes;
    double   started_at, finished_at;
    int      failed;                /* then op, target, errno_val and message say why */
    int      errno_val;
    char     op[32];
    char     target[PATH_MAX];
    char     message[1024];
} sb_ckpt_result_t;

/* Start writing; NULL with err when it cannot start. cfg and storage are
 * borrowed for the job's life; ps is copied from. */
sb_ckpt_job_t *sb_ckpt_job_start (const sb_msg_welcome_t *cfg, const sb_storage_cfg_t *storage, uint64_t rank,
                                  const sb_msg_phase_start_t *ps, uint64_t epoch, uint64_t step, char *err,
                                  size_t err_size);

/* 1 once the job finished (sb_ckpt_job_finish then does not wait), else 0. */
int sb_ckpt_job_done (const sb_ckpt_job_t *job);

/* Wait for the job (stop: 1 to stop it between writes first), give its
 * result (may be NULL) and free it; *job_p becomes NULL. */
void sb_ckpt_job_finish (sb_ckpt_job_t **job_p, int stop, sb_ckpt_result_t *result);

#endif
