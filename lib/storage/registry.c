/* registry: the engines shardbench is built with: the ones lib/meson.build's
 * storage_engines builds (sb_engines.h), plus engines a test registers. Adding
 * an engine is its folder (lib/storage/NAME/, with its meson.build) and its
 * line in storage_engines. */
#include <string.h>

#include "engine.h"
#include "sb_engines.h"

/* sb_engine_<name> of every engine built (sb_engines.h, from meson) */
#define SB_ENGINE(name) extern const sb_engine_ops_t sb_engine_##name;
SB_ENGINES
#undef SB_ENGINE

static const sb_engine_ops_t *const s_engines[] = {
#define SB_ENGINE(name) &sb_engine_##name,
    SB_ENGINES
#undef SB_ENGINE
};

#define S_BUILT (sizeof s_engines / sizeof s_engines[0])

/* engines added by sb_engine_register (tests) */
static const sb_engine_ops_t *s_extra[SB_ENGINE_EXTRA_MAX];
static size_t s_nextra;

const sb_engine_ops_t *
sb_engine_at (size_t i)
{
    return i < S_BUILT ? s_engines[i] : i - S_BUILT < s_nextra ? s_extra[i - S_BUILT] : NULL;
}

const sb_engine_ops_t *
sb_engine_find (const char *name)
{
    const sb_engine_ops_t *ops;
    for (size_t i = 0; name && (ops = sb_engine_at (i)); i++)
        if (!strcmp (ops->name, name))
            return ops;
    return NULL;
}

int
sb_engine_register (const sb_engine_ops_t *ops)
{
    if (!ops || !ops->name || !ops->open || !ops->close || sb_engine_find (ops->name) || s_nextra >= SB_ENGINE_EXTRA_MAX)
        return -1;
    s_extra[s_nextra++] = ops;
    return 0;
}

static int
s_listed (const char *const *names, const char *name)
{
    for (size_t i = 0; names && names[i]; i++)
        if (!strcmp (names[i], name))
            return 1;
    return 0;
}

const sb_engine_ops_t *
sb_engine_for_scheme (const char *scheme)
{
    const sb_engine_ops_t *ops;
    for (size_t i = 0; scheme && (ops = sb_engine_at (i)); i++)
        if (s_listed (ops->schemes, scheme))
            return ops;
    return NULL;
}

const sb_engine_ops_t *
sb_engine_for_storage_type (const char *storage_type)
{
    const sb_engine_ops_t *ops;
    for (size_t i = 0; storage_type && (ops = sb_engine_at (i)); i++)
        if (s_listed (ops->storage_types, storage_type))
            return ops;
    return NULL;
}

const sb_engine_ops_t *
sb_engine_of (const sb_storage_cfg_t *cfg)
{
    return cfg ? sb_engine_find (cfg->engine) : NULL;
}

const char *
sb_storage_scheme (const sb_storage_cfg_t *cfg)
{
    const sb_engine_ops_t *ops = sb_engine_of (cfg);
    return ops && ops->schemes && ops->schemes[0] ? ops->schemes[0] : cfg->engine;
}

unsigned
sb_storage_caps (const sb_storage_cfg_t *cfg)
{
    const sb_engine_ops_t *ops = sb_engine_of (cfg);
    return ops ? ops->caps : 0;
}
