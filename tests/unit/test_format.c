/* Formats: each generator's bytes have the format's structure, any range
 * regenerates the same bytes in any order, and the usual decoders (zlib,
 * libpng, libjpeg) accept the images. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>
#include <hdf5.h>

#include "format.h"
#include "util.h"

/* The whole object, filled front to back in chunks of step bytes. */
static uint8_t *
s_generate (const sb_format_ops_t *ops, uint64_t seed, uint64_t records, uint64_t record, size_t step,
            uint64_t *size)
{
    sb_format_obj_t obj;
    char err[256];
    ck_assert_msg (sb_format_open_with (&obj, ops, seed, records, record, err, sizeof err) == 0, "%s", err);
    uint8_t *buf = malloc (obj.size);
    ck_assert_ptr_nonnull (buf);
    for (uint64_t at = 0; at < obj.size; at += step)
        sb_format_fill (&obj, at, buf + at, obj.size - at < step ? (size_t) (obj.size - at) : step);
    *size = obj.size;
    sb_format_close (&obj);
    return buf;
}

/* Ranges asked backwards and overlapping (or spread over the object when
 * it is large), each from a fresh object and from
 * one reused object, give the bytes of the front-to-back fill. */
static void
s_check_ranges (const sb_format_ops_t *ops, uint64_t seed, uint64_t records, uint64_t record)
{
    uint64_t size, size2;
    uint8_t *whole = s_generate (ops, seed, records, record, 4096, &size);
    uint8_t *odd = s_generate (ops, seed, records, record, 777, &size2);
    ck_assert_uint_eq (size, size2);
    ck_assert_msg (memcmp (whole, odd, size) == 0, "%s: chunking changes the bytes", ops->name);
    free (odd);
    sb_format_obj_t reused;
    char err[256];
    ck_assert (sb_format_open_with (&reused, ops, seed, records, record, err, sizeof err) == 0);
    uint8_t *part = malloc (size);
    for (uint64_t len = size; len >= 1; len = len * 2 / 5) {
        /* backwards, overlapping by one byte, at most about 100 ranges a length */
        uint64_t step = len > 1 ? len - 1 : 1;
        if (step < size / 100)
            step = size / 100 + 1;
        for (uint64_t end = size; end >= len; end -= step) {
            uint64_t at = end - len;
            sb_format_obj_t fresh;
            ck_assert (sb_format_open_with (&fresh, ops, seed, records, record, err, sizeof err) == 0);
            sb_format_fill (&fresh, at, part, (size_t) len);
            ck_assert_msg (memcmp (part, whole + at, len) == 0, "%s: fresh range [%llu, +%llu) differs", ops->name,
                           (unsigned long long) at, (unsigned long long) len);
            sb_format_close (&fresh);
            sb_format_fill (&reused, at, part, (size_t) len);
            ck_assert_msg (memcmp (part, whole + at, len) == 0, "%s: reused range [%llu, +%llu) differs", ops->name,
                           (unsigned long long) at, (unsigned long long) len);
            if (end < len + step)
                break;
        }
        if (len == 1)
            break;
    }
    sb_format_close (&reused);
    /* another seed, other bytes */
    uint8_t *other = s_generate (ops, seed + 1, records, record, 4096, &size2);
    ck_assert_msg (size2 != size || memcmp (other, whole, size) != 0, "%s: content ignores the seed", ops->name);
    free (other);
    free (part);
    free (whole);
}

