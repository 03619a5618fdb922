/* sample_range: a sample's byte range and an object's generated size (see sample_range.h). */
#include "sample_range.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void
sb_sample_ranger_fini (sb_sample_ranger_t *self)
{
    sb_format_parquet_layout_free (self->layout);
    sb_parquet_plan_free (self->plan);
    memset (self, 0, sizeof *self);
}

/* Rows per group of a layout: the first row whose group is not group 0's. */
static uint64_t
s_rows_per_group (const sb_parquet_layout_t *l, uint64_t rows)
{
    uint64_t off0, len0, off, len;
    if (sb_format_parquet_groups (l) <= 1 || sb_format_parquet_group (l, 0, &off0, &len0) != 0)
        return rows;
    uint64_t lo = 1, hi = rows - 1;    /* rows below lo are in group 0, row hi is not (groups > 1) */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (sb_format_parquet_group (l, mid, &off, &len) == 0 && off == off0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* DLIO's plan for uncompressed files of spf rows of `record` bytes: parse
 * the footer the generator writes for them (its bytes depend on the sizes
 * only, not on the content). NULL when it cannot be built. */
static sb_parquet_plan_t *
s_plan_of (sb_sample_ranger_t *self, const sb_dataset_t *ds, uint64_t spf, uint64_t record)
{
    if (ds->parquet_compression && *ds->parquet_compression && strcmp (ds->parquet_compression, "none") != 0)
        return NULL;    /* compressed sizes depend on the content of each file */
    char why[512];
    sb_format_obj_t obj;
    if (sb_format_open_pq (&obj, sb_format_find ("parquet"), 0, spf, record, ds->parquet_columns,
                           ds->parquet_row_group, NULL, why, sizeof why) != 0)
        return NULL;
    sb_parquet_plan_t *plan = NULL;
    sb_parquet_range_t tail = sb_parquet_tail_range (obj.size), meta;
    uint8_t *tail_buf = malloc (tail.length), *meta_buf = NULL;
    if (tail_buf) {
        sb_format_fill (&obj, tail.offset, tail_buf, (size_t) tail.length);
        int rc = sb_parquet_footer_range (tail_buf, (size_t) tail.length, obj.size, &meta, why, sizeof why);
        const uint8_t *md = NULL;
        if (rc == 1)
            md = tail_buf + (meta.offset - tail.offset);
        else if (rc == 0 && (meta_buf = malloc (meta.length))) {
            sb_format_fill (&obj, meta.offset, meta_buf, (size_t) meta.length);
            md = meta_buf;
        }
        if (md && sb_parquet_plan_parse (&plan, md, (size_t) meta.length, obj.size, ds->parquet_read_columns, 1, why,
                                         sizeof why) == 0) {
            self->plan_size = obj.size;
            self->footer[0] = tail;
            self->footer[1] = meta;
            self->nfooter = rc == 0 ? 2 : 1;
        }
    }
    free (tail_buf);
    free (meta_buf);
    sb_format_close (&obj);
    return plan;
}

size_t
sb_sample_range_footer (const sb_sample_ranger_t *self, uint64_t size, sb_parquet_range_t out[2])
{
    if (!self->plan || size != self->plan_size)
        return 0;
    for (size_t i = 0; i < self->nfooter; i++)
        out[i] = self->footer[i];
    return self->nfooter;
}

/* The byte range of the row group holding row `row` (layout and plan set). */
static int
s_group_range (sb_sample_ranger_t *self, uint64_t size, uint64_t spf, uint64_t row, uint64_t *offset,
               uint64_t *length)
{
    uint64_t first = row - row % self->per, end = first + self->per < spf ? first + self->per : spf;
    if (self->plan && size == self->plan_size) {
        /* DLIO's read of the group: its first byte to the end of the last column read */
        uint64_t g = sb_parquet_plan_group_of (self->plan, row);
        sb_parquet_range_t rg[1];
        size_t n = 0;
        if (sb_parquet_plan_group_ranges (self->plan, g, rg, 1, &n) == 0 && n == 1 && rg[0].length > 0) {
            *offset = rg[0].offset;
            *length = rg[0].length;
            return 0;
        }
    }
    if (sb_format_parquet_footer_at (self->layout) <= size)
        return sb_format_parquet_group (self->layout, row, offset, length);
    /* sizes without the framing (synthetic): the group's rows as equal shares */
    uint64_t share = size / spf;
    *offset = first * share;
    *length = end == spf ? size - first * share : (end - first) * share;
    return 0;
}

/* The row group of row in_file, or -1 when its layout cannot be computed
 * (then the sample gets its equal share). */
static int
s_parquet_group (sb_sample_ranger_t *self, const sb_dataset_t *ds, uint64_t dlio, uint64_t size, uint64_t in_file,
                 uint64_t *offset, uint64_t *length, uint64_t *run_end)
{
    uint64_t spf = ds->samples_per_file, record = sb_dataset_object_size (ds, dlio) / spf;
    if (!self->layout || record != self->record) {
        char why[512];
        sb_format_parquet_layout_free (self->layout);
        self->layout = NULL;
        self->record = record;
        self->failed = sb_format_parquet_layout (&self->layout, ds->parquet_columns, ds->parquet_row_group, spf, record,
                                                 why, sizeof why) != 0;
        sb_parquet_plan_free (self->plan);
        self->plan = NULL;
        self->nfooter = 0;
        if (self->failed) {
            sb_format_parquet_layout_free (self->layout);
            self->layout = NULL;
        }
        else {
            self->per = s_rows_per_group (self->layout, spf);
            self->plan = s_plan_of (self, ds, spf, record);
        }
    }
    if (self->failed || !self->layout || in_file >= spf)
        return -1;
    /* a read covers `coalesce` consecutive row groups (DLIO's s3dlio
     * coalesce_rgs): from the first one's first byte to the last one's end */
    uint64_t coalesce = ds->parquet_coalesce > 1 ? ds->parquet_coalesce : 1, unit = self->per * coalesce;
    uint64_t first = in_file - in_file % unit, end = first + unit < spf ? first + unit : spf;
    *run_end = end;
    uint64_t o1, l1, o2, l2;
    if (s_group_range (self, size, spf, first, &o1, &l1) != 0 || s_group_range (self, size, spf, end - 1, &o2, &l2) != 0)
        return -1;
    *offset = o1;
    *length = o2 + l2 > o1 ? o2 + l2 - o1 : l1;
    return 0;
}

int
sb_sample_range (sb_sample_ranger_t *self, const sb_dataset_t *ds, uint64_t size, uint64_t dlio, uint64_t in_file,
                 const char *key, uint64_t *offset, uint64_t *length, uint64_t *run_end, int *group, char *err,
                 size_t err_size)
{
    uint64_t spf = ds->samples_per_file;
    *group = 0;
    *run_end = in_file + 1;
    if (size == SB_SIZE_UNKNOWN && spf > 1) {
        *offset = in_file * ds->record_length;
        *length = ds->record_length;
        return 0;
    }
    if (size == SB_SIZE_UNKNOWN) {
        *offset = 0;
        *length = 0;    /* the whole object, whatever its size */
        return 0;
    }
    if (size < spf) {
        snprintf (err, err_size, "object '%s' has %llu bytes, fewer than dataset.num_samples_per_file=%llu samples",
                  key, (unsigned long long) size, (unsigned long long) spf);
        return -1;
    }
    if (spf > 1 && dlio != SB_NO_DLIO_INDEX && strcmp (ds->format, "parquet") == 0
        && s_parquet_group (self, ds, dlio, size, in_file, offset, length, run_end) == 0) {
        *group = 1;
        return 0;
    }
    uint64_t record = size / spf;
    *offset = in_file * record;
    *length = in_file == spf - 1 ? size - in_file * record : record;
    return 0;
}

int
sb_generator_size_known (const sb_dataset_t *ds, int synthetic)
{
    static const char *const encoded[] = { "hdf5", "h5", NULL };
    if (synthetic)
        return 1;
    for (const char *const *f = encoded; *f; f++)
        if (strcasecmp (ds->format, *f) == 0)
            return 0;
    return 1;
}

int
sb_generator_size (const sb_dataset_t *ds, int synthetic, uint64_t dlio, uint64_t *size, char *err, size_t err_size)
{
    if (synthetic || sb_format_is_raw (ds->format)) {
        *size = sb_dataset_object_size (ds, dlio);
        return 0;
    }
    if (sb_format_is_image (ds->format)) {
        int exact;
        return sb_format_image_object_size (ds, dlio, size, &exact, err, err_size);
    }
    char key[PATH_MAX];
    if (sb_dataset_key (ds, dlio, key, sizeof key) != 0) {
        snprintf (err, err_size, "the name of object %llu does not fit", (unsigned long long) dlio);
        return -1;
    }
    sb_format_obj_t obj;
    if (sb_format_open (&obj, ds, dlio, key, err, err_size) != 0)
        return -1;
    *size = obj.size;
    sb_format_close (&obj);
    return 0;
}
