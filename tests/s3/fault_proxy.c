/* fault_proxy: an HTTP proxy on loopback that injects faults into the
 * object reads of an S3 server, for tests/integration/test_s3_faults.sh.
 *
 *   fault_proxy -u UPSTREAM_PORT [-p PORT] [-q PORT2] [-m MODE] [-n COUNT] [-c FILE]
 *
 * It listens on 127.0.0.1:PORT (0 or absent: a free port) and on a second
 * port PORT2 (same rule), forwards every connection to 127.0.0.1:UPSTREAM_PORT
 * and prints, once both listen,
 *
 *   fault_proxy listening on 127.0.0.1:PORT 127.0.0.1:PORT2
 *
 * on stdout. One process, one thread, poll(2); no dependency but POSIX.
 *
 * Faults hit object GETs only: requests `GET /BUCKET/KEY` with a non-empty
 * key (path-style URLs). Bucket requests (HEAD, ListObjectsV2, the
 * preflight), GETs of the dataset marker (a KEY whose last part is
 * .shardbench-dataset)
 * and uploads always go through, so preflight and listing succeed
 * and the faults land where the test expects them. COUNT is how many faults
 * to inject (the first COUNT object GETs, whatever the connection): a
 * positive COUNT is a transient fault, -1 a persistent one (every object
 * GET), 0 none. MODE is one of
 *
 *   none     forward everything
 *   503      answer `503 SlowDown` with an S3 XML error body (keep-alive)
 *   500      answer `500 InternalError` with an S3 XML error body (keep-alive)
 *   reset    forward the request, then the reply's headers and half of its
 *            body, then reset the connection (SO_LINGER 0: RST)
 *   drop     reset the connection as soon as the request arrived, no reply
 *   stall    swallow the request and never answer (until the client gives up
 *            and closes); pair with a request timeout shorter than the test
 *   refuse   connection refused, by the kernel: from the first object GET on,
 *            PORT2 stops listening, and every connection open on it is reset.
 *            The arming GET is reset when it came to PORT2, forwarded when it
 *            came to PORT. PORT2 listens again once COUNT more object GETs
 *            were served on PORT (-1: never). With a client that reads one
 *            object at a time, round robin over [PORT, PORT2], every refused
 *            attempt is followed by its retry on PORT, so exactly COUNT
 *            connects are refused.
 *   norange  forward the request without its Range header: the server
 *            answers 200 with the whole object, as a server that ignores
 *            Range would
 *   badrange forward the request asking one byte later (Range: bytes=A-B
 *            becomes bytes=A+1-B): the server answers 206 with a
 *            Content-Range that is not the range the client asked
 *
 * Run-time switch: with -c FILE, the proxy reads FILE before classifying
 * each request; when its content differs from the last read, the words
 * `MODE COUNT [TAG]` in it become the fault, the counters restart and PORT2
 * listens again. Write it atomically (write a temporary file, mv it over
 * FILE); change TAG to re-arm the same mode. A missing file changes nothing.
 *
 * Every decision is one line on stderr (`fault_proxy: inject 503 1/2 GET
 * /bucket/key`, `fault_proxy: mode 503 count 2`), so a test can count the
 * faults it caused. Requests are parsed only far enough to find their end
 * (Content-Length bodies; a chunked request body switches the connection to
 * plain forwarding). Stop it with SIGTERM. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* accept4 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 512
#define HDR_CAP   16384

typedef enum { M_NONE, M_503, M_500, M_RESET, M_DROP, M_STALL, M_REFUSE, M_NORANGE, M_BADRANGE } s_mode_t;
static const char *s_mode_names[] = { "none", "503", "500", "reset", "drop", "stall", "refuse", "norange",
                                      "badrange" };

typedef struct {
    int      cfd, ufd;          /* client and upstream sockets; -1 when closed */
    int      port;              /* 0: PORT, 1: PORT2 */
    /* client -> upstream: request header being gathered, or body to pass */
    char     req[HDR_CAP];
    size_t   req_len;
    uint64_t req_body_left;
    int      raw;               /* cannot parse: forward everything */
    int      stalled;           /* swallow everything from the client */
    /* upstream -> client: when cut is armed, headers then half the body */
    int      cut;
    char     resp[HDR_CAP];
    size_t   resp_len;
    int      in_body;
    uint64_t body_sent, body_limit;
} s_conn_t;

