#!/usr/bin/env bash
# MLPerf Storage's results directory. Real runs
# (a train run over synthetic storage, a checkpoint run on local files) with
# --results-dir; results_dir_check.py reads every file of each leaf back and
# compares every field with the database (exact values), the field lists of
# DLIO's statscounter and of mlpstorage's readers written into it. Then
# `report RUN --results-dir` writes the same files again (byte-identical but
# for the timestamp, one second later), ++hydra.run.dir takes the leaf
# itself, what each run was given is in the database (no secret), an older
# database still works, and bad input fails with exit status 2.
. "$(dirname "$0")/lib.sh"

check () { py_lib /usr/bin/python3 "$SB_INTEGRATION_DIR/results_dir_check.py" "$@" >check.out 2>&1; local rc=$?
           grep -c '^ok - ' check.out | sed 's/^/  checks passed: /'; grep '^FAIL' check.out; return $rc; }

syn="dataset.data_folder=synthetic://rd dataset.num_files_train=32 dataset.record_length_bytes=4096
     dataset.record_length_bytes_stdev=0 reader.batch_size=2 train.computation_time=0.001 train.epochs=2"

# 1. a train run, 4 ranks on 2 local workers, with credentials among the overrides
cred="storage.storage_options.access_key_id=AKID-not-stored storage.storage_options.secret_access_key=TOKEN-not-stored"
# shellcheck disable=SC2086
sb run $syn ++workload.reader.read_threads=2 $cred \
    --accelerators 4 --local 2 --db r.db --results-dir res --submitter acme --system sut-1
