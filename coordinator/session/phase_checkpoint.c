/* phase_checkpoint: the checkpoint workflow (write then read checkpoints,
 * plan in ckpt_plan.h), and the checkpoints written during training epochs
 * (CKPT_DONE). */
#include "session_internal.h"
#include "ckpt_plan.h"
#include "ckpt_target.h"
#include "log.h"
#include "util.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* the plan's files into a PHASE_START (borrowed). */
static void
s_ckpt_files (const sb_ckpt_plan_t *plan, sb_msg_phase_start_t *ps)
{
    ps->ckpt_names = (sb_strs_t) { .items = plan->names, .count = plan->nfiles };
    ps->ckpt_bytes = (sb_u64s_t) { .items = plan->file_bytes, .count = plan->nfiles };
    ps->ckpt_first = (sb_u64s_t) { .items = plan->first, .count = plan->ranks + 1 };
}

/* one rank wrote its part of a checkpoint during a train
 * epoch. Once every rank has, the checkpoint's row is written. */
void
sess_on_ckpt_done (sess_t *self, sess_worker_t *w, const sb_msg_ckpt_done_t *m)
{
    uint64_t k = m->checkpoint - self->ckpt_first;
    if (self->phase != SESS_PHASE_TRAIN || m->epoch != self->epoch || m->rank < w->first_rank
        || m->rank >= w->first_rank + w->ranks || m->checkpoint < self->ckpt_first || k >= self->ckpt_nsteps
        || m->step != self->ckpt_steps[k] || !(m->started_at >= 0 && m->finished_at >= m->started_at)
        || !isfinite (m->finished_at) || self->ckpt_rank_next[m->rank] != k) {
        sess_fail (self, "worker %llu on %s reported checkpoint %llu (step %llu) of rank %llu in epoch %llu unexpectedly",
                   (unsigned long long) w->id, w->host, (unsigned long long) m->checkpoint, (unsigned long long) m->step,
                   (unsigned long long) m->rank, (unsigned long long) m->epoch);
        return;
    }
    const sb_ckpt_plan_t *plan = &self->ckpt;
    uint64_t want = plan->model_bytes[m->rank] + plan->optim_bytes[m->rank];
    uint64_t files = plan->first[m->rank + 1] - plan->first[m->rank];
    if (m->bytes != want || m->files != files) {
        sess_fail (self, "rank %llu on %s wrote %llu bytes in %llu files of checkpoint %llu, expected %llu in %llu",
                   (unsigned long long) m->rank, w->host, (unsigned long long) m->bytes, (unsigned long long) m->files,
                   (unsigned long long) m->checkpoint, (unsigned long long) want, (unsigned long long) files);
        return;
    }
    double offset = w->clock_known ? w->clock_offset : 0;
    if (sb_resultdb_add_ckpt_rank (self->o->db, self->run_id, m->checkpoint, "write", m->checkpoint, m->rank, w->host,
                                   m->files, m->bytes, m->started_at - offset, m->finished_at - offset) != 0) {
        sess_fail (self, "cannot record rank %llu of checkpoint %llu: %s", (unsigned long long) m->rank,
                   (unsigned long long) m->checkpoint, sb_resultdb_errmsg (self->o->db));
        return;
    }
    self->ckpt_rank_next[m->rank]++;
    if (++self->ckpt_arrived[k] < self->o->accelerators)
        return;
    /* DLIO's training loop has no barrier after a checkpoint: rank 0's own
     * time, whatever checkpoint.rank_sync says (main.py _train) */
    if (sb_resultdb_close_ckpt (self->o->db, self->run_id, m->checkpoint, plan->dlio_bytes, 0) != 0) {
        sess_fail (self, "cannot record checkpoint %llu: %s", (unsigned long long) m->checkpoint,
                   sb_resultdb_errmsg (self->o->db));
        return;
    }
    self->ckpt_written++;
    sb_info ("checkpoint %llu (global_epoch%llu_step%llu) written during training: %llu bytes in %llu files",
             (unsigned long long) m->checkpoint, (unsigned long long) m->epoch, (unsigned long long) m->step,
             (unsigned long long) plan->total_bytes, (unsigned long long) plan->nfiles);
}

