/* s3_config: the S3 engine's own configuration: its options (storage.s3.KEY,
 * or the storage.storage_options spellings DLIO's and mlcommons/storage's
 * files use), what it takes from the environment (AWS_ENDPOINT_URL,
 * AWS_REGION), and what it checks. Nothing here is a credential: the
 * credentials are read where a client opens (s3_creds.c). */
#include "engine.h"
#include "log.h"
#include "s3_client.h"
#include "s3_config.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MIB (1024ull * 1024ull)

const sb_engine_option_t sb_s3_options[] = {
    { .key = "region", .type = SB_OPT_STRING, .alias = "storage.storage_options.region",
      .help = "signing region (default $AWS_REGION, else $AWS_DEFAULT_REGION, else us-east-1)" },
    { .key = "path_style", .type = SB_OPT_BOOL, .dflt = "1", .max = 1,
      .alias = "storage.storage_options.path_style", .help = "/bucket/key URLs (false: bucket.host/key)" },
    { .key = "force_path_style", .type = SB_OPT_BOOL, .max = 1, .alias = "storage.storage_options.s3_force_path_style",
      .help = "DLIO's spelling of path_style (both given: they must agree)" },
    { .key = "multipart_threshold", .type = SB_OPT_SIZE, .dflt = "67108864", .min = 5 * S_MIB, .max = 5120 * S_MIB,
      .alias = "storage.storage_options.multipart_threshold_bytes",
      .help = "multipart upload from this size (5 MiB to 5 GiB, a single PUT's limit); checkpoints with a"
              " storage_library: every object unless given" },
    { .key = "multipart_part", .type = SB_OPT_SIZE, .dflt = "16777216", .min = 5 * S_MIB, .max = 5120 * S_MIB,
      .alias = "storage.storage_options.multipart_part_bytes",
      .help = "multipart part size (5 MiB to 5 GiB; at most the threshold); checkpoints with a storage_library: the"
              " library's (32 MiB minio, s3dlio; 8 MiB s3torchconnector) unless given" },
    { .key = "sign_payload", .type = SB_OPT_BOOL, .dflt = "0", .max = 1,
      .alias = "storage.storage_options.sign_payload", .help = "hash PUT bodies (false: UNSIGNED-PAYLOAD)" },
    { .key = "list_page_size", .type = SB_OPT_UINT, .dflt = "1000", .min = 1, .max = 1000,
      .alias = "storage.storage_options.list_page_size", .help = "keys per ListObjectsV2 page" },
    { .key = NULL },
};

static uint64_t
s_u64 (const sb_storage_cfg_t *cfg, const char *key)
{
    const char *v = sb_storage_opt_of (cfg, "s3", key);
    return v ? strtoull (v, NULL, 10) : 0;
}

void
sb_s3_settings (const sb_storage_cfg_t *cfg, sb_s3_settings_t *out)
{
    memset (out, 0, sizeof *out);
    const char *region = sb_storage_opt_of (cfg, "s3", "region");
    snprintf (out->region, sizeof out->region, "%s", region && *region ? region : "us-east-1");
    const char *force = sb_storage_opt_of (cfg, "s3", "force_path_style");
    out->path_style = (int) s_u64 (cfg, force ? "force_path_style" : "path_style");
    out->multipart_threshold = s_u64 (cfg, "multipart_threshold");
    out->multipart_part = s_u64 (cfg, "multipart_part");
    out->sign_payload = (int) s_u64 (cfg, "sign_payload");
    out->list_page_size = s_u64 (cfg, "list_page_size");
}

/* Was engine's option key given (in any spelling), not just defaulted? */
static int
s_given (const sb_storage_cfg_t *cfg, const char *key)
{
    for (size_t i = 0; i < cfg->nopts && i < SB_STORAGE_OPTS_MAX; i++)
        if (!strcmp (cfg->opts[i].engine, "s3") && !strcmp (cfg->opts[i].key, key))
            return 1;
    return 0;
}

