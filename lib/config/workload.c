/* workload: one table of every key, its type, default and bounds. */
#include "workload.h"
#include "dataset.h"
#include "format.h"
#include "datafolder.h"
#include "log.h"
#include "proto.h"
#include "storage_keys.h"
#include "engine.h"
#include "ckpt_target.h"
#include "nprandom.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* T_U64R: a non-negative number rounded to an integer (MLPerf writes
 * record_length_bytes: 114660.07); T_DIST: a parameter of the mapping form of
 * train.computation_time (s_compute); T_ALIAS: another spelling of the key
 * named in `fallback`, read when that key is absent (s_aliases). */
typedef enum { T_U64, T_U64R, T_F64, T_STR, T_BOOL, T_SHUFFLE, T_SYNC, T_STORAGE, T_LB, T_LIST, T_DIST, T_ALIAS,
               T_IGNORED, T_I64, T_COUNT, T_CUSTOM, T_NA } s_type_t;
/* T_I64: a signed integer (int64_t field); T_COUNT: a count where a negative
 * number means none, as DLIO's -1 (uint64_t field, 0) */
/* T_CUSTOM: read by a function below (storage, credentials, train.computation_time_stdev);
 * T_NA: a DLIO key accepted without effect, `doc` saying why (sb_workload_log_not_applicable). */

typedef struct {
    const char *key;
    s_type_t    type;
    size_t      offset;     /* in sb_workload_t */
    size_t      size;       /* for T_STR: buffer size */
    const char *fallback;   /* default value text */
    double      min, max;   /* bounds for numbers */
    const char *doc;
} s_key_t;

#define OFF(f) offsetof (sb_workload_t, f)
#define STRF(f) OFF (f), sizeof (((sb_workload_t *) 0)->f)
#define BIG 1.8e19

_Static_assert (SB_WORKLOAD_COLUMNS_MAX == SB_PROTO_MAX_STR + 1, "WELCOME carries dataset.parquet.columns whole");
_Static_assert (sizeof ((sb_datafolder_marker_t *) 0)->parquet_columns == SB_WORKLOAD_COLUMNS_MAX,
                "a dataset marker holds dataset.parquet.columns whole");

