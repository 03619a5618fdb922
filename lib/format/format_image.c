/* format_image: png and jpeg images of DLIO's size in bytes.
 *
 * DLIO_local_changes' jpeg and png generators, on every loader but DALI,
 * write a file as the raw dim1 x dim2 uint8 bytes of one sample (no image
 * encoding, whatever num_samples_per_file is), and its image readers read
 * the whole file without decoding it. shardbench writes a real image of
 * dim1 rows of dim2 8-bit gray pixels (PIL opens it, mode "L") that is
 * exactly dim1 * dim2 bytes long, so a run reads what DLIO reads:
 *
 * - the pixels are constant (png: 0, jpeg: 128), coded in a few bytes by
 *   encoders written here, whose sizes are arithmetic (no encoding needed
 *   to know an object's size: sb_format_image_size);
 * - the rest of the file is seeded incompressible bytes (sb_content_fill of
 *   the object's seed): png: in a private ancillary chunk "sbPd" before
 *   IEND; jpeg: in COM segments (65533 bytes each at most) right after
 *   SOI and APP0. Remainders too small for that framing (png 1..11 bytes,
 *   jpeg 1..3) are absorbed by the image coding itself: png by spare
 *   distance bits and empty deflate blocks, jpeg by unused Huffman codes.
 *
 * An image whose smallest valid encoding is larger than dim1 * dim2 (png
 * under about 70 pixels, jpeg under about 160) is written at that smallest
 * size instead (sb_format_image_size says *exact 0). The whole file is
 * built in memory when the object is opened (it is one sample: small), and
 * any range is a copy. Opened without a shape (sb_format_open_with), the
 * image holds records * record pixels, about square, and is that many
 * bytes long. */
#include "format.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#define S_MAX_PIXELS (1ull << 31)
#define S_JPEG_MAX_SIDE 65500

/* The image of obj: width x height pixels, and the bytes DLIO writes for
 * it (target). Returns 0, or -1 with err set. */
static int
s_shape (const sb_format_obj_t *obj, uint64_t *width, uint64_t *height, uint64_t *target, char *err, size_t err_size)
{
    if (obj->ndims > 0) {
        /* DLIO's (dim1, dim2) sample, as PIL's fromarray makes it: dim1 rows of dim2 pixels */
        *height = obj->dims[0];
        *width = obj->ndims > 1 ? obj->dims[1] : 1;
        *target = *width * *height;
    }
    else {
        uint64_t n = obj->records * obj->record;
        *width = (uint64_t) llround (sqrt ((double) n));
        if (*width < 1)
            *width = 1;
        *height = (n + *width - 1) / *width;
        *target = n;
    }
    if (*width < 1 || *height < 1 || *width > 0x7fffffff || *height > 0x7fffffff
        || *width * *height > S_MAX_PIXELS) {
        snprintf (err, err_size, "image of %llu x %llu pixels: too large (2^31 pixels at most)",
                  (unsigned long long) *width, (unsigned long long) *height);
        return -1;
    }
    return 0;
}

static void
s_be32 (uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}

/* ---- png: deflate of R zero bytes (rows of filter 0 and black pixels) ----
 *
 * One literal 0, then matches of 258 at distance 1 and a last shorter
 * match (or one or two literals), in one final block of fixed Huffman
 * codes: B0 bits. Exact sizes above that come from (a) ks empty stored
 * blocks first (5 bytes each), (b) kf empty fixed blocks (10 bits each)
 * and (c) x extra distance bits: a match at position p may copy from any
 * distance up to p (every byte is 0), and a distance code with e extra bits
 * costs e more. */

static const uint16_t s_len_base[29] = { 3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                         31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint8_t  s_len_extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                          2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };

/* Length code index (0..28) of a match of len bytes (3..258). */
static int
s_len_code (uint64_t len)
{
    if (len == 258)
        return 28;
    int c = 27;
    while (s_len_base[c] > len)
        c--;
    return c;
}

/* Bits of the lit/len code and extra bits of a match of len, distance bits
 * (5) not counted. */
static uint64_t
s_len_bits (uint64_t len)
{
    int c = s_len_code (len);
    return (257 + c < 280 ? 7u : 8u) + s_len_extra[c];
}

