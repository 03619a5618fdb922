/* kv_export: a KV-cache run (runs.kind 'kvcache') as CSV, `shardbench
 * report RUN --csv [VIEW]` (RFC 4180 quoting, LF line ends, a header line;
 * an integer as stored, a real with 6 decimals, NULL empty). Views:
 *   trials   one row per finished trial (the default): kv_trials, the
 *            largest device write/read p50/p95/p99 over the trial's ranks,
 *            tokens/s
 *   ranks    one row per rank and trial: kv_ranks without its results JSON,
 *            with the rank's write_device, read_device, request_storage and
 *            request_e2e latency (mean, p50 ... p99.99) as columns
 *   latency  kv_latency: one row per rank, trial and operation
 *   run      one row: the run's essentials, kv_runs, the trials finished,
 *            requests, tokens/s, MLPerf Storage's division and its reason
 *   endpoints  as for any run (report_export.c)
 * The column lists are coordinator/db/kv_export_query.h's. */
#ifndef SB_KV_EXPORT_H
#define SB_KV_EXPORT_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* The views a KV-cache run has, for messages: "trials (the default), ranks,
 * latency, run, endpoints" */
extern const char sb_kv_csv_views_text[];

/* 1 when view is one a KV-cache run has of its own (trials, ranks,
 * latency, run), else 0 (endpoints is report_export.c's). */
int sb_kv_csv_view_own (const char *view);

/* 1 when view is a KV-cache run's only (trials, latency): no other kind of
 * run has it. */
int sb_kv_csv_view_only (const char *view);

/* Write view (NULL: "trials"; one sb_kv_csv_view_own accepts) of run_id, a
 * KV-cache run, to out. Returns 0, or -1 when SQLite fails or memory runs
 * out (message on stderr; nothing written). */
int sb_kv_report_csv (sqlite3 *db, int64_t run_id, const char *view, FILE *out);

#endif
