#!/usr/bin/env bash
# Datasets interchangeable with DLIO , both ways:
# (a) the files shardbench's datagen writes open with numpy, h5py, PIL and a
#     tf.train.Example decoder written here exactly as DLIO_local_changes'
#     generators shape them (array names, shapes, dtypes, features, image
#     sizes, indexed_binary's .off.idx / .sz.idx), from record_length_bytes,
#     dataset.record_dims and dataset.record_element_type;
# (b) files written here the way DLIO's generators write them (numpy's
#     savez/save, h5py, a TFRecord writer, raw image bytes, index files)
#     are read by a shardbench run over their folder: every sample, every
#     byte of every data file, once an epoch.
# python3-numpy, python3-h5py and python3-pil are Debian's: Debian's
# interpreter when the first python3 on PATH lacks them; outside CI the
# test skips (77) when one is missing.
. "$(dirname "$0")/lib.sh"

PY=python3
"$PY" -c 'import numpy, h5py, PIL' 2>/dev/null || PY=/usr/bin/python3
if ! "$PY" -c 'import numpy, h5py, PIL' 2>/dev/null; then
    if [ "${CI:-}" = true ]; then
        fail "python3-numpy, python3-h5py and python3-pil are needed (deploy/install-deps.sh --tests)"
        finish
        exit 1
    fi
    echo "SKIP: python3-numpy, python3-h5py or python3-pil missing (deploy/install-deps.sh --tests)"
    exit 77
fi

# 8 files over 2 ranks, batch 1: nothing dropped; no record stdev (the preset has one; DLIO has none)
common="dataset.num_files_train=8 dataset.record_length_bytes_stdev=0 reader.batch_size=1 reader.read_threads=1 train.epochs=1
        train.computation_time=0"

# gen LABEL FORMAT SPF EXTRA...: datagen + an epoch with verify; exact counts
gen () {
    local label=$1 fmt=$2 spf=$3 db=$1.db
    shift 3
    sb run $common dataset.format="$fmt" dataset.num_samples_per_file="$spf" dataset.data_folder="./$label" \
        reader.verify=true "$@" --accelerators 2 --local 1 --db "$db"
    expect_eq "$label: exit status" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    local total
    total=$(find "$label/train" -name "img_*_of_8.$fmt" -printf '%s\n' | awk '{ s += $1 } END { print s }')
    expect_eq "$label: one epoch read every sample and every byte of the data files" \
        "$(q "$db" "SELECT samples || ':' || bytes FROM epochs WHERE run_id = 2")" "$((8 * spf)):$total"
}

# (a) shardbench writes. record_length_bytes 4000: DLIO's dim int(sqrt) = 63
gen npz npz 2 dataset.record_length_bytes=4000 dataset.record_element_type=float32
gen npy npy 3 dataset.record_length_bytes=4000
gen npydims npy 2 "dataset.record_dims=[4, 5, 6]" dataset.record_element_type=int16
gen hdf5 hdf5 2 "dataset.record_dims=[1, 10, 12]" dataset.record_element_type=float16
gen tfrecord tfrecord 3 dataset.record_length_bytes=4000
gen png png 1 dataset.record_length_bytes=4000
gen jpeg jpeg 2 "dataset.record_dims=[30, 40]"
# png and jpeg are DLIO's dim1 x dim2 bytes a file (one sample's, whatever the
# samples per file), as valid images: several record lengths, with a stdev
gen png150k png 1 dataset.record_length_bytes=150000
gen jpeg1m jpeg 3 dataset.record_length_bytes=1048576
gen pngsd png 2 dataset.record_length_bytes=20000 dataset.record_length_bytes_stdev=3000
gen jpegsd jpeg 1 dataset.record_length_bytes=20000 dataset.record_length_bytes_stdev=3000
# too small for a valid image of dim1 x dim2 bytes: the smallest, said once
gen tinypng png 1 dataset.record_length_bytes=49
expect_contains "tiny png: datagen says the files are not DLIO's size" sb.err \
    "dataset.record_length_bytes=49: 8 of 8 png files cannot be DLIO's dim1 x dim2 bytes"
