#!/usr/bin/env bash
# shardbench takes dlio_benchmark's command line as mlpstorage
# builds it (workload=NAME --config-dir=DIR ++workload.K=V ++hydra.run.dir=
# ++hydra.output_subdir=), writes the run's configuration where Hydra writes
# it (credentials redacted), refuses malformed forms with exit status 2
# naming them; and `shardbench datasize` gives mlpstorage's counts.
. "$(dirname "$0")/lib.sh"

# a workload folder as mlpstorage ships it: CONFIGS/dlio/workload/NAME.yaml
mkdir -p configs/dlio/workload
cat > configs/dlio/workload/tiny_h100.yaml <<YAML
model:
  name: tiny
framework: pytorch
workflow:
  generate_data: True
  train: True
dataset:
  data_folder: $PWD/data/tiny
  format: npz
  num_files_train: 64
  num_samples_per_file: 1
  record_length_bytes: 4096
reader:
  data_loader: pytorch
  batch_size: 2
train:
  epochs: 1
  computation_time: 0.001
storage:
  storage_type: local_fs
  storage_options:
    access_key_id: yaml-key-id
    secret_access_key: yaml-secret-value
YAML
run_dir="$PWD/results/training/tiny/run/20250613_120000"
# DLIOBenchmark.generate_dlio_command's words, in its order
sb run workload=tiny_h100 "++hydra.run.dir=$run_dir" ++hydra.output_subdir=dlio_config \
    ++workload.dataset.num_files_train=8 ++workload.train.epochs=2 \
    ++workload.storage.storage_options.secret_access_key=cli-secret-value \
    "--config-dir=$PWD/configs/dlio" --accelerators 2 --db r.db
expect_eq "mlpstorage's argv: exit status" "$SB_RC" 0
expect_eq "the run read CONFIG_DIR/workload/tiny_h100.yaml with the overrides" \
    "$(q r.db "SELECT workload || ' ' || (SELECT count(*) FROM epochs e WHERE e.run_id = runs.id) FROM runs WHERE kind = 'train'")" \
    "tiny_h100 2"
# the run's results go straight into hydra.run.dir, as DLIO writes them
# (DLIO's files only: the metadata and the stdout/stderr logs are mlpstorage's to write)
expect_eq "hydra.run.dir holds DLIO's files, dlio_config config.yaml, hydra.yaml and overrides.yaml" \
    "$(cd "$run_dir" && find . -type f | sort | tr '\n' ' ')" \
    "./0_output.json ./0_per_epoch_stats.json ./1_output.json ./1_per_epoch_stats.json ./dlio.log ./dlio_config/config.yaml ./dlio_config/hydra.yaml ./dlio_config/overrides.yaml ./summary.json "
expect_eq "config.yaml: the workload under workload:, as Hydra saves DLIO's" \
    "$(sed -n '1p;/num_files_train/p;/epochs/p' "$run_dir/dlio_config/config.yaml" | tr -s ' ' | tr '\n' '|')" \
    "workload:| num_files_train: 8| epochs: 2|"
expect_eq "overrides.yaml: the task overrides, the secret redacted" "$(cat "$run_dir/dlio_config/overrides.yaml")" \
"- 'workload=tiny_h100'
- '++workload.dataset.num_files_train=8'
- '++workload.train.epochs=2'
- '++workload.storage.storage_options.secret_access_key=<redacted>'"
if grep -rq "cli-secret-value\|yaml-secret-value" "$run_dir" sb.out sb.err; then
    fail "a secret reached the output folder or the log"
else
    pass "no secret in the output folder or the log"
fi

# --config-dir DIR (two words), hydra.output_subdir left out: Hydra's .hydra;
# a preset name not under DIR/workload/ is the built-in preset
sb datagen workload=quickstart ++hydra.run.dir=out2 --config-dir "$PWD/configs/dlio" \
    ++workload.dataset.data_folder=./qs ++workload.dataset.num_files_train=4 --db r.db
expect_eq "--config-dir DIR, preset fallback: exit status" "$SB_RC" 0
expect_eq "default output_subdir .hydra" "$(ls out2/.hydra | tr '\n' ' ')" "config.yaml hydra.yaml overrides.yaml "
sb datagen workload=quickstart ++hydra.run.dir=out3 ++hydra.output_subdir=null \
    dataset.data_folder=./qs dataset.num_files_train=4 --db r.db
expect_eq "output_subdir=null: exit status" "$SB_RC" 0
expect_eq "output_subdir=null: the folder and the datagen's results (dlio.log: DLIO's datagen writes no statistics), no configuration" \
    "$(find out3 | grep -c -e dlio_config -e .hydra -e '\.yaml'):$(ls out3 | tr '\n' ' ')" "0:dlio.log "

# malformed forms: exit status 2, the argument named
while IFS='|' read -r args want; do
    # shellcheck disable=SC2086
    sb run $args --db bad.db
    expect_eq "'$args': exit status 2" "$SB_RC" 2
    expect_contains "'$args': names it" sb.err "$want"
done <<'CASES'
workload=|'workload=': workload=NAME needs a name
+++workload.train.epochs=2|'+++workload.train.epochs=2': Hydra overrides start with
++workload.train.epochs|'++workload.train.epochs' is not ++workload.KEY=VALUE
++reader.batch_size=2|'++reader.batch_size=2': shardbench takes ++workload.KEY=VALUE
++hydra.run.dir=|'++hydra.run.dir=': hydra.run.dir needs a folder
--config-dir|'--config-dir' needs a folder
--config-dir=|'--config-dir=' needs a folder
workload=nothing_here --config-dir=configs/dlio|no configs/dlio/workload/nothing_here.yaml and no preset
workload=quickstart quickstart|two workloads: 'quickstart' and workload=quickstart
--config-dir=/nonexistent/sb workload=x|--config-dir /nonexistent/sb
--local=2|unknown option '--local=2'
CASES
[ ! -e bad.db ] && pass "malformed forms open no database" || fail "a malformed form opened the database"

# datasize: mlpstorage's arithmetic (resnet50_h100, 16 x 1024 GiB, 128
# accelerators: ceil (5 x 16 x 1024 GiB / (1251 x 114660.07)) = 613226)
sb datasize resnet50_h100 --hosts 16 --host-memory-gb 1024 --accelerators 128
expect_eq "datasize resnet50_h100: exit status" "$SB_RC" 0
expect_eq "datasize resnet50_h100: mlpstorage's 613226 files, int (613226 / 10000) subfolders" "$(tail -1 sb.out)" \
    "dataset.num_files_train=613226 dataset.num_subfolders_train=61"
# flux_b200 has no record_length_bytes: the sum of its float32 columns, 2164832
sb datasize flux_b200 --hosts 2 --host-memory-gb 512 --accelerators 8 --measured-memory-gb 2000
expect_eq "datasize flux_b200, measured memory over the declared" "$(tail -1 sb.out)" \
    "dataset.num_files_train=17222 dataset.num_subfolders_train=1"
expect_contains "datasize flux_b200: the columns' sum" sb.out "2164832 bytes (the sum of dataset.parquet.columns)"
expect_contains "datasize flux_b200: the measured memory used" sb.out "memory: the measured 2000.0 GiB"

finish
