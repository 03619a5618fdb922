#!/usr/bin/env bash
# Every output tells the same story. Real runs into
# one result database: a datagen run and a train run of 4 ranks on 2 workers
# named node-a and node-b reading files (read latency per host), two more
# train runs with other settings, a checkpoint run (2 writes, 1 read), a train
# run that checkpoints during training. Then the text summary, --json, the
# --csv views and compare of 3 runs (config diff) and of a train and a
# checkpoint run, each checked exactly against the database by python3
# (sqlite3, json, csv): read latency p50/p90/p99/p99.9 per epoch and per host,
# the rank the others waited for and its split, barrier wait, the page-cache flags, retries
# and errors per endpoint (rows added to a run as an S3 run records them;
# test_s3_faults.sh checks the summary of real retries), DLIO's checkpoint
# metrics; a version 10 database is upgraded.
. "$(dirname "$0")/lib.sh"

cat >wl.yaml <<'EOF2'
model:
  name: outwl
dataset:
  format: npz
  num_files_train: 48
  num_samples_per_file: 1
  record_length_bytes: 8192
  record_length_bytes_stdev: 0
reader:
  batch_size: 2
train:
  epochs: 2
  computation_time: 0.001
metric:
  au: 0.5
EOF2
sb datagen wl.yaml dataset.data_folder=./data --accelerators 1 --local 1 --db r.db
expect_eq "datagen: exit" "$SB_RC" 0

# run 2: 4 ranks on 2 workers, node-a and node-b
( timeout 120 "$SHARDBENCH" run wl.yaml dataset.data_folder=./data --accelerators 4 --workers 2 \
      --bind "tcp://$SB_LO:*" --db r.db >run2.out 2>run2.err ) &
coord=$!
ep=$(coordinator_endpoint run2.err)
timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host node-a >wa.out 2>wa.err &
wa=$!
timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host node-b >wb.out 2>wb.err
expect_eq "run 2: worker b exit" $? 0
wait $wa
expect_eq "run 2: worker a exit" $? 0
wait $coord
expect_eq "run 2: exit" $? 0
# runs 3 and 4: other settings (the config diff of compare)
sb run wl.yaml dataset.data_folder=./data train.epochs=1 reader.batch_size=4 --accelerators 2 --local 1 --db r.db
expect_eq "run 3: exit" "$SB_RC" 0
sb run wl.yaml dataset.data_folder=synthetic://out train.epochs=3 --accelerators 2 --local 2 --db r.db
expect_eq "run 4: exit" "$SB_RC" 0
# run 5: a checkpoint run (llama3_8b scaled by 2^-13): 2 writes, 1 read
sb checkpoint llama3_8b checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0 \
    checkpoint.checkpoint_folder=./ck checkpoint.num_checkpoints_write=2 checkpoint.num_checkpoints_read=1 \
    --accelerators 2 --local 1 --db r.db
expect_eq "run 5 (checkpoint): exit" "$SB_RC" 0
expect_eq "runs" "$(q r.db "SELECT group_concat(id || ':' || kind || ':' || status, ' ') FROM runs")" \
    "1:datagen:succeeded 2:train:succeeded 3:train:succeeded 4:train:succeeded 5:checkpoint:succeeded"

# per-host histograms are stored, and add up to the merged ones
expect_eq "host_read_latency: hosts of run 2" "$(q r.db "SELECT group_concat(DISTINCT host) FROM (SELECT host FROM host_read_latency WHERE run_id = 2 ORDER BY host)")" \
    "node-a,node-b"
expect_eq "host_read_latency: per-host counts add up to read_latency, bin by bin" \
    "$(q r.db "SELECT count(*) FROM (SELECT epoch, bin_low_us, sum(count) AS c FROM host_read_latency WHERE run_id = 2 GROUP BY 1, 2
               EXCEPT SELECT epoch, bin_low_us, count FROM read_latency WHERE run_id = 2)"):$(
      q r.db "SELECT sum(count) FROM host_read_latency WHERE run_id = 2"):$(q r.db "SELECT sum(samples) FROM epochs WHERE run_id = 2")" \
    "0:96:96"
