/* fake_s3: a misbehaving S3 server on loopback with scripted
 * ListObjectsV2 replies, for tests/integration/test_s3_listing.sh.
 *
 *   fake_s3 -m MODE [-p PORT] [-l FILE] [-n N]
 *
 * It listens on 127.0.0.1:PORT (0 or absent: a free port) and prints
 *
 *   fake_s3 listening on 127.0.0.1:PORT
 *
 * on stdout. Path-style requests only. HEAD of the bucket (the preflight)
 * answers 200; a PUT is read, logged and answered 200 with an ETag (so that
 * a test can tell that something was written); any other object request is
 * 404 NoSuchKey. ListObjectsV2 (GET /BUCKET?list-type=2...) answers by MODE:
 *
 *   repeat-token  every page: IsTruncated=true, NextContinuationToken "tok-1",
 *                 no keys (a server that loops)
 *   cycle-token   as repeat-token, tokens A, B, A, B, ... (page n after token
 *                 A says B and after B says A)
 *   no-token      IsTruncated=true and no NextContinuationToken
 *   not-xml       200 OK, text/plain, a body that is not XML
 *   html          200 OK, an HTML page (a captive portal, a proxy)
 *   error200      200 OK, an S3 <Error> document
 *   bad-size      one object whose Size is "12abc"
 *   long-key      one object whose key is 1100 bytes (S3's limit is 1024)
 *   long-token    page 1: IsTruncated=true with a 1500-byte token; a request
 *                 with exactly that token gets the last page (empty); any
 *                 other token is 400 InvalidArgument
 *   huge-token    page 1: IsTruncated=true with a 5000-byte token
 *   outside-prefix  the prefix P asked for: page 1 lists P img_1_of_4.bin and
 *                 P img_2_of_4.bin, IsTruncated=true, token "tok-2"; page 2
 *                 lists P img_3_of_4.bin and zz/P img_4_of_4.bin (a key
 *                 outside P)
 *   no-start-after  start-after ignored: every request gets P img_1_of_4.bin
 *                 to P img_4_of_4.bin (one page)
 *   huge-size     one object P img_1_of_4.bin of Size 2^63
 *   huge-page     a ListBucketResult of 100 MiB (padded with spaces)
 *
 * and, for the signal tests of tests/integration/test_lifecycle.sh, modes
 * where a request is read and then never answered (the connection stays
 * open until the client closes it):
 *
 *   hang-list     every ListObjectsV2 request but the first N (-n N, default
 *                 0, counted over all connections), which get one empty page
 *   hang-put      every PUT and POST; listings are one empty page
 *   hang-object-put  as hang-put, but the dataset marker's PUT (a key ending
 *                 in .shardbench-dataset) is answered 200
 *   slowdown      every ListObjectsV2 request: 503 SlowDown (retried by the
 *                 client, with its backoff, up to its max_retries)
 *   stall-get     object GETs get the headers of their reply (206 with
 *                 Content-Range for a ranged GET, 200 else; Content-Length
 *                 of the object's size from FILE) and never a body byte;
 *                 listings are one page of the "KEY SIZE" lines of FILE
 *                 (-l, sorted) under the prefix asked for and after its
 *                 start-after
 *
 * Every request is one line on stderr (`fake_s3: LIST 1 token=-`,
 * `fake_s3: PUT /bucket/key 100 bytes`, `fake_s3: GET /bucket/key: 404`),
 * so a test counts them and sees which objects were asked for. One process
 * per connection (fork), each ending with its connection or its parent
 * (PR_SET_PDEATHSIG); no dependency but POSIX and Linux. Stop it with
 * SIGTERM. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define HDR_CAP 65536

static const char *s_mode = "";
static const char *s_keys = "";     /* -l FILE: the objects of stall-get */
static unsigned long s_answered;    /* -n N: hang-list answers the first N listings */
static unsigned long *s_lists;      /* listings so far, shared by the connections' processes */

static void
s_log (const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (line, sizeof line - 1, fmt, ap);
    va_end (ap);
    if (n < 0)
        return;
    if ((size_t) n > sizeof line - 2)
        n = (int) sizeof line - 2;
    line[n++] = '\n';
    char out[1300];
    int m = snprintf (out, sizeof out, "fake_s3: %.*s", n, line);
    /* one write per line: lines of several connections never mix */
    if (m > 0 && write (2, out, (size_t) m) < 0)
        return;
}

static int
s_write_all (int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send (fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t) w;
    }
    return 0;
}

