/* admission: the workers of the session.
 *
 * HELLO/WELCOME (the workload each worker gets, its ranks), READY (its
 * clock offset, its preflight failures), the registry of workers (by
 * identity, host, pid), lost workers and why (stalls of the coordinator
 * itself, srun ending), the join timeout's detail, and the end of the
 * session (BYE or ABORT to every worker). */
#include "session_internal.h"
#include "distribution.h"
#include "dlio_tf.h"
#include "dlio_metrics.h"
#include "host_proc.h"
#include "launch.h"
#include "log.h"
#include "util.h"
#include "wire.h"
#include "sample_range.h"
#include "sampler.h"
#include "loader_depth.h"
#include "sampler_kind.h"
#include "sb_version.h"

#include <czmq.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>

/* how long a lost local worker is waited for to be reapable (sess_lost) */
#define S_REAP_WAIT_S 0.2

/* FNV-1a of a ROUTER identity's bytes */
static size_t
s_identity_hash (zframe_t *identity)
{
    const uint8_t *b = zframe_data (identity);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0, n = zframe_size (identity); i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return (size_t) h;
}

sess_worker_t *
sess_worker_by_identity (sess_t *self, zframe_t *identity)
{
    if (!self->by_identity)
        return NULL;
    size_t mask = self->by_identity_size - 1;
    for (size_t h = s_identity_hash (identity) & mask;; h = (h + 1) & mask) {
        uint32_t at = self->by_identity[h];
        if (!at)
            return NULL;
        if (zframe_eq (self->workers[at - 1].identity, identity))
            return &self->workers[at - 1];
    }
}

/* Index worker w by its identity (the table is made at the first, sized
 * for every expected worker). Returns 0, or -1 out of memory. */
static int
s_index_identity (sess_t *self, sess_worker_t *w)
{
    if (!self->by_identity) {
        size_t size = 16;
        while (size < 2 * self->expected + 2)
            size *= 2;
        if (!(self->by_identity = calloc (size, sizeof *self->by_identity)))
            return -1;
        self->by_identity_size = size;
    }
    size_t mask = self->by_identity_size - 1, h = s_identity_hash (w->identity) & mask;
    while (self->by_identity[h])
        h = (h + 1) & mask;
    self->by_identity[h] = (uint32_t) (w->id + 1);
    return 0;
}

/* A worker that joined as host and is not gone (ssh children: one per host). */
sess_worker_t *
sess_worker_by_host (sess_t *self, const char *host)
{
    sess_worker_t *gone = NULL;
    for (size_t i = 0; i < self->nworkers; i++)
        if (!strcmp (self->workers[i].host, host)) {
            if (!self->workers[i].gone)
                return &self->workers[i];
            gone = &self->workers[i];
        }
    return gone;
}

sess_worker_t *
sess_worker_by_pid (sess_t *self, pid_t pid)
{
    for (size_t i = 0; i < self->nworkers; i++)
        if (self->workers[i].pid == (uint64_t) pid)
            return &self->workers[i];
    return NULL;
}

const char *
sess_rank_span (const sess_worker_t *w, char *buf, size_t size)
{
    if (w->ranks == 1)
        snprintf (buf, size, "rank %llu", (unsigned long long) w->first_rank);
    else
        snprintf (buf, size, "ranks %llu-%llu", (unsigned long long) w->first_rank,
                  (unsigned long long) (w->first_rank + w->ranks - 1));
    return buf;
}

static void
s_clock_text (double t, char *buf, size_t size)
{
    time_t secs = (time_t) t;
    struct tm tm;
    localtime_r (&secs, &tm);
    snprintf (buf, size, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec, (int) ((t - (double) secs) * 1000));
}

/* A worker that can no longer be reached: its ranks, host, pid and the time
 * it was last heard from go into the failure and an errors row. */
