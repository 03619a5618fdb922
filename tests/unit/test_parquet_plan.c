/* Parquet compression and the read plan: compressed pages decode (libsnappy,
 * zlib, libzstd) to the uncompressed file's values; the plan parsed from
 * a file's footer gives the layout's row groups and DLIO's reads; bad
 * footers fail cleanly; read amplification on dlrm_b200- and
 * flux_b200-shaped files is at most 1.05. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "format.h"

#define COLS "label:float32:1,half:float16:1,small:int8:1,vec:float32:13,cat:int64:1"

/* the whole file, filled in pieces of step bytes */
static uint8_t *
s_file (const char *cols, uint64_t seed, uint64_t rows, uint64_t record, uint64_t group, const char *codec,
        size_t step, uint64_t *size)
{
    sb_format_obj_t obj;
    char err[512];
    ck_assert_msg (sb_format_open_pq (&obj, &sb_format_parquet, seed, rows, record, cols, group, codec, err,
                                      sizeof err) == 0, "%s", err);
    uint8_t *b = malloc (obj.size);
    ck_assert_ptr_nonnull (b);
    for (uint64_t at = 0; at < obj.size; at += step)
        sb_format_fill (&obj, at, b + at, obj.size - at < step ? (size_t) (obj.size - at) : step);
    *size = obj.size;
    sb_format_close (&obj);
    return b;
}

/* the plan of an in-memory file, through the two footer functions */
static sb_parquet_plan_t *
s_plan (const uint8_t *file, uint64_t size, const char *read, int span)
{
    sb_parquet_range_t tail = sb_parquet_tail_range (size), meta;
    char err[512];
    ck_assert_uint_eq (tail.offset + tail.length, size);
    ck_assert_int_ge (sb_parquet_footer_range (file + tail.offset, (size_t) tail.length, size, &meta, err,
                                               sizeof err), 0);
    sb_parquet_plan_t *plan;
    ck_assert_msg (sb_parquet_plan_parse (&plan, file + meta.offset, (size_t) meta.length, size, read, span, err,
                                          sizeof err) == 0, "%s", err);
    return plan;
}

/* the one range of column col's chunk in group g */
static sb_parquet_range_t
s_chunk (const uint8_t *file, uint64_t size, const char *col, uint64_t g)
{
    sb_parquet_plan_t *p = s_plan (file, size, col, 0);
    sb_parquet_range_t r;
    size_t n;
    ck_assert_int_eq (sb_parquet_plan_group_ranges (p, g, &r, 1, &n), 0);
    ck_assert_uint_eq (n, 1);
    sb_parquet_plan_free (p);
    return r;
}

static uint64_t
s_uvarint (const uint8_t **p)
{
    uint64_t v = 0;
    for (int s = 0;; s += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t) (b & 0x7f) << s;
        if (!(b & 0x80))
            return v >> 1;  /* zigzag of a non-negative i32 */
    }
}

static uint64_t
s_varint_len (uint64_t v)
{
    uint64_t n = 1;
    for (; v >= 0x80; v >>= 7)
        n++;
    return n;
}

/* The body of the data page of COLS' column c for a group of rows rows, as
 * the layout is specified (format_parquet.c, DLIO's pyarrow schema): the
 * definition levels (u32 length, one RLE run: varint(values << 1) and the
 * max level byte); before them for vec (a list of 13) the repetition levels
 * (u32 length, per row 02 00 18 01: a run of one 0, a run of twelve 1s);
 * after them for small (int8, dictionary encoded) the bit width (1 byte)
 * and the bit-packed run header varint(groups of 8 << 1 | 1); then the
 * values (small: a byte each, padded to a group of 8). */
static uint64_t
s_body_bytes (size_t c, uint64_t rows)
{
    static const uint64_t k[] = { 1, 1, 1, 13, 1 }, item[] = { 4, 2, 1, 4, 8 };
    uint64_t values = rows * k[c], len = 4 + s_varint_len (values << 1) + 1 + values * item[c];
    if (c == 3)
        len += 4 + rows * 4;
    if (c == 2)
        len += 1 + s_varint_len ((values + 7) / 8 << 1 | 1) + ((values + 7) / 8 * 8 - values);
    return len;
}

/* decompress zlen bytes at zp with codec k (snappy, gzip, zstd) into out
 * (cap bytes): the bytes out */
