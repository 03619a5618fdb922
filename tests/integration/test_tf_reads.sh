#!/usr/bin/env bash
# DLIO's tf.data reads (data_loader/tf_data_loader.py: one reader per loader
# thread, made afresh every epoch, over that thread's entries of
# build_sample_map_iter), from real runs' read traces (shardbench.trace)
# against tests/dlio_model.py (tf_reads):
# - npz (and npy) with several samples per file: one whole-file read per
#   (loader thread, file) (reader/npz_reader_iterable.py,
#   npy_reader_iterable.py); 10 files of 3 samples on 4 threads split files
#   2, 4 and 9 between two threads: 13 reads of 10 files, each the file's
#   size; 2 ranks of 5 files on 2 threads: 7 a rank;
# - parquet: one read per (loader thread, file, row group)
#   (reader/parquet_reader_file_iterable.py keeps each group it read for the
#   epoch), however often the shuffled samples come back to a group: 10
#   files of 2 groups on 2 threads: 20 reads a rank and epoch (a reader
#   that remembers only its last group reads some 210); 5 files of 4 groups
#   on 2 threads, file 2 split between them: 24. A thread's open of a file
#   reads the footer and every row group of it (ParquetReaderFileIterable.open
#   submits them all), so the epoch's bytes are those of every (thread, file)
#   open, groups that serve no position of the thread included.
# (reader.read_threads is set to 2 or more: 1 is raised to the host's cores.)
# and in every case each rank's samples, per epoch, in the model's order,
# and the epoch's bytes in the run's database: every (thread, file) open's
# whole file (npz, npy) or footer and row groups (parquet).
# Each read's line has the bytes it read; the positions it serves later have
# lines of 0 bytes.
. "$(dirname "$0")/lib.sh"
PY=python3
"$PY" -c 'import numpy' 2>/dev/null || PY=/usr/bin/python3
MODEL="$(cd "$(dirname "$0")/.." && pwd)/dlio_model.py"

