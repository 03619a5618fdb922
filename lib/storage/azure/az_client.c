/* az_client: Azure Blob requests, signed with Shared Key or a SAS token.
 * The transfers (multi handle, balancing, retries, stop) are the request
 * pool's, shared with the S3 client (http_multi.h); the protocol is here. */
#include "az_client.h"
#include "az_auth.h"
#include "http_multi.h"
#include "log.h"
#include "util.h"

#include <czmq.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* The service version every request asks for: Azurite 3.x knows it, and
 * it has the block sizes of az_client.h. */
#define S_VERSION "2021-08-06"

typedef enum { OP_GET, OP_HEAD, OP_LIST, OP_PUT, OP_BLOCK, OP_BLOCKLIST, OP_DELETE, OP_CHECK, OP_GETBLOCKS } s_op_t;

static const char *s_op_names[] = { "GET", "HEAD", "LIST", "PUT", "PUT-BLOCK", "PUT-BLOCK-LIST", "DELETE",
                                    "CHECK", "GET-BLOCK-LIST" };

#define S_MAX_QUERY 6
#define S_QVALUE_CAP 2048
#define S_KEY_MAX 1024
#define S_BODY_CAP (16u << 20)      /* a listing page of 5000 names of 1024 bytes is about 7 MB */

typedef struct s_req s_req_t;
struct s_req {
    sb_http_req_t h;            /* first: the pool's part (transfer, reply, retries) */
    sb_az_t  *az;
    s_op_t    op;
    char      key[S_KEY_MAX + 1];
    char      qname[S_MAX_QUERY][24];
    char      qvalue[S_MAX_QUERY][S_QVALUE_CAP];
    size_t    nquery;
    int       container_only;
    char      err_code[64];         /* x-ms-error-code */
    sb_storage_error_t error;
};

typedef struct {
    char url[256];          /* scheme://host[:port][/account] as given, no trailing '/' */
    char path[256];         /* its path ("/devstoreaccount1", or "") */
} s_endpoint_t;

struct sb_az {
    sb_storage_cfg_t cfg;
    sb_az_creds_t    creds;
    sb_http_pool_t  *pool;          /* the transfers: sb_http_ops_t below */
    s_endpoint_t    *endpoints;
    size_t           nendpoints;
};

/* ---------------------------------------------------------------- set-up */

static int
s_parse_endpoint (const char *url, s_endpoint_t *ep)
{
    const char *sep = strstr (url, "://");
    if (!sep || (strncmp (url, "http://", 7) != 0 && strncmp (url, "https://", 8) != 0))
        return -1;
    if (snprintf (ep->url, sizeof ep->url, "%s", url) >= (int) sizeof ep->url)
        return -1;
    size_t n = strlen (ep->url);
    while (n && ep->url[n - 1] == '/')
        ep->url[--n] = '\0';
    const char *host = ep->url + (sep - url) + 3;
    size_t hn = strcspn (host, "/?#");
    if (hn == 0 || strchr (host, '?') || strchr (host, '#'))
        return -1;
    snprintf (ep->path, sizeof ep->path, "%s", host + hn);
    return 0;
}

static const sb_http_ops_t s_ops;

