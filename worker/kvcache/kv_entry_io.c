/* kv_entry_io: an entry's file (or CPU-tier copy), streamed through a chunk buffer. */
#include "kv_entry_io.h"
#include "engine.h"
#include "format.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The noise every entry's body is cut from: 16 MiB, made once a process,
 * read-only afterwards (the reference pre-generates 256 MiB of float16
 * noise per process; a smaller one does as well here because every 4 KiB
 * block is stamped, and it stays small with many ranks in one worker). */
#define S_NOISE (16u << 20)
#define S_BLOCK 4096u

static uint8_t *s_noise;
static pthread_once_t s_noise_once = PTHREAD_ONCE_INIT;
static uint8_t s_noise_fallback[S_BLOCK];  /* when 16 MiB cannot be had: a shorter period, still stamped */
static size_t s_noise_size;

static void
s_noise_init (void)
{
    uint8_t *b = malloc (S_NOISE);
    size_t n = b ? S_NOISE : sizeof s_noise_fallback;
    if (!b)
        b = s_noise_fallback;
    uint64_t state = 0x6b76636163686531ull;     /* fixed: the same bytes on every host */
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t v = sb_splitmix64 (&state) | 1;   /* never a zero word */
        memcpy (b + i, &v, 8);
    }
    s_noise = b;
    s_noise_size = n;
}

double
sb_kv_clock (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* The entry's seed: FNV-1a of its key, mixed. */
static uint64_t
s_key_seed (const char *key)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *) key; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return sb_mix (h, 0x6b76);
}

size_t
sb_kv_npy_header (const sb_kv_io_t *io, uint64_t tokens, uint8_t *out, size_t room)
{
    /* np.save: the dict of sorted keys, then spaces so that the first axis
     * can grow to 21 digits in place (numpy's GROWTH_AXIS_MAX_DIGITS), then
     * spaces and a newline up to a multiple of 64 bytes with the 10 bytes
     * of magic, version and length */
    uint64_t dims[5];
    unsigned nd = sb_kv_model_shape (io->model, tokens, dims);
    char shape[160];
    size_t at = 0;
    for (unsigned i = 0; i < nd && at < sizeof shape; i++)
        at += (size_t) snprintf (shape + at, sizeof shape - at, "%s%llu", i ? ", " : "(", (unsigned long long) dims[i]);
    if (nd == 0 || at + 2 >= sizeof shape)
        return 0;
    snprintf (shape + at, sizeof shape - at, ")");
    char descr[16], first[24];
    snprintf (descr, sizeof descr, "<f%u", io->model->elem_bytes);
    int growth = 21 - snprintf (first, sizeof first, "%llu", (unsigned long long) dims[0]);
    return sb_npy_header (out, room, descr, shape, (size_t) (growth > 0 ? growth : 0));
}

uint8_t *
sb_kv_chunk_new (void)
{
    void *p = NULL;
    if (posix_memalign (&p, S_BLOCK, SB_KV_CHUNK) != 0)
        return NULL;
    return p;
}

int
sb_kv_entry_path (const sb_kv_io_t *io, const char *key, char *path, size_t size)
{
    return sb_strf (path, size, io->objects ? "%s%s.npy" : "%s/%s.npy", io->dir, key);
}

/* Body bytes [b, b + len) of the entry of seed: noise from the key's offset, stamped. */
static void
s_body_fill (uint64_t seed, uint64_t b, uint8_t *buf, size_t len)
{
    pthread_once (&s_noise_once, s_noise_init);
    size_t done = 0;
    uint64_t pos = (seed + b) % s_noise_size;
    while (done < len) {
        size_t n = len - done;
        if (n > s_noise_size - pos)
            n = s_noise_size - pos;
        memcpy (buf + done, s_noise + pos, n);
        done += n;
        pos = 0;
    }
    /* the first 8 bytes of every 4 KiB block of the body: XOR the key's and the block's stamp */
    uint64_t end = b + len;
    for (uint64_t k = b / S_BLOCK; k * S_BLOCK < end; k++) {
        uint64_t s = k * S_BLOCK;
        uint64_t stamp = sb_mix (seed, k);
        for (unsigned i = 0; i < 8; i++) {
            uint64_t at = s + i;
            if (at >= b && at < end)
                buf[at - b] ^= (uint8_t) (stamp >> (8 * i));
        }
    }
}