static s_conn_t *s_conns[MAX_CONNS];
static int       s_listen[2] = { -1, -1 };
static int       s_port[2];
static int       s_upstream_port;
static s_mode_t  s_mode = M_NONE;
static long      s_count;           /* faults to inject; -1: all */
static long      s_injected;
static int       s_refuse_armed;
static long      s_refuse_served;   /* object GETs on PORT since arming */
static const char *s_control;
static char      s_control_text[256];

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
    /* one write per line: the log stays readable while the test tails it */
    ssize_t w = write (2, "fault_proxy: ", 13);
    if (w >= 0)
        w = write (2, line, (size_t) n);
    (void) w;
}

static int
s_parse_mode (const char *text, s_mode_t *mode)
{
    for (size_t i = 0; i < sizeof s_mode_names / sizeof s_mode_names[0]; i++)
        if (strcmp (text, s_mode_names[i]) == 0) {
            *mode = (s_mode_t) i;
            return 0;
        }
    return -1;
}

static int
s_listen_on (int idx)
{
    int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) s_port[idx]) };
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0
        || bind (fd, (struct sockaddr *) &a, sizeof a) != 0 || listen (fd, 128) != 0
        || getsockname (fd, (struct sockaddr *) &a, &len) != 0) {
        s_log ("cannot listen on 127.0.0.1:%d: %s", s_port[idx], strerror (errno));
        if (fd >= 0)
            close (fd);
        return -1;
    }
    s_port[idx] = ntohs (a.sin_port);
    s_listen[idx] = fd;
    return 0;
}

/* Close with RST instead of FIN: the peer reads ECONNRESET. */
static void
s_reset_fd (int fd)
{
    struct linger lg = { .l_onoff = 1, .l_linger = 0 };
    if (setsockopt (fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg) != 0)
        s_log ("SO_LINGER: %s", strerror (errno));
    close (fd);
}

