/* uring: the file engine's files read through io_uring (liburing).
 *
 * One ring per client (a client is one rank's reader). The ring has
 * `iodepth` slots (storage.uring.iodepth; by default the reader's depth),
 * each with one registered buffer of buffer_bytes: a slot holds one read of
 * at most buffer_bytes in flight. A read larger than a buffer is split into
 * buffer-sized chunks, and as many of its chunks as there are free slots
 * are in flight at once; reads queued while every slot is busy wait in
 * order for one. A read is delivered once its last chunk completed; its
 * slot goes first to the next read waiting, which is submitted before the
 * completed read is delivered and before the next completion is looked
 * at: the reader keeps up to a depth of reads waiting besides the
 * depth in flight (SB_ENGINE_QUEUE_AHEAD), so a slot that frees is filled
 * in the same getevents, as fio refills one, not after the completions
 * went back to the reader and new requests came down (at QD 64, 128 KiB
 * files: some 40 of the 64 slots busy on average at each completion the
 * other way). A read's latency runs from when it gets its slot to when
 * its completion is seen.
 *
 * Files are opened (stat, open, fstat: regular files only, as the file
 * engine does) when a slot is free for the read's first chunk, not when it
 * is queued, and closed when the read is delivered
 * (through the ring, with the next submission): a rank queues whole
 * batches ahead (its prefetch window), and opened at once they would hold
 * that many files open; this way a ring holds at most one file per slot,
 * as many as the pread engines hold per thread, and as many again of
 * reads delivered whose close has not gone in yet (what the worker's file
 * descriptor budget counts: twice sb_reader_reads_in_flight), and the
 * eviction and residency sample come right before the read.
 * With storage.uring.direct the files are opened with O_DIRECT and reads
 * widened to aligned blocks, as the direct engine does.
 *
 * The ring's thread does the work of fio's: a page-cache copy per read
 * (task work) besides the submission; of its system calls a file (stat,
 * open, fstat, the residency sample's cachestat) the close is spared, and
 * the stat is kept: without it a link to a device in the data folder would
 * be opened before fstat could refuse it.
 *
 * Each chunk read goes to the kernel in a submission of its own (as
 * fio's default iodepth_batch, and as DLIO's loaders' read() calls): the
 * reads of adjacent files submitted together would be merged under one
 * plug into larger device requests, fewer of them in flight (s_prep_slot).
 *
 * Waiting: getevents submits what was queued and waits on the ring's
 * completion queue with a timeout, in one system call. wakeup (any thread)
 * marks a wakeup pending, and while getevents waits in the kernel writes
 * to an eventfd that the ring always has a read queued on, so that read's
 * completion ends the wait (it is queued again at once); a wakeup that
 * comes while getevents is not waiting ends the next wait before it
 * begins, without a system call.
 *
 * The control ops (stat, list, put, ...) are the file engine's
 * (file_engine.h), on a file engine client the uring client holds: only
 * the data path differs. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <liburing.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "file_engine.h"
#include "log.h"
#include "pagecache.h"
#include "uring_engine.h"
#include "util.h"

#define S_NAME "uring"
#define S_ALIGN 4096u               /* O_DIRECT: offsets, lengths and buffers */
#define S_WAKE_TAG (UINT64_MAX - 1) /* user_data of the eventfd read (UINT64_MAX is liburing's own timeout tag) */
#define S_CANCEL_TAG (UINT64_MAX - 2) /* user_data of the cancellation at close */
#define S_CLOSE_TAG (UINT64_MAX - 3)  /* user_data of a file's close (a completion only when it failed) */
#define S_MAX_DEPTH 4096u

static const sb_engine_option_t s_options[] = {
    { .key = "iodepth", .type = SB_OPT_UINT, .min = 1, .max = S_MAX_DEPTH,
      .help = "reads (buffer-sized chunks) in flight on the rank's ring; default: the reader's depth (reader.read_threads)" },
    { .key = "direct", .type = SB_OPT_BOOL, .dflt = "false", .min = 0, .max = 1,
      .help = "open the files with O_DIRECT (reads widened to 4096-byte blocks)" },
    { .key = NULL },
};

/* One queued read, from queue to its delivery. */
typedef struct s_read {
    uint64_t           tag;
    char              *path;        /* root + key; owned */
    const char        *root;        /* the client's */
    size_t             root_len;    /* path + root_len: the key */
    int                fd;
    int                to_eof;      /* length 0: the whole file as it is when opened */
    uint64_t           want, want_end;  /* the asked range */
    uint64_t           next;        /* where the next chunk starts */
    uint64_t           read_end;    /* where chunks end (O_DIRECT: widened to a block) */
    uint64_t           bytes;       /* bytes of the asked range that arrived */
    uint64_t           eof_at;      /* lowest offset a chunk found the end of the file at; UINT64_MAX: none */
    unsigned           inflight;    /* chunks in slots */
    int                failed;
    sb_storage_error_t *error;      /* when failed; owned */
    uint64_t           t0, check_ns;
    uint64_t           done_ns;     /* when its last chunk's completion was seen; 0: not (yet) */
    uint64_t           resident, checked;
    sb_storage_fill_fn expect;
    void              *expect_ctx;
    void             (*expect_free) (void *ctx);
    uint64_t           expect_size;
    const char        *expect_name;     /* the format's generator ("" for raw content); static */
    int                prepared;    /* opened, evicted / sampled as asked, its range set (s_prepare) */
    uint64_t           offset, length;  /* as queued (length 0: to the end of the file) */
    unsigned           flags;       /* SB_IO_EVICT, SB_IO_RESIDENCY as queued */
    uint64_t           size_given;  /* sb_uring_queue_fd: the size, the file not stat-ed */
    int                waiting;     /* in the wait list */
    struct s_read     *wait_next;   /* next in the wait list, or in the ready list */
} s_read_t;

