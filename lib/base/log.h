/* log: leveled messages on stderr, prefixed with the program and host time. */
#ifndef SB_LOG_H
#define SB_LOG_H

#include <stddef.h>

typedef enum { SB_LOG_DEBUG, SB_LOG_INFO, SB_LOG_WARN, SB_LOG_ERROR } sb_log_level_t;

/* Program name shown in every line ("shardbench", "worker 3"); borrowed, must
 * outlive logging. */
void sb_log_set_ident (const char *ident);
void sb_log_set_level (sb_log_level_t level);
sb_log_level_t sb_log_level (void);
/* fn(0, ctx) runs before each line is written, fn(1, ctx) after (a live
 * status on the terminal steps aside); NULL removes it. The hook only ever
 * runs on the thread that set it: lines logged by other threads meanwhile
 * are queued (up to 64, then printed plainly) and printed by that thread's
 * next line or sb_log_drain; removing the hook prints them. */
void sb_log_set_hook (void (*fn) (int after, void *ctx), void *ctx);
/* On the hook's thread: print the lines other threads queued, with the
 * hook around them. Elsewhere, or with nothing queued: nothing. */
void sb_log_drain (void);

/* Every line: control bytes in the text (a peer's or a user's text that
 * reached it unescaped) are written as sb_log_escape writes them, but for
 * newline and tab, which the coordinator's own multi-line messages use. */
void sb_log (sb_log_level_t level, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* Text from a peer (a worker's host name, an error it sent) or a user (a
 * label), fit to print on one line of a terminal or a log: no byte of it
 * can move the cursor, clear the screen or start a line that looks like
 * the program's own. Control bytes are written as escapes: ESC as \e,
 * newline \n, carriage return \r, tab \t, any other C0 byte or DEL as
 * \xHH; the UTF-8 forms of the C1 controls (U+0080..U+009F) as \u00HH;
 * bytes that are not UTF-8 as \xHH. Everything else (a backslash too) is
 * copied as it is. Writes at most size bytes with the NUL, cut before an
 * escape or a character that does not fit; in NULL is "". Returns out. */
const char *sb_log_escape (const char *in, char *out, size_t size);

/* The same for a text of several lines (an error recorded with a table):
 * newline and tab are kept, every other control byte escaped. */
const char *sb_log_escape_lines (const char *in, char *out, size_t size);

/* 1 when sb_log_escape would change text (it holds a control byte or a
 * byte that is not UTF-8), else 0. */
int sb_log_needs_escape (const char *text);

#define sb_debug(...) sb_log (SB_LOG_DEBUG, __VA_ARGS__)
#define sb_info(...)  sb_log (SB_LOG_INFO, __VA_ARGS__)
#define sb_warn(...)  sb_log (SB_LOG_WARN, __VA_ARGS__)
#define sb_error(...) sb_log (SB_LOG_ERROR, __VA_ARGS__)

#endif
