/* fake_engine: a storage engine for unit tests, "fake": no I/O at all,
 * reads and failures as a test scripts them (lib/storage/engine.h).
 *
 * A trainer test (AU arithmetic, barriers, drop_last) drives the whole read
 * path with it: sb_fake_engine_reset registers it (once) and clears every
 * script; storage.engine "fake" then selects it. Objects: those added with
 * sb_fake_engine_add_object or put; while none is known, every key exists
 * and a read gets the bytes it asks for. State is process-wide and guarded
 * by a mutex: clients on several reader threads share it. */
#ifndef SB_FAKE_ENGINE_H
#define SB_FAKE_ENGINE_H

#include <stdint.h>

#include "engine.h"

#define SB_FAKE_ENGINE_NAME "fake"

/* Register the engine (first call) and forget objects, failures, latency
 * and counters; caps become SB_ENGINE_OBJECTS | SB_ENGINE_LIST_ORDERED (a
 * reader runs read_threads clients of depth 1). Returns 0, or -1 when the
 * registry is full. */
int sb_fake_engine_reset (void);

/* The capabilities the engine reports from now on (e.g. | SB_ENGINE_ASYNC:
 * one client of depth max_in_flight per reader; SB_ENGINE_NO_IO: inline). */
void sb_fake_engine_set_caps (unsigned caps);

/* Every read reports latency_ns, and completes delay_ns of wall time after
 * it was queued (0: at once; getevents waits for it up to its timeout).
 * With SB_ENGINE_QUEUE_AHEAD a client holds twice its depth, and a read
 * queued beyond the depth starts (its delay runs) when one in flight ends. */
void sb_fake_engine_set_latency (uint64_t latency_ns, uint64_t delay_ns);

/* An object of size bytes (copied key). 0, or -1 when out of memory. */
int sb_fake_engine_add_object (const char *key, uint64_t size);

/* Reads of keys containing key_part ("" : every key) fail: the nth such
 * read (1-based; 0: every one), with this errno, status, missing and
 * transient in the error. Up to 8 rules; 0 or -1. */
int sb_fake_engine_fail (const char *key_part, uint64_t nth, int os_errno, long status, int missing, int transient);

/* reader.odirect's counterpart: from now on the engine names
 * SB_FAKE_ENGINE_DIRECT (registered at the first call, caps
 * SB_ENGINE_DIRECT | SB_ENGINE_FOLDER, the fake's reads) as the engine that
 * reads its folders with O_DIRECT (engine.h direct_engine); opening a
 * client of it fails with open_errno (0: it opens). Set the fake's caps to
 * SB_ENGINE_FOLDER for a reader to switch. 0, or -1 when the registry is
 * full. The reset forgets the counterpart. */
#define SB_FAKE_ENGINE_DIRECT "fake_direct"
int sb_fake_engine_set_direct (int open_errno);

/* The next getevents of a client holding reads fails (once): the engine
 * breaks as a whole, with this errno (op "getevents"), its reads left
 * undelivered. 0 clears it. */
void sb_fake_engine_fail_getevents (int os_errno);

/* 1: a read past an object's end completes with the bytes the object
 * holds and no error, as a careless engine would; 0 (after a reset): it
 * fails, as every real engine's does. */
void sb_fake_engine_set_lenient (int on);

typedef struct {
    uint64_t opens, reads, bytes, failed;   /* reads: completed; bytes: of the successful ones */
    uint64_t puts, put_bytes, removes, max_pending;
    uint64_t max_in_flight;     /* reads started and not done at once (max_pending less those waiting for a
                                 * slot, with SB_ENGINE_QUEUE_AHEAD) */
} sb_fake_engine_counts_t;
void sb_fake_engine_counts (sb_fake_engine_counts_t *out);

/* The first SB_FAKE_ENGINE_LOG reads queued since the reset, in the order
 * they were queued: which client (1 for the first opened since the reset,
 * 2 for the next, ...) and the key (cut at 63 bytes). */
#define SB_FAKE_ENGINE_LOG 1024
typedef struct {
    uint64_t client;
    char     key[64];
} sb_fake_engine_read_t;
/* Copies up to max of them into out; returns how many. */
size_t sb_fake_engine_reads (sb_fake_engine_read_t *out, size_t max);

#endif
