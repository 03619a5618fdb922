#!/usr/bin/env bash
# mlpstorage (mlcommons/storage) running shardbench through the dlio_benchmark
# that `meson install` puts beside it, under a real mpirun, as it runs DLIO:
# `training datagen`, `training run` with a launch of 1.5 s (an mpirun that
# waits before it starts the ranks, first on PATH: mlpstorage names the leaf
# by its own start, the run starts more than a second later), then
# `reports reportgen`, whose walk of the results directory (get_runs_files)
# must find every leaf: one metadata file in each (mlpstorage's, named by the
# leaf), a datagen leaf without statistics that reads as a datagen.
#
# Skipped (77) when mlpstorage or mpirun is missing. MLPSTORAGE names the
# mlpstorage command (default: `mlpstorage` on PATH) and MLPSTORAGE_PYTHON a
# Python that imports its package (default python3); both the 2.0 command
# line (`mlpstorage training datagen --model M`) and the 3.0 one
# (`mlpstorage init`, `mlpstorage open training M datagen file`) are
# spoken. Needs SB_BUILD_ROOT (the build folder) and SB_BINDIR (absolute).
#
# 3.0 runs in the open division with --allow-invalid-params (a run this
# small overrides what a submission may not): its reportgen finds the leaves
# of closed/ and open/ below the initialized results directory only, never
# whatif/'s, and refuses a --results-dir below that directory. 3.0 is run
# through MLPSTORAGE_PYTHON with its pre-run disk-capacity gate (CAP-01)
# given 0 bytes to find: the gate wants 5 x this host's memory free at
# --data-dir (the size of a submission's dataset, not of this one) and fails
# with a TypeError on a --params dataset.record_length_bytes (a string).
. "$(dirname "$0")/lib.sh"
for v in SB_BUILD_ROOT SB_BINDIR; do
    [ -n "${!v:-}" ] || { echo "test_mlpstorage.sh: $v is not set (run it through meson test)"; exit 1; }
done
MLPS=${MLPSTORAGE:-$(command -v mlpstorage)}
PY=${MLPSTORAGE_PYTHON:-python3}
if [ -z "$MLPS" ] || ! "$MLPS" --help >/dev/null 2>&1; then
    echo "SKIP: mlpstorage is not installed (set MLPSTORAGE to its command)"; exit 77
fi
if ! "$PY" -c "import mlpstorage_py" 2>/dev/null && ! "$PY" -c "import mlpstorage.rules" 2>/dev/null; then
    echo "SKIP: $PY cannot import mlpstorage's package (set MLPSTORAGE_PYTHON)"; exit 77