/* One buffer and the chunk it holds in flight. */
typedef struct {
    uint8_t  *buf;          /* buffer_bytes, aligned; registered as buffer index i */
    s_read_t *rd;           /* NULL: free */
    uint64_t  pos;          /* the chunk's offset in the file */
    size_t    len;          /* its length */
    size_t    got;          /* bytes read so far (a short buffered read goes on) */
} s_slot_t;

typedef struct {
    void            *files;     /* the file engine's client: control ops; owned */
    char             root[PATH_MAX];
    struct io_uring  ring;
    int              ring_ok;
    int              registered;    /* buffers registered (read_fixed), else plain reads */
    int              ring_close;    /* files are closed through the ring (IORING_FEAT_CQE_SKIP), else close() */
    int              direct;
    size_t           buffer_bytes;
    size_t           nslots;
    s_slot_t        *slots;
    size_t          *free_slots;    /* stack of free slot indices */
    size_t           nfree;
    uint8_t         *expect_buf;    /* buffer_bytes: the expected bytes of a chunk */
    s_read_t        *wait_head, *wait_tail;     /* reads with chunks left to put in slots, in order */
    s_read_t        *ready_head, *ready_tail;   /* reads with nothing to read, to deliver */
    size_t           pending;       /* reads queued and not delivered */
    int              wake_fd;       /* eventfd */
    uint64_t         wake_value;    /* the eventfd read's buffer */
    int              woken;
    int              wake_pending;  /* a wakeup not seen yet by getevents (atomic) */
    int              sleeping;      /* getevents waits in the kernel: a wakeup writes the eventfd (atomic) */
    uint64_t        *progress_ns;   /* how->progress_ns: set at each completion (atomic); NULL: none */
    size_t           unsubmitted;   /* chunk reads prepared and not submitted yet */
    size_t           most_submitted;    /* the most chunk reads one submission carried */
    size_t           submitted_no_read; /* submissions that carried no chunk read (closes, the wake's read) */
    sb_storage_stats_t stats;
} s_uring_t;

/* ---- helpers ---- */

static int
s_parse_bool (const char *v, int *out)
{
    if (!v || !strcmp (v, "false") || !strcmp (v, "0") || !strcmp (v, "no") || !strcmp (v, "off")) {
        *out = 0;
        return 0;
    }
    if (!strcmp (v, "true") || !strcmp (v, "1") || !strcmp (v, "yes") || !strcmp (v, "on")) {
        *out = 1;
        return 0;
    }
    return -1;
}

static void
s_read_free (s_read_t *rd)
{
    if (!rd)
        return;
    if (rd->fd >= 0)
        close (rd->fd);
    if (rd->expect_free && rd->expect_ctx)
        rd->expect_free (rd->expect_ctx);
    free (rd->error);
    free (rd->path);
    free (rd);
}

/* sb_storage_fail, and where: the root folder (as the file engine's errors). */
static int
s_fail (const char *root, sb_storage_error_t *e, const char *op, const char *key, int os_errno, const char *fmt, ...)
    __attribute__ ((format (printf, 6, 7)));
static int
s_fail (const char *root, sb_storage_error_t *e, const char *op, const char *key, int os_errno, const char *fmt, ...)
{
    if (!e)
        return -1;
    char text[sizeof e->text];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    sb_storage_fail (e, S_NAME, op, key, os_errno, "%s", text);
    snprintf (e->where, sizeof e->where, "%s", root);
    e->missing = os_errno == ENOENT;
    return -1;
}

/* Record the read's first failure (later ones are consequences). */
static void
s_read_fail (s_read_t *rd, const char *op, int os_errno, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
static void
s_read_fail (s_read_t *rd, const char *op, int os_errno, const char *fmt, ...)
{
    if (rd->failed)
        return;
    rd->failed = 1;
    rd->error = calloc (1, sizeof *rd->error);
    if (!rd->error)
        return;
    char text[sizeof rd->error->text];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    s_fail (rd->root, rd->error, op, rd->path + rd->root_len, os_errno, "%s", text);
}

/* What path is, when not a regular file (st: its stat). */
static int
s_not_regular (const char *root, const char *key, const char *path, const struct stat *st, sb_storage_error_t *e)
{
    mode_t m = st->st_mode;
    const char *what = S_ISFIFO (m) ? "a FIFO" : S_ISCHR (m) ? "a character device" : S_ISBLK (m) ? "a block device"
                       : S_ISDIR (m) ? "a directory" : S_ISSOCK (m) ? "a socket" : "not a file";
    struct stat lst;
    int link = lstat (path, &lst) == 0 && S_ISLNK (lst.st_mode);
    return s_fail (root, e, "open", key, 0,
                   "open %s: not a regular file (%s%s): a dataset object must be a regular file", path,
                   link ? "a symbolic link to " : "", what);
}

/* ---- the ring ---- */

/* Close rd's file with the next submission, without a completion unless
 * it fails (a system call a file less on the ring's thread), or with
 * close() when the ring cannot (an old kernel; no entry free). */
static void
s_release_fd (s_uring_t *self, s_read_t *rd)
{
    if (rd->fd < 0 || !self->ring_close)
        return;     /* s_read_free closes it */
    struct io_uring_sqe *sqe = io_uring_get_sqe (&self->ring);
    if (!sqe)
        return;
    io_uring_prep_close (sqe, rd->fd);
    io_uring_sqe_set_flags (sqe, IOSQE_CQE_SKIP_SUCCESS);
    io_uring_sqe_set_data64 (sqe, S_CLOSE_TAG);
    rd->fd = -1;
}

static void
s_arm_wake (s_uring_t *self)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe (&self->ring);
    if (!sqe)
        return;     /* the ring has a spare entry for it: cannot happen */
    io_uring_prep_read (sqe, self->wake_fd, &self->wake_value, sizeof self->wake_value, 0);
    io_uring_sqe_set_data64 (sqe, S_WAKE_TAG);
}

/* The chunk reads prepared went in with a submission (rc: what
 * io_uring_submit returned, the entries it carried). */
