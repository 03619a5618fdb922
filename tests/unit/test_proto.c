/* Codec: a round trip for every message type in schemas/messages.def (the
 * test walks the same definition), and rejection of bad frames. */
#include <check.h>
#include "check_main.h"
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

/* Fill helpers: each field gets a value derived from a running counter. */
static void fill_U64 (uint64_t *f, int *n) { *f = 1000u + (uint64_t) (*n)++ * 0x100000001ull; }
static void fill_I64 (int64_t *f, int *n) { *f = -1000 - (*n)++; }
static void fill_F64 (double *f, int *n) { *f = 0.5 + (*n)++; }
static void fill_STR (char **f, int *n) { char b[32]; snprintf (b, sizeof b, "str-%d-é", (*n)++); *f = strdup (b); }
static void fill_U64S (sb_u64s_t *f, int *n)
{
    f->count = 3;
    f->items = malloc (3 * sizeof (uint64_t));
    for (int i = 0; i < 3; i++)
        f->items[i] = (uint64_t) (*n)++ << 40;
}
static void fill_STRS (sb_strs_t *f, int *n)
{
    f->count = 2;
    f->items = malloc (2 * sizeof (char *));
    for (int i = 0; i < 2; i++)
        fill_STR (&f->items[i], n);
}
static void same_U64 (const uint64_t *a, const uint64_t *b) { ck_assert_uint_eq (*a, *b); }
static void same_I64 (const int64_t *a, const int64_t *b) { ck_assert_int_eq (*a, *b); }
static void same_F64 (const double *a, const double *b) { ck_assert_double_eq (*a, *b); }
static void same_STR (char *const *a, char *const *b) { ck_assert_str_eq (*a, *b); }
static void same_U64S (const sb_u64s_t *a, const sb_u64s_t *b)
{
    ck_assert_uint_eq (a->count, b->count);
    for (size_t i = 0; i < a->count; i++)
        ck_assert_uint_eq (a->items[i], b->items[i]);
}
static void same_STRS (const sb_strs_t *a, const sb_strs_t *b)
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
    default: ck_abort_msg ("unknown type");
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

START_TEST (test_round_trip)
{
    int type = s_types[_i];
    sb_msg_t in, out;
    s_fill (&in, type);
    uint8_t *data = NULL;
    size_t size = 0;
    ck_assert_int_eq (sb_proto_encode (&in, &data, &size), 0);
    char reason[256] = "";
    uint64_t version = 0;
    ck_assert_int_eq (sb_proto_decode (data, size, &out, reason, sizeof reason, &version), SB_PROTO_OK);
    ck_assert_uint_eq (version, SB_PROTO_VERSION);
    s_same (&in, &out);
    ck_assert_str_ne (sb_proto_type_name (type), "?");
    /* every proper prefix of the frame is rejected, never crashes */
    for (size_t cut = 0; cut < size; cut++) {
        sb_msg_t bad;
        ck_assert_int_ne (sb_proto_decode (data, cut, &bad, reason, sizeof reason, NULL), SB_PROTO_OK);
        ck_assert_int_eq (bad.type, SB_MSG_NONE);
    }
    /* trailing garbage is rejected too */
    uint8_t *longer = malloc (size + 1);
    memcpy (longer, data, size);
    longer[size] = 0xc0;
    sb_msg_t bad;
    ck_assert_int_eq (sb_proto_decode (longer, size + 1, &bad, reason, sizeof reason, NULL), SB_PROTO_EMALFORMED);
    ck_assert_ptr_nonnull (strstr (reason, "trailing"));
    free (longer);
    free (data);
    sb_proto_fini (&in);
    sb_proto_fini (&out);
    ck_assert_int_eq (in.type, SB_MSG_NONE);
}
END_TEST