sb_az_t *
sb_az_new (const sb_storage_cfg_t *cfg, size_t max_in_flight, char *err, size_t err_size)
{
    if (sb_http_global_init (err, err_size) != 0)
        return NULL;
    if (cfg->nendpoints == 0) {
        snprintf (err, err_size, "Azure Blob storage needs an endpoint (storage.endpoint_uris, or"
                  " AZURE_STORAGE_CONNECTION_STRING / AZURE_STORAGE_ACCOUNT where the workload is loaded)");
        return NULL;
    }
    if (!cfg->store[0]) {
        snprintf (err, err_size, "Azure Blob storage needs a container (az://CONTAINER/PATH)");
        return NULL;
    }
    sb_az_t *self = calloc (1, sizeof *self);
    if (!self || !(self->endpoints = calloc (cfg->nendpoints, sizeof *self->endpoints))) {
        free (self);
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->cfg = *cfg;
    for (size_t i = 0; i < cfg->nendpoints; i++)
        if (s_parse_endpoint (cfg->endpoints[i], &self->endpoints[i]) != 0) {
            snprintf (err, err_size, "Azure endpoint '%s' is not http(s)://HOST[:PORT][/ACCOUNT]", cfg->endpoints[i]);
            free (self->endpoints);
            free (self);
            return NULL;
        }
    self->nendpoints = cfg->nendpoints;
    if (sb_az_creds_load (&self->creds, err, err_size) != 0) {
        sb_az_creds_wipe (&self->creds);
        free (self->endpoints);
        free (self);
        return NULL;
    }
    sb_http_cfg_t pc;
    sb_http_cfg_from (cfg, max_in_flight, &pc);
    if (cfg->connect_timeout_s <= 0)
        pc.connect_timeout_ms = 10000;  /* no connect timeout configured: 10 s, not curl's 300 */
    pc.count_kept = 1;      /* a kept 2xx reply (a listing, a small object) counts as received bytes */
    self->pool = sb_http_pool_new (&pc, &s_ops, self, err, err_size);
    if (!self->pool) {
        sb_az_destroy (&self);
        return NULL;
    }
    return self;
}

void
sb_az_destroy (sb_az_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_az_t *self = *self_p;
    sb_http_pool_destroy (&self->pool);     /* its requests first: they point into self */
    sb_az_creds_wipe (&self->creds);
    free (self->endpoints);
    free (self);
    *self_p = NULL;
}

void sb_az_set_stop (sb_az_t *self, int (*stop) (void *arg), void *arg) { sb_http_set_stop (self->pool, stop, arg); }
const char *sb_az_credentials_source (const sb_az_t *self) { return self->creds.source; }
size_t sb_az_endpoint_count (const sb_az_t *self) { return self->nendpoints; }
const char *sb_az_endpoint (const sb_az_t *self, size_t i) { return self->endpoints[i].url; }
sb_az_stats_t *sb_az_stats (sb_az_t *self, size_t i) { return sb_http_stats (self->pool, i); }
size_t sb_az_pending (const sb_az_t *self) { return sb_http_pending (self->pool); }
void sb_az_wakeup (sb_az_t *self) { sb_http_wakeup (self->pool); }

/* ---------------------------------------------------------------- callbacks */

/* Does a ranged GET's 2xx reply hold the range asked? Sets range_why when
 * not; a reply that ends early because the object does ("bytes 50-99/100"
 * to bytes=50-249) is a short object. */
static void
s_check_range (sb_http_req_t *h)
{
    unsigned long long first = h->offset, last = h->offset + h->length - 1, a, b, total;
    if (h->status != 206) {
        snprintf (h->range_why, sizeof h->range_why, "HTTP %ld to a GET with x-ms-range bytes=%llu-%llu (expected 206);"
                  " not retried", h->status, first, last);
        return;
    }
    if (!h->content_range[0])
        return;
    if (sscanf (h->content_range, "bytes %llu-%llu/%llu", &a, &b, &total) == 3 && a == first && b < last
        && b + 1 == total)
        snprintf (h->range_why, sizeof h->range_why, "short object: bytes %llu-%llu asked, the object has %llu bytes",
                  first, last, total);
    else if (sscanf (h->content_range, "bytes %llu-%llu/", &a, &b) != 2 || a != first || b != last)
        snprintf (h->range_why, sizeof h->range_why, "the server answered Content-Range '%s' to x-ms-range"
                  " bytes=%llu-%llu; not retried", h->content_range, first, last);
}

/* The service's error code, in a header even when the reply has no body (HEAD). */
static void
s_on_header (sb_http_req_t *h, const char *data, size_t n)
{
    s_req_t *r = (s_req_t *) h;
    const char *v;
    size_t len;
    if (sb_http_header (data, n, "x-ms-error-code", &v, &len))
        snprintf (r->err_code, sizeof r->err_code, "%.*s", (int) len, v);
}

/* ---------------------------------------------------------------- requests */

/* Percent-encode src into out: RFC 3986's unreserved bytes stay, and '/'
 * when keep_slash (a blob name's path). -1 when it does not fit. */
static int
s_encode (const char *src, int keep_slash, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *) src; *p; p++) {
        int plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'
                 || *p == '_' || *p == '.' || *p == '~' || (keep_slash && *p == '/');
        if (o + (plain ? 1 : 3) >= size)
            return -1;
        if (plain)
            out[o++] = (char) *p;
        else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
    return 0;
}

static const char *
s_method (s_op_t op)
{
    switch (op) {
    case OP_HEAD:
    case OP_CHECK:
        return "HEAD";
    case OP_PUT:
    case OP_BLOCK:
    case OP_BLOCKLIST:
        return "PUT";
    case OP_DELETE:
        return "DELETE";
    default:
        return "GET";
    }
}

/* Configure r->easy for its next attempt: URL, x-ms-* headers, the Shared
 * Key signature (or the SAS token in the query). */