static void
s_submitted (s_uring_t *self, int rc)
{
    if (rc > 0 && !self->unsubmitted)
        self->submitted_no_read++;
    if (self->unsubmitted > self->most_submitted)
        self->most_submitted = self->unsubmitted;
    self->unsubmitted = 0;
}

/* Submit the entries prepared and not submitted yet, if any; a failure
 * leaves them in the submission queue, for s_submit to report. */
static void
s_submit_prepared (s_uring_t *self)
{
    while (io_uring_sq_ready (&self->ring)) {
        int rc = io_uring_submit (&self->ring);
        if (rc <= 0 && rc != -EINTR)
            return;
        if (rc > 0)
            s_submitted (self, rc);
    }
}

/* Put slot i's chunk (from slot->got on) on the ring, in a submission of
 * its own: what was prepared before goes in first. Submitted together,
 * the reads of files that lie one after the other on the device would
 * be merged into larger requests under one plug (2 MiB on a virtio disk
 * for sixteen 128 KiB files), fewer of them in flight than the depth
 * asks for: neither DLIO's loaders (a read() each) nor fio (its default
 * iodepth_batch of 1) issue that I/O. A system call a read is little
 * beside the read. */
static void
s_prep_slot (s_uring_t *self, size_t i)
{
    s_slot_t *s = &self->slots[i];
    if (self->unsubmitted)
        s_submit_prepared (self);   /* another read: not in the same submission (closes may be) */
    struct io_uring_sqe *sqe = io_uring_get_sqe (&self->ring);
    if (!sqe) {     /* the ring has an entry per slot: cannot happen */
        int rc = io_uring_submit (&self->ring);
        if (rc > 0)
            s_submitted (self, rc);
        sqe = io_uring_get_sqe (&self->ring);
    }
    if (self->registered)
        io_uring_prep_read_fixed (sqe, s->rd->fd, s->buf + s->got, (unsigned) (s->len - s->got), s->pos + s->got,
                                  (int) i);
    else
        io_uring_prep_read (sqe, s->rd->fd, s->buf + s->got, (unsigned) (s->len - s->got), s->pos + s->got);
    io_uring_sqe_set_data64 (sqe, (uint64_t) i);
    self->unsubmitted++;
}

static int s_prepare (s_uring_t *self, s_read_t *rd);
static void s_ready (s_uring_t *self, s_read_t *rd);

/* Give free slots to the waiting reads' next chunks, in order, opening a
 * read's file when its first chunk gets a slot. */
static void
s_fill_slots (s_uring_t *self)
{
    while (self->nfree && self->wait_head) {
        s_read_t *rd = self->wait_head;
        if (!rd->prepared && s_prepare (self, rd) != 0) {
            /* failed before any chunk, or nothing to read: delivered by
             * the next getevents */
            self->wait_head = rd->wait_next;
            if (!self->wait_head)
                self->wait_tail = NULL;
            rd->waiting = 0;
            s_ready (self, rd);
            continue;
        }
        if (rd->failed || rd->next >= rd->read_end) {
            self->wait_head = rd->wait_next;
            if (!self->wait_head)
                self->wait_tail = NULL;
            rd->wait_next = NULL;
            rd->waiting = 0;
            continue;
        }
        size_t i = self->free_slots[--self->nfree];
        s_slot_t *s = &self->slots[i];
        uint64_t left = rd->read_end - rd->next;
        s->rd = rd;
        s->pos = rd->next;
        s->len = left < self->buffer_bytes ? (size_t) left : self->buffer_bytes;
        s->got = 0;
        rd->next += s->len;
        rd->inflight++;
        s_prep_slot (self, i);
    }
}

/* Submit what is prepared and not submitted yet. 0, or -1 with e set. */
static int
s_submit (s_uring_t *self, sb_storage_error_t *e)
{
    while (io_uring_sq_ready (&self->ring)) {
        int rc = io_uring_submit (&self->ring);
        if (rc == -EINTR || rc == -EAGAIN || rc == -EBUSY)
            continue;
        if (rc > 0)
            s_submitted (self, rc);
        if (rc < 0)
            return sb_storage_fail (e, S_NAME, "submit", self->root, -rc, "io_uring_submit on %s: %s", self->root,
                                    strerror (-rc));
        if (rc == 0)
            break;
    }
    return 0;
}

/* ---- open, close ---- */

/* Cancel every read in flight and reap their completions, for up to 2 s.
 * Returns how many are still in flight (0: the buffers are free to go). */
static size_t
s_drain (s_uring_t *self)
{
    size_t want = 0;
    for (size_t i = 0; self->slots && i < self->nslots; i++)
        want += self->slots[i].rd != NULL;     /* each has one read queued or in flight */
    if (want == 0)
        return 0;
    struct io_uring_sqe *sqe = io_uring_get_sqe (&self->ring);
    if (!sqe && io_uring_submit (&self->ring) >= 0)
        sqe = io_uring_get_sqe (&self->ring);
    if (sqe) {
        io_uring_prep_cancel64 (sqe, 0, IORING_ASYNC_CANCEL_ANY);
        io_uring_sqe_set_data64 (sqe, S_CANCEL_TAG);
    }
    (void) io_uring_submit (&self->ring);
    uint64_t deadline = sb_mono_ns () + 2000000000ull;
    while (want > 0 && sb_mono_ns () < deadline) {
        struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 100000000 };
        struct io_uring_cqe *cqe;
        if (io_uring_wait_cqe_timeout (&self->ring, &cqe, &ts) != 0)
            continue;
        uint64_t data = io_uring_cqe_get_data64 (cqe);
        io_uring_cqe_seen (&self->ring, cqe);
        if (data < self->nslots && self->slots[data].rd)
            want--;     /* done, cancelled or failed: the kernel is through with its buffer */
    }
    return want;
}

