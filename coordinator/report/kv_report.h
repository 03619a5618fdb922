/* kv_report: the summary of a KV-cache run (runs.kind 'kvcache') read back
 * from the result database (db/kv_query.h), as text (the end of `shardbench
 * kvcache` and `shardbench report`), JSON (`report --json`) and a section
 * of the HTML page (`report --html`).
 *
 * Per trial: the ranks that reported, requests completed, tokens generated
 * per second (each rank's tokens over its window, summed), storage read
 * and write GiB/s (each rank's, summed), the largest of the ranks' storage
 * I/O p95 per request, and the largest of the ranks' device write (fsync)
 * and read (load) p50/p95/p99. The run: the mean over the trials of those
 * bandwidths and token rates, the largest storage p95, requests per user
 * type and per QoS class over every trial, the storage check and MLPerf
 * Storage's division (db/kv_query.h sb_kv_division). */
#ifndef SB_KV_REPORT_H
#define SB_KV_REPORT_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* Each returns 0, or -1 when the run does not exist, is no KV-cache run or
 * SQLite fails (message on stderr; nothing written). */
int sb_kv_report_text (sqlite3 *db, int64_t run_id, FILE *out);
int sb_kv_report_json (sqlite3 *db, int64_t run_id, FILE *out);

/* The run as an HTML <section> (text escaped, no script); the caller writes
 * the page around it. */
int sb_kv_report_html (sqlite3 *db, int64_t run_id, FILE *out);

/* The run's figures as `compare` sets them side by side (the same as the
 * summary's): the run means over its finished trials of the storage read
 * and write GiB/s and tokens/s, the largest over ranks and trials of the
 * storage p95 and of the device write (fsync) and read (load) p95 (NAN:
 * none timed; every figure NAN when no trial finished), the requests over
 * every trial, by user type and QoS class, the storage check and MLPerf
 * Storage's division with its reason. */
typedef struct {
    char    model[64], storage_check[16], division[16], division_reason[512];
    int64_t option, users, trials_finished;
    double  read_gib_per_s, write_gib_per_s, tokens_per_s;
    double  storage_p95_ms, write_device_p95_ms, read_device_p95_ms;
    int64_t requests, chatbot, coding, document, interactive, responsive, batch;
} sb_kv_summary_t;

/* Returns 1 with *s filled, 0 when the run has no kv_runs row (nothing
 * printed: a run that failed before its first trial began), or -1 when the
 * run does not exist or SQLite fails (message on stderr). */
int sb_kv_report_summary (sqlite3 *db, int64_t run_id, sb_kv_summary_t *s);

#endif
