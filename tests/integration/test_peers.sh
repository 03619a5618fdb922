#!/usr/bin/env bash
# Hostile and mismatched peers of a real coordinator (rogue_client.c plays
# the worker): a host name or an ERROR text with an escape sequence and a
# newline never reaches the coordinator's stderr raw (no ESC byte, no forged
# log line) nor the database; such a host name is refused naming the rank;
# a READY carrying another worker's id is refused naming the impostor and
# counts for no one; a HELLO of another protocol version fails the run at
# once naming host and both versions (another build of the same protocol is
# a warning; --version names the build: git describe); --label refuses
# control characters and `runs` prints an older database's label escaped.
# A worker whose ipc:// socket cannot be connected to says so at once.
. "$(dirname "$0")/lib.sh"
: "${ROGUE_CLIENT:?path of the rogue_client binary}"

syn="dataset.data_folder=synthetic://peers dataset.num_files_train=8 dataset.record_length_bytes=1000
     dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.epochs=1 --progress off"
esc=$(printf '\033')
version=$("$SHARDBENCH" --version | sed -n 's/^shardbench //p')
build=$("$SHARDBENCH" --version | sed -n 's/^build: //p')
# the protocol version this tree speaks (lib/proto/proto.h), for the messages that name it
proto=$(sed -n 's/^#define SB_PROTO_VERSION \([0-9]*\)$/\1/p' "$SB_INTEGRATION_DIR/../../lib/proto/proto.h")

# coordinator NAME ARGS...: a coordinator waiting for workers started
# elsewhere, in the background (COORD: its pid; NAME.err its stderr); EP its endpoint
coordinator () {
    local name=$1
    shift
    # shellcheck disable=SC2086
    ( exec timeout 120 "$SHARDBENCH" run $syn --bind "tcp://$SB_LO:*" --db "$name.db" "$@" \
          >"$name.out" 2>"$name.err" ) &
    COORD=$!
    EP=$(coordinator_endpoint "$name.err")
}

# no_raw NAME FILE: FILE holds no ESC byte and no line a peer forged
no_raw () {
    expect_eq "$1: no raw ESC byte" "$(grep -c "$esc" "$2")" 0
    expect_eq "$1: no forged log line" "$(grep -c '^12:00:00.000 shardbench' "$2")" 0
}

# ---- a host name with an escape sequence and a newline: refused, escaped
evil_host=$(printf 'evil\033[2J\n12:00:00.000 shardbench: error: forged')
coordinator host --accelerators 1 --workers 1 --join-timeout 60
SECONDS=0
timeout 30 "$ROGUE_CLIENT" "$EP" hello "$evil_host" "$proto" >host-rogue.out 2>&1
wait "$COORD"
rc=$?
expect_eq "evil host: coordinator fails" "$rc" 1
expect_eq "evil host: at once, not after the join timeout" "$((SECONDS < 30))" 1
why="host name 'evil\\e[2J\\n12:00:00.000 shardbench: error: forged' is not printable: it holds control characters or bytes that are not UTF-8 (shown escaped) (shardbench-worker --host NAME names the host)"
expect_eq "evil host: the worker is told why" "$(cat host-rogue.out)" "REJECT: $why"
expect_eq "evil host: error names the rank and the escaped host" "$(grep '^shardbench: error: ' host.err)" \
    "shardbench: error: refused the worker for rank 0 (pid 1): $why"
no_raw "evil host" host.err

# ---- an ERROR text with an escape sequence and a newline: escaped in the log and the database
coordinator error --accelerators 1 --workers 1 --join-timeout 60
timeout 60 "$ROGUE_CLIENT" "$EP" error "$(printf 'boom\033[31m\n12:00:00.000 shardbench: info: forged')" \
    >error-rogue.out 2>&1
expect_eq "evil error: the rogue is aborted" "$(cat error-rogue.out)" "ABORT"
wait "$COORD"
expect_eq "evil error: coordinator fails" "$?" 1
expect_eq "evil error: error line, escaped" "$(grep '^shardbench: error: ' error.err)" \
    'shardbench: error: rank 0 on rogue-err: boom\e[31m\n12:00:00.000 shardbench: info: forged'