static void
s_close (void *client)
{
    s_uring_t *self = client;
    if (!self)
        return;
    /* the closes prepared go in first (none is left open) */
    if (self->ring_ok)
        (void) io_uring_submit (&self->ring);
    /* reads still in flight at close (a reader that stopped on an error, a
     * read of a pipe that never ends) are cancelled and reaped first: a
     * read already running in the kernel's workers would otherwise finish
     * after io_uring_queue_exit and write into a freed buffer; any that
     * does not end within 2 s leaves the buffers (and the client, which
     * holds the eventfd read's) behind */
    int leave = self->ring_ok && s_drain (self) > 0;
    if (self->ring_ok)
        io_uring_queue_exit (&self->ring);
    /* every read still held, once: waiting, ready, or only in slots */
    for (size_t i = 0; self->slots && i < self->nslots; i++) {
        s_read_t *rd = self->slots[i].rd;
        self->slots[i].rd = NULL;
        if (rd && !rd->waiting) {
            rd->waiting = 1;
            rd->wait_next = self->wait_head;
            self->wait_head = rd;
        }
    }
    for (s_read_t *rd = self->wait_head, *n; rd; rd = n) {
        n = rd->wait_next;
        s_read_free (rd);
    }
    for (s_read_t *rd = self->ready_head, *n; rd; rd = n) {
        n = rd->wait_next;
        s_read_free (rd);
    }
    free (self->expect_buf);
    if (self->wake_fd >= 0)
        close (self->wake_fd);
    if (self->files)
        sb_file_engine_close (self->files);
    if (leave) {
        sb_warn ("%s engine: closed with %zu reads in flight: their buffers are left behind", S_NAME,
                 self->nslots - self->nfree);
        return;
    }
    for (size_t i = 0; self->slots && i < self->nslots; i++)
        free (self->slots[i].buf);
    free (self->slots);
    free (self->free_slots);
    free (self);
}

static int
s_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    *client = NULL;
    const char *v = sb_storage_opt (cfg, "direct");
    int direct = 0;
    if (s_parse_bool (v, &direct) != 0)
        return sb_storage_fail (e, S_NAME, "open", how->root, EINVAL,
                                "storage.uring.direct: '%s' is not a boolean (true or false)", v);
    size_t depth = how->depth ? how->depth : 1;
    v = sb_storage_opt (cfg, "iodepth");
    /* the option sizes a reader's ring; a client opened for one operation
     * at a time (datagen, checkpoints, the coordinator's checks) keeps
     * depth 1 and its memory small */
    if (v && *v && depth > 1) {
        char *end;
        errno = 0;
        unsigned long long d = strtoull (v, &end, 10);
        if (errno || *end || end == v || d < 1 || d > S_MAX_DEPTH)
            return sb_storage_fail (e, S_NAME, "open", how->root, EINVAL,
                                    "storage.uring.iodepth: '%s' is not a whole number from 1 to %u", v, S_MAX_DEPTH);
        depth = (size_t) d;
    }
    if (depth > S_MAX_DEPTH)
        depth = S_MAX_DEPTH;
    size_t buffer_bytes = how->buffer_bytes ? how->buffer_bytes : 1u << 20;
    buffer_bytes = (buffer_bytes + S_ALIGN - 1) / S_ALIGN * S_ALIGN;

    s_uring_t *self = calloc (1, sizeof *self);
    if (!self)
        return sb_storage_fail (e, S_NAME, "open", how->root, ENOMEM, "uring engine: out of memory");
    self->wake_fd = -1;
    self->direct = direct;
    self->buffer_bytes = buffer_bytes;
    self->nslots = depth;
    self->progress_ns = how->progress_ns;
    if (sb_strf (self->root, sizeof self->root, "%s", how->root ? how->root : "") != 0) {
        s_close (self);
        return sb_storage_fail (e, S_NAME, "open", how->root, ENAMETOOLONG, "root folder %s: path too long",
                                how->root);
    }
    snprintf (self->stats.where, sizeof self->stats.where, "%s", self->root);
    /* the file engine's client, for the control ops: one read at a time */
    sb_storage_open_t file_how = *how;
    file_how.depth = 1;
    if (sb_file_engine_open (S_NAME, 0, &file_how, &self->files, e) != 0) {
        self->files = NULL;
        s_close (self);
        return -1;
    }
    self->slots = calloc (depth, sizeof *self->slots);
    self->free_slots = calloc (depth, sizeof *self->free_slots);
    self->expect_buf = malloc (buffer_bytes);
    if (!self->slots || !self->free_slots || !self->expect_buf) {
        s_close (self);
        return sb_storage_fail (e, S_NAME, "open", how->root, ENOMEM, "uring engine: out of memory for %zu slots",
                                depth);
    }
    struct iovec *iov = calloc (depth, sizeof *iov);
    if (!iov) {
        s_close (self);
        return sb_storage_fail (e, S_NAME, "open", how->root, ENOMEM, "uring engine: out of memory for %zu slots",
                                depth);
    }
    for (size_t i = 0; i < depth; i++) {
        if (posix_memalign ((void **) &self->slots[i].buf, S_ALIGN, buffer_bytes) != 0) {
            self->slots[i].buf = NULL;
            free (iov);
            s_close (self);
            return sb_storage_fail (e, S_NAME, "open", how->root, ENOMEM,
                                    "uring engine: out of memory for %zu buffers of %zu bytes", depth, buffer_bytes);
        }
        iov[i].iov_base = self->slots[i].buf;
        iov[i].iov_len = buffer_bytes;
        self->free_slots[self->nfree++] = depth - 1 - i;
    }
    self->wake_fd = eventfd (0, EFD_CLOEXEC);
    if (self->wake_fd < 0) {
        int err = errno;
        free (iov);
        s_close (self);
        return sb_storage_fail (e, S_NAME, "open", how->root, err, "uring engine: eventfd: %s", strerror (err));
    }
    /* an entry per slot, one per slot for a file's close, one for the
     * wakeup read and one for a timeout (kernels without
     * IORING_FEAT_EXT_ARG wait with one); completions never outnumber
     * what is in flight (a close completes only when it fails), so the CQ
     * (twice) never fills */
    int rc = io_uring_queue_init ((unsigned) (2 * depth + 2), &self->ring, 0);
    if (rc < 0) {
        free (iov);
        s_close (self);
        return sb_storage_fail (e, S_NAME, "open", how->root, -rc,
                                "io_uring_queue_init (%zu entries) for %s: %s%s", 2 * depth + 2, how->root,
                                strerror (-rc), -rc == EPERM || -rc == ENOSYS
                                ? " (io_uring is disabled here: kernel.io_uring_disabled, seccomp, or an old kernel;"
                                  " use storage.engine: file)" : "");
    }
    self->ring_ok = 1;
    self->ring_close = (self->ring.features & IORING_FEAT_CQE_SKIP) != 0;
    /* registered buffers spare the kernel mapping each buffer per read; a
     * memlock limit too low for them (RLIMIT_MEMLOCK) leaves plain reads */
    self->registered = io_uring_register_buffers (&self->ring, iov, (unsigned) depth) == 0;
    free (iov);
    s_arm_wake (self);
    if (s_submit (self, e) != 0) {
        s_close (self);
        return -1;
    }
    *client = self;
    return 0;
}