expect_eq "host_read_latency: each host's counts are its ranks' samples" \
    "$(q r.db "SELECT group_concat(host || '=' || c, ' ') FROM (SELECT host, sum(count) AS c FROM host_read_latency WHERE run_id = 2 GROUP BY host ORDER BY host)")" \
    "$(q r.db "SELECT group_concat(host || '=' || c, ' ') FROM (SELECT host, sum(samples) AS c FROM rank_epochs WHERE run_id = 2 GROUP BY host ORDER BY host)")"

# python3 CHECK RUN [FILE]: the expected text, or the figures found in FILE
expected () {
    python3 - "$@" <<'EOF2'
import csv, json, math, sqlite3, sys
check, run = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect("r.db")
def pct(rows):
    total = sum(c for _, _, c in rows)
    out = []
    for q in (0.5, 0.9, 0.99, 0.999):
        rank = min(int(q * total), total - 1)
        seen = 0
        for low, high, c in rows:
            seen += c
            if seen > rank:
                out.append((low + high) / 2.0 / 1000)
                break
    return total, out
def lat_epochs():
    eps = [e for (e,) in db.execute("SELECT DISTINCT epoch FROM read_latency WHERE run_id = ? ORDER BY epoch", (run,))]
    return [(e,) + pct(db.execute("SELECT bin_low_us, bin_high_us, count FROM read_latency WHERE run_id = ? AND epoch = ?"
                                  " ORDER BY bin_low_us", (run, e)).fetchall()) for e in eps]
def lat_hosts():
    keys = db.execute("SELECT DISTINCT epoch, host FROM host_read_latency WHERE run_id = ? ORDER BY epoch, host", (run,)).fetchall()
    return [(e, h) + pct(db.execute("SELECT bin_low_us, bin_high_us, count FROM host_read_latency WHERE run_id = ?"
                                    " AND epoch = ? AND host = ? ORDER BY bin_low_us", (run, e, h)).fetchall()) for e, h in keys]
# the rank the others waited for: the most time of its own (wall less barrier wait), the lowest rank of
# equal ones; its compute is every step's (compute_all_s, else compute_s); the epoch's window
def slowest():
    rows = []
    for (e,) in db.execute("SELECT DISTINCT epoch FROM rank_epochs WHERE run_id = ? AND epoch >= 1 ORDER BY epoch", (run,)):
        rs = db.execute("SELECT rank, host, finished_at - started_at, coalesce(compute_all_s, compute_s), io_wait_s,"
                        " barrier_s, started_at, finished_at, held_s FROM rank_epochs WHERE run_id = ? AND epoch = ?",
                        (run, e)).fetchall()
        r = sorted(rs, key=lambda x: (-(x[8] or 0), -(x[2] - x[5]), x[0]))[0]
        window = max(x[7] for x in rs) - min(x[6] for x in rs)
        rows.append((e, r[0], r[1], r[2], r[3], r[4], r[5], sum(x[5] for x in rs) / len(rs), window, r[8]))
    return rows
f6 = lambda x: "" if x is None else "%.6f" % x
n6 = lambda x: None if x is None else float("%.6f" % x)
if check == "text":          # the summary's new tables, as printed
    for e, n, p in lat_epochs():
        print("  %5d %10d %10.3f %10.3f %10.3f %10.3f" % ((e, n) + tuple(p)))
    for e, h, n, p in lat_hosts():
        print("  %5d %-24s %10d %10.3f %10.3f" % (e, h, n, p[0], p[2]))
    for e, r, h, wall, c, io, b, bm, w, held in slowest():
        print("  %5d %5d %-16s %8s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %12.3f"
              % (e, r, h, "-" if held is None else "%.3f" % held, w, wall - b, c, io, b, max(wall - c - io - b, 0),
                 max(w - wall, 0), bm))
elif check == "text-got":    # the same lines cut from the summary
    lines = open(sys.argv[3]).read().split("\n")
    def block(title, n, skip=2):
        i = next(k for k, l in enumerate(lines) if l.startswith(title))
        return lines[i + skip:i + skip + n]
    ne = len(lat_epochs()); nh = len(lat_hosts()); ns = len(slowest())
    print("\n".join(block("  read latency, ms", ne) + block("  read latency per host", nh)
                    + block("  the rank the others waited for", ns, 4)))
elif check == "json":        # what --json must hold, as numbers read back
    le = {e: (n, p) for e, n, p in lat_epochs()}
    lh = {}
    for e, h, n, p in lat_hosts():
        lh.setdefault(e, []).append({"host": h, "reads": n, "read_p50_ms": n6(p[0]), "read_p90_ms": n6(p[1]),
                                     "read_p99_ms": n6(p[2]), "read_p999_ms": n6(p[3])})
    sl = {s[0]: s for s in slowest()}
    eps = []
    for (e,) in db.execute("SELECT epoch FROM epochs WHERE run_id = ? ORDER BY epoch", (run,)):
        n, p = le[e]
        s = sl[e]
        eps.append({"epoch": e, "reads": n, "read_p50_ms": n6(p[0]), "read_p90_ms": n6(p[1]), "read_p99_ms": n6(p[2]),
                    "read_p999_ms": n6(p[3]), "barrier_wait_mean_s": n6(s[7]),
                    "waited_for_rank": {"rank": s[1], "host": s[2], "held_s": n6(s[9]), "window_s": n6(s[8]),
                                        "wall_s": n6(s[3]),
                                        "own_s": n6(s[3] - s[6]), "compute_s": n6(s[4]), "io_wait_s": n6(s[5]),
                                        "barrier_s": n6(s[6]), "other_s": n6(max(s[3] - s[4] - s[5] - s[6], 0)),
                                        "idle_s": n6(max(s[8] - s[3], 0))}, "hosts": lh.get(e, [])})
    tot = db.execute("SELECT coalesce(sum(requests), 0), coalesce(sum(retries), 0), coalesce(sum(errors), 0) FROM endpoints"
                     " WHERE run_id = ?", (run,)).fetchone()
    print(json.dumps({"epochs": eps, "requests": tot[0], "retries": tot[1], "request_errors": tot[2],
                      "error_rows": db.execute("SELECT count(*) FROM errors WHERE run_id = ?", (run,)).fetchone()[0]},
                     sort_keys=True))
elif check == "json-got":
    s = json.load(open(sys.argv[3]))["shardbench"]
    keys = ["epoch", "reads", "read_p50_ms", "read_p90_ms", "read_p99_ms", "read_p999_ms", "barrier_wait_mean_s",
            "waited_for_rank", "hosts"]
    print(json.dumps({"epochs": [{k: e[k] for k in keys} for e in s["epochs"]], "requests": s["requests"],
                      "retries": s["retries"], "request_errors": s["request_errors"], "error_rows": s["error_rows"]},
                     sort_keys=True))
elif check == "csv-detail":
    le = {e: (n, p) for e, n, p in lat_epochs()}
    sl = {s[0]: s for s in slowest()}
    print("run_id,epoch,reads,read_p50_ms,read_p90_ms,read_p99_ms,read_p999_ms,barrier_p50_ms,barrier_p99_ms,"
          "barrier_own_p50_ms,barrier_own_p99_ms,barrier_wait_mean_s,resident_fraction,served_from_memory,"
          "waited_for_rank,waited_for_host,waited_for_wall_s,waited_for_compute_s,waited_for_io_wait_s,"
          "waited_for_barrier_s,waited_for_own_s,waited_for_other_s,waited_for_idle_s,window_s,waited_for_held_s")
    for e, b50, b99, o50, o99, rf, fm in db.execute("SELECT epoch, barrier_p50_ms, barrier_p99_ms, barrier_own_p50_ms,"
            " barrier_own_p99_ms, resident_fraction, from_memory FROM epochs WHERE run_id = ? ORDER BY epoch", (run,)):
        n, p = le[e]
        s = sl[e]
        print(",".join([str(run), str(e), str(n)] + [f6(x) for x in p] + [f6(b50), f6(b99), f6(o50), f6(o99), f6(s[7]),
                       f6(rf), "" if fm is None else str(fm), str(s[1]), s[2]] + [f6(x) for x in s[3:7]]
                       + [f6(s[3] - s[6]), f6(max(s[3] - s[4] - s[5] - s[6], 0)), f6(max(s[8] - s[3], 0)), f6(s[8]),
                          f6(s[9])]))
elif check == "csv-hosts":
    print("run_id,epoch,host,reads,read_p50_ms,read_p90_ms,read_p99_ms,read_p999_ms")
    for e, h, n, p in lat_hosts():
        print(",".join([str(run), str(e), h, str(n)] + [f6(x) for x in p]))
elif check == "csv-endpoints":
    print("run_id,endpoint,requests,bytes,errors,retries,mean_ms,p50_ms,p90_ms,p99_ms,max_ms")
    for r in db.execute("SELECT endpoint, requests, bytes, errors, retries, mean_ms, p50_ms, p90_ms, p99_ms, max_ms"
                        " FROM endpoints WHERE run_id = ? ORDER BY endpoint", (run,)):
        print(",".join([str(run), r[0]] + [str(x) for x in r[1:5]] + [f6(x) for x in r[5:]]))
elif check == "ckpt-json":   # DLIO's checkpoint metrics from the checkpoints rows
    # DLIO's figures: its checkpoint_size over rank 0's time
    rows = db.execute("SELECT op, dlio_gib_per_s, dlio_duration_s, dlio_bytes FROM checkpoints WHERE run_id = ? ORDER BY seq",
                      (run,)).fetchall()
    m = {}
    for op, name in (("write", "save"), ("read", "load")):
        g = [r[1] for r in rows if r[0] == op]; d = [r[2] for r in rows if r[0] == op]
        if not g:
            continue
        mean = lambda v: sum(v) / len(v)
        std = lambda v: math.sqrt(sum((x - mean(v)) ** 2 for x in v) / len(v))
        m.update({name + "_checkpoint_io_mean_GB_per_second": n6(mean(g)), name + "_checkpoint_io_stdev_GB_per_second": n6(std(g)),
                  name + "_checkpoint_duration_mean_seconds": n6(mean(d)), name + "_checkpoint_duration_stdev_seconds": n6(std(d))})
    m["checkpoint_size_GB"] = n6([r[3] for r in rows if r[0] == "write"][0] / 1073741824.0)
    ranks = db.execute("SELECT seq, rank, host, bytes, duration_s FROM checkpoint_ranks WHERE run_id = ? ORDER BY seq, rank",
                       (run,)).fetchall()
    print(json.dumps({"metric": m, "ranks": [[r[0], r[1], r[2], r[3], n6(r[4])] for r in ranks]}, sort_keys=True))
elif check == "ckpt-json-got":
    j = json.load(open(sys.argv[3]))
    ranks = [[c["seq"], r["rank"], r["host"], r["bytes"], r["duration_s"]] for c in j["shardbench"]["checkpoints"] for r in c["per_rank"]]
    print(json.dumps({"metric": {k: v for k, v in j["metric"].items() if "checkpoint" in k}, "ranks": ranks},
                     sort_keys=True))
elif check == "ckpt-csv":
    print("run_id,seq,op,checkpoint,ranks,files,bytes,duration_s,span_s,GB_per_second,MB_per_s,min_rank_MB_per_s,"
          "dlio_bytes,dlio_duration_s,dlio_GB_per_second")
    for r in db.execute("SELECT seq, op, checkpoint, ranks, files, bytes, duration_s, span_s, gib_per_s, mb_per_s,"
                        " min_rank_mb_per_s, dlio_bytes, dlio_duration_s, dlio_gib_per_s FROM checkpoints"
                        " WHERE run_id = ? ORDER BY seq", (run,)):
        print(",".join([str(run)] + [str(x) for x in r[:6]] + [f6(x) for x in r[6:11]] + [str(r[11])]
                       + [f6(x) for x in r[12:]]))
elif check == "ckpt-csv-ranks":
    print("run_id,seq,op,checkpoint,rank,host,files,bytes,started_at,finished_at,duration_s,GB_per_second,MB_per_s")
    for r in db.execute("SELECT seq, op, checkpoint, rank, host, files, bytes, started_at, finished_at, duration_s, mb_per_s"
                        " FROM checkpoint_ranks WHERE run_id = ? ORDER BY seq, rank", (run,)):
        print(",".join([str(run)] + [str(x) for x in r[:7]] + [f6(r[7]), f6(r[8]), f6(r[9]),
                       f6(r[6] / 1073741824.0 / r[9]), f6(r[10])]))
elif check == "compare":     # compare RUN argv[3] argv[4]: samples/s means and read p99 over the run, ratios to A
    ids = [run] + [int(x) for x in sys.argv[3:]]
    def sps(k):
        v = [x for (x,) in db.execute("SELECT samples_per_s FROM epochs WHERE run_id = ?", (k,))]
        return sum(v) / len(v)
    def p99(k):
        return pct(db.execute("SELECT bin_low_us, bin_high_us, sum(count) FROM read_latency WHERE run_id = ?"
                              " GROUP BY bin_low_us ORDER BY bin_low_us", (k,)).fetchall())[1][2]
    a = [sps(k) for k in ids]; b = [p99(k) for k in ids]
    print(" ".join("%.1f" % x for x in a), " ".join("%.3f" % (x / a[0]) for x in a[1:]), "|",
          " ".join("%.3f" % x for x in b), " ".join("%.3f" % (x / b[0]) if b[0] else "-" for x in b[1:]))
EOF2
}

