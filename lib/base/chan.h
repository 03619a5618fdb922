/* chan: a FIFO of messages between the threads of one process.
 *
 * It replaces inproc ZeroMQ sockets where both ends are threads of one
 * process and the messages are many and small: a rank's read requests
 * and their completions (worker/trainer/reader.c). Each message is copied
 * in once and handed out as it was pushed; a push or a take is a mutex
 * and a pointer, with no system call unless a thread is asleep waiting
 * for it. (An inproc socket costs libzmq a poll(2) and a getpid(2) per
 * receive that processes its commands, and a write(2) on an eventfd per
 * message sent to a sleeping reader: some 10 system calls per read at one
 * read in flight, measured with strace; docs/PERFORMANCE.md.)
 *
 * Two ways to wait for a message:
 * - threads block in sb_chan_take (a condition variable);
 * - a poll loop that also waits on sockets sleeps on sb_chan_fd (an
 *   eventfd), after sb_chan_arm said fewer messages are queued than it
 *   wants: the push that brings the count to what it wants (or an urgent
 *   one) makes the fd readable. Only that push writes to the eventfd, and
 *   only the arm after it reads it back, so a consumer that is busy, or
 *   that waits for many messages at once, costs no system call per
 *   message.
 *
 * Any number of threads may push and take. Not async-signal-safe. */
#ifndef SB_CHAN_H
#define SB_CHAN_H

#include <stddef.h>

typedef struct sb_chan sb_chan_t;

/* A message as taken: owned by the taker, who frees it with
 * sb_chan_msg_free. */
typedef struct sb_chan_msg {
    struct sb_chan_msg *next;   /* the channel's, while queued */
    size_t size;
    _Alignas (16) unsigned char data[];
} sb_chan_msg_t;

/* A new, empty channel; with_fd: with an eventfd for a poll loop
 * (sb_chan_fd). NULL when out of memory or file descriptors (errno set). */
sb_chan_t *sb_chan_new (int with_fd);

/* Free the channel and every message still queued; *self_p becomes NULL.
 * No thread may use it any more. */
void sb_chan_destroy (sb_chan_t **self_p);

/* Flags of a push: SB_CHAN_URGENT wakes an armed poll loop whatever count
 * it wants (a failure it must hear of at once). */
#define SB_CHAN_URGENT 1u

/* Queue a copy of size bytes at data (size may be 0), with SB_CHAN_*
 * flags. Returns 0, or -1 when out of memory (errno ENOMEM). */
int sb_chan_push (sb_chan_t *self, const void *data, size_t size, unsigned flags);

/* Take the oldest message into *msg, waiting up to timeout_ms for one (0:
 * do not wait; negative: wait for ever). Returns 0 with *msg set, 1 when
 * none came in time or the channel is closed and empty. */
int sb_chan_take (sb_chan_t *self, sb_chan_msg_t **msg, int timeout_ms);

/* Free a message sb_chan_take gave (NULL: nothing). */
void sb_chan_msg_free (sb_chan_msg_t *msg);

/* Close the channel for takers: what is queued is still taken, then every
 * take returns 1 at once instead of waiting (threads waiting now wake).
 * Pushes are still accepted. Cannot fail, so a reader can always stop its
 * threads, out of memory or not. */
void sb_chan_close (sb_chan_t *self);

/* Messages queued now. */
size_t sb_chan_count (sb_chan_t *self);

/* The eventfd a poll loop sleeps on (POLLIN), or -1 for a channel made
 * without one. */
int sb_chan_fd (const sb_chan_t *self);

/* Call right before sleeping on sb_chan_fd, wanting `want` messages (0
 * counts as 1): 1 when that many are queued (take them; do not sleep), 0
 * when the channel is armed (the push that makes them that many, or an
 * urgent push, makes the fd readable), -1 for a channel without an fd. */
int sb_chan_arm (sb_chan_t *self, size_t want);

#endif
