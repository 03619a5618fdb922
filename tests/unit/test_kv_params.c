/* kv_params: the defaults, MLPerf's three options, every key's parsing and
 * its errors, the check, the key=value round trip and the model table.
 * With SB_KV_REFERENCE naming the reference's kv_cache_benchmark folder
 * (the Python benchmark), the model table and the command-line defaults are
 * also compared with what the reference itself loads; without it those two
 * cases say so and pass. */
#include <check.h>
#include "check_main.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "kv_params.h"

static char s_err[1024];

/* Every field equal (the strings as strings: what follows their NUL may differ). */
static void
s_assert_same (const sb_kv_params_t *a, const sb_kv_params_t *b)
{
    ck_assert_str_eq (a->model, b->model);
    ck_assert_uint_eq (a->users, b->users);
    ck_assert (a->duration_s == b->duration_s);
    ck_assert_uint_eq (a->trials, b->trials);
    ck_assert (a->pause_s == b->pause_s);
    ck_assert_str_eq (a->cache_dir, b->cache_dir);
    ck_assert (a->cpu_mem_gb == b->cpu_mem_gb);
    ck_assert (a->gpu_mem_gb == b->gpu_mem_gb);
    ck_assert_uint_eq (a->max_concurrent_allocs, b->max_concurrent_allocs);
    ck_assert_uint_eq (a->seed, b->seed);
    ck_assert_str_eq (a->generation_mode, b->generation_mode);
    ck_assert_int_eq (a->multi_turn, b->multi_turn);
    ck_assert_int_eq (a->prefix_caching, b->prefix_caching);
    ck_assert (a->storage_capacity_gb == b->storage_capacity_gb);
    ck_assert_int_eq (a->odirect, b->odirect);
    ck_assert_int_eq (a->verify_storage, b->verify_storage);
    ck_assert_uint_eq (a->option, b->option);
}

START_TEST (test_defaults)
{
    sb_kv_params_t p;
    sb_kv_params_default (&p);
    ck_assert_str_eq (p.model, "llama3.1-8b");
    ck_assert_uint_eq (p.users, 100);
    ck_assert (p.duration_s == 60);
    ck_assert_uint_eq (p.trials, 1);
    ck_assert (p.pause_s == 0);
    ck_assert_str_eq (p.cache_dir, "");
    ck_assert (p.cpu_mem_gb == 32);
    ck_assert (p.gpu_mem_gb == 0);
    ck_assert_uint_eq (p.max_concurrent_allocs, 0);
    ck_assert_uint_eq (p.seed, 42);
    ck_assert_str_eq (p.generation_mode, "realistic");
    ck_assert_int_eq (p.multi_turn, 1);
    ck_assert_int_eq (p.prefix_caching, 1);
    ck_assert (p.storage_capacity_gb == 0);
    ck_assert_int_eq (p.odirect, 0);
    ck_assert_int_eq (p.verify_storage, 1);
    ck_assert_uint_eq (p.option, 0);
    ck_assert_int_eq (sb_kv_params_check (&p, s_err, sizeof s_err), 0);
}
END_TEST

