#!/usr/bin/env bash
# every worker sends its host's processor name,
# the last processor's block of /proc/cpuinfo and /proc/meminfo in HELLO; the
# coordinator records one run_host_info row per worker host, and the results
# directory describes rank 0's host in summary.json and each rank's host in
# N_output.json from them, as DLIO does. Two workers on this machine join as
# hosts node-a and node-b (--host), so neither is the coordinator's host:
# before workers sent their hosts, summary.json had host_cpuinfo {} here.
. "$(dirname "$0")/lib.sh"

syn="dataset.data_folder=synthetic://hi dataset.num_files_train=16 dataset.record_length_bytes=4096
     dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.computation_time=0.001 train.epochs=1
     --accelerators 2 --workers 2 --bind tcp://$SB_LO:* --join-timeout 30"

# shellcheck disable=SC2086
( timeout 120 "$SHARDBENCH" run $syn --db h.db --results-dir res >sb.out 2>sb.err; echo $? >sb.rc ) &
ep=$(coordinator_endpoint sb.err)
timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host node-a >node-a.log 2>&1 &
timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host node-b >node-b.log 2>&1
wait
expect_eq "run: exit" "$(cat sb.rc)" 0
leaf=$(sed -n 's/^results of run 1: //p' sb.out)
[ -f "$leaf/summary.json" ] && pass "run: summary.json in $leaf" || fail "run: no summary.json (leaf '$leaf')"

coord=$(q h.db "SELECT coordinator_host FROM runs WHERE id = 1")
expect_eq "run_host_info: a row per worker host, and the coordinator's (no worker ran there)" \
    "$(q h.db "SELECT group_concat(host, ',') FROM (SELECT host FROM run_host_info WHERE run_id = 1 ORDER BY host)")" \
    "$(printf '%s\n' node-a node-b "$coord" | sort | paste -sd,)"

# each worker host's row holds this machine's /proc (the workers run here): the
# last processor's block of /proc/cpuinfo (its "cpu MHz" line left out: it
# changes from one read to the next), /proc/meminfo's keys and MemTotal line,
# uname -m; DLIO's lines_to_dict of the block equals that of the whole file
expect_eq "run_host_info: this machine's /proc in each worker host's row" "$(python3 - h.db <<'PY'
import os, sqlite3, sys

def dlio_dict(text):
    # DLIO's statscounter lines_to_dict, written here as it behaves: a line that
    # splits on ':' into exactly two parts gives the (stripped) key and value;
    # any other line stores the previous pair again; "processor" is left out;
    # a key seen again keeps its first place and takes the later value
    d, k, v = {}, None, None
    for line in text.split("\n"):
        parts = line.split(":")
        if len(parts) == 2:
            k, v = parts[0].strip(), parts[1].strip()
        if k is not None and k != "processor":
            d[k] = v
    return d

def no_mhz(text):
    return [l for l in text.split("\n") if not l.startswith("cpu MHz")]

cpuinfo = open("/proc/cpuinfo").read()
lines = cpuinfo.split("\n")
first = max(i for i, l in enumerate(lines) if l.split(":")[0].strip() == "processor")
last_block = "\n".join(lines[first:])
meminfo = open("/proc/meminfo").read()
memtotal = meminfo.split("\n")[0]
db = sqlite3.connect(sys.argv[1])
out = []
for host in ("node-a", "node-b"):
    processor, cpu, mem = db.execute("SELECT processor, cpuinfo, meminfo FROM run_host_info WHERE run_id = 1"
                                     " AND host = ?", (host,)).fetchone()
    out.append("%s:%d%d%d%d%d%d" % (
        host, processor == os.uname().machine, no_mhz(cpu) == no_mhz(last_block),
        sum(l.split(":")[0].strip() == "processor" for l in cpu.split("\n")) == 1,
        mem.split("\n")[0] == memtotal, list(dlio_dict(mem)) == list(dlio_dict(meminfo)),
        {k: v for k, v in dlio_dict(cpu).items() if k != "cpu MHz"}
        == {k: v for k, v in dlio_dict(cpuinfo).items() if k != "cpu MHz"}))
