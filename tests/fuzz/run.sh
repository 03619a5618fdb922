#!/usr/bin/env bash
# Build the libFuzzer targets with ASan + UBSan and run each for a bounded
# time over a seed corpus. Exits 1 when a target finds a crash, a leak or
# undefined behaviour (the reproducer is left in $FUZZ_WORK/NAME-artifacts/).
#
# usage: tests/fuzz/run.sh [TARGET ...]        (targets: proto config; default both)
# env:   FUZZ_SECONDS  seconds per target (default 60)
#        FUZZ_BUILD    build directory (default ${TMPDIR:-/tmp}/shardbench-build-fuzz)
#        FUZZ_WORK     corpus and artifacts (default ${TMPDIR:-/tmp}/shardbench-fuzz)
#        FUZZ_JOBS     parallel fuzzing processes per target (default 1)
#        CC            a clang (default clang)
set -uo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD:-${TMPDIR:-/tmp}/shardbench-build-fuzz}
work=${FUZZ_WORK:-${TMPDIR:-/tmp}/shardbench-fuzz}
jobs=${FUZZ_JOBS:-1}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(proto config)

if [ ! -f "$build/build.ninja" ]; then
    CC=${CC:-clang} meson setup "$build" "$src" -Dfuzz=true -Dtests=enabled \
        -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debugoptimized >/dev/null || exit 2
fi
meson compile -C "$build" tests/fuzz/fuzz_proto tests/fuzz/fuzz_config tests/fuzz/make_seeds >/dev/null || exit 2

# Seeds: one valid frame per message type; the YAML presets and test workloads.
mkdir -p "$work/seeds-proto" "$work/seeds-config"
"$build/tests/fuzz/make_seeds" "$work/seeds-proto" >/dev/null || exit 2
cp "$src"/coordinator/workloads/*.yaml "$work/seeds-config/"
cp "$src"/tests/fuzz/seeds-config/*.yaml "$work/seeds-config/" 2>/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
cd "$work" || exit 2
# fuzz_target T: fuzz T for the given time; status 1 on a finding
fuzz_target () {
    local t=$1 rc corpus artifacts par dict
    corpus="$work/corpus-$t"
    artifacts="$work/$t-artifacts/"
    mkdir -p "$corpus" "$artifacts"
    par=()
    [ "$jobs" -gt 1 ] && par=(-jobs="$jobs" -workers="$jobs")   # output then goes to $work/fuzz-N.log
    dict=()
    [ -f "$src/tests/fuzz/$t.dict" ] && dict=(-dict="$src/tests/fuzz/$t.dict")
    echo "fuzz_$t: ${seconds} s, corpus $corpus" >&2
    # new inputs go to the first folder only: seeds and regressions stay as they are
    "$build/tests/fuzz/fuzz_$t" "$corpus" "$work/seeds-$t" "$src/tests/fuzz/regressions/$t" "${dict[@]}" \
        -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "${par[@]}" \
        -artifact_prefix="$artifacts" >"$work/$t.log" 2>&1
    rc=$?
    grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' \
        "$work/$t.log" 2>/dev/null | sort -u | sed "s|^|fuzz_$t: |" >&2
    if [ $rc -ne 0 ]; then
        echo "fuzz_$t: FAILED (exit $rc): see $work/$t.log and $artifacts" >&2
        grep -E 'ERROR|SUMMARY|runtime error' "$work/$t.log" | head -5 >&2
        return 1
    fi
    return 0
}
# The targets fuzz side by side where there is a core for each of their
# processes (each still for the whole time, with a core of its own), else
# one after the other.
status=0
if [ "$(nproc)" -ge $((${#targets[@]} * jobs)) ]; then
    pids=()
    for t in "${targets[@]}"; do
        fuzz_target "$t" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do
        wait "$p" || status=1
    done
else
    for t in "${targets[@]}"; do
        fuzz_target "$t" || status=1
    done
fi
exit $status
