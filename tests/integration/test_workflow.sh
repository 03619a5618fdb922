#!/usr/bin/env bash
# DLIO's workflow section decides what `shardbench run` does:
# generate only when workflow.generate_data asks, else a missing or short
# dataset is an error saying how to generate it; train false with
# generate_data true generates only; train false with checkpoint true runs
# the checkpoint workflow and reads no dataset; runs.workflow records the
# phases.
. "$(dirname "$0")/lib.sh"

common="dataset.num_files_train=12 dataset.record_length_bytes=4096 reader.batch_size=2 train.epochs=1
        train.computation_time=0 --accelerators 2 --local 1 --progress off"

# --- no dataset, generate_data false (DLIO's default; the quickstart preset,
# which the command line starts from, sets it true): exit 2, how to generate it
cat > plain.yaml <<'EOF'
model:
  name: plain
dataset:
  data_folder: ./none
  format: npz
EOF
sb run ./plain.yaml $common --db none.db
expect_eq "no dataset, generate_data false: exit 2" "$SB_RC" 2
expect_contains "... says to run datagen" sb.err 'generate it with `shardbench datagen`'
expect_contains "... or generate_data" sb.err "workflow.generate_data=True"
expect_eq "... nothing generated" "$(find none -name '*.npz' 2>/dev/null | wc -l)" 0
expect_eq "... no run row" "$(q none.db "SELECT count(*) FROM runs")" 0

# --- workflow.generate_data=True: datagen then train in one command
sb run dataset.data_folder=./gen workflow.generate_data=True $common --db gen.db
expect_eq "generate_data true: exit 0" "$SB_RC" 0
expect_eq "... datagen then train" "$(q gen.db "SELECT group_concat(kind || ':' || status || ':' || workflow, ' ') FROM runs ORDER BY id")" \
    "datagen:succeeded:datagen train:succeeded:datagen,train"
expect_eq "... 12 files" "$(find gen/train -name 'img_*_of_12.npz' | wc -l)" 12
# a whole dataset of this workload is not generated again
sb run dataset.data_folder=./gen workflow.generate_data=True $common --db gen2.db
expect_eq "generate_data true over a whole dataset: exit 0" "$SB_RC" 0
expect_eq "... train only" "$(q gen2.db "SELECT group_concat(kind || ':' || workflow, ' ') FROM runs ORDER BY id")" "train:train"
expect_contains "... says why" sb.err "is whole and of this workload: not generated again"

# --- a short dataset, generate_data false: exit 2 with the how-to
sb run dataset.data_folder=./gen workflow.generate_data=False $common dataset.num_files_train=20 --db short.db
expect_eq "short dataset: exit 2" "$SB_RC" 2
expect_contains "... says how to generate it" sb.err 'shardbench datagen'
# with generate_data true over another generation: no --clean in run, it says what to do
sb run dataset.data_folder=./gen workflow.generate_data=True $common dataset.num_files_train=20 --db short.db
expect_eq "generate_data over another generation: exit 2" "$SB_RC" 2
expect_contains "... says datagen --clean" sb.err 'run `shardbench datagen --clean` with this workload'
expect_eq "... the 12 files kept" "$(find gen/train -name 'img_*_of_12.npz' | wc -l)" 12

# --- a DLIO *_datagen.yaml given to run: generate only, exit 0, no verdict
cat > dg_datagen.yaml <<'EOF'
model:
  name: dg
workflow:
  generate_data: True
  train: False
  checkpoint: False
dataset:
  data_folder: ./dg
  format: npz
  num_files_train: 8
  record_length_bytes: 4096
EOF
sb run ./dg_datagen.yaml --accelerators 2 --local 1 --progress off --db dg.db
expect_eq "datagen yaml via run: exit 0" "$SB_RC" 0
expect_eq "... one datagen run, no train" "$(q dg.db "SELECT group_concat(kind || ':' || status || ':' || workflow, ' ') FROM runs")" \
    "datagen:succeeded:datagen"
expect_eq "... 8 files" "$(find dg/train -name 'img_*_of_8.npz' | wc -l)" 8
if grep -q "FAIL" sb.out sb.err; then fail "... no FAIL line"; else pass "... no FAIL line"; fi

# --- train, generate_data and checkpoint all false: nothing to run
sb run ./dg_datagen.yaml workflow.generate_data=False --accelerators 2 --local 1 --progress off --db nothing.db
expect_eq "nothing to run: exit 2" "$SB_RC" 2
expect_contains "... says so" sb.err "nothing to run"

