#!/usr/bin/env bash
# Live progress (coordinator/report/progress.c): with stderr not a terminal, plain
# "progress:" lines every few seconds; on a terminal (a pty from script(1)),
# a block redrawn with ANSI cursor-up / clear-line. Fields and formats are
# checked, not timings: computation_time makes the run last longer than
# one interval, so at least one line is due, and each phase ends with a line
# of its last figures. Progress is in steps computed, as the ranks report
# them, with one worker or many.
. "$(dirname "$0")/lib.sh"

# 64 samples, 2 ranks, batch 2: 16 steps of at least 0.45 s, over 7 s
common="dataset.data_folder=./data dataset.num_files_train=64 dataset.record_length_bytes=4096
        dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.epochs=1 train.seed=1"
# shellcheck disable=SC2086
sb run quickstart $common train.computation_time=0.45 --accelerators 2 --local 1 --db p.db
expect_eq "plain: exit status" "$SB_RC" 0
line=$(grep -m1 '^progress: train ' sb.err)
if echo "$line" | grep -Eq '^progress: train epoch 1/1 step [0-9]+/16 \([0-9]+\.[0-9]%\), ETA ([0-9]+:[0-9]{2}|--:--)( \(run [0-9:]+\))? \| [0-9]+\.[0-9] samples/s, [0-9]+\.[0-9] MiB/s, [0-9]+ reads in flight, AU ([0-9]+\.[0-9]{2}%|-) \| 1 host, 0 silent, ranks done [0-2]/2( \(first at [0-9.]+ s(, last at [0-9.]+ s)?\))?; errors 0, retries 0 \| host [^ ]+ ranks 0-1: step [0-9]+/16, AU ([0-9]+\.[0-9]{2}%|-)(, done at [0-9.]+ s)?$'; then
    pass "plain: a progress line with every field"
else
    fail "plain: no well-formed progress line:"; sed 's/^/    /' sb.err | tail -20
fi
if grep -q $'\033' sb.err; then fail "plain: ANSI sequences off a terminal"; else pass "plain: no ANSI sequences"; fi
expect_contains "plain: the epoch log line still there" sb.err "epoch 1/1: 64 samples"

# two workers (one rank each): the coordinator releases the 16 steps, the line shows the step
# shellcheck disable=SC2086
sb run quickstart $common train.computation_time=0.2 --accelerators 2 --local 2 --db p.db --progress-interval 1
expect_eq "plain, 2 workers: exit status" "$SB_RC" 0
line=$(grep -m1 '^progress: train ' sb.err)
if echo "$line" | grep -Eq '^progress: train epoch 1/1 step [0-9]+/16 \([0-9]+\.[0-9]%\), ETA ([0-9]+:[0-9]{2}|--:--)( \(run [0-9:]+\))? \| [0-9]+\.[0-9] samples/s, [0-9]+\.[0-9] MiB/s, [0-9]+ reads in flight, AU ([0-9]+\.[0-9]{2}%|-) \| 1 host, 0 silent, ranks done [0-2]/2'; then
    pass "plain, 2 workers: a progress line with the step"
else
    fail "plain, 2 workers: no well-formed progress line with the step:"; sed 's/^/    /' sb.err | tail -20
fi
expect_eq "plain, 2 workers: every line's step within 0..16" \
    "$(grep '^progress: train ' sb.err | grep -vcE '^progress: train epoch 1/1 step ([0-9]|1[0-6])/16 ')" 0
expect_eq "plain, 2 workers: the epoch's last line, at its last step" \
    "$(grep -cE '^progress: train epoch 1/1 step 16/16 \(100\.0%\), ETA 0:00 .* ranks done 2/2 \(first at ' sb.err)" 1

# --progress off: nothing
# shellcheck disable=SC2086
sb run quickstart $common train.computation_time=0.45 --accelerators 2 --local 1 --db p.db --progress off
expect_eq "off: exit status" "$SB_RC" 0
expect_eq "off: no progress lines" "$(grep -c '^progress:' sb.err)" 0

# a bad mode is refused
sb run quickstart $common --local 1 --db p.db --progress sometimes
expect_eq "bad mode: exit status" "$SB_RC" 2
expect_contains "bad mode: message" sb.err "--progress expects auto, tty, plain or off, got 'sometimes'"

# on a terminal (auto): the block, redrawn with cursor-up + clear-line
if command -v script >/dev/null; then
    cmd=$(printf '%q ' "$SHARDBENCH" run quickstart $common train.computation_time=0.1 --accelerators 2 --local 1 \
          --db p.db)
    timeout 120 script -qec "$cmd" /dev/null </dev/null >tty.out 2>&1
    expect_eq "tty: exit status" "$?" 0
    tr -d '\r' <tty.out >tty.raw
    expect_contains "tty: cursor up and clear line" tty.raw $'\033[1A\033[2K'
    sed 's/\x1b\[1A\x1b\[2K//g' tty.raw >tty.txt     # the lines as they stay on the terminal
    if grep -Eq '^train epoch 1/1 step [0-9]+/16 \([0-9.]+%\), ETA ' tty.txt \
        && grep -Eq '^[0-9.]+ samples/s, [0-9.]+ MiB/s, [0-9]+ reads in flight, AU ([0-9.]+%|-)' tty.txt \
        && grep -Eq '^1 host, 0 silent, ranks done [0-2]/2.*; errors 0, retries 0$' tty.txt \
        && grep -Eq '^host [^ ]+ ranks 0-1: step [0-9]+/16' tty.txt; then
        pass "tty: the block's three lines and its host line"
    else
        fail "tty: block fields missing:"; cat -v tty.txt | tail -20
    fi
    expect_eq "tty: one line left by the epoch, none else" "$(grep -c '^progress:' tty.txt)" 2
    expect_eq "tty: the epoch's last line" "$(grep -cE '^progress: train epoch 1/1 step 16/16 \(100\.0%\)' tty.txt)" 1
    # a log line never lands inside the block: each log line starts a line
    # (after the erase sequences) and holds no block text
    expect_eq "tty: log lines whole" "$(grep -E 'shardbench: info: .*(samples/s, .* MiB/s, |ranks done)' tty.txt | grep -vc 'epoch 1/1: ')" 0
else
    pass "tty: script(1) not installed, skipped"
fi

finish
