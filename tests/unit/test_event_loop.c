/* event_loop: the drain-then-wait rule on real ZeroMQ sockets (inproc and
 * ipc): every frame is drained, one that arrives while draining is not
 * lost, a frame whose signal a send consumed still ends the wait, a wait
 * returns on readiness and on its timeout. */
#include <check.h>
#include "check_main.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "event_loop.h"

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* A connected pair: local (receive timeout 0, as the loops set it) and
 * peer. endpoint names a fresh inproc:// or ipc:// address. */
static void
s_pair (int local_type, int peer_type, const char *endpoint, zsock_t **local, zsock_t **peer)
{
    *local = zsock_new (local_type);
    *peer = zsock_new (peer_type);
    ck_assert_ptr_nonnull (*local);
    ck_assert_ptr_nonnull (*peer);
    zsock_set_rcvtimeo (*local, 0);
    zsock_set_linger (*local, 0);
    zsock_set_linger (*peer, 0);
    ck_assert_int_ge (zsock_bind (*local, "%s", endpoint), 0);
    ck_assert_int_eq (zsock_connect (*peer, "%s", endpoint), 0);
}

/* What a receiver saw; peer, when set, sends one more frame after the
 * first is received (a frame arriving while the loop drains). */
typedef struct {
    zsock_t *sock;
    zsock_t *peer;
    int      received;
    char     last[32];
} s_drain_ctx_t;

static int
s_recv_one (void *arg)
{
    s_drain_ctx_t *c = arg;
    char *s = zstr_recv (c->sock);
    if (!s)
        return 0;
    snprintf (c->last, sizeof c->last, "%s", s);
    zstr_free (&s);
    if (c->received++ == 0 && c->peer)
        ck_assert_int_eq (zstr_send (c->peer, "late"), 0);
    return 1;
}

START_TEST (test_drain_all_then_nothing)
{
    zsock_t *a, *b;
    s_pair (ZMQ_PAIR, ZMQ_PAIR, "inproc://event-drain", &a, &b);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq (zstr_sendf (b, "m%d", i), 0);
    s_drain_ctx_t c = { .sock = a };
    ck_assert_uint_eq (sb_event_drain (s_recv_one, &c, 100), 3);
    ck_assert_str_eq (c.last, "m2");
    ck_assert_uint_eq (sb_event_drain (s_recv_one, &c, 100), 0);
    zsock_t *socks[1] = { a };
    ck_assert_int_eq (sb_event_queued (socks, 1), 0);
    zsock_destroy (&b);
    zsock_destroy (&a);
}
END_TEST

START_TEST (test_drain_stops_at_cap)
{
    zsock_t *a, *b;
    s_pair (ZMQ_PAIR, ZMQ_PAIR, "inproc://event-cap", &a, &b);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq (zstr_sendf (b, "m%d", i), 0);
    s_drain_ctx_t c = { .sock = a };
    ck_assert_uint_eq (sb_event_drain (s_recv_one, &c, 2), 2);     /* cap: frames may remain */
    zsock_t *socks[1] = { a };
    ck_assert_int_eq (sb_event_queued (socks, 1), 1);
    ck_assert_uint_eq (sb_event_drain (s_recv_one, &c, 100), 3);
    ck_assert_str_eq (c.last, "m4");
    zsock_destroy (&b);
    zsock_destroy (&a);
}
END_TEST

/* A frame that arrives while the loop drains is drained with the rest (and
 * so cannot be left queued behind a consumed ZMQ_FD signal). */
START_TEST (test_arrival_while_draining_not_lost)
{
    zsock_t *a, *b;
    char endpoint[64];      /* abstract ipc names are host-wide: one per process */
    snprintf (endpoint, sizeof endpoint, "ipc://@shardbench-event-late-%d", (int) getpid ());
    s_pair (ZMQ_PAIR, ZMQ_PAIR, endpoint, &a, &b);
    ck_assert_int_eq (zstr_send (b, "first"), 0);
    zsock_t *socks[1] = { a };
    s_drain_ctx_t c = { .sock = a, .peer = b };
    size_t n = 0;
    double t0 = s_now ();
    /* until both are in: ipc delivers in the background, and a ZMQ_FD
     * may wake without a frame; the late one either comes in the same
     * drain or ends a wait soon after */
    while (n < 2 && s_now () - t0 < 5) {
        n += sb_event_drain (s_recv_one, &c, 100);
        if (n < 2)
            ck_assert_int_ge (sb_event_wait (socks, 1, 1, 5.0), 0);
    }
    ck_assert (s_now () - t0 < 2.5);
    ck_assert_uint_eq (n, 2);
    ck_assert_str_eq (c.last, "late");
    zsock_destroy (&b);
    zsock_destroy (&a);
}
END_TEST

/* A frame arrives after the drain, then the loop sends on the socket
 * (which can consume the ZMQ_FD's signal of that frame): the wait must
 * still return at once. */
