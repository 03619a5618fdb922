/* format_tfrecord: TFRecord files, one record per sample.
 *
 * Record j of an object: uint64 length (little endian), uint32 masked
 * CRC-32C of those 8 bytes, the record's data (record bytes: bytes
 * [j*record, (j+1)*record) of the content stream), uint32 masked CRC-32C
 * of the data. All records of an object have the same length, so record j
 * starts at j * (record + 16) and a reader (or the coordinator's equal
 * per-sample ranges) finds it without an index. The data CRC is summed
 * while a caller fills a record in order, else computed when asked. */
#include "format.h"
#include "util.h"

#include <string.h>

#define S_FRAME 16

static int
s_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    obj->size = obj->records * (obj->record + S_FRAME);
    uint8_t *p = obj->head;     /* the 12-byte header, the same for every record */
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t) (obj->record >> (8 * i));
    uint32_t c = sb_format_masked_crc (sb_format_crc32c (0, p, 8));
    for (int i = 0; i < 4; i++)
        p[8 + i] = (uint8_t) (c >> (8 * i));
    obj->head_len = 12;
    obj->crc_record = UINT64_MAX;
    return 0;
}

static uint32_t
s_record_crc (sb_format_obj_t *obj, uint64_t j)
{
    if (obj->crc_record == j && obj->crc_upto == obj->record)
        return obj->crc;
    uint8_t chunk[65536];
    uint32_t c = 0;
    for (uint64_t k = 0; k < obj->record;) {
        size_t n = obj->record - k < sizeof chunk ? (size_t) (obj->record - k) : sizeof chunk;
        sb_content_fill (obj->seed, j * obj->record + k, chunk, n);
        c = sb_format_crc32c (c, chunk, n);
        k += n;
    }
    obj->crc_record = j;
    obj->crc_upto = obj->record;
    obj->crc = c;
    return c;
}

static void
s_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    uint64_t frame = obj->record + S_FRAME;
    while (len) {
        uint64_t j = offset / frame, r = offset % frame;
        size_t n;
        if (r < 12) {
            n = 12 - r < len ? (size_t) (12 - r) : len;
            memcpy (buf, obj->head + r, n);
        }
        else if (r < 12 + obj->record) {
            uint64_t k = r - 12;
            n = obj->record - k < len ? (size_t) (obj->record - k) : len;
            sb_content_fill (obj->seed, j * obj->record + k, buf, n);
            if (k == 0) {
                obj->crc_record = j;
                obj->crc_upto = 0;
                obj->crc = 0;
            }
            if (obj->crc_record == j && obj->crc_upto == k) {
                obj->crc = sb_format_crc32c (obj->crc, buf, n);
                obj->crc_upto += n;
            }
        }
        else {
            uint64_t k = r - 12 - obj->record;
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
