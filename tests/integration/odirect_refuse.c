/* odirect_refuse: an LD_PRELOAD library that makes every open asking for
 * O_DIRECT fail with EINVAL, as a file system without direct I/O does
 * (tmpfs before Linux 6.6), so tests see the error the worker gives for
 * reader.odirect there whatever file system they run on. Other opens go
 * to the C library unchanged. */
/* open and open64 (openat, openat64) are each defined: no redirection */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>

typedef int (*s_openat_fn) (int, const char *, int, ...);
typedef int (*s_open_fn) (const char *, int, ...);

/* the mode argument, present only when the call creates a file */
#define S_MODE(flags, mode)                                  \
    do {                                                     \
        if ((flags) & (O_CREAT | O_TMPFILE)) {               \
            va_list ap;                                      \
            va_start (ap, flags);                            \
            mode = va_arg (ap, unsigned);                    \
            va_end (ap);                                     \
        }                                                    \
    } while (0)

static int
s_at (const char *name, int dirfd, const char *path, int flags, unsigned mode)
{
    if (flags & O_DIRECT) {
        errno = EINVAL;
        return -1;
    }
    union { void *p; s_openat_fn f; } real = { dlsym (RTLD_NEXT, name) };
    return real.f (dirfd, path, flags, mode);
}

static int
s_plain (const char *name, const char *path, int flags, unsigned mode)
{
    if (flags & O_DIRECT) {
        errno = EINVAL;
        return -1;
    }
    union { void *p; s_open_fn f; } real = { dlsym (RTLD_NEXT, name) };
    return real.f (path, flags, mode);
}

int
openat (int dirfd, const char *path, int flags, ...)
{
    unsigned mode = 0;
    S_MODE (flags, mode);
    return s_at ("openat", dirfd, path, flags, mode);
}

int
openat64 (int dirfd, const char *path, int flags, ...)
{
    unsigned mode = 0;
    S_MODE (flags, mode);
    return s_at ("openat64", dirfd, path, flags, mode);
}

int
open (const char *path, int flags, ...)
{
    unsigned mode = 0;
    S_MODE (flags, mode);
    return s_plain ("open", path, flags, mode);
}

int
open64 (const char *path, int flags, ...)
{
    unsigned mode = 0;
    S_MODE (flags, mode);
    return s_plain ("open64", path, flags, mode);
}
