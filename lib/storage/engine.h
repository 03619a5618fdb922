/* engine: one interface to every place a dataset or a checkpoint can live.
 *
 * An engine is an ops table (sb_engine_ops_t) in its own folder,
 * lib/storage/<name>/, registered by its line in lib/meson.build's
 * storage_engines (lib/storage/registry.c expands the generated list), as
 * fio's engines/ and SQLite's VFS are built. Code outside lib/storage/
 * never asks which engine it has: it asks what the engine can do
 * (SB_ENGINE_* capability bits) and calls the ops through the sb_storage_*
 * functions below.
 *
 * Engines:
 *   file       POSIX files read with pread by a pool of threads (one read
 *              in flight per thread, as DLIO's reader workers)
 *   direct     the same files opened with O_DIRECT, reads widened to
 *              aligned blocks (DLIO's reader.odirect)
 *   uring      the same files read through io_uring (liburing): one ring
 *              per rank, queue depth from the workload, registered buffers
 *   s3         S3-compatible object stores (lib/storage/s3/s3_client.c)
 *   azure      Azure Blob Storage, block blobs (lib/storage/azure/az_client.c)
 *   synthetic  nothing stored: seeded sizes, reads complete at once (fio's
 *              null engine), to run the rest of shardbench at 10^8 objects
 *
 * A client (sb_storage_t) is one engine instance with its own state
 * (connections, a ring, a root folder); it is used by one thread at a time,
 * except sb_storage_wakeup, which any thread may call.
 *
 * The data path is fio's queue/getevents: sb_storage_queue hands the engine
 * a read (it may complete it before returning, as fio's sync engines do);
 * sb_storage_getevents reaps completions, waiting up to a timeout, and
 * sb_storage_wakeup interrupts that wait. At most `depth` reads
 * (sb_storage_open_t) are queued and not yet reaped. */
#ifndef SB_ENGINE_H
#define SB_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "histogram.h"
#include "storage.h"

/* ---- capabilities ---- */

/* Nothing is stored: listings are made from the dataset's names and seeded
 * sizes, reads complete inside sb_storage_queue without touching a byte
 * unless verified, writes are counted and dropped. */
#define SB_ENGINE_NO_IO        (1u << 0)
/* Objects in a flat key space under a store (no folders, no file
 * descriptors, no page cache on this host); DLIO's object-store readers. */
#define SB_ENGINE_OBJECTS      (1u << 1)
/* Talks to endpoints (URLs): preflight checks each, statistics are per
 * endpoint, credentials come from the environment. */
#define SB_ENGINE_ENDPOINTS    (1u << 2)
/* Reads may be served by this host's page cache: residency sampling and
 * eviction (SB_IO_RESIDENCY, SB_IO_EVICT) mean something. */
#define SB_ENGINE_PAGE_CACHE   (1u << 3)
/* Reads bypass the page cache (O_DIRECT): offsets, lengths and buffers are
 * aligned by the engine. */
#define SB_ENGINE_DIRECT       (1u << 4)
/* Objects live in a local folder tree: the data folder can be locked,
 * carries a marker file, and its identity changes (mtimes) tell whether a
 * catalog is still current (sb_storage_fingerprint). */
#define SB_ENGINE_FOLDER       (1u << 5)
/* sb_storage_list gives names in byte order (S3's ListObjectsV2); without
 * it the caller sorts (a directory walk). */
#define SB_ENGINE_LIST_ORDERED (1u << 6)
/* One client keeps many reads in flight at once (an HTTP multi handle, an
 * io_uring ring): a reader drives it from one thread with depth reads
 * queued. Without it a client holds one read at a time and performs it in
 * sb_storage_getevents (fio's sync engines): a reader runs a pool of
 * clients, one per thread (worker/trainer/reader.h says the rule). */
#define SB_ENGINE_ASYNC        (1u << 7)
/* With SB_ENGINE_ASYNC: reads queued beyond the client's depth wait in the
 * engine, in order, for one in flight to end, and nothing is done for them
 * until then (uring opens a read's file when the read gets a slot). A
 * reader keeps up to a depth of them waiting besides the depth in flight,
 * so that a read ending is followed by the next at once, inside the same
 * sb_storage_getevents, not after the completions went back to the reader
 * and new requests came down. Never more than the depth in flight. */
