/* az_client: Azure Blob requests on a curl multi handle, signed, balanced,
 * retried. The machinery (one multi handle, a retry list, a done list, a
 * stop checked in curl's progress callback and between polls) is the S3
 * client's (lib/storage/s3/s3_client.c); the protocol is Azure's. */
#include "az_client.h"
#include "az_auth.h"
#include "log.h"
#include "util.h"

#include <czmq.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <errno.h>
#include <pthread.h>
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
#define S_ERROR_BODY_CAP 65536

typedef struct s_req s_req_t;
struct s_req {
    sb_az_t  *az;
    CURL     *easy;
    struct curl_slist *headers;
    s_op_t    op;
    int       async, finished;
    uint64_t  tag;
    char      key[S_KEY_MAX + 1];
    char      qname[S_MAX_QUERY][24];
    char      qvalue[S_MAX_QUERY][S_QVALUE_CAP];
    size_t    nquery;
    int       container_only;
    int       fixed_endpoint;
    int       no_retry;
    uint64_t  offset, length;
    int       ranged;
    int       keep_body;        /* 2xx payload kept in body (get_small, lists) */
    size_t    body_limit;
    int       body_over;
    sb_az_fill_fn expect;
    void     *expect_ctx;
    void    (*expect_free) (void *ctx);
    uint8_t  *verify_buf;
    int       verify_failed;
    uint64_t  mismatch_at;
    sb_az_fill_fn fill;
    void     *fill_ctx;
    uint64_t  up_base, up_size, up_pos;
    const char *up_body;
    long      status;
    uint64_t  received;
    char     *body;
    size_t    body_len, body_cap;
    char      err_code[64];         /* x-ms-error-code */
    char      content_range[128];
    int       range_checked;
    char      range_why[512];
    char      errbuf[CURL_ERROR_SIZE];
    size_t    endpoint;
    int       attempt;
    uint64_t  started_ns, latency_ns, due_ns;
    sb_storage_error_t error;
    int       failed;
    s_req_t  *next, *active_prev, *active_next;
};

typedef struct {
    char url[256];          /* scheme://host[:port][/account] as given, no trailing '/' */
    char path[256];         /* its path ("/devstoreaccount1", or "") */
    size_t in_flight;
    sb_az_stats_t stats;
} s_endpoint_t;

struct sb_az {
    sb_storage_cfg_t cfg;
    sb_az_creds_t    creds;
    CURLM           *multi;
    s_endpoint_t    *endpoints;
    size_t           nendpoints, rr_next, max_in_flight;
    s_req_t         *active, *retry_list, *done_list, *done_tail;
    size_t           pending;
    CURL           **easy_pool;
    size_t           npool;
    uint64_t         rng;
    int            (*stop) (void *arg);
    void            *stop_arg;
};

static pthread_once_t s_global_once = PTHREAD_ONCE_INIT;
static CURLcode s_global_rc = CURLE_FAILED_INIT;

static void
s_global_init (void)
{
    s_global_rc = curl_global_init (CURL_GLOBAL_DEFAULT);
}

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

sb_az_t *
sb_az_new (const sb_storage_cfg_t *cfg, size_t max_in_flight, char *err, size_t err_size)
{
    if (pthread_once (&s_global_once, s_global_init) != 0 || s_global_rc != CURLE_OK) {
        snprintf (err, err_size, "curl_global_init failed: %s", curl_easy_strerror (s_global_rc));
        return NULL;
    }
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
    self->max_in_flight = max_in_flight ? max_in_flight : 1;
    self->rng = sb_mix ((uint64_t) time (NULL), (uint64_t) (uintptr_t) self);
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
    self->multi = curl_multi_init ();
    self->easy_pool = calloc (self->max_in_flight + 4, sizeof (CURL *));
    if (!self->multi || !self->easy_pool
        || curl_multi_setopt (self->multi, CURLMOPT_MAXCONNECTS,
                              (long) (self->max_in_flight * self->nendpoints + 4)) != CURLM_OK) {
        snprintf (err, err_size, "cannot create a curl multi handle");
        sb_az_destroy (&self);
        return NULL;
    }
    return self;
}

