/* checkpoint: per-rank checkpoint sizes (DLIO's arithmetic) and results. */
#include "ckpt_plan.h"
#include "proto.h"
#include "engine.h"
#include "log.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

uint64_t
sb_ckpt_dtype_size (const char *name)
{
    if (!strcmp (name, "int8") || !strcmp (name, "uint8"))
        return 1;
    if (!strcmp (name, "fp16") || !strcmp (name, "bf16"))
        return 2;
    if (!strcmp (name, "fp32"))
        return 4;
    if (!strcmp (name, "fp64"))
        return 8;
    return 0;
}

/* Columns of the K and V matrices: head size x key-value heads. */
static uint64_t
s_dim_kv (const sb_ckpt_cfg_t *c)
{
    return c->hidden_size / c->num_attention_heads * c->num_kv_heads;
}

uint64_t
sb_ckpt_num_parameters (const sb_ckpt_cfg_t *c)
{
    if (c->num_layers == 0)
        return 0;
    uint64_t h = c->hidden_size, ffn = c->ffn_hidden_size;
    uint64_t embedding = c->vocab_size * h;
    uint64_t layer = h                      /* input norm */
                   + h * (h + 2 * s_dim_kv (c)) /* Q, K, V */
                   + h * h                  /* output projection */
                   + h                      /* post-attention norm */
                   + ffn * 2 * h            /* gated MLP: h -> 2 x ffn */
                   + ffn * h;               /* ffn -> h */
    return embedding + layer * c->num_layers + h + embedding /* final norm, LM head */;
}

/* Elements of layer i (0: embedding, 1..L: transformer layers, L+1: LM
 * head, L+2: final norm) held by one rank: tensor-parallel matrices split
 * over `tensor`, everything split over `shard` (data parallelism with ZeRO
 * 3, else 1). Each term rounds down on its own, as DLIO's does. */
static uint64_t
s_layer_elements (const sb_ckpt_cfg_t *c, uint64_t i, uint64_t shard)
{
    uint64_t h = c->hidden_size, tp = c->tensor, ffn = c->ffn_hidden_size, L = c->num_layers;
    if (i == 0 || i == L + 1)
        return h * c->vocab_size / tp / shard;
    if (i == L + 2)
        return h / shard;
    return h / shard + h * (h + 2 * s_dim_kv (c)) / tp / shard + h * h / tp / shard + h / shard
         + h * 2 * ffn / tp / shard + h * ffn / tp / shard;
}

/* Layers [first, last] of pipeline stage p: L / pp each, the first L % pp
 * stages one more; with sizes derived from model.transformer, stage 0 also
 * holds the embedding, the last stage the LM head and the final norm (DLIO
 * leaves them out with model.layer_parameters). first > last: none (DLIO
 * with num_layers 0). */
static void
s_stage_layers (const sb_ckpt_cfg_t *c, uint64_t p, uint64_t *first, uint64_t *last)
{
    uint64_t L = c->num_layers, pp = c->pipeline, n = L / pp, rem = L % pp;
    if (p < rem) {
        *first = p * (n + 1) + 1;
        *last = *first + n;
    }
    else {
        *first = rem * (n + 1) + (p - rem) * n + 1;
        *last = *first + n - 1;
    }
    if (c->n_layer_parameters > 0 || L == 0) {
        if (L == 0)
            *first = 1, *last = 0;
        return;
    }
    if (p == pp - 1)
        *last = L + 2;
    if (p == 0)
        *first = 0;
}

/* Bytes of one layer of model.layer_parameters on one rank: each tensor
 * above 0 elements, split over tensor parallelism, one byte an element
 * (DLIO makes these int8 tensors, whatever model_datatype says). */
static uint64_t
s_predefined_layer_bytes (const sb_ckpt_cfg_t *c)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < c->n_layer_parameters; i++)
        if (c->layer_parameters[i] > 0)
            bytes += (uint64_t) c->layer_parameters[i] / c->tensor;
    return bytes;
}

