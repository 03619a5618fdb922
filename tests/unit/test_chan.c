/* chan (lib/base/chan.h): messages come out whole and in order; a take
 * waits, times out, or returns at once; an armed channel's eventfd turns
 * readable exactly when the count it wants is reached (or an urgent push
 * comes), and not before; many producers lose nothing. */
#include <check.h>
#include "check_main.h"
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "chan.h"

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* 1 when fd is readable now */
static int
s_readable (int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return poll (&p, 1, 0) == 1 && (p.revents & POLLIN);
}

START_TEST (test_order_and_bytes)
{
    sb_chan_t *c = sb_chan_new (0);
    ck_assert_ptr_nonnull (c);
    ck_assert_int_eq (sb_chan_fd (c), -1);
    ck_assert_int_eq (sb_chan_arm (c, 1), -1);
    char text[64];
    for (int i = 0; i < 100; i++) {
        int n = snprintf (text, sizeof text, "message %d", i);
        ck_assert_int_eq (sb_chan_push (c, text, (size_t) n + 1, 0), 0);
    }
    ck_assert_int_eq (sb_chan_push (c, NULL, 0, 0), 0);    /* an empty message */
    ck_assert_uint_eq (sb_chan_count (c), 101);
    for (int i = 0; i < 100; i++) {
        sb_chan_msg_t *m = NULL;
        ck_assert_int_eq (sb_chan_take (c, &m, 0), 0);
        snprintf (text, sizeof text, "message %d", i);
        ck_assert_uint_eq (m->size, strlen (text) + 1);
        ck_assert_str_eq ((const char *) m->data, text);
        ck_assert_uint_eq ((uintptr_t) m->data % 16, 0);
        sb_chan_msg_free (m);
    }
    sb_chan_msg_t *m = NULL;
    ck_assert_int_eq (sb_chan_take (c, &m, 0), 0);
    ck_assert_uint_eq (m->size, 0);
    sb_chan_msg_free (m);
    ck_assert_int_eq (sb_chan_take (c, &m, 0), 1);
    ck_assert_ptr_null (m);
    /* what is left queued is freed with the channel (ASan: no leak) */
    ck_assert_int_eq (sb_chan_push (c, "left", 5, 0), 0);
    sb_chan_destroy (&c);
    ck_assert_ptr_null (c);
    sb_chan_destroy (&c);
}
END_TEST

START_TEST (test_take_times_out)
{
    sb_chan_t *c = sb_chan_new (0);
    ck_assert_ptr_nonnull (c);
    sb_chan_msg_t *m = NULL;
    double t0 = s_now ();
    ck_assert_int_eq (sb_chan_take (c, &m, 150), 1);
    double waited = s_now () - t0;
    ck_assert (waited >= 0.149);
    ck_assert (waited < 5.0);
    sb_chan_destroy (&c);
}
END_TEST

static void *
s_push_later (void *arg)
{
    struct timespec d = { 0, 50000000 };
    nanosleep (&d, NULL);
    ck_assert_int_eq (sb_chan_push (arg, "late", 5, 0), 0);
    return NULL;
}

START_TEST (test_take_waits_for_a_push)
{
    sb_chan_t *c = sb_chan_new (0);
    ck_assert_ptr_nonnull (c);
    pthread_t t;
    ck_assert_int_eq (pthread_create (&t, NULL, s_push_later, c), 0);
    sb_chan_msg_t *m = NULL;
    ck_assert_int_eq (sb_chan_take (c, &m, -1), 0);
    ck_assert_str_eq ((const char *) m->data, "late");
    sb_chan_msg_free (m);
    ck_assert_int_eq (pthread_join (t, NULL), 0);
    sb_chan_destroy (&c);
}
END_TEST

