/* s3_sign: SigV4 canonical request, string to sign and signing-key cache.
 *
 * The canonical request is built in heap strings (their sizes follow the
 * caller's path, query and headers, which have no fixed bound) and only then
 * copied into the caller's fixed buffers, so a too-small buffer is reported
 * as -1 and never signs a truncated string. */
#include "s3_sign.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#define S_ALGORITHM   "AWS4-HMAC-SHA256"
#define S_TERMINATOR  "aws4_request"
#define S_KEY_LEN     32

/* ---- growable string ------------------------------------------------------ */

/* A NUL-terminated heap string. An allocation failure sets failed and turns
 * every later append into a no-op, so builders check once at the end. */
typedef struct {
    char  *data;
    size_t len;
    size_t cap;
    int    failed;
} s_str_t;

static void
s_str_add (s_str_t *self, const char *p, size_t n)
{
    if (self->failed)
        return;
    if (n > SIZE_MAX - self->len - 1) {
        self->failed = 1;
        return;
    }
    /* Allocates even for n == 0, so data is never NULL once added to. */
    if (self->len + n + 1 > self->cap) {
        size_t cap = self->cap ? self->cap : 128;
        while (cap < self->len + n + 1) {
            if (cap > SIZE_MAX / 2) {
                self->failed = 1;
                return;
            }
            cap *= 2;
        }
        char *data = realloc (self->data, cap);
        if (!data) {
            self->failed = 1;
            return;
        }
        self->data = data;
        self->cap = cap;
    }
    memcpy (self->data + self->len, p, n);
    self->len += n;
    self->data[self->len] = '\0';
}

static void
s_str_adds (s_str_t *self, const char *s)
{
    s_str_add (self, s, strlen (s));
}

static void
s_str_addc (s_str_t *self, char c)
{
    s_str_add (self, &c, 1);
}

static void
s_str_fini (s_str_t *self)
{
    free (self->data);
    memset (self, 0, sizeof *self);
}

/* ---- character classes ------------------------------------------------------ */

/* RFC 3986 unreserved: the only bytes SigV4 leaves unencoded. */
static int
s_is_unreserved (unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
        || c == '-' || c == '_' || c == '.' || c == '~';
}

/* RFC 9110 token character: what a header name or a method may hold. */
static int
s_is_tchar (unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
        || (c != '\0' && strchr ("!#$%&'*+-.^_`|~", c) != NULL);
}

static int
s_is_token (const char *s)
{
    if (!s || !*s)
        return 0;
    for (const unsigned char *p = (const unsigned char *) s; *p; p++)
        if (!s_is_tchar (*p))
            return 0;
    return 1;
}

/* Non-empty and free of control characters: safe inside a header value. */
static int
s_is_text (const char *s)
{
    if (!s || !*s)
        return 0;
    for (const unsigned char *p = (const unsigned char *) s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 0;
    return 1;
}

static void
s_str_add_encoded (s_str_t *self, const char *in, int keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *) in; *p; p++) {
        if (s_is_unreserved (*p) || (keep_slash && *p == '/'))
            s_str_addc (self, (char) *p);
        else {
            char esc[3] = { '%', hex[*p >> 4], hex[*p & 0x0f] };
            s_str_add (self, esc, sizeof esc);
        }
    }
}

/* Append a header value trimmed, with inner runs of spaces and tabs folded
 * into one space (SigV4 "Trimall"). Returns -1 on a control character other
 * than tab: CR or LF would split the header on the wire. */
static int
s_str_add_value (s_str_t *self, const char *value)
{
    int started = 0, pending_space = 0;
    s_str_add (self, "", 0);
    for (const unsigned char *p = (const unsigned char *) value; *p; p++) {
        if (*p == ' ' || *p == '\t') {
            pending_space = started;
            continue;
        }
        if (*p < 0x20 || *p == 0x7f)
            return -1;
        if (pending_space)
            s_str_addc (self, ' ');
        pending_space = 0;
        started = 1;
        s_str_addc (self, (char) *p);
    }
    return 0;
}

/* ---- crypto ------------------------------------------------------------------- */

static void
s_hex (const uint8_t *bytes, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[bytes[i] >> 4];
        out[2 * i + 1] = hex[bytes[i] & 0x0f];
    }
    out[2 * n] = '\0';
}

