#!/usr/bin/env bash
# shardbench report --html: a real train run (file storage, 4 ranks on two
# workers whose host names hold HTML markup, 5 epochs of ~0.8 s), its
# read_latency rows checked against the epochs, then the page opened in
# headless Chromium: the rendered DOM must hold the charts with the
# elements the database calls for (counted exactly), and a screenshot must
# show them (colours of the bars and lines counted; a blank page fails the
# same check). A run on 12 hosts, more than there are colours, gets the band
# of its hosts instead of a line each. a copy with a run in which
# one host reads nothing for 8 s (those time bins drawn at zero, not
# bridged), epoch marks counted against rank_epochs, per-rank and per-host
# compute / I/O wait / barrier bars with exact values, the parameters the run
# was given, read latency per epoch, a failed run (its error and errors
# first, no chart without data) and a real checkpoint run. Skips (77) when
# chromium is not installed or cannot start.
. "$(dirname "$0")/lib.sh"

data="dataset.data_folder=./data dataset.num_files_train=64 dataset.record_length_bytes=65536
      dataset.record_length_bytes_stdev=0"
# shellcheck disable=SC2086
sb datagen $data --accelerators 2 --local 1 --db r.db
expect_eq "datagen: exit" "$SB_RC" 0

# 64 samples over 4 ranks, batches of 2: 8 steps of 0.1 s per epoch
# shellcheck disable=SC2086
( timeout 120 "$SHARDBENCH" run $data reader.batch_size=2 train.computation_time=0.1 train.epochs=5 metric.au=0.6 \
      --accelerators 4 --workers 2 --bind "tcp://$SB_LO:*" --db r.db >run.out 2>run.err ) &
coord=$!
ep=$(coordinator_endpoint run.err)
timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host 'node<a>&' >w1.out 2>w1.err &
w1=$!
timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host "node-b\"'" >w2.out 2>w2.err &
w2=$!
wait $w1; expect_eq "worker 1: exit" $? 0
wait $w2; expect_eq "worker 2: exit" $? 0
wait $coord; expect_eq "train run: exit" $? 0
expect_eq "runs" "$(q r.db "SELECT group_concat(id || ':' || kind || ':' || status || ':' || hosts, ' ') FROM runs")" \
    "1:datagen:succeeded:1 2:train:succeeded:2"

# read_latency: one histogram per epoch whose counts add up to the samples
expect_eq "read_latency counts = samples, every epoch" \
    "$(q r.db "SELECT group_concat(e.epoch || ':' || e.samples || '=' || (SELECT sum(count) FROM read_latency l
                WHERE l.run_id = 2 AND l.epoch = e.epoch), ' ') FROM epochs e WHERE e.run_id = 2 ORDER BY e.epoch")" \
    "1:64=64 2:64=64 3:64=64 4:64=64 5:64=64"
expect_eq "read_latency bins well formed" \
    "$(q r.db "SELECT count(*) FROM read_latency WHERE run_id = 2 AND (bin_high_us <= bin_low_us OR count <= 0)")" 0
expect_eq "read p50 <= p99 on every epoch" \
    "$(q r.db "SELECT count(*) FROM epochs WHERE run_id = 2 AND read_p50_ms > 0 AND read_p50_ms <= read_p99_ms")" 5
expect_eq "no read_latency rows for the datagen run" "$(q r.db "SELECT count(*) FROM read_latency WHERE run_id = 1")" 0

sb report last --html out.html --db r.db
expect_eq "report --html: exit" "$SB_RC" 0
expect_eq "report --html: nothing on stdout" "$(cat sb.out)" ""
expect_eq "no temporary file left" "$(find . -maxdepth 1 -name 'out.html.tmp*' | wc -l)" 0
expect_contains "page title" out.html "<title>shardbench run 2: "
# self-contained: no URL at all (inline SVG needs no xmlns), no script, nothing loaded
expect_eq "no URLs, scripts or loads" "$(grep -ciE 'https?://|<script|src=|href=|url\(|@import|<link' out.html)" 0
# host names from the database are escaped
expect_contains "host escaped" out.html 'data-host="node&lt;a&gt;&amp;"'
expect_contains "host with quotes escaped" out.html 'data-host="node-b&quot;&#39;"'
expect_eq "no raw markup from the database" "$(grep -c 'node<a>' out.html)" 0

