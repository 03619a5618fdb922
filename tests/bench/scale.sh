#!/usr/bin/env bash
# Scale: catalog listing rate, flat worker memory, coordinator memory and
# throughput, and step-barrier round trips with many workers, all over
# synthetic:// (no I/O: the storage is never the bottleneck, shardbench is).
#
# usage: tests/bench/scale.sh [BUILD_DIR]          (default: build)
# env:   BIG (10000000) objects for the large runs, WITH_50M=1 to also list 50M,
#        BARRIER_WORKERS ("8 64")
# Peak RSS comes from /usr/bin/time (GNU time, Debian package `time`); each
# worker is started through a wrapper that runs it under /usr/bin/time.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
sb=$build/coordinator/shardbench
worker=$build/worker/shardbench-worker
[ -x "$sb" ] && [ -x "$worker" ] || { echo "build first: $sb" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "GNU time missing: apt-get install time" >&2; exit 1; }
big=${BIG:-10000000}
barrier_workers=${BARRIER_WORKERS:-"8 64"}

work=$(mktemp -d "${TMPDIR:-/tmp}/sb-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat >"$work/worker.sh" <<WRAP
#!/bin/sh
exec /usr/bin/time -f "%M" -o "$work/rss/worker.\$\$" "$worker" "\$@"
WRAP
chmod +x "$work/worker.sh"
export SHARDBENCH_WORKER="$work/worker.sh"
mkdir -p "$work/rss"

q () { sqlite3 -batch -noheader "$1" "$2"; }
mib () { python3 -c "print(f'{$1/1024:.1f}')"; }
workers_rss () { cat "$work"/rss/worker.* | sort -n | tail -1; rm -f "$work"/rss/worker.*; }
syn="dataset.data_folder=synthetic://scale dataset.record_length_bytes=131072 dataset.record_length_bytes_stdev=0
     reader.sample_shuffle=seed train.computation_time=0 reader.batch_size=32"

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
echo
echo "## Catalog listing from synthetic:// into SQLite"
echo
echo "| objects | list s | objects/s | reuse s | coordinator peak RSS MiB | database MiB |"
echo "|---|---|---|---|---|---|"
sizes="1000000 $big"
[ "${WITH_50M:-0}" = 1 ] && sizes="$sizes 50000000"
for n in $sizes; do
    db=$work/cat-$n.db
    /usr/bin/time -f "%e %M" -o "$work/time" "$sb" catalog $syn dataset.num_files_train=$n --db "$db" >"$work/out" 2>/dev/null
    read -r _ rss <"$work/time"
    list_s=$(q "$db" "SELECT list_s FROM catalogs ORDER BY id DESC LIMIT 1")
    /usr/bin/time -f "%e" -o "$work/time2" "$sb" catalog $syn dataset.num_files_train=$n --db "$db" >"$work/out2" 2>/dev/null
    grep -q reused "$work/out2" || { echo "catalog was not reused" >&2; exit 1; }
    printf '| %s | %.2f | %.0f | %s | %s | %s |\n' "$n" "$list_s" "$(python3 -c "print($n/$list_s)")" "$(cat "$work/time2")" \
        "$(mib "$rss")" "$(( $(stat -c %s "$db") / 1048576 ))"
    [ "$n" = 50000000 ] && rm -f "$db"*
done

echo
echo "## One epoch over synthetic:// (8 ranks, batch 32, sample shuffle, computation_time 0)"
echo
echo "| objects | workers x ranks | catalog s | plan s | epoch s | samples/s | coordinator peak RSS MiB | worker peak RSS MiB |"
echo "|---|---|---|---|---|---|---|---|"
run () {    # N WORKERS
    local n=$1 w=$2 db=$work/cat-$1.db
    [ -f "$db" ] || db=$work/run-$1.db
    /usr/bin/time -f "%e %M" -o "$work/time" "$sb" run $syn dataset.num_files_train="$n" train.epochs=1 \
        --accelerators 8 --local "$w" --db "$db" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    read -r _ rss <"$work/time"
    local id
    id=$(q "$db" "SELECT max(id) FROM runs")
    printf '| %s | %s x %s | %s | %s | %.2f | %.0f | %s | %s |\n' "$n" "$w" "$((8 / w))" \
        "$(grep -q 'catalog .* reused' "$work/err" && echo reused || q "$db" "SELECT printf('%.2f', list_s) FROM catalogs ORDER BY id DESC LIMIT 1")" \
        "$(grep -o 'planned in [0-9.]* s' "$work/err" | awk '{print $3}')" \
        "$(q "$db" "SELECT duration_s FROM epochs WHERE run_id = $id")" "$(q "$db" "SELECT samples_per_s FROM epochs WHERE run_id = $id")" \
        "$(mib "$rss")" "$(mib "$(workers_rss)")"
}
run 100000 1
run "$big" 1
run 1000000 2
run "$big" 2

echo
echo "## Step barriers: N workers x 1 rank, 3 epochs (20 steps of 32 per rank and epoch)"
echo
echo "| workers | epoch s (mean) | barrier round trip p50 ms | p99 ms | coordinator peak RSS MiB |"
echo "|---|---|---|---|---|"
for w in $barrier_workers; do
    db=$work/barrier-$w.db
    /usr/bin/time -f "%e %M" -o "$work/time" "$sb" run $syn dataset.num_files_train=$((w * 32 * 20)) train.epochs=3 \
        --accelerators "$w" --local "$w" --join-timeout 120 --db "$db" >"$work/out" 2>"$work/err" || { tail "$work/err" >&2; exit 1; }
    read -r _ rss <"$work/time"
    id=$(q "$db" "SELECT max(id) FROM runs")
    [ "$(q "$db" "SELECT status, count(*) FROM runs r JOIN epochs e ON e.run_id = r.id WHERE r.id = $id")" = "succeeded|3" ] \
        || { echo "barrier run with $w workers did not finish 3 epochs" >&2; exit 1; }
    printf '| %s | %.3f | %s | %s | %s |\n' "$w" "$(q "$db" "SELECT avg(duration_s) FROM epochs WHERE run_id = $id")" \
        "$(q "$db" "SELECT printf('%.3f', avg(barrier_p50_ms)) FROM epochs WHERE run_id = $id")" \
        "$(q "$db" "SELECT printf('%.3f', max(barrier_p99_ms)) FROM epochs WHERE run_id = $id")" "$(mib "$rss")"
    rm -f "$work"/rss/worker.*
done
