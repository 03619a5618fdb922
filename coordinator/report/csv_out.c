/* csv_out: CSV fields (csv_out.h). */
#include "csv_out.h"

#include <math.h>
#include <string.h>

void
sb_csv_str (FILE *out, const char *s)
{
    if (!strpbrk (s, ",\"\r\n")) {
        fputs (s, out);
        return;
    }
    fputc ('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc ('"', out);
        fputc (*s, out);
    }
    fputc ('"', out);
}

void
sb_csv_num (FILE *out, double v)
{
    if (isfinite (v))
        fprintf (out, "%.6f", v);
}
