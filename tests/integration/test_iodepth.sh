#!/usr/bin/env bash
# Reads in flight per rank, measured from the trace (shardbench.trace: each
# read's issue time and latency), equal to what DLIO_local_changes' iterable
# readers keep in flight (lib/dataset/loader_depth.h, docs/DLIO.md "Reads in
# flight"):
# - npz on S3 (s3rver on loopback), PyTorch loader, per storage_library:
#   s3dlio keeps prefetch_window GETs (64) in flight per loader worker,
#   minio min(16, prefetch_window), s3torchconnector 1; x read_threads;
# - parquet on local files: every footer of a loader worker's files first,
#   one at a time, then min(prefetch_workers, prefetch_window + 1) row-group
#   reads per loader worker.
# Never more than that (the engine's bound), and reached: many more reads
# than the depth, each slow enough that the depth fills before one ends.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"
INFLIGHT="$SB_INTEGRATION_DIR/trace_inflight.py"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" sbdepth || { echo "FAIL - S3 server did not start"; exit 1; }
ep=$S3RVER_ENDPOINT

# 600 objects of 64 KiB: one rank, 2 loader threads, 300 objects each
cat >s3.yaml <<YAML
model:
  name: iodepth-s3
framework: pytorch
dataset:
  data_folder: ds
  format: npz
  num_files_train: 600
  num_samples_per_file: 1
  record_length_bytes: 65536
  record_length_bytes_stdev: 0
reader:
  data_loader: pytorch
  batch_size: 4
  read_threads: 2
train:
  epochs: 1
  computation_time: 0
storage:
  storage_type: s3
  storage_root: sbdepth
  storage_options:
    endpoint_url: $ep
YAML
sb datagen s3.yaml storage.storage_library=s3dlio --local 1 --db s3.db
expect_eq "s3 datagen" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err

# inflight_case NAME LABEL EXPECTED_PEAK KEY=VALUE...: one epoch of NAME.yaml
# (results in NAME.db), traced; 600 reads, and the peak of reads in flight
inflight_case () {
    local name=$1 label=$2 want=$3
    shift 3
    rm -rf "tr-$label" && mkdir "tr-$label"
    sb run "$name.yaml" "shardbench.trace=$PWD/tr-$label" "$@" --local 1 --db "$name.db"
    expect_eq "$label: run" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    python3 "$INFLIGHT" "tr-$label" >"$label.inflight"
    echo "  $label: rank epoch reads peak mean: $(cat "$label.inflight")"
    expect_eq "$label: 600 reads, at most and at peak $want in flight" \
        "$(awk '{ print $3, $4 }' "$label.inflight")" "600 $want"
}
s3_case () { inflight_case s3 "$@"; }
s3_case s3dlio 128 storage.storage_library=s3dlio
s3_case s3dlio-w8 16 storage.storage_library=s3dlio storage.storage_options.prefetch_window=8
s3_case minio 32 storage.storage_library=minio
s3_case minio-w4 8 storage.storage_library=minio storage.storage_options.prefetch_window=4
s3_case s3torchconnector 2 storage.storage_library=s3torchconnector

