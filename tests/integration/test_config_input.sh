#!/usr/bin/env bash
# Configuration input refused before anything starts, each with exit status
# 2, the exact error naming where the value came from and the key, and no
# result database created: an unknown KEY=VALUE on the command line (with
# the nearest keys; Hydra's ++workload.KEY=VALUE and a workload file only
# warn, as DLIO does). Each of run, datagen, catalog and checkpoint has its
# own --help: it names the command, lists no option the command refuses,
# every option it lists is taken by the command, and it has an example.
# A seed numpy would refuse in a later epoch is refused at once. Bytes
# that are not UTF-8 in a key or value (command line, file) are refused. A
# dataset.file_prefix starting with '.' (hidden files) is refused.
# dataset.format in upper case is DLIO's lower-case format (NPZ: zip files).
# Credentials under their other usual names (api_key, pass, bearer, key
# under storage_options, ...) are kept out of the result database (sqlite3
# .dump and the raw file), the output and the coordinator-worker messages,
# from a file and the command line.
. "$(dirname "$0")/lib.sh"

# refused WHAT EXPECTED-ERROR ARGS...: `shardbench ARGS --db none.db` exits 2
# with that one error line and creates no database
refused () {
    local what=$1 expect=$2
    shift 2
    rm -f none.db
    sb "$@" --db none.db
    expect_eq "$what: exit status" "$SB_RC" 2
    expect_eq "$what: error" "$(grep -a '^shardbench' sb.err)" "$expect"
    expect_eq "$what: nothing started" "$([ -e none.db ] && echo 'database created' || echo none)" none
}

small="workflow.generate_data=true dataset.data_folder=data dataset.num_files_train=4 dataset.record_length_bytes=4096 reader.batch_size=1"

# 1. unknown keys
for cmd in run datagen catalog checkpoint; do
    refused "$cmd train.epoch=1" "shardbench: error: command line: unknown key 'train.epoch': did you mean 'train.epochs'? (\`shardbench run --help\` lists the keys; ++workload.train.epoch=VALUE adds a key shardbench does not know, with a warning, as DLIO's Hydra does)" \
        $cmd train.epoch=1
done
refused "section typo" "shardbench: error: command line: unknown key 'reader.batchsize': did you mean 'reader.batch_size'? (\`shardbench run --help\` lists the keys; ++workload.reader.batchsize=VALUE adds a key shardbench does not know, with a warning, as DLIO's Hydra does)" \
    run $small reader.batchsize=2
refused "no near key" "shardbench: error: command line: unknown key 'qqq.zzz' (\`shardbench run --help\` lists the keys; ++workload.qqq.zzz=VALUE adds a key shardbench does not know, with a warning, as DLIO's Hydra does)" \
    run qqq.zzz=1
# the Hydra form and a workload file: a warning, and the run goes on
sb run $small ++workload.train.epoch=1 --local 1 --accelerators 1 --db hydra.db
expect_eq "++workload.train.epoch=1: runs" "$SB_RC" 0
expect_contains "++workload.train.epoch=1: warned" sb.err "command line: unknown key 'train.epoch' ignored"
printf 'train:\n  epoch: 1\n' >typo.yaml
sb run typo.yaml $small dataset.data_folder=data2 --local 1 --accelerators 1 --db hydra.db
expect_eq "train.epoch in a file: runs" "$SB_RC" 0
expect_contains "train.epoch in a file: warned" sb.err "typo.yaml:2: unknown key 'train.epoch' ignored"

# 2. each command's own help
printf 'localhost\n' >hosts.txt
declare -A refuses=([run]="--clean --dry-run --subset" [datagen]="--runs --warmup --subset"
                    [catalog]="--runs --warmup --subset --label --results-dir --clean --dry-run"
                    [checkpoint]="--clean --dry-run")
