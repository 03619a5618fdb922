/* format_tfrecord: TFRecord files of tf.train.Example records, one a
 * sample, as DLIO's tf_generator writes them.
 *
 * Record j of an object: uint64 length (little endian), uint32 masked
 * CRC-32C of those 8 bytes, the record's data, uint32 masked CRC-32C of
 * the data. The data is a serialized tf.train.Example whose features are
 * DLIO's: 'image', a BytesList of one value, the sample's bytes (record
 * bytes: bytes [j*record, (j+1)*record) of the content stream), then
 * 'size', an Int64List of one value, the record's byte count (DLIO's
 * size_bytes). So the data is prefix (the protobuf tags and lengths up to
 * the image bytes) | image | suffix (the 'size' entry), the same prefix
 * and suffix in every record of an object. All records of an object have
 * the same length, so record j starts at j * frame and a reader (or the
 * coordinator's equal per-sample ranges) finds it without an index. The
 * data CRC is summed while a caller fills a record in order, else
 * computed when asked.
 *
 * obj->head: [0, 12) the length and its CRC, [12, 12 + prefix) the
 * prefix; [S_SUFFIX_AT, + suffix) the suffix. u[0] prefix bytes, u[1]
 * suffix bytes, u[2] the data's length. */
#include "format.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

#define S_SUFFIX_AT 256

static uint8_t *
s_varint (uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t) (v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t) v;
    return p;
}

/* field number f, wire type 2 (length delimited), its length */
static uint8_t *
s_delimited (uint8_t *p, unsigned f, uint64_t len)
{
    *p++ = (uint8_t) (f << 3 | 2);
    return s_varint (p, len);
}

static uint64_t
s_delimited_len (uint64_t len)
{
    return 1 + sb_varint_len (len) + len;
}

static int
s_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    uint64_t image = obj->record, size_value = obj->record;
    /* 'image' entry: Features.feature map entry { key = 1: "image", value = 2: Feature
     * { bytes_list = 1: BytesList { value = 1: bytes } } } */
    uint64_t bytes_list = s_delimited_len (image);
    uint64_t feature1 = s_delimited_len (bytes_list);
    uint64_t entry1 = s_delimited_len (5) + s_delimited_len (feature1);
    /* 'size' entry: { key: "size", value: Feature { int64_list = 3: Int64List { value = 1: packed } } } */
    uint64_t packed = sb_varint_len (size_value);
    uint64_t int64_list = s_delimited_len (packed);
    uint64_t feature2 = s_delimited_len (int64_list);
    uint64_t entry2 = s_delimited_len (4) + s_delimited_len (feature2);
    uint64_t features = s_delimited_len (entry1) + s_delimited_len (entry2);
    uint64_t example = s_delimited_len (features);      /* Example { features = 1 } */

    uint8_t *p = obj->head + 12;
    p = s_delimited (p, 1, features);
    p = s_delimited (p, 1, entry1);
    p = s_delimited (p, 1, 5);
    memcpy (p, "image", 5);
    p += 5;
    p = s_delimited (p, 2, feature1);
    p = s_delimited (p, 1, bytes_list);
    p = s_delimited (p, 1, image);
    obj->u[0] = (uint64_t) (p - obj->head - 12);
    uint8_t *q = obj->head + S_SUFFIX_AT;
    q = s_delimited (q, 1, entry2);
    q = s_delimited (q, 1, 4);
    memcpy (q, "size", 4);
    q += 4;
    q = s_delimited (q, 2, feature2);
    q = s_delimited (q, 3, int64_list);
    q = s_delimited (q, 1, packed);
    q = s_varint (q, size_value);
    obj->u[1] = (uint64_t) (q - obj->head - S_SUFFIX_AT);
    obj->u[2] = example;
    if (obj->u[0] + obj->u[1] + image != example) {
        snprintf (err, err_size, "tfrecord: Example of %llu bytes laid out as %llu", (unsigned long long) example,
                  (unsigned long long) (obj->u[0] + obj->u[1] + image));
        return -1;
    }
    obj->size = obj->records * (example + 16);
    for (int i = 0; i < 8; i++)
        obj->head[i] = (uint8_t) (example >> (8 * i));
    uint32_t c = sb_format_masked_crc (sb_format_crc32c (0, obj->head, 8));
    for (int i = 0; i < 4; i++)
        obj->head[8 + i] = (uint8_t) (c >> (8 * i));
    obj->head_len = 12 + (size_t) obj->u[0];
    obj->crc_record = UINT64_MAX;
    return 0;
}

/* CRC-32C of record j's data: prefix, image bytes, suffix. */
static uint32_t
s_record_crc (sb_format_obj_t *obj, uint64_t j)
{
    if (!(obj->crc_record == j && obj->crc_upto == obj->record)) {
        uint8_t chunk[65536];
        uint32_t c = sb_format_crc32c (0, obj->head + 12, (size_t) obj->u[0]);
        for (uint64_t k = 0; k < obj->record;) {
            size_t n = obj->record - k < sizeof chunk ? (size_t) (obj->record - k) : sizeof chunk;
            sb_content_fill (obj->seed, j * obj->record + k, chunk, n);
            c = sb_format_crc32c (c, chunk, n);
            k += n;
        }
        obj->crc_record = j;
        obj->crc_upto = obj->record;
        obj->crc = c;
    }
    return sb_format_crc32c (obj->crc, obj->head + S_SUFFIX_AT, (size_t) obj->u[1]);
}

static void
s_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    uint64_t frame = obj->u[2] + 16, image_at = obj->head_len, suffix_at = image_at + obj->record,
             crc_at = 12 + obj->u[2];
    while (len) {
        uint64_t j = offset / frame, r = offset % frame;
        size_t n;
        if (r < image_at) {
            n = image_at - r < len ? (size_t) (image_at - r) : len;
            memcpy (buf, obj->head + r, n);
        }
        else if (r < suffix_at) {
            uint64_t k = r - image_at;
            n = obj->record - k < len ? (size_t) (obj->record - k) : len;
            sb_content_fill (obj->seed, j * obj->record + k, buf, n);
            if (k == 0) {
                obj->crc_record = j;
                obj->crc_upto = 0;
                obj->crc = sb_format_crc32c (0, obj->head + 12, (size_t) obj->u[0]);
            }
            if (obj->crc_record == j && obj->crc_upto == k) {
                obj->crc = sb_format_crc32c (obj->crc, buf, n);
                obj->crc_upto += n;
            }
        }
        else if (r < crc_at) {
            uint64_t k = r - suffix_at;
            n = crc_at - r < len ? (size_t) (crc_at - r) : len;
            memcpy (buf, obj->head + S_SUFFIX_AT + k, n);
        }
        else {
            uint64_t k = r - crc_at;
            uint8_t foot[4];
            uint32_t c = sb_format_masked_crc (s_record_crc (obj, j));
            for (int i = 0; i < 4; i++)
                foot[i] = (uint8_t) (c >> (8 * i));
            n = 4 - k < len ? (size_t) (4 - k) : len;
            memcpy (buf, foot + k, n);
        }
        offset += n;
        buf += n;
        len -= n;
    }
}

const sb_format_ops_t sb_format_tfrecord = { "tfrecord", s_open, s_fill, NULL };
