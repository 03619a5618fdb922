/* datafolder: the lock, marker, probe and temporaries of a local data folder. */
#include "datafolder.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- lock */

/* What the exclusive holder wrote into the lock file ("" when nothing). */
static void
s_holder (int fd, char *out, size_t size)
{
    out[0] = '\0';
    ssize_t n = pread (fd, out, size - 1, 0);
    if (n <= 0)
        return;
    out[n] = '\0';
    char *nl = strchr (out, '\n');
    if (nl)
        *nl = '\0';
}

/* The holder line says "... since EPOCH" (seconds, as every shardbench
 * writes it: the file stays machine-readable and writer-independent);
 * a refusal shows it as a UTC time and how long ago, so that whoever reads
 * it can tell a datagen just started from one left running for days. A
 * line of another form is left as it is. */
static void
s_holder_readable (char *holder, size_t size, time_t now)
{
    char *since = strstr (holder, " since ");
    if (!since)
        return;
    const char *digits = since + 7;
    if (!isdigit ((unsigned char) *digits))
        return;
    errno = 0;
    char *end;
    long long t = strtoll (digits, &end, 10);
    if (errno || *end || t < 0)
        return;
    time_t at = (time_t) t;
    struct tm tm;
    char when[64], ago[64];
    if (!gmtime_r (&at, &tm) || strftime (when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
        return;
    long long age = (long long) now - t;
    if (age < 0)
        snprintf (ago, sizeof ago, "%lld s ahead of this host's clock", -age);
    else if (age < 60)
        snprintf (ago, sizeof ago, "%lld s ago", age);
    else if (age < 3600)
        snprintf (ago, sizeof ago, "%lld min %02lld s ago", age / 60, age % 60);
    else if (age < 86400)
        snprintf (ago, sizeof ago, "%lld h %02lld min ago", age / 3600, age % 3600 / 60);
    else
        snprintf (ago, sizeof ago, "%lld d %02lld h ago", age / 86400, age % 86400 / 3600);
    size_t head = (size_t) (since - holder);
    char out[512];
    snprintf (out, sizeof out, "%.*s since %s (%s)", (int) head, holder, when, ago);
    snprintf (holder, size, "%s", out);
}

static void
s_busy (int fd, const char *folder, char *err, size_t err_size)
{
    /* an exclusive holder excludes a shared lock too: tell which */
    char holder[512];
    if (flock (fd, LOCK_SH | LOCK_NB) == 0) {
        flock (fd, LOCK_UN);
        snprintf (err, err_size, "data folder %s is in use by another shardbench session reading it (%s/%s is"
                  " locked): wait for it to end", folder, folder, SB_DATAFOLDER_LOCK);
        return;
    }
    s_holder (fd, holder, sizeof holder);
    s_holder_readable (holder, sizeof holder, time (NULL));
    snprintf (err, err_size, "data folder %s is in use: %s holds %s/%s (another datagen writes there):"
              " wait for it to end", folder, holder[0] ? holder : "another shardbench session", folder,
              SB_DATAFOLDER_LOCK);
}

static void
s_write_holder (int fd, const char *what)
{
    char host[256], line[512];
    if (gethostname (host, sizeof host - 1) != 0)
        snprintf (host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    int n = snprintf (line, sizeof line, "%s on host %s pid %ld since %ld\n", what, host, (long) getpid (),
                      (long) time (NULL));
    if (n <= 0 || (size_t) n >= sizeof line)
        return;
    /* best effort: the holder line only makes a refusal clearer */
    if (ftruncate (fd, 0) == 0 && pwrite (fd, line, (size_t) n, 0) == n)
        return;
}

int
sb_datafolder_lock (const char *folder, int exclusive, const char *what, char *err, size_t err_size)
{
    char path[PATH_MAX];
    if (sb_strf (path, sizeof path, "%s/%s", folder, SB_DATAFOLDER_LOCK) != 0) {
        snprintf (err, err_size, "data folder %s: name too long", folder);
        return -1;
    }
    int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && !exclusive && (errno == EROFS || errno == EACCES || errno == EPERM)) {
        /* a read-only dataset: lock what is there, if anything */
        int saved = errno;
        fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
            snprintf (err, err_size, "data folder %s is read-only here (%s), so it is not locked", folder,
                      strerror (saved));
            return -2;
        }
    }
    if (fd < 0) {
        snprintf (err, err_size, "cannot open the lock of data folder %s (%s): %s", folder, path, strerror (errno));
        return -1;
    }
    if (flock (fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            s_busy (fd, folder, err, err_size);
        else
            snprintf (err, err_size, "cannot lock data folder %s (%s): %s", folder, path, strerror (errno));
        close (fd);
        return -1;
    }
    if (exclusive)
        s_write_holder (fd, what);
    return fd;
}

int
sb_datafolder_lock_upgrade (int fd, const char *folder, const char *what, char *err, size_t err_size)
{
    if (flock (fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            snprintf (err, err_size, "data folder %s is in use by another shardbench session (%s/%s is locked):"
                      " cannot generate the dataset there now", folder, folder, SB_DATAFOLDER_LOCK);
        else
            snprintf (err, err_size, "cannot lock data folder %s: %s", folder, strerror (errno));
        return -1;
    }
    s_write_holder (fd, what);
    return 0;
}

void
sb_datafolder_unlock (int *fd_p)
{
    if (*fd_p >= 0)
        close (*fd_p);
    *fd_p = -1;
}

/* ---------------------------------------------------------------- marker */

static int
s_write_all (int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t w = write (fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t) w;
    }
    return 0;
}

/* dataset.record_element_type as the marker writes it (uint8 when unset). */
static const char *
s_element_type (const sb_dataset_t *ds)
{
    return ds->element_type && *ds->element_type ? ds->element_type : "uint8";
}

/* dataset.record_dims as the marker writes it: "a,b,c", "" when none. */
static void
s_dims_text (const sb_dataset_t *ds, char *out, size_t size)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t k = 0; ds->record_dims && k < ds->record_ndims && at < size; k++) {
        int w = snprintf (out + at, size - at, "%s%llu", k ? "," : "", (unsigned long long) ds->record_dims[k]);
        if (w < 0)
            break;
        at += (size_t) w;
    }
}

