#!/usr/bin/env bash
# The KV-cache rank with its entries on an object store: the s3 engine against
# a real S3 server (npm @20minutes/s3rver) on loopback; test_kv_rank's object
# case (tests/unit/test_kv_rank.c test_objects) may not be skipped here.
. "$(dirname "$0")/lib.sh"
. "$SB_INTEGRATION_DIR/../s3/s3lib.sh"
: "${KV_RANK_TEST:?path of the test_kv_rank binary}"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" sbtest || { echo "FAIL - S3 server did not start"; exit 1; }

S3_ENDPOINTS="$S3RVER_ENDPOINT" S3_BUCKET=sbtest CK_RUN_CASE=objects CK_DEFAULT_TIMEOUT=100 \
    SB_TEST_BUILD_DIR="$SCRATCH" "$KV_RANK_TEST" >kv.out 2>&1
rc=$?
cat kv.out
expect_eq "the rank's object case" $rc 0
expect_eq "the object case ran" "$(grep -c '^objects: ' kv.out)" 1
expect_eq "the object case was not skipped" "$(grep -c 'objects skipped' kv.out)" 0

finish
