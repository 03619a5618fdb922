#!/usr/bin/env bash
# docs/DLIO.md's key table names every key used in an upstream workload file
# : each MLPerf Storage and DLIO workload YAML in
# ../shared/upstream-workloads (relative to the repository root;
# $SB_UPSTREAM_WORKLOADS overrides it; skipped, exit 77, when absent) is
# flattened to dotted keys with python3-yaml, and every key must be named in
# the tables of the "## Configuration keys" section (a wildcard such as
# `storage.storage_options.*` does not count; rules in
# tests/integration/upstream_workloads.py, documented_keys). The failure lists
# each missing key with how many files use it and one of them.
here=$(cd "$(dirname "$0")" && pwd)
upstream=${SB_UPSTREAM_WORKLOADS:-$here/../../../shared/upstream-workloads}
if [ ! -d "$upstream" ]; then
    echo "SKIP: no upstream workload folder ($upstream); set SB_UPSTREAM_WORKLOADS"
    exit 77
fi
python3 -c 'import yaml' 2>/dev/null || { echo "FAIL - python3-yaml is missing (deploy/install-deps.sh --tests)"; exit 1; }
python3 "$here/upstream_workloads.py" keys "$upstream" "$here/../../docs/DLIO.md"
