/* cli_series: `shardbench run|checkpoint --runs N [--warmup K]`: N runs of one command line back to back. */
#ifndef SB_CLI_SERIES_H
#define SB_CLI_SERIES_H

#include "session.h"

#include <stdint.h>
#include <stdio.h>

/* Run the series opts->series_id (recorded with sb_series_begin; the
 * result writer started): runs 1..runs, the first warmup of them warm-up
 * runs, each a whole session with its own run row and summary on out. The
 * dataset is generated at most once: runs after the first run with
 * workflow.generate_data off, so a dataset that went missing fails the run
 * instead of being generated again; they record later_yaml and
 * later_full_yaml (runs.config and run_inputs.full_config with
 * workflow.generate_data false; NULL: the first run's) as their
 * configuration. new_seeds: the run seed was drawn (no
 * --seed, a shuffled global sampler): each run picks its own, as separate
 * commands would. The first run that does not succeed (failed, usage error
 * found late, or stopped by a signal) ends the series; the series is closed
 * ('succeeded', 'failed' or 'aborted') and its summary printed. Returns the
 * exit code of the last run. */
int sb_cli_series_run (sb_session_opts_t *opts, uint64_t runs, uint64_t warmup, int new_seeds, const char *later_yaml,
                       const char *later_full_yaml, FILE *out);

#endif
