#!/usr/bin/env bash
# The worker's own late wake-ups do not count against the storage: an
# accelerator starts its next compute when its last one ended, its batch
# was in and (train.sync step) the barrier released, not when the worker's
# loop noticed. SHARDBENCH_TEST_LATE_WAKE_MS makes the loop sleep that
# long each time it notices a compute deadline (a loaded host's late
# wake-up, made large and certain).
. "$(dirname "$0")/lib.sh"

# synthetic storage (every batch in long before its step), 2 ranks on one
# worker (its barrier is released by the worker itself), batch 2, 64
# one-sample files: 16 steps per rank; compute 0.05 s a step. The loop is
# 0.03 s late at each deadline: counted from when the loop noticed, every
# step would take at least 0.08 s and AU could be at most 0.05 / 0.08 =
# 0.625, with at least 0.03 s a step at the barrier.
common="dataset.data_folder=synthetic://late dataset.num_files_train=64 dataset.num_samples_per_file=1
        dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 reader.batch_size=2
        train.epochs=1 train.computation_time=0.05 workflow.generate_data=False"
# shellcheck disable=SC2086
SHARDBENCH_TEST_LATE_WAKE_MS=30 sb run quickstart $common --accelerators 2 --local 1 --db late.db
expect_eq "late loop: exit status" "$SB_RC" 0
expect_contains "late loop: the worker's loop is late on purpose" sb.err \
    "test hook: the loop sleeps 30 ms at each compute deadline it notices"
run=$(q late.db "SELECT max(id) FROM runs")
# compute is computation_time per step after the first, exactly
expect_eq "late loop: compute per rank is 15 x 0.05 s" \
    "$(q late.db "SELECT group_concat(rank || ':' || printf('%.6f', compute_s), ' ') FROM
                  (SELECT * FROM rank_epochs WHERE run_id = $run ORDER BY rank)")" "0:0.750000 1:0.750000"
# both ranks compute from the one release, so neither waits at a barrier
# after its first step (that one: the microseconds between the ranks'
# first reads); the loop's 0.03 s a step would make it 0.48 s or more
expect_eq "late loop: no barrier wait from the loop's lateness (under 0.03 s in 16 steps)" \
    "$(q late.db "SELECT count(*) FROM rank_epochs WHERE run_id = $run AND barrier_s < 0.03")" 2
# the batches were always in: no wait for them but the first's
expect_eq "late loop: no I/O wait (under 0.03 s)" \
    "$(q late.db "SELECT count(*) FROM rank_epochs WHERE run_id = $run AND io_wait_s < 0.03")" 2
# AU over the span after the first step: past what counting from the loop's
# wake-ups allows (a step takes 0.05 s, not 0.08 s), and never over 1
expect_eq "late loop: AU above 0.625 (the bound were the lateness counted)" \
    "$(q late.db "SELECT count(*) FROM rank_epochs WHERE run_id = $run AND au > 0.625 AND au <= 1")" 2
# the figures stay consistent: the compute after the first step fits in the span after it
expect_eq "late loop: compute within the epoch's span" \
    "$(q late.db "SELECT count(*) FROM rank_epochs WHERE run_id = $run
                  AND compute_s + io_wait_s + barrier_s <= finished_at - started_at + 1e-6")" 2

# data really late: each sample's preprocess (reader.preprocess_time) takes
# 0.05 s in its loader thread (reader.read_threads 1 is raised to 2 on a
# host of 2 cores or more: each thread preprocesses every other batch, one
# sample after another), so batch q is in 0.1 x (q / 2 + 1) s after the
# epoch's start at the earliest while its compute takes 0.02 s. The span
# from the first step's end (0.12 s or later) to the last's (0.82 s or
# later) is 0.7 s at least: AU at most 15 x 0.02 / 0.7 = 0.4286, the loop
# late or not, and the rank waits for its batches
common="dataset.data_folder=synthetic://late dataset.num_files_train=32 dataset.num_samples_per_file=1
        dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 reader.batch_size=2
        reader.read_threads=2 reader.preprocess_time=0.05 train.epochs=1 train.computation_time=0.02
        workflow.generate_data=False"
# shellcheck disable=SC2086
SHARDBENCH_TEST_LATE_WAKE_MS=10 sb run quickstart $common --accelerators 1 --local 1 --db slow.db
expect_eq "late data: exit status" "$SB_RC" 0
run=$(q slow.db "SELECT max(id) FROM runs")
expect_eq "late data: compute is 15 x 0.02 s" \
    "$(q slow.db "SELECT printf('%.6f', compute_s) FROM rank_epochs WHERE run_id = $run")" "0.300000"
expect_eq "late data: AU at most 0.4286 (the loss stays)" \
    "$(q slow.db "SELECT count(*) FROM rank_epochs WHERE run_id = $run AND au <= 0.4286")" 1
expect_eq "late data: the rank waited for its batches (0.3 s or more)" \
    "$(q slow.db "SELECT count(*) FROM rank_epochs WHERE run_id = $run AND io_wait_s >= 0.3")" 1

finish
