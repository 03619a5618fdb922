/* dataset: DLIO names, sizes and content seeds. */
#include "dataset.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int
s_digits (uint64_t n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

/* Append v zero-padded to width digits at *at (no bounds check: the caller
 * reserved room). Names are made millions of times per second by the
 * catalog, so no printf here. */
static char *
s_put_padded (char *at, uint64_t v, int width)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char) ('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = n; i < width; i++)
        *at++ = '0';
    while (n)
        *at++ = tmp[--n];
    return at;
}

static char *
s_put (char *at, const char *s, size_t n)
{
    memcpy (at, s, n);
    return at + n;
}

const char *
sb_dataset_split (const sb_dataset_t *self)
{
    return self->split && *self->split ? self->split : "train";
}

int
sb_dataset_folder (const sb_dataset_t *self, uint64_t i, char *dir, size_t size)
{
    const char *split = sb_dataset_split (self);
    if (size < strlen (split) + 1 + 21)
        return -1;
    char *at = s_put (dir, split, strlen (split));
    if (self->subfolders > 1) {
        *at++ = '/';
        at = s_put_padded (at, i % self->subfolders, s_digits (self->subfolders));
    }
    *at = '\0';
    return 0;
}

int
sb_dataset_key (const sb_dataset_t *self, uint64_t i, char *key, size_t size)
{
    size_t plen = strlen (self->prefix), flen = strlen (self->format);
    const char *split = sb_dataset_split (self);
    size_t slen = strlen (split);
    /* train/SUB/PREFIX_I_of_N.FORMAT: at most 6 + 21 + plen + 1 + 20 + 4 + 20 + 1 + flen + NUL */
    if (size < plen + flen + slen + 91)
        return -1;
    char *at = s_put (key, split, slen);
    *at++ = '/';
    if (self->subfolders > 1) {
        at = s_put_padded (at, i % self->subfolders, s_digits (self->subfolders));
        *at++ = '/';
    }
    at = s_put (at, self->prefix, plen);
    *at++ = '_';
    at = s_put_padded (at, i, s_digits (self->files));
    at = s_put (at, "_of_", 4);
    at = s_put_padded (at, self->files, 1);
    *at++ = '.';
    at = s_put (at, self->format, flen);
    *at = '\0';
    return 0;
}

uint64_t
sb_dataset_content_seed (uint64_t run_seed, const char *key)
{
    uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *) key; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return sb_mix (run_seed ^ 0x636f6e74656e74ull, h);
}

void
sb_dataset_record_dims (const sb_dataset_t *self, uint64_t i, uint64_t *dim1, uint64_t *dim2)
{
    /* DLIO (data_generator.py get_dimension, _extract_dims; config.py
     * derive_configurations): dimension = int(sqrt(record_length)), each of
     * a file's two dimensions max(int(N(dimension, stdev / 2 / sqrt(record_length))), 1) */
    double root = sqrt ((double) self->record_length);
    uint64_t dim = (uint64_t) root;
    while (dim > 0 && dim * dim > self->record_length)   /* sqrt's rounding at large squares */
        dim--;
    while ((dim + 1) * (dim + 1) <= self->record_length)
        dim++;
    if (self->record_stdev == 0) {
        *dim1 = *dim2 = dim > 0 ? dim : 1;
        return;
    }
    double stdev = (double) self->record_stdev / 2.0 / root;
    uint64_t seed = sb_mix (self->seed ^ 0x73697a65ull, i);
    double d[2] = { sb_normal (seed, (double) dim, stdev), sb_normal (sb_mix (seed, 1), (double) dim, stdev) };
    for (int k = 0; k < 2; k++)
        d[k] = d[k] < 1.0 ? 1.0 : trunc (d[k]);    /* Python's int() truncates; DLIO clamps at 1 */
    *dim1 = (uint64_t) d[0];
    *dim2 = (uint64_t) d[1];
}