# --- train false, checkpoint true (llama3_*.yaml): the checkpoint workflow, no dataset read or made
cat > ck.yaml <<'EOF'
model:
  name: ck
  num_layers: 2
  transformer:
    vocab_size: 64
    hidden_size: 32
    ffn_hidden_size: 64
    num_attention_heads: 4
    num_kv_heads: 4
workflow:
  generate_data: False
  train: False
  checkpoint: True
dataset:
  data_folder: ./ck-data
checkpoint:
  checkpoint_folder: ./ck
  num_checkpoints_write: 1
  num_checkpoints_read: 1
EOF
sb run ./ck.yaml --accelerators 2 --local 1 --progress off --db ck.db
expect_eq "checkpoint yaml via run: exit 0" "$SB_RC" 0
expect_eq "... a checkpoint run, no train" "$(q ck.db "SELECT group_concat(kind || ':' || status || ':' || workflow, ' ') FROM runs")" \
    "checkpoint:succeeded:checkpoint"
expect_eq "... one write and one read" "$(q ck.db "SELECT group_concat(op, ',') FROM checkpoints ORDER BY seq")" "write,read"
expect_eq "... no dataset made" "$(ls ck-data 2>/dev/null | wc -l)" 0
expect_eq "... checkpoint files written" "$([ "$(find ck -type f | wc -l)" -gt 0 ] && echo yes)" yes

# --- train false, generate_data and checkpoint true: generate, then checkpoint (two runs, as DLIO)
sb run ./ck.yaml workflow.generate_data=True dataset.num_files_train=4 dataset.num_samples_per_file=1 \
    dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 checkpoint.checkpoint_folder=./ck2 \
    --accelerators 2 --local 1 --progress off --db ck2.db
expect_eq "generate then checkpoint via run: exit 0" "$SB_RC" 0
expect_eq "... a datagen run, then a checkpoint run" \
    "$(q ck2.db "SELECT group_concat(kind || ':' || status || ':' || workflow, ' ') FROM (SELECT * FROM runs ORDER BY id)")" \
    "datagen:succeeded:datagen checkpoint:succeeded:checkpoint"
expect_eq "... the dataset made" "$(find ck-data/train -type f -name '*.npz' | wc -l)" 4
expect_eq "... one write and one read" "$(q ck2.db "SELECT group_concat(op, ',') FROM checkpoints ORDER BY seq")" "write,read"
sb run ./ck.yaml workflow.generate_data=True --accelerators 2 --workers 1 --bind "tcp://$SB_LO:0" --progress off \
    --db ck3.db
expect_eq "... with --workers: exit 2" "$SB_RC" 2
expect_contains "... says how in two commands" sb.err "generate the dataset with \`shardbench datagen\`"

# --- evaluation (workflow.evaluation): datagen writes valid/ as DLIO names it
ev="dataset.data_folder=./ev dataset.num_files_train=8 dataset.num_files_eval=6 dataset.num_subfolders_eval=2 \
     dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 --accelerators 2 --local 1 --progress off"
sb datagen $ev --db ev.db
expect_eq "datagen with num_files_eval: exit 0" "$SB_RC" 0
expect_eq "... exactly the 6 valid/ files, DLIO's names" "$(cd ev && find valid -type f | sort | tr '\n' ' ')" \
     "valid/0/img_0_of_6.npz valid/0/img_2_of_6.npz valid/0/img_4_of_6.npz valid/1/img_1_of_6.npz valid/1/img_3_of_6.npz valid/1/img_5_of_6.npz "
