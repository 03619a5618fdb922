/* trainer: every local rank's training loop as a state machine. */
#include "trainer.h"
#include "dataset.h"
#include "dlio_metrics.h"
#include "distribution.h"
#include "histogram.h"
#include "log.h"
#include "reader.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char    *key;           /* owned; NULL: the DLIO name of object `name` */
    uint64_t name;
    uint64_t offset, length;
} s_sample_t;

/* One rank's epoch. Counters are positions in the rank's shard (0..k). */
typedef struct {
    uint64_t       rank;
    sb_reader_t   *reader;          /* owned */
    s_sample_t    *queue;           /* ring of received, not yet submitted samples (owned) */
    size_t         qhead, qcount;
    uint64_t       requested, received, submitted, completed, step, bytes;
    uint64_t       resident_bytes, checked_bytes;   /* page-cache residency sampled before reads */
    int            running;         /* in an epoch, RANK_DONE not sent */
    int            computing;       /* a batch is being computed until compute_until */
    int            waiting_go;      /* at the barrier of `step` */
    double         compute_started, compute_until;
    double         compute_length;  /* the batch's drawn compute seconds (exact, unlike until - started) */
    double         started, first_step_end, compute_after_first, compute_all;
    double         io_wait, barrier, wait_since, barrier_since;
    /* DLIO's per-step sums (common/dlio_metrics.h): a step's load starts at
     * the rank's last release (load_since), its proc time ends with its compute */
    double         load_since, metric_compute, head_proc, tail_proc;
    uint64_t       metric_steps;
    sb_histogram_t barrier_latency; /* STEP sent to GO received, microseconds */
    sb_histogram_t read_latency;    /* the I/O engine's time per sample read, microseconds */
    sb_interval_t  interval;
} s_rank_t;

struct sb_trainer {
    const sb_msg_welcome_t *cfg;
    sb_storage_type_t storage_type;
    sb_sender_t      out;
    sb_dataset_t     ds;            /* names of samples sent as DLIO indices */
    s_rank_t        *ranks;         /* cfg->ranks of them (owned) */
    size_t           nranks;
    size_t           qcap;          /* queue slots per rank: two pages */
    int              needs_keys;    /* the engines need names (all alike) */
    /* the epoch */
    uint64_t         epoch, k, batches, page, window;
    sb_dlio_window_t metric;        /* DLIO's metric window over this epoch's steps */
    int              step_sync;
    size_t           running;       /* ranks that have not sent RANK_DONE */
    uint64_t         barrier_step;  /* step whose barrier the ranks are reaching */
    size_t           arrivals;      /* ranks at barrier_step */
    int              failed;        /* an ERROR was sent: nothing more this epoch */
    double           stall_s;       /* shardbench.stall_timeout_s (0: never) */
    double           next_stall_check;
};

/* ENDPOINT_STATS of rank r: its engine's counters since the phase began,
 * asked for (at the end of its epoch) or sent behind a failed read. */
static void
s_report_endpoint_counters (sb_trainer_t *self, s_rank_t *r, int after_failure)
{
    sb_reader_endpoint_t *eps = calloc (SB_MAX_ENDPOINTS, sizeof *eps);
    int n = !eps ? -1
            : after_failure ? sb_reader_failure_stats (r->reader, eps, SB_MAX_ENDPOINTS)
                            : sb_reader_endpoint_stats (r->reader, eps, SB_MAX_ENDPOINTS);
    if (n < 0)
        sb_warn ("rank %llu: per-endpoint counters of epoch %llu are lost", (unsigned long long) r->rank,
                 (unsigned long long) self->epoch);
    else
        sb_report_endpoints (&self->out, r->rank, eps, (size_t) n);
    free (eps);
}

static void
s_fail (sb_trainer_t *self, const s_rank_t *r, const char *op, const char *target, int errno_val,
        const char *message, const sb_read_result_t *s3)
{
    sb_report_failure (&self->out, r ? r->rank : self->cfg->first_rank, op, target, errno_val, message, s3);
    self->failed = 1;
}

static void
s_queue_clear (sb_trainer_t *self, s_rank_t *r)
{
    for (size_t i = 0; i < r->qcount; i++)
        free (r->queue[(r->qhead + i) % self->qcap].key);
    r->qhead = r->qcount = 0;
}