expect_eq "train run: exit" "$SB_RC" 0
leaf=$(sed -n 's/^results of run 1: //p' sb.out)
expect_eq "train run: one leaf printed" "$(grep -c '^results of run ' sb.out)" 1
# dataset.record_length_bytes, reader.batch_size, ... are no CLOSED or OPEN parameter: invalid, under open/
case "$leaf" in
    "$PWD"/res/open/acme/results/sut-1/training/*/run/[0-9]*_[0-9]*) pass "train run: leaf path" ;;
    *) fail "train run: leaf path $leaf" ;;
esac
check r.db 1 "$leaf" res acme sut-1
expect_eq "train run: every field of the leaf matches the database" $? 0

# what the run was given, recorded
expect_eq "overrides in order, the secret redacted" \
    "$(q r.db "SELECT group_concat(override, ' ') FROM (SELECT override FROM run_overrides WHERE run_id = 1 ORDER BY seq)")" \
    "$(echo $syn) ++workload.reader.read_threads=2 storage.storage_options.access_key_id=<redacted> storage.storage_options.secret_access_key=<redacted>"
expect_eq "version" "$(q r.db "SELECT version FROM run_inputs WHERE run_id = 1")" "$("$SHARDBENCH" --version | sed -n '1s/^shardbench //p')"
expect_contains "command line, the secret redacted" <(q r.db "SELECT command_line FROM run_inputs WHERE run_id = 1") \
    "shardbench run dataset.data_folder=synthetic://rd "
expect_contains "command line: --results-dir" <(q r.db "SELECT command_line FROM run_inputs WHERE run_id = 1") \
    " --results-dir res --submitter acme --system sut-1"
expect_eq "no secret in the database" "$(sqlite3 r.db .dump | grep -c -e TOKEN-not-stored -e AKID-not-stored)" 0
expect_eq "no secret in the results directory" "$(grep -rl -e TOKEN-not-stored -e AKID-not-stored res | wc -l)" 0
# credentials as one {...} mapping: the whole value is redacted, everywhere it is recorded
sb run $syn 'storage.storage_options={access_key_id: AKID-in-map, secret_access_key: TOKEN-in-map}' \
    --accelerators 1 --local 1 --db m.db --results-dir resm
expect_eq "credentials in a mapping: exit" "$SB_RC" 0
expect_eq "credentials in a mapping: the override redacted whole" \
    "$(q m.db "SELECT override FROM run_overrides WHERE run_id = 1 AND override LIKE 'storage.%'")" "storage.storage_options=<redacted>"
expect_eq "credentials in a mapping: none in the database" "$(sqlite3 m.db .dump | grep -c -e AKID-in-map -e TOKEN-in-map)" 0
expect_eq "credentials in a mapping: none in the results directory" \
    "$(grep -rl -e AKID-in-map -e TOKEN-in-map resm | wc -l):$(grep -rl 'storage.storage_options=<redacted>' resm | wc -l)" "0:4"
expect_eq "full configuration: defaults filled in (train.seed, metric.au, shardbench.sampler)" \
    "$(q r.db "SELECT full_config LIKE '%seed: 123%' AND full_config LIKE '%au: 0.90%' AND full_config LIKE '%sampler: dlio%' AND config NOT LIKE '%sampler: dlio%' FROM run_inputs JOIN runs ON id = run_id WHERE run_id = 1")" 1
expect_eq "coordinator host's /proc info" \
    "$(q r.db "SELECT host = (SELECT coordinator_host FROM runs WHERE id = 1), cpuinfo LIKE '%processor%', meminfo LIKE 'MemTotal:%' FROM run_host_info WHERE run_id = 1")" "1|1|1"

# 2. report RUN --results-dir: the same files, one second later, identical but for the timestamp
sb report 1 --db r.db --results-dir res --submitter acme --system sut-1
expect_eq "report --results-dir: exit" "$SB_RC" 0
leaf2=$(cat sb.out)
ts1=$(basename "$leaf"); ts2=$(basename "$leaf2")
expect_eq "report --results-dir: the next second" "$(dirname "$leaf2"):$(python3 -c "import datetime,sys; print((datetime.datetime.strptime(sys.argv[1], '%Y%m%d_%H%M%S') + datetime.timedelta(seconds=1)).strftime('%Y%m%d_%H%M%S'))" "$ts1")" \
    "$(dirname "$leaf"):$ts2"
(cd "$leaf" && find . -type f | sed "s/$ts1/TS/g" | sort) >files1
(cd "$leaf2" && find . -type f | sed "s/$ts2/TS/g" | sort) >files2
expect_eq "report --results-dir: the same file names" "$(diff files1 files2 && wc -l <files1)" "$(wc -l <files1)"
same=0
while read -r f; do
    # provenance.json's stamped_at and fs_separation.json's probed_at: when each was written (probed);
    # its git_sha (and the note on it): below
    cmp -s <(sed "s/$ts1/TS/g; /\"stamped_at\"\|\"probed_at\"\|\"git_sha\"\|\"notes\"/d" "$leaf/${f//TS/$ts1}") \
           <(sed "s/$ts2/TS/g; /\"stamped_at\"\|\"probed_at\"\|\"git_sha\"\|\"notes\"/d" "$leaf2/${f//TS/$ts2}") && same=$((same + 1))
done <files1
expect_eq "report --results-dir: every file byte-identical but the timestamp" "$same" "$(wc -l <files1)"
# the commit of the shardbench that ran it: known to the run's own process (its build), not to a
# later `report` (the database records the version only)
build=$("$SHARDBENCH" --version | sed -n 's/^build: //p')
sha=$(python3 -c "import re,sys; b=re.sub(r'-dirty$','',sys.argv[1]); m=re.fullmatch(r'(?:.*-g)?([0-9a-f]{7,40})', b); print(m.group(1) if m else 'unknown')" "$build")
expect_eq "provenance.json git_sha: the build's commit when the run wrote it, unknown from report" \
    "$(python3 -c "import json,sys; print(*[json.load(open(d + '/provenance.json'))['tool']['git_sha'] for d in sys.argv[1:]])" "$leaf" "$leaf2")" \
    "$sha unknown"
expect_eq "mlperf-results.yaml: made once, by the first run (the report found it pinning acme)" \
    "$(ls res | tr '\n' ' '):$(sed -n 's/^orgname: //p' res/mlperf-results.yaml):$(sed -n 's/^initialized_by: //p' res/mlperf-results.yaml)" \
    "mlperf-results.yaml open :acme:'shardbench $("$SHARDBENCH" --version | sed -n '1s/^shardbench //p') (build $build)'"
check r.db 1 "$leaf2" res acme sut-1
expect_eq "report --results-dir: every field matches" $? 0

# 2b. the root's sentinel pins one organisation (mlpstorage's results_dir/sentinel.py): another
# --submitter is refused, before the run for `run`
sb run $syn --accelerators 1 --local 1 --db r.db --results-dir res --submitter other
expect_eq "another --submitter than the sentinel's: exit 2 before the run" "$SB_RC:$(q r.db "SELECT count(*) FROM runs")" "2:1"
expect_contains "another --submitter than the sentinel's: says which it pins" sb.err \
    "shardbench run: --results-dir res: res/mlperf-results.yaml pins the organisation 'acme', not 'other' (--submitter)"
sb report 1 --db r.db --results-dir res --submitter other
expect_eq "report, another --submitter than the sentinel's: exit 2" "$SB_RC" 2
expect_contains "report, another --submitter than the sentinel's: says which it pins" sb.err \
    "res/mlperf-results.yaml pins the results directory to the organisation 'acme', not 'other' (--submitter)"
printf 'mlperf_results_version: 3\ninitialized_at: x\n' >broken.yaml
mkdir -p resb && cp broken.yaml resb/mlperf-results.yaml
sb report 1 --db r.db --results-dir resb
expect_eq "a sentinel without orgname: exit 2" "$SB_RC:$(ls resb)" "2:mlperf-results.yaml"
expect_contains "a sentinel without orgname: names the file and the key" sb.err "resb/mlperf-results.yaml: no key orgname"

# a tree `mlpstorage init 007 resi` made (yaml.safe_dump quotes a name that reads as a number):
# its organisation, its sentinel untouched
mkdir resi && printf "mlperf_results_version: 3\norgname: '007'\ninitialized_at: '2026-01-02T03:04:05.000006+00:00'\ninitialized_by: mlpstorage 3.0.4\n" >resi/mlperf-results.yaml
cp resi/mlperf-results.yaml sentinel.orig
sb report 1 --db r.db --results-dir resi --system sut-1
expect_eq "mlpstorage's sentinel: exit 0" "$SB_RC" 0
case "$(cat sb.out)" in
    "$PWD"/resi/open/007/results/sut-1/training/quickstart/run/[0-9]*_[0-9]*) pass "mlpstorage's sentinel: its organisation is the SUBMITTER" ;;
    *) fail "mlpstorage's sentinel: leaf $(cat sb.out)" ;;
esac
expect_eq "mlpstorage's sentinel: left as it was" "$(cmp resi/mlperf-results.yaml sentinel.orig && echo same)" same
check r.db 1 "$(cat sb.out)" resi 007 sut-1
expect_eq "mlpstorage's sentinel: every field matches" $? 0

# 3. a checkpoint run: checkpointing/llama3-8b/TS, DLIO's checkpoint metrics; default system, the
# submitter the sentinel pins (acme)
sb checkpoint llama3_8b checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0 \
    checkpoint.checkpoint_folder=./ck checkpoint.num_checkpoints_write=2 checkpoint.num_checkpoints_read=1 \
    --accelerators 2 --local 1 --db r.db --results-dir res
expect_eq "checkpoint run: exit" "$SB_RC" 0
cleaf=$(sed -n 's/^results of run 2: //p' sb.out)
host=$(q r.db "SELECT coordinator_host FROM runs WHERE id = 2" | sed 's/[^A-Za-z0-9._-]/-/g')
case "$cleaf" in
    "$PWD"/res/invalid/*) fail "checkpoint run: invalid is no division" ;;
    "$PWD"/res/*/acme/results/"$host"/checkpointing/llama3-8b/[0-9]*_[0-9]*) pass "checkpoint run: leaf path, the sentinel's submitter" ;;
    *) fail "checkpoint run: leaf path $cleaf" ;;
