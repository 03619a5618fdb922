/* workload: the typed, validated view of a DLIO workload configuration.
 *
 * Every key shardbench knows is listed once in workload.c's key table with
 * its type, default and bounds. Errors name the file, line and key. DLIO
 * keys shardbench does not act on are reported once as ignored; keys nobody
 * knows are warned about with their path. */
#ifndef SB_WORKLOAD_H
#define SB_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "distribution.h"
#include "shard.h"
#include "storage.h"

typedef enum { SB_SYNC_STEP, SB_SYNC_EPOCH } sb_sync_t;

/* Bytes of dataset.parquet.columns as "name:dtype:size,..." text, its NUL
 * included: the longest string WELCOME carries (SB_PROTO_MAX_STR) plus one.
 * DLRM's 200 columns take about 4.3 KB; this fits about 1500. */
#define SB_WORKLOAD_COLUMNS_MAX 32768

/* Items of model.layer_parameters or model.optimization_groups at most, and
 * the largest item: bounds that keep a checkpoint's bytes in uint64. */
#define SB_CKPT_LIST_MAX  64
#define SB_CKPT_ITEM_MAX  1099511627776LL

/* The model and checkpoint keys of `shardbench checkpoint` (DLIO's model.*
 * and checkpoint.* sections; sizes in coordinator/session/ckpt_plan.c). */
typedef struct {
    uint64_t    num_layers;
    char        model_datatype[16];     /* fp16 | bf16 | fp32 | fp64 | int8 | uint8 */
    char        optimizer_datatype[16];
    uint64_t    tensor, pipeline;       /* model.parallelism.* */
    uint64_t    data;                   /* model.parallelism.data: subset mode only (0: unset) */
    uint64_t    zero_stage;
    uint64_t    vocab_size, hidden_size, ffn_hidden_size, num_attention_heads, num_kv_heads;
    char        folder[1024];           /* checkpoint.checkpoint_folder */
    uint64_t    num_write, num_read;    /* checkpoint.num_checkpoints_write / _read */
    int         fsync;
    char        mode[16];               /* checkpoint.mode: default | subset */
    double      time_between;           /* checkpoint.time_between_checkpoints, seconds */
    double      scale;                  /* checkpoint.scale: bytes x scale (1: the real sizes) */
    char        model_type[32];         /* model.type: any but "transformer" writes a model_states-{rank} file */
    uint64_t    model_size;             /* model.model_size_bytes: that file's bytes (DLIO's default 10240) */
    int64_t     steps_between;          /* checkpoint.steps_between_checkpoints: >= 0 by step (0: never), < 0 */
    int64_t     after_epoch;            /* by epoch: checkpoint_after_epoch, then every epochs_between_checkpoints */
    int64_t     epochs_between;
    int         in_train;               /* workflow.train and workflow.checkpoint: checkpoints during training */
    int         rank_sync;              /* checkpoint.rank_sync: DLIO's rank 0 times a checkpoint until every rank is done */
    /* model.layer_parameters and model.optimization_groups: DLIO's older
     * predefined tensor sizes (elements of one byte), in place of the
     * sizes DLIO derives from model.transformer (0 items: derived) */
    int64_t     layer_parameters[SB_CKPT_LIST_MAX];
    size_t      n_layer_parameters;
    int64_t     optimization_groups[SB_CKPT_LIST_MAX];
    size_t      n_optimization_groups;
} sb_ckpt_cfg_t;

