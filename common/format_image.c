/* format_image: png and jpeg images of seeded pixels.
 *
 * An object is one 8-bit grayscale image: as DLIO's generators shape a
 * sample, dim1 rows of dim2 pixels (PIL fromarray of a (dim1, dim2) uint8
 * array), the object's samples one under the other (height records x
 * dim1); opened without a shape, about records * record pixels, width
 * round(sqrt(pixels)), height enough rows to hold them. Pixels come from
 * the content stream in row order (the last row padded with the stream's
 * next bytes). png: libpng, no filter, zlib level 0 (stored deflate
 * blocks: the pixels are noise, which deflate would not shrink anyway, so
 * the file is the pixel count plus some framing, and it is written
 * several times faster than at level 1). jpeg: libjpeg,
 * quality 90, baseline, no restart markers. Both encoders are deterministic,
 * so the whole file is encoded when the object is opened and any range is
 * a copy: a verifying reader re-encodes and compares. */
#include "format.h"
#include "util.h"

#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>

static int
s_pixels (sb_format_obj_t *obj, uint32_t *w, uint32_t *h, uint8_t **pixels, char *err, size_t err_size)
{
    uint64_t n = obj->records * obj->record;
    if (n > 1ull << 31) {
        snprintf (err, err_size, "image of %llu pixels: too large (2^31 at most)", (unsigned long long) n);
        return -1;
    }
    /* DLIO's image of a sample: (dim1, dim2) as PIL's fromarray makes it,
     * dim1 rows of dim2 pixels; the samples of an object one under the
     * other. Without a shape: about square. */
    uint64_t width, height;
    if (obj->ndims > 0) {
        width = obj->ndims > 1 ? obj->dims[1] : 1;
        height = obj->dims[0] * obj->records;
    }
    else {
        width = (uint64_t) llround (sqrt ((double) n));
        if (width < 1)
            width = 1;
        height = (n + width - 1) / width;
    }
    if (width > 0x7fffffff || height > 0x7fffffff) {
        snprintf (err, err_size, "image of %llu x %llu pixels: too large", (unsigned long long) width,
                  (unsigned long long) height);
        return -1;
    }
    *w = (uint32_t) width;
    *h = (uint32_t) height;
    *pixels = malloc ((size_t) (width * height));
    if (!*pixels) {
        snprintf (err, err_size, "out of memory for a %llux%llu image", (unsigned long long) width,
                  (unsigned long long) height);
        return -1;
    }
    sb_content_fill (obj->seed, 0, *pixels, (size_t) (width * height));
    return 0;
}

static void
s_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    memcpy (buf, obj->image + offset, len);
}

/* ---- png ---- */

typedef struct {
    uint8_t *data;
    size_t   len, cap;
    int      failed;
} s_membuf_t;

static void
s_png_write (png_structp png, png_bytep data, png_size_t len)
{
    s_membuf_t *m = png_get_io_ptr (png);
    if (m->failed)
        return;
    if (m->len + len > m->cap) {
        size_t cap = m->cap ? m->cap : 4096;
        while (cap < m->len + len)
            cap *= 2;
        uint8_t *p = realloc (m->data, cap);
        if (!p) {
            m->failed = 1;
            return;
        }
        m->data = p;
        m->cap = cap;
    }
    memcpy (m->data + m->len, data, len);
    m->len += len;
}

static void
s_png_flush (png_structp png)
{
}

static int
s_png_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    uint32_t w, h;
    uint8_t *pixels;
    if (s_pixels (obj, &w, &h, &pixels, err, err_size) != 0)
        return -1;
    s_membuf_t m = { 0 };
    png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct (png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct (&png, &info);
        free (pixels);
        snprintf (err, err_size, "png: out of memory");
        return -1;
    }
    if (setjmp (png_jmpbuf (png))) {
        png_destroy_write_struct (&png, &info);
        free (pixels);
        free (m.data);
        snprintf (err, err_size, "png: libpng failed to encode a %ux%u image", w, h);
        return -1;
    }
    png_set_write_fn (png, &m, s_png_write, s_png_flush);
    png_set_IHDR (png, info, w, h, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                  PNG_FILTER_TYPE_DEFAULT);
    png_set_filter (png, 0, PNG_FILTER_NONE);
    png_set_compression_level (png, 0);
    png_write_info (png, info);
    for (uint32_t y = 0; y < h; y++)
        png_write_row (png, pixels + (size_t) y * w);
    png_write_end (png, NULL);
    png_destroy_write_struct (&png, &info);
    free (pixels);
    if (m.failed) {
        free (m.data);
        snprintf (err, err_size, "png: out of memory");
        return -1;
    }
    obj->image = m.data;
    obj->size = m.len;
    return 0;
}

const sb_format_ops_t sb_format_png = { "png", s_png_open, s_fill, NULL };

/* ---- jpeg ---- */

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf               jump;
    char                  message[JMSG_LENGTH_MAX];
} s_jpeg_err_t;

static void
s_jpeg_error_exit (j_common_ptr cinfo)
{
    s_jpeg_err_t *e = (s_jpeg_err_t *) cinfo->err;
    (*cinfo->err->format_message) (cinfo, e->message);
    longjmp (e->jump, 1);
}

static int
s_jpeg_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    uint32_t w, h;
    uint8_t *pixels;
    if (s_pixels (obj, &w, &h, &pixels, err, err_size) != 0)
        return -1;
    if (w > 65500 || h > 65500) {
        free (pixels);
        snprintf (err, err_size, "jpeg: a %ux%u image is over the format's 65500 pixels a side", w, h);
        return -1;
    }
    struct jpeg_compress_struct c;
    s_jpeg_err_t jerr;
    /* our own output buffer, large enough that libjpeg does not replace it:
     * when it grows one itself, the error path could not know which buffer
     * is live (ours is never freed by libjpeg) */
    size_t cap = (size_t) w * h * 2 + 65536;
    unsigned char *volatile mine = malloc (cap);
    unsigned char *out = mine;
    unsigned long out_len = (unsigned long) cap;
    if (!mine) {
        free (pixels);
        snprintf (err, err_size, "jpeg: out of memory for a %ux%u image", w, h);
        return -1;
    }
    c.err = jpeg_std_error (&jerr.pub);
    jerr.pub.error_exit = s_jpeg_error_exit;
    if (setjmp (jerr.jump)) {
        jpeg_destroy_compress (&c);
        free (pixels);
        free (mine);
        snprintf (err, err_size, "jpeg: %s", jerr.message);
        return -1;
    }
    jpeg_create_compress (&c);
    jpeg_mem_dest (&c, &out, &out_len);
    c.image_width = w;
    c.image_height = h;
    c.input_components = 1;
    c.in_color_space = JCS_GRAYSCALE;
    jpeg_set_defaults (&c);
    jpeg_set_quality (&c, 90, TRUE);
    jpeg_start_compress (&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = pixels + (size_t) c.next_scanline * w;
        jpeg_write_scanlines (&c, &row, 1);
    }
    jpeg_finish_compress (&c);
    jpeg_destroy_compress (&c);
    free (pixels);
    if (out != mine)    /* libjpeg needed more after all: its buffer is the image */
        free (mine);
    obj->image = out;
    obj->size = out_len;
    return 0;
}

const sb_format_ops_t sb_format_jpeg = { "jpeg", s_jpeg_open, s_fill, NULL };
