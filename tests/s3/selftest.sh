#!/usr/bin/env bash
# Self-test of tests/s3/s3lib.sh: installs s3rver, starts two server
# processes on one data folder and checks, with curl's own SigV4 signing, what
# the integration tests rely on: a write through one endpoint is read through
# the other, a wrong secret is refused, ListObjectsV2 pages, Range reads.
# pass and fail always return 0, so `test && pass || fail` is safe here.
# shellcheck disable=SC2015
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=s3lib.sh
. "$here/s3lib.sh"

PASSES=0
FAILS=0
pass () { PASSES=$((PASSES + 1)); echo "ok - $*"; }
fail () { FAILS=$((FAILS + 1)); echo "FAIL - $*"; }
finish () {
    echo "$PASSES passed, $FAILS failed"
    [ "$FAILS" -eq 0 ]
}

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/shardbench-s3selftest.XXXXXX")
cleanup () {
    s3rver_stop
    rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now () { date +%s.%N; }
secs () { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

t0=$(now)
if ! s3rver_install; then
    fail "s3rver_install"
    finish
    exit 1
fi
t1=$(now)
echo "# s3rver_install: $(secs "$t0" "$t1") s"

s3rver_env
DATA="$SCRATCH/data"
BUCKET=sbtest
t0=$(now)
if s3rver_start "$DATA" "$BUCKET"; then pass "server 1 started on port $S3RVER_PORT"; else fail "server 1 start"; finish; exit 1; fi
t1=$(now)
if s3rver_start "$DATA" "$BUCKET"; then pass "server 2 started on port $S3RVER_PORT"; else fail "server 2 start"; finish; exit 1; fi
t2=$(now)
echo "# s3rver_start: $(secs "$t0" "$t1") s, then $(secs "$t1" "$t2") s; endpoints: $S3RVER_ENDPOINTS; pids: $S3RVER_PIDS"
read -r EP1 EP2 <<<"$S3RVER_ENDPOINTS"
[ "$EP1" != "$EP2" ] && pass "two distinct endpoints" || fail "endpoints not distinct: '$EP1' '$EP2'"

# s3 [--user ID:SECRET] CURL-ARGS...: one signed request; the body goes to
# $SCRATCH/body, the HTTP status is printed.
s3 () {
    local user="$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY"
    if [ "${1:-}" = --user ]; then user="$2"; shift 2; fi
    curl -sS --max-time 20 -o "$SCRATCH/body" -w '%{http_code}' \
        --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$user" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}

# urlencode STRING: RFC 3986 percent-encoding, upper-case hex, as SigV4 wants.
urlencode () {
    local s="$1" out="" c i
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        case "$c" in
            [A-Za-z0-9._~-]) out+="$c" ;;
            *) out+=$(printf '%%%02X' "'$c") ;;
        esac
    done
    printf '%s' "$out"
}

# xml_all TAG: every <TAG>value</TAG> of $SCRATCH/body, one a line.
xml_all () { grep -o "<$1>[^<]*</$1>" "$SCRATCH/body" | sed "s|<$1>\(.*\)</$1>|\1|"; }

# 1. PUT through server 1, GET through server 2.
printf 'hello shardbench %s\n' "$$" >"$SCRATCH/hello.txt"
code=$(s3 -X PUT --data-binary @"$SCRATCH/hello.txt" "$EP1/$BUCKET/dir/hello.txt")
[ "$code" = 200 ] && pass "PUT through server 1: 200" || { fail "PUT through server 1: HTTP $code"; cat "$SCRATCH/body"; }
code=$(s3 "$EP2/$BUCKET/dir/hello.txt")
if [ "$code" = 200 ] && cmp -s "$SCRATCH/body" "$SCRATCH/hello.txt"; then
    pass "GET through server 2 returns what server 1 stored"
else
    fail "GET through server 2: HTTP $code"; cat "$SCRATCH/body"
fi

# 2. A wrong secret is refused.
code=$(s3 --user "$AWS_ACCESS_KEY_ID:not-the-secret" "$EP2/$BUCKET/dir/hello.txt")
[ "$code" = 403 ] && pass "wrong secret: 403" || fail "wrong secret: HTTP $code, expected 403"
grep -q '<Code>SignatureDoesNotMatch</Code>' "$SCRATCH/body" \
    && pass "wrong secret: SignatureDoesNotMatch" || { fail "wrong secret: no SignatureDoesNotMatch in"; cat "$SCRATCH/body"; }

# 3. ListObjectsV2 in pages of 2 over 5 keys (written through both servers).
for i in 1 2 3 4 5; do
    ep=$EP1; [ $((i % 2)) = 0 ] && ep=$EP2
    code=$(s3 -X PUT --data-binary "object $i" "$ep/$BUCKET/list/k$i")
    [ "$code" = 200 ] || fail "PUT list/k$i: HTTP $code"
done
# Query parameters in SigV4 canonical order (sorted, RFC 3986 encoded), so
# the signature holds whether or not this curl sorts/encodes them itself.
code=$(s3 "$EP1/$BUCKET?list-type=2&max-keys=2&prefix=list%2F")
keys=$(xml_all Key | tr '\n' ' ')
trunc=$(xml_all IsTruncated)
token=$(xml_all NextContinuationToken)
[ "$code" = 200 ] && [ "$keys" = "list/k1 list/k2 " ] \
    && pass "ListObjectsV2 page 1: $keys" || { fail "ListObjectsV2 page 1: HTTP $code, keys '$keys'"; cat "$SCRATCH/body"; }
[ "$trunc" = true ] && pass "ListObjectsV2 page 1: IsTruncated true" || fail "ListObjectsV2 page 1: IsTruncated '$trunc'"
[ -n "$token" ] && pass "ListObjectsV2 page 1: NextContinuationToken $token" || fail "ListObjectsV2 page 1: no NextContinuationToken"
all="$keys"
page=1
while [ "$trunc" = true ] && [ -n "$token" ] && [ "$page" -lt 5 ]; do
    page=$((page + 1))
    ep=$EP2   # the token of one server is good on the other (same fixed key)
    code=$(s3 "$ep/$BUCKET?continuation-token=$(urlencode "$token")&list-type=2&max-keys=2&prefix=list%2F")
    if [ "$code" != 200 ]; then
        fail "ListObjectsV2 page $page with continuation-token $token: HTTP $code"
        cat "$SCRATCH/body"; echo
        break
    fi
    keys=$(xml_all Key | tr '\n' ' ')
    trunc=$(xml_all IsTruncated)
    token=$(xml_all NextContinuationToken)
    all+="$keys"
done
[ "$all" = "list/k1 list/k2 list/k3 list/k4 list/k5 " ] && [ "$page" = 3 ] \
    && pass "ListObjectsV2 continuation pages: 3 pages, all 5 keys once" \
    || fail "ListObjectsV2 continuation: $page pages, keys '$all'"

# Both servers list the same objects.
s3 "$EP1/$BUCKET?list-type=2" >/dev/null; l1=$(xml_all Key | tr '\n' ' ')
s3 "$EP2/$BUCKET?list-type=2" >/dev/null; l2=$(xml_all Key | tr '\n' ' ')
[ -n "$l1" ] && [ "$l1" = "$l2" ] && pass "both servers list the same 6 keys" || fail "listings differ: '$l1' vs '$l2'"

# 4. Range GET.
printf '0123456789' >"$SCRATCH/digits"
s3 -X PUT --data-binary @"$SCRATCH/digits" "$EP1/$BUCKET/digits" >/dev/null
code=$(s3 -H "Range: bytes=2-5" "$EP2/$BUCKET/digits")
body=$(cat "$SCRATCH/body")
[ "$code" = 206 ] && pass "Range bytes=2-5: 206" || fail "Range bytes=2-5: HTTP $code"
[ "$body" = 2345 ] && pass "Range bytes=2-5: 4 bytes '2345'" || fail "Range bytes=2-5: body '$body'"

# 5. s3rver_stop ends both processes.
pids="$S3RVER_PIDS"
s3rver_stop
alive=""
for p in $pids; do
    if kill -0 "$p" 2>/dev/null; then alive+="$p "; fi
done
[ -z "$alive" ] && [ -z "$S3RVER_PIDS" ] && pass "s3rver_stop: pids $pids gone" || fail "s3rver_stop: still running: $alive"
finish
