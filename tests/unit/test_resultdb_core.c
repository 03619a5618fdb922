/* resultdb core: the result database module (coordinator/db/resultdb.h) on
 * real SQLite files in a scratch folder. Every row function's values are
 * read back with plain SQL on a connection of the test's own; the schema
 * and its version; the writer thread (rows after sync, a lock another
 * connection holds: waited for and counted, or given up on past the limit);
 * batching; reopening; upgrading a version 9 file; refusing a newer schema,
 * a file that is not SQLite and a corrupt one with clear errors; read-only
 * opening; marking runs of dead coordinators interrupted; and no column
 * meant for credentials. */
#include <check.h>
#include "check_main.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "histogram.h"
#include "resultdb.h"
#include "util.h"

static char s_dir[PATH_MAX];

static void
s_setup (void)
{
    snprintf (s_dir, sizeof s_dir, "%s/sb-resultdb-XXXXXX", getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (s_dir));
}

static void
s_teardown (void)
{
    sb_check_remove_tree (s_dir);
}

static void
s_path (char *out, size_t size, const char *name)
{
    ck_assert_int_lt (snprintf (out, size, "%s/%s", s_dir, name), (int) size);
}

/* The test's own connection. */
static sqlite3 *
s_sql_open (const char *path)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    ck_assert_int_eq (sqlite3_busy_timeout (db, 5000), SQLITE_OK);
    return db;
}

static void
s_sql_exec (sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec (db, sql, NULL, NULL, &msg);
    ck_assert_msg (rc == SQLITE_OK, "%s: %s", sql, msg ? msg : "?");
}

/* One value of a query as text ("NULL" for SQL NULL), in a static buffer;
 * the query must give exactly one row. */
static const char *
s_sql_text (sqlite3 *db, const char *sql)
{
    static char buf[4096];
    sqlite3_stmt *st = NULL;
    ck_assert_msg (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg (db));
    ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text (st, 0);
    snprintf (buf, sizeof buf, "%s", sqlite3_column_type (st, 0) == SQLITE_NULL ? "NULL" : (const char *) t);
    ck_assert_int_eq (sqlite3_step (st), SQLITE_DONE);
    sqlite3_finalize (st);
    return buf;
}

static int64_t
s_sql_int (sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    ck_assert_msg (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg (db));
    ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
    ck_assert_msg (sqlite3_column_type (st, 0) == SQLITE_INTEGER, "%s: not an integer", sql);
    int64_t v = sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
    return v;
}

static double
s_sql_double (sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    ck_assert_msg (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg (db));
    ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
    ck_assert_msg (sqlite3_column_type (st, 0) != SQLITE_NULL, "%s: NULL", sql);
    double v = sqlite3_column_double (st, 0);
    sqlite3_finalize (st);
    return v;
}

static sb_resultdb_t *
s_open (const char *path)
{
    char err[1024] = "";
    sb_resultdb_t *db = sb_resultdb_open (path, err, sizeof err);
    ck_assert_msg (db != NULL, "open %s: %s", path, err);
    return db;
}

static int64_t
s_run (sb_resultdb_t *db, const char *kind)
{
    sb_run_info_t info = { .kind = kind, .workload = "unet3d", .config = "dataset:\n  num_files_train: 8\n",
                           .accelerators = 4, .hosts = 1, .workers = 2, .seed = 123456789012345ll,
                           .au_threshold = 0.9 };
    return sb_resultdb_run_begin (db, &info);
}

/* ------------------------------------------------------------ tests */

/* A new file: schema version 15, every table of schemas/results.sql, WAL. */
START_TEST (test_create_schema)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, "new.db");
    ck_assert_int_eq (access (path, F_OK), -1);
    sb_resultdb_t *db = s_open (path);
    ck_assert_str_eq (sb_resultdb_path (db), path);
    ck_assert_ptr_nonnull (sb_resultdb_handle (db));
    sb_resultdb_destroy (&db);
    ck_assert_ptr_null (db);
    sb_resultdb_destroy (&db);      /* NULL is accepted */
    sb_resultdb_destroy (NULL);

    ck_assert_int_eq (SB_RESULTDB_VERSION, 17);
    sqlite3 *q = s_sql_open (path);
    ck_assert_int_eq (s_sql_int (q, "PRAGMA user_version"), 17);
    ck_assert_str_eq (s_sql_text (q, "PRAGMA journal_mode"), "wal");
    ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master"
                                     " WHERE type = 'table' ORDER BY name)"),
                      "catalogs checkpoint_ranks checkpoints endpoints epochs errors eval_ranks evals host_read_latency"
                      " kv_latency kv_ranks kv_runs kv_trials objects rank_epochs read_latency run_host_info run_inputs run_overrides run_workers runs series"
                      " timeseries");
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM runs"), 0);
    sqlite3_close (q);
}
END_TEST

/* Every row function without a writer (rows written at once), read back
 * with plain SQL: exact values, exact row counts. */
