#!/usr/bin/env python3
# trace_inflight.py TRACE_DIR: the reads in flight per rank and epoch from
# shardbench.trace files. A line is a read in flight over
# [start_s, start_s + latency_us) (start_s: when the engine issued it);
# lines of samples served by an earlier read (latency 0, no bytes) are not
# reads. Prints one line per (rank, epoch):
#   rank epoch reads peak mean footer_reads footer_peak footers_before_groups
# peak: most reads in flight at once; mean: reads in flight averaged over
# the time from the first issue to the last completion; footer_*: the same
# for parquet footer reads (lines without a position); footers_before_groups:
# 1 when every footer read ended before the first other read was issued.
import csv, glob, os, sys

# The trace's resolution: start_s is rounded to the microsecond and
# latency_us cut to it, so an end rebuilt from them may lie up to 2 us after
# the read really ended. A thread that issues its next read as soon as one
# ends would then seem to have both in flight: for the peak, an end counts
# that much earlier (a read really in flight beside another overlaps it by
# far more: the reads here last tens of microseconds at the least).
RESOLUTION_S = 2e-6

def peak_mean(iv):
    if not iv:
        return 0, 0.0
    ev = []
    for s, e in iv:
        ev.append((s, 1))
        ev.append((max(s, e - RESOLUTION_S), -1))
    ev.sort(key=lambda x: (x[0], x[1]))     # an end before a start at the same instant
    cur = peak = 0
    area = 0.0
    last = ev[0][0]
    for t, d in ev:
        area += cur * (t - last)
        last = t
        cur += d
        peak = max(peak, cur)
    span = max(e for _, e in iv) - min(s for s, _ in iv)
    return peak, (area / span if span > 0 else float(peak))

reads = {}
for path in glob.glob(os.path.join(sys.argv[1], "trace-*.csv")):
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            lat = int(row["latency_us"])
            if lat == 0 and int(row["bytes"]) == 0:
                continue
            s = float(row["start_s"])
            key = (int(row["rank"]), int(row["epoch"]))
            kind = "footer" if row["position"] == "" else "data"
            reads.setdefault(key, {"footer": [], "data": []})[kind].append((s, s + lat / 1e6))
for (rank, epoch), r in sorted(reads.items()):
    p, m = peak_mean(r["data"])
    fp, _ = peak_mean(r["footer"])
    before = int(not r["footer"] or not r["data"] or max(e for _, e in r["footer"]) <= min(s for s, _ in r["data"]))
    print(rank, epoch, len(r["data"]), p, "%.1f" % m, len(r["footer"]), fp, before)