/* mlperf_wrapper.py's WORKLOAD_PARAMS, its seed and sleep, mlpstorage's trials */
START_TEST (test_options)
{
    static const struct { const char *model; uint64_t users; double cpu; uint64_t allocs; } want[3] = {
        { "llama3.1-8b", 200, 0, 16 }, { "llama3.1-8b", 100, 4, 16 }, { "llama3.1-70b-instruct", 70, 0, 4 },
    };
    for (unsigned o = 1; o <= 3; o++) {
        sb_kv_params_t p;
        sb_kv_params_default (&p);
        snprintf (p.cache_dir, sizeof p.cache_dir, "%s", "/data/kv");
        p.odirect = 1;
        ck_assert_int_eq (sb_kv_params_option (&p, o, s_err, sizeof s_err), 0);
        ck_assert_str_eq (p.model, want[o - 1].model);
        ck_assert_uint_eq (p.users, want[o - 1].users);
        ck_assert (p.cpu_mem_gb == want[o - 1].cpu);
        ck_assert_uint_eq (p.max_concurrent_allocs, want[o - 1].allocs);
        ck_assert (p.duration_s == 300);
        ck_assert (p.gpu_mem_gb == 0);
        ck_assert_str_eq (p.generation_mode, "none");
        ck_assert_uint_eq (p.seed, 42);
        ck_assert (p.pause_s == 90);
        ck_assert_uint_eq (p.trials, 3);
        ck_assert_int_eq (p.multi_turn, 1);
        ck_assert_int_eq (p.prefix_caching, 1);
        ck_assert_uint_eq (p.option, o);
        /* what the option does not name stays */
        ck_assert_str_eq (p.cache_dir, "/data/kv");
        ck_assert_int_eq (p.odirect, 1);
        ck_assert_int_eq (sb_kv_params_check (&p, s_err, sizeof s_err), 0);
    }
    sb_kv_params_t p;
    sb_kv_params_default (&p);
    ck_assert_int_eq (sb_kv_params_option (&p, 4, s_err, sizeof s_err), -1);
    ck_assert_str_eq (s_err, "kvcache.option: 4 is not an MLPerf Storage option (1, 2 or 3)");
    ck_assert_int_eq (sb_kv_params_option (&p, 0, s_err, sizeof s_err), -1);
    ck_assert_uint_eq (p.users, 100);   /* untouched */
    /* as a key: the option's values, then the keys after it give theirs */
    ck_assert_int_eq (sb_kv_params_set (&p, "kvcache.option", "3", s_err, sizeof s_err), 0);
    ck_assert_uint_eq (p.users, 70);
    ck_assert_int_eq (sb_kv_params_set (&p, "kvcache.users", "5", s_err, sizeof s_err), 0);
    ck_assert_uint_eq (p.users, 5);
    ck_assert_int_eq (sb_kv_params_set (&p, "kvcache.option", "4", s_err, sizeof s_err), -1);
    ck_assert_str_eq (s_err, "kvcache.option: '4' is not an MLPerf Storage option (1, 2 or 3; 0 none)");
}
END_TEST

