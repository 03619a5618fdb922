# Helpers for the integration tests: real shardbench processes, real SQLite
# files, exact assertions. Source it; it sets `set -u` and a scratch folder.
set -u
: "${SHARDBENCH:?path of the shardbench binary}"
: "${SHARDBENCH_WORKER:?path of the shardbench-worker binary}"
export SHARDBENCH_WORKER

# this folder, absolute (before the cd below): see py_lib
SB_INTEGRATION_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/shardbench-test.XXXXXX")
cd "$SCRATCH" || exit 1
FAILS=0
PASSES=0
trap 'rm -rf "$SCRATCH"' EXIT

# SB_LO: a loopback address of this test's own (127.0.0.0/8 is all loopback;
# made of the script's pid, unique among the tests running at once, and never
# 127.0.0.x). Coordinators here bind it, and workers that wait for a
# coordinator wait on it: tests run in parallel, and a worker of one test
# waiting on a port another test's coordinator then binds (both picked by
# the kernel on 127.0.0.1) would join the wrong run.
SB_LO=127.$(( ($$ >> 16) % 128 + 64 )).$(( ($$ >> 8) & 255 )).$(( $$ & 255 ))

pass () { PASSES=$((PASSES + 1)); echo "ok - $*"; }
fail () { FAILS=$((FAILS + 1)); echo "FAIL - $*"; }

# expect_eq WHAT ACTUAL EXPECTED
expect_eq () {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', expected '$3'"; fi
}

# expect_contains WHAT FILE TEXT
expect_contains () {
    if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1: '$3' not in $2:"; sed 's/^/    /' "$2" | tail -20; fi
}

# py_lib PYTHON ARGS...: run PYTHON with this folder's Python modules
# (tfrecord_crc.py) importable, writing no __pycache__ into the source tree
py_lib () { PYTHONPATH="$SB_INTEGRATION_DIR" PYTHONDONTWRITEBYTECODE=1 "$@"; }

# npm_pinned DIR LOG NAME@VERSION...: the pinned npm packages in DIR (an npm
# cache folder, e.g. under ~/.cache/shardbench/npm), installed unless they
# are there; npm's output into LOG. Tests run in parallel and several share a
# folder: one installer at a time (flock on DIR/.install.lock), the others
# wait and find the packages installed. Status 0 once all are there.
npm_pinned () {
    local dir=$1 log=$2 lockfd rc=0
    shift 2
    _npm_pinned_have () {
        local spec
        for spec in "$@"; do
            [ "$(node -p 'require(process.argv[1]).version' "$dir/node_modules/${spec%@*}/package.json" 2>/dev/null)" \
                = "${spec##*@}" ] || return 1
        done
    }
    _npm_pinned_have "$@" && return 0
    mkdir -p "$dir" || return 1
    exec {lockfd}>"$dir/.install.lock"
    flock -w 600 "$lockfd" || { echo "timed out waiting for $dir/.install.lock" >"$log"; exec {lockfd}>&-; return 1; }
    if ! _npm_pinned_have "$@"; then
        npm install --prefix "$dir" --no-audit --no-fund --no-update-notifier --loglevel=error "$@" >"$log" 2>&1 \
            && _npm_pinned_have "$@" || rc=1
    fi
    exec {lockfd}>&-
    return "$rc"
}

# q DB SQL: one query, result on stdout
q () { sqlite3 -batch -noheader "$1" "$2"; }

# sb ARGS...: run shardbench with a time limit, output in sb.out/sb.err, status in SB_RC
sb () {
    timeout 120 "$SHARDBENCH" "$@" >sb.out 2>sb.err
    SB_RC=$?
}

finish () {
    echo "$PASSES passed, $FAILS failed"
    [ "$FAILS" -eq 0 ]
}

# coordinator_endpoint ERRFILE: the endpoint a coordinator started with
# --workers and --bind "tcp://$SB_LO:*" bound (from its log: no fixed port
# that something else may hold). Waits up to 30 s; prints nothing on failure.
# ERRFILE must not hold an earlier coordinator's log: remove it before the
# coordinator starts in the background (its redirection may come after this reads).
coordinator_endpoint () {
    local i
    for i in $(seq 1 300); do
        grep -q "waiting for " "$1" 2>/dev/null && break
        sleep 0.1
    done
    sed -n 's/.*`shardbench-worker --coordinator \([^ `]*\).*/\1/p' "$1" | head -1
}