static int
s_sha256 (const void *data, size_t len, uint8_t out[S_KEY_LEN])
{
    unsigned int out_len = 0;
    if (EVP_Digest (data, len, out, &out_len, EVP_sha256 (), NULL) != 1 || out_len != S_KEY_LEN)
        return -1;
    return 0;
}

static int
s_hmac (const void *key, size_t key_len, const void *data, size_t len, uint8_t out[S_KEY_LEN])
{
    unsigned int out_len = 0;
    if (key_len > INT_MAX)
        return -1;
    if (!HMAC (EVP_sha256 (), key, (int) key_len, data, len, out, &out_len) || out_len != S_KEY_LEN)
        return -1;
    return 0;
}

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" secret, date), region), service), "aws4_request") */
static int
s_derive_key (const char *secret, const char *date8, const char *region, const char *service,
              uint8_t key[S_KEY_LEN])
{
    size_t secret_len = strlen (secret);
    if (secret_len > SIZE_MAX - 4)
        return -1;
    uint8_t *k_secret = malloc (secret_len + 4);
    if (!k_secret)
        return -1;
    memcpy (k_secret, "AWS4", 4);
    memcpy (k_secret + 4, secret, secret_len);

    uint8_t k_date[S_KEY_LEN], k_region[S_KEY_LEN], k_service[S_KEY_LEN];
    int rc = -1;
    if (s_hmac (k_secret, secret_len + 4, date8, 8, k_date) == 0
        && s_hmac (k_date, S_KEY_LEN, region, strlen (region), k_region) == 0
        && s_hmac (k_region, S_KEY_LEN, service, strlen (service), k_service) == 0
        && s_hmac (k_service, S_KEY_LEN, S_TERMINATOR, strlen (S_TERMINATOR), key) == 0)
        rc = 0;

    OPENSSL_cleanse (k_secret, secret_len + 4);
    OPENSSL_cleanse (k_date, sizeof k_date);
    OPENSSL_cleanse (k_region, sizeof k_region);
    OPENSSL_cleanse (k_service, sizeof k_service);
    free (k_secret);
    return rc;
}

/* The signing key for req, from cache when it holds the same scope and
 * secret, else derived (and stored when cache is given). */
static int
s_signing_key (const sb_s3_sign_req_t *req, sb_s3_sign_cache_t *cache, uint8_t key[S_KEY_LEN])
{
    char scope[sizeof cache->scope];
    int n = snprintf (scope, sizeof scope, "%.8s/%s/%s", req->amz_date, req->region, req->service);
    /* A scope too long for the cache is still signed, just not cached. */
    int cacheable = cache && n > 0 && (size_t) n < sizeof scope;

    uint8_t secret_hash[S_KEY_LEN];
    if (cache && s_sha256 (req->secret_key, strlen (req->secret_key), secret_hash) != 0)
        return -1;
    if (cacheable && cache->scope[0] && strcmp (cache->scope, scope) == 0
        && CRYPTO_memcmp (cache->secret_hash, secret_hash, sizeof secret_hash) == 0) {
        memcpy (key, cache->key, S_KEY_LEN);
        return 0;
    }

    if (cache)
        sb_s3_sign_cache_init (cache);
    if (s_derive_key (req->secret_key, req->amz_date, req->region, req->service, key) != 0)
        return -1;
    if (cacheable) {
        memcpy (cache->scope, scope, (size_t) n + 1);
        memcpy (cache->secret_hash, secret_hash, sizeof secret_hash);
        memcpy (cache->key, key, S_KEY_LEN);
    }
    return 0;
}

/* ---- canonical request ----------------------------------------------------------- */

typedef struct {
    s_str_t path;            /* encoded path */
    s_str_t query;           /* canonical query: sorted, encoded, '&'-joined */
    s_str_t signed_headers;  /* "a;b;c" */
    s_str_t creq;            /* the canonical request */
} s_canon_t;

typedef struct {
    s_str_t name;            /* encoded */
    s_str_t value;           /* encoded */
} s_qpair_t;

typedef struct {
    s_str_t name;            /* lower case */
    s_str_t value;           /* trimmed and folded */
    size_t  order;           /* position given: repeated names keep their order */
} s_header_t;

