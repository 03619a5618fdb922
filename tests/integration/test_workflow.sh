#!/usr/bin/env bash
# DLIO's workflow section decides what `shardbench run` does (issue 15):
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

finish
