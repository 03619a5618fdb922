#!/usr/bin/env bash
# Training end to end with real processes: S=100 samples, 7 ranks, batch 3,
# 3 epochs, shardbench's global sampler: every rank owns 14 samples and reads
# the 12 of its 4 full batches per epoch, 16 dropped; over 1 worker with 7
# ranks, 7 workers with 1 rank each, and per-epoch sync.
. "$(dirname "$0")/lib.sh"

common="dataset.data_folder=./data dataset.num_files_train=100 dataset.record_length_bytes=4096
        dataset.record_length_bytes_stdev=512 reader.batch_size=3 train.epochs=3 train.computation_time=0.001
        shardbench.sampler=global"

check_run () {  # LABEL DB WORKERS RANKS_PER_WORKER
    local label=$1 db=$2 workers=$3 per=$4
    expect_eq "$label: exit status" "$SB_RC" 0
    local run
    run=$(q "$db" "SELECT max(id) FROM runs WHERE kind = 'train'")
    expect_eq "$label: run succeeded" "$(q "$db" "SELECT status, accelerators, workers, hosts FROM runs WHERE id = $run")" "succeeded|7|$workers|1"
    expect_eq "$label: 7 ranks x 3 epochs" "$(q "$db" "SELECT count(*) FROM rank_epochs WHERE run_id = $run")" 21
    expect_eq "$label: every rank 12 samples, 4 batches" \
        "$(q "$db" "SELECT min(samples), max(samples), min(batches), max(batches) FROM rank_epochs WHERE run_id = $run")" "12|12|4|4"
    expect_eq "$label: epochs" "$(q "$db" "SELECT group_concat(epoch || ':' || samples || ':' || dropped || ':' || batches, ' ') FROM epochs WHERE run_id = $run")" \
        "1:84:16:4 2:84:16:4 3:84:16:4"
    expect_eq "$label: bytes add up" "$(q "$db" "SELECT count(*) FROM epochs e WHERE run_id = $run AND bytes = (SELECT sum(bytes) FROM rank_epochs r WHERE r.run_id = e.run_id AND r.epoch = e.epoch) AND bytes > 0")" 3
    expect_eq "$label: run_workers" "$(q "$db" "SELECT count(*), sum(ranks) FROM run_workers WHERE run_id = $run")" "$workers|7"
    expect_eq "$label: AU recorded per rank" "$(q "$db" "SELECT count(*) FROM rank_epochs WHERE run_id = $run AND au > 0 AND au <= 1")" 21
    expect_eq "$label: run AU is the mean" "$(q "$db" "SELECT abs(au_mean - (SELECT avg(au_mean) FROM epochs WHERE run_id = $run)) < 1e-9 FROM runs WHERE id = $run")" 1
    expect_eq "$label: per-second stats add up to the epochs" \
        "$(q "$db" "SELECT (SELECT sum(samples) FROM timeseries WHERE run_id = $run) = (SELECT sum(samples) FROM epochs WHERE run_id = $run)")" 1
    expect_contains "$label: summary printed" sb.out "status: succeeded"
}

# 1 worker, 7 ranks (generates the dataset first: a datagen run)
sb run $common --accelerators 7 --local 1 --db one.db
check_run "1 worker x 7 ranks" one.db 1 7
expect_eq "datagen run recorded" "$(q one.db "SELECT kind, status FROM runs WHERE id = 1")" "datagen|succeeded"
expect_eq "datagen wrote 100 files" "$(q one.db "SELECT samples FROM epochs WHERE run_id = 1")" 100
expect_eq "100 files on disk" "$(find data/train -name 'img_*_of_100.npz' | wc -l)" 100
expect_eq "DLIO name" "$(ls data/train | head -1)" "img_000_of_100.npz"
expect_eq "catalog bytes = files on disk" "$(q one.db "SELECT bytes FROM catalogs ORDER BY id DESC LIMIT 1")" "$(cat data/train/* | wc -c)"
expect_eq "read bytes < catalog bytes: 84 samples read per epoch" \
    "$(q one.db "SELECT count(*) FROM epochs WHERE run_id = 2 AND bytes < (SELECT bytes FROM catalogs ORDER BY id DESC LIMIT 1)")" 3

# 7 workers, 1 rank each; the catalog is reused
sb run $common --accelerators 7 --local 7 --db one.db
check_run "7 workers x 1 rank" one.db 7 1
expect_contains "catalog reused" sb.err "reused"

# per-epoch barrier, file shuffle, verification of every byte
sb run $common train.sync=epoch reader.file_shuffle=seed reader.verify=true --accelerators 7 --local 7 --db one.db
check_run "sync epoch + verify" one.db 7 1

# workers started separately (as on other nodes) with --workers
( timeout 120 "$SHARDBENCH" run $common --accelerators 7 --workers 1 --bind "tcp://$SB_LO:*" --db one.db \
      >remote.out 2>remote.err ) &
coord=$!
ep=$(coordinator_endpoint remote.err)
timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host node-a >worker.out 2>worker.err
expect_eq "remote worker exits 0" $? 0
wait $coord
SB_RC=$?
cp remote.out sb.out
check_run "--workers 1 x 7 ranks" one.db 1 7
expect_eq "remote worker's host recorded" "$(q one.db "SELECT host FROM run_workers WHERE run_id = (SELECT max(id) FROM runs)")" "node-a"

# report reprints the same summary from the database
"$SHARDBENCH" report last --db one.db >report.out 2>&1
expect_eq "report exit" $? 0
expect_contains "report shows the run" report.out "shardbench train run 5"
expect_contains "report verdict" report.out "against threshold 90.00%"

# a dataset of the user's own names (not DLIO's): workers ask for the catalog entries in pages
mkdir -p own/train
for i in $(seq 1 100); do head -c 4096 /dev/zero >"own/train/sample-$((i * 7919 % 1000)).bin"; done
sb run dataset.data_folder=./own dataset.num_files_train=100 dataset.record_length_bytes=4096 \
    dataset.record_length_bytes_stdev=0 reader.batch_size=3 train.epochs=2 train.computation_time=0 \
    reader.sample_shuffle=seed shardbench.sampler=global --accelerators 7 --local 7 --db own.db
expect_eq "own names: exit" "$SB_RC" 0
expect_eq "own names: keys stored" "$(q own.db "SELECT count(key), count(*) FROM objects")" "100|100"
expect_eq "own names: every sample read whole" \
    "$(q own.db "SELECT group_concat(samples || ':' || bytes, ' ') FROM epochs WHERE run_id = (SELECT max(id) FROM runs)")" \
    "84:344064 84:344064"

# datagen alone
sb datagen dataset.data_folder=./gen dataset.num_files_train=20 dataset.num_subfolders_train=4 --accelerators 3 --db gen.db
expect_eq "datagen exit" "$SB_RC" 0
expect_eq "datagen subfolders (DLIO rule)" "$(ls gen/train | tr '\n' ' ')" "0 1 2 3 "
expect_eq "datagen file in subfolder" "$(ls gen/train/1 | head -1)" "img_01_of_20.npz"
expect_eq "datagen per-rank rows" "$(q gen.db "SELECT count(*), sum(samples) FROM rank_epochs")" "3|20"

finish