sb report 99 --html missing.html --db r.db
expect_eq "missing run: exit 2" "$SB_RC" 2
expect_contains "missing run: message" sb.err "no run 99"
expect_eq "missing run: no file" "$(find . -maxdepth 1 -name 'missing.html*' | wc -l)" 0
sb report 1 --html datagen.html --db r.db
expect_eq "datagen run refused: exit 2" "$SB_RC" 2
expect_contains "datagen run refused: message" sb.err "run 1 is a datagen run; --html reports train runs"
sb report last --html x.html --json --db r.db
expect_eq "--html with --json: exit 2" "$SB_RC" 2
sb report last --html - --db r.db
expect_eq "--html -: the page on stdout" "$(cmp -s sb.out out.html && echo same)" same

# a copy with two S3 endpoints, for the endpoints chart
cp r.db e.db
q e.db "INSERT INTO endpoints (run_id, endpoint, requests, bytes, errors, retries) VALUES
        (2, 'http://127.0.0.1:9000', 120, 1000, 3, 2), (2, 'http://127.0.0.1:9001', 80, 1000, 0, 0);
        INSERT INTO errors (run_id, t, rank, host, op, target, message, endpoint, http_status)
        VALUES (2, (SELECT started_at + 1 FROM runs WHERE id = 2), 1, 'h', 'read', 'k<1>', 'bad <b>reply</b> & more',
                'http://127.0.0.1:9000', 503)"
sb report 2 --html ep.html --db e.db
expect_eq "report --html (endpoints): exit" "$SB_RC" 0
expect_contains "error message escaped" ep.html "<td>bad &lt;b&gt;reply&lt;/b&gt; &amp; more</td>"
expect_eq "endpoints page: no loads" "$(grep -ciE '<script|src=|href=|url\(|@import|<link' ep.html)" 0
# a run that succeeded with retries says so at the top; each
# endpoint's requests, errors, retries, MB and latency in a table
expect_eq "succeeded with retries: said before the summary" "$(python3 -c '
import sys; s = open("ep.html").read()
w = s.find("<div id=\"run-retries\" class=\"warn\">Succeeded after 2 retried and 3 failed attempts of 200 requests"
           " to 2 object-store endpoints, with 1 error recorded")
print(0 <= w < s.find("<table id=\"summary\""))')" True
expect_eq "no retry note on a run without any" "$(grep -c 'run-retries' out.html)" 0
expect_contains "endpoint table row" ep.html \
    '<tr><td class="name">http://127.0.0.1:9000</td><td>120</td><td>3</td><td>2</td><td>0.0</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td></tr>'

# a version 6 database (before read latency) is upgraded and its runs still render
cp r.db v6.db
q v6.db "$(schema_v7_sql)
         DROP TABLE read_latency; ALTER TABLE epochs DROP COLUMN read_p50_ms; ALTER TABLE epochs DROP COLUMN read_p99_ms;
         PRAGMA user_version = 6"
sb report 2 --html v6.html --db v6.db
expect_eq "version 6 database: exit" "$SB_RC" 0
expect_eq "version 6 database: upgraded" "$(q v6.db "PRAGMA user_version"):$(q v6.db "SELECT count(*) FROM read_latency"):$(
    q v6.db "SELECT count(*) FROM epochs WHERE run_id = 2 AND read_p50_ms IS NULL")" "17:0:5"
expect_contains "version 6 database: latency chart says why it is empty" v6.html "no read latency recorded for this run"

# more hosts than colours: 12 workers, one rank each, named h01..h12; the
# throughput chart then draws the band of the hosts, their mean and the host
# that read least (python finds it in the database: fewest bytes, first name)
many="dataset.data_folder=synthetic://many dataset.num_files_train=96 dataset.record_length_bytes=4096
      dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.computation_time=0.05 train.epochs=4"
# shellcheck disable=SC2086
( timeout 120 "$SHARDBENCH" run $many --accelerators 12 --workers 12 --bind "tcp://$SB_LO:*" --db many.db \
      >many.out 2>many.err ) &