#define SB_ENGINE_QUEUE_AHEAD  (1u << 8)
/* With SB_ENGINE_NO_IO: an unverified read does nothing and cannot fail
 * (synthetic), so a reader may count it done without queueing it at all:
 * the queue and completion bookkeeping are most of what such a read costs.
 * An engine whose NO_IO reads may fail leaves it out and is queued. */
#define SB_ENGINE_READS_FREE   (1u << 9)

/* ---- errors ---- */

/* One error type for every engine: what was done, where, to what, and why.
 * text says all of it in one sentence a storage engineer can act on. */
typedef struct {
    char engine[16];        /* the engine's name */
    char op[24];            /* open, read, write, fsync, list, GET, PUT, HEAD, DELETE, ... */
    char where[256];        /* endpoint URL (s3), or the root folder */
    char target[1024];      /* path or key */
    int  os_errno;          /* errno; 0 when none */
    long status;            /* the service's status (HTTP); 0 when none */
    char code[64];          /* the service's error code (S3 NoSuchKey); "" when none */
    int  lib_code;          /* the client library's own code (an HTTP library's); 0 when none */
    int  attempt;           /* 1-based attempt that failed last; 0 when not retried */
    int  missing;           /* 1: the object does not exist (ENOENT, HTTP 404) */
    int  transient;         /* 1: worth retrying */
    int  stopped;           /* 1: the opener's stop said so (sb_storage_open_t), not a failure of storage */
    char text[2048];        /* all of the above in one sentence */
} sb_storage_error_t;

/* Fill e (memset first) and compose e->text from fmt; returns -1, so an
 * engine can `return sb_storage_fail (e, ...)`. */
int sb_storage_fail (sb_storage_error_t *e, const char *engine, const char *op, const char *target, int os_errno,
                     const char *fmt, ...) __attribute__ ((format (printf, 6, 7)));

/* ---- engine-owned options ---- */

/* A workload key an engine declares: storage.<engine>.<key>. The workload
 * loader accepts exactly these keys for the engine in use (a key of another
 * engine is an error naming that engine), stores them as text in
 * sb_storage_cfg_t.opts, and the coordinator sends them to workers in
 * WELCOME without knowing what they mean. */
typedef enum { SB_OPT_UINT, SB_OPT_BOOL, SB_OPT_SIZE, SB_OPT_STRING } sb_engine_opt_type_t;
typedef struct {
    const char          *key;       /* e.g. "iodepth" for storage.uring.iodepth */
    sb_engine_opt_type_t type;
    const char          *dflt;      /* as text; NULL: no default */
    uint64_t             min, max;  /* SB_OPT_UINT, SB_OPT_SIZE */
    const char          *help;      /* one line, for docs and --help */
    /* Optional (NULL: none): another full workload key that sets this
     * option, DLIO's or mlcommons/storage's spelling of it
     * ("storage.storage_options.multipart_part_bytes"). The loader accepts
     * it whatever engine the workload uses (a file is written for whichever
     * store it runs on) and keeps it for this engine, which a checkpoint
     * folder there uses; both spellings with different values are an
     * error. Each alias names one option of one engine. */
    const char          *alias;
} sb_engine_option_t;

/* ---- configuration an engine owns ---- */

/* What the workload loader tells an engine's configure op. */
typedef struct {
    /* the scheme of the location as written ("s3" of s3://STORE/PREFIX);
     * "" when the workload named the engine by storage.storage_type alone */
    const char *scheme;
    /* Where a workload key was written ("FILE:LINE"), into buf, for error
     * messages; NULL when the key was not given. */
    const char *(*where) (void *ctx, const char *key, char *buf, size_t size);
    /* The value of a workload key as written; NULL when not given or a list. */
    const char *(*value) (void *ctx, const char *key);
    void       *ctx;
    /* 1: the engine serves only the checkpoint folder of a local dataset:
     * an endpoint may come from the environment, but a missing one is an
     * error, not the service's public endpoint (a benchmark's checkpoints
     * never go to a cloud nobody named) */
    int         checkpoints_only;
} sb_engine_setup_t;

