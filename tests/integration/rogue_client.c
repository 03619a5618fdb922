/* rogue_client: sends a coordinator every kind of bad frame and checks that
 * each is refused with a REJECT that says why (or, for a frame over
 * ZMQ_MAXMSGSIZE, that the connection is dropped without an answer), and
 * that the coordinator still answers afterwards.
 *
 * usage: rogue_client ENDPOINT
 * Prints "ok - KIND: REASON" or "FAIL - KIND: ..." per frame; exits 0 when
 * every frame got the expected answer, 1 otherwise, 2 on a usage error.
 * Frames the coordinator counts as rejected: 6 (every kind but "oversized
 * frame", which ZeroMQ drops before the coordinator sees it).
 *
 * A hostile worker, one act each:
 *   rogue_client ENDPOINT hello HOST VERSION   HELLO of that protocol version
 *       naming that host; prints the answer ("REJECT: reason", "WELCOME:
 *       worker N"); exits 0 on an answer, 1 without one
 *   rogue_client ENDPOINT hello-fields HOST    HELLO of this version with 5
 *       fields (another build's layout); prints the answer as hello does
 *   rogue_client ENDPOINT error TEXT           joins as host rogue-err, says
 *       READY, and at the first PHASE_START sends ERROR with TEXT as its
 *       message; prints the ABORT that follows ("ABORT" only)
 *   rogue_client ENDPOINT ready-other          joins twice, as impostor then
 *       owner; the impostor sends READY with the owner's id, then the owner
 *       its own READY; waits for the ABORT (join timeout) */
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

#include <msgpack.h>

#define S_REPLY_TIMEOUT_MS 5000

static int s_failures;

/* m encoded as protocol version `version` says it (the layout of this one). */
static uint8_t *
s_encode (const sb_msg_t *m, uint64_t version, size_t *size)
{
    uint8_t *data = NULL;
    if (sb_proto_encode (m, &data, size) != 0) {
        fprintf (stderr, "rogue_client: cannot encode %s\n", sb_proto_type_name (m->type));
        exit (2);
    }
    if (version != SB_PROTO_VERSION) {
        /* [version, type, body]: the version is the positive fixint after 0x93 */
        if (data[0] != 0x93 || data[1] != SB_PROTO_VERSION || version > 0x7f) {
            fprintf (stderr, "rogue_client: unexpected HELLO encoding\n");
            exit (2);
        }
        data[1] = (uint8_t) version;
    }
    return data;
}

/* A valid HELLO of protocol version `version` with this host name, encoded. */
static uint8_t *
s_hello (uint64_t version, const char *host, size_t *size)
{
    sb_msg_t m = { .type = SB_MSG_HELLO };
    m.u.hello.host = (char *) host;
    m.u.hello.pid = 1;
    m.u.hello.cores = 1;
    m.u.hello.memory = 1;
    m.u.hello.software = "rogue_client";
    return s_encode (&m, version, size);
}

/* Send m on dealer; exits 2 when it cannot. */
static void
s_send (zsock_t *dealer, const sb_msg_t *m)
{
    size_t size = 0;
    uint8_t *data = s_encode (m, SB_PROTO_VERSION, &size);
    zframe_t *f = zframe_new (data, size);
    free (data);
    if (!f || zframe_send (&f, dealer, 0) != 0) {
        fprintf (stderr, "rogue_client: cannot send %s\n", sb_proto_type_name (m->type));
        exit (2);
    }
}

/* The next message other than HEARTBEAT within timeout_ms into *m; 0, or
 * -1 when none came (or it did not decode). */
static int
s_recv (zsock_t *dealer, sb_msg_t *m, int timeout_ms)
{
    zsock_set_rcvtimeo (dealer, timeout_ms);
    for (;;) {
        zframe_t *f = zframe_recv (dealer);
        if (!f)
            return -1;
        char why[256];
        sb_proto_status_t st = sb_proto_decode (zframe_data (f), zframe_size (f), m, why, sizeof why, NULL);
        zframe_destroy (&f);
        if (st != SB_PROTO_OK)
            return -1;
        if (m->type != SB_MSG_HEARTBEAT)
            return 0;
        sb_proto_fini (m);
    }
}

