/* results_stamp: mlpstorage 3.0's sentinel, provenance stamp and file
 * system separation sidecar (see results_stamp.h). */
#include "results_stamp.h"
#include "json_out.h"
#include "log.h"
#include "results_dir.h"
#include "safe_file.h"
#include "sb_version.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* the shardbench writing the files */
#define SB_RESULTS_WRITER SB_VERSION " (build " SB_BUILD ")"

/* ------------------------------------------------------------ sentinel */

/* A YAML scalar as the sentinel's writer (yaml.safe_dump) leaves it: plain,
 * or in single or double quotes; trailing blanks and a comment dropped. */
static void
s_yaml_scalar (char *v)
{
    size_t n = strlen (v);
    while (n && (v[n - 1] == '\n' || v[n - 1] == '\r' || v[n - 1] == ' ' || v[n - 1] == '\t'))
        v[--n] = '\0';
    char *s = v + strspn (v, " \t");
    if ((*s == '\'' || *s == '"') && n && strrchr (s + 1, *s)) {
        char q = *s;
        char *end = strrchr (s + 1, q);
        *end = '\0';
        s++;
    } else {
        char *hash = strstr (s, " #");
        if (hash)
            *hash = '\0';
        for (n = strlen (s); n && (s[n - 1] == ' ' || s[n - 1] == '\t');)
            s[--n] = '\0';
    }
    memmove (v, s, strlen (s) + 1);
}