void
sess_lost (sess_t *self, sess_worker_t *w, const char *op, const char *why)
{
    /* a local worker that died (a SIGKILL, the OOM killer) is usually found
     * by its closed connection a moment before it can be reaped: its exit
     * status says more than "connection closed". Waited for only while
     * the run has not failed yet: many workers lost at once cost one wait */
    int status;
    if (self->launcher && w->pid <= (uint64_t) INT_MAX
        && sb_launcher_await_local (self->launcher, (pid_t) w->pid, self->failed ? 0 : S_REAP_WAIT_S, &status)) {
        sess_local_ended (self, w, (pid_t) w->pid, status);
        return;
    }
    char span[64], when[32], detail[1024], note[384], relay[96];
    s_clock_text (w->last_seen, when, sizeof when);
    sess_stall_note (self, note, sizeof note);
    sess_relay_note (self, w, relay, sizeof relay);
    snprintf (detail, sizeof detail, "%s, last contact at %s%s", why, when, note);
    w->gone = 1;
    sess_record_error (self, (int64_t) w->first_rank, w->host, op, NULL, 0, detail);
    sess_fail (self, "lost worker %llu on %s (%s, pid %llu)%s: %s", (unsigned long long) w->id, w->host,
               sess_rank_span (w, span, sizeof span), (unsigned long long) w->pid, relay, detail);
}

/* Tell a peer why it is refused (best effort: it may be gone). */
static void
s_reject (sess_t *self, zframe_t *identity, const char *host, const char *reason)
{
    sb_msg_t reply = { .type = SB_MSG_REJECT };
    reply.u.reject.reason = (char *) reason;
    if (sb_wire_send (self->router, identity, &reply) != 0)
        sb_debug ("the refused worker on %s could not be told: %s", host, zmq_strerror (zmq_errno ()));
}

