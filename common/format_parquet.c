/* format_parquet: Apache Parquet files, written without a parquet library
 * (Debian has none): PLAIN encoding, no compression, one data page (v1)
 * per column chunk, a Thrift compact-protocol footer.
 *
 * One row per sample; two REQUIRED columns:
 *   label  INT64                           the row's index in the file
 *   data   FIXED_LEN_BYTE_ARRAY(record)    bytes [j*record, (j+1)*record)
 *                                          of the content stream for row j
 * Rows are grouped by S_GROUP_BYTES of data (at least one row a group), as
 * DLIO's row_group_size bounds a group. Layout:
 *   "PAR1" | per group: [page header, labels][page header, data] | footer |
 *   footer length (uint32 LE) | "PAR1"
 * Every group but the last has the same size, so the byte at any offset is
 * computed from the offset; page headers and the footer are built at open
 * (they depend only on the sizes). */
#include "format.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_GROUP_BYTES (1u << 20)

/* ---- Thrift compact protocol, into a growable buffer ---- */

typedef struct {
    uint8_t *data;
    size_t   len, cap;
    int      failed;
    int16_t  last[16];      /* last field id, per struct nesting level */
    int      depth;
} s_out_t;

enum { T_I32 = 5, T_I64 = 6, T_BINARY = 8, T_LIST = 9, T_STRUCT = 12 };

static void
s_byte (s_out_t *o, uint8_t b)
{
    if (o->failed)
        return;
    if (o->len == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 1024;
        uint8_t *p = realloc (o->data, cap);
        if (!p) {
            o->failed = 1;
            return;
        }
        o->data = p;
        o->cap = cap;
    }
    o->data[o->len++] = b;
}

static void
s_varint (s_out_t *o, uint64_t v)
{
    while (v >= 0x80) {
        s_byte (o, (uint8_t) (v | 0x80));
        v >>= 7;
    }
    s_byte (o, (uint8_t) v);
}

static void
s_field (s_out_t *o, int16_t id, int type)
{
    int16_t delta = (int16_t) (id - o->last[o->depth]);
    if (delta > 0 && delta <= 15)
        s_byte (o, (uint8_t) (delta << 4 | type));
    else {
        s_byte (o, (uint8_t) type);
        s_varint (o, (uint64_t) (((int64_t) id << 1) ^ ((int64_t) id >> 63)));
    }
    o->last[o->depth] = id;
}

static void
s_int (s_out_t *o, int16_t id, int type, int64_t v)
{
    s_field (o, id, type);
    s_varint (o, (uint64_t) ((v << 1) ^ (v >> 63)));
}

static void
s_string (s_out_t *o, int16_t id, const char *str)
{
    s_field (o, id, T_BINARY);
    s_varint (o, strlen (str));
    for (const char *p = str; *p; p++)
        s_byte (o, (uint8_t) *p);
}

static void
s_list (s_out_t *o, int16_t id, int elem_type, size_t n)
{
    s_field (o, id, T_LIST);
    if (n < 15)
        s_byte (o, (uint8_t) (n << 4 | (size_t) elem_type));
    else {
        s_byte (o, (uint8_t) (0xf0 | elem_type));
        s_varint (o, n);
    }
}

/* a struct as a field (id > 0) or as a list element (id 0) */
static void
s_begin (s_out_t *o, int16_t id)
{
    if (id)
        s_field (o, id, T_STRUCT);
    o->last[++o->depth] = 0;
}

static void
s_end (s_out_t *o)
{
    s_byte (o, 0);
    o->depth--;
}

/* ---- layout ---- */

enum { U_ROWS_PER_GROUP, U_GROUPS, U_GROUP_SIZE, U_HL_FULL, U_HD_FULL, U_HL_LAST, U_HD_LAST, U_FOOTER_AT };

/* DataPage header of a page of rows values of value_size bytes */
static void
s_page_header (s_out_t *o, uint64_t rows, uint64_t value_size)
{
    int64_t bytes = (int64_t) (rows * value_size);
    o->depth = 0;
    o->last[0] = 0;
    s_int (o, 1, T_I32, 0);             /* type: DATA_PAGE */
    s_int (o, 2, T_I32, bytes);         /* uncompressed_page_size */
    s_int (o, 3, T_I32, bytes);         /* compressed_page_size */
    s_begin (o, 5);                     /* data_page_header */
    s_int (o, 1, T_I32, (int64_t) rows);    /* num_values */
    s_int (o, 2, T_I32, 0);             /* encoding: PLAIN */
    s_int (o, 3, T_I32, 3);             /* definition_level_encoding: RLE */
    s_int (o, 4, T_I32, 3);             /* repetition_level_encoding: RLE */
    s_end (o);
    s_byte (o, 0);
}

