/* registry: the engines shardbench is built with. Adding an engine is its
 * folder (lib/storage/NAME/, with its meson.build) and one line here. */
#include <string.h>

#include "engine.h"

extern const sb_engine_ops_t sb_engine_file;
extern const sb_engine_ops_t sb_engine_direct;
extern const sb_engine_ops_t sb_engine_synthetic;
#ifdef SB_HAVE_S3
extern const sb_engine_ops_t sb_engine_s3;
#endif
#ifdef SB_HAVE_URING
extern const sb_engine_ops_t sb_engine_uring;
#endif

static const sb_engine_ops_t *const s_engines[] = {
    &sb_engine_file,
    &sb_engine_direct,
#ifdef SB_HAVE_URING
    &sb_engine_uring,
#endif
#ifdef SB_HAVE_S3
    &sb_engine_s3,
#endif
    &sb_engine_synthetic,
};

const sb_engine_ops_t *
sb_engine_at (size_t i)
{
    return i < sizeof s_engines / sizeof s_engines[0] ? s_engines[i] : NULL;
}

const sb_engine_ops_t *
sb_engine_find (const char *name)
{
    for (size_t i = 0; name && i < sizeof s_engines / sizeof s_engines[0]; i++)
        if (!strcmp (s_engines[i]->name, name))
            return s_engines[i];
    return NULL;
}

const sb_engine_ops_t *
sb_engine_of (const sb_storage_cfg_t *cfg)
{
    return cfg ? sb_engine_find (cfg->engine) : NULL;
}

unsigned
sb_storage_caps (const sb_storage_cfg_t *cfg)
{
    const sb_engine_ops_t *ops = sb_engine_of (cfg);
    return ops ? ops->caps : 0;
}
