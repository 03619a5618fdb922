#!/usr/bin/env bash
# deploy/systemd/: the unit is valid (systemd-analyze verify) and its
# ExecStart, expanded from worker.env as systemd expands it, makes a
# long-lived agent: started before any coordinator, it waits, serves a run,
# exits 0, and its restart serves the next run; a coordinator that took its
# HELLO and left without answering does not strand it. systemd is not PID 1 here,
# so the restart loop (Restart=always) is played by this script.
. "$(dirname "$0")/lib.sh"

DEPLOY="$(cd "$(dirname "$0")/../../deploy/systemd" && pwd)"
UNIT="$DEPLOY/shardbench-worker.service"

# 1. the unit as shipped, pointed at this build and at a scratch env file
# The agent waits at a fixed address before any coordinator binds it: a
# loopback address of its own (127.0.0.0/8 is all loopback, and the other
# tests bind 127.0.0.1-3), so that no other test's server, run beside this
# one, can take the port in the meantime or receive the agent's HELLO.
addr=127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))
port=$(python3 -c 'import socket, sys; s = socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])' "$addr")
sed -e "s|^SHARDBENCH_COORDINATOR=.*|SHARDBENCH_COORDINATOR=tcp://$addr:$port|" \
    -e "s|^SHARDBENCH_KEYS=.*|SHARDBENCH_KEYS=|" \
    -e "s|^SHARDBENCH_WORKER_ARGS=.*|SHARDBENCH_WORKER_ARGS=--host agent-a -v|" "$DEPLOY/worker.env" >worker.env
sed -e "s|/usr/local/bin/shardbench-worker|$SHARDBENCH_WORKER|" \
    -e "s|^EnvironmentFile=.*|EnvironmentFile=$SCRATCH/worker.env|" \
    -e "/^User=/d" -e "/^Group=/d" "$UNIT" >shardbench-worker.service
expect_eq "unit: Restart=always" "$(sed -n 's/^Restart=//p' "$UNIT")" always
expect_eq "unit: no start limit" "$(sed -n 's/^StartLimitIntervalSec=//p' "$UNIT")" 0
if command -v systemd-analyze >/dev/null; then
    if systemd-analyze verify --man=no "$SCRATCH/shardbench-worker.service" >verify.out 2>&1; then
        pass "systemd-analyze verify accepts the unit"
    else
        fail "systemd-analyze verify:"; sed 's/^/    /' verify.out
    fi
else
    fail "systemd-analyze missing (package systemd, deploy/install-deps.sh --tests)"
fi

# ExecStart as systemd runs it: ${VAR} is one argument, $VAR is split at spaces
python3 - "$SCRATCH/shardbench-worker.service" worker.env >exec.args <<'EOF'
import re, shlex, sys
unit, envfile = sys.argv[1], sys.argv[2]
env = {}
for line in open(envfile):
    line = line.strip()
    if line and not line.startswith('#'):
        k, _, v = line.partition('=')
        env[k] = v
line = next(l for l in open(unit) if l.startswith('ExecStart='))
out = []
for word in shlex.split(line[len('ExecStart='):]):
    m = re.fullmatch(r'\$([A-Za-z_][A-Za-z0-9_]*)', word)
    if m:
        out += env.get(m.group(1), '').split()
    else:
        out.append(re.sub(r'\$\{([A-Za-z_][A-Za-z0-9_]*)\}', lambda m: env.get(m.group(1), ''), word))
print('\n'.join(out))
EOF
mapfile -t exec_args <exec.args
expect_eq "ExecStart expands to" "${exec_args[*]}" \
    "$SHARDBENCH_WORKER --coordinator tcp://$addr:$port --timeout 0 --host agent-a -v"

# 2. Restart=always, played here: each agent's exit status goes to agents.log
# EnvironmentFile=: the agent's environment holds every assignment of worker.env
while IFS='=' read -r key value; do
    case "$key" in ''|'#'*) continue ;; esac
    export "$key=$value"
done <worker.env
(
    for n in 1 2 3; do
        "${exec_args[@]}" >"agent$n.out" 2>&1 &
        echo $! >agent.pid
        wait $!
        echo "agent $n exit $?" >>agents.log
        sleep 0.2
    done
) &
loop_pid=$!
stop_agents () {
    kill "$loop_pid" 2>/dev/null
    [ -s agent.pid ] && kill "$(cat agent.pid)" 2>/dev/null
    wait "$loop_pid" 2>/dev/null
}
trap 'stop_agents; rm -rf "$SCRATCH"' EXIT

# the agent starts before any coordinator exists and waits for one: past the
# refused probes after which an agent without --timeout 0 would give up
waiting="nothing listens at tcp://$addr:$port (connection refused); waiting for the coordinator for as long as it takes"
await_text agent1.out "$waiting"
expect_contains "agent 1 waits for as long as it takes" agent1.out "$waiting"
expect_eq "agent waits for a coordinator that is not there yet" "$(cat agents.log 2>/dev/null)" ""

# a coordinator that takes the agent's HELLO and goes away without answering
# (one closing after its run, or killed): the agent must say HELLO again to the next
: "${SILENT_COORDINATOR:?path of the silent_coordinator binary}"
timeout 40 "$SILENT_COORDINATOR" "tcp://$addr:$port" >silent.out 2>&1
expect_eq "a silent coordinator took the agent's HELLO and left" "$(tail -n 1 silent.out)" "took HELLO"
await_text agent1.out "saying HELLO again"
expect_contains "the agent saw the connection close and says HELLO again" agent1.out \
    "the coordinator at tcp://$addr:$port closed the connection before answering: saying HELLO again"
expect_eq "the same agent is still waiting" "$(cat agents.log 2>/dev/null)" ""

syn="dataset.data_folder=synthetic://systemd dataset.num_files_train=16 dataset.record_length_bytes=4096
     dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.epochs=1 train.computation_time=0"
for run in 1 2; do
    # shellcheck disable=SC2086
    sb run $syn --accelerators 2 --workers 1 --bind "tcp://$addr:$port" --db systemd.db
    expect_eq "run $run with the long-lived agent: exit" "$SB_RC" 0
    [ "$SB_RC" -eq 0 ] || sed 's/^/    /' sb.err | tail -20
    for _ in $(seq 1 100); do
        [ "$(grep -c "^agent $run exit" agents.log 2>/dev/null)" = 1 ] && break
        sleep 0.1
    done
    expect_eq "agent $run ended with the run" "$(grep "^agent $run exit" agents.log)" "agent $run exit 0"
done
expect_eq "two runs, served by agents on host agent-a, 16 samples each" \
    "$(q systemd.db "SELECT count(*), group_concat(w.host), sum(e.samples), sum(e.bytes)
                      FROM runs r JOIN run_workers w ON w.run_id = r.id JOIN epochs e ON e.run_id = r.id
                      WHERE r.kind = 'train' AND r.status = 'succeeded'")" "2|agent-a,agent-a|32|131072"
expect_eq "two different agent processes served them" \
    "$(q systemd.db "SELECT count(DISTINCT pid) FROM run_workers")" 2

# the third agent is waiting again, as the service would be
await_text agent3.out "$waiting"
expect_contains "agent 3 waits for as long as it takes" agent3.out "$waiting"
expect_eq "a third agent waits for the next run" "$(grep -c "^agent 3" agents.log)" 0
stop_agents
finish
