/* results_dir_query: the SQL of the results directory (see results_dir_query.h). */
#include "results_dir_query.h"

#include <stdio.h>

static const char *const s_sql[] = {
    [SB_RDQ_RUN] = "SELECT kind, workload, config, status, error, started_at, finished_at, accelerators, hosts,"
                   " coordinator_host, record_size_bytes, au_threshold, workflow, train_au_mean_percentage,"
                   " train_au_stdev_percentage, train_au_meet_expectation, train_throughput_mean_samples_per_second,"
                   " train_throughput_stdev_samples_per_second, train_io_mean_MB_per_second,"
                   " train_io_stdev_MB_per_second, eval_au_mean_percentage, eval_au_stdev_percentage,"
                   " eval_au_meet_expectation, eval_throughput_mean_samples_per_second,"
                   " eval_throughput_stdev_samples_per_second, eval_io_mean_MB_per_second,"
                   " eval_io_stdev_MB_per_second, workers, coordinator_pid FROM runs WHERE id = ?",
    [SB_RDQ_INPUTS] = "SELECT version, command_line, full_config, df FROM run_inputs WHERE run_id = ?",
    [SB_RDQ_OVERRIDES] = "SELECT override FROM run_overrides WHERE run_id = ? ORDER BY seq",
    [SB_RDQ_HOST_INFO] = "SELECT host, processor, cpuinfo, meminfo FROM run_host_info WHERE run_id = ? ORDER BY host",
    [SB_RDQ_WORKERS] = "SELECT host, ranks, first_rank, cores, memory FROM run_workers WHERE run_id = ?"
                       " ORDER BY first_rank, worker",
    [SB_RDQ_EPOCHS] = "SELECT epoch, train_au_percentage, train_throughput_samples_per_second FROM epochs"
                      " WHERE run_id = ? AND epoch >= 1 ORDER BY epoch",
    [SB_RDQ_EVALS] = "SELECT epoch, eval_au_percentage, eval_throughput_samples_per_second FROM evals"
                     " WHERE run_id = ? ORDER BY epoch",
    [SB_RDQ_RANK_EPOCHS] = "SELECT rank, epoch, host, started_at, finished_at, dlio_au_percentage,"
                           " dlio_throughput_samples_per_second FROM rank_epochs WHERE run_id = ? ORDER BY rank, epoch",
    [SB_RDQ_EVAL_RANKS] = "SELECT rank, epoch, started_at, finished_at, dlio_au_percentage,"
                          " dlio_throughput_samples_per_second FROM eval_ranks WHERE run_id = ? ORDER BY rank, epoch",
    /* DLIO's figures under the columns summary.json reads: its checkpoint_size, rank 0's time, their GiB/s */
    [SB_RDQ_CHECKPOINTS] = "SELECT seq, op, checkpoint, dlio_bytes, dlio_duration_s, dlio_gib_per_s FROM checkpoints"
                           " WHERE run_id = ? ORDER BY seq",
    /* as DLIO's per_epoch_stats has them: each rank's throughput is DLIO's
     * checkpoint_size (all ranks) over the rank's own time, which with
     * rank_sync ends at the barrier after the last rank's finish */
    [SB_RDQ_CKPT_RANKS] = "SELECT r.rank, r.seq, r.op, r.checkpoint, r.started_at,"
                          " CASE WHEN k.rank_sync THEN max(r.finished_at, (SELECT max(x.finished_at) FROM"
                          " checkpoint_ranks x WHERE x.run_id = r.run_id AND x.seq = r.seq)) ELSE r.finished_at END AS f,"
                          " CASE WHEN k.rank_sync THEN max(r.finished_at, (SELECT max(x.finished_at) FROM"
                          " checkpoint_ranks x WHERE x.run_id = r.run_id AND x.seq = r.seq)) ELSE r.finished_at END"
                          " - r.started_at, coalesce(k.dlio_bytes, r.bytes)"
                          " FROM checkpoint_ranks r LEFT JOIN checkpoints k ON k.run_id = r.run_id AND k.seq = r.seq"
                          " WHERE r.run_id = ? ORDER BY r.rank, r.seq",
    [SB_RDQ_ERRORS] = "SELECT t, rank, host, op, target, message FROM errors WHERE run_id = ? ORDER BY rowid",
    [SB_RDQ_RUNS_AFTER] = "SELECT id, coordinator_host, coordinator_pid FROM runs WHERE id > ? ORDER BY id",
    [SB_RDQ_LAST_ID] = "SELECT coalesce(max(id), 0) FROM runs WHERE ? IS NOT NULL",
};

#define S_MAX_COLS 32

int
sb_rdq_rows (sqlite3 *db, sb_rdq_t which, int64_t run_id, sb_rdq_row_fn fn, void *ctx, char *err, size_t err_size)
{
    if ((size_t) which >= sizeof s_sql / sizeof s_sql[0] || !s_sql[which]) {
        snprintf (err, err_size, "results directory: no query %d", (int) which);
        return -1;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (db, s_sql[which], -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64 (st, 1, run_id) != SQLITE_OK) {
        snprintf (err, err_size, "results directory: reading run %lld: %s", (long long) run_id, sqlite3_errmsg (db));
        sqlite3_finalize (st);
        return -1;
    }
    int rc, stop = 0;
    while (!stop && (rc = sqlite3_step (st)) == SQLITE_ROW) {
        sb_rdq_val_t v[S_MAX_COLS];
        int n = sqlite3_column_count (st);
        if (n > S_MAX_COLS)
            n = S_MAX_COLS;
        for (int c = 0; c < n; c++) {
            int t = sqlite3_column_type (st, c);
            v[c].type = t == SQLITE_INTEGER ? SB_RDQ_INT : t == SQLITE_FLOAT ? SB_RDQ_REAL
                      : t == SQLITE_NULL ? SB_RDQ_NULL : SB_RDQ_TEXT;
            v[c].i = sqlite3_column_int64 (st, c);
            v[c].d = sqlite3_column_double (st, c);
            const unsigned char *text = t == SQLITE_TEXT ? sqlite3_column_text (st, c) : NULL;
            v[c].t = text ? (const char *) text : "";
        }
        stop = fn (v, n, ctx);
    }
    if (!stop && rc != SQLITE_DONE) {
        snprintf (err, err_size, "results directory: reading run %lld: %s", (long long) run_id, sqlite3_errmsg (db));
        stop = -1;
    }
    sqlite3_finalize (st);
    return stop;
}

typedef struct {
    char  *kind;
    size_t size;
    int    found;
} s_kind_t;

static int
s_kind_row (const sb_rdq_val_t *cols, int ncols, void *ctx)
{
    s_kind_t *k = ctx;
    if (ncols > 0)
        snprintf (k->kind, k->size, "%s", cols[0].t);
    k->found = 1;
    return 0;
}

int
sb_rdq_run_kind (sqlite3 *db, int64_t run_id, char *kind, size_t kind_size, char *err, size_t err_size)
{
    s_kind_t k = { .kind = kind, .size = kind_size };
    if (kind_size)
        kind[0] = '\0';
    if (sb_rdq_rows (db, SB_RDQ_RUN, run_id, s_kind_row, &k, err, err_size) != 0)
        return -1;
    return k.found;
}
