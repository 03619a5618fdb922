#!/usr/bin/env bash
# A KV-cache run read back: `report --csv trials|ranks|latency|run` (exact
# headers, a row per kv_trials / kv_ranks / kv_latency row, every value the
# table's, the derived columns recomputed here from the rows), the views of
# the other kind refused both ways with exit status 2, `compare` of two
# kvcache runs (each figure and its B/A ratio recomputed from the rows), of a
# kvcache and a train run (said to differ in kind, no KV-cache rows), and
# `runs` (a kvcache run's verdict is its storage check, its AU '-'), with a
# run refused by the storage check (a preloaded no-op posix_fadvise) among
# them. Real runs: 2 ranks on 1 worker, entries on this disk.
. "$(dirname "$0")/lib.sh"

small="kvcache.model=tiny-1b kvcache.duration_s=2 kvcache.pause_s=0 kvcache.cpu_mem_gb=0 kvcache.generation_mode=none
       kvcache.cache_dir=./kv"

# run 1: 2 users, 2 trials; run 2: 3 users, 1 trial; run 3: a train run; run 4: refused
sb kvcache $small kvcache.users=2 kvcache.trials=2 --accelerators 2 --local 1 --db t.db --progress off
expect_eq "run 1: exit status" "$SB_RC" 0
[ "$SB_RC" -eq 0 ] || tail -20 sb.err
cp sb.out run1.out
rm -rf kv
sb kvcache $small kvcache.users=3 kvcache.trials=1 --accelerators 2 --local 1 --db t.db --progress off
expect_eq "run 2: exit status" "$SB_RC" 0
rm -rf kv
sb run quickstart dataset.data_folder=synthetic://views train.epochs=1 --accelerators 1 --local 1 --db t.db
expect_eq "run 3 (train): exit status" "$SB_RC" 0
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD=$KV_NOOP_FADVISE timeout 120 "$SHARDBENCH" kvcache $small --local 1 --db t.db --progress off >sb.out 2>sb.err
expect_eq "run 4 (refused): exit status" "$?" 1
rm -rf kv
expect_eq "runs" "$(q t.db "SELECT group_concat(id || ':' || kind || ':' || status, ' ') FROM runs")" \
    "1:kvcache:succeeded 2:kvcache:succeeded 3:train:succeeded 4:kvcache:failed"
expect_eq "rows of run 1" "$(q t.db "SELECT (SELECT count(*) FROM kv_trials WHERE run_id = 1) || ':' ||
    (SELECT count(*) FROM kv_ranks WHERE run_id = 1) || ':' || ((SELECT count(*) FROM kv_latency WHERE run_id = 1) > 0)")" \
    "2:4:1"

# ---- the views' headers, exactly (docs/CLI.md lists the same)
trials_h="run_id,trial,started_at,finished_at,ranks,requests,generated,storage_read_bytes,storage_write_bytes,read_gib_per_s,write_gib_per_s,storage_p95_ms,write_device_p50_ms,write_device_p95_ms,write_device_p99_ms,read_device_p50_ms,read_device_p95_ms,read_device_p99_ms,tokens_per_s"
lat6 () { local w; for w in "$@"; do printf ',%s_mean_ms,%s_p50_ms,%s_p95_ms,%s_p99_ms,%s_p999_ms,%s_p9999_ms' $w $w $w $w $w $w; done; }
ranks_h="run_id,trial,rank,host,elapsed_s,started_at,finished_at,requests,generated,chatbot,coding,document,interactive,responsive,batch,users_chatbot,users_coding,users_document,users_interactive,users_responsive,users_batch,write_ops,read_ops,prefill_writes,decode_reads,cache_hits,cache_misses,multi_turn_hits,multi_turn_misses,storage_entries,cpu_entries,evictions,offloads_cpu,offloads_storage,system_prompt_hits,queue_max,storage_write_bytes,storage_read_bytes,cpu_write_bytes,cpu_read_bytes,read_gib_per_s,write_gib_per_s,storage_check$(lat6 write_device read_device request_storage request_e2e)"
latency_h="run_id,trial,rank,what,mean_ms,p50_ms,p95_ms,p99_ms,p999_ms,p9999_ms"
run_h="run_id,kind,workload,status,error,started_at,finished_at,accelerators,hosts,workers,option,model,users,duration_s,trials,cpu_mem_gb,max_concurrent_allocs,seed,generation_mode,kv_bytes_per_position,storage_check,read_gib_per_s,write_gib_per_s,storage_p95_ms,trials_finished,requests,tokens_per_s,division,division_reason"

