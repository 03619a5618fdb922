#!/usr/bin/env bash
# GET throughput of shardbench's S3 engine against nginx on loopback, side by
# side in one run with `curl -Z --parallel-max N` on the same objects.
#
# nginx (Debian nginx-light, sendfile) serves the object files as
# /BUCKET/KEY; it ignores the SigV4 headers, so both clients measure the
# HTTP data path alone. Two object sizes: 1 MiB and 64 KiB.
# usage: tests/bench/s3_get.sh [BUILD_DIR]   (default: build)
# env:   CONCURRENCY (16), ROUNDS (3), N_1M (256), N_64K (4096)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
bench=$build/tests/bench/s3_get_bench
[ -x "$bench" ] || { echo "build first: $bench missing" >&2; exit 1; }
command -v nginx >/dev/null || { echo "nginx missing: apt-get install nginx-light" >&2; exit 1; }
conc=${CONCURRENCY:-16}
rounds=${ROUNDS:-3}
n1m=${N_1M:-256}
n64k=${N_64K:-4096}

work=$(mktemp -d "${TMPDIR:-/tmp}/sb-s3bench.XXXXXX")
nginx_pid=""
cleanup () {
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

chmod 755 "$work"   # nginx workers run as an unprivileged user
mkdir -p "$work/www/bucket/1m" "$work/www/bucket/64k" "$work/logs"
head -c $((n1m * 1048576)) /dev/urandom | split -b 1048576 -a 5 -d - "$work/www/bucket/1m/obj-"
head -c $((n64k * 65536)) /dev/urandom | split -b 65536 -a 5 -d - "$work/www/bucket/64k/obj-"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$port;
        root $work/www;
        location / { }
    }
}
CONF
nginx -c "$work/nginx.conf" -p "$work" &
nginx_pid=$!
for _ in $(seq 1 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/bucket/1m/obj-00000" && break
    sleep 0.1
done

export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench   # nginx ignores the signature
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
echo "nginx $(nginx -v 2>&1 | sed 's/.*\///'), $(curl --version | head -1 | cut -d' ' -f1-2), concurrency $conc, best of $rounds rounds"
printf '| objects | client | MB/s | req/s |\n|---|---|---|---|\n'
for size in 1m 64k; do
    bytes=$([ $size = 1m ] && echo 1048576 || echo 65536)
    count=$([ $size = 1m ] && echo "$n1m" || echo "$n64k")
    (cd "$work/www/bucket" && ls $size | sed "s|^|$size/|") >"$work/keys-$size"
    sed "s|^\(.*\)$|url = \"http://127.0.0.1:$port/bucket/\1\"\noutput = \"/dev/null\"|" "$work/keys-$size" >"$work/curl-$size.cfg"
    best_sb=0 best_sb_rps=0 best_curl=0 best_curl_rps=0
    for _ in $(seq 1 "$rounds"); do
        # curl
        t0=$(date +%s.%N)
        curl -s --no-progress-meter --fail -Z --parallel-max "$conc" -K "$work/curl-$size.cfg" 2>/dev/null \
            || { echo "curl failed" >&2; exit 1; }
        t1=$(date +%s.%N)
        mbs=$(python3 -c "print(f'{$count*$bytes/1e6/($t1-$t0):.1f}')")
        rps=$(python3 -c "print(f'{$count/($t1-$t0):.1f}')")
        best_curl=$(python3 -c "print(max($best_curl, $mbs))")
        best_curl_rps=$(python3 -c "print(max($best_curl_rps, $rps))")
        # shardbench: timed the same way as curl (whole process, start-up included)
        t0=$(date +%s.%N)
        out=$("$bench" --endpoint "http://127.0.0.1:$port" --bucket bucket --keys "$work/keys-$size" \
                       --size "$bytes" --concurrency "$conc")
        t1=$(date +%s.%N)
        [ "$(echo "$out" | awk '{print $12}')" = 0 ] || { echo "shardbench GETs failed: $out" >&2; exit 1; }
        [ "$(echo "$out" | awk '{print $4}')" = $((count * bytes)) ] || { echo "byte count wrong: $out" >&2; exit 1; }
        mbs=$(python3 -c "print(f'{$count*$bytes/1e6/($t1-$t0):.1f}')")
        rps=$(python3 -c "print(f'{$count/($t1-$t0):.1f}')")
        best_sb=$(python3 -c "print(max($best_sb, $mbs))")
        best_sb_rps=$(python3 -c "print(max($best_sb_rps, $rps))")
    done
    printf '| %s x %s | curl -Z | %s | %s |\n' "$count" "$size" "$best_curl" "$best_curl_rps"
    printf '| %s x %s | shardbench | %s | %s |\n' "$count" "$size" "$best_sb" "$best_sb_rps"
    printf '| %s x %s | ratio shardbench/curl | %s | %s |\n' "$count" "$size" \
        "$(python3 -c "print(f'{$best_sb/$best_curl:.2f}')")" "$(python3 -c "print(f'{$best_sb_rps/$best_curl_rps:.2f}')")"
done
