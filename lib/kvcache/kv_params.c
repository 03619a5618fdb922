/* kv_params: the kvcache.* settings, MLPerf's options, the model table (see kv_params.h). */
#include "kv_params.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* config.yaml's model_configs, in its order: the values and labels the
 * reference loads when run with --config config.yaml, as the MLPerf wrapper
 * runs it (without it, models.py's defaults give the same sizes under other
 * labels: "DeepSeek V3", "Qwen3 32B", "GPT OSS 120B (MoE)"). The newest
 * upstream models.py and config.yaml list the same nine. All are float16.
 * deepseek-v3 gives no kv_heads in config.yaml: models.py's 128 stands
 * (MLA does not use it). */
static const sb_kv_model_t s_models[] = {
    { "tiny-1b", "Tiny 1B", 12, 1024, 8, 4, 2, 0, 0 },
    { "mistral-7b", "Mistral 7B", 32, 4096, 32, 8, 2, 0, 0 },
    { "llama2-7b", "Llama 2 7B", 32, 4096, 32, 32, 2, 0, 0 },
    { "llama3.1-8b", "Llama 3.1 8B", 32, 4096, 32, 8, 2, 0, 0 },
    { "llama3.1-70b-instruct", "Llama 3.1 70B Instruct", 80, 8192, 64, 8, 2, 0, 0 },
    { "deepseek-v3", "Deepseek v3", 61, 7168, 128, 128, 2, 0, 512 + 64 },
    { "qwen3-32b", "Qwen 3 32B", 64, 5120, 64, 8, 2, 128, 0 },
    { "gpt-oss-120b", "GPT-OSS 120B (5.1B active)", 36, 2880, 64, 8, 2, 64, 0 },
    { "gpt-oss-20b", "GPT-OSS 20B (3.6B active)", 24, 2880, 64, 8, 2, 64, 0 },
};
#define S_NMODELS (sizeof s_models / sizeof *s_models)

const sb_kv_model_t *
sb_kv_model_at (size_t i)
{
    return i < S_NMODELS ? &s_models[i] : NULL;
}

const sb_kv_model_t *
sb_kv_model_find (const char *name)
{
    for (size_t i = 0; i < S_NMODELS; i++)
        if (!strcmp (s_models[i].name, name))
            return &s_models[i];
    return NULL;
}

unsigned
sb_kv_model_head_dim (const sb_kv_model_t *m)
{
    return m->head_dim ? m->head_dim : m->hidden / m->heads;
}

uint64_t
sb_kv_model_bytes_per_token (const sb_kv_model_t *m)
{
    if (m->mla_dim)
        return (uint64_t) m->layers * m->mla_dim * m->elem_bytes;
    return (uint64_t) m->layers * m->kv_heads * sb_kv_model_head_dim (m) * 2 * m->elem_bytes;
}

unsigned
sb_kv_model_shape (const sb_kv_model_t *m, uint64_t tokens, uint64_t dims[5])
{
    if (m->mla_dim) {
        dims[0] = m->layers;
        dims[1] = tokens;
        dims[2] = m->mla_dim;
        return 3;
    }
    dims[0] = m->layers;
    dims[1] = 2;
    dims[2] = tokens;
    dims[3] = m->kv_heads;
    dims[4] = sb_kv_model_head_dim (m);
    return 5;
}

/* ---- the keys ---- */

typedef enum { K_STR, K_U64, K_F64, K_BOOL, K_MODEL, K_GENMODE, K_GPU, K_OPTION } s_kind_t;

typedef struct {
    const char *key;
    s_kind_t    kind;
    size_t      off, size;
} s_key_t;

#define F(field) offsetof (sb_kv_params_t, field), sizeof ((sb_kv_params_t *) 0)->field
/* kvcache.option first: applied, it sets the option's values, and the keys
 * after it give theirs (to_strs / from_strs round-trip) */
