#!/usr/bin/env bash
# Epoch times on the coordinator's clock: one of two workers runs 3 s ahead
# (faketime, libfaketime on both its wall and monotonic clocks). The
# coordinator measures each worker's offset over the WELCOME/READY round
# trip, records it in run_workers.clock_offset_s and corrects the rank times:
# the epochs last as long as with clocks that agree (without the correction
# a 1.6 s epoch would last 4.6 s).
. "$(dirname "$0")/lib.sh"

if ! command -v faketime >/dev/null; then
    echo "faketime (Debian package faketime) is needed"
    exit 1
fi

# 2 ranks on 2 workers, 32 samples and 8 steps of 0.2 s per rank: ~1.6 s an epoch
syn="dataset.data_folder=synthetic://clock dataset.num_files_train=64 dataset.record_length_bytes=4096
     dataset.record_length_bytes_stdev=0 reader.batch_size=4 train.computation_time=0.2 train.epochs=2
     --accelerators 2 --workers 2 --bind tcp://$SB_LO:* --join-timeout 30"

run_pair () {   # LABEL SKEW ("" or a faketime offset such as +3s)
    local label=$1 skew=$2 coord ep
    # shellcheck disable=SC2086
    ( timeout 120 "$SHARDBENCH" run $syn --db "$label.db" >"$label.out" 2>"$label.err"; echo $? >"$label.rc" ) &
    coord=$!
    ep=$(coordinator_endpoint "$label.err")
    timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host plain >"$label-plain.log" 2>&1 &
    if [ -n "$skew" ]; then
        # (an ASan build: libfaketime is preloaded before the ASan runtime)
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
            timeout 120 faketime -f "$skew" "$SHARDBENCH_WORKER" --coordinator "$ep" --host skewed >"$label-skewed.log" 2>&1
    else
        timeout 120 "$SHARDBENCH_WORKER" --coordinator "$ep" --host skewed >"$label-skewed.log" 2>&1
    fi
    echo $? >"$label-skewed.rc"
    wait
}

run_pair same ""
run_pair ahead +3s
expect_eq "clocks agree: exit" "$(cat same.rc)" 0
expect_eq "skewed worker: exit" "$(cat ahead.rc)" 0
expect_eq "skewed worker: the worker under faketime exits 0" "$(cat ahead-skewed.rc)" 0
# log lines start with the local time HH:MM:SS.mmm of the process's clock
expect_eq "skewed worker: faketime moved its clock (its log is 2.5 to 3.5 s ahead)" \
    "$(python3 - ahead-plain.log ahead-skewed.log <<'PY'
import sys
def first(path):
    h, m, s = open(path).readline().split()[0].split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)
print(int(2.5 <= first(sys.argv[2]) - first(sys.argv[1]) <= 3.5))
PY
)" 1
expect_eq "clocks agree: both offsets under 0.1 s" \
    "$(q same.db "SELECT count(*) FROM run_workers WHERE abs(clock_offset_s) < 0.1 AND clock_rtt_ms >= 0")" 2
expect_eq "skewed worker: its offset recorded, 3 s (2.8 to 3.2)" \
    "$(q ahead.db "SELECT clock_offset_s BETWEEN 2.8 AND 3.2 FROM run_workers WHERE host = 'skewed'")" 1
expect_eq "skewed worker: the other's offset under 0.1 s" \
    "$(q ahead.db "SELECT abs(clock_offset_s) < 0.1 FROM run_workers WHERE host = 'plain'")" 1
expect_eq "skewed worker: the epochs last as long as with clocks that agree (within 0.5 s)" \
    "$(q ahead.db "ATTACH 'same.db' AS s; SELECT count(*) FROM epochs a JOIN s.epochs b USING (epoch)
                   WHERE abs(a.duration_s - b.duration_s) < 0.5 AND a.duration_s < 2.5")" 2
expect_eq "skewed worker: ranks start together on the coordinator's clock (within 0.5 s)" \
    "$(q ahead.db "SELECT count(*) FROM (SELECT epoch FROM rank_epochs GROUP BY epoch
                   HAVING max(started_at) - min(started_at) < 0.5)")" 2
# the offset is right within half the round trip it was measured over
# (run_workers.clock_rtt_ms): the corrected times are, within that margin
expect_eq "skewed worker: its rank times are between the run's start and end (within half its round trip)" \
    "$(q ahead.db "SELECT count(*) FROM rank_epochs r, runs, run_workers w WHERE r.host = 'skewed' AND w.host = 'skewed'
                   AND r.started_at >= runs.started_at - w.clock_rtt_ms / 2000.0
                   AND r.finished_at <= runs.finished_at + w.clock_rtt_ms / 2000.0")" 2
expect_eq "skewed worker: the coordinator says so" \
    "$(grep -cE "worker [01] on skewed: its clock is (2\.9[0-9]*|3\.0[0-9]*) s ahead of the coordinator's" ahead.err)" 1

finish
