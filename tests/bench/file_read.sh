#!/usr/bin/env bash
# File reads side by side with fio: the same files, read cold by
# fio and by shardbench with each file engine, split between jobs the same
# way, at several queue depths:
#   file    shardbench engine file (a pread thread per read in flight)
#           vs fio ioengine=psync, numjobs=QD (one read in flight per job)
#   direct  shardbench engine direct (O_DIRECT, reader.odirect: true)
#           vs fio ioengine=psync --direct=1, numjobs=QD
#   uring   shardbench engine uring (one ring, QD reads in flight)
#           vs fio ioengine=io_uring, iodepth=QD, numjobs=1
# Each object is read whole with one read (fio bs and shardbench's
# io_buffer_bytes are the object size). shardbench writes the dataset once
# (datagen, DLIO names under DIR/dSIZE/train/). shardbench's J read
# threads read as DLIO's loader workers do: batch q (files qB .. qB+B-1, B
# = min(64, files / J)) on thread q mod J, its files one after another,
# with a prefetch window of the whole epoch so no thread waits for another
# (fio's jobs do not); fio job k of J reads the same files in the same
# order (the batches q with q mod J = k), through hard links named as fio
# names its files (make_links below).
# Before every run (fio or shardbench) the files are evicted from the page
# cache with vmtouch -e; direct runs bypass it anyway. shardbench runs
# train, one epoch, 1 rank on 1 worker, computation_time 0, the files in
# index order (shardbench.sampler: global, shuffles off), its own eviction off
# (shardbench.drop_page_cache: false, vmtouch did it), and
# its MB/s and objects/s are the epoch's (first read's start to last
# read's end) from the result database.
#
# usage: tests/bench/file_read.sh [BUILD_DIR]            (default: build)
# env:   DIR (/var/tmp/sb-file-read) a folder on the disk to measure (not a
#        tmpfs), TOTAL_MIB (2048) of each object size, SIZES ("128k 1m"),
#        QDS ("1 16 64"), ENGINES ("file direct uring"), BAR (0.95),
#        REPEAT (5: each row is measured in that many turns, a run of fio
#        and one of shardbench each, fio first in odd turns and shardbench
#        first in even ones, against the noise of a shared machine),
#        KEEP (0: remove the dataset at the end; 1: keep it for the next run),
#        OPENFILES (empty: fio's default, every file of a job open from its
#        start; 1: fio opens each file when it reads it and closes it after,
#        as DLIO and shardbench open a file per sample),
#        URING_KEY (the workload key that picks the uring engine), NICE
#        (e.g. -10: fio and shardbench run at that niceness, ahead of
#        other work on a shared machine; needs root for a negative value),
#        BUSY (0; 1: shardbench also writes its per-read trace, to
#        /dev/shm when there is one, and a column gives how much of its
#        depth it kept busy: the sum of its read times over the epoch's
#        duration x the depth (threads, or uring's QD), and the least busy
#        read thread's sum over the duration (pool engines), medians of
#        the turns. It tells whether a gap to fio is time the
#        threads spend between reads or reads that take longer. The trace
#        costs shardbench a line of CPU work per read: compare ratios
#        from runs without it)
# Needs fio, vmtouch and sqlite3 (deploy/install-deps.sh --bench).
# Prints a markdown table: engine, size, QD, fio MB/s, fio IOPS, shardbench
# MB/s, IOPS (each the best of REPEAT runs), ratio (the lower of the MB/s and
# IOPS ratios of the bests), the same ratio of the medians of the REPEAT
# runs (a run served from the host's cache moves a best, not a median), the
# paired ratio (each turn's own ratio, the two runs of a turn sharing the
# machine's state of the moment: their median and its 95 % confidence
# interval from the order statistics, from 6 turns on), the disk's
# requests per file (the medians of fio's and of shardbench's runs, from
# /proc/diskstats: 2 when each read was split in two), the load, and the
# verdict on the bests' ratio: ok, "below (within noise)" when the paired
# ratio's interval reaches BAR, else below; exits 1 when a run fails or a
# row is not ok.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
sb=$build/coordinator/shardbench
[ -x "$sb" ] && [ -x "$build/worker/shardbench-worker" ] || { echo "build first: $sb" >&2; exit 1; }
for tool in fio vmtouch sqlite3 python3; do
    command -v $tool >/dev/null || { echo "$tool is missing (deploy/install-deps.sh --bench installs it)" >&2; exit 1; }
