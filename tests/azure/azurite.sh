# shellcheck shell=bash
# Azurite (Microsoft's Azure Storage emulator, npm azurite, pinned) on
# loopback for integration tests and benchmarks: the Blob service alone, in
# memory, on a free port of 127.0.0.1, with the published test account
# devstoreaccount1 and its published key (not a secret).
#
# Source it (bash); it changes no shell option, and works under set -euo pipefail.
#
#   azurite_install              npm install into the cache, once
#   azurite_start DIR CONTAINER...
#                                start a server (its log in DIR), create the containers
#   azurite_container NAME       create one more container
#   azurite_env                  export AZURE_STORAGE_CONNECTION_STRING for it
#   azurite_stop                 stop the server started here, by PID
#
# Variables set: AZURITE_PORT, AZURITE_ENDPOINT (http://127.0.0.1:PORT/devstoreaccount1),
# AZURITE_PID, AZURITE_LOG. Call azurite_start and azurite_stop in the shell
# that keeps the variables; stop the server on exit: trap azurite_stop EXIT.
#
# Environment: SHARDBENCH_NPM_CACHE (default ~/.cache/shardbench/npm) is where
# the package goes (its azurite/ folder); nothing is written into the repository.

. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../pid_alive.sh"
AZURITE_VERSION=3.35.0
AZURITE_ACCOUNT=devstoreaccount1
AZURITE_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
AZURITE_CACHE="${SHARDBENCH_NPM_CACHE:-${HOME:-/tmp}/.cache/shardbench/npm}/azurite"
AZURITE_SIGNER="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/az_shared_key.py"
AZURITE_PID="${AZURITE_PID:-}"
AZURITE_PORT="${AZURITE_PORT:-}"
AZURITE_ENDPOINT="${AZURITE_ENDPOINT:-}"
AZURITE_LOG="${AZURITE_LOG:-}"

_azurite_err () { echo "azurite.sh: $*" >&2; }

_azurite_main () { echo "$AZURITE_CACHE/node_modules/azurite/dist/src/blob/main.js"; }

_azurite_installed () {
    local pj="$AZURITE_CACHE/node_modules/azurite/package.json"
    [ -f "$pj" ] && [ -f "$(_azurite_main)" ] \
        && [ "$(node -p 'require(process.argv[1]).version' "$pj" 2>/dev/null)" = "$AZURITE_VERSION" ]
}

# azurite_install: npm install azurite@AZURITE_VERSION into the cache unless
# it is there; one installer at a time (tests run in parallel). Needs node
# >= 18 and npm. Says what failed and returns 1 on failure.
azurite_install () {
    command -v node >/dev/null 2>&1 || { _azurite_err "node is not installed"; return 1; }
    mkdir -p "$AZURITE_CACHE" || { _azurite_err "cannot create $AZURITE_CACHE"; return 1; }
    _azurite_installed && return 0
    command -v npm >/dev/null 2>&1 || { _azurite_err "npm is not installed: cannot install azurite@$AZURITE_VERSION"; return 1; }
    local lockfd rc=0 log="$AZURITE_CACHE/npm-install.log"
    exec {lockfd}>"$AZURITE_CACHE/.install.lock"
    if command -v flock >/dev/null 2>&1; then
        flock -w 600 "$lockfd" || { _azurite_err "timed out waiting for $AZURITE_CACHE/.install.lock"; exec {lockfd}>&-; return 1; }
    fi
    if ! _azurite_installed; then
        ( cd "$AZURITE_CACHE" && npm install --prefix "$AZURITE_CACHE" --no-audit --no-fund --no-update-notifier \
            --loglevel=error "azurite@$AZURITE_VERSION" ) >"$log" 2>&1 || rc=$?
        if [ "$rc" -ne 0 ] || ! _azurite_installed; then
            _azurite_err "npm install of azurite@$AZURITE_VERSION into $AZURITE_CACHE failed (exit $rc); its output:"
            tail -n 30 "$log" | sed 's/^/    /' >&2
            rc=1
        fi
    fi
    exec {lockfd}>&-
    return "$rc"
}

