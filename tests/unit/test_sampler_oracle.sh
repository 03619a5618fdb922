#!/bin/bash
# The sampler's DLIO kinds against tests/dlio_model.py, which needs
# python3-numpy: use Debian's interpreter when the first python3 on PATH
# lacks numpy. Usage: test_sampler_oracle.sh SAMPLER_DUMP
set -u
here=$(cd "$(dirname "$0")" && pwd)
PY=python3
"$PY" -c 'import numpy' 2>/dev/null || PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
    echo "FAIL: python3-numpy is needed (deploy/install-deps.sh --tests installs it)"
    exit 1
fi
exec "$PY" "$here/test_sampler_oracle.py" "$1"
