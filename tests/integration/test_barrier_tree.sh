#!/usr/bin/env bash
# The step barrier as a tree of relay workers (coordinator/session/barrier.c,
# worker/agent/barrier_tree.c): 7 workers of one rank with
# shardbench.barrier_fanout 2 make a tree of 3 levels (workers 0 and 1 at the
# top; 0 relays 2 and 3, 1 relays 4 and 5, 2 relays 6). Every rank finishes
# every step of every epoch; a worker or a relay killed mid-epoch fails the
# run at once, naming its rank, host and pid (and what it relayed); a bad
# fanout is refused naming file, line and key.
. "$(dirname "$0")/lib.sh"

cleanup () {
    local p
    for p in $(jobs -p); do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

# 7 ranks x 12 samples, batch 1: 12 steps per rank and epoch
SYN="storage.storage_type=synthetic dataset.data_folder=synthetic://tree dataset.num_files_train=84
     dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 reader.batch_size=1
     train.sync=step shardbench.barrier_fanout=2"

# ------------------------------------------------------------------ a whole run through the tree
# shellcheck disable=SC2086
sb run quickstart $SYN train.epochs=2 train.computation_time=0.002 --accelerators 7 --local 7 --db t.db
expect_eq "tree run: exit status" "$SB_RC" 0
expect_contains "tree run: the tree's shape" sb.err \
    "info: step barrier: a tree of 3 relay workers, 2 children each, 2 workers at the top"
expect_eq "tree run: steps per epoch" "$(q t.db "SELECT group_concat(epoch || ':' || batches || ':' || samples, ' ')
    FROM (SELECT * FROM epochs ORDER BY epoch)")" "1:12:84 2:12:84"
expect_eq "tree run: every rank finished every step of every epoch" \
    "$(q t.db "SELECT count(*), sum(batches), sum(samples), count(DISTINCT rank) FROM rank_epochs")" "14|168|168|7"
expect_eq "tree run: the barrier's own cost measured in both epochs" \
    "$(q t.db "SELECT count(*) FROM epochs WHERE barrier_own_p50_ms IS NOT NULL AND barrier_p50_ms IS NOT NULL")" 2

# ------------------------------------------------------------------ CURVE: relays are CURVE servers too
# workers the coordinator did not start, over TCP with keys: each relay makes
# a key pair for the run, its children learn its public key from the
# coordinator and present their own certificates
"$SHARDBENCH" keys --dir keys >/dev/null
rm -f curve.err
# shellcheck disable=SC2086
timeout 120 "$SHARDBENCH" run quickstart $SYN train.epochs=1 train.computation_time=0.002 --accelerators 7 --workers 7 \
    --bind "tcp://$SB_LO:*" --keys keys --db curve.db --progress off >curve.out 2>curve.err &
coord=$!
ep=$(coordinator_endpoint curve.err)
for i in 0 1 2 3 4 5 6; do
    "$SHARDBENCH_WORKER" --coordinator "$ep" --host "node$i" --keys keys --timeout 30 2>"curve-w$i.err" &
done
wait "$coord"
expect_eq "CURVE tree run: exit status" "$?" 0
wait
expect_contains "CURVE tree run: the tree's shape" curve.err \
    "info: step barrier: a tree of 3 relay workers, 2 children each, 2 workers at the top"
expect_eq "CURVE tree run: every rank finished every step" \
    "$(q curve.db "SELECT count(*), sum(batches), count(DISTINCT rank) FROM rank_epochs")" "7|84|7"

# ------------------------------------------------------------------ a worker or a relay killed mid-epoch
# kill_mid_epoch NAME WORKER: a long epoch (400 steps of 0.05 s); once it
# started, worker WORKER is killed with SIGKILL; the run must fail naming it
kill_mid_epoch () {
    local name=$1 worker=$2 pid host
    rm -f "$name.err"
    # shellcheck disable=SC2086
    timeout 120 "$SHARDBENCH" run quickstart $SYN dataset.num_files_train=2800 train.epochs=1 \
        train.computation_time=0.05 --accelerators 7 --local 7 --db "$name.db" >"$name.out" 2>"$name.err" &
    local coord=$!
    local end=$((SECONDS + 60))
    until grep -q "info: training:" "$name.err" 2>/dev/null; do
        { [ "$SECONDS" -ge "$end" ] || ! kill -0 "$coord" 2>/dev/null; } && break
        sleep 0.05
    done
    read -r host pid < <(sed -n "s/.*shardbench: info: worker $worker joined: \([^ ]*\) pid \([0-9]*\),.*/\1 \2/p" \
        "$name.err")
    if [ -z "${pid:-}" ]; then
        fail "$name: worker $worker never joined or the epoch never started"
        kill "$coord" 2>/dev/null
        wait "$coord"
        KILL_RC=none KILL_PID=none KILL_HOST=none
        return
    fi
    probe_relays "$pid"
    kill -9 "$pid"
    wait "$coord"
    KILL_RC=$?
    KILL_PID=$pid
    KILL_HOST=$host
}

# probe_relays PID: the relay sockets of the run worker PID belongs to (in
# its coordinator's private folder, or any abstract one), into RELAY_SOCKS
# (how many), RELAY_DIR (the folder) and RELAY_OPEN (how many another local
# user, nobody, can connect to: any of them could pose as a child)
probe_relays () {
    local ep s coord pids
    ep=$(tr '\0' '\n' <"/proc/$1/cmdline" | sed -n 's|^ipc://\(.*\)/coordinator.sock$|\1|p')
    # an abstract relay socket is named by its worker's pid: only those of
    # this run's workers (the coordinator's children) count, not another
    # test's running beside this one
    coord=$(awk '{ print $4 }' "/proc/$1/stat")
    pids=" $(pgrep -P "$coord" | tr '\n' ' ')"
    RELAY_DIR=$ep RELAY_SOCKS=0 RELAY_OPEN=0
    for s in $(awk -v d="$ep/" -v pids="$pids" 'NR > 1 && $8 !~ /coordinator.sock$/ {
                   if (index($8, d) == 1) print $8
                   else if (index($8, "@shardbench-relay-") == 1) {
                       split(substr($8, 19), w, "-"); if (index(pids, " " w[1] " ")) print $8 }
               }' /proc/net/unix | sort -u); do
        RELAY_SOCKS=$((RELAY_SOCKS + 1))
        [ "$(id -u)" = 0 ] || continue
        # /usr/bin/python3: nobody may not run the caller's own python
        setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import socket, sys
a = sys.argv[1]
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0" + a[1:] if a.startswith("@") else a)
except PermissionError:
    sys.exit(3)' "$s"
        case $? in
            0) RELAY_OPEN=$((RELAY_OPEN + 1)) ;;
            3) ;;
            *) RELAY_OPEN=$((RELAY_OPEN + 1000)) ;;   # could not tell: fails the test
        esac
    done
}

