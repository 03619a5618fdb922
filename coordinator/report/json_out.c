/* json_out: JSON scalars (json_out.h). */
#include "json_out.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
sb_json_str (FILE *out, const char *s)
{
    if (!s) {
        fputs ("null", out);
        return;
    }
    fputc ('"', out);
    for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf (out, "\\%c", *p);
        else if (*p == '\n')
            fputs ("\\n", out);
        else if (*p == '\r')
            fputs ("\\r", out);
        else if (*p == '\t')
            fputs ("\\t", out);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf (out, "\\u%04x", *p);
        else if (*p < 0x80)
            fputc (*p, out);
        else {
            size_t n = sb_utf8_seq (p);
            if (n) {
                fwrite (p, 1, n, out);
                p += n - 1;
            }
            else
                fputs ("\\ufffd", out);
        }
    }
    fputc ('"', out);
}

void
sb_json_num (FILE *out, double v)
{
    if (isfinite (v))
        fprintf (out, "%.6f", v);
    else
        fputs ("null", out);
}

void
sb_json_repr (FILE *out, double v, int float_dot)
{
    if (!isfinite (v)) {
        fputs ("null", out);
        return;
    }
    char buf[64];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf (buf, sizeof buf, "%.*g", prec, v);
        if (strtod (buf, NULL) == v)
            break;
    }
    fputs (buf, out);
    if (float_dot && !strpbrk (buf, ".e"))
        fputs (".0", out);
}