static void
s_req_free (s_req_t *r)
{
    if (!r)
        return;
    curl_slist_free_all (r->headers);   /* holds the Authorization header */
    free (r->body);
    free (r->verify_buf);
    if (r->expect_free)
        r->expect_free (r->expect_ctx);
    free (r);
}

void
sb_az_destroy (sb_az_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_az_t *self = *self_p;
    for (s_req_t *r = self->active, *next; r; r = next) {
        next = r->active_next;
        if (curl_multi_remove_handle (self->multi, r->easy) != CURLM_OK)
            sb_debug ("curl_multi_remove_handle failed while destroying an Azure client");
        curl_easy_cleanup (r->easy);
        s_req_free (r);
    }
    for (s_req_t *lists[] = { self->retry_list, self->done_list }, **l = lists; l < lists + 2; l++)
        for (s_req_t *r = *l, *next; r; r = next) {
            next = r->next;
            curl_easy_cleanup (r->easy);
            s_req_free (r);
        }
    for (size_t i = 0; i < self->npool; i++)
        curl_easy_cleanup (self->easy_pool[i]);
    free (self->easy_pool);
    if (self->multi)
        curl_multi_cleanup (self->multi);
    sb_az_creds_wipe (&self->creds);
    free (self->endpoints);
    free (self);
    *self_p = NULL;
}

void
sb_az_set_stop (sb_az_t *self, int (*stop) (void *arg), void *arg)
{
    self->stop = stop;
    self->stop_arg = arg;
}

const char *sb_az_credentials_source (const sb_az_t *self) { return self->creds.source; }
size_t sb_az_endpoint_count (const sb_az_t *self) { return self->nendpoints; }
const char *sb_az_endpoint (const sb_az_t *self, size_t i) { return self->endpoints[i].url; }
sb_az_stats_t *sb_az_stats (sb_az_t *self, size_t i) { return &self->endpoints[i].stats; }
size_t sb_az_pending (const sb_az_t *self) { return self->pending; }

static int
s_cancelled (sb_az_t *self)
{
    return zsys_interrupted || (self->stop && self->stop (self->stop_arg));
}

void
sb_az_wakeup (sb_az_t *self)
{
    CURLMcode mc = curl_multi_wakeup (self->multi);
    if (mc != CURLM_OK)
        sb_warn ("curl_multi_wakeup: %s", curl_multi_strerror (mc));
}

/* ---------------------------------------------------------------- callbacks */

/* Does a ranged GET's 2xx reply hold the range asked? Sets range_why when
 * not; a reply that ends early because the object does ("bytes 50-99/100"
 * to bytes=50-249) is a short object. */
static void
s_check_range (s_req_t *r)
{
    r->range_checked = 1;
    unsigned long long first = r->offset, last = r->offset + r->length - 1, a, b, total;
    if (r->status != 206) {
        snprintf (r->range_why, sizeof r->range_why, "HTTP %ld to a GET with x-ms-range bytes=%llu-%llu (expected 206);"
                  " not retried", r->status, first, last);
        return;
    }
    if (!r->content_range[0])
        return;
    if (sscanf (r->content_range, "bytes %llu-%llu/%llu", &a, &b, &total) == 3 && a == first && b < last
        && b + 1 == total)
        snprintf (r->range_why, sizeof r->range_why, "short object: bytes %llu-%llu asked, the object has %llu bytes",
                  first, last, total);
    else if (sscanf (r->content_range, "bytes %llu-%llu/", &a, &b) != 2 || a != first || b != last)
        snprintf (r->range_why, sizeof r->range_why, "the server answered Content-Range '%s' to x-ms-range"
                  " bytes=%llu-%llu; not retried", r->content_range, first, last);
}

