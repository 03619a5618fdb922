/* s3_sign: AWS Signature Version 4 for S3 requests, Authorization header form.
 *
 * The caller describes one request (method, Host, raw path, raw query, the
 * extra headers it will send, the payload hash, time and credentials); the
 * signer builds the canonical request, signs it with HMAC-SHA256 (OpenSSL
 * libcrypto) and hands back three strings the caller must send verbatim: the
 * Authorization value, the encoded path and the canonical query. Sending those
 * exact strings is what keeps "what is sent" equal to "what was signed" — the
 * usual cause of SignatureDoesNotMatch is a client that re-encodes the URL
 * after signing.
 *
 * S3 rules followed here (they differ from the other AWS services): the path
 * is encoded once, byte by byte, '/' kept, with no normalisation ("." and ".."
 * segments and "//" stay as they are); query names and values are encoded
 * with '/' encoded too and sorted by encoded name, then encoded value.
 *
 * The derived signing key depends only on (date, region, service, secret), so
 * a caller signing many requests keeps an sb_s3_sign_cache_t and saves the
 * four HMACs of the derivation on all but the first request of each day. */
#ifndef SB_S3_SIGN_H
#define SB_S3_SIGN_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A name and a value, both borrowed. */
typedef struct { const char *name; const char *value; } sb_s3_pair_t;

/* Cache of the derived signing key: valid for one (date, region, service, secret).
 * An embedded struct: sb_s3_sign_cache_init, or zero it (= {0}); it owns no
 * memory, so there is no _fini. One cache per thread: sb_s3_sign writes it. */
typedef struct {
    char    scope[160];      /* "YYYYMMDD/region/service" the key was derived for; "" when empty */
    uint8_t secret_hash[32]; /* sha256 of the secret it was derived from */
    uint8_t key[32];
} sb_s3_sign_cache_t;

/* One request to sign. Every string is borrowed and NUL-terminated. */
typedef struct {
    const char *method;          /* "GET" */
    const char *host;            /* value of the Host header as sent: "examplebucket.s3.amazonaws.com" or "127.0.0.1:9000" */
    const char *path;            /* raw, NOT encoded absolute path "/bucket/some key.npz"; the signer URI-encodes each byte except unreserved chars and '/' (S3 rule: no double encoding, no path normalisation); "" means "/" */
    const sb_s3_pair_t *query;   /* raw, NOT encoded query parameters in any order; value may be "" (e.g. "uploads"); NULL when nquery is 0 */
    size_t nquery;
    const sb_s3_pair_t *headers; /* extra headers to sign besides host, x-amz-content-sha256, x-amz-date and x-amz-security-token (e.g. "range", "content-type"); any case; values are trimmed and inner runs of spaces folded; a name given twice is signed as "name:v1,v2" in the order given; NULL when nheaders is 0 */
    size_t nheaders;
    const char *payload_sha256;  /* lowercase hex of the body hash, or "UNSIGNED-PAYLOAD" */
    const char *amz_date;        /* "20130524T000000Z" */
    const char *region;          /* "us-east-1" */
    const char *service;         /* "s3" */
    const char *access_key;
    const char *secret_key;
    const char *session_token;   /* NULL (or "") when none; signed as x-amz-security-token when set */
} sb_s3_sign_req_t;

/* Empty the cache, so the next sb_s3_sign through it derives the key. */
void sb_s3_sign_cache_init (sb_s3_sign_cache_t *self);

/* Sign req.
 *
 * Writes the Authorization header VALUE ("AWS4-HMAC-SHA256 Credential=AK/
 * YYYYMMDD/region/service/aws4_request, SignedHeaders=a;b;c, Signature=hex")
 * into auth; the canonical (sorted, percent-encoded) query string into
 * query_out ("" when there is none; the caller appends it after '?' to the URL
 * so that what is sent is what was signed — a bare "uploads" comes back as
 * "uploads=", which S3 reads the same); and the encoded path into path_out.
 *
 * The caller must send, besides those, the headers that were signed with the
 * values it passed: Host, x-amz-content-sha256 (= payload_sha256), x-amz-date
 * (= amz_date), x-amz-security-token (= session_token, when set) and each of
 * req->headers.
 *
 * The derived key is looked up in and stored into cache (may be NULL: derive
 * every time). All three output buffers are the caller's; on failure each is
 * set to "" when its size allows.
 *
 * Returns 0, or -1 when a buffer is too small, when crypto or memory
 * allocation fails, or when the request is malformed: a required string NULL
 * or empty, path not starting with '/', amz_date not "YYYYMMDDTHHMMSSZ",
 * region or service containing '/', an extra header name that is not an HTTP
 * token or that repeats one of the four headers the signer adds itself, or a
 * header value holding CR, LF or another control character but tab. */
int sb_s3_sign (const sb_s3_sign_req_t *req, sb_s3_sign_cache_t *cache,
                char *auth, size_t auth_size, char *path_out, size_t path_size,
                char *query_out, size_t query_size);

/* Write the canonical request req would be signed over into out (the text
 * whose SHA-256 the string to sign carries). For logging next to a
 * SignatureDoesNotMatch reply, which quotes the server's own version.
 * Returns 0, or -1 on the same errors as sb_s3_sign (out set to "" when
 * size allows). */
int sb_s3_canonical_request (const sb_s3_sign_req_t *req, char *out, size_t size);

/* Lowercase hex SHA-256 of data (out: 65 bytes). Returns 0 or -1. */
int sb_s3_sha256_hex (const void *data, size_t len, char out[65]);

/* Percent-encode per SigV4 (RFC 3986 unreserved A-Z a-z 0-9 - _ . ~ kept; '/'
 * kept when keep_slash; every other byte, UTF-8 included, becomes %XX with
 * upper-case hex). Returns 0, or -1 (too small: out set to "" when size > 0). */
int sb_s3_uri_encode (const char *in, int keep_slash, char *out, size_t size);

/* x-amz-date for t: "YYYYMMDDTHHMMSSZ" (out: 17 bytes, UTC). A t whose year
 * is outside 0..9999 (no server accepts it anyway) gives "00000000T000000Z". */
void sb_s3_amz_date (time_t t, char out[17]);

#endif
