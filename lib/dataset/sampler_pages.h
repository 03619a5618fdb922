/* sampler_pages: the pages of file lists a served sampler holds (internal
 * to the sampler; see sampler.h, sb_sampler_page_*).
 *
 * A rank's list is cut into pages of SB_SAMPLER_PAGE local files. A page
 * is absent, asked (its files are on their way) or present; each records
 * the last position known to need it, so that pages no position at or
 * above a rank's low-water mark needs can go. A rank holds a handful (the
 * pages its reads within reach touch), kept in a small array searched
 * linearly. */
#ifndef SB_SAMPLER_PAGES_H
#define SB_SAMPLER_PAGES_H

#include <stddef.h>
#include <stdint.h>

typedef struct sb_pages sb_pages_t;   /* struct sb_pages: sampler_dlio.h names it */

sb_pages_t *sb_pages_new (uint64_t nranks);
void sb_pages_destroy (sb_pages_t **self_p);
/* Drop every page (a new epoch). */
void sb_pages_reset (sb_pages_t *self);
/* 0 absent, 1 asked, 2 present. */
int sb_pages_state (const sb_pages_t *self, uint64_t slot, uint64_t page);
/* Mark a page asked (absent before) needed up to `last`: 0, -1 out of memory. */
int sb_pages_ask (sb_pages_t *self, uint64_t slot, uint64_t page, uint64_t last);
/* Raise the last position known to need a page (asked or present). */
void sb_pages_touch (sb_pages_t *self, uint64_t slot, uint64_t page, uint64_t last);
/* The files of an asked page: 0, or -1 (not asked, or out of memory). */
int sb_pages_put (sb_pages_t *self, uint64_t slot, uint64_t page, const uint64_t *files, size_t n, int wide);
/* The catalog index of local file j of the page (present): 0 or -1. */
int sb_pages_get (const sb_pages_t *self, uint64_t slot, uint64_t page, uint64_t j, uint64_t *file);
/* Forget the present pages of a slot last needed below `position`. */
void sb_pages_release (sb_pages_t *self, uint64_t slot, uint64_t position);
/* Pages held (asked or present), all slots; bytes of files they hold. */
uint64_t sb_pages_held (const sb_pages_t *self, uint64_t *bytes);

#endif
