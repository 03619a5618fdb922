#!/usr/bin/env bash
# The summary at scale: a run of 256 hosts (256 workers started as on other
# hosts, --host h000..h255, one rank each, synthetic storage) and 5 epochs,
# one host (h137) frozen (SIGSTOP) until the coordinator names it silent.
# The text summary stays under 60 lines (tables that grow with hosts keep
# their few worst rows and say where the rest is) and names h137 as the host
# the others waited for; the silence warning named it too.
. "$(dirname "$0")/lib.sh"

hosts=256
SYN="storage.storage_type=synthetic dataset.data_folder=synthetic://scale dataset.num_files_train=$((hosts * 20))
     dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 reader.batch_size=2
     train.sync=step train.epochs=5 train.computation_time=0.02 shardbench.heartbeat_timeout_s=60"
rm -f c.err
# shellcheck disable=SC2086
"$SHARDBENCH" run quickstart $SYN --accelerators $hosts --workers $hosts --bind 'tcp://127.0.0.1:*' --db s.db \
    --progress plain --progress-interval 5 --join-timeout 240 >c.out 2>c.err &
coord=$!
ep=$(coordinator_endpoint c.err)
pids=()
for i in $(seq 0 $((hosts - 1))); do
    "$SHARDBENCH_WORKER" --coordinator "$ep" --host "$(printf 'h%03d' "$i")" --timeout 240 2>/dev/null &
    pids+=($!)
done
# after epoch 1: freeze h137 until it is named silent, then let it go on
end=$((SECONDS + 240))
until grep -q 'info: epoch 1/5: ' c.err || [ "$SECONDS" -ge "$end" ] || ! kill -0 "$coord" 2>/dev/null; do sleep 0.05; done
frozen=$(sed -n 's/.*info: worker [0-9]* joined: h137 pid \([0-9]*\),.*/\1/p' c.err)
if [ -n "$frozen" ]; then
    kill -STOP "$frozen"
    until grep -q 'warning: host h137 (rank [0-9]*) silent' c.err || [ "$SECONDS" -ge "$end" ]; do sleep 0.05; done
    kill -CONT "$frozen"
else
    fail "h137 never joined or epoch 1 never ended"
fi
wait "$coord"
expect_eq "exit status" "$?" 0
left=0
for p in "${pids[@]}"; do wait "$p" || left=$((left + 1)); done
expect_eq "every worker ended well" "$left" 0

lines=$(wc -l <c.out)
if [ "$lines" -lt 60 ]; then pass "summary of $hosts hosts x 5 epochs: $lines lines"; else
    fail "summary of $hosts hosts x 5 epochs: $lines lines, not under 60"; cat c.out; fi
expect_eq "the summary names h137 as the host waited for" "$(grep -c '^  waited for: rank [0-9]* on h137 ' c.out)" 1
expect_eq "the silence warning named h137, and no other host" \
    "$(grep -o 'warning: host [^ ]* (rank [0-9]*) silent' c.err | sed 's/ (rank.*//; s/.* //' | sort -u)" "h137"
expect_contains "the per-host latency keeps its worst rows" c.out \
    "  read latency per host, ms: the 4 highest p99 of $((hosts * 5)) (every host and epoch: report --csv hosts):"
expect_eq "the database still has every host" "$(q s.db "SELECT count(DISTINCT host) FROM rank_epochs")" "$hosts"
finish