esac
check r.db 2 "$cleaf" res acme ""
expect_eq "checkpoint run: every field matches" $? 0
# mlpstorage_py's checkpointing checker: llama3-8b is CLOSED at 8 processes only, OPEN at multiples of 8
expect_eq "checkpoint run: llama3-8b at 2 processes is invalid, written under open" \
    "$(python3 -c "import json,glob,sys; print(json.load(open(glob.glob(sys.argv[1] + '/checkpointing_*_metadata.json')[0]))['verification'])" "$cleaf"):${cleaf#"$PWD"/res/}" \
    "invalid:open/${cleaf#"$PWD"/res/open/}"
expect_eq "checkpoint run: df of the checkpoint folder's file system, in the stdout log" \
    "$(q r.db "SELECT df LIKE 'Filesystem 1K-blocks Used Available Use% Mounted on' || char(10) || '%' FROM run_inputs WHERE run_id = 2"):$(grep -c '^Filesystem 1K-blocks Used Available Use% Mounted on$' "$cleaf/checkpointing_run.stdout.log")" "1:1"
expect_eq "train run over synthetic storage: df of the results directory only" \
    "$(q r.db "SELECT length(df) - length(replace(df, char(10), '')) FROM run_inputs WHERE run_id = 1")" 2

# 3b. a datagen run: training/MODEL/datagen/TS with training_datagen.* logs, the metadata, dlio.log and
# dlio_config, and no statistics (no summary.json, no per-rank files: DLIO's generate_only writes none)
sb datagen dataset.data_folder=./dg dataset.num_files_train=8 dataset.record_length_bytes=4096 \
    --accelerators 2 --local 1 --db r.db --results-dir res --submitter acme --system sut-1