START_TEST (test_rows)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, "rows.db");
    sb_resultdb_t *db = s_open (path);
    /* the wall clock (of a machine whose clock may be stepped: a minute of room) */
    double t0 = (double) time (NULL) - 60;
    int64_t run = s_run (db, "train");
    double t1 = (double) time (NULL) + 60;
    ck_assert_int_eq (run, 1);
    sqlite3 *q = s_sql_open (path);
    char host[256] = "";
    ck_assert_int_eq (gethostname (host, sizeof host - 1), 0);

    /* runs: the row as begun */
    ck_assert_str_eq (s_sql_text (q, "SELECT kind || '|' || workload || '|' || status || '|' || accelerators || '|'"
                                     " || hosts || '|' || workers || '|' || seed || '|' || au_threshold FROM runs"),
                      "train|unet3d|running|4|1|2|123456789012345|0.9");
    ck_assert_str_eq (s_sql_text (q, "SELECT config FROM runs WHERE id = 1"), "dataset:\n  num_files_train: 8\n");
    ck_assert_str_eq (s_sql_text (q, "SELECT coordinator_host FROM runs WHERE id = 1"), host);
    ck_assert_int_eq (s_sql_int (q, "SELECT coordinator_pid FROM runs WHERE id = 1"), getpid ());
    double started = s_sql_double (q, "SELECT started_at FROM runs WHERE id = 1");
    ck_assert_double_ge (started, t0);
    ck_assert_msg (started <= t1, "started_at %.6f, now %.6f", started, t1 - 60);
    ck_assert_str_eq (s_sql_text (q, "SELECT coalesce(finished_at, error, au_mean, passed, db_locked_s, sampler,"
                                     " workflow, 'all NULL') FROM runs"), "all NULL");

    ck_assert_int_eq (sb_resultdb_run_hosts (db, run, 3, 5), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT hosts || ',' || workers FROM runs"), "3,5");

    /* workers, replaced by (run, worker), and their clocks */
    ck_assert_int_eq (sb_resultdb_add_worker (db, run, 0, "alpha", 100, 2, 0, 8, 1ull << 34), 0);
    ck_assert_int_eq (sb_resultdb_add_worker (db, run, 1, "beta", 200, 2, 2, 16, 1ull << 35), 0);
    ck_assert_int_eq (sb_resultdb_add_worker (db, run, 1, "beta", 201, 2, 2, 16, 1ull << 35), 0);
    ck_assert_int_eq (sb_resultdb_worker_clock (db, run, 1, -0.25, 1.5), 0);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM run_workers"), 2);
    ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(worker || ':' || host || ':' || pid || ':' || ranks || ':'"
                                     " || first_rank || ':' || cores || ':' || memory || ':' || coalesce(clock_offset_s,"
                                     " 'NULL') || ':' || coalesce(clock_rtt_ms, 'NULL'), ' ') FROM (SELECT * FROM"
                                     " run_workers ORDER BY worker)"),
                      "0:alpha:100:2:0:8:17179869184:NULL:NULL 1:beta:201:2:2:16:34359738368:-0.25:1.5");

    /* rank epochs: epoch 1 with AU and DLIO figures, epoch 2 without */
    sb_rank_epoch_t r0 = { .epoch = 1, .rank = 0, .samples = 10, .batches = 5, .bytes = 1000, .host = "alpha",
                           .started_at = 100, .finished_at = 110, .compute_s = 4, .au = 0.5, .io_wait_s = 1.25,
                           .barrier_s = 0.5, .resident_bytes = 10, .checked_bytes = 100, .has_au = 1,
                           .metric_steps = 3, .metric_compute_s = 2.5, .metric_excluded_s = 1, .metric_time_s = 9,
                           .dlio_au_percentage = 27.5, .dlio_samples_per_s = 6.75 };
    sb_rank_epoch_t r1 = r0;
    r1.rank = 1, r1.samples = 20, r1.bytes = 3000, r1.started_at = 101, r1.finished_at = 112, r1.au = 0.75;
    r1.resident_bytes = 80, r1.host = NULL;
    ck_assert_int_eq (sb_resultdb_add_rank_epoch (db, run, &r0), 0);
    ck_assert_int_eq (sb_resultdb_add_rank_epoch (db, run, &r1), 0);
    sb_rank_epoch_t d0 = { .epoch = 2, .rank = 0, .samples = 7, .batches = 7, .bytes = 700, .host = "alpha",
                           .started_at = 200, .finished_at = 204, .compute_s = 1, .au = 0.99, .io_wait_s = 0.5,
                           .barrier_s = 0, .has_au = 0, .metric_steps = 9, .dlio_au_percentage = 50 };
    ck_assert_int_eq (sb_resultdb_add_rank_epoch (db, run, &d0), 0);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM rank_epochs"), 3);
    ck_assert_str_eq (s_sql_text (q, "SELECT host || '|' || samples || '|' || batches || '|' || bytes || '|' ||"
                                     " started_at || '|' || finished_at || '|' || compute_s || '|' || au || '|' ||"
                                     " io_wait_s || '|' || barrier_s || '|' || metric_steps || '|' || metric_compute_s"
                                     " || '|' || metric_excluded_s || '|' || metric_time_s || '|' || dlio_au_percentage"
                                     " || '|' || dlio_throughput_samples_per_second || '|' || resident_bytes || '|' ||"
                                     " checked_bytes FROM rank_epochs WHERE epoch = 1 AND rank = 0"),
                      "alpha|10|5|1000|100.0|110.0|4.0|0.5|1.25|0.5|3|2.5|1.0|9.0|27.5|6.75|10|100");
    ck_assert_str_eq (s_sql_text (q, "SELECT host FROM rank_epochs WHERE epoch = 1 AND rank = 1"), "?");
    /* without AU: au and the DLIO figures are NULL, whatever the struct held */
    ck_assert_str_eq (s_sql_text (q, "SELECT coalesce(au, metric_steps, metric_compute_s, metric_excluded_s,"
                                     " metric_time_s, dlio_au_percentage, dlio_throughput_samples_per_second, 'NULLs')"
                                     " || '|' || samples || '|' || io_wait_s || '|' || checked_bytes FROM rank_epochs"
                                     " WHERE epoch = 2"), "NULLs|7|0.5|0");

    /* epochs aggregated from the rank rows */
    ck_assert_int_eq (sb_resultdb_close_epoch (db, run, 1, 3, 5, 1), 0);
    ck_assert_int_eq (sb_resultdb_close_epoch (db, run, 2, 0, 7, 0), 0);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM epochs"), 2);
    ck_assert_str_eq (s_sql_text (q, "SELECT samples || '|' || dropped || '|' || bytes || '|' || duration_s || '|' ||"
                                     " samples_per_s || '|' || batches || '|' || resident_bytes || '|' || checked_bytes"
                                     " || '|' || resident_fraction || '|' || from_memory FROM epochs WHERE epoch = 1"),
                      "30|3|4000|12.0|2.5|5|90|200|0.45|0");
    ck_assert_double_eq_tol (s_sql_double (q, "SELECT au_mean FROM epochs WHERE epoch = 1"), 0.625, 1e-12);
    ck_assert_double_eq_tol (s_sql_double (q, "SELECT mib_per_s FROM epochs WHERE epoch = 1"), 4000 / 1048576.0 / 12,
                             1e-15);
    ck_assert_double_eq_tol (s_sql_double (q, "SELECT mb_per_s FROM epochs WHERE epoch = 1"), 4000 / 1e6 / 12, 1e-15);
    ck_assert_str_eq (s_sql_text (q, "SELECT samples || '|' || duration_s || '|' || samples_per_s || '|' ||"
                                     " coalesce(au_mean, resident_fraction, from_memory, 'NULLs') FROM epochs"
                                     " WHERE epoch = 2"), "7|4.0|1.75|NULLs");

    /* DLIO's epoch and run figures */
    ck_assert_int_eq (sb_resultdb_epoch_dlio (db, run, 1, 61.5, 12.25, 3.5), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT train_au_percentage || '|' || train_throughput_samples_per_second ||"
                                     " '|' || train_io_MB_per_second FROM epochs WHERE epoch = 1"), "61.5|12.25|3.5");
    ck_assert_str_eq (s_sql_text (q, "SELECT coalesce(train_au_percentage, 'NULL') FROM epochs WHERE epoch = 2"),
                      "NULL");
    sb_dlio_summary_t sum = { .au_mean = 91.5, .au_stdev = 0.5, .throughput_mean = 100.25, .throughput_stdev = 1.5,
                              .io_mean = 12.5, .io_stdev = 0.125, .meet = 1 };
    ck_assert_int_eq (sb_resultdb_run_dlio (db, run, &sum, 131072), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT train_au_mean_percentage || '|' || train_au_stdev_percentage || '|' ||"
                                     " train_au_meet_expectation || '|' || train_throughput_mean_samples_per_second ||"
                                     " '|' || train_throughput_stdev_samples_per_second || '|' ||"
                                     " train_io_mean_MB_per_second || '|' || train_io_stdev_MB_per_second || '|' ||"
                                     " record_size_bytes FROM runs WHERE id = 1"),
                      "91.5|0.5|success|100.25|1.5|12.5|0.125|131072");

    /* sampler, workflow, barriers, unused files */
    ck_assert_int_eq (sb_resultdb_run_sampler (db, run, "dlio_index", 4), 0);
    ck_assert_int_eq (sb_resultdb_run_workflow (db, run, "datagen,train,eval"), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT sampler || '|' || loader_threads || '|' || workflow FROM runs"),
                      "dlio_index|4|datagen,train,eval");
    ck_assert_int_eq (sb_resultdb_epoch_barrier (db, run, 1, 0.25, 2.5), 0);
    ck_assert_int_eq (sb_resultdb_epoch_sampler (db, run, 1, 6, 0.125, 1.75), 0);
    ck_assert_int_eq (sb_resultdb_epoch_sampler (db, run, 2, 0, -1, 99), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT barrier_p50_ms || '|' || barrier_p99_ms || '|' || unused_files || '|' ||"
                                     " barrier_own_p50_ms || '|' || barrier_own_p99_ms FROM epochs WHERE epoch = 1"),
                      "0.25|2.5|6|0.125|1.75");
    ck_assert_str_eq (s_sql_text (q, "SELECT unused_files || '|' || coalesce(barrier_own_p50_ms, barrier_own_p99_ms,"
                                     " barrier_p50_ms, 'NULLs') FROM epochs WHERE epoch = 2"), "0|NULLs");

    /* read latency: one row per non-empty bucket, percentiles in ms */
    sb_histogram_t h;
    sb_histogram_reset (&h);
    ck_assert_int_eq (sb_resultdb_epoch_read_latency (db, run, 2, &h), 0);     /* empty: nothing */
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM read_latency"), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT coalesce(read_p50_ms, read_p99_ms, 'NULLs') FROM epochs WHERE epoch = 2"),
                      "NULLs");
    for (int i = 0; i < 98; i++)
        sb_histogram_add (&h, 1000);    /* bucket [992, 1024) */
    sb_histogram_add (&h, 5);
    sb_histogram_add (&h, 1ull << 45);  /* the last bucket */
    ck_assert_int_eq (sb_resultdb_epoch_read_latency (db, run, 1, &h), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(bin_low_us || '-' || bin_high_us || ':' || count, ' ')"
                                     " FROM (SELECT * FROM read_latency WHERE run_id = 1 AND epoch = 1 ORDER BY"
                                     " bin_low_us)"),
                      "5-6:1 992-1024:98 2130303778816-2130303778817:1");
    ck_assert_str_eq (s_sql_text (q, "SELECT read_p50_ms || '|' || read_p99_ms FROM epochs WHERE epoch = 1"),
                      "1.008|2130303778.8165");

    /* evaluations */
    sb_eval_rank_t er = { .epoch = 1, .rank = 2, .samples = 8, .steps = 2, .bytes = 800, .host = "beta",
                          .started_at = 300, .finished_at = 302.5, .compute_s = 1.5, .io_wait_s = 0.25,
                          .au_percentage = 60, .samples_per_s = 3.2 };
    ck_assert_int_eq (sb_resultdb_add_eval_rank (db, run, &er), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT epoch || '|' || rank || '|' || host || '|' || samples || '|' || steps ||"
                                     " '|' || bytes || '|' || started_at || '|' || finished_at || '|' || compute_s ||"
                                     " '|' || io_wait_s || '|' || dlio_au_percentage || '|' ||"
                                     " dlio_throughput_samples_per_second FROM eval_ranks"),
                      "1|2|beta|8|2|800|300.0|302.5|1.5|0.25|60.0|3.2");
    sb_eval_t ev = { .epoch = 1, .samples = 16, .dropped = 1, .bytes = 2097152, .steps = 2, .duration_s = 4,
                     .au_percentage = 55.5, .samples_per_s = 6.5, .io_mib_per_s = 0.75, .read_p50_ms = 0.5,
                     .read_p99_ms = 9.5 };
    ck_assert_int_eq (sb_resultdb_add_eval (db, run, &ev), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT samples || '|' || dropped || '|' || bytes || '|' || steps || '|' ||"
                                     " duration_s || '|' || samples_per_s || '|' || mib_per_s || '|' ||"
                                     " eval_au_percentage || '|' || eval_throughput_samples_per_second || '|' ||"
                                     " eval_io_MB_per_second || '|' || read_p50_ms || '|' || read_p99_ms FROM evals"),
                      "16|1|2097152|2|4.0|4.0|0.5|55.5|6.5|0.75|0.5|9.5");
    /* a zero duration: rates over 1e-9 s, never a division by zero */
    ev.epoch = 2, ev.duration_s = 0;
    ck_assert_int_eq (sb_resultdb_add_eval (db, run, &ev), 0);
    ck_assert_double_eq_tol (s_sql_double (q, "SELECT samples_per_s FROM evals WHERE epoch = 2"), 16e9, 1);
    sb_dlio_summary_t es = { .au_mean = 40, .au_stdev = 2, .throughput_mean = 7, .throughput_stdev = 0.5,
                             .io_mean = 1.25, .io_stdev = 0.25, .meet = 0 };
    ck_assert_int_eq (sb_resultdb_run_eval (db, run, &es), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT eval_au_mean_percentage || '|' || eval_au_stdev_percentage || '|' ||"
                                     " eval_au_meet_expectation || '|' || eval_throughput_mean_samples_per_second ||"
                                     " '|' || eval_throughput_stdev_samples_per_second || '|' ||"
                                     " eval_io_mean_MB_per_second || '|' || eval_io_stdev_MB_per_second FROM runs"),
                      "40.0|2.0|fail|7.0|0.5|1.25|0.25");

    /* time series */
    ck_assert_int_eq (sb_resultdb_add_stats (db, run, 1234.5, 1, 3, 40, 4096, 41, 0.75, 1.25), 0);
    ck_assert_int_eq (sb_resultdb_add_stats (db, run, 1235.5, 1, 3, 1, 1, 1, 0, 0), 0);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM timeseries"), 2);
    ck_assert_str_eq (s_sql_text (q, "SELECT t || '|' || epoch || '|' || rank || '|' || samples || '|' || bytes || '|'"
                                     " || reads || '|' || read_s || '|' || compute_s FROM timeseries WHERE t < 1235"),
                      "1234.5|1|3|40|4096|41|0.75|1.25");

    /* errors: without a rank or detail, and with both ("" detail texts are NULL) */
    double e0 = (double) time (NULL) - 60;
    ck_assert_int_eq (sb_resultdb_add_error (db, run, -1, NULL, "heartbeat", NULL, 0, "worker 1 silent"), 0);
    sb_error_detail_t det = { .endpoint = "", .http_status = 503, .service_code = "SlowDown", .library_code = 0,
                              .attempt = 4 };
    ck_assert_int_eq (sb_resultdb_add_error_detail (db, run, 3, "beta", "read", "train/img_1.npz", EIO, "short read",
                                                    &det), 0);
    det.endpoint = "http://127.0.0.1:9000", det.service_code = "", det.library_code = 7;
    ck_assert_int_eq (sb_resultdb_add_error_detail (db, run, -1, NULL, "list", "train/", 0, "listing failed", &det),
                      0);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM errors"), 3);
    ck_assert_double_ge (s_sql_double (q, "SELECT min(t) FROM errors"), e0);
    ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(x, ' / ') FROM (SELECT coalesce(rank, 'NULL') || '|' ||"
                                     " coalesce(host, 'NULL') || '|' || op || '|' || coalesce(target, 'NULL') || '|' ||"
                                     " errno_val || '|' || message || '|' || coalesce(endpoint, 'NULL') || '|' ||"
                                     " coalesce(http_status, 'NULL') || '|' || coalesce(service_code, 'NULL') || '|' ||"
                                     " coalesce(library_code, 'NULL') || '|' || coalesce(attempt, 'NULL') AS x FROM errors"
                                     " ORDER BY rowid)"),
                      "NULL|NULL|heartbeat|NULL|0|worker 1 silent|NULL|NULL|NULL|NULL|NULL / "
                      "3|beta|read|train/img_1.npz|5|short read|NULL|503|SlowDown|0|4 / "
                      "NULL|NULL|list|train/|0|listing failed|http://127.0.0.1:9000|503|NULL|7|4");

    /* endpoints: replaced by (run, endpoint) */
    ck_assert_int_eq (sb_resultdb_add_endpoint (db, run, "http://a:1", 10, 100, 1, 2, 1.5, 1, 2, 3, 4), 0);
    ck_assert_int_eq (sb_resultdb_add_endpoint (db, run, "http://a:1", 20, 200, 0, 0, 2.5, 2, 3, 4, 5), 0);
    ck_assert_int_eq (sb_resultdb_add_endpoint (db, run, "http://b:2", 1, 1, 0, 0, 0.5, 0.5, 0.5, 0.5, 0.5), 0);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM endpoints"), 2);
    ck_assert_str_eq (s_sql_text (q, "SELECT requests || '|' || bytes || '|' || errors || '|' || retries || '|' ||"
                                     " mean_ms || '|' || p50_ms || '|' || p90_ms || '|' || p99_ms || '|' || max_ms FROM"
                                     " endpoints WHERE endpoint = 'http://a:1'"), "20|200|0|0|2.5|2.0|3.0|4.0|5.0");

    /* the run's end: shardbench's AU from the epochs (NULL epoch ignored),
     * passed from DLIO's verdict, no lock wait without a writer */
    ck_assert_int_eq (sb_resultdb_run_finish (db, run, "succeeded", NULL), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT status || '|' || coalesce(error, 'NULL') || '|' || passed || '|' ||"
                                     " db_locked_s FROM runs WHERE id = 1"), "succeeded|NULL|1|0.0");
    ck_assert_double_eq_tol (s_sql_double (q, "SELECT au_mean FROM runs WHERE id = 1"), 0.625, 1e-12);
    ck_assert_double_ge (s_sql_double (q, "SELECT finished_at FROM runs WHERE id = 1"), started - 60);

    /* a datagen run that failed: no AU, no verdict */
    int64_t run2 = s_run (db, "datagen");
    ck_assert_int_eq (run2, 2);
    ck_assert_int_eq (sb_resultdb_run_finish (db, run2, "failed", "disk full"), 0);
    ck_assert_str_eq (s_sql_text (q, "SELECT status || '|' || error || '|' || coalesce(passed, au_mean, 'NULLs') FROM"
                                     " runs WHERE id = 2"), "failed|disk full|NULLs");
    /* a train run that succeeded without meeting DLIO's AU: passed 0 */
    int64_t run3 = s_run (db, "train");
    sum.meet = 0;
    ck_assert_int_eq (sb_resultdb_run_dlio (db, run3, &sum, 1), 0);
    ck_assert_int_eq (sb_resultdb_run_finish (db, run3, "succeeded", NULL), 0);
    ck_assert_int_eq (s_sql_int (q, "SELECT passed FROM runs WHERE id = 3"), 0);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM runs"), 3);
    sqlite3_close (q);
    sb_resultdb_destroy (&db);
}
END_TEST