/* Pack [version, type, body] by hand. body_fn packs the body. */
static size_t
s_pack (uint8_t *out, size_t cap, uint64_t version, uint64_t type, void (*body_fn) (msgpack_packer *))
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, 3);
    msgpack_pack_uint64 (&pk, version);
    msgpack_pack_uint64 (&pk, type);
    body_fn (&pk);
    ck_assert_uint_le (sb.size, cap);
    memcpy (out, sb.data, sb.size);
    size_t n = sb.size;
    msgpack_sbuffer_destroy (&sb);
    return n;
}

static void body_empty (msgpack_packer *pk) { msgpack_pack_array (pk, 0); }
static void body_go_ok (msgpack_packer *pk) { msgpack_pack_array (pk, 3); msgpack_pack_uint64 (pk, 1); msgpack_pack_uint64 (pk, 2); msgpack_pack_uint64 (pk, 0); }
static void body_go_short (msgpack_packer *pk) { msgpack_pack_array (pk, 1); msgpack_pack_uint64 (pk, 1); }
static void body_go_negative (msgpack_packer *pk) { msgpack_pack_array (pk, 3); msgpack_pack_int64 (pk, -1); msgpack_pack_uint64 (pk, 2); msgpack_pack_uint64 (pk, 0); }
static void body_go_string (msgpack_packer *pk) { msgpack_pack_array (pk, 3); msgpack_pack_str (pk, 1); msgpack_pack_str_body (pk, "x", 1); msgpack_pack_uint64 (pk, 2); msgpack_pack_uint64 (pk, 0); }
static void
body_reject_huge (msgpack_packer *pk)
{
    static char big[SB_PROTO_MAX_STR + 1];
    memset (big, 'a', sizeof big);
    msgpack_pack_array (pk, 1);
    msgpack_pack_str (pk, sizeof big);
    msgpack_pack_str_body (pk, big, sizeof big);
}
static void
body_reject_nul (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 1);
    msgpack_pack_str (pk, 3);
    msgpack_pack_str_body (pk, "a\0b", 3);
}

START_TEST (test_every_type_listed)
{
    /* every type id 1..25 is defined, and the names are distinct */
    ck_assert_int_eq (S_NTYPES, 25);
    for (int i = 0; i < S_NTYPES; i++) {
        ck_assert_int_eq (s_types[i], i + 1);
        for (int j = 0; j < i; j++)
            ck_assert_str_ne (sb_proto_type_name (s_types[i]), sb_proto_type_name (s_types[j]));
    }
    ck_assert_str_eq (sb_proto_type_name (0), "?");
    ck_assert_str_eq (sb_proto_type_name (26), "?");
}
END_TEST

START_TEST (test_rejects)
{
    static uint8_t buf[SB_PROTO_MAX_STR + 256];
    sb_msg_t m;
    char reason[256];
    uint64_t version = 0;
    size_t n;

    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_GO, body_go_ok);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL), SB_PROTO_OK);
    ck_assert_uint_eq (m.u.go.epoch, 1);
    ck_assert_uint_eq (m.u.go.step, 2);
    sb_proto_fini (&m);

    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION + 1, SB_MSG_GO, body_go_ok);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, &version), SB_PROTO_EVERSION);
    ck_assert_uint_eq (version, SB_PROTO_VERSION + 1);
    ck_assert_ptr_nonnull (strstr (reason, "version"));

    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, 999, body_empty);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL), SB_PROTO_ETYPE);
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, 0, body_empty);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL), SB_PROTO_ETYPE);

    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_GO, body_go_short);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL), SB_PROTO_EFIELD);
    ck_assert_ptr_nonnull (strstr (reason, "GO has 1 fields, expected 3"));
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_GO, body_go_negative);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL), SB_PROTO_EFIELD);
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_GO, body_go_string);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL), SB_PROTO_EFIELD);
    ck_assert_ptr_nonnull (strstr (reason, "GO.epoch"));
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_REJECT, body_reject_huge);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL), SB_PROTO_EFIELD);
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_REJECT, body_reject_nul);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL), SB_PROTO_EFIELD);

    /* REJECT of another version is still readable (so a refused peer learns why) */
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION + 5, SB_MSG_REJECT, body_reject_nul);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL), SB_PROTO_EFIELD);

    /* not an array / empty */
    const uint8_t nil = 0xc0, map[] = { 0x80 };
    ck_assert_int_eq (sb_proto_decode (&nil, 1, &m, reason, sizeof reason, NULL), SB_PROTO_EMALFORMED);
    ck_assert_int_eq (sb_proto_decode (map, 1, &m, reason, sizeof reason, NULL), SB_PROTO_EMALFORMED);
    ck_assert_int_eq (sb_proto_decode (NULL, 0, &m, reason, sizeof reason, NULL), SB_PROTO_EMALFORMED);
}
END_TEST

