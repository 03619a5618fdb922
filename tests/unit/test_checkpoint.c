/* checkpoint: the llama3 presets' checkpoint sizes against the MLPerf
 * Storage rules, and DLIO's per-rank arithmetic with exact answers.
 *
 * The rules (MLPerf Storage, "Table 2 LLM models") give the checkpoint of
 * each model at its closed process count: 8B 105 GB (8), 70B 912 GB (64),
 * 405B 5.29 TB (512), 1T 18 TB (1024). These "GB" are what DLIO logs, GiB
 * (bytes / 2^30): 8B 104.70, 70B 911.21, 405B 5292.25 (thousands of GiB).
 * For 1T DLIO's arithmetic gives 15,426.6 GiB, which is what mlpstorage's
 * own size table (LLM_SIZE_BY_RANK, 15426 GB) holds as the total; the
 * rules' 18 TB adds a 2,571 GB model on top (2571 + 15426 = 17997), which
 * DLIO never writes. The exact byte counts were computed independently
 * from DLIO's base_checkpointing.py formulas (in Python). */
#include <check.h>
#include "check_main.h"

#include <math.h>
#include <string.h>

#include "ckpt_plan.h"
#include "config.h"
#include "embedded.h"
#include "workload.h"

static void
s_load (const char *preset, const char *override, sb_workload_t *wl)
{
    sb_config_t *cfg = sb_config_new ();
    char err[1024];
    const sb_embedded_t *p = sb_presets;
    while (p->name && strcmp (p->name, preset) != 0)
        p++;
    ck_assert_msg (p->name != NULL, "no preset %s", preset);
    ck_assert_int_eq (sb_config_load_string (cfg, p->text, preset, err, sizeof err), 0);
    if (override)
        ck_assert_int_eq (sb_config_override (cfg, override, err, sizeof err), 0);
    ck_assert_msg (sb_workload_from_config (cfg, wl, err, sizeof err) == 0, "%s", err);
    sb_config_destroy (&cfg);
}