static int
s_prepare (void *ctx, sb_http_req_t *h, char *why, size_t why_size)
{
    sb_az_t *self = ctx;
    s_req_t *r = (s_req_t *) h;
    s_endpoint_t *ep = &self->endpoints[h->endpoint];
    r->err_code[0] = '\0';
    /* GETs stream their payload; listings and small objects are kept */
    h->download = r->op == OP_GET;
    h->upload = r->op == OP_PUT || r->op == OP_BLOCK || r->op == OP_BLOCKLIST;
    h->body_max = h->keep_body && h->body_limit ? h->body_limit + 1 : S_BODY_CAP;
    h->count = r->op == OP_GET ? SB_HTTP_COUNT_RECEIVED
             : r->op == OP_LIST || r->op == OP_GETBLOCKS ? SB_HTTP_COUNT_BODY : SB_HTTP_COUNT_UPLOAD;

    char ekey[3 * S_KEY_MAX + 1], econt[3 * 256 + 1], path[4096];
    if (s_encode (self->cfg.store, 0, econt, sizeof econt) != 0 || s_encode (r->key, 1, ekey, sizeof ekey) != 0
        || sb_strf (path, sizeof path, "%s/%s%s%s", ep->path, econt, r->container_only ? "" : "/",
                    r->container_only ? "" : ekey) != 0) {
        snprintf (why, why_size, "URL too long for key '%s'", r->key);
        return -1;
    }
    /* the query, encoded, and the SAS token after it */
    size_t qcap = S_MAX_QUERY * (24 + 3 * S_QVALUE_CAP) + sizeof self->creds.sas + 8;
    char *qs = malloc (qcap), *url = malloc (qcap + sizeof path + 256);
    if (!qs || !url) {
        free (qs);
        free (url);
        snprintf (why, why_size, "out of memory");
        return -1;
    }
    size_t ql = 0;
    qs[0] = '\0';
    for (size_t i = 0; i < r->nquery; i++) {
        char ev[3 * S_QVALUE_CAP + 1];
        if (s_encode (r->qvalue[i], 0, ev, sizeof ev) != 0) {
            free (qs);
            free (url);
            snprintf (why, why_size, "query value too long");
            return -1;
        }
        ql += (size_t) snprintf (qs + ql, qcap - ql, "%s%s=%s", ql ? "&" : "", r->qname[i], ev);
    }
    if (self->creds.sas[0])
        ql += (size_t) snprintf (qs + ql, qcap - ql, "%s%s", ql ? "&" : "", self->creds.sas);
    const char *host_start = strstr (ep->url, "://") + 3;
    size_t base_len = (size_t) (host_start - ep->url) + strcspn (host_start, "/");
    snprintf (url, qcap + sizeof path + 256, "%.*s%s%s%s", (int) base_len, ep->url, path, ql ? "?" : "", qs);
    free (qs);

    char date[64], range[96] = "";
    time_t now = time (NULL);
    struct tm tm;
    gmtime_r (&now, &tm);
    strftime (date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (h->ranged)
        snprintf (range, sizeof range, "bytes=%llu-%llu", (unsigned long long) h->offset,
                  (unsigned long long) (h->offset + h->length - 1));
    const char *hn[4], *hv[4];
    size_t nh = 0;
    if (r->op == OP_PUT) {
        hn[nh] = "x-ms-blob-type";
        hv[nh++] = "BlockBlob";
    }
    hn[nh] = "x-ms-date";
    hv[nh++] = date;
    if (range[0]) {
        hn[nh] = "x-ms-range";
        hv[nh++] = range;
    }
    hn[nh] = "x-ms-version";
    hv[nh++] = S_VERSION;

    char line[1200];
    struct curl_slist *list = NULL;
    int bad = 0;
#define ADD_HEADER(...) do { snprintf (line, sizeof line, __VA_ARGS__); \
                             struct curl_slist *t = curl_slist_append (list, line); \
                             if (!t) bad = 1; else list = t; } while (0)
    for (size_t i = 0; i < nh; i++)
        ADD_HEADER ("%s: %s", hn[i], hv[i]);
    if (!self->creds.sas[0]) {
        const char *qn[S_MAX_QUERY], *qv[S_MAX_QUERY];
        for (size_t i = 0; i < r->nquery; i++) {
            qn[i] = r->qname[i];
            qv[i] = r->qvalue[i];
        }
        int body = r->op == OP_PUT || r->op == OP_BLOCK || r->op == OP_BLOCKLIST;
        sb_az_sign_req_t sreq = { .method = s_method (r->op), .path = path, .qnames = qn, .qvalues = qv,
                                  .nquery = r->nquery, .hnames = hn, .hvalues = hv, .nheaders = nh,
                                  .content_length = body ? h->up_size : 0 };
        size_t scap = 2 * sizeof path + S_MAX_QUERY * (24 + S_QVALUE_CAP) + 1024;
        char *sts = malloc (scap), sig[64];
        if (!sts || sb_az_string_to_sign (&sreq, self->creds.account, sts, scap) != 0
            || sb_az_hmac_b64 (self->creds.key, self->creds.key_len, sts, strlen (sts), sig, sizeof sig) != 0) {
            free (sts);
            free (url);
            curl_slist_free_all (list);
            snprintf (why, why_size, "cannot sign the request");
            return -1;
        }
        free (sts);
        ADD_HEADER ("Authorization: SharedKey %s:%s", self->creds.account, sig);
    }
    if (r->op == OP_PUT || r->op == OP_BLOCK || r->op == OP_BLOCKLIST)
        ADD_HEADER ("Expect:");     /* no 100-continue round trip */
#undef ADD_HEADER
    h->headers = list;
    if (bad) {
        free (url);
        snprintf (why, why_size, "out of memory");
        return -1;
    }

    CURL *e = h->easy;
    CURLcode rc = CURLE_OK;
#define SET(opt, val) do { if (rc == CURLE_OK) rc = curl_easy_setopt (e, opt, val); } while (0)
    SET (CURLOPT_URL, url);
    SET (CURLOPT_HTTPHEADER, h->headers);
    switch (r->op) {
    case OP_HEAD:
    case OP_CHECK:
        SET (CURLOPT_NOBODY, 1L);
        break;
    case OP_DELETE:
        SET (CURLOPT_CUSTOMREQUEST, "DELETE");
        break;
    default:
        break;
    }
#undef SET
    free (url);     /* curl copied it */
    if (rc != CURLE_OK) {
        snprintf (why, why_size, "curl_easy_setopt: %s", curl_easy_strerror (rc));
        return -1;
    }
    return 0;
}

