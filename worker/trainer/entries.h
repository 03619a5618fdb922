/* entries: the catalog entries (size, key, DLIO index) a worker's ranks
 * read in an epoch, for a catalog the worker cannot derive them from (names
 * that are not DLIO's, sizes that are not the generator's).
 *
 * At the start of an epoch the trainer lists the files its ranks will read,
 * in the order they are first needed (sb_entries_want); the entries are then
 * asked from the coordinator in pages of at most `page` indices
 * (ENTRIES_REQ, a few pages in flight) and arrive in order (ENTRIES). A
 * rank whose next file has not arrived waits. The coordinator's work is one
 * lookup per distinct file read per epoch. */
#ifndef SB_ENTRIES_H
#define SB_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

typedef struct sb_entries sb_entries_t;

/* NULL when out of memory. */
sb_entries_t *sb_entries_new (void);
/* Accepts NULL; nulls the pointer. */
void sb_entries_destroy (sb_entries_t **self_p);

/* Forget the last epoch's entries; the next are for `epoch`. */
void sb_entries_reset (sb_entries_t *self, uint64_t epoch);

/* Add file (a catalog index) to the list unless it is there. 0, or -1 out
 * of memory. */
int sb_entries_want (sb_entries_t *self, uint64_t file);

/* Files listed. */
uint64_t sb_entries_count (const sb_entries_t *self);

/* The entry of file: 0 with *size, *dlio and *key (NULL: none came, the
 * name is derived; borrowed until the next reset) set; 1 when it has not
 * arrived yet; -1 when file was never listed. */
int sb_entries_get (const sb_entries_t *self, uint64_t file, uint64_t *size, uint64_t *dlio, const char **key);

/* The next ENTRIES_REQ when one is due (fewer than max_in_flight pages
 * asked and not answered, files left to ask): fills *msg (its array is
 * borrowed from self until the next call) and returns 1; else 0. */
int sb_entries_next_request (sb_entries_t *self, uint64_t page, uint64_t max_in_flight, sb_msg_t *msg);

/* Take a page (its keys are moved out of m). with_keys: the page must carry
 * one key per entry, each a safe relative name (sb_dataset_check_name), else
 * none. Returns 0, or -1 with err saying what is wrong with the page and,
 * when a name was refused, *bad_name pointing to it (in m). */
int sb_entries_on_page (sb_entries_t *self, sb_msg_entries_t *m, int with_keys, const char **bad_name, char *err,
                        size_t err_size);

#endif
