/* S3 client logic that needs no server: the multipart plan within S3's
 * limits (5 MiB to 5 GiB parts, 10,000 parts, 5 TiB objects), the
 * memory one client takes (endpoint state for the endpoints it has, not 32
 * slots); listing replies a loopback thread scripts (keys outside the
 * prefix or out of order, sizes over 5 TiB, pages over the bound); and
 * requests to a server that never answers ended by a stop or a signal at
 * once, not at their timeouts. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* RTLD_NEXT */
#endif
#include <check.h>
#include "check_main.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_client.h"
#include "util.h"

#include <czmq.h>

#define MIB (1ull << 20)

/* ASan's allocator does not report to mallinfo2: the sizes are checked in
 * the plain build only */
#if defined(__SANITIZE_ADDRESS__)
#define S_HEAP_COUNTED 0
#else
#define S_HEAP_COUNTED 1
#endif

START_TEST (test_part_plan)
{
    uint64_t part = 0, n = 0;
    char why[256] = "";
    /* within the limits: the configured part size */
    ck_assert_int_eq (sb_s3_part_plan (1ull << 30, 16 * MIB, &part, &n, why, sizeof why), 0);
    ck_assert_uint_eq (part, 16 * MIB);
    ck_assert_uint_eq (n, 64);
    ck_assert_int_eq (sb_s3_part_plan (10000 * 16 * MIB, 16 * MIB, &part, &n, why, sizeof why), 0);
    ck_assert_uint_eq (n, 10000);
    /* one byte more: 10,001 parts are not allowed, the part grows to 17 MiB */
    ck_assert_int_eq (sb_s3_part_plan (10000 * 16 * MIB + 1, 16 * MIB, &part, &n, why, sizeof why), 1);
    ck_assert_uint_eq (part, 17 * MIB);
    ck_assert_uint_eq (n, 9412);
    /* S3's largest object with the smallest parts: 525 MiB parts */
    uint64_t size = SB_S3_OBJECT_MAX;
    ck_assert_int_eq (sb_s3_part_plan (size, SB_S3_PART_MIN, &part, &n, why, sizeof why), 1);
    ck_assert_uint_eq (part, 525 * MIB);
    ck_assert_uint_le (n, SB_S3_PARTS_MAX);
    ck_assert (part * n >= size && part * (n - 1) < size);
    ck_assert_uint_gt (size / (part - MIB) + 1, SB_S3_PARTS_MAX);    /* a MiB less would not fit */
    /* refused, with the numbers */
    ck_assert_int_eq (sb_s3_part_plan (size + 1, 16 * MIB, &part, &n, why, sizeof why), -1);
    ck_assert_str_eq (why, "an object of 5497558138881 bytes is over S3's limit of 5497558138880 bytes (5 TiB)");
    ck_assert_int_eq (sb_s3_part_plan (100 * MIB, MIB, &part, &n, why, sizeof why), -1);
    ck_assert_str_eq (why, "multipart part size 1048576 is outside S3's 5242880 to 5368709120 bytes");
    ck_assert_int_eq (sb_s3_part_plan (100 * MIB, 6ull << 30, &part, &n, why, sizeof why), -1);
}
END_TEST

/* curl_global_init, interposed: slow, and counted. Every client must wait
 * until it has finished (curl 7.88's is not thread-safe), and it runs once. */
static int s_init_calls, s_init_done;

CURLcode
curl_global_init (long flags)
{
    CURLcode (*real) (long) = NULL;
    void *sym = dlsym (RTLD_NEXT, "curl_global_init");
    memcpy (&real, &sym, sizeof real);      /* POSIX's way from dlsym to a function pointer */
    __atomic_add_fetch (&s_init_calls, 1, __ATOMIC_SEQ_CST);
    struct timespec ts = { 0, 300 * 1000 * 1000 };
    nanosleep (&ts, NULL);
    CURLcode rc = real ? real (flags) : CURLE_FAILED_INIT;
    __atomic_store_n (&s_init_done, 1, __ATOMIC_SEQ_CST);
    return rc;
}

static sb_storage_cfg_t s_cfg;
static sb_s3_settings_t s_set;   /* the S3 engine's own settings */