/* ---- the data path ---- */

/* A read of io (the path joined to the root), its expect_ctx taken over;
 * NULL with e set (and expect_ctx freed). */
static s_read_t *
s_read_new (s_uring_t *self, const sb_io_t *io, sb_storage_error_t *e)
{
    s_read_t *rd = calloc (1, sizeof *rd);
    if (!rd) {
        if (io->expect_free && io->expect_ctx)
            io->expect_free (io->expect_ctx);
        s_fail (self->root, e, "read", io->key, ENOMEM, "read %s%s: out of memory", self->root, io->key);
        return NULL;
    }
    rd->fd = -1;
    rd->tag = io->tag;
    rd->offset = io->offset;
    rd->length = io->length;
    rd->flags = io->flags;
    rd->eof_at = UINT64_MAX;
    rd->expect = io->expect;
    rd->expect_ctx = io->expect_ctx;
    rd->expect_free = io->expect_free;
    rd->expect_size = io->expect_size;
    rd->expect_name = io->expect_name ? io->expect_name : "";
    size_t plen = strlen (self->root) + strlen (io->key) + 1;
    if (plen > PATH_MAX || !(rd->path = malloc (plen))) {
        int err = plen > PATH_MAX ? ENAMETOOLONG : ENOMEM;
        s_fail (self->root, e, "open", io->key, err, "open %s%s: %s", self->root, io->key,
                         err == ENAMETOOLONG ? "path too long" : strerror (err));
        s_read_free (rd);
        return NULL;
    }
    snprintf (rd->path, plen, "%s%s", self->root, io->key);
    rd->root = self->root;
    rd->root_len = strlen (self->root);
    return rd;
}

/* Deliver rd with the next getevents: nothing to read, or failed (it
 * counts as pending since it was queued). */
static void
s_ready (s_uring_t *self, s_read_t *rd)
{
    rd->wait_next = NULL;
    if (self->ready_tail)
        self->ready_tail->wait_next = rd;
    else
        self->ready_head = rd;
    self->ready_tail = rd;
}

/* rd failed before any chunk was read (err says why): marked so, for
 * s_fill_slots to deliver. Returns -1 (s_prepare's "not to be read"). */
static int
s_fail_later (s_read_t *rd, const sb_storage_error_t *err)
{
    rd->failed = 1;
    rd->error = malloc (sizeof *rd->error);
    if (rd->error)
        *rd->error = *err;
    return -1;
}

/* Put rd at the end of the wait list, counted as pending; its file is
 * opened when a slot is free for it (s_fill_slots), and the slots free now
 * are filled. */
static void
s_wait (s_uring_t *self, s_read_t *rd)
{
    self->pending++;
    rd->waiting = 1;
    if (self->wait_tail)
        self->wait_tail->wait_next = rd;
    else
        self->wait_head = rd;
    self->wait_tail = rd;
    s_fill_slots (self);
}

static int
s_queue (void *client, const sb_io_t *io, sb_storage_error_t *e)
{
    s_uring_t *self = client;
    s_read_t *rd = s_read_new (self, io, e);
    if (!rd)
        return -1;
    /* from here a failure is the read's completion, as the file engine's */
    s_wait (self, rd);
    return 0;
}

int
sb_uring_queue_fd (void *client, int fd, const sb_io_t *io, sb_storage_error_t *e)
{
    s_uring_t *self = client;
    s_read_t *rd = s_read_new (self, io, e);
    if (!rd) {
        close (fd);
        return -1;
    }
    rd->fd = fd;
    rd->size_given = io->length;
    s_wait (self, rd);
    return 0;
}

/* err: why rd's open failed with en. */
static void
s_open_failed (s_uring_t *self, s_read_t *rd, int en, sb_storage_error_t *err)
{
    const char *key = rd->path + rd->root_len;
    if (self->direct && en == EINVAL)
        s_fail (self->root, err, "open", key, en,
                "open %s with O_DIRECT (storage.uring.direct: true): %s: its file system refuses direct"
                " I/O; put the dataset on one that supports it or set storage.uring.direct: false",
                rd->path, strerror (en));
    else
        s_fail (self->root, err, "open", key, en, "open %s%s: %s", rd->path, self->direct ? " with O_DIRECT" : "",
                strerror (en));
}

/* Open rd's file (unless it came open), evict and sample residency as
 * asked, and set the range its chunks cover. 0: rd has chunks to read;
 * -1: nothing to read (an empty range) or failed (rd->failed, its error
 * set), to be delivered as it is. */