static const s_key_t s_keys[] = {
    { "kvcache.option", K_OPTION, F (option) },
    { "kvcache.model", K_MODEL, F (model) },
    { "kvcache.users", K_U64, F (users) },
    { "kvcache.duration_s", K_F64, F (duration_s) },
    { "kvcache.trials", K_U64, F (trials) },
    { "kvcache.pause_s", K_F64, F (pause_s) },
    { "kvcache.cache_dir", K_STR, F (cache_dir) },
    { "kvcache.cpu_mem_gb", K_F64, F (cpu_mem_gb) },
    { "kvcache.gpu_mem_gb", K_GPU, F (gpu_mem_gb) },
    { "kvcache.max_concurrent_allocs", K_U64, F (max_concurrent_allocs) },
    { "kvcache.seed", K_U64, F (seed) },
    { "kvcache.generation_mode", K_GENMODE, F (generation_mode) },
    { "kvcache.multi_turn", K_BOOL, F (multi_turn) },
    { "kvcache.prefix_caching", K_BOOL, F (prefix_caching) },
    { "kvcache.storage_capacity_gb", K_F64, F (storage_capacity_gb) },
    { "kvcache.odirect", K_BOOL, F (odirect) },
    { "kvcache.verify_storage", K_BOOL, F (verify_storage) },
};
#undef F
#define S_NKEYS (sizeof s_keys / sizeof *s_keys)

const char *const sb_kv_param_keys[] = {
    "kvcache.option", "kvcache.model", "kvcache.users", "kvcache.duration_s", "kvcache.trials",
    "kvcache.pause_s", "kvcache.cache_dir", "kvcache.cpu_mem_gb", "kvcache.gpu_mem_gb",
    "kvcache.max_concurrent_allocs", "kvcache.seed", "kvcache.generation_mode", "kvcache.multi_turn",
    "kvcache.prefix_caching", "kvcache.storage_capacity_gb", "kvcache.odirect", "kvcache.verify_storage", NULL,
};

static const char *const s_genmodes[] = { "none", "fast", "realistic", NULL };

static int
s_err (char *err, size_t n, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
static int
s_err (char *err, size_t n, const char *fmt, ...)
{
    if (err && n) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (err, n, fmt, ap);
        va_end (ap);
    }
    return -1;
}

void
sb_kv_params_default (sb_kv_params_t *p)
{
    memset (p, 0, sizeof *p);
    snprintf (p->model, sizeof p->model, "%s", "llama3.1-8b");
    p->users = 100;
    p->duration_s = 60;
    p->trials = 1;
    p->pause_s = 0;
    p->cpu_mem_gb = 32;
    p->gpu_mem_gb = 0;
    p->max_concurrent_allocs = 0;
    p->seed = 42;
    snprintf (p->generation_mode, sizeof p->generation_mode, "%s", "realistic");
    p->multi_turn = 1;
    p->prefix_caching = 1;
    p->storage_capacity_gb = 0;
    p->odirect = 0;
    p->verify_storage = 1;
    p->option = 0;
}

