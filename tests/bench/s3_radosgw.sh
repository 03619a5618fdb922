#!/usr/bin/env bash
# GET throughput of shardbench's S3 engine (s3_get_bench, the client every
# rank reads with) against Ceph's radosgw on loopback (tests/s3/radosgw.sh:
# one monitor, one memstore OSD, one gateway), side by side in one run with
# `curl -Z --parallel-max N --aws-sigv4` on the same objects. Unlike
# s3_get.sh (nginx, which ignores the signature and serves files with
# sendfile), every request here is signed and checked, and radosgw reads
# the object from its OSD: the whole S3 data path of a real server.
#
# Wall clock is noisy on a shared machine, so each run also records CPU
# time: the client's (user + system, getrusage) and the server's
# (radosgw + ceph-osd, from /proc/PID/stat before and after).
# usage: tests/bench/s3_radosgw.sh [BUILD_DIR]   (default: build)
# env:   CONCURRENCY (16), ROUNDS (3), N_1M (128), N_64K (1024), REPEAT (4):
#        each run reads every object REPEAT times
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
bench=$build/tests/bench/s3_get_bench
[ -x "$bench" ] || { echo "build first: $bench missing" >&2; exit 1; }
. "$here/tests/s3/radosgw.sh"
conc=${CONCURRENCY:-16}
rounds=${ROUNDS:-3}
n1m=${N_1M:-128}
n64k=${N_64K:-1024}
repeat=${REPEAT:-4}

work=$(mktemp -d "${TMPDIR:-/tmp}/sb-rgwbench.XXXXXX")
trap 'radosgw_stop; rm -rf "$work"' EXIT
radosgw_install
# the objects live in the OSD's memory: room for them and rgw's own
RADOSGW_MEMSTORE_BYTES=$(((n1m * 1048576 + n64k * 65536) * 3 / 2 + 268435456)) radosgw_start "$work/ceph" bucket
radosgw_env
set -- $RADOSGW_PIDS
osd_pid=$2
rgw_pid=$3

# the objects: random bytes, uploaded by curl in parallel
mkdir -p "$work/src"
head -c 1048576 /dev/urandom >"$work/src/1m"
head -c 65536 /dev/urandom >"$work/src/64k"
auth=(--aws-sigv4 "aws:amz:$RADOSGW_REGION:s3" -u "$RADOSGW_ACCESS_KEY:$RADOSGW_SECRET_KEY")
for size in 1m 64k; do
    count=$([ $size = 1m ] && echo "$n1m" || echo "$n64k")
    seq -f "$size/obj-%05g" 0 $((count - 1)) >"$work/keys-$size"
    sed "s|^\(.*\)$|upload-file = \"$work/src/$size\"\nurl = \"$RADOSGW_ENDPOINT/bucket/\1\"\noutput = \"/dev/null\"|" \
        "$work/keys-$size" >"$work/put-$size.cfg"
    curl -s --no-progress-meter --fail -Z --parallel-max 8 -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "${auth[@]}" -K "$work/put-$size.cfg" \
        || { echo "uploading the $size objects to radosgw failed" >&2; exit 1; }
    for _ in $(seq 1 "$repeat"); do
        sed "s|^\(.*\)$|url = \"$RADOSGW_ENDPOINT/bucket/\1\"\noutput = \"/dev/null\"|" "$work/keys-$size"
    done >"$work/get-$size.cfg"
done
[ "$(radosgw_list "$RADOSGW_ENDPOINT" bucket | wc -l)" = $((n1m + n64k)) ] \
    || { echo "radosgw does not list the $((n1m + n64k)) objects" >&2; exit 1; }

# server CPU seconds so far: radosgw and ceph-osd, user + system
server_cpu () {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); split($0, f, " "); t += f[12] + f[13] } END { printf "%.2f", t / hz }' \
        "/proc/$rgw_pid/stat" "/proc/$osd_pid/stat"
}