/* A DEALER that said HELLO as host and got its WELCOME (id in *worker, first rank in *rank). */
static zsock_t *
s_join (const char *endpoint, const char *host, uint64_t *worker, uint64_t *rank)
{
    zsock_t *dealer = zsock_new_dealer (endpoint);
    if (!dealer)
        exit (2);
    zsock_set_linger (dealer, 0);
    sb_msg_t hello = { .type = SB_MSG_HELLO };
    hello.u.hello.host = (char *) host;
    hello.u.hello.pid = 1;
    hello.u.hello.cores = 1;
    hello.u.hello.memory = 1;
    hello.u.hello.software = "rogue_client";
    s_send (dealer, &hello);
    sb_msg_t m;
    if (s_recv (dealer, &m, S_REPLY_TIMEOUT_MS) != 0 || m.type != SB_MSG_WELCOME) {
        printf ("%s: no WELCOME\n", host);
        exit (1);
    }
    *worker = m.u.welcome.worker;
    *rank = m.u.welcome.first_rank;
    sb_proto_fini (&m);
    return dealer;
}

static void
s_ready (zsock_t *dealer, uint64_t worker)
{
    sb_msg_t r = { .type = SB_MSG_READY };
    r.u.ready.worker = worker;
    r.u.ready.welcome_received_at = zclock_time () / 1000.0;
    r.u.ready.sent_at = r.u.ready.welcome_received_at;
    s_send (dealer, &r);
}

/* Wait for the coordinator's ABORT (it ends the run); 0 when it came. */
static int
s_await_abort (zsock_t *dealer, int timeout_ms)
{
    sb_msg_t m;
    int64_t until = zclock_mono () + timeout_ms;
    while (zclock_mono () < until) {
        if (s_recv (dealer, &m, (int) (until - zclock_mono ())) != 0)
            return -1;
        int abort = m.type == SB_MSG_ABORT;
        sb_proto_fini (&m);
        if (abort) {
            printf ("ABORT\n");
            return 0;
        }
    }
    return -1;
}

