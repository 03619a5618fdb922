/* format_npy: numpy's .npy (one uint8 array) and .npz (a zip of x.npy and
 * y.npy, as DLIO's np.savez(x=records, y=labels)).
 *
 * npy:  header ("\x93NUMPY" 1.0, dict padded to 64 bytes) then the array
 *       data, the bytes of the content stream in order: as DLIO's
 *       generators shape it, (dims..., samples) of dataset.record_element_type
 *       (dims: dataset.record_dims, or dim1 x dim2 from the record length),
 *       or (samples, record) of uint8 when opened without a shape.
 * npz:  a stored (uncompressed) zip: local header of x.npy (flag 8: its
 *       CRC-32 follows in a data descriptor, so the writer streams it), the
 *       x.npy bytes, the descriptor, y.npy (int64 zeros, shape (samples,))
 *       with its local header, the central directory and its end record.
 *       Everything after the array data is built at open and only its two
 *       CRC fields wait for the data's CRC. Objects are limited to 4 GiB
 *       (no zip64). */
#include "format.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define S_CHUNK 65536

size_t
sb_npy_header (uint8_t *out, size_t room, const char *descr, const char *shape, size_t growth)
{
    char dict[400];
    int n = snprintf (dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    if (n < 0 || (size_t) n >= sizeof dict)
        return 0;
    size_t total = 10 + (size_t) n + growth + 1;
    total = (total + 63) / 64 * 64;
    /* the length field is 16 bits (version 1.0) */
    if (total > room || total - 10 > 0xffff)
        return 0;
    size_t hlen = total - 10;
    memcpy (out, "\x93NUMPY\x01\x00", 8);
    out[8] = (uint8_t) (hlen & 0xff);
    out[9] = (uint8_t) (hlen >> 8);
    memcpy (out + 10, dict, (size_t) n);
    memset (out + 10 + n, ' ', hlen - (size_t) n - 1);
    out[total - 1] = '\n';
    return total;
}

/* The x array's type and shape: DLIO's (dims..., samples) of its element
 * type (npy_generator.py, npz_generator.py: the sample index last), or
 * (samples, record) of uint8 without a shape (sb_format_open_with). */
static const char *
s_x_shape (const sb_format_obj_t *obj, char *shape, size_t size)
{
    if (obj->ndims == 0) {
        snprintf (shape, size, "(%llu, %llu)", (unsigned long long) obj->records, (unsigned long long) obj->record);
        return "|u1";
    }
    size_t at = 0;
    shape[at++] = '(';
    for (size_t k = 0; k < obj->ndims && at < size; k++)
        at += (size_t) snprintf (shape + at, size - at, "%llu, ", (unsigned long long) obj->dims[k]);
    if (at < size)
        snprintf (shape + at, size - at, "%llu)", (unsigned long long) obj->records);
    return obj->descr ? obj->descr : "|u1";
}

static uint64_t
s_payload_len (const sb_format_obj_t *obj)
{
    return obj->records * obj->record;
}

/* ---- shared: head | payload | tail, with a CRC-32 over the payload ---- */

static void s_npz_patch (sb_format_obj_t *obj);

static void
s_crc_update (sb_format_obj_t *obj, uint64_t at, const uint8_t *buf, size_t len)
{
    if (obj->crc_done || at != obj->crc_upto)
        return;
    obj->crc = (uint32_t) crc32 (obj->crc, buf, (uInt) len);
    obj->crc_upto += len;
    if (obj->crc_upto == s_payload_len (obj)) {
        obj->crc_done = 1;
        s_npz_patch (obj);
    }
}

static void
s_crc_finish (sb_format_obj_t *obj)
{
    uint8_t chunk[S_CHUNK];
    while (!obj->crc_done) {
        uint64_t left = s_payload_len (obj) - obj->crc_upto;
        size_t n = left < S_CHUNK ? (size_t) left : S_CHUNK;
        sb_content_fill (obj->seed, obj->crc_upto, chunk, n);
        s_crc_update (obj, obj->crc_upto, chunk, n);
    }
}

static void
s_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    uint64_t payload = s_payload_len (obj), tail_at = obj->payload_at + payload;
    while (len) {
        size_t n;
        if (offset < obj->head_len) {
            n = obj->head_len - offset < len ? (size_t) (obj->head_len - offset) : len;
            memcpy (buf, obj->head + offset, n);
        }
        else if (offset < tail_at) {
            uint64_t at = offset - obj->payload_at;
            n = payload - at < len ? (size_t) (payload - at) : len;
            sb_content_fill (obj->seed, at, buf, n);
            if (obj->tail)
                s_crc_update (obj, at, buf, n);
        }
        else {
            if (obj->tail && !obj->crc_done)
                s_crc_finish (obj);
            uint64_t at = offset - tail_at;
            n = len;    /* callers stay within obj->size */
            memcpy (buf, obj->tail + at, n);
        }
        offset += n;
        buf += n;
        len -= n;
    }
}

/* ---- npy ---- */

static int
s_npy_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    char shape[256];
    const char *descr = s_x_shape (obj, shape, sizeof shape);
    obj->head_len = sb_npy_header (obj->head, sizeof obj->head, descr, shape, 0);
    if (!obj->head_len) {
        snprintf (err, err_size, "npy header does not fit");
        return -1;
    }
    obj->payload_at = obj->head_len;
    obj->size = obj->head_len + s_payload_len (obj);
    obj->crc_done = 1;
    return 0;
}

const sb_format_ops_t sb_format_npy = { "npy", s_npy_open, s_fill, NULL };

/* ---- npz ---- */

static uint8_t *
s_le16 (uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
    return p + 2;
}

