/* progress: the coordinator's live status. Pure state and formatting, fed
 * by the session (STATS, step release, phase start, listing progress); on
 * a terminal a block redrawn in place about twice a second (ANSI cursor-up
 * and clear-line only), elsewhere a plain line every few seconds. */
#ifndef SB_PROGRESS_H
#define SB_PROGRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { SB_PROGRESS_AUTO, SB_PROGRESS_TTY, SB_PROGRESS_PLAIN, SB_PROGRESS_OFF } sb_progress_mode_t;

/* Parses "auto" | "tty" | "plain" | "off". Returns 0, or -1 for anything else. */
int sb_progress_parse_mode (const char *text, sb_progress_mode_t *mode);

/* A snapshot of what the status shows; strings are borrowed. */
typedef struct {
    const char *phase;          /* "listing" | "datagen" | "train" | ... */
    const char *unit;           /* "objects" | "files" | "samples" */
    uint64_t    epoch, epochs;  /* epochs 0: no epoch shown */
    uint64_t    step, steps;    /* steps 0: no step shown */
    uint64_t    done, total;    /* items so far this phase/epoch; total 0: unknown */
    uint64_t    bytes;
    double      elapsed_s;      /* since the phase or epoch began */
    double      compute_s;      /* summed over ranks */
    uint64_t    ranks;
    uint64_t    errors, retries;
    int64_t     slow_rank;      /* -1: none */
    const char *slow_host;
    uint64_t    slow_done;
} sb_progress_state_t;

/* Writes "M:SS" or "H:MM:SS" for seconds, "--:--" when negative or not finite. */
void sb_progress_format_eta (double seconds, char *buf, size_t size);

/* Formats state as three groups (what, rates, health) joined by sep
 * ("\n" for the terminal block, " | " for the plain line). Returns the
 * number of lines (groups). */
int sb_progress_format (const sb_progress_state_t *state, const char *sep, char *buf, size_t size);

typedef struct _sb_progress_t sb_progress_t;

/* mode AUTO picks TTY when out is a terminal, PLAIN otherwise. interval_s:
 * seconds between plain lines (the terminal block is drawn again every 0.5 s).
 * Returns NULL for OFF (every other call accepts NULL and does nothing). */
sb_progress_t *sb_progress_new (sb_progress_mode_t mode, FILE *out, double interval_s, uint64_t ranks);
void sb_progress_destroy (sb_progress_t **self_p);

/* A phase or epoch begins: counters reset. Strings are copied. */
void sb_progress_phase (sb_progress_t *self, const char *phase, const char *unit, uint64_t epoch, uint64_t epochs,
                        uint64_t total, uint64_t steps, double now);
/* A STATS interval of one rank (deltas). host is copied. */
void sb_progress_stats (sb_progress_t *self, uint64_t rank, const char *host, uint64_t samples, uint64_t bytes,
                        double compute_s);
void sb_progress_step (sb_progress_t *self, uint64_t steps_released);
void sb_progress_errors (sb_progress_t *self, uint64_t errors, uint64_t retries);
/* Listing: objects listed so far (total unknown). */
void sb_progress_items (sb_progress_t *self, uint64_t done);
/* Draw the block or print a line when due. */
void sb_progress_tick (sb_progress_t *self, double now);
/* Removes the block from the terminal (the phase is over). */
void sb_progress_clear (sb_progress_t *self);

#endif
