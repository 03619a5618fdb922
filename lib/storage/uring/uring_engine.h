/* uring_engine: what the io_uring engine (uring_engine.c) shows of a
 * client besides its ops table sb_engine_uring, for the unit tests: the
 * client is the engine's own (the void * its open gave). */
#ifndef SB_URING_ENGINE_H
#define SB_URING_ENGINE_H

#include <stddef.h>

#include "engine.h"

extern const sb_engine_ops_t sb_engine_uring;

/* Slots of the ring: reads (buffer-sized chunks) in flight at most. */
size_t sb_uring_slots (const void *client);
/* Slots holding a chunk in flight now. */
size_t sb_uring_in_flight (const void *client);
/* 1 when the slots' buffers are registered with the ring (read_fixed), 0
 * when the memlock limit left plain reads. */
int sb_uring_registered (const void *client);
/* The most chunk reads one submission to the kernel carried (1: each
 * went in on its own, as the engine submits them). */
size_t sb_uring_most_submitted (const void *client);
/* Submissions to the kernel that carried no chunk read: files' closes
 * alone (at most one a getevents call), the wakeup's eventfd read. */
size_t sb_uring_submitted_no_read (const void *client);
/* Queue a read of io->length bytes (not 0) from the open descriptor fd,
 * which the read takes over (closed when delivered), of any kind: tests
 * hold a read that does not complete with a pipe nobody writes to. 0, or
 * -1 with e set (fd closed). */
int sb_uring_queue_fd (void *client, int fd, const sb_io_t *io, sb_storage_error_t *e);

#endif
