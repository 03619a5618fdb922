/* s3_client: requests on a curl multi handle, signed, balanced, retried. */
#include "s3_client.h"
#include "http_multi.h"
#include "log.h"
#include "s3_creds.h"
#include "s3_sign.h"
#include "s3_xml.h"
#include "util.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <czmq.h>
#include <openssl/evp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <strings.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum {
    OP_GET, OP_HEAD, OP_LIST, OP_PUT, OP_MP_INIT, OP_MP_PART, OP_MP_DONE, OP_MP_ABORT, OP_DELETE, OP_CHECK
} s_op_t;

static const char *s_op_names[] = {
    "GET", "HEAD", "LIST", "PUT", "MULTIPART-INIT", "MULTIPART-PART", "MULTIPART-COMPLETE", "MULTIPART-ABORT",
    "DELETE", "CHECK"
};

#define S_MAX_QUERY 5
#define S_QUERY_VALUE_CAP 2048  /* bytes of one query value, NUL included */
#define S_KEY_MAX 1024          /* S3's limit on a key, in UTF-8 bytes */
#define S_BODY_CAP (8u << 20)   /* XML replies we keep; list pages are far smaller */

typedef struct s_req s_req_t;
struct s_req {
    sb_http_req_t h;            /* first: the pool's part (transfer, reply, retries) */
    sb_s3_t  *s3;
    s_op_t    op;
    char      key[1024];
    char      qname[S_MAX_QUERY][64];
    char      qvalue[S_MAX_QUERY][S_QUERY_VALUE_CAP];
    size_t    nquery;
    int       bucket_only;      /* the request addresses the bucket, not a key */
    uint64_t  content_seed;     /* a verified GET without an expect function: its content stream */
    char      content_sha256[65];
    char      etag[256];        /* of the reply */
    sb_s3_error_t error;
};

typedef struct {
    char url_base[256];         /* scheme://host[:port] */
    char hostport[256];         /* as in the Host header */
    char scheme[8];
    int  path_style;            /* /BUCKET/KEY on this endpoint (sb_s3_endpoint_path_style) */
} s_endpoint_t;

struct sb_s3 {
    sb_storage_cfg_t cfg;
    sb_s3_settings_t set;
    sb_s3_creds_t    creds;
    sb_s3_sign_cache_t sign_cache;
    sb_http_pool_t  *pool;          /* the transfers: sb_http_ops_t below */
    s_endpoint_t    *endpoints;
    size_t           nendpoints;
    int            (*stop) (void *arg);     /* sb_s3_set_stop's, kept to be put back after a clean-up */
    void            *stop_arg;
};

/* ---------------------------------------------------------------- set-up */

int
sb_s3_endpoint_path_style (const char *url, int path_style)
{
    if (path_style)
        return 1;
    const char *sep = strstr (url, "://");
    const char *host = sep ? sep + 3 : url;
    size_t n = strcspn (host, "/?#");
    char name[256];
    if (host[0] == '[')
        return 1;       /* an IPv6 literal, [::1]:9000 */
    size_t hn = strcspn (host, ":/?#");
    if (hn > n || hn >= sizeof name)
        return 0;
    memcpy (name, host, hn);
    name[hn] = '\0';
    struct in_addr a4;
    struct in6_addr a6;
    /* an IP literal cannot carry the bucket in its name (AWS's S3 endpoint
     * rules take path style for one too); "localhost" names no server that
     * answers BUCKET.localhost unless it is set up for it */
    return inet_pton (AF_INET, name, &a4) == 1 || inet_pton (AF_INET6, name, &a6) == 1
        || strcasecmp (name, "localhost") == 0;
}

static atomic_int s_path_style_said;

static int
s_parse_endpoint (const char *url, int path_style, s_endpoint_t *ep)
{
    const char *sep = strstr (url, "://");
    if (!sep || (size_t) (sep - url) >= sizeof ep->scheme)
        return -1;
    memcpy (ep->scheme, url, (size_t) (sep - url));
    ep->scheme[sep - url] = '\0';
    if (strcmp (ep->scheme, "http") != 0 && strcmp (ep->scheme, "https") != 0)
        return -1;
    const char *host = sep + 3;
    size_t n = strcspn (host, "/?#");
    if (n == 0 || n >= sizeof ep->hostport)
        return -1;
    memcpy (ep->hostport, host, n);
    ep->hostport[n] = '\0';
    if (host[n] && strcmp (host + n, "/") != 0)
        return -1;      /* a base path is not supported */
    /* compose from the caller's url (not from ep's own fields) */
    size_t head = (size_t) (sep - url) + 3 + n;
    if (head >= sizeof ep->url_base)
        return -1;
    memcpy (ep->url_base, url, head);
    ep->url_base[head] = '\0';
    ep->path_style = sb_s3_endpoint_path_style (url, path_style);
    if (ep->path_style && !path_style && atomic_exchange (&s_path_style_said, 1) == 0)
        sb_info ("S3 endpoint %s is an IP address or localhost, which cannot carry the bucket in its host name:"
                 " path-style URLs (/BUCKET/KEY) on it, although path_style (s3_force_path_style) is false",
                 ep->url_base);
    return 0;
}

static const sb_http_ops_t s_ops;

sb_s3_t *
sb_s3_new (const sb_storage_cfg_t *cfg, const sb_s3_settings_t *set, size_t max_in_flight, char *err,
           size_t err_size)
{
    if (sb_http_global_init (err, err_size) != 0)
        return NULL;
    if (cfg->nendpoints == 0) {
        snprintf (err, err_size, "S3 storage needs at least one endpoint (storage.storage_options.endpoint_url)");
        return NULL;
    }
    sb_s3_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->cfg = *cfg;
    self->set = *set;
    self->endpoints = calloc (cfg->nendpoints, sizeof *self->endpoints);
    if (!self->endpoints) {
        snprintf (err, err_size, "out of memory");
        free (self);
        return NULL;
    }
    sb_s3_sign_cache_init (&self->sign_cache);
    for (size_t i = 0; i < cfg->nendpoints; i++) {
        if (s_parse_endpoint (cfg->endpoints[i], set->path_style, &self->endpoints[i]) != 0) {
            snprintf (err, err_size, "endpoint '%s' is not http(s)://HOST[:PORT]", cfg->endpoints[i]);
            free (self->endpoints);
            free (self);
            return NULL;
        }
    }
    self->nendpoints = cfg->nendpoints;
    if (sb_s3_creds_load (&self->creds, err, err_size) != 0) {
        sb_s3_creds_wipe (&self->creds);
        free (self->endpoints);
        free (self);
        return NULL;
    }
    sb_http_cfg_t pc;
    sb_http_cfg_from (cfg, max_in_flight, &pc);
    self->pool = sb_http_pool_new (&pc, &s_ops, self, err, err_size);
    if (!self->pool) {
        sb_s3_destroy (&self);
        return NULL;
    }
    return self;
}

void
sb_s3_destroy (sb_s3_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_s3_t *self = *self_p;
    sb_http_pool_destroy (&self->pool);     /* its requests first: they point into self */
    sb_s3_creds_wipe (&self->creds);
    OPENSSL_cleanse (&self->sign_cache, sizeof self->sign_cache);   /* the signing key derives from the secret */
    free (self->endpoints);
    free (self);
    *self_p = NULL;
}

