#!/usr/bin/env bash
# MLPerf Storage's KV-cache benchmark (`shardbench kvcache`): bad settings
# are refused naming the key; a run of 4 ranks over 2 local workers and 2
# trials records every rank of every trial, the trial's figures are the
# ranks' (sums, largest p95) and the run's the trials' (means, largest);
# each rank's users are the reference's (CPython's random seeded 42 + rank,
# drawn in UserSimulator.generate_mixed_users' order: the oracle below is
# that draw in Python itself); the entries are .npy files numpy loads with
# the reference's shape and dtype; a preloaded no-op posix_fadvise or fsync
# (as a v3.0 submitter preloaded) is detected and the run refused.
. "$(dirname "$0")/lib.sh"

# the CPU tier off (the reference's default holds 32 GiB in memory) and no generation sleep (MLPerf's)
small="kvcache.model=tiny-1b kvcache.users=3 kvcache.duration_s=3 kvcache.pause_s=0 kvcache.cpu_mem_gb=0
       kvcache.generation_mode=none"

# ---- settings
sb kvcache --help
expect_eq "help: exit status" "$SB_RC" 0
expect_contains "help: an example" sb.out "shardbench kvcache 1 --accelerators 4"
sb kvcache kvcache.usrs=3 --db t.db
expect_eq "unknown key: exit status" "$SB_RC" 2
expect_contains "unknown key: named with the nearest" sb.err "kvcache.usrs"
expect_contains "unknown key: the nearest" sb.err "kvcache.users"
sb kvcache kvcache.users=many --db t.db
expect_eq "bad value: exit status" "$SB_RC" 2
expect_contains "bad value: names the key" sb.err "kvcache.users"
sb kvcache 4 --db t.db
expect_eq "option 4: exit status" "$SB_RC" 2
expect_contains "option 4: says which" sb.err "1, 2 or 3"
sb kvcache 1 2 --db t.db
expect_eq "two options: exit status" "$SB_RC" 2
sb kvcache dataset.num_files_train=3 --db t.db
expect_eq "a dataset key: exit status" "$SB_RC" 2
expect_contains "a dataset key: refused" sb.err "not a setting of this command"
sb kvcache kvcache.gpu_mem_gb=16 --db t.db
expect_eq "a GPU tier: exit status" "$SB_RC" 2
sb kvcache --seed 3 --db t.db
expect_eq "--seed: exit status" "$SB_RC" 2
expect_contains "--seed: says where the seed is" sb.err "kvcache.seed"
expect_eq "refused settings wrote no run" "$(q t.db "SELECT count(*) FROM runs" 2>/dev/null || echo 0)" 0

# ---- 4 ranks on 2 workers, 2 trials
sb kvcache $small kvcache.trials=2 kvcache.cache_dir=./kv --accelerators 4 --local 2 --db t.db --progress off
expect_eq "run: exit status" "$SB_RC" 0
[ "$SB_RC" -eq 0 ] || { tail -20 sb.err; }
run=$(q t.db "SELECT max(id) FROM runs")
expect_eq "run: kind and status" "$(q t.db "SELECT kind || ':' || status || ':' || accelerators || ':' || workers FROM runs WHERE id = $run")" \
    "kvcache:succeeded:4:2"
expect_eq "run: settings row" \
    "$(q t.db "SELECT option || ':' || model || ':' || users || ':' || trials || ':' || seed || ':' || kv_bytes_per_position || ':' || generation_mode FROM kv_runs WHERE run_id = $run")" \
    "0:tiny-1b:3:2:42:24576:none"
expect_eq "run: every rank of every trial" \
    "$(q t.db "SELECT group_concat(trial || '/' || rank, ' ') FROM (SELECT trial, rank FROM kv_ranks WHERE run_id = $run ORDER BY trial, rank)")" \
    "1/0 1/1 1/2 1/3 2/0 2/1 2/2 2/3"
