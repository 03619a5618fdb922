#!/usr/bin/env bash
# The coordinator's lifecycle: signals in every phase (listing, waiting for
# workers, training), file-descriptor limits, join timeouts, bind addresses.
# Real processes and real SQLite files; exact statuses, messages and rows.
. "$(dirname "$0")/lib.sh"

SYN="storage.storage_type=synthetic"

cleanup () {
    local p
    for p in $(jobs -p); do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

now () { date +%s.%N; }
since () { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# expect_under WHAT SECONDS LIMIT
expect_under () {
    if awk -v t="$2" -v m="$3" 'BEGIN { exit !(t < m) }'; then pass "$1 ($2 s)"; else fail "$1: $2 s, limit $3 s"; fi
}
# wait_for FILE TEXT [SECONDS]: 0 when TEXT shows up in FILE in time
wait_for () {
    local end=$((SECONDS + ${3:-30}))
    until grep -qF -- "$2" "$1" 2>/dev/null; do
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.02
    done
}
# bg NAME ARGS...: shardbench in the background, output in NAME.out/.err, pid in BG
bg () {
    local name=$1
    shift
    "$SHARDBENCH" "$@" >"$name.out" 2>"$name.err" &
    BG=$!
}
# stop_after SIG PID NAME: send SIG, wait, check the time; status in RC, seconds in TOOK
stop_after () {
    local t0
    kill -"$1" "$2"
    t0=$(now)
    wait "$2"
    RC=$?
    TOOK=$(since "$t0")
}

# ------------------------------------------------------------------ signals
# A 20M-object synthetic catalog takes far longer than a second to list:
# SIGINT after 1 s stops it at once, exit 130, no catalog recorded.
bg cat-int catalog $SYN dataset.num_files_train=20000000 --db cat.db --progress off
sleep 1
stop_after INT "$BG" cat-int
expect_eq "SIGINT while listing: exit status 130" "$RC" 130
expect_under "SIGINT while listing: stopped promptly" "$TOOK" 3
expect_contains "SIGINT while listing: says so" cat-int.err \
    "shardbench: error: interrupted by SIGINT while listing the dataset (listing interrupted; no catalog was recorded)"
expect_eq "SIGINT while listing: no catalog, no objects" "$(q cat.db "SELECT count(*) FROM catalogs") $(q cat.db "SELECT count(*) FROM objects")" "0 0"

# SIGTERM the same way, while the synthetic listing of a run (before workers)
bg cat-term run $SYN dataset.num_files_train=20000000 --db cat.db --progress off
sleep 1
stop_after TERM "$BG" cat-term
expect_eq "SIGTERM while listing: exit status 143" "$RC" 143
expect_under "SIGTERM while listing: stopped promptly" "$TOOK" 3
expect_contains "SIGTERM while listing: says so" cat-term.err "interrupted by SIGTERM while listing the dataset"
expect_eq "SIGTERM while listing: no catalog, no run" "$(q cat.db "SELECT count(*) FROM catalogs") $(q cat.db "SELECT count(*) FROM runs")" "0 0"

# SIGTERM while waiting for workers that never come
bg wait-term run $SYN dataset.num_files_train=64 --accelerators 2 --workers 2 --bind 'tcp://127.0.0.1:*' --db w.db --progress off
wait_for wait-term.err "waiting for 2 workers"
stop_after TERM "$BG" wait-term
expect_eq "SIGTERM while waiting for workers: exit status 143" "$RC" 143
expect_under "SIGTERM while waiting for workers: stopped promptly" "$TOOK" 3
expect_contains "SIGTERM while waiting for workers: says so" wait-term.err \
    "shardbench: error: interrupted by SIGTERM while waiting for 2 workers to join tcp://127.0.0.1:"

# SIGHUP during a run: a clean stop like SIGTERM, summary, run recorded
bg hup run $SYN dataset.num_files_train=64 reader.batch_size=4 train.epochs=200 train.computation_time=0.02 \
    --local 2 --accelerators 2 --db hup.db --progress off
wait_for hup.err "epoch 2/200"
stop_after HUP "$BG" hup
expect_eq "SIGHUP during a run: exit status 129" "$RC" 129
expect_under "SIGHUP during a run: stopped promptly" "$TOOK" 3
expect_contains "SIGHUP during a run: summary printed" hup.out "status: aborted after"
run=$(q hup.db "SELECT max(id) FROM runs")
expect_eq "SIGHUP during a run: recorded aborted" \
    "$(q hup.db "SELECT status, error LIKE 'interrupted by SIGHUP while training epoch %' FROM runs WHERE id = $run")" "aborted|1"
expect_eq "SIGHUP during a run: error row" "$(q hup.db "SELECT count(*) FROM errors WHERE run_id = $run AND op = 'run' AND message LIKE 'interrupted by SIGHUP%'")" 1
expect_contains "SIGHUP during a run: workers told" hup.err "run aborted by the coordinator: interrupted by SIGHUP"

finish
