/* log: leveled messages on stderr, prefixed with the program and host time. */
#ifndef SB_LOG_H
#define SB_LOG_H

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

void sb_log (sb_log_level_t level, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

#define sb_debug(...) sb_log (SB_LOG_DEBUG, __VA_ARGS__)
#define sb_info(...)  sb_log (SB_LOG_INFO, __VA_ARGS__)
#define sb_warn(...)  sb_log (SB_LOG_WARN, __VA_ARGS__)
#define sb_error(...) sb_log (SB_LOG_ERROR, __VA_ARGS__)

#endif
