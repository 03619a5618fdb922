#!/usr/bin/env bash
# The step barrier at scale: N real worker agents on loopback (`--local N`,
# one rank each), synthetic storage (no I/O), computation_time 0.05 s,
# train.sync step, one epoch. Per N: the time to join, the barrier's round
# trip (p50/p99 over every step of every rank), its own cost (p50/p99: STEP
# sent to GO received on the worker whose STEP completed the barrier), the
# coordinator's CPU per step and AU. Figures come from the result database
# (epochs) and the coordinator's getrusage (/usr/bin/time) and /proc.
#
#   SHARDBENCH=build/coordinator/shardbench SHARDBENCH_WORKER=build/worker/shardbench-worker \
#       tests/bench/barrier.sh
# Environment:
#   BARRIER_NS       worker counts (default "64 256 512 1024")
#   BARRIER_STEPS    steps per epoch (default 40)
#   BARRIER_FANOUT   shardbench.barrier_fanout (default: the key's default)
#   BARRIER_TIMEOUT  shardbench.heartbeat_timeout_s (default: the key's default; a build whose join
#                    takes longer than it needs more)
#   BARRIER_SYNC     train.sync (default step; epoch: no step barrier, the coordinator's cost without one)
#   BARRIER_KEEP     a folder to keep each run's database and logs in (default: a scratch folder, removed)
# Columns: join_s: coordinator start to its last "worker N joined" line (wall clock); all_cpu/step:
# user+system CPU of the whole command per step (/usr/bin/time %U+%S: the coordinator and the workers
# it reaped, start-up included); coord_cpu/step and coord_cpu/s: the coordinator's own CPU over the
# training epoch alone (/proc/PID/stat between its "training:" and "epoch 1/1" lines, 10 ms ticks), per
# step and per second (heartbeats and STATS cost per second, whatever the steps); AU: epochs.au_mean.
# Wall-clock columns (join, barrier, own, AU) are inflated by any other load; the CPU columns are not.
set -u
: "${SHARDBENCH:?path of the shardbench binary}"
: "${SHARDBENCH_WORKER:?path of the shardbench-worker binary}"
export SHARDBENCH_WORKER
NS=${BARRIER_NS:-64 256 512 1024}
STEPS=${BARRIER_STEPS:-40}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/shardbench-barrier.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "barrier.sh: needs /usr/bin/time (GNU time)" >&2; exit 2; }
hz=$(getconf CLK_TCK)

# ms since midnight of a log line's HH:MM:SS.mmm
ms () { awk -F'[:. ]' '{ print (($1 * 60 + $2) * 60 + $3) * 1000 + $4 }'; }
# the coordinator's utime+stime in seconds (/proc/PID/stat fields 14, 15)
cpu_s () { awk -v hz="$hz" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat" 2>/dev/null; }

printf '%-6s %-7s %-8s %-8s %-8s %-8s %-13s %-15s %-13s %-6s %s\n' N join_s bar_p50 bar_p99 own_p50 own_p99 \
    all_cpu_ms/st coord_cpu_ms/st coord_cpu_ms/s AU% status
for n in $NS; do
    dir="$WORK/n$n"
    mkdir -p "$dir"
    extra=()
    [ -n "${BARRIER_FANOUT:-}" ] && extra+=("shardbench.barrier_fanout=$BARRIER_FANOUT")
    [ -n "${BARRIER_TIMEOUT:-}" ] && extra+=("shardbench.heartbeat_timeout_s=$BARRIER_TIMEOUT")
    start_ms=$(date +%H:%M:%S.%N | cut -c1-12 | ms)
    # one sample per file, batch 1: STEPS steps per rank
    "$TIME" -f '%U %S %e %M' -o "$dir/time" "$SHARDBENCH" run quickstart storage.storage_type=synthetic \
        dataset.data_folder=synthetic://barrier dataset.num_files_train=$((n * STEPS)) \
        dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 reader.batch_size=1 \
        reader.read_threads=1 reader.prefetch_size=2 train.epochs=1 train.computation_time=0.05 train.sync="${BARRIER_SYNC:-step}" \
        "${extra[@]}" --accelerators "$n" --local "$n" --db "$dir/r.db" >"$dir/out" 2>"$dir/err" &
    tpid=$!
    # the coordinator is /usr/bin/time's child
    cpid=""
    for _ in $(seq 1 200); do
        cpid=$(pgrep -P "$tpid" -x shardbench | head -1)
        [ -n "$cpid" ] && break
        sleep 0.05
    done
    cpu0="" cpu1="" t0="" t1=""
    while kill -0 "$tpid" 2>/dev/null; do
        if [ -z "$cpu0" ] && grep -q "info: training:" "$dir/err" 2>/dev/null; then
            cpu0=$(cpu_s "$cpid")
            t0=$(date +%s.%N)
        fi
        if [ -n "$cpu0" ] && [ -z "$cpu1" ] && grep -q "info: epoch 1/1" "$dir/err" 2>/dev/null; then
            cpu1=$(cpu_s "$cpid")
            t1=$(date +%s.%N)
        fi
        sleep 0.02
    done
    wait "$tpid"
    rc=$?
    read -r u s _ _ <"$dir/time" 2>/dev/null || { u=0; s=0; }
    last=$(grep "shardbench: info: worker .* joined" "$dir/err" | tail -1 | cut -c1-12 | ms)
    join=$(awk -v a="$start_ms" -v b="${last:-0}" 'BEGIN { if (b > 0) printf "%.2f", (b - a) / 1000; else print "-" }')
    row=$(sqlite3 -batch -noheader -separator ' ' "$dir/r.db" "SELECT printf('%.2f', barrier_p50_ms),
        printf('%.2f', barrier_p99_ms), printf('%.2f', barrier_own_p50_ms), printf('%.2f', barrier_own_p99_ms),
        batches, printf('%.1f', au_mean * 100) FROM epochs WHERE epoch = 1" 2>/dev/null)
    read -r p50 p99 o50 o99 steps au <<<"${row:-- - - - 0 -}"
    [ "${steps:-0}" -gt 0 ] 2>/dev/null || steps=$STEPS
    whole=$(awk -v u="$u" -v s="$s" -v n="$steps" 'BEGIN { printf "%.2f", (u + s) * 1000 / n }')
    train=$(awk -v a="${cpu0:-}" -v b="${cpu1:-}" -v n="$steps" \
        'BEGIN { if (a == "" || b == "") print "-"; else printf "%.2f", (b - a) * 1000 / n }')
    rate=$(awk -v a="${cpu0:-}" -v b="${cpu1:-}" -v x="${t0:-}" -v y="${t1:-}" \
        'BEGIN { if (a == "" || b == "" || y <= x) print "-"; else printf "%.1f", (b - a) * 1000 / (y - x) }')
    status=ok
    [ "$rc" -eq 0 ] || status="exit $rc: $(grep -m1 'error' "$dir/err" | cut -c1-160)"
    printf '%-6s %-7s %-8s %-8s %-8s %-8s %-13s %-15s %-13s %-6s %s\n' "$n" "$join" "$p50" "$p99" "$o50" "$o99" \
        "$whole" "$train" "$rate" "$au" "$status"
    if [ -n "${BARRIER_KEEP:-}" ]; then mkdir -p "$BARRIER_KEEP" && cp -r "$dir" "$BARRIER_KEEP/"; fi
    rm -rf "$dir"
done