int
sb_datafolder_marker_format (const sb_dataset_t *ds, const char *state, uint64_t bytes, char *buf, size_t cap,
                             size_t *len, char *err, size_t err_size)
{
    char dims[200];
    s_dims_text (ds, dims, sizeof dims);
    char host[256];
    if (gethostname (host, sizeof host - 1) != 0)
        snprintf (host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    int n = snprintf (buf, cap,
                      "# shardbench dataset marker: what generated train/ (see docs/ARCHITECTURE.md, Concepts)\n"
                      "state=%s\n"
                      "dataset.format=%s\n"
                      "dataset.file_prefix=%s\n"
                      "dataset.num_files_train=%" PRIu64 "\n"
                      "dataset.num_subfolders_train=%" PRIu64 "\n"
                      "dataset.num_samples_per_file=%" PRIu64 "\n"
                      "dataset.record_length_bytes=%" PRIu64 "\n"
                      "dataset.record_length_bytes_stdev=%" PRIu64 "\n"
                      "dataset.record_element_type=%s\n"
                      "dataset.record_dims=%s\n"
                      "dataset.parquet.columns=%s\n"
                      "dataset.parquet.row_group_size=%" PRIu64 "\n"
                      "dataset.compression=%s\n"
                      "seed=%" PRIu64 "\n"
                      "bytes=%" PRIu64 "\n"
                      "host=%s\n"
                      "written_at=%ld\n",
                      state, ds->format, ds->prefix, ds->files, ds->subfolders, ds->samples_per_file,
                      ds->record_length, ds->record_stdev, s_element_type (ds), dims,
                      ds->parquet_columns ? ds->parquet_columns : "",
                      ds->parquet_row_group, ds->parquet_compression && *ds->parquet_compression
                      ? ds->parquet_compression : "none", ds->seed, bytes, host, (long) time (NULL));
    if (n < 0 || (size_t) n >= cap) {
        snprintf (err, err_size, "dataset marker: too long (over %zu bytes)", cap);
        return -1;
    }
    *len = (size_t) n;
    return 0;
}

int
sb_datafolder_marker_write (const char *folder, const sb_dataset_t *ds, const char *state, uint64_t bytes,
                            char *err, size_t err_size)
{
    char path[PATH_MAX], tmp[PATH_MAX], host[256];
    if (gethostname (host, sizeof host - 1) != 0)
        snprintf (host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    if (sb_strf (path, sizeof path, "%s/%s", folder, SB_DATAFOLDER_MARKER) != 0
        || sb_datafolder_temp_name (tmp, sizeof tmp, folder, SB_DATAFOLDER_MARKER, host) != 0) {
        snprintf (err, err_size, "data folder %s: name too long", folder);
        return -1;
    }
    char *text = malloc (SB_DATAFOLDER_MARKER_MAX);
    if (!text) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    size_t n = 0;
    char why[256];
    if (sb_datafolder_marker_format (ds, state, bytes, text, SB_DATAFOLDER_MARKER_MAX, &n, why, sizeof why) != 0) {
        free (text);
        snprintf (err, err_size, "%s: %s", path, why);
        return -1;
    }
    int fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf (err, err_size, "cannot write the dataset marker %s: %s", tmp, strerror (errno));
        free (text);
        return -1;
    }
    int bad = s_write_all (fd, text, n) != 0 || fsync (fd) != 0;
    int saved = errno;
    free (text);
    if (close (fd) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (!bad && rename (tmp, path) != 0) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        unlink (tmp);
        snprintf (err, err_size, "cannot write the dataset marker %s: %s", path, strerror (saved));
        return -1;
    }
    return 0;
}

int
sb_datafolder_marker_parse (const char *text, size_t len, const char *name, sb_datafolder_marker_t *m, char *err,
                            size_t err_size)
{
    memset (m, 0, sizeof *m);
    char line[40000];   /* dataset.parquet.columns= and up to 32767 characters */
    int lineno = 0;
    size_t at = 0;
    while (at < len) {
        lineno++;
        const char *nl = memchr (text + at, '\n', len - at);
        size_t n = nl ? (size_t) (nl - (text + at)) : len - at;
        if (n >= sizeof line) {
            snprintf (err, err_size, "%s:%d: line too long", name, lineno);
            return -1;
        }
        memcpy (line, text + at, n);
        line[n] = '\0';
        at += n + (nl ? 1 : 0);
        if (strlen (line) != n) {
            snprintf (err, err_size, "%s:%d: not text (a NUL byte)", name, lineno);
            return -1;
        }
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *eq = strchr (line, '=');
        if (!eq) {
            snprintf (err, err_size, "%s:%d: not KEY=VALUE", name, lineno);
            return -1;
        }
        *eq = '\0';
        const char *k = line, *v = eq + 1;
        int bad = 0;
#define S_STR(key, field) else if (!strcmp (k, key)) bad = sb_strf (field, sizeof field, "%s", v) != 0
#define S_U64(key, field) else if (!strcmp (k, key)) bad = sb_parse_u64_digits (v, &field) != 0
        if (0) {}
        S_STR ("state", m->state);
        S_STR ("dataset.format", m->format);
        S_STR ("dataset.file_prefix", m->file_prefix);
        S_U64 ("dataset.num_files_train", m->files);
        S_U64 ("dataset.num_subfolders_train", m->subfolders);
        S_U64 ("dataset.num_samples_per_file", m->samples_per_file);
        S_U64 ("dataset.record_length_bytes", m->record_length);
        S_U64 ("dataset.record_length_bytes_stdev", m->record_stdev);
        S_STR ("dataset.parquet.columns", m->parquet_columns);
        S_U64 ("dataset.parquet.row_group_size", m->parquet_row_group);
        S_STR ("dataset.compression", m->compression);
        S_U64 ("seed", m->seed);
        S_U64 ("bytes", m->bytes);
        S_STR ("dataset.record_element_type", m->element_type);
        S_STR ("dataset.record_dims", m->record_dims);
        else
            continue;   /* host, written_at and keys of later versions: information only */
#undef S_STR
#undef S_U64
        if (bad) {
            snprintf (err, err_size, "%s:%d: bad value for %s: '%.100s'", name, lineno, k, v);
            return -1;
        }
        if (!strcmp (k, "dataset.record_element_type"))
            m->has_shape = 1;
    }
    if (!m->state[0] || !m->format[0] || !m->files) {
        snprintf (err, err_size, "%s: not a shardbench dataset marker (no state, dataset.format or"
                  " dataset.num_files_train)", name);
        return -1;
    }
    return 0;
}

int
sb_datafolder_marker_read (const char *folder, sb_datafolder_marker_t *m, char *err, size_t err_size)
{
    char path[PATH_MAX];
    memset (m, 0, sizeof *m);
    if (sb_strf (path, sizeof path, "%s/%s", folder, SB_DATAFOLDER_MARKER) != 0) {
        snprintf (err, err_size, "data folder %s: name too long", folder);
        return -1;
    }
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT)
        return 0;
    if (fd < 0) {
        snprintf (err, err_size, "cannot read the dataset marker %s: %s", path, strerror (errno));
        return -1;
    }
    struct stat st;
    errno = 0;
    if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode)) {
        snprintf (err, err_size, "cannot read the dataset marker %s: %s", path,
                  errno ? strerror (errno) : "not a regular file");
        close (fd);
        return -1;
    }
    char *text = malloc (SB_DATAFOLDER_MARKER_MAX);
    if (!text) {
        close (fd);
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    size_t len = 0;
    int rc = 0;
    while (len < SB_DATAFOLDER_MARKER_MAX) {
        ssize_t r = read (fd, text + len, SB_DATAFOLDER_MARKER_MAX - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf (err, err_size, "cannot read the dataset marker %s: %s", path, strerror (errno));
            rc = -1;
            break;
        }
        if (r == 0)
            break;
        len += (size_t) r;
    }
    close (fd);
    if (rc == 0 && len >= SB_DATAFOLDER_MARKER_MAX) {
        snprintf (err, err_size, "%s: not a shardbench dataset marker (%d bytes or more)", path,
                  SB_DATAFOLDER_MARKER_MAX);
        rc = -1;
    }
    if (rc == 0)
        rc = sb_datafolder_marker_parse (text, len, path, m, err, err_size) == 0 ? 1 : -1;
    free (text);
    return rc;
}