expect_eq "tiny png: said once" "$(grep -c "cannot be DLIO's dim1 x dim2 bytes" sb.err)" 1
gen ib indexed_binary 4 dataset.record_length_bytes=4000
gen mib mmap_indexed_binary 2 "dataset.record_dims=[100]" dataset.record_element_type=float64
expect_eq "indexed_binary: datagen counted the index files' bytes too" \
    "$(q ib.db "SELECT bytes FROM epochs WHERE run_id = 1")" \
    "$(find ib/train -type f -name 'img_*' -printf '%s\n' | awk '{ s += $1 } END { print s }')"

py_lib "$PY" - >check.out 2>&1 <<'PY'
import glob, math, os, struct, sys
import numpy as np, h5py
from PIL import Image

bad = []
def check(what, ok):
    if not ok:
        bad.append(what)

from tfrecord_crc import crc32c, masked

# a protobuf decoder for tf.train.Example (example.proto, feature.proto)
def varint(b, at):
    v = shift = 0
    while True:
        x = b[at]; at += 1
        v |= (x & 0x7F) << shift; shift += 7
        if not x & 0x80:
            return v, at
def fields(b):
    at, out = 0, []
    while at < len(b):
        key, at = varint(b, at)
        f, wt = key >> 3, key & 7
        if wt == 2:
            n, at = varint(b, at); out.append((f, b[at:at + n])); at += n
        elif wt == 0:
            v, at = varint(b, at); out.append((f, v))
        else:
            raise ValueError("wire type %d" % wt)
    return out
def example(b):
    (f, features), = fields(b)
    assert f == 1
    feats = {}
    for f, entry in fields(features):
        assert f == 1
        kv = dict(fields(entry))
        name = kv[1].decode()
        (kind, lst), = fields(kv[2])
        if kind == 1:      # BytesList
            feats[name] = ("bytes", [v for g, v in fields(lst) if g == 1])
        elif kind == 3:    # Int64List, packed
            vals = []
            for g, v in fields(lst):
                if isinstance(v, int):
                    vals.append(v)
                else:
                    at = 0
                    while at < len(v):
                        x, at = varint(v, at); vals.append(x)
            feats[name] = ("int64", vals)
        else:
            feats[name] = ("other", kind)
    return feats

d = int(math.sqrt(4000))  # 63, as DLIO's config.py: dimension = int(sqrt(record_length))
for f in sorted(glob.glob("npz/train/*.npz")):
    with np.load(f) as z:
        check(f + " names", sorted(z.files) == ["x", "y"])
        check(f + " x", z["x"].dtype == np.float32 and z["x"].shape == (d, d, 2))
        check(f + " y", z["y"].dtype == np.int64 and z["y"].shape == (2,) and not z["y"].any())
for f in sorted(glob.glob("npy/train/*.npy")):
    x = np.load(f)
    check(f, x.dtype == np.uint8 and x.shape == (d, d, 3))
for f in sorted(glob.glob("npydims/train/*.npy")):
    x = np.load(f)
    check(f, x.dtype == np.int16 and x.shape == (4, 5, 6, 2))
for f in sorted(glob.glob("hdf5/train/*.hdf5")):
    with h5py.File(f, "r") as h:
        check(f + " names", sorted(h.keys()) == ["labels", "records_0"])
        # DLIO drops record_dims' leading 1: (samples, 10, 12)
        check(f + " records_0", h["records_0"].dtype == np.float16 and h["records_0"].shape == (2, 10, 12))
        check(f + " labels", h["labels"].dtype == np.int64 and h["labels"].shape == (2,))