static size_t
s_decompress (size_t k, const uint8_t *zp, uint64_t zlen, uint8_t *out, size_t cap)
{
    size_t got = 0;
    if (k == 0) {
        got = cap;
        ck_assert_int_eq (snappy_uncompress ((const char *) zp, zlen, (char *) out, &got), SNAPPY_OK);
    }
    else if (k == 1) {
        z_stream s;
        memset (&s, 0, sizeof s);
        ck_assert_int_eq (inflateInit2 (&s, 15 + 16), Z_OK);
        s.next_in = (Bytef *) zp;
        s.avail_in = (uInt) zlen;
        s.next_out = out;
        s.avail_out = (uInt) cap;
        ck_assert_int_eq (inflate (&s, Z_FINISH), Z_STREAM_END);
        got = s.total_out;
        inflateEnd (&s);
    }
    else
        got = ZSTD_decompress (out, cap, zp, zlen);
    return got;
}

START_TEST (test_codecs)
{
    static const char *codecs[] = { "snappy", "gzip", "zstd" };
    static const char *cols[] = { "label", "half", "small", "vec", "cat" };
    uint64_t psize;
    uint8_t *plain = s_file (COLS, 77, 1000, 1, 128, "none", 4096, &psize);
    for (size_t k = 0; k < 3; k++) {
        uint64_t size, size2;
        uint8_t *z = s_file (COLS, 77, 1000, 1, 128, codecs[k], 4096, &size);
        uint8_t *z2 = s_file (COLS, 77, 1000, 1, 128, codecs[k], 777, &size2);
        ck_assert_uint_eq (size, size2);
        ck_assert_msg (memcmp (z, z2, size) == 0, "%s: the pieces change the bytes", codecs[k]);
        free (z2);
        /* ranges asked backwards from one object give the same bytes */
        sb_format_obj_t obj;
        char err[256];
        ck_assert (sb_format_open_pq (&obj, &sb_format_parquet, 77, 1000, 1, COLS, 128, codecs[k], err,
                                      sizeof err) == 0);
        uint8_t part[3000];
        for (uint64_t end = size; end > 0;) {
            uint64_t at = end > sizeof part ? end - sizeof part : 0;
            sb_format_fill (&obj, at, part, (size_t) (end - at));
            ck_assert_msg (memcmp (part, z + at, (size_t) (end - at)) == 0, "%s: range at %llu", codecs[k],
                           (unsigned long long) at);
            end = at > 1000 ? at + 1000 : at;   /* overlapping */
            if (at == 0)
                break;
        }
        sb_format_close (&obj);
        sb_parquet_plan_t *p = s_plan (z, size, NULL, 1);
        ck_assert_int_eq (sb_parquet_plan_codec (p), k == 0 ? 1 : k == 1 ? 2 : 6);
        ck_assert_uint_eq (sb_parquet_plan_groups (p), 8);
        ck_assert_uint_eq (sb_parquet_plan_rows (p), 1000);
        sb_parquet_plan_free (p);
        /* every page decodes to the uncompressed file's values */
        for (uint64_t g = 0; g < 8; g++)
            for (size_t c = 0; c < 5; c++) {
                uint64_t rows = g < 7 ? 128 : 1000 - 7 * 128, body = s_body_bytes (c, rows);
                sb_parquet_range_t zc = s_chunk (z, size, cols[c], g), pc = s_chunk (plain, psize, cols[c], g);
                const uint8_t *h = z + zc.offset;
                if (c == 2) {   /* int8: the dictionary page first, the 256 int8 values as INT32 */
                    h++;
                    ck_assert_uint_eq (s_uvarint (&h), 2);     /* type: DICTIONARY_PAGE */
                    h++;
                    ck_assert_uint_eq (s_uvarint (&h), 1024);  /* uncompressed_page_size */
                    h++;
                    uint64_t dz = s_uvarint (&h);
                    /* field 7 (delta 4) dictionary_page_header: num_values 256, encoding PLAIN; the ends */
                    static const uint8_t rest[] = { 0x4c, 0x15, 0x80, 0x04, 0x15, 0x00, 0x00, 0x00 };
                    ck_assert (memcmp (h, rest, sizeof rest) == 0);
                    h += sizeof rest;
                    uint8_t dict[1024];
                    ck_assert_uint_eq (s_decompress (k, h, dz, dict, sizeof dict), 1024);
                    for (int v = 0; v < 256; v++) {
                        int32_t got;
                        memcpy (&got, dict + 4 * v, 4);
                        ck_assert_int_eq (got, (int32_t) (int8_t) v);
                    }
                    h += dz;
                }
                h++;
                ck_assert_uint_eq (s_uvarint (&h), 0);     /* type: DATA_PAGE */
                h++;
                ck_assert_uint_eq (s_uvarint (&h), body);  /* uncompressed_page_size */
                h++;
                uint64_t zlen = s_uvarint (&h);           /* compressed_page_size */
                ck_assert_uint_le (zlen, zc.length);
                const uint8_t *zp = z + zc.offset + zc.length - zlen, *want = plain + pc.offset + pc.length - body;
                uint8_t *out = malloc (body);
                ck_assert_uint_eq (s_decompress (k, zp, zlen, out, body), body);
                ck_assert_msg (memcmp (out, want, body) == 0, "%s: %s of group %llu", codecs[k], cols[c],
                               (unsigned long long) g);
                free (out);
            }
        free (z);
    }
    free (plain);
    char err[256];
    int codec = -1;
    ck_assert_int_eq (sb_format_parquet_codec (NULL, &codec, err, sizeof err), 0);
    ck_assert_int_eq (codec, 0);
    ck_assert_int_eq (sb_format_parquet_codec ("lz4", &codec, err, sizeof err), -1);
    ck_assert_str_eq (err, "parquet pages cannot be written with 'lz4' (supported: none, snappy, gzip, zstd)");
    sb_format_obj_t obj;
    ck_assert_int_eq (sb_format_open_pq (&obj, &sb_format_parquet, 1, 10, 1, COLS, 0, "brotli", err, sizeof err), -1);
    ck_assert_int_eq (sb_format_parquet_read_check (COLS, "vec,cat", err, sizeof err), 0);
    ck_assert_int_eq (sb_format_parquet_read_check (COLS, "vec,nope", err, sizeof err), -1);
    ck_assert_str_eq (err, "parquet: 'nope' is not one of the dataset's columns");
    ck_assert_int_eq (sb_format_parquet_read_check (NULL, "data", err, sizeof err), 0);
}
END_TEST