static size_t
s_on_body (char *data, size_t size, size_t nmemb, void *userp)
{
    s_req_t *r = userp;
    size_t n = size * nmemb;
    if (!r->status && curl_easy_getinfo (r->easy, CURLINFO_RESPONSE_CODE, &r->status) != CURLE_OK)
        r->status = 0;
    if (r->op == OP_GET && r->ranged && r->status >= 200 && r->status < 300 && !r->range_checked) {
        s_check_range (r);
        if (r->range_why[0])
            return 0;
    }
    int keep = r->status >= 300 || r->keep_body || (r->op != OP_GET && r->op != OP_HEAD);
    if (!keep) {
        if (r->expect && !r->verify_failed)
            for (size_t done = 0; done < n;) {
                size_t chunk = n - done < 65536 ? n - done : 65536;
                r->expect (r->expect_ctx, r->offset + r->received + done, r->verify_buf, chunk);
                if (memcmp (r->verify_buf, data + done, chunk) != 0) {
                    size_t at = 0;
                    while (at < chunk && r->verify_buf[at] == (uint8_t) data[done + at])
                        at++;
                    r->verify_failed = 1;
                    r->mismatch_at = r->offset + r->received + done + at;
                    break;
                }
                done += chunk;
            }
        r->received += n;
        return n;
    }
    size_t cap = r->status >= 300 ? S_ERROR_BODY_CAP : r->keep_body && r->body_limit ? r->body_limit + 1 : S_BODY_CAP;
    if (r->body_len + n + 1 > cap) {
        r->body_over = r->status < 300;
        return r->status >= 300 ? n : 0;
    }
    if (r->body_len + n + 1 > r->body_cap) {
        size_t want = r->body_cap ? r->body_cap * 2 : 16384;
        while (want < r->body_len + n + 1)
            want *= 2;
        char *grown = realloc (r->body, want);
        if (!grown)
            return 0;
        r->body = grown;
        r->body_cap = want;
    }
    memcpy (r->body + r->body_len, data, n);
    r->body_len += n;
    r->body[r->body_len] = '\0';
    if (r->status < 300)
        r->received += n;
    return n;
}

/* the value of header name: data (n bytes) into out, trimmed; 1 when it is that header */
static int
s_header (const char *data, size_t n, const char *name, char *out, size_t size)
{
    size_t nl = strlen (name);
    if (n <= nl || strncasecmp (data, name, nl) != 0 || data[nl] != ':')
        return 0;
    const char *v = data + nl + 1;
    while (v < data + n && *v == ' ')
        v++;
    size_t len = (size_t) (data + n - v);
    while (len && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' '))
        len--;
    snprintf (out, size, "%.*s", (int) len, v);
    return 1;
}

static size_t
s_on_header (char *data, size_t size, size_t nmemb, void *userp)
{
    s_req_t *r = userp;
    size_t n = size * nmemb;
    if (!s_header (data, n, "x-ms-error-code", r->err_code, sizeof r->err_code))
        s_header (data, n, "content-range", r->content_range, sizeof r->content_range);
    return n;
}

static size_t
s_on_upload (char *buf, size_t size, size_t nmemb, void *userp)
{
    s_req_t *r = userp;
    size_t room = size * nmemb;
    uint64_t left = r->up_size - r->up_pos;
    size_t n = left < room ? (size_t) left : room;
    if (n == 0)
        return 0;
    if (r->up_body)
        memcpy (buf, r->up_body + r->up_pos, n);
    else
        r->fill (r->fill_ctx, r->up_base + r->up_pos, (uint8_t *) buf, n);
    r->up_pos += n;
    return n;
}

static int
s_on_seek (void *userp, curl_off_t offset, int origin)
{
    s_req_t *r = userp;
    if (origin != SEEK_SET || offset < 0 || (uint64_t) offset > r->up_size)
        return CURL_SEEKFUNC_FAIL;
    r->up_pos = (uint64_t) offset;
    return CURL_SEEKFUNC_OK;
}

static int
s_on_progress (void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void) dltotal, (void) dlnow, (void) ultotal, (void) ulnow;
    s_req_t *r = userp;
    return s_cancelled (r->az);
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