expect_eq "run: two trials of 4 ranks" "$(q t.db "SELECT group_concat(trial || ':' || ranks, ' ') FROM kv_trials WHERE run_id = $run")" "1:4 2:4"
# the trial's figures are its ranks': requests and bytes summed, bandwidth summed, p95 the largest
expect_eq "trial figures = the ranks'" "$(q t.db "SELECT count(*) FROM kv_trials t WHERE run_id = $run
    AND requests = (SELECT sum(requests) FROM kv_ranks r WHERE r.run_id = t.run_id AND r.trial = t.trial)
    AND storage_read_bytes = (SELECT sum(storage_read_bytes) FROM kv_ranks r WHERE r.run_id = t.run_id AND r.trial = t.trial)
    AND storage_write_bytes = (SELECT sum(storage_write_bytes) FROM kv_ranks r WHERE r.run_id = t.run_id AND r.trial = t.trial)
    AND abs(read_gib_per_s - (SELECT sum(read_gib_per_s) FROM kv_ranks r WHERE r.run_id = t.run_id AND r.trial = t.trial)) < 1e-9
    AND storage_p95_ms IS (SELECT max(p95_ms) FROM kv_latency l WHERE l.run_id = t.run_id AND l.trial = t.trial AND what = 'request_storage')")" 2
expect_eq "run figures = the trials'" "$(q t.db "SELECT count(*) FROM kv_runs k WHERE run_id = $run
    AND abs(read_gib_per_s - (SELECT avg(read_gib_per_s) FROM kv_trials WHERE run_id = $run)) < 1e-9
    AND storage_p95_ms IS (SELECT max(storage_p95_ms) FROM kv_trials WHERE run_id = $run)")" 1
# (a worker's clock offset is known to half its round trip: the bounds allow a second)
expect_eq "per rank: its window on the coordinator's clock, within the trial's" "$(q t.db "SELECT count(*) FROM kv_ranks r JOIN kv_trials t USING (run_id, trial)
    WHERE r.run_id = $run AND r.started_at > t.started_at - 1 AND r.finished_at <= t.finished_at + 1e-6 AND r.finished_at > r.started_at")" 8
expect_eq "run: requests completed" "$(q t.db "SELECT sum(requests) > 0 FROM kv_ranks WHERE run_id = $run")" 1
expect_eq "per rank: requests by type and by QoS add up" "$(q t.db "SELECT count(*) FROM kv_ranks WHERE run_id = $run
    AND chatbot + coding + document = requests AND interactive + responsive + batch = requests")" 8
expect_eq "per rank: the storage check" "$(q t.db "SELECT count(*) FROM kv_ranks WHERE run_id = $run AND storage_check <> ''")" 8
expect_eq "run: storage check" "$(q t.db "SELECT storage_check FROM kv_runs WHERE run_id = $run")" \
    "$(q t.db "SELECT CASE WHEN sum(storage_check LIKE '%unverifiable%') > 0 THEN 'unverifiable' ELSE 'ok' END FROM kv_ranks WHERE run_id = $run")"
# the users: CPython's random seeded 42 + rank, in generate_mixed_users' order of draws
oracle=$(/usr/bin/python3 - <<'EOF'
import random
ranges = {'chatbot': ((512, 4096), (50, 200), (0.1, 0.5)), 'coding': ((4096, 25000), (100, 500), (0.2, 1.0)),
          'document': ((4096, 16384), (200, 800), (0.3, 1.5))}
out = []
for rank in range(4):
    random.seed(42 + rank)
    types = {'chatbot': 0, 'coding': 0, 'document': 0}
    qos = {'interactive': 0, 'responsive': 0, 'batch': 0}
    for i in range(3):
        t = random.choice(['chatbot', 'coding', 'document'])
        r = random.random()
        qos['interactive' if r < 0.15 else 'responsive' if r < 0.50 else 'batch'] += 1
        types[t] += 1
        c, g, th = ranges[t]
        random.randint(*c), random.randint(*g), random.uniform(*th)
    out.append('%d:%d,%d,%d:%d,%d,%d' % ((rank,) + tuple(types.values()) + tuple(qos.values())))
print(' '.join(out))
EOF
)
expect_eq "per rank: users as the reference draws them" "$(q t.db "SELECT group_concat(rank || ':' || users_chatbot || ',' || users_coding || ',' || users_document || ':' || users_interactive || ',' || users_responsive || ',' || users_batch, ' ') FROM (SELECT * FROM kv_ranks WHERE run_id = $run AND trial = 1 ORDER BY rank)")" "$oracle"
# the entries: rank_<r>/<key>.npy, loadable by numpy with the reference's shape (layers, 2, tokens, kv_heads, head_dim)
expect_eq "entries: every rank's folder" "$(cd kv && ls -d rank_* | sort | tr '\n' ' ')" "rank_0 rank_1 rank_2 rank_3 "
npy=$(/usr/bin/python3 - <<'EOF'
import glob, numpy as np
bad, n = [], 0
for f in glob.glob('kv/rank_*/*.npy'):
    a = np.load(f, mmap_mode='r')
    n += 1
    if a.dtype != np.float16 or a.ndim != 5 or a.shape[0] != 12 or a.shape[1] != 2 or a.shape[3] != 4 or a.shape[4] != 128:
        bad.append(f)
print('%s:%d' % ('ok' if n and not bad else 'bad ' + ' '.join(bad[:3]), n > 0))
EOF
)
expect_eq "entries: numpy loads them with the reference's shape" "$npy" "ok:1"
# (a rank that completed no request has no summary, as the reference's _calculate_stats returns early)
expect_eq "per rank: the results JSON parses with the reference's keys" "$(q t.db "SELECT results_json FROM kv_ranks WHERE run_id = $run AND requests > 0 ORDER BY trial, rank LIMIT 1" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["summary"]
print(all(k in s for k in ("total_requests", "cache_stats", "storage_io_latency_ms", "end_to_end_latency_ms")),
      "tier_storage_read_bandwidth_gbps" in s["cache_stats"])')" "True True"