START_TEST (test_armed_fd_wants_a_count)
{
    sb_chan_t *c = sb_chan_new (1);
    ck_assert_ptr_nonnull (c);
    int fd = sb_chan_fd (c);
    ck_assert_int_ge (fd, 0);
    /* not armed: pushes do not touch the fd */
    ck_assert_int_eq (sb_chan_push (c, "a", 2, 0), 0);
    ck_assert (!s_readable (fd));
    ck_assert_int_eq (sb_chan_arm (c, 1), 1);     /* one queued: do not sleep */
    ck_assert_int_eq (sb_chan_arm (c, 0), 1);     /* 0 counts as 1 */
    /* armed for 3 with 1 queued: the fd turns readable at the third, not before */
    ck_assert_int_eq (sb_chan_arm (c, 3), 0);
    ck_assert_int_eq (sb_chan_push (c, "b", 2, 0), 0);
    ck_assert (!s_readable (fd));
    ck_assert_int_eq (sb_chan_push (c, "c", 2, 0), 0);
    ck_assert (s_readable (fd));
    ck_assert_int_eq (sb_chan_push (c, "d", 2, 0), 0);     /* no second write */
    /* the next arm reads the signal back */
    ck_assert_int_eq (sb_chan_arm (c, 5), 0);
    ck_assert (!s_readable (fd));
    /* an urgent push wakes whatever the count */
    ck_assert_int_eq (sb_chan_push (c, "e", 2, SB_CHAN_URGENT), 0);
    ck_assert (s_readable (fd));
    for (int i = 0; i < 5; i++) {
        sb_chan_msg_t *m = NULL;
        ck_assert_int_eq (sb_chan_take (c, &m, 0), 0);
        ck_assert_int_eq (m->data[0], 'a' + i);
        sb_chan_msg_free (m);
    }
    ck_assert_int_eq (sb_chan_arm (c, 1), 0);
    ck_assert (!s_readable (fd));
    ck_assert_int_eq (sb_chan_arm (c, 1), 0);     /* armed again: still nothing */
    ck_assert_int_eq (sb_chan_push (c, "f", 2, 0), 0);
    ck_assert (s_readable (fd));
    ck_assert_int_eq (sb_chan_arm (c, 1), 1);
    ck_assert (!s_readable (fd));
    sb_chan_msg_t *m = NULL;
    ck_assert_int_eq (sb_chan_take (c, &m, 0), 0);
    sb_chan_msg_free (m);
    /* an urgent push to a channel that is not armed does nothing to the fd */
    ck_assert_int_eq (sb_chan_push (c, "g", 2, SB_CHAN_URGENT), 0);
    ck_assert (!s_readable (fd));
    sb_chan_destroy (&c);
}
END_TEST

static void *
s_take_forever (void *arg)
{
    sb_chan_msg_t *m = NULL;
    int rc = sb_chan_take (arg, &m, -1);
    sb_chan_msg_free (m);
    return (void *) (intptr_t) rc;
}

/* A closed channel still gives what is queued, then every take returns 1
 * at once, and a thread waiting for ever wakes. */
