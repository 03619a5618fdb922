#!/usr/bin/env bash
# DLIO's checkpoint figures under DLIO's names, shardbench's beside them,
# with real processes: `shardbench checkpoint` of a megatron_deepspeed-style
# model (DLIO's predefined model.layer_parameters and
# model.optimization_groups) on 4 ranks in 2 workers.
#
# The files and sizes are what DLIO's own sizing code gives for this model
# (base_checkpointing.py and pytorch_checkpointing.py run for every rank;
# docs/DLIO.md, "Checkpoint sizes against DLIO's code"). DLIO's
# checkpoint_size counts neither predefined list, and a model.type other
# than transformer counts model_size_bytes once: 1000 bytes, of the 39600
# written. DLIO's save/load figures divide that by rank 0's own time
# (statscounter.py end_save_ckpt), or with checkpoint.rank_sync by rank 0's
# time until the last rank finished; shardbench's slowest-rank figures
# divide every byte by the slowest rank's time.
. "$(dirname "$0")/lib.sh"

cat >mega.yaml <<'EOF'
model:
  name: megatron_deepspeed
  type: megatron_deepspeed
  model_size_bytes: 1000
  num_layers: 4
  layer_parameters: [3000, 5000]
  optimization_groups: [100, 200]
  parallelism:
    pipeline: 2
    tensor: 1
    zero_stage: 1
workflow:
  checkpoint: True
checkpoint:
  checkpoint_folder: ./ck
  num_checkpoints_write: 3
  num_checkpoints_read: 2
  time_between_checkpoints: 0
EOF

listing () {    # FOLDER: "file:size" of every file, sorted
    (cd "$1" && find . -type f -printf '%P:%s\n' | sort | tr '\n' ' ' | sed 's/ $//')
}

sb checkpoint mega.yaml --accelerators 4 --local 2 --db c.db --results-dir res
expect_eq "exit status" "$SB_RC" 0
run=$(q c.db "SELECT max(id) FROM runs")

# DLIO's layout: rank r's pipeline stage r mod 2; the data-parallel rank 0
# (ranks 0 and 1) writes one file per layer of its stage (no embedding or
# head layers with predefined sizes: 2 layers of 3000 + 5000 bytes each);
# every rank its model_states (1000) and the predefined optimizer: 3 x 300
expect_eq "DLIO's files and sizes" "$(listing ck/global_epoch1_step2)" \
    "layer_1-model_0_model_states.pt:8000 layer_2-model_0_model_states.pt:8000 layer_3-model_1_model_states.pt:8000 layer_4-model_1_model_states.pt:8000 model_states-0.pt:1000 model_states-1.pt:1000 model_states-2.pt:1000 model_states-3.pt:1000 zero_pp_rank_0_mp_rank_0_optim_states.pt:900 zero_pp_rank_0_mp_rank_1_optim_states.pt:900 zero_pp_rank_1_mp_rank_0_optim_states.pt:900 zero_pp_rank_1_mp_rank_1_optim_states.pt:900"
expect_eq "every rank's bytes" \
    "$(q c.db "SELECT group_concat(rank || ':' || files || ':' || bytes, ' ') FROM (SELECT * FROM checkpoint_ranks WHERE run_id = $run AND seq = 1 ORDER BY rank)")" \
    "0:4:17900 1:4:17900 2:2:1900 3:2:1900"
expect_eq "rows: bytes written, DLIO's size" \
    "$(q c.db "SELECT group_concat(op || ':' || bytes || ':' || dlio_bytes || ':' || rank_sync, ' ') FROM (SELECT * FROM checkpoints WHERE run_id = $run ORDER BY seq)")" \
    "write:39600:1000:0 write:39600:1000:0 write:39600:1000:0 read:39600:1000:0 read:39600:1000:0"
# DLIO's time is rank 0's own, not the slowest rank's
expect_eq "DLIO's duration: rank 0's" \
    "$(q c.db "SELECT count(*) FROM checkpoints c WHERE run_id = $run AND dlio_duration_s = (SELECT duration_s FROM checkpoint_ranks r WHERE r.run_id = c.run_id AND r.seq = c.seq AND r.rank = 0) AND abs(dlio_gib_per_s - 1000 / 1073741824.0 / dlio_duration_s) <= 1e-9 * dlio_gib_per_s")" 5
expect_eq "shardbench's duration: the slowest rank's" \
    "$(q c.db "SELECT count(*) FROM checkpoints c WHERE run_id = $run AND duration_s = (SELECT max(duration_s) FROM checkpoint_ranks r WHERE r.run_id = c.run_id AND r.seq = c.seq) AND abs(gib_per_s - 39600 / 1073741824.0 / duration_s) <= 1e-9 * gib_per_s")" 5
expect_eq "said once: DLIO's size is not the bytes written" \
    "$(grep -c "DLIO's checkpoint_size counts 1000 bytes of the 39600 bytes a checkpoint writes" sb.err)" 1