int
sb_datafolder_marker_diff (const sb_datafolder_marker_t *m, const sb_dataset_t *ds, int flags, char *diff,
                           size_t diff_size)
{
    int n = 0;
    size_t at = 0;
    diff[0] = '\0';
#define S_NOTE(...) do { n++; if (at < diff_size) { int w = snprintf (diff + at, diff_size - at, __VA_ARGS__); \
        if (w > 0) at += (size_t) w; } } while (0)
#define S_CMP_STR(name, a, b) do { if (strcmp (a, b)) \
        S_NOTE ("%s%s: generated '%s', workload '%s'", at ? "; " : "", name, a, b); } while (0)
#define S_CMP_U64(name, a, b) do { if ((a) != (b)) \
        S_NOTE ("%s%s: generated %" PRIu64 ", workload %" PRIu64, at ? "; " : "", name, (uint64_t) (a), \
                (uint64_t) (b)); } while (0)
    S_CMP_STR ("dataset.format", m->format, ds->format);
    S_CMP_STR ("dataset.file_prefix", m->file_prefix, ds->prefix);
    if (flags & SB_DATAFOLDER_DIFF_FILES)
        S_CMP_U64 ("dataset.num_files_train", m->files, ds->files);
    S_CMP_U64 ("dataset.num_subfolders_train", m->subfolders, ds->subfolders);
    S_CMP_U64 ("dataset.num_samples_per_file", m->samples_per_file, ds->samples_per_file);
    S_CMP_U64 ("dataset.record_length_bytes", m->record_length, ds->record_length);
    S_CMP_U64 ("dataset.record_length_bytes_stdev", m->record_stdev, ds->record_stdev);
    if (m->has_shape) {     /* older markers do not say */
        char dims[200];
        s_dims_text (ds, dims, sizeof dims);
        S_CMP_STR ("dataset.record_element_type", m->element_type, s_element_type (ds));
        S_CMP_STR ("dataset.record_dims", m->record_dims, dims);
    }
    if (!strcmp (ds->format, "parquet")) {
        S_CMP_STR ("dataset.parquet.columns", m->parquet_columns, ds->parquet_columns ? ds->parquet_columns : "");
        S_CMP_U64 ("dataset.parquet.row_group_size", m->parquet_row_group, ds->parquet_row_group);
        S_CMP_STR ("dataset.compression", *m->compression ? m->compression : "none",
                   ds->parquet_compression && *ds->parquet_compression ? ds->parquet_compression : "none");
    }
    if (flags & SB_DATAFOLDER_DIFF_SEED)
        S_CMP_U64 ("seed", m->seed, ds->seed);