START_TEST (test_close_wakes_takers)
{
    sb_chan_t *c = sb_chan_new (0);
    ck_assert_ptr_nonnull (c);
    pthread_t t;
    ck_assert_int_eq (pthread_create (&t, NULL, s_take_forever, c), 0);
    struct timespec d = { 0, 50000000 };
    nanosleep (&d, NULL);
    ck_assert_int_eq (sb_chan_push (c, "q", 2, 0), 0);
    void *rc = NULL;
    ck_assert_int_eq (pthread_join (t, &rc), 0);
    ck_assert_int_eq ((int) (intptr_t) rc, 0);      /* it took "q" */
    ck_assert_int_eq (pthread_create (&t, NULL, s_take_forever, c), 0);
    nanosleep (&d, NULL);
    ck_assert_int_eq (sb_chan_push (c, "r", 2, 0), 0);
    ck_assert_int_eq (pthread_join (t, &rc), 0);
    ck_assert_int_eq (sb_chan_push (c, "s", 2, 0), 0);
    ck_assert_int_eq (pthread_create (&t, NULL, s_take_forever, c), 0);
    ck_assert_int_eq (pthread_join (t, &rc), 0);
    ck_assert_int_eq ((int) (intptr_t) rc, 0);      /* "s" was there */
    ck_assert_int_eq (pthread_create (&t, NULL, s_take_forever, c), 0);
    nanosleep (&d, NULL);
    sb_chan_close (c);
    ck_assert_int_eq (pthread_join (t, &rc), 0);
    ck_assert_int_eq ((int) (intptr_t) rc, 1);      /* woken empty */
    ck_assert_int_eq (sb_chan_push (c, "t", 2, 0), 0);
    sb_chan_msg_t *m = NULL;
    ck_assert_int_eq (sb_chan_take (c, &m, -1), 0);
    ck_assert_str_eq ((const char *) m->data, "t");
    sb_chan_msg_free (m);
    double t0 = s_now ();
    ck_assert_int_eq (sb_chan_take (c, &m, -1), 1);
    ck_assert_int_eq (sb_chan_take (c, &m, 5000), 1);
    ck_assert (s_now () - t0 < 1.0);
    sb_chan_destroy (&c);
}
END_TEST

#define S_PRODUCERS 4
#define S_EACH 20000

static void *
s_produce (void *arg)
{
    sb_chan_t *c = arg;
    static int next_id;
    int id = __atomic_fetch_add (&next_id, 1, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < S_EACH; i++) {
        uint32_t v[2] = { (uint32_t) id, i };
        ck_assert_int_eq (sb_chan_push (c, v, sizeof v, 0), 0);
    }
    return NULL;
}

/* 4 threads push while a poll loop sleeps on the fd for 7 at a time:
 * every message arrives, each producer's in its order, and the loop never
 * sleeps with what it wants queued (it would hang here). */
START_TEST (test_many_producers_poll_loop)
{
    sb_chan_t *c = sb_chan_new (1);
    ck_assert_ptr_nonnull (c);
    pthread_t t[S_PRODUCERS];
    for (int i = 0; i < S_PRODUCERS; i++)
        ck_assert_int_eq (pthread_create (&t[i], NULL, s_produce, c), 0);
    uint32_t next[S_PRODUCERS] = { 0 };
    size_t got = 0, total = (size_t) S_PRODUCERS * S_EACH;
    while (got < total) {
        sb_chan_msg_t *m = NULL;
        while (sb_chan_take (c, &m, 0) == 0) {
            ck_assert_uint_eq (m->size, 2 * sizeof (uint32_t));
            uint32_t v[2];
            memcpy (v, m->data, sizeof v);
            ck_assert_uint_lt (v[0], S_PRODUCERS);
            ck_assert_uint_eq (v[1], next[v[0]]);
            next[v[0]]++;
            got++;
            sb_chan_msg_free (m);
        }
        size_t want = total - got < 7 ? total - got : 7;
        if (want == 0 || sb_chan_arm (c, want) == 1)
            continue;
        struct pollfd p = { .fd = sb_chan_fd (c), .events = POLLIN };
        ck_assert_int_eq (poll (&p, 1, 10000), 1);  /* never a sleep with the messages queued */
    }
    for (int i = 0; i < S_PRODUCERS; i++) {
        ck_assert_int_eq (pthread_join (t[i], NULL), 0);
        ck_assert_uint_eq (next[i], S_EACH);
    }
    ck_assert_uint_eq (sb_chan_count (c), 0);
    sb_chan_destroy (&c);
}
END_TEST

static Suite *
chan_suite (void)
{
    Suite *s = suite_create ("chan");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_order_and_bytes);
    tcase_add_test (tc, test_take_times_out);
    tcase_add_test (tc, test_take_waits_for_a_push);
    tcase_add_test (tc, test_armed_fd_wants_a_count);
    tcase_add_test (tc, test_close_wakes_takers);
    tcase_add_test (tc, test_many_producers_poll_loop);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (chan_suite)