static uint32_t
s_le32 (const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static uint16_t
s_le16 (const uint8_t *p)
{
    return (uint16_t) (p[0] | p[1] << 8);
}

START_TEST (test_npy)
{
    uint64_t size;
    uint8_t *b = s_generate (&sb_format_npy, 42, 3, 1000, 4096, &size);
    ck_assert_uint_eq (size, 128 + 3000);
    ck_assert (memcmp (b, "\x93NUMPY\x01\x00", 8) == 0);
    ck_assert_uint_eq (s_le16 (b + 8), 118);
    const char *dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 1000), }";
    ck_assert (memcmp (b + 10, dict, strlen (dict)) == 0);
    ck_assert_int_eq (b[127], '\n');
    uint8_t expect[3000];
    sb_content_fill (42, 0, expect, sizeof expect);
    ck_assert (memcmp (b + 128, expect, sizeof expect) == 0);
    free (b);
    s_check_ranges (&sb_format_npy, 42, 3, 1000);
    s_check_ranges (&sb_format_npy, 7, 1, 1);
}
END_TEST

START_TEST (test_npz)
{
    uint64_t size;
    uint8_t *b = s_generate (&sb_format_npz, 9, 4, 5000, 4096, &size);
    /* x.npy: 35 + 128 + 20000; descriptor 16; y.npy: 35 + 128 + 32; directory 2 x 51; end 22 */
    ck_assert_uint_eq (size, 35 + 128 + 20000 + 16 + 35 + 128 + 32 + 102 + 22);
    const uint8_t *end = b + size - 22;
    ck_assert_uint_eq (s_le32 (end), 0x06054b50);
    ck_assert_uint_eq (s_le16 (end + 10), 2);
    uint32_t cd_at = s_le32 (end + 16);
    ck_assert_uint_eq (cd_at, size - 22 - 102);
    /* each member: its local header, name, and a CRC-32 that zlib agrees with */
    const uint8_t *cd = b + cd_at;
    const char *names[2] = { "x.npy", "y.npy" };
    for (int m = 0; m < 2; m++, cd += 46 + 5) {
        ck_assert_uint_eq (s_le32 (cd), 0x02014b50);
        ck_assert (memcmp (cd + 46, names[m], 5) == 0);
        uint32_t crc = s_le32 (cd + 16), len = s_le32 (cd + 20);
        const uint8_t *lh = b + s_le32 (cd + 42);
        ck_assert_uint_eq (s_le32 (lh), 0x04034b50);
        ck_assert (memcmp (lh + 30, names[m], 5) == 0);
        const uint8_t *data = lh + 35;
        ck_assert (memcmp (data, "\x93NUMPY", 6) == 0);
        ck_assert_uint_eq (crc, (uint32_t) crc32 (0, data, len));
        ck_assert_uint_eq (len, m == 0 ? 128 + 20000 : 128 + 32);
        if (m == 0) {   /* streamed member: CRC in the data descriptor */
            ck_assert_uint_eq (s_le16 (lh + 6), 8);
            ck_assert_uint_eq (s_le32 (data + len), 0x08074b50);
            ck_assert_uint_eq (s_le32 (data + len + 4), crc);
        }
    }
    ck_assert (memcmp (b + 35 + 10, "{'descr': '|u1', 'fortran_order': False, 'shape': (4, 5000), }", 62) == 0);
    free (b);
    s_check_ranges (&sb_format_npz, 9, 4, 5000);
    s_check_ranges (&sb_format_npz, 3, 1, 70000);
}
END_TEST

