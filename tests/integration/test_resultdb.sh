#!/usr/bin/env bash
# The result database under another process's lock: a real coordinator and
# workers, a python3 sqlite3 connection holding BEGIN EXCLUSIVE on the same
# file for 6 s during training. Rows wait for the lock in the
# coordinator's writer thread: the epochs' AU and barriers are not touched,
# no timeseries row is lost (their samples add up to the epochs'), and the
# run and its summary say the database was locked. A lock held past
# --db-lock-timeout fails the run, naming the file.
. "$(dirname "$0")/lib.sh"

# 4 ranks on 2 workers (step barriers through the coordinator), 32 samples
# and 8 steps of 0.4 s per rank and epoch: ~3.2 s an epoch, AU near 100%.
# The coordinator commits rows about once a second, so a lock taken while
# it lets go lands inside an epoch, where barriers are waiting.
syn="dataset.data_folder=synthetic://lock dataset.num_files_train=128 dataset.record_length_bytes=4096
     dataset.record_length_bytes_stdev=0 reader.batch_size=4 train.computation_time=0.4 metric.au=0.7
     --accelerators 4 --local 2"

# hold DB locked for SECONDS from 0.4 s after its train run finished epoch 1;
# the file 'locked' holds the time the lock was taken
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
            time.sleep(0.4)     # into epoch 2
            break
    except sqlite3.Error:
        pass
    time.sleep(0.05)
# no busy handler: try every 2 ms, so that a coordinator that lets go of
# the lock only for moments still loses it
con = sqlite3.connect(db, isolation_level=None, timeout=0)
for _ in range(15000):
    try:
        con.execute("BEGIN EXCLUSIVE")
        break
    except sqlite3.OperationalError:
        time.sleep(0.002)
else:
    sys.exit("cannot lock " + db)
open("locked", "w").write("%.3f\n" % time.time())
time.sleep(secs)
con.execute("COMMIT")
con.close()
PY
}

# --- a 6 s lock (longer than the 5 s busy timeout rows once had): late rows,
# none lost, the run unaffected
rm -f locked
# shellcheck disable=SC2086
( timeout 120 "$SHARDBENCH" run $syn train.epochs=3 --db a.db >a.out 2>a.err; echo $? >a.rc ) &
coord=$!
hold_lock a.db 6
wait $coord
expect_eq "6 s lock: the lock was taken during training (2 s or more before its end)" \
    "$(q a.db "SELECT max(finished_at) - $(cat locked 2>/dev/null || echo 1e12) >= 2 FROM rank_epochs")" 1
expect_eq "6 s lock: exit status" "$(cat a.rc)" 0
expect_eq "6 s lock: run succeeded and passed" "$(q a.db "SELECT status, passed FROM runs WHERE kind = 'train'")" "succeeded|1"
expect_eq "6 s lock: every epoch recorded" "$(q a.db "SELECT count(*), sum(samples) FROM epochs WHERE run_id = 1")" "3|384"
expect_eq "6 s lock: every rank-epoch recorded" "$(q a.db "SELECT count(*) FROM rank_epochs WHERE run_id = 1")" 12
expect_eq "6 s lock: no timeseries row lost (their samples add up to the epochs')" \
    "$(q a.db "SELECT (SELECT sum(samples) FROM timeseries WHERE run_id = 1), (SELECT sum(samples) FROM rank_epochs WHERE run_id = 1)")" \
    "384|384"
expect_eq "6 s lock: every epoch's AU above the threshold (no stalled barrier)" \
    "$(q a.db "SELECT min(au_mean) >= 0.7 FROM epochs WHERE run_id = 1")" 1
expect_eq "6 s lock: no barrier waited for the database (p99 < 1 s)" \
    "$(q a.db "SELECT max(barrier_p99_ms) < 1000 FROM epochs WHERE run_id = 1")" 1
expect_eq "6 s lock: the run records the wait (5 to 12 s)" \
    "$(q a.db "SELECT db_locked_s BETWEEN 5 AND 12 FROM runs WHERE id = 1")" 1
expect_contains "6 s lock: logged while locked" a.err "result database a.db is locked by another process"
expect_contains "6 s lock: logged when released" a.err "result database a.db is writable again after"
expect_contains "6 s lock: the summary says so" a.out "note: the result database was locked by another process for"
"$SHARDBENCH" report 1 --db a.db >a-report.out 2>&1
expect_contains "6 s lock: report says so" a-report.out "results were written late (timing was not affected)"

