#!/usr/bin/env bash
# Scale: catalog listing rate and bytes per object, derived-name runs of a
# billion objects, flat worker memory, coordinator memory and throughput,
# S3 listing against a fake server, the file_shuffle path's memory, and
# step-barrier round trips with many workers, over synthetic:// (no I/O:
# the storage is never the bottleneck, shardbench is).
#
# usage: tests/bench/scale.sh [BUILD_DIR]          (default: build)
# env:   BIG (10000000) objects for the large runs, WITH_50M=1 to also list
#        50M from synthetic://, BARRIER_WORKERS ("8 64"),
#        DERIVED (1000000000) objects of the derived-name runs and
#        DERIVED_STEPS (2000000) steps of 32 x 8 ranks they read (about a
#        minute or two; the figure is the time to the first step),
#        LIST_N (50000000) objects of the fake S3 bucket (0: no S3 listing),
#        LIST_PARALLELISM (4) listing streams, LIST_SPREAD (0) sizes of
#        131072 + 0..LIST_SPREAD (0: one size, so the catalog stores no row),
#        SHUFFLE=1 to measure reader.file_shuffle=seed runs of SHUFFLE_SIZES
#        ("100000 1000000 10000000 100000000") objects,
#        ONLY (all) a space-separated subset of: listing bytes derived s3
#        epoch shuffle barrier
# Peak RSS comes from /usr/bin/time (GNU time, Debian package `time`). A
# process's %M covers the children it waited for, so the coordinator is run
# with --workers and its workers started beside it (not under it), each
# under a /usr/bin/time of its own: the figures are the coordinator's own
# and the largest worker's. Times are wall clock (noisy on a shared machine);
# RSS and database bytes are not.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
sb=$build/coordinator/shardbench
worker=$build/worker/shardbench-worker
[ -x "$sb" ] && [ -x "$worker" ] || { echo "build first: $sb" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "GNU time missing: apt-get install time" >&2; exit 1; }
big=${BIG:-10000000}
barrier_workers=${BARRIER_WORKERS:-"8 64"}
derived=${DERIVED:-1000000000}
derived_steps=${DERIVED_STEPS:-2000000}
list_n=${LIST_N:-50000000}
list_par=${LIST_PARALLELISM:-4}
list_spread=${LIST_SPREAD:-0}
shuffle_sizes=${SHUFFLE_SIZES:-"100000 1000000 10000000 100000000"}
only=${ONLY:-"listing bytes derived s3 epoch shuffle barrier"}
want () { case " $only " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

work=$(mktemp -d "${TMPDIR:-/tmp}/sb-scale.XXXXXX")
fake_pid=
cleanup () {
    [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
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

# split_run DB WORKERS ARGS...: `shardbench run ARGS` waiting for WORKERS
# workers that are started beside it; sets RSS_C, RSS_W (KiB), T0 (epoch
# seconds at the start) and leaves its log in $work/err.
split_run () {
    local db=$1 w=$2 sock=$work/c.sock i
    shift 2
    rm -f "$sock" "$work/time"
    T0=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$work/time" "$sb" run "$@" --workers "$w" --bind "ipc://$sock" --join-timeout 120 \
        --progress off --db "$db" >"$work/out" 2>"$work/err" &
    local cpid=$!
    local wpids=()
    for ((i = 0; i < w; i++)); do
        "$work/worker.sh" --coordinator "ipc://$sock" --timeout 120 >>"$work/werr" 2>&1 &
        wpids+=($!)
    done
    local rc=0
    wait "$cpid" || rc=$?
    for i in "${wpids[@]}"; do wait "$i" || true; done
    [ "$rc" = 0 ] || { tail -20 "$work/err" >&2; exit 1; }
    RSS_C=$(cat "$work/time")
    RSS_W=$(workers_rss)
}
# seconds from T0 to the log line matching $1 (HH:MM:SS.mmm stamps, today)
since_t0 () {
    python3 - "$T0" "$(grep -m1 "$1" "$work/err" | cut -d' ' -f1)" <<'PY'
import sys, time, datetime
t0 = float(sys.argv[1]); stamp = sys.argv[2]
day = datetime.datetime.fromtimestamp(t0).replace(hour=0, minute=0, second=0, microsecond=0)
h, m, s = stamp.split(":")
t = day.timestamp() + int(h) * 3600 + int(m) * 60 + float(s)
print(f"{t - t0:.2f}")
PY
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"

if want listing; then
echo
echo "## Catalog listing from synthetic:// into SQLite (\`shardbench catalog\`: a listing on request); sizes equal"
echo "## (stdev 0: DLIO names of one size, no object row) or drawn (stdev 1024: a row per object)"
echo
echo "| objects | sizes | list s | objects/s | reuse s | coordinator peak RSS MiB | database MiB | database bytes/object |"
echo "|---|---|---|---|---|---|---|---|"
sizes="1000000 $big"
[ "${WITH_50M:-0}" = 1 ] && sizes="$sizes 50000000"
for n in $sizes; do
    for stdev in 0 1024; do
        db=$work/cat-$n-$stdev.db
        /usr/bin/time -f "%e %M" -o "$work/time" "$sb" catalog $syn dataset.num_files_train=$n \
            dataset.record_length_bytes_stdev=$stdev --db "$db" >"$work/out" 2>/dev/null
        read -r _ rss <"$work/time"
        list_s=$(q "$db" "SELECT list_s FROM catalogs ORDER BY id DESC LIMIT 1")
        /usr/bin/time -f "%e" -o "$work/time2" "$sb" catalog $syn dataset.num_files_train=$n \
            dataset.record_length_bytes_stdev=$stdev --db "$db" >"$work/out2" 2>/dev/null
        grep -q reused "$work/out2" || { echo "catalog was not reused" >&2; exit 1; }
        size=$(stat -c %s "$db")
        printf '| %s | %s | %.2f | %.0f | %s | %s | %s | %.1f |\n' "$n" "$([ $stdev = 0 ] && echo equal || echo drawn)" \
            "$list_s" "$(python3 -c "print($n/$list_s)")" "$(cat "$work/time2")" \
            "$(mib "$rss")" "$((size / 1048576))" "$(python3 -c "print($size/$n)")"
        rm -f "$db"*
    done
done
fi

if want bytes; then
echo
echo "## A listed catalog in a run: bytes per object (\`run --relist\` on synthetic:// lists into the catalog and"
echo "## loads its index; the derived run beside it holds none). Sizes equal (stdev 0) or drawn (stdev 1024)."
echo
echo "| objects | sizes | catalog | database MiB | database bytes/object | coordinator peak RSS MiB | coordinator bytes/object over derived |"
echo "|---|---|---|---|---|---|---|"
for n in 1000000 "$big"; do
    for stdev in 0 1024; do
        base=""
        for how in derived listed; do
            db=$work/bytes-$n-$stdev-$how.db
            extra=()
            [ "$how" = listed ] && extra=(--relist)
            split_run "$db" 1 $syn dataset.num_files_train="$n" dataset.record_length_bytes_stdev=$stdev \
                train.epochs=1 train.total_training_steps=10 --accelerators 8 "${extra[@]}"
            size=$(stat -c %s "$db")
            [ -z "$base" ] && base=$RSS_C
            printf '| %s | %s | %s | %s | %.1f | %s | %s |\n' "$n" "$([ $stdev = 0 ] && echo equal || echo drawn)" "$how" \
                "$((size / 1048576))" "$(python3 -c "print($size/$n)")" "$(mib "$RSS_C")" \
                "$([ "$how" = listed ] && python3 -c "print(f'{($RSS_C-$base)*1024/$n:.1f}')" || echo -)"
            rm -f "$db"*
        done
    done
done
fi

if want derived; then
echo
echo "## Derived names: $derived objects, no listing, no catalog rows (synthetic://, and skip_listing), file_shuffle"
echo "## off (DLIO's default), 8 ranks on 1 worker, $derived_steps steps of 32 a rank"
echo
echo "| objects | how | time to first step s | epoch s | samples/s | coordinator peak RSS MiB | worker peak RSS MiB | catalog rows | database KiB |"
echo "|---|---|---|---|---|---|---|---|---|"
for how in synthetic skip_listing; do
    db=$work/derived-$how.db
    extra=()
    [ "$how" = skip_listing ] && extra=(dataset.skip_listing=True)
    split_run "$db" 1 $syn dataset.num_files_train="$derived" train.epochs=1 \
        train.total_training_steps="$derived_steps" --accelerators 8 "${extra[@]}"
    id=$(q "$db" "SELECT max(id) FROM runs")
    printf '| %s | %s | %s | %.2f | %.0f | %s | %s | %s | %s |\n' "$derived" "$how" "$(since_t0 ' training: ')" \
        "$(q "$db" "SELECT duration_s FROM epochs WHERE run_id = $id")" "$(q "$db" "SELECT samples_per_s FROM epochs WHERE run_id = $id")" \
        "$(mib "$RSS_C")" "$(mib "$RSS_W")" "$(q "$db" "SELECT count(*) FROM objects")" "$(( $(stat -c %s "$db") / 1024 ))"
    rm -f "$db"*
done
fi

if want s3 && [ "$list_n" -gt 0 ]; then
echo
echo "## Listing $list_n objects from S3: a fake ListObjectsV2 server on loopback (tests/bench/fake_s3.py, pages"
echo "## of 1000 derived keys, sizes 131072 + 0..$list_spread), \`shardbench catalog\`, $list_par streams"
echo
echo "| objects | pages | list s | objects/s | coordinator CPU s | coordinator peak RSS MiB | database MiB | database bytes/object |"
echo "|---|---|---|---|---|---|---|---|"
python3 "$here/tests/bench/fake_s3.py" --bucket scale --prefix bench/ --objects "$list_n" --size 131072 --spread "$list_spread" \
    --port-file "$work/port" >"$work/fake.out" 2>"$work/fake.err" &
fake_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { cat "$work/fake.err" >&2; exit 1; }
db=$work/s3.db
AWS_ACCESS_KEY_ID=scale AWS_SECRET_ACCESS_KEY=scale AWS_REGION=us-east-1 \
    /usr/bin/time -f "%U %S %M" -o "$work/time" "$sb" catalog dataset.data_folder=bench dataset.num_files_train="$list_n" \
    dataset.record_length_bytes=131072 storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=scale \
    "storage.storage_options.endpoint_urls=[http://127.0.0.1:$(cat "$work/port")]" \
    storage.storage_options.list_parallelism="$list_par" --db "$db" --progress off >"$work/out" 2>"$work/err" \
    || { cat "$work/err" >&2; exit 1; }
kill "$fake_pid"
wait "$fake_pid" 2>/dev/null || true
fake_pid=
read -r u s rss <"$work/time"
list_s=$(q "$db" "SELECT list_s FROM catalogs ORDER BY id DESC LIMIT 1")
[ "$(q "$db" "SELECT count FROM catalogs ORDER BY id DESC LIMIT 1")" = "$list_n" ] || { echo "listed a wrong count" >&2; exit 1; }
grep -q ' 0 unexpected requests' "$work/fake.err" || { cat "$work/fake.err" >&2; exit 1; }
size=$(stat -c %s "$db")
printf '| %s | %s | %.2f | %.0f | %.2f | %s | %s | %.1f |\n' "$list_n" "$(grep -o '[0-9]* pages' "$work/fake.err" | cut -d' ' -f1)" \
    "$list_s" "$(python3 -c "print($list_n/$list_s)")" "$(python3 -c "print($u+$s)")" "$(mib "$rss")" \
    "$((size / 1048576))" "$(python3 -c "print($size/$list_n)")"
rm -f "$db"*
fi

if want epoch; then
echo
echo "## One epoch over synthetic:// (8 ranks, batch 32, sample shuffle, computation_time 0; names derived)"
echo
echo "| objects | workers x ranks | plan s | epoch s | samples/s | coordinator peak RSS MiB | worker peak RSS MiB |"
echo "|---|---|---|---|---|---|---|"
run () {    # N WORKERS
    local n=$1 w=$2 db=$work/run-$1-$2.db
    split_run "$db" "$w" $syn dataset.num_files_train="$n" train.epochs=1 --accelerators 8
    local id
    id=$(q "$db" "SELECT max(id) FROM runs")
    printf '| %s | %s x %s | %s | %.2f | %.0f | %s | %s |\n' "$n" "$w" "$((8 / w))" \
        "$(grep -o 'planned in [0-9.]* s' "$work/err" | awk '{print $3}')" \
        "$(q "$db" "SELECT duration_s FROM epochs WHERE run_id = $id")" "$(q "$db" "SELECT samples_per_s FROM epochs WHERE run_id = $id")" \
        "$(mib "$RSS_C")" "$(mib "$RSS_W")"
    rm -f "$db"*
}
run 100000 1
run "$big" 1
run 1000000 2
run "$big" 2
fi

if want shuffle && [ "${SHUFFLE:-0}" = 1 ]; then
echo
echo "## reader.file_shuffle=seed (the presets' setting): peak RSS, 8 ranks on 1 worker, 100 steps of 32 a rank"
echo
echo "| objects | plan s | coordinator peak RSS MiB | worker peak RSS MiB |"
echo "|---|---|---|---|"
for n in $shuffle_sizes; do
    db=$work/shuffle-$n.db
    split_run "$db" 1 $syn reader.file_shuffle=seed dataset.num_files_train="$n" train.epochs=1 \
        train.total_training_steps=100 --accelerators 8
    printf '| %s | %s | %s | %s |\n' "$n" "$(grep -o 'planned in [0-9.]* s' "$work/err" | awk '{print $3}')" \
        "$(mib "$RSS_C")" "$(mib "$RSS_W")"
    rm -f "$db"*
done
fi

if want barrier; then
echo
echo "## Step barriers: N workers x 1 rank, 3 epochs (20 steps of 32 per rank and epoch)"
echo
echo "| workers | epoch s (mean) | barrier round trip p50 ms | p99 ms | coordinator peak RSS MiB |"
echo "|---|---|---|---|---|"
for w in $barrier_workers; do
    db=$work/barrier-$w.db
    split_run "$db" "$w" $syn dataset.num_files_train=$((w * 32 * 20)) train.epochs=3 --accelerators "$w"
    id=$(q "$db" "SELECT max(id) FROM runs")
    [ "$(q "$db" "SELECT status, count(*) FROM runs r JOIN epochs e ON e.run_id = r.id WHERE r.id = $id")" = "succeeded|3" ] \
        || { echo "barrier run with $w workers did not finish 3 epochs" >&2; exit 1; }
    printf '| %s | %.3f | %s | %s | %s |\n' "$w" "$(q "$db" "SELECT avg(duration_s) FROM epochs WHERE run_id = $id")" \
        "$(q "$db" "SELECT printf('%.3f', avg(barrier_p50_ms)) FROM epochs WHERE run_id = $id")" \
        "$(q "$db" "SELECT printf('%.3f', max(barrier_p99_ms)) FROM epochs WHERE run_id = $id")" "$(mib "$RSS_C")"
    rm -f "$db"*
done
fi