no_raw "evil error" error.err
expect_contains "another build, same protocol: a warning" error.err \
    "warning: worker on rogue-err (pid 1) is rogue_client, this coordinator is shardbench $version (build $build): both speak protocol version $proto, the run goes on"
expect_eq "evil error: errors row escaped" "$(q error.db "SELECT host || '|' || message FROM errors")" \
    'rogue-err|boom\e[31m\n12:00:00.000 shardbench: info: forged'
expect_eq "evil error: run's error escaped" "$(q error.db "SELECT instr(error, char(27)) FROM runs")" 0

# ---- a READY carrying another worker's id: refused, counts for no one
coordinator ready --accelerators 2 --workers 2 --join-timeout 5
timeout 60 "$ROGUE_CLIENT" "$EP" ready-other >ready-rogue.out 2>&1
expect_eq "impostor READY: aborted at the join timeout" "$(cat ready-rogue.out)" "ABORT"
wait "$COORD"
expect_eq "impostor READY: coordinator fails" "$?" 1
expect_contains "impostor READY: named" ready.err \
    "warning: READY for worker 1 from worker 0 on impostor (pid 1) ignored: not its id"
expect_contains "impostor READY: the impostor is not ready" ready.err \
    "2 of 2 joined (impostor pid 1, owner pid 1); 1 of them did not finish their preflight (READY)"
expect_contains "impostor READY: counted as rejected" ready.err "1 malformed or unexpected frames were rejected"

# ---- a worker of another protocol version: the run fails at once
coordinator version --accelerators 1 --workers 1 --join-timeout 60
SECONDS=0
timeout 30 "$ROGUE_CLIENT" "$EP" hello old-node 11 >version-rogue.out 2>&1
wait "$COORD"
rc=$?
expect_eq "other version: coordinator fails" "$rc" 1
expect_eq "other version: at once, not after the 60 s join timeout" "$((SECONDS < 30))" 1
expect_eq "other version: the worker is told" "$(cat version-rogue.out)" \
    "REJECT: coordinator speaks protocol version $proto, you sent version 11"
expect_eq "other version: error names host and both versions" "$(grep '^shardbench: error: ' version.err)" \
    "shardbench: error: the worker on old-node (rogue_client) speaks protocol version 11; this coordinator (shardbench $version, build $build) speaks protocol version $proto: run the same shardbench version on every node"

# ---- the same protocol version, another HELLO layout (another build): the run fails at once too
coordinator layout --accelerators 1 --workers 1 --join-timeout 60
SECONDS=0
timeout 30 "$ROGUE_CLIENT" "$EP" hello-fields layout-node >layout-rogue.out 2>&1
wait "$COORD"
rc=$?
expect_eq "other layout: coordinator fails" "$rc" 1
expect_eq "other layout: at once, not after the 60 s join timeout" "$((SECONDS < 30))" 1
expect_eq "other layout: the worker is told" "$(cat layout-rogue.out)" \
    "REJECT: frame rejected: HELLO has 5 fields, expected 8"
expect_eq "other layout: error names host and both builds" "$(grep '^shardbench: error: ' layout.err)" \
    "shardbench: error: the worker on layout-node (shardbench-worker 0.0.9) sent a HELLO this coordinator (shardbench $version, build $build) cannot read (HELLO has 5 fields, expected 8): another build of protocol version $proto; run the same shardbench build on every node"

# ---- --version tells builds apart: git describe of the source tree, the same in both binaries
expect_eq "--version: a build line" "$([ -n "$build" ] && echo yes)" yes
expect_eq "--version: the worker's build is the coordinator's" \
    "$("$SHARDBENCH_WORKER" --version | sed -n 's/^build: //p')" "$build"
if [ -n "${SB_SOURCE_ROOT:-}" ] && git -C "$SB_SOURCE_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    expect_eq "--version: the build is git describe" "$build" \
        "$(git -C "$SB_SOURCE_ROOT" describe --always --dirty)"
fi

# ---- --label with a control character: exit 2 naming the option
# shellcheck disable=SC2086
sb run $syn --accelerators 1 --local 1 --label "$(printf 'a\nb')" --db label.db
expect_eq "--label with a newline: exit 2" "$SB_RC" 2
expect_eq "--label with a newline: says why" "$(cat sb.err)" \
    "shardbench run: --label: at most 255 bytes of UTF-8 text without control characters"
