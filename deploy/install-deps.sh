#!/usr/bin/env bash
# Install the Debian 12 packages shardbench needs to build, run and test.
# Installs only what is missing; needs root (or sudo) when something is.
# usage: deploy/install-deps.sh [--tests] [--fuzz] [--bench]
set -euo pipefail

packages=(gcc pkg-config meson ninja-build python3 libzmq3-dev libczmq-dev libmsgpack-dev
          libsqlite3-dev libyaml-dev libcurl4-openssl-dev libssl-dev
          zlib1g-dev libpng-dev libjpeg62-turbo-dev libhdf5-dev
          libsnappy-dev libzstd-dev)  # parquet page codecs (dataset.compression: snappy, zstd; gzip is zlib)
# the uring storage engine (lib/storage/uring/); without liburing the build
# leaves that engine out and the file and direct engines remain
packages+=(liburing-dev)
if [ "${1:-}" = "--tests" ]; then
    packages+=(check sqlite3 procps curl nginx-light util-linux iproute2)
    # tests/run.sh builds the tree a second time with clang (-Dwerror=true in CI)
    packages+=(clang)
    # tests/integration/test_ssh.sh starts sshd on loopback (--hosts)
    packages+=(openssh-server openssh-client)
    # tests/integration/test_slurm.sh runs a private single-node Slurm (--slurm,
    # deploy/slurm/); it uses its own munge key, socket, ports and state, so it
    # neither needs nor disturbs the system daemons these packages may start
    # (their init scripts do nothing without /etc/slurm/slurm.conf)
    packages+=(slurm-wlm slurmctld slurmd slurm-client munge)
    # tests/integration/test_systemd.sh checks deploy/systemd/ with systemd-analyze verify
    packages+=(systemd)
    # tests/integration/test_pagecache.sh checks with strace that reader.odirect opens
    # every data file with O_DIRECT (and util-linux fincore that eviction works)
    packages+=(strace)
    # tests/integration/test_dlio_mpirun.sh runs the installed dlio_benchmark
    # under a real mpirun, as mlpstorage launches DLIO
    packages+=(openmpi-bin)
    # tests/integration/test_clock.sh runs a worker whose clock is 3 s ahead
    # (libfaketime)
    packages+=(faketime)
    # the format tests read the files with numpy, PIL and h5dump
    packages+=(python3-numpy python3-pil hdf5-tools)
    # tests/integration/test_upstream_workloads.sh and test_upstream_keys.sh read
    # the upstream workload YAMLs with python3-yaml
    packages+=(python3-yaml)
    # tests/integration/test_dlio_datasets.sh writes and reads HDF5 files as DLIO does (h5py)
    packages+=(python3-h5py)
    # tests/integration/test_report_html.sh renders report --html in headless
    # Chromium (the DOM, and a screenshot checked with PIL); the page names
    # DejaVu Sans, so its text looks the same everywhere
    packages+=(chromium fonts-dejavu-core)
    # tests/fresh/readme_in_chroot.sh (CI) runs ./run.sh in a fresh Debian 12
    # root made with mmdebstrap, and mounts /proc and /dev there (no arch-test:
    # the root's architecture is the host's)
    packages+=(mmdebstrap mount)
    # the S3 test server runs on node (>= 20: tests/s3/s3lib.sh fetches a
    # node 20 build from the npm registry when Debian's is older)
    command -v node >/dev/null 2>&1 || packages+=(nodejs)
    command -v npm >/dev/null 2>&1 || packages+=(npm)
    # tests/integration/test_radosgw.sh and tests/bench/s3_radosgw.sh run a
    # single-node Ceph with radosgw as a second real S3 server
    # (tests/s3/radosgw.sh starts its own monitor, OSD and gateways; the
    # packages' services are not used, and the policy below keeps them off)
    packages+=(ceph-common ceph-mon ceph-osd radosgw)
    # tests/integration/test_metrics.sh checks the --metrics exposition with
    # promtool (the package's server is not started)
    packages+=(prometheus)
fi
# --fuzz (alone or after --tests): clang and libFuzzer for tests/fuzz/run.sh
case " $* " in *" --fuzz "*) packages+=(clang libclang-rt-dev) ;; esac
# --bench (with or without the others): tests/bench/file_read.sh reads the same
# files with fio and with shardbench, evicting them with vmtouch before each
# run, and reads shardbench's figures from the result database with sqlite3
case " $* " in *" --bench "*) packages+=(fio vmtouch sqlite3) ;; esac

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "shardbench: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null; then
    SUDO=(sudo)
else
    echo "shardbench: these Debian packages are missing and we are not root: ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# In CI (a container, no init system) the packages' daemons (munge, sshd, nginx)
# must not be started by their install scripts: the tests start their own.
# Where no policy says so already, one that refuses every start is put in
# place for the install and removed after it.
policy=/usr/sbin/policy-rc.d
if [ "${CI:-}" = "true" ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# shardbench deploy/install-deps.sh: no service starts during the install\nexit 101\n' \
        | "${SUDO[@]}" tee "$policy" >/dev/null && "${SUDO[@]}" chmod 755 "$policy"
    trap '"${SUDO[@]}" rm -f "$policy"' EXIT
fi
"${SUDO[@]}" apt-get update -q || { echo "shardbench: apt-get update failed" >&2; exit 1; }
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" \
    || { echo "shardbench: apt-get install ${missing[*]} failed" >&2; exit 1; }