void
sb_kv_entry_fill (const sb_kv_io_t *io, const char *key, uint64_t tokens, uint64_t offset, uint8_t *buf, size_t len)
{
    uint8_t hdr[256];
    size_t h = sb_kv_npy_header (io, tokens, hdr, sizeof hdr);
    size_t done = 0;
    if (offset < h) {
        size_t n = h - (size_t) offset;
        if (n > len)
            n = len;
        memcpy (buf, hdr + offset, n);
        done = n;
    }
    if (done < len)
        s_body_fill (s_key_seed (key), offset + done - h, buf + done, len - done);
}

/* ---- the call record ---- */

int
sb_kv_call_init (sb_kv_call_t *c, _Atomic uint64_t *rank_moved)
{
    memset (c, 0, sizeof *c);
    atomic_init (&c->ended, 0);
    c->rank_moved = rank_moved;
    int rc = pthread_mutex_init (&c->lock, NULL);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

void
sb_kv_call_fini (sb_kv_call_t *c)
{
    pthread_mutex_destroy (&c->lock);
}

/* b's thread is now in op on path (path NULL: the same file as before). */
static void
s_call (sb_kv_buf_t *b, const char *op, const char *path)
{
    sb_kv_call_t *c = b->call;
    if (!c)
        return;
    uint64_t now = sb_mono_ns ();
    pthread_mutex_lock (&c->lock);
    c->op = op;
    if (path)
        snprintf (c->path, sizeof c->path, "%s", path);
    c->since_ns = now;
    pthread_mutex_unlock (&c->lock);
    if (c->rank_moved)
        atomic_store (c->rank_moved, now);
}

/* b's call moved on (a chunk written or read): its age starts again. */
static void
s_call_moved (sb_kv_buf_t *b)
{
    s_call (b, b->call ? b->call->op : NULL, NULL);
}

static int
s_call_end (sb_kv_buf_t *b, int rc)
{
    s_call (b, NULL, NULL);
    return rc;
}

int
sb_kv_call_stalled (sb_kv_call_t *c, double limit_s, const char **op, char *path, size_t path_size, double *for_s)
{
    uint64_t now = sb_mono_ns ();
    int stalled = 0;
    pthread_mutex_lock (&c->lock);
    if (c->op && now > c->since_ns && (double) (now - c->since_ns) / 1e9 >= limit_s) {
        *for_s = (double) (now - c->since_ns) / 1e9;
        *op = c->op;
        snprintf (path, path_size, "%s", c->path);
        stalled = 1;
    }
    pthread_mutex_unlock (&c->lock);
    return stalled;
}

static int
s_fail (int *err_no, char *err, size_t err_size, int e, const char *what, const char *path)
{
    *err_no = e;
    snprintf (err, err_size, "%s %s: %s", what, path, strerror (e));
    return -1;
}


/* ---- objects ---- */

typedef struct {
    const sb_kv_io_t *io;
    const char       *key;
    uint64_t          tokens;
} s_obj_fill_t;

static void
s_obj_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    const s_obj_fill_t *f = ctx;
    sb_kv_entry_fill (f->io, f->key, f->tokens, offset, buf, len);
}

static int
s_obj_fail (int *err_no, char *err, size_t err_size, const sb_storage_error_t *e)
{
    *err_no = e->stopped ? ECANCELED : e->os_errno ? e->os_errno : EIO;
    snprintf (err, err_size, "%s", e->text);
    return -1;
}

static int
s_obj_write (const sb_kv_io_t *io, const char *key, const char *name, uint64_t tokens, uint64_t total,
             sb_kv_buf_t *b, sb_kv_timing_t *t, int *err_no, char *err, size_t err_size)
{
    s_obj_fill_t f = { io, key, tokens };
    sb_storage_error_t e;
    double start = sb_kv_clock ();
    if (sb_storage_put (b->client, name, total, s_obj_fill, &f, SB_PUT_FSYNC, &e) != 0) {
        if (e.stopped)
            snprintf (b->cut_short, sizeof b->cut_short, "%s", name);
        return s_obj_fail (err_no, err, err_size, &e);
    }
    t->device = t->total = sb_kv_clock () - start;
    t->host = 0;
    return 0;
}

