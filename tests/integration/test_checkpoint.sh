#!/usr/bin/env bash
# Checkpointing end to end with real processes: `shardbench checkpoint
# llama3_8b` scaled down by 2^-13 (the real per-rank sizes / 8192), written
# then read back on local files; exact byte counts in the result database
# and on disk; fsync per file (under strace when it can trace); subset mode
# of llama3_405b; a missing and a truncated checkpoint fail the read.
. "$(dirname "$0")/lib.sh"

scale="checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0"

# llama3_8b, ZeRO 3, 2 ranks = data parallelism 2: every rank writes half of
# the model (8,030,261,248 bytes) and of the optimizer (48,181,813,248 bytes);
# / 8192 rounded down: 980,256 and 5,881,569
M=980256
O=5881569
sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./ck checkpoint.num_checkpoints_write=3 \
    checkpoint.num_checkpoints_read=2 --accelerators 2 --local 1 --db ck.db
expect_eq "8b: exit status" "$SB_RC" 0
run=$(q ck.db "SELECT max(id) FROM runs")
expect_eq "8b: run" "$(q ck.db "SELECT kind, status, accelerators FROM runs WHERE id = $run")" "checkpoint|succeeded|2"
expect_eq "8b: 3 writes then 2 reads" \
    "$(q ck.db "SELECT group_concat(seq || ':' || op || ':' || checkpoint || ':' || ranks || ':' || files || ':' || bytes, ' ') FROM (SELECT * FROM checkpoints WHERE run_id = $run ORDER BY seq)")" \
    "1:write:1:2:4:$((2 * (M + O))) 2:write:2:2:4:$((2 * (M + O))) 3:write:3:2:4:$((2 * (M + O))) 4:read:1:2:4:$((2 * (M + O))) 5:read:2:2:4:$((2 * (M + O)))"
expect_eq "8b: every rank's bytes, every checkpoint" \
    "$(q ck.db "SELECT count(*), min(bytes), max(bytes), min(files), max(files) FROM checkpoint_ranks WHERE run_id = $run")" \
    "10|$((M + O))|$((M + O))|2|2"
expect_eq "8b: duration is the slowest rank" \
    "$(q ck.db "SELECT count(*) FROM checkpoints c WHERE run_id = $run AND duration_s = (SELECT max(duration_s) FROM checkpoint_ranks r WHERE r.run_id = c.run_id AND r.seq = c.seq) AND duration_s > 0")" 5
expect_eq "8b: throughput is bytes over that duration" \
    "$(q ck.db "SELECT count(*) FROM checkpoints WHERE run_id = $run AND abs(mb_per_s - bytes / 1e6 / duration_s) < 1e-6 * mb_per_s AND abs(gib_per_s - bytes / 1073741824.0 / duration_s) < 1e-6 * gib_per_s")" 5
expect_eq "8b: 12 files on disk (3 checkpoints x 2 ranks x 2 states)" "$(find ck -type f | wc -l)" 12
expect_eq "8b: DeepSpeed names" "$(cd ck/global_epoch1_step2 && ls | tr '\n' ' ')" \
    "zero_pp_rank_0_mp_rank_0_model_states.pt zero_pp_rank_0_mp_rank_0_optim_states.pt zero_pp_rank_1_mp_rank_0_model_states.pt zero_pp_rank_1_mp_rank_0_optim_states.pt "
expect_eq "8b: model state size on disk" "$(find ck -name '*model_states.pt' -size ${M}c | wc -l)" 6
expect_eq "8b: optimizer state size on disk" "$(find ck -name '*optim_states.pt' -size ${O}c | wc -l)" 6
expect_eq "8b: bytes on disk = bytes written" "$(cat ck/*/* | wc -c)" "$((3 * 2 * (M + O)))"
expect_contains "8b: summary table" sb.out "  write    3      2       4"
expect_contains "8b: summary table read" sb.out "  read     2      2       4"
"$SHARDBENCH" report last --db ck.db >report.out 2>&1
expect_eq "report exit" $? 0
expect_contains "report reprints the checkpoint table" report.out "shardbench checkpoint run $run"
expect_contains "report rows" report.out "  read     1      2       4"

