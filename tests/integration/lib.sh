# Helpers for the integration tests: real shardbench processes, real SQLite
# files, exact assertions. Source it; it sets `set -u` and a scratch folder.
set -u
: "${SHARDBENCH:?path of the shardbench binary}"
: "${SHARDBENCH_WORKER:?path of the shardbench-worker binary}"
export SHARDBENCH_WORKER

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/shardbench-test.XXXXXX")
cd "$SCRATCH" || exit 1
FAILS=0
PASSES=0
trap 'rm -rf "$SCRATCH"' EXIT

pass () { PASSES=$((PASSES + 1)); echo "ok - $*"; }
fail () { FAILS=$((FAILS + 1)); echo "FAIL - $*"; }

# expect_eq WHAT ACTUAL EXPECTED
expect_eq () {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', expected '$3'"; fi
}

# expect_contains WHAT FILE TEXT
expect_contains () {
    if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1: '$3' not in $2:"; sed 's/^/    /' "$2" | tail -20; fi
}

# q DB SQL: one query, result on stdout
q () { sqlite3 -batch -noheader "$1" "$2"; }

# sb ARGS...: run shardbench with a time limit, output in sb.out/sb.err, status in SB_RC
sb () {
    timeout 120 "$SHARDBENCH" "$@" >sb.out 2>sb.err
    SB_RC=$?
}

finish () {
    echo "$PASSES passed, $FAILS failed"
    [ "$FAILS" -eq 0 ]
}

# coordinator_endpoint ERRFILE: the endpoint a coordinator started with
# --workers and --bind tcp://127.0.0.1:* bound (from its log: no fixed port
# that something else may hold). Waits up to 30 s; prints nothing on failure.
coordinator_endpoint () {
    local i
    for i in $(seq 1 300); do
        grep -q "waiting for " "$1" 2>/dev/null && break
        sleep 0.1
    done
    sed -n 's/.*`shardbench-worker --coordinator \([^ `]*\).*/\1/p' "$1" | head -1
}
