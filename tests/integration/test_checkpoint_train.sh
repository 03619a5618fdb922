#!/usr/bin/env bash
# Checkpoints during training , as DLIO's training loop writes
# them: 16 files, batch 2, 2 ranks = 4 steps an epoch. By step (every N
# steps of each epoch, named global_epoch{E}_step{S}) and by epoch (after
# checkpoint_after_epoch, then every epochs_between_checkpoints, named
# step 5: DLIO's step count after its loop); a model that is not a
# transformer writes model_states-0.pt of model.model_size_bytes from rank 0
# only (ZeRO 0); a transformer with pipeline parallelism and ZeRO 1 one file
# per layer. Then checkpoint write and read as separate invocations (MLPerf
# Storage v3.0: num_checkpoints_read / _write 0 or -1), and a read of
# checkpoints that are not there.
. "$(dirname "$0")/lib.sh"

common="dataset.data_folder=./data dataset.num_files_train=16 dataset.record_length_bytes=4096
        dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.computation_time=0.001
        workflow.checkpoint=True checkpoint.checkpoint_folder=./ck"
cnn="model.type=cnn model.model_size_bytes=5000"

listing () {    # FOLDER: "dir/file:size" of every file, sorted
    (cd "$1" && find . -type f -printf '%P:%s\n' | sort | tr '\n' ' ' | sed 's/ $//')
}

# by step: every 2 steps -> steps 2 and 4 of each of 2 epochs
sb run $common $cnn train.epochs=2 checkpoint.steps_between_checkpoints=2 --accelerators 2 --local 1 --db t.db
expect_eq "by step: exit status" "$SB_RC" 0
expect_eq "by step: files" "$(listing ck)" \
    "global_epoch1_step2/model_states-0.pt:5000 global_epoch1_step4/model_states-0.pt:5000 global_epoch2_step2/model_states-0.pt:5000 global_epoch2_step4/model_states-0.pt:5000"
run=$(q t.db "SELECT max(id) FROM runs WHERE kind = 'train'")
expect_eq "by step: run" "$(q t.db "SELECT status FROM runs WHERE id = $run")" "succeeded"
expect_eq "by step: checkpoint rows" \
    "$(q t.db "SELECT group_concat(seq || ':' || op || ':' || ranks || ':' || files || ':' || bytes, ' ') FROM (SELECT * FROM checkpoints WHERE run_id = $run ORDER BY seq)")" \
    "1:write:2:1:5000 2:write:2:1:5000 3:write:2:1:5000 4:write:2:1:5000"
expect_eq "by step: rank 0 writes, rank 1 none" \
    "$(q t.db "SELECT group_concat(rank || ':' || files || ':' || bytes, ' ') FROM (SELECT * FROM checkpoint_ranks WHERE run_id = $run AND seq = 1 ORDER BY rank)")" \
    "0:1:5000 1:0:0"
expect_eq "by step: timed" "$(q t.db "SELECT count(*) FROM checkpoints WHERE run_id = $run AND duration_s > 0")" 4
expect_eq "by step: epochs whole" "$(q t.db "SELECT group_concat(epoch || ':' || samples || ':' || batches, ' ') FROM epochs WHERE run_id = $run")" "1:16:4 2:16:4"

# every 3 steps: only step 3 of each epoch; 0: none
rm -rf ck
sb run $common $cnn train.epochs=2 checkpoint.steps_between_checkpoints=3 --accelerators 2 --local 1 --db t.db
expect_eq "every 3: files" "$(listing ck)" "global_epoch1_step3/model_states-0.pt:5000 global_epoch2_step3/model_states-0.pt:5000"
rm -rf ck
sb run $common $cnn train.epochs=2 checkpoint.steps_between_checkpoints=0 --accelerators 2 --local 1 --db t.db
expect_eq "every 0 steps: exit status" "$SB_RC" 0
expect_eq "every 0 steps: none" "$(listing ck)" ""

# by epoch: after epoch 2, then every 2: epochs 2 and 4 of 5, named step 5 (4 steps + 1)
rm -rf ck
sb run $common $cnn train.epochs=5 checkpoint.checkpoint_after_epoch=2 checkpoint.epochs_between_checkpoints=2 \
    --accelerators 2 --local 1 --db t.db
expect_eq "by epoch: exit status" "$SB_RC" 0
expect_eq "by epoch: files" "$(listing ck)" "global_epoch2_step5/model_states-0.pt:5000 global_epoch4_step5/model_states-0.pt:5000"
# DLIO's defaults (after epoch 1, every epoch) and its default model state of 10240 bytes
rm -rf ck
sb run $common model.type=cnn train.epochs=2 --accelerators 2 --local 1 --db t.db
expect_eq "defaults: files" "$(listing ck)" "global_epoch1_step5/model_states-0.pt:10240 global_epoch2_step5/model_states-0.pt:10240"
# workflow.checkpoint False: no checkpoint
rm -rf ck
sb run $common $cnn train.epochs=1 workflow.checkpoint=False --accelerators 2 --local 1 --db t.db
expect_eq "workflow.checkpoint False: exit status" "$SB_RC" 0
expect_eq "workflow.checkpoint False: no folder" "$(ls ck 2>/dev/null | wc -l)" 0

