/* log: leveled messages on stderr. One fprintf per line keeps lines whole
 * when several threads log. With a hook (a live status block on the
 * terminal, drawn by the main thread), only the thread that set the hook
 * erases it and prints it again: lines of other threads wait in a small queue that
 * the main thread prints with its next line or sb_log_drain. */
#include "log.h"
#include "util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *s_ident = "shardbench";
static sb_log_level_t s_level = SB_LOG_INFO;

void sb_log_set_ident (const char *ident) { s_ident = ident; }
void sb_log_set_level (sb_log_level_t level) { s_level = level; }
sb_log_level_t sb_log_level (void) { return s_level; }

#define S_QUEUE_LINES 64
#define S_LINE_MAX 2200

static pthread_mutex_t s_mutex = PTHREAD_MUTEX_INITIALIZER;
static void (*s_hook) (int, void *);    /* under s_mutex */
static void *s_hook_ctx;
static pthread_t s_hook_thread;         /* the only thread that calls the hook */
static char s_queue[S_QUEUE_LINES][S_LINE_MAX];
static size_t s_queued;

/* Print the queued lines (caller: the hook's thread, hook erased). */
static void
s_print_queue (void)
{
    pthread_mutex_lock (&s_mutex);
    for (size_t i = 0; i < s_queued; i++)
        fputs (s_queue[i], stderr);
    s_queued = 0;
    pthread_mutex_unlock (&s_mutex);
}

void
sb_log_set_hook (void (*fn) (int after, void *ctx), void *ctx)
{
    pthread_mutex_lock (&s_mutex);
    s_hook = fn;
    s_hook_ctx = ctx;
    s_hook_thread = pthread_self ();
    pthread_mutex_unlock (&s_mutex);
    if (!fn)
        s_print_queue ();   /* no block any more: what waited goes out */
}

void
sb_log_drain (void)
{
    pthread_mutex_lock (&s_mutex);
    void (*hook) (int, void *) = s_hook;
    void *ctx = s_hook_ctx;
    int mine = !hook || pthread_equal (pthread_self (), s_hook_thread);
    size_t queued = s_queued;
    pthread_mutex_unlock (&s_mutex);
    if (!mine || queued == 0)
        return;
    if (hook)
        hook (0, ctx);
    s_print_queue ();
    if (hook)
        hook (1, ctx);
}

/* The escape of the character at p into e (8 bytes): its length, and in
 * *used the bytes of p it stands for. lines: newline and tab, and bytes that
 * are not UTF-8 but for C1's range, are copied (sb_log's own text: its
 * multi-line messages, a file name in another encoding). */
static size_t
s_escape_one (const unsigned char *p, char *e, size_t *used, int lines)
{
    unsigned char c = p[0];
    *used = 1;
    if (c >= 0x20 && c < 0x7f)
        e[0] = (char) c;
    else if (c < 0x20 && lines && (c == '\n' || c == '\t'))
        e[0] = (char) c;
    else if (c < 0x80) {
        const char *name = c == 0x1b ? "\\e" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
        if (name) {
            memcpy (e, name, 2);
            return 2;
        }
        return (size_t) snprintf (e, 8, "\\x%02x", c);
    }
    else {
        size_t seq = sb_utf8_seq (p);
        if (seq == 2 && c == 0xc2 && p[1] < 0xa0) {     /* U+0080..U+009F: C1 controls (0x9b: CSI) */
            *used = 2;
            return (size_t) snprintf (e, 8, "\\u%04x", p[1]);
        }
        if (seq) {
            memcpy (e, p, seq);
            *used = seq;
            return seq;
        }
        if (!lines || c < 0xa0)
            return (size_t) snprintf (e, 8, "\\x%02x", c);
        e[0] = (char) c;
    }
    return 1;
}

static const char *
s_escape (const char *in, char *out, size_t size, int lines)
{
    if (!size)
        return out;
    const unsigned char *p = (const unsigned char *) (in ? in : "");
    size_t o = 0;
    while (*p) {
        char e[8];
        size_t used, n = s_escape_one (p, e, &used, lines);
        if (o + n >= size)
            break;
        memcpy (out + o, e, n);
        o += n;
        p += used;
    }
    out[o] = '\0';
    return out;
}

const char *
sb_log_escape (const char *in, char *out, size_t size)
{
    return s_escape (in, out, size, 0);
}

const char *
sb_log_escape_lines (const char *in, char *out, size_t size)
{
    return s_escape (in, out, size, 1);
}

int
sb_log_needs_escape (const char *text)
{
    const unsigned char *p = (const unsigned char *) (text ? text : "");
    while (*p) {
        char e[8];
        size_t used, n = s_escape_one (p, e, &used, 0);
        if (n != used || memcmp (e, p, n) != 0)
            return 1;
        p += used;
    }
    return 0;
}

void
sb_log (sb_log_level_t level, const char *fmt, ...)
{
    static const char *names[] = { "debug", "info", "warning", "error" };
    if (level < s_level)
        return;
    char raw[2048], text[2048], line[S_LINE_MAX];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (raw, sizeof raw, fmt, ap);
    va_end (ap);
    s_escape (raw, text, sizeof text, 1);
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r (&ts.tv_sec, &tm);
    snprintf (line, sizeof line, "%02d:%02d:%02d.%03ld %s: %s: %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
              ts.tv_nsec / 1000000, s_ident, names[level], text);
    pthread_mutex_lock (&s_mutex);
    void (*hook) (int, void *) = s_hook;
    void *ctx = s_hook_ctx;
    if (hook && !pthread_equal (pthread_self (), s_hook_thread)) {
        /* another thread: the main thread prints it with the block erased */
        if (s_queued < S_QUEUE_LINES) {
            memcpy (s_queue[s_queued++], line, sizeof line);
            pthread_mutex_unlock (&s_mutex);
            return;
        }
        hook = NULL;    /* queue full: plain, never lost (the block may keep it on screen) */
    }
    pthread_mutex_unlock (&s_mutex);
    if (hook)
        hook (0, ctx);
    if (hook)
        s_print_queue ();
    fputs (line, stderr);
    if (hook)
        hook (1, ctx);
}