static const s_key_t s_keys[] = {
    { "model.name", T_STR, STRF (model_name), "custom", 0, 0, "model name shown in reports (`model: NAME` too)" },
    { "framework", T_STR, STRF (framework), "pytorch", 0, 0, "DLIO framework (recorded only)" },
    { "dataset.data_folder", T_STR, STRF (data_folder), "./shardbench-data", 0, 0, "folder holding train/" },
    { "dataset.format", T_STR, STRF (format), "npz", 0, 0, "file extension of the objects" },
    { "dataset.file_prefix", T_STR, STRF (file_prefix), "img", 0, 0, "object name prefix" },
    { "dataset.num_files_train", T_U64, OFF (num_files_train), 0, "64", 1, BIG, "objects in the training set" },
    { "dataset.num_samples_per_file", T_U64, OFF (num_samples_per_file), 0, "1", 1, 1e9, "samples in one object" },
    { "dataset.record_length_bytes", T_U64R, OFF (record_length_bytes), 0, "65536", 1, 1e12, "bytes per sample" },
    { "dataset.record_length_bytes_stdev", T_U64R, OFF (record_length_bytes_stdev), 0, "0", 0, 1e12, "stdev of bytes per sample" },
    { "dataset.record_length", T_CUSTOM, 0, 0, "", 0, 0, "not read by DLIO_local_changes (record_length_bytes is): accepted with a warning, not used" },
    { "dataset.record_length_stdev", T_CUSTOM, 0, 0, "", 0, 0, "not read by DLIO_local_changes (record_length_bytes_stdev is): accepted with a warning, not used" },
    { "dataset.parquet.row_group_size", T_U64, OFF (parquet_row_group), 0, "0", 0, 1e9, "rows per parquet row group (0: 1 MiB of records)" },
    { "dataset.compression", T_STR, STRF (compression), "none", 0, 0, "parquet page codec: none | snappy | gzip | zstd (DLIO's key; other formats: recorded only)" },
    { "dataset.num_subfolders_train", T_U64, OFF (num_subfolders_train), 0, "0", 0, 1e7, "subfolders of train/ (DLIO rule)" },
    { "dataset.skip_listing", T_BOOL, OFF (skip_listing), 0, "false", 0, 0, "no listing: DLIO names for num_files_train" },
    { "dataset.listing_validation_interval", T_U64, OFF (listing_validation_interval), 0, "1000", 1, 1e12, "skip_listing: check every k-th object exists" },
    { "reader.batch_size", T_U64, OFF (batch_size), 0, "1", 1, 1e9, "samples per step per rank" },
    { "reader.read_threads", T_U64, OFF (read_threads), 0, "1", 0, 1024, "loader (and file read) threads per rank; 1 is raised as DLIO does, to min(cores / local ranks, 8)" },
    { "reader.prefetch_size", T_U64, OFF (prefetch_size), 0, "2", 0, 1e6, "batches read ahead per rank" },
    { "reader.sample_shuffle", T_SHUFFLE, OFF (sample_shuffle), 0, "off", 0, 0, "\"off\" | seed | random (an unquoted off is a boolean, which DLIO refuses)" },
    { "reader.file_shuffle", T_SHUFFLE, OFF (file_shuffle), 0, "off", 0, 0, "seed | random; any value given shuffles, off too, as DLIO reads it: leave the key out for none" },
    { "reader.data_loader", T_STR, STRF (data_loader), "", 0, 0, "pytorch | tensorflow | dali ... (default: the framework's); picks DLIO's sampler" },
    { "reader.data_loader_sampler", T_STR, STRF (data_loader_sampler), "", 0, 0, "index | iterative (default: DLIO's for the data loader)" },
    { "reader.odirect", T_BOOL, OFF (odirect), 0, "false", 0, 0, "read files with O_DIRECT (aligned buffers)" },
    { "reader.verify", T_BOOL, OFF (verify), 0, "false", 0, 0, "check every byte read against the generator" },
    { "train.epochs", T_U64, OFF (epochs), 0, "1", 1, 1e9, "epochs to train" },
    { "train.computation_time", T_F64, OFF (computation_time), 0, "0", 0, 3600, "emulated compute seconds per batch" },
    { "train.computation_time.type", T_DIST, 0, 0, "", 0, 0, "or a distribution: normal | uniform | gamma | exponential | poisson" },
    { "train.computation_time.mean", T_DIST, 0, 0, "", 0, 3600, "normal (or no type): mean, s" },
    { "train.computation_time.stdev", T_DIST, 0, 0, "", 0, 3600, "normal (or no type): standard deviation, s" },
    { "train.computation_time.min", T_DIST, 0, 0, "", 0, 3600, "uniform: lower bound, s" },
    { "train.computation_time.max", T_DIST, 0, 0, "", 0, 3600, "uniform: upper bound, s" },
    { "train.computation_time.shape", T_DIST, 0, 0, "", 0, 1e6, "gamma: shape k" },
    { "train.computation_time.scale", T_DIST, 0, 0, "", 0, 3600, "gamma: scale theta, s; exponential: mean, s" },
    { "train.computation_time.lam", T_DIST, 0, 0, "", 0, 3600, "poisson: lambda (mean), s" },
    { "train.seed", T_U64, OFF (seed), 0, "123", 0, BIG, "seed of shuffles, sizes and content" },
    { "train.seed_change_epoch", T_BOOL, OFF (seed_change_epoch), 0, "true", 0, 0, "shuffles seeded seed + epoch (false: seed)" },
    { "train.total_training_steps", T_F64, OFF (total_training_steps), 0, "-1", -1, 1e18, "steps per epoch at most, as DLIO applies it (-1: none)" },
    { "output.metric.exclude_start_steps", T_U64, OFF (exclude_start_steps), 0, "1", 0, 1e9, "steps left out of AU and throughput at an epoch's start" },
    { "output.metric.exclude_end_steps", T_U64, OFF (exclude_end_steps), 0, "0", 0, 1e9, "steps left out at an epoch's end" },
    { "train.sync", T_SYNC, OFF (sync), 0, "step", 0, 0, "barrier: step | epoch" },
    { "metric.au", T_F64, OFF (au), 0, "0.90", 0, 1, "accelerator-utilisation threshold to pass" },
    { "storage.storage_type", T_STORAGE, STRF (storage.engine), "local_fs", 0, 0, "local_fs | s3 | synthetic" },
    { "storage.storage_root", T_STR, STRF (storage.store), "", 0, 0, "an object store's top-level name and prefix, STORE[/PREFIX] (or SCHEME://STORE[/PREFIX])" },
    { "storage.storage_options.endpoint_url", T_STR, OFF (storage.endpoints[0]), 256, "", 0, 0, "one S3 endpoint, http(s)://HOST:PORT" },
    { "storage.storage_options.endpoint_urls", T_LIST, OFF (storage.endpoints), 256, "", 0, 0, "several endpoints: [URL, URL, ...]" },
    { "storage.storage_options.load_balance", T_LB, OFF (storage.lb), 0, "round_robin", 0, 0, "round_robin | least_connections" },
    { "storage.storage_options.max_in_flight", T_U64, OFF (storage.max_in_flight), 0, "16", 1, 4096, "concurrent requests per rank" },
    { "storage.storage_options.connect_timeout_s", T_F64, OFF (storage.connect_timeout_s), 0, "5", 0.01, 600, "TCP connect timeout" },
    { "storage.storage_options.request_timeout_s", T_F64, OFF (storage.request_timeout_s), 0, "60", 0.01, 86400, "whole-request timeout" },
    { "storage.storage_options.max_retries", T_U64, OFF (storage.max_retries), 0, "5", 0, 100, "retries of a transient failure" },
    { "storage.storage_options.list_parallelism", T_U64, OFF (storage.list_parallelism), 0, "4", 1, 64, "concurrent listing streams over key ranges" },
    { "storage.storage_options.columns", T_LIST, 0, 0, "", 0, 0, "parquet columns read, [name, ...] (DLIO's key; default all)" },
    { "shardbench.accelerators", T_U64, OFF (accelerators), 0, "0", 0, 1e6, "ranks when --accelerators is absent (0: 1)" },
    { "shardbench.heartbeat_interval_s", T_F64, OFF (heartbeat_interval_s), 0, "1", 0.05, 60, "heartbeat period" },
    { "shardbench.heartbeat_timeout_s", T_F64, OFF (heartbeat_timeout_s), 0, "10", 0.2, 3600, "silence that counts as lost" },
    { "shardbench.barrier_fanout", T_U64, OFF (barrier_fanout), 0, "16", 2, 65536, "step barrier: with more workers than this, STEPs meet in a tree of relay workers, this many children each" },
    { "shardbench.stall_timeout_s", T_F64, OFF (stall_timeout_s), 0, "120", 0, 86400, "a file read without progress this long fails the run (0: never)" },
    { "shardbench.keys_page", T_U64, OFF (keys_page), 0, "256", 1, 65536, "keys per page sent to a rank" },
    { "shardbench.io_buffer_bytes", T_U64, OFF (io_buffer_bytes), 0, "1048576", 4096, 1073741824, "read buffer per I/O thread" },
    { "shardbench.sampler", T_STR, STRF (sampler), "dlio", 0, 0, "dlio: DLIO's per-rank files and order | global: one shuffle over all samples and ranks" },
    { "shardbench.drop_page_cache", T_BOOL, OFF (drop_page_cache), 0, "true", 0, 0, "evict the epoch's files from the page cache before it (posix_fadvise)" },
    { "shardbench.trace", T_STR, STRF (trace), "", 0, 0, "folder for per-read trace files, one per worker (\"\": none)" },
    { "shardbench.lenient", T_BOOL, OFF (lenient), 0, "false", 0, 0, "run a file DLIO_local_changes refuses (storage_type s3dlio or object, sample_shuffle given as a boolean, a data_loader_classname without data_loader_sampler, s3 with pytorch and no storage_library) with a warning naming the refusal, rather than exit 2" },
    { "shardbench.remote_worker", T_STR, STRF (remote_worker), "", 0, 0, "worker binary on --hosts hosts (default $SHARDBENCH_REMOTE_WORKER, else shardbench-worker on PATH)" },
    /* model and checkpoint: `shardbench checkpoint` (coordinator/session/ckpt_plan.c) */
    { "model.num_layers", T_U64, OFF (ckpt.num_layers), 0, "0", 0, 1e6, "transformer layers (checkpoint sizes)" },
    { "model.model_datatype", T_STR, STRF (ckpt.model_datatype), "fp16", 0, 0, "model state type: fp16 | bf16 | fp32 | fp64 | int8 | uint8" },
    { "model.optimizer_datatype", T_STR, STRF (ckpt.optimizer_datatype), "fp32", 0, 0, "optimizer state type" },
    { "model.parallelism.tensor", T_U64, OFF (ckpt.tensor), 0, "1", 1, 1e6, "tensor parallelism" },
    { "model.parallelism.pipeline", T_U64, OFF (ckpt.pipeline), 0, "1", 1, 1e6, "pipeline parallelism" },
    { "model.parallelism.data", T_U64, OFF (ckpt.data), 0, "0", 0, 1e6, "data parallelism of the full run (subset mode)" },
    { "model.parallelism.zero_stage", T_U64, OFF (ckpt.zero_stage), 0, "0", 0, 3, "ZeRO stage 0..3" },
    { "model.transformer.vocab_size", T_U64, OFF (ckpt.vocab_size), 0, "32000", 1, 1e9, "vocabulary" },
    { "model.transformer.hidden_size", T_U64, OFF (ckpt.hidden_size), 0, "4096", 1, 1e9, "hidden dimension" },
    { "model.transformer.ffn_hidden_size", T_U64, OFF (ckpt.ffn_hidden_size), 0, "11008", 1, 1e9, "FFN dimension" },
    { "model.transformer.num_attention_heads", T_U64, OFF (ckpt.num_attention_heads), 0, "32", 1, 1e6, "attention heads" },
    { "model.transformer.num_kv_heads", T_U64, OFF (ckpt.num_kv_heads), 0, "32", 1, 1e6, "key/value heads (GQA)" },
    { "checkpoint.checkpoint_folder", T_STR, STRF (ckpt.folder), "./checkpoints", 0, 0, "where checkpoints go (s3: key prefix)" },
    { "checkpoint.num_checkpoints_write", T_COUNT, OFF (ckpt.num_write), 0, "1", 0, 1e6, "checkpoints to write" },
    { "checkpoint.num_checkpoints_read", T_COUNT, OFF (ckpt.num_read), 0, "1", 0, 1e6, "checkpoints to read back" },
    { "checkpoint.fsync", T_BOOL, OFF (ckpt.fsync), 0, "true", 0, 0, "fsync every checkpoint file" },
    { "checkpoint.mode", T_STR, STRF (ckpt.mode), "default", 0, 0, "default | subset (only some ranks of the full run)" },
    { "checkpoint.time_between_checkpoints", T_F64, OFF (ckpt.time_between), 0, "0", 0, 86400, "emulated training between checkpoints, s" },
    { "checkpoint.scale", T_F64, OFF (ckpt.scale), 0, "1", 1e-12, 1, "scale every checkpoint size (small runs)" },
    { "model.model_size", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "reader.shuffle_size", T_NA, 0, 0, 0, 0, 0, "TensorFlow/DALI shuffle buffer: reorders samples in memory, reads the same bytes" },
    /* DLIO keys accepted and recorded, not acted on by this version. */
    { "workflow.profiling", T_NA, 0, 0, 0, 0, 0, "DLIO's profiler (iostat, darshan, dftracer): shardbench records its own per-read traces (shardbench.trace)" },
    { "dataset.keep_files", T_NA, 0, 0, 0, 0, 0, "DLIO deletes the dataset after the run when false: shardbench keeps it (datagen --clean removes it)" },
    { "dataset.record_length_bytes_resize", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "reader.read_type", T_NA, 0, 0, 0, 0, 0, "on_demand | memory: DLIO keeps files open between samples or not; the bytes read are the same" },
    { "reader.computation_threads", T_NA, 0, 0, 0, 0, 0, "TensorFlow map() threads of the preprocessing, which shardbench does not emulate" },
    { "reader.transfer_size", T_U64, OFF (transfer_size), 0, "0", 0, 1073741824, "tfrecord with the tensorflow loader: the size of each read of a file, as TFRecordDataset's buffer_size (0: TensorFlow's default, 262144)" },
    { "reader.dont_use_mmap", T_NA, 0, 0, 0, 0, 0, "DALI readers' memory mapping: shardbench never maps files" },
    { "model.type", T_STR, STRF (ckpt.model_type), "", 0, 0, "model kind: any but transformer checkpoints model.model_size_bytes" },
    { "model.model_size_bytes", T_U64, OFF (ckpt.model_size), 0, "10240", 0, 1e15, "checkpoint model state of a model that is not a transformer (DLIO's default)" },
    { "checkpoint.steps_between_checkpoints", T_I64, OFF (ckpt.steps_between), 0, "-1", -1e15, 1e15, "training: a checkpoint every N steps of each epoch (0: none; -1: by epoch)" },
    { "checkpoint.checkpoint_after_epoch", T_I64, OFF (ckpt.after_epoch), 0, "1", -1e15, 1e15, "training: first epoch that ends with a checkpoint" },
    { "checkpoint.epochs_between_checkpoints", T_I64, OFF (ckpt.epochs_between), 0, "1", -1e15, 1e15, "training: epochs from one checkpoint to the next" },
    { "checkpoint.type", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "checkpoint.randomize_tensor", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "checkpoint.rank_sync", T_BOOL, OFF (ckpt.rank_sync), 0, "false", 0, 0, "DLIO's rank 0 times each checkpoint of the checkpoint workflow until every rank is done (its save/load_checkpoint_* figures)" },
    { "model.layer_parameters", T_LIST, 0, 0, "", 0, 0, "DLIO's predefined layer tensor sizes, [elements, ...], one byte each, split over tensor parallelism (in place of model.transformer)" },
    { "model.optimization_groups", T_LIST, 0, 0, "", 0, 0, "DLIO's predefined optimizer groups, [elements, ...]: each rank writes 3 x their sum in bytes" },
    { "checkpoint.checkpoint_mechanism_classname", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "checkpoint.model_size", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    /* another engine of the local file system (lib/storage/storage_keys.c) */
    { "storage.engine", T_CUSTOM, 0, 0, "", 0, 0, "file | direct | uring: the engine that reads a local data folder (default: file, direct with reader.odirect)" },
    { "storage.storage_library", T_CUSTOM, 0, 0, "", 0, 0, "s3dlio | s3torchconnector | minio: DLIO's S3 client; shardbench's S3 engine does the I/O, the library is recorded" },
    { "storage.storage_options.storage_library", T_CUSTOM, 0, 0, "", 0, 0, "the same (DLIO's command-line spelling)" },
    { "storage.protocol", T_CUSTOM, 0, 0, "", 0, 0, "with storage_type object: s3 | file | direct" },
    { "storage.endpoint_uris", T_CUSTOM, 0, 0, "", 0, 0, "several S3 endpoints (s3dlio's multi-endpoint list)" },
    { "storage.load_balance_strategy", T_CUSTOM, 0, 0, "", 0, 0, "with endpoint_uris: round_robin | least_connections" },
    { "storage.use_mpi_endpoint_distribution", T_CUSTOM, 0, 0, "false", 0, 0, "with endpoint_uris: rank r uses endpoint r mod N (DLIO's S3_ENDPOINT_URIS)" },
    { "storage.storage_options.s3_max_attempts", T_CUSTOM, 0, 0, "", 0, 0, "attempts of a request (max_retries + 1)" },
    { "storage.storage_options.secure", T_NA, 0, 0, 0, 0, 0, "minio's TLS switch, which DLIO's adapter overrides by endpoint_url's scheme (none: http)" },
    { "storage.storage_options.access_key_id", T_CUSTOM, 0, 0, "", 0, 0, "S3 credentials: used by the coordinator and its local workers, never stored or sent" },
    { "storage.storage_options.secret_access_key", T_CUSTOM, 0, 0, "", 0, 0, "the secret of access_key_id (redacted in the stored configuration)" },
    { "storage.storage_options.session_token", T_CUSTOM, 0, 0, "", 0, 0, "temporary credentials' token" },
    { "train.computation_time_stdev", T_CUSTOM, 0, 0, "", 0, 3600, "older DLIO spelling of train.computation_time.stdev (normal)" },
    { "reader.preprocess_time", T_F64, OFF (preprocess_time), 0, "0", 0, 3600, "seconds a loader thread spends on each sample after its bytes arrive (DLIO's preprocess sleep); or a mapping as train.computation_time" },
    { "reader.preprocess_time_stdev", T_CUSTOM, 0, 0, "", 0, 3600, "its standard deviation (normal around reader.preprocess_time), s" },
    { "reader.file_access", T_CUSTOM, 0, 0, "multi", 0, 0, "multi (one file per set of samples, DLIO's default); shared, collective, mpio, posix are refused" },
    { "reader.pin_memory", T_NA, 0, 0, 0, 0, 0, "PyTorch copies batches into pinned memory for a GPU: no GPU here" },
    { "reader.multiprocessing_context", T_NA, 0, 0, 0, 0, 0, "how PyTorch starts loader processes (fork, spawn): shardbench's loaders are threads" },
    { "reader.data_loader_classname", T_NA, 0, 0, 0, 0, 0, "a DLIO plugin loader class: shardbench emulates reader.data_loader's loader" },
    { "reader.reader_classname", T_NA, 0, 0, 0, 0, 0, "a DLIO plugin reader class: shardbench reads dataset.format itself" },
    { "reader.shuffle", T_NA, 0, 0, 0, 0, 0, "DLIO reads no reader.shuffle: file_shuffle and sample_shuffle decide" },
    { "reader.seed", T_NA, 0, 0, 0, 0, 0, "DLIO reads no reader.seed: train.seed seeds the shuffles" },
    { "workflow.debug", T_NA, 0, 0, 0, 0, 0, "DLIO's debug logging: use -v" },
    { "profiling.profiler", T_NA, 0, 0, 0, 0, 0, "DLIO's profiler: shardbench records its own per-read traces (shardbench.trace)" },
    { "profiling.iostat_devices", T_NA, 0, 0, 0, 0, 0, "devices of DLIO's iostat profiler" },
    { "logging.verbosity", T_NA, 0, 0, 0, 0, 0, "DLIO reads no logging section (Hydra's logging): use -v" },
    { "generator.num_workers", T_NA, 0, 0, 0, 0, 0, "DLIO reads no generator section: datagen uses every rank's threads" },
    { "generator.buffer_size", T_NA, 0, 0, 0, 0, 0, "DLIO reads no generator section" },
    { "dataset.parquet.generation_batch_size", T_NA, 0, 0, 0, 0, 0, "rows DLIO's generator holds in memory at once: the file is the same" },
    { "dataset.parquet.use_s3dlio_gen", T_NA, 0, 0, 0, 0, 0, "DLIO generates through s3dlio's generator: the file is the same" },
    { "dataset.parquet.read_mode", T_NA, 0, 0, 0, 0, 0, "DLIO reads no dataset.parquet.read_mode: storage.storage_options.columns chooses the columns read" },
    { "storage.storage_options.prefetch_workers", T_U64, OFF (storage.prefetch_workers), 0, "0", 0, 4096, "DLIO's row-group read threads per loader worker of its parquet readers (TorchIterableDataset): 0 is DLIO's 64; with prefetch_window it sets the row-group reads in flight per loader thread, min(prefetch_workers, prefetch_window + 1) (docs/DLIO.md, \"Reads in flight\")" },
    { "storage.storage_options.prefetch_window", T_U64, OFF (storage.prefetch_window), 0, "0", 0, 65536, "the depth of DLIO's iterable readers per loader worker, 0 for DLIO's default: parquet row groups submitted ahead (64), s3dlio GETs in flight (64), the chunk of objects minio fetches 16 at a time (256), the chunk of files direct_fs's readers read 64 at a time (256); sets the reads in flight per loader thread (docs/DLIO.md, \"Reads in flight\")" },
    { "storage.storage_options.stagger_workers", T_BOOL, OFF (storage.stagger_workers), 0, "true", 0, 0, "DLIO's chunked readers (npz, npy, jpeg, png with the pytorch loader: S3 with storage_library minio or s3torchconnector, and direct_fs) hold loader worker k's first fetch of each epoch back by k x train.computation_time (its mean); false: they start together (docs/DLIO.md, \"Reads in flight\")" },
    { "storage.storage_options.uri_scheme", T_CUSTOM, 0, 0, "", 0, 0, "the URI scheme DLIO gives s3dlio (s3, file, direct): must agree with the storage (another store, or local URIs for S3, is refused); direct on local files without reader.odirect is warned about" },
    { "storage.storage_options.simulate_io", T_NA, 0, 0, 0, 0, 0, "DLIO's dry run of its iterable datasets (batches with no I/O); shardbench reads the storage: storage.storage_type synthetic runs without I/O" },
    { "storage.storage_options.max_outstanding", T_U64, OFF (storage.max_outstanding), 0, "0", 0, 1048576, "DLIO's s3dlio parquet reader (storage_library s3dlio, pytorch): the most GETs in flight per loader worker, 0 for DLIO's 1024; its window is min(prefetch_workers or prefetch, max_outstanding) (docs/DLIO.md, \"Reads in flight\"; DLIO also caps it at half the free memory, not reproduced)" },
    { "storage.storage_options.prefetch", T_U64, OFF (storage.prefetch), 0, "0", 0, 4096, "DLIO's s3dlio parquet reader: its GETs in flight per loader worker when prefetch_workers is not given, 0 for DLIO's 32" },
    { "storage.storage_options.footer_cap", T_U64, OFF (storage.footer_cap), 0, "0", 0, 1099511627776.0, "DLIO's s3dlio parquet reader (storage_library s3dlio, pytorch): the bytes it reads from each file's end for its footer, 0 for DLIO's 4 MiB (docs/DLIO.md, \"Reads in flight\")" },
    { "storage.storage_options.footer_batch_size", T_U64, OFF (storage.footer_batch_size), 0, "0", 0, 65536, "DLIO's s3dlio parquet reader: footers a loader worker reads at once, a batch after the last, 0 for DLIO's 16" },
    { "storage.storage_options.coalesce_rgs", T_U64, OFF (storage.coalesce_rgs), 0, "0", 0, 1048576, "DLIO's s3dlio parquet reader (storage_library s3dlio, pytorch): consecutive row groups one GET reads, 0 for DLIO's 8 (docs/DLIO.md, \"Reads in flight\")" },
    { "storage.storage_options.decode", T_NA, 0, 0, 0, 0, 0, "DLIO's s3dlio parquet reader: raw (default, no decoding) or arrow (decoded by s3dlio); shardbench decodes nothing, as raw" },
    { "storage.storage_options.decode_output", T_NA, 0, 0, 0, 0, 0, "what DLIO's s3dlio arrow decoder returns (none, pyarrow, torch); shardbench decodes nothing" },
    { "storage.storage_options.sim_log_secs", T_NA, 0, 0, 0, 0, 0, "seconds of read plan DLIO's s3dlio parquet reader logs with simulate_io (60)" },
    { "storage.storage_options.use_full_object_uri", T_NA, 0, 0, 0, 0, 0, "DLIO's object store adapter hands the library full URIs rather than keys: the same objects are read" },
    { "reader.storage_type", T_CUSTOM, 0, 0, "", 0, 0, "taken as storage.storage_type when storage: lacks it (DLIO reads no storage key under reader:)" },
    { "reader.protocol", T_CUSTOM, 0, 0, "", 0, 0, "taken as storage.protocol (see reader.storage_type)" },
    { "reader.storage_library", T_CUSTOM, 0, 0, "", 0, 0, "taken as storage.storage_library (see reader.storage_type)" },
    { "reader.storage_root", T_CUSTOM, 0, 0, "", 0, 0, "taken as storage.storage_root (see reader.storage_type)" },
    { "reader.data_loader_root", T_CUSTOM, 0, 0, "", 0, 0, "an object store URI: the data folder (file://: recorded, dataset.data_folder decides)" },
    { "reader.endpoint_uris", T_CUSTOM, 0, 0, "", 0, 0, "taken as storage.endpoint_uris (see reader.storage_type)" },
    { "reader.load_balance_strategy", T_CUSTOM, 0, 0, "", 0, 0, "taken as storage.load_balance_strategy (see reader.storage_type)" },
    { "reader.checkpoint_folder", T_NA, 0, 0, 0, 0, 0, "DLIO reads no reader.checkpoint_folder: checkpoint.checkpoint_folder" },
    { "dataset.record_element_type", T_STR, STRF (record_element_type), "uint8", 0, 0, "numpy type of a record's elements (DLIO): npy, npz, hdf5, tfrecord records are its itemsize x their elements" },
    { "dataset.record_dims", T_LIST, 0, 0, "", 0, 0, "shape of a record, [d1, d2, ...] (DLIO): record_length_bytes becomes their product x the element size" },
    { "dataset.record_element_bytes", T_IGNORED, 0, 0, 0, 0, 0, "DLIO recomputes it from dataset.record_element_type" },
    { "workflow.generate_data", T_BOOL, OFF (generate_data), 0, "false", 0, 0, "a run generates the dataset first, as `shardbench datagen` (DLIO's default: false)" },
    { "workflow.train", T_BOOL, OFF (do_train), 0, "true", 0, 0, "a run trains (false: datagen only, or the checkpoint workflow with workflow.checkpoint)" },
    { "workflow.evaluation", T_BOOL, OFF (do_eval), 0, "false", 0, 0, "evaluate on valid/ after epochs (evaluation.eval_after_epoch, epochs_between_evals)" },
    { "workflow.checkpoint", T_BOOL, OFF (do_checkpoint), 0, "false", 0, 0, "checkpoints: during training, or with train false the checkpoint workflow" },
    { "dataset.num_files_eval", T_U64, OFF (num_files_eval), 0, "0", 0, BIG, "objects in the evaluation set (valid/); datagen writes them" },
    { "dataset.num_subfolders_eval", T_U64, OFF (num_subfolders_eval), 0, "0", 0, 1e7, "subfolders of valid/ (DLIO rule)" },
    { "reader.batch_size_eval", T_U64, OFF (batch_size_eval), 0, "1", 1, 1e9, "samples per evaluation step per rank" },
    { "evaluation.eval_time", T_F64, OFF (eval_time), 0, "0", 0, 3600, "emulated compute seconds per evaluation step (mean)" },
    { "evaluation.eval_time_stdev", T_F64, OFF (eval_time_stdev), 0, "0", 0, 3600, "its standard deviation (normal), s" },
    { "evaluation.eval_time.mean", T_ALIAS, 0, 0, "evaluation.eval_time", 0, 0, "mapping form of evaluation.eval_time" },
    { "evaluation.eval_time.stdev", T_ALIAS, 0, 0, "evaluation.eval_time_stdev", 0, 0, "mapping form of evaluation.eval_time_stdev" },
    { "evaluation.eval_after_epoch", T_U64, OFF (eval_after_epoch), 0, "1", 0, 1e9, "first epoch after which evaluation runs (0 acts as 1: epochs count from 1)" },
    { "evaluation.epochs_between_evals", T_U64, OFF (epochs_between_evals), 0, "1", 0, 1e9, "epochs from one evaluation to the next (0: every epoch, as DLIO's next_eval_epoch += 0)" },
    { "dataset.record_length_resize", T_CUSTOM, 0, 0, "", 0, 0, "not read by DLIO_local_changes (record_length_bytes_resize is): accepted with a warning, not used" },
    { "reader.use_mpi_endpoint_distribution", T_CUSTOM, 0, 0, "", 0, 0, "taken as storage.use_mpi_endpoint_distribution (see reader.storage_type)" },
    /* the mapping form of reader.preprocess_time (s_dist_keys) */
    { "reader.preprocess_time.type", T_DIST, 0, 0, "", 0, 0, "or a distribution: normal | uniform | gamma | exponential | poisson" },
    { "reader.preprocess_time.mean", T_DIST, 0, 0, "", 0, 3600, "normal (or no type): mean, s" },
    { "reader.preprocess_time.stdev", T_DIST, 0, 0, "", 0, 3600, "normal (or no type): standard deviation, s" },
    { "reader.preprocess_time.min", T_DIST, 0, 0, "", 0, 3600, "uniform: lower bound, s" },
    { "reader.preprocess_time.max", T_DIST, 0, 0, "", 0, 3600, "uniform: upper bound, s" },
    { "reader.preprocess_time.shape", T_DIST, 0, 0, "", 0, 1e6, "gamma: shape k" },
    { "reader.preprocess_time.scale", T_DIST, 0, 0, "", 0, 3600, "gamma: scale theta, s; exponential: mean, s" },
    { "reader.preprocess_time.lam", T_DIST, 0, 0, "", 0, 3600, "poisson: lambda (mean), s" },
};

#define S_NKEYS (sizeof s_keys / sizeof s_keys[0])

static int
s_parse (const s_key_t *k, const sb_config_entry_t *e, const char *text, sb_workload_t *wl,
         char *err, size_t err_size)
{
    char where[1200];
    sb_config_where (e, where, sizeof where);
    void *at = (char *) wl + k->offset;
    if (e && e->items && k->type != T_LIST) {
        snprintf (err, err_size, "%s: key '%s': expected a single value, got a list", where, k->key);
        return -1;
    }
    switch (k->type) {
    case T_U64: {
        char *end = NULL;
        errno = 0;
        if (*text == '-' || *text == '\0')
            goto bad_u64;
        unsigned long long v = strtoull (text, &end, 10);
        if (*end != '\0' || end == text || (errno && errno != ERANGE))
            goto bad_u64;
        if (errno == ERANGE) {
            snprintf (err, err_size, "%s: key '%s': %s is out of range [%.0f, %.0f]", where, k->key, text, k->min,
                      k->max);
            return -1;
        }
        if ((double) v < k->min || (double) v > k->max) {
            snprintf (err, err_size, "%s: key '%s': %llu is out of range [%.0f, %.0f]", where, k->key, v,
                      k->min, k->max);
            return -1;
        }
        *(uint64_t *) at = v;
        return 0;
    bad_u64:
        if (*text)
            snprintf (err, err_size, "%s: key '%s': expected a non-negative integer, got '%s'", where, k->key, text);
        else
            snprintf (err, err_size, "%s: key '%s': expected a non-negative integer, got no value", where, k->key);
        return -1;
    }
    case T_F64: {
        char *end = NULL;
        errno = 0;
        double v = strtod (text, &end);
        if (errno || *text == '\0' || *end != '\0' || !isfinite (v)) {
            snprintf (err, err_size, "%s: key '%s': expected a number, got '%s'", where, k->key, text);
            return -1;
        }
        if (v < k->min || v > k->max) {
            snprintf (err, err_size, "%s: key '%s': %g is out of range [%g, %g]", where, k->key, v, k->min, k->max);
            return -1;
        }
        *(double *) at = v;
        return 0;
    }
    case T_STR:
        if (strlen (text) >= k->size || (strcmp (k->key, "dataset.data_folder") == 0 && !*text)) {
            snprintf (err, err_size, "%s: key '%s': value is %s", where, k->key, *text ? "too long" : "empty");
            return -1;
        }
        snprintf ((char *) at, k->size, "%s", text);
        return 0;
    case T_BOOL:
        if (!strcasecmp (text, "true") || !strcasecmp (text, "yes") || !strcasecmp (text, "on") || !strcmp (text, "1"))
            *(int *) at = 1;
        else if (!strcasecmp (text, "false") || !strcasecmp (text, "no") || !strcasecmp (text, "off") || !strcmp (text, "0"))
            *(int *) at = 0;
        else {
            snprintf (err, err_size, "%s: key '%s': expected true or false, got '%s'", where, k->key, text);
            return -1;
        }
        return 0;
    case T_SHUFFLE:
        /* DLIO writes off/seed/random; YAML 1.1 readers also see booleans */
        if (!strcasecmp (text, "off") || !strcasecmp (text, "false") || !strcasecmp (text, "no"))
            *(sb_shuffle_t *) at = SB_SHUFFLE_OFF;
        else if (!strcasecmp (text, "seed") || !strcasecmp (text, "true") || !strcasecmp (text, "on"))
            *(sb_shuffle_t *) at = SB_SHUFFLE_SEED;
        else if (!strcasecmp (text, "random"))
            *(sb_shuffle_t *) at = SB_SHUFFLE_RANDOM;
        else {
            snprintf (err, err_size, "%s: key '%s': expected off, seed or random, got '%s'", where, k->key, text);
            return -1;
        }
        return 0;
    case T_SYNC:
        if (!strcasecmp (text, "step"))
            *(sb_sync_t *) at = SB_SYNC_STEP;
        else if (!strcasecmp (text, "epoch"))
            *(sb_sync_t *) at = SB_SYNC_EPOCH;
        else {
            snprintf (err, err_size, "%s: key '%s': expected step or epoch, got '%s'", where, k->key, text);
            return -1;
        }
        return 0;
    case T_STORAGE:
        /* DLIO's StorageType (local_fs, parallel_fs, direct_fs, s3, aistore)
         * and mlcommons/storage's s3dlio and object, as a family of engines
         * (file, s3, synthetic): sb_storage_keys_resolve chooses the engine,
         * refining s3dlio and object by the URI scheme or storage.protocol */
        if (sb_storage_keys_family (text))
            snprintf ((char *) at, k->size, "%s", sb_storage_keys_family (text));
        else if (!strcasecmp (text, "aistore")) {
            snprintf (err, err_size, "%s: key '%s': aistore (AIStore's native API) is not served: shardbench speaks"
                      " S3 and POSIX; AIStore's S3 API needs the /s3 path on its endpoint, which"
                      " storage.storage_options.endpoint_url (http(s)://HOST[:PORT]) cannot give: put an S3 gateway in"
                      " front of it, or use local_fs on a mount of its store", where, k->key);
            return -1;
        }
        else {
            snprintf (err, err_size, "%s: key '%s': expected local_fs, parallel_fs, direct_fs, s3, s3dlio, object or"
                      " synthetic, got '%s'", where, k->key, text);
            return -1;
        }
        return 0;
    case T_LB:
        if (!strcasecmp (text, "round_robin"))
            *(sb_lb_t *) at = SB_LB_ROUND_ROBIN;
        else if (!strcasecmp (text, "least_connections"))
            *(sb_lb_t *) at = SB_LB_LEAST_CONNECTIONS;
        else {
            snprintf (err, err_size, "%s: key '%s': expected round_robin or least_connections, got '%s'", where, k->key,
                      text);
            return -1;
        }
        return 0;
    case T_U64R: {
        char *end = NULL;
        errno = 0;
        double v = strtod (text, &end);
        if (errno || *text == '\0' || *end != '\0' || !isfinite (v) || *text == '-') {
            snprintf (err, err_size, "%s: key '%s': expected a non-negative integer, got '%s'", where, k->key, text);
            return -1;
        }
        v = floor (v + 0.5);    /* DLIO keeps the number as written; bytes are whole */
        if (v < k->min || v > k->max) {
            snprintf (err, err_size, "%s: key '%s': %s is out of range [%.0f, %.0f]", where, k->key, text, k->min,
                      k->max);
            return -1;
        }
        *(uint64_t *) at = (uint64_t) v;
        return 0;
    }
    case T_I64:
    case T_COUNT: {
        char *end = NULL;
        errno = 0;
        long long v = strtoll (text, &end, 10);
        if (*text == '\0' || *end != '\0' || errno) {
            snprintf (err, err_size, "%s: key '%s': expected an integer, got '%s'", where, k->key, text);
            return -1;
        }
        if ((double) v < (k->type == T_COUNT ? -1e15 : k->min) || (double) v > k->max) {
            snprintf (err, err_size, "%s: key '%s': %lld is out of range [%.0f, %.0f]", where, k->key, v,
                      k->type == T_COUNT ? -1e15 : k->min, k->max);
            return -1;
        }
        if (k->type == T_COUNT)
            *(uint64_t *) at = v < 0 ? 0 : (uint64_t) v;
        else
            *(int64_t *) at = (int64_t) v;
        return 0;
    }
    case T_LIST:
    case T_DIST:
    case T_ALIAS:
    case T_IGNORED:
    case T_CUSTOM:
    case T_NA:
        return 0;
    }
    return 0;
}

/* Fill storage.endpoints from endpoint_urls, endpoint_url or the
 * environment, and check them. */
static int
s_storage_endpoints (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    sb_storage_cfg_t *st = &wl->storage;
    char where[1200];
    const sb_config_entry_t *list = sb_config_get (cfg, "storage.storage_options.endpoint_urls");
    const sb_config_entry_t *uris = sb_config_get (cfg, "storage.endpoint_uris");
    const sb_config_entry_t *one = sb_config_get (cfg, "storage.storage_options.endpoint_url");
    if (list && uris) {
        snprintf (err, err_size, "%s: key 'storage.endpoint_uris': storage.storage_options.endpoint_urls is set too (%s):"
                  " give the endpoints once", sb_config_where (uris, where, sizeof where), list->origin);
        return -1;
    }
    list = list ? list : uris;
    const sb_config_entry_t *origin = list ? list : one;
    st->nendpoints = 0;
    if (list) {
        size_t n = list->items ? list->nitems : 1;
        if (n == 0 || n > SB_MAX_ENDPOINTS) {
            snprintf (err, err_size, "%s: key '%s': %zu endpoints, expected 1 to %d",
                      sb_config_where (list, where, sizeof where), list->key, n, SB_MAX_ENDPOINTS);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            const char *v = list->items ? list->items[i] : list->value;
            if (strlen (v) >= sizeof st->endpoints[0]) {
                snprintf (err, err_size, "%s: key '%s': endpoint too long", sb_config_where (list, where, sizeof where),
                          list->key);
                return -1;
            }
            snprintf (st->endpoints[st->nendpoints++], sizeof st->endpoints[0], "%s", v);
        }
    }
    else if (one && one->value && *one->value)
        snprintf (st->endpoints[st->nendpoints++], sizeof st->endpoints[0], "%s", one->value);
    /* whatever the storage type: the endpoints are part of the recorded configuration */
    for (size_t i = 0; i < st->nendpoints; i++) {
        const char *v = st->endpoints[i];
        if (strchr (v, '@')) {
            /* http://USER:PASSWORD@HOST: the URL is recorded and sent to the
             * workers, so a password in it would be too; not repeated here */
            snprintf (err, err_size, "%s: key '%s': endpoint %zu holds a user name or password (USER:PASSWORD@):"
                      " refused, since endpoints are recorded and sent to the workers; give http(s)://HOST[:PORT]"
                      " and the credentials in the environment (docs/STORAGE.md)",
                      sb_config_where (origin, where, sizeof where), origin->key, i + 1);
            return -1;
        }
        if ((sb_storage_caps (st) & SB_ENGINE_ENDPOINTS)
            && sb_storage_endpoint_normalize (st->endpoints[i], sizeof st->endpoints[0]) != 0) {
            snprintf (err, err_size, "%s: key '%s': '%s' is not http(s)://HOST[:PORT]",
                      sb_config_where (origin, where, sizeof where), origin->key, st->endpoints[i]);
            return -1;
        }
    }
    return 0;
}

/* The engine completes its configuration (sb_engine_ops_t.configure): from
 * the environment, its defaults, its checks. 0, or -1 with err. */
static int
s_engine_configure (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    const sb_engine_ops_t *ops = sb_engine_of (&wl->storage);
    if (!ops || !ops->configure)
        return 0;
    char scheme[16] = "";
    (void) sb_uri_scheme (wl->data_folder, scheme, sizeof scheme);
    sb_engine_setup_t setup;
    sb_storage_keys_setup (cfg, scheme, &setup);
    return ops->configure (&wl->storage, &setup, err, err_size);
}

/* The engine a key belongs to: storage.<engine>.<key> of one of the
 * engines this build has (*alias 0), or the alias of an engine's option
 * (DLIO's spelling, *alias 1); else NULL. *option is the option's name. */
static const sb_engine_ops_t *
s_engine_of_key (const char *key, const char **option, int *alias)
{
    *alias = 0;
    for (size_t i = 0; sb_engine_at (i); i++)
        for (const sb_engine_option_t *o = sb_engine_at (i)->options; o && o->key; o++)
            if (o->alias && !strcmp (o->alias, key)) {
                *option = o->key;
                *alias = 1;
                return sb_engine_at (i);
            }
    if (strncmp (key, "storage.", 8) != 0)
        return NULL;
    const char *name = key + 8, *dot = strchr (name, '.');
    if (!dot || dot == name || !dot[1])
        return NULL;
    for (size_t i = 0; sb_engine_at (i); i++) {
        const sb_engine_ops_t *ops = sb_engine_at (i);
        if (strlen (ops->name) == (size_t) (dot - name) && !strncmp (ops->name, name, (size_t) (dot - name))) {
            *option = dot + 1;
            return ops;
        }
    }
    return NULL;
}

/* A number of an engine option: digits, for SB_OPT_SIZE with a binary
 * suffix (k, m, g, t; KiB, MiB, GiB, TiB). 0, or -1 when not one. */
static int
s_engine_number (const char *text, int size, uint64_t *out)
{
    if (!*text || *text == '-' || *text == '+')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull (text, &end, 10);
    if (end == text || errno)
        return -1;
    unsigned shift = 0;
    if (size && *end) {
        static const char units[] = "kmgt";
        const char *u = strchr (units, (char) (*end | 0x20));
        if (!u)
            return -1;
        shift = 10u * (unsigned) (u - units + 1);
        end++;
        if (!strcasecmp (end, "ib") || !strcasecmp (end, "b"))
            end += strlen (end);
    }
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t) v << shift;
    return 0;
}

