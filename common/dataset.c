/* dataset: DLIO names, sizes and content seeds. */
#include "dataset.h"
#include "util.h"

#include <math.h>
#include <stdio.h>

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

int
sb_dataset_folder (const sb_dataset_t *self, uint64_t i, char *dir, size_t size)
{
    if (self->subfolders > 1)
        return sb_strf (dir, size, "train/%0*llu", s_digits (self->subfolders),
                        (unsigned long long) (i % self->subfolders));
    return sb_strf (dir, size, "train");
}

int
sb_dataset_key (const sb_dataset_t *self, uint64_t i, char *key, size_t size)
{
    char dir[64];
    if (sb_dataset_folder (self, i, dir, sizeof dir) != 0)
        return -1;
    return sb_strf (key, size, "%s/%s_%0*llu_of_%llu.%s", dir, self->prefix, s_digits (self->files),
                    (unsigned long long) i, (unsigned long long) self->files, self->format);
}

uint64_t
sb_dataset_content_seed (uint64_t run_seed, const char *key)
{
    uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *) key; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return sb_mix (run_seed ^ 0x636f6e74656e74ull, h);
}

uint64_t
sb_dataset_object_size (const sb_dataset_t *self, uint64_t i)
{
    double record = sb_normal (sb_mix (self->seed ^ 0x73697a65ull, i), (double) self->record_length,
                               (double) self->record_stdev);
    uint64_t r = record < 1.0 ? 1 : (uint64_t) llround (record);
    return r * (self->samples_per_file ? self->samples_per_file : 1);
}