START_TEST (test_send_after_drain_does_not_hide_a_frame)
{
    zsock_t *dealer, *router;
    char endpoint[64];
    snprintf (endpoint, sizeof endpoint, "ipc://@shardbench-event-send-%d", (int) getpid ());
    s_pair (ZMQ_DEALER, ZMQ_ROUTER, endpoint, &dealer, &router);
    /* the ROUTER learns the dealer's identity from its first frame */
    ck_assert_int_eq (zstr_send (dealer, "hello"), 0);
    zmsg_t *hello = zmsg_recv (router);
    ck_assert_ptr_nonnull (hello);
    zframe_t *identity = zmsg_pop (hello);
    zmsg_destroy (&hello);
    s_drain_ctx_t c = { .sock = dealer };
    ck_assert_uint_eq (sb_event_drain (s_recv_one, &c, 100), 0);
    zmsg_t *reply = zmsg_new ();
    ck_assert_int_eq (zmsg_append (reply, &identity), 0);
    ck_assert_int_eq (zmsg_addstr (reply, "reply"), 0);
    ck_assert_int_eq (zmsg_send (&reply, router), 0);
    usleep (50000);     /* delivered to the dealer's queue, its signal raised */
    ck_assert_int_eq (zstr_send (dealer, "heartbeat"), 0);
    zsock_t *socks[1] = { dealer };
    double t0 = s_now ();
    ck_assert_int_ge (sb_event_wait (socks, 1, 1, 5.0), 1);
    ck_assert (s_now () - t0 < 2.5);
    ck_assert_uint_eq (sb_event_drain (s_recv_one, &c, 100), 1);
    ck_assert_str_eq (c.last, "reply");
    zsock_destroy (&router);
    zsock_destroy (&dealer);
}
END_TEST

static void *
s_send_later (void *arg)
{
    usleep (150000);
    ck_assert_int_eq (zstr_send ((zsock_t *) arg, "ready"), 0);
    return NULL;
}

/* The wait sleeps until a frame arrives on any of its sockets. */
START_TEST (test_wait_returns_on_readiness)
{
    zsock_t *a, *b, *quiet, *quiet_peer;
    s_pair (ZMQ_PAIR, ZMQ_PAIR, "inproc://event-quiet", &quiet, &quiet_peer);
    s_pair (ZMQ_PAIR, ZMQ_PAIR, "inproc://event-ready", &a, &b);
    s_drain_ctx_t c = { .sock = a }, q = { .sock = quiet };
    ck_assert_uint_eq (sb_event_drain (s_recv_one, &c, 100), 0);
    ck_assert_uint_eq (sb_event_drain (s_recv_one, &q, 100), 0);
    pthread_t t;
    ck_assert_int_eq (pthread_create (&t, NULL, s_send_later, b), 0);
    zsock_t *socks[2] = { quiet, a };
    double t0 = s_now ();
    int got = 0;
    /* a ZMQ_FD may wake without a frame: wait again until the frame is there */
    while (got == 0 && s_now () - t0 < 5) {
        ck_assert_int_ge (sb_event_wait (socks, 2, 2, 5.0), 0);
        got = (int) sb_event_drain (s_recv_one, &c, 100);
    }
    double waited = s_now () - t0;
    ck_assert_int_eq (pthread_join (t, NULL), 0);
    ck_assert_int_eq (got, 1);
    ck_assert_str_eq (c.last, "ready");
    ck_assert (waited >= 0.1 && waited < 2.5);
    zsock_destroy (&b);
    zsock_destroy (&a);
    zsock_destroy (&quiet_peer);
    zsock_destroy (&quiet);
}
END_TEST

/* Nothing arrives: the wait ends at its timeout, 0; a zero timeout does
 * not sleep. */
START_TEST (test_wait_times_out)
{
    zsock_t *a, *b;
    s_pair (ZMQ_PAIR, ZMQ_PAIR, "inproc://event-timeout", &a, &b);
    s_drain_ctx_t c = { .sock = a };
    ck_assert_uint_eq (sb_event_drain (s_recv_one, &c, 100), 0);
    zsock_t *socks[1] = { a };
    double t0 = s_now ();
    int rc = sb_event_wait (socks, 1, 1, 0.2);
    double waited = s_now () - t0;
    if (rc == 1 && sb_event_drain (s_recv_one, &c, 100) == 0)
        rc = sb_event_wait (socks, 1, 1, 0.2);      /* a spurious wake-up of the ZMQ_FD, once */
    ck_assert_int_eq (rc, 0);
    ck_assert (waited < 2.0);
    t0 = s_now ();
    ck_assert_int_ge (sb_event_wait (socks, 1, 1, 0), 0);
    ck_assert (s_now () - t0 < 0.5);
    zsock_destroy (&b);
    zsock_destroy (&a);
}
END_TEST

static Suite *
event_loop_suite (void)
{
    Suite *s = suite_create ("event_loop");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_drain_all_then_nothing);
    tcase_add_test (tc, test_drain_stops_at_cap);
    tcase_add_test (tc, test_arrival_while_draining_not_lost);
    tcase_add_test (tc, test_send_after_drain_does_not_hide_a_frame);
    tcase_add_test (tc, test_wait_returns_on_readiness);
    tcase_add_test (tc, test_wait_times_out);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (event_loop_suite)
