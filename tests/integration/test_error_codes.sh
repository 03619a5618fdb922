#!/usr/bin/env bash
# A storage failure's codes arrive in the errors table under the engine-neutral
# names: the service's own code (service_code: S3's NoSuchKey) and the client
# library's (library_code: curl's, 0 for a reply that came), with the endpoint,
# HTTP status and attempt, through a real worker, the wire ERROR and the
# coordinator, from s3rver on loopback. Then a result database with the
# columns as schema 14 named them (the codes after S3 and curl, the latency
# histogram after buckets) still reports: `shardbench report` upgrades it in
# place, keeps every value, and --html shows the codes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" sbcodes || { echo "FAIL - S3 server did not start"; exit 1; }
ep=$S3RVER_ENDPOINT

# 8 raw objects of one 100-byte record (int(sqrt(100))^2 = 100), one rank,
# one read at a time, no retry of a failed read: the failure is one GET
common="dataset.format=bin dataset.data_folder=codes dataset.num_files_train=8 dataset.record_length_bytes=100
        dataset.record_length_bytes_stdev=0 reader.batch_size=1 train.epochs=1 train.computation_time=0
        storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=sbcodes
        storage.storage_options.endpoint_url=$ep storage.storage_options.max_in_flight=1
        storage.storage_options.max_retries=2"
last () { echo "(SELECT max(id) FROM runs)"; }

sb run $common --accelerators 1 --local 1 --db c.db
expect_eq "datagen and a first train run" "$SB_RC" 0
expect_eq "every object read once" "$(q c.db "SELECT samples, bytes FROM epochs WHERE run_id = $(last)")" "8|800"

# remove one object behind the catalog's back (an object store's catalog is
# reused until --relist): its GET gets the server's 404 with code NoSuchKey
obj=$SCRATCH/s3data/sbcodes/codes/train/img_3_of_8.bin
ls "$obj"._S3rver_* >/dev/null 2>&1 || { echo "FAIL - s3rver keeps objects elsewhere than $obj._S3rver_*"; exit 1; }
rm -f "$obj"._S3rver_*
sb run $common workflow.generate_data=False --accelerators 1 --local 1 --db c.db
expect_eq "missing object: exit status 1" "$SB_RC" 1
expect_eq "missing object: run failed" "$(q c.db "SELECT status FROM runs WHERE id = $(last)")" failed
expect_eq "missing object: the rank's error, endpoint|op|target|http|service code|library code|attempt" \
    "$(q c.db "SELECT endpoint, op, target, http_status, service_code, library_code, attempt FROM errors
               WHERE run_id = $(last) AND rank = 0")" \
    "$ep|read|codes/train/img_3_of_8.bin|404|NoSuchKey|0|1"
expect_eq "missing object: the run's own error has no codes" \
    "$(q c.db "SELECT count(*), coalesce(service_code, 'NULL'), coalesce(library_code, 'NULL') FROM errors
               WHERE run_id = $(last) AND rank IS NULL")" "1|NULL|NULL"
expect_contains "missing object: stderr names the code" sb.err "HTTP 404 NoSuchKey"
failed=$(q c.db "SELECT max(id) FROM runs")

# the same database as schema 14 named its columns: reported after an upgrade in place
cp c.db old.db
q old.db "$(schema_v14_sql) PRAGMA user_version = 14"
expect_eq "old schema: the old column names" \
    "$(q old.db "SELECT group_concat(name, ' ') FROM pragma_table_info('errors') WHERE name LIKE '%code'")" \
    "s3_code curl_code"
sb report "$failed" --db old.db
expect_eq "old schema: report exit status" "$SB_RC" 0
expect_eq "old schema: upgraded to 16, codes kept under the new names" \
    "$(q old.db "SELECT (SELECT user_version FROM pragma_user_version) || '|' || http_status || '|' || service_code
                 || '|' || library_code FROM errors WHERE run_id = $failed AND rank = 0")" "17|404|NoSuchKey|0"
expect_eq "old schema: read latency rows kept under the new names" \
    "$(q old.db "SELECT sum(count) FROM read_latency WHERE run_id = 2 AND bin_high_us > bin_low_us")" 8
sb report "$failed" --html old.html --db old.db
expect_eq "old schema: --html exit status" "$SB_RC" 0
expect_contains "old schema: --html errors table has both codes" old.html \
    "<th>HTTP</th><th>service code</th><th>library code</th><th>message</th>"
expect_contains "old schema: --html error row: endpoint, HTTP 404, NoSuchKey, no library code" old.html \
    "<td>$ep</td><td>404</td><td>NoSuchKey</td><td></td><td>GET sbcodes/codes/train/img_3_of_8.bin on $ep"
sb report 2 --json --db old.db
expect_eq "old schema: --json of the good run exit status" "$SB_RC" 0
expect_contains "old schema: --json keeps the good run's latency" sb.out '"samples": 8'

finish