expect_eq "datagen run: exit" "$SB_RC" 0
dleaf=$(sed -n 's/^results of run 3: //p' sb.out)
case "$dleaf" in
    "$PWD"/res/open/acme/results/sut-1/training/quickstart/datagen/[0-9]*_[0-9]*) pass "datagen run: leaf path" ;;
    *) fail "datagen run: leaf path $dleaf" ;;
esac
check r.db 3 "$dleaf" res acme sut-1
expect_eq "datagen run: every field matches" $? 0
# mlpstorage's DLIOResultParser (rules/models.py) types a leaf by dlio_config/config.yaml's workflow:
# train makes a "run", generate_data a "datagen"; the workload's own workflow said train
expect_eq "datagen run: config.yaml's workflow reads as a datagen, not a training run" \
    "$(python3 - "$dleaf" <<'PY'
import sys, yaml
w = yaml.safe_load(open(sys.argv[1] + "/dlio_config/config.yaml"))["workload"]["workflow"]
print("run" if w.get("train", False) else "datagen" if w.get("generate_data", False) else "none",
      sorted(w.items()))
PY
)" "datagen [('checkpoint', False), ('generate_data', True), ('train', False)]"

# mlpstorage's reportgen walk (rules/utils.py get_runs_files): a folder with summary.json or exactly
# one *_metadata.json is a run, complete metadata (benchmark_type, run_datetime, num_processes,
# parameters) or the DLIO fallback (dlio_config/config.yaml workload.workflow) gives its type
expect_eq "reportgen's walk finds every leaf: 2 train runs (one written again), 1 checkpoint, 1 datagen" \
    "$(python3 - res <<'PY'
import json, os, sys
found = []
for root, dirs, files in os.walk(sys.argv[1]):
    meta = [f for f in files if f.endswith("_metadata.json")]
    if len(meta) > 1:
        found.append("SKIPPED:" + root)
        continue
    if "summary.json" in files or len(meta) == 1:
        m = json.load(open(os.path.join(root, meta[0])))
        assert all(k in m for k in ("benchmark_type", "run_datetime", "num_processes", "parameters"))
        assert m["run_datetime"] == os.path.basename(root)
        found.append("%s/%s" % (m["benchmark_type"], m["command"]))
print(" ".join(sorted(found)))
PY
)" "checkpointing/run training/datagen training/run training/run"

