#!/usr/bin/env bash
# The evaluation set's sizes come from a listing of valid/ : a run
# that evaluates lists valid/ into a catalog of its own, as train/ is, and
# workers ask for the sizes (ENTRIES) when they are not the generator's. So
# an evaluation over valid/ files shardbench's generator did not write
# reads every sample inside its file, and evals.bytes is what was read:
#  - npz written by numpy as DLIO's generator writes them (np.savez x, y),
#    records far smaller than the workload's record_length_bytes;
#  - parquet written with another row_group_size than the run's workload;
#  - the same npz files as objects on the loopback S3 test server;
#  - a second run reuses valid/'s catalog; training's reads are unchanged.
# Before the listing, these runs failed with a short read (the record
# slices of record_length_bytes, or the generator's sizes, past the end).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"

PY=python3
"$PY" -c 'import numpy' 2>/dev/null || PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
    if [ "${CI:-}" = true ]; then
        fail "python3-numpy is needed (deploy/install-deps.sh --tests)"
        finish
        exit 1
    fi
    echo "SKIP: python3-numpy missing (deploy/install-deps.sh --tests)"
    exit 77
fi

# npz_dlio FOLDER FILES SPF DIM: FOLDER/img_I_of_FILES.npz as DLIO's npz
# generator writes them (x: uint8 DIM x DIM x SPF, y: SPF labels), seeded
npz_dlio () {
    "$PY" - "$@" <<'EOF'
import os, sys
import numpy as np
folder, files, spf, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
os.makedirs(folder, exist_ok=True)
rng = np.random.RandomState(7)
for i in range(files):
    x = rng.randint(255, size=(dim, dim, spf), dtype=np.uint8)
    np.savez(os.path.join(folder, "img_%d_of_%d.npz" % (i, files)), x=x, y=np.zeros(spf, dtype=np.uint8))
EOF
}

# trace_check DIR SIZES_FILE: over the valid/ reads of the trace, "reads:bytes:past_end"
# where past_end counts reads ending after their object's size (SIZES_FILE: "key size" lines)
trace_check () {
    awk -F, 'FNR == NR { size[$1] = $2; next }
             FNR > 1 && $6 ~ /^valid\// { n++; b += $11; if ($7 + $8 > size[$6] || $8 == 0) bad++ }
             END { printf "%d:%d:%d\n", n, b, bad }' FS=' ' "$2" FS=, "$1"/*.csv
}

# 4 training files, 4 evaluation files of 2 samples each, 2 ranks: batch 2
# and batch_size_eval 2, nothing dropped, one evaluation after each epoch
common="dataset.num_files_train=4 dataset.num_files_eval=4 dataset.num_samples_per_file=2
        dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 reader.batch_size=2
        reader.batch_size_eval=2 reader.read_threads=1 train.epochs=2 train.computation_time=0
        evaluation.eval_time=0 --accelerators 2 --local 1 --progress off"