/* Bytes of one rank's model state on pipeline stage `stage`, every layer
 * split over `shard` (DLIO's ZeRO 3 data parallelism, else 1). */
static uint64_t
s_stage_model_bytes (const sb_ckpt_cfg_t *c, uint64_t stage, uint64_t shard)
{
    uint64_t first, last, bytes = 0;
    s_stage_layers (c, stage, &first, &last);
    for (uint64_t i = first; i <= last && last >= first; i++)
        bytes += c->n_layer_parameters > 0 ? s_predefined_layer_bytes (c)
                                           : s_layer_elements (c, i, shard) * sb_ckpt_dtype_size (c->model_datatype);
    return bytes;
}

void
sb_ckpt_rank_bytes (const sb_ckpt_cfg_t *c, uint64_t data, uint64_t rank, uint64_t *model, uint64_t *optim)
{
    uint64_t mp = c->tensor * c->pipeline;
    uint64_t stage = (rank / c->tensor) % c->pipeline, replica = rank / mp;
    *model = *optim = 0;
    /* without ZeRO only the first replica checkpoints (DLIO: every other
     * rank's checkpoint rank is 0, which is not itself) */
    if (c->zero_stage == 0 && rank >= mp)
        return;
    /* ZeRO 1 and 2: the model is replicated, the first replica writes it;
     * ZeRO 3: every rank writes its 1/data of each of its stage's tensors
     * (of derived sizes: predefined ones are not sharded) */
    int writes_model = c->zero_stage == 3 || c->zero_stage == 0 || replica == 0;
    if (writes_model && c->num_layers > 0)
        *model = s_stage_model_bytes (c, stage, c->zero_stage == 3 ? data : 1);
    if (c->n_optimization_groups > 0) {
        /* predefined groups, whole on every rank: two tensors of each
         * group and one of all groups together, one byte an element */
        uint64_t sum = 0;
        for (size_t i = 0; i < c->n_optimization_groups; i++)
            if (c->optimization_groups[i] > 0)
                sum += (uint64_t) c->optimization_groups[i];
        *optim = 3 * sum;
        return;
    }
    if (c->num_layers == 0)
        return;
    /* optimizer (Adam-like, DeepSpeed layout): three groups of the rank's
     * share of the parameters, each with 5 x hidden of extra state */
    uint64_t n = sb_ckpt_num_parameters (c) / (c->zero_stage > 0 ? data * mp : mp);
    *optim = n ? 3 * (n + 5 * c->hidden_size) * sb_ckpt_dtype_size (c->optimizer_datatype) : 0;
}

/* Bytes of one file, scaled: scale 1 keeps the exact integers; a scale
 * that is a power of two scales exactly too. */
static uint64_t
s_scaled (double scale, uint64_t bytes)
{
    return scale >= 1 ? bytes : (uint64_t) floor ((double) bytes * scale);
}

/* Append one file of rank r (model: 1 for a model state, 0 for the
 * optimizer's; dlio: 1 when DLIO's checkpoint_size counts its bytes); a
 * file of 0 bytes is left out, as DLIO writes none, and so is one that
 * checkpoint.scale rounds to 0 bytes (the workers write no empty file, and
 * count the files they write). */