static void
s_cfg_init (size_t nendpoints)
{
    setenv ("AWS_ACCESS_KEY_ID", "AKTEST", 1);
    setenv ("AWS_SECRET_ACCESS_KEY", "secret", 1);
    memset (&s_cfg, 0, sizeof s_cfg);
    memset (&s_set, 0, sizeof s_set);
    snprintf (s_cfg.engine, sizeof s_cfg.engine, "s3");
    snprintf (s_cfg.store, sizeof s_cfg.store, "b");
    snprintf (s_set.region, sizeof s_set.region, "us-east-1");
    s_set.path_style = 1;
    s_set.multipart_part = 16 * MIB;
    s_set.multipart_threshold = 64 * MIB;
    for (size_t i = 0; i < SB_MAX_ENDPOINTS; i++)
        snprintf (s_cfg.endpoints[i], sizeof s_cfg.endpoints[i], "http://127.0.0.1:%zu", 9000 + i);
    s_cfg.nendpoints = nendpoints;
}

static pthread_barrier_t s_barrier;

static void *
s_new_client (void *arg)
{
    int *saw_init = arg;
    pthread_barrier_wait (&s_barrier);
    char err[256];
    sb_s3_t *s3 = sb_s3_new (&s_cfg, &s_set, 1, err, sizeof err);
    *saw_init = s3 && __atomic_load_n (&s_init_done, __ATOMIC_SEQ_CST);
    sb_s3_destroy (&s3);
    return NULL;
}

/* Clients made at once by 8 threads (ranks, listing streams): curl's global
 * set-up runs once, and no client is made before it has finished. */
START_TEST (test_global_init_once)
{
    s_cfg_init (1);
    pthread_t t[8];
    int saw[8] = { 0 };
    ck_assert_int_eq (pthread_barrier_init (&s_barrier, NULL, 8), 0);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq (pthread_create (&t[i], NULL, s_new_client, &saw[i]), 0);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq (pthread_join (t[i], NULL), 0);
    pthread_barrier_destroy (&s_barrier);
    ck_assert_int_eq (s_init_calls, 1);
    for (int i = 0; i < 8; i++)
        ck_assert_msg (saw[i], "client %d was made before curl_global_init had finished", i);
}
END_TEST

static size_t
s_heap_in_use (void)
{
    struct mallinfo2 mi = mallinfo2 ();
    return mi.uordblks + mi.hblkhd;
}

/* A client with one endpoint takes well under 64 KiB (it took 186 KB with
 * 32 endpoint slots of a latency histogram each); with 32 endpoints it
 * takes more. */
START_TEST (test_footprint)
{
    s_cfg_init (1);
    sb_storage_cfg_t cfg = s_cfg;
    char err[256];
    sb_s3_t *warm = sb_s3_new (&cfg, &s_set, 1, err, sizeof err);     /* curl's global state, once */
    ck_assert_msg (warm != NULL, "%s", err);
    sb_s3_destroy (&warm);
    ck_assert (warm == NULL);

    size_t before = s_heap_in_use ();
    sb_s3_t *one = sb_s3_new (&cfg, &s_set, 1, err, sizeof err);
    ck_assert_msg (one != NULL, "%s", err);
    size_t used_one = s_heap_in_use () - before;
    ck_assert_msg (!S_HEAP_COUNTED || used_one < 64 * 1024, "one client with one endpoint takes %zu bytes", used_one);
    ck_assert_uint_eq (sb_s3_endpoint_count (one), 1);
    ck_assert_str_eq (sb_s3_endpoint (one, 0), "http://127.0.0.1:9000");
    sb_s3_destroy (&one);

    cfg.nendpoints = SB_MAX_ENDPOINTS;
    before = s_heap_in_use ();
    sb_s3_t *all = sb_s3_new (&cfg, &s_set, 1, err, sizeof err);
    ck_assert_msg (all != NULL, "%s", err);
    size_t used_all = s_heap_in_use () - before;
    ck_assert_msg (!S_HEAP_COUNTED || used_all > used_one, "32 endpoints: %zu bytes, one: %zu", used_all, used_one);
    ck_assert_str_eq (sb_s3_endpoint (all, 31), "http://127.0.0.1:9031");
    sb_s3_destroy (&all);
}
END_TEST