for cmd in run datagen catalog checkpoint; do
    "$SHARDBENCH" $cmd --help >help.out 2>help.err
    expect_eq "$cmd --help: exit status" "$?" 0
    sed '/^workload keys (defaults):$/,$d' help.out >help.top
    expect_eq "$cmd --help: names the command" "$(head -1 help.top | cut -d' ' -f1-3)" "usage: shardbench $cmd"
    expect_eq "$cmd --help: an example of the command" \
        "$(grep -A1 '^example:$' help.top | tail -1 | cut -d' ' -f1-4)" "  shardbench $cmd"
    expect_eq "$cmd --help: then the workload keys" "$(grep -c '^  train.epochs ' help.out)" 1
    for opt in ${refuses[$cmd]}; do
        expect_eq "$cmd --help: no $opt (the command refuses it)" \
            "$(grep -c -E -- "(^|[^a-z-])$opt([^a-z-]|\$)" help.top)" 0
        sb $cmd $opt 2 --db none.db
        expect_eq "$cmd $opt: refused" "$(grep -c "unknown option '$opt'" sb.err)" 1
    done
    # every option at the start of a line is taken: with a bad value of a
    # key it ends in that key's error, or in one about the option itself
    # (--slurm outside an allocation), never in an unknown option
    n=0
    while read -r opt arg; do
        case "$arg" in
            FILE) v=$([ "$opt" = --hostfile ] && echo hosts.txt || echo none.db) ;;
            DIR) v=dir-$cmd ;; ENDPOINT) v=tcp://127.0.0.1:1 ;; MODE) v=plain ;; TEXT|NAME) v=x1 ;;
            H,H,...) v=h1 ;; [A-Z]) v=1 ;; "") v= ;; *) v=$arg ;;
        esac
        [ "$arg" = K ] && v=0
        # workers elsewhere listen on tcp://*: that needs --keys or --insecure first
        case "$opt" in --workers|--hosts|--hostfile) v="$v --insecure" ;; esac
        [ "$arg" = DIR ] && mkdir -p "$v"
        rm -f none.db
        sb $cmd $opt $v reader.batch_size=abc --db none.db
        expect_eq "$cmd --help lists $opt: taken (exit 2 at the bad key or naming $opt)" \
            "$SB_RC $(grep -c -e 'unknown option' -e 'unexpected argument' sb.err) $(grep -c -e "key 'reader.batch_size'" -e "$opt" sb.err | sed 's/^[1-9][0-9]*$/named/')" \
            "2 0 named"
        n=$((n + 1))
    done < <(sed -n -E 's/^(-v, )?(--[a-z][a-z-]*)( ([A-Z][A-Z,.]*))?( .*)?$/\2 \4/p' help.top)
    [ "$n" -ge 2 ] && pass "$cmd --help: $n options tried" || fail "$cmd --help: only $n options found"
done

# 3. seeds: seed + epoch must stay within numpy's 2**32-1 in every epoch
refused "train.seed + epochs above 2**32-1" "shardbench: error: command line: key 'train.seed': 4294967294 is too large: the shuffles of 3 epoch(s) seed numpy with seed + epoch, up to seed + 3, and np.random.seed takes at most 2**32-1 (4294967295), where DLIO stops; the largest seed here is 4294967292" \
    run $small train.seed=4294967294 train.epochs=3 reader.sample_shuffle=seed --local 1 --accelerators 1
refused "--seed with file_shuffle over 2 ranks" "shardbench: error: --seed: 4294967264 is too large: the shuffles of 2 epoch(s) over 2 ranks seed numpy with seed + epoch + 31 x rank, up to seed + 33, and np.random.seed takes at most 2**32-1 (4294967295), where DLIO stops; the largest seed here is 4294967262" \
    run $small --seed 4294967264 train.epochs=2 reader.file_shuffle=seed --local 1 --accelerators 2
# the largest seed runs all its epochs
sb run $small dataset.data_folder=data3 train.seed=4294967292 train.epochs=3 reader.sample_shuffle=seed --local 1 --accelerators 1 --db seed.db
expect_eq "the largest seed: runs 3 epochs" "$SB_RC $(q seed.db "SELECT group_concat(epoch) FROM epochs WHERE run_id = (SELECT max(id) FROM runs WHERE kind = 'train')")" "0 1,2,3"

# 4. bytes that are not UTF-8 (they made runs.config unparseable)
refused "model.name not UTF-8" "shardbench: error: command line: key 'model.name': not valid UTF-8 (byte 0xFF at position 2 of the value)" \
    run $small model.name=$'a\xff\xfeb' --local 1 --accelerators 1
