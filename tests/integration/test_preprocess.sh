#!/usr/bin/env bash
# reader.preprocess_time , end to end on local files:
# each of a rank's reader.read_threads loader threads reads a sample, then
# spends preprocess_time on it before the sample joins its batch and before
# the thread reads its next one, as DLIO's loader workers sleep in
# FormatReader.preprocess. So an epoch of N samples per rank takes at least
# N x preprocess_time / read_threads, whatever the storage. Only lower
# bounds on times (upper ones only where the gap is tenfold): no flaky test.
. "$(dirname "$0")/lib.sh"

# 32 one-sample files, 1 rank, batch 4, 2 loader threads, no compute:
# 8 steps, at least 32 x 0.05 / 2 = 0.8 s with the preprocess
common="dataset.data_folder=./data dataset.num_files_train=32 dataset.num_samples_per_file=1
        dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 reader.batch_size=4
        reader.read_threads=2 reader.prefetch_size=2 train.epochs=1 train.computation_time=0 train.seed=5"
mkdir trace
# shellcheck disable=SC2086
sb run quickstart $common reader.preprocess_time=0.05 shardbench.trace=./trace --accelerators 1 --local 1 --db p.db
expect_eq "preprocess 0.05: exit status" "$SB_RC" 0
run=$(q p.db "SELECT max(id) FROM runs WHERE kind = 'train'")
expect_eq "preprocess 0.05: every sample in, 8 steps" \
    "$(q p.db "SELECT samples || ' ' || batches FROM rank_epochs WHERE run_id = $run AND epoch = 1")" "32 8"
expect_eq "preprocess 0.05: the epoch takes at least 32 x 0.05 / 2 s" \
    "$(q p.db "SELECT finished_at - started_at >= 0.8 FROM rank_epochs WHERE run_id = $run AND epoch = 1")" 1
# every sample read exactly once: 32 reads, 32 positions, 32 files
expect_eq "preprocess 0.05: 32 reads traced" "$(tail -qn +2 trace/* | wc -l)" 32
expect_eq "preprocess 0.05: each position once" "$(tail -qn +2 trace/* | cut -d, -f4 | sort -un | wc -l)" 32
expect_eq "preprocess 0.05: each file once" "$(tail -qn +2 trace/* | cut -d, -f6 | sort -u | wc -l)" 32
expect_eq "preprocess 0.05: positions 0..31" \
    "$(tail -qn +2 trace/* | cut -d, -f4 | sort -n | tr '\n' ' ')" "$(seq -s ' ' 0 31) "

# the same run without it: well under the bound (no sleep anywhere)
# shellcheck disable=SC2086
sb run quickstart $common --accelerators 1 --local 1 --db p.db
expect_eq "no preprocess: exit status" "$SB_RC" 0
run=$(q p.db "SELECT max(id) FROM runs WHERE kind = 'train'")
expect_eq "no preprocess: 32 samples, 8 steps" \
    "$(q p.db "SELECT samples || ' ' || batches FROM rank_epochs WHERE run_id = $run AND epoch = 1")" "32 8"
expect_eq "no preprocess: the epoch is well under 0.8 s" \
    "$(q p.db "SELECT finished_at - started_at < 0.4 FROM rank_epochs WHERE run_id = $run AND epoch = 1")" 1

# 4 loader threads: the bound halves, and holds (32 x 0.05 / 4 = 0.4 s), a
# stdev (|normal(0.05, 0.01)|, the worker's seeded draws) included
# shellcheck disable=SC2086
sb run quickstart $common reader.read_threads=4 reader.preprocess_time=0.05 reader.preprocess_time_stdev=0.01 \
    --accelerators 1 --local 1 --db p.db
expect_eq "4 threads, stdev: exit status" "$SB_RC" 0
run=$(q p.db "SELECT max(id) FROM runs WHERE kind = 'train'")
expect_eq "4 threads, stdev: 32 samples, 8 steps" \
    "$(q p.db "SELECT samples || ' ' || batches FROM rank_epochs WHERE run_id = $run AND epoch = 1")" "32 8"
