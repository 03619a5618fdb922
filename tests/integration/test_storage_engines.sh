#!/usr/bin/env bash
# The storage engines' conformance suite (tests/unit/test_storage_engines.c)
# with the object stores too: the s3 engine against a real S3 server (npm
# @20minutes/s3rver) on loopback, two server processes on one data folder as
# two endpoints; the azure engine against Azurite (npm azurite,
# tests/azure/azurite.sh), its endpoint and key from the connection string
# as a workload's would be. Neither may be skipped here.
. "$(dirname "$0")/lib.sh"
. "$SB_INTEGRATION_DIR/../s3/s3lib.sh"
. "$SB_INTEGRATION_DIR/../azure/azurite.sh"
: "${STORAGE_ENGINES_TEST:?path of the test_storage_engines binary}"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
azurite_install || { echo "FAIL - cannot install Azurite"; exit 1; }
s3rver_env
mkdir -p s3data
trap 's3rver_stop; azurite_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" sbtest || { echo "FAIL - S3 server did not start"; exit 1; }
s3rver_start "$SCRATCH/s3data" || { echo "FAIL - second S3 server did not start"; exit 1; }
azurite_start "$SCRATCH/azurite" sbtest || { echo "FAIL - Azurite did not start"; exit 1; }
azurite_env

S3_ENDPOINTS="$S3RVER_ENDPOINTS" S3_BUCKET=sbtest AZURE_TEST_CONTAINER=sbtest CK_DEFAULT_TIMEOUT=100 \
    "$STORAGE_ENGINES_TEST" >engines.out 2>&1
rc=$?
cat engines.out
expect_eq "conformance suite, every engine of the registry" $rc 0
expect_eq "the suite walked a registry with both object stores" \
    "$(grep -cE '^storage engines: registry:( [a-z0-9]+)* s3( [a-z0-9]+)* azure( |$)' engines.out)" 1
expect_eq "s3 was not skipped" "$(grep -c 's3 engine skipped' engines.out)" 0
expect_eq "azure was not skipped" "$(grep -c 'azure engine skipped' engines.out)" 0

finish
