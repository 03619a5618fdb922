/* metrics_server: GET /metrics on a thread of its own (metrics_server.h). */
#include "metrics_server.h"
#include "openmetrics.h"

#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define S_REQUEST_MAX    8192   /* a scrape's request is a few hundred bytes */
#define S_READ_LIMIT_S   2.0    /* to receive the request */
#define S_RENDER_LIMIT_S 2.0    /* for the session to render */
#define S_WRITE_LIMIT_S  10.0   /* to send the response (megabytes at thousands of ranks) */
/* A rendering younger than this is served again: the workers report once a
 * second, and a client scraping back to back must not keep the session's
 * thread rendering (25 ms of CPU a rendering at 4096 ranks) */
#define S_RENDER_MIN_S   1.0

struct _sb_metrics_server_t {
    int             listen_fd;
    int             wake[2];        /* a byte on wake[1]: the thread ends */
    pthread_t       thread;
    int             started;
    pthread_mutex_t mu;
    pthread_cond_t  rendered;       /* gen moved on (CLOCK_MONOTONIC) */
    /* under mu */
    int             attached;       /* a session renders on request */
    int             want;           /* a scrape waits for a rendering */
    uint64_t        gen;            /* renderings so far */
    double          rendered_at;    /* when the last was made (s_mono); < 0: none of this session */
    char           *body;           /* the last rendering (owned), NULL: none */
    size_t          len;
    int             stopping;
    char            url[320];
};

static void s_render (sb_metrics_server_t *self, const sb_live_t *live, double now, int detach);

static double
s_mono (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- the address */

/* ADDR into host ("" every address) and port. Returns 0 or -1 with err. */
static int
s_parse_addr (const char *addr, char *host, size_t host_size, char *port, size_t port_size, char *err,
              size_t err_size)
{
    const char *colon;
    const char *usage = "expected HOST:PORT, [IPV6]:PORT or :PORT (port 0: any free port), e.g. 127.0.0.1:9464";
    if (addr[0] == '[') {
        const char *close = strchr (addr, ']');
        if (!close || close[1] != ':') {
            snprintf (err, err_size, "--metrics '%s': %s", addr, usage);
            return -1;
        }
        snprintf (host, host_size, "%.*s", (int) (close - addr - 1), addr + 1);
        colon = close + 1;
        if (!*host) {
            snprintf (err, err_size, "--metrics '%s': no address inside [ ]: %s", addr, usage);
            return -1;
        }
    }
    else {
        colon = strrchr (addr, ':');
        if (!colon) {
            snprintf (err, err_size, "--metrics '%s': no port: %s", addr, usage);
            return -1;
        }
        if (memchr (addr, ':', (size_t) (colon - addr))) {
            snprintf (err, err_size, "--metrics '%s': an IPv6 address goes in brackets ([::1]:9464): %s", addr,
                      usage);
            return -1;
        }
        if ((size_t) (colon - addr) >= host_size) {
            snprintf (err, err_size, "--metrics '%s': the host name is too long", addr);
            return -1;
        }
        snprintf (host, host_size, "%.*s", (int) (colon - addr), addr);
    }
    const char *p = colon + 1;
    size_t digits = strspn (p, "0123456789");
    if (!digits || p[digits] || digits > 5 || atol (p) > 65535) {
        snprintf (err, err_size, "--metrics '%s': the port must be a number 0..65535: %s", addr, usage);
        return -1;
    }
    snprintf (port, port_size, "%ld", atol (p));
    return 0;
}

/* A listening socket on the first address of res that takes one, -1
 * with errno's value in *why. every: the wildcard (IPv6 takes IPv4 too). */
static int
s_listen_any (struct addrinfo *res, int every, int *why)
{
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            *why = errno;
            continue;
        }
        int one = 1, zero = 0;
        if (setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0
            || (ai->ai_family == AF_INET6 && every
                && setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) != 0)
            || bind (fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen (fd, 16) != 0) {
            *why = errno;
            close (fd);
            fd = -1;
        }
    }
    return fd;
}

/* A listening socket on host:port ("" host: every address, IPv6 and IPv4,
 * or IPv4 only where the system has no IPv6). Returns the descriptor or -1
 * with err. */