const char *sb_s3_credentials_source (const sb_s3_t *self) { return self->creds.source; }
size_t sb_s3_endpoint_count (const sb_s3_t *self) { return self->nendpoints; }
const char *sb_s3_endpoint (const sb_s3_t *self, size_t i) { return self->endpoints[i].url_base; }
sb_s3_endpoint_stats_t *sb_s3_stats (sb_s3_t *self, size_t i) { return sb_http_stats (self->pool, i); }
size_t sb_s3_pending (const sb_s3_t *self) { return sb_http_pending (self->pool); }
/* How long a clean-up request (the abort of an upload) may take once the
 * client's stop said stop: a server that does not answer cannot hold it. */
#define S_CLEANUP_S 2.0

/* The stop of a clean-up request: the clock passed *(double *) arg. */
static int
s_past (void *arg)
{
    return sb_now () > *(const double *) arg;
}

void
sb_s3_set_stop (sb_s3_t *self, int (*stop) (void *arg), void *arg)
{
    self->stop = stop;
    self->stop_arg = arg;
    sb_http_set_stop (self->pool, stop, arg);
}
void sb_s3_wakeup (sb_s3_t *self) { sb_http_wakeup (self->pool); }

/* ---------------------------------------------------------------- callbacks */

/* Does the 2xx reply of a ranged GET hold the range that was asked? A
 * server that ignores Range answers 200 with the whole object: reading it
 * would stream the whole object per sample, and a retry would do it again.
 * Sets range_why when not. */
static void
s_check_range (sb_http_req_t *h)
{
    unsigned long long first = h->offset, last = h->offset + h->length - 1;
    if (h->status == 200) {
        curl_off_t cl = -1;
        if (curl_easy_getinfo (h->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) != CURLE_OK)
            cl = -1;
        if (h->offset == 0 && cl >= 0 && (uint64_t) cl == h->length)
            return;     /* the whole object is the range asked */
        char size[48] = "unknown size";
        if (cl >= 0)
            snprintf (size, sizeof size, "%lld bytes", (long long) cl);
        snprintf (h->range_why, sizeof h->range_why,
                  "the server ignored the Range header: asked bytes=%llu-%llu, got HTTP 200 with the whole object"
                  " (%s); not retried", first, last, size);
        return;
    }
    if (h->status != 206) {
        snprintf (h->range_why, sizeof h->range_why, "HTTP %ld to a GET with Range bytes=%llu-%llu (expected 206)",
                  h->status, first, last);
        return;
    }
    unsigned long long a, b;
    if (h->content_range[0]
        && (sscanf (h->content_range, "bytes %llu-%llu/", &a, &b) != 2 || a != first || b != last))
        snprintf (h->range_why, sizeof h->range_why,
                  "the server answered Content-Range '%s' to Range bytes=%llu-%llu; not retried", h->content_range,
                  first, last);
}

/* The ETag of an UploadPart's reply (CompleteMultipartUpload lists them). */
static void
s_on_header (sb_http_req_t *h, const char *data, size_t n)
{
    s_req_t *r = (s_req_t *) h;
    const char *v;
    size_t len;
    if (sb_http_header (data, n, "etag", &v, &len) && len < sizeof r->etag) {
        memcpy (r->etag, v, len);
        r->etag[len] = '\0';
    }
}

/* The bytes a GET verifies against without an expect function: the content
 * stream of its seed. */
static void
s_content_expect (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    const s_req_t *r = ctx;
    sb_content_fill (r->content_seed, offset, buf, len);
}

/* ---------------------------------------------------------------- requests */

/* sb_http_ops_t.prepare: the URL, SigV4 headers and method of r's next
 * attempt (a new signature each time: x-amz-date moves on). */
static int
s_prepare (void *ctx, sb_http_req_t *h, char *why, size_t why_size)
{
    sb_s3_t *self = ctx;
    s_req_t *r = (s_req_t *) h;
    s_endpoint_t *ep = &self->endpoints[h->endpoint];
    r->etag[0] = '\0';
    /* GETs stream their payload; every other reply is kept: XML, bounded */
    h->download = r->op == OP_GET;
    h->upload = r->op == OP_PUT || r->op == OP_MP_PART;
    h->body_max = h->keep_body ? h->body_limit + 1 : r->op == OP_LIST ? SB_S3_LIST_PAGE_MAX + 1 : S_BODY_CAP;
    h->count = r->op == OP_GET ? SB_HTTP_COUNT_RECEIVED : SB_HTTP_COUNT_UPLOAD;

    char raw_path[1400], host[320];
    const char *key = r->bucket_only ? "" : r->key;
    if (ep->path_style) {
        snprintf (host, sizeof host, "%s", ep->hostport);
        if (sb_strf (raw_path, sizeof raw_path, "/%s%s%s", self->cfg.store, r->bucket_only ? "" : "/", key) != 0)
            goto too_long;
    }
    else {
        snprintf (host, sizeof host, "%s.%s", self->cfg.store, ep->hostport);
        if (sb_strf (raw_path, sizeof raw_path, "/%s", key) != 0)
            goto too_long;
    }
    sb_s3_pair_t query[S_MAX_QUERY];
    for (size_t i = 0; i < r->nquery; i++) {
        query[i].name = r->qname[i];
        query[i].value = r->qvalue[i];
    }
    char range[96] = "";
    if (h->ranged)
        snprintf (range, sizeof range, "bytes=%llu-%llu", (unsigned long long) h->offset,
                  (unsigned long long) (h->offset + h->length - 1));
    const char *payload = r->content_sha256[0] ? r->content_sha256 : "UNSIGNED-PAYLOAD";
    char amz_date[17];
    sb_s3_amz_date (time (NULL), amz_date);
    sb_s3_sign_req_t sreq = {
        .method = r->op == OP_HEAD || r->op == OP_CHECK ? (r->op == OP_HEAD ? "HEAD" : "GET")
                : r->op == OP_PUT || r->op == OP_MP_PART ? "PUT"
                : r->op == OP_MP_INIT || r->op == OP_MP_DONE ? "POST"
                : r->op == OP_MP_ABORT || r->op == OP_DELETE ? "DELETE" : "GET",
        .host = host, .path = raw_path, .query = query, .nquery = r->nquery, .headers = NULL, .nheaders = 0,
        .payload_sha256 = payload, .amz_date = amz_date, .region = self->set.region, .service = "s3",
        .access_key = self->creds.access_key, .secret_key = self->creds.secret_key,
        .session_token = self->creds.session_token[0] ? self->creds.session_token : NULL,
    };
    char auth[1024], path[4200], qs[S_MAX_QUERY * (64 + 3 * S_QUERY_VALUE_CAP)];
    if (sb_s3_sign (&sreq, &self->sign_cache, auth, sizeof auth, path, sizeof path, qs, sizeof qs) != 0) {
        snprintf (why, why_size, "cannot sign the request (key too long?)");
        return -1;
    }
    char url[sizeof qs + 4800];
    if (ep->path_style) {
        if (sb_strf (url, sizeof url, "%s%s%s%s", ep->url_base, path, qs[0] ? "?" : "", qs) != 0)
            goto too_long;
    }
    else if (sb_strf (url, sizeof url, "%s://%s%s%s%s", ep->scheme, host, path, qs[0] ? "?" : "", qs) != 0)
        goto too_long;

    char line[1200];
    struct curl_slist *list = NULL;
#define ADD_HEADER(...) do { snprintf (line, sizeof line, __VA_ARGS__); \
                             struct curl_slist *t = curl_slist_append (list, line); \
                             if (!t) { curl_slist_free_all (list); snprintf (why, why_size, "out of memory"); return -1; } \
                             list = t; } while (0)
    ADD_HEADER ("Host: %s", host);
    ADD_HEADER ("x-amz-date: %s", amz_date);
    ADD_HEADER ("x-amz-content-sha256: %s", payload);
    if (self->creds.session_token[0])
        ADD_HEADER ("x-amz-security-token: %s", self->creds.session_token);
    ADD_HEADER ("Authorization: %s", auth);
    if (range[0])
        ADD_HEADER ("Range: %s", range);
    if (r->op == OP_PUT || r->op == OP_MP_PART || r->op == OP_MP_DONE || r->op == OP_MP_INIT)
        ADD_HEADER ("Expect:");     /* no 100-continue round trip */
    if (r->op == OP_MP_DONE)
        ADD_HEADER ("Content-Type: application/xml");
