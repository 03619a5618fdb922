#!/usr/bin/env bash
# The object-store engines other than s3 through the whole program: a
# workload names its store by URI scheme or storage_type and the registry
# finds the engine (lib/storage/engine.h); datagen, listing, training and
# checkpoints run on it as on S3.
#   azure: Azurite (npm, tests/azure/azurite.sh) on loopback, its endpoint
#          and credentials from AZURE_STORAGE_CONNECTION_STRING
#   gcs:   GCS's XML API speaks S3's protocol; with no GCS reachable here it
#          runs against s3rver, which checks the protocol and the signing
#          scope ("auto"), not GCS itself (docs/STORAGE.md)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"
. "$(dirname "$0")/../azure/azurite.sh"

azurite_install || { echo "FAIL - cannot install Azurite"; exit 1; }
s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
cleanup () {
    azurite_stop
    s3rver_stop
    rm -rf "$SCRATCH"
}
trap cleanup EXIT
azurite_start "$SCRATCH" sbtest ckpt || { echo "FAIL - Azurite did not start"; exit 1; }
azurite_env
s3rver_env
mkdir -p s3data
s3rver_start "$SCRATCH/s3data" sbtest || { echo "FAIL - S3 server did not start"; exit 1; }
s3ep=${S3RVER_ENDPOINTS%% *}

# ------------------------------------------------------------------ azure: datagen and train
# 60 objects, 4 ranks of 2 loader threads, batch 4: every rank reads 3
# batches of 4 per epoch (the S3 test's arithmetic, tests/integration/test_s3.sh)
cat >az.yaml <<'YAML'
model:
  name: az-mission
workflow:
  generate_data: True
dataset:
  data_folder: az://sbtest/mission
  num_files_train: 60
  record_length_bytes: 40000
  record_length_bytes_stdev: 5000
  num_subfolders_train: 3
reader:
  batch_size: 4
  read_threads: 2
  sample_shuffle: seed
  verify: true
train:
  epochs: 2
  computation_time: 0.001
storage:
  storage_type: az
YAML
sb run az.yaml --accelerators 4 --local 2 --db az.db
expect_eq "az run: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "az run: datagen and train succeeded" \
    "$(q az.db "SELECT group_concat(kind || ':' || status, ' ') FROM runs")" "datagen:succeeded train:succeeded"
expect_eq "az run: the catalog lists 60 blobs under az://" \
    "$(q az.db "SELECT count, uri FROM catalogs ORDER BY id DESC LIMIT 1")" "60|az://sbtest/mission/train"
expect_eq "az run: every rank 12 samples in 3 batches, both epochs" \
    "$(q az.db "SELECT min(samples), max(samples), min(batches), max(batches), count(*) FROM rank_epochs WHERE run_id = 2")" \
    "12|12|3|3|8"
expect_eq "az run: one GET per sample read (2 x 48), no errors, no retries, on Azurite's endpoint" \
    "$(q az.db "SELECT sum(requests), sum(errors), sum(retries), group_concat(DISTINCT endpoint) FROM endpoints WHERE run_id = 2")" \
    "96|0|0|$AZURITE_ENDPOINT"
expect_contains "az run: the engine named" sb.err "azure"
# the blobs themselves, listed by Python's standard library with an account
# SAS from the independent signer (tests/azure/az_shared_key.py), not our client
sas=$(python3 "$AZURITE_SIGNER" sas "$AZURITE_ACCOUNT" "$AZURITE_KEY")
n=$(python3 - "$AZURITE_ENDPOINT" "$sas" <<'PY'
import re, sys, urllib.parse, urllib.request
names, marker = [], ""
while True:
    url = (sys.argv[1] + "/sbtest?restype=container&comp=list&prefix=mission/train/&" + sys.argv[2]
           + ("&marker=" + urllib.parse.quote(marker) if marker else ""))
    body = urllib.request.urlopen(url, timeout=30).read().decode()
    names += re.findall(r"<Name>([^<]*)</Name>", body)
    m = re.search(r"<NextMarker>([^<]+)</NextMarker>", body)
    if not m:
        break
    marker = m.group(1)
print(len([x for x in names if ".npz" in x]))
PY
)
expect_eq "az run: 60 blobs in the container (Azurite's own listing)" "$n" 60

# the catalog is reused by a second run
sb run az.yaml workflow.generate_data=False train.epochs=1 --accelerators 4 --local 1 --db az.db
expect_eq "az second run: exit status" "$SB_RC" 0
expect_contains "az second run: catalog reused" sb.err "reused: 60 objects"

# a data folder URI alone names its engine
grep -v '^storage:\|^  storage_type:' az.yaml >alone.yaml
sb run alone.yaml workflow.generate_data=False train.epochs=1 --accelerators 2 --local 1 --db alone.db
expect_eq "az:// alone: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "az:// alone: 2 ranks read 28 samples each (DLIO's per-thread batches) from Azurite" \
    "$(q alone.db "SELECT (SELECT sum(samples) FROM rank_epochs), sum(requests) >= 56, sum(errors),
                      group_concat(DISTINCT endpoint) FROM endpoints")" "56|1|0|$AZURITE_ENDPOINT"