expect_contains "summary: the run's figures" sb.out "run: storage read"
expect_eq "summary: a row per trial, 4 ranks each" "$(grep -cE '^ +[12] +4 ' sb.out)" 2
expect_contains "summary: requests by type and class" sb.out "requests by user type: chatbot"
rm -rf kv

# ---- a worker lost in the window fails the run naming it (the reference would average over the
# ranks that left a file); SIGINT in the window ends the run within seconds, exit 130
long="kvcache.model=tiny-1b kvcache.users=2 kvcache.duration_s=60 kvcache.pause_s=0 kvcache.cpu_mem_gb=0
      kvcache.generation_mode=none kvcache.cache_dir=./kv --accelerators 4 --local 2 --progress off"
timeout 120 "$SHARDBENCH" kvcache $long --db lost.db >lost.out 2>lost.err &
coord=$!
if await_text lost.err "kvcache trial 1/1: 4 ranks started" 60; then
    read -r host pid < <(sed -n 's/.*shardbench: info: worker 1 joined: \([^ ]*\) pid \([0-9]*\),.*/\1 \2/p' lost.err)
    kill -9 "$pid"
    wait "$coord"
    expect_eq "worker lost: exit status" "$?" 1
    expect_contains "worker lost: named with its ranks" lost.err "worker 1 on $host (ranks 2-3, pid $pid) ended: killed by signal 9"
    expect_eq "worker lost: no trial recorded" "$(q lost.db "SELECT (SELECT status FROM runs) || ':' || (SELECT count(*) FROM kv_trials)")" "failed:0"
else
    fail "worker lost: the trial never started"; kill "$coord"; wait "$coord"
fi
rm -rf kv
# the coordinator itself gets the signal (timeout(1) would pass it on to its whole process group,
# twice to the coordinator: a second signal ends it at once, by design)
"$SHARDBENCH" kvcache $long --db int.db >int.out 2>int.err &
coord=$!
if await_text int.err "kvcache trial 1/1: 4 ranks started" 60; then
    start=$SECONDS
    kill -INT "$coord"
    wait "$coord"
    expect_eq "SIGINT: exit status" "$?" 130
    expect_eq "SIGINT: ended well before the window's 60 s" "$(( SECONDS - start < 20 ))" 1
    expect_eq "SIGINT: the run aborted" "$(q int.db "SELECT status FROM runs")" "aborted"
else
    fail "SIGINT: the trial never started"; kill "$coord"; wait "$coord"
fi
rm -rf kv

# ---- an fsync that never returns (a hung mount; the shim hangs rank 1's entries only) on a worker of
# its own: past shardbench.stall_timeout_s the rank fails naming the call and the file, the run fails
# naming the rank and host, and the worker ends, leaving the stuck threads behind (it used to wait for
# them for ever); the storage check is off, since it would refuse the shim's fsync
"$SHARDBENCH" kvcache $small kvcache.duration_s=60 kvcache.verify_storage=0 shardbench.stall_timeout_s=2 \
    kvcache.cache_dir=./kv --accelerators 2 --workers 1 --bind "tcp://$SB_LO:*" --progress off --db stuck.db \
    >stuck.out 2>stuck.err &
coord=$!
ep=$(coordinator_endpoint stuck.err)
start=$SECONDS
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD=$KV_STUCK_FSYNC \
    timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host stuck-node >stuckw.out 2>stuckw.err &
