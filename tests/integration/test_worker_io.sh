#!/usr/bin/env bash
# Worker I/O and start-up limits: a worker pointed at a closed
# port, a file-descriptor limit too small for the ranks, dataset objects
# that are not regular files, and a read that never returns. Each case
# asserts the exit status, the exact message and that the run ends within a
# generous bound.
. "$(dirname "$0")/lib.sh"

now () { date +%s.%N; }
since () { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# expect_below WHAT SECONDS LIMIT
expect_below () {
    if awk -v t="$2" -v m="$3" 'BEGIN { exit !(t < m) }'; then pass "$1 ($2 s)"; else fail "$1: $2 s, limit $3 s"; fi
}
# a loopback port nothing listens on: bind it, note it, close it
free_port () { python3 -c 'import socket, sys; s = socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])' "$SB_LO"; }

# ------------------------------------------------------------------ closed port
# A worker pointed at a port where nothing listens says so within seconds
# (it waited 30 s for an answer before); with --timeout 0 (a long-lived
# agent) it says so once and keeps waiting.
port=$(free_port)
t0=$(now)
timeout 60 "$SHARDBENCH_WORKER" --coordinator "tcp://$SB_LO:$port" >closed.out 2>closed.err
rc=$?
expect_eq "closed port: exit status 1" "$rc" 1
expect_below "closed port: fails fast" "$(since "$t0")" 10
expect_eq "closed port: message" "$(sed -n 's/.*error: //p' closed.err)" \
    "nothing listens at tcp://$SB_LO:$port (connection refused); is the coordinator running?"

timeout 60 "$SHARDBENCH_WORKER" --coordinator "tcp://[::1]:$port" --timeout 0 >wait.out 2>wait.err &
agent=$!
await_text wait.err "nothing listens"
sleep 1
if kill -0 "$agent" 2>/dev/null; then pass "closed port, --timeout 0: still waiting"; else fail "closed port, --timeout 0: exited"; fi
kill "$agent" 2>/dev/null
wait "$agent"
expect_eq "closed port, --timeout 0: says it once and waits" "$(sed -n 's/.*warning: //p' wait.err)" \
    "nothing listens at tcp://[::1]:$port (connection refused); waiting for the coordinator for as long as it takes"

t0=$(now)
timeout 60 "$SHARDBENCH_WORKER" --coordinator "tcp://$SB_LO:$port" --timeout 4 >t4.out 2>t4.err
expect_eq "closed port, --timeout 4: exit status 1" "$?" 1
expect_below "closed port, --timeout 4: ends at its timeout" "$(since "$t0")" 10
if grep -qE "error: nothing listens at tcp://${SB_LO//./\\.}:$port \(connection refused for [0-9]+ s\); is the coordinator running\?$" t4.err; then
    pass "closed port, --timeout 4: message at the timeout"
else
    fail "closed port, --timeout 4: message"; cat t4.err
fi

# ------------------------------------------------------------------ fd budget
# ulimit -n 256 with 32 ranks: the worker counts the descriptors its ranks
# need before it makes their sockets and refuses with the numbers (it
# aborted in CZMQ's zsock_new_checked assertion before).
D="dataset.data_folder=./d dataset.num_files_train=64 dataset.record_length_bytes=1000 dataset.record_length_bytes_stdev=0"
sb datagen $D --db fd.db
expect_eq "fd: datagen" "$SB_RC" 0
t0=$(now)
(ulimit -n 256 && exec timeout 120 "$SHARDBENCH" run $D train.epochs=1 reader.batch_size=1 reader.read_threads=2 \
    --accelerators 32 --db fd.db >fd.out 2>fd.err)
rc=$?
expect_eq "fd: ulimit -n 256, 32 ranks: exit status 1" "$rc" 1
expect_below "fd: refused at once" "$(since "$t0")" 30
if grep -q "Assertion\|signal 6\|Aborted" fd.err; then fail "fd: the worker aborted"; sed 's/^/    /' fd.err | tail -5; else pass "fd: no abort"; fi
host=$(hostname)
fdre="file descriptors: 32 ranks x 8 \(2 reads in flight \+ 6\) \+ ([0-9]+) for the agent = ([0-9]+) needed, the limit is 256 \(hard limit 256\): raise it \(\`ulimit -n ([0-9]+)\`, LimitNOFILE= for a service\) or run fewer ranks per worker or fewer reader\.read_threads"
line=$(grep -E "^  $host +\(this host\) +file descriptors" fd.err | head -1 | sed -E 's/^ +[^ ]+ +\(this host\) +//')
if printf '%s\n' "$line" | grep -qxE "$fdre"; then pass "fd: the coordinator names the host and the numbers"; else fail "fd: message '$line'"; fi
read -r base need fix <<<"$(printf '%s\n' "$line" | sed -E "s/^$fdre\$/\1 \2 \3/")"
expect_eq "fd: the sum adds up, the fix names it" "$((32 * 8 + base)) $need" "$need $fix"
# the number it names is enough
(ulimit -n "$need" && exec timeout 120 "$SHARDBENCH" run $D train.epochs=1 reader.batch_size=1 reader.read_threads=2 \
    --accelerators 32 --db fd.db >fd2.out 2>fd2.err)
expect_eq "fd: ulimit -n $need (the number it named) runs" "$?" 0

# below what the agent itself needs: refused before any socket
(ulimit -n 20 && exec timeout 60 "$SHARDBENCH_WORKER" --coordinator tcp://127.0.0.1:9 >fd3.out 2>fd3.err)
expect_eq "fd: ulimit -n 20: worker exit status 1" "$?" 1
expect_eq "fd: ulimit -n 20: message" "$(cat fd3.err)" \
    "shardbench-worker: file descriptors: the limit is 20 (hard limit 20), the agent needs 64 before its first rank: raise it (\`ulimit -n\`, LimitNOFILE= for a service)"

# ------------------------------------------------------------------ not regular files
# dataset.skip_listing reads whole objects of unknown size: one that is a
# FIFO (whose open blocked for ever) or a link to /dev/zero (read for ever)
# is refused, naming the rank, host and path; exit 1, an errors row.
F="dataset.data_folder=./f dataset.num_files_train=5 dataset.record_length_bytes=100 dataset.record_length_bytes_stdev=0
   reader.batch_size=1 --accelerators 1 --db f.db"
sb datagen $F
expect_eq "irregular: datagen" "$SB_RC" 0
root=$(cd f && pwd -P)
for kind in fifo zero; do
    rm -f f/train/img_2_of_5.npz
    if [ "$kind" = fifo ]; then mkfifo f/train/img_2_of_5.npz; what="a FIFO"
    else ln -s /dev/zero f/train/img_2_of_5.npz; what="a symbolic link to a character device"; fi
    t0=$(now)
    sb run $F dataset.skip_listing=true
    expect_eq "irregular $kind: exit status 1" "$SB_RC" 1
    expect_below "irregular $kind: refused at once" "$(since "$t0")" 60
    msg="open $root/train/img_2_of_5.npz: not a regular file ($what): a dataset object must be a regular file"
    expect_contains "irregular $kind: named with rank and host" sb.err "shardbench: error: rank 0 on $host: $msg"
    run=$(q f.db "SELECT max(id) FROM runs WHERE kind = 'train'")
    expect_eq "irregular $kind: run failed" "$(q f.db "SELECT status, error FROM runs WHERE id = $run")" \
        "failed|rank 0 on $host: $msg"
    expect_eq "irregular $kind: errors row" \
        "$(q f.db "SELECT rank, host, op, target, message FROM errors WHERE run_id = $run AND op = 'read'")" \
        "0|$host|read|train/img_2_of_5.npz|$msg"
done
rm -f f/train/img_2_of_5.npz

# ------------------------------------------------------------------ stalled read
# A read that does not return while heartbeats flow (a stuck NFS or FUSE
# mount): here an open that waits on a file lease another process holds
# (the kernel makes it wait /proc/sys/fs/lease-break-time, 45 s by default).
# With shardbench.stall_timeout_s=2 the run fails within seconds, naming the
# rank, host and path, and the worker exits without waiting for its stuck
# thread.
S="dataset.data_folder=./s dataset.num_files_train=4 dataset.record_length_bytes=100 dataset.record_length_bytes_stdev=0
   reader.batch_size=1 --accelerators 1 --db s.db"
sb datagen $S
expect_eq "stall: datagen" "$SB_RC" 0
root=$(cd s && pwd -P)
# lease FILE (lib.sh): a process holds a write lease on FILE; HOLDER
lease s/train/img_1_of_4.npz
holder=$HOLDER
if ! grep -q leased lease.out; then
    echo "ok - stall: read that never returns # SKIP no file lease: $(tail -1 lease.err)"
else
    t0=$(now)
    sb run $S shardbench.stall_timeout_s=2
    took=$(since "$t0")
    expect_eq "stall: exit status 1" "$SB_RC" 1
    expect_below "stall: the run ends (the open waits 45 s)" "$took" 30
    run=$(q s.db "SELECT max(id) FROM runs WHERE kind = 'train'")
    re="rank 0 on $host: read $root/train/img_1_of_4\.npz: no progress for [0-9]+\.[0-9] s \(shardbench\.stall_timeout_s = 2\): the open or read has not returned \(a FIFO, a stuck NFS or FUSE mount\?\)"
    if q s.db "SELECT error FROM runs WHERE id = $run" | grep -qxE "$re"; then pass "stall: run error names rank, host, path"
    else fail "stall: run error '$(q s.db "SELECT error FROM runs WHERE id = $run")'"; fi
    if grep -qE "^shardbench: error: $re$" sb.err; then pass "stall: coordinator says it"; else fail "stall: coordinator message"; sed 's/^/    /' sb.err | tail -5; fi
    expect_eq "stall: errors row" \
        "$(q s.db "SELECT rank, host, op, target, errno_val FROM errors WHERE run_id = $run AND op = 'read'")" \
        "0|$host|read|train/img_1_of_4.npz|110"
    wpid=$(q s.db "SELECT pid FROM run_workers WHERE run_id = $run")
    if [ -n "$wpid" ] && ! kill -0 "$wpid" 2>/dev/null; then pass "stall: the worker exited"; else fail "stall: worker $wpid still runs"; fi

    # stall detection off, the run interrupted (SIGINT) while the read
    # hangs: the worker, started by hand (no coordinator kills it), exits by
    # itself when told (ABORT); it joined its stuck thread before, until the
    # lease broke 45 s later
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
    lease s/train/img_2_of_4.npz    # a fresh lease: the first one is being broken
    holder=$HOLDER
    # not under timeout(1): it passes a signal on to its whole process group, so the coordinator
    # would get SIGINT twice, and a second signal ends it at once, before it tells its workers
    "$SHARDBENCH" run $S shardbench.stall_timeout_s=0 --workers 1 --bind "tcp://$SB_LO:*" \
        >int.out 2>int.err &
    coord=$!
    ep=$(coordinator_endpoint int.err)
    timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host node-s --timeout 10 >int-w.out 2>int-w.err &
    worker=$!
    # interrupted once a read hangs: the worker's open waits on the lease
    lease_breaking s/train/img_2_of_4.npz || fail "stall off, SIGINT: no read waited on the lease"
    kill -INT "$coord"
    t0=$(now)
    wait "$coord"
    expect_eq "stall off, SIGINT: coordinator exits 130 (128 + SIGINT)" "$?" 130
    wait "$worker"
    expect_eq "stall off, SIGINT: the worker exits 1 although a read hangs" "$?" 1
    expect_below "stall off, SIGINT: the worker exits by itself within" "$(since "$t0")" 15
    expect_contains "stall off, SIGINT: the worker was told" int-w.err \
        "run aborted by the coordinator: interrupted by SIGINT while training epoch 1"
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null

    # many threads stuck at once: 4 ranks x 4 read threads, every dataset
    # file leased, so each thread waits in its open. After the stall error
    # the worker stops all its readers, then joins them against one
    # deadline, waking the stuck threads together: it exits within seconds.
    # (It joined them one by one, a second or more each: 16 s and more here;
    # 32 ranks x 8 threads on a hung mount, 17 minutes.)
    M="dataset.data_folder=./m dataset.num_files_train=32 dataset.record_length_bytes=100
       dataset.record_length_bytes_stdev=0 reader.batch_size=4 reader.read_threads=4 --accelerators 4 --db m.db"
    sb datagen $M
    expect_eq "stall, 16 threads: datagen" "$SB_RC" 0
    rm -f mlease.out
    python3 - m/train >mlease.out 2>mlease.err <<'PY' &
import fcntl, os, signal, sys, time
signal.signal(signal.SIGIO, signal.SIG_IGN)
fds = []
for name in sorted(os.listdir(sys.argv[1])):
    fd = os.open(os.path.join(sys.argv[1], name), os.O_RDONLY)
    fcntl.fcntl(fd, 1024, fcntl.F_WRLCK)        # F_SETLEASE
    fds.append(fd)
print("leased", len(fds), flush=True)
time.sleep(120)
PY
    holder=$!
    await_text mlease.out leased
    expect_eq "stall, 16 threads: every file leased" "$(cat mlease.out)" "leased 32"
    timeout 120 "$SHARDBENCH" run $M shardbench.stall_timeout_s=2 --workers 1 --bind "tcp://$SB_LO:*" \
        >many.out 2>many.err &
    coord=$!
    ep=$(coordinator_endpoint many.err)
    timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host node-m --timeout 10 >many-w.out 2>many-w.err &
    worker=$!
    wait "$coord"
    expect_eq "stall, 16 threads: coordinator exits 1" "$?" 1
    t0=$(now)
    wait "$worker"
    expect_eq "stall, 16 threads: worker exit status 1" "$?" 1
    expect_below "stall, 16 threads: the worker exits after the stall within" "$(since "$t0")" 8
    if grep -qE "^shardbench: error: rank [0-3] on node-m: read .*/m/train/img_[0-9]+_of_32\.npz: no progress for " many.err; then
        pass "stall, 16 threads: the coordinator names the stall"
    else
        fail "stall, 16 threads: coordinator message"; sed 's/^/    /' many.err | tail -5
    fi
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

finish