expect_eq "--label with a newline: nothing recorded" "$(ls label.db 2>/dev/null | wc -l)" 0

# ---- `runs`: an older database's label with control bytes, printed escaped
# shellcheck disable=SC2086
sb run $syn --accelerators 1 --local 1 --label ok --db runs.db
expect_eq "runs: a run" "$SB_RC" 0
q runs.db "UPDATE runs SET label = 'x' || char(27) || '[2J' || char(10) || 'y' || char(13)"
sb runs --db runs.db
expect_eq "runs: exit" "$SB_RC" 0
expect_eq "runs: no raw control byte" "$(tr -d '\n' <sb.out | LC_ALL=C grep -c '[[:cntrl:]]')" 0
expect_eq "runs: two lines" "$(wc -l <sb.out)" 2
expect_contains "runs: label escaped" sb.out ' x\e[2J\ny\r '

# ---- a worker started before the coordinator, whose listing is long: the
# coordinator binds first, holds the HELLO (heartbeats keep the worker's
# 2 s --timeout going) and admits it after the listing; the 5 s join
# timeout starts after the listing (about 7 s on 2 busy cores; --relist: a
# synthetic run lists only when asked; sizes drawn, so that every row is
# stored: one size would need none)
rm -f early.sock
( exec timeout 120 "$SHARDBENCH_WORKER" --coordinator "ipc://$SCRATCH/early.sock" --host early --timeout 2 \
      >early-w.out 2>early-w.err ) &
wpid=$!
timeout 200 "$SHARDBENCH" run dataset.data_folder=synthetic://early dataset.num_files_train=4000000 \
    dataset.record_length_bytes=1000 dataset.record_length_bytes_stdev=100 reader.batch_size=2 \
    train.total_training_steps=2 train.epochs=1 --progress off --accelerators 1 --workers 1 \
    --bind "ipc://$SCRATCH/early.sock" --join-timeout 5 --relist --db early.db >early.out 2>early.err
expect_eq "early worker: the run succeeds" "$?" 0
wait "$wpid"
wrc=$?
expect_eq "early worker: the worker exits 0" "$wrc" 0
[ "$wrc" = 0 ] || sed 's/^/    /' early-w.err | tail -60     # a sanitizer's report, if any
expect_contains "early worker: the listing ran" early.err "listed synthetic://early (synthetic): 4000000 objects"
expect_contains "early worker: admitted after it" early.err "worker 0 joined: early pid"
expect_contains "early worker: told to wait while the coordinator listed" early-w.err \
    "the coordinator at ipc://$SCRATCH/early.sock took the HELLO and is not admitting workers yet (listing its dataset): waiting"
rm -f early.db

# ---- a worker whose ipc:// socket cannot be connected to: said at once, with the errno
SECONDS=0
timeout 60 "$SHARDBENCH_WORKER" --coordinator "ipc://$SCRATCH/none/x.sock" >ipc-none.out 2>ipc-none.err
expect_eq "ipc, no such folder: exit 1" "$?" 1
expect_eq "ipc, no such folder: within the 3 probes, not the 30 s timeout" "$((SECONDS < 15))" 1
expect_eq "ipc, no such folder: names endpoint and errno" "$(grep -o 'error: .*' ipc-none.err)" \
    "error: nothing listens at ipc://$SCRATCH/none/x.sock (cannot connect to its socket: No such file or directory, errno 2); is the coordinator running?"
: >plain-file
SECONDS=0
timeout 60 "$SHARDBENCH_WORKER" --coordinator "ipc://$SCRATCH/plain-file/x.sock" --timeout 0 \
    >ipc-file.out 2>ipc-file.err
expect_eq "ipc, a path through a file: exit 1 despite --timeout 0" "$?" 1
expect_eq "ipc, a path through a file: at the first probe" "$((SECONDS < 15))" 1
expect_eq "ipc, a path through a file: names endpoint and errno" "$(grep -o 'error: .*' ipc-file.err)" \
    "error: nothing can listen at ipc://$SCRATCH/plain-file/x.sock (cannot connect to its socket: Not a directory, errno 20)"

finish
