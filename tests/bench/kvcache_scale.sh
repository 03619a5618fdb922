#!/usr/bin/env bash
# `shardbench kvcache` with many clients (docs/PERFORMANCE.md, "KV cache at
# 1024 clients"): RANKS ranks over WORKERS worker agents started apart from
# the coordinator (as on WORKERS nodes; named as HOSTS hosts), so that the
# coordinator's CPU and memory are measured on their own and the workers'
# together. Prints the trial's log line, the summary, each side's CPU
# seconds and largest RSS, and how far apart the ranks' windows started.
#
# usage: tests/bench/kvcache_scale.sh [BUILD_DIR]
# env:   RANKS (1024), WORKERS (64), HOSTS (16), USERS (1, per rank),
#        DURATION (10 s), MODEL (tiny-1b), DIR (/var/tmp/sb-kvscale: the cache
#        folder's parent, emptied and removed), PYTHON (python3, for rusage).
# Each rank writes, fsyncs and reads back its entries: the data written is
# about the device's write rate x DURATION (the LRU keeps the rest in check);
# check the free space first.
set -euo pipefail
BUILD=${1:-build}
SB=$(cd "$BUILD" && pwd)/coordinator/shardbench
WK=$(cd "$BUILD" && pwd)/worker/shardbench-worker
RANKS=${RANKS:-1024} WORKERS=${WORKERS:-64} HOSTS=${HOSTS:-16} USERS=${USERS:-1} DURATION=${DURATION:-10}
MODEL=${MODEL:-tiny-1b} DIR=${DIR:-/var/tmp/sb-kvscale} PYTHON=${PYTHON:-python3}
for x in "$SB" "$WK"; do [ -x "$x" ] || { echo "kvcache_scale: $x: not built" >&2; exit 1; }; done
rm -rf "$DIR"
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
# a command's CPU seconds and largest RSS, over it and the children it waited for
ru () { "$PYTHON" -c '
import resource, subprocess, sys, time
t = time.time(); r = subprocess.run(sys.argv[2:]); w = time.time() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%s: exit %d, wall %.1f s, CPU %.1f s (user %.1f, system %.1f), largest RSS %.0f MiB" % (sys.argv[1],
      r.returncode, w, u.ru_utime + u.ru_stime, u.ru_utime, u.ru_stime, u.ru_maxrss / 1024.0), flush=True)
sys.exit(r.returncode)' "$@"; }

sock=ipc://$DIR/coordinator.sock
ru coordinator "$SB" kvcache kvcache.model="$MODEL" kvcache.users="$USERS" kvcache.duration_s="$DURATION" \
    kvcache.trials=1 kvcache.pause_s=0 kvcache.cpu_mem_gb=0 kvcache.generation_mode=none \
    kvcache.cache_dir="$DIR/kv" --accelerators "$RANKS" --workers "$WORKERS" --bind "$sock" --db "$DIR/k.db" \
    --progress off --join-timeout 120 > "$DIR/summary.txt" 2> "$DIR/log.txt" &
coordinator=$!
# the workers wait for the coordinator's socket (--timeout)
ru workers bash -c 'for i in $(seq 1 '"$WORKERS"'); do "$0" --coordinator "$1" --timeout 60 \
    --host "node$((i % $2))" 2>>"$3/workers.txt" & done; wait' "$WK" "$sock" "$HOSTS" "$DIR" || true
wait "$coordinator" || true
grep "kvcache trial" "$DIR/log.txt" | tail -1
cat "$DIR/summary.txt"
"$PYTHON" -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n, hosts, req, spread = c.execute("SELECT count(*), count(DISTINCT host), sum(requests),"
                                  " 1000 * (max(started_at) - min(started_at)) FROM kv_ranks").fetchone()
print("ranks recorded %d on %d hosts, %d requests; their windows started within %.1f ms" % (n, hosts, req, spread))
' "$DIR/k.db"
