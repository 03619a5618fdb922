/* chan: a FIFO of messages between threads (see chan.h). */
#include "chan.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct sb_chan {
    pthread_mutex_t lock;
    pthread_cond_t  ready;      /* signalled by a push while takers wait */
    sb_chan_msg_t  *head, *tail;    /* owned */
    size_t          count;
    size_t          takers;     /* threads waiting in sb_chan_take */
    int             closed;     /* sb_chan_close: takes do not wait */
    int             fd;         /* eventfd, or -1 */
    size_t          armed;      /* sb_chan_arm's want (0: not armed): the push that reaches it writes to fd */
    int             signalled;  /* fd was written and not yet read back */
};

sb_chan_t *
sb_chan_new (int with_fd)
{
    sb_chan_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->fd = -1;
    pthread_condattr_t attr;
    if (pthread_condattr_init (&attr) != 0) {
        free (self);
        errno = ENOMEM;
        return NULL;
    }
    int rc = pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init (&self->ready, &attr);
    pthread_condattr_destroy (&attr);
    if (rc != 0) {
        free (self);
        errno = rc;
        return NULL;
    }
    if ((rc = pthread_mutex_init (&self->lock, NULL)) != 0) {
        pthread_cond_destroy (&self->ready);
        free (self);
        errno = rc;
        return NULL;
    }
    if (with_fd && (self->fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
        int e = errno;
        pthread_mutex_destroy (&self->lock);
        pthread_cond_destroy (&self->ready);
        free (self);
        errno = e;
        return NULL;
    }
    return self;
}

void
sb_chan_destroy (sb_chan_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_chan_t *self = *self_p;
    for (sb_chan_msg_t *n = self->head, *next; n; n = next) {
        next = n->next;
        free (n);
    }
    if (self->fd >= 0)
        close (self->fd);
    pthread_mutex_destroy (&self->lock);
    pthread_cond_destroy (&self->ready);
    free (self);
    *self_p = NULL;
}

int
sb_chan_push (sb_chan_t *self, const void *data, size_t size, unsigned flags)
{
    if (size > SIZE_MAX - sizeof (sb_chan_msg_t)) {
        errno = ENOMEM;
        return -1;
    }
    sb_chan_msg_t *n = malloc (sizeof *n + size);
    if (!n) {
        errno = ENOMEM;
        return -1;
    }
    n->next = NULL;
    n->size = size;
    if (size)
        memcpy (n->data, data, size);
    pthread_mutex_lock (&self->lock);
    if (self->tail)
        self->tail->next = n;
    else
        self->head = n;
    self->tail = n;
    self->count++;
    if (self->armed && (self->count >= self->armed || (flags & SB_CHAN_URGENT))) {
        self->armed = 0;
        if (!self->signalled) {
            /* written with the lock held, so that the arm which reads it
             * back (sb_chan_arm) always finds it: written after the
             * unlock, an arm in between would read nothing, and the
             * late write would leave the fd readable, the poll loop
             * spinning until the next signal. An eventfd write fails
             * only when its counter would overflow, which one write per
             * arm never reaches. */
            uint64_t one = 1;
            ssize_t w;
            do
                w = write (self->fd, &one, sizeof one);
            while (w < 0 && errno == EINTR);
        }
        self->signalled = 1;
    }
    if (self->takers)
        pthread_cond_signal (&self->ready);
    pthread_mutex_unlock (&self->lock);
    return 0;
}

/* With the lock held: the oldest message, or NULL. */
static sb_chan_msg_t *
s_pop (sb_chan_t *self)
{
    sb_chan_msg_t *n = self->head;
    if (!n)
        return NULL;
    self->head = n->next;
    if (!self->head)
        self->tail = NULL;
    self->count--;
    n->next = NULL;
    return n;
}

int
sb_chan_take (sb_chan_t *self, sb_chan_msg_t **msg, int timeout_ms)
{
    struct timespec until;
    if (timeout_ms > 0) {
        clock_gettime (CLOCK_MONOTONIC, &until);
        long long ns = (long long) until.tv_nsec + (long long) (timeout_ms % 1000) * 1000000ll;
        until.tv_sec += timeout_ms / 1000 + (time_t) (ns / 1000000000ll);
        until.tv_nsec = (long) (ns % 1000000000ll);
    }
    pthread_mutex_lock (&self->lock);
    sb_chan_msg_t *m;
    while (!(m = s_pop (self)) && timeout_ms != 0 && !self->closed) {
        self->takers++;
        int rc = timeout_ms < 0 ? pthread_cond_wait (&self->ready, &self->lock)
                                : pthread_cond_timedwait (&self->ready, &self->lock, &until);
        self->takers--;
        if (rc == ETIMEDOUT) {
            m = s_pop (self);
            break;
        }
    }
    pthread_mutex_unlock (&self->lock);
    *msg = m;
    return m ? 0 : 1;
}

void
sb_chan_close (sb_chan_t *self)
{
    pthread_mutex_lock (&self->lock);
    self->closed = 1;
    pthread_cond_broadcast (&self->ready);
    pthread_mutex_unlock (&self->lock);
}

size_t
sb_chan_count (sb_chan_t *self)
{
    pthread_mutex_lock (&self->lock);
    size_t n = self->count;
    pthread_mutex_unlock (&self->lock);
    return n;
}

void
sb_chan_msg_free (sb_chan_msg_t *msg)
{
    if (msg)
        free (msg);
}

int
sb_chan_fd (const sb_chan_t *self)
{
    return self->fd;
}

int
sb_chan_arm (sb_chan_t *self, size_t want)
{
    if (self->fd < 0)
        return -1;
    pthread_mutex_lock (&self->lock);
    if (self->signalled) {
        /* the push that armed it wrote once: read it back, so the fd is
         * readable again only after the next push to an armed channel */
        uint64_t v;
        ssize_t r;
        do
            r = read (self->fd, &v, sizeof v);
        while (r < 0 && errno == EINTR);
        self->signalled = 0;
    }
    if (want == 0)
        want = 1;
    int queued = self->count >= want;
    self->armed = queued ? 0 : want;
    pthread_mutex_unlock (&self->lock);
    return queued;
}