# the text summary: read latency per epoch and host, the slowest rank, the page cache
sb report 2 --db r.db
expect_eq "report 2: exit" "$SB_RC" 0
cp sb.out report2.out
expect_eq "report 2: latency per epoch and host, the rank waited for: the database's" "$(expected text-got 2 report2.out)" \
    "$(expected text 2)"
expect_eq "report 2: 2 epochs, 2 hosts each, 2 ranks waited for" "$(expected text 2 | wc -l)" 8
# DLIO's potential_caching: 1 for a host whose memory exceeds the bytes its ranks read in an epoch
expect_contains "report 2: page cache line" report2.out \
    "  page cache: potential_caching 1 on $(q r.db "SELECT count(*) FROM (SELECT host, max(memory) AS m FROM run_workers
        WHERE run_id = 2 GROUP BY host) w WHERE m > (SELECT max(b) FROM (SELECT sum(bytes) AS b FROM rank_epochs
        WHERE run_id = 2 AND host = w.host GROUP BY epoch))") of 2 hosts"
expect_contains "report 2: page cache, epochs from the page cache" report2.out \
    "; $(q r.db "SELECT count(*) FROM epochs WHERE run_id = 2 AND from_memory = 1") of 2 epochs read mostly from the page cache (measured)"
expect_contains "report 2: no retries, no word of them" report2.out "  status: succeeded after"
expect_eq "report 2: status line" "$(grep -c 'retr' report2.out)" 0