worker=$!
wait "$coord"
expect_eq "stuck fsync: exit status" "$?" 1
wait "$worker"
expect_eq "stuck fsync: the worker ends by itself, exit status 1" "$?" 1
expect_eq "stuck fsync: both ended well before the window's 60 s" "$(( SECONDS - start < 30 ))" 1
expect_contains "stuck fsync: the rank, host, call and file named" stuck.err "rank 1 on stuck-node: kvcache: fsync of $PWD/kv/rank_1/"
expect_contains "stuck fsync: the bound named" stuck.err "has not returned after "
expect_contains "stuck fsync: ... as set" stuck.err \
    "nor has any other file call of the rank moved (shardbench.stall_timeout_s 2 s): a stuck NFS or FUSE mount"
expect_contains "stuck fsync: the worker says what it left" stuckw.err "rank 1: "
expect_contains "stuck fsync: ... the threads in the call" stuckw.err "service thread(s) that never returned left behind: fsync of $PWD/kv/rank_1/"
expect_eq "stuck fsync: rank 0 is not blamed" "$(grep -c "rank 0 on" stuck.err)" 0
expect_eq "stuck fsync: run failed, no trial, the error row" \
    "$(q stuck.db "SELECT (SELECT status FROM runs) || ':' || (SELECT count(*) FROM kv_trials) || ':' || rank || ':' || host || ':' || op || ':' || errno_val || ':' || (target LIKE '$PWD/kv/rank_1/%.npy') FROM errors WHERE op != 'run'")" \
    "failed:0:1:stuck-node:fsync:110:1"
rm -rf kv

# ---- a long fsync while the rank's other calls move is not a stuck one: the shim holds rank 1's
# first fsync for as long as its other entries keep being written or read (6 s at most, returning
# once they stand still for 1 s), longer than shardbench.stall_timeout_s; the run ends well
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD=$KV_SLOW_FSYNC \
    SLOW_FSYNC_REPORT=$PWD/slow.report timeout 120 "$SHARDBENCH" kvcache $small kvcache.users=8 kvcache.duration_s=12 \
    kvcache.verify_storage=0 shardbench.stall_timeout_s=3 kvcache.cache_dir=./kv --accelerators 2 --local 1 \
    --progress off --db slow.db >slow.out 2>slow.err
expect_eq "long fsync, others moving: exit status" "$?" 0
slow_s=0 slow_calls=0
[ -f slow.report ] && read -r slow_s slow_calls <slow.report
echo "# the long fsync: $slow_s s, $slow_calls other calls of rank 1 during it"
expect_eq "long fsync, others moving: it lasted longer than the bound (4 s at least)" \
    "$(python3 -c "print(int($slow_s >= 4))")" 1
expect_eq "long fsync, others moving: other calls of the rank during it" "$(( slow_calls > 0 ))" 1
expect_eq "long fsync, others moving: not called stuck" "$(grep -c "has not returned" slow.err)" 0
expect_eq "long fsync, others moving: run succeeded, 2 ranks" \
    "$(q slow.db "SELECT status || ':' || (SELECT count(*) FROM kv_ranks) FROM runs")" "succeeded:2"
rm -rf kv

# ---- a preloaded no-op posix_fadvise, then fsync: the storage check refuses the run
for shim in "$KV_NOOP_FADVISE:posix_fadvise" "$KV_NOOP_FSYNC:fsync"; do
    lib=${shim%%:*} fn=${shim##*:}
    # under AddressSanitizer a preloaded library comes before its runtime: told not to mind
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD=$lib \
        timeout 120 "$SHARDBENCH" kvcache $small kvcache.cache_dir=./kv --local 1 --db p.db --progress off \
        >sb.out 2>sb.err
    rc=$?
    expect_eq "no-op $fn: exit status" "$rc" 1
    expect_contains "no-op $fn: named" sb.err "$fn"
    expect_contains "no-op $fn: the library named" sb.err "$(basename "$lib")"
    prun=$(q p.db "SELECT max(id) FROM runs")
    expect_eq "no-op $fn: refused, no figures" \
        "$(q p.db "SELECT status || ':' || (SELECT storage_check FROM kv_runs WHERE run_id = $prun) || ':' || (SELECT count(*) FROM kv_ranks WHERE run_id = $prun) FROM runs WHERE id = $prun")" \
        "failed:refused:0"
    rm -rf kv
done
finish