# DLIO's spelling: storage_type s3 through s3dlio, whose uri_scheme reaches
# Azure (obj_store_lib.py forms az://BUCKET/KEY)
sb run alone.yaml workflow.generate_data=False train.epochs=1 storage.storage_type=s3 storage.storage_library=s3dlio \
    storage.storage_options.uri_scheme=az --accelerators 2 --local 1 --db dlio.db
expect_eq "s3 + s3dlio + uri_scheme az: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "s3 + s3dlio + uri_scheme az: read from Azurite" \
    "$(q dlio.db "SELECT (SELECT sum(samples) FROM rank_epochs), sum(requests) >= 56, sum(errors),
                      group_concat(DISTINCT endpoint) FROM endpoints")" "56|1|0|$AZURITE_ENDPOINT"

# ------------------------------------------------------------------ azure: checkpoints
# llama3_8b scaled by 2^-13 on 2 ranks (tests/integration/test_checkpoint_s3.sh):
# the optimizer state (5,881,569 bytes) goes up in staged blocks of 1 MiB
M=980256
O=5881569
sb checkpoint llama3_8b storage.storage_type=az checkpoint.checkpoint_folder=az://ckpt/llama3 storage.azure.block_bytes=1MiB \
    storage.azure.single_put_bytes=2MiB checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0 \
    checkpoint.num_checkpoints_write=1 checkpoint.num_checkpoints_read=1 dataset.data_folder=az://sbtest/mission \
    --accelerators 2 --local 1 --db azck.db
expect_eq "az checkpoint: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "az checkpoint: rows" \
    "$(q azck.db "SELECT group_concat(op || checkpoint || ':' || files || ':' || bytes, ' ') FROM (SELECT * FROM checkpoints ORDER BY seq)")" \
    "write1:4:$((2 * (M + O))) read1:4:$((2 * (M + O)))"
expect_contains "az checkpoint: where" sb.err "checkpoints: azure objects under az://ckpt/llama3/"

# a local dataset, checkpoints in Azure: the azure engine finds the endpoint
# in the connection string, as for a dataset there
sb checkpoint llama3_8b checkpoint.checkpoint_folder=az://ckpt/local checkpoint.scale=0.0001220703125 \
    checkpoint.time_between_checkpoints=0 checkpoint.num_checkpoints_write=1 checkpoint.num_checkpoints_read=0 \
    --accelerators 2 --local 1 --db azlocal.db
expect_eq "az checkpoint, local dataset: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "az checkpoint, local dataset: written" \
    "$(q azlocal.db "SELECT group_concat(op || checkpoint || ':' || files || ':' || bytes, ' ') FROM checkpoints")" \
    "write1:4:$((2 * (M + O)))"
expect_eq "az checkpoint, local dataset: on Azurite's endpoint, no errors" \
    "$(q azlocal.db "SELECT group_concat(DISTINCT endpoint), sum(errors) FROM endpoints")" "$AZURITE_ENDPOINT|0"

# ------------------------------------------------------------------ gcs (the XML API) against s3rver
sb run az.yaml dataset.data_folder=gs://sbtest/gmission storage.storage_type=gcs \
    "storage.storage_options.endpoint_url=$s3ep" --accelerators 4 --local 2 --db gs.db
expect_eq "gs run: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "gs run: catalog" "$(q gs.db "SELECT count, uri FROM catalogs ORDER BY id DESC LIMIT 1")" "60|gs://sbtest/gmission/train"
expect_eq "gs run: every rank 12 samples in 3 batches" \
    "$(q gs.db "SELECT min(samples), max(samples), count(*) FROM rank_epochs WHERE run_id = 2")" "12|12|8"
expect_eq "gs run: 96 GETs, no errors" "$(q gs.db "SELECT sum(requests), sum(errors) FROM endpoints WHERE run_id = 2")" "96|0"
# s3rver keeps an object as its data file and metadata files beside it
expect_eq "gs run: objects on the server" \
    "$(find s3data/sbtest/gmission/train -name 'img_*_of_60.npz*' | sed 's/\.npz.*/.npz/' | sort -u | wc -l)" 60

# ------------------------------------------------------------------ refusals
sb run az.yaml dataset.data_folder=hdfs://nn/data storage.storage_type=object shardbench.lenient=true --db bad.db
expect_eq "unserved scheme: exit status" "$SB_RC" 2
expect_contains "unserved scheme: named, with what is served" sb.err \
    "hdfs:// is not served by this shardbench (it serves file://, direct://, s3://, gs://, az://, synthetic://)"
sb run az.yaml dataset.data_folder=az://other/x storage.storage_root=sbtest --db bad.db
expect_eq "two containers: exit status" "$SB_RC" 2
expect_contains "two containers: named" sb.err "names 'other', storage.storage_root"
env -u AZURE_STORAGE_CONNECTION_STRING -u AZURE_STORAGE_ACCOUNT "$SHARDBENCH" run az.yaml --db bad.db >sb.out 2>sb.err
expect_eq "no Azure endpoint: exit status" "$?" 2
expect_contains "no Azure endpoint: says what to set" sb.err "AZURE_STORAGE_CONNECTION_STRING"

finish
