/* The upstream workload files DLIO_local_changes refuses to run, and only
 * those, are refused: every YAML file under $SB_UPSTREAM_WORKLOADS (default
 * SOURCE_ROOT/../shared/upstream-workloads) is loaded as `shardbench run FILE`
 * loads it; the files of s_refused must fail with "FILE:LINE: key 'KEY':
 * DLIO_local_changes refuses ..." at the line the key is written on, no
 * other file may fail so, and with shardbench.lenient=true none of them
 * fails so (they run, with a warning). The table is what DLIO's own
 * config.py gives these files (LoadConfig's StorageType, validate's loader
 * and S3 library checks). Exit 77 (skipped) when the folder is absent. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "upstream_dir.h"
#include "config.h"
#include "log.h"
#include "workload.h"

#define S_SKIP 77

static const struct {
    const char *file;   /* under the folder */
    const char *key;
    int         line;
    const char *reason; /* a text the refusal holds */
} s_refused[] = {
    /* storage_type: not one of DLIO's StorageType values (LoadConfig) */
    { "mlcommons-storage/datagen_s3dlio_azure.yaml", "storage.storage_type", 0, "refuses 's3dlio'" },
    { "mlcommons-storage/datagen_s3dlio_multiendpoint.yaml", "storage.storage_type", 0, "refuses 's3dlio'" },
    { "mlcommons-storage/datagen_s3dlio_s3.yaml", "storage.storage_type", 0, "refuses 's3dlio'" },
    { "mlcommons-storage/hybrid_storage.yaml", "storage.storage_type", 0, "refuses 's3dlio'" },
    { "mlcommons-storage/multi_endpoint_mpi.yaml", "storage.storage_type", 0, "refuses 's3dlio'" },
    { "mlcommons-storage/multi_endpoint_roundrobin.yaml", "storage.storage_type", 0, "refuses 's3dlio'" },
    { "mlcommons-storage/resnet50_s3dlio_test.yaml", "storage.storage_type", 0, "refuses 's3dlio'" },
    { "mlcommons-storage/test_local_datagen.yaml", "storage.storage_type", 0, "refuses 's3dlio'" },
    { "mlcommons-storage/zerocopy_file_test.yaml", "storage.storage_type", 0, "refuses 's3dlio'" },
    { "mlcommons-storage/test_unet3d_datagen_minio.yaml", "storage.storage_type", 0, "refuses 'object'" },
    { "mlcommons-storage/test_unet3d_datagen_s3.yaml", "storage.storage_type", 0, "refuses 'object'" },
    /* a custom data loader class without reader.data_loader_sampler (validate) */
    { "mlcommons-storage/pytorch_file_backend.yaml", "reader.data_loader_classname", 0, "custom data loader class" },
    { "mlcommons-storage/pytorch_s3dlio.yaml", "reader.data_loader_classname", 0, "custom data loader class" },
    { "mlcommons-storage/pytorch_s3dlio_azure.yaml", "reader.data_loader_classname", 0, "custom data loader class" },
    { "mlcommons-storage/pytorch_s3dlio_local_test.yaml", "reader.data_loader_classname", 0, "custom data loader class" },
    { "mlcommons-storage/pytorch_s3dlio_multiendpoint.yaml", "reader.data_loader_classname", 0,
      "custom data loader class" },
    { "mlcommons-storage/pytorch_s3torchconnector.yaml", "reader.data_loader_classname", 0, "custom data loader class" },
    { "mlcommons-storage/test_local_train.yaml", "reader.data_loader_classname", 0, "custom data loader class" },
    /* storage_type s3, framework pytorch, no storage_library (validate) */
    { "dlio-local-changes/dlrm_s3dlio_s3.yaml", "storage.storage_type", 0, "and no storage_library" },
    { "dlio-local-changes/unet3d_a100_s3.yaml", "storage.storage_type", 0, "and no storage_library" },
    { "dlio-local-changes/unet3d_h100_s3.yaml", "storage.storage_type", 0, "and no storage_library" },
    { "dlio-local-changes/unet3d_v100_s3.yaml", "storage.storage_type", 0, "and no storage_library" },
};
#define S_NREFUSED (sizeof s_refused / sizeof s_refused[0])

static sb_workload_t s_wl;

/* The 1-based line of path on which KEY's last segment is written as a
 * mapping key ("  storage_type:") below its section's (the first after
 * the section line), or 0. */