sb_trainer_t *
sb_trainer_new (const sb_msg_welcome_t *cfg, const sb_storage_cfg_t *storage, const sb_sender_t *out, char *err,
                size_t err_size)
{
    sb_trainer_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->cfg = cfg;
    self->storage_type = storage->type;
    self->out = *out;
    self->ds = (sb_dataset_t) {
        .prefix = cfg->file_prefix, .format = cfg->format, .files = cfg->num_files, .subfolders = cfg->num_subfolders,
        .samples_per_file = cfg->samples_per_file, .record_length = cfg->record_length,
        .record_stdev = cfg->record_stdev, .seed = cfg->seed, .parquet_columns = cfg->parquet_columns, .parquet_compression = cfg->parquet_compression,
        .parquet_row_group = cfg->parquet_row_group,
    };
    self->page = cfg->keys_page ? cfg->keys_page : 256;
    self->stall_s = (double) cfg->stall_timeout_ms / 1000.0;
    self->qcap = (size_t) (2 * self->page);
    self->ranks = calloc ((size_t) cfg->ranks, sizeof (s_rank_t));
    if (!self->ranks) {
        snprintf (err, err_size, "out of memory for %llu ranks", (unsigned long long) cfg->ranks);
        free (self);
        return NULL;
    }
    for (uint64_t i = 0; i < cfg->ranks; i++, self->nranks++) {
        s_rank_t *r = &self->ranks[i];
        r->rank = cfg->first_rank + i;
        char why[512];
        r->reader = sb_reader_new (storage, cfg->data_root, (size_t) cfg->read_threads, (size_t) cfg->io_buffer,
                                   (int) cfg->verify, cfg->seed, why, sizeof why);
        r->queue = calloc (self->qcap, sizeof (s_sample_t));
        if (!r->reader || !r->queue) {
            snprintf (err, err_size, "rank %llu: %s", (unsigned long long) r->rank,
                      r->reader ? "out of memory for the key queue" : why);
            self->nranks++;
            sb_trainer_destroy (&self);
            return NULL;
        }
        sb_dataset_t ds = { .prefix = cfg->file_prefix, .format = cfg->format, .files = cfg->num_files,
                            .subfolders = cfg->num_subfolders, .samples_per_file = cfg->samples_per_file,
                            .record_length = cfg->record_length, .record_stdev = cfg->record_stdev,
                            .seed = cfg->seed, .parquet_columns = cfg->parquet_columns, .parquet_compression = cfg->parquet_compression,
                            .parquet_row_group = cfg->parquet_row_group };
        if (sb_reader_set_dataset (r->reader, &ds, why, sizeof why) != 0) {
            snprintf (err, err_size, "rank %llu: %s", (unsigned long long) r->rank, why);
            self->nranks++;
            sb_trainer_destroy (&self);
            return NULL;
        }
        sb_reader_set_direct_io (r->reader, (int) cfg->odirect);
        self->needs_keys = sb_reader_needs_keys (r->reader);
    }
    return self;
}

void
sb_trainer_destroy (sb_trainer_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_trainer_t *self = *self_p;
    /* stop every rank's reader, then join them all against one deadline a
     * second at a time, waking the stuck threads of all ranks together: a
     * hung mount costs the worker about 4 s, not 4 s per read thread */
    for (size_t i = 0; i < self->nranks; i++)
        sb_reader_stop (self->ranks[i].reader);
    for (;;) {
        uint64_t until = sb_mono_ns () + 1000000000ull;
        size_t waiting = 0;
        for (size_t i = 0; i < self->nranks; i++)
            waiting += sb_reader_join_until (self->ranks[i].reader, until);
        if (!waiting)
            break;
        for (size_t i = 0; i < self->nranks; i++)
            sb_reader_wake (self->ranks[i].reader);
    }
    for (size_t i = 0; i < self->nranks; i++) {
        s_rank_t *r = &self->ranks[i];
        if (r->queue)
            s_queue_clear (self, r);
        free (r->queue);
        sb_reader_destroy (&r->reader);
    }
    free (self->ranks);
    free (self);
    *self_p = NULL;
}

