/* wire: protocol messages over real ZeroMQ sockets (lib/proto/wire.h).
 * tests/unit/test_proto.c covers the codec on byte buffers; this covers
 * what the sockets add: every message type with extreme field values over
 * ROUTER/DEALER on ipc and PAIR on inproc, frames that are not one message
 * (several, empty, truncated, garbage, another version) refused without
 * losing the next good one, a receive that times out, a send that would
 * exceed the peer's limit, sb_wire_configure's options and their effect,
 * the SHARDBENCH_WIRE_TRACE records byte by byte, and sb_wire_wait_s. */
#include <check.h>
#include "check_main.h"
#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"
#include "wire.h"

/* ------------------------------------------------------------ helpers */

/* A scratch folder (caller removes it). ipc paths must fit in 107 bytes:
 * TMPDIR when it is short, else /tmp. */
static void
s_scratch (char *dir, size_t size)
{
    const char *tmp = getenv ("TMPDIR");
    if (!tmp || !*tmp || strlen (tmp) > 60)
        tmp = "/tmp";
    ck_assert_int_lt (snprintf (dir, size, "%s/sb-wire-XXXXXX", tmp), (int) size);
    ck_assert_ptr_nonnull (mkdtemp (dir));
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* A connected inproc PAIR; name must be unique in the process. */
static void
s_pair (const char *name, zsock_t **a, zsock_t **b)
{
    char ep[128];
    snprintf (ep, sizeof ep, "inproc://test-wire-%s", name);
    *a = zsock_new (ZMQ_PAIR);
    *b = zsock_new (ZMQ_PAIR);
    ck_assert_ptr_nonnull (*a);
    ck_assert_ptr_nonnull (*b);
    sb_wire_configure (*a, 0);
    sb_wire_configure (*b, 0);
    ck_assert_int_eq (zsock_bind (*a, "%s", ep), 0);
    ck_assert_int_eq (zsock_connect (*b, "%s", ep), 0);
}

/* Receive with a limit (ms): the status; *interrupted says it timed out. */
static sb_proto_status_t
s_recv (zsock_t *sock, zframe_t **identity, sb_msg_t *m, char *reason, size_t size, uint64_t *version,
        int *interrupted, int timeout_ms)
{
    zsock_set_rcvtimeo (sock, timeout_ms);
    return sb_wire_recv (sock, identity, m, reason, size, version, interrupted);
}

/* Send raw frames (not encoded by the codec), as a broken peer would. */
static void
s_send_raw (zsock_t *sock, const void *const *frames, const size_t *sizes, size_t n)
{
    zmsg_t *m = zmsg_new ();
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq (zmsg_addmem (m, frames[i], sizes[i]), 0);
    ck_assert_int_eq (zmsg_send (&m, sock), 0);
}

/* Receive until nothing is left (EAGAIN): the ZMQ_FD contract of
 * sb_wire_wait_s. Returns the messages dropped. */
static int
s_drain (zsock_t *sock)
{
    int n = 0;
    while (zsock_events (sock) & ZMQ_POLLIN) {
        zmsg_t *m = zmsg_recv (sock);
        zmsg_destroy (&m);
        n++;
    }
    return n;
}

/* Extreme values for every field kind: derived from a counter so that two
 * fields of one message differ. */
static void fill_U64 (uint64_t *f, int *n) { *f = (*n)++ % 2 ? UINT64_MAX - (uint64_t) *n : (uint64_t) *n; }
static void fill_I64 (int64_t *f, int *n) { *f = (*n)++ % 2 ? INT64_MIN + *n : -(int64_t) *n; }
static void fill_F64 (double *f, int *n) { *f = (*n)++ % 2 ? -1.5e300 / *n : 4.9e-324 * *n; }
static void
fill_STR (char **f, int *n)
{
    int k = (*n)++;
    /* empty, NUL-free UTF-8, and a long one, in turn */
    if (k % 3 == 0)
        *f = strdup ("");
    else if (k % 3 == 1) {
        char b[64];
        snprintf (b, sizeof b, "ключ-%d-\xe2\x82\xac-\xf0\x9f\x98\x80", k);
        *f = strdup (b);
    }
    else {
        *f = malloc (5001);
        memset (*f, 'a' + k % 26, 5000);
        (*f)[5000] = '\0';
    }
}
static void
fill_U64S (sb_u64s_t *f, int *n)
{
    int k = (*n)++;
    f->count = k % 2 ? 0 : 1000;
    f->items = f->count ? malloc (f->count * sizeof (uint64_t)) : NULL;
    for (size_t i = 0; i < f->count; i++)
        f->items[i] = i % 2 ? UINT64_MAX - i : i << 33;
}
static void
fill_STRS (sb_strs_t *f, int *n)
{
    f->count = 3;
    f->items = malloc (3 * sizeof (char *));
    for (int i = 0; i < 3; i++)
        fill_STR (&f->items[i], n);
}
static void same_U64 (const uint64_t *a, const uint64_t *b) { ck_assert_uint_eq (*a, *b); }
static void same_I64 (const int64_t *a, const int64_t *b) { ck_assert_int_eq (*a, *b); }
static void same_F64 (const double *a, const double *b) { ck_assert_int_eq (memcmp (a, b, sizeof *a), 0); }
static void same_STR (char *const *a, char *const *b) { ck_assert_str_eq (*a, *b); }
static void
same_U64S (const sb_u64s_t *a, const sb_u64s_t *b)
{
    ck_assert_uint_eq (a->count, b->count);
    for (size_t i = 0; i < a->count; i++)
        ck_assert_uint_eq (a->items[i], b->items[i]);
}
static void
same_STRS (const sb_strs_t *a, const sb_strs_t *b)
{
    ck_assert_uint_eq (a->count, b->count);
    for (size_t i = 0; i < a->count; i++)
        ck_assert_str_eq (a->items[i], b->items[i]);
}

static void
s_fill (sb_msg_t *m, int type)
{
    int n = 0;
    memset (m, 0, sizeof *m);
    m->type = type;
    switch (type) {
#define SB_MSG(name, NAME, id, doc) case id: {
#define SB_FIELD(name, KIND, field) fill_##KIND (&m->u.name.field, &n);
#define SB_END(name) break; }
#include "messages.def"
#undef SB_MSG
#undef SB_FIELD
#undef SB_END
    }
}

static void
s_same (const sb_msg_t *a, const sb_msg_t *b)
{
    ck_assert_int_eq (a->type, b->type);
    switch (a->type) {
#define SB_MSG(name, NAME, id, doc) case id: {
#define SB_FIELD(name, KIND, field) same_##KIND (&a->u.name.field, &b->u.name.field);
#define SB_END(name) break; }
#include "messages.def"
#undef SB_MSG
#undef SB_FIELD
#undef SB_END
    default: ck_abort_msg ("unknown type %d", a->type);
    }
}

static const int s_types[] = {
#define SB_MSG(name, NAME, id, doc) id,
#define SB_FIELD(name, KIND, field)
#define SB_END(name)
#include "messages.def"
#undef SB_MSG
#undef SB_FIELD
#undef SB_END
};
#define S_NTYPES ((int) (sizeof s_types / sizeof s_types[0]))

/* A valid GO frame's bytes (caller frees). */
static uint8_t *
s_go_bytes (uint64_t epoch, size_t *size)
{
    sb_msg_t go = { .type = SB_MSG_GO };
    go.u.go.epoch = epoch;
    go.u.go.step = 2;
    uint8_t *data = NULL;
    ck_assert_int_eq (sb_proto_encode (&go, &data, size), 0);
    return data;
}

/* ------------------------------------------------------------ tests */

/* Every message type, extreme values in every field kind, both ways over
 * ROUTER/DEALER on ipc: the DEALER's message arrives with its identity,
 * the reply sent to that identity arrives at the DEALER, equal field by
 * field (doubles bit for bit). */
START_TEST (test_every_type_router_dealer_ipc)
{
    char dir[PATH_MAX];
    s_scratch (dir, sizeof dir);
    char ep[PATH_MAX];
    snprintf (ep, sizeof ep, "ipc://%s/sock", dir);
    zsock_t *router = zsock_new (ZMQ_ROUTER), *dealer = zsock_new (ZMQ_DEALER);
    ck_assert_ptr_nonnull (router);
    ck_assert_ptr_nonnull (dealer);
    sb_wire_configure (router, 0);
    sb_wire_configure (dealer, 0);
    zsock_set_identity (dealer, "worker-7");
    ck_assert_int_eq (zsock_bind (router, "%s", ep), 0);
    ck_assert_int_eq (zsock_connect (dealer, "%s", ep), 0);

    for (int i = 0; i < S_NTYPES; i++) {
        sb_msg_t in, out, back;
        s_fill (&in, s_types[i]);
        ck_assert_int_eq (sb_wire_send (dealer, NULL, &in), 0);
        zframe_t *id = NULL;
        char reason[256] = "";
        uint64_t version = 0;
        int interrupted = -1;
        ck_assert_int_eq (s_recv (router, &id, &out, reason, sizeof reason, &version, &interrupted, 5000), SB_PROTO_OK);
        ck_assert_int_eq (interrupted, 0);
        ck_assert_uint_eq (version, SB_PROTO_VERSION);
        ck_assert_ptr_nonnull (id);
        ck_assert (zframe_streq (id, "worker-7"));
        s_same (&in, &out);
        /* the reply goes to that identity; identity stays the caller's */
        ck_assert_int_eq (sb_wire_send (router, id, &out), 0);
        ck_assert (zframe_streq (id, "worker-7"));
        zframe_destroy (&id);
        ck_assert_int_eq (s_recv (dealer, NULL, &back, reason, sizeof reason, NULL, &interrupted, 5000), SB_PROTO_OK);
        s_same (&in, &back);
        sb_proto_fini (&in);
        sb_proto_fini (&out);
        sb_proto_fini (&back);
    }
    zsock_destroy (&dealer);
    zsock_destroy (&router);
    sb_check_remove_tree (dir);
}
END_TEST

/* A NULL string field travels as "" (the codec's rule, through sockets). */
START_TEST (test_null_string_is_empty)
{
    zsock_t *a, *b;
    s_pair ("null", &a, &b);
    sb_msg_t in = { .type = SB_MSG_ERROR }, out;
    in.u.error.rank = -1;
    in.u.error.errno_val = ENOSPC;
    in.u.error.http_status = 503;
    ck_assert_int_eq (sb_wire_send (a, NULL, &in), 0);
    char reason[128];
    int interrupted;
    ck_assert_int_eq (s_recv (b, NULL, &out, reason, sizeof reason, NULL, &interrupted, 5000), SB_PROTO_OK);
    ck_assert_int_eq (out.type, SB_MSG_ERROR);
    ck_assert_int_eq (out.u.error.rank, -1);
    ck_assert_int_eq (out.u.error.errno_val, ENOSPC);
    ck_assert_int_eq (out.u.error.http_status, 503);
    ck_assert_str_eq (out.u.error.op, "");
    ck_assert_str_eq (out.u.error.message, "");
    ck_assert_str_eq (out.u.error.service_code, "");
    ck_assert_int_eq (out.u.error.library_code, 0);
    sb_proto_fini (&out);
    zsock_destroy (&a);
    zsock_destroy (&b);
}
END_TEST

/* Bad frames from a peer: each is refused with a status and a reason, the
 * message is left empty, and the next good message on the socket still
 * arrives (nothing is left half read). */
START_TEST (test_bad_frames_then_good)
{
    zsock_t *a, *b;
    s_pair ("bad", &a, &b);
    size_t go_size;
    uint8_t *go = s_go_bytes (5, &go_size);
    char reason[256];
    uint64_t version;
    int interrupted;
    sb_msg_t m;

    /* two frames */
    const void *two[] = { go, go };
    const size_t two_sizes[] = { go_size, go_size };
    s_send_raw (a, two, two_sizes, 2);
    ck_assert_int_eq (s_recv (b, NULL, &m, reason, sizeof reason, &version, &interrupted, 5000), SB_PROTO_EMALFORMED);
    ck_assert_str_eq (reason, "2 frames, expected 1");
    ck_assert_int_eq (m.type, SB_MSG_NONE);
    ck_assert_int_eq (interrupted, 0);

    /* an empty frame */
    const void *empty[] = { "" };
    const size_t empty_size[] = { 0 };
    s_send_raw (a, empty, empty_size, 1);
    ck_assert_int_eq (s_recv (b, NULL, &m, reason, sizeof reason, &version, &interrupted, 5000), SB_PROTO_EMALFORMED);
    ck_assert_str_eq (reason, "empty frame");
    ck_assert_int_eq (m.type, SB_MSG_NONE);

    /* every truncation of a valid GO */
    for (size_t cut = 1; cut < go_size; cut++) {
        const void *f[] = { go };
        const size_t s[] = { cut };
        s_send_raw (a, f, s, 1);
        ck_assert_int_eq (s_recv (b, NULL, &m, reason, sizeof reason, &version, &interrupted, 5000),
                          SB_PROTO_EMALFORMED);
        ck_assert_str_eq (reason, "not a complete, bounded msgpack object");
        ck_assert_int_eq (m.type, SB_MSG_NONE);
    }

    /* garbage: an HTTP request line */
    const char *http = "GET / HTTP/1.1\r\n\r\n";
    const void *g[] = { http };
    const size_t gs[] = { strlen (http) };
    s_send_raw (a, g, gs, 1);
    ck_assert_int_ne (s_recv (b, NULL, &m, reason, sizeof reason, &version, &interrupted, 5000), SB_PROTO_OK);
    ck_assert_int_eq (m.type, SB_MSG_NONE);
    ck_assert_str_ne (reason, "");

    /* another protocol version: refused, its version reported */
    uint8_t *other = malloc (go_size);
    memcpy (other, go, go_size);
    ck_assert_int_eq (other[1], SB_PROTO_VERSION);     /* [fixarray 3, version, ...] */
    other[1] = SB_PROTO_VERSION + 1;
    const void *o[] = { other };
    s_send_raw (a, o, &go_size, 1);
    version = 0;
    ck_assert_int_eq (s_recv (b, NULL, &m, reason, sizeof reason, &version, &interrupted, 5000), SB_PROTO_EVERSION);
    ck_assert_uint_eq (version, SB_PROTO_VERSION + 1);
    free (other);

    /* and the good one after all that */
    const void *good[] = { go };
    s_send_raw (a, good, &go_size, 1);
    ck_assert_int_eq (s_recv (b, NULL, &m, reason, sizeof reason, &version, &interrupted, 5000), SB_PROTO_OK);
    ck_assert_int_eq (m.type, SB_MSG_GO);
    ck_assert_uint_eq (m.u.go.epoch, 5);
    ck_assert_uint_eq (m.u.go.step, 2);
    ck_assert_uint_eq (version, SB_PROTO_VERSION);
    sb_proto_fini (&m);
    free (go);
    zsock_destroy (&a);
    zsock_destroy (&b);
}
END_TEST

/* On a ROUTER a bad message still yields the peer's identity (the caller
 * can answer it with REJECT) and the caller owns it. */
START_TEST (test_router_bad_frame_keeps_identity)
{
    zsock_t *router = zsock_new (ZMQ_ROUTER), *dealer = zsock_new (ZMQ_DEALER);
    sb_wire_configure (router, 0);
    sb_wire_configure (dealer, 0);
    zsock_set_identity (dealer, "rogue");
    ck_assert_int_eq (zsock_bind (router, "inproc://test-wire-router-bad"), 0);
    ck_assert_int_eq (zsock_connect (dealer, "inproc://test-wire-router-bad"), 0);
    size_t go_size;
    uint8_t *go = s_go_bytes (1, &go_size);
    const void *three[] = { go, go, go };
    const size_t sizes[] = { go_size, go_size, go_size };
    s_send_raw (dealer, three, sizes, 3);
    zframe_t *id = NULL;
    sb_msg_t m;
    char reason[128];
    int interrupted;
    ck_assert_int_eq (s_recv (router, &id, &m, reason, sizeof reason, NULL, &interrupted, 5000), SB_PROTO_EMALFORMED);
    ck_assert_str_eq (reason, "3 frames, expected 1");
    ck_assert_ptr_nonnull (id);
    ck_assert (zframe_streq (id, "rogue"));
    ck_assert_int_eq (m.type, SB_MSG_NONE);
    /* the REJECT reaches the rogue peer */
    sb_msg_t reject = { .type = SB_MSG_REJECT };
    reject.u.reject.reason = strdup (reason);
    ck_assert_int_eq (sb_wire_send (router, id, &reject), 0);
    zframe_destroy (&id);
    sb_proto_fini (&reject);
    ck_assert_int_eq (s_recv (dealer, NULL, &m, reason, sizeof reason, NULL, &interrupted, 5000), SB_PROTO_OK);
    ck_assert_int_eq (m.type, SB_MSG_REJECT);
    ck_assert_str_eq (m.u.reject.reason, "3 frames, expected 1");
    sb_proto_fini (&m);
    free (go);
    zsock_destroy (&dealer);
    zsock_destroy (&router);
}
END_TEST

/* A receive that finds nothing within its limit: EMALFORMED, reason
 * "interrupted", *interrupted = 1, and identity and message left empty. */
START_TEST (test_recv_timeout_is_interrupted)
{
    zsock_t *a, *b;
    s_pair ("timeout", &a, &b);
    sb_msg_t m;
    memset (&m, 0x5a, sizeof m);
    char reason[64] = "";
    int interrupted = 0;
    zframe_t *id = (zframe_t *) &m;    /* must be reset to NULL */
    double t0 = s_now ();
    ck_assert_int_eq (s_recv (b, &id, &m, reason, sizeof reason, NULL, &interrupted, 100), SB_PROTO_EMALFORMED);
    double waited = s_now () - t0;
    ck_assert_int_eq (interrupted, 1);
    ck_assert_str_eq (reason, "interrupted");
    ck_assert_ptr_null (id);
    ck_assert_int_eq (m.type, SB_MSG_NONE);
    ck_assert_double_ge (waited, 0.09);
    /* interrupted may be NULL */
    ck_assert_int_eq (s_recv (b, NULL, &m, reason, sizeof reason, NULL, NULL, 10), SB_PROTO_EMALFORMED);
    ck_assert_str_eq (reason, "interrupted");
    zsock_destroy (&a);
    zsock_destroy (&b);
}
END_TEST

/* sb_wire_configure: the options every socket gets. */
START_TEST (test_configure_options)
{
    zsock_t *s = zsock_new (ZMQ_DEALER);
    ck_assert_ptr_nonnull (s);
    sb_wire_configure (s, 250);
    ck_assert_int_eq (zsock_maxmsgsize (s), SB_PROTO_MAX_FRAME);
    ck_assert_int_eq (zsock_linger (s), 250);
    ck_assert_int_eq (zsock_sndhwm (s), 0);
    ck_assert_int_eq (zsock_rcvhwm (s), 0);
    sb_wire_configure (s, 0);
    ck_assert_int_eq (zsock_linger (s), 0);
    zsock_destroy (&s);
}
END_TEST

/* A message that encodes to more than SB_PROTO_MAX_FRAME is refused by the
 * sender with EMSGSIZE (the peer would drop the connection), and nothing
 * arrives. The receiver's own limit (sb_wire_configure) holds over ipc: a
 * frame of exactly the limit arrives, one byte more never does. */
START_TEST (test_frame_size_limits)
{
    char dir[PATH_MAX];
    s_scratch (dir, sizeof dir);
    char ep[PATH_MAX];
    snprintf (ep, sizeof ep, "ipc://%s/limit", dir);
    zsock_t *rx = zsock_new (ZMQ_PULL), *tx = zsock_new (ZMQ_PUSH);
    sb_wire_configure (rx, 0);
    zsock_set_linger (tx, 0);       /* tx keeps ZeroMQ's default: no size limit */
    ck_assert_int_eq (zsock_bind (rx, "%s", ep), 0);
    ck_assert_int_eq (zsock_connect (tx, "%s", ep), 0);

    sb_msg_t big = { .type = SB_MSG_REJECT };
    big.u.reject.reason = malloc (SB_PROTO_MAX_FRAME + 1);
    memset (big.u.reject.reason, 'x', SB_PROTO_MAX_FRAME);
    big.u.reject.reason[SB_PROTO_MAX_FRAME] = '\0';
    errno = 0;
    ck_assert_int_eq (sb_wire_send (tx, NULL, &big), -1);
    ck_assert_int_eq (errno, EMSGSIZE);
    /* a little under the limit is sent (the receiver's decoder then refuses
     * the string's length, a field error, not a lost connection) */
    big.u.reject.reason[SB_PROTO_MAX_FRAME - 64] = '\0';
    ck_assert_int_eq (sb_wire_send (tx, NULL, &big), 0);
    sb_proto_fini (&big);
    sb_msg_t m;
    char reason[256];
    int interrupted;
    ck_assert_int_eq (s_recv (rx, NULL, &m, reason, sizeof reason, NULL, &interrupted, 10000), SB_PROTO_EFIELD);
    ck_assert_int_eq (interrupted, 0);
    ck_assert_str_eq (reason, "REJECT.reason: string of 16777152 bytes exceeds 32767");

    /* raw frames at and over the receiver's limit */
    uint8_t *raw = calloc (1, (size_t) SB_PROTO_MAX_FRAME + 1);
    ck_assert_ptr_nonnull (raw);
    size_t at = SB_PROTO_MAX_FRAME, over = (size_t) SB_PROTO_MAX_FRAME + 1;
    const void *f[] = { raw };
    s_send_raw (tx, f, &at, 1);
    ck_assert_int_eq (s_recv (rx, NULL, &m, reason, sizeof reason, NULL, &interrupted, 10000), SB_PROTO_EMALFORMED);
    ck_assert_int_eq (interrupted, 0);
    ck_assert_str_eq (reason, "16777215 trailing bytes after the message");
    s_send_raw (tx, f, &over, 1);
    ck_assert_int_eq (s_recv (rx, NULL, &m, reason, sizeof reason, NULL, &interrupted, 1000), SB_PROTO_EMALFORMED);
    ck_assert_int_eq (interrupted, 1);     /* never delivered */
    free (raw);
    zsock_destroy (&tx);
    zsock_destroy (&rx);
    sb_check_remove_tree (dir);
}
END_TEST

/* No field of any message is named for a credential: the schema itself
 * keeps secrets off the wire (WELCOME says "credentials never travel"; the
 * integration test test_secrets.sh searches real traces for the values). */
START_TEST (test_no_credential_fields)
{
    static const char *const fields[] = {
#define SB_MSG(name, NAME, id, doc)
#define SB_FIELD(name, KIND, field) #name "." #field,
#define SB_END(name)
#include "messages.def"
#undef SB_MSG
#undef SB_FIELD
#undef SB_END
    };
    static const char *const forbidden[] = { "secret", "password", "passwd", "token", "credential", "access_key",
                                              "key_id", "auth", "signature" };
    size_t n = sizeof fields / sizeof fields[0];
    ck_assert_uint_gt (n, 100);
    int seen_endpoints = 0, seen_store = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < sizeof forbidden / sizeof forbidden[0]; j++)
            ck_assert_msg (!strstr (fields[i], forbidden[j]), "message field %s looks like a credential", fields[i]);
        seen_endpoints |= !strcmp (fields[i], "welcome.endpoints");
        seen_store |= !strcmp (fields[i], "welcome.store");
    }
    /* the walk did reach the storage part of WELCOME */
    ck_assert_int_eq (seen_endpoints, 1);
    ck_assert_int_eq (seen_store, 1);
}
END_TEST