/* Extra distance bits a match at position p (bytes already out) can take. */
static uint64_t
s_dist_room (uint64_t p)
{
    uint64_t e = 0;
    while (e < 13 && (1ull << (e + 2)) + 1 <= p)
        e++;
    return e;
}

typedef struct {
    uint64_t raw;      /* R: bytes the stream inflates to */
    uint64_t bits0;    /* B0 */
    uint64_t room;     /* extra distance bits available (capped) */
    uint64_t ks, kf, x;
} s_zplan_t;

static void
s_zplan_init (s_zplan_t *z, uint64_t raw)
{
    memset (z, 0, sizeof *z);
    z->raw = raw;
    uint64_t n = raw - 1, q = n / 258, r = n % 258;
    z->bits0 = 3 + 8 + 13 * q + (r == 0 ? 0 : r < 3 ? 8 * r : s_len_bits (r) + 5) + 7;
    for (uint64_t j = 0; j <= q && z->room < 256; j++)
        if (j < q || r >= 3)
            z->room += s_dist_room (1 + 258 * j);
}

static uint64_t
s_zplan_bytes (const s_zplan_t *z)
{
    return 5 * z->ks + (z->bits0 + 10 * z->kf + z->x + 7) / 8;
}

/* Make the deflate stream extra bytes longer than its smallest. 0, or -1
 * when this coding cannot (tiny images). */
static int
s_zplan_grow (s_zplan_t *z, uint64_t extra)
{
    uint64_t c0 = (z->bits0 + 7) / 8;
    for (uint64_t ks = 0; ks <= 2 && 5 * ks <= extra; ks++) {
        uint64_t want = 8 * (c0 + extra - 5 * ks) - z->bits0;
        uint64_t kf = want <= z->room ? 0 : (want - z->room + 9) / 10;
        if (10 * kf > want)
            continue;
        uint64_t x = want - 10 * kf;
        if (x <= z->room) {
            z->ks = ks;
            z->kf = kf;
            z->x = x;
            return 0;
        }
    }
    return -1;
}

typedef struct {
    uint8_t *out;
    size_t   at;
    uint64_t acc;
    unsigned n;
} s_bits_t;

static void
s_put (s_bits_t *b, uint32_t v, unsigned bits)
{
    b->acc |= (uint64_t) v << b->n;
    b->n += bits;
    while (b->n >= 8) {
        b->out[b->at++] = (uint8_t) b->acc;
        b->acc >>= 8;
        b->n -= 8;
    }
}

/* A Huffman code: deflate packs its bits from the most significant. */
static void
s_put_code (s_bits_t *b, uint32_t code, unsigned len)
{
    uint32_t r = 0;
    for (unsigned k = 0; k < len; k++)
        r |= ((code >> k) & 1u) << (len - 1 - k);
    s_put (b, r, len);
}

static void
s_put_match (s_bits_t *b, uint64_t len, uint64_t *x, uint64_t pos)
{
    int c = s_len_code (len);
    unsigned sym = 257u + (unsigned) c;
    if (sym < 280)
        s_put_code (b, sym - 256, 7);
    else
        s_put_code (b, 0xc0 + sym - 280, 8);
    s_put (b, (uint32_t) (len - s_len_base[c]), s_len_extra[c]);
    uint64_t e = s_dist_room (pos);
    if (e > *x)
        e = *x;
    *x -= e;
    /* distance code 0 (distance 1), or 2e + 2 (distance 2^(e+1) + 1, e extra bits of 0) */
    s_put_code (b, e == 0 ? 0 : (uint32_t) (2 * e + 2), 5);
    s_put (b, 0, (unsigned) e);
}