#undef ADD_HEADER
    h->headers = list;

    CURL *e = h->easy;
    CURLcode rc = CURLE_OK;
#define SET(opt, val) do { if (rc == CURLE_OK) rc = curl_easy_setopt (e, opt, val); } while (0)
    SET (CURLOPT_URL, url);
    SET (CURLOPT_HTTPHEADER, h->headers);
    switch (r->op) {
    case OP_HEAD:
        SET (CURLOPT_NOBODY, 1L);
        break;
    case OP_MP_INIT:
        SET (CURLOPT_POST, 1L);
        SET (CURLOPT_POSTFIELDSIZE, 0L);
        SET (CURLOPT_POSTFIELDS, "");
        break;
    case OP_MP_DONE:
        SET (CURLOPT_POST, 1L);
        SET (CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) h->up_size);
        SET (CURLOPT_POSTFIELDS, h->up_body);
        break;
    case OP_MP_ABORT:
    case OP_DELETE:
        SET (CURLOPT_CUSTOMREQUEST, "DELETE");
        break;
    default:
        break;
    }
#undef SET
    if (rc != CURLE_OK) {
        snprintf (why, why_size, "curl_easy_setopt: %s", curl_easy_strerror (rc));
        return -1;
    }
    return 0;
too_long:
    snprintf (why, why_size, "URL too long for key '%s'", r->key);
    return -1;
}

/* Every fact of r's failed attempt in r->error, and one sentence of them. */
static void
s_fill_error (sb_s3_t *self, s_req_t *r, CURLcode cc, const char *extra)
{
    const sb_http_req_t *h = &r->h;
    sb_s3_error_t *e = &r->error;
    memset (e, 0, sizeof *e);
    snprintf (e->endpoint, sizeof e->endpoint, "%s", self->endpoints[h->endpoint].url_base);
    snprintf (e->op, sizeof e->op, "%s", s_op_names[r->op]);
    snprintf (e->key, sizeof e->key, "%s", r->bucket_only && r->op != OP_LIST ? "" : r->key);   /* LIST: the prefix */
    e->attempt = h->attempt;
    e->http_status = h->status;
    e->curl_code = (int) cc;
    if (cc != CURLE_OK)
        snprintf (e->curl_text, sizeof e->curl_text, "%s", h->errbuf[0] ? h->errbuf : curl_easy_strerror (cc));
    long os_errno = 0;
    if (h->easy && curl_easy_getinfo (h->easy, CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK)
        e->os_errno = (int) os_errno;
    if (h->body && h->body_len && h->status >= 300) {
        /* optional: an error body without them leaves the fields empty */
        sb_s3_xml_find (h->body, h->body_len, "Code", e->s3_code, sizeof e->s3_code);
        sb_s3_xml_find (h->body, h->body_len, "Message", e->s3_message, sizeof e->s3_message);
    }
    /* One sentence with every fact, most specific cause first. */
    char cause[1024];
    if (cc != CURLE_OK)
        snprintf (cause, sizeof cause, "%s%s%s", e->os_errno ? strerror (e->os_errno) : "", e->os_errno ? ": " : "",
                  e->curl_text);
    else if (e->s3_code[0])
        snprintf (cause, sizeof cause, "HTTP %ld %s: %s", e->http_status, e->s3_code, e->s3_message);
    else if (e->http_status >= 300)
        snprintf (cause, sizeof cause, "HTTP %ld", e->http_status);
    else
        snprintf (cause, sizeof cause, "%s", extra ? extra : "failed");
    if (cc != CURLE_OK || e->http_status >= 300)
        if (extra) {
            size_t n = strlen (cause);
            snprintf (cause + n, sizeof cause - n, " (%s)", extra);
        }
    snprintf (e->text, sizeof e->text, "%s %s%s%s on %s failed (attempt %d): %s [http %ld, curl %d, errno %d]", e->op,
              self->cfg.store, e->key[0] ? "/" : "", e->key, e->endpoint, e->attempt, cause, e->http_status,
              e->curl_code, e->os_errno);
}

/* sb_http_ops_t.cancelled: r ended by a signal or the client's stop
 * (sb_s3_set_stop): not a failure of the storage, and said so. */
static void
s_fill_cancelled (void *ctx, sb_http_req_t *h)
{
    sb_s3_t *self = ctx;
    s_req_t *r = (s_req_t *) h;
    s_fill_error (self, r, CURLE_ABORTED_BY_CALLBACK, NULL);
    sb_s3_error_t *e = &r->error;
    const char *why = zsys_interrupted ? "interrupted by a signal" : "stopped (the session ended)";
    e->cancelled = 1;
    e->os_errno = 0;
    snprintf (e->curl_text, sizeof e->curl_text, "%s", why);
    snprintf (e->text, sizeof e->text, "%s %s%s%s on %s: %s (attempt %d)", e->op, self->cfg.store, e->key[0] ? "/" : "",
              e->key, e->endpoint, why, e->attempt);
}

int
sb_s3_error_is_transient (const sb_s3_error_t *e)
{
    switch (e->curl_code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return 1;
    case CURLE_OK:
        break;
    default:
        return 0;
    }
    long s = e->http_status;
    return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
}

/* sb_http_ops_t.fail */
static int
s_fail (void *ctx, sb_http_req_t *h, CURLcode cc, const char *extra)
{
    s_req_t *r = (s_req_t *) h;
    s_fill_error (ctx, r, cc, extra);
    return sb_s3_error_is_transient (&r->error);
}

static const sb_http_ops_t s_ops = {
    .prepare = s_prepare, .header = s_on_header, .check_range = s_check_range, .fail = s_fail,
    .cancelled = s_fill_cancelled,
};

static s_req_t *
s_req_new (sb_s3_t *self, s_op_t op, const char *key)
{
    s_req_t *r = calloc (1, sizeof *r);
    if (!r)
        return NULL;
    sb_http_req_init (self->pool, &r->h, r->error.text);
    r->s3 = self;
    r->op = op;
    if (key && sb_strf (r->key, sizeof r->key, "%s", key) != 0) {
        free (r);
        return NULL;
    }
    return r;
}

/* Add a query parameter. Returns 0, or -1 when the request has no room
 * for it (more than S_MAX_QUERY parameters, or a longer name or value):
 * a parameter is never dropped or cut short. */
static int
s_req_query (s_req_t *r, const char *name, const char *value)
{
    if (r->nquery >= S_MAX_QUERY
        || sb_strf (r->qname[r->nquery], sizeof r->qname[0], "%s", name) != 0
        || sb_strf (r->qvalue[r->nquery], sizeof r->qvalue[0], "%s", value ? value : "") != 0)
        return -1;
    r->nquery++;
    return 0;
}

/* Run a blocking request to its end (retries included). 0 on success. */
static int
s_perform (sb_s3_t *self, s_req_t *r, sb_s3_error_t *e)
{
    int rc = sb_http_perform (self->pool, &r->h);
    if (rc != 0 && e)
        *e = r->error;
    return rc;
}

static void
s_req_done (sb_s3_t *self, s_req_t *r)
{
    if (r)
        sb_http_req_done (self->pool, &r->h);
}

static int
s_oom (sb_s3_error_t *e, const char *op, const char *key)
{
    if (e) {
        memset (e, 0, sizeof *e);
        snprintf (e->op, sizeof e->op, "%s", op);
        snprintf (e->key, sizeof e->key, "%s", key ? key : "");
        snprintf (e->text, sizeof e->text, "%s %s: out of memory", op, key ? key : "");
    }
    return -1;
}

/* ---------------------------------------------------------------- blocking API */

int
sb_s3_check_endpoint (sb_s3_t *self, size_t i, sb_s3_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_HEAD, NULL);
    if (!r)
        return s_oom (e, "HEAD", NULL);
    r->bucket_only = 1;
    r->h.fixed_endpoint = (int) i;
    r->h.no_retry = 1;
    int rc = s_perform (self, r, e);
    long status = r->h.status;
    s_req_done (self, r);
    if (rc == 0 || status < 300)
        return rc;
    /* HEAD replies carry no body: ask again with a GET to learn the S3 code */
    r = s_req_new (self, OP_CHECK, NULL);
    if (!r)
        return s_oom (e, "CHECK", NULL);
    r->bucket_only = 1;
    r->h.fixed_endpoint = (int) i;
    r->h.no_retry = 1;
    sb_s3_error_t e2;
    if (s_req_query (r, "list-type", "2") == 0 && s_req_query (r, "max-keys", "0") == 0
        && s_perform (self, r, &e2) != 0 && e2.s3_code[0] && e)
        *e = e2;
    s_req_done (self, r);
    if (e && e->s3_code[0] == '\0')
        snprintf (e->s3_code, sizeof e->s3_code, "%s", status == 404 ? "NoSuchBucket" : status == 403 ? "AccessDenied" : "");
    return -1;
}