START_TEST (test_garbage)
{
    /* random bytes never crash the decoder and never leak a half message */
    uint64_t state = 12345;
    uint8_t buf[256];
    int accepted = 0;
    for (int round = 0; round < 20000; round++) {
        size_t n = 1 + (size_t) (round % 255);
        for (size_t i = 0; i < n; i++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            buf[i] = (uint8_t) (state >> 56);
        }
        if (round % 3 == 0) {   /* plausible prefix: array of 3, version, small type */
            buf[0] = 0x93;
            buf[1] = SB_PROTO_VERSION;
            buf[2] = (uint8_t) (1 + round % 15);
        }
        sb_msg_t m;
        char reason[256];
        if (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL) == SB_PROTO_OK) {
            accepted++;
            sb_proto_fini (&m);
        }
        else
            ck_assert_int_eq (m.type, SB_MSG_NONE);
    }
    ck_assert_int_lt (accepted, 200);
}
END_TEST

/* Decode and expect this status and exactly this reason. */
static void
s_expect (const uint8_t *data, size_t size, sb_proto_status_t status, const char *reason_expected)
{
    sb_msg_t m;
    char reason[256] = "";
    ck_assert_int_eq (sb_proto_decode (data, size, &m, reason, sizeof reason, NULL), status);
    ck_assert_str_eq (reason, reason_expected);
    ck_assert_int_eq (m.type, SB_MSG_NONE);
}

static void
body_entries_long (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 5);
    for (int i = 0; i < 2; i++)
        msgpack_pack_uint64 (pk, 1);
    msgpack_pack_array (pk, SB_PROTO_MAX_ARRAY + 1);
    for (int i = 0; i < SB_PROTO_MAX_ARRAY + 1; i++)
        msgpack_pack_uint64 (pk, 1);
    msgpack_pack_array (pk, 0);
    msgpack_pack_array (pk, 0);
}

/* Every kind of bad frame a peer can send is refused with a reason that
 * says what was wrong (the coordinator logs it and sends it back in REJECT). */