/* The deflate stream of the plan into out (s_zplan_bytes bytes). */
static size_t
s_zplan_write (const s_zplan_t *z, uint8_t *out)
{
    s_bits_t b = { out, 0, 0, 0 };
    for (uint64_t k = 0; k < z->ks; k++) {  /* empty stored block, byte aligned */
        s_put (&b, 0, 3);
        s_put (&b, 0, 5);
        s_put (&b, 0x0000, 16);
        s_put (&b, 0xffff, 16);
    }
    for (uint64_t k = 0; k < z->kf; k++) {  /* empty fixed block */
        s_put (&b, 0, 1);
        s_put (&b, 1, 2);
        s_put_code (&b, 0, 7);
    }
    s_put (&b, 1, 1);
    s_put (&b, 1, 2);
    s_put_code (&b, 0x30, 8);  /* literal 0 */
    uint64_t n = z->raw - 1, q = n / 258, r = n % 258, x = z->x;
    for (uint64_t j = 0; j < q; j++)
        s_put_match (&b, 258, &x, 1 + 258 * j);
    if (r >= 3)
        s_put_match (&b, r, &x, 1 + 258 * q);
    else
        for (uint64_t j = 0; j < r; j++)
            s_put_code (&b, 0x30, 8);
    s_put_code (&b, 0, 7);  /* end of block */
    if (b.n > 0)
        s_put (&b, 0, 8 - b.n);
    return b.at;
}

#define S_PNG_FRAME (8 + 25 + 12 + 2 + 4 + 12)  /* signature, IHDR, IDAT framing, zlib, IEND */
#define S_PNG_PAD_MIN 12                        /* an empty sbPd chunk */

typedef struct {
    s_zplan_t z;
    uint64_t  pad;       /* sbPd data bytes, or UINT64_MAX: no sbPd chunk */
    uint64_t  size;
    int       exact;
} s_png_plan_t;

static void
s_png_plan (s_png_plan_t *p, uint64_t w, uint64_t h, uint64_t target)
{
    s_zplan_init (&p->z, h * (w + 1));
    uint64_t least = S_PNG_FRAME + s_zplan_bytes (&p->z);
    p->pad = UINT64_MAX;
    p->size = least;
    p->exact = target == least;
    if (target <= least)
        return;
    uint64_t extra = target - least;
    if (extra >= S_PNG_PAD_MIN)
        p->pad = extra - S_PNG_PAD_MIN;
    else if (s_zplan_grow (&p->z, extra) != 0)
        return;
    p->size = target;
    p->exact = 1;
}

static uint8_t *
s_png_chunk (uint8_t *at, const char *type, const uint8_t *data, uint64_t len, uint64_t seed)
{
    s_be32 (at, (uint32_t) len);
    memcpy (at + 4, type, 4);
    uLong crc = crc32 (0, at + 4, 4);
    if (data)
        memcpy (at + 8, data, (size_t) len);
    else
        sb_content_fill (seed, 0, at + 8, (size_t) len);
    for (uint64_t k = 0; k < len; k += 1u << 30) {
        uint64_t n = len - k < (1u << 30) ? len - k : (1u << 30);
        crc = crc32 (crc, at + 8 + k, (uInt) n);
    }
    s_be32 (at + 8 + len, (uint32_t) crc);
    return at + 12 + len;
}

static int
s_png_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    uint64_t w, h, target;
    if (s_shape (obj, &w, &h, &target, err, err_size) != 0)
        return -1;
    s_png_plan_t p;
    s_png_plan (&p, w, h, target);
    uint8_t *image = malloc ((size_t) p.size);
    size_t zlen = (size_t) s_zplan_bytes (&p.z) + 6;
    uint8_t *z = malloc (zlen);
    if (!image || !z) {
        free (image);
        free (z);
        snprintf (err, err_size, "png: out of memory for a %llu-byte image", (unsigned long long) p.size);
        return -1;
    }
    z[0] = 0x78;    /* deflate, 32 KiB window; check bits: 0x7801 % 31 == 0 */
    z[1] = 0x01;
    size_t d = s_zplan_write (&p.z, z + 2);
    s_be32 (z + 2 + d, (uint32_t) ((p.z.raw % 65521) << 16 | 1));    /* adler-32 of R zeros */
    static const uint8_t signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    uint8_t ihdr[13];
    s_be32 (ihdr, (uint32_t) w);
    s_be32 (ihdr + 4, (uint32_t) h);
    ihdr[8] = 8;    /* bit depth */
    ihdr[9] = 0;    /* gray */
    ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, filter method 0, no interlace */
    uint8_t *at = image;
    memcpy (at, signature, 8);
    at = s_png_chunk (at + 8, "IHDR", ihdr, 13, 0);
    at = s_png_chunk (at, "IDAT", z, 2 + d + 4, 0);
    if (p.pad != UINT64_MAX)
        at = s_png_chunk (at, "sbPd", NULL, p.pad, obj->seed);
    at = s_png_chunk (at, "IEND", NULL, 0, 0);
    free (z);
    obj->image = image;
    obj->size = (uint64_t) (at - image);
    return 0;
}

