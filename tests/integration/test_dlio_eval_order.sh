#!/usr/bin/env bash
# DLIO's evaluation order from real runs: each rank's reads of valid/ in each
# evaluation, taken from the read trace (shardbench.trace), equal read for
# read what DLIO_local_changes does for the same workload, as
# tests/dlio_model.py's `evaluations` models it with numpy's own generator:
# every epoch's reconfigure reshards the training list and then the
# evaluation list (_reshard_files, each seeded on its own), builds the
# training map and then the evaluation map (build_sample_map_iter /
# get_global_map_index), and the evaluation after epoch e reads
# reconfigure(e)'s evaluation map with batch_size_eval.
# For the index, iterative and files kinds, file_shuffle on and off, 2 epochs
# with an evaluation after each, an evaluation set of another size than the
# training set (not a multiple of the ranks) and another batch: per rank and
# evaluation the sequence of (valid/ file in name order, sample in file), and
# the steps recorded in eval_ranks.
MODEL="$(cd "$(dirname "$0")/.." && pwd)/dlio_model.py"
. "$(dirname "$0")/lib.sh"
PY=python3
"$PY" -c 'import numpy' 2>/dev/null || PY=/usr/bin/python3

# compare NAME KIND DATA_FOLDER SPF RANKS BATCH_EVAL THREADS SS FS SCE EPOCHS TRAIN_FILES EVAL_FILES DB
compare () {
    "$PY" - "$MODEL" "$@" <<'EOF'
import csv, glob, importlib.util, os, sqlite3, sys
spec = importlib.util.spec_from_file_location("dlio_model", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
(name, kind, folder, spf, ranks, batch_eval, threads, ss, fs, sce, epochs, train_files, eval_files, db) = sys.argv[2:16]
spf, ranks, batch_eval, threads, epochs, train_files, eval_files = map(
    int, (spf, ranks, batch_eval, threads, epochs, train_files, eval_files))
sizes = {}
got = {}
for path in glob.glob("trace/trace-*.csv"):
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if not row["position"]:      # a parquet footer read: serves no sample
                continue
            key = row["key"]
            if not key.startswith("valid/"):
                continue
            if key not in sizes:
                sizes[key] = os.path.getsize(os.path.join(folder, key))
            record = sizes[key] // spf
            # parquet: one line per sample in position order, the row group's offset
            sample = None if kind == "dlio_files" else int(row["sample"])   # a whole-file read serves many
            got.setdefault((int(row["rank"]), int(row["epoch"])), []).append(
                (int(row["position"]), int(row["file_index"]), sample))
want = {}
steps = {}
for e in m.evaluations(kind, train_files, eval_files, spf, ranks, 1, batch_eval, threads=threads, seed=123,
                       sample_shuffle=ss == "1", file_shuffle=fs == "1", seed_change_epoch=sce == "1",
                       epochs=epochs):
    steps[e["epoch"]] = e["steps"]
    for r, reads in e["reads"].items():
        want[(int(r), e["epoch"])] = [(f, s if kind != "dlio_files" else None) for f, s, _t in reads]
if sorted(got) != sorted(want):
    print(f"{name}: traced evaluations (rank, epoch) {sorted(got)} but DLIO's are {sorted(want)}")
    sys.exit(1)
for k in sorted(want):
    lines = sorted(got[k])
    positions = [p for p, _f, _s in lines]
    if positions != list(range(len(want[k]))):
        print(f"{name}: rank {k[0]} evaluation after epoch {k[1]}: positions {positions[:12]}...,"
              f" expected 0..{len(want[k]) - 1}")
        sys.exit(1)
    mine = [(f, s) for _p, f, s in lines]
    if mine != want[k]:
        i = next(i for i, (a, b) in enumerate(zip(mine, want[k])) if a != b)
        print(f"{name}: rank {k[0]} evaluation after epoch {k[1]}: read {i} is {mine[i]}, DLIO's is {want[k][i]}"
              f" (of {len(want[k])}); shardbench {mine}, DLIO {want[k]}")
        sys.exit(1)
con = sqlite3.connect(db)
recorded = sorted(con.execute("SELECT epoch, rank, steps FROM eval_ranks WHERE run_id = (SELECT max(id) FROM runs)"))
expected = sorted((e, r, steps[e]) for r, e in want)
if recorded != expected:
    print(f"{name}: eval_ranks (epoch, rank, steps) {recorded}, DLIO's {expected}")
    sys.exit(1)
print(f"{name}: {len(want)} rank-evaluations, {sum(len(v) for v in want.values())} valid/ reads as DLIO's;"
      f" steps {sorted(set(steps.values()))}")
EOF
}

# run_case NAME KIND FORMAT SPF TRAIN_FILES EVAL_FILES RANKS BATCH BATCH_EVAL THREADS SS FS SCE WORKERS EXTRA...
run_case () {
    local name=$1 kind=$2 format=$3 spf=$4 train_files=$5 eval_files=$6 ranks=$7 batch=$8 batch_eval=$9 \
          threads=${10} ss=${11} fs=${12} sce=${13} workers=${14}
    shift 14
    # no file shuffle is the key left out: DLIO shuffles files whatever value it is given
    local shuffle_s=off shuffle_f= sce_v=false epochs=2
    [ "$ss" = 1 ] && shuffle_s=seed
    [ "$fs" = 1 ] && shuffle_f=reader.file_shuffle=seed
    [ "$sce" = 1 ] && sce_v=true
    local data="dataset.data_folder=$SCRATCH/data-$format dataset.format=$format dataset.num_files_train=$train_files
        dataset.num_files_eval=$eval_files dataset.num_samples_per_file=$spf dataset.record_length_bytes=4096"
    if [ ! -d "$SCRATCH/data-$format" ]; then
        # shellcheck disable=SC2086
        sb datagen $data "$@" --accelerators "$ranks" --local 1 --progress off --db "gen-$format.db"
        expect_eq "datagen $format: exit" "$SB_RC" 0
    fi
    rm -rf trace && mkdir trace
    # shellcheck disable=SC2086
    sb run $data workflow.generate_data=False workflow.evaluation=True reader.batch_size=$batch \
        reader.batch_size_eval=$batch_eval reader.read_threads=$threads reader.sample_shuffle=$shuffle_s \
        $shuffle_f train.seed_change_epoch=$sce_v train.seed=123 train.epochs=$epochs \
        train.computation_time=0 evaluation.eval_time=0 shardbench.trace="$SCRATCH/trace" \
        shardbench.drop_page_cache=false "$@" --accelerators "$ranks" --local "$workers" --progress off --db "$name.db"
    expect_eq "$name: run exit" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || { tail -5 sb.err; return; }
    local out
    out=$(compare "$name" "$kind" "$SCRATCH/data-$format" "$spf" "$ranks" "$batch_eval" "$threads" "$ss" "$fs" \
        "$sce" "$epochs" "$train_files" "$eval_files" "$name.db" 2>&1)
    if [ $? -eq 0 ]; then pass "$out"; else fail "$out"; fi
}

cd "$SCRATCH" || exit 1
torch="framework=pytorch reader.data_loader=pytorch"
tf="framework=tensorflow reader.data_loader=tensorflow"
# 10 training files, 11 evaluation files of 3 samples on 3 ranks: 3 valid/ files a rank, 2 unused
# (on 4 ranks: 2 a rank, 3 unused)
# shellcheck disable=SC2086
{
# pytorch map-style (index kind): file_shuffle on (the evaluation list resharded every epoch), then off
run_case index-fs dlio_index npz 3 10 11 3 2 2 2 1 1 1 1 $torch
run_case index dlio_index npz 3 10 11 3 2 2 2 1 0 1 1 $torch
# the epoch kept out of the seed, ranks over 2 workers, another batch
run_case index-fs-sce0 dlio_index npz 3 10 11 4 2 3 2 0 1 0 2 $torch
# tensorflow (iterative kind): sample_shuffle picks the sample inside each file
run_case iter-fs dlio_iterative npz 3 10 11 3 2 2 2 1 1 1 1 $tf
run_case iter dlio_iterative npz 3 10 11 3 2 2 2 1 0 1 1 $tf
run_case iter-fs-noss dlio_iterative npz 3 10 11 4 2 3 2 0 1 1 2 $tf
# pytorch parquet (files kind): loader worker w reads valid/ files w::threads, one row a file (with
# more, a valid/ parquet file whose size the workers do not know is read as record_length slices)
run_case files-fs dlio_files parquet 1 10 11 3 2 1 2 1 1 1 1 $torch
run_case files dlio_files parquet 1 10 11 3 2 1 2 1 0 1 1 $torch
run_case files-fs-b2 dlio_files parquet 1 10 11 3 2 2 2 1 1 1 1 $torch
}

finish