/* uncompressed: the plan's groups are the layout's, DLIO's reads exactly */
START_TEST (test_plan_layout)
{
    uint64_t size;
    uint8_t *f = s_file (NULL, 5, 300, 5000, 0, NULL, 65536, &size);
    sb_parquet_layout_t *l;
    char err[256];
    ck_assert (sb_format_parquet_layout (&l, NULL, 0, 300, 5000, err, sizeof err) == 0);
    sb_parquet_plan_t *p = s_plan (f, size, NULL, 1);
    ck_assert_uint_eq (sb_parquet_plan_groups (p), sb_format_parquet_groups (l));
    uint64_t data = 0;
    for (uint64_t g = 0; g < sb_parquet_plan_groups (p); g++) {
        uint64_t off, len;
        ck_assert_int_eq (sb_format_parquet_group (l, sb_parquet_plan_group_first (p, g), &off, &len), 0);
        sb_parquet_range_t r;
        size_t n;
        ck_assert_int_eq (sb_parquet_plan_group_ranges (p, g, &r, 1, &n), 0);
        ck_assert_uint_eq (n, 1);
        ck_assert_uint_eq (r.offset, off);
        ck_assert_uint_eq (r.length, len);
        ck_assert_uint_eq (sb_parquet_plan_group_of (p, sb_parquet_plan_group_first (p, g)), g);
        data += len;
    }
    ck_assert_uint_eq (sb_parquet_plan_group_first (p, 1), 209);   /* 1 MiB / 5000 */
    ck_assert_uint_eq (sb_parquet_plan_group_of (p, 299), 1);
    ck_assert_uint_eq (data, sb_format_parquet_footer_at (l) - 4);
    /* footer: the last 64 KiB only (the metadata is in it) */
    ck_assert_uint_eq (sb_parquet_plan_bytes (p), 65536 + data);
    ck_assert_uint_eq (sb_parquet_plan_dlio_bytes (p), sb_parquet_plan_bytes (p));
    sb_parquet_plan_free (p);
    sb_format_parquet_layout_free (l);
    /* a group range too small for the ranges: -1 and the count needed */
    p = s_plan (f, size, NULL, 0);
    size_t n;
    sb_parquet_range_t r;
    ck_assert_int_eq (sb_parquet_plan_group_ranges (p, 0, &r, 1, &n), 0);   /* label + data adjacent: merged */
    ck_assert_int_eq (sb_parquet_plan_group_ranges (p, 2, &r, 1, &n), -1);
    sb_parquet_plan_free (p);
    free (f);
}
END_TEST

/* read columns: DLIO's span from the first to the end of the last read
 * chunk (vec skipped inside it); span 0 reads the two chunks */
