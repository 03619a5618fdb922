#!/usr/bin/env bash
# --hosts: the coordinator starts one worker per host over ssh and stops them;
# an unreachable host fails the run fast, naming the host. Runs a private
# sshd on 127.0.0.1 and 127.0.0.2 with keys made here; needs root (sshd logs
# in as the user running it) and openssh-server (deploy/install-deps.sh --tests).
. "$(dirname "$0")/lib.sh"

SSHD=/usr/sbin/sshd
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: test_ssh.sh needs root to run a private sshd"; exit 77
fi
if [ ! -x "$SSHD" ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
    echo "SKIP: openssh-server/openssh-client missing (deploy/install-deps.sh --tests)"; exit 77
fi

syn="dataset.data_folder=synthetic://ssh dataset.num_files_train=32 dataset.record_length_bytes=4096
     reader.batch_size=4 train.epochs=1 train.computation_time=0"

ssh-keygen -q -t ed25519 -N '' -f "$SCRATCH/host_key" >/dev/null
ssh-keygen -q -t ed25519 -N '' -f "$SCRATCH/user_key" >/dev/null
cp "$SCRATCH/user_key.pub" "$SCRATCH/authorized_keys"
chmod 600 "$SCRATCH/authorized_keys"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$SCRATCH/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
ListenAddress 127.0.0.2
HostKey $SCRATCH/host_key
AuthorizedKeysFile $SCRATCH/authorized_keys
PidFile $SCRATCH/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
LogLevel ERROR
EOF
# sshd refuses to start without its privilege separation directory
[ -d /run/sshd ] || mkdir -p /run/sshd
"$SSHD" -D -e -f "$SCRATCH/sshd_config" 2>"$SCRATCH/sshd.err" &
sshd_pid=$!
trap 'kill "$sshd_pid" 2>/dev/null; wait "$sshd_pid" 2>/dev/null; rm -rf "$SCRATCH"' EXIT

export SHARDBENCH_SSH="ssh -F /dev/null -p $port -i $SCRATCH/user_key -o UserKnownHostsFile=$SCRATCH/known_hosts -o StrictHostKeyChecking=accept-new -o ConnectTimeout=5"
# the remote workers run as a link in the scratch folder: a name no other
# test's workers have (tests run in parallel), for the check that they are gone
mkdir "$SCRATCH/bin" && ln -s "$SHARDBENCH_WORKER" "$SCRATCH/bin/shardbench-worker"
export SHARDBENCH_REMOTE_WORKER="$SCRATCH/bin/shardbench-worker"
up=0
for _ in $(seq 1 100); do
    kill -0 "$sshd_pid" 2>/dev/null || break
    if $SHARDBENCH_SSH -o BatchMode=yes 127.0.0.2 true 2>/dev/null; then up=1; break; fi
    sleep 0.1
done
if [ "$up" -ne 1 ]; then
    echo "SKIP: sshd did not start on 127.0.0.1/127.0.0.2:$port:"; sed 's/^/    /' "$SCRATCH/sshd.err"; exit 77
fi

# two hosts over ssh, pointing back at the address the coordinator bound
sb run $syn --accelerators 2 --hosts 127.0.0.1,127.0.0.2 --bind "tcp://$SB_LO:*" --db ssh.db
expect_eq "run over ssh exits 0" "$SB_RC" 0
[ "$SB_RC" -eq 0 ] || sed 's/^/    /' sb.err | tail -20
run="(SELECT max(id) FROM runs WHERE kind = 'train')"
expect_eq "run recorded" "$(q ssh.db "SELECT status, workers FROM runs WHERE id = $run")" "succeeded|2"
expect_eq "one worker per host" "$(q ssh.db "SELECT host FROM run_workers WHERE run_id = $run ORDER BY host" | tr '\n' ' ')" \
    "127.0.0.1 127.0.0.2 "
expect_eq "all samples read" "$(q ssh.db "SELECT samples FROM epochs WHERE run_id = $run")" 32

# the remote workers are gone once the run is over
left=1
for _ in $(seq 1 100); do
    pgrep -f -- "$SHARDBENCH_REMOTE_WORKER --coordinator .* --host 127.0.0.[12] " >/dev/null || { left=0; break; }
    sleep 0.1
done
expect_eq "no remote worker left" "$left" 0

# --hostfile: one host per line, # comments
printf '# loopback hosts\n127.0.0.2   # the second one\n\n127.0.0.1\n' >hosts.txt
sb run $syn --accelerators 2 --hostfile hosts.txt --bind "tcp://$SB_LO:*" --db ssh.db
expect_eq "run with --hostfile exits 0" "$SB_RC" 0
expect_eq "hostfile hosts" "$(q ssh.db "SELECT host FROM run_workers WHERE run_id = $run ORDER BY host" | tr '\n' ' ')" \
    "127.0.0.1 127.0.0.2 "

# --hosts excludes --local and --workers; an empty host list is refused
sb run $syn --hosts 127.0.0.1 --local 1 --db ssh.db
expect_eq "--hosts with --local exits 2" "$SB_RC" 2
printf '# nobody\n' >empty.txt
sb run $syn --hostfile empty.txt --bind "tcp://$SB_LO:*" --db ssh.db
expect_eq "empty hostfile exits 2" "$SB_RC" 2
expect_contains "empty hostfile says so" sb.err "name no host"

# a host where nothing listens on the port fails fast, naming the host and ssh's error
start=$(date +%s)
sb run $syn --accelerators 2 --hosts 127.0.0.1,127.0.0.3 --bind "tcp://$SB_LO:*" --db bad.db
elapsed=$(( $(date +%s) - start ))
expect_eq "unreachable host exits 1" "$SB_RC" 1
expect_contains "names the host" sb.err "host 127.0.0.3: ssh ended before its worker joined (exit status 255)"
expect_contains "shows ssh's error" sb.err "Connection refused"
sed 's/^/    /' sb.err | tail -3
expect_eq "fails within 20 s" "$([ "$elapsed" -lt 20 ] && echo yes || echo "no ($elapsed s)")" yes
expect_eq "no run recorded as succeeded" "$([ -f bad.db ] && q bad.db "SELECT count(*) FROM runs WHERE status = 'succeeded'" || echo 0)" 0

# no shell injection: every word of the remote command is quoted for the
# remote shell, and a workload file never chooses the remote command
printf 'shardbench:\n  remote_worker: "%s"\n' "$SHARDBENCH_WORKER; touch $SCRATCH/pwned_yaml #" >rw.yaml
sb run rw.yaml $syn --accelerators 1 --hosts 127.0.0.1 --bind "tcp://$SB_LO:*" --db inj.db
expect_eq "remote_worker from a workload file exits 2" "$SB_RC" 2
expect_eq "remote_worker from a workload file: exact error" "$(cat sb.err)" \
    "shardbench run: rw.yaml:2: key 'shardbench.remote_worker': a workload file does not choose the command run on other hosts: give it on the command line (shardbench.remote_worker=PATH) or in \$SHARDBENCH_REMOTE_WORKER"
sb run rw.yaml $syn --accelerators 1 --local 1 --db inj.db
expect_eq "remote_worker from a file is harmless (and allowed) with --local" "$SB_RC" 0
# on the command line: the whole value is one program name, which does not exist
sb run $syn --accelerators 1 --hosts 127.0.0.1 --bind "tcp://$SB_LO:*" --join-timeout 20 --db inj.db \
    "shardbench.remote_worker=$SHARDBENCH_WORKER; touch $SCRATCH/pwned_cli #"
expect_eq "remote_worker with a ';' is one word: the run fails" "$SB_RC" 1
expect_contains "the shell looked for one program" sb.err "$SHARDBENCH_WORKER; touch $SCRATCH/pwned_cli #: No such file or directory"
# a --keys path holding shell syntax reaches the worker intact
kd="$SCRATCH/k d;touch $SCRATCH/pwned_keys;\$(touch $SCRATCH/pwned_subst) # it's"
"$SHARDBENCH" keys --dir "$kd" >/dev/null
sb run $syn --accelerators 1 --hosts 127.0.0.1 --bind "tcp://$SB_LO:*" --keys "$kd" --db inj.db
expect_eq "run with a --keys path full of shell syntax exits 0" "$SB_RC" 0
[ "$SB_RC" -eq 0 ] || sed 's/^/    /' sb.err | tail -5
expect_eq "nothing ran: no marker file" "$(ls "$SCRATCH" | grep -c '^pwned')" 0
sb run $syn --accelerators 1 --hosts "-oProxyCommand=false" --bind "tcp://$SB_LO:*" --db inj.db
expect_eq "a host that reads as an ssh option exits 1" "$SB_RC" 1
expect_contains "and says why" sb.err "host '-oProxyCommand=false': not a host name (it would be read as an ssh option)"
expect_eq "still no marker file" "$(ls "$SCRATCH" | grep -c '^pwned')" 0

finish