/* The first bytes of a reply, printable, for an error message. */
static void
s_snippet (const char *body, size_t len, char *out, size_t out_size)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 4 < out_size && i < 60; i++) {
        unsigned char c = (unsigned char) body[i];
        out[o++] = c >= 0x20 && c < 0x7f ? (char) c : '.';
    }
    if (len > 60 && o + 4 < out_size) {
        memcpy (out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/* "page N", and the continuation token that asked for it after the first
 * page, for an error message (a page number alone does not tell which
 * request of a parallel listing it was). */
static void
s_page_name (uint64_t page, const char *token, char *out, size_t out_size)
{
    if (page > 1 && token && token[0])
        snprintf (out, out_size, "page %llu (continuation token '%.64s%s')", (unsigned long long) page, token,
                  strlen (token) > 64 ? "..." : "");
    else
        snprintf (out, out_size, "page %llu", (unsigned long long) page);
}

/* A listing page that cannot be taken as it is: the request's error with
 * this cause, never retried (the server answered, and would answer so
 * again). Returns -1. */
static int
s_list_fail (sb_s3_t *self, s_req_t *r, sb_s3_error_t *e, const char *fmt, ...)
{
    char cause[1536];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (cause, sizeof cause, fmt, ap);
    va_end (ap);
    s_fill_error (self, r, CURLE_OK, cause);
    if (e)
        *e = r->error;
    s_req_done (self, r);
    return -1;
}

/* Size of a listed object: decimal digits only, no sign, no overflow
 * (the caller bounds it by SB_S3_OBJECT_MAX). */
static int
s_parse_size (const char *text, uint64_t *size)
{
    if (text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    char *endp = NULL;
    unsigned long long v = strtoull (text, &endp, 10);
    if (errno != 0 || !endp || *endp != '\0')
        return -1;
    *size = (uint64_t) v;
    return 0;
}

static const char *
s_memfind (const char *hay, size_t len, const char *needle)
{
    size_t n = strlen (needle);
    for (size_t i = 0; n <= len && i + n <= len; i++)
        if (hay[i] == needle[0] && memcmp (hay + i, needle, n) == 0)
            return hay + i;
    return NULL;
}

/* A ListObjectsV2 page is taken only when it is a whole ListBucketResult
 * document: anything else (an HTML page, a proxy's reply, an <Error> with
 * status 200, a body cut short) is an error, never an empty bucket. Every
 * <Contents> must hold a Key of at most 1024 bytes under prefix, sorting
 * after start_after and after the key before it (S3 lists in UTF-8 binary
 * order; a key outside the range would be cut or read as another), and a
 * decimal Size of at most SB_S3_OBJECT_MAX; KeyCount, when present, must
 * match. A page is at most SB_S3_LIST_PAGE_MAX bytes (the transfer stops
 * there). A truncated page must carry a new NextContinuationToken: a
 * token that repeats the previous page's, or one seen at the last
 * power-of-two page (Brent's cycle check: any cycle of tokens is found
 * within twice its length), stops the listing. */
int
sb_s3_list (sb_s3_t *self, const char *prefix, const char *start_after, const char *end_at, size_t page_size,
            sb_s3_list_fn fn, void *ctx, sb_s3_error_t *e)
{
    char token[S_QUERY_VALUE_CAP] = "", prev[S_QUERY_VALUE_CAP] = "", mark[S_QUERY_VALUE_CAP] = "";
    char key[S_KEY_MAX + 2], size_text[32], truncated[16], page[16], count_text[32], pname[128];
    /* the key before (start_after at first): every key must sort after it */
    char last[S_QUERY_VALUE_CAP] = "";    /* a longer start_after is refused with the request below */
    int have_last = start_after && *start_after, last_is_start = have_last;
    if (have_last)
        snprintf (last, sizeof last, "%s", start_after);
    size_t plen = prefix ? strlen (prefix) : 0;
    snprintf (page, sizeof page, "%zu", page_size ? page_size : 1000);
    uint64_t pages = 0, mark_page = 0;
    for (;;) {
        if (zsys_interrupted) {     /* a signal: stop between pages (pages may hold no key) */
            if (e) {
                memset (e, 0, sizeof *e);
                snprintf (e->op, sizeof e->op, "LIST");
                snprintf (e->text, sizeof e->text, "listing interrupted by a signal");
            }
            return -1;
        }
        s_req_t *r = s_req_new (self, OP_LIST, prefix);
        if (!r)
            return s_oom (e, "LIST", prefix);
        r->bucket_only = 1;
        if (s_req_query (r, "list-type", "2") != 0 || s_req_query (r, "prefix", prefix ? prefix : "") != 0
            || s_req_query (r, "max-keys", page) != 0
            || (pages > 0 && s_req_query (r, "continuation-token", token) != 0)
            || (pages == 0 && start_after && *start_after && s_req_query (r, "start-after", start_after) != 0))
            return s_list_fail (self, r, e, "ListObjectsV2 request parameters too long (start-after or prefix over"
                                " %d bytes)", S_QUERY_VALUE_CAP - 1);
        if (s_perform (self, r, e) != 0) {
            if (r->h.body_over) {
                s_page_name (pages + 1, token, pname, sizeof pname);
                return s_list_fail (self, r, e, "ListObjectsV2 %s is over %llu bytes (%llu MiB), the bound on one"
                                    " listing page (a page of 1000 keys is about 300 KB); not taken", pname,
                                    (unsigned long long) SB_S3_LIST_PAGE_MAX,
                                    (unsigned long long) (SB_S3_LIST_PAGE_MAX >> 20));
            }
            s_req_done (self, r);
            return -1;
        }
        pages++;
        s_page_name (pages, token, pname, sizeof pname);
        const char *xml = r->h.body ? r->h.body : "";
        size_t len = r->h.body_len;
        const char *root = s_memfind (xml, len, "<ListBucketResult");
        if (!root || !s_memfind (root, len - (size_t) (root - xml), "</ListBucketResult>")
            || !strchr ("> \t\r\n", root[17])) {
            char head[128];
            s_snippet (xml, len, head, sizeof head);
            return s_list_fail (self, r, e,
                                "ListObjectsV2 page %llu is not a ListBucketResult document (HTTP %ld, %zu bytes: "
                                "'%s'); a malformed listing is not taken as an empty one",
                                (unsigned long long) pages, r->h.status, len, head);
        }
        if (sb_s3_xml_find (xml, len, "IsTruncated", truncated, sizeof truncated) != 0
            || (strcmp (truncated, "true") != 0 && strcmp (truncated, "false") != 0))
            return s_list_fail (self, r, e, "ListObjectsV2 page %llu has no IsTruncated true/false",
                                (unsigned long long) pages);
        int more = strcmp (truncated, "true") == 0;
        /* each <Contents> holds <Key> and <Size> */
        size_t pos = 0, nkeys = 0;
        int stop = 0;
        for (;;) {
            const char *open = s_memfind (xml + pos, len - pos, "<Contents>");
            if (!open)
                break;
            const char *close = s_memfind (open, len - (size_t) (open - xml), "</Contents>");
            if (!close)
                return s_list_fail (self, r, e, "ListObjectsV2 page %llu has a <Contents> without its end",
                                    (unsigned long long) pages);
            const char *body = open + 10;
            size_t blen = (size_t) (close - body);
            pos = (size_t) (close - xml) + 11;
            nkeys++;
            int krc = sb_s3_xml_find (body, blen, "Key", key, sizeof key);
            if (krc == -2 || (krc == 0 && strlen (key) > S_KEY_MAX)) {
                char head[128];
                s_snippet (body, blen, head, sizeof head);
                return s_list_fail (self, r, e, "ListObjectsV2 page %llu: object %zu has a key over %d bytes"
                                    " (S3's limit): %s", (unsigned long long) pages, nkeys, S_KEY_MAX, head);
            }
            if (krc != 0)
                return s_list_fail (self, r, e, "ListObjectsV2 page %llu: object %zu has no Key",
                                    (unsigned long long) pages, nkeys);
            if (plen && strncmp (key, prefix, plen) != 0)
                return s_list_fail (self, r, e, "ListObjectsV2 %s: key '%.300s%s' is not under the prefix '%.300s%s'"
                                    " that was asked for; a listing with keys outside its prefix is not taken",
                                    pname, key, strlen (key) > 300 ? "..." : "", prefix, plen > 300 ? "..." : "");
            if (have_last && strcmp (key, last) <= 0)
                return s_list_fail (self, r, e, "ListObjectsV2 %s: key '%.300s%s' does not sort after %s '%.300s%s'"
                                    " (the server ignored start-after, or listed out of order); not taken", pname,
                                    key, strlen (key) > 300 ? "..." : "",
                                    last_is_start ? "start-after" : "the key before it,", last,
                                    strlen (last) > 300 ? "..." : "");
            memcpy (last, key, strlen (key) + 1);
            have_last = 1;
            last_is_start = 0;
            uint64_t size = 0;
            int src = sb_s3_xml_find (body, blen, "Size", size_text, sizeof size_text);
            if (src != 0 || s_parse_size (size_text, &size) != 0)
                return s_list_fail (self, r, e, "ListObjectsV2 page %llu: key '%s' has %s%s%s",
                                    (unsigned long long) pages, key, src != 0 ? "no usable Size" : "Size '",
                                    src != 0 ? "" : size_text, src != 0 ? "" : "', not a byte count");
            /* larger sizes do not fit the catalog's signed 64 bits, nor any S3 object */
            if (size > SB_S3_OBJECT_MAX)
                return s_list_fail (self, r, e, "ListObjectsV2 %s: key '%s' has Size '%s', over S3's limit of %llu"
                                    " bytes (5 TiB) for one object", pname, key, size_text,
                                    (unsigned long long) SB_S3_OBJECT_MAX);
            if (end_at && strcmp (key, end_at) > 0) {
                stop = 1;
                break;
            }
            if (fn (ctx, key, size) != 0) {
                stop = 1;
                break;
            }
        }
        if (stop) {
            s_req_done (self, r);
            return 0;
        }
        if (sb_s3_xml_find (xml, len, "KeyCount", count_text, sizeof count_text) == 0) {
            uint64_t declared = 0;
            if (s_parse_size (count_text, &declared) != 0 || declared != nkeys)
                return s_list_fail (self, r, e, "ListObjectsV2 page %llu says KeyCount '%s' but holds %zu objects",
                                    (unsigned long long) pages, count_text, nkeys);
        }
        if (!more) {
            s_req_done (self, r);
            return 0;
        }
        int trc = sb_s3_xml_find (xml, len, "NextContinuationToken", token, sizeof token);
        if (trc == -2)
            return s_list_fail (self, r, e, "ListObjectsV2 page %llu: NextContinuationToken over %d bytes",
                                (unsigned long long) pages, S_QUERY_VALUE_CAP - 1);
        if (trc != 0 || !token[0])
            return s_list_fail (self, r, e, "ListObjectsV2 page %llu says IsTruncated=true without a"
                                " NextContinuationToken: cannot go on", (unsigned long long) pages);
        if (pages > 1 && strcmp (token, prev) == 0)
            return s_list_fail (self, r, e, "ListObjectsV2 page %llu says IsTruncated=true with the same"
                                " NextContinuationToken as the page before ('%.64s'%s): the listing would never end",
                                (unsigned long long) pages, token, strlen (token) > 64 ? "..." : "");
        if (mark_page > 0 && strcmp (token, mark) == 0)
            return s_list_fail (self, r, e, "ListObjectsV2 page %llu says IsTruncated=true with the"
                                " NextContinuationToken of page %llu ('%.64s'%s): the listing would never end",
                                (unsigned long long) pages, (unsigned long long) mark_page, token,
                                strlen (token) > 64 ? "..." : "");
        if ((pages & (pages - 1)) == 0) {
            memcpy (mark, token, sizeof mark);
            mark_page = pages;
        }
        memcpy (prev, token, sizeof prev);
        s_req_done (self, r);
    }
}

/* SHA-256 of generated content, streamed through a fixed buffer (payload
 * signing costs one more pass over the bytes, never the whole object in
 * memory). Returns 0 or -1. */
static int
s_hash_content (sb_s3_fill_fn fill, void *ctx, uint64_t base, uint64_t size, char out[65])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new ();
    uint8_t *buf = malloc (1 << 20);
    unsigned char digest[32];
    unsigned int dlen = 0;
    int rc = md && buf && EVP_DigestInit_ex (md, EVP_sha256 (), NULL) == 1 ? 0 : -1;
    for (uint64_t done = 0; rc == 0 && done < size;) {
        size_t n = size - done < (1 << 20) ? (size_t) (size - done) : (1 << 20);
        fill (ctx, base + done, buf, n);
        rc = EVP_DigestUpdate (md, buf, n) == 1 ? 0 : -1;
        done += n;
    }
    if (rc == 0 && EVP_DigestFinal_ex (md, digest, &dlen) == 1 && dlen == 32)
        for (int i = 0; i < 32; i++)
            snprintf (out + 2 * i, 3, "%02x", digest[i]);
    else
        rc = -1;
    free (buf);
    EVP_MD_CTX_free (md);
    return rc;
}

static int
s_put_single (sb_s3_t *self, const char *key, uint64_t size, sb_s3_fill_fn fill, void *ctx, sb_s3_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_PUT, key);
    if (!r)
        return s_oom (e, "PUT", key);
    r->h.fill = fill;
    r->h.fill_ctx = ctx;
    r->h.up_size = size;
    if (self->set.sign_payload && s_hash_content (fill, ctx, 0, size, r->content_sha256) != 0) {
        s_req_done (self, r);
        return s_oom (e, "PUT", key);
    }
    int rc = s_perform (self, r, e);
    s_req_done (self, r);
    return rc;
}

int
sb_s3_part_plan (uint64_t size, uint64_t part, uint64_t *part_out, uint64_t *nparts, char *why, size_t why_size)
{
    if (part < SB_S3_PART_MIN || part > SB_S3_PART_MAX) {
        snprintf (why, why_size, "multipart part size %llu is outside S3's %llu to %llu bytes",
                  (unsigned long long) part, SB_S3_PART_MIN, SB_S3_PART_MAX);
        return -1;
    }
    if (size > SB_S3_OBJECT_MAX) {
        snprintf (why, why_size, "an object of %llu bytes is over S3's limit of %llu bytes (5 TiB)",
                  (unsigned long long) size, SB_S3_OBJECT_MAX);
        return -1;
    }
    uint64_t n = size / part + (size % part != 0);
    if (n <= SB_S3_PARTS_MAX) {
        *part_out = part;
        *nparts = n ? n : 1;
        return 0;
    }
    /* the smallest MiB multiple that makes at most 10,000 parts (at most
     * 525 MiB for a 5 TiB object: within S3's 5 GiB) */
    uint64_t need = size / SB_S3_PARTS_MAX + (size % SB_S3_PARTS_MAX != 0);
    uint64_t mib = 1ull << 20;
    need = (need + mib - 1) / mib * mib;
    *part_out = need;
    *nparts = size / need + (size % need != 0);
    return 1;
}

/* The ETag of a finished UploadPart into etag (escaped for the XML);
 * 0, or -1 with e set. */
static int
s_part_etag (sb_s3_t *self, s_req_t *r, char *etag, size_t size, sb_s3_error_t *e)
{
    if (sb_s3_xml_escape (r->etag, etag, size) == 0 && r->etag[0])
        return 0;
    s_fill_error (self, r, CURLE_OK, "UploadPart reply has no usable ETag");
    if (e)
        *e = r->error;
    return -1;
}

/* A multipart upload of size bytes in parts of part_cfg bytes (raised to
 * fit 10,000 parts), window parts in flight at once (the lowest numbers
 * first, the next one as soon as one is done), as DLIO's libraries upload
 * checkpoints. Aborted on failure once no part is in flight. */
static int
s_multipart (sb_s3_t *self, const char *key, uint64_t size, uint64_t part_cfg, uint64_t window, sb_s3_fill_fn fill,
             void *ctx, sb_s3_error_t *e)
{
    uint64_t part = 0, nparts = 0;
    char why[256];
    int plan = sb_s3_part_plan (size, part_cfg, &part, &nparts, why, sizeof why);
    if (plan < 0) {
        if (e) {
            memset (e, 0, sizeof *e);
            snprintf (e->op, sizeof e->op, "MULTIPART-INIT");
            snprintf (e->key, sizeof e->key, "%s", key);
            snprintf (e->text, sizeof e->text, "MULTIPART-INIT %s/%s: %s", self->cfg.store, key, why);
        }
        return -1;
    }
    if (plan > 0)
        sb_info ("multipart upload of %s: %llu bytes in parts of %llu would be over S3's 10000 parts: %llu parts of"
                 " %llu bytes instead", key, (unsigned long long) size, (unsigned long long) part_cfg,
                 (unsigned long long) nparts, (unsigned long long) part);
    if (window < 1)
        window = 1;
    if (window > nparts)
        window = nparts;
    sb_debug ("multipart upload of %s: %llu bytes, %llu parts of %llu bytes, %llu at once", key,
              (unsigned long long) size, (unsigned long long) nparts, (unsigned long long) part,
              (unsigned long long) window);
    s_req_t *r = s_req_new (self, OP_MP_INIT, key);
    if (!r)
        return s_oom (e, "MULTIPART-INIT", key);
    if (s_req_query (r, "uploads", "") != 0) {
        s_req_done (self, r);
        return s_oom (e, "MULTIPART-INIT", key);
    }
    if (s_perform (self, r, e) != 0) {
        s_req_done (self, r);
        return -1;
    }
    char upload_id[S_QUERY_VALUE_CAP];
    if (!r->h.body || sb_s3_xml_find (r->h.body, r->h.body_len, "UploadId", upload_id, sizeof upload_id) != 0) {
        s_fill_error (self, r, CURLE_OK, "CreateMultipartUpload reply has no UploadId");
        if (e)
            *e = r->error;
        s_req_done (self, r);
        return -1;
    }
    s_req_done (self, r);
    /* one <Part> is 51 bytes of tags, up to 20 digits and an escaped ETag
     * of at most 399 bytes (sb_s3_xml_escape into char[400]) */
    enum { S_ETAG = 400 };
    size_t xml_cap = 128 + (size_t) nparts * 480;
    char *xml = malloc (xml_cap);
    char *etags = calloc ((size_t) nparts, S_ETAG);
    s_req_t **slot = calloc ((size_t) window, sizeof *slot);
    uint64_t *slot_part = calloc ((size_t) window, sizeof *slot_part);
    if (!xml || !etags || !slot || !slot_part) {
        free (xml);
        free (etags);
        free (slot);
        free (slot_part);
        return s_oom (e, "MULTIPART-PART", key);
    }
    int rc = 0;
    uint64_t next = 0, in_flight = 0;
    while ((rc == 0 && next < nparts) || in_flight > 0) {
        /* a failure starts no more parts; those in flight end first */
        for (uint64_t i = 0; rc == 0 && next < nparts && i < window; i++) {
            if (slot[i])
                continue;
            r = s_req_new (self, OP_MP_PART, key);
            if (!r) {
                rc = s_oom (e, "MULTIPART-PART", key);
                break;
            }
            char num[24];
            snprintf (num, sizeof num, "%llu", (unsigned long long) (next + 1));
            if (s_req_query (r, "partNumber", num) != 0 || s_req_query (r, "uploadId", upload_id) != 0) {
                s_req_done (self, r);
                rc = s_oom (e, "MULTIPART-PART", key);
                break;
            }
            r->h.fill = fill;
            r->h.fill_ctx = ctx;
            r->h.up_base = next * part;
            r->h.up_size = size - next * part < part ? size - next * part : part;
            if (self->set.sign_payload
                && s_hash_content (fill, ctx, r->h.up_base, r->h.up_size, r->content_sha256) != 0) {
                s_req_done (self, r);
                rc = s_oom (e, "MULTIPART-PART", key);
                break;
            }
            if (sb_http_start (self->pool, &r->h) != 0) {
                if (e)
                    *e = r->error;
                s_req_done (self, r);
                rc = -1;
                break;
            }
            slot[i] = r;
            slot_part[i] = next++;
            in_flight++;
        }
        if (in_flight == 0)
            break;
        if (sb_http_pump (self->pool, 100) != 0)
            for (uint64_t i = 0; i < window; i++)
                if (slot[i])
                    sb_http_abandon (self->pool, &slot[i]->h);
        for (uint64_t i = 0; i < window; i++) {
            r = slot[i];
            if (!r || !r->h.finished)
                continue;
            if (r->h.failed) {
                if (rc == 0 && e)
                    *e = r->error;
                rc = -1;
            }
            else if (rc == 0 && s_part_etag (self, r, etags + slot_part[i] * S_ETAG, S_ETAG, e) != 0)
                rc = -1;
            s_req_done (self, r);
            slot[i] = NULL;
            in_flight--;
        }
    }
    free (slot);
    free (slot_part);
    size_t xl = (size_t) snprintf (xml, xml_cap, "<CompleteMultipartUpload>");
    for (uint64_t p = 0; rc == 0 && p < nparts; p++) {
        int n = snprintf (xml + xl, xml_cap - xl, "<Part><PartNumber>%llu</PartNumber><ETag>%s</ETag></Part>",
                          (unsigned long long) (p + 1), etags + p * S_ETAG);
        if (n < 0 || (size_t) n >= xml_cap - xl) {
            if (e) {
                memset (e, 0, sizeof *e);
                snprintf (e->op, sizeof e->op, "MULTIPART-COMPLETE");
                snprintf (e->key, sizeof e->key, "%s", key);
                snprintf (e->text, sizeof e->text, "MULTIPART-COMPLETE %s/%s: CompleteMultipartUpload body too large",
                          self->cfg.store, key);
            }
            rc = -1;
        }
        else
            xl += (size_t) n;
    }
    free (etags);
    if (rc == 0) {
        int n = snprintf (xml + xl, xml_cap - xl, "</CompleteMultipartUpload>");
        xl += n > 0 && (size_t) n < xml_cap - xl ? (size_t) n : 0;
        r = s_req_new (self, OP_MP_DONE, key);
        if (!r)
            rc = s_oom (e, "MULTIPART-COMPLETE", key);
        else {
            if (s_req_query (r, "uploadId", upload_id) != 0)
                rc = -1;    /* cannot happen: the same upload_id fitted above */
            r->h.up_body = xml;
            r->h.up_size = xl;
            if (sb_s3_sha256_hex (xml, xl, r->content_sha256) != 0)
                snprintf (r->content_sha256, sizeof r->content_sha256, "UNSIGNED-PAYLOAD");
            if (rc == 0)
                rc = s_perform (self, r, e);
            else
                s_oom (e, "MULTIPART-COMPLETE", key);
            /* CompleteMultipartUpload can answer 200 with an <Error> body */
            if (rc == 0 && r->h.body && strstr (r->h.body, "<Error>")) {
                r->h.status = 500;
                s_fill_error (self, r, CURLE_OK, "CompleteMultipartUpload returned an error");
                if (e)
                    *e = r->error;
                rc = -1;
            }
            s_req_done (self, r);
        }
    }
    free (xml);
    if (rc != 0) {
        /* best effort: do not leave the parts behind (S3 keeps an upload
         * never completed nor aborted, and bills its parts, until a
         * lifecycle rule ends it), also when the client's stop gave the
         * upload up (a KV-cache window's end, the session's end): the abort
         * then has S_CLEANUP_S of its own; a signal still stops it */
        double deadline = sb_now () + S_CLEANUP_S;
        if (self->stop && self->stop (self->stop_arg))
            sb_http_set_stop (self->pool, s_past, &deadline);
        r = s_req_new (self, OP_MP_ABORT, key);
        if (r) {
            sb_s3_error_t ignored = { .text = "uploadId too long" };
            if (s_req_query (r, "uploadId", upload_id) != 0 || s_perform (self, r, &ignored) != 0)
                sb_debug ("abort of multipart upload %s failed: %s", key, ignored.text);
            s_req_done (self, r);
        }
        sb_http_set_stop (self->pool, self->stop, self->stop_arg);
    }
    return rc;
}

int
sb_s3_put (sb_s3_t *self, const char *key, uint64_t size, sb_s3_fill_fn fill, void *ctx, sb_s3_error_t *e)
{
    /* over 5 GiB a single PUT is refused by S3: multipart whatever the threshold */
    if ((size >= self->set.multipart_threshold && self->set.multipart_part > 0 && size > self->set.multipart_part)
        || size > SB_S3_PART_MAX)
        return s_multipart (self, key, size, self->set.multipart_part, 1, fill, ctx, e);
    return s_put_single (self, key, size, fill, ctx, e);
}

int
sb_s3_put_parts (sb_s3_t *self, const char *key, uint64_t size, uint64_t part, uint64_t threshold, uint64_t window,
                 sb_s3_fill_fn fill, void *ctx, sb_s3_error_t *e)
{
    if (size >= threshold || size > SB_S3_PART_MAX)
        return s_multipart (self, key, size, part, window, fill, ctx, e);
    return s_put_single (self, key, size, fill, ctx, e);
}

int
sb_s3_get_blocks (sb_s3_t *self, const char *key, uint64_t size, uint64_t streams, uint64_t chunk, uint64_t window,
                  uint64_t *received, sb_s3_error_t *e)
{
    *received = 0;
    if (size == 0)
        return sb_s3_get (self, key, 0, 0, received, e);
    streams = streams ? streams : 1;
    chunk = chunk ? chunk : size;
    window = window ? window : 1;
    /* blocks of ceil(size / streams) bytes, the last one shorter (fewer
     * blocks when they do not all hold a byte) */
    uint64_t block = size / streams + (size % streams != 0);
    uint64_t nblocks = size / block + (size % block != 0);
    uint64_t nslots = nblocks * window;
    uint64_t *pos = calloc ((size_t) nblocks, sizeof *pos);
    s_req_t **slot = calloc ((size_t) nslots, sizeof *slot);
    if (!pos || !slot) {
        free (pos);
        free (slot);
        return s_oom (e, "GET", key);
    }
    sb_debug ("GET %s: %llu bytes in %llu blocks of %llu, range GETs of at most %llu, %llu at once per block", key,
              (unsigned long long) size, (unsigned long long) nblocks, (unsigned long long) block,
              (unsigned long long) chunk, (unsigned long long) window);
    for (uint64_t b = 0; b < nblocks; b++)
        pos[b] = b * block;
    int rc = 0;
    uint64_t in_flight = 0;
    for (;;) {
        for (uint64_t i = 0; rc == 0 && i < nslots; i++) {
            uint64_t b = i / window, end = (b + 1) * block < size ? (b + 1) * block : size;
            if (slot[i] || pos[b] >= end)
                continue;
            s_req_t *r = s_req_new (self, OP_GET, key);
            if (!r) {
                rc = s_oom (e, "GET", key);
                break;
            }
            r->h.offset = pos[b];
            r->h.length = end - pos[b] < chunk ? end - pos[b] : chunk;
            r->h.ranged = 1;
            if (sb_http_start (self->pool, &r->h) != 0) {
                if (e)
                    *e = r->error;
                s_req_done (self, r);
                rc = -1;
                break;
            }
            pos[b] += r->h.length;
            slot[i] = r;
            in_flight++;
        }
        if (in_flight == 0)
            break;
        if (sb_http_pump (self->pool, 100) != 0)
            for (uint64_t i = 0; i < nslots; i++)
                if (slot[i])
                    sb_http_abandon (self->pool, &slot[i]->h);
        for (uint64_t i = 0; i < nslots; i++) {
            s_req_t *r = slot[i];
            if (!r || !r->h.finished)
                continue;
            *received += r->h.received;
            if (r->h.failed) {
                if (rc == 0 && e)
                    *e = r->error;
                rc = -1;
            }
            s_req_done (self, r);
            slot[i] = NULL;
            in_flight--;
        }
    }
    free (pos);
    free (slot);
    return rc;
}

int
sb_s3_get (sb_s3_t *self, const char *key, uint64_t offset, uint64_t length, uint64_t *received, sb_s3_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_GET, key);
    if (!r)
        return s_oom (e, "GET", key);
    r->h.offset = offset;
    r->h.length = length;
    r->h.ranged = length > 0;
    int rc = s_perform (self, r, e);
    *received = r->h.received;
    s_req_done (self, r);
    return rc;
}