static int
s_add_file (sb_ckpt_plan_t *self, uint64_t r, int model, int dlio, uint64_t bytes, char *err, size_t err_size,
            const char *fmt, ...)
{
    if (bytes == 0)
        return 0;
    if (dlio)
        self->dlio_bytes += s_scaled (self->scale, bytes);
    if (s_scaled (self->scale, bytes) == 0) {
        if (model)
            self->full_model_bytes += bytes;
        else
            self->full_optim_bytes += bytes;
        return 0;
    }
    if (self->nfiles >= SB_PROTO_MAX_ARRAY) {
        snprintf (err, err_size, "a checkpoint of over %d files: a checkpoint phase carries every file in one"
                  " message", SB_PROTO_MAX_ARRAY);
        return -1;
    }
    if (self->nfiles % 1024 == 0) {
        size_t cap = self->nfiles + 1024;
        char **names = realloc (self->names, cap * sizeof *names);
        if (names)
            self->names = names;
        uint64_t *sizes = names ? realloc (self->file_bytes, cap * sizeof *sizes) : NULL;
        if (sizes)
            self->file_bytes = sizes;
        if (!names || !sizes) {
            snprintf (err, err_size, "out of memory");
            return -1;
        }
    }
    char name[160];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (name, sizeof name, fmt, ap);
    va_end (ap);
    if (!(self->names[self->nfiles] = strdup (name))) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    uint64_t scaled = s_scaled (self->scale, bytes);
    self->file_bytes[self->nfiles++] = scaled;
    if (model) {
        self->full_model_bytes += bytes;
        self->model_bytes[r] += scaled;
    }
    else {
        self->full_optim_bytes += bytes;
        self->optim_bytes[r] += scaled;
    }
    self->total_bytes += scaled;
    return 0;
}

/* The files rank r writes (see sb_ckpt_plan_t), m and o its transformer
 * model and optimizer bytes (sb_ckpt_rank_bytes). DLIO's checkpoint_size
 * (base_checkpointing.py) counts only the sizes it derives: not the
 * predefined lists', and a model of another type counts
 * model.model_size_bytes once (sb_ckpt_plan_init) instead of its layers. */
static int
s_rank_files (sb_ckpt_plan_t *self, const sb_ckpt_cfg_t *c, uint64_t r, uint64_t m, uint64_t o, char *err,
              size_t err_size)
{
    uint64_t mp = c->tensor * c->pipeline, dp = r / mp, mpr = r % mp;
    int transformer = strcmp (c->model_type, "transformer") == 0;
    int dlio_model = c->n_layer_parameters == 0 && (transformer || c->model_size == 0);
    int dlio_optim = c->n_optimization_groups == 0;
    /* DLIO: without ZeRO only ranks below tensor x pipeline checkpoint */
    if (c->zero_stage == 0 && r >= mp)
        return 0;
    if (!transformer
        && s_add_file (self, r, 1, 0, c->model_size, err, err_size, "model_states-%llu.pt", (unsigned long long) r)
               != 0)
        return -1;
    if (m > 0 && (c->zero_stage == 1 || c->zero_stage == 2)) {
        if (dp == 0 && c->pipeline > 1) {
            /* one file per layer of the rank's pipeline stage */
            uint64_t first, last, stage = (r / c->tensor) % c->pipeline;
            s_stage_layers (c, stage, &first, &last);
            for (uint64_t i = first; i <= last; i++) {
                uint64_t bytes = c->n_layer_parameters > 0 ? s_predefined_layer_bytes (c)
                               : s_layer_elements (c, i, 1) * sb_ckpt_dtype_size (c->model_datatype);
                if (s_add_file (self, r, 1, dlio_model, bytes, err, err_size, "layer_%llu-model_%llu_model_states.pt",
                                (unsigned long long) i, (unsigned long long) mpr) != 0)
                    return -1;
            }
        }
        else if (dp == 0
                 && s_add_file (self, r, 1, dlio_model, m, err, err_size, "model_%llu_model_states.pt",
                                (unsigned long long) mpr) != 0)
            return -1;
    }
    else if (m > 0
             && s_add_file (self, r, 1, dlio_model, m, err, err_size, "zero_pp_rank_%llu_mp_rank_%llu_model_states.pt",
                            (unsigned long long) dp, (unsigned long long) mpr) != 0)
        return -1;
    return s_add_file (self, r, 0, dlio_optim, o, err, err_size, "zero_pp_rank_%llu_mp_rank_%llu_optim_states.pt",
                       (unsigned long long) dp, (unsigned long long) mpr);
}