for view in default trials ranks latency run; do
    if [ $view = default ]; then sb report 1 --csv --db t.db; else sb report 1 --csv $view --db t.db; fi
    expect_eq "--csv $view: exit status" "$SB_RC" 0
    cp sb.out "csv_$view.csv"
done
expect_eq "--csv: trials is the default" "$(cmp -s csv_default.csv csv_trials.csv && echo same)" same
expect_eq "--csv trials: header" "$(head -1 csv_trials.csv)" "$trials_h"
expect_eq "--csv ranks: header" "$(head -1 csv_ranks.csv)" "$ranks_h"
expect_eq "--csv latency: header" "$(head -1 csv_latency.csv)" "$latency_h"
expect_eq "--csv run: header" "$(head -1 csv_run.csv)" "$run_h"

# every row and value against the tables: a value stored is the table's (an
# integer as stored, a real with 6 decimals, NULL empty); a derived one is
# recomputed here from the rows
check () {
    /usr/bin/python3 - "$@" <<'EOF'
import csv, sqlite3, sys
view, path, run = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = sqlite3.connect('t.db')
db.row_factory = sqlite3.Row
rows = list(csv.DictReader(open(path, newline='')))
def cell(v):
    return '' if v is None else '%.6f' % v if isinstance(v, float) else str(v)
bad = []
def same(what, got, want):
    if got != want:
        bad.append('%s: %r != %r' % (what, got, want))
def lat(trial, rank, what):
    return db.execute('SELECT * FROM kv_latency WHERE run_id = ? AND trial = ? AND rank = ? AND what = ?',
                      (run, trial, rank, what)).fetchone()
ranks = db.execute('SELECT * FROM kv_ranks WHERE run_id = ? ORDER BY trial, rank', (run,)).fetchall()
trials = db.execute('SELECT * FROM kv_trials WHERE run_id = ? ORDER BY trial', (run,)).fetchall()
def tokens(trial):
    return sum(r['generated'] / r['elapsed_s'] for r in ranks if r['trial'] == trial and r['elapsed_s'] > 0)
def close(what, got, want):
    if got == '' or abs(float(got) - want) > 2e-6:
        bad.append('%s: %r != %.6f' % (what, got, want))
if view == 'trials':
    same('rows', len(rows), len(trials))
    for row, t in zip(rows, trials):
        for k in t.keys():
            same('trial %d %s' % (t['trial'], k), row[k], cell(t[k]))
        for w in ('write_device', 'read_device'):
            for p in ('p50', 'p95', 'p99'):
                vals = [lat(t['trial'], r['rank'], w)[p + '_ms'] for r in ranks if r['trial'] == t['trial']
                        and lat(t['trial'], r['rank'], w)]
                same('trial %d %s_%s' % (t['trial'], w, p), row['%s_%s_ms' % (w, p)], cell(max(vals) if vals else None))
        close('trial %d tokens_per_s' % t['trial'], row['tokens_per_s'], tokens(t['trial']))
elif view == 'ranks':
    same('rows', len(rows), len(ranks))
    for row, r in zip(rows, ranks):
        for k in r.keys():
            if k != 'results_json':
                same('%d/%d %s' % (r['trial'], r['rank'], k), row[k], cell(r[k]))
        same('no results_json', 'results_json' in row, False)
        for w in ('write_device', 'read_device', 'request_storage', 'request_e2e'):
            l = lat(r['trial'], r['rank'], w)
            for p in ('mean', 'p50', 'p95', 'p99', 'p999', 'p9999'):
                same('%d/%d %s_%s' % (r['trial'], r['rank'], w, p), row['%s_%s_ms' % (w, p)],
                     cell(l[p + '_ms'] if l else None))
elif view == 'latency':
    want = db.execute('SELECT * FROM kv_latency WHERE run_id = ? ORDER BY trial, rank, what', (run,)).fetchall()
    same('rows', len(rows), len(want))
    for row, l in zip(rows, want):
        for k in l.keys():
            same('%d/%d/%s %s' % (l['trial'], l['rank'], l['what'], k), row[k], cell(l[k]))
elif view == 'run':
    same('rows', len(rows), 1)
    row = rows[0]
    r = db.execute('SELECT id AS run_id, kind, workload, status, error, started_at, finished_at, accelerators, hosts,'
                   ' workers FROM runs WHERE id = ?', (run,)).fetchone()
    k = db.execute('SELECT * FROM kv_runs WHERE run_id = ?', (run,)).fetchone()
    for key in r.keys():
        same(key, row[key], cell(r[key]))
    for key in k.keys():
        if key != 'run_id':
            same(key, row[key], cell(k[key]))
    same('trials_finished', row['trials_finished'], str(len(trials)))
    same('requests', row['requests'], str(sum(t['requests'] for t in trials)))
    if trials:
        close('tokens_per_s', row['tokens_per_s'], sum(tokens(t['trial']) for t in trials) / len(trials))
    else:
        same('tokens_per_s', row['tokens_per_s'], '')
print('ok' if not bad else '; '.join(bad[:5]))
EOF
}
for view in trials ranks latency run; do
    expect_eq "--csv $view: every row and value is the tables'" "$(check $view csv_$view.csv 1)" ok
