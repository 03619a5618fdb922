# shellcheck shell=bash
# sb_pid_alive PID: 0 when PID is a live process (not a zombie), for the
# test-server libraries (tests/s3/s3lib.sh, tests/s3/radosgw.sh,
# tests/azure/azurite.sh) that stop exactly what they started. Source it;
# it changes no shell option.
sb_pid_alive () {
    kill -0 "$1" 2>/dev/null || return 1
    if [ -r "/proc/$1/stat" ]; then
        local stat
        stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
        stat=${stat##*) }
        [ "${stat%% *}" != Z ] || return 1
    fi
    return 0
}