coord=$!
ep=$(coordinator_endpoint many.err)
agents=()
for i in 01 02 03 04 05 06 07 08 09 10 11 12; do
    timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host "h$i" >/dev/null 2>&1 &
    agents+=($!)
done
agents_ok=0
for a in "${agents[@]}"; do wait "$a" && agents_ok=$((agents_ok + 1)); done
wait $coord; expect_eq "12-host run: exit" $? 0
expect_eq "12-host run: 12 agents ended well" "$agents_ok" 12
sb report last --html many.html --db many.db
expect_eq "report --html (12 hosts): exit" "$SB_RC" 0
least=$(python3 - many.db <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT w.host, sum(ts.bytes) FROM timeseries ts JOIN run_workers w ON w.run_id = ts.run_id"
                  " AND ts.rank >= w.first_rank AND ts.rank < w.first_rank + w.ranks WHERE ts.run_id = 1"
                  " GROUP BY w.host ORDER BY w.host").fetchall()
print(min(rows, key=lambda r: r[1])[0] if len(rows) == 12 else "hosts: %d" % len(rows))
EOF
)

# --- what the page must show at a glance ---
# a run in which one host is idle for 8 s: a copy of r.db with run 3 built
# by hand: hosts busy (rank 0) and idle (rank 1), 1 MiB read in each second
# by rank 0 from 1 s to 19 s, by rank 1 from 1 s to 5 s and from 15 s to
# 19 s (rows at k + 0.5 s cover the second before them), two epochs, and
# each rank's compute, I/O wait and barrier seconds
cp r.db idle.db
q idle.db "INSERT INTO runs (id, kind, workload, config, status, started_at, finished_at, accelerators, hosts, seed,
                             workers, au_threshold)
           VALUES (3, 'train', 'idle-host', 'dataset:
  num_files_train: 64
reader:
  batch_size: 2
', 'succeeded', 1000, 1020, 2, 2, 1, 2, 0.9);
           INSERT INTO run_workers (run_id, worker, host, pid, ranks, first_rank)
           VALUES (3, 0, 'busy', 1, 1, 0), (3, 1, 'idle', 2, 1, 1);
           INSERT INTO rank_epochs (run_id, epoch, rank, host, samples, batches, bytes, started_at, finished_at, compute_s,
                                    io_wait_s, barrier_s)
           VALUES (3, 1, 0, 'busy', 8, 4, 8, 1001, 1010, 6, 2, 1), (3, 1, 1, 'idle', 8, 4, 8, 1001.25, 1010, 3, 5, 1),
                  (3, 2, 0, 'busy', 8, 4, 8, 1010.5, 1020, 6, 2, 1), (3, 2, 1, 'idle', 8, 4, 8, 1010.5, 1020, 3, 5, 1.5);
           WITH RECURSIVE k(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM k WHERE k < 19)
           INSERT INTO timeseries (run_id, t, epoch, rank, samples, bytes, reads, read_s, compute_s)
           SELECT 3, 1000 + k + 0.5, 1 + (k >= 10), 0, 1, 1048576, 1, 0.01, 0.5 FROM k
           UNION ALL SELECT 3, 1000 + k + 0.5, 1 + (k >= 10), 1, 1, 1048576, 1, 0.01, 0.5 FROM k
           WHERE k <= 5 OR k >= 15;
           -- read latency per host (schema 11 has this table; made here when this schema lacks it):
           -- busy 10 reads in [20, 21) us, idle 4 there and 6 in [40, 42)
           CREATE TABLE IF NOT EXISTS host_read_latency (run_id INTEGER NOT NULL, epoch INTEGER NOT NULL,
               host TEXT NOT NULL, bin_low_us INTEGER NOT NULL, bin_high_us INTEGER NOT NULL,
               count INTEGER NOT NULL, PRIMARY KEY (run_id, epoch, host, bin_low_us));
           INSERT INTO host_read_latency (run_id, epoch, host, bin_low_us, bin_high_us, count)
           VALUES (3, 1, 'busy', 20, 21, 10), (3, 1, 'idle', 20, 21, 4), (3, 2, 'idle', 40, 42, 6)"
sb report 3 --html idle.html --db idle.db
expect_eq "report --html (idle host): exit" "$SB_RC" 0

# a failed run with nothing measured: a copy with run 3 failed at its start
cp r.db failed.db
q failed.db "INSERT INTO runs (id, kind, workload, config, status, error, started_at, finished_at, accelerators, hosts,
                               seed, workers)
             VALUES (3, 'train', 'broken', '', 'failed', 'rank 1 on h: cannot open <f>: No such file', 1000, 1001,
                     2, 1, 1, 1);
             INSERT INTO errors (run_id, t, rank, host, op, target, message)
             VALUES (3, 1000.5, 1, 'h', 'read', 'f1', 'cannot open <f>: No such file'),
                    (3, 1000.6, 0, 'h', 'read', 'f2', 'cannot open f2: No such file')"