int
sb_kv_params_option (sb_kv_params_t *p, unsigned option, char *err, size_t n)
{
    /* mlperf_wrapper.py WORKLOAD_PARAMS: model, users, cpu tier and
     * allocation limit differ; every option runs 300 s with no GPU tier and
     * generation 'none' */
    static const struct {
        const char *model;
        uint64_t    users;
        double      cpu_mem_gb;
        uint64_t    max_concurrent_allocs;
    } opts[3] = {
        { "llama3.1-8b", 200, 0, 16 },            /* 1: maximum storage stress */
        { "llama3.1-8b", 100, 4, 16 },            /* 2: storage throughput, a 4 GiB CPU tier */
        { "llama3.1-70b-instruct", 70, 0, 4 },    /* 3: the large model */
    };
    if (option < 1 || option > 3)
        return s_err (err, n, "kvcache.option: %u is not an MLPerf Storage option (1, 2 or 3)", option);
    snprintf (p->model, sizeof p->model, "%s", opts[option - 1].model);
    p->users = opts[option - 1].users;
    p->cpu_mem_gb = opts[option - 1].cpu_mem_gb;
    p->max_concurrent_allocs = opts[option - 1].max_concurrent_allocs;
    p->duration_s = 300;
    p->gpu_mem_gb = 0;
    snprintf (p->generation_mode, sizeof p->generation_mode, "%s", "none");
    /* the wrapper's base seed (rank r: 42 + r) and its 90 s sleep (it
     * sleeps 90 s before and 90 s after each run: one pause before each
     * trial keeps the storage idle between trials as long as the first
     * pause); mlpstorage's validate runs each option three times (its
     * --trials) */
    p->seed = 42;
    p->pause_s = 90;
    p->trials = 3;
    /* the wrapper leaves kv-cache.py's defaults: multi-turn and prefix caching on */
    p->multi_turn = 1;
    p->prefix_caching = 1;
    p->option = option;
    return 0;
}

/* The known key nearest to key when it is near enough to be a typo (a
 * quarter of the key's length, at least 2; or the same name without or
 * with another section: "users" or "dlio.users" for "kvcache.users"). */
static const char *
s_nearest (const char *key)
{
    const char *dot = strrchr (key, '.');
    const char *tail = dot ? dot + 1 : key;
    size_t limit = sb_typo_limit (key);
    const char *best = NULL;
    size_t best_d = (size_t) -1;
    for (size_t i = 0; i < S_NKEYS; i++) {
        const char *k = s_keys[i].key;
        size_t d = strcmp (strchr (k, '.') + 1, tail) ? sb_edit_distance (key, k) : 1;
        if (d <= limit && d < best_d) {
            best = k;
            best_d = d;
        }
    }
    return best;
}

static const s_key_t *
s_key (const char *key)
{
    for (size_t i = 0; i < S_NKEYS; i++)
        if (!strcmp (s_keys[i].key, key))
            return &s_keys[i];
    return NULL;
}

/* A finite number >= 0 (the reference's floats: GiB, seconds). */
static int
s_parse_f64 (const char *v, double *out)
{
    if (!*v || ((*v < '0' || *v > '9') && *v != '.'))
        return -1;
    errno = 0;
    char *end;
    double x = strtod (v, &end);
    if (errno || *end || !isfinite (x) || x < 0)
        return -1;
    *out = x;
    return 0;
}

static int
s_parse_bool (const char *v, int *out)
{
    static const char *yes[] = { "1", "true", "yes", "on" }, *no[] = { "0", "false", "no", "off" };
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp (v, yes[i])) {
            *out = 1;
            return 0;
        }
        if (!strcasecmp (v, no[i])) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

/* "a, b or c" of a NULL-terminated list, for errors. */
static void
s_list (char *out, size_t size, const char *const *names)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; names[i] && len < size; i++) {
        const char *sep = i == 0 ? "" : names[i + 1] ? ", " : " or ";
        int w = snprintf (out + len, size - len, "%s%s", sep, names[i]);
        if (w < 0)
            break;
        len += (size_t) w;
    }
}

