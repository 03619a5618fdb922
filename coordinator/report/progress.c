/* progress: live status of a session (see progress.h). The terminal block
 * is erased before every log line and drawn again after it (the log hook),
 * so log lines never land inside it. */
#include "progress.h"

#include "log.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_SILENCE_CHECK_S 0.25      /* how often hosts are looked at for silence */

struct _sb_progress_t {
    FILE          *out;
    int            tty, off;
    double         interval_s, next_draw, next_silence_check;
    int            drawn_lines;     /* lines of the block now on the terminal */
    int            in_phase;
    const sb_live_t *live;          /* borrowed */
    uint8_t       *silent;          /* per host: warned silent and not heard since (owned) */
    size_t         silent_cap;
    double         last_now;
};

int
sb_progress_parse_mode (const char *text, sb_progress_mode_t *mode)
{
    static const char *names[] = { "auto", "tty", "plain", "off" };
    for (int i = 0; i < 4; i++)
        if (text && strcmp (text, names[i]) == 0) {
            *mode = (sb_progress_mode_t) i;
            return 0;
        }
    return -1;
}

void
sb_progress_format_eta (double seconds, char *buf, size_t size)
{
    if (!isfinite (seconds) || seconds < 0 || seconds > 359999) {
        snprintf (buf, size, "--:--");
        return;
    }
    unsigned long s = (unsigned long) (seconds + 0.5);
    if (s >= 3600)
        snprintf (buf, size, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf (buf, size, "%lu:%02lu", s / 60, s % 60);
}

/* ---------------------------------------------------------------- text */

/* appends to a fixed buffer, cutting (never overrunning) when full */
typedef struct {
    char  *buf;
    size_t size, len;
} s_text_t;

static void s_put (s_text_t *t, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_put (s_text_t *t, const char *fmt, ...)
{
    if (t->len + 1 >= t->size)
        return;
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (t->buf + t->len, t->size - t->len, fmt, ap);
    va_end (ap);
    if (n < 0)
        return;
    t->len = t->len + (size_t) n < t->size ? t->len + (size_t) n : t->size - 1;
}

static void
s_au (s_text_t *t, double au)
{
    if (isfinite (au))
        s_put (t, "%.2f%%", au);
    else
        s_put (t, "-");
}

/* a host's ranks as words: "rank R", "ranks A-B", or (its workers' ranks
 * not one run) "N ranks from R" */
static void
s_ranks_text (const sb_live_host_view_t *h, char *buf, size_t size)
{
    if (h->ranks == 1)
        snprintf (buf, size, "rank %llu", (unsigned long long) h->first_rank);
    else if (h->contiguous)
        snprintf (buf, size, "ranks %llu-%llu", (unsigned long long) h->first_rank,
                  (unsigned long long) (h->first_rank + h->ranks - 1));
    else
        snprintf (buf, size, "%llu ranks from %llu", (unsigned long long) h->ranks, (unsigned long long) h->first_rank);
}

int
sb_progress_format (const sb_live_t *live, double now, size_t host_lines, const char *sep, char *buf, size_t size)
{
    s_text_t t = { buf, size, 0 };
    if (size)
        buf[0] = '\0';
    sb_live_run_view_t v;
    sb_live_run_view (live, now, &v);
    int train = !strcmp (v.phase, "train") || !strcmp (v.phase, "eval");
    const char *unit = !strcmp (v.phase, "listing") ? "objects" : !strcmp (v.phase, "datagen") ? "files"
                     : !strcmp (v.phase, "kvcache") ? "requests" : "samples";
    char eta[32], run_eta[32];
    sb_progress_format_eta (v.epoch_eta_s, eta, sizeof eta);
    sb_progress_format_eta (v.run_eta_s, run_eta, sizeof run_eta);

    /* what: steps computed (never reads: prefetch runs ahead), or items */
    s_put (&t, "%s", v.phase);
    if (v.epochs)
        s_put (&t, " %s %llu/%llu", !strcmp (v.phase, "kvcache") ? "trial" : "epoch", (unsigned long long) v.epoch,
               (unsigned long long) v.epochs);
    if (v.steps) {
        uint64_t total = v.steps * v.ranks;
        s_put (&t, " step %llu/%llu (%.1f%%)", (unsigned long long) v.step_min, (unsigned long long) v.steps,
               total ? 100.0 * (double) v.steps_done / (double) total : 0.0);
    }
    else if (v.items_total)
        s_put (&t, ", %llu/%llu %s (%.1f%%)", (unsigned long long) v.items_done, (unsigned long long) v.items_total,
               unit, 100.0 * (double) v.items_done / (double) v.items_total);
    else
        s_put (&t, ", %llu %s", (unsigned long long) v.items_done, unit);
    s_put (&t, ", ETA %s", eta);
    if (v.run_eta_s >= 0)
        s_put (&t, " (run %s)", run_eta);

    /* rates, AU */
    double el = v.phase_elapsed_s;
    double per_s = el > 0 ? (double) (v.steps ? v.samples : v.items_done) / el : 0;
    s_put (&t, "%s%.1f %s/s, %.1f MiB/s", sep, per_s, unit, el > 0 ? (double) v.bytes / 1048576.0 / el : 0.0);
    if (train) {
        s_put (&t, ", %llu reads in flight, AU ", (unsigned long long) v.in_flight);
        s_au (&t, v.au_pct);
        if (v.run_au_epochs) {
            s_put (&t, " (run ");
            s_au (&t, v.run_au_pct);
            s_put (&t, " over %llu epoch%s)", (unsigned long long) v.run_au_epochs, v.run_au_epochs == 1 ? "" : "s");
        }
    }

    /* health (a listing runs before any worker joins) */
    s_put (&t, "%s", sep);
    if (strcmp (v.phase, "listing")) {
        s_put (&t, "%llu host%s, %llu silent, ranks done %llu/%llu", (unsigned long long) v.hosts,
               v.hosts == 1 ? "" : "s", (unsigned long long) v.silent_hosts, (unsigned long long) v.ranks_done,
               (unsigned long long) v.ranks);
        if (v.first_done_s >= 0 && v.last_done_s >= 0)
            s_put (&t, " (first at %.1f s, last at %.1f s)", v.first_done_s, v.last_done_s);
        else if (v.first_done_s >= 0)
            s_put (&t, " (first at %.1f s)", v.first_done_s);
        s_put (&t, "; ");
    }
    s_put (&t, "errors %llu, retries %llu", (unsigned long long) v.errors, (unsigned long long) v.retries);
    for (size_t e = 0; e < sb_live_endpoints (live); e++) {
        sb_live_endpoint_view_t ev;
        if (sb_live_endpoint_view (live, e, &ev) == 0 && (ev.errors || ev.retries))
            s_put (&t, "; %s: %llu errors, %llu retries", ev.endpoint, (unsigned long long) ev.errors,
                   (unsigned long long) ev.retries);
    }
    int lines = 3;

    /* hosts, slowest first: only once a phase with ranks runs */
    size_t idx[16];
    size_t n = !strcmp (v.phase, "listing") || !v.phase[0]
             ? 0 : sb_live_slowest_hosts (live, now, idx, host_lines < 16 ? host_lines : 16);
    for (size_t i = 0; i < n; i++) {
        sb_live_host_view_t h;
        if (sb_live_host_view (live, idx[i], now, &h) != 0)
            continue;
        char host[256], ranks[64];
        s_ranks_text (&h, ranks, sizeof ranks);
        s_put (&t, "%shost %s %s", sep, sb_log_escape (h.host, host, sizeof host), ranks);
        if (v.steps)
            s_put (&t, ": step %llu/%llu", (unsigned long long) h.steps_min, (unsigned long long) v.steps);
        else
            s_put (&t, ": %llu %s", (unsigned long long) h.samples, unit);
        if (train) {
            s_put (&t, ", AU ");
            s_au (&t, h.au_pct);
        }
        if (h.done_s >= 0)
            s_put (&t, ", done at %.1f s", h.done_s);
        if (h.silent_s > 0)
            s_put (&t, ", SILENT %.1f s", h.silent_s);
        lines++;
    }
    if (n < v.hosts && n)
        s_put (&t, "%s(%llu more hosts)", sep, (unsigned long long) (v.hosts - n)), lines++;
    return lines;
}

/* ---------------------------------------------------------------- drawing */

static void
s_erase (sb_progress_t *self)
{
    for (; self->drawn_lines > 0; self->drawn_lines--)
        fputs ("\033[1A\033[2K", self->out);    /* up one line, clear it */
    fflush (self->out);
}

static void
s_draw (sb_progress_t *self, double now)
{
    if (!self->in_phase || self->off)
        return;
    char buf[4096];
    if (self->tty) {
        int lines = sb_progress_format (self->live, now, SB_PROGRESS_HOST_LINES * 2, "\n", buf, sizeof buf);
        s_erase (self);
        fprintf (self->out, "%s\n", buf);
        self->drawn_lines = lines;
    }
    else {
        sb_progress_format (self->live, now, SB_PROGRESS_HOST_LINES, " | ", buf, sizeof buf);
        fprintf (self->out, "progress: %s\n", buf);
    }
    fflush (self->out);
}

static void
s_log_hook (int after, void *ctx)
{
    sb_progress_t *self = ctx;
    if (!after)
        s_erase (self);
    else if (self->last_now > 0)
        s_draw (self, self->last_now);
}

sb_progress_t *
sb_progress_new (sb_progress_mode_t mode, FILE *out, double interval_s, const sb_live_t *live)
{
    sb_progress_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->out = out;
    self->live = live;
    self->off = mode == SB_PROGRESS_OFF;
    self->tty = !self->off && (mode == SB_PROGRESS_TTY || (mode == SB_PROGRESS_AUTO && isatty (fileno (out))));
    self->interval_s = self->tty ? 0.5 : interval_s > 0 ? interval_s : 5;
    if (self->tty)
        sb_log_set_hook (s_log_hook, self);
    return self;
}

void
sb_progress_destroy (sb_progress_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_progress_t *self = *self_p;
    if (self->tty) {
        sb_log_set_hook (NULL, NULL);
        s_erase (self);
    }
    free (self->silent);
    free (self);
    *self_p = NULL;
}

void
sb_progress_phase (sb_progress_t *self, double now)
{
    if (!self)
        return;
    self->in_phase = 1;
    /* the plain cadence goes on across epochs; the block is drawn at once */
    if (self->tty)
        self->next_draw = now;
    else if (self->next_draw < now)
        self->next_draw = now + self->interval_s;
}

/* A host silent past the live model's limit is warned of once, and again
 * when it is heard from: the alert must not wait for the next plain line. */
static void
s_check_silence (sb_progress_t *self, double now)
{
    size_t hosts = sb_live_hosts (self->live);
    if (hosts > self->silent_cap) {
        uint8_t *s = realloc (self->silent, hosts);
        if (!s)
            return;
        memset (s + self->silent_cap, 0, hosts - self->silent_cap);
        self->silent = s;
        self->silent_cap = hosts;
    }
    for (size_t h = 0; h < hosts; h++) {
        sb_live_host_view_t v;
        if (sb_live_host_view (self->live, h, now, &v) != 0)
            continue;
        char host[256], ranks[64];
        sb_log_escape (v.host, host, sizeof host);
        s_ranks_text (&v, ranks, sizeof ranks);
        if (v.silent_s > 0 && !self->silent[h]) {
            self->silent[h] = 1;
            sb_warn ("host %s (%s) silent: nothing heard from it for %.1f s", host, ranks, v.silent_s);
        }
        else if (v.silent_s == 0 && self->silent[h]) {
            self->silent[h] = 0;
            sb_warn ("host %s (%s) heard again", host, ranks);
        }
    }
}

void
sb_progress_tick (sb_progress_t *self, double now)
{
    if (!self)
        return;
    self->last_now = now;
    sb_log_drain ();    /* lines of other threads (listing, writer) wait for the main thread */
    /* not while the coordinator lists: it reads no worker's message then (sess_keep_alive) */
    if (self->in_phase && now >= self->next_silence_check && strcmp (sb_live_phase_name (self->live), "listing")) {
        self->next_silence_check = now + S_SILENCE_CHECK_S;
        s_check_silence (self, now);
    }
    if (now < self->next_draw)
        return;
    self->next_draw = now + self->interval_s;
    s_draw (self, now);
}

void
sb_progress_end_phase (sb_progress_t *self, double now)
{
    if (!self)
        return;
    s_erase (self);
    if (self->in_phase && !self->off) {
        /* its last figures stay on the terminal as one line (hosts too, off a terminal) */
        char buf[4096];
        sb_progress_format (self->live, now, self->tty ? 0 : SB_PROGRESS_HOST_LINES, " | ", buf, sizeof buf);
        fprintf (self->out, "progress: %s\n", buf);
        fflush (self->out);
    }
    self->in_phase = 0;
}
