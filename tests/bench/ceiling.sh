#!/usr/bin/env bash
# Ceiling: the AU and samples/s shardbench itself allows for every training
# preset, over synthetic:// (no I/O: whatever keeps AU below 100% is the
# emulator's own cost per step and per sample, not the storage's).
#
# usage: tests/bench/ceiling.sh [BUILD_DIR]          (default: build)
# env:   PRESETS   presets to run (default: every training preset but llama3,
#                  whose presets are checkpoint workloads with no training reads)
#        WORKERS   worker counts ("1 2"), ACCELERATORS (8)
#        SECONDS_TARGET  compute seconds per run aimed at (10)
#        MAX_FILES  largest dataset listed (4194304): a 1-sample-per-file preset
#                  whose steps would need more files runs fewer steps
# Each run: train.epochs=1, the preset's batch, compute time, format and
# loader unchanged; dataset.num_files_train sized for the steps wanted
# (ceil(SECONDS_TARGET / computation_time), at most 30000, at least 8), and
# train.total_training_steps set to those steps. The table says what ran.
# AU % is shardbench's (compute after the first step over the time after it,
# mean over ranks); DLIO AU % is DLIO's metric window's. Both are wall-clock
# figures: on a loaded host they come out low. Worker CPU is user + system
# seconds of every worker process (GNU time, Debian package `time`), which
# load does not inflate: per step and worker, set against the compute of a
# step, it says whether the worker's own work could hold a step back (it
# includes setup and the epoch's sampler preparation, O(dataset): most of it
# for runs of few steps over many files).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
sb=$build/coordinator/shardbench
worker=$build/worker/shardbench-worker
[ -x "$sb" ] && [ -x "$worker" ] || { echo "build first: $sb" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "GNU time missing: apt-get install time" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 missing: apt-get install sqlite3" >&2; exit 1; }
acc=${ACCELERATORS:-8}
workers=${WORKERS:-"1 2"}
target=${SECONDS_TARGET:-10}
max_files=${MAX_FILES:-4194304}
wl=$here/coordinator/workloads
presets=${PRESETS:-$(cd "$wl" && ls unet3d_*.yaml retinanet_*.yaml resnet50_*.yaml flux_*.yaml dlrm_*.yaml cosmoflow_*.yaml \
    | sed 's/\.yaml$//')}

work=$(mktemp -d "${TMPDIR:-/tmp}/sb-ceiling.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/cpu"
cat >"$work/worker.sh" <<WRAP
#!/bin/sh
exec /usr/bin/time -f "%U %S" -o "$work/cpu/worker.\$\$" "$worker" "\$@"
WRAP
chmod +x "$work/worker.sh"
export SHARDBENCH_WORKER="$work/worker.sh"
q () { sqlite3 -batch -noheader "$1" "$2"; }
# key: a scalar of the preset's YAML (the last word of its first line)
key () { awk -v k="$2:" '$1 == k { print $2; exit }' "$wl/$1.yaml"; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)," \
     "load $(cut -d' ' -f1-3 /proc/loadavg), shardbench $("$sb" --version 2>/dev/null | sed -n "s/^build: //p")"
echo
echo "synthetic:// storage, $acc accelerators, train.epochs=1; llama3 presets skipped (checkpoint workloads, no training reads)"
echo
echo "| preset | workers | files | steps/rank | compute s/step | AU % | DLIO AU % | samples/s | epoch s | worker CPU s (all workers, whole run) | that per step and worker, ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for p in $presets; do
    batch=$(key "$p" batch_size)
    spf=$(key "$p" num_samples_per_file)
    compute=$(key "$p" computation_time)
    read -r steps files < <(python3 - "$target" "$compute" "$batch" "$spf" "$acc" "$max_files" <<'PY'
import math, sys
target, compute, batch, spf, acc, max_files = (float(a) for a in sys.argv[1:])
steps = min(30000, max(8, math.ceil(target / compute)))
files = max(acc, math.ceil(steps * acc * batch / spf))
if files > max_files:   # fewer steps: the ones max_files give
    files = max_files
    steps = int(files // acc * spf // batch)
files = int(math.ceil(files / acc) * acc)   # whole files per rank: every rank the same steps
print(int(steps), int(files))
PY
)
    for w in $workers; do
        db=$work/$p-$w.db
        rm -f "$work"/cpu/worker.*
        if ! "$sb" run "$p" dataset.data_folder=synthetic://ceiling dataset.num_files_train="$files" train.epochs=1 \
                train.total_training_steps="$steps" --accelerators "$acc" --local "$w" --db "$db" \
                >"$work/out" 2>"$work/err"; then
            echo "| $p | $w | $files | - | $compute | run failed: $(tail -1 "$work/err" | tr '|' '/') | | | | | |"
            continue
        fi
        id=$(q "$db" "SELECT max(id) FROM runs")
        cpu=$(cat "$work"/cpu/worker.* | awk '{ s += $1 + $2 } END { printf "%.2f", s }')
        q "$db" "SELECT printf('| $p | $w | $files | %d | $compute | %.2f | %.2f | %.0f | %.3f | $cpu | %.3f |', batches,
                 100 * au_mean, train_au_percentage, samples_per_s, duration_s, 1000.0 * $cpu / $w / batches)
                 FROM epochs WHERE run_id = $id AND epoch = 1"
        rm -f "$db"*
    done
done