/* ---- the ops ---- */

typedef struct sb_storage sb_storage_t;

/* How a client is opened. */
typedef struct {
    const char *root;       /* data folder ending with '/' (files), or key prefix ("" or ending with '/') */
    uint64_t    rank;       /* the rank that uses the client (per-rank endpoints); 0 for the coordinator */
    size_t      depth;      /* reads queued at once (>= 1); for S3 also connections per endpoint */
    size_t      buffer_bytes; /* the I/O buffer of one read in flight (file engines) */
    /* Optional (NULL: none): while sb_storage_getevents performs reads, the
     * engine stores sb_mono_ns () here (atomically) each time a call that
     * may block (open, stat, one pread) returns, so another thread can tell
     * a read that makes no progress from a long one (sb_reader_stalled). */
    uint64_t   *progress_ns;
    /* Optional (NULL: never): a write (sb_storage_put) and a blocking read
     * (sb_storage_get) call stop (stop_arg) between buffers and, when it
     * says 1, give up the object (a SB_PUT_REPLACE temporary is removed)
     * and fail with e->stopped set. The folder engines look between
     * buffers; an object store (s3) looks while any of its requests is in
     * flight or waits for a retry (queued reads included), within 0.1 s. */
    int       (*stop) (void *arg);
    void       *stop_arg;
    /* Optional (NULL: none): the folder engines call it with the bytes of
     * each buffer a read gets, as they arrive (a blocking read's progress,
     * sb_storage_get); stop_arg is its argument. Engines that read an
     * object whole (an object store's GET) do not call it. */
    void      (*got) (void *arg, uint64_t bytes);
    /* Optional (NULL: gethostname): the writer's host name in the names of
     * SB_PUT_REPLACE temporaries (.NAME.HOST.PID.RAND.tmp, docs/ARCHITECTURE.md
     * "Temporaries"), the agent's --host. Copied by the engine. */
    const char *writer;
} sb_storage_open_t;

/* Expected bytes of an object at an offset (verification); the same type as
 * the writers' fill. */
typedef void (*sb_storage_fill_fn) (void *ctx, uint64_t offset, uint8_t *buf, size_t len);
/* Make an object whose size is known only once made (an encoder, datagen's
 * formats): called once by sb_storage_put_prepared, after a folder engine
 * has created the writer's temporary (so the name is claimed while the
 * object is made) and before the first fill; sets *size. 0, or -1 when it
 * cannot be made (ctx says why; put then fails and leaves nothing). */
typedef int (*sb_storage_prepare_fn) (void *ctx, uint64_t *size);

/* Flags of a read. */
#define SB_IO_EVICT     1u  /* drop the file's pages before reading (SB_ENGINE_PAGE_CACHE) */
#define SB_IO_RESIDENCY 2u  /* sample how much of the range the page cache holds first */

/* One read of [offset, offset + length) of key (relative to root); length 0
 * reads the whole object, as long as it is when opened. The engine copies
 * key. With expect, every byte is compared with expect's bytes; expect_size
 * is where the generator's bytes end (UINT64_MAX: never): an object going
 * on past it fails. The engine owns expect_ctx once queued (also when queue
 * fails) and calls expect_free on it when done. */
typedef struct {
    uint64_t           tag;
    const char        *key;
    uint64_t           offset, length;
    unsigned           flags;
    sb_storage_fill_fn expect;
    void              *expect_ctx;
    void             (*expect_free) (void *ctx);
    uint64_t           expect_size;
    const char        *expect_name; /* the generator, for errors ("npz"); NULL: none said; borrowed until queued */
} sb_io_t;

