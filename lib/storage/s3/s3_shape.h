/* s3_shape: the requests DLIO_local_changes' S3 client libraries
 * (storage.storage_library) issue, as sizes and counts the S3 engine
 * reproduces (docs/DLIO.md, "Reads in flight").
 *
 * Checkpoints (checkpointing/pytorch_obj_store_checkpointing.py through
 * mlcommons/storage's StreamingCheckpointing writers and readers): every
 * object is a multipart upload, whatever its size (minio's writer creates
 * the upload when it opens, s3dlio's MultipartUploadWriter too, and
 * s3torchconnector's put_object is mountpoint-s3-client's multipart
 * put): parts of 32 MiB (minio, s3dlio) or the CRT client's 8 MiB
 * (s3torchconnector), max(2, ceil(16 / ranks)) parts in flight (minio's
 * thread pool, s3dlio's semaphore) or the CRT's 10 connections of one
 * request (s3torchconnector). A load splits the object into
 * max(2, ceil(16 / ranks)) blocks read at once, each with range GETs of at
 * most 128 MiB one after another (minio, s3dlio: read_chunk_size, 4 x the
 * 32 MiB chunk), or as one CRT range request the CRT splits into 8 MiB
 * parts, 10 at once (s3torchconnector).
 *
 * Training reads: s3torchconnector's CRT client splits a GET of an object
 * larger than its part size into range GETs of 8 MiB, the first one alone
 * (it learns the size from it), then 10 at once. minio never splits.
 * s3dlio splits objects of 32 MiB or more once it knows their size
 * (sb_s3_s3dlio_split): after a HEAD, unless DLIO set its skip_head latch
 * (records under 16 MiB), then from the object's second read. */
#ifndef SB_S3_SHAPE_H
#define SB_S3_SHAPE_H

#include <stdint.h>

#include "storage.h"

typedef enum { SB_S3_LIB_NONE = 0, SB_S3_LIB_MINIO, SB_S3_LIB_S3DLIO, SB_S3_LIB_S3TORCH } sb_s3_lib_t;

/* The library an engine option "library" names (storage_keys sets it from
 * storage.storage_library); SB_S3_LIB_NONE when none or unknown. */
sb_s3_lib_t sb_s3_lib (const sb_storage_cfg_t *cfg);

/* The CRT client's part size and connections of one request
 * (s3torchconnector's S3ClientConfig; aws-c-s3's 10 connections per
 * request and endpoint address). */
#define SB_S3_CRT_PART      (8ull << 20)
#define SB_S3_CRT_IN_FLIGHT 10u

typedef struct {
    int      shaped;        /* 0: shardbench's own (sb_s3_put, one GET) */
    uint64_t part;          /* multipart part bytes */
    uint64_t threshold;     /* multipart from this size; 0: every object */
    uint64_t upload_window; /* parts of one object in flight */
    uint64_t read_streams;  /* blocks of one object read at once */
    uint64_t read_chunk;    /* bytes of one range GET of a block */
    uint64_t read_window;   /* range GETs of one block in flight */
} sb_s3_ckpt_shape_t;

/* The checkpoint requests of cfg's library for a run of total_ranks ranks.
 * The engine options "ckpt_part" and "ckpt_threshold" (the explicit
 * storage_options.multipart_part_bytes and multipart_threshold_bytes, set
 * by storage_keys) override the library's part size and its multipart of
 * every object. */
void sb_s3_ckpt_shape (const sb_storage_cfg_t *cfg, uint64_t total_ranks, sb_s3_ckpt_shape_t *out);

/* The requests in flight the shape needs at most (the client's depth). */
uint64_t sb_s3_ckpt_depth (const sb_s3_ckpt_shape_t *shape);

/* Training GETs: a read of more than *part bytes is split into range GETs
 * of *part, the first alone, then *window at once. Returns 1 when cfg's
 * library splits, else 0. */
int sb_s3_get_split (const sb_storage_cfg_t *cfg, uint64_t *part, uint64_t *window);

/* s3dlio's GETs of a whole object (0.9.106, `src/s3_utils.rs`
 * get_object_uri_optimized_async): once it knows the size (a HEAD, or a
 * GET of the object before), an object of at least 32 MiB
 * (S3DLIO_RANGE_THRESHOLD_MB) is read in range GETs of *chunk bytes (1 MiB
 * under 16 MiB, 4 MiB under 256 MiB, else 8 MiB), *window at once
 * (max(2, cores / 2) under 32 MiB, max(4, cores) under 512 MiB, else
 * max(8, 2 x cores); cores: the host's online CPUs, as num_cpus counts
 * them). Returns 1 when it splits, 0 for one plain GET. */
int sb_s3_s3dlio_split (uint64_t size, uint64_t cores, uint64_t *chunk, uint64_t *window);

/* DLIO's skip_head latch (_s3_iterable_mixin.py): s3dlio issues no HEAD
 * (a plain GET, the size cached for later reads) when record_length (the
 * engine option "record_length", dataset.record_length_bytes) is under
 * this. */
#define SB_S3DLIO_HEAD_RECORD (16ull << 20)

#endif