void
sess_on_hello (sess_t *self, zframe_t *identity, sb_msg_hello_t *m)
{
    sb_msg_t reply = { 0 };
    /* the host name is printed and recorded everywhere: one with a control
     * byte (an escape sequence, a newline that would start a forged log
     * line) is shown escaped and refused */
    char host[4 * sizeof self->workers[0].host];
    sb_log_escape (m->host, host, sizeof host);
    if (self->nworkers >= self->expected) {
        sb_warn ("refused worker on %s (pid %llu): run is full", host, (unsigned long long) m->pid);
        s_reject (self, identity, host, "the run already has all its workers");
        return;
    }
    if (!*m->host || strlen (m->host) >= sizeof self->workers[0].host || sb_log_needs_escape (m->host)) {
        char span[64], why[1024];
        sess_worker_t next = { .first_rank = self->nworkers * self->ranks_per_worker, .ranks = self->ranks_per_worker };
        snprintf (why, sizeof why, "host name '%s' is %s (shardbench-worker --host NAME names the host)", host,
                  !*m->host ? "empty" : sb_log_needs_escape (m->host)
                  ? "not printable: it holds control characters or bytes that are not UTF-8 (shown escaped)"
                  : "longer than 255 bytes");
        s_reject (self, identity, host, why);
        sess_fail (self, "refused the worker for %s (pid %llu): %s", sess_rank_span (&next, span, sizeof span),
                   (unsigned long long) m->pid, why);
        return;
    }
    /* a build of another version but the same protocol works; a different
     * protocol never reaches here (loop.c refuses it and fails the run) */
    char software[256];
    sb_log_escape (m->software, software, sizeof software);
    if (strcmp (m->software ? m->software : "", SB_WORKER_SOFTWARE) != 0)
        sb_warn ("worker on %s (pid %llu) is %s, this coordinator is shardbench %s (build %s): both speak protocol"
                 " version %d, the run goes on (another build may measure differently)", host,
                 (unsigned long long) m->pid, software, SB_VERSION, SB_BUILD, SB_PROTO_VERSION);
    sess_worker_t *w = &self->workers[self->nworkers];
    memset (w, 0, sizeof *w);
    /* its host's description: bounded here too, as a worker sends it */
    if (!(w->identity = zframe_dup (identity)) || !(w->cpuinfo = strdup (m->cpuinfo ? m->cpuinfo : ""))
        || !(w->meminfo = strdup (m->meminfo ? m->meminfo : ""))) {
        zframe_destroy (&w->identity);
        free (w->cpuinfo);
        w->cpuinfo = NULL;
        sess_fail (self, "out of memory admitting the worker on %s (pid %llu)", host, (unsigned long long) m->pid);
        return;
    }
    if (sb_host_proc_bound (w->cpuinfo, SB_HOST_PROC_MAX) + sb_host_proc_bound (w->meminfo, SB_HOST_PROC_MAX))
        sb_warn ("worker on %s (pid %llu) sent a /proc/cpuinfo or /proc/meminfo over %d bytes: cut after its last"
                 " whole line within them", host, (unsigned long long) m->pid, SB_HOST_PROC_MAX);
    sb_log_escape (m->processor, w->processor, sizeof w->processor);
    snprintf (w->host, sizeof w->host, "%s", m->host);
    w->pid = m->pid;
    w->cores = m->cores;
    w->memory = m->memory;
    w->id = self->nworkers;
    w->ranks = self->ranks_per_worker;
    w->first_rank = w->id * self->ranks_per_worker;
    w->last_seen = sb_now ();
    if (s_index_identity (self, w) != 0) {
        zframe_destroy (&w->identity);
        free (w->cpuinfo);
        free (w->meminfo);
        w->cpuinfo = w->meminfo = NULL;
        sess_fail (self, "out of memory admitting the worker on %s (pid %llu)", host, (unsigned long long) m->pid);
        return;
    }
    self->nworkers++;

    const sb_workload_t *wl = self->o->wl;
    sb_msg_welcome_t *r = &reply.u.welcome;
    reply.type = SB_MSG_WELCOME;
    r->worker = w->id;
    r->first_rank = w->first_rank;
    r->ranks = w->ranks;
    r->total_ranks = self->o->accelerators;
    r->heartbeat_ms = (uint64_t) (wl->heartbeat_interval_s * 1000);
    r->timeout_ms = (uint64_t) (wl->heartbeat_timeout_s * 1000);
    r->data_root = self->catalog_info.prefix;
    r->format = (char *) wl->format;
    r->file_prefix = (char *) wl->file_prefix;
    r->num_files = wl->num_files_train;
    r->num_subfolders = wl->num_subfolders_train;
    r->samples_per_file = wl->num_samples_per_file;
    r->record_length = wl->record_length_bytes;
    r->record_stdev = wl->record_length_bytes_stdev;
    r->parquet_columns = (char *) wl->parquet_columns;
    r->parquet_row_group = wl->parquet_row_group;
    r->parquet_compression = (char *) wl->compression;
    r->parquet_read_columns = (char *) wl->parquet_read_columns;
    r->batch_size = wl->batch_size;
    r->read_threads = wl->read_threads;
    r->prefetch_size = wl->prefetch_size;
    r->computation_time = wl->computation_time;
    r->compute_dist = (char *) sb_dist_name (wl->compute.type);
    r->compute_a = wl->compute.a;
    r->compute_b = wl->compute.b;
    r->sync = (char *) sb_workload_sync_name (wl->sync);
    r->seed = self->o->seed;
    /* tfrecord with tensorflow: each file read front to back in reads of
     * TFRecordDataset's buffer size (the engines read a whole file in reads
     * of the io buffer) */
    uint64_t tf_read = sb_dlio_tf_read_size (wl);
    r->io_buffer = tf_read ? tf_read : wl->io_buffer_bytes;
    r->verify = (uint64_t) wl->verify;
    r->keys_page = wl->keys_page;
    r->data_probe = self->probe;
    r->stall_timeout_ms = (uint64_t) (wl->stall_timeout_s * 1000);
    r->odirect = (uint64_t) wl->odirect;
    /* only an engine that reads through the page cache has pages to drop;
     * elsewhere the worker's bit per object would be memory for nothing */
    r->drop_page_cache = (uint64_t) (wl->drop_page_cache && (sb_storage_caps (&wl->storage) & SB_ENGINE_PAGE_CACHE));
    r->metric_steps = sb_dlio_nominal_steps (wl->num_samples_per_file, wl->num_files_train, wl->batch_size,
                                             self->o->accelerators, wl->total_training_steps);
    r->metric_exclude_start = wl->exclude_start_steps;
    r->metric_exclude_end = wl->exclude_end_steps;
    r->sampler = (char *) sb_sampler_kind_name (sb_sampler_kind_for (wl));
    r->expected = wl->num_files_train;
    r->sample_shuffle = (uint64_t) wl->sample_shuffle;
    r->file_shuffle = (uint64_t) wl->file_shuffle;
    r->seed_change_epoch = (uint64_t) wl->seed_change_epoch;
    r->max_steps = wl->total_training_steps > 0 ? (uint64_t) wl->total_training_steps : 0;
    r->loader_threads = sb_loader_threads (wl->read_threads, w->cores, w->ranks);
    r->trace = (char *) wl->trace;
    r->record_element_type = (char *) wl->record_element_type;
    r->record_dims = (sb_u64s_t) { wl->record_ndims, (uint64_t *) wl->record_dims };
    /* the evaluation set: datagen writes it, eval phases read it */
    r->eval_files = wl->num_files_eval;
    r->eval_subfolders = wl->num_subfolders_eval;
    r->eval_batch_size = wl->batch_size_eval;
    r->eval_time = wl->eval_time;
    r->eval_time_stdev = wl->eval_time_stdev;
    /* where DLIO's reader sleeps it (sess_sampler_new warns where it does not) */
    sb_dist_t pre = sb_preprocess_applies (sb_sampler_kind_for (wl), wl) ? wl->preprocess
                                                                          : (sb_dist_t) { SB_DIST_CONSTANT, 0, 0 };
    r->preprocess_dist = (char *) sb_dist_name (pre.type);
    r->preprocess_a = pre.a;
    r->preprocess_b = pre.b;
    if (sb_storage_to_welcome (&wl->storage, r) != 0) {
        sess_fail (self, "out of memory");
        return;
    }
    r->loader_depth = sb_loader_depth (wl);     /* DLIO's iterable readers' reads in flight per loader thread */
    r->loader_stagger = sb_loader_stagger_s (wl);   /* and their workers' staggered starts */
    r->parquet_coalesce = sb_loader_coalesce (wl);  /* and the row groups of one read */
    sb_loader_footers (wl, &r->parquet_footer_tail, &r->parquet_footer_batch);
    if (sb_live_join (self->live, w->first_rank, w->ranks, w->host, sb_now ()) != 0) {
        sess_fail (self, "out of memory admitting the worker on %s (pid %llu)", w->host, (unsigned long long) w->pid);
        return;
    }
    char span[64];
    sb_info ("worker %llu joined: %s pid %llu, %s", (unsigned long long) w->id, w->host,
             (unsigned long long) w->pid, sess_rank_span (w, span, sizeof span));
    w->welcome_sent_at = sb_now ();
    sess_send (self, w, &reply);   /* borrowed strings: only the endpoints array is ours */
    free (r->endpoints.items);
    sess_barrier_admit (self, w);
}

