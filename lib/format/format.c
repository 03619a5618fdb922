/* format: the registry of formats, the raw format and shared helpers. */
#include "format.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
s_raw_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    obj->size = obj->records * obj->record;
    return 0;
}

static void
s_raw_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    sb_content_fill (obj->seed, offset, buf, len);
}

const sb_format_ops_t sb_format_raw = { "raw", s_raw_open, s_raw_fill, NULL };

/* The formats built in. png, jpeg, hdf5 and parquet are optional parts of
 * the build (meson_options.txt: images, hdf5, parquet); one left out is
 * listed in s_left_out instead. */
static const struct {
    const char            *name;
    const sb_format_ops_t *ops;
} s_formats[] = {
    { "npy", &sb_format_npy }, { "npz", &sb_format_npz }, { "tfrecord", &sb_format_tfrecord },
#ifdef SB_HAVE_IMAGES
    { "png", &sb_format_png }, { "jpeg", &sb_format_jpeg }, { "jpg", &sb_format_jpeg },
#endif
#ifdef SB_HAVE_HDF5
    { "hdf5", &sb_format_hdf5 }, { "h5", &sb_format_hdf5 },
#endif
#ifdef SB_HAVE_PARQUET
    { "parquet", &sb_format_parquet },
#endif
};

/* formats DLIO knows that shardbench does not write yet */
static const char *s_unsupported[] = { "csv" };

/* ---- formats this build left out: the name a workload gives and the
 * meson option that builds it. Such a name is not raw bytes: checking it
 * fails, and its ops fail to open, naming the option. */
#if !defined SB_HAVE_IMAGES || !defined SB_HAVE_HDF5 || !defined SB_HAVE_PARQUET
#define S_SOME_LEFT_OUT 1
static int s_left_out_open (sb_format_obj_t *obj, char *err, size_t err_size);

static void
s_left_out_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    memset (buf, 0, len);
    obj->failed = 1;
}
#endif

static const struct {
    const char     *name;
    const char     *option;
    sb_format_ops_t ops;
} s_left_out[] = {
#ifndef SB_HAVE_IMAGES
    { "png", "images", { "png", s_left_out_open, s_left_out_fill, NULL } },
    { "jpeg", "images", { "jpeg", s_left_out_open, s_left_out_fill, NULL } },
    { "jpg", "images", { "jpg", s_left_out_open, s_left_out_fill, NULL } },
#endif
#ifndef SB_HAVE_HDF5
    { "hdf5", "hdf5", { "hdf5", s_left_out_open, s_left_out_fill, NULL } },
    { "h5", "hdf5", { "h5", s_left_out_open, s_left_out_fill, NULL } },
#endif
#ifndef SB_HAVE_PARQUET
    { "parquet", "parquet", { "parquet", s_left_out_open, s_left_out_fill, NULL } },
#endif
    { NULL, NULL, { NULL, NULL, NULL, NULL } },
};

int
sb_format_left_out (const char *name, char *err, size_t err_size)
{
    for (size_t i = 0; name && s_left_out[i].name; i++)
        if (strcmp (name, s_left_out[i].name) == 0) {
            snprintf (err, err_size, "dataset.format '%s': shardbench was built without %s (meson -D%s=enabled)", name,
                      s_left_out[i].option, s_left_out[i].option);
            return -1;
        }
    return 0;
}

#ifdef S_SOME_LEFT_OUT
static int
s_left_out_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    if (sb_format_left_out (obj->ops->name, err, err_size) == 0)
        snprintf (err, err_size, "dataset.format '%s' is not built in", obj->ops->name);
    return -1;
}
#endif

/* ---- indexed_binary, mmap_indexed_binary: DLIO's data file is the
 * samples back to back (the raw format); its two index files are
 * companion objects of uint64 values, one a sample (u[0]: 0 offsets, 1
 * sizes). */

static int
s_is_indexed (const char *format)
{
    return format && (strcmp (format, "indexed_binary") == 0 || strcmp (format, "mmap_indexed_binary") == 0);
}

