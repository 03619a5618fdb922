#!/usr/bin/env bash
# Checkpointing on S3 against a real S3 server (npm @20minutes/s3rver, see
# tests/s3/s3lib.sh) on loopback: llama3_8b scaled by 2^-13 on 2 ranks, the
# optimizer state (5,881,569 bytes) above the multipart threshold (5 MiB,
# parts of 5 MiB, S3's minimum: 2 parts), the model state (980,256 bytes) one PUT; then
# read back whole. Exact bytes in the database and on the server.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
mkdir -p s3data
trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" sbtest || { echo "FAIL - S3 server did not start"; exit 1; }
ep=${S3RVER_ENDPOINTS%% *}

M=980256
O=5881569
s3="storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=sbtest storage.storage_options.endpoint_url=$ep
    storage.storage_options.multipart_threshold_bytes=5242880 storage.storage_options.multipart_part_bytes=5242880"
sb checkpoint llama3_8b $s3 checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0 \
    checkpoint.checkpoint_folder=ckpt/llama3_8b checkpoint.num_checkpoints_write=2 checkpoint.num_checkpoints_read=2 \
    --accelerators 2 --local 1 --db s3.db
expect_eq "s3 checkpoint: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "s3 checkpoint: rows" \
    "$(q s3.db "SELECT group_concat(op || checkpoint || ':' || files || ':' || bytes, ' ') FROM (SELECT * FROM checkpoints ORDER BY seq)")" \
    "write1:4:$((2 * (M + O))) write2:4:$((2 * (M + O))) read1:4:$((2 * (M + O))) read2:4:$((2 * (M + O)))"
expect_eq "s3 checkpoint: per rank" "$(q s3.db "SELECT count(*), min(bytes), max(bytes) FROM checkpoint_ranks")" "8|$((M + O))|$((M + O))"
# requests: per write checkpoint and rank 1 PUT + (initiate + 2 parts of at least 5 MiB, S3's minimum,
# + complete) = 5 (the explicit threshold and part size over s3dlio's); per read and file s3dlio's
# max(2, ceil(16 / 2)) = 8 range GETs (lib/storage/s3/s3_shape.h)
expect_eq "s3 checkpoint: requests (multipart for the optimizer state)" \
    "$(q s3.db "SELECT requests, errors FROM endpoints")" "$((2 * 2 * 5 + 2 * 2 * 2 * 8))|0"
obj=$(find s3data/sbtest/ckpt/llama3_8b/global_epoch1_step2 -name 'zero_pp_rank_1_mp_rank_0_optim_states.pt*' -type f -size ${O}c | wc -l)
expect_eq "s3 checkpoint: object of the optimizer state on the server, whole" "$obj" 1
obj=$(find s3data/sbtest/ckpt/llama3_8b -name '*model_states.pt*' -type f -size ${M}c | wc -l)
expect_eq "s3 checkpoint: model state objects on the server" "$obj" 4

finish