static void
s_conn_close (int slot, int reset)
{
    s_conn_t *c = s_conns[slot];
    if (!c)
        return;
    if (c->cfd >= 0) {
        if (reset)
            s_reset_fd (c->cfd);
        else
            close (c->cfd);
    }
    if (c->ufd >= 0)
        close (c->ufd);
    free (c);
    s_conns[slot] = NULL;
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

/* Stop listening on PORT2 and reset every connection open on it but keep
 * (the caller's). */
static void
s_refuse_arm (const s_conn_t *keep)
{
    s_refuse_armed = 1;
    s_refuse_served = 0;
    if (s_listen[1] >= 0) {
        close (s_listen[1]);
        s_listen[1] = -1;
    }
    for (int i = 0; i < MAX_CONNS; i++)
        if (s_conns[i] && s_conns[i]->port == 1 && s_conns[i] != keep)
            s_conn_close (i, 1);
    s_log ("refuse: 127.0.0.1:%d stopped listening", s_port[1]);
}

static void
s_refuse_disarm (void)
{
    if (s_listen[1] < 0 && s_listen_on (1) == 0)
        s_log ("refuse: 127.0.0.1:%d listens again", s_port[1]);
    s_refuse_armed = 0;
}

/* Reload the control file when its content changed. */
static void
s_control_check (void)
{
    if (!s_control)
        return;
    FILE *f = fopen (s_control, "r");
    if (!f)
        return;
    char text[256];
    size_t n = fread (text, 1, sizeof text - 1, f);
    fclose (f);
    text[n] = '\0';
    if (strcmp (text, s_control_text) == 0)
        return;
    snprintf (s_control_text, sizeof s_control_text, "%s", text);
    char mode[32] = "";
    long count = 0;
    s_mode_t m;
    if (sscanf (text, "%31s %ld", mode, &count) != 2 || s_parse_mode (mode, &m) != 0) {
        s_log ("control file %s: expected 'MODE COUNT [TAG]', got '%s'; unchanged", s_control, text);
        return;
    }
    s_mode = m;
    s_count = count;
    s_injected = 0;
    s_refuse_disarm ();
    s_log ("mode %s count %ld", s_mode_names[s_mode], s_count);
}

/* Is the request header an object GET (GET /BUCKET/KEY)? Sets path. */
static int
s_object_get (const char *hdr, char *path, size_t path_size)
{
    path[0] = '\0';
    if (strncmp (hdr, "GET /", 5) != 0)
        return 0;
    const char *p = hdr + 4;
    size_t n = strcspn (p, " \r\n");
    snprintf (path, path_size, "%.*s", (int) n, p);
    const char *slash = strchr (path + 1, '/');
    size_t q = strcspn (path, "?");
    if (!slash || (size_t) (slash - path) + 1 >= q)
        return 0;
    /* the dataset marker (PREFIX.shardbench-dataset, read by the coordinator
     * before a run) is metadata, as the listing is: it goes through */
    const char *base = path;
    for (const char *c = path; c < path + q; c++)
        if (*c == '/')
            base = c + 1;
    return strncmp (base, ".shardbench-dataset", 19) != 0;
}

static uint64_t
s_content_length (const char *hdr, int *chunked)
{
    uint64_t len = 0;
    *chunked = 0;
    for (const char *line = strstr (hdr, "\r\n"); line && line[2]; line = strstr (line + 2, "\r\n")) {
        const char *h = line + 2;
        if (strncasecmp (h, "content-length:", 15) == 0)
            len = strtoull (h + 15, NULL, 10);
        else if (strncasecmp (h, "transfer-encoding:", 18) == 0 && strstr (h, "chunked")
                 && strstr (h, "chunked") < strstr (h, "\r\n"))
            *chunked = 1;
    }
    return len;
}

static int
s_reply_error (s_conn_t *c, int status, const char *code, const char *message, const char *path)
{
    char body[1024], out[1600];
    int bn = snprintf (body, sizeof body,
                       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code><Message>%s</Message>"
                       "<Resource>%s</Resource><RequestId>fault-proxy</RequestId></Error>",
                       code, message, path);
    int n = snprintf (out, sizeof out,
                      "HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n"
                      "Connection: keep-alive\r\n\r\n%s",
                      status, status == 503 ? "Service Unavailable" : "Internal Server Error", bn, body);
    return s_write_all (c->cfd, out, (size_t) n);
}

/* A whole request header is in c->req. Returns 0 to go on, -1 to close the
 * connection (reset when *reset). */
static int
s_on_request (s_conn_t *c, int *reset)
{
    char path[1024];
    *reset = 0;
    s_control_check ();
    int chunked = 0;
    c->req_body_left = s_content_length (c->req, &chunked);
    if (chunked)
        c->raw = 1;
    int object_get = s_object_get (c->req, path, sizeof path);
    int fault = object_get && s_mode != M_NONE && (s_count < 0 || s_injected < s_count);
    if (s_mode == M_REFUSE && object_get) {
        if (!s_refuse_armed && s_injected == 0 && s_count != 0) {
            s_injected++;
            s_refuse_arm (c);
            if (c->port == 1) {
                s_log ("inject refuse (reset of the arming GET on 127.0.0.1:%d) GET %s", s_port[1], path);
                *reset = 1;
                return -1;
            }
        }
        else if (s_refuse_armed && c->port == 0 && s_count > 0 && ++s_refuse_served >= s_count)
            s_refuse_disarm ();
        fault = 0;
    }
    if (fault) {
        s_injected++;
        s_log ("inject %s %ld/%ld GET %s", s_mode_names[s_mode], s_injected, s_count, path);
        switch (s_mode) {
        case M_503:
            return s_reply_error (c, 503, "SlowDown", "Please reduce your request rate.", path);
        case M_500:
            return s_reply_error (c, 500, "InternalError", "We encountered an internal error. Please try again.",
                                  path);
        case M_DROP:
            *reset = 1;
            return -1;
        case M_STALL:
            c->stalled = 1;
            return 0;
        case M_BADRANGE: {
            char *h = strcasestr (c->req, "\r\nrange: bytes=");
            unsigned long long a, b;
            if (h && sscanf (h + 15, "%llu-%llu", &a, &b) == 2) {
                char *eol = strstr (h + 2, "\r\n");
                char line[96];
                int n = snprintf (line, sizeof line, "\r\nRange: bytes=%llu-%llu", a + 1, b);
                size_t old = (size_t) (eol - h), tail = c->req_len - (size_t) (eol - c->req);
                if (n > 0 && c->req_len - old + (size_t) n + 1 < sizeof c->req) {
                    memmove (h + n, eol, tail + 1);
                    memcpy (h, line, (size_t) n);
                    c->req_len = c->req_len - old + (size_t) n;
                }
            }
            break;
        }
        case M_NORANGE:
            /* drop every Range: line of the header */
            for (char *line = strstr (c->req, "\r\n"); line && line[2];) {
                char *h = line + 2;
                char *eol = strstr (h, "\r\n");
                if (!eol)
                    break;
                if (strncasecmp (h, "range:", 6) == 0) {
                    size_t cut = (size_t) (eol + 2 - h);
                    memmove (h, eol + 2, c->req_len - (size_t) (eol + 2 - c->req) + 1);
                    c->req_len -= cut;
                    continue;
                }
                line = eol;
            }
            break;
        case M_RESET:
            c->cut = 1;
            c->resp_len = 0;
            c->in_body = 0;
            c->body_sent = 0;
            break;      /* forward the request */
        default:
            break;
        }
    }
    return s_write_all (c->ufd, c->req, c->req_len);
}

/* Bytes from the client. Returns 0, or -1 to close (reset when *reset). */
static int
s_from_client (s_conn_t *c, const char *buf, size_t n, int *reset)
{
    *reset = 0;
    while (n > 0) {
        if (c->stalled)
            return 0;
        if (c->raw)
            return s_write_all (c->ufd, buf, n);
        if (c->req_body_left > 0) {
            size_t k = n < c->req_body_left ? n : (size_t) c->req_body_left;
            if (s_write_all (c->ufd, buf, k) != 0)
                return -1;
            c->req_body_left -= k;
            buf += k;
            n -= k;
            continue;
        }
        /* gather the header byte by byte up to its blank line */
        if (c->req_len + 1 >= sizeof c->req) {
            s_log ("request header over %d bytes: forwarding the connection unparsed", HDR_CAP);
            c->raw = 1;
            if (s_write_all (c->ufd, c->req, c->req_len) != 0)
                return -1;
            c->req_len = 0;
            continue;
        }
        c->req[c->req_len++] = *buf++;
        n--;
        c->req[c->req_len] = '\0';
        if (c->req_len >= 4 && memcmp (c->req + c->req_len - 4, "\r\n\r\n", 4) == 0) {
            if (s_on_request (c, reset) != 0)
                return -1;
            c->req_len = 0;
        }
    }
    return 0;
}

/* Bytes from the server. Returns 0, or -1 to close (reset when *reset). */
static int
s_from_upstream (s_conn_t *c, const char *buf, size_t n, int *reset)
{
    *reset = 0;
    if (!c->cut)
        return s_write_all (c->cfd, buf, n);
    while (n > 0 && !c->in_body) {
        if (c->resp_len + 1 >= sizeof c->resp)
            return -1;
        c->resp[c->resp_len++] = *buf++;
        n--;
        c->resp[c->resp_len] = '\0';
        if (c->resp_len >= 4 && memcmp (c->resp + c->resp_len - 4, "\r\n\r\n", 4) == 0) {
            int chunked;
            uint64_t len = s_content_length (c->resp, &chunked);
            c->body_limit = len / 2;
            c->in_body = 1;
            if (s_write_all (c->cfd, c->resp, c->resp_len) != 0)
                return -1;
        }
    }
    size_t k = c->body_limit - c->body_sent < n ? (size_t) (c->body_limit - c->body_sent) : n;
    if (c->in_body && k > 0) {
        if (s_write_all (c->cfd, buf, k) != 0)
            return -1;
        c->body_sent += k;
    }
    if (c->in_body && c->body_sent >= c->body_limit) {
        s_log ("reset after %llu body bytes", (unsigned long long) c->body_sent);
        *reset = 1;
        return -1;
    }
    return 0;
}

static int
s_accept (int idx)
{
    int cfd = accept4 (s_listen[idx], NULL, NULL, SOCK_CLOEXEC);
    if (cfd < 0)
        return errno == EINTR || errno == EAGAIN || errno == ECONNABORTED ? 0 : -1;
    int slot = 0;
    while (slot < MAX_CONNS && s_conns[slot])
        slot++;
    int ufd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) s_upstream_port) };
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    s_conn_t *c = slot < MAX_CONNS ? calloc (1, sizeof *c) : NULL;
    if (!c || ufd < 0 || connect (ufd, (struct sockaddr *) &a, sizeof a) != 0) {
        s_log ("connection dropped: %s", !c ? "too many connections" : strerror (errno));
        free (c);
        if (ufd >= 0)
            close (ufd);
        close (cfd);
        return 0;
    }
    c->cfd = cfd;
    c->ufd = ufd;
    c->port = idx;
    s_conns[slot] = c;
    return 0;
}