static int
s_prepare (s_uring_t *self, s_read_t *rd)
{
    rd->prepared = 1;
    rd->t0 = sb_mono_ns ();     /* its latency: from here (a read waiting for a slot is not in flight) */
    sb_storage_error_t local, *err = &local;
    const char *key = rd->path + rd->root_len;
    uint64_t size = rd->size_given;
    int sized = 0;      /* size is the fstat of the file just opened: the residency needs no other */
    if (rd->fd < 0) {
        /* only regular files: a FIFO would block the open, a device would
         * be read for ever (and some devices act when opened). stat first
         * (a FIFO's stat does not block, and nothing is opened), then
         * fstat what was opened (it may have been replaced) */
        struct stat st;
        if (stat (rd->path, &st) != 0) {
            int en = errno;
            s_fail (self->root, err, "open", key, en, "open %s: %s", rd->path, strerror (en));
            return s_fail_later (rd, err);
        }
        if (!S_ISREG (st.st_mode)) {
            s_not_regular (self->root, key, rd->path, &st, err);
            return s_fail_later (rd, err);
        }
        rd->fd = open (rd->path, O_RDONLY | O_CLOEXEC | (self->direct ? O_DIRECT : 0));
        if (rd->fd < 0) {
            s_open_failed (self, rd, errno, err);
            return s_fail_later (rd, err);
        }
        if (fstat (rd->fd, &st) != 0) {
            int en = errno;
            s_fail (self->root, err, "open", key, en, "fstat %s: %s", rd->path, strerror (en));
            return s_fail_later (rd, err);
        }
        if (!S_ISREG (st.st_mode)) {
            s_not_regular (self->root, key, rd->path, &st, err);
            return s_fail_later (rd, err);
        }
        size = (uint64_t) st.st_size;
        sized = 1;
    }
    rd->to_eof = rd->length == 0;
    uint64_t length = rd->to_eof ? size : rd->length;
    rd->want = rd->offset;
    rd->want_end = rd->offset + length;
    rd->next = self->direct ? rd->want / S_ALIGN * S_ALIGN : rd->want;
    rd->read_end = self->direct ? (rd->want_end + S_ALIGN - 1) / S_ALIGN * S_ALIGN : rd->want_end;
    if ((rd->flags & SB_IO_EVICT) && !self->direct) {
        /* the epoch's first read of this file: its pages go first */
        char why[512];
        uint64_t c0 = sb_mono_ns ();
        if (sb_pagecache_evict_fd (rd->fd, rd->path, why, sizeof why) != 0) {
            s_fail (self->root, err, "evict", key, errno,
                    "%s (shardbench.drop_page_cache: true; false reads what the page cache holds)", why);
            return s_fail_later (rd, err);
        }
        rd->check_ns += sb_mono_ns () - c0;
    }
    if ((rd->flags & SB_IO_RESIDENCY) && !self->direct) {
        /* how much of the range the page cache holds now, before reading it
         * (a file that cannot be mapped is not counted) */
        sb_residency_t r;
        char why[256];
        uint64_t c0 = sb_mono_ns ();
        int rc = sized ? sb_pagecache_residency_sized (rd->fd, size, rd->want, length, &r, rd->path, why, sizeof why)
                       : sb_pagecache_residency (rd->fd, rd->want, length, &r, rd->path, why, sizeof why);
        if (rc == 0) {
            rd->resident = r.resident;
            rd->checked = r.checked;
        }
        rd->check_ns += sb_mono_ns () - c0;
    }
    /* nothing to read: an empty file, or an empty range */
    return rd->next >= rd->read_end ? -1 : 0;
}

/* A read whose chunks are all in: its completion. */
static void
s_deliver (s_uring_t *self, s_read_t *rd, sb_io_done_fn fn, void *ctx)
{
    if (rd->waiting) {
        /* failed, or found the end of the file, with chunks it will not read */
        s_read_t *prev = NULL;
        for (s_read_t *w = self->wait_head; w; prev = w, w = w->wait_next)
            if (w == rd) {
                if (prev)
                    prev->wait_next = rd->wait_next;
                else
                    self->wait_head = rd->wait_next;
                if (self->wait_tail == rd)
                    self->wait_tail = prev;
                break;
            }
        rd->waiting = 0;
        rd->wait_next = NULL;
    }
    uint64_t length = rd->want_end - rd->want;
    if (!rd->failed && rd->eof_at < rd->want_end)
        s_read_fail (rd, "read", 0, "short read %s: file ends at offset %llu, expected %llu bytes from offset %llu%s",
                     rd->path, (unsigned long long) (rd->eof_at > rd->want ? rd->eof_at : rd->want),
                     (unsigned long long) length, (unsigned long long) rd->want,
                     rd->to_eof ? " (its size when opened)" : "");
    if (!rd->failed && rd->expect && rd->to_eof && rd->expect_size != UINT64_MAX && rd->bytes != rd->expect_size)
        s_read_fail (rd, "verify", 0, "verify %s: %llu bytes, the %s%sgenerator makes %llu", rd->path,
                     (unsigned long long) rd->bytes, rd->expect_name, *rd->expect_name ? " " : "",
                     (unsigned long long) rd->expect_size);
    sb_io_done_t *d = calloc (1, sizeof *d);
    sb_io_done_t fallback;
    if (!d) {
        memset (&fallback, 0, sizeof fallback);
        d = &fallback;
    }
    d->tag = rd->tag;
    d->bytes = rd->bytes;
    uint64_t now = rd->done_ns ? rd->done_ns : sb_mono_ns ();
    d->latency_ns = now - rd->t0 > rd->check_ns ? now - rd->t0 - rd->check_ns : 0;
    d->resident_bytes = rd->resident;
    d->checked_bytes = rd->checked;
    d->failed = rd->failed;
    if (rd->failed) {
        if (rd->error)
            d->error = *rd->error;
        else
            s_fail (rd->root, &d->error, "read", rd->path + rd->root_len, ENOMEM, "read %s: failed (out of memory)",
                    rd->path);
        self->stats.errors++;
    } else {
        self->stats.requests++;
        self->stats.bytes += rd->bytes;
        sb_histogram_add (&self->stats.latency, d->latency_ns / 1000);
    }
    self->pending--;
    s_release_fd (self, rd);
    s_read_free (rd);
    if (fn)
        fn (ctx, d);
    if (d != &fallback)
        free (d);
}

