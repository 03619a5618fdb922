#!/usr/bin/env bash
# KV cache side by side with MLPerf Storage's reference (docs/KVCACHE.md,
# docs/PERFORMANCE.md "KV cache: shardbench and the reference side by side"):
# the reference's kv-cache.py (mlcommons/storage kv_cache_benchmark) run as
# MLPerf's mlperf_wrapper.py runs it, one process per rank started side by
# side (seed 42 + rank, cache folder DIR/rank_<r>/, --gpu-mem-gb 0,
# --generation-mode none), then `shardbench kvcache` with the same settings
# on the same folder, emptied before each. Prints one markdown table: the
# two sides' figures over all ranks.
#
# usage: tests/bench/kvcache_vs_reference.sh [REFERENCE_DIR] [BUILD_DIR]
#        REFERENCE_DIR: the reference's kv_cache_benchmark folder (the one
#        holding kv-cache.py and config.yaml); default $KV_REFERENCE.
#        BUILD_DIR: default build.
# env:   DIR (/var/tmp/sb-kvcache) the folder measured (a disk, not a tmpfs;
#        emptied before each side and removed at the end), MODEL (tiny-1b),
#        USERS (20, per rank), DURATION (30 s), RANKS (2), CPU_MEM_GB (0),
#        MAX_ALLOCS (16), SEED (42), PYTHON (python3: needs numpy and
#        PyYAML, as the reference's requirements.txt), ONLY (both; reference
#        or shardbench: one side only), OUT (empty; a folder: the per-rank
#        JSONs, logs and time lines are copied there).
# The reference is never part of this repository: give its folder.
# CPU seconds (user + system) and peak RSS come from GNU time (Debian
# package `time`), per reference process and per shardbench worker (the
# SHARDBENCH_WORKER wrapper, as ceiling.sh); the coordinator's own are not
# counted. Figures that are rates (req/s, tokens/s, GiB/s) and latencies are
# wall clock: on a loaded host they are noise; CPU seconds and RSS are not.
# Bandwidth is summed over ranks and the storage_io p95 is the worst rank's,
# as mlpstorage aggregates; device latency percentiles are the worst rank's.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
ref=${1:-${KV_REFERENCE:-}}
build=${2:-$here/build}
dir=${DIR:-/var/tmp/sb-kvcache}
model=${MODEL:-tiny-1b}
users=${USERS:-20}
duration=${DURATION:-30}
ranks=${RANKS:-2}
cpu_mem=${CPU_MEM_GB:-0}
allocs=${MAX_ALLOCS:-16}
seed=${SEED:-42}
py=${PYTHON:-python3}
only=${ONLY:-both}
[ -n "$ref" ] || { echo "give the reference's kv_cache_benchmark folder (argument or KV_REFERENCE)" >&2; exit 1; }
[ -f "$ref/kv-cache.py" ] && [ -f "$ref/config.yaml" ] ||
    { echo "$ref: no kv-cache.py and config.yaml there (the reference's kv_cache_benchmark folder)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "GNU time missing: apt-get install time" >&2; exit 1; }
"$py" -c 'import numpy, yaml' 2>/dev/null || { echo "$py lacks numpy or yaml (the reference needs both)" >&2; exit 1; }
sb=$build/coordinator/shardbench
worker=$build/worker/shardbench-worker
if [ "$only" != reference ]; then
    [ -x "$sb" ] && [ -x "$worker" ] || { echo "build first: $sb" >&2; exit 1; }
    command -v sqlite3 >/dev/null || { echo "sqlite3 missing: apt-get install sqlite3" >&2; exit 1; }
fi
mkdir -p "$dir"
case "$(stat -f -c %T "$dir")" in
    tmpfs|ramfs) echo "$dir is a $(stat -f -c %T "$dir"): it has no device to measure; give a disk-backed folder" >&2; exit 1 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/sb-kvcache-ref.XXXXXX")