static size_t
s_pick_endpoint (sb_az_t *self, s_req_t *r)
{
    if (r->fixed_endpoint >= 0)
        return (size_t) r->fixed_endpoint;
    if (self->cfg.lb == SB_LB_LEAST_CONNECTIONS) {
        size_t best = self->rr_next % self->nendpoints;
        for (size_t k = 0; k < self->nendpoints; k++) {
            size_t i = (self->rr_next + k) % self->nendpoints;
            if (self->endpoints[i].in_flight < self->endpoints[best].in_flight)
                best = i;
        }
        self->rr_next = (best + 1) % self->nendpoints;
        return best;
    }
    size_t i = self->rr_next;
    self->rr_next = (self->rr_next + 1) % self->nendpoints;
    return i;
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
s_prepare (sb_az_t *self, s_req_t *r, char *why, size_t why_size)
{
    s_endpoint_t *ep = &self->endpoints[r->endpoint];
    r->status = 0;
    r->received = 0;
    r->body_len = 0;
    r->body_over = 0;
    r->up_pos = 0;
    r->verify_failed = 0;
    r->err_code[0] = '\0';
    r->content_range[0] = '\0';
    r->range_checked = 0;
    r->range_why[0] = '\0';
    r->errbuf[0] = '\0';
    curl_slist_free_all (r->headers);
    r->headers = NULL;

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
    if (r->ranged)
        snprintf (range, sizeof range, "bytes=%llu-%llu", (unsigned long long) r->offset,
                  (unsigned long long) (r->offset + r->length - 1));
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

    char h[1200];
    struct curl_slist *list = NULL;
    int bad = 0;
#define ADD_HEADER(...) do { snprintf (h, sizeof h, __VA_ARGS__); struct curl_slist *t = curl_slist_append (list, h); \
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
                                  .content_length = body ? r->up_size : 0 };
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
    r->headers = list;
    if (bad) {
        free (url);
        snprintf (why, why_size, "out of memory");
        return -1;
    }

    CURL *e = r->easy;
    CURLcode rc = CURLE_OK;
#define SET(opt, val) do { if (rc == CURLE_OK) rc = curl_easy_setopt (e, opt, val); } while (0)
    SET (CURLOPT_URL, url);
    SET (CURLOPT_HTTPHEADER, r->headers);
    SET (CURLOPT_PRIVATE, (char *) r);
    SET (CURLOPT_WRITEFUNCTION, s_on_body);
    SET (CURLOPT_WRITEDATA, r);
    SET (CURLOPT_HEADERFUNCTION, s_on_header);
    SET (CURLOPT_HEADERDATA, r);
    SET (CURLOPT_ERRORBUFFER, r->errbuf);
    SET (CURLOPT_XFERINFOFUNCTION, s_on_progress);
    SET (CURLOPT_XFERINFODATA, r);
    SET (CURLOPT_NOPROGRESS, 0L);
    SET (CURLOPT_NOSIGNAL, 1L);
    SET (CURLOPT_TCP_KEEPALIVE, 1L);
    SET (CURLOPT_BUFFERSIZE, 262144L);
    SET (CURLOPT_CONNECTTIMEOUT_MS, (long) ((self->cfg.connect_timeout_s > 0 ? self->cfg.connect_timeout_s : 10) * 1000));
    SET (CURLOPT_TIMEOUT_MS, (long) (self->cfg.request_timeout_s * 1000));
    SET (CURLOPT_PROTOCOLS_STR, "http,https");
    switch (r->op) {
    case OP_HEAD:
    case OP_CHECK:
        SET (CURLOPT_NOBODY, 1L);
        break;
    case OP_PUT:
    case OP_BLOCK:
    case OP_BLOCKLIST:
        SET (CURLOPT_UPLOAD, 1L);
        SET (CURLOPT_READFUNCTION, s_on_upload);
        SET (CURLOPT_READDATA, r);
        SET (CURLOPT_SEEKFUNCTION, s_on_seek);
        SET (CURLOPT_SEEKDATA, r);
        SET (CURLOPT_INFILESIZE_LARGE, (curl_off_t) r->up_size);
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

static void
s_fill_error (sb_az_t *self, s_req_t *r, CURLcode cc, const char *extra)
{
    sb_storage_error_t *e = &r->error;
    memset (e, 0, sizeof *e);
    snprintf (e->engine, sizeof e->engine, "azure");
    snprintf (e->where, sizeof e->where, "%s", self->endpoints[r->endpoint].url);
    snprintf (e->op, sizeof e->op, "%s", s_op_names[r->op]);
    snprintf (e->target, sizeof e->target, "%s", r->key);
    e->attempt = r->attempt;
    e->status = r->status;
    e->lib_code = (int) cc;
    long os_errno = 0;
    if (r->easy && curl_easy_getinfo (r->easy, CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK)
        e->os_errno = (int) os_errno;
    char message[256] = "";
    snprintf (e->code, sizeof e->code, "%s", r->err_code);
    if (r->body && r->body_len && r->status >= 300) {
        if (!e->code[0])
            s_xml_find (r->body, r->body_len, "Code", e->code, sizeof e->code);
        if (s_xml_find (r->body, r->body_len, "Message", message, sizeof message) >= 0)
            message[strcspn (message, "\r\n")] = '\0';     /* Azure adds RequestId and Time lines */
    }
    e->missing = r->status == 404;
    switch (cc) {
    case CURLE_COULDNT_CONNECT: case CURLE_OPERATION_TIMEDOUT: case CURLE_GOT_NOTHING: case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR: case CURLE_PARTIAL_FILE: case CURLE_HTTP2: case CURLE_HTTP2_STREAM:
        e->transient = 1;
        break;
    case CURLE_OK: {
        long s = r->status;
        e->transient = s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
        break;
    }
    default:
        break;
    }
    char cause[1024], curl_text[256] = "";
    if (cc != CURLE_OK)
        snprintf (curl_text, sizeof curl_text, "%s", r->errbuf[0] ? r->errbuf : curl_easy_strerror (cc));
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

static void
s_fill_cancelled (sb_az_t *self, s_req_t *r)
{
    s_fill_error (self, r, CURLE_ABORTED_BY_CALLBACK, NULL);
    sb_storage_error_t *e = &r->error;
    const char *why = zsys_interrupted ? "interrupted by a signal" : "stopped (the session ended)";
    e->stopped = 1;
    e->transient = 0;
    e->os_errno = 0;
    snprintf (e->text, sizeof e->text, "%s %s%s%s on %s: %s (attempt %d)", e->op, self->cfg.store,
              r->key[0] ? "/" : "", r->key, e->where, why, e->attempt);
}

static void
s_active_add (sb_az_t *self, s_req_t *r)
{
    r->active_prev = NULL;
    r->active_next = self->active;
    if (self->active)
        self->active->active_prev = r;
    self->active = r;
}

static void
s_active_remove (sb_az_t *self, s_req_t *r)
{
    if (r->active_prev)
        r->active_prev->active_next = r->active_next;
    else
        self->active = r->active_next;
    if (r->active_next)
        r->active_next->active_prev = r->active_prev;
    r->active_prev = r->active_next = NULL;
    CURLMcode mc = curl_multi_remove_handle (self->multi, r->easy);
    if (mc != CURLM_OK)
        sb_warn ("curl_multi_remove_handle: %s", curl_multi_strerror (mc));
}

static int
s_start (sb_az_t *self, s_req_t *r)
{
    if (!r->easy) {
        r->easy = self->npool ? self->easy_pool[--self->npool] : curl_easy_init ();
        if (!r->easy)
            return -1;
    }
    r->endpoint = s_pick_endpoint (self, r);
    r->attempt++;
    char why[512];
    if (s_prepare (self, r, why, sizeof why) != 0) {
        s_fill_error (self, r, CURLE_OK, why);
        r->failed = 1;
        return -1;
    }
    r->started_ns = sb_mono_ns ();
    if (curl_multi_add_handle (self->multi, r->easy) != CURLM_OK) {
        s_fill_error (self, r, CURLE_OK, "curl_multi_add_handle failed");
        r->failed = 1;
        return -1;
    }
    s_active_add (self, r);
    self->endpoints[r->endpoint].in_flight++;
    self->endpoints[r->endpoint].stats.requests++;
    return 0;
}

static uint64_t
s_backoff_ns (sb_az_t *self, int attempt)
{
    uint64_t base = 50000000ull << (attempt > 7 ? 7 : attempt - 1);
    if (base > 5000000000ull)
        base = 5000000000ull;
    return base / 2 + sb_splitmix64 (&self->rng) % (base / 2 + 1);
}

static void
s_complete (sb_az_t *self, s_req_t *r)
{
    if (r->async) {
        r->next = NULL;
        if (self->done_tail)
            self->done_tail->next = r;
        else
            self->done_list = r;
        self->done_tail = r;
    }
    else
        r->finished = 1;
}

static void
s_on_finished (sb_az_t *self, s_req_t *r, CURLcode cc)
{
    s_endpoint_t *ep = &self->endpoints[r->endpoint];
    ep->in_flight--;
    if (curl_easy_getinfo (r->easy, CURLINFO_RESPONSE_CODE, &r->status) != CURLE_OK)
        r->status = 0;
    if (cc == CURLE_ABORTED_BY_CALLBACK && !r->range_why[0]) {
        s_active_remove (self, r);
        s_fill_cancelled (self, r);
        r->failed = 1;
        s_complete (self, r);
        return;
    }
    const char *extra = NULL;
    char text[256];
    if (r->keep_body && cc == CURLE_WRITE_ERROR && r->body_over) {
        snprintf (text, sizeof text, "the object is larger than %zu bytes", r->body_limit);
        extra = text;
    }
    if (r->op == OP_GET && r->ranged && r->status >= 200 && r->status < 300 && !r->range_checked
        && (cc == CURLE_OK || cc == CURLE_PARTIAL_FILE))
        s_check_range (r);
    int permanent = r->range_why[0] != '\0';
    if (permanent) {
        extra = r->range_why;
        cc = CURLE_OK;
    }
    int ok = !permanent && cc == CURLE_OK && r->status >= 200 && r->status < 300;
    if (ok && r->op == OP_GET) {
        if (r->verify_failed) {
            snprintf (text, sizeof text, "verify: byte %llu differs from the generator",
                      (unsigned long long) r->mismatch_at);
            extra = text;
            ok = 0;
        }
        else if (r->ranged && r->received != r->length) {
            snprintf (text, sizeof text, "short body: %llu of %llu bytes arrived", (unsigned long long) r->received,
                      (unsigned long long) r->length);
            extra = text;
            ok = 0;
        }
    }
    if (ok) {
        uint64_t ns = sb_mono_ns () - r->started_ns;
        ep->stats.bytes += r->op == OP_GET ? r->received : r->op == OP_LIST || r->op == OP_GETBLOCKS ? r->body_len
                         : r->up_size;
        sb_histogram_add (&ep->stats.latency, ns / 1000);
        s_active_remove (self, r);
        r->failed = 0;
        r->latency_ns = ns;
        s_complete (self, r);
        return;
    }
    ep->stats.errors++;
    s_fill_error (self, r, cc, extra);
    s_active_remove (self, r);
    int transient = !permanent && (r->error.transient || (cc == CURLE_OK && r->status < 300 && !r->verify_failed));
    if (transient && (uint64_t) r->attempt <= self->cfg.max_retries && !r->no_retry) {
        ep->stats.retries++;
        sb_debug ("%s; retrying", r->error.text);
        r->due_ns = sb_mono_ns () + s_backoff_ns (self, r->attempt);
        r->next = self->retry_list;
        self->retry_list = r;
        return;
    }
    r->failed = 1;
    s_complete (self, r);
}

static long
s_start_due (sb_az_t *self)
{
    uint64_t now = sb_mono_ns ();
    long wait_ms = -1;
    s_req_t **pp = &self->retry_list;
    while (*pp) {
        s_req_t *r = *pp;
        if (r->due_ns <= now) {
            *pp = r->next;
            r->next = NULL;
            if (s_start (self, r) != 0)
                s_complete (self, r);
            continue;
        }
        long ms = (long) ((r->due_ns - now) / 1000000) + 1;
        if (wait_ms < 0 || ms < wait_ms)
            wait_ms = ms;
        pp = &r->next;
    }
    return wait_ms;
}

static int
s_collect (sb_az_t *self)
{
    int finished = 0;
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read (self->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        s_req_t *r = NULL;
        if (curl_easy_getinfo (msg->easy_handle, CURLINFO_PRIVATE, (char **) &r) != CURLE_OK)
            r = NULL;
        if (r) {
            s_on_finished (self, r, msg->data.result);
            finished++;
        }
    }
    return finished;
}

static int
s_cancel_all (sb_az_t *self)
{
    if ((!self->active && !self->retry_list) || !s_cancelled (self))
        return 0;
    while (self->active) {
        s_req_t *r = self->active;
        self->endpoints[r->endpoint].in_flight--;
        s_active_remove (self, r);
        s_fill_cancelled (self, r);
        r->failed = 1;
        s_complete (self, r);
    }
    while (self->retry_list) {
        s_req_t *r = self->retry_list;
        self->retry_list = r->next;
        r->next = NULL;
        s_fill_cancelled (self, r);
        r->failed = 1;
        s_complete (self, r);
    }
    return 1;
}

/* Run what can run; only when nothing finished, wait up to timeout_ms for
 * the network (or sb_az_wakeup). 0 or -1. */
static int
s_pump (sb_az_t *self, int timeout_ms)
{
    if (s_cancel_all (self))
        return 0;
    long retry_ms = s_start_due (self);
    if (retry_ms >= 0 && retry_ms < timeout_ms)
        timeout_ms = (int) retry_ms;
    int running = 0;
    CURLMcode mc = curl_multi_perform (self->multi, &running);
    if (mc == CURLM_OK && s_collect (self) == 0 && timeout_ms > 0) {
        mc = curl_multi_poll (self->multi, NULL, 0, timeout_ms, NULL);
        if (mc == CURLM_OK && s_cancel_all (self))
            return 0;
        if (mc == CURLM_OK)
            mc = curl_multi_perform (self->multi, &running);
        if (mc == CURLM_OK)
            s_collect (self);
    }
    if (mc != CURLM_OK) {
        sb_error ("curl multi: %s", curl_multi_strerror (mc));
        return -1;
    }
    s_start_due (self);
    return 0;
}

static s_req_t *
s_req_new (sb_az_t *self, s_op_t op, const char *key)
{
    s_req_t *r = calloc (1, sizeof *r);
    if (!r)
        return NULL;
    r->az = self;
    r->op = op;
    r->fixed_endpoint = -1;
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
    if (!r)
        return;
    if (r->easy) {
        if (self->npool < self->max_in_flight + 4) {
            curl_easy_reset (r->easy);
            self->easy_pool[self->npool++] = r->easy;
        }
        else
            curl_easy_cleanup (r->easy);
    }
    s_req_free (r);
}

/* Take r out of the client (a curl multi failure left it in flight). */
static void
s_abandon (sb_az_t *self, s_req_t *r)
{
    for (s_req_t *a = self->active; a; a = a->active_next)
        if (a == r) {
            self->endpoints[r->endpoint].in_flight--;
            s_active_remove (self, r);
            return;
        }
    for (s_req_t **pp = &self->retry_list; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            return;
        }
}

static int
s_perform (sb_az_t *self, s_req_t *r, sb_storage_error_t *e)
{
    r->async = 0;
    if (s_start (self, r) != 0) {
        if (e)
            *e = r->error;
        return -1;
    }
    while (!r->finished)
        if (s_pump (self, 100) != 0) {
            s_abandon (self, r);
            s_fill_error (self, r, CURLE_OK, "curl multi failure");
            r->failed = 1;
            break;
        }
    if (r->failed && e)
        *e = r->error;
    return r->failed ? -1 : 0;
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
    r->fixed_endpoint = (int) i;
    r->no_retry = 1;
    int rc = s_perform (self, r, e);
    s_req_done (self, r);
    if (rc != 0 || !write)
        return rc;
    r = s_req_new (self, OP_PUT, probe_key);
    if (!r)
        return s_fail (self, e, "PUT", probe_key, "out of memory or key too long");
    r->fixed_endpoint = (int) i;
    r->no_retry = 1;
    r->up_body = "shardbench write check\n";
    r->up_size = strlen (r->up_body);
    rc = s_perform (self, r, e);
    s_req_done (self, r);
    if (rc != 0)
        return rc;
    r = s_req_new (self, OP_DELETE, probe_key);
    if (!r)
        return s_fail (self, e, "DELETE", probe_key, "out of memory");
    r->fixed_endpoint = (int) i;
    r->no_retry = 1;
    rc = s_perform (self, r, e);
    s_req_done (self, r);
    return rc;
}

static int
s_parse_u64 (const char *text, uint64_t *out)
{
    if (text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull (text, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
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
        r->keep_body = 1;
        if (s_perform (self, r, e) != 0) {
            if (r->body_over)
                s_fail (self, e, "LIST", prefix, "List Blobs page %llu is over %u bytes; not taken",
                        (unsigned long long) pages, S_BODY_CAP);
            s_req_done (self, r);
            return -1;
        }
        const char *xml = r->body ? r->body : "";
        size_t len = r->body_len;
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
                || s_parse_u64 (size_text, &size) != 0) {
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
        *size = curl_easy_getinfo (r->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length >= 0
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
    r->offset = offset;
    r->length = length;
    r->ranged = length > 0;
    int rc = s_perform (self, r, e);
    *received = r->received;
    s_req_done (self, r);
    return rc;
}

int
sb_az_get_small (sb_az_t *self, const char *key, char *buf, size_t cap, size_t *len, sb_storage_error_t *e)
{
    s_req_t *r = s_req_new (self, OP_GET, key);
    if (!r)
        return s_fail (self, e, "GET", key, "out of memory or key too long");
    r->keep_body = 1;
    r->body_limit = cap;
    r->no_retry = 0;
    int rc = s_perform (self, r, e);
    if (rc == 0) {
        if (r->body_len > cap)
            rc = s_fail (self, e, "GET", key, "the object is larger than %zu bytes", cap);
        else {
            if (r->body_len)
                memcpy (buf, r->body, r->body_len);
            *len = r->body_len;
        }
    }
    long status = r->status;
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
    r->keep_body = 1;
    int rc = s_perform (self, r, e);
    *count = *bytes = 0;
    if (rc == 0) {
        const char *xml = r->body ? r->body : "";
        size_t len = r->body_len, pos = 0;
        const char *committed = memmem (xml, len, "<CommittedBlocks>", 17);
        if (committed)
            pos = (size_t) (committed - xml);
        const char *end = memmem (xml, len, "</CommittedBlocks>", 18);
        char size_text[32];
        for (const char *b; committed && (b = memmem (xml + pos, len - pos, "<Block>", 7)) && (!end || b < end);) {
            const char *c = memmem (b, len - (size_t) (b - xml), "</Block>", 8);
            uint64_t n = 0;
            if (!c || s_xml_find (b, (size_t) (c - b), "Size", size_text, sizeof size_text) != 0
                || s_parse_u64 (size_text, &n) != 0) {
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
    r->fill = fill;
    r->fill_ctx = ctx;
    r->up_size = size;
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
            r->fill = fill;
            r->fill_ctx = ctx;
            r->up_base = next * block;
            r->up_size = size - r->up_base < block ? size - r->up_base : block;
            if (s_start (self, r) != 0) {
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
        if (s_pump (self, 100) != 0)
            for (uint64_t i = 0; i < window; i++)
                if (slot[i] && !slot[i]->finished) {
                    s_abandon (self, slot[i]);
                    s_fill_error (self, slot[i], CURLE_OK, "curl multi failure");
                    slot[i]->failed = slot[i]->finished = 1;
                }
        for (uint64_t i = 0; i < window; i++) {
            s_req_t *r = slot[i];
            if (!r || !r->finished)
                continue;
            if (r->failed) {
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
            r->up_body = xml;
            r->up_size = xl;
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
    if (!r) {
        if (expect_free)
            expect_free (expect_ctx);
        return -1;
    }
    r->expect = expect;
    r->expect_ctx = expect_ctx;
    r->expect_free = expect_free;
    r->async = 1;
    r->tag = tag;
    r->offset = offset;
    r->length = length;
    r->ranged = length > 0;
    if (expect && !(r->verify_buf = malloc (65536))) {
        s_req_free (r);
        return -1;
    }
    self->pending++;
    if (s_start (self, r) != 0)
        s_complete (self, r);   /* delivered as a failure */
    return 0;
}

int
sb_az_run (sb_az_t *self, int timeout_ms, void (*fn) (void *ctx, const sb_az_done_t *done), void *ctx)
{
    if (!self->done_list && s_pump (self, timeout_ms) != 0)
        return -1;
    int delivered = 0;
    while (self->done_list) {
        s_req_t *r = self->done_list;
        self->done_list = r->next;
        if (!self->done_list)
            self->done_tail = NULL;
        sb_az_done_t d = { .tag = r->tag, .bytes = r->received, .latency_ns = r->latency_ns, .failed = r->failed };
        if (r->failed)
            d.error = r->error;
        self->pending--;
        s_req_done (self, r);
        fn (ctx, &d);
        delivered++;
    }
    return delivered;
}