START_TEST (test_rules_totals)
{
    static const struct {
        const char *preset;
        uint64_t    ranks;          /* shardbench.accelerators of the preset: the rules' process count */
        double      rules_gib;      /* the rules' checkpoint size (1T: mlpstorage's DLIO total, see above) */
        uint64_t    total, model, min_rank, max_rank, parameters;
    } cases[] = {
        { "llama3_8b", 8, 105, 112425623552ULL, 16060522496ULL, 14053202944ULL, 14053202944ULL, 8030261248ULL },
        { "llama3_70b", 64, 912, 978406572032ULL, 139783700480ULL, 15287602688ULL, 15287602688ULL, 69882617856ULL },
        { "llama3_405b", 512, 5290, 5682508791808ULL, 811764809728ULL, 9513171840ULL, 13226441600ULL,
          405853388800ULL },
        { "llama3_1t", 1024, 15426, 16564174094592ULL, 2366163292416ULL, 13865244924ULL, 19290344604ULL,
          1183035102480ULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_workload_t wl;
        s_load (cases[i].preset, NULL, &wl);
        ck_assert_uint_eq (wl.accelerators, cases[i].ranks);
        ck_assert_int_eq (wl.ckpt.fsync, 1);
        ck_assert_uint_eq (wl.ckpt.num_write, 10);
        ck_assert_uint_eq (wl.ckpt.num_read, 10);
        sb_ckpt_plan_t plan;
        char err[512];
        ck_assert_msg (sb_ckpt_plan_init (&plan, &wl.ckpt, wl.accelerators, err, sizeof err) == 0, "%s", err);
        ck_assert_uint_eq (plan.num_parameters, cases[i].parameters);
        uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
        for (uint64_t r = 0; r < plan.ranks; r++) {
            uint64_t b = plan.model_bytes[r] + plan.optim_bytes[r];
            sum += b;
            lo = b < lo ? b : lo;
            hi = b > hi ? b : hi;
        }
        ck_assert_uint_eq (sum, plan.total_bytes);
        ck_assert_uint_eq (plan.total_bytes, cases[i].total);
        ck_assert_uint_eq (plan.full_model_bytes, cases[i].model);
        ck_assert_uint_eq (lo, cases[i].min_rank);
        ck_assert_uint_eq (hi, cases[i].max_rank);
        double gib = (double) plan.total_bytes / 1073741824.0;
        ck_assert_msg (fabs (gib - cases[i].rules_gib) / cases[i].rules_gib < 0.01, "%s: %.2f GiB, rules %.0f",
                       cases[i].preset, gib, cases[i].rules_gib);
        sb_ckpt_plan_fini (&plan);
    }
}
END_TEST

START_TEST (test_subset)
{
    /* ranks 0..7 of the full layout (MLPerf Storage subset mode: one host of
     * 8 processes); the rules' "Subset: 8-Process Size" is 114 GB for 70B */
    static const struct {
        const char *preset;
        uint64_t    total;
    } cases[] = {
        { "llama3_70b", 122300821504ULL },      /* 113.90 GiB; the rules: 114 GB */
        { "llama3_405b", 105811532800ULL },     /* 98.54 GiB; the rules' table: 94 GB */
        { "llama3_1t", 154322342880ULL },       /* 143.72 GiB; the rules' table: 161 GB */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_workload_t wl;
        s_load (cases[i].preset, "checkpoint.mode=subset", &wl);
        sb_ckpt_plan_t plan;
        char err[512];
        ck_assert_msg (sb_ckpt_plan_init (&plan, &wl.ckpt, 8, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq (plan.subset, 1);
        ck_assert_uint_eq (plan.total_bytes, cases[i].total);
        sb_ckpt_plan_fini (&plan);
        s_load (cases[i].preset, NULL, &wl);
        if (i == 0) {
            /* 70B without subset: 8 ranks are one replica (data 1) holding the whole checkpoint */
            ck_assert_int_eq (sb_ckpt_plan_init (&plan, &wl.ckpt, 8, err, sizeof err), 0);
            ck_assert_uint_eq (plan.data, 1);
            ck_assert_uint_gt (plan.total_bytes, (uint64_t) 900 << 30);
            sb_ckpt_plan_fini (&plan);
            continue;
        }
        /* 405B, 1T without subset: 8 ranks are no multiple of tensor x pipeline */
        ck_assert_int_eq (sb_ckpt_plan_init (&plan, &wl.ckpt, 8, err, sizeof err), -1);
        ck_assert_ptr_nonnull (strstr (err, "not a multiple of tensor x pipeline"));
    }
    /* 70B: subset 114 GB within 1% */
    ck_assert (fabs (122300821504.0 / 1073741824.0 - 114) / 114 < 0.01);
}
END_TEST

START_TEST (test_rank_layout)
{
    sb_workload_t wl;
    s_load ("llama3_405b", NULL, &wl);
    uint64_t m, o;
    /* ZeRO 1: the first replica (ranks 0-255) writes the model, the second not */
    sb_ckpt_rank_bytes (&wl.ckpt, 2, 0, &m, &o);
    ck_assert_uint_eq (m, 3713269760ULL);       /* stage 0: embedding and layers 1-4 */
    ck_assert_uint_eq (o, 9513171840ULL);
    sb_ckpt_rank_bytes (&wl.ckpt, 2, 511, &m, &o);
    ck_assert_uint_eq (m, 0);
    ck_assert_uint_eq (o, 9513171840ULL);
    sb_ckpt_rank_bytes (&wl.ckpt, 2, 256, &m, &o);
    ck_assert_uint_eq (m, 0);
    /* ZeRO 0: only the first tensor x pipeline ranks checkpoint */
    wl.ckpt.zero_stage = 0;
    sb_ckpt_rank_bytes (&wl.ckpt, 2, 256, &m, &o);
    ck_assert_uint_eq (m + o, 0);
    sb_ckpt_rank_bytes (&wl.ckpt, 2, 255, &m, &o);
    ck_assert_uint_gt (m, 0);
    ck_assert_uint_gt (o, 0);
}
END_TEST

START_TEST (test_scale_and_errors)
{
    /* 8B on 2 ranks (data parallelism 2), scaled by 2^-13: the integration
     * test's sizes */
    sb_workload_t wl;
    s_load ("llama3_8b", "checkpoint.scale=0.0001220703125", &wl);
    sb_ckpt_plan_t plan;
    char err[512];
    ck_assert_int_eq (sb_ckpt_plan_init (&plan, &wl.ckpt, 2, err, sizeof err), 0);
    ck_assert_uint_eq (plan.data, 2);
    ck_assert_uint_eq (plan.model_bytes[0], 980256);     /* 8030261248 / 8192, rounded down */
    ck_assert_uint_eq (plan.optim_bytes[1], 5881569);    /* 48181813248 / 8192, rounded down */
    ck_assert_uint_eq (plan.files, 4);
    ck_assert_uint_eq (plan.total_bytes, 2 * (980256 + 5881569));
    sb_ckpt_plan_fini (&plan);

    s_load ("llama3_8b", "checkpoint.mode=sideways", &wl);
    ck_assert_int_eq (sb_ckpt_plan_init (&plan, &wl.ckpt, 8, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "expected default or subset"));
    s_load ("llama3_8b", "model.model_datatype=fp12", &wl);
    ck_assert_int_eq (sb_ckpt_plan_init (&plan, &wl.ckpt, 8, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "fp12"));
    s_load ("llama3_70b", "checkpoint.mode=subset", &wl);
    ck_assert_int_eq (sb_ckpt_plan_init (&plan, &wl.ckpt, 65, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "exceed the 64 of the full layout"));
    s_load ("llama3_8b", "checkpoint.num_checkpoints_read=11", &wl);
    ck_assert_int_eq (sb_ckpt_plan_init (&plan, &wl.ckpt, 8, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "num_checkpoints_read 11 exceeds"));
    s_load ("quickstart", "model.type=transformer", &wl);
    ck_assert_int_eq (sb_ckpt_plan_init (&plan, &wl.ckpt, 4, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "model.num_layers is 0"));
    /* sizes that would overflow 64-bit byte counts are refused, not wrapped */
    s_load ("llama3_8b", "model.transformer.hidden_size=1000000", &wl);
    ck_assert_int_eq (sb_ckpt_plan_init (&plan, &wl.ckpt, 8, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "model too large to size: hidden_size 1000000 (max 262144)"));
    s_load ("llama3_8b", NULL, &wl);
    ck_assert_int_eq (sb_ckpt_plan_init (&plan, &wl.ckpt, 65537, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "65537 ranks"));
}
END_TEST

/* A workload from YAML text (file name "w.yaml"); returns the loader's
 * error ("" when it loaded). */
static const char *
s_load_text (const char *yaml, sb_workload_t *wl)
{
    static char err[1024];
    err[0] = '\0';
    sb_config_t *cfg = sb_config_new ();
    if (sb_config_load_string (cfg, yaml, "w.yaml", err, sizeof err) == 0)
        (void) sb_workload_from_config (cfg, wl, err, sizeof err);
    sb_config_destroy (&cfg);
    return err;
}

/* The plan's files of ranks [from, to) as DLIO's sizing code prints them
 * (the oracle in docs/DLIO.md): "rank R NAME BYTES ... " */
static void
s_plan_text (const sb_ckpt_plan_t *p, uint64_t from, uint64_t to, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (uint64_t r = from; r < to; r++) {
        used += (size_t) snprintf (out + used, size - used, "rank %llu ", (unsigned long long) r);
        for (uint64_t i = p->first[r]; i < p->first[r + 1]; i++)
            used += (size_t) snprintf (out + used, size - used, "%s %llu ", p->names[i],
                                       (unsigned long long) p->file_bytes[i]);
        ck_assert_uint_lt (used, size);
    }
}

/* DLIO's predefined sizes (model.layer_parameters, model.optimization_groups:
 * its megatron_deepspeed workload) and its checkpoint_size: every file name
 * and byte count of each rank, and the size DLIO divides by, as DLIO's own
 * base_checkpointing.py and pytorch_checkpointing.py compute them (run for
 * every rank with MPI and storage stubbed: the command is in docs/DLIO.md). */
START_TEST (test_predefined_sizes_as_dlio)
{
#define S_T "  transformer: {hidden_size: 64, ffn_hidden_size: 128, vocab_size: 100, num_attention_heads: 4, num_kv_heads: 2}\n"
    static const struct {
        const char *yaml;
        uint64_t    ranks;
        const char *files;          /* the oracle's output for every rank */
        uint64_t    dlio_bytes;     /* its checkpoint_size_bytes */
    } cases[] = {
        /* ZeRO 0, tensor 2: ranks 0 and 1 write; items of 0 or less are skipped, 4001 / 2 rounds down */
        { "model:\n  type: transformer\n  num_layers: 3\n  layer_parameters: [1000, 4001, 0, -5]\n"
          "  parallelism: {tensor: 2, zero_stage: 0}\n" S_T, 4,
          "rank 0 zero_pp_rank_0_mp_rank_0_model_states.pt 7500 zero_pp_rank_0_mp_rank_0_optim_states.pt 746880 "
          "rank 1 zero_pp_rank_0_mp_rank_1_model_states.pt 7500 zero_pp_rank_0_mp_rank_1_optim_states.pt 746880 "
          "rank 2 rank 3 ", 1493760 },
        /* ZeRO 3: derived layers, sharded; predefined optimizer groups, whole on each rank */
        { "model:\n  type: transformer\n  num_layers: 2\n  optimization_groups: [300, 0, 77]\n"
          "  parallelism: {zero_stage: 3}\n" S_T, 2,
          "rank 0 zero_pp_rank_0_mp_rank_0_model_states.pt 86848 zero_pp_rank_0_mp_rank_0_optim_states.pt 1131 "
          "rank 1 zero_pp_rank_1_mp_rank_0_model_states.pt 86848 zero_pp_rank_1_mp_rank_0_optim_states.pt 1131 ",
          173696 },
        /* another model.type: model_states of model_size_bytes, counted once by DLIO */
        { "model:\n  type: cnn\n  model_size_bytes: 1000\n  num_layers: 3\n  layer_parameters: [10, 20]\n"
          "  optimization_groups: [5]\n  parallelism: {zero_stage: 1}\n", 4,
          "rank 0 model_states-0.pt 1000 model_0_model_states.pt 90 zero_pp_rank_0_mp_rank_0_optim_states.pt 15 "
          "rank 1 model_states-1.pt 1000 zero_pp_rank_1_mp_rank_0_optim_states.pt 15 "
          "rank 2 model_states-2.pt 1000 zero_pp_rank_2_mp_rank_0_optim_states.pt 15 "
          "rank 3 model_states-3.pt 1000 zero_pp_rank_3_mp_rank_0_optim_states.pt 15 ", 1000 },
        /* no layers: only the predefined optimizer, which DLIO's size leaves out */
        { "model:\n  type: transformer\n  num_layers: 0\n  optimization_groups: [7, 9]\n"
          "  parallelism: {zero_stage: 2}\n", 2,
          "rank 0 zero_pp_rank_0_mp_rank_0_optim_states.pt 48 rank 1 zero_pp_rank_1_mp_rank_0_optim_states.pt 48 ", 0 },
        /* ZeRO 2, pipeline 2: a file per layer, no embedding or head layers; 5 layers: 3 + 2 */
        { "model:\n  type: transformer\n  num_layers: 5\n  layer_parameters: [100, 30]\n"
          "  parallelism: {pipeline: 2, zero_stage: 2}\n" S_T, 4,
          "rank 0 layer_1-model_0_model_states.pt 130 layer_2-model_0_model_states.pt 130 "
          "layer_3-model_0_model_states.pt 130 zero_pp_rank_0_mp_rank_0_optim_states.pt 597312 "
          "rank 1 layer_4-model_1_model_states.pt 130 layer_5-model_1_model_states.pt 130 "
          "zero_pp_rank_0_mp_rank_1_optim_states.pt 597312 "
          "rank 2 zero_pp_rank_1_mp_rank_0_optim_states.pt 597312 "
          "rank 3 zero_pp_rank_1_mp_rank_1_optim_states.pt 597312 ", 2389248 },
    };
#undef S_T
    char err[512], text[4096];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_workload_t wl;
        ck_assert_str_eq (s_load_text (cases[i].yaml, &wl), "");
        sb_ckpt_plan_t plan;
        ck_assert_msg (sb_ckpt_plan_init (&plan, &wl.ckpt, cases[i].ranks, err, sizeof err) == 0, "%zu: %s", i, err);
        s_plan_text (&plan, 0, cases[i].ranks, text, sizeof text);
        ck_assert_str_eq (text, cases[i].files);
        ck_assert_uint_eq (plan.dlio_bytes, cases[i].dlio_bytes);
        sb_ckpt_plan_fini (&plan);
    }

    /* DLIO_local_changes's megatron_deepspeed_LLNL.yaml (model section) on
     * 64 ranks: tensor 4 x pipeline 8 x data 2, ZeRO 1 */
    sb_workload_t wl;
    ck_assert_str_eq (s_load_text ("model:\n  name: megatron_deepspeed\n  type: megatron_deepspeed\n"
                                   "  optimization_groups: [1009254400, 865075200, 793600]\n  model_size: 30102\n"
                                   "  num_layers: 40\n  parallelism:\n    pipeline: 8\n    tensor: 4\n"
                                   "    zero_stage: 1\n  layer_parameters: [52583936, 209715200]\n", &wl), "");
    ck_assert_uint_eq (wl.ckpt.n_layer_parameters, 2);
    ck_assert_int_eq (wl.ckpt.optimization_groups[2], 793600);
    sb_ckpt_plan_t plan;
    ck_assert_msg (sb_ckpt_plan_init (&plan, &wl.ckpt, 64, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq (plan.files, 288);
    ck_assert_uint_eq (plan.total_bytes, 370516275200ULL);
    ck_assert_uint_eq (plan.dlio_bytes, 10240);     /* model_size_bytes' default, once: model.model_size is not DLIO's key */
    static const char *const L = "_model_states.pt 65574784 ";
    char want[2048];
    s_plan_text (&plan, 0, 1, text, sizeof text);
    snprintf (want, sizeof want, "rank 0 model_states-0.pt 10240 layer_1-model_0%slayer_2-model_0%slayer_3-model_0%s"
              "layer_4-model_0%slayer_5-model_0%szero_pp_rank_0_mp_rank_0_optim_states.pt 5625369600 ", L, L, L, L, L);
    ck_assert_str_eq (text, want);
    s_plan_text (&plan, 4, 5, text, sizeof text);
    snprintf (want, sizeof want, "rank 4 model_states-4.pt 10240 layer_6-model_4%slayer_7-model_4%slayer_8-model_4%s"
              "layer_9-model_4%slayer_10-model_4%szero_pp_rank_0_mp_rank_4_optim_states.pt 5625369600 ", L, L, L, L, L);
    ck_assert_str_eq (text, want);
    s_plan_text (&plan, 31, 33, text, sizeof text);
    snprintf (want, sizeof want, "rank 31 model_states-31.pt 10240 layer_36-model_31%slayer_37-model_31%s"
              "layer_38-model_31%slayer_39-model_31%slayer_40-model_31%szero_pp_rank_0_mp_rank_31_optim_states.pt"
              " 5625369600 rank 32 model_states-32.pt 10240 zero_pp_rank_1_mp_rank_0_optim_states.pt 5625369600 ",
              L, L, L, L, L);
    ck_assert_str_eq (text, want);
    s_plan_text (&plan, 63, 64, text, sizeof text);
    ck_assert_str_eq (text, "rank 63 model_states-63.pt 10240 zero_pp_rank_1_mp_rank_31_optim_states.pt 5625369600 ");
    sb_ckpt_plan_fini (&plan);

    /* bad items name the file, line and key */
    ck_assert_str_ne (s_load_text ("model:\n  layer_parameters: [10, ten]\n", &wl), "");
    ck_assert_msg (strstr (s_load_text ("model:\n  layer_parameters: [10, ten]\n", &wl),
                           "w.yaml:2: key 'model.layer_parameters': item 1 'ten' is not an integer") != NULL,
                   "%s", s_load_text ("model:\n  layer_parameters: [10, ten]\n", &wl));
    /* the presets' derived sizes: DLIO counts every byte written */
    s_load ("llama3_8b", NULL, &wl);
    ck_assert_int_eq (sb_ckpt_plan_init (&plan, &wl.ckpt, 8, err, sizeof err), 0);
    ck_assert_uint_eq (plan.dlio_bytes, plan.total_bytes);
    ck_assert_uint_eq (plan.dlio_bytes, 112425623552ULL);
    sb_ckpt_plan_fini (&plan);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("checkpoint");
    TCase *tc = tcase_create ("checkpoint");
    tcase_add_test (tc, test_rules_totals);
    tcase_add_test (tc, test_subset);
    tcase_add_test (tc, test_rank_layout);
    tcase_add_test (tc, test_scale_and_errors);
    tcase_add_test (tc, test_predefined_sizes_as_dlio);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
