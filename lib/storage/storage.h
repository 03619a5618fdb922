/* storage: where the dataset lives, as configured (DLIO's storage section).
 *
 * Shared by the coordinator (listing, preflight) and the workers (reads,
 * datagen); sent to workers in WELCOME without any credential. */
#ifndef SB_STORAGE_H
#define SB_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#define SB_MAX_ENDPOINTS 32

/* per_rank (storage.use_mpi_endpoint_distribution, DLIO's S3_ENDPOINT_URIS
 * rule): rank r sends every request to endpoint r mod N (sb_storage_for_rank);
 * a client of all endpoints (the coordinator's) goes round robin. */
typedef enum { SB_LB_ROUND_ROBIN, SB_LB_LEAST_CONNECTIONS, SB_LB_PER_RANK } sb_lb_t;

/* Engine-owned options (lib/storage/engine.h, sb_engine_option_t): the
 * keys storage.<engine>.<key> of the workload, as text. */
#define SB_STORAGE_OPTS_MAX 32
typedef struct {
    char engine[16];    /* the engine the option belongs to: the dataset's, or (given by its alias) another's,
                           which a checkpoint folder on that engine uses (lib/storage/ckpt_target.h) */
    char key[48];
    char value[208];
} sb_storage_opt_t;

typedef struct {
    char     engine[16];                            /* the engine's name (lib/storage/engine.h): "file", "direct",
                                                       "uring", "s3", "synthetic"; callers ask its capabilities */
    sb_storage_opt_t opts[SB_STORAGE_OPTS_MAX];     /* engine-owned options */
    size_t   nopts;
    /* The top-level name of an object store's location SCHEME://STORE/PREFIX
     * (SB_ENGINE_OBJECTS: the name the store's own API gives it), as
     * the workload loader splits it; "" for folder engines. */
    char     store[256];
    char     endpoints[SB_MAX_ENDPOINTS][256];      /* http(s)://host:port */
    size_t   nendpoints;
    sb_lb_t  lb;
    uint64_t max_in_flight;                         /* requests per rank */
    double   connect_timeout_s;
    double   request_timeout_s;
    uint64_t max_retries;
    uint64_t list_parallelism;                      /* concurrent listing streams over key ranges (the coordinator's) */
    /* DLIO's iterable readers (docs/DLIO.md, "Reads in flight"): */
    uint64_t prefetch_window;                       /* storage_options.prefetch_window (0: DLIO's default of the path) */
    uint64_t prefetch_workers;                      /* storage_options.prefetch_workers (0: DLIO's 64) */
    uint64_t prefetch;                              /* storage_options.prefetch: s3dlio parquet threads (0: 32) */
    uint64_t max_outstanding;                       /* storage_options.max_outstanding (0: DLIO's 1024) */
    uint64_t coalesce_rgs;                          /* storage_options.coalesce_rgs (0: DLIO's 8) */
    uint64_t footer_cap;                            /* storage_options.footer_cap (0: DLIO's 4 MiB) */
    uint64_t footer_batch_size;                     /* storage_options.footer_batch_size (0: DLIO's 16) */
    int      stagger_workers;                       /* storage_options.stagger_workers (default 1) */
    int      direct_fs_iterable;                    /* storage_type direct_fs without reader.odirect: DLIO's
                                                       local iterable readers (lib/dataset/loader_depth.h) */
    uint64_t loader_depth;                          /* reads in flight per loader thread (lib/dataset/loader_depth.h):
                                                       0: shardbench's rule (reader.h), sent in WELCOME */
} sb_storage_cfg_t;

/* The value of engine-owned option key (storage.<engine>.<key>) as
 * configured, else the engine's declared default, else NULL. Borrowed. */
const char *sb_storage_opt (const sb_storage_cfg_t *cfg, const char *key);
/* The same for the options of engine, whichever engine cfg names (an
 * engine that shares another's client and settings). */
const char *sb_storage_opt_of (const sb_storage_cfg_t *cfg, const char *engine, const char *key);
/* Set (or replace) engine's option key: 0, or -1 when it does not fit. */
int sb_storage_opt_set (sb_storage_cfg_t *cfg, const char *engine, const char *key, const char *value);

/* "round_robin" | "least_connections" | "per_rank". Borrowed. */
const char *sb_storage_lb_name (sb_lb_t lb);

/* cfg (zeroed first) for the local file system's own engine, the one a
 * data folder given as a plain path is read with: for callers that list or
 * check a local folder without a workload's storage (shardbench catalog). */
void sb_storage_cfg_local (sb_storage_cfg_t *cfg);

/* When data_folder is a URI that names an engine by itself
 * ("synthetic://..."), set cfg->engine to it and return 1; else 0. */
int sb_storage_engine_from_uri (const char *data_folder, sb_storage_cfg_t *cfg);

/* The storage rank uses: cfg itself, except with SB_LB_PER_RANK, where its
 * only endpoint is endpoint rank mod N (as DLIO's ObjStoreLibStorage picks
 * S3_ENDPOINT_URIS[rank % N]). The clients a rank makes (reads, datagen,
 * checkpoints) take this copy. */
void sb_storage_for_rank (const sb_storage_cfg_t *cfg, uint64_t rank, sb_storage_cfg_t *out);

/* One endpoint as configured (storage.storage_options.endpoint_url,
 * storage.endpoint_uris, or an engine's environment), checked in place in its buffer
 * of size bytes: a non-empty one without "://" (HOST:PORT, as DLIO's minio
 * adapter takes it) gains "http://" where that fits. Returns 0 when it then
 * is http(s)://HOST[:PORT][/PATH] (an engine whose endpoints take no path,
 * s3, refuses one in its configure op), -1 when not. */
int sb_storage_endpoint_normalize (char *endpoint, size_t size);

/* The storage fields of WELCOME, both ways, in one place so that the
 * coordinator and the workers cannot disagree: the engine's name, its
 * options as "engine.key=value" strings (engine_opts, whatever they mean),
 * the store's name, the endpoints and the request settings. to_welcome points the message's
 * strings into cfg and allocates one block for the endpoints and the
 * options (the caller frees welcome->endpoints.items only); from_welcome
 * copies, refusing an engine this build lacks. Return 0 or -1. */
int sb_storage_to_welcome (const sb_storage_cfg_t *cfg, void *welcome);
int sb_storage_from_welcome (const void *welcome, sb_storage_cfg_t *cfg, char *err, size_t err_size);

#endif
