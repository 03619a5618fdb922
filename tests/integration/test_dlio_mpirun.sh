#!/usr/bin/env bash
# The dlio_benchmark that `meson install` puts beside shardbench, under a real
# `mpirun -n 2` (Open MPI or MPICH; skipped when neither is installed), as
# mlpstorage runs DLIO: rank 0 runs the whole benchmark with 2 accelerators,
# rank 1 waits for it and exits with its status, so mpirun's status is the
# run's, for a run that succeeds and for one that fails (exit 2 and exit 1);
# the run's folder (++hydra.run.dir) holds DLIO's files and no metadata
# file (mlpstorage writes its one). Outside mpirun it is one rank. A rank 0
# killed mid-run leaves rank 1 no status: it exits 1 at once, it does not
# wait. Needs SB_BUILD_ROOT (the build folder) and SB_BINDIR (absolute).
. "$(dirname "$0")/lib.sh"
for v in SB_BUILD_ROOT SB_BINDIR; do
    [ -n "${!v:-}" ] || { echo "test_dlio_mpirun.sh: $v is not set (run it through meson test)"; exit 1; }
done
if ! command -v mpirun >/dev/null; then
    echo "SKIP: mpirun missing (openmpi-bin or mpich)"; exit 77
fi
# Open MPI refuses root without these (containers, CI)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI counts cores: 2 ranks on a 1-core machine need --oversubscribe (MPICH has no such flag)
over=""
mpirun --version 2>&1 | grep -q "Open MPI" && over="--oversubscribe"

dest="$SCRATCH/root"
if meson install -C "$SB_BUILD_ROOT" --destdir "$dest" --no-rebuild >install.out 2>&1; then
    pass "meson install --destdir exits 0"
else
    fail "meson install --destdir failed:"; tail -20 install.out | sed 's/^/    /'
fi
dlio="$dest$SB_BINDIR/dlio_benchmark"
expect_eq "dlio_benchmark installed beside shardbench, executable" \
    "$([ -x "$dlio" ] && [ -x "$dest$SB_BINDIR/shardbench" ] && echo yes)" yes
# shardbench finds its workers beside itself, as installed
export SHARDBENCH_WORKER="$dest$SB_BINDIR/shardbench-worker"
# no other shardbench on PATH: the one beside dlio_benchmark is the one run
export PATH=/usr/bin:/bin

# mpir N ARGS...: dlio_benchmark under mpirun -n N, output in mpi.out, status in MPI_RC
mpir () {
    local n=$1; shift
    # shellcheck disable=SC2086
    timeout 180 mpirun $over -n "$n" "$dlio" "$@" >mpi.out 2>&1
    MPI_RC=$?
}

syn=(++workload.dataset.data_folder=synthetic://mp ++workload.dataset.num_files_train=32
     ++workload.dataset.record_length_bytes=4096 ++workload.dataset.record_length_bytes_stdev=0
     ++workload.reader.batch_size=2 ++workload.train.epochs=1 ++workload.train.computation_time=0)

# 1. success: one run of 2 accelerators, mpirun's status 0, DLIO's files in the run folder
mpir 2 workload=quickstart "${syn[@]}" "++hydra.run.dir=$PWD/leaf" ++hydra.output_subdir=dlio_config --db r.db
expect_eq "mpirun -n 2, a run that succeeds: status 0" "$MPI_RC" 0
expect_eq "one run, by one coordinator, of 2 accelerators (rank 0 ran it, rank 1 did not)" \
    "$(q r.db "SELECT count(*), max(accelerators), max(status) FROM runs")" "1|2|succeeded"
expect_eq "the run folder: DLIO's files, no metadata file (mlpstorage writes its one)" \
    "$(cd leaf && find . -type f | sort | tr '\n' ' ')" \
    "./0_output.json ./0_per_epoch_stats.json ./1_output.json ./1_per_epoch_stats.json ./dlio.log ./dlio_config/config.yaml ./dlio_config/hydra.yaml ./dlio_config/overrides.yaml ./summary.json "
expect_eq "the run's command line: shardbench run --accelerators 2 --local 2, then DLIO's arguments" \
    "$(q r.db "SELECT command_line FROM run_inputs" | cut -d' ' -f1-8)" \
    "shardbench run --accelerators 2 --local 2 workload=quickstart ++workload.dataset.data_folder=synthetic://mp"

# 2. a run refused (a batch larger than a rank's samples: exit 2): every rank exits 2, so mpirun does
mpir 2 workload=quickstart ++workload.dataset.data_folder=synthetic://mp ++workload.dataset.num_files_train=2 \
    "++hydra.run.dir=$PWD/leaf2" --db r.db
expect_eq "mpirun -n 2, a run refused: mpirun's status is shardbench's 2" "$MPI_RC" 2
expect_eq "a run refused: no second run recorded" "$(q r.db "SELECT count(*) FROM runs")" 1
expect_contains "a run refused: shardbench's reason on mpirun's output" mpi.out "less than one batch"

# 3. a run that fails (a file of the dataset shrinks after the listing: read errors, exit 1)
mkdir -p gone/train
for i in 0 1 2 3; do head -c 4096 /dev/zero >"gone/train/img_${i}_of_4.npz"; done
timeout 120 "$dest$SB_BINDIR/shardbench" catalog dataset.data_folder=./gone dataset.num_files_train=4 --db f.db \
    >cat.out 2>&1
