#!/usr/bin/env bash
# The checkpoint folder's own storage , as DLIO picks it from
# checkpoint.checkpoint_folder's scheme, against the loopback S3 test server
# (tests/s3/s3lib.sh) with buckets data-a and ckpt-b:
#  - dataset on S3 (data-a), checkpoints in file://FOLDER and in an absolute
#    folder: the exact files and sizes on disk, no checkpoint object on S3;
#  - dataset in data-a, checkpoints in s3://ckpt-b/PREFIX/: the exact objects
#    in ckpt-b, none in data-a;
#  - `shardbench checkpoint` writing into s3://ckpt-b/ and reading as a
#    separate invocation, and a read of checkpoints that are not there;
#  - a local dataset with s3:// checkpoints and an endpoint, and without one
#    (refused, naming the key).
# Checkpoints: model.type cnn, model.model_size_bytes 5000: model_states-0.pt
# from rank 0, after each epoch (global_epoch{E}_step5: 4 steps + 1).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
unset AWS_ENDPOINT_URL
trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" data-a ckpt-b || { echo "FAIL - S3 server did not start"; exit 1; }
ep=${S3RVER_ENDPOINTS%% *}

# keys of a bucket under a prefix, "key:size" sorted (s3rver keeps an object as KEY._S3rver_object)
objects () {    # BUCKET [PREFIX]
    [ -d "s3data/$1" ] || return 0
    (cd "s3data/$1" && find . -type f -name '*._S3rver_object' -printf '%P:%s\n' | sed 's/\._S3rver_object:/:/' \
        | grep "^${2:-}" | sort | tr '\n' ' ' | sed 's/ $//')
}
outside_dataset () {    # objects of data-a that are not the dataset's (ds/train/ and its marker)
    objects data-a | tr ' ' '\n' | grep -v -e '^ds/train/' -e '^ds/\.shardbench-dataset:' | tr '\n' ' ' | sed 's/ $//'
}
listing () {    # FOLDER: "dir/file:size" of every file, sorted
    [ -d "$1" ] || return 0
    (cd "$1" && find . -type f -printf '%P:%s\n' | sort | tr '\n' ' ' | sed 's/ $//')
}

s3="storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_options.endpoint_url=$ep"
data="dataset.num_files_train=16 dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0
      reader.batch_size=2 train.computation_time=0.001"
cnn="model.type=cnn model.model_size_bytes=5000 workflow.checkpoint=True train.epochs=2"
two="global_epoch1_step5/model_states-0.pt:5000 global_epoch2_step5/model_states-0.pt:5000"

sb datagen $s3 storage.storage_root=data-a dataset.data_folder=ds $data --accelerators 2 --local 1 --db t.db
expect_eq "datagen on S3: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
nds=$(objects data-a ds/train | wc -w)
expect_eq "datagen on S3: 16 files in data-a" "$nds" 16
expect_eq "datagen on S3: and its marker only" "$(outside_dataset)" ""

# 1. dataset on S3, checkpoints in file://FOLDER (hybrid_storage.yaml's layout)
sb run $s3 storage.storage_root=data-a dataset.data_folder=ds $data $cnn \
    "checkpoint.checkpoint_folder=file://$SCRATCH/nvme/ck/" --accelerators 2 --local 1 --db t.db
expect_eq "S3 data, file:// checkpoints: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
expect_eq "S3 data, file:// checkpoints: files on disk" "$(listing nvme/ck)" "$two"
expect_eq "S3 data, file:// checkpoints: data-a holds the dataset only" "$(outside_dataset)" ""
expect_eq "S3 data, file:// checkpoints: ckpt-b empty" "$(objects ckpt-b)" ""
run=$(q t.db "SELECT max(id) FROM runs WHERE kind = 'train'")
expect_eq "S3 data, file:// checkpoints: rows" \
    "$(q t.db "SELECT group_concat(op || ':' || files || ':' || bytes, ' ') FROM (SELECT * FROM checkpoints WHERE run_id = $run ORDER BY seq)")" \
    "write:1:5000 write:1:5000"
expect_contains "S3 data, file:// checkpoints: logged where" sb.err "checkpoints: local files under $SCRATCH/nvme/ck/"

# 1b. an absolute folder (no scheme) is local too, with a dataset on S3
sb run $s3 storage.storage_root=data-a dataset.data_folder=ds $data $cnn train.epochs=1 \
    "checkpoint.checkpoint_folder=$SCRATCH/abs" --accelerators 2 --local 1 --db t.db
expect_eq "S3 data, absolute folder: exit status" "$SB_RC" 0
expect_eq "S3 data, absolute folder: files on disk" "$(listing abs)" "global_epoch1_step5/model_states-0.pt:5000"
expect_eq "S3 data, absolute folder: data-a holds the dataset only" "$(outside_dataset)" ""

# 2. dataset in data-a, checkpoints in another bucket (multi_endpoint_*.yaml's layout)
sb run $s3 storage.storage_root=data-a dataset.data_folder=ds $data $cnn \
    checkpoint.checkpoint_folder=s3://ckpt-b/run1/ --accelerators 2 --local 1 --db t.db
expect_eq "bucket A data, bucket B checkpoints: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
expect_eq "bucket A data, bucket B checkpoints: objects in ckpt-b" "$(objects ckpt-b)" \
    "run1/global_epoch1_step5/model_states-0.pt:5000 run1/global_epoch2_step5/model_states-0.pt:5000"
expect_eq "bucket A data, bucket B checkpoints: none in data-a" "$(outside_dataset)" ""
expect_contains "bucket A data, bucket B checkpoints: logged where" sb.err "checkpoints: s3 objects under s3://ckpt-b/run1/"
# a relative folder with a dataset on S3 stays a key prefix of the dataset's bucket
sb run $s3 storage.storage_root=data-a dataset.data_folder=ds $data $cnn train.epochs=1 \
    checkpoint.checkpoint_folder=rel/ck --accelerators 2 --local 1 --db t.db