START_TEST (test_reject_reasons)
{
    static uint8_t buf[16 * SB_PROTO_MAX_ARRAY];
    size_t n;

    /* empty and oversized frames: refused before any byte is parsed */
    s_expect (NULL, 0, SB_PROTO_EMALFORMED, "empty frame");
    uint8_t *big = calloc (1, (size_t) SB_PROTO_MAX_FRAME + 1);
    ck_assert_ptr_nonnull (big);
    big[0] = 0x93;
    s_expect (big, (size_t) SB_PROTO_MAX_FRAME + 1, SB_PROTO_EMALFORMED, "frame of 16777217 bytes exceeds 16777216");
    free (big);

    /* truncated: a valid GO cut short */
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_GO, body_go_ok);
    s_expect (buf, n - 1, SB_PROTO_EMALFORMED, "not a complete, bounded msgpack object");
    s_expect (buf, 1, SB_PROTO_EMALFORMED, "not a complete, bounded msgpack object");
    /* trailing bytes after a valid GO */
    buf[n] = 0x00;
    s_expect (buf, n + 1, SB_PROTO_EMALFORMED, "1 trailing bytes after the message");

    /* garbage: the never-used byte 0xc1, text, a map, a lone integer */
    const uint8_t c1[] = { 0xc1 };
    s_expect (c1, sizeof c1, SB_PROTO_EMALFORMED, "not a complete, bounded msgpack object");
    const char *http = "GET / HTTP/1.1\r\n\r\n";
    s_expect ((const uint8_t *) http, strlen (http), SB_PROTO_EMALFORMED, "17 trailing bytes after the message");
    const uint8_t map[] = { 0x81, 0x01, 0x02 };
    s_expect (map, sizeof map, SB_PROTO_EMALFORMED, "not [version, type, body]");
    const uint8_t four[] = { 0x94, 0x04, 0x09, 0x90, 0x00 };
    s_expect (four, sizeof four, SB_PROTO_EMALFORMED, "not [version, type, body]");

    /* declared sizes larger than the frame: refused without allocating them */
    const uint8_t arr32[] = { 0xdd, 0xff, 0xff, 0xff, 0xff, 0x00 };
    s_expect (arr32, sizeof arr32, SB_PROTO_EMALFORMED, "not a complete, bounded msgpack object");
    const uint8_t map32[] = { 0x93, 0x04, 0x01, 0xdf, 0x7f, 0xff, 0xff, 0xff };
    s_expect (map32, sizeof map32, SB_PROTO_EMALFORMED, "not a complete, bounded msgpack object");
    const uint8_t str32[] = { 0x93, 0x04, 0x03, 0x91, 0xdb, 0xff, 0xff, 0xff, 0xff, 'a' };
    s_expect (str32, sizeof str32, SB_PROTO_EMALFORMED, "not a complete, bounded msgpack object");
    /* nesting deeper than 8 arrays */
    uint8_t deep[16];
    memset (deep, 0x91, sizeof deep - 1);
    deep[sizeof deep - 1] = 0x00;
    s_expect (deep, sizeof deep, SB_PROTO_EMALFORMED, "not a complete, bounded msgpack object");

    /* another protocol version, an unknown type */
    char text[64];
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION + 1, SB_MSG_GO, body_go_ok);
    snprintf (text, sizeof text, "protocol version %d, expected %d", SB_PROTO_VERSION + 1, SB_PROTO_VERSION);
    s_expect (buf, n, SB_PROTO_EVERSION, text);
    n = s_pack (buf, sizeof buf, 0, SB_MSG_HELLO, body_empty);
    snprintf (text, sizeof text, "protocol version 0, expected %d", SB_PROTO_VERSION);
    s_expect (buf, n, SB_PROTO_EVERSION, text);
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, 999, body_empty);
    s_expect (buf, n, SB_PROTO_ETYPE, "unknown message type 999");

    /* fields: count, type, oversized string, NUL, oversized array */
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_GO, body_go_short);
    s_expect (buf, n, SB_PROTO_EFIELD, "GO has 1 fields, expected 3");
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_GO, body_go_string);
    s_expect (buf, n, SB_PROTO_EFIELD, "GO.epoch: wrong msgpack type 5");
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_REJECT, body_reject_huge);
    s_expect (buf, n, SB_PROTO_EFIELD, "REJECT.reason: string of 32768 bytes exceeds 32767");
    ck_assert_int_eq (SB_PROTO_MAX_STR, 32767);     /* the number above */
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_REJECT, body_reject_nul);
    s_expect (buf, n, SB_PROTO_EFIELD, "REJECT.reason: string holds a NUL byte");
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_ENTRIES, body_entries_long);
    s_expect (buf, n, SB_PROTO_EFIELD, "ENTRIES.sizes: 65537 items exceed 65536");
}
END_TEST

