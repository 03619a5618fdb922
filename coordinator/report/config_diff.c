/* config_diff: keys that differ between run configurations (config_diff.h). */
#include "config_diff.h"
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of key in cfg as text (owned), NULL when absent; *oom set when
 * a copy fails. */
static char *
s_value (sb_config_t *cfg, const char *key, int *oom)
{
    const sb_config_entry_t *e = sb_config_get (cfg, key);
    if (!e)
        return NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f) {
        *oom = 1;
        return NULL;
    }
    if (e->items || !e->value) {
        fputc ('[', f);
        for (size_t i = 0; i < e->nitems && e->items; i++)
            fprintf (f, "%s%s", i ? ", " : "", e->items[i]);
        fputc (']', f);
    }
    else
        fputs (e->value, f);
    if (fclose (f) != 0 || !text) {
        free (text);
        *oom = 1;
        return NULL;
    }
    return text;
}

static int
s_same (const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp (a, b));
}

void
sb_config_diff_fini (sb_config_diff_t *d)
{
    for (size_t i = 0; d->rows && i < d->nrows; i++) {
        free (d->rows[i].key);
        for (size_t r = 0; d->rows[i].values && r < d->nruns; r++)
            free (d->rows[i].values[r]);
        free (d->rows[i].values);
    }
    free (d->rows);
    memset (d, 0, sizeof *d);
}

/* Add the row of key when its values differ. Returns 0, or -1 out of memory. */
static int
s_consider (sb_config_diff_t *d, sb_config_t **cfg, size_t n, const char *key, size_t *cap)
{
    for (size_t i = 0; i < d->nrows; i++)
        if (!strcmp (d->rows[i].key, key))
            return 0;   /* seen in an earlier run */
    int oom = 0;
    char **values = calloc (n, sizeof *values);
    if (!values)
        return -1;
    int differ = 0;
    for (size_t r = 0; r < n; r++) {
        values[r] = s_value (cfg[r], key, &oom);
        differ |= r > 0 && !s_same (values[0], values[r]);
    }
    if (oom || !differ) {
        for (size_t r = 0; r < n; r++)
            free (values[r]);
        free (values);
        return oom ? -1 : 0;
    }
    if (d->nrows == *cap) {
        size_t want = *cap ? 2 * *cap : 16;
        sb_config_diff_row_t *rows = realloc (d->rows, want * sizeof *rows);
        if (!rows)
            goto oom;
        d->rows = rows;
        *cap = want;
    }
    d->rows[d->nrows].key = strdup (key);
    if (!d->rows[d->nrows].key)
        goto oom;
    d->rows[d->nrows++].values = values;
    return 0;
oom:
    for (size_t r = 0; r < n; r++)
        free (values[r]);
    free (values);
    return -1;
}

int
sb_config_diff (const char *const *yaml, size_t n, sb_config_diff_t *d, char *err, size_t err_size)
{
    memset (d, 0, sizeof *d);
    d->nruns = n;
    sb_config_t **cfg = calloc (n ? n : 1, sizeof *cfg);
    int rc = -1;
    if (!cfg) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    for (size_t r = 0; r < n; r++) {
        char why[512];
        cfg[r] = sb_config_new ();
        if (!cfg[r]) {
            snprintf (err, err_size, "out of memory");
            goto done;
        }
        if (yaml[r] && sb_config_load_string (cfg[r], yaml[r], "runs.config", why, sizeof why) != 0) {
            snprintf (err, err_size, "run %zu's configuration: %s", r + 1, why);
            goto done;
        }
    }
    size_t cap = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < sb_config_count (cfg[r]); i++)
            if (s_consider (d, cfg, n, sb_config_at (cfg[r], i)->key, &cap) != 0) {
                snprintf (err, err_size, "out of memory");
                goto done;
            }
    rc = 0;
done:
    for (size_t r = 0; r < n; r++)
        sb_config_destroy (&cfg[r]);
    free (cfg);
    if (rc != 0) {
        size_t keep = d->nruns;
        sb_config_diff_fini (d);
        d->nruns = keep;
    }
    return rc;
}