static uint8_t *
s_le32 (uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t) (v >> (8 * i));
    return p + 4;
}

#define S_DOS_DATE 0x21     /* 1980-01-01: reproducible bytes */

static uint8_t *
s_local_header (uint8_t *p, const char *name, uint32_t flags, uint32_t crc, uint32_t size)
{
    p = s_le32 (p, 0x04034b50);
    p = s_le16 (p, 20);
    p = s_le16 (p, flags);
    p = s_le16 (p, 0);      /* stored */
    p = s_le16 (p, 0);
    p = s_le16 (p, S_DOS_DATE);
    p = s_le32 (p, crc);
    p = s_le32 (p, size);
    p = s_le32 (p, size);
    p = s_le16 (p, (uint32_t) strlen (name));
    p = s_le16 (p, 0);
    memcpy (p, name, strlen (name));
    return p + strlen (name);
}

static uint8_t *
s_central (uint8_t *p, const char *name, uint32_t flags, uint32_t crc, uint32_t size, uint32_t local_at)
{
    p = s_le32 (p, 0x02014b50);
    p = s_le16 (p, 20);
    p = s_le16 (p, 20);
    p = s_le16 (p, flags);
    p = s_le16 (p, 0);
    p = s_le16 (p, 0);
    p = s_le16 (p, S_DOS_DATE);
    p = s_le32 (p, crc);
    p = s_le32 (p, size);
    p = s_le32 (p, size);
    p = s_le16 (p, (uint32_t) strlen (name));
    p = s_le16 (p, 0);
    p = s_le16 (p, 0);
    p = s_le16 (p, 0);
    p = s_le16 (p, 0);
    p = s_le32 (p, 0);
    p = s_le32 (p, local_at);
    memcpy (p, name, strlen (name));
    return p + strlen (name);
}

/* offsets of the x CRC in the tail: data descriptor, central entry */
#define S_DESC_CRC 4

static void
s_npz_patch (sb_format_obj_t *obj)
{
    if (!obj->tail)
        return;
    s_le32 (obj->tail + S_DESC_CRC, obj->crc);
    /* the central directory starts 22 + 46 + 5 + 46 + 5 bytes before the end */
    s_le32 (obj->tail + obj->tail_len - 22 - 2 * (46 + 5) + 16, obj->crc);
}

static int
s_npz_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    uint8_t hx[448], hy[256];
    char shape[256], yshape[32];
    const char *descr = s_x_shape (obj, shape, sizeof shape);
    snprintf (yshape, sizeof yshape, "(%llu,)", (unsigned long long) obj->records);
    size_t hx_len = sb_npy_header (hx, sizeof hx, descr, shape, 0);
    size_t hy_len = sb_npy_header (hy, sizeof hy, "<i8", yshape, 0);
    uint64_t x_size = hx_len + s_payload_len (obj), y_size = hy_len + 8 * obj->records;
    uint64_t total = 35 + x_size + 16 + 35 + y_size + 2 * (46 + 5) + 22;
    if (!hx_len || !hy_len || total >= 0xffffffffull) {
        snprintf (err, err_size, "npz object of %llu bytes: over 4 GiB needs zip64, which is not written",
                  (unsigned long long) total);
        return -1;
    }
    uint8_t *p = s_local_header (obj->head, "x.npy", 8, 0, (uint32_t) x_size);
    memcpy (p, hx, hx_len);
    obj->head_len = (size_t) (p - obj->head) + hx_len;
    obj->payload_at = obj->head_len;
    obj->tail_len = (size_t) (16 + 35 + y_size + 2 * (46 + 5) + 22);
    if (!(obj->tail = calloc (1, obj->tail_len))) {
        snprintf (err, err_size, "out of memory for the npz directory");
        return -1;
    }
    uint32_t y_crc = (uint32_t) crc32 (0, hy, (uInt) hy_len);
    uint8_t zeros[256] = { 0 };
    for (uint64_t left = 8 * obj->records; left;) {
        size_t n = left < sizeof zeros ? (size_t) left : sizeof zeros;
        y_crc = (uint32_t) crc32 (y_crc, zeros, (uInt) n);
        left -= n;
    }
    uint32_t y_at = (uint32_t) (35 + x_size + 16), cd_at = (uint32_t) (y_at + 35 + y_size);
    p = obj->tail;
    p = s_le32 (p, 0x08074b50);
    p = s_le32 (p, 0);      /* CRC, patched */
    p = s_le32 (p, (uint32_t) x_size);
    p = s_le32 (p, (uint32_t) x_size);
    p = s_local_header (p, "y.npy", 0, y_crc, (uint32_t) y_size);
    memcpy (p, hy, hy_len);
    p += hy_len + 8 * obj->records;     /* zeros from calloc */
    p = s_central (p, "x.npy", 8, 0, (uint32_t) x_size, 0);
    p = s_central (p, "y.npy", 0, y_crc, (uint32_t) y_size, y_at);
    p = s_le32 (p, 0x06054b50);
    p = s_le16 (p, 0);
    p = s_le16 (p, 0);
    p = s_le16 (p, 2);
    p = s_le16 (p, 2);
    p = s_le32 (p, 2 * (46 + 5));
    p = s_le32 (p, cd_at);
    p = s_le16 (p, 0);
    obj->size = total;
    /* the member's CRC covers its npy header too */
    obj->crc = (uint32_t) crc32 (0, hx, (uInt) hx_len);
    obj->crc_upto = 0;
    if (s_payload_len (obj) == 0) {
        obj->crc_done = 1;
        s_npz_patch (obj);
    }
    return 0;
}

const sb_format_ops_t sb_format_npz = { "npz", s_npz_open, s_fill, NULL };
