/* datasize: minimum training dataset per the MLPerf Storage rules. */
#include "datasize.h"

#include <math.h>
#include <stdio.h>

int
sb_datasize (const sb_datasize_in_t *in, sb_datasize_t *out, char *err, size_t err_size)
{
    if (!in->hosts || !(in->host_memory_gb > 0) || !in->accelerators || !in->batch_size || !in->record_length
        || !in->samples_per_file) {
        snprintf (err, err_size, "hosts, host memory, accelerators, batch size, record length and samples per file"
                  " must all be > 0");
        return -1;
    }
    double steps = (double) SB_DATASIZE_STEPS * (double) in->batch_size * (double) in->accelerators;
    double memory = ceil ((double) in->hosts * in->host_memory_gb * SB_DATASIZE_MEMORY_FACTOR * 1073741824.0
                          / (double) in->record_length);
    if (steps > 9e18 || memory > 9e18) {
        snprintf (err, err_size, "the dataset would hold more than 9e18 samples");
        return -1;
    }
    out->samples_steps = (uint64_t) steps;
    out->samples_memory = (uint64_t) memory;
    out->samples = out->samples_steps > out->samples_memory ? out->samples_steps : out->samples_memory;
    out->files = (out->samples + in->samples_per_file - 1) / in->samples_per_file;
    out->subfolders = out->files > SB_DATASIZE_FILES_PER_FOLDER
        ? (out->files + SB_DATASIZE_FILES_PER_FOLDER - 1) / SB_DATASIZE_FILES_PER_FOLDER : 0;
    out->gib = (double) out->samples * (double) in->record_length / 1073741824.0;
    return 0;
}