# a transformer, pipeline 2, ZeRO 1, fp16: h 64, vocab 100, ffn 128, 4 heads = 4 kv heads: rank 0 (stage 0)
# holds the embedding (64 x 100 x 2 = 12800 bytes) and layer 1 (64 + 64 x 192 + 64 x 64 + 64 + 64 x 256
# + 64 x 128 = 41088 elements, 82176 bytes); rank 1 layer 2, the LM head (12800) and the final norm (128);
# the optimizer: 95040 parameters / 2 = 47520 a rank, 3 x (47520 + 5 x 64) x 4 = 574080 bytes
rm -rf ck
llm="model.type=transformer model.num_layers=2 model.parallelism.pipeline=2 model.parallelism.zero_stage=1
     model.transformer.hidden_size=64 model.transformer.vocab_size=100 model.transformer.ffn_hidden_size=128
     model.transformer.num_attention_heads=4 model.transformer.num_kv_heads=4"
sb run $common $llm train.epochs=1 checkpoint.steps_between_checkpoints=4 --accelerators 2 --local 2 --db t.db
expect_eq "layers: exit status" "$SB_RC" 0
expect_eq "layers: files" "$(listing ck)" "global_epoch1_step4/layer_0-model_0_model_states.pt:12800 global_epoch1_step4/layer_1-model_0_model_states.pt:82176 global_epoch1_step4/layer_2-model_1_model_states.pt:82176 global_epoch1_step4/layer_3-model_1_model_states.pt:12800 global_epoch1_step4/layer_4-model_1_model_states.pt:128 global_epoch1_step4/zero_pp_rank_0_mp_rank_0_optim_states.pt:574080 global_epoch1_step4/zero_pp_rank_0_mp_rank_1_optim_states.pt:574080"
run=$(q t.db "SELECT max(id) FROM runs WHERE kind = 'train'")
expect_eq "layers: row" "$(q t.db "SELECT ranks || ':' || files || ':' || bytes FROM checkpoints WHERE run_id = $run")" \
    "2:7:$((12800 + 82176 + 82176 + 12800 + 128 + 2 * 574080))"

# write, then read, as separate invocations (mlpstorage: --num-checkpoints-read=-1, then --num-checkpoints-write=-1)
scale="checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0 checkpoint.checkpoint_folder=./ll"
sb checkpoint llama3_8b $scale checkpoint.num_checkpoints_write=2 checkpoint.num_checkpoints_read=-1 --accelerators 2 --db c.db
expect_eq "write only: exit status" "$SB_RC" 0
expect_eq "write only: rows" "$(q c.db "SELECT group_concat(op || checkpoint, ' ') FROM checkpoints WHERE run_id = (SELECT max(id) FROM runs)")" "write1 write2"
expect_eq "write only: files" "$(find ll -type f | wc -l)" 8
sb checkpoint llama3_8b $scale checkpoint.num_checkpoints_write=-1 checkpoint.num_checkpoints_read=2 --accelerators 2 --db c.db
expect_eq "read only: exit status" "$SB_RC" 0
expect_eq "read only: rows" "$(q c.db "SELECT group_concat(op || checkpoint || ':' || bytes, ' ') FROM checkpoints WHERE run_id = (SELECT max(id) FROM runs)")" \
    "read1:$((2 * (980256 + 5881569))) read2:$((2 * (980256 + 5881569)))"
# more than were written, another layout, nothing there: refused before anything runs, naming the folder
sb checkpoint llama3_8b $scale checkpoint.num_checkpoints_write=0 checkpoint.num_checkpoints_read=3 --accelerators 2 --db c.db
expect_eq "read 3 of 2: exit status" "$SB_RC" 2
expect_contains "read 3 of 2: why" sb.err "that an earlier run wrote into $(realpath ll)/, but global_epoch1_step3/zero_pp_rank_0_mp_rank_0_model_states.pt: No such file or directory"
sb checkpoint llama3_8b $scale checkpoint.num_checkpoints_write=0 checkpoint.num_checkpoints_read=1 --accelerators 4 --db c.db
expect_eq "other layout: exit status" "$SB_RC" 2
expect_contains "other layout: why" sb.err "where this run's checkpoint has"
sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./none checkpoint.num_checkpoints_write=0 checkpoint.num_checkpoints_read=1 --accelerators 2 --db c.db
expect_eq "nothing there: exit status" "$SB_RC" 2
expect_contains "nothing there: why" sb.err "into $(realpath none)/, but global_epoch1_step1/zero_pp_rank_0_mp_rank_0_model_states.pt: No such file"

finish
