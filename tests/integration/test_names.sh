#!/usr/bin/env bash
# Object names stay in the data folder: the name-forming keys
# (dataset.file_prefix, dataset.format) are checked when the workload is
# loaded, and a worker checks the name parts and the object names a
# coordinator sends it (a fake coordinator, evil_coordinator.c, sends bad ones).
. "$(dirname "$0")/lib.sh"
: "${EVIL_COORDINATOR:?path of the evil_coordinator binary}"

mkdir -p a/b
cd a/b || exit 1
small="dataset.num_files_train=4 dataset.record_length_bytes=4096 reader.batch_size=1 train.epochs=1"

# the coordinator refuses the keys before anything is written
sb datagen dataset.data_folder=data "dataset.file_prefix=../../x" $small --db n.db
expect_eq "file_prefix with '/' exits 2" "$SB_RC" 2
expect_eq "file_prefix with '/': exact error" "$(cat sb.err)" \
    "shardbench: error: command line: key 'dataset.file_prefix': must not contain '/' (object names stay in the data folder)"
sb datagen dataset.data_folder=data "dataset.file_prefix=.." $small --db n.db
expect_eq "file_prefix '..' exits 2" "$SB_RC" 2
expect_contains "file_prefix '..': says why" sb.err "key 'dataset.file_prefix': must not contain '..'"
sb datagen dataset.data_folder=data "dataset.file_prefix=im$(printf '\033')g" $small --db n.db
expect_eq "file_prefix with a control character exits 2" "$SB_RC" 2
expect_contains "control character: says why" sb.err "key 'dataset.file_prefix': must not contain control characters"
sb datagen dataset.data_folder=data "dataset.format=np..z" $small --db n.db
expect_eq "format with '..' exits 2" "$SB_RC" 2
expect_contains "format: names the key" sb.err "key 'dataset.format': must not contain '..'"
printf 'dataset:\n  data_folder: data\n  file_prefix: "../../y"\n' >w.yaml
sb datagen w.yaml $small --db n.db
expect_eq "file_prefix from a file exits 2" "$SB_RC" 2
expect_contains "names the file and line" sb.err "w.yaml:3: key 'dataset.file_prefix': must not contain '/'"
expect_eq "nothing written anywhere" "$(find "$SCRATCH" -name '*_of_*' | wc -l) $([ -e data ] && echo data || echo none)" "0 none"
# a sound prefix still works
sb datagen dataset.data_folder=data dataset.file_prefix=img.v2 $small --db n.db
expect_eq "a sound prefix with a dot generates" "$SB_RC $(find data -name 'img.v2_*' | wc -l)" "0 4"

# the worker checks what a coordinator sends
ep="ipc://$SCRATCH/evil.sock"
mkdir -p data/train
"$EVIL_COORDINATOR" "$ep" prefix "$SCRATCH/a/b/data/" >evil1.out 2>evil1.err &
evil=$!
await_text evil1.out listening
timeout 30 "$SHARDBENCH_WORKER" --coordinator "$ep" --timeout 10 >w1.out 2>w1.err
expect_eq "worker given a file_prefix with '..' exits 1" "$?" 1
expect_contains "worker names its ranks and the value" w1.err \
    "ranks 0-0: the coordinator sent dataset.file_prefix '../../escape', which must not contain '/' (object names stay in the data folder): refusing to build object names from it"
wait "$evil"

echo "outside the data folder" >"$SCRATCH/a/escape.npz"
"$EVIL_COORDINATOR" "$ep" key "$SCRATCH/a/b/data/" >evil2.out 2>evil2.err &
evil=$!
await_text evil2.out listening
timeout 30 "$SHARDBENCH_WORKER" --coordinator "$ep" --timeout 10 >w2.out 2>w2.err
wait "$evil"
expect_eq "fake coordinator ran the exchange" "$?" 0
expect_contains "the worker started the epoch and asked for catalog entries" evil2.out "got ENTRIES_REQ"
expect_contains "the worker refused the name, naming rank and name" evil2.out \
    "ERROR rank 0 op name target train/../../escape.npz: rank 0: the coordinator sent object name 'train/../../escape.npz', which has a '..' component (it would leave the data folder)"
expect_eq "nothing created outside the data folder" "$(find "$SCRATCH" -name '*escape*' | sort | tr '\n' ' ')" "$SCRATCH/a/escape.npz "

# a page of a file list (reader.file_shuffle) naming an object the catalog does not have
"$EVIL_COORDINATOR" "$ep" list "$SCRATCH/a/b/data/" >evil3.out 2>evil3.err &
evil=$!
await_text evil3.out listening
timeout 30 "$SHARDBENCH_WORKER" --coordinator "$ep" --timeout 10 >w3.out 2>w3.err
wait "$evil"
expect_eq "fake coordinator ran the list exchange" "$?" 0
expect_contains "the worker asked for its rank's file list" evil3.out "got LIST_REQ"
expect_contains "the worker refused the page, naming page, rank and object" evil3.out \
    "ERROR rank 0 op protocol target : LIST page 0 of rank 0, epoch 1: page 0 of rank 0's file list names catalog object 99 of 4"
finish
