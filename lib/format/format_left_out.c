/* format_left_out: the entry points of the optional formats a build left
 * out (meson options images and parquet; hdf5 has no entry point beyond its
 * ops table). Callers reach them only for a workload naming the format,
 * which sb_format_check refuses first; each fails naming the meson option
 * (sb_format_left_out), so nothing is ever written or read as the format. */
#include "format.h"

#include <stdio.h>
#include <strings.h>

#ifndef SB_HAVE_IMAGES
static void
s_images_left_out (const char *format, char *err, size_t err_size)
{
    snprintf (err, err_size, "dataset.format '%s': shardbench was built without images (meson -Dimages=enabled)",
              format ? format : "png");
}

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
    s_images_left_out (format, err, err_size);
    return -1;
}

int
sb_format_image_object_size (const sb_dataset_t *ds, uint64_t i, uint64_t *size, int *exact, char *err,
                             size_t err_size)
{
    s_images_left_out (ds->format, err, err_size);
    return -1;
}

uint64_t
sb_format_image_inexact (const sb_dataset_t *ds, uint64_t *first)
{
    return 0;
}
#endif

#ifndef SB_HAVE_PARQUET
int
sb_format_parquet_codec (const char *compression, int *codec, char *err, size_t err_size)
{
    sb_format_left_out ("parquet", err, err_size);
    return -1;
}

int
sb_format_parquet_columns (const char *columns, uint64_t *row_bytes, size_t *ncols, char *err, size_t err_size)
{
    sb_format_left_out ("parquet", err, err_size);
    return -1;
}

int
sb_format_parquet_read_check (const char *columns, const char *read, char *err, size_t err_size)
{
    sb_format_left_out ("parquet", err, err_size);
    return -1;
}

int
sb_format_parquet_layout (sb_parquet_layout_t **layout, const char *columns, uint64_t group_rows, uint64_t records,
                          uint64_t record, char *err, size_t err_size)
{
    *layout = NULL;
    sb_format_left_out ("parquet", err, err_size);
    return -1;
}

void
sb_format_parquet_layout_free (sb_parquet_layout_t *layout)
{
}

int
sb_format_parquet_group (const sb_parquet_layout_t *layout, uint64_t sample, uint64_t *offset, uint64_t *length)
{
    return -1;
}

uint64_t
sb_format_parquet_groups (const sb_parquet_layout_t *layout)
{
    return 0;
}

uint64_t
sb_format_parquet_footer_at (const sb_parquet_layout_t *layout)
{
    return 0;
}
#endif