static void
s_usage (void)
{
    fprintf (stderr, "usage: fault_proxy -u UPSTREAM_PORT [-p PORT] [-q PORT2] [-m MODE] [-n COUNT] [-c FILE]\n"
                     "MODE: none 503 500 reset drop stall refuse norange badrange; COUNT: faults (-1: all)\n");
    exit (2);
}

int
main (int argc, char **argv)
{
    int opt;
    while ((opt = getopt (argc, argv, "u:p:q:m:n:c:")) != -1) {
        switch (opt) {
        case 'u': s_upstream_port = atoi (optarg); break;
        case 'p': s_port[0] = atoi (optarg); break;
        case 'q': s_port[1] = atoi (optarg); break;
        case 'm': if (s_parse_mode (optarg, &s_mode) != 0) s_usage (); break;
        case 'n': s_count = atol (optarg); break;
        case 'c': s_control = optarg; break;
        default: s_usage ();
        }
    }
    if (s_upstream_port <= 0 || s_upstream_port > 65535 || optind != argc)
        s_usage ();
    signal (SIGPIPE, SIG_IGN);
    if (s_listen_on (0) != 0 || s_listen_on (1) != 0)
        return 1;
    s_control_check ();
    printf ("fault_proxy listening on 127.0.0.1:%d 127.0.0.1:%d\n", s_port[0], s_port[1]);
    fflush (stdout);
    s_log ("mode %s count %ld, upstream 127.0.0.1:%d", s_mode_names[s_mode], s_count, s_upstream_port);

    static struct pollfd fds[2 + 2 * MAX_CONNS];
    static int owner[2 + 2 * MAX_CONNS];      /* slot, or -1/-2 for the listeners */
    static char buf[65536];
    for (;;) {
        nfds_t n = 0;
        for (int i = 0; i < 2; i++)
            if (s_listen[i] >= 0) {
                fds[n] = (struct pollfd) { .fd = s_listen[i], .events = POLLIN };
                owner[n++] = -1 - i;
            }
        for (int i = 0; i < MAX_CONNS; i++)
            if (s_conns[i]) {
                fds[n] = (struct pollfd) { .fd = s_conns[i]->cfd, .events = POLLIN };
                owner[n++] = 2 * i;
                fds[n] = (struct pollfd) { .fd = s_conns[i]->ufd, .events = POLLIN };
                owner[n++] = 2 * i + 1;
            }
        if (poll (fds, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            s_log ("poll: %s", strerror (errno));
            return 1;
        }
        for (nfds_t k = 0; k < n; k++) {
            if (!fds[k].revents)
                continue;
            if (owner[k] < 0) {
                int idx = -1 - owner[k];
                if (s_listen[idx] == fds[k].fd && s_accept (idx) != 0)
                    s_log ("accept: %s", strerror (errno));
                continue;
            }
            int slot = owner[k] / 2, upstream = owner[k] % 2;
            s_conn_t *c = s_conns[slot];
            if (!c || fds[k].fd != (upstream ? c->ufd : c->cfd))
                continue;   /* closed earlier in this round */
            ssize_t got = recv (fds[k].fd, buf, sizeof buf, 0);
            if (got < 0 && errno == EINTR)
                continue;
            int reset = 0;
            if (got <= 0)
                s_conn_close (slot, 0);
            else if ((upstream ? s_from_upstream (c, buf, (size_t) got, &reset)
                               : s_from_client (c, buf, (size_t) got, &reset)) != 0)
                s_conn_close (slot, reset);
        }
    }
}