#undef S_CMP_U64
#undef S_CMP_STR
#undef S_NOTE
    return n;
}

int
sb_datafolder_marker_remove (const char *folder, char *err, size_t err_size)
{
    char path[PATH_MAX];
    if (sb_strf (path, sizeof path, "%s/%s", folder, SB_DATAFOLDER_MARKER) != 0) {
        snprintf (err, err_size, "data folder %s: name too long", folder);
        return -1;
    }
    if (unlink (path) != 0 && errno != ENOENT) {
        snprintf (err, err_size, "cannot remove %s: %s", path, strerror (errno));
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- scan */

static int
s_all_digits (const char *s, size_t n)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit ((unsigned char) s[i]))
            return 0;
    return 1;
}

/* PREFIX_DIGITS_of_DIGITS.EXT; PREFIX may be empty (DLIO names an empty
 * dataset.file_prefix's files _I_of_N.EXT) */
static int
s_is_dataset_name (const char *name)
{
    const char *of = NULL;
    for (const char *p = strstr (name, "_of_"); p; p = strstr (p + 1, "_of_"))
        of = p;
    if (!of || of == name)
        return 0;
    const char *dot = strchr (of + 4, '.');
    if (!dot || !dot[1] || !s_all_digits (of + 4, (size_t) (dot - of - 4)))
        return 0;
    const char *us = of - 1;
    while (us > name && *us != '_')
        us--;
    return *us == '_' && s_all_digits (us + 1, (size_t) (of - us - 1));
}