# await_text FILE TEXT [SECONDS]: 0 once FILE holds TEXT (a fixed string),
# looked for every 20 ms; 1 after SECONDS (default 30)
await_text () {
    local end=$((SECONDS + ${3:-30}))
    until grep -qF -- "$2" "$1" 2>/dev/null; do
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.02
    done
}

# lease FILE: a process holds a write lease on FILE (an open for reading
# waits until it lets go, or the kernel breaks it after lease-break-time);
# sets HOLDER; 0 once the lease is held
lease () {
    rm -f lease.out
    python3 - "$1" >lease.out 2>lease.err <<'PY' &
import fcntl, os, signal, sys, time
signal.signal(signal.SIGIO, signal.SIG_IGN)     # keep the lease when a reader breaks it
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.fcntl(fd, 1024, fcntl.F_WRLCK)            # F_SETLEASE
print("leased", flush=True)
time.sleep(120)
PY
    HOLDER=$!
    await_text lease.out leased 10
}

# lease_breaking FILE: 0 once the lease on FILE is being broken, i.e. an
# open of it waits on the lease (/proc/locks: BREAKING, by FILE's inode);
# waits up to 30 s, status 1 after
lease_breaking () {
    local id end=$((SECONDS + 30))
    # shellcheck disable=SC2046,SC2183 # major, minor and inode: three words
    id=$(printf '%02x:%02x:%s' $(stat -c '%Hd %Ld %i' "$1")) || return 1
    until grep -qE "^[0-9]+: LEASE +BREAKING +[A-Z]+ +[0-9]+ $id " /proc/locks; do
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.02
    done
}

# readme_sql TEXT: the ```sql block of docs/RESULTS.md's "Example queries" (the
# queries the documentation shows, kept runnable by these tests) that
# contains TEXT, on stdout; nothing (and status 1) unless exactly one does.
# readme_sql --all: every block, each into queryNN.sql here; prints how many.
readme_sql () {
    python3 - "$(dirname "${BASH_SOURCE[0]}")/../../docs/RESULTS.md" "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = text.split("\n## Example queries\n", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"```sql\n(.*?)```", section, re.S)
if sys.argv[2] == "--all":
    for i, b in enumerate(blocks):
        open(f"query{i:02d}.sql", "w").write(b)
    print(len(blocks))
    sys.exit(0)
hits = [b for b in blocks if sys.argv[2] in b]
if len(hits) != 1:
    sys.exit(1)
sys.stdout.write(hits[0])
PY
}