/* epoch e's checkpoints into its PHASE_START. Returns 0 or -1 (failed). */
int
sess_ckpt_epoch (sess_t *self, uint64_t e, uint64_t batches, sb_msg_phase_start_t *ps)
{
    const sb_ckpt_cfg_t *c = &self->o->wl->ckpt;
    self->ckpt_first += self->ckpt_nsteps;
    self->ckpt_nsteps = 0;
    if (!c->in_train)
        return 0;
    size_t max = (size_t) batches + 1;
    free (self->ckpt_steps);
    free (self->ckpt_arrived);
    free (self->ckpt_rank_next);
    self->ckpt_steps = calloc (max, sizeof *self->ckpt_steps);
    self->ckpt_arrived = calloc (max, sizeof *self->ckpt_arrived);
    self->ckpt_rank_next = calloc ((size_t) self->o->accelerators, sizeof *self->ckpt_rank_next);
    if (!self->ckpt_steps || !self->ckpt_arrived || !self->ckpt_rank_next) {
        sess_fail (self, "out of memory for the checkpoints of epoch %llu", (unsigned long long) e);
        return -1;
    }
    self->ckpt_nsteps = sb_ckpt_train_steps (c, e, batches, self->ckpt_steps, max);
    if (self->ckpt_nsteps == 0)
        return 0;
    s_ckpt_files (&self->ckpt, ps);
    ps->ckpt_steps = (sb_u64s_t) { .items = self->ckpt_steps, .count = self->ckpt_nsteps };
    ps->ckpt_root = self->ckpt_root;
    ps->checkpoint = self->ckpt_first;
    ps->model_parallel = self->ckpt.tensor * self->ckpt.pipeline;
    ps->fsync = (uint64_t) c->fsync;
    return 0;
}

/* The local checkpoint folder as a message names it: without its last '/'. */
static void
s_folder_name (const sess_t *self, char *out, size_t size)
{
    snprintf (out, size, "%s", self->ckpt_root);
    size_t n = strlen (out);
    if (n > 1 && out[n - 1] == '/')
        out[n - 1] = '\0';
}

int
sess_ckpt_space (sess_t *self, char *err, size_t err_size)
{
    const sb_ckpt_cfg_t *c = &self->o->wl->ckpt;
    if (self->ckpt_root[0] != '/' || c->num_write == 0)
        return 0;   /* objects (s3://): no file system of ours to measure */
    sb_ckpt_plan_t plan;
    if (sb_ckpt_plan_init (&plan, c, self->o->accelerators, err, err_size) != 0)
        return 2;
    char folder[PATH_MAX];
    s_folder_name (self, folder, sizeof folder);
    uint64_t free_bytes;
    if (sb_free_bytes (self->ckpt_root, folder, &free_bytes, err, err_size) != 0) {
        sb_ckpt_plan_fini (&plan);
        return 1;
    }
    /* every checkpoint stays (each in its own folder), less what rewriting
     * the checkpoints of the same numbers that an earlier run left frees */
    uint64_t total = plan.total_bytes;
    uint64_t need = total && c->num_write > UINT64_MAX / total ? UINT64_MAX : c->num_write * total;
    DIR *d = opendir (self->ckpt_root);
    for (struct dirent *de; d && (de = readdir (d));) {
        unsigned long long k;
        char canon[64], sub[PATH_MAX];
        if (sscanf (de->d_name, "global_epoch1_step%llu", &k) != 1 || k == 0 || k > c->num_write
            || sb_ckpt_folder_name (1, k, canon, sizeof canon) != 0 || strcmp (canon, de->d_name) != 0
            || sb_strf (sub, sizeof sub, "%s%s/", self->ckpt_root, de->d_name) != 0)
            continue;
        uint64_t freed = total - sb_ckpt_target_more_bytes (sub, plan.names, plan.file_bytes, plan.nfiles);
        need = need == UINT64_MAX ? need : need - freed;
    }
    if (d)
        closedir (d);
    int rc = 0;
    if (need > free_bytes) {
        snprintf (err, err_size, "not enough space in %s: %llu checkpoint(s) of %llu bytes (%.2f GiB, %zu files of %llu"
                  " ranks) need %llu bytes (%.2f GiB) more there, %llu bytes (%.2f GiB) are free: free space, or lower"
                  " checkpoint.num_checkpoints_write or checkpoint.scale; nothing was written", folder,
                  (unsigned long long) c->num_write, (unsigned long long) total, total / 1073741824.0, plan.nfiles,
                  (unsigned long long) plan.ranks, (unsigned long long) need, need / 1073741824.0,
                  (unsigned long long) free_bytes, free_bytes / 1073741824.0);
        rc = 2;
    }
    else
        sb_info ("checkpoints: %llu bytes (%.2f GiB) to write into %s, %llu bytes (%.2f GiB) free there",
                 (unsigned long long) need, need / 1073741824.0, folder, (unsigned long long) free_bytes,
                 free_bytes / 1073741824.0);
    sb_ckpt_plan_fini (&plan);
    return rc;
}

