/* json_doc: indented JSON documents (json_doc.h). */
#include "json_doc.h"
#include "json_out.h"

void
sb_jdoc_sep (sb_jdoc_t *j, const char *key)
{
    if (j->depth > 0) {
        if (!j->first[j->depth])
            fputc (',', j->f);
        fprintf (j->f, "\n%*s", j->indent * j->depth, "");
    }
    j->first[j->depth] = 0;
    if (key) {
        sb_json_str (j->f, key);
        fputs (": ", j->f);
    }
}

void
sb_jdoc_open (sb_jdoc_t *j, const char *key, char c)
{
    sb_jdoc_sep (j, key);
    fputc (c, j->f);
    j->first[++j->depth] = 1;
}

void
sb_jdoc_close (sb_jdoc_t *j, char c)
{
    int empty = j->first[j->depth];
    j->depth--;
    if (!empty)
        fprintf (j->f, "\n%*s", j->indent * j->depth, "");
    fputc (c, j->f);
}

void
sb_jdoc_num (sb_jdoc_t *j, const char *key, double v)
{
    sb_jdoc_sep (j, key);
    sb_json_repr (j->f, v, 1);
}

void
sb_jdoc_int (sb_jdoc_t *j, const char *key, int64_t v)
{
    sb_jdoc_sep (j, key);
    fprintf (j->f, "%lld", (long long) v);
}

void
sb_jdoc_str (sb_jdoc_t *j, const char *key, const char *v)
{
    sb_jdoc_sep (j, key);
    sb_json_str (j->f, v);
}

void
sb_jdoc_raw (sb_jdoc_t *j, const char *key, const char *text)
{
    sb_jdoc_sep (j, key);
    fputs (text, j->f);
}
