/* kv_results_dir: a KV-cache run (runs.kind 'kvcache') of the result
 * database as MLPerf Storage's results directory, the files mlpstorage's
 * `kvcache run` leaves (mlpstorage_py benchmarks/kvcache.py, base.py),
 * written from the database alone:
 *
 *   ROOT/DIVISION/SUBMITTER/results/SYSTEM/kv_cache/MODEL/run/TS/
 *     summary.json                  the run's aggregate, what reportgen reads
 *                                   (options[O], aggregated_* figures)
 *     kv_cache_TS_metadata.json     the run's parameters and hosts
 *     option_O/trial_T/rank_R/kvcache_results_TRIALTS.json
 *                                   each rank's JSON as the rank sent it
 *                                   (T from 0, as mlpstorage numbers trials)
 *     kvcache_optO_trialT_TS.stdout.log, .stderr.log
 *                                   each trial's output, as mlpstorage keeps
 *                                   its mpirun's
 *     provenance.json, fs_separation.json   (results_stamp.h)
 *
 * The conventions are results_dir.h's: TS the run's start (local time,
 * YYYYMMDD_HHMMSS; the next second while a leaf exists, up to 10 times),
 * DIVISION closed or open by sb_kv_division (db/kv_query.h; an invalid run goes
 * under open with verification "invalid" in its metadata), SUBMITTER the
 * root's sentinel's organisation or --submitter, SYSTEM --system or the
 * coordinator's host. Every file goes through safe_file.h (a new temporary,
 * flushed, renamed; never through a link someone put there, never over a
 * file already there unless told to), every folder made in the leaf is
 * checked to be a folder of its own, not a link. */
#ifndef SB_KV_RESULTS_DIR_H
#define SB_KV_RESULTS_DIR_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "results_dir.h"

/* Write KV-cache run run_id of db with opts as sb_results_dir_write takes
 * them (root or leaf; config_subdir, no_config and config_written do not
 * apply: a KV-cache run has no DLIO configuration). Returns 0 with the
 * leaf's path in leaf_out, or -1 with err naming the run, path and cause; a
 * leaf made under a root is removed again when a file in it could not be
 * written. */
int sb_kv_results_dir_write (sqlite3 *db, int64_t run_id, const sb_results_dir_opts_t *opts, char *leaf_out,
                             size_t leaf_size, char *err, size_t err_size);

#endif
