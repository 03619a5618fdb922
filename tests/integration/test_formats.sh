#!/usr/bin/env bash
# Data formats end to end: datagen writes npz, npy, tfrecord, png, jpeg,
# hdf5 and parquet files that numpy, a TFRecord CRC check, PIL, h5dump and
# hyparquet (npm) read; training reads them
# with reader.verify (every byte against the generator) and counts exact
# samples and bytes; a flipped byte in the framing fails verification; the
# same bytes over S3; unsupported formats stop at config time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"

common="dataset.num_files_train=16 dataset.record_length_bytes=20000 dataset.record_length_bytes_stdev=3000
        reader.batch_size=2 reader.read_threads=2 reader.sample_shuffle=seed reader.verify=true train.epochs=2
        train.computation_time=0"

# run_format LABEL FORMAT SAMPLES_PER_FILE: datagen + train, exact counts
run_format () {
    local label=$1 fmt=$2 spf=$3 db=$1.db
    sb run $common dataset.format="$fmt" dataset.num_samples_per_file="$spf" dataset.data_folder="./$label" \
        --accelerators 4 --local 2 --db "$db"
    expect_eq "$label: exit status" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    local files total
    files=$(find "$label/train" -name "img_*_of_16.$fmt" | wc -l)
    total=$(find "$label/train" -name "img_*_of_16.$fmt" -printf '%s\n' | awk '{ s += $1 } END { print s }')
    expect_eq "$label: 16 files" "$files" 16
    expect_eq "$label: datagen wrote 16 objects, every byte on disk" \
        "$(q "$db" "SELECT samples || '|' || bytes FROM epochs WHERE run_id = 1")" "16|$total"
    # 16 x spf samples over 4 ranks, nothing dropped; every byte of every file read once an epoch
    # (parquet: over DLIO's files kind, each row group once; checked with hyparquet below)
    local s=$((16 * spf))
    [ "$fmt" = parquet ] && return
    expect_eq "$label: epochs read every sample and byte" \
        "$(q "$db" "SELECT group_concat(samples || ':' || dropped || ':' || bytes, ' ') FROM epochs WHERE run_id = 2")" \
        "$s:0:$total $s:0:$total"
}

run_format npz npz 1
run_format npy npy 2
run_format tfrecord tfrecord 4
run_format png png 1
run_format jpeg jpeg 1
run_format hdf5 hdf5 2
# 60 rows of about 20000 bytes: row groups of 1 MiB of data, two a file
run_format parquet parquet 60