# 4 ranks in 2 workers: data parallelism 4, a quarter each (/ 8192: 490,128 and 2,940,799)
sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./ck4 checkpoint.num_checkpoints_write=1 \
    checkpoint.num_checkpoints_read=1 --accelerators 4 --local 2 --db ck.db
expect_eq "8b x 4: exit status" "$SB_RC" 0
expect_eq "8b x 4: rows" "$(q ck.db "SELECT group_concat(op || ':' || bytes, ' ') FROM checkpoints WHERE run_id = (SELECT max(id) FROM runs)")" \
    "write:$((4 * (490128 + 2940799))) read:$((4 * (490128 + 2940799)))"
expect_eq "8b x 4: sizes on disk" "$(find ck4 -name '*model_states.pt' -size 490128c | wc -l) $(find ck4 -name '*optim_states.pt' -size 2940799c | wc -l)" "4 4"
expect_eq "8b x 4: both workers took part" "$(q ck.db "SELECT count(DISTINCT rank) FROM checkpoint_ranks WHERE run_id = (SELECT max(id) FROM runs)")" 4

# read only (num_checkpoints_write=0) reads what the first run wrote
sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./ck checkpoint.num_checkpoints_write=0 \
    checkpoint.num_checkpoints_read=3 --accelerators 2 --db ck.db
expect_eq "read only: exit status" "$SB_RC" 0
expect_eq "read only: 3 reads" "$(q ck.db "SELECT group_concat(op || checkpoint, ' ') FROM checkpoints WHERE run_id = (SELECT max(id) FROM runs)")" "read1 read2 read3"

# a truncated or missing file fails the read, naming it
truncate -s 1000 ck/global_epoch1_step1/zero_pp_rank_1_mp_rank_0_optim_states.pt
sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./ck checkpoint.num_checkpoints_write=0 \
    checkpoint.num_checkpoints_read=1 --accelerators 2 --db ck.db
# (a read-only run checks every file before it starts: refused, no run)
runs_before=$(q ck.db "SELECT count(*) FROM runs")
expect_eq "truncated: exit status" "$SB_RC" 2
expect_contains "truncated: named" sb.err "global_epoch1_step1/zero_pp_rank_1_mp_rank_0_optim_states.pt holds 1000 bytes where this run's checkpoint has $O"
expect_contains "truncated: folder named" sb.err "that an earlier run wrote into $(realpath ck)/"
expect_eq "truncated: no run" "$(q ck.db "SELECT count(*) FROM runs")" "$runs_before"
sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./ck checkpoint.num_checkpoints_write=1 \
    checkpoint.num_checkpoints_read=0 --accelerators 2 --db ck.db
expect_eq "rewrite: exit status" "$SB_RC" 0
expect_eq "rewrite: whole again" "$(stat -c %s ck/global_epoch1_step1/zero_pp_rank_1_mp_rank_0_optim_states.pt)" "$O"
rm ck/global_epoch1_step1/zero_pp_rank_0_mp_rank_0_model_states.pt
sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./ck checkpoint.num_checkpoints_write=0 \
    checkpoint.num_checkpoints_read=1 --accelerators 2 --db ck.db
expect_eq "missing: exit status" "$SB_RC" 2
expect_contains "missing: named" sb.err "global_epoch1_step1/zero_pp_rank_0_mp_rank_0_model_states.pt: No such file or directory (write them first, with checkpoint.num_checkpoints_read=0"

