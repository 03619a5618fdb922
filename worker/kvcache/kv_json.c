/* kv_json: Python's json.dump(indent=4) text. */
#include "kv_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
s_put (sb_kv_json_t *j, const char *s, size_t n)
{
    if (j->failed)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 4096;
        while (j->len + n + 1 > cap)
            cap *= 2;
        char *b = realloc (j->buf, cap);
        if (!b) {
            j->failed = 1;
            return;
        }
        j->buf = b;
        j->cap = cap;
    }
    memcpy (j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void
s_puts (sb_kv_json_t *j, const char *s)
{
    s_put (j, s, strlen (s));
}

static void
s_indent (sb_kv_json_t *j, int depth)
{
    s_puts (j, "\n");
    for (int i = 0; i < depth; i++)
        s_puts (j, "    ");
}

static void
s_string (sb_kv_json_t *j, const char *s)
{
    s_puts (j, "\"");
    for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char) *p;
            s_put (j, esc, 2);
        }
        else if (*p < 0x20 || *p >= 0x7f) {
            /* ensure_ascii: bytes past ASCII as \u00XX (names here are ASCII) */
            snprintf (esc, sizeof esc, "\\u%04x", *p);
            s_puts (j, esc);
        }
        else
            s_put (j, (const char *) p, 1);
    }
    s_puts (j, "\"");
}

/* The separator and key of the next item. */
static void
s_item (sb_kv_json_t *j, const char *key)
{
    if (j->depth > 0) {
        if (j->count[j->depth]++)
            s_puts (j, ",");
        s_indent (j, j->depth);
    }
    if (key) {
        s_string (j, key);
        s_puts (j, ": ");
    }
}

void
sb_kv_json_open (sb_kv_json_t *j, const char *key, char bracket)
{
    s_item (j, key);
    char b[2] = { bracket, 0 };
    s_puts (j, b);
    if (j->depth + 1 < (int) (sizeof j->count / sizeof *j->count))
        j->depth++;
    j->count[j->depth] = 0;
}

void
sb_kv_json_close (sb_kv_json_t *j, char bracket)
{
    int had = j->count[j->depth];
    j->depth--;
    if (had)
        s_indent (j, j->depth);
    char b[2] = { bracket, 0 };
    s_puts (j, b);
}

void
sb_kv_pyfloat (double v, char *out, size_t size)
{
    if (isnan (v)) {
        snprintf (out, size, "NaN");
        return;
    }
    if (isinf (v)) {
        snprintf (out, size, v > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (v == 0) {
        snprintf (out, size, signbit (v) ? "-0.0" : "0.0");
        return;
    }
    /* the fewest significant digits that read back exactly */
    char e[40];
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf (e, sizeof e, "%.*e", prec - 1, v);
        if (strtod (e, NULL) == v)
            break;
    }
    /* e: [-]d[.ddd]e[+-]XX */
    const char *p = e;
    int neg = *p == '-';
    if (neg)
        p++;
    char digits[24];
    size_t nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.' && nd < sizeof digits - 1)
            digits[nd++] = *p;
    digits[nd] = '\0';
    int x = atoi (p + 1);   /* v = d.ddd x 10^x */
    char s[64];
    size_t at = 0;
    if (neg)
        s[at++] = '-';
    if (x >= -5 + 1 && x < 16) {
        /* fixed: repr switches to exponent form below 1e-4 and from 1e16 */
        if (x < 0) {
            s[at++] = '0';
            s[at++] = '.';
            for (int i = 0; i < -x - 1; i++)
                s[at++] = '0';
            for (size_t i = 0; i < nd; i++)
                s[at++] = digits[i];
        }
        else {
            for (int i = 0; i <= x; i++)
                s[at++] = (size_t) i < nd ? digits[i] : '0';
            s[at++] = '.';
            if ((size_t) x + 1 < nd)
                for (size_t i = (size_t) x + 1; i < nd; i++)
                    s[at++] = digits[i];
            else
                s[at++] = '0';
        }
        s[at] = '\0';
    }
    else {
        s[at++] = digits[0];
        if (nd > 1) {
            s[at++] = '.';
            for (size_t i = 1; i < nd; i++)
                s[at++] = digits[i];
        }
        s[at] = '\0';
        char ex[16];
        snprintf (ex, sizeof ex, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
        strcat (s, ex);
    }
    snprintf (out, size, "%s", s);
}

void
sb_kv_json_float (sb_kv_json_t *j, const char *key, double v)
{
    char t[64];
    sb_kv_pyfloat (v, t, sizeof t);
    s_item (j, key);
    s_puts (j, t);
}

void
sb_kv_json_int (sb_kv_json_t *j, const char *key, int64_t v)
{
    char t[32];
    snprintf (t, sizeof t, "%lld", (long long) v);
    s_item (j, key);
    s_puts (j, t);
}

void
sb_kv_json_bool (sb_kv_json_t *j, const char *key, int v)
{
    s_item (j, key);
    s_puts (j, v ? "true" : "false");
}

void
sb_kv_json_null (sb_kv_json_t *j, const char *key)
{
    s_item (j, key);
    s_puts (j, "null");
}

void
sb_kv_json_str (sb_kv_json_t *j, const char *key, const char *v)
{
    s_item (j, key);
    s_string (j, v);
}