int
sb_trainer_start (sb_trainer_t *self, const sb_msg_phase_start_t *ps)
{
    if (self->running > 0 && !self->failed) {
        s_fail (self, NULL, "protocol", NULL, 0, "a training phase started while one is running", NULL);
        return -1;
    }
    const sb_msg_welcome_t *c = self->cfg;
    self->epoch = ps->epoch;
    self->k = ps->samples_per_rank;
    self->batches = ps->batches;
    self->window = (c->prefetch_size + 1) * c->batch_size;
    self->step_sync = strcmp (c->sync, "step") == 0;
    self->barrier_step = 0;
    self->arrivals = 0;
    self->failed = 0;
    self->running = self->nranks;
    sb_dlio_window (c->metric_steps, c->metric_exclude_start, c->metric_exclude_end, self->batches, &self->metric);
    double now = sb_now ();
    for (size_t i = 0; i < self->nranks; i++) {
        s_rank_t *r = &self->ranks[i];
        s_queue_clear (self, r);
        sb_reader_t *reader = r->reader;
        s_sample_t *queue = r->queue;
        uint64_t rank = r->rank;
        memset (r, 0, sizeof *r);
        r->rank = rank;
        r->reader = reader;
        r->queue = queue;
        r->running = 1;
        r->started = now;
        r->load_since = now;
        r->interval.next = now + 1.0;
    }
    return 0;
}

static s_rank_t *
s_rank (sb_trainer_t *self, uint64_t rank)
{
    uint64_t first = self->cfg->first_rank;
    return rank >= first && rank - first < self->nranks ? &self->ranks[rank - first] : NULL;
}

static void
s_on_keys (sb_trainer_t *self, sb_msg_keys_t *kp)
{
    s_rank_t *r = s_rank (self, kp->rank);
    size_t n = kp->offsets.count;
    if (!r || !r->running || kp->epoch != self->epoch || kp->position != r->received || n == 0
        || n != kp->lengths.count
        || !((kp->keys.count == n && kp->names.count == 0) || (kp->keys.count == 0 && kp->names.count == n))
        || r->qcount + n > self->qcap || r->received + n > r->requested) {
        char text[512];
        snprintf (text, sizeof text, "KEYS for rank %llu out of order while training epoch %llu (position %llu, %zu keys;"
                  " %llu received, %llu requested)", (unsigned long long) kp->rank, (unsigned long long) self->epoch,
                  (unsigned long long) kp->position, n, (unsigned long long) (r ? r->received : 0),
                  (unsigned long long) (r ? r->requested : 0));
        s_fail (self, r, "protocol", NULL, 0, text, NULL);
        return;
    }
    /* a key names a file under the data folder: check it before anything opens it */
    for (size_t j = 0; j < kp->keys.count; j++) {
        char why[128], text[1024];
        if (sb_dataset_check_name (kp->keys.items[j], why, sizeof why) != 0) {
            snprintf (text, sizeof text, "rank %llu: the coordinator sent object name '%s', which %s",
                      (unsigned long long) r->rank, kp->keys.items[j], why);
            s_fail (self, r, "name", kp->keys.items[j], 0, text, NULL);
            return;
        }
    }
    for (size_t j = 0; j < n; j++) {
        s_sample_t *s = &r->queue[(r->qhead + r->qcount) % self->qcap];
        s->key = kp->keys.count ? kp->keys.items[j] : NULL;
        if (kp->keys.count)
            kp->keys.items[j] = NULL;     /* moved */
        s->name = kp->names.count ? kp->names.items[j] : 0;
        s->offset = kp->offsets.items[j];
        s->length = kp->lengths.items[j];
        r->qcount++;
    }
    r->received += n;
}

static void
s_on_go (sb_trainer_t *self, const sb_msg_go_t *go)
{
    if (!self->step_sync || go->epoch != self->epoch || go->step + 1 != self->barrier_step) {
        char text[256];
        snprintf (text, sizeof text, "GO for step %llu of epoch %llu out of order (training epoch %llu, last barrier"
                  " reached: %llu)", (unsigned long long) go->step, (unsigned long long) go->epoch,
                  (unsigned long long) self->epoch, (unsigned long long) self->barrier_step);
        s_fail (self, NULL, "protocol", NULL, 0, text, NULL);
        return;
    }
    double now = sb_now ();
    for (size_t i = 0; i < self->nranks; i++) {
        s_rank_t *r = &self->ranks[i];
        if (!r->waiting_go || r->step != go->step)
            continue;
        r->barrier += now - r->barrier_since;
        sb_histogram_add (&r->barrier_latency, (uint64_t) ((now - r->barrier_since) * 1e6));
        if (r->step == 0)
            r->first_step_end = now;
        r->waiting_go = 0;
        r->step++;
        r->load_since = now;
    }
}

