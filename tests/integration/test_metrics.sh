#!/usr/bin/env bash
# --metrics ADDR (coordinator/report/openmetrics.c, metrics_server.c): a real
# run with two local workers serves its live figures over HTTP; promtool
# accepts every scrape; after the run (--metrics-linger keeps the final
# figures served) samples, bytes and steps per rank, per host and for the
# run, the per-host read latency histograms and the AU are the result
# database's; a silent client gets 408 and holds up neither the run nor the
# next scrape; 404, 405; a bad or taken ADDR is refused (exit 2); the
# Grafana dashboard (deploy/grafana/shardbench.json) is JSON and its
# queries name only families the scrape has.
# On an object store (s3rver): the per-endpoint counters are the endpoints
# table's. Parallel-safe: the ports are the kernel's choice, the folder private.
. "$(dirname "$0")/lib.sh"

if ! command -v promtool >/dev/null; then
    fail "promtool is not installed (Debian package prometheus: deploy/install-deps.sh --tests)"
    finish
    exit 1
fi
DASHBOARD="$SB_INTEGRATION_DIR/../../deploy/grafana/shardbench.json"

# 128 samples over 4 ranks, batch 2: 16 steps of 0.2 s an epoch, 2 epochs (about 7 s)
common="dataset.data_folder=./data dataset.num_files_train=128 dataset.record_length_bytes=4096
        dataset.record_length_bytes_stdev=1024 reader.batch_size=2 train.seed=1"
# shellcheck disable=SC2086
sb datagen quickstart $common --local 1 --db m.db
expect_eq "datagen: exit status" "$SB_RC" 0

# the run, in the background; its log names the URL. Not under timeout(1),
# which would signal the coordinator twice (itself and its process group):
# the trap ends it, and --metrics-linger bounds it
# shellcheck disable=SC2086
"$SHARDBENCH" run quickstart $common workflow.generate_data=False train.epochs=2 \
    train.computation_time=0.2 --accelerators 4 --local 2 --db m.db --progress off \
    --metrics 127.0.0.1:0 --metrics-linger 100 >run.out 2>run.err &
RUN=$!
trap 'kill "$RUN" 2>/dev/null; rm -rf "$SCRATCH"' EXIT
url=""
for _ in $(seq 1 300); do
    url=$(sed -n 's/.*info: metrics: serving \(http:[^ ]*\)$/\1/p' run.err)
    [ -n "$url" ] && break
    kill -0 "$RUN" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$url" ]; then
    fail "no 'metrics: serving' line:"; sed 's/^/    /' run.err | tail -20
    kill "$RUN" 2>/dev/null; wait "$RUN"
    finish; exit 1
fi
pass "the info line names the URL"
expect_eq "the URL is the loopback address and a port the kernel chose" \
    "$(echo "$url" | grep -cE '^http://127\.0\.0\.1:[1-9][0-9]*/metrics$')" 1
