#!/usr/bin/env bash
# uring engine end to end: a dataset written by
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
# what is not a regular file, read whole (dataset.skip_listing: sizes
# unknown): a FIFO (an open would wait for a writer) and a link
# to /dev/zero (never read) are refused at once, named with rank and host
F="dataset.data_folder=./f dataset.num_files_train=5 dataset.record_length_bytes=100 dataset.record_length_bytes_stdev=0
   reader.batch_size=1 train.epochs=1 --accelerators 1 --progress off --db f.db"
sb datagen $F
expect_eq "irregular: datagen" "$SB_RC" 0
root=$(cd f && pwd -P)
host=$(hostname)
for kind in fifo zero; do
    rm -f f/train/img_2_of_5.npz
    if [ "$kind" = fifo ]; then mkfifo f/train/img_2_of_5.npz; what="a FIFO"
    else ln -s /dev/zero f/train/img_2_of_5.npz; what="a symbolic link to a character device"; fi
    start=$SECONDS
    sb run $F storage.engine=uring storage.uring.iodepth=4 dataset.skip_listing=true
    expect_eq "uring, $kind: exit status 1" "$SB_RC" 1
    expect_eq "uring, $kind: refused at once (under 60 s)" "$(( SECONDS - start < 60 ))" 1
    expect_contains "uring, $kind: named with rank and host" sb.err \
        "shardbench: error: rank 0 on $host: open $root/train/img_2_of_5.npz: not a regular file ($what): a dataset object must be a regular file"
done

# an open that waits (a write lease another process holds: the kernel makes
# the open wait lease-break-time, 45 s) is a stalled read: with
# shardbench.stall_timeout_s=2 the run fails within seconds, naming the
# file (the ring opens files as reads are queued: that counts as a read
# in flight)
S="dataset.data_folder=./s dataset.num_files_train=4 dataset.record_length_bytes=100 dataset.record_length_bytes_stdev=0
   reader.batch_size=1 train.epochs=1 --accelerators 1 --progress off --db s.db"
sb datagen $S
expect_eq "stall: datagen" "$SB_RC" 0
root=$(cd s && pwd -P)
if ! lease s/train/img_1_of_4.npz; then
    echo "ok - uring, stall: an open that waits # SKIP no file lease: $(tail -1 lease.err)"
else
    start=$SECONDS
    sb run $S storage.engine=uring storage.uring.iodepth=4 shardbench.stall_timeout_s=2
    expect_eq "uring, stall: exit status 1" "$SB_RC" 1
    expect_eq "uring, stall: the run ends (under 30 s; the open waits 45 s)" "$(( SECONDS - start < 30 ))" 1
    re="^shardbench: error: rank 0 on $host: read $root/train/img_1_of_4\.npz: no progress for [0-9]+\.[0-9] s \(shardbench\.stall_timeout_s = 2\): the open or read has not returned"
    if grep -qE "$re" sb.err; then pass "uring, stall: names rank, host and file"
    else fail "uring, stall: no stall error"; sed 's/^/    /' sb.err | tail -5; fi
    kill "$HOLDER" 2>/dev/null
    wait "$HOLDER" 2>/dev/null
fi

# the worker's file-descriptor budget counts a ring's files: one per read
# in flight and as many again delivered, closed with the next submission
(ulimit -n 100; exec timeout 60 "$SHARDBENCH" run $S storage.engine=uring storage.uring.iodepth=40 --local 1 \
    --db lf.db) >lf.out 2>lf.err
expect_eq "uring fd refusal: exit status 1" "$?" 1
expect_contains "uring fd refusal: counts the closing files" lf.err \
    "file descriptors: 1 ranks x 88 (40 reads in flight + 40 files closing + 8) + "

# another engine's key, or uring's with another engine, is refused before anything runs
sb run $common workflow.generate_data=false storage.uring.iodepth=4 --db p.db
expect_eq "uring option without the uring engine: refused" "$SB_RC" 2
expect_contains "uring option without the uring engine: says why" sb.err "an option of the uring storage engine"
finish