/* The chunk of slot i completed with res; returns 1 when its read is done. */
static int
s_complete (s_uring_t *self, size_t i, int res)
{
    s_slot_t *s = &self->slots[i];
    s_read_t *rd = s->rd;
    if (res == -EAGAIN || res == -EINTR) {
        s_prep_slot (self, i);
        return 0;
    }
    if (res < 0) {
        uint64_t at = s->pos + s->got;
        if (self->direct && res == -EINVAL)
            s_read_fail (rd, "read", -res,
                         "read %s at offset %llu with O_DIRECT (storage.uring.direct: true): %s: the file system or"
                         " device refuses direct reads of %u-byte aligned blocks", rd->path, (unsigned long long) at,
                         strerror (-res), S_ALIGN);
        else
            s_read_fail (rd, "read", -res, "read %s at offset %llu: %s", rd->path,
                         (unsigned long long) (at > rd->want ? at : rd->want), strerror (-res));
    } else {
        size_t n = (size_t) res;
        uint64_t from = s->pos + s->got;
        s->got += n;
        /* the bytes of this read inside the asked range */
        uint64_t lo = from > rd->want ? from : rd->want;
        uint64_t hi = from + n < rd->want_end ? from + n : rd->want_end;
        if (hi > lo && !rd->failed) {
            size_t m = (size_t) (hi - lo);
            const uint8_t *got = s->buf + (lo - s->pos);
            if (rd->expect && rd->expect_size != UINT64_MAX && hi > rd->expect_size) {
                s_read_fail (rd, "verify", 0,
                             "verify %s: the file goes on past offset %llu, where the %s%sgenerator ends", rd->path,
                             (unsigned long long) rd->expect_size, rd->expect_name, *rd->expect_name ? " " : "");
            } else if (rd->expect) {
                rd->expect (rd->expect_ctx, lo, self->expect_buf, m);
                if (memcmp (got, self->expect_buf, m) != 0) {
                    size_t at = 0;
                    while (at < m && got[at] == self->expect_buf[at])
                        at++;
                    s_read_fail (rd, "verify", 0, "verify %s: byte %llu differs from the generator", rd->path,
                                 (unsigned long long) (lo + at));
                }
            }
        }
        if (hi > lo)
            rd->bytes += hi - lo;
        if (s->got < s->len) {
            /* a short read: the end of the file (0 bytes, or O_DIRECT, whose
             * next read would not be aligned), else a buffered read that
             * stopped early and goes on */
            if (n == 0 || self->direct) {
                uint64_t end = s->pos + s->got;
                if (end < rd->eof_at)
                    rd->eof_at = end;
                if (rd->next > end)
                    rd->next = rd->read_end;    /* no chunk after the end */
            } else if (!rd->failed) {
                s_prep_slot (self, i);
                return 0;
            }
        }
    }
    s->rd = NULL;
    self->free_slots[self->nfree++] = i;
    if (--rd->inflight)
        return 0;
    return rd->failed || rd->next >= rd->read_end || rd->eof_at != UINT64_MAX;
}

/* Deliver the reads of the ready list (failed before a chunk, or with
 * nothing to read); how many. */
static int
s_deliver_ready (s_uring_t *self, sb_io_done_fn fn, void *ctx)
{
    int n = 0;
    while (self->ready_head) {
        s_read_t *rd = self->ready_head;
        self->ready_head = rd->wait_next;
        if (!self->ready_head)
            self->ready_tail = NULL;
        rd->wait_next = NULL;
        s_deliver (self, rd, fn, ctx);
        n++;
    }
    return n;
}

