/* sampler: which sample every rank reads, and in what order, in each epoch.
 *
 * One sampler answers for every rank from a few numbers (catalog size,
 * samples per file, ranks, batch, threads, seed, shuffle settings), so the
 * coordinator sends a rank its shard as a description, never as keys: each
 * worker builds the same sampler and derives its ranks' reads itself.
 *
 * The DLIO kinds reproduce mlcommons/DLIO_local_changes (the DLIO that
 * MLPerf Storage v3.0 runs), read from its code (docs/DLIO.md names the
 * functions; tests/dlio_model.py models them with numpy's own generator and
 * tests/unit/test_sampler_oracle.py checks this sampler against it):
 * - listing (main.py initialize): rank 0 lists train/ in name order (the
 *   catalog's order; DLIO sorts each chunk of 1M names it broadcasts, so
 *   beyond 1M files its order is per chunk); rank r keeps the files at
 *   positions r, r+R, r+2R, ... and then only the first
 *   floor(min(expected, listed) / R) of them: catalog files 0 .. R*f-1 are
 *   used, the rest are unused_files;
 * - file_shuffle (config.py reconfigure/_reshard_files, run before every
 *   epoch, epoch 1 included, and cumulative): each rank shuffles its list
 *   with numpy's legacy generator (lib/base/nprandom.h) seeded seed(+epoch),
 *   deals it round-robin (rotated by its rank) to all ranks, takes what it is
 *   dealt in rank order, and shuffles that with seed + epoch + 31 * rank
 *   (epoch added whatever seed_change_epoch says);
 * - a numpy seed above 2**32-1 (seed + epoch + 31 * rank near the top of the
 *   range) makes np.random.seed raise and DLIO stop: the epoch fails here;
 * - SB_SAMPLER_DLIO_INDEX (pytorch map-style: dlio_sampler, VirtualIndexMap,
 *   read_index): position i reads sample i % spf of local file i / spf;
 *   sample_shuffle builds a permutation that read_index never applies, so
 *   the order does not depend on it (only its seed can fail); batch q is
 *   fetched by loader worker q % threads;
 * - SB_SAMPLER_DLIO_ITERATIVE (tensorflow with a FormatReader.next reader:
 *   build_sample_map_iter, tf.data interleave): the local sample list
 *   0..k-1, shuffled with seed(+epoch) when sample_shuffle is on (the same
 *   permutation on every rank); entry i reads local file (i / spf) % files,
 *   sample list[i] % spf, on thread (i / max(1, k / threads)) % threads; each
 *   thread yields full batches of its entries in order and the rank takes
 *   one batch from each thread in turn, skipping exhausted ones. (DLIO's
 *   TFRecord workloads take TFReader's own tf.data path instead, which this
 *   kind does not reproduce.)
 * - SB_SAMPLER_DLIO_FILES (pytorch iterable datasets: parquet row groups,
 *   npz/npy/jpeg/png on object storage): loader worker w takes local files
 *   w, w+threads, ...; reads every sample of each in order; yields a batch
 *   whenever one is buffered (across files); the rank takes one batch from
 *   each worker in turn, skipping exhausted ones. Each epoch's resharded list
 *   is read (DLIO's persistent workers keep epoch 1's list: a DLIO bug).
 * Every rank runs the same number of steps, floor(k / batch) (or max_steps):
 * DLIO's batches come first, in DLIO's order; the iterative and files kinds
 * then make full batches of what DLIO's threads leave (each drops its
 * partial batch, all of them when a thread has less than a batch: DLIO can
 * reach 0 steps), thread 0's rest first. What cannot fill a batch (k % batch
 * per rank) is dropped and counted.
 *
 * SB_SAMPLER_GLOBAL is shardbench's own stress pattern (shardbench.shuffle:
 * global): the epoch's S samples in one keyed permutation over all ranks,
 * rank r at positions [r*k, (r+1)*k), k = floor(S / R) (lib/dataset/shard.h). */
#ifndef SB_SAMPLER_H
#define SB_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "shard.h"

typedef enum {
    SB_SAMPLER_DLIO_INDEX,
    SB_SAMPLER_DLIO_ITERATIVE,
    SB_SAMPLER_DLIO_FILES,
    SB_SAMPLER_GLOBAL,
} sb_sampler_kind_t;

typedef struct {
    sb_sampler_kind_t kind;
    uint64_t     listed;            /* objects in the catalog (name order) */
    uint64_t     expected;          /* dataset.num_files_train; 0: every listed object */
    uint64_t     samples_per_file;  /* >= 1 */
    uint64_t     ranks;             /* >= 1 */
    uint64_t     batch_size;        /* >= 1 */
    uint64_t     threads;           /* the loader's workers per rank as DLIO runs them, >= 1 */
    uint64_t     seed;
    sb_shuffle_t sample_shuffle;
    sb_shuffle_t file_shuffle;
    int          seed_change_epoch; /* DLIO's seed_change_epoch: the epoch is added to the seed */
    uint64_t     max_steps;         /* train.total_training_steps as DLIO applies it (per epoch); 0: none */
    /* the ranks this process asks about: first_rank .. first_rank+nranks-1
     * (a worker: its own; the coordinator: all). The DLIO kinds keep, with
     * file_shuffle, every rank's list (4 bytes a used file, twice: DLIO
     * deals files between all ranks) unless `served` (then only the pages
     * put), and, for ITERATIVE with sample_shuffle, one permutation of the
     * k local samples (4 bytes each, 8 above 2**32; DLIO seeds it alike on
     * every rank, so one serves all the ranks asked about). */
    uint64_t     first_rank, nranks;
    /* with file_shuffle (DLIO kinds): the lists are planned elsewhere, once
     * for every rank (sampler_plan.h: the coordinator), and the sampler
     * keeps none; the asked ranks' lists come in pages of
     * sb_sampler_page_files local files (sb_sampler_page_*), and a read whose page is not held
     * answers 1. The epoch's figures and seed checks are the same. */
    int          served;
} sb_sampler_cfg_t;