done
dir=${DIR:-/var/tmp/sb-file-read}
total_mib=${TOTAL_MIB:-2048}
sizes=${SIZES:-128k 1m}
qds=${QDS:-1 16 64}
engines=${ENGINES:-file direct uring}
bar=${BAR:-0.95}
repeat=${REPEAT:-5}
openfiles=${OPENFILES-}
busy=${BUSY:-0}
uring_key=${URING_KEY:-storage.engine=uring}
prio=()
[ -z "${NICE:-}" ] || prio=(nice -n "$NICE")
mkdir -p "$dir"
fstype=$(findmnt -no FSTYPE -T "$dir" 2>/dev/null || stat -f -c %T "$dir")
case $fstype in tmpfs|ramfs) echo "$dir is on $fstype: put DIR on a disk (page cache eviction means nothing there)" >&2; exit 1 ;; esac
work=$(mktemp -d "$dir/run.XXXXXX")
# the block device under DIR, as /proc/diskstats names it (empty: none
# found, e.g. a network file system): its reads completed are counted
# around every run
disk=$(basename "$(df -P "$dir" | awk 'NR==2 {print $1}')")
awk -v d="$disk" '$3 == d {found = 1} END {exit !found}' /proc/diskstats 2>/dev/null || disk=
tracedir=
if [ "$busy" = 1 ]; then
    tracedir=$(mktemp -d /dev/shm/sb-trace.XXXXXX 2>/dev/null || mktemp -d "$work/trace.XXXXXX")
fi
cleanup () {
    rm -rf "$work"
    [ -z "$tracedir" ] || rm -rf "$tracedir"
    [ "${KEEP:-0}" = 1 ] || rm -rf "$dir"/d128k "$dir"/d1m "$dir"/links-*
}
trap cleanup EXIT
db=$work/fr.db
q () { sqlite3 -batch -noheader "$db" "$1"; }

bytes_of () { case $1 in *k) echo $(( ${1%k} * 1024 )) ;; *m) echo $(( ${1%m} * 1048576 )) ;; *) echo "$1" ;; esac; }
# record_dims (uint8) of an object of N bytes: DLIO's raw file is exactly that
dims_of () { python3 -c "import math; n=$1; a=2**(int(math.log2(n))//2); print('[%d, %d]' % (n//a, a))"; }

workload () {   # SIZE: the workload of that object size
    local size=$1 n=$2 bytes
    bytes=$(bytes_of "$size")
    cat >"$work/w-$size.yaml" <<EOF
model:
  name: file_read_$size
framework: pytorch
workflow:
  generate_data: false
  train: true
dataset:
  data_folder: $dir/d$size
  format: indexed_binary
  num_files_train: $n
  num_samples_per_file: 1
  record_length_bytes: $bytes
  record_dims: $(dims_of "$bytes")
reader:
  data_loader: pytorch
  batch_size: 64
  prefetch_size: 2
  read_threads: 1
train:
  epochs: 1
  computation_time: 0
  seed: 1
shardbench:
  accelerators: 1
  sampler: global
  drop_page_cache: false
  io_buffer_bytes: $bytes
EOF
}

