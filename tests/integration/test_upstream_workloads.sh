#!/usr/bin/env bash
# Every upstream workload file: each MLPerf
# Storage and DLIO workload YAML in ../shared/upstream-workloads (relative to
# the repository root; $SB_UPSTREAM_WORKLOADS overrides it; skipped, exit 77,
# when absent) is loaded and run scaled down, through `shardbench datagen`
# (when its workflow does not generate) and `shardbench run` with its own
# workflow flags, on local folders or on the S3 test server (s3rver on
# loopback) or Azurite (az://) where the file names object storage. Overrides are of sizes and
# places only; tests/integration/upstream_workloads.py says which, what is
# checked for each workflow flag, and holds the one table of files that
# cannot run (UNRUNNABLE, each with its reason).
#
# Output: one line per file (PASS, FAIL with the first failed check and the
# commands to reproduce it, XFAIL for a table entry that still fails as
# documented, XPASS for one that passes), then a table of every file.
# SB_UPSTREAM_ONLY="dir/a.yaml dir/b.yaml" runs only those files.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/../s3/s3lib.sh"
. "$here/../azure/azurite.sh"

upstream=${SB_UPSTREAM_WORKLOADS:-$here/../../../shared/upstream-workloads}
if [ ! -d "$upstream" ]; then
    echo "SKIP: no upstream workload folder ($upstream); set SB_UPSTREAM_WORKLOADS"
    exit 77
fi
upstream=$(cd "$upstream" && pwd)
python3 -c 'import yaml' 2>/dev/null || { echo "FAIL - python3-yaml is missing (deploy/install-deps.sh --tests)"; exit 1; }

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
azurite_install || { echo "FAIL - cannot install Azurite"; exit 1; }
s3rver_env
trap 's3rver_stop; azurite_stop; rm -rf "$SCRATCH"' EXIT
# the Azure files (az:// through s3dlio) on Azurite: their container, the
# connection string the azure engine reads, and an account SAS with which
# the checks list and clear the container by themselves
azurite_start "$SCRATCH" mlperf-container || { echo "FAIL - Azurite did not start"; exit 1; }
azurite_env
AZURE_TEST_SAS=$(python3 "$AZURITE_SIGNER" sas "$AZURITE_ACCOUNT" "$AZURITE_KEY") \
    || { echo "FAIL - cannot make an account SAS for Azurite"; exit 1; }
export AZURE_TEST_SAS AZURITE_ENDPOINT
buckets=$(python3 "$here/upstream_workloads.py" buckets "$upstream") \
    || { echo "FAIL - cannot read the bucket names of the upstream files"; exit 1; }
# shellcheck disable=SC2086 # one argument per bucket
s3rver_start "$SCRATCH/s3data" $buckets || { echo "FAIL - S3 server did not start"; exit 1; }
s3rver_start "$SCRATCH/s3data" || { echo "FAIL - second S3 server did not start"; exit 1; }
echo "S3 test server: $S3RVER_ENDPOINTS, buckets: $buckets"

# shellcheck disable=SC2086 # one argument per file name
python3 "$here/upstream_workloads.py" run "$upstream" "$SCRATCH" ${SB_UPSTREAM_ONLY:-}
rc=$?
expect_eq "every upstream workload file does what its workflow asks" "$rc" 0
finish
