#!/usr/bin/env bash
# The README's second command: install what is missing, build, and run every
# test (Check unit suites and integration tests with real processes).
# CI (.ci/run) calls this with CI=true: warnings are errors there.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/deploy/install-deps.sh" --tests || exit 1

build="$here/build"
werror=false
[ "${CI:-}" = "true" ] && werror=true
if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$here" -Dwerror=$werror -Dtests=true || exit 1
else
    meson configure "$build" -Dwerror=$werror -Dtests=true || exit 1
fi
meson compile -C "$build" || exit 1

meson test -C "$build" --print-errorlogs --num-processes 2
rc=$?

# One closing line that CI understands, counted from meson's own log.
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
with open(sys.argv[1]) as f:
    for line in f:
        r = json.loads(line).get("result", "")
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit $rc
