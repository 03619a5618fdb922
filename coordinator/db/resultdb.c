/* resultdb: schema, checks at open, and the writer thread.
 *
 * Rows are written by a thread of their own with its own connection, fed by
 * messages over an inproc PAIR pipe without a high-water mark: a database
 * that another process keeps locked delays the rows, never the event loop
 * (its barriers, heartbeats and key pages), and never loses them. The
 * writer retries a lock without limit up to --db-lock-timeout, tells the
 * owner while it waits (NOTE), and counts the wait into runs.db_locked_s;
 * past that limit, or on any other SQLite error, it says FAIL and the run
 * fails naming the file. One atomic flag (s_writer_t.abandon) is shared:
 * it stops a lock wait when the user interrupts, because the writer is then
 * not reading its pipe. */
#include "resultdb.h"
#include "log.h"
#include "util.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char sb_results_sql[];

/* A request is one ZeroMQ message: frame 0 its kind; for statements the
 * SQL, the parameter format (one letter each) and one frame per parameter:
 * 't' text, 'n' NULL (an empty frame), 'i' int64 and 'd' double (8 bytes,
 * host order: the message never leaves the process); 'L' takes no frame: the
 * writer binds the seconds it waited for locks since the run began; 'N'
 * takes none either: the writer binds the time it runs the statement (a
 * run's start, after any wait for another process's lock). */
#define S_REQ_EXEC  "X"     /* a statement */
#define S_REQ_BEGIN "R"     /* a statement that starts a run: reply ID with its rowid */
#define S_REQ_SYNC  "S"     /* reply SYNC once everything before it is committed */
#define S_REQ_TERM  "$TERM" /* write what came before, then end */
/* writer -> owner */
#define S_REP_ID     "ID"       /* + int64 rowid (-1: not written) */
#define S_REP_SYNC   "SYNC"     /* + int64 rows lost so far */
#define S_REP_LOCKED "LOCKED"   /* + text: waiting for another process's lock */
#define S_REP_NOTE   "NOTE"     /* + text: the lock is gone */
#define S_REP_FAIL   "FAIL"     /* + text: rows were lost; the run must fail */

#define S_CACHE 48

/* One connection and its prepared statements, by SQL text. */
typedef struct {
    sqlite3      *db;
    char         *sql[S_CACHE];
    sqlite3_stmt *st[S_CACHE];
    size_t        n;
} s_conn_t;

typedef struct {
    s_conn_t    conn;
    zsock_t    *pipe;
    char        path[1024];
    double      lock_limit_s;   /* 0: wait forever */
    double      run_locked_s;   /* lock waits since the last run began */
    uint64_t    lost;           /* rows not written */
    int         gave_up;        /* locked past the limit: every row is dropped, loudly */
    atomic_int  abandon;        /* the owner was interrupted during a lock wait */
} s_writer_t;

struct sb_resultdb {
    s_conn_t      conn;
    char          path[1024];
    int           in_batch;
    double        batch_started;
    s_writer_t   *writer;       /* NULL: writes run here, at once */
    zsock_t      *pipe;
    pthread_t     thread;
    int           writer_locked;/* the writer waits for a lock (LOCKED, until NOTE) */
    int           failed;       /* a row was lost */
    char          error[1024];  /* the first failure */
    void        (*keep_alive) (void *);
    void         *keep_alive_arg;
};

static void
s_hostname_init (char *host, size_t size)
{
    if (gethostname (host, size - 1) != 0)
        snprintf (host, size, "localhost");
    host[size - 1] = '\0';
}

static const char *
s_hostname (void)
{
    static char host[256];
    if (!host[0])
        s_hostname_init (host, sizeof host);
    return host;
}

sqlite3 *
sb_resultdb_handle (sb_resultdb_t *self)
{
    return self->conn.db;
}

const char *
sb_resultdb_errmsg (sb_resultdb_t *self)
{
    return self->error[0] ? self->error : sqlite3_errmsg (self->conn.db);
}

const char *
sb_resultdb_path (sb_resultdb_t *self)
{
    return self->path;
}

static void
s_conn_fini (s_conn_t *c)
{
    for (size_t i = 0; i < c->n; i++) {
        sqlite3_finalize (c->st[i]);
        free (c->sql[i]);
    }
    c->n = 0;
    if (c->db && sqlite3_close (c->db) != SQLITE_OK)
        sb_warn ("closing the result database: %s", sqlite3_errmsg (c->db));
    c->db = NULL;
}

/* The prepared statement for sql (cached), or NULL with the error in db. */
static sqlite3_stmt *
s_conn_prepare (s_conn_t *c, const char *sql)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp (c->sql[i], sql) == 0)
            return c->st[i];
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3 (c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        return NULL;
    if (c->n == S_CACHE) {      /* full: the oldest goes */
        sqlite3_finalize (c->st[0]);
        free (c->sql[0]);
        memmove (c->st, c->st + 1, (S_CACHE - 1) * sizeof c->st[0]);
        memmove (c->sql, c->sql + 1, (S_CACHE - 1) * sizeof c->sql[0]);
        c->n--;
    }
    if (!(c->sql[c->n] = strdup (sql))) {
        sqlite3_finalize (st);
        return NULL;
    }
    c->st[c->n++] = st;
    return st;
}

/* The text of frame f as a C string in buf (cut to size). */
static const char *
s_frame_text (zframe_t *f, char *buf, size_t size)
{
    size_t n = f ? zframe_size (f) : 0;
    if (n >= size)
        n = size - 1;
    if (n)
        memcpy (buf, zframe_data (f), n);
    buf[n] = '\0';
    return buf;
}

/* Run the statement of request msg (frames: kind, sql, fmt, parameters) on
 * c. Returns SQLITE_DONE; SQLITE_BUSY or SQLITE_LOCKED when another
 * connection holds the lock (run it again); another code with err set. */
