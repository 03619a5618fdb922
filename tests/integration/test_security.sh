#!/usr/bin/env bash
# Security: only workers holding an admitted CURVE certificate join, the
# traffic is encrypted, and a routable bind needs keys or --insecure.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)

marker=sbmarker7q   # in the workload a worker receives; must never cross the wire in clear
syn="dataset.data_folder=synthetic://$marker dataset.file_prefix=$marker dataset.num_files_train=64 dataset.record_length_bytes=4096
     reader.batch_size=4 train.epochs=1 train.computation_time=0"

# keys: the files, their modes, and nothing replaced on a second call
sb keys --dir k1
expect_eq "keys exit" "$SB_RC" 0
expect_eq "keys files" "$(cd k1 && find . -type f | sort | tr '\n' ' ')" \
    "./allowed/worker.cert ./coordinator.cert ./coordinator.cert_secret ./worker.cert ./worker.cert_secret "
expect_eq "secrets readable by the owner only" "$(stat -c %a k1/coordinator.cert_secret k1/worker.cert_secret k1 | tr '\n' ' ')" "600 600 700 "
sum=$(cat k1/coordinator.cert k1/coordinator.cert_secret k1/worker.cert k1/worker.cert_secret | md5sum)
sb keys --dir k1 --worker node-b
expect_eq "second worker added" "$(ls k1/allowed | tr '\n' ' ')" "node-b.cert worker.cert "
expect_eq "existing keys kept" "$(cat k1/coordinator.cert k1/coordinator.cert_secret k1/worker.cert k1/worker.cert_secret | md5sum)" "$sum"
sb keys --dir k1 --worker ../evil
expect_eq "bad certificate name refused" "$SB_RC" 2

# keys under umask 000: nothing made open to others (secrets 0600, public
# certificates 0644, folders 0700)
( umask 000; sb keys --dir k0/sub; echo "$SB_RC" >k0.rc )
expect_eq "keys under umask 000 exits 0" "$(cat k0.rc)" 0
expect_eq "modes under umask 000" "$(cd k0/sub && stat -c '%n %a' . allowed coordinator.cert coordinator.cert_secret worker.cert worker.cert_secret allowed/worker.cert | tr '\n' ' ')" \
    ". 700 allowed 700 coordinator.cert 644 coordinator.cert_secret 600 worker.cert 644 worker.cert_secret 600 allowed/worker.cert 644 "
expect_eq "parent folder made 0700" "$(stat -c %a k0)" 700

# a routable bind without keys is refused before anything starts
sb run $syn --workers 1 --db refuse.db
expect_eq "default --workers bind without keys exits 2" "$SB_RC" 2
expect_contains "says why and what to do" sb.err "tcp://*:5555 can be reached from other hosts"
sb run $syn --workers 1 --bind tcp://10.255.255.1:5555 --db refuse.db
expect_eq "routable --bind without keys exits 2" "$SB_RC" 2
expect_contains "--insecure offered" sb.err "pass --insecure"
expect_eq "nothing recorded" "$([ -f refuse.db ] && q refuse.db "SELECT count(*) FROM runs" || echo 0)" 0

# local workers with CURVE
sb run $syn --accelerators 2 --local 2 --keys k1 --db local.db
expect_eq "CURVE run with local workers" "$SB_RC" 0
expect_eq "CURVE run recorded" "$(q local.db "SELECT status, samples FROM runs r JOIN epochs e ON e.run_id = r.id WHERE r.kind = 'train'")" "succeeded|64"
expect_eq "no key-mode warning with private keys" "$(grep -c 'secret key file' sb.err)" 0

# a secret key file others can read: a warning naming the file and mode
cp -r k1 kopen && chmod 644 kopen/coordinator.cert_secret && chmod 640 kopen/worker.cert_secret
sb run $syn --accelerators 1 --local 1 --keys kopen --db open.db
expect_eq "run with readable secrets still runs" "$SB_RC" 0
expect_contains "coordinator secret named with its mode" sb.err \
    "secret key file kopen/coordinator.cert_secret has mode 0644: other users can read it and impersonate its owner (chmod 600 kopen/coordinator.cert_secret)"
expect_contains "worker secret named with its mode" sb.err \
    "secret key file kopen/worker.cert_secret has mode 0640"

# remote workers through a relay that records every byte on the wire
( timeout 60 "$SHARDBENCH" run $syn --accelerators 1 --workers 1 --bind "tcp://$SB_LO:*" --keys k1 \
      --db remote.db >coord.out 2>coord.err ) &