/* sb_resultdb_exec itself: each parameter letter, NULL text as SQL NULL,
 * and a bad statement refused with the file and SQLite's reason. */
START_TEST (test_exec_and_errors)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, "exec.db");
    sb_resultdb_t *db = s_open (path);
    ck_assert_int_eq (sb_resultdb_exec (db, "CREATE TABLE scratch (a, b, c, d, e, f)", ""), 0);
    ck_assert_int_eq (sb_resultdb_exec (db, "INSERT INTO scratch VALUES (?, ?, ?, ?, ?, ?)", "ttnidL", "x'y", NULL,
                                        (int64_t) INT64_MIN, -2.5), 0);
    sqlite3 *q = s_sql_open (path);
    ck_assert_str_eq (s_sql_text (q, "SELECT quote(a) || ',' || quote(b) || ',' || quote(c) || ',' || quote(d) || ','"
                                     " || quote(e) || ',' || quote(f) FROM scratch"),
                      "'x''y',NULL,NULL,-9223372036854775808,-2.5,0.0");
    ck_assert_int_eq (sb_resultdb_exec (db, "INSERT INTO no_such_table VALUES (?)", "i", (int64_t) 1), -1);
    char want[PATH_MAX + 128];
    snprintf (want, sizeof want, "result database %s: no such table: no_such_table (INSERT INTO no_such_table"
              " VALUES (?))", path);
    ck_assert_str_eq (sb_resultdb_errmsg (db), want);
    /* a constraint: the error names it */
    ck_assert_int_eq (sb_resultdb_exec (db, "INSERT INTO runs (kind) VALUES (?)", "t", "train"), -1);
    ck_assert_ptr_nonnull (strstr (sb_resultdb_errmsg (db), "NOT NULL constraint failed: runs."));
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM runs"), 0);
    sqlite3_close (q);
    sb_resultdb_destroy (&db);
}
END_TEST

