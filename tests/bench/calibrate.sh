#!/usr/bin/env bash
# Calibrate: shardbench's own overhead. Every preset (but the llama3
# checkpoint presets) on storage_type synthetic (storage infinitely fast),
# all ranks in one worker, then the same ranks on 2 workers (--local 2): AU
# is then what the coordinator, the workers and the barriers leave of the
# compute. Bars: 1 worker >= 99% for every preset and >= 95% for
# dlrm_b200; 2 workers >= 95% and >= 70% for dlrm_b200.
#
# usage: tests/bench/calibrate.sh [BUILD_DIR]      (default: build)
# env:   RANKS (8) accelerators, STEPS (300) steps per run at most, SECONDS_PER_RUN
#        (15) of compute per run at most (the dataset is cut to that many
#        steps: num_files_train), SAMPLER (global: shardbench's; dlio: DLIO's
#        order, the presets' default)
# Prints a markdown table: preset, ranks, workers, AU %, steps, barrier own
# p50 ms, bar, verdict; exits 1 when a run fails or misses its bar.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
sb=$build/coordinator/shardbench
[ -x "$sb" ] && [ -x "$build/worker/shardbench-worker" ] || { echo "build first: $sb" >&2; exit 1; }
ranks=${RANKS:-8}
max_steps=${STEPS:-300}
seconds=${SECONDS_PER_RUN:-15}
sampler=${SAMPLER:-dlio}
work=$(mktemp -d "${TMPDIR:-/tmp}/sb-calibrate.XXXXXX")
trap 'rm -rf "$work"' EXIT
db=$work/cal.db
q () { sqlite3 -batch -noheader "$db" "$1"; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
echo "command: tests/bench/calibrate.sh (RANKS=$ranks STEPS=$max_steps SECONDS_PER_RUN=$seconds SAMPLER=$sampler)"
echo
echo "| preset | ranks | workers | AU % | steps | barrier own p50 ms | bar % | |"
echo "|---|---|---|---|---|---|---|---|"
status=0
for yaml in "$here"/coordinator/workloads/*.yaml; do
    preset=$(basename "$yaml" .yaml)
    case $preset in llama3_*) continue ;; esac
    spf=$(awk '/num_samples_per_file:/ {print $2}' "$yaml")
    batch=$(awk '/batch_size:/ {print $2; exit}' "$yaml")
    spf=${spf:-1}
    batch=${batch:-1}
    ct=$(awk '/computation_time:/ {print $2; exit}' "$yaml")
    steps=$(python3 -c "print(max(20, min($max_steps, int($seconds / ${ct:-0.01}))))")
    files=$(( (steps * batch * ranks + spf - 1) / spf ))
    [ "$files" -ge "$ranks" ] || files=$ranks
    for workers in 1 2; do
        if [ "$workers" = 1 ]; then bar=99; [ "$preset" = dlrm_b200 ] && bar=95; else bar=95; [ "$preset" = dlrm_b200 ] && bar=70; fi
        if ! "$sb" run "$preset" storage.storage_type=synthetic dataset.data_folder="synthetic://cal-$preset" \
                dataset.num_files_train="$files" train.epochs=1 shardbench.sampler="$sampler" \
                --accelerators "$ranks" --local "$workers" --db "$db" --progress off >"$work/out" 2>"$work/err"; then
            echo "| $preset | $ranks | $workers | run failed: $(grep -m1 'error' "$work/err" | cut -c1-120) | | | $bar | FAIL |"
            status=1
            continue
        fi
        id=$(q "SELECT max(id) FROM runs WHERE kind = 'train'")
        au=$(q "SELECT printf('%.2f', 100 * au_mean) FROM epochs WHERE run_id = $id")
        st=$(q "SELECT batches FROM epochs WHERE run_id = $id")
        own=$(q "SELECT ifnull(printf('%.3f', barrier_own_p50_ms), '-') FROM epochs WHERE run_id = $id")
        verdict=ok
        python3 -c "import sys; sys.exit(0 if $au >= $bar else 1)" || { verdict=FAIL; status=1; }
        echo "| $preset | $ranks | $workers | $au | $st | $own | $bar | $verdict |"
    done
done
exit $status
