#!/usr/bin/env bash
# shardbench report --json / --csv and shardbench compare, against the rows
# of the result database: two real train runs over synthetic storage (run 1:
# 2 ranks on 2 local workers, 3 epochs; run 2: 4 ranks on one worker started
# with --workers whose host name holds a comma and quotes, from a workload
# file whose name holds a quote and a backslash, 2 epochs), then a datagen run.
# Expected values are computed by python3 from the database, formatted as the
# commands print them (%.6f; ratios %.3f), and compared as exact strings.
. "$(dirname "$0")/lib.sh"

syn="dataset.data_folder=synthetic://report dataset.num_files_train=64 dataset.record_length_bytes=4096
     dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.computation_time=0.001"

# shellcheck disable=SC2086
sb run $syn train.epochs=3 --accelerators 2 --local 2 --db r.db
expect_eq "run 1: exit" "$SB_RC" 0

wl='my "wl"\x.yaml'
cat >"$wl" <<'EOF'
model:
  name: reportwl
dataset:
  format: npz
  num_samples_per_file: 1
reader:
  batch_size: 2
train:
  epochs: 2
metric:
  au: 0.5
EOF
# shellcheck disable=SC2086
( timeout 120 "$SHARDBENCH" run "$wl" $syn train.epochs=2 --accelerators 4 --workers 1 --bind "tcp://$SB_LO:*" \
      --db r.db >remote.out 2>remote.err ) &
coord=$!
ep=$(coordinator_endpoint remote.err)
timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host 'node,"b"' >worker.out 2>worker.err
expect_eq "run 2: worker exit" $? 0
wait $coord
expect_eq "run 2: exit" $? 0
expect_eq "two train runs" "$(q r.db "SELECT group_concat(id || ':' || kind || ':' || status || ':' || accelerators || ':' || hosts, ' ') FROM runs")" \
    "1:train:succeeded:2:1 2:train:succeeded:4:1"

# python3 CHECK RUN JSONFILE: prints the expected value named CHECK for RUN
# from r.db, or with JSONFILE the value found in the JSON, both as text
expected () {
    python3 - "$@" <<'EOF'
import json, sqlite3, sys
check, run = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect("r.db")
ep = db.execute("SELECT samples_per_s, mib_per_s, au_mean, barrier_p50_ms, barrier_p99_ms, epoch, samples, dropped,"
                " batches, bytes, duration_s, train_au_percentage, train_throughput_samples_per_second,"
                " train_io_MB_per_second FROM epochs WHERE run_id = ? ORDER BY epoch", (run,)).fetchall()
r = db.execute("SELECT accelerators, hosts, status, passed, au_threshold, workload, train_au_mean_percentage,"
               " train_au_stdev_percentage, train_throughput_mean_samples_per_second,"
               " train_throughput_stdev_samples_per_second, train_io_mean_MB_per_second, train_io_stdev_MB_per_second"
               " FROM runs WHERE id = ?", (run,)).fetchone()
f = lambda x: "null" if x is None else "%.6f" % x
mean = lambda v: sum(v) / len(v)
std = lambda v: (sum((x - mean(v)) * (x - mean(v)) for x in v) / len(v)) ** 0.5
def fmt(v): return " ".join(f(x) for x in v)
if check == "json":
    # DLIO's figures as stored (runs and epochs columns of schema 9)
    tp = [e[12] for e in ep]; au = [e[11] for e in ep]
    print("epochs", len(ep), "au", fmt(au), "au_mean", f(r[6]), "au_std", f(r[7]),
          "tput", fmt(tp), "tput_mean", f(r[8]), "tput_std", f(r[9]), "io_mean", f(r[10]),
          "io_std", f(r[11]), "accel", r[0], "hosts", r[1], "meet", "success" if r[3] == 1 else "fail",
          "run", run, "status", r[2], "passed", {1: "True", 0: "False"}.get(r[3], "None"),
          "threshold", f(100 * r[4]), "p50", fmt(e[3] for e in ep), "p99", fmt(e[4] for e in ep),
          "workload", r[5])
elif check == "got":
    j = json.load(open(sys.argv[3]))
    m, s = j["metric"], j["shardbench"]
    # numbers in the JSON are %.6f text: the float read back prints as the same text
    print("epochs", j["epochs"], "au", fmt(m["train_au_percentage"]), "au_mean", f(m["train_au_mean_percentage"]),
          "au_std", f(m["train_au_stdev_percentage"]), "tput", fmt(m["train_throughput_samples_per_second"]),
          "tput_mean", f(m["train_throughput_mean_samples_per_second"]),
          "tput_std", f(m["train_throughput_stdev_samples_per_second"]),
          "io_mean", f(m["train_io_mean_MB_per_second"]), "io_std", f(m["train_io_stdev_MB_per_second"]),
          "accel", j["num_accelerators"], "hosts", j["num_hosts"], "meet", m["train_au_meet_expectation"],
          "run", s["run_id"], "status", s["status"], "passed", s["passed"], "threshold", f(s["au_threshold_percentage"]),
          "p50", fmt(e["barrier_p50_ms"] for e in s["epochs"]), "p99", fmt(e["barrier_p99_ms"] for e in s["epochs"]),
          "workload", s["workload"])
elif check == "csv":
    print("run_id,epoch,samples,dropped,steps,bytes,duration_s,samples_per_s,MiB_per_s,au,barrier_p50_ms,barrier_p99_ms,"
          "train_au_percentage,train_throughput_samples_per_second,train_io_MB_per_second")
    for e in ep:
        print(",".join([str(run), str(e[5]), str(e[6]), str(e[7]), str(e[8]), str(e[9]), f(e[10]), f(e[0]), f(e[1]),
                        f(e[2]), "" if e[3] is None else f(e[3]), "" if e[4] is None else f(e[4]),
                        f(e[11]), f(e[12]), f(e[13])]))
elif check == "ratio":   # compare RUN (A) with argv[3] (B): samples/s, MiB/s, AU means and B/A
    b = int(sys.argv[3])
    def means(k):
        v = db.execute("SELECT samples_per_s, mib_per_s, 100 * au_mean FROM epochs WHERE run_id = ? ORDER BY epoch",
                       (k,)).fetchall()
        return [mean([x[i] for x in v]) for i in range(3)]
    ma, mb = means(run), means(b)
    print("%.1f %.1f %.3f | %.1f %.1f %.3f | %.2f %.2f %.3f" % (ma[0], mb[0], mb[0] / ma[0], ma[1], mb[1], mb[1] / ma[1],
                                                                ma[2], mb[2], mb[2] / ma[2]))
elif check == "dlio_ratio":   # compare: DLIO's run figures of RUN (A) and argv[3] (B), as stored, and B/A
    b = int(sys.argv[3])
    q = ("SELECT train_au_mean_percentage, train_throughput_mean_samples_per_second, train_io_mean_MB_per_second"
         " FROM runs WHERE id = ?")
    ma, mb = db.execute(q, (run,)).fetchone(), db.execute(q, (b,)).fetchone()
    print("%.2f %.2f %.3f | %.1f %.1f %.3f | %.1f %.1f %.3f" % (ma[0], mb[0], mb[0] / ma[0], ma[1], mb[1], mb[1] / ma[1],
                                                                ma[2], mb[2], mb[2] / ma[2]))
EOF
}

