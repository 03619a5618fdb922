/* proto: table-driven msgpack codec generated from schemas/messages.def. */
#include "proto.h"

#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { K_U64, K_I64, K_F64, K_STR, K_U64S, K_STRS } s_kind_t;

typedef struct {
    const char *name;
    s_kind_t    kind;
    size_t      offset;     /* within the message's struct */
} s_field_t;

typedef struct {
    const char      *name;
    const s_field_t *fields;
    size_t           count;
} s_message_t;

#define SB_KIND_U64  K_U64
#define SB_KIND_I64  K_I64
#define SB_KIND_F64  K_F64
#define SB_KIND_STR  K_STR
#define SB_KIND_U64S K_U64S
#define SB_KIND_STRS K_STRS

/* Field tables: one per message. The leading dummy entry keeps empty
 * messages legal C; it is skipped by starting at index 1. */
#define SB_MSG(name, NAME, id, doc) static const s_field_t s_fields_##name[] = { { NULL, K_U64, 0 },
#define SB_FIELD(name, KIND, field) { #field, SB_KIND_##KIND, offsetof (sb_msg_##name##_t, field) },
#define SB_END(name) };
#include "messages.def"
#undef SB_MSG
#undef SB_FIELD
#undef SB_END

static const s_message_t s_messages[SB_MSG_MAX_] = {
#define SB_MSG(name, NAME, id, doc) [id] = { #NAME, s_fields_##name + 1, sizeof (s_fields_##name) / sizeof (s_field_t) - 1 },
#define SB_FIELD(name, KIND, field)
#define SB_END(name)
#include "messages.def"
#undef SB_MSG
#undef SB_FIELD
#undef SB_END
};

static const s_message_t *
s_message (int type)
{
    if (type <= SB_MSG_NONE || type >= SB_MSG_MAX_ || !s_messages[type].name)
        return NULL;
    return &s_messages[type];
}

const char *
sb_proto_type_name (int type)
{
    const s_message_t *m = s_message (type);
    return m ? m->name : "?";
}

/* The message struct inside the union starts at &msg->u for every type. */
static void *
s_body (sb_msg_t *msg)
{
    return &msg->u;
}

int
sb_proto_set_str (char **field, const char *value)
{
    char *copy = strdup (value ? value : "");
    if (!copy)
        return -1;
    free (*field);
    *field = copy;
    return 0;
}

static int
s_pack_str (msgpack_packer *pk, const char *s)
{
    size_t len = s ? strlen (s) : 0;
    if (msgpack_pack_str (pk, len) != 0)
        return -1;
    return msgpack_pack_str_body (pk, s ? s : "", len);
}

int
sb_proto_encode (const sb_msg_t *msg, uint8_t **data_p, size_t *size_p)
{
    const s_message_t *m = s_message (msg->type);
    if (!m)
        return -1;
    msgpack_sbuffer sbuf;
    msgpack_sbuffer_init (&sbuf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sbuf, msgpack_sbuffer_write);

    const uint8_t *base = (const uint8_t *) &msg->u;
    int rc = msgpack_pack_array (&pk, 3);
    rc |= msgpack_pack_uint32 (&pk, SB_PROTO_VERSION);
    rc |= msgpack_pack_uint32 (&pk, (uint32_t) msg->type);
    rc |= msgpack_pack_array (&pk, (uint32_t) m->count);
    for (size_t i = 0; i < m->count && rc == 0; i++) {
        const void *at = base + m->fields[i].offset;
        switch (m->fields[i].kind) {
        case K_U64: rc = msgpack_pack_uint64 (&pk, *(const uint64_t *) at); break;
        case K_I64: rc = msgpack_pack_int64 (&pk, *(const int64_t *) at); break;
        case K_F64: rc = msgpack_pack_double (&pk, *(const double *) at); break;
        case K_STR: rc = s_pack_str (&pk, *(char *const *) at); break;
        case K_U64S: {
            const sb_u64s_t *a = at;
            rc = msgpack_pack_array (&pk, (uint32_t) a->count);
            for (size_t j = 0; j < a->count && rc == 0; j++)
                rc = msgpack_pack_uint64 (&pk, a->items[j]);
            break;
        }
        case K_STRS: {
            const sb_strs_t *a = at;
            rc = msgpack_pack_array (&pk, (uint32_t) a->count);
            for (size_t j = 0; j < a->count && rc == 0; j++)
                rc = s_pack_str (&pk, a->items[j]);
            break;
        }
        }
    }
    if (rc != 0) {
        msgpack_sbuffer_destroy (&sbuf);
        return -1;
    }
    *data_p = (uint8_t *) sbuf.data;    /* ownership passes to the caller */
    *size_p = sbuf.size;
    return 0;
}

