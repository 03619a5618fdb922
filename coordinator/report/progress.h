/* progress: the coordinator's live status, drawn from the live model
 * (live.h). On a terminal a block redrawn in place about twice a second
 * (ANSI cursor-up and clear-line only); elsewhere plain "progress:" lines
 * every few seconds, and one when each phase ends, so that an epoch of any
 * length has its line. A host that goes silent is a warning the moment it
 * passes the live model's limit, and another when it is heard again,
 * whatever the mode (off included: the log is not the status).
 *
 * The block, and the plain lines joined by " | ":
 *   train epoch 2/3 step 7/16 (43.8%), ETA 0:03 (run 0:12)
 *   1493.5 samples/s, 187.3 MiB/s, 12 reads in flight, AU 98.44% (run 98.29% over 1 epoch)
 *   2 hosts, 0 silent, ranks done 0/4; errors 0, retries 0
 * then one line per host, the slowest first (at most SB_PROGRESS_HOST_LINES):
 *   host node-b ranks 2-3: step 3/16, AU 97.10%, silent 3.1 s */
#ifndef SB_PROGRESS_H
#define SB_PROGRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "live.h"

#define SB_PROGRESS_HOST_LINES 4

typedef enum { SB_PROGRESS_AUTO, SB_PROGRESS_TTY, SB_PROGRESS_PLAIN, SB_PROGRESS_OFF } sb_progress_mode_t;

/* Parses "auto" | "tty" | "plain" | "off". Returns 0, or -1 for anything else. */
int sb_progress_parse_mode (const char *text, sb_progress_mode_t *mode);

/* Writes "M:SS" or "H:MM:SS" for seconds, "--:--" when negative or not finite. */
void sb_progress_format_eta (double seconds, char *buf, size_t size);

/* The status of live at now as lines joined by sep ("\n" for the
 * terminal block, " | " for a plain line): the three run lines, then up to
 * host_lines host lines, slowest first. Returns the number of lines. */
int sb_progress_format (const sb_live_t *live, double now, size_t host_lines, const char *sep, char *buf,
                        size_t size);

typedef struct _sb_progress_t sb_progress_t;

/* mode AUTO picks TTY when out is a terminal, PLAIN otherwise. interval_s:
 * seconds between plain lines (the terminal block is drawn again every
 * 0.5 s). live is borrowed and outlives the status. With OFF the status
 * draws nothing but still warns of silent hosts. NULL when out of memory. */
sb_progress_t *sb_progress_new (sb_progress_mode_t mode, FILE *out, double interval_s, const sb_live_t *live);
void sb_progress_destroy (sb_progress_t **self_p);

/* A phase or epoch began (the live model was told): the cadence restarts. */
void sb_progress_phase (sb_progress_t *self, double now);
/* Draw the block, print a line or a silence warning when due. */
void sb_progress_tick (sb_progress_t *self, double now);
/* The phase is over: its final figures as a "progress:" line (on a
 * terminal the block leaves and the line, without host lines, stays). */
void sb_progress_end_phase (sb_progress_t *self, double now);

#endif