/* ERROR carries a storage failure in the vocabulary of every engine
 * (lib/storage/engine.h sb_storage_error_t: code, lib_code): its fields, in
 * wire order, name no one service or client library, and both codes arrive
 * as sent over a real socket pair. */
START_TEST (test_error_codes_engine_neutral)
{
    static const char *const fields[] = {
#define SB_MSG(name, NAME, id, doc)
#define SB_FIELD(name, KIND, field) #name "." #field,
#define SB_END(name)
#include "messages.def"
#undef SB_MSG
#undef SB_FIELD
#undef SB_END
    };
    char order[512] = "";
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!strncmp (fields[i], "error.", 6)) {
            ck_assert_uint_lt (strlen (order) + strlen (fields[i]) + 2, sizeof order);
            strcat (order, order[0] ? " " : "");
            strcat (order, fields[i] + 6);
        }
    ck_assert_str_eq (order, "rank op target errno_val message endpoint http_status service_code library_code attempt");
    /* the layout changed: the version says so to a peer of the old one */
    ck_assert_int_eq (SB_PROTO_VERSION, 17);

    zsock_t *a, *b;
    s_pair ("codes", &a, &b);
    sb_msg_t in = { .type = SB_MSG_ERROR }, out;
    in.u.error.rank = 3;
    in.u.error.op = "read";
    in.u.error.target = "train/img_1_of_8.npz";
    in.u.error.errno_val = ENOENT;
    in.u.error.message = "GET failed";
    in.u.error.endpoint = "http://127.0.0.1:10000";
    in.u.error.http_status = 404;
    in.u.error.service_code = "BlobNotFound";
    in.u.error.library_code = 28;
    in.u.error.attempt = 2;
    ck_assert_int_eq (sb_wire_send (a, NULL, &in), 0);
    char reason[128];
    int interrupted;
    ck_assert_int_eq (s_recv (b, NULL, &out, reason, sizeof reason, NULL, &interrupted, 5000), SB_PROTO_OK);
    ck_assert_int_eq (out.type, SB_MSG_ERROR);
    ck_assert_str_eq (out.u.error.service_code, "BlobNotFound");
    ck_assert_int_eq (out.u.error.library_code, 28);
    ck_assert_int_eq (out.u.error.http_status, 404);
    ck_assert_int_eq (out.u.error.attempt, 2);
    ck_assert_str_eq (out.u.error.endpoint, "http://127.0.0.1:10000");
    sb_proto_fini (&out);
    zsock_destroy (&a);
    zsock_destroy (&b);
}
END_TEST