/* Reopening a file keeps its rows and goes on numbering runs. */
START_TEST (test_reopen)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, "again.db");
    sb_resultdb_t *db = s_open (path);
    ck_assert_int_eq (s_run (db, "train"), 1);
    ck_assert_int_eq (sb_resultdb_add_stats (db, 1, 1, 1, 0, 1, 1, 1, 0, 0), 0);
    sb_resultdb_destroy (&db);
    db = s_open (path);
    ck_assert_int_eq (s_run (db, "datagen"), 2);
    sb_resultdb_destroy (&db);
    sqlite3 *q = s_sql_open (path);
    ck_assert_int_eq (s_sql_int (q, "PRAGMA user_version"), 17);
    ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(id || kind, ' ') FROM runs"), "1train 2datagen");
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM timeseries"), 1);
    sqlite3_close (q);
}
END_TEST

/* A file of a newer schema is refused, by both opens, and left as it was. */
START_TEST (test_refuse_newer)
{
    char path[PATH_MAX], err[2048] = "", want[2048];
    s_path (path, sizeof path, "newer.db");
    sb_resultdb_t *db = s_open (path);
    ck_assert_int_eq (s_run (db, "train"), 1);
    sb_resultdb_destroy (&db);
    sqlite3 *q = s_sql_open (path);
    s_sql_exec (q, "PRAGMA user_version = 18");
    sqlite3_close (q);
    snprintf (want, sizeof want, "%s: result database schema version 18 is newer than this shardbench (17)", path);
    ck_assert_ptr_null (sb_resultdb_open (path, err, sizeof err));
    ck_assert_str_eq (err, want);
    err[0] = '\0';
    ck_assert_ptr_null (sb_resultdb_open_readonly (path, 1, err, sizeof err));
    ck_assert_str_eq (err, want);
    q = s_sql_open (path);
    ck_assert_int_eq (s_sql_int (q, "PRAGMA user_version"), 18);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM runs"), 1);
    sqlite3_close (q);
}
END_TEST

/* A file that is not SQLite, and a SQLite file with damaged pages: refused
 * naming the file and what to do, and not touched. */
START_TEST (test_refuse_not_sqlite_and_corrupt)
{
    char path[PATH_MAX], err[2048] = "", want[2048];
    s_path (path, sizeof path, "text.db");
    FILE *f = fopen (path, "w");
    ck_assert_ptr_nonnull (f);
    for (int i = 0; i < 200; i++)
        fprintf (f, "line %d: this is a text file, not a result database\n", i);
    ck_assert_int_eq (fclose (f), 0);
    struct stat before, after;
    ck_assert_int_eq (stat (path, &before), 0);
    snprintf (want, sizeof want, "%s: the result database is not a SQLite database, or its header is damaged (file is"
              " not a database): move it aside or restore a copy; shardbench creates a new one when none exists", path);
    ck_assert_ptr_null (sb_resultdb_open (path, err, sizeof err));
    ck_assert_str_eq (err, want);
    err[0] = '\0';
    ck_assert_ptr_null (sb_resultdb_open_readonly (path, 1, err, sizeof err));
    ck_assert_str_eq (err, want);
    ck_assert_int_eq (stat (path, &after), 0);
    ck_assert_int_eq (after.st_size, before.st_size);
    ck_assert_int_eq (after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    ck_assert_int_eq (after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);

    /* a real database whose table pages are overwritten */
    char bad[PATH_MAX];
    s_path (bad, sizeof bad, "corrupt.db");
    sb_resultdb_t *db = s_open (bad);
    for (int i = 0; i < 50; i++)
        ck_assert_int_eq (s_run (db, "train"), i + 1);
    sb_resultdb_destroy (&db);
    sqlite3 *q = s_sql_open (bad);
    s_sql_exec (q, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE");
    int64_t page = s_sql_int (q, "PRAGMA page_size");
    int64_t pages = s_sql_int (q, "PRAGMA page_count");
    sqlite3_close (q);
    ck_assert_int_gt (pages, 3);
    int fd = open (bad, O_WRONLY);
    ck_assert_int_ge (fd, 0);
    char junk[65536];
    memset (junk, 0x5c, sizeof junk);
    for (int64_t p = 1; p < pages; p++)     /* every page but the header's */
        ck_assert_int_eq (pwrite (fd, junk, (size_t) page, (off_t) (p * page)), page);
    ck_assert_int_eq (close (fd), 0);
    err[0] = '\0';
    ck_assert_ptr_null (sb_resultdb_open (bad, err, sizeof err));
    snprintf (want, sizeof want, "%s: the result database is ", bad);
    ck_assert_msg (strncmp (err, want, strlen (want)) == 0, "%s", err);
    ck_assert_msg (strstr (err, "corrupt") != NULL, "%s", err);
    ck_assert_msg (strstr (err, ": move it aside or restore a copy; shardbench creates a new one when none exists"),
                   "%s", err);
}
END_TEST

/* Another program's SQLite database (tables, none of them shardbench's) is
 * refused, whatever its user_version, and left exactly as it was: a --db
 * that names the wrong file must not gain twenty tables and version 15,
 * nor have its own tables altered by an upgrade step. */
START_TEST (test_refuse_foreign_sqlite)
{
    static const int versions[] = { 0, 3, 9 };
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        char path[PATH_MAX], err[2048] = "", want[2048], name[32], sql[256];
        snprintf (name, sizeof name, "app%d.db", versions[i]);
        s_path (path, sizeof path, name);
        sqlite3 *q = NULL;
        ck_assert_int_eq (sqlite3_open (path, &q), SQLITE_OK);
        snprintf (sql, sizeof sql, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); CREATE TABLE errors (x);"
                  " INSERT INTO notes (body) VALUES ('keep me'); PRAGMA user_version = %d", versions[i]);
        s_sql_exec (q, sql);
        sqlite3_close (q);
        ck_assert_ptr_null (sb_resultdb_open (path, err, sizeof err));
        snprintf (want, sizeof want, "%s: not a shardbench result database (schema version %d, with tables but no runs"
                  " table): refused, to leave another program's database as it is", path, versions[i]);
        ck_assert_str_eq (err, want);
        q = s_sql_open (path);
        ck_assert_int_eq (s_sql_int (q, "PRAGMA user_version"), versions[i]);
        ck_assert_str_eq (s_sql_text (q, "PRAGMA journal_mode"), "delete");
        ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master"
                                         " ORDER BY name)"), "errors notes");
        ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(name, ' ') FROM pragma_table_info('errors')"), "x");
        ck_assert_str_eq (s_sql_text (q, "SELECT body FROM notes"), "keep me");
        sqlite3_close (q);
    }
    /* an empty SQLite file (no tables) is a new result database */
    char path[PATH_MAX];
    s_path (path, sizeof path, "blank.db");
    sqlite3 *q = NULL;
    ck_assert_int_eq (sqlite3_open (path, &q), SQLITE_OK);
    s_sql_exec (q, "PRAGMA user_version = 0");
    sqlite3_close (q);
    sb_resultdb_t *db = s_open (path);
    ck_assert_int_eq (s_run (db, "train"), 1);
    sb_resultdb_destroy (&db);
}
END_TEST