static int
s_act (const char *endpoint, int argc, char **argv)
{
    const char *act = argv[2];
    if (!strcmp (act, "hello") && argc == 5) {
        zsock_t *dealer = zsock_new_dealer (endpoint);
        if (!dealer)
            return 2;
        zsock_set_linger (dealer, 0);
        size_t size = 0;
        uint8_t *data = s_hello (strtoull (argv[4], NULL, 10), argv[3], &size);
        zframe_t *f = zframe_new (data, size);
        free (data);
        if (!f || zframe_send (&f, dealer, 0) != 0)
            return 2;
        sb_msg_t m;
        int rc = s_recv (dealer, &m, S_REPLY_TIMEOUT_MS);
        if (rc == 0 && m.type == SB_MSG_REJECT)
            printf ("REJECT: %s\n", m.u.reject.reason);
        else if (rc == 0 && m.type == SB_MSG_WELCOME)
            printf ("WELCOME: worker %llu\n", (unsigned long long) m.u.welcome.worker);
        else if (rc == 0)
            printf ("%s\n", sb_proto_type_name (m.type));
        if (rc == 0)
            sb_proto_fini (&m);
        zsock_destroy (&dealer);
        return rc == 0 ? 0 : 1;
    }
    if (!strcmp (act, "hello-fields") && argc == 4) {
        /* this protocol version, a HELLO of 5 fields (an older build's
         * layout under the same version number) */
        msgpack_sbuffer sb;
        msgpack_sbuffer_init (&sb);
        msgpack_packer pk;
        msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
        msgpack_pack_array (&pk, 3);
        msgpack_pack_uint64 (&pk, SB_PROTO_VERSION);
        msgpack_pack_uint64 (&pk, SB_MSG_HELLO);
        msgpack_pack_array (&pk, 5);
        msgpack_pack_str_with_body (&pk, argv[3], strlen (argv[3]));
        msgpack_pack_uint64 (&pk, 1);
        msgpack_pack_uint64 (&pk, 1);
        msgpack_pack_uint64 (&pk, 1);
        msgpack_pack_str_with_body (&pk, "shardbench-worker 0.0.9", 23);
        zsock_t *dealer = zsock_new_dealer (endpoint);
        if (!dealer)
            return 2;
        zsock_set_linger (dealer, 0);
        zframe_t *f = zframe_new (sb.data, sb.size);
        msgpack_sbuffer_destroy (&sb);
        if (!f || zframe_send (&f, dealer, 0) != 0)
            return 2;
        sb_msg_t m;
        int rc = s_recv (dealer, &m, S_REPLY_TIMEOUT_MS);
        if (rc == 0)
            printf ("%s: %s\n", sb_proto_type_name (m.type), m.type == SB_MSG_REJECT ? m.u.reject.reason : "");
        if (rc == 0)
            sb_proto_fini (&m);
        zsock_destroy (&dealer);
        return rc == 0 ? 0 : 1;
    }
    if (!strcmp (act, "error") && argc == 4) {
        uint64_t worker, rank;
        zsock_t *dealer = s_join (endpoint, "rogue-err", &worker, &rank);
        s_ready (dealer, worker);
        sb_msg_t m;
        int started = 0;
        while (!started && s_recv (dealer, &m, 30000) == 0) {
            started = m.type == SB_MSG_PHASE_START;
            sb_proto_fini (&m);
        }
        if (!started) {
            printf ("no PHASE_START\n");
            return 1;
        }
        sb_msg_t e = { .type = SB_MSG_ERROR };
        e.u.error.rank = (int64_t) rank;
        e.u.error.op = "read";
        e.u.error.target = "train/img_0_of_8.npz";
        e.u.error.errno_val = 5;
        e.u.error.message = argv[3];
        e.u.error.endpoint = "";
        e.u.error.service_code = "";
        s_send (dealer, &e);
        int rc = s_await_abort (dealer, 30000);
        zsock_destroy (&dealer);
        return rc == 0 ? 0 : 1;
    }
    if (!strcmp (act, "ready-other") && argc == 3) {
        uint64_t imp_id, owner_id, rank;
        zsock_t *impostor = s_join (endpoint, "impostor", &imp_id, &rank);
        zsock_t *owner = s_join (endpoint, "owner", &owner_id, &rank);
        s_ready (impostor, owner_id);
        zclock_sleep (200);     /* the impostor's first */
        s_ready (owner, owner_id);
        int rc = s_await_abort (impostor, 60000);
        zsock_destroy (&impostor);
        zsock_destroy (&owner);
        return rc == 0 ? 0 : 1;
    }
    fprintf (stderr, "usage: rogue_client ENDPOINT [hello HOST VERSION | hello-fields HOST | error TEXT | ready-other]\n");
    return 2;
}

/* Send the frames (one ZeroMQ message of nframes parts) on a new DEALER and
 * wait for the answer. expect: the REJECT reason, or NULL for "no answer,
 * the connection is dropped". */
static void
s_case (const char *endpoint, const char *kind, const uint8_t **frames, const size_t *sizes, int nframes,
        const char *expect)
{
    zsock_t *dealer = zsock_new_dealer (endpoint);
    if (!dealer) {
        printf ("FAIL - %s: cannot connect to %s\n", kind, endpoint);
        s_failures++;
        return;
    }
    zsock_set_linger (dealer, 0);
    zsock_set_rcvtimeo (dealer, expect ? S_REPLY_TIMEOUT_MS : 1000);
    zmsg_t *zm = zmsg_new ();
    for (int i = 0; i < nframes; i++)
        zmsg_addmem (zm, frames[i], sizes[i]);
    if (zmsg_send (&zm, dealer) != 0) {
        printf ("FAIL - %s: cannot send\n", kind);
        s_failures++;
        zmsg_destroy (&zm);
        zsock_destroy (&dealer);
        return;
    }
    zmsg_t *reply = zmsg_recv (dealer);
    if (!reply) {
        if (expect) {
            printf ("FAIL - %s: no REJECT within %d ms\n", kind, S_REPLY_TIMEOUT_MS);
            s_failures++;
        }
        else
            printf ("ok - %s: no answer (dropped by ZeroMQ)\n", kind);
        zsock_destroy (&dealer);
        return;
    }
    zframe_t *f = zmsg_first (reply);
    sb_msg_t m;
    char why[256] = "";
    sb_proto_status_t st = f && zmsg_size (reply) == 1
        ? sb_proto_decode (zframe_data (f), zframe_size (f), &m, why, sizeof why, NULL) : SB_PROTO_EMALFORMED;
    if (!expect)
        printf ("FAIL - %s: expected no answer, got one\n", kind), s_failures++;
    else if (st != SB_PROTO_OK || m.type != SB_MSG_REJECT)
        printf ("FAIL - %s: expected REJECT, got %s\n", kind, st == SB_PROTO_OK ? sb_proto_type_name (m.type) : why),
            s_failures++;
    else if (strcmp (m.u.reject.reason, expect) != 0)
        printf ("FAIL - %s: REJECT '%s', expected '%s'\n", kind, m.u.reject.reason, expect), s_failures++;
    else
        printf ("ok - %s: %s\n", kind, m.u.reject.reason);
    if (st == SB_PROTO_OK)
        sb_proto_fini (&m);
    zmsg_destroy (&reply);
    zsock_destroy (&dealer);
}

