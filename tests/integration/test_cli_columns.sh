#!/usr/bin/env bash
# dataset.parquet.columns given on the command line, as a list of mappings
# (KEY=[{name: .., dtype: .., size: ..}, ...], also ++workload.KEY=...), is
# the YAML form: `shardbench datagen` of the quickstart as parquet writes
# the same files byte for byte as the YAML form does, rows of the columns'
# 87 bytes (80 + 4 + 3), not quickstart's 131072-byte records; the marker
# names the columns; hyparquet reads those columns, their types and every
# row. A list that is not of mappings is refused naming the key.
. "$(dirname "$0")/lib.sh"
. "$SB_INTEGRATION_DIR/../s3/s3lib.sh"

cols='[{name: feat, dtype: float32, size: 20}, {name: id, dtype: int32}, {name: lab, dtype: int8, size: 3}]'
want='feat:float32:20,id:int32:1,lab:int8:3'
common="dataset.format=parquet dataset.num_files_train=4 dataset.num_samples_per_file=300
        dataset.parquet.row_group_size=128 --accelerators 1 --local 1 --progress off"

# the YAML form: the quickstart preset's file with the columns under dataset:
cat >cols-part.yaml <<'YAML'
  parquet:
    columns:
      - {name: feat, dtype: float32, size: 20}
      - {name: id, dtype: int32}
      - {name: lab, dtype: int8, size: 3}
YAML
sed '/^dataset:/r cols-part.yaml' "$SB_INTEGRATION_DIR/../../coordinator/workloads/quickstart.yaml" >cols.yaml
# shellcheck disable=SC2086 # one override per word
sb datagen cols.yaml dataset.data_folder=./yaml $common --db y.db
expect_eq "datagen, columns in the YAML file: exit" "$SB_RC" 0
expect_contains "YAML form: rows of 87 bytes" sb.err "dataset.parquet.columns: rows of 87 bytes"

dir=cli0
for form in "dataset.parquet.columns=$cols" "++workload.dataset.parquet.columns=$cols"; do
    dir=cli${dir#cli}1
    # shellcheck disable=SC2086 # one override per word
    sb datagen quickstart dataset.data_folder="./$dir" $common "$form" --db c.db
    expect_eq "datagen quickstart '${form%%=*}=[...]': exit" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    expect_contains "'${form%%=*}=[...]': rows of 87 bytes (quickstart's 131072 follows the columns)" sb.err \
        "dataset.parquet.columns: rows of 87 bytes; dataset.record_length_bytes 131072 (stdev 16384) follows the columns"
    if grep -q "DLIO keys this version ignores:.*dataset.parquet.columns" sb.err; then
        fail "'${form%%=*}=[...]': listed as ignored"
    else
        pass "'${form%%=*}=[...]': not listed as ignored"
    fi
    expect_contains "'${form%%=*}=[...]': the marker names the columns" "$dir/.shardbench-dataset" \
        "dataset.parquet.columns=$want"
    expect_contains "'${form%%=*}=[...]': the marker's record length" "$dir/.shardbench-dataset" \
        "dataset.record_length_bytes=87"
    same=0 n=0
    for f in $(cd yaml && find train -name '*.parquet' | sort); do
        n=$((n + 1))
        cmp -s "yaml/$f" "$dir/$f" && same=$((same + 1))
    done
    expect_eq "'${form%%=*}=[...]': files byte for byte those of the YAML form" "$same/$n" "4/4"
done
# the size a file of 300 rows of 87 bytes takes: more than the values, far less than 300 x 131072
size=$(stat -c %s "$(find yaml/train -name '*.parquet' | sort | head -1)")
if [ "$size" -ge $((300 * 87)) ] && [ "$size" -lt $((300 * 87 * 2)) ]; then
    pass "a file of 300 rows: $size bytes (300 x 87 = 26100 of values)"
else
    fail "a file of 300 rows: $size bytes, expected [26100, 52200)"
fi

# hyparquet reads the columns, their types, groups of 128 rows and every row
HYPARQUET_VERSION=1.31.5
hyp="${SHARDBENCH_NPM_CACHE:-${HOME:-/tmp}/.cache/shardbench/npm}/hyparquet"
s3rver_install >/dev/null 2>&1 || true
npm_pinned "$hyp" hyp-install.log "hyparquet@$HYPARQUET_VERSION" || { cat hyp-install.log; fail "npm install hyparquet"; }
# shellcheck disable=SC2046 # one argument per file
node "$SB_INTEGRATION_DIR/parquet_check.mjs" "$hyp" 300 128 "$want" $(find cli*/train -name '*.parquet' | sort) \
    >hyp.out 2>&1
expect_eq "hyparquet reads the command line's columns, their types, groups of 128 rows, every row" "$?" 0
tail -3 hyp.out

# not a list of mappings: refused naming the key, nothing written
sb datagen quickstart dataset.data_folder=./bad dataset.format=parquet 'dataset.parquet.columns=[feat, id]' \
    --accelerators 1 --local 1 --db b.db
expect_eq "a list of names: exit" "$SB_RC" 2
expect_contains "a list of names: the error" sb.err \
    "command line: key 'dataset.parquet.columns': expected a list of mappings [{name: .., dtype: .., size: ..}, ...], got a list of plain values"
sb datagen quickstart dataset.data_folder=./bad dataset.format=parquet 'dataset.parquet.columns=[{name: a, dtype: int8}, b]' \
    --accelerators 1 --local 1 --db b.db
expect_eq "a list of a mapping and a name: exit" "$SB_RC" 2
expect_contains "a list of a mapping and a name: the error" sb.err \
    "command line: key 'dataset.parquet.columns': expected a list of mappings [{name: value, ...}, ...], each item in braces"
if [ -e bad ]; then fail "refused: ./bad was created"; else pass "refused: nothing written"; fi
finish