# the report's JSON: DLIO's names carry DLIO's figures (np.mean, np.std over
# the writes, reads), shardbench's names the slowest rank's
"$SHARDBENCH" report "$run" --json --db c.db >r.json 2>r.err
expect_eq "report --json: exit" "$?" 0
expect_eq "report --json: DLIO's and shardbench's checkpoint metrics" "$(python3 - "$run" <<'EOF'
import json, math, sqlite3, sys
run = int(sys.argv[1])
db = sqlite3.connect("c.db")
j = json.load(open("r.json"))
n6 = lambda x: round(x, 6)
def ms(v):
    m = sum(v) / len(v)
    return n6(m), n6(math.sqrt(sum((x - m) ** 2 for x in v) / len(v)))
bad = []
for op, name in (("write", "save"), ("read", "load")):
    r0 = [d for (d,) in db.execute("SELECT duration_s FROM checkpoint_ranks WHERE run_id = ? AND op = ? AND rank = 0"
                                   " ORDER BY seq", (run, op))]
    slow = [d for (d,) in db.execute("SELECT max(duration_s) FROM checkpoint_ranks WHERE run_id = ? AND op = ?"
                                     " GROUP BY seq ORDER BY seq", (run, op))]
    want = {}
    want[name + "_checkpoint_io_mean_GB_per_second"], want[name + "_checkpoint_io_stdev_GB_per_second"] = \
        ms([1000 / 2**30 / d for d in r0])
    want[name + "_checkpoint_duration_mean_seconds"], want[name + "_checkpoint_duration_stdev_seconds"] = ms(r0)
    for k, v in want.items():
        if j["metric"][k] != v:
            bad.append((k, j["metric"][k], v))
    own = {}
    own[name + "_checkpoint_slowest_rank_io_mean_GB_per_second"], own[name + "_checkpoint_slowest_rank_io_stdev_GB_per_second"] = \
        ms([39600 / 2**30 / d for d in slow])
    own[name + "_checkpoint_slowest_rank_duration_mean_seconds"], own[name + "_checkpoint_slowest_rank_duration_stdev_seconds"] = \
        ms(slow)
    for k, v in own.items():
        if j["shardbench"][k] != v:
            bad.append((k, j["shardbench"][k], v))
if j["metric"]["checkpoint_size_GB"] != n6(1000 / 2**30) or j["shardbench"]["checkpoint_written_GB"] != n6(39600 / 2**30):
    bad.append(("sizes", j["metric"]["checkpoint_size_GB"], j["shardbench"]["checkpoint_written_GB"]))
if any("slowest" in k for k in j["metric"]):
    bad.append(("shardbench's names under metric", sorted(j["metric"])))
print(bad or "ok")
EOF
)" ok

# the results directory's summary.json: DLIO's figures under DLIO's names
summary=$(find res -name summary.json | head -1)
expect_eq "summary.json: DLIO's save figure and size" "$(python3 - "$run" "$summary" <<'EOF'
import json, sqlite3, sys
run = int(sys.argv[1])
m = json.load(open(sys.argv[2]))["metric"]
r0 = [d for (d,) in sqlite3.connect("c.db").execute(
    "SELECT duration_s FROM checkpoint_ranks WHERE run_id = ? AND op = 'write' AND rank = 0 ORDER BY seq", (run,))]
want = sum(1000 / 2**30 / d for d in r0) / len(r0)
print("ok" if abs(m["save_checkpoint_io_mean_GB_per_second"] - want) <= 1e-9 * want
      and m["checkpoint_size_GB"] == 1000 / 2**30 else (m, want))
EOF
)" ok

# checkpoint.rank_sync: DLIO's rank 0 stops its clock after the barrier that
# follows every rank's save, so its time runs until the last rank finished
rm -rf ck
sb checkpoint mega.yaml checkpoint.rank_sync=true checkpoint.num_checkpoints_read=0 --accelerators 4 --local 2 --db c.db
expect_eq "rank_sync: exit status" "$SB_RC" 0
run=$(q c.db "SELECT max(id) FROM runs")
expect_eq "rank_sync: rows" "$(q c.db "SELECT count(*), sum(rank_sync) FROM checkpoints WHERE run_id = $run")" "3|3"
expect_eq "rank_sync: DLIO's duration from rank 0's start to the last rank's finish" \
    "$(q c.db "SELECT count(*) FROM checkpoints c WHERE run_id = $run AND dlio_duration_s = max((SELECT duration_s FROM checkpoint_ranks r WHERE r.run_id = c.run_id AND r.seq = c.seq AND r.rank = 0), (SELECT max(finished_at) FROM checkpoint_ranks r WHERE r.run_id = c.run_id AND r.seq = c.seq) - (SELECT started_at FROM checkpoint_ranks r WHERE r.run_id = c.run_id AND r.seq = c.seq AND r.rank = 0))")" 3

# a bad item names the file, line and key
printf 'model:\n  layer_parameters: [10, ten]\n' >bad.yaml
sb checkpoint bad.yaml --accelerators 1 --db c.db
expect_eq "bad item: exit status" "$SB_RC" 2
expect_contains "bad item: named" sb.err "bad.yaml:2: key 'model.layer_parameters': item 1 'ten' is not an integer"

finish
