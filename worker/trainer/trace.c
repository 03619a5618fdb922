/* trace: per-read CSV lines of a worker (see trace.h). */
#include "trace.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sb_trace {
    FILE *f;
    char  path[PATH_MAX];
    char *buf;              /* stdio buffer (owned) */
};

sb_trace_t *
sb_trace_open (const char *dir, char *err, size_t err_size)
{
    sb_trace_t *self = calloc (1, sizeof *self);
    char host[256] = "localhost";
    if (!self) {
        snprintf (err, err_size, "trace: out of memory");
        return NULL;
    }
    if (gethostname (host, sizeof host - 1) != 0)
        snprintf (host, sizeof host, "localhost");
    for (char *c = host; *c; c++)
        if (*c == '/')
            *c = '_';
    int n = snprintf (self->path, sizeof self->path, "%s%strace-%s-%d.csv", dir,
                      dir[0] && dir[strlen (dir) - 1] == '/' ? "" : "/", host, (int) getpid ());
    if (n < 0 || (size_t) n >= sizeof self->path) {
        snprintf (err, err_size, "shardbench.trace: the trace file name under '%s' is too long", dir);
        free (self);
        return NULL;
    }
    if (!(self->f = fopen (self->path, "w"))) {
        snprintf (err, err_size, "shardbench.trace: cannot create %s: %s", self->path, strerror (errno));
        free (self);
        return NULL;
    }
    if ((self->buf = malloc (1 << 20)))
        setvbuf (self->f, self->buf, _IOFBF, 1 << 20);
    if (fputs ("rank,epoch,step,position,file_index,key,offset,length,start_s,latency_us,bytes,sample\n", self->f) < 0) {
        snprintf (err, err_size, "shardbench.trace: cannot write %s: %s", self->path, strerror (errno));
        fclose (self->f);
        free (self->buf);
        free (self);
        return NULL;
    }
    return self;
}

static int
s_failed (sb_trace_t *self, const char *what, char *err, size_t err_size)
{
    snprintf (err, err_size, "shardbench.trace: cannot %s %s: %s", what, self->path,
              errno ? strerror (errno) : "write error");
    return -1;
}

int
sb_trace_write (sb_trace_t *self, const sb_trace_line_t *l, char *err, size_t err_size)
{
    const char *key = l->key ? l->key : "";
    int quote = strpbrk (key, ",\"\n") != NULL;
    errno = 0;
    int rc = l->no_sample
                 ? fprintf (self->f, "%llu,%llu,,,%llu,", (unsigned long long) l->rank, (unsigned long long) l->epoch,
                            (unsigned long long) l->file)
                 : fprintf (self->f, "%llu,%llu,%llu,%llu,%llu,", (unsigned long long) l->rank,
                            (unsigned long long) l->epoch, (unsigned long long) l->step,
                            (unsigned long long) l->position, (unsigned long long) l->file);
    if (rc < 0)
        return s_failed (self, "write", err, err_size);
    if (quote) {
        if (fputc ('"', self->f) == EOF)
            return s_failed (self, "write", err, err_size);
        for (const char *c = key; *c; c++)
            if ((*c == '"' && fputc ('"', self->f) == EOF) || fputc (*c, self->f) == EOF)
                return s_failed (self, "write", err, err_size);
        if (fputc ('"', self->f) == EOF)
            return s_failed (self, "write", err, err_size);
    }
    else if (fputs (key, self->f) < 0)
        return s_failed (self, "write", err, err_size);
    if (fprintf (self->f, ",%llu,%llu,%.6f,%llu,%llu,%llu\n", (unsigned long long) l->offset,
                 (unsigned long long) l->length, l->start_s, (unsigned long long) l->latency_us,
                 (unsigned long long) l->bytes, (unsigned long long) l->sample) < 0)
        return s_failed (self, "write", err, err_size);
    return 0;
}

int
sb_trace_flush (sb_trace_t *self, char *err, size_t err_size)
{
    errno = 0;
    if (fflush (self->f) != 0 || ferror (self->f))
        return s_failed (self, "write", err, err_size);
    return 0;
}

int
sb_trace_close (sb_trace_t **self_p, char *err, size_t err_size)
{
    if (!self_p || !*self_p)
        return 0;
    sb_trace_t *self = *self_p;
    int rc = 0;
    errno = 0;
    if (fflush (self->f) != 0 || ferror (self->f))
        rc = s_failed (self, "write", err, err_size);
    if (fclose (self->f) != 0 && rc == 0)
        rc = s_failed (self, "close", err, err_size);
    free (self->buf);
    free (self);
    *self_p = NULL;
    return rc;
}
