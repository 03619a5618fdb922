/* Formats: each generator's bytes have the format's structure, any range
 * regenerates the same bytes in any order, and the usual decoders (zlib,
 * libpng, libjpeg) accept the images, which are exactly DLIO's dim1 * dim2
 * bytes long. */
#include <check.h>
#include "check_main.h"
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>
#include <hdf5.h>

#include "format.h"
#include "sample_range.h"
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

/* libpng's reading of a png of len bytes: 1 when it is a width x height
 * 8-bit gray image of constant pixels (value in *pixel). */
static int
s_png_decodes (const uint8_t *b, uint64_t len, uint64_t width, uint64_t height, uint8_t *pixel)
{
    png_image img;
    memset (&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory (&img, b, (size_t) len))
        return 0;
    int ok = img.width == width && img.height == height && (img.format & PNG_FORMAT_FLAG_COLOR) == 0;
    img.format = PNG_FORMAT_GRAY;
    uint8_t *pixels = malloc (PNG_IMAGE_SIZE (img));
    ck_assert_ptr_nonnull (pixels);
    ok = png_image_finish_read (&img, NULL, pixels, 0, NULL) && ok;
    for (uint64_t k = 0; ok && k < width * height; k++)
        ok = pixels[k] == pixels[0];
    *pixel = pixels[0];
    free (pixels);
    png_image_free (&img);
    return ok;
}

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf               jump;
} s_jerr_t;

static void
s_jerr_exit (j_common_ptr c)
{
    longjmp (((s_jerr_t *) c->err)->jump, 1);
}

/* libjpeg's reading of a jpeg: 1 when it is a width x height one-component
 * image of constant pixels (value in *pixel), read without a warning. */
static int
s_jpeg_decodes (const uint8_t *b, uint64_t len, uint64_t width, uint64_t height, uint8_t *pixel)
{
    struct jpeg_decompress_struct d;
    s_jerr_t jerr;
    uint8_t *volatile pixels = malloc ((size_t) (width * height));
    ck_assert_ptr_nonnull (pixels);
    d.err = jpeg_std_error (&jerr.pub);
    jerr.pub.error_exit = s_jerr_exit;
    if (setjmp (jerr.jump)) {
        jpeg_destroy_decompress (&d);
        free (pixels);
        return 0;
    }
    jpeg_create_decompress (&d);
    jpeg_mem_src (&d, b, (unsigned long) len);
    int ok = jpeg_read_header (&d, TRUE) == JPEG_HEADER_OK;
    ok = ok && d.image_width == width && d.image_height == height && d.num_components == 1;
    if (ok) {
        jpeg_start_decompress (&d);
        while (d.output_scanline < d.output_height) {
            JSAMPROW row = pixels + (size_t) d.output_scanline * width;
            jpeg_read_scanlines (&d, &row, 1);
        }
        jpeg_finish_decompress (&d);
        ok = jerr.pub.num_warnings == 0;
        for (uint64_t k = 0; ok && k < width * height; k++)
            ok = pixels[k] == pixels[0];
        *pixel = pixels[0];
    }
    jpeg_destroy_decompress (&d);
    free (pixels);
    return ok;
}

/* Object i of ds (png or jpeg): its size is sb_format_image_object_size's,
 * dim1 * dim2 (sb_dataset_object_size) when exact, the decoder reads a
 * dim1-row, dim2-column gray image of constant pixels, and deflate cannot
 * shrink the file by more than its image coding (the padding is noise). */
