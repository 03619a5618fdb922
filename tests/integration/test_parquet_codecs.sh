#!/usr/bin/env bash
# Parquet pages compressed as dataset.compression names them (snappy, gzip,
# zstd): hyparquet (npm, pinned; gzip and zstd through hyparquet-compressors)
# decodes files parquet_tool writes and finds the rows of the uncompressed
# file of the same seed, the codec in every column chunk; the read plan
# parquet_tool prints from the footer (what a trainer reads) is, group by
# group, the span DLIO's file reader computes from the same metadata.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"

HYPARQUET_VERSION=1.31.5
COMPRESSORS_VERSION=1.1.2
hyp="${SHARDBENCH_NPM_CACHE:-${HOME:-/tmp}/.cache/shardbench/npm}/hyparquet-codecs"
s3rver_install >/dev/null 2>&1 || true     # a node >= 20 first on PATH
npm_pinned "$hyp" hyp-install.log "hyparquet@$HYPARQUET_VERSION" "hyparquet-compressors@$COMPRESSORS_VERSION" \
    || { cat hyp-install.log; fail "npm install hyparquet hyparquet-compressors"; finish; }
check="$(dirname "$0")/parquet_check.mjs"
cols="label:float32:1,half:float16:1,dbl:float64:1,small:int8:1,numerical_features:float32:13,cat:int64:1"

# named columns, groups of 128 rows, and DLIO's legacy data list<uint8> (groups of 1 MiB)
for shape in named plain; do
    if [ $shape = named ]; then args="1000 128 $cols 1"; else args="60 0 - 20000"; fi
    set -- $args
    rows=$1 group=$2 c=$3 rec=$4
    for codec in none snappy gzip zstd; do
        "$PARQUET_TOOL" write "$shape-$codec.parquet" 4242 "$rows" "$group" "$c" "$rec" "$codec"
        expect_eq "$shape $codec: parquet_tool writes" "$?" 0
    done
    expect_eq "$shape: the codecs change the bytes" \
        "$(cksum "$shape"-*.parquet | awk '{ print $1 }' | sort -u | wc -l)" 4
    for codec in none snappy gzip zstd; do
        up=$(echo "$codec" | tr a-z A-Z); [ "$codec" = none ] && up=UNCOMPRESSED
        same=; [ "$codec" = none ] || same="$shape-none.parquet"
        PQ_CODEC=$up PQ_SAME_AS=$same node "$check" "$hyp" "$rows" "$group" "$c" "$shape-$codec.parquet" >"$shape-$codec.out" 2>&1
        expect_eq "$shape $codec: hyparquet decodes every page, the rows of the uncompressed file" "$?" 0
        grep -v '^\(group\|data\)-bytes' "$shape-$codec.out" | tail -3
    done
done

# a flipped byte inside a compressed page (the middle of group 0's
# numerical_features chunk, a page of 1664 floats): hyparquet fails or the
# rows differ
f=named-zstd.parquet
at=$("$PARQUET_TOOL" plan "$f" numerical_features 0 | awk '/^range / { print $2 + int($3 / 2); exit }')
python3 -c 'import sys; p = sys.argv[1]; d = bytearray(open(p, "rb").read()); d[int(sys.argv[2])] ^= 0xFF; open(p, "wb").write(d)' "$f" "$at"
PQ_CODEC=ZSTD PQ_SAME_AS=named-none.parquet node "$check" "$hyp" 1000 128 "$cols" "$f" >flip.out 2>&1
expect_eq "a flipped byte in a zstd page is caught" "$?" 1

# the plan from the footer = DLIO's span of the columns read, group by group
for read in - cat,half numerical_features; do
    for codec in none snappy gzip; do
        f=named-$codec.parquet
        "$PARQUET_TOOL" plan "$f" "$read" 1 >plan.out
        expect_eq "plan of $f reading $read" "$?" 0
        env_read=; [ "$read" = - ] || env_read=$read
        up=$(echo "$codec" | tr a-z A-Z); [ "$codec" = none ] && up=UNCOMPRESSED
        PQ_CODEC=$up PQ_READ=$env_read PQ_SPANS=1 node "$check" "$hyp" 1000 128 "$cols" "$f" >spans.out 2>&1
        expect_eq "plan of $f reading $read: hyparquet's metadata gives 8 spans" "$(grep -c '^span ' spans.out)" 8
        expect_eq "plan of $f reading $read: one read a group, DLIO's span" \
            "$(awk '/^range / { print $2, $3 }' plan.out)" "$(awk '/^span / { print $4, $5 }' spans.out)"
        size=$(stat -c %s "$f")
        tail=$((size < 65536 ? size : 65536))
        expect_eq "plan of $f: one footer read, pyarrow's last 64 KiB" \
            "$(awk '/^footer / { print $2, $3 }' plan.out)" "$((size - tail)) $tail"
    done
done

finish