static const char *const s_companion_suffix[SB_FORMAT_COMPANIONS] = { ".off.idx", ".sz.idx" };

size_t
sb_format_companions (const char *format)
{
    return s_is_indexed (format) ? SB_FORMAT_COMPANIONS : 0;
}

const char *
sb_format_companion_suffix (size_t c)
{
    return c < SB_FORMAT_COMPANIONS ? s_companion_suffix[c] : "";
}

int
sb_format_is_companion (const char *format, const char *name, size_t len)
{
    for (size_t c = 0; c < sb_format_companions (format); c++) {
        size_t n = strlen (s_companion_suffix[c]);
        if (len >= n && memcmp (name + len - n, s_companion_suffix[c], n) == 0)
            return 1;
    }
    return 0;
}

static int
s_index_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    obj->size = obj->records * 8;
    return 0;
}

static void
s_index_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        uint64_t at = offset + k, j = at / 8;
        uint64_t v = obj->u[0] == 0 ? j * obj->record : obj->record;
        buf[k] = (uint8_t) (v >> (8 * (at % 8)));
    }
}

const sb_format_ops_t sb_format_index_list = { "index_list", s_index_open, s_index_fill, NULL };

int
sb_format_open_companion (sb_format_obj_t *obj, const sb_dataset_t *ds, uint64_t i, size_t c, char *err,
                          size_t err_size)
{
    memset (obj, 0, sizeof *obj);
    if (c >= sb_format_companions (ds->format)) {
        snprintf (err, err_size, "format '%s' has no companion %zu", ds->format ? ds->format : "", c);
        return -1;
    }
    uint64_t spf = ds->samples_per_file ? ds->samples_per_file : 1;
    obj->ops = &sb_format_index_list;
    obj->records = spf;
    obj->record = sb_dataset_object_size (ds, i) / spf;
    obj->u[0] = c;
    return obj->ops->open (obj, err, err_size);
}

const sb_format_ops_t *
sb_format_find (const char *name)
{
    for (size_t i = 0; name && i < sizeof s_formats / sizeof s_formats[0]; i++)
        if (strcmp (name, s_formats[i].name) == 0)
            return s_formats[i].ops;
    for (size_t i = 0; name && s_left_out[i].name; i++)
        if (strcmp (name, s_left_out[i].name) == 0)
            return &s_left_out[i].ops;
    return &sb_format_raw;
}

int
sb_format_is_raw (const char *name)
{
    return sb_format_find (name) == &sb_format_raw;
}

int
sb_format_check (const char *name, char *err, size_t err_size)
{
    if (sb_format_left_out (name, err, err_size) != 0)
        return -1;
    for (size_t i = 0; i < sizeof s_unsupported / sizeof s_unsupported[0]; i++)
        if (strcmp (name, s_unsupported[i]) == 0) {
            snprintf (err, err_size,
                      "dataset.format '%s' is not supported yet (supported: npz, npy, tfrecord, png, jpeg, hdf5, parquet; any "
                      "other extension gets seeded bytes with no framing)",
                      name);
            return -1;
        }
    return 0;
}

int
sb_format_open_with (sb_format_obj_t *obj, const sb_format_ops_t *ops, uint64_t seed, uint64_t records,
                     uint64_t record, char *err, size_t err_size)
{
    return sb_format_open_ex (obj, ops, seed, records, record, NULL, 0, err, err_size);
}

int
sb_format_open_ex (sb_format_obj_t *obj, const sb_format_ops_t *ops, uint64_t seed, uint64_t records,
                   uint64_t record, const char *columns, uint64_t group_rows, char *err, size_t err_size)
{
    return sb_format_open_pq (obj, ops, seed, records, record, columns, group_rows, NULL, err, err_size);
}

int
sb_format_open_pq (sb_format_obj_t *obj, const sb_format_ops_t *ops, uint64_t seed, uint64_t records,
                   uint64_t record, const char *columns, uint64_t group_rows, const char *compression, char *err,
                   size_t err_size)
{
    memset (obj, 0, sizeof *obj);
    obj->ops = ops;
    obj->columns = columns;
    obj->group_rows = group_rows;
    obj->compression = compression;
    obj->seed = seed;
    obj->records = records ? records : 1;
    obj->record = record ? record : 1;
    if (ops->open (obj, err, err_size) != 0) {
        sb_format_close (obj);
        return -1;
    }
    return 0;
}

