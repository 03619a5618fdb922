#!/usr/bin/env bash
# A dataset file that is not what its generator wrote is an error, never a
# run over fewer bytes: a listed size other than the generator's (the
# folder's .shardbench-dataset marker says which generator) fails the run
# before any worker starts, naming the file and both sizes, with --relist
# and reader.verify too; a file cut after it was listed (a reused catalog)
# fails the read that comes short, naming the file, the offset and both
# sizes; a parquet file cut in half is refused naming it. A folder without a
# marker (another tool's dataset) is read as listed.
. "$(dirname "$0")/lib.sh"

run="workflow.generate_data=False dataset.num_files_train=8 dataset.record_length_bytes=4096
     dataset.record_length_bytes_stdev=1024 reader.batch_size=1 train.epochs=1 --accelerators 1 --local 1
     --progress off"
size () { stat -c %s "$1"; }

# --- 1. npz: a file truncated before the listing
sb datagen dataset.data_folder=./n dataset.format=npz $run --db n.db
expect_eq "npz datagen: exit status" "$SB_RC" 0
cut=n/train/img_3_of_8.npz
want=$(size "$cut")
truncate -s 1000 "$cut"
sb run dataset.data_folder=./n dataset.format=npz $run --db n.db
expect_eq "truncated npz file: exit status" "$SB_RC" 2
expect_contains "truncated npz file: names the file and both sizes" sb.err \
    "error: the dataset in $SCRATCH/n does not hold what its generator wrote: $SCRATCH/$cut is 1000 bytes, its generator wrote $want bytes (1 of 8 files differ)"
expect_contains "truncated npz file: says what to do" sb.err \
    "regenerate it with \`shardbench datagen --clean\`"
if grep -q "joined as worker" sb.err; then fail "truncated npz file: a worker started"; else pass "truncated npz file: refused before any worker"; fi

# again: the catalog is reused (the folders did not change), and says how to list it again
sb run dataset.data_folder=./n dataset.format=npz $run --db n.db
expect_eq "truncated npz file, catalog reused: exit status" "$SB_RC" 2
expect_contains "truncated npz file, catalog reused: says so" sb.err \
    "(1 of 8 files differ): a file truncated, grown or replaced since its datagen (sizes as listed in catalog 1, reused: --relist lists it again)"

sb run dataset.data_folder=./n dataset.format=npz $run --db n.db --relist reader.verify=true
expect_eq "truncated npz file, --relist and reader.verify: exit status" "$SB_RC" 2
expect_contains "truncated npz file, --relist and reader.verify: names the file and both sizes" sb.err \
    "$SCRATCH/$cut is 1000 bytes, its generator wrote $want bytes (1 of 8 files differ)"

# a longer file is refused the same way; two files: counted, the first named
other=n/train/img_6_of_8.npz
other_want=$(size "$other")
head -c 10 /dev/zero >>"$other"
sb run dataset.data_folder=./n dataset.format=npz $run --db n.db --relist
expect_eq "truncated and grown npz files: exit status" "$SB_RC" 2
expect_contains "truncated and grown npz files: the first named, both counted" sb.err \
    "$SCRATCH/$cut is 1000 bytes, its generator wrote $want bytes (2 of 8 files differ)"

# the same files without the marker: another tool's dataset, read as listed
mv n/.shardbench-dataset n/marker.saved
sb run dataset.data_folder=./n dataset.format=npz $run --db n.db --relist
expect_eq "no marker: exit status" "$SB_RC" 0
expect_contains "no marker: warned" sb.err "has no .shardbench-dataset marker saying what generated it"
mv n/marker.saved n/.shardbench-dataset

# --- 1b. another element type: the marker records it (the sizes follow it)
sb datagen dataset.data_folder=./f dataset.format=npz dataset.record_element_type=float32 $run --db f.db
expect_eq "float32 datagen: exit status" "$SB_RC" 0
expect_eq "the marker records the element type and dims" \
    "$(grep -E '^dataset\.record_(element_type|dims)=' f/.shardbench-dataset | tr '\n' ' ')" \
    "dataset.record_element_type=float32 dataset.record_dims= "
sb run dataset.data_folder=./f dataset.format=npz $run --db f.db
expect_eq "uint8 run over float32 files: exit status" "$SB_RC" 2
expect_contains "uint8 run over float32 files: names the key" sb.err \
    "was generated with other parameters than this workload's (dataset.record_element_type: generated 'float32', workload 'uint8')"
# a marker of an older shardbench does not record it: every file differs, said as such
grep -vE '^dataset\.record_(element_type|dims)=' f/.shardbench-dataset >f/marker.old && mv f/marker.old f/.shardbench-dataset
sb run dataset.data_folder=./f dataset.format=npz $run --db f.db
expect_eq "uint8 run over float32 files, older marker: exit status" "$SB_RC" 2
expect_contains "uint8 run over float32 files, older marker: every file differs" sb.err \
    "error: the dataset in $SCRATCH/f does not hold what this workload's generator writes: none of its 8 files has that size ($SCRATCH/f/train/img_0_of_8.npz is $(size f/train/img_0_of_8.npz) bytes, the generator writes "