kill_mid_epoch leaf 6
expect_eq "a leaf killed: exit status" "$KILL_RC" 1
expect_contains "a leaf killed: named by rank, host and pid" leaf.err \
    "shardbench: error: local worker 6 on $KILL_HOST (rank 6, pid $KILL_PID) ended: killed by signal 9 (Killed)"

kill_mid_epoch relay 2
expect_eq "a relay killed: exit status" "$KILL_RC" 1
expect_contains "a relay killed: named by rank, host and pid, as the relay of worker 6" relay.err \
    "shardbench: error: local worker 2 on $KILL_HOST (rank 2, pid $KILL_PID) (relay of the step barrier for worker 6) ended: killed by signal 9 (Killed)"

expect_eq "relay sockets: one per relay worker, beside the coordinator's" "$RELAY_SOCKS" 3
expect_eq "relay sockets: no other local user can connect to one" "$RELAY_OPEN" 0
expect_eq "relay sockets: the private folder is gone, a killed relay's socket with it" \
    "$( [ -n "$RELAY_DIR" ] && [ -e "$RELAY_DIR" ] && echo left || echo gone)" gone
expect_eq "relay sockets: nothing left that could not be removed" "$(grep -c 'cannot remove' relay.err)" 0

kill_mid_epoch top 0
expect_eq "a top relay killed: exit status" "$KILL_RC" 1
expect_contains "a top relay killed: named as the relay of workers 2-3" top.err \
    "shardbench: error: local worker 0 on $KILL_HOST (rank 0, pid $KILL_PID) (relay of the step barrier for workers 2-3) ended: killed by signal 9 (Killed)"

# ------------------------------------------------------------------ --workers: a relay lost, not reaped
# Workers the coordinator did not start (as on other hosts): relays bind where
# their connection to the coordinator leaves from (tcp://127.0.0.1), and a
# relay killed is found by its closed connection, not by waitpid; its
# children, waiting for a GO that cannot come, are ended by the ABORT.
rm -f remote.err
# shellcheck disable=SC2086
timeout 120 "$SHARDBENCH" run quickstart $SYN dataset.num_files_train=2800 train.epochs=1 train.computation_time=0.05 \
    --accelerators 7 --workers 7 --bind "tcp://$SB_LO:*" --db remote.db --progress off >remote.out 2>remote.err &