/* The trace is opened once per process: each scenario runs in a child of
 * its own with SHARDBENCH_WIRE_TRACE set before its first send. The child
 * exits 0 when every send and receive did what it should. */
static int
s_trace_child (const char *trace, int bad_frame)
{
    if (setenv ("SHARDBENCH_WIRE_TRACE", trace, 1) != 0)
        return 10;
    zsock_t *a = zsock_new (ZMQ_PAIR), *b = zsock_new (ZMQ_PAIR);
    if (!a || !b || zsock_bind (a, "inproc://trace") != 0 || zsock_connect (b, "inproc://trace") != 0)
        return 11;
    sb_wire_configure (a, 0);
    sb_wire_configure (b, 0);
    sb_msg_t hello = { .type = SB_MSG_HELLO }, out;
    hello.u.hello.host = strdup ("host-\n-x");
    hello.u.hello.software = strdup ("sw");
    hello.u.hello.pid = 4242;
    if (sb_wire_send (a, NULL, &hello) != 0)
        return 12;
    char reason[256];
    int interrupted;
    zsock_set_rcvtimeo (b, 5000);
    if (sb_wire_recv (b, NULL, &out, reason, sizeof reason, NULL, &interrupted) != SB_PROTO_OK)
        return 13;
    if (strcmp (out.u.hello.host, "host-\n-x") != 0)
        return 14;
    sb_proto_fini (&out);
    sb_proto_fini (&hello);
    if (bad_frame) {
        /* a frame that does not decode is traced as "?"; a send refused
         * for its size is not traced */
        zsock_send (a, "s", "junk");
        if (sb_wire_recv (b, NULL, &out, reason, sizeof reason, NULL, &interrupted) == SB_PROTO_OK)
            return 15;
        sb_msg_t big = { .type = SB_MSG_BYE };
        big.u.bye.reason = calloc (1, SB_PROTO_MAX_FRAME + 1);
        memset (big.u.bye.reason, 'b', SB_PROTO_MAX_FRAME);
        if (sb_wire_send (a, NULL, &big) != -1)
            return 16;
        sb_proto_fini (&big);
    }
    zsock_destroy (&a);
    zsock_destroy (&b);
    return 0;
}