/* A completed read. */
typedef struct {
    uint64_t           tag;
    uint64_t           bytes;          /* bytes of the asked range that arrived */
    uint64_t           latency_ns;     /* of the read itself (not eviction or residency checks) */
    uint64_t           resident_bytes; /* SB_IO_RESIDENCY: bytes resident just before, of checked_bytes */
    uint64_t           checked_bytes;
    int                failed;
    sb_storage_error_t error;          /* when failed */
} sb_io_done_t;
typedef void (*sb_io_done_fn) (void *ctx, const sb_io_done_t *done);

/* Counters of one endpoint or device since the last sb_storage_stats. */
typedef struct {
    char           where[256];     /* endpoint URL, or the root folder */
    uint64_t       requests, bytes, errors, retries;
    sb_histogram_t latency;        /* per successful request, microseconds */
} sb_storage_stats_t;

/* A listed object: key relative to the listed prefix, its size. Return
 * non-zero to stop the listing (the listing then fails with that return). */
typedef int (*sb_storage_list_fn) (void *ctx, const char *key, size_t key_len, uint64_t size);

/* Per endpoint (or the root folder) checked by preflight: e NULL when fine. */
typedef void (*sb_storage_check_fn) (void *ctx, const char *where, const sb_storage_error_t *e);

/* Flags of a write. */
#define SB_PUT_FSYNC   1u   /* durable before put returns (fsync, or the object store's commit) */
#define SB_PUT_REPLACE 2u   /* write to a temporary and rename over key: readers never see half an object */
#define SB_PUT_EVICT   4u   /* once written (and durable with SB_PUT_FSYNC), drop its pages from this host's
                             * page cache, so a read of it later measures the storage, not memory
                             * (SB_ENGINE_PAGE_CACHE; other engines ignore it) */