# hyparquet (npm, pinned; into the npm cache folder of s3lib.sh, with a
# node >= 20: s3rver_install puts one first on PATH) reads the parquet files
HYPARQUET_VERSION=1.31.5
hyp="${SHARDBENCH_NPM_CACHE:-${HOME:-/tmp}/.cache/shardbench/npm}/hyparquet"
s3rver_install >/dev/null 2>&1 || true
npm_pinned "$hyp" hyp-install.log "hyparquet@$HYPARQUET_VERSION" || { cat hyp-install.log; fail "npm install hyparquet"; }
# epoch_rows_bytes DB: "samples:dropped:bytes" of the two training epochs
epoch_rows_bytes () {
    q "$1" "SELECT group_concat(samples || ':' || dropped || ':' || bytes, ' ') FROM epochs WHERE run_id = 2"
}
# parquet_epochs LABEL DB OUT FOLDER FILES SPF BATCH: parquet over DLIO's
# files kind (4 ranks, 2 loader threads, no file shuffle): rank r reads its
# FILES/4 files, thread w its local files w, w+2; a thread's full batches
# first, then the rank's full batches of what the threads leave, the rest
# (k % BATCH of the rank's k samples) dropped. As DLIO's parquet reader
# (pyarrow), an epoch reads each file's footer once (the last
# min(size, 64 KiB), and the metadata again when that tail does not hold it)
# and each row group holding a read row once, from its first byte to the end
# of its last column read: here every group of every file (the callers say
# why), hyparquet's group-bytes. So an epoch's bytes are exactly
# group-bytes + the footer reads. The bar (little read beyond what DLIO reads), from the run's own counts:
# (bytes an epoch - footer reads) / bytes of the files <= 1.05 (the footer
# reads of these small files are DLIO's too: its amplification here is
# theirs), and bytes an epoch >= the values' bytes (hyparquet's data-bytes).
footer_reads () {
    python3 - "$@" <<'PYEOF'
import struct, sys, os
total = 0
for path in sys.argv[1:]:
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        f.seek(size - 8)
        md_len = struct.unpack("<I", f.read(4))[0]
    tail = min(size, 65536)
    total += tail + (md_len if md_len + 8 > tail else 0)
print(total)
PYEOF
}
parquet_epochs () {
    local label=$1 db=$2 out=$3 folder=$4 files=$5 spf=$6 batch=$7
    local k=$((files / 4 * spf)) gb b fb data foot
    local s=$((4 * (k / batch) * batch))
    local d=$((4 * k - s))
    gb=$(sed -n 's/^group-bytes //p' "$out")
    data=$(sed -n 's/^data-bytes //p' "$out")
    # shellcheck disable=SC2046
    foot=$(footer_reads $(find "$folder/train" -name '*.parquet' | sort))
    expect_eq "$label: $s samples an epoch, $d dropped, every footer and row group read once" \
        "$(epoch_rows_bytes "$db")" "$s:$d:$((gb + foot)) $s:$d:$((gb + foot))"
    fb=$(find "$folder/train" -name '*.parquet' -printf '%s\n' | awk '{ s += $1 } END { print s }')
    for b in $(q "$db" "SELECT bytes FROM epochs WHERE run_id = 2"); do
        expect_eq "$label: (epoch bytes $b - footer reads $foot) / file bytes $fb <= 1.05, >= data bytes $data" \
            "$(awk -v b="$b" -v t="$foot" -v f="$fb" -v v="$data" 'BEGIN { print (b - t <= 1.05 * f && b >= v && v > 0) ? "yes" : "no" }')" yes
    done
}
node "$(dirname "$0")/parquet_check.mjs" "$hyp" 60 0 - $(find parquet/train -name '*.parquet' | sort) >pq.out 2>&1
expect_eq "hyparquet reads the schema, row groups and every row" "$?" 0
cat pq.out
# 16 files of 60 rows: k = 240 a rank, 120 a thread, 60 batches of 2 each:
# nothing left over, every row read
parquet_epochs parquet parquet.db pq.out parquet 16 60 2

# a dlrm-like parquet workload: the columns DLIO's YAML names (float16 as
# FIXED_LEN_BYTE_ARRAY(2) + Float16, int8 as INT32 + Int(8, signed), a
# 13-float vector as a LIST of 13 FLOAT, as pyarrow writes DLIO's table), row groups of 128 rows; the
# record length follows the columns (4+2+8+1+52+8 = 75 bytes)
cat >pqcols.yaml <<'YAML'
model:
  name: dlrm_like
workflow:
  generate_data: True
dataset:
  data_folder: ./pqcols
  format: parquet
  num_files_train: 8
  num_samples_per_file: 1000
  record_length_bytes: 160
  parquet:
    row_group_size: 128
    columns:
      - name: label
        dtype: float32
      - name: half
        dtype: float16
        size: 1
      - name: dbl
        dtype: float64
      - name: small
        dtype: int8
      - name: numerical_features
        dtype: float32
        size: 13
      - name: cat
        dtype: int64
reader:
  batch_size: 64
  read_threads: 2
  sample_shuffle: seed
  verify: true
train:
  epochs: 2
  computation_time: 0
YAML
sb run pqcols.yaml --accelerators 4 --local 2 --db pqcols.db
expect_eq "parquet columns: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
expect_contains "parquet columns: the record length follows the columns" sb.err "rows of 75 bytes"
node "$(dirname "$0")/parquet_check.mjs" "$hyp" 1000 128 \
    "label:float32:1,half:float16:1,dbl:float64:1,small:int8:1,numerical_features:float32:13,cat:int64:1" \
    $(find pqcols/train -name '*.parquet' | sort) >pqcols.out 2>&1
expect_eq "hyparquet reads the named columns, their types, 8 groups of 128/104 rows" "$?" 0
cat pqcols.out
# 8 files of 1000 rows: k = 2000 a rank, a file a thread: 15 batches of 64
# each, their rows 960..999 left; the rank's one more batch takes thread 0's
# 40 and thread 1's rows 960..983; rows 984..999 of thread 1's file are
# dropped (16 a rank), inside its last group (rows 896..999), which is read
parquet_epochs "parquet columns" pqcols.db pqcols.out pqcols 8 1000 64

