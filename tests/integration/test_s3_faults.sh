#!/usr/bin/env bash
# S3 faults: a fault proxy (tests/s3/fault_proxy.c) between shardbench and
# s3rver on loopback injects faults into object GETs only (preflight and
# listing go through). Transient faults are retried, counted per endpoint,
# and the run reads exactly the bytes of a fault-free run; persistent faults
# fail the run with endpoint, key, operation and cause on stderr and in the
# errors table. Every count is exact: faults hit the first N object GETs,
# and N stays below max_retries, so each fault is one retried attempt.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"
: "${FAULT_PROXY:?path of the fault_proxy binary}"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
proxy_pid=""
trap 's3rver_stop; [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" sbtest || { echo "FAIL - S3 server did not start"; exit 1; }
direct=$S3RVER_ENDPOINT

# the proxy: two ports in front of the server, mode switched through ctl
echo "none 0 start" >ctl
"$FAULT_PROXY" -u "$S3RVER_PORT" -c "$SCRATCH/ctl" >proxy.out 2>proxy.err &
proxy_pid=$!
await_text proxy.out listening
read -r _ _ _ port1 port2 <proxy.out
[ -n "${port2:-}" ] || { echo "FAIL - fault proxy did not start"; cat proxy.err; exit 1; }
p1=http://$port1
p2=http://$port2

gen=0
# fault MODE COUNT: switch the proxy, starting a new proxy log section
fault () {
    gen=$((gen + 1))
    echo "$1 $2 $gen" >ctl.tmp && mv ctl.tmp ctl
    cut_at=$(wc -l <proxy.err)
}
# injected: faults the proxy injected since the last switch
injected () { tail -n +"$((cut_at + 1))" proxy.err | grep -c 'inject'; }

# 24 objects; 2 epochs: 48 object GETs per run. record_length_bytes 20000
# draws records as DLIO does, int(sqrt(20000))^2 = 141^2 = 19881 bytes
# (lib/dataset/dataset.c sb_dataset_record_dims, stdev 0); raw objects (no format
# framing): an object is exactly its record
rec=$(python3 -c 'import math; print(math.isqrt(20000) ** 2)')
common="dataset.format=bin dataset.data_folder=faults dataset.num_files_train=24 dataset.record_length_bytes=20000
        dataset.record_length_bytes_stdev=0 reader.batch_size=4 train.epochs=2 train.computation_time=0
        storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=sbtest
        storage.storage_options.request_timeout_s=1 storage.storage_options.connect_timeout_s=1
        storage.storage_options.max_retries=3"
last () { echo "(SELECT max(id) FROM runs)"; }
dur () { q f.db "SELECT printf('%.2f', finished_at - started_at) FROM runs WHERE id = $(last)"; }

# generate the data straight to the server, then a fault-free run through the proxy
sb run $common storage.storage_options.endpoint_url=$direct --accelerators 2 --local 1 --db f.db
expect_eq "datagen and first train straight to the server" "$SB_RC" 0
bytes=$(q f.db "SELECT bytes FROM catalogs ORDER BY id DESC LIMIT 1")
expect_eq "dataset bytes: 24 records of $rec" "$bytes" $((24 * rec))
fault none 0
sb run $common storage.storage_options.endpoint_url=$p1 --accelerators 2 --local 1 --db f.db
expect_eq "fault-free run through the proxy" "$SB_RC" 0
expect_eq "fault-free: 48 GETs, no error, no retry, every byte once" \
    "$(q f.db "SELECT requests, errors, retries, bytes FROM endpoints WHERE run_id = $(last)")" "48|0|0|$((48 * rec))"
base=$(dur)
echo "# fault-free run through the proxy: $base s"

