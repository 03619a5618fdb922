/* json_doc: a JSON document written as Python's json.dump(obj, indent=N)
 * writes it (", " never, ",\n" and N spaces a level, ": " after a key, an
 * empty object or list as {} or []), the way DLIO and mlpstorage write the
 * files of a results directory, so that shardbench's read the same. */
#ifndef SB_JSON_DOC_H
#define SB_JSON_DOC_H

#include <stdint.h>
#include <stdio.h>

#define SB_JDOC_DEPTH 64    /* nesting tracked; deeper documents are not written */

typedef struct {
    FILE *f;
    int   indent;           /* spaces a level */
    int   depth;
    int   first[SB_JDOC_DEPTH];
    int  *failed;           /* may be NULL; a writer sets *failed when a part could not be written whole
                             * (out of memory): the file is not kept */
} sb_jdoc_t;

/* The separator before the next member: ",", a line break and the
 * indentation inside an object or list, then "key": when key is not NULL
 * (inside a list: NULL). */
void sb_jdoc_sep (sb_jdoc_t *j, const char *key);

/* Open an object ('{') or list ('['), a member key (NULL: none). */
void sb_jdoc_open (sb_jdoc_t *j, const char *key, char c);

/* Close it with c ('}' or ']'). */
void sb_jdoc_close (sb_jdoc_t *j, char c);

/* A float as Python writes one (sb_json_repr: 1.0 for a whole number, null
 * for NaN and infinities). */
void sb_jdoc_num (sb_jdoc_t *j, const char *key, double v);

void sb_jdoc_int (sb_jdoc_t *j, const char *key, int64_t v);

/* A string (json_out.h: sb_json_str), null for NULL. */
void sb_jdoc_str (sb_jdoc_t *j, const char *key, const char *v);

/* text as it is: true, false, null, or JSON made elsewhere. */
void sb_jdoc_raw (sb_jdoc_t *j, const char *key, const char *text);

#endif