sb report 3 --html failed.html --db failed.db
expect_eq "report --html (failed run): exit" "$SB_RC" 0

# a real checkpoint run: 2 writes and a read of llama3_8b scaled down 2^-13, 2 ranks
sb checkpoint llama3_8b checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0 \
    checkpoint.checkpoint_folder=./ck checkpoint.num_checkpoints_write=2 checkpoint.num_checkpoints_read=1 \
    --accelerators 2 --local 1 --db ck.db
expect_eq "checkpoint run: exit" "$SB_RC" 0
sb report last --html ck.html --db ck.db
expect_eq "report --html (checkpoint run): exit" "$SB_RC" 0
expect_eq "checkpoint page: no loads" "$(grep -ciE '<script|src=|href=|url\(|@import|<link' ck.html)" 0

# --- headless Chromium ---
chrome () {
    timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
        --hide-scrollbars --user-data-dir="$SCRATCH/chrome" "$@" 2>>chrome.err
}
if ! command -v chromium >/dev/null; then
    echo "SKIP: chromium is not installed (deploy/install-deps.sh --tests installs it)"
    exit 77
fi
if ! chrome --dump-dom "file://$SCRATCH/out.html" >dom.html || ! grep -q "chart-throughput" dom.html; then
    echo "SKIP: headless chromium cannot render a page here:"
    tail -5 chrome.err
    exit 77
fi
chrome --dump-dom "file://$SCRATCH/ep.html" >ep-dom.html
expect_eq "chromium: endpoints page rendered" "$?" 0

# python3 DOMFILE DB: the elements of each chart in the DOM Chromium built,
# against what the database calls for
dom_check () {
    python3 - "$@" <<'EOF'
import html.parser, math, sqlite3, sys
dom, dbfile = sys.argv[1], sys.argv[2]
db = sqlite3.connect(dbfile)
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.found, self.text, self.all = [], {}, {}, ""
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "id" in a:
            self.stack.append(a["id"]); self.found.setdefault(a["id"], []); self.text.setdefault(a["id"], "")
            return
        if self.stack:
            self.found[self.stack[-1]].append((tag, a))
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == "svg" and self.stack:
            self.stack.pop()
    def handle_endtag(self, tag):
        if tag == "svg" and self.stack:
            self.stack.pop()
    def handle_data(self, d):
        self.all += d
        if self.stack:
            self.text[self.stack[-1]] += d
p = P(); p.feed(open(dom).read())
def n(chart, tag, cls):
    return sum(1 for t, a in p.found.get(chart, []) if t == tag and cls in a.get("class", "").split())
print("charts", " ".join(sorted(p.found)))
hosts = [h for (h,) in db.execute("SELECT DISTINCT host FROM run_workers WHERE run_id = 2 ORDER BY host")]
lines = [a for t, a in p.found["chart-throughput"] if t == "polyline" and "host-line" in a.get("class", "")]
print("host lines", len(lines), "hosts", len(hosts), "same names", [a["data-host"] for a in lines] == hosts)
print("points per line >= 3", all(len(a["points"].split()) >= 3 for a in lines))
print("legend", all(h in p.text["chart-throughput"] for h in hosts))
epochs = db.execute("SELECT count(*) FROM epochs WHERE run_id = 2 AND au_mean IS NOT NULL").fetchone()[0]
print("au bars", n("chart-au", "rect", "au-bar"), "epochs", epochs, "threshold", n("chart-au", "line", "au-threshold"),
      "label", "threshold 60.0%" in p.text["chart-au"])
# the latency bins, computed here independently: [0,1), [1,2), then two per power of two
bins = set()
for (low,) in db.execute("SELECT DISTINCT bin_low_us FROM read_latency WHERE run_id = 2"):
    if low < 2:
        bins.add(low)
    else:
        e = int(math.log2(low))
        bins.add((e, low >= 3 << (e - 1)))
print("latency bars", n("chart-latency", "rect", "lat-bar"), "bins", len(bins), "p50", n("chart-latency", "line", "lat-p50"),
      "p99", n("chart-latency", "line", "lat-p99"))
eps = db.execute("SELECT count(*) FROM endpoints WHERE run_id = 2").fetchone()[0]
print("endpoint bars", n("chart-endpoints", "rect", "ep-requests"), n("chart-endpoints", "rect", "ep-errors"),
      "endpoints", eps, "no-endpoints text", "no object-store endpoints in this run (file or synthetic storage)" in p.all)
EOF
}
dom_check dom.html r.db >dom.txt
# more charts; the endpoints chart of a run that used none is left out (a line says why)
expect_eq "DOM: the charts" "$(sed -n 1p dom.txt)" \
    "charts chart-au chart-latency chart-latency-epochs chart-split-host chart-split-rank chart-throughput"