uint64_t
sb_dataset_object_size (const sb_dataset_t *self, uint64_t i)
{
    uint64_t spf = self->samples_per_file ? self->samples_per_file : 1;
    if (self->format && strcmp (self->format, "parquet") == 0) {
        /* parquet rows follow its columns (format_parquet.c), not dimensions */
        double record = sb_normal (sb_mix (self->seed ^ 0x73697a65ull, i), (double) self->record_length,
                                   (double) self->record_stdev);
        return (record < 1.0 ? 1 : (uint64_t) llround (record)) * spf;
    }
    uint64_t dims[SB_DATASET_MAX_DIMS], elements = 1;
    int listed;
    size_t n = sb_dataset_sample_shape (self, i, dims, SB_DATASET_MAX_DIMS, &listed);
    /* DLIO's png and jpeg files are the dim1 x dim2 uint8
     * bytes of one sample, whatever the samples per file and element type */
    if (self->format
        && (strcasecmp (self->format, "png") == 0 || strcasecmp (self->format, "jpeg") == 0
            || strcasecmp (self->format, "jpg") == 0))
        return n == 0 ? 1 : dims[0] * (n > 1 ? dims[1] : 1);
    for (size_t k = 0; k < n; k++)
        elements *= dims[k];
    size_t item = sb_dataset_element_size (self->element_type, NULL);
    return elements * (item ? item : 1) * spf;
}

size_t
sb_dataset_element_size (const char *element_type, const char **descr)
{
    static const struct {
        const char *name, *descr;
        size_t      size;
    } types[] = {
        { "uint8", "|u1", 1 },  { "int8", "|i1", 1 },   { "uint16", "<u2", 2 },  { "int16", "<i2", 2 },
        { "float16", "<f2", 2 }, { "uint32", "<u4", 4 }, { "int32", "<i4", 4 },   { "float32", "<f4", 4 },
        { "uint64", "<u8", 8 }, { "int64", "<i8", 8 },  { "float64", "<f8", 8 },
    };
    if (!element_type || !*element_type)
        element_type = "uint8";
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        if (strcmp (element_type, types[k].name) == 0) {
            if (descr)
                *descr = types[k].descr;
            return types[k].size;
        }
    return 0;
}

size_t
sb_dataset_sample_shape (const sb_dataset_t *self, uint64_t i, uint64_t *dims, size_t max, int *listed)
{
    if (self->record_dims && self->record_ndims > 0) {
        size_t n = self->record_ndims < max ? self->record_ndims : max;
        for (size_t k = 0; k < n; k++)
            dims[k] = self->record_dims[k];
        *listed = 1;
        return n;
    }
    *listed = 0;
    if (max < 2)
        return 0;
    sb_dataset_record_dims (self, i, &dims[0], &dims[1]);
    return 2;
}

uint64_t
sb_dataset_index_at (const sb_dataset_t *self, uint64_t p)
{
    /* folder f holds i = f, f + F, ...: q + 1 objects for f < r, q after */
    uint64_t folders = self->subfolders > 1 ? self->subfolders : 1;
    uint64_t q = self->files / folders, r = self->files % folders, f, m;
    if (p < r * (q + 1)) {
        f = p / (q + 1);
        m = p % (q + 1);
    }
    else {
        uint64_t p2 = p - r * (q + 1);
        f = r + p2 / q;
        m = p2 % q;
    }
    return f + m * folders;
}

int
sb_dataset_key_sorted (const sb_dataset_t *self, uint64_t p, char *key, size_t size)
{
    if (p >= self->files)
        return -1;
    return sb_dataset_key (self, sb_dataset_index_at (self, p), key, size);
}

static int
s_has_control (const char *text)
{
    for (const unsigned char *p = (const unsigned char *) text; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 1;
    return 0;
}

int
sb_dataset_check_part (const char *part, char *why, size_t why_size)
{
    if (strchr (part, '/'))
        snprintf (why, why_size, "must not contain '/' (object names stay in the data folder)");
    else if (strstr (part, ".."))
        snprintf (why, why_size, "must not contain '..' (object names stay in the data folder)");
    else if (s_has_control (part))
        snprintf (why, why_size, "must not contain control characters");
    else
        return 0;
    return -1;
}

int
sb_dataset_check_name (const char *name, char *why, size_t why_size)
{
    if (!*name)
        snprintf (why, why_size, "is empty");
    else if (name[0] == '/')
        snprintf (why, why_size, "is absolute (names are relative to the data folder)");
    else if (s_has_control (name))
        snprintf (why, why_size, "contains control characters");
    else {
        for (const char *seg = name; seg;) {
            const char *slash = strchr (seg, '/');
            size_t n = slash ? (size_t) (slash - seg) : strlen (seg);
            if (n == 2 && seg[0] == '.' && seg[1] == '.') {
                snprintf (why, why_size, "has a '..' component (it would leave the data folder)");
                return -1;
            }
            seg = slash ? slash + 1 : NULL;
        }
        return 0;
    }
    return -1;
}