static int
s_listen (const char *addr, const char *host, const char *port, char *err, size_t err_size)
{
    int fd = -1, why = 0;
    /* the wildcard: IPv6 first (it takes IPv4 too), else IPv4 */
    static const int every_family[] = { AF_INET6, AF_INET };
    for (size_t i = 0; i < (*host ? 1 : 2) && fd < 0; i++) {
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *res = NULL;
        hints.ai_family = *host ? AF_UNSPEC : every_family[i];
        if (!*host)
            hints.ai_flags |= AI_PASSIVE;
        int gai = getaddrinfo (*host ? host : NULL, port, &hints, &res);
        if (gai != 0) {
            if (*host) {
                snprintf (err, err_size, "--metrics '%s': cannot resolve '%s': %s", addr, host, gai_strerror (gai));
                return -1;
            }
            why = EAFNOSUPPORT;
            continue;
        }
        fd = s_listen_any (res, !*host, &why);
        freeaddrinfo (res);
    }
    if (fd < 0)
        snprintf (err, err_size, "--metrics '%s': cannot listen there: %s", addr, strerror (why ? why : EINVAL));
    return fd;
}

/* ---------------------------------------------------------------- one connection */

/* Wait until fd is ready for events or the deadline (monotonic) passes or
 * the server stops. Returns 1 ready, 0 not (time out, stop, error). */
static int
s_wait (sb_metrics_server_t *self, int fd, short events, double deadline)
{
    for (;;) {
        double left = deadline - s_mono ();
        if (left <= 0)
            return 0;
        struct pollfd p[2] = { { .fd = fd, .events = events }, { .fd = self->wake[0], .events = POLLIN } };
        int n = poll (p, 2, (int) (left * 1000) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || p[1].revents)
            return 0;
        if (p[0].revents)
            return 1;
    }
}

/* Send len bytes of buf by the deadline. Returns 0 or -1. */
static int
s_send_all (sb_metrics_server_t *self, int fd, const char *buf, size_t len, double deadline)
{
    while (len) {
        ssize_t n = send (fd, buf, len, MSG_NOSIGNAL);
        if (n > 0) {
            buf += n;
            len -= (size_t) n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && s_wait (self, fd, POLLOUT, deadline))
            continue;
        return -1;
    }
    return 0;
}

static void
s_reply (sb_metrics_server_t *self, int fd, const char *status, const char *extra, const char *type,
         const char *body, size_t len, int head_only)
{
    char head[512];
    int n = snprintf (head, sizeof head,
                      "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sCache-Control: no-store\r\n"
                      "Connection: close\r\n\r\n", status, type, len, extra ? extra : "");
    double deadline = s_mono () + S_WRITE_LIMIT_S;
    if (s_send_all (self, fd, head, (size_t) n, deadline) == 0 && !head_only && len)
        (void) s_send_all (self, fd, body, len, deadline);
}

static void
s_reply_text (sb_metrics_server_t *self, int fd, const char *status, const char *extra, const char *text)
{
    s_reply (self, fd, status, extra, "text/plain; charset=utf-8", text, strlen (text), 0);
}

/* A fresh rendering (or the last one), copied: NULL when none (503). */
static char *
s_take_body (sb_metrics_server_t *self, size_t *len)
{
    pthread_mutex_lock (&self->mu);
    if (self->attached && !self->stopping
        && (self->rendered_at < 0 || s_mono () - self->rendered_at >= S_RENDER_MIN_S)) {
        uint64_t gen = self->gen;
        self->want = 1;
        struct timespec until;
        clock_gettime (CLOCK_MONOTONIC, &until);
        until.tv_sec += (time_t) S_RENDER_LIMIT_S;
        while (self->gen == gen && self->attached && !self->stopping)
            if (pthread_cond_timedwait (&self->rendered, &self->mu, &until) == ETIMEDOUT)
                break;  /* the session is busy: the last rendering */
    }
    char *copy = NULL;
    if (self->body && (copy = malloc (self->len ? self->len : 1))) {
        memcpy (copy, self->body, self->len);
        *len = self->len;
    }
    pthread_mutex_unlock (&self->mu);
    return copy;
}

