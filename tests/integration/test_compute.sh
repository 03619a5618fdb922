#!/usr/bin/env bash
# train.computation_time as a distribution, end to end: every rank draws its
# batches' compute times from its own seeded stream, so two runs with one
# seed record the same compute per rank and epoch, ranks differ, and the
# times are those of lib/base/distribution.c (tests/unit/test_distribution.c
# checks that sequence). Then every built-in preset is accepted by `run`.
. "$(dirname "$0")/lib.sh"

# 64 samples, 2 ranks, batch 2: 16 batches per rank and epoch; AU and
# compute_s leave out the first step, so compute_s is draws 1..15 of
# uniform(0.01, 0.03) under seed 123, stream = rank, index = epoch << 32 | step
common="dataset.data_folder=./data dataset.num_files_train=64 dataset.record_length_bytes=4096
        dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.epochs=2 train.seed=123"
# shellcheck disable=SC2086
sb run quickstart $common '++workload.train.computation_time={type: uniform, min: 0.01, max: 0.03}' \
    --accelerators 2 --local 1 --db c.db
expect_eq "uniform compute: exit status" "$SB_RC" 0
# shellcheck disable=SC2086
sb run quickstart $common '++workload.train.computation_time={type: uniform, min: 0.01, max: 0.03}' \
    --accelerators 2 --local 2 --db c.db
expect_eq "uniform compute, 2 workers: exit status" "$SB_RC" 0
runs=$(q c.db "SELECT group_concat(id, ' ') FROM runs WHERE kind = 'train' ORDER BY id")
expect_eq "two training runs" "$(echo "$runs" | wc -w)" 2
for run in $runs; do
    expect_eq "run $run: compute per epoch and rank is the seeded draws" \
        "$(q c.db "SELECT group_concat(epoch || ':' || rank || ':' || printf('%.6f', compute_s), ' ') FROM
                   (SELECT * FROM rank_epochs WHERE run_id = $run AND epoch > 0 ORDER BY epoch, rank)")" \
        "1:0:0.330156 1:1:0.302624 2:0:0.261286 2:1:0.284442"
done

# another seed, other times
# shellcheck disable=SC2086
sb run quickstart $common train.seed=7 'train.computation_time={type: uniform, min: 0.01, max: 0.03}' \
    --accelerators 2 --local 1 --db c.db
expect_eq "seed 7: exit status" "$SB_RC" 0
expect_eq "seed 7: other compute times" \
    "$(q c.db "SELECT count(*) FROM rank_epochs WHERE run_id = (SELECT max(id) FROM runs) AND epoch > 0
               AND printf('%.6f', compute_s) IN ('0.330156', '0.302624', '0.261286', '0.284442')")" 0

# a distribution the loader refuses never reaches the workers
# shellcheck disable=SC2086
sb run quickstart $common 'train.computation_time={type: normal, mean: 0.1}' --local 1 --db c.db
expect_eq "normal without stdev: exit status" "$SB_RC" 2
expect_contains "normal without stdev: message" sb.err \
    "command line: key 'train.computation_time': normal needs 'stdev'"

# every preset loads and plans a run (a tiny dataset: the preset's shape,
# not its size, generated first: workflow.generate_data); formats the generator does not write yet fail at datagen
for preset in $("$SHARDBENCH" workloads); do
    case $preset in llama3_*) continue ;; esac
    sb run "$preset" workflow.generate_data=True dataset.data_folder="./p-$preset" dataset.num_files_train=4 dataset.num_samples_per_file=2 \
        dataset.record_length_bytes=1024 dataset.record_length_bytes_stdev=0 reader.batch_size=1 train.epochs=1 \
        train.computation_time=0 --accelerators 1 --local 1 --db p.db
    if [ "$SB_RC" -eq 0 ]; then
        pass "preset $preset: runs"
    elif grep -q "format\|parquet" sb.err && ! grep -q "key '" sb.err; then
        pass "preset $preset: loads, fails at datagen ($(grep -m1 'error' sb.err | cut -c1-100))"
    else
        fail "preset $preset: exit status $SB_RC: $(grep -m1 'error' sb.err)"
    fi
done

finish