typedef struct {
    /* model, framework */
    char        model_name[128];
    char        framework[32];
    /* dataset */
    char        data_folder[1024];
    char        format[32];
    char        file_prefix[64];
    uint64_t    num_files_train;
    uint64_t    num_samples_per_file;
    uint64_t    record_length_bytes;
    uint64_t    record_length_bytes_stdev;
    char        parquet_columns[SB_WORKLOAD_COLUMNS_MAX];  /* dataset.parquet.columns as "name:dtype:size,..." ("" none) */
    uint64_t    parquet_row_group;      /* dataset.parquet.row_group_size: rows per group (0: 1 MiB of records) */
    char        compression[16];        /* dataset.compression: parquet pages none | snappy | gzip | zstd */
    char        parquet_read_columns[SB_WORKLOAD_COLUMNS_MAX]; /* storage.storage_options.columns: "a,b,..." ("" all, as DLIO) */
    uint64_t    num_subfolders_train;
    int         skip_listing;           /* keys from DLIO's naming convention, no listing */
    uint64_t    listing_validation_interval; /* with skip_listing: check every k-th object exists */
    /* reader */
    uint64_t    batch_size;
    uint64_t    read_threads;
    uint64_t    transfer_size;          /* reader.transfer_size: TFRecordDataset's read buffer (0: TensorFlow's, 256 KiB) */
    uint64_t    prefetch_size;
    sb_shuffle_t sample_shuffle;
    sb_shuffle_t file_shuffle;
    int         verify;
    char        data_loader[32];        /* reader.data_loader ("" : the framework's) */
    char        data_loader_sampler[16];/* reader.data_loader_sampler ("" : the loader's) */
    int         odirect;                /* reader.odirect */
    /* train */
    uint64_t    epochs;
    double      computation_time;   /* mean of `compute` (seconds per batch) */
    sb_dist_t   compute;            /* train.computation_time: a number, {mean, stdev} or {type, ...} */
    uint64_t    seed;
    sb_sync_t   sync;
    int         seed_change_epoch;      /* train.seed_change_epoch */
    double      total_training_steps;   /* train.total_training_steps (-1: none; a whole number) */
    uint64_t    exclude_start_steps;    /* output.metric.exclude_start_steps */
    uint64_t    exclude_end_steps;      /* output.metric.exclude_end_steps */
    /* metric */
    double      au;
    /* storage */
    sb_storage_cfg_t storage;
    /* model and checkpoint (shardbench checkpoint) */
    sb_ckpt_cfg_t ckpt;
    /* shardbench's own keys */
    uint64_t    accelerators;       /* 0: not set */
    double      heartbeat_interval_s;
    double      heartbeat_timeout_s;
    uint64_t    barrier_fanout;         /* step barrier: workers per relay (coordinator/session/barrier.c) */
    double      stall_timeout_s;        /* a rank's read without progress this long fails the run; 0: never */
    uint64_t    keys_page;
    uint64_t    io_buffer_bytes;
    char        sampler[16];            /* shardbench.sampler: "dlio" | "global" */
    int         drop_page_cache;        /* shardbench.drop_page_cache */
    char        trace[1024];            /* shardbench.trace: folder of per-read traces ("" none) */
    char        remote_worker[1024];/* shardbench.remote_worker: worker binary on --hosts hosts */
    int         lenient;                /* shardbench.lenient: run what DLIO refuses, with a warning each */
    /* where reader.batch_size was set ("w.yaml:5", "command line",
     * "default"), for the error of a batch larger than a shard, which only
     * the coordinator's plan can find */
    char        batch_size_origin[300];
    char        storage_type_given[32]; /* storage.storage_type as written (s3dlio, object, direct_fs, ...) */
    char        storage_library[32];    /* storage.storage_library: s3dlio | s3torchconnector | minio ("" none) */
    char        storage_protocol[16];   /* storage.protocol (storage_type object): s3 | file | direct ("" none) */
    char        storage_summary[256];   /* the engine and what chose it: "s3 (storage_library minio)" */
    char        load_balance_strategy[32]; /* storage.load_balance_strategy as written ("" none) */
    int         endpoint_per_rank;      /* storage.use_mpi_endpoint_distribution */
    int         credentials_in_file;    /* storage.storage_options holds access_key_id and secret_access_key */
    char        record_element_type[16];  /* dataset.record_element_type: numpy's name ("uint8") */
    uint64_t    record_dims[8];           /* dataset.record_dims (SB_DATASET_MAX_DIMS at most) */
    size_t      record_ndims;             /* 0: DLIO's dim1 x dim2 from record_length_bytes */
    /* what a `run` does (DLIO's workflow section) and
     * the evaluation set, read as DLIO reads them (docs/DLIO.md) */
    int         generate_data;          /* workflow.generate_data */
    int         do_train;               /* workflow.train */
    int         do_eval;                /* workflow.evaluation */
    int         do_checkpoint;          /* workflow.checkpoint */
    uint64_t    num_files_eval;         /* dataset.num_files_eval: objects under valid/ */
    uint64_t    num_subfolders_eval;    /* dataset.num_subfolders_eval */
    uint64_t    batch_size_eval;        /* reader.batch_size_eval */
    double      eval_time;              /* evaluation.eval_time: seconds per evaluation step (mean) */
    double      eval_time_stdev;        /* evaluation.eval_time_stdev (0: constant) */
    uint64_t    eval_after_epoch;       /* evaluation.eval_after_epoch */
    uint64_t    epochs_between_evals;   /* evaluation.epochs_between_evals */
    /* DLIO's sleep per sample in its loader workers
     * (reader_handler.py preprocess), read as DLIO's sleep() reads it */
    double      preprocess_time;        /* reader.preprocess_time as a number (mean of `preprocess`) */
    sb_dist_t   preprocess;             /* a number, {mean[, stdev]}, {type, ...} or with preprocess_time_stdev */
} sb_workload_t;