static void
s_handle (sb_metrics_server_t *self, int fd)
{
    char req[S_REQUEST_MAX + 1];
    size_t have = 0;
    double deadline = s_mono () + S_READ_LIMIT_S;
    char *end = NULL;
    while (!end) {
        if (have == S_REQUEST_MAX) {
            s_reply_text (self, fd, "431 Request Header Fields Too Large", NULL, "request too large\n");
            return;
        }
        ssize_t n = recv (fd, req + have, S_REQUEST_MAX - have, 0);
        if (n == 0)
            return;     /* gone before asking */
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if ((errno == EAGAIN || errno == EWOULDBLOCK) && s_wait (self, fd, POLLIN, deadline))
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                s_reply_text (self, fd, "408 Request Timeout", NULL, "request not received in time\n");
            return;
        }
        have += (size_t) n;
        req[have] = '\0';
        end = strstr (req, "\r\n\r\n");
        if (!end)
            end = strstr (req, "\n\n");
    }
    /* the request line: METHOD SP TARGET SP VERSION */
    char method[16], target[1024], version[16];
    if (sscanf (req, "%15[^ \r\n] %1023[^ \r\n] %15[^ \r\n]", method, target, version) != 3
        || strncmp (version, "HTTP/1.", 7) != 0) {
        s_reply_text (self, fd, "400 Bad Request", NULL, "bad request line\n");
        return;
    }
    int head = !strcmp (method, "HEAD");
    if (strcmp (method, "GET") != 0 && !head) {
        s_reply_text (self, fd, "405 Method Not Allowed", "Allow: GET, HEAD\r\n", "only GET /metrics\n");
        return;
    }
    target[strcspn (target, "?#")] = '\0';     /* Prometheus may add parameters */
    if (strcmp (target, "/metrics") != 0) {
        s_reply_text (self, fd, "404 Not Found", NULL, "not found: the figures are at /metrics\n");
        return;
    }
    size_t len = 0;
    char *body = s_take_body (self, &len);
    if (!body) {
        s_reply_text (self, fd, "503 Service Unavailable", "Retry-After: 1\r\n", "no figures yet\n");
        return;
    }
    s_reply (self, fd, "200 OK", NULL, SB_OPENMETRICS_CONTENT_TYPE, body, len, head);
    free (body);
}

static void *
s_thread (void *arg)
{
    sb_metrics_server_t *self = arg;
    for (;;) {
        struct pollfd p[2] = { { .fd = self->listen_fd, .events = POLLIN }, { .fd = self->wake[0], .events = POLLIN } };
        int n = poll (p, 2, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || p[1].revents)
            break;
        if (!p[0].revents)
            continue;
        int fd = accept4 (self->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS)
                (void) poll (p + 1, 1, 100);    /* out of descriptors: not a busy loop */
            continue;
        }
        s_handle (self, fd);
        close (fd);
    }
    return NULL;
}

/* ---------------------------------------------------------------- life */

static void
s_url (sb_metrics_server_t *self)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char ip[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (getsockname (self->listen_fd, (struct sockaddr *) &ss, &sl) == 0) {
        if (ss.ss_family == AF_INET6) {
            const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *) &ss;
            inet_ntop (AF_INET6, &s6->sin6_addr, ip, sizeof ip);
            port = ntohs (s6->sin6_port);
        }
        else {
            const struct sockaddr_in *s4 = (const struct sockaddr_in *) &ss;
            inet_ntop (AF_INET, &s4->sin_addr, ip, sizeof ip);
            port = ntohs (s4->sin_port);
        }
    }
    snprintf (self->url, sizeof self->url, ss.ss_family == AF_INET6 ? "http://[%s]:%u/metrics"
              : "http://%s:%u/metrics", ip, port);
}

