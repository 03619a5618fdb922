/* embedded: text files compiled into the binaries (workload presets). */
#ifndef SB_EMBEDDED_H
#define SB_EMBEDDED_H

typedef struct {
    const char *name;   /* file base name without extension */
    const char *text;
} sb_embedded_t;

/* Workload presets from coordinator/workloads/ (one YAML file each), ending with {NULL, NULL}. */
extern const sb_embedded_t sb_presets[];

#endif