# subset: llama3_405b (TP 8 x PP 32 x DP 2, ZeRO 1) on 4 ranks = ranks 0-3 of
# the 512: pipeline stage 0, first replica: model 3,713,269,760 and optimizer
# 9,513,171,840 bytes each, / 65536: 56,660 and 145,159
sb checkpoint llama3_405b --subset checkpoint.scale=0.0000152587890625 checkpoint.time_between_checkpoints=0 \
    checkpoint.checkpoint_folder=./sub checkpoint.num_checkpoints_write=1 checkpoint.num_checkpoints_read=1 \
    --accelerators 4 --local 2 --db sub.db
expect_eq "subset: exit status" "$SB_RC" 0
expect_eq "subset: bytes" "$(q sub.db "SELECT group_concat(op || ':' || ranks || ':' || bytes, ' ') FROM checkpoints")" \
    "write:4:$((4 * (56660 + 145159))) read:4:$((4 * (56660 + 145159)))"
# ZeRO 1 with pipeline parallelism: DLIO writes the model layer by layer; stage 0 holds the embedding
# (layer 0) and layers 1-4 (126 over 32 stages: the first 30 hold 4), 2 x 16384 x 128256 / 8 bytes
# and 2 x 398,491,648 each, / 65536: 8,016 and 12,161 (rounded down per file: 56,660 in all, as before)
expect_eq "subset: optimizer files (mp ranks 0-3 of the first replica)" "$(ls sub/global_epoch1_step1 | grep -c '^zero_pp_rank_0_mp_rank_[0-3]_optim_states.pt$')" 4
expect_eq "subset: one model file per layer of stage 0" "$(ls sub/global_epoch1_step1 | grep -c '^layer_[0-4]-model_[0-3]_model_states.pt$')" 20
expect_eq "subset: layer sizes" "$(find sub/global_epoch1_step1 -name 'layer_0-*' -size 8016c | wc -l) $(find sub/global_epoch1_step1 -name 'layer_[1-4]-*' -size 12161c | wc -l)" "4 16"
expect_eq "subset: nothing else" "$(ls sub/global_epoch1_step1 | wc -l)" 24
expect_contains "subset: logged" sb.err "tensor 8 x pipeline 32 x data 2, ZeRO 1, subset"
sb checkpoint llama3_405b checkpoint.scale=0.0000152587890625 checkpoint.checkpoint_folder=./nosub --accelerators 4 --db sub.db
expect_eq "405b on 4 ranks without --subset: usage error" "$SB_RC" 2
expect_contains "405b without --subset: why" sb.err "4 ranks are not a multiple of tensor x pipeline parallelism = 8 x 32"
expect_eq "405b without --subset: nothing written" "$(ls nosub 2>/dev/null | wc -l)" 0

# fsync: one per file written with checkpoint.fsync (the preset's), none without
if strace -f -qq -e trace=none true >/dev/null 2>&1; then
    cat >traced-worker.sh <<EOF
#!/usr/bin/env bash
exec strace -f -qq -e trace=fsync,fdatasync -o "$SCRATCH/fsync.\$\$.txt" "$SHARDBENCH_WORKER" "\$@"
EOF
    chmod +x traced-worker.sh
    SHARDBENCH_WORKER=./traced-worker.sh sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./fs \
        checkpoint.num_checkpoints_write=2 checkpoint.num_checkpoints_read=1 --accelerators 2 --db fs.db
    expect_eq "fsync: exit status" "$SB_RC" 0
    expect_eq "fsync: one per file written (2 checkpoints x 4 files)" "$(cat fsync.*.txt | grep -c 'fsync(')" 8
    rm -f fsync.*.txt
    SHARDBENCH_WORKER=./traced-worker.sh sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./fs \
        checkpoint.fsync=false checkpoint.num_checkpoints_write=2 checkpoint.num_checkpoints_read=1 --accelerators 2 --db fs.db
    expect_eq "no fsync: exit status" "$SB_RC" 0
    expect_eq "no fsync: none" "$(cat fsync.*.txt | grep -c 'fsync(')" 0
else
    echo "skip - fsync count: strace cannot trace here"
fi

finish