records = 0
for f in sorted(glob.glob("tfrecord/train/*.tfrecord")):
    b = open(f, "rb").read()
    at = 0
    while at < len(b):
        n, = struct.unpack_from("<Q", b, at)
        check(f + " length crc", struct.unpack_from("<I", b, at + 8)[0] == masked(crc32c(b[at:at + 8])))
        data = b[at + 12:at + 12 + n]
        check(f + " data crc", struct.unpack_from("<I", b, at + 12 + n)[0] == masked(crc32c(data)))
        feats = example(data)
        check(f + " features", sorted(feats) == ["image", "size"])
        check(f + " image", feats["image"][0] == "bytes" and [len(v) for v in feats["image"][1]] == [d * d])
        check(f + " size", feats["size"] == ("int64", [d * d]))
        at += 16 + n
        records += 1
    check(f + " ends on a record", at == len(b))
check("3 records in each of 8 files", records == 24)
# png / jpeg: DLIO's generators (non-DALI) write the dim1 x dim2 raw bytes of
# one sample a file; shardbench a valid image of dim1 rows of dim2 pixels
# that is exactly as long. dim1, dim2 as DLIO draws them (data_generator.py
# get_dimension, _extract_dims; config.py: dimension = int(sqrt(record
# length)), dimension_stdev = stdev / 2 / sqrt(record length)).
def dlio_dims(record_length, files):
    dim = np.ones(2 * files, dtype=np.int64) * int(math.sqrt(record_length))
    return [(int(dim[2 * i]), int(dim[2 * i + 1])) for i in range(files)]
def images(folder, fmt, name, dims, stdev_of=None):
    files = sorted(glob.glob(folder + "/train/*." + fmt))
    check(folder + " 8 files", len(files) == 8)
    for i, f in enumerate(files):
        im = Image.open(f); im.load()
        w, h = im.size
        check(f + " format and mode", im.format == name and im.mode == "L")
        if dims:    # PIL's (width, height) is (dim2, dim1)
            check(f + " size %dx%d" % (w, h), (h, w) == dims[i])
        else:       # drawn per file: within 6 standard deviations of DLIO's dimension
            dim, sd = int(math.sqrt(stdev_of[0])), stdev_of[1] / 2 / math.sqrt(stdev_of[0])
            check(f + " dims %dx%d" % (w, h), all(abs(x - dim) <= 6 * sd + 1 for x in (w, h)))
        check(f + " bytes %d" % os.path.getsize(f), os.path.getsize(f) == w * h)
    return files
images("png", "png", "PNG", dlio_dims(4000, 8))
images("jpeg", "jpeg", "JPEG", [(30, 40)] * 8)
images("png150k", "png", "PNG", dlio_dims(150000, 8))
images("jpeg1m", "jpeg", "JPEG", dlio_dims(1048576, 8))
sd = images("pngsd", "png", "PNG", None, (20000, 3000)) + images("jpegsd", "jpeg", "JPEG", None, (20000, 3000))
check("stdev: the files differ in size", len(set(os.path.getsize(f) for f in sd)) > 4)
for f in sorted(glob.glob("tinypng/train/*.png")):
    im = Image.open(f); im.load()
    check(f + " tiny: 7x7, its smallest encoding", im.size == (7, 7) and 49 < os.path.getsize(f) < 100)
for folder, n, size in (("ib", 4, d * d), ("mib", 2, 800)):
    files = sorted(glob.glob(folder + "/train/*_binary"))
    check(folder + " 8 data files", len(files) == 8)
    for f in files:
        off = np.fromfile(f + ".off.idx", dtype=np.uint64)
        sz = np.fromfile(f + ".sz.idx", dtype=np.uint64)
        check(f + " offsets", off.tolist() == [j * size for j in range(n)])
        check(f + " sizes", sz.tolist() == [size] * n)
        check(f + " data", os.path.getsize(f) == n * size)
