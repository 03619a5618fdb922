#!/usr/bin/env bash
# uring engine end to end (issue 16, helper uring): a dataset written by
# datagen, read back by train with storage.engine: uring, every byte
# verified, at depth 1 and 16, one and two ranks; uring's options with
# another engine are refused. Skipped (77) where shardbench is built without the uring
# engine or io_uring cannot be set up here.
. "$(dirname "$0")/lib.sh"

DATA=$SCRATCH/data
common="quickstart dataset.data_folder=$DATA dataset.num_files_train=48 dataset.record_length_bytes=300000
        dataset.record_length_bytes_stdev=0 train.epochs=2 train.computation_time=0 reader.batch_size=4
        --progress off"
sb run $common workflow.generate_data=true workflow.train=false --db p.db
expect_eq "datagen" "$SB_RC" 0
sb run $common workflow.generate_data=false storage.engine=uring reader.verify=true --accelerators 1 --db p.db
if [ "$SB_RC" != 0 ] && grep -q "not a storage engine this shardbench is built with\|io_uring is disabled" sb.err sb.out; then
    echo "SKIP: $(grep -m1 -h "storage.engine\|io_uring" sb.err sb.out)"
    exit 77
fi
expect_eq "uring, default depth: run succeeds" "$SB_RC" 0
expect_contains "uring: the run says its engine" sb.err "storage: uring"
run=$(q p.db "SELECT max(id) FROM runs WHERE kind = 'train'")
bytes=$(find "$DATA/train" -name 'img_*' -printf '%s\n' | awk '{ n += $1 } END { print n }')
expect_eq "uring: every sample of both epochs read, verified" \
    "$(q p.db "SELECT group_concat(samples || '/' || bytes, ' ') FROM (SELECT samples, bytes FROM epochs WHERE run_id = $run ORDER BY epoch)")" \
    "48/$bytes 48/$bytes"
for depth in 1 16; do
    sb run $common workflow.generate_data=false storage.engine=uring storage.uring.iodepth=$depth reader.verify=true \
        --accelerators 2 --local 1 --db p.db
    expect_eq "uring, iodepth $depth, 2 ranks: run succeeds" "$SB_RC" 0
done
# another engine's key, or uring's with another engine, is refused before anything runs
sb run $common workflow.generate_data=false storage.uring.iodepth=4 --db p.db
expect_eq "uring option without the uring engine: refused" "$SB_RC" 2
expect_contains "uring option without the uring engine: says why" sb.err "an option of the uring storage engine"
finish