# stagger (minio, s3torchconnector): loader thread 1's first read of the
# epoch waits 1 x computation_time (0.3 s); thread 0 reads at once. The
# rank's files go to the threads alternately (catalog index mod 2: one
# rank, no shuffle). s3dlio and stagger_workers: false start both together.
# stagger_case LABEL STAGGERED(1|0) KEY=VALUE...
stagger_case () {
    local label=$1 staggered=$2
    shift 2
    rm -rf "tr-$label" && mkdir "tr-$label"
    sb run s3.yaml "shardbench.trace=$PWD/tr-$label" train.computation_time=0.3 train.total_training_steps=4 \
        "$@" --local 1 --db s3.db
    expect_eq "$label: run" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    python3 - "tr-$label" >"$label.stagger" <<'PY'
import csv, glob, os, sys
first = {}
for path in glob.glob(os.path.join(sys.argv[1], "trace-*.csv")):
    for row in csv.DictReader(open(path, newline="")):
        if int(row["latency_us"]) == 0:
            continue
        t = int(row["file_index"]) % 2
        first[t] = min(first.get(t, float("inf")), float(row["start_s"]))
print("%.3f" % (first[1] - first[0]))
PY
    local gap
    gap=$(cat "$label.stagger")
    echo "  $label: thread 1 starts ${gap} s after thread 0"
    if [ "$staggered" = 1 ]; then
        expect_eq "$label: thread 1's first read 0.3 s after the epoch began, at least 0.25 s after thread 0's" \
            "$(awk '{ print ($1 >= 0.25) }' "$label.stagger")" 1
    else
        expect_eq "$label: both threads start together (within 0.15 s)" "$(awk '{ print ($1 < 0.15) }' "$label.stagger")" 1
    fi
}
stagger_case stagger-minio 1 storage.storage_library=minio
stagger_case stagger-s3torchconnector 1 storage.storage_library=s3torchconnector
stagger_case stagger-off 0 storage.storage_library=minio storage.storage_options.stagger_workers=false
stagger_case stagger-s3dlio 0 storage.storage_library=s3dlio

# --- npz of 4 samples a file on S3: DLIO's iterable reader GETs each file of
# a loader worker once, whole, and yields its samples (_s3_stream_next); 40
# files on 2 ranks: 20 whole-object GETs a rank and epoch, not 80 per sample
sed 's/^  num_files_train: 600$/  num_files_train: 40/; s/^  num_samples_per_file: 1$/  num_samples_per_file: 4/;
     s/^  data_folder: ds$/  data_folder: ds4/' s3.yaml >s3spf.yaml
sb datagen s3spf.yaml storage.storage_library=s3dlio --local 1 --db s3spf.db
expect_eq "npz of 4 samples a file: datagen" "$SB_RC" 0
rm -rf tr-spf && mkdir tr-spf
sb run s3spf.yaml storage.storage_library=minio train.epochs=2 "shardbench.trace=$PWD/tr-spf" \
    --accelerators 2 --local 1 --db s3spf.db
expect_eq "npz of 4 samples a file: run" "$SB_RC" 0
expect_eq "npz of 4 samples a file: per rank and epoch 20 GETs, each of a whole object, of 20 objects" \
    "$(python3 - tr-spf <<'PY'
import collections, csv, glob, sys
reads = collections.defaultdict(list)
for p in glob.glob(sys.argv[1] + "/trace-*.csv"):
    for r in csv.DictReader(open(p)):
        if int(r["bytes"]):
            reads[(r["rank"], r["epoch"])].append((r["key"], int(r["offset"]), int(r["bytes"])))
print(" ".join("%s/%s:%d:%d:%d" % (k[0], k[1], len(v), len({x[0] for x in v}), sum(x[1] == 0 for x in v))
               for k, v in sorted(reads.items())))
PY
)" "0/1:20:20:20 0/2:20:20:20 1/1:20:20:20 1/2:20:20:20"
expect_eq "npz of 4 samples a file: each rank and epoch read its 20 objects' bytes, 80 samples" \
    "$(q s3spf.db "SELECT group_concat(samples || ':' || (bytes = (SELECT bytes / 2 FROM epochs e WHERE e.run_id = r.run_id
                                                                 AND e.epoch = r.epoch)), ' ')
                   FROM rank_epochs r WHERE run_id = (SELECT max(id) FROM runs)")" "80:1 80:1 80:1 80:1"

# --- parquet on s3rver with s3dlio (parquet_reader_s3dlio.py): first the
# last footer_cap bytes (4 MiB) of each file, footer_batch_size (16) files
# at once per loader worker, in the first epoch only (s3dlio keeps its
# index); then GETs of coalesce_rgs consecutive row groups (first one's
# first byte to the last one's end), min(prefetch_workers or prefetch (32),
# max_outstanding) in flight per loader worker. 8 files of 64 rows of 64 KiB
# in row groups of 2 rows: 32 groups a file, 4 files a loader thread.
cat >s3pq.yaml <<YAML
model:
  name: iodepth-s3-parquet