typedef struct {
    const char               *name;
    unsigned                  caps;          /* SB_ENGINE_* */
    const sb_engine_option_t *options;       /* NULL-key terminated; NULL: none */
    /* SB_ENGINE_FOLDER without SB_ENGINE_DIRECT: the engine that reads the
     * same folders with O_DIRECT, which reader.odirect switches a reader to
     * (worker/trainer/reader.h); NULL: none (O_DIRECT is refused). */
    const char               *direct_engine;
    /* Values of DLIO's storage.storage_type that name this engine
     * (NULL-terminated; NULL: none), and the URI schemes of data and
     * checkpoint folders it serves (SCHEME://STORE/PREFIX for an object
     * store; NULL: none). Each value and scheme names one engine. */
    const char *const        *storage_types;
    const char *const        *schemes;
    /* Optional (NULL: nothing to do): called once by the workload loader
     * after cfg->engine, cfg->store, the endpoints given and the engine's
     * options (cfg->opts) are set: completes cfg from the environment (an
     * endpoint, never a credential: cfg is sent to workers), checks its
     * options and says what is missing. 0, or -1 with err naming the key
     * (setup->where) and what to give. */
    int  (*configure)   (sb_storage_cfg_t *cfg, const sb_engine_setup_t *setup, char *err, size_t err_size);
    /* Optional (NULL: none): credentials a workload file carries in the
     * engine's keys (DLIO's storage.storage_options.access_key_id) are put
     * into this process's environment, where the engine's clients and the
     * local workers the coordinator forks read them; never into cfg.
     * Called once per command, before any thread starts, whatever engine
     * the workload uses (a checkpoint store may be another). 1 when some
     * were, 0 when none are given, -1 with err naming file:line and key,
     * never a value. */
    int  (*export_credentials) (const sb_engine_setup_t *setup, char *err, size_t err_size);

    /* Open a client for cfg (copied by the engine). 0, or -1 with e set. */
    int  (*open)        (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client,
                         sb_storage_error_t *e);
    void (*close)       (void *client);
    /* Reach every endpoint (or the root folder) the way reads and writes
     * will (write: also that objects can be created); check is called once
     * per endpoint. Returns how many failed. */
    int  (*preflight)   (void *client, int write, sb_storage_check_fn check, void *ctx);
    /* Every object under prefix (relative to root; "" or ending with '/'),
     * in byte order with SB_ENGINE_LIST_ORDERED; start_after/end_at bound
     * the key range (NULL: open) on an ordered engine, as keys relative to
     * prefix (those fn gets). Hidden names (a '.' first: temporaries of
     * SB_PUT_REPLACE) are left out on folder engines. 0, 1 when the prefix
     * holds nothing or does not exist, -1 with e set. */
    int  (*list)        (void *client, const char *prefix, const char *start_after, const char *end_at,
                         sb_storage_list_fn fn, void *ctx, sb_storage_error_t *e);
    /* A text that changes when what lies under prefix may have changed
     * (SB_ENGINE_FOLDER); NULL op: the engine has no cheap marker. */
    int  (*fingerprint) (void *client, const char *prefix, char *out, size_t out_size, sb_storage_error_t *e);
    /* Size of key: 0, or -1 with e set (e->missing when absent). */
    int  (*stat)        (void *client, const char *key, uint64_t *size, sb_storage_error_t *e);
    /* Write key of size bytes from fill (SB_PUT_*); multipart on object stores. 0 or -1. */
    int  (*put)         (void *client, const char *key, uint64_t size, sb_storage_fill_fn fill, void *ctx,
                         unsigned flags, sb_storage_error_t *e);
    /* put, the size from prepare (sb_storage_prepare_fn), called once the
     * target is open. NULL op: sb_storage_put_prepared prepares first,
     * then puts (right for engines without temporaries). */
    int  (*put_prepared) (void *client, const char *key, sb_storage_prepare_fn prepare, sb_storage_fill_fn fill,
                          void *ctx, unsigned flags, sb_storage_error_t *e);
    /* Blocking read of a whole small object into buf (at most cap bytes). 0, 1 when absent, -1. */
    int  (*get_small)   (void *client, const char *key, char *buf, size_t cap, size_t *len, sb_storage_error_t *e);
    /* Blocking ranged read (length 0: whole object), bytes counted and
     * dropped; flags SB_IO_EVICT (the others are ignored). 0 or -1. */
    int  (*get)         (void *client, const char *key, uint64_t offset, uint64_t length, unsigned flags,
                         uint64_t *received, sb_storage_error_t *e);
    /* Delete key; a missing key is not an error. 0 or -1. */
    int  (*remove)      (void *client, const char *key, sb_storage_error_t *e);

    /* The data path (see the top of this file). queue: 0, or -1 with e set
     * when the read could not be queued (no completion follows).
     * getevents: waits up to timeout_ms (0: do not wait) for at least one
     * completion unless none is pending, calls fn for each; returns the
     * number delivered, or -1 when the engine broke (e set). */
    int    (*queue)     (void *client, const sb_io_t *io, sb_storage_error_t *e);
    int    (*getevents) (void *client, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e);
    void   (*wakeup)    (void *client);
    size_t (*pending)   (const void *client);
    /* Counters per endpoint or device since the last call, then reset: up
     * to max entries into out; returns how many. NULL op: none. */
    size_t (*stats)     (void *client, sb_storage_stats_t *out, size_t max);
    /* Where credentials came from ("environment", "FILE [profile]"); NULL op: none needed. */
    const char *(*credentials_source) (const void *client);
} sb_engine_ops_t;

/* ---- a read's verification, for engines that hand it to requests ---- */

/* io's expected bytes (io->expect, its context and its free) bounded at
 * io->expect_size: zeros past it, which the seeded bytes of a longer object
 * will not match. Held by the requests that check a read (a split read's
 * range GETs hold one each) and freed, with io's context, when the last
 * lets go. new: one holder, or NULL when out of memory (io's context is
 * then still the caller's to free). fill and release take the
 * sb_storage_expect_t as void *, the shape of a request's fill and free. */
typedef struct sb_storage_expect sb_storage_expect_t;
sb_storage_expect_t *sb_storage_expect_new (const sb_io_t *io);
void sb_storage_expect_hold (sb_storage_expect_t *x);
void sb_storage_expect_fill (void *x, uint64_t offset, uint8_t *buf, size_t len);
void sb_storage_expect_release (void *x);

