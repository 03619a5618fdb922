/* format_parquet: Apache Parquet files, written without a parquet library
 * (Debian has none), with the schema pyarrow gives DLIO's table
 * (DLIO_local_changes parquet_generator.py): one data page (v1) per column
 * chunk, uncompressed or compressed with dataset.compression (snappy:
 * libsnappy, gzip: zlib, zstd: libzstd, each at its library's default
 * level), a Thrift compact-protocol footer.
 *
 * One row per sample, OPTIONAL columns (pyarrow's fields are nullable; no
 * value is null). Without a column list (DLIO's legacy mode):
 *   data   list<uint8> of the record's bytes (row j: content bytes
 *          [j*record, (j+1)*record))
 * With dataset.parquet.columns ("name:dtype:size,..." here), the columns in
 * that order; a row's record is the sum of size x itemsize over the columns
 * and column c of row j holds content bytes [j*record + at_c, +width_c):
 *   float16 FIXED_LEN_BYTE_ARRAY(2) + Float16 logical type,
 *   float32 FLOAT, float64 DOUBLE, int32 INT32, int64 INT64,
 *   int8/int16/uint8/uint16/uint32 INT32 and uint64 INT64 + Int(bits,
 *   signed) logical type (16-bit: the content bytes sign or zero extended
 *   to 4 bytes, PLAIN; 8-bit: dictionary encoded, below);
 *   size k > 1 (and dtype list, float32): a LIST group of k elements a row
 *   (pa.list_(type, k)), repetition and definition levels before the values.
 * The page layout of each column is described at s_col_t. Rows are grouped
 * by dataset.parquet.row_group_size rows, or by 1 MiB of record when it is
 * 0 (at least one row a group). Layout:
 *   "PAR1" | per group, per column: [dictionary page, page header, levels,
 *   values] | footer | footer length (uint32 LE) | "PAR1"
 * Uncompressed, every group but the last has the same size, so the byte at
 * any offset is computed from the offset; page headers and the footer are
 * built at open (they depend only on the sizes). sb_format_parquet_layout
 * gives the same layout without the footer, for the byte range of a
 * sample's row group. Compressed, a page's size depends on its content:
 * open compresses every page once to learn the chunk offsets (kept, 8 bytes
 * a chunk) and fill compresses the page it is asked again (the last one is
 * kept), so the bytes stay a function of the seed; a compressed page's
 * body is at most 256 MiB. Readers plan from the footer instead
 * (format_parquet_plan.c). */
#include "format.h"
#include "util.h"

#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define S_GROUP_BYTES (1u << 20)
#define S_ZPAGE_MAX (256ull << 20)  /* values of one compressed page, at most */

enum { CODEC_NONE = 0, CODEC_SNAPPY = 1, CODEC_GZIP = 2, CODEC_ZSTD = 6 };

int
sb_format_parquet_codec (const char *compression, int *codec, char *err, size_t err_size)
{
    static const struct {
        const char *name;
        int codec;
    } names[] = { { "none", CODEC_NONE }, { "snappy", CODEC_SNAPPY }, { "gzip", CODEC_GZIP }, { "zstd", CODEC_ZSTD } };
    if (!compression || !*compression)
        compression = "none";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp (names[i].name, compression) == 0) {
            if (codec)
                *codec = names[i].codec;
            return 0;
        }
    snprintf (err, err_size, "parquet pages cannot be written with '%s' (supported: none, snappy, gzip, zstd)",
              compression);
    return -1;
}

/* Compress n bytes of in with codec into out (cap bytes, at least
 * s_bound): its length, or 0 on a library failure. */
static size_t
s_bound (int codec, size_t n)
{
    if (codec == CODEC_SNAPPY)
        return snappy_max_compressed_length (n);
    if (codec == CODEC_ZSTD)
        return ZSTD_compressBound (n);
    return (size_t) compressBound ((uLong) n) + 64;     /* gzip: + its header and trailer */
}