# --json: valid JSON, DLIO's keys, the database's values
for run in 1 2; do
    "$SHARDBENCH" report $run --json --db r.db >r$run.json 2>r$run.err
    expect_eq "run $run --json: exit" $? 0
    python3 -c 'import json,sys; json.load(sys.stdin)' <r$run.json
    expect_eq "run $run --json: parses" $? 0
    expect_eq "run $run --json: values are the database's" "$(expected got $run r$run.json)" "$(expected json $run)"
done
expect_eq "run 1 --json: 3 epochs, 3 AU values, 2 accelerators" \
    "$(python3 -c 'import json; j = json.load(open("r1.json")); print(j["epochs"], len(j["metric"]["train_au_percentage"]), j["num_accelerators"], j["shardbench"]["workers"])')" "3 3 2 2"
expect_eq "run 2 --json: workload name escaped" \
    "$(python3 -c 'import json; print(json.load(open("r2.json"))["shardbench"]["workload"])')" "$wl"
expect_eq "run 2 --json: one host" \
    "$(python3 -c 'import json; j = json.load(open("r2.json")); print(len(j["host_memory_GB"]), len(j["host_cpu_count"]))')" "1 1"
"$SHARDBENCH" report --json --db r.db >last.json
expect_eq "report --json without a run id is the last run" "$(cmp -s last.json r2.json && echo same)" same

# --csv: header and one row per epoch, exactly the database's rows
"$SHARDBENCH" report 1 --csv --db r.db >e1.csv
expect_eq "run 1 --csv: exit" $? 0
expect_eq "run 1 --csv: 1 header + 3 epochs" "$(wc -l <e1.csv)" 4
expect_eq "run 1 --csv: rows" "$(cat e1.csv)" "$(expected csv 1)"
"$SHARDBENCH" report 2 --csv epochs --db r.db >e2.csv
expect_eq "run 2 --csv epochs: rows" "$(cat e2.csv)" "$(expected csv 2)"
# --csv ranks: one row per rank and epoch; the host field is quoted (RFC 4180)
"$SHARDBENCH" report 2 --csv ranks --db r.db >k2.csv
expect_eq "run 2 --csv ranks: exit" $? 0
expect_eq "run 2 --csv ranks: header" "$(head -1 k2.csv)" \
    "run_id,epoch,rank,host,samples,steps,bytes,started_at,finished_at,wall_s,compute_s,au,io_wait_s,barrier_s,metric_steps,metric_compute_s,metric_excluded_s,metric_time_s,dlio_au_percentage,dlio_throughput_samples_per_second,compute_all_s,other_s,idle_s,window_s,held_s"