int
sb_workload_engine_options (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    char where[1200];
    const sb_engine_ops_t *mine = sb_engine_of (&wl->storage);
    wl->storage.nopts = 0;
    for (size_t i = 0; i < sb_config_count (cfg); i++) {
        const sb_config_entry_t *e = sb_config_at (cfg, i);
        const char *key;
        int alias;
        const sb_engine_ops_t *ops = s_engine_of_key (e->key, &key, &alias);
        if (!ops)
            continue;
        sb_config_where (e, where, sizeof where);
        /* DLIO's spelling of another engine's setting (a file's storage
         * options are written for whichever store it is run on) is kept for
         * that engine: a checkpoint folder there uses it */
        if (ops != mine && !alias) {
            snprintf (err, err_size, "%s: key '%s': an option of the %s storage engine, but this workload's storage"
                      " engine is %s (%s)", where, e->key, ops->name, wl->storage.engine, wl->storage_summary);
            return -1;
        }
        const sb_engine_option_t *o = ops->options;
        while (o && o->key && strcmp (o->key, key) != 0)
            o++;
        if (!o || !o->key) {
            char known[512] = "";
            size_t used = 0;
            for (const sb_engine_option_t *k = ops->options; k && k->key && used < sizeof known; k++)
                used += (size_t) snprintf (known + used, sizeof known - used, "%s%s", used ? ", " : "", k->key);
            snprintf (err, err_size, "%s: key '%s': the %s storage engine has no option '%s' (%s)", where, e->key,
                      ops->name, key, used ? known : "it has none");
            return -1;
        }
        const char *text = e->value ? e->value : "";
        char value[sizeof wl->storage.opts[0].value];
        uint64_t v = 0;
        switch (o->type) {
        case SB_OPT_UINT:
        case SB_OPT_SIZE:
            if (e->items || s_engine_number (text, o->type == SB_OPT_SIZE, &v) != 0) {
                snprintf (err, err_size, "%s: key '%s': expected %s, got '%s'", where, e->key,
                          o->type == SB_OPT_SIZE ? "a size in bytes (k, m, g suffixes allowed)" : "a whole number",
                          e->items ? "a list" : text);
                return -1;
            }
            if (v < o->min || v > o->max) {
                snprintf (err, err_size, "%s: key '%s': %llu is out of range [%llu, %llu]", where, e->key,
                          (unsigned long long) v, (unsigned long long) o->min, (unsigned long long) o->max);
                return -1;
            }
            snprintf (value, sizeof value, "%llu", (unsigned long long) v);
            break;
        case SB_OPT_BOOL:
            if (!strcasecmp (text, "true") || !strcasecmp (text, "yes") || !strcasecmp (text, "on") || !strcmp (text, "1"))
                snprintf (value, sizeof value, "1");
            else if (!strcasecmp (text, "false") || !strcasecmp (text, "no") || !strcasecmp (text, "off")
                     || !strcmp (text, "0"))
                snprintf (value, sizeof value, "0");
            else {
                snprintf (err, err_size, "%s: key '%s': expected true or false, got '%s'", where, e->key,
                          e->items ? "a list" : text);
                return -1;
            }
            break;
        default:
            if (e->items || strlen (text) >= sizeof value) {
                snprintf (err, err_size, "%s: key '%s': expected a text of at most %zu bytes", where, e->key,
                          sizeof value - 1);
                return -1;
            }
            snprintf (value, sizeof value, "%s", text);
            break;
        }
        if (wl->storage.nopts >= SB_STORAGE_OPTS_MAX || strlen (key) >= sizeof wl->storage.opts[0].key) {
            snprintf (err, err_size, "%s: key '%s': too many engine options (at most %d)", where, e->key,
                      SB_STORAGE_OPTS_MAX);
            return -1;
        }
        sb_storage_opt_t *same = NULL;
        for (size_t j = 0; j < wl->storage.nopts; j++)
            if (!strcmp (wl->storage.opts[j].engine, ops->name) && !strcmp (wl->storage.opts[j].key, key))
                same = &wl->storage.opts[j];
        if (same && strcmp (same->value, value) != 0) {
            /* an option given both as storage.ENGINE.KEY and by its alias */
            snprintf (err, err_size, "%s: key '%s': '%s' disagrees with the %s engine's option '%s' given as '%s'"
                      " elsewhere: give it once", where, e->key, value, ops->name, key, same->value);
            return -1;
        }
        if (same)
            continue;
        snprintf (wl->storage.opts[wl->storage.nopts].engine, sizeof wl->storage.opts[0].engine, "%s", ops->name);
        snprintf (wl->storage.opts[wl->storage.nopts].key, sizeof wl->storage.opts[0].key, "%s", key);
        snprintf (wl->storage.opts[wl->storage.nopts].value, sizeof wl->storage.opts[0].value, "%s", value);
        wl->storage.nopts++;
    }
    return 0;
}

