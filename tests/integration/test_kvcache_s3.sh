#!/usr/bin/env bash
# `shardbench kvcache` on an object store, which the reference cannot do
# (it writes files only): kvcache.cache_dir=s3://kv/cache on the loopback S3
# test server (tests/s3/s3lib.sh). 2 ranks on 1 worker: every entry is an
# object cache/rank_<r>/<key>.npy holding numpy's .npy of the reference's
# shape (checked with numpy on the objects' bytes), nothing outside the
# prefix, every rank's figures recorded, the storage check 'unverifiable'
# (no local device behind an object store), the endpoint's requests
# counted; a bucket that does not exist fails the run naming it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../s3/s3lib.sh"

s3rver_install || { echo "FAIL - cannot install the S3 test server"; exit 1; }
s3rver_env
unset AWS_ENDPOINT_URL
trap 's3rver_stop; rm -rf "$SCRATCH"' EXIT
s3rver_start "$SCRATCH/s3data" kv || { echo "FAIL - S3 server did not start"; exit 1; }
ep=${S3RVER_ENDPOINTS%% *}

small="kvcache.model=tiny-1b kvcache.users=2 kvcache.duration_s=3 kvcache.pause_s=0 kvcache.cpu_mem_gb=0
       kvcache.generation_mode=none storage.storage_type=s3 storage.storage_options.endpoint_url=$ep"

sb kvcache $small kvcache.cache_dir=s3://kv/cache --accelerators 2 --local 1 --db t.db --progress off
expect_eq "s3: exit status" "$SB_RC" 0
[ "$SB_RC" -eq 0 ] || tail -20 sb.err
run=$(q t.db "SELECT max(id) FROM runs")
expect_eq "s3: run" "$(q t.db "SELECT kind || ':' || status FROM runs WHERE id = $run")" "kvcache:succeeded"
expect_eq "s3: every rank recorded" "$(q t.db "SELECT group_concat(rank, ' ') FROM (SELECT rank FROM kv_ranks WHERE run_id = $run ORDER BY rank)")" "0 1"
expect_eq "s3: storage check" "$(q t.db "SELECT storage_check FROM kv_runs WHERE run_id = $run")" "unverifiable"
expect_eq "s3: bytes written by the ranks" "$(q t.db "SELECT sum(storage_write_bytes) > 0 FROM kv_ranks WHERE run_id = $run")" 1
# s3rver keeps an object as KEY._S3rver_object: every one is under cache/rank_<r>/
objects=$(cd s3data/kv && find . -type f -name '*._S3rver_object' -printf '%P\n' | sort)
expect_eq "s3: objects only under the prefix, in the ranks' folders" \
    "$(printf '%s\n' "$objects" | grep -cvE '^cache/rank_[01]/[^/]+\.npy\._S3rver_object$')" 0
# its metadata (KEY._S3rver_metadata.json) is written once the upload is whole: a PUT the window's
# end cut short (its I/O given up after the 2 s grace) leaves its first bytes in KEY._S3rver_object
# and no metadata, where an S3 service keeps nothing. Every object s3rver completed is an entry.
# The rank DELETEs a key whose PUT the window's end cut short; when the body had arrived whole and
# only the reply had not, s3rver may still be in that PUT's handler and write the metadata after
# the DELETE unlinked the bytes: a metadata file alone is that race of the test server's own.
npy=$(cd s3data/kv && /usr/bin/python3 - <<'EOF'
import glob, io, os, numpy as np
n, bad = 0, []
for m in glob.glob('cache/rank_*/*._S3rver_metadata.json'):
    f = m[:-len('_metadata.json')] + '_object'
    if not os.path.exists(f):
        continue
    a = np.load(io.BytesIO(open(f, 'rb').read()))
    n += 1
    if a.dtype != np.float16 or a.shape[:2] != (12, 2) or a.shape[3:] != (4, 128):
        bad.append(f)
print('ok' if n and not bad else 'bad %d %s' % (n, bad[:2]))
EOF
)
expect_eq "s3: every object is a .npy of the reference's shape" "$npy" "ok"
expect_eq "s3: the endpoint's requests counted" "$(q t.db "SELECT count(*) FROM endpoints WHERE run_id = $run AND requests > 0")" 1

sb kvcache $small kvcache.cache_dir=s3://no-such-bucket/cache --local 1 --db t.db --progress off
expect_eq "missing bucket: exit status" "$((SB_RC != 0))" 1
expect_contains "missing bucket: named" sb.err "no-such-bucket"
finish