/* Local files per page of a served list: at least SB_SAMPLER_PAGE, more
 * where a batch reads more files (DLRM: 65,536 one-sample files a step),
 * so that a step costs a page or two per rank, not sixteen round trips to
 * the coordinator; at most SB_SAMPLER_PAGE_MAX (256 KiB of 4-byte indices).
 * sb_sampler_page_files: the page of a configuration, the same on the
 * coordinator and the workers (it depends only on the batch and the
 * samples per file): the smallest power of two of at least two batches'
 * files, within those bounds. */
#define SB_SAMPLER_PAGE 4096
#define SB_SAMPLER_PAGE_MAX 65536
uint64_t sb_sampler_page_files (const sb_sampler_cfg_t *cfg);

/* What an epoch gives every rank (the same for all ranks). */
typedef struct {
    uint64_t epoch;
    uint64_t files_per_rank;    /* local files of each rank */
    uint64_t steps;             /* batches every rank computes */
    uint64_t samples_per_rank;  /* steps * batch_size: the positions a rank reads */
    uint64_t dropped;           /* samples of the used files no rank reads this epoch, all ranks */
    uint64_t unused_files;      /* listed files no rank owns (the round-robin trim, extra files) */
} sb_sampler_epoch_t;

/* One read: the catalog index of its object, the sample within the object,
 * and the loader thread (0..threads-1) that reads it. */
typedef struct {
    uint64_t file;
    uint64_t sample;
    uint64_t thread;
} sb_sample_ref_t;

typedef struct sb_sampler sb_sampler_t;

/* A sampler for cfg (copied). NULL with err set on a bad configuration or
 * out of memory. */
sb_sampler_t *sb_sampler_new (const sb_sampler_cfg_t *cfg, char *err, size_t err_size);

/* Accepts NULL; nulls the pointer. */
void sb_sampler_destroy (sb_sampler_t **self_p);

/* Prepare epoch `epoch` (1-based). Epochs must be prepared in order, each
 * once (file_shuffle deals files again from the last epoch's lists). Returns
 * 0, or -1 with err set when a rank would not get one full batch. */
int sb_sampler_epoch (sb_sampler_t *self, uint64_t epoch, char *err, size_t err_size);

/* The prepared epoch's figures (valid after sb_sampler_epoch succeeded). */
const sb_sampler_epoch_t *sb_sampler_info (const sb_sampler_t *self);

/* The read at position `position` (0 .. samples_per_rank-1) of rank `rank`
 * (one of cfg's ranks), in the order the rank consumes its batches:
 * positions [q*batch, (q+1)*batch) are step q's batch. Returns 0, or -1 for
 * a rank or position outside the epoch; 1 (served lists) when the page of
 * its file is not held. */
int sb_sampler_at (const sb_sampler_t *self, uint64_t rank, uint64_t position, sb_sample_ref_t *out);

/* Served lists (cfg.served with file_shuffle; else every call answers -1
 * or 0). Pages are per asked rank; an epoch (sb_sampler_epoch) drops them.
 * sb_sampler_served: 1 when this sampler's lists are served (NULL: 0).
 * sb_sampler_page_of: the page position `position` of rank needs (no
 * lookup), and (run, may be NULL) how many positions from it on need that
 * page too, at least 1: a walk over the epoch steps a file or a page at a
 * time, not a sample at a time (a DLRM file holds millions of samples, a
 * DLRM step reads 65,536 files): 0, or -1 outside the epoch.
 * sb_sampler_page_size: sb_sampler_page_files of the sampler's cfg.
 * sb_sampler_page_state: 0 absent, 1 asked, 2 held.
 * sb_sampler_page_ask: note a page asked for, needed up to position
 * `last`: 0, or -1 (asked already, out of memory).
 * sb_sampler_page_touch: it is needed up to `last` too.
 * sb_sampler_page_put: the files of an asked page, count exactly
 * min(SB_SAMPLER_PAGE, files_per_rank - page * SB_SAMPLER_PAGE), each a
 * catalog index below listed: 0, or -1 with err set.
 * sb_sampler_page_release: drop the held pages of rank last needed below
 * `position` (the rank never reads below it again).
 * sb_sampler_page_held: pages held or asked, all ranks (*bytes: of files). */
int sb_sampler_served (const sb_sampler_t *self);
int sb_sampler_page_of (const sb_sampler_t *self, uint64_t rank, uint64_t position, uint64_t *page, uint64_t *run);
int sb_sampler_page_state (const sb_sampler_t *self, uint64_t rank, uint64_t page);
uint64_t sb_sampler_page_size (const sb_sampler_t *self);
int sb_sampler_page_ask (sb_sampler_t *self, uint64_t rank, uint64_t page, uint64_t last);
void sb_sampler_page_touch (sb_sampler_t *self, uint64_t rank, uint64_t page, uint64_t last);
int sb_sampler_page_put (sb_sampler_t *self, uint64_t rank, uint64_t page, const uint64_t *files, size_t count,
                         char *err, size_t err_size);
void sb_sampler_page_release (sb_sampler_t *self, uint64_t rank, uint64_t position);
uint64_t sb_sampler_page_held (const sb_sampler_t *self, uint64_t *bytes);

/* Name of a kind ("dlio_index", "dlio_iterative", "dlio_files", "global"),
 * and the kind of a name: 0, or -1 when unknown. */
const char *sb_sampler_kind_name (sb_sampler_kind_t kind);
int sb_sampler_kind_parse (const char *name, sb_sampler_kind_t *kind);

#endif