hostport=${url#http://}; hostport=${hostport%/metrics}; port=${hostport#*:}

# a client that connects and says nothing: answered 408 when its 2 s are up,
# while the run goes on (its exit status and figures are checked below)
exec 3<>"/dev/tcp/127.0.0.1/$port"
# a scrape queued behind it is served once the silent client is dropped
curl -sS --max-time 30 -o behind.txt -w '%{http_code}' "$url" >behind.code 2>behind.err
expect_eq "a scrape behind a silent client: 200" "$(cat behind.code)" 200
timeout 10 cat <&3 >silent.txt
exec 3<&-
expect_eq "the silent client: 408" "$(head -1 silent.txt | tr -d '\r')" "HTTP/1.1 408 Request Timeout"

# scrapes during the training: until one shows a train epoch under way
mid=0
for _ in $(seq 1 600); do
    kill -0 "$RUN" 2>/dev/null || break
    if curl -sS --max-time 30 -o scrape.txt "$url" 2>/dev/null \
        && grep -qx 'shardbench_phase_info{phase="train"} 1' scrape.txt \
        && grep -Eq '^shardbench_progress_ratio 0\.[0-9]+' scrape.txt \
        && grep -Eq '^shardbench_rank_samples_total\{rank="0",host="[^"]*"\} [1-9]' scrape.txt; then
        mid=1; cp scrape.txt mid.txt; break
    fi
    sleep 0.1
done
expect_eq "a scrape during a train epoch" "$mid" 1
if [ "$mid" = 1 ]; then
    if promtool check metrics <mid.txt >promtool-mid.txt 2>&1; then pass "promtool: the scrape during the run"
    else fail "promtool: the scrape during the run:"; sed 's/^/    /' promtool-mid.txt | head -20; fi
    expect_eq "during: ranks" "$(sed -n 's/^shardbench_ranks //p' mid.txt)" 4
    expect_eq "during: epochs" "$(sed -n 's/^shardbench_epochs //p' mid.txt)" 2
    expect_eq "during: steps per rank" "$(sed -n 's/^shardbench_steps //p' mid.txt)" 16
    expect_eq "during: one host" "$(sed -n 's/^shardbench_hosts //p' mid.txt)" 1
fi

# the run is over: its final figures stay served (--metrics-linger)
over=0
for _ in $(seq 1 1200); do
    grep -q 'info: metrics: the run is over' run.err && { over=1; break; }
    kill -0 "$RUN" 2>/dev/null || break
    sleep 0.1
done
expect_eq "the run is over, the server lingers" "$over" 1
curl -sS --max-time 30 -o final.txt -D final.head "$url"
expect_contains "final: the Content-Type" final.head "Content-Type: text/plain; version=0.0.4; charset=utf-8"
if promtool check metrics <final.txt >promtool-final.txt 2>&1; then pass "promtool: the final scrape"
else fail "promtool: the final scrape:"; sed 's/^/    /' promtool-final.txt | head -20; fi
expect_eq "404 for another path" "$(curl -s -o /dev/null -w '%{http_code}' "http://$hostport/")" 404
expect_eq "405 for another method" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url")" 405
# a signal ends the wait; the exit status is the run's
kill -TERM "$RUN"
wait "$RUN"
expect_eq "run: exit status" "$?" 0

# the final figures against the result database, exactly
run_id=$(q m.db "SELECT max(id) FROM runs")
expect_eq "the run succeeded" "$(q m.db "SELECT status FROM runs WHERE id = $run_id")" succeeded
python3 - m.db "$run_id" final.txt >compare.txt 2>&1 <<'PY'
import re, sqlite3, sys
db, run, path = sqlite3.connect(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
samples = {}
for line in open(path):
    if line.startswith("#") or not line.strip():
        continue
    m = re.match(r'^([a-z_]+)(?:\{(.*)\})? (\S+)$', line.rstrip("\n"))
    labels = tuple(re.findall(r'([a-z]+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
    samples[(m.group(1), labels)] = float(m.group(3))
bad = 0
def check(what, got, want):
    global bad
    ok = got == want
    bad += not ok
    print(("ok - " if ok else "FAIL - ") + f"{what}: metrics {got!r}, database {want!r}")
def one(sql, *args):
    return db.execute(sql, args).fetchone()[0]
last = one("SELECT max(epoch) FROM epochs WHERE run_id = ?", run)
check("last epoch", samples[("shardbench_epoch", ())], float(last))
check("run samples", samples[("shardbench_samples_total", ())],
      float(one("SELECT sum(samples) FROM rank_epochs WHERE run_id = ?", run)))
check("run bytes", samples[("shardbench_bytes_total", ())],
      float(one("SELECT sum(bytes) FROM rank_epochs WHERE run_id = ?", run)))
check("last epoch's samples", samples[("shardbench_phase_samples", ())],
      float(one("SELECT samples FROM epochs WHERE run_id = ? AND epoch = ?", run, last)))
check("last epoch's bytes", samples[("shardbench_phase_bytes", ())],
      float(one("SELECT bytes FROM epochs WHERE run_id = ? AND epoch = ?", run, last)))
check("errors", samples[("shardbench_errors_total", ())],
      float(one("SELECT coalesce(sum(errors), 0) FROM endpoints WHERE run_id = ?", run)))
for rank, host, s, b, steps, au in db.execute(
        "SELECT rank, host, samples, bytes, batches, dlio_au_percentage FROM rank_epochs"
        " WHERE run_id = ? AND epoch = ? ORDER BY rank", (run, last)):
    key = (("rank", str(rank)), ("host", host))
    check(f"rank {rank} samples", samples[("shardbench_rank_samples_total", key)], float(s))
    check(f"rank {rank} bytes", samples[("shardbench_rank_bytes_total", key)], float(b))
    check(f"rank {rank} steps", samples[("shardbench_rank_steps_total", key)], float(steps))
    check(f"rank {rank} AU", samples[("shardbench_rank_au_ratio", key)], au / 100)
    check(f"rank {rank} done", samples[("shardbench_rank_done", key)], 1.0)
hosts = db.execute("SELECT host, sum(samples), sum(bytes) FROM rank_epochs WHERE run_id = ? GROUP BY host",
                   (run,)).fetchall()
check("hosts", samples[("shardbench_hosts", ())], float(len(hosts)))
for host, s, b in hosts:
    key = (("host", host),)
    check(f"host {host} samples", samples[("shardbench_host_samples_total", key)], float(s))
    check(f"host {host} bytes", samples[("shardbench_host_bytes_total", key)], float(b))
    # the histogram: each bucket the recorded bins below its bound, over the run's epochs
    bounds = sorted(float(dict(k[1])["le"]) for k in samples
                    if k[0] == "shardbench_host_read_latency_seconds_bucket" and dict(k[1])["host"] == host
                    and dict(k[1])["le"] != "+Inf")
    check(f"host {host} latency buckets", len(bounds), 20)
    for le in bounds:
        us = round(le * 1e6)
        want = one("SELECT coalesce(sum(count), 0) FROM host_read_latency WHERE run_id = ? AND host = ?"
                   " AND bin_high_us <= ?", run, host, us)
        got = samples[("shardbench_host_read_latency_seconds_bucket", (("host", host), ("le", "%.6f" % le)))]
        check(f"host {host} latency bucket le={le}", got, float(want))
    total = one("SELECT sum(count) FROM host_read_latency WHERE run_id = ? AND host = ?", run, host)
    check(f"host {host} latency +Inf", samples[("shardbench_host_read_latency_seconds_bucket",
                                               (("host", host), ("le", "+Inf")))], float(total))
    check(f"host {host} latency count", samples[("shardbench_host_read_latency_seconds_count", key)], float(total))
    check(f"host {host} latency: every sample read", float(total),
          float(one("SELECT sum(samples) FROM rank_epochs WHERE run_id = ? AND host = ?", run, host)))
# AU: the epoch's is the mean over its ranks' recorded figures, the run's the mean over epochs
ep_au = one("SELECT train_au_percentage FROM epochs WHERE run_id = ? AND epoch = ?", run, last)
got = samples[("shardbench_epoch_au_ratio", ())]
check("epoch AU (to 1e-12)", abs(got * 100 - ep_au) < 1e-12 * ep_au, True)
run_au = one("SELECT avg(train_au_percentage) FROM epochs WHERE run_id = ?", run)
got = samples[("shardbench_run_au_ratio", ())]
check("run AU (to 1e-12)", abs(got * 100 - run_au) < 1e-12 * run_au, True)
check("progress", samples[("shardbench_progress_ratio", ())], 1.0)
check("ranks done", samples[("shardbench_ranks_done", ())], 4.0)
sys.exit(1 if bad else 0)
PY
cmp_rc=$?
n_ok=$(grep -c '^ok - ' compare.txt); n_fail=$(grep -c '^FAIL - ' compare.txt)
PASSES=$((PASSES + n_ok)); FAILS=$((FAILS + n_fail))
sed 's/^/    /' compare.txt
if [ "$cmp_rc" -ne 0 ] && [ "$n_fail" -eq 0 ]; then fail "comparing with the database:"; sed 's/^/    /' compare.txt | tail -20; fi
if [ "$n_ok" -ge 40 ]; then pass "$n_ok figures equal the database's"; else fail "only $n_ok figures compared"; fi

# the dashboard: JSON, and its queries name families of the scrape
if python3 -m json.tool "$DASHBOARD" >/dev/null 2>dashboard.err; then pass "dashboard: JSON"
else fail "dashboard: not JSON:"; sed 's/^/    /' dashboard.err; fi
dash_rc=0
python3 - "$DASHBOARD" final.txt >dashboard.txt 2>&1 <<'PY' || dash_rc=$?
import json, re, sys
dash = json.load(open(sys.argv[1]))
families = {}
for line in open(sys.argv[2]):
    m = re.match(r"^# TYPE (\S+) (\S+)$", line)
    if m:
        families[m.group(1)] = m.group(2)
names = set(families)
for f, t in families.items():
    if t == "histogram":
        names |= {f + "_bucket", f + "_sum", f + "_count"}
exprs = []
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "expr" and isinstance(v, str):
                exprs.append(v)
            else:
                walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(dash)
unknown = sorted({n for e in exprs for n in re.findall(r"\bshardbench_[a-z_]+", e)} - names)
print(f"{len(exprs)} queries")
for n in unknown:
    print(f"unknown family: {n}")
# the datasource is a variable (any Prometheus)
ds = [v for v in dash.get("templating", {}).get("list", []) if v.get("type") == "datasource"]
print("datasource variable:", ds[0]["query"] if ds else "none")
sys.exit(1 if unknown or not exprs or not ds else 0)
PY
if [ "$dash_rc" -eq 0 ]; then pass "dashboard: $(head -1 dashboard.txt), every family exported, a datasource variable"
else fail "dashboard:"; sed 's/^/    /' dashboard.txt; fi

# a bad ADDR, a taken port, a linger without --metrics: exit 2, named
# shellcheck disable=SC2086
sb run quickstart $common workflow.generate_data=False --local 1 --db m.db --metrics 9464
expect_eq "ADDR without a port: exit status" "$SB_RC" 2
expect_contains "ADDR without a port: message" sb.err "shardbench run: --metrics '9464': no port: expected HOST:PORT, [IPV6]:PORT or :PORT"
# shellcheck disable=SC2086
sb run quickstart $common workflow.generate_data=False --local 1 --db m.db --metrics ::1:9464
expect_eq "IPv6 without brackets: exit status" "$SB_RC" 2
expect_contains "IPv6 without brackets: message" sb.err "an IPv6 address goes in brackets ([::1]:9464)"
# a port another process listens on
python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(120)' >holder.out &
holder=$!
for _ in $(seq 1 100); do [ -s holder.out ] && break; sleep 0.1; done
taken=$(cat holder.out)
# shellcheck disable=SC2086
sb run quickstart $common workflow.generate_data=False --local 1 --db m.db --metrics "127.0.0.1:$taken"
expect_eq "a taken port: exit status" "$SB_RC" 2
expect_contains "a taken port: message" sb.err "--metrics '127.0.0.1:$taken': cannot listen there: Address already in use"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
# shellcheck disable=SC2086
sb run quickstart $common workflow.generate_data=False --local 1 --db m.db --metrics-linger 5
expect_eq "linger without --metrics: exit status" "$SB_RC" 2
expect_contains "linger without --metrics: message" sb.err "--metrics-linger goes with --metrics ADDR"
expect_eq "no run row for the refused commands" "$(q m.db "SELECT count(*) FROM runs")" 2

# an object store (s3rver on loopback): the per-endpoint figures are the
# endpoints table's
if [ "${SB_HAVE_S3:-1}" != 1 ]; then
    pass "per endpoint: skipped, a build without the s3 engine"
    finish
    exit $?
fi
. "$SB_INTEGRATION_DIR/../s3/s3lib.sh"
s3rver_install || { fail "cannot install the S3 test server"; finish; exit 1; }
s3rver_env
trap 'kill "$RUN" 2>/dev/null; s3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" sbmetrics || { fail "the S3 server did not start"; finish; exit 1; }
cat >s3.yaml <<YAML
model:
  name: metrics-s3
framework: pytorch
dataset:
  data_folder: ds
  format: npz
  num_files_train: 32
  num_samples_per_file: 1
  record_length_bytes: 8192
  record_length_bytes_stdev: 0
reader:
  data_loader: pytorch
  batch_size: 2
  read_threads: 1
train:
  epochs: 2
  computation_time: 0.01
storage:
  storage_type: s3
  storage_root: sbmetrics
  storage_library: s3dlio
  storage_options:
    endpoint_url: $S3RVER_ENDPOINT
YAML
sb datagen s3.yaml --local 1 --db s3.db
expect_eq "s3 datagen: exit status" "$SB_RC" 0
# on IPv6 loopback where the host has it
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
    maddr='[::1]:0'; murl='^http://\[::1\]:[1-9][0-9]*/metrics$'
else
    maddr='127.0.0.1:0'; murl='^http://127\.0\.0\.1:[1-9][0-9]*/metrics$'
fi
"$SHARDBENCH" run s3.yaml --accelerators 2 --local 1 --db s3.db --progress off \
    --metrics "$maddr" --metrics-linger 100 >s3run.out 2>s3run.err &
RUN=$!
over=0
for _ in $(seq 1 1200); do
    grep -q 'info: metrics: the run is over' s3run.err && { over=1; break; }
    kill -0 "$RUN" 2>/dev/null || break
    sleep 0.1
done
expect_eq "s3: the run is over, the server lingers" "$over" 1
url=$(sed -n 's/.*info: metrics: serving \(http:[^ ]*\)$/\1/p' s3run.err)
if [ "$(echo "$url" | grep -cE "$murl")" = 1 ]; then pass "s3: $maddr bound"
else fail "s3: $maddr bound: '$url'"; sed 's/^/    /' s3run.err | tail -5; fi
curl -sS --max-time 30 -g -o s3final.txt "$url"
if promtool check metrics <s3final.txt >promtool-s3.txt 2>&1; then pass "promtool: the s3 run's final scrape"
else fail "promtool: the s3 run's final scrape:"; sed 's/^/    /' promtool-s3.txt | head -20; fi
kill -TERM "$RUN"
wait "$RUN"
expect_eq "s3 run: exit status" "$?" 0
run_id=$(q s3.db "SELECT max(id) FROM runs")
q s3.db "SELECT endpoint, requests, bytes, errors, retries FROM endpoints WHERE run_id = $run_id ORDER BY endpoint" \
    >s3-db.txt
python3 - s3final.txt >s3-metrics.txt <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r'^shardbench_endpoint_(requests|bytes|errors|retries)_total\{endpoint="([^"]*)"\} (\d+)$', line)
    if m:
        rows.setdefault(m.group(2), {})[m.group(1)] = m.group(3)
for ep in sorted(rows):
    r = rows[ep]
    print("|".join([ep, r["requests"], r["bytes"], r["errors"], r["retries"]]))
PY
expect_eq "s3: one endpoint" "$(wc -l <s3-db.txt)" 1
expect_eq "s3: the endpoint's requests, bytes, errors, retries (database | metrics)" \
    "$(cat s3-db.txt) | $(grep -c . s3-metrics.txt)" "$(cat s3-metrics.txt) | 1"
expect_eq "s3: requests were made" "$(cut -d'|' -f2 s3-db.txt | grep -c '^[1-9]')" 1
expect_eq "s3: errors, all endpoints" "$(sed -n 's/^shardbench_errors_total //p' s3final.txt)" \
    "$(q s3.db "SELECT sum(errors) FROM endpoints WHERE run_id = $run_id")"
expect_eq "s3: the run's samples" "$(sed -n 's/^shardbench_samples_total //p' s3final.txt)" \
    "$(q s3.db "SELECT sum(samples) FROM rank_epochs WHERE run_id = $run_id")"

finish