sb_metrics_server_t *
sb_metrics_server_new (const char *addr, char *err, size_t err_size)
{
    char host[256], port[8];
    if (!addr || s_parse_addr (addr, host, sizeof host, port, sizeof port, err, err_size) != 0) {
        if (!addr)
            snprintf (err, err_size, "--metrics: no address");
        return NULL;
    }
    sb_metrics_server_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->wake[0] = self->wake[1] = -1;
    self->listen_fd = s_listen (addr, host, port, err, err_size);
    pthread_condattr_t ca;
    int cond_ok = 0, mu_ok = 0;
    if (self->listen_fd >= 0) {
        mu_ok = pthread_mutex_init (&self->mu, NULL) == 0;
        cond_ok = pthread_condattr_init (&ca) == 0;
        if (cond_ok) {
            cond_ok = pthread_condattr_setclock (&ca, CLOCK_MONOTONIC) == 0
                   && pthread_cond_init (&self->rendered, &ca) == 0;
            pthread_condattr_destroy (&ca);
        }
    }
    if (self->listen_fd < 0 || !mu_ok || !cond_ok || pipe2 (self->wake, O_CLOEXEC) != 0) {
        if (self->listen_fd >= 0)
            snprintf (err, err_size, "--metrics '%s': cannot start the server: %s", addr, strerror (errno));
        if (self->listen_fd >= 0)
            close (self->listen_fd);
        if (mu_ok)
            pthread_mutex_destroy (&self->mu);
        if (cond_ok)
            pthread_cond_destroy (&self->rendered);
        free (self);
        return NULL;
    }
    s_url (self);
    s_render (self, NULL, 0, 0);    /* before any session: the families, without samples */
    /* the signals stay the main thread's (the session's handler) */
    sigset_t all, old;
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    int rc = pthread_create (&self->thread, NULL, s_thread, self);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf (err, err_size, "--metrics '%s': cannot start the server thread: %s", addr, strerror (rc));
        self->started = 0;
        sb_metrics_server_destroy (&self);
        return NULL;
    }
    self->started = 1;
    sb_info ("metrics: serving %s", self->url);
    return self;
}

void
sb_metrics_server_destroy (sb_metrics_server_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_metrics_server_t *self = *self_p;
    pthread_mutex_lock (&self->mu);
    self->stopping = 1;
    pthread_cond_broadcast (&self->rendered);
    pthread_mutex_unlock (&self->mu);
    if (self->started) {
        ssize_t w;
        do
            w = write (self->wake[1], "x", 1);
        while (w < 0 && errno == EINTR);
        pthread_join (self->thread, NULL);
    }
    close (self->wake[0]);
    close (self->wake[1]);
    close (self->listen_fd);
    pthread_cond_destroy (&self->rendered);
    pthread_mutex_destroy (&self->mu);
    free (self->body);
    free (self);
    *self_p = NULL;
}

const char *
sb_metrics_server_url (const sb_metrics_server_t *self)
{
    return self ? self->url : "";
}

void
sb_metrics_server_begin (sb_metrics_server_t *self)
{
    if (!self)
        return;
    pthread_mutex_lock (&self->mu);
    self->attached = 1;
    self->rendered_at = -1;     /* the first scrape asks for this session's figures */
    pthread_mutex_unlock (&self->mu);
}

/* Render live into the server's body (the old one freed) and wake the
 * scrape that waits. detach: the session is over. */
static void
s_render (sb_metrics_server_t *self, const sb_live_t *live, double now, int detach)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    int ok = f && sb_openmetrics_render (live, now, f) == 0;
    if (f && fclose (f) != 0)
        ok = 0;
    if (!ok) {
        /* out of memory: the scrape gets the last rendering */
        sb_debug ("metrics: cannot render the figures: %s", strerror (errno));
        free (buf);
        buf = NULL;
    }
    pthread_mutex_lock (&self->mu);
    if (buf) {
        free (self->body);
        self->body = buf;
        self->len = len;
    }
    self->gen++;
    self->want = 0;
    self->rendered_at = s_mono ();
    if (detach)
        self->attached = 0;
    pthread_cond_broadcast (&self->rendered);
    pthread_mutex_unlock (&self->mu);
}

int
sb_metrics_server_poll (sb_metrics_server_t *self, const sb_live_t *live, double now)
{
    if (!self)
        return 0;
    pthread_mutex_lock (&self->mu);
    int want = self->want;
    pthread_mutex_unlock (&self->mu);
    if (!want)
        return 0;
    s_render (self, live, now, 0);
    return 1;
}

void
sb_metrics_server_end (sb_metrics_server_t *self, const sb_live_t *live, double now)
{
    if (self)
        s_render (self, live, now, 1);
}
