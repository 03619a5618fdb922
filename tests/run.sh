#!/usr/bin/env bash
# The README's second command: install what is missing, build, and run every
# test (Check unit suites and integration tests with real processes).
# CI (.ci/run) calls this with CI=true: warnings are errors there, in the gcc
# builds and in the clang build alike.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# took WHAT: the wall time since the last mark, one line (CI's budget is in these)
mark=$SECONDS
took () { echo "tests: time: $1: $((SECONDS - mark)) s"; mark=$SECONDS; }
"$here/deploy/install-deps.sh" --tests --fuzz || exit 1
took "dependencies"

build="$here/build"
werror=false
[ "${CI:-}" = "true" ] && werror=true
if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$here" -Dwerror=$werror -Dtests=enabled || exit 1
else
    meson configure "$build" -Dwerror=$werror -Dtests=enabled || exit 1
fi
meson compile -C "$build" || exit 1
took "gcc build"

# The tests run JOBS at a time (SHARDBENCH_TEST_JOBS, default 4): most
# integration tests wait on processes, servers and timeouts rather than
# compute, so more of them than cores keeps the cores busy. The tests of
# suite `timing` (wall-clock and AU bounds: tests/meson.build) run after
# the others, one at a time with nothing beside them.
jobs=${SHARDBENCH_TEST_JOBS:-4}
# suites BUILD OPTION... -- SELECTION...: the tests of BUILD that SELECTION
# picks, but those of suite `timing`, JOBS at a time; then the `timing` ones
# alone, into their own log (testlog-timing); OPTIONs go to both
suites () {
    local dir=$1 opts=() r=0
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    meson test -C "$dir" --print-errorlogs --num-processes "$jobs" "${opts[@]}" "$@" --no-suite timing || r=1
    meson test -C "$dir" --print-errorlogs --num-processes 1 --no-rebuild --logbase testlog-timing "${opts[@]}" \
        --suite timing || r=1
    return "$r"
}

suites "$build" -- --no-suite fresh
rc=$?
took "gcc tests"
logs=("$build/meson-logs/testlog.json" "$build/meson-logs/testlog-timing.json")

# The same tree built with clang (warnings are errors in CI, as above) and
# its unit suite: code gcc accepts and clang warns about fails here. Compile
# and unit suite only, to keep CI short (a few minutes).
cbuild="$here/build-clang"
if command -v clang >/dev/null; then
    if [ ! -f "$cbuild/build.ninja" ]; then
        CC=clang meson setup "$cbuild" "$here" -Dwerror=$werror -Dtests=enabled || exit 1
    else
        meson configure "$cbuild" -Dwerror=$werror -Dtests=enabled || exit 1
    fi
    echo "tests: the tree built with clang, and its unit suite"
    meson compile -C "$cbuild" || exit 1
    meson test -C "$cbuild" --print-errorlogs --num-processes "$jobs" --suite unit --no-rebuild
    crc=$?
    [ $crc -ne 0 ] && rc=$crc
    logs+=("$cbuild/meson-logs/testlog.json")
    took "clang build and unit tests"
elif [ "${CI:-}" = "true" ]; then
    echo "tests: clang is missing (deploy/install-deps.sh --tests installs it)"
    exit 1
else
    echo "tests: clang is missing (deploy/install-deps.sh --tests): clang pass skipped"
fi

# The same unit and integration suites a second time, built with
# AddressSanitizer and UndefinedBehaviorSanitizer: a memory error, a leak
# or undefined behaviour fails the test that met it. SHARDBENCH_NO_SANITIZE=1
# skips this pass (not in CI).
if [ "${SHARDBENCH_NO_SANITIZE:-}" != 1 ] || [ "${CI:-}" = "true" ]; then
    sbuild="$here/build-sanitize"
    if [ ! -f "$sbuild/build.ninja" ]; then
        meson setup "$sbuild" "$here" -Dwerror=$werror -Dtests=enabled -Db_sanitize=address,undefined \
            -Db_lundef=false || exit 1
    else
        meson configure "$sbuild" -Dwerror=$werror -Dtests=enabled || exit 1
    fi
    meson compile -C "$sbuild" || exit 1
    took "sanitizer build"
    echo "tests: the same suites under AddressSanitizer and UndefinedBehaviorSanitizer"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=23 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=24 \
        suites "$sbuild" --timeout-multiplier 3 -- --suite unit --suite integration
    src=$?
    [ $src -ne 0 ] && rc=$src
    logs+=("$sbuild/meson-logs/testlog.json" "$sbuild/meson-logs/testlog-timing.json")
    took "sanitizer tests"
fi

