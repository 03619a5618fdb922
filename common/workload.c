/* workload: one table of every key, its type, default and bounds. */
#include "workload.h"
#include "dataset.h"
#include "format.h"
#include "log.h"

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
               T_IGNORED } s_type_t;

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
    { "dataset.record_length", T_ALIAS, 0, 0, "dataset.record_length_bytes", 0, 0, "older DLIO spelling" },
    { "dataset.record_length_stdev", T_ALIAS, 0, 0, "dataset.record_length_bytes_stdev", 0, 0, "older DLIO spelling" },
    { "dataset.parquet.row_group_size", T_U64, OFF (parquet_row_group), 0, "0", 0, 1e9, "rows per parquet row group (0: 1 MiB of records)" },
    { "dataset.compression", T_STR, STRF (compression), "none", 0, 0, "parquet page codec: none | snappy | gzip | zstd (DLIO's key; other formats: recorded only)" },
    { "dataset.num_subfolders_train", T_U64, OFF (num_subfolders_train), 0, "0", 0, 1e7, "subfolders of train/ (DLIO rule)" },
    { "dataset.skip_listing", T_BOOL, OFF (skip_listing), 0, "false", 0, 0, "no listing: DLIO names for num_files_train" },
    { "dataset.listing_validation_interval", T_U64, OFF (listing_validation_interval), 0, "1000", 1, 1e12, "skip_listing: check every k-th object exists" },
    { "reader.batch_size", T_U64, OFF (batch_size), 0, "1", 1, 1e9, "samples per step per rank" },
    { "reader.read_threads", T_U64, OFF (read_threads), 0, "1", 0, 1024, "loader (and file read) threads per rank; 1 is raised as DLIO does, to min(cores / local ranks, 8)" },
    { "reader.prefetch_size", T_U64, OFF (prefetch_size), 0, "2", 0, 1e6, "batches read ahead per rank" },
    { "reader.sample_shuffle", T_SHUFFLE, OFF (sample_shuffle), 0, "off", 0, 0, "off | seed | random" },
    { "reader.file_shuffle", T_SHUFFLE, OFF (file_shuffle), 0, "off", 0, 0, "off | seed | random" },
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
    { "storage.storage_type", T_STORAGE, OFF (storage.type), 0, "local_fs", 0, 0, "local_fs | s3 | synthetic" },
    { "storage.storage_root", T_STR, STRF (storage.bucket), "", 0, 0, "S3 bucket (s3)" },
    { "storage.storage_options.endpoint_url", T_STR, OFF (storage.endpoints[0]), 256, "", 0, 0, "one S3 endpoint, http(s)://HOST:PORT" },
    { "storage.storage_options.endpoint_urls", T_LIST, OFF (storage.endpoints), 256, "", 0, 0, "several endpoints: [URL, URL, ...]" },
    { "storage.storage_options.load_balance", T_LB, OFF (storage.lb), 0, "round_robin", 0, 0, "round_robin | least_connections" },
    { "storage.storage_options.region", T_STR, STRF (storage.region), "", 0, 0, "signing region (default $AWS_REGION, else us-east-1)" },
    { "storage.storage_options.path_style", T_BOOL, OFF (storage.path_style), 0, "true", 0, 0, "/bucket/key URLs (false: bucket.host)" },
    { "storage.storage_options.max_in_flight", T_U64, OFF (storage.max_in_flight), 0, "16", 1, 4096, "concurrent requests per rank" },
    { "storage.storage_options.connect_timeout_s", T_F64, OFF (storage.connect_timeout_s), 0, "5", 0.01, 600, "TCP connect timeout" },
    { "storage.storage_options.request_timeout_s", T_F64, OFF (storage.request_timeout_s), 0, "60", 0.01, 86400, "whole-request timeout" },
    { "storage.storage_options.max_retries", T_U64, OFF (storage.max_retries), 0, "5", 0, 100, "retries of a transient failure" },
    { "storage.storage_options.multipart_threshold_bytes", T_U64, OFF (storage.multipart_threshold), 0, "67108864", 5242880, 5368709120.0, "multipart upload from this size (S3: 5 MiB to 5 GiB, a single PUT's limit)" },
    { "storage.storage_options.multipart_part_bytes", T_U64, OFF (storage.multipart_part), 0, "16777216", 5242880, 5368709120.0, "multipart part size (S3: 5 MiB to 5 GiB; at most the threshold)" },
    { "storage.storage_options.list_parallelism", T_U64, OFF (storage.list_parallelism), 0, "4", 1, 64, "concurrent listing streams over key ranges" },
    { "storage.storage_options.list_page_size", T_U64, OFF (storage.list_page_size), 0, "1000", 1, 1000, "keys per ListObjectsV2 page" },
    { "storage.storage_options.sign_payload", T_BOOL, OFF (storage.sign_payload), 0, "false", 0, 0, "hash PUT bodies (false: UNSIGNED-PAYLOAD)" },
    { "storage.storage_options.columns", T_LIST, 0, 0, "", 0, 0, "parquet columns read, [name, ...] (DLIO's key; default all)" },
    { "shardbench.accelerators", T_U64, OFF (accelerators), 0, "0", 0, 1e6, "ranks when --accelerators is absent (0: 1)" },
    { "shardbench.heartbeat_interval_s", T_F64, OFF (heartbeat_interval_s), 0, "1", 0.05, 60, "heartbeat period" },
    { "shardbench.heartbeat_timeout_s", T_F64, OFF (heartbeat_timeout_s), 0, "10", 0.2, 3600, "silence that counts as lost" },
    { "shardbench.stall_timeout_s", T_F64, OFF (stall_timeout_s), 0, "120", 0, 86400, "a file read without progress this long fails the run (0: never)" },
    { "shardbench.keys_page", T_U64, OFF (keys_page), 0, "256", 1, 65536, "keys per page sent to a rank" },
    { "shardbench.io_buffer_bytes", T_U64, OFF (io_buffer_bytes), 0, "1048576", 4096, 1073741824, "read buffer per I/O thread" },
    { "shardbench.sampler", T_STR, STRF (sampler), "dlio", 0, 0, "dlio: DLIO's per-rank files and order | global: one shuffle over all samples and ranks" },
    { "shardbench.drop_page_cache", T_BOOL, OFF (drop_page_cache), 0, "true", 0, 0, "evict the epoch's files from the page cache before it (posix_fadvise)" },
    { "shardbench.trace", T_STR, STRF (trace), "", 0, 0, "folder for per-read trace files, one per worker (\"\": none)" },
    { "shardbench.remote_worker", T_STR, STRF (remote_worker), "", 0, 0, "worker binary on --hosts hosts (default $SHARDBENCH_REMOTE_WORKER, else shardbench-worker on PATH)" },
    /* model and checkpoint: `shardbench checkpoint` (coordinator/checkpoint.c) */
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
    { "checkpoint.num_checkpoints_write", T_U64, OFF (ckpt.num_write), 0, "1", 0, 1e6, "checkpoints to write" },
    { "checkpoint.num_checkpoints_read", T_U64, OFF (ckpt.num_read), 0, "1", 0, 1e6, "checkpoints to read back" },
    { "checkpoint.fsync", T_BOOL, OFF (ckpt.fsync), 0, "true", 0, 0, "fsync every checkpoint file" },
    { "checkpoint.mode", T_STR, STRF (ckpt.mode), "default", 0, 0, "default | subset (only some ranks of the full run)" },
    { "checkpoint.time_between_checkpoints", T_F64, OFF (ckpt.time_between), 0, "0", 0, 86400, "emulated training between checkpoints, s" },
    { "checkpoint.scale", T_F64, OFF (ckpt.scale), 0, "1", 1e-12, 1, "scale every checkpoint size (small runs)" },
    { "model.type", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "model.model_size", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "reader.shuffle_size", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    /* DLIO keys accepted and recorded, not acted on by this version. */
    { "workflow.profiling", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "dataset.keep_files", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "dataset.record_length_bytes_resize", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "reader.read_type", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "reader.computation_threads", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "reader.transfer_size", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    { "reader.dont_use_mmap", T_IGNORED, 0, 0, 0, 0, 0, 0 },
    /* issue 15, workflow */
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
    { "evaluation.eval_after_epoch", T_U64, OFF (eval_after_epoch), 0, "1", 1, 1e9, "first epoch after which evaluation runs" },
    { "evaluation.epochs_between_evals", T_U64, OFF (epochs_between_evals), 0, "1", 1, 1e9, "epochs from one evaluation to the next" },
};

#define S_NKEYS (sizeof s_keys / sizeof s_keys[0])

static const char *
s_where (const sb_config_entry_t *e, char *buf, size_t size)
{
    if (!e)
        snprintf (buf, size, "default");
    else if (e->line > 0)
        snprintf (buf, size, "%s:%d", e->origin, e->line);
    else
        snprintf (buf, size, "%s", e->origin);
    return buf;
}

static int
s_parse (const s_key_t *k, const sb_config_entry_t *e, const char *text, sb_workload_t *wl,
         char *err, size_t err_size)
{
    char where[1200];
    s_where (e, where, sizeof where);
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
        if (!strcasecmp (text, "local_fs") || !strcasecmp (text, "file") || !strcasecmp (text, "posix"))
            *(sb_storage_type_t *) at = SB_STORAGE_FILE;
        else if (!strcasecmp (text, "s3"))
            *(sb_storage_type_t *) at = SB_STORAGE_S3;
        else if (!strcasecmp (text, "synthetic"))
            *(sb_storage_type_t *) at = SB_STORAGE_SYNTHETIC;
        else {
            snprintf (err, err_size, "%s: key '%s': expected local_fs, s3 or synthetic, got '%s'", where, k->key, text);
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
    case T_LIST:
    case T_DIST:
    case T_ALIAS:
    case T_IGNORED:
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
    const sb_config_entry_t *one = sb_config_get (cfg, "storage.storage_options.endpoint_url");
    const sb_config_entry_t *origin = list ? list : one;
    st->nendpoints = 0;
    if (list) {
        size_t n = list->items ? list->nitems : 1;
        if (n == 0 || n > SB_MAX_ENDPOINTS) {
            snprintf (err, err_size, "%s: key 'storage.storage_options.endpoint_urls': %zu endpoints, expected 1 to %d",
                      s_where (list, where, sizeof where), n, SB_MAX_ENDPOINTS);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            const char *v = list->items ? list->items[i] : list->value;
            if (strlen (v) >= sizeof st->endpoints[0]) {
                snprintf (err, err_size, "%s: key 'storage.storage_options.endpoint_urls': endpoint too long",
                          s_where (list, where, sizeof where));
                return -1;
            }
            snprintf (st->endpoints[st->nendpoints++], sizeof st->endpoints[0], "%s", v);
        }
    }
    else if (one && one->value && *one->value)
        snprintf (st->endpoints[st->nendpoints++], sizeof st->endpoints[0], "%s", one->value);
    else if (getenv ("AWS_ENDPOINT_URL") && *getenv ("AWS_ENDPOINT_URL")) {
        snprintf (st->endpoints[st->nendpoints++], sizeof st->endpoints[0], "%s", getenv ("AWS_ENDPOINT_URL"));
        origin = NULL;
    }
    if (!st->region[0]) {
        const char *r = getenv ("AWS_REGION");
        if (!r || !*r)
            r = getenv ("AWS_DEFAULT_REGION");
        snprintf (st->region, sizeof st->region, "%s", r && *r ? r : "us-east-1");
    }
    /* whatever the storage type: the endpoints are part of the recorded configuration */
    for (size_t i = 0; i < st->nendpoints; i++) {
        const char *v = st->endpoints[i];
        if (strchr (v, '@') && (origin || st->type == SB_STORAGE_S3)) {
            /* http://USER:PASSWORD@HOST: the URL is recorded and sent to the
             * workers, so a password in it would be too; not repeated here */
            snprintf (err, err_size, "%s: key 'storage.storage_options.endpoint_url%s': endpoint %zu holds a user name"
                      " or password (USER:PASSWORD@): refused, since endpoints are recorded and sent to the workers;"
                      " give http(s)://HOST[:PORT] and the credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
                      origin ? s_where (origin, where, sizeof where) : "environment AWS_ENDPOINT_URL", list ? "s" : "",
                      i + 1);
            return -1;
        }
    }
    if (st->type != SB_STORAGE_S3)
        return 0;
    if (!st->bucket[0]) {
        const sb_config_entry_t *e = sb_config_get (cfg, "storage.storage_type");
        snprintf (err, err_size, "%s: key 'storage.storage_root': an S3 workload needs the bucket name",
                  s_where (e, where, sizeof where));
        return -1;
    }
    if (st->nendpoints == 0) {
        /* AWS itself: virtual-host style */
        snprintf (st->endpoints[st->nendpoints++], sizeof st->endpoints[0], "https://s3.%s.amazonaws.com", st->region);
        if (!sb_config_get (cfg, "storage.storage_options.path_style"))
            st->path_style = 0;
    }
    for (size_t i = 0; i < st->nendpoints; i++) {
        const char *v = st->endpoints[i];
        const char *host = strncmp (v, "http://", 7) == 0 ? v + 7 : strncmp (v, "https://", 8) == 0 ? v + 8 : NULL;
        if (!host || !*host || (strchr (host, '/') != NULL && strcmp (strchr (host, '/'), "/") != 0)) {
            snprintf (err, err_size, "%s: key 'storage.storage_options.endpoint_url%s': '%s' is not http(s)://HOST[:PORT]",
                      origin ? s_where (origin, where, sizeof where) : "environment AWS_ENDPOINT_URL", list ? "s" : "", v);
            return -1;
        }
    }
    if (wl->storage.multipart_part > wl->storage.multipart_threshold) {
        /* never clamped behind the user's back: say which keys disagree */
        const sb_config_entry_t *part = sb_config_get (cfg, "storage.storage_options.multipart_part_bytes");
        snprintf (err, err_size, "%s: key 'storage.storage_options.multipart_part_bytes': %llu is larger than"
                  " storage.storage_options.multipart_threshold_bytes (%llu): a part is at most the threshold",
                  part ? s_where (part, where, sizeof where) : "defaults",
                  (unsigned long long) wl->storage.multipart_part, (unsigned long long) wl->storage.multipart_threshold);
        return -1;
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
 * value where a section belongs). Writes the error and returns -1, else 0. */
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
                      s_where (e, where, sizeof where), k->key, e->key + kn + 1);
            return -1;
        }
        if (kn > n && strncmp (k->key, e->key, n) == 0 && k->key[n] == '.') {
            snprintf (err, err_size, "%s: key '%s': expected a section of keys (such as '%s'), got a %s",
                      s_where (e, where, sizeof where), e->key, k->key, e->items ? "list" : "single value");
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
                      "and a dtype", s_where (e, where, sizeof where), i);
            return -1;
        }
        int w = snprintf (wl->parquet_columns + used, sizeof wl->parquet_columns - used, "%s%s:%s:%s", i ? "," : "",
                          name->value, dtype->value, size && size->value ? size->value : "1");
        if (w < 0 || (size_t) w >= sizeof wl->parquet_columns - used) {
            snprintf (err, err_size, "%s: key 'dataset.parquet.columns': the list is over %zu characters",
                      s_where (name, where, sizeof where), sizeof wl->parquet_columns - 1);
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
        snprintf (err, err_size, "%s: key 'dataset.parquet.columns': %s", s_where (e, where, sizeof where), why);
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
                  s_where (sb_config_get (cfg, "dataset.compression"), where, sizeof where), why);
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
                      s_where (e, where, sizeof where), i, v);
            return -1;
        }
        int w = snprintf (wl->parquet_read_columns + used, sizeof wl->parquet_read_columns - used, "%s%s",
                          i ? "," : "", v);
        if (w < 0 || (size_t) w >= sizeof wl->parquet_read_columns - used) {
            snprintf (err, err_size, "%s: key 'storage.storage_options.columns': the list is over %zu characters",
                      s_where (e, where, sizeof where), sizeof wl->parquet_read_columns - 1);
            return -1;
        }
        used += (size_t) w;
    }
    if (!used || strcmp (wl->format, "parquet") != 0)
        return 0;
    char why[512];
    if (sb_format_parquet_read_check (wl->parquet_columns, wl->parquet_read_columns, why, sizeof why) != 0) {
        snprintf (err, err_size, "%s: key 'storage.storage_options.columns': %s", s_where (e, where, sizeof where),
                  why);
        return -1;
    }
    return 0;
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