static size_t
s_compress (int codec, const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    if (codec == CODEC_SNAPPY) {
        size_t len = cap;
        return snappy_compress ((const char *) in, n, (char *) out, &len) == SNAPPY_OK ? len : 0;
    }
    if (codec == CODEC_ZSTD) {
        size_t len = ZSTD_compress (out, cap, in, n, ZSTD_CLEVEL_DEFAULT);
        return ZSTD_isError (len) ? 0 : len;
    }
    z_stream z;
    memset (&z, 0, sizeof z);
    if (deflateInit2 (&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    z.next_in = (Bytef *) in;
    z.avail_in = (uInt) n;
    z.next_out = out;
    z.avail_out = (uInt) cap;
    int rc = deflate (&z, Z_FINISH);
    size_t len = z.total_out;
    deflateEnd (&z);
    return rc == Z_STREAM_END ? len : 0;
}

/* ---- Thrift compact protocol, into a growable buffer ---- */

typedef struct {
    uint8_t *data;
    size_t   len, cap;
    int      failed;
    int16_t  last[16];      /* last field id, per struct nesting level */
    int      depth;
} s_out_t;

enum { T_BOOL_TRUE = 1, T_I8 = 3, T_I32 = 5, T_I64 = 6, T_BINARY = 8, T_LIST = 9, T_STRUCT = 12 };

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

/* DataPage header: num_values levels/values, a body of body bytes stored
 * in zbytes bytes (0: uncompressed), values in encoding (0 PLAIN, 8
 * RLE_DICTIONARY) */
static void
s_page_header (s_out_t *o, uint64_t num_values, uint64_t body, uint64_t zbytes, int encoding)
{
    o->depth = 0;
    o->last[0] = 0;
    s_int (o, 1, T_I32, 0);             /* type: DATA_PAGE */
    s_int (o, 2, T_I32, (int64_t) body);    /* uncompressed_page_size */
    s_int (o, 3, T_I32, zbytes ? (int64_t) zbytes : (int64_t) body);    /* compressed_page_size */
    s_begin (o, 5);                     /* data_page_header */
    s_int (o, 1, T_I32, (int64_t) num_values);  /* num_values */
    s_int (o, 2, T_I32, encoding);      /* encoding */
    s_int (o, 3, T_I32, 3);             /* definition_level_encoding: RLE */
    s_int (o, 4, T_I32, 3);             /* repetition_level_encoding: RLE */
    s_end (o);
    s_byte (o, 0);
}

/* DictionaryPage header: 256 PLAIN values (1024 bytes) stored in zbytes
 * bytes (0: uncompressed) */
#define S_DICT_VALUES 256
#define S_DICT_BYTES (S_DICT_VALUES * 4)

static void
s_dict_header (s_out_t *o, uint64_t zbytes)
{
    o->depth = 0;
    o->last[0] = 0;
    s_int (o, 1, T_I32, 2);             /* type: DICTIONARY_PAGE */
    s_int (o, 2, T_I32, S_DICT_BYTES);  /* uncompressed_page_size */
    s_int (o, 3, T_I32, zbytes ? (int64_t) zbytes : S_DICT_BYTES);  /* compressed_page_size */
    s_begin (o, 7);                     /* dictionary_page_header */
    s_int (o, 1, T_I32, S_DICT_VALUES); /* num_values */
    s_int (o, 2, T_I32, 0);             /* encoding: PLAIN */
    s_end (o);
    s_byte (o, 0);
}

/* ---- columns ----
 *
 * As pyarrow writes DLIO's table (parquet_generator.py: pa.field(name,
 * type), nullable): every column OPTIONAL, so every page starts with its
 * definition levels (all defined: one RLE run). A column of size k > 1 (and
 * the legacy `data` column, and dtype `list`) is pa.list_(type, k), which
 * parquet stores as the three-level LIST group
 *   optional group NAME (LIST) { repeated group list { optional T element; } }
 * (max repetition level 1, max definition level 3); its pages start with
 * the repetition levels, per row an RLE run of one 0 then one of k - 1
 * ones, then the definition levels, one RLE run of 3s.
 * 8-bit ints (uint8, int8; DLIO's legacy data column is uint8) are, as
 * pyarrow writes them (dictionary encoding on by default: at most 256
 * values), dictionary encoded: an identity dictionary page of the 256
 * values (INT32, PLAIN; entry b is the value whose byte is b), then a
 * RLE_DICTIONARY data page whose indices are bit-packed 8 bits wide: one
 * byte a value, the content byte itself. */

typedef struct {
    char     name[64];
    int      phys;          /* parquet Type of the (element) values: 1 INT32 2 INT64 4 FLOAT 5 DOUBLE 7 FLBA */
    int      logical;       /* 0 none, 1 Float16, 2 Int(bits, signed) */
    int      bits, is_signed, converted;    /* Int logical type, ConvertedType (-1 none) */
    int      list;          /* a LIST group of k elements a row */
    int      dict;          /* an 8-bit int: identity dictionary, 1-byte indices */
    uint64_t k;             /* elements a row */
    uint64_t item;          /* content bytes an element */
    uint64_t estore;        /* bytes an element in the page (item; 4 for a widened int; 1 with dict) */
    uint64_t type_length;   /* FLBA: bytes a value */
    uint64_t width;         /* content bytes a row: k x item */
    uint64_t at;            /* offset of the column's bytes in the row's record */
    uint8_t  rep[16];       /* the repetition levels of a row (list) */
    size_t   rep_len;
    uint8_t *prefix;        /* the dictionary page, header included (dict), as stored */
    size_t   prefix_len, dict_z;    /* its length; the compressed dictionary values' (0: uncompressed) */
    uint64_t h_full, h_last;    /* data page header lengths */
    size_t   h_full_at, h_last_at;  /* offsets in headers */
} s_col_t;

struct sb_parquet_layout {
    size_t    ncols;
    s_col_t  *cols;
    uint8_t  *headers;
    uint64_t  rows, record, per, groups, last_rows;
    uint64_t  group_size, last_size, footer_at;
    /* compressed (codec != CODEC_NONE): chunk k = g * ncols + c starts at
     * chunk_at[k] (chunk_at[groups * ncols] = footer_at), its data page
     * compressed to zlen[k] bytes; the data page of chunk cached - 1 is in
     * zpage (zpage_len bytes) after its header (zhead, zhead_len) */
    int       codec;
    uint64_t *chunk_at;
    uint32_t *zlen;
    uint64_t  cached;
    uint8_t  *raw, *zpage;
    size_t    raw_cap, zpage_cap, zpage_len, zhead_len;
    uint8_t   zhead[64];
};

/* Levels and values of a data page of n rows of col: levels (repetition,
 * definition, and with dict the bit width and the bit-packed run header),
 * then values, then padding (dict: the last group of 8 indices) */
static uint64_t
s_levels_len (const s_col_t *col, uint64_t n)
{
    uint64_t values = n * col->k, len = 4 + sb_varint_len (values << 1) + 1;
    if (col->list)
        len += 4 + n * col->rep_len;
    if (col->dict)
        len += 1 + sb_varint_len (((values + 7) / 8) << 1 | 1);
    return len;
}

static uint64_t
s_body_len (const s_col_t *col, uint64_t n)
{
    uint64_t values = n * col->k;
    return s_levels_len (col, n) + values * col->estore + (col->dict ? (values + 7) / 8 * 8 - values : 0);
}

/* bytes [r, r + len) of the levels of a page of n rows (within them) */
static void
s_levels (const s_col_t *col, uint64_t n, uint64_t r, uint8_t *buf, size_t len)
{
    uint64_t values = n * col->k;
    uint8_t tail[48];   /* definition levels, dict's bit width and run header */
    size_t t = 0;
    uint64_t def_len = sb_varint_len (values << 1) + 1;
    for (int i = 0; i < 4; i++)
        tail[t++] = (uint8_t) (def_len >> (8 * i));
    uint64_t v = values << 1;
    for (; v >= 0x80; v >>= 7)
        tail[t++] = (uint8_t) (v | 0x80);
    tail[t++] = (uint8_t) v;
    tail[t++] = col->list ? 3 : 1;      /* the max definition level (1 byte: bit width 2 or 1) */
    if (col->dict) {
        tail[t++] = 8;                  /* bit width of the indices */
        uint64_t h = ((values + 7) / 8) << 1 | 1;   /* a bit-packed run of every group of 8 */
        for (; h >= 0x80; h >>= 7)
            tail[t++] = (uint8_t) (h | 0x80);
        tail[t++] = (uint8_t) h;
    }
    uint64_t rep = col->list ? 4 + n * col->rep_len : 0;
    for (size_t i = 0; i < len; i++, r++) {
        if (r < rep) {
            uint64_t rl = n * col->rep_len;
            buf[i] = r < 4 ? (uint8_t) (rl >> (8 * r)) : col->rep[(r - 4) % col->rep_len];
        }
        else
            buf[i] = tail[r - rep];
    }
}

static const struct {
    const char *dtype;
    int phys, logical, bits, is_signed, converted, list;
    uint64_t item, storage;
} s_dtypes[] = {
    { "float16", 7, 1, 0, 0, -1, 0, 2, 2 },
    { "float32", 4, 0, 0, 0, -1, 0, 4, 4 },
    { "float64", 5, 0, 0, 0, -1, 0, 8, 8 },
    { "int64", 2, 0, 0, 0, -1, 0, 8, 8 },
    { "int32", 1, 0, 0, 0, -1, 0, 4, 4 },
    { "int16", 1, 2, 16, 1, 16, 0, 2, 4 },
    { "int8", 1, 2, 8, 1, 15, 0, 1, 4 },
    { "uint64", 2, 2, 64, 0, 14, 0, 8, 8 },
    { "uint32", 1, 2, 32, 0, 13, 0, 4, 4 },
    { "uint16", 1, 2, 16, 0, 12, 0, 2, 4 },
    { "uint8", 1, 2, 8, 0, 11, 0, 1, 4 },
    { "list", 4, 0, 0, 0, -1, 1, 4, 4 },    /* DLIO: a list of `size` float32, whatever the size */
};

/* set col's type from s_dtypes[d] and its size */
static void
s_col_type (s_col_t *col, size_t d, uint64_t size)
{
    col->phys = s_dtypes[d].phys;
    col->logical = s_dtypes[d].logical;
    col->bits = s_dtypes[d].bits;
    col->is_signed = s_dtypes[d].is_signed;
    col->converted = s_dtypes[d].converted;
    col->list = size > 1 || s_dtypes[d].list;
    col->dict = col->bits == 8;
    col->k = size;
    col->item = s_dtypes[d].item;
    col->estore = col->dict ? 1 : s_dtypes[d].storage;
    col->type_length = col->phys == 7 ? col->item : 0;
    col->width = size * col->item;
    if (col->list) {
        size_t n = 0;
        col->rep[n++] = 2;      /* a run of one 0 */
        col->rep[n++] = 0;
        if (size > 1) {         /* a run of size - 1 ones */
            uint64_t h = (size - 1) << 1;
            for (; h >= 0x80; h >>= 7)
                col->rep[n++] = (uint8_t) (h | 0x80);
            col->rep[n++] = (uint8_t) h;
            col->rep[n++] = 1;
        }
        col->rep_len = n;
    }
}

/* the dictionary page of a dict column, uncompressed: entry b is the
 * int32 whose low byte is b (sign extended for int8) */
static void
s_dict_values (const s_col_t *col, uint8_t out[S_DICT_BYTES])
{
    for (int b = 0; b < S_DICT_VALUES; b++) {
        uint8_t ext = col->is_signed && (b & 0x80) ? 0xff : 0;
        out[4 * b] = (uint8_t) b;
        out[4 * b + 1] = out[4 * b + 2] = out[4 * b + 3] = ext;
    }
}

/* col->prefix: the dictionary page, compressed with codec (CODEC_NONE:
 * stored as is). 0, or -1 (out of memory, a library failure). */
static int
s_dict_page (s_col_t *col, int codec)
{
    free (col->prefix);
    col->prefix = NULL;
    col->prefix_len = col->dict_z = 0;
    if (!col->dict)
        return 0;
    uint8_t vals[S_DICT_BYTES], z[S_DICT_BYTES * 2 + 128];
    const uint8_t *payload = vals;
    size_t plen = S_DICT_BYTES;
    s_dict_values (col, vals);
    if (codec != CODEC_NONE) {
        if (s_bound (codec, S_DICT_BYTES) > sizeof z || !(plen = s_compress (codec, vals, S_DICT_BYTES, z, sizeof z)))
            return -1;
        payload = z;
        col->dict_z = plen;
    }
    s_out_t h = { 0 };
    s_dict_header (&h, col->dict_z);
    for (size_t i = 0; i < plen; i++)
        s_byte (&h, payload[i]);
    if (h.failed) {
        free (h.data);
        return -1;
    }
    col->prefix = h.data;
    col->prefix_len = h.len;
    return 0;
}

int
sb_format_parquet_columns (const char *spec, uint64_t *row_bytes, size_t *ncols, char *err, size_t err_size)
{
    struct sb_parquet_layout *l = NULL;
    int rc = sb_format_parquet_layout (&l, spec, 0, 1, 1, err, err_size);
    if (rc == 0) {
        if (row_bytes)
            *row_bytes = l->record;
        if (ncols)
            *ncols = l->ncols;
    }
    sb_format_parquet_layout_free (l);
    return rc;
}

int
sb_format_parquet_read_check (const char *columns, const char *read, char *err, size_t err_size)
{
    struct sb_parquet_layout *l = NULL;
    int rc = sb_format_parquet_layout (&l, columns, 0, 1, 1, err, err_size);
    for (const char *p = read ? read : ""; rc == 0 && *p;) {
        size_t len = strcspn (p, ",");
        size_t c = 0;
        while (c < l->ncols && (strlen (l->cols[c].name) != len || strncmp (l->cols[c].name, p, len) != 0))
            c++;
        if (c == l->ncols) {
            snprintf (err, err_size, "parquet: '%.*s' is not one of the dataset's columns", (int) (len < 200 ? len : 200),
                      p);
            rc = -1;
        }
        p += len + (p[len] == ',');
    }
    sb_format_parquet_layout_free (l);
    return rc;
}

/* parse "name:dtype:size,..." into cols (record set to the row bytes) */
static int
s_parse (struct sb_parquet_layout *l, const char *spec, char *err, size_t err_size)
{
    size_t n = 1;
    for (const char *p = spec; *p; p++)
        n += *p == ',';
    if (!(l->cols = calloc (n, sizeof *l->cols))) {
        snprintf (err, err_size, "parquet: out of memory");
        return -1;
    }
    uint64_t at = 0;
    const char *p = spec;
    while (*p) {
        const char *end = strchr (p, ','), *c1, *c2;
        size_t len = end ? (size_t) (end - p) : strlen (p);
        char item[256];
        if (len >= sizeof item) {
            snprintf (err, err_size, "parquet: column '%.40s...' too long", p);
            return -1;
        }
        memcpy (item, p, len);
        item[len] = 0;
        c1 = strchr (item, ':');
        c2 = c1 ? strchr (c1 + 1, ':') : NULL;
        if (!c1 || !c2 || c1 == item || (size_t) (c1 - item) >= sizeof l->cols[0].name) {
            snprintf (err, err_size, "parquet: column '%s': expected name:dtype:size", item);
            return -1;
        }
        s_col_t *c = &l->cols[l->ncols];
        memcpy (c->name, item, (size_t) (c1 - item));
        char dtype[32];
        size_t dl = (size_t) (c2 - c1 - 1);
        if (dl >= sizeof dtype)
            dl = sizeof dtype - 1;
        memcpy (dtype, c1 + 1, dl);
        dtype[dl] = 0;
        char *e;
        unsigned long long size = strtoull (c2 + 1, &e, 10);
        if (*e || size < 1 || size > 0x7fffffffull) {
            snprintf (err, err_size, "parquet: column '%s': size '%s' is not a count of at least 1", c->name, c2 + 1);
            return -1;
        }
        size_t d = 0;
        while (d < sizeof s_dtypes / sizeof s_dtypes[0] && strcmp (s_dtypes[d].dtype, dtype) != 0)
            d++;
        if (d == sizeof s_dtypes / sizeof s_dtypes[0]) {
            snprintf (err, err_size,
                      "parquet: column '%s': dtype '%s' is not one of float16, float32, float64, int64, int32, "
                      "int16, int8, uint64, uint32, uint16, uint8, list", c->name, dtype);
            return -1;
        }
        s_col_type (c, d, size);
        c->at = at;
        at += c->width;
        l->ncols++;
        p = end ? end + 1 : p + len;
    }
    if (!l->ncols) {
        snprintf (err, err_size, "parquet: empty column list");
        return -1;
    }
    l->record = at;
    return 0;
}

void
sb_format_parquet_layout_free (struct sb_parquet_layout *l)
{
    if (!l)
        return;
    for (size_t c = 0; l->cols && c < l->ncols; c++)
        free (l->cols[c].prefix);
    free (l->cols);
    free (l->headers);
    free (l->chunk_at);
    free (l->zlen);
    free (l->raw);
    free (l->zpage);
    free (l);
}

int
sb_format_parquet_layout (struct sb_parquet_layout **out, const char *columns, uint64_t group_rows,
                          uint64_t records, uint64_t record, char *err, size_t err_size)
{
    struct sb_parquet_layout *l = calloc (1, sizeof *l);
    *out = l;
    if (!l) {
        snprintf (err, err_size, "parquet: out of memory");
        return -1;
    }
    if (columns && *columns) {
        if (s_parse (l, columns, err, err_size) != 0)
            return -1;
        if (record != 1 && record != l->record) {
            snprintf (err, err_size, "parquet: the columns make rows of %llu bytes, the record length is %llu",
                      (unsigned long long) l->record, (unsigned long long) record);
            return -1;
        }
    }
    else {
        /* DLIO's legacy mode: one column, data, a list of the record's uint8 */
        if (!(l->cols = calloc (1, sizeof *l->cols))) {
            snprintf (err, err_size, "parquet: out of memory");
            return -1;
        }
        l->ncols = 1;
        strcpy (l->cols[0].name, "data");
        size_t d = 0;
        while (strcmp (s_dtypes[d].dtype, "uint8") != 0)
            d++;
        s_col_type (&l->cols[0], d, record);
        l->cols[0].list = 1;
        l->record = record;
    }
    uint64_t rows = records, rec = l->record;
    uint64_t per = group_rows ? group_rows : (S_GROUP_BYTES / rec ? S_GROUP_BYTES / rec : 1);
    if (per > rows)
        per = rows;
    l->rows = rows;
    l->per = per;
    l->groups = (rows + per - 1) / per;
    l->last_rows = rows - (l->groups - 1) * per;
    s_out_t h = { 0 };
    l->group_size = l->last_size = 0;
    for (size_t c = 0; c < l->ncols; c++) {
        s_col_t *col = &l->cols[c];
        if (per * col->k > 0x7fffffffull || s_body_len (col, per) > 0x7fffffffull) {
            free (h.data);
            snprintf (err, err_size, "parquet: a page of %llu rows of %llu x %llu bytes is over 2 GiB",
                      (unsigned long long) per, (unsigned long long) col->k, (unsigned long long) col->estore);
            return -1;
        }
        if (s_dict_page (col, CODEC_NONE) != 0) {
            free (h.data);
            snprintf (err, err_size, "parquet: out of memory");
            return -1;
        }
        col->h_full_at = h.len;
        s_page_header (&h, per * col->k, s_body_len (col, per), 0, col->dict ? 8 : 0);
        col->h_full = h.len - col->h_full_at;
        col->h_last_at = h.len;
        s_page_header (&h, l->last_rows * col->k, s_body_len (col, l->last_rows), 0, col->dict ? 8 : 0);
        col->h_last = h.len - col->h_last_at;
        l->group_size += col->prefix_len + col->h_full + s_body_len (col, per);
        l->last_size += col->prefix_len + col->h_last + s_body_len (col, l->last_rows);
    }
    if (h.failed) {
        free (h.data);
        snprintf (err, err_size, "parquet: out of memory");
        return -1;
    }
    l->headers = h.data;
    l->footer_at = 4 + (l->groups - 1) * l->group_size + l->last_size;
    return 0;
}

int
sb_format_parquet_group (const struct sb_parquet_layout *l, uint64_t sample, uint64_t *offset, uint64_t *length)
{
    if (sample >= l->rows)
        return -1;
    uint64_t g = sample / l->per;
    *offset = 4 + g * l->group_size;
    *length = g == l->groups - 1 ? l->last_size : l->group_size;
    return 0;
}

uint64_t
sb_format_parquet_groups (const struct sb_parquet_layout *l)
{
    return l->groups;
}

uint64_t
sb_format_parquet_footer_at (const struct sb_parquet_layout *l)
{
    return l->footer_at;
}

/* ---- open, fill ---- */

static void
s_close (sb_format_obj_t *obj)
{
    sb_format_parquet_layout_free (obj->state);
    obj->state = NULL;
}

/* bytes [k, k+n) of the values of column col for rows first.. (n within them) */
static void
s_values (const sb_format_obj_t *obj, const s_col_t *col, uint64_t first, uint64_t k, uint8_t *buf, size_t n)
{
    const struct sb_parquet_layout *l = obj->state;
    uint64_t row_store = col->k * col->estore;
    /* a column that is the whole record, unwidened: contiguous content */
    if (col->at == 0 && col->estore == col->item && col->width == l->record) {
        sb_content_fill (obj->seed, first * l->record + k, buf, n);
        return;
    }
    size_t done = 0;
    while (done < n) {
        uint64_t b = k + done, row = first + b / row_store, in = b % row_store;
        if (col->estore == col->item) {     /* a row's elements: its content bytes in order */
            size_t take = row_store - in < n - done ? (size_t) (row_store - in) : n - done;
            sb_content_fill (obj->seed, row * l->record + col->at + in, buf + done, take);
            done += take;
            continue;
        }
        /* a small int widened to INT32: content byte(s), then the extension */
        uint64_t e = in / col->estore, ein = in % col->estore;
        size_t take = col->estore - ein < n - done ? (size_t) (col->estore - ein) : n - done;
        uint8_t v[8];
        sb_content_fill (obj->seed, row * l->record + col->at + e * col->item, v, (size_t) col->item);
        uint8_t ext = col->is_signed && (v[col->item - 1] & 0x80) ? 0xff : 0;
        for (size_t i = 0; i < take; i++)
            buf[done + i] = ein + i < col->item ? v[ein + i] : ext;
        done += take;
    }
}

/* bytes [r, r + n) of the body (levels, values, padding) of the data page
 * of column col in a group of rows rows from row first */
static void
s_body (const sb_format_obj_t *obj, const s_col_t *col, uint64_t first, uint64_t rows, uint64_t r, uint8_t *buf,
        size_t n)
{
    uint64_t lev = s_levels_len (col, rows), vals = rows * col->k * col->estore;
    while (n) {
        size_t take;
        if (r < lev) {
            take = lev - r < n ? (size_t) (lev - r) : n;
            s_levels (col, rows, r, buf, take);
        }
        else if (r < lev + vals) {
            take = lev + vals - r < n ? (size_t) (lev + vals - r) : n;
            s_values (obj, col, first, r - lev, buf, take);
        }
        else {
            take = n;   /* dict: the last group of indices padded with 0 */
            memset (buf, 0, take);
        }
        r += take;
        buf += take;
        n -= take;
    }
}

/* Chunk of column c in group g: its offset, its bytes in the file (pages
 * and their headers) and the same uncompressed (headers + bodies). */
static void
s_chunk (const struct sb_parquet_layout *l, uint64_t g, size_t c, uint64_t *at, uint64_t *bytes, uint64_t *plain)
{
    int lastg = g == l->groups - 1;
    uint64_t n = lastg ? l->last_rows : l->per;
    const s_col_t *col = &l->cols[c];
    if (l->codec == CODEC_NONE) {
        uint64_t a = 4 + g * l->group_size;
        for (size_t i = 0; i < c; i++)
            a += l->cols[i].prefix_len + (lastg ? l->cols[i].h_last : l->cols[i].h_full) + s_body_len (&l->cols[i], n);
        *at = a;
        *bytes = *plain = col->prefix_len + (lastg ? col->h_last : col->h_full) + s_body_len (col, n);
        return;
    }
    uint64_t k = g * l->ncols + c;
    *at = l->chunk_at[k];
    *bytes = l->chunk_at[k + 1] - l->chunk_at[k];
    *plain = *bytes - l->zlen[k] + s_body_len (col, n) - (col->dict ? col->dict_z : 0) + (col->dict ? S_DICT_BYTES : 0);
}

/* Compress the data page of chunk k into l->zpage, its header into
 * l->zhead (kept until another chunk is asked). Returns 0, or -1 when a
 * library fails (out of memory). */
static int
s_zpage (sb_format_obj_t *obj, uint64_t k)
{
    struct sb_parquet_layout *l = obj->state;
    if (l->cached == k + 1)
        return 0;
    uint64_t g = k / l->ncols;
    const s_col_t *col = &l->cols[k % l->ncols];
    uint64_t n = g == l->groups - 1 ? l->last_rows : l->per;
    size_t raw = (size_t) s_body_len (col, n);
    s_body (obj, col, g * l->per, n, 0, l->raw, raw);
    l->cached = 0;
    l->zpage_len = s_compress (l->codec, l->raw, raw, l->zpage, l->zpage_cap);
    if (!l->zpage_len)
        return -1;
    s_out_t h = { 0 };
    s_page_header (&h, n * col->k, raw, l->zpage_len, col->dict ? 8 : 0);
    if (h.failed || h.len > sizeof l->zhead) {
        free (h.data);
        return -1;
    }
    memcpy (l->zhead, h.data, h.len);
    l->zhead_len = h.len;
    free (h.data);
    l->cached = k + 1;
    return 0;
}

/* Compressed: compress every page once for the chunk offsets. */
static int
s_open_compressed (sb_format_obj_t *obj, int codec, char *err, size_t err_size)
{
    struct sb_parquet_layout *l = obj->state;
    uint64_t widest = 0, chunks = l->groups * l->ncols;
    for (size_t c = 0; c < l->ncols; c++) {
        if (s_body_len (&l->cols[c], l->per) > widest)
            widest = s_body_len (&l->cols[c], l->per);
        if (s_dict_page (&l->cols[c], codec) != 0) {
            snprintf (err, err_size, "parquet: compressing a dictionary page failed");
            return -1;
        }
    }
    if (widest > S_ZPAGE_MAX) {
        snprintf (err, err_size, "parquet: a compressed page of %llu rows (%llu bytes) is over %llu MiB (lower "
                  "dataset.parquet.row_group_size)", (unsigned long long) l->per, (unsigned long long) widest,
                  (unsigned long long) (S_ZPAGE_MAX >> 20));
        return -1;
    }
    l->codec = codec;
    l->raw_cap = (size_t) widest;
    l->zpage_cap = s_bound (codec, l->raw_cap);
    l->chunk_at = malloc ((chunks + 1) * sizeof *l->chunk_at);
    l->zlen = malloc (chunks * sizeof *l->zlen);
    l->raw = malloc (l->raw_cap);
    l->zpage = malloc (l->zpage_cap);
    if (!l->chunk_at || !l->zlen || !l->raw || !l->zpage) {
        snprintf (err, err_size, "parquet: out of memory for compressed pages of %zu bytes", l->raw_cap);
        return -1;
    }
    uint64_t at = 4;
    for (uint64_t k = 0; k < chunks; k++) {
        if (s_zpage (obj, k) != 0) {
            snprintf (err, err_size, "parquet: compressing a page of %zu bytes failed", l->raw_cap);
            return -1;
        }
        l->chunk_at[k] = at;
        l->zlen[k] = (uint32_t) l->zpage_len;
        at += l->cols[k % l->ncols].prefix_len + l->zhead_len + l->zpage_len;
    }
    l->chunk_at[chunks] = at;
    l->footer_at = at;
    return 0;
}

/* the SchemaElement of a column's values (a leaf: the column, or a list's
 * element), OPTIONAL */
static void
s_leaf_schema (s_out_t *f, const s_col_t *col, const char *name)
{
    s_begin (f, 0);
    s_int (f, 1, T_I32, col->phys);             /* type */
    if (col->phys == 7)
        s_int (f, 2, T_I32, (int64_t) col->type_length);    /* type_length */
    s_int (f, 3, T_I32, 1);                     /* OPTIONAL */
    s_string (f, 4, name);
    if (col->converted >= 0)
        s_int (f, 6, T_I32, col->converted);    /* converted_type */
    if (col->logical) {
        s_begin (f, 10);                        /* logicalType (union) */
        if (col->logical == 1) {
            s_begin (f, 15);                    /* FLOAT16 */
            s_end (f);
        }
        else {
            s_begin (f, 10);                    /* INTEGER */
            s_field (f, 1, T_I8);               /* bitWidth */
            s_byte (f, (uint8_t) col->bits);
            s_field (f, 2, col->is_signed ? 1 : 2);     /* isSigned */
            s_end (f);
        }
        s_end (f);
    }
    s_end (f);
}

static int
s_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    struct sb_parquet_layout *l;
    int codec;
    if (sb_format_parquet_codec (obj->compression, &codec, err, err_size) != 0)
        return -1;
    int rc = sb_format_parquet_layout (&l, obj->columns, obj->group_rows, obj->records,
                                       obj->columns && *obj->columns ? 1 : obj->record, err, err_size);
    obj->state = l;
    if (rc != 0)
        return -1;
    if (obj->columns && *obj->columns && obj->record != 1 && obj->record != l->record) {
        snprintf (err, err_size, "parquet: the columns make rows of %llu bytes, the record length is %llu",
                  (unsigned long long) l->record, (unsigned long long) obj->record);
        return -1;
    }
    obj->record = l->record;
    if (codec != CODEC_NONE && s_open_compressed (obj, codec, err, err_size) != 0)
        return -1;
    uint64_t rows = l->rows, per = l->per, groups = l->groups;
    /* FileMetaData */
    s_out_t f = { 0 };
    size_t elements = 1;
    for (size_t c = 0; c < l->ncols; c++)
        elements += l->cols[c].list ? 3 : 1;
    s_int (&f, 1, T_I32, 1);                        /* version */
    s_list (&f, 2, T_STRUCT, elements);             /* schema */
    s_begin (&f, 0);
    s_string (&f, 4, "schema");
    s_int (&f, 5, T_I32, (int64_t) l->ncols);       /* num_children */
    s_end (&f);
    for (size_t c = 0; c < l->ncols; c++) {
        const s_col_t *col = &l->cols[c];
        if (!col->list) {
            s_leaf_schema (&f, col, col->name);
            continue;
        }
        s_begin (&f, 0);                            /* optional group NAME (LIST) */
        s_int (&f, 3, T_I32, 1);                    /* OPTIONAL */
        s_string (&f, 4, col->name);
        s_int (&f, 5, T_I32, 1);                    /* num_children */
        s_int (&f, 6, T_I32, 3);                    /* converted_type: LIST */
        s_begin (&f, 10);                           /* logicalType */
        s_begin (&f, 3);                            /* LIST */
        s_end (&f);
        s_end (&f);
        s_end (&f);
        s_begin (&f, 0);                            /* repeated group list */
        s_int (&f, 3, T_I32, 2);                    /* REPEATED */
        s_string (&f, 4, "list");
        s_int (&f, 5, T_I32, 1);
        s_end (&f);
        s_leaf_schema (&f, col, "element");
    }
    s_int (&f, 3, T_I64, (int64_t) rows);           /* num_rows */
    s_list (&f, 4, T_STRUCT, groups);               /* row_groups */
    for (uint64_t g = 0; g < groups; g++) {
        uint64_t n = g == groups - 1 ? l->last_rows : per, at_g = 0, total = 0, total_plain = 0;
        s_begin (&f, 0);
        s_list (&f, 1, T_STRUCT, l->ncols);         /* columns */
        for (size_t c = 0; c < l->ncols; c++) {
            const s_col_t *col = &l->cols[c];
            uint64_t chunk_at, chunk, plain;
            s_chunk (l, g, c, &chunk_at, &chunk, &plain);
            if (c == 0)
                at_g = chunk_at;
            total += chunk;
            total_plain += plain;
            s_begin (&f, 0);
            s_int (&f, 2, T_I64, (int64_t) chunk_at);   /* file_offset */
            s_begin (&f, 3);                        /* meta_data */
            s_int (&f, 1, T_I32, col->phys);        /* type */
            s_list (&f, 2, T_I32, col->dict ? 3 : 2);   /* encodings */
            s_varint (&f, 0);                       /* PLAIN (zigzag 0) */
            s_varint (&f, 6);                       /* RLE (levels) */
            if (col->dict)
                s_varint (&f, 16);                  /* RLE_DICTIONARY */
            const char *path[3] = { col->name, "list", "element" };
            s_list (&f, 3, T_BINARY, col->list ? 3 : 1);    /* path_in_schema */
            for (int e = 0; e < (col->list ? 3 : 1); e++) {
                s_varint (&f, strlen (path[e]));
                for (const char *p = path[e]; *p; p++)
                    s_byte (&f, (uint8_t) *p);
            }
            s_int (&f, 4, T_I32, codec);            /* codec */
            s_int (&f, 5, T_I64, (int64_t) (n * col->k));   /* num_values */
            s_int (&f, 6, T_I64, (int64_t) plain);  /* total_uncompressed_size */
            s_int (&f, 7, T_I64, (int64_t) chunk);  /* total_compressed_size */
            s_int (&f, 9, T_I64, (int64_t) (chunk_at + col->prefix_len));  /* data_page_offset */
            if (col->dict)
                s_int (&f, 11, T_I64, (int64_t) chunk_at);  /* dictionary_page_offset */
            s_end (&f);
            s_end (&f);
        }
        s_int (&f, 2, T_I64, (int64_t) total_plain);    /* total_byte_size (uncompressed) */
        s_int (&f, 3, T_I64, (int64_t) n);          /* num_rows */
        s_int (&f, 5, T_I64, (int64_t) at_g);       /* file_offset */
        s_int (&f, 6, T_I64, (int64_t) total);      /* total_compressed_size */
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
    obj->size = l->footer_at + f.len;
    return 0;
}

/* compressed: bytes [offset, offset + len) within the chunks */
static size_t
s_fill_compressed (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    struct sb_parquet_layout *l = obj->state;
    uint64_t lo = 0, hi = l->groups * l->ncols;     /* chunk_at[lo] <= offset < chunk_at[hi] */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (l->chunk_at[mid] <= offset)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t r = offset - l->chunk_at[lo], end = l->chunk_at[lo + 1] - l->chunk_at[lo];
    size_t n = end - r < len ? (size_t) (end - r) : len;
    if (s_zpage (obj, lo) != 0) {
        memset (buf, 0, n);     /* out of memory mid-fill: not the object (obj->failed) */
        obj->failed = 1;
        return n;
    }
    const s_col_t *col = &l->cols[lo % l->ncols];
    size_t done = 0;
    if (r < col->prefix_len) {      /* the dictionary page */
        done = col->prefix_len - r < n ? (size_t) (col->prefix_len - r) : n;
        memcpy (buf, col->prefix + r, done);
        r = 0;
    }
    else
        r -= col->prefix_len;
    if (done < n && r < l->zhead_len) {
        size_t take = l->zhead_len - r < n - done ? (size_t) (l->zhead_len - r) : n - done;
        memcpy (buf + done, l->zhead + r, take);
        done += take;
        r += take;
    }
    if (done < n)
        memcpy (buf + done, l->zpage + (r - l->zhead_len), n - done);
    return n;
}

static void
s_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    const struct sb_parquet_layout *l = obj->state;
    while (len) {
        size_t n = 0;
        if (offset < 4) {
            n = 4 - offset < len ? (size_t) (4 - offset) : len;
            memcpy (buf, &"PAR1"[offset], n);
        }
        else if (offset >= l->footer_at) {
            n = len;
            memcpy (buf, obj->tail + (offset - l->footer_at), n);
        }
        else if (l->codec != CODEC_NONE)
            n = s_fill_compressed (obj, offset, buf, len);
        else {
            uint64_t g = (offset - 4) / l->group_size;
            if (g >= l->groups)
                g = l->groups - 1;
            uint64_t r = offset - 4 - g * l->group_size;
            int lastg = g == l->groups - 1;
            uint64_t rows = lastg ? l->last_rows : l->per, first = g * l->per;
            for (size_t c = 0; c < l->ncols; c++) {
                const s_col_t *col = &l->cols[c];
                uint64_t h = lastg ? col->h_last : col->h_full, body = s_body_len (col, rows);
                if (r < col->prefix_len) {
                    n = col->prefix_len - r < len ? (size_t) (col->prefix_len - r) : len;
                    memcpy (buf, col->prefix + r, n);
                    break;
                }
                r -= col->prefix_len;
                if (r < h) {
                    n = h - r < len ? (size_t) (h - r) : len;
                    memcpy (buf, l->headers + (lastg ? col->h_last_at : col->h_full_at) + r, n);
                    break;
                }
                if (r < h + body) {
                    n = h + body - r < len ? (size_t) (h + body - r) : len;
                    s_body (obj, col, first, rows, r - h, buf, n);
                    break;
                }
                r -= h + body;
            }
        }
        offset += n;
        buf += n;
        len -= n;
    }
}

const sb_format_ops_t sb_format_parquet = { "parquet", s_open, s_fill, s_close };
