/* ckpt_plan: the sizes of an LLM checkpoint, per rank, as DLIO writes them
 * (`shardbench checkpoint`, checkpoints during training). Their rows:
 * sb_resultdb_add_ckpt_rank and sb_resultdb_close_ckpt (resultdb.h); their
 * table in a report: report.c.
 *
 * DLIO (dlio_benchmark/checkpointing/base_checkpointing.py) emulates a
 * Megatron-DeepSpeed checkpoint of a transformer: each rank writes its
 * model state (layer tensors, model_datatype) and its optimizer state
 * (three fp32 groups of its share of the parameters, plus 5 x hidden per
 * group). Which layers a rank holds depends on its pipeline stage, how much
 * of each tensor on tensor parallelism, and whether its data-parallel
 * replica writes the model at all on the ZeRO stage. DLIO's older
 * predefined sizes (model.layer_parameters, model.optimization_groups, as in
 * its megatron_deepspeed workload) replace the derived layer and optimizer
 * tensors. This module redoes that arithmetic in integers; the MLPerf
 * Storage checkpointing rules give the totals it must reproduce, DLIO's own
 * sizing code the per-rank files (tests/unit/test_checkpoint.c). */
#ifndef SB_CKPT_PLAN_H
#define SB_CKPT_PLAN_H

#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "resultdb.h"
#include "workload.h"

typedef struct {
    uint64_t  ranks;            /* ranks that write: the run's accelerators */
    uint64_t  tensor, pipeline; /* model parallelism */
    uint64_t  data;             /* data parallelism of the layout: ranks / (tensor x pipeline), or
                                 * model.parallelism.data in subset mode */
    uint64_t  zero_stage;
    int       subset;           /* 1: ranks 0..ranks-1 of a tensor x pipeline x data layout */
    double    scale;            /* checkpoint.scale */
    uint64_t  num_parameters;
    uint64_t *model_bytes;      /* per rank, scaled (owned) */
    uint64_t *optim_bytes;      /* per rank, scaled (owned) */
    uint64_t  files;            /* files (objects) one checkpoint has over all ranks */
    uint64_t  total_bytes;      /* one checkpoint over all ranks, scaled */
    uint64_t  dlio_bytes;       /* the checkpoint_size DLIO divides by (statscounter.py), scaled: the sizes it
                                 * derives over all ranks; not model.layer_parameters' or
                                 * model.optimization_groups' bytes; a model.type other than transformer
                                 * counts model.model_size_bytes once for the model */
    uint64_t  full_model_bytes; /* one checkpoint over all ranks, unscaled */
    uint64_t  full_optim_bytes;
    /* the files, as DLIO names them inside a checkpoint's folder
     * global_epoch{E}_step{S}/ (base_checkpointing.py save_checkpoint):
     *   model_states-{rank}.pt            a model that is not a transformer (model.model_size_bytes)
     *   layer_{i}-model_{mp}_model_states.pt   ZeRO 1/2 with pipeline parallelism: one per layer,
     *   model_{mp}_model_states.pt             ZeRO 1/2 without: the data-parallel rank 0 only
     *   zero_pp_rank_{dp}_mp_rank_{mp}_model_states.pt   ZeRO 0 and 3
     *   zero_pp_rank_{dp}_mp_rank_{mp}_optim_states.pt   the optimizer
     * (mp = rank mod tensor x pipeline, dp = rank / (tensor x pipeline)); rank r's are
     * names[first[r]] .. names[first[r+1] - 1], each scaled on its own */
    char    **names;            /* nfiles (owned) */
    uint64_t *file_bytes;       /* nfiles (owned) */
    uint64_t *first;            /* ranks + 1 (owned) */
    size_t    nfiles;
} sb_ckpt_plan_t;

/* The folder of checkpoint `step` of `epoch` ("global_epoch1_step3"), DLIO's
 * name. Returns 0, or -1 when it does not fit. */
int sb_ckpt_folder_name (uint64_t epoch, uint64_t step, char *buf, size_t size);

/* the steps after which epoch `epoch` of `batches` steps
 * writes a checkpoint during training, as DLIO's training loop does
 * (main.py _train): with steps_between_checkpoints >= 0 steps k x N (N > 0)
 * up to batches; else, when the epoch is checkpoint_after_epoch, or a
 * multiple of epochs_between_checkpoints after it, one after the last step
 * named batches + 1 (DLIO's step count after its loop). Into steps (at most
 * max, ascending); returns how many. */
size_t sb_ckpt_train_steps (const sb_ckpt_cfg_t *cfg, uint64_t epoch, uint64_t batches, uint64_t *steps, size_t max);

/* A read-only invocation (num_checkpoints_write 0) reads checkpoints 1..n
 * that an earlier one wrote under prefix (a folder ending in '/', or a key
 * prefix '/'-ended or "") of the checkpoint storage's client: each of the
 * plan's files must be there with its size (sb_storage_stat). Errors name
 * where (the folder, or SCHEME://STORE/PREFIX) and the first file missing or
 * of another size. Returns 0, or -1 with err. */
int sb_ckpt_check_written (const sb_ckpt_plan_t *plan, sb_storage_t *client, const char *where, const char *prefix,
                           uint64_t n, char *err, size_t err_size);

/* Bytes of one element of a DLIO datatype name ("fp16", "bf16", "fp32",
 * "fp64", "int8", "uint8"); 0 for an unknown name. */
uint64_t sb_ckpt_dtype_size (const char *name);

/* Parameters of the transformer (DLIO get_num_parameters: embedding and LM
 * head, per layer two norms, Q/K/V with grouped key-value heads, output
 * projection, gated MLP; a final norm). */
uint64_t sb_ckpt_num_parameters (const sb_ckpt_cfg_t *cfg);

/* Unscaled model and optimizer bytes that global rank `rank` of a
 * tensor x pipeline x data layout writes (the model's state files of a
 * model.type other than transformer not included). */
void sb_ckpt_rank_bytes (const sb_ckpt_cfg_t *cfg, uint64_t data, uint64_t rank, uint64_t *model,
                         uint64_t *optim);

/* Plan one checkpoint of `ranks` ranks (a transformer with num_layers > 0,
 * or a model of another model.type with model.model_size_bytes > 0). Default mode: data parallelism is
 * ranks / (tensor x pipeline), which must divide. Subset mode
 * (checkpoint.mode: subset): model.parallelism.data is the full run's, and
 * the ranks are the first `ranks` of that layout (MLPerf Storage: a single
 * host's share of a larger checkpoint). Returns 0, or -1 with err. Free
 * with sb_ckpt_plan_fini. */
int sb_ckpt_plan_init (sb_ckpt_plan_t *self, const sb_ckpt_cfg_t *cfg, uint64_t ranks, char *err, size_t err_size);
void sb_ckpt_plan_fini (sb_ckpt_plan_t *self);

/* Warn once, for a run, where DLIO's checkpoint_size (dlio_bytes) is not
 * the bytes its ranks write: DLIO's figures divide its count. */
void sb_ckpt_note_dlio_size (const sb_ckpt_plan_t *plan);

#endif
