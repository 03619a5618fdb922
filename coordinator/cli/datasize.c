/* datasize: minimum training dataset per the MLPerf Storage rules, in
 * mlpstorage's arithmetic (see datasize.h). */
#include "datasize.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_LIMIT 9e18    /* below 2^63: every count converts to uint64_t */

int
sb_datasize (const sb_datasize_in_t *in, sb_datasize_t *out, char *err, size_t err_size)
{
    if (!in->hosts || !(in->host_memory_gb > 0) || !isfinite (in->host_memory_gb) || !in->accelerators
        || !in->batch_size || !in->samples_per_file) {
        snprintf (err, err_size, "hosts, host memory, accelerators, batch size and samples per file must all be > 0");
        return -1;
    }
    if (!(in->record_length >= 0) || !isfinite (in->record_length)) {
        snprintf (err, err_size, "the record length must be a finite number >= 0");
        return -1;
    }
    *out = (sb_datasize_t) { 0 };
    /* per_host = GB x 1024 x 1024 x 1024; total = per_host x hosts; the
     * larger of that and the measured total; dataset = 5 x total. With a
     * whole number of GiB these are Python ints there: here doubles, exact
     * (GiB x hosts x 5 stays far below 2^53 for any dataset under the 9e18
     * bytes limit). The measured total is a whole number of bytes: 5 x it
     * is exact in 64 bits, then converted once, as Python's int / float. */
    double memory = in->host_memory_gb * 1073741824.0 * (double) in->hosts;
    double dataset_bytes = (double) SB_DATASIZE_MEMORY_FACTOR * memory;
    if ((long double) in->measured_memory_bytes > (long double) memory) {
        if (in->measured_memory_bytes > UINT64_MAX / SB_DATASIZE_MEMORY_FACTOR) {
            snprintf (err, err_size, "the measured memory is over %llu bytes",
                      (unsigned long long) (UINT64_MAX / SB_DATASIZE_MEMORY_FACTOR));
            return -1;
        }
        memory = (double) in->measured_memory_bytes;
        dataset_bytes = (double) (in->measured_memory_bytes * SB_DATASIZE_MEMORY_FACTOR);
        out->memory_measured = 1;
    }
    double file_bytes = (double) in->samples_per_file * in->record_length;
    double files_memory = file_bytes > 0 ? ceil (dataset_bytes / file_bytes) : 0;
    double steps = (double) SB_DATASIZE_STEPS * (double) in->accelerators * (double) in->batch_size;
    if (steps > S_LIMIT || files_memory > S_LIMIT) {
        snprintf (err, err_size, "the dataset would hold more than 9e18 files or samples");
        return -1;
    }
    out->memory_bytes = memory;
    out->file_bytes = file_bytes;
    out->samples_steps = (uint64_t) steps;
    out->files_memory = (uint64_t) files_memory;
    /* Python: math.ceil (min_samples / num_samples_per_file), a true division */
    out->files_steps = (uint64_t) ceil ((double) out->samples_steps / (double) in->samples_per_file);
    out->files = out->files_memory > out->files_steps ? out->files_memory : out->files_steps;
    double samples = (double) out->files * (double) in->samples_per_file;
    double bytes = (double) out->files * file_bytes;
    if (samples > S_LIMIT || bytes > S_LIMIT) {
        snprintf (err, err_size, "the dataset would hold more than 9e18 samples or bytes");
        return -1;
    }
    out->samples = out->files * in->samples_per_file;
    out->bytes = (uint64_t) bytes;      /* int (), toward zero */
    out->subfolders = out->files > SB_DATASIZE_FILES_PER_FOLDER
        ? (uint64_t) ((double) out->files / (double) SB_DATASIZE_FILES_PER_FOLDER) : 0;
    out->gib = (double) out->bytes / 1073741824.0;
    return 0;
}

double
sb_datasize_catalog_gib (uint64_t files)
{
    return (double) files * SB_DATASIZE_CATALOG_BYTES_PER_OBJECT / 1073741824.0;
}

/* A whole number >= 0 or a decimal; -1 when text is not one. */
static int
s_number (const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = text ? strtod (text, &end) : 0;
    if (!text || errno || !end || *end || end == text || !(v >= 0) || !isfinite (v))
        return -1;
    *out = v;
    return 0;
}

int
sb_datasize_record_length (sb_config_t *cfg, const char *format, double *out, const char **how,
                           char *err, size_t err_size)
{
    *out = 0;
    const sb_config_entry_t *e = sb_config_get (cfg, "dataset.record_length_bytes");
    if (e) {
        if (!e->value || s_number (e->value, out) != 0) {
            snprintf (err, err_size, "%s:%d: key 'dataset.record_length_bytes': '%s' is not a number >= 0",
                      e->origin, e->line, e->value ? e->value : "(a list)");
            return -1;
        }
        *how = "dataset.record_length_bytes";
        return 0;
    }
    *how = "none: no dataset.record_length_bytes";
    if (strcmp (format, "parquet") != 0)
        return 0;
    *how = "the sum of dataset.parquet.columns";
    for (size_t i = 0;; i++) {
        char key[96];
        snprintf (key, sizeof key, "dataset.parquet.columns.%zu.", i);
        size_t prefix = strlen (key);
        int present = 0;
        for (size_t j = 0; j < sb_config_count (cfg) && !present; j++)
            present = strncmp (sb_config_at (cfg, j)->key, key, prefix) == 0;
        if (!present)
            return 0;
        snprintf (key, sizeof key, "dataset.parquet.columns.%zu.dtype", i);
        const sb_config_entry_t *dtype = sb_config_get (cfg, key);
        snprintf (key, sizeof key, "dataset.parquet.columns.%zu.size", i);
        const sb_config_entry_t *size = sb_config_get (cfg, key);
        double n = 1;
        /* int (col.get ('size', 1)): a whole number */
        if (size && (!size->value || s_number (size->value, &n) != 0 || n != floor (n))) {
            snprintf (err, err_size, "%s:%d: key '%s': '%s' is not a whole number >= 0", size->origin, size->line,
                      key, size->value ? size->value : "(a list)");
            return -1;
        }
        const char *t = dtype && dtype->value ? dtype->value : "float32";
        double width = !strcmp (t, "float64") || !strcmp (t, "int64") ? 8
                     : !strcmp (t, "uint8") || !strcmp (t, "bool") ? 1 : 4;
        *out += n * width;
    }
}