static int
s_run_child (const char *trace, int bad_frame)
{
    fflush (NULL);
    pid_t pid = fork ();
    ck_assert_int_ge (pid, 0);
    if (pid == 0)
        _exit (s_trace_child (trace, bad_frame));
    int status;
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert (WIFEXITED (status));
    return WEXITSTATUS (status);
}

/* Read a whole file (caller frees); *size its length. */
static char *
s_slurp (const char *path, size_t *size)
{
    FILE *f = fopen (path, "rb");
    ck_assert_ptr_nonnull (f);
    char *buf = malloc (64 << 20);
    *size = fread (buf, 1, 64 << 20, f);
    fclose (f);
    return buf;
}

/* The trace: records "SBWIRE <send|recv> <pid> <TYPE> <bytes>\n<bytes>\n",
 * the payload exactly the encoded message, appended to what the file held,
 * mode 0600; an undecodable frame as "?"; nothing for a refused send. */
START_TEST (test_trace_records)
{
    char dir[PATH_MAX];
    s_scratch (dir, sizeof dir);
    char trace[PATH_MAX];
    snprintf (trace, sizeof trace, "%s/wire.bin", dir);

    sb_msg_t hello = { .type = SB_MSG_HELLO };
    hello.u.hello.host = strdup ("host-\n-x");
    hello.u.hello.software = strdup ("sw");
    hello.u.hello.pid = 4242;
    uint8_t *enc = NULL;
    size_t enc_size = 0;
    ck_assert_int_eq (sb_proto_encode (&hello, &enc, &enc_size), 0);
    sb_proto_fini (&hello);

    /* first run: a new file */
    ck_assert_int_eq (s_run_child (trace, 0), 0);
    struct stat st;
    ck_assert_int_eq (stat (trace, &st), 0);
    ck_assert_int_eq (st.st_mode & 07777, 0600);
    size_t size;
    char *text = s_slurp (trace, &size);
    /* parse the two records */
    long pid1 = -1, pid2 = -1;
    size_t n1 = 0, n2 = 0;
    int used = 0;
    char type[32];
    ck_assert_int_eq (sscanf (text, "SBWIRE send %ld %31s %zu\n%n", &pid1, type, &n1, &used), 3);
    ck_assert_str_eq (type, "HELLO");
    ck_assert_uint_eq (n1, enc_size);
    ck_assert_int_eq (text[used - 1], '\n');
    ck_assert_int_eq (memcmp (text + used, enc, enc_size), 0);
    ck_assert_int_eq (text[used + (int) enc_size], '\n');
    size_t second = (size_t) used + enc_size + 1;
    ck_assert_int_eq (sscanf (text + second, "SBWIRE recv %ld %31s %zu\n%n", &pid2, type, &n2, &used), 3);
    ck_assert_str_eq (type, "HELLO");
    ck_assert_int_eq (pid1, pid2);
    ck_assert_int_ne (pid1, (long) getpid ());    /* the child's */
    ck_assert_uint_eq (n2, enc_size);
    ck_assert_int_eq (memcmp (text + second + used, enc, enc_size), 0);
    ck_assert_uint_eq (size, second + (size_t) used + enc_size + 1);   /* nothing else */
    free (text);

    /* second run appends: the first run's records stay in front */
    ck_assert_int_eq (s_run_child (trace, 1), 0);
    size_t size2;
    text = s_slurp (trace, &size2);
    size_t after = size;
    char head[64];
    /* send HELLO, recv HELLO, then recv ? for the junk frame (the junk is sent
     * raw, not through sb_wire_send), and no record of the refused BYE */
    long p;
    size_t n;
    ck_assert_int_eq (sscanf (text + after, "SBWIRE send %ld %31s %zu\n%n", &p, type, &n, &used), 3);
    after += (size_t) used + n + 1;
    ck_assert_int_eq (sscanf (text + after, "SBWIRE recv %ld %31s %zu\n%n", &p, type, &n, &used), 3);
    after += (size_t) used + n + 1;
    snprintf (head, sizeof head, "SBWIRE recv %ld ? 4\njunk\n", p);
    ck_assert_uint_eq (size2, after + strlen (head));
    ck_assert_int_eq (memcmp (text + after, head, strlen (head)), 0);
    free (text);
    free (enc);
    sb_check_remove_tree (dir);
}
END_TEST