static sb_proto_status_t
s_fail (sb_proto_status_t status, char *reason, size_t reason_size, const char *fmt, ...)
{
    if (reason && reason_size) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (reason, reason_size, fmt, ap);
        va_end (ap);
    }
    return status;
}

static char *
s_copy_str (const msgpack_object *o)
{
    char *s = malloc (o->via.str.size + 1);
    if (!s)
        return NULL;
    if (o->via.str.size)    /* msgpack-c leaves ptr NULL for "" */
        memcpy (s, o->via.str.ptr, o->via.str.size);
    s[o->via.str.size] = '\0';
    return s;
}

/* Decode one field; on error returns a status and fills reason. */
static sb_proto_status_t
s_decode_field (const s_message_t *m, const s_field_t *f, const msgpack_object *o,
                void *at, char *reason, size_t reason_size)
{
    switch (f->kind) {
    case K_U64:
        if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            goto wrong;
        *(uint64_t *) at = o->via.u64;
        return SB_PROTO_OK;
    case K_I64:
        if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT64_MAX)
            *(int64_t *) at = (int64_t) o->via.u64;
        else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
            *(int64_t *) at = o->via.i64;
        else
            goto wrong;
        return SB_PROTO_OK;
    case K_F64:
        if (o->type == MSGPACK_OBJECT_FLOAT64 || o->type == MSGPACK_OBJECT_FLOAT32)
            *(double *) at = o->via.f64;
        else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
            *(double *) at = (double) o->via.u64;
        else
            goto wrong;
        return SB_PROTO_OK;
    case K_STR:
        if (o->type != MSGPACK_OBJECT_STR)
            goto wrong;
        if (o->via.str.size > SB_PROTO_MAX_STR)
            return s_fail (SB_PROTO_EFIELD, reason, reason_size, "%s.%s: string of %u bytes exceeds %d",
                           m->name, f->name, o->via.str.size, SB_PROTO_MAX_STR);
        if (o->via.str.size && memchr (o->via.str.ptr, '\0', o->via.str.size))
            return s_fail (SB_PROTO_EFIELD, reason, reason_size, "%s.%s: string holds a NUL byte", m->name, f->name);
        if (!(*(char **) at = s_copy_str (o)))
            return SB_PROTO_ENOMEM;
        return SB_PROTO_OK;
    case K_U64S: {
        if (o->type != MSGPACK_OBJECT_ARRAY)
            goto wrong;
        sb_u64s_t *a = at;
        if (o->via.array.size > SB_PROTO_MAX_ARRAY)
            return s_fail (SB_PROTO_EFIELD, reason, reason_size, "%s.%s: %u items exceed %d",
                           m->name, f->name, o->via.array.size, SB_PROTO_MAX_ARRAY);
        a->items = calloc (o->via.array.size ? o->via.array.size : 1, sizeof (uint64_t));
        if (!a->items)
            return SB_PROTO_ENOMEM;
        for (uint32_t j = 0; j < o->via.array.size; j++) {
            if (o->via.array.ptr[j].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
                return s_fail (SB_PROTO_EFIELD, reason, reason_size, "%s.%s[%u]: not an unsigned integer",
                               m->name, f->name, j);
            a->items[j] = o->via.array.ptr[j].via.u64;
            a->count = j + 1;
        }
        return SB_PROTO_OK;
    }
    case K_STRS: {
        if (o->type != MSGPACK_OBJECT_ARRAY)
            goto wrong;
        sb_strs_t *a = at;
        if (o->via.array.size > SB_PROTO_MAX_ARRAY)
            return s_fail (SB_PROTO_EFIELD, reason, reason_size, "%s.%s: %u items exceed %d",
                           m->name, f->name, o->via.array.size, SB_PROTO_MAX_ARRAY);
        a->items = calloc (o->via.array.size ? o->via.array.size : 1, sizeof (char *));
        if (!a->items)
            return SB_PROTO_ENOMEM;
        for (uint32_t j = 0; j < o->via.array.size; j++) {
            const msgpack_object *s = &o->via.array.ptr[j];
            if (s->type != MSGPACK_OBJECT_STR || s->via.str.size > SB_PROTO_MAX_STR
                || (s->via.str.size && memchr (s->via.str.ptr, '\0', s->via.str.size)))
                return s_fail (SB_PROTO_EFIELD, reason, reason_size, "%s.%s[%u]: not a valid string",
                               m->name, f->name, j);
            if (!(a->items[j] = s_copy_str (s)))
                return SB_PROTO_ENOMEM;
            a->count = j + 1;
        }
        return SB_PROTO_OK;
    }
    }
wrong:
    return s_fail (SB_PROTO_EFIELD, reason, reason_size, "%s.%s: wrong msgpack type %d", m->name, f->name, o->type);
}

