/* s3_config: the S3 engine's options and its configure op
 * (lib/storage/engine.h), shared by the engines that speak S3's protocol
 * (s3; gcs, Google Cloud Storage's XML API: lib/storage/gcs/). */
#ifndef SB_S3_CONFIG_H
#define SB_S3_CONFIG_H

#include <stddef.h>

#include "engine.h"

/* storage.s3.KEY, with DLIO's storage.storage_options spellings as aliases */
extern const sb_engine_option_t sb_s3_options[];

/* The s3 engine's configure op: sb_s3_configure_as with the service's own
 * endpoint, https://s3.{region}.amazonaws.com, and us-east-1. */
int sb_s3_configure (sb_storage_cfg_t *cfg, const sb_engine_setup_t *setup, char *err, size_t err_size);

/* Configure an S3-protocol engine: the bucket is required; the region, when
 * not given, comes from AWS_REGION or AWS_DEFAULT_REGION, else
 * default_region; with no endpoint given, AWS_ENDPOINT_URL, else
 * default_endpoint ("{region}" in it replaced by the region) in virtual-host
 * style unless path style was given; the part size is at most the
 * threshold. 0, or -1 with err naming the key. */
int sb_s3_configure_as (sb_storage_cfg_t *cfg, const sb_engine_setup_t *setup, const char *default_endpoint,
                        const char *default_region, char *err, size_t err_size);

/* The export_credentials op of the engines on the S3 client: DLIO's
 * storage.storage_options.access_key_id, secret_access_key and
 * session_token (empty values and ${VAR} references count as absent) into
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, replacing
 * what was there (a stale token would not match a new pair). */
int sb_s3_export_credentials (const sb_engine_setup_t *setup, char *err, size_t err_size);

#endif