coord=$!
port=$(coordinator_endpoint coord.err); port=${port##*:}
python3 "$here/tcp_capture.py" 0 "$port" wire.bin "$SB_LO" >relay.out 2>relay.err &
relay_pid=$!
await_text relay.out ready
relay=$(awk '/ready/ {print $2}' relay.out)

# a worker whose certificate the coordinator has not admitted (it trusts the right coordinator key)
"$SHARDBENCH" keys --dir k3 >/dev/null && cp k1/coordinator.cert k3/coordinator.cert
start=$(date +%s.%N)
timeout 30 "$SHARDBENCH_WORKER" --coordinator "tcp://$SB_LO:$relay" --keys k3 --timeout 10 >rogue.out 2>rogue.err
rc=$?
took=$(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')")
expect_eq "unadmitted worker exits 1 (refused in ${took} s)" "$rc" 1
expect_contains "unadmitted worker told why" rogue.err "allowed/ directory"
expect_eq "unadmitted worker learned nothing of the workload" "$(grep -c "$marker" rogue.out rogue.err | awk -F: '{s += $2} END {print s}')" 0

# a worker with no keys at all
timeout 30 "$SHARDBENCH_WORKER" --coordinator "tcp://$SB_LO:$relay" --timeout 10 >plain.out 2>plain.err
expect_eq "worker without keys exits 1" "$?" 1
expect_contains "worker without keys told why" plain.err "the coordinator requires CURVE and this worker has no keys"

# the admitted worker (second certificate) runs the workload
timeout 60 "$SHARDBENCH_WORKER" --coordinator "tcp://$SB_LO:$relay" --keys k1 --cert node-b --host node-b \
    >good.out 2>good.err
expect_eq "admitted worker exits 0" "$?" 0
wait $coord
expect_eq "coordinator exits 0" "$?" 0
expect_eq "one worker joined: the admitted one" "$(q remote.db "SELECT count(*), group_concat(host) FROM run_workers WHERE run_id = (SELECT max(id) FROM runs)")" "1|node-b"
expect_eq "the run read every sample" "$(q remote.db "SELECT status, samples FROM runs r JOIN epochs e ON e.run_id = r.id WHERE r.id = (SELECT max(id) FROM runs)")" "succeeded|64"
expect_eq "traffic crossed the relay" "$([ "$(stat -c %s wire.bin)" -gt 1000 ] && echo yes)" yes
expect_eq "the workload never crossed in clear text (CURVE)" "$(grep -c "$marker" wire.bin)" 0

kill "$relay_pid" 2>/dev/null
wait "$relay_pid" 2>/dev/null

# control: without keys on loopback the same workload is readable on the wire
( timeout 60 "$SHARDBENCH" run $syn --accelerators 1 --workers 1 --bind "tcp://$SB_LO:*" --db plain.db \
      >coord2.out 2>coord2.err ) &
coord=$!
port=$(coordinator_endpoint coord2.err); port=${port##*:}
python3 "$here/tcp_capture.py" 0 "$port" plain.bin "$SB_LO" >relay2.out 2>relay2.err &
relay_pid=$!
await_text relay2.out ready
relay=$(awk '/ready/ {print $2}' relay2.out)
timeout 60 "$SHARDBENCH_WORKER" --coordinator "tcp://$SB_LO:$relay" >w.out 2>w.err
wait $coord
expect_eq "plain run exits 0" "$?" 0
expect_eq "without CURVE the capture shows the workload (the check above can fail)" \
    "$([ "$(grep -c "$marker" plain.bin)" -gt 0 ] && echo visible)" visible
kill "$relay_pid" 2>/dev/null
wait "$relay_pid" 2>/dev/null

# --local admits only its own workers: it listens on a Unix socket in a
# private folder (mkdtemp, 0700, this user's), not on a loopback TCP port
# any local user can reach. The rogue runs as another user (nobody), with a
# positive control showing that user can reach a socket in the same place.
chmod 711 "$SCRATCH"
mkdir -m 1777 pub
export TMPDIR="$SCRATCH/pub"
( unset XDG_RUNTIME_DIR; exec timeout 120 "$SHARDBENCH" run $syn dataset.num_files_train=256 train.epochs=4 \
      train.computation_time=0.05 --accelerators 2 --local 2 -v --db localipc.db >lipc.out 2>lipc.err ) &
coord=$!
sock=
for _ in $(seq 300); do
    sock=$(ls "$SCRATCH"/pub/shardbench-*/coordinator.sock 2>/dev/null | head -1)
    [ -n "$sock" ] && grep -q "joined as worker 1" lipc.err && break
    sleep 0.05
done
dir=$(dirname "$sock")
expect_eq "--local listens on a socket in a private folder" "$([ -S "$sock" ] && stat -c '%U %a' "$dir")" "$(id -un) 700"
expect_eq "the two local workers were given that socket" "$(pgrep -c -f -- "--coordinator ipc://$sock")" 2
# the rogue is another user (nobody), which only root can become; without
# root only the checks of the socket and its folder above apply
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    python3 - "$SCRATCH/pub/control.sock" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(1); time.sleep(20)
PY
    ctl=$!
    for _ in $(seq 100); do [ -S pub/control.sock ] && break; sleep 0.05; done
    connect='import socket, sys
try:
    socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print("connected")
except OSError as e:
    print(type(e).__name__)'
    as_nobody () { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    # the system python: a python3 earlier on PATH may live where nobody cannot read
    py=/usr/bin/python3
    expect_eq "control: another user reaches a socket beside the private folder" \
        "$(as_nobody "$py" -c "$connect" "$SCRATCH/pub/control.sock")" connected
    kill "$ctl" 2>/dev/null; wait "$ctl" 2>/dev/null
    expect_eq "another user cannot connect to the run's socket" "$(as_nobody "$py" -c "$connect" "$sock")" PermissionError
    as_nobody timeout 30 "$SHARDBENCH_WORKER" --coordinator "ipc://$sock" --host rogue --timeout 3 >lrogue.out 2>lrogue.err
    expect_eq "a rogue worker of another user exits 1" "$?" 1
    expect_eq "the rogue learned nothing" "$(grep -c -e joined -e "$marker" lrogue.out lrogue.err | awk -F: '{s += $2} END {print s}')" 0
else
    echo "# SKIP: the rogue-as-another-user checks need root and setpriv"
fi
expect_eq "the run was still going while the rogue tried" "$(kill -0 "$coord" 2>/dev/null && echo running)" running
wait "$coord"
expect_eq "the --local run succeeds with its own workers" "$?" 0
expect_eq "its two workers joined, no rogue" \
    "$(q localipc.db "SELECT count(*), count(DISTINCT pid), sum(host = 'rogue') FROM run_workers")" "2|2|0"
expect_eq "the private folder is removed at exit" "$([ -e "$dir" ] && echo left || echo removed)" removed
unset TMPDIR

finish