int
sb_ckpt_plan_init (sb_ckpt_plan_t *self, const sb_ckpt_cfg_t *c, uint64_t ranks, char *err, size_t err_size)
{
    memset (self, 0, sizeof *self);
    uint64_t mp = c->tensor * c->pipeline;
    int other_model = strcmp (c->model_type, "transformer") != 0 && c->model_size > 0;
    if (c->num_layers == 0 && !other_model && c->n_optimization_groups == 0) {
        snprintf (err, err_size, "model.num_layers is 0 and model.type is '%s': a checkpoint needs a transformer"
                  " model (see the llama3_* presets), model.optimization_groups, or a model.type other than"
                  " transformer with model.model_size_bytes > 0", c->model_type);
        return -1;
    }
    /* bounds that keep every byte count below 2^60 (the arithmetic is in
     * uint64 and SQLite stores int64), far above any model the rules name */
    if (c->hidden_size > (1u << 18) || c->ffn_hidden_size > (1u << 20) || c->num_layers > (1u << 14)
        || c->vocab_size > (1u << 24)) {
        snprintf (err, err_size, "model too large to size: hidden_size %llu (max %u), ffn_hidden_size %llu (max %u),"
                  " num_layers %llu (max %u), vocab_size %llu (max %u)", (unsigned long long) c->hidden_size,
                  1u << 18, (unsigned long long) c->ffn_hidden_size, 1u << 20, (unsigned long long) c->num_layers,
                  1u << 14, (unsigned long long) c->vocab_size, 1u << 24);
        return -1;
    }
    if (ranks > SB_PROTO_MAX_ARRAY) {
        snprintf (err, err_size, "%llu ranks: a checkpoint phase carries every rank's sizes in one message, at most"
                  " %d ranks", (unsigned long long) ranks, SB_PROTO_MAX_ARRAY);
        return -1;
    }
    if (!sb_ckpt_dtype_size (c->model_datatype) || !sb_ckpt_dtype_size (c->optimizer_datatype)) {
        snprintf (err, err_size, "model.model_datatype '%s' / model.optimizer_datatype '%s': expected fp16, bf16,"
                  " fp32, fp64, int8 or uint8", c->model_datatype, c->optimizer_datatype);
        return -1;
    }
    if (c->num_layers > 0
        && (c->num_kv_heads > c->num_attention_heads || c->hidden_size < c->num_attention_heads)) {
        snprintf (err, err_size, "model.transformer: %llu key-value heads, %llu attention heads and hidden size"
                  " %llu do not make a model", (unsigned long long) c->num_kv_heads,
                  (unsigned long long) c->num_attention_heads, (unsigned long long) c->hidden_size);
        return -1;
    }
    if (c->num_layers > 0 && c->num_layers < c->pipeline) {
        snprintf (err, err_size, "model.num_layers %llu is smaller than model.parallelism.pipeline %llu",
                  (unsigned long long) c->num_layers, (unsigned long long) c->pipeline);
        return -1;
    }
    if (c->pipeline > 1 && c->zero_stage == 3) {
        snprintf (err, err_size, "ZeRO stage 3 does not go with pipeline parallelism %llu (DLIO refuses it too)",
                  (unsigned long long) c->pipeline);
        return -1;
    }
    if (c->num_write > 0 && c->num_read > c->num_write) {
        snprintf (err, err_size, "checkpoint.num_checkpoints_read %llu exceeds checkpoint.num_checkpoints_write %llu"
                  " (a read reads a checkpoint this run wrote; with 0 writes, earlier runs' checkpoints)",
                  (unsigned long long) c->num_read, (unsigned long long) c->num_write);
        return -1;
    }
    int subset = !strcmp (c->mode, "subset");
    if (!subset && strcmp (c->mode, "default") != 0) {
        snprintf (err, err_size, "checkpoint.mode '%s': expected default or subset", c->mode);
        return -1;
    }
    uint64_t data;
    if (subset) {
        if (c->data == 0) {
            snprintf (err, err_size, "checkpoint.mode subset needs model.parallelism.data, the data parallelism of"
                      " the full run");
            return -1;
        }
        data = c->data;
        if (ranks > mp * data) {
            snprintf (err, err_size, "subset checkpoint: %llu ranks exceed the %llu of the full layout"
                      " (tensor %llu x pipeline %llu x data %llu)", (unsigned long long) ranks,
                      (unsigned long long) (mp * data), (unsigned long long) c->tensor,
                      (unsigned long long) c->pipeline, (unsigned long long) data);
            return -1;
        }
    }
    else {
        if (ranks % mp != 0) {
            snprintf (err, err_size, "%llu ranks are not a multiple of tensor x pipeline parallelism = %llu x %llu"
                      " (use --subset to write only the first ranks' share)", (unsigned long long) ranks,
                      (unsigned long long) c->tensor, (unsigned long long) c->pipeline);
            return -1;
        }
        data = ranks / mp;
    }
    uint64_t *model_bytes = calloc (ranks, sizeof (uint64_t)), *optim_bytes = calloc (ranks, sizeof (uint64_t));
    if (!model_bytes || !optim_bytes) {
        free (model_bytes);
        free (optim_bytes);
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    *self = (sb_ckpt_plan_t) {
        .ranks = ranks, .tensor = c->tensor, .pipeline = c->pipeline, .data = data, .zero_stage = c->zero_stage,
        .subset = subset, .scale = c->scale, .num_parameters = sb_ckpt_num_parameters (c),
        .model_bytes = model_bytes, .optim_bytes = optim_bytes,
    };
    if (!(self->first = calloc (ranks + 1, sizeof (uint64_t)))) {
        sb_ckpt_plan_fini (self);
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    for (uint64_t r = 0; r < ranks; r++) {
        uint64_t m, o;
        sb_ckpt_rank_bytes (c, data, r, &m, &o);
        self->first[r] = self->nfiles;
        if (s_rank_files (self, c, r, m, o, err, err_size) != 0) {
            sb_ckpt_plan_fini (self);
            return -1;
        }
    }
    self->first[ranks] = self->nfiles;
    self->files = self->nfiles;
    /* DLIO: a model that is not a transformer counts model_size once, in
     * place of the model bytes of all ranks */
    if (strcmp (c->model_type, "transformer") != 0 && c->model_size > 0)
        self->dlio_bytes += s_scaled (c->scale, c->model_size);
    return 0;
}

void
sb_ckpt_plan_fini (sb_ckpt_plan_t *self)
{
    free (self->model_bytes);
    free (self->optim_bytes);
    self->model_bytes = self->optim_bytes = NULL;
    for (size_t i = 0; i < self->nfiles; i++)
        free (self->names[i]);
    free (self->names);
    free (self->file_bytes);
    free (self->first);
    self->names = NULL;
    self->file_bytes = self->first = NULL;
    self->nfiles = 0;
}

int
sb_ckpt_folder_name (uint64_t epoch, uint64_t step, char *buf, size_t size)
{
    int n = snprintf (buf, size, "global_epoch%llu_step%llu", (unsigned long long) epoch, (unsigned long long) step);
    return n < 0 || (size_t) n >= size ? -1 : 0;
}

size_t
sb_ckpt_train_steps (const sb_ckpt_cfg_t *c, uint64_t epoch, uint64_t batches, uint64_t *steps, size_t max)
{
    size_t n = 0;
    if (c->steps_between >= 0) {
        /* DLIO: next_checkpoint_step starts at N each epoch; steps are 1-based, so N = 0 never matches */
        for (uint64_t s = (uint64_t) c->steps_between; c->steps_between > 0 && s <= batches && n < max;
             s += (uint64_t) c->steps_between)
            steps[n++] = s;
        return n;
    }
    /* DLIO: epoch == next_checkpoint_epoch, which starts at checkpoint_after_epoch and grows by
     * epochs_between_checkpoints after each (0 or less: that one epoch only) */
    if (c->after_epoch < 1 || max == 0 || (int64_t) epoch < c->after_epoch)
        return 0;
    uint64_t since = epoch - (uint64_t) c->after_epoch;
    int due = since == 0 || (c->epochs_between > 0 && since % (uint64_t) c->epochs_between == 0);
    if (due)
        steps[n++] = batches + 1;
    return n;
}

int
sb_ckpt_check_written (const sb_ckpt_plan_t *plan, sb_storage_t *client, const char *where, const char *prefix,
                       uint64_t n, char *err, size_t err_size)
{
    for (uint64_t k = 1; k <= n; k++) {
        char dir[64];
        if (sb_ckpt_folder_name (1, k, dir, sizeof dir) != 0)
            return -1;
        for (size_t i = 0; i < plan->nfiles; i++) {
            if (plan->file_bytes[i] == 0)
                continue;
            char key[PATH_MAX];
            int w = snprintf (key, sizeof key, "%s%s/%s", prefix, dir, plan->names[i]);
            if (w < 0 || (size_t) w >= sizeof key) {
                snprintf (err, err_size, "checkpoint path too long under %s", where);
                return -1;
            }
            uint64_t size = 0;
            sb_storage_error_t e;
            if (sb_storage_stat (client, key, &size, &e) != 0) {
                /* the cause in a word where there is one (a missing file, an
                 * object store's 404), else the engine's whole sentence */
                const char *cause = e.missing ? (e.os_errno ? strerror (e.os_errno) : "no such object")
                                  : e.os_errno && !(sb_storage_client_caps (client) & SB_ENGINE_ENDPOINTS)
                                  ? strerror (e.os_errno) : e.text;
                snprintf (err, err_size, "checkpoint.num_checkpoints_write is 0, so this run reads checkpoints 1..%llu"
                          " that an earlier run wrote into %s, but %s/%s: %s (write them first, with"
                          " checkpoint.num_checkpoints_read=0 and the same model, parallelism, accelerators and"
                          " checkpoint.scale)", (unsigned long long) n, where, dir, plan->names[i], cause);
                return -1;
            }
            if (size != plan->file_bytes[i]) {
                snprintf (err, err_size, "checkpoint.num_checkpoints_write is 0, so this run reads checkpoints 1..%llu"
                          " that an earlier run wrote into %s, but %s/%s holds %llu bytes where this run's"
                          " checkpoint has %llu: it was written with another model, parallelism, accelerator count"
                          " or checkpoint.scale", (unsigned long long) n, where, dir, plan->names[i],
                          (unsigned long long) size, (unsigned long long) plan->file_bytes[i]);
                return -1;
            }
        }
    }
    return 0;
}

/* Said once per run where DLIO's checkpoint_size is not what the ranks
 * write (model.layer_parameters, model.optimization_groups, a model of
 * another model.type): DLIO's figures divide its size, not the bytes. */
void
sb_ckpt_note_dlio_size (const sb_ckpt_plan_t *plan)
{
    if (plan->dlio_bytes == plan->total_bytes)
        return;
    sb_warn ("checkpoint: DLIO's checkpoint_size counts %llu bytes of the %llu bytes a checkpoint writes (it leaves"
             " out model.layer_parameters' and model.optimization_groups' tensors, and counts the model_states of a"
             " model.type other than transformer once, not per rank): save/load_checkpoint_io_* and"
             " checkpoint_size_GB divide that count, as DLIO's do; checkpoint_written_GB and"
             " *_checkpoint_slowest_rank_* count every byte written", (unsigned long long) plan->dlio_bytes,
             (unsigned long long) plan->total_bytes);
}
