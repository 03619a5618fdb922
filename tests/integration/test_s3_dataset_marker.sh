#!/usr/bin/env bash
# An S3 dataset records what generated it, as a local data folder does: the
# object PREFIX.shardbench-dataset beside train/ (state=generating before the
# first PUT, state=complete after). A datagen into a prefix holding another
# generation is refused naming the key, unless --clean; a run refuses a
# dataset generated with other parameters, or one whose datagen did not
# finish. Against s3rver on loopback.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" sbmark || { echo "FAIL - S3 server did not start"; exit 1; }
ep=$S3RVER_ENDPOINT

cat >m.yaml <<YAML
model:
  name: s3-marker
dataset:
  data_folder: ds
  num_files_train: 8
  num_samples_per_file: 1
  record_length_bytes: 4096
  record_length_bytes_stdev: 0
reader:
  batch_size: 1
  read_threads: 1
train:
  epochs: 1
  computation_time: 0
storage:
  storage_type: s3
  storage_root: sbmark
  storage_options:
    endpoint_url: $ep
YAML
objdir="$SCRATCH/s3data/sbmark/ds"
marker_obj="$objdir/.shardbench-dataset._S3rver_object"
# the dataset objects as the server stores them: name and content digest
objects () { (cd "$objdir/train" && find . -type f -name '*_of_*._S3rver_object' | sort | xargs -r md5sum); }

# --- (a) datagen then run: the marker is there, complete, with the workload's keys
sb datagen m.yaml --local 1 --db m.db
expect_eq "datagen exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_eq "marker object: state=complete" "$(grep '^state=' "$marker_obj" 2>/dev/null)" "state=complete"
expect_eq "marker object: record length" "$(grep '^dataset.record_length_bytes=' "$marker_obj" 2>/dev/null)" \
    "dataset.record_length_bytes=4096"
expect_eq "marker object: bytes written" "$(grep '^bytes=' "$marker_obj" 2>/dev/null)" \
    "bytes=$(q m.db "SELECT bytes FROM epochs WHERE run_id = 1")"
expect_eq "8 objects generated" "$(objects | wc -l | tr -d ' ')" 8
sb run m.yaml --local 1 --db m.db
expect_eq "run of the marked dataset" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
if grep -q "has no .shardbench-dataset marker" sb.err; then fail "run warned of a missing marker"; else pass "run found the marker"; fi
objects >before.txt

# --- (b) datagen with another record size: refused naming the key, nothing written
sb datagen m.yaml dataset.record_length_bytes=8192 --local 1 --db m.db
expect_eq "datagen of another generation exits 2" "$SB_RC" 2
expect_contains "refusal names the marker key" sb.err "s3://sbmark/ds/.shardbench-dataset"
expect_contains "refusal names the differing key" sb.err \
    "dataset.record_length_bytes: generated 4096, workload 8192"
expect_contains "refusal says how to clean" sb.err "pass --clean"
objects >after.txt
expect_eq "no object changed by the refused datagen" "$(cmp -s before.txt after.txt && echo same)" same
expect_eq "marker unchanged" "$(grep '^dataset.record_length_bytes=' "$marker_obj")" "dataset.record_length_bytes=4096"
# another seed is another content: refused too (as for a local folder)
sb datagen m.yaml --seed 7 --local 1 --db m.db
expect_eq "datagen with another seed exits 2" "$SB_RC" 2
expect_contains "refusal names the seed" sb.err "seed: generated 123, workload 7"
# the same generation again is not refused (its objects are rewritten)
sb datagen m.yaml --local 1 --db m.db
expect_eq "datagen of the same generation" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
objects >before.txt
# --clean deletes the old generation first
sb datagen m.yaml dataset.record_length_bytes=8192 --clean --local 1 --db m.db
expect_eq "datagen --clean exit status" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err
expect_contains "--clean says what it deleted" sb.err "--clean: deleted 8 dataset objects"
expect_eq "marker of the new generation" "$(grep -E '^(state|dataset.record_length_bytes)=' "$marker_obj" | tr '\n' ' ')" \
    "state=complete dataset.record_length_bytes=8192 "
objects >after.txt
expect_eq "8 objects of the new generation" "$(wc -l <after.txt | tr -d ' ')" 8
expect_eq "every object rewritten" "$(comm -12 <(cut -d' ' -f1 before.txt | sort) <(cut -d' ' -f1 after.txt | sort) | wc -l | tr -d ' ')" 0
sizes=$(find "$objdir/train" -type f -name '*_of_*._S3rver_object' -size +6k | wc -l | tr -d ' ')
expect_eq "objects are 8192-byte records" "$sizes" 8

# --- (c) run with a mismatched workload: exit 2 naming the key
sb run m.yaml --local 1 --db m.db
expect_eq "run with another record size exits 2" "$SB_RC" 2
expect_contains "run refusal names the dataset" sb.err "the dataset in s3://sbmark/ds was generated with other parameters"
expect_contains "run refusal names the key" sb.err "dataset.record_length_bytes: generated 8192, workload 4096"
sb run m.yaml dataset.record_length_bytes=8192 dataset.num_files_train=4 --local 1 --db m.db
expect_eq "run of fewer files than generated" "$SB_RC" 0
[ "$SB_RC" = 0 ] || cat sb.err

