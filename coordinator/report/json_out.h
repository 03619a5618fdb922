/* json_out: the JSON scalars every report output writes (report --json,
 * series --json, runs --json, the results directory). */
#ifndef SB_JSON_OUT_H
#define SB_JSON_OUT_H

#include <stdio.h>

/* s as a JSON string: '"', '\\' and control characters escaped, UTF-8
 * passed through, a byte that is no UTF-8 (a file name, a /proc line)
 * written as U+FFFD so that the output stays JSON; NULL as null. */
void sb_json_str (FILE *out, const char *s);

/* v as the shortest text of 15 to 17 significant digits that reads back
 * the same (Python's repr of a float), or null when it is NaN or infinite.
 * float_dot: a whole number written as a float (1.0, as Python's json
 * writes it); 0: as %g writes it (1). */
void sb_json_repr (FILE *out, double v, int float_dot);

/* v with 6 decimals, or null when it is NaN or infinite. */
void sb_json_num (FILE *out, double v);

#endif
