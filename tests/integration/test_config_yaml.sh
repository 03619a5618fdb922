#!/usr/bin/env bash
# Workload YAML through the real `shardbench` binary: YAML merge
# keys are applied (datasize and a run see the merged values, explicit keys
# win); a 400 KB deeply nested file is refused at once with the file, line,
# key and limit (libyaml took 95 s on it); the reports (summary, --json,
# --html, compare) show the workload's model.name, in DLIO's two spellings.
. "$(dirname "$0")/lib.sh"

cat >merge.yaml <<'YAML'
model:
  name: mergedmodel
defaults: &defaults
  batch_size: 4
  read_threads: 1
io: &io
  batch_size: 2
  read_threads: 3
  prefetch_size: 5
dataset:
  data_folder: synthetic://merge
  num_files_train: 16
  record_length_bytes: 4096
  record_length_bytes_stdev: 0
reader:
  <<: [*defaults, *io]
  read_threads: 2
train:
  epochs: 1
  computation_time: 0.001
YAML

# datasize: batch 4, from the first mapping of the merge list (not 2, the second's)
sb datasize merge.yaml --hosts 1 --host-memory-gb 1 --accelerators 2
expect_eq "datasize: exit" "$SB_RC" 0
expect_eq "datasize: merged batch_size, earlier mapping wins" "$(sed -n 3p sb.out)" \
    "  files for 500 steps per epoch:  ceil (500 x batch 4 x 2 accelerators / 1) = 4000"

# a run: 16 samples over 2 ranks in steps of 4; the effective configuration
# holds the merged keys, and the reader's own read_threads
sb run merge.yaml --accelerators 2 --local 1 --db m.db
expect_eq "run: exit" "$SB_RC" 0
# (DLIO's index sampler: 8 samples a rank, 8 / 4 = 2 steps, nothing dropped;
# 2 loader threads: the reader's read_threads, not a merged one)
expect_contains "run: batch of 4" sb.err "dlio_index sampler, 2 loader threads per rank, 16 objects listed; epoch 1: 2 steps of 4 samples per rank, 0 dropped, 0 files unused"
expect_eq "run: summary names the model" "$(grep '^shardbench train run' sb.out)" \
    "shardbench train run 1: workload merge.yaml (model mergedmodel), 2 accelerators on 1 workers (1 hosts), seed 123"
python3 - <<'PY' >cfg.txt
import sqlite3
print(sqlite3.connect("m.db").execute("SELECT config FROM runs WHERE id = 1").fetchone()[0])
PY
expect_eq "run: runs.config holds the merged reader" "$(sed -n '/^reader:/,/^[a-z]/p' cfg.txt | grep '^  ')" \
"  batch_size: 4
  prefetch_size: 5
  read_threads: 2"

# the model name in every report of the run
sb report 1 --db m.db
expect_eq "report: summary" "$(grep '^shardbench train run' sb.out)" \
    "shardbench train run 1: workload merge.yaml (model mergedmodel), 2 accelerators on 1 workers (1 hosts), seed 123"
sb report 1 --json --db m.db
expect_eq "report --json: model and workload" \
    "$(python3 -c 'import json,sys; s = json.load(open("sb.out"))["shardbench"]; print(s["model"], s["workload"])')" \
    "mergedmodel merge.yaml"
sb report 1 --html m.html --db m.db
expect_eq "report --html: exit" "$SB_RC" 0
expect_contains "report --html: model row" m.html "<tr><th>model</th><td>mergedmodel</td></tr>"

# DLIO's older scalar spelling `model: NAME`, and model=NAME on the command line
sed 's/^  name: mergedmodel$//; s/^model:$/model: scalarmodel/' merge.yaml >scalar.yaml
sb run scalar.yaml --accelerators 2 --local 1 --db m.db
expect_eq "scalar model: exit" "$SB_RC" 0
expect_eq "scalar model: summary" "$(grep '^shardbench train run' sb.out)" \
    "shardbench train run 2: workload scalar.yaml (model scalarmodel), 2 accelerators on 1 workers (1 hosts), seed 123"
sb run merge.yaml model=cli_model --accelerators 2 --local 1 --db m.db
expect_eq "model= override: summary" "$(grep '^shardbench train run' sb.out)" \
    "shardbench train run 3: workload merge.yaml (model cli_model), 2 accelerators on 1 workers (1 hosts), seed 123"
sb compare 1 2 --db m.db
# label column 40 wide (train_throughput_mean_samples_per_second), values 16 wide
expect_eq "compare: model row" "$(grep '^  model ' sb.out)" \
    "$(printf '  %-40s %16s %16s' model mergedmodel scalarmodel)"

# a preset: its model.name (the run follows a datagen run); no model section: the default
sb run quickstart dataset.num_files_train=8 train.epochs=1 --accelerators 1 --local 1 --db p.db
expect_eq "preset: summary" "$(grep '^shardbench train run' sb.out | sed 's/ run [0-9]*:/ run N:/; s/, seed .*//')" \
    "shardbench train run N: workload quickstart (model quickstart), 1 accelerators on 1 workers (1 hosts)"
grep -v '^model:$\|^  name: mergedmodel$' merge.yaml >nomodel.yaml
sb run nomodel.yaml --accelerators 2 --local 1 --db m.db
expect_eq "no model section: summary" "$(grep '^shardbench train run' sb.out)" \
    "shardbench train run 4: workload nomodel.yaml (model custom), 2 accelerators on 1 workers (1 hosts), seed 123"

# 400 KB of nested flow sequences: refused before libyaml composes them
python3 -c 'import sys; n = 200000; sys.stdout.write("reader:\n  batch_size: " + "[" * n + "]" * n + "\n")' >deep.yaml
start=$(date +%s%N)
sb run deep.yaml --db none.db
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "# deep.yaml ($(stat -c %s deep.yaml) bytes) refused in ${elapsed_ms} ms"
expect_eq "deep: exit" "$SB_RC" 2
expect_eq "deep: error names file, line, key and limit" "$(grep '^shardbench: error: ' sb.err)" \
    "shardbench: error: deep.yaml:2: key 'reader.batch_size.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0...': YAML nested deeper than 64 levels (the limit)"
expect_eq "deep: refused within 5 s" "$([ "$elapsed_ms" -lt 5000 ] && echo yes || echo "no: $elapsed_ms ms")" yes
expect_eq "deep: nothing started" "$([ -e none.db ] && echo 'database created' || echo none)" none

# block style, one level per line: refused on the 65th
python3 -c 'import sys; sys.stdout.write("".join(" " * i + "k:\n" for i in range(1000)) + " " * 1000 + "1\n")' >block.yaml
sb run block.yaml --db none.db
expect_eq "deep block: exit" "$SB_RC" 2
expect_contains "deep block: line 65" sb.err "shardbench: error: block.yaml:65: key 'k.k.k."

finish