static const s_key_t *
s_find (const char *key)
{
    for (size_t i = 0; i < S_NKEYS; i++)
        if (strcmp (s_keys[i].key, key) == 0)
            return &s_keys[i];
    return NULL;
}

/* An unknown key that collides with the table is a wrong type, not a typo:
 * "reader.batch_size.x" (a mapping where a value belongs) or "reader" (a
 * value where a section belongs). Writes the error and returns -1; 1 for an
 * empty value where a section belongs (an empty section), else 0. */
static int
s_shape_error (const sb_config_entry_t *e, char *err, size_t err_size)
{
    char where[1200];
    size_t n = strlen (e->key);
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys[i];
        size_t kn = strlen (k->key);
        if (k->type == T_IGNORED)
            continue;
        if (n > kn && strncmp (e->key, k->key, kn) == 0 && e->key[kn] == '.') {
            snprintf (err, err_size, "%s: key '%s': expected a single value, got a mapping (with '%s')",
                      sb_config_where (e, where, sizeof where), k->key, e->key + kn + 1);
            return -1;
        }
        if (kn > n && strncmp (k->key, e->key, n) == 0 && k->key[n] == '.') {
            if (!e->items && (!e->value || !*e->value))
                return 1;   /* `storage_options:` with nothing under it: an empty section */
            snprintf (err, err_size, "%s: key '%s': expected a section of keys (such as '%s'), got a %s",
                      sb_config_where (e, where, sizeof where), e->key, k->key, e->items ? "list" : "single value");
            return -1;
        }
    }
    return 0;
}

/* dataset.parquet.columns: [{name, dtype, size?}, ...], flattened by the
 * config into dataset.parquet.columns.N.name etc., into wl->parquet_columns
 * ("name:dtype:size,..."; size 1 when not given). With parquet, a row's
 * bytes are the columns' sum of size x itemsize, as DLIO sizes a row, and
 * record_length_bytes takes that value (stdev 0). */
