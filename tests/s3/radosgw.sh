# shellcheck shell=bash
# A real S3 server on loopback for integration tests and benchmarks: Ceph's
# radosgw (Debian 12 packages) on a single-node Ceph started by hand: one
# ceph-mon, one ceph-osd on memstore (objects in RAM), one or more radosgw
# processes (beast frontend), all on 127.0.0.1 on ports picked at run time,
# every file (config, logs, sockets, the OSD's data) under one folder.
# No systemd, no cephadm, no ceph-mgr: radosgw needs only the monitor and an
# OSD (a manager keeps statistics and runs modules; nothing here reads them).
#
# Source it (bash); it changes no shell option, and works under set -euo pipefail.
#
#   radosgw_install            the Debian packages, when missing (root or sudo)
#   radosgw_start DIR [BUCKET...]
#                              the cluster in DIR (created; must not hold one),
#                              an S3 user with the fixed test credentials and
#                              the buckets (default: sbtest)
#   radosgw_stop               stop exactly the processes started here, by PID
#   radosgw_env                export the fixed test credentials
#   radosgw_curl ARGS...       curl with the test user's SigV4 signature
#   radosgw_list ENDPOINT BUCKET [PREFIX]
#                              KEY<tab>SIZE of every object, in listing order
#                              (pages of RADOSGW_LIST_MAX_KEYS keys, if set)
#
# Variables set by radosgw_start: RADOSGW_ENDPOINT (the first gateway),
# RADOSGW_ENDPOINTS (space separated), RADOSGW_PIDS (mon, osd, gateways),
# RADOSGW_CONF, RADOSGW_DIR. Call radosgw_start and radosgw_stop in the shell
# that keeps the variables, not in $( ) or a pipeline; trap radosgw_stop EXIT.
#
# Environment: RADOSGW_GATEWAYS (1): radosgw processes on the one cluster,
# each an endpoint; RADOSGW_MEMSTORE_BYTES (1 GiB): the OSD's capacity, held
# in RAM; RADOSGW_START_TIMEOUT (120): seconds each daemon has to come up.
#
# Authentication inside the cluster is off (auth = none): every daemon and
# client is on 127.0.0.1 for the length of one test, and cephx would add a
# keyring per daemon and the steps to register them, for nothing that
# shardbench exercises: S3 requests are still signed (SigV4) and checked by
# radosgw against the S3 user's secret, which is what the tests need.

. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../pid_alive.sh"

# The fixed S3 credentials: the published test keys of Ceph's own
# development cluster (src/vstart.sh, also used by ceph/s3-tests). Nothing secret.
RADOSGW_ACCESS_KEY=0555b35654ad1656d804
RADOSGW_SECRET_KEY=h7GhxuBLTrlhVUyxSPUKUV8r/2EI4ngqJxD7iBdBYLhwluN30JaT3Q==
RADOSGW_REGION=us-east-1
RADOSGW_EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
RADOSGW_PACKAGES="ceph-common ceph-mon ceph-osd radosgw"
RADOSGW_PIDS="${RADOSGW_PIDS:-}"
RADOSGW_ENDPOINTS="${RADOSGW_ENDPOINTS:-}"
RADOSGW_ENDPOINT="${RADOSGW_ENDPOINT:-}"
RADOSGW_CONF="${RADOSGW_CONF:-}"
RADOSGW_DIR="${RADOSGW_DIR:-}"

_radosgw_err () { echo "radosgw.sh: $*" >&2; }

_radosgw_have () {
    local b
    for b in ceph ceph-mon ceph-osd ceph-authtool monmaptool radosgw radosgw-admin; do
        command -v "$b" >/dev/null 2>&1 || return 1
    done
}

