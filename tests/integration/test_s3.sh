#!/usr/bin/env bash
# S3 end to end against a real S3 server (npm @20minutes/s3rver 4.0.4) on
# loopback: two server processes on one data folder are two endpoints.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"
: "${S3_CLIENT_LIVE:?path of the s3_client_live test binary}"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
mkdir -p s3data
trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" sbtest || { echo "FAIL - S3 server did not start"; exit 1; }
s3rver_start "$SCRATCH/s3data" || { echo "FAIL - second S3 server did not start"; exit 1; }
ep1=${S3RVER_ENDPOINTS%% *}
ep2=${S3RVER_ENDPOINTS##* }
# a port nothing listens on: bind it, note it, close it
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')

# 1. the client alone: multipart round trip, ranged reads, multi-page listing, errors
S3_ENDPOINTS="$ep1 $ep2" S3_BUCKET=sbtest S3_CLOSED_PORT=$closed "$S3_CLIENT_LIVE" >client.out 2>&1
rc=$?
cat client.out
expect_eq "S3 client against the server" $rc 0

# 2. the whole mission over s3:// with two endpoints, round robin
cat >s3.yaml <<YAML
model:
  name: s3-mission
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
expect_eq "s3 run exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "datagen and train runs succeeded" "$(q s3.db "SELECT group_concat(kind || ':' || status, ' ') FROM runs")" "datagen:succeeded train:succeeded"
expect_eq "60 objects written" "$(q s3.db "SELECT samples FROM epochs WHERE run_id = 1")" 60
expect_eq "catalog lists 60 objects" "$(q s3.db "SELECT count, uri FROM catalogs ORDER BY id DESC LIMIT 1")" "60|s3://sbtest/mission/train"
expect_eq "catalog bytes = bytes written" "$(q s3.db "SELECT (SELECT bytes FROM catalogs ORDER BY id DESC LIMIT 1) = (SELECT bytes FROM epochs WHERE run_id = 1)")" 1
expect_eq "objects on the server (subfolders)" "$(find s3data/sbtest/mission/train -name 'img_*_of_60.npz*' -type d -o -name 'img_*_of_60.npz*' -type f | wc -l | tr -d ' ' | grep -qv '^0$' && echo present)" present
# npz on object storage runs DLIO's file sampler (dlio_files, lib/dataset/sampler.h):
# 4 ranks own 15 objects each (rank r: catalog r, r+4, ...); loader thread t
# of 2 takes local files t, t+2, ...: thread 0 has 8 (2 full batches of 4),
# thread 1 has 7 (1 batch, 3 left). The 3 left cannot fill a batch, so each
# rank reads floor(15 / 4) = 3 batches = 12 samples and drops 3.
expect_eq "every rank 12 samples, 3 batches" "$(q s3.db "SELECT min(samples), max(samples), min(batches), max(batches), count(*) FROM rank_epochs WHERE run_id = 2")" "12|12|3|3|8"
expect_eq "each epoch drops 4 x 3 samples, no unused file" "$(q s3.db "SELECT group_concat(dropped || ':' || unused_files, ' ') FROM epochs WHERE run_id = 2")" "12:0 12:0"
# the objects read: every rank's local files but thread 1's last 3 (local 9,
# 11, 13), derived per rank and thread from the rule above
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
expect_eq "48 objects read per epoch" "$(echo "$read_idx" | tr ',' '\n' | wc -l | tr -d ' ')" 48
expect_eq "each epoch read exactly the bytes of the objects it read" \
    "$(q s3.db "SELECT count(*) FROM epochs WHERE run_id = 2 AND bytes = (SELECT sum(size) FROM objects WHERE catalog_id = (SELECT max(id) FROM catalogs) AND idx IN ($read_idx))")" 2
expect_eq "... which is less than the catalog" \
    "$(q s3.db "SELECT count(*) FROM epochs WHERE run_id = 2 AND bytes < (SELECT bytes FROM catalogs ORDER BY id DESC LIMIT 1)")" 2
expect_eq "both endpoints served reads" "$(q s3.db "SELECT count(*) FROM endpoints WHERE run_id = 2 AND requests > 0 AND bytes > 0")" 2
expect_eq "read requests = samples read, 2 x 48 (no errors, no retries)" \
    "$(q s3.db "SELECT sum(requests), sum(errors), sum(retries) FROM endpoints WHERE run_id = 2")" "96|0|0"
expect_eq "round robin splits evenly" "$(q s3.db "SELECT max(requests) - min(requests) <= 8 FROM endpoints WHERE run_id = 2")" 1
expect_eq "datagen used both endpoints" \
    "$(q s3.db "SELECT count(*) FROM endpoints WHERE run_id = 1 AND requests > 0")" 2
expect_eq "latency percentiles recorded" "$(q s3.db "SELECT count(*) FROM endpoints WHERE p50_ms > 0 AND p99_ms >= p50_ms")" 4

# the catalog is reused by a second run (no listing)
sb run s3.yaml train.epochs=1 --accelerators 4 --local 1 --db s3.db
expect_eq "second s3 run" "$SB_RC" 0
expect_contains "s3 catalog reused" sb.err "reused: 60 objects"

# 3. wrong secret: preflight fails, exit 1, naming the endpoint and SignatureDoesNotMatch
AWS_SECRET_ACCESS_KEY=wrong-secret sb run s3.yaml --db s3.db
expect_eq "wrong secret exits 1" "$SB_RC" 1
expect_contains "wrong secret names the endpoint" sb.err "$ep1"
expect_contains "wrong secret names SignatureDoesNotMatch" sb.err "SignatureDoesNotMatch"
if grep -q "wrong-secret" sb.err sb.out s3.db 2>/dev/null; then fail "the secret leaked into output or database"; else pass "secret not in output or database"; fi

# 4. closed port: preflight names the endpoint and the refused connection
sb run s3.yaml "storage.storage_options.endpoint_urls=[$ep1,http://127.0.0.1:$closed]" --db s3.db
expect_eq "closed port exits 1" "$SB_RC" 1
expect_contains "closed port names the endpoint" sb.err "http://127.0.0.1:$closed"
if grep -qi "connection refused" sb.err; then pass "closed port says connection refused"; else fail "no 'connection refused' in:"; cat sb.err; fi

# 6. parallel listing over key ranges = one stream: 2,000 objects, pages of 100
many="dataset.data_folder=many dataset.num_files_train=2000 dataset.num_subfolders_train=3 dataset.record_length_bytes=64
      dataset.record_length_bytes_stdev=16 storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=sbtest
      storage.storage_options.endpoint_urls=[$ep1,$ep2] storage.storage_options.list_page_size=100"
sb datagen $many --accelerators 4 --local 2 --db list.db
expect_eq "2000 objects written" "$SB_RC" 0
# datagen lists what it wrote (an object store has no change marker), and
# the listing it made before writing (0 objects) is never reused
expect_eq "datagen leaves a current catalog" "$(q list.db "SELECT group_concat(count, ' ') FROM catalogs")" "0 2000"
sb catalog $many --db list.db
expect_contains "the catalog after datagen is reused" sb.out "catalog 2: 2000 objects, "
expect_contains "... not listed again" sb.out "reused"
sb catalog $many storage.storage_options.list_parallelism=1 --relist --db list.db
expect_eq "one-stream listing" "$SB_RC" 0
one=$(q list.db "SELECT max(id) FROM catalogs")
sb catalog $many storage.storage_options.list_parallelism=7 --relist --db list.db
expect_eq "7-stream listing" "$SB_RC" 0
seven=$(q list.db "SELECT max(id) FROM catalogs")
expect_eq "both listings hold 2000 objects" "$(q list.db "SELECT group_concat(count, ' ') FROM catalogs WHERE id IN ($one, $seven)")" "2000 2000"
expect_eq "same keys, sizes and order" \
    "$(q list.db "SELECT count(*) FROM objects a JOIN objects b ON a.idx = b.idx AND a.key IS b.key AND a.size = b.size WHERE a.catalog_id = $one AND b.catalog_id = $seven")" 2000
expect_eq "same bytes" "$(q list.db "SELECT count(DISTINCT bytes) FROM catalogs WHERE id IN ($one, $seven)")" 1
expect_eq "keys stored compactly (DLIO names)" "$(q list.db "SELECT count(key), count(*) FROM objects WHERE catalog_id = $seven")" "0|2000"

# 5. concurrency that cannot fit the file-descriptor limit is refused with the numbers
( ulimit -n 300; sb run s3.yaml storage.storage_options.max_in_flight=100 --accelerators 2 --db s3.db; exit "$SB_RC" )
rc=$?
expect_eq "fd limit exceeded exits 1" "$rc" 1
expect_contains "fd limit message has the numbers" sb.err "file descriptors: 2 ranks x 212 (100 in flight x 2 endpoints + 12) + "
expect_contains "... and the limit" sb.err " needed, the limit is 300 (hard limit 300): raise it (\`ulimit -n "


# 7. storage.use_mpi_endpoint_distribution (DLIO's S3_ENDPOINT_URIS rule):
# rank r sends every request to endpoint r mod 2; 3 ranks: 0 and 2 on the
# first endpoint, 1 on the second. Each rank reads 20 samples (its 20 files,
# 2 loader threads of 10: 2 batches of 4 each, the 2 + 2 left one more batch).
sb run s3.yaml storage.use_mpi_endpoint_distribution=true train.epochs=1 --accelerators 3 --local 1 --db s3.db
expect_eq "per-rank endpoints run" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
mpi=$(q s3.db "SELECT max(id) FROM runs WHERE kind = 'train'")
expect_eq "ranks 0 and 2 read from the first endpoint only" \
    "$(q s3.db "SELECT requests FROM endpoints WHERE run_id = $mpi AND endpoint = '$ep1'")" \
    "$(q s3.db "SELECT sum(samples) FROM rank_epochs WHERE run_id = $mpi AND rank IN (0, 2)")"
expect_eq "rank 1 from the second only" \
    "$(q s3.db "SELECT requests FROM endpoints WHERE run_id = $mpi AND endpoint = '$ep2'")" \
    "$(q s3.db "SELECT sum(samples) FROM rank_epochs WHERE run_id = $mpi AND rank = 1")"
expect_eq "40 and 20 reads, no errors" \
    "$(q s3.db "SELECT group_concat(requests || ':' || errors, ' ') FROM (SELECT requests, errors FROM endpoints WHERE run_id = $mpi ORDER BY endpoint = '$ep2')")" "40:0 20:0"

finish
