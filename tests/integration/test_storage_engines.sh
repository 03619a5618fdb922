#!/usr/bin/env bash
# The storage engines' conformance suite (tests/unit/test_storage_engines.c)
# with the s3 engine too: against a real S3 server (npm @20minutes/s3rver)
# on loopback, two server processes on one data folder as two endpoints.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"
: "${STORAGE_ENGINES_TEST:?path of the test_storage_engines binary}"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
mkdir -p s3data
trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" sbtest || { echo "FAIL - S3 server did not start"; exit 1; }
s3rver_start "$SCRATCH/s3data" || { echo "FAIL - second S3 server did not start"; exit 1; }

S3_ENDPOINTS="$S3RVER_ENDPOINTS" S3_BUCKET=sbtest CK_DEFAULT_TIMEOUT=100 "$STORAGE_ENGINES_TEST" >engines.out 2>&1
rc=$?
cat engines.out
expect_eq "conformance suite, file, direct and s3" $rc 0
expect_eq "s3 was not skipped" "$(grep -c 's3 engine skipped' engines.out)" 0

finish
