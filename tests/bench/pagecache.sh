#!/usr/bin/env bash
# What the page-cache checks of the file engine cost (docs/PERFORMANCE.md,
# "Page cache checks"): build/tests/bench/pagecache_bench on files in
# FOLDER (default: build/, which must not be a tmpfs).
# usage: tests/bench/pagecache.sh [FOLDER]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
folder=${1:-$root/build}
bench=$root/build/tests/bench/pagecache_bench
[ -x "$bench" ] || { echo "build first: meson compile -C build" >&2; exit 1; }
case "$(stat -f -c %T "$folder")" in
    tmpfs|ramfs) echo "$folder is a $(stat -f -c %T "$folder"): its pages cannot be evicted; give a disk-backed folder" >&2; exit 1 ;;
esac
echo "Linux $(uname -r), $(nproc) cores, file system $(stat -f -c %T "$folder")"
"$bench" "$folder"
