#!/usr/bin/env bash
# How long `shardbench report --html` takes on a long run: a real train run of
# 64 ranks on 8 local workers, then its timeseries filled out to one hour of
# 0.1 s intervals per rank (64 x 36,000 = 2,304,000 rows, as a 64-rank run
# sending STATS ten times a second for an hour would leave). The peer is the
# sqlite3 shell running the page's heaviest query (throughput per host and
# time bin) on the same file: the floor for any report of that chart.
# usage: tests/bench/report_html.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
sb=$build/coordinator/shardbench
[ -x "$sb" ] || { echo "no $sb: build first (meson setup build && meson compile -C build)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/shardbench-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

"$sb" run dataset.data_folder=synthetic://bench dataset.num_files_train=4096 dataset.record_length_bytes=4096 \
    reader.batch_size=4 train.computation_time=0 train.epochs=2 --accelerators 64 --local 8 --db big.db \
    --progress off >/dev/null 2>&1
sqlite3 big.db "WITH RECURSIVE s(t) AS (SELECT 0 UNION ALL SELECT t + 1 FROM s WHERE t < 35999),
                               r(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM r WHERE k < 63)
                INSERT INTO timeseries SELECT 1, (SELECT started_at FROM runs WHERE id = 1) + t * 0.1, 1, k,
                                              100, 409600, 100, 0.1, 0.5 FROM s, r;"
rows=$(sqlite3 big.db "SELECT count(*) FROM timeseries")
echo "database: $(du -m big.db | cut -f1) MiB, $rows timeseries rows"
# drop the file from the page cache between runs where we may
drop () { sync; [ -w /proc/sys/vm/drop_caches ] && echo 1 >/proc/sys/vm/drop_caches || true; }

query="SELECT w.host, CAST((ts.t - r.started_at) / 6 AS INTEGER) AS b, sum(ts.bytes)
       FROM timeseries ts JOIN run_workers w ON w.run_id = ts.run_id
        AND ts.rank >= w.first_rank AND ts.rank < w.first_rank + w.ranks
       JOIN runs r ON r.id = ts.run_id WHERE ts.run_id = 1 GROUP BY w.host, b ORDER BY w.host, b"
for i in 1 2 3; do
    drop
    /usr/bin/time -f "sqlite3 query (cold): %e s, %M KiB peak RSS" sqlite3 big.db "$query" >/dev/null
    drop
    /usr/bin/time -f "report --html (cold): %e s, %M KiB peak RSS" "$sb" report 1 --html page.html --db big.db
    /usr/bin/time -f "report --html (warm): %e s, %M KiB peak RSS" "$sb" report 1 --html page.html --db big.db
done 2>&1
echo "page: $(wc -c <page.html) bytes"