START_TEST (test_plan_columns)
{
    uint64_t size;
    uint8_t *f = s_file (COLS, 9, 1000, 1, 128, "zstd", 65536, &size);
    sb_parquet_range_t half = s_chunk (f, size, "half", 3), small = s_chunk (f, size, "small", 3),
                       cat = s_chunk (f, size, "cat", 3), vec = s_chunk (f, size, "vec", 3);
    ck_assert_uint_eq (half.offset + half.length, small.offset);
    ck_assert_uint_eq (vec.offset + vec.length, cat.offset);
    sb_parquet_plan_t *p = s_plan (f, size, "cat,half", 1);
    sb_parquet_range_t r[4];
    size_t n;
    ck_assert_int_eq (sb_parquet_plan_group_ranges (p, 3, r, 4, &n), 0);
    ck_assert_uint_eq (n, 1);
    ck_assert_uint_eq (r[0].offset, half.offset);
    ck_assert_uint_eq (r[0].length, cat.offset + cat.length - half.offset);
    uint64_t dlio = sb_parquet_plan_dlio_bytes (p);
    sb_parquet_plan_free (p);
    p = s_plan (f, size, "cat,half", 0);
    ck_assert_int_eq (sb_parquet_plan_group_ranges (p, 3, r, 4, &n), 0);
    ck_assert_uint_eq (n, 2);
    ck_assert_uint_eq (r[0].offset, half.offset);
    ck_assert_uint_eq (r[0].length, half.length);
    ck_assert_uint_eq (r[1].offset, cat.offset);
    ck_assert_uint_eq (r[1].length, cat.length);
    ck_assert_uint_eq (sb_parquet_plan_dlio_bytes (p), dlio);
    ck_assert_uint_lt (sb_parquet_plan_bytes (p), dlio);
    sb_parquet_plan_free (p);
    /* adjacent columns merge into one read */
    p = s_plan (f, size, "small,half", 0);
    ck_assert_int_eq (sb_parquet_plan_group_ranges (p, 3, r, 4, &n), 0);
    ck_assert_uint_eq (n, 1);
    ck_assert_uint_eq (r[0].length, half.length + small.length);
    sb_parquet_plan_free (p);
    free (f);
}
END_TEST

/* a footer that is not one: -1 with a message, never a crash */
START_TEST (test_plan_bad)
{
    uint64_t size;
    uint8_t *f = s_file (COLS, 9, 1000, 1, 128, NULL, 65536, &size);
    char err[512];
    sb_parquet_range_t meta;
    sb_parquet_plan_t *p;
    ck_assert_int_eq (sb_parquet_footer_range (f, (size_t) size, size, &meta, err, sizeof err), 1);
    ck_assert_int_eq (sb_parquet_plan_parse (&p, f + meta.offset, (size_t) meta.length, size, "nope", 1, err,
                                             sizeof err), -1);
    ck_assert_str_eq (err, "parquet: the file has no column 'nope'");
    ck_assert_ptr_null (p);
    /* every truncation of the metadata */
    for (size_t cut = 0; cut < meta.length; cut += 7) {
        ck_assert_int_eq (sb_parquet_plan_parse (&p, f + meta.offset, cut, size, NULL, 1, err, sizeof err), -1);
        ck_assert_ptr_null (p);
    }
    /* every byte flipped: either a plan inside the file or an error */
    uint8_t *m = malloc (meta.length);
    for (size_t i = 0; i < meta.length; i++) {
        memcpy (m, f + meta.offset, meta.length);
        m[i] ^= 0xa5;
        if (sb_parquet_plan_parse (&p, m, (size_t) meta.length, size, NULL, 1, err, sizeof err) == 0) {
            for (uint64_t g = 0; g < sb_parquet_plan_groups (p); g++) {
                sb_parquet_range_t r[8];
                size_t n;
                if (sb_parquet_plan_group_ranges (p, g, r, 8, &n) == 0)
                    for (size_t k = 0; k < n; k++)
                        ck_assert_uint_le (r[k].offset + r[k].length, meta.offset);
            }
            sb_parquet_plan_free (p);
        }
    }
    free (m);
    /* a size the footer does not fit; no PAR1 */
    ck_assert_int_eq (sb_parquet_footer_range (f, (size_t) size, 1 << 30, &meta, err, sizeof err), 1);
    ck_assert_int_eq (sb_parquet_plan_parse (&p, f + size - 8 - meta.length, (size_t) meta.length, 1000, NULL, 1, err,
                                             sizeof err), -1);
    f[size - 1] = 'X';
    ck_assert_int_eq (sb_parquet_footer_range (f, (size_t) size, size, &meta, err, sizeof err), -1);
    free (f);
}
END_TEST