void
sess_hold_hello (sess_t *self, zframe_t *identity, sb_msg_t *msg)
{
    for (size_t i = 0; i < self->nheld; i++)
        if (zframe_eq (self->held[i].identity, identity)) {
            /* said again (its connection came back): the first one stands */
            zframe_destroy (&identity);
            sb_proto_fini (msg);
            return;
        }
    sess_held_t *grown = self->nheld < self->expected ? realloc (self->held, (self->nheld + 1) * sizeof *grown) : NULL;
    if (!grown) {
        /* more than the run's workers (or no memory): as a full run does */
        char host[1024];
        sb_log_escape (msg->u.hello.host, host, sizeof host);
        sb_warn ("refused worker on %s (pid %llu): run is full", host, (unsigned long long) msg->u.hello.pid);
        s_reject (self, identity, host, "the run already has all its workers");
        zframe_destroy (&identity);
        sb_proto_fini (msg);
        return;
    }
    self->held = grown;
    self->held[self->nheld].identity = identity;
    self->held[self->nheld].hello = *msg;
    memset (msg, 0, sizeof *msg);
    self->nheld++;
    char host[1024];
    sb_debug ("HELLO from %s (pid %llu) held until the dataset is listed",
              sb_log_escape (self->held[self->nheld - 1].hello.u.hello.host, host, sizeof host),
              (unsigned long long) self->held[self->nheld - 1].hello.u.hello.pid);
    sb_msg_t hb = { .type = SB_MSG_HEARTBEAT };
    if (sb_wire_send (self->router, identity, &hb) != 0)
        sb_debug ("the held worker on %s could not be sent a heartbeat: %s", host, zmq_strerror (zmq_errno ()));
}