int
sb_kv_params_set (sb_kv_params_t *p, const char *key, const char *value, char *err, size_t n)
{
    const s_key_t *k = s_key (key);
    if (!k) {
        const char *near = s_nearest (key);
        if (near)
            return s_err (err, n, "unknown key '%s' (did you mean '%s'?)", key, near);
        char known[1024];
        s_list (known, sizeof known, sb_kv_param_keys);
        return s_err (err, n, "unknown key '%s' (the kvcache keys: %s)", key, known);
    }
    char *field = (char *) p + k->off;
    switch (k->kind) {
    case K_STR:
        if (strlen (value) >= k->size)
            return s_err (err, n, "%s: '%.64s...' is too long (at most %zu bytes)", key, value, k->size - 1);
        memcpy (field, value, strlen (value) + 1);
        return 0;
    case K_MODEL: {
        if (!sb_kv_model_find (value)) {
            const char *names[S_NMODELS + 1];
            for (size_t i = 0; i < S_NMODELS; i++)
                names[i] = s_models[i].name;
            names[S_NMODELS] = NULL;
            char known[512];
            s_list (known, sizeof known, names);
            return s_err (err, n, "%s: unknown model '%s' (the reference's models: %s)", key, value, known);
        }
        snprintf (field, k->size, "%s", value);
        return 0;
    }
    case K_GENMODE:
        for (int i = 0; s_genmodes[i]; i++)
            if (!strcmp (value, s_genmodes[i])) {
                snprintf (field, k->size, "%s", value);
                return 0;
            }
        return s_err (err, n, "%s: '%s' is not a generation mode (none, fast or realistic)", key, value);
    case K_U64: {
        uint64_t x;
        if (sb_parse_u64_digits (value, &x))
            return s_err (err, n, "%s: '%s' is not a whole number from 0 to %llu", key, value,
                          (unsigned long long) UINT64_MAX);
        memcpy (field, &x, sizeof x);
        return 0;
    }
    case K_F64: {
        double x;
        if (s_parse_f64 (value, &x))
            return s_err (err, n, "%s: '%s' is not a number >= 0", key, value);
        memcpy (field, &x, sizeof x);
        return 0;
    }
    case K_GPU: {
        double x;
        if (s_parse_f64 (value, &x))
            return s_err (err, n, "%s: '%s' is not a number >= 0", key, value);
        if (x != 0)
            return s_err (err, n,
                          "%s: '%s': only 0 is accepted (shardbench emulates no GPU tier, and MLPerf "
                          "Storage's options run with --gpu-mem-gb 0)",
                          key, value);
        memcpy (field, &x, sizeof x);
        return 0;
    }
    case K_BOOL: {
        int x;
        if (s_parse_bool (value, &x))
            return s_err (err, n, "%s: '%s' is not 0 or 1 (or true / false)", key, value);
        memcpy (field, &x, sizeof x);
        return 0;
    }
    case K_OPTION: {
        uint64_t x;
        if (sb_parse_u64_digits (value, &x) || x > 3)
            return s_err (err, n, "%s: '%s' is not an MLPerf Storage option (1, 2 or 3; 0 none)", key, value);
        if (x == 0) {
            p->option = 0;
            return 0;
        }
        return sb_kv_params_option (p, (unsigned) x, err, n);
    }
    }
    return s_err (err, n, "%s: no parser for this key", key);
}