/* What the checkpoints 1..written of this run leave behind, said once it
 * ends: shardbench never removes them (a later read-only run reads them).
 * A local folder is measured (the files there now); objects are counted
 * from the plan. */
static void
s_left_behind (sess_t *self, uint64_t written)
{
    const sb_ckpt_plan_t *plan = &self->ckpt;
    if (written == 0)
        return;
    uint64_t files = 0, bytes = 0;
    char where[PATH_MAX];
    int local = self->ckpt_root[0] == '/';
    if (local) {
        s_folder_name (self, where, sizeof where);
        for (uint64_t k = 1; k <= written; k++)
            for (size_t i = 0; i < plan->nfiles; i++) {
                char path[PATH_MAX];
                struct stat st;
                if (sb_strf (path, sizeof path, "%sglobal_epoch1_step%llu/%s", self->ckpt_root,
                             (unsigned long long) k, plan->names[i]) == 0
                    && lstat (path, &st) == 0 && S_ISREG (st.st_mode)) {
                    files++;
                    bytes += (uint64_t) st.st_size;
                }
            }
    }
    else {
        snprintf (where, sizeof where, "%s", self->ckpt_root);
        for (size_t i = 0; i < plan->nfiles; i++)
            files += plan->file_bytes[i] > 0;
        files *= written;
        bytes = plan->total_bytes * written;
    }
    if (files == 0) {
        sb_info ("checkpoint: nothing of this run stays in %s", where);
        return;
    }
    sb_info ("checkpoint: %llu %s, %llu bytes (%.2f GiB), of checkpoints 1..%llu stay in %s (global_epoch1_step{K}/):"
             " shardbench does not remove them (a run with checkpoint.num_checkpoints_write=0 reads them); delete"
             " them when done", (unsigned long long) files, local ? "files" : "objects", (unsigned long long) bytes,
             bytes / 1073741824.0, (unsigned long long) written, where);
}

static int
s_wait_over (sess_t *self)
{
    return sb_now () >= self->wait_until;
}

/* checkpoint: num_checkpoints_write checkpoints, then num_checkpoints_read
 * reads of checkpoints 1, 2, ...; every rank starts each one together (the
 * PHASE_START broadcast stands for DLIO's barrier) with its bytes from the
 * plan (coordinator/session/ckpt_plan.h), already checked by sb_session_run. */