static int
s_obj_read (const char *name, uint64_t total, sb_kv_buf_t *b, sb_kv_timing_t *t, int *err_no, char *err,
            size_t err_size)
{
    sb_storage_error_t e;
    uint64_t got = 0;
    double start = sb_kv_clock ();
    if (sb_storage_get (b->client, name, 0, 0, 0, &got, &e) != 0)
        return s_obj_fail (err_no, err, err_size, &e);
    t->device = t->total = sb_kv_clock () - start;
    t->host = 0;
    if (got != total) {
        *err_no = EIO;
        snprintf (err, err_size, "read %s: it holds %llu bytes, the entry has %llu", name, (unsigned long long) got,
                  (unsigned long long) total);
        return -1;
    }
    return 0;
}

static int
s_aborted (const sb_kv_io_t *io)
{
    return io->abort && atomic_load (io->abort);
}

/* The entry's path (PATH_MAX) and size in bytes; 0, or -1 naming op and the key. */
static int
s_entry (const sb_kv_io_t *io, const char *key, uint64_t tokens, const char *op, char *path, uint64_t *total,
         int *err_no, char *err, size_t err_size)
{
    uint8_t hdr[256];
    size_t h = sb_kv_npy_header (io, tokens, hdr, sizeof hdr);
    if (sb_kv_entry_path (io, key, path, PATH_MAX) != 0 || h == 0)
        return s_fail (err_no, err, err_size, ENAMETOOLONG, op, key);
    *total = h + tokens * io->bytes_per_token;
    return 0;
}

static int
s_file_write (const sb_kv_io_t *io, const char *key, const char *path, uint64_t tokens, uint64_t total,
              sb_kv_buf_t *b, sb_kv_timing_t *t, int *err_no, char *err, size_t err_size)
{
    double start = sb_kv_clock ();
    s_call (b, "open", path);
    int fd = open (path, O_CREAT | O_TRUNC | O_WRONLY | O_NOFOLLOW | O_CLOEXEC | (io->odirect ? O_DIRECT : 0), 0644);
    if (fd < 0) {
        int e = errno;
        if (io->odirect && e == EINVAL) {
            *err_no = e;
            snprintf (err, err_size, "open %s with O_DIRECT (kvcache.odirect): the file system refuses it", path);
            return -1;
        }
        return s_fail (err_no, err, err_size, e, "open", path);
    }
    s_call (b, "write", NULL);
    int direct = io->odirect;
    uint64_t off = 0;
    while (off < total) {
        if (s_aborted (io)) {
            close (fd);
            unlink (path);
            return s_fail (err_no, err, err_size, ECANCELED, "write", path);
        }
        size_t n = total - off < SB_KV_CHUNK ? (size_t) (total - off) : SB_KV_CHUNK;
        sb_kv_entry_fill (io, key, tokens, off, b->chunk, n);
        if (direct && n % S_BLOCK != 0) {
            /* the file's last piece, shorter than a block: O_DIRECT cannot write it */
            int fl = fcntl (fd, F_GETFL);
            if (fl < 0 || fcntl (fd, F_SETFL, fl & ~O_DIRECT) != 0) {
                int e = errno;
                close (fd);
                unlink (path);
                return s_fail (err_no, err, err_size, e, "fcntl", path);
            }
            direct = 0;
        }
        size_t put = 0;
        while (put < n) {
            ssize_t w = pwrite (fd, b->chunk + put, n - put, (off_t) (off + put));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                int e = w < 0 ? errno : EIO;
                close (fd);
                unlink (path);
                return s_fail (err_no, err, err_size, e, "write", path);
            }
            put += (size_t) w;
            s_call_moved (b);
        }
        off += n;
    }
    double post_save = sb_kv_clock ();
    s_call (b, "fsync", NULL);
    if (fsync (fd) != 0) {
        int e = errno;
        close (fd);
        unlink (path);
        return s_fail (err_no, err, err_size, e, "fsync", path);
    }
    double post_fsync = sb_kv_clock ();
    s_call (b, "close", NULL);
    if (close (fd) != 0) {
        int e = errno;
        unlink (path);
        return s_fail (err_no, err, err_size, e, "close", path);
    }
    t->host = post_save - start;
    t->device = post_fsync - post_save;
    t->total = post_fsync - start;
    return 0;
}

int
sb_kv_entry_write (const sb_kv_io_t *io, const char *key, uint64_t tokens, sb_kv_buf_t *b, sb_kv_timing_t *t,
                   int *err_no, char *err, size_t err_size)
{
    char path[PATH_MAX];
    uint64_t total;
    if (s_entry (io, key, tokens, "write", path, &total, err_no, err, err_size) != 0)
        return -1;
    if (io->objects)
        return s_obj_write (io, key, path, tokens, total, b, t, err_no, err, err_size);
    return s_call_end (b, s_file_write (io, key, path, tokens, total, b, t, err_no, err, err_size));
}