static int
s_key_line (const char *path, const char *key)
{
    char section[128], leaf[128], line[4096];
    const char *dot = strrchr (key, '.');
    snprintf (section, sizeof section, "%.*s:", (int) (dot - key), key);
    snprintf (leaf, sizeof leaf, "%s:", dot + 1);
    FILE *f = fopen (path, "r");
    if (!f)
        return 0;
    int n = 0, in = 0, found = 0;
    while (!found && fgets (line, sizeof line, f)) {
        n++;
        if (!strncmp (line, section, strlen (section)))
            in = 1;
        else if (line[0] != ' ' && line[0] != '#' && line[0] != '\n')
            in = 0;
        else if (in && !strncmp (line + strspn (line, " "), leaf, strlen (leaf)))
            found = n;
    }
    fclose (f);
    return found;
}

/* Load path as `shardbench run` does, with override (or none); the error into err ("" when it loads). */
static void
s_load (const char *path, const char *override, char *err, size_t size)
{
    err[0] = '\0';
    sb_config_t *cfg = sb_config_new ();
    if (!cfg) {
        snprintf (err, size, "out of memory");
        return;
    }
    if (sb_config_load_file (cfg, path, err, size) != 0
        || (override && sb_config_override (cfg, override, err, size) != 0)
        || sb_workload_from_config (cfg, &s_wl, err, size) != 0) {
        sb_config_destroy (&cfg);
        return;
    }
    err[0] = '\0';
    sb_config_destroy (&cfg);
}

static int s_nfiles;
static char s_files[256][PATH_MAX];

static void
s_walk (const char *dir, const char *rel)
{
    char path[PATH_MAX];
    snprintf (path, sizeof path, "%s%s%s", dir, *rel ? "/" : "", rel);
    DIR *d = opendir (path);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir (d))) {
        if (de->d_name[0] == '.')
            continue;
        char sub[PATH_MAX], full[PATH_MAX * 2];
        snprintf (sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        snprintf (full, sizeof full, "%s/%s", dir, sub);
        struct stat st;
        if (stat (full, &st) != 0)
            continue;
        if (S_ISDIR (st.st_mode))
            s_walk (dir, sub);
        else if (strlen (sub) > 5 && !strcmp (sub + strlen (sub) - 5, ".yaml") && s_nfiles < 256)
            snprintf (s_files[s_nfiles++], PATH_MAX, "%s", sub);
    }
    closedir (d);
}

int
main (void)
{
    char dir[PATH_MAX];
    if (sb_test_upstream_dir ("", dir, sizeof dir) != 0)
        return S_SKIP;
    /* the warnings of 93 loads are not this test's output */
    if (!freopen ("/dev/null", "w", stderr))
        return 1;
    s_walk (dir, "");
    int bad = 0, refused = 0, found[S_NREFUSED] = { 0 };
    for (int i = 0; i < s_nfiles; i++) {
        char path[PATH_MAX * 2], err[4096], want[PATH_MAX * 2 + 200];
        snprintf (path, sizeof path, "%s/%s", dir, s_files[i]);
        s_load (path, NULL, err, sizeof err);
        size_t r = 0;
        while (r < S_NREFUSED && strcmp (s_refused[r].file, s_files[i]) != 0)
            r++;
        int is_refusal = strstr (err, ": DLIO_local_changes refuses") != NULL;
        if (r == S_NREFUSED) {
            if (is_refusal) {
                printf ("FAIL %s: refused, but DLIO runs it: %s\n", s_files[i], err);
                bad++;
            }
            continue;
        }
        found[r] = 1;
        int line = s_key_line (path, s_refused[r].key);
        snprintf (want, sizeof want, "%s:%d: key '%s': DLIO_local_changes refuses", path, line, s_refused[r].key);
        if (!line || strncmp (err, want, strlen (want)) != 0 || !strstr (err, s_refused[r].reason)
            || !strstr (err, "; or set shardbench.lenient: true to run it anyway, with a warning")) {
            printf ("FAIL %s: expected \"%s ...%s...\", got \"%s\"\n", s_files[i], want, s_refused[r].reason, err);
            bad++;
            continue;
        }
        refused++;
        s_load (path, "shardbench.lenient=true", err, sizeof err);
        if (strstr (err, "DLIO_local_changes refuses")) {
            printf ("FAIL %s: with shardbench.lenient=true still refused: %s\n", s_files[i], err);
            bad++;
        }
        printf ("ok %s: %s:%d; lenient: %s\n", s_files[i], s_refused[r].key, line, *err ? err : "loads");
    }
    for (size_t r = 0; r < S_NREFUSED; r++)
        if (!found[r]) {
            printf ("FAIL %s: not in %s\n", s_refused[r].file, dir);
            bad++;
        }
    printf ("%d file(s), %d refused as DLIO refuses them (expected %zu), %d failure(s)\n", s_nfiles, refused,
            S_NREFUSED, bad);
    return bad || refused != (int) S_NREFUSED ? 1 : 0;
}