expect_eq "DOM: one line per host" "$(sed -n 2p dom.txt)" "host lines 2 hosts 2 same names True"
expect_eq "DOM: lines have points" "$(sed -n 3p dom.txt)" "points per line >= 3 True"
expect_eq "DOM: legend names the hosts" "$(sed -n 4p dom.txt)" "legend True"
expect_eq "DOM: one AU bar per epoch, threshold line" "$(sed -n 5p dom.txt)" "au bars 5 epochs 5 threshold 1 label True"
lat=$(sed -n 6p dom.txt)
expect_eq "DOM: latency bars = non-empty bins, p50 and p99" "$(echo "$lat" | awk '{print ($3 == $5 && $3 > 0) " " $6 $7 " " $8 $9}')" "1 p501 p991"
expect_eq "DOM: no endpoint bars, the file storage text" "$(sed -n 7p dom.txt)" "endpoint bars 0 0 endpoints 0 no-endpoints text True"
dom_check ep-dom.html e.db >ep-dom.txt
expect_eq "DOM (endpoints): one pair of bars per endpoint" "$(sed -n 7p ep-dom.txt)" \
    "endpoint bars 2 2 endpoints 2 no-endpoints text False"

chrome --dump-dom "file://$SCRATCH/many.html" >many-dom.html
python3 - many-dom.html >many-dom.txt <<'EOF'
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.chart, self.found = None, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.chart = a.get("id")
        elif self.chart == "chart-throughput":
            self.found.append((tag, a.get("class") or "", a.get("data-host")))
p = P()
p.feed(open(sys.argv[1]).read())
f = p.found
print("band", sum(1 for t, c, h in f if t == "polygon" and c == "host-band"),
      "mean", sum(1 for t, c, h in f if t == "polyline" and c == "host-mean"),
      "host lines", sum(1 for t, c, h in f if "host-line" in c.split()),
      "slowest", ",".join(h for t, c, h in f if "host-slowest" in c.split()))
EOF
expect_eq "DOM (12 hosts): one band, one mean, one line: the host that read least" \
    "$(cat many-dom.txt)" "band 1 mean 1 host lines 1 slowest $least"

# --- the new parts of the page, in the DOM Chromium built ---
# python3 DOMFILE: the elements of the page by tag, class and id (svg
# children under their chart), and the page's text
page_py='
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.chart, self.els, self.text, self.order, self.cell = None, [], "", [], None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "id" in a:
            self.chart = a["id"]
        a["_chart"] = self.chart
        a["_tag"] = tag
        self.els.append(a)
        if "id" in a:
            self.order.append(a["id"])
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
    def handle_endtag(self, tag):
        if tag == "svg":
            self.chart = None
    def handle_data(self, d):
        self.text += d
