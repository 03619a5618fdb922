/* shard_service: catalog entries a worker cannot derive itself (ENTRIES_REQ):
 * sizes, DLIO indices and keys from the in-memory catalog index, one page
 * per request; and pages of the ranks' file lists under file_shuffle
 * (LIST_REQ), from the epoch's plan. */
#include "session_internal.h"
#include "catalog.h"
#include "dataset.h"
#include "log.h"
#include "sample_range.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ENTRIES_REQ: the catalog entries a worker cannot derive, one lookup in
 * the in-memory index per entry (a SQLite seek only for a stored key). */
void
sess_on_entries_req (sess_t *self, sess_worker_t *w, const sb_msg_entries_req_t *m)
{
    if ((self->phase != SESS_PHASE_TRAIN && self->phase != SESS_PHASE_EVAL) || m->epoch != self->epoch) {
        sb_debug ("stale ENTRIES_REQ for epoch %llu ignored", (unsigned long long) m->epoch);
        return;
    }
    /* the set this phase reads: train/'s catalog, or valid/'s */
    int eval = self->phase == SESS_PHASE_EVAL;
    sb_catalog_reader_t *catalog = eval ? self->eval_catalog : self->catalog;
    const sb_catalog_info_t *info = eval ? &self->eval_catalog_info : &self->catalog_info;
    if (!catalog) {
        sess_fail (self, "worker %llu on %s asked for catalog entries of %s, which has no catalog (dataset.skip_listing"
                   " or synthetic storage)", (unsigned long long) w->id, w->host, eval ? "valid/" : "train/");
        return;
    }
    size_t n = m->indices.count;
    if (n == 0 || n > self->o->wl->keys_page) {
        sess_fail (self, "worker %llu on %s asked for %zu catalog entries in one page (1 to shardbench.keys_page=%llu)",
                   (unsigned long long) w->id, w->host, n, (unsigned long long) self->o->wl->keys_page);
        return;
    }
    sb_msg_t reply = { .type = SB_MSG_ENTRIES };
    sb_msg_entries_t *r = &reply.u.entries;
    r->epoch = m->epoch;
    r->seq = m->seq;
    r->sizes.items = calloc (n, sizeof (uint64_t));
    r->dlio.items = calloc (n, sizeof (uint64_t));
    int with_keys = !(eval ? self->eval_names : self->catalog_names);
    if (!r->sizes.items || !r->dlio.items || (with_keys && !(r->keys.items = calloc (n, sizeof (char *))))) {
        sess_fail (self, "out of memory serving catalog entries");
        goto done;
    }
    r->sizes.count = r->dlio.count = n;
    const sb_dataset_t *naming = sb_catalog_reader_naming (catalog);
    uint64_t key_bytes = 0;
    for (size_t j = 0; j < n; j++) {
        uint64_t idx = m->indices.items[j], size = 0, dlio = 0;
        int named = sb_catalog_reader_locate (catalog, idx, &size, &dlio);
        if (named < 0) {
            sess_fail (self, "worker %llu on %s asked for object %llu of catalog %lld, which has %llu",
                       (unsigned long long) w->id, w->host, (unsigned long long) idx, (long long) info->id,
                       (unsigned long long) info->count);
            goto done;
        }
        r->sizes.items[j] = size;
        r->dlio.items[j] = named ? dlio : SB_NO_DLIO_INDEX;
        if (!with_keys)
            continue;
        char key[PATH_MAX];
        uint64_t ignored;
        if (named ? !naming || sb_dataset_key (naming, dlio, key, sizeof key) != 0
                  : sb_catalog_reader_get (catalog, idx, key, sizeof key, &ignored) != 0) {
            sess_fail (self, "catalog %lld has no key for object %llu", (long long) info->id,
                       (unsigned long long) idx);
            goto done;
        }
        if (!(r->keys.items[j] = strdup (key))) {
            sess_fail (self, "out of memory serving catalog entries");
            goto done;
        }
        r->keys.count = j + 1;
        key_bytes += strlen (key);
    }
    /* the page must fit in one frame (workers drop the connection of a
     * larger one, which would look like a lost worker): the keys, about 9
     * bytes for each of size and index, and a margin for the rest */
    uint64_t estimate = key_bytes + (uint64_t) n * 24 + 4096;
    if (estimate > SB_PROTO_MAX_FRAME) {
        sess_fail (self, "the coordinator cannot send worker %llu its page of %zu catalog entries: about %llu bytes (%llu"
                   " of keys), over the protocol's %d MiB frame limit: lower shardbench.keys_page (now %llu)",
                   (unsigned long long) w->id, n, (unsigned long long) estimate, (unsigned long long) key_bytes,
                   SB_PROTO_MAX_FRAME >> 20, (unsigned long long) self->o->wl->keys_page);
        goto done;
    }
    sess_send (self, w, &reply);
done:
    sb_proto_fini (&reply);
}

/* LIST_REQ: a page of a rank's file list this epoch, from the plan (the
 * worker's own ranks only). A request of another epoch, or one that comes
 * while the next epoch is planned, is stale: ignored. */
void
sess_on_list_req (sess_t *self, sess_worker_t *w, const sb_msg_list_req_t *m)
{
    if (self->phase != SESS_PHASE_TRAIN || m->epoch != self->epoch || !self->plan
        || sb_plan_poll (self->plan) != -1 || sb_plan_epoch_planned (self->plan) != m->epoch) {
        sb_debug ("stale LIST_REQ for epoch %llu ignored", (unsigned long long) m->epoch);
        return;
    }
    uint64_t f = sb_plan_files_per_rank (self->plan), per = sb_plan_page_files (self->plan);
    uint64_t pages = (f + per - 1) / per;
    if (m->rank < w->first_rank || m->rank - w->first_rank >= w->ranks || m->page >= pages) {
        sess_fail (self, "worker %llu on %s asked for page %llu of rank %llu's file list: its ranks are %llu..%llu, and"
                   " a list has %llu pages", (unsigned long long) w->id, w->host, (unsigned long long) m->page,
                   (unsigned long long) m->rank, (unsigned long long) w->first_rank,
                   (unsigned long long) (w->first_rank + w->ranks - 1), (unsigned long long) pages);
        return;
    }
    uint64_t first = m->page * per, n = f - first < per ? f - first : per;
    sb_msg_t reply = { .type = SB_MSG_LIST };
    sb_msg_list_t *r = &reply.u.list;
    r->epoch = m->epoch;
    r->rank = m->rank;
    r->page = m->page;
    if (!(r->files.items = malloc ((size_t) n * sizeof (uint64_t)))) {
        sess_fail (self, "out of memory serving a page of a file list");
        return;
    }
    r->files.count = (size_t) n;
    if (sb_plan_files (self->plan, m->rank, first, n, r->files.items) != 0)
        sess_fail (self, "the plan of epoch %llu has no page %llu of rank %llu", (unsigned long long) m->epoch,
                   (unsigned long long) m->page, (unsigned long long) m->rank);
    else
        sess_send (self, w, &reply);
    sb_proto_fini (&reply);
}
