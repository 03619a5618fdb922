/* slurm: what `shardbench run --slurm` needs from a Slurm allocation.
 *
 * Slurm names the nodes of a job in a compressed host list
 * (SLURM_JOB_NODELIST, e.g. "gpu[01-03,07],login2"); scontrol show
 * hostnames expands it, but the coordinator expands it itself rather than
 * depend on scontrol being on the PATH of the node it runs on. */
#ifndef SB_SLURM_H
#define SB_SLURM_H

#include <stddef.h>

/* At most this many hosts from one list: a typo such as n[1-100000000]
 * is refused rather than allocated. */
#define SB_SLURM_MAX_HOSTS 65536

/* Expand a Slurm host list, calling each (host, ctx) once per host in
 * order; host is borrowed for the call. Handles comma-separated items,
 * bracketed ranges and single numbers ("n[1-3,5]"), zero padding
 * ("n[001-010]"), several bracket groups in one item ("r[1-2]n[1-2]") and
 * text after a group ("n[1-2]-ib"). Returns 0; -1 with err set on a
 * malformed list, more than SB_SLURM_MAX_HOSTS hosts, or when each returns
 * non-zero. */
int sb_slurm_hostlist_expand (const char *list, int (*each) (const char *host, void *ctx), void *ctx, char *err,
                              size_t err_size);

#endif
