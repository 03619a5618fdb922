/* resultdb: schema, prepared inserts, commit as rows arrive. */
#include "resultdb.h"
#include "log.h"
#include "util.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

extern const char sb_results_sql[];

struct sb_resultdb {
    sqlite3      *db;
    int           in_batch;
    double        batch_started;
    sqlite3_stmt *ins_stats;
    sqlite3_stmt *ins_rank_epoch;
};

static const char *
s_hostname (void)
{
    static char host[256];
    if (!host[0] && gethostname (host, sizeof host - 1) != 0)
        snprintf (host, sizeof host, "localhost");
    return host;
}

sqlite3 *
sb_resultdb_handle (sb_resultdb_t *self)
{
    return self->db;
}

const char *
sb_resultdb_errmsg (sb_resultdb_t *self)
{
    return sqlite3_errmsg (self->db);
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
    /* version 1 -> 2: S3 details on errors (the endpoints table is new and
     * comes from the schema itself) */
    else if (version == 1
             && sqlite3_exec (db, "ALTER TABLE errors ADD COLUMN endpoint TEXT;"
                              " ALTER TABLE errors ADD COLUMN http_status INTEGER;"
                              " ALTER TABLE errors ADD COLUMN s3_code TEXT;"
                              " ALTER TABLE errors ADD COLUMN curl_code INTEGER;"
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

sb_resultdb_t *
sb_resultdb_open (const char *path, char *err, size_t err_size)
{
    sb_resultdb_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "%s: out of memory", path);
        return NULL;
    }
    if (sqlite3_open_v2 (path, &self->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        snprintf (err, err_size, "%s: cannot open result database: %s", path,
                  self->db ? sqlite3_errmsg (self->db) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout (self->db, 5000);
    char *msg = NULL;
    if (sqlite3_exec (self->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;"
                      " PRAGMA cache_size=-131072;",
                      NULL, NULL, &msg) != SQLITE_OK) {
        snprintf (err, err_size, "%s: cannot set up the result database: %s", path, msg ? msg : "?");
        sqlite3_free (msg);
        goto fail;
    }
    if (s_upgrade (self->db, path, err, err_size) != 0)
        goto fail;
    if (sqlite3_prepare_v2 (self->db,
                            "INSERT INTO timeseries (run_id, t, epoch, rank, samples, bytes, reads, read_s, compute_s)"
                            " VALUES (?,?,?,?,?,?,?,?,?)", -1, &self->ins_stats, NULL) != SQLITE_OK
        || sqlite3_prepare_v2 (self->db,
                               "INSERT OR REPLACE INTO rank_epochs (run_id, epoch, rank, host, samples, batches, bytes,"
                               " started_at, finished_at, compute_s, au, io_wait_s, barrier_s)"
                               " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &self->ins_rank_epoch, NULL) != SQLITE_OK) {
        snprintf (err, err_size, "%s: cannot prepare statements: %s", path, sqlite3_errmsg (self->db));
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
    if (sqlite3_exec (self->db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK) {
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
    if (sqlite3_exec (self->db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
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
    sqlite3_finalize (self->ins_stats);
    sqlite3_finalize (self->ins_rank_epoch);
    if (self->db && sqlite3_close (self->db) != SQLITE_OK)
        sb_warn ("closing the result database: %s", sqlite3_errmsg (self->db));
    free (self);
    *self_p = NULL;
}

/* Run one statement with bound text/int/double arguments described by fmt:
 * 't' text (NULL allowed), 'i' int64, 'd' double, 'n' NULL. */
static int
s_exec (sb_resultdb_t *self, const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (self->db, sql, -1, &st, NULL) != SQLITE_OK) {
        sb_error ("result database: %s: %s", sql, sqlite3_errmsg (self->db));
        return -1;
    }
    va_list ap;
    va_start (ap, fmt);
    int rc = SQLITE_OK;
    for (int i = 0; fmt[i] && rc == SQLITE_OK; i++) {
        switch (fmt[i]) {
        case 't': {
            const char *s = va_arg (ap, const char *);
            rc = s ? sqlite3_bind_text (st, i + 1, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null (st, i + 1);
            break;
        }
        case 'i': rc = sqlite3_bind_int64 (st, i + 1, va_arg (ap, int64_t)); break;
        case 'd': rc = sqlite3_bind_double (st, i + 1, va_arg (ap, double)); break;
        default: rc = sqlite3_bind_null (st, i + 1); break;
        }
    }
    va_end (ap);
    if (rc == SQLITE_OK)
        rc = sqlite3_step (st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        sb_error ("result database: %s", sqlite3_errmsg (self->db));
        sqlite3_finalize (st);
        return -1;
    }
    sqlite3_finalize (st);
    return 0;
}

int64_t
sb_resultdb_run_begin (sb_resultdb_t *self, const sb_run_info_t *info)
{
    if (s_exec (self,
                "INSERT INTO runs (kind, workload, config, status, started_at, accelerators, hosts, workers, seed,"
                " au_threshold, coordinator_host, coordinator_pid) VALUES (?,?,?,'running',?,?,?,?,?,?,?,?)",
                "tttdiiiidti", info->kind, info->workload, info->config, sb_now (), (int64_t) info->accelerators,
                (int64_t) info->hosts, (int64_t) info->workers, (int64_t) info->seed, info->au_threshold,
                s_hostname (), (int64_t) getpid ()) != 0)
        return -1;
    int64_t id = sqlite3_last_insert_rowid (self->db);
    return sb_resultdb_flush (self) == 0 ? id : -1;     /* a run's start is never held back */
}

int
sb_resultdb_run_hosts (sb_resultdb_t *self, int64_t run_id, uint64_t hosts, uint64_t workers)
{
    return s_exec (self, "UPDATE runs SET hosts = ?, workers = ? WHERE id = ?", "iii", (int64_t) hosts,
                   (int64_t) workers, run_id);
}

int
sb_resultdb_run_finish (sb_resultdb_t *self, int64_t run_id, const char *status, const char *error)
{
    int rc = s_exec (self,
                     "UPDATE runs SET status = ?, error = ?, finished_at = ?,"
                     " au_mean = CASE WHEN kind = 'train' THEN (SELECT avg(au_mean) FROM epochs WHERE run_id = runs.id) END,"
                     " passed = CASE WHEN kind = 'train' AND ? = 'succeeded' THEN"
                     "   (SELECT avg(au_mean) FROM epochs WHERE run_id = runs.id) >= au_threshold - 1e-12 END"
                     " WHERE id = ?",
                     "ttdti", status, error, sb_now (), status, run_id);
    if (sb_resultdb_flush (self) != 0)
        rc = -1;
    return rc;
}

int
sb_resultdb_add_worker (sb_resultdb_t *self, int64_t run_id, uint64_t worker, const char *host, uint64_t pid,
                        uint64_t ranks, uint64_t first_rank, uint64_t cores, uint64_t memory)
{
    return s_exec (self,
                   "INSERT OR REPLACE INTO run_workers (run_id, worker, host, pid, ranks, first_rank, cores, memory)"
                   " VALUES (?,?,?,?,?,?,?,?)",
                   "iitiiiii", run_id, (int64_t) worker, host, (int64_t) pid, (int64_t) ranks, (int64_t) first_rank,
                   (int64_t) cores, (int64_t) memory);
}

int
sb_resultdb_add_rank_epoch (sb_resultdb_t *self, int64_t run_id, const sb_rank_epoch_t *re)
{
    sqlite3_stmt *st = self->ins_rank_epoch;
    sqlite3_reset (st);
    int rc = sqlite3_bind_int64 (st, 1, run_id);
    rc |= sqlite3_bind_int64 (st, 2, (int64_t) re->epoch);
    rc |= sqlite3_bind_int64 (st, 3, (int64_t) re->rank);
    rc |= sqlite3_bind_text (st, 4, re->host ? re->host : "?", -1, SQLITE_TRANSIENT);
    rc |= sqlite3_bind_int64 (st, 5, (int64_t) re->samples);
    rc |= sqlite3_bind_int64 (st, 6, (int64_t) re->batches);
    rc |= sqlite3_bind_int64 (st, 7, (int64_t) re->bytes);
    rc |= sqlite3_bind_double (st, 8, re->started_at);
    rc |= sqlite3_bind_double (st, 9, re->finished_at);
    rc |= sqlite3_bind_double (st, 10, re->compute_s);
    rc |= re->has_au ? sqlite3_bind_double (st, 11, re->au) : sqlite3_bind_null (st, 11);
    rc |= sqlite3_bind_double (st, 12, re->io_wait_s);
    rc |= sqlite3_bind_double (st, 13, re->barrier_s);
    if (rc != SQLITE_OK || sqlite3_step (st) != SQLITE_DONE) {
        sb_error ("result database: rank_epochs: %s", sqlite3_errmsg (self->db));
        return -1;
    }
    return 0;
}

int
sb_resultdb_close_epoch (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, uint64_t dropped,
                         uint64_t batches, int with_au)
{
    return s_exec (self,
                   "INSERT OR REPLACE INTO epochs (run_id, epoch, samples, dropped, bytes, duration_s, samples_per_s,"
                   " mib_per_s, mb_per_s, au_mean, batches)"
                   " SELECT ?1, ?2, sum(samples), ?3, sum(bytes), max(finished_at) - min(started_at),"
                   "  sum(samples) / max(max(finished_at) - min(started_at), 1e-9),"
                   "  sum(bytes) / 1048576.0 / max(max(finished_at) - min(started_at), 1e-9),"
                   "  sum(bytes) / 1e6 / max(max(finished_at) - min(started_at), 1e-9),"
                   "  CASE WHEN ?4 THEN avg(au) END, ?5"
                   " FROM rank_epochs WHERE run_id = ?1 AND epoch = ?2",
                   "iiiii", run_id, (int64_t) epoch, (int64_t) dropped, (int64_t) with_au, (int64_t) batches);
}

int
sb_resultdb_epoch_barrier (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, double p50_ms, double p99_ms)
{
    return s_exec (self, "UPDATE epochs SET barrier_p50_ms = ?, barrier_p99_ms = ? WHERE run_id = ? AND epoch = ?",
                   "ddii", p50_ms, p99_ms, run_id, (int64_t) epoch);
}

int
sb_resultdb_epoch_read_latency (sb_resultdb_t *self, int64_t run_id, uint64_t epoch, const sb_histogram_t *h)
{
    if (!h->total)
        return 0;
    for (size_t b = 0; b < SB_HISTOGRAM_BUCKETS; b++) {
        if (!h->counts[b])
            continue;
        uint64_t low = sb_histogram_bucket_low (b);
        uint64_t high = b + 1 < SB_HISTOGRAM_BUCKETS ? sb_histogram_bucket_low (b + 1) : low + 1;
        if (s_exec (self, "INSERT OR REPLACE INTO read_latency (run_id, epoch, bucket_low_us, bucket_high_us, count)"
                    " VALUES (?,?,?,?,?)", "iiiii", run_id, (int64_t) epoch, (int64_t) low, (int64_t) high,
                    (int64_t) h->counts[b]) != 0)
            return -1;
    }
    return s_exec (self, "UPDATE epochs SET read_p50_ms = ?, read_p99_ms = ? WHERE run_id = ? AND epoch = ?", "ddii",
                   sb_histogram_quantile (h, 0.5) / 1000, sb_histogram_quantile (h, 0.99) / 1000, run_id,
                   (int64_t) epoch);
}

int
sb_resultdb_add_stats (sb_resultdb_t *self, int64_t run_id, double t, uint64_t epoch, uint64_t rank,
                       uint64_t samples, uint64_t bytes, uint64_t reads, double read_s, double compute_s)
{
    sqlite3_stmt *st = self->ins_stats;
    sqlite3_reset (st);
    int rc = sqlite3_bind_int64 (st, 1, run_id);
    rc |= sqlite3_bind_double (st, 2, t);
    rc |= sqlite3_bind_int64 (st, 3, (int64_t) epoch);
    rc |= sqlite3_bind_int64 (st, 4, (int64_t) rank);
    rc |= sqlite3_bind_int64 (st, 5, (int64_t) samples);
    rc |= sqlite3_bind_int64 (st, 6, (int64_t) bytes);
    rc |= sqlite3_bind_int64 (st, 7, (int64_t) reads);
    rc |= sqlite3_bind_double (st, 8, read_s);
    rc |= sqlite3_bind_double (st, 9, compute_s);
    if (rc != SQLITE_OK || sqlite3_step (st) != SQLITE_DONE) {
        sb_error ("result database: timeseries: %s", sqlite3_errmsg (self->db));
        return -1;
    }
    return 0;
}

int
sb_resultdb_add_error (sb_resultdb_t *self, int64_t run_id, int64_t rank, const char *host, const char *op,
                       const char *target, int64_t errno_val, const char *message)
{
    if (rank < 0)
        return s_exec (self, "INSERT INTO errors (run_id, t, rank, host, op, target, errno_val, message)"
                       " VALUES (?,?,NULL,?,?,?,?,?)", "idtttit", run_id, sb_now (), host, op, target, errno_val, message);
    return s_exec (self, "INSERT INTO errors (run_id, t, rank, host, op, target, errno_val, message)"
                   " VALUES (?,?,?,?,?,?,?,?)", "iditttit", run_id, sb_now (), rank, host, op, target, errno_val,
                   message);
}

int
sb_resultdb_add_error_detail (sb_resultdb_t *self, int64_t run_id, int64_t rank, const char *host, const char *op,
                              const char *target, int64_t errno_val, const char *message, const sb_error_detail_t *d)
{
    if (sb_resultdb_add_error (self, run_id, rank, host, op, target, errno_val, message) != 0)
        return -1;
    if (!d)
        return 0;
    return s_exec (self, "UPDATE errors SET endpoint = ?, http_status = ?, s3_code = ?, curl_code = ?, attempt = ?"
                   " WHERE rowid = last_insert_rowid()", "titii", d->endpoint && *d->endpoint ? d->endpoint : NULL,
                   d->http_status, d->s3_code && *d->s3_code ? d->s3_code : NULL, d->curl_code, d->attempt);
}

int
sb_resultdb_add_endpoint (sb_resultdb_t *self, int64_t run_id, const char *endpoint, uint64_t requests,
                          uint64_t bytes, uint64_t errors, uint64_t retries, double mean_ms, double p50_ms,
                          double p90_ms, double p99_ms, double max_ms)
{
    return s_exec (self,
                   "INSERT OR REPLACE INTO endpoints (run_id, endpoint, requests, bytes, errors, retries, mean_ms,"
                   " p50_ms, p90_ms, p99_ms, max_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   "itiiiiddddd", run_id, endpoint, (int64_t) requests, (int64_t) bytes, (int64_t) errors,
                   (int64_t) retries, mean_ms, p50_ms, p90_ms, p99_ms, max_ms);
}

int
sb_resultdb_mark_interrupted (sb_resultdb_t *self)
{
    /* A run is stale when its coordinator ran on this host and that process
     * is gone, or ran elsewhere (we cannot ask) and has not finished: only
     * the former is safe to decide here. */
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (self->db, "SELECT id, coordinator_pid FROM runs WHERE status = 'running'"
                            " AND coordinator_host = ?", -1, &st, NULL) != SQLITE_OK
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
        /* it ended, as far as anyone knows, with the last thing it recorded
         * (not now: the report's "after N s" would count the time since) */
        if (s_exec (self, "UPDATE runs SET status = 'interrupted', finished_at = max(started_at,"
                    " coalesce((SELECT max(t) FROM timeseries WHERE run_id = ?1), 0),"
                    " coalesce((SELECT max(finished_at) FROM rank_epochs WHERE run_id = ?1), 0),"
                    " coalesce((SELECT max(t) FROM errors WHERE run_id = ?1), 0)),"
                    " error = coalesce(error, 'coordinator stopped before the run finished') WHERE id = ?1",
                    "i", id) == 0)
            marked++;
    }
    sqlite3_finalize (st);
    return rc == SQLITE_DONE ? marked : -1;
}