static int
s_conn_run (s_conn_t *c, zmsg_t *msg, double locked_s, char *err, size_t err_size)
{
    zmsg_first (msg);
    zframe_t *sqlf = zmsg_next (msg), *fmtf = zmsg_next (msg);
    char *sql = sqlf ? zframe_strdup (sqlf) : NULL, *fmt = fmtf ? zframe_strdup (fmtf) : NULL;
    int rc = SQLITE_NOMEM;
    sqlite3_stmt *st = NULL;
    if (!sql || !fmt) {
        snprintf (err, err_size, "out of memory");
        goto done;
    }
    if (!(st = s_conn_prepare (c, sql))) {
        rc = sqlite3_errcode (c->db);
        snprintf (err, err_size, "%s (%.80s)", sqlite3_errmsg (c->db), sql);
        goto done;
    }
    rc = SQLITE_OK;
    for (int i = 0; fmt[i] && rc == SQLITE_OK; i++) {
        if (fmt[i] == 'L' || fmt[i] == 'N') {
            rc = sqlite3_bind_double (st, i + 1, fmt[i] == 'L' ? locked_s : sb_now ());
            continue;
        }
        zframe_t *f = zmsg_next (msg);
        int64_t v = 0;
        double d = 0;
        if (!f || ((fmt[i] == 'i' || fmt[i] == 'd') && zframe_size (f) != 8)) {
            rc = SQLITE_MISUSE;
            break;
        }
        switch (fmt[i]) {
        case 't':
            rc = sqlite3_bind_text (st, i + 1, zframe_size (f) ? (const char *) zframe_data (f) : "",
                                    (int) zframe_size (f), SQLITE_TRANSIENT);
            break;
        case 'i':
            memcpy (&v, zframe_data (f), sizeof v);
            rc = sqlite3_bind_int64 (st, i + 1, v);
            break;
        case 'd':
            memcpy (&d, zframe_data (f), sizeof d);
            rc = sqlite3_bind_double (st, i + 1, d);
            break;
        default:
            rc = sqlite3_bind_null (st, i + 1);
        }
    }
    if (rc != SQLITE_OK) {
        snprintf (err, err_size, "cannot bind the parameters: %s (%.80s)", rc == SQLITE_MISUSE ? "malformed request"
                  : sqlite3_errmsg (c->db), sql);
        goto done;
    }
    while ((rc = sqlite3_step (st)) == SQLITE_ROW)
        ;
    if (rc != SQLITE_DONE && (rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
        snprintf (err, err_size, "%s (%.80s)", sqlite3_errmsg (c->db), sql);
done:
    if (st) {
        sqlite3_reset (st);             /* its code repeats the step's */
        sqlite3_clear_bindings (st);    /* always SQLITE_OK */
    }
    free (sql);
    free (fmt);
    return rc == SQLITE_DONE ? rc : rc & 0xff;
}

/* PRAGMA user_version of db, or -1. */
static int
s_user_version (sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int version = -1;
    if (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
        version = sqlite3_column_int (st, 0);
    sqlite3_finalize (st);
    return version;
}

/* Bring db to SB_RESULTDB_VERSION: a new file gets the schema, an older one
 * its upgrades, all in one write transaction with the version bump, so that
 * two processes opening the same old file, or a crash halfway, never leave
 * it half upgraded. The version is read again once the lock is held: the
 * other process may have upgraded it meanwhile. Returns 0, or -1 with err. */
static int
s_upgrade (sqlite3 *db, const char *path, char *err, size_t err_size)
{
    int version = s_user_version (db);
    if (version < 0) {
        snprintf (err, err_size, "%s: not a SQLite database: %s", path, sqlite3_errmsg (db));
        return -1;
    }
    if (version == SB_RESULTDB_VERSION)
        return 0;
    char *msg = NULL;
    if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK) {
        snprintf (err, err_size, "%s: cannot lock the result database to set it up: %s", path, msg ? msg : "?");
        sqlite3_free (msg);
        return -1;
    }
    version = s_user_version (db);
    const char *what = "?";
    int rc = 0;
    /* each upgrade step runs when it applies; the first that fails ends the chain */
    if (version < 0) {
        snprintf (err, err_size, "%s: not a SQLite database: %s", path, sqlite3_errmsg (db));
        rc = -1;
    }
    else if (version > SB_RESULTDB_VERSION) {
        snprintf (err, err_size, "%s: result database schema version %d is newer than this shardbench (%d)",
                  path, version, SB_RESULTDB_VERSION);
        rc = -1;
    }
    /* version 1 -> 2: the details of an endpoint's failure on errors (the
     * endpoints table is new and comes from the schema itself); the codes
     * under the names of version 15 at once */
    else if (version == 1
             && sqlite3_exec (db, "ALTER TABLE errors ADD COLUMN endpoint TEXT;"
                              " ALTER TABLE errors ADD COLUMN http_status INTEGER;"
                              " ALTER TABLE errors ADD COLUMN service_code TEXT;"
                              " ALTER TABLE errors ADD COLUMN library_code INTEGER;"
                              " ALTER TABLE errors ADD COLUMN attempt INTEGER;", NULL, NULL, &msg) != SQLITE_OK)
        what = "cannot upgrade the errors table from version 1", rc = -1;
    /* versions 2 -> 3 (objects keyed by oid = catalog_id * 2^40 + idx) and
     * 4 -> 5 (compact keys: key may be NULL, catalogs.naming). A catalog is
     * a cache of a listing: the old ones are dropped and the next run lists
     * again. */
    else if (version >= 1 && version <= 4
             && sqlite3_exec (db, "DROP TABLE IF EXISTS objects; DELETE FROM catalogs;"
                              " ALTER TABLE catalogs ADD COLUMN naming TEXT;", NULL, NULL, &msg) != SQLITE_OK)
        what = "cannot upgrade the catalog tables", rc = -1;
    /* version 3 -> 4: barrier percentiles per epoch */
    else if (version >= 1 && version <= 3
             && sqlite3_exec (db, "ALTER TABLE epochs ADD COLUMN barrier_p50_ms REAL;"
                              " ALTER TABLE epochs ADD COLUMN barrier_p99_ms REAL;", NULL, NULL, &msg) != SQLITE_OK)
        what = "cannot upgrade the epochs table to version 4", rc = -1;
    /* version 5 -> 6: the checkpoints and checkpoint_ranks tables (shardbench
     * checkpoint) are new and come from the schema itself; no table changes.
     * version 6 -> 7: read latency percentiles per epoch (the read_latency
     * table is new and comes from the schema itself); older runs keep NULL */
    else if (version >= 1 && version <= 6
             && sqlite3_exec (db, "ALTER TABLE epochs ADD COLUMN read_p50_ms REAL;"
                              " ALTER TABLE epochs ADD COLUMN read_p99_ms REAL;", NULL, NULL, &msg) != SQLITE_OK)
        what = "cannot upgrade the epochs table to version 7", rc = -1;
    /* version 7 -> 8: how long rows waited for another process's lock
     * (runs.db_locked_s) and each worker's clock offset (run_workers);
     * older runs keep NULL */
    else if (version >= 1 && version <= 7
             && sqlite3_exec (db, "ALTER TABLE runs ADD COLUMN db_locked_s REAL;"
                              " ALTER TABLE run_workers ADD COLUMN clock_offset_s REAL;"
                              " ALTER TABLE run_workers ADD COLUMN clock_rtt_ms REAL;", NULL, NULL, &msg) != SQLITE_OK)
        what = "cannot upgrade the runs and run_workers tables to version 8", rc = -1;
    /* version 8 -> 9: DLIO's metrics beside shardbench's own (runs, epochs,
     * rank_epochs), page-cache residency sampled before reads, the sampler
     * and its loader threads, files no rank read and the step barrier's own
     * cost; older runs keep NULL figures and 0 bytes checked */
    else if (version >= 1 && version <= 8
             && sqlite3_exec (db, "ALTER TABLE runs ADD COLUMN train_au_mean_percentage REAL;"
                              " ALTER TABLE runs ADD COLUMN train_au_stdev_percentage REAL;"
                              " ALTER TABLE runs ADD COLUMN train_au_meet_expectation TEXT;"
                              " ALTER TABLE runs ADD COLUMN train_throughput_mean_samples_per_second REAL;"
                              " ALTER TABLE runs ADD COLUMN train_throughput_stdev_samples_per_second REAL;"
                              " ALTER TABLE runs ADD COLUMN train_io_mean_MB_per_second REAL;"
                              " ALTER TABLE runs ADD COLUMN train_io_stdev_MB_per_second REAL;"
                              " ALTER TABLE runs ADD COLUMN record_size_bytes INTEGER;"
                              " ALTER TABLE epochs ADD COLUMN train_au_percentage REAL;"
                              " ALTER TABLE epochs ADD COLUMN train_throughput_samples_per_second REAL;"
                              " ALTER TABLE epochs ADD COLUMN train_io_MB_per_second REAL;"
                              " ALTER TABLE rank_epochs ADD COLUMN metric_steps INTEGER;"
                              " ALTER TABLE rank_epochs ADD COLUMN metric_compute_s REAL;"
                              " ALTER TABLE rank_epochs ADD COLUMN metric_excluded_s REAL;"
                              " ALTER TABLE rank_epochs ADD COLUMN metric_time_s REAL;"
                              " ALTER TABLE rank_epochs ADD COLUMN dlio_au_percentage REAL;"
                              " ALTER TABLE rank_epochs ADD COLUMN dlio_throughput_samples_per_second REAL;"
                              " ALTER TABLE rank_epochs ADD COLUMN resident_bytes INTEGER NOT NULL DEFAULT 0;"
                              " ALTER TABLE rank_epochs ADD COLUMN checked_bytes INTEGER NOT NULL DEFAULT 0;"
                              " ALTER TABLE epochs ADD COLUMN resident_bytes INTEGER NOT NULL DEFAULT 0;"
                              " ALTER TABLE epochs ADD COLUMN checked_bytes INTEGER NOT NULL DEFAULT 0;"
                              " ALTER TABLE epochs ADD COLUMN resident_fraction REAL;"
                              " ALTER TABLE epochs ADD COLUMN from_memory INTEGER;"
                              " ALTER TABLE runs ADD COLUMN sampler TEXT;"
                              " ALTER TABLE runs ADD COLUMN loader_threads INTEGER;"
                              " ALTER TABLE epochs ADD COLUMN unused_files INTEGER;"
                              " ALTER TABLE epochs ADD COLUMN barrier_own_p50_ms REAL;"
                              " ALTER TABLE epochs ADD COLUMN barrier_own_p99_ms REAL;",
                              NULL, NULL, &msg) != SQLITE_OK)
        what = "cannot upgrade the runs, epochs and rank_epochs tables to version 9", rc = -1;
    /* version 9 -> 10: the phases a command ran (runs.workflow, DLIO's
     * workflow section) and DLIO's evaluation figures (the evals and
     * eval_ranks tables are new and come from the schema itself); older runs
     * keep NULL */
    else if (version >= 1 && version <= 9
             && sqlite3_exec (db, "ALTER TABLE runs ADD COLUMN workflow TEXT;"
                              " ALTER TABLE runs ADD COLUMN eval_au_mean_percentage REAL;"
                              " ALTER TABLE runs ADD COLUMN eval_au_stdev_percentage REAL;"
                              " ALTER TABLE runs ADD COLUMN eval_au_meet_expectation TEXT;"
                              " ALTER TABLE runs ADD COLUMN eval_throughput_mean_samples_per_second REAL;"
                              " ALTER TABLE runs ADD COLUMN eval_throughput_stdev_samples_per_second REAL;"
                              " ALTER TABLE runs ADD COLUMN eval_io_mean_MB_per_second REAL;"
                              " ALTER TABLE runs ADD COLUMN eval_io_stdev_MB_per_second REAL;", NULL, NULL, &msg)
                != SQLITE_OK)
        what = "cannot upgrade the runs table to version 10", rc = -1;
    /* version 10 -> 11: runs as a series (the
     * series table is new and comes from the schema itself) and a run's
     * label; older runs keep NULL */
    else if (version >= 1 && version <= 10
             && sqlite3_exec (db, "ALTER TABLE runs ADD COLUMN label TEXT;"
                              " ALTER TABLE runs ADD COLUMN series_id INTEGER;"
                              " ALTER TABLE runs ADD COLUMN series_index INTEGER;"
                              " ALTER TABLE runs ADD COLUMN warmup INTEGER;", NULL, NULL, &msg) != SQLITE_OK)
        what = "cannot upgrade the runs table to version 11", rc = -1;
    /* version 11 -> 12: read latency per host
     * (the host_read_latency table is new and comes from the schema
     * itself); older runs have none */
    /* version 12 -> 13: the run_inputs,
     * run_overrides and run_host_info tables are new and come from the
     * schema itself; older runs have no rows there */
    /* version 13 -> 14: DLIO's checkpoint figures beside shardbench's
     * (checkpoints since version 6): older runs get rank 0's own time
     * (DLIO's without checkpoint.rank_sync, its default) and the bytes of
     * all ranks (DLIO's size of the transformers those versions wrote) */
    else if (version >= 6 && version <= 13
             && sqlite3_exec (db, "ALTER TABLE checkpoints ADD COLUMN dlio_bytes INTEGER;"
                              " ALTER TABLE checkpoints ADD COLUMN dlio_duration_s REAL;"
                              " ALTER TABLE checkpoints ADD COLUMN dlio_gib_per_s REAL;"
                              " ALTER TABLE checkpoints ADD COLUMN rank_sync INTEGER;"
                              " UPDATE checkpoints SET rank_sync = 0, dlio_bytes = bytes, dlio_duration_s = (SELECT r.duration_s"
                              " FROM checkpoint_ranks r WHERE r.run_id = checkpoints.run_id AND r.seq = checkpoints.seq"
                              " AND r.rank = 0);"
                              " UPDATE checkpoints SET dlio_gib_per_s = CASE WHEN dlio_duration_s > 0"
                              " THEN dlio_bytes / 1073741824.0 / dlio_duration_s END;", NULL, NULL, &msg) != SQLITE_OK)
        what = "cannot upgrade the checkpoints table to version 14", rc = -1;
    /* version 14 -> 15: engine-neutral names. The errors table's codes were
     * named after the one object store and HTTP library of the time; they
     * are any engine's (lib/storage/engine.h sb_storage_error_t code and
     * lib_code). The read latency tables' histogram columns follow
     * lib/metrics/histogram.h's bins. RENAME COLUMN keeps every value and
     * the primary keys (SQLite 3.25). Version 1 got the new error names at
     * once (above); host_read_latency exists from version 12. */
    else if (version >= 2 && version <= 14
             && sqlite3_exec (db, "ALTER TABLE errors RENAME COLUMN s3_code TO service_code;"
                              " ALTER TABLE errors RENAME COLUMN curl_code TO library_code;", NULL, NULL, &msg)
                != SQLITE_OK)
        what = "cannot upgrade the errors table to version 15", rc = -1;
    else if (version >= 7 && version <= 14
             && sqlite3_exec (db, "ALTER TABLE read_latency RENAME COLUMN bucket_low_us TO bin_low_us;"
                              " ALTER TABLE read_latency RENAME COLUMN bucket_high_us TO bin_high_us;", NULL, NULL, &msg)
                != SQLITE_OK)
        what = "cannot upgrade the read_latency table to version 15", rc = -1;
    else if (version >= 12 && version <= 14
             && sqlite3_exec (db, "ALTER TABLE host_read_latency RENAME COLUMN bucket_low_us TO bin_low_us;"
                              " ALTER TABLE host_read_latency RENAME COLUMN bucket_high_us TO bin_high_us;", NULL,
                              NULL, &msg) != SQLITE_OK)
        what = "cannot upgrade the host_read_latency table to version 15", rc = -1;
    /* version 15 -> 16: every step's compute of a rank (its first step's
     * was in no column: the split of its time put it under "other"), and
     * how long the others waited for it at step barriers (the blame) */
    else if (version >= 1 && version <= 15
             && sqlite3_exec (db, "ALTER TABLE rank_epochs ADD COLUMN compute_all_s REAL;"
                              " ALTER TABLE rank_epochs ADD COLUMN held_s REAL;", NULL, NULL, &msg)
                != SQLITE_OK)
        what = "cannot upgrade the rank_epochs table to version 16", rc = -1;
    /* version 16 -> 17: the KV-cache tables (kv_runs, kv_trials, kv_ranks,
     * kv_latency) are new and come from the schema itself */
    else if (sqlite3_exec (db, sb_results_sql, NULL, NULL, &msg) != SQLITE_OK)
        what = "cannot apply schemas/results.sql", rc = -1;
    else {
        char pragma[64];
        snprintf (pragma, sizeof pragma, "PRAGMA user_version=%d", SB_RESULTDB_VERSION);
        if (sqlite3_exec (db, pragma, NULL, NULL, &msg) != SQLITE_OK || sqlite3_exec (db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK)
            what = "cannot set the schema version", rc = -1;
    }
    if (rc != 0) {
        if (msg)    /* else err is set already */
            snprintf (err, err_size, "%s: %s: %s", path, what, msg);
        sqlite3_free (msg);
        sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

/* ---------------------------------------------------------------- writer */

/* Send a reply of kind with a text or an int64 (text NULL) to the owner; a
 * reply that cannot go is of no use to anyone: no retry. */
static void
s_writer_reply (s_writer_t *w, const char *kind, const char *text, int64_t value)
{
    zmsg_t *m = zmsg_new ();
    if (!m)
        return;
    if (zmsg_addstr (m, kind) != 0 || (text ? zmsg_addstr (m, text) : zmsg_addmem (m, &value, sizeof value)) != 0
        || zmsg_send (&m, w->pipe) != 0)
        zmsg_destroy (&m);
}

static void
s_writer_fail (s_writer_t *w, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_writer_fail (s_writer_t *w, const char *fmt, ...)
{
    char text[1536];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    s_writer_reply (w, S_REP_FAIL, text, 0);
}

/* Take the write lock (BEGIN IMMEDIATE), waiting as long as another process
 * holds it, up to the limit. begins: the batch starts a run, whose owner
 * waits for its id before the run goes on (before any timing: its
 * started_at is bound after the wait), so the notes say the run is held
 * back, not that rows are late. Returns 0, or -1 (gave up, failed). */
static int
s_writer_lock (s_writer_t *w, size_t rows, int begins)
{
    uint64_t t0 = sb_mono_ns ();
    double next_note = 1.0;
    int waited = 0;
    for (;;) {
        char *msg = NULL;
        int rc = sqlite3_exec (w->conn.db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
        double s = (double) (sb_mono_ns () - t0) / 1e9;
        if (rc == SQLITE_OK) {
            if (waited)
                w->run_locked_s += s;
            if (next_note > 1.0) {      /* it said LOCKED: say it is over */
                char text[1400];
                if (begins)
                    snprintf (text, sizeof text, "result database %s is writable again after %.1f s: the run began"
                              " %.1f s late, before its timing started (its start time is when the lock was got)",
                              w->path, s, s);
                else
                    snprintf (text, sizeof text, "result database %s is writable again after %.1f s: the rows"
                              " waiting are written late (timing was not affected)", w->path, s);
                s_writer_reply (w, S_REP_NOTE, text, 0);
            }
            return 0;
        }
        if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) {
            s_writer_fail (w, "result database %s: cannot start a transaction: %s", w->path, msg ? msg : "?");
            sqlite3_free (msg);
            return -1;
        }
        sqlite3_free (msg);
        waited = 1;
        if (atomic_load (&w->abandon)) {
            w->gave_up = 1;
            s_writer_fail (w, "result database %s was still locked by another process when the run was interrupted"
                           " (%.0f s)", w->path, s);
            return -1;
        }
        if (w->lock_limit_s > 0 && s > w->lock_limit_s) {
            w->gave_up = 1;
            s_writer_fail (w, "result database %s was locked by another process for more than %.0f s"
                           " (--db-lock-timeout): results can no longer be written", w->path, w->lock_limit_s);
            return -1;
        }
        if (s >= next_note) {
            char text[1400];
            if (begins)
                snprintf (text, sizeof text, "result database %s is locked by another process (%.0f s so far): the"
                          " run cannot begin until it is released (its timing has not started)", w->path, s);
            else
                snprintf (text, sizeof text, "result database %s is locked by another process (%.0f s so far): %zu"
                          " or more rows wait in memory and will be written when it is released", w->path, s, rows);
            s_writer_reply (w, S_REP_LOCKED, text, 0);
            next_note = next_note < 10 ? 10 : next_note + 10;
        }
        /* the connection's busy timeout (50 ms) paces the retries */
    }
}

/* Write one batch of requests in one transaction; replies after the commit. */
static void
s_writer_batch (s_writer_t *w, zmsg_t **batch, size_t n)
{
    size_t rows = 0;
    int begins = 0;
    for (size_t i = 0; i < n; i++) {
        char kind[8];
        s_frame_text (zmsg_first (batch[i]), kind, sizeof kind);
        rows += !strcmp (kind, S_REQ_EXEC) || !strcmp (kind, S_REQ_BEGIN);
        begins |= !strcmp (kind, S_REQ_BEGIN);
    }
    int open = rows && !w->gave_up && s_writer_lock (w, rows, begins) == 0;
    size_t failed = 0;      /* rows of this batch already counted lost */
    int64_t ids[n];
    for (size_t i = 0; i < n; i++) {
        char kind[8], err[1024];
        ids[i] = -1;
        s_frame_text (zmsg_first (batch[i]), kind, sizeof kind);
        if (strcmp (kind, S_REQ_EXEC) != 0 && strcmp (kind, S_REQ_BEGIN) != 0)
            continue;
        if (!open) {
            w->lost++;
            continue;
        }
        int rc;
        /* inside BEGIN IMMEDIATE a statement is not kept waiting; should
         * one be, it is run again like the BEGIN */
        while (((rc = s_conn_run (&w->conn, batch[i], w->run_locked_s, err, sizeof err)) == SQLITE_BUSY
                || rc == SQLITE_LOCKED) && !atomic_load (&w->abandon))
            ;
        if (rc != SQLITE_DONE) {
            w->lost++;
            failed++;
            s_writer_fail (w, "result database %s: a row was not written: %s", w->path,
                           rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? "locked when the run was interrupted" : err);
        }
        else if (!strcmp (kind, S_REQ_BEGIN)) {
            ids[i] = sqlite3_last_insert_rowid (w->conn.db);
            w->run_locked_s = 0;
        }
    }
    if (open) {
        char *msg = NULL;
        int rc;
        while (((rc = sqlite3_exec (w->conn.db, "COMMIT", NULL, NULL, &msg)) & 0xff) == SQLITE_BUSY
               && !atomic_load (&w->abandon)) {
            sqlite3_free (msg);
            msg = NULL;
        }
        if (rc != SQLITE_OK) {
            w->lost += rows - failed;   /* the ones that ran are lost with the transaction */
            s_writer_fail (w, "result database %s: cannot commit %zu rows: %s", w->path, rows, msg ? msg : "?");
            sqlite3_exec (w->conn.db, "ROLLBACK", NULL, NULL, NULL);    /* nothing left to do if it fails */
            for (size_t i = 0; i < n; i++)
                ids[i] = -1;
        }
        sqlite3_free (msg);
    }
    for (size_t i = 0; i < n; i++) {
        char kind[8];
        s_frame_text (zmsg_first (batch[i]), kind, sizeof kind);
        if (!strcmp (kind, S_REQ_BEGIN))
            s_writer_reply (w, S_REP_ID, NULL, ids[i]);
        else if (!strcmp (kind, S_REQ_SYNC))
            s_writer_reply (w, S_REP_SYNC, NULL, (int64_t) w->lost);
    }
}

static void *
s_writer_main (void *arg)
{
    s_writer_t *w = arg;
    enum { MAX_BATCH = 4096 };
    zmsg_t *batch[MAX_BATCH];   /* 32 KiB of the thread's stack: no allocation that could fail */
    int term = 0;
    while (!term) {
        zsock_set_rcvtimeo (w->pipe, -1);
        zmsg_t *first = zmsg_recv (w->pipe);
        if (!first) {
            if (zmq_errno () == EINTR)
                continue;   /* signals go to the owner */
            break;          /* the pipe is gone (ETERM): nothing more can come */
        }
        size_t n = 0;
        batch[n++] = first;
        zsock_set_rcvtimeo (w->pipe, 0);
        while (n < MAX_BATCH) {
            char kind[8];
            s_frame_text (zmsg_first (batch[n - 1]), kind, sizeof kind);
            if (!strcmp (kind, S_REQ_TERM)) {
                term = 1;
                break;
            }
            zmsg_t *m = zmsg_recv (w->pipe);
            if (!m)
                break;
            batch[n++] = m;
        }
        s_writer_batch (w, batch, n);
        for (size_t i = 0; i < n; i++)
            zmsg_destroy (&batch[i]);
    }
    return NULL;
}

/* The request kind for sql with parameters fmt (t n i d L) from ap. */
static zmsg_t *
s_request (const char *kind, const char *sql, const char *fmt, va_list ap)
{
    zmsg_t *m = zmsg_new ();
    size_t n = strlen (fmt);
    char *eff = malloc (n + 1);
    int rc = m && eff ? 0 : -1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        eff[i] = fmt[i];
        switch (fmt[i]) {
        case 't': {
            const char *s = va_arg (ap, const char *);
            if (!s)
                eff[i] = 'n';
            rc = zmsg_addmem (m, s ? s : "", s ? strlen (s) : 0);
            break;
        }
        case 'i': {
            int64_t v = va_arg (ap, int64_t);
            rc = zmsg_addmem (m, &v, sizeof v);
            break;
        }
        case 'd': {
            double v = va_arg (ap, double);
            rc = zmsg_addmem (m, &v, sizeof v);
            break;
        }
        case 'L':
        case 'N': break;
        default:
            eff[i] = 'n';
            rc = zmsg_addmem (m, "", 0);
        }
    }
    if (eff)
        eff[n] = '\0';
    if (rc != 0 || zmsg_pushstr (m, eff) != 0 || zmsg_pushstr (m, sql) != 0 || zmsg_pushstr (m, kind) != 0)
        zmsg_destroy (&m);
    free (eff);
    return m;
}

static void
s_set_failed (sb_resultdb_t *self, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_set_failed (sb_resultdb_t *self, const char *fmt, ...)
{
    if (!self->failed) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (self->error, sizeof self->error, fmt, ap);
        va_end (ap);
    }
    self->failed = 1;
}

/* Handle one message from the writer; kind in kind (size 8), an int64
 * payload in *value. */
static void
s_on_reply (sb_resultdb_t *self, zmsg_t *m, char *kind, int64_t *value)
{
    char text[1536];
    s_frame_text (zmsg_first (m), kind, 8);
    zframe_t *f = zmsg_next (m);
    if (!strcmp (kind, S_REP_ID) || !strcmp (kind, S_REP_SYNC)) {
        if (f && zframe_size (f) == sizeof *value)
            memcpy (value, zframe_data (f), sizeof *value);
    }
    else if (!strcmp (kind, S_REP_LOCKED)) {
        self->writer_locked = 1;
        sb_warn ("%s", s_frame_text (f, text, sizeof text));
    }
    else if (!strcmp (kind, S_REP_NOTE)) {
        self->writer_locked = 0;
        sb_warn ("%s", s_frame_text (f, text, sizeof text));
    }
    else if (!strcmp (kind, S_REP_FAIL)) {
        s_frame_text (f, text, sizeof text);
        if (!self->failed)
            sb_error ("%s", text);
        s_set_failed (self, "%s", text);
    }
}

int
sb_resultdb_poll (sb_resultdb_t *self)
{
    if (!self->writer)
        return self->failed ? -1 : 0;
    zsock_set_rcvtimeo (self->pipe, 0);
    zmsg_t *m;
    while ((m = zmsg_recv (self->pipe))) {
        char kind[8];
        int64_t ignored;
        s_on_reply (self, m, kind, &ignored);
        zmsg_destroy (&m);
    }
    return self->failed ? -1 : 0;
}

/* Wait for the writer's reply of kind want; its int64 in *value. The
 * keep-alive runs while it waits. */
static void
s_wait_reply (sb_resultdb_t *self, const char *want, int64_t *value)
{
    for (;;) {
        zsock_set_rcvtimeo (self->pipe, 100);
        zmsg_t *m = zmsg_recv (self->pipe);
        if (!m) {
            /* interrupted while another process holds the lock: stop
             * waiting for it (the rows are lost, and said so) */
            if (zsys_interrupted && self->writer_locked)
                atomic_store (&self->writer->abandon, 1);
            if (self->keep_alive)
                self->keep_alive (self->keep_alive_arg);
            continue;
        }
        char kind[8];
        s_on_reply (self, m, kind, value);
        zmsg_destroy (&m);
        if (!strcmp (kind, want))
            return;
    }
}

/* Queue a request (writer), or run it here (no writer). *rowid: for
 * S_REQ_BEGIN. Returns 0, or -1 with self->error. */
static int
s_submit (sb_resultdb_t *self, const char *kind, int64_t *rowid, const char *sql, const char *fmt, va_list ap)
{
    zmsg_t *m = s_request (kind, sql, fmt, ap);
    if (!m) {
        s_set_failed (self, "result database %s: out of memory queueing a row", self->path);
        sb_error ("%s", self->error);
        return -1;
    }
    if (self->writer) {
        int is_begin = !strcmp (kind, S_REQ_BEGIN);
        if (zmsg_send (&m, self->pipe) != 0) {
            zmsg_destroy (&m);
            s_set_failed (self, "result database %s: cannot queue a row for the writer: %s", self->path,
                          zmq_strerror (zmq_errno ()));
            sb_error ("%s", self->error);
            return -1;
        }
        if (is_begin) {
            *rowid = -1;
            s_wait_reply (self, S_REP_ID, rowid);
            if (*rowid < 0) {
                if (!self->failed)
                    s_set_failed (self, "result database %s: the run could not be written", self->path);
                return -1;
            }
        }
        return 0;
    }
    char err[1024];
    int rc = s_conn_run (&self->conn, m, 0, err, sizeof err);
    zmsg_destroy (&m);
    if (rc != SQLITE_DONE) {
        /* no writer (an in-memory database, or before the run): the
         * caller fails on it; a lock gets the connection's busy timeout */
        snprintf (self->error, sizeof self->error, "result database %s: %s", self->path,
                  rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? "locked by another process" : err);
        sb_error ("%s", self->error);
        return -1;
    }
    if (rowid)
        *rowid = sqlite3_last_insert_rowid (self->conn.db);
    return 0;
}

int
sb_resultdb_exec (sb_resultdb_t *self, const char *sql, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    int rc = s_submit (self, S_REQ_EXEC, NULL, sql, fmt, ap);
    va_end (ap);
    return rc;
}

int
sb_resultdb_sync (sb_resultdb_t *self)
{
    if (!self->writer)
        return self->failed ? -1 : 0;
    zmsg_t *m = zmsg_new ();
    if (!m || zmsg_addstr (m, S_REQ_SYNC) != 0 || zmsg_send (&m, self->pipe) != 0) {
        zmsg_destroy (&m);
        s_set_failed (self, "result database %s: cannot reach the writer", self->path);
        return -1;
    }
    int64_t lost = 0;
    s_wait_reply (self, S_REP_SYNC, &lost);
    if (lost > 0) {
        char first[sizeof self->error];
        snprintf (first, sizeof first, "%s", self->error);
        snprintf (self->error, sizeof self->error, "%lld result rows were not written: %s", (long long) lost, first);
        self->failed = 1;
    }
    return self->failed ? -1 : 0;
}

void
sb_resultdb_set_keep_alive (sb_resultdb_t *self, void (*fn) (void *), void *arg)
{
    self->keep_alive = fn;
    self->keep_alive_arg = arg;
}

int
sb_resultdb_start_writer (sb_resultdb_t *self, double lock_limit_s, char *err, size_t err_size)
{
    if (self->writer)
        return 0;
    const char *file = sqlite3_db_filename (self->conn.db, "main");
    if (!file || !*file)
        return 0;       /* in memory: one connection only, writes stay here */
    s_writer_t *w = calloc (1, sizeof *w);
    char endpoint[64];
    snprintf (endpoint, sizeof endpoint, "inproc://sb-resultdb-%p", (void *) self);
    if (!w) {
        snprintf (err, err_size, "%s: out of memory", self->path);
        return -1;
    }
    snprintf (w->path, sizeof w->path, "%s", self->path);
    w->lock_limit_s = lock_limit_s;
    atomic_init (&w->abandon, 0);
    /* no high-water mark: a locked database holds rows in memory, it never
     * blocks the sender nor drops a row */
    self->pipe = zsock_new (ZMQ_PAIR);
    w->pipe = zsock_new (ZMQ_PAIR);
    if (!self->pipe || !w->pipe) {
        snprintf (err, err_size, "%s: cannot create the writer's pipe: %s", self->path, zmq_strerror (zmq_errno ()));
        goto fail;
    }
    zsock_set_sndhwm (self->pipe, 0);
    zsock_set_rcvhwm (self->pipe, 0);
    zsock_set_sndhwm (w->pipe, 0);
    zsock_set_rcvhwm (w->pipe, 0);
    zsock_set_linger (self->pipe, 0);
    zsock_set_linger (w->pipe, 0);
    if (zsock_bind (self->pipe, "%s", endpoint) != 0 || zsock_connect (w->pipe, "%s", endpoint) != 0) {
        snprintf (err, err_size, "%s: cannot connect the writer's pipe: %s", self->path, zmq_strerror (zmq_errno ()));
        goto fail;
    }
    if (sqlite3_open_v2 (file, &w->conn.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK
        || sqlite3_busy_timeout (w->conn.db, 50) != SQLITE_OK
        || sqlite3_exec (w->conn.db, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf (err, err_size, "%s: cannot open the result database for writing: %s", self->path,
                  w->conn.db ? sqlite3_errmsg (w->conn.db) : "out of memory");
        goto fail;
    }
    /* signals belong to the main thread (the event loop checks them) */
    sigset_t all, old;
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    int rc = pthread_create (&self->thread, NULL, s_writer_main, w);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf (err, err_size, "%s: cannot start the writer thread: %s", self->path, strerror (rc));
        goto fail;
    }
    self->writer = w;
    return 0;
fail:
    s_conn_fini (&w->conn);
    zsock_destroy (&w->pipe);
    zsock_destroy (&self->pipe);
    free (w);
    return -1;
}

/* End the writer once it has written everything queued (it gives up a lock
 * after its limit, so this ends). */
static void
s_stop_writer (sb_resultdb_t *self)
{
    if (!self->writer)
        return;
    int failed = self->failed;
    if (sb_resultdb_sync (self) != 0 && !failed)
        sb_error ("%s", self->error);
    zmsg_t *m = zmsg_new ();
    int sent = m && zmsg_addstr (m, S_REQ_TERM) == 0 && zmsg_send (&m, self->pipe) == 0;
    zmsg_destroy (&m);
    if (sent) {
        pthread_join (self->thread, NULL);
        s_conn_fini (&self->writer->conn);
        zsock_destroy (&self->writer->pipe);
        free (self->writer);
    }
    else {
        /* cannot happen short of memory: the thread keeps its state, and
         * stops waiting for a lock */
        atomic_store (&self->writer->abandon, 1);
        sb_error ("result database %s: cannot stop the writer", self->path);
    }
    zsock_destroy (&self->pipe);
    self->writer = NULL;
}

/* ---------------------------------------------------------------- open */

/* What a command checks of the file before it works with it. A full
 * PRAGMA quick_check reads every page (20 s on a 4 GB database), and a page
 * no command reads cannot mislead one: every query still meets SQLite's own
 * corruption error on the pages it reads, named with the file (sb_resultdb_
 * corrupt_text). So every command checks what a damaged copy or a cut-off
 * transfer spoils, cheaply: the header (s_header_check) and the schema
 * (PRAGMA schema_version, which parses sqlite_master). The full check runs
 * only before writing into a database that a coordinator left uncleanly (a
 * run of this host left 'running' by a process that is gone): a crash is
 * where a write that the storage lost, or a copy taken mid-write, shows, and
 * rows written on top of a damaged b-tree page could spread the damage to
 * pages that were sound. */

/* The 100-byte SQLite header: the magic, a page size SQLite can have, and,
 * where the file stands alone (no write-ahead log holding pages), no fewer
 * pages than the header counts (a truncated copy). An empty or absent file
 * is a new database. Returns 0, or -1 with err. */
static int
s_header_check (const char *path, char *err, size_t err_size)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;   /* absent: created; unreadable: SQLite's open says why */
    struct stat sb;
    unsigned char h[100];
    ssize_t n = fstat (fd, &sb) == 0 ? pread (fd, h, sizeof h, 0) : -1;
    close (fd);
    if (n == 0 || (n < 0 && sb.st_size == 0))
        return 0;
    if (n != (ssize_t) sizeof h || memcmp (h, "SQLite format 3", 16) != 0) {
        snprintf (err, err_size, "%s: the result database is not a SQLite database, or its header is damaged"
                  " (file is not a database): move it aside or restore a copy; shardbench creates a new one when none"
                  " exists", path);
        return -1;
    }
    uint32_t page = (uint32_t) h[16] << 8 | h[17];
    if (page == 1)
        page = 65536;
    uint32_t pages = (uint32_t) h[28] << 24 | (uint32_t) h[29] << 16 | (uint32_t) h[30] << 8 | h[31];
    int count_valid = memcmp (h + 24, h + 92, 4) == 0;     /* change counter == version-valid-for */
    char wal[4096 + 8];
    struct stat ws;
    int wal_holds = snprintf (wal, sizeof wal, "%s-wal", path) < (int) sizeof wal && stat (wal, &ws) == 0
                    && ws.st_size > 0;
    if (page < 512 || (page & (page - 1)) != 0) {
        snprintf (err, err_size, "%s: the result database is corrupt (its header gives a page size of %u): move it"
                  " aside or restore a copy; shardbench creates a new one when none exists", path, page);
        return -1;
    }
    if (count_valid && !wal_holds && (uint64_t) pages * page > (uint64_t) sb.st_size) {
        snprintf (err, err_size, "%s: the result database is corrupt (the file holds %llu of the %u pages its header"
                  " counts: cut off?): move it aside or restore a copy; shardbench creates a new one when none exists",
                  path, (unsigned long long) ((uint64_t) sb.st_size / page), pages);
        return -1;
    }
    return 0;
}

/* When the last call on db met damage (SQLITE_CORRUPT, SQLITE_NOTADB),
 * the message naming the file and what to do, in err: 1; else 0. */
static int
s_corrupt_code_text (int code, const char *why, const char *path, char *err, size_t err_size)
{
    if (code != SQLITE_CORRUPT && code != SQLITE_NOTADB)
        return 0;
    snprintf (err, err_size, "%s: the result database is %s (%s): move it aside or restore a copy; shardbench"
              " creates a new one when none exists", path,
              code == SQLITE_NOTADB ? "not a SQLite database, or its header is damaged" : "corrupt", why);
    return 1;
}

static int
s_corrupt_text (sqlite3 *db, const char *path, char *err, size_t err_size)
{
    return s_corrupt_code_text (sqlite3_errcode (db), sqlite3_errmsg (db), path, err, err_size);
}

/* The schema readable: PRAGMA schema_version parses sqlite_master. Returns
 * 0, or -1 with err. */
static int
s_schema_check (sqlite3 *db, const char *path, char *err, size_t err_size)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2 (db, "PRAGMA schema_version", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step (st);
    int code = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode (db);
    char why[512];
    snprintf (why, sizeof why, "%s", sqlite3_errmsg (db));
    sqlite3_finalize (st);
    if (code == SQLITE_OK)
        return 0;
    if (!s_corrupt_code_text (code, why, path, err, err_size))
        snprintf (err, err_size, "%s: cannot read the result database: %s", path, why);
    return -1;
}

/* Did a coordinator of this host stop without closing its run (the
 * process recorded as running it is gone)? 1 yes, 0 no or no runs table. */
static int
s_unclean (sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (db, "SELECT coordinator_pid FROM runs WHERE status = 'running' AND coordinator_host = ?",
                            -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_text (st, 1, s_hostname (), -1, SQLITE_TRANSIENT) != SQLITE_OK) {
        sqlite3_finalize (st);
        return 0;   /* a new database: no runs table yet */
    }
    int gone = 0;
    while (!gone && sqlite3_step (st) == SQLITE_ROW) {
        pid_t pid = (pid_t) sqlite3_column_int64 (st, 0);
        gone = !(pid > 0 && pid != getpid () && kill (pid, 0) == 0);
    }
    sqlite3_finalize (st);
    return gone;
}

/* Is every page sound (PRAGMA quick_check)? Only where s_unclean says a
 * writer crashed (see above). Returns 0, or -1 with err. */
static int
s_check (sqlite3 *db, const char *path, char *err, size_t err_size)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2 (db, "PRAGMA quick_check(3)", -1, &st, NULL);
    char found[512] = "";
    size_t n = 0;
    while (rc == SQLITE_OK && (rc = sqlite3_step (st)) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text (st, 0);
        if (n < sizeof found - 1)
            n += (size_t) snprintf (found + n, sizeof found - n, "%s%s", n ? "; " : "", t ? (const char *) t : "?");
        rc = SQLITE_OK;
    }
    int code = rc == SQLITE_DONE || rc == SQLITE_OK ? SQLITE_OK : sqlite3_errcode (db);
    char why[512];
    snprintf (why, sizeof why, "%s", code != SQLITE_OK ? sqlite3_errmsg (db) : found);
    sqlite3_finalize (st);
    if (code == SQLITE_OK && strcmp (found, "ok") == 0)
        return 0;
    if (code == SQLITE_OK || code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
        snprintf (err, err_size, "%s: the result database is %s (%s): move it aside or restore a copy; shardbench"
                  " creates a new one when none exists", path,
                  code == SQLITE_NOTADB ? "not a SQLite database, or its header is damaged" : "corrupt",
                  code == SQLITE_OK ? why : why);
    else
        snprintf (err, err_size, "%s: cannot read the result database: %s", path, why);
    return -1;
}

/* Refuse another program's database: tables, none of them a runs table,
 * and not of this schema version (set up by this module, a runs table has
 * always been there). Checked before anything is changed, the journal mode
 * included. Returns 0, or -1 with err. */
static int
s_refuse_foreign (sqlite3 *db, const char *path, char *err, size_t err_size)
{
    sqlite3_stmt *st = NULL;
    int foreign = 0;
    if (sqlite3_prepare_v2 (db, "SELECT count(*) > 0 AND sum(name = 'runs') = 0 FROM sqlite_master WHERE type = 'table'",
                            -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
        foreign = sqlite3_column_int (st, 0);
    sqlite3_finalize (st);      /* a query that failed: the checks that follow report it */
    if (!foreign)
        return 0;
    snprintf (err, err_size, "%s: not a shardbench result database (schema version %d, with tables but no runs table):"
              " refused, to leave another program's database as it is", path, s_user_version (db));
    return -1;
}

static sb_resultdb_t *
s_new (const char *path, char *err, size_t err_size)
{
    sb_resultdb_t *self = calloc (1, sizeof *self);
    if (!self)
        snprintf (err, err_size, "%s: out of memory", path);
    else
        snprintf (self->path, sizeof self->path, "%s", path);
    return self;
}

sb_resultdb_t *
sb_resultdb_open (const char *path, char *err, size_t err_size)
{
    sb_resultdb_t *self = s_new (path, err, err_size);
    if (!self)
        return NULL;
    if (s_header_check (path, err, err_size) != 0)
        goto fail;
    if (sqlite3_open_v2 (path, &self->conn.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        snprintf (err, err_size, "%s: cannot open result database: %s", path,
                  self->conn.db ? sqlite3_errmsg (self->conn.db) : "out of memory");
        goto fail;
    }
    if (sqlite3_busy_timeout (self->conn.db, 5000) != SQLITE_OK || s_schema_check (self->conn.db, path, err, err_size) != 0
        || s_refuse_foreign (self->conn.db, path, err, err_size) != 0)
        goto fail;
    if (s_unclean (self->conn.db)) {
        sb_info ("%s: a run was left 'running' by a coordinator that is gone: checking every page before writing"
                 " (PRAGMA quick_check)", path);
        if (s_check (self->conn.db, path, err, err_size) != 0)
            goto fail;
    }
    char *msg = NULL;
    if (sqlite3_exec (self->conn.db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;"
                      " PRAGMA cache_size=-131072;",
                      NULL, NULL, &msg) != SQLITE_OK) {
        if (!s_corrupt_text (self->conn.db, path, err, err_size))
            snprintf (err, err_size, "%s: cannot set up the result database: %s", path, msg ? msg : "?");
        sqlite3_free (msg);
        goto fail;
    }
    if (s_upgrade (self->conn.db, path, err, err_size) != 0) {
        (void) s_corrupt_text (self->conn.db, path, err, err_size);    /* the damage over the step that met it */
        goto fail;
    }
    return self;
fail:
    sb_resultdb_destroy (&self);
    return NULL;
}

/* path as a file: URI (RFC 3986 escapes for what SQLite would read as
 * query or fragment). */
static int
s_uri (const char *path, const char *query, char *out, size_t size)
{
    size_t n = (size_t) snprintf (out, size, "file:");
    for (const char *p = path; *p && n + 4 < size; p++) {
        if (*p == '?' || *p == '#' || *p == '%')
            n += (size_t) snprintf (out + n, size - n, "%%%02X", (unsigned char) *p);
        else
            out[n++] = *p;
    }
    if (n + strlen (query) + 1 >= size)
        return -1;
    snprintf (out + n, size - n, "%s", query);
    return 0;
}

sb_resultdb_t *
sb_resultdb_open_readonly (const char *path, int check, char *err, size_t err_size)
{
    sb_resultdb_t *self = s_new (path, err, err_size);
    if (!self)
        return NULL;
    int version = -1;
    if (sqlite3_open_v2 (path, &self->conn.db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK
        && sqlite3_busy_timeout (self->conn.db, 5000) == SQLITE_OK)
        version = s_user_version (self->conn.db);
    int code = self->conn.db ? sqlite3_errcode (self->conn.db) : SQLITE_NOMEM;
    if (version < 0 && (code == SQLITE_CANTOPEN || code == SQLITE_READONLY)) {
        /* a WAL database in a folder we cannot write: its -shm index cannot
         * be made, so read the file as it is (nobody can be writing it
         * where we cannot either, short of its owner) */
        char uri[3 * 1024 + 32];
        s_conn_fini (&self->conn);
        if (s_uri (path, "?immutable=1", uri, sizeof uri) == 0
            && sqlite3_open_v2 (uri, &self->conn.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) == SQLITE_OK)
            version = s_user_version (self->conn.db);
    }
    if (!self->conn.db) {
        snprintf (err, err_size, "%s: cannot open result database: out of memory", path);
        goto fail;
    }
    if (check && (s_header_check (path, err, err_size) != 0 || s_schema_check (self->conn.db, path, err, err_size) != 0))
        goto fail;
    if (version < 0) {
        snprintf (err, err_size, "%s: cannot read the result database: %s", path, sqlite3_errmsg (self->conn.db));
        goto fail;
    }
    if (version == 0) {
        snprintf (err, err_size, "%s: not a shardbench result database (schema version 0)", path);
        goto fail;
    }
    if (version > SB_RESULTDB_VERSION) {
        snprintf (err, err_size, "%s: result database schema version %d is newer than this shardbench (%d)", path,
                  version, SB_RESULTDB_VERSION);
        goto fail;
    }
    if (version < SB_RESULTDB_VERSION) {
        snprintf (err, err_size, "%s: result database schema version %d must be upgraded to version %d before this"
                  " shardbench can read it, which needs write access: run `shardbench report --db %s` once as a user"
                  " who can write the file and its folder", path, version, SB_RESULTDB_VERSION, path);
        goto fail;
    }
    return self;
fail:
    sb_resultdb_destroy (&self);
    return NULL;
}

int
sb_resultdb_batch_begin (sb_resultdb_t *self)
{
    if (self->in_batch)
        return 0;
    char *msg = NULL;
    if (sqlite3_exec (self->conn.db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK) {
        sb_error ("result database: BEGIN: %s", msg ? msg : "?");
        sqlite3_free (msg);
        return -1;
    }
    self->in_batch = 1;
    self->batch_started = sb_now ();
    return 0;
}

int
sb_resultdb_flush (sb_resultdb_t *self)
{
    if (!self->in_batch)
        return 0;
    char *msg = NULL;
    self->in_batch = 0;
    if (sqlite3_exec (self->conn.db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
        sb_error ("result database: COMMIT: %s", msg ? msg : "?");
        sqlite3_free (msg);
        return -1;
    }
    return 0;
}

int
sb_resultdb_flush_if_due (sb_resultdb_t *self)
{
    if (self->in_batch && sb_now () - self->batch_started >= 1.0)
        return sb_resultdb_flush (self);
    return 0;
}

void
sb_resultdb_destroy (sb_resultdb_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_resultdb_t *self = *self_p;
    sb_resultdb_flush (self);
    s_stop_writer (self);
    s_conn_fini (&self->conn);
    free (self);
    *self_p = NULL;
}

/* ---------------------------------------------------------------- rows */

static int
s_submitf (sb_resultdb_t *self, const char *kind, int64_t *rowid, const char *sql, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    int rc = s_submit (self, kind, rowid, sql, fmt, ap);
    va_end (ap);
    return rc;
}

/* The rows of what run id was given (sb_run_inputs_t); none without inputs. */
static int
s_run_inputs (sb_resultdb_t *self, int64_t id, const sb_run_inputs_t *in)
{
    if (!in)
        return 0;
    int rc = sb_resultdb_exec (self, "INSERT INTO run_inputs (run_id, version, command_line, full_config, df)"
                               " VALUES (?,?,?,?,?)", "itttt", id, in->version ? in->version : "",
                               in->command_line ? in->command_line : "", in->full_config ? in->full_config : "",
                               in->df);
    for (size_t i = 0; rc == 0 && i < in->noverrides; i++)
        rc = sb_resultdb_exec (self, "INSERT INTO run_overrides (run_id, seq, override) VALUES (?,?,?)", "iit", id,
                               (int64_t) i + 1, in->overrides[i]);
    if (rc == 0 && in->host && in->host_cpuinfo && in->host_meminfo)
        rc = sb_resultdb_exec (self, "INSERT OR REPLACE INTO run_host_info (run_id, host, processor, cpuinfo, meminfo)"
                               " VALUES (?,?,?,?,?)", "itttt", id, in->host,
                               in->host_processor ? in->host_processor : "", in->host_cpuinfo, in->host_meminfo);
    return rc;
}

int64_t
sb_resultdb_run_begin (sb_resultdb_t *self, const sb_run_info_t *info)
{
    int64_t id = -1;
    if (s_submitf (self, S_REQ_BEGIN, &id,
                   "INSERT INTO runs (kind, workload, config, status, started_at, accelerators, hosts, workers, seed,"
                   " au_threshold, coordinator_host, coordinator_pid) VALUES (?,?,?,'running',?,?,?,?,?,?,?,?)",
                   /* started_at: when the row is written, after any wait for
                    * another process's lock (the run does not go on before) */
                   "tttNiiiidti", info->kind, info->workload, info->config, (int64_t) info->accelerators,
                   (int64_t) info->hosts, (int64_t) info->workers, (int64_t) info->seed, info->au_threshold,
                   s_hostname (), (int64_t) getpid ()) != 0)
        return -1;
    if (sb_resultdb_flush (self) != 0 || id < 0)        /* a run's start is never held back */
        return -1;
    return s_run_inputs (self, id, info->inputs) == 0 ? id : -1;
}

int
sb_resultdb_run_hosts (sb_resultdb_t *self, int64_t run_id, uint64_t hosts, uint64_t workers)
{
    return sb_resultdb_exec (self, "UPDATE runs SET hosts = ?, workers = ? WHERE id = ?", "iii", (int64_t) hosts,
                             (int64_t) workers, run_id);
}

int
sb_resultdb_run_finish (sb_resultdb_t *self, int64_t run_id, const char *status, const char *error)
{
    /* db_locked_s: bound by the writer when it runs this, after any wait
     * for the lock of this very transaction */
    int rc = sb_resultdb_exec (self,
                               "UPDATE runs SET status = ?, error = ?, finished_at = ?, db_locked_s = ?,"
                               " au_mean = CASE WHEN kind = 'train' THEN (SELECT avg(au_mean) FROM epochs WHERE run_id = runs.id) END,"
                               " passed = CASE WHEN kind = 'train' AND ? = 'succeeded' THEN"
                               "   train_au_meet_expectation = 'success' END"
                               " WHERE id = ?",
                               "ttdLti", status, error, sb_now (), status, run_id);
    if (sb_resultdb_flush (self) != 0)
        rc = -1;
    return rc;
}

int
sb_resultdb_add_worker (sb_resultdb_t *self, int64_t run_id, uint64_t worker, const char *host, uint64_t pid,
                        uint64_t ranks, uint64_t first_rank, uint64_t cores, uint64_t memory)
{
    return sb_resultdb_exec (self,
                             "INSERT OR REPLACE INTO run_workers (run_id, worker, host, pid, ranks, first_rank, cores,"
                             " memory) VALUES (?,?,?,?,?,?,?,?)",
                             "iitiiiii", run_id, (int64_t) worker, host, (int64_t) pid, (int64_t) ranks,
                             (int64_t) first_rank, (int64_t) cores, (int64_t) memory);
}

int
sb_resultdb_add_host_info (sb_resultdb_t *self, int64_t run_id, const char *host, const char *processor,
                           const char *cpuinfo, const char *meminfo)
{
    return sb_resultdb_exec (self, "INSERT OR REPLACE INTO run_host_info (run_id, host, processor, cpuinfo, meminfo)"
                             " VALUES (?,?,?,?,?)", "itttt", run_id, host, processor ? processor : "",
                             cpuinfo ? cpuinfo : "", meminfo ? meminfo : "");
}

int
sb_resultdb_worker_clock (sb_resultdb_t *self, int64_t run_id, uint64_t worker, double offset_s, double rtt_ms)
{
    return sb_resultdb_exec (self, "UPDATE run_workers SET clock_offset_s = ?, clock_rtt_ms = ? WHERE run_id = ?"
                             " AND worker = ?", "ddii", offset_s, rtt_ms, run_id, (int64_t) worker);
}

int
sb_resultdb_add_rank_epoch (sb_resultdb_t *self, int64_t run_id, const sb_rank_epoch_t *re)
{
    static const char sql[] = "INSERT OR REPLACE INTO rank_epochs (run_id, epoch, rank, host, samples, batches, bytes,"
                              " started_at, finished_at, compute_s, au, io_wait_s, barrier_s, metric_steps,"
                              " metric_compute_s, metric_excluded_s, metric_time_s, dlio_au_percentage,"
                              " dlio_throughput_samples_per_second, resident_bytes, checked_bytes, compute_all_s, held_s)"
                              " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    const char *host = re->host ? re->host : "?";
    if (re->has_au)     /* a train epoch: shardbench's AU and DLIO's figures */
        return sb_resultdb_exec (self, sql, "iiitiiiddddddidddddiidd", run_id, (int64_t) re->epoch, (int64_t) re->rank,
                                 host, (int64_t) re->samples, (int64_t) re->batches, (int64_t) re->bytes,
                                 re->started_at, re->finished_at, re->compute_s, re->au, re->io_wait_s, re->barrier_s,
                                 (int64_t) re->metric_steps, re->metric_compute_s, re->metric_excluded_s, re->metric_time_s,
                                 re->dlio_au_percentage, re->dlio_samples_per_s, (int64_t) re->resident_bytes,
                                 (int64_t) re->checked_bytes, re->compute_all_s, re->held_s);
    return sb_resultdb_exec (self, sql, "iiitiiidddnddnnnnnniidd", run_id, (int64_t) re->epoch, (int64_t) re->rank, host,
                             (int64_t) re->samples, (int64_t) re->batches, (int64_t) re->bytes, re->started_at,
                             re->finished_at, re->compute_s, re->io_wait_s, re->barrier_s,
                             (int64_t) re->resident_bytes, (int64_t) re->checked_bytes, re->compute_all_s, re->held_s);
}

int
sb_resultdb_epoch_dlio (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, double au_percentage,
                        double samples_per_s, double io_mib_per_s)
{
    return sb_resultdb_exec (self, "UPDATE epochs SET train_au_percentage = ?, train_throughput_samples_per_second = ?,"
                             " train_io_MB_per_second = ? WHERE run_id = ? AND epoch = ?", "dddii", au_percentage,
                             samples_per_s, io_mib_per_s, run_id, (int64_t) epoch);
}

int
sb_resultdb_run_dlio (sb_resultdb_t *self, int64_t run_id, const sb_dlio_summary_t *s, uint64_t record_size)
{
    return sb_resultdb_exec (self, "UPDATE runs SET train_au_mean_percentage = ?, train_au_stdev_percentage = ?,"
                             " train_au_meet_expectation = ?, train_throughput_mean_samples_per_second = ?,"
                             " train_throughput_stdev_samples_per_second = ?, train_io_mean_MB_per_second = ?,"
                             " train_io_stdev_MB_per_second = ?, record_size_bytes = ? WHERE id = ?", "ddtddddii",
                             s->au_mean, s->au_stdev, s->meet ? "success" : "fail", s->throughput_mean,
                             s->throughput_stdev, s->io_mean, s->io_stdev, (int64_t) record_size, run_id);
}

int
sb_resultdb_close_epoch (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, uint64_t dropped,
                         uint64_t batches, int with_au)
{
    return sb_resultdb_exec (self,
                             "INSERT OR REPLACE INTO epochs (run_id, epoch, samples, dropped, bytes, duration_s,"
                             " samples_per_s, mib_per_s, mb_per_s, au_mean, batches, resident_bytes, checked_bytes,"
                             " resident_fraction, from_memory)"
                             " SELECT ?1, ?2, sum(samples), ?3, sum(bytes), max(finished_at) - min(started_at),"
                             "  sum(samples) / max(max(finished_at) - min(started_at), 1e-9),"
                             "  sum(bytes) / 1048576.0 / max(max(finished_at) - min(started_at), 1e-9),"
                             "  sum(bytes) / 1e6 / max(max(finished_at) - min(started_at), 1e-9),"
                             "  CASE WHEN ?4 THEN avg(au) END, ?5, sum(resident_bytes), sum(checked_bytes),"
                             "  CASE WHEN sum(checked_bytes) > 0 THEN 1.0 * sum(resident_bytes) / sum(checked_bytes) END,"
                             "  CASE WHEN sum(checked_bytes) > 0 THEN 2 * sum(resident_bytes) >= sum(checked_bytes) END"
                             " FROM rank_epochs WHERE run_id = ?1 AND epoch = ?2",
                             "iiiii", run_id, (int64_t) epoch, (int64_t) dropped, (int64_t) with_au, (int64_t) batches);
}

int
sb_resultdb_epoch_barrier (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, double p50_ms, double p99_ms)
{
    return sb_resultdb_exec (self, "UPDATE epochs SET barrier_p50_ms = ?, barrier_p99_ms = ? WHERE run_id = ?"
                             " AND epoch = ?", "ddii", p50_ms, p99_ms, run_id, (int64_t) epoch);
}

int
sb_resultdb_run_sampler (sb_resultdb_t *self, int64_t run_id, const char *sampler, uint64_t loader_threads)
{
    return sb_resultdb_exec (self, "UPDATE runs SET sampler = ?, loader_threads = ? WHERE id = ?", "tii", sampler,
                             (int64_t) loader_threads, run_id);
}

int
sb_resultdb_add_eval_rank (sb_resultdb_t *self, int64_t run_id, const sb_eval_rank_t *e)
{
    return sb_resultdb_exec (self, "INSERT OR REPLACE INTO eval_ranks (run_id, epoch, rank, host, samples, steps, bytes,"
                             " started_at, finished_at, compute_s, io_wait_s, dlio_au_percentage,"
                             " dlio_throughput_samples_per_second) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             "iiitiiidddddd", run_id, (int64_t) e->epoch, (int64_t) e->rank, e->host,
                             (int64_t) e->samples, (int64_t) e->steps, (int64_t) e->bytes, e->started_at,
                             e->finished_at, e->compute_s, e->io_wait_s, e->au_percentage, e->samples_per_s);
}

int
sb_resultdb_add_eval (sb_resultdb_t *self, int64_t run_id, const sb_eval_t *e)
{
    double d = e->duration_s > 1e-9 ? e->duration_s : 1e-9;
    return sb_resultdb_exec (self, "INSERT OR REPLACE INTO evals (run_id, epoch, samples, dropped, bytes, steps,"
                             " duration_s, samples_per_s, mib_per_s, eval_au_percentage,"
                             " eval_throughput_samples_per_second, eval_io_MB_per_second, read_p50_ms, read_p99_ms)"
                             " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "iiiiiidddddddd", run_id,
                             (int64_t) e->epoch, (int64_t) e->samples, (int64_t) e->dropped, (int64_t) e->bytes,
                             (int64_t) e->steps, e->duration_s, (double) e->samples / d,
                             (double) e->bytes / 1048576.0 / d, e->au_percentage, e->samples_per_s, e->io_mib_per_s,
                             e->read_p50_ms, e->read_p99_ms);
}

int
sb_resultdb_run_eval (sb_resultdb_t *self, int64_t run_id, const sb_dlio_summary_t *s)
{
    return sb_resultdb_exec (self, "UPDATE runs SET eval_au_mean_percentage = ?, eval_au_stdev_percentage = ?,"
                             " eval_au_meet_expectation = ?, eval_throughput_mean_samples_per_second = ?,"
                             " eval_throughput_stdev_samples_per_second = ?, eval_io_mean_MB_per_second = ?,"
                             " eval_io_stdev_MB_per_second = ? WHERE id = ?", "ddtddddi", s->au_mean, s->au_stdev,
                             s->meet ? "success" : "fail", s->throughput_mean, s->throughput_stdev, s->io_mean,
                             s->io_stdev, run_id);
}

int
sb_resultdb_run_workflow (sb_resultdb_t *self, int64_t run_id, const char *phases)
{
    return sb_resultdb_exec (self, "UPDATE runs SET workflow = ? WHERE id = ?", "ti", phases, run_id);
}

int
sb_resultdb_epoch_sampler (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, uint64_t unused_files,
                           double own_p50_ms, double own_p99_ms)
{
    if (sb_resultdb_exec (self, "UPDATE epochs SET unused_files = ? WHERE run_id = ? AND epoch = ?", "iii",
                          (int64_t) unused_files, run_id, (int64_t) epoch) != 0)
        return -1;
    if (own_p50_ms < 0)
        return 0;
    return sb_resultdb_exec (self, "UPDATE epochs SET barrier_own_p50_ms = ?, barrier_own_p99_ms = ? WHERE run_id = ?"
                             " AND epoch = ?", "ddii", own_p50_ms, own_p99_ms, run_id, (int64_t) epoch);
}

int
sb_resultdb_epoch_read_latency (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, const sb_histogram_t *h)
{
    if (!h->total)
        return 0;
    for (size_t b = 0; b < SB_HISTOGRAM_BINS; b++) {
        if (!h->counts[b])
            continue;
        uint64_t low = sb_histogram_bin_low (b);
        uint64_t high = b + 1 < SB_HISTOGRAM_BINS ? sb_histogram_bin_low (b + 1) : low + 1;
        if (sb_resultdb_exec (self, "INSERT OR REPLACE INTO read_latency (run_id, epoch, bin_low_us, bin_high_us,"
                              " count) VALUES (?,?,?,?,?)", "iiiii", run_id, (int64_t) epoch, (int64_t) low,
                              (int64_t) high, (int64_t) h->counts[b]) != 0)
            return -1;
    }
    return sb_resultdb_exec (self, "UPDATE epochs SET read_p50_ms = ?, read_p99_ms = ? WHERE run_id = ? AND epoch = ?",
                             "ddii", sb_histogram_quantile (h, 0.5) / 1000, sb_histogram_quantile (h, 0.99) / 1000,
                             run_id, (int64_t) epoch);
}

int
sb_resultdb_host_read_latency (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, const char *host,
                               const uint64_t *counts, size_t n)
{
    if (n > SB_HISTOGRAM_BINS)
        n = SB_HISTOGRAM_BINS;
    for (size_t b = 0; b < n; b++) {
        if (!counts[b])
            continue;
        uint64_t low = sb_histogram_bin_low (b);
        uint64_t high = b + 1 < SB_HISTOGRAM_BINS ? sb_histogram_bin_low (b + 1) : low + 1;
        if (sb_resultdb_exec (self, "INSERT INTO host_read_latency (run_id, epoch, host, bin_low_us, bin_high_us,"
                              " count) VALUES (?,?,?,?,?,?) ON CONFLICT (run_id, epoch, host, bin_low_us)"
                              " DO UPDATE SET count = count + excluded.count", "iitiii", run_id, (int64_t) epoch, host,
                              (int64_t) low, (int64_t) high, (int64_t) counts[b]) != 0)
            return -1;
    }
    return 0;
}

int
sb_resultdb_add_stats (sb_resultdb_t *self, int64_t run_id, double t, uint64_t epoch, uint64_t rank,
                       uint64_t samples, uint64_t bytes, uint64_t reads, double read_s, double compute_s)
{
    return sb_resultdb_exec (self, "INSERT INTO timeseries (run_id, t, epoch, rank, samples, bytes, reads, read_s,"
                             " compute_s) VALUES (?,?,?,?,?,?,?,?,?)", "idiiiiidd", run_id, t, (int64_t) epoch,
                             (int64_t) rank, (int64_t) samples, (int64_t) bytes, (int64_t) reads, read_s, compute_s);
}

int
sb_resultdb_add_error (sb_resultdb_t *self, int64_t run_id, int64_t rank, const char *host, const char *op,
                       const char *target, int64_t errno_val, const char *message)
{
    return sb_resultdb_add_error_detail (self, run_id, rank, host, op, target, errno_val, message, NULL);
}

int
sb_resultdb_add_error_detail (sb_resultdb_t *self, int64_t run_id, int64_t rank, const char *host, const char *op,
                              const char *target, int64_t errno_val, const char *message, const sb_error_detail_t *d)
{
    /* one statement: an UPDATE of "the row just inserted" would hit
     * another row if the insert had failed */
    static const char sql[] = "INSERT INTO errors (run_id, t, rank, host, op, target, errno_val, message, endpoint,"
                              " http_status, service_code, library_code, attempt) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)";
    const char *endpoint = d && d->endpoint && *d->endpoint ? d->endpoint : NULL;
    const char *service_code = d && d->service_code && *d->service_code ? d->service_code : NULL;
    if (rank < 0 && d)
        return sb_resultdb_exec (self, sql, "idntttittitii", run_id, sb_now (), host, op, target, errno_val, message,
                                 endpoint, d->http_status, service_code, d->library_code, d->attempt);
    if (rank < 0)
        return sb_resultdb_exec (self, sql, "idntttitnnnnn", run_id, sb_now (), host, op, target, errno_val, message);
    if (d)
        return sb_resultdb_exec (self, sql, "iditttittitii", run_id, sb_now (), rank, host, op, target, errno_val,
                                 message, endpoint, d->http_status, service_code, d->library_code, d->attempt);
    return sb_resultdb_exec (self, sql, "iditttitnnnnn", run_id, sb_now (), rank, host, op, target, errno_val, message);
}

int
sb_resultdb_add_endpoint (sb_resultdb_t *self, int64_t run_id, const char *endpoint, uint64_t requests,
                          uint64_t bytes, uint64_t errors, uint64_t retries, double mean_ms, double p50_ms,
                          double p90_ms, double p99_ms, double max_ms)
{
    return sb_resultdb_exec (self,
                             "INSERT OR REPLACE INTO endpoints (run_id, endpoint, requests, bytes, errors, retries,"
                             " mean_ms, p50_ms, p90_ms, p99_ms, max_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                             "itiiiiddddd", run_id, endpoint, (int64_t) requests, (int64_t) bytes, (int64_t) errors,
                             (int64_t) retries, mean_ms, p50_ms, p90_ms, p99_ms, max_ms);
}

const char *
sb_resultdb_hostname (void)
{
    return s_hostname ();
}

int
sb_resultdb_mark_stale (sb_resultdb_t *self, const char *table, const char *update)
{
    /* A row is stale when its coordinator ran on this host and that process
     * is gone, or ran elsewhere (we cannot ask) and has not finished: only
     * the former is safe to decide here. table is a fixed name of the
     * callers, so it may be written into the SQL text. */
    char sql[128];
    snprintf (sql, sizeof sql, "SELECT id, coordinator_pid FROM %s WHERE status = 'running' AND coordinator_host = ?",
              table);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (self->conn.db, sql, -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_text (st, 1, s_hostname (), -1, SQLITE_TRANSIENT) != SQLITE_OK) {
        sqlite3_finalize (st);
        return -1;
    }
    int marked = 0, rc;
    while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64 (st, 0);
        pid_t pid = (pid_t) sqlite3_column_int64 (st, 1);
        if (pid > 0 && pid != getpid () && kill (pid, 0) == 0)
            continue;   /* still running */
        if (sb_resultdb_exec (self, update, "i", id) == 0)
            marked++;
    }
    sqlite3_finalize (st);
    return rc == SQLITE_DONE ? marked : -1;
}

int
sb_resultdb_mark_interrupted (sb_resultdb_t *self)
{
    /* it ended, as far as anyone knows, with the last thing it recorded (not
     * now: the report's "after N s" would count the time since) */
    return sb_resultdb_mark_stale (self, "runs",
                                   "UPDATE runs SET status = 'interrupted', finished_at = max(started_at,"
                                   " coalesce((SELECT max(t) FROM timeseries WHERE run_id = ?1), 0),"
                                   " coalesce((SELECT max(finished_at) FROM rank_epochs WHERE run_id = ?1), 0),"
                                   " coalesce((SELECT max(t) FROM errors WHERE run_id = ?1), 0)),"
                                   " error = coalesce(error, 'coordinator stopped before the run finished')"
                                   " WHERE id = ?1");
}

int
sb_resultdb_add_ckpt_rank (sb_resultdb_t *self, int64_t run_id, uint64_t seq, const char *op, uint64_t checkpoint,
                           uint64_t rank, const char *host, uint64_t files, uint64_t bytes, double started_at,
                           double finished_at)
{
    static const char sql[] = "INSERT INTO checkpoint_ranks (run_id, seq, rank, op, checkpoint, host, files, bytes,"
                              " started_at, finished_at, duration_s, mb_per_s) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)";
    double d = finished_at - started_at;
    if (d > 0)
        return sb_resultdb_exec (self, sql, "iiititiidddd", run_id, (int64_t) seq, (int64_t) rank, op,
                                 (int64_t) checkpoint, host, (int64_t) files, (int64_t) bytes, started_at, finished_at,
                                 d, (double) bytes / 1e6 / d);
    return sb_resultdb_exec (self, sql, "iiititiidddn", run_id, (int64_t) seq, (int64_t) rank, op, (int64_t) checkpoint,
                             host, (int64_t) files, (int64_t) bytes, started_at, finished_at, d);
}

int
sb_resultdb_close_ckpt (sb_resultdb_t *self, int64_t run_id, uint64_t seq, uint64_t dlio_bytes, int rank_sync)
{
    /* duration: the slowest rank (MLPerf Storage: "the maximum time across
     * all processes"); throughput: the checkpoint's bytes over it. DLIO's
     * (statscounter.py end_save_ckpt): its checkpoint_size over rank 0's
     * own time; with rank_sync a barrier holds rank 0 until the last rank
     * is done (never shorter than rank 0's own time, whatever the clocks) */
    return sb_resultdb_exec (self,
                             "INSERT INTO checkpoints (run_id, seq, op, checkpoint, ranks, files, bytes, duration_s,"
                             " span_s, mb_per_s, gib_per_s, min_rank_mb_per_s, dlio_bytes, dlio_duration_s,"
                             " dlio_gib_per_s, rank_sync)"
                             " SELECT c.run_id, c.seq, c.op, c.checkpoint, count(*), sum(c.files), sum(c.bytes),"
                             " max(c.duration_s), max(c.finished_at) - min(c.started_at),"
                             " CASE WHEN max(c.duration_s) > 0 THEN sum(c.bytes) / 1e6 / max(c.duration_s) END,"
                             " CASE WHEN max(c.duration_s) > 0 THEN sum(c.bytes) / 1073741824.0 / max(c.duration_s) END,"
                             " min(CASE WHEN c.bytes > 0 THEN c.mb_per_s END), ?3, d.t,"
                             " CASE WHEN d.t > 0 THEN ?3 / 1073741824.0 / d.t END, ?4"
                             " FROM checkpoint_ranks c LEFT JOIN"
                             " (SELECT CASE WHEN ?4 THEN max(z.duration_s, (SELECT max(finished_at) FROM checkpoint_ranks"
                             " WHERE run_id = ?1 AND seq = ?2) - z.started_at) ELSE z.duration_s END AS t"
                             " FROM checkpoint_ranks z WHERE z.run_id = ?1 AND z.seq = ?2 AND z.rank = 0) d ON 1"
                             " WHERE c.run_id = ?1 AND c.seq = ?2 GROUP BY c.run_id, c.seq",
                             "iiii", run_id, (int64_t) seq, (int64_t) dlio_bytes, (int64_t) (rank_sync != 0));
}

/* One row of sql (two int64 parameters) into st, stepped: 1 a row, 0 none,
 * -1 an error (st finalized then). */
static int
s_read_row (sb_resultdb_t *self, const char *sql, int64_t a, int64_t b, sqlite3_stmt **st)
{
    *st = NULL;
    if (sqlite3_prepare_v2 (self->conn.db, sql, -1, st, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (*st, 1, a) != SQLITE_OK || sqlite3_bind_int64 (*st, 2, b) != SQLITE_OK) {
        sqlite3_finalize (*st);
        *st = NULL;
        return -1;
    }
    int rc = sqlite3_step (*st);
    if (rc == SQLITE_ROW)
        return 1;
    sqlite3_finalize (*st);
    *st = NULL;
    return rc == SQLITE_DONE ? 0 : -1;
}

int
sb_resultdb_epoch_totals (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, sb_epoch_totals_t *t)
{
    sqlite3_stmt *st;
    memset (t, 0, sizeof *t);
    int rc = s_read_row (self, "SELECT samples, bytes, duration_s, mb_per_s FROM epochs WHERE run_id = ? AND epoch = ?",
                         run_id, (int64_t) epoch, &st);
    if (rc != 1)
        return rc;
    t->samples = sqlite3_column_int64 (st, 0);
    t->bytes = sqlite3_column_int64 (st, 1);
    t->duration_s = sqlite3_column_double (st, 2);
    t->mb_per_s = sqlite3_column_double (st, 3);
    sqlite3_finalize (st);
    return 1;
}

int
sb_resultdb_ckpt_totals (sb_resultdb_t *self, int64_t run_id, uint64_t seq, sb_ckpt_totals_t *t)
{
    sqlite3_stmt *st;
    memset (t, 0, sizeof *t);
    int rc = s_read_row (self, "SELECT bytes, duration_s, gib_per_s, dlio_bytes, dlio_duration_s, dlio_gib_per_s"
                         " FROM checkpoints WHERE run_id = ? AND seq = ?", run_id, (int64_t) seq, &st);
    if (rc != 1)
        return rc;
    t->bytes = sqlite3_column_int64 (st, 0);
    t->duration_s = sqlite3_column_double (st, 1);
    t->gib_per_s = sqlite3_column_double (st, 2);
    t->dlio_bytes = sqlite3_column_int64 (st, 3);
    t->dlio_duration_s = sqlite3_column_double (st, 4);
    t->dlio_gib_per_s = sqlite3_column_double (st, 5);
    sqlite3_finalize (st);
    return 1;
}
