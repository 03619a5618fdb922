#!/usr/bin/env bash
# The live view on a terminal (a pty from script(1)) of a run on two hosts
# (two workers started as on other hosts, --host node-a and node-b), one of
# which is frozen (SIGSTOP) for a while during the first epoch:
# - the warning names the frozen host and its ranks within two heartbeats
#   (the silence it reports, measured by the coordinator), and only that host;
#   it is heard again once it goes on;
# - progress is in steps computed: no status shows 100% before the epoch's
#   last step, nor a step past the last;
# - the line each epoch leaves (its last figures) shows DLIO's AU within 2
#   points of the AU recorded for that epoch;
# - the summary names the frozen host as the one the others waited for, in
#   the frozen epoch, and in its "waited for" line: the coordinator saw its
#   STEP come last at the step barrier, over a second after the other's.
. "$(dirname "$0")/lib.sh"

if ! command -v script >/dev/null; then
    pass "script(1) not installed (bsdutils): skipped"
    finish
fi

# 4 ranks x 48 samples, batch 2: 24 steps of 0.1 s per rank and epoch (about 2.5 s)
SYN="storage.storage_type=synthetic dataset.data_folder=synthetic://live dataset.num_files_train=192
     dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 reader.batch_size=2
     train.sync=step train.epochs=2 train.computation_time=0.1 shardbench.heartbeat_interval_s=1
     shardbench.heartbeat_timeout_s=30"
heartbeat=1

# shellcheck disable=SC2086
cmd=$(printf '%q ' "$SHARDBENCH" run quickstart $SYN --accelerators 4 --workers 2 --bind 'tcp://127.0.0.1:*' \
      --db live.db --progress auto)
rm -f tty.out
timeout 120 script -qfec "$cmd" /dev/null </dev/null >tty.out 2>&1 &
coord=$!
ep=$(coordinator_endpoint tty.out | tr -d '\r')
"$SHARDBENCH_WORKER" --coordinator "$ep" --host node-a --timeout 60 2>w-a.err &
wa=$!
"$SHARDBENCH_WORKER" --coordinator "$ep" --host node-b --timeout 60 2>w-b.err &
wb=$!

# wait_for FILE PATTERN SECONDS: until grep -E finds PATTERN in FILE (0), or the time is up (1)
wait_for () {
    local end=$((SECONDS + $3))
    until grep -aEq "$2" "$1" 2>/dev/null; do
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.05
    done
}

# a few steps into epoch 1: freeze node-b until the coordinator names it, then 1 s more
if wait_for tty.out 'train epoch 1/2 step [4-9]/24' 60; then
    kill -STOP "$wb"
    wait_for tty.out 'host node-b \(ranks [0-9]+-[0-9]+\) silent' 20 || fail "no silence warning within 20 s"
    sleep 1     # the freeze goes on: the others wait at the barrier meanwhile
    kill -CONT "$wb"
else
    fail "epoch 1 never showed step 4 or later:"; tr -d '\r' <tty.out | cat -v | tail -5
    kill -CONT "$wb" 2>/dev/null
fi
wait "$coord"
expect_eq "exit status" "$?" 0
wait "$wa"; expect_eq "worker node-a: exit status" "$?" 0
wait "$wb"; expect_eq "worker node-b: exit status" "$?" 0
tr -d '\r' <tty.out | sed 's/\x1b\[1A\x1b\[2K//g' >tty.txt
# the ranks each host got (workers are numbered as they join)
branks=$(sed -n 's/.*info: worker [01] joined: node-b pid [0-9]*, \(ranks [0-9]*-[0-9]*\)$/\1/p' tty.txt)
aranks=$(sed -n 's/.*info: worker [01] joined: node-a pid [0-9]*, \(ranks [0-9]*-[0-9]*\)$/\1/p' tty.txt)
expect_eq "the hosts' ranks" "$(printf '%s\n' "$aranks" "$branks" | sort | tr '\n' ' ')" "ranks 0-1 ranks 2-3 "