void
sess_heartbeat_held (sess_t *self)
{
    sb_msg_t hb = { .type = SB_MSG_HEARTBEAT };
    for (size_t i = 0; i < self->nheld; i++)
        if (sb_wire_send (self->router, self->held[i].identity, &hb) != 0)
            sb_debug ("a held worker could not be sent a heartbeat: %s", zmq_strerror (zmq_errno ()));
}

void
sess_admit_held (sess_t *self)
{
    self->holding = 0;
    for (size_t i = 0; i < self->nheld; i++) {
        if (!self->failed)
            sess_on_hello (self, self->held[i].identity, &self->held[i].hello.u.hello);
        zframe_destroy (&self->held[i].identity);
        sb_proto_fini (&self->held[i].hello);
    }
    free (self->held);
    self->held = NULL;
    self->nheld = 0;
}

void
sess_release_held (sess_t *self, const char *reason)
{
    self->holding = 0;
    for (size_t i = 0; i < self->nheld; i++) {
        if (self->router)
            s_reject (self, self->held[i].identity, "a held worker", reason);
        zframe_destroy (&self->held[i].identity);
        sb_proto_fini (&self->held[i].hello);
    }
    free (self->held);
    self->held = NULL;
    self->nheld = 0;
}

/* The worker's clock offset from one round trip: WELCOME sent (c0, ours),
 * received (w1, its), READY sent (w2, its), received (c3, ours). The offset
 * is right within half the round trip (c3 - c0) - (w2 - w1). */
static void
s_measure_clock (sess_t *self, sess_worker_t *w, const sb_msg_ready_t *m)
{
    double c0 = w->welcome_sent_at, c3 = sb_now (), w1 = m->welcome_received_at, w2 = m->sent_at;
    double rtt = (c3 - c0) - (w2 - w1), offset = ((w1 - c0) + (w2 - c3)) / 2;
    if (!(isfinite (w1) && isfinite (w2) && w1 > 0 && w2 >= w1 && rtt > -1e-3 && isfinite (offset))) {
        sb_warn ("worker %llu on %s sent clock times that make no sense (WELCOME received at %.6f, READY sent at"
                 " %.6f): its times are taken as they are", (unsigned long long) w->id, w->host, w1, w2);
        return;
    }
    w->clock_offset = offset;
    w->clock_rtt = rtt > 0 ? rtt : 0;
    w->clock_known = 1;
    if (fabs (offset) > 0.05 && fabs (offset) > w->clock_rtt)
        sb_warn ("worker %llu on %s: its clock is %.3f s %s the coordinator's (measured within %.1f ms): its rank"
                 " times are corrected", (unsigned long long) w->id, w->host, fabs (offset),
                 offset > 0 ? "ahead of" : "behind", w->clock_rtt * 1000 / 2);
}

/* READY: the worker's clock offset; its preflight failures become rows of
 * one table. */