expect_eq "run 2 --csv ranks: 1 header + 4 ranks x 2 epochs" "$(wc -l <k2.csv)" 9
# every rank's time split over the same window: compute (every step), I/O wait, barrier, other, idle
expect_eq "run 2 --csv ranks: each rank's split adds up to its epoch's window, the same for all its ranks" \
    "$(python3 -c '
import csv
r = list(csv.DictReader(open("k2.csv")))
f = lambda x, k: float(x[k])
ok = sum(1 for x in r if abs(sum(f(x, k) for k in ("compute_all_s", "io_wait_s", "barrier_s", "other_s", "idle_s"))
                             - f(x, "window_s")) < 1e-5 and f(x, "compute_all_s") > f(x, "compute_s"))
print(ok, len({(x["epoch"], x["window_s"]) for x in r}))')" "8 2"
expect_contains "run 2 --csv ranks: host quoted" k2.csv '2,1,0,"node,""b""",16,8,'
expect_eq "run 2 --csv ranks: parsed back" \
    "$(python3 -c 'import csv; r = list(csv.DictReader(open("k2.csv"))); print(len(r), sorted({x["host"] for x in r}), sum(int(x["samples"]) for x in r))')" \
    "8 ['node,\"b\"'] $(q r.db "SELECT sum(samples) FROM rank_epochs WHERE run_id = 2")"

# compare: both runs, the means and the ratio B/A
sb compare 1 2 --db r.db
expect_eq "compare: exit" "$SB_RC" 0
expect_contains "compare: both runs" sb.out "shardbench compare: run 1 (A) and run 2 (B)"
read -r sa sb_ rs _ ma mb rm _ aa ab ra <<<"$(expected ratio 1 2)"
expect_eq "compare: samples/s" "$(awk '/^  samples\/s \(mean\)/ { print $3, $4, $5 }' sb.out)" "$sa $sb_ $rs"
expect_eq "compare: MiB/s" "$(awk '/^  MiB\/s \(mean\)/ { print $3, $4, $5 }' sb.out)" "$ma $mb $rm"
expect_eq "compare: AU" "$(awk '/^  AU % \(mean\)/ { print $4, $5, $6 }' sb.out)" "$aa $ab $ra"
read -r da db_ dr _ dta dtb dtr _ dia dib dir <<<"$(expected dlio_ratio 1 2)"
expect_eq "compare: DLIO's AU" "$(awk '/^  train_au_mean_percentage/ { print $2, $3, $4 }' sb.out)" "$da $db_ $dr"
expect_eq "compare: DLIO's samples/s" "$(awk '/^  train_throughput_mean_samples_per_second/ { print $2, $3, $4 }' sb.out)" \
    "$dta $dtb $dtr"
expect_eq "compare: DLIO's MiB/s" "$(awk '/^  train_io_mean_MB_per_second/ { print $2, $3, $4 }' sb.out)" "$dia $dib $dir"
expect_eq "compare: accelerators" "$(awk '/^  accelerators/ { print $2, $3, $4 }' sb.out)" "2 4 2.000"
expect_eq "compare: epochs" "$(awk '/^  epochs/ { print $2, $3, $4 }' sb.out)" "3 2 0.667"
expect_eq "compare: verdicts" "$(awk '/^  passed/ { print $2, $3 }' sb.out)" \
    "$(q r.db "SELECT group_concat(CASE passed WHEN 1 THEN 'yes' ELSE 'no' END, ' ') FROM (SELECT passed FROM runs ORDER BY id)")"
sb compare 2 last --db r.db
expect_eq "compare last: a run with itself" "$(awk '/^  samples\/s \(mean\)/ { print $5 }' sb.out)" "1.000"

# a datagen run: --csv reports its row; --json is for train runs
sb datagen dataset.data_folder=./gen dataset.num_files_train=4 dataset.record_length_bytes=1024 --accelerators 1 --db r.db
expect_eq "datagen: exit" "$SB_RC" 0
sb report 3 --csv --db r.db
expect_eq "datagen --csv: 1 header + 1 row" "$SB_RC $(wc -l <sb.out)" "0 2"

# errors: exit 2 and nothing on stdout
for args in "report 9 --json" "report 9 --csv" "report 3 --json" "compare 1 9" "compare 9 1" "compare 1" \
            "compare 1 2 9" "report 1 --json --csv" "compare 0 1"; do
    # shellcheck disable=SC2086
    sb $args --db r.db
    expect_eq "$args: exit 2, no output" "$SB_RC $(wc -c <sb.out)" "2 0"
done
sb compare 1 2 --db missing.db
expect_eq "compare, no database: exit 2" "$SB_RC" 2
sb compare 1 9 --db r.db
expect_contains "compare 1 9: names the run" sb.err "no run 9 in this database"

finish
