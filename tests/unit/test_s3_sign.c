/* s3_sign: AWS's published S3 SigV4 examples, encoding, sorting, the key
 * cache and every too-small buffer.
 *
 * The examplebucket vectors are those of the AWS S3 API Reference page
 * "Signature Calculations for the Authorization Header: Transferring Payload
 * in a Single Chunk" (sig-v4-header-based-auth.html), access key
 * AKIAIOSFODNN7EXAMPLE, 20130524T000000Z, us-east-1. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <string.h>

#include "s3_sign.h"

#define AWS_HOST   "examplebucket.s3.amazonaws.com"
#define AWS_AK     "AKIAIOSFODNN7EXAMPLE"
#define AWS_SK     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define AWS_DATE   "20130524T000000Z"
#define EMPTY_SHA  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define AWS_CRED   "AWS4-HMAC-SHA256 Credential=" AWS_AK "/20130524/us-east-1/s3/aws4_request, "

typedef struct {
    char auth[512];
    char path[256];
    char query[256];
} s_out_t;

static sb_s3_sign_req_t
s_aws_req (const char *method, const char *path)
{
    sb_s3_sign_req_t req = {
        .method = method, .host = AWS_HOST, .path = path,
        .payload_sha256 = EMPTY_SHA, .amz_date = AWS_DATE,
        .region = "us-east-1", .service = "s3",
        .access_key = AWS_AK, .secret_key = AWS_SK,
    };
    return req;
}

static int
s_sign (const sb_s3_sign_req_t *req, sb_s3_sign_cache_t *cache, s_out_t *out)
{
    memset (out, 0x55, sizeof *out);   /* no stale text can pass for output */
    return sb_s3_sign (req, cache, out->auth, sizeof out->auth, out->path, sizeof out->path,
                       out->query, sizeof out->query);
}

static const char *
s_signature (const s_out_t *out)
{
    const char *sig = strstr (out->auth, "Signature=");
    ck_assert_ptr_nonnull (sig);
    return sig + strlen ("Signature=");
}

/* sha256 of the canonical request: the published intermediate value. */
static void
s_assert_creq_hash (const sb_s3_sign_req_t *req, const char *expected)
{
    char creq[2048], hash[65];
    ck_assert_int_eq (sb_s3_canonical_request (req, creq, sizeof creq), 0);
    ck_assert_int_eq (sb_s3_sha256_hex (creq, strlen (creq), hash), 0);
    ck_assert_msg (strcmp (hash, expected) == 0, "canonical request:\n%s\nhash %s", creq, hash);
}

/* Line `n` (0-based) of the canonical request, into line. */
static void
s_creq_line (const sb_s3_sign_req_t *req, int n, char *line, size_t size)
{
    char creq[2048];
    ck_assert_int_eq (sb_s3_canonical_request (req, creq, sizeof creq), 0);
    const char *p = creq;
    for (int i = 0; i < n; i++) {
        p = strchr (p, '\n');
        ck_assert_ptr_nonnull (p);
        p++;
    }
    size_t len = strcspn (p, "\n");
    ck_assert_uint_lt (len, size);
    memcpy (line, p, len);
    line[len] = '\0';
}

/* ---- published AWS vectors ------------------------------------------------------- */

