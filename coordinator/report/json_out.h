/* json_out: the JSON scalars every report output writes (report --json,
 * series --json, runs --json, the results directory). */
#ifndef SB_JSON_OUT_H
#define SB_JSON_OUT_H

#include <stdio.h>

/* s as a JSON string: '"', '\\' and control characters escaped, UTF-8
 * passed through, a byte that is no UTF-8 (a file name, a /proc line)
 * written as U+FFFD so that the output stays JSON; NULL as null. */
void sb_json_str (FILE *out, const char *s);

/* v with 6 decimals, or null when it is NaN or infinite. */
void sb_json_num (FILE *out, double v);

#endif