# --- (c2) an object that is not the size its generator wrote: the run is
# refused before any worker starts, naming the object and both sizes
s3put () { curl -sS -f --aws-sigv4 "aws:amz:$S3RVER_REGION:s3" --user "$S3RVER_ACCESS_KEY:$S3RVER_SECRET_KEY" \
    -H "x-amz-content-sha256: $(printf '%s' "$2" | sha256sum | cut -d' ' -f1)" -X PUT --data-binary "$2" "$ep/sbmark/$1"; }
want=$(stat -c %s "$objdir/train/img_3_of_8.npz._S3rver_object")
s3put ds/train/img_3_of_8.npz "short"
expect_eq "object replaced by 5 bytes" "$(stat -c %s "$objdir/train/img_3_of_8.npz._S3rver_object")" 5
sb run m.yaml dataset.record_length_bytes=8192 --relist --local 1 --db m.db
expect_eq "run of a dataset with a short object exits 2" "$SB_RC" 2
expect_contains "names the object and both sizes" sb.err \
    "error: the dataset in s3://sbmark/ds does not hold what its generator wrote: s3://sbmark/ds/train/img_3_of_8.npz is 5 bytes, its generator wrote $want bytes (1 of 8 files differ)"
sb datagen m.yaml dataset.record_length_bytes=8192 --local 1 --db m.db
expect_eq "datagen of the same generation rewrites it" "$SB_RC" 0
expect_eq "object rewritten" "$(stat -c %s "$objdir/train/img_3_of_8.npz._S3rver_object")" "$want"
# cut after the listing (the catalog is reused): the GET that comes short fails the run
s3put ds/train/img_3_of_8.npz "short"
sb run m.yaml dataset.record_length_bytes=8192 --local 1 --db m.db
expect_eq "run of an object cut after the listing exits 1" "$SB_RC" 1
expect_contains "the catalog was reused" sb.err "reused: 8 objects, 0.1 MiB under s3://sbmark/ds/train"
expect_contains "the short GET names the object, the range asked and what came" sb.err \
    "error: rank 0 on $(hostname): GET sbmark/ds/train/img_3_of_8.npz on $ep failed (attempt 1): the server answered Content-Range 'bytes 0-4/5' to Range bytes=0-$((want - 1)); not retried [http 206, curl 0, errno 0]"
sb datagen m.yaml dataset.record_length_bytes=8192 --local 1 --db m.db
expect_eq "datagen of the same generation rewrites it again" "$SB_RC" 0

# --- (d) an interrupted datagen (marker state=generating): run refuses
sed -i 's/^state=complete$/state=generating/' "$marker_obj"
expect_eq "marker edited to generating" "$(grep '^state=' "$marker_obj")" "state=generating"
sb run m.yaml dataset.record_length_bytes=8192 --local 1 --db m.db
expect_eq "run of an unfinished datagen exits 2" "$SB_RC" 2
expect_contains "names the unfinished marker" sb.err \
    "the dataset in s3://sbmark/ds is incomplete: its datagen did not finish (s3://sbmark/ds/.shardbench-dataset says state=generating)"

# a marker object over 64 KiB is not read whole: refused, naming it
{ cat "$marker_obj"; head -c 70000 /dev/zero | tr '\0' '#'; echo; } >big.txt
cp big.txt "$marker_obj"
sb run m.yaml dataset.record_length_bytes=8192 --local 1 --db m.db
expect_eq "run with an oversized marker exits 2" "$SB_RC" 2
expect_contains "names the marker, its size and the endpoint" sb.err \
    "cannot read the dataset marker s3://sbmark/ds/.shardbench-dataset: GET sbmark/ds/.shardbench-dataset on $ep failed (attempt 1):"
expect_contains "says it is too large" sb.err "(the object is larger than 65536 bytes)"

# --- (e) no marker (a dataset made by another tool): a warning, read anyway
rm -f "$objdir"/.shardbench-dataset._S3rver_*
sb run m.yaml dataset.record_length_bytes=8192 --local 1 --db m.db
expect_eq "run without a marker" "$SB_RC" 0
expect_contains "run warns of the missing marker" sb.err \
    "s3://sbmark/ds/train has no .shardbench-dataset marker"
# and a datagen of the same workload there is refused: nothing says what made it
sb datagen m.yaml dataset.record_length_bytes=8192 --local 1 --db m.db
expect_eq "datagen over unmarked objects exits 2" "$SB_RC" 2
expect_contains "names the missing marker" sb.err "no marker says what generated them"

# --- (f) a key under train/ that is not a dataset object: refused even with
# --clean, and never deleted; folder placeholders (train/) hold no data (s3put: above)
s3put ds/train/ "" && s3put ds/train/notes.txt "notes"
expect_eq "foreign key stored" "$(cat "$objdir/train/notes.txt._S3rver_object" 2>/dev/null)" notes
sb datagen m.yaml dataset.record_length_bytes=8192 --clean --local 1 --db m.db
expect_eq "datagen next to a foreign key exits 2" "$SB_RC" 2
expect_contains "names the foreign key" sb.err \
    "s3://sbmark/ds/train/notes.txt is not a dataset object (train/PREFIX_I_of_N.EXT): datagen writes only under a prefix holding nothing else under train/ (1 such keys)"
expect_eq "the foreign key is kept" "$(cat "$objdir/train/notes.txt._S3rver_object" 2>/dev/null)" notes
expect_eq "dataset objects kept" "$(objects | wc -l | tr -d ' ')" 8

finish