static int
s_reply (int fd, int status, const char *type, const char *body)
{
    size_t bn = strlen (body);
    char head[512];
    int n = snprintf (head, sizeof head,
                      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nETag: \"0123456789abcdef\"\r\n"
                      "Connection: keep-alive\r\n\r\n",
                      status, status == 200 ? "OK" : status == 404 ? "Not Found" : status == 503 ? "Slow Down"
                      : "Bad Request", type, bn);
    if (n < 0 || s_write_all (fd, head, (size_t) n) != 0)
        return -1;
    return s_write_all (fd, body, bn);
}

/* The value of query parameter name in target, %-decoded; "" when absent. */
static void
s_query (const char *target, const char *name, char *out, size_t out_size)
{
    out[0] = '\0';
    const char *q = strchr (target, '?');
    size_t nl = strlen (name);
    for (const char *p = q; p; p = strchr (p + 1, '&')) {
        if (strncmp (p + 1, name, nl) != 0 || p[1 + nl] != '=')
            continue;
        size_t o = 0;
        for (const char *v = p + 2 + nl; *v && *v != '&' && *v != ' ' && o + 1 < out_size; v++) {
            unsigned int c;
            if (*v == '%' && sscanf (v + 1, "%2x", &c) == 1) {
                out[o++] = (char) c;
                v += 2;
            }
            else
                out[o++] = *v;
        }
        out[o] = '\0';
        return;
    }
}

static char *
s_repeat (char c, size_t n)
{
    char *t = malloc (n + 1);
    if (!t)
        exit (1);
    memset (t, c, n);
    t[n] = '\0';
    return t;
}

/* stall-get's listing: one page of the objects of s_keys under the
 * prefix asked for. Returns the length of *body, -1 when it cannot. */
static int
s_list_keys (const char *target, const char *head, char **body)
{
    char prefix[2048], after[2048], key[2048], *text = NULL, *tail = NULL;
    unsigned long long size;
    size_t len = 0, count = 0;
    s_query (target, "prefix", prefix, sizeof prefix);
    s_query (target, "start-after", after, sizeof after);
    FILE *f = fopen (s_keys, "r"), *out = open_memstream (&text, &len);
    if (!f || !out) {
        if (f)
            fclose (f);
        if (out)
            fclose (out);
        free (text);
        return -1;
    }
    while (fscanf (f, "%2047s %llu", key, &size) == 2)
        if (!strncmp (key, prefix, strlen (prefix)) && strcmp (key, after) > 0) {
            fprintf (out, "<Contents><Key>%s</Key><Size>%llu</Size></Contents>", key, size);
            count++;
        }
    fclose (f);
    if (fclose (out) != 0) {
        free (text);
        return -1;
    }
    int n = asprintf (&tail, "%s<KeyCount>%zu</KeyCount><IsTruncated>false</IsTruncated>%s</ListBucketResult>", head,
                      count, text);
    free (text);
    *body = tail;
    return n;
}

/* The size of object path (/BUCKET/KEY) in s_keys; -1 when not there. */
static long long
s_key_size (const char *path)
{
    const char *key = strchr (path + 1, '/');
    char k[2048];
    unsigned long long size;
    long long found = -1;
    FILE *f = key ? fopen (s_keys, "r") : NULL;
    if (!f)
        return -1;
    while (found < 0 && fscanf (f, "%2047s %llu", k, &size) == 2)
        if (!strcmp (k, key + 1))
            found = (long long) size;
    fclose (f);
    return found;
}

/* Never answer: wait until the client closes the connection. */
static void
s_hang (int fd)
{
    char sink[4096];
    for (;;) {
        ssize_t r = recv (fd, sink, sizeof sink, 0);
        if (r == 0 || (r < 0 && errno != EINTR))
            return;
    }
}

/* Does this request go unanswered (hang-list, hang-put, hang-object-put)?
 * path_len: the length of target without its query. */
static int
s_unanswered (const char *method, const char *target, size_t path_len, int object)
{
    static const char marker[] = ".shardbench-dataset";
    size_t mn = sizeof marker - 1;
    int upload = !strcmp (method, "PUT") || !strcmp (method, "POST");
    if (!strcmp (s_mode, "hang-list"))
        return !strcmp (method, "GET") && !object && strstr (target, "list-type=2") != NULL
               && __atomic_add_fetch (s_lists, 1, __ATOMIC_SEQ_CST) > s_answered;
    if (!strcmp (s_mode, "hang-put"))
        return upload;
    if (!strcmp (s_mode, "hang-object-put"))
        return upload && !(path_len >= mn && !strncmp (target + path_len - mn, marker, mn));
    return 0;
}