START_TEST (test_set)
{
    sb_kv_params_t p;
    sb_kv_params_default (&p);
    static const char *good[][2] = {
        { "kvcache.model", "tiny-1b" }, { "kvcache.users", "7" }, { "kvcache.duration_s", "2.5" },
        { "kvcache.trials", "2" }, { "kvcache.pause_s", "0.25" }, { "kvcache.cache_dir", "/mnt/nvme/kv cache" },
        { "kvcache.cpu_mem_gb", "4" }, { "kvcache.gpu_mem_gb", "0" }, { "kvcache.max_concurrent_allocs", "16" },
        { "kvcache.seed", "1234" }, { "kvcache.generation_mode", "fast" }, { "kvcache.multi_turn", "false" },
        { "kvcache.prefix_caching", "0" }, { "kvcache.storage_capacity_gb", "1.5" }, { "kvcache.odirect", "yes" },
        { "kvcache.verify_storage", "0" },
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ck_assert_msg (sb_kv_params_set (&p, good[i][0], good[i][1], s_err, sizeof s_err) == 0, "%s=%s: %s",
                       good[i][0], good[i][1], s_err);
    ck_assert_str_eq (p.model, "tiny-1b");
    ck_assert_uint_eq (p.users, 7);
    ck_assert (p.duration_s == 2.5);
    ck_assert_uint_eq (p.trials, 2);
    ck_assert (p.pause_s == 0.25);
    ck_assert_str_eq (p.cache_dir, "/mnt/nvme/kv cache");
    ck_assert (p.cpu_mem_gb == 4);
    ck_assert_uint_eq (p.max_concurrent_allocs, 16);
    ck_assert_uint_eq (p.seed, 1234);
    ck_assert_str_eq (p.generation_mode, "fast");
    ck_assert_int_eq (p.multi_turn, 0);
    ck_assert_int_eq (p.prefix_caching, 0);
    ck_assert (p.storage_capacity_gb == 1.5);
    ck_assert_int_eq (p.odirect, 1);
    ck_assert_int_eq (p.verify_storage, 0);

    /* bad values: the key and the value named, the field left as it was */
    static const char *bad[][3] = {
        { "kvcache.users", "abc", "kvcache.users: 'abc' is not a whole number from 0 to 18446744073709551615" },
        { "kvcache.users", "-1", "kvcache.users: '-1' is not a whole number from 0 to 18446744073709551615" },
        { "kvcache.users", "12x", "kvcache.users: '12x' is not a whole number from 0 to 18446744073709551615" },
        { "kvcache.users", "", "kvcache.users: '' is not a whole number from 0 to 18446744073709551615" },
        { "kvcache.seed", "18446744073709551616",
          "kvcache.seed: '18446744073709551616' is not a whole number from 0 to 18446744073709551615" },
        { "kvcache.duration_s", "soon", "kvcache.duration_s: 'soon' is not a number >= 0" },
        { "kvcache.duration_s", "-3", "kvcache.duration_s: '-3' is not a number >= 0" },
        { "kvcache.cpu_mem_gb", "inf", "kvcache.cpu_mem_gb: 'inf' is not a number >= 0" },
        { "kvcache.cpu_mem_gb", "1e999", "kvcache.cpu_mem_gb: '1e999' is not a number >= 0" },
        { "kvcache.gpu_mem_gb", "16",
          "kvcache.gpu_mem_gb: '16': only 0 is accepted (shardbench emulates no GPU tier, and MLPerf Storage's "
          "options run with --gpu-mem-gb 0)" },
        { "kvcache.generation_mode", "turbo",
          "kvcache.generation_mode: 'turbo' is not a generation mode (none, fast or realistic)" },
        { "kvcache.model", "llama4",
          "kvcache.model: unknown model 'llama4' (the reference's models: tiny-1b, mistral-7b, llama2-7b, "
          "llama3.1-8b, llama3.1-70b-instruct, deepseek-v3, qwen3-32b, gpt-oss-120b or gpt-oss-20b)" },
        { "kvcache.multi_turn", "2", "kvcache.multi_turn: '2' is not 0 or 1 (or true / false)" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sb_kv_params_t before = p;
        ck_assert_int_eq (sb_kv_params_set (&p, bad[i][0], bad[i][1], s_err, sizeof s_err), -1);
        ck_assert_str_eq (s_err, bad[i][2]);
        s_assert_same (&p, &before);
    }
    char longdir[5000];
    memset (longdir, 'd', sizeof longdir - 1);
    longdir[sizeof longdir - 1] = '\0';
    ck_assert_int_eq (sb_kv_params_set (&p, "kvcache.cache_dir", longdir, s_err, sizeof s_err), -1);
    ck_assert_ptr_nonnull (strstr (s_err, "kvcache.cache_dir: 'dddd"));
    ck_assert_ptr_nonnull (strstr (s_err, "is too long (at most 4095 bytes)"));
    ck_assert_str_eq (p.cache_dir, "/mnt/nvme/kv cache");
}
END_TEST

/* an unknown key names the nearest known one, else lists them */
START_TEST (test_unknown_key)
{
    sb_kv_params_t p;
    sb_kv_params_default (&p);
    static const char *cases[][2] = {
        { "kvcache.usrs", "unknown key 'kvcache.usrs' (did you mean 'kvcache.users'?)" },
        { "kvcache.duration", "unknown key 'kvcache.duration' (did you mean 'kvcache.duration_s'?)" },
        { "kvcache.cpu-mem-gb", "unknown key 'kvcache.cpu-mem-gb' (did you mean 'kvcache.cpu_mem_gb'?)" },
        { "users", "unknown key 'users' (did you mean 'kvcache.users'?)" },
        { "dataset.seed", "unknown key 'dataset.seed' (did you mean 'kvcache.seed'?)" },
        { "kvcache.gpu_mem", "unknown key 'kvcache.gpu_mem' (did you mean 'kvcache.gpu_mem_gb'?)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ck_assert_int_eq (sb_kv_params_set (&p, cases[i][0], "1", s_err, sizeof s_err), -1);
        ck_assert_str_eq (s_err, cases[i][1]);
    }
    ck_assert_int_eq (sb_kv_params_set (&p, "workload.frobnicate", "1", s_err, sizeof s_err), -1);
    ck_assert_str_eq (s_err, "unknown key 'workload.frobnicate' (the kvcache keys: kvcache.option, kvcache.model, "
                             "kvcache.users, kvcache.duration_s, kvcache.trials, kvcache.pause_s, kvcache.cache_dir, "
                             "kvcache.cpu_mem_gb, kvcache.gpu_mem_gb, kvcache.max_concurrent_allocs, kvcache.seed, "
                             "kvcache.generation_mode, kvcache.multi_turn, kvcache.prefix_caching, "
                             "kvcache.storage_capacity_gb, kvcache.odirect or kvcache.verify_storage)");
    /* from_strs names the item */
    char *items[] = { "kvcache.users=3", "kvcache.usres=4" };
    ck_assert_int_eq (sb_kv_params_from_strs (&p, items, 2, s_err, sizeof s_err), -1);
    ck_assert_str_eq (s_err, "unknown key 'kvcache.usres' (did you mean 'kvcache.users'?)");
    ck_assert_uint_eq (p.users, 3);
    char *noeq[] = { "kvcache.users" };
    ck_assert_int_eq (sb_kv_params_from_strs (&p, noeq, 1, s_err, sizeof s_err), -1);
    ck_assert_str_eq (s_err, "'kvcache.users': not key=value");
}
END_TEST

START_TEST (test_check)
{
    static const struct { const char *what; const char *err; } cases[] = {
        { "users", "kvcache.users: 0 users: at least 1 is needed" },
        { "duration", "kvcache.duration_s: 0: a trial needs a duration > 0 s" },
        { "trials", "kvcache.trials: 0 trials: at least 1 is needed" },
        { "gpu", "kvcache.gpu_mem_gb: 16: only 0 is accepted (shardbench emulates no GPU tier)" },
        { "model", "kvcache.model: unknown model 'gpt-5'" },
        { "mode", "kvcache.generation_mode: 'slow' is not none, fast or realistic" },
        { "seed", "kvcache.seed: 9223372036854775808 is above 9223372036854775807" },
        { "flag", "kvcache.odirect: 2 is not 0 or 1" },
        { "cpu", "kvcache.cpu_mem_gb: -1 is not a size >= 0 GiB" },
        { "pause", "kvcache.pause_s: nan is not a pause >= 0 s" },
        { "option", "kvcache.option: 9 is not 1, 2 or 3" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sb_kv_params_t p;
        sb_kv_params_default (&p);
        const char *w = cases[i].what;
        if (!strcmp (w, "users"))
            p.users = 0;
        else if (!strcmp (w, "duration"))
            p.duration_s = 0;
        else if (!strcmp (w, "trials"))
            p.trials = 0;
        else if (!strcmp (w, "gpu"))
            p.gpu_mem_gb = 16;
        else if (!strcmp (w, "model"))
            snprintf (p.model, sizeof p.model, "%s", "gpt-5");
        else if (!strcmp (w, "mode"))
            snprintf (p.generation_mode, sizeof p.generation_mode, "%s", "slow");
        else if (!strcmp (w, "seed"))
            p.seed = 1ull << 63;
        else if (!strcmp (w, "flag"))
            p.odirect = 2;
        else if (!strcmp (w, "cpu"))
            p.cpu_mem_gb = -1;
        else if (!strcmp (w, "pause"))
            p.pause_s = NAN;
        else if (!strcmp (w, "option"))
            p.option = 9;
        ck_assert_int_eq (sb_kv_params_check (&p, s_err, sizeof s_err), -1);
        ck_assert_str_eq (s_err, cases[i].err);
    }
    sb_kv_params_t p;
    sb_kv_params_default (&p);
    p.users = 1;
    p.duration_s = 0.001;
    p.seed = (1ull << 63) - 1;
    ck_assert_int_eq (sb_kv_params_check (&p, s_err, sizeof s_err), 0);
}
END_TEST

static void
s_roundtrip (const sb_kv_params_t *p)
{
    char **items;
    size_t n;
    ck_assert_int_eq (sb_kv_params_to_strs (p, &items, &n), 0);
    ck_assert_uint_eq (n, 17);
    ck_assert_int_eq (strncmp (items[0], "kvcache.option=", 15), 0);
    for (size_t i = 0; sb_kv_param_keys[i]; i++) {
        size_t len = strlen (sb_kv_param_keys[i]);
        ck_assert_int_eq (strncmp (items[i], sb_kv_param_keys[i], len), 0);
        ck_assert_int_eq (items[i][len], '=');
    }
    sb_kv_params_t back;
    sb_kv_params_default (&back);
    ck_assert_msg (sb_kv_params_from_strs (&back, items, n, s_err, sizeof s_err) == 0, "%s", s_err);
    s_assert_same (&back, p);
    sb_kv_params_strs_free (items, n);
}

START_TEST (test_roundtrip)
{
    sb_kv_params_t p;
    sb_kv_params_default (&p);
    s_roundtrip (&p);
    /* an option with values changed after it */
    ck_assert_int_eq (sb_kv_params_option (&p, 2, s_err, sizeof s_err), 0);
    p.users = 7;
    p.cpu_mem_gb = 1.0 / 3;
    p.duration_s = 0.1;
    p.pause_s = 12345.678;
    p.storage_capacity_gb = 1e-300;
    p.seed = UINT64_MAX;
    p.max_concurrent_allocs = 3;
    snprintf (p.cache_dir, sizeof p.cache_dir, "%s", "/data/a=b c,d");
    snprintf (p.model, sizeof p.model, "%s", "deepseek-v3");
    p.multi_turn = 0;
    p.odirect = 1;
    s_roundtrip (&p);
    /* the shortest form that reads back exactly */
    char **items;
    size_t n;
    ck_assert_int_eq (sb_kv_params_to_strs (&p, &items, &n), 0);
    ck_assert_str_eq (items[0], "kvcache.option=2");
    ck_assert_str_eq (items[3], "kvcache.duration_s=0.1");
    ck_assert_str_eq (items[7], "kvcache.cpu_mem_gb=0.3333333333333333");
    ck_assert_str_eq (items[12], "kvcache.multi_turn=0");
    sb_kv_params_strs_free (items, n);
}
END_TEST

START_TEST (test_models)
{
    static const struct { const char *name; uint64_t bpt; } want[] = {
        { "tiny-1b", 24576 }, { "mistral-7b", 131072 }, { "llama2-7b", 524288 }, { "llama3.1-8b", 131072 },
        { "llama3.1-70b-instruct", 327680 }, { "deepseek-v3", 70272 }, { "qwen3-32b", 262144 },
        { "gpt-oss-120b", 73728 }, { "gpt-oss-20b", 49152 },
    };
    size_t n = 0;
    while (sb_kv_model_at (n))
        n++;
    ck_assert_uint_eq (n, sizeof want / sizeof *want);
    for (size_t i = 0; i < n; i++) {
        const sb_kv_model_t *m = sb_kv_model_find (want[i].name);
        ck_assert_ptr_nonnull (m);
        ck_assert_ptr_eq (m, sb_kv_model_at (i));
        ck_assert_uint_eq (sb_kv_model_bytes_per_token (m), want[i].bpt);
        /* an entry's array holds bytes per token x tokens */
        uint64_t dims[5], elems = 1;
        unsigned nd = sb_kv_model_shape (m, 1000, dims);
        for (unsigned d = 0; d < nd; d++)
            elems *= dims[d];
        ck_assert_uint_eq (elems * m->elem_bytes, want[i].bpt * 1000);
    }
    ck_assert_ptr_null (sb_kv_model_find ("llama3.1-8B"));
    ck_assert_ptr_null (sb_kv_model_at (n));
    uint64_t dims[5];
    ck_assert_uint_eq (sb_kv_model_shape (sb_kv_model_find ("llama3.1-8b"), 100, dims), 5);
    ck_assert_uint_eq (dims[0], 32);
    ck_assert_uint_eq (dims[1], 2);
    ck_assert_uint_eq (dims[2], 100);
    ck_assert_uint_eq (dims[3], 8);
    ck_assert_uint_eq (dims[4], 128);
    ck_assert_uint_eq (sb_kv_model_shape (sb_kv_model_find ("deepseek-v3"), 100, dims), 3);
    ck_assert_uint_eq (dims[0], 61);
    ck_assert_uint_eq (dims[1], 100);
    ck_assert_uint_eq (dims[2], 576);
}
END_TEST

/* python3 with the reference on its path, or NULL when SB_KV_REFERENCE is unset */
static FILE *
s_reference (const char *script)
{
    const char *ref = getenv ("SB_KV_REFERENCE");
    if (!ref || !*ref) {
        printf ("SB_KV_REFERENCE unset: the comparison with the reference's own tables is left out\n");
        return NULL;
    }
    ck_assert_int_eq (setenv ("PYTHONPATH", ref, 1), 0);
    ck_assert_int_eq (setenv ("SB_KV_SCRIPT", script, 1), 0);
    const char *py = access ("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    char cmd[256];
    snprintf (cmd, sizeof cmd, "%s -c \"$SB_KV_SCRIPT\" 2>/dev/null", py);
    FILE *f = popen (cmd, "r");
    ck_assert_ptr_nonnull (f);
    return f;
}

/* the model table as the reference loads it with its config.yaml (as the
 * MLPerf wrapper runs it: --config config.yaml) */
START_TEST (test_reference_models)
{
    FILE *f = s_reference ("import os, sys\n"
                           "from kv_cache.config import ConfigLoader, set_config\n"
                           "set_config(ConfigLoader(os.path.join(os.environ['PYTHONPATH'], 'config.yaml')))\n"
                           "import kv_cache.models as m\n"
                           "for k, c in sorted(m.get_model_configs().items()):\n"
                           "    print('%s|%s|%d|%d|%d|%d|%d|%d|%d|%d' % (k, c.name, c.num_layers, c.hidden_dim,\n"
                           "          c.num_heads, c.kv_heads, c.kv_dim_per_head, c.bytes_per_element,\n"
                           "          (c.kv_lora_rank + c.qk_rope_head_dim) if c.attention_type == 'mla' else 0,\n"
                           "          c.kv_cache_size_per_token))\n");
    if (!f)
        return;
    char line[512];
    size_t n = 0;
    while (fgets (line, sizeof line, f)) {
        char name[64], label[128];
        unsigned layers, hidden, heads, kv_heads, head_dim, elem, mla;
        unsigned long long bpt;
        ck_assert_int_eq (sscanf (line, "%63[^|]|%127[^|]|%u|%u|%u|%u|%u|%u|%u|%llu", name, label, &layers, &hidden,
                                  &heads, &kv_heads, &head_dim, &elem, &mla, &bpt),
                          10);
        const sb_kv_model_t *m = sb_kv_model_find (name);
        ck_assert_msg (m != NULL, "the reference's model %s is not in the table", name);
        ck_assert_str_eq (m->label, label);
        ck_assert_uint_eq (m->layers, layers);
        ck_assert_uint_eq (m->hidden, hidden);
        ck_assert_uint_eq (m->heads, heads);
        ck_assert_uint_eq (m->kv_heads, kv_heads);
        ck_assert_uint_eq (sb_kv_model_head_dim (m), head_dim);
        ck_assert_uint_eq (m->elem_bytes, elem);
        ck_assert_uint_eq (m->mla_dim, mla);
        ck_assert_uint_eq (sb_kv_model_bytes_per_token (m), bpt);
        n++;
    }
    ck_assert_int_eq (pclose (f), 0);
    ck_assert_msg (sb_kv_model_at (n) == NULL && n > 0 && sb_kv_model_at (n - 1), "the table has other models");
}
END_TEST

/* the command-line defaults: kv-cache.py's parser, stopped before it runs */
START_TEST (test_reference_defaults)
{
    FILE *f = s_reference ("import argparse\n"
                           "class Stop(Exception): pass\n"
                           "def parse(self, args=None, namespace=None):\n"
                           "    a = ORIG(self, [])\n"
                           "    print('%s %d %r %r %r %s %d %r %d %d' % (a.model, a.num_users, a.duration,\n"
                           "          a.cpu_mem_gb, a.gpu_mem_gb, a.generation_mode, a.max_concurrent_allocs,\n"
                           "          a.storage_capacity_gb, a.disable_multi_turn, a.disable_prefix_caching))\n"
                           "    raise Stop()\n"
                           "ORIG = argparse.ArgumentParser.parse_args\n"
                           "argparse.ArgumentParser.parse_args = parse\n"
                           "import kv_cache.cli\n"
                           "try: kv_cache.cli.main()\n"
                           "except Stop: pass\n");
    if (!f)
        return;
    char model[64], mode[32];
    unsigned long long users, allocs;
    double duration, cpu, gpu, storage;
    int no_multi, no_prefix;
    ck_assert_int_eq (fscanf (f, "%63s %llu %lf %lf %lf %31s %llu %lf %d %d", model, &users, &duration, &cpu, &gpu,
                              mode, &allocs, &storage, &no_multi, &no_prefix),
                      10);
    ck_assert_int_eq (pclose (f), 0);
    sb_kv_params_t p;
    sb_kv_params_default (&p);
    ck_assert_str_eq (p.model, model);
    ck_assert_uint_eq (p.users, users);
    ck_assert (p.duration_s == duration);
    ck_assert (p.cpu_mem_gb == cpu);
    ck_assert_str_eq (p.generation_mode, mode);
    ck_assert_uint_eq (p.max_concurrent_allocs, allocs);
    ck_assert (p.storage_capacity_gb == storage);
    ck_assert_int_eq (p.multi_turn, !no_multi);
    ck_assert_int_eq (p.prefix_caching, !no_prefix);
    /* the one left apart on purpose (kv_params.h): their GPU tier */
    ck_assert (gpu == 16 && p.gpu_mem_gb == 0);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("kv_params");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 100);
    tcase_add_test (tc, test_defaults);
    tcase_add_test (tc, test_options);
    tcase_add_test (tc, test_set);
    tcase_add_test (tc, test_unknown_key);
    tcase_add_test (tc, test_check);
    tcase_add_test (tc, test_roundtrip);
    tcase_add_test (tc, test_models);
    tcase_add_test (tc, test_reference_models);
    tcase_add_test (tc, test_reference_defaults);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