# --- an undisturbed run records no wait
# shellcheck disable=SC2086
sb run $syn train.epochs=1 --db b.db
expect_eq "no lock: exit" "$SB_RC" 0
expect_eq "no lock: db_locked_s 0" "$(q b.db "SELECT db_locked_s FROM runs")" "0.0"
expect_eq "no lock: no note" "$(grep -c 'note: the result database' sb.out)" 0

# --- a row SQLite refuses (a trigger that aborts every timeseries insert)
# fails the run, naming the file and the statement: a write's result is
# never ignored
cp b.db r.db
q r.db "CREATE TRIGGER no_rows BEFORE INSERT ON timeseries BEGIN SELECT RAISE(ABORT, 'no more rows'); END"
# shellcheck disable=SC2086
sb run $syn train.epochs=1 --db r.db
expect_eq "refused row: exit status" "$SB_RC" 1
expect_contains "refused row: the error names the file, the cause and the statement" sb.err \
    "shardbench: error: result database r.db: a row was not written: no more rows (INSERT INTO timeseries"
expect_eq "refused row: the run is not recorded as succeeded" \
    "$(q r.db "SELECT status FROM runs WHERE id = (SELECT max(id) FROM runs)")" failed

# --- a lock past --db-lock-timeout fails the run, loudly, and soon
rm -f locked
start=$(date +%s)
# shellcheck disable=SC2086
( timeout 120 "$SHARDBENCH" run $syn train.epochs=20 --db-lock-timeout 2 --db c.db >c.out 2>c.err; echo $? >c.rc ) &
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

# --- a damaged page: no command reads every page first (PRAGMA quick_check
# takes seconds per GB); the header and schema are checked when opened, and
# the query that meets the damage says so, naming the file. Every page of
# read_latency (which `runs` does not read and `report` does) overwritten
# with 0xA5 bytes.
cp a.db k.db
python3 - k.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
pages = [r[0] for r in c.execute("SELECT pageno FROM dbstat WHERE name = 'read_latency'")]
size = c.execute("PRAGMA page_size").fetchone()[0]
c.close()
assert pages, "read_latency has no page"
with open(sys.argv[1], "r+b") as f:
    for p in pages:
        f.seek((p - 1) * size)
        f.write(b"\xa5" * size)
PY
sb runs --db k.db
expect_eq "damaged page: runs exit status" "$SB_RC" 0
expect_eq "damaged page: runs lists every run" "$(grep -cE '^ +[0-9]+ train ' sb.out)" "$(q a.db "SELECT count(*) FROM runs")"
expect_eq "damaged page: runs read no page check" "$(grep -c 'quick_check' sb.err)" 0
sb report --db k.db
expect_eq "damaged page: report exit status" "$SB_RC" 2
expect_contains "damaged page: report names the file and the damage" sb.err \
    "k.db: the result database is corrupt where this reads (database disk image is malformed)"
# after an unclean stop (a run of this host left 'running' by a process
# that is gone) a command that writes checks every page first: refused
cp k.db u.db
sqlite3 u.db "UPDATE runs SET status = 'running', coordinator_host = '$(hostname)', coordinator_pid = 2147483646
              WHERE id = (SELECT max(id) FROM runs)"
# shellcheck disable=SC2086
sb run $syn train.epochs=1 --db u.db
expect_eq "unclean stop, damaged page: run exit status" "$SB_RC" 2
expect_contains "unclean stop: every page checked" sb.err "a run was left 'running' by a coordinator that is gone: checking every page"
expect_contains "unclean stop, damaged page: run names the file" sb.err "shardbench: error: u.db: the result database is corrupt ("
expect_eq "unclean stop, damaged page: nothing started (no listing, no worker)" "$(grep -cE 'listed|derived|catalog|joined' sb.err)" 0
sb runs --db u.db
expect_eq "unclean stop, damaged page: runs still lists" "$SB_RC|$(grep -cE '^ +[0-9]+ train ' sb.out)" \
    "0|$(q a.db "SELECT count(*) FROM runs")"
expect_contains "unclean stop, damaged page: runs says it read it as it is" sb.err "read as it is, its stale runs not marked"
cp a.db t.db
truncate -s $(( $(stat -c %s a.db) / 2 )) t.db
# shellcheck disable=SC2086
sb run $syn train.epochs=1 --db t.db
expect_eq "truncated: run exit status" "$SB_RC" 2
expect_contains "truncated: run names the file" sb.err "shardbench: error: t.db: the result database is corrupt ("
expect_eq "truncated: nothing started" "$(grep -cE 'listed|catalog|joined' sb.err)" 0
printf 'not a database, not at all: %0100d' 0 >n.db
sb report --db n.db
expect_eq "not a database: report exit status" "$SB_RC" 2
expect_contains "not a database: named" sb.err "n.db: the result database is not a SQLite database, or its header is damaged"