static int
s_parquet_columns (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    size_t used = 0;
    wl->parquet_columns[0] = 0;
    /* the list itself is an entry only when it holds no mapping: [] is none */
    const sb_config_entry_t *whole = sb_config_get (cfg, "dataset.parquet.columns");
    if (whole && (whole->items ? whole->nitems > 0 : whole->value && *whole->value)) {
        char where[1200];
        snprintf (err, err_size, "%s: key 'dataset.parquet.columns': expected a list of mappings [{name: .., dtype: ..,"
                  " size: ..}, ...], got %s", sb_config_where (whole, where, sizeof where),
                  whole->items ? "a list of plain values" : "a single value");
        return -1;
    }
    for (unsigned i = 0;; i++) {
        char key[96];
        snprintf (key, sizeof key, "dataset.parquet.columns.%u.name", i);
        const sb_config_entry_t *name = sb_config_get (cfg, key);
        snprintf (key, sizeof key, "dataset.parquet.columns.%u.dtype", i);
        const sb_config_entry_t *dtype = sb_config_get (cfg, key);
        snprintf (key, sizeof key, "dataset.parquet.columns.%u.size", i);
        const sb_config_entry_t *size = sb_config_get (cfg, key);
        if (!name && !dtype && !size)
            break;
        char where[1200];
        if (!name || !name->value || !dtype || !dtype->value || strpbrk (name->value, ":,")) {
            const sb_config_entry_t *e = name ? name : dtype ? dtype : size;
            snprintf (err, err_size, "%s: key 'dataset.parquet.columns': item %u needs a name (without ':' or ',') "
                      "and a dtype", sb_config_where (e, where, sizeof where), i);
            return -1;
        }
        int w = snprintf (wl->parquet_columns + used, sizeof wl->parquet_columns - used, "%s%s:%s:%s", i ? "," : "",
                          name->value, dtype->value, size && size->value ? size->value : "1");
        if (w < 0 || (size_t) w >= sizeof wl->parquet_columns - used) {
            snprintf (err, err_size, "%s: key 'dataset.parquet.columns': the list is over %zu characters",
                      sb_config_where (name, where, sizeof where), sizeof wl->parquet_columns - 1);
            return -1;
        }
        used += (size_t) w;
    }
    if (!used || strcmp (wl->format, "parquet") != 0)
        return 0;
    uint64_t row = 0;
    char why[512];
    if (sb_format_parquet_columns (wl->parquet_columns, &row, NULL, why, sizeof why) != 0) {
        const sb_config_entry_t *e = sb_config_get (cfg, "dataset.parquet.columns.0.name");
        char where[1200];
        snprintf (err, err_size, "%s: key 'dataset.parquet.columns': %s", sb_config_where (e, where, sizeof where), why);
        return -1;
    }
    if (wl->record_length_bytes != row || wl->record_length_bytes_stdev)
        sb_info ("dataset.parquet.columns: rows of %llu bytes; dataset.record_length_bytes %llu (stdev %llu) "
                 "follows the columns", (unsigned long long) row, (unsigned long long) wl->record_length_bytes,
                 (unsigned long long) wl->record_length_bytes_stdev);
    wl->record_length_bytes = row;
    wl->record_length_bytes_stdev = 0;
    return 0;
}

/* dataset.compression (DLIO's key, default none): with parquet the codec
 * of the data pages datagen writes (format.h). Other formats record it. */
static int
s_parquet_compression (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    if (strcmp (wl->format, "parquet") != 0)
        return 0;
    char why[256], where[1200];
    if (sb_format_parquet_codec (wl->compression, NULL, why, sizeof why) != 0) {
        snprintf (err, err_size, "%s: key 'dataset.compression': %s",
                  sb_config_where (sb_config_get (cfg, "dataset.compression"), where, sizeof where), why);
        return -1;
    }
    return 0;
}

/* storage.storage_options.columns: [name, ...], the parquet columns DLIO's
 * readers read (ParquetReaderFileIterable and ParquetReaderS3Iterable,
 * opts["columns"]; none or empty: all), into wl->parquet_read_columns as
 * "a,b,...". A name the dataset's columns lack stops here (DLIO would
 * silently read the remaining ones, or nothing). */
static int
s_parquet_read_columns (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    const sb_config_entry_t *e = sb_config_get (cfg, "storage.storage_options.columns");
    char where[1200];
    size_t used = 0;
    wl->parquet_read_columns[0] = 0;
    if (!e)
        return 0;
    size_t n = e->items ? e->nitems : (e->value && *e->value ? 1 : 0);
    for (size_t i = 0; i < n; i++) {
        const char *v = e->items ? e->items[i] : e->value;
        if (!*v || strchr (v, ',') || strchr (v, ':')) {
            snprintf (err, err_size, "%s: key 'storage.storage_options.columns': item %zu '%s' is not a column name",
                      sb_config_where (e, where, sizeof where), i, v);
            return -1;
        }
        int w = snprintf (wl->parquet_read_columns + used, sizeof wl->parquet_read_columns - used, "%s%s",
                          i ? "," : "", v);
        if (w < 0 || (size_t) w >= sizeof wl->parquet_read_columns - used) {
            snprintf (err, err_size, "%s: key 'storage.storage_options.columns': the list is over %zu characters",
                      sb_config_where (e, where, sizeof where), sizeof wl->parquet_read_columns - 1);
            return -1;
        }
        used += (size_t) w;
    }
    if (!used || strcmp (wl->format, "parquet") != 0)
        return 0;
    char why[512];
    if (sb_format_parquet_read_check (wl->parquet_columns, wl->parquet_read_columns, why, sizeof why) != 0) {
        snprintf (err, err_size, "%s: key 'storage.storage_options.columns': %s", sb_config_where (e, where, sizeof where),
                  why);
        return -1;
    }
    return 0;
}

/* model.layer_parameters and model.optimization_groups: lists of integers,
 * as DLIO reads them (an item of 0 or less is a tensor DLIO skips). */
static int
s_ckpt_list (sb_config_t *cfg, const char *key, int64_t *out, size_t *n_out, char *err, size_t err_size)
{
    const sb_config_entry_t *e = sb_config_get (cfg, key);
    char where[1200];
    *n_out = 0;
    if (!e)
        return 0;
    size_t n = e->items ? e->nitems : (e->value && *e->value ? 1 : 0);
    if (n > SB_CKPT_LIST_MAX) {
        snprintf (err, err_size, "%s: key '%s': %zu items, at most %d", sb_config_where (e, where, sizeof where), key, n,
                  SB_CKPT_LIST_MAX);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *v = e->items ? e->items[i] : e->value;
        char *end = NULL;
        errno = 0;
        long long x = strtoll (v, &end, 10);
        if (end == v || *end || errno || x > SB_CKPT_ITEM_MAX || x < -SB_CKPT_ITEM_MAX) {
            snprintf (err, err_size, "%s: key '%s': item %zu '%s' is not an integer of at most %lld",
                      sb_config_where (e, where, sizeof where), key, i, v, SB_CKPT_ITEM_MAX);
            return -1;
        }
        out[i] = x;
    }
    *n_out = n;
    return 0;
}

static int
s_ckpt_lists (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    if (s_ckpt_list (cfg, "model.layer_parameters", wl->ckpt.layer_parameters, &wl->ckpt.n_layer_parameters, err,
                     err_size) != 0)
        return -1;
    return s_ckpt_list (cfg, "model.optimization_groups", wl->ckpt.optimization_groups,
                        &wl->ckpt.n_optimization_groups, err, err_size);
}

/* dataset.record_element_type and dataset.record_dims,
 * checked and applied as DLIO's config.py does (validate,
 * derive_configurations): image formats take uint8 only (another type is
 * reset, with a warning) and at most 2 dims; dims and a record stdev do not
 * go together; dims make record_length_bytes their product x the element
 * size. Parquet rows follow its columns, not these keys. */
static int
s_record_shape (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    const sb_config_entry_t *te = sb_config_get (cfg, "dataset.record_element_type");
    const sb_config_entry_t *de = sb_config_get (cfg, "dataset.record_dims");
    char where[1200];
    int image = strcmp (wl->format, "png") == 0 || strcmp (wl->format, "jpeg") == 0 || strcmp (wl->format, "jpg") == 0;
    size_t item = sb_dataset_element_size (wl->record_element_type, NULL);
    if (!item) {
        snprintf (err, err_size, "%s: key 'dataset.record_element_type': '%s' is not one of uint8, int8, uint16, "
                  "int16, float16, uint32, int32, float32, uint64, int64, float64", sb_config_where (te, where, sizeof where),
                  wl->record_element_type);
        return -1;
    }
    if (image && item != 1) {
        sb_warn ("%s: key 'dataset.record_element_type': %s images are 8-bit: uint8 instead of '%s', as DLIO does",
                 sb_config_where (te, where, sizeof where), wl->format, wl->record_element_type);
        snprintf (wl->record_element_type, sizeof wl->record_element_type, "uint8");
        item = 1;
    }
    wl->record_ndims = 0;
    if (!de)
        return 0;
    size_t n = de->items ? de->nitems : (de->value && *de->value ? 1 : 0);
    if (n > sizeof wl->record_dims / sizeof wl->record_dims[0] || (image && n > 2)) {
        snprintf (err, err_size, "%s: key 'dataset.record_dims': %zu dimensions, at most %d%s",
                  sb_config_where (de, where, sizeof where), n, image ? 2 : (int) (sizeof wl->record_dims / sizeof wl->record_dims[0]),
                  image ? " for an image format (as DLIO)" : "");
        return -1;
    }
    if (n == 0)
        return 0;
    long double product = (long double) item;
    for (size_t i = 0; i < n; i++) {
        const char *v = de->items ? de->items[i] : de->value;
        char *end = NULL;
        errno = 0;
        unsigned long long d = *v >= '0' && *v <= '9' ? strtoull (v, &end, 10) : 0;
        if (!end || *end || errno || d == 0) {
            snprintf (err, err_size, "%s: key 'dataset.record_dims': item %zu '%s' is not a positive integer",
                      sb_config_where (de, where, sizeof where), i, v);
            return -1;
        }
        wl->record_dims[i] = d;
        product *= (long double) d;
    }
    if (product > 1e12L) {
        snprintf (err, err_size, "%s: key 'dataset.record_dims': a record of %.0Lf bytes, over 1e12",
                  sb_config_where (de, where, sizeof where), product);
        return -1;
    }
    if (wl->record_length_bytes_stdev > 0) {
        snprintf (err, err_size, "%s: key 'dataset.record_dims': not with dataset.record_length_bytes_stdev %llu (DLIO "
                  "refuses both: give record_length_bytes and its stdev instead)", sb_config_where (de, where, sizeof where),
                  (unsigned long long) wl->record_length_bytes_stdev);
        return -1;
    }
    wl->record_ndims = n;
    if (strcmp (wl->format, "parquet") == 0)
        return 0;
    uint64_t bytes = (uint64_t) product;
    if (bytes != wl->record_length_bytes)
        sb_info ("dataset.record_dims: records of %llu bytes (%s); dataset.record_length_bytes %llu follows them, as "
                 "in DLIO", (unsigned long long) bytes, wl->record_element_type,
                 (unsigned long long) wl->record_length_bytes);
    wl->record_length_bytes = bytes;
    return 0;
}

/* How far an unknown key is from a known one: the edit distance, or 1 when
 * only the section differs (train.batch_size for reader.batch_size). */
static size_t
s_key_distance (const char *unknown, const char *known)
{
    const char *u = strrchr (unknown, '.'), *k = strrchr (known, '.');
    if (u && k && !strcmp (u, k))
        return 1;
    return sb_edit_distance (unknown, known);
}

/* ": did you mean 'A', 'B' or 'C'?" naming the known keys nearest to key
 * (the table's and the engines' options), at most three and only near
 * enough to be a typo; "" when none is. */
static void
s_nearest_keys (const char *key, char *out, size_t size)
{
    enum { N = 3 };
    char names[N][96];
    size_t dist[N], found = 0;
    size_t limit = sb_typo_limit (key);
    char cand[96];
    size_t ki = 0, ei = 0;
    int alias_done = 0;
    const sb_engine_ops_t *ops = sb_engine_at (0);
    const sb_engine_option_t *o = ops ? ops->options : NULL;
    for (;;) {
        const char *c;
        if (ki < S_NKEYS)
            c = s_keys[ki++].key;
        else {
            while (ops && (!o || !o->key)) {
                ops = sb_engine_at (++ei);
                o = ops ? ops->options : NULL;
            }
            if (!ops)
                break;
            /* an option's alias (DLIO's spelling) once, then its own key */
            if (o->alias && !alias_done) {
                c = o->alias;
                alias_done = 1;
            }
            else {
                snprintf (cand, sizeof cand, "storage.%s.%s", ops->name, o->key);
                o++;
                alias_done = 0;
                c = cand;
            }
        }
        size_t d = s_key_distance (key, c);
        if (d > limit)
            continue;
        /* keep the N nearest, sorted by distance (the table's order among equals) */
        size_t j = found;
        while (j > 0 && dist[j - 1] > d)
            j--;
        if (j >= N)
            continue;
        for (size_t m = (found < N ? found : N - 1); m > j; m--) {
            dist[m] = dist[m - 1];
            memcpy (names[m], names[m - 1], sizeof names[m]);
        }
        dist[j] = d;
        snprintf (names[j], sizeof names[j], "%s", c);
        if (found < N)
            found++;
    }
    /* only the nearest: a typo has one likely correction */
    while (found > 1 && dist[found - 1] > dist[0])
        found--;
    if (found == 0) {
        snprintf (out, size, "%s", "");
        return;
    }
    int len = snprintf (out, size, ": did you mean '%s'", names[0]);
    for (size_t j = 1; j < found && len > 0 && (size_t) len < size; j++)
        len += snprintf (out + len, size - (size_t) len, "%s'%s'", j + 1 == found ? " or " : ", ", names[j]);
    if (len > 0 && (size_t) len < size)
        snprintf (out + len, size - (size_t) len, "?");
}

/* Sections DLIO knows whose keys shardbench does not model yet. */
static int
s_dlio_section (const char *key)
{
    static const char *sections[] = { "checkpoint.", "evaluation.", "profiling.", "output.", "storage.",
                                      "hydra.", "logging.", "dataset.parquet.", NULL };
    /* storage.* keys not in the table (e.g. DLIO's storage_options for
     * other clients) are reported as ignored DLIO keys */
    for (int i = 0; sections[i]; i++)
        if (strncmp (key, sections[i], strlen (sections[i])) == 0)
            return 1;
    return 0;
}

/* A time DLIO passes to its sleep() (train.computation_time,
 * reader.preprocess_time; `base` names it): a number (a constant, as in
 * DLIO; `scalar`, read from the table), or a mapping read the way sleep()
 * reads it: {mean[, stdev]} (normal when stdev is there) or {type: normal |
 * uniform | gamma | exponential | poisson, and that type's parameters}. When
 * the file gives one form and the command line the other, the command line
 * wins. *given is set when base or a parameter of it is in cfg (may be NULL). */