# transient_check WHAT REQUESTS ERRORS RETRIES: the last run succeeded with
# the given endpoint counters and exactly the bytes and samples of a
# fault-free run in every epoch, every rank and the time series
transient_check () {
    local what=$1
    expect_eq "$what: run succeeds" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    expect_eq "$what: status" "$(q f.db "SELECT status FROM runs WHERE id = $(last)")" succeeded
    expect_eq "$what: requests|errors|retries|bytes per endpoint" \
        "$(q f.db "SELECT group_concat(c, ' ') FROM (SELECT requests || '|' || errors || '|' || retries || '|' || bytes AS c
                     FROM endpoints WHERE run_id = $(last) ORDER BY endpoint = '$p2')")" "$2"
    expect_eq "$what: every epoch read 24 samples and exactly the dataset's bytes" \
        "$(q f.db "SELECT group_concat(epoch || ':' || samples || ':' || bytes, ' ') FROM epochs WHERE run_id = $(last)")" \
        "1:24:$bytes 2:24:$bytes"
    expect_eq "$what: ranks counted the dataset's bytes once per epoch" \
        "$(q f.db "SELECT sum(bytes), sum(samples) FROM rank_epochs WHERE run_id = $(last)")" "$((2 * bytes))|48"
    expect_eq "$what: time series counted every byte once" \
        "$(q f.db "SELECT sum(bytes), sum(reads) FROM timeseries WHERE run_id = $(last)")" "$((2 * bytes))|48"
    expect_eq "$what: retried failures are not errors of the run" \
        "$(q f.db "SELECT count(*) FROM errors WHERE run_id = $(last)")" 0
    # a run that succeeded after retries says so in its summary
    local retried
    retried=$(q f.db "SELECT ', with ' || sum(retries) || ' retr' || CASE sum(retries) WHEN 1 THEN 'y' ELSE 'ies' END
                      || ' (' || sum(errors) || ' failed attempt' || CASE sum(errors) WHEN 1 THEN '' ELSE 's' END
                      || ' of ' || sum(requests) || ' requests to ' || count(*) || ' object-store endpoint'
                      || CASE count(*) WHEN 1 THEN '' ELSE 's' END || ')' FROM endpoints WHERE run_id = $(last)")
    expect_eq "$what: the summary says it succeeded after retries ($retried)" \
        "$(grep '^  status: succeeded after ' sb.out | grep -cF -- "$retried")" 1
    echo "# $what: run took $(dur) s (fault-free $base s)"
}

# 1. transient faults on one endpoint, 2 ranks, 4 requests in flight each
for mode in 503 500 reset drop; do
    fault "$mode" 2
    sb run $common storage.storage_options.endpoint_url=$p1 storage.storage_options.max_in_flight=4 \
        --accelerators 2 --local 1 --db f.db
    expect_eq "transient $mode: proxy injected 2 faults" "$(injected)" 2
    transient_check "transient $mode x2" "50|2|2|$((48 * rec))"
done
expect_eq "reset: the replies were cut mid-body ($((rec / 2)) of $rec bytes)" \
    "$(grep -c "reset after $((rec / 2)) body bytes" proxy.err)" 2

# a stall longer than the 1 s request timeout: one attempt times out, its retry succeeds
fault stall 1
sb run $common storage.storage_options.endpoint_url=$p1 storage.storage_options.max_in_flight=4 \
    --accelerators 2 --local 1 --db f.db
expect_eq "transient stall: proxy stalled 1 request" "$(injected)" 1
transient_check "transient stall x1" "49|1|1|$((48 * rec))"
expect_eq "stall: the run waited for the 1 s request timeout (and not 10 s)" \
    "$(q f.db "SELECT finished_at - started_at >= 1.0 AND finished_at - started_at < 10 FROM runs WHERE id = $(last)")" 1

# connection refused for the first 2 connects: port2 stops listening at the
# first object GET and listens again after 2 more GETs on port1. One rank
# reading one object at a time over [port1, port2] in round robin: attempts
# alternate, each refused attempt is retried on port1, so exactly 2 attempts
# are refused, and the 50 attempts split 25 / 25 (port1 first: 25 successes of
# 19881 bytes; port2: 23).
fault refuse 2
sb run $common "storage.storage_options.endpoint_urls=[$p1,$p2]" storage.storage_options.max_in_flight=1 \
    --accelerators 1 --local 1 --db f.db
expect_eq "transient refuse: port2 refused, then listened again" \
    "$(tail -n +"$((cut_at + 1))" proxy.err | grep -c 'stopped listening\|listens again')" 2
transient_check "transient refuse x2" "25|0|0|$((25 * rec)) 25|2|2|$((23 * rec))"

# persistent_check WHAT ENDPOINT HTTP SERVICE_CODE LIBRARY_CODE TEXT: the last run failed after
# max_retries + 1 = 3 attempts of one GET, with the cause on stderr and in
# the errors table
persistent_check () {
    local what=$1 ep=$2
    expect_eq "$what: exit status 1" "$SB_RC" 1
    expect_eq "$what: run failed" "$(q f.db "SELECT status FROM runs WHERE id = $(last)")" failed
    expect_eq "$what: one read error: endpoint|op|http|service code|library code|attempt" \
        "$(q f.db "SELECT endpoint, op, http_status, service_code, library_code, attempt FROM errors WHERE run_id = $(last) AND rank = 0")" \
        "$ep|read|$3|$4|$5|3"
    expect_eq "$what: the error names the object" \
        "$(q f.db "SELECT target GLOB 'faults/train/img_*_of_24.bin' FROM errors WHERE run_id = $(last) AND rank = 0")" 1
    local msg
    msg=$(q f.db "SELECT message FROM errors WHERE run_id = $(last) AND rank = 0")
    expect_eq "$what: message has operation, key, endpoint, attempt and cause" \
        "$(case "$msg" in "GET sbtest/faults/train/img_"*"_of_24.bin on $ep failed (attempt 3): "*"$6"*) echo yes;; *) echo "$msg";; esac)" yes
    expect_contains "$what: stderr has the same message" sb.err "$msg"
    expect_contains "$what: the run's error has it too" sb.err "shardbench: error: rank 0 on "
    expect_eq "$what: runs.error is the message" \
        "$(q f.db "SELECT instr(error, '$6') > 0 AND instr(error, '$ep') > 0 FROM runs WHERE id = $(last)")" 1
    expect_eq "$what: the failed run still records its attempts: endpoint|requests|errors|retries" \
        "$(q f.db "SELECT endpoint, requests, errors, retries FROM endpoints WHERE run_id = $(last)")" "$ep|3|3|2"
    echo "# $what: failed after $(dur) s"
}

# 2. persistent faults: one rank, one request at a time, 2 retries
pers="--accelerators 1 --local 1 --db f.db storage.storage_options.max_in_flight=1 storage.storage_options.max_retries=2"
fault 503 -1
sb run $common storage.storage_options.endpoint_url=$p1 $pers
persistent_check "persistent 503" "$p1" 503 SlowDown 0 "HTTP 503 SlowDown: Please reduce your request rate. [http 503, curl 0, errno 0]"
fault 500 -1
sb run $common storage.storage_options.endpoint_url=$p1 $pers
persistent_check "persistent 500" "$p1" 500 InternalError 0 "HTTP 500 InternalError: We encountered an internal error. Please try again. [http 500, curl 0, errno 0]"
fault reset -1
sb run $common storage.storage_options.endpoint_url=$p1 $pers
persistent_check "persistent reset mid-body" "$p1" 206 "" 56 "Connection reset by peer: Recv failure: Connection reset by peer [http 206, curl 56, errno 104]"
fault drop -1
sb run $common storage.storage_options.endpoint_url=$p1 $pers
persistent_check "persistent drop" "$p1" 0 "" 56 "Connection reset by peer: Recv failure: Connection reset by peer [http 0, curl 56, errno 104]"
fault stall -1
sb run $common storage.storage_options.endpoint_url=$p1 $pers
persistent_check "persistent stall" "$p1" 0 "" 28 "Operation timed out after "
expect_eq "persistent stall: 3 attempts of 1 s, well under 20 s" \
    "$(q f.db "SELECT finished_at - started_at >= 3.0 AND finished_at - started_at < 20 FROM runs WHERE id = $(last)")" 1
# refused for ever: port2 alone; the arming GET is reset, its retries are refused
fault refuse -1
sb run $common storage.storage_options.endpoint_url=$p2 $pers
persistent_check "persistent refuse" "$p2" 0 "" 7 "Connection refused: Failed to connect to 127.0.0.1 port ${port2#*:}"
# README's queries per endpoint, on this last train run: the rank's error on port2 and the run's own
expect_eq "README errors per endpoint: the refused endpoint's read error and the run's error" \
    "$(readme_sql "GROUP BY endpoint, http_status, service_code" | sqlite3 -batch -noheader f.db | sort | tr '\n' ' ')" \
    "-|||1|0 $p2|0||1|1 "
expect_eq "README traffic per endpoint: the failed run's 3 refused attempts, 2 of them retries" \
    "$(readme_sql "FROM endpoints" | sqlite3 -batch -noheader f.db | cut -d'|' -f1-4)" "$p2|3|3|2"

# the proxy itself stayed up through every fault
kill -0 "$proxy_pid" 2>/dev/null && pass "fault proxy still running" || fail "fault proxy died"
kill "$proxy_pid" 2>/dev/null
wait "$proxy_pid" 2>/dev/null
proxy_pid=""
finish