expect_eq "... and the 8 train/ files" "$(find ev/train -name 'img_*_of_8.npz' | wc -l)" 8
expect_eq "... the datagen row counts both sets" "$(q ev.db "SELECT samples FROM epochs WHERE run_id = 1 AND epoch = 0")" 14
valid_bytes=$(cat ev/valid/*/* | wc -c)

# 4 epochs, evaluations after epochs 2 and 4 (eval_after_epoch 2, every 2): each reads
# every valid/ file once (6 files, 2 ranks, batch_size_eval 1: 3 steps per rank)
mkdir tr
sb run $ev workflow.generate_data=False workflow.evaluation=True reader.batch_size=2 reader.batch_size_eval=1 \
    train.epochs=4 train.computation_time=0.001 evaluation.eval_time=0.002 evaluation.eval_after_epoch=2 \
    evaluation.epochs_between_evals=2 shardbench.trace=./tr --db ev.db
expect_eq "evaluation run: exit 0" "$SB_RC" 0
run=$(q ev.db "SELECT max(id) FROM runs")
expect_eq "... phases recorded" "$(q ev.db "SELECT kind || ':' || workflow FROM runs WHERE id = $run")" "train:train,eval"
expect_eq "... evaluations after epochs 2 and 4, every valid/ byte once each" \
     "$(q ev.db "SELECT group_concat(epoch || ':' || samples || ':' || steps || ':' || bytes, ' ') FROM evals WHERE run_id = $run ORDER BY epoch")" \
     "2:6:3:$valid_bytes 4:6:3:$valid_bytes"
expect_eq "... reads of valid/ per epoch in the trace" \
     "$(awk -F, 'NR > 1 && $6 ~ /^valid\// { n[$2]++ } END { for (e in n) printf "%s:%s ", e, n[e] }' tr/*.csv | tr ' ' '\n' | sort | tr '\n' ' ')" \
     "2:6 4:6 "
expect_eq "... each valid/ file once per evaluation" \
     "$(awk -F, 'NR > 1 && $6 ~ /^valid\// { print $2, $6 }' tr/*.csv | sort | uniq -d | wc -l)" 0
expect_eq "... 2 ranks x 2 evaluations" "$(q ev.db "SELECT count(*), min(steps), max(steps) FROM eval_ranks WHERE run_id = $run")" "4|3|3"
# compute_s counts the steps after the first, as rank_epochs.compute_s does: 2 x 2 ms
expect_eq "... eval time computed: 2 ms per step" \
     "$(q ev.db "SELECT count(*) FROM eval_ranks WHERE run_id = $run AND abs(compute_s - 0.004) < 1e-9")" 4
expect_eq "... DLIO's evaluation figures" \
     "$(q ev.db "SELECT eval_au_mean_percentage > 0, eval_throughput_mean_samples_per_second > 0, eval_au_meet_expectation IS NOT NULL FROM runs WHERE id = $run")" "1|1|1"
# the training rows are the training steps' alone
expect_eq "... training epochs unchanged: 4 x 8 samples, no valid/ read in them" \
     "$(q ev.db "SELECT group_concat(epoch || ':' || samples, ' ') FROM epochs WHERE run_id = $run ORDER BY epoch")" \
     "1:8 2:8 3:8 4:8"
expect_eq "... training reads: train/ only, 8 per epoch" \
     "$(awk -F, 'NR > 1 && $6 ~ /^train\// { n++ } END { print n }' tr/*.csv)" 32
expect_eq "... timeseries holds the training seconds" \
     "$(q ev.db "SELECT (SELECT sum(samples) FROM timeseries WHERE run_id = $run) = (SELECT sum(samples) FROM epochs WHERE run_id = $run)")" 1
expect_contains "... the log names the evaluation" sb.err "evaluation after epoch 4: 6 samples of valid/"

# evaluation with no valid/ files: exit 2 with how to make them
sb run dataset.data_folder=./gen workflow.generate_data=False workflow.evaluation=True dataset.num_files_eval=4 $common --db noeval.db
expect_eq "evaluation set missing: exit 2" "$SB_RC" 2
expect_contains "... names the missing folder" sb.err "evaluation set: no objects under "
expect_contains "... and valid/" sb.err "valid/ (dataset.num_files_eval=4)"
expect_contains "... says how to generate it" sb.err "generate the evaluation set with \`shardbench datagen\`"
# evaluation without an evaluation set
sb run dataset.data_folder=./gen workflow.generate_data=False workflow.evaluation=True $common --db noeval.db
expect_eq "evaluation with num_files_eval 0: exit 2" "$SB_RC" 2
expect_contains "... says so" sb.err "workflow.evaluation needs an evaluation set: set dataset.num_files_eval"

# parquet with record_length_bytes_stdev: each file's rows are drawn, so the
# evaluation reads valid/ by the generator's sizes of the same layout (the
# coordinator once sized them without the parquet layout: a short read)
pq="dataset.format=parquet dataset.num_files_train=4 dataset.num_files_eval=2 dataset.num_samples_per_file=4
    dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=1024 dataset.parquet.row_group_size=2
    dataset.data_folder=./pqev train.computation_time=0 reader.batch_size=2 train.epochs=1"
# shellcheck disable=SC2086 # one override per word
sb run $pq workflow.generate_data=True workflow.evaluation=True --accelerators 1 --local 1 --db pqev.db
expect_eq "parquet with a record stdev, evaluated: exit 0" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -3 sb.err
expect_eq "... the evaluation read every valid/ byte of its rows' groups at least once" \
    "$(q pqev.db "SELECT samples, bytes > 0 FROM evals")" "8|1"

finish