int
sb_results_sentinel_read (const char *root, char *org, size_t org_size, char *err, size_t err_size)
{
    char path[PATH_MAX];
    if (sb_strf (path, sizeof path, "%s/%s", root, SB_RESULTS_SENTINEL) != 0) {
        snprintf (err, err_size, "%s: path too long", root);
        return -1;
    }
    FILE *f = fopen (path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf (err, err_size, "cannot read %s: %s", path, strerror (errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, found = 0;
    while (!found && fgets (line, sizeof line, f)) {
        lineno++;
        if (strncmp (line, "orgname:", 8) != 0)
            continue;
        char *v = line + 8;
        s_yaml_scalar (v);
        if (!sb_results_dir_name_ok (v)) {
            fclose (f);
            snprintf (err, err_size,
                      "%s:%d: orgname '%s' is no name of letters, digits, '.', '_' and '-' (mlpstorage refuses such a"
                      " results directory)", path, lineno, v);
            return -1;
        }
        snprintf (org, org_size, "%s", v);
        found = 1;
    }
    int bad = ferror (f);
    fclose (f);
    if (bad) {
        snprintf (err, err_size, "cannot read %s", path);
        return -1;
    }
    if (!found) {
        snprintf (err, err_size, "%s: no key orgname (mlperf_results_version, orgname, initialized_at, initialized_by"
                  " are mlpstorage's keys): the file pins no organisation", path);
        return -1;
    }
    return 1;
}

/* now, UTC, ISO-8601 with the offset as Python's isoformat writes it */
static void
s_utc_iso (char *buf, size_t size, int micro)
{
    struct timeval tv;
    gettimeofday (&tv, NULL);
    struct tm tm;
    time_t t = tv.tv_sec;
    gmtime_r (&t, &tm);
    char base[32];
    strftime (base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    if (micro)
        snprintf (buf, size, "%s.%06ld+00:00", base, (long) tv.tv_usec);
    else
        snprintf (buf, size, "%sZ", base);
}

int
sb_results_sentinel_ensure (const char *root, const char *org, char *err, size_t err_size)
{
    char have[256];
    /* twice: a sentinel another process made between the look and the
     * exclusive create is read the second time */
    for (int attempt = 0; attempt < 2; attempt++) {
        int rc = sb_results_sentinel_read (root, have, sizeof have, err, err_size);
        if (rc < 0)
            return -1;
        if (rc == 1) {
            if (strcmp (have, org) == 0)
                return 0;
            /* mlpstorage resolves the organisation of every command from
             * the sentinel and refuses to re-pin it (init.py run_init) */
            snprintf (err, err_size,
                      "%s/%s pins the results directory to the organisation '%s', not '%s' (--submitter): give"
                      " --submitter %s, or another --results-dir",
                      root, SB_RESULTS_SENTINEL, have, org, have);
            return -1;
        }
        if (sb_mkdirs (root, err, err_size) != 0)
            return -1;
        sb_safe_file_t sf;
        if (sb_safe_file_open (&sf, root, SB_RESULTS_SENTINEL, 0, err, err_size) != 0)
            return -1;
        char at[64];
        s_utc_iso (at, sizeof at, 1);
        /* the keys and order of mlpstorage's write_sentinel (its schema
         * forbids any other key); the timestamp quoted as safe_dump
         * quotes it */
        fprintf (sf.f, "mlperf_results_version: %d\norgname: %s\ninitialized_at: '%s'\n", SB_RESULTS_LAYOUT, org, at);
        fputs ("initialized_by: 'shardbench ", sf.f);
        fputs (SB_RESULTS_WRITER "'\n", sf.f);
        if (sb_safe_file_commit (&sf, err, err_size) == 0)
            return 0;
        /* made by another process meanwhile: read it once more */
        struct stat st;
        char path[PATH_MAX + 32];
        if (attempt || sb_strf (path, sizeof path, "%s/%s", root, SB_RESULTS_SENTINEL) != 0 || lstat (path, &st) != 0)
            return -1;
    }
    return -1;
}

/* ------------------------------------------------------------ provenance */

/* The commit of a build: `git describe --always --dirty`'s abbreviated
 * hash ("a52832d-dirty", "v0.1-3-ga52832d"); -1 when it names none (a build
 * outside git: the project version). dirty set when the tree had changes. */
static int
s_git_sha (const char *build, char *sha, size_t size, int *dirty)
{
    *dirty = 0;
    char word[128];
    if (!build || !*build || strlen (build) >= sizeof word)
        return -1;
    snprintf (word, sizeof word, "%s", build);
    char *d = strstr (word, "-dirty");
    if (d && d[6] == '\0') {
        *dirty = 1;
        *d = '\0';
    }
    const char *g = strrchr (word, '-');
    const char *hex = g && g[1] == 'g' ? g + 2 : word;
    size_t h = strspn (hex, "0123456789abcdef");
    if (h < 7 || hex[h] != '\0')
        return -1;
    snprintf (sha, size, "%s", hex);
    return 0;
}

int
sb_results_provenance_write (const char *leaf, int replace, const char *family, const char *version,
                             const char *build, const char *data_folder, char *err, size_t err_size)
{
    char ver[256], sha[64], at[64], by[300];
    int dirty = 0, have_sha = s_git_sha (build, sha, sizeof sha, &dirty) == 0;
    snprintf (ver, sizeof ver, "%s", version ? version : "unknown");
    s_utc_iso (at, sizeof at, 0);
    snprintf (by, sizeof by, "shardbench %s", SB_RESULTS_WRITER);
    int object = data_folder && !strncmp (data_folder, "s3://", 5);
    sb_safe_file_t sf;
    if (sb_safe_file_open (&sf, leaf, SB_RESULTS_PROVENANCE, replace, err, err_size) != 0)
        return -1;
    FILE *f = sf.f;
    /* the keys of mlpstorage's RunProvenance.to_dict, in its order; its
     * reader refuses null anywhere, so what shardbench cannot know is
     * "unknown" (its word for an undeterminable stamp) */
    fprintf (f, "{\n  \"schema\": \"mlps-run-provenance/1\",\n  \"rules_edition\": \"%s\",\n"
             "  \"layout_version\": %d,\n", SB_RESULTS_RULES_EDITION, SB_RESULTS_LAYOUT);
    fputs ("  \"tool\": {\n    \"name\": \"shardbench\",\n    \"version\": ", f);
    sb_json_str (f, ver);
    fprintf (f, ",\n    \"git_sha\": \"%s\",\n    \"code_image\": \"unknown\"\n  },\n", have_sha ? sha : "unknown");
    /* shardbench runs no DLIO: nothing of it to name */
    fputs ("  \"dlio\": {\n    \"version\": \"unknown\",\n    \"source\": \"unknown\",\n"
           "    \"commit\": \"unknown\"\n  },\n", f);
    if (object) {
        fputs ("  \"storage_library\": {\n    \"name\": \"shardbench\",\n    \"version\": ", f);
        sb_json_str (f, ver);
        fputs ("\n  },\n", f);
    } else
        fputs ("  \"storage_library\": {\n    \"name\": \"none\"\n  },\n", f);
    fprintf (f, "  \"core_config\": {\n    \"algorithm\": \"core-config-v1\",\n    \"allowlist\": \"%s@1\",\n"
             "    \"hash\": \"unknown\",\n    \"keys\": []\n  },\n", family);
    fputs ("  \"stamped_at\": ", f);
    sb_json_str (f, at);
    fputs (",\n  \"stamped_by\": ", f);
    sb_json_str (f, by);
    fprintf (f, ",\n  \"provenance\": {\n    \"rules_edition\": \"tool-constant\",\n"
             "    \"layout_version\": \"tool-constant\",\n    \"tool\": \"%s\",\n    \"dlio\": \"n/a\",\n"
             "    \"storage_library\": \"%s\",\n"
             "    \"core_config\": \"unknown\"\n  },\n",
             version ? "runtime" : "unknown", object ? "tool-constant" : "n/a");
    fprintf (f, "  \"notes\": \"written by shardbench, which reproduces DLIO's I/O and figures without running DLIO"
             " (dlio: not applicable); no code image; core_config not computed%s\"\n}\n",
             dirty ? "; the build's source tree had uncommitted changes (git_sha is its last commit)" : "");
    return sb_safe_file_commit (&sf, err, err_size);
}

/* ------------------------------------------------------------ file systems */

int
sb_results_fs_separation_write (const char *leaf, int replace, const char *data_dir, int *written, char *err,
                                size_t err_size)
{
    *written = 0;
    if (!data_dir || !*data_dir || strstr (data_dir, "://"))
        return 0;
    char data_real[PATH_MAX], leaf_real[PATH_MAX];
    struct stat st;
    if (!realpath (data_dir, data_real) || stat (data_real, &st) != 0 || !S_ISDIR (st.st_mode)
        || !realpath (leaf, leaf_real))
        return 0;
    char name[96], src[PATH_MAX + 96], dst[PATH_MAX + 96];
    snprintf (name, sizeof name, ".shardbench-fs-sep-probe-%ld-%ld", (long) getpid (), (long) random ());
    if (sb_strf (src, sizeof src, "%s/%s", data_real, name) != 0
        || sb_strf (dst, sizeof dst, "%s/%s", leaf_real, name) != 0)
        return 0;
    int fd = open (src, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        sb_warn ("%s: not written: cannot make a file in %s to probe its file system: %s", SB_RESULTS_FS_SEPARATION,
                 data_real, strerror (errno));
        return 0;
    }
    close (fd);
    int same = -1, lerr = 0;
    if (link (src, dst) == 0)
        same = 1;
    else if (errno == EXDEV)
        same = 0;
    else
        lerr = errno;
    if (unlink (src) != 0 && errno != ENOENT)
        sb_warn ("cannot remove the probe file %s: %s", src, strerror (errno));
    if (same == 1 && unlink (dst) != 0 && errno != ENOENT)
        sb_warn ("cannot remove the probe file %s: %s", dst, strerror (errno));
    if (same < 0) {
        sb_warn ("%s: not written: cannot link %s into %s: %s", SB_RESULTS_FS_SEPARATION, src, leaf_real,
                 strerror (lerr));
        return 0;
    }
    char at[64], host[256] = "";
    s_utc_iso (at, sizeof at, 0);
    if (gethostname (host, sizeof host - 1) != 0)
        host[0] = '\0';
    sb_safe_file_t sf;
    if (sb_safe_file_open (&sf, leaf, SB_RESULTS_FS_SEPARATION, replace, err, err_size) != 0)
        return -1;
    FILE *f = sf.f;
    /* the keys of mlpstorage's probe_fs_separation, in its order; no rank
     * probed (shardbench's coordinator did, the process that launched the
     * run, or `report` later): null */
    fputs ("{\n  \"version\": 1,\n  \"method\": \"link_exdev\",\n  \"data_or_chkpt_path\": ", f);
    sb_json_str (f, data_dir);
    fputs (",\n  \"results_path\": ", f);
    sb_json_str (f, leaf);
    fputs (",\n  \"data_or_chkpt_realpath\": ", f);
    sb_json_str (f, data_real);
    fputs (",\n  \"results_realpath\": ", f);
    sb_json_str (f, leaf_real);
    fprintf (f, ",\n  \"same_filesystem\": %s,\n  \"probed_at\": ", same ? "true" : "false");
    sb_json_str (f, at);
    fputs (",\n  \"probed_by_rank\": null,\n  \"probed_by_host\": ", f);
    sb_json_str (f, host[0] ? host : NULL);
    fputs ("\n}\n", f);
    if (sb_safe_file_commit (&sf, err, err_size) != 0)
        return -1;
    *written = 1;
    return 0;
}