print("bad:", bad)
sys.exit(1 if bad else 0)
PY
expect_eq "numpy, h5py, PIL and the Example decoder find DLIO's names, shapes, types and features" "$?" 0
cat check.out

# (b) files written as DLIO's generators write them, read by shardbench
py_lib "$PY" - >write.out 2>&1 <<'PY'
import io, math, os, struct
import numpy as np, h5py

from tfrecord_crc import crc32c, masked
def v(n):
    o = b""
    while n >= 0x80:
        o += bytes([n & 0x7F | 0x80]); n >>= 7
    return o + bytes([n])
def d(f, b):
    return bytes([f << 3 | 2]) + v(len(b)) + b

rng = np.random.default_rng(10)
dim = int(math.sqrt(4000))
def name(folder, i, fmt):
    os.makedirs(folder + "/train", exist_ok=True)
    return "%s/train/img_%d_of_8.%s" % (folder, i, fmt)
for i in range(8):
    # npz_generator.py: np.savez(x=(dim1, dim2, samples), y=[0] * samples)
    x = rng.integers(0, 255, size=(dim, dim, 2), dtype=np.uint8)
    np.savez(name("dnpz", i, "npz"), x=x, y=[0] * 2)
    # npy_generator.py: np.save of (dim1, dim2, samples)
    np.save(name("dnpy", i, "npy"), rng.integers(0, 255, size=(dim, dim, 3), dtype=np.uint8))
    # hdf5_generator.py: records_0 (samples, dim1, dim2), labels
    with h5py.File(name("dhdf5", i, "hdf5"), "w", libver="latest") as h:
        h.create_dataset("records_0", (2, dim, dim), dtype=np.uint8,
                         data=rng.integers(0, 255, size=(2, dim, dim), dtype=np.uint8))
        h.create_dataset("labels", data=[0] * 2)
    # tf_generator.py: one Example a sample, features image (bytes) and size (int64)
    with open(name("dtfrecord", i, "tfrecord"), "wb") as f:
        for _ in range(3):
            img = rng.integers(0, 255, size=(dim, dim), dtype=np.uint8).tobytes()
            ex = d(1, d(1, d(1, b"image") + d(2, d(1, d(1, img))))
                   + d(1, d(1, b"size") + d(2, d(3, d(1, v(len(img)))))))
            head = struct.pack("<Q", len(ex))
            f.write(head + struct.pack("<I", masked(crc32c(head))) + ex + struct.pack("<I", masked(crc32c(ex))))
    # jpeg_generator.py's default (non-DALI) path: the raw dim1 x dim2 bytes
    with open(name("djpeg", i, "jpeg"), "wb") as f:
        f.write(rng.integers(0, 255, size=(dim, dim), dtype=np.uint8).tobytes())
    # indexed_binary_generator.py: data, KEY.off.idx, KEY.sz.idx (uint64)
    size = dim * dim
    p = name("dib", i, "indexed_binary")
    with open(p, "wb") as f:
        f.write(rng.integers(0, 255, size=4 * size, dtype=np.uint8).tobytes())
    with open(p + ".off.idx", "wb") as f:
        f.write(struct.pack("<4Q", *[j * size for j in range(4)]))
    with open(p + ".sz.idx", "wb") as f:
        f.write(struct.pack("<4Q", *[size] * 4))
print("written")
PY
expect_eq "DLIO-style files written" "$?" 0
cat write.out

