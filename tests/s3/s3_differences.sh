#!/usr/bin/env bash
# Probe the behaviours of s3rver (tests/s3/s3lib.sh) and radosgw
# (tests/s3/radosgw.sh) that matter to shardbench's S3 engine, the same
# signed requests (curl --aws-sigv4) to both, and print what each answered
# as a markdown table: the evidence behind docs/STORAGE.md's "Two S3
# servers" section.
# usage: tests/s3/s3_differences.sh     (needs both servers installed)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/s3lib.sh"
. "$here/radosgw.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/sb-s3diff.XXXXXX")
trap 's3rver_stop; radosgw_stop; rm -rf "$work"' EXIT
s3rver_install || exit 1
radosgw_install || exit 1
s3rver_start "$work/s3rver" sbtest >/dev/null || exit 1
radosgw_start "$work/ceph" sbtest || exit 1
EMPTY=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

# sreq SERVER ARGS...: a signed curl to SERVER (s3rver or radosgw) with its
# credentials; ARGS are curl's, URLs as U:/bucket/key?query
sreq () {
    local server="$1" ep user
    shift
    if [ "$server" = s3rver ]; then ep=$S3RVER_ENDPOINT; user=S3RVER:S3RVER
    else ep=$RADOSGW_ENDPOINT; user="$RADOSGW_ACCESS_KEY:$RADOSGW_SECRET_KEY"; fi
    local args=() a
    for a in "$@"; do
        case "$a" in U:/*) args+=("$ep${a#U:}") ;; VHOST:*) args+=("${ep/127.0.0.1/sbtest.localhost}${a#VHOST:}") ;; *) args+=("$a") ;; esac
    done
    curl -s -m 20 --aws-sigv4 "aws:amz:us-east-1:s3" -u "$user" "${args[@]}"
}

# status, Content-Length, Content-Range, ETag, and the XML error code
summary () {
    tr -d '\r' | python3 -c '
import re, sys
t = sys.stdin.read()
head, _, body = t.partition("\n\n")
while re.match(r"HTTP/1.1 100", head):
    head, _, body = body.partition("\n\n")
lines = head.split("\n")
st = lines[0].split(" ")[1] if lines and " " in lines[0] else "none"
h = {}
for l in lines[1:]:
    k, _, v = l.partition(":")
    h[k.strip().lower()] = v.strip()
out = [st]
for k in ("content-length", "content-range", "etag"):
    if k in h:
        out.append(k.split("-")[-1] + "=" + h[k])
m = re.search(r"<Code>([^<]*)</Code>", body)
if m:
    out.append(m.group(1))
print(" ".join(out))'
}

put () {   # put SERVER KEY FILE
    sreq "$1" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$3" -o /dev/null "U:/sbtest/$2"
}

row () {   # row WHAT CURL-ARGS...: one table row, the same request to both
    local what="$1" a b
    shift
    a=$(sreq s3rver -i "$@" -H "x-amz-content-sha256: $EMPTY" | summary)
    b=$(sreq radosgw -i "$@" -H "x-amz-content-sha256: $EMPTY" | summary)
    printf '| %s | %s | %s |\n' "$what" "$a" "$b"
}

head -c 10 /dev/urandom >"$work/ten"
: >"$work/empty"
head -c $((5 * 1048576 + 1000)) /dev/urandom >"$work/big"
for s in s3rver radosgw; do
    put $s obj10 "$work/ten"
    put $s empty "$work/empty"
    # keys whose byte order differs from other orders (case, '-' '/' '_', UTF-8)
    for k in list/b list/B list/a-b list/a/b list/a_b list/%C3%A9 list/z list/0; do
        put $s "$k" "$work/ten"
    done
done

echo "s3rver $S3RVER_VERSION at $S3RVER_ENDPOINT, radosgw $(radosgw --version | awk '{print $3}') at $RADOSGW_ENDPOINT"
echo
echo '| request | s3rver | radosgw |'
echo '|---|---|---|'
row "GET a 10-byte object" -o /dev/null -D - U:/sbtest/obj10
row "GET missing key" -D - U:/sbtest/nokey
row "GET key in a missing bucket" -D - U:/nobucket/k
row "HEAD missing key" -I U:/sbtest/nokey
row "HEAD missing bucket" -I U:/nobucket
row "GET empty object" -D - -o /dev/null U:/sbtest/empty
row "GET empty object, Range: bytes=0-0" -D - -o /dev/null -H "Range: bytes=0-0" U:/sbtest/empty
row "Range: bytes=2-5" -D - -o /dev/null -H "Range: bytes=2-5" U:/sbtest/obj10
row "Range: bytes=-3 (suffix)" -D - -o /dev/null -H "Range: bytes=-3" U:/sbtest/obj10
row "Range: bytes=-30 (suffix longer than object)" -D - -o /dev/null -H "Range: bytes=-30" U:/sbtest/obj10
row "Range: bytes=5-100 (end past the end)" -D - -o /dev/null -H "Range: bytes=5-100" U:/sbtest/obj10
row "Range: bytes=10-20 (start at the end)" -D - -H "Range: bytes=10-20" U:/sbtest/obj10
row "Range: bytes=5-2 (malformed)" -D - -o /dev/null -H "Range: bytes=5-2" U:/sbtest/obj10
row "Range: bytes=0-1,4-5 (two ranges)" -D - -o /dev/null -H "Range: bytes=0-1,4-5" U:/sbtest/obj10
a=$(sreq s3rver -i -H "x-amz-content-sha256: $EMPTY" U:/sbtest/obj10 -u S3RVER:wrong | summary)
b=$(curl -s -i -H "x-amz-content-sha256: $EMPTY" --aws-sigv4 "aws:amz:us-east-1:s3" -u "$RADOSGW_ACCESS_KEY:wrong" "$RADOSGW_ENDPOINT/sbtest/obj10" | summary)
printf '| %s | %s | %s |\n' "GET, wrong secret" "$a" "$b"
a=$(sreq s3rver -i -o /dev/null -D - U:/sbtest/obj10 | summary)
b=$(sreq radosgw -i -o /dev/null -D - U:/sbtest/obj10 | summary)
printf '| %s | %s | %s |\n' "GET signed without x-amz-content-sha256" "$a" "$b"
a=$(printf 'abc' | sreq s3rver -i -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -H "Transfer-Encoding: chunked" -T - U:/sbtest/chunked | summary)
b=$(printf 'abc' | sreq radosgw -i -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -H "Transfer-Encoding: chunked" -T - U:/sbtest/chunked | summary)
printf '| %s | %s | %s |\n' "PUT without Content-Length (chunked)" "$a" "$b"
row "GET virtual-host style (Host: sbtest.localhost)" -o /dev/null -D - VHOST:/obj10

# listing: order, pages, tokens
lst () {   # lst SERVER QUERY: keys, KeyCount, IsTruncated, the token
    sreq "$1" -H "x-amz-content-sha256: $EMPTY" "U:/sbtest?$2" | python3 -c '
import sys, xml.etree.ElementTree as E
import re
t = re.sub(r" xmlns=\"[^\"]*\"", "", sys.stdin.read(), count=1)   # either namespace, or none
ns = ""
try:
    r = E.fromstring(t)
except Exception:
    print("unparsable: " + t[:80]); sys.exit()
if r.tag.endswith("Error"):
    print("error " + (r.findtext("Code") or "")); sys.exit()
keys = [c.findtext(ns + "Key") for c in r.findall(ns + "Contents")]
print(" ".join(keys), "| KeyCount=%s IsTruncated=%s Next=%s" % (r.findtext(ns + "KeyCount"), r.findtext(ns + "IsTruncated"), r.findtext(ns + "NextContinuationToken")))'
}
lrow () {
    printf '| %s | %s | %s |\n' "$1" "$(lst s3rver "$2")" "$(lst radosgw "$2")"
}
lrow "ListObjectsV2 prefix=list/ (order)" "list-type=2&prefix=list%2F"
lrow "... max-keys=3" "list-type=2&max-keys=3&prefix=list%2F"
tok_a=$(lst s3rver "list-type=2&max-keys=3&prefix=list%2F" | sed 's/.*Next=//')
tok_b=$(lst radosgw "list-type=2&max-keys=3&prefix=list%2F" | sed 's/.*Next=//')
enc () { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe="-_.~"))' "$1"; }
printf '| %s | %s | %s |\n' "... next page (continuation-token)" \
    "$(lst s3rver "continuation-token=$(enc "$tok_a")&list-type=2&max-keys=3&prefix=list%2F")" \
    "$(lst radosgw "continuation-token=$(enc "$tok_b")&list-type=2&max-keys=3&prefix=list%2F")"
lrow "... start-after=list/a-b" "list-type=2&prefix=list%2F&start-after=list%2Fa-b"
lrow "... delimiter=/ (CommonPrefixes not shown)" "delimiter=%2F&list-type=2&prefix=list%2F"
lrow "... max-keys=0" "list-type=2&max-keys=0&prefix=list%2F"
lrow "... continuation-token=garbage" "continuation-token=garbage&list-type=2&prefix=list%2F"

# multipart: 2 parts (5 MiB + 1000 bytes), the ETag of the whole
mp () {   # mp SERVER: the completed upload's ETag, then a GET's ETag and length
    local s="$1" id e1 e2
    id=$(sreq "$s" -X POST -H "x-amz-content-sha256: $EMPTY" "U:/sbtest/mp?uploads=" | sed -n 's/.*<UploadId>\([^<]*\)<.*/\1/p')
    head -c 5242880 "$work/big" >"$work/p1"
    tail -c 1000 "$work/big" >"$work/p2"
    e1=$(sreq "$s" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$work/p1" -D - -o /dev/null "U:/sbtest/mp?partNumber=1&uploadId=$(enc "$id")" | tr -d '\r' | sed -n 's/^[Ee][Tt]ag: //p')
    e2=$(sreq "$s" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$work/p2" -D - -o /dev/null "U:/sbtest/mp?partNumber=2&uploadId=$(enc "$id")" | tr -d '\r' | sed -n 's/^[Ee][Tt]ag: //p')
    printf '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part><Part><PartNumber>2</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>' "$e1" "$e2" >"$work/complete-$s.xml"
    sreq "$s" -X POST -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" --data-binary @"$work/complete-$s.xml" "U:/sbtest/mp?uploadId=$(enc "$id")" \
        | sed -n 's/.*<ETag>\([^<]*\)<.*/complete \1/p; s/.*<Code>\([^<]*\)<.*/complete: \1/p' | sed 's/&quot;/"/g; s/&#34;/"/g'
    sreq "$s" -I -H "x-amz-content-sha256: $EMPTY" U:/sbtest/mp | summary
}
expect=$(python3 -c '
import hashlib, sys
d = open(sys.argv[1], "rb").read()
parts = [d[:5242880], d[5242880:]]
print("\"%s-2\"" % hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest())' "$work/big")
printf '| %s | %s | %s |\n' "multipart upload, 2 parts (expected ETag $expect)" "$(mp s3rver | tr '\n' ' ')" "$(mp radosgw | tr '\n' ' ')"