static void
s_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    memcpy (buf, obj->image + offset, len);
}

const sb_format_ops_t sb_format_png = { "png", s_png_open, s_fill, NULL };

/* ---- jpeg: baseline, one gray component, every block DC 0 and EOB ----
 *
 * The Huffman tables have one 1-bit code each (DC difference category 0,
 * AC end of block), so a block is 2 bits and the scan ceil(blocks / 4)
 * bytes; up to 3 unused AC codes (2 to 4 bits long) add a byte each to the
 * table segment. Quantization: all 1. */

#define S_JPEG_HEAD 20      /* SOI, APP0 JFIF */
#define S_JPEG_TABLES (69 + 13 + 40 + 10 + 2)   /* DQT, SOF0, DHT, SOS, EOI */
#define S_COM_MAX 65533u    /* payload of one COM segment */

typedef struct {
    uint64_t blocks, scan;
    uint64_t spare;     /* unused AC codes, 0..3 */
    uint64_t pad;       /* bytes of the COM segments, markers included */
    uint64_t size;
    int      exact;
} s_jpeg_plan_t;

static void
s_jpeg_plan (s_jpeg_plan_t *p, uint64_t w, uint64_t h, uint64_t target)
{
    memset (p, 0, sizeof *p);
    p->blocks = ((w + 7) / 8) * ((h + 7) / 8);
    p->scan = (p->blocks + 3) / 4;
    uint64_t least = S_JPEG_HEAD + S_JPEG_TABLES + p->scan;
    p->size = least > target ? least : target;
    p->exact = target >= least;
    if (target <= least)
        return;
    uint64_t extra = target - least, rem = extra % (S_COM_MAX + 4);
    p->spare = rem < 4 ? rem : 0;
    p->pad = extra - p->spare;
}

static int
s_jpeg_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    uint64_t w, h, target;
    if (s_shape (obj, &w, &h, &target, err, err_size) != 0)
        return -1;
    if (w > S_JPEG_MAX_SIDE || h > S_JPEG_MAX_SIDE) {
        snprintf (err, err_size, "jpeg: a %llux%llu image is over the format's %d pixels a side",
                  (unsigned long long) w, (unsigned long long) h, S_JPEG_MAX_SIDE);
        return -1;
    }
    s_jpeg_plan_t p;
    s_jpeg_plan (&p, w, h, target);
    uint8_t *image = malloc ((size_t) p.size);
    if (!image) {
        snprintf (err, err_size, "jpeg: out of memory for a %llu-byte image", (unsigned long long) p.size);
        return -1;
    }
    static const uint8_t head[S_JPEG_HEAD] = { 0xff, 0xd8, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0,
                                               1,    1,    0,    0,    1, 0,  1,   0,   0 };
    uint8_t *at = image;
    memcpy (at, head, sizeof head);
    at += sizeof head;
    uint64_t content = 0;
    for (uint64_t left = p.pad; left > 0;) {
        uint64_t seg = left < S_COM_MAX + 4 ? left : S_COM_MAX + 4, n = seg - 4;
        at[0] = 0xff;
        at[1] = 0xfe;
        at[2] = (uint8_t) ((n + 2) >> 8);
        at[3] = (uint8_t) (n + 2);
        sb_content_fill (obj->seed, content, at + 4, (size_t) n);
        content += n;
        at += seg;
        left -= seg;
    }
    /* DQT: table 0, 8-bit, all 1 */
    *at++ = 0xff;
    *at++ = 0xdb;
    *at++ = 0;
    *at++ = 67;
    *at++ = 0;
    memset (at, 1, 64);
    at += 64;
    /* SOF0: 8-bit, h x w, one component (id 1, 1x1 sampling, table 0) */
    const uint8_t sof[13] = { 0xff, 0xc0, 0, 11, 8, (uint8_t) (h >> 8), (uint8_t) h, (uint8_t) (w >> 8), (uint8_t) w,
                              1,    1,    0x11, 0 };
    memcpy (at, sof, sizeof sof);
    at += sizeof sof;
    /* DHT: DC table 0 {category 0: '0'}; AC table 0 {EOB: '0', spare: '10', '110', '1110'} */
    uint64_t dht = 2 + 2 * 17 + 2 + p.spare;
    *at++ = 0xff;
    *at++ = 0xc4;
    *at++ = (uint8_t) (dht >> 8);
    *at++ = (uint8_t) dht;
    for (int table = 0; table < 2; table++) {
        uint64_t codes = table == 0 ? 1 : 1 + p.spare;
        *at++ = table == 0 ? 0x00 : 0x10;
        for (uint64_t len = 1; len <= 16; len++)
            *at++ = len <= codes ? 1 : 0;
        for (uint64_t s = 0; s < codes; s++)
            *at++ = (uint8_t) s;
    }
    /* SOS: component 1, tables 0/0, spectral 0..63 */
    static const uint8_t sos[10] = { 0xff, 0xda, 0, 8, 1, 1, 0x00, 0, 63, 0 };
    memcpy (at, sos, sizeof sos);
    at += sizeof sos;
    /* the scan: "00" a block, the last byte padded with 1 bits (never 0xff) */
    memset (at, 0, (size_t) p.scan);
    unsigned used = (unsigned) ((2 * p.blocks) % 8);
    if (used)
        at[p.scan - 1] = (uint8_t) ((1u << (8 - used)) - 1);
    at += p.scan;
    *at++ = 0xff;
    *at++ = 0xd9;
    obj->image = image;
    obj->size = (uint64_t) (at - image);
    return 0;
}