# radosgw_install: apt-get install the Ceph packages unless their programs
# are there. Needs root or sudo; no service starts during the install (a
# policy-rc.d that refuses every start, where none is in place). Says what
# failed and returns 1 on failure.
radosgw_install () {
    _radosgw_have && return 0
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            _radosgw_err "Ceph ($RADOSGW_PACKAGES) is not installed and we are neither root nor allowed sudo"
            return 1
        fi
    fi
    command -v apt-get >/dev/null 2>&1 || { _radosgw_err "Ceph is not installed and there is no apt-get"; return 1; }
    local policy=/usr/sbin/policy-rc.d placed=0 rc=0
    local log="${TMPDIR:-/tmp}/radosgw-install.$$.log"
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\n# tests/s3/radosgw.sh: no service starts during the install\nexit 101\n' \
            | "${sudo[@]}" tee "$policy" >/dev/null && "${sudo[@]}" chmod 755 "$policy" && placed=1
    fi
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends $RADOSGW_PACKAGES \
        >"$log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        # the package lists may be missing or stale (a fresh container)
        { "${sudo[@]}" apt-get update -q && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q \
            --no-install-recommends $RADOSGW_PACKAGES; } >>"$log" 2>&1 && rc=0
    fi
    [ "$placed" = 1 ] && "${sudo[@]}" rm -f "$policy"
    if [ "$rc" -ne 0 ] || ! _radosgw_have; then
        _radosgw_err "apt-get install $RADOSGW_PACKAGES failed; its output:"
        tail -n 20 "$log" | sed 's/^/    /' >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
    return 0
}

# radosgw_env: the fixed credentials of the S3 user radosgw_start creates.
radosgw_env () {
    export AWS_ACCESS_KEY_ID="$RADOSGW_ACCESS_KEY"
    export AWS_SECRET_ACCESS_KEY="$RADOSGW_SECRET_KEY"
    export AWS_REGION="$RADOSGW_REGION"
    export AWS_DEFAULT_REGION="$RADOSGW_REGION"
    unset AWS_SESSION_TOKEN AWS_PROFILE
}

# radosgw_curl ARGS...: curl signing its request (SigV4) as the test user.
# radosgw refuses a SigV4 request without x-amz-content-sha256, which curl
# sends only when told: the empty body's digest by default; give
# RADOSGW_PAYLOAD_SHA256 (e.g. UNSIGNED-PAYLOAD) for a request with a body.
radosgw_curl () {
    curl -H "x-amz-content-sha256: ${RADOSGW_PAYLOAD_SHA256:-$RADOSGW_EMPTY_SHA256}" \
        --aws-sigv4 "aws:amz:$RADOSGW_REGION:s3" -u "$RADOSGW_ACCESS_KEY:$RADOSGW_SECRET_KEY" "$@"
}

# _radosgw_enc TEXT: TEXT percent-encoded as SigV4 canonical queries need
# (curl signs the query as written: only -_.~ may stay unencoded)
_radosgw_enc () {
    python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe="-_.~"))' "$1"
}

