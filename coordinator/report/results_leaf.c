/* results_leaf: a results directory's leaf (results_leaf.h). */
#include "results_leaf.h"
#include "results_stamp.h"
#include "util.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int
sb_results_leaf_opts_check (const sb_results_dir_opts_t *opts, char *err, size_t err_size)
{
    if ((!opts->root) == (!opts->leaf)) {
        snprintf (err, err_size, "results directory: give a root or a leaf");
        return -1;
    }
    if ((opts->submitter && !sb_results_dir_name_ok (opts->submitter))
        || (opts->system && !sb_results_dir_name_ok (opts->system))) {
        snprintf (err, err_size, "--submitter and --system are names of letters, digits, '.', '_' and '-'");
        return -1;
    }
    return 0;
}

int
sb_results_leaf_submitter (const sb_results_dir_opts_t *opts, char *org, size_t org_size,
                           const char **submitter, char *err, size_t err_size)
{
    *submitter = opts->submitter ? opts->submitter : "shardbench";
    if (opts->root && !opts->submitter) {
        int found = sb_results_sentinel_read (opts->root, org, org_size, err, err_size);
        if (found < 0)
            return -1;
        if (found)
            *submitter = org;
    }
    return 0;
}

void
sb_results_leaf_ts (double t, char *buf, size_t size)
{
    time_t s = (time_t) floor (t);
    struct tm tm;
    localtime_r (&s, &tm);
    strftime (buf, size, "%Y%m%d_%H%M%S", &tm);
}

void
sb_results_leaf_segment (char *name)
{
    for (char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.'
              || *p == '-' || *p == '_'))
            *p = '-';
    if (!*name || !strcmp (name, ".") || !strcmp (name, ".."))
        snprintf (name, 8, "unknown");
}

int
sb_results_leaf_given (const char *given, const char *subdir, unsigned flags, char *leaf, size_t leaf_size,
                       char *err, size_t err_size)
{
    if (sb_mkdirs (given, err, err_size) != 0 || sb_results_dir_leaf_check (given, subdir, flags, err, err_size) != 0)
        return -1;
    char real[PATH_MAX];
    snprintf (leaf, leaf_size, "%s", realpath (given, real) ? real : given);
    return 0;
}

int
sb_results_leaf_make (const char *parent, double start, char *ts, size_t ts_size, char *leaf, size_t leaf_size,
                      char *err, size_t err_size)
{
    if (sb_mkdirs (parent, err, err_size) != 0)
        return -1;
    char real[PATH_MAX];
    if (!realpath (parent, real)) {
        snprintf (err, err_size, "%s: %s", parent, strerror (errno));
        return -1;
    }
    for (int bump = 0; bump <= SB_RESULTS_LEAF_BUMPS; bump++) {
        sb_results_leaf_ts (start + bump, ts, ts_size);
        if (sb_strf (leaf, leaf_size, "%s/%s", real, ts) != 0) {
            snprintf (err, err_size, "%s: path too long", real);
            return -1;
        }
        /* mkdir, not sb_mkdirs: a leaf that exists is someone's run */
        if (mkdir (leaf, 0755) == 0)
            return 0;
        if (errno != EEXIST) {
            snprintf (err, err_size, "cannot make %s: %s", leaf, strerror (errno));
            return -1;
        }
    }
    /* ts is the last second tried now: the range starts at the run's own */
    char first[32];
    sb_results_leaf_ts (start, first, sizeof first);
    snprintf (err, err_size, "%s to %s (the run's start and the %d seconds after it) exist already under %s: not"
              " overwritten", first, ts, SB_RESULTS_LEAF_BUMPS, real);
    return -1;
}

static int
s_remove_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st;
    (void) ftw;
    return (flag == FTW_DP ? rmdir (path) : unlink (path)) == 0 || errno == ENOENT ? 0 : -1;
}

void
sb_results_leaf_remove (const char *leaf, char *err, size_t err_size)
{
    int rc = nftw (leaf, s_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    int e = errno;
    size_t n = strnlen (err, err_size);
    if (n + 1 >= err_size)
        return;
    if (rc == 0)
        snprintf (err + n, err_size - n, " (the unfinished %s was removed)", leaf);
    else
        snprintf (err + n, err_size - n, " (the unfinished %s could not be removed: %s)", leaf, strerror (e));
}

int
sb_results_leaf_own_run (const char *coordinator_host, int64_t coordinator_pid)
{
    char host[256] = "";
    return gethostname (host, sizeof host - 1) == 0 && coordinator_host && !strcmp (host, coordinator_host)
        && coordinator_pid == getpid ();
}

int64_t
sb_results_leaf_system_info (sb_jdoc_t *j, const sb_results_host_t *hosts, size_t n)
{
    int64_t total_mem = 0, total_cores = 0, min_mem = 0, max_mem = 0;
    for (size_t h = 0; h < n; h++) {
        total_mem += hosts[h].memory;
        total_cores += hosts[h].cores;
        min_mem = !h || hosts[h].memory < min_mem ? hosts[h].memory : min_mem;
        max_mem = hosts[h].memory > max_mem ? hosts[h].memory : max_mem;
    }
    sb_jdoc_open (j, "system_info", '{');
    sb_jdoc_int (j, "total_memory_bytes", total_mem);
    sb_jdoc_int (j, "total_cores", total_cores);
    sb_jdoc_int (j, "num_hosts", (int64_t) n);
    sb_jdoc_int (j, "min_memory_bytes", min_mem);
    sb_jdoc_int (j, "max_memory_bytes", max_mem);
    sb_jdoc_str (j, "collection_method", "shardbench workers (run_workers)");
    sb_jdoc_open (j, "hosts", '[');
    for (size_t h = 0; h < n; h++) {
        sb_jdoc_open (j, NULL, '{');
        sb_jdoc_str (j, "hostname", hosts[h].host);
        sb_jdoc_open (j, "memory", '{');
        sb_jdoc_int (j, "total", hosts[h].memory);
        sb_jdoc_close (j, '}');
        sb_jdoc_open (j, "cpu", '{');
        sb_jdoc_int (j, "num_logical_cores", hosts[h].cores);
        sb_jdoc_str (j, "architecture", hosts[h].processor);
        sb_jdoc_close (j, '}');
        sb_jdoc_close (j, '}');
    }
    sb_jdoc_close (j, ']');
    sb_jdoc_close (j, '}');
    return min_mem;
}