static int
s_file_read (const sb_kv_io_t *io, const char *key, const char *path, uint64_t tokens, uint64_t total,
             sb_kv_buf_t *b, sb_kv_timing_t *t, int *err_no, char *err, size_t err_size)
{
    double start = sb_kv_clock ();
    /* the page-cache drop first (host time), as NVMeBackend.read */
    s_call (b, "open", path);
    int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return s_fail (err_no, err, err_size, errno, "open", path);
    s_call (b, "posix_fadvise", NULL);
    (void) posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED);     /* the reference ignores its failure too */
    close (fd);
    double pre_load = sb_kv_clock ();
    s_call (b, "open", NULL);
    fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (io->odirect ? O_DIRECT : 0));
    if (fd < 0)
        return s_fail (err_no, err, err_size, errno, io->odirect ? "open (O_DIRECT)" : "open", path);
    uint64_t got = 0;
    s_call (b, "read", NULL);
    for (;;) {
        if (s_aborted (io)) {
            close (fd);
            return s_fail (err_no, err, err_size, ECANCELED, "read", path);
        }
        ssize_t r = read (fd, b->chunk, SB_KV_CHUNK);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close (fd);
            return s_fail (err_no, err, err_size, e, "read", path);
        }
        if (r == 0)
            break;
        got += (uint64_t) r;
        s_call_moved (b);
    }
    s_call (b, "close", NULL);
    close (fd);
    s_call (b, NULL, NULL);
    double load_done = sb_kv_clock ();
    if (got != total) {
        *err_no = EIO;
        snprintf (err, err_size, "read %s: it holds %llu bytes, the entry has %llu", path, (unsigned long long) got,
                  (unsigned long long) total);
        return -1;
    }
    /* np.array(np.load(...)): the reference copies the loaded array once
     * more, host time; the same number of bytes copied here */
    sb_kv_timing_t copy;
    sb_kv_cpu_copy (key, tokens * io->bytes_per_token, b, &copy);
    t->device = load_done - pre_load;
    t->host = (pre_load - start) + copy.total;
    t->total = t->device + t->host;
    return 0;
}

int
sb_kv_entry_read (const sb_kv_io_t *io, const char *key, uint64_t tokens, sb_kv_buf_t *b, sb_kv_timing_t *t,
                  int *err_no, char *err, size_t err_size)
{
    char path[PATH_MAX];
    uint64_t total;
    if (s_entry (io, key, tokens, "read", path, &total, err_no, err, err_size) != 0)
        return -1;
    if (io->objects)
        return s_obj_read (path, total, b, t, err_no, err, err_size);
    return s_call_end (b, s_file_read (io, key, path, tokens, total, b, t, err_no, err, err_size));
}

int
sb_kv_entry_delete (const sb_kv_io_t *io, const char *key, sb_kv_buf_t *b, int *err_no, char *err, size_t err_size)
{
    char path[PATH_MAX];
    if (sb_kv_entry_path (io, key, path, sizeof path) != 0)
        return s_fail (err_no, err, err_size, ENAMETOOLONG, "remove", key);
    if (io->objects) {
        sb_storage_error_t e;
        if (sb_storage_remove (b->client, path, &e) != 0 && !e.missing)
            return s_obj_fail (err_no, err, err_size, &e);
        return 0;
    }
    s_call (b, "remove", path);
    int rc = unlink (path) != 0 && errno != ENOENT ? s_fail (err_no, err, err_size, errno, "remove", path) : 0;
    return s_call_end (b, rc);
}

void
sb_kv_cpu_copy (const char *key, uint64_t bytes, sb_kv_buf_t *b, sb_kv_timing_t *t)
{
    pthread_once (&s_noise_once, s_noise_init);
    uint64_t seed = s_key_seed (key);
    double start = sb_kv_clock ();
    uint64_t done = 0;
    while (done < bytes) {
        size_t n = bytes - done < SB_KV_CHUNK ? (size_t) (bytes - done) : SB_KV_CHUNK;
        size_t pos = (size_t) ((seed + done) % s_noise_size), c = 0;
        while (c < n) {
            size_t m = n - c < s_noise_size - pos ? n - c : s_noise_size - pos;
            memcpy (b->chunk + c, s_noise + pos, m);
            c += m;
            pos = 0;
        }
        done += n;
    }
    t->total = t->device = t->host = sb_kv_clock () - start;
}