static int
s_dist_keys (sb_config_t *cfg, const char *base, double scalar, sb_dist_t *out, int *given_any, char *err,
             size_t err_size)
{
    enum { P_MEAN, P_STDEV, P_MIN, P_MAX, P_SHAPE, P_SCALE, P_LAM, P_N };
    static const char *params[P_N] = { "mean", "stdev", "min", "max", "shape", "scale", "lam" };
    /* parameters each type needs, as bits of 1 << P_* */
    static const unsigned needs[] = {
        [SB_DIST_NORMAL] = 1u << P_MEAN | 1u << P_STDEV, [SB_DIST_UNIFORM] = 1u << P_MIN | 1u << P_MAX,
        [SB_DIST_GAMMA] = 1u << P_SHAPE | 1u << P_SCALE, [SB_DIST_EXPONENTIAL] = 1u << P_SCALE,
        [SB_DIST_POISSON] = 1u << P_LAM,
    };
    char prefix[64], where[1200], key[96];
    snprintf (prefix, sizeof prefix, "%s.", base);
    snprintf (key, sizeof key, "%stype", prefix);
    const sb_config_entry_t *scalar_e = sb_config_get (cfg, base);
    const sb_config_entry_t *type_e = sb_config_get (cfg, key);
    const sb_config_entry_t *pe[P_N], *first = type_e;
    double pv[P_N] = { 0 };
    unsigned given = 0;
    int from_cli = type_e && type_e->line == 0;
    for (size_t i = 0; i < sb_config_count (cfg); i++) {
        const sb_config_entry_t *e = sb_config_at (cfg, i);
        if (strncmp (e->key, prefix, strlen (prefix)) == 0 && !s_find (e->key)) {
            snprintf (err, err_size, "%s: key '%s': not a parameter of %s (type, mean, stdev,"
                      " min, max, shape, scale, lam)", sb_config_where (e, where, sizeof where), e->key, base);
            return -1;
        }
    }
    for (int p = 0; p < P_N; p++) {
        snprintf (key, sizeof key, "%s%s", prefix, params[p]);
        const s_key_t *k = s_find (key);
        if (!(pe[p] = sb_config_get (cfg, key)))
            continue;
        const char *text = pe[p]->value ? pe[p]->value : "";
        char *end = NULL;
        errno = 0;
        double v = strtod (text, &end);
        if (pe[p]->items || errno || !*text || *end || !isfinite (v) || v < k->min || v > k->max) {
            snprintf (err, err_size, "%s: key '%s': expected a number in [%g, %g], got '%s'",
                      sb_config_where (pe[p], where, sizeof where), key, k->min, k->max, pe[p]->items ? "a list" : text);
            return -1;
        }
        pv[p] = v;
        given |= 1u << p;
        first = first ? first : pe[p];
        from_cli |= pe[p]->line == 0;
    }
    if (given_any)
        *given_any = scalar_e || first;
    if (!first || (scalar_e && (scalar_e->line == 0 || !from_cli))) {
        if (first && scalar_e->line != 0) {
            snprintf (err, err_size, "%s: key '%s': given both as a number and as a mapping (%s)",
                      sb_config_where (scalar_e, where, sizeof where), base, sb_config_where (first, key, sizeof key));
            return -1;
        }
        *out = (sb_dist_t) { SB_DIST_CONSTANT, scalar, 0 };
        return 0;
    }
    sb_dist_t d = { SB_DIST_CONSTANT, 0, 0 };
    unsigned need;
    if (type_e) {
        const char *name = type_e->value ? type_e->value : "";
        if (type_e->items || sb_dist_parse (name, &d.type) != 0 || d.type == SB_DIST_CONSTANT) {
            snprintf (err, err_size, "%s: key '%s.type': expected normal, uniform, gamma,"
                      " exponential or poisson, got '%s'", sb_config_where (type_e, where, sizeof where), base,
                      type_e->items ? "a list" : name);
            return -1;
        }
        need = needs[d.type];
    }
    else {
        d.type = given & (1u << P_STDEV) ? SB_DIST_NORMAL : SB_DIST_CONSTANT;
        need = d.type == SB_DIST_NORMAL ? needs[SB_DIST_NORMAL] : 1u << P_MEAN;
    }
    for (int p = 0; p < P_N; p++) {
        snprintf (key, sizeof key, "%s%s", prefix, params[p]);
        if ((need & (1u << p)) && !(given & (1u << p))) {
            snprintf (err, err_size, "%s: key '%s': %s needs '%s'", sb_config_where (first, where, sizeof where), base,
                      type_e ? sb_dist_name (d.type) : "a mapping without type", params[p]);
            return -1;
        }
        if (!(need & (1u << p)) && (given & (1u << p))) {
            snprintf (err, err_size, "%s: key '%s': not a parameter of %s", sb_config_where (pe[p], where, sizeof where), key,
                      type_e || d.type == SB_DIST_NORMAL ? sb_dist_name (d.type) : "a mapping without type and stdev");
            return -1;
        }
    }
    switch (d.type) {
    case SB_DIST_NORMAL:      d.a = pv[P_MEAN]; d.b = pv[P_STDEV]; break;
    case SB_DIST_UNIFORM:     d.a = pv[P_MIN]; d.b = pv[P_MAX]; break;
    case SB_DIST_GAMMA:       d.a = pv[P_SHAPE]; d.b = pv[P_SCALE]; break;
    case SB_DIST_EXPONENTIAL: d.a = pv[P_SCALE]; break;
    case SB_DIST_POISSON:     d.a = pv[P_LAM]; break;
    default:                  d.a = pv[P_MEAN]; break;
    }
    char why[256];
    if (sb_dist_check (&d, why, sizeof why) != 0) {
        snprintf (err, err_size, "%s: key '%s': %s", sb_config_where (first, where, sizeof where), base, why);
        return -1;
    }
    *out = d;
    return 0;
}

/* train.computation_time (s_dist_keys); computation_time becomes its mean. */
static int
s_compute (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    if (s_dist_keys (cfg, "train.computation_time", wl->computation_time, &wl->compute, NULL, err, err_size) != 0)
        return -1;
    if (wl->compute.type != SB_DIST_CONSTANT || wl->compute.a != wl->computation_time)
        wl->computation_time = sb_dist_mean (&wl->compute);
    return 0;
}

/* Older DLIO spellings (T_ALIAS): read when the key they stand for is absent. */
static int
s_aliases (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *alias = &s_keys[i];
        const sb_config_entry_t *e = alias->type == T_ALIAS ? sb_config_get (cfg, alias->key) : NULL;
        if (!e)
            continue;
        const sb_config_entry_t *canon = sb_config_get (cfg, alias->fallback);
        if (canon) {
            char where[1200];
            sb_warn ("%s: key '%s' ignored: '%s' is set too (%s)", sb_config_where (e, where, sizeof where), alias->key,
                     alias->fallback, canon->origin);
            continue;
        }
        s_key_t k = *s_find (alias->fallback);
        k.key = alias->key;     /* errors name the key as written */
        if (s_parse (&k, e, e->value ? e->value : "", wl, err, err_size) != 0)
            return -1;
    }
    return 0;
}

/* checkpoints during training (workflow.train and
 * workflow.checkpoint both true, as DLIO reads them; the workflow keys
 * themselves are the workflow's), and DLIO's model size key. */
static int
s_ckpt_keys (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    (void) err;
    (void) err_size;
    wl->ckpt.in_train = wl->do_train && wl->do_checkpoint;    /* the workflow keys are read by then */
    const sb_config_entry_t *size = sb_config_get (cfg, "model.model_size");
    if (size && !sb_config_get (cfg, "model.model_size_bytes") && strcmp (wl->ckpt.model_type, "transformer") != 0) {
        char where[1200];
        sb_warn ("%s: key 'model.model_size' is not read by DLIO, which sizes a model's checkpoint by"
                 " model.model_size_bytes (default 10240): its checkpoints are %llu bytes, as DLIO's",
                 sb_config_where (size, where, sizeof where), (unsigned long long) wl->ckpt.model_size);
    }
    return 0;
}

/* Add key to the ", "-separated list of ignored keys, once: the items of a
 * list of mappings (DLIO's dataset.parquet.columns) are one entry,
 * "dataset.parquet.columns[].name". A list that is full ends with "...". */
static void
s_ignored_add (char *list, size_t size, size_t *used, const char *key)
{
    char item[600];
    size_t n = 0;
    for (const char *seg = key; *seg && n + 3 < sizeof item;) {
        const char *dot = strchr (seg, '.');
        size_t len = dot ? (size_t) (dot - seg) : strlen (seg);
        if (len > 0 && strspn (seg, "0123456789") == len && n > 0 && item[n - 1] == '.')
            memcpy (item + n - 1, "[].", 3), n += 2;
        else {
            if (n + len + 1 >= sizeof item)
                break;
            memcpy (item + n, seg, len), n += len;
            if (dot)
                item[n++] = '.';
        }
        seg = dot ? dot + 1 : seg + len;
    }
    while (n > 0 && item[n - 1] == '.')
        n--;
    item[n] = '\0';
    for (const char *p = list; (p = strstr (p, item)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
            return;     /* listed already */
    if (*used >= 4 && strcmp (list + *used - 3, "...") == 0)
        return;
    int w = snprintf (list + *used, size - *used, "%s%s", *used ? ", " : "", item);
    if (w > 0 && (size_t) w < size - *used - 5)
        *used += (size_t) w;
    else {
        list[*used] = '\0';
        *used += (size_t) snprintf (list + *used, size - *used, "%s...", *used ? ", " : "");
    }
}

/* KEY_stdev (train.computation_time_stdev, reader.preprocess_time_stdev):
 * the stdev of a normal distribution around the time `base`, *d (as
 * LoadConfig sets its dict's "stdev", over a mapping's own). Returns 0 with
 * *d updated, or -1 with err. */
static int
s_dist_stdev (sb_config_t *cfg, const char *base, sb_dist_t *d, char *err, size_t err_size)
{
    char key[96];
    snprintf (key, sizeof key, "%s_stdev", base);
    const sb_config_entry_t *e = sb_config_get (cfg, key);
    if (!e)
        return 0;
    char where[1200], *end = NULL;
    const char *text = e->value ? e->value : "";
    errno = 0;
    double v = strtod (text, &end);
    if (e->items || errno || !*text || *end || !isfinite (v) || v < 0 || v > 3600) {
        snprintf (err, err_size, "%s: key '%s': expected a number in [0, 3600], got '%s'",
                  sb_config_where (e, where, sizeof where), key, e->items ? "a list" : text);
        return -1;
    }
    if (d->type != SB_DIST_CONSTANT && d->type != SB_DIST_NORMAL) {
        snprintf (err, err_size, "%s: key '%s': %s is a %s distribution;"
                  " a stdev applies to a number or a normal one", sb_config_where (e, where, sizeof where), key, base,
                  sb_dist_name (d->type));
        return -1;
    }
    if (v == 0 && d->type == SB_DIST_CONSTANT)
        return 0;
    sb_dist_t n = { SB_DIST_NORMAL, d->a, v };
    char why[256];
    if (sb_dist_check (&n, why, sizeof why) != 0) {
        snprintf (err, err_size, "%s: key '%s': %s", sb_config_where (e, where, sizeof where), key, why);
        return -1;
    }
    *d = n;
    return 0;
}

/* train.computation_time_stdev, DLIO's older spelling (s_dist_stdev). */
static int
s_compute_stdev (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    if (s_dist_stdev (cfg, "train.computation_time", &wl->compute, err, err_size) != 0)
        return -1;
    wl->computation_time = sb_dist_mean (&wl->compute);
    return 0;
}

/* reader.preprocess_time and reader.preprocess_time_stdev,
 * as DLIO's LoadConfig and sleep() read them: a number, a mapping, and the
 * stdev key over either. DLIO's dict without a "mean" (only the stdev key
 * given) sleeps 0: the stdev alone is accepted with a warning and does
 * nothing, as there. */
static int
s_preprocess (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    int given = 0;
    if (s_dist_keys (cfg, "reader.preprocess_time", wl->preprocess_time, &wl->preprocess, &given, err, err_size) != 0)
        return -1;
    const sb_config_entry_t *stdev = sb_config_get (cfg, "reader.preprocess_time_stdev");
    if (stdev && !given) {
        char where[1200];
        sb_warn ("%s: key 'reader.preprocess_time_stdev' does nothing without reader.preprocess_time (DLIO's sleep()"
                 " takes nothing from a stdev without a mean)", sb_config_where (stdev, where, sizeof where));
        return 0;
    }
    if (s_dist_stdev (cfg, "reader.preprocess_time", &wl->preprocess, err, err_size) != 0)
        return -1;
    wl->preprocess_time = sb_dist_mean (&wl->preprocess);
    return 0;
}

/* reader.file_access: multi only (one file per set of samples). */
static int
s_reader_misc (sb_config_t *cfg, char *err, size_t err_size)
{
    char where[1200];
    const sb_config_entry_t *e = sb_config_get (cfg, "reader.file_access");
    if (e && (e->items || !e->value || strcmp (e->value, "multi") != 0)) {
        snprintf (err, err_size, "%s: key 'reader.file_access': '%s' is not served: shardbench reads one file per set"
                  " of samples (multi, DLIO's default); shared, collective, mpio and posix put every sample in one file",
                  sb_config_where (e, where, sizeof where), e->items ? "a list" : e->value ? e->value : "");
        return -1;
    }
    return 0;
}

int
sb_workload_log_not_applicable (sb_config_t *cfg)
{
    int n = 0;
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys[i];
        const sb_config_entry_t *e = k->type == T_NA ? sb_config_get (cfg, k->key) : NULL;
        if (!e)
            continue;
        char where[1200];
        sb_info ("%s: key '%s' accepted, not applicable: %s", sb_config_where (e, where, sizeof where), k->key, k->doc);
        n++;
    }
    return n;
}

/* dataset.record_length, _stdev and _resize, which
 * DLIO_local_changes's LoadConfig does not read (it reads the _bytes
 * spellings only), so its records keep the _bytes values or their defaults:
 * accepted, one warning each saying what the records are. After the parquet
 * columns (which size a parquet row). */
static void
s_record_length_spellings (sb_config_t *cfg, const sb_workload_t *wl)
{
    static const struct { const char *key, *read; } spellings[] = {
        { "dataset.record_length", "dataset.record_length_bytes" },
        { "dataset.record_length_stdev", "dataset.record_length_bytes_stdev" },
        { "dataset.record_length_resize", "dataset.record_length_bytes_resize" },
    };
    int parquet_rows = wl->parquet_columns[0] && strcmp (wl->format, "parquet") == 0;
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
        const sb_config_entry_t *e = sb_config_get (cfg, spellings[i].key);
        if (!e)
            continue;
        char where[1200], now[256];
        if (i == 2)
            snprintf (now, sizeof now, "%s decides", spellings[i].read);
        else if (parquet_rows)
            snprintf (now, sizeof now, "rows are %llu bytes, the sum of dataset.parquet.columns",
                      (unsigned long long) wl->record_length_bytes);
        else
            snprintf (now, sizeof now, "%s is %llu%s", spellings[i].read, (unsigned long long) (i == 0
                      ? wl->record_length_bytes : wl->record_length_bytes_stdev), sb_config_get (cfg,
                      spellings[i].read) ? "" : i == 0 ? " (DLIO's default)" : " (the default)");
        sb_warn ("%s: key '%s' not used, as DLIO_local_changes does not read it (it reads %s): %s",
                 sb_config_where (e, where, sizeof where), spellings[i].key, spellings[i].read, now);
    }
}