/* Read-only opening: a current file reads and refuses writes; an empty
 * SQLite file is not a result database; an older schema must be upgraded
 * by someone who can write it; a missing file is an error. */
START_TEST (test_readonly)
{
    char path[PATH_MAX], err[2048] = "", want[2048];
    s_path (path, sizeof path, "ro.db");
    sb_resultdb_t *db = s_open (path);
    ck_assert_int_eq (s_run (db, "train"), 1);
    sb_resultdb_destroy (&db);
    db = sb_resultdb_open_readonly (path, 1, err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq (sqlite3_prepare_v2 (sb_resultdb_handle (db), "SELECT kind FROM runs", -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
    ck_assert_str_eq ((const char *) sqlite3_column_text (st, 0), "train");
    sqlite3_finalize (st);
    ck_assert_int_eq (sb_resultdb_run_hosts (db, 1, 9, 9), -1);
    ck_assert_ptr_nonnull (strstr (sb_resultdb_errmsg (db), "readonly"));
    sb_resultdb_destroy (&db);

    char empty[PATH_MAX];
    s_path (empty, sizeof empty, "empty.db");
    sqlite3 *q = NULL;
    ck_assert_int_eq (sqlite3_open (empty, &q), SQLITE_OK);
    s_sql_exec (q, "CREATE TABLE other (x)");
    sqlite3_close (q);
    ck_assert_ptr_null (sb_resultdb_open_readonly (empty, 1, err, sizeof err));
    snprintf (want, sizeof want, "%s: not a shardbench result database (schema version 0)", empty);
    ck_assert_str_eq (err, want);

    q = s_sql_open (path);
    s_sql_exec (q, "PRAGMA user_version = 9");
    sqlite3_close (q);
    ck_assert_ptr_null (sb_resultdb_open_readonly (path, 0, err, sizeof err));
    snprintf (want, sizeof want, "%s: result database schema version 9 must be upgraded to version 17 before this"
              " shardbench can read it, which needs write access: run `shardbench report --db %s` once as a user"
              " who can write the file and its folder", path, path);
    ck_assert_str_eq (err, want);

    char missing[PATH_MAX];
    s_path (missing, sizeof missing, "missing.db");
    err[0] = '\0';
    ck_assert_ptr_null (sb_resultdb_open_readonly (missing, 1, err, sizeof err));
    ck_assert_msg (strncmp (err, missing, strlen (missing)) == 0, "%s", err);
    ck_assert_int_eq (access (missing, F_OK), -1);     /* not created */
}
END_TEST

/* SQL taking a current file back to version 14's names: the error codes
 * named after the one object store and HTTP library of the time, the
 * latency histograms' columns after buckets (what version 15 renamed). */
/* back to 15: version 16's rank_epochs.compute_all_s and held_s */
#define S_SCHEMA_V15_SQL "ALTER TABLE rank_epochs DROP COLUMN held_s; ALTER TABLE rank_epochs DROP COLUMN compute_all_s;"
#define S_SCHEMA_V14_SQL S_SCHEMA_V15_SQL \
    " ALTER TABLE errors RENAME COLUMN service_code TO s3_code; ALTER TABLE errors RENAME COLUMN library_code TO curl_code;" \
    " ALTER TABLE read_latency RENAME COLUMN bin_low_us TO bucket_low_us;" \
    " ALTER TABLE read_latency RENAME COLUMN bin_high_us TO bucket_high_us;" \
    " ALTER TABLE host_read_latency RENAME COLUMN bin_low_us TO bucket_low_us;" \
    " ALTER TABLE host_read_latency RENAME COLUMN bin_high_us TO bucket_high_us;"

/* A version 14 file: the renamed columns keep every value (an object
 * store's 404 and a timeout of the HTTP library, the latency rows of a
 * rank and of its host) and the primary keys still hold. */
START_TEST (test_upgrade_from_v14)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, "v14.db");
    sb_resultdb_t *db = s_open (path);
    ck_assert_int_eq (s_run (db, "train"), 1);
    ck_assert_int_eq (sb_resultdb_flush (db), 0);
    sb_resultdb_destroy (&db);
    sqlite3 *q = s_sql_open (path);
    s_sql_exec (q, S_SCHEMA_V14_SQL
                   " INSERT INTO errors (run_id, t, rank, host, op, target, errno_val, message, endpoint, http_status,"
                   " s3_code, curl_code, attempt) VALUES (1, 10, 0, 'h', 'read', 'train/a', 2, 'GET failed',"
                   " 'http://127.0.0.1:9000', 404, 'NoSuchKey', 0, 1),"
                   " (1, 11, 1, 'h', 'read', 'train/b', 110, 'timed out', 'http://127.0.0.1:9000', 0, NULL, 28, 3);"
                   " INSERT INTO read_latency (run_id, epoch, bucket_low_us, bucket_high_us, count)"
                   " VALUES (1, 1, 20, 21, 7), (1, 1, 40, 42, 3);"
                   " INSERT INTO host_read_latency (run_id, epoch, host, bucket_low_us, bucket_high_us, count)"
                   " VALUES (1, 1, 'h', 20, 21, 7), (1, 1, 'h', 40, 42, 3);"
                   " PRAGMA user_version = 14");
    sqlite3_close (q);
    db = s_open (path);
    sb_resultdb_destroy (&db);
    q = s_sql_open (path);
    ck_assert_int_eq (s_sql_int (q, "PRAGMA user_version"), 17);
    ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(x, ' / ') FROM (SELECT rank || '|' || http_status || '|' ||"
                                     " coalesce(service_code, 'NULL') || '|' || library_code || '|' || attempt AS x"
                                     " FROM errors ORDER BY rowid)"), "0|404|NoSuchKey|0|1 / 1|0|NULL|28|3");
    ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(name, ' ') FROM pragma_table_info('errors')"),
                      "run_id t rank host op target errno_val message endpoint http_status service_code library_code"
                      " attempt");
    ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(bin_low_us || '-' || bin_high_us || ':' || count, ' ') FROM"
                                     " (SELECT * FROM read_latency ORDER BY bin_low_us)"), "20-21:7 40-42:3");
    ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(bin_low_us || '-' || bin_high_us || ':' || count, ' ') FROM"
                                     " (SELECT * FROM host_read_latency ORDER BY bin_low_us)"), "20-21:7 40-42:3");
    /* the primary key follows the rename: a second row of the same bin is refused */
    ck_assert_int_ne (sqlite3_exec (q, "INSERT INTO read_latency (run_id, epoch, bin_low_us, bin_high_us, count)"
                                       " VALUES (1, 1, 20, 21, 1)", NULL, NULL, NULL), SQLITE_OK);
    ck_assert_str_eq (s_sql_text (q, "PRAGMA integrity_check"), "ok");
    sqlite3_close (q);
}
END_TEST

