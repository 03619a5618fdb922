/* dlio_tf: the run-time line on DLIO's tensorflow loader (see dlio_tf.h). */
#include "dlio_tf.h"
#include "engine.h"

#include <stdio.h>
#include <strings.h>

uint64_t
sb_dlio_tf_thread_files (uint64_t files, uint64_t spf, uint64_t threads)
{
    uint64_t k = files * spf, pairs = 0;
    if (k == 0 || spf == 0)
        return 0;
    if (threads == 0)
        threads = 1;
    uint64_t spt = k / threads ? k / threads : 1;
    uint64_t blocks = (k + spt - 1) / spt;
    /* a thread's blocks are b = t, t + T, ...; its files only grow, so a
     * file it met in its previous block counts once */
    for (uint64_t t = 0; t < threads && t < blocks; t++) {
        uint64_t last = UINT64_MAX;
        for (uint64_t b = t; b < blocks; b += threads) {
            uint64_t first = b * spt / spf, end = ((b + 1) * spt < k ? (b + 1) * spt : k) - 1;
            uint64_t lastf = end / spf;
            pairs += lastf - first + 1 - (first == last);
            last = lastf;
        }
    }
    return pairs;
}

int
sb_dlio_tf_note (const sb_workload_t *wl, sb_sampler_kind_t kind, uint64_t ranks, uint64_t listed, uint64_t threads,
                 char *buf, size_t size)
{
    if (kind != SB_SAMPLER_DLIO_ITERATIVE || ranks == 0)
        return 0;
    uint64_t used = wl->num_files_train && wl->num_files_train < listed ? wl->num_files_train : listed;
    uint64_t f = used / ranks, spf = wl->num_samples_per_file;
    const char *loader = wl->data_loader[0] ? wl->data_loader : wl->framework;
    if (strcasecmp (wl->format, "tfrecord") == 0 && strcasecmp (loader, "tensorflow") == 0 && ranks > 1 && f > 0) {
        if (f >= ranks) {
            /* rank r keeps positions r, r + R, ... of its own list of f */
            uint64_t read = 0;
            for (uint64_t r = 0; r < ranks; r++)
                read += (f - r + ranks - 1) / ranks;
            uint64_t slice = (f + ranks - 1) / ranks;   /* rank 0's */
            snprintf (buf, size, "tfrecord with the tensorflow loader: DLIO_local_changes' TFReader.next shards each"
                      " rank's %llu files again by the %llu ranks and repeats what is left, so each epoch a rank"
                      " reads %llu of its files (rank 0), each about %llu times, and %llu of the %llu files are never"
                      " read (repeated and lost data); shardbench reads each rank's %llu files once an epoch in the"
                      " iterative order: the same steps and samples per rank (docs/DLIO.md)",
                      (unsigned long long) f, (unsigned long long) ranks, (unsigned long long) slice,
                      (unsigned long long) ranks, (unsigned long long) (f * ranks - read),
                      (unsigned long long) (f * ranks), (unsigned long long) f);
        }
        else
            snprintf (buf, size, "tfrecord with the tensorflow loader: DLIO_local_changes' TFReader.next gives each"
                      " rank fewer files (%llu) than ranks (%llu), so it shards their records by rank: every rank"
                      " reads all %llu of its files and keeps 1 record in %llu, repeating that over the epoch (%llu"
                      " times the bytes of the samples it trains on); shardbench reads each rank's samples once an"
                      " epoch in the iterative order (docs/DLIO.md)", (unsigned long long) f,
                      (unsigned long long) ranks, (unsigned long long) f, (unsigned long long) ranks,
                      (unsigned long long) ranks);
        return 1;
    }
    if ((strcasecmp (wl->format, "npz") == 0 || strcasecmp (wl->format, "npy") == 0) && spf > 1 && f > 0) {
        uint64_t pairs = sb_dlio_tf_thread_files (f, spf, threads);
        if (pairs <= f)
            return 0;   /* no file is split between threads: DLIO's samples are each file's, once */
        snprintf (buf, size, "%s with %llu samples per file on %llu loader threads: a rank's %llu files make %llu"
                  " (thread, file) pairs, some files being split between threads; DLIO_local_changes' %s reader"
                  " reads a file once, whole, per thread (%llu whole-file reads a rank and epoch, as shardbench"
                  " reads them) and yields every sample of each: %llu samples for the %llu entries of the map,"
                  " split files' samples twice and, past the step limit, others never; shardbench serves each"
                  " entry of the map once (docs/DLIO.md)", wl->format, (unsigned long long) spf, (unsigned long long) threads,
                  (unsigned long long) f, (unsigned long long) pairs, wl->format, (unsigned long long) pairs,
                  (unsigned long long) (pairs * spf), (unsigned long long) (f * spf));
        return 1;
    }
    return 0;
}

int
sb_dlio_tf_stop_note (const sb_workload_t *wl, char *buf, size_t size)
{
    static const char *const streamed[] = { "npz", "npy", "jpeg", "png" };
    const char *loader = wl->data_loader[0] ? wl->data_loader : wl->framework;
    if (strcasecmp (loader, "tensorflow") != 0 || wl->odirect)
        return 0;
    int is_streamed = 0;
    for (size_t i = 0; i < sizeof streamed / sizeof streamed[0]; i++)
        is_streamed |= strcasecmp (wl->format, streamed[i]) == 0;
    /* on S3 without a storage_library DLIO takes its map-style readers, which yield whole batches */
    if (!is_streamed || ((sb_storage_caps (&wl->storage) & SB_ENGINE_OBJECTS) && !wl->storage_library[0]))
        return 0;
    snprintf (buf, size, "%s with the tensorflow loader: DLIO_local_changes' iterable %s reader yields one image"
              " per batch where its tf.data.Dataset.from_generator declares batches of %llu, so with TensorFlow"
              " DLIO stops at its first batch (a shape error in the warm-up before epoch 1, after reading its first"
              " files) and reports nothing; shardbench runs the epochs with DLIO's reads (docs/DLIO.md)",
              wl->format, wl->format, (unsigned long long) wl->batch_size);
    return 1;
}

uint64_t
sb_dlio_tf_read_size (const sb_workload_t *wl)
{
    const char *loader = wl->data_loader[0] ? wl->data_loader : wl->framework;
    if (strcasecmp (wl->format, "tfrecord") != 0 || strcasecmp (loader, "tensorflow") != 0 || wl->odirect)
        return 0;
    /* tf.data's TFRecordDataset: buffer_size None is its 256 KiB default */
    return wl->transfer_size ? wl->transfer_size : 262144;
}