done
expect_eq "--csv run: the division and its reason" "$(tail -1 csv_run.csv | awk -F, '{ print $(NF-1) ":" $NF }')" \
    "invalid:duration 2 s: at least 30 s"
expect_eq "--csv run: as the summary says" "$(grep -c 'MLPerf Storage division: invalid (duration 2 s: at least 30 s)' run1.out)" 1
# the summary's trial rows and the CSV tell the same figures: counts exactly, and each figure the
# summary rounds (2, 4, 4 and 3 decimals) within half its last digit of the CSV's (itself rounded to
# 6 decimals: rounding that again may land on the other side of a tie, 0.255549 -> 0.255550 -> 0.2556)
expect_eq "--csv trials: the summary's rows" "$(/usr/bin/python3 - csv_trials.csv run1.out <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))[1:]
text = [l.split() for l in open(sys.argv[2]) if l.split() and l.split()[0].isdigit() and len(l.split()) >= 9]
bad = [] if len(rows) == len(text) and rows else ['%d CSV rows, %d summary rows' % (len(rows), len(text))]
for r, t in zip(rows, text):
    if (r[1], r[5]) != (t[0], t[2]):
        bad.append('trial %s: %s' % (r[1], t))
    for col, field, digits in ((18, 3, 2), (9, 4, 4), (10, 5, 4), (11, 6, 3)):
        if r[col] == '' or t[field] == '-':     # no figure (a trial without a completed request): both say so
            if (r[col], t[field]) != ('', '-'):
                bad.append('trial %s: CSV %r, summary %s' % (r[1], r[col], t[field]))
        elif abs(float(r[col]) - float(t[field])) > 0.5 * 10 ** -digits + 5e-7:
            bad.append('trial %s: CSV %s, summary %s' % (r[1], r[col], t[field]))
print('ok' if not bad else '; '.join(bad))
EOF
)" ok

# the refused run: its settings and check, no trial
sb report 4 --csv trials --db t.db
expect_eq "refused run: --csv trials: the header alone" "$(cat sb.out)" "$trials_h"
sb report 4 --csv run --db t.db
expect_eq "refused run: --csv run" "$SB_RC:$(check run sb.out 4)" "0:ok"
expect_eq "refused run: --csv run: check, no trial, division" "$(/usr/bin/python3 -c '
import csv
r = list(csv.DictReader(open("sb.out", newline="")))[0]
print(":".join(r[k] for k in ("status", "storage_check", "trials_finished", "requests", "tokens_per_s", "division",
                              "division_reason")))')" "failed:refused:0:0::invalid:duration 2 s: at least 30 s"