static void
s_check_image (const sb_dataset_t *ds, uint64_t i, int *exact)
{
    char key[256], err[256];
    ck_assert_int_eq (sb_dataset_key (ds, i, key, sizeof key), 0);
    sb_format_obj_t obj;
    ck_assert_msg (sb_format_open (&obj, ds, i, key, err, sizeof err) == 0, "%s", err);
    uint64_t dims[SB_DATASET_MAX_DIMS], size = 0, known = 0;
    int listed;
    size_t n = sb_dataset_sample_shape (ds, i, dims, SB_DATASET_MAX_DIMS, &listed);
    uint64_t h = dims[0], w = n > 1 ? dims[1] : 1;
    ck_assert_int_eq (sb_format_image_object_size (ds, i, &size, exact, err, sizeof err), 0);
    ck_assert_int_eq (sb_generator_size (ds, 0, i, &known, err, sizeof err), 0);
    ck_assert_uint_eq (sb_dataset_object_size (ds, i), w * h);
    ck_assert_msg (obj.size == size && known == size, "%s %llux%llu: %llu bytes, %llu computed, %llu known",
                   ds->format, (unsigned long long) w, (unsigned long long) h, (unsigned long long) obj.size,
                   (unsigned long long) size, (unsigned long long) known);
    if (*exact)
        ck_assert_uint_eq (obj.size, w * h);
    else    /* the smallest image: larger, or (png) a few bytes short */
        ck_assert_msg (obj.size > w * h || (strcmp (ds->format, "png") == 0 && w * h - obj.size < 12), "%s %llux%llu: %llu bytes",
                       ds->format, (unsigned long long) w, (unsigned long long) h, (unsigned long long) obj.size);
    uint8_t *b = malloc ((size_t) obj.size);
    ck_assert_ptr_nonnull (b);
    sb_format_fill (&obj, 0, b, (size_t) obj.size);
    uint8_t pixel = 1;
    int png = strcmp (ds->format, "png") == 0;
    ck_assert_msg (png ? s_png_decodes (b, obj.size, w, h, &pixel) : s_jpeg_decodes (b, obj.size, w, h, &pixel),
                   "%s %llux%llu (%llu bytes) does not decode", ds->format, (unsigned long long) w,
                   (unsigned long long) h, (unsigned long long) obj.size);
    ck_assert_uint_eq (pixel, png ? 0 : 128);
    if (obj.size > 100000) {
        uLongf zlen = compressBound ((uLong) obj.size);
        uint8_t *z = malloc (zlen);
        ck_assert_int_eq (compress2 (z, &zlen, b, (uLong) obj.size, 9), Z_OK);
        ck_assert_uint_gt (zlen, obj.size - obj.size / 50);
        free (z);
    }
    free (b);
    sb_format_close (&obj);
}

START_TEST (test_png)
{
    /* without a shape: records * record pixels about square, that many bytes */
    uint64_t size;
    uint8_t *b = s_generate (&sb_format_png, 11, 1, 10000, 4096, &size);
    ck_assert_uint_eq (size, 10000);
    uint8_t pixel = 1;
    ck_assert (s_png_decodes (b, size, 100, 100, &pixel));
    ck_assert_uint_eq (pixel, 0);
    /* the padding chunk before IEND holds the object's seeded bytes */
    ck_assert (memcmp (b + size - 12, "\0\0\0\0IEND", 8) == 0);
    uint8_t *pad = memmem (b, size, "sbPd", 4);
    ck_assert_ptr_nonnull (pad);
    uint64_t pad_len = (uint64_t) (b + size - 12 - 4 - (pad + 4));
    ck_assert_uint_eq (((uint64_t) pad[-4] << 24 | pad[-3] << 16 | pad[-2] << 8 | pad[-1]), pad_len);
    uint8_t *expect = malloc (pad_len);
    sb_content_fill (11, 0, expect, pad_len);
    ck_assert (memcmp (pad + 4, expect, pad_len) == 0);
    ck_assert_uint_gt (pad_len, 10000 - 200);
    free (expect);
    free (b);
    s_check_ranges (&sb_format_png, 11, 1, 10000);
    s_check_ranges (&sb_format_png, 12, 3, 70000);
}
END_TEST

START_TEST (test_jpeg)
{
    uint64_t size;
    uint8_t *b = s_generate (&sb_format_jpeg, 13, 1, 4900, 4096, &size);
    ck_assert_uint_eq (size, 4900);
    uint8_t pixel = 1;
    ck_assert (s_jpeg_decodes (b, size, 70, 70, &pixel));
    ck_assert_uint_eq (pixel, 128);
    /* SOI, APP0 JFIF, then one COM segment of the object's seeded bytes */
    ck_assert (memcmp (b, "\xff\xd8\xff\xe0\0\x10JFIF", 10) == 0);
    ck_assert (b[20] == 0xff && b[21] == 0xfe);
    uint64_t com = (uint64_t) b[22] << 8 | b[23];
    uint8_t expect[4900];
    sb_content_fill (13, 0, expect, com - 2);
    ck_assert (memcmp (b + 24, expect, com - 2) == 0);
    ck_assert (b[22 + com] == 0xff && b[23 + com] == 0xdb);
    ck_assert (b[size - 2] == 0xff && b[size - 1] == 0xd9);
    free (b);
    s_check_ranges (&sb_format_jpeg, 13, 1, 4900);
    /* over 65537 bytes of padding: several COM segments */
    s_check_ranges (&sb_format_jpeg, 14, 3, 70000);
}
END_TEST