/* The ListObjectsV2 page for this request, by mode. Returns the body
 * (malloc'd) and sets *status and *type. */
static char *
s_list_page (const char *target, int *status, const char **type)
{
    static unsigned long page;
    char token[8192];
    s_query (target, "continuation-token", token, sizeof token);
    char prefix[1100], after[1100];
    s_query (target, "prefix", prefix, sizeof prefix);
    s_query (target, "start-after", after, sizeof after);
    s_log ("LIST %lu token=%s%.40s (%zu bytes)%s%s", ++page, token[0] ? "" : "-", token, strlen (token),
           after[0] ? " start-after=" : "", after);
    *status = 200;
    *type = "application/xml";
    const char *head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                       "<Name>bucket</Name><Prefix></Prefix><MaxKeys>1000</MaxKeys>";
    char *body = NULL, *big = NULL;
    int n = -1;
    if (!strcmp (s_mode, "repeat-token"))
        n = asprintf (&body, "%s<KeyCount>0</KeyCount><IsTruncated>true</IsTruncated>"
                      "<NextContinuationToken>tok-1</NextContinuationToken></ListBucketResult>", head);
    else if (!strcmp (s_mode, "cycle-token"))
        n = asprintf (&body, "%s<KeyCount>0</KeyCount><IsTruncated>true</IsTruncated>"
                      "<NextContinuationToken>%s</NextContinuationToken></ListBucketResult>", head,
                      !strcmp (token, "A") ? "B" : "A");
    else if (!strcmp (s_mode, "no-token"))
        n = asprintf (&body, "%s<KeyCount>0</KeyCount><IsTruncated>true</IsTruncated></ListBucketResult>", head);
    else if (!strcmp (s_mode, "not-xml")) {
        *type = "text/plain";
        n = asprintf (&body, "this is not XML at all\n");
    }
    else if (!strcmp (s_mode, "html")) {
        *type = "text/html";
        n = asprintf (&body, "<html><body><h1>Welcome</h1><p>Please log in to the network.</p></body></html>\n");
    }
    else if (!strcmp (s_mode, "error200"))
        n = asprintf (&body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InternalError</Code>"
                      "<Message>We encountered an internal error.</Message></Error>");
    else if (!strcmp (s_mode, "bad-size"))
        n = asprintf (&body, "%s<KeyCount>1</KeyCount><IsTruncated>false</IsTruncated><Contents><Key>x/train/img_1_of_1.npz"
                      "</Key><Size>12abc</Size></Contents></ListBucketResult>", head);
    else if (!strcmp (s_mode, "long-key")) {
        big = s_repeat ('k', 1100);
        n = asprintf (&body, "%s<KeyCount>1</KeyCount><IsTruncated>false</IsTruncated><Contents><Key>%s</Key>"
                      "<Size>10</Size></Contents></ListBucketResult>", head, big);
    }
    else if (!strcmp (s_mode, "long-token") || !strcmp (s_mode, "huge-token")) {
        big = s_repeat ('t', !strcmp (s_mode, "long-token") ? 1500 : 5000);
        if (!token[0])
            n = asprintf (&body, "%s<KeyCount>0</KeyCount><IsTruncated>true</IsTruncated>"
                          "<NextContinuationToken>%s</NextContinuationToken></ListBucketResult>", head, big);
        else if (!strcmp (token, big)) {
            s_log ("LIST token matches (%zu bytes)", strlen (token));
            n = asprintf (&body, "%s<KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>", head);
        }
        else {
            s_log ("LIST token differs (%zu bytes)", strlen (token));
            *status = 400;
            n = asprintf (&body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InvalidArgument</Code>"
                          "<Message>The continuation token provided is incorrect</Message></Error>");
        }
    }
    else if (!strcmp (s_mode, "outside-prefix")) {
        if (!token[0])
            n = asprintf (&body, "%s<KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>"
                          "<Contents><Key>%simg_1_of_4.bin</Key><Size>100</Size></Contents>"
                          "<Contents><Key>%simg_2_of_4.bin</Key><Size>100</Size></Contents>"
                          "<NextContinuationToken>tok-2</NextContinuationToken></ListBucketResult>", head, prefix,
                          prefix);
        else
            n = asprintf (&body, "%s<KeyCount>2</KeyCount><IsTruncated>false</IsTruncated>"
                          "<Contents><Key>%simg_3_of_4.bin</Key><Size>100</Size></Contents>"
                          "<Contents><Key>zz/%simg_4_of_4.bin</Key><Size>100</Size></Contents>"
                          "</ListBucketResult>", head, prefix, prefix);
    }
    else if (!strcmp (s_mode, "no-start-after")) {
        n = asprintf (&body, "%s<KeyCount>4</KeyCount><IsTruncated>false</IsTruncated>"
                      "<Contents><Key>%simg_1_of_4.bin</Key><Size>100</Size></Contents>"
                      "<Contents><Key>%simg_2_of_4.bin</Key><Size>100</Size></Contents>"
                      "<Contents><Key>%simg_3_of_4.bin</Key><Size>100</Size></Contents>"
                      "<Contents><Key>%simg_4_of_4.bin</Key><Size>100</Size></Contents>"
                      "</ListBucketResult>", head, prefix, prefix, prefix, prefix);
    }
    else if (!strcmp (s_mode, "huge-size"))
        n = asprintf (&body, "%s<KeyCount>1</KeyCount><IsTruncated>false</IsTruncated>"
                      "<Contents><Key>%simg_1_of_4.bin</Key><Size>9223372036854775808</Size></Contents>"
                      "</ListBucketResult>", head, prefix);
    else if (!strcmp (s_mode, "slowdown")) {
        *status = 503;
        n = asprintf (&body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code>"
                      "<Message>Please reduce your request rate.</Message></Error>");
    }
    else if (!strcmp (s_mode, "hang-put") || !strcmp (s_mode, "hang-object-put") || !strcmp (s_mode, "hang-list"))
        n = asprintf (&body, "%s<KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>", head);
    else if (!strcmp (s_mode, "stall-get"))
        n = s_list_keys (target, head, &body);
    free (big);
    if (n < 0) {
        *status = 500;
        return strdup ("unknown mode");
    }
    return body;
}

