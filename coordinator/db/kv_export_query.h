/* kv_export_query: the tables behind the CSV views of a KV-cache run
 * (runs.kind 'kvcache'; `shardbench report RUN --csv trials|ranks|latency|
 * run`, coordinator/report/kv_export.c). Each view is one statement whose
 * column names are the CSV header, so that the header and the figures come
 * from one place and the writing code holds no SQL. A row is handed over as
 * cells typed as SQLite stored them.
 *
 * Views (one statement each, run_id bound):
 *   trials   kv_trials, by trial, then the largest over the trial's ranks of
 *            the device write (fsync) and read (load) p50/p95/p99
 *            (kv_latency write_device, read_device, each percentile the
 *            largest of any rank's, as the text summary) and tokens_per_s:
 *            each rank's generated / elapsed_s, summed
 *   ranks    kv_ranks but results_json, by trial then rank, then the rank's
 *            kv_latency of write_device, read_device, request_storage and
 *            request_e2e as WHAT_mean_ms, WHAT_p50_ms, WHAT_p95_ms,
 *            WHAT_p99_ms, WHAT_p999_ms, WHAT_p9999_ms (empty: no such row)
 *   latency  kv_latency, by trial, rank, then what (alphabetical)
 *   run      the runs row's essentials and kv_runs (empty when the run has
 *            no kv_runs row), then trials_finished (kv_trials rows) and
 *            requests (their sum)
 */
#ifndef SB_KV_EXPORT_QUERY_H
#define SB_KV_EXPORT_QUERY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    SB_KV_VIEW_TRIALS,
    SB_KV_VIEW_RANKS,
    SB_KV_VIEW_LATENCY,
    SB_KV_VIEW_RUN,
} sb_kv_view_t;

typedef enum { SB_KV_CELL_NULL, SB_KV_CELL_INT, SB_KV_CELL_REAL, SB_KV_CELL_TEXT } sb_kv_cell_type_t;

/* One value of a row, borrowed for the call of fn */
typedef struct {
    sb_kv_cell_type_t type;
    int64_t           i;        /* SB_KV_CELL_INT */
    double            d;        /* SB_KV_CELL_REAL */
    const char       *s;        /* SB_KV_CELL_TEXT (a blob reads as its text) */
} sb_kv_cell_t;

/* Call header (once, before any row, even when there is none) with the
 * view's column names, then row with each row's ncols cells. Either
 * returns 0 to go on, anything else to stop. Returns 0, 1 when a callback
 * stopped it, or -1 when SQLite fails (sb_report_error (db) says why) or
 * memory runs out. */
int sb_kv_export_view (sqlite3 *db, int64_t run_id, sb_kv_view_t view,
                       int (*header) (void *ctx, const char *const *names, size_t ncols),
                       int (*row) (void *ctx, const sb_kv_cell_t *cells, size_t ncols), void *ctx);

#endif
