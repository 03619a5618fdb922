#!/usr/bin/env bash
# S3 credentials stay where they are: a datagen and train over S3 with a
# secret key, a session token and an access key id found nowhere else (the
# server is given that key pair), once from the environment and once from a
# shared credentials file profile, with debug logging, leave none of them in
# the result database (sqlite3 .dump), the coordinator's or the worker's
# output, or the messages between coordinator and workers (captured with
# SHARDBENCH_WIRE_TRACE, lib/proto/wire.c). Positive controls show that each
# place searched holds the run (so an empty search means something) and
# that the server really checks the secret.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
rnd=$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')
key_id="SBKEYID${rnd}"
secret="sbSecret/${rnd}+Zq"
token="sbToken${rnd}Tk"

trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
S3RVER_EXTRA_KEY="$key_id:$secret" s3rver_start "$SCRATCH/s3data" sbtest || { echo "FAIL - S3 server did not start"; exit 1; }

# (stdev fixed: the runs with and without a workload file read one dataset,
# and its marker refuses another record size distribution)
work="dataset.data_folder=secretdata dataset.num_files_train=16 dataset.record_length_bytes=8192
      dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.epochs=1 storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=sbtest
      storage.storage_options.endpoint_url=$S3RVER_ENDPOINT"

# control: the server refuses the S3RVER secret under the new key id, so a
# run that succeeds below has used the secret under test
AWS_ACCESS_KEY_ID=$key_id AWS_SECRET_ACCESS_KEY=S3RVER sb run $work --accelerators 1 --local 1 --db control.db
expect_eq "wrong secret for the test key id is refused" "$SB_RC" 1
expect_contains "refused by the signature check" sb.err "SignatureDoesNotMatch"

# 1. credentials from the environment, with a session token; local workers
export SHARDBENCH_WIRE_TRACE="$SCRATCH/wire1.bin"
AWS_ACCESS_KEY_ID=$key_id AWS_SECRET_ACCESS_KEY=$secret AWS_SESSION_TOKEN=$token \
    sb run $work --accelerators 2 --local 2 -v --db s.db
cp sb.out run1.out
cp sb.err run1.err
expect_eq "run with credentials from the environment" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
expect_contains "credentials came from the environment" run1.err "S3 credentials from environment"

# 2. credentials from a profile of a shared credentials file; a worker
# started on its own, with its own log
unset SHARDBENCH_WIRE_TRACE
# [default] holds a pair the server refuses: only profile bench works
cat >creds <<INI
[default]
aws_access_key_id = $key_id
aws_secret_access_key = not-the-secret

[bench]
aws_access_key_id = $key_id
aws_secret_access_key = $secret
INI
chmod 600 creds
port=$(python3 -c 'import socket, sys; s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1]); s.close()' "$SB_LO")
(
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
    export AWS_SHARED_CREDENTIALS_FILE="$SCRATCH/creds" AWS_PROFILE=bench SHARDBENCH_WIRE_TRACE="$SCRATCH/wire2.bin"
    timeout 60 "$SHARDBENCH" run $work --accelerators 1 --workers 1 --bind "tcp://$SB_LO:$port" -v --db s.db \
        >run2.out 2>run2.err &
    coord=$!
    timeout 60 "$SHARDBENCH_WORKER" --coordinator "tcp://$SB_LO:$port" -v >worker.out 2>worker.err
    echo "$?" >worker.rc
    wait "$coord"
    echo "$?" >run2.rc
)
expect_eq "run with credentials from a profile" "$(cat run2.rc)" 0
expect_eq "its worker exits 0" "$(cat worker.rc)" 0
expect_contains "coordinator credentials came from the profile" run2.err "S3 credentials from $SCRATCH/creds [bench]"
expect_contains "the worker's log holds its run" worker.err "joined as worker 0"

sqlite3 s.db .dump >dump.sql
# the places searched hold the runs: workload, bucket and data in each
expect_eq "database holds both train runs" "$(q s.db "SELECT count(*) FROM runs WHERE kind = 'train' AND status = 'succeeded'")" 2
expect_contains "database dump holds the workload" dump.sql "secretdata"
for w in wire1.bin wire2.bin; do
    expect_eq "$w: coordinator and workers traced (WELCOME sent, READY received, PHASE_START sent)" \
        "$(for t in "send [0-9]* WELCOME" "recv [0-9]* READY" "send [0-9]* PHASE_START "; do grep -a -c "^SBWIRE $t" "$w"; done | awk '$1 > 0' | wc -l)" 3
    expect_contains "$w: the workload crossed the wire" "$w" "secretdata"
    expect_contains "$w: the endpoint crossed the wire" "$w" "$S3RVER_ENDPOINT"
done
expect_eq "both processes wrote to wire1.bin" "$(grep -a '^SBWIRE ' wire1.bin | awk '{print $3}' | sort -u | wc -l)" 3

# the secrets: nowhere
for f in dump.sql run1.out run1.err run2.out run2.err worker.out worker.err wire1.bin wire2.bin; do
    for v in "$secret" "$token" "$key_id"; do
        n=$(grep -a -c -F -- "$v" "$f")
        expect_eq "$f holds no ${v:0:7}... value" "$n" 0
    done
done
# nor the database file itself (free pages, WAL included)
for f in s.db s.db-wal; do
    [ -f "$f" ] || continue
    expect_eq "$f (raw) holds no secret" "$(grep -a -c -F -e "$secret" -e "$token" -e "$key_id" "$f")" 0