/* A trace file that cannot be opened never fails a send or a receive. */
START_TEST (test_trace_unwritable)
{
    ck_assert_int_eq (s_run_child ("/nonexistent-sb-dir/wire.bin", 1), 0);
    ck_assert_int_eq (access ("/nonexistent-sb-dir", F_OK), -1);
}
END_TEST

/* sb_wire_wait_s: no sockets is EINVAL; a drained quiet socket sleeps the
 * whole limit and returns 0 (timeout 0: at once); a frame sent after the
 * drain wakes it with 1 (no limit); more than 16 sockets (the heap path)
 * work alike. */
START_TEST (test_wait)
{
    errno = 0;
    ck_assert_int_eq (sb_wire_wait_s (NULL, 0, 0.1), -1);
    ck_assert_int_eq (errno, EINVAL);

    zsock_t *a, *b;
    s_pair ("wait", &a, &b);
    /* settle the connection with one message, then drain */
    size_t go_size;
    uint8_t *go = s_go_bytes (1, &go_size);
    const void *f[] = { go };
    s_send_raw (a, f, &go_size, 1);
    zsock_set_rcvtimeo (b, 5000);
    zmsg_t *zm = zmsg_recv (b);
    ck_assert_ptr_nonnull (zm);
    zmsg_destroy (&zm);
    s_drain (b);

    double t0 = s_now ();
    ck_assert_int_eq (sb_wire_wait_s (&b, 1, 0.25), 0);
    double slept = s_now () - t0;
    ck_assert_double_ge (slept, 0.245);
    ck_assert_double_lt (slept, 2.0);
    t0 = s_now ();
    ck_assert_int_eq (sb_wire_wait_s (&b, 1, 0), 0);
    ck_assert_double_lt (s_now () - t0, 0.5);     /* at once, with room for a busy machine */

    s_send_raw (a, f, &go_size, 1);
    ck_assert_int_eq (sb_wire_wait_s (&b, 1, -1), 1);
    ck_assert_int_eq (s_drain (b), 1);

    /* 17 pairs: wait on all the receivers, a frame on the last one */
    enum { N = 17 };
    zsock_t *tx[N], *rx[N];
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf (name, sizeof name, "many-%d", i);
        s_pair (name, &tx[i], &rx[i]);
        s_send_raw (tx[i], f, &go_size, 1);
        zsock_set_rcvtimeo (rx[i], 5000);
        zm = zmsg_recv (rx[i]);
        ck_assert_ptr_nonnull (zm);
        zmsg_destroy (&zm);
        s_drain (rx[i]);
    }
    ck_assert_int_eq (sb_wire_wait_s (rx, N, 0.05), 0);
    s_send_raw (tx[N - 1], f, &go_size, 1);
    ck_assert_int_eq (sb_wire_wait_s (rx, N, 5), 1);
    ck_assert_int_eq (s_drain (rx[N - 1]), 1);
    for (int i = 0; i < N; i++) {
        zsock_destroy (&tx[i]);
        zsock_destroy (&rx[i]);
    }
    free (go);
    zsock_destroy (&a);
    zsock_destroy (&b);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("wire");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_every_type_router_dealer_ipc);
    tcase_add_test (tc, test_null_string_is_empty);
    tcase_add_test (tc, test_bad_frames_then_good);
    tcase_add_test (tc, test_router_bad_frame_keeps_identity);
    tcase_add_test (tc, test_recv_timeout_is_interrupted);
    tcase_add_test (tc, test_configure_options);
    tcase_add_test (tc, test_frame_size_limits);
    tcase_add_test (tc, test_no_credential_fields);
    tcase_add_test (tc, test_error_codes_engine_neutral);
    tcase_add_test (tc, test_trace_records);
    tcase_add_test (tc, test_trace_unwritable);
    tcase_add_test (tc, test_wait);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