# --- report, compare and export read a database they cannot write (a file
# of mode 444 in a folder of mode 555; as root, read as user nobody)
as_reader () {
    if [ "$(id -u)" = 0 ]; then setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; else "$@"; fi
}
chmod 755 "$SCRATCH"
mkdir ro
cp a.db ro/r.db
cp a.db ro/v7.db
q ro/v7.db "$(schema_v7_sql) PRAGMA user_version = 7"
cp ro/v7.db v7w.db
chmod 444 ro/r.db ro/v7.db
chmod 555 ro
as_reader "$SHARDBENCH" report 1 --db ro/r.db >ro.out 2>ro.err
expect_eq "read-only: report exit" $? 0
expect_contains "read-only: report shows the run" ro.out "shardbench train run 1"
expect_contains "read-only: report shows its note" ro.out "note: the result database was locked"
as_reader "$SHARDBENCH" report 1 --json --db ro/r.db >ro.json 2>ro.err
expect_eq "read-only: report --json exit" $? 0
expect_eq "read-only: report --json parses" "$(python3 -c 'import json; print(json.load(open("ro.json"))["shardbench"]["run_id"])' 2>&1)" 1
as_reader "$SHARDBENCH" report 1 --csv ranks --db ro/r.db >ro.csv 2>ro.err
expect_eq "read-only: report --csv ranks: header + 12 rows" "$?:$(wc -l <ro.csv)" "0:13"
as_reader "$SHARDBENCH" report 1 --html - --db ro/r.db >ro.html 2>ro.err
expect_eq "read-only: report --html exit" $? 0
as_reader "$SHARDBENCH" compare 1 1 --db ro/r.db >ro-cmp.out 2>ro.err
expect_eq "read-only: compare exit" $? 0
expect_eq "read-only: nothing written beside it" "$(ls ro | tr '\n' ' ')" "r.db v7.db "
as_reader "$SHARDBENCH" report 1 --db ro/v7.db >v7.out 2>v7.err
expect_eq "read-only, older schema: exit" $? 2
expect_contains "read-only, older schema: says it needs upgrading with write access" v7.err \
    "shardbench report: ro/v7.db: result database schema version 7 must be upgraded to version 17 before this shardbench can read it, which needs write access"
chmod 755 ro
# a writable version 7 database is upgraded in place; its runs keep NULL
sb report 1 --db v7w.db
expect_eq "version 7 upgraded: exit" "$SB_RC" 0
expect_eq "version 7 upgraded: version, old runs NULL" \
    "$(q v7w.db "PRAGMA user_version"):$(q v7w.db "SELECT count(*) FROM run_workers WHERE clock_offset_s IS NULL"):$(
    q v7w.db "SELECT count(*) FROM runs WHERE train_au_mean_percentage IS NOT NULL")" "17:2:0"
expect_eq "version 7 upgraded: residency columns, old runs 0 checked and NULL" \
    "$(q v7w.db "SELECT count(*), sum(checked_bytes), count(resident_fraction), count(from_memory) FROM epochs")" \
    "$(q v7w.db "SELECT count(*) FROM epochs")|0|0|0"
# version 9 -> 10: runs gains workflow and DLIO's eval_* figures (NULL for the old
# runs), the evals and eval_ranks tables are created empty
cp a.db v9.db
q v9.db "$(schema_v9_sql) PRAGMA user_version = 9"
sb report 1 --db v9.db
expect_eq "version 9 upgraded: exit" "$SB_RC" 0
expect_eq "version 9 upgraded: version, old runs NULL workflow and eval figures, empty evaluation tables" \
    "$(q v9.db "PRAGMA user_version"):$(q v9.db "SELECT count(*) FROM runs WHERE workflow IS NULL AND eval_au_mean_percentage IS NULL AND eval_io_stdev_MB_per_second IS NULL"):$(q v9.db "SELECT count(*) FROM runs"):$(q v9.db "SELECT (SELECT count(*) FROM evals) + (SELECT count(*) FROM eval_ranks)")" \
    "17:$(q a.db "SELECT count(*) FROM runs"):$(q a.db "SELECT count(*) FROM runs"):0"

finish