# measure NAME CMD...: wall s, client CPU s (user + system of CMD, from
# getrusage: exact where /usr/bin/time rounds to 10 ms), server CPU s
measure () {
    local name="$1" s0 s1 m
    shift
    s0=$(server_cpu)
    m=$(python3 -c '
import resource, subprocess, sys, time
t = time.perf_counter()
with open(sys.argv[1], "w") as out, open(sys.argv[2], "w") as err:
    rc = subprocess.call(sys.argv[3:], stdout=out, stderr=err)
w = time.perf_counter() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.4f %.4f" % (w, r.ru_utime + r.ru_stime))
sys.exit(rc)' "$work/out" "$work/err" "$@") || { echo "$name failed:" >&2; cat "$work/err" "$work/out" >&2; exit 1; }
    s1=$(server_cpu)
    echo "$m $(python3 -c "print(f'{$s1 - $s0:.2f}')")"
}

echo "machine: $(nproc) cores ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
echo "radosgw $(radosgw --version | awk '{print $3}') (beast, memstore OSD), $(curl --version | head -1 | cut -d' ' -f1-2), concurrency $conc, $rounds rounds (best wall, least CPU of each)"
printf '| reads | client | MB/s (wall) | req/s (wall) | client CPU s | client CPU us/req | server CPU s | server CPU us/req |\n|---|---|---|---|---|---|---|---|\n'
for size in 1m 64k; do
    bytes=$([ $size = 1m ] && echo 1048576 || echo 65536)
    count=$([ $size = 1m ] && echo "$n1m" || echo "$n64k")
    best_c="" best_r="" best_s=""
    for _ in $(seq 1 "$rounds"); do
        c=$(measure curl curl -s --no-progress-meter --fail -Z --parallel-max "$conc" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "${auth[@]}" -K "$work/get-$size.cfg")
        # shardbench asks every GET with a Range (the bytes it wants, here the
        # whole object): curl the same way, to tell the Range's cost from the client's
        r=$(measure curl-range curl -s --no-progress-meter --fail -Z --parallel-max "$conc" -r "0-$((bytes - 1))" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "${auth[@]}" -K "$work/get-$size.cfg")
        s=$(measure shardbench "$bench" --endpoint "$RADOSGW_ENDPOINT" --bucket bucket --keys "$work/keys-$size" \
                      --size "$bytes" --concurrency "$conc" --repeat "$repeat")
        [ "$(awk '{print $4}' "$work/out")" = $((repeat * count * bytes)) ] || { echo "byte count wrong: $(cat "$work/out")" >&2; exit 1; }
        best_c=$(python3 -c "a='$best_c'.split(); b='$c'.split(); print(' '.join(b) if not a else ' '.join(str(min(float(x), float(y))) for x, y in zip(a, b)))")
        best_r=$(python3 -c "a='$best_r'.split(); b='$r'.split(); print(' '.join(b) if not a else ' '.join(str(min(float(x), float(y))) for x, y in zip(a, b)))")
        best_s=$(python3 -c "a='$best_s'.split(); b='$s'.split(); print(' '.join(b) if not a else ' '.join(str(min(float(x), float(y))) for x, y in zip(a, b)))")
    done
    for who in "curl -Z" "curl -Z -r 0-$((bytes - 1))" shardbench; do
        case "$who" in "curl -Z") m=$best_c ;; shardbench) m=$best_s ;; *) m=$best_r ;; esac
        python3 -c "
w, c, s = map(float, '$m'.split())
n = $repeat * $count
print(f'| $repeat x $count x $size | $who | {n * $bytes / 1e6 / w:.1f} | {n / w:.0f} | {c:.3f} | {c / n * 1e6:.0f} | {s:.2f} | {s / n * 1e6:.0f} |')"
    done
done
for p in $RADOSGW_PIDS; do
    echo "peak RSS $(tr '\0' ' ' <"/proc/$p/cmdline" | awk '{print $1}'): $(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' "/proc/$p/status")"
done