int
sb_kv_params_check (const sb_kv_params_t *p, char *err, size_t n)
{
    if (!sb_kv_model_find (p->model))
        return s_err (err, n, "kvcache.model: unknown model '%s'", p->model);
    if (p->users < 1)
        return s_err (err, n, "kvcache.users: %llu users: at least 1 is needed", (unsigned long long) p->users);
    if (!(p->duration_s > 0) || !isfinite (p->duration_s))
        return s_err (err, n, "kvcache.duration_s: %g: a trial needs a duration > 0 s", p->duration_s);
    if (p->trials < 1)
        return s_err (err, n, "kvcache.trials: 0 trials: at least 1 is needed");
    if (!(p->pause_s >= 0) || !isfinite (p->pause_s))
        return s_err (err, n, "kvcache.pause_s: %g is not a pause >= 0 s", p->pause_s);
    if (!(p->cpu_mem_gb >= 0) || !isfinite (p->cpu_mem_gb))
        return s_err (err, n, "kvcache.cpu_mem_gb: %g is not a size >= 0 GiB", p->cpu_mem_gb);
    if (p->gpu_mem_gb != 0)
        return s_err (err, n, "kvcache.gpu_mem_gb: %g: only 0 is accepted (shardbench emulates no GPU tier)",
                      p->gpu_mem_gb);
    if (!(p->storage_capacity_gb >= 0) || !isfinite (p->storage_capacity_gb))
        return s_err (err, n, "kvcache.storage_capacity_gb: %g is not a size >= 0 GiB", p->storage_capacity_gb);
    /* rank r seeds with seed + r: keep the sum in 64 bits */
    if (p->seed > (uint64_t) INT64_MAX)
        return s_err (err, n, "kvcache.seed: %llu is above %lld", (unsigned long long) p->seed, (long long) INT64_MAX);
    int mode_ok = 0;
    for (int i = 0; s_genmodes[i]; i++)
        mode_ok |= !strcmp (p->generation_mode, s_genmodes[i]);
    if (!mode_ok)
        return s_err (err, n, "kvcache.generation_mode: '%s' is not none, fast or realistic", p->generation_mode);
    const struct { const char *key; int v; } flags[] = {
        { "kvcache.multi_turn", p->multi_turn }, { "kvcache.prefix_caching", p->prefix_caching },
        { "kvcache.odirect", p->odirect }, { "kvcache.verify_storage", p->verify_storage },
    };
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (flags[i].v != 0 && flags[i].v != 1)
            return s_err (err, n, "%s: %d is not 0 or 1", flags[i].key, flags[i].v);
    if (p->option > 3)
        return s_err (err, n, "kvcache.option: %llu is not 1, 2 or 3", (unsigned long long) p->option);
    return 0;
}

/* A double in the fewest digits that read back to it. */
static void
s_fmt_double (char *out, size_t size, double x)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf (out, size, "%.*g", prec, x);
        if (strtod (out, NULL) == x)
            return;
    }
}

void
sb_kv_params_strs_free (char **items, size_t count)
{
    if (!items)
        return;
    for (size_t i = 0; i < count; i++)
        free (items[i]);
    free (items);
}

int
sb_kv_params_to_strs (const sb_kv_params_t *p, char ***items, size_t *count)
{
    char **out = calloc (S_NKEYS, sizeof *out);
    if (!out)
        return -1;
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys[i];
        const char *field = (const char *) p + k->off;
        char val[64];
        const char *v = val;
        switch (k->kind) {
        case K_STR:
        case K_MODEL:
        case K_GENMODE:
            v = field;
            break;
        case K_U64:
        case K_OPTION: {
            uint64_t x;
            memcpy (&x, field, sizeof x);
            snprintf (val, sizeof val, "%llu", (unsigned long long) x);
            break;
        }
        case K_F64:
        case K_GPU: {
            double x;
            memcpy (&x, field, sizeof x);
            s_fmt_double (val, sizeof val, x);
            break;
        }
        case K_BOOL: {
            int x;
            memcpy (&x, field, sizeof x);
            snprintf (val, sizeof val, "%d", x);
            break;
        }
        }
        size_t len = strlen (k->key) + 1 + strlen (v) + 1;
        out[i] = malloc (len);
        if (!out[i]) {
            sb_kv_params_strs_free (out, i);
            return -1;
        }
        snprintf (out[i], len, "%s=%s", k->key, v);
    }
    *items = out;
    *count = S_NKEYS;
    return 0;
}

int
sb_kv_params_from_strs (sb_kv_params_t *p, char *const *items, size_t count, char *err, size_t n)
{
    for (size_t i = 0; i < count; i++) {
        const char *eq = strchr (items[i], '=');
        if (!eq)
            return s_err (err, n, "'%s': not key=value", items[i]);
        char key[128];
        if ((size_t) (eq - items[i]) >= sizeof key)
            return s_err (err, n, "'%.64s...': the key is too long", items[i]);
        memcpy (key, items[i], (size_t) (eq - items[i]));
        key[eq - items[i]] = '\0';
        if (sb_kv_params_set (p, key, eq + 1, err, n))
            return -1;
    }
    return 0;
}