expect_eq "relative folder, S3 data: exit status" "$SB_RC" 0
expect_eq "relative folder, S3 data: in data-a" "$(objects data-a rel/)" "rel/ck/global_epoch1_step5/model_states-0.pt:5000"
expect_eq "relative folder, S3 data: nothing local" "$(listing rel)" ""
# a bucket that does not exist: the coordinator says so before training
sb run $s3 storage.storage_root=data-a dataset.data_folder=ds $data $cnn \
    checkpoint.checkpoint_folder=s3://no-such-bucket/x --accelerators 2 --local 1 --db t.db
expect_eq "missing checkpoint bucket: exit status" "$SB_RC" 1
expect_contains "missing checkpoint bucket: said" sb.err "checkpoint.checkpoint_folder s3://no-such-bucket/x: the coordinator cannot use 'no-such-bucket'"
# an unserved scheme is refused at load, naming the key
sb run $s3 storage.storage_root=data-a dataset.data_folder=ds $data $cnn \
    checkpoint.checkpoint_folder=hdfs://nn/ck --accelerators 2 --local 1 --db t.db
expect_eq "hdfs:// checkpoints: exit status" "$SB_RC" 2
expect_contains "hdfs:// checkpoints: said" sb.err "key 'checkpoint.checkpoint_folder': hdfs:// ('hdfs://nn/ck') is not served"
# another kind of object store than the dataset's: its endpoints are S3's
sb run $s3 storage.storage_root=data-a dataset.data_folder=ds $data $cnn \
    checkpoint.checkpoint_folder=az://container/ck --accelerators 2 --local 1 --db t.db
expect_eq "az:// checkpoints of an S3 dataset: exit status" "$SB_RC" 2
expect_contains "az:// checkpoints of an S3 dataset: said" sb.err \
    "'az://container/ck' is on az:// but the dataset is on s3:// (the s3 engine): a run reaches one kind of object store"

# 3. `shardbench checkpoint` into another bucket, written and read as separate invocations
ck="checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0 checkpoint.checkpoint_folder=s3://ckpt-b/llama"
sb checkpoint llama3_8b $s3 storage.storage_root=data-a $ck checkpoint.num_checkpoints_write=1 \
    checkpoint.num_checkpoints_read=0 --accelerators 2 --local 1 --db c.db
expect_eq "checkpoint write into bucket B: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
expect_eq "checkpoint write into bucket B: objects" "$(objects ckpt-b llama/)" \
    "llama/global_epoch1_step1/zero_pp_rank_0_mp_rank_0_model_states.pt:980256 llama/global_epoch1_step1/zero_pp_rank_0_mp_rank_0_optim_states.pt:5881569 llama/global_epoch1_step1/zero_pp_rank_1_mp_rank_0_model_states.pt:980256 llama/global_epoch1_step1/zero_pp_rank_1_mp_rank_0_optim_states.pt:5881569"
expect_eq "checkpoint write into bucket B: none in data-a" "$(outside_dataset)" \
    "rel/ck/global_epoch1_step5/model_states-0.pt:5000"
sb checkpoint llama3_8b $s3 storage.storage_root=data-a $ck checkpoint.num_checkpoints_write=0 \
    checkpoint.num_checkpoints_read=1 --accelerators 2 --local 1 --db c.db
expect_eq "checkpoint read from bucket B: exit status" "$SB_RC" 0
expect_eq "checkpoint read from bucket B: rows" \
    "$(q c.db "SELECT group_concat(op || checkpoint || ':' || files || ':' || bytes, ' ') FROM (SELECT * FROM checkpoints ORDER BY run_id, seq)")" \
    "write1:4:13723650 read1:4:13723650"
sb checkpoint llama3_8b $s3 storage.storage_root=data-a $ck checkpoint.num_checkpoints_write=0 \
    checkpoint.num_checkpoints_read=2 --accelerators 2 --local 1 --db c.db
expect_eq "checkpoint read of a missing one: exit status" "$SB_RC" 2
expect_contains "checkpoint read of a missing one: said" sb.err \
    "that an earlier run wrote into s3://ckpt-b/llama/, but global_epoch1_step2/"

# 4. a local dataset, checkpoints on S3: with an endpoint, and without one
sb run dataset.data_folder=./data $data workflow.generate_data=True $cnn train.epochs=1 \
    storage.storage_options.endpoint_url=$ep checkpoint.checkpoint_folder=s3://ckpt-b/fromlocal \
    --accelerators 2 --local 1 --db l.db
expect_eq "local data, S3 checkpoints: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
expect_eq "local data, S3 checkpoints: objects" "$(objects ckpt-b fromlocal/)" \
    "fromlocal/global_epoch1_step5/model_states-0.pt:5000"
expect_eq "local data, S3 checkpoints: nothing local" "$(listing fromlocal)$(listing s3:)" ""
sb run dataset.data_folder=./data $data $cnn train.epochs=1 checkpoint.checkpoint_folder=s3://ckpt-b/noep \
    --accelerators 2 --local 1 --db l.db
expect_eq "local data, S3 checkpoints, no endpoint: exit status" "$SB_RC" 2
expect_contains "local data, S3 checkpoints, no endpoint: said" sb.err \
    "key 'checkpoint.checkpoint_folder': 's3://ckpt-b/noep' is in an object store (s3://) but the dataset is local: no endpoint is configured"
expect_eq "local data, S3 checkpoints, no endpoint: nothing written" "$(objects ckpt-b noep/)" ""

finish
