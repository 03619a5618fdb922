/* security: which endpoints are local, key directories, and the errors
 * that name a missing certificate. */
#include <check.h>
#include "check_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "security.h"

START_TEST (test_endpoint_is_local)
{
    static const struct { const char *endpoint; int local; } cases[] = {
        { "tcp://127.0.0.1:5555", 1 }, { "tcp://127.0.0.1:*", 1 }, { "tcp://127.12.0.9:80", 1 },
        { "tcp://localhost:5555", 1 }, { "tcp://[::1]:5555", 1 }, { "ipc:///tmp/sb.sock", 1 },
        { "inproc://x", 1 }, { "tcp://*:5555", 0 }, { "tcp://0.0.0.0:5555", 0 }, { "tcp://10.0.0.1:5555", 0 },
        { "tcp://eth0:5555", 0 }, { "tcp://127.0.0.1.evil:5555", 0 }, { "tcp://1270.0.0.1:5555", 0 },
        { "tcp://127.0.0.1;10.0.0.1:5555", 0 }, { "udp://127.0.0.1:5555", 0 }, { "tcp://[::]:5555", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg (sb_endpoint_is_local (cases[i].endpoint) == cases[i].local, "%s", cases[i].endpoint);
}
END_TEST

static int s_notes;

static void
s_note (const char *path, void *ctx)
{
    s_notes++;
}

START_TEST (test_keys)
{
    char dir[64] = "/tmp/sbkeysXXXXXX", path[128], err[512];
    ck_assert_ptr_nonnull (mkdtemp (dir));
    s_notes = 0;
    ck_assert_int_eq (sb_keys_create (dir, "worker", s_note, NULL, err, sizeof err), 0);
    ck_assert_int_eq (s_notes, 3);  /* coordinator.cert, worker.cert, allowed/worker.cert */
    ck_assert_int_eq (sb_keys_create (dir, "worker", s_note, NULL, err, sizeof err), 0);
    ck_assert_int_eq (s_notes, 3);  /* nothing replaced */
    ck_assert_int_eq (sb_keys_create (dir, "../x", NULL, NULL, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "invalid certificate name"));

    /* a client and a server that hold their certificates */
    zsock_t *router = zsock_new (ZMQ_ROUTER), *dealer = zsock_new (ZMQ_DEALER);
    zactor_t *auth = NULL;
    ck_assert_int_eq (sb_curve_server (router, dir, &auth, err, sizeof err), 0);
    ck_assert_ptr_nonnull (auth);
    ck_assert_int_eq (zsock_curve_server (router), 1);
    ck_assert_int_eq (sb_curve_client (dealer, dir, NULL, err, sizeof err), 0);
    ck_assert_int_eq (sb_curve_client (dealer, dir, "nobody", err, sizeof err), -1);
    snprintf (path, sizeof path, "no certificate %s/nobody.cert ", dir);
    ck_assert_msg (strstr (err, path) != NULL, "%s", err);

    /* a server without its secret half says which file is missing */
    snprintf (path, sizeof path, "%s/coordinator.cert_secret", dir);
    ck_assert_int_eq (unlink (path), 0);
    zactor_t *auth2 = NULL;
    zsock_t *router2 = zsock_new (ZMQ_ROUTER);
    ck_assert_int_eq (sb_curve_server (router2, dir, &auth2, err, sizeof err), -1);
    ck_assert_ptr_null (auth2);
    ck_assert_msg (strstr (err, path) != NULL, "%s", err);
    zsock_destroy (&router2);
    zsock_destroy (&dealer);
    zsock_destroy (&router);
    zactor_destroy (&auth);

    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq (system (cmd), 0);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("security");
    TCase *tc = tcase_create ("security");
    tcase_add_test (tc, test_endpoint_is_local);
    tcase_add_test (tc, test_keys);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
