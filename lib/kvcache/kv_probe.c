/* kv_probe: the storage honesty check of a folder (kv_probe.h). */
#include "kv_probe.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/lib-names.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* the file's bytes are written from a buffer of this size, refilled with
 * new bytes each time, so memory stays flat whatever probe_bytes is */
#define S_CHUNK (1u << 20)
/* a fsync that did not reach the device is tried this many times before
 * the refusal: a writeback the kernel starts on its own between the write
 * and the fsync can take some of the file's pages to the device early */
#define S_FSYNC_TRIES 3

/* Two probes at once in one process (ranks are threads of one worker)
 * would add each other's reads to /proc/self/io and their writes to the
 * device's counters: one at a time. */
static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;

/* the functions the benchmark's I/O goes through, and what a replacement
 * makes untrustworthy */
static const char S_DROP[] = "the page-cache drop before each read cannot be trusted";
static const char S_SYNC[] = "the device write time (fsync) cannot be trusted";
static const char S_OPEN[] = "file opens cannot be trusted to reach the file system";
static const char S_READ[] = "reads cannot be trusted to reach the device";
static const char S_WRITE[] = "writes cannot be trusted to reach the device";
static const char S_RES[] = "this check's page residency figures cannot be trusted";
static const struct {
    const char *name;
    const char *trust;
} S_FUNCS[] = {
    {"posix_fadvise", S_DROP}, {"posix_fadvise64", S_DROP},
    {"fsync", S_SYNC},         {"fdatasync", S_SYNC},
    {"open", S_OPEN},          {"open64", S_OPEN},          {"openat", S_OPEN}, {"openat64", S_OPEN},
    {"read", S_READ},          {"pread", S_READ},           {"pread64", S_READ},
    {"write", S_WRITE},        {"pwrite", S_WRITE},         {"pwrite64", S_WRITE},
    {"mincore", S_RES},
};
#define S_NFUNCS (sizeof S_FUNCS / sizeof S_FUNCS[0])

const char *
sb_kv_probe_status_name (sb_kv_probe_status_t s)
{
    switch (s) {
    case SB_KV_PROBE_OK: return "OK";
    case SB_KV_PROBE_REFUSED: return "REFUSED";
    case SB_KV_PROBE_UNVERIFIABLE: return "UNVERIFIABLE";
    }
    return "?";
}

/* append to a text buffer, truncating */
static void __attribute__ ((format (printf, 3, 4)))
s_add (char *buf, size_t size, const char *fmt, ...)
{
    size_t len = strnlen (buf, size);
    if (len + 1 >= size)
        return;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf + len, size - len, fmt, ap);
    va_end (ap);
}

/* one check's result on the line, "; " after the previous one */
static void __attribute__ ((format (printf, 2, 3)))
s_line (sb_kv_probe_t *out, const char *fmt, ...)
{
    if (out->line[0])
        s_add (out->line, sizeof out->line, "; ");
    size_t len = strnlen (out->line, sizeof out->line);
    if (len + 1 >= sizeof out->line)
        return;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (out->line + len, sizeof out->line - len, fmt, ap);
    va_end (ap);
}

static void __attribute__ ((format (printf, 3, 4)))
s_set (sb_kv_probe_t *out, sb_kv_probe_status_t status, const char *fmt, ...)
{
    out->status = status;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (out->why, sizeof out->why, fmt, ap);
    va_end (ap);
}

