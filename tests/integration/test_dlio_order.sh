#!/usr/bin/env bash
# DLIO's access pattern from real runs: each rank's reads, taken from the read
# trace (shardbench.trace), equal read for read what DLIO_local_changes' rules
# give for the same workload, as tests/dlio_model.py models them with numpy's
# own generator (np.random.seed / np.random.shuffle where DLIO calls them):
# - pytorch, npz on local files: the index kind (map-style dlio_sampler),
#   file_shuffle reshards files between ranks before every epoch;
# - tensorflow: the iterative kind (build_sample_map_iter), sample_shuffle
#   picks the sample inside each file;
# - pytorch, parquet: the files kind (loader worker w reads files w::threads),
#   each row group read once and its other samples served from it;
# - the same with the ranks split over 2 workers, and with shardbench.sampler:
#   global (one Feistel order over all samples, lib/dataset/shard.h).
# Per rank and epoch the test compares the sequence of (catalog file index,
# sample in file), the step count and the samples dropped.
. "$(dirname "$0")/lib.sh"
PY=python3
"$PY" -c 'import numpy' 2>/dev/null || PY=/usr/bin/python3
MODEL="$(cd "$(dirname "$0")/.." && pwd)/dlio_model.py"

# compare NAME KIND DATA_FOLDER SPF RANKS BATCH THREADS SEED SAMPLE_SHUFFLE FILE_SHUFFLE SEED_CHANGE EPOCHS FILES
compare () {
    "$PY" - "$MODEL" "$@" <<'EOF'
import csv, glob, importlib.util, os, sys
spec = importlib.util.spec_from_file_location("dlio_model", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
(name, kind, folder, spf, ranks, batch, threads, seed, ss, fs, sce, epochs, files) = sys.argv[2:15]
spf, ranks, batch, threads, seed, epochs, files = map(int, (spf, ranks, batch, threads, seed, epochs, files))
sizes = {}
got = {}
rows_of = {}
for path in glob.glob("trace/trace-*.csv"):
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if not row["position"]:      # a parquet footer read: serves no sample
                continue
            key = row["key"]
            if key not in sizes:
                sizes[key] = os.path.getsize(os.path.join(folder, key))
            record = sizes[key] // spf
            if kind == "dlio_files":     # parquet: one line per sample, position order; the row from the position
                sample = None
            else:                       # the trace names it (a whole-file read serves many)
                sample = int(row["sample"])
            rows_of.setdefault((int(row["rank"]), int(row["epoch"])), []).append(row)
            got.setdefault((int(row["rank"]), int(row["epoch"])), []).append(
                (int(row["position"]), int(row["file_index"]), sample, int(row["bytes"])))
want = {}
steps = {}
for e in m.model(kind, files, spf, ranks, batch, threads=threads, seed=seed, sample_shuffle=ss == "1",
                 file_shuffle=fs == "1", seed_change_epoch=sce == "1", epochs=epochs):
    if "error" in e and e["error"]:
        print(f"{name}: model stops: {e}")
        sys.exit(1)
    steps[e["epoch"]] = e["steps"]
    for r, reads in e["reads"].items():
        want[(int(r), e["epoch"])] = [(f, s) for f, s, _t in reads]
bad = 0
if sorted(got) != sorted(want):
    print(f"{name}: traced (rank, epoch) {sorted(got)} but the model has {sorted(want)}")
    sys.exit(1)
for k in sorted(want):
    lines = sorted(got[k])
    positions = [p for p, _f, _s, _b in lines]
    if positions != list(range(len(want[k]))):
        print(f"{name}: rank {k[0]} epoch {k[1]}: positions {positions[:12]}..., expected 0..{len(want[k]) - 1}")
        sys.exit(1)
    mine = [(f, s) for _p, f, s, _b in lines]
    theirs = want[k] if kind != "dlio_files" else [(f, None) for f, _s in want[k]]
    if mine != theirs:
        i = next(i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b) if len(mine) == len(theirs) else min(len(mine), len(theirs))
        print(f"{name}: rank {k[0]} epoch {k[1]}: read {i} is {mine[i] if i < len(mine) else None}, DLIO's rules give"
              f" {theirs[i] if i < len(theirs) else None} (of {len(theirs)})")
        sys.exit(1)
    if kind == "dlio_files":     # each row group read once in the epoch: no offset of a file read twice
        seen = {}
        for _p, f, _s, b in lines:
            if b:
                seen.setdefault(f, []).append(_s)
        offs = {}
        for row in rows_of[k]:
            if int(row["bytes"]):
                offs.setdefault(int(row["file_index"]), []).append(int(row["offset"]))
        for f, o in offs.items():
            if len(o) != len(set(o)):
                print(f"{name}: rank {k[0]} epoch {k[1]}: file {f}: a row group read twice (offsets {o})")
                sys.exit(1)
            served = sum(1 for _p, g, _s, b in lines if g == f)
            if served < len(o) or len(o) < (served + 1) // 2:
                print(f"{name}: rank {k[0]} epoch {k[1]}: file {f}: {len(o)} reads for {served} samples in row groups of 2")
                sys.exit(1)
print(f"{name}: {len(want)} rank-epochs, {sum(len(v) for v in want.values())} reads as DLIO's rules;"
      f" steps {sorted(set(steps.values()))}")
EOF
}

# run_case NAME KIND FORMAT SPF FILES RANKS BATCH THREADS SS FS SCE EPOCHS WORKERS EXTRA...
run_case () {
    local name=$1 kind=$2 format=$3 spf=$4 files=$5 ranks=$6 batch=$7 threads=$8 ss=$9 fs=${10} sce=${11} \
          epochs=${12} workers=${13}
    shift 13
    # no file shuffle is the key left out: DLIO shuffles files whatever value
    # reader.file_shuffle is given (off included)
    local shuffle_s=off shuffle_f= sce_v=false
    [ "$ss" = 1 ] && shuffle_s=seed
    [ "$fs" = 1 ] && shuffle_f=reader.file_shuffle=seed
    [ "$sce" = 1 ] && sce_v=true
    rm -rf trace && mkdir trace
    # shellcheck disable=SC2086
    sb run dataset.data_folder="$SCRATCH/$name" dataset.format=$format dataset.num_files_train=$files \
        dataset.num_samples_per_file=$spf dataset.record_length_bytes=4096 reader.batch_size=$batch \
        reader.read_threads=$threads reader.sample_shuffle=$shuffle_s $shuffle_f \
        train.seed_change_epoch=$sce_v train.seed=123 train.epochs=$epochs train.computation_time=0 \
        shardbench.trace="$SCRATCH/trace" shardbench.drop_page_cache=false "$@" \
        --accelerators "$ranks" --local "$workers" --db "$name.db"
    expect_eq "$name: run exit" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || { cat sb.out | tail -5; return; }
    local out
    out=$(compare "$name" "$kind" "$SCRATCH/$name" "$spf" "$ranks" "$batch" "$threads" 123 "$ss" "$fs" "$sce" \
        "$epochs" "$files" 2>&1)
    if [ $? -eq 0 ]; then pass "$out"; else fail "$out"; fi
}

cd "$SCRATCH" || exit 1
# pytorch map-style over 7 files of 3 samples on 3 ranks: 2 files a rank, file 6 unused
run_case index7 dlio_index npz 3 7 3 2 2 1 1 1 3 1 framework=pytorch reader.data_loader=pytorch
# 4 ranks over 2 workers (ranks 0-1 on one, 2-3 on the other), 9 files: 2 a rank, 1 unused
run_case index9w2 dlio_index npz 3 9 4 2 2 1 1 1 3 2 framework=pytorch reader.data_loader=pytorch
# 100 files, 4 ranks, threads 3, the epoch kept in the seed off
run_case index100 dlio_index npz 1 100 4 5 3 1 1 0 2 1 framework=pytorch reader.data_loader=pytorch
# tensorflow: iterative, sample_shuffle choosing the sample inside each file
run_case iter10 dlio_iterative npz 3 10 3 2 2 1 0 1 2 1 framework=tensorflow reader.data_loader=tensorflow
run_case iter10fs dlio_iterative npz 3 10 4 2 2 1 1 1 2 2 framework=tensorflow reader.data_loader=tensorflow
# pytorch parquet: the files kind, 4 rows a file in row groups of 2 rows, each read once
run_case files7 dlio_files parquet 4 7 3 2 2 1 1 1 2 1 framework=pytorch reader.data_loader=pytorch dataset.parquet.row_group_size=2
# batch 1 without prefetch: a file's first group still gets its footer reads' slots
run_case files7p0 dlio_files parquet 4 7 3 1 2 1 1 1 2 1 framework=pytorch reader.data_loader=pytorch dataset.parquet.row_group_size=2 reader.prefetch_size=0

# subfolders: a listed dataset is dealt in name order (DLIO sorts the URIs it
# lists: folder 0's files, then folder 1's), skip_listing in index order
# (main.py's skip_listing: index r, r + R, ... to rank r); 8 files in 2
# subfolders, 2 ranks, no shuffle: rank 0 reads 0,4,1,5 listed, 0,2,4,6 not
sl="dataset.num_files_train=8 dataset.num_subfolders_train=2 dataset.num_samples_per_file=1
    dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 dataset.data_folder=./sl
    reader.batch_size=1 reader.sample_shuffle=off train.epochs=1
    train.computation_time=0 --accelerators 2 --local 1 --progress off"
# shellcheck disable=SC2086 # one override per word
sb datagen $sl --db sl.db
expect_eq "subfolders: datagen exit" "$SB_RC" 0
for listing in false true; do
    rm -rf "sltr-$listing" && mkdir "sltr-$listing"
    # shellcheck disable=SC2086 # one override per word
    sb run $sl dataset.skip_listing=$listing "shardbench.trace=$PWD/sltr-$listing" --db sl.db
    expect_eq "subfolders, skip_listing=$listing: exit" "$SB_RC" 0
    got=$(awk -F, 'FNR > 1 && $1 == 0 { print $5, $6 }' "sltr-$listing"/*.csv | sort -n | awk '{ print $2 }' | tr '\n' ' ')
    if [ "$listing" = false ]; then
        want="train/0/img_0_of_8.npz train/0/img_4_of_8.npz train/1/img_1_of_8.npz train/1/img_5_of_8.npz "
    else
        want="train/0/img_0_of_8.npz train/0/img_2_of_8.npz train/0/img_4_of_8.npz train/0/img_6_of_8.npz "
    fi
    expect_eq "subfolders, skip_listing=$listing: rank 0's files in DLIO's order" "$got" "$want"
done

finish
