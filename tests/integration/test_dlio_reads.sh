#!/usr/bin/env bash
# Keys read as DLIO_local_changes reads them, end to end:
# - reader.file_shuffle: DLIO shuffles files whenever the key is given, off
#   included; the runs' read orders (shardbench.trace) with file_shuffle
#   off (a file's unquoted off, and the command line's off) are the order of
#   file_shuffle seed, and differ from the order without the key; the run
#   warns once;
# - a file DLIO refuses (storage_type s3dlio) exits 2 naming file, line, key
#   and the fix, before anything is written; with shardbench.lenient=true it
#   runs, with the warning.
. "$(dirname "$0")/lib.sh"

small="dataset.num_files_train=12 dataset.num_samples_per_file=1 dataset.record_length_bytes=4096
       dataset.record_length_bytes_stdev=0 reader.batch_size=1 reader.read_threads=1 train.epochs=2
       train.computation_time=0 shardbench.drop_page_cache=false --accelerators 2 --local 1 --progress off"
# shellcheck disable=SC2086 # one override per word
sb datagen dataset.data_folder=./d $small --db gen.db
expect_eq "datagen: exit" "$SB_RC" 0

# order LABEL OVERRIDES...: run with a trace; the reads as "rank epoch position key" lines in order.txt
order () {
    local label=$1
    shift
    rm -rf "tr-$label" && mkdir "tr-$label"
    # shellcheck disable=SC2086 # one override per word
    sb run "$@" dataset.data_folder=./d workflow.generate_data=False $small "shardbench.trace=$PWD/tr-$label" \
        --db "$label.db"
    expect_eq "$label: exit" "$SB_RC" 0
    cp sb.err "$label.err"
    tail -q -n +2 "tr-$label"/trace-*.csv | awk -F, '{print $1, $2, $4, $6}' | sort -n -k1 -k2 -k3 >"$label.order"
}
cat >off.yaml <<'YAML'
reader:
  file_shuffle: off
YAML
order none
order seed reader.file_shuffle=seed
order cli reader.file_shuffle=off
order file off.yaml
expect_eq "reads a run: 2 ranks x 2 epochs x 6 files" "$(wc -l <none.order)" 24
if cmp -s none.order seed.order; then fail "the seeded file shuffle reads in the order of no shuffle"; else
    pass "the seeded file shuffle changes the read order"; fi
if cmp -s cli.order seed.order; then pass "command line off: the order of seed"; else
    fail "command line off: not the order of seed"; diff cli.order seed.order | head -5; fi
if cmp -s file.order seed.order; then pass "a file's unquoted off: the order of seed"; else
    fail "a file's unquoted off: not the order of seed"; diff file.order seed.order | head -5; fi
expect_eq "command line off: one warning" \
    "$(grep -c "command line: key 'reader.file_shuffle': 'off' shuffles the files, as DLIO_local_changes reads it" cli.err)" 1
expect_eq "a file's unquoted off: one warning, naming file and line" \
    "$(grep -c "off.yaml:2: key 'reader.file_shuffle': 'off' shuffles the files, as DLIO_local_changes reads it: DLIO keeps the value as given (YAML 1.1, unquoted, reads off as the boolean false)" file.err)" 1
expect_eq "seed: no warning" "$(grep -c "reader.file_shuffle" seed.err)" 0

# storage_type s3dlio over file://: refused, then run under shardbench.lenient
cat >s3dlio.yaml <<YAML
framework: pytorch
storage:
  storage_type: s3dlio
  storage_root: file://$PWD/s3dlio-data
YAML
# shellcheck disable=SC2086 # one override per word
sb run s3dlio.yaml $small workflow.generate_data=True --db r.db
expect_eq "storage_type s3dlio: exit" "$SB_RC" 2
expect_contains "storage_type s3dlio: the refusal" sb.err \
    "s3dlio.yaml:3: key 'storage.storage_type': DLIO_local_changes refuses 's3dlio': it is not one of DLIO's storage types (local_fs, parallel_fs, direct_fs, s3, aistore), so config.py's LoadConfig stops before anything runs; write storage_type: local_fs under storage: (the same I/O in shardbench); or set shardbench.lenient: true to run it anyway, with a warning"
if [ -e s3dlio-data ] || [ -e r.db ]; then fail "refused: something was written"; else pass "refused: nothing written"; fi
# shellcheck disable=SC2086 # one override per word
sb run s3dlio.yaml $small workflow.generate_data=True shardbench.lenient=true --db r.db
expect_eq "storage_type s3dlio, lenient: exit" "$SB_RC" 0
expect_contains "storage_type s3dlio, lenient: the warning" sb.err \
    "s3dlio.yaml:3: key 'storage.storage_type': DLIO_local_changes refuses 's3dlio': "
expect_contains "storage_type s3dlio, lenient: the warning's end" sb.err "; running it anyway (shardbench.lenient: true)"
expect_eq "storage_type s3dlio, lenient: the files under the file:// root" \
    "$(find s3dlio-data -name '*.npz' | wc -l)" 12
finish