# only the columns storage.storage_options.columns names (DLIO's key): each
# group is read from its first byte to the end of its last chunk of `half`
# (label and half are the first two), as DLIO's reader reads it; hyparquet's
# spans of those columns give the bytes (PQ_SPANS), plus the same footers
cp pqcols.yaml pqread.yaml
cat >>pqread.yaml <<'YAML'
storage:
  storage_options:
    columns: [label, half]
YAML
sb run pqread.yaml --accelerators 4 --local 2 --db pqread.db
expect_eq "parquet read columns: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
PQ_READ=label,half PQ_SPANS=1 node "$(dirname "$0")/parquet_check.mjs" "$hyp" 1000 128 \
    "label:float32:1,half:float16:1,dbl:float64:1,small:int8:1,numerical_features:float32:13,cat:int64:1" \
    $(find pqcols/train -name '*.parquet' | sort) >pqread.out 2>&1
spans=$(awk '$1 == "span" { s += $5 } END { print s }' pqread.out)
# shellcheck disable=SC2046
foot=$(footer_reads $(find pqcols/train -name '*.parquet' | sort))
expect_eq "parquet read columns: every group's span of label and half, and every footer, once an epoch" \
    "$(q pqread.db "SELECT group_concat(samples || ':' || dropped || ':' || bytes, ' ') FROM epochs WHERE run_id = (SELECT max(id) FROM runs)")" \
    "7936:64:$((spans + foot)) 7936:64:$((spans + foot))"
expect_eq "parquet read columns: fewer bytes than all columns" \
    "$(awk -v s="$spans" -v g="$(sed -n 's/^group-bytes //p' pqcols.out)" 'BEGIN { print (s > 0 && s < g / 4) ? "yes" : "no" }')" yes

