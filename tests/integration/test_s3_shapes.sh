#!/usr/bin/env bash
# The S3 requests of each storage_library as DLIO_local_changes' libraries
# issue them (lib/storage/s3/s3_shape.h, docs/DLIO.md "Reads in flight"),
# seen by a relay in front of s3rver on loopback (s3_relay.py: each
# request's kind, key, offset, length and the most requests of its key in
# flight at once; data requests held until the client has sent all it
# keeps in flight, so that peak is the client's own):
# - checkpoints (llama3_8b scaled by 2^-10, 2 ranks): every object a
#   multipart upload, parts of 32 MiB (minio, s3dlio) or 8 MiB
#   (s3torchconnector), max(2, ceil(16 / 2)) = 8 parts (minio, s3dlio) or
#   10 (s3torchconnector) in flight; read back as 8 blocks of
#   ceil(size / 8) bytes at once, each one range GET (at most 128 MiB, or
#   8 MiB parts for s3torchconnector);
# - training reads of 40 MiB objects: one GET each (minio), range GETs of
#   8 MiB, the first alone, then the other 4 at once (s3torchconnector), a
#   HEAD then range GETs of 4 MiB, max(4, cores) at once, and no HEAD in
#   the second epoch (s3dlio), each read's bytes counted once and checked
#   at their offsets; with records under 16 MiB s3dlio never HEADs (DLIO's
#   skip_head latch).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"
RELAY="$SB_INTEGRATION_DIR/s3_relay.py"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
RELAY_PID=""
trap '[ -n "$RELAY_PID" ] && kill "$RELAY_PID" 2>/dev/null; s3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" sbshape || { echo "FAIL - S3 server did not start"; exit 1; }

# relay_start LOG: a relay to the server, its endpoint in $ep
relay_start () {
    [ -n "$RELAY_PID" ] && kill "$RELAY_PID" 2>/dev/null && wait "$RELAY_PID" 2>/dev/null
    rm -f relay.port
    python3 "$RELAY" "$S3RVER_PORT" "$1" 0.3 >relay.port 2>relay.err &
    RELAY_PID=$!
    local i
    for i in $(seq 1 100); do
        [ -s relay.port ] && break
        sleep 0.1
    done
    ep="http://127.0.0.1:$(head -1 relay.port)"
}

MIB=$((1 << 20))
# parts SIZE PART: the part sizes of a multipart upload of SIZE bytes, one a line
parts () { awk -v s="$1" -v p="$2" 'BEGIN { for (o = 0; o < s; o += p) print (s - o < p ? s - o : p) }'; }
# blocks SIZE STREAMS CHUNK: the range GETs (offset length) of DLIO's checkpoint load
blocks () {
    awk -v s="$1" -v n="$2" -v c="$3" 'BEGIN { b = int((s + n - 1) / n)
        for (st = 0; st < s; st += b) { e = st + b < s ? st + b : s
            for (o = st; o < e; o += c) print o, (e - o < c ? e - o : c) } }' | sort -n
}
# of LOG OP KEYPART: the offset and length of each OP request of the key, sorted
of () { awk -v op="$2" -v k="$3" '$1 == op && index($2, k) { print $3, $4 }' "$1" | sort -n; }
# peak LOG OP KEYPART: the most of the key's data requests in flight at once while OP requests were
peak () { awk -v op="$2" -v k="$3" '$1 == op && index($2, k) && $6 > m { m = $6 } END { print m + 0 }' "$1"; }
count () { awk -v op="$2" -v k="$3" '$1 == op && index($2, k) { n++ } END { print n + 0 }' "$1"; }