/* Walk the raw msgpack bytes before msgpack-c sees them. msgpack-c
 * allocates an array's or map's elements up front from the count in its
 * header, so a 10-byte frame claiming 2^32 elements would make it allocate
 * tens of GiB. Here every declared count and length must fit in the bytes
 * that remain (each element takes at least one byte), and nesting is
 * bounded. Returns the bytes the object spans, or 0 when it is invalid. */
#define S_MAX_DEPTH 8

static uint64_t
s_be (const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

static size_t
s_scan (const uint8_t *p, size_t avail, int depth)
{
    if (avail == 0 || depth > S_MAX_DEPTH)
        return 0;
    uint8_t t = p[0];
    uint64_t count = 0, len = 0;
    size_t head = 1;
    int container = 0;      /* 1 array, 2 map */
    int nbytes = 0;         /* big-endian length or count after the type byte */
    int ext = 0;            /* ext 8/16/32: a type byte follows the length */
    if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3)
        return 1;
    if ((t & 0xf0) == 0x90) { container = 1; count = t & 0x0f; }
    else if ((t & 0xf0) == 0x80) { container = 2; count = t & 0x0f; }
    else if ((t & 0xe0) == 0xa0) len = t & 0x1f;
    else switch (t) {
    case 0xcc: case 0xd0: head = 2; break;
    case 0xcd: case 0xd1: head = 3; break;
    case 0xca: case 0xce: case 0xd2: head = 5; break;
    case 0xcb: case 0xcf: case 0xd3: head = 9; break;
    case 0xd4: head = 3; break;                 /* fixext 1: type + 1 */
    case 0xd5: head = 4; break;
    case 0xd6: head = 6; break;
    case 0xd7: head = 10; break;
    case 0xd8: head = 18; break;
    case 0xc4: case 0xd9: nbytes = 1; break;
    case 0xc5: case 0xda: nbytes = 2; break;
    case 0xc6: case 0xdb: nbytes = 4; break;
    case 0xc7: nbytes = 1; ext = 1; break;
    case 0xc8: nbytes = 2; ext = 1; break;
    case 0xc9: nbytes = 4; ext = 1; break;
    case 0xdc: nbytes = 2; container = 1; break;
    case 0xdd: nbytes = 4; container = 1; break;
    case 0xde: nbytes = 2; container = 2; break;
    case 0xdf: nbytes = 4; container = 2; break;
    default: return 0;      /* 0xc1 is never used */
    }
    if (nbytes) {
        /* the length or count is read only once its bytes are known to be there */
        head = 1 + (size_t) nbytes + (size_t) ext;
        if (head > avail)
            return 0;
        if (container)
            count = s_be (p + 1, nbytes);
        else
            len = s_be (p + 1, nbytes);
    }
    if (head > avail)
        return 0;
    if (!container)
        return len <= avail - head ? head + (size_t) len : 0;
    uint64_t items = container == 2 ? count * 2 : count;
    if (items > avail - head)
        return 0;
    size_t at = head;
    for (uint64_t i = 0; i < items; i++) {
        size_t n = s_scan (p + at, avail - at, depth + 1);
        if (n == 0)
            return 0;
        at += n;
    }
    return at;
}

