#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the
# default benchmark (the quickstart preset: local workers, a small dataset
# generated under ./shardbench-data on first use). Arguments go to
# `shardbench run`, e.g. ./run.sh --local 2 train.epochs=5
# It builds without the tests (-Dtests=disabled: they need Check, which
# deploy/install-deps.sh installs only with --tests; tests/run.sh turns them
# on in the same build/). The output of meson is kept in a log file and
# shown when a step fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build="$here/build"
"$here/deploy/install-deps.sh" || { echo "run.sh: deploy/install-deps.sh failed (see above)" >&2; exit 1; }

log=$(mktemp "${TMPDIR:-/tmp}/shardbench-run.XXXXXX.log")
# step NAME COMMAND...: run COMMAND with its output in $log; on failure show
# the end of that output and where the rest is
step() {
    local name=$1
    shift
    if ! "$@" >"$log" 2>&1; then
        echo "run.sh: $name failed: $*" >&2
        echo "run.sh: last 60 lines of its output (all of it in $log):" >&2
        tail -n 60 "$log" >&2
        exit 1
    fi
}
# build.ninja is missing before the first setup, and after one that failed
if [ ! -f "$build/build.ninja" ]; then
    step "meson setup" meson setup "$build" "$here" --buildtype=release -Dtests=disabled
fi
step "meson compile" meson compile -C "$build"
rm -f "$log"
exec "$build/coordinator/shardbench" run "$@"