int
sb_datafolder_is_dataset_name (const char *name)
{
    return s_is_dataset_name (name);
}

static int
s_is_temporary (const char *name)
{
    size_t n = strlen (name);
    return name[0] == '.' && n > 5 && !strcmp (name + n - 4, ".tmp");
}

/* One folder (train/ or train/SUB), read through its descriptor fd (taken:
 * closed here); rel names it relative to folder in messages. Every entry is
 * looked at, removed and opened relative to fd, never through a path and
 * never through a symbolic link: a link is "other" (never removed, never
 * followed), so a subfolder swapped for a link meanwhile (a shared file
 * system) cannot lead the scan elsewhere. subdirs: descend one level. */
static int
s_scan_fd (const char *folder, int fd, const char *rel, int remove, int subdirs, sb_datafolder_scan_t *scan,
           char *err, size_t err_size)
{
    DIR *d = fdopendir (fd);
    if (!d) {
        snprintf (err, err_size, "cannot read folder %s/%s: %s", folder, rel, strerror (errno));
        close (fd);
        return -1;
    }
    int dfd = dirfd (d);
    int rc = 0;
    struct dirent *e;
    errno = 0;
    while (rc == 0 && (e = readdir (d))) {
        const char *name = e->d_name;
        if (!strcmp (name, ".") || !strcmp (name, ".."))
            continue;
        char crel[PATH_MAX];
        if (sb_strf (crel, sizeof crel, "%s/%s", rel, name) != 0) {
            snprintf (err, err_size, "%s/%s/%s: name too long", folder, rel, name);
            rc = -1;
            break;
        }
        struct stat st;
        if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) {
                errno = 0;
                continue;   /* removed meanwhile (a temporary renamed) */
            }
            snprintf (err, err_size, "cannot stat %s/%s: %s", folder, crel, strerror (errno));
            rc = -1;
            break;
        }
        int kind = 0;   /* 1 dataset file, 2 temporary, 0 other */
        if (S_ISDIR (st.st_mode) && subdirs) {
            int sfd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sfd >= 0) {
                rc = s_scan_fd (folder, sfd, crel, remove, 0, scan, err, err_size);
                /* an emptied subfolder goes; a link put in its place meanwhile fails with ENOTDIR */
                if (rc == 0 && remove && unlinkat (dfd, name, AT_REMOVEDIR) != 0 && errno != ENOTEMPTY
                    && errno != EEXIST && errno != ENOENT && errno != ENOTDIR) {
                    snprintf (err, err_size, "cannot remove folder %s/%s: %s", folder, crel, strerror (errno));
                    rc = -1;
                }
                errno = 0;
                continue;
            }
            if (errno == ENOENT) {
                errno = 0;
                continue;
            }
            if (errno != ELOOP && errno != ENOTDIR) {
                snprintf (err, err_size, "cannot open folder %s/%s: %s", folder, crel, strerror (errno));
                rc = -1;
                break;
            }
            /* replaced by a link or a file since fstatat: other */
        }
        else if (S_ISREG (st.st_mode) && s_is_temporary (name))
            kind = 2;
        else if (S_ISREG (st.st_mode) && s_is_dataset_name (name))
            kind = 1;
        if (kind == 1) {
            scan->dataset_files++;
            scan->dataset_bytes += (uint64_t) st.st_size;
        }
        else if (kind == 2)
            scan->temporaries++;
        else {
            if (!scan->others++)
                snprintf (scan->other, sizeof scan->other, "%s", crel);
        }
        /* unlinkat removes the entry itself: were it a link by now, the link, never its target */
        if ((kind == 1 && (remove & SB_DATAFOLDER_REMOVE_DATASET))
            || (kind == 2 && (remove & SB_DATAFOLDER_REMOVE_TEMPORARIES))) {
            if (unlinkat (dfd, name, 0) != 0 && errno != ENOENT) {
                snprintf (err, err_size, "cannot remove %s/%s: %s", folder, crel, strerror (errno));
                rc = -1;
                break;
            }
            scan->removed++;
        }
        errno = 0;
    }
    if (rc == 0 && errno != 0) {
        snprintf (err, err_size, "cannot read folder %s/%s: %s", folder, rel, strerror (errno));
        rc = -1;
    }
    closedir (d);
    return rc;
}