static int
s_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    uint64_t rows = obj->records, rec = obj->record;
    uint64_t per = S_GROUP_BYTES / rec ? S_GROUP_BYTES / rec : 1;
    if (per > rows)
        per = rows;
    uint64_t groups = (rows + per - 1) / per, last_rows = rows - (groups - 1) * per;
    if (rec > 0x7fffffffull || per * rec > 0x7fffffffull || per * 8 > 0x7fffffffull) {
        snprintf (err, err_size, "parquet: a page of %llu x %llu bytes is over 2 GiB", (unsigned long long) per,
                  (unsigned long long) rec);
        return -1;
    }
    /* the four page headers go into head: label, data for full and last groups */
    s_out_t h = { 0 };
    size_t at[5];
    at[0] = 0;
    s_page_header (&h, per, 8);
    at[1] = h.len;
    s_page_header (&h, per, rec);
    at[2] = h.len;
    s_page_header (&h, last_rows, 8);
    at[3] = h.len;
    s_page_header (&h, last_rows, rec);
    at[4] = h.len;
    if (h.failed || h.len > sizeof obj->head) {
        free (h.data);
        snprintf (err, err_size, "parquet: out of memory");
        return -1;
    }
    memcpy (obj->head, h.data, h.len);
    obj->head_len = h.len;
    free (h.data);
    uint64_t hl = at[1], hd = at[2] - at[1], hl_last = at[3] - at[2], hd_last = at[4] - at[3];
    uint64_t group_size = hl + per * 8 + hd + per * rec;
    uint64_t footer_at = 4 + (groups - 1) * group_size + hl_last + last_rows * 8 + hd_last + last_rows * rec;
    obj->u[U_ROWS_PER_GROUP] = per;
    obj->u[U_GROUPS] = groups;
    obj->u[U_GROUP_SIZE] = group_size;
    obj->u[U_HL_FULL] = hl;
    obj->u[U_HD_FULL] = hd;
    obj->u[U_HL_LAST] = hl_last;
    obj->u[U_HD_LAST] = hd_last;
    obj->u[U_FOOTER_AT] = footer_at;
    /* FileMetaData */
    s_out_t f = { 0 };
    s_int (&f, 1, T_I32, 1);                        /* version */
    s_list (&f, 2, T_STRUCT, 3);                    /* schema */
    s_begin (&f, 0);
    s_string (&f, 4, "schema");
    s_int (&f, 5, T_I32, 2);                        /* num_children */
    s_end (&f);
    s_begin (&f, 0);
    s_int (&f, 1, T_I32, 2);                        /* INT64 */
    s_int (&f, 3, T_I32, 0);                        /* REQUIRED */
    s_string (&f, 4, "label");
    s_end (&f);
    s_begin (&f, 0);
    s_int (&f, 1, T_I32, 7);                        /* FIXED_LEN_BYTE_ARRAY */
    s_int (&f, 2, T_I32, (int64_t) rec);            /* type_length */
    s_int (&f, 3, T_I32, 0);
    s_string (&f, 4, "data");
    s_end (&f);
    s_int (&f, 3, T_I64, (int64_t) rows);           /* num_rows */
    s_list (&f, 4, T_STRUCT, groups);               /* row_groups */
    for (uint64_t g = 0; g < groups; g++) {
        int lastg = g == groups - 1;
        uint64_t n = lastg ? last_rows : per, at_g = 4 + g * group_size;
        uint64_t chunk[2] = { (lastg ? hl_last : hl) + n * 8, (lastg ? hd_last : hd) + n * rec };
        uint64_t chunk_at[2] = { at_g, at_g + chunk[0] };
        const char *names[2] = { "label", "data" };
        s_begin (&f, 0);
        s_list (&f, 1, T_STRUCT, 2);                /* columns */
        for (int c = 0; c < 2; c++) {
            s_begin (&f, 0);
            s_int (&f, 2, T_I64, (int64_t) chunk_at[c]);    /* file_offset */
            s_begin (&f, 3);                        /* meta_data */
            s_int (&f, 1, T_I32, c ? 7 : 2);        /* type */
            s_list (&f, 2, T_I32, 1);               /* encodings */
            s_varint (&f, 0);                       /* PLAIN (zigzag 0) */
            s_list (&f, 3, T_BINARY, 1);            /* path_in_schema */
            s_varint (&f, strlen (names[c]));
            for (const char *p = names[c]; *p; p++)
                s_byte (&f, (uint8_t) *p);
            s_int (&f, 4, T_I32, 0);                /* UNCOMPRESSED */
            s_int (&f, 5, T_I64, (int64_t) n);      /* num_values */
            s_int (&f, 6, T_I64, (int64_t) chunk[c]);
            s_int (&f, 7, T_I64, (int64_t) chunk[c]);
            s_int (&f, 9, T_I64, (int64_t) chunk_at[c]);    /* data_page_offset */
            s_end (&f);
            s_end (&f);
        }
        s_int (&f, 2, T_I64, (int64_t) (chunk[0] + chunk[1]));     /* total_byte_size */
        s_int (&f, 3, T_I64, (int64_t) n);          /* num_rows */
        s_int (&f, 5, T_I64, (int64_t) at_g);       /* file_offset */
        s_int (&f, 6, T_I64, (int64_t) (chunk[0] + chunk[1]));     /* total_compressed_size */
        s_end (&f);
    }
    s_string (&f, 6, "shardbench");                 /* created_by */
    s_byte (&f, 0);
    if (f.failed || f.len > 0xffffffffu) {
        free (f.data);
        snprintf (err, err_size, "parquet: out of memory for the footer");
        return -1;
    }
    uint32_t flen = (uint32_t) f.len;
    for (int i = 0; i < 4; i++)
        s_byte (&f, (uint8_t) (flen >> (8 * i)));
    for (const char *p = "PAR1"; *p; p++)
        s_byte (&f, (uint8_t) *p);
    if (f.failed) {
        free (f.data);
        snprintf (err, err_size, "parquet: out of memory for the footer");
        return -1;
    }
    obj->tail = f.data;
    obj->tail_len = f.len;
    obj->size = footer_at + f.len;
    return 0;
}