START_TEST (test_tfrecord)
{
    ck_assert_uint_eq (sb_format_crc32c (0, (const uint8_t *) "123456789", 9), 0xe3069283u);
    uint64_t size;
    const uint64_t rec = 3000;
    /* DLIO's tf.train.Example: features {'image': BytesList [3000 bytes], 'size': Int64List [3000]},
     * serialized: Example.features (3035 bytes) { map entry (3016) { key "image", value Feature (3006)
     * { bytes_list (3003) { value (3000) } } }, map entry (14) { key "size", value Feature (6)
     * { int64_list (4) { packed (2) { 3000 } } } } }: 3038 bytes */
    static const uint8_t prefix[] = { 0x0a, 0xdb, 0x17, 0x0a, 0xc8, 0x17, 0x0a, 0x05, 'i',  'm', 'a',
                                      'g',  'e',  0x12, 0xbe, 0x17, 0x0a, 0xbb, 0x17, 0x0a, 0xb8, 0x17 };
    static const uint8_t suffix[] = { 0x0a, 0x0e, 0x0a, 0x04, 's',  'i',  'z',  'e',
                                      0x12, 0x06, 0x1a, 0x04, 0x0a, 0x02, 0xb8, 0x17 };
    const uint64_t data = sizeof prefix + rec + sizeof suffix;
    ck_assert_uint_eq (data, 3038);
    uint8_t *b = s_generate (&sb_format_tfrecord, 5, 3, rec, 4096, &size);
    ck_assert_uint_eq (size, 3 * (data + 16));
    for (uint64_t j = 0; j < 3; j++) {
        const uint8_t *r = b + j * (data + 16);
        uint64_t len = s_le32 (r) | (uint64_t) s_le32 (r + 4) << 32;
        ck_assert_uint_eq (len, data);
        ck_assert_uint_eq (s_le32 (r + 8), sb_format_masked_crc (sb_format_crc32c (0, r, 8)));
        ck_assert_uint_eq (s_le32 (r + 12 + data), sb_format_masked_crc (sb_format_crc32c (0, r + 12, data)));
        ck_assert (memcmp (r + 12, prefix, sizeof prefix) == 0);
        ck_assert (memcmp (r + 12 + sizeof prefix + rec, suffix, sizeof suffix) == 0);
        uint8_t expect[3000];
        sb_content_fill (5, j * rec, expect, rec);
        ck_assert (memcmp (r + 12 + sizeof prefix, expect, rec) == 0);
    }
    free (b);
    s_check_ranges (&sb_format_tfrecord, 5, 3, rec);
    s_check_ranges (&sb_format_tfrecord, 5, 1, 100000);
    s_check_ranges (&sb_format_tfrecord, 5, 4, 1);
}
END_TEST

