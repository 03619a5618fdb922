#!/usr/bin/env bash
# The coordinator's lifecycle: signals in every phase (listing, waiting for
# workers, training; S3 requests that never end), file-descriptor limits, join timeouts, bind addresses.
# Real processes and real SQLite files; exact statuses, messages and rows.
. "$(dirname "$0")/lib.sh"

SYN="storage.storage_type=synthetic"

cleanup () {
    local p
    for p in $(jobs -p); do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

now () { date +%s.%N; }
since () { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# expect_under WHAT SECONDS LIMIT
expect_under () {
    if awk -v t="$2" -v m="$3" 'BEGIN { exit !(t < m) }'; then pass "$1 ($2 s)"; else fail "$1: $2 s, limit $3 s"; fi
}
# wait_for FILE TEXT [SECONDS]: 0 when TEXT shows up in FILE in time
wait_for () {
    local end=$((SECONDS + ${3:-30}))
    until grep -qF -- "$2" "$1" 2>/dev/null; do
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.02
    done
}
# bg NAME ARGS...: shardbench in the background, output in NAME.out/.err, pid in BG.
# An earlier run's NAME.err is removed first: the background redirection may come
# after a reader (coordinator_endpoint) looks, which must not find the old endpoint.
bg () {
    local name=$1
    shift
    rm -f -- "$name.out" "$name.err"
    "$SHARDBENCH" "$@" >"$name.out" 2>"$name.err" &
    BG=$!
}
# stop_after SIG PID NAME: send SIG, wait, check the time; status in RC, seconds in TOOK
stop_after () {
    local t0
    kill -"$1" "$2"
    t0=$(now)
    wait "$2"
    RC=$?
    TOOK=$(since "$t0")
}

# ------------------------------------------------------------------ signals
# A 20M-object synthetic catalog takes far longer than a second to list:
# SIGINT after 1 s stops it at once, exit 130, no catalog recorded.
bg cat-int catalog $SYN dataset.num_files_train=20000000 --db cat.db --progress off
sleep 1
stop_after INT "$BG" cat-int
expect_eq "SIGINT while listing: exit status 130" "$RC" 130
expect_under "SIGINT while listing: stopped promptly" "$TOOK" 3
expect_contains "SIGINT while listing: says so" cat-int.err \
    "shardbench: error: interrupted by SIGINT while listing the dataset (listing interrupted; no catalog was recorded)"
expect_eq "SIGINT while listing: no catalog, no objects" "$(q cat.db "SELECT count(*) FROM catalogs") $(q cat.db "SELECT count(*) FROM objects")" "0 0"

# SIGTERM the same way, while the synthetic listing of a run (before workers;
# --relist: a synthetic run lists only when asked)
bg cat-term run $SYN dataset.num_files_train=20000000 --relist --db cat.db --progress off
sleep 1
stop_after TERM "$BG" cat-term
expect_eq "SIGTERM while listing: exit status 143" "$RC" 143
expect_under "SIGTERM while listing: stopped promptly" "$TOOK" 3
expect_contains "SIGTERM while listing: says so" cat-term.err "interrupted by SIGTERM while listing the dataset"
expect_eq "SIGTERM while listing: no catalog, no run" "$(q cat.db "SELECT count(*) FROM catalogs") $(q cat.db "SELECT count(*) FROM runs")" "0 0"

# SIGTERM while waiting for workers that never come
bg wait-term run $SYN dataset.num_files_train=64 --accelerators 2 --workers 2 --bind 'tcp://127.0.0.1:*' --db w.db --progress off
wait_for wait-term.err "waiting for 2 workers"
stop_after TERM "$BG" wait-term
expect_eq "SIGTERM while waiting for workers: exit status 143" "$RC" 143
expect_under "SIGTERM while waiting for workers: stopped promptly" "$TOOK" 3
expect_contains "SIGTERM while waiting for workers: says so" wait-term.err \
    "shardbench: error: interrupted by SIGTERM while waiting for 2 workers to join tcp://127.0.0.1:"

# SIGHUP during a run: a clean stop like SIGTERM, summary, run recorded
bg hup run $SYN dataset.num_files_train=64 reader.batch_size=4 train.epochs=200 train.computation_time=0.02 \
    --local 2 --accelerators 2 --db hup.db --progress off
wait_for hup.err "epoch 2/200"
# its local workers left the terminal's process group: a Ctrl-C or hangup
# of the terminal reaches the coordinator alone, which stops them in order
cpg=$(ps -o pgid= -p "$BG" | tr -d ' ')
wpg=$(for p in $(q hup.db "SELECT pid FROM run_workers WHERE run_id = (SELECT max(id) FROM runs)"); do
    ps -o pgid= -p "$p" | tr -d ' '; done | sort -u | tr '\n' ' ')
expect_eq "local workers in their own process groups" "$(for g in $wpg; do [ "$g" = "$cpg" ] && echo shared; done)" ""
stop_after HUP "$BG" hup
expect_eq "SIGHUP during a run: exit status 129" "$RC" 129
expect_under "SIGHUP during a run: stopped promptly" "$TOOK" 3
expect_contains "SIGHUP during a run: summary printed" hup.out "status: aborted after"
run=$(q hup.db "SELECT max(id) FROM runs")
expect_eq "SIGHUP during a run: recorded aborted" \
    "$(q hup.db "SELECT status, error LIKE 'interrupted by SIGHUP while training epoch %' FROM runs WHERE id = $run")" "aborted|1"
expect_eq "SIGHUP during a run: error row" "$(q hup.db "SELECT count(*) FROM errors WHERE run_id = $run AND op = 'run' AND message LIKE 'interrupted by SIGHUP%'")" 1
expect_contains "SIGHUP during a run: workers told" hup.err "run aborted by the coordinator: interrupted by SIGHUP"

# under nohup, SIGHUP stays ignored: the run goes on and succeeds
nohup "$SHARDBENCH" run $SYN dataset.num_files_train=64 reader.batch_size=4 train.epochs=4 train.computation_time=0.05 \
    --local 1 --accelerators 1 --db nohup.db --progress off >nohup.out 2>nohup.err &
np=$!
wait_for nohup.err "epoch 1/4"
kill -HUP "$np"
wait "$np"
expect_eq "SIGHUP under nohup: ignored, exit status 0" "$?" 0
expect_eq "SIGHUP under nohup: run succeeded" "$(q nohup.db "SELECT status FROM runs")" succeeded

# ------------------------------------------------------------------ file descriptors
# A hard limit the workers' connections cannot fit in: refused at once with
# the numbers (before any listing or socket), not a run that waits forever.
(ulimit -n 40; exec timeout 20 "$SHARDBENCH" run $SYN dataset.num_files_train=64 --accelerators 40 --workers 40 \
    --bind 'tcp://127.0.0.1:*' --db fd.db --progress off) >fd40.out 2>fd40.err
expect_eq "fd limit 40, 40 workers: exit status 2" "$?" 2
expect_contains "fd limit 40, 40 workers: the numbers" fd40.err \
    "shardbench: error: need 104 file descriptors for 40 worker(s) (1 per worker connection, 64 for the coordinator), limit is 40 (hard limit 40): raise it with \`ulimit -n 104\` or LimitNOFILE=104 (systemd), or use fewer workers"
expect_eq "fd limit 40: nothing listed" "$(q fd.db "SELECT count(*) FROM catalogs")" 0
# ulimit -n 12: the same refusal, no CZMQ assertion (no abort, no core)
(ulimit -n 12; exec timeout 20 "$SHARDBENCH" run $SYN --local 1 --db fd.db --progress off) >fd12.out 2>fd12.err
expect_eq "fd limit 12: exit status 2" "$?" 2
expect_contains "fd limit 12: the numbers" fd12.err "need 65 file descriptors for 1 worker(s)"
# a soft limit below what 12 local workers need, under a hard limit that
# holds them: raised, and the run completes
(ulimit -Sn 20; exec timeout 60 "$SHARDBENCH" run $SYN dataset.num_files_train=64 reader.batch_size=1 train.epochs=1 \
    --accelerators 12 --local 12 --db fd.db --progress off) >fd20.out 2>fd20.err
expect_eq "soft limit 20, 12 local workers: raised, exit status 0" "$?" 0
expect_eq "soft limit 20: 12 workers recorded" "$(q fd.db "SELECT workers FROM runs WHERE id = (SELECT max(id) FROM runs)")" 12
# 100M workers: refused before anything is listed (not 100M objects first)
(ulimit -n 4096; exec timeout 20 "$SHARDBENCH" run $SYN dataset.num_files_train=100000000 --accelerators 100000000 \
    --workers 100000000 --bind 'tcp://127.0.0.1:*' --db big.db --progress off) >big.out 2>big.err
expect_eq "100M workers: exit status 2" "$?" 2
expect_contains "100M workers: refused on descriptors" big.err "need 100000064 file descriptors for 100000000 worker(s)"
expect_eq "100M workers: nothing listed" "$(q big.db "SELECT count(*) FROM catalogs")" 0

# ------------------------------------------------------------------ join timeouts
# --workers: 1 of 2 joins; the timeout names who joined and who is missing
bg join-w run $SYN dataset.num_files_train=64 --accelerators 2 --workers 2 --join-timeout 2 \
    --bind 'tcp://127.0.0.1:*' --db j.db --progress off
coord=$BG
ep=$(coordinator_endpoint join-w.err)
"$SHARDBENCH_WORKER" --coordinator "$ep" --host node-a >join-w-a.out 2>join-w-a.err &
wa=$!
wait "$coord"
expect_eq "join timeout (--workers): exit status 1" "$?" 1
expect_contains "join timeout (--workers): who joined, how many missing" join-w.err \
    "shardbench: error: timed out after 2 s waiting for 2 workers to join $ep: 1 of 2 joined (node-a pid $wa); 1 worker(s) started elsewhere never said HELLO"
wait "$wa"
# --workers without --join-timeout: a default, shown in --help
"$SHARDBENCH" run --help >help.out
expect_contains "join timeout default for --workers" help.out "(default 60 with --local, --hosts and --slurm, 300 with --workers)"

# --local: workers that never join are named by pid
cat >never.sh <<'SH'
#!/bin/sh
exec sleep 60
SH
chmod +x never.sh
SHARDBENCH_WORKER=$SCRATCH/never.sh "$SHARDBENCH" run $SYN dataset.num_files_train=64 --accelerators 2 --local 2 \
    --join-timeout 1 --db j.db --progress off >join-l.out 2>join-l.err
expect_eq "join timeout (--local): exit status 1" "$?" 1
expect_eq "join timeout (--local): missing pids named" \
    "$(grep -cE '^shardbench: error: timed out after 1 s waiting for 2 workers to join ipc://[^ ]+/coordinator\.sock: 0 of 2 joined; missing: local worker pid [0-9]+, [0-9]+$' join-l.err)" 1

# --hosts: the hosts that never joined are named
cat >fakessh.sh <<'SH'
#!/bin/sh
# fake ssh: skip options, then HOST COMMAND...; host "ghost" never answers
while [ $# -gt 0 ]; do case $1 in -o) shift 2 ;; -*) shift ;; *) break ;; esac; done
host=$1; shift
[ "$host" = ghost ] && exec sleep 60
# like ssh: the words are one command line for the remote user's shell
exec sh -c "$*"
SH
chmod +x fakessh.sh
SHARDBENCH_SSH=$SCRATCH/fakessh.sh SHARDBENCH_REMOTE_WORKER=$SHARDBENCH_WORKER "$SHARDBENCH" run $SYN \
    dataset.num_files_train=64 --accelerators 2 --hosts 127.0.0.1,ghost --bind 'tcp://127.0.0.1:*' --join-timeout 2 \
    --db j.db --progress off >join-h.out 2>join-h.err
expect_eq "join timeout (--hosts): exit status 1" "$?" 1
expect_eq "join timeout (--hosts): ghost named" \
    "$(grep -cE '^shardbench: error: timed out after 2 s waiting for 2 workers to join tcp://127\.0\.0\.1:[0-9]+: 1 of 2 joined \(127\.0\.0\.1 pid [0-9]+\); missing: ghost$' join-h.err)" 1

# ------------------------------------------------------------------ bind addresses
# tcp://localhost:* (a name: resolved, ZeroMQ binds only addresses) and
# tcp://[::1]:* (IPv6: ZMQ_IPV6 on both sides): a real run, the workers
# connect to what the coordinator tells them
for b in 'tcp://localhost:*' 'tcp://[::1]:*'; do
    if [ "$b" = 'tcp://[::1]:*' ] && ! python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
        echo "ok - # SKIP $b: no IPv6 loopback here"
        continue
    fi
    want=$([ "$b" = 'tcp://localhost:*' ] && echo 'tcp://127\.0\.0\.1:[0-9]+' || echo 'tcp://\[::1\]:[0-9]+')
    sb run $SYN dataset.num_files_train=64 train.epochs=1 --accelerators 2 --local 2 --bind "$b" --db bind.db --progress off
    expect_eq "--local --bind $b: exit status 0" "$SB_RC" 0
    expect_contains "--local --bind $b: succeeded" sb.out "status: succeeded"
    bg bindw run $SYN dataset.num_files_train=64 train.epochs=1 --accelerators 1 --workers 1 --bind "$b" --db bind.db \
        --progress off --join-timeout 20
    coord=$BG
    ep=$(coordinator_endpoint bindw.err)
    expect_eq "--workers --bind $b: workers are told $ep" "$(printf '%s\n' "$ep" | grep -cxE "$want")" 1
    "$SHARDBENCH_WORKER" --coordinator "$ep" >bindw-w.out 2>bindw-w.err
    expect_eq "--workers --bind $b: the worker joined and ended 0" "$?" 0
    wait "$coord"
    expect_eq "--workers --bind $b: exit status 0" "$?" 0
    expect_contains "--workers --bind $b: succeeded" bindw.out "status: succeeded"
done
# an interface name (tcp://lo:*, as tcp://ib0:5555 on a cluster) is ZeroMQ's to
# bind, not a host name to resolve
sb run $SYN dataset.num_files_train=64 train.epochs=1 --accelerators 2 --local 2 --bind 'tcp://lo:*' --insecure --db bind.db \
    --progress off
expect_eq "--local --bind tcp://lo:*: exit status 0" "$SB_RC" 0
expect_contains "--local --bind tcp://lo:*: succeeded" sb.out "status: succeeded"

# ------------------------------------------------------------------ worker fd message
# local files: the worker's refusal counts read threads, not "0 endpoints"
(ulimit -n 100; exec timeout 60 "$SHARDBENCH" run dataset.data_folder=./lf dataset.num_files_train=64 reader.batch_size=1 \
    reader.read_threads=80 train.epochs=1 --accelerators 1 --local 1 --db lf.db --progress off) >lf.out 2>lf.err
expect_eq "worker fd refusal (local files): exit status 1" "$?" 1
expect_contains "worker fd refusal (local files): read threads" lf.err \
    "file descriptors: 1 ranks x 86 (80 reads in flight + 6) + "
expect_contains "worker fd refusal (local files): the limit" lf.err "needed, the limit is 100 (hard limit 100)"
if grep -q "0 endpoints" lf.err; then fail "worker fd refusal (local files): says 0 endpoints"; else pass "worker fd refusal (local files): no '0 endpoints'"; fi

# ------------------------------------------------------------------ launcher
# an exec that fails in the forked child is reported with write(2) only
# (the coordinator is threaded): the literal cause, or the errno's number
ln -s loop loop
SHARDBENCH_SSH=$SCRATCH/loop "$SHARDBENCH" run $SYN dataset.num_files_train=64 --accelerators 1 --hosts h1 \
    --bind 'tcp://127.0.0.1:*' --db l.db --progress off >exec.out 2>exec.err
expect_eq "ssh exec fails: exit status 1" "$?" 1
expect_contains "ssh exec fails: the child says why" exec.err \
    "shardbench: error: host h1: ssh ended before its worker joined (exit status 255): cannot run $SCRATCH/loop: errno 40"
SHARDBENCH_SSH=$SCRATCH/missing-ssh "$SHARDBENCH" run $SYN dataset.num_files_train=64 --accelerators 1 --hosts h1 \
    --bind 'tcp://127.0.0.1:*' --db l.db --progress off >exec.out 2>exec.err
expect_contains "ssh missing: the child says why" exec.err \
    "(exit status 255): cannot run $SCRATCH/missing-ssh: No such file or directory"
SHARDBENCH_SSH=no-such-ssh-here "$SHARDBENCH" run $SYN dataset.num_files_train=64 --accelerators 1 --hosts h1 \
    --bind 'tcp://127.0.0.1:*' --db l.db --progress off >exec.out 2>exec.err
expect_contains "ssh not on PATH: found before fork" exec.err "shardbench: error: host h1: cannot start no-such-ssh-here: not found on \$PATH"

# ------------------------------------------------------------------ S3 listing
# An endless bucket of slow pages (tests/integration/slow_s3.py): SIGINT
# stops the parallel listing, SIGTERM a single stream of pages without keys;
# a SIGKILLed listing leaves no file in TMPDIR (SQLite's own temporary
# databases, unlinked at open, instead of predictable names there).
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
for mode in keys empty; do
    rm -f "port-$mode"
    python3 "$(dirname "$0")/slow_s3.py" "$mode" 0.2 >"port-$mode" &
    for _ in $(seq 100); do [ -s "port-$mode" ] && break; sleep 0.1; done
done
S3K="storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=bkt dataset.num_files_train=100
     storage.storage_options.endpoint_url=http://127.0.0.1:$(head -1 port-keys)"
S3E="storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=bkt dataset.num_files_train=100 storage.storage_options.list_parallelism=1
     storage.storage_options.endpoint_url=http://127.0.0.1:$(head -1 port-empty)"
# pages FILE N: wait until the server of FILE answered N more pages than
# when PAGES_AT was taken (pages_at FILE): the listing is under way
pages_at () { PAGES_AT=$(grep -c '^page$' "$1"); }
pages () {
    local end=$((SECONDS + 30))
    until [ "$(grep -c '^page$' "$1")" -ge $((PAGES_AT + $2)) ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.02; done
}
mkdir tmp
pages_at port-keys
TMPDIR=$SCRATCH/tmp bg s3-int catalog $S3K --db s3.db --progress off
pages port-keys 8       # two pages on each of the 4 streams
stop_after INT "$BG" s3-int
expect_eq "SIGINT while listing S3 (4 streams): exit status 130" "$RC" 130
expect_under "SIGINT while listing S3: stopped promptly" "$TOOK" 3
expect_contains "SIGINT while listing S3: says so" s3-int.err "interrupted by SIGINT while listing the dataset"
expect_eq "SIGINT while listing S3: no catalog" "$(q s3.db "SELECT count(*) FROM catalogs")" 0
pages_at port-empty
bg s3-term catalog $S3E --db s3.db --progress off
pages port-empty 2
stop_after TERM "$BG" s3-term
expect_eq "SIGTERM while listing S3 pages without keys: exit status 143" "$RC" 143
expect_under "SIGTERM while listing S3 pages without keys: stopped promptly" "$TOOK" 3
expect_contains "SIGTERM while listing S3 pages without keys: says so" s3-term.err "interrupted by SIGTERM while listing the dataset"
pages_at port-keys
TMPDIR=$SCRATCH/tmp bg s3-kill catalog $S3K --db s3.db --progress off
pages port-keys 8
expect_eq "S3 listing in progress: no file in TMPDIR" "$(ls tmp | wc -l)" 0
kill -KILL "$BG"
wait "$BG"
expect_eq "S3 listing SIGKILLed: no file left in TMPDIR" "$(ls tmp | wc -l)" 0

# ------------------------------------------------------------------ S3 requests that never end
# The fake S3 server (tests/s3/fake_s3.c) reads a request and never answers
# it (hang-list, hang-put), sends a reply's headers and never its body
# (stall-get), or answers 503 for ever (slowdown). Requests time out after
# 30 s and are retried: only an interrupt that reaches the request in flight,
# or its retry's backoff, stops these within a second of the signal (it took
# 88 s and more, and 7 s for the training's stalled GETs).
: "${FAKE_S3:?path of the fake_s3 binary}"
# fake MODE [ARGS...]: a fake server; its log is fake-MODE.err, port FAKE_PORT, pid FAKE_PID
fake () {
    # an earlier server of the same mode wrote these: its port and lines must
    # not be read for this one's (the redirection below may come after the reads)
    rm -f "fake-$1.out" "fake-$1.err"
    "$FAKE_S3" -m "$@" >"fake-$1.out" 2>"fake-$1.err" &
    FAKE_PID=$!
    await_text "fake-$1.out" listening
    FAKE_PORT=$(sed -n 's/^fake_s3 listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "fake-$1.out")
}
# wait_count FILE REGEX N: until N lines of FILE match REGEX (30 s at most)
wait_count () {
    local end=$((SECONDS + 30))
    until [ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -ge "$3" ]; do
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.02
    done
}
LONG="storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=bkt storage.storage_options.request_timeout_s=30
      storage.storage_options.connect_timeout_s=30 storage.storage_options.max_retries=3"

# a listing page that never arrives, in each of 4 streams: SIGINT
fake hang-list
bg hang-int catalog $LONG dataset.num_files_train=100 storage.storage_options.endpoint_url=http://127.0.0.1:$FAKE_PORT \
    --db hang.db --progress off
wait_count fake-hang-list.err ': no answer$' 4
stop_after INT "$BG" hang-int
expect_eq "SIGINT while a listing page never arrives: exit status 130" "$RC" 130
expect_under "SIGINT while a listing page never arrives: within 1 s" "$TOOK" 1.0
expect_contains "SIGINT while a listing page never arrives: says so" hang-int.err \
    "shardbench: error: interrupted by SIGINT while listing the dataset"
expect_eq "SIGINT while a listing page never arrives: no catalog" "$(q hang.db "SELECT count(*) FROM catalogs")" 0
expect_eq "SIGINT while a listing page never arrives: no retry" "$(grep -c ': no answer$' fake-hang-list.err)" 4
kill "$FAKE_PID"
# the same in a run's single stream: SIGTERM
fake hang-list
bg hang-term run $LONG dataset.num_files_train=100 storage.storage_options.list_parallelism=1 \
    storage.storage_options.endpoint_url=http://127.0.0.1:$FAKE_PORT --local 1 --db hang.db --progress off
wait_count fake-hang-list.err ': no answer$' 1
stop_after TERM "$BG" hang-term
expect_eq "SIGTERM while a run's listing page never arrives: exit status 143" "$RC" 143
expect_under "SIGTERM while a run's listing page never arrives: within 1 s" "$TOOK" 1.0
expect_contains "SIGTERM while a run's listing page never arrives: says so" hang-term.err \
    "shardbench: error: interrupted by SIGTERM while listing the dataset"
kill "$FAKE_PID"

# a run that generates (workflow.generate_data): the listings before the
# datagen are answered (empty), the one after it never is
fake hang-list -n 2
bg relist-int run $LONG dataset.data_folder=d dataset.num_files_train=16 workflow.generate_data=True train.epochs=1 \
    storage.storage_options.list_parallelism=1 storage.storage_options.endpoint_url=http://127.0.0.1:$FAKE_PORT \
    --local 1 --accelerators 2 --db relist.db --progress off
wait_count fake-hang-list.err ': no answer$' 1
stop_after INT "$BG" relist-int
expect_eq "SIGINT while listing what datagen wrote: exit status 130" "$RC" 130
expect_under "SIGINT while listing what datagen wrote: coordinator and worker gone within 1 s" "$TOOK" 1.0
expect_contains "SIGINT while listing what datagen wrote: says so" relist-int.err \
    "shardbench: error: interrupted by SIGINT while listing the dataset (listing s3://d/train/: LIST bkt/d/train/ on http://127.0.0.1:$FAKE_PORT: interrupted by a signal (attempt 1); no catalog was recorded)"
expect_eq "SIGINT while listing what datagen wrote: the datagen's run done, no training run" \
    "$(q relist.db "SELECT group_concat(workflow || ':' || status, ' ') FROM runs")" "datagen:succeeded"
kill "$FAKE_PID"

# 503 SlowDown for ever, 20 retries: SIGINT during a retry's backoff
fake slowdown
bg slow-int catalog $LONG storage.storage_options.max_retries=20 dataset.num_files_train=100 \
    storage.storage_options.list_parallelism=1 storage.storage_options.endpoint_url=http://127.0.0.1:$FAKE_PORT \
    --db hang.db --progress off
wait_count fake-slowdown.err '^fake_s3: LIST ' 6
stop_after INT "$BG" slow-int
expect_eq "SIGINT between retries of a listing page: exit status 130" "$RC" 130
expect_under "SIGINT between retries of a listing page: within 1 s" "$TOOK" 1.0
expect_contains "SIGINT between retries of a listing page: says so" slow-int.err \
    "shardbench: error: interrupted by SIGINT while listing the dataset"
kill "$FAKE_PID"

# datagen: the dataset marker's PUT is never answered
fake hang-put
bg put-int datagen $LONG dataset.data_folder=d dataset.num_files_train=16 \
    storage.storage_options.endpoint_url=http://127.0.0.1:$FAKE_PORT --local 1 --db put.db --progress off
wait_count fake-hang-put.err ': no answer$' 1
stop_after INT "$BG" put-int
expect_eq "SIGINT while the marker's PUT is unanswered: exit status 130" "$RC" 130
expect_under "SIGINT while the marker's PUT is unanswered: within 1 s" "$TOOK" 1.0
expect_contains "SIGINT while the marker's PUT is unanswered: an interrupt, not a storage failure" put-int.err \
    "shardbench: error: interrupted by SIGINT: cannot write the dataset marker: PUT bkt/d/.shardbench-dataset on http://127.0.0.1:$FAKE_PORT: interrupted by a signal (attempt 1)"
expect_eq "SIGINT while the marker's PUT is unanswered: one PUT, no retry" "$(grep -c '^fake_s3: PUT ' fake-hang-put.err)" 1
kill "$FAKE_PID"

# training: every object GET gets its reply's headers, never its body; two
# local workers, two ranks each. SIGINT: the coordinator ABORTs the workers,
# whose reader threads drop their GETs; every process is gone within 1 s
"$SHARDBENCH" datagen dataset.data_folder=./gen dataset.num_files_train=16 dataset.format=bin \
    dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 --local 1 --db gen.db --progress off \
    >gen.out 2>gen.err || fail "datagen of the stalled objects' list"
(cd gen && find train -type f -printf 'd/%p %s\n' | LC_ALL=C sort) >stall-keys
fake stall-get -l "$SCRATCH/stall-keys"
bg stall-int run $LONG dataset.data_folder=d dataset.num_files_train=16 dataset.format=bin \
    dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.epochs=1 \
    storage.storage_options.endpoint_url=http://127.0.0.1:$FAKE_PORT --local 2 --accelerators 4 --db stall.db --progress off
wait_count fake-stall-get.err ': headers, no body$' 4
wpids=$(q stall.db "SELECT group_concat(pid, ' ') FROM run_workers")
stop_after INT "$BG" stall-int
alive=$(for p in $wpids; do kill -0 "$p" 2>/dev/null && echo "$p"; done)
expect_eq "SIGINT while S3 GET bodies stall: exit status 130" "$RC" 130
expect_under "SIGINT while S3 GET bodies stall: coordinator and workers gone within 1 s" "$TOOK" 1.0
expect_eq "SIGINT while S3 GET bodies stall: 2 workers, none left" "$(echo $wpids | wc -w) ${alive:-none}" "2 none"
expect_eq "SIGINT while S3 GET bodies stall: recorded aborted" \
    "$(q stall.db "SELECT status, error FROM runs")" "aborted|interrupted by SIGINT while training epoch 1"
expect_eq "SIGINT while S3 GET bodies stall: the workers were told" \
    "$(grep -c 'run aborted by the coordinator: interrupted by SIGINT while training epoch 1' stall-int.err)" 2
kill "$FAKE_PID"

# datagen: the marker is written, the workers' object PUTs are never answered
fake hang-object-put
bg gen-int datagen $LONG dataset.data_folder=d dataset.num_files_train=16 \
    storage.storage_options.endpoint_url=http://127.0.0.1:$FAKE_PORT --local 1 --accelerators 2 --db gen-int.db --progress off
wait_count fake-hang-object-put.err ': no answer$' 2
stop_after INT "$BG" gen-int
expect_eq "SIGINT while datagen's PUTs are unanswered: exit status 130" "$RC" 130
expect_under "SIGINT while datagen's PUTs are unanswered: coordinator and worker gone within 1 s" "$TOOK" 1.0
expect_eq "SIGINT while datagen's PUTs are unanswered: recorded aborted" \
    "$(q gen-int.db "SELECT status, error FROM runs")" "aborted|interrupted by SIGINT while generating the dataset"
kill "$FAKE_PID"

# reader.file_shuffle: the coordinator plans 30M objects' file lists in a
# thread (about 3 s here); SIGINT during the plan ends the run within 1 s,
# the thread told to stop (it was joined: seconds)
bg plan-int run $SYN reader.file_shuffle=seed dataset.num_files_train=30000000 dataset.skip_listing=true \
    train.epochs=1 --accelerators 8 --local 1 --db plan.db --progress off
wait_for plan-int.err "joined as worker 0"
sleep 0.3
stop_after INT "$BG" plan-int
expect_eq "SIGINT while planning the file lists: exit status 130" "$RC" 130
expect_under "SIGINT while planning the file lists: coordinator and worker gone within 1 s" "$TOOK" 1.0
expect_contains "SIGINT while planning the file lists: says so" plan-int.err \
    "shardbench: error: interrupted by SIGINT while planning the file lists of epoch 1"

# checkpoints to S3: the first PUTs (multipart starts) are never answered
fake hang-put
bg ckpt-int checkpoint $LONG checkpoint.checkpoint_folder=s3://bkt/ck \
    storage.storage_options.endpoint_url=http://127.0.0.1:$FAKE_PORT --local 1 --accelerators 2 --db ckpt.db --progress off
wait_count fake-hang-put.err ': no answer$' 1
stop_after INT "$BG" ckpt-int
expect_eq "SIGINT while a checkpoint's PUT is unanswered: exit status 130" "$RC" 130
expect_under "SIGINT while a checkpoint's PUT is unanswered: coordinator and worker gone within 1 s" "$TOOK" 1.0
expect_eq "SIGINT while a checkpoint's PUT is unanswered: recorded aborted" \
    "$(q ckpt.db "SELECT status, error FROM runs")" "aborted|interrupted by SIGINT while writing checkpoint 1"
kill "$FAKE_PID"

# ------------------------------------------------------------------ blame
# A page of catalog entries too large for one frame is the coordinator's
# limit, said as such (it used to go out, the worker's socket dropped the
# connection, and the run failed with "lost worker 0 ... connection closed").
# Pages hold one entry per file: 65536 files of 255-byte keys fill one.
mkdir -p long/train
python3 -c "
for i in range(65536):
    open('long/train/' + 'x' * 240 + '%05d.npz' % i, 'wb').write(b'x')"
sb run dataset.data_folder=./long dataset.num_files_train=65536 dataset.num_samples_per_file=1 reader.batch_size=1 \
    train.epochs=1 train.computation_time=0 shardbench.keys_page=65536 shardbench.sampler=global \
    --accelerators 1 --local 1 --db blame.db --progress off
expect_eq "oversized ENTRIES page: exit status 1" "$SB_RC" 1
expect_contains "oversized ENTRIES page: the coordinator's limit, not a lost worker" sb.err \
    "shardbench: error: the coordinator cannot send worker 0 its page of 65536 catalog entries: about 18288640 bytes (16711680 of keys), over the protocol's 16 MiB frame limit: lower shardbench.keys_page (now 65536)"
if grep -q "lost worker" sb.err; then fail "oversized ENTRIES page: blamed on a worker"; else pass "oversized ENTRIES page: no worker blamed"; fi
rm -rf long

# A coordinator stopped for twice the heartbeat timeout: its worker gives up
# on it; the failure says the coordinator stalled, with how long
bg stall run $SYN dataset.num_files_train=64 reader.batch_size=4 train.epochs=200 train.computation_time=0.02 \
    shardbench.heartbeat_interval_s=0.5 shardbench.heartbeat_timeout_s=2 --local 1 --accelerators 1 --db stall.db --progress off
wait_for stall.err "epoch 1/200"
kill -STOP "$BG"
sleep 4
kill -CONT "$BG"
wait "$BG"
expect_eq "coordinator stalled: exit status 1" "$?" 1
expect_eq "coordinator stalled: the failure says the coordinator did not run" \
    "$(grep -cE '^shardbench: error: (local worker 0 on [^ ]+ \(rank 0, pid [0-9]+\) ended: exit status 1|lost worker 0 on [^ ]+ \(rank 0, pid [0-9]+\): connection closed \([A-Z_]+ not delivered\), last contact at [0-9:.]+); the coordinator itself did not run for [4-9]\.[0-9] s until [0-9:.]+ \(stopped, swapped out or busy\), longer than the heartbeat timeout: the worker most likely gave up on the coordinator$' stall.err)" 1
grep "^shardbench: error" stall.err
expect_contains "coordinator stalled: warned when it resumed" stall.err "the workers' heartbeat deadlines move by as much"

finish