/* Every shape up to 48 x 48, and DLIO's record lengths with and without a
 * stdev and several samples a file: each file exactly dim1 * dim2 bytes
 * but for tiny images, which are their smallest valid encoding. */
START_TEST (test_image_sizes)
{
    static const char *const formats[] = { "png", "jpeg" };
    for (int f = 0; f < 2; f++) {
        uint64_t dims[2];
        sb_dataset_t ds = { .prefix = "img", .format = formats[f], .files = 1, .subfolders = 1,
                            .samples_per_file = 1, .record_length = 4096, .seed = 5, .record_dims = dims,
                            .record_ndims = 2 };
        uint64_t inexact = 0, largest_inexact = 0;
        for (dims[0] = 1; dims[0] <= 48; dims[0]++)
            for (dims[1] = 1; dims[1] <= 48; dims[1]++) {
                int exact;
                s_check_image (&ds, 0, &exact);
                if (!exact) {
                    inexact++;
                    if (dims[0] * dims[1] > largest_inexact)
                        largest_inexact = dims[0] * dims[1];
                    uint64_t first = 99;
                    ck_assert_uint_eq (sb_format_image_inexact (&ds, &first), 1);
                    ck_assert_uint_eq (first, 0);
                }
                else
                    ck_assert_uint_eq (sb_format_image_inexact (&ds, NULL), 0);
            }
        /* png's smallest is 68 bytes or so, jpeg's 155; a few png sizes just
         * above the smallest cannot be reached either */
        ck_assert_msg (f == 0 ? largest_inexact <= 80 : largest_inexact <= 160, "%s: %llu pixels not exact",
                       formats[f], (unsigned long long) largest_inexact);
        ck_assert_uint_gt (inexact, 0);
        /* one dimension: dim2 1 */
        ds.record_ndims = 1;
        dims[0] = 5000;
        int exact;
        s_check_image (&ds, 0, &exact);
        ck_assert (exact);
        /* DLIO's dims from record_length_bytes (int(sqrt)), with and without
         * a stdev, several samples a file: one image of one sample's bytes */
        static const uint64_t lengths[] = { 4000, 65537, 150000, 1048576, 2 * 1048576 + 12345 };
        for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++)
            for (uint64_t stdev = 0; stdev <= lengths[k] / 4; stdev += lengths[k] / 4) {
                sb_dataset_t d = { .prefix = "img", .format = formats[f], .files = 6, .subfolders = 1,
                                   .samples_per_file = 1 + k % 3, .record_length = lengths[k],
                                   .record_stdev = stdev, .seed = 9 + k, .element_type = "float32" };
                ck_assert (sb_generator_size_known (&d, 0));
                for (uint64_t i = 0; i < d.files; i++) {
                    s_check_image (&d, i, &exact);
                    ck_assert (exact);
                }
                ck_assert_uint_eq (sb_format_image_inexact (&d, NULL), 0);
                if (stdev == 0) {
                    uint64_t d1, d2, root = (uint64_t) sqrt ((double) lengths[k]);
                    sb_dataset_record_dims (&d, 0, &d1, &d2);
                    ck_assert_uint_eq (d1, root);
                    ck_assert_uint_eq (sb_dataset_object_size (&d, 3), root * root);
                }
            }
        /* tiny: every file of a 7 x 7 dataset is inexact, counted once each */
        sb_dataset_t tiny = { .prefix = "img", .format = formats[f], .files = 5, .subfolders = 1,
                              .samples_per_file = 1, .record_length = 49, .seed = 1 };
        uint64_t first = 99;
        ck_assert_uint_eq (sb_format_image_inexact (&tiny, &first), 5);
        ck_assert_uint_eq (first, 0);
        /* too large for jpeg */
        uint64_t size;
        char err[256];
        ck_assert_int_eq (sb_format_image_size ("jpeg", 70000, 2, 140000, &size, &exact, err, sizeof err), -1);
        ck_assert_ptr_nonnull (strstr (err, "65500 pixels a side"));
    }
    ck_assert (sb_format_is_image ("JPG") && sb_format_is_image ("png") && !sb_format_is_image ("hdf5"));
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