fi
MPIRUN=$(command -v mpirun) || { echo "SKIP: mpirun missing (openmpi-bin or mpich)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

dest="$SCRATCH/root"
meson install -C "$SB_BUILD_ROOT" --destdir "$dest" --no-rebuild >install.out 2>&1
expect_eq "meson install --destdir" "$?" 0
bin="$dest$SB_BINDIR"
export SHARDBENCH_WORKER="$bin/shardbench-worker"
# the launch of a slow cluster: this mpirun waits 1.5 s before it starts the ranks
mkdir slowmpi
printf '#!/bin/sh\nsleep 1.5\nexec "%s" "$@"\n' "$MPIRUN" >slowmpi/mpirun
chmod +x slowmpi/mpirun

# mlps3 ARGS...: 3.0's main, its CAP-01 gate given 0 bytes to find (above)
mlps3 () {
    "$PY" - "$@" <<'PY'
import sys
from mlpstorage_py.benchmarks import dlio
dlio.TrainingBenchmark.required_bytes_for_capacity_gate = lambda self: 0
print("test_mlpstorage.sh: CAP-01 (disk capacity) off", file=sys.stderr)
from mlpstorage_py.main import main
sys.exit(main())
PY
}
if "$MLPS" training --help >/dev/null 2>&1; then
    v=2     # 2.0's walk reads a leaf with summary.json only: a datagen leaf is no run there
else
    v=3
    "$MLPS" init acme "$PWD/res" >init.out 2>&1
    expect_eq "mlpstorage init" "$?" 0
fi
params=(dataset.num_files_train=32 dataset.record_length_bytes=65536 dataset.record_length_bytes_stdev=0
        reader.read_threads=1)
common=(--hosts 127.0.0.1 --oversubscribe --allow-run-as-root --data-dir "$PWD/data" --results-dir "$PWD/res"
        --dlio-bin-path "$bin")

# 1. datagen
if [ $v = 2 ]; then
    "$MLPS" training datagen --model unet3d --num-processes 2 "${common[@]}" --params "${params[@]}" >dg.out 2>&1
else
    mlps3 open training unet3d datagen file --num-processes 2 "${common[@]}" --systemname sut \
        --allow-invalid-params --params "${params[@]}" >dg.out 2>&1
fi
expect_eq "mlpstorage training datagen: exit 0" "$?" 0
expect_eq "datagen: 32 files generated" "$(find data -name '*.npz' | wc -l)" 32
dleaf=$(find res -type d -path '*/training/unet3d/datagen/*' -name '[0-9]*_[0-9]*')
expect_eq "datagen: one leaf" "$(echo "$dleaf" | grep -c .)" 1
d=$(basename "$dleaf")
expect_eq "datagen leaf: one metadata file, mlpstorage's (named by the leaf); no statistics (DLIO's datagen)" \
    "$(ls "$dleaf" | grep -c '_metadata\.json$'):$(ls "$dleaf" | grep -c "^training_${d}_metadata\.json$"):$(ls "$dleaf" | grep -c -e summary.json -e _output.json)" \
    "1:1:0"
expect_eq "datagen leaf: config.yaml's workflow reads as a datagen" \
    "$("$PY" -c "import sys, yaml; w = yaml.safe_load(open(sys.argv[1]))['workload']['workflow']; print(w.get('generate_data'), w.get('train'))" "$dleaf/dlio_config/config.yaml")" \
    "True False"

# 2. run, the ranks starting 1.5 s after mlpstorage named the leaf
# a second leaf name for certain (leaves are named to the second): the next second
s0=$(date +%s); while [ "$(date +%s)" = "$s0" ]; do sleep 0.02; done
if [ $v = 2 ]; then
    PATH="$PWD/slowmpi:$PATH" "$MLPS" training run --model unet3d --accelerator-type h100 --num-accelerators 2 \
        --client-host-memory-in-gb 1 --checkpoint-folder "$PWD/ckpt" "${common[@]}" \
        --params "${params[@]}" train.epochs=1 train.computation_time=0.001 >run.out 2>&1
else
    PATH="$PWD/slowmpi:$PATH" mlps3 open training unet3d run file --accelerator-type b200 --num-accelerators 2 \
        --client-host-memory-in-gb 1 "${common[@]}" --systemname sut --allow-invalid-params \
        --params "${params[@]}" train.epochs=1 train.computation_time=0.001 >run.out 2>&1
fi
expect_eq "mlpstorage training run: exit 0" "$?" 0
rleaf=$(find res -type d -path '*/training/unet3d/run/*' -name '[0-9]*_[0-9]*')
expect_eq "run: one leaf" "$(echo "$rleaf" | grep -c .)" 1
r=$(basename "$rleaf")
expect_eq "run: shardbench started 1 s or more after the second mlpstorage named the leaf by (the slow launch)" \
    "$(q shardbench.db "SELECT CAST(started_at AS INTEGER) - CAST(strftime('%s', '${r:0:4}-${r:4:2}-${r:6:2} ${r:9:2}:${r:11:2}:${r:13:2}', 'utc') AS INTEGER) >= 1 FROM runs WHERE kind = 'train'")" 1
expect_eq "run leaf: one metadata file, mlpstorage's; DLIO's statistics of 2 ranks" \
    "$(ls "$rleaf" | grep -c '_metadata\.json$'):$(ls "$rleaf" | grep -c "^training_${r}_metadata\.json$"):$(ls "$rleaf" | grep -c -e '^summary.json$' -e '^[01]_output.json$' -e '^[01]_per_epoch_stats.json$')" \
    "1:1:5"
expect_eq "run: summary.json of 2 accelerators, 1 epoch" \
    "$("$PY" -c "import json, sys; s = json.load(open(sys.argv[1])); print(s['num_accelerators'], s['epochs'], len(s['metric']['train_au_percentage']))" "$rleaf/summary.json")" \
    "2 1 1"

# 3. reportgen, and its walk of the results directory
if [ $v = 2 ]; then
    "$MLPS" reports reportgen --results-dir "$PWD/res" >rg.out 2>&1
else
    "$MLPS" reports reportgen --results-dir "$PWD/res" --systemname sut >rg.out 2>&1
fi
expect_eq "mlpstorage reports reportgen: exit 0" "$?" 0
expect_eq "reportgen skipped no leaf (multiple metadata files)" "$(grep -ci 'multiple metadata' rg.out)" 0
want=$([ $v = 2 ] && echo "run_benchmark" || echo "datagen run")
expect_eq "reportgen's walk (get_runs_files) finds every leaf it reads, by its command" \
    "$("$PY" - "$PWD/res" <<'PY'
import sys
try:
    from mlpstorage_py.rules import get_runs_files
except ImportError:
    from mlpstorage.rules import get_runs_files
print(" ".join(sorted(str(x.command) for x in get_runs_files(sys.argv[1]))))
PY
)" "$want"
if [ $v = 3 ]; then
    expect_eq "reportgen's results.json: one row a leaf, by its command" \
        "$("$PY" -c "import json, sys; print(' '.join(sorted(r['command'] for r in json.load(open(sys.argv[1])))))" \
            "$PWD/res/open/acme/results/sut/results.json")" "datagen run"
fi

finish
