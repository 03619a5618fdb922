/* kv_json: a JSON text as Python's json.dump(obj, f, indent=4) writes it
 * (the reference's results file): four spaces a level, ", " never, ": "
 * after keys, [] and {} for empty containers, floats as Python's repr (the
 * shortest text that reads back to the same double, ".0" on whole values,
 * exponent form below 1e-4 and from 1e16). */
#ifndef SB_KV_JSON_H
#define SB_KV_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char  *buf;
    size_t len, cap;
    int    depth;
    int    count[64];       /* items so far at each level */
    int    failed;          /* out of memory */
} sb_kv_json_t;

/* key NULL inside a list (or for the top level). */
void sb_kv_json_open (sb_kv_json_t *j, const char *key, char bracket);   /* '{' or '[' */
void sb_kv_json_close (sb_kv_json_t *j, char bracket);                  /* '}' or ']' */
void sb_kv_json_float (sb_kv_json_t *j, const char *key, double v);
void sb_kv_json_int (sb_kv_json_t *j, const char *key, int64_t v);
void sb_kv_json_bool (sb_kv_json_t *j, const char *key, int v);
void sb_kv_json_null (sb_kv_json_t *j, const char *key);
void sb_kv_json_str (sb_kv_json_t *j, const char *key, const char *v);
/* Python's repr of a float into out (>= 32 bytes). */
void sb_kv_pyfloat (double v, char *out, size_t size);

#endif