/* A version 9 file (the current schema without what version 10 added) is
 * upgraded in place: its rows stay, the new columns and tables exist. */
START_TEST (test_upgrade_from_v9)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, "v9.db");
    sb_resultdb_t *db = s_open (path);
    ck_assert_int_eq (s_run (db, "train"), 1);
    sb_resultdb_destroy (&db);
    sqlite3 *q = s_sql_open (path);
    s_sql_exec (q, S_SCHEMA_V14_SQL
                   " ALTER TABLE checkpoints DROP COLUMN rank_sync; ALTER TABLE checkpoints DROP COLUMN dlio_gib_per_s;"
                   " ALTER TABLE checkpoints DROP COLUMN dlio_duration_s; ALTER TABLE checkpoints DROP COLUMN dlio_bytes;"
                   " DROP TABLE run_inputs; DROP TABLE run_overrides; DROP TABLE run_host_info; DROP TABLE host_read_latency;"
                   " ALTER TABLE runs DROP COLUMN warmup; ALTER TABLE runs DROP COLUMN series_index;"
                   " ALTER TABLE runs DROP COLUMN series_id; ALTER TABLE runs DROP COLUMN label; DROP TABLE series;"
                   " DROP TABLE evals; DROP TABLE eval_ranks;"
                   " ALTER TABLE runs DROP COLUMN eval_io_stdev_MB_per_second;"
                   " ALTER TABLE runs DROP COLUMN eval_io_mean_MB_per_second;"
                   " ALTER TABLE runs DROP COLUMN eval_throughput_stdev_samples_per_second;"
                   " ALTER TABLE runs DROP COLUMN eval_throughput_mean_samples_per_second;"
                   " ALTER TABLE runs DROP COLUMN eval_au_meet_expectation;"
                   " ALTER TABLE runs DROP COLUMN eval_au_stdev_percentage;"
                   " ALTER TABLE runs DROP COLUMN eval_au_mean_percentage;"
                   " ALTER TABLE runs DROP COLUMN workflow;"
                   " PRAGMA user_version = 9");
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'workflow'"), 0);
    sqlite3_close (q);

    db = s_open (path);
    ck_assert_int_eq (sb_resultdb_run_workflow (db, 1, "train"), 0);
    sb_resultdb_destroy (&db);
    q = s_sql_open (path);
    ck_assert_int_eq (s_sql_int (q, "PRAGMA user_version"), 17);
    ck_assert_str_eq (s_sql_text (q, "SELECT kind || '|' || workflow || '|' || coalesce(eval_au_mean_percentage,"
                                     " 'NULL') FROM runs"), "train|train|NULL");
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM sqlite_master WHERE name IN ('evals', 'eval_ranks')"), 2);
    ck_assert_str_eq (s_sql_text (q, "PRAGMA integrity_check"), "ok");
    sqlite3_close (q);
}
END_TEST

/* A version 13 file's checkpoints get DLIO's figures on upgrade: rank 0's
 * own time (DLIO's without checkpoint.rank_sync), the bytes of all ranks
 * as DLIO's size, their GiB/s. */
START_TEST (test_upgrade_from_v13)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, "v13.db");
    sb_resultdb_t *db = s_open (path);
    ck_assert_int_eq (s_run (db, "checkpoint"), 1);
    /* rank 0: 1 GiB in 2 s; rank 1: 1 GiB in 4 s */
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, 1, 1, "write", 1, 0, "h0", 2, 1073741824, 10.0, 12.0), 0);
    ck_assert_int_eq (sb_resultdb_add_ckpt_rank (db, 1, 1, "write", 1, 1, "h1", 2, 1073741824, 10.0, 14.0), 0);
    ck_assert_int_eq (sb_resultdb_close_ckpt (db, 1, 1, 1, 1), 0);
    ck_assert_int_eq (sb_resultdb_flush (db), 0);
    sb_resultdb_destroy (&db);
    sqlite3 *q = s_sql_open (path);
    s_sql_exec (q, S_SCHEMA_V14_SQL
                   " ALTER TABLE checkpoints DROP COLUMN rank_sync; ALTER TABLE checkpoints DROP COLUMN dlio_gib_per_s;"
                   " ALTER TABLE checkpoints DROP COLUMN dlio_duration_s; ALTER TABLE checkpoints DROP COLUMN dlio_bytes;"
                   " PRAGMA user_version = 13");
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM pragma_table_info('checkpoints') WHERE name LIKE 'dlio%'"), 0);
    sqlite3_close (q);
    db = s_open (path);
    sb_resultdb_destroy (&db);
    q = s_sql_open (path);
    ck_assert_int_eq (s_sql_int (q, "PRAGMA user_version"), 17);
    ck_assert_str_eq (s_sql_text (q, "SELECT bytes || '|' || duration_s || '|' || dlio_bytes || '|' || dlio_duration_s"
                                     " || '|' || dlio_gib_per_s || '|' || gib_per_s || '|' || rank_sync FROM checkpoints"),
                      "2147483648|4.0|2147483648|2.0|1.0|0.5|0");
    ck_assert_str_eq (s_sql_text (q, "PRAGMA integrity_check"), "ok");
    sqlite3_close (q);
}
END_TEST

/* The writer thread: rows are all there after sync; run ids come back. */
START_TEST (test_writer_rows)
{
    char path[PATH_MAX], err[1024] = "";
    s_path (path, sizeof path, "writer.db");
    sb_resultdb_t *db = s_open (path);
    ck_assert_int_eq (sb_resultdb_start_writer (db, 0, err, sizeof err), 0);
    ck_assert_int_eq (sb_resultdb_start_writer (db, 0, err, sizeof err), 0);    /* once is enough */
    int64_t run = s_run (db, "train");
    ck_assert_int_eq (run, 1);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq (sb_resultdb_add_stats (db, run, i, 1, (uint64_t) i % 4, 1, 4096, 1, 0.001, 0), 0);
    ck_assert_int_eq (sb_resultdb_poll (db), 0);
    ck_assert_int_eq (sb_resultdb_sync (db), 0);
    sqlite3 *q = s_sql_open (path);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM timeseries"), 1000);
    ck_assert_int_eq (s_sql_int (q, "SELECT sum(bytes) FROM timeseries"), 4096000);
    ck_assert_int_eq (s_run (db, "datagen"), 2);
    ck_assert_int_eq (sb_resultdb_run_finish (db, 2, "succeeded", NULL), 0);
    sb_resultdb_destroy (&db);     /* writes what is queued */
    ck_assert_str_eq (s_sql_text (q, "SELECT status || '|' || db_locked_s FROM runs WHERE id = 2"), "succeeded|0.0");
    sqlite3_close (q);
}
END_TEST

/* Another connection holds the write lock: the writer waits (the caller's
 * keep-alive runs meanwhile, every ~100 ms), writes once the lock is gone,
 * and counts the wait into runs.db_locked_s. */
static sqlite3 *s_locker;
static int s_keep_alive_calls;

static void
s_release_after_three (void *arg)
{
    ck_assert_ptr_eq (arg, &s_keep_alive_calls);
    if (++s_keep_alive_calls == 3)
        s_sql_exec (s_locker, "COMMIT");
}

