/* progress: live status of a session (see progress.h). The terminal block
 * is erased before every log line and drawn again after it (the log hook),
 * so log lines never land inside it. */
#include "progress.h"

#include "log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct _sb_progress_t {
    FILE    *out;
    int      tty;
    double   interval_s, next_draw;
    int      drawn_lines;       /* lines of the block now on the terminal */
    char     phase[32], unit[16];
    sb_progress_state_t st;
    double   started;
    uint64_t ranks;
    uint64_t *rank_done;        /* per rank: items this phase/epoch */
    char     (*rank_host)[64];
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

int
sb_progress_format (const sb_progress_state_t *s, const char *sep, char *buf, size_t size)
{
    char what[160], rates[160], health[200], eta[32];
    int n = snprintf (what, sizeof what, "%s", s->phase);
    if (s->epochs && n >= 0 && (size_t) n < sizeof what)
        n += snprintf (what + n, sizeof what - (size_t) n, " epoch %llu/%llu", (unsigned long long) s->epoch,
                       (unsigned long long) s->epochs);
    if (s->steps && n >= 0 && (size_t) n < sizeof what)
        n += snprintf (what + n, sizeof what - (size_t) n, " step %llu/%llu", (unsigned long long) s->step,
                       (unsigned long long) s->steps);
    if (n >= 0 && (size_t) n < sizeof what) {
        if (s->total)
            snprintf (what + n, sizeof what - (size_t) n, ", %llu/%llu %s (%.1f%%)", (unsigned long long) s->done,
                      (unsigned long long) s->total, s->unit, 100.0 * (double) s->done / (double) s->total);
        else
            snprintf (what + n, sizeof what - (size_t) n, ", %llu %s", (unsigned long long) s->done, s->unit);
    }
    double t = s->elapsed_s;
    double rate = t > 0 ? (double) s->done / t : 0;
    double mib = t > 0 ? (double) s->bytes / 1048576.0 / t : 0;
    sb_progress_format_eta (s->total && rate > 0 ? (double) (s->total - (s->done < s->total ? s->done : s->total))
                            / rate : -1, eta, sizeof eta);
    n = snprintf (rates, sizeof rates, "%.1f %s/s, %.1f MiB/s", rate, s->unit, mib);
    if (s->ranks && t > 0 && n >= 0 && (size_t) n < sizeof rates && !strcmp (s->phase, "train"))
        n += snprintf (rates + n, sizeof rates - (size_t) n, ", AU %.2f%%",
                       100.0 * s->compute_s / ((double) s->ranks * t));
    if (n >= 0 && (size_t) n < sizeof rates)
        snprintf (rates + n, sizeof rates - (size_t) n, ", ETA %s", eta);
    n = snprintf (health, sizeof health, "errors %llu, retries %llu", (unsigned long long) s->errors,
                  (unsigned long long) s->retries);
    if (s->slow_rank >= 0 && n >= 0 && (size_t) n < sizeof health)
        snprintf (health + n, sizeof health - (size_t) n, ", slowest rank %lld on %s (%llu %s)",
                  (long long) s->slow_rank, s->slow_host && *s->slow_host ? s->slow_host : "?",
                  (unsigned long long) s->slow_done, s->unit);
    snprintf (buf, size, "%s%s%s%s%s", what, sep, rates, sep, health);
    return 3;
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
    if (!self->phase[0])
        return;
    sb_progress_state_t s = self->st;
    s.phase = self->phase;
    s.unit = self->unit;
    s.elapsed_s = now - self->started;
    s.slow_rank = -1;
    if (!strcmp (self->phase, "listing"))
        ;   /* no ranks yet */
    else
        for (uint64_t r = 0; r < self->ranks; r++)
            if (s.slow_rank < 0 || self->rank_done[r] < s.slow_done) {
                s.slow_rank = (int64_t) r;
                s.slow_done = self->rank_done[r];
                s.slow_host = self->rank_host[r];
            }
    char buf[1024];
    if (self->tty) {
        int lines = sb_progress_format (&s, "\n", buf, sizeof buf);
        s_erase (self);
        fprintf (self->out, "%s\n", buf);
        self->drawn_lines = lines;
    }
    else {
        sb_progress_format (&s, " | ", buf, sizeof buf);
        fprintf (self->out, "progress: %s\n", buf);
    }
    fflush (self->out);
}