# --json: the same figures
sb report 2 --json --db r.db
expect_eq "report 2 --json: exit" "$SB_RC" 0
cp sb.out r2.json
expect_eq "report 2 --json: latency, the rank waited for, hosts, retries: the database's" "$(expected json-got 2 r2.json)" \
    "$(expected json 2)"
expect_eq "report 2 --json: run latency and hosts" \
    "$(python3 -c 'import json; s = json.load(open("r2.json"))["shardbench"]; print(s["read_latency"]["reads"], sorted(h["host"] for h in s["hosts"]), s["endpoints"])')" \
    "96 ['node-a', 'node-b'] []"

# --csv views
sb report 2 --csv detail --db r.db
expect_eq "report 2 --csv detail" "$(cat sb.out)" "$(expected csv-detail 2)"
sb report 2 --csv hosts --db r.db
expect_eq "report 2 --csv hosts" "$(cat sb.out)" "$(expected csv-hosts 2)"
expect_eq "report 2 --csv hosts: 1 header + 2 epochs x 2 hosts" "$(wc -l <sb.out)" 5
sb report 2 --csv run --db r.db
expect_eq "report 2 --csv run: kind, status, retries" \
    "$(python3 -c 'import csv; r = list(csv.DictReader(open("sb.out"))); print(len(r), r[0]["kind"], r[0]["status"], r[0]["retries"], r[0]["epochs"], r[0]["error_rows"])')" \
    "1 train succeeded 0 2 0"