/* ---- the registry (lib/storage/registry.c) ---- */

/* The engine called name, or NULL. */
const sb_engine_ops_t *sb_engine_find (const char *name);
/* The engine cfg names (cfg->engine); NULL when none does. */
const sb_engine_ops_t *sb_engine_of (const sb_storage_cfg_t *cfg);
/* The engine that serves URI scheme ("s3", "az"), or that DLIO's
 * storage.storage_type value names; NULL when none does. */
const sb_engine_ops_t *sb_engine_for_scheme (const char *scheme);
const sb_engine_ops_t *sb_engine_for_storage_type (const char *storage_type);
/* The URI scheme of cfg's engine ("s3" for s3, "az" for azure): its first
 * scheme, else its name; for SCHEME://STORE/... in messages and
 * locations. Borrowed. */
const char *sb_storage_scheme (const sb_storage_cfg_t *cfg);
/* Capabilities of the engine cfg names (0 when unknown). */
unsigned sb_storage_caps (const sb_storage_cfg_t *cfg);
/* Add an engine to the registry at run time (unit tests: a fake engine);
 * ops must outlive every use. At most a few (SB_ENGINE_EXTRA_MAX); a name
 * already registered is refused. 0, or -1. Not thread-safe: call before
 * any other thread uses the registry. */
#define SB_ENGINE_EXTRA_MAX 4
int sb_engine_register (const sb_engine_ops_t *ops);
/* The i-th registered engine (NULL past the last): for docs and --help. */
const sb_engine_ops_t *sb_engine_at (size_t i);

/* ---- clients ---- */

/* Open a client of cfg's engine. NULL with e set. */
sb_storage_t *sb_storage_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, sb_storage_error_t *e);
/* Close (accepts NULL; nulls the pointer). */
void sb_storage_close (sb_storage_t **self_p);
const sb_engine_ops_t *sb_storage_ops (const sb_storage_t *self);
unsigned sb_storage_client_caps (const sb_storage_t *self);

/* The ops, through the client; an op the engine lacks fails with e saying
 * which engine cannot do what. */
int    sb_storage_preflight (sb_storage_t *self, int write, sb_storage_check_fn check, void *ctx);
int    sb_storage_list (sb_storage_t *self, const char *prefix, const char *start_after, const char *end_at,
                        sb_storage_list_fn fn, void *ctx, sb_storage_error_t *e);
int    sb_storage_fingerprint (sb_storage_t *self, const char *prefix, char *out, size_t out_size,
                               sb_storage_error_t *e);
int    sb_storage_stat (sb_storage_t *self, const char *key, uint64_t *size, sb_storage_error_t *e);
int    sb_storage_put (sb_storage_t *self, const char *key, uint64_t size, sb_storage_fill_fn fill, void *ctx,
                       unsigned flags, sb_storage_error_t *e);
int    sb_storage_put_prepared (sb_storage_t *self, const char *key, sb_storage_prepare_fn prepare,
                                sb_storage_fill_fn fill, void *ctx, unsigned flags, sb_storage_error_t *e);
int    sb_storage_get_small (sb_storage_t *self, const char *key, char *buf, size_t cap, size_t *len,
                             sb_storage_error_t *e);
int    sb_storage_get (sb_storage_t *self, const char *key, uint64_t offset, uint64_t length, unsigned flags,
                       uint64_t *received, sb_storage_error_t *e);
int    sb_storage_remove (sb_storage_t *self, const char *key, sb_storage_error_t *e);
int    sb_storage_queue (sb_storage_t *self, const sb_io_t *io, sb_storage_error_t *e);
int    sb_storage_getevents (sb_storage_t *self, int timeout_ms, sb_io_done_fn fn, void *ctx, sb_storage_error_t *e);
void   sb_storage_wakeup (sb_storage_t *self);
size_t sb_storage_pending (const sb_storage_t *self);
size_t sb_storage_stats (sb_storage_t *self, sb_storage_stats_t *out, size_t max);
const char *sb_storage_credentials_source (const sb_storage_t *self);

#endif