/* Read amplification of one file of the shape: the plan is parsed from the
 * footer as the object produces it (its tail, then the metadata when the
 * tail misses some). DLIO's bytes: pyarrow's footer reads + the span of
 * the read columns of every row group (parquet_reader_file_iterable.py
 * _rg_byte_range). Prints the figures. */
static void
s_amplification (const char *what, const char *cols, uint64_t rows, uint64_t record, uint64_t group,
                 const char *read, int span, uint64_t files)
{
    uint64_t plan_bytes = 0, dlio_bytes = 0, dataset = 0;
    for (uint64_t i = 0; i < files; i++) {
        sb_format_obj_t obj;
        char err[512];
        ck_assert_msg (sb_format_open_pq (&obj, &sb_format_parquet, 1000 + i, rows, record, cols, group, NULL, err,
                                          sizeof err) == 0, "%s", err);
        sb_parquet_range_t tail = sb_parquet_tail_range (obj.size), meta;
        uint8_t *t = malloc (tail.length);
        sb_format_fill (&obj, tail.offset, t, (size_t) tail.length);
        int in = sb_parquet_footer_range (t, (size_t) tail.length, obj.size, &meta, err, sizeof err);
        ck_assert_int_ge (in, 0);
        uint8_t *m = malloc (meta.length);
        sb_format_fill (&obj, meta.offset, m, (size_t) meta.length);
        sb_parquet_plan_t *p;
        ck_assert_msg (sb_parquet_plan_parse (&p, m, (size_t) meta.length, obj.size, read, span, err,
                                              sizeof err) == 0, "%s", err);
        ck_assert_uint_eq (sb_parquet_plan_rows (p), rows);
        plan_bytes += sb_parquet_plan_bytes (p);
        dlio_bytes += sb_parquet_plan_dlio_bytes (p);
        dataset += obj.size;
        sb_parquet_plan_free (p);
        free (t);
        free (m);
        sb_format_close (&obj);
    }
    double vs_dlio = (double) plan_bytes / (double) dlio_bytes, vs_dataset = (double) plan_bytes / (double) dataset;
    printf ("amplification %s: %llu files of %llu bytes, plan %llu bytes an epoch, DLIO %llu: plan/DLIO %.6f, "
            "plan/dataset %.6f\n", what, (unsigned long long) files, (unsigned long long) (dataset / files),
            (unsigned long long) plan_bytes, (unsigned long long) dlio_bytes, vs_dlio, vs_dataset);
    ck_assert_msg (vs_dlio <= 1.05, "%s: plan/DLIO %.6f", what, vs_dlio);
    if (!read)
        ck_assert_msg (vs_dataset <= 1.05, "%s: plan/dataset %.6f", what, vs_dataset);
}

#define FLUX "t5_encodings:float32:524328,clip_encodings:float32:409,mean:float32:8232,logvar:float32:8232," \
             "timestamp:float32:7"

START_TEST (test_amplification)
{
    /* dlrm_b200: 4718592 rows of 761 bytes a file (data, a list of uint8), 1 MiB
     * groups (shardbench's default) and 1024-row groups (DLIO's default) */
    s_amplification ("dlrm_b200", NULL, 4718592, 761, 0, NULL, 1, 4);
    s_amplification ("dlrm_b200 groups of 1024", NULL, 4718592, 761, 1024, NULL, 1, 4);
    /* flux_b200: 288 rows of 2164832 bytes, one row a group (the default) */
    s_amplification ("flux_b200", FLUX, 288, 1, 0, NULL, 1, 4);
    s_amplification ("flux_b200 groups of 8", FLUX, 288, 1, 8, NULL, 1, 4);
    /* columns read: DLIO's span, and the chunks only */
    s_amplification ("flux_b200 reading t5_encodings,mean", FLUX, 288, 1, 0, "t5_encodings,mean", 1, 2);
    s_amplification ("flux_b200 reading t5_encodings,mean, chunks only", FLUX, 288, 1, 0, "t5_encodings,mean", 0,
                     2);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("parquet_plan");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 100);
    tcase_add_test (tc, test_codecs);
    tcase_add_test (tc, test_plan_layout);
    tcase_add_test (tc, test_plan_columns);
    tcase_add_test (tc, test_plan_bad);
    tcase_add_test (tc, test_amplification);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