# fio's job k of J reads the files of the batches q of B files with
# q mod J = k, in the order of the files (shardbench's read thread k's:
# file_shuffle off): DIR/links-SIZE-J-bB/r.K.F, fio's own names for file F
# of job K of the jobs named r, are hard links to file i of batch q = i / B
# with K = q mod J and F = (q / J) x B + i mod B (the same inodes, so the
# same page cache). fio goes through a job's files in F order
# (file_service_type=sequential), not in the folder's (hashed) order.
make_links () {   # SIZE J FILES B
    python3 - "$dir/d$1/train" "$dir/links-$1-$2-b$4" "$2" "$3" "$4" <<'EOF'
import os, re, sys
train, links, jobs, n, b = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
os.makedirs(links, exist_ok=True)
for name in os.listdir(train):
    m = re.fullmatch(r"img_(\d+)_of_%d\.indexed_binary" % n, name)
    if m:
        i = int(m.group(1))
        q = i // b
        os.link(os.path.join(train, name), os.path.join(links, "r.%d.%d" % (q % jobs, q // jobs * b + i % b)))
EOF
}

evict () { vmtouch -e -q "$1" >/dev/null 2>&1 || vmtouch -e "$1" >/dev/null; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
echo "disk: $(df -P "$dir" | awk 'NR==2 {print $1}') ($fstype), $(lsblk -dno NAME,SIZE,ROTA,MODEL 2>/dev/null | grep -v '^zram\|^loop' | head -3 | tr '\n' ';' | sed 's/;$//')"
echo "fio: $(fio --version); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: tests/bench/file_read.sh (DIR=$dir TOTAL_MIB=$total_mib SIZES='$sizes' QDS='$qds' ENGINES='$engines' REPEAT=$repeat OPENFILES='$openfiles'${NICE:+ NICE=$NICE}${BUSY:+ BUSY=$busy})"
echo

# the datasets (once; KEEP=1 keeps them for the next run)
for size in $sizes; do
    bytes=$(bytes_of "$size")
    n=$(( total_mib * 1048576 / bytes ))
    workload "$size" "$n"
    have=$( (find "$dir/d$size/train" -maxdepth 1 -name "img_*_of_$n.indexed_binary" -size "${bytes}c" 2>/dev/null || true) | wc -l)
    if [ "$have" != "$n" ]; then
        rm -rf "$dir/d$size"
        "$sb" run "$work/w-$size.yaml" workflow.generate_data=true workflow.train=false --db "$db" --progress off \
            >"$work/gen.out" 2>"$work/gen.err" || { echo "datagen $size failed:"; tail -5 "$work/gen.err"; exit 1; }
    fi
    sync
done

# Reads the disk has completed (device requests, after merges); 0 without
# a disk.
disk_reads () { [ -n "$disk" ] && awk -v d="$disk" '$3 == d {print $4}' /proc/diskstats || echo 0; }

# One run of fio, then of shardbench, for the row being measured: each
# appends "MB/s,IOPS,device requests" to its list, or sets failed and
# returns 1.
fio_once () {
    local before
    before=$(disk_reads)
    if ! "${prio[@]}" fio "${fio_args[@]}" "${jobs[@]}" >"$work/fio.json" 2>"$work/fio.err"; then
        failed="fio failed: $(head -c 120 "$work/fio.err")"
        return 1
    fi
    local mb iops
    read -r mb iops < <(python3 -c "
import json
t = open('$work/fio.json').read()
j = json.loads(t[t.index('{'):])['jobs'][0]['read']   # after any line fio prints first
print('%.1f %.0f' % (j['bw_bytes'] / 1e6, j['iops']))")
    fio_runs="$fio_runs $mb,$iops,$(( $(disk_reads) - before ))"
}
sb_once () {
    local before traced=()
    if [ -n "$tracedir" ]; then
        rm -f "$tracedir"/*
        traced=(shardbench.trace="$tracedir")
    fi
    before=$(disk_reads)
    if ! "${prio[@]}" "$sb" run "$work/w-$size.yaml" "${sb_args[@]}" "${traced[@]}" --db "$db" --progress off \
            >"$work/sb.out" 2>"$work/sb.err"; then
        failed="shardbench failed: $(grep -m1 'error' "$work/sb.err" | cut -c1-120)"
        return 1
    fi
    local id
    id=$(q "SELECT max(id) FROM runs WHERE kind = 'train'")
    sb_runs="$sb_runs $(q "SELECT printf('%.1f,%.0f', mb_per_s, samples_per_s) FROM epochs WHERE run_id = $id AND epoch = 1"),$(( $(disk_reads) - before ))"
    [ -z "$tracedir" ] || sb_busy="$sb_busy $(depth_used "$(q "SELECT duration_s FROM epochs WHERE run_id = $id AND epoch = 1")")"
}

# How much of its depth a shardbench run kept busy, from its trace: the
# sum of the read times (latency_us) over duration x depth, and the least
# busy read thread's sum over duration (a pool engine's thread k reads the
# batches q with q mod jq = k; "-" for uring, whose one ring reads them
# all). Prints "ALL,LEAST".
depth_used () {   # DURATION_S
    python3 - "$tracedir" "$1" "$batch" "$jq" "$qd" "$engine" <<'PY'
import csv, glob, sys
folder, duration, batch, threads, depth, engine = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
lanes = {}
for name in glob.glob(folder + '/trace-*.csv'):
    for row in csv.DictReader(open(name, newline='')):
        lane = int(row['position']) // batch % threads
        lanes[lane] = lanes.get(lane, 0.0) + int(row['latency_us']) / 1e6
width = depth if engine == 'uring' else threads
least = '-' if engine == 'uring' else '%.3f' % (min(lanes.get(k, 0.0) for k in range(threads)) / duration)
print('%.3f,%s' % (sum(lanes.values()) / (duration * width), least))
PY
}

busy_head= busy_rule=
[ -z "$tracedir" ] || { busy_head=" shardbench depth used (all / least busy thread) |"; busy_rule="---|"; }
echo "| engine | size | QD | fio MB/s | fio IOPS | shardbench MB/s | shardbench IOPS | ratio | median ratio | paired ratio (95 % CI) | device requests per file (fio / shardbench) |$busy_head load | |"
echo "|---|---|---|---|---|---|---|---|---|---|---|$busy_rule---|---|"
status=0
for size in $sizes; do
    bytes=$(bytes_of "$size")
    n=$(( total_mib * 1048576 / bytes ))
    train=$dir/d$size/train
    for qd in $qds; do
        for engine in $engines; do
            fio_args=(--rw=read --bs="$bytes" --group_reporting --output-format=json --file_service_type=sequential)
            [ -z "$openfiles" ] || fio_args+=(--openfiles="$openfiles")
            sb_args=(reader.read_threads="$qd")
            # reader.read_threads 1 is raised as DLIO raises it, to min(cores
            # / ranks, 8) threads: the pread engines then have that many reads
            # in flight, and fio gets as many jobs (the row says so)
            jq=$qd label=$qd
            if [ "$engine" != uring ] && [ "$qd" = 1 ]; then
                jq=$(( $(nproc) < 8 ? $(nproc) : 8 ))
                [ "$jq" = 1 ] || label="1 ($jq threads)"
            fi
            case $engine in
                file)   fio_args+=(--ioengine=psync) ;;
                direct) fio_args+=(--ioengine=psync --direct=1); sb_args+=(reader.odirect=true) ;;
                uring)  fio_args+=(--ioengine=io_uring --iodepth="$qd")
                        sb_args+=("$uring_key" storage.uring.iodepth="$qd") ;;
            esac
            [ "$engine" = uring ] && jq=1
            # batches of B files, each read whole by one of the jq threads
            # (jobs), as many for each; the whole epoch in the prefetch window
            batch=$(( n / jq < 64 ? n / jq : 64 ))
            sb_args+=(reader.batch_size="$batch" reader.prefetch_size=$(( n / batch )))
            [ -d "$dir/links-$size-$jq-b$batch" ] || make_links "$size" "$jq" "$n" "$batch"
            jobs=(--name=r --directory="$dir/links-$size-$jq-b$batch" --numjobs="$jq" --nrfiles=$(( n / jq ))
                  --filesize="$bytes")
            load=$(cut -d' ' -f1 /proc/loadavg)
            # REPEAT turns, each a run of fio and one of shardbench (fio first
            # in odd turns, shardbench first in even ones), files evicted
            # before each run
            fio_runs= sb_runs= sb_busy= failed=
            for r in $(seq 1 "$repeat"); do
                if [ $(( r % 2 )) = 1 ]; then order="fio_once sb_once"; else order="sb_once fio_once"; fi
                for step in $order; do
                    evict "$train"
                    $step || break 2
                done
            done
            if [ -n "$failed" ]; then
                echo "| $engine | $size | $label | $failed | | | | | | | |${busy_rule:+ |} $load | FAIL |"
                status=1
                continue
            fi
            read -r fio_mb fio_iops sb_mb sb_iops ratio median_ratio paired requests verdict < <(python3 - "$fio_runs" "$sb_runs" "$bar" "$n" <<'PY'
import math, statistics as st, sys
f = [tuple(map(float, r.split(','))) for r in sys.argv[1].split()]
s = [tuple(map(float, r.split(','))) for r in sys.argv[2].split()]
bar = float(sys.argv[3])
files = int(sys.argv[4])
best = lambda runs: max(runs, key=lambda r: r[0])
med = lambda runs, k: st.median(r[k] for r in runs)
rat = lambda a, b: min(a[0] / b[0], a[1] / b[1])
ratio = rat(best(s), best(f))
median = min(med(s, 0) / med(f, 0), med(s, 1) / med(f, 1))
# each turn's own ratio (the two runs of a turn share the machine's state
# of the moment); their median and its 95 % confidence interval from the
# order statistics (distribution-free): the k-th lowest and highest, k the
# largest with P(Binomial(n, 1/2) < k) <= 2.5 %
pairs = sorted(rat(a, b) for a, b in zip(s, f))
n = len(pairs)
k, tail = 0, 0.0
while k < n and tail + math.comb(n, k) / 2 ** n <= 0.025:
    tail += math.comb(n, k) / 2 ** n
    k += 1
ci = '%.2f-%.2f' % (pairs[k - 1], pairs[n - k]) if k else 'n/a'
paired = '%.2f_(%s)' % (st.median(pairs), ci)
if ratio >= bar:
    verdict = 'ok'
elif k and pairs[n - k] >= bar:
    verdict = 'below_(within_noise)'
else:
    verdict = 'below'
# device requests per file (after merges), the median of the runs: more
# than 1 when reads were split (a buffer in more pieces than the device
# takes), less when reads of adjacent files were merged
requests = '%.2f_/_%.2f' % (med(f, 2) / files, med(s, 2) / files) if med(f, 2) else 'n/a'
print('%.1f %.0f %.1f %.0f %.2f %.2f %s %s %s' % (best(f)[0], best(f)[1], best(s)[0], best(s)[1], ratio, median, paired,
                                               requests, verdict))
PY
)
            paired=${paired//_/ } requests=${requests//_/ } verdict=${verdict//_/ }
            [ "$verdict" = ok ] || status=1
            busy_cell=
            [ -z "$tracedir" ] || busy_cell=" $(python3 - "$sb_busy" <<'PY'
import statistics as st, sys
runs = [r.split(',') for r in sys.argv[1].split()]
least = [float(r[1]) for r in runs if r[1] != '-']
print('%.2f / %s' % (st.median(float(r[0]) for r in runs), '%.2f' % st.median(least) if least else '-'))
PY
) |"
            echo "| $engine | $size | $label | $fio_mb | $fio_iops | $sb_mb | $sb_iops | $ratio | $median_ratio | $paired | $requests |$busy_cell $load | $verdict |"
        done
    done
done
exit $status
