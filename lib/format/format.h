/* format: the file formats datagen writes and training reads.
 *
 * One ops table per format (fio ioengine / SQLite VFS style). An object of
 * a format is described by an sb_format_obj_t opened from the dataset and
 * the object's index: it knows the object's total size and can produce any
 * byte range of it (sb_format_fill) without holding the object, so the
 * writer streams it in fixed buffers and a verifying reader regenerates
 * exactly the bytes it read. Payloads (array data, record data) come from
 * sb_content_fill with the object's content seed; headers and framing are
 * computed. Checksums over the payload (zip CRC-32, TFRecord CRC-32C) are
 * accumulated while a caller fills in order, and computed on demand when a
 * range is asked out of order. Images (png, jpeg) are built whole in
 * memory when opened (one sample each: small); their sizes are known
 * without building them (sb_format_image_size).
 *
 * Formats: raw (any extension not listed: seeded bytes, no framing), npy,
 * npz, tfrecord, png, jpeg (jpg), hdf5 (h5), parquet, indexed_binary and
 * mmap_indexed_binary (the samples back to back, raw, with two companion
 * index objects). */
#ifndef SB_FORMAT_H
#define SB_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

typedef struct sb_format_obj sb_format_obj_t;

typedef struct {
    const char *name;
    /* Compute the layout of obj (seed, records, record set): set obj->size
     * and any state. Returns 0, or -1 with err set. */
    int (*open) (sb_format_obj_t *obj, char *err, size_t err_size);
    /* Bytes [offset, offset+len) of the object (within obj->size). */
    void (*fill) (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len);
    /* Free what open allocated (may be NULL). */
    void (*close) (sb_format_obj_t *obj);
} sb_format_ops_t;

#define SB_FORMAT_SMALL 512     /* room for computed header/trailer bytes */

struct sb_format_obj {
    const sb_format_ops_t *ops;
    uint64_t seed;          /* content seed (sb_dataset_content_seed of the key) */
    uint64_t records;       /* samples in the object (>= 1) */
    uint64_t record;        /* payload bytes per sample (>= 1) */
    uint64_t size;          /* total bytes of the object, set by open */
    /* format state */
    uint8_t  head[SB_FORMAT_SMALL];
    size_t   head_len;
    uint8_t *tail;          /* heap, tail_len bytes (npz); may depend on crc */
    size_t   tail_len;
    uint64_t payload_at;    /* offset of the payload in the object */
    uint32_t crc;           /* running checksum over the checksummed range */
    uint64_t crc_upto;      /* bytes of that range summed so far */
    uint64_t crc_record;    /* tfrecord: record the running crc belongs to */
    int      crc_done;
    uint8_t *image;         /* png/jpeg/hdf5: the encoded file */
    uint64_t u[8];          /* format-specific numbers */
    /* parquet: inputs (set before open) and layout */
    const char *columns;    /* borrowed: "name:dtype:size,..." or NULL (DLIO's legacy data list<uint8>) */
    uint64_t group_rows;    /* rows per row group, 0: 1 MiB of records */
    const char *compression;    /* borrowed: page codec none | snappy | gzip | zstd (NULL: none) */
    struct sb_parquet_layout *state;
    /* DLIO's shape of one sample (sb_format_open sets it
     * from the dataset): ndims dims of elements of itemsize bytes, numpy's
     * descr ('|u1', '<f4', ...); listed 1 when the dims are
     * dataset.record_dims. ndims 0 (sb_format_open_with): a sample is
     * (record,) of uint8, and npy, npz and hdf5 write (records, record). */
    size_t   ndims;
    uint64_t dims[SB_DATASET_MAX_DIMS];
    size_t   itemsize;
    const char *descr;
    int      listed;
    /* set by fill when it could not produce the bytes asked for (out of
     * memory compressing a parquet page): what it filled is not the object,
     * and a writer must not store it */
    int      failed;
};

/* ---- companions: DLIO's indexed_binary and mmap_indexed_binary ----
 * Beside each data object KEY, DLIO writes KEY.off.idx (each sample's
 * offset in KEY, uint64 little endian) and KEY.sz.idx (each sample's size,
 * uint64), and its readers read them before the samples. */