print(" ".join(out))
PY
)" "node-a:111111 node-b:111111"

# summary.json: rank 0's host; N_output.json: its rank's host; DLIO's parse of the row
expect_eq "summary.json and N_output.json: host_* of the rank's host, as DLIO parses them" "$(python3 - h.db "$leaf" <<'PY'
import json, sqlite3, sys

def dlio_dict(text):
    d, k, v = {}, None, None
    for line in text.split("\n"):
        parts = line.split(":")
        if len(parts) == 2:
            k, v = parts[0].strip(), parts[1].strip()
        if k is not None and k != "processor":
            d[k] = v
    return d

db = sqlite3.connect(sys.argv[1])
host_of = dict(db.execute("SELECT first_rank, host FROM run_workers WHERE run_id = 1"))
rows = {h: (p, c, m) for h, p, c, m in db.execute("SELECT host, processor, cpuinfo, meminfo FROM run_host_info"
                                                  " WHERE run_id = 1")}
out = []
s = json.load(open(sys.argv[2] + "/summary.json"))
p, c, m = rows[host_of[0]]
out.append("summary:%s:%d%d%d%d" % (s["hostname"], s["host_processor_name"] == p, s["host_cpuinfo"] == dlio_dict(c),
                                    list(s["host_cpuinfo"]) == list(dlio_dict(c)), s["host_meminfo"] == dlio_dict(m)))
for rank in (0, 1):
    o = json.load(open("%s/%d_output.json" % (sys.argv[2], rank)))
    p, c, m = rows[host_of[rank]]
    out.append("%d:%s:%d%d%d%d" % (rank, o["hostname"], o["host_processor_name"] == p, o["host_cpuinfo"] == dlio_dict(c),
                                   o["host_meminfo"] == dlio_dict(m), len(o["host_cpuinfo"]) > 3))
print(" ".join(out))
PY
)" "summary:$(q h.db "SELECT host FROM run_workers WHERE run_id = 1 AND first_rank = 0"):1111 0:$(q h.db "SELECT host FROM run_workers WHERE run_id = 1 AND first_rank = 0"):1111 1:$(q h.db "SELECT host FROM run_workers WHERE run_id = 1 AND first_rank = 1"):1111"
expect_eq "rank 0's host is a worker host" "$(q h.db "SELECT host IN ('node-a', 'node-b') FROM run_workers WHERE run_id = 1 AND first_rank = 0")" 1

# report RUN --results-dir writes the same host_* from the database
sb report 1 --db h.db --results-dir res2
expect_eq "report --results-dir: exit" "$SB_RC" 0
leaf2=$(cat sb.out)
expect_eq "report --results-dir: the same host_cpuinfo, host_meminfo, host_processor_name" "$(python3 - "$leaf" "$leaf2" <<'PY'
import json, sys
a, b = (json.load(open(d + "/summary.json")) for d in sys.argv[1:3])
print(all(a[k] == b[k] for k in ("host_cpuinfo", "host_meminfo", "host_processor_name")) and a["host_cpuinfo"] != {})
PY
)" True

# a line with two ':' counts for nothing in DLIO's parse (it splits into three
# parts): written into rank 0's host's row, report leaves it out and keeps the rest
h0=$(q h.db "SELECT host FROM run_workers WHERE run_id = 1 AND first_rank = 0")
q h.db "UPDATE run_host_info SET cpuinfo = cpuinfo || 'odd key : a : b' || char(10) || 'late key : c' || char(10) WHERE run_id = 1 AND host = '$h0'"
sb report 1 --db h.db --results-dir res3
expect_eq "report: a line of two ':' left out, the next line kept" "$SB_RC:$(python3 - "$(cat sb.out)" <<'PY'
import json, sys
c = json.load(open(sys.argv[1] + "/summary.json"))["host_cpuinfo"]
print("odd key" in c, c.get("late key"), list(c)[-1])
PY
)" "0:False c late key"

finish
