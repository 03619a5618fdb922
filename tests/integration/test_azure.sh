#!/usr/bin/env bash
# The azure engine against Azurite (npm azurite, tests/azure/azurite.sh) on
# loopback, for what the conformance suite does not cover
# (tests/integration/azure_client_live.c): List Blobs over several pages,
# staged blocks, the fields of errors (a missing blob, a wrong key), SAS
# credentials, two endpoints round robin with per-endpoint counters, a stop
# while a request hangs; and where the engine finds its endpoint when the
# workload gives none.
. "$(dirname "$0")/lib.sh"
. "$SB_INTEGRATION_DIR/../azure/azurite.sh"
: "${AZURE_CLIENT_LIVE:?path of the azure_client_live test binary}"
: "${FAULT_PROXY:?path of the fault_proxy binary}"

azurite_install || { echo "FAIL - cannot install Azurite"; exit 1; }
hang_pid="" proxy_pid=""
trap 'azurite_stop; for p in $hang_pid $proxy_pid; do kill "$p" 2>/dev/null; done; rm -rf "$SCRATCH"' EXIT
azurite_start "$SCRATCH/azurite" sbtest || { echo "FAIL - Azurite did not start"; exit 1; }
# a port that accepts connections and never answers: the kernel completes
# the handshakes, nothing reads the requests
python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True); time.sleep(3600)' >hang.port &
hang_pid=$!
for _ in $(seq 100); do [ -s hang.port ] && break; sleep 0.05; done
hang_port=$(cat hang.port)
# a fault proxy in front of Azurite (503s, resets, dropped connections on
# blob GETs), switched by the client test through its control file
echo "none 0 start" >ctl
"$FAULT_PROXY" -u "$AZURITE_PORT" -c "$SCRATCH/ctl" >proxy.out 2>proxy.err &
proxy_pid=$!
await_text proxy.out listening
read -r _ _ _ proxy_port _ <proxy.out
[ -n "${proxy_port:-}" ] || { echo "FAIL - fault proxy did not start"; cat proxy.err; exit 1; }

live () {
    CK_DEFAULT_TIMEOUT=100 AZURE_TEST_CONTAINER=sbtest AZURE_TEST_HANG_PORT="$hang_port" \
        AZURE_TEST_ENDPOINT2="http://localhost:$AZURITE_PORT/$AZURITE_ACCOUNT" \
        AZURE_TEST_FAULT_ENDPOINT="http://$proxy_port/$AZURITE_ACCOUNT" AZURE_TEST_FAULT_CTL="$SCRATCH/ctl" \
        "$AZURE_CLIENT_LIVE" >"$1" 2>&1
}

# 1. pages, blocks, odd names, a missing blob, two endpoints, a stop, retries: the account key
azurite_env
AZURE_TEST_SECRET="$AZURITE_KEY" live client.out
rc=$?
cat client.out
expect_eq "azure engine against Azurite (pages, blocks, odd names, missing blob, two endpoints, stop, retries)" $rc 0
expect_contains "all seven ran" client.out "100%: Checks: 7, Failures: 0, Errors: 0"
# 503 x2, a reset, 503 x4 (attempts 1 to 4), a drop x5: 4 attempts, the
# first of them twice, as curl sends a request again by itself, once, when
# the kept-alive connection it reused dies before any reply
expect_eq "the proxy injected 2 + 1 + 4 + 5 faults" "$(grep -c 'inject' proxy.err)" 12
expect_eq "of them drops" "$(grep -c 'inject drop' proxy.err)" 5

# 2. a wrong key: 403 and the service's code, never the key
bad_key=$(printf 'not the account key of Azurite at all, 64 bytes long..........' | base64 -w0)
AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$AZURITE_ACCOUNT;AccountKey=$bad_key;BlobEndpoint=$AZURITE_ENDPOINT;" \
    AZURE_TEST_SECRET="$bad_key" AZURE_TEST_ONLY=test_error_bad_key live badkey.out
rc=$?
cat badkey.out
expect_eq "a wrong account key: 403, the service's code, no key in the errors" $rc 0
expect_contains "it ran" badkey.out "100%: Checks: 1, Failures: 0, Errors: 0"

# 3. a SAS token (made by the independent signer, tests/azure/az_shared_key.py):
# as AZURE_STORAGE_ACCOUNT + AZURE_STORAGE_SAS_TOKEN with the endpoint given
# as a workload gives it, and as a connection string's SharedAccessSignature
sas=$(python3 "$AZURITE_SIGNER" sas "$AZURITE_ACCOUNT" "$AZURITE_KEY")
sig=$(printf '%s' "$sas" | tr '&' '\n' | sed -n 's/^sig=//p')
[ -n "$sig" ] || fail "no sig= in the SAS token"
unset AZURE_STORAGE_CONNECTION_STRING
AZURE_STORAGE_ACCOUNT=$AZURITE_ACCOUNT AZURE_STORAGE_SAS_TOKEN="?$sas" AZURE_TEST_SECRET="$sig" \
    AZURE_TEST_ENDPOINT="$AZURITE_ENDPOINT" \
    AZURE_TEST_SOURCE="environment (AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_SAS_TOKEN)" AZURE_TEST_ONLY=test_sas live sas.out
rc=$?
cat sas.out
expect_eq "SAS token from AZURE_STORAGE_SAS_TOKEN: write in blocks, read, list, delete, preflight" $rc 0
expect_contains "it ran" sas.out "100%: Checks: 1, Failures: 0, Errors: 0"
AZURE_STORAGE_CONNECTION_STRING="BlobEndpoint=$AZURITE_ENDPOINT;SharedAccessSignature=$sas" AZURE_TEST_SECRET="$sig" \
    AZURE_TEST_SOURCE="environment (AZURE_STORAGE_CONNECTION_STRING, SharedAccessSignature)" \
    AZURE_TEST_ONLY=test_sas live sas-connstr.out
rc=$?
cat sas-connstr.out
expect_eq "SAS token from the connection string" $rc 0
expect_contains "it ran" sas-connstr.out "100%: Checks: 1, Failures: 0, Errors: 0"

# 4. the endpoint from the environment when the workload gives none, and
# what to set when there is none (no server needed)
( unset AZURE_STORAGE_CONNECTION_STRING AZURE_STORAGE_ACCOUNT; AZURE_TEST_ONLY=test_configure live configure.out )
rc=$?
cat configure.out
expect_eq "configure: endpoints from the environment, never a credential in cfg" $rc 0
expect_contains "it ran" configure.out "100%: Checks: 1, Failures: 0, Errors: 0"

finish
