#!/usr/bin/env bash
# docs/RESULTS.md, "Example queries": every ```sql block runs without error against
# a result database made by real runs (train on two workers, a train run that
# fails on a missing file, a checkpoint run), and the answers to the common
# questions are checked against the raw rows: AU per epoch, the slowest rank
# of each epoch, the read latency histogram, errors per endpoint. (test_s3_faults.sh checks the endpoint
# queries against real S3 errors.)
. "$(dirname "$0")/lib.sh"

syn="dataset.data_folder=synthetic://readme dataset.num_files_train=64 dataset.record_length_bytes=4096
     dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.computation_time=0.001"
# shellcheck disable=SC2086
sb run $syn train.epochs=3 --accelerators 4 --local 2 --db r.db
expect_eq "train run: exit" "$SB_RC" 0
# a train run that fails: a file shrinks after the listing (truncation keeps the
# folder's fingerprint, so the catalog is reused): a short read, errors row, endpoint NULL
mkdir -p gone/train
for i in 0 1 2 3; do head -c 4096 /dev/zero >"gone/train/img_${i}_of_4.npz"; done
sb catalog dataset.data_folder=./gone dataset.num_files_train=4 --db r.db
expect_eq "catalog of the doomed dataset: exit" "$SB_RC" 0
truncate -s 40 gone/train/img_2_of_4.npz
sb run dataset.data_folder=./gone dataset.num_files_train=4 dataset.record_length_bytes=4096 \
    dataset.record_length_bytes_stdev=0 reader.batch_size=1 train.epochs=1 train.computation_time=0 \
    --accelerators 1 --local 1 --db r.db
expect_eq "failing run: exit" "$SB_RC" 1
sb checkpoint llama3_8b checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0 \
    checkpoint.checkpoint_folder=./ck checkpoint.num_checkpoints_write=1 checkpoint.num_checkpoints_read=1 \
    --accelerators 2 --local 1 --db r.db
expect_eq "checkpoint run: exit" "$SB_RC" 0

# the README's blocks, one file each
readme_sql --all >/dev/null
nblocks=$(ls query*.sql 2>/dev/null | wc -l)
[ "$nblocks" -ge 10 ] && pass "README has $nblocks SQL blocks" || fail "README: only $nblocks SQL blocks found"
for f in query*.sql; do
    if sqlite3 -bail -batch r.db <"$f" >"$f.out" 2>"$f.err" && [ ! -s "$f.err" ]; then
        pass "README query $f runs"
    else
        fail "README query $f:"; sed 's/^/    /' "$f" "$f.err"
    fi
done

train="(SELECT max(id) FROM runs WHERE kind = 'train' AND status = 'succeeded')"
last_train="(SELECT max(id) FROM runs WHERE kind = 'train')"
# readme_query TEXT: run the README block that contains TEXT (lib.sh readme_sql)
# on the run $run: the README's queries look at the last train run, the failed one
run=$last_train
readme_query () {
    local sql
    sql=$(readme_sql "$1") || { echo "no single README block holds '$1'"; return; }
    sqlite3 -batch -noheader r.db "${sql//"$last_train"/$run}"
}

# AU per epoch and the slowest rank: on the run that succeeded
run=$train
expect_eq "AU per epoch: one row per epoch, samples and AU of the epochs table" \
    "$(readme_query "round(mib_per_s, 1) AS mib_per_s" | cut -d'|' -f1,2,8 | tr '\n' ' ')" \
    "$(q r.db "SELECT epoch, samples, round(100 * au_mean, 2) FROM epochs WHERE run_id = $train ORDER BY epoch" | tr '\n' ' ')"
expect_eq "AU per epoch: 3 epochs of 64 samples" \
    "$(readme_query "round(mib_per_s, 1) AS mib_per_s" | cut -d'|' -f1,2 | tr '\n' ' ')" "1|64 2|64 3|64 "
expect_eq "read latency histogram: synthetic reads count as 0 us, all 3 x 64 of them" \
    "$(readme_query "FROM read_latency")" "0|192"
# the slowest rank of each epoch, from the raw rows by python
python3 - r.db >slowest.expected <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
run = db.execute("SELECT max(id) FROM runs WHERE kind = 'train' AND status = 'succeeded'").fetchone()[0]
best = {}
for epoch, rank, host, wall in db.execute(
        "SELECT epoch, rank, host, finished_at - started_at FROM rank_epochs WHERE run_id = ?", (run,)):
    if epoch not in best or wall > best[epoch][2]:
        best[epoch] = (rank, host, wall)
for epoch in sorted(best):
    print(f"{epoch}|{best[epoch][0]}|{best[epoch][1]}")
EOF
expect_eq "slowest rank per epoch: the rank with the longest wall time" \
    "$(readme_query "round(max(finished_at - started_at), 3) AS wall_s" | cut -d'|' -f1-3)" \
    "$(cat slowest.expected)"
expect_eq "slowest rank per epoch: 3 rows" "$(wc -l <slowest.expected)" 3

# errors per endpoint: the failed run's errors, not tied to an S3 request
run=$last_train
# (file storage: the rank's read error has HTTP status 0; the run's own error, no rank, NULL)
expect_eq "errors per endpoint of the failed run: endpoint '-', the rank's read error and the run's" \
    "$(readme_query "GROUP BY endpoint, http_status, service_code" | sort | tr '\n' ' ')" "-|0||1|1 -|||1|0 "
expect_eq "errors of the failed run: the short read of the truncated file, then the run" \
    "$(readme_query "WHERE run_id = (SELECT max(id) FROM runs WHERE status <> 'succeeded')" | cut -d'|' -f2,4,5 | tr '\n' ' ')" \
    "0|read|train/img_2_of_4.npz |run| "
expect_eq "checkpoint query: a write and a read of 2 ranks" \
    "$(readme_query "FROM checkpoints" | cut -d'|' -f1-3 | tr '\n' ' ')" "write|1|2 read|1|2 "
finish
