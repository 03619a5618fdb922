#!/usr/bin/env bash
# The reads of synthetic storage, each rank's in its order, are the ones the
# worker issued before it counted a synthetic read in place of queueing it
# and started released ranks' computes before any rank's reads: the trace of
# small runs shaped like DLRM's npz presets (one-sample files, 8 ranks, file
# and sample shuffle), DLRM's parquet presets (row groups) and
# cosmoflow's (tfrecord, DLIO's tensorflow loader), over 1 and 2 workers,
# 2 epochs, hashed without its timing columns (start_s, latency_us), each
# rank's lines in the order the worker wrote them. The digests are those of
# the same runs on the worker before those changes. Which rank's lines come
# first in a worker's file is not compared: it follows which rank's compute
# ends last at each barrier, a matter of timing.
. "$(dirname "$0")/lib.sh"

trace_digest () {   # the lines of every trace file, ranks in order, each rank's in file order
    for f in trace/*; do tail -n +2 "$f"; done | cut -d, -f1-8,11- | sort -s -t, -k1,1n | sha256sum | cut -c1-16
}

run () {    # LABEL WORKERS LINES DIGEST ARGS...
    local label=$1 workers=$2 lines=$3 digest=$4
    shift 4
    rm -rf trace r.db*
    mkdir trace
    sb run "$@" dataset.data_folder=synthetic://reads shardbench.trace=./trace --accelerators 8 --local "$workers" \
        --db r.db
    expect_eq "$label, $workers worker(s): exit status" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    expect_eq "$label, $workers worker(s): one trace file per worker" "$(ls trace | wc -l)" "$workers"
    expect_eq "$label, $workers worker(s): trace lines" "$(cat trace/* | grep -vc '^rank,')" "$lines"
    expect_eq "$label, $workers worker(s): every rank's reads and their order" "$(trace_digest)" "$digest"
}

for w in 1 2; do
    # 4096 files, batch 64: 8 steps per rank and epoch, 512 one-sample reads per rank
    run "npz (dlrm_h100 shape)" $w 8192 1d3cc7c47d7d1b1f dlrm_h100 dataset.num_files_train=4096 \
        reader.batch_size=64 train.epochs=2 train.computation_time=0.001
    # 8 files of 8192 rows, groups of 1000, batch 1024: row-group reads and the samples they serve
    run "parquet (dlrm_b200 shape)" $w 131072 c05390b38c1efd05 dlrm_b200 dataset.num_files_train=8 \
        dataset.num_samples_per_file=8192 reader.batch_size=1024 dataset.parquet.row_group_size=1000 \
        train.epochs=2 train.computation_time=0.001
    # 512 files of ~4 KiB (stdev 512), batch 1: DLIO's tensorflow loader
    run "tfrecord (cosmoflow shape)" $w 1024 f80dbe0f561ef6ce cosmoflow_h100 dataset.num_files_train=512 train.epochs=2 \
        dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=512 train.computation_time=0.0005
done
finish
