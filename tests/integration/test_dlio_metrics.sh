#!/usr/bin/env bash
# DLIO's metrics (lib/metrics/dlio_metrics.h, as DLIO_local_changes'
# utils/statscounter.py computes them) from real train runs on synthetic
# storage with a constant compute of 0.05 s per batch (long beside a
# step's own overhead, even under a sanitizer: the AU bound below holds on
# a loaded host):
# - the window: output.metric.exclude_start_steps 3 and exclude_end_steps 2
#   leave 11 of each rank's 16 steps, whose compute is 11 x 0.05 s, and the 5
#   excluded steps' proc time holds their 5 computes;
# - each rank's AU and samples/s are the formula over its stored sums, and
#   with a constant compute samples/s = AU / 100 x batch / compute exactly;
# - the epoch AU is the ranks' mean, its samples/s their sum, its MiB/s that
#   x the record size / 2^20; the run's means and deviations are numpy's
#   np.mean / np.std of the epoch lists, to the last bit;
# - the verdict is DLIO's: a window left empty (exclude_start_steps 32 of 32 steps) gives
#   AU 0 and FAIL although shardbench's own AU is high;
# - the text summary, --json and --csv show those stored values.
. "$(dirname "$0")/lib.sh"
PY=python3
"$PY" -c 'import numpy' 2>/dev/null || PY=/usr/bin/python3

syn="dataset.data_folder=synthetic://dlio dataset.num_files_train=128 dataset.num_samples_per_file=1
     dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 reader.batch_size=2
     train.computation_time=0.05 train.epochs=3"

# shellcheck disable=SC2086
sb run $syn output.metric.exclude_start_steps=3 output.metric.exclude_end_steps=2 metric.au=0.5 --accelerators 4 --local 2 --db d.db
expect_eq "run 1: exit" "$SB_RC" 0
cp sb.out run1.out

expect_eq "run 1: 4 ranks x 3 epochs, 16 steps each, 11 in DLIO's window" \
    "$(q d.db "SELECT count(*), min(batches), max(batches), min(metric_steps), max(metric_steps) FROM rank_epochs WHERE run_id = 1")" \
    "12|16|16|11|11"

# python3 CHECK: the relations, printed as words the test compares exactly
check () {
    "$PY" - "$@" <<'EOF'
import math, sqlite3, sys
import numpy as np
check, run = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect("d.db")
C, B, REC = 0.05, 2, 4096
ranks = db.execute("SELECT epoch, rank, started_at, finished_at, metric_steps, metric_compute_s, metric_excluded_s,"
                   " dlio_au_percentage, dlio_throughput_samples_per_second, metric_time_s FROM rank_epochs"
                   " WHERE run_id = ?"
                   " ORDER BY epoch, rank", (run,)).fetchall()
epochs = db.execute("SELECT epoch, train_au_percentage, train_throughput_samples_per_second, train_io_MB_per_second"
                    " FROM epochs WHERE run_id = ? ORDER BY epoch", (run,)).fetchall()
r = db.execute("SELECT train_au_mean_percentage, train_au_stdev_percentage, train_au_meet_expectation,"
               " train_throughput_mean_samples_per_second, train_throughput_stdev_samples_per_second,"
               " train_io_mean_MB_per_second, train_io_stdev_MB_per_second, record_size_bytes, au_threshold, passed,"
               " au_mean FROM runs WHERE id = ?", (run,)).fetchone()
close = lambda a, b, rel=1e-9: abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)
out = []
if check == "ranks":
    excluded = int(sys.argv[3])
    for e, k, t0, t1, steps, comp, excl, au, tput, total in ranks:
        ok = [close(comp, steps * C),                       # the window's computes, each 0.05 s
              excl >= excluded * C - 1e-9,                  # each excluded step's proc holds its compute
              abs(total - ((t1 - t0) - excl)) < 1e-5,       # the span less the excluded steps (stored times are
                                                            #   offset-corrected Unix seconds: ulps of 2.4e-7 s)
              close(au, 100 * comp / total),                # the formula over the stored sums
              close(tput, steps * B / total),
              close(tput, au / 100 * B / C),                # constant compute: samples/s = AU x batch / compute
              50 <= au <= 100]
        out.append("ok" if all(ok) else "bad epoch %d rank %d: %r %r" % (e, k, ok, (t0, t1, steps, comp, excl, au, tput)))
    print(" ".join(sorted(set(out))))
elif check == "epochs":
    n = max(x[1] for x in ranks) + 1
    for e, au, tput, io in epochs:
        rs = [x for x in ranks if x[0] == e]
        ok = [len(rs) == n, close(au, sum(x[7] for x in rs) / n, 1e-12), close(tput, sum(x[8] for x in rs), 1e-12),
              io == tput * REC / 1024. / 1024.]
        out.append("ok" if all(ok) else "bad epoch %d: %r" % (e, ok))
    print(" ".join(sorted(set(out))))