# SQL taking a result database of this version back to schema 8 (drops the
# columns schema 9 added: schemas/results.sql), for the tests that upgrade
# older databases; schema_v7_sql goes on to 7 (version 8's columns); schema_v9_sql
# takes a database back to 9 (version 10's workflow and evaluation columns and tables);
# schema_v10_sql back to 10 (version 11's series table and runs columns)
# (the last column first: SQLite's DROP COLUMN of a table's last column cuts
# its text at the last comma before it, comments included)
# schema_v15_sql back to 15 (version 16's rank_epochs.compute_all_s and held_s);
# schema_v14_sql back to 14 (version 15's engine-neutral names: the errors
# table's codes and the latency histograms' columns as they were named);
# schema_v13_sql back to 13 (version 14's DLIO checkpoint figures);
# schema_v12_sql back to 12 (version 13's run_inputs, run_overrides and run_host_info);
# schema_v11_sql back to 11 (version 12's host_read_latency table)
schema_v15_sql () {
    echo "ALTER TABLE rank_epochs DROP COLUMN held_s; ALTER TABLE rank_epochs DROP COLUMN compute_all_s;"
}
schema_v14_sql () {
    schema_v15_sql
    echo "ALTER TABLE errors RENAME COLUMN service_code TO s3_code;"
    echo "ALTER TABLE errors RENAME COLUMN library_code TO curl_code;"
    echo "ALTER TABLE read_latency RENAME COLUMN bin_low_us TO bucket_low_us;"
    echo "ALTER TABLE read_latency RENAME COLUMN bin_high_us TO bucket_high_us;"
    echo "ALTER TABLE host_read_latency RENAME COLUMN bin_low_us TO bucket_low_us;"
    echo "ALTER TABLE host_read_latency RENAME COLUMN bin_high_us TO bucket_high_us;"
}
schema_v13_sql () {
    schema_v14_sql
    echo "ALTER TABLE checkpoints DROP COLUMN rank_sync; ALTER TABLE checkpoints DROP COLUMN dlio_gib_per_s;"
    echo "ALTER TABLE checkpoints DROP COLUMN dlio_duration_s; ALTER TABLE checkpoints DROP COLUMN dlio_bytes;"
}
schema_v12_sql () {
    schema_v13_sql
    echo "DROP TABLE run_inputs; DROP TABLE run_overrides; DROP TABLE run_host_info;"
}
schema_v11_sql () {
    schema_v12_sql
    echo "DROP TABLE host_read_latency;"
}
schema_v10_sql () {
    schema_v11_sql
    cat <<'SQL'
ALTER TABLE runs DROP COLUMN warmup; ALTER TABLE runs DROP COLUMN series_index;
ALTER TABLE runs DROP COLUMN series_id; ALTER TABLE runs DROP COLUMN label; DROP TABLE series;
SQL
}
schema_v9_sql () {
    schema_v10_sql
    cat <<'SQL'
ALTER TABLE runs DROP COLUMN workflow; ALTER TABLE runs DROP COLUMN eval_io_stdev_MB_per_second;
ALTER TABLE runs DROP COLUMN eval_io_mean_MB_per_second; ALTER TABLE runs DROP COLUMN eval_throughput_stdev_samples_per_second;
ALTER TABLE runs DROP COLUMN eval_throughput_mean_samples_per_second;
ALTER TABLE runs DROP COLUMN eval_au_meet_expectation; ALTER TABLE runs DROP COLUMN eval_au_stdev_percentage;
ALTER TABLE runs DROP COLUMN eval_au_mean_percentage;
DROP TABLE evals; DROP TABLE eval_ranks;
SQL
}
schema_v8_sql () {
    schema_v9_sql
    cat <<'SQL'
ALTER TABLE runs DROP COLUMN train_au_mean_percentage; ALTER TABLE runs DROP COLUMN train_au_stdev_percentage;
ALTER TABLE runs DROP COLUMN train_au_meet_expectation; ALTER TABLE runs DROP COLUMN train_throughput_mean_samples_per_second;
ALTER TABLE runs DROP COLUMN train_throughput_stdev_samples_per_second; ALTER TABLE runs DROP COLUMN train_io_mean_MB_per_second;
ALTER TABLE runs DROP COLUMN train_io_stdev_MB_per_second; ALTER TABLE runs DROP COLUMN record_size_bytes;
ALTER TABLE epochs DROP COLUMN train_au_percentage; ALTER TABLE epochs DROP COLUMN train_throughput_samples_per_second;
ALTER TABLE epochs DROP COLUMN train_io_MB_per_second; ALTER TABLE rank_epochs DROP COLUMN metric_steps;
ALTER TABLE rank_epochs DROP COLUMN metric_compute_s; ALTER TABLE rank_epochs DROP COLUMN metric_excluded_s;
ALTER TABLE rank_epochs DROP COLUMN metric_time_s; ALTER TABLE rank_epochs DROP COLUMN dlio_au_percentage;
ALTER TABLE rank_epochs DROP COLUMN dlio_throughput_samples_per_second;
ALTER TABLE rank_epochs DROP COLUMN resident_bytes; ALTER TABLE rank_epochs DROP COLUMN checked_bytes;
ALTER TABLE epochs DROP COLUMN resident_bytes; ALTER TABLE epochs DROP COLUMN checked_bytes;
ALTER TABLE epochs DROP COLUMN resident_fraction; ALTER TABLE epochs DROP COLUMN from_memory;
ALTER TABLE runs DROP COLUMN sampler; ALTER TABLE runs DROP COLUMN loader_threads;
ALTER TABLE epochs DROP COLUMN unused_files; ALTER TABLE epochs DROP COLUMN barrier_own_p50_ms;
ALTER TABLE epochs DROP COLUMN barrier_own_p99_ms;
SQL
}
schema_v7_sql () {
    schema_v8_sql
    echo "ALTER TABLE runs DROP COLUMN db_locked_s; ALTER TABLE run_workers DROP COLUMN clock_offset_s;"
    echo "ALTER TABLE run_workers DROP COLUMN clock_rtt_ms;"
}