static double s_last_now;

static void
s_log_hook (int after, void *ctx)
{
    sb_progress_t *self = ctx;
    if (!after)
        s_erase (self);
    else if (s_last_now > 0)
        s_draw (self, s_last_now);
}

sb_progress_t *
sb_progress_new (sb_progress_mode_t mode, FILE *out, double interval_s, uint64_t ranks)
{
    if (mode == SB_PROGRESS_OFF)
        return NULL;
    sb_progress_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->rank_done = calloc (ranks ? ranks : 1, sizeof *self->rank_done);
    self->rank_host = calloc (ranks ? ranks : 1, sizeof *self->rank_host);
    if (!self->rank_done || !self->rank_host) {
        sb_progress_destroy (&self);
        return NULL;
    }
    self->out = out;
    self->ranks = ranks;
    self->tty = mode == SB_PROGRESS_TTY || (mode == SB_PROGRESS_AUTO && isatty (fileno (out)));
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
    free (self->rank_done);
    free (self->rank_host);
    free (self);
    *self_p = NULL;
}

void
sb_progress_phase (sb_progress_t *self, const char *phase, const char *unit, uint64_t epoch, uint64_t epochs,
                   uint64_t total, uint64_t steps, double now)
{
    if (!self)
        return;
    uint64_t errors = self->st.errors, retries = self->st.retries;   /* run totals */
    memset (&self->st, 0, sizeof self->st);
    self->st.errors = errors;
    self->st.retries = retries;
    snprintf (self->phase, sizeof self->phase, "%s", phase);
    snprintf (self->unit, sizeof self->unit, "%s", unit);
    self->st.epoch = epoch;
    self->st.epochs = epochs;
    self->st.total = total;
    self->st.steps = steps;
    self->st.ranks = self->ranks;
    self->started = now;
    /* the plain cadence goes on across epochs (short epochs still get lines) */
    if (self->tty || self->next_draw < now)
        self->next_draw = now + self->interval_s;
    memset (self->rank_done, 0, self->ranks * sizeof *self->rank_done);
}

void
sb_progress_stats (sb_progress_t *self, uint64_t rank, const char *host, uint64_t samples, uint64_t bytes,
                   double compute_s)
{
    if (!self)
        return;
    self->st.done += samples;
    self->st.bytes += bytes;
    self->st.compute_s += compute_s;
    if (rank < self->ranks) {
        self->rank_done[rank] += samples;
        snprintf (self->rank_host[rank], sizeof self->rank_host[rank], "%s", host ? host : "");
    }
}

void
sb_progress_step (sb_progress_t *self, uint64_t steps_released)
{
    if (self)
        self->st.step = steps_released;
}

void
sb_progress_errors (sb_progress_t *self, uint64_t errors, uint64_t retries)
{
    if (!self)
        return;
    self->st.errors += errors;
    self->st.retries += retries;
}

void
sb_progress_items (sb_progress_t *self, uint64_t done)
{
    if (self)
        self->st.done = done;
}

void
sb_progress_tick (sb_progress_t *self, double now)
{
    if (!self)
        return;
    s_last_now = now;
    sb_log_drain ();    /* lines of other threads (listing, writer) wait for the main thread */
    if (now < self->next_draw)
        return;
    self->next_draw = now + self->interval_s;
    s_draw (self, now);
}

void
sb_progress_clear (sb_progress_t *self)
{
    if (!self)
        return;
    s_erase (self);
    self->phase[0] = 0;
}