#define SB_FORMAT_COMPANIONS 2
/* Count of companion objects of a format (0 for all but the indexed ones). */
size_t sb_format_companions (const char *format);
/* Suffix of companion c (".off.idx", ".sz.idx"). */
const char *sb_format_companion_suffix (size_t c);
/* 1 when name (len bytes) is a companion of format, which a listing of the
 * dataset leaves out (DLIO lists KEY by its extension), else 0. */
int sb_format_is_companion (const char *format, const char *name, size_t len);
/* Open companion c of object i of ds (its uint64 offsets or sizes, one per
 * sample). Returns 0, or -1 with err set. */
int sb_format_open_companion (sb_format_obj_t *obj, const sb_dataset_t *ds, uint64_t i, size_t c, char *err,
                              size_t err_size);

/* Ops of format name (dataset.format), or the raw format when the name is
 * not one listed above. Never NULL. A format this build left out (meson
 * options images, hdf5, parquet) has ops whose open fails naming the
 * option. */
const sb_format_ops_t *sb_format_find (const char *name);

/* 0 when name can be generated and read (raw included), else -1 with a
 * message naming the supported formats (csv is refused). */
int sb_format_check (const char *name, char *err, size_t err_size);

/* 0 when name is built in or not an optional format; -1 when this build
 * left it out, with err "dataset.format 'hdf5': shardbench was built
 * without hdf5 (meson -Dhdf5=enabled)" (sb_format_check says the same). */
int sb_format_left_out (const char *name, char *err, size_t err_size);

/* 1 when the format is raw seeded bytes (no framing), else 0. */
int sb_format_is_raw (const char *name);

/* Open object i of ds, named key (relative key, as sb_dataset_key gives),
 * in the format ds->format. Its record length is the one
 * sb_dataset_object_size picks. Returns 0, or -1 with err set (the object
 * is then closed). sb_format_close frees it. */
int sb_format_open (sb_format_obj_t *obj, const sb_dataset_t *ds, uint64_t i, const char *key, char *err,
                    size_t err_size);
/* Open from explicit parameters (tests). */
int sb_format_open_with (sb_format_obj_t *obj, const sb_format_ops_t *ops, uint64_t seed, uint64_t records,
                         uint64_t record, char *err, size_t err_size);
/* Same, with parquet's column list and rows per row group (NULL, 0: the
 * legacy data list<uint8> column, groups of 1 MiB of records). */
int sb_format_open_ex (sb_format_obj_t *obj, const sb_format_ops_t *ops, uint64_t seed, uint64_t records,
                       uint64_t record, const char *columns, uint64_t group_rows, char *err, size_t err_size);
/* Same, with parquet's page codec too (dataset.compression; NULL: none). */
int sb_format_open_pq (sb_format_obj_t *obj, const sb_format_ops_t *ops, uint64_t seed, uint64_t records,
                       uint64_t record, const char *columns, uint64_t group_rows, const char *compression, char *err,
                       size_t err_size);
void sb_format_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len);
void sb_format_close (sb_format_obj_t *obj);

/* Parquet layout from the sizes alone (no footer): columns as
 * dataset.parquet.columns flattens them ("name:dtype:size,...", NULL or ""
 * for DLIO's legacy data list<uint8>), group_rows (dataset.parquet.row_group_size, 0: 1 MiB
 * of records), records per object and record bytes (with columns: their
 * row bytes, or 1 to take them from the columns). Returns 0, or -1 with err
 * set; *layout is to be freed either way. */
typedef struct sb_parquet_layout sb_parquet_layout_t;
int sb_format_parquet_layout (sb_parquet_layout_t **layout, const char *columns, uint64_t group_rows,
                              uint64_t records, uint64_t record, char *err, size_t err_size);
void sb_format_parquet_layout_free (sb_parquet_layout_t *layout);
/* Byte range [*offset, *offset + *length) of the row group holding row
 * sample (its column chunks, page headers included). -1: no such row. */
int sb_format_parquet_group (const sb_parquet_layout_t *layout, uint64_t sample, uint64_t *offset,
                             uint64_t *length);