static void
s_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    const uint64_t *u = obj->u;
    uint64_t rec = obj->record, per = u[U_ROWS_PER_GROUP];
    while (len) {
        size_t n;
        if (offset < 4) {
            n = 4 - offset < len ? (size_t) (4 - offset) : len;
            memcpy (buf, "PAR1" + offset, n);
        }
        else if (offset >= u[U_FOOTER_AT]) {
            n = len;
            memcpy (buf, obj->tail + (offset - u[U_FOOTER_AT]), n);
        }
        else {
            uint64_t g = (offset - 4) / u[U_GROUP_SIZE], r = (offset - 4) % u[U_GROUP_SIZE];
            int lastg = g == u[U_GROUPS] - 1;
            if (lastg)
                r = offset - 4 - g * u[U_GROUP_SIZE];
            uint64_t rows = lastg ? obj->records - g * per : per;
            uint64_t hl = lastg ? u[U_HL_LAST] : u[U_HL_FULL], hd = lastg ? u[U_HD_LAST] : u[U_HD_FULL];
            const uint8_t *hl_at = obj->head + (lastg ? u[U_HL_FULL] + u[U_HD_FULL] : 0);
            const uint8_t *hd_at = hl_at + hl;
            uint64_t first = g * per;
            if (r < hl) {
                n = hl - r < len ? (size_t) (hl - r) : len;
                memcpy (buf, hl_at + r, n);
            }
            else if (r < hl + rows * 8) {
                uint64_t k = r - hl;
                n = hl + rows * 8 - r < len ? (size_t) (hl + rows * 8 - r) : len;
                for (size_t i = 0; i < n; i++) {
                    uint64_t b = k + i, row = first + b / 8;
                    buf[i] = (uint8_t) (row >> (8 * (b % 8)));
                }
            }
            else if (r < hl + rows * 8 + hd) {
                uint64_t k = r - hl - rows * 8;
                n = hd - k < len ? (size_t) (hd - k) : len;
                memcpy (buf, hd_at + k, n);
            }
            else {
                uint64_t k = r - hl - rows * 8 - hd;
                n = rows * rec - k < len ? (size_t) (rows * rec - k) : len;
                sb_content_fill (obj->seed, first * rec + k, buf, n);
            }
        }
        offset += n;
        buf += n;
        len -= n;
    }
}

const sb_format_ops_t sb_format_parquet = { "parquet", s_open, s_fill, NULL };