# check NAME FOLDER SPF FILES RANKS BATCH THREADS EPOCHS ROWS_PER_GROUP WANT_READS_PER_RANK_EPOCH SS DB
check () {
    "$PY" - "$MODEL" "$@" <<'PYEOF'
import csv, glob, importlib.util, os, sys
spec = importlib.util.spec_from_file_location("dlio_model", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
name, folder = sys.argv[2], sys.argv[3]
spf, files, ranks, batch, threads, epochs, rpg, want_n, ss = map(int, sys.argv[4:13])
db = sys.argv[13]
lines = {}
footers = {}    # parquet footer reads: lines with no position
for path in glob.glob("trace/trace-*.csv"):
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            k = (int(row["rank"]), int(row["epoch"]))
            if row["position"] == "":
                footers.setdefault(k, []).append(int(row["file_index"]))
            else:
                lines.setdefault(k, []).append(row)
want = {}
for e in m.model("dlio_iterative", files, spf, ranks, batch, threads=threads, seed=123, sample_shuffle=ss == 1,
                 epochs=epochs):
    for r, reads in e["reads"].items():
        want[(r, e["epoch"])] = reads
if sorted(lines) != sorted(want):
    sys.exit(f"{name}: traced (rank, epoch) {sorted(lines)}, the model has {sorted(want)}")
# the epoch's bytes (the run's database): per (thread, file) the thread's
# reader opens, npz: the whole file; parquet: the footer (pyarrow's last 64
# KiB; the metadata fits in it here) and every row group of the file,
# whichever its samples fall in, a group's range being the one traced for it
# (every group serves some position of some thread)
import sqlite3
groups = {}
for rows in lines.values():
    for row in rows:
        groups.setdefault(int(row["file_index"]), {})[int(row["offset"])] = int(row["length"])
size_of = {int(row["file_index"]): os.path.getsize(os.path.join(folder, row["key"]))
           for rows in lines.values() for row in rows}
con = sqlite3.connect(db)
got_bytes = dict(con.execute("SELECT epoch, bytes FROM epochs WHERE run_id = (SELECT max(id) FROM runs)"))
for epoch in range(1, epochs + 1):
    opened = [f for r in range(ranks) for _t, f in m.tf_opens(want[(r, epoch)])]
    if rpg:
        expect = sum(sum(groups[f].values()) + min(size_of[f], 65536) for f in opened)
    else:
        expect = sum(size_of[f] for f in opened)
    if rpg:     # one footer read per (thread, file) a reader opens, of the files opened
        got_f = sorted(f for r in range(ranks) for f in footers.get((r, epoch), []))
        if got_f != sorted(opened):
            sys.exit(f"{name}: epoch {epoch}: footer reads of files {got_f}, DLIO's readers' {sorted(opened)}")
    elif any(footers.values()):
        sys.exit(f"{name}: footer lines in a trace of {len(opened)} whole-file reads")
    if got_bytes.get(epoch) != expect:
        sys.exit(f"{name}: epoch {epoch}: {got_bytes.get(epoch)} bytes read, DLIO's readers read {expect}"
                 f" ({len(opened)} files opened by a thread: " + ("footer and every row group)" if rpg else "whole)"))
extra = f", {len(opened)} (thread, file) opens: {expect} bytes an epoch"
for k in sorted(want):
    rows = sorted(lines[k], key=lambda row: (int(row["position"]), -int(row["bytes"])))
    reads = [row for row in rows if int(row["bytes"]) > 0]
    dlio = m.tf_reads(want[k], rpg)
    if len(dlio) != want_n:
        sys.exit(f"{name}: the model gives {len(dlio)} reads for rank {k[0]} epoch {k[1]}, the test expects {want_n}")
    if len(reads) != len(dlio):
        sys.exit(f"{name}: rank {k[0]} epoch {k[1]}: {len(reads)} reads, DLIO's tf.data readers make {len(dlio)}")
    got = [(int(row["position"]), int(row["file_index"])) for row in reads]
    theirs = [(p, f) for p, _t, f, _g in dlio]
    if got != theirs:
        sys.exit(f"{name}: rank {k[0]} epoch {k[1]}: reads at (position, file) {got}, DLIO's at {theirs}")
    for row in reads:
        size = os.path.getsize(os.path.join(folder, row["key"]))
        if rpg == 0 and (int(row["offset"]), int(row["length"]), int(row["bytes"])) != (0, size, size):
            sys.exit(f"{name}: {row['key']}: read [{row['offset']}, +{row['length']}) of {row['bytes']} bytes,"
                     f" not the whole file of {size}")
        if rpg and int(row["bytes"]) != int(row["length"]):
            sys.exit(f"{name}: {row['key']}: read {row['bytes']} of {row['length']} bytes")
    if rpg:     # one read per (file, group offset) and thread: no range read twice
        ranges = [(int(row["file_index"]), int(row["offset"])) for row in reads]
        if name == "pq20" and len(set(ranges)) != len(ranges):
            sys.exit(f"{name}: rank {k[0]} epoch {k[1]}: a row group read twice: {ranges}")
    served = [(int(row["position"]), int(row["file_index"]), int(row["sample"])) for row in rows]
    if [p for p, _f, _s in served] != list(range(len(want[k]))):
        sys.exit(f"{name}: rank {k[0]} epoch {k[1]}: positions {[p for p, _f, _s in served][:12]}...,"
                 f" expected one line each of 0..{len(want[k]) - 1}")
    if [(f, s) for _p, f, s in served] != [(f, s) for f, s, _t in want[k]]:
        sys.exit(f"{name}: rank {k[0]} epoch {k[1]}: samples differ from the model's order")
total = sum(int(row["bytes"]) for rows in lines.values() for row in rows)
print(f"{name}: {len(want)} rank-epochs, {want_n} reads each as DLIO's, {total} bytes traced{extra}")
PYEOF
}

# run_case NAME FORMAT SPF FILES RANKS BATCH THREADS EPOCHS ROWS_PER_GROUP WANT SS EXTRA...
run_case () {
    local name=$1 format=$2 spf=$3 files=$4 ranks=$5 batch=$6 threads=$7 epochs=$8 rpg=$9 want=${10} ss=${11}
    local shuffle=off
    [ "$ss" = 1 ] && shuffle=seed
    shift 11
    rm -rf trace && mkdir trace
    # shellcheck disable=SC2086
    sb run dataset.data_folder="$SCRATCH/$name" dataset.format="$format" dataset.num_files_train="$files" \
        dataset.num_samples_per_file="$spf" dataset.record_length_bytes=4096 reader.batch_size="$batch" \
        reader.read_threads="$threads" reader.sample_shuffle=$shuffle \
        train.seed=123 train.epochs="$epochs" train.computation_time=0 framework=tensorflow \
        reader.data_loader=tensorflow shardbench.trace="$SCRATCH/trace" shardbench.drop_page_cache=false "$@" \
        --accelerators "$ranks" --local 1 --db "$name.db"
    expect_eq "$name: run exit" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || { tail -5 sb.err; return; }
    local out
    if out=$(check "$name" "$SCRATCH/$name" "$spf" "$files" "$ranks" "$batch" "$threads" "$epochs" "$rpg" \
        "$want" "$ss" "$name.db" 2>&1); then pass "$out"; else fail "$out"; fi
}

cd "$SCRATCH" || exit 1
run_case npz13 npz 3 10 1 2 4 2 0 13 1
# said once at run time: DLIO's npz reader yields every sample of a split file in both threads
expect_eq "npz13: the split files said once" \
    "$(grep -c "a rank's 10 files make 13 (thread, file) pairs" sb.err)" 1
run_case npz2r npz 3 10 2 1 2 2 0 7 1
run_case npy13 npy 3 10 1 2 4 1 0 13 1
run_case pq20 parquet 40 10 1 4 2 2 20 20 1 dataset.parquet.row_group_size=20
run_case pq24 parquet 40 5 1 4 2 1 10 24 1 dataset.parquet.row_group_size=10
# no sample shuffle: file 2's rows 0-19 go to thread 0, 20-39 to thread 1;
# each thread's open reads all 4 of its groups (24 group reads an epoch, 20
# of them serving positions, so 20 traced with their bytes)
run_case pqsplit parquet 40 5 1 4 2 2 10 20 0 dataset.parquet.row_group_size=10

# tfrecord: DLIO's TFReader.next shards each rank's list again by the ranks
# and repeats it (resnet50, cosmoflow): shardbench keeps the iterative
# order and says once what DLIO would have read. 8 files on 2 ranks: a
# rank's 4, sharded again: rank 0 reads 2 (0 and 2 of its list), rank 1
# 2, so 4 of the 8 are never read. Its TFRecordDataset(buffer_size=
# transfer_size) reads each file front to back in reads of transfer_size:
# shardbench reads each file of a rank once, whole, in such reads (seen
# with strace where it can trace).
rm -rf trace && mkdir trace
tfr_run () {
    "$@" "$SHARDBENCH" run dataset.data_folder="$SCRATCH/tfr" dataset.format=tfrecord dataset.num_files_train=8 \
        dataset.num_samples_per_file=2 dataset.record_length_bytes=4096 reader.batch_size=2 reader.read_threads=2 \
        reader.sample_shuffle=off train.epochs=1 train.computation_time=0 framework=tensorflow \
        reader.data_loader=tensorflow reader.transfer_size=4096 shardbench.trace="$SCRATCH/trace" \
        shardbench.drop_page_cache=false --accelerators 2 --local 1 --db tfr.db >sb.out 2>sb.err
    SB_RC=$?
}
traced=0
if command -v strace >/dev/null && strace -f -o /dev/null true 2>/dev/null; then
    # LeakSanitizer cannot run under ptrace (it exits 23): no leak check in this run
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        tfr_run timeout 120 strace -ff -y -e trace=pread64 -o tfr.strace
    traced=1
else
    tfr_run timeout 120
fi
expect_eq "tfr: run exit" "$SB_RC" 0
# one read per file, of the whole file; the epoch's bytes are the files'
expect_eq "tfr: 8 reads, each a whole file" \
    "$(python3 - "$SCRATCH/tfr" trace <<'PY'
import csv, glob, os, sys
rows = [r for p in glob.glob(sys.argv[2] + "/trace-*.csv") for r in csv.DictReader(open(p)) if int(r["bytes"])]
whole = sum(int(r["offset"]) == 0 and int(r["bytes"]) == os.path.getsize(os.path.join(sys.argv[1], r["key"]))
            for r in rows)
print(len(rows), len({r["key"] for r in rows}), whole)
PY
)" "8 8 8"
expect_eq "tfr: the epoch's bytes, the 8 files'" "$(q tfr.db "SELECT bytes FROM epochs WHERE epoch = 1")" \
    "$(cat "$SCRATCH"/tfr/train/*.tfrecord | wc -c)"
