#!/usr/bin/env bash
# Errors a user can cause end with a clear message and the right exit status.
. "$(dirname "$0")/lib.sh"

# config error: exit 2 naming file, line and key
cat >bad.yaml <<'YAML'
dataset:
  data_folder: ./data
  num_files_train: lots
YAML
sb run bad.yaml
expect_eq "bad config exits 2" "$SB_RC" 2
expect_contains "bad config names file:line and key" sb.err "bad.yaml:3: key 'dataset.num_files_train'"

sb run reader.batch_size=x
expect_eq "bad override exits 2" "$SB_RC" 2
expect_contains "bad override named" sb.err "command line: key 'reader.batch_size'"

sb run no-such-workload
expect_eq "unknown workload exits 2" "$SB_RC" 2
expect_contains "unknown workload named" sb.err "unknown workload 'no-such-workload'"

sb run --local 2 --accelerators 3 dataset.data_folder=./d
expect_eq "uneven split exits 2" "$SB_RC" 2
expect_contains "uneven split explained" sb.err "3 accelerators cannot be split evenly over 2 workers"

sb run dataset.data_folder=./d dataset.num_files_train=10 reader.batch_size=4 --accelerators 4
expect_eq "batch larger than shard exits 2" "$SB_RC" 2
expect_contains "batch larger than shard explained" sb.err "less than one batch of 4"

sb run --frobnicate
expect_eq "unknown option exits 2" "$SB_RC" 2

# fewer files than num_files_train: exit 2, nothing trained
sb datagen dataset.data_folder=./small dataset.num_files_train=5 dataset.record_length_bytes=100 dataset.record_length_bytes_stdev=0 reader.batch_size=1 --accelerators 1 --db e.db
expect_eq "small datagen" "$SB_RC" 0
sb run workflow.generate_data=False dataset.data_folder=./small dataset.num_files_train=8 dataset.record_length_bytes=100 dataset.record_length_bytes_stdev=0 reader.batch_size=1 --accelerators 1 --db e.db
expect_eq "too few files exits 2" "$SB_RC" 2
expect_contains "too few files explained" sb.err "holds 5 files but the workload needs dataset.num_files_train=8"
# more files than needed: the first N in name order are used
sb run dataset.data_folder=./small dataset.num_files_train=3 dataset.record_length_bytes=100 dataset.record_length_bytes_stdev=0 reader.batch_size=1 train.epochs=1 --accelerators 1 --db e.db
expect_eq "subset of files exits 0" "$SB_RC" 0
run=$(q e.db "SELECT max(id) FROM runs")
# an npz of one 100-byte record: 35 + 128 + 100 (x.npy) + 16 + 35 + 128 + 8 (y.npy) + 102 + 22 = 574 bytes
expect_eq "3 of 5 files read" "$(q e.db "SELECT samples, bytes FROM epochs WHERE run_id = $run")" "3|1722"

# a missing file mid-run: exit 1, error names the path, run 'failed'
touch -r small/train folder-time
rm small/train/img_1_of_5.npz
touch -r folder-time small/train     # keep the folder fingerprint: the catalog is stale on purpose
sb run dataset.data_folder=./small dataset.num_files_train=5 dataset.record_length_bytes=100 dataset.record_length_bytes_stdev=0 reader.batch_size=1 --accelerators 1 --db e.db
expect_eq "missing file exits 1" "$SB_RC" 1
expect_contains "missing file named" sb.err "img_1_of_5.npz: No such file or directory"
run=$(q e.db "SELECT max(id) FROM runs")
expect_eq "run marked failed" "$(q e.db "SELECT status FROM runs WHERE id = $run")" "failed"
expect_eq "error recorded with errno" "$(q e.db "SELECT op, errno_val FROM errors WHERE run_id = $run AND op = 'read'")" "read|2"

# a worker killed mid-run: exit 1 naming rank and host, no worker left behind
sb datagen dataset.data_folder=./big dataset.num_files_train=64 dataset.record_length_bytes=1000 dataset.record_length_bytes_stdev=0 --db k.db
( timeout 120 "$SHARDBENCH" run dataset.data_folder=./big dataset.num_files_train=64 dataset.record_length_bytes=1000 dataset.record_length_bytes_stdev=0 \
      reader.batch_size=1 train.computation_time=0.2 --accelerators 2 --local 2 --db k.db >kill.out 2>kill.err ) &
coord=$!
victim=""
for _ in $(seq 1 100); do
    victim=$(q k.db "SELECT pid FROM run_workers WHERE run_id = (SELECT max(id) FROM runs WHERE kind='train') AND worker = 1" 2>/dev/null)
    [ -n "$victim" ] && break
    sleep 0.1
done
expect_eq "worker 1 registered" "$([ -n "$victim" ] && echo yes)" yes
# killed once training began (the coordinator says so), not at a guessed time
await_text kill.err "info: training:"
[ -n "$victim" ] && kill -9 "$victim"
wait $coord
rc=$?
expect_eq "killed worker exits 1" "$rc" 1
expect_contains "killed worker named with rank and host" kill.err "local worker 1 on $(hostname) (rank 1, pid $victim) ended: killed by signal 9"
expect_eq "run marked failed" "$(q k.db "SELECT status FROM runs WHERE id = (SELECT max(id) FROM runs)")" "failed"
others=$(q k.db "SELECT pid FROM run_workers WHERE run_id = (SELECT max(id) FROM runs)")
left=0
for p in $others; do kill -0 "$p" 2>/dev/null && left=$((left + 1)); done
expect_eq "no worker left running" "$left" 0

