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

/* Print run_id, a train run, as one JSON object with the metric names of
 * DLIO's summary.json plus a "shardbench" object (see report_export.c).
 * Returns 0, or -1 when the run does not exist or is not a train run
 * (message on stderr). */
int sb_report_json (sqlite3 *db, int64_t run_id, FILE *out);

/* Print run_id as CSV (RFC 4180 quoting, LF line ends, a header line): one
 * row per epoch, or with ranks one row per rank and epoch. Returns 0, or -1
 * when the run does not exist (message on stderr). */
int sb_report_csv (sqlite3 *db, int64_t run_id, int ranks, FILE *out);

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

/* Print runs run_a and run_b side by side with the ratio B/A. Returns 0, or
 * -1 when either run does not exist (message on stderr). */
int sb_report_compare (sqlite3 *db, int64_t run_a, int64_t run_b, FILE *out);

#endif
