/* dlio_stops: the run-time lines on where DLIO stops (see dlio_stops.h). */
#include "dlio_stops.h"
#include "engine.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* 1 when a column of dataset.parquet.columns ("name:dtype:size,...") is not
 * an 8-bit int; no columns: DLIO's legacy uint8 `data` column, dictionary
 * encoded */
static int
s_parquet_without_dictionary (const char *columns)
{
    const char *p = columns;
    while (p && *p) {
        const char *end = strchr (p, ',');
        size_t len = end ? (size_t) (end - p) : strlen (p);
        const char *dtype = memchr (p, ':', len);
        if (dtype) {
            dtype++;
            const char *dend = memchr (dtype, ':', len - (size_t) (dtype - p));
            size_t dlen = dend ? (size_t) (dend - dtype) : len - (size_t) (dtype - p);
            if (!((dlen == 4 && strncmp (dtype, "int8", 4) == 0) || (dlen == 5 && strncmp (dtype, "uint8", 5) == 0)))
                return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

int
sb_dlio_stop_note (const sb_workload_t *wl, int trains, size_t i, char *buf, size_t size)
{
    const char *loader = wl->data_loader[0] ? wl->data_loader : wl->framework;
    int objects = (sb_storage_caps (&wl->storage) & SB_ENGINE_OBJECTS) != 0;
    size_t n = 0;
    if (objects && strcasecmp (wl->storage_library, "minio") == 0 && n++ == i) {
        snprintf (buf, size, "storage_library minio: DLIO_local_changes stops before any I/O here (its storage's"
                  " preflight calls an existence check of the store that its MinIOAdapter lacks: a ConnectionError);"
                  " shardbench runs it with minio's I/O (docs/DLIO.md \"Where DLIO stops\")");
        return 1;
    }
    static const char *const streamed[] = { "npz", "npy", "jpeg", "png" };
    int is_streamed = 0;
    for (size_t k = 0; k < sizeof streamed / sizeof streamed[0]; k++)
        is_streamed |= strcasecmp (wl->format, streamed[k]) == 0;
    /* direct_fs_iterable: direct_fs without reader.odirect (storage_keys.h) */
    if (trains && is_streamed && wl->storage.direct_fs_iterable && strcasecmp (loader, "pytorch") == 0 && n++ == i) {
        snprintf (buf, size, "%s on direct_fs with the pytorch loader: DLIO_local_changes stops at its first read"
                  " here (its iterable reader wraps the list's direct:// URIs in a second direct:// URI, or opens"
                  " file:// URIs as paths: \"File not found\"); shardbench runs it with DLIO's reads"
                  " (docs/DLIO.md \"Where DLIO stops\")", wl->format);
        return 1;
    }
    if (trains && strcasecmp (wl->format, "parquet") == 0 && !(objects && strcasecmp (wl->storage_library, "s3dlio") == 0)
        && s_parquet_without_dictionary (wl->parquet_columns) && n++ == i) {
        snprintf (buf, size, "parquet columns other than 8-bit ints: DLIO_local_changes' parquet readers stop on"
                  " files shardbench generated (their column chunks have no dictionary page, and the readers"
                  " compare pyarrow's None dictionary_page_offset with 0: a TypeError); files pyarrow wrote"
                  " (dictionary encoding on) read (docs/DLIO.md \"Where DLIO stops\")");
        return 1;
    }
    return 0;
}