p = P(); p.feed(open(sys.argv[1]).read())
def els(chart=None, tag=None, cls=None):
    return [a for a in p.els if (chart is None or a["_chart"] == chart) and (tag is None or a["_tag"] == tag)
            and (cls is None or cls in (a.get("class") or "").split())]
charts = sorted(a["id"] for a in p.els if a["_tag"] == "svg" and "id" in a)
'
chrome --dump-dom "file://$SCRATCH/idle.html" >idle-dom.html
chrome --dump-dom "file://$SCRATCH/failed.html" >failed-dom.html
chrome --dump-dom "file://$SCRATCH/ck.html" >ck-dom.html

# idle bins: every bin is a point; the idle host's bins 6..13 (the 8 s it
# read nothing) lie on the zero line, bins 2..4 on the 1 MiB/s of the busy
# host's full bins; today's interpolated line would have no point there
python3 - idle-dom.html >idle.txt <<EOF2
$page_py
zero = [float(a["y1"]) for a in els("chart-throughput", "line", "frame") if a["y1"] == a["y2"]][0]
lines = {a["data-host"]: [tuple(map(float, xy.split(","))) for xy in a["points"].split()]
         for a in els("chart-throughput", "polyline", "host-line")}
busy, idle = lines["busy"], lines["idle"]
print("bins", len(busy), len(idle), els("chart-throughput", "polyline", "host-line")[0]["data-bins"])
print("idle zero bins", ",".join(str(b) for b, (x, y) in enumerate(idle) if y == zero))
print("idle bins 2..4 at the busy level", all(idle[b][1] == busy[10][1] != zero for b in (2, 3, 4)))
print("busy full bins level", len(set(y for x, y in busy[1:19])) == 1, "half bins", busy[0][1] == busy[19][1] != zero)
print("epoch marks", " ".join(a["data-epoch"] for a in els("chart-throughput", "line", "epoch-mark")))
split = {(a["_chart"], a.get("data-rank") or a.get("data-host"), a["class"]): a["data-value"]
         for a in els(tag="rect") if a.get("class", "").startswith("split-")}
print("rank 0", split[("chart-split-rank", "rank 0", "split-compute")], split[("chart-split-rank", "rank 0", "split-io")],
      split[("chart-split-rank", "rank 0", "split-barrier")])
print("rank 1", split[("chart-split-rank", "rank 1", "split-compute")], split[("chart-split-rank", "rank 1", "split-io")],
      split[("chart-split-rank", "rank 1", "split-barrier")])
print("host idle", split[("chart-split-host", "idle", "split-compute")], split[("chart-split-host", "idle", "split-io")],
      split[("chart-split-host", "idle", "split-barrier")])
import re
src = open(sys.argv[1]).read()
def rows(table_id):
    t = src[src.index('id="%s"' % table_id):].split("</table>")[0]
    return ["|".join(re.findall(r"<td[^>]*>([^<]*)</td>", r)) for r in re.findall(r"<tr>(.*?)</tr>", t) if "<td" in r]
print("host latency", " ".join(rows("host-latency")))
print("waited for", " ".join(rows("waited-for")))
EOF2
expect_eq "idle host: a point per bin (20 s)" "$(sed -n 1p idle.txt)" "bins 20 20 20"
expect_eq "idle host: its 8 idle bins drawn at zero" "$(sed -n 2p idle.txt)" "idle zero bins 6,7,8,9,10,11,12,13"
expect_eq "idle host: its busy bins at 1 MiB/s" "$(sed -n 3p idle.txt)" "idle bins 2..4 at the busy level True"
expect_eq "busy host: full and half bins" "$(sed -n 4p idle.txt)" "busy full bins level True half bins True"
expect_eq "idle host run: a mark per epoch" "$(sed -n 5p idle.txt)" "epoch marks 1 2"
expect_eq "split per rank: rank 0 (compute, I/O wait, barrier)" "$(sed -n 6p idle.txt)" "rank 0 12 4 2"
expect_eq "split per rank: rank 1" "$(sed -n 7p idle.txt)" "rank 1 6 10 2.5"
expect_eq "split per host: mean of its one rank" "$(sed -n 8p idle.txt)" "host idle 6 10 2.5"
expect_eq "read latency per host: reads and p50 to p99.9 ms" "$(sed -n 9p idle.txt)" \
    "host latency busy|10|0.021|0.021|0.021|0.021 idle|10|0.041|0.041|0.041|0.041"
