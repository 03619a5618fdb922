/* proto: the shardbench wire protocol codec.
 *
 * Messages are defined once in schemas/messages.def. This header turns that
 * file into one struct per message (sb_msg_<name>_t), a type enum
 * (SB_MSG_<NAME>) and a tagged union sb_msg_t. The codec is table-driven from
 * the same definition. A decoder never trusts its input: every failure is a
 * status code plus a reason, never an assert.
 */
#ifndef SB_PROTO_H
#define SB_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define SB_PROTO_VERSION 17

/* Limits that bound what a decoder accepts. ZMQ_MAXMSGSIZE is set to
 * SB_PROTO_MAX_FRAME on every socket, so larger frames never reach us. */
#define SB_PROTO_MAX_FRAME   (16 * 1024 * 1024)
#define SB_PROTO_MAX_STR     32767   /* bytes; dataset.parquet.columns of ~1500 columns fits */
#define SB_PROTO_MAX_ARRAY   65536

typedef struct {
    size_t    count;
    uint64_t *items;        /* owned */
} sb_u64s_t;

typedef struct {
    size_t  count;
    char  **items;          /* owned, each item owned */
} sb_strs_t;

#define SB_CTYPE_U64  uint64_t
#define SB_CTYPE_I64  int64_t
#define SB_CTYPE_F64  double
#define SB_CTYPE_STR  char *
#define SB_CTYPE_U64S sb_u64s_t
#define SB_CTYPE_STRS sb_strs_t

typedef enum {
    SB_MSG_NONE = 0,
#define SB_MSG(name, NAME, id, doc) SB_MSG_##NAME = id,
#define SB_FIELD(name, KIND, field)
#define SB_END(name)
#include "messages.def"
#undef SB_MSG
#undef SB_FIELD
#undef SB_END
    SB_MSG_MAX_
} sb_msg_type_t;

/* One struct per message. Strings and arrays are owned by the struct. */
#define SB_MSG(name, NAME, id, doc) typedef struct { int unused_;
#define SB_FIELD(name, KIND, field) SB_CTYPE_##KIND field;
#define SB_END(name) } sb_msg_##name##_t;
#include "messages.def"
#undef SB_MSG
#undef SB_FIELD
#undef SB_END

typedef struct {
    sb_msg_type_t type;
    union {
#define SB_MSG(name, NAME, id, doc) sb_msg_##name##_t name;
#define SB_FIELD(name, KIND, field)
#define SB_END(name)
#include "messages.def"
#undef SB_MSG
#undef SB_FIELD
#undef SB_END
    } u;
} sb_msg_t;

typedef enum {
    SB_PROTO_OK = 0,
    SB_PROTO_EMALFORMED,    /* not msgpack, or not [version, type, body] */
    SB_PROTO_EVERSION,      /* another protocol version */
    SB_PROTO_ETYPE,         /* unknown message type */
    SB_PROTO_EFIELD,        /* wrong field count, field type or oversized field */
    SB_PROTO_ENOMEM
} sb_proto_status_t;

/* Name of a message type ("HELLO"), or "?" for an unknown one. Borrowed. */
const char *sb_proto_type_name (int type);

/* Encode msg into a newly allocated buffer. On success returns 0 and sets
 * *data_p (caller frees with free()) and *size_p; -1 on allocation failure. */
int sb_proto_encode (const sb_msg_t *msg, uint8_t **data_p, size_t *size_p);

/* Decode one frame into *msg (which the caller then owns and must release
 * with sb_proto_fini). On failure msg is left empty, reason (if not NULL,
 * reason_size bytes) says why, and *peer_version (if not NULL) holds the
 * version the sender spoke when it could be read (else 0). */
sb_proto_status_t sb_proto_decode (const uint8_t *data, size_t size, sb_msg_t *msg,
                                   char *reason, size_t reason_size,
                                   uint64_t *peer_version);

/* Read only the envelope of a frame: its type, and the first body field
 * when that is an unsigned integer (*first, else 0). For routing a frame
 * without decoding it (the receiver decodes it fully). Returns 0, or -1 when
 * the frame is not a [version, type, [...]] of this protocol version. */
int sb_proto_peek (const uint8_t *data, size_t size, int *type, uint64_t *first);

/* A HELLO of any protocol version: its host and software, where every
 * version has put them (the body's first and fifth fields, strings), to
 * name a worker that speaks another version. Returns 0 with *host and
 * *software (owned, "" when the frame has none there) and *other_layout
 * (1 when its body has another number of fields than this version's HELLO:
 * another build, whatever version it says), or -1 when data is not a HELLO
 * of that shape or memory ran out. */
int sb_proto_hello_any (const uint8_t *data, size_t size, char **host, char **software, int *other_layout);

/* Release what a decoded or built message owns; leaves it SB_MSG_NONE. */
void sb_proto_fini (sb_msg_t *msg);

/* Build helpers: set an owned string field from a borrowed one (copies);
 * return 0 or -1 on allocation failure. */
int sb_proto_set_str (char **field, const char *value);

#endif