/* train/ as a symbolic link (train -> /bigdisk/train) is the user's layout:
 * a run reads through it, so the scan looks (and removes) inside its
 * target, but never removes the link nor the folder it points to. Links
 * inside train/ are never followed. */
int
sb_datafolder_scan (const char *folder, int remove, sb_datafolder_scan_t *scan, char *err, size_t err_size)
{
    memset (scan, 0, sizeof *scan);
    int dfd = open (folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ENOENT)
            return 0;   /* no folder: no train/ */
        snprintf (err, err_size, "cannot open data folder %s: %s", folder, strerror (errno));
        return -1;
    }
    int linked = 0;
    int fd = openat (dfd, "train", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
        int saved = errno;
        struct stat st;
        if (fstatat (dfd, "train", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK (st.st_mode)) {
            linked = 1;
            fd = openat (dfd, "train", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        else
            errno = saved;
    }
    if (fd < 0) {
        int saved = errno;
        if (saved == ENOENT && !linked) {
            close (dfd);
            return 0;   /* a missing train/ is empty */
        }
        if (linked) {
            char target[PATH_MAX];
            ssize_t n = readlinkat (dfd, "train", target, sizeof target - 1);
            target[n > 0 ? n : 0] = '\0';
            snprintf (err, err_size, "%s/train is a symbolic link to '%s', which cannot be opened as a folder: %s",
                      folder, target, strerror (saved));
        }
        else
            snprintf (err, err_size, "cannot read folder %s/train: %s", folder, strerror (saved));
        close (dfd);
        return -1;
    }
    int rc = s_scan_fd (folder, fd, "train", remove, 1, scan, err, err_size);
    if (rc == 0 && remove && !linked && unlinkat (dfd, "train", AT_REMOVEDIR) != 0 && errno != ENOTEMPTY
        && errno != EEXIST && errno != ENOENT && errno != ENOTDIR) {
        snprintf (err, err_size, "cannot remove folder %s/train: %s", folder, strerror (errno));
        rc = -1;
    }
    close (dfd);
    return rc;
}

int
sb_datafolder_free_bytes (const char *folder, uint64_t *bytes, char *err, size_t err_size)
{
    char path[PATH_MAX];
    /* train/ first: the files go there, through a link to another file system too */
    if (sb_strf (path, sizeof path, "%s/train", folder) != 0) {
        snprintf (err, err_size, "data folder %s: name too long", folder);
        return -1;
    }
    return sb_free_bytes (path, folder, bytes, err, err_size);
}

/* ---------------------------------------------------------------- probe */

int
sb_datafolder_probe_create (const char *folder, char *name, size_t name_size, char *err, size_t err_size)
{
    uint8_t raw[16];
    if (getrandom (raw, sizeof raw, 0) != (ssize_t) sizeof raw) {
        snprintf (err, err_size, "getrandom: %s", strerror (errno));
        return -1;
    }
    char token[33], path[PATH_MAX];
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf (token + 2 * i, 3, "%02x", raw[i]);
    if (sb_strf (name, name_size, "%s%s", SB_DATAFOLDER_PROBE, token) != 0
        || sb_strf (path, sizeof path, "%s/%s", folder, name) != 0) {
        snprintf (err, err_size, "data folder %s: name too long", folder);
        return -1;
    }
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int ro = errno == EROFS || errno == EACCES || errno == EPERM;
        snprintf (err, err_size, "cannot create the probe %s: %s", path, strerror (errno));
        return ro ? -2 : -1;
    }
    char line[40];
    int n = snprintf (line, sizeof line, "%s\n", token);
    int bad = s_write_all (fd, line, (size_t) n) != 0;
    int saved = errno;
    if (close (fd) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        unlink (path);
        snprintf (err, err_size, "cannot write the probe %s: %s", path, strerror (saved));
        return -1;
    }
    return 0;
}

int
sb_datafolder_probe_check (const char *root, const char *name, char *err, size_t err_size)
{
    size_t plen = strlen (SB_DATAFOLDER_PROBE);
    const char *token = name + plen;
    if (strncmp (name, SB_DATAFOLDER_PROBE, plen) != 0 || strlen (token) != 32 || strspn (token, "0123456789abcdef") != 32) {
        snprintf (err, err_size, "the coordinator sent a malformed probe name '%.80s'", name);
        return -1;
    }
    char path[PATH_MAX];
    if (sb_strf (path, sizeof path, "%s%s", root, name) != 0) {
        snprintf (err, err_size, "probe %s%s: name too long", root, name);
        return -1;
    }
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        snprintf (err, err_size, "cannot read the coordinator's probe %s: %s", path, strerror (errno));
        return -1;
    }
    char buf[64];
    ssize_t n = read (fd, buf, sizeof buf - 1);
    int saved = errno;
    close (fd);
    if (n < 0) {
        snprintf (err, err_size, "cannot read the coordinator's probe %s: %s", path, strerror (saved));
        return -1;
    }
    buf[n] = '\0';
    if (n != 33 || strncmp (buf, token, 32) != 0 || buf[32] != '\n') {
        snprintf (err, err_size, "the probe %s holds other bytes than the coordinator wrote (%zd bytes)", path, n);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- temporaries */

int
sb_datafolder_temp_name (char *out, size_t size, const char *dir, const char *base, const char *host)
{
    char safe[64];
    size_t n = 0;
    for (const char *p = host ? host : ""; *p && n < sizeof safe - 1; p++)
        safe[n++] = isalnum ((unsigned char) *p) || *p == '-' || *p == '_' ? *p : '_';
    safe[n] = '\0';
    uint32_t r = 0;
    if (getrandom (&r, sizeof r, 0) != (ssize_t) sizeof r)
        r = (uint32_t) (sb_mono_ns () ^ (uint64_t) (uintptr_t) out);
    return sb_strf (out, size, "%s/.%s.%s.%ld.%08x.tmp", dir, base, n ? safe : "host", (long) getpid (), r);
}