static double
s_mib (uint64_t bytes)
{
    return (double) bytes / (1024.0 * 1024.0);
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ */
/* check 1: the functions resolve to the C library                     */

/* Was the object at path named in LD_PRELOAD or /etc/ld.so.preload? (the
 * dynamic linker takes both, separated by spaces or colons) */
static int
s_listed (const char *list, const char *path)
{
    const char *base = strrchr (path, '/');
    base = base ? base + 1 : path;
    const char *p = list;
    while (*p) {
        size_t skip = strspn (p, " :\t\n");
        p += skip;
        size_t len = strcspn (p, " :\t\n");
        if (len == 0)
            break;
        const char *tb = p;
        for (size_t i = 0; i < len; i++)
            if (p[i] == '/')
                tb = p + i + 1;
        size_t tblen = len - (size_t) (tb - p);
        if ((strlen (path) == len && strncmp (p, path, len) == 0)
            || (strlen (base) == tblen && strncmp (tb, base, tblen) == 0))
            return 1;
        p += len;
    }
    return 0;
}

static const char *
s_origin (const char *path)
{
    const char *env = getenv ("LD_PRELOAD");
    if (env && s_listed (env, path))
        return "LD_PRELOAD";
    FILE *f = fopen ("/etc/ld.so.preload", "re");
    if (f) {
        char buf[4096];
        size_t n = fread (buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose (f);
        if (s_listed (buf, path))
            return "/etc/ld.so.preload";
    }
    return "loaded ahead of the C library";
}

/* Is the object loaded at base a sanitizer's runtime? Its interceptors do
 * their bookkeeping and call the C library's function: they do not stand in
 * for it. Known by the runtime's init entry point living in the same object
 * (clang links the runtime into the program itself, gcc loads a library). */
static int
s_sanitizer (const void *base)
{
    static const char *const inits[] = {"__asan_init", "__tsan_init", "__msan_init", "__lsan_init",
                                        "__hwasan_init"};
    for (size_t i = 0; i < sizeof inits / sizeof inits[0]; i++) {
        void *sym = dlsym (RTLD_DEFAULT, inits[i]);
        Dl_info di;
        if (sym && dladdr (sym, &di) && di.dli_fbase == base)
            return 1;
    }
    return 0;
}

static const char *
s_base (const char *path)
{
    const char *b = strrchr (path, '/');
    return b ? b + 1 : path;
}

int
sb_kv_probe_symbols (const char *folder, sb_kv_probe_t *out)
{
    const char *who = folder ? folder : "this process";
    /* the C library's own definitions: looked up in it alone (a handle's
     * scope is the object and its dependencies, which a preloaded library
     * is not), against what the process resolves (RTLD_DEFAULT: the global
     * scope, preloaded libraries first, as the dynamic linker bound our
     * calls) */
    void *libc = dlopen (LIBC_SO, RTLD_NOW | RTLD_NOLOAD);
    if (!libc) {
        const char *e = dlerror ();
        s_set (out, SB_KV_PROBE_REFUSED, "%s: the C library %s is not loaded in this process (%s): cannot tell "
               "where its functions come from", who, LIBC_SO, e ? e : "dlopen failed");
        s_line (out, "symbols: %s not found", LIBC_SO);
        return -1;
    }
    char libc_path[PATH_MAX] = LIBC_SO;
    {
        void *sym = dlsym (libc, "fsync");
        Dl_info di;
        if (sym && dladdr (sym, &di) && di.dli_fname && di.dli_fname[0])
            snprintf (libc_path, sizeof libc_path, "%s", di.dli_fname);
    }
    unsigned from_libc = 0, from_san = 0, bad = 0;
    char san_names[256] = "", san_lib[256] = "", also[256] = "";
    size_t first_bad = 0;
    char bad_lib[PATH_MAX] = "";
    for (size_t i = 0; i < S_NFUNCS; i++) {
        void *own = dlsym (libc, S_FUNCS[i].name);
        if (!own)
            continue;      /* not a name of this C library (another architecture's set) */
        void *seen = dlsym (RTLD_DEFAULT, S_FUNCS[i].name);
        if (seen == own) {
            from_libc++;
            continue;
        }
        Dl_info di;
        memset (&di, 0, sizeof di);
        int found = seen && dladdr (seen, &di);
        if (found && s_sanitizer (di.dli_fbase)) {
            from_san++;
            s_add (san_names, sizeof san_names, "%s%s", san_names[0] ? " " : "", S_FUNCS[i].name);
            snprintf (san_lib, sizeof san_lib, "%s",
                      di.dli_fname && di.dli_fname[0] ? s_base (di.dli_fname) : "the program");
            continue;
        }
        if (bad++ == 0) {
            first_bad = i;
            if (!found)
                snprintf (bad_lib, sizeof bad_lib, "an object dladdr cannot name");
            else if (!di.dli_fname || !di.dli_fname[0])
                snprintf (bad_lib, sizeof bad_lib, "the program itself");
            else
                snprintf (bad_lib, sizeof bad_lib, "%s (%s)", di.dli_fname, s_origin (di.dli_fname));
        } else {
            s_add (also, sizeof also, "%s%s", also[0] ? ", " : "", S_FUNCS[i].name);
        }
    }
    dlclose (libc);
    if (bad) {
        s_set (out, SB_KV_PROBE_REFUSED, "%s: %s comes from %s, not the C library (%s): %s", who,
               S_FUNCS[first_bad].name, bad_lib, libc_path, S_FUNCS[first_bad].trust);
        if (also[0])
            s_add (out->why, sizeof out->why, " (also replaced: %s)", also);
        s_line (out, "symbols: %s from %s, not the C library (%u replaced)", S_FUNCS[first_bad].name, bad_lib, bad);
        return 0;
    }
    if (from_san)
        s_line (out, "symbols: %u from the C library, %u through the sanitizer runtime %s (%s)", from_libc, from_san,
                san_lib, san_names);
    else
        s_line (out, "symbols: %u from the C library", from_libc);
    out->status = SB_KV_PROBE_OK;
    return 0;
}

/* ------------------------------------------------------------------ */
/* the block device behind a file system and its counters              */

typedef struct {
    unsigned maj, min;
    char name[64];      /* its name in /sys/block (vda, dm-0, sda1) */
    char stat[64];      /* /sys/dev/block/MAJ:MIN/stat */
} s_dev_t;

/* Sectors (512 bytes whatever the device's block size) read and written,
 * fields 3 and 7 of the stat file (Documentation/block/stat.rst). */
static int
s_dev_counts (const s_dev_t *d, uint64_t *rd, uint64_t *wr)
{
    int fd = open (d->stat, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[512];
    ssize_t n;
    do
        n = read (fd, buf, sizeof buf - 1);
    while (n < 0 && errno == EINTR);
    int e = errno;
    close (fd);
    if (n <= 0) {
        errno = n < 0 ? e : EIO;
        return -1;
    }
    buf[n] = '\0';
    uint64_t v[7];
    char *p = buf;
    for (int i = 0; i < 7; i++) {
        char *end;
        errno = 0;
        v[i] = strtoull (p, &end, 10);
        if (end == p || errno) {
            errno = EPROTO;
            return -1;
        }
        p = end;
    }
    *rd = v[2];
    *wr = v[6];
    return 0;
}

/* unescape mountinfo's octal escapes (\040 for a space) in place */
static void
s_unescape (char *s)
{
    char *w = s;
    for (char *r = s; *r; ) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

/* The mount of st_dev dev in /proc/self/mountinfo: its file system type and
 * source. 0 found, -1 not listed. */
static int
s_mount_of (dev_t dev, char *fstype, size_t ft_size, char *source, size_t src_size)
{
    FILE *f = fopen ("/proc/self/mountinfo", "re");
    if (!f)
        return -1;
    char want[32];
    snprintf (want, sizeof want, "%u:%u", major (dev), minor (dev));
    char *line = NULL;
    size_t cap = 0;
    int rc = -1;
    while (getline (&line, &cap, f) > 0) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS */
        char *save = NULL;
        char *tok = strtok_r (line, " \n", &save);
        for (int i = 0; tok && i < 2; i++)
            tok = strtok_r (NULL, " \n", &save);
        if (!tok || strcmp (tok, want) != 0)
            continue;
        while ((tok = strtok_r (NULL, " \n", &save)) && strcmp (tok, "-") != 0)
            ;
        char *ft = tok ? strtok_r (NULL, " \n", &save) : NULL;
        char *src = ft ? strtok_r (NULL, " \n", &save) : NULL;
        if (!ft || !src)
            continue;
        s_unescape (ft);
        s_unescape (src);
        snprintf (fstype, ft_size, "%s", ft);
        snprintf (source, src_size, "%s", src);
        rc = 0;
        /* a later line of the same device (a bind mount) says the same */
        break;
    }
    free (line);
    fclose (f);
    return rc;
}

/* The block device behind the file system of dev: the device itself when
 * its major is not 0 (a partition or a device-mapper device counts its own
 * I/O); for a file system on an anonymous device (major 0: btrfs, and the
 * ones with no device: tmpfs, overlay, NFS, FUSE) the mount's source when
 * it is a block device. 0 found, 1 none (why says which and why), -1 the
 * device's counters cannot be read (why says so). */
static int
s_device (const char *folder, dev_t dev, s_dev_t *d, char *fstype, size_t ft_size, char *why, size_t why_size)
{
    char source[256] = "";
    fstype[0] = '\0';
    int listed = s_mount_of (dev, fstype, ft_size, source, sizeof source) == 0;
    unsigned maj = major (dev), min = minor (dev);
    if (maj == 0) {
        struct stat sst;
        if (!listed) {
            snprintf (why, why_size, "%s: its file system (device %u:%u) has no block device behind it and is not "
                      "listed in /proc/self/mountinfo: nothing counts what reaches storage", folder, maj, min);
            return 1;
        }
        if (source[0] != '/' || stat (source, &sst) != 0 || !S_ISBLK (sst.st_mode)) {
            snprintf (why, why_size, "%s: a %s file system (source %s) with no block device behind it: nothing on "
                      "this host counts what reaches its storage, so fsync and the page-cache drop cannot be checked",
                      folder, fstype, source);
            return 1;
        }
        maj = major (sst.st_rdev);
        min = minor (sst.st_rdev);
    }
    d->maj = maj;
    d->min = min;
    snprintf (d->stat, sizeof d->stat, "/sys/dev/block/%u:%u/stat", maj, min);
    char link[64], target[PATH_MAX];
    snprintf (link, sizeof link, "/sys/dev/block/%u:%u", maj, min);
    ssize_t n = readlink (link, target, sizeof target - 1);
    if (n > 0) {
        target[n] = '\0';
        snprintf (d->name, sizeof d->name, "%s", s_base (target));
    } else {
        snprintf (d->name, sizeof d->name, "%u:%u", maj, min);
    }
    uint64_t rd, wr;
    if (s_dev_counts (d, &rd, &wr) != 0) {
        int e = errno;
        snprintf (why, why_size, "%s: its block device %u:%u (%s file system) has no readable counters: %s: %s", folder,
                  maj, min, fstype[0] ? fstype : "a", d->stat, strerror (e));
        return -1;
    }
    return 0;
}

/* this process's bytes fetched from storage (/proc/self/io read_bytes): 0,
 * or -1 where the kernel does not account them. Read with open and read,
 * which check 1 has seen are the C library's (stdio is not checked). */
static int
s_proc_read_bytes (uint64_t *v)
{
    int fd = open ("/proc/self/io", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[1024];
    size_t len = 0;
    for (;;) {
        ssize_t n = read (fd, buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t) n;
        if (len == sizeof buf - 1)
            break;
    }
    close (fd);
    buf[len] = '\0';
    const char *p = strstr (buf, "\nread_bytes: ");
    if (!p)
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull (p + 13, &end, 10);
    if (errno || end == p + 13)
        return -1;
    *v = x;
    return 0;
}

/* ------------------------------------------------------------------ */
/* the probe file                                                      */

/* splitmix64: bytes no compressor or deduplicating device can shrink, new
 * for every chunk; a zero byte becomes 0xA5 (never an all-zero block, which
 * some devices and file systems store as a hole) */
static void
s_fill (unsigned char *buf, size_t n, uint64_t *state)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        for (size_t k = 0; k < 8 && i + k < n; k++) {
            unsigned char c = (unsigned char) (z >> (8 * k));
            buf[i + k] = c ? c : 0xA5;
        }
    }
}

static int
s_pwrite_all (int fd, const unsigned char *buf, size_t n, off_t off)
{
    while (n) {
        ssize_t w = pwrite (fd, buf, n, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        buf += w;
        n -= (size_t) w;
        off += w;
    }
    return 0;
}

/* read [0, bytes) into buf chunk by chunk; 0, or -1 with errno (a short
 * file: EIO) */
static int
s_read_all (int fd, unsigned char *buf, size_t chunk, uint64_t bytes)
{
    uint64_t off = 0;
    while (off < bytes) {
        size_t want = bytes - off < chunk ? (size_t) (bytes - off) : chunk;
        ssize_t r = pread (fd, buf, want, (off_t) off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0) {
            errno = EIO;
            return -1;
        }
        off += (uint64_t) r;
    }
    return 0;
}

/* pages of [0, bytes) of fd resident in the page cache (mincore over a
 * read-only shared mapping: it touches no page). -1 with errno. */
static int
s_resident (int fd, uint64_t bytes, size_t page, unsigned char *vec, uint64_t *resident)
{
    void *m = mmap (NULL, (size_t) bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return -1;
    int rc = mincore (m, (size_t) bytes, vec);
    int e = errno;
    if (munmap (m, (size_t) bytes) != 0 && rc == 0) {
        e = errno;
        rc = -1;
    }
    if (rc != 0) {
        errno = e;
        return -1;
    }
    uint64_t pages = bytes / page, r = 0;
    for (uint64_t i = 0; i < pages; i++)
        r += vec[i] & 1u;
    *resident = r;
    return 0;
}

typedef struct {
    const char *folder;
    char path[PATH_MAX];
    int fd, dfd;                /* the probe file; its O_DIRECT descriptor */
    unsigned char *buf;         /* S_CHUNK bytes, page-aligned (O_DIRECT) */
    unsigned char *vec;         /* mincore's vector */
    uint64_t bytes;
    size_t page;
    uint64_t seed;
} s_probe_t;

/* An error of the probe's own: -1, the folder, the operation, the errno. */
static int
s_fail (sb_kv_probe_t *out, const s_probe_t *p, const char *op, int e)
{
    s_set (out, SB_KV_PROBE_REFUSED, "%s: %s %s: %s", p->folder, op, p->path, strerror (e));
    s_line (out, "probe file: %s failed (%s)", op, strerror (e));
    return -1;
}

static int
s_fail_dev (sb_kv_probe_t *out, const s_probe_t *p, const s_dev_t *d, int e)
{
    s_set (out, SB_KV_PROBE_REFUSED, "%s: reading the counters of its device %s: %s: %s", p->folder, d->name, d->stat,
           strerror (e));
    s_line (out, "device: reading %s failed (%s)", d->stat, strerror (e));
    return -1;
}

/* check 2: write the file, fsync it; the device's written sectors across
 * the fsync (with O_DIRECT: across the writes and the fsync) */
static int
s_check_fsync (sb_kv_probe_t *out, s_probe_t *p, const s_dev_t *d, int odirect)
{
    int wfd = odirect ? p->dfd : p->fd;
    uint64_t best = 0;
    double best_s = 0;
    for (int attempt = 1; attempt <= S_FSYNC_TRIES; attempt++) {
        uint64_t rd0, wr0, rd1, wr1, rdw, wrw;
        if (s_dev_counts (d, &rd0, &wr0) != 0)
            return s_fail_dev (out, p, d, errno);
        for (uint64_t off = 0; off < p->bytes; off += S_CHUNK) {
            size_t n = p->bytes - off < S_CHUNK ? (size_t) (p->bytes - off) : S_CHUNK;
            s_fill (p->buf, n, &p->seed);
            if (s_pwrite_all (wfd, p->buf, n, (off_t) off) != 0)
                return s_fail (out, p, odirect ? "O_DIRECT write of" : "write of", errno);
        }
        if (s_dev_counts (d, &rdw, &wrw) != 0)
            return s_fail_dev (out, p, d, errno);
        double t0 = s_now ();
        if (fsync (wfd) != 0)
            return s_fail (out, p, "fsync of", errno);
        double took = s_now () - t0;
        if (s_dev_counts (d, &rd1, &wr1) != 0)
            return s_fail_dev (out, p, d, errno);
        uint64_t written = ((odirect ? wr1 - wr0 : wr1 - wrw)) * 512u;
        if (written >= best) {
            best = written;
            best_s = took;
        }
        if (written >= p->bytes) {
            s_line (out, "fsync: device %s (%u:%u) wrote %.2f MiB during %s of %.2f MiB (%.1f ms%s)", d->name, d->maj,
                    d->min, s_mib (written), odirect ? "the O_DIRECT writes and fsync" : "fsync", s_mib (p->bytes),
                    took * 1e3, attempt > 1 ? ", not the first try" : "");
            return 0;
        }
    }
    s_line (out, "fsync: device %s (%u:%u) wrote %.2f MiB during %s of %.2f MiB (%.3f ms; best of %d)", d->name, d->maj,
            d->min, s_mib (best), odirect ? "the O_DIRECT writes and fsync" : "fsync", s_mib (p->bytes), best_s * 1e3,
            S_FSYNC_TRIES);
    s_set (out, SB_KV_PROBE_REFUSED,
           "%s: fsync of the %" PRIu64 "-byte probe file %s returned 0 but its device %s (%u:%u) wrote only %" PRIu64
           " bytes during %s (best of %d tries), expected at least %" PRIu64
           ": fsync does not reach the device, so its time is not a device write time",
           p->folder, p->bytes, p->path, d->name, d->maj, d->min, best,
           odirect ? "the O_DIRECT writes and fsync" : "it", S_FSYNC_TRIES, p->bytes);
    return 0;
}

/* check 3: residency before and after posix_fadvise(DONTNEED), then a
 * re-read's bytes fetched from storage */
static int
s_check_drop (sb_kv_probe_t *out, s_probe_t *p, const s_dev_t *d)
{
    uint64_t pages = p->bytes / p->page, before, after;
    if (s_resident (p->fd, p->bytes, p->page, p->vec, &before) != 0)
        return s_fail (out, p, "mmap/mincore of", errno);
    int reread = 0;
    if (before < pages - pages / 8) {
        /* evicted already (memory pressure): read it in, to see a drop */
        if (s_read_all (p->fd, p->buf, S_CHUNK, p->bytes) != 0)
            return s_fail (out, p, "read of", errno);
        if (s_resident (p->fd, p->bytes, p->page, p->vec, &before) != 0)
            return s_fail (out, p, "mmap/mincore of", errno);
        reread = 1;
    }
    if (before < pages - pages / 8) {
        s_line (out, "drop: %" PRIu64 "/%" PRIu64 " pages resident after the write%s", before, pages,
                reread ? " and a read" : "");
        s_set (out, SB_KV_PROBE_UNVERIFIABLE,
               "%s: only %" PRIu64 " of the %" PRIu64 " pages of the probe file %s stay in the page cache after it was "
               "written and read (mincore): a drop cannot be told from no cache",
               p->folder, before, pages, p->path);
        return 0;
    }
    int rc = posix_fadvise (p->fd, 0, 0, POSIX_FADV_DONTNEED);   /* returns the error, not -1 */
    if (rc != 0) {
        s_line (out, "drop: posix_fadvise(DONTNEED) failed (%s)", strerror (rc));
        s_set (out, SB_KV_PROBE_REFUSED, "%s: posix_fadvise(POSIX_FADV_DONTNEED) on the probe file %s failed: %s: the "
               "page-cache drop before each read does not happen", p->folder, p->path, strerror (rc));
        return 0;
    }
    if (s_resident (p->fd, p->bytes, p->page, p->vec, &after) != 0)
        return s_fail (out, p, "mmap/mincore of", errno);
    s_line (out, "drop: %" PRIu64 "/%" PRIu64 " pages resident before, %" PRIu64 " after posix_fadvise(DONTNEED)", before,
            pages, after);
    if (after > pages / 8) {
        s_set (out, SB_KV_PROBE_REFUSED,
               "%s: posix_fadvise(POSIX_FADV_DONTNEED) returned 0 but %" PRIu64 " of the %" PRIu64 " pages of the probe "
               "file %s stay resident (mincore; at most %" PRIu64 " expected): the page-cache drop before each read "
               "does not happen, reads would be timed from memory",
               p->folder, after, pages, p->path, pages / 8);
        return 0;
    }
    uint64_t io0 = 0, io1 = 0, rd0, wr0, rd1, wr1;
    int have_io = s_proc_read_bytes (&io0) == 0;
    if (s_dev_counts (d, &rd0, &wr0) != 0)
        return s_fail_dev (out, p, d, errno);
    if (s_read_all (p->fd, p->buf, S_CHUNK, p->bytes) != 0)
        return s_fail (out, p, "re-read of", errno);
    if (s_dev_counts (d, &rd1, &wr1) != 0)
        return s_fail_dev (out, p, d, errno);
    if (have_io && s_proc_read_bytes (&io1) != 0)
        have_io = 0;
    uint64_t dev_read = (rd1 - rd0) * 512u;
    /* this process's own count when the kernel keeps it (other readers of
     * the device do not add to it), else the device's */
    uint64_t fetched = have_io ? io1 - io0 : dev_read;
    uint64_t need = p->bytes - p->bytes / 8;
    s_line (out, "re-read: %.2f MiB of %.2f MiB fetched from storage (%s; device %s read %.2f MiB)", s_mib (fetched),
            s_mib (p->bytes), have_io ? "/proc/self/io read_bytes" : "device read sectors", d->name, s_mib (dev_read));
    if (fetched < need) {
        s_set (out, SB_KV_PROBE_REFUSED,
               "%s: after posix_fadvise(POSIX_FADV_DONTNEED) a re-read of the probe file %s fetched only %" PRIu64
               " bytes from storage (%s), expected at least %" PRIu64 ": reads would be timed from memory",
               p->folder, p->path, fetched, have_io ? "/proc/self/io read_bytes" : "the device's read sectors", need);
        return 0;
    }
    return 0;
}

static int
s_probe (const char *folder, uint64_t probe_bytes, int odirect, unsigned flags, sb_kv_probe_t *out, s_probe_t *p)
{
    if (!(flags & SB_KV_PROBE_MEASURE_ONLY)) {
        if (sb_kv_probe_symbols (folder, out) != 0)
            return -1;
        if (out->status != SB_KV_PROBE_OK)
            return 0;
    }
    long ps = sysconf (_SC_PAGESIZE);
    p->page = ps > 4096 ? (size_t) ps : 4096;
    if (probe_bytes == 0)
        probe_bytes = SB_KV_PROBE_DEFAULT_BYTES;
    if (probe_bytes > SB_KV_PROBE_MAX_BYTES) {
        s_set (out, SB_KV_PROBE_REFUSED, "%s: a probe of %" PRIu64 " bytes is more than the %llu accepted", folder,
               probe_bytes, (unsigned long long) SB_KV_PROBE_MAX_BYTES);
        return -1;
    }
    /* whole pages: O_DIRECT's alignment, and mincore counts pages */
    p->bytes = (probe_bytes + p->page - 1) / p->page * p->page;

    struct stat st;
    if (stat (folder, &st) != 0) {
        int e = errno;
        s_set (out, SB_KV_PROBE_REFUSED, "%s: stat: %s", folder, strerror (e));
        return -1;
    }
    if (!S_ISDIR (st.st_mode)) {
        s_set (out, SB_KV_PROBE_REFUSED, "%s: not a directory", folder);
        return -1;
    }
    /* the device first: a folder with none behind it (a network or FUSE
     * file system among them) is not written at all */
    s_dev_t d;
    char fstype[64];
    int dv = s_device (folder, st.st_dev, &d, fstype, sizeof fstype, out->why, sizeof out->why);
    if (dv != 0) {
        out->status = SB_KV_PROBE_UNVERIFIABLE;
        s_line (out, "device: none for st_dev %u:%u (%s)", major (st.st_dev), minor (st.st_dev),
                fstype[0] ? fstype : "not listed in mountinfo");
        return 0;
    }

    if (snprintf (p->path, sizeof p->path, "%s/.shardbench-kvprobe-XXXXXX", folder) >= (int) sizeof p->path) {
        s_set (out, SB_KV_PROBE_REFUSED, "%s: the folder's path is too long for the probe file", folder);
        return -1;
    }
    /* O_EXCL (mkstemp's) never follows a link at the name; O_NOFOLLOW says so */
    p->fd = mkostemp (p->path, O_CLOEXEC | O_NOFOLLOW);
    if (p->fd < 0) {
        int e = errno;
        s_set (out, SB_KV_PROBE_REFUSED, "%s: cannot create the probe file %s: %s", folder, p->path, strerror (e));
        p->path[0] = '\0';      /* nothing to remove */
        return -1;
    }
    if (posix_memalign ((void **) &p->buf, p->page, S_CHUNK) != 0 || !(p->vec = malloc (p->bytes / p->page))) {
        s_set (out, SB_KV_PROBE_REFUSED, "%s: out of memory for the probe's buffers", folder);
        return -1;
    }
    if (odirect) {
        p->dfd = open (p->path, O_WRONLY | O_DIRECT | O_NOFOLLOW | O_CLOEXEC);
        if (p->dfd < 0) {
            int e = errno;
            s_line (out, "O_DIRECT: open failed (%s)", strerror (e));
            s_set (out, SB_KV_PROBE_REFUSED, "%s: the O_DIRECT open of the probe file %s failed: %s (a %s file system%s)",
                   folder, p->path, strerror (e), fstype[0] ? fstype : "?",
                   e == EINVAL ? " that does not take O_DIRECT" : "");
            return 0;
        }
        /* the name still names the file mkstemp made (nobody swapped it) */
        struct stat a, b;
        if (fstat (p->fd, &a) != 0 || fstat (p->dfd, &b) != 0)
            return s_fail (out, p, "fstat of", errno);
        if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
            s_set (out, SB_KV_PROBE_REFUSED, "%s: the probe file %s was replaced by another while being probed", folder,
                   p->path);
            return -1;
        }
    }
    p->seed = (uint64_t) getpid () * 0x9E3779B97F4A7C15ull ^ (uint64_t) (s_now () * 1e9);

    if (s_check_fsync (out, p, &d, odirect) != 0)
        return -1;
    if (out->status != SB_KV_PROBE_OK)
        return 0;
    if (!odirect) {
        if (s_check_drop (out, p, &d) != 0)
            return -1;
        if (out->status != SB_KV_PROBE_OK)
            return 0;
    }
    if (odirect)
        s_line (out, "O_DIRECT: opened, written and flushed; no page cache to drop");
    return 0;
}

int
sb_kv_probe_folder_flags (const char *folder, uint64_t probe_bytes, int odirect, unsigned flags, sb_kv_probe_t *out)
{
    memset (out, 0, sizeof *out);
    out->status = SB_KV_PROBE_OK;
    if (!folder || !folder[0]) {
        s_set (out, SB_KV_PROBE_REFUSED, "no folder given to probe");
        return -1;
    }
    s_probe_t p = {.folder = folder, .fd = -1, .dfd = -1};
    int lk = pthread_mutex_lock (&s_lock);
    if (lk != 0) {
        s_set (out, SB_KV_PROBE_REFUSED, "%s: pthread_mutex_lock: %s", folder, strerror (lk));
        return -1;
    }
    int rc = s_probe (folder, probe_bytes, odirect, flags, out, &p);
    /* whatever happened: the probe file goes */
    if (p.dfd >= 0)
        close (p.dfd);
    if (p.fd >= 0)
        close (p.fd);
    if (p.path[0] && p.fd >= 0 && unlink (p.path) != 0 && errno != ENOENT) {
        int e = errno;
        if (rc == 0 && out->status == SB_KV_PROBE_OK) {
            s_set (out, SB_KV_PROBE_REFUSED, "%s: cannot remove the probe file %s: %s", folder, p.path, strerror (e));
            rc = -1;
        }
    }
    free (p.buf);
    free (p.vec);
    pthread_mutex_unlock (&s_lock);
    if (rc != 0)
        out->status = SB_KV_PROBE_REFUSED;
    return rc;
}

int
sb_kv_probe_folder (const char *folder, uint64_t probe_bytes, int odirect, sb_kv_probe_t *out)
{
    return sb_kv_probe_folder_flags (folder, probe_bytes, odirect, 0, out);
}