coord=$!
ep=$(coordinator_endpoint remote.err)
wpids=()
for i in 0 1 2 3 4 5 6; do
    "$SHARDBENCH_WORKER" --coordinator "$ep" --host "node$i" --timeout 30 2>"remote-w$i.err" &
    wpids+=($!)
done
end=$((SECONDS + 60))
until grep -q "info: training:" remote.err 2>/dev/null || [ "$SECONDS" -ge "$end" ] || ! kill -0 "$coord" 2>/dev/null; do
    sleep 0.05
done
# the worker that joined as worker 1 relays workers 4 and 5
read -r rhost rpid < <(sed -n 's/.*shardbench: info: worker 1 joined: \([^ ]*\) pid \([0-9]*\),.*/\1 \2/p' remote.err)
expect_contains "--workers: the relays bound on the coordinator's route" remote.err \
    "info: step barrier: a tree of 3 relay workers, 2 children each, 2 workers at the top"
if [ -n "${rpid:-}" ]; then
    kill -9 "$rpid"
else
    fail "--workers: worker 1 never joined or the epoch never started"
    kill "$coord" 2>/dev/null
fi
wait "$coord"
expect_eq "--workers: a relay killed: exit status" "$?" 1
expect_contains "--workers: a relay killed: named by rank, host and pid, as the relay of workers 4-5" remote.err \
    "shardbench: error: lost worker 1 on $rhost (rank 1, pid $rpid) (relay of the step barrier for workers 4-5): connection closed"
left=0
for p in "${wpids[@]}"; do
    wait "$p" 2>/dev/null
    kill -0 "$p" 2>/dev/null && left=$((left + 1))
done
expect_eq "--workers: every other worker ended" "$left" 0

# ------------------------------------------------------------------ a relay without descriptors for its children
# 96 workers, fanout 48: worker 0 relays workers 48-95. Started under
# `ulimit -n 64` (its ranks fit), it must say that its children do not,
# with the numbers and the fix, before making a socket (CZMQ would abort)
rm -f fds.err
timeout 120 "$SHARDBENCH" run quickstart storage.storage_type=synthetic dataset.data_folder=synthetic://fds \
    dataset.num_files_train=960 dataset.record_length_bytes=4096 reader.batch_size=1 train.epochs=1 \
    shardbench.barrier_fanout=48 --accelerators 96 --workers 96 --bind "tcp://$SB_LO:*" --progress off \
    --db fds.db >fds.out 2>fds.err &
coord=$!
ep=$(coordinator_endpoint fds.err)
(ulimit -n 64; exec "$SHARDBENCH_WORKER" --coordinator "$ep" --host tight --timeout 30 2>fds-w0.err) &
end=$((SECONDS + 30))
until grep -q "info: worker 0 joined: tight" fds.err 2>/dev/null || [ "$SECONDS" -ge "$end" ] || ! kill -0 "$coord" 2>/dev/null
do
    sleep 0.05
done
others=()
for i in $(seq 1 95); do
    "$SHARDBENCH_WORKER" --coordinator "$ep" --host "n$i" --timeout 30 2>/dev/null &
    others+=($!)
done
wait "$coord"
expect_eq "relay short of descriptors: exit status" "$?" 1
expect_contains "relay short of descriptors: named, with the numbers and the fix" fds.err \
    "shardbench: error: worker 0 on tight (rank 0) left: cannot relay the step barrier for 48 workers:"
expect_contains "relay short of descriptors: the limit and the fix" fds.err \
    "limit 64 (hard limit 64): raise it with \`ulimit -n\` or LimitNOFILE, or lower shardbench.barrier_fanout"
# those the coordinator had not admitted yet would wait out their --timeout for it
kill "${others[@]}" 2>/dev/null
wait

# ------------------------------------------------------------------ bad values
printf 'shardbench:\n  barrier_fanout: 1\n' >fanout.yaml
# shellcheck disable=SC2086
sb run fanout.yaml storage.storage_type=synthetic --local 1 --db bad.db
expect_eq "fanout 1: exit status" "$SB_RC" 2
expect_contains "fanout 1: refused naming file, line and key" sb.err \
    "shardbench: error: fanout.yaml:2: key 'shardbench.barrier_fanout': 1 is out of range [2, 65536]"
sb run quickstart storage.storage_type=synthetic shardbench.barrier_fanout=many --local 1 --db bad.db
expect_eq "fanout not a number: exit status" "$SB_RC" 2
expect_contains "fanout not a number: refused naming the key" sb.err "key 'shardbench.barrier_fanout'"

finish
