/* host_proc: this host's processor name, last processor block of
 * /proc/cpuinfo and /proc/meminfo, bounded (host_proc.h). */
#include "host_proc.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#define S_READ_MAX (8u << 20)   /* /proc/cpuinfo of a host with thousands of processors still fits */

/* The whole of a /proc file (its size reads as 0: read until EOF), owned;
 * "" when it cannot be read; NULL when out of memory. */
static char *
s_read_all (const char *path)
{
    FILE *f = fopen (path, "r");
    if (!f) {
        sb_debug ("host information: cannot open %s: %s", path, strerror (errno));
        return strdup ("");
    }
    size_t cap = 16384, n = 0;
    char *text = malloc (cap + 1);
    while (text) {
        n += fread (text + n, 1, cap - n, f);
        if (n < cap || cap >= S_READ_MAX)
            break;
        char *grown = realloc (text, cap * 2 + 1);
        if (!grown) {
            free (text);
            text = NULL;
            break;
        }
        text = grown;
        cap *= 2;
    }
    if (text && ferror (f)) {
        sb_debug ("host information: cannot read %s", path);
        n = 0;
    }
    fclose (f);
    if (text)
        text[n] = '\0';
    return text;
}

/* Is the line at p a "processor : N" line (key "processor" once trimmed)? */
static int
s_processor_line (const char *p)
{
    if (strncmp (p, "processor", 9) != 0)
        return 0;
    p += 9;
    while (*p == ' ' || *p == '\t')
        p++;
    return *p == ':';
}

int
sb_host_proc_bound (char *text, size_t max)
{
    if (strlen (text) <= max)
        return 0;
    size_t cut = max;
    while (cut > 0 && text[cut - 1] != '\n')
        cut--;
    text[cut] = '\0';
    return 1;
}

char *
sb_host_proc_last_cpu (const char *cpuinfo)
{
    const char *last = cpuinfo;
    for (const char *line = cpuinfo; line && *line;) {
        if (s_processor_line (line))
            last = line;
        line = strchr (line, '\n');
        if (line)
            line++;
    }
    char *copy = strdup (last);
    if (copy && sb_host_proc_bound (copy, SB_HOST_PROC_MAX))
        sb_warn ("host information: the last processor's block of /proc/cpuinfo is over %d bytes: cut after its"
                 " last whole line within them", SB_HOST_PROC_MAX);
    return copy;
}

int
sb_host_proc_read (sb_host_proc_t *self)
{
    memset (self, 0, sizeof *self);
    struct utsname uts;
    if (uname (&uts) == 0)
        snprintf (self->processor, sizeof self->processor, "%s", uts.machine);
    char *cpuinfo = s_read_all ("/proc/cpuinfo");
    self->cpuinfo = cpuinfo ? sb_host_proc_last_cpu (cpuinfo) : NULL;
    free (cpuinfo);
    self->meminfo = s_read_all ("/proc/meminfo");
    if (!self->cpuinfo || !self->meminfo) {
        sb_host_proc_fini (self);
        return -1;
    }
    if (sb_host_proc_bound (self->meminfo, SB_HOST_PROC_MAX))
        sb_warn ("host information: /proc/meminfo is over %d bytes: cut after its last whole line within them",
                 SB_HOST_PROC_MAX);
    return 0;
}

void
sb_host_proc_fini (sb_host_proc_t *self)
{
    free (self->cpuinfo);
    free (self->meminfo);
    self->cpuinfo = self->meminfo = NULL;
}