expect_contains "uint8 run over float32 files, older marker: names the keys it may be" sb.err \
    "it was generated with parameters its marker does not record (an older shardbench's marker: dataset.record_element_type, dataset.record_dims)"

# --- 2. npz: a file truncated after the listing (the catalog is reused)
sb datagen dataset.data_folder=./r dataset.format=npz $run --db r.db
expect_eq "second npz datagen: exit status" "$SB_RC" 0
sb run dataset.data_folder=./r dataset.format=npz $run --db r.db
expect_eq "whole npz dataset: exit status" "$SB_RC" 0
cut=r/train/img_5_of_8.npz
want=$(size "$cut")
truncate -s 1000 "$cut"
sb run dataset.data_folder=./r dataset.format=npz $run --db r.db
expect_eq "npz file cut after the listing: exit status" "$SB_RC" 1
expect_contains "npz file cut after the listing: the catalog was reused" sb.err "catalog 1 reused"
expect_contains "npz file cut after the listing: the short read names file, offset and sizes" sb.err \
    "error: rank 0 on $(hostname): short read $SCRATCH/$cut: file ends at offset 1000, expected $want bytes from offset 0"

# --- 3. parquet: a file cut in half (no trailing PAR1)
pq="dataset.format=parquet dataset.num_samples_per_file=4"
sb datagen dataset.data_folder=./p $pq $run --db p.db
expect_eq "parquet datagen: exit status" "$SB_RC" 0
cut=p/train/img_2_of_8.parquet
want=$(size "$cut")
half=$((want / 2))
truncate -s "$half" "$cut"
expect_eq "the whole parquet file ends with PAR1" "$(tail -c 4 p/train/img_1_of_8.parquet)" PAR1
if [ "$(tail -c 4 "$cut")" = PAR1 ]; then fail "the cut parquet file ends with PAR1"; else pass "the cut parquet file does not end with PAR1"; fi
sb run dataset.data_folder=./p $pq $run --db p.db
expect_eq "parquet file cut in half: exit status" "$SB_RC" 2
expect_contains "parquet file cut in half: names the file and both sizes" sb.err \
    "error: the dataset in $SCRATCH/p does not hold what its generator wrote: $SCRATCH/$cut is $half bytes, its generator wrote $want bytes (1 of 8 files differ)"

# the same cut file without the marker (another tool's dataset): the reader
# refuses it, as pyarrow would, naming it
mv p/.shardbench-dataset p/marker.saved
sb run dataset.data_folder=./p $pq $run --db p.db
expect_eq "parquet file cut in half, no marker: exit status" "$SB_RC" 1
expect_contains "parquet file cut in half, no marker: names the file" sb.err \
    "error: rank 0 on $(hostname): parquet $SCRATCH/$cut does not end with PAR1 (its last 4 bytes, at offset $((half - 4)) of its $half): cut short, or not a parquet file"
# a whole parquet file of another writer's layout (here: another row group
# size than the workload's) ends with PAR1: read
mv p/marker.saved p/.shardbench-dataset
sb datagen dataset.data_folder=./q $pq dataset.parquet.row_group_size=3 $run --db q.db
expect_eq "parquet datagen, 3 rows a group: exit status" "$SB_RC" 0
rm q/.shardbench-dataset
mkdir tr
sb run dataset.data_folder=./q $pq $run --db q.db shardbench.trace=./tr
expect_eq "parquet of another layout, no marker: exit status" "$SB_RC" 0
# the trace has the row groups' reads and the 8 tail reads (4 bytes each,
# lines without a position: they serve no sample)
expect_eq "... its bytes: the row groups' and 8 tails of 4 bytes" \
    "$(q q.db "SELECT bytes FROM epochs WHERE run_id = 2 AND epoch = 1")" \
    "$(awk -F, 'FNR > 1 { b += $11 } END { print b }' tr/*.csv)"
expect_eq "... the tails: 8 lines without a position, 4 bytes each" \
    "$(awk -F, 'FNR > 1 && $4 == "" { n++; b += $11 } END { print n ":" b }' tr/*.csv)" "8:32"
# a file shorter than any parquet file
truncate -s 7 q/train/img_4_of_8.parquet
sb run dataset.data_folder=./q $pq $run --db q.db --relist
expect_eq "7-byte parquet file, no marker: exit status" "$SB_RC" 1
expect_contains "7-byte parquet file: names the file" sb.err \
    "parquet $SCRATCH/q/train/img_4_of_8.parquet is 7 bytes: not a parquet file (the smallest is 12 bytes: PAR1, its footer's length, PAR1)"

finish