void
sess_on_ready (sess_t *self, sess_worker_t *w, const sb_msg_ready_t *m)
{
    if (m->worker != w->id) {
        /* a READY speaks for the worker it names: one sent for another
         * worker neither counts for that one nor for the sender */
        self->rejected_frames++;
        sb_warn ("READY for worker %llu from worker %llu on %s (pid %llu) ignored: not its id",
                 (unsigned long long) m->worker, (unsigned long long) w->id, w->host, (unsigned long long) w->pid);
        return;
    }
    w->ready = 1;
    s_measure_clock (self, w, m);
    for (size_t i = 0; i < m->causes.count && i < m->failed_endpoints.count; i++) {
        char row[2048], endpoint[512], cause[1400];   /* the worker's text, escaped: one line each */
        sb_log_escape (m->failed_endpoints.items[i], endpoint, sizeof endpoint);
        sb_log_escape (m->causes.items[i], cause, sizeof cause);
        int n = snprintf (row, sizeof row, "  %-20s %-28s %s\n", w->host, endpoint, cause);
        if (n <= 0)
            continue;
        if ((size_t) n >= sizeof row)
            n = (int) sizeof row - 1;     /* snprintf says what it would have written */
        char *grown = realloc (self->preflight, self->preflight_len + (size_t) n + 1);
        if (!grown) {   /* a preflight failure must not be lost: the run would go on */
            sess_fail (self, "out of memory recording the preflight failure of %s on %s: %s", endpoint, w->host, cause);
            return;
        }
        self->preflight = grown;
        memcpy (self->preflight + self->preflight_len, row, (size_t) n + 1);
        self->preflight_len += (size_t) n;
    }
}

/* The srun step running every worker (--slurm) ended: before they all
 * joined, or while some still run, the run fails naming srun, with the
 * tail of its stderr (which carries the workers' own). */
void
sess_srun_ended (sess_t *self, pid_t pid, const char *how)
{
    size_t running = 0;
    for (size_t i = 0; i < self->nworkers; i++)
        running += !self->workers[i].gone;
    if (self->nworkers == self->expected && running == 0)
        return;     /* every worker was already reported gone */
    char out[512];
    sb_launcher_output (self->launcher, pid, out, sizeof out);
    if (self->nworkers < self->expected)
        sess_fail (self, "srun ended before all %zu workers joined (%zu did; %s)%s%s", self->expected, self->nworkers,
                   how, *out ? ": " : "", out);
    else {
        for (size_t i = 0; i < self->nworkers; i++)
            if (!self->workers[i].gone) {
                self->workers[i].gone = 1;
                sess_record_error (self, (int64_t) self->workers[i].first_rank, self->workers[i].host, "worker", NULL, 0,
                                   how);
            }
        sess_fail (self, "srun ended while %zu worker(s) still ran (%s)%s%s", running, how, *out ? ": " : "", out);
    }
}

/* For a failure that names a worker: when the coordinator itself stalled
 * lately for longer than the heartbeat timeout, say so (the worker most
 * likely gave up on the coordinator, not the other way round). "" else. */
void
sess_stall_note (sess_t *self, char *buf, size_t size)
{
    buf[0] = '\0';
    double timeout = self->o->wl->heartbeat_timeout_s;
    if (self->stalled_s <= 0 || self->stalled_s < timeout / 2 || sb_now () - self->stalled_until > 2 * timeout + 1)
        return;
    char until[32];
    s_clock_text (self->stalled_until, until, sizeof until);
    snprintf (buf, size, "; the coordinator itself did not run for %.1f s until %s (stopped, swapped out or busy)%s",
              self->stalled_s, until, self->stalled_s >= timeout
              ? ", longer than the heartbeat timeout: the worker most likely gave up on the coordinator" : "");
}

/* Append text to buf (NUL-terminated, size bytes), cut at the end. */
static void
s_append (char *buf, size_t size, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));