expect_eq "4 threads, stdev: at least 32 x 0.05 / 4 s less the draws' spread" \
    "$(q p.db "SELECT finished_at - started_at >= 0.3 FROM rank_epochs WHERE run_id = $run AND epoch = 1")" 1

# 2 ranks on 2 workers, each 16 samples: each rank at least 16 x 0.05 / 2 s
# shellcheck disable=SC2086
sb run quickstart $common reader.preprocess_time=0.05 --accelerators 2 --local 2 --db p.db
expect_eq "2 workers: exit status" "$SB_RC" 0
run=$(q p.db "SELECT max(id) FROM runs WHERE kind = 'train'")
expect_eq "2 workers: 16 samples and 4 steps per rank" \
    "$(q p.db "SELECT group_concat(samples || ' ' || batches, ',') FROM rank_epochs WHERE run_id = $run AND epoch = 1")" \
    "16 4,16 4"
expect_eq "2 workers: each rank at least 0.4 s" \
    "$(q p.db "SELECT count(*) FROM rank_epochs WHERE run_id = $run AND epoch = 1 AND finished_at - started_at >= 0.4")" 2

# the wait lowers the AU, as in DLIO: a batch of 4 takes a thread 4 x 0.1 s,
# two threads deliver one every 0.2 s, against 0.1 s of compute: AU about
# 50% (below 70% here), against about 100% (above 80%) without the preprocess
# shellcheck disable=SC2086
sb run quickstart $common train.computation_time=0.1 reader.preprocess_time=0.1 --accelerators 1 --local 1 --db p.db
expect_eq "AU with preprocess: exit status" "$SB_RC" 0
run=$(q p.db "SELECT max(id) FROM runs WHERE kind = 'train'")
expect_eq "AU with preprocess: below 70%" \
    "$(q p.db "SELECT au < 0.7 AND au > 0 FROM rank_epochs WHERE run_id = $run AND epoch = 1")" 1
# shellcheck disable=SC2086
sb run quickstart $common train.computation_time=0.1 --accelerators 1 --local 1 --db p.db
expect_eq "AU without preprocess: exit status" "$SB_RC" 0
run=$(q p.db "SELECT max(id) FROM runs WHERE kind = 'train'")
expect_eq "AU without preprocess: above 80%" \
    "$(q p.db "SELECT au > 0.8 FROM rank_epochs WHERE run_id = $run AND epoch = 1")" 1

# where DLIO's reader never calls preprocess (tfrecord through tf.data), a
# warning says so and nothing is slept
# shellcheck disable=SC2086
sb run quickstart $common dataset.data_folder=./tf dataset.format=tfrecord framework=tensorflow \
    reader.data_loader=tensorflow reader.preprocess_time=0.05 --accelerators 1 --local 1 --db p.db
expect_eq "tfrecord with tensorflow: exit status" "$SB_RC" 0
expect_contains "tfrecord with tensorflow: the warning" sb.err \
    "reader.preprocess_time: not slept: DLIO_local_changes' tfrecord reader with the dlio_iterative loader does not call its preprocess"
run=$(q p.db "SELECT max(id) FROM runs WHERE kind = 'train'")
expect_eq "tfrecord with tensorflow: well under 0.8 s" \
    "$(q p.db "SELECT finished_at - started_at < 0.4 FROM rank_epochs WHERE run_id = $run AND epoch = 1")" 1

# a negative time never reaches the workers
# shellcheck disable=SC2086
sb run quickstart $common reader.preprocess_time=-0.05 --accelerators 1 --local 1 --db p.db
expect_eq "negative: exit status" "$SB_RC" 2
expect_contains "negative: message" sb.err "command line: key 'reader.preprocess_time': -0.05 is out of range [0, 3600]"

finish