# skip_listing: no listing, DLIO names, every k-th object checked; a missing
# one is named before anything runs
sb run dataset.data_folder=./skip dataset.skip_listing=true dataset.listing_validation_interval=10 \
    dataset.num_files_train=100 dataset.num_subfolders_train=4 dataset.record_length_bytes=1000 \
    dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.epochs=1 --accelerators 2 --db skip.db
expect_eq "skip_listing run (generates, then trains)" "$SB_RC" 0
expect_contains "skip_listing spot checks" sb.err "skip_listing: 11 of 100 objects checked"
expect_eq "skip_listing: no catalog" "$(q skip.db "SELECT count(*) FROM catalogs")" 0
# npz files of one record of record_length 1000, which DLIO draws as
# int(sqrt(1000))^2 = 961 bytes: 961 + 474 bytes of npy headers and zip framing
rec=$(python3 -c 'import math; print(math.isqrt(1000) ** 2)')
expect_eq "skip_listing read every object whole" "$(q skip.db "SELECT samples, bytes FROM epochs WHERE run_id = 2")" \
    "100|$((100 * (rec + 474)))"
rm skip/train/2/img_030_of_100.npz
sb run dataset.data_folder=./skip dataset.skip_listing=true dataset.listing_validation_interval=10 \
    dataset.num_files_train=100 dataset.num_subfolders_train=4 reader.batch_size=2 --accelerators 2 --db skip.db
expect_eq "skip_listing missing object exits 2" "$SB_RC" 2
expect_contains "skip_listing names the first missing key" sb.err "missing object 'train/2/img_030_of_100.npz' (object 30 of 100"

# catalog command: lists once, then reuses
sb catalog dataset.data_folder=./small dataset.num_files_train=4 --db cat.db
expect_eq "catalog command" "$SB_RC" 0
expect_contains "catalog listed" sb.out "4 objects, 2296 bytes, listed"
sb catalog dataset.data_folder=./small dataset.num_files_train=4 --db cat.db
expect_contains "catalog reused" sb.out "4 objects, 2296 bytes, reused"
sb catalog dataset.data_folder=./none --db cat.db
expect_eq "catalog of nothing exits 2" "$SB_RC" 2
expect_contains "catalog of nothing explained" sb.err "no dataset in ./none (no train/ objects)"

# synthetic://: no I/O, everything else for real
sb run dataset.data_folder=synthetic://bench dataset.num_files_train=10000 dataset.record_length_bytes=4096 \
    dataset.record_length_bytes_stdev=0 reader.batch_size=16 train.computation_time=0 train.epochs=2 \
    --accelerators 4 --local 2 --db syn.db
expect_eq "synthetic run" "$SB_RC" 0
# DLIO's index sampler: 2500 samples a rank, floor(2500 / 16) = 156 steps of
# 16 (2496 read), 4 a rank dropped; 4096 = 64^2 bytes a sample
k=$((10000 / 4)) steps=$((10000 / 4 / 16))
expect_eq "synthetic epochs" "$(q syn.db "SELECT group_concat(samples || ':' || dropped || ':' || bytes || ':' || batches, ' ') FROM epochs")" \
    "$((4 * steps * 16)):$((4 * (k - steps * 16))):$((4 * steps * 16 * 4096)):$steps $((4 * steps * 16)):$((4 * (k - steps * 16))):$((4 * steps * 16 * 4096)):$steps"
# names and sizes derived, nothing listed: no catalog row, no object row
expect_eq "synthetic: no catalog rows" "$(q syn.db "SELECT (SELECT count(*) FROM catalogs) || '|' || (SELECT count(*) FROM objects)")" "0|0"
expect_contains "synthetic: derived" sb.err "synthetic://bench (synthetic): 10000 objects derived (DLIO's names in name order, the generator's sizes): no listing, no catalog rows"
[ -e synthetic: ] && fail "synthetic created files" || pass "synthetic wrote nothing"

# report of a run that does not exist
"$SHARDBENCH" report 999 --db k.db >r.out 2>r.err
expect_eq "report of unknown run exits 2" "$?" 2
expect_contains "report names the run" r.err "no run 999"

# datasize: the MLPerf Storage minimum, and the override to pass on its last line
sb datasize dataset.record_length_bytes=146600628 reader.batch_size=7 dataset.num_samples_per_file=1 \
    --hosts 1 --host-memory-gb 251 --accelerators 36
expect_eq "datasize exit" "$SB_RC" 0
expect_eq "datasize override line" "$(tail -1 sb.out)" "dataset.num_files_train=126000 dataset.num_subfolders_train=12"
expect_contains "datasize shows the arithmetic" sb.out "minimum: 126000 files of 1 sample(s), 126000 samples, 17203.09 GiB"
sb datasize --hosts 1 --accelerators 8
expect_eq "datasize without memory exits 2" "$SB_RC" 2
expect_contains "datasize names what is missing" sb.err "--hosts, --host-memory-gb and --accelerators are required"
sb datasize --hosts 1 --host-memory-gb -3 --accelerators 8
expect_eq "datasize with negative memory exits 2" "$SB_RC" 2
# a training dataset smaller than 5x the hosts' memory is warned about
sb run dataset.data_folder=./small dataset.num_files_train=5 dataset.record_length_bytes=100 dataset.record_length_bytes_stdev=0 \
    reader.batch_size=1 train.epochs=1 --accelerators 1 --db e.db
expect_contains "small dataset warned about" sb.err "is smaller than 5 x the memory of its 1 host(s)"
expect_contains "the warning says what the rules need" sb.err "shardbench datasize --hosts 1 --host-memory-gb"

finish