const sb_format_ops_t sb_format_jpeg = { "jpeg", s_jpeg_open, s_fill, NULL };

/* ---- sizes without encoding ---- */

int
sb_format_is_image (const char *format)
{
    return format
        && (strcasecmp (format, "png") == 0 || strcasecmp (format, "jpeg") == 0 || strcasecmp (format, "jpg") == 0);
}

int
sb_format_image_size (const char *format, uint64_t width, uint64_t height, uint64_t target, uint64_t *size,
                      int *exact, char *err, size_t err_size)
{
    if (width < 1 || height < 1 || width > 0x7fffffff || height > 0x7fffffff || width * height > S_MAX_PIXELS) {
        snprintf (err, err_size, "image of %llu x %llu pixels: too large (2^31 pixels at most)",
                  (unsigned long long) width, (unsigned long long) height);
        return -1;
    }
    if (format && strcasecmp (format, "png") == 0) {
        s_png_plan_t p;
        s_png_plan (&p, width, height, target);
        *size = p.size;
        *exact = p.exact;
        return 0;
    }
    if (width > S_JPEG_MAX_SIDE || height > S_JPEG_MAX_SIDE) {
        snprintf (err, err_size, "jpeg: a %llux%llu image is over the format's %d pixels a side",
                  (unsigned long long) width, (unsigned long long) height, S_JPEG_MAX_SIDE);
        return -1;
    }
    s_jpeg_plan_t p;
    s_jpeg_plan (&p, width, height, target);
    *size = p.size;
    *exact = p.exact;
    return 0;
}

int
sb_format_image_object_size (const sb_dataset_t *ds, uint64_t i, uint64_t *size, int *exact, char *err,
                             size_t err_size)
{
    uint64_t dims[SB_DATASET_MAX_DIMS];
    int listed;
    size_t n = sb_dataset_sample_shape (ds, i, dims, SB_DATASET_MAX_DIMS, &listed);
    if (n == 0) {
        snprintf (err, err_size, "object %llu: no image shape", (unsigned long long) i);
        return -1;
    }
    uint64_t h = dims[0], w = n > 1 ? dims[1] : 1;
    return sb_format_image_size (ds->format, w, h, w * h, size, exact, err, err_size);
}

uint64_t
sb_format_image_inexact (const sb_dataset_t *ds, uint64_t *first)
{
    uint64_t count = 0;
    for (uint64_t i = 0; i < ds->files; i++) {
        uint64_t size;
        int exact;
        char err[256];
        if (sb_format_image_object_size (ds, i, &size, &exact, err, sizeof err) == 0 && !exact) {
            if (count++ == 0 && first)
                *first = i;
        }
        if (i == 0 && (ds->record_stdev == 0 || ds->record_ndims > 0))
            return count ? ds->files : 0;   /* every object has object 0's shape */
    }
    return count;
}
