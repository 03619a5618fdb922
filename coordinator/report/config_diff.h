/* config_diff: the keys whose values differ between the effective
 * configurations of runs (runs.config, YAML), for `shardbench compare`.
 * A pure function of the texts: no database. */
#ifndef SB_CONFIG_DIFF_H
#define SB_CONFIG_DIFF_H

#include <stddef.h>

/* One key that differs: its value in each run, NULL where the run's
 * configuration lacks it. A list reads "[a, b]". */
typedef struct {
    char  *key;
    char **values;          /* nruns entries */
} sb_config_diff_row_t;

/* The differing keys in first-seen order (the first run's keys in its
 * order, then keys only later runs have). Owns everything. */
typedef struct {
    sb_config_diff_row_t *rows;
    size_t                nrows, nruns;
} sb_config_diff_t;

/* Compare the n YAML texts (a NULL text: an empty configuration). Returns
 * 0, or -1 with "run N's configuration: ..." (N 1-based) or "out of
 * memory" in err; d is then empty. Free d with sb_config_diff_fini
 * whatever the result. */
int sb_config_diff (const char *const *yaml, size_t n, sb_config_diff_t *d, char *err, size_t err_size);
void sb_config_diff_fini (sb_config_diff_t *d);

#endif