done
# 3. credentials written into the workload, in DLIO's storage_options
# spelling, with none in the environment: the coordinator uses them (listing,
# preflight) and gives them to its --local workers through their process
# environment; they are not recorded (runs.config shows <redacted>), shown
# in the HTML report or the logs, or sent to the workers over the wire
cat >creds.yaml <<YAML
storage:
  storage_options:
    access_key_id: $key_id
    secret_access_key: $secret
    session_token: $token
YAML
export SHARDBENCH_WIRE_TRACE="$SCRATCH/wire3.bin"
(
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
    export AWS_SHARED_CREDENTIALS_FILE="$SCRATCH/no-such-credentials"
    sb run creds.yaml $work --accelerators 2 --local 2 -v --db y.db
    echo "$SB_RC" >run3.rc
)
unset SHARDBENCH_WIRE_TRACE
cp sb.out run3.out
cp sb.err run3.err
expect_eq "run with credentials only in the workload file exits 0" "$(cat run3.rc)" 0
expect_contains "the workload's credentials are said to be used" run3.err \
    "S3 credentials: from creds.yaml:3 (storage.storage_options.access_key_id): used by this coordinator and given to its local workers through their environment"
expect_contains "the run summary names the storage engine" run3.err "storage: s3"
expect_eq "runs.config holds the three keys, redacted" \
    "$(q y.db "SELECT config FROM runs WHERE kind = 'train'" | grep -E -c '^ *(access_key_id|secret_access_key|session_token): "?<redacted>"?$')" 3
"$SHARDBENCH" report last --html run3.html --db y.db >report3.out 2>report3.err
expect_eq "HTML report written" "$?" 0
"$SHARDBENCH" report last --json --db y.db >run3.json 2>>report3.err
sqlite3 y.db .dump >dump3.sql
strings -a y.db >strings3.txt
expect_contains "the HTML report shows the endpoint" run3.html "${S3RVER_ENDPOINT#http://}"
expect_contains "the wire carried the workload" wire3.bin "secretdata"
expect_contains "strings of the database hold the run" strings3.txt "secretdata"
for f in dump3.sql strings3.txt run3.out run3.err run3.html run3.json report3.err wire3.bin y.db; do
    for v in "$key_id" "$secret" "$token"; do
        expect_eq "$f holds no ${v:0:10}... value" "$(grep -a -c -F -- "$v" "$f")" 0
    done
done

# 3b. a worker on another host (started on its own) with no credentials of
# its own: the run refuses, the row naming the worker's host and how to
# give it credentials (the file's never cross the wire)
port=$(python3 -c 'import socket, sys; s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1]); s.close()' "$SB_LO")
(
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
    export AWS_SHARED_CREDENTIALS_FILE="$SCRATCH/no-such-credentials"
    timeout 60 "$SHARDBENCH" run creds.yaml $work --accelerators 1 --workers 1 --bind "tcp://$SB_LO:$port" \
        --join-timeout 30 --db r.db >run4.out 2>run4.err &
    coord=$!
    timeout 60 "$SHARDBENCH_WORKER" --coordinator "tcp://$SB_LO:$port" --host farhost >worker4.out 2>worker4.err
    wait "$coord"
    echo "$?" >run4.rc
)
expect_eq "a worker without credentials fails the run" "$(cat run4.rc)" 1
expect_contains "the preflight names the host and what is missing" run4.err "farhost"
expect_contains "the preflight says how to give credentials" run4.err \
    "give this host AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the worker's environment"
for f in run4.out run4.err worker4.out worker4.err; do
    expect_eq "$f holds no secret" "$(grep -a -c -F -e "$secret" -e "$token" -e "$key_id" "$f")" 0
done

# 4. an endpoint URL with USER:PASSWORD@ is refused before anything starts,
# naming the key, without repeating the password
pw="sbPassWord${rnd}"
sb run $work "storage.storage_options.endpoint_url=http://bench:$pw@${S3RVER_ENDPOINT#http://}" --accelerators 1 --local 1 --db u.db
expect_eq "endpoint with a password exits 2" "$SB_RC" 2
expect_eq "endpoint with a password: exact error" "$(cat sb.err)" \
    "shardbench: error: command line: key 'storage.storage_options.endpoint_url': endpoint 1 holds a user name or password (USER:PASSWORD@): refused, since endpoints are recorded and sent to the workers; give http(s)://HOST[:PORT] and the credentials in the environment (docs/STORAGE.md)"
expect_eq "the password is not repeated" "$(cat sb.out sb.err | grep -c -F -- "$pw")" 0
expect_eq "nothing recorded" "$([ -e u.db ] && echo database || echo none)" none
printf 'storage:\n  storage_options:\n    endpoint_urls: [%s, "http://u:%s@127.0.0.1:1"]\n' "$S3RVER_ENDPOINT" "$pw" >ep.yaml
sb run ep.yaml $work --accelerators 1 --local 1 --db u.db
expect_eq "second endpoint of a list with a password exits 2" "$SB_RC" 2
expect_contains "names the file, key and endpoint" sb.err "ep.yaml:3: key 'storage.storage_options.endpoint_urls': endpoint 2 holds a user name or password"
expect_eq "the password is not repeated (list)" "$(cat sb.out sb.err | grep -c -F -- "$pw")" 0

finish