/* addressing. Virtual-host style (path_style false) puts
 * the bucket in the host name, which an IP literal or localhost cannot
 * carry: those endpoints get path style, as AWS's S3 endpoint rules give an
 * IP endpoint (minio-py uses path style for any non-AWS host). */
START_TEST (test_path_style_rule)
{
    ck_assert_int_eq (sb_s3_endpoint_path_style ("http://127.0.0.1:9000", 0), 1);
    ck_assert_int_eq (sb_s3_endpoint_path_style ("http://10.1.2.3", 0), 1);
    ck_assert_int_eq (sb_s3_endpoint_path_style ("https://[::1]:9000", 0), 1);
    ck_assert_int_eq (sb_s3_endpoint_path_style ("http://[fd00::5]/", 0), 1);
    ck_assert_int_eq (sb_s3_endpoint_path_style ("http://localhost:9000", 0), 1);
    ck_assert_int_eq (sb_s3_endpoint_path_style ("http://LOCALHOST/", 0), 1);
    /* names keep virtual-host style when asked for it */
    ck_assert_int_eq (sb_s3_endpoint_path_style ("https://s3.us-east-1.amazonaws.com", 0), 0);
    ck_assert_int_eq (sb_s3_endpoint_path_style ("http://s3-endpoint1.local:9000", 0), 0);
    ck_assert_int_eq (sb_s3_endpoint_path_style ("http://localhost.example:9000", 0), 0);
    ck_assert_int_eq (sb_s3_endpoint_path_style ("http://127.0.0.1.nip.io:9000", 0), 0);
    ck_assert_int_eq (sb_s3_endpoint_path_style ("http://999.0.0.1:9000", 0), 0);    /* not an address */
    /* path_style set: always */
    ck_assert_int_eq (sb_s3_endpoint_path_style ("https://s3.us-east-1.amazonaws.com", 1), 1);
}
END_TEST

/* One HTTP request on a loopback socket: its request line and Host header. */
typedef struct {
    int  fd;
    char request[4096];
} s_capture_t;

static void *
s_capture_one (void *arg)
{
    s_capture_t *c = arg;
    int conn = accept (c->fd, NULL, NULL);
    if (conn < 0)
        return NULL;
    size_t got = 0;
    while (got < sizeof c->request - 1 && !strstr (c->request, "\r\n\r\n")) {
        ssize_t n = read (conn, c->request + got, sizeof c->request - 1 - got);
        if (n <= 0)
            break;
        got += (size_t) n;
        c->request[got] = '\0';
    }
    static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\n";
    ssize_t w = write (conn, reply, sizeof reply - 1);
    (void) w;
    close (conn);
    return NULL;
}

/* A HEAD with path_style false to http://HOST:PORT, HOST an IP literal or
 * localhost: the request goes to that host with /b/KEY (the bucket in the
 * path), not to b.HOST (which would not resolve). */