/* dataset.format in lower case, as DLIO's FormatType values are: NPZ was
 * compared exactly by the generator (raw bytes, no zip) but without case by
 * the sampler. The configuration's entry is rewritten too (where it was
 * written kept), so what is stored and sent says the format used. */
static int
s_format_lower (sb_config_t *cfg, sb_workload_t *wl)
{
    int upper = 0;
    for (char *p = wl->format; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char) (*p - 'A' + 'a'), upper = 1;
    const sb_config_entry_t *e = sb_config_get (cfg, "dataset.format");
    if (!upper || !e || !e->value)
        return 0;
    char origin[1024];
    snprintf (origin, sizeof origin, "%s", e->origin);
    return sb_config_set_at (cfg, "dataset.format", wl->format, origin, e->line);
}

/* keys whose ${NAME} (upper case, naming no key) means "from the
 * environment", as the upstream s3dlio files write credentials and an
 * engine's settings (an engine's configure op then reads the environment):
 * credentials, and text options of an engine given by their alias; kept
 * as written, then taken as absent. */
static int
s_env_ref_kept (const char *key)
{
    if (sb_workload_is_secret_key (key))
        return 1;
    char storage_key[256];
    if (strncmp (key, "reader.storage_options.", 23) == 0) {
        snprintf (storage_key, sizeof storage_key, "storage.storage_options.%s", key + 23);
        key = storage_key;
    }
    for (size_t i = 0; sb_engine_at (i); i++)
        for (const sb_engine_option_t *o = sb_engine_at (i)->options; o && o->key; o++)
            if (o->alias && o->type == SB_OPT_STRING && !strcmp (o->alias, key))
                return 1;
    return 0;
}

/* A value YAML reads as null (Python's None in DLIO), or no entry. */
static int
s_null (const sb_config_entry_t *e)
{
    return !e || (!e->items && (!e->value || !*e->value || !strcmp (e->value, "~") || !strcasecmp (e->value, "null")));
}

/* What DLIO_local_changes refuses to run, found in the keys as written
 * (reader: storage keys not yet taken as storage: ones, since DLIO reads
 * none of them), in the order DLIO stops: LoadConfig's storage type, then
 * its sample_shuffle given as a boolean, then validate's custom loader
 * without a sampler, then its S3 client library (checks 0 to 3).
 * Each is an error naming file, line, key, DLIO's refusal and the
 * DLIO-valid spelling; with shardbench.lenient: true a warning, and the run
 * goes on as shardbench reads the keys. Returns 0 or -1 with err. */
static int
s_dlio_refusals (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    const s_key_t *lk = s_find ("shardbench.lenient");
    const sb_config_entry_t *le = sb_config_get (cfg, lk->key);
    if (s_parse (lk, le, le ? (le->value ? le->value : "") : lk->fallback, wl, err, err_size) != 0)
        return -1;
    char why[1024], where[1200];
    for (int check = 0; check < 4; check++) {
        const sb_config_entry_t *at = NULL;
        int refused = 0;
        if (check == 0 || check == 3)
            refused = sb_storage_keys_dlio_refused (cfg, check / 3, &at, why, sizeof why);
        else if (check == 1) {
            /* LoadConfig converts sample_shuffle with Shuffle(...), which has no boolean value */
            at = sb_config_get (cfg, "reader.sample_shuffle");
            if ((refused = at && at->value && at->is_bool))
                snprintf (why, sizeof why, "DLIO_local_changes refuses the boolean %s (%s): config.py's LoadConfig"
                          " converts sample_shuffle with its Shuffle enum, which has no boolean value, and stops;"
                          " write sample_shuffle: \"off\" (quoted, the text) or leave the key out for no sample"
                          " shuffle, seed to shuffle", at->value, at->line ? "YAML 1.1 reads it so unquoted"
                          : "Hydra reads true and false so");
        }
        else if (!s_null (sb_config_get (cfg, "reader.data_loader_classname"))
                 && s_null (sb_config_get (cfg, "reader.data_loader_sampler"))) {
            /* config.py validate: a custom loader class must say which sampler it is */
            at = sb_config_get (cfg, "reader.data_loader_classname");
            snprintf (why, sizeof why, "DLIO_local_changes refuses a custom data loader class without"
                      " reader.data_loader_sampler (config.py's validate stops, after datagen when the workflow"
                      " generates data); add reader.data_loader_sampler: index (the sampler of PyTorch's loader, the"
                      " one shardbench runs for this file) or iterative");
            refused = 1;
        }
        if (!refused)
            continue;
        sb_config_where (at, where, sizeof where);
        if (!wl->lenient) {
            snprintf (err, err_size, "%s: key '%s': %s; or set shardbench.lenient: true to run it anyway, with a"
                      " warning", where, at->key, why);
            return -1;
        }
        sb_warn ("%s: key '%s': %s; running it anyway (shardbench.lenient: true)", where, at->key, why);
    }
    return 0;
}

/* reader.file_shuffle as DLIO_local_changes reads it: LoadConfig keeps the
 * value as written (no conversion to its Shuffle enum, unlike
 * sample_shuffle) and reconfigure shuffles whenever it is not Shuffle.OFF,
 * which no YAML or Hydra value is: the text 'off' (quoted, or from the
 * command line) is a str, a bare off is YAML 1.1's False. Only a missing key
 * gives no file shuffle. A value that reads as off shuffles (seeded, as
 * every DLIO file shuffle), with one warning. */
static void
s_file_shuffle (sb_config_t *cfg, sb_workload_t *wl)
{
    const sb_config_entry_t *e = sb_config_get (cfg, "reader.file_shuffle");
    if (!e || wl->file_shuffle != SB_SHUFFLE_OFF)
        return;
    wl->file_shuffle = SB_SHUFFLE_SEED;
    char where[1200], given[200];
    if (e->is_bool)
        snprintf (given, sizeof given, "%s reads %.64s as the boolean false", e->line ? "YAML 1.1, unquoted," : "Hydra",
                  e->value);
    else
        snprintf (given, sizeof given, "the text '%.64s'%s", e->value, e->line ? ", quoted" : " from the command line");
    sb_warn ("%s: key 'reader.file_shuffle': '%s' shuffles the files, as DLIO_local_changes reads it: DLIO keeps the"
             " value as given (%s) and shuffles files whenever it is not its own Shuffle.OFF, which no file or"
             " command line can give; leave the key out for no file shuffle", sb_config_where (e, where, sizeof where),
             e->value, given);
}

int
sb_workload_from_config (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    memset (wl, 0, sizeof *wl);
    /* ${...} references resolved, then reader: storage keys taken as storage: ones, before any key is read */
    if (sb_config_interpolate (cfg, sb_workload_is_secret_key, s_env_ref_kept, err, err_size) != 0
        || s_dlio_refusals (cfg, wl, err, err_size) != 0 || sb_storage_keys_reader (cfg, err, err_size) != 0)
        return -1;
    /* files and overrides are checked as they are read; ${oc.env:VAR} brings
     * the environment's bytes, which runs.config must not store raw */
    for (size_t i = 0; i < sb_config_count (cfg); i++) {
        const sb_config_entry_t *e = sb_config_at (cfg, i);
        int ok = !e->value || sb_utf8_valid (e->value);
        for (size_t j = 0; ok && e->items && j < e->nitems; j++)
            ok = sb_utf8_valid (e->items[j]);
        if (!ok) {
            char where[1200];
            snprintf (err, err_size, "%s: key '%s': not valid UTF-8 (after ${...} references are resolved)",
                      sb_config_where (e, where, sizeof where), e->key);
            return -1;
        }
    }
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys[i];
        if (k->type == T_IGNORED || k->type == T_CUSTOM || k->type == T_NA)
            continue;
        const sb_config_entry_t *e = sb_config_get (cfg, k->key);
        if (s_parse (k, e, e ? (e->value ? e->value : "") : k->fallback, wl, err, err_size) != 0)
            return -1;
    }
    s_file_shuffle (cfg, wl);
    sb_config_where (sb_config_get (cfg, "reader.batch_size"), wl->batch_size_origin, sizeof wl->batch_size_origin);
    if (s_format_lower (cfg, wl) != 0) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    if (s_aliases (cfg, wl, err, err_size) != 0 || s_compute (cfg, wl, err, err_size) != 0)
        return -1;
    if (s_ckpt_keys (cfg, wl, err, err_size) != 0)
        return -1;
    if (wl->read_threads == 0)
        wl->read_threads = 1;   /* DLIO: 0 reads on the main process */
    (void) sb_storage_engine_from_uri (wl->data_folder, &wl->storage);   /* a synthetic:// data folder says it all */
    if (sb_storage_keys_placeholders (cfg, err, err_size) != 0
        || sb_storage_keys_resolve (cfg, wl, err, err_size) != 0 || s_compute_stdev (cfg, wl, err, err_size) != 0
        || s_reader_misc (cfg, err, err_size) != 0 || s_preprocess (cfg, wl, err, err_size) != 0)
        return -1;
    if (s_storage_endpoints (cfg, wl, err, err_size) != 0 || sb_storage_keys_finish (cfg, wl, err, err_size) != 0
        || sb_workload_engine_options (cfg, wl, err, err_size) != 0
        || sb_storage_keys_engine_defaults (cfg, wl, err, err_size) != 0 || s_engine_configure (cfg, wl, err, err_size))
        return -1;
    if (sb_ckpt_target_check (cfg, wl, err, err_size) != 0)   /* the checkpoint folder's storage */
        return -1;
    if (!(wl->heartbeat_timeout_s > wl->heartbeat_interval_s)) {
        const sb_config_entry_t *e = sb_config_get (cfg, "shardbench.heartbeat_timeout_s");
        char where[1200];
        snprintf (err, err_size, "%s: key 'shardbench.heartbeat_timeout_s': %g must exceed the heartbeat interval %g",
                  sb_config_where (e, where, sizeof where), wl->heartbeat_timeout_s, wl->heartbeat_interval_s);
        return -1;
    }
    struct { const char *key, *value, *allowed; } choices[] = {
        { "shardbench.sampler", wl->sampler, "dlio global" },
        { "reader.data_loader_sampler", wl->data_loader_sampler, " index iterative" },
    };
    for (size_t i = 0; i < sizeof choices / sizeof *choices; i++) {
        char padded[64];
        snprintf (padded, sizeof padded, " %s ", choices[i].value);
        char allowed[64];
        snprintf (allowed, sizeof allowed, " %s ", choices[i].allowed);
        if (*choices[i].value && strstr (allowed, padded))
            continue;
        if (!*choices[i].value && choices[i].allowed[0] == ' ')
            continue;
        const sb_config_entry_t *e = sb_config_get (cfg, choices[i].key);
        char where[1200];
        snprintf (err, err_size, "%s: key '%s': '%s' is not one of: %s", sb_config_where (e, where, sizeof where),
                  choices[i].key, choices[i].value, choices[i].allowed[0] == ' ' ? choices[i].allowed + 1
                                                                                  : choices[i].allowed);
        return -1;
    }
    if (wl->total_training_steps != floor (wl->total_training_steps)
        || (wl->total_training_steps < 1 && wl->total_training_steps != -1 && wl->total_training_steps != 0)) {
        const sb_config_entry_t *e = sb_config_get (cfg, "train.total_training_steps");
        char where[1200];
        snprintf (err, err_size, "%s: key 'train.total_training_steps': %g is not a whole number of steps (-1: none)",
                  sb_config_where (e, where, sizeof where), wl->total_training_steps);
        return -1;
    }
    for (const char *p = wl->format; *p; p++)
        if (*p == '/') {
            const sb_config_entry_t *e = sb_config_get (cfg, "dataset.format");
            char where[1200];
            snprintf (err, err_size, "%s: key 'dataset.format': '%s' must not contain '/'",
                      sb_config_where (e, where, sizeof where), wl->format);
            return -1;
        }
    char why[512];
    if (sb_format_check (wl->format, why, sizeof why) != 0) {
        const sb_config_entry_t *e = sb_config_get (cfg, "dataset.format");
        char where[1200];
        snprintf (err, err_size, "%s: key 'dataset.format': %s", sb_config_where (e, where, sizeof where), why);
        return -1;
    }
    /* the parts of every object name: nothing that leaves the data folder */
    static const char *const name_keys[] = { "dataset.file_prefix", "dataset.format" };
    for (size_t i = 0; i < 2; i++) {
        const char *part = i == 0 ? wl->file_prefix : wl->format;
        if (sb_dataset_check_part (part, why, sizeof why) != 0) {
            char where[1200];
            snprintf (err, err_size, "%s: key '%s': %s", sb_config_where (sb_config_get (cfg, name_keys[i]), where,
                      sizeof where), name_keys[i], why);
            return -1;
        }
    }
    if (wl->file_prefix[0] == '.') {
        /* the listing skips hidden files (and datagen's .*.tmp): such a dataset would be written, then never found */
        char where[1200];
        snprintf (err, err_size, "%s: key 'dataset.file_prefix': '%s' starts with '.': object names would be hidden"
                  " files, which the listing skips", sb_config_where (sb_config_get (cfg, "dataset.file_prefix"), where,
                  sizeof where), wl->file_prefix);
        return -1;
    }
    if (s_parquet_columns (cfg, wl, err, err_size) != 0 || s_parquet_compression (cfg, wl, err, err_size) != 0
        || s_parquet_read_columns (cfg, wl, err, err_size) != 0)
        return -1;
    if (s_record_shape (cfg, wl, err, err_size) != 0 || s_ckpt_lists (cfg, wl, err, err_size) != 0)
        return -1;
    s_record_length_spellings (cfg, wl);
    /* Unknown keys: a warning each, with where they came from. DLIO keys
     * shardbench does not act on: listed once, on one line. */
    char ignored[2048] = "";
    size_t used = 0;
    for (size_t i = 0; i < sb_config_count (cfg); i++) {
        const sb_config_entry_t *e = sb_config_at (cfg, i);
        const s_key_t *k = s_find (e->key);
        char where[1200];
        if (k && k->type != T_IGNORED)
            continue;
        if (strncmp (e->key, "dataset.parquet.columns.", 24) == 0 || strcmp (e->key, "dataset.parquet.columns") == 0)
            continue;   /* read by s_parquet_columns */
        if (sb_storage_keys_is_reader_option (e->key))
            continue;   /* read by s_reader_storage */
        const char *engine_key;
        int alias;
        if (s_engine_of_key (e->key, &engine_key, &alias))
            continue;   /* read by sb_workload_engine_options */
        int shape = k ? 0 : s_shape_error (e, err, err_size);
        if (shape < 0)
            return -1;
        if (shape > 0)
            continue;
        if (!k && e->line == 0 && !strcmp (e->origin, "command line") && !e->hydra_add) {
            /* KEY=VALUE is shardbench's own form: a typo there (train.epoch=1) would
             * otherwise run the default silently. A workload file and Hydra's
             * ++workload.KEY=VALUE may carry keys for other DLIO versions: warnings. */
            char near[600];
            s_nearest_keys (e->key, near, sizeof near);
            snprintf (err, err_size, "command line: unknown key '%s'%s (`shardbench run --help` lists the keys;"
                      " ++workload.%s=VALUE adds a key shardbench does not know, with a warning, as DLIO's Hydra"
                      " does)", e->key, near, e->key);
            return -1;
        }
        if (!k && sb_workload_is_secret_key (e->key))
            sb_warn ("%s: unknown key '%s' ignored and its value not recorded: each storage engine reads its"
                     " credentials from the environment, or from the keys docs/STORAGE.md names",
                     sb_config_where (e, where, sizeof where), e->key);
        else if (k || s_dlio_section (e->key))
            s_ignored_add (ignored, sizeof ignored, &used, e->key);
        else
            sb_warn ("%s: unknown key '%s' ignored", sb_config_where (e, where, sizeof where), e->key);
    }
    if (used)
        sb_info ("DLIO keys this version ignores: %s", ignored);
    return 0;
}