# the warning: node-b and its ranks, the silence it saw at most two heartbeats, once; node-a never
silent=$(sed -n "s/.*warning: host node-b ($branks) silent: nothing heard from it for \\([0-9.]*\\) s\$/\\1/p" tty.txt)
expect_eq "silence: warned once for node-b" "$(echo "$silent" | grep -c .)" 1
if [ -n "$silent" ] && python3 -c "import sys; sys.exit(0 if 1.5 * $heartbeat <= $silent <= 2 * $heartbeat else 1)"; then
    pass "silence: named after $silent s, within 2 heartbeats of ${heartbeat} s"
else
    fail "silence: named after '${silent}' s, not within 1.5 to 2 heartbeats of ${heartbeat} s"
fi
expect_contains "silence: heard again" tty.txt "warning: host node-b ($branks) heard again"
expect_eq "silence: node-a never named" "$(grep -c 'host node-a (ranks [0-9-]*) silent' tty.txt)" 0
expect_contains "the block shows the silent host" tty.txt ", SILENT "

# progress in steps: 100% only at the last step, never a step past it
bad=$(grep -aoE 'train epoch [12]/2 step [0-9]+/[0-9]+ \([0-9.]+%\)' tty.txt | python3 -c '
import re, sys
bad = 0
for line in sys.stdin:
    s, n, p = re.search(r"step (\d+)/(\d+) \(([\d.]+)%\)", line).groups()
    s, n, p = int(s), int(n), float(p)
    if n != 24 or s > n or (p >= 100.0 and s != n) or (s == n and p != 100.0):
        bad += 1
print(bad)')
expect_eq "progress: 100% only at step 24/24, no step past it" "$bad" 0
expect_eq "progress: statuses seen" "$(grep -acE 'train epoch [12]/2 step [0-9]+/24' tty.txt | awk '{print ($1 >= 4)}')" 1

# each epoch's last line: DLIO's AU within 2 points of the recorded one
for e in 1 2; do
    live=$(sed -n "s/^progress: train epoch $e\/2 step 24\/24 (100.0%).*, AU \([0-9.]*\)%.*/\1/p" tty.txt | tail -1)
    rec=$(q live.db "SELECT printf('%.2f', train_au_percentage) FROM epochs WHERE epoch = $e
                     AND run_id = (SELECT max(id) FROM runs)")
    if [ -n "$live" ] && [ -n "$rec" ] && python3 -c "import sys; sys.exit(0 if abs($live - $rec) <= 2 else 1)"; then
        pass "epoch $e: live AU $live% within 2 points of the recorded $rec%"
    else
        fail "epoch $e: live AU '$live' against the recorded '$rec'"
    fi
done

# the summary: the frozen host is the one waited for
row=$(sed -n '/the rank the others waited for/,/waited for:/p' tty.txt | awk '$1 == "1" {print $3}')
expect_eq "summary: epoch 1 waited for node-b" "$row" "node-b"
expect_contains "summary: the run waited for node-b" tty.txt "  waited for: rank "
expect_eq "summary: the waited-for line names node-b" \
    "$(grep -c "^  waited for: rank [${branks#ranks }] on node-b " tty.txt)" 1
# held: the coordinator saw node-b's STEP come last, over a second after node-a's (the freeze);
# node-a held the others under a second (whatever each worker's own clock counted as barrier wait:
# a worker frozen while it waited for the release counts its freeze there)
expect_eq "summary: node-b held the barrier over 1 s in epoch 1, node-a under 1 s" \
    "$(q live.db "SELECT (SELECT min(held_s) > 1 FROM rank_epochs WHERE epoch = 1 AND host = 'node-b'
                          AND run_id = (SELECT max(id) FROM runs)) || ':' ||
                         (SELECT max(held_s) < 1 FROM rank_epochs WHERE epoch = 1 AND host = 'node-a'
                          AND run_id = (SELECT max(id) FROM runs))")" "1:1"
expect_eq "summary: the held column of epoch 1, as recorded" \
    "$(sed -n '/the rank the others waited for/,/waited for:/p' tty.txt | awk '$1 == "1" {print $4}')" \
    "$(q live.db "SELECT printf('%.3f', max(held_s)) FROM rank_epochs WHERE epoch = 1 AND run_id = (SELECT max(id) FROM runs)")"
finish
