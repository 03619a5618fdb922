/* trainer: the training loop of every rank of a worker, on the agent's
 * thread.
 *
 * Each rank (emulated accelerator) is a state machine: it asks for pages of
 * keys, submits reads to its own I/O engine (worker/trainer/reader.h) within the
 * prefetch window, computes a batch when its samples are in (an emulated
 * compute is a deadline, not a sleep, so the ranks of a worker compute at
 * the same time), and waits at each step barrier. The trainer aggregates
 * STEP over its ranks and sends one per worker.
 *
 * Running every rank in the agent's one event loop, rather than a thread
 * per rank, costs one wake-up per worker per barrier instead of one per
 * rank: on a loaded node the context switches, not the work, were the cost
 * of a step (docs/PERFORMANCE.md, "Scale").
 *
 * The agent drives it: sb_trainer_on_message for ENTRIES and GO,
 * sb_trainer_pump after every wake-up, and sleeps on sb_trainer_wait_fds
 * until sb_trainer_pump's deadline. */
#ifndef SB_TRAINER_H
#define SB_TRAINER_H

#include <czmq.h>
#include <stdint.h>

#include "proto.h"
#include "rank_report.h"
#include "storage.h"

typedef struct sb_trainer sb_trainer_t;

/* One I/O engine per rank of cfg (borrowed, as storage, for the trainer's
 * life); messages go out through out (copied). NULL on failure (err set). */
sb_trainer_t *sb_trainer_new (const sb_msg_welcome_t *cfg, const sb_storage_cfg_t *storage, const sb_sender_t *out,
                              char *err, size_t err_size);
void sb_trainer_destroy (sb_trainer_t **self_p);

/* Begin epoch ps->epoch on every rank. Returns 0, or -1 when one is still
 * running (a protocol error, reported). */
int sb_trainer_start (sb_trainer_t *self, const sb_msg_phase_start_t *ps);

/* An ENTRIES or GO message from the coordinator (ENTRIES' keys are moved out). */
void sb_trainer_on_message (sb_trainer_t *self, sb_msg_t *msg);

/* Make all the progress that needs no waiting: take completions, request
 * keys, submit reads, end computes, pass barriers, send STATS and, at the
 * end of the epoch, RANK_DONE. Returns the sb_now () time by which it must
 * run again (a compute ends, STATS are due), or 0 when only a message or a
 * completion can move it. *busy is set when a rank's completions were
 * left queued (do not sleep). */
double sb_trainer_pump (sb_trainer_t *self, int *busy);

/* Before the agent sleeps: the fds that wake it when a completion comes,
 * those of the ranks still in the epoch (none for synthetic storage), each
 * armed (sb_reader_arm). Returns how many, up to max; *queued is set when a
 * rank already has completions queued (do not sleep: pump again). */
size_t sb_trainer_wait_fds (sb_trainer_t *self, int *out, size_t max, int *queued);

/* When this worker's STEP left, while it waits for the GO that releases
 * its ranks (nothing else to do but wait), else 0: the agent polls rather
 * than sleeps for a short while then, as a barrier round trip is about
 * the length of a scheduler wake-up. */
double sb_trainer_awaiting_go_since (const sb_trainer_t *self);

#endif