static int
s_getevents (void *client, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e)
{
    s_uring_t *self = client;
    int delivered = 0;
    uint64_t deadline = sb_mono_ns () + (uint64_t) (timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;
    self->woken = 0;
    delivered += s_deliver_ready (self, fn, ctx);
    for (;;) {
        struct io_uring_cqe *cqe;
        /* every completion already there, each marked seen before it is
         * handled (fn may queue reads) */
        while (io_uring_peek_cqe (&self->ring, &cqe) == 0) {
            uint64_t data = io_uring_cqe_get_data64 (cqe);
            int res = cqe->res;
            io_uring_cqe_seen (&self->ring, cqe);
            if (data == S_WAKE_TAG) {
                self->woken = 1;
                s_arm_wake (self);
                continue;
            }
            if (data >= self->nslots || !self->slots[data].rd)
                continue;
            uint64_t seen_at = sb_mono_ns ();
            if (self->progress_ns)
                __atomic_store_n (self->progress_ns, seen_at, __ATOMIC_RELEASE);
            s_read_t *rd = self->slots[data].rd;
            int done = s_complete (self, (size_t) data, res);
            if (done)
                rd->done_ns = seen_at;  /* its latency ends here, not after the next read went in */
            /* the slot goes to the next read waiting, and that read to the
             * kernel, before rd is delivered and before the next
             * completion is looked at (fio refills a slot as it frees; at
             * QD 1 the delivery is then no longer between two reads): the
             * reader keeps reads waiting for this (SB_ENGINE_QUEUE_AHEAD).
             * The closes of reads delivered go in with that read, or with
             * the submission this call ends with when no read waits (the
             * tail of an epoch): never a system call of their own here */
            s_fill_slots (self);
            if (self->unsubmitted)
                s_submit_prepared (self);
            if (done) {
                s_deliver (self, rd, fn, ctx);
                delivered++;
            }
        }
        s_fill_slots (self);
        delivered += s_deliver_ready (self, fn, ctx);     /* reads s_fill_slots found failed or empty */
        uint64_t now = sb_mono_ns ();
        if (delivered || self->woken || self->pending == 0 || timeout_ms == 0
            || (timeout_ms > 0 && now >= deadline))
            return s_submit (self, e) == 0 ? delivered : -1;
        /* a wakeup that came while this thread was not waiting ends the
         * wait before it begins; one that comes while it waits writes the
         * eventfd (s_wakeup): sleeping is set before wake_pending is
         * looked at, so no wakeup falls between them */
        __atomic_store_n (&self->sleeping, 1, __ATOMIC_SEQ_CST);
        if (__atomic_exchange_n (&self->wake_pending, 0, __ATOMIC_SEQ_CST)) {
            __atomic_store_n (&self->sleeping, 0, __ATOMIC_SEQ_CST);
            return s_submit (self, e) == 0 ? delivered : -1;
        }
        /* submit what was queued and wait, in one system call */
        int rc;
        if (timeout_ms < 0) {
            rc = io_uring_submit_and_wait (&self->ring, 1);
        } else {
            uint64_t left = deadline - now;
            struct __kernel_timespec ts = { .tv_sec = (long long) (left / 1000000000ull),
                                            .tv_nsec = (long long) (left % 1000000000ull) };
            rc = io_uring_submit_and_wait_timeout (&self->ring, &cqe, 1, &ts, NULL);
        }
        if (rc >= 0 || rc == -ETIME)
            s_submitted (self, rc);    /* the wait submitted what was prepared */
        /* the wakeups of the wait, and any since, end it here */
        if (__atomic_exchange_n (&self->wake_pending, 0, __ATOMIC_SEQ_CST))
            self->woken = 1;
        __atomic_store_n (&self->sleeping, 0, __ATOMIC_SEQ_CST);
        if (rc == -ETIME)
            return s_submit (self, e) == 0 ? 0 : -1;
        if (rc < 0 && rc != -EINTR && rc != -EAGAIN)
            return sb_storage_fail (e, S_NAME, "getevents", self->root, -rc, "io_uring wait on %s: %s", self->root,
                                    strerror (-rc));
    }
}

/* Any thread: the eventfd is written only while getevents waits in the
 * kernel (a system call saved for every read queued while it does not). */
static void
s_wakeup (void *client)
{
    s_uring_t *self = client;
    __atomic_store_n (&self->wake_pending, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n (&self->sleeping, __ATOMIC_SEQ_CST))
        return;
    uint64_t one = 1;
    ssize_t rc;
    do
        rc = write (self->wake_fd, &one, sizeof one);
    while (rc < 0 && errno == EINTR);
}

size_t
sb_uring_most_submitted (const void *client)
{
    return ((const s_uring_t *) client)->most_submitted;
}

size_t
sb_uring_submitted_no_read (const void *client)
{
    return ((const s_uring_t *) client)->submitted_no_read;
}

static size_t
s_pending (const void *client)
{
    return ((const s_uring_t *) client)->pending;
}

static size_t
s_stats (void *client, sb_storage_stats_t *out, size_t max)
{
    s_uring_t *self = client;
    if (!max)
        return 0;
    *out = self->stats;
    memset (&self->stats.requests, 0, sizeof self->stats - offsetof (sb_storage_stats_t, requests));
    return 1;
}

size_t
sb_uring_slots (const void *client)
{
    return ((const s_uring_t *) client)->nslots;
}

size_t
sb_uring_in_flight (const void *client)
{
    const s_uring_t *self = client;
    return self->nslots - self->nfree;
}

int
sb_uring_registered (const void *client)
{
    return ((const s_uring_t *) client)->registered;
}

/* ---- control ops: the file engine's, on its client ---- */

static int
s_preflight (void *client, int write, sb_storage_check_fn check, void *ctx)
{
    return sb_file_engine_preflight (((s_uring_t *) client)->files, write, check, ctx);
}

static int
s_list (void *client, const char *prefix, const char *start_after, const char *end_at, sb_storage_list_fn fn,
        void *ctx, sb_storage_error_t *e)
{
    return sb_file_engine_list (((s_uring_t *) client)->files, prefix, start_after, end_at, fn, ctx, e);
}

static int
s_fingerprint (void *client, const char *prefix, char *out, size_t out_size, sb_storage_error_t *e)
{
    return sb_file_engine_fingerprint (((s_uring_t *) client)->files, prefix, out, out_size, e);
}

static int
s_stat (void *client, const char *key, uint64_t *size, sb_storage_error_t *e)
{
    return sb_file_engine_stat (((s_uring_t *) client)->files, key, size, e);
}

static int
s_put (void *client, const char *key, uint64_t size, sb_storage_fill_fn fill, void *ctx, unsigned flags,
       sb_storage_error_t *e)
{
    return sb_file_engine_put (((s_uring_t *) client)->files, key, size, fill, ctx, flags, e);
}

static int
s_get_small (void *client, const char *key, char *buf, size_t cap, size_t *len, sb_storage_error_t *e)
{
    return sb_file_engine_get_small (((s_uring_t *) client)->files, key, buf, cap, len, e);
}

static int
s_get (void *client, const char *key, uint64_t offset, uint64_t length, unsigned flags, uint64_t *received,
       sb_storage_error_t *e)
{
    return sb_file_engine_get (((s_uring_t *) client)->files, key, offset, length, flags, received, e);
}

static int
s_put_prepared (void *client, const char *key, sb_storage_prepare_fn prepare, sb_storage_fill_fn fill, void *ctx,
                unsigned flags, sb_storage_error_t *e)
{
    return sb_file_engine_put_prepared (((s_uring_t *) client)->files, key, prepare, fill, ctx, flags, e);
}

static int
s_remove (void *client, const char *key, sb_storage_error_t *e)
{
    return sb_file_engine_remove (((s_uring_t *) client)->files, key, e);
}

const sb_engine_ops_t sb_engine_uring = {
    .name = S_NAME,
    .caps = SB_ENGINE_PAGE_CACHE | SB_ENGINE_FOLDER | SB_ENGINE_ASYNC | SB_ENGINE_QUEUE_AHEAD,
    .options = s_options,
    .open = s_open,
    .close = s_close,
    .preflight = s_preflight,
    .list = s_list,
    .fingerprint = s_fingerprint,
    .stat = s_stat,
    .put = s_put,
    .put_prepared = s_put_prepared,
    .get_small = s_get_small,
    .get = s_get,
    .remove = s_remove,
    .queue = s_queue,
    .getevents = s_getevents,
    .wakeup = s_wakeup,
    .pending = s_pending,
    .stats = s_stats,
    .credentials_source = NULL,
};
