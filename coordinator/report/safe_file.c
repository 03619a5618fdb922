/* safe_file: see safe_file.h. */
#include "safe_file.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_TRIES 16      /* names already taken (planted or left by a crash) before giving up */

int
sb_safe_file_open (sb_safe_file_t *self, const char *dir, const char *name, int replace, char *err, size_t err_size)
{
    memset (self, 0, sizeof *self);
    self->dirfd = -1;
    self->replace = replace;
    if (sb_strf (self->shown, sizeof self->shown, "%s/%s", dir, name) != 0 || strlen (name) >= sizeof self->name
        || strchr (name, '/')) {
        snprintf (err, err_size, "%s/%s: path too long", dir, name);
        return -1;
    }
    snprintf (self->name, sizeof self->name, "%s", name);
    self->dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (self->dirfd < 0) {
        snprintf (err, err_size, "cannot open %s: %s", dir, strerror (errno));
        return -1;
    }
    int fd = -1;
    for (int t = 0; fd < 0 && t < S_TRIES; t++) {
        /* a random name nobody can have put there in advance; O_EXCL
         * refuses one that exists all the same, a link included */
        uint64_t r = 0;
        if (getrandom (&r, sizeof r, 0) != (ssize_t) sizeof r)
            r = ((uint64_t) getpid () << 32) ^ (uint64_t) t ^ (uint64_t) (uintptr_t) self;
        snprintf (self->tmp, sizeof self->tmp, ".%s.%016llx.tmp", name, (unsigned long long) r);
        fd = openat (self->dirfd, self->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        snprintf (err, err_size, "cannot write %s/%s: %s", dir, self->tmp, strerror (errno));
        close (self->dirfd);
        self->dirfd = -1;
        return -1;
    }
    if (!(self->f = fdopen (fd, "w"))) {
        snprintf (err, err_size, "cannot write %s/%s: %s", dir, self->tmp, strerror (errno));
        close (fd);
        unlinkat (self->dirfd, self->tmp, 0);
        close (self->dirfd);
        self->dirfd = -1;
        return -1;
    }
    return 0;
}

void
sb_safe_file_abort (sb_safe_file_t *self)
{
    if (self->f)
        fclose (self->f);
    self->f = NULL;
    if (self->dirfd >= 0) {
        unlinkat (self->dirfd, self->tmp, 0);
        close (self->dirfd);
    }
    self->dirfd = -1;
}

/* Rename the temporary to the name, refusing a name that exists unless
 * replace: renameat2's RENAME_NOREPLACE; where the file system lacks it a
 * hard link (which fails on a name that exists) and the temporary's
 * removal; where it has no hard links either, a look at the name first (a
 * name that appears in between is replaced: never written through). */
static int
s_place (sb_safe_file_t *self)
{
    if (self->replace)
        return renameat (self->dirfd, self->tmp, self->dirfd, self->name);
    if (renameat2 (self->dirfd, self->tmp, self->dirfd, self->name, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    if (linkat (self->dirfd, self->tmp, self->dirfd, self->name, 0) == 0) {
        unlinkat (self->dirfd, self->tmp, 0);
        return 0;
    }
    if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS)
        return -1;
    struct stat st;
    if (fstatat (self->dirfd, self->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        errno = EEXIST;
        return -1;
    }
    return renameat (self->dirfd, self->tmp, self->dirfd, self->name);
}

int
sb_safe_file_commit (sb_safe_file_t *self, char *err, size_t err_size)
{
    int bad = fflush (self->f) != 0 || ferror (self->f);
    int why = bad ? errno : 0;
    if (!bad && fsync (fileno (self->f)) != 0) {
        bad = 1;
        why = errno;
    }
    if (fclose (self->f) != 0 && !bad) {
        bad = 1;
        why = errno;
    }
    self->f = NULL;
    if (bad || self->failed) {
        snprintf (err, err_size, "cannot write %s: %s", self->shown,
                  self->failed ? "out of memory" : why ? strerror (why) : "write error");
        sb_safe_file_abort (self);
        return -1;
    }
    if (s_place (self) != 0) {
        if (errno == EEXIST)
            snprintf (err, err_size, "%s exists already: not overwritten", self->shown);
        else
            snprintf (err, err_size, "cannot rename %s to %s: %s", self->tmp, self->shown, strerror (errno));
        sb_safe_file_abort (self);
        return -1;
    }
    /* the name itself on disk: a crash now leaves the whole file, not an empty name */
    int rc = 0;
    if (fsync (self->dirfd) != 0 && errno != EINVAL) {
        snprintf (err, err_size, "cannot flush the folder of %s: %s", self->shown, strerror (errno));
        rc = -1;
    }
    close (self->dirfd);
    self->dirfd = -1;
    return rc;
}