static const char *
s_where (const sb_engine_setup_t *setup, const char *key, const char *alias, char *buf, size_t size)
{
    const char *w = setup && setup->where ? setup->where (setup->ctx, alias, buf, size) : NULL;
    if (!w && setup && setup->where)
        w = setup->where (setup->ctx, key, buf, size);
    return w ? w : "defaults";
}

int
sb_s3_configure_as (sb_storage_cfg_t *cfg, const sb_engine_setup_t *setup, const char *default_endpoint,
                    const char *default_region, char *err, size_t err_size)
{
    char where[1200];
    if (!cfg->store[0]) {
        snprintf (err, err_size, "%s: key 'storage.storage_root': the %s engine needs the bucket name"
                  " (storage.storage_root=BUCKET, or dataset.data_folder=%s://BUCKET/PREFIX)",
                  s_where (setup, "storage.storage_root", "storage.storage_type", where, sizeof where), cfg->engine,
                  setup && setup->scheme && *setup->scheme ? setup->scheme : "s3");
        return -1;
    }
    /* ${AWS_REGION} as the upstream files write it: from the environment */
    const char *region = sb_storage_opt_of (cfg, "s3", "region");
    if (!region || !*region || !strncmp (region, "${", 2)) {
        const char *r = getenv ("AWS_REGION");
        if (!r || !*r)
            r = getenv ("AWS_DEFAULT_REGION");
        if (sb_storage_opt_set (cfg, "s3", "region", r && *r ? r : default_region) != 0) {
            snprintf (err, err_size, "environment AWS_REGION: too long, or too many storage options");
            return -1;
        }
    }
    const char *force = sb_storage_opt_of (cfg, "s3", "force_path_style");
    if (force && s_given (cfg, "path_style") && strcmp (force, sb_storage_opt_of (cfg, "s3", "path_style")) != 0) {
        char w2[1200];
        snprintf (err, err_size, "%s: key 'storage.storage_options.s3_force_path_style': disagrees with"
                  " storage.storage_options.path_style (%s)",
                  s_where (setup, "storage.s3.force_path_style", "storage.storage_options.s3_force_path_style", where,
                           sizeof where),
                  s_where (setup, "storage.s3.path_style", "storage.storage_options.path_style", w2, sizeof w2));
        return -1;
    }
    const char *env_endpoint = getenv ("AWS_ENDPOINT_URL");
    if (cfg->nendpoints == 0 && env_endpoint && *env_endpoint) {
        if (sb_strf (cfg->endpoints[0], sizeof cfg->endpoints[0], "%s", env_endpoint) != 0
            || strchr (env_endpoint, '@') || sb_storage_endpoint_normalize (cfg->endpoints[0], sizeof cfg->endpoints[0])) {
            snprintf (err, err_size, "environment AWS_ENDPOINT_URL: expected http(s)://HOST[:PORT] without a user name"
                      " or password");
            return -1;
        }
        cfg->nendpoints = 1;
    }
    if (cfg->nendpoints == 0 && setup && setup->checkpoints_only) {
        snprintf (err, err_size, "no endpoint is configured: give storage.storage_options.endpoint_url="
                  "http(s)://HOST:PORT (or storage.endpoint_uris, or the environment's AWS_ENDPOINT_URL), with"
                  " credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
        return -1;
    }
    if (cfg->nendpoints == 0) {
        /* the service itself: virtual-host style unless path style was asked for */
        char ep[sizeof cfg->endpoints[0]];
        const char *at = strstr (default_endpoint, "{region}");
        if (sb_strf (ep, sizeof ep, "%.*s%s%s", at ? (int) (at - default_endpoint) : (int) strlen (default_endpoint),
                     default_endpoint, at ? sb_storage_opt_of (cfg, "s3", "region") : "", at ? at + 8 : "") != 0) {
            snprintf (err, err_size, "the region is too long for an endpoint name");
            return -1;
        }
        memcpy (cfg->endpoints[0], ep, sizeof ep);
        cfg->nendpoints = 1;
        if (!s_given (cfg, "path_style") && !force && sb_storage_opt_set (cfg, "s3", "path_style", "0") != 0) {
            snprintf (err, err_size, "too many storage options");
            return -1;
        }
    }
    for (size_t i = 0; i < cfg->nendpoints; i++) {
        /* the bucket goes into the path or the host name: the endpoint has no path of its own */
        const char *host = strstr (cfg->endpoints[i], "://");
        const char *slash = host ? strchr (host + 3, '/') : NULL;
        if (slash && strcmp (slash, "/") != 0) {
            snprintf (err, err_size, "%s: key 'storage.storage_options.endpoint_url': '%s' is not http(s)://HOST[:PORT]:"
                      " the %s engine's endpoints take no path",
                      s_where (setup, "storage.endpoint_uris", "storage.storage_options.endpoint_url", where,
                               sizeof where), cfg->endpoints[i], cfg->engine);
            return -1;
        }
    }
    sb_s3_settings_t set;
    sb_s3_settings (cfg, &set);
    if (set.multipart_part > set.multipart_threshold) {
        /* never clamped behind the user's back: say which keys disagree */
        snprintf (err, err_size, "%s: key 'storage.storage_options.multipart_part_bytes': %llu is larger than"
                  " storage.storage_options.multipart_threshold_bytes (%llu): a part is at most the threshold",
                  s_where (setup, "storage.s3.multipart_part", "storage.storage_options.multipart_part_bytes", where,
                           sizeof where),
                  (unsigned long long) set.multipart_part, (unsigned long long) set.multipart_threshold);
        return -1;
    }
    return 0;
}

int
sb_s3_configure (sb_storage_cfg_t *cfg, const sb_engine_setup_t *setup, char *err, size_t err_size)
{
    return sb_s3_configure_as (cfg, setup, "https://s3.{region}.amazonaws.com", "us-east-1", err, err_size);
}

int
sb_s3_export_credentials (const sb_engine_setup_t *setup, char *err, size_t err_size)
{
    static const struct { const char *key, *env; } pairs[] = {
        { "storage.storage_options.access_key_id", "AWS_ACCESS_KEY_ID" },
        { "storage.storage_options.secret_access_key", "AWS_SECRET_ACCESS_KEY" },
        { "storage.storage_options.session_token", "AWS_SESSION_TOKEN" },
    };
    const char *v[3];
    int given[3];
    for (int i = 0; i < 3; i++) {
        v[i] = setup->value (setup->ctx, pairs[i].key);
        /* "" and ${VAR} (upstream files' way of saying "from the environment") are absent */
        given[i] = v[i] && *v[i] && strncmp (v[i], "${", 2) != 0;
    }
    char where[1200];
    if (given[0] != given[1]) {
        int have = given[0] ? 0 : 1;
        snprintf (err, err_size, "%s: key '%s': given without %s: give both, or neither (then the environment's"
                  " AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are used)",
                  s_where (setup, pairs[have].key, pairs[have].key, where, sizeof where), pairs[have].key,
                  pairs[1 - have].key);
        return -1;
    }
    if (!given[0]) {
        if (given[2]) {
            snprintf (err, err_size, "%s: key '%s': given without access_key_id and secret_access_key",
                      s_where (setup, pairs[2].key, pairs[2].key, where, sizeof where), pairs[2].key);
            return -1;
        }
        return 0;
    }
    for (int i = 0; i < 3; i++) {
        int rc = given[i] ? setenv (pairs[i].env, v[i], 1) : unsetenv (pairs[i].env);
        if (rc != 0) {
            snprintf (err, err_size, "%s: key '%s': cannot put it in the environment: %s",
                      s_where (setup, pairs[i].key, pairs[0].key, where, sizeof where), pairs[i].key,
                      strerror (errno));
            return -1;
        }
    }
    sb_info ("S3 credentials: from %s (storage.storage_options.access_key_id): used by this coordinator and given"
             " to its local workers through their environment; never stored or sent (workers on other hosts use"
             " their own AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or ~/.aws/credentials)",
             s_where (setup, pairs[0].key, pairs[0].key, where, sizeof where));
    return 1;
}