# no held_s in these rows (as before schema 16): the most time of its own (wall less barrier wait)
expect_eq "the rank waited for in each epoch: most time of its own, its split of the window" "$(sed -n 10p idle.txt)" \
    "waited for 1|0|busy|-|9.000|8.000|6.000|2.000|1.000|0.000|0.000|1.000|2 2|0|busy|-|9.500|8.500|6.000|2.000|1.000|0.500|0.000|1.250|2"

# the real run: an epoch mark per epoch of rank_epochs; its parameters with
# the values it was given; read latency percentiles per epoch
python3 - dom.html r.db >params.txt <<EOF2
$page_py
import sqlite3
db = sqlite3.connect(sys.argv[2])
print("epoch marks", len(els("chart-throughput", "line", "epoch-mark")),
      db.execute("SELECT count(DISTINCT epoch) FROM rank_epochs WHERE run_id = 2").fetchone()[0])
import re
params = {}
src = open(sys.argv[1]).read()
t = src[src.index('id="parameters"'):]
t = t[:t.index("</table>")]
for k, v in re.findall(r"<tr(?: class=\"given\")?><th>([^<]*)</th><td>([^<]*)</td></tr>", t):
    params[k] = v
for k in ("dataset.num_files_train", "dataset.record_length_bytes", "reader.batch_size", "train.computation_time",
          "train.epochs", "metric.au"):
    print(k, params.get(k))
lat = src[src.index('id="read-latency"'):]
lat = lat[:lat.index("</table>")]
print("latency rows", len(re.findall(r"<tr><td>", lat)), "columns", " ".join(re.findall(r"<th>([^<]*)</th>", lat)))
print("charts", " ".join(charts))
print("command line", "command-line" in p.order, "version", "run-version" in p.order)
EOF2
expect_eq "real run: a mark per epoch" "$(sed -n 1p params.txt)" "epoch marks 5 5"
expect_eq "parameter dataset.num_files_train" "$(sed -n 2p params.txt)" "dataset.num_files_train 64"
expect_eq "parameter dataset.record_length_bytes" "$(sed -n 3p params.txt)" "dataset.record_length_bytes 65536"
expect_eq "parameter reader.batch_size" "$(sed -n 4p params.txt)" "reader.batch_size 2"
expect_eq "parameter train.computation_time" "$(sed -n 5p params.txt)" "train.computation_time 0.1"
expect_eq "parameter train.epochs" "$(sed -n 6p params.txt)" "train.epochs 5"
expect_eq "parameter metric.au" "$(sed -n 7p params.txt)" "metric.au 0.6"
expect_eq "read latency: a row per epoch, p50 to p99.9" "$(sed -n 8p params.txt)" \
    "latency rows 5 columns epoch samples read p50 ms read p90 ms read p99 ms read p99.9 ms"
expect_eq "real run: the charts with data, none empty" "$(sed -n 9p params.txt)" \
    "charts chart-au chart-latency chart-latency-epochs chart-split-host chart-split-rank chart-throughput"
expect_eq "real run: version and command line rows" "$(sed -n 10p params.txt)" "command line True version True"

# the failed run: its error first, then its errors, then the summary; no
# chart at all, a line for each saying why
python3 - failed-dom.html >failed.txt <<EOF2
$page_py
ids = [i for i in p.order if i in ("run-error", "errors", "summary", "origin", "parameters")]
print("order", " ".join(ids))
print("svg", len(els(tag="svg")), "no-chart lines", len(els(tag="p", cls="no-chart")))
src = open(sys.argv[1]).read()
print("alert", "Run failed: rank 1 on h: cannot open <f>: No such file" in p.text)
print("error rows", src[src.index('id="errors"'):].split("</table>")[0].count("<tr><td>"))
EOF2
expect_eq "failed run: error first, then the errors" "$(sed -n 1p failed.txt)" "order run-error errors summary origin parameters"
expect_eq "failed run: no empty charts" "$(sed -n 2p failed.txt)" "svg 0 no-chart lines 7"
expect_eq "failed run: its error" "$(sed -n 3p failed.txt)" "alert True"
expect_eq "failed run: its errors" "$(sed -n 4p failed.txt)" "error rows 2"

