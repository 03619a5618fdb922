#!/usr/bin/env bash
# Install the Debian 12 packages shardbench needs to build, run and test.
# Installs only what is missing; needs root (or sudo) when something is.
# usage: deploy/install-deps.sh [--tests] [--fuzz]
set -euo pipefail

packages=(gcc pkg-config meson ninja-build python3 libzmq3-dev libczmq-dev libmsgpack-dev
          libsqlite3-dev libyaml-dev libcurl4-openssl-dev libssl-dev
          zlib1g-dev libpng-dev libjpeg62-turbo-dev libhdf5-dev)
if [ "${1:-}" = "--tests" ]; then
    packages+=(check sqlite3 procps curl nginx-light util-linux iproute2)
    # tests/integration/test_ssh.sh starts sshd on loopback (--hosts)
    packages+=(openssh-server openssh-client)
    # the format tests read the files with numpy, PIL and h5dump
    packages+=(python3-numpy python3-pil hdf5-tools)
    # the S3 test server runs on node (>= 20: tests/s3/s3lib.sh fetches a
    # node 20 build from the npm registry when Debian's is older)
    command -v node >/dev/null 2>&1 || packages+=(nodejs)
    command -v npm >/dev/null 2>&1 || packages+=(npm)
fi
# --fuzz (alone or after --tests): clang and libFuzzer for tests/fuzz/run.sh
case " $* " in *" --fuzz "*) packages+=(clang libclang-rt-dev) ;; esac

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
"${SUDO[@]}" apt-get update -q || { echo "shardbench: apt-get update failed" >&2; exit 1; }
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" \
    || { echo "shardbench: apt-get install ${missing[*]} failed" >&2; exit 1; }