uint64_t sb_format_parquet_groups (const sb_parquet_layout_t *layout);
uint64_t sb_format_parquet_footer_at (const sb_parquet_layout_t *layout);
/* Check a column list; its row bytes and column count. 0, or -1 with err. */
int sb_format_parquet_columns (const char *columns, uint64_t *row_bytes, size_t *ncols, char *err,
                               size_t err_size);

/* Parquet page codec of a dataset.compression value: "none" (or NULL, "")
 * 0, "snappy" 1, "gzip" 2, "zstd" 6 (parquet's CompressionCodec numbers).
 * Returns 0, or -1 with err naming the codecs shardbench writes. */
int sb_format_parquet_codec (const char *compression, int *codec, char *err, size_t err_size);
/* Check a read list ("a,b,..."; storage.storage_options.columns) against
 * the columns (NULL or "": the legacy data column). 0, or -1 with err naming the
 * first name that is not a column. */
int sb_format_parquet_read_check (const char *columns, const char *read, char *err, size_t err_size);

/* ---- Parquet read plan: what DLIO's parquet readers read ----
 *
 * DLIO_local_changes reads a local or S3 parquet file so
 * (reader/parquet_reader_file_iterable.py, parquet_reader_s3_iterable.py,
 * driven by data_loader/torch_data_loader.py TorchIterableDataset): once per
 * epoch per file, pyarrow's ParquetFile reads the footer (one read of the
 * last min(size, 64 KiB), and a second read of the metadata when it is
 * longer than that read minus 8 bytes); then, row group after row group,
 * one read per group of the bytes from the first to the end of the last
 * column chunk of the columns read (storage_options.columns, all when
 * none), dictionary page included, without decompressing or decoding them.
 *
 * The plan gives the same reads from the file's own footer, so it holds
 * for compressed files (whose chunk sizes depend on the content) and for
 * files another writer made. A trainer reads a file of size S so:
 *   1. sb_parquet_tail_range (S): read that range (footer read 1);
 *   2. sb_parquet_footer_range (tail, S): the metadata's range, and
 *      whether it needs a read of its own (footer read 2);
 *   3. sb_parquet_plan_parse (metadata bytes, S, read columns): the plan;
 *   4. per row group g (sb_parquet_plan_groups), once an epoch:
 *      sb_parquet_plan_group_ranges (g) gives its reads; the group holds
 *      rows [sb_parquet_plan_group_first (g), + sb_parquet_plan_group_rows).
 * Every function is pure (no I/O); outside input is bounds-checked. */
#define SB_PARQUET_TAIL_READ 65536      /* pyarrow's first footer read (kDefaultFooterReadSize) */

typedef struct {
    uint64_t offset, length;
} sb_parquet_range_t;

typedef struct sb_parquet_plan sb_parquet_plan_t;

/* The first footer read: the last min(size, 64 KiB) bytes. */
sb_parquet_range_t sb_parquet_tail_range (uint64_t file_size);
/* From the tail read (tail_len bytes ending at file_size): the range of the
 * Thrift FileMetaData (*metadata). Returns 1 when the tail holds it (no
 * second read), 0 when it must be read (pyarrow's second read: *metadata),
 * -1 with err when the tail does not end a parquet file. */
int sb_parquet_footer_range (const uint8_t *tail, size_t tail_len, uint64_t file_size,
                             sb_parquet_range_t *metadata, char *err, size_t err_size);
/* Parse the FileMetaData (len bytes) of a file of file_size bytes into a
 * plan reading the columns named in read ("a,b,..."; NULL or "": all),
 * matched on the first element of a column's path. span 1: one range per
 * group from the first to the end of the last chunk read, as DLIO reads;
 * span 0: the read columns' chunks only, adjacent chunks merged (less
 * than DLIO when the read columns are not adjacent). Returns 0, or -1 with
 * err (*plan NULL). sb_parquet_plan_free frees it. */
int sb_parquet_plan_parse (sb_parquet_plan_t **plan, const uint8_t *metadata, size_t len, uint64_t file_size,
                           const char *read, int span, char *err, size_t err_size);
