/* report: a run's summary, read back from the result database. The summary
 * printed at the end of `shardbench run` and by `shardbench report` is the
 * same code, so what is printed is what was stored. */
#ifndef SB_REPORT_H
#define SB_REPORT_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* Id of the newest run (any kind when kind is NULL); -1 when none. */
int64_t sb_report_last_run (sqlite3 *db, const char *kind);

/* Print the summary of run_id to out. Returns 0, or -1 when the run does not
 * exist (message on stderr). */
int sb_report_print (sqlite3 *db, int64_t run_id, FILE *out);

#endif
