#!/usr/bin/env bash
# Optional formats (meson_options.txt: hdf5, images, parquet). A build
# without one refuses a workload naming it, with a message naming the
# workload file, line and key and the meson option that builds it, and
# writes nothing; a build with it accepts it. Both binaries say the
# version meson gave (SB_VERSION) and what they were built with.
. "$(dirname "$0")/lib.sh"
: "${SB_VERSION:?meson.project_version()}"

"$SHARDBENCH" --version >version.out 2>&1
expect_eq "shardbench --version exits 0" "$?" 0
"$SHARDBENCH_WORKER" --version >worker-version.out 2>&1
expect_eq "shardbench-worker --version exits 0" "$?" 0
expect_eq "shardbench --version: meson's version" "$(head -1 version.out)" "shardbench $SB_VERSION"
expect_eq "shardbench-worker --version: meson's version" "$(head -1 worker-version.out)" "shardbench-worker $SB_VERSION"
built=$(sed -n 's/^built with: //p' version.out)
expect_eq "both binaries built with the same parts" "$(sed -n 's/^built with: //p' worker-version.out)" "$built"

# format option
for pair in hdf5:hdf5 h5:hdf5 png:images jpeg:images jpg:images parquet:parquet; do
    format=${pair%%:*}
    option=${pair##*:}
    rm -rf "./d-$format"
    cat >"lo-$format.yaml" <<YAML
# a workload asking for $format
dataset:
  format: $format
  num_files_train: 2
  num_samples_per_file: 1
  record_length_bytes: 4096
  record_length_bytes_stdev: 0
YAML
    sb datagen "lo-$format.yaml" "dataset.data_folder=./d-$format" --accelerators 1 --db lo.db
    case " $built " in
    *" $option "*)
        expect_eq "built with $option: datagen of $format exits 0" "$SB_RC" 0
        if grep -q "built without" sb.err; then fail "built with $option: $format refused"; sed 's/^/    /' sb.err; else
            pass "built with $option: $format accepted"; fi ;;
    *)
        expect_eq "built without $option: $format exits 2" "$SB_RC" 2
        expect_contains "built without $option: $format refused naming file, line, key and option" sb.err \
            "lo-$format.yaml:3: key 'dataset.format': dataset.format '$format': shardbench was built without $option (meson -D$option=enabled)"
        expect_eq "built without $option: nothing written for $format" \
            "$(find "./d-$format" -type f 2>/dev/null | wc -l)" 0 ;;
    esac
done

finish
