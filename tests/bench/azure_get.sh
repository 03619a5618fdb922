#!/usr/bin/env bash
# GET throughput and client CPU time of shardbench's azure engine against
# Azurite (npm azurite, tests/azure/azurite.sh) on loopback, side by side in
# one run with `curl -Z --parallel-max N` on the same blobs.
#
# curl reads each blob with the account SAS token in its URL (no signing
# per request); shardbench reads with Shared Key (an HMAC-SHA256 per
# request) and again with the same SAS token. Azurite, a node process,
# serves all of them the same way; the clients' own cost is the CPU time
# columns (user + system of the client process alone, from /usr/bin/time),
# which load on the machine does not inflate as it does wall-clock figures.
# usage: tests/bench/azure_get.sh [BUILD_DIR]   (default: build)
# env:   CONCURRENCY (16), ROUNDS (3), N_1M (128), N_64K (1024)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
bench=$build/tests/bench/azure_get_bench
[ -x "$bench" ] || { echo "build first: $bench missing" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time missing: apt-get install time" >&2; exit 1; }
conc=${CONCURRENCY:-16}
rounds=${ROUNDS:-3}
n1m=${N_1M:-128}
n64k=${N_64K:-1024}
. "$here/tests/azure/azurite.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/sb-azbench.XXXXXX")
trap 'azurite_stop; rm -rf "$work"' EXIT
azurite_install
azurite_start "$work/azurite" bench || exit 1
azurite_env
sas=$(python3 "$AZURITE_SIGNER" sas "$AZURITE_ACCOUNT" "$AZURITE_KEY")
"$bench" --container bench --prefix 1m --count "$n1m" --size 1048576 --put --verify >/dev/null
"$bench" --container bench --prefix 64k --count "$n64k" --size 65536 --put --verify >/dev/null

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
echo "azurite $AZURITE_VERSION (node $(node --version)), $(curl --version | head -1 | cut -d' ' -f1-2), concurrency $conc, best of $rounds rounds (wall: the fastest; CPU: its own round)"
printf '| objects | client | MB/s | req/s | client CPU s (user+sys) | CPU us/request |\n|---|---|---|---|---|---|\n'
# run WHAT COUNT BYTES CMD...: the best round as "MB/s req/s cpu"
run () {
    local count=$1 bytes=$2 best="" r
    shift 2
    for _ in $(seq 1 "$rounds"); do
        /usr/bin/time -f '%e %U %S' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
        r=$(awk -v n="$count" -v b="$bytes" '{ printf "%.1f %.1f %.2f %.0f %.4f", n*b/1e6/$1, n/$1, $2+$3, ($2+$3)*1e6/n, $1 }' "$work/time")
        if [ -z "$best" ] || awk -v a="${r##* }" -v b="${best##* }" 'BEGIN { exit !(a + 0 < b + 0) }'; then best=$r; fi
    done
    echo "$best"
}
for size in 1m 64k; do
    bytes=$([ $size = 1m ] && echo 1048576 || echo 65536)
    count=$([ $size = 1m ] && echo "$n1m" || echo "$n64k")
    for ((i = 0; i < count; i++)); do
        printf 'url = "%s/bench/%s/obj-%05d?%s"\noutput = "/dev/null"\n' "$AZURITE_ENDPOINT" "$size" "$i" "$sas"
    done >"$work/curl-$size.cfg"
    c=$(run "$count" "$bytes" curl -s --no-progress-meter --fail -Z --parallel-max "$conc" -K "$work/curl-$size.cfg")
    k=$(run "$count" "$bytes" "$bench" --container bench --prefix "$size" --count "$count" --size "$bytes" --concurrency "$conc")
    s=$(AZURE_STORAGE_CONNECTION_STRING="BlobEndpoint=$AZURITE_ENDPOINT;SharedAccessSignature=$sas" \
        run "$count" "$bytes" "$bench" --container bench --prefix "$size" --count "$count" --size "$bytes" --concurrency "$conc")
    for row in "curl -Z (SAS):$c" "shardbench (Shared Key):$k" "shardbench (SAS):$s"; do
        echo "${row#*:}" | awk -v o="$count x $size" -v w="${row%%:*}" '{ printf "| %s | %s | %s | %s | %s | %s |\n", o, w, $1, $2, $3, $4 }'
    done
done