static void
s_one (const char *endpoint, const char *kind, const void *data, size_t size, const char *expect)
{
    const uint8_t *frames[1] = { data };
    size_t sizes[1] = { size };
    s_case (endpoint, kind, frames, sizes, 1, expect);
}

int
main (int argc, char **argv)
{
    if (argc < 2) {
        fprintf (stderr, "usage: rogue_client ENDPOINT [hello HOST VERSION | hello-fields HOST | error TEXT | ready-other]\n");
        return 2;
    }
    const char *endpoint = argv[1];
    zsys_init ();
    zsys_set_logstream (NULL);
    if (argc > 2)
        return s_act (endpoint, argc, argv);

    /* larger than ZMQ_MAXMSGSIZE: the coordinator's ZeroMQ closes the
     * connection; it never reaches (nor is counted by) the coordinator */
    size_t huge_size = (size_t) SB_PROTO_MAX_FRAME + 1;
    uint8_t *huge = calloc (1, huge_size);
    if (!huge)
        return 2;
    s_one (endpoint, "oversized frame", huge, huge_size, NULL);
    free (huge);

    const char *http = "GET / HTTP/1.1\r\n\r\n";
    s_one (endpoint, "garbage", http, strlen (http), "frame rejected: 17 trailing bytes after the message");

    s_one (endpoint, "empty frame", "", 0, "frame rejected: empty frame");

    size_t size = 0;
    uint8_t *hello = s_hello (SB_PROTO_VERSION, "rogue", &size);
    s_one (endpoint, "truncated", hello, size / 2, "frame rejected: not a complete, bounded msgpack object");

    const uint8_t *two[2] = { hello, hello };
    size_t two_sizes[2] = { size, size };
    s_case (endpoint, "two frames", two, two_sizes, 2, "frame rejected: 2 frames, expected 1");
    free (hello);

    /* not a HELLO: a HELLO of another version fails the run (test_peers) */
    sb_msg_t hb = { .type = SB_MSG_HEARTBEAT };
    uint8_t *other = s_encode (&hb, SB_PROTO_VERSION - 1, &size);
    char expect[128];
    snprintf (expect, sizeof expect, "coordinator speaks protocol version %d, you sent version %d", SB_PROTO_VERSION,
              SB_PROTO_VERSION - 1);
    s_one (endpoint, "other version", other, size, expect);
    free (other);

    char long_host[SB_PROTO_MAX_STR + 2];
    memset (long_host, 'h', sizeof long_host - 1);
    long_host[sizeof long_host - 1] = '\0';
    hello = s_hello (SB_PROTO_VERSION, long_host, &size);
    snprintf (expect, sizeof expect, "frame rejected: HELLO.host: string of %d bytes exceeds %d", SB_PROTO_MAX_STR + 1,
              SB_PROTO_MAX_STR);
    s_one (endpoint, "oversized field", hello, size, expect);
    free (hello);

    printf ("%s\n", s_failures ? "rogue_client: FAILED" : "rogue_client: every bad frame refused");
    return s_failures ? 1 : 0;
}