static void
s_head_addressed (const char *host)
{
    s_cfg_init (1);
    s_set.path_style = 0;
    s_cfg.max_retries = 0;
    s_cfg.connect_timeout_s = 5;
    s_cfg.request_timeout_s = 10;
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge (fd, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    ck_assert_int_eq (bind (fd, (struct sockaddr *) &a, sizeof a), 0);
    ck_assert_int_eq (listen (fd, 4), 0);
    ck_assert_int_eq (getsockname (fd, (struct sockaddr *) &a, &len), 0);
    snprintf (s_cfg.endpoints[0], sizeof s_cfg.endpoints[0], "http://%s:%u", host, ntohs (a.sin_port));
    s_capture_t cap = { .fd = fd };
    pthread_t t;
    ck_assert_int_eq (pthread_create (&t, NULL, s_capture_one, &cap), 0);
    char err[256];
    sb_s3_t *s3 = sb_s3_new (&s_cfg, &s_set, 1, err, sizeof err);
    ck_assert_msg (s3 != NULL, "%s", err);
    uint64_t size = 0;
    sb_s3_error_t e;
    int rc = sb_s3_head (s3, "ck/global_epoch1_step5/model_states-0.pt", &size, &e);
    ck_assert_msg (rc == 0, "HEAD via %s: %s", host, e.text);
    ck_assert_uint_eq (size, 7);
    sb_s3_destroy (&s3);
    ck_assert_int_eq (pthread_join (t, NULL), 0);
    close (fd);
    char line[256], host_hdr[300];
    snprintf (line, sizeof line, "HEAD /b/ck/global_epoch1_step5/model_states-0.pt HTTP/1.1\r\n");
    snprintf (host_hdr, sizeof host_hdr, "\r\nHost: %s:%u\r\n", host, ntohs (a.sin_port));
    ck_assert_msg (strncmp (cap.request, line, strlen (line)) == 0, "request via %s: %s", host, cap.request);
    ck_assert_msg (strstr (cap.request, host_hdr) != NULL, "Host header via %s: %s", host, cap.request);
}

START_TEST (test_path_style_ip)
{
    s_head_addressed ("127.0.0.1");
}
END_TEST

START_TEST (test_path_style_localhost)
{
    s_head_addressed ("localhost");
}
END_TEST

/* ---- listing replies: a loopback server answers each request (one per
 * connection) with the next scripted body, 200 OK ---- */

#define S_PAGES_MAX 4
typedef struct {
    int         fd;
    const char *body[S_PAGES_MAX];
    size_t      len[S_PAGES_MAX];     /* 0: strlen (body) */
    size_t      npages;
    char        target[S_PAGES_MAX][2048];  /* each request's target */
} s_pages_t;

static void *
s_serve_pages (void *arg)
{
    s_pages_t *p = arg;
    for (size_t i = 0; i < p->npages; i++) {
        int conn = accept (p->fd, NULL, NULL);
        if (conn < 0)
            return NULL;
        char req[8192];
        size_t got = 0;
        req[0] = '\0';
        while (got < sizeof req - 1 && !strstr (req, "\r\n\r\n")) {
            ssize_t n = read (conn, req + got, sizeof req - 1 - got);
            if (n <= 0)
                break;
            got += (size_t) n;
            req[got] = '\0';
        }
        sscanf (req, "%*s %2047s", p->target[i]);
        size_t len = p->len[i] ? p->len[i] : strlen (p->body[i]);
        char head[256];
        int hn = snprintf (head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
                           "Content-Length: %zu\r\nConnection: close\r\n\r\n", len);
        /* a client that stops reading (a page over the bound) ends the reply */
        if (send (conn, head, (size_t) hn, MSG_NOSIGNAL) == hn)
            for (size_t off = 0; off < len;) {
                ssize_t w = send (conn, p->body[i] + off, len - off, MSG_NOSIGNAL);
                if (w <= 0)
                    break;
                off += (size_t) w;
            }
        close (conn);
    }
    return NULL;
}

typedef struct {
    size_t   n;
    char     key[4][64];
    uint64_t size[4];
} s_keys_t;

static int
s_on_listed (void *ctx, const char *key, uint64_t size)
{
    s_keys_t *k = ctx;
    if (k->n < 4) {
        snprintf (k->key[k->n], sizeof k->key[k->n], "%s", key);
        k->size[k->n] = size;
    }
    k->n++;
    return 0;
}

#define S_LIST_HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult>"
#define S_OBJECT(key, size) "<Contents><Key>" key "</Key><Size>" size "</Size></Contents>"

/* sb_s3_list of prefix (start_after) against pages; the error text in
 * e->text, with the server's endpoint in place of {EP} compared by the
 * caller. Returns sb_s3_list's result. */
static int
s_list_pages (s_pages_t *p, const char *prefix, const char *start_after, s_keys_t *keys, sb_s3_error_t *e,
              char *ep, size_t ep_size)
{
    s_cfg_init (1);
    s_cfg.max_retries = 2;
    s_cfg.connect_timeout_s = 5;
    s_cfg.request_timeout_s = 20;
    p->fd = socket (AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge (p->fd, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    ck_assert_int_eq (bind (p->fd, (struct sockaddr *) &a, sizeof a), 0);
    ck_assert_int_eq (listen (p->fd, 4), 0);
    ck_assert_int_eq (getsockname (p->fd, (struct sockaddr *) &a, &alen), 0);
    snprintf (ep, ep_size, "http://127.0.0.1:%u", ntohs (a.sin_port));
    snprintf (s_cfg.endpoints[0], sizeof s_cfg.endpoints[0], "%s", ep);
    pthread_t t;
    ck_assert_int_eq (pthread_create (&t, NULL, s_serve_pages, p), 0);
    char err[256];
    sb_s3_t *s3 = sb_s3_new (&s_cfg, &s_set, 1, err, sizeof err);
    ck_assert_msg (s3 != NULL, "%s", err);
    memset (e, 0, sizeof *e);
    int rc = sb_s3_list (s3, prefix, start_after, NULL, 1000, s_on_listed, keys, e);
    sb_s3_destroy (&s3);
    shutdown (p->fd, SHUT_RDWR);    /* a server still waiting for a request that will not come */
    ck_assert_int_eq (pthread_join (t, NULL), 0);
    close (p->fd);
    return rc;
}

/* A key outside the prefix asked for (on the second page: named with its
 * continuation token) fails the listing; it is never handed on cut to the
 * prefix's length (zz/p/x would have become "/x"). */
START_TEST (test_list_outside_prefix)
{
    s_pages_t p = { .npages = 2 };
    p.body[0] = S_LIST_HEAD "<IsTruncated>true</IsTruncated>" S_OBJECT ("p/a", "1")
                "<NextContinuationToken>tok-2</NextContinuationToken></ListBucketResult>";
    p.body[1] = S_LIST_HEAD "<IsTruncated>false</IsTruncated>" S_OBJECT ("p/b", "2") S_OBJECT ("zz/p/x", "3")
                "</ListBucketResult>";
    s_keys_t k = { 0 };
    sb_s3_error_t e;
    char ep[64], want[1024];
    ck_assert_int_eq (s_list_pages (&p, "p/", NULL, &k, &e, ep, sizeof ep), -1);
    snprintf (want, sizeof want, "LIST b/p/ on %s failed (attempt 1): ListObjectsV2 page 2 (continuation token"
              " 'tok-2'): key 'zz/p/x' is not under the prefix 'p/' that was asked for; a listing with keys outside"
              " its prefix is not taken [http 200, curl 0, errno 0]", ep);
    ck_assert_str_eq (e.text, want);
    ck_assert_str_eq (e.endpoint, ep);
    ck_assert_str_eq (e.key, "p/");
    ck_assert_uint_eq (k.n, 2);     /* p/a and p/b, nothing after */
    ck_assert_str_eq (k.key[1], "p/b");
    ck_assert_msg (strstr (p.target[1], "continuation-token=tok-2") != NULL, "%s", p.target[1]);
}
END_TEST

/* Keys at or before start-after (a server that ignores it: parallel
 * listing's ranges would overlap) and keys out of order are refused. */
START_TEST (test_list_order)
{
    s_pages_t p = { .npages = 1 };
    p.body[0] = S_LIST_HEAD "<IsTruncated>false</IsTruncated>" S_OBJECT ("p/a", "1") S_OBJECT ("p/c", "1")
                "</ListBucketResult>";
    s_keys_t k = { 0 };
    sb_s3_error_t e;
    char ep[64], want[1024];
    ck_assert_int_eq (s_list_pages (&p, "p/", "p/b", &k, &e, ep, sizeof ep), -1);
    snprintf (want, sizeof want, "LIST b/p/ on %s failed (attempt 1): ListObjectsV2 page 1: key 'p/a' does not sort"
              " after start-after 'p/b' (the server ignored start-after, or listed out of order); not taken"
              " [http 200, curl 0, errno 0]", ep);
    ck_assert_str_eq (e.text, want);
    ck_assert_uint_eq (k.n, 0);
    ck_assert_msg (strstr (p.target[0], "start-after=p%2Fb") != NULL, "%s", p.target[0]);

    s_pages_t q = { .npages = 1 };
    q.body[0] = S_LIST_HEAD "<IsTruncated>false</IsTruncated>" S_OBJECT ("p/a", "1") S_OBJECT ("p/c", "1")
                S_OBJECT ("p/c", "1") "</ListBucketResult>";
    memset (&k, 0, sizeof k);
    ck_assert_int_eq (s_list_pages (&q, "p/", NULL, &k, &e, ep, sizeof ep), -1);
    snprintf (want, sizeof want, "LIST b/p/ on %s failed (attempt 1): ListObjectsV2 page 1: key 'p/c' does not sort"
              " after the key before it, 'p/c' (the server ignored start-after, or listed out of order); not taken"
              " [http 200, curl 0, errno 0]", ep);
    ck_assert_str_eq (e.text, want);
    ck_assert_uint_eq (k.n, 2);
}
END_TEST

/* Sizes up to S3's 5 TiB per object are taken; one byte more (and 2^63,
 * which the catalog would store negative) is refused with the key and the
 * Size as sent. */
START_TEST (test_list_size_bound)
{
    s_pages_t p = { .npages = 1 };
    p.body[0] = S_LIST_HEAD "<IsTruncated>false</IsTruncated>" S_OBJECT ("p/a", "5497558138880")
                S_OBJECT ("p/b", "5497558138881") "</ListBucketResult>";
    s_keys_t k = { 0 };
    sb_s3_error_t e;
    char ep[64], want[1024];
    ck_assert_int_eq (s_list_pages (&p, "p/", NULL, &k, &e, ep, sizeof ep), -1);
    snprintf (want, sizeof want, "LIST b/p/ on %s failed (attempt 1): ListObjectsV2 page 1: key 'p/b' has Size"
              " '5497558138881', over S3's limit of 5497558138880 bytes (5 TiB) for one object"
              " [http 200, curl 0, errno 0]", ep);
    ck_assert_str_eq (e.text, want);
    ck_assert_uint_eq (k.n, 1);
    ck_assert_uint_eq (k.size[0], SB_S3_OBJECT_MAX);

    s_pages_t q = { .npages = 1 };
    q.body[0] = S_LIST_HEAD "<IsTruncated>false</IsTruncated>" S_OBJECT ("p/a", "9223372036854775808")
                "</ListBucketResult>";
    memset (&k, 0, sizeof k);
    ck_assert_int_eq (s_list_pages (&q, "p/", NULL, &k, &e, ep, sizeof ep), -1);
    ck_assert_msg (strstr (e.text, "key 'p/a' has Size '9223372036854775808', over S3's limit") != NULL, "%s", e.text);
    ck_assert_uint_eq (k.n, 0);
}
END_TEST

/* A page of exactly SB_S3_LIST_PAGE_MAX bytes is taken; one byte more is
 * refused naming the page and the bound (it was curl's "Failure writing
 * output to destination"), and not retried. */
START_TEST (test_list_page_bound)
{
    static const char head[] = S_LIST_HEAD "<IsTruncated>false</IsTruncated>" S_OBJECT ("p/a", "7");
    static const char tail[] = "</ListBucketResult>";
    size_t max = (size_t) SB_S3_LIST_PAGE_MAX;
    char *big = malloc (max + 1);
    ck_assert (big != NULL);
    memcpy (big, head, sizeof head - 1);
    memset (big + sizeof head - 1, ' ', max + 1 - (sizeof head - 1));
    memcpy (big + max - (sizeof tail - 1), tail, sizeof tail - 1);     /* max bytes, tail last */

    s_pages_t p = { .npages = 1 };
    p.body[0] = big;
    p.len[0] = max;
    s_keys_t k = { 0 };
    sb_s3_error_t e;
    char ep[64], want[1024];
    ck_assert_msg (s_list_pages (&p, "p/", NULL, &k, &e, ep, sizeof ep) == 0, "%s", e.text);
    ck_assert_uint_eq (k.n, 1);
    ck_assert_uint_eq (k.size[0], 7);

    memcpy (big + max + 1 - (sizeof tail - 1), tail, sizeof tail - 1);   /* max + 1 bytes */
    memset (big + max - (sizeof tail - 1), ' ', 1);
    s_pages_t q = { .npages = 1 };
    q.body[0] = big;
    q.len[0] = max + 1;
    memset (&k, 0, sizeof k);
    ck_assert_int_eq (s_list_pages (&q, "p/", NULL, &k, &e, ep, sizeof ep), -1);
    snprintf (want, sizeof want, "LIST b/p/ on %s failed (attempt 1): ListObjectsV2 page 1 is over 8388608 bytes"
              " (8 MiB), the bound on one listing page (a page of 1000 keys is about 300 KB); not taken"
              " [http 200, curl 0, errno 0]", ep);
    ck_assert_str_eq (e.text, want);
    ck_assert_uint_eq (k.n, 0);
    free (big);
}
END_TEST

/* A server that never answers: a listening socket nobody accepts on (the
 * kernel completes the connection, the request goes out, nothing comes
 * back). A client of it with 30 s timeouts and 3 retries; port in *port. */
static int
s_silent_server (unsigned *port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge (fd, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    ck_assert_int_eq (bind (fd, (struct sockaddr *) &a, sizeof a), 0);
    ck_assert_int_eq (listen (fd, 16), 0);
    ck_assert_int_eq (getsockname (fd, (struct sockaddr *) &a, &len), 0);
    *port = ntohs (a.sin_port);
    s_cfg_init (1);
    s_cfg.max_retries = 3;
    s_cfg.connect_timeout_s = 30;
    s_cfg.request_timeout_s = 30;
    snprintf (s_cfg.endpoints[0], sizeof s_cfg.endpoints[0], "http://127.0.0.1:%u", *port);
    return fd;
}

static uint64_t s_stop_at_ns;
static int s_stop_calls;

static int
s_stop_later (void *arg)
{
    (void) arg;
    s_stop_calls++;
    return sb_mono_ns () >= s_stop_at_ns;
}

static void
s_on_done (void *ctx, const sb_s3_done_t *d)
{
    *(sb_s3_done_t *) ctx = *d;
}

/* The client's stop says 1 while a HEAD, then an asynchronous GET, waits
 * for a reply that never comes: each ends within a fraction of a second,
 * failed as stopped (not a storage error: not retried, not counted). */
START_TEST (test_stop_in_flight)
{
    unsigned port;
    int fd = s_silent_server (&port);
    char err[256];
    sb_s3_t *s3 = sb_s3_new (&s_cfg, &s_set, 2, err, sizeof err);
    ck_assert_msg (s3 != NULL, "%s", err);
    sb_s3_set_stop (s3, s_stop_later, NULL);
    uint64_t t0 = sb_mono_ns (), size = 0;
    s_stop_at_ns = t0 + 300000000ull;
    sb_s3_error_t e;
    ck_assert_int_eq (sb_s3_head (s3, "k", &size, &e), -1);
    double took = (double) (sb_mono_ns () - t0) / 1e9;
    ck_assert_msg (took >= 0.3 && took < 5, "HEAD ended after %.2f s", took);
    ck_assert_int_gt (s_stop_calls, 1);
    ck_assert_int_eq (e.cancelled, 1);
    ck_assert_int_eq (sb_s3_error_is_transient (&e), 0);
    char want[256];
    snprintf (want, sizeof want, "HEAD b/k on http://127.0.0.1:%u: stopped (the session ended) (attempt 1)", port);
    ck_assert_str_eq (e.text, want);
    /* an asynchronous GET: delivered failed by the next sb_s3_run */
    s_stop_at_ns = UINT64_MAX;
    ck_assert_int_eq (sb_s3_get_start (s3, 7, "obj", 0, 100, 0, 0), 0);
    sb_s3_done_t d = { 0 };
    ck_assert_int_eq (sb_s3_run (s3, 50, s_on_done, &d), 0);   /* nothing answers */
    ck_assert_uint_eq (sb_s3_pending (s3), 1);
    s_stop_at_ns = 0;
    t0 = sb_mono_ns ();
    int n = 0;
    while (n == 0 && sb_mono_ns () - t0 < 5000000000ull)
        n = sb_s3_run (s3, 1000, s_on_done, &d);
    ck_assert_int_eq (n, 1);
    ck_assert_msg (sb_mono_ns () - t0 < 1000000000ull, "GET ended after %.2f s", (double) (sb_mono_ns () - t0) / 1e9);
    ck_assert_uint_eq (d.tag, 7);
    ck_assert_int_eq (d.failed, 1);
    ck_assert_int_eq (d.error.cancelled, 1);
    snprintf (want, sizeof want, "GET b/obj on http://127.0.0.1:%u: stopped (the session ended) (attempt 1)", port);
    ck_assert_str_eq (d.error.text, want);
    sb_s3_endpoint_stats_t *st = sb_s3_stats (s3, 0);
    ck_assert_uint_eq (st->errors, 0);
    ck_assert_uint_eq (st->retries, 0);
    ck_assert_uint_eq (st->requests, 2);
    sb_s3_destroy (&s3);
    close (fd);
}
END_TEST

static void
s_fill_x (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    (void) ctx, (void) offset;
    memset (buf, 'x', len);
}

static void
s_on_usr1 (int sig)
{
    (void) sig;
    zsys_interrupted = 1;   /* what CZMQ's SIGINT handler does */
}

/* A real signal to the thread in the PUT, 0.3 s on: its handler sets the
 * flag on that thread, as a signal does (a plain write from this thread
 * would race with the PUT's reads; ThreadSanitizer says so). */
static void *
s_interrupt_later (void *arg)
{
    struct timespec ts = { 0, 300000000 };
    nanosleep (&ts, NULL);
    pthread_kill (*(pthread_t *) arg, SIGUSR1);
    return NULL;
}

/* A signal (zsys_interrupted) while a PUT waits for its reply: it ends at
 * once, "interrupted by a signal", never retried. */
START_TEST (test_signal_in_flight)
{
    unsigned port;
    int fd = s_silent_server (&port);
    char err[256];
    sb_s3_t *s3 = sb_s3_new (&s_cfg, &s_set, 1, err, sizeof err);
    ck_assert_msg (s3 != NULL, "%s", err);
    struct sigaction sa = { .sa_handler = s_on_usr1 };
    sigemptyset (&sa.sa_mask);
    ck_assert_int_eq (sigaction (SIGUSR1, &sa, NULL), 0);
    pthread_t t, self = pthread_self ();
    ck_assert_int_eq (pthread_create (&t, NULL, s_interrupt_later, &self), 0);
    uint64_t t0 = sb_mono_ns ();
    sb_s3_error_t e;
    ck_assert_int_eq (sb_s3_put (s3, "m", 6, s_fill_x, NULL, &e), -1);
    double took = (double) (sb_mono_ns () - t0) / 1e9;
    ck_assert_int_eq (pthread_join (t, NULL), 0);
    zsys_interrupted = 0;
    ck_assert_msg (took >= 0.3 && took < 5, "PUT ended after %.2f s", took);
    ck_assert_int_eq (e.cancelled, 1);
    char want[256];
    snprintf (want, sizeof want, "PUT b/m on http://127.0.0.1:%u: interrupted by a signal (attempt 1)", port);
    ck_assert_str_eq (e.text, want);
    ck_assert_uint_eq (sb_s3_stats (s3, 0)->requests, 1);
    sb_s3_destroy (&s3);
    close (fd);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("s3_client");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_global_init_once);     /* each test is a fresh process (CK_FORK) */
    tcase_add_test (tc, test_part_plan);
    tcase_add_test (tc, test_footprint);
    tcase_add_test (tc, test_path_style_rule);
    tcase_add_test (tc, test_path_style_ip);
    tcase_add_test (tc, test_path_style_localhost);
    tcase_add_test (tc, test_list_outside_prefix);
    tcase_add_test (tc, test_list_order);
    tcase_add_test (tc, test_list_size_bound);
    tcase_add_test (tc, test_list_page_bound);
    tcase_add_test (tc, test_stop_in_flight);
    tcase_add_test (tc, test_signal_in_flight);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