pids=()
cleanup () {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -n "${OUT:-}" ]; then mkdir -p "$OUT" && cp -r "$work"/. "$OUT"/; fi
    rm -rf "$work" "$dir"/rank_*
    rm -f "$dir/.shardbench.lock"     # the coordinator's lock on its data folder
    rmdir "$dir" 2>/dev/null || true  # only if nothing else is there
}
trap cleanup EXIT
empty_dir () { rm -rf "$dir"/rank_*; sync; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)," \
     "folder $dir on $(stat -f -c %T "$dir") ($(df -h --output=avail "$dir" | tail -1 | tr -d ' ') free)"
echo "settings: model $model, $users users per rank, $ranks ranks, ${duration} s, cpu_mem_gb $cpu_mem," \
     "max_concurrent_allocs $allocs, gpu_mem_gb 0, generation_mode none, seed $seed + rank"

# The reference: what mlperf_wrapper.py runs for each rank (without its 90 s
# sleeps), every rank started at once as mpirun would.
run_reference () {
    local r
    empty_dir
    mkdir -p "$work/ref"
    for ((r = 0; r < ranks; r++)); do
        mkdir -p "$work/ref/rank_$r" "$dir/rank_$r"
        /usr/bin/time -f "%U %S %M" -o "$work/ref/time.$r" \
            "$py" "$ref/kv-cache.py" --config "$ref/config.yaml" --seed $((seed + r)) \
            --output "$work/ref/rank_$r/kvcache_results.json" --cache-dir "$dir/rank_$r" \
            --model "$model" --num-users "$users" --duration "$duration" --gpu-mem-gb 0 \
            --cpu-mem-gb "$cpu_mem" --max-concurrent-allocs "$allocs" --generation-mode none \
            >"$work/ref/log.$r" 2>&1 &
        pids+=($!)
    done
    local failed=0
    for ((r = 0; r < ranks; r++)); do
        wait "${pids[$r]}" || { echo "reference rank $r failed: tail of its log:" >&2; tail -20 "$work/ref/log.$r" >&2; failed=1; }
    done
    pids=()
    [ "$failed" = 0 ]
}

# shardbench: the same settings, one rank per worker.
run_shardbench () {
    empty_dir
    mkdir -p "$work/sb/cpu"
    cat >"$work/sb/worker.sh" <<WRAP
#!/bin/sh
exec /usr/bin/time -f "%U %S %M" -o "$work/sb/cpu/worker.\$\$" "$worker" "\$@"
WRAP
    chmod +x "$work/sb/worker.sh"
    SHARDBENCH_WORKER="$work/sb/worker.sh" "$sb" kvcache \
        kvcache.model="$model" kvcache.users="$users" kvcache.duration_s="$duration" \
        kvcache.trials=1 kvcache.pause_s=0 kvcache.cache_dir="$dir" kvcache.seed="$seed" \
        kvcache.cpu_mem_gb="$cpu_mem" kvcache.max_concurrent_allocs="$allocs" \
        kvcache.generation_mode=none \
        --accelerators "$ranks" --local "$ranks" --db "$work/sb/results.db" >"$work/sb/log" 2>&1 ||
        { echo "shardbench kvcache failed: tail of its output:" >&2; tail -20 "$work/sb/log" >&2; return 1; }
    mkdir -p "$work/sb/json"
    local r
    for ((r = 0; r < ranks; r++)); do
        sqlite3 -batch -noheader "$work/sb/results.db" \
            "SELECT results_json FROM kv_ranks WHERE trial = 1 AND rank = $r ORDER BY run_id DESC LIMIT 1" \
            >"$work/sb/json/rank_$r.json"
        sqlite3 -batch -noheader -separator ' ' "$work/sb/results.db" \
            "SELECT chatbot, coding, document FROM kv_ranks WHERE trial = 1 AND rank = $r ORDER BY run_id DESC LIMIT 1" \
            >"$work/sb/json/types_$r"
    done
}

