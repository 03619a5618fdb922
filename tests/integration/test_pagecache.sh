#!/usr/bin/env bash
# O_DIRECT and the page cache , with real processes:
# - reader.odirect=true: strace on the worker shows every open of a data
#   file with O_DIRECT and every read of one at a 4096-aligned offset and of
#   a 4096-multiple length; verification passes and the bytes counted are
#   exactly the files' bytes (their sizes are not multiples of 4096);
# - without it: after the evictor (lib/storage/pagecache.h, through
#   pagecache_tool) fincore shows 0 resident bytes; the run's residency
#   figure is 0 for an epoch read from the device and 1 (flagged as served
#   from memory) for one read from the page cache;
# - a file system refusing O_DIRECT (an LD_PRELOAD shim) fails the run with
#   an error naming the file and reader.odirect.
# Needs strace and util-linux fincore; the data lives on a disk-backed file
# system (the scratch folder, else the build folder; tmpfs keeps its pages).
. "$(dirname "$0")/lib.sh"
: "${PAGECACHE_TOOL:?path of tests/integration/pagecache_tool}"
: "${ODIRECT_REFUSE:?path of the odirect_refuse preload library}"

for tool in strace fincore; do
    command -v $tool >/dev/null || { echo "FAIL - $tool missing (deploy/install-deps.sh --tests installs it)"; exit 1; }
done
# strace needs ptrace: refused in some containers
if ! strace -f -qq -o /dev/null true 2>/dev/null; then
    echo "skip: strace cannot trace here (ptrace refused)"
    exit 77
fi
fs=$(stat -f -c %T "$SCRATCH")
if [ "$fs" = tmpfs ] || [ "$fs" = ramfs ]; then
    disk=${SB_DISK_DIR:-}
    if [ -z "$disk" ] || [ "$(stat -f -c %T "$disk")" = tmpfs ] || [ "$(stat -f -c %T "$disk")" = ramfs ]; then
        echo "skip: the scratch folder is on $fs and no disk-backed folder was given (SB_DISK_DIR)"
        exit 77
    fi
    DATA=$(mktemp -d "$disk/sb-pagecache-data.XXXXXX")
    trap 'rm -rf "$SCRATCH" "$DATA"' EXIT
else
    DATA=$SCRATCH/data
fi
echo "data on $(stat -f -c %T "$DATA" 2>/dev/null || echo "$fs"): $DATA"

REAL_WORKER=$SHARDBENCH_WORKER
# the worker under strace: opens and reads of every thread, one file per
# thread (no call split by another thread's), fds shown with their paths
mkdir trace
cat >traced-worker <<EOF
#!/usr/bin/env bash
exec strace -ff -qq -y -e trace=open,openat,pread64 -o "$SCRATCH/trace/worker" "$REAL_WORKER" "\$@"
EOF
chmod +x traced-worker

files=32
common="dataset.data_folder=$DATA dataset.num_files_train=$files dataset.record_length_bytes=65536
        dataset.record_length_bytes_stdev=3000 reader.batch_size=4 train.epochs=2 train.computation_time=0"
sb datagen $common --accelerators 2 --local 1 --db p.db
expect_eq "datagen" "$SB_RC" 0
dataset_bytes=$(cat "$DATA"/train/img_* | wc -c)
expect_eq "sizes not all multiples of 4096" "$(for f in "$DATA"/train/img_*; do echo $(( $(stat -c %s "$f") % 4096 != 0 )); done | sort -u | tr '\n' ' ')" "1 "

# --- reader.odirect=true, verified ---------------------------------------
SHARDBENCH_WORKER=$PWD/traced-worker sb run $common reader.odirect=true reader.verify=true --accelerators 2 --local 1 --db p.db
expect_eq "odirect: exit" "$SB_RC" 0
run=$(q p.db "SELECT max(id) FROM runs")
cat trace/worker.* >worker.trace
grep -E 'open(at)?\(.*/train/img_' worker.trace >opens.txt
expect_eq "odirect: one open per sample (2 epochs x $files)" "$(wc -l <opens.txt)" $((2 * files))
expect_eq "odirect: every data open has O_DIRECT" "$(grep -vc O_DIRECT opens.txt)" 0
grep -E 'pread64\([0-9]+<[^>]*/train/img_' worker.trace >reads.txt
# pread64(FD<path>, "..."..., COUNT, OFFSET) = N
bad=$(sed -E 's/.*, ([0-9]+), ([0-9]+)\) += .*/\1 \2/' reads.txt | awk '$1 % 4096 || $2 % 4096' | wc -l)
expect_eq "odirect: reads traced, each one whole" "$([ "$(wc -l <reads.txt)" -ge $((2 * files)) ] && echo yes):$(grep -c unfinished reads.txt)" yes:0
expect_eq "odirect: every read 4096-aligned in offset and length" "$bad" 0
expect_eq "odirect: bytes counted are the files' bytes, each epoch" \
    "$(q p.db "SELECT group_concat(bytes, ' ') FROM epochs WHERE run_id = $run")" "$dataset_bytes $dataset_bytes"