printf 'model:\n  name: a\xff\xfeb\n' >notutf8.yaml
refused "a file's value not UTF-8" "shardbench: error: notutf8.yaml:2: key 'model.name': not valid UTF-8 (byte 0xFF at column 10)" \
    run notutf8.yaml $small --local 1 --accelerators 1
# UTF-8 runs, and its results directory is written from runs.config
sb run $small dataset.data_folder=data3 train.epochs=1 model.name=$'caf\xc3\xa9' --local 1 --accelerators 1 --db utf8.db
expect_eq "a UTF-8 model name runs" "$SB_RC" 0
"$SHARDBENCH" report last --results-dir res --db utf8.db >rd.out 2>rd.err
expect_eq "its results directory is written" "$?" 0

# 5. a prefix that makes hidden files
for p in .x .; do
    refused "datagen dataset.file_prefix=$p" "shardbench: error: command line: key 'dataset.file_prefix': '$p' starts with '.': object names would be hidden files, which the listing skips" \
        datagen $small dataset.data_folder=hidden dataset.file_prefix=$p --local 1 --accelerators 1
done
expect_eq "no hidden dataset written" "$(ls -A hidden 2>/dev/null | wc -l)" 0

# 6. dataset.format in any case: NPZ writes and reads real npz files
sb run $small dataset.data_folder=upper dataset.format=NPZ train.epochs=1 --local 1 --accelerators 1 --db fmt.db
expect_eq "dataset.format=NPZ runs" "$SB_RC" 0
expect_eq "its files are .npz" "$(ls upper/train)" "$(printf 'img_0_of_4.npz\nimg_1_of_4.npz\nimg_2_of_4.npz\nimg_3_of_4.npz')"
expect_eq "each a zip (PK\\x03\\x04)" "$(for f in upper/train/*; do head -c 4 "$f" | od -An -tx1 | tr -d ' \n'; echo; done | sort | uniq -c | sed 's/^ *//')" "4 504b0304"
expect_eq "runs.config records npz" "$(q fmt.db "SELECT config FROM runs WHERE kind = 'train'" | grep -c '^  format: npz$')" 1

# 7. credentials under other names: nowhere in the database or the output
rnd=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
names="api_key apikey apiKey pass passwd password bearer token key secret auth_token sas sas_token signature private_key account_key connection_string"
{ echo "storage:"; echo "  storage_options:"
  for n in $names; do echo "    $n: file-$n-$rnd"; done; } >creds.yaml
cli=()
for n in $names; do cli+=("++workload.storage.credentials.$n=cli-$n-$rnd"); done
SHARDBENCH_WIRE_TRACE="$SCRATCH/creds.wire" \
    sb run creds.yaml $small dataset.data_folder=data7 train.epochs=1 "${cli[@]}" "++workload.storage.storage_options.s3={key: flow-$rnd}" \
    --local 1 --accelerators 1 --db creds.db
expect_contains "the wire carried the workload" creds.wire "data7"
expect_eq "run with credentials under other names" "$SB_RC" 0
sqlite3 creds.db .dump >creds.sql
nnames=$(echo $names | wc -w)
expect_eq "runs.config holds each, redacted" \
    "$(q creds.db "SELECT config FROM runs WHERE kind = 'train'" | grep -c -E '^ +[A-Za-z_]+: "?<redacted>"?$')" $((2 * nnames + 1))
expect_eq "run_overrides holds each, redacted" \
    "$(q creds.db "SELECT count(*) FROM run_overrides WHERE override LIKE '%=<redacted>' AND run_id = (SELECT max(id) FROM runs WHERE kind = 'train')")" $((nnames + 1))
expect_contains "the dump holds the run" creds.sql "data7"
for n in $names; do
    for v in "file-$n-$rnd" "cli-$n-$rnd"; do
        expect_eq "$v: not in the database dump, its raw bytes or the output" \
            "$(cat creds.sql | grep -a -c -F -- "$v") $(cat creds.db creds.db-wal 2>/dev/null | grep -a -c -F -- "$v") $(cat sb.out sb.err creds.wire | grep -a -c -F -- "$v")" "0 0 0"
    done
done
expect_eq "a {...} value naming a key under storage_options: not stored" "$(cat creds.sql creds.db sb.out sb.err creds.wire | grep -a -c -F -- "flow-$rnd")" 0

finish
