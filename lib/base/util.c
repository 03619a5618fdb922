/* util: clocks, seeded random numbers and string helpers. */
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

double
sb_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

uint64_t
sb_mono_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

void
sb_sleep_s (double seconds)
{
    if (!(seconds > 0))
        return;
    struct timespec ts;
    ts.tv_sec = (time_t) seconds;
    ts.tv_nsec = (long) ((seconds - (double) ts.tv_sec) * 1e9);
    while (nanosleep (&ts, &ts) != 0 && errno == EINTR)
        ;
}

uint64_t
sb_splitmix64 (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t
sb_mix (uint64_t a, uint64_t b)
{
    uint64_t state = a ^ (b * 0xd6e8feb86659fd93ull);
    sb_splitmix64 (&state);
    return sb_splitmix64 (&state);
}

double
sb_normal (uint64_t seed, double mean, double stdev)
{
    if (!(stdev > 0))
        return mean;
    uint64_t state = seed;
    /* 53-bit uniforms in (0, 1] and [0, 1) */
    double u1 = ((double) (sb_splitmix64 (&state) >> 11) + 1.0) / 9007199254740992.0;
    double u2 = (double) (sb_splitmix64 (&state) >> 11) / 9007199254740992.0;
    return mean + stdev * sqrt (-2.0 * log (u1)) * cos (2.0 * M_PI * u2);
}

void
sb_content_fill (uint64_t object_seed, uint64_t offset, uint8_t *buf, size_t len)
{
    /* 8-byte words, word w = mix(seed, w): random access at any offset. */
    size_t done = 0;
    while (done < len) {
        uint64_t pos = offset + done;
        uint64_t word = sb_mix (object_seed, pos / 8);
        size_t in_word = pos % 8;
        size_t n = 8 - in_word;
        if (n > len - done)
            n = len - done;
        memcpy (buf + done, (const uint8_t *) &word + in_word, n);
        done += n;
    }
}

size_t
sb_varint_len (uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

const char *
sb_uri_scheme (const char *uri, char *scheme, size_t size)
{
    scheme[0] = '\0';
    const char *sep = strstr (uri, "://");
    if (!sep || sep == uri || (size_t) (sep - uri) >= size)
        return NULL;
    for (const char *p = uri; p < sep; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '+'))
            return NULL;
    memcpy (scheme, uri, (size_t) (sep - uri));
    scheme[sep - uri] = '\0';
    return sep + 3;
}

size_t
sb_utf8_seq (const unsigned char *p)
{
    if (p[0] == 0)
        return 0;
    if (p[0] < 0x80)
        return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf;     /* the second byte's range */
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        n = 2;
    else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3;
        if (p[0] == 0xe0)
            lo = 0xa0;      /* overlong */
        else if (p[0] == 0xed)
            hi = 0x9f;      /* surrogates */
    }
    else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4;
        if (p[0] == 0xf0)
            lo = 0x90;      /* overlong */
        else if (p[0] == 0xf4)
            hi = 0x8f;      /* past U+10FFFF */
    }
    else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return n;
}

int
sb_utf8_valid (const char *s)
{
    const unsigned char *p = (const unsigned char *) s;
    while (*p) {
        size_t n = sb_utf8_seq (p);
        if (!n)
            return 0;
        p += n;
    }
    return 1;
}

int
sb_strf (char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (buf, size, fmt, ap);
    va_end (ap);
    return (n < 0 || (size_t) n >= size) ? -1 : 0;
}

int
sb_mkdirs (const char *path, char *err, size_t err_size)
{
    char buf[PATH_MAX];
    if (sb_strf (buf, sizeof buf, "%s", path) != 0 || !buf[0]) {
        snprintf (err, err_size, "mkdir %s: invalid or too long path", path);
        return -1;
    }
    for (char *p = buf + 1; ; p++) {
        int last = *p == '\0';
        if (*p == '/' || last) {
            *p = '\0';
            if (mkdir (buf, 0755) != 0 && errno != EEXIST) {
                snprintf (err, err_size, "mkdir %s: %s", buf, strerror (errno));
                return -1;
            }
            if (last)
                return 0;
            *p = '/';
        }
    }
}

int
sb_free_bytes (const char *path, const char *name, uint64_t *bytes, char *err, size_t err_size)
{
    char at[PATH_MAX];
    if (sb_strf (at, sizeof at, "%s", path) != 0 || !at[0]) {
        snprintf (err, err_size, "cannot tell the free space of %s: invalid or too long path", name);
        return -1;
    }
    for (;;) {
        struct statvfs sv;
        if (statvfs (at, &sv) == 0) {
            *bytes = (uint64_t) sv.f_bavail * (uint64_t) sv.f_frsize;
            return 0;
        }
        if (errno != ENOENT && errno != ENOTDIR) {
            snprintf (err, err_size, "cannot tell the free space of %s (statvfs %s): %s", name, at, strerror (errno));
            return -1;
        }
        char *slash = strrchr (at, '/');
        if (!slash)
            snprintf (at, sizeof at, ".");
        else if (slash == at)
            at[1] = '\0';
        else
            *slash = '\0';
    }
}

int
sb_fd_limit_raise (uint64_t *soft, uint64_t *hard, char *err, size_t err_size)
{
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) != 0) {
        snprintf (err, err_size, "getrlimit (RLIMIT_NOFILE): %s", strerror (errno));
        return -1;
    }
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit raised = { rl.rlim_max, rl.rlim_max };
        if (setrlimit (RLIMIT_NOFILE, &raised) == 0)
            rl = raised;    /* else the soft limit stays: the callers' checks say what it is */
    }
    *soft = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t) rl.rlim_cur;
    *hard = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : (uint64_t) rl.rlim_max;
    return 0;
}

int
sb_parse_u64_digits (const char *v, uint64_t *out)
{
    if (*v < '0' || *v > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long x = strtoull (v, &end, 10);
    if (errno || *end)
        return -1;
    *out = x;
    return 0;
}

size_t
sb_edit_distance (const char *a, const char *b)
{
    size_t n = strnlen (a, 255), m = strnlen (b, 255);
    size_t row[256];
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[m];
}

size_t
sb_typo_limit (const char *key)
{
    size_t n = strlen (key);
    return n / 4 > 2 ? n / 4 : 2;
}