expect_eq "odirect: residency not sampled (reads bypass the cache)" \
    "$(q p.db "SELECT group_concat(checked_bytes || ':' || ifnull(resident_fraction, 'null') || ':' || ifnull(from_memory, 'null'), ' ') FROM epochs WHERE run_id = $run")" \
    "0:null:null 0:null:null"
expect_contains "odirect: summary shows no cached share" sb.out "      2         32"

# --- samples inside files (4 per file): ranges that start and end off the
# 4096 grid are widened for O_DIRECT and cut back: verified, and the bytes
# counted equal those of a buffered run
multi="dataset.data_folder=$DATA/multi dataset.num_files_train=16 dataset.num_samples_per_file=4
       dataset.record_length_bytes=10000 dataset.record_length_bytes_stdev=0 reader.batch_size=4 train.epochs=1
       train.computation_time=0"
sb run $multi reader.verify=true --accelerators 2 --local 1 --db m.db
expect_eq "4 per file, buffered: exit" "$SB_RC" 0
buffered=$(q m.db "SELECT samples || ':' || bytes FROM epochs WHERE run_id = (SELECT max(id) FROM runs)")
rm -f trace/*
SHARDBENCH_WORKER=$PWD/traced-worker sb run $multi reader.verify=true reader.odirect=true --accelerators 2 --local 1 --db m.db
expect_eq "4 per file, O_DIRECT: exit" "$SB_RC" 0
expect_eq "4 per file, O_DIRECT: samples and bytes as buffered" \
    "$(q m.db "SELECT samples || ':' || bytes FROM epochs WHERE run_id = (SELECT max(id) FROM runs)")" "$buffered"
cat trace/worker.* | grep -E 'pread64\([0-9]+<[^>]*/train/img_' >reads4.txt
expect_eq "4 per file, O_DIRECT: reads at offsets other than 0, all whole" \
    "$(sed -E 's/.*, ([0-9]+), ([0-9]+)\) += .*/\2/' reads4.txt | awk '$1 > 0' | wc -l | awk '{print ($1 > 0)}'):$(grep -c unfinished reads4.txt)" 1:0
expect_eq "4 per file, O_DIRECT: every read 4096-aligned" \
    "$(sed -E 's/.*, ([0-9]+), ([0-9]+)\) += .*/\1 \2/' reads4.txt | awk '$1 % 4096 || $2 % 4096' | wc -l)" 0

# --- the evictor, then a run through the page cache ---------------------
( cd "$DATA/train" && ls img_* ) >names.txt
"$PAGECACHE_TOOL" evict "$DATA/train" 4 $(cat names.txt) >evict.out 2>&1
expect_eq "evictor: all evicted" "$?:$(cat evict.out)" "0:evicted $files failed 0"
expect_eq "evictor: fincore shows 0 resident bytes" \
    "$(fincore --bytes --noheadings --output RES "$DATA"/train/img_* | awk '{s += $1} END {print s}')" 0
# shardbench.drop_page_cache=false: epoch 2 finds epoch 1's pages
sb run $common shardbench.drop_page_cache=false --accelerators 2 --local 1 --db p.db
expect_eq "cached run: exit" "$SB_RC" 0
run=$(q p.db "SELECT max(id) FROM runs")
expect_eq "cached run: every byte checked, epoch 1 from the device, epoch 2 from memory" \
    "$(q p.db "SELECT group_concat(epoch || ':' || (checked_bytes = bytes) || ':' || resident_bytes || ':' || resident_fraction || ':' || from_memory, ' ') FROM epochs WHERE run_id = $run")" \
    "1:1:0:0.0:0 2:1:$dataset_bytes:1.0:1"
expect_eq "cached run: per-rank rows add up" \
    "$(q p.db "SELECT count(*) FROM epochs e WHERE run_id = $run AND resident_bytes = (SELECT sum(resident_bytes) FROM rank_epochs r WHERE r.run_id = e.run_id AND r.epoch = e.epoch) AND checked_bytes = (SELECT sum(checked_bytes) FROM rank_epochs r WHERE r.run_id = e.run_id AND r.epoch = e.epoch)")" 2