void
sb_trainer_on_message (sb_trainer_t *self, sb_msg_t *msg)
{
    if (self->failed)
        return;
    if (msg->type == SB_MSG_KEYS)
        s_on_keys (self, &msg->u.keys);
    else if (msg->type == SB_MSG_GO)
        s_on_go (self, &msg->u.go);
}

/* The rank computed its batch: count the compute, then wait at the barrier
 * (sync step; the worker's STEP goes when its last rank arrives) or go on. */
static void
s_end_compute (sb_trainer_t *self, s_rank_t *r, double now)
{
    /* the compute lasted computation_time: it ended at its deadline, however
     * late the loop came to it (that lateness is the worker's, not compute,
     * so it must not raise AU; from here it counts as barrier or I/O wait) */
    double spent = 0;
    if (r->computing) {
        spent = r->compute_length;
        now = r->compute_until;
    }
    r->computing = 0;
    r->interval.compute_ns += (uint64_t) (spent * 1e9);
    r->compute_all += spent;
    if (r->step > 0)
        r->compute_after_first += spent;
    /* DLIO's sums: proc[:S] and proc[N-E:] are subtracted (a step in both, twice, as
     * DLIO does; its window is then empty), compute[S:N-E] counted */
    double proc = now - r->load_since;
    if (r->step < self->metric.head_end)
        r->head_proc += proc;
    if (r->step >= self->metric.tail_start)
        r->tail_proc += proc;
    if (sb_dlio_in_window (&self->metric, r->step)) {
        r->metric_compute += spent;
        r->metric_steps++;
    }
    if (!self->step_sync) {
        if (r->step == 0)
            r->first_step_end = now;
        r->step++;
        r->load_since = now;
        return;
    }
    r->waiting_go = 1;
    r->barrier_since = now;
    if (r->step != self->barrier_step) {
        char text[256];
        snprintf (text, sizeof text, "rank reached step %llu while the worker is at step %llu",
                  (unsigned long long) r->step, (unsigned long long) self->barrier_step);
        s_fail (self, r, "protocol", NULL, 0, text, NULL);
        return;
    }
    if (++self->arrivals == self->nranks) {
        sb_msg_t m = { .type = SB_MSG_STEP };
        m.u.step.epoch = self->epoch;
        m.u.step.step = self->barrier_step;
        if (self->out.fn (self->out.ctx, &m) != 0)
            self->failed = 1;
        self->arrivals = 0;
        self->barrier_step++;
    }
}

static void
s_finish (sb_trainer_t *self, s_rank_t *r, double now)
{
    r->running = 0;
    self->running--;
    sb_report_interval (&self->out, r->rank, self->epoch, &r->interval, now, 1);
    if (self->storage_type == SB_STORAGE_S3)
        s_report_endpoint_counters (self, r, 0);
    sb_msg_t done = { .type = SB_MSG_RANK_DONE };
    sb_msg_rank_done_t *d = &done.u.rank_done;
    d->rank = r->rank;
    d->epoch = self->epoch;
    d->samples = r->completed;
    d->batches = r->step;
    d->bytes = r->bytes;
    d->started_at = r->started;
    d->finished_at = now;
    /* shardbench's own AU: compute after the first step over the time after its
     * release (DLIO's own definition travels as the metric_* sums below) */
    if (self->batches >= 2) {
        d->compute_s = r->compute_after_first;
        d->au = now > r->first_step_end ? r->compute_after_first / (now - r->first_step_end) : 0;
    }
    else {
        d->compute_s = r->compute_all;
        d->au = now > r->started ? r->compute_all / (now - r->started) : 0;
    }
    if (d->au > 1)
        d->au = 1;  /* clock granularity */
    d->io_wait_s = r->io_wait;
    d->barrier_s = r->barrier;
    d->metric_steps = r->metric_steps;
    d->metric_compute_s = r->metric_compute;
    d->head_proc_s = r->head_proc;
    d->tail_proc_s = r->tail_proc;
    size_t buckets = SB_HISTOGRAM_BUCKETS;
    while (buckets > 0 && r->barrier_latency.counts[buckets - 1] == 0)
        buckets--;
    d->barrier_latency.count = buckets;
    d->barrier_latency.items = r->barrier_latency.counts;
    buckets = SB_HISTOGRAM_BUCKETS;
    while (buckets > 0 && r->read_latency.counts[buckets - 1] == 0)
        buckets--;
    d->read_latency.count = buckets;
    d->read_latency.items = r->read_latency.counts;
    d->resident_bytes = r->resident_bytes;
    d->checked_bytes = r->checked_bytes;
    if (self->out.fn (self->out.ctx, &done) != 0)
        self->failed = 1;
}