/* A well-formed ListBucketResult of 100 MiB, spaces between its elements,
 * streamed (never held in memory). A client that stops reading ends it. */
static int
s_huge_page (int fd)
{
    static const char open[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                               "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                               "<Name>bucket</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated>";
    static const char close[] = "</ListBucketResult>";
    const size_t total = 100u << 20;
    char head[256];
    int n = snprintf (head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
                      "Content-Length: %zu\r\n\r\n", total);
    if (n < 0 || s_write_all (fd, head, (size_t) n) != 0 || s_write_all (fd, open, sizeof open - 1) != 0)
        return -1;
    static char pad[65536];
    memset (pad, ' ', sizeof pad);
    for (size_t left = total - (sizeof open - 1) - (sizeof close - 1); left > 0;) {
        size_t k = left < sizeof pad ? left : sizeof pad;
        if (s_write_all (fd, pad, k) != 0)
            return -1;
        left -= k;
    }
    return s_write_all (fd, close, sizeof close - 1);
}

/* Serve one connection, request after request, until the client closes. */
static void
s_serve (int fd)
{
    static char req[HDR_CAP];
    size_t len = 0;
    for (;;) {
        char *end = NULL;
        while (!(end = len >= 4 ? memmem (req, len, "\r\n\r\n", 4) : NULL)) {
            if (len + 1 >= sizeof req)
                return;
            ssize_t r = recv (fd, req + len, sizeof req - 1 - len, 0);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return;
            len += (size_t) r;
        }
        *end = '\0';
        size_t hlen = (size_t) (end - req) + 4;
        char method[16] = "", target[HDR_CAP];
        if (sscanf (req, "%15s %65535s", method, target) != 2)
            return;
        unsigned long long clen = 0;
        for (char *h = strstr (req, "\r\n"); h; h = strstr (h + 2, "\r\n"))
            if (strncasecmp (h + 2, "content-length:", 15) == 0)
                clen = strtoull (h + 17, NULL, 10);
        unsigned long long first = 0, last = 0;
        const char *range = strcasestr (req, "\r\nrange: bytes=");
        int ranged = range && sscanf (range + 15, "%llu-%llu", &first, &last) == 2 && last >= first;
        /* the request body: read and dropped */
        size_t have = len - hlen;
        unsigned long long left = clen > have ? clen - have : 0;
        size_t used = hlen + (clen < have ? (size_t) clen : have);
        memmove (req, req + used, len - used);
        len -= used;
        while (left > 0) {
            char sink[65536];
            ssize_t r = recv (fd, sink, left < sizeof sink ? (size_t) left : sizeof sink, 0);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return;
            left -= (unsigned long long) r;
        }
        const char *slash = strchr (target + 1, '/');
        size_t q = strcspn (target, "?");
        int object = slash && (size_t) (slash - target) + 1 < q;
        int rc;
        if (s_unanswered (method, target, q, object)) {
            s_log ("%s %.*s: no answer", method, (int) q, target);
            s_hang (fd);
            return;
        }
        char path[2048];
        snprintf (path, sizeof path, "%.*s", (int) q, target);
        long long listed = !strcmp (s_mode, "stall-get") && !strcmp (method, "GET") && object ? s_key_size (path) : -1;
        if (listed >= 0) {
            char head[512];
            unsigned long long size = (unsigned long long) listed;
            int n;
            if (ranged)
                n = snprintf (head, sizeof head, "HTTP/1.1 206 Partial Content\r\nContent-Length: %llu\r\n"
                              "Content-Range: bytes %llu-%llu/%llu\r\n\r\n", last - first + 1, first, last, size);
            else
                n = snprintf (head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\n\r\n", size);
            s_log ("GET %s: headers, no body", path);
            if (n > 0 && s_write_all (fd, head, (size_t) n) == 0)
                s_hang (fd);
            return;
        }
        if (!strcmp (method, "HEAD") && !object) {
            s_log ("HEAD %s", target);
            { const char *ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"; rc = s_write_all (fd, ok, strlen (ok)); }
        }
        else if (!strcmp (method, "GET") && !object && strstr (target, "list-type=2")
                 && !strcmp (s_mode, "huge-page")) {
            int status;
            const char *type;
            free (s_list_page (target, &status, &type));    /* logged and counted like the others */
            rc = s_huge_page (fd);
        }
        else if (!strcmp (method, "GET") && !object && strstr (target, "list-type=2")) {
            int status;
            const char *type;
            char *body = s_list_page (target, &status, &type);
            rc = s_reply (fd, status, type, body);
            free (body);
        }
        else if (!strcmp (method, "PUT") || !strcmp (method, "POST")) {
            s_log ("%s %.*s %llu bytes", method, (int) q, target, clen);
            rc = s_reply (fd, 200, "application/xml", "");
        }
        else {
            s_log ("%s %.*s: 404", method, (int) q, target);
            const char *none = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
            rc = !strcmp (method, "HEAD") ? s_write_all (fd, none, strlen (none))
                 : s_reply (fd, 404, "application/xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>"
                            "<Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>");
        }
        if (rc != 0)
            return;
    }
}

int
main (int argc, char **argv)
{
    int port = 0, opt;
    while ((opt = getopt (argc, argv, "m:p:l:n:")) != -1) {
        switch (opt) {
        case 'n': s_answered = strtoul (optarg, NULL, 10); break;
        case 'm': s_mode = optarg; break;
        case 'l': s_keys = optarg; break;
        case 'p': port = atoi (optarg); break;
        default:
            fprintf (stderr, "usage: fake_s3 -m MODE [-p PORT] [-l FILE] [-n N]\n");
            return 2;
        }
    }
    s_lists = mmap (NULL, sizeof *s_lists, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s_lists == MAP_FAILED) {
        fprintf (stderr, "fake_s3: mmap: %s\n", strerror (errno));
        return 1;
    }
    signal (SIGCHLD, SIG_IGN);      /* children are reaped by the kernel */
    int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (fd < 0 || setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0
        || bind (fd, (struct sockaddr *) &a, sizeof a) != 0 || listen (fd, 128) != 0
        || getsockname (fd, (struct sockaddr *) &a, &alen) != 0) {
        fprintf (stderr, "fake_s3: cannot listen on 127.0.0.1:%d: %s\n", port, strerror (errno));
        return 1;
    }
    printf ("fake_s3 listening on 127.0.0.1:%d\n", ntohs (a.sin_port));
    fflush (stdout);
    pid_t parent = getpid ();
    for (;;) {
        int cfd = accept4 (fd, NULL, NULL, SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            fprintf (stderr, "fake_s3: accept: %s\n", strerror (errno));
            return 1;
        }
        pid_t pid = fork ();
        if (pid == 0) {
            close (fd);
            if (prctl (PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid () != parent)
                _exit (0);
            s_serve (cfd);
            _exit (0);
        }
        if (pid < 0)
            fprintf (stderr, "fake_s3: fork: %s\n", strerror (errno));
        close (cfd);
    }
}
