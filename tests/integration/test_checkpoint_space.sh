#!/usr/bin/env bash
# Checkpoints and disk space: a checkpoint plan larger than the free space
# is refused before anything is written (the coordinator's check of the
# local checkpoint folder), a worker that finds less space than its ranks'
# files need refuses before its first write, a write that fails midway
# removes its partial file, and the run says what it leaves on disk.
# The worker-side checks run on a small tmpfs when this host lets the test
# mount one (root); without, they are skipped and said so.
. "$(dirname "$0")/lib.sh"

scale="checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0"
# llama3_8b on 2 ranks, ZeRO 3: per rank model 980,256 and optimizer
# 5,881,569 bytes at this scale (test_checkpoint.sh); unscaled
# 2 x (8,030,261,248 + 48,181,813,248) = 112,424,148,992 bytes a checkpoint
M=980256
O=5881569
FULL=112424148992

# ---- the coordinator: 200 unscaled checkpoints (20.4 TiB) are refused at once
sb checkpoint llama3_8b checkpoint.time_between_checkpoints=0 checkpoint.checkpoint_folder=./big \
    checkpoint.num_checkpoints_write=200 checkpoint.num_checkpoints_read=0 --accelerators 2 --local 1 --db big.db
expect_eq "plan of 20 TiB: exit status" "$SB_RC" 2
need=$((200 * FULL))
msg=$(grep -o "not enough space in $(realpath big): .*" sb.err)
free=$(printf '%s\n' "$msg" | sed -n 's/.* more there, \([0-9]*\) bytes (.*/\1/p')
gib () { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1073741824 }'; }
expect_eq "plan of 20 TiB: the message" "$msg" \
    "not enough space in $(realpath big): 200 checkpoint(s) of $FULL bytes ($(gib $FULL) GiB, 4 files of 2 ranks) need $need bytes ($(gib $need) GiB) more there, $free bytes ($(gib "$free") GiB) are free: free space, or lower checkpoint.num_checkpoints_write or checkpoint.scale; nothing was written"
avail=$(df -B1 --output=avail big | tail -1 | tr -d ' ')
expect_eq "plan of 20 TiB: the free bytes are the folder's (df, within 64 MiB)" \
    "$(( free - avail < 67108864 && avail - free < 67108864 ))" 1
expect_eq "plan of 20 TiB: no file written" "$(find big -type f | wc -l)" 0
expect_eq "plan of 20 TiB: no worker started, no run" "$(q big.db "SELECT count(*) FROM runs" 2>/dev/null || echo 0)" 0

# ---- what a run leaves behind: measured on disk, said at the end
sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./left checkpoint.num_checkpoints_write=2 \
    checkpoint.num_checkpoints_read=1 --accelerators 2 --local 1 --db left.db
expect_eq "left behind: exit status" "$SB_RC" 0
expect_contains "left behind: said" sb.err \
    "checkpoint: 8 files, $((4 * (M + O))) bytes ($(gib $((4 * (M + O)))) GiB), of checkpoints 1..2 stay in $(realpath left) (global_epoch1_step{K}/): shardbench does not remove them (a run with checkpoint.num_checkpoints_write=0 reads them); delete them when done"
expect_eq "left behind: what the disk holds" "$(find left -type f | wc -l) $(cat left/*/* | wc -c)" "8 $((4 * (M + O)))"
# rewriting them needs only what they add: a plan that fits once the old files are counted
sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./left checkpoint.num_checkpoints_write=2 \
    checkpoint.num_checkpoints_read=0 --accelerators 2 --local 1 --db left.db
expect_eq "rewrite: exit status" "$SB_RC" 0
expect_contains "rewrite: nothing more needed" sb.err "checkpoints: 0 bytes (0.00 GiB) to write into $(realpath left)"

# ---- a write that fails midway (EFBIG under a 2 MiB file size limit) removes its partial file
cat >limited-worker.sh <<EOF
#!/usr/bin/env bash
trap '' XFSZ
ulimit -f 2048
exec "$SHARDBENCH_WORKER" "\$@"
EOF
chmod +x limited-worker.sh
SHARDBENCH_WORKER=./limited-worker.sh sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./cut \
    checkpoint.num_checkpoints_write=1 checkpoint.num_checkpoints_read=0 --accelerators 1 --local 1 --db cut.db
# 1 rank: the whole model, 1,960,512 bytes, fits; the optimizer, 11,763,138, is cut at 2 MiB
expect_eq "cut short: exit status" "$SB_RC" 1
expect_contains "cut short: the write named, and the partial file removed" sb.err \
    "write $(realpath cut)/global_epoch1_step1/zero_pp_rank_0_mp_rank_0_optim_states.pt at offset 2097152: File too large (the partial file, 2097152 bytes, was removed)"
expect_eq "cut short: the error row" "$(q cut.db "SELECT op, errno_val FROM errors WHERE rank = 0")" "write|27"
expect_eq "cut short: only the whole file stays" "$(cd cut && find . -type f)" \
    "./global_epoch1_step1/zero_pp_rank_0_mp_rank_0_model_states.pt"

# ---- a worker that finds less space than its ranks need: a tmpfs of 16 MiB
# holds the checkpoint (13,723,650 bytes) when the coordinator looks, 6 MiB
# of it are taken before the worker starts
mkdir small
if ! mount -t tmpfs -o size=16m tmpfs small 2>/dev/null; then
    echo "skip - worker free-space check: cannot mount a tmpfs here (not root)"
    rmdir small
    finish
fi
trap 'umount "$SCRATCH/small" 2>/dev/null; rm -rf "$SCRATCH"' EXIT
cat >filling-worker.sh <<EOF
#!/usr/bin/env bash
[ -e "$SCRATCH/small/filler" ] || head -c 6291456 /dev/zero >"$SCRATCH/small/filler"
df -B1 --output=avail "$SCRATCH/small" | tail -1 | tr -d ' ' >"$SCRATCH/small.avail"
exec "$SHARDBENCH_WORKER" "\$@"
EOF
chmod +x filling-worker.sh
SHARDBENCH_WORKER=./filling-worker.sh sb checkpoint llama3_8b $scale checkpoint.checkpoint_folder=./small/ck \
    checkpoint.num_checkpoints_write=1 checkpoint.num_checkpoints_read=0 --accelerators 2 --local 1 --db small.db
expect_eq "tmpfs: exit status" "$SB_RC" 1
left=$(cat small.avail)
expect_eq "tmpfs: 10 MiB (less the folder's page) left for the worker" "$((left > 10000000 && left <= 10485760))" 1
expect_contains "tmpfs: the worker's ranks refused before writing" sb.err \
    " on $(hostname): not enough space in $SCRATCH/small/ck/global_epoch1_step1: the 4 files of ranks 0-1 on this host need $((2 * (M + O))) bytes ($(gib $((2 * (M + O)))) GiB) more there, $left bytes ($(gib "$left") GiB) are free; nothing was written"
expect_eq "tmpfs: the error rows (op, target, ENOSPC)" \
    "$(q small.db "SELECT DISTINCT op || '|' || target || '|' || errno_val FROM errors")" \
    "write|$SCRATCH/small/ck/global_epoch1_step1|28"
expect_eq "tmpfs: no checkpoint file" "$(find small/ck -type f | wc -l)" 0
expect_contains "tmpfs: nothing left behind, said" sb.err "checkpoint: nothing of this run stays in $SCRATCH/small/ck"
umount small
finish
