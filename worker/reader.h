/* reader: the I/O threads of a rank (file:// backend, pread).
 *
 * A rank pushes read requests to its reader threads over an inproc PUSH
 * socket and gets completions back over a PULL socket. Each thread owns one
 * fixed buffer: bytes are counted (and verified when asked) and dropped, so
 * memory is read_threads x io_buffer whatever the object sizes. */
#ifndef SB_READER_H
#define SB_READER_H

#include <czmq.h>
#include <stdint.h>

typedef struct sb_reader sb_reader_t;

typedef struct {
    uint64_t bytes;         /* bytes that arrived */
    uint64_t latency_ns;
    int      error;         /* errno, or -1 for a short read / verify mismatch; 0 when fine */
    char     message[512];  /* what failed, naming the path */
} sb_read_result_t;

/* Start threads reading below root (ends with '/'); verify: compare bytes
 * with the generator, seeded by seed. NULL on failure (err set). */
sb_reader_t *sb_reader_new (const char *root, size_t threads, size_t buffer_bytes, int verify, uint64_t seed,
                            char *err, size_t err_size);
/* Stop and join the threads; accepts NULL and nulls the pointer. */
void sb_reader_destroy (sb_reader_t **self_p);

/* Queue a read of [offset, offset+length) of key. Returns 0 or -1. */
int sb_reader_submit (sb_reader_t *self, const char *key, uint64_t offset, uint64_t length);

/* Socket that becomes readable when a completion is ready (for a poller). */
zsock_t *sb_reader_completions (sb_reader_t *self);

/* Take one completion (blocks if none). Returns 0 or -1 when interrupted. */
int sb_reader_take (sb_reader_t *self, sb_read_result_t *result);

#endif