# radosgw_list ENDPOINT BUCKET [PREFIX]: every page of ListObjectsV2 (the
# query's keys in the sorted order SigV4 signs them), one KEY<tab>SIZE a line
radosgw_list () {
    local ep="$1" bucket="$2" prefix="${3:-}" token="" out q page
    while :; do
        q="list-type=2${RADOSGW_LIST_MAX_KEYS:+&max-keys=$RADOSGW_LIST_MAX_KEYS}&prefix=$(_radosgw_enc "$prefix")"
        [ -z "$token" ] || q="continuation-token=$(_radosgw_enc "$token")&$q"
        out=$(radosgw_curl -sf "$ep/$bucket?$q") || { _radosgw_err "listing $ep/$bucket?$q failed"; return 1; }
        # a page: its keys, then a last line: the next token or nothing
        page=$(printf '%s' "$out" | python3 -c '
import sys, xml.etree.ElementTree as E
ns = "{http://s3.amazonaws.com/doc/2006-03-01/}"
r = E.fromstring(sys.stdin.read())
for c in r.findall(ns + "Contents"):
    print(c.findtext(ns + "Key") + "\t" + c.findtext(ns + "Size"))
print("next:" + (r.findtext(ns + "NextContinuationToken") or "" if r.findtext(ns + "IsTruncated") == "true" else ""))') \
            || { _radosgw_err "listing $ep/$bucket?$q: unreadable answer"; return 1; }
        printf '%s\n' "$page" | sed '$d'
        token=$(printf '%s\n' "$page" | sed -n '$s/^next://p')
        [ -n "$token" ] || return 0
    done
}

# _radosgw_alive PID: running and not a zombie (a child not yet reaped).
_radosgw_alive () { sb_pid_alive "$1"; }

# _radosgw_ours PID: still one of our daemons, on our config (guards against
# a PID reused since).
_radosgw_ours () {
    [ -r "/proc/$1/cmdline" ] || return 0
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$RADOSGW_CONF"
}

_radosgw_free_port () {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# _radosgw_fail NAME PID LOG WHAT: say which daemon did not come up, with
# the tail of its log, and stop what was started.
_radosgw_fail () {
    local state="still running"
    _radosgw_alive "$2" || state="exited"
    _radosgw_err "$1 (pid $2, $state) $4; the end of its log $3:"
    tail -n 25 "$3" 2>/dev/null | sed 's/^/    /' >&2
    if [ -s "$RADOSGW_DIR/log/$1.out" ]; then
        _radosgw_err "... and of its output $RADOSGW_DIR/log/$1.out:"
        tail -n 10 "$RADOSGW_DIR/log/$1.out" | sed 's/^/    /' >&2
    fi
    radosgw_stop
    return 1
}

# _radosgw_wait NAME PID DEADLINE CMD...: run CMD until it succeeds; fail
# when the daemon exits or the deadline (date +%s) passes.
_radosgw_wait () {
    local pid="$2" deadline="$3"   # NAME ($1) names the daemon to the reader
    shift 3
    while :; do
        "$@" >/dev/null 2>&1 && return 0
        _radosgw_alive "$pid" || return 1
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}

_radosgw_ceph () { timeout 20 ceph -c "$RADOSGW_CONF" --connect-timeout 10 "$@"; }

_radosgw_osd_up () {
    local up
    up=$(_radosgw_ceph osd stat -f json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["num_up_osds"])') || return 1
    [ "$up" = 1 ]
}

_radosgw_http_up () {
    local code
    code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "$1/") || return 1
    [ "$code" = 200 ]
}

# radosgw_start DIR [BUCKET...]: the cluster and its gateways; see the top.
radosgw_start () {
    if [ $# -lt 1 ]; then
        _radosgw_err "usage: radosgw_start DIR [BUCKET...]"
        return 2
    fi
    _radosgw_have || { _radosgw_err "Ceph is not installed (radosgw_install)"; return 1; }
    local dir="$1"
    shift
    local buckets=("$@")
    [ ${#buckets[@]} -gt 0 ] || buckets=(sbtest)
    mkdir -p "$dir" || { _radosgw_err "cannot create $dir"; return 1; }
    dir=$(cd "$dir" && pwd) || return 1
    if [ -e "$dir/ceph.conf" ]; then
        _radosgw_err "$dir holds a cluster already ($dir/ceph.conf)"
        return 1
    fi
    local gateways="${RADOSGW_GATEWAYS:-1}" memstore="${RADOSGW_MEMSTORE_BYTES:-1073741824}"
    local wait_s="${RADOSGW_START_TIMEOUT:-120}"
    RADOSGW_DIR="$dir"
    RADOSGW_CONF="$dir/ceph.conf"
    RADOSGW_PIDS=""
    RADOSGW_ENDPOINTS=""
    export RADOSGW_DIR RADOSGW_CONF
    mkdir -p "$dir/log" "$dir/run" "$dir/mon.a" "$dir/osd.0" "$dir/crash" || return 1

    local fsid mon_port osd_base i
    fsid=$(cat /proc/sys/kernel/random/uuid) || return 1
    mon_port=$(_radosgw_free_port) || return 1
    # The OSD binds 4 ports (public, cluster, 2 heartbeats), the first free
    # ones from ms_bind_port_min: a range of 100 above a free port.
    osd_base=$(_radosgw_free_port) || return 1
    [ "$osd_base" -le 65000 ] || osd_base=$((osd_base - 500))
    local gw_ports=()
    for ((i = 0; i < gateways; i++)); do
        gw_ports+=("$(_radosgw_free_port)") || return 1
    done
    {
        cat <<CONF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr1 = false
ms bind ipv6 = false
ms bind port min = $osd_base
ms bind port max = $((osd_base + 100))
auth cluster required = none
auth service required = none
auth client required = none
; radosgw asks for an encrypted monitor connection by default, which needs cephx
ms mon client mode = crc
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
pid file = $dir/run/\$name.pid
crash dir = $dir/crash
keyring = $dir/\$name.keyring
log to stderr = false
err to stderr = true
; one OSD: pools of one copy, few placement groups, no warnings about either
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon data avail warn = 2
mon data avail crit = 1

[mon.a]
mon data = $dir/mon.a

[osd.0]
osd data = $dir/osd.0
osd objectstore = memstore
memstore device bytes = $memstore
CONF
        for ((i = 0; i < gateways; i++)); do
            cat <<CONF

[client.rgw.$i]
rgw frontends = beast endpoint=127.0.0.1:${gw_ports[$i]}
rgw data = $dir/rgw.$i
; virtual-host style requests name the bucket in Host: BUCKET.localhost
rgw dns name = localhost
rgw thread pool size = 64
rgw enable usage log = false
rgw dynamic resharding = false
CONF
        done
    } >"$RADOSGW_CONF" || return 1

    local deadline
    # the monitor
    monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$dir/monmap" >"$dir/log/mkfs.log" 2>&1 \
        && ceph-authtool --create-keyring "$dir/mon.a.keyring" --gen-key -n mon. --cap mon 'allow *' >>"$dir/log/mkfs.log" 2>&1 \
        && ceph-mon -c "$RADOSGW_CONF" -i a --mkfs --monmap "$dir/monmap" --keyring "$dir/mon.a.keyring" >>"$dir/log/mkfs.log" 2>&1 \
        || { _radosgw_err "ceph-mon --mkfs failed:"; tail -n 20 "$dir/log/mkfs.log" | sed 's/^/    /' >&2; return 1; }
    ceph-mon -c "$RADOSGW_CONF" -i a -f </dev/null >"$dir/log/mon.a.out" 2>&1 &
    local mon_pid=$!
    RADOSGW_PIDS="$mon_pid"
    export RADOSGW_PIDS
    deadline=$(($(date +%s) + wait_s))
    _radosgw_wait mon.a "$mon_pid" "$deadline" _radosgw_ceph health \
        || { _radosgw_fail mon.a "$mon_pid" "$dir/log/mon.a.log" "did not answer \`ceph health\` within ${wait_s} s"; return 1; }

    # the OSD: registered with the monitor, then its (memory) store made
    local osd_uuid osd_id
    osd_uuid=$(cat /proc/sys/kernel/random/uuid) || return 1
    osd_id=$(_radosgw_ceph osd new "$osd_uuid" 2>>"$dir/log/mkfs.log") \
        || { _radosgw_err "\`ceph osd new\` failed:"; tail -n 5 "$dir/log/mkfs.log" >&2; radosgw_stop; return 1; }
    [ "$osd_id" = 0 ] || { _radosgw_err "\`ceph osd new\` gave osd.$osd_id, expected osd.0"; radosgw_stop; return 1; }
    ceph-osd -c "$RADOSGW_CONF" -i 0 --mkfs --osd-uuid "$osd_uuid" >>"$dir/log/mkfs.log" 2>&1 \
        || { _radosgw_err "ceph-osd --mkfs failed:"; tail -n 20 "$dir/log/mkfs.log" | sed 's/^/    /' >&2; radosgw_stop; return 1; }
    ceph-osd -c "$RADOSGW_CONF" -i 0 -f </dev/null >"$dir/log/osd.0.out" 2>&1 &
    local osd_pid=$!
    RADOSGW_PIDS="$RADOSGW_PIDS $osd_pid"
    deadline=$(($(date +%s) + wait_s))
    _radosgw_wait osd.0 "$osd_pid" "$deadline" _radosgw_osd_up \
        || { _radosgw_fail osd.0 "$osd_pid" "$dir/log/osd.0.log" "was not up within ${wait_s} s"; return 1; }

    # the gateways: the first creates its pools (placement groups of the
    # one OSD), then answers HTTP
    local pid ep
    for ((i = 0; i < gateways; i++)); do
        radosgw -c "$RADOSGW_CONF" -n "client.rgw.$i" -f </dev/null >"$dir/log/client.rgw.$i.out" 2>&1 &
        pid=$!
        RADOSGW_PIDS="$RADOSGW_PIDS $pid"
        ep="http://127.0.0.1:${gw_ports[$i]}"
        deadline=$(($(date +%s) + wait_s))
        _radosgw_wait "client.rgw.$i" "$pid" "$deadline" _radosgw_http_up "$ep" \
            || { _radosgw_fail "client.rgw.$i" "$pid" "$dir/log/client.rgw.$i.log" "did not answer HTTP on $ep within ${wait_s} s"; return 1; }
        RADOSGW_ENDPOINTS="${RADOSGW_ENDPOINTS:+$RADOSGW_ENDPOINTS }$ep"
    done
    RADOSGW_ENDPOINT="${RADOSGW_ENDPOINTS%% *}"
    export RADOSGW_PIDS RADOSGW_ENDPOINTS RADOSGW_ENDPOINT

    # the S3 user and the buckets
    timeout 60 radosgw-admin -c "$RADOSGW_CONF" user create --uid=shardbench --display-name=shardbench \
        --access-key="$RADOSGW_ACCESS_KEY" --secret-key="$RADOSGW_SECRET_KEY" >"$dir/log/user.log" 2>&1 \
        || { _radosgw_err "radosgw-admin user create failed:"; tail -n 20 "$dir/log/user.log" | sed 's/^/    /' >&2; radosgw_stop; return 1; }
    local b code
    for b in "${buckets[@]}"; do
        code=$(radosgw_curl -s -o "$dir/log/bucket-$b.xml" -w '%{http_code}' -m 30 -X PUT "$RADOSGW_ENDPOINT/$b")
        if [ "$code" != 200 ]; then
            _radosgw_err "creating bucket $b on $RADOSGW_ENDPOINT: HTTP $code"
            cat "$dir/log/bucket-$b.xml" >&2 2>/dev/null
            radosgw_stop
            return 1
        fi
    done
    return 0
}

# radosgw_stop: SIGTERM the gateways, then the OSD, then the monitor (each
# group given 10 s), SIGKILL what is left. Only the PIDs in RADOSGW_PIDS,
# never by name. Safe to call twice.
radosgw_stop () {
    local pids=() pid i
    for pid in ${RADOSGW_PIDS:-}; do pids=("$pid" "${pids[@]}"); done
    for pid in "${pids[@]}"; do
        _radosgw_alive "$pid" && _radosgw_ours "$pid" || continue
        kill "$pid" 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do
            _radosgw_alive "$pid" || break
            sleep 0.1
        done
        if _radosgw_alive "$pid" && _radosgw_ours "$pid"; then
            _radosgw_err "pid $pid ignored SIGTERM for 10 s; SIGKILL"
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    for pid in "${pids[@]}"; do { wait "$pid"; } 2>/dev/null || true; done
    RADOSGW_PIDS=""
    RADOSGW_ENDPOINTS=""
    RADOSGW_ENDPOINT=""
    export RADOSGW_PIDS RADOSGW_ENDPOINTS RADOSGW_ENDPOINT
    return 0
}