M_KEY=zero_pp_rank_1_mp_rank_0_model_states.pt
O_KEY=zero_pp_rank_1_mp_rank_0_optim_states.pt
# ckpt_case LABEL LIBRARY PART UPLOADS CHUNK READ_WINDOW
ckpt_case () {
    local label=$1 lib=$2 part=$3 uploads=$4 chunk=$5 window=$6
    relay_start "$label.log"
    sb checkpoint llama3_8b storage.storage_type=s3 storage.storage_library="$lib" storage.storage_root=sbshape \
        storage.storage_options.endpoint_url="$ep" checkpoint.scale=0.0009765625 checkpoint.time_between_checkpoints=0 \
        checkpoint.checkpoint_folder="ckpt/$label" checkpoint.num_checkpoints_write=1 checkpoint.num_checkpoints_read=1 \
        --accelerators 2 --local 1 --db "$label.db"
    expect_eq "$label: checkpoint" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    local key size want
    for key in $M_KEY $O_KEY; do
        size=$(awk -v k="$key" '($1 == "PART" || $1 == "PUT") && index($2, k) { s += $4 } END { print s + 0 }' "$label.log")
        echo "  $label: $key: $size bytes"
        want=$(parts "$size" "$part" | tr '\n' ' ')
        expect_eq "$label $key: multipart upload, parts of $part bytes" \
            "$(count "$label.log" PUT "$key") $(count "$label.log" CREATE "$key") $(count "$label.log" COMPLETE "$key") $(awk -v k="$key" '$1 == "PART" && index($2, k) { print $4 }' "$label.log" | sort -rn | tr '\n' ' ')" \
            "0 1 1 $want"
        local nparts
        nparts=$(parts "$size" "$part" | wc -l)
        expect_eq "$label $key: parts in flight" "$(peak "$label.log" PART "$key")" \
            "$((nparts < uploads ? nparts : uploads))"
        expect_eq "$label $key: read as DLIO's 8 streams" "$(of "$label.log" RANGE "$key" | tr '\n' ' ')" \
            "$(blocks "$size" 8 "$chunk" | tr '\n' ' ')"
        local nreads
        nreads=$(blocks "$size" 8 "$chunk" | wc -l)
        expect_eq "$label $key: range GETs in flight" "$(peak "$label.log" RANGE "$key")" \
            "$((nreads < 8 * window ? nreads : 8 * window))"
    done
    local total
    total=$(q "$label.db" "SELECT group_concat(op || ':' || files || ':' || bytes, ' ') FROM (SELECT * FROM checkpoints ORDER BY seq)")
    echo "  $label: $total"
}
ckpt_case minio minio $((32 * MIB)) 8 $((128 * MIB)) 1
ckpt_case s3dlio s3dlio $((32 * MIB)) 8 $((128 * MIB)) 1
ckpt_case s3torchconnector s3torchconnector $((8 * MIB)) 10 $((8 * MIB)) 10
rm -rf "$SCRATCH/s3data/sbshape/ckpt"

# training reads: 2 objects of 40 MiB less 4 KiB of npz framing
cat >train.yaml <<YAML
model:
  name: s3shape
framework: pytorch
dataset:
  data_folder: ds
  format: npz
  num_files_train: 2
  num_samples_per_file: 1
  record_length_bytes: $((40 * MIB - 4096))
  record_length_bytes_stdev: 0
reader:
  data_loader: pytorch
  batch_size: 1
  read_threads: 1
train:
  epochs: 1
  computation_time: 0
storage:
  storage_type: s3
  storage_root: sbshape
YAML
relay_start datagen.log
sb datagen train.yaml storage.storage_library=minio storage.storage_options.endpoint_url="$ep" --local 1 --db train.db
expect_eq "datagen" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
# train_case LABEL LIBRARY: the GETs of one epoch, every byte checked against the generator
# (reader.verify: a range GET's bytes at their offset in the object)
train_case () {
    local label=$1 lib=$2
    shift 2
    relay_start "$label.log"
    sb run train.yaml storage.storage_library="$lib" storage.storage_options.endpoint_url="$ep" reader.verify=true "$@" \
        --local 1 --db train.db
    set -- "$label" "$lib"
    expect_eq "$1: run" "$SB_RC" 0
    [ "$SB_RC" = 0 ] || tail -5 sb.err
    expect_eq "$1: bytes read, each once" "$(q train.db "SELECT bytes FROM epochs ORDER BY rowid DESC LIMIT 1")" \
        "$(awk '$1 == "PUT" && $2 ~ /\.npz$/ { s += $4 } END { print s }' datagen.log)"
}
train_case train-minio minio
for obj in $(awk '$1 == "PUT" && $2 ~ /\.npz$/ { print $2 }' datagen.log); do
    size=$(awk -v k="$obj" '$1 == "PUT" && $2 == k { print $4 }' datagen.log)
    expect_eq "minio: $obj read with one GET" \
        "$(count train-minio.log GET "$obj") $(count train-minio.log RANGE "$obj") $(of train-minio.log GET "$obj")$(of train-minio.log RANGE "$obj")" \
        "$(count train-minio.log GET "$obj") $(count train-minio.log RANGE "$obj") 0 $size"
    expect_eq "minio: $obj: one request" "$(( $(count train-minio.log GET "$obj") + $(count train-minio.log RANGE "$obj") ))" 1