# The unit suites whose code runs threads (the read path's channel and
# loop, the trainer and readers, the progress sampler, the page cache
# evictor, the catalog's listing streams, the result database's writer, the
# wire, the sampler's planner, the metrics server's thread, a KV-cache
# rank's generator and service threads), built with ThreadSanitizer (clang):
# a data race fails the test that met it. tests/tsan.supp names the libraries not
# built with it (libzmq, libczmq), whose hand-over of a frame TSan cannot
# see. SHARDBENCH_NO_SANITIZE=1 skips this pass too (not in CI).
if { [ "${SHARDBENCH_NO_SANITIZE:-}" != 1 ] || [ "${CI:-}" = "true" ]; } && command -v clang >/dev/null; then
    tbuild="$here/build-tsan"
    if [ ! -f "$tbuild/build.ninja" ]; then
        CC=clang meson setup "$tbuild" "$here" -Dwerror=$werror -Dtests=enabled -Db_sanitize=thread \
            -Db_lundef=false || exit 1
    else
        meson configure "$tbuild" -Dwerror=$werror -Dtests=enabled || exit 1
    fi
    meson compile -C "$tbuild" || exit 1
    echo "tests: the threaded unit suites under ThreadSanitizer"
    threaded=()
    listed=$(meson test -C "$tbuild" --list 2>/dev/null)
    for t in chan event_loop progress uring_engine trainer_fake reader_engines pagecache catalog resultdb ckpt_rank \
             wire sampler_plan openmetrics kv_rank; do
        # uring_engine only where liburing is
        grep -qx "shardbench:unit / $t" <<<"$listed" && threaded+=("$t")
    done
    TSAN_OPTIONS="halt_on_error=1:exitcode=66:suppressions=$here/tests/tsan.supp" \
        meson test -C "$tbuild" --print-errorlogs --num-processes "$jobs" --no-rebuild "${threaded[@]}"
    trc=$?
    [ $trc -ne 0 ] && rc=$trc
    logs+=("$tbuild/meson-logs/testlog.json")
    took "thread sanitizer build and tests"
fi

# The libFuzzer targets (tests/fuzz/, clang): the inputs past runs failed on
# are replayed (meson suite `fuzz`), then each target fuzzes for a bounded
# time, SHARDBENCH_FUZZ_SECONDS per target (default 30; 0 skips the pass).
fuzz_seconds=${SHARDBENCH_FUZZ_SECONDS:-30}
if [ "$fuzz_seconds" -gt 0 ] && command -v clang >/dev/null; then
    fbuild="$here/build-fuzz"
    if [ ! -f "$fbuild/build.ninja" ]; then
        CC=clang meson setup "$fbuild" "$here" -Dfuzz=true -Dtests=enabled -Db_sanitize=address,undefined \
            -Db_lundef=false --buildtype=debugoptimized || exit 1
    fi
    meson compile -C "$fbuild" tests/fuzz/fuzz_proto tests/fuzz/fuzz_config tests/fuzz/make_seeds || exit 1
    meson test -C "$fbuild" --print-errorlogs --suite fuzz --no-rebuild
    frc=$?
    [ $frc -ne 0 ] && rc=$frc
    logs+=("$fbuild/meson-logs/testlog.json")
    fwork=$(mktemp -d "${TMPDIR:-/tmp}/shardbench-fuzz.XXXXXX")
    if FUZZ_SECONDS=$fuzz_seconds FUZZ_BUILD="$fbuild" FUZZ_WORK="$fwork" "$here/tests/fuzz/run.sh"; then
        echo "fuzz: no finding in ${fuzz_seconds} s per target"
        rm -rf "$fwork"
    else
        echo "fuzz: FINDING: reproducers kept in $fwork"
        rc=1
    fi
    took "fuzz build, regressions and fuzzing"
elif [ "$fuzz_seconds" -gt 0 ]; then
    echo "fuzz: clang is missing (deploy/install-deps.sh --fuzz): fuzz pass skipped"
fi

# The README's first command on a fresh Debian 12: ./run.sh in a root made
# with mmdebstrap, in a chroot, as root (tests/fresh/readme_in_chroot.sh,
# suite `fresh`; it downloads from the Debian archive, and its root is cached
# in build/fresh). In CI, or with SHARDBENCH_FRESH_CHECK=1.
if [ "${CI:-}" = "true" ] || [ "${SHARDBENCH_FRESH_CHECK:-}" = 1 ]; then
    rm -f "$build/meson-logs/testlog-fresh.json"
    meson test -C "$build" --print-errorlogs --suite fresh --no-rebuild --logbase testlog-fresh
    frc=$?
    [ $frc -ne 0 ] && rc=$frc
    logs+=("$build/meson-logs/testlog-fresh.json")
    took "fresh Debian 12 root"
fi

# One closing line that CI understands, counted from meson's own logs.
python3 - "${logs[@]}" <<'PY'
import json, os, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    if not os.path.exists(path):
        print(f"tests: no log {path}: counted as a failure")
        failed += 1
        continue
    with open(path) as f:
        for line in f:
            r = json.loads(line).get("result", "")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit $rc