# a run that retried says so: run 4 gets the endpoints rows an S3 run records
q r.db "INSERT INTO endpoints (run_id, endpoint, requests, bytes, errors, retries, mean_ms, p50_ms, p90_ms, p99_ms, max_ms)
        VALUES (4, 'http://s3-a:9000', 130, 1048576, 32, 30, 1.5, 1.25, 2.5, 7.75, 9.0),
               (4, 'http://s3-b:9000', 10, 4096, 0, 0, NULL, NULL, NULL, NULL, NULL)"
sb report 4 --db r.db
expect_contains "retried run: the status line says so" sb.out \
    ", with 30 retries (32 failed attempts of 140 requests to 2 object-store endpoints)"
expect_contains "retried run: still succeeded" sb.out "  status: succeeded after "
expect_contains "retried run: endpoint table" sb.out \
    "$(printf '  %-32s %10s %12s %8s %8s %10s %10s' http://s3-a:9000 130 1.0 32 30 1.250 7.750)"
expect_contains "retried run: endpoint without latency" sb.out \
    "$(printf '  %-32s %10s %12s %8s %8s %10s %10s' http://s3-b:9000 10 0.0 0 0 - -)"
sb report 4 --json --db r.db
cp sb.out r4.json
expect_eq "retried run --json: retries, endpoints" "$(expected json-got 4 r4.json)" "$(expected json 4)"
expect_eq "retried run --json: endpoint rows" \
    "$(python3 -c 'import json; print([(e["endpoint"], e["retries"], e["errors"], e["p99_ms"]) for e in json.load(open("r4.json"))["shardbench"]["endpoints"]])')" \
    "[('http://s3-a:9000', 30, 32, 7.75), ('http://s3-b:9000', 0, 0, None)]"