/* a data page header's length: it ends with two 0 bytes (the ends of
 * data_page_header and of PageHeader), none before (type DATA_PAGE, 0, is
 * followed by a field header; every other value is not 0) */
static uint64_t
s_data_header_len (const uint8_t *h)
{
    uint64_t k = 2;
    while (!(h[k] == 0 && h[k - 1] == 0))
        k++;
    return k + 1;
}

/* an unsigned varint: its bytes into out, their count */
static size_t
s_put_varint (uint8_t *out, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        out[n++] = (uint8_t) (v | 0x80);
    out[n++] = (uint8_t) v;
    return n;
}

/* the uint8 dictionary page of DLIO's legacy data column: PageHeader
 * {type DICTIONARY_PAGE, 1024, 1024, dictionary_page_header {256, PLAIN}}
 * then the values 0..255 as INT32 */
static const uint8_t s_dict_head[] = { 0x15, 0x04, 0x15, 0x80, 0x10, 0x15, 0x80, 0x10,
                                       0x4c, 0x15, 0x80, 0x04, 0x15, 0x00, 0x00, 0x00 };

/* the levels of a page of rows rows of a list of k uint8 (dictionary
 * encoded) into out, their length: repetition levels (u32 length, per row
 * an RLE run of one 0, one of k - 1 ones), definition levels (u32 length,
 * one RLE run of rows x k 3s), the index bit width 8, the header of one
 * bit-packed run of every group of 8 */
static size_t
s_list_u8_levels (uint8_t *out, uint64_t rows, uint64_t k)
{
    uint8_t row[16];
    size_t rl = 0, n = 4;
    row[rl++] = 2;
    row[rl++] = 0;
    rl += s_put_varint (row + rl, (k - 1) << 1);
    row[rl++] = 1;
    uint32_t len = (uint32_t) (rows * rl);
    memcpy (out, &len, 4);
    for (uint64_t j = 0; j < rows; j++, n += rl)
        memcpy (out + n, row, rl);
    uint8_t def[16];
    size_t dl = s_put_varint (def, rows * k << 1);
    def[dl++] = 3;
    len = (uint32_t) dl;
    memcpy (out + n, &len, 4);
    memcpy (out + n + 4, def, dl);
    n += 4 + dl;
    out[n++] = 8;
    n += s_put_varint (out + n, (rows * k + 7) / 8 << 1 | 1);
    return n;
}