/* train.computation_time: a number (a constant, as in DLIO), or a mapping
 * read the way DLIO's sleep() reads it: {mean[, stdev]} (normal when stdev
 * is there) or {type: normal | uniform | gamma | exponential | poisson, and
 * that type's parameters}. When the file gives one form and the command line
 * the other, the command line wins. */
static int
s_compute (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    enum { P_MEAN, P_STDEV, P_MIN, P_MAX, P_SHAPE, P_SCALE, P_LAM, P_N };
    static const char *params[P_N] = { "mean", "stdev", "min", "max", "shape", "scale", "lam" };
    /* parameters each type needs, as bits of 1 << P_* */
    static const unsigned needs[] = {
        [SB_DIST_NORMAL] = 1u << P_MEAN | 1u << P_STDEV, [SB_DIST_UNIFORM] = 1u << P_MIN | 1u << P_MAX,
        [SB_DIST_GAMMA] = 1u << P_SHAPE | 1u << P_SCALE, [SB_DIST_EXPONENTIAL] = 1u << P_SCALE,
        [SB_DIST_POISSON] = 1u << P_LAM,
    };
    const char *prefix = "train.computation_time.";
    char where[1200], key[64];
    const sb_config_entry_t *scalar = sb_config_get (cfg, "train.computation_time");
    const sb_config_entry_t *type_e = sb_config_get (cfg, "train.computation_time.type");
    const sb_config_entry_t *pe[P_N], *first = type_e;
    double pv[P_N] = { 0 };
    unsigned given = 0;
    int from_cli = type_e && type_e->line == 0;
    for (size_t i = 0; i < sb_config_count (cfg); i++) {
        const sb_config_entry_t *e = sb_config_at (cfg, i);
        if (strncmp (e->key, prefix, strlen (prefix)) == 0 && !s_find (e->key)) {
            snprintf (err, err_size, "%s: key '%s': not a parameter of train.computation_time (type, mean, stdev,"
                      " min, max, shape, scale, lam)", s_where (e, where, sizeof where), e->key);
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
                      s_where (pe[p], where, sizeof where), key, k->min, k->max, pe[p]->items ? "a list" : text);
            return -1;
        }
        pv[p] = v;
        given |= 1u << p;
        first = first ? first : pe[p];
        from_cli |= pe[p]->line == 0;
    }
    if (!first || (scalar && (scalar->line == 0 || !from_cli))) {
        if (first && scalar->line != 0) {
            snprintf (err, err_size, "%s: key 'train.computation_time': given both as a number and as a mapping (%s)",
                      s_where (scalar, where, sizeof where), s_where (first, key, sizeof key));
            return -1;
        }
        wl->compute = (sb_dist_t) { SB_DIST_CONSTANT, wl->computation_time, 0 };
        return 0;
    }
    sb_dist_t d = { SB_DIST_CONSTANT, 0, 0 };
    unsigned need;
    if (type_e) {
        const char *name = type_e->value ? type_e->value : "";
        if (type_e->items || sb_dist_parse (name, &d.type) != 0 || d.type == SB_DIST_CONSTANT) {
            snprintf (err, err_size, "%s: key 'train.computation_time.type': expected normal, uniform, gamma,"
                      " exponential or poisson, got '%s'", s_where (type_e, where, sizeof where),
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
            snprintf (err, err_size, "%s: key 'train.computation_time': %s needs '%s'",
                      s_where (first, where, sizeof where), type_e ? sb_dist_name (d.type) : "a mapping without type",
                      params[p]);
            return -1;
        }
        if (!(need & (1u << p)) && (given & (1u << p))) {
            snprintf (err, err_size, "%s: key '%s': not a parameter of %s", s_where (pe[p], where, sizeof where), key,
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
        snprintf (err, err_size, "%s: key 'train.computation_time': %s", s_where (first, where, sizeof where), why);
        return -1;
    }
    wl->compute = d;
    wl->computation_time = sb_dist_mean (&d);
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
            sb_warn ("%s: key '%s' ignored: '%s' is set too (%s)", s_where (e, where, sizeof where), alias->key,
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

int
sb_workload_from_config (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size)
{
    memset (wl, 0, sizeof *wl);
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys[i];
        if (k->type == T_IGNORED)
            continue;
        const sb_config_entry_t *e = sb_config_get (cfg, k->key);
        if (s_parse (k, e, e ? (e->value ? e->value : "") : k->fallback, wl, err, err_size) != 0)
            return -1;
    }
    s_where (sb_config_get (cfg, "reader.batch_size"), wl->batch_size_origin, sizeof wl->batch_size_origin);
    if (s_aliases (cfg, wl, err, err_size) != 0 || s_compute (cfg, wl, err, err_size) != 0)
        return -1;
    if (wl->read_threads == 0)
        wl->read_threads = 1;   /* DLIO: 0 reads on the main process */
    if (strncmp (wl->data_folder, "synthetic://", 12) == 0)
        wl->storage.type = SB_STORAGE_SYNTHETIC;   /* a synthetic:// data folder says it all */
    if (s_storage_endpoints (cfg, wl, err, err_size) != 0)
        return -1;
    if (!(wl->heartbeat_timeout_s > wl->heartbeat_interval_s)) {
        const sb_config_entry_t *e = sb_config_get (cfg, "shardbench.heartbeat_timeout_s");
        char where[1200];
        snprintf (err, err_size, "%s: key 'shardbench.heartbeat_timeout_s': %g must exceed the heartbeat interval %g",
                  s_where (e, where, sizeof where), wl->heartbeat_timeout_s, wl->heartbeat_interval_s);
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
        snprintf (err, err_size, "%s: key '%s': '%s' is not one of: %s", s_where (e, where, sizeof where),
                  choices[i].key, choices[i].value, choices[i].allowed[0] == ' ' ? choices[i].allowed + 1
                                                                                  : choices[i].allowed);
        return -1;
    }
    if (wl->total_training_steps != floor (wl->total_training_steps)
        || (wl->total_training_steps < 1 && wl->total_training_steps != -1 && wl->total_training_steps != 0)) {
        const sb_config_entry_t *e = sb_config_get (cfg, "train.total_training_steps");
        char where[1200];
        snprintf (err, err_size, "%s: key 'train.total_training_steps': %g is not a whole number of steps (-1: none)",
                  s_where (e, where, sizeof where), wl->total_training_steps);
        return -1;
    }
    for (const char *p = wl->format; *p; p++)
        if (*p == '/') {
            const sb_config_entry_t *e = sb_config_get (cfg, "dataset.format");
            char where[1200];
            snprintf (err, err_size, "%s: key 'dataset.format': '%s' must not contain '/'",
                      s_where (e, where, sizeof where), wl->format);
            return -1;
        }
    char why[512];
    if (sb_format_check (wl->format, why, sizeof why) != 0) {
        const sb_config_entry_t *e = sb_config_get (cfg, "dataset.format");
        char where[1200];
        snprintf (err, err_size, "%s: key 'dataset.format': %s", s_where (e, where, sizeof where), why);
        return -1;
    }
    /* the parts of every object name: nothing that leaves the data folder */
    static const char *const name_keys[] = { "dataset.file_prefix", "dataset.format" };
    for (size_t i = 0; i < 2; i++) {
        const char *part = i == 0 ? wl->file_prefix : wl->format;
        if (sb_dataset_check_part (part, why, sizeof why) != 0) {
            char where[1200];
            snprintf (err, err_size, "%s: key '%s': %s", s_where (sb_config_get (cfg, name_keys[i]), where,
                      sizeof where), name_keys[i], why);
            return -1;
        }
    }
    if (s_parquet_columns (cfg, wl, err, err_size) != 0 || s_parquet_compression (cfg, wl, err, err_size) != 0
        || s_parquet_read_columns (cfg, wl, err, err_size) != 0)
        return -1;
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
        if (strncmp (e->key, "dataset.parquet.columns.", 24) == 0)
            continue;   /* read by s_parquet_columns */
        if (!k && s_shape_error (e, err, err_size) != 0)
            return -1;
        if (!k && sb_workload_is_secret_key (e->key))
            sb_warn ("%s: key '%s' is not used and its value is not recorded: S3 credentials come from"
                     " AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN or a shared credentials file"
                     " (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE)", s_where (e, where, sizeof where), e->key);
        else if (k || s_dlio_section (e->key))
            s_ignored_add (ignored, sizeof ignored, &used, e->key);
        else
            sb_warn ("%s: unknown key '%s' ignored", s_where (e, where, sizeof where), e->key);
    }
    if (used)
        sb_info ("DLIO keys this version ignores: %s", ignored);
    return 0;
}

int
sb_workload_is_secret_key (const char *key)
{
    static const char *const words[] = { "secret", "password", "passwd", "token", "access_key", "credential" };
    const char *last = strrchr (key, '.');
    last = last ? last + 1 : key;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasestr (last, words[i]))
            return 1;
    return 0;
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
        if (s_keys[i].type != T_IGNORED && s_keys[i].type != T_ALIAS)
            fprintf (f, "  %-36s %-10s %s\n", s_keys[i].key, s_keys[i].fallback, s_keys[i].doc);
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