sb report 4 --csv endpoints --db r.db
expect_eq "retried run --csv endpoints" "$(cat sb.out)" "$(expected csv-endpoints 4)"
sb report 4 --csv run --db r.db
expect_eq "retried run --csv run: retries and failed attempts" \
    "$(python3 -c 'import csv; r = list(csv.DictReader(open("sb.out")))[0]; print(r["status"], r["requests"], r["retries"], r["request_errors"])')" \
    "succeeded 140 30 32"

# a checkpoint run: --json and --csv
sb report 5 --json --db r.db
expect_eq "checkpoint --json: exit" "$SB_RC" 0
cp sb.out r5.json
expect_eq "checkpoint --json: DLIO's checkpoint metrics and every rank of every checkpoint" \
    "$(expected ckpt-json-got 5 r5.json)" "$(expected ckpt-json 5)"
expect_eq "checkpoint --json: summary keys" \
    "$(python3 -c 'import json; j = json.load(open("r5.json")); print(j["num_accelerators"], j["epochs"], j["shardbench"]["kind"], len(j["shardbench"]["checkpoints"]), "train_au_mean_percentage" in j["metric"])')" \
    "2 0 checkpoint 3 False"
sb report 5 --csv --db r.db
expect_eq "checkpoint --csv: one row per checkpoint" "$(cat sb.out)" "$(expected ckpt-csv 5)"
expect_eq "checkpoint --csv: 1 header + 3 checkpoints" "$(wc -l <sb.out)" 4
sb report 5 --csv ranks --db r.db
expect_eq "checkpoint --csv ranks: one row per rank and checkpoint" "$(cat sb.out)" "$(expected ckpt-csv-ranks 5)"
expect_eq "checkpoint --csv ranks: 1 header + 3 x 2" "$(wc -l <sb.out)" 7
sb report 5 --db r.db
# the summary's 3 decimals of the JSON's 6 (both rounded from one double:
# the JSON's value rounded again can differ in the last digit, so the
# summary's figure is compared within half its last digit)
expect_eq "checkpoint summary: DLIO's save metrics" \
    "$(python3 -c '