# 4. closed: only CLOSED parameters overridden (DLIO's spelling and shardbench's)
sb run $syn --accelerators 1 --local 1 --db c.db --results-dir res2
expect_eq "invalid overrides: exit" "$SB_RC" 0
expect_eq "invalid overrides: under open/ (beside the sentinel)" "$(ls res2 | tr '\n' ' ')" "mlperf-results.yaml open "
printf 'model:\n  name: my_model\ndataset:\n  data_folder: synthetic://c\n  num_files_train: 16\n  record_length_bytes: 4096\nreader:\n  batch_size: 2\ntrain:\n  epochs: 1\n' >w.yaml
sb run w.yaml ++workload.dataset.num_files_train=24 reader.read_threads=1 --db c.db --results-dir res3 --system s
expect_eq "closed overrides: exit" "$SB_RC" 0
cl=$(sed -n 's/^results of run 2: //p' sb.out)
case "$cl" in
    "$PWD"/res3/closed/shardbench/results/s/training/my-model/run/*) pass "closed overrides: closed/, model from model.name" ;;
    *) fail "closed overrides: leaf $cl" ;;
esac
check c.db 2 "$cl" res3 shardbench s
expect_eq "closed run: every field matches" $? 0
expect_eq "closed run: verification" "$(python3 -c "import json,glob,sys; print(json.load(open(glob.glob(sys.argv[1] + '/training_*_metadata.json')[0]))['verification'])" "$cl")" closed

# 5. ++hydra.run.dir=DIR ++hydra.output_subdir=dlio_config: the files straight into DIR
sb run $syn --accelerators 2 --local 1 --db h.db ++hydra.run.dir=hy ++hydra.output_subdir=dlio_config
expect_eq "hydra.run.dir: exit" "$SB_RC" 0
expect_eq "hydra.run.dir: the leaf is DIR" "$(sed -n 's/^results of run 1: //p' sb.out)" "$PWD/hy"
check h.db 1 "$PWD/hy" - shardbench ""
expect_eq "hydra.run.dir: every field matches" $? 0
sb run $syn --accelerators 1 --local 1 --db h.db hydra.run.dir=hy ++hydra.output_subdir=dlio_config
expect_eq "hydra.run.dir holding a run's results: not overwritten, exit 2 before the run" "$SB_RC:$(q h.db "SELECT count(*) FROM runs")" "2:1"
expect_contains "hydra.run.dir holding a run's results: says so" sb.err "holds the results of a run already (summary.json): not overwritten"
# any file of a run's results counts (dlio.log here): refused naming it, kept; --overwrite replaces it
mkdir hy2 && echo "an earlier run" >hy2/dlio.log
sb run $syn --accelerators 1 --local 1 --db h.db ++hydra.run.dir=hy2 ++hydra.output_subdir=dlio_config
expect_eq "hydra.run.dir holding dlio.log: exit 2 before the run, the file kept" \
    "$SB_RC:$(q h.db "SELECT count(*) FROM runs"):$(cat hy2/dlio.log)" "2:1:an earlier run"
expect_contains "hydra.run.dir holding dlio.log: names it" sb.err \
    "shardbench run: hydra.run.dir: hy2 holds the results of a run already (dlio.log): not overwritten (--overwrite replaces them)"
sb run $syn --accelerators 1 --local 1 --db h.db ++hydra.run.dir=hy2 ++hydra.output_subdir=dlio_config --overwrite
expect_eq "hydra.run.dir holding dlio.log, --overwrite: exit 0, dlio.log this run's (run 2), no metadata" \
    "$SB_RC:$(sed -n '1s/.* run \([0-9]*\):.*/\1/p' hy2/dlio.log):$(ls hy2 | grep -c _metadata.json)" \
    "0:2:0"
# links put where the files go are never written through: the configuration written at the start
# (dlio_config/config.yaml) and the temporaries of the end (.summary.json.tmp)
mkdir -p hy3/dlio_config && echo precious >victim
ln -s "$PWD/victim" hy3/dlio_config/config.yaml
ln -s "$PWD/victim" hy3/.summary.json.tmp
sb run $syn --accelerators 1 --local 1 --db h.db ++hydra.run.dir=hy3 ++hydra.output_subdir=dlio_config
expect_eq "a link at hydra.run.dir's config.yaml: refused, exit 2" "$SB_RC:$(cat victim)" "2:precious"
expect_contains "a link at hydra.run.dir's config.yaml: names it" sb.err \
    "hydra.run.dir: hy3 holds the results of a run already (dlio_config/config.yaml): not overwritten"
sb run $syn --accelerators 1 --local 1 --db h.db ++hydra.run.dir=hy3 ++hydra.output_subdir=dlio_config --overwrite
expect_eq "links in hydra.run.dir, --overwrite: exit 0, the linked file unchanged, files of their own" \
    "$SB_RC:$(cat victim):$(stat -c %F hy3/dlio_config/config.yaml):$(stat -c %F hy3/summary.json)" \
    "0:precious:regular file:regular file"