void sb_parquet_plan_free (sb_parquet_plan_t *plan);
uint64_t sb_parquet_plan_groups (const sb_parquet_plan_t *plan);
uint64_t sb_parquet_plan_rows (const sb_parquet_plan_t *plan);
uint64_t sb_parquet_plan_group_rows (const sb_parquet_plan_t *plan, uint64_t g);
uint64_t sb_parquet_plan_group_first (const sb_parquet_plan_t *plan, uint64_t g);
/* Row group holding row (rows beyond the last: the last group). */
uint64_t sb_parquet_plan_group_of (const sb_parquet_plan_t *plan, uint64_t row);
/* The reads of group g, in file order: up to max ranges into ranges, their
 * count in *n. Returns 0, or -1 when g is out of range or max is too small
 * (then *n is the count needed). A group with no column read: *n 0. */
int sb_parquet_plan_group_ranges (const sb_parquet_plan_t *plan, uint64_t g, sb_parquet_range_t *ranges,
                                  size_t max, size_t *n);
/* Bytes DLIO's reader reads of this file in an epoch: footer reads (tail +
 * second read) + every group's span of the read columns. */
uint64_t sb_parquet_plan_dlio_bytes (const sb_parquet_plan_t *plan);
/* Bytes the plan reads in an epoch: the same footer reads + every group's
 * ranges (sb_parquet_plan_dlio_bytes when span is 1). */
uint64_t sb_parquet_plan_bytes (const sb_parquet_plan_t *plan);
/* Codec of the column chunks (parquet's number; the first chunk's). */
int sb_parquet_plan_codec (const sb_parquet_plan_t *plan);

/* DLIO index i of a key named PREFIX_III_of_N.EXT (any folder). Returns 0,
 * or -1 when the name does not follow that pattern. */
int sb_format_key_index (const char *key, uint64_t *index);

/* CRC-32C (Castagnoli), as TFRecord uses; crc is the running value (0 to
 * start). sb_format_masked_crc applies TFRecord's mask. */
uint32_t sb_format_crc32c (uint32_t crc, const uint8_t *buf, size_t len);
uint32_t sb_format_masked_crc (uint32_t crc);

/* ---- png and jpeg of DLIO's size (format_image.c) ----
 * DLIO writes a png or jpeg file as the dim1 x dim2 raw bytes of one sample
 * (whatever num_samples_per_file is); shardbench writes a valid image of
 * dim1 rows of dim2 gray pixels padded to exactly that many bytes. */
/* 1 when format is png, jpeg or jpg (any case), else 0. */
int sb_format_is_image (const char *format);
/* The size of the image of width x height pixels made target bytes long:
 * *size target and *exact 1, or, when the smallest valid image is larger
 * (or a few bytes more than a tiny png's smallest cannot be reached), the
 * smallest valid image's size and *exact 0. format "png", else jpeg.
 * Returns 0, or -1 with err when the image is too large for the format. */
int sb_format_image_size (const char *format, uint64_t width, uint64_t height, uint64_t target, uint64_t *size,
                          int *exact, char *err, size_t err_size);
/* The same for object i of ds (its dim1 x dim2, target dim1 * dim2). */
int sb_format_image_object_size (const sb_dataset_t *ds, uint64_t i, uint64_t *size, int *exact, char *err,
                                 size_t err_size);
/* Count of the objects of ds whose image cannot be dim1 * dim2 bytes long,
 * the first one's index in *first (may be NULL) when there is one. */
uint64_t sb_format_image_inexact (const sb_dataset_t *ds, uint64_t *first);

/* numpy's version 1.0 .npy header of an array of type descr ("<f2") and
 * shape text ("(3, 4)"), into out: the dict, growth spaces more (room for
 * the shape to grow in place, as np.save leaves), then spaces and a newline
 * up to a multiple of 64 bytes with the 10 bytes of magic, version and
 * length. Returns its length, or 0 when it does not fit room or the 16-bit
 * length. */
size_t sb_npy_header (uint8_t *out, size_t room, const char *descr, const char *shape, size_t growth);

/* formats, defined in format_*.c */
extern const sb_format_ops_t sb_format_raw, sb_format_npy, sb_format_npz, sb_format_tfrecord, sb_format_png,
    sb_format_jpeg, sb_format_hdf5, sb_format_parquet, sb_format_index_list;

#endif
