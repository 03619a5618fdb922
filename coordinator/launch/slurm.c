/* slurm: expand Slurm host lists (SLURM_JOB_NODELIST). */
#include "slurm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_HOST_MAX 256  /* longest host name kept, with its NUL */

typedef struct {
    int  (*each) (const char *host, void *ctx);
    void  *ctx;
    size_t count;
    char  *err;
    size_t err_size;
} s_expand_t;

/* A decimal number of digits only, into *v and its width into *width;
 * *p moves past it. -1 when there is none or it overflows. */
static int
s_number (const char **p, unsigned long *v, int *width)
{
    const char *start = *p;
    char *end = NULL;
    if (**p < '0' || **p > '9')
        return -1;
    errno = 0;
    *v = strtoul (start, &end, 10);
    if (errno || end == start || end - start > 18)
        return -1;
    *width = (int) (end - start);
    *p = end;
    return 0;
}

/* buf[0..len) holds the text expanded so far; rest is what follows it in
 * one item of the list. Emits every host the item names. */
static int
s_expand (s_expand_t *x, char *buf, size_t len, const char *rest)
{
    const char *open = strchr (rest, '[');
    size_t plain = open ? (size_t) (open - rest) : strlen (rest);
    if (memchr (rest, ']', plain)) {
        snprintf (x->err, x->err_size, "']' without '['");
        return -1;
    }
    if (len + plain >= S_HOST_MAX) {
        snprintf (x->err, x->err_size, "a host name longer than %d characters", S_HOST_MAX - 1);
        return -1;
    }
    memcpy (buf + len, rest, plain);
    len += plain;
    buf[len] = '\0';
    if (!open) {
        if (len == 0) {
            snprintf (x->err, x->err_size, "an empty host name");
            return -1;
        }
        if (++x->count > SB_SLURM_MAX_HOSTS) {
            snprintf (x->err, x->err_size, "more than %d hosts", SB_SLURM_MAX_HOSTS);
            return -1;
        }
        if (x->each (buf, x->ctx) != 0) {
            if (!x->err[0])
                snprintf (x->err, x->err_size, "cannot keep host %s", buf);
            return -1;
        }
        return 0;
    }
    const char *close = strchr (open, ']');
    const char *nested = strchr (open + 1, '[');
    if (!close || (nested && nested < close)) {
        snprintf (x->err, x->err_size, "'[' without its ']'");
        return -1;
    }
    const char *p = open + 1;
    for (;;) {
        unsigned long lo, hi;
        int width, hi_width;
        if (s_number (&p, &lo, &width) != 0) {
            snprintf (x->err, x->err_size, "a range needs numbers, got '%.*s'", (int) (close - open + 1), open);
            return -1;
        }
        hi = lo;
        if (*p == '-') {
            p++;
            if (s_number (&p, &hi, &hi_width) != 0 || hi < lo) {
                snprintf (x->err, x->err_size, "bad range in '%.*s'", (int) (close - open + 1), open);
                return -1;
            }
        }
        if (*p != ',' && *p != ']') {
            snprintf (x->err, x->err_size, "unexpected '%c' in '%.*s'", *p, (int) (close - open + 1), open);
            return -1;
        }
        if (hi - lo >= (unsigned long) SB_SLURM_MAX_HOSTS) {
            snprintf (x->err, x->err_size, "more than %d hosts", SB_SLURM_MAX_HOSTS);
            return -1;
        }
        for (unsigned long v = lo; v <= hi; v++) {
            char num[32];
            /* Slurm pads every number to the width of the range's first one */
            int n = snprintf (num, sizeof num, "%0*lu", width, v);
            if (len + (size_t) n >= S_HOST_MAX) {
                snprintf (x->err, x->err_size, "a host name longer than %d characters", S_HOST_MAX - 1);
                return -1;
            }
            memcpy (buf + len, num, (size_t) n + 1);
            if (s_expand (x, buf, len + (size_t) n, close + 1) != 0)
                return -1;
        }
        if (*p == ']')
            break;
        p++;
    }
    return 0;
}

int
sb_slurm_hostlist_expand (const char *list, int (*each) (const char *host, void *ctx), void *ctx, char *err,
                          size_t err_size)
{
    s_expand_t x = { .each = each, .ctx = ctx, .err = err, .err_size = err_size };
    err[0] = '\0';
    if (!list || !*list) {
        snprintf (err, err_size, "empty host list");
        return -1;
    }
    char buf[S_HOST_MAX];
    char item[4096];
    const char *p = list;
    while (*p) {
        /* one item: up to a comma outside brackets */
        size_t n = 0;
        int depth = 0;
        while (p[n] && (depth > 0 || p[n] != ',')) {
            depth += p[n] == '[' ? 1 : p[n] == ']' ? -1 : 0;
            n++;
        }
        if (n >= sizeof item) {
            snprintf (err, err_size, "host list item too long: '%.40s...'", p);
            return -1;
        }
        memcpy (item, p, n);
        item[n] = '\0';
        if (s_expand (&x, buf, 0, item) != 0) {
            char why[256];
            snprintf (why, sizeof why, "%s", err);
            snprintf (err, err_size, "host list '%s': %s", list, why);
            return -1;
        }
        p += n;
        if (*p == ',' && !*++p) {
            snprintf (err, err_size, "host list '%s' ends with ','", list);
            return -1;
        }
    }
    return 0;
}