# read LABEL FORMAT SPF: an epoch over the folder (no datagen: the folder
# holds a dataset, without shardbench's marker); every sample, every byte
# of the data files (not the index files)
read_dlio () {
    local label=$1 fmt=$2 spf=$3 db=$1.db total
    sb run $common dataset.format="$fmt" dataset.num_samples_per_file="$spf" dataset.data_folder="./$label" \
        dataset.record_length_bytes=4000 --accelerators 2 --local 1 --db "$db"
    expect_eq "$label: exit status" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    total=$(find "$label/train" -name "img_*_of_8.$fmt" -printf '%s\n' | awk '{ s += $1 } END { print s }')
    expect_eq "$label: an epoch of DLIO's files: every sample and byte" \
        "$(q "$db" "SELECT samples || ':' || bytes FROM epochs WHERE run_id = (SELECT max(id) FROM runs)")" \
        "$((8 * spf)):$total"
}
read_dlio dnpz npz 2
read_dlio dnpy npy 3
read_dlio dhdf5 hdf5 2
read_dlio dtfrecord tfrecord 3
read_dlio djpeg jpeg 1
read_dlio dib indexed_binary 4

# DLIO's checks: image formats take at most 2 dims, and dims exclude a stdev
sb run $common dataset.format=png "dataset.record_dims=[2, 3, 4]" dataset.data_folder=./bad --db bad.db
expect_eq "png with 3 record_dims: config error" "$SB_RC" 2
expect_contains "png with 3 record_dims: says so" sb.err "3 dimensions, at most 2 for an image format"
sb run $common dataset.format=npz "dataset.record_dims=[2, 3]" dataset.record_length_bytes_stdev=10 \
    dataset.data_folder=./bad --db bad.db
expect_eq "record_dims with a stdev: config error" "$SB_RC" 2
expect_contains "record_dims with a stdev: says so" sb.err "not with dataset.record_length_bytes_stdev 10"
sb run $common dataset.record_element_type=complex64 dataset.data_folder=./bad --db bad.db
expect_eq "an unknown element type: config error" "$SB_RC" 2
expect_contains "an unknown element type: names the types" sb.err "'complex64' is not one of uint8"


# Parquet, both ways. Debian has no python3-pyarrow: hyparquet-writer (npm,
# pinned; hyparquet comes with it) writes files with the schema pyarrow
# gives DLIO's table (parquet_dlio_write.mjs), and parquet_check.mjs checks
# that schema (OPTIONAL columns, size > 1 as LIST groups, DLIO's legacy
# data list<uint8>), the row groups and every row of both writers' files.
. "$(dirname "$0")/../s3/s3lib.sh"
WRITER_VERSION=0.17.0
hw="${SHARDBENCH_NPM_CACHE:-${HOME:-/tmp}/.cache/shardbench/npm}/hyparquet-writer"
s3rver_install >/dev/null 2>&1 || true     # a node >= 20 first on PATH
npm_pinned "$hw" hw-install.log "hyparquet-writer@$WRITER_VERSION" || { cat hw-install.log; fail "npm install hyparquet-writer"; }
pqcols="label:float32:1,half:float16:1,small:int8:1,vec:float32:13,cat:int64:1"
# pq_epoch_bytes FOLDER: what an epoch reads of shardbench's parquet files
# of under 64 KiB: pyarrow's footer read, min(size, 64 KiB), the whole file;
# then each row group once, the groups being every byte from offset 4 to
# the footer (size - 4 - footer length - 8)
pq_epoch_bytes () {
    "$PY" -c 'import struct, sys
t = 0
for p in sys.argv[1:]:
    d = open(p, "rb").read()
    t += len(d) + len(d) - 12 - struct.unpack("<I", d[-8:-4])[0]
print(t)' "$1"/train/*.parquet
}
# (a) datagen: legacy (record 3969: 63 x 63 uint8 a row) and named columns, groups of 2 rows
sb run $common dataset.format=parquet dataset.num_samples_per_file=5 dataset.data_folder=./pq reader.verify=true \
    dataset.record_length_bytes=3969 dataset.parquet.row_group_size=2 --accelerators 2 --local 1 --db pq.db
expect_eq "pq: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
expect_eq "pq: one epoch read every sample, the footers and each row group once, verified" \
    "$(q pq.db "SELECT samples || ':' || bytes FROM epochs WHERE run_id = 2")" "40:$(pq_epoch_bytes pq)"
