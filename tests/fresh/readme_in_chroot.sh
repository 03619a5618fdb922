#!/usr/bin/env bash
# The README's first command on a fresh Debian 12: `./run.sh`, as root, in a
# minimal root made with `mmdebstrap --variant=apt bookworm`, in a chroot. A
# package that deploy/install-deps.sh forgets, or a build step that fails
# there, fails this check, and the end of run.sh's output says why.
#
# It builds the root (cached as a tarball for a week: SHARDBENCH_FRESH_WORK),
# unpacks a copy, copies the project's files into /root/shardbench (the
# working tree's tracked files and untracked files git does not ignore, so
# uncommitted changes are tested too), mounts /proc, /sys, /dev, /dev/pts and
# a /dev/shm there, runs `./run.sh` twice (the first installs, builds,
# generates the quickstart dataset and trains; the second must find nothing
# to install) and checks the exit statuses and the summary. Everything is
# unmounted and the copy removed on every way out. The network it uses is the
# Debian archive's: mmdebstrap's mirror, and apt in the chroot.
#
# Needs root (mmdebstrap, chroot and mount). It runs when CI=true or
# SHARDBENCH_FRESH_CHECK=1; otherwise it exits 77 (a skip for meson). When
# it runs, anything missing is a failure, never a skip.
#
# usage: tests/fresh/readme_in_chroot.sh
# env:   SHARDBENCH_FRESH_WORK      cache and scratch folder (default: build/fresh)
#        SHARDBENCH_FRESH_MIRROR    mirror for mmdebstrap (default: mmdebstrap's own)
#        SHARDBENCH_FRESH_MAX_AGE   days a cached root is reused (default 7; 0 rebuilds)
#        SHARDBENCH_FRESH_TIMEOUT   seconds for the first ./run.sh (default 1800)
#        SHARDBENCH_FRESH_KEEP=1    keep the root afterwards (its path is printed)
set -uo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
self="$here/tests/fresh/readme_in_chroot.sh"

if [ "${CI:-}" != "true" ] && [ "${SHARDBENCH_FRESH_CHECK:-}" != 1 ]; then
    echo "fresh: skipped: runs when CI=true or SHARDBENCH_FRESH_CHECK=1 (needs root and the Debian archive)"
    exit 77
fi