static void
body_hello_empty (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 8);
    msgpack_pack_str (pk, 0);
    msgpack_pack_str_body (pk, "", 0);
    msgpack_pack_uint64 (pk, 1);
    msgpack_pack_uint64 (pk, 2);
    msgpack_pack_uint64 (pk, 3);
    for (int i = 0; i < 4; i++) {     /* software; processor, cpuinfo, meminfo (protocol 12) */
        msgpack_pack_str (pk, 0);
        msgpack_pack_str_body (pk, "", 0);
    }
}

static void
body_ready_empty_strs (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 5);
    msgpack_pack_uint64 (pk, 7);
    msgpack_pack_array (pk, 1);
    msgpack_pack_str (pk, 0);
    msgpack_pack_str_body (pk, "", 0);
    msgpack_pack_array (pk, 1);
    msgpack_pack_str (pk, 0);
    msgpack_pack_str_body (pk, "", 0);
    msgpack_pack_double (pk, 1.5);     /* welcome_received_at */
    msgpack_pack_double (pk, 2.5);     /* sent_at */
}

/* Fuzzing finding (docs/FUZZING.md, proto 1): an empty string reached
 * memchr and memcpy with the NULL pointer msgpack-c gives "" (undefined
 * behaviour, reported by UBSan: this test fails without the fix in a
 * -Db_sanitize=undefined build). Empty strings decode as "". */
START_TEST (test_empty_strings)
{
    uint8_t buf[256];
    sb_msg_t m;
    char reason[256] = "";
    size_t n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_HELLO, body_hello_empty);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL), SB_PROTO_OK);
    ck_assert_str_eq (m.u.hello.host, "");
    ck_assert_str_eq (m.u.hello.software, "");
    ck_assert_uint_eq (m.u.hello.memory, 3);
    ck_assert_str_eq (m.u.hello.cpuinfo, "");
    sb_proto_fini (&m);
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION, SB_MSG_READY, body_ready_empty_strs);
    ck_assert_int_eq (sb_proto_decode (buf, n, &m, reason, sizeof reason, NULL), SB_PROTO_OK);
    ck_assert_uint_eq (m.u.ready.failed_endpoints.count, 1);
    ck_assert_str_eq (m.u.ready.failed_endpoints.items[0], "");
    ck_assert_str_eq (m.u.ready.causes.items[0], "");
    sb_proto_fini (&m);
}
END_TEST

/* Fuzzing findings (docs/FUZZING.md, proto 2 and 3): msgpack lets a sender
 * write a non-negative integer as a signed int (0xd0 0x04 is 4) and a short
 * array with an array 16 or 32 header. The decoder took such frames,
 * sb_proto_peek refused them: the two disagreed on what is a frame. Both
 * read them now; a negative int is still no version or type. */
/* a HELLO of another protocol version names its host and software; a body
 * of another shape or another message names nothing */
static void
s_body_hello_old (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 5);
    msgpack_pack_str_with_body (pk, "old-node", 8);
    msgpack_pack_uint64 (pk, 7);
    msgpack_pack_uint64 (pk, 1);
    msgpack_pack_uint64 (pk, 1);
    msgpack_pack_str_with_body (pk, "shardbench-worker 0.0.1", 23);
}

static void
s_body_hello_short (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 1);
    msgpack_pack_str_with_body (pk, "h", 1);
}

START_TEST (test_hello_any_version)
{
    uint8_t buf[256];
    char *host, *software;
    int other = -1;
    size_t n = s_pack (buf, sizeof buf, SB_PROTO_VERSION - 1, SB_MSG_HELLO, s_body_hello_old);
    ck_assert_int_eq (sb_proto_hello_any (buf, n, &host, &software, &other), 0);
    ck_assert_int_eq (other, 1);    /* 5 fields, this version's HELLO has 8 */
    ck_assert_str_eq (host, "old-node");
    ck_assert_str_eq (software, "shardbench-worker 0.0.1");
    free (host);
    free (software);
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION + 5, SB_MSG_HELLO, s_body_hello_short);
    ck_assert_int_eq (sb_proto_hello_any (buf, n, &host, &software, &other), 0);
    ck_assert_str_eq (host, "h");
    ck_assert_str_eq (software, "");
    free (host);
    free (software);
    n = s_pack (buf, sizeof buf, SB_PROTO_VERSION - 1, SB_MSG_GO, body_go_ok);
    ck_assert_int_eq (sb_proto_hello_any (buf, n, &host, &software, &other), -1);
    ck_assert_ptr_null (host);
    ck_assert_int_eq (sb_proto_hello_any (buf, n - 1, &host, &software, &other), -1);
}
END_TEST