sb run $syn --accelerators 1 --local 1 --db h.db --results-dir res --overwrite
expect_eq "--overwrite without hydra.run.dir: exit 2" "$SB_RC" 2
expect_contains "--overwrite without hydra.run.dir: says why" sb.err \
    "--overwrite goes with ++hydra.run.dir (a --results-dir leaf is always new)"

# 5b. mlpstorage's leaf: it names the leaf by its own start (YYYYMMDD_HHMMSS), launches mpirun, and
# writes TYPE_ITS-START_metadata.json and TYPE_COMMAND.std{out,err}.log into it when DLIO ends. A
# launch slower than a second must not leave a second metadata file (named by this run's start):
# reportgen's walk (rules/utils.py get_runs_files) skips a leaf holding two. The leaf here is named
# for a start 5 s before this run's (a slow launch); the run writes DLIO's files only
mts=$(date -d '-5 seconds' +%Y%m%d_%H%M%S)
ml="$PWD/mlps/closed/acme/results/sut/training/unet3d/run/$mts"
mkdir -p "$ml" && echo "mlpstorage's own log" >"$ml/mlpstorage.log"
sb run $syn --accelerators 2 --local 1 --db ml.db "++hydra.run.dir=$ml" ++hydra.output_subdir=dlio_config
expect_eq "mlpstorage's leaf: exit 0" "$SB_RC" 0
expect_eq "mlpstorage's leaf: DLIO's files only, mlpstorage's log kept" \
    "$(cd "$ml" && find . -type f | sort | tr '\n' ' ')" \
    "./0_output.json ./0_per_epoch_stats.json ./1_output.json ./1_per_epoch_stats.json ./dlio.log ./dlio_config/config.yaml ./dlio_config/hydra.yaml ./dlio_config/overrides.yaml ./mlpstorage.log ./summary.json "
check ml.db 1 "$ml" - shardbench ""
expect_eq "mlpstorage's leaf: every field matches" $? 0
# what mlpstorage then writes (benchmarks/base.py, main.py's finally): its metadata and the logs
printf '{"benchmark_type": "training", "model": "unet3d", "command": "run", "run_datetime": "%s", "num_processes": 2, "parameters": {}}\n' \
    "$mts" >"$ml/training_${mts}_metadata.json"
: >"$ml/training_run.stdout.log"; : >"$ml/training_run.stderr.log"
expect_eq "mlpstorage's leaf: reportgen's walk finds it, with one metadata file" \
    "$(python3 - mlps <<'PY'
import os, sys
for root, dirs, files in os.walk(sys.argv[1]):
    meta = [f for f in files if f.endswith("_metadata.json")]
    if len(meta) > 1:
        print("skipped", os.path.basename(root), len(meta))
    elif "summary.json" in files or meta:
        print("found", os.path.basename(root), len(meta))
PY
)" "found $mts 1"

# 6. a database of schema 12 (no run_inputs): upgraded, and its runs still written from runs.config
cp r.db v10.db
q v10.db "$(schema_v12_sql) PRAGMA user_version = 12"
sb report 1 --db v10.db --results-dir res10
expect_eq "schema 12: report --results-dir exit" "$SB_RC" 0
expect_eq "schema 12: upgraded to 17, no inputs for old runs" "$(q v10.db "PRAGMA user_version"):$(q v10.db "SELECT count(*) FROM run_inputs")" "17:0"
expect_eq "schema 12: summary.json written" "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1] + '/summary.json'))['num_files_train'])" "$(cat sb.out)")" 32

# 7. a run that fails still leaves its results (mlpstorage writes its metadata in a finally block):
# a file shrinks after the listing (truncation keeps the folder's fingerprint: the catalog is reused)
mkdir -p gone/train
for i in 0 1 2 3; do head -c 4096 /dev/zero >"gone/train/img_${i}_of_4.npz"; done
sb catalog dataset.data_folder=./gone dataset.num_files_train=4 --db f.db
truncate -s 40 gone/train/img_2_of_4.npz
sb run dataset.data_folder=./gone dataset.num_files_train=4 dataset.record_length_bytes=4096 \
    dataset.record_length_bytes_stdev=0 reader.batch_size=1 train.epochs=1 train.computation_time=0 \
    --accelerators 1 --local 1 --db f.db --results-dir resf
