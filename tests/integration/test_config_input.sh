#!/usr/bin/env bash
# Configuration input refused before anything starts, each with exit status
# 2, the exact error naming where the value came from and the key, and no
# result database created: an unknown KEY=VALUE on the command line (with
# the nearest keys; Hydra's ++workload.KEY=VALUE and a workload file only
# warn, as DLIO does).
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

finish
