/* lists: pages of the ranks' file lists, asked ahead (see lists.h). */
#include "lists.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_IN_FLIGHT 8   /* LIST_REQ of a rank asked and not answered */

typedef struct {
    uint64_t scan;      /* positions below were scanned: their pages asked or held */
    uint64_t ready;     /* positions below have their pages held */
    uint64_t in_flight;
} s_rank_t;

struct sb_lists {
    s_rank_t *ranks;
    size_t    nranks;
    uint64_t  epoch, k, batch, ahead;
    uint64_t  asked;
};

sb_lists_t *
sb_lists_new (size_t nranks)
{
    sb_lists_t *self = calloc (1, sizeof *self);
    if (!self || !(self->ranks = calloc (nranks ? nranks : 1, sizeof *self->ranks))) {
        free (self);
        return NULL;
    }
    self->nranks = nranks;
    return self;
}

void
sb_lists_destroy (sb_lists_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->ranks);
    free (*self_p);
    *self_p = NULL;
}

void
sb_lists_reset (sb_lists_t *self, uint64_t epoch, uint64_t k, uint64_t batch, uint64_t ahead)
{
    memset (self->ranks, 0, self->nranks * sizeof *self->ranks);
    self->epoch = epoch;
    self->k = k;
    self->batch = batch ? batch : 1;
    self->ahead = ahead;
}

/* Scan rank slot i's positions up to `until`, asking for the pages they
 * need; then move its ready mark over the held ones. */
static int
s_scan (sb_lists_t *self, sb_sampler_t *sampler, s_rank_t *r, uint64_t rank, uint64_t until,
        const sb_sender_t *out, char *err, size_t err_size)
{
    while (r->scan < until) {
        /* the positions from scan to end read one file, so one page */
        uint64_t page, run;
        if (sb_sampler_page_of (sampler, rank, r->scan, &page, &run) != 0) {
            snprintf (err, err_size, "the sampler has no page for position %llu of rank %llu",
                      (unsigned long long) r->scan, (unsigned long long) rank);
            return -1;
        }
        uint64_t end = run < until - r->scan ? r->scan + run : until;
        if (sb_sampler_page_state (sampler, rank, page) != 0) {
            sb_sampler_page_touch (sampler, rank, page, end - 1);
            r->scan = end;
            continue;
        }
        if (r->in_flight >= S_IN_FLIGHT)
            break;
        if (sb_sampler_page_ask (sampler, rank, page, end - 1) != 0) {
            snprintf (err, err_size, "out of memory for the pages of rank %llu's file list", (unsigned long long) rank);
            return -1;
        }
        sb_msg_t m = { .type = SB_MSG_LIST_REQ };
        m.u.list_req.epoch = self->epoch;
        m.u.list_req.rank = rank;
        m.u.list_req.page = page;
        if (out->fn (out->ctx, &m) != 0) {
            snprintf (err, err_size, "cannot ask the coordinator for page %llu of rank %llu's file list",
                      (unsigned long long) page, (unsigned long long) rank);
            return -1;
        }
        r->in_flight++;
        self->asked++;
        r->scan = end;
    }
    /* a position is ready once its page is held */
    while (r->ready < r->scan) {
        uint64_t page, run;
        if (sb_sampler_page_of (sampler, rank, r->ready, &page, &run) != 0
            || sb_sampler_page_state (sampler, rank, page) != 2)
            break;
        r->ready = run < r->scan - r->ready ? r->ready + run : r->scan;
    }
    return 0;
}

int
sb_lists_pump (sb_lists_t *self, sb_sampler_t *sampler, size_t i, uint64_t rank, uint64_t low,
               const sb_sender_t *out, char *err, size_t err_size)
{
    s_rank_t *r = &self->ranks[i];
    sb_sampler_page_release (sampler, rank, low);
    /* the pages `ahead` positions past what is ready are asked, so that a
     * rank that reads all that is ready at once (synthetic storage, no
     * compute) finds the next pages in, or on their way; never more than
     * `ahead` past the low-water mark is ready, which bounds the pages held */
    for (;;) {
        uint64_t from = r->ready < low + self->ahead ? r->ready : low + self->ahead;
        uint64_t until = from + self->ahead < self->k ? from + self->ahead : self->k;
        if (until < self->k)    /* whole batches: a read may look at the rest of its batch */
            until = (until / self->batch + 1) * self->batch < self->k ? (until / self->batch + 1) * self->batch
                                                                     : self->k;
        uint64_t ready = r->ready;
        if (s_scan (self, sampler, r, rank, until, out, err, err_size) != 0)
            return -1;
        if (r->ready == ready || r->ready >= low + self->ahead)
            return 0;
    }
}

uint64_t
sb_lists_ready (const sb_lists_t *self, size_t i)
{
    uint64_t ready = self->ranks[i].ready;
    return ready >= self->k ? self->k : ready / self->batch * self->batch;
}

int
sb_lists_on_page (sb_lists_t *self, sb_sampler_t *sampler, const sb_msg_list_t *m, uint64_t first_rank,
                  char *err, size_t err_size)
{
    if (m->epoch != self->epoch)
        return 0;   /* an earlier epoch's: nothing reads it */
    if (m->rank < first_rank || m->rank - first_rank >= self->nranks) {
        snprintf (err, err_size, "LIST for rank %llu, not one of this worker's", (unsigned long long) m->rank);
        return -1;
    }
    s_rank_t *r = &self->ranks[m->rank - first_rank];
    if (sb_sampler_page_put (sampler, m->rank, m->page, m->files.items, m->files.count, err, err_size) != 0)
        return -1;
    if (r->in_flight)
        r->in_flight--;
    return 0;
}

uint64_t
sb_lists_asked (const sb_lists_t *self)
{
    return self->asked;
}