int
sess_phase_checkpoint (sess_t *self)
{
    const sb_ckpt_cfg_t *c = &self->o->wl->ckpt;
    sb_ckpt_plan_t *plan = &self->ckpt;
    char err[512];
    if (sb_ckpt_plan_init (plan, c, self->o->accelerators, err, sizeof err) != 0) {
        sess_fail (self, "%s", err);
        return -1;
    }
    if (sess_begin_run (self, "checkpoint") < 0)
        return -1;
    sb_info ("checkpoint: %llu parameters, tensor %llu x pipeline %llu x data %llu, ZeRO %llu%s; %llu ranks write"
             " %llu bytes in %llu files per checkpoint (%.6g of %.3f GiB: model %.3f GiB, optimizer %.3f GiB)",
             (unsigned long long) plan->num_parameters, (unsigned long long) plan->tensor,
             (unsigned long long) plan->pipeline, (unsigned long long) plan->data, (unsigned long long) plan->zero_stage,
             plan->subset ? ", subset" : "", (unsigned long long) plan->ranks, (unsigned long long) plan->total_bytes,
             (unsigned long long) plan->files, plan->scale,
             (double) (plan->full_model_bytes + plan->full_optim_bytes) / 1073741824.0,
             (double) plan->full_model_bytes / 1073741824.0, (double) plan->full_optim_bytes / 1073741824.0);
    sb_ckpt_note_dlio_size (plan);
    uint64_t seq = 0, written = 0;
    for (int read = 0; read < 2 && !self->failed; read++) {
        uint64_t n = read ? c->num_read : c->num_write;
        for (uint64_t k = 1; k <= n && !self->failed; k++) {
            char what[96];
            if (c->time_between > 0) {
                self->wait_until = sb_now () + c->time_between;
                if (sess_pump_until (self, s_wait_over, 0, "between checkpoints") != 0)
                    break;
            }
            self->phase = SESS_PHASE_CHECKPOINT;
            self->epoch = ++seq;
            self->ckpt_op = read ? "read" : "write";
            self->ckpt_index = k;
            self->ranks_done = 0;
            memset (self->rank_done, 0, self->o->accelerators);
            sb_msg_t start = { .type = SB_MSG_PHASE_START };
            sb_msg_phase_start_t *ps = &start.u.phase_start;
            ps->phase = read ? "checkpoint_read" : "checkpoint_write";
            ps->run_id = (uint64_t) self->run_id;
            ps->epoch = seq;
            ps->checkpoint = k;
            ps->model_parallel = plan->tensor * plan->pipeline;
            ps->fsync = (uint64_t) c->fsync;
            ps->model_bytes = (sb_u64s_t) { .items = plan->model_bytes, .count = plan->ranks };
            ps->optim_bytes = (sb_u64s_t) { .items = plan->optim_bytes, .count = plan->ranks };
            s_ckpt_files (plan, ps);
            ps->ckpt_root = self->ckpt_root;
            sess_broadcast (self, &start);
            if (!read)
                written = k;    /* begun: its files may be there */
            snprintf (what, sizeof what, "%s checkpoint %llu", read ? "reading" : "writing", (unsigned long long) k);
            sb_live_phase (self->live, ps->phase, 0, 0, 0, 0, 0, sb_now ());
            sb_progress_phase (self->progress, sb_now ());
            int pumped = sess_pump_until (self, sess_all_ranks_done, 0, what);
            sb_live_phase_end (self->live, NAN, sb_now ());
            sb_progress_end_phase (self->progress, sb_now ());
            if (pumped != 0)
                break;
            /* written before it is read back for the log line (between
             * checkpoints: no rank's timing waits for it) */
            if (sb_resultdb_close_ckpt (self->o->db, self->run_id, seq, plan->dlio_bytes, c->rank_sync) != 0
                || sb_resultdb_flush (self->o->db) != 0
                || sb_resultdb_sync (self->o->db) != 0) {
                sess_fail (self, "cannot record checkpoint %llu: %s", (unsigned long long) k, sb_resultdb_errmsg (self->o->db));
                break;
            }
            sb_ckpt_totals_t t;
            if (sb_resultdb_ckpt_totals (self->o->db, self->run_id, seq, &t) == 1)
                sb_info ("checkpoint %s %llu/%llu: %lld bytes in %.3f s (slowest rank), %.3f GiB/s; DLIO's: %lld bytes"
                         " in %.3f s (rank 0%s), %.3f GiB/s", self->ckpt_op, (unsigned long long) k,
                         (unsigned long long) n, (long long) t.bytes, t.duration_s, t.gib_per_s,
                         (long long) t.dlio_bytes, t.dlio_duration_s, c->rank_sync ? ", rank_sync" : "",
                         t.dlio_gib_per_s);
        }
    }
    self->phase = SESS_PHASE_NONE;
    s_left_behind (self, written);
    sess_end_run (self);
    return self->failed ? -1 : 0;
}
