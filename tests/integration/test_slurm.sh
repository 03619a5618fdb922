#!/usr/bin/env bash
# --slurm and deploy/slurm/shardbench.sbatch on a private single-node Slurm:
# munged, slurmctld and slurmd started here on loopback, with their own key,
# socket, ports, configuration and state in the scratch folder (never a
# system Slurm's). Needs root and slurm-wlm + munge (deploy/install-deps.sh
# --tests); skips, saying why, where that Slurm cannot start.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
start0=$(date +%s)
SBATCH_SCRIPT="$here/../../deploy/slurm/shardbench.sbatch"

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: test_slurm.sh needs root to run a private munged, slurmctld and slurmd"; exit 77
fi
for cmd in munged slurmctld slurmd salloc sbatch srun sinfo squeue scancel scontrol; do
    if ! command -v "$cmd" >/dev/null; then
        echo "SKIP: $cmd missing (slurm-wlm and munge: deploy/install-deps.sh --tests)"; exit 77
    fi
done

# nothing of a Slurm job this test may itself run in
# shellcheck disable=SC2046 # one name per word
unset $(compgen -e | grep '^SLURM' || true)
free_port () { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
node=$(hostname -s)
syn="dataset.data_folder=synthetic://slurm dataset.num_files_train=32 dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0
     reader.batch_size=4 train.epochs=1 train.computation_time=0"

pids=()
cleanup () {
    if [ -n "${SLURM_CONF:-}" ]; then
        for job in $(squeue -h -o %i 2>/dev/null); do scancel "$job" 2>/dev/null; done
    fi
    # slurmd, slurmctld, then munged, which they authenticate with
    local i
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill "${pids[i]}" 2>/dev/null
        wait "${pids[i]}" 2>/dev/null
    done
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

# munge: a key readable by root only (munged runs as root here)
S=$SCRATCH
mkdir -p "$S/state" "$S/spool"
dd if=/dev/urandom bs=1 count=1024 of="$S/munge.key" 2>/dev/null
chmod 400 "$S/munge.key"
munged -F -f --key-file="$S/munge.key" --socket="$S/munge.sock" --pid-file="$S/munged.pid" \
    --log-file="$S/munged.log" --seed-file="$S/munged.seed" >"$S/munged.err" 2>&1 &
pids+=($!)

ctld_port=$(free_port)
slurmd_port=$(free_port)
cat >"$S/slurm.conf" <<CONF
ClusterName=shardbenchtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge.sock
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=100 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$S/slurm.conf"

up=""
for _ in $(seq 1 50); do
    [ -S "$S/munge.sock" ] && { up=munge; break; }
    sleep 0.1
done
if [ "$up" = munge ]; then
    slurmctld -D -i >"$S/slurmctld.err" 2>&1 &
    pids+=($!)
    slurmd -D >"$S/slurmd.err" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 200); do
        [ "$(sinfo -h -n "$node" -o %t 2>/dev/null)" = idle ] && { up=slurm; break; }
        sleep 0.1
    done
fi
if [ "$up" != slurm ]; then
    why=$([ "$up" = munge ] && echo "node $node not idle after 20 s (sinfo: $(sinfo -h -o '%t %N' 2>&1 | head -1))" \
          || echo "munged made no socket")
    echo "SKIP: single-node Slurm did not start: $why"
    for f in munged.err slurmctld.err slurmd.err; do
        [ -s "$S/$f" ] && { echo "  $f:"; tail -n 5 "$S/$f" | sed 's/^/    /'; }
    done
    exit 77
fi
echo "# private Slurm up: node $node, slurmctld :$ctld_port, slurmd :$slurmd_port"

run="(SELECT max(id) FROM runs WHERE kind = 'train')"
# salloc ARGS...: like sb, inside a one-node allocation
sb_salloc () {
    timeout 60 salloc -N1 --time=5 "$SHARDBENCH" "$@" >sb.out 2>sb.err
    SB_RC=$?
}

# (a) shardbench run --slurm in an allocation: one worker per node, by srun
start=$(date +%s)
sb_salloc run $syn --slurm --bind "tcp://$SB_LO:*" --accelerators 2 --db slurm.db
expect_eq "run --slurm exits 0" "$SB_RC" 0
[ "$SB_RC" -eq 0 ] || sed 's/^/    /' sb.err | tail -20
expect_contains "started by srun" sb.err "starting 1 worker(s) on the Slurm job's nodes: srun ... $SHARDBENCH_WORKER --coordinator tcp://$SB_LO:"
expect_eq "run recorded" "$(q slurm.db "SELECT status, workers, accelerators FROM runs WHERE id = $run")" "succeeded|1|2"
expect_eq "the worker ran on the Slurm node" \
    "$(q slurm.db "SELECT host, ranks, first_rank FROM run_workers WHERE run_id = $run")" "$node|2|0"
expect_eq "all samples and bytes read" "$(q slurm.db "SELECT samples, dropped, bytes FROM epochs WHERE run_id = $run")" \
    "32|0|131072"
# a job may still be COMPLETING for a moment after salloc returns
jobs_left=1
for _ in $(seq 1 50); do
    jobs_left=$(squeue -h | wc -l)
    [ "$jobs_left" -eq 0 ] && break
    sleep 0.1
done
expect_eq "no job left" "$jobs_left" 0
# srun_endpoint: the endpoint the coordinator gave its srun'd workers (from sb.err)
srun_endpoint () { sed -n "s/.*starting 1 worker(s) on the Slurm job's nodes: .* --coordinator \(tcp:[^ ]*\).*/\1/p" sb.err; }
ep=$(srun_endpoint)
expect_eq "the coordinator named the endpoint it gave srun" "$(case "$ep" in "tcp://$SB_LO:"[0-9]*) echo yes;; *) echo "'$ep'";; esac)" yes
left=1
for _ in $(seq 1 50); do
    pgrep -f -- "^$SHARDBENCH_WORKER --coordinator $ep " >/dev/null || { left=0; break; }
    sleep 0.1
done
expect_eq "no worker left" "$left" 0
[ "$left" -eq 0 ] || pgrep -af -- "^$SHARDBENCH_WORKER --coordinator $ep " | sed 's/^/    /'

# (b) the sbatch script: coordinator on the first node, srun'd workers, CURVE keys made on the way
port=$(free_port)
SHARDBENCH_PORT=$port SHARDBENCH_BIND="tcp://$SB_LO:$port" SHARDBENCH_COORDINATOR_HOST=$SB_LO \
SHARDBENCH_KEYS="$S/keys" SHARDBENCH_DB="$S/sbatch.db" \
    timeout 60 sbatch --wait --quiet -N1 --time=5 --output="$S/job.out" "$SBATCH_SCRIPT" $syn --accelerators 2 \
    >sbatch.err 2>&1
rc=$?
expect_eq "sbatch script exits 0" "$rc" 0
[ "$rc" -eq 0 ] || { sed 's/^/    /' sbatch.err; sed 's/^/    /' "$S/job.out" | tail -20; }
expect_eq "keys made" "$([ -f "$S/keys/coordinator.cert" ] && [ -f "$S/keys/allowed/worker.cert" ] && echo yes)" yes
expect_eq "script run recorded" "$(q sbatch.db "SELECT status, workers, accelerators FROM runs WHERE id = $run")" \
    "succeeded|1|2"
expect_eq "script worker on the Slurm node" \
    "$(q sbatch.db "SELECT host, ranks FROM run_workers WHERE run_id = $run")" "$node|2"
expect_eq "script samples and bytes" "$(q sbatch.db "SELECT samples, bytes FROM epochs WHERE run_id = $run")" \
    "32|131072"
expect_contains "the worker knows its Slurm task" "$S/job.out" "info: slurm job "
expect_contains "... on the node" "$S/job.out" "step 0 task 0 on $node"

# (c) --slurm outside an allocation is a usage error
sb run $syn --slurm --db outside.db
expect_eq "--slurm outside an allocation exits 2" "$SB_RC" 2
expect_contains "says why" sb.err \
    "shardbench run: --slurm runs inside a Slurm allocation, and SLURM_JOB_ID is not set: start it in an"
sb run $syn --slurm --local 1 --db outside.db
expect_eq "--slurm with --local exits 2" "$SB_RC" 2
expect_contains "they exclude each other" sb.err "--local, --workers, --hosts/--hostfile and --slurm exclude each other"

# (d) srun failing fails the run at once, naming srun and showing its error
start=$(date +%s)
SHARDBENCH_SRUN="srun --no-such-option" sb_salloc run $syn --slurm --bind "tcp://$SB_LO:*" --db bad.db
expect_eq "bad srun exits 1" "$SB_RC" 1
expect_contains "names srun" sb.err "srun ended before all 1 workers joined (0 did; exit status 255)"
expect_contains "shows srun's error" sb.err "--no-such-option"
SHARDBENCH_REMOTE_WORKER=/nonexistent/shardbench-worker sb_salloc run $syn --slurm --bind "tcp://$SB_LO:*" --db bad.db
expect_eq "missing worker binary exits 1" "$SB_RC" 1
expect_contains "names srun, the task's status" sb.err "srun ended before all 1 workers joined (0 did; exit status 2)"
expect_contains "shows the node's error" sb.err "/nonexistent/shardbench-worker: No such file or directory"
elapsed=$(( $(date +%s) - start ))
expect_eq "both fail well before their join timeouts (60 s each)" "$([ "$elapsed" -lt 30 ] && echo yes || echo "no ($elapsed s)")" yes
expect_eq "no failed run recorded as succeeded" "$(q bad.db "SELECT count(*) FROM runs WHERE status = 'succeeded'")" 0

# a worker killed during the run ends the step: the run fails at once, naming srun
start=$(date +%s)
timeout 60 salloc -N1 --time=5 "$SHARDBENCH" run $syn train.epochs=200 train.computation_time=0.05 --slurm \
    --bind "tcp://$SB_LO:*" --db killed.db >sb.out 2>sb.err &
alloc=$!
victim=""
# killed once training began (its run row exists): a kill while the coordinator
# still plans fails the command before there is a run to record
for _ in $(seq 1 100); do
    grep -q "info: training: " sb.err 2>/dev/null && victim=$(pgrep -f -- "^$SHARDBENCH_WORKER --coordinator $(srun_endpoint) ")
    [ -n "$victim" ] && break
    sleep 0.1
done
[ -n "$victim" ] && kill -KILL "$victim"
wait "$alloc"
expect_eq "killed worker exits 1" "$?" 1
expect_contains "names srun" sb.err "srun ended while 1 worker(s) still ran"
elapsed=$(( $(date +%s) - start ))
expect_eq "fails well before the run would end (200 epochs, about 80 s)" "$([ "$elapsed" -lt 20 ] && echo yes || echo "no ($elapsed s)")" yes
expect_eq "recorded as failed" "$(q killed.db "SELECT status FROM runs WHERE id = $run")" failed

# (e) the worker outside srun: endpoint from $SHARDBENCH_COORDINATOR, host and log from SLURM_* variables
timeout 60 "$SHARDBENCH" run $syn --workers 1 --accelerators 2 --bind "tcp://$SB_LO:*" --join-timeout 30 \
    --db env.db >env.out 2>env.err &
coordinator=$!
ep=$(coordinator_endpoint env.err)
SHARDBENCH_COORDINATOR="$ep" SLURM_JOB_ID=77 SLURM_STEP_ID=3 SLURM_PROCID=0 SLURMD_NODENAME=fakenode \
    timeout 60 "$SHARDBENCH_WORKER" >worker.out 2>worker.err
expect_eq "worker with \$SHARDBENCH_COORDINATOR exits 0" "$?" 0
wait "$coordinator"
expect_eq "its coordinator exits 0" "$?" 0
expect_contains "logs its Slurm task" worker.err "info: slurm job 77 step 3 task 0 on fakenode"
expect_eq "reports SLURMD_NODENAME as host" "$(q env.db "SELECT host FROM run_workers WHERE run_id = $run")" fakenode
"$SHARDBENCH_WORKER" >worker.out 2>worker.err
expect_eq "no endpoint at all exits 2" "$?" 2
expect_contains "names both ways" worker.err "--coordinator ENDPOINT (or \$SHARDBENCH_COORDINATOR) is required"

echo "# $(( $(date +%s) - start0 )) s"
finish