/* Take the completions queued for a rank. Returns 1 when frames were left
 * (more than one turn's worth), else 0. */
static int
s_take_completions (sb_trainer_t *self, s_rank_t *r)
{
    for (int i = 0; i < 4096; i++) {
        sb_read_result_t res;
        int rc = sb_reader_try_take (r->reader, &res);
        if (rc == 1)
            return 0;
        if (rc < 0) {
            s_fail (self, r, "read", NULL, 0, "the I/O engine stopped answering", NULL);
            return 0;
        }
        if (res.error) {
            /* the failing rank's counters go first, so the endpoints table has them */
            if (self->storage_type == SB_STORAGE_S3 && res.endpoint[0] && !self->failed)
                s_report_endpoint_counters (self, r, 1);
            s_fail (self, r, "read", res.target, res.error > 0 ? res.error : 0, res.message, &res);
            return 0;
        }
        r->completed++;
        r->bytes += res.bytes;
        r->resident_bytes += res.resident_bytes;
        r->checked_bytes += res.checked_bytes;
        r->interval.samples++;
        r->interval.bytes += res.bytes;
        r->interval.reads++;
        r->interval.read_ns += res.latency_ns;
        sb_histogram_add (&r->read_latency, res.latency_ns / 1000);
    }
    return 1;
}

/* Compute seconds of rank r's next batch: WELCOME's train.computation_time,
 * a constant or a draw from the rank's own stream, indexed by epoch and step
 * (same seed, same times in every run; other ranks, other times). Fails the
 * rank on a distribution it does not know or bad parameters. */
static double
s_compute_time (sb_trainer_t *self, const s_rank_t *r)
{
    const sb_msg_welcome_t *c = self->cfg;
    sb_dist_t d = { SB_DIST_CONSTANT, c->computation_time, 0 };
    char why[300];
    if (c->compute_dist && *c->compute_dist) {
        d.a = c->compute_a;
        d.b = c->compute_b;
        if (sb_dist_parse (c->compute_dist, &d.type) != 0) {
            snprintf (why, sizeof why, "WELCOME names an unknown compute distribution '%.64s'", c->compute_dist);
            s_fail (self, r, "compute", NULL, 0, why, NULL);
            return 0;
        }
    }
    if (sb_dist_check (&d, why, sizeof why) != 0) {
        s_fail (self, r, "compute", NULL, 0, why, NULL);
        return 0;
    }
    return sb_dist_draw (&d, c->seed, r->rank, self->epoch << 32 | r->step);
}