_azurite_alive () { sb_pid_alive "$1"; }

# azurite_container NAME: create container NAME (Create Container, signed by
# az_shared_key.py); an existing one is fine.
azurite_container () {
    python3 "$AZURITE_SIGNER" container "$AZURITE_ENDPOINT" "$AZURITE_ACCOUNT" "$AZURITE_KEY" "$1"
}

# azurite_start DIR CONTAINER...: the Blob service on 127.0.0.1, port chosen
# by the kernel, data in memory; ready once it printed the port it listens
# on (polled, not slept), then the containers are made.
azurite_start () {
    [ $# -ge 1 ] || { _azurite_err "usage: azurite_start DIR CONTAINER..."; return 2; }
    local dir="$1" c
    shift
    mkdir -p "$dir" && dir=$(cd "$dir" && pwd) || { _azurite_err "cannot create $dir"; return 1; }
    local tmplog="$dir/azurite-starting.log"
    # --disableProductStyleUrl: the account is the URL's first path segment,
    # whatever the host is called (localhost too)
    ( cd "$dir" && exec node "$(_azurite_main)" --blobHost 127.0.0.1 --blobPort 0 --inMemoryPersistence \
        --disableTelemetry --disableProductStyleUrl --silent ) </dev/null >"$tmplog" 2>&1 &
    local pid=$! port="" i
    for ((i = 0; i < 300; i++)); do
        port=$(sed -n 's|^Azurite Blob service successfully listens on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' \
               "$tmplog" 2>/dev/null | head -n 1)
        [ -n "$port" ] && break
        _azurite_alive "$pid" || break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        _azurite_alive "$pid" && { _azurite_err "azurite (pid $pid) did not say its port within 30 s; stopping it"; kill "$pid" 2>/dev/null; }
        { wait "$pid"; } 2>/dev/null || true
        _azurite_err "azurite did not start; its output ($tmplog):"
        tail -n 30 "$tmplog" | sed 's/^/    /' >&2
        return 1
    fi
    AZURITE_LOG="$dir/azurite-$port.log"
    mv -f "$tmplog" "$AZURITE_LOG" 2>/dev/null || AZURITE_LOG="$tmplog"
    AZURITE_PID=$pid
    AZURITE_PORT=$port
    AZURITE_ENDPOINT="http://127.0.0.1:$port/$AZURITE_ACCOUNT"
    export AZURITE_PID AZURITE_PORT AZURITE_ENDPOINT AZURITE_LOG
    for c in "$@"; do
        azurite_container "$c" || return 1
    done
    return 0
}

# azurite_env: the connection string Azurite's clients use (the endpoint and
# the published account key), and no other Azure variable.
azurite_env () {
    unset AZURE_STORAGE_ACCOUNT AZURE_STORAGE_KEY AZURE_STORAGE_SAS_TOKEN
    export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$AZURITE_ACCOUNT;AccountKey=$AZURITE_KEY;BlobEndpoint=$AZURITE_ENDPOINT;"
}

# azurite_stop: SIGTERM the server started here, SIGKILL after 5 s. By PID
# only. Safe to call twice.
azurite_stop () {
    local pid="${AZURITE_PID:-}" i
    [ -n "$pid" ] || return 0
    if _azurite_alive "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF 'azurite'; then
        kill "$pid" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do
            _azurite_alive "$pid" || break
            sleep 0.1
        done
        _azurite_alive "$pid" && { _azurite_err "azurite pid $pid ignored SIGTERM for 5 s; SIGKILL"; kill -9 "$pid" 2>/dev/null; }
    fi
    { wait "$pid"; } 2>/dev/null || true
    AZURITE_PID=""
    AZURITE_PORT=""
    AZURITE_ENDPOINT=""
    export AZURITE_PID AZURITE_PORT AZURITE_ENDPOINT
    return 0
}