sb_proto_status_t
sb_proto_decode (const uint8_t *data, size_t size, sb_msg_t *msg,
                 char *reason, size_t reason_size, uint64_t *peer_version)
{
    memset (msg, 0, sizeof *msg);
    if (peer_version)
        *peer_version = 0;
    if (!data || size == 0)
        return s_fail (SB_PROTO_EMALFORMED, reason, reason_size, "empty frame");
    if (size > SB_PROTO_MAX_FRAME)
        return s_fail (SB_PROTO_EMALFORMED, reason, reason_size, "frame of %zu bytes exceeds %d", size, SB_PROTO_MAX_FRAME);

    size_t spans = s_scan (data, size, 0);
    if (spans == 0)
        return s_fail (SB_PROTO_EMALFORMED, reason, reason_size, "not a complete, bounded msgpack object");
    if (spans != size)
        return s_fail (SB_PROTO_EMALFORMED, reason, reason_size, "%zu trailing bytes after the message", size - spans);

    msgpack_unpacked up;
    msgpack_unpacked_init (&up);
    size_t off = 0;
    sb_proto_status_t st = SB_PROTO_OK;
    msgpack_unpack_return ur = msgpack_unpack_next (&up, (const char *) data, size, &off);
    if (ur != MSGPACK_UNPACK_SUCCESS) {
        st = s_fail (SB_PROTO_EMALFORMED, reason, reason_size, "not a complete msgpack object (%d)", (int) ur);
        goto done;
    }
    if (off != size) {
        st = s_fail (SB_PROTO_EMALFORMED, reason, reason_size, "%zu trailing bytes after the message", size - off);
        goto done;
    }
    const msgpack_object *root = &up.data;
    if (root->type != MSGPACK_OBJECT_ARRAY || root->via.array.size != 3
        || root->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER
        || root->via.array.ptr[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER
        || root->via.array.ptr[2].type != MSGPACK_OBJECT_ARRAY) {
        st = s_fail (SB_PROTO_EMALFORMED, reason, reason_size, "not [version, type, body]");
        goto done;
    }
    uint64_t version = root->via.array.ptr[0].via.u64;
    uint64_t type = root->via.array.ptr[1].via.u64;
    if (peer_version)
        *peer_version = version;
    const msgpack_object *body = &root->via.array.ptr[2];
    /* REJECT keeps its layout across versions, so a refused peer can read why. */
    if (version != SB_PROTO_VERSION && type != SB_MSG_REJECT) {
        st = s_fail (SB_PROTO_EVERSION, reason, reason_size, "protocol version %llu, expected %d",
                     (unsigned long long) version, SB_PROTO_VERSION);
        goto done;
    }
    const s_message_t *m = type < SB_MSG_MAX_ ? s_message ((int) type) : NULL;
    if (!m) {
        st = s_fail (SB_PROTO_ETYPE, reason, reason_size, "unknown message type %llu", (unsigned long long) type);
        goto done;
    }
    if (body->via.array.size != m->count) {
        st = s_fail (SB_PROTO_EFIELD, reason, reason_size, "%s has %u fields, expected %zu",
                     m->name, body->via.array.size, m->count);
        goto done;
    }
    msg->type = (sb_msg_type_t) type;
    uint8_t *base = s_body (msg);
    for (size_t i = 0; i < m->count && st == SB_PROTO_OK; i++)
        st = s_decode_field (m, &m->fields[i], &body->via.array.ptr[i], base + m->fields[i].offset,
                             reason, reason_size);
    if (st != SB_PROTO_OK)
        sb_proto_fini (msg);
done:
    msgpack_unpacked_destroy (&up);
    return st;
}

/* Read a msgpack non-negative integer at p (avail bytes): a uint, or an int
 * holding a value >= 0, which msgpack-c (and so the decoder) reads as a
 * positive integer too. Returns bytes used, 0 if not one. */
static size_t
s_read_uint (const uint8_t *p, size_t avail, uint64_t *v)
{
    if (avail < 1)
        return 0;
    uint8_t t = p[0];
    int n = t <= 0x7f ? 0 : t == 0xcc || t == 0xd0 ? 1 : t == 0xcd || t == 0xd1 ? 2
          : t == 0xce || t == 0xd2 ? 4 : t == 0xcf || t == 0xd3 ? 8 : -1;
    if (n < 0 || (size_t) n + 1 > avail)
        return 0;
    if (t >= 0xd0 && (p[1] & 0x80))
        return 0;           /* negative */
    *v = n == 0 ? t : s_be (p + 1, n);
    return (size_t) n + 1;
}

/* Read a msgpack array header at p (avail bytes): fixarray, array 16 or
 * array 32, any of which msgpack allows for any count. Returns bytes used,
 * 0 if not one. */
static size_t
s_read_array (const uint8_t *p, size_t avail, uint64_t *count)
{
    if (avail < 1)
        return 0;
    int n = (p[0] & 0xf0) == 0x90 ? 0 : p[0] == 0xdc ? 2 : p[0] == 0xdd ? 4 : -1;
    if (n < 0 || (size_t) n + 1 > avail)
        return 0;
    *count = n == 0 ? (uint64_t) (p[0] & 0x0f) : s_be (p + 1, n);
    return (size_t) n + 1;
}

int
sb_proto_peek (const uint8_t *data, size_t size, int *type, uint64_t *first)
{
    *type = SB_MSG_NONE;
    *first = 0;
    uint64_t count = 0, version = 0, t = 0;
    size_t at = 0, n;
    if (!data || !(n = s_read_array (data, size, &count)) || count != 3)
        return -1;
    at += n;
    if (!(n = s_read_uint (data + at, size - at, &version)) || version != SB_PROTO_VERSION)
        return -1;
    at += n;
    if (!(n = s_read_uint (data + at, size - at, &t)) || t == 0 || t >= SB_MSG_MAX_)
        return -1;
    at += n;
    if (!(n = s_read_array (data + at, size - at, &count)))
        return -1;
    at += n;
    *type = (int) t;
    if (count > 0)
        s_read_uint (data + at, size - at, first);
    return 0;
}

/* A string of a HELLO of another version, or "" when o is not one. */
static char *
s_any_str (const msgpack_object *o)
{
    if (o->type != MSGPACK_OBJECT_STR || o->via.str.size > SB_PROTO_MAX_STR)
        return strdup ("");
    char *s = malloc (o->via.str.size + 1);
    if (s) {
        memcpy (s, o->via.str.ptr, o->via.str.size);
        s[o->via.str.size] = '\0';
        for (size_t i = 0; i < o->via.str.size; i++)
            if (!s[i])
                s[i] = '?';     /* a NUL inside: the rest stays visible */
    }
    return s;
}

int
sb_proto_hello_any (const uint8_t *data, size_t size, char **host, char **software, int *other_layout)
{
    *host = *software = NULL;
    *other_layout = 0;
    if (!data || size == 0 || size > SB_PROTO_MAX_FRAME || s_scan (data, size, 0) != size)
        return -1;
    msgpack_unpacked up;
    msgpack_unpacked_init (&up);
    size_t off = 0;
    int rc = -1;
    if (msgpack_unpack_next (&up, (const char *) data, size, &off) == MSGPACK_UNPACK_SUCCESS && off == size) {
        const msgpack_object *root = &up.data;
        if (root->type == MSGPACK_OBJECT_ARRAY && root->via.array.size == 3
            && root->via.array.ptr[1].type == MSGPACK_OBJECT_POSITIVE_INTEGER
            && root->via.array.ptr[1].via.u64 == SB_MSG_HELLO && root->via.array.ptr[2].type == MSGPACK_OBJECT_ARRAY
            && root->via.array.ptr[2].via.array.size >= 1) {
            const msgpack_object_array *body = &root->via.array.ptr[2].via.array;
            const msgpack_object none = { .type = MSGPACK_OBJECT_NIL };
            *host = s_any_str (&body->ptr[0]);
            *software = s_any_str (body->size >= 5 ? &body->ptr[4] : &none);
            *other_layout = body->size != s_message (SB_MSG_HELLO)->count;
            if (*host && *software)
                rc = 0;
            else {
                free (*host);
                free (*software);
                *host = *software = NULL;
            }
        }
    }
    msgpack_unpacked_destroy (&up);
    return rc;
}

void
sb_proto_fini (sb_msg_t *msg)
{
    if (!msg)
        return;
    const s_message_t *m = s_message (msg->type);
    if (m) {
        uint8_t *base = s_body (msg);
        for (size_t i = 0; i < m->count; i++) {
            void *at = base + m->fields[i].offset;
            if (m->fields[i].kind == K_STR)
                free (*(char **) at);
            else if (m->fields[i].kind == K_U64S)
                free (((sb_u64s_t *) at)->items);
            else if (m->fields[i].kind == K_STRS) {
                sb_strs_t *a = at;
                for (size_t j = 0; j < a->count; j++)
                    free (a->items[j]);
                free (a->items);
            }
        }
    }
    memset (msg, 0, sizeof *msg);
}
