#!/usr/bin/env bash
# Derived datasets: a run on synthetic storage, or with dataset.skip_listing,
# knows its objects from the workload (DLIO's names, the generator's sizes):
# no listing, no catalog row, no per-object memory in the coordinator or the
# workers, so a billion objects start training as ten do, and indices past
# 2^32 (17,022,569,999 objects, mlpstorage's retinanet at 1000 hosts) work.
. "$(dirname "$0")/lib.sh"
cd "$SCRATCH" || exit 1

# peak OUT CMD...: run CMD, write its peak RSS in KiB (wait4's ru_maxrss:
# its own and its waited-for children's) to OUT; exit with CMD's status
peak () {
    python3 - "$@" <<'PY'
import os, sys
out, cmd = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write(f"{ru.ru_maxrss}\n")
sys.exit(os.waitstatus_to_exitcode(status))
PY
}

syn="dataset.data_folder=synthetic://d dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0
     reader.batch_size=32 train.computation_time=0 train.epochs=1 --progress off"

# --- 2,000,000 objects: nothing listed, no row stored, the epoch exact
# shellcheck disable=SC2086
sb run $syn dataset.num_files_train=2000000 train.total_training_steps=10 --accelerators 8 --local 1 --db a.db
expect_eq "2M derived: exit status" "$SB_RC" 0
expect_eq "2M derived: no catalog row, no object row" \
    "$(q a.db "SELECT (SELECT count(*) FROM catalogs) || '|' || (SELECT count(*) FROM objects)")" "0|0"
expect_contains "2M derived: said so" sb.err \
    "synthetic://d (synthetic): 2000000 objects derived (DLIO's names in name order, the generator's sizes): no listing, no catalog rows"
expect_contains "2M derived: workers derive names and sizes" sb.err "catalog names derived by workers, sizes the generator's"
# 10 steps x 32 samples x 8 ranks of 4096 bytes (64^2)
expect_eq "2M derived: the epoch read 2560 samples of 4096 bytes" \
    "$(q a.db "SELECT samples || '|' || bytes || '|' || batches FROM epochs")" "2560|$((2560 * 4096))|10"
# --relist: a listing on request, into the catalog; DLIO's names of one
# size need the catalogs row alone (count, bytes, naming), no object row
# shellcheck disable=SC2086
sb run $syn dataset.num_files_train=20000 train.total_training_steps=2 --accelerators 2 --local 1 --relist --db r.db
expect_eq "--relist: exit status" "$SB_RC" 0
expect_eq "--relist: the listing is recorded, without object rows" \
    "$(q r.db "SELECT count || '|' || bytes || '|' || naming FROM catalogs")|$(q r.db "SELECT count(*) FROM objects")" \
    "20000|$((20000 * 4096))|dlio img npz 20000 0|0"
expect_contains "--relist: said so" sb.err "20000 objects, 78.1 MiB in"
expect_contains "--relist: no row" sb.err "(catalog 1: DLIO's names of one size, no object row stored)"
expect_eq "--relist: the epoch read 2 steps of 32 x 2 from it" "$(q r.db "SELECT samples || '|' || bytes FROM epochs")" \
    "128|$((128 * 4096))"

# --- 1,000,000,000 objects: the coordinator and its worker apart (the
# worker is no child of the coordinator, so each peak is its own); both
# bounded, nothing stored
rm -f big.err
peak coord.rss timeout 120 "$SHARDBENCH" run $syn dataset.num_files_train=1000000000 train.total_training_steps=20 \
    --accelerators 8 --workers 1 --bind "ipc://$SCRATCH/big.sock" --join-timeout 100 --db big.db >big.out 2>big.err &
cpid=$!
peak worker.rss timeout 120 "$SHARDBENCH_WORKER" --coordinator "ipc://$SCRATCH/big.sock" --timeout 100 >w.out 2>w.err &
wpid=$!
wait "$cpid"
expect_eq "1B derived: coordinator exit status" "$?" 0
wait "$wpid"
expect_eq "1B derived: worker exit status" "$?" 0
expect_eq "1B derived: no catalog row, no object row" \
    "$(q big.db "SELECT (SELECT count(*) FROM catalogs) || '|' || (SELECT count(*) FROM objects)")" "0|0"
expect_eq "1B derived: the epoch read 20 steps of 32 x 8" "$(q big.db "SELECT samples || '|' || batches FROM epochs")" "5120|20"
expect_eq "1B derived: coordinator peak RSS under 256 MiB" "$(($(cat coord.rss) < 262144))" 1
expect_eq "1B derived: worker peak RSS under 64 MiB" "$(($(cat worker.rss) < 65536))" 1
expect_eq "1B derived: database under 1 MiB" "$(($(stat -c %s big.db) < 1048576))" 1

# --- past 2^32: mlpstorage's retinanet minimum at 1000 hosts, its
# 1702256 subfolders; derived (name order) and skip_listing (index order,
# the spot checks skipped on synthetic storage, where nothing is stored)
n=17022569999
# shellcheck disable=SC2086
sb run $syn dataset.num_files_train=$n dataset.num_subfolders_train=1702256 train.total_training_steps=5 \
    --accelerators 8 --local 1 --db huge.db
expect_eq "17e9 derived: exit status" "$SB_RC" 0
expect_contains "17e9 derived: sampled them all" sb.err "$n objects listed; epoch 1: 5 steps of 32 samples per rank"
# shellcheck disable=SC2086
sb run $syn dataset.num_files_train=$n dataset.skip_listing=True train.total_training_steps=5 --accelerators 8 --local 1 \
    --db huge.db
expect_eq "17e9 skip_listing: exit status" "$SB_RC" 0
expect_contains "17e9 skip_listing: nothing to check on synthetic storage" sb.err \
    "dataset.skip_listing: synthetic storage: the $n objects are not checked (nothing is stored)"
expect_eq "17e9: no catalog row, two runs of 5 steps" \
    "$(q huge.db "SELECT (SELECT count(*) FROM catalogs) || '|' || group_concat(batches, ' ') FROM epochs")" "0|5 5"

# --- datasize at that scale: the counts, and what a catalog of them would take
sb datasize retinanet_b200 --hosts 1000 --host-memory-gb 1024 --accelerators 8000
expect_eq "datasize 17e9: exit status" "$SB_RC" 0
expect_eq "datasize 17e9: the override line" "$(tail -1 sb.out)" \
    "dataset.num_files_train=17022569999 dataset.num_subfolders_train=1702256"
expect_contains "datasize 17e9: the catalog it would take" sb.out \
    "catalog: a listing of sizes that differ stores about 16 bytes an object in the result database (253.7 GiB here); DLIO's names of one size, synthetic storage and dataset.skip_listing store none"

finish