# the checkpoint run: a bar per write and read of each checkpoint with the
# GiB/s of the database, a write and a read bar per rank
python3 - ck-dom.html ck.db >ck.txt <<EOF2
$page_py
import sqlite3
db = sqlite3.connect(sys.argv[2])
run = db.execute("SELECT max(id) FROM runs").fetchone()[0]
print("charts", " ".join(charts))
bars = [(a["class"], a["data-checkpoint"], a["data-value"]) for a in els("chart-checkpoint-throughput", "rect")
        if a.get("class", "").startswith("ck-")]
want = [("ck-" + op, "checkpoint %d" % c, "%.6g" % g) for op, c, g in
        db.execute("SELECT op, checkpoint, gib_per_s FROM checkpoints WHERE run_id = ? ORDER BY checkpoint, op DESC", (run,))]
print("checkpoint bars", len(bars), "as in the database", sorted(bars) == sorted(want))
print("rank bars", len(els("chart-checkpoint-ranks", "rect", "ck-rank-write")), len(els("chart-checkpoint-ranks", "rect", "ck-rank-read")))
src = open(sys.argv[1]).read()
print("table rows", src[src.index('id="checkpoints"'):].split("</table>")[0].count("<tr><td"))
EOF2
expect_eq "checkpoint run: its charts" "$(sed -n 1p ck.txt)" "charts chart-checkpoint-ranks chart-checkpoint-throughput"
expect_eq "checkpoint run: a bar per write and read, GiB/s of the database" "$(sed -n 2p ck.txt)" \
    "checkpoint bars 3 as in the database True"
expect_eq "checkpoint run: a write and a read bar per rank" "$(sed -n 3p ck.txt)" "rank bars 2 2"
expect_eq "checkpoint run: the checkpoints table" "$(sed -n 4p ck.txt)" "table rows 3"

# python3-pil is Debian's: use Debian's interpreter when the first python3
# on PATH lacks it
PY=python3
"$PY" -c 'import PIL' 2>/dev/null || PY=/usr/bin/python3
# python3 PNG: counts pixels of the charts' own colours in a screenshot;
# exits 1 unless every chart left its mark (the page is not blank)
shot_check () {
    "$PY" - "$1" <<'EOF'
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
count = {c: n for n, c in im.getcolors(im.width * im.height)}
hexc = lambda h: tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))
blue, orange, green, red = (count.get(hexc(h), 0) for h in ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"))
nonwhite = sum(v for c, v in count.items() if c != (255, 255, 255))
ok = len(count) > 50 and blue > 5000 and green > 1000 and orange > 20 and red > 20 and nonwhite > 50000
print("colours %d blue %d green %d orange %d red %d non-white %d: %s"
      % (len(count), blue, green, orange, red, nonwhite, "drawn" if ok else "BLANK"))
sys.exit(0 if ok else 1)
EOF
}
chrome --screenshot="$SCRATCH/shot.png" --window-size=1200,2600 "file://$SCRATCH/out.html" >/dev/null
expect_eq "screenshot taken" "$?" 0
if shot_check shot.png >shot.txt; then pass "screenshot shows the charts ($(cat shot.txt))"; else fail "screenshot: $(cat shot.txt)"; fi
# the check can fail: an empty page
echo '<!DOCTYPE html><html><body></body></html>' >blank.html
chrome --screenshot="$SCRATCH/blank.png" --window-size=1200,2600 "file://$SCRATCH/blank.html" >/dev/null
shot_check blank.png >blank.txt
rc=$?
expect_eq "a blank page fails the screenshot check ($(cat blank.txt))" "$rc:$(grep -c ': BLANK$' blank.txt)" "1:1"
finish
