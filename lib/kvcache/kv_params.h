/* kv_params: the settings of a KV-cache run (`shardbench kvcache`, the
 * kvcache.* keys), MLPerf Storage v3's three options, their parsing and
 * their "key=value" form (PHASE_START kv), and the reference's model table.
 *
 * Defaults are the reference's command-line defaults (kv-cache.py: model
 * llama3.1-8b, 100 users, 60 s, 32 GiB CPU tier, generation realistic,
 * multi-turn and prefix caching on, no allocation limit, storage capacity
 * from free space), except where shardbench cannot or must not follow them:
 * - gpu_mem_gb 0 (theirs 16): shardbench emulates no GPU tier, and MLPerf's
 *   CLOSED options turn it off; any other value is refused;
 * - seed 42 (theirs: unseeded): a run must be reproducible; 42 is the MLPerf
 *   wrapper's base seed;
 * - trials 1, pause_s 0: one run of kv-cache.py, no wrapper around it;
 * - duration_s may have a fraction (theirs: whole seconds), for short tests.
 * mlpstorage never relies on these: it runs the wrapper, which passes every
 * value of its option (sb_kv_params_option). */
#ifndef SB_KV_PARAMS_H
#define SB_KV_PARAMS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char     model[32];            /* kvcache.model: a name of the model table (sb_kv_model_find) */
    uint64_t users;                /* kvcache.users (per rank, as the reference's --num-users) */
    double   duration_s;           /* kvcache.duration_s (--duration) */
    uint64_t trials;               /* kvcache.trials: runs of the option (mlpstorage's 3) */
    double   pause_s;              /* kvcache.pause_s: before each trial (the wrapper sleeps 90 s before and after) */
    char     cache_dir[4096];      /* kvcache.cache_dir (becomes WELCOME data_root); "" the run's default */
    double   cpu_mem_gb;           /* kvcache.cpu_mem_gb (--cpu-mem-gb, GiB), 0: no CPU tier */
    double   gpu_mem_gb;           /* kvcache.gpu_mem_gb: only 0 accepted (no GPU tier) */
    uint64_t max_concurrent_allocs; /* kvcache.max_concurrent_allocs, 0 no limit */
    uint64_t seed;                 /* kvcache.seed: rank r uses seed + r (as the wrapper) */
    char     generation_mode[16];  /* kvcache.generation_mode none|fast|realistic */
    int      multi_turn;           /* kvcache.multi_turn 0|1 (1; 0 = --disable-multi-turn) */
    int      prefix_caching;       /* kvcache.prefix_caching 0|1 (1; 0 = --disable-prefix-caching) */
    double   storage_capacity_gb;  /* kvcache.storage_capacity_gb, 0: 95% of free space */
    int      odirect;              /* kvcache.odirect 0|1: entries written and read with O_DIRECT */
    int      verify_storage;       /* kvcache.verify_storage 0|1: the fsync / page-cache drop check (1) */
    uint64_t option;               /* 1..3 when a preset was applied, 0 none (not a key) */
} sb_kv_params_t;

/* The reference's command-line defaults (see above for what differs). */
void sb_kv_params_default (sb_kv_params_t *p);

/* MLPerf Storage v3.0 option 1, 2 or 3 (kv_cache_benchmark/mlperf_wrapper.py
 * WORKLOAD_PARAMS, with mlpstorage's trials and the wrapper's 90 s pause and
 * base seed 42) over p's other values; sets p->option. Returns 0, or -1 with
 * the reason in err for another option. */
int sb_kv_params_option (sb_kv_params_t *p, unsigned option, char *err, size_t n);

/* Set one key ("kvcache.users") from its text. Returns 0, or -1 with err:
 * "unknown key 'kvcache.usrs' (did you mean 'kvcache.users'?)" or
 * "kvcache.users: 'x' is not a whole number ..." (the key and the value). */
int sb_kv_params_set (sb_kv_params_t *p, const char *key, const char *value, char *err, size_t n);

/* The values that make a run: users >= 1, duration > 0, trials >= 1, the
 * model known, gpu_mem_gb 0, ... Returns 0, or -1 naming the key in err. */
int sb_kv_params_check (const sb_kv_params_t *p, char *err, size_t n);

/* The form of PHASE_START's kv (an sb_strs_t of lib/proto, which frees it
 * with the message: sb_kv_params_to_strs (p, &ps.kv.items, &ps.kv.count)).
 * Every key as "key=value" (malloc'ed array of malloc'ed strings, the
 * option first as "kvcache.option=N": read back, it applies the option's
 * values and the keys after it give theirs); from_strs reads them back to
 * the same values (doubles in the fewest digits that read back exactly). to_strs returns 0, or -1
 * when memory runs out; free with sb_kv_params_strs_free. */
int  sb_kv_params_to_strs (const sb_kv_params_t *p, char ***items, size_t *count);
void sb_kv_params_strs_free (char **items, size_t count);
/* Apply "key=value" items over p (start from sb_kv_params_default).
 * Returns 0, or -1 with err naming the item. */
int sb_kv_params_from_strs (sb_kv_params_t *p, char *const *items, size_t count, char *err, size_t n);

/* The names of the keys, NULL-terminated (for --help and the nearest key). */
extern const char *const sb_kv_param_keys[];

/* The model table: config.yaml's model_configs (and models.py's defaults).
 * head_dim 0: hidden / heads (the reference's kv_dim_per_head unless
 * config.yaml overrides it); mla_dim > 0: multi-head latent attention
 * (DeepSeek), an entry is layers x tokens x mla_dim (kv_lora_rank +
 * qk_rope_head_dim), K and V in one. */
typedef struct {
    const char *name, *label;
    unsigned    layers, hidden, heads, kv_heads, elem_bytes;
    unsigned    head_dim;   /* kv_dim_per_head when config.yaml gives it, else 0 */
    unsigned    mla_dim;    /* kv_lora_rank + qk_rope_head_dim for MLA, else 0 */
} sb_kv_model_t;

/* The model named name, NULL when unknown. */
const sb_kv_model_t *sb_kv_model_find (const char *name);
/* The i-th model of the table, NULL past the end. */
const sb_kv_model_t *sb_kv_model_at (size_t i);
/* The dimension of a K or V head (kv_dim_per_head). */
unsigned sb_kv_model_head_dim (const sb_kv_model_t *m);
/* Bytes of one token's KV cache (kv_cache_size_per_token): 131072 for
 * llama3.1-8b, 327680 for llama3.1-70b-instruct. */
uint64_t sb_kv_model_bytes_per_token (const sb_kv_model_t *m);
/* The shape of an entry of `tokens` tokens as the reference's array
 * (KVCacheGenerator.generate): (layers, 2, tokens, kv_heads, head_dim), or
 * (layers, tokens, mla_dim) for MLA. Returns the number of dimensions. */
unsigned sb_kv_model_shape (const sb_kv_model_t *m, uint64_t tokens, uint64_t dims[5]);

#endif