START_TEST (test_parquet)
{
    /* DLIO's legacy mode: one column, data, a list of the record's uint8.
     * 300 rows of 5000 bytes: 209 rows a group (1 MiB of data), so groups
     * of 209 and 91 */
    uint64_t size;
    uint8_t *b = s_generate (&sb_format_parquet, 19, 300, 5000, 4096, &size);
    ck_assert (memcmp (b, "PAR1", 4) == 0);
    ck_assert (memcmp (b + size - 4, "PAR1", 4) == 0);
    uint32_t footer = s_le32 (b + size - 8);
    ck_assert_uint_lt (footer, size);
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
    static uint8_t levels[8 + 300 * 5 + 32];
    uint8_t expect[5000], dict[1024];
    for (int v = 0; v < 256; v++) {
        uint32_t x = (uint32_t) v;
        memcpy (dict + 4 * v, &x, 4);
    }
    const uint64_t first[2] = { 0, 209 }, rows[2] = { 209, 91 }, at[2] = { g0, g1 }, len[2] = { g0len, g1len };
    ck_assert_uint_eq (g0, 4);
    for (int g = 0; g < 2; g++) {
        /* the dictionary page, the data page header, the levels (5 bytes a
         * row of repetition levels: 02 00 8e 4e 01), the values */
        const uint8_t *c = b + at[g];
        ck_assert (memcmp (c, s_dict_head, sizeof s_dict_head) == 0);
        ck_assert (memcmp (c + 16, dict, 1024) == 0);
        uint64_t hd = s_data_header_len (c + 1040);
        size_t lev = s_list_u8_levels (levels, rows[g], 5000);
        ck_assert_uint_eq (lev, 4 + rows[g] * 5 + 4 + 3 + 1 + 1 + 3);     /* varints of 3 bytes: 2090000, 910000 */
        ck_assert (memcmp (c + 1040 + hd, levels, lev) == 0);
        /* 209 x 5000 and 91 x 5000 are multiples of 8: no padding */
        ck_assert_uint_eq (len[g], 1040 + hd + lev + rows[g] * 5000);
        uint64_t j = g ? 250 : 17;
        sb_content_fill (19, j * 5000, expect, 5000);
        ck_assert (memcmp (c + 1040 + hd + lev + (j - first[g]) * 5000, expect, 5000) == 0);
    }
    ck_assert_uint_eq (g1, 4 + g0len);
    ck_assert_uint_eq (g1 + g1len, sb_format_parquet_footer_at (l));
    sb_format_parquet_layout_free (l);
    /* the footer names the column and the list's levels, not a label */
    const uint8_t *f = b + size - 8 - footer;
    ck_assert_ptr_nonnull (memmem (f, footer, "data", 4));
    ck_assert_ptr_nonnull (memmem (f, footer, "element", 7));
    ck_assert_ptr_null (memmem (f, footer, "label", 5));
    sb_format_close (&obj);
    free (b);
    s_check_ranges (&sb_format_parquet, 19, 300, 5000);
    s_check_ranges (&sb_format_parquet, 19, 1, 3000000);
    s_check_ranges (&sb_format_parquet, 19, 7, 13);     /* 91 values: the last group of 8 padded */
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
    /* a row in the pages: 4 + 2 + 8 + 1 (int8: a dictionary index) + 52 + 8 = 75 bytes of values, + 4 of
     * vec's repetition levels; a chunk: a page header (< 32 bytes), levels of at most 4 + 4 + 1 (+ 4, vec's
     * length; + 1 + 2, small's bit width and run header), small's dictionary page (16 + 1024) */
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
        ck_assert_uint_gt (len, rows * 79 + 1040 + 6 * 7);
        ck_assert_uint_lt (len, rows * 79 + 1040 + 6 * (32 + 9) + 4 + 3);
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
    /* group 2, row 300 (its row 44), column by column: [dictionary page]
     * page header, levels, 128 values. Levels of 128 rows: definition
     * levels u32 + varint(128 << 1) (2 bytes) + 1 = 7; small + 1 + 1
     * (varint(16 << 1 | 1)); vec: repetition levels u32 + 128 x 4
     * (02 00 18 01) and definition levels u32 + varint(1664 << 1) (2) + 1 */
    uint64_t off, len;
    ck_assert_int_eq (sb_format_parquet_group (l, 300, &off, &len), 0);
    uint64_t at = off;
    const uint64_t widths[6] = { 4, 2, 8, 1, 52, 8 }, lev[6] = { 7, 7, 7, 9, 516 + 7, 7 },
                   content_at[6] = { 0, 4, 6, 14, 15, 67 };
    for (int c = 0; c < 6; c++) {
        if (c == 3) {   /* int8: the dictionary page, the 256 int8 as INT32 */
            ck_assert (memcmp (b + at, s_dict_head, 8) == 0);
            for (int v = 0; v < 256; v++) {
                int32_t d;
                memcpy (&d, b + at + 16 + 4 * v, 4);
                ck_assert_int_eq (d, (int32_t) (int8_t) v);
            }
            at += 1040;
        }
        uint64_t hdr = s_data_header_len (b + at);
        uint32_t def_len;
        memcpy (&def_len, b + at + hdr + lev[c] - (c == 3 ? 2 : 0) - 7, 4);
        ck_assert_uint_eq (def_len, 3);
        if (c == 4) {
            static const uint8_t rep0[] = { 0x00, 0x02, 0x00, 0x00, 0x02, 0x00, 0x18, 0x01 };   /* u32 512 */
            ck_assert (memcmp (b + at + hdr, rep0, sizeof rep0) == 0);
        }
        /* row 44's values: its content bytes (int8: the byte is the index) */
        uint8_t expect[52];
        sb_content_fill (23, 300 * 75 + content_at[c], expect, (size_t) widths[c]);
        ck_assert_msg (memcmp (b + at + hdr + lev[c] + 44 * widths[c], expect, (size_t) widths[c]) == 0,
                       "column %d", c);
        at += hdr + lev[c] + 128 * widths[c];
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
    tcase_add_test (tc, test_image_sizes);
    tcase_add_test (tc, test_hdf5);
    tcase_add_test (tc, test_parquet);
    tcase_add_test (tc, test_parquet_columns);
    tcase_add_test (tc, test_registry);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