truncate -s 40 gone/train/img_2_of_4.npz
mpir 2 workload=quickstart ++workload.dataset.data_folder=./gone ++workload.dataset.num_files_train=4 \
    ++workload.dataset.record_length_bytes=4096 ++workload.dataset.record_length_bytes_stdev=0 \
    ++workload.reader.batch_size=1 ++workload.train.epochs=1 ++workload.train.computation_time=0 \
    ++workload.workflow.generate_data=False "++hydra.run.dir=$PWD/leaf3" --db f.db
expect_eq "mpirun -n 2, a run that fails: mpirun's status is the run's 1" \
    "$MPI_RC:$(q f.db "SELECT status FROM runs WHERE kind = 'train'")" "1:failed"

# 4. rank 1's own status, without mpirun's: PMI's variables as MPICH's Hydra sets them, the two
# ranks started here (same parent: this shell's subshell); rank 1 exits with rank 0's status
(
    PMI_RANK=1 PMI_SIZE=2 "$dlio" workload=quickstart ++workload.dataset.num_files_train=2 \
        ++workload.dataset.data_folder=synthetic://mp --db p.db >r1.out 2>&1 &
    r1=$!
    PMI_RANK=0 PMI_SIZE=2 "$dlio" workload=quickstart ++workload.dataset.num_files_train=2 \
        ++workload.dataset.data_folder=synthetic://mp --db p.db >r0.out 2>&1
    r0rc=$?
    wait "$r1"
    echo "$r0rc:$?" >pmi.rc
)
expect_eq "PMI ranks: rank 0 exits 2 (refused), rank 1 exits with rank 0's status" "$(cat pmi.rc)" "2:2"
(
    PMI_RANK=1 PMI_SIZE=2 "$dlio" workload=quickstart "${syn[@]}" --db p.db >r1.out 2>&1 &
    r1=$!
    PMI_RANK=0 PMI_SIZE=2 "$dlio" workload=quickstart "${syn[@]}" --db p.db >r0.out 2>&1
    r0rc=$?
    wait "$r1"
    echo "$r0rc:$?:$(wc -c <r1.out)" >pmi.rc
)
expect_eq "PMI ranks: a run that succeeds, both exit 0, rank 1 prints nothing" "$(cat pmi.rc)" "0:0:0"

# 5. rank 0 killed mid-run (SIGKILL: no status sent): rank 1 reads the closed socket and exits 1
# at once. The run is slow (30 s of computation a step); the ranks' arguments are the same, as
# under mpirun (they name the job's socket)
slow=("${syn[@]}" ++workload.train.computation_time=30)
(
    PMI_RANK=1 PMI_SIZE=2 "$dlio" workload=quickstart "${slow[@]}" --db k.db >k1.out 2>&1 &
    r1=$!
    PMI_RANK=0 PMI_SIZE=2 "$dlio" workload=quickstart "${slow[@]}" --db k.db >k0.out 2>&1 &
    r0=$!
    # wait for the run's start in the database and for rank 1's connection to rank 0's socket (a
    # connected socket of the job's abstract name in /proc/net/unix: state 03, named @shardbench-dlio-,
    # one of rank 0's own descriptors: not another test's job running beside this one)
    for _ in $(seq 1 3000); do
        ino=" $(ls -l "/proc/$r0/fd" 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')"
        [ "$(q k.db "SELECT count(*) FROM runs" 2>/dev/null)" = 1 ] \
            && awk -v ino="$ino" '$6 == "03" && $8 ~ /^@shardbench-dlio-/ && index(ino, " " $7 " ")' /proc/net/unix \
               | grep -q . && break
        sleep 0.02
    done
    kill -KILL "$r0"
    wait "$r1"
    echo "$?" >kill.rc
    # rank 0's shardbench, orphaned, is stopped here (this test started it)
    coord_pid=$(q k.db "SELECT coordinator_pid FROM runs" 2>/dev/null)
    if [ -n "$coord_pid" ] && kill -TERM "$coord_pid" 2>/dev/null; then
        for _ in $(seq 1 300); do kill -0 "$coord_pid" 2>/dev/null || break; sleep 0.1; done
    fi
)
expect_eq "rank 0 killed: rank 1 exits 1" "$(cat kill.rc)" 1
expect_contains "rank 0 killed: rank 1 says rank 0 ended without its status" k1.out \
    "dlio_benchmark: rank 1: rank 0 ended without giving its status"

# 6. outside mpirun: one rank
timeout 120 "$dlio" workload=quickstart "${syn[@]}" --db one.db >one.out 2>&1
expect_eq "outside mpirun: status 0, one run of 1 accelerator" \
    "$?:$(q one.db "SELECT count(*), max(accelerators) FROM runs")" "0:1|1"

# 7. ranks on another host than rank 0's: refused at once by every rank (exit 2)
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_SIZE=2 timeout 10 "$dlio" workload=quickstart \
    >multi.out 2>&1
expect_eq "ranks over 2 hosts: exit 2" "$?" 2
expect_contains "ranks over 2 hosts: says why" multi.out \
    "2 of the 4 ranks are on this host (OMPI_COMM_WORLD_RANK): shardbench's dlio_benchmark runs every rank on rank 0's host"
PMI_RANK=x PMI_SIZE=2 timeout 10 "$dlio" workload=quickstart >bad.out 2>&1
expect_eq "a rank that is no number: exit 2" "$?" 2
expect_contains "a rank that is no number: names it" bad.out "PMI_RANK=x with PMI_SIZE=2 is no rank of a world"

finish
