/* lists: the pages of its ranks' file lists a worker asks for under
 * reader.file_shuffle (the coordinator plans every rank's list once an
 * epoch: lib/dataset/sampler_plan.h; the sampler is built served,
 * sampler.h cfg.served).
 *
 * For each rank it scans the positions ahead of what is ready (their pages
 * held) up to `ahead` further, asks for each page those positions need that
 * is not held (LIST_REQ, a few per rank in flight), and drops the pages no
 * position at or above the rank's low-water mark (the lowest position the
 * trainer may still read) needs. Positions below sb_lists_ready have their
 * pages held, whole batches at a time (a read may look at the rest of its
 * batch). Scanning from what is ready, not from the mark, keeps pages on
 * their way for a rank that reads all that is ready at once (synthetic
 * storage, no compute); scanning stops 2 x `ahead` past the mark, so a
 * worker holds, per rank, the pages of at most that many positions: a bound
 * that does not grow with the dataset. */
#ifndef SB_LISTS_H
#define SB_LISTS_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "rank_report.h"
#include "sampler.h"

typedef struct sb_lists sb_lists_t;

/* NULL when out of memory. */
sb_lists_t *sb_lists_new (size_t nranks);
/* Accepts NULL; nulls the pointer. */
void sb_lists_destroy (sb_lists_t **self_p);

/* A new epoch of k positions per rank in batches of `batch`, scanning
 * `ahead` positions past what is ready (at most 2 x `ahead` past each
 * rank's low-water mark). */
void sb_lists_reset (sb_lists_t *self, uint64_t epoch, uint64_t k, uint64_t batch, uint64_t ahead);

/* Rank slot i (rank number `rank`) may read no position below `low`:
 * drop the pages only lower positions needed, ask for those the next
 * positions need. 0, or -1 with err set (a send failed, out of memory). */
int sb_lists_pump (sb_lists_t *self, sb_sampler_t *sampler, size_t i, uint64_t rank, uint64_t low,
                   const sb_sender_t *out, char *err, size_t err_size);

/* Positions of rank slot i below this have their pages held (a multiple
 * of the batch, or k). */
uint64_t sb_lists_ready (const sb_lists_t *self, size_t i);

/* A LIST page: 0 (taken, or stale: another epoch), or -1 with err set. */
int sb_lists_on_page (sb_lists_t *self, sb_sampler_t *sampler, const sb_msg_list_t *m, uint64_t first_rank,
                      char *err, size_t err_size);

/* LIST_REQ sent this run (for the log). */
uint64_t sb_lists_asked (const sb_lists_t *self);

#endif