expect_eq "failed run: exit 1" "$SB_RC" 1
fl=$(sed -n 's/^results of run 1: //p' sb.out)
check f.db 1 "$fl" resf shardbench ""
expect_eq "failed run: its leaf, every field matches" $? 0
expect_eq "failed run: summary.json never meets the expectation" \
    "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1] + '/summary.json'))['metric']['train_au_meet_expectation'])" "$fl")" fail
expect_eq "failed run: status in the metadata, errors in the stderr log" \
    "$(python3 -c "import json,glob,sys; print(json.load(open(glob.glob(sys.argv[1] + '/training_*_metadata.json')[0]))['shardbench']['status'])" "$fl"):$(grep -c 'shardbench: error: read' "$fl/training_run.stderr.log")" \
    "failed:$(q f.db "SELECT count(*) FROM errors WHERE run_id = 1 AND op = 'read'")"

# 7b. mlpstorage's llama3_8b.yaml run by its path (model.name llama_8b): the
# LLM llama3-8b, CLOSED at 8 processes as by the preset's name
cp "$SB_INTEGRATION_DIR/../../coordinator/workloads/llama3_8b.yaml" my_llama.yaml
sb checkpoint ./my_llama.yaml checkpoint.scale=0.0001220703125 checkpoint.time_between_checkpoints=0 \
    checkpoint.checkpoint_folder=./ckp checkpoint.num_checkpoints_write=1 checkpoint.num_checkpoints_read=0 \
    --accelerators 8 --local 1 --db p.db --results-dir resp
expect_eq "checkpoint run by path: exit" "$SB_RC" 0
pleaf=$(sed -n 's/^results of run 1: //p' sb.out)
case "$pleaf" in
    "$PWD"/resp/closed/shardbench/results/*/checkpointing/llama3-8b/[0-9]*_[0-9]*) pass "checkpoint run by path: closed, llama3-8b" ;;
    *) fail "checkpoint run by path: leaf path $pleaf" ;;
esac
check p.db 1 "$pleaf" resp shardbench ""
expect_eq "checkpoint run by path: every field matches" $? 0
expect_eq "checkpoint run by path: the metadata's model and verification" \
    "$(python3 -c "import json,glob,sys; m = json.load(open(glob.glob(sys.argv[1] + '/checkpointing_*_metadata.json')[0])); print(m['model'], m['verification'])" "$pleaf")" \
    "llama3-8b closed"

# 8. bad input: exit status 2 and a message naming the cause
touch afile
sb run $syn --db r.db --results-dir afile/sub
expect_eq "unwritable --results-dir: exit 2 before the run" "$SB_RC:$(q r.db "SELECT count(*) FROM runs")" "2:3"
expect_contains "unwritable --results-dir: names it" sb.err "--results-dir afile/sub"
sb report 1 --db r.db --results-dir afile/sub
expect_eq "report, unwritable --results-dir: exit 2" "$SB_RC" 2
expect_contains "report, unwritable --results-dir: names it" sb.err "shardbench report: --results-dir afile/sub"
sb report 99 --db r.db --results-dir res
expect_eq "report, unknown run: exit 2" "$SB_RC" 2
expect_contains "report, unknown run: says so" sb.err "run 99 does not exist"
sb report 1 --db r.db --results-dir res --submitter 'a/b'
expect_eq "bad --submitter: exit 2" "$SB_RC" 2
expect_contains "bad --submitter: says why" sb.err "--submitter 'a/b': a name of letters, digits"
sb run $syn --db r.db --results-dir res ++hydra.run.dir=x
expect_eq "--results-dir with hydra.run.dir: exit 2" "$SB_RC" 2
"$SHARDBENCH" run --help | grep -q -- "--results-dir DIR"
expect_eq "run --help documents --results-dir" $? 0
"$SHARDBENCH" report --help | grep -q -- "--results-dir DIR"
expect_eq "report --help documents --results-dir" $? 0

finish