# --- npz: valid/ written by numpy (DLIO's writer), train/ by shardbench's datagen
sb datagen $common dataset.data_folder=./np --db np.db
expect_eq "npz datagen: exit 0" "$SB_RC" 0
train_bytes=$(cat np/train/*.npz | wc -c)
rm -rf np/valid
npz_dlio np/valid 4 2 16
expect_eq "npz: 4 numpy files in valid/" "$(find np/valid -name 'img_*_of_4.npz' | wc -l)" 4
valid_bytes=$(cat np/valid/*.npz | wc -c)
(cd np && find valid -type f -printf '%p %s\n') >np.sizes
if [ "$valid_bytes" -lt 4096 ]; then pass "npz: numpy's files are smaller than one record"; else
    fail "npz: numpy's files hold $valid_bytes bytes (meant to be under one 4096-byte record)"; fi
mkdir tr
sb run $common dataset.data_folder=./np workflow.generate_data=False workflow.evaluation=True \
    shardbench.trace=./tr --db np.db
expect_eq "npz evaluation of DLIO's files: exit 0" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
run=$(q np.db "SELECT max(id) FROM runs")
expect_eq "npz: every valid/ sample and byte read in each evaluation" \
    "$(q np.db "SELECT group_concat(epoch || ':' || samples || ':' || bytes, ' ') FROM evals WHERE run_id = $run ORDER BY epoch")" \
    "1:8:$valid_bytes 2:8:$valid_bytes"
expect_eq "npz: the trace's valid/ reads (reads:bytes:past the end)" "$(trace_check tr np.sizes)" "16:$((2 * valid_bytes)):0"
expect_eq "npz: training reads unchanged (generator's sizes)" \
    "$(q np.db "SELECT group_concat(epoch || ':' || samples || ':' || bytes, ' ') FROM epochs WHERE run_id = $run ORDER BY epoch")" \
    "1:8:$train_bytes 2:8:$train_bytes"
expect_contains "npz: valid/ listed into its own catalog" sb.err "valid: 4 objects, "
expect_contains "npz: its sizes served to the workers" sb.err "evaluation set: 4 objects of valid/ listed; names derived by workers, sizes served in pages"
expect_eq "npz: a catalog of valid/ recorded" "$(q np.db "SELECT count, bytes FROM catalogs WHERE uri LIKE 'file://%/valid'")" \
    "4|$valid_bytes"
# a second run reuses it (the folder has not changed)
sb run $common dataset.data_folder=./np workflow.generate_data=False workflow.evaluation=True train.epochs=1 --db np.db
expect_eq "npz second run: exit 0" "$SB_RC" 0
expect_contains "npz second run: valid/'s catalog reused" sb.err "reused: 4 objects, 0.0 MiB under $(cd np && pwd -P)/valid"
expect_eq "npz second run: still one catalog of valid/" "$(q np.db "SELECT count(*) FROM catalogs WHERE uri LIKE 'file://%/valid'")" 1
expect_eq "npz second run: its evaluation" \
    "$(q np.db "SELECT samples || ':' || bytes FROM evals WHERE run_id = (SELECT max(id) FROM runs)")" "8:$valid_bytes"
# fewer valid/ files than num_files_eval: refused before any worker starts, saying how
rm np/valid/img_3_of_4.npz
sb run $common dataset.data_folder=./np workflow.generate_data=False workflow.evaluation=True --db np.db
expect_eq "npz short valid/: exit 2" "$SB_RC" 2
expect_contains "npz short valid/: says so" sb.err "valid/ holds 3 objects but the workload needs dataset.num_files_eval=4"
# valid/ of another DLIO generation (5 files, img_I_of_5): not this run's names, so the
# workers get keys and sizes in pages; the evaluation reads the first 4 in name order
rm -rf np/valid
npz_dlio np/valid 5 2 20
(cd np && find valid -type f -printf '%p %s\n') >np5.sizes
first4=$(cat np/valid/img_[0-3]_of_5.npz | wc -c)
rm -rf tr5 && mkdir tr5
sb run $common dataset.data_folder=./np workflow.generate_data=False workflow.evaluation=True train.epochs=1 \
    shardbench.trace=./tr5 --db np.db
expect_eq "npz valid/ of 5 other names: exit 0" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
expect_eq "npz valid/ of 5 other names: 8 samples, the first 4 files' bytes" \
    "$(q np.db "SELECT samples || ':' || bytes FROM evals WHERE run_id = (SELECT max(id) FROM runs)")" "8:$first4"
expect_eq "npz valid/ of 5 other names: the files read" \
    "$(awk -F, 'FNR > 1 && $6 ~ /^valid\// { print $6 }' tr5/*.csv | sort -u | tr '\n' ' ')" \
    "valid/img_0_of_5.npz valid/img_1_of_5.npz valid/img_2_of_5.npz valid/img_3_of_5.npz "
expect_eq "npz valid/ of 5 other names: no read past an end" "$(trace_check tr5 np5.sizes | cut -d: -f3)" 0
expect_contains "npz valid/ of 5 other names: keys served" sb.err \
    "evaluation set: 5 objects of valid/ listed; names served in pages, sizes served in pages"

# --- parquet: valid/ with row groups of 3 rows, the workload's of 2
pq="dataset.format=parquet dataset.num_samples_per_file=6 dataset.num_files_train=4 dataset.num_files_eval=4
    dataset.record_length_bytes=1000 dataset.record_length_bytes_stdev=0 reader.batch_size=2
    reader.batch_size_eval=2 reader.read_threads=1 train.epochs=1 train.computation_time=0
    evaluation.eval_time=0 --accelerators 2 --local 1 --progress off"
sb datagen $pq dataset.parquet.row_group_size=2 dataset.data_folder=./pq --db pq.db
expect_eq "parquet datagen (groups of 2): exit 0" "$SB_RC" 0
sb datagen $pq dataset.parquet.row_group_size=3 dataset.data_folder=./pq3 --db pq.db
expect_eq "parquet datagen (groups of 3): exit 0" "$SB_RC" 0
if cmp -s pq/valid/img_0_of_4.parquet pq3/valid/img_0_of_4.parquet \
   || [ "$(stat -c %s pq/valid/img_0_of_4.parquet)" = "$(stat -c %s pq3/valid/img_0_of_4.parquet)" ]; then
    fail "parquet: groups of 3 give files of another size"
else
    pass "parquet: groups of 3 give files of another size"
fi
rm -rf pq/valid && mv pq3/valid pq/valid
(cd pq && find valid -type f -printf '%p %s\n') >pq.sizes
mkdir trpq
sb run $pq dataset.parquet.row_group_size=2 dataset.data_folder=./pq workflow.generate_data=False \
    workflow.evaluation=True shardbench.trace=./trpq --db pq.db
expect_eq "parquet evaluation of other row groups: exit 0" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
run=$(q pq.db "SELECT max(id) FROM runs")
ev=$(q pq.db "SELECT samples || ':' || bytes FROM evals WHERE run_id = $run")
traced=$(trace_check trpq pq.sizes)
# and each file's last 4 bytes (PAR1: its footer is not the generator's layout), read
# once an evaluation, traced as lines without a position (they serve no sample)
expect_eq "parquet: 24 samples evaluated, the bytes the trace read (4 tails included)" "$ev" \
    "24:$(echo "$traced" | cut -d: -f2)"
expect_eq "parquet: the 4 tails, lines without a position of 4 bytes" \
    "$(awk -F, 'FNR > 1 && $6 ~ /^valid\// && $4 == "" { n++; b += $11 } END { print n ":" b }' trpq/*.csv)" "4:16"
expect_eq "parquet: no read past a file's end" "$(echo "$traced" | cut -d: -f3)" 0
expect_contains "parquet: sizes served" sb.err "evaluation set: 4 objects of valid/ listed; names derived by workers, sizes served in pages"
expect_contains "parquet: training keeps the generator's sizes" sb.err "catalog names derived by workers, sizes the generator's"

# --- S3: the numpy files as objects of valid/ on the loopback S3 test server
s3rver_install || { fail "cannot install the S3 test server"; finish; exit 1; }
s3rver_env
unset AWS_ENDPOINT_URL
trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" evb || { fail "S3 server did not start"; finish; exit 1; }
ep=${S3RVER_ENDPOINTS%% *}
s3="storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=evb storage.storage_options.endpoint_url=$ep dataset.data_folder=ds"
s3put () {     # KEY FILE
    curl -sS -f --aws-sigv4 "aws:amz:$S3RVER_REGION:s3" --user "$S3RVER_ACCESS_KEY:$S3RVER_SECRET_KEY" \
        -H "x-amz-content-sha256: $(sha256sum "$2" | cut -d' ' -f1)" -X PUT --data-binary "@$2" "$ep/evb/$1"
}
sb datagen $s3 $common --db s3.db
expect_eq "S3 datagen: exit 0" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
npz_dlio s3valid 4 2 12
put=0
for i in 0 1 2 3; do
    s3put "ds/valid/img_${i}_of_4.npz" "s3valid/img_${i}_of_4.npz" && put=$((put + 1))
done
expect_eq "S3: 4 numpy objects put under ds/valid/" "$put" 4
s3_valid_bytes=$(cat s3valid/*.npz | wc -c)
(cd s3valid && for f in *.npz; do echo "valid/$f $(stat -c %s "$f")"; done) >s3.sizes
mkdir trs3
sb run $s3 $common workflow.generate_data=False workflow.evaluation=True train.epochs=1 shardbench.trace=./trs3 --db s3.db
expect_eq "S3 evaluation of DLIO's files: exit 0" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
expect_eq "S3: every valid/ sample and byte read" \
    "$(q s3.db "SELECT samples || ':' || bytes FROM evals WHERE run_id = (SELECT max(id) FROM runs)")" "8:$s3_valid_bytes"
expect_eq "S3: the trace's valid/ reads (reads:bytes:past the end)" "$(trace_check trs3 s3.sizes)" "8:$s3_valid_bytes:0"
expect_contains "S3: valid/ listed" sb.err "listed s3://evb/ds/valid: 4 objects"
expect_eq "S3: a catalog of valid/ recorded" "$(q s3.db "SELECT count || '|' || bytes FROM catalogs WHERE uri = 's3://evb/ds/valid'")" \
    "4|$s3_valid_bytes"

finish