import json, re, sys
want = json.load(open("r5.json"))["metric"]["save_checkpoint_io_mean_GB_per_second"]
m = re.search(r"^  DLIO: save_checkpoint_io_mean_GB_per_second ([0-9]+\.[0-9]{3})( |$)", open("sb.out").read(), re.M)
print("ok" if m and abs(float(m.group(1)) - want) <= 0.0005 + 1e-6 else "summary %s, JSON %r" % (m and m.group(1), want))')" ok

expect_eq "checkpoint summary: the slowest rank of each checkpoint" \
    "$(sed -n '/^  slowest rank of each checkpoint:/,$p' sb.out | sed -n '3,5p')" \
    "$(python3 -c 'import sqlite3; print("\n".join("  %5d %-5s %5d %-24s %10.3f" % r for r in sqlite3.connect("r.db").execute(
        "SELECT seq, op, rank, host, duration_s FROM checkpoint_ranks r WHERE run_id = 5 AND rank = (SELECT x.rank FROM"
        " checkpoint_ranks x WHERE x.run_id = 5 AND x.seq = r.seq ORDER BY x.duration_s DESC, x.rank LIMIT 1) ORDER BY seq")))')"

# run 6: a train run that checkpoints during training carries DLIO's save metrics beside its train_* ones
sb run wl.yaml dataset.data_folder=./data train.epochs=1 workflow.checkpoint=True checkpoint.checkpoint_folder=./ck6 \
    model.type=cnn model.model_size_bytes=5000 checkpoint.steps_between_checkpoints=2 --accelerators 2 --local 1 --db r.db
expect_eq "run 6 (train with checkpoints): exit" "$SB_RC" 0
sb report 6 --json --db r.db
cp sb.out r6.json
expect_eq "run 6 --json: checkpoint metrics and ranks" "$(expected ckpt-json-got 6 r6.json)" "$(expected ckpt-json 6)"
expect_eq "run 6 --json: save keys, no load keys, train keys kept" \
    "$(python3 -c 'import json; m = json.load(open("r6.json"))["metric"]; print(sorted(k for k in m if "checkpoint" in k), "train_au_mean_percentage" in m)')" \
    "['checkpoint_size_GB', 'save_checkpoint_duration_mean_seconds', 'save_checkpoint_duration_stdev_seconds', 'save_checkpoint_io_mean_GB_per_second', 'save_checkpoint_io_stdev_GB_per_second'] True"

# compare of 3 runs: the config diff first, then the figures with ratios to A
sb compare 2 3 4 --db r.db
expect_eq "compare 3 runs: exit" "$SB_RC" 0
cp sb.out cmp3.out
expect_contains "compare 3 runs: header" cmp3.out "shardbench compare: run 2 (A), run 3 (B) and run 4 (C)"
expect_contains "compare 3 runs: workers" cmp3.out "$(printf '    %-38s %16s %16s %16s' workers 2 1 2)"
expect_contains "compare 3 runs: accelerators" cmp3.out "$(printf '    %-38s %16s %16s %16s' accelerators 4 2 2)"
expect_contains "compare 3 runs: train.epochs differs" cmp3.out "$(printf '    %-38s %16s %16s %16s' train.epochs 2 1 3)"
expect_contains "compare 3 runs: reader.batch_size differs" cmp3.out "$(printf '    %-38s %16s %16s %16s' reader.batch_size 2 4 2)"
expect_contains "compare 3 runs: data folder differs" cmp3.out \
    "$(printf '    %-38s %16s %16s %16s' dataset.data_folder ./data ./data synthetic://out)"
expect_eq "compare 3 runs: a key that does not differ is not listed" "$(grep -c '^    model.name ' cmp3.out)" 0
expect_eq "compare 3 runs: config diff before the figures" \
    "$(awk '/^    train.epochs/ { c = NR } /^  samples\/s \(mean\)/ { s = NR } END { print (c < s) }' cmp3.out)" 1