elif check == "run":
    au = [x[1] for x in epochs]; tp = [x[2] for x in epochs]
    # numpy's own mean and std of the epoch lists, as DLIO's end_run takes them: bit for bit
    want = (float(np.mean(au)), float(np.std(au)), float(np.mean(tp)), float(np.std(tp)),
            float(np.mean(tp)) * REC / 1024. / 1024., float(np.std(tp)) * REC / 1024. / 1024.)
    got = (r[0], r[1], r[3], r[4], r[5], r[6])
    print("same" if got == want else "differ %r %r" % (got, want), r[7],
          r[2] == ("success" if np.mean(au) >= r[8] * 100 else "fail"), r[9])
elif check == "summary":   # the text summary's DLIO table and verdict, from the database
    for e, au, tput, io in epochs:
        print("%5d %10.2f %12.1f %10.1f" % (e, au, tput, io))
    print("%5s %10.2f %12.1f %10.1f" % ("mean", r[0], r[3], r[5]))
    print("%5s %10.2f %12.1f %10.1f" % ("stdev", r[1], r[4], r[6]))
    print("AU mean %.2f%% against threshold %.2f%%: %s" % (r[0], 100 * r[8], "PASS" if r[9] == 1 else "FAIL"))
elif check == "json":
    import json
    j = json.load(open(sys.argv[3]))
    m = j["metric"]
    f = lambda v: "%.6f" % v
    same = ([f(x) for x in m["train_au_percentage"]] == [f(x[1]) for x in epochs]
            and [f(x) for x in m["train_throughput_samples_per_second"]] == [f(x[2]) for x in epochs]
            and f(m["train_au_mean_percentage"]) == f(r[0]) and f(m["train_au_stdev_percentage"]) == f(r[1])
            and f(m["train_throughput_mean_samples_per_second"]) == f(r[3])
            and f(m["train_io_mean_MB_per_second"]) == f(r[5]) and f(m["train_io_stdev_MB_per_second"]) == f(r[6])
            and j["shardbench"]["record_size_bytes"] == r[7]
            and f(j["shardbench"]["au_mean_percentage"]) == f(100 * r[10]))
    print("same" if same else "differ", m["train_au_meet_expectation"])
EOF
}

expect_eq "run 1: each rank's AU and samples/s follow from its window sums" "$(check ranks 1 5)" "ok"
expect_eq "run 1: epoch AU = ranks' mean, samples/s = their sum, MiB/s = x 4096 / 2^20" "$(check epochs 1)" "ok"
expect_eq "run 1: run means and deviations are numpy's, record size, verdict" "$(check run 1)" "same 4096 True 1"

# the text summary: DLIO's table and verdict as stored
grep -E '^ +([0-9]+|mean|stdev) +[0-9.]+ +[0-9.]+ +[0-9.]+$' run1.out | sed 's/^  //' >table.txt
echo "$(grep -E '^  AU mean' run1.out | sed 's/^  //')" >>table.txt
expect_eq "run 1: summary shows the stored DLIO figures" "$(cat table.txt)" "$(check summary 1)"
expect_contains "run 1: summary names the window" run1.out "DLIO's metrics (11 of the 16 steps of each rank counted, 4096-byte records):"
"$SHARDBENCH" report 1 --json --db d.db >r1.json
expect_eq "run 1 --json: DLIO's figures as stored" "$(check json 1 r1.json)" "same success"
"$SHARDBENCH" report 1 --csv ranks --db d.db >k1.csv
expect_eq "run 1 --csv ranks: the DLIO columns" \
    "$("$PY" -c 'import csv; r = list(csv.DictReader(open("k1.csv"))); print(len(r), sorted({x["metric_steps"] for x in r}), all(float(x["dlio_au_percentage"]) > 0 for x in r))')" \
    "12 ['11'] True"

# DLIO's defaults: the first step out, none at the end: 31 of 32
# shellcheck disable=SC2086
sb run $syn train.epochs=1 --accelerators 2 --local 1 --db d.db
expect_eq "run 2: exit" "$SB_RC" 0
expect_eq "run 2: default window, 31 steps" "$(q d.db "SELECT min(metric_steps), max(metric_steps), min(batches) FROM rank_epochs WHERE run_id = 2")" "31|31|32"
expect_eq "run 2: each rank's figures follow" "$(check ranks 2 1)" "ok"

# an empty window: AU 0 and samples/s 0 (DLIO's guard), verdict FAIL from DLIO's AU while shardbench's own is high
# shellcheck disable=SC2086
sb run $syn train.epochs=2 output.metric.exclude_start_steps=32 --accelerators 2 --local 1 --db d.db
expect_eq "run 3: exit (a FAIL verdict is not an error)" "$SB_RC" 0
expect_eq "run 3: empty window: DLIO AU 0, samples/s 0, fail; own AU above 50%" \
    "$(q d.db "SELECT train_au_mean_percentage, train_throughput_mean_samples_per_second, train_au_meet_expectation, passed, au_mean > 0.5 FROM runs WHERE id = 3")" \
    "0.0|0.0|fail|0|1"
expect_contains "run 3: summary says FAIL" sb.out "AU mean 0.00% against threshold 90.00%: FAIL"

finish
