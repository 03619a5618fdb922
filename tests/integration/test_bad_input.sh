#!/usr/bin/env bash
# Bad input. Part 1: a table of bad workload files, each run with
# `shardbench run FILE`: exit status 2, the exact error line naming file,
# line and key, and nothing started (no result database). test_errors.sh
# covers a bad integer in a file, bad overrides, an unknown preset and the
# batch-larger-than-shard check from the command line; this table covers the
# rest. Part 2: a rogue ZeroMQ peer sends a real coordinator every kind of
# bad frame, gets a REJECT saying why, and a real worker then completes the
# run; the coordinator reports how many frames it rejected.
. "$(dirname "$0")/lib.sh"
: "${ROGUE_CLIENT:?path of the rogue_client binary}"

# bad_yaml NAME EXPECTED-STDERR-LINE < YAML: run FILE=NAME.yaml
bad_yaml () {
    local name=$1 expect=$2 file=$1.yaml
    cat >"$file"
    rm -f none.db
    sb run "$file" --db none.db
    expect_eq "$name: exit status" "$SB_RC" 2
    expect_eq "$name: error line" "$(grep '^shardbench: error: ' sb.err)" "shardbench: error: $expect"
    expect_eq "$name: nothing started" "$([ -e none.db ] && echo 'database created' || echo none)" none
}