/* Fill *wl from cfg (defaults for absent keys). Returns 0, or -1 with
 * "origin:line: key 'k': problem" in err. Warnings (unknown keys, ignored
 * DLIO keys) are logged. */
int sb_workload_from_config (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size);

/* storage.<engine>.<key> (lib/storage/engine.h, sb_engine_option_t): the
 * options the engine in use (wl->storage.engine) declares, checked against
 * their type and range and kept as text in wl->storage.opts (numbers in
 * bytes or units, booleans 0 or 1). A key of another engine, or one the
 * engine does not declare, is an error naming file:line, the key and the
 * engine. Called by sb_workload_from_config once the engine is chosen.
 * Returns 0 or -1 with err. */
int sb_workload_engine_options (sb_config_t *cfg, sb_workload_t *wl, char *err, size_t err_size);

/* 1 when key holds a credential, else 0: its last segment names a secret,
 * a password (pass, passwd, pwd, passphrase), a token, a bearer, an access
 * key, an API key, an account key, a private key, a signature (sig, sas), an
 * authorization, a connection string or a credential (e.g.
 * storage.storage_options.secret_access_key, api_key, sasToken), or, under
 * a storage_options or credentials section, ends in the word key
 * (storage.storage_options.key). Such a value is never stored or sent
 * (sb_config_redact). */
int sb_workload_is_secret_key (const char *key);

/* Where the value of a command-line assignment ("[+...][workload.]KEY=VALUE")
 * begins when that value must not be recorded, else NULL: KEY's last segment
 * names a secret (sb_workload_is_secret_key), KEY is too long to tell, or
 * VALUE is a {...} or [...] flow collection that names a secret anywhere
 * (storage.storage_options={access_key_id: A, secret_access_key: S}); such
 * a value is redacted whole. Borrowed: a pointer into assignment. */
const char *sb_workload_secret_value (const char *assignment);

/* The dlio sampler seeds numpy's np.random.seed, which takes at most
 * 2**32-1 (DLIO stops there), with seed + epoch for epochs 1..train.epochs
 * and, with reader.file_shuffle, seed + epoch + 31 x rank for ranks
 * 0..ranks-1. Check before anything starts that every seed of the run fits:
 * seed is the run seed (train.seed of cfg, or --seed when from_option).
 * Returns 0, or -1 with err naming where the seed came from, the key and
 * the largest seed allowed. Nothing to check with the global sampler or
 * without shuffles. */
int sb_workload_check_seed (sb_config_t *cfg, const sb_workload_t *wl, uint64_t seed, int from_option,
                            uint64_t ranks, char *err, size_t err_size);

/* Name of a sync or shuffle mode ("step", "seed", ...). Borrowed. */
const char *sb_workload_sync_name (sb_sync_t sync);
const char *sb_workload_shuffle_name (sb_shuffle_t shuffle);

/* The model name (model.name, DLIO's workload name) that the effective
 * configuration config_yaml (runs.config) gives, or the key's default when
 * it gives none, into name. Returns 0, or -1 (name holds the default) when
 * config_yaml is NULL or does not parse. */
int sb_workload_model_name (const char *config_yaml, char *name, size_t size);

/* The DLIO keys of cfg that shardbench accepts without acting on them, one
 * info line each with the reason (framework internals such as
 * reader.pin_memory). Call once per run. Returns how many. */
int sb_workload_log_not_applicable (sb_config_t *cfg);

/* Give the credentials a workload file carries to this process's
 * environment: each engine's export_credentials op (lib/storage/engine.h)
 * reads its own keys; the coordinator's own clients (listing, preflight)
 * and the local workers it forks use them; nothing else sees them (remote
 * workers use their own environment). Call before sb_config_redact, before
 * any thread starts. Returns 1 when some were exported, 0 when the file
 * holds none, -1 with err (naming file:line and key, never the value). */
int sb_workload_export_credentials (sb_config_t *cfg, char *err, size_t err_size);

/* set every known key that cfg does not
 * give to its default (origin "default"), so that sb_config_to_yaml writes
 * the full effective configuration (run_inputs.full_config). Keys read by
 * code rather than the table (distributions, lists, storage internals) and
 * a default that would nest under or over a key cfg gives are left out.
 * Returns how many were set, or -1 when memory runs out. */
int sb_workload_add_defaults (sb_config_t *cfg);

/* Print the table of known keys (for --help). */
void sb_workload_print_keys (void *file);

#endif
