#!/usr/bin/env bash
# Datagen never mixes, corrupts or litters a local data folder:
# a second datagen into a folder in use is refused naming the holder; writes
# stop when the coordinator aborts or dies and no temporary is left; stale
# temporaries are removed by the next datagen; a folder of another
# generation is refused (datagen and run, naming the keys) unless --clean;
# datagen states its bytes, checks the free space and has --dry-run; a worker
# that does not see the coordinator's folder is refused before any write.
. "$(dirname "$0")/lib.sh"

HOST=$(hostname)
# runs read what a datagen wrote (workflow.generate_data=False: the quickstart
# preset, which the command line starts from, would generate it)
small="workflow.generate_data=False dataset.num_files_train=8 dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 --progress off"
# a datagen that a worker stops in ($held): jpeg files of 4 Mpixel,
# one rank; a temporary exists from before the encoding until the rename
slow="dataset.format=jpeg dataset.num_files_train=24 dataset.record_length_bytes=4194304
      dataset.record_length_bytes_stdev=0 shardbench.heartbeat_timeout_s=120 --accelerators 1 --progress off"

tmps () { find "$1" -name '.*.tmp' 2>/dev/null | wc -l; }
files () { find "$1" -name '*_of_*' ! -name '.*' 2>/dev/null | wc -l; }
# wait_for SECONDS COMMAND...: until COMMAND succeeds; status 1 on timeout
wait_for () {
    local end=$((SECONDS + $1)); shift
    until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.02; done
}
gone () { ! kill -0 "$1" 2>/dev/null; }
# every thread of process $1 stopped (kill -STOP returns before they are:
# a rename in flight would land after the count)
stopped () {
    local t state
    for t in /proc/"$1"/task/*; do
        state=$(sed 's/.*) //' "$t/stat" 2>/dev/null | cut -c1)
        [ -z "$state" ] || [ "$state" = T ] || [ "$state" = t ] || return 1
    done
}
# held: a worker with this in its environment stops itself (SIGSTOP) once it
# holds its 3rd temporary (the file engine's test hook), so that the test
# never races the writer
held=SHARDBENCH_TEST_STOP_AT_TEMPORARY=3
# wait_held PID: until every thread of PID is stopped (status 1 if it is gone)
wait_held () { wait_for 60 stopped "$1" && ! gone "$1"; }

# --- 1. one datagen per folder: the second is refused, naming the holder
"$SHARDBENCH" datagen dataset.data_folder=./a $small --workers 1 --bind "tcp://$SB_LO:*" >a.out 2>a.err &
A=$!
ep=$(coordinator_endpoint a.err)
expect_eq "first datagen waits for its worker" "$([ -n "$ep" ] && echo yes)" yes
sb datagen dataset.data_folder=./a $small
expect_eq "second datagen into the folder: exit status" "$SB_RC" 1
expect_contains "second datagen: names the folder and the holder" sb.err \
    "error: data folder $SCRATCH/a is in use: datagen on host $HOST pid $A since"
expect_contains "second datagen: names the lock" sb.err "holds $SCRATCH/a/.shardbench.lock (another datagen writes there)"
# the holder's time as a UTC time and its age, never seconds since 1970
if grep -qE "pid $A since [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} UTC \([0-9]+ s ago\) holds " sb.err; then
    pass "second datagen: the holder's time in UTC and its age"
else
    fail "second datagen: the holder's time in UTC and its age:"; sed 's/^/    /' sb.err
fi
sb run dataset.data_folder=./a $small reader.batch_size=1 train.epochs=1
expect_eq "a run reading the folder meanwhile: exit status" "$SB_RC" 1
expect_contains "a run meanwhile: refused" sb.err "error: data folder $SCRATCH/a is in use: datagen on host $HOST pid $A"
kill -INT "$A"; wait "$A"
expect_eq "first datagen interrupted before its worker came: exit status (128 + SIGINT)" "$?" 130
sb datagen dataset.data_folder=./a $small
expect_eq "datagen once the holder is gone: exit status" "$SB_RC" 0
expect_eq "datagen once the holder is gone: 8 files" "$(files a/train)" 8

# --- 2. Ctrl-C on the coordinator: the worker writes nothing more, no temporary is left
"$SHARDBENCH" datagen dataset.data_folder=./b $slow --workers 1 --bind "tcp://$SB_LO:*" >b.out 2>b.err &
C=$!
ep=$(coordinator_endpoint b.err)
env "$held" "$SHARDBENCH_WORKER" --coordinator "$ep" --host node-b >w.out 2>w.err &
W=$!
wait_held "$W"
expect_eq "SIGINT: the worker stopped itself at its 3rd temporary" "$?" 0
before=$(files b/train)
expect_eq "SIGINT: stopped at its 3rd object" "$before" 2
expect_eq "SIGINT: a temporary of this writer's own name exists" \
    "$(find b/train -name ".*.node-b.$W.*.tmp" | wc -l)" 1
kill -INT "$C"; wait "$C"
expect_eq "SIGINT: coordinator exit status (128 + SIGINT)" "$?" 130
expect_contains "SIGINT: interrupted" b.err "interrupted by SIGINT while generating the dataset"
expect_contains "SIGINT: the coordinator removed the temporary" b.err \
    "removed 1 temporaries of the unfinished datagen under $SCRATCH/b/train"
expect_eq "SIGINT: no temporary left" "$(tmps b)" 0
kill -CONT "$W"
wait_for 20 gone "$W"
expect_eq "SIGINT: the worker ended" "$(gone "$W" && echo yes)" yes
expect_eq "SIGINT: no file written after the abort" "$(files b/train)" "$before"
expect_eq "SIGINT: still no temporary" "$(tmps b)" 0
expect_eq "SIGINT: the dataset is marked unfinished" "$(sed -n 's/^state=//p' b/.shardbench-dataset)" generating

# --- 3. a killed coordinator: its worker stops within one buffer and removes its temporary
rm -rf b
rm -f b.out b.err    # the first coordinator's endpoint must not be read from them
"$SHARDBENCH" datagen dataset.data_folder=./b $slow --workers 1 --bind "tcp://$SB_LO:*" >b.out 2>b.err &
C=$!
ep=$(coordinator_endpoint b.err)
env "$held" "$SHARDBENCH_WORKER" --coordinator "$ep" --host node-b >w.out 2>w.err &
W=$!
wait_held "$W"
expect_eq "SIGKILL: the worker stopped itself at its 3rd temporary" "$?" 0
before=$(files b/train)
expect_eq "SIGKILL: stopped at its 3rd object" "$before" 2
expect_eq "SIGKILL: its temporary" "$(tmps b)" 1
kill -KILL "$C"; wait "$C" 2>/dev/null
kill -CONT "$W"
wait_for 20 gone "$W"
expect_eq "SIGKILL: the worker ended at once (heartbeat timeout is 120 s)" "$(gone "$W" && echo yes)" yes
expect_contains "SIGKILL: the worker says why" w.err "warning: the coordinator at $ep closed the connection: its session is over"
expect_eq "SIGKILL: the worker names the lost coordinator" \
    "$(grep -cE "error: lost the coordinator at $ep: nothing heard for [0-9.]+ s$" w.err)" 1
# the object in progress may still be renamed within the agent's 0.1 s poll
# (the temporary was whole); the 20 others are never written
after=$(files b/train)
expect_eq "SIGKILL: at most the object in progress after the coordinator died ($before, then $after)" \
    "$([ "$after" -le $((before + 1)) ] && echo yes)" yes
expect_eq "SIGKILL: no temporary left" "$(tmps b)" 0

# --- 4. stale temporaries (a killed worker's, an older version's) go with the next datagen
rm -rf b
sb datagen dataset.data_folder=./c $small
: >c/train/.img_0_of_8.npz.node-x.4242.0badcafe.tmp
: >c/train/.img_1_of_8.npz.tmp
sb datagen dataset.data_folder=./c $small
expect_eq "stale temporaries: exit status" "$SB_RC" 0
expect_contains "stale temporaries: said" sb.err "removed 2 stale temporaries (.*.tmp) under $SCRATCH/c/train"
expect_eq "stale temporaries: none left" "$(tmps c)" 0
expect_eq "stale temporaries: 8 files" "$(files c/train)" 8

# --- 5. a dataset records what generated it; another generation is refused
expect_eq "marker: complete, with the parameters" \
    "$(grep -E '^(state|dataset\.(format|file_prefix|num_files_train|record_length_bytes)|seed|bytes)=' c/.shardbench-dataset | tr '\n' ' ')" \
    "state=complete dataset.format=npz dataset.file_prefix=img dataset.num_files_train=8 dataset.record_length_bytes=4096 seed=123 bytes=$(du -cb c/train/img_* | tail -1 | cut -f1) "
sb datagen dataset.data_folder=./c $small dataset.num_files_train=4 dataset.file_prefix=other
expect_eq "datagen of another generation: exit status" "$SB_RC" 2
expect_contains "datagen of another generation: the differing keys" sb.err \
    "error: $SCRATCH/c/train holds 8 files (0.0 MiB) of another generation (dataset.file_prefix: generated 'img', workload 'other'; dataset.num_files_train: generated 8, workload 4): a datagen there would mix two datasets; pass --clean to remove them first"
expect_eq "datagen of another generation: nothing written" "$(files c/train)" 8
sb run dataset.data_folder=./c $small dataset.record_length_bytes=8192 dataset.num_samples_per_file=2 reader.batch_size=1 train.epochs=1
expect_eq "run on another generation: exit status" "$SB_RC" 2
expect_contains "run on another generation: the differing keys" sb.err \
    "error: the dataset in $SCRATCH/c was generated with other parameters than this workload's (dataset.num_samples_per_file: generated 1, workload 2; dataset.record_length_bytes: generated 4096, workload 8192)"
sb run dataset.data_folder=./c $small dataset.num_files_train=4 reader.batch_size=1 train.epochs=1
expect_eq "run on the first 4 of its 8 files (a subset): exit status" "$SB_RC" 0
sb run dataset.data_folder=./c $small reader.batch_size=1 train.epochs=1 reader.verify=true --seed 5
expect_eq "run with another seed and verify: exit status" "$SB_RC" 2
expect_contains "run with another seed and verify: says which" sb.err \
    "was generated with seed 123, this run uses seed 5 and reader.verify checks every byte against it: pass --seed 123"
sb run dataset.data_folder=./c $small reader.batch_size=1 train.epochs=1
expect_eq "run on its own generation: exit status" "$SB_RC" 0
sb datagen dataset.data_folder=./c $small dataset.num_files_train=4 dataset.file_prefix=other --clean
expect_eq "--clean: exit status" "$SB_RC" 0
expect_contains "--clean: says what it removed" sb.err "--clean: removed 8 dataset files"
expect_eq "--clean: only the new generation" "$(cd c/train && ls | tr '\n' ' ')" \
    "other_0_of_4.npz other_1_of_4.npz other_2_of_4.npz other_3_of_4.npz "
expect_eq "--clean: marker of the new generation" "$(sed -n 's/^dataset.num_files_train=//p' c/.shardbench-dataset)" 4
# something that is not a dataset file is never removed, and refused
echo mine >c/train/notes.txt
sb datagen dataset.data_folder=./c $small --clean
expect_eq "a foreign file: exit status" "$SB_RC" 2
expect_contains "a foreign file: named" sb.err "error: $SCRATCH/c/train/notes.txt is not a dataset file (PREFIX_I_of_N.EXT) nor a temporary"
expect_eq "a foreign file: kept, and the dataset too" "$(cat c/train/notes.txt) $(files c/train)" "mine 4"
rm c/train/notes.txt
# a read-only dataset is read (its lock file shared read-only) without a probe, and never generated into
unshare -m --propagation private sh -c "mount --bind c c && mount -o remount,ro,bind c && \
    '$SHARDBENCH' run dataset.data_folder=./c $small dataset.num_files_train=4 dataset.file_prefix=other \
        reader.batch_size=1 train.epochs=1 >ro.out 2>ro.err; echo \$? >ro.rc; \
    '$SHARDBENCH' datagen dataset.data_folder=./c $small dataset.num_files_train=4 dataset.file_prefix=other \
        >rw.out 2>rw.err; echo \$? >rw.rc"
expect_eq "read-only dataset, run: exit status" "$(cat ro.rc)" 0
expect_contains "read-only dataset, run: no probe" ro.err \
    "warning: cannot create the probe $SCRATCH/c/.shardbench-probe-"
expect_eq "read-only dataset, datagen: exit status" "$(cat rw.rc)" 1
expect_contains "read-only dataset, datagen: refused" rw.err \
    "error: cannot open the lock of data folder $SCRATCH/c ($SCRATCH/c/.shardbench.lock): Read-only file system"
# an unfinished datagen's dataset is not read
sed -i 's/^state=complete/state=generating/' c/.shardbench-dataset
sb run dataset.data_folder=./c $small dataset.num_files_train=4 dataset.file_prefix=other reader.batch_size=1 train.epochs=1
expect_eq "unfinished dataset: exit status" "$SB_RC" 2
expect_contains "unfinished dataset: said" sb.err \
    "error: the dataset in $SCRATCH/c is incomplete: its datagen did not finish ($SCRATCH/c/.shardbench-dataset says state=generating)"
# files without a marker: a run warns, a datagen refuses
rm c/.shardbench-dataset
sb run dataset.data_folder=./c $small dataset.num_files_train=4 dataset.file_prefix=other reader.batch_size=1 train.epochs=1
expect_eq "no marker, run: exit status" "$SB_RC" 0
expect_contains "no marker, run: warns" sb.err "warning: $SCRATCH/c/train has no .shardbench-dataset marker saying what generated it"
sb datagen dataset.data_folder=./c $small dataset.num_files_train=4 dataset.file_prefix=other
expect_eq "no marker, datagen: exit status" "$SB_RC" 2
expect_contains "no marker, datagen: says why" sb.err \
    "holds 4 files (0.0 MiB) of another generation (no .shardbench-dataset marker says what generated them)"

# --- 6. bytes first, free space, --dry-run
raw="dataset.format=bin dataset.num_files_train=8 dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0 --progress off"
sb datagen dataset.data_folder=./e $raw --dry-run
expect_eq "--dry-run: exit status" "$SB_RC" 0
expect_eq "--dry-run: what it would write" "$(head -1 sb.out)" \
    "datagen --dry-run: would write 8 files (0 subfolders), 32768 bytes (0.00 GiB) under $SCRATCH/e/train"
expect_contains "--dry-run: nothing written" sb.out "datagen --dry-run: nothing written"
expect_eq "--dry-run: no folder made" "$([ -e e ] && echo made || echo none)" none
sb datagen dataset.data_folder=./e $raw
expect_contains "datagen states its bytes" sb.err "datagen: 8 files, 32768 bytes (0.00 GiB) into $SCRATCH/e/train;"
expect_eq "raw datagen: 32768 bytes written" "$(du -cb e/train/img_* | tail -1 | cut -f1)" 32768
mkdir f
unshare -m --propagation private sh -c "mount -t tmpfs -o size=1m none f && \
    '$SHARDBENCH' datagen dataset.data_folder=./f dataset.format=bin dataset.num_files_train=8 \
    dataset.record_length_bytes=524288 dataset.record_length_bytes_stdev=0 --progress off >f.out 2>f.err; \
    echo \$? >f.rc; find f -name '*_of_*' | wc -l >f.count"
expect_eq "no room: exit status" "$(cat f.rc)" 2
free=$(sed -n 's/^.*\/f\/train; \([0-9]*\) bytes (.* free there$/\1/p' f.err)
expect_eq "no room: the free space of a 1 MiB tmpfs, less the lock's page" "$free" 1044480
# 8 records of record_length 524288, each int(sqrt(524288))^2 = 724^2 bytes as DLIO draws them
need=$((8 * $(python3 -c 'import math; print(math.isqrt(524288) ** 2)')))
expect_contains "no room: the numbers" f.err \
    "error: not enough space in $SCRATCH/f: the dataset needs $need bytes (0.00 GiB), $free bytes (0.00 GiB) are free: free space, or lower dataset.num_files_train"
expect_eq "no room: nothing written" "$(cat f.count)" 0

# --- 7. a worker that does not see the coordinator's folder is refused before any write
mkdir p
"$SHARDBENCH" datagen dataset.data_folder=./p $small --accelerators 1 --workers 1 --bind "tcp://$SB_LO:*" \
    >p.out 2>p.err &
C=$!
ep=$(coordinator_endpoint p.err)
# its own, empty, data folder at the same path (a node whose folder is not shared)
unshare -m --propagation private sh -c "mount -t tmpfs none '$SCRATCH/p' && \
    exec '$SHARDBENCH_WORKER' --coordinator '$ep' --host node-p" >pw.out 2>pw.err
wait "$C"
expect_eq "unshared folder: coordinator exit status" "$?" 1
expect_contains "unshared folder: refused in preflight" p.err "preflight failed: some workers cannot use their storage"
expect_contains "unshared folder: names host, folder and cause" p.err \
    "node-p               $SCRATCH/p/"
expect_contains "unshared folder: the cause" p.err \
    "this host does not see the coordinator's data folder (cannot read the coordinator's probe $SCRATCH/p/.shardbench-probe-"
expect_eq "unshared folder: nothing written" "$(files p)" 0
expect_eq "unshared folder: probe removed" "$(find p -name '.shardbench-probe-*' | wc -l)" 0
expect_eq "unshared folder: no datagen run recorded as succeeded" \
    "$(q shardbench.db "SELECT count(*) FROM runs WHERE kind = 'datagen' AND status = 'succeeded' AND config LIKE '%./p%'")" 0
# the same worker seeing the folder is admitted
rm -f p.out p.err    # the refused run's endpoint must not be read from them
"$SHARDBENCH" datagen dataset.data_folder=./p $small --accelerators 1 --workers 1 --bind "tcp://$SB_LO:*" \
    >p.out 2>p.err &
C=$!
ep=$(coordinator_endpoint p.err)
"$SHARDBENCH_WORKER" --coordinator "$ep" --host node-p >pw.out 2>pw.err
wait "$C"
expect_eq "shared folder: exit status" "$?" 0
expect_eq "shared folder: 8 files" "$(files p/train)" 8
expect_eq "shared folder: probe removed" "$(find p -name '.shardbench-probe-*' | wc -l)" 0

# --- 8. an empty dataset.file_prefix (DLIO names its files _I_of_N.EXT): those are dataset files
sb datagen dataset.data_folder=./ep $small dataset.file_prefix=
expect_eq "empty prefix, first datagen: exit status" "$SB_RC" 0
expect_eq "empty prefix: DLIO's names" "$(cd ep/train && ls | tr '\n' ' ')" \
    "_0_of_8.npz _1_of_8.npz _2_of_8.npz _3_of_8.npz _4_of_8.npz _5_of_8.npz _6_of_8.npz _7_of_8.npz "
sb datagen dataset.data_folder=./ep $small dataset.file_prefix=
expect_eq "empty prefix, second datagen into the same folder: exit status" "$SB_RC" 0
expect_eq "empty prefix, second datagen: not taken for foreign files" "$(grep -c 'is not a dataset file' sb.err)" 0
sb datagen dataset.data_folder=./ep $small dataset.file_prefix=img --clean
expect_eq "empty prefix, --clean for another prefix: exit status" "$SB_RC" 0
expect_contains "empty prefix, --clean: removed them" sb.err "--clean: removed 8 dataset files"
expect_eq "empty prefix, --clean: only the new generation" "$(ls ep/train | grep -c '^_')" 0

# --- 9. train/ a symbolic link to another folder (train -> /bigdisk/train): the user's layout; datagen
# and --clean work inside its target, the link and its target folder stay
mkdir lk bigdisk outside
ln -s ../bigdisk lk/train
sb datagen dataset.data_folder=./lk $small dataset.num_files_train=4 dataset.file_prefix=other
expect_eq "linked train/: datagen through the link: exit status" "$SB_RC" 0
expect_eq "linked train/: written into the target" "$(files bigdisk)" 4
: >bigdisk/.other_9_of_9.npz.node-x.4242.0badcafe.tmp
echo keep >outside/img_0_of_8.npz
sb datagen dataset.data_folder=./lk $small --clean
expect_eq "linked train/, --clean: exit status" "$SB_RC" 0
expect_contains "linked train/, --clean: removed the other generation in the target" sb.err \
    "--clean: removed 4 dataset files (0.0 MiB) under $SCRATCH/lk/train"
expect_eq "linked train/, --clean: the link stays" "$([ -L lk/train ] && readlink lk/train)" ../bigdisk
expect_eq "linked train/, --clean: the target holds the new generation only" "$(cd bigdisk && ls -A | tr '\n' ' ')" \
    "img_0_of_8.npz img_1_of_8.npz img_2_of_8.npz img_3_of_8.npz img_4_of_8.npz img_5_of_8.npz img_6_of_8.npz img_7_of_8.npz "
expect_eq "linked train/, --clean: nothing else touched" "$(cat outside/img_0_of_8.npz)" keep
sb run dataset.data_folder=./lk $small reader.batch_size=1 train.epochs=1
expect_eq "linked train/: a run reads through it: exit status" "$SB_RC" 0
# the free space is that of the link's target: a 1 MiB tmpfs there refuses 4 MiB (less 8 x 112 bytes)
mkdir g gbig
ln -s ../gbig g/train
unshare -m --propagation private sh -c "mount -t tmpfs -o size=1m none gbig && \
    '$SHARDBENCH' datagen dataset.data_folder=./g dataset.format=bin dataset.num_files_train=8 \
    dataset.record_length_bytes=524288 dataset.record_length_bytes_stdev=0 --progress off >g.out 2>g.err; \
    echo \$? >g.rc; find gbig -name '*_of_*' | wc -l >g.count"
expect_eq "linked train/ on a small file system: exit status" "$(cat g.rc)" 2
expect_contains "linked train/ on a small file system: the target's free space" g.err \
    "error: not enough space in $SCRATCH/g: the dataset needs $need bytes (0.00 GiB), 1048576 bytes (0.00 GiB) are free"
expect_eq "linked train/ on a small file system: nothing written" "$(cat g.count)" 0
rm lk/train
ln -s ../nowhere lk/train
sb datagen dataset.data_folder=./lk $small --clean
expect_eq "train/ a link to nothing: exit status" "$SB_RC" 1
expect_contains "train/ a link to nothing: named" sb.err \
    "error: $SCRATCH/lk/train is a symbolic link to '../nowhere', which cannot be opened as a folder: No such file or directory"

# --- 10. a link inside train/ is never followed: its target's files stay, whatever their names
mkdir victim
echo keep >victim/img_0_of_8.npz
echo keep >victim/.x.tmp
ln -s ../../victim ep/train/v
sb datagen dataset.data_folder=./ep $small --clean
expect_eq "a link inside train/, --clean: exit status" "$SB_RC" 2
expect_contains "a link inside train/: named as not a dataset file" sb.err \
    "error: $SCRATCH/ep/train/v is not a dataset file (PREFIX_I_of_N.EXT) nor a temporary"
expect_eq "a link inside train/: its target's files stay" "$(cat victim/img_0_of_8.npz victim/.x.tmp | tr '\n' ' ')" "keep keep "
expect_eq "a link inside train/: the link stays" "$([ -L ep/train/v ] && echo yes)" yes

finish
