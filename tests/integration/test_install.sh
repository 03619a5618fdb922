#!/usr/bin/env bash
# `meson install` into a DESTDIR: the binaries, the systemd unit (naming the
# installed worker), the Slurm script, the worker settings, the presets and
# the documentation land at the exact paths deploy/meson.build gives, and
# the installed binaries run. Needs SB_BUILD_ROOT (the build folder),
# SB_SOURCE_ROOT, SB_VERSION and the install folders SB_BINDIR, SB_UNITDIR,
# SB_DATADIR and SB_DOCDIR (absolute, from meson).
. "$(dirname "$0")/lib.sh"
for v in SB_BUILD_ROOT SB_SOURCE_ROOT SB_VERSION SB_BINDIR SB_UNITDIR SB_DATADIR SB_DOCDIR; do
    [ -n "${!v:-}" ] || { echo "test_install.sh: $v is not set (run it through meson test)"; exit 1; }
done

dest="$SCRATCH/root"
if meson install -C "$SB_BUILD_ROOT" --destdir "$dest" --no-rebuild >install.out 2>&1; then
    pass "meson install --destdir exits 0"
else
    fail "meson install --destdir failed:"; tail -20 install.out | sed 's/^/    /'
fi

# expect_file WHAT PATH [MODE]: a regular file, and its permission bits
expect_file () {
    if [ -f "$2" ]; then
        pass "$1 installed at ${2#"$dest"}"
        [ -z "${3:-}" ] || expect_eq "$1 mode" "$(stat -c %a "$2")" "$3"
    else
        fail "$1: ${2#"$dest"} is missing"
    fi
}

bin="$dest$SB_BINDIR"
expect_file "shardbench" "$bin/shardbench" 755
expect_file "shardbench-worker" "$bin/shardbench-worker" 755
expect_file "dlio_benchmark" "$bin/dlio_benchmark" 755
expect_eq "only the three binaries in bindir" "$(ls "$bin" | tr '\n' ' ')" "dlio_benchmark shardbench shardbench-worker "
expect_eq "installed shardbench --version" "$("$bin/shardbench" --version 2>&1 | head -1)" "shardbench $SB_VERSION"
expect_eq "installed shardbench-worker --version" "$("$bin/shardbench-worker" --version 2>&1 | head -1)" \
    "shardbench-worker $SB_VERSION"

unit="$dest$SB_UNITDIR/shardbench-worker.service"
expect_file "systemd unit" "$unit" 644
expect_contains "the unit starts the installed worker" "$unit" "ExecStart=$SB_BINDIR/shardbench-worker --coordinator"
expect_eq "the unit is the source's but for the worker's path" \
    "$(sed "s|$SB_BINDIR/shardbench-worker|/usr/local/bin/shardbench-worker|" "$unit" | cmp - "$SB_SOURCE_ROOT/deploy/systemd/shardbench-worker.service" && echo same)" same
expect_file "worker settings" "$dest$SB_DATADIR/shardbench/systemd/worker.env" 644
expect_file "Slurm batch script" "$dest$SB_DATADIR/shardbench/slurm/shardbench.sbatch" 755

doc="$dest$SB_DOCDIR"
expect_file "README.md" "$doc/README.md" 644
expect_file "deploy/README.md as DEPLOY.md" "$doc/DEPLOY.md" 644
for f in "$SB_SOURCE_ROOT"/docs/*.md; do
    expect_file "docs/$(basename "$f")" "$doc/$(basename "$f")" 644
done
expect_eq "no meson.build among the docs" "$(find "$doc" -name meson.build | wc -l)" 0

presets=0
for f in "$SB_SOURCE_ROOT"/coordinator/workloads/*.yaml; do
    if cmp -s "$f" "$dest$SB_DATADIR/shardbench/workloads/$(basename "$f")"; then
        presets=$((presets + 1))
    else
        fail "preset $(basename "$f") is not installed as it is"
    fi
done
expect_eq "every preset installed" "$presets" "$(ls "$SB_SOURCE_ROOT"/coordinator/workloads/*.yaml | wc -l)"
# every preset built into shardbench is a file installed
missing=0
for name in $("$bin/shardbench" workloads 2>/dev/null | awk 'NF { print $1 }'); do
    [ -f "$dest$SB_DATADIR/shardbench/workloads/$name.yaml" ] || { missing=$((missing + 1)); echo "    no file for $name"; }
done
expect_eq "every built-in preset has its installed file" "$missing" 0

finish