START_TEST (test_peek_signed_encoding)
{
    const uint8_t go[] = { 0x93, 0xd0, SB_PROTO_VERSION, 0xd1, 0x00, SB_MSG_GO, 0x93, 0xd0, 0x05, 0x06, 0x00 };
    sb_msg_t m;
    char reason[256] = "";
    ck_assert_int_eq (sb_proto_decode (go, sizeof go, &m, reason, sizeof reason, NULL), SB_PROTO_OK);
    ck_assert_int_eq (m.type, SB_MSG_GO);
    ck_assert_uint_eq (m.u.go.epoch, 5);
    sb_proto_fini (&m);
    int type = 0;
    uint64_t first = 0;
    ck_assert_int_eq (sb_proto_peek (go, sizeof go, &type, &first), 0);
    ck_assert_int_eq (type, SB_MSG_GO);
    ck_assert_uint_eq (first, 5);
    /* proto 3: the outer array written as array 16 or array 32 (msgpack
     * allows any array header for any count), the body too */
    const uint8_t go16[] = { 0xdc, 0x00, 0x03, SB_PROTO_VERSION, SB_MSG_GO, 0xdd, 0x00, 0x00, 0x00, 0x03, 0x07, 0x08, 0x00 };
    ck_assert_int_eq (sb_proto_decode (go16, sizeof go16, &m, reason, sizeof reason, NULL), SB_PROTO_OK);
    ck_assert_uint_eq (m.u.go.step, 8);
    sb_proto_fini (&m);
    ck_assert_int_eq (sb_proto_peek (go16, sizeof go16, &type, &first), 0);
    ck_assert_int_eq (type, SB_MSG_GO);
    ck_assert_uint_eq (first, 7);
    const uint8_t go32[] = { 0xdd, 0x00, 0x00, 0x00, 0x03, SB_PROTO_VERSION, SB_MSG_GO, 0x92, 0x09, 0x0a };
    ck_assert_int_eq (sb_proto_peek (go32, sizeof go32, &type, &first), 0);
    ck_assert_uint_eq (first, 9);
    const uint8_t four[] = { 0xdc, 0x00, 0x04, SB_PROTO_VERSION, SB_MSG_GO, 0x92, 0x09, 0x0a, 0x00 };
    ck_assert_int_eq (sb_proto_peek (four, sizeof four, &type, &first), -1);
    const uint8_t negative[] = { 0x93, 0xd0, 0xfc, 0x09, 0x92, 0x05, 0x06 };
    ck_assert_int_eq (sb_proto_peek (negative, sizeof negative, &type, &first), -1);
    ck_assert_int_eq (sb_proto_decode (negative, sizeof negative, &m, reason, sizeof reason, NULL), SB_PROTO_EMALFORMED);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("proto");
    TCase *tc = tcase_create ("core");
    tcase_add_loop_test (tc, test_round_trip, 0, S_NTYPES);
    tcase_add_test (tc, test_every_type_listed);
    tcase_add_test (tc, test_rejects);
    tcase_add_test (tc, test_garbage);
    tcase_add_test (tc, test_reject_reasons);
    tcase_add_test (tc, test_empty_strings);
    tcase_add_test (tc, test_peek_signed_encoding);
    tcase_add_test (tc, test_hello_any_version);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
