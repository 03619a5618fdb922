/* fuzz_config: libFuzzer target for the workload parser.
 *
 * The input is a workload file's bytes, parsed through the same path as
 * `shardbench run FILE` (sb_config_load_buffer, then the key table of
 * sb_workload_from_config). It must load or fail with a message, never
 * crash or leak. A configuration that loads is written back as YAML
 * (sb_config_to_yaml, what runs.config stores) and must load again with
 * every key and value unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "workload.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    sb_log_set_level (SB_LOG_ERROR);    /* unknown keys are warnings: keep the output quiet */
    sb_config_t *cfg = sb_config_new ();
    if (!cfg)
        return 0;
    char err[1024] = "";
    if (sb_config_load_buffer (cfg, (const char *) data, size, "fuzz.yaml", err, sizeof err) != 0) {
        if (!err[0])
            abort ();   /* every failure says why */
        sb_config_destroy (&cfg);
        return 0;
    }
    static sb_workload_t wl;    /* large (paths, endpoints): not on the stack */
    err[0] = '\0';
    if (sb_workload_from_config (cfg, &wl, err, sizeof err) != 0 && !err[0])
        abort ();
    char *yaml = sb_config_to_yaml (cfg);
    if (!yaml)
        abort ();
    sb_config_t *again = sb_config_new ();
    if (!again)
        abort ();
    if (sb_config_load_string (again, yaml, "effective", err, sizeof err) != 0
        || sb_config_count (again) != sb_config_count (cfg))
        abort ();
    for (size_t i = 0; i < sb_config_count (cfg); i++) {
        const sb_config_entry_t *a = sb_config_at (cfg, i);
        const sb_config_entry_t *b = sb_config_get (again, a->key);
        if (!b || (a->value == NULL) != (b->value == NULL) || (a->value && strcmp (a->value, b->value) != 0)
            || a->nitems != b->nitems)
            abort ();
        for (size_t j = 0; j < a->nitems; j++)
            if (strcmp (a->items[j], b->items[j]) != 0)
                abort ();
    }
    sb_config_destroy (&again);
    free (yaml);
    sb_config_destroy (&cfg);
    return 0;
}
