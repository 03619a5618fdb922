#!/usr/bin/env bash
# The result database under another process's lock: a real coordinator and
# workers, a python3 sqlite3 connection holding BEGIN EXCLUSIVE on the same
# file for a few seconds during training. Rows wait for the lock in the
# coordinator's writer thread: the epochs' AU and barriers are not touched,
# no timeseries row is lost (their samples add up to the epochs'), and the
# run and its summary say the database was locked. A lock held past
# --db-lock-timeout fails the run, naming the file.
. "$(dirname "$0")/lib.sh"

# 4 ranks on 2 workers (step barriers through the coordinator), 64 samples
# and 16 steps of 0.05 s per rank and epoch: ~0.8 s an epoch, AU near 100%
syn="dataset.data_folder=synthetic://lock dataset.num_files_train=256 dataset.record_length_bytes=4096
     dataset.record_length_bytes_stdev=0 reader.batch_size=4 train.computation_time=0.05 metric.au=0.7
     --accelerators 4 --local 2"

# hold DB locked for SECONDS once its train run has finished epoch 1; the
# file 'locked' appears when the lock is taken
hold_lock () {  # DB SECONDS
    python3 - "$1" "$2" <<'PY'
import sqlite3, sys, time
db, secs = sys.argv[1], float(sys.argv[2])
for _ in range(600):
    try:
        c = sqlite3.connect(db, timeout=1)
        n = c.execute("SELECT count(*) FROM epochs e JOIN runs r ON r.id = e.run_id WHERE r.kind = 'train'").fetchone()[0]
        c.close()
        if n >= 1:
            break
    except sqlite3.Error:
        pass
    time.sleep(0.05)
con = sqlite3.connect(db, isolation_level=None, timeout=30)
con.execute("BEGIN EXCLUSIVE")
open("locked", "w").write("%.3f\n" % time.time())
time.sleep(secs)
con.execute("COMMIT")
con.close()
PY
}

# --- a 4 s lock: late rows, the run unaffected
rm -f locked
# shellcheck disable=SC2086
( timeout 120 "$SHARDBENCH" run $syn train.epochs=10 --db a.db >a.out 2>a.err; echo $? >a.rc ) &
coord=$!
hold_lock a.db 4
wait $coord
expect_eq "4 s lock: the lock was taken during the run" "$(test -s locked && echo yes)" yes
expect_eq "4 s lock: exit status" "$(cat a.rc)" 0
expect_eq "4 s lock: run succeeded and passed" "$(q a.db "SELECT status, passed FROM runs WHERE kind = 'train'")" "succeeded|1"
expect_eq "4 s lock: every epoch recorded" "$(q a.db "SELECT count(*), sum(samples) FROM epochs WHERE run_id = 1")" "10|2560"
expect_eq "4 s lock: every rank-epoch recorded" "$(q a.db "SELECT count(*) FROM rank_epochs WHERE run_id = 1")" 40
expect_eq "4 s lock: no timeseries row lost (their samples add up to the epochs')" \
    "$(q a.db "SELECT (SELECT sum(samples) FROM timeseries WHERE run_id = 1), (SELECT sum(samples) FROM rank_epochs WHERE run_id = 1)")" \
    "2560|2560"
expect_eq "4 s lock: every epoch's AU above the threshold (no stalled barrier)" \
    "$(q a.db "SELECT min(au_mean) >= 0.7 FROM epochs WHERE run_id = 1")" 1
expect_eq "4 s lock: no barrier waited for the database (p99 < 1 s)" \
    "$(q a.db "SELECT max(barrier_p99_ms) < 1000 FROM epochs WHERE run_id = 1")" 1
expect_eq "4 s lock: the run records the wait (3 to 10 s)" \
    "$(q a.db "SELECT db_locked_s BETWEEN 3 AND 10 FROM runs WHERE id = 1")" 1
expect_contains "4 s lock: logged while locked" a.err "result database a.db is locked by another process"
expect_contains "4 s lock: logged when released" a.err "result database a.db is writable again after"
expect_contains "4 s lock: the summary says so" a.out "note: the result database was locked by another process for"
"$SHARDBENCH" report 1 --db a.db >a-report.out 2>&1
expect_contains "4 s lock: report says so" a-report.out "results were written late (timing was not affected)"

# --- an undisturbed run records no wait
# shellcheck disable=SC2086
sb run $syn train.epochs=2 --db b.db
expect_eq "no lock: exit" "$SB_RC" 0
expect_eq "no lock: db_locked_s 0" "$(q b.db "SELECT db_locked_s FROM runs")" "0.0"
expect_eq "no lock: no note" "$(grep -c 'note: the result database' sb.out)" 0

# --- a lock past --db-lock-timeout fails the run, loudly, and soon
rm -f locked
start=$(date +%s)
# shellcheck disable=SC2086
( timeout 120 "$SHARDBENCH" run $syn train.epochs=30 --db-lock-timeout 2 --db c.db >c.out 2>c.err; echo $? >c.rc ) &
coord=$!
hold_lock c.db 8
wait $coord
expect_eq "long lock: exit status 1" "$(cat c.rc)" 1
expect_contains "long lock: the error names the file and the limit" c.err \
    "result database c.db was locked by another process for more than 2 s (--db-lock-timeout): results can no longer be written"
expect_contains "long lock: workers told" c.err "run aborted by the coordinator"
expect_eq "long lock: the run did not finish as succeeded" "$(q c.db "SELECT status != 'succeeded' FROM runs WHERE kind = 'train'")" 1
expect_eq "long lock: ended with the lock, not 30 epochs later (< 60 s)" "$(( $(date +%s) - start < 60 ))" 1

"$SHARDBENCH" run --db-lock-timeout x >/dev/null 2>d.err
expect_eq "--db-lock-timeout needs a number" $? 2

finish