expect_contains "cached run: epoch 2 flagged" sb.out "100.0 *"
expect_contains "cached run: flag explained" sb.out "* served from memory: at least half the bytes checked were in the page cache"
expect_contains "cached run: DLIO's potential_caching" sb.out "potential_caching: host"
"$SHARDBENCH" report "$run" --json --db p.db >r.json 2>r.err
expect_eq "json: per-epoch fraction and flag, potential_caching per host" \
    "$(python3 -c 'import json; d = json.load(open("r.json")); print([(e["resident_fraction"], e["served_from_memory"]) for e in d["shardbench"]["epochs"]], d["potential_caching"], len(d["host_memory_GB"]))')" \
    "[(0.0, False), (1.0, True)] [1] 1"
expect_eq "after the run: pages resident" \
    "$(fincore --bytes --noheadings --output RES "$DATA"/train/img_* | awk '{s += $1} END {print (s > 0)}')" 1
# the default (shardbench.drop_page_cache: true): every file's pages are
# dropped at its first read of each epoch, so with every byte resident before
# the run both epochs read from the device, as DLIO's drop_caches intends
expect_eq "dropping run: every file resident before it (whole pages)" \
    "$(fincore --bytes --noheadings --output RES "$DATA"/train/img_* | awk -v d="$dataset_bytes" '{s += $1} END {print (s >= d)}')" 1
sb run $common --accelerators 2 --local 1 --db p.db
expect_eq "dropping run: exit" "$SB_RC" 0
run=$(q p.db "SELECT max(id) FROM runs")
expect_eq "dropping run: every byte checked, none resident in either epoch" \
    "$(q p.db "SELECT group_concat(epoch || ':' || (checked_bytes = bytes) || ':' || resident_bytes || ':' || resident_fraction || ':' || from_memory, ' ') FROM epochs WHERE run_id = $run")" \
    "1:1:0:0.0:0 2:1:0:0.0:0"
expect_eq "dropping run: no epoch flagged" "$(grep -c 'served from memory' sb.out)" 0
"$PAGECACHE_TOOL" evict "$DATA/train" 3 $(cat names.txt) >evict.out 2>&1
expect_eq "evicted again" "$?:$(cat evict.out)" "0:evicted $files failed 0"
expect_eq "evicted again: fincore 0" \
    "$(fincore --bytes --noheadings --output RES "$DATA"/train/img_* | awk '{s += $1} END {print s}')" 0
first=$(head -1 names.txt)
expect_eq "residency after eviction: 0 of the file's bytes" \
    "$("$PAGECACHE_TOOL" residency "$DATA/train/$first")" "0 $(stat -c %s "$DATA/train/$first")"
"$PAGECACHE_TOOL" evict "$DATA/train" 2 "$first" no-such.npz >evict.out 2>evict.err
expect_eq "evictor: a missing file is counted" "$?:$(cat evict.out)" "1:evicted 1 failed 1"
expect_contains "evictor: the error names it" evict.err "open no-such.npz: No such file or directory (under $DATA/train)"

# --- a file system refusing O_DIRECT --------------------------------------
cat >refusing-worker <<EOF
#!/usr/bin/env bash
export LD_PRELOAD="$ODIRECT_REFUSE"
# a sanitized worker: its runtime need not come first
export ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}verify_asan_link_order=0"
exec "$REAL_WORKER" "\$@"
EOF
chmod +x refusing-worker
SHARDBENCH_WORKER=$PWD/refusing-worker sb run $common reader.odirect=true --accelerators 2 --local 1 --db p.db
expect_eq "refused: run fails" "$SB_RC" 1
expect_contains "refused: error names the file and the key" sb.out "with O_DIRECT (reader.odirect: true): Invalid argument: its file system refuses direct I/O"
expect_contains "refused: error names a data file" sb.out "$DATA/train/img_"
run=$(q p.db "SELECT max(id) FROM runs")
expect_eq "refused: recorded" "$(q p.db "SELECT status, (SELECT count(*) FROM errors WHERE run_id = $run AND op = 'read' AND errno_val = 22 AND message LIKE '%reader.odirect: true%') > 0 FROM runs WHERE id = $run")" "failed|1"
# the same shim, without odirect: nothing asks for O_DIRECT, the run succeeds
SHARDBENCH_WORKER=$PWD/refusing-worker sb run $common --accelerators 2 --local 1 --db p.db
expect_eq "refusing file system without odirect: succeeds" "$SB_RC" 0

finish
