#!/usr/bin/env bash
# S3 replies that must be errors, never a hang, an empty bucket or a silent
# loss: a fake S3 server of our own (tests/s3/fake_s3.c) scripts the
# ListObjectsV2 pages (a repeated or cycling continuation token, a
# truncated page without one, 200 OK with a body that is not a listing, a
# bad Size, a Size over 5 TiB, an oversize key, long tokens, keys outside
# the prefix or before start-after, a 100 MiB page), and a fault proxy in front of
# s3rver (tests/s3/fault_proxy.c, mode norange) plays a server that ignores
# Range. Every case runs the real shardbench on 127.0.0.1 and checks the
# exit status, the exact error line and how many requests were made.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"
: "${FAKE_S3:?path of the fake_s3 binary}"
: "${FAULT_PROXY:?path of the fault_proxy binary}"

s3rver_env
fake_pid=""
proxy_pid=""
cleanup () {
    [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
    [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null
    s3rver_stop
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

# fake MODE: (re)start the fake server in MODE; sets ep (its endpoint URL)
fake () {
    [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
    : >fake.out
    "$FAKE_S3" -m "$1" >fake.out 2>fake.err &
    fake_pid=$!
    await_text fake.out listening
    ep=http://$(awk '{print $4}' fake.out)
    [ "$ep" != "http://" ] || { echo "FAIL - fake S3 server did not start"; cat fake.err; exit 1; }
}
lists () { grep -c '^fake_s3: LIST [0-9]' fake.err; }
puts () { grep -c '^fake_s3: PUT ' fake.err; }

# sbq ARGS...: shardbench with a 20 s limit (a listing that loops ends as 124)
sbq () {
    timeout -k 5 20 "$SHARDBENCH" "$@" >sb.out 2>sb.err
    SB_RC=$?
}

# one stream (list_parallelism=1): request counts are exact
common="dataset.format=bin dataset.data_folder=x dataset.num_files_train=4 dataset.record_length_bytes=100
        dataset.record_length_bytes_stdev=0 storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=bucket
        storage.storage_options.list_parallelism=1 storage.storage_options.max_retries=2"
err_head () { echo "shardbench: error: listing s3://x/train/: LIST bucket/x/train/ on $ep failed (attempt 1): $1 [http 200, curl 0, errno 0]"; }

# 1. pages that say IsTruncated with the same token: the second page stops it
fake repeat-token
sbq catalog $common storage.storage_options.endpoint_url=$ep --db l.db
expect_eq "repeated token: exit status 1 (not a hang: 124)" "$SB_RC" 1
expect_contains "repeated token: the error names endpoint, bucket/prefix, op and the token" sb.err \
    "$(err_head "ListObjectsV2 page 2 says IsTruncated=true with the same NextContinuationToken as the page before ('tok-1'): the listing would never end")"
expect_eq "repeated token: exactly 2 LISTs" "$(lists)" 2

# the same with the default parallel listing: every stream stops at page 2
fake repeat-token
sbq catalog $common storage.storage_options.endpoint_url=$ep storage.storage_options.list_parallelism=4 --db l.db
expect_eq "repeated token, 4 streams: exit status 1" "$SB_RC" 1
expect_contains "repeated token, 4 streams: the error" sb.err "the same NextContinuationToken as the page before ('tok-1')"
expect_eq "repeated token, 4 streams: 2 LISTs per stream" "$(lists)" 8

# 2. tokens that cycle A, B, A, B: found at page 4 (Brent's check)
fake cycle-token
sbq catalog $common storage.storage_options.endpoint_url=$ep --db l.db
expect_eq "cycling tokens: exit status 1" "$SB_RC" 1
expect_contains "cycling tokens: the error" sb.err \
    "$(err_head "ListObjectsV2 page 4 says IsTruncated=true with the NextContinuationToken of page 2 ('B'): the listing would never end")"
expect_eq "cycling tokens: exactly 4 LISTs" "$(lists)" 4

# 3. IsTruncated=true without a token
fake no-token
sbq catalog $common storage.storage_options.endpoint_url=$ep --db l.db
expect_eq "truncated without a token: exit status 1" "$SB_RC" 1
expect_contains "truncated without a token: the error" sb.err \
    "$(err_head "ListObjectsV2 page 1 says IsTruncated=true without a NextContinuationToken: cannot go on")"
expect_eq "truncated without a token: 1 LIST" "$(lists)" 1

# 4. 200 OK with a body that is not a listing: `run` must not take it as an
# empty bucket and write over the objects (no PUT, no worker started)
fake not-xml
sbq run $common storage.storage_options.endpoint_url=$ep --accelerators 1 --local 1 --db l.db reader.batch_size=1
expect_eq "not XML: exit status 1" "$SB_RC" 1
expect_contains "not XML: the error" sb.err \
    "$(err_head "ListObjectsV2 page 1 is not a ListBucketResult document (HTTP 200, 23 bytes: 'this is not XML at all.'); a malformed listing is not taken as an empty one")"
expect_eq "not XML: 1 LIST, no retry" "$(lists)" 1
expect_eq "not XML: nothing was written (PUTs)" "$(puts)" 0
expect_eq "not XML: no run was started" "$(q l.db "SELECT count(*) FROM runs" 2>/dev/null || echo 0)" 0
# the coordinator's S3 client is freed on this early return too (seen by an
# ASan build: LeakSanitizer reported it)
expect_eq "not XML: no leak reported" "$(grep -c 'LeakSanitizer' sb.err)" 0

fake html
sbq run $common storage.storage_options.endpoint_url=$ep --accelerators 1 --local 1 --db l.db reader.batch_size=1
expect_eq "HTML page: exit status 1" "$SB_RC" 1
expect_contains "HTML page: the error" sb.err \
    "is not a ListBucketResult document (HTTP 200, 79 bytes: '<html><body><h1>Welcome</h1><p>Please log in to the network....'); a malformed listing is not taken as an empty one [http 200, curl 0, errno 0]"
expect_eq "HTML page: nothing was written (PUTs)" "$(puts)" 0

fake error200
sbq catalog $common storage.storage_options.endpoint_url=$ep --db l.db
expect_eq "<Error> with 200: exit status 1" "$SB_RC" 1
expect_eq "<Error> with 200: no leak reported" "$(grep -c 'LeakSanitizer' sb.err)" 0
expect_contains "<Error> with 200: the error" sb.err \
    "$(err_head "ListObjectsV2 page 1 is not a ListBucketResult document (HTTP 200, 132 bytes: '<?xml version=\"1.0\" encoding=\"UTF-8\"?>.<Error><Code>Internal...'); a malformed listing is not taken as an empty one")"

# 5. what the parser used to drop silently
fake bad-size
sbq catalog $common storage.storage_options.endpoint_url=$ep --db l.db
expect_eq "bad Size: exit status 1" "$SB_RC" 1
expect_contains "bad Size: the error" sb.err \
    "$(err_head "ListObjectsV2 page 1: key 'x/train/img_1_of_1.npz' has Size '12abc', not a byte count")"

fake long-key
sbq catalog $common storage.storage_options.endpoint_url=$ep --db l.db
expect_eq "key over 1024 bytes: exit status 1" "$SB_RC" 1
expect_contains "key over 1024 bytes: the error" sb.err \
    "$(err_head "ListObjectsV2 page 1: object 1 has a key over 1024 bytes (S3's limit): <Key>kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...")"

# a 1500-byte token is sent back whole (the listing is then empty: no dataset)
fake long-token
sbq catalog $common storage.storage_options.endpoint_url=$ep --db l.db
expect_eq "1500-byte token: exit status 2 (no dataset)" "$SB_RC" 2
expect_contains "1500-byte token: listed to the end, found nothing" sb.err \
    "shardbench: error: no dataset in s3 prefix x/ (no train/ objects): generate it with \`shardbench datagen\`"
expect_eq "1500-byte token: 2 LISTs, the second with the whole token" \
    "$(lists) $(grep -c 'LIST token matches (1500 bytes)' fake.err)" "2 1"

fake huge-token
sbq catalog $common storage.storage_options.endpoint_url=$ep --db l.db
expect_eq "5000-byte token: exit status 1" "$SB_RC" 1
expect_contains "5000-byte token: the error" sb.err \
    "$(err_head "ListObjectsV2 page 1: NextContinuationToken over 2047 bytes")"
expect_eq "5000-byte token: 1 LIST" "$(lists)" 1

# 5b. keys outside the prefix asked for: never cut to look like keys under
# it (zz/x/train/img_4_of_4.bin listed for x/train/ became train/in/...),
# and no worker is started to read objects that were never listed
objgets () { grep -c '^fake_s3: GET /bucket/x/train/' fake.err; }
fake outside-prefix
sbq run $common storage.storage_options.endpoint_url=$ep --accelerators 1 --local 1 --db o.db reader.batch_size=1
expect_eq "key outside the prefix: exit status 1" "$SB_RC" 1
expect_contains "key outside the prefix: the error names endpoint, bucket/prefix, page, token and key" sb.err \
    "$(err_head "ListObjectsV2 page 2 (continuation token 'tok-2'): key 'zz/x/train/img_4_of_4.bin' is not under the prefix 'x/train/' that was asked for; a listing with keys outside its prefix is not taken")"
expect_eq "key outside the prefix: 2 LISTs" "$(lists)" 2
expect_eq "key outside the prefix: no object was read (GETs under x/train/)" "$(objgets)" 0
expect_eq "key outside the prefix: no run was started" "$(q o.db "SELECT count(*) FROM runs" 2>/dev/null || echo 0)" 0

# a server that ignores start-after (parallel listing's ranges): the second
# stream's first key is at or before its start, named with the stream's range
fake no-start-after
sbq catalog $common storage.storage_options.endpoint_url=$ep storage.storage_options.list_parallelism=2 --db s.db
expect_eq "start-after ignored: exit status 1" "$SB_RC" 1
expect_contains "start-after ignored: the error names the key and the start-after asked for" sb.err \
    "on $ep failed (attempt 1): ListObjectsV2 page 1: key 'x/train/img_1_of_4.bin' does not sort after start-after 'x/train/img_1_of_4.bin' (the server ignored start-after, or listed out of order); not taken [http 200, curl 0, errno 0]"
expect_eq "start-after ignored: one LIST per stream" "$(lists)" 2

# a Size over S3's 5 TiB per object (2^63 here) is refused at listing time,
# naming the key and the Size as sent (it was stored negative, and loading
# the catalog said "object 0 found where 0 was expected")
fake huge-size
sbq catalog $common storage.storage_options.endpoint_url=$ep --db z.db
expect_eq "Size 2^63: exit status 1" "$SB_RC" 1
expect_contains "Size 2^63: the error names endpoint, key and the Size" sb.err \
    "$(err_head "ListObjectsV2 page 1: key 'x/train/img_1_of_4.bin' has Size '9223372036854775808', over S3's limit of 5497558138880 bytes (5 TiB) for one object")"
expect_eq "Size 2^63: no catalog was kept" "$(q z.db "SELECT count(*) FROM catalogs" 2>/dev/null || echo 0)" 0

# a 100 MiB page: stopped at the bound (8 MiB) with the bound named, not
# curl's "Failure writing output to destination"
fake huge-page
sbq catalog $common storage.storage_options.endpoint_url=$ep --db h.db
expect_eq "100 MiB page: exit status 1" "$SB_RC" 1
expect_contains "100 MiB page: the error names endpoint, bucket/prefix, page and the bound" sb.err \
    "$(err_head "ListObjectsV2 page 1 is over 8388608 bytes (8 MiB), the bound on one listing page (a page of 1000 keys is about 300 KB); not taken")"
expect_eq "100 MiB page: 1 LIST, not retried" "$(lists)" 1

# 6. S3's multipart limits are configuration errors naming the key, never a silent clamp
sbq catalog $common storage.storage_options.endpoint_url=$ep storage.storage_options.multipart_part_bytes=1048576 --db l.db
expect_eq "1 MiB parts: exit status 2" "$SB_RC" 2
expect_contains "1 MiB parts: the key and S3's range" sb.err \
    "shardbench: error: command line: key 'storage.storage_options.multipart_part_bytes': 1048576 is out of range [5242880, 5368709120]"
sbq catalog $common storage.storage_options.endpoint_url=$ep storage.storage_options.multipart_part_bytes=104857600 --db l.db
expect_eq "parts over the threshold: exit status 2" "$SB_RC" 2
expect_contains "parts over the threshold: both keys, no clamp" sb.err \
    "shardbench: error: command line: key 'storage.storage_options.multipart_part_bytes': 104857600 is larger than storage.storage_options.multipart_threshold_bytes (67108864)"
sbq catalog $common storage.storage_options.endpoint_url=$ep storage.storage_options.multipart_threshold_bytes=6442450944 --db l.db
expect_eq "threshold over 5 GiB (a single PUT's limit): exit status 2" "$SB_RC" 2
expect_contains "threshold over 5 GiB: the key" sb.err \
    "key 'storage.storage_options.multipart_threshold_bytes': 6442450944 is out of range [5242880, 5368709120]"

# 7. a server that ignores Range: s3rver behind the proxy in norange mode
if s3rver_install && s3rver_start "$SCRATCH/s3data" sbtest; then
    echo "none 0 start" >ctl
    "$FAULT_PROXY" -u "$S3RVER_PORT" -c "$SCRATCH/ctl" >proxy.out 2>proxy.err &
    proxy_pid=$!
    await_text proxy.out listening
    read -r _ _ _ port1 _ <proxy.out
    p1=http://$port1
    # 4 objects of 2 samples (2 x 10000 bytes): reads are ranged GETs
    rcommon="dataset.format=bin dataset.data_folder=nr dataset.num_files_train=4 dataset.num_samples_per_file=2
             dataset.record_length_bytes=10000 dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.epochs=1
             train.computation_time=0 storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=sbtest
             storage.storage_options.max_retries=3 storage.storage_options.max_in_flight=1"
    sbq run $rcommon storage.storage_options.endpoint_url=$S3RVER_ENDPOINT --accelerators 1 --local 1 --db r.db
    expect_eq "norange: datagen and a first run straight to the server" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    echo "norange -1 1" >ctl.tmp && mv ctl.tmp ctl
    sbq run $rcommon storage.storage_options.endpoint_url=$p1 --accelerators 1 --local 1 --db r.db
    expect_eq "norange: exit status 1" "$SB_RC" 1
    msg=$(q r.db "SELECT message FROM errors WHERE run_id = (SELECT max(id) FROM runs)")
    expect_eq "norange: the error names op, key, endpoint, the range asked and the status" \
        "$(case "$msg" in "GET sbtest/nr/train/img_"*"_of_4.bin on $p1 failed (attempt 1): the server ignored the Range header: asked bytes="*", got HTTP 200 with the whole object (20000 bytes); not retried [http 200, curl 0, errno 0]") echo yes;; *) echo "$msg";; esac)" yes
    expect_contains "norange: stderr has it" sb.err "$msg"
    expect_eq "norange: one GET, not retried: requests|errors|retries" \
        "$(q r.db "SELECT requests, errors, retries FROM endpoints WHERE run_id = (SELECT max(id) FROM runs)")" "1|1|0"
    # 8 samples: at most one GET each (a retried GET would make 4 per sample)
    expect_eq "norange: no GET was retried (at most one per sample)" \
        "$([ "$(grep -c 'inject norange' proxy.err)" -le 8 ] && echo yes || grep -c 'inject norange' proxy.err)" yes
    # a 206 whose Content-Range is not the range asked
    echo "badrange -1 2" >ctl.tmp && mv ctl.tmp ctl
    sbq run $rcommon storage.storage_options.endpoint_url=$p1 --accelerators 1 --local 1 --db r.db
    expect_eq "badrange: exit status 1" "$SB_RC" 1
    msg=$(q r.db "SELECT message FROM errors WHERE run_id = (SELECT max(id) FROM runs)")
    expect_eq "badrange: the error names the Content-Range answered and the range asked" \
        "$(case "$msg" in "GET sbtest/nr/train/img_"*"_of_4.bin on $p1 failed (attempt 1): the server answered Content-Range 'bytes "*"/20000' to Range bytes="*"; not retried [http 206, curl 0, errno 0]") echo yes;; *) echo "$msg";; esac)" yes
    expect_eq "badrange: one GET, not retried: requests|errors|retries" \
        "$(q r.db "SELECT requests, errors, retries FROM endpoints WHERE run_id = (SELECT max(id) FROM runs)")" "1|1|0"
else
    fail "norange: the S3 test server did not start"
fi

finish
