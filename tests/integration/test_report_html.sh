#!/usr/bin/env bash
# shardbench report --html: a real train run (file storage, 4 ranks on two
# workers whose host names hold HTML markup, 5 epochs of ~0.8 s), its
# read_latency rows checked against the epochs, then the page opened in
# headless Chromium: the rendered DOM must hold the four charts with the
# elements the database calls for (counted exactly), and a screenshot must
# show them (colours of the bars and lines counted; a blank page fails the
# same check). A run on 12 hosts, more than there are colours, gets the band
# of its hosts instead of a line each. Skips (77) when chromium is not
# installed or cannot start.
. "$(dirname "$0")/lib.sh"

data="dataset.data_folder=./data dataset.num_files_train=64 dataset.record_length_bytes=65536
      dataset.record_length_bytes_stdev=0"
# shellcheck disable=SC2086
sb datagen $data --accelerators 2 --local 1 --db r.db
expect_eq "datagen: exit" "$SB_RC" 0

# 64 samples over 4 ranks, batches of 2: 8 steps of 0.1 s per epoch
# shellcheck disable=SC2086
( timeout 120 "$SHARDBENCH" run $data reader.batch_size=2 train.computation_time=0.1 train.epochs=5 metric.au=0.6 \
      --accelerators 4 --workers 2 --bind "tcp://127.0.0.1:*" --db r.db >run.out 2>run.err ) &
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
expect_eq "read_latency buckets well formed" \
    "$(q r.db "SELECT count(*) FROM read_latency WHERE run_id = 2 AND (bucket_high_us <= bucket_low_us OR count <= 0)")" 0
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

# a version 6 database (before read latency) is upgraded and its runs still render
cp r.db v6.db
q v6.db "$(schema_v7_sql)
         DROP TABLE read_latency; ALTER TABLE epochs DROP COLUMN read_p50_ms; ALTER TABLE epochs DROP COLUMN read_p99_ms;
         PRAGMA user_version = 6"
sb report 2 --html v6.html --db v6.db
expect_eq "version 6 database: exit" "$SB_RC" 0
expect_eq "version 6 database: upgraded" "$(q v6.db "PRAGMA user_version"):$(q v6.db "SELECT count(*) FROM read_latency"):$(
    q v6.db "SELECT count(*) FROM epochs WHERE run_id = 2 AND read_p50_ms IS NULL")" "13:0:5"
expect_contains "version 6 database: latency chart says why it is empty" v6.html "no read latency recorded for this run"

# more hosts than colours: 12 workers, one rank each, named h01..h12; the
# throughput chart then draws the band of the hosts, their mean and the host
# that read least (python finds it in the database: fewest bytes, first name)
many="dataset.data_folder=synthetic://many dataset.num_files_train=96 dataset.record_length_bytes=4096
      dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.computation_time=0.05 train.epochs=4"
# shellcheck disable=SC2086
( timeout 120 "$SHARDBENCH" run $many --accelerators 12 --workers 12 --bind "tcp://127.0.0.1:*" --db many.db \
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
        self.stack, self.found, self.text = [], {}, {}
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
for (low,) in db.execute("SELECT DISTINCT bucket_low_us FROM read_latency WHERE run_id = 2"):
    if low < 2:
        bins.add(low)
    else:
        e = int(math.log2(low))
        bins.add((e, low >= 3 << (e - 1)))
print("latency bars", n("chart-latency", "rect", "lat-bar"), "bins", len(bins), "p50", n("chart-latency", "line", "lat-p50"),
      "p99", n("chart-latency", "line", "lat-p99"))
eps = db.execute("SELECT count(*) FROM endpoints WHERE run_id = 2").fetchone()[0]
print("endpoint bars", n("chart-endpoints", "rect", "ep-requests"), n("chart-endpoints", "rect", "ep-errors"),
      "endpoints", eps, "no-endpoints text", "no object-store endpoints in this run (file or synthetic storage)" in p.text["chart-endpoints"])
EOF
}
dom_check dom.html r.db >dom.txt
expect_eq "DOM: the four charts" "$(sed -n 1p dom.txt)" "charts chart-au chart-endpoints chart-latency chart-throughput"
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
