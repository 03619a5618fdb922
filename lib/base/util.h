/* util: clocks, seeded random numbers and small string helpers. */
#ifndef SB_UTIL_H
#define SB_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Wall clock, Unix seconds. */
double sb_now (void);
/* Monotonic clock in nanoseconds (for durations). */
uint64_t sb_mono_ns (void);
/* Sleep for seconds (>= 0), resuming after signals. */
void sb_sleep_s (double seconds);

/* splitmix64: a stateless mixer; sb_mix(a, b) combines two values into one
 * well-spread 64-bit value. Used to derive every seed from the run seed. */
uint64_t sb_splitmix64 (uint64_t *state);
uint64_t sb_mix (uint64_t a, uint64_t b);

/* Normally distributed value from a seed (Box-Muller over splitmix64). */
double sb_normal (uint64_t seed, double mean, double stdev);

/* Fill buf with the bytes at [offset, offset+len) of the deterministic
 * content stream of object `object_seed`. Any byte range of an object can be
 * produced (and so verified) independently. */
void sb_content_fill (uint64_t object_seed, uint64_t offset, uint8_t *buf, size_t len);

/* mkdir -p: create path and its missing parents (mode 0755); folders that
 * exist are fine. Returns 0, or -1 with "mkdir PATH: reason" in err. */
int sb_mkdirs (const char *path, char *err, size_t err_size);

/* Bytes free to an unprivileged writer (statvfs: f_bavail x f_frsize) on
 * the file system of path, else of its nearest existing parent (a folder
 * not made yet is measured where it will be made). name is what an error
 * calls it. Returns 0, or -1 with "cannot tell the free space of NAME
 * (statvfs P): reason" in err. */
int sb_free_bytes (const char *path, const char *name, uint64_t *bytes, char *err, size_t err_size);

/* Bytes of v as a base-128 varint (protobuf's and Thrift compact's:
 * 7 bits a byte, low first). */
size_t sb_varint_len (uint64_t v);

/* The scheme of uri ("s3" for "s3://b/k": letters, digits and '+', before
 * "://") into scheme, "" when uri has none or it does not fit in size.
 * Returns what follows "://" (borrowed from uri), or NULL when no scheme. */
const char *sb_uri_scheme (const char *uri, char *scheme, size_t size);

/* Bytes of the well-formed UTF-8 sequence that starts at p (1 to 4: no
 * overlong form, no surrogate, nothing past U+10FFFF), or 0 when the bytes
 * there are not one (a NUL at p: 0). */
size_t sb_utf8_seq (const unsigned char *p);

/* 1 when s is well-formed UTF-8 throughout, else 0. */
int sb_utf8_valid (const char *s);

/* snprintf into a fixed buffer; returns 0, or -1 when truncated. */
int sb_strf (char *buf, size_t size, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

/* Raise the soft RLIMIT_NOFILE to the hard limit (where the kernel allows)
 * and report the limits then in force; a limit of RLIM_INFINITY is given as
 * UINT64_MAX. Returns 0, or -1 with "getrlimit (RLIMIT_NOFILE): reason" in
 * err. */
int sb_fd_limit_raise (uint64_t *soft, uint64_t *hard, char *err, size_t err_size);

/* A whole number in decimal and nothing else (no sign, no spaces, no
 * overflow): 0 with *out set, else -1. */
int sb_parse_u64_digits (const char *v, uint64_t *out);

/* Levenshtein distance of a and b (bytes; at most the first 255 of each
 * are compared): how far a mistyped key is from a known one. */
size_t sb_edit_distance (const char *a, const char *b);

/* The farthest a key may be from a known one (sb_edit_distance) and still
 * read as a typo of it: a quarter of its length, at least 2
 * (train.epoch -> train.epochs). */
size_t sb_typo_limit (const char *key);

#endif