static int
s_qpair_cmp (const void *a, const void *b)
{
    const s_qpair_t *x = a, *y = b;
    int c = strcmp (x->name.data, y->name.data);
    return c ? c : strcmp (x->value.data, y->value.data);
}

static int
s_header_cmp (const void *a, const void *b)
{
    const s_header_t *x = a, *y = b;
    int c = strcmp (x->name.data, y->name.data);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void
s_canon_fini (s_canon_t *self)
{
    s_str_fini (&self->path);
    s_str_fini (&self->query);
    s_str_fini (&self->signed_headers);
    s_str_fini (&self->creq);
}

static int
s_is_amz_date (const char *s)
{
    if (!s || strlen (s) != 16 || s[8] != 'T' || s[15] != 'Z')
        return 0;
    for (int i = 0; i < 15; i++)
        if (i != 8 && (s[i] < '0' || s[i] > '9'))
            return 0;
    return 1;
}

static int
s_req_is_valid (const sb_s3_sign_req_t *req)
{
    return req && s_is_token (req->method) && s_is_text (req->host) && req->path
        && (req->path[0] == '\0' || req->path[0] == '/')
        && (req->nquery == 0 || req->query) && (req->nheaders == 0 || req->headers)
        && s_is_text (req->payload_sha256) && s_is_amz_date (req->amz_date)
        && s_is_text (req->region) && !strchr (req->region, '/')
        && s_is_text (req->service) && !strchr (req->service, '/')
        && s_is_text (req->access_key) && req->secret_key && req->secret_key[0]
        && (!req->session_token || !req->session_token[0] || s_is_text (req->session_token));
}

/* The four headers the signer adds itself; an extra header may not repeat them. */
static const char *const s_own_headers[] = {
    "host", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"
};

static int
s_canon_query (const sb_s3_sign_req_t *req, s_canon_t *c)
{
    s_str_add (&c->query, "", 0);
    if (req->nquery == 0)
        return c->query.failed ? -1 : 0;
    s_qpair_t *pairs = calloc (req->nquery, sizeof *pairs);
    if (!pairs)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < req->nquery && rc == 0; i++) {
        const sb_s3_pair_t *q = &req->query[i];
        if (!q->name || !q->name[0]) {
            rc = -1;
            break;
        }
        /* Both added to even when empty, so data is never NULL in the sort. */
        s_str_add (&pairs[i].name, "", 0);
        s_str_add (&pairs[i].value, "", 0);
        s_str_add_encoded (&pairs[i].name, q->name, 0);
        s_str_add_encoded (&pairs[i].value, q->value ? q->value : "", 0);
        if (pairs[i].name.failed || pairs[i].value.failed)
            rc = -1;
    }
    if (rc == 0) {
        qsort (pairs, req->nquery, sizeof *pairs, s_qpair_cmp);
        for (size_t i = 0; i < req->nquery; i++) {
            if (i > 0)
                s_str_addc (&c->query, '&');
            s_str_add (&c->query, pairs[i].name.data, pairs[i].name.len);
            s_str_addc (&c->query, '=');
            s_str_add (&c->query, pairs[i].value.data, pairs[i].value.len);
        }
        if (c->query.failed)
            rc = -1;
    }
    for (size_t i = 0; i < req->nquery; i++) {
        s_str_fini (&pairs[i].name);
        s_str_fini (&pairs[i].value);
    }
    free (pairs);
    return rc;
}

/* Fill one header slot; name is lowered here. Returns 0 or -1. */
static int
s_header_set (s_header_t *h, const char *name, const char *value, size_t order)
{
    h->order = order;
    s_str_add (&h->name, "", 0);
    for (const char *p = name; *p; p++) {
        char ch = *p;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char) (ch - 'A' + 'a');
        s_str_addc (&h->name, ch);
    }
    if (s_str_add_value (&h->value, value) != 0)
        return -1;
    return h->name.failed || h->value.failed ? -1 : 0;
}

/* Appends the canonical header lines ("name:value\n" each) to lines and
 * fills c->signed_headers. */