START_TEST (test_writer_waits_for_lock)
{
    char path[PATH_MAX], err[1024] = "";
    s_path (path, sizeof path, "locked.db");
    sb_resultdb_t *db = s_open (path);
    ck_assert_int_eq (sb_resultdb_start_writer (db, 30, err, sizeof err), 0);
    int64_t run = s_run (db, "train");
    ck_assert_int_eq (sb_resultdb_sync (db), 0);
    s_locker = s_sql_open (path);
    s_sql_exec (s_locker, "BEGIN IMMEDIATE");
    s_keep_alive_calls = 0;
    sb_resultdb_set_keep_alive (db, s_release_after_three, &s_keep_alive_calls);
    ck_assert_int_eq (sb_resultdb_run_finish (db, run, "succeeded", NULL), 0);
    ck_assert_int_eq (sb_resultdb_sync (db), 0);
    ck_assert_int_ge (s_keep_alive_calls, 3);
    sb_resultdb_set_keep_alive (db, NULL, NULL);
    double locked = s_sql_double (s_locker, "SELECT db_locked_s FROM runs WHERE id = 1");
    ck_assert_msg (locked >= 0.2 && locked < 10, "db_locked_s %g", locked);
    ck_assert_str_eq (s_sql_text (s_locker, "SELECT status FROM runs WHERE id = 1"), "succeeded");
    sqlite3_close (s_locker);
    sb_resultdb_destroy (&db);
}
END_TEST

/* Another process (the sqlite3 shell, BEGIN IMMEDIATE) holds the write
 * lock when a run begins: the run's start waits for it, before any timing,
 * and the warnings say that, not that rows were written late. The shell is
 * stopped by its pid once the first warning is out (the keep-alive reads
 * the captured stderr). runs.started_at is when the lock was got. */
static pid_t s_shell = -1;
static char s_err_path[PATH_MAX];
static double s_released_at;

static void
s_stop_shell_when_warned (void *arg)
{
    (void) arg;
    if (s_shell < 0)
        return;
    char text[8192] = "";
    FILE *f = fopen (s_err_path, "r");
    if (f) {
        text[fread (text, 1, sizeof text - 1, f)] = '\0';
        fclose (f);
    }
    if (!strstr (text, "is locked by another process"))
        return;
    s_released_at = sb_now ();
    ck_assert_int_eq (kill (s_shell, SIGTERM), 0);
    int status;
    ck_assert_int_eq (waitpid (s_shell, &status, 0), s_shell);
    s_shell = -1;
}

START_TEST (test_lock_at_run_start)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, "start.db");
    s_path (s_err_path, sizeof s_err_path, "stderr.txt");
    sb_resultdb_t *db = s_open (path);
    char err[1024] = "";
    ck_assert_int_eq (sb_resultdb_start_writer (db, 60, err, sizeof err), 0);
    /* the shell, its stdin a pipe held open here */
    int in[2];
    ck_assert_int_eq (pipe (in), 0);
    s_shell = fork ();
    ck_assert_int_ge (s_shell, 0);
    if (s_shell == 0) {
        int null = open ("/dev/null", O_WRONLY);
        if (dup2 (in[0], 0) < 0 || null < 0 || dup2 (null, 1) < 0)
            _exit (126);
        close (in[1]);
        execlp ("sqlite3", "sqlite3", path, (char *) NULL);
        _exit (127);
    }
    close (in[0]);
    const char cmd[] = "BEGIN IMMEDIATE;\n";
    ck_assert_int_eq (write (in[1], cmd, sizeof cmd - 1), (ssize_t) sizeof cmd - 1);
    /* locked once a write transaction of our own cannot start */
    sqlite3 *q = NULL;
    ck_assert_int_eq (sqlite3_open_v2 (path, &q, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    int locked = 0;
    for (int i = 0; i < 1000 && !locked; i++) {
        int rc = sqlite3_exec (q, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            sqlite3_exec (q, "ROLLBACK", NULL, NULL, NULL);
        locked = rc == SQLITE_BUSY;
        if (!locked)
            usleep (10000);
    }
    sqlite3_close (q);
    ck_assert_msg (locked, "the sqlite3 shell did not take the lock");
    /* stderr into a file while the run begins */
    fflush (stderr);
    int saved = dup (2), fd = open (s_err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge (saved, 0);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_ge (dup2 (fd, 2), 0);
    close (fd);
    sb_resultdb_set_keep_alive (db, s_stop_shell_when_warned, NULL);
    double asked = sb_now ();
    int64_t run = s_run (db, "train");
    sb_resultdb_set_keep_alive (db, NULL, NULL);
    fflush (stderr);
    ck_assert_int_ge (dup2 (saved, 2), 0);
    close (saved);
    close (in[1]);
    ck_assert_int_eq (s_shell, -1);     /* stopped by the keep-alive, not left behind */
    ck_assert_int_eq (run, 1);
    /* exactly two warnings: while locked, and when the run could begin */
    char text[8192] = "", want[4096];
    FILE *f = fopen (s_err_path, "r");
    ck_assert_ptr_nonnull (f);
    text[fread (text, 1, sizeof text - 1, f)] = '\0';
    fclose (f);
    char *l1 = text, *l2 = strchr (l1, '\n');
    ck_assert_ptr_nonnull (l2);
    *l2++ = '\0';
    char *end = strchr (l2, '\n');
    ck_assert_ptr_nonnull (end);
    *end = '\0';
    ck_assert_str_eq (end + 1, "");
    ck_assert_int_gt (strlen (l1), 13);     /* HH:MM:SS.mmm and a space */
    ck_assert_int_gt (strlen (l2), 13);
    l1 += 13;
    l2 += 13;
    double so_far = -1, after = -1;
    const char *p = strstr (l1, "(");
    ck_assert_ptr_nonnull (p);
    ck_assert_int_eq (sscanf (p, "(%lf", &so_far), 1);
    snprintf (want, sizeof want, "shardbench: warning: result database %s is locked by another process (%.0f s so far):"
              " the run cannot begin until it is released (its timing has not started)", path, so_far);
    ck_assert_str_eq (l1, want);
    p = strstr (l2, " after ");
    ck_assert_ptr_nonnull (p);
    ck_assert_int_eq (sscanf (p, " after %lf", &after), 1);
    snprintf (want, sizeof want, "shardbench: warning: result database %s is writable again after %.1f s: the run"
              " began %.1f s late, before its timing started (its start time is when the lock was got)", path, after,
              after);
    ck_assert_str_eq (l2, want);
    ck_assert_msg (after >= 1.0 && after <= sb_now () - asked + 0.05, "waited %g s", after);
    /* the run's start is when it could begin, not when it was asked for */
    sqlite3 *r = s_sql_open (path);
    double started = s_sql_double (r, "SELECT started_at FROM runs WHERE id = 1");
    ck_assert_msg (started >= s_released_at, "started_at %.3f before the lock was released at %.3f (asked %.3f)",
                   started, s_released_at, asked);
    sqlite3_close (r);
    sb_resultdb_destroy (&db);
}
END_TEST

/* Locked past the limit: the rows are lost, and said so with the file. */
START_TEST (test_writer_gives_up)
{
    char path[PATH_MAX], err[1024] = "", want[2048];
    s_path (path, sizeof path, "stuck.db");
    sb_resultdb_t *db = s_open (path);
    ck_assert_int_eq (sb_resultdb_start_writer (db, 1, err, sizeof err), 0);
    int64_t run = s_run (db, "train");
    ck_assert_int_eq (sb_resultdb_sync (db), 0);
    sqlite3 *q = s_sql_open (path);
    s_sql_exec (q, "BEGIN IMMEDIATE");
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq (sb_resultdb_add_stats (db, run, i, 1, 0, 1, 1, 1, 0, 0), 0);
    ck_assert_int_eq (sb_resultdb_sync (db), -1);
    snprintf (want, sizeof want, "3 result rows were not written: result database %s was locked by another process"
              " for more than 1 s (--db-lock-timeout): results can no longer be written", path);
    ck_assert_str_eq (sb_resultdb_errmsg (db), want);
    ck_assert_int_eq (sb_resultdb_poll (db), -1);
    s_sql_exec (q, "COMMIT");
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM timeseries"), 0);
    sqlite3_close (q);
    sb_resultdb_destroy (&db);
}
END_TEST

/* A batch holds the caller's writes in one transaction until flushed. */
START_TEST (test_batch)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, "batch.db");
    sb_resultdb_t *db = s_open (path);
    int64_t run = s_run (db, "train");
    ck_assert_int_eq (sb_resultdb_batch_begin (db), 0);
    ck_assert_int_eq (sb_resultdb_batch_begin (db), 0);    /* already open: nothing */
    ck_assert_int_eq (sqlite3_get_autocommit (sb_resultdb_handle (db)), 0);
    ck_assert_int_eq (sb_resultdb_add_stats (db, run, 1, 1, 0, 1, 1, 1, 0, 0), 0);
    ck_assert_int_eq (sb_resultdb_add_stats (db, run, 2, 1, 0, 1, 1, 1, 0, 0), 0);
    sqlite3 *q = s_sql_open (path);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM timeseries"), 0);
    ck_assert_int_eq (sb_resultdb_flush_if_due (db), 0);   /* not a second yet */
    ck_assert_int_eq (sqlite3_get_autocommit (sb_resultdb_handle (db)), 0);
    ck_assert_int_eq (sb_resultdb_flush (db), 0);
    ck_assert_int_eq (sqlite3_get_autocommit (sb_resultdb_handle (db)), 1);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM timeseries"), 2);
    ck_assert_int_eq (sb_resultdb_flush (db), 0);          /* none open: nothing */
    /* due after a second */
    ck_assert_int_eq (sb_resultdb_batch_begin (db), 0);
    ck_assert_int_eq (sb_resultdb_add_stats (db, run, 3, 1, 0, 1, 1, 1, 0, 0), 0);
    usleep (1100 * 1000);
    ck_assert_int_eq (sb_resultdb_flush_if_due (db), 0);
    ck_assert_int_eq (sqlite3_get_autocommit (sb_resultdb_handle (db)), 1);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM timeseries"), 3);
    /* a run's start is never held back by a batch */
    ck_assert_int_eq (sb_resultdb_batch_begin (db), 0);
    ck_assert_int_eq (s_run (db, "datagen"), 2);
    ck_assert_int_eq (s_sql_int (q, "SELECT count(*) FROM runs"), 2);
    sqlite3_close (q);
    sb_resultdb_destroy (&db);
}
END_TEST

/* An in-memory database has no writer: rows are there at once. */
START_TEST (test_in_memory)
{
    char err[256] = "";
    sb_resultdb_t *db = sb_resultdb_open (":memory:", err, sizeof err);
    ck_assert_msg (db != NULL, "%s", err);
    ck_assert_int_eq (sb_resultdb_start_writer (db, 1, err, sizeof err), 0);
    ck_assert_int_eq (s_run (db, "train"), 1);
    ck_assert_int_eq (sb_resultdb_add_stats (db, 1, 1, 1, 0, 1, 1, 1, 0, 0), 0);
    ck_assert_int_eq (sb_resultdb_sync (db), 0);
    ck_assert_int_eq (s_sql_int (sb_resultdb_handle (db), "SELECT count(*) FROM timeseries"), 1);
    ck_assert_int_eq (s_sql_int (sb_resultdb_handle (db), "PRAGMA user_version"), 17);
    sb_resultdb_destroy (&db);
}
END_TEST

/* Runs left 'running' by a coordinator of this host that is gone become
 * 'interrupted', ending at the last thing they recorded; a live
 * coordinator's run, another host's and finished runs stay as they are. */
START_TEST (test_mark_interrupted)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, "stale.db");
    sb_resultdb_t *db = s_open (path);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq (s_run (db, "train"), i + 1);
    /* a live process and a dead one (reaped, so its pid is free) */
    pid_t live = fork ();
    ck_assert_int_ge (live, 0);
    if (live == 0) {
        alarm (30);     /* never outlives a failed test by long */
        pause ();
        _exit (0);
    }
    pid_t dead = fork ();
    ck_assert_int_ge (dead, 0);
    if (dead == 0)
        _exit (0);
    ck_assert_int_eq (waitpid (dead, NULL, 0), dead);
    sqlite3 *q = s_sql_open (path);
    char sql[512];
    snprintf (sql, sizeof sql, "UPDATE runs SET coordinator_pid = %d, started_at = 1000 WHERE id = 1;"
              " UPDATE runs SET coordinator_pid = %d, started_at = 1000 WHERE id = 2;"
              " UPDATE runs SET coordinator_pid = %d, coordinator_host = 'elsewhere' WHERE id = 3;"
              " UPDATE runs SET coordinator_pid = %d, status = 'succeeded' WHERE id = 4;",
              (int) live, (int) dead, (int) dead, (int) dead);
    s_sql_exec (q, sql);
    ck_assert_int_eq (sb_resultdb_add_stats (db, 2, 1005.5, 1, 0, 1, 1, 1, 0, 0), 0);
    sb_rank_epoch_t re = { .epoch = 1, .rank = 0, .host = "h", .started_at = 1001, .finished_at = 1007.25 };
    ck_assert_int_eq (sb_resultdb_add_rank_epoch (db, 2, &re), 0);

    ck_assert_int_eq (sb_resultdb_mark_interrupted (db), 1);
    ck_assert_str_eq (s_sql_text (q, "SELECT group_concat(id || ':' || status, ' ') FROM runs"),
                      "1:running 2:interrupted 3:running 4:succeeded");
    ck_assert_str_eq (s_sql_text (q, "SELECT finished_at || '|' || error FROM runs WHERE id = 2"),
                      "1007.25|coordinator stopped before the run finished");
    /* nothing recorded: it ended when it started */
    kill (live, SIGKILL);
    ck_assert_int_eq (waitpid (live, NULL, 0), live);
    ck_assert_int_eq (sb_resultdb_mark_interrupted (db), 1);
    ck_assert_str_eq (s_sql_text (q, "SELECT status || '|' || finished_at FROM runs WHERE id = 1"),
                      "interrupted|1000.0");
    ck_assert_int_eq (sb_resultdb_mark_interrupted (db), 0);
    sqlite3_close (q);
    sb_resultdb_destroy (&db);
}
END_TEST