int
sb_s3_get_small (sb_s3_t *self, const char *key, char *buf, size_t cap, size_t *len, sb_s3_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_GET, key);
    if (!r)
        return s_oom (e, "GET", key);
    r->h.keep_body = 1;
    r->h.body_limit = cap;
    int rc = s_perform (self, r, e);
    long status = r->h.status;
    if (rc == 0) {     /* a larger body stopped the transfer: a write error */
        if (r->h.body_len)
            memcpy (buf, r->h.body, r->h.body_len);
        *len = r->h.body_len;
    }
    s_req_done (self, r);
    if (rc != 0 && status == 404)
        return 1;
    return rc;
}

int
sb_s3_head (sb_s3_t *self, const char *key, uint64_t *size, sb_s3_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_HEAD, key);
    if (!r)
        return s_oom (e, "HEAD", key);
    int rc = s_perform (self, r, e);
    curl_off_t length = -1;
    if (rc == 0 && curl_easy_getinfo (r->h.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK
        && length >= 0)
        *size = (uint64_t) length;
    else if (rc == 0)
        *size = 0;
    if (rc != 0 && e && r->h.status == 404 && !e->s3_code[0]) {
        snprintf (e->s3_code, sizeof e->s3_code, "NoSuchKey");    /* HEAD replies carry no body */
        size_t n = strlen (e->text);
        snprintf (e->text + n, sizeof e->text - n, " (NoSuchKey)");
    }
    s_req_done (self, r);
    return rc;
}

