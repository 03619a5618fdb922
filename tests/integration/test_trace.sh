#!/usr/bin/env bash
# shardbench.trace: every read of every rank, one CSV line each, checked
# against the order of shardbench's global sampler (lib/dataset/shard.h, no
# shuffle: rank r reads samples r*k .. r*k + steps*batch - 1, k = floor(S/R)):
# 20 files, 3 ranks, batch 2, 2 epochs: k = 6, 3 steps, 6 reads per rank per
# epoch, 2 samples dropped. Once on DLIO names (workers derive keys and
# sizes), once on the same files renamed (workers ask for catalog entries in
# pages, and read the renamed files), over 1 and 2 workers.
. "$(dirname "$0")/lib.sh"

common="dataset.num_files_train=20 dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=512
        reader.batch_size=2 reader.sample_shuffle=off train.epochs=2 train.computation_time=0
        shardbench.sampler=global --accelerators 3"

check_trace () {    # LABEL FOLDER DB WORKERS
    local label=$1 folder=$2 db=$3 workers=$4
    expect_eq "$label: exit status" "$SB_RC" 0
    expect_eq "$label: one trace file per worker" "$(ls trace | wc -l)" "$workers"
    expect_eq "$label: header" "$(head -qn1 trace/* | sort -u)" \
        "rank,epoch,step,position,file_index,key,offset,length,start_s,latency_us,bytes,sample"
    # the catalog's keys in name order: file_index i is the i-th
    (cd "$folder" && find train -type f | LC_ALL=C sort) >keys.txt
    python3 - "$label" keys.txt "$folder" trace/* >check.out <<'PY'
import csv, os, sys
label, keys_file, folder, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
keys = open(keys_file).read().split()
rows = []
for f in files:
    with open(f) as fh:
        rows += list(csv.DictReader(fh))
want = {}
S, R, B, E = 20, 3, 2, 2
k = S // R
steps = k // B
for e in range(1, E + 1):
    for r in range(R):
        for p in range(steps * B):
            want[(r, e, p)] = r * k + p
got = {}
problems = []
for row in rows:
    key = (int(row['rank']), int(row['epoch']), int(row['position']))
    if key in got:
        problems.append('position read twice: %s' % (key,))
    got[key] = row
    fi = int(row['file_index'])
    if int(row['step']) != key[2] // B:
        problems.append('step of %s: %s' % (key, row['step']))
    if keys[fi] != row['key']:
        problems.append('key of file %d: %s, catalog has %s' % (fi, row['key'], keys[fi]))
    size = os.path.getsize(os.path.join(folder, row['key']))
    if int(row['offset']) != 0 or int(row['length']) != size or int(row['bytes']) != size:
        problems.append('range of %s: %s+%s, %s bytes, file has %d' % (row['key'], row['offset'], row['length'], row['bytes'], size))
if set(got) != set(want):
    problems.append('positions: %d traced, %d expected' % (len(got), len(want)))
for key, sample in want.items():
    if key in got and int(got[key]['file_index']) != sample:
        problems.append('rank %d epoch %d position %d read file %s, the global order says %d' % (key + (got[key]['file_index'], sample)))
print('%d lines, %d problems' % (len(rows), len(problems)))
for p in problems[:10]:
    print(p)
PY
    expect_eq "$label: every read where the global order puts it" "$(head -1 check.out)" "36 lines, 0 problems"
    [ "$(head -1 check.out)" = "36 lines, 0 problems" ] || head -5 check.out
    expect_eq "$label: epochs record 2 dropped, 0 files unused" \
        "$(q "$db" "SELECT group_concat(samples || ':' || dropped || ':' || unused_files, ' ') FROM epochs WHERE run_id = (SELECT max(id) FROM runs)")" \
        "18:2:0 18:2:0"
    expect_eq "$label: sampler recorded" "$(q "$db" "SELECT sampler FROM runs WHERE id = (SELECT max(id) FROM runs)")" global
}

mkdir -p trace
sb run dataset.data_folder=./data shardbench.trace=./trace $common --local 1 --db t.db
check_trace "DLIO names, 1 worker" data t.db 1
expect_contains "DLIO names: workers derive them" sb.err "catalog names derived by workers, sizes the generator's"
rm -f trace/*
sb run dataset.data_folder=./data shardbench.trace=./trace $common --local 3 --db t.db
check_trace "DLIO names, 3 workers" data t.db 3
expect_eq "3 workers: barrier's own cost recorded" \
    "$(q t.db "SELECT count(*) FROM epochs WHERE run_id = (SELECT max(id) FROM runs) AND barrier_own_p50_ms >= 0")" 2

# the same files under other names, in another order: the catalog is paged
mkdir -p renamed/train
i=0
for f in $(cd data/train && ls | LC_ALL=C sort); do
    cp "data/train/$f" "renamed/train/sample-$(( (i * 7) % 20 + 100 )).npz"
    i=$((i + 1))
done
rm -f trace/*
sb run dataset.data_folder=./renamed shardbench.trace=./trace $common --local 3 --db r.db
check_trace "renamed files, 3 workers" renamed r.db 3
expect_contains "renamed: entries served in pages" sb.err "catalog names served in pages, sizes served in pages"

# a trace folder that cannot be written fails the run, naming it
sb run dataset.data_folder=./data shardbench.trace=./missing $common --local 1 --db t.db
expect_eq "trace folder missing: exit 1" "$SB_RC" 1
expect_contains "trace folder missing: named" sb.err "shardbench.trace: cannot create ./missing/trace-"
finish