static int
s_canon_headers (const sb_s3_sign_req_t *req, s_canon_t *c, s_str_t *lines)
{
    int with_token = req->session_token && req->session_token[0];
    size_t own = with_token ? 4 : 3;
    if (req->nheaders > SIZE_MAX / sizeof (s_header_t) - own)
        return -1;
    size_t n = req->nheaders + own;
    s_header_t *hs = calloc (n, sizeof *hs);
    if (!hs)
        return -1;

    int rc = 0;
    const char *own_values[4] = { req->host, req->payload_sha256, req->amz_date, req->session_token };
    for (size_t i = 0; i < own && rc == 0; i++)
        rc = s_header_set (&hs[i], s_own_headers[i], own_values[i], i);
    for (size_t i = 0; i < req->nheaders && rc == 0; i++) {
        const sb_s3_pair_t *h = &req->headers[i];
        if (!s_is_token (h->name) || !h->value) {
            rc = -1;
            break;
        }
        rc = s_header_set (&hs[own + i], h->name, h->value, own + i);
        for (size_t k = 0; k < sizeof s_own_headers / sizeof *s_own_headers && rc == 0; k++)
            if (strcmp (hs[own + i].name.data, s_own_headers[k]) == 0)
                rc = -1;
    }

    if (rc == 0) {
        qsort (hs, n, sizeof *hs, s_header_cmp);
        s_str_add (&c->signed_headers, "", 0);
        for (size_t i = 0; i < n; i++) {
            int repeat = i > 0 && strcmp (hs[i].name.data, hs[i - 1].name.data) == 0;
            if (repeat)
                s_str_addc (lines, ',');
            else {
                if (i > 0) {
                    s_str_addc (lines, '\n');
                    s_str_addc (&c->signed_headers, ';');
                }
                s_str_add (lines, hs[i].name.data, hs[i].name.len);
                s_str_addc (lines, ':');
                s_str_add (&c->signed_headers, hs[i].name.data, hs[i].name.len);
            }
            s_str_add (lines, hs[i].value.data, hs[i].value.len);
        }
        s_str_addc (lines, '\n');
        if (lines->failed || c->signed_headers.failed)
            rc = -1;
    }
    for (size_t i = 0; i < n; i++) {
        s_str_fini (&hs[i].name);
        s_str_fini (&hs[i].value);
    }
    free (hs);
    return rc;
}

/* Build path, query, signed headers and the canonical request:
 *   method \n path \n query \n header lines \n signed headers \n payload hash */
static int
s_canon_build (const sb_s3_sign_req_t *req, s_canon_t *c)
{
    memset (c, 0, sizeof *c);
    if (!s_req_is_valid (req))
        return -1;

    s_str_add_encoded (&c->path, req->path[0] ? req->path : "/", 1);
    if (c->path.failed)
        return -1;
    if (s_canon_query (req, c) != 0)
        return -1;
    s_str_t lines = { 0 };
    if (s_canon_headers (req, c, &lines) != 0) {
        s_str_fini (&lines);
        return -1;
    }

    s_str_adds (&c->creq, req->method);
    s_str_addc (&c->creq, '\n');
    s_str_add (&c->creq, c->path.data, c->path.len);
    s_str_addc (&c->creq, '\n');
    s_str_add (&c->creq, c->query.data, c->query.len);
    s_str_addc (&c->creq, '\n');
    s_str_add (&c->creq, lines.data, lines.len);
    s_str_addc (&c->creq, '\n');
    s_str_add (&c->creq, c->signed_headers.data, c->signed_headers.len);
    s_str_addc (&c->creq, '\n');
    s_str_adds (&c->creq, req->payload_sha256);
    s_str_fini (&lines);
    return c->creq.failed ? -1 : 0;
}

static void
s_clear (char *buf, size_t size)
{
    if (buf && size > 0)
        buf[0] = '\0';
}

/* Copy a built string into a caller buffer; -1 when it does not fit. */
static int
s_copy_out (const s_str_t *s, char *out, size_t size)
{
    if (s->len >= size)
        return -1;
    memcpy (out, s->data, s->len + 1);
    return 0;
}

/* ---- exported ------------------------------------------------------------------- */

void
sb_s3_sign_cache_init (sb_s3_sign_cache_t *self)
{
    OPENSSL_cleanse (self, sizeof *self);
}