int
sb_s3_delete (sb_s3_t *self, const char *key, sb_s3_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_DELETE, key);
    if (!r)
        return s_oom (e, "DELETE", key);
    int rc = s_perform (self, r, e);
    s_req_done (self, r);
    return rc;
}

/* ---------------------------------------------------------------- async GETs */

int
sb_s3_get_start (sb_s3_t *self, uint64_t tag, const char *key, uint64_t offset, uint64_t length, int verify,
                 uint64_t content_seed)
{
    return sb_s3_get_start_fill (self, tag, key, offset, length, verify, content_seed, NULL, NULL, NULL);
}

int
sb_s3_get_start_fill (sb_s3_t *self, uint64_t tag, const char *key, uint64_t offset, uint64_t length, int verify,
                      uint64_t content_seed, sb_s3_fill_fn expect, void *expect_ctx,
                      void (*expect_free) (void *ctx))
{
    s_req_t *r = s_req_new (self, OP_GET, key);
    if (r)
        r->content_seed = content_seed;
    sb_http_fill_fn with = !verify ? NULL : expect ? expect : s_content_expect;
    return sb_http_submit_get (self->pool, (sb_http_req_t *) r, tag, offset, length, with,
                               expect ? expect_ctx : r, expect_ctx, expect_free);
}

int
sb_s3_head_start (sb_s3_t *self, uint64_t tag, const char *key)
{
    s_req_t *r = s_req_new (self, OP_HEAD, key);
    if (!r)
        return -1;
    r->h.tag = tag;
    sb_http_submit (self->pool, &r->h);
    return 0;
}

int
sb_s3_run (sb_s3_t *self, int timeout_ms, void (*fn) (void *ctx, const sb_s3_done_t *done), void *ctx)
{
    if (!sb_http_has_done (self->pool) && sb_http_pump (self->pool, timeout_ms) != 0)
        return -1;
    int delivered = 0;
    for (sb_http_req_t *h; (h = sb_http_next_done (self->pool));) {
        s_req_t *r = (s_req_t *) h;
        sb_s3_done_t d = { .tag = h->tag, .bytes = h->received, .latency_ns = h->latency_ns, .failed = h->failed };
        if (h->failed)
            d.error = r->error;
        s_req_done (self, r);
        fn (ctx, &d);
        delivered++;
    }
    return delivered;
}
