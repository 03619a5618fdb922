/* workload_load: the unit tests' one way to load a workload from YAML text
 * (origin "w.yaml", so errors read "w.yaml:LINE: key ...") and command-line
 * overrides, the way the coordinator does: sb_config_load_string,
 * sb_config_override, sb_workload_from_config. */
#ifndef SB_WORKLOAD_LOAD_H
#define SB_WORKLOAD_LOAD_H

#include <check.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "workload.h"

/* Load yaml and the overrides (NULL-terminated; NULL for none) into *wl.
 * YAML or an override that does not parse fails the test. Returns the
 * workload's error, "" on success, in a static buffer the next call
 * overwrites. */
static inline const char *
sb_test_workload_load (const char *yaml, const char *const *overrides, sb_workload_t *wl)
{
    static char err[2048];
    err[0] = '\0';
    sb_config_t *cfg = sb_config_new ();
    ck_assert_ptr_nonnull (cfg);
    ck_assert_msg (sb_config_load_string (cfg, yaml, "w.yaml", err, sizeof err) == 0, "%s", err);
    for (size_t i = 0; overrides && overrides[i]; i++)
        ck_assert_msg (sb_config_override (cfg, overrides[i], err, sizeof err) == 0, "%s", err);
    if (sb_workload_from_config (cfg, wl, err, sizeof err) == 0)
        err[0] = '\0';
    sb_config_destroy (&cfg);
    return err;
}

/* sb_test_workload_load with stderr in a file: what the load logged (its
 * warnings) into log, NUL-ended, cut at size - 1 bytes. */
static inline const char *
sb_test_workload_load_logged (const char *yaml, const char *const *overrides, sb_workload_t *wl, char *log,
                              size_t size)
{
    FILE *f = tmpfile ();
    ck_assert_ptr_nonnull (f);
    fflush (stderr);
    int saved = dup (2);
    ck_assert_int_ge (saved, 0);
    ck_assert_int_ge (dup2 (fileno (f), 2), 0);
    const char *err = sb_test_workload_load (yaml, overrides, wl);
    sb_log_drain ();
    fflush (stderr);
    ck_assert_int_ge (dup2 (saved, 2), 0);
    close (saved);
    ssize_t n = pread (fileno (f), log, size - 1, 0);
    ck_assert_int_ge (n, 0);
    log[n] = '\0';
    fclose (f);
    return err;
}

#endif