/* Everything rank r can do now without waiting. */
static void
s_advance (sb_trainer_t *self, s_rank_t *r, double now)
{
    const uint64_t k = self->k, bs = self->cfg->batch_size, page = self->page;
    char name[PATH_MAX];
    for (int progress = 1; progress && !self->failed && r->running;) {
        progress = 0;
        /* 1. keep up to two pages of keys requested ahead of submission */
        while (r->requested < k && r->requested - r->submitted < 2 * page && r->requested - r->received < 2 * page) {
            uint64_t n = k - r->requested < page ? k - r->requested : page;
            if (r->requested + n - r->submitted > self->qcap)
                break;
            sb_msg_t m = { .type = SB_MSG_KEYS_REQ };
            m.u.keys_req.rank = r->rank;
            m.u.keys_req.epoch = self->epoch;
            m.u.keys_req.position = r->requested;
            m.u.keys_req.count = n;
            if (self->out.fn (self->out.ctx, &m) != 0) {
                self->failed = 1;
                return;
            }
            r->requested += n;
        }
        /* 2. submit reads within the prefetch window */
        while (r->qcount > 0 && r->submitted < r->step * bs + self->window) {
            s_sample_t *s = &r->queue[r->qhead];
            const char *key = s->key;
            if (!key && self->needs_keys) {
                if (s->name >= self->ds.files || sb_dataset_key (&self->ds, s->name, name, sizeof name) != 0) {
                    s_fail (self, r, "read", NULL, ENAMETOOLONG, "a key page named no object of the dataset", NULL);
                    return;
                }
                key = name;
            }
            if (sb_reader_submit (r->reader, key, s->offset, s->length) != 0) {
                s_fail (self, r, "read", key, errno, "cannot queue a read", NULL);
                return;
            }
            free (s->key);
            s->key = NULL;
            r->qhead = (r->qhead + 1) % self->qcap;
            r->qcount--;
            r->submitted++;
        }
        uint64_t inline_bytes = 0, inline_reads = sb_reader_take_inline (r->reader, &inline_bytes);
        if (inline_reads) {
            r->completed += inline_reads;
            r->bytes += inline_bytes;
            r->interval.samples += inline_reads;
            r->interval.bytes += inline_bytes;
            r->interval.reads += inline_reads;
            /* synthetic storage does no I/O: its reads take no time */
            r->read_latency.counts[sb_histogram_bucket (0)] += inline_reads;
            r->read_latency.total += inline_reads;
        }
        /* 3. compute the next batch when its samples are in */
        if (r->computing && now >= r->compute_until) {
            s_end_compute (self, r, now);
            progress = 1;
        }
        else if (!r->computing && !r->waiting_go && r->step < self->batches && r->completed >= (r->step + 1) * bs) {
            if (r->wait_since > 0) {
                r->io_wait += now - r->wait_since;
                r->wait_since = 0;
            }
            double compute = s_compute_time (self, r);
            if (self->failed)
                return;
            if (compute > 0) {  /* no compute: no time, AU 0 */
                r->computing = 1;
                r->compute_started = now;
                r->compute_until = now + compute;
                r->compute_length = compute;
            }
            else
                s_end_compute (self, r, now);
            progress = 1;
        }
    }
    if (self->failed || !r->running)
        return;
    if (r->step == self->batches && r->completed == k && !r->waiting_go && !r->computing) {
        s_finish (self, r, now);   /* every batch computed, the tail read */
        return;
    }
    if (!r->waiting_go && !r->computing && r->step < self->batches && r->wait_since == 0)
        r->wait_since = now;
    sb_report_interval (&self->out, r->rank, self->epoch, &r->interval, now, 0);
}

/* A read that has not moved for stall_s (checked 4 times a second) fails
 * the rank, naming the object: the thread that waits in it may never
 * return, so the reader will not wait for it either (sb_reader_destroy). */
static void
s_check_stalls (sb_trainer_t *self, double now)
{
    if (self->stall_s <= 0 || now < self->next_stall_check)
        return;
    self->next_stall_check = now + 0.25;
    for (size_t i = 0; i < self->nranks && !self->failed; i++) {
        s_rank_t *r = &self->ranks[i];
        char key[PATH_MAX], text[PATH_MAX + 512];
        double for_s = 0;
        if (!r->running || r->submitted == r->completed
            || !sb_reader_stalled (r->reader, self->stall_s, key, sizeof key, &for_s))
            continue;
        snprintf (text, sizeof text,
                  "read %s%s: no progress for %.1f s (shardbench.stall_timeout_s = %g): the open or read has not"
                  " returned (a FIFO, a stuck NFS or FUSE mount?)",
                  self->cfg->data_root, key, for_s, self->stall_s);
        s_fail (self, r, "read", key, ETIMEDOUT, text, NULL);
    }
}

double
sb_trainer_pump (sb_trainer_t *self, int *busy)
{
    *busy = 0;
    if (self->running == 0 || self->failed)
        return 0;
    s_check_stalls (self, sb_now ());
    if (self->failed)
        return 0;
    double wake = 0;
    for (size_t i = 0; i < self->nranks && !self->failed; i++) {
        s_rank_t *r = &self->ranks[i];
        if (!r->running)
            continue;
        if (self->storage_type != SB_STORAGE_SYNTHETIC)
            *busy |= s_take_completions (self, r);
        double now = sb_now ();
        s_advance (self, r, now);
        if (r->running && r->computing && (wake == 0 || r->compute_until < wake))
            wake = r->compute_until;
        if (r->running && (wake == 0 || r->interval.next < wake))
            wake = r->interval.next;
    }
    return self->failed ? 0 : wake;
}

size_t
sb_trainer_sockets (sb_trainer_t *self, zsock_t **out, size_t max)
{
    if (self->storage_type == SB_STORAGE_SYNTHETIC)
        return 0;
    size_t n = 0;   /* the ranks that expect completions; the others' sockets are not drained */
    for (size_t i = 0; i < self->nranks && n < max; i++)
        if (self->ranks[i].running && !self->failed)
            out[n++] = sb_reader_completions (self->ranks[i].reader);
    return n;
}