bad_yaml malformed-flow "malformed-flow.yaml:4: malformed YAML: did not find expected ',' or ']' while parsing a flow sequence started at line 3" <<'YAML'
dataset:
  data_folder: ./d
  num_files_train: [1, 2
YAML
bad_yaml tab "tab.yaml:3: malformed YAML: found a tab character that violates indentation while scanning a plain scalar started at line 2 (indent YAML with spaces, not tabs)" <<'YAML'
reader:
  batch_size: 4
	read_threads: 2
YAML
bad_yaml indent "indent.yaml:3: malformed YAML: mapping values are not allowed in this context" <<'YAML'
reader:
  batch_size: 4
   read_threads: 2
YAML
bad_yaml quote "quote.yaml:3: malformed YAML: found unexpected end of stream while scanning a quoted scalar started at line 2" <<'YAML'
model:
  name: "unet3d
YAML
bad_yaml two-documents "two-documents.yaml:4: a workload file holds one YAML document, a second one starts here" <<'YAML'
reader:
  batch_size: 4
---
reader:
  batch_size: 8
YAML
bad_yaml duplicate "duplicate.yaml:4: key 'reader.batch_size' appears twice (first at line 2)" <<'YAML'
reader:
  batch_size: 4
  read_threads: 2
  batch_size: 8
YAML
bad_yaml not-a-mapping "not-a-mapping.yaml:1: a workload is a mapping of sections (dataset:, reader:, train:, ...)" <<'YAML'
- dataset
- reader
YAML
bad_yaml mapping-for-value "mapping-for-value.yaml:3: key 'reader.batch_size': expected a single value, got a mapping (with 'value')" <<'YAML'
reader:
  batch_size:
    value: 4
YAML
bad_yaml value-for-section "value-for-section.yaml:2: key 'train': expected a section of keys (such as 'train.epochs'), got a single value" <<'YAML'
reader: {batch_size: 4}
train: 3
YAML
bad_yaml list-for-value "list-for-value.yaml:2: key 'train.epochs': expected a single value, got a list" <<'YAML'
train:
  epochs: [1, 2]
YAML
bad_yaml float-for-integer "float-for-integer.yaml:2: key 'reader.batch_size': expected a non-negative integer, got '2.5'" <<'YAML'
reader:
  batch_size: 2.5
YAML
bad_yaml no-value "no-value.yaml:3: key 'dataset.num_files_train': expected a non-negative integer, got no value" <<'YAML'
dataset:
  data_folder: ./d
  num_files_train:
YAML
bad_yaml bool "bool.yaml:2: key 'reader.verify': expected true or false, got 'maybe'" <<'YAML'
reader:
  verify: maybe
YAML
bad_yaml enum "enum.yaml:2: key 'storage.storage_type': expected local_fs, parallel_fs, direct_fs, s3, s3dlio, object or synthetic, got 'hdfs'" <<'YAML'
storage:
  storage_type: hdfs
YAML
bad_yaml negative-size "negative-size.yaml:3: key 'dataset.record_length_bytes': expected a non-negative integer, got '-4096'" <<'YAML'
dataset:
  data_folder: ./d
  record_length_bytes: -4096
YAML
bad_yaml zero-size "zero-size.yaml:2: key 'dataset.record_length_bytes': 0 is out of range [1, 1000000000000]" <<'YAML'
dataset:
  record_length_bytes: 0
YAML
bad_yaml zero-files "zero-files.yaml:2: key 'dataset.num_files_train': 0 is out of range [1, 18000000000000000000]" <<'YAML'
dataset:
  num_files_train: 0
YAML
bad_yaml huge-size "huge-size.yaml:2: key 'dataset.num_files_train': 18446744073709551616 is out of range [1, 18000000000000000000]" <<'YAML'
dataset:
  num_files_train: 18446744073709551616
YAML
bad_yaml zero-batch "zero-batch.yaml:3: key 'reader.batch_size': 0 is out of range [1, 1000000000]" <<'YAML'
reader:
  read_threads: 2
  batch_size: 0
YAML
bad_yaml negative-time "negative-time.yaml:2: key 'train.computation_time': -0.5 is out of range [0, 3600]" <<'YAML'
train:
  computation_time: -0.5
YAML
bad_yaml small-buffer "small-buffer.yaml:2: key 'shardbench.io_buffer_bytes': 512 is out of range [4096, 1073741824]" <<'YAML'
shardbench:
  io_buffer_bytes: 512
YAML

# batch larger than a shard: found by the coordinator's plan, named with the
# line of reader.batch_size (or "default" when the default is too large)
cat >batch.yaml <<'YAML'
dataset:
  data_folder: ./d
  num_files_train: 10
reader:
  batch_size: 8
YAML
sb run batch.yaml --accelerators 2 --db batch.db
expect_eq "batch larger than shard: exit status" "$SB_RC" 2
expect_eq "batch larger than shard: error line" "$(grep '^shardbench: error: ' sb.err)" \
    "shardbench: error: batch.yaml:5: key 'reader.batch_size': 10 samples over 2 ranks gives 5 per rank, less than one batch of 8"
expect_eq "batch larger than shard: no run" "$(q batch.db "SELECT count(*) FROM runs")" 0
sb run batch.yaml reader.batch_size=6 --accelerators 2 --db batch.db
expect_eq "batch from the command line: error line" "$(grep '^shardbench: error: ' sb.err)" \
    "shardbench: error: command line: key 'reader.batch_size': 10 samples over 2 ranks gives 5 per rank, less than one batch of 6"
printf 'dataset:\n  data_folder: ./d\n  num_files_train: 3\n' >default-batch.yaml
sb run default-batch.yaml --accelerators 4 --db batch.db
expect_eq "default batch: error line" "$(grep '^shardbench: error: ' sb.err)" \
    "shardbench: error: default: key 'reader.batch_size': 3 samples over 4 ranks gives 0 per rank, less than one batch of 1"

# workload names that are neither a file nor a preset, and files that are no workload
sb run missing.yaml
expect_eq "missing file: exit status" "$SB_RC" 2
expect_eq "missing file: error line" "$(grep '^shardbench: error: ' sb.err)" \
    "shardbench: error: missing.yaml: cannot open workload file: No such file or directory"
sb run QuickStart
expect_eq "preset with wrong case: exit status" "$SB_RC" 2
expect_eq "preset with wrong case: error line" "$(grep '^shardbench: error: ' sb.err)" \
    "shardbench: error: unknown workload 'QuickStart': not a file and not a preset (presets: $("$SHARDBENCH" workloads | paste -sd ' '))"
printf 'reader:\n  batch_size: 4\0\n' >nul.yaml
sb run nul.yaml
expect_eq "NUL byte: exit status" "$SB_RC" 2
expect_eq "NUL byte: error line" "$(grep '^shardbench: error: ' sb.err)" "shardbench: error: nul.yaml: not a text file (NUL byte)"

# ---- Part 2: bad frames to a real coordinator, then a real worker
common="dataset.data_folder=./rogue dataset.num_files_train=8 dataset.record_length_bytes=1000
        dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.epochs=1"
sb datagen $common --accelerators 1 --db rogue.db
expect_eq "rogue: datagen" "$SB_RC" 0
( timeout 120 "$SHARDBENCH" run $common --accelerators 1 --workers 1 --bind "tcp://$SB_LO:*" \
      --join-timeout 60 --db rogue.db >coord.out 2>coord.err ) &
coord=$!
# the coordinator logs where workers should connect once it listens
ep=$(coordinator_endpoint coord.err)
timeout 60 "$ROGUE_CLIENT" "$ep" >rogue.out 2>rogue.err
expect_eq "rogue: every bad frame refused as expected" "$?" 0
sed 's/^/    /' rogue.out
expect_contains "rogue: garbage REJECT" rogue.out "ok - garbage: frame rejected: 17 trailing bytes after the message"
expect_contains "rogue: truncated REJECT" rogue.out "ok - truncated: frame rejected: not a complete, bounded msgpack object"
expect_contains "rogue: version REJECT" rogue.out "ok - other version: coordinator speaks protocol version"
expect_contains "rogue: oversized frame dropped" rogue.out "ok - oversized frame: no answer (dropped by ZeroMQ)"
timeout 60 "$SHARDBENCH_WORKER" --coordinator "$ep" --host real-worker >worker.out 2>worker.err
expect_eq "rogue: the real worker exits 0" "$?" 0
wait $coord
expect_eq "rogue: the run completes" "$?" 0
expect_eq "rogue: run succeeded" "$(q rogue.db "SELECT status, workers, hosts FROM runs WHERE id = (SELECT max(id) FROM runs)")" "succeeded|1|1"
expect_eq "rogue: every sample read" "$(q rogue.db "SELECT samples FROM epochs WHERE run_id = (SELECT max(id) FROM runs)")" 8
expect_contains "rogue: rejected frames counted" coord.err "6 malformed or unexpected frames were rejected"
expect_contains "rogue: each rejection logged with its reason" coord.err "rejected a frame from an unknown peer: 2 frames, expected 1"
expect_eq "rogue: 6 rejections logged" "$(grep -c 'rejected a frame from an unknown peer' coord.err)" 6

finish
