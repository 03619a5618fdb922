/* dlio_args: DLIO / mlpstorage / Hydra command-line forms (see dlio_args.h). */
#include "dlio_args.h"
#include "log.h"
#include "safe_file.h"
#include "util.h"
#include "workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_HYDRA_DEFAULT_SUBDIR ".hydra"

void
sb_dlio_args_fini (sb_dlio_args_t *self)
{
    free (self->task);
    self->task = NULL;
    self->ntask = 0;
}

static int
s_add_task (sb_dlio_args_t *self, const char *arg, char *err, size_t err_size)
{
    const char **grown = realloc (self->task, (self->ntask + 1) * sizeof *grown);
    if (!grown) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    self->task = grown;
    self->task[self->ntask++] = arg;
    return 0;
}

/* A dotted key: names of letters, digits, '_' and '-' joined by single dots. */
static int
s_key_ok (const char *key, size_t len)
{
    if (len == 0 || key[0] == '.' || key[len - 1] == '.')
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = key[i];
        if (c == '.' ? key[i + 1] == '.'
            : !(c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

/* A relative group path: names without "..", no leading '/'. */
static int
s_name_ok (const char *name)
{
    if (!*name || name[0] == '/' || strstr (name, "//"))
        return 0;
    for (const char *p = name; *p; p++)
        if (*p == '\\' || *p == ' ' || *p == '\n')
            return 0;
    for (const char *p = name; p; p = strchr (p, '/')) {
        p += *p == '/';
        if (!strncmp (p, "..", 2) && (p[2] == '/' || p[2] == '\0'))
            return 0;
        if (!strncmp (p, ".", 1) && (p[1] == '/' || p[1] == '\0'))
            return 0;
    }
    return 1;
}

static int
s_hydra (sb_dlio_args_t *self, const char *arg, const char *key, size_t klen, const char *value, char *err,
         size_t err_size)
{
    if (klen == strlen ("hydra.run.dir") && !strncmp (key, "hydra.run.dir", klen)) {
        if (!*value) {
            snprintf (err, err_size, "'%s': hydra.run.dir needs a folder", arg);
            return -1;
        }
        self->run_dir = value;
        return 1;
    }
    if (klen == strlen ("hydra.output_subdir") && !strncmp (key, "hydra.output_subdir", klen)) {
        self->output_subdir_null = !strcmp (value, "null") || !strcmp (value, "~") || !strcmp (value, "None");
        if (!self->output_subdir_null && (!*value || value[0] == '/' || !s_name_ok (value))) {
            snprintf (err, err_size, "'%s': hydra.output_subdir is a folder under hydra.run.dir (a relative name"
                      " without '..'), or null", arg);
            return -1;
        }
        self->output_subdir = self->output_subdir_null ? NULL : value;
        return 1;
    }
    sb_warn ("%s: Hydra's own setting, ignored by shardbench (it reads hydra.run.dir and hydra.output_subdir)", arg);
    return 1;
}

int
sb_dlio_arg (sb_dlio_args_t *self, const char *arg, const char *next, int *used_next, const char **override,
             char *err, size_t err_size)
{
    *used_next = 0;
    *override = NULL;
    if (!strcmp (arg, "--config-dir") || !strcmp (arg, "-cd")) {
        if (!next || !*next || next[0] == '-') {
            snprintf (err, err_size, "'%s' needs a folder (--config-dir DIR or --config-dir=DIR)", arg);
            return -1;
        }
        self->config_dir = next;
        *used_next = 1;
        return 1;
    }
    if (!strncmp (arg, "--config-dir=", 13)) {
        if (!arg[13]) {
            snprintf (err, err_size, "'%s' needs a folder (--config-dir=DIR)", arg);
            return -1;
        }
        self->config_dir = arg + 13;
        return 1;
    }
    size_t plus = strspn (arg, "+");
    const char *body = arg + plus, *eq = strchr (body, '=');
    int workload_key = !strncmp (body, "workload.", 9), hydra_key = !strncmp (body, "hydra.", 6);
    if (!strncmp (body, "workload=", 9)) {
        if (plus) {
            snprintf (err, err_size, "'%s': the workload is chosen with workload=NAME (no '+')", arg);
            return -1;
        }
        if (!s_name_ok (body + 9)) {
            snprintf (err, err_size, "'%s': workload=NAME needs a name (a file under CONFIG_DIR/workload/ without"
                      " .yaml, or a preset)", arg);
            return -1;
        }
        if (self->workload) {
            snprintf (err, err_size, "'%s': the workload is already %s", arg, self->workload);
            return -1;
        }
        self->workload = body + 9;
        return s_add_task (self, arg, err, err_size) == 0 ? 1 : -1;
    }
    if (!plus && !workload_key && !hydra_key)
        return 0;   /* shardbench's KEY=VALUE, or an option */
    if (plus > 2) {
        snprintf (err, err_size, "'%s': Hydra overrides start with '+' (add) or '++' (add or replace), not %zu", arg,
                  plus);
        return -1;
    }
    if (!workload_key && !hydra_key) {
        snprintf (err, err_size, "'%s': shardbench takes ++workload.KEY=VALUE and ++hydra.run.dir= /"
                  " ++hydra.output_subdir= (or KEY=VALUE)", arg);
        return -1;
    }
    if (!eq) {
        snprintf (err, err_size, "'%s' is not %sKEY=VALUE", arg, workload_key ? "++workload." : "++hydra.");
        return -1;
    }
    if (!s_key_ok (body, (size_t) (eq - body)) || (workload_key && eq - body <= 9)) {
        snprintf (err, err_size, "'%s': '%.*s' is not a dotted key", arg, (int) (eq - body), body);
        return -1;
    }
    if (hydra_key)
        return s_hydra (self, arg, body, (size_t) (eq - body), eq + 1, err, err_size);
    *override = arg;
    return s_add_task (self, arg, err, err_size) == 0 ? 1 : -1;
}

int
sb_dlio_workload_path (const sb_dlio_args_t *self, const char *name, char *path, size_t size, char *err,
                       size_t err_size)
{
    if (!self->config_dir)
        return 0;
    struct stat st;
    if (stat (self->config_dir, &st) != 0 || !S_ISDIR (st.st_mode)) {
        snprintf (err, err_size, "--config-dir %s: %s", self->config_dir,
                  errno && stat (self->config_dir, &st) != 0 ? strerror (errno) : "not a folder");
        return -1;
    }
    if (!s_name_ok (name))
        return 0;
    if (sb_strf (path, size, "%s/workload/%s.yaml", self->config_dir, name) != 0) {
        snprintf (err, err_size, "--config-dir %s: path too long", self->config_dir);
        return -1;
    }
    return access (path, F_OK) == 0 ? 1 : 0;
}

/* Write text to dir/name through a new temporary renamed over it
 * (safe_file.h: a link someone put at either name is never written
 * through; the caller refused a folder holding another run's files unless
 * --overwrite); -1 with err. */
static int
s_write (const char *dir, const char *name, const char *head, const char *text, char *err, size_t err_size)
{
    sb_safe_file_t sf;
    if (sb_safe_file_open (&sf, dir, name, 1, err, err_size) != 0)
        return -1;
    FILE *f = sf.f;
    int bad = fputs (head, f) < 0;
    /* indent the text under head (one level, as Hydra nests DLIO's workload) */
    for (const char *line = text; !bad && *line;) {
        size_t n = strcspn (line, "\n");
        bad = (n && fprintf (f, "%s%.*s", *head ? "  " : "", (int) n, line) < 0) || fputc ('\n', f) == EOF;
        line += n + (line[n] == '\n');
    }
    /* a failed write leaves the stream's error set: the commit reports it */
    return sb_safe_file_commit (&sf, err, err_size);
}

int
sb_dlio_write_outputs (const sb_dlio_args_t *self, const char *config_yaml, char *err, size_t err_size)
{
    if (!self->run_dir)
        return 0;
    if (sb_mkdirs (self->run_dir, err, err_size) != 0)
        return -1;
    if (self->output_subdir_null)
        return 0;
    char dir[4096];
    if (sb_strf (dir, sizeof dir, "%s/%s", self->run_dir,
                 self->output_subdir ? self->output_subdir : S_HYDRA_DEFAULT_SUBDIR) != 0) {
        snprintf (err, err_size, "hydra.run.dir %s: path too long", self->run_dir);
        return -1;
    }
    if (sb_mkdirs (dir, err, err_size) != 0)
        return -1;
    if (s_write (dir, "config.yaml", "workload:\n", config_yaml, err, err_size) != 0)
        return -1;
    /* overrides.yaml: a YAML list of the task overrides, values of secret keys redacted */
    size_t cap = 16;
    for (size_t i = 0; i < self->ntask; i++)
        cap += 2 * strlen (self->task[i]) + 32;
    char *list = malloc (cap);
    if (!list) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    size_t n = 0;
    list[0] = '\0';
    for (size_t i = 0; i < self->ntask; i++) {
        /* a credential's value is redacted whole (sb_workload_secret_value) */
        const char *a = self->task[i], *value = sb_workload_secret_value (a);
        int secret = value != NULL;
        /* single-quoted YAML scalars: a quote is doubled */
        n += (size_t) snprintf (list + n, cap - n, "- '");
        for (const char *p = a; *p && (!secret || p < value); p++) {
            if (*p == '\'')
                list[n++] = '\'';
            list[n++] = *p;
        }
        n += (size_t) snprintf (list + n, cap - n, "%s'\n", secret ? "<redacted>" : "");
    }
    int rc = s_write (dir, "overrides.yaml", "", self->ntask ? list : "[]\n", err, err_size);
    free (list);
    return rc;
}