if [ "$traced" = 1 ]; then
    # every pread of a tfrecord file is 4096 bytes but a file's last, its remainder
    expect_eq "tfr: preads of transfer_size (4096), the last of a file its rest" \
        "$(python3 - "$SCRATCH/tfr" <<'PY'
import collections, glob, os, re, sys
reads = collections.defaultdict(list)
for line in (l for p in glob.glob("tfr.strace.*") for l in open(p)):   # one file a thread: no split lines
    m = re.search(r'pread64\(\d+<([^>]*\.tfrecord)>, [^,]*, (\d+), (\d+)\) = (\d+)', line)
    if m:
        reads[m.group(1)].append((int(m.group(3)), int(m.group(2)), int(m.group(4))))
bad = 0
for path, rs in reads.items():
    size = os.path.getsize(path)
    rs.sort()
    want = [(o, min(4096, size - o)) for o in range(0, size, 4096)]
    bad += [(o, n) for o, n, _ in rs] != want
print(len(reads), bad)
PY
)" "8 0"
else
    pass "tfr: pread sizes not checked (strace cannot trace here)"
fi
expect_eq "tfr: DLIO's re-shard said once" "$(grep -c "TFReader.next shards each rank's 4 files again by the 2 ranks" sb.err)" 1
expect_contains "tfr: what DLIO would read" sb.err "reads 2 of its files (rank 0), each about 2 times, and 4 of the 8 files are never read"
expect_eq "tfr: every file read (8 files, 2 samples each, one line a sample)" \
    "$(tail -qn +2 trace/*.csv | cut -d, -f5 | sort -u | wc -l) $(tail -qn +2 trace/*.csv | wc -l)" "8 16"
finish