START_TEST (test_png)
{
    uint64_t size;
    uint8_t *b = s_generate (&sb_format_png, 11, 1, 10000, 4096, &size);
    png_image img;
    memset (&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    ck_assert (png_image_begin_read_from_memory (&img, b, size));
    ck_assert_uint_eq (img.width, 100);
    ck_assert_uint_eq (img.height, 100);
    img.format = PNG_FORMAT_GRAY;
    uint8_t *pixels = malloc (PNG_IMAGE_SIZE (img));
    ck_assert (png_image_finish_read (&img, NULL, pixels, 0, NULL));
    uint8_t expect[10000];
    sb_content_fill (11, 0, expect, sizeof expect);
    ck_assert (memcmp (pixels, expect, sizeof expect) == 0);
    /* noise does not compress: the file is the pixels and some framing */
    ck_assert_uint_ge (size, 10000);
    ck_assert_uint_lt (size, 10000 + 400);
    free (pixels);
    free (b);
    s_check_ranges (&sb_format_png, 11, 1, 10000);
}
END_TEST

START_TEST (test_jpeg)
{
    uint64_t size;
    uint8_t *b = s_generate (&sb_format_jpeg, 13, 1, 4900, 4096, &size);
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr jerr;
    d.err = jpeg_std_error (&jerr);
    jpeg_create_decompress (&d);
    jpeg_mem_src (&d, b, (unsigned long) size);
    ck_assert_int_eq (jpeg_read_header (&d, TRUE), JPEG_HEADER_OK);
    ck_assert_uint_eq (d.image_width, 70);
    ck_assert_uint_eq (d.image_height, 70);
    ck_assert_int_eq (d.num_components, 1);
    jpeg_start_decompress (&d);
    uint8_t *pixels = malloc (4900);
    while (d.output_scanline < d.output_height) {
        JSAMPROW row = pixels + d.output_scanline * 70;
        jpeg_read_scanlines (&d, &row, 1);
    }
    jpeg_finish_decompress (&d);
    jpeg_destroy_decompress (&d);
    /* lossy: close to the seeded pixels on average, far from another seed's */
    uint8_t expect[4900], other[4900];
    sb_content_fill (13, 0, expect, sizeof expect);
    sb_content_fill (14, 0, other, sizeof other);
    double err_same = 0, err_other = 0;
    for (int i = 0; i < 4900; i++) {
        err_same += abs ((int) pixels[i] - expect[i]);
        err_other += abs ((int) pixels[i] - other[i]);
    }
    ck_assert_msg (err_same / 4900 < 20 && err_other / 4900 > 60, "mean error %.1f (seeded) %.1f (other)",
                   err_same / 4900, err_other / 4900);
    free (pixels);
    free (b);
    s_check_ranges (&sb_format_jpeg, 13, 1, 4900);
}
END_TEST

START_TEST (test_hdf5)
{
    uint64_t size;
    uint8_t *b = s_generate (&sb_format_hdf5, 17, 3, 2000, 4096, &size);
    ck_assert (memcmp (b, "\x89HDF\r\n\x1a\n", 8) == 0);
    ck_assert_uint_gt (size, 6000 + 24);
    /* libhdf5 opens the image and finds the seeded rows */
    hid_t fapl = H5Pcreate (H5P_FILE_ACCESS);
    ck_assert (H5Pset_fapl_core (fapl, 1 << 20, 0) >= 0);
    ck_assert (H5Pset_file_image (fapl, b, size) >= 0);
    hid_t file = H5Fopen ("test-image.h5", H5F_ACC_RDONLY, fapl);
    ck_assert (file >= 0);
    hid_t d = H5Dopen2 (file, "records_0", H5P_DEFAULT);
    ck_assert (d >= 0);
    hid_t space = H5Dget_space (d);
    hsize_t dims[2];
    ck_assert_int_eq (H5Sget_simple_extent_dims (space, dims, NULL), 2);
    ck_assert_uint_eq (dims[0], 3);
    ck_assert_uint_eq (dims[1], 2000);
    uint8_t got[6000], expect[6000];
    ck_assert (H5Dread (d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    sb_content_fill (17, 0, expect, sizeof expect);
    ck_assert (memcmp (got, expect, sizeof expect) == 0);
    H5Sclose (space);
    H5Dclose (d);
    H5Fclose (file);
    H5Pclose (fapl);
    free (b);
    s_check_ranges (&sb_format_hdf5, 17, 3, 2000);
}
END_TEST

START_TEST (test_parquet)
{
    /* 300 rows of 5000 bytes: 209 rows a group (1 MiB of data), so groups of 209 and 91 */
    uint64_t size;
    uint8_t *b = s_generate (&sb_format_parquet, 19, 300, 5000, 4096, &size);
    ck_assert (memcmp (b, "PAR1", 4) == 0);
    ck_assert (memcmp (b + size - 4, "PAR1", 4) == 0);
    uint32_t footer = s_le32 (b + size - 8);
    ck_assert_uint_lt (footer, size);
    /* the data page of group 0 holds rows 0..208, after the labels 0..208 */
    sb_format_obj_t obj;
    char err[256];
    ck_assert (sb_format_open_with (&obj, &sb_format_parquet, 19, 300, 5000, err, sizeof err) == 0);
    sb_parquet_layout_t *l;
    ck_assert (sb_format_parquet_layout (&l, NULL, 0, 300, 5000, err, sizeof err) == 0);
    ck_assert_uint_eq (sb_format_parquet_groups (l), 2);
    ck_assert_uint_eq (size, sb_format_parquet_footer_at (l) + footer + 8);
    uint64_t g0, g0len, g1, g1len;
    ck_assert_int_eq (sb_format_parquet_group (l, 0, &g0, &g0len), 0);
    ck_assert_int_eq (sb_format_parquet_group (l, 250, &g1, &g1len), 0);
    ck_assert_int_eq (sb_format_parquet_group (l, 300, &g1, &g1len), -1);
    ck_assert_int_eq (sb_format_parquet_group (l, 299, &g1, &g1len), 0);
    /* the page headers: from the file itself (a 0x15 0x00 DATA_PAGE header is < 32 bytes) */
    uint64_t hl = 0, hd = 0;
    for (uint64_t k = 4; k < 4 + 64; k++)
        if (b[k] == 0 && b[k - 1] == 0) {   /* end of data_page_header struct, end of PageHeader */
            hl = k + 1 - 4;
            break;
        }
    ck_assert_uint_gt (hl, 0);
    uint64_t at = 4 + hl + 209 * 8;
    for (uint64_t k = at + 1; k < at + 64; k++)
        if (b[k] == 0 && b[k - 1] == 0) {
            hd = k + 1 - at;
            break;
        }
    ck_assert_uint_gt (hd, 0);
    ck_assert_uint_eq (g0, 4);
    ck_assert_uint_eq (g0len, hl + 209 * 8 + hd + 209 * 5000);
    ck_assert_uint_eq (g1, 4 + g0len);
    ck_assert_uint_eq (g1 + g1len, sb_format_parquet_footer_at (l));
    for (uint64_t j = 0; j < 209; j++) {
        uint64_t label;
        memcpy (&label, b + 4 + hl + j * 8, 8);
        ck_assert_uint_eq (label, j);
    }
    uint8_t expect[5000];
    sb_content_fill (19, 17 * 5000, expect, 5000);
    ck_assert (memcmp (b + 4 + hl + 209 * 8 + hd + 17 * 5000, expect, 5000) == 0);
    /* group 1: row 250 (headers of the last group: its length minus its values) */
    uint64_t hl1 = 0;
    for (uint64_t k = g1 + 1; k < g1 + 64; k++)
        if (b[k] == 0 && b[k - 1] == 0) {
            hl1 = k + 1 - g1;
            break;
        }
    uint64_t hd1 = g1len - hl1 - 91 * 8 - 91 * 5000;
    uint64_t label;
    memcpy (&label, b + g1 + hl1 + (250 - 209) * 8, 8);
    ck_assert_uint_eq (label, 250);
    sb_content_fill (19, 250 * 5000, expect, 5000);
    ck_assert (memcmp (b + g1 + hl1 + 91 * 8 + hd1 + (250 - 209) * 5000, expect, 5000) == 0);
    sb_format_parquet_layout_free (l);
    /* the footer names the columns */
    ck_assert_ptr_nonnull (memmem (b + size - 8 - footer, footer, "label", 5));
    ck_assert_ptr_nonnull (memmem (b + size - 8 - footer, footer, "data", 4));
    sb_format_close (&obj);
    free (b);
    s_check_ranges (&sb_format_parquet, 19, 300, 5000);
    s_check_ranges (&sb_format_parquet, 19, 1, 3000000);
}
END_TEST

/* dataset.parquet.columns and row_group_size: the row is the columns'
 * bytes, each group the same size, each column chunk where the layout says */
START_TEST (test_parquet_columns)
{
    static const char *cols = "label:float32:1,half:float16:1,dbl:float64:1,small:int8:1,vec:float32:13,"
                              "cat:int64:1";
    uint64_t row = 0;
    size_t ncols = 0;
    char err[256];
    ck_assert_int_eq (sb_format_parquet_columns (cols, &row, &ncols, err, sizeof err), 0);
    ck_assert_uint_eq (row, 4 + 2 + 8 + 1 + 52 + 8);
    ck_assert_uint_eq (ncols, 6);
    ck_assert_int_eq (sb_format_parquet_columns ("x:complex64:1", &row, NULL, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "complex64"));
    ck_assert_int_eq (sb_format_parquet_columns ("x:float32:0", &row, NULL, err, sizeof err), -1);
    ck_assert_int_eq (sb_format_parquet_columns ("x:float32", &row, NULL, err, sizeof err), -1);
    /* 1000 rows, groups of 128: 7 full groups and one of 104 */
    sb_format_obj_t obj;
    ck_assert_msg (sb_format_open_ex (&obj, &sb_format_parquet, 23, 1000, 75, cols, 128, err, sizeof err) == 0, "%s",
                   err);
    ck_assert_uint_eq (obj.record, 75);
    uint64_t size = obj.size;
    uint8_t *b = malloc (size);
    for (uint64_t at = 0; at < size; at += 4096)
        sb_format_fill (&obj, at, b + at, size - at < 4096 ? (size_t) (size - at) : 4096);
    sb_parquet_layout_t *l;
    ck_assert (sb_format_parquet_layout (&l, cols, 128, 1000, 75, err, sizeof err) == 0);
    ck_assert_uint_eq (sb_format_parquet_groups (l), 8);
    /* a record length other than the columns' row is refused */
    sb_parquet_layout_t *bad;
    ck_assert (sb_format_parquet_layout (&bad, cols, 128, 1000, 76, err, sizeof err) == -1);
    sb_format_parquet_layout_free (bad);
    /* per value: 4 + 2 + 8 + 4 (int8 as INT32) + 52 + 8 = 78 bytes a row in the pages */
    uint64_t prev_end = 4, full = 0;
    for (uint64_t g = 0; g < 8; g++) {
        uint64_t off, len;
        ck_assert_int_eq (sb_format_parquet_group (l, g * 128, &off, &len), 0);
        uint64_t off2, len2;
        ck_assert_int_eq (sb_format_parquet_group (l, g * 128 + (g < 7 ? 127 : 103), &off2, &len2), 0);
        ck_assert_uint_eq (off, off2);
        ck_assert_uint_eq (len, len2);
        ck_assert_uint_eq (off, prev_end);
        uint64_t rows = g < 7 ? 128 : 104;
        ck_assert_uint_gt (len, rows * 78);
        ck_assert_uint_lt (len, rows * 78 + 6 * 32);     /* six page headers */
        if (g == 0)
            full = len;
        else if (g < 7)
            ck_assert_uint_eq (len, full);
        prev_end = off + len;
    }
    ck_assert_uint_eq (prev_end, sb_format_parquet_footer_at (l));
    uint32_t footer = s_le32 (b + size - 8);
    ck_assert_uint_eq (size, prev_end + footer + 8);
    ck_assert (memcmp (b + size - 4, "PAR1", 4) == 0);
    /* group 2, column vec (the 5th): after the first four chunks; its values
     * are row j's content bytes [j*75 + 15, +52) */
    uint64_t off, len;
    ck_assert_int_eq (sb_format_parquet_group (l, 300, &off, &len), 0);
    uint64_t at = off;
    uint64_t widths[6] = { 4, 2, 8, 4, 52, 8 };
    uint64_t hdr[6];
    for (int c = 0; c < 6; c++) {   /* each chunk: a page header (ends with two 0 bytes), 128 values */
        uint64_t k = at + 1;
        while (!(b[k] == 0 && b[k - 1] == 0))
            k++;
        hdr[c] = k + 1 - at;
        if (c == 4) {
            uint8_t expect[52];
            sb_content_fill (23, (256 + 44) * 75 + 15, expect, 52);     /* row 300 = row 44 of group 2 */
            ck_assert (memcmp (b + at + hdr[c] + 44 * 52, expect, 52) == 0);
        }
        if (c == 3) {   /* int8 widened: the content byte, then its sign */
            uint8_t v;
            sb_content_fill (23, 300 * 75 + 14, &v, 1);
            int32_t got;
            memcpy (&got, b + at + hdr[c] + 44 * 4, 4);
            ck_assert_int_eq (got, (int32_t) (int8_t) v);
        }
        if (c == 1) {   /* float16: two content bytes */
            uint8_t expect[2];
            sb_content_fill (23, 300 * 75 + 4, expect, 2);
            ck_assert (memcmp (b + at + hdr[c] + 44 * 2, expect, 2) == 0);
        }
        at += hdr[c] + 128 * widths[c];
    }
    ck_assert_uint_eq (at, off + len);
    /* the footer: the names, and the Float16 / Int(8) logical types */
    const uint8_t *f = b + size - 8 - footer;
    const char *names[6] = { "label", "half", "dbl", "small", "vec", "cat" };
    for (int c = 0; c < 6; c++)
        ck_assert_ptr_nonnull (memmem (f, footer, names[c], strlen (names[c])));
    sb_format_parquet_layout_free (l);
    sb_format_close (&obj);
    /* every range equals the in-order bytes */
    for (uint64_t at2 = 0; at2 + 777 < size; at2 += 5000) {
        uint8_t piece[777];
        ck_assert (sb_format_open_ex (&obj, &sb_format_parquet, 23, 1000, 75, cols, 128, err, sizeof err) == 0);
        sb_format_fill (&obj, at2, piece, sizeof piece);
        ck_assert (memcmp (piece, b + at2, sizeof piece) == 0);
        sb_format_close (&obj);
    }
    free (b);
}
END_TEST

START_TEST (test_registry)
{
    ck_assert_ptr_eq (sb_format_find ("npz"), &sb_format_npz);
    ck_assert_ptr_eq (sb_format_find ("jpg"), &sb_format_jpeg);
    ck_assert_ptr_eq (sb_format_find ("bin"), &sb_format_raw);
    ck_assert (sb_format_is_raw ("dat"));
    ck_assert (!sb_format_is_raw ("tfrecord"));
    char err[256];
    ck_assert_int_eq (sb_format_check ("npz", err, sizeof err), 0);
    ck_assert_int_eq (sb_format_check ("bin", err, sizeof err), 0);
    ck_assert_int_eq (sb_format_check ("parquet", err, sizeof err), 0);
    ck_assert_int_eq (sb_format_check ("csv", err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "'csv' is not supported yet"));
    uint64_t i = 0;
    ck_assert_int_eq (sb_format_key_index ("train/3/img_0042_of_1000.npz", &i), 0);
    ck_assert_uint_eq (i, 42);
    ck_assert_int_eq (sb_format_key_index ("train/img_of_10.npz", &i), -1);
    ck_assert_int_eq (sb_format_key_index ("train/other.npz", &i), -1);
    /* the dataset's object: its record from sb_dataset_object_size */
    sb_dataset_t ds = { .prefix = "img", .format = "tfrecord", .files = 10, .subfolders = 1, .samples_per_file = 4,
                        .record_length = 1000, .record_stdev = 100, .seed = 77 };
    sb_format_obj_t obj;
    ck_assert_int_eq (sb_format_open (&obj, &ds, 3, "train/img_03_of_10.tfrecord", err, sizeof err), 0);
    /* 4 Examples: each the record, 'image' and 'size' framing (26 bytes for records of
     * under 16384 bytes, 'size' under 2^14) and the TFRecord frame */
    ck_assert_uint_eq (obj.size, sb_dataset_object_size (&ds, 3) + 4 * (16 + 38));
    ck_assert_uint_eq (obj.seed, sb_dataset_content_seed (77, "train/img_03_of_10.tfrecord"));
    sb_format_close (&obj);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("format");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_npy);
    tcase_add_test (tc, test_npz);
    tcase_add_test (tc, test_tfrecord);
    tcase_add_test (tc, test_png);
    tcase_add_test (tc, test_jpeg);
    tcase_add_test (tc, test_hdf5);
    tcase_add_test (tc, test_parquet);
    tcase_add_test (tc, test_parquet_columns);
    tcase_add_test (tc, test_registry);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
