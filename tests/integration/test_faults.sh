#!/usr/bin/env bash
# Faults with real processes and real SQLite files: a worker killed or cut
# off by a network partition, the coordinator killed or interrupted, files
# that cannot be read. Each case asserts the exit statuses, the messages and
# the database, and prints how long the fault took to be noticed (bounds are
# generous: the heartbeat timeout is 2 s, a fault must be seen within 10 s).
. "$(dirname "$0")/lib.sh"

HB="shardbench.heartbeat_interval_s=0.5 shardbench.heartbeat_timeout_s=2"
D32="dataset.num_files_train=32 dataset.record_length_bytes=1000 dataset.record_length_bytes_stdev=0"
D64="dataset.num_files_train=64 dataset.record_length_bytes=1000 dataset.record_length_bytes_stdev=0"
LIMIT=10        # seconds within which every fault must be noticed
NETNS=()

# Stop what this script started (its own background jobs, by PID), remove
# the namespaces it created, then the scratch folder.
cleanup () {
    local p
    for p in $(jobs -p); do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    for p in "${NETNS[@]}"; do ip netns del "$p" 2>/dev/null; done
    [ -n "${NS_C:-}" ] && ip link del "${NS_C}v" 2>/dev/null     # left in the root namespace if a move failed
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

now () { date +%s.%N; }
since () { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# seconds since midnight of HH:MM:SS.fff (the coordinator's clock text)
sod () { echo "$1" | awk -F: '{ printf "%.3f", $1 * 3600 + $2 * 60 + $3 }'; }

# expect_match WHAT TEXT REGEX (extended, whole text)
expect_match () {
    if printf '%s\n' "$2" | grep -qxE -- "$3"; then pass "$1"; else fail "$1: '$2' does not match '$3'"; fi
}
# expect_below WHAT HOW SECONDS: pass when SECONDS < LIMIT, with the time
expect_below () {
    if awk -v t="$3" -v m="$LIMIT" 'BEGIN { exit !(t < m) }'; then pass "$1 ($2 $3 s)"; else fail "$1: $2 $3 s, limit $LIMIT s"; fi
}
# wait_for FILE TEXT: 0 when TEXT shows up in FILE within LIMIT seconds
wait_for () {
    local end=$((SECONDS + LIMIT))
    until grep -qF -- "$2" "$1" 2>/dev/null; do
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.02
    done
}
# noticed WHAT FILE TEXT T0: TEXT must show up in FILE within LIMIT seconds
# of T0; passes with the time it took
noticed () {
    if wait_for "$2" "$3"; then expect_below "$1" "detected in" "$(since "$4")"; else fail "$1: no '$3' in $2 after $LIMIT s"; fi
}
# wait_sql DB SQL: 0 when the query answers 1 within 30 s
wait_sql () {
    local end=$((SECONDS + 30))
    until [ "$(q "$1" "$2" 2>/dev/null)" = 1 ]; do
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.02
    done
}
# wait_gone PID...: 0 when none of them runs any more, within LIMIT seconds
wait_gone () {
    local end=$((SECONDS + LIMIT)) p left
    while :; do
        left=0
        for p in "$@"; do kill -0 "$p" 2>/dev/null && left=1; done
        [ "$left" -eq 0 ] && return 0
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.02
    done
}
# alive PID...: how many still run
alive () {
    local p n=0
    for p in "$@"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done
    echo "$n"
}
# endpoint ERRFILE: the endpoint the coordinator tells workers to join
endpoint () {
    wait_for "$1" "waiting for " || return 1
    sed -n 's/.*`shardbench-worker --coordinator \([^ `]*\)`.*/\1/p' "$1" | head -1
}
re_escape () { printf '%s' "$1" | sed 's/[][().*^$+?{}|\\]/\\&/g'; }
last_run () { q "$1" "SELECT max(id) FROM runs WHERE kind = 'train'"; }

# start_remote PREFIX DB NS ARGS...: a coordinator waiting for 2 workers
# started by hand (node-a, node-b) so it cannot see their processes exit;
# NS is a network namespace to run it in, or "". Sets COORD, WA, WB (wrapper
# PIDs) and EP. Workers write PREFIX-node-a.err and PREFIX-node-b.err.
start_remote () {
    local prefix=$1 db=$2 ns=$3 bind="tcp://$SB_LO:*" extra=()
    shift 3
    local in=()
    if [ -n "$ns" ]; then
        in=(ip netns exec "$ns")
        bind="tcp://$NS_C_ADDR:*"
        [ -n "$INSECURE" ] && extra=("$INSECURE")
    fi
    "${in[@]}" timeout 60 "$SHARDBENCH" run "$@" $HB --workers 2 --bind "$bind" "${extra[@]}" --db "$db" \
        >"$prefix.out" 2>"$prefix.err" &
    COORD=$!
    EP=$(endpoint "$prefix.err")
    "${in[@]}" timeout 60 "$SHARDBENCH_WORKER" --coordinator "$EP" --host node-a --timeout 10 >"$prefix-node-a.err" 2>&1 &
    WA=$!
    [ -n "$ns" ] && in=(ip netns exec "$NS_W")
    "${in[@]}" timeout 60 "$SHARDBENCH_WORKER" --coordinator "$EP" --host node-b --timeout 10 >"$prefix-node-b.err" 2>&1 &
    WB=$!
}

INSECURE=""
"$SHARDBENCH" run --help | grep -q -- '--insecure' && INSECURE=--insecure

# ------------------------------------------------------------------ a
# A remote worker killed with SIGKILL mid-epoch: its connection closes, the
# coordinator names it, stops the other worker and fails the run.
sb datagen dataset.data_folder=./d $D32 --db a.db
expect_eq "a: datagen" "$SB_RC" 0
start_remote a a.db "" dataset.data_folder=./d $D32 reader.batch_size=1 train.computation_time=0.1 train.epochs=3 \
    --accelerators 2
wait_sql a.db "SELECT count(*) = 2 FROM run_workers WHERE run_id = (SELECT max(id) FROM runs WHERE kind = 'train')"
run=$(last_run a.db)
wait_for a.err "info: training:"     # mid-epoch: once training began
read -r vid vrank vpid <<<"$(q a.db "SELECT worker, first_rank, pid FROM run_workers WHERE run_id = $run AND host = 'node-b'" | tr '|' ' ')"
pids=$(q a.db "SELECT pid FROM run_workers WHERE run_id = $run")
killed_at=$(date +%H:%M:%S.%N)
kill -9 "$vpid"
t0=$(now)
noticed "a: killed worker noticed" a.err "lost worker" "$t0"
wait "$COORD"
expect_eq "a: coordinator exits 1" "$?" 1
wait "$WA"
expect_eq "a: the other worker exits 1" "$?" 1
wait "$WB"
expect_eq "a: killed mid-epoch (no epoch finished)" "$(q a.db "SELECT count(*) FROM epochs WHERE run_id = $run")" 0
error=$(q a.db "SELECT error FROM runs WHERE id = $run")
expect_eq "a: run failed" "$(q a.db "SELECT status FROM runs WHERE id = $run")" failed
lc='([0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3})'
expect_match "a: error names worker, rank, host, pid, cause and last contact" "$error" \
    "lost worker $vid on node-b \(rank $vrank, pid $vpid\): connection closed \((HEARTBEAT|PHASE_START|ENTRIES|GO) not delivered\), last contact at $lc"
expect_contains "a: coordinator prints the error" a.err "shardbench: error: $error"
expect_contains "a: the other worker was told (ABORT)" a-node-a.err "run aborted by the coordinator: $error"
last=$(printf '%s\n' "$error" | sed -n 's/.*last contact at //p')
expect_eq "a: last contact within 2 s before the kill" \
    "$(awk -v l="$(sod "$last")" -v k="$(sod "$killed_at")" 'BEGIN { d = k - l; if (d < -43200) d += 86400;
                                                                    print (d >= -0.05 && d < 2) ? "yes" : l " vs " k }')" yes
expect_eq "a: errors row for the lost worker" \
    "$(q a.db "SELECT rank, host, op, message FROM errors WHERE run_id = $run AND op <> 'run'")" \
    "$vrank|node-b|connection|${error#*: }"
expect_eq "a: no worker left running" "$(alive $pids)" 0

# ------------------------------------------------------------------ b, d
# The coordinator killed with SIGKILL after two finished epochs: every
# worker notices the silence and exits by itself; the database is whole,
# holds the finished epochs, and the next start marks the run 'interrupted'.
sb datagen dataset.data_folder=./m $D64 --db b.db
expect_eq "b: datagen" "$SB_RC" 0
start_remote b b.db "" dataset.data_folder=./m $D64 reader.batch_size=8 train.computation_time=0.1 train.epochs=5 \
    --accelerators 4
wait_sql b.db "SELECT count(*) >= 2 FROM epochs WHERE run_id = (SELECT max(id) FROM runs WHERE kind = 'train')"
run=$(last_run b.db)
cpid=$(q b.db "SELECT coordinator_pid FROM runs WHERE id = $run")
pids=$(q b.db "SELECT pid FROM run_workers WHERE run_id = $run")
kill -9 "$cpid"
t_kill=$(now)
if wait_gone $pids; then
    expect_below "b: every worker exits by itself after the coordinator's SIGKILL" "detected and exited in" "$(since "$t_kill")"
else
    fail "b: workers still running $LIMIT s after the coordinator's SIGKILL"
fi
wait "$WA"
expect_eq "b: worker node-a exits 1" "$?" 1
wait "$WB"
expect_eq "b: worker node-b exits 1" "$?" 1
wait "$COORD"
ep=$(re_escape "$EP")
for n in node-a node-b; do
    expect_match "b: $n names the lost coordinator" "$(grep -o 'error: lost the coordinator.*' b-$n.err)" \
        "error: lost the coordinator at $ep: nothing heard for [0-9]+\.[0-9] s"
done

# d: the database a SIGKILL left behind
expect_eq "d: integrity_check" "$(q b.db "PRAGMA integrity_check")" ok
finished=$(grep -c "info: epoch [0-9]*/5: " b.err)
expect_eq "d: at least 2 epochs finished before the kill" "$([ "$finished" -ge 2 ] && [ "$finished" -lt 5 ] && echo yes)" yes
expect_eq "d: every finished epoch is in the database, whole" \
    "$(q b.db "SELECT group_concat(epoch || ':' || samples, ' ') FROM (SELECT * FROM epochs WHERE run_id = $run ORDER BY epoch)")" \
    "$(seq -s ' ' 1 "$finished" | sed 's/\([0-9]*\)/\1:64/g')"
expect_eq "d: with every rank's row" \
    "$(q b.db "SELECT count(*), sum(samples) FROM rank_epochs WHERE run_id = $run AND epoch <= $finished")" \
    "$((4 * finished))|$((64 * finished))"
expect_eq "d: run still 'running' before the next start" "$(q b.db "SELECT status FROM runs WHERE id = $run")" running
for s in "" -wal; do [ -e "b.db$s" ] && cp "b.db$s" "b2.db$s"; done
"$SHARDBENCH" report --db b.db >d-report.out 2>d-report.err
expect_eq "d: report exits 0" "$?" 0
expect_contains "d: report warns" d-report.err "1 earlier run(s) in b.db were left 'running' by a coordinator that is gone: marked 'interrupted'"
expect_eq "d: report marked the run interrupted" "$(q b.db "SELECT status, error FROM runs WHERE id = $run")" \
    "interrupted|coordinator stopped before the run finished"
expect_contains "d: report shows it" d-report.out "status: interrupted after"
expect_eq "d: it ended with its last record, not when it was marked" \
    "$(q b.db "SELECT finished_at >= (SELECT max(finished_at) FROM rank_epochs WHERE run_id = $run) AND finished_at <= $t_kill FROM runs WHERE id = $run")" 1
sb run dataset.data_folder=./m $D64 reader.batch_size=8 train.epochs=1 train.computation_time=0 --accelerators 4 --db b2.db
expect_eq "d: next run exits 0" "$SB_RC" 0
expect_eq "d: next run marked the stale run interrupted" "$(q b2.db "SELECT group_concat(id || ':' || status, ' ') FROM runs")" \
    "1:succeeded 2:interrupted 3:succeeded"
expect_contains "d: next run warns" sb.err "1 earlier run(s) in b2.db were left 'running' by a coordinator that is gone"

# ------------------------------------------------------------------ c
# Ctrl-C (SIGINT) and SIGTERM on the coordinator: ABORT to every worker,
# run 'aborted' with its finished epochs, exit status 130 (SIGINT) or 143.
for sig in INT TERM; do
    db=c-$sig.db
    start_remote "c-$sig" "$db" "" dataset.data_folder=./m $D64 reader.batch_size=8 train.computation_time=0.1 \
        train.epochs=5 --accelerators 4
    wait_sql "$db" "SELECT count(*) >= 2 FROM epochs WHERE run_id = (SELECT max(id) FROM runs WHERE kind = 'train')"
    run=$(last_run "$db")
    cpid=$(q "$db" "SELECT coordinator_pid FROM runs WHERE id = $run")
    pids=$(q "$db" "SELECT pid FROM run_workers WHERE run_id = $run")
    kill -"$sig" "$cpid"
    t0=$(now)
    wait "$COORD"
    rc=$?
    expect_below "c: SIG$sig: coordinator aborted the run" "exited in" "$(since "$t0")"
    want=$([ "$sig" = INT ] && echo 130 || echo 143)
    expect_eq "c: SIG$sig: exit status 128 + signal" "$rc" "$want"
    wait "$WA"
    expect_eq "c: SIG$sig: node-a exits 1" "$?" 1
    wait "$WB"
    expect_eq "c: SIG$sig: node-b exits 1" "$?" 1
    n=$(q "$db" "SELECT count(*) FROM epochs WHERE run_id = $run")
    expect_eq "c: SIG$sig: finished epochs kept (2 to 4)" "$([ "$n" -ge 2 ] && [ "$n" -le 4 ] && echo yes)" yes
    expect_eq "c: SIG$sig: each of them whole" \
        "$(q "$db" "SELECT count(*) FROM epochs WHERE run_id = $run AND samples = 64 AND epoch <= $n")|$(q "$db" "SELECT count(*) FROM rank_epochs WHERE run_id = $run AND epoch <= $n")" \
        "$n|$((4 * n))"
    reason="interrupted by SIG$sig while training epoch $((n + 1))"
    expect_eq "c: SIG$sig: run aborted" "$(q "$db" "SELECT status, error FROM runs WHERE id = $run")" "aborted|$reason"
    expect_contains "c: SIG$sig: coordinator says why" "c-$sig.err" "shardbench: error: $reason"
    expect_contains "c: SIG$sig: summary" "c-$sig.out" "status: aborted after"
    for w in node-a node-b; do
        expect_contains "c: SIG$sig: $w was told (ABORT)" "c-$sig-$w.err" "run aborted by the coordinator: $reason"
    done
    expect_eq "c: SIG$sig: no worker left running" "$(alive $pids)" 0
done

# ------------------------------------------------------------------ e
# A network partition: the coordinator and node-a in one network namespace,
# node-b in another, joined by a veth pair; the link goes down mid-epoch.
netns_skip=""
if [ "$(id -u)" -ne 0 ]; then
    netns_skip="not root"
elif ! command -v ip >/dev/null; then
    netns_skip="no ip command (iproute2)"
else
    NS_C=sbfc$$
    NS_W=sbfw$$
    net=10.213.$(($$ % 250))
    NS_C_ADDR=$net.1
    if ip netns add "$NS_C" 2>ns.err; then NETNS+=("$NS_C"); else netns_skip="ip netns add: $(head -1 ns.err)"; fi
    if [ -z "$netns_skip" ] && ip netns add "$NS_W" 2>ns.err; then NETNS+=("$NS_W"); else netns_skip=${netns_skip:-"ip netns add: $(head -1 ns.err)"}; fi
    if [ -z "$netns_skip" ] && ! { ip link add "${NS_C}v" type veth peer name "${NS_W}v" \
        && ip link set "${NS_C}v" netns "$NS_C" && ip link set "${NS_W}v" netns "$NS_W" \
        && ip -n "$NS_C" addr add "$NS_C_ADDR/24" dev "${NS_C}v" && ip -n "$NS_W" addr add "$net.2/24" dev "${NS_W}v" \
        && ip -n "$NS_C" link set lo up && ip -n "$NS_W" link set lo up \
        && ip -n "$NS_C" link set "${NS_C}v" up && ip -n "$NS_W" link set "${NS_W}v" up \
        && ip netns exec "$NS_W" true; } 2>ns.err; then
        netns_skip="veth pair: $(head -1 ns.err)"
    fi
fi
if [ -n "$netns_skip" ]; then
    echo "ok - e: network partition # SKIP network namespaces not available: $netns_skip"
else
    start_remote e e.db "$NS_C" dataset.data_folder=./d $D32 reader.batch_size=1 train.computation_time=0.1 \
        train.epochs=3 --accelerators 4
    wait_sql e.db "SELECT count(*) = 2 FROM run_workers WHERE run_id = (SELECT max(id) FROM runs WHERE kind = 'train')"
    run=$(last_run e.db)
    wait_for e.err "info: training:"     # mid-epoch: once training began
    read -r vid vrank vpid <<<"$(q e.db "SELECT worker, first_rank, pid FROM run_workers WHERE run_id = $run AND host = 'node-b'" | tr '|' ' ')"
    pids=$(q e.db "SELECT pid FROM run_workers WHERE run_id = $run")
    ip -n "$NS_W" link set "${NS_W}v" down
    t0=$(now)
    noticed "e: partitioned worker noticed" e.err "lost worker" "$t0"
    wait "$COORD"
    expect_eq "e: coordinator exits 1" "$?" 1
    wait "$WA"
    expect_eq "e: node-a (same side) exits 1" "$?" 1
    wait "$WB"
    expect_eq "e: node-b (cut off) exits 1" "$?" 1
    expect_below "e: node-b gave up on the coordinator" "exited in" "$(since "$t0")"
    error=$(q e.db "SELECT error FROM runs WHERE id = $run")
    expect_eq "e: run failed" "$(q e.db "SELECT status FROM runs WHERE id = $run")" failed
    expect_match "e: error names worker, ranks, host, pid, silence and last contact" "$error" \
        "lost worker $vid on node-b \(ranks $vrank-$((vrank + 1)), pid $vpid\): no message for [0-9]+\.[0-9] s, last contact at $lc"
    expect_contains "e: coordinator prints the error" e.err "shardbench: error: $error"
    expect_contains "e: node-a was told (ABORT)" e-node-a.err "run aborted by the coordinator: $error"
    expect_match "e: node-b names the lost coordinator" "$(grep -o 'error: lost the coordinator.*' e-node-b.err)" \
        "error: lost the coordinator at $(re_escape "$EP"): nothing heard for [0-9]+\.[0-9] s"
    expect_eq "e: errors row for the lost worker" \
        "$(q e.db "SELECT rank, host, op, message FROM errors WHERE run_id = $run AND op <> 'run'")" \
        "$vrank|node-b|heartbeat|${error#*: }"
    expect_eq "e: no worker left running" "$(alive $pids)" 0
fi

# ------------------------------------------------------------------ f
# Files that cannot be read after the catalog was made: each is named with
# its path and cause, exit 1, run 'failed', an errors row. (A missing file
# is in test_errors.sh.)
F="dataset.data_folder=./f dataset.num_files_train=5 dataset.record_length_bytes=100 dataset.record_length_bytes_stdev=0
   reader.batch_size=1 --accelerators 1 --db f.db"
sb datagen $F
expect_eq "f: datagen" "$SB_RC" 0
root=$(cd f && pwd -P)
host=$(hostname)

# permission denied: chmod 000 denies nothing to root, so as root the worker
# runs without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH (setpriv)
chmod 000 f/train/img_2_of_5.npz
perm_skip=""
if ! cat f/train/img_2_of_5.npz >/dev/null 2>&1; then
    worker=$SHARDBENCH_WORKER
elif command -v setpriv >/dev/null \
     && ! setpriv --bounding-set -dac_override,-dac_read_search cat f/train/img_2_of_5.npz >/dev/null 2>&1 \
     && setpriv --bounding-set -dac_override,-dac_read_search cat f/train/img_1_of_5.npz >/dev/null 2>&1; then
    printf '#!/bin/sh\nexec setpriv --bounding-set -dac_override,-dac_read_search "%s" "$@"\n' "$SHARDBENCH_WORKER" >nodac-worker
    chmod +x nodac-worker
    worker=$SCRATCH/nodac-worker
else
    perm_skip="running as root and cannot drop CAP_DAC_OVERRIDE with setpriv"
fi
if [ -n "$perm_skip" ]; then
    echo "ok - f: permission denied # SKIP $perm_skip"
else
    SHARDBENCH_WORKER=$worker sb run $F
    run=$(last_run f.db)
    expect_eq "f: permission denied exits 1" "$SB_RC" 1
    msg="open $root/train/img_2_of_5.npz: Permission denied"
    expect_contains "f: permission denied named" sb.err "shardbench: error: rank 0 on $host: $msg"
    expect_eq "f: permission denied: run failed" "$(q f.db "SELECT status, error FROM runs WHERE id = $run")" \
        "failed|rank 0 on $host: $msg"
    expect_eq "f: permission denied: errors row" \
        "$(q f.db "SELECT rank, host, op, target, errno_val, message FROM errors WHERE run_id = $run AND op = 'read'")" \
        "0|$host|read|train/img_2_of_5.npz|13|$msg"
fi
chmod 644 f/train/img_2_of_5.npz

# short read: the file is shorter than the catalog says (truncation does not
# change the folder, so the catalog is reused on purpose)
truncate -s 40 f/train/img_3_of_5.npz
sb run $F
run=$(last_run f.db)
expect_eq "f: short read exits 1" "$SB_RC" 1
expect_contains "f: catalog reused (stale on purpose)" sb.err "catalog 1 reused: 5 objects"
# (an npz of one 100-byte record is 574 bytes: npy headers and zip framing)
msg="short read $root/train/img_3_of_5.npz: file ends at offset 40, expected 574 bytes from offset 0"
expect_contains "f: short read named" sb.err "shardbench: error: rank 0 on $host: $msg"
expect_eq "f: short read: run failed" "$(q f.db "SELECT status, error FROM runs WHERE id = $run")" \
    "failed|rank 0 on $host: $msg"
expect_eq "f: short read: errors row" \
    "$(q f.db "SELECT rank, host, op, target, errno_val, message FROM errors WHERE run_id = $run AND op = 'read'")" \
    "0|$host|read|train/img_3_of_5.npz|0|$msg"

finish