# ---- views of the other kind: refused, naming the views the run has
for view in epochs detail hosts checkpoints; do
    sb report 1 --csv $view --db t.db
    expect_eq "kvcache --csv $view: exit status, nothing on stdout" "$SB_RC:$(wc -c <sb.out)" "2:0"
    expect_eq "kvcache --csv $view: the message" "$(cat sb.err)" \
        "shardbench report: run 1 is a kvcache run: --csv $view describes training or checkpointing; its views are trials (the default), ranks, latency, run, endpoints"
done
sb report 1 --csv endpoints --db t.db
expect_eq "kvcache --csv endpoints: as any run (no S3 here)" "$SB_RC:$(cat sb.out)" \
    "0:run_id,endpoint,requests,bytes,errors,retries,mean_ms,p50_ms,p90_ms,p99_ms,max_ms"
for view in trials latency; do
    sb report 3 --csv $view --db t.db
    expect_eq "train --csv $view: exit status, nothing on stdout" "$SB_RC:$(wc -c <sb.out)" "2:0"
    expect_eq "train --csv $view: the message" "$(cat sb.err)" \
        "shardbench report: run 3 is a train run: --csv $view describes a kvcache run; its views are epochs (the default), ranks, detail, hosts, endpoints, run, checkpoints"
done
sb report 3 --csv --db t.db
expect_eq "train --csv: still its epochs" "$SB_RC:$(head -1 sb.out | cut -d, -f1-3):$(($(wc -l <sb.out) - 1))" \
    "0:run_id,epoch,samples:1"
sb report 3 --csv ranks --db t.db
expect_eq "train --csv ranks: still its ranks" "$SB_RC:$(head -1 sb.out | cut -d, -f1-4)" "0:run_id,epoch,rank,host"

# ---- compare of two kvcache runs: each figure recomputed from the rows, B/A of the unrounded ones
sb compare 1 2 --db t.db
expect_eq "compare 1 2: exit status" "$SB_RC" 0
cp sb.out cmp12.out
want=$(/usr/bin/python3 - <<'EOF'
import sqlite3
db = sqlite3.connect('t.db')
def fig(run):
    ranks = db.execute('SELECT trial, rank, requests, generated, elapsed_s, read_gib_per_s, write_gib_per_s, chatbot,'
                       ' coding, document, interactive, responsive, batch FROM kv_ranks WHERE run_id = ?',
                       (run,)).fetchall()
    trials = [t for (t,) in db.execute('SELECT trial FROM kv_trials WHERE run_id = ?', (run,))]
    def p95(what):      # None when no rank has the figure (no request completed): shown '-'
        return max((v for (v,) in db.execute('SELECT p95_ms FROM kv_latency WHERE run_id = ? AND what = ?',
                                              (run, what)) if v is not None), default=None)
    mean = lambda col: sum(sum(r[col] for r in ranks if r[0] == t) for t in trials) / len(trials)
    tok = sum(sum(r[3] / r[4] for r in ranks if r[0] == t and r[4] > 0) for t in trials) / len(trials)
    k = db.execute('SELECT storage_check, option, users FROM kv_runs WHERE run_id = ?', (run,)).fetchone()
    return [('storage check', k[0], None), ('MLPerf Storage division', 'invalid', None),
            ('kvcache option', k[1], '%.0f'), ('users per rank', k[2], '%.0f'),
            ('trials finished', len(trials), '%.0f'),
            ('storage read GiB/s (mean)', mean(5), '%.4f'), ('storage write GiB/s (mean)', mean(6), '%.4f'),
            ('storage p95 ms (largest rank)', p95('request_storage'), '%.3f'),
            ('write device p95 ms (largest rank)', p95('write_device'), '%.3f'),
            ('read device p95 ms (largest rank)', p95('read_device'), '%.3f'),
            ('requests completed', sum(r[2] for r in ranks), '%.0f'), ('tokens/s (mean)', tok, '%.2f')] + \
           [('requests ' + n, sum(r[7 + i] for r in ranks), '%.0f')
            for i, n in enumerate(('chatbot', 'coding', 'document', 'interactive', 'responsive', 'batch'))]
for (name, a, fmt), (_, b, _) in zip(fig(1), fig(2)):
    if fmt is None:
        print('  %-40s %16s %16s' % (name, a, b))
    else:
        ratio = '%.3f' % (b / a) if a and b is not None else '-'
        print('  %-40s %16s %16s %10s' % (name, '-' if a is None else fmt % a, '-' if b is None else fmt % b, ratio))
EOF
)
expect_eq "compare 1 2: the KV-cache rows" "$(sed -n '/^  storage check/,/^  requests batch/p' cmp12.out)" "$want"
expect_eq "compare 1 2: the model emulated" "$(grep '^  model ' cmp12.out | tr -s ' ')" " model tiny-1b tiny-1b"
expect_contains "compare 1 2: the settings that differ" cmp12.out "    kvcache.users                                         2                3"

