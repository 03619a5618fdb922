#!/usr/bin/env bash
# reader.file_shuffle without a copy of every rank's lists on every worker:
# the coordinator plans every rank's file lists once an epoch (DLIO's
# cumulative reshard needs them all) and each worker asks for the pages of
# its own ranks' lists that its next reads need (LIST_REQ), dropping those
# it passed.
# - the reads are DLIO's: per rank and epoch, the (catalog file, sample)
#   sequence of the read trace equals tests/dlio_model.py's, for the index
#   and iterative kinds (the index kind also with preprocessing loader
#   threads), 8 ranks on 2 workers, lists of 2 pages a rank (4096 files a
#   page) read over 2 epochs;
# - the worker's peak RSS does not grow with the dataset: 8 ranks on 1
#   worker, 100 000 then 3 000 000 objects, one epoch; keeping every list
#   twice (8.4 bytes an object) grew it by some 23 MiB, the bound is 6 MiB;
# - the coordinator plans at 4.125 bytes an object (4-byte catalog indices
#   and a visited bit), as its log says, each epoch in a background thread.
. "$(dirname "$0")/lib.sh"
PY=python3
"$PY" -c 'import numpy' 2>/dev/null || PY=/usr/bin/python3
MODEL="$SB_INTEGRATION_DIR/../dlio_model.py"
SYN="dataset.data_folder=synthetic://shuffle dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0
     reader.sample_shuffle=seed reader.file_shuffle=seed train.computation_time=0 train.seed=123
     dataset.skip_listing=true"

# compare NAME KIND FILES RANKS BATCH THREADS EPOCHS: the trace against the model
compare () {
    "$PY" - "$MODEL" "$@" <<'PYEOF'
import csv, glob, importlib.util, sys
spec = importlib.util.spec_from_file_location("dlio_model", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
name, kind = sys.argv[2:4]
files, ranks, batch, threads, epochs = map(int, sys.argv[4:9])
got = {}
for path in glob.glob("trace/trace-*.csv"):
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            got.setdefault((int(row["rank"]), int(row["epoch"])), []).append(
                (int(row["position"]), int(row["file_index"]), int(row["sample"])))
want = {}
for e in m.model(kind, files, 1, ranks, batch, threads=threads, seed=123, sample_shuffle=True, file_shuffle=True,
                 seed_change_epoch=True, epochs=epochs):
    if e.get("error"):
        sys.exit(f"{name}: the model stops: {e['error']}")
    for r, reads in e["reads"].items():
        want[(int(r), e["epoch"])] = [(f, s) for f, s, _t in reads]
if sorted(got) != sorted(want):
    sys.exit(f"{name}: traced (rank, epoch) {sorted(got)}, the model has {sorted(want)}")
for k in sorted(want):
    lines = sorted(got[k])
    if [p for p, _f, _s in lines] != list(range(len(want[k]))):
        sys.exit(f"{name}: rank {k[0]} epoch {k[1]}: positions are not 0..{len(want[k]) - 1}")
    mine = [(f, s) for _p, f, s in lines]
    if mine != want[k]:
        i = next(i for i, (a, b) in enumerate(zip(mine, want[k])) if a != b)
        sys.exit(f"{name}: rank {k[0]} epoch {k[1]}: read {i} is {mine[i]}, DLIO's rules give {want[k][i]}")
print(f"{name}: {len(want)} rank-epochs, {sum(len(v) for v in want.values())} reads as DLIO's rules")
PYEOF
}

cd "$SCRATCH" || exit 1

# 40 000 files, 8 ranks: 5 000 files a rank, 2 pages; batch 7 cuts across
# pages; the index kind also with loader threads that preprocess (each
# thread's own low-water mark holds its pages)
for case in dlio_index dlio_iterative dlio_index_preprocess; do
    rm -rf trace && mkdir trace
    kind=${case%_preprocess}
    loader=pytorch extra=
    [ "$kind" = dlio_iterative ] && loader=tensorflow
    [ "$case" = dlio_index_preprocess ] && extra=reader.preprocess_time=0.00001
    # shellcheck disable=SC2086
    sb run $SYN dataset.num_files_train=40000 reader.batch_size=7 reader.read_threads=3 framework=$loader \
        reader.data_loader=$loader train.epochs=2 shardbench.trace="$SCRATCH/trace" $extra --accelerators 8 \
        --local 2 --db "order-$case.db"
    expect_eq "$case: run exit" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    expect_eq "$case: both epochs' lists planned in the background" \
        "$(grep -c "file lists (8 ranks x 5000 files) planned in a background thread" sb.err)" 2
    out=$(compare "$case" "$kind" 40000 8 7 3 2 2>&1)
    if [ $? -eq 0 ]; then pass "$out"; else fail "$out"; fi
done

# files of millions of samples (dlrm_b200: parquet, 16384 a batch): a worker
# walks its ranks' positions a file at a time to find the pages it needs;
# a sample at a time, 2000 steps x 16384 x 8 ranks held its loop for
# seconds, past the heartbeat timeout, and the coordinator was lost
sb run "$SB_INTEGRATION_DIR/../../coordinator/workloads/dlrm_b200.yaml" dataset.data_folder=synthetic://dlrm \
    dataset.num_files_train=152 train.epochs=1 train.total_training_steps=2000 train.computation_time=0 \
    shardbench.heartbeat_timeout_s=1.5 --accelerators 8 --local 1 --db dlrm.db
expect_eq "dlrm_b200, 2000 steps of 16384: run exit" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -3 sb.err
expect_eq "dlrm_b200: every rank read every step" \
    "$(sqlite3 dlrm.db "SELECT count(*), sum(samples), min(batches) FROM rank_epochs")" "8|262144000|2000"

# peak RSS (KiB) of the worker, one epoch of N objects: a wrapper waits for
# the worker (os.wait4, ru_maxrss; GNU time may not be installed). Under
# AddressSanitizer freed memory waits in a quarantine (256 MiB), which the
# pages coming and going would fill as the dataset grows: none here.
mkdir -p rss
cat >worker.sh <<WRAP
#!/bin/sh
ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
export ASAN_OPTIONS
exec "$PY" -c '
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write("%d\\n" % usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))' "$SCRATCH/rss/worker" "$SHARDBENCH_WORKER" "\$@"
WRAP
chmod +x worker.sh
peak () {
    rm -f rss/worker
    # shellcheck disable=SC2086
    SHARDBENCH_WORKER="$SCRATCH/worker.sh" sb run $SYN dataset.num_files_train="$1" reader.batch_size=32 train.epochs=1 \
        --accelerators 8 --local 1 --db "rss-$1.db"
    expect_eq "$1 objects: run exit" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    worker_kib=$(cat rss/worker 2>/dev/null || echo 0)
}
peak 100000
small_worker=$worker_kib
expect_contains "100 000 objects: the plan's bytes" sb.err "412501 bytes held (4.125 per file)"
peak 3000000
growth=$((worker_kib - small_worker))
echo "# worker peak RSS: $small_worker KiB at 100 000 objects, $worker_kib KiB at 3 000 000 (+$growth KiB)"
expect_contains "3 000 000 objects: the plan's bytes" sb.err "12375001 bytes held (4.125 per file)"
if [ "$worker_kib" -gt 0 ] && [ "$growth" -lt 6144 ]; then
    pass "the worker's peak RSS grew $growth KiB from 100 000 to 3 000 000 objects (bound 6144)"
else
    fail "the worker's peak RSS grew $growth KiB from 100 000 to 3 000 000 objects (bound 6144; every list kept: ~23 MiB)"
fi

finish