/* No column is meant for credentials, and the storage facts that are kept
 * (endpoint URLs, the configuration text) are stored exactly as given: the
 * caller redacts (the integration test test_secrets.sh checks that no
 * secret reaches the file). */
START_TEST (test_no_secret_columns)
{
    char path[PATH_MAX];
    s_path (path, sizeof path, "cols.db");
    sb_resultdb_t *db = s_open (path);
    sb_resultdb_destroy (&db);
    sqlite3 *q = s_sql_open (path);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq (sqlite3_prepare_v2 (q, "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p"
                                             " WHERE m.type = 'table'", -1, &st, NULL), SQLITE_OK);
    static const char *const forbidden[] = { "secret", "password", "passwd", "token", "credential", "access_key",
                                              "key_id", "auth", "profile" };
    int columns = 0, rc;
    while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
        const char *table = (const char *) sqlite3_column_text (st, 0), *col = (const char *) sqlite3_column_text (st, 1);
        for (size_t j = 0; j < sizeof forbidden / sizeof forbidden[0]; j++)
            ck_assert_msg (!strcasestr (col, forbidden[j]), "column %s.%s looks like a credential", table, col);
        columns++;
    }
    ck_assert_int_eq (rc, SQLITE_DONE);
    sqlite3_finalize (st);
    ck_assert_int_gt (columns, 150);
    sqlite3_close (q);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("resultdb_core");
    TCase *tc = tcase_create ("core");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_create_schema);
    tcase_add_test (tc, test_rows);
    tcase_add_test (tc, test_exec_and_errors);
    tcase_add_test (tc, test_reopen);
    tcase_add_test (tc, test_refuse_newer);
    tcase_add_test (tc, test_refuse_not_sqlite_and_corrupt);
    tcase_add_test (tc, test_refuse_foreign_sqlite);
    tcase_add_test (tc, test_readonly);
    tcase_add_test (tc, test_upgrade_from_v9);
    tcase_add_test (tc, test_upgrade_from_v13);
    tcase_add_test (tc, test_upgrade_from_v14);
    tcase_add_test (tc, test_writer_rows);
    tcase_add_test (tc, test_writer_waits_for_lock);
    tcase_add_test (tc, test_writer_gives_up);
    tcase_add_test (tc, test_lock_at_run_start);
    tcase_add_test (tc, test_batch);
    tcase_add_test (tc, test_in_memory);
    tcase_add_test (tc, test_mark_interrupted);
    tcase_add_test (tc, test_no_secret_columns);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