framework: pytorch
dataset:
  data_folder: s3pq
  format: parquet
  num_files_train: 8
  num_samples_per_file: 64
  record_length_bytes: 65536
  record_length_bytes_stdev: 0
  parquet:
    row_group_size: 2
reader:
  data_loader: pytorch
  batch_size: 8
  read_threads: 2
train:
  epochs: 1
  computation_time: 0
storage:
  storage_type: s3
  storage_root: sbdepth
  storage_library: s3dlio
  storage_options:
    endpoint_url: $ep
YAML
sb datagen s3pq.yaml --local 1 --db s3pq.db
expect_eq "s3 parquet datagen" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
# s3pq_case LABEL GROUPS_PER_GET EXPECTED_PEAK FOOTER_BYTES FOOTER_PEAK KEY=VALUE...
s3pq_case () {
    local label=$1 per=$2 want=$3 fbytes=$4 fpeak=$5
    shift 5
    rm -rf "tr-$label" && mkdir "tr-$label"
    sb run s3pq.yaml "shardbench.trace=$PWD/tr-$label" "$@" --local 1 --db s3pq.db
    expect_eq "$label: run" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    python3 "$INFLIGHT" "tr-$label" >"$label.inflight"
    echo "  $label: rank epoch reads peak mean footers footer_peak before: $(cat "$label.inflight")"
    local gets=$((8 * ((32 + per - 1) / per)))
    expect_eq "$label: $gets GETs of $per row groups, at most and at peak $want in flight, after 8 footers, $fpeak at once" \
        "$(awk '{ print $3, $4, $6, $7, $8 }' "$label.inflight")" "$gets $want 8 $fpeak 1"
    expect_eq "$label: each footer read is the file's last $fbytes bytes" \
        "$(awk -F, 'NR > 1 && $4 == "" { print $8 }' tr-"$label"/trace-*.csv | sort -u)" "$fbytes"
    # each file's GETs tile its row groups: every GET starts where the last ended,
    # and spans $per groups of 2 rows of 64 KiB (plus their pages' headers)
    python3 - "tr-$label" "$per" >"$label.tiles" <<'PY'
import csv, glob, os, sys
per = int(sys.argv[2])
reads = {}
for path in glob.glob(os.path.join(sys.argv[1], "trace-*.csv")):
    for row in csv.DictReader(open(path, newline="")):
        if row["position"] and int(row["bytes"]) > 0:
            reads.setdefault(row["key"], []).append((int(row["offset"]), int(row["length"])))
bad = 0
for key, rs in reads.items():
    rs.sort()
    for (o1, l1), (o2, _) in zip(rs, rs[1:]):
        bad += o1 + l1 != o2
    for i, (_, l) in enumerate(rs):
        groups = min(per, 32 - i * per)
        bad += not (groups * 2 * 65536 <= l < groups * 2 * 65536 + groups * 4096)
print(len(reads), bad)
PY
    expect_eq "$label: 8 files, their GETs contiguous and $per groups long" "$(cat "$label.tiles")" "8 0"
}
# DLIO's defaults: 8 row groups a GET, 32 GETs in flight a worker (4 GETs
# a file, 32 in all: the peak is all of them); a worker's 4 footers at once
s3pq_case s3dlio-parquet 8 32 4194304 8
s3pq_case s3dlio-parquet-c4-p3 4 6 65536 4 storage.storage_options.coalesce_rgs=4 storage.storage_options.prefetch=3 \
    storage.storage_options.footer_cap=65536 storage.storage_options.footer_batch_size=2
s3pq_case s3dlio-parquet-c1-o2 1 4 4194304 2 storage.storage_options.coalesce_rgs=1 \
    storage.storage_options.max_outstanding=2 storage.storage_options.footer_batch_size=1
# two epochs: the footers in the first only
rm -rf tr-s3pq2 && mkdir tr-s3pq2
sb run s3pq.yaml "shardbench.trace=$PWD/tr-s3pq2" train.epochs=2 --local 1 --db s3pq.db
expect_eq "s3dlio parquet, 2 epochs: run" "$SB_RC" 0
expect_eq "s3dlio parquet, 2 epochs: 8 footers and 32 GETs, then 32 GETs and no footer" \
    "$(python3 "$INFLIGHT" tr-s3pq2 | awk '{ printf "%s:%s:%s ", $2, $3, $6 }')" "1:32:8 2:32:0 "

