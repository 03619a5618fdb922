#!/usr/bin/env bash
# A worker keeps exchanging heartbeats while it prepares an epoch. Moving the
# sampler to an epoch is O(dataset) (DLIO's file shuffle over every rank's
# files): done inside PHASE_START's handler, the worker said nothing for as
# long, and with a dataset that takes longer than
# shardbench.heartbeat_timeout_s to shuffle the coordinator dropped it and the
# run exited 1 (DLRM's npz presets on two workers as the dataset grew, with
# the default 10 s). Here 8 workers of one rank each shuffle 8,388,608
# DLIO-named files (no listing) at once, against a heartbeat timeout of 0.8 s:
# some seconds of silence on two cores before the fix; the coordinator's own
# planning of the same epoch stays well within it.
. "$(dirname "$0")/lib.sh"

sb run dlrm_h100 dataset.data_folder=synthetic://heartbeats dataset.num_files_train=8388608 \
    dataset.skip_listing=true train.total_training_steps=2 train.computation_time=0.001 \
    shardbench.heartbeat_timeout_s=0.8 shardbench.heartbeat_interval_s=0.05 --accelerators 8 --local 8 --db h.db
expect_eq "exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || grep -v '^progress' sb.err | tail -5
expect_eq "no worker lost" "$(grep -c 'lost worker\|lost the coordinator' sb.err)" 0
expect_eq "the epoch: 8 ranks x 2 steps x 8192 samples" \
    "$(q h.db "SELECT status || ' ' || (SELECT samples FROM epochs WHERE run_id = runs.id AND epoch = 1) FROM runs")" \
    "succeeded 131072"
finish
