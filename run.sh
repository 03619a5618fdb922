#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the
# default benchmark (the quickstart preset: local workers, a small dataset
# generated under ./shardbench-data on first use). Arguments go to
# `shardbench run`, e.g. ./run.sh --local 2 train.epochs=5
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/deploy/install-deps.sh"
if [ ! -f "$here/build/build.ninja" ]; then
    meson setup "$here/build" "$here" --buildtype=release >/dev/null
fi
meson compile -C "$here/build" >/dev/null
exec "$here/build/coordinator/shardbench" run "$@"