/* Parts of a name that say it holds a credential wherever they appear in it
 * (case aside): secret_access_key, client_secret, db_password, auth_token,
 * apiKey, private_key, sas_token, connection_string (Azure's holds the key). */
static const char *const s_secret_parts[] = {
    "secret", "password", "passwd", "passphrase", "token", "access_key", "accesskey", "credential", "api_key",
    "apikey", "api-key", "bearer", "signature", "private", "authorization", "connection_string",
    "connectionstring", "account_key", "accountkey",
};
/* Whole words (s_has_word) that do: too short to look for inside others
 * (pass is in bypass, sas in sasl, sig in design). */
static const char *const s_secret_words[] = { "pass", "pwd", "sas", "sig" };

/* 1 when text holds word as a whole word: words are split at anything but
 * a letter or digit, and where a lower-case letter meets an upper-case one
 * (sasToken: sas, token); case aside. last: only its last word counts. */
static int
s_has_word (const char *text, const char *word, int last)
{
    size_t n = strlen (word);
    int found = 0;
    for (const char *p = text; *p;) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) {
            p++;
            continue;
        }
        const char *start = p++;
        while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || ((*p >= 'A' && *p <= 'Z')
               && !(p[-1] >= 'a' && p[-1] <= 'z')))
            p++;
        int match = (size_t) (p - start) == n && strncasecmp (start, word, n) == 0;
        if (match && !last)
            return 1;
        found = match;
    }
    return found;
}

static int
s_names_secret (const char *text)
{
    for (size_t i = 0; i < sizeof s_secret_parts / sizeof s_secret_parts[0]; i++)
        if (strcasestr (text, s_secret_parts[i]))
            return 1;
    for (size_t i = 0; i < sizeof s_secret_words / sizeof s_secret_words[0]; i++)
        if (s_has_word (text, s_secret_words[i], 0))
            return 1;
    return 0;
}

/* 1 when a segment of key (the first n bytes) is storage_options or
 * credentials: there a bare `key` (or account_key, sseKey) is one. */
static int
s_credential_section (const char *key, size_t n)
{
    static const char *const sections[] = { "storage_options", "credentials", "credential" };
    for (const char *seg = key; seg < key + n;) {
        const char *end = memchr (seg, '.', (size_t) (key + n - seg));
        size_t len = end ? (size_t) (end - seg) : (size_t) (key + n - seg);
        for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
            if (len == strlen (sections[i]) && strncasecmp (seg, sections[i], len) == 0)
                return 1;
        seg += len + 1;
    }
    return 0;
}

int
sb_workload_is_secret_key (const char *key)
{
    const char *last = strrchr (key, '.');
    const char *name = last ? last + 1 : key;
    return s_names_secret (name)
        || (last && s_credential_section (key, (size_t) (last - key)) && s_has_word (name, "key", 1));
}

const char *
sb_workload_secret_value (const char *assignment)
{
    const char *key = assignment + strspn (assignment, "+"), *eq = strchr (key, '=');
    if (!eq)
        return NULL;
    if (!strncmp (key, "workload.", 9) && key + 9 <= eq)
        key += 9;
    char k[512];
    int len = snprintf (k, sizeof k, "%.*s", (int) (eq - key), key);
    const char *value = eq + 1 + strspn (eq + 1, " \t");
    if (len < 0 || (size_t) len >= sizeof k || sb_workload_is_secret_key (k)
        || ((*value == '{' || *value == '[')
            && (s_names_secret (value) || (s_credential_section (k, strlen (k)) && s_has_word (value, "key", 0)))))
        return eq + 1;
    return NULL;
}

int
sb_workload_check_seed (sb_config_t *cfg, const sb_workload_t *wl, uint64_t seed, int from_option,
                        uint64_t ranks, char *err, size_t err_size)
{
    if (strcasecmp (wl->sampler, "global") == 0)
        return 0;   /* its shuffles mix the seed into 64 bits: no numpy bound */
    /* the most added to the seed, as sampler_dlio.c derives the seeds */
    uint64_t most = 0, r = ranks ? ranks - 1 : 0;
    int any = 0;
    const char *how = "";
    if (wl->file_shuffle != SB_SHUFFLE_OFF) {
        most = r > UINT64_MAX / 62 ? UINT64_MAX : wl->epochs + 31 * r;
        any = 1;
        how = r ? " + 31 x rank" : "";
    }
    if (wl->sample_shuffle != SB_SHUFFLE_OFF) {
        uint64_t s = wl->seed_change_epoch ? wl->epochs : 0;
        most = s > most ? s : most;
        any = 1;
    }
    if (!any || (most <= SB_NP_SEED_MAX && seed <= SB_NP_SEED_MAX - most))
        return 0;
    char where[1200], largest[64];
    if (most > SB_NP_SEED_MAX)
        snprintf (largest, sizeof largest, "none");
    else
        snprintf (largest, sizeof largest, "%llu", (unsigned long long) (SB_NP_SEED_MAX - most));
    int epoch_added = wl->file_shuffle != SB_SHUFFLE_OFF || wl->seed_change_epoch;
    char seeds[160], ranks_text[64] = "", origin[1100];
    snprintf (seeds, sizeof seeds, "seed%s%s, up to seed + %llu", epoch_added ? " + epoch" : "", how,
              (unsigned long long) most);
    if (r && wl->file_shuffle != SB_SHUFFLE_OFF)
        snprintf (ranks_text, sizeof ranks_text, " over %llu ranks", (unsigned long long) ranks);
    if (from_option)
        snprintf (where, sizeof where, "--seed");
    else
        snprintf (where, sizeof where, "%s: key 'train.seed'",
                  sb_config_where (sb_config_get (cfg, "train.seed"), origin, sizeof origin));
    snprintf (err, err_size, "%s: %llu is too large: the shuffles of %llu epoch(s)%s seed numpy with %s, and"
              " np.random.seed takes at most 2**32-1 (4294967295), where DLIO stops; the largest seed here is %s",
              where, (unsigned long long) seed, (unsigned long long) wl->epochs, ranks_text, seeds, largest);
    return -1;
}

const char *
sb_workload_sync_name (sb_sync_t sync)
{
    return sync == SB_SYNC_EPOCH ? "epoch" : "step";
}

const char *
sb_workload_shuffle_name (sb_shuffle_t shuffle)
{
    return shuffle == SB_SHUFFLE_SEED ? "seed" : shuffle == SB_SHUFFLE_RANDOM ? "random" : "off";
}

void
sb_workload_print_keys (void *file)
{
    FILE *f = file;
    for (size_t i = 0; i < S_NKEYS; i++)
        if (s_keys[i].type != T_IGNORED && s_keys[i].type != T_ALIAS && s_keys[i].type != T_NA)
            fprintf (f, "  %-36s %-10s %s\n", s_keys[i].key, s_keys[i].fallback, s_keys[i].doc);
    /* the options each engine of this build declares (storage.<engine>.<key>) */
    const sb_engine_ops_t *ops;
    for (size_t i = 0; (ops = sb_engine_at (i)); i++)
        for (const sb_engine_option_t *o = ops->options; o && o->key; o++) {
            char key[96];
            snprintf (key, sizeof key, "storage.%s.%s", ops->name, o->key);
            const char *dflt = !o->dflt ? "" : o->type != SB_OPT_BOOL ? o->dflt : strcmp (o->dflt, "0") ? "true" : "false";
            fprintf (f, "  %-36s %-10s %s (the %s engine%s%s)\n", key, dflt, o->help ? o->help : "", ops->name,
                     o->alias ? "; also " : "", o->alias ? o->alias : "");
        }
}

int
sb_workload_model_name (const char *config_yaml, char *name, size_t size)
{
    const s_key_t *k = s_find ("model.name");
    snprintf (name, size, "%s", k && k->fallback ? k->fallback : "");
    if (!config_yaml)
        return -1;
    sb_config_t *cfg = sb_config_new ();
    char err[512];
    int rc = -1;
    if (cfg && sb_config_load_string (cfg, config_yaml, "runs.config", err, sizeof err) == 0) {
        const sb_config_entry_t *e = sb_config_get (cfg, "model.name");
        if (e && e->value)
            snprintf (name, size, "%s", e->value);
        rc = 0;
    }
    sb_config_destroy (&cfg);
    return rc;
}

/* the results directory */
int
sb_workload_add_defaults (sb_config_t *cfg)
{
    int added = 0;
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys[i];
        if (k->type == T_IGNORED || k->type == T_ALIAS || k->type == T_NA || k->type == T_CUSTOM
            || k->type == T_DIST || k->type == T_LIST || !k->fallback || !*k->fallback)
            continue;
        size_t klen = strlen (k->key);
        int clash = 0;  /* given, or a section or a value where the key would nest */
        for (size_t j = 0; !clash && j < sb_config_count (cfg); j++) {
            const char *have = sb_config_at (cfg, j)->key;
            size_t hlen = strlen (have);
            clash = !strcmp (have, k->key) || (hlen > klen && !strncmp (have, k->key, klen) && have[klen] == '.')
                 || (klen > hlen && !strncmp (k->key, have, hlen) && k->key[hlen] == '.');
        }
        if (clash)
            continue;
        if (sb_config_set_at (cfg, k->key, k->fallback, "default", 0) != 0)
            return -1;
        added++;
    }
    return added;
}
