/* cli_series: the runs of a series, one session each (cli_series.h). */
#include "cli_series.h"
#include "log.h"
#include "report.h"
#include "series_query.h"
#include "series_report.h"
#include "util.h"

#include <string.h>

int
sb_cli_series_run (sb_session_opts_t *opts, uint64_t runs, uint64_t warmup, int new_seeds, const char *later_yaml,
                   const char *later_full_yaml, FILE *out)
{
    const sb_workload_t *first = opts->wl;
    const char *first_yaml = opts->config_yaml;
    const sb_run_inputs_t *first_inputs = opts->inputs;
    sb_workload_t later = *first;       /* the workload of the runs after the first */
    later.generate_data = 0;
    sb_run_inputs_t later_inputs = first_inputs ? *first_inputs : (sb_run_inputs_t) { 0 };
    if (later_full_yaml)
        later_inputs.full_config = later_full_yaml;
    uint64_t seed = opts->seed;
    sqlite3 *h = sb_resultdb_handle (opts->db);
    int rc = 0;
    char err[4096];
    for (uint64_t i = 1; i <= runs; i++) {
        opts->series_index = i;
        opts->warmup = i <= warmup;
        if (i > 1) {
            opts->wl = &later;
            if (later_yaml)
                opts->config_yaml = later_yaml;
            if (first_inputs)
                opts->inputs = &later_inputs;
        }
        if (new_seeds)
            opts->seed = sb_mix (seed, i);
        sb_info ("series %lld: run %llu of %llu%s", (long long) opts->series_id, (unsigned long long) i,
                 (unsigned long long) runs, opts->warmup ? " (warm-up)" : "");
        int64_t run_id = -1;
        err[0] = '\0';
        rc = sb_session_run (opts, &run_id, err, sizeof err);
        /* each run's own outputs (its summary; an MLPerf results directory
         * per run id goes here too) */
        if (run_id > 0)
            sb_report_print (h, run_id, out);
        fflush (out);
        if (rc != 0) {
            fprintf (stderr, "shardbench: error: %s\n", err[0] ? err : "run failed");
            if (!sb_session_signal ())
                fprintf (stderr, "shardbench: series %lld stopped after run %llu of %llu: it did not succeed\n",
                         (long long) opts->series_id, (unsigned long long) i, (unsigned long long) runs);
            break;
        }
        if (sb_session_signal ()) {     /* a signal between two runs */
            rc = 128 + sb_session_signal ();
            break;
        }
    }
    opts->wl = first;   /* later and later_inputs live on this stack */
    opts->config_yaml = first_yaml;
    opts->inputs = first_inputs;
    const char *status = rc == 0 ? "succeeded" : sb_session_signal () ? "aborted" : "failed";
    if (sb_series_finish (opts->db, opts->series_id, status) != 0) {
        fprintf (stderr, "shardbench: error: cannot close series %lld: %s\n", (long long) opts->series_id,
                 sb_resultdb_errmsg (opts->db));
        if (rc == 0)
            rc = 1;
    }
    sb_series_print (h, opts->series_id, out);
    fflush (out);
    return rc;
}
