/* results_leaf: the parts of writing a results directory that every kind of
 * run shares (results_dir.c for training, checkpointing and data
 * generation; kv_results_dir.c for the KV-cache benchmark): the options
 * checked, the organisation, the leaf's name and the folder made or given,
 * and the leaf removed again when it could not be written whole. */
#ifndef SB_RESULTS_LEAF_H
#define SB_RESULTS_LEAF_H

#include "json_doc.h"
#include "results_dir.h"

#include <stddef.h>
#include <stdint.h>

#define SB_RESULTS_LEAF_BUMPS 10    /* mlpstorage's reserve_run_directory: up to 10 next seconds */

/* 0 when opts give one of a root and a leaf and --submitter, --system are
 * safe names; else -1 with err saying which. */
int sb_results_leaf_opts_check (const sb_results_dir_opts_t *opts, char *err, size_t err_size);

/* The organisation a run is written for: --submitter; else, under a root
 * whose sentinel pins one, that one (copied into org), as mlpstorage
 * resolves it for every command (results_dir/sentinel.py resolve_orgname);
 * else "shardbench". Returns 0 with *submitter set, or -1 with err (an
 * unreadable sentinel). */
int sb_results_leaf_submitter (const sb_results_dir_opts_t *opts, char *org, size_t org_size,
                               const char **submitter, char *err, size_t err_size);

/* t's second in local time as mlpstorage names a leaf: YYYYMMDD_HHMMSS. */
void sb_results_leaf_ts (double t, char *buf, size_t size);

/* name made one safe path segment in place: every byte outside
 * [A-Za-z0-9._-] as '-', and "", "." or ".." as "unknown" (name has room
 * for 8 bytes). */
void sb_results_leaf_segment (char *name);

/* The leaf given (++hydra.run.dir): made when absent, refused as
 * sb_results_dir_leaf_check refuses it (subdir, flags: as there), its real
 * path (else as given) into leaf. Returns 0, or -1 with err. */
int sb_results_leaf_given (const char *given, const char *subdir, unsigned flags, char *leaf, size_t leaf_size,
                           char *err, size_t err_size);

/* A new leaf PARENT/TS made (parent made first): TS the second of start,
 * else the next one while a leaf of that name exists, up to
 * SB_RESULTS_LEAF_BUMPS seconds after, as mlpstorage does; never into a
 * leaf that exists. Returns 0 with ts and leaf (under parent's real path)
 * set, or -1 with err. */
int sb_results_leaf_make (const char *parent, double start, char *ts, size_t ts_size, char *leaf, size_t leaf_size,
                          char *err, size_t err_size);

/* Remove a leaf made by sb_results_leaf_make and everything in it (half a
 * leaf would read as a run), saying so at the end of err. */
void sb_results_leaf_remove (const char *leaf, char *err, size_t err_size);

/* A worker host as mlpstorage's ClusterInformation lists it. */
typedef struct {
    const char *host;
    const char *processor;      /* NULL: not recorded */
    int64_t     cores, memory;  /* logical cores, bytes */
    int64_t     ranks;          /* the run's ranks on it (0: not counted) */
} sb_results_host_t;

/* The metadata's "system_info" of these hosts: the totals, the smallest and
 * largest memory, and each host's memory, cores and processor. Returns the
 * smallest memory (0 when there is no host). */
int64_t sb_results_leaf_system_info (sb_jdoc_t *j, const sb_results_host_t *hosts, size_t n);

/* 1 when this process is the one that ran the run (its coordinator's host
 * and pid): only then is the build known. */
int sb_results_leaf_own_run (const char *coordinator_host, int64_t coordinator_pid);

#endif