# h5dump (hdf5-tools) reads the HDF5 files: records_0 (2, dim1, dim2) of uint8, labels (2) of int64
h5ok=0
for f in hdf5/train/*.hdf5; do
    h5dump -H "$f" >h5.out 2>&1 || break
    grep -q 'DATASET "records_0"' h5.out && grep -q 'H5T_STD_U8LE' h5.out && grep -q 'DATASET "labels"' h5.out \
        && grep -q 'H5T_STD_I64LE' h5.out && grep -Eq 'DATASPACE  SIMPLE \{ \( 2, [0-9]+, [0-9]+ \) / \( 2, [0-9]+, [0-9]+ \) \}' h5.out \
        || break
    h5ok=$((h5ok + 1))
done
expect_eq "h5dump reads all 16 HDF5 files" "$h5ok" 16
[ "$h5ok" = 16 ] || cat h5.out

# the usual readers: numpy, PIL, and TFRecord's framing checked with a
# CRC-32C of its own; python3-numpy and python3-pil are Debian's, so use
# Debian's interpreter when the first python3 on PATH lacks them
PY=python3
"$PY" -c 'import numpy, PIL' 2>/dev/null || PY=/usr/bin/python3
py_lib "$PY" - >py.out 2>&1 <<'PY'
import glob, os, struct, sys
import numpy as np
from PIL import Image
bad = []
def check(what, ok):
    if not ok:
        bad.append(what)
for f in sorted(glob.glob("npz/train/*.npz")):
    with np.load(f) as z:
        x, y = z["x"], z["y"]
        check(f + " members", sorted(z.files) == ["x", "y"])
        # DLIO's (dim1, dim2, samples) (npz_generator.py)
        check(f + " x", x.dtype == np.uint8 and x.ndim == 3 and x.shape[2] == 1)
        check(f + " y", y.dtype == np.int64 and y.shape == (1,) and not y.any())
        # 35 + 128 + x, descriptor, 35 + 128 + y, directory, end
        check(f + " size", os.path.getsize(f) == 35 + 128 + x.nbytes + 16 + 35 + 128 + y.nbytes + 102 + 22)
for f in sorted(glob.glob("npy/train/*.npy")):
    x = np.load(f)
    check(f, x.dtype == np.uint8 and x.ndim == 3 and x.shape[2] == 2 and os.path.getsize(f) == 128 + x.nbytes)
from tfrecord_crc import crc32c, masked
records = 0
for f in sorted(glob.glob("tfrecord/train/*.tfrecord"))[:4]:
    d = open(f, "rb").read()
    at = 0
    while at < len(d):
        n, = struct.unpack_from("<Q", d, at)
        check(f + " length crc", struct.unpack_from("<I", d, at + 8)[0] == masked(crc32c(d[at:at + 8])))
        check(f + " data crc", struct.unpack_from("<I", d, at + 12 + n)[0] == masked(crc32c(d[at + 12:at + 12 + n])))
        at += 16 + n
        records += 1
    check(f + " ends on a record", at == len(d))
check("4 records in each of 4 files", records == 16)
for fmt, name in (("png", "PNG"), ("jpeg", "JPEG")):
    for f in sorted(glob.glob(fmt + "/train/*." + fmt)):
        im = Image.open(f)
        im.load()
        # DLIO's bytes: one sample's dim1 x dim2, the image as many bytes long
        check(f, im.format == name and im.mode == "L" and 5000 <= im.size[0] * im.size[1] <= 35000
              and os.path.getsize(f) == im.size[0] * im.size[1])
print("bad:", bad)
sys.exit(1 if bad else 0)
PY
expect_eq "numpy, PIL and the TFRecord CRCs accept the files" "$?" 0
cat py.out

# verification reads the framing too: a flipped byte of a TFRecord data CRC,
# of the npz central directory, of a png's padding fails the run
# (parquet: a byte 2000 from the end, in the last row group: the footer is not read)
flip () {  # FILE OFFSET_FROM_END
    python3 -c 'import sys; p = sys.argv[1]; d = bytearray(open(p, "rb").read()); d[-int(sys.argv[2])] ^= 0xFF; open(p, "wb").write(d)' "$1" "$2"
}
for c in "tfrecord tfrecord 4 1" "npz npz 1 30" "png png 1 200" "hdf5 hdf5 2 100" "parquet parquet 60 2000"; do
    set -- $c
    f=$(find "$1/train" -name "img_03_of_16.$2")
    flip "$f" "$4"
    sb run $common dataset.format="$2" dataset.num_samples_per_file="$3" dataset.data_folder="./$1" --relist \
        --accelerators 4 --local 2 --db "$1.db"
    expect_eq "$1: a flipped byte fails the run" "$SB_RC" 1
    expect_contains "$1: verify names the file" sb.err "verify $PWD/$1/train/img_03_of_16.$2: byte"
done

# formats not written yet stop before anything starts
for fmt in csv; do
    sb run $common dataset.format=$fmt dataset.data_folder=./$fmt --db no.db
    expect_eq "$fmt: config error" "$SB_RC" 2
    expect_contains "$fmt: says so" sb.err "key 'dataset.format': dataset.format '$fmt' is not supported yet"
    expect_eq "$fmt: nothing written" "$(ls "$fmt" 2>/dev/null | wc -l)" 0
done

# S3: the same bytes, verified over ranged GETs
if s3rver_install; then
    s3rver_env
    trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
    mkdir -p s3data
    if s3rver_start "$SCRATCH/s3data" sbtest; then
        for c in "tfrecord 4" "png 1" "npz 1"; do
            set -- $c
            sb run $common dataset.format="$1" dataset.num_samples_per_file="$2" dataset.data_folder="s3$1" \
                storage.storage_type=s3 storage.storage_library=s3dlio storage.storage_root=sbtest \
                "storage.storage_options.endpoint_urls=[$S3RVER_ENDPOINT]" --accelerators 4 --local 2 --db "s3$1.db"
            expect_eq "s3 $1: exit status" "$SB_RC" 0
            [ "$SB_RC" = 0 ] || tail -5 sb.err
            expect_eq "s3 $1: bytes written = bytes of the local files" \
                "$(q "s3$1.db" "SELECT bytes FROM epochs WHERE run_id = 1")" "$(q "$1.db" "SELECT bytes FROM epochs WHERE run_id = 1")"
            expect_eq "s3 $1: every byte read each epoch" \
                "$(q "s3$1.db" "SELECT group_concat(samples || ':' || bytes, ' ') FROM epochs WHERE run_id = 2")" \
                "$(q "$1.db" "SELECT group_concat(samples || ':' || bytes, ' ') FROM epochs WHERE run_id = 2")"
        done
    else
        fail "S3 server did not start"
    fi
else
    fail "cannot install the S3 test server"
fi


finish