cat >pqcols.yaml <<'YAML'
workflow:
  generate_data: True
dataset:
  format: parquet
  parquet:
    row_group_size: 2
    columns:
      - {name: label, dtype: float32}
      - {name: half, dtype: float16}
      - {name: small, dtype: int8}
      - {name: vec, dtype: float32, size: 13}
      - {name: cat, dtype: int64}
YAML
sb run pqcols.yaml $common dataset.num_samples_per_file=5 dataset.data_folder=./pqcols reader.verify=true \
    --accelerators 2 --local 1 --db pqcols.db
expect_eq "pqcols: exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
expect_eq "pqcols: one epoch read every sample, the footers and each row group once, verified" \
    "$(q pqcols.db "SELECT samples || ':' || bytes FROM epochs WHERE run_id = 2")" "40:$(pq_epoch_bytes pqcols)"
node "$(dirname "$0")/parquet_check.mjs" "$hw" 5 2 - pq/train/*.parquet >pq.out 2>&1
expect_eq "parquet legacy: DLIO's schema (data, a list of uint8), groups of 2, every row" "$?" 0
tail -1 pq.out
node "$(dirname "$0")/parquet_check.mjs" "$hw" 5 2 "$pqcols" pqcols/train/*.parquet >pqcols.out 2>&1
expect_eq "parquet columns: DLIO's schema (vec a LIST of 13 float32), groups of 2, every row" "$?" 0
tail -1 pqcols.out
# (b) written as DLIO writes them, checked by the same checker, read by a run
node "$(dirname "$0")/parquet_dlio_write.mjs" "$hw" dpq 8 5 2 "$pqcols" >dpq.out 2>&1 \
    && PQ_RECORD=3969 node "$(dirname "$0")/parquet_dlio_write.mjs" "$hw" dpqlegacy 8 5 2 - >>dpq.out 2>&1
expect_eq "DLIO-style parquet files written (hyparquet-writer)" "$?" 0
node "$(dirname "$0")/parquet_check.mjs" "$hw" 5 2 "$pqcols" dpq/train/*.parquet >dpq-check.out 2>&1
expect_eq "DLIO-style parquet: the schema the checker wants of shardbench's files" "$?" 0
node "$(dirname "$0")/parquet_check.mjs" "$hw" 5 2 - dpqlegacy/train/*.parquet >dpql-check.out 2>&1
expect_eq "DLIO-style legacy parquet: the same schema as datagen's" "$(grep -c '^bad: .*schema' dpql-check.out)" 0
# read_parquet YAML LABEL EXTRA...: an epoch over the folder: every row
# (sample) read, each row group once, every read inside the files
read_parquet () {
    local yaml=$1 label=$2 db=$2.db total
    shift 2
    sb run $yaml $common dataset.format=parquet dataset.num_samples_per_file=5 dataset.data_folder="./$label" \
        dataset.parquet.row_group_size=2 "$@" --accelerators 2 --local 1 --db "$db"
    expect_eq "$label: exit status" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    total=$(find "$label/train" -name "img_*_of_8.parquet" -printf '%s\n' | awk '{ s += $1 } END { print s }')
    expect_eq "$label: an epoch of DLIO-style parquet files: every row" \
        "$(q "$db" "SELECT samples FROM epochs WHERE run_id = (SELECT max(id) FROM runs)")" 40
    b=$(q "$db" "SELECT bytes FROM epochs WHERE run_id = (SELECT max(id) FROM runs)")
    # each file's last 4 bytes (PAR1) are read once an epoch beside its row groups
    expect_eq "$label: bytes $b an epoch, > 0 and <= the files' $total and 8 tails of 4 bytes" \
        "$([ "$b" -gt 0 ] && [ "$b" -le $((total + 8 * 4)) ] && echo ok)" ok
}
read_parquet pqcols.yaml dpq
read_parquet "" dpqlegacy dataset.record_length_bytes=3969

finish
