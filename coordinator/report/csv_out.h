/* csv_out: the CSV fields every --csv output writes (report --csv, the
 * kvcache views), so that all of them quote and round alike. */
#ifndef SB_CSV_OUT_H
#define SB_CSV_OUT_H

#include <stdio.h>

/* s as one RFC 4180 field: quoted (a quote doubled) when it holds a comma,
 * a quote or a line break, else as it is. */
void sb_csv_str (FILE *out, const char *s);

/* v with 6 decimals; nothing (an empty field) when it is NaN or infinite. */
void sb_csv_num (FILE *out, double v);

#endif