/* the text of <tag>...</tag> in xml (the first one), entities decoded,
 * into out. 0, 1 when absent, -1 when it does not fit. */
static int
s_xml_find (const char *xml, size_t len, const char *tag, char *out, size_t size)
{
    char open[64], close[64];
    snprintf (open, sizeof open, "<%s>", tag);
    snprintf (close, sizeof close, "</%s>", tag);
    const char *a = memmem (xml, len, open, strlen (open));
    if (!a)
        return 1;
    a += strlen (open);
    const char *b = memmem (a, len - (size_t) (a - xml), close, strlen (close));
    if (!b)
        return 1;
    size_t o = 0;
    for (const char *p = a; p < b; p++) {
        char c = *p;
        static const struct { const char *ent; char c; } ents[] = {
            { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' }, { "&apos;", '\'' } };
        if (c == '&')
            for (size_t k = 0; k < 5; k++) {
                size_t el = strlen (ents[k].ent);
                if ((size_t) (b - p) >= el && !memcmp (p, ents[k].ent, el)) {
                    c = ents[k].c;
                    p += el - 1;
                    break;
                }
            }
        if (o + 1 >= size)
            return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

/* Every fact of r's failed attempt in r->error, and one sentence of them. */
static void
s_fill_error (sb_az_t *self, s_req_t *r, CURLcode cc, const char *extra)
{
    const sb_http_req_t *h = &r->h;
    sb_storage_error_t *e = &r->error;
    memset (e, 0, sizeof *e);
    snprintf (e->engine, sizeof e->engine, "azure");
    snprintf (e->where, sizeof e->where, "%s", self->endpoints[h->endpoint].url);
    snprintf (e->op, sizeof e->op, "%s", s_op_names[r->op]);
    snprintf (e->target, sizeof e->target, "%s", r->key);
    e->attempt = h->attempt;
    e->status = h->status;
    e->lib_code = (int) cc;
    long os_errno = 0;
    if (h->easy && curl_easy_getinfo (h->easy, CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK)
        e->os_errno = (int) os_errno;
    char message[256] = "";
    snprintf (e->code, sizeof e->code, "%s", r->err_code);
    if (h->body && h->body_len && h->status >= 300) {
        if (!e->code[0])
            s_xml_find (h->body, h->body_len, "Code", e->code, sizeof e->code);
        if (s_xml_find (h->body, h->body_len, "Message", message, sizeof message) >= 0)
            message[strcspn (message, "\r\n")] = '\0';     /* Azure adds RequestId and Time lines */
    }
    e->missing = h->status == 404;
    switch (cc) {
    case CURLE_COULDNT_CONNECT: case CURLE_OPERATION_TIMEDOUT: case CURLE_GOT_NOTHING: case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR: case CURLE_PARTIAL_FILE: case CURLE_HTTP2: case CURLE_HTTP2_STREAM:
        e->transient = 1;
        break;
    case CURLE_OK: {
        long s = h->status;
        e->transient = s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
        break;
    }
    default:
        break;
    }
    char cause[1024], curl_text[256] = "";
    if (cc != CURLE_OK)
        snprintf (curl_text, sizeof curl_text, "%s", h->errbuf[0] ? h->errbuf : curl_easy_strerror (cc));
    if (cc != CURLE_OK)
        snprintf (cause, sizeof cause, "%s%s%s", e->os_errno ? strerror (e->os_errno) : "", e->os_errno ? ": " : "",
                  curl_text);
    else if (e->code[0])
        snprintf (cause, sizeof cause, "HTTP %ld %s%s%s", e->status, e->code, message[0] ? ": " : "", message);
    else if (e->status >= 300)
        snprintf (cause, sizeof cause, "HTTP %ld", e->status);
    else
        snprintf (cause, sizeof cause, "%s", extra ? extra : "failed");
    if ((cc != CURLE_OK || e->status >= 300) && extra) {
        size_t n = strlen (cause);
        snprintf (cause + n, sizeof cause - n, " (%s)", extra);
    }
    snprintf (e->text, sizeof e->text, "%s %s%s%s on %s failed (attempt %d): %s [http %ld, curl %d, errno %d]", e->op,
              self->cfg.store, r->key[0] ? "/" : "", r->key, e->where, e->attempt, cause, e->status, e->lib_code,
              e->os_errno);
}

/* sb_http_ops_t.cancelled: r ended by a signal or the client's stop: not
 * a failure of the storage, and said so. */
static void
s_fill_cancelled (void *ctx, sb_http_req_t *h)
{
    sb_az_t *self = ctx;
    s_req_t *r = (s_req_t *) h;
    s_fill_error (self, r, CURLE_ABORTED_BY_CALLBACK, NULL);
    sb_storage_error_t *e = &r->error;
    const char *why = zsys_interrupted ? "interrupted by a signal" : "stopped (the session ended)";
    e->stopped = 1;
    e->transient = 0;
    e->os_errno = 0;
    snprintf (e->text, sizeof e->text, "%s %s%s%s on %s: %s (attempt %d)", e->op, self->cfg.store,
              r->key[0] ? "/" : "", r->key, e->where, why, e->attempt);
}

/* sb_http_ops_t.fail */
static int
s_op_fail (void *ctx, sb_http_req_t *h, CURLcode cc, const char *extra)
{
    s_req_t *r = (s_req_t *) h;
    s_fill_error (ctx, r, cc, extra);
    return r->error.transient;
}

static const sb_http_ops_t s_ops = {
    .prepare = s_prepare, .header = s_on_header, .check_range = s_check_range, .fail = s_op_fail,
    .cancelled = s_fill_cancelled,
};

static s_req_t *
s_req_new (sb_az_t *self, s_op_t op, const char *key)
{
    s_req_t *r = calloc (1, sizeof *r);
    if (!r)
        return NULL;
    sb_http_req_init (self->pool, &r->h, r->error.text);
    r->az = self;
    r->op = op;
    if (key && sb_strf (r->key, sizeof r->key, "%s", key) != 0) {
        free (r);
        return NULL;
    }
    return r;
}

static int
s_req_query (s_req_t *r, const char *name, const char *value)
{
    if (r->nquery >= S_MAX_QUERY || sb_strf (r->qname[r->nquery], sizeof r->qname[0], "%s", name) != 0
        || sb_strf (r->qvalue[r->nquery], sizeof r->qvalue[0], "%s", value) != 0)
        return -1;
    r->nquery++;
    return 0;
}

static void
s_req_done (sb_az_t *self, s_req_t *r)
{
    if (r)
        sb_http_req_done (self->pool, &r->h);
}

static int
s_perform (sb_az_t *self, s_req_t *r, sb_storage_error_t *e)
{
    int rc = sb_http_perform (self->pool, &r->h);
    if (rc != 0 && e)
        *e = r->error;
    return rc;
}

static int
s_fail (sb_az_t *self, sb_storage_error_t *e, const char *op, const char *key, const char *fmt, ...)
{
    if (!e)
        return -1;
    char cause[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (cause, sizeof cause, fmt, ap);
    va_end (ap);
    sb_storage_fail (e, "azure", op, key ? key : "", 0, "%s %s/%s: %s", op, self->cfg.store, key ? key : "", cause);
    return -1;
}

/* ---------------------------------------------------------------- blocking API */

int
sb_az_check (sb_az_t *self, size_t i, int write, const char *probe_key, sb_storage_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_CHECK, NULL);
    if (!r || s_req_query (r, "restype", "container") != 0) {
        free (r);
        return s_fail (self, e, "CHECK", "", "out of memory");
    }
    r->container_only = 1;
    r->h.fixed_endpoint = (int) i;
    r->h.no_retry = 1;
    int rc = s_perform (self, r, e);
    s_req_done (self, r);
    if (rc != 0 || !write)
        return rc;
    r = s_req_new (self, OP_PUT, probe_key);
    if (!r)
        return s_fail (self, e, "PUT", probe_key, "out of memory or key too long");
    r->h.fixed_endpoint = (int) i;
    r->h.no_retry = 1;
    r->h.up_body = "shardbench write check\n";
    r->h.up_size = strlen (r->h.up_body);
    rc = s_perform (self, r, e);
    s_req_done (self, r);
    if (rc != 0)
        return rc;
    r = s_req_new (self, OP_DELETE, probe_key);
    if (!r)
        return s_fail (self, e, "DELETE", probe_key, "out of memory");
    r->h.fixed_endpoint = (int) i;
    r->h.no_retry = 1;
    rc = s_perform (self, r, e);
    s_req_done (self, r);
    return rc;
}

/* A List Blobs page is taken only when it is an EnumerationResults
 * document whose names are all under prefix and in strictly rising byte
 * order, each with a decimal Content-Length; the marker must change from
 * page to page. */
int
sb_az_list (sb_az_t *self, const char *prefix, const char *start_after, const char *end_at, size_t page_size,
            sb_az_list_fn fn, void *ctx, sb_storage_error_t *e)
{
    char marker[S_QVALUE_CAP] = "", prev_marker[S_QVALUE_CAP] = "", page[24], last[S_KEY_MAX + 2] = "";
    char name[S_KEY_MAX + 2], size_text[32];
    int have_last = 0;
    size_t plen = prefix ? strlen (prefix) : 0;
    snprintf (page, sizeof page, "%zu", page_size ? page_size : (size_t) SB_AZ_LIST_PAGE_MAX);
    for (uint64_t pages = 1;; pages++) {
        if (zsys_interrupted)
            return s_fail (self, e, "LIST", prefix, "listing interrupted by a signal");
        s_req_t *r = s_req_new (self, OP_LIST, prefix);
        if (!r || s_req_query (r, "restype", "container") != 0 || s_req_query (r, "comp", "list") != 0
            || s_req_query (r, "prefix", prefix ? prefix : "") != 0 || s_req_query (r, "maxresults", page) != 0
            || (marker[0] && s_req_query (r, "marker", marker) != 0)) {
            free (r);
            return s_fail (self, e, "LIST", prefix, "out of memory, or a prefix or marker too long");
        }
        r->container_only = 1;
        r->h.keep_body = 1;
        if (s_perform (self, r, e) != 0) {
            if (r->h.body_over)
                s_fail (self, e, "LIST", prefix, "List Blobs page %llu is over %u bytes; not taken",
                        (unsigned long long) pages, S_BODY_CAP);
            s_req_done (self, r);
            return -1;
        }
        const char *xml = r->h.body ? r->h.body : "";
        size_t len = r->h.body_len;
        if (!memmem (xml, len, "<EnumerationResults", 19) || !memmem (xml, len, "</EnumerationResults>", 21)) {
            s_req_done (self, r);
            return s_fail (self, e, "LIST", prefix, "List Blobs page %llu is not an EnumerationResults document (%zu"
                           " bytes); a malformed listing is not taken as an empty one", (unsigned long long) pages, len);
        }
        const char *blobs_end = memmem (xml, len, "</Blobs>", 8);
        size_t pos = 0;
        int stop = 0;
        for (;;) {
            const char *open = memmem (xml + pos, len - pos, "<Blob>", 6);
            if (!open || (blobs_end && open > blobs_end))
                break;
            const char *close = memmem (open, len - (size_t) (open - xml), "</Blob>", 7);
            if (!close) {
                s_req_done (self, r);
                return s_fail (self, e, "LIST", prefix, "List Blobs page %llu has a <Blob> without its end",
                               (unsigned long long) pages);
            }
            size_t blen = (size_t) (close - open);
            pos = (size_t) (close - xml) + 7;
            uint64_t size = 0;
            if (s_xml_find (open, blen, "Name", name, sizeof name) != 0 || strlen (name) > S_KEY_MAX
                || s_xml_find (open, blen, "Content-Length", size_text, sizeof size_text) != 0
                || sb_parse_u64_digits (size_text, &size) != 0) {
                s_req_done (self, r);
                return s_fail (self, e, "LIST", prefix, "List Blobs page %llu: a <Blob> without a usable Name (at"
                               " most %d bytes) and Content-Length", (unsigned long long) pages, S_KEY_MAX);
            }
            if (plen && strncmp (name, prefix, plen) != 0) {
                s_req_done (self, r);
                return s_fail (self, e, "LIST", prefix, "List Blobs page %llu: blob '%.300s' is not under the prefix"
                               " that was asked for; not taken", (unsigned long long) pages, name);
            }
            if (have_last && strcmp (name, last) <= 0) {
                s_req_done (self, r);
                return s_fail (self, e, "LIST", prefix, "List Blobs page %llu: blob '%.300s' does not sort after"
                               " '%.300s'; not taken", (unsigned long long) pages, name, last);
            }
            memcpy (last, name, strlen (name) + 1);
            have_last = 1;
            if (start_after && strcmp (name, start_after) <= 0)
                continue;
            if ((end_at && strcmp (name, end_at) > 0) || fn (ctx, name, size) != 0) {
                stop = 1;
                break;
            }
        }
        int mrc = s_xml_find (xml, len, "NextMarker", marker, sizeof marker);
        s_req_done (self, r);
        if (stop || mrc != 0 || !marker[0])
            return 0;
        if (!strcmp (marker, prev_marker))
            return s_fail (self, e, "LIST", prefix, "List Blobs page %llu gives the NextMarker of the page before:"
                           " the listing would never end", (unsigned long long) pages);
        memcpy (prev_marker, marker, sizeof marker);
    }
}

int
sb_az_head (sb_az_t *self, const char *key, uint64_t *size, sb_storage_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_HEAD, key);
    if (!r)
        return s_fail (self, e, "HEAD", key, "out of memory or key too long");
    int rc = s_perform (self, r, e);
    curl_off_t length = -1;
    if (rc == 0)
        *size = curl_easy_getinfo (r->h.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length >= 0
                    ? (uint64_t) length : 0;
    s_req_done (self, r);
    return rc;
}

int
sb_az_get (sb_az_t *self, const char *key, uint64_t offset, uint64_t length, uint64_t *received,
           sb_storage_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_GET, key);
    if (!r)
        return s_fail (self, e, "GET", key, "out of memory or key too long");
    r->h.offset = offset;
    r->h.length = length;
    r->h.ranged = length > 0;
    int rc = s_perform (self, r, e);
    *received = r->h.received;
    s_req_done (self, r);
    return rc;
}

int
sb_az_get_small (sb_az_t *self, const char *key, char *buf, size_t cap, size_t *len, sb_storage_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_GET, key);
    if (!r)
        return s_fail (self, e, "GET", key, "out of memory or key too long");
    r->h.keep_body = 1;
    r->h.body_limit = cap;
    r->h.no_retry = 0;
    int rc = s_perform (self, r, e);
    if (rc == 0) {
        if (r->h.body_len > cap)
            rc = s_fail (self, e, "GET", key, "the object is larger than %zu bytes", cap);
        else {
            if (r->h.body_len)
                memcpy (buf, r->h.body, r->h.body_len);
            *len = r->h.body_len;
        }
    }
    long status = r->h.status;
    s_req_done (self, r);
    return rc != 0 && status == 404 ? 1 : rc;
}

int
sb_az_delete (sb_az_t *self, const char *key, sb_storage_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_DELETE, key);
    if (!r)
        return s_fail (self, e, "DELETE", key, "out of memory or key too long");
    int rc = s_perform (self, r, e);
    s_req_done (self, r);
    return rc;
}