expect_eq "compare 3 runs: ratio columns" "$(grep -E '^ +A +B +C +B/A +C/A$' cmp3.out | wc -l)" 1
read -r s1 s2 s3 r2 r3 _ p1 p2 p3 q2 q3 <<<"$(expected compare 2 3 4)"
expect_eq "compare 3 runs: samples/s and ratios to A" "$(awk '/^  samples\/s \(mean\)/ { print $3, $4, $5, $6, $7 }' cmp3.out)" \
    "$s1 $s2 $s3 $r2 $r3"
expect_eq "compare 3 runs: read p99 over the run and ratios" "$(awk '/^  read p99 ms \(run\)/ { print $5, $6, $7, $8, $9 }' cmp3.out)" \
    "$p1 $p2 $p3 $q2 $q3"
expect_eq "compare 3 runs: retries" "$(awk '/^  retries/ { print $2, $3, $4 }' cmp3.out)" "0 0 30"

# compare of a train and a checkpoint run: says they differ in kind, compares what they share
sb compare 2 5 --db r.db
expect_eq "compare train/checkpoint: exit" "$SB_RC" 0
expect_contains "compare train/checkpoint: says so" sb.out \
    "  these runs differ in kind (A train, B checkpoint): only the figures at least two of them have are compared"
expect_eq "compare train/checkpoint: train-only figures left out" "$(grep -c '^  samples/s (mean)\|^  train_au_mean' sb.out)" 0
expect_contains "compare train/checkpoint: shared figures" sb.out "$(printf '  %-40s %16s %16s %10s' accelerators 4 2 0.500)"
expect_eq "compare 2 runs of one kind: no such line" "$(sb compare 2 3 --db r.db; grep -c 'differ in kind' sb.out)" 0

# errors: exit 2, nothing on stdout
for args in "compare 2 3 99" "compare 2 3 4 5 2 3 4 5 2" "report 1 --json"; do
    # shellcheck disable=SC2086
    sb $args --db r.db
    expect_eq "$args: exit 2, no output" "$SB_RC $(wc -c <sb.out)" "2 0"
done

# a version 15 database (before rank_epochs.compute_all_s and held_s) is upgraded: its rows keep NULL
# there and the rank waited for is still named (by its own time), its compute the steps after the first
# (all it recorded)
cp r.db v15.db
q v15.db "$(schema_v15_sql) PRAGMA user_version = 15"
sb report 2 --db v15.db
expect_eq "version 15: report exit" "$SB_RC" 0
expect_eq "version 15: upgraded, compute_all_s and held_s NULL in the old rows" \
    "$(q v15.db "PRAGMA user_version"):$(q v15.db "SELECT count(*) FROM rank_epochs WHERE run_id = 2 AND compute_all_s IS NULL
                                                  AND held_s IS NULL")" \
    "17:$(q r.db "SELECT count(*) FROM rank_epochs WHERE run_id = 2")"
expect_eq "version 15: the rank waited for, as the database has it" \
    "$(sed -n '/the rank the others waited for/,/waited for:/p' sb.out | awk '$1 == "1" {print $2, $3, $4, $7}')" \
    "$(q v15.db "SELECT rank || ' ' || host || ' - ' || printf('%.3f', compute_s) FROM rank_epochs WHERE run_id = 2 AND epoch = 1
                 ORDER BY finished_at - started_at - barrier_s DESC, rank LIMIT 1")"

# a version 10 database (before host_read_latency) is upgraded; its runs report without per-host rows
cp r.db v10.db
q v10.db "$(schema_v10_sql) PRAGMA user_version = 10"
sb report 2 --db v10.db
expect_eq "version 10: report exit" "$SB_RC" 0
expect_eq "version 10: upgraded, host_read_latency empty" \
    "$(q v10.db "PRAGMA user_version"):$(q v10.db "SELECT count(*) FROM host_read_latency")" "17:0"
expect_contains "version 10: the summary says why there are no per-host rows" sb.out \
    "  (none recorded: a run before result schema 12)"
expect_eq "version 10: the merged latency is still there" "$(expected text-got 2 sb.out | head -2)" "$(expected text 2 | head -2)"

finish
