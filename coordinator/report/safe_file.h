/* safe_file: a file written whole into a folder that someone else may have
 * put things in (a results directory, hydra.run.dir). The text goes to a
 * new temporary of a random name, created exclusively (O_EXCL: never
 * through a link or over a file already there), is flushed to disk, and is
 * renamed over the name through a handle on the folder; the folder is
 * flushed after. A link at the name is replaced, never written through. */
#ifndef SB_SAFE_FILE_H
#define SB_SAFE_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *f;            /* write the text here */
    int   dirfd;        /* the folder, opened once: a folder renamed or swapped meanwhile is not followed */
    int   replace;      /* 0: the commit fails when the name exists (EEXIST) */
    int   failed;       /* set by the writer when a part could not be written: the commit drops the file */
    char  name[256], tmp[288], shown[4200];
} sb_safe_file_t;

/* Open a temporary for dir/name (name: one path segment). replace 0: the
 * commit refuses a name that exists. Returns 0, or -1 with err naming the
 * path and the cause. */
int sb_safe_file_open (sb_safe_file_t *self, const char *dir, const char *name, int replace, char *err,
                       size_t err_size);

/* Flush the text to disk and give it its name; the folder is flushed too.
 * Returns 0, or -1 with err (the temporary is removed, the name untouched).
 * Closes self in every case. */
int sb_safe_file_commit (sb_safe_file_t *self, char *err, size_t err_size);

/* Drop the temporary (an open that succeeded, not committed). */
void sb_safe_file_abort (sb_safe_file_t *self);

#endif