int
sb_az_block_list (sb_az_t *self, const char *key, uint64_t *count, uint64_t *bytes, sb_storage_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_GETBLOCKS, key);
    if (!r || s_req_query (r, "comp", "blocklist") != 0 || s_req_query (r, "blocklisttype", "committed") != 0) {
        free (r);
        return s_fail (self, e, "GET-BLOCK-LIST", key, "out of memory or key too long");
    }
    r->h.keep_body = 1;
    int rc = s_perform (self, r, e);
    *count = *bytes = 0;
    if (rc == 0) {
        const char *xml = r->h.body ? r->h.body : "";
        size_t len = r->h.body_len, pos = 0;
        const char *committed = memmem (xml, len, "<CommittedBlocks>", 17);
        if (committed)
            pos = (size_t) (committed - xml);
        const char *end = memmem (xml, len, "</CommittedBlocks>", 18);
        char size_text[32];
        for (const char *b; committed && (b = memmem (xml + pos, len - pos, "<Block>", 7)) && (!end || b < end);) {
            const char *c = memmem (b, len - (size_t) (b - xml), "</Block>", 8);
            uint64_t n = 0;
            if (!c || s_xml_find (b, (size_t) (c - b), "Size", size_text, sizeof size_text) != 0
                || sb_parse_u64_digits (size_text, &n) != 0) {
                rc = s_fail (self, e, "GET-BLOCK-LIST", key, "a <Block> without a usable Size");
                break;
            }
            (*count)++;
            *bytes += n;
            pos = (size_t) (c - xml) + 8;
        }
    }
    s_req_done (self, r);
    return rc;
}