done
train_case train-s3torchconnector s3torchconnector
for obj in $(awk '$1 == "PUT" && $2 ~ /\.npz$/ { print $2 }' datagen.log); do
    size=$(awk -v k="$obj" '$1 == "PUT" && $2 == k { print $4 }' datagen.log)
    expect_eq "s3torchconnector: $obj read as 8 MiB range GETs" "$(of train-s3torchconnector.log RANGE "$obj" | tr '\n' ' ')" \
        "$(awk -v s="$size" -v c=$((8 * MIB)) 'BEGIN { for (o = 0; o < s; o += c) print o, (s - o < c ? s - o : c) }' | tr '\n' ' ')"
    n=$(( (size + 8 * MIB - 1) / (8 * MIB) ))
    expect_eq "s3torchconnector: $obj: the first of $n alone, then the others at once" \
        "$(awk -v k="$obj" '$1 == "RANGE" && $2 == k { print $6 }' train-s3torchconnector.log | tr '\n' ' ')" \
        "1 $(for ((i = 1; i < n; i++)); do printf '%d ' $((n - 1 < 10 ? n - 1 : 10)); done)"
done

# s3dlio, records of 16 MiB or more (no skip_head): a HEAD, then, the object
# being 32 MiB or more, range GETs of 4 MiB (under 256 MiB), max(4, cores)
# at once, cores this host's; the second epoch knows the size: no HEAD
cores=$(getconf _NPROCESSORS_ONLN)
train_case train-s3dlio s3dlio train.epochs=2
for obj in $(awk '$1 == "PUT" && $2 ~ /\.npz$/ { print $2 }' datagen.log); do
    size=$(awk -v k="$obj" '$1 == "PUT" && $2 == k { print $4 }' datagen.log)
    one=$(awk -v s="$size" -v c=$((4 * MIB)) 'BEGIN { for (o = 0; o < s; o += c) print o, (s - o < c ? s - o : c) }')
    expect_eq "s3dlio: $obj: one HEAD in 2 epochs, 4 MiB range GETs in each" \
        "$(count train-s3dlio.log HEAD "$obj") $(of train-s3dlio.log RANGE "$obj" | tr '\n' ' ')" \
        "1 $(printf '%s\n%s\n' "$one" "$one" | sort -n | tr '\n' ' ')"
    n=$(printf '%s\n' "$one" | wc -l)
    w=$((cores > 4 ? cores : 4))
    expect_eq "s3dlio: $obj: range GETs in flight, max(4, $cores cores)" "$(peak train-s3dlio.log RANGE "$obj")" \
        "$((n < w ? n : w))"
done

# s3dlio, records under 16 MiB: DLIO sets s3dlio's skip_head latch, so a
# GET is plain (no HEAD; objects of one 12 MiB record, under s3dlio's
# 32 MiB split threshold: one GET per object and epoch)
sed -e 's/data_folder: ds/data_folder: ds2/' -e "s/record_length_bytes: .*/record_length_bytes: $((12 * MIB))/" \
    train.yaml >train2.yaml
relay_start datagen2.log
sb datagen train2.yaml storage.storage_library=s3dlio storage.storage_options.endpoint_url="$ep" --local 1 --db train2.db
expect_eq "datagen, 12 MiB records" "$SB_RC" 0
relay_start train-s3dlio-latch.log
sb run train2.yaml storage.storage_library=s3dlio storage.storage_options.endpoint_url="$ep" reader.verify=true train.epochs=2 \
    --local 1 --db train2.db
expect_eq "s3dlio latch: run" "$SB_RC" 0
[ "$SB_RC" = 0 ] || tail -5 sb.err
for obj in $(awk '$1 == "PUT" && $2 ~ /\.npz$/ { print $2 }' datagen2.log); do
    size=$(awk -v k="$obj" '$1 == "PUT" && $2 == k { print $4 }' datagen2.log)
    expect_eq "s3dlio latch: $obj: no HEAD, one GET an epoch" \
        "$(count train-s3dlio-latch.log HEAD "$obj") $(of train-s3dlio-latch.log RANGE "$obj" | tr '\n' ' ')" \
        "0 0 $size 0 $size "
done

finish
