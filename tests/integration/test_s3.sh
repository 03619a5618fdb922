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

finish