int
sb_format_open (sb_format_obj_t *obj, const sb_dataset_t *ds, uint64_t i, const char *key, char *err,
                size_t err_size)
{
    uint64_t spf = ds->samples_per_file ? ds->samples_per_file : 1;
    const sb_format_ops_t *ops = sb_format_find (ds->format);
    memset (obj, 0, sizeof *obj);
    obj->ops = ops;
    obj->columns = ds->parquet_columns;
    obj->group_rows = ds->parquet_row_group;
    obj->compression = ds->parquet_compression;
    obj->seed = sb_dataset_content_seed (ds->seed, key);
    obj->records = spf;
    obj->record = sb_dataset_object_size (ds, i) / spf;
    if (!obj->record)
        obj->record = 1;
    if (strcmp (ops->name, "parquet") != 0) {
        obj->itemsize = sb_dataset_element_size (ds->element_type, &obj->descr);
        if (!obj->itemsize) {
            snprintf (err, err_size, "dataset.record_element_type '%s' is not a numpy type shardbench writes",
                      ds->element_type);
            return -1;
        }
        obj->ndims = sb_dataset_sample_shape (ds, i, obj->dims, SB_DATASET_MAX_DIMS, &obj->listed);
    }
    if (ops->open (obj, err, err_size) != 0) {
        sb_format_close (obj);
        return -1;
    }
    return 0;
}

void
sb_format_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    obj->ops->fill (obj, offset, buf, len);
}

void
sb_format_close (sb_format_obj_t *obj)
{
    if (obj->ops && obj->ops->close)
        obj->ops->close (obj);
    free (obj->tail);
    free (obj->image);
    obj->tail = obj->image = NULL;
}

int
sb_format_key_index (const char *key, uint64_t *index)
{
    const char *base = strrchr (key, '/') ? strrchr (key, '/') + 1 : key;
    const char *of = strstr (base, "_of_");
    if (!of)
        return -1;
    const char *p = of;
    while (p > base && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p == of || p == base || p[-1] != '_' || of - p > 19)
        return -1;
    uint64_t v = 0;
    for (; p < of; p++)
        v = v * 10 + (uint64_t) (*p - '0');
    *index = v;
    return 0;
}

/* CRC-32C, slicing by 8 */
static uint32_t s_crc32c_table[8][256];

static void
s_crc32c_init (void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
        s_crc32c_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            s_crc32c_table[t][i] = (s_crc32c_table[t - 1][i] >> 8) ^ s_crc32c_table[0][s_crc32c_table[t - 1][i] & 0xff];
}

uint32_t
sb_format_crc32c (uint32_t crc, const uint8_t *buf, size_t len)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once (&once, s_crc32c_init);
    uint32_t c = ~crc;
    while (len && ((uintptr_t) buf & 7)) {
        c = s_crc32c_table[0][(c ^ *buf++) & 0xff] ^ (c >> 8);
        len--;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy (&w, buf, 8);
        uint32_t lo = (uint32_t) w ^ c, hi = (uint32_t) (w >> 32);
        c = s_crc32c_table[7][lo & 0xff] ^ s_crc32c_table[6][(lo >> 8) & 0xff] ^ s_crc32c_table[5][(lo >> 16) & 0xff]
            ^ s_crc32c_table[4][lo >> 24] ^ s_crc32c_table[3][hi & 0xff] ^ s_crc32c_table[2][(hi >> 8) & 0xff]
            ^ s_crc32c_table[1][(hi >> 16) & 0xff] ^ s_crc32c_table[0][hi >> 24];
        buf += 8;
        len -= 8;
    }
    while (len--)
        c = s_crc32c_table[0][(c ^ *buf++) & 0xff] ^ (c >> 8);
    return ~c;
}

uint32_t
sb_format_masked_crc (uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
