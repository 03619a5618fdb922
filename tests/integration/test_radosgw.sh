#!/usr/bin/env bash
# shardbench against Ceph's radosgw, a real S3 server beside s3rver: a
# single-node Ceph (one monitor, one memstore OSD) and two radosgw processes
# on loopback as two endpoints (tests/s3/radosgw.sh). The storage engines'
# conformance suite, the S3 client's live checks, a datagen + train run, a
# checkpoint run and listings, with exact counts and bytes from the result
# database and from radosgw's own listing; a KV-cache run whose window's end
# cuts multipart uploads short leaves no upload behind.
# Skips (77) only when Ceph cannot be installed, and never under CI=true.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/radosgw.sh"
: "${STORAGE_ENGINES_TEST:?path of the test_storage_engines binary}"
: "${S3_CLIENT_LIVE:?path of the s3_client_live test binary}"

if ! radosgw_install; then
    if [ "${CI:-}" = true ]; then
        echo "FAIL - cannot install Ceph (radosgw) under CI"
        exit 1
    fi
    echo "SKIP: Ceph (radosgw) cannot be installed here"
    exit 77
fi
radosgw_env
trap 'radosgw_stop; rm -rf "$SCRATCH"' EXIT
RADOSGW_GATEWAYS=2 radosgw_start "$SCRATCH/ceph" sbtest || { echo "FAIL - radosgw did not start"; exit 1; }
ep1=${RADOSGW_ENDPOINTS%% *}
ep2=${RADOSGW_ENDPOINTS##* }
[ "$ep1" != "$ep2" ] || { echo "FAIL - expected two gateways, got '$RADOSGW_ENDPOINTS'"; exit 1; }
pass "radosgw up: $RADOSGW_ENDPOINTS"

# list_objects PREFIX: "count|bytes" of the keys under PREFIX in sbtest, as
# radosgw lists them (ListObjectsV2, every page)
list_objects () {
    radosgw_list "$ep1" sbtest "$1" >listing.txt || { echo "listing failed"; return 0; }
    awk -F '\t' '{ n++; b += $2 } END { printf "%d|%d\n", n, b }' listing.txt
}

# (a) the conformance suite: the s3 engine on both gateways
S3_ENDPOINTS="$ep1 $ep2" S3_BUCKET=sbtest CK_DEFAULT_TIMEOUT=100 "$STORAGE_ENGINES_TEST" >engines.out 2>&1
rc=$?
cat engines.out
expect_eq "conformance suite, file, direct and s3 on radosgw" $rc 0
expect_eq "s3 was not skipped" "$(grep -c 's3 engine skipped' engines.out)" 0

# the S3 client alone (as in test_s3.sh): multipart round trip, ranged
# reads, multi-page listing, errors, a closed port
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
S3_ENDPOINTS="$ep1 $ep2" S3_BUCKET=sbtest S3_CLOSED_PORT=$closed CK_DEFAULT_TIMEOUT=100 "$S3_CLIENT_LIVE" >client.out 2>&1
rc=$?
cat client.out
expect_eq "S3 client against radosgw" $rc 0

# (b) datagen then train over s3:// with the two gateways, round robin (as
# test_s3.sh against s3rver, the same figures)
cat >s3.yaml <<YAML
model:
  name: radosgw-mission
workflow:
  generate_data: True
dataset:
  data_folder: mission
  num_files_train: 60
  record_length_bytes: 40000
  record_length_bytes_stdev: 5000
  num_subfolders_train: 3
reader:
  batch_size: 4
  read_threads: 2
  sample_shuffle: seed
  verify: true
train:
  epochs: 2
  computation_time: 0.001
storage:
  storage_type: s3
  storage_root: sbtest
  storage_options:
    endpoint_urls: [$ep1, $ep2]
    load_balance: round_robin
    max_in_flight: 4
YAML
sb run s3.yaml --accelerators 4 --local 2 --db s3.db
expect_eq "radosgw run exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "datagen and train runs succeeded" "$(q s3.db "SELECT group_concat(kind || ':' || status, ' ') FROM runs")" "datagen:succeeded train:succeeded"
expect_eq "60 objects written" "$(q s3.db "SELECT samples FROM epochs WHERE run_id = 1")" 60
expect_eq "catalog lists 60 objects" "$(q s3.db "SELECT count, uri FROM catalogs ORDER BY id DESC LIMIT 1")" "60|s3://sbtest/mission/train"
expect_eq "radosgw holds the 60 objects and the catalog's bytes" "$(list_objects mission/train/)" \
    "$(q s3.db "SELECT count || '|' || bytes FROM catalogs ORDER BY id DESC LIMIT 1")"
expect_eq "catalog bytes = bytes written" "$(q s3.db "SELECT (SELECT bytes FROM catalogs ORDER BY id DESC LIMIT 1) = (SELECT bytes FROM epochs WHERE run_id = 1)")" 1
# 4 ranks of 15 objects, 2 loader threads, batches of 4: each rank reads 3
# batches (12 samples) and drops 3 (see test_s3.sh for the derivation)
expect_eq "every rank 12 samples, 3 batches" "$(q s3.db "SELECT min(samples), max(samples), min(batches), max(batches), count(*) FROM rank_epochs WHERE run_id = 2")" "12|12|3|3|8"
read_idx=$(python3 - <<'PY'
ranks, threads, batch, files = 4, 2, 4, 60
read = []
for r in range(ranks):
    local = [r + ranks * j for j in range(files // ranks)]
    rest = []
    for t in range(threads):
        stream = local[t::threads]
        full = len(stream) // batch * batch
        read += stream[:full]
        rest += stream[full:]
    read += rest[:len(rest) // batch * batch]
print(",".join(map(str, sorted(read))))
PY
)
expect_eq "each epoch read exactly the bytes of the 48 objects it read" \
    "$(q s3.db "SELECT count(*) FROM epochs WHERE run_id = 2 AND bytes = (SELECT sum(size) FROM objects WHERE catalog_id = (SELECT max(id) FROM catalogs) AND idx IN ($read_idx))")" 2
expect_eq "read requests = samples read, 2 x 48 (no errors, no retries)" \
    "$(q s3.db "SELECT sum(requests), sum(errors), sum(retries) FROM endpoints WHERE run_id = 2")" "96|0|0"
expect_eq "both gateways served reads" "$(q s3.db "SELECT count(*) FROM endpoints WHERE run_id = 2 AND requests > 0 AND bytes > 0")" 2

# (c) checkpointing: llama3_8b scaled by 2^-13 on 2 ranks (test_checkpoint_s3.sh):
# the optimizer state (5,881,569 bytes) in a multipart upload of 2 parts,
# the model state (980,256 bytes) one PUT; then read back whole
M=980256
O=5881569
ck="storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=sbtest storage.storage_options.endpoint_url=$ep1
    storage.storage_options.multipart_threshold_bytes=5242880 storage.storage_options.multipart_part_bytes=5242880"
sb checkpoint llama3_8b $ck checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0 \
    checkpoint.checkpoint_folder=ckpt/llama3_8b checkpoint.num_checkpoints_write=2 checkpoint.num_checkpoints_read=2 \
    --accelerators 2 --local 1 --db ck.db
expect_eq "radosgw checkpoint: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "radosgw checkpoint: rows" \
    "$(q ck.db "SELECT group_concat(op || checkpoint || ':' || files || ':' || bytes, ' ') FROM (SELECT * FROM checkpoints ORDER BY seq)")" \
    "write1:4:$((2 * (M + O))) write2:4:$((2 * (M + O))) read1:4:$((2 * (M + O))) read2:4:$((2 * (M + O)))"
expect_eq "radosgw checkpoint: requests (multipart for the optimizer state), no errors" \
    "$(q ck.db "SELECT requests, errors FROM endpoints")" "$((2 * 2 * 5 + 2 * 2 * 2 * 8))|0"
expect_eq "radosgw holds 8 checkpoint objects of the written bytes" "$(list_objects ckpt/llama3_8b/)" "8|$((4 * (M + O)))"
key=ckpt/llama3_8b/global_epoch1_step2/zero_pp_rank_1_mp_rank_0_optim_states.pt
expect_eq "the multipart object is whole (HEAD Content-Length)" \
    "$(radosgw_curl -s -I "$ep1/sbtest/$key" | tr -d '\r' | sed -n 's/^[Cc]ontent-[Ll]ength: //p')" "$O"

# (d) listing: 2,000 objects in pages of 100 (radosgw's continuation token
# is the last key of the page; s3rver's an opaque string), one stream and 7
# streams over key ranges (start-after) give the same catalog
many="dataset.data_folder=many dataset.num_files_train=2000 dataset.num_subfolders_train=3 dataset.record_length_bytes=64
      dataset.record_length_bytes_stdev=16 storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=sbtest
      storage.storage_options.endpoint_urls=[$ep1,$ep2] storage.storage_options.list_page_size=100"
sb datagen $many --accelerators 4 --local 2 --db list.db
expect_eq "2000 objects written" "$SB_RC" 0
sb catalog $many storage.storage_options.list_parallelism=1 --relist --db list.db
expect_eq "one-stream listing" "$SB_RC" 0
one=$(q list.db "SELECT max(id) FROM catalogs")
sb catalog $many storage.storage_options.list_parallelism=7 --relist --db list.db
expect_eq "7-stream listing" "$SB_RC" 0
seven=$(q list.db "SELECT max(id) FROM catalogs")
expect_eq "both listings hold 2000 objects" "$(q list.db "SELECT group_concat(count, ' ') FROM catalogs WHERE id IN ($one, $seven)")" "2000 2000"
expect_eq "same keys, sizes and order" \
    "$(q list.db "SELECT count(*) FROM objects a JOIN objects b ON a.idx = b.idx AND a.key IS b.key AND a.size = b.size WHERE a.catalog_id = $one AND b.catalog_id = $seven")" 2000
expect_eq "radosgw's own listing agrees" "$(list_objects many/train/)" "$(q list.db "SELECT count || '|' || bytes FROM catalogs WHERE id = $one")"

# (e) listing order: S3 lists in UTF-8 byte order, 'a-b' (0x2D) before
# 'a/b' (0x2F). radosgw does; s3rver 4.0.4 lists a folder's keys before a
# sibling's with '-', which shardbench refuses as out of order.
printf 'x' >one-byte
for k in a/b a-b a0 B; do
    RADOSGW_PAYLOAD_SHA256=UNSIGNED-PAYLOAD radosgw_curl -sf -o /dev/null -T one-byte "$ep1/sbtest/order/train/$k.npz" \
        || fail "PUT order/train/$k.npz"
done
sb catalog dataset.data_folder=order dataset.num_files_train=4 storage.storage_type=s3 storage.storage_library=s3dlio \
    storage.storage_root=sbtest storage.storage_options.endpoint_url=$ep1 --db order.db
expect_eq "listing of keys with '-' and '/'" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "the catalog in byte order" "$(q order.db "SELECT group_concat(key, ' ') FROM (SELECT key FROM objects ORDER BY idx)")" \
    "train/B.npz train/a-b.npz train/a/b.npz train/a0.npz"

# (f) errors: the same codes as s3rver (statuses and <Code>), named in the
# preflight's message
AWS_SECRET_ACCESS_KEY=wrong-secret sb run s3.yaml --db s3.db
expect_eq "wrong secret exits 1" "$SB_RC" 1
expect_contains "wrong secret names the endpoint" sb.err "$ep1"
expect_contains "wrong secret names SignatureDoesNotMatch" sb.err "SignatureDoesNotMatch"
sb run s3.yaml storage.storage_root=nobucket --db s3.db
expect_eq "missing bucket exits 1" "$SB_RC" 1
expect_contains "missing bucket names NoSuchBucket" sb.err "NoSuchBucket"

# (g) a KV-cache run whose entries are multipart uploads (llama3.1-8b: 128 KiB a token, so each
# entry is hundreds of MiB in parts) and whose 1 s window ends with uploads in flight: an upload the
# window's end gives up is aborted (S3 would keep its parts, and bill them, until a lifecycle rule
# ends it), so no upload is left, and every object left is an entry under the rank's folder
sb kvcache kvcache.model=llama3.1-8b kvcache.users=4 kvcache.duration_s=1 kvcache.pause_s=0 kvcache.cpu_mem_gb=0 \
    kvcache.generation_mode=none kvcache.cache_dir=s3://sbtest/kv storage.storage_type=s3 \
    storage.storage_options.endpoint_url=$ep1 --local 1 --db kv.db --progress off
expect_eq "kvcache on radosgw: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -20 sb.err
radosgw_curl -sf "$ep1/sbtest?prefix=kv%2F&uploads=" >kv-uploads.xml || fail "ListMultipartUploads"
expect_contains "kvcache on radosgw: radosgw listed the uploads" kv-uploads.xml "<ListMultipartUploadsResult"
expect_eq "kvcache on radosgw: no multipart upload left" "$(grep -o '<UploadId>' kv-uploads.xml | wc -l)" 0
radosgw_list "$ep1" sbtest kv/ >kv-listing.txt || fail "listing kv/"
expect_eq "kvcache on radosgw: only entries under kv/rank_0/" "$(grep -cvE '^kv/rank_0/[^/]+\.npy	' kv-listing.txt)" 0

finish