fail() { echo "fresh: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "needs root (mmdebstrap, chroot, mount); we are uid $(id -u)"
command -v mmdebstrap >/dev/null || fail "mmdebstrap is missing (deploy/install-deps.sh --tests installs it)"
for tool in chroot mount umount timeout flock tar; do
    command -v $tool >/dev/null || fail "$tool is missing"
done

# In a private mount namespace of our own, the mounts below are gone when the
# check ends however it ends; the trap unmounts them in any case.
if [ -z "${SB_FRESH_NS:-}" ] && command -v unshare >/dev/null \
    && unshare --mount --propagation private true 2>/dev/null; then
    SB_FRESH_NS=1 exec unshare --mount --propagation private bash "$self" "$@"
elif [ -z "${SB_FRESH_NS:-}" ]; then
    echo "fresh: no private mount namespace (unshare --mount failed): the mounts are made in ours"
fi

work=${SHARDBENCH_FRESH_WORK:-$here/build/fresh}
mkdir -p "$work" || fail "cannot create $work"
work=$(cd "$work" && pwd)
max_age=${SHARDBENCH_FRESH_MAX_AGE:-7}
run_timeout=${SHARDBENCH_FRESH_TIMEOUT:-1800}
t0=$SECONDS

# One check at a time per work folder (the cached root, the scratch roots).
exec 9>"$work/lock" || fail "cannot open $work/lock"
flock -w 3600 9 || fail "another check holds $work/lock"

# 1. The root: mmdebstrap's tarball, rebuilt when older than max_age days.
tarball="$work/bookworm-apt.tar"
how=cached
if [ ! -s "$tarball" ] || [ "$max_age" -le 0 ] || [ -n "$(find "$tarball" -mtime +"$((max_age - 1))" 2>/dev/null)" ]; then
    how=built
    rm -f "$work/bookworm-apt.new.tar"
    echo "fresh: mmdebstrap --variant=apt bookworm${SHARDBENCH_FRESH_MIRROR:+ $SHARDBENCH_FRESH_MIRROR}"
    # shellcheck disable=SC2086
    if ! timeout --kill-after=30 900 mmdebstrap --variant=apt bookworm "$work/bookworm-apt.new.tar" ${SHARDBENCH_FRESH_MIRROR:-} \
            >"$work/mmdebstrap.log" 2>&1; then
        tail -n 40 "$work/mmdebstrap.log" >&2
        rm -f "$work/bookworm-apt.new.tar"
        fail "mmdebstrap --variant=apt bookworm failed or ran past 900 s (all of its output in $work/mmdebstrap.log)"
    fi
    mv -f "$work/bookworm-apt.new.tar" "$tarball" || fail "cannot move the new root to $tarball"
fi
t_root=$((SECONDS - t0))
t_run1='' t_run2='' child=''
rm -f "$work"/run[12].out "$work"/run[12].err

root=$(mktemp -d "$work/root.XXXXXX") || fail "cannot create a root under $work"
chmod 755 "$root" || fail "cannot chmod $root"
mounts=()

# Processes still running in the root (a worker the run left behind): we
# started them, so we end them, by pid.
s_kill_in_root() {
    local p link
    for p in /proc/[0-9]*; do
        link=$(readlink "$p/root" 2>/dev/null) || continue
        [ "$link" = "$root" ] && kill -9 "${p#/proc/}" 2>/dev/null
    done
    return 0
}
s_mounted_in_root() {
    awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo
}
cleanup() {
    local rc=$? m left
    trap - EXIT INT TERM HUP
    [ -n "$child" ] && kill "$child" 2>/dev/null
    s_kill_in_root
    for m in "${mounts[@]}"; do
        umount "$m" 2>/dev/null || umount -l "$m" || echo "fresh: cannot unmount $m" >&2
    done
    left=$(s_mounted_in_root)
    if [ -n "$left" ]; then
        # Never rm -rf a tree with the host's /dev bound into it.
        echo "fresh: still mounted under $root, left in place: $left" >&2
        rc=1
    elif [ "${SHARDBENCH_FRESH_KEEP:-}" = 1 ]; then
        echo "fresh: root kept in $root"
    else
        rm -rf --one-file-system "$root"
    fi
    echo "fresh: time: root ${t_root} s ($how), first ./run.sh ${t_run1:--} s, second ${t_run2:--} s," \
         "total $((SECONDS - t0)) s with the cleanup"
    exit $rc
}
trap cleanup EXIT
trap 'echo "fresh: interrupted (SIGINT)" >&2; exit 130' INT
trap 'echo "fresh: interrupted (SIGTERM)" >&2; exit 143' TERM
trap 'echo "fresh: interrupted (SIGHUP)" >&2; exit 129' HUP

# 2. A copy of the root; the device nodes come from the host's /dev below.
tar -C "$root" --numeric-owner --exclude='./dev/*' -xpf "$tarball" \
    || fail "cannot unpack $tarball into $root"
# What the Debian installer writes and the tarball lacks: name resolution
# for the archive (the host's), and localhost.
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null \
    || fail "cannot copy /etc/resolv.conf into the root"
[ -e "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
    >"$root/etc/hosts"

# 3. The project, as a clone with the working tree's changes would be.
dest="$root/root/shardbench"
mkdir -p "$dest" || fail "cannot create $dest"
if list=$(git -C "$here" ls-files -z --cached --others --exclude-standard 2>/dev/null | tr '\0' '\n') \
        && [ -n "$list" ]; then
    # files deleted in the working tree are still in the index: leave them out
    (cd "$here" && while IFS= read -r f; do
        [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
     done <<<"$list" | tar --null -T - -cf -) | tar -C "$dest" --no-same-owner -xf - \
        || fail "cannot copy the project's files into $dest"
    how_copied="git ls-files"
else
    # not a git checkout (or git is missing): everything but what .gitignore names
    tar -C "$here" --exclude=./.git --exclude=./build --exclude='./build-*' --exclude='./shardbench.db*' \
        --exclude=./shardbench-data --exclude=node_modules --exclude=__pycache__ -cf - . \
        | tar -C "$dest" --no-same-owner -xf - || fail "cannot copy the project into $dest"
    how_copied="tar of the tree"
fi
echo "fresh: root in $root ($how in ${t_root} s), project copied ($how_copied)"

# 4. The mounts a booted machine has.
s_mount() {
    local target=$1
    shift
    mount "$@" "$target" || fail "mount $* $target failed (the check needs root allowed to mount: CAP_SYS_ADMIN)"
    mounts=("$target" "${mounts[@]}")
}
s_mount "$root/proc" -t proc proc
s_mount "$root/sys" -t sysfs -o ro sysfs
s_mount "$root/dev" --bind /dev
if mountpoint -q /dev/pts; then
    s_mount "$root/dev/pts" --bind /dev/pts
fi
s_mount "$root/dev/shm" -t tmpfs -o mode=1777,nosuid,nodev tmpfs

# 5. The README's first command, in a login-like environment of its own.
# A proxy the host needs to reach the archive (mmdebstrap uses it too) is
# passed on; nothing else of our environment is.
proxies=()
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
    [ -n "${!v:-}" ] && proxies+=("$v=${!v}")
done
in_root=(chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash LANG=C.UTF-8
         TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${proxies[@]}"
         /bin/bash -c)
# s_readme NAME SECONDS: ./run.sh in the root, output in $work/NAME.out and
# .err, status in rc. In the background with `wait`, so that a signal to us
# runs the trap at once (the trap ends it: cleanup kills what runs in the root).
s_readme() {
    echo "fresh: cd /root/shardbench && ./run.sh   (output: $work/$1.out, $work/$1.err)"
    timeout --kill-after=30 "$2" "${in_root[@]}" 'cd /root/shardbench && ./run.sh' \
        </dev/null >"$work/$1.out" 2>"$work/$1.err" &
    child=$!
    wait $child
    rc=$?
    child=''
}
t1=$SECONDS
s_readme run1 "$run_timeout"
t_run1=$((SECONDS - t1))

s_show() {
    echo "--- ./run.sh stderr (last 60 lines):"
    tail -n 60 "$1.err"
    echo "--- ./run.sh stdout (last 30 lines):"
    tail -n 30 "$1.out"
    echo "---"
}
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    s_show "$work/run1"
    fail "./run.sh ran past ${run_timeout} s"
elif [ $rc -ne 0 ]; then
    s_show "$work/run1"
    fail "./run.sh exited $rc on a fresh Debian 12 after ${t_run1} s"
fi
# the summary README.md shows: datagen, then a train run that succeeded
bad=0
for re in '^datagen \(run 1\): 512 files' '^shardbench train run 2: workload quickstart' \
          '^  AU mean [0-9.]+% against threshold [0-9.]+%: (PASS|FAIL)$' '^  status: succeeded'; do
    grep -Eq -- "$re" "$work/run1.out" || { echo "fresh: stdout has no line matching /$re/" >&2; bad=1; }
done
[ $bad -eq 0 ] || { s_show "$work/run1"; fail "./run.sh exited 0 but its summary is not the README's"; }

# The same command again: nothing to install, nothing to build, a new run.
t2=$SECONDS
s_readme run2 600
t_run2=$((SECONDS - t2))
if [ $rc -ne 0 ]; then
    s_show "$work/run2"
    fail "./run.sh exited $rc the second time"
fi
grep -Eq '^  status: succeeded' "$work/run2.out" || { s_show "$work/run2"; fail "the second ./run.sh did not succeed"; }
if grep -q 'shardbench: installing' "$work/run2.err"; then
    s_show "$work/run2"
    fail "the second ./run.sh installed packages again"
fi

echo "fresh: ok: ./run.sh on a fresh Debian 12:$(grep -E '^  (AU mean|status)' "$work/run1.out" | tr -s ' ' | tr '\n' ';')"