if [ "$only" != shardbench ]; then run_reference; fi
if [ "$only" != reference ]; then run_shardbench; fi
empty_dir

# One table from the per-rank JSONs (the same fields on both sides: the
# reference's kvcache_results JSON, which shardbench's kv_ranks.results_json
# repeats) and the GNU time lines.
"$py" - "$work" "$ranks" "$only" <<'EOF'
import glob, json, os, sys
work, ranks, only = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def side(jsons, times, types):
    res = [json.load(open(p)) for p in jsons]
    s = [r['summary'] for r in res]
    cs = [x['cache_stats'] for x in s]
    req = sum(x['total_requests'] for x in s)
    out = {'ranks': len(res), 'requests': req}
    out['req/s'] = sum(x['requests_per_second'] for x in s)
    out['tokens/s'] = sum(x['avg_throughput_tokens_per_sec'] for x in s)
    for q in ('interactive', 'responsive', 'batch'):
        out['requests ' + q] = sum(x['qos_metrics'].get(q, {}).get('total_requests', 0) for x in s)
    if types:
        for i, t in enumerate(('chatbot', 'coding', 'document')):
            out['requests ' + t] = sum(v[i] for v in types)
    wb = sum(c['total_write_bytes'] for c in cs)
    rb = sum(c['total_read_bytes'] for c in cs)
    out['MiB written / request'] = wb / max(req, 1) / 2**20
    out['MiB read / request'] = rb / max(req, 1) / 2**20
    out['reads / request'] = sum(c['read_iops'] for c in cs) / max(req, 1)
    out['writes / request'] = sum(c['write_iops'] for c in cs) / max(req, 1)
    out['storage read GiB/s (sum)'] = sum(c.get('tier_storage_read_bandwidth_gbps', 0) for c in cs)
    out['storage write GiB/s (sum)'] = sum(c.get('tier_storage_write_bandwidth_gbps', 0) for c in cs)
    for op in ('read', 'write'):
        for p in ('p50', 'p95', 'p99'):
            k = f'storage_{op}_device_{p}_ms'
            v = [c[k] for c in cs if k in c]
            out[f'device {op} {p} ms (worst rank)'] = max(v) if v else None
    out['storage_io p95 ms (worst rank)'] = max(x['storage_io_latency_ms']['p95'] for x in s)
    out['cache hit rate'] = sum(c['cache_hits'] for c in cs) / max(sum(c['cache_hits'] + c['cache_misses'] for c in cs), 1)
    cpu = rss = 0.0
    for t in times:
        u, sy, m = open(t).read().split()[-3:]
        cpu += float(u) + float(sy)
        rss = max(rss, float(m))
    out['CPU s (user+sys, all ranks)'] = cpu
    out['peak RSS MiB (largest process)'] = rss / 1024
    return out

cols = []
if only != 'shardbench':
    cols.append(('reference', side(sorted(glob.glob(f'{work}/ref/rank_*/kvcache_results.json')),
                                   sorted(glob.glob(f'{work}/ref/time.*')), None)))
if only != 'reference':
    types = [list(map(int, open(p).read().split())) for p in sorted(glob.glob(f'{work}/sb/json/types_*'))]
    cols.append(('shardbench', side(sorted(glob.glob(f'{work}/sb/json/rank_*.json')),
                                    sorted(glob.glob(f'{work}/sb/cpu/worker.*')), types)))
keys = []
for _, c in reversed(cols):     # shardbench's first: it has every row
    keys += [k for k in c if k not in keys]

def fmt(v):
    if v is None: return 'n/a'
    if isinstance(v, float): return f'{v:.3f}' if abs(v) < 100 else f'{v:.0f}'
    return str(v)

print('| figure | ' + ' | '.join(n for n, _ in cols) + ' |')
print('|---|' + '---:|' * len(cols))
for k in keys:
    print(f'| {k} | ' + ' | '.join(fmt(c.get(k)) for _, c in cols) + ' |')
EOF
