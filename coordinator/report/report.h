/* report: a run's summary, read back from the result database. The summary
 * printed at the end of `shardbench run` and by `shardbench report` is the
 * same code, so what is printed is what was stored. */
#ifndef SB_REPORT_H
#define SB_REPORT_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

#include "report_query.h"

/* Print the summary of run_id to out. Returns 0, or -1 when the run does not
 * exist (message on stderr). */
int sb_report_print (sqlite3 *db, int64_t run_id, FILE *out);

/* Print run_id, a train or checkpoint run, as one JSON object with the
 * metric names of DLIO's summary.json plus a "shardbench" object (see
 * report_export.c). Returns 0, or -1 when the run does not exist or is a
 * datagen run (message on stderr). */
int sb_report_json (sqlite3 *db, int64_t run_id, FILE *out);

/* Print run_id as CSV (RFC 4180 quoting, LF line ends, a header line), the
 * view named by view (NULL: "epochs"): "epochs" one row per epoch (a
 * checkpoint run: per checkpoint), "ranks" one per rank and epoch (a
 * checkpoint run: per rank and checkpoint); "detail" per epoch
 * the read latency percentiles, barrier figures, page-cache residency and
 * slowest rank, "hosts" read latency per epoch and host, "endpoints" the
 * traffic per endpoint, "run" one row of the run's own figures
 * (retries, errors, DLIO's headline and checkpoint metrics),
 * "checkpoints" one row per checkpoint. A kvcache run has the views of
 * kv_export.h ("trials" by default) and "endpoints"; the others are refused
 * for it, as "trials" and "latency" for any other run (message on stderr,
 * naming the views the run has). Returns 0, or -1 when the run does not
 * exist, the view is refused or SQLite fails (message on stderr). */
int sb_report_csv (sqlite3 *db, int64_t run_id, const char *view, FILE *out);

/* 1 when view names a view of sb_report_csv, else 0. */
int sb_report_csv_view_known (const char *view);

/* Write run_id, a train run, as one self-contained HTML page (inline SVG
 * charts, no script, nothing fetched from elsewhere; see report_html.c).
 * Returns 0, or -1 when the run does not exist, is not a train run or SQLite
 * fails (message on stderr). Output already written is not taken back. */
int sb_report_html (sqlite3 *db, int64_t run_id, FILE *out);

/* The same into the file at path ("-": stdout), written to a temporary file
 * next to it and renamed, so a failure never leaves half a page. Returns 0
 * or -1 (message on stderr; path untouched). */
int sb_report_html_file (sqlite3 *db, int64_t run_id, const char *path);

/* Write s (NULL: nothing) to out with & < > " ' as HTML character references. */
void sb_report_html_escape (FILE *out, const char *s);

/* Print the n runs ids[0..n-1] (2 to 8; A, B, ...): first the
 * configuration diff (workers, hosts, accelerators, every key of
 * runs.config that differs), then their figures side by side with the
 * ratio of each to A; runs of different kinds are said to be so and only
 * the figures at least two have are shown; two or more kvcache runs add
 * their KV-cache figures (kv_report.h sb_kv_report_summary). Returns 0, or -1 when a run does
 * not exist or SQLite fails (message on stderr; nothing printed). */
int sb_report_compare (sqlite3 *db, const int64_t *ids, size_t n, FILE *out);

#endif
