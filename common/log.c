/* log: leveled messages on stderr. One fprintf per line keeps lines whole
 * when several threads log. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static const char *s_ident = "shardbench";
static sb_log_level_t s_level = SB_LOG_INFO;

void sb_log_set_ident (const char *ident) { s_ident = ident; }
void sb_log_set_level (sb_log_level_t level) { s_level = level; }
sb_log_level_t sb_log_level (void) { return s_level; }

static void (*s_hook) (int, void *);
static void *s_hook_ctx;
void sb_log_set_hook (void (*fn) (int after, void *ctx), void *ctx) { s_hook = fn; s_hook_ctx = ctx; }

void
sb_log (sb_log_level_t level, const char *fmt, ...)
{
    static const char *names[] = { "debug", "info", "warning", "error" };
    if (level < s_level)
        return;
    char text[2048];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r (&ts.tv_sec, &tm);
    if (s_hook)
        s_hook (0, s_hook_ctx);
    fprintf (stderr, "%02d:%02d:%02d.%03ld %s: %s: %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
             ts.tv_nsec / 1000000, s_ident, names[level], text);
    if (s_hook)
        s_hook (1, s_hook_ctx);
}