int
sb_s3_sign (const sb_s3_sign_req_t *req, sb_s3_sign_cache_t *cache,
            char *auth, size_t auth_size, char *path_out, size_t path_size,
            char *query_out, size_t query_size)
{
    s_clear (auth, auth_size);
    s_clear (path_out, path_size);
    s_clear (query_out, query_size);
    if (!auth || !path_out || !query_out)
        return -1;

    s_canon_t c;
    s_str_t sts = { 0 };
    uint8_t key[S_KEY_LEN], sig[S_KEY_LEN];
    char creq_hash[65], sig_hex[65];
    int rc = -1;

    if (s_canon_build (req, &c) != 0)
        goto done;
    if (sb_s3_sha256_hex (c.creq.data, c.creq.len, creq_hash) != 0)
        goto done;
    if (s_signing_key (req, cache, key) != 0)
        goto done;

    /* String to sign: algorithm \n time \n scope \n hex(sha256(canonical request)) */
    s_str_adds (&sts, S_ALGORITHM "\n");
    s_str_adds (&sts, req->amz_date);
    s_str_addc (&sts, '\n');
    s_str_add (&sts, req->amz_date, 8);
    s_str_addc (&sts, '/');
    s_str_adds (&sts, req->region);
    s_str_addc (&sts, '/');
    s_str_adds (&sts, req->service);
    s_str_adds (&sts, "/" S_TERMINATOR "\n");
    s_str_adds (&sts, creq_hash);
    if (sts.failed)
        goto done;
    if (s_hmac (key, sizeof key, sts.data, sts.len, sig) != 0)
        goto done;
    s_hex (sig, sizeof sig, sig_hex);

    int n = snprintf (auth, auth_size,
                      S_ALGORITHM " Credential=%s/%.8s/%s/%s/" S_TERMINATOR
                      ", SignedHeaders=%s, Signature=%s",
                      req->access_key, req->amz_date, req->region, req->service,
                      c.signed_headers.data, sig_hex);
    if (n < 0 || (size_t) n >= auth_size)
        goto done;
    if (s_copy_out (&c.path, path_out, path_size) != 0)
        goto done;
    if (s_copy_out (&c.query, query_out, query_size) != 0)
        goto done;
    rc = 0;

done:
    OPENSSL_cleanse (key, sizeof key);
    s_str_fini (&sts);
    s_canon_fini (&c);
    if (rc != 0) {
        s_clear (auth, auth_size);
        s_clear (path_out, path_size);
        s_clear (query_out, query_size);
    }
    return rc;
}

int
sb_s3_canonical_request (const sb_s3_sign_req_t *req, char *out, size_t size)
{
    s_clear (out, size);
    if (!out)
        return -1;
    s_canon_t c;
    int rc = s_canon_build (req, &c) == 0 && s_copy_out (&c.creq, out, size) == 0 ? 0 : -1;
    s_canon_fini (&c);
    return rc;
}

int
sb_s3_sha256_hex (const void *data, size_t len, char out[65])
{
    uint8_t md[S_KEY_LEN];
    out[0] = '\0';
    if (!data && len > 0)
        return -1;
    if (s_sha256 (data ? data : "", len, md) != 0)
        return -1;
    s_hex (md, sizeof md, out);
    return 0;
}

int
sb_s3_uri_encode (const char *in, int keep_slash, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    if (!out || size == 0)
        return -1;
    out[0] = '\0';
    if (!in)
        return -1;
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *) in; *p; p++) {
        int keep = s_is_unreserved (*p) || (keep_slash && *p == '/');
        size_t need = keep ? 1 : 3;
        if (need >= size - n) {
            out[0] = '\0';
            return -1;
        }
        if (keep)
            out[n++] = (char) *p;
        else {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 0x0f];
        }
    }
    out[n] = '\0';
    return 0;
}

void
sb_s3_amz_date (time_t t, char out[17])
{
    struct tm tm;
    /* snprintf rather than strftime: %Y is not zero-padded to four digits. */
    if (!gmtime_r (&t, &tm) || tm.tm_year < -1900 || tm.tm_year > 9999 - 1900
        || snprintf (out, 17, "%04d%02d%02dT%02d%02d%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec) != 16)
        memcpy (out, "00000000T000000Z", 17);
}
