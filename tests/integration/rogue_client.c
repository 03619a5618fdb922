/* rogue_client: sends a coordinator every kind of bad frame and checks that
 * each is refused with a REJECT that says why (or, for a frame over
 * ZMQ_MAXMSGSIZE, that the connection is dropped without an answer), and
 * that the coordinator still answers afterwards.
 *
 * usage: rogue_client ENDPOINT
 * Prints "ok - KIND: REASON" or "FAIL - KIND: ..." per frame; exits 0 when
 * every frame got the expected answer, 1 otherwise, 2 on a usage error.
 * Frames the coordinator counts as rejected: 6 (every kind but "oversized
 * frame", which ZeroMQ drops before the coordinator sees it). */
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

#define S_REPLY_TIMEOUT_MS 5000

static int s_failures;

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
    uint8_t *data = NULL;
    if (sb_proto_encode (&m, &data, size) != 0) {
        fprintf (stderr, "rogue_client: cannot encode HELLO\n");
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
    if (argc != 2) {
        fprintf (stderr, "usage: rogue_client ENDPOINT\n");
        return 2;
    }
    const char *endpoint = argv[1];
    zsys_init ();
    zsys_set_logstream (NULL);

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

    hello = s_hello (SB_PROTO_VERSION - 1, "rogue", &size);
    char expect[128];
    snprintf (expect, sizeof expect, "coordinator speaks protocol version %d, you sent version %d", SB_PROTO_VERSION,
              SB_PROTO_VERSION - 1);
    s_one (endpoint, "other version", hello, size, expect);
    free (hello);

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