static int
s_put_blob (sb_az_t *self, const char *key, uint64_t size, sb_az_fill_fn fill, void *ctx, sb_storage_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_PUT, key);
    if (!r)
        return s_fail (self, e, "PUT", key, "out of memory or key too long");
    r->h.fill = fill;
    r->h.fill_ctx = ctx;
    r->h.up_size = size;
    int rc = s_perform (self, r, e);
    s_req_done (self, r);
    return rc;
}

/* A block's ID: base64 of a fixed-width number (Azure wants every ID of a
 * blob to be as long as the others), 24 characters. */
static void
s_block_id (uint64_t n, char out[32])
{
    char raw[17];
    snprintf (raw, sizeof raw, "sbblk%011llu", (unsigned long long) n);
    EVP_EncodeBlock ((unsigned char *) out, (const unsigned char *) raw, 16);
}

/* Put Block of every block, window at once (the lowest first), then Put
 * Block List. Uncommitted blocks left by a failure are discarded by the
 * service (after a week, or at the blob's next commit). */
static int
s_put_blocks (sb_az_t *self, const char *key, uint64_t size, uint64_t block, uint64_t window, sb_az_fill_fn fill,
              void *ctx, sb_storage_error_t *e)
{
    uint64_t nblocks = size / block + (size % block != 0);
    if (nblocks > SB_AZ_BLOCKS_MAX) {
        uint64_t need = size / SB_AZ_BLOCKS_MAX + (size % SB_AZ_BLOCKS_MAX != 0), mib = 1ull << 20;
        need = (need + mib - 1) / mib * mib;
        if (need > SB_AZ_BLOCK_MAX)
            return s_fail (self, e, "PUT-BLOCK", key, "an object of %llu bytes is over Azure's 50,000 blocks of"
                           " %llu bytes", (unsigned long long) size, (unsigned long long) SB_AZ_BLOCK_MAX);
        sb_info ("block upload of %s: %llu bytes in blocks of %llu would be over Azure's 50,000 blocks: blocks of"
                 " %llu bytes instead", key, (unsigned long long) size, (unsigned long long) block,
                 (unsigned long long) need);
        block = need;
        nblocks = size / block + (size % block != 0);
    }
    window = window < 1 ? 1 : window > nblocks ? nblocks : window;
    size_t xml_cap = 128 + (size_t) nblocks * 48;
    char *xml = malloc (xml_cap);
    s_req_t **slot = calloc ((size_t) window, sizeof *slot);
    if (!xml || !slot) {
        free (xml);
        free (slot);
        return s_fail (self, e, "PUT-BLOCK", key, "out of memory");
    }
    int rc = 0;
    uint64_t next = 0, in_flight = 0;
    while ((rc == 0 && next < nblocks) || in_flight > 0) {
        for (uint64_t i = 0; rc == 0 && next < nblocks && i < window; i++) {
            if (slot[i])
                continue;
            char id[32];
            s_block_id (next, id);
            s_req_t *r = s_req_new (self, OP_BLOCK, key);
            if (!r || s_req_query (r, "comp", "block") != 0 || s_req_query (r, "blockid", id) != 0) {
                free (r);
                rc = s_fail (self, e, "PUT-BLOCK", key, "out of memory");
                break;
            }
            r->h.fill = fill;
            r->h.fill_ctx = ctx;
            r->h.up_base = next * block;
            r->h.up_size = size - r->h.up_base < block ? size - r->h.up_base : block;
            if (sb_http_start (self->pool, &r->h) != 0) {
                if (e)
                    *e = r->error;
                s_req_done (self, r);
                rc = -1;
                break;
            }
            slot[i] = r;
            next++;
            in_flight++;
        }
        if (in_flight == 0)
            break;
        if (sb_http_pump (self->pool, 100) != 0)
            for (uint64_t i = 0; i < window; i++)
                if (slot[i])
                    sb_http_abandon (self->pool, &slot[i]->h);
        for (uint64_t i = 0; i < window; i++) {
            s_req_t *r = slot[i];
            if (!r || !r->h.finished)
                continue;
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
    free (slot);
    if (rc == 0) {
        size_t xl = (size_t) snprintf (xml, xml_cap, "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>");
        for (uint64_t b = 0; b < nblocks; b++) {
            char id[32];
            s_block_id (b, id);
            xl += (size_t) snprintf (xml + xl, xml_cap - xl, "<Latest>%s</Latest>", id);
        }
        xl += (size_t) snprintf (xml + xl, xml_cap - xl, "</BlockList>");
        s_req_t *r = s_req_new (self, OP_BLOCKLIST, key);
        if (!r || s_req_query (r, "comp", "blocklist") != 0) {
            free (r);
            rc = s_fail (self, e, "PUT-BLOCK-LIST", key, "out of memory");
        }
        else {
            r->h.up_body = xml;
            r->h.up_size = xl;
            rc = s_perform (self, r, e);
            s_req_done (self, r);
        }
    }
    free (xml);
    return rc;
}

int
sb_az_put (sb_az_t *self, const char *key, uint64_t size, sb_az_fill_fn fill, void *ctx, uint64_t block,
           uint64_t single_put, uint64_t window, sb_storage_error_t *e)
{
    if (size <= single_put && size <= SB_AZ_PUT_BLOB_MAX)
        return s_put_blob (self, key, size, fill, ctx, e);
    return s_put_blocks (self, key, size, block ? block : (8ull << 20), window, fill, ctx, e);
}

/* ---------------------------------------------------------------- async GETs */

int
sb_az_get_start (sb_az_t *self, uint64_t tag, const char *key, uint64_t offset, uint64_t length,
                 sb_az_fill_fn expect, void *expect_ctx, void (*expect_free) (void *ctx))
{
    s_req_t *r = s_req_new (self, OP_GET, key);
    return sb_http_submit_get (self->pool, (sb_http_req_t *) r, tag, offset, length, expect, expect_ctx, expect_ctx,
                               expect_free);
}

int
sb_az_run (sb_az_t *self, int timeout_ms, void (*fn) (void *ctx, const sb_az_done_t *done), void *ctx)
{
    if (!sb_http_has_done (self->pool) && sb_http_pump (self->pool, timeout_ms) != 0)
        return -1;
    int delivered = 0;
    for (sb_http_req_t *h; (h = sb_http_next_done (self->pool));) {
        s_req_t *r = (s_req_t *) h;
        sb_az_done_t d = { .tag = h->tag, .bytes = h->received, .latency_ns = h->latency_ns, .failed = h->failed };
        if (h->failed)
            d.error = r->error;
        s_req_done (self, r);
        fn (ctx, &d);
        delivered++;
    }
    return delivered;
}