START_TEST (test_aws_get_object)
{
    sb_s3_pair_t headers[] = { { "Range", "bytes=0-9" } };
    sb_s3_sign_req_t req = s_aws_req ("GET", "/test.txt");
    req.headers = headers;
    req.nheaders = 1;
    s_out_t out;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (out.auth, AWS_CRED "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                      "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    ck_assert_str_eq (out.path, "/test.txt");
    ck_assert_str_eq (out.query, "");
    s_assert_creq_hash (&req, "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
}
END_TEST

START_TEST (test_aws_put_object)
{
    const char *body = "Welcome to Amazon S3.";
    char body_sha[65];
    ck_assert_int_eq (sb_s3_sha256_hex (body, strlen (body), body_sha), 0);
    ck_assert_str_eq (body_sha, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");

    sb_s3_pair_t headers[] = {
        { "Date", "Fri, 24 May 2013 00:00:00 GMT" },
        { "x-amz-storage-class", "REDUCED_REDUNDANCY" },
    };
    sb_s3_sign_req_t req = s_aws_req ("PUT", "/test$file.text");
    req.headers = headers;
    req.nheaders = 2;
    req.payload_sha256 = body_sha;
    s_out_t out;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (out.auth, AWS_CRED
                      "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
                      "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    ck_assert_str_eq (out.path, "/test%24file.text");
    s_assert_creq_hash (&req, "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d");
}
END_TEST

START_TEST (test_aws_get_bucket_lifecycle)
{
    sb_s3_pair_t query[] = { { "lifecycle", "" } };
    sb_s3_sign_req_t req = s_aws_req ("GET", "/");
    req.query = query;
    req.nquery = 1;
    s_out_t out;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (out.auth, AWS_CRED "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                      "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
    ck_assert_str_eq (out.path, "/");
    ck_assert_str_eq (out.query, "lifecycle=");
    s_assert_creq_hash (&req, "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca");
}
END_TEST

START_TEST (test_aws_list_objects)
{
    /* Given in the opposite order to the canonical one. */
    sb_s3_pair_t query[] = { { "prefix", "J" }, { "max-keys", "2" } };
    sb_s3_sign_req_t req = s_aws_req ("GET", "/");
    req.query = query;
    req.nquery = 2;
    s_out_t out;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (out.auth, AWS_CRED "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                      "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
    ck_assert_str_eq (out.query, "max-keys=2&prefix=J");
    s_assert_creq_hash (&req, "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7");

    /* "" and "/" are the same path. */
    req.path = "";
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (s_signature (&out), "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
    ck_assert_str_eq (out.path, "/");
}
END_TEST

/* Not on the AWS page: the list example with UNSIGNED-PAYLOAD, as given in
 * Apache Traffic Server's s3_auth unit tests and recomputed with botocore. */
START_TEST (test_list_objects_unsigned_payload)
{
    sb_s3_pair_t query[] = { { "max-keys", "2" }, { "prefix", "J" } };
    sb_s3_sign_req_t req = s_aws_req ("GET", "/");
    req.query = query;
    req.nquery = 2;
    req.payload_sha256 = "UNSIGNED-PAYLOAD";
    s_out_t out;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (s_signature (&out), "b1a076428fa68c2c42202ee5a5718b8207f725e451e2157d6b1c393e01fc2e68");
    s_assert_creq_hash (&req, "528623330c85041d6fb82795b6f8d5771825d3568b9f0bc1faa8a49e1f5f9cfc");
}
END_TEST

/* ---- encoding and sorting ------------------------------------------------------------ */

/* A path-style MinIO-like request with a space, '+' and UTF-8 in the key, a
 * query needing encoding, a session token and UNSIGNED-PAYLOAD. The expected
 * signature was computed by botocore 1.43 (S3SigV4Auth), not by this code. */
START_TEST (test_path_style_with_token)
{
    sb_s3_pair_t query[] = { { "list-type", "2" }, { "prefix", "a b/c" }, { "delimiter", "/" } };
    sb_s3_pair_t headers[] = { { "Range", "bytes=0-1023" } };
    sb_s3_sign_req_t req = {
        .method = "GET", .host = "127.0.0.1:9000",
        .path = "/bench/dir/some key \xc3\xa9+1.npz",
        .query = query, .nquery = 3, .headers = headers, .nheaders = 1,
        .payload_sha256 = "UNSIGNED-PAYLOAD", .amz_date = "20240229T235959Z",
        .region = "us-east-1", .service = "s3",
        .access_key = "minioadmin", .secret_key = "minioadmin", .session_token = "tok/en+==",
    };
    s_out_t out;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (out.auth, "AWS4-HMAC-SHA256 Credential=minioadmin/20240229/us-east-1/s3/aws4_request, "
                      "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date;x-amz-security-token, "
                      "Signature=ac64b1615e459f098131ce18de1a0f4137e11f34df8fda1f84a51c1eb76d3d30");
    ck_assert_str_eq (out.path, "/bench/dir/some%20key%20%C3%A9%2B1.npz");
    ck_assert_str_eq (out.query, "delimiter=%2F&list-type=2&prefix=a%20b%2Fc");

    /* What is sent is what was signed: the outputs are lines 2 and 3 of the
     * canonical request. */
    char line[512];
    s_creq_line (&req, 1, line, sizeof line);
    ck_assert_str_eq (line, out.path);
    s_creq_line (&req, 2, line, sizeof line);
    ck_assert_str_eq (line, out.query);

    /* The token is signed: dropping it changes the signature and the list. */
    char with_token[65];
    snprintf (with_token, sizeof with_token, "%s", s_signature (&out));
    req.session_token = NULL;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_ne (s_signature (&out), with_token);
    ck_assert_ptr_null (strstr (out.auth, "x-amz-security-token"));
}
END_TEST

START_TEST (test_query_sorting)
{
    /* Sorted by encoded name first, then encoded value: "a" < "a%20b" <
     * "a-b" < "b"; a bare "a" before "a-b" although "a=" > "a-" as text. */
    sb_s3_pair_t query[] = {
        { "b", "x" }, { "a-b", "y" }, { "a b", "c/d" }, { "a", "2" }, { "a", "1" },
        { "uploads", "" }, { "k", "\xc3\xa9~*" }, { "a", "z" },
    };
    sb_s3_sign_req_t req = s_aws_req ("GET", "/bucket/key");
    req.query = query;
    req.nquery = sizeof query / sizeof *query;
    s_out_t out;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (out.query, "a=1&a=2&a=z&a%20b=c%2Fd&a-b=y&b=x&k=%C3%A9~%2A&uploads=");

    /* The order given does not matter. */
    sb_s3_pair_t reversed[sizeof query / sizeof *query];
    for (size_t i = 0; i < req.nquery; i++)
        reversed[i] = query[req.nquery - 1 - i];
    char first[65];
    snprintf (first, sizeof first, "%s", s_signature (&out));
    req.query = reversed;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (s_signature (&out), first);

    /* A NULL value is an empty one; an empty name is refused. */
    sb_s3_pair_t null_value[] = { { "uploads", NULL } };
    req.query = null_value;
    req.nquery = 1;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (out.query, "uploads=");
    sb_s3_pair_t no_name[] = { { "", "x" } };
    req.query = no_name;
    ck_assert_int_eq (s_sign (&req, NULL, &out), -1);
    ck_assert_str_eq (out.auth, "");
}
END_TEST

START_TEST (test_path_encoding)
{
    sb_s3_sign_req_t req = s_aws_req ("GET", "/bucket/some key.npz");
    s_out_t out;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (out.path, "/bucket/some%20key.npz");

    /* Encoded once, byte by byte: a '%' in a key is a literal '%'. */
    req.path = "/b/x%20y";
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (out.path, "/b/x%2520y");

    /* No normalisation: dot segments and empty segments stay. */
    req.path = "/b/./a//../c";
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (out.path, "/b/./a//../c");

    req.path = "/b/\xe6\x97\xa5\xe6\x9c\xac/a+b=c&d~e_f.g-h";
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (out.path, "/b/%E6%97%A5%E6%9C%AC/a%2Bb%3Dc%26d~e_f.g-h");

    /* A relative path is refused. */
    req.path = "bucket/key";
    ck_assert_int_eq (s_sign (&req, NULL, &out), -1);
}
END_TEST

START_TEST (test_headers)
{
    /* Names in any case, values trimmed with inner runs folded. */
    sb_s3_pair_t messy[] = {
        { "X-Amz-Meta-Note", "  a   b \t c  " }, { "Content-Type", "\ttext/plain" },
    };
    sb_s3_pair_t clean[] = {
        { "content-type", "text/plain" }, { "x-amz-meta-note", "a b c" },
    };
    sb_s3_sign_req_t req = s_aws_req ("PUT", "/b/k");
    req.headers = messy;
    req.nheaders = 2;
    s_out_t out;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_ptr_nonnull (strstr (out.auth,
        "SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-note, "));
    char line[256];
    s_creq_line (&req, 3, line, sizeof line);
    ck_assert_str_eq (line, "content-type:text/plain");
    s_creq_line (&req, 7, line, sizeof line);
    ck_assert_str_eq (line, "x-amz-meta-note:a b c");
    s_creq_line (&req, 8, line, sizeof line);
    ck_assert_str_eq (line, "");

    char first[65];
    snprintf (first, sizeof first, "%s", s_signature (&out));
    req.headers = clean;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_str_eq (s_signature (&out), first);

    /* A name given twice: one line, values in the order given. */
    sb_s3_pair_t twice[] = { { "x-amz-meta-b", "2" }, { "X-Amz-Meta-A", "1" }, { "X-AMZ-META-B", " 1 " } };
    req.headers = twice;
    req.nheaders = 3;
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);
    ck_assert_ptr_nonnull (strstr (out.auth, "x-amz-date;x-amz-meta-a;x-amz-meta-b, "));
    s_creq_line (&req, 6, line, sizeof line);
    ck_assert_str_eq (line, "x-amz-meta-a:1");
    s_creq_line (&req, 7, line, sizeof line);
    ck_assert_str_eq (line, "x-amz-meta-b:2,1");

    /* Refused: a header the signer adds itself, a name that is no token, a
     * value that would split the header. */
    sb_s3_pair_t bad[][1] = {
        { { "Host", AWS_HOST } }, { { "X-Amz-Date", AWS_DATE } },
        { { "x-amz-security-token", "t" } }, { { "x-amz-content-sha256", EMPTY_SHA } },
        { { "bad name", "v" } }, { { "", "v" } }, { { "x-a", "v\r\nx-b: w" } }, { { "x-a", NULL } },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        req.headers = bad[i];
        req.nheaders = 1;
        ck_assert_msg (s_sign (&req, NULL, &out) == -1, "bad header %zu accepted", i);
        ck_assert_str_eq (out.auth, "");
        ck_assert_str_eq (out.path, "");
        ck_assert_str_eq (out.query, "");
    }
}
END_TEST

START_TEST (test_malformed_request)
{
    s_out_t out;
    sb_s3_sign_req_t req = s_aws_req ("GET", "/b/k");
    ck_assert_int_eq (s_sign (&req, NULL, &out), 0);

    const char *bad_dates[] = { "20130524", "20130524T000000", "20130524 000000Z", "2013052AT000000Z",
                                "20130524T000000Z0", "" };
    for (size_t i = 0; i < sizeof bad_dates / sizeof *bad_dates; i++) {
        req = s_aws_req ("GET", "/b/k");
        req.amz_date = bad_dates[i];
        ck_assert_msg (s_sign (&req, NULL, &out) == -1, "date %s accepted", bad_dates[i]);
    }
    req = s_aws_req ("GET", "/b/k");
    req.region = "us/east";
    ck_assert_int_eq (s_sign (&req, NULL, &out), -1);
    req = s_aws_req ("GET", "/b/k");
    req.service = "";
    ck_assert_int_eq (s_sign (&req, NULL, &out), -1);
    req = s_aws_req ("GET", "/b/k");
    req.secret_key = NULL;
    ck_assert_int_eq (s_sign (&req, NULL, &out), -1);
    req = s_aws_req ("GET", "/b/k");
    req.method = "GET /x";
    ck_assert_int_eq (s_sign (&req, NULL, &out), -1);
    req = s_aws_req ("GET", "/b/k");
    req.nquery = 1;                      /* with query NULL */
    ck_assert_int_eq (s_sign (&req, NULL, &out), -1);
    ck_assert_int_eq (sb_s3_sign (NULL, NULL, out.auth, sizeof out.auth, out.path, sizeof out.path,
                                  out.query, sizeof out.query), -1);
}
END_TEST

/* ---- key cache ------------------------------------------------------------------------ */

START_TEST (test_cache)
{
    sb_s3_pair_t headers[] = { { "Range", "bytes=0-9" } };
    sb_s3_sign_req_t req = s_aws_req ("GET", "/test.txt");
    req.headers = headers;
    req.nheaders = 1;
    const char *published = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";

    sb_s3_sign_cache_t cache;
    sb_s3_sign_cache_init (&cache);
    ck_assert_str_eq (cache.scope, "");
    s_out_t out;
    ck_assert_int_eq (s_sign (&req, &cache, &out), 0);
    ck_assert_str_eq (s_signature (&out), published);
    ck_assert_str_eq (cache.scope, "20130524/us-east-1/s3");
    ck_assert_int_eq (s_sign (&req, &cache, &out), 0);
    ck_assert_str_eq (s_signature (&out), published);

    /* The second call uses the cached key: spoil it and the signature
     * follows. */
    sb_s3_sign_cache_t spoiled = cache;
    spoiled.key[0] ^= 1;
    ck_assert_int_eq (s_sign (&req, &spoiled, &out), 0);
    ck_assert_str_ne (s_signature (&out), published);

    /* A new day re-derives: same as signing without a cache. */
    req.amz_date = "20130525T000001Z";
    s_out_t fresh;
    ck_assert_int_eq (s_sign (&req, NULL, &fresh), 0);
    ck_assert_int_eq (s_sign (&req, &cache, &out), 0);
    ck_assert_str_eq (out.auth, fresh.auth);
    ck_assert_str_ne (s_signature (&out), published);
    ck_assert_str_eq (cache.scope, "20130525/us-east-1/s3");

    /* Same day, later time: the key is reused and still right. */
    req.amz_date = "20130525T235959Z";
    ck_assert_int_eq (s_sign (&req, NULL, &fresh), 0);
    ck_assert_int_eq (s_sign (&req, &cache, &out), 0);
    ck_assert_str_eq (out.auth, fresh.auth);

    /* A new secret for the same scope re-derives. */
    req.secret_key = "another-secret";
    ck_assert_int_eq (s_sign (&req, NULL, &fresh), 0);
    ck_assert_int_eq (s_sign (&req, &cache, &out), 0);
    ck_assert_str_eq (out.auth, fresh.auth);

    /* Back to the published request and a new region, both through the cache. */
    req = s_aws_req ("GET", "/test.txt");
    req.headers = headers;
    req.nheaders = 1;
    ck_assert_int_eq (s_sign (&req, &cache, &out), 0);
    ck_assert_str_eq (s_signature (&out), published);
    req.region = "eu-west-1";
    ck_assert_int_eq (s_sign (&req, NULL, &fresh), 0);
    ck_assert_int_eq (s_sign (&req, &cache, &out), 0);
    ck_assert_str_eq (out.auth, fresh.auth);
    ck_assert_str_eq (cache.scope, "20130524/eu-west-1/s3");

    /* A zeroed struct is an empty cache too. */
    sb_s3_sign_cache_t zero = { 0 };
    req.region = "us-east-1";
    ck_assert_int_eq (s_sign (&req, &zero, &out), 0);
    ck_assert_str_eq (s_signature (&out), published);

    /* A scope too long for the cache is signed, just not cached. */
    char region[200];
    memset (region, 'r', sizeof region - 1);
    region[sizeof region - 1] = '\0';
    req.region = region;
    ck_assert_int_eq (s_sign (&req, NULL, &fresh), 0);
    ck_assert_int_eq (s_sign (&req, &cache, &out), 0);
    ck_assert_str_eq (out.auth, fresh.auth);
    ck_assert_str_eq (cache.scope, "");
}
END_TEST

/* ---- buffers ---------------------------------------------------------------------------- */

START_TEST (test_buffer_too_small)
{
    sb_s3_pair_t query[] = { { "prefix", "J" }, { "max-keys", "2" } };
    sb_s3_sign_req_t req = s_aws_req ("GET", "/some key");
    req.query = query;
    req.nquery = 2;
    s_out_t ref;
    ck_assert_int_eq (s_sign (&req, NULL, &ref), 0);
    size_t auth_len = strlen (ref.auth), path_len = strlen (ref.path), query_len = strlen (ref.query);
    ck_assert_str_eq (ref.path, "/some%20key");

    char auth[512], path[64], q[64];
    /* Exact fit works... */
    ck_assert_int_eq (sb_s3_sign (&req, NULL, auth, auth_len + 1, path, path_len + 1, q, query_len + 1), 0);
    ck_assert_str_eq (auth, ref.auth);
    ck_assert_str_eq (path, ref.path);
    ck_assert_str_eq (q, ref.query);
    /* ...one byte less in any of them fails, and leaves all three empty. */
    ck_assert_int_eq (sb_s3_sign (&req, NULL, auth, auth_len, path, sizeof path, q, sizeof q), -1);
    ck_assert_str_eq (auth, "");
    ck_assert_str_eq (path, "");
    ck_assert_str_eq (q, "");
    ck_assert_int_eq (sb_s3_sign (&req, NULL, auth, sizeof auth, path, path_len, q, sizeof q), -1);
    ck_assert_str_eq (auth, "");
    ck_assert_int_eq (sb_s3_sign (&req, NULL, auth, sizeof auth, path, sizeof path, q, query_len), -1);
    ck_assert_str_eq (auth, "");
    ck_assert_int_eq (sb_s3_sign (&req, NULL, auth, 0, path, sizeof path, q, sizeof q), -1);
    ck_assert_int_eq (sb_s3_sign (&req, NULL, NULL, 0, path, sizeof path, q, sizeof q), -1);

    char creq[1024];
    ck_assert_int_eq (sb_s3_canonical_request (&req, creq, sizeof creq), 0);
    size_t creq_len = strlen (creq);
    ck_assert_int_eq (sb_s3_canonical_request (&req, creq, creq_len + 1), 0);
    ck_assert_int_eq (sb_s3_canonical_request (&req, creq, creq_len), -1);
    ck_assert_str_eq (creq, "");
}
END_TEST

/* ---- helpers ------------------------------------------------------------------------------ */

START_TEST (test_uri_encode)
{
    char out[64];
    ck_assert_int_eq (sb_s3_uri_encode ("", 0, out, sizeof out), 0);
    ck_assert_str_eq (out, "");
    ck_assert_int_eq (sb_s3_uri_encode ("AZaz09-_.~", 0, out, sizeof out), 0);
    ck_assert_str_eq (out, "AZaz09-_.~");
    ck_assert_int_eq (sb_s3_uri_encode ("a b", 0, out, sizeof out), 0);
    ck_assert_str_eq (out, "a%20b");
    ck_assert_int_eq (sb_s3_uri_encode ("/a/b", 0, out, sizeof out), 0);
    ck_assert_str_eq (out, "%2Fa%2Fb");
    ck_assert_int_eq (sb_s3_uri_encode ("/a/b", 1, out, sizeof out), 0);
    ck_assert_str_eq (out, "/a/b");
    ck_assert_int_eq (sb_s3_uri_encode ("+*%=&?#$!'()", 1, out, sizeof out), 0);
    ck_assert_str_eq (out, "%2B%2A%25%3D%26%3F%23%24%21%27%28%29");
    ck_assert_int_eq (sb_s3_uri_encode ("\xc3\xa9\x01\x7f\xff", 0, out, sizeof out), 0);
    ck_assert_str_eq (out, "%C3%A9%01%7F%FF");

    /* Sizes: "a b" needs 5 + NUL. */
    ck_assert_int_eq (sb_s3_uri_encode ("a b", 0, out, 6), 0);
    ck_assert_str_eq (out, "a%20b");
    ck_assert_int_eq (sb_s3_uri_encode ("a b", 0, out, 5), -1);
    ck_assert_str_eq (out, "");
    ck_assert_int_eq (sb_s3_uri_encode ("ab", 0, out, 3), 0);
    ck_assert_int_eq (sb_s3_uri_encode ("ab", 0, out, 2), -1);
    ck_assert_int_eq (sb_s3_uri_encode ("", 0, out, 1), 0);
    ck_assert_int_eq (sb_s3_uri_encode ("", 0, out, 0), -1);
    ck_assert_int_eq (sb_s3_uri_encode (NULL, 0, out, sizeof out), -1);
}
END_TEST

START_TEST (test_sha256_and_date)
{
    char hex[65];
    ck_assert_int_eq (sb_s3_sha256_hex ("", 0, hex), 0);
    ck_assert_str_eq (hex, EMPTY_SHA);
    ck_assert_int_eq (sb_s3_sha256_hex (NULL, 0, hex), 0);
    ck_assert_str_eq (hex, EMPTY_SHA);
    ck_assert_int_eq (sb_s3_sha256_hex ("abc", 3, hex), 0);
    ck_assert_str_eq (hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert_int_eq (sb_s3_sha256_hex (NULL, 1, hex), -1);

    char date[17];
    sb_s3_amz_date (1369353600, date);
    ck_assert_str_eq (date, AWS_DATE);
    sb_s3_amz_date (0, date);
    ck_assert_str_eq (date, "19700101T000000Z");
    sb_s3_amz_date (1700000000, date);
    ck_assert_str_eq (date, "20231114T221320Z");
    sb_s3_amz_date (951868799, date);    /* leap day, last second */
    ck_assert_str_eq (date, "20000229T235959Z");
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("s3_sign");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 100);
    tcase_add_test (tc, test_aws_get_object);
    tcase_add_test (tc, test_aws_put_object);
    tcase_add_test (tc, test_aws_get_bucket_lifecycle);
    tcase_add_test (tc, test_aws_list_objects);
    tcase_add_test (tc, test_list_objects_unsigned_payload);
    tcase_add_test (tc, test_path_style_with_token);
    tcase_add_test (tc, test_query_sorting);
    tcase_add_test (tc, test_path_encoding);
    tcase_add_test (tc, test_headers);
    tcase_add_test (tc, test_malformed_request);
    tcase_add_test (tc, test_cache);
    tcase_add_test (tc, test_buffer_too_small);
    tcase_add_test (tc, test_uri_encode);
    tcase_add_test (tc, test_sha256_and_date);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