static void
s_append (char *buf, size_t size, const char *fmt, ...)
{
    size_t n = strlen (buf);
    if (n + 1 >= size)
        return;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf + n, size - n, fmt, ap);
    va_end (ap);
}

/* Who joined and who is missing, for a join timeout: the workers that said
 * HELLO (host and pid), those among them still in their preflight, and the
 * ones never heard from, by host (--hosts) or pid (--local) when known. */
void
sess_join_detail (sess_t *self, char *buf, size_t size)
{
    buf[0] = '\0';
    s_append (buf, size, ": %zu of %zu joined", self->nworkers, self->expected);
    for (size_t i = 0; i < self->nworkers && i < 16; i++)
        s_append (buf, size, "%s%s pid %llu", i ? ", " : " (", self->workers[i].host,
                  (unsigned long long) self->workers[i].pid);
    if (self->nworkers > 16)
        s_append (buf, size, ", ... %zu more", self->nworkers - 16);
    if (self->nworkers)
        s_append (buf, size, ")");
    size_t unready = 0;
    for (size_t i = 0; i < self->nworkers; i++)
        unready += !self->workers[i].ready;
    if (unready)
        s_append (buf, size, "; %zu of them did not finish their preflight (READY)", unready);
    if (self->nworkers >= self->expected)
        return;
    size_t listed = 0, missing = self->expected - self->nworkers;
    if (self->o->nhosts) {
        s_append (buf, size, "; missing: ");
        for (size_t h = 0; h < self->o->nhosts; h++) {
            size_t i = 0;
            while (i < self->nworkers && strcmp (self->workers[i].host, self->o->hosts[h]) != 0)
                i++;
            if (i < self->nworkers)
                continue;
            if (listed < 16)
                s_append (buf, size, "%s%s", listed ? ", " : "", self->o->hosts[h]);
            listed++;
        }
        if (listed > 16)
            s_append (buf, size, ", ... %zu more", listed - 16);
    }
    else if (self->launcher && self->o->local_workers) {
        s_append (buf, size, "; missing: local worker pid ");
        for (size_t c = 0; c < sb_launcher_count (self->launcher); c++) {
            pid_t pid = sb_launcher_pid (self->launcher, c);
            if (sess_worker_by_pid (self, pid))
                continue;
            if (listed < 16)
                s_append (buf, size, "%s%d", listed ? ", " : "", (int) pid);
            listed++;
        }
        if (listed > 16)
            s_append (buf, size, ", ... %zu more", listed - 16);
        if (sb_launcher_pending (self->launcher))   /* they start as earlier ones become READY */
            s_append (buf, size, "; %zu not started yet", sb_launcher_pending (self->launcher));
    }
    else
        s_append (buf, size, "; %zu worker(s) started elsewhere never said HELLO (is `shardbench-worker --coordinator"
                  " %s` running on every node, can it reach this address?)", missing, self->endpoint);
}

int
sess_all_joined (sess_t *self)
{
    if (self->nworkers < self->expected)
        return 0;
    for (size_t i = 0; i < self->nworkers; i++)
        if (!self->workers[i].ready)
            return 0;
    return sess_barrier_relays_ready (self);
}

void
sess_shutdown_workers (sess_t *self)
{
    sb_msg_t msg = { 0 };
    if (self->failed) {
        msg.type = SB_MSG_ABORT;
        msg.u.abort.reason = self->failure;
    }
    else {
        msg.type = SB_MSG_BYE;
        msg.u.bye.reason = "run finished";
    }
    /* Best effort: a worker that is already gone cannot be told, and that
     * must not turn a finished run into a failed one. */
    for (size_t i = 0; i < self->nworkers; i++)
        if (!self->workers[i].gone && sb_wire_send (self->router, self->workers[i].identity, &msg) != 0)
            sb_debug ("worker %zu on %s could not be told the session ended: %s", i, self->workers[i].host,
                      zmq_strerror (zmq_errno ()));
    if (self->launcher)
        sb_launcher_stop (self->launcher, 5.0);
}
