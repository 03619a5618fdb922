/* gcs: Google Cloud Storage (gs://STORE/PREFIX, storage.storage_type gcs)
 * through its XML API, which speaks S3's protocol: requests signed with
 * S3's signature version 4 by an HMAC key of a service account (interoperability
 * keys; GCS's own OAuth tokens are not used), ListObjectsV2, ranged GETs,
 * multipart uploads. So this engine is the S3 engine's ops and settings
 * (lib/storage/s3/) with GCS's names, its endpoint
 * (https://storage.googleapis.com) and signing location ("auto"). The
 * HMAC key is read where a client opens, as the S3 engine's credentials
 * (docs/STORAGE.md, "Google Cloud Storage"). */
#include "engine.h"
#include "s3_config.h"
#include "s3_engine.h"

static int
s_configure (sb_storage_cfg_t *cfg, const sb_engine_setup_t *setup, char *err, size_t err_size)
{
    /* GCS has one endpoint for every location; "auto" is what its XML API
     * expects in an HMAC signature's scope */
    return sb_s3_configure_as (cfg, setup, "https://storage.googleapis.com", "auto", err, err_size);
}

static const char *const s_storage_types[] = { "gcs", "gs", NULL };
static const char *const s_schemes[] = { "gs", NULL };

const sb_engine_ops_t sb_engine_gcs = {
    .name = "gcs",
    .caps = SB_S3_ENGINE_CAPS,
    .storage_types = s_storage_types,
    .schemes = s_schemes,
    .configure = s_configure,
    .export_credentials = sb_s3_export_credentials,
    SB_S3_ENGINE_OPS,
};
