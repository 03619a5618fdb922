#!/usr/bin/env bash
# The live status's cost at scale: one synthetic run of HOSTS workers (each
# started as on its own host, --host hNNN, one rank each) and EPOCHS epochs,
# three ways side by side: --progress off, --progress plain (a line a
# second, the silence check 4 times a second), and plain with --metrics
# scraped by curl as fast as it answers. Prints the coordinator's CPU time
# (user + sys, GNU time: load does not move it much), its peak RSS, the wall
# time, the summary's lines and the scrapes served.
#
# usage: tests/bench/live_status.sh [BUILD_DIR]     env: HOSTS (256), EPOCHS (5)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
sb=$build/coordinator/shardbench
worker=$build/worker/shardbench-worker
[ -x "$sb" ] && [ -x "$worker" ] || { echo "build first: $sb" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "GNU time missing: apt-get install time" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl missing" >&2; exit 1; }
hosts=${HOSTS:-256}
epochs=${EPOCHS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/sb-live.XXXXXX")
scraper=
cleanup () { [ -n "$scraper" ] && kill "$scraper" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
syn="storage.storage_type=synthetic dataset.data_folder=synthetic://live dataset.num_files_train=$((hosts * 40))
     dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 reader.batch_size=2
     train.sync=step train.epochs=$epochs train.computation_time=0.02 shardbench.heartbeat_timeout_s=60"

# one_run NAME OPTION...: the run, its workers beside the coordinator (not under its time)
one_run () {
    local name=$1
    shift
    rm -f "$name.err"
    # shellcheck disable=SC2086
    /usr/bin/time -f "%U %S %e %M" -o "$name.time" "$sb" run quickstart $syn --accelerators "$hosts" \
        --workers "$hosts" --bind 'tcp://127.0.0.1:*' --db "$name.db" --join-timeout 240 "$@" \
        >"$name.out" 2>"$name.err" &
    local coord=$! ep="" i
    for i in $(seq 1 300); do
        ep=$(sed -n 's/.*`shardbench-worker --coordinator \([^ `]*\).*/\1/p' "$name.err" | head -1)
        [ -n "$ep" ] && break
        sleep 0.1
    done
    for i in $(seq 0 $((hosts - 1))); do
        "$worker" --coordinator "$ep" --host "$(printf 'h%03d' "$i")" --timeout 240 2>/dev/null &
    done
    local scrapes=0 url=""
    if [ "$name" = metrics ]; then
        until url=$(sed -n 's/.*metrics: serving \(http:[^ ]*\).*/\1/p' "$name.err" | head -1); [ -n "$url" ]; do
            sleep 0.05
        done
        ( n=0; while kill -0 "$coord" 2>/dev/null; do curl -s -o /dev/null "$url" && n=$((n + 1)); done
          echo "$n" >scrapes ) &
        scraper=$!
    fi
    wait "$coord"
    if [ -n "$scraper" ]; then wait "$scraper" || true; scraper=; scrapes=$(cat scrapes); fi
    wait
    read -r u s e m <"$name.time"
    printf '| %-8s | %6.2f | %7d | %6.1f | %5d | %7s |\n' "$name" "$(echo "$u + $s" | bc)" "$m" "$e" \
        "$(sed -n '/^shardbench train run/,$p' "$name.out" | wc -l)" "$scrapes"
}
echo "coordinator, $hosts hosts x $epochs epochs, synthetic storage ($(nproc) cores)"
echo "| status   | CPU s  | RSS KiB | wall s | lines | scrapes |"
echo "|---|---|---|---|---|---|"
one_run off --progress off
one_run plain --progress plain --progress-interval 1
one_run metrics --progress plain --progress-interval 1 --metrics 127.0.0.1:0