# --- local parquet: 8 files of 256 rows of 64 KiB in row groups of 4 rows
# (64 groups of 256 KiB a file), 2 loader threads of 4 files each. Each
# file's first read drops its pages (shardbench.drop_page_cache), so the row
# groups come from the device and a read blocks long enough for the depth to
# fill; on tmpfs (no device) reads are copies that a busy CPU serializes, and
# only the bound is checked.
cat >pq.yaml <<YAML
model:
  name: iodepth-parquet
framework: pytorch
dataset:
  data_folder: pq
  format: parquet
  num_files_train: 8
  num_samples_per_file: 256
  record_length_bytes: 65536
  record_length_bytes_stdev: 0
  parquet:
    row_group_size: 4
reader:
  data_loader: pytorch
  batch_size: 8
  read_threads: 2
train:
  epochs: 1
  computation_time: 0
YAML
sb datagen pq.yaml --local 1 --db pq.db
expect_eq "parquet datagen" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
on_device=1
[ "$(stat -f -c %T "$SCRATCH")" = tmpfs ] && on_device=0
# pq_case LABEL EXPECTED_PEAK KEY=VALUE...
pq_case () {
    local label=$1 want=$2
    shift 2
    rm -rf "tr-$label" && mkdir "tr-$label"
    sb run pq.yaml "shardbench.trace=$PWD/tr-$label" shardbench.drop_page_cache=true "$@" --local 1 --db pq.db
    expect_eq "$label: run" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    python3 "$INFLIGHT" "tr-$label" >"$label.inflight"
    echo "  $label: rank epoch reads peak mean footers footer_peak before: $(cat "$label.inflight")"
    # 8 x 64 row groups and 8 footers: every footer before the first row
    # group, at most one per loader thread at once
    expect_eq "$label: 512 row-group reads after 8 footer reads, at most 2 footers at once" \
        "$(awk '{ print $3, $6, ($7 >= 1 && $7 <= 2), $8 }' "$label.inflight")" "512 8 1 1"
    local peak
    peak=$(awk '{ print $4 }' "$label.inflight")
    if [ "$on_device" = 1 ]; then
        expect_eq "$label: $want row-group reads in flight at most and at peak" "$peak" "$want"
    elif [ "$peak" -le "$want" ]; then
        pass "$label: at most $want row-group reads in flight (tmpfs: $peak at peak)"
    else
        fail "$label: $peak row-group reads in flight, more than $want"
    fi
}
# DLIO's defaults: 64 threads a loader worker, a window of 64 (+1) row groups
pq_case parquet-default 128
pq_case parquet-workers3 6 storage.storage_options.prefetch_workers=3
pq_case parquet-window4 10 storage.storage_options.prefetch_window=4

# --- npz on direct_fs (_local_fs_iterable_mixin.py): chunks of
# prefetch_window files (256), 64 read at once, per loader worker; stagger
# as minio's. 600 files of 64 KiB read with O_DIRECT (from the device: the
# reads block, the depth fills), 2 loader threads of 300.
cat >dfs.yaml <<YAML
model:
  name: iodepth-direct-fs
framework: pytorch
dataset:
  data_folder: dfs
  format: npz
  num_files_train: 600
  num_samples_per_file: 1
  record_length_bytes: 65536
  record_length_bytes_stdev: 0
reader:
  data_loader: pytorch
  batch_size: 4
  read_threads: 2
train:
  epochs: 1
  computation_time: 0
storage:
  storage_type: direct_fs
YAML
if [ "$on_device" = 1 ]; then
    sb datagen dfs.yaml --local 1 --db dfs.db
    expect_eq "direct_fs datagen" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    dfs_case () { inflight_case dfs "$@"; }
    dfs_case direct-fs 128
    dfs_case direct-fs-w4 8 storage.storage_options.prefetch_window=4
else
    pass "direct_fs: skipped on tmpfs (no O_DIRECT device to block on)"
fi
finish