# a kvcache and a train run: said to differ in kind, only what both have
sb compare 1 3 --db t.db
expect_eq "compare 1 3: exit status" "$SB_RC" 0
expect_contains "compare 1 3: kinds said to differ" sb.out \
    "these runs differ in kind (A kvcache, B train): only the figures at least two of them have are compared"
expect_eq "compare 1 3: no KV-cache row, no epochs row" \
    "$(grep -cE '^  (storage check|storage read|tokens/s|requests batch|epochs) ' sb.out)" 0
expect_eq "compare 1 3: the rows both have" "$(grep -E '^  (accelerators|hosts) ' sb.out | tr -s ' ')" \
    "$(printf ' accelerators 2 1 0.500\n hosts 1 1 1.000')"
# two kvcache runs and a train run: the KV-cache rows, C's '-'
sb compare 1 2 3 --db t.db
expect_eq "compare 1 2 3: exit status" "$SB_RC" 0
expect_eq "compare 1 2 3: users per rank, C has none" "$(grep '^  users per rank ' sb.out | tr -s ' ')" \
    " users per rank 2 3 - 1.500 -"

# ---- runs: a kvcache run's verdict is its storage check, its AU '-'
sb runs --db t.db
expect_eq "runs: exit status" "$SB_RC" 0
expect_eq "runs: AU and verdict" "$(awk 'NR > 1 { print $1, $2, $(NF-2), $(NF-1) }' sb.out)" \
    "$(q t.db "SELECT group_concat(id || ' ' || kind || ' ' || CASE WHEN kind = 'train' THEN printf('%.2f', train_au_mean_percentage) || ' ' || CASE passed WHEN 1 THEN 'PASS' ELSE 'FAIL' END ELSE '- ' || (SELECT storage_check FROM kv_runs k WHERE k.run_id = r.id) END, char(10)) FROM runs r")"
expect_eq "runs: the refused run says so" "$(awk '$1 == 4 { print $(NF-1) }' sb.out)" refused
sb runs --json --db t.db
expect_eq "runs --json: verdicts" "$(/usr/bin/python3 -c '
import json, sys
print(" ".join("%d:%s:%s" % (r["id"], r["train_au_mean_percentage"] if r["train_au_mean_percentage"] is None
                             else "%.6f" % r["train_au_mean_percentage"], r["verdict"]) for r in json.load(open("sb.out"))))')" \
    "1:None:$(q t.db "SELECT storage_check FROM kv_runs WHERE run_id = 1") 2:None:$(q t.db "SELECT storage_check FROM kv_runs WHERE run_id = 2") 3:$(q t.db "SELECT printf('%.6f', train_au_mean_percentage) FROM runs WHERE id = 3"):PASS 4:None:refused"

# ---- help
sb report --help
expect_contains "report --help: the kvcache views" sb.out "trials       one row per trial (its default)"
sb compare --help
expect_contains "compare --help: kvcache runs" sb.out "kvcache runs (two or more)"
finish
