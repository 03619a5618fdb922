/* security: CURVE certificates, the coordinator's authenticator, and a
 * watch on handshakes. */
#include "security.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
sb_endpoint_is_local (const char *endpoint)
{
    if (!strncmp (endpoint, "ipc://", 6) || !strncmp (endpoint, "inproc://", 9))
        return 1;
    if (strncmp (endpoint, "tcp://", 6) != 0)
        return 0;
    const char *host = endpoint + 6, *colon = strrchr (host, ':');
    size_t n = colon ? (size_t) (colon - host) : strlen (host);
    if (memchr (host, ';', n))      /* source;destination: judge the destination */
        return 0;
    if ((n == 9 && !strncmp (host, "localhost", 9)) || (n == 5 && !strncmp (host, "[::1]", 5))
        || (n == 3 && !strncmp (host, "::1", 3)))
        return 1;
    /* 127.0.0.0/8, written as a dotted quad */
    if (n < 7 || n > 15 || strncmp (host, "127.", 4) != 0)
        return 0;
    int dots = 0;
    for (size_t i = 0; i < n; i++) {
        if (host[i] == '.')
            dots++;
        else if (host[i] < '0' || host[i] > '9')
            return 0;
    }
    return dots == 3;
}

static int
s_exists (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0;
}

/* Give path exactly mode, whatever the umask made of it. */
static int
s_chmod (const char *path, mode_t mode, char *err, size_t err_size)
{
    if (chmod (path, mode) != 0) {
        snprintf (err, err_size, "chmod %s: %s", path, strerror (errno));
        return -1;
    }
    return 0;
}

/* Save cert at path (public half, 0644) and, with_secret, at path_secret
 * (0600). The modes are set explicitly: CZMQ creates the files under the
 * process umask (0666 under umask 000) and resets the umask itself. */
static int
s_save (zcert_t *cert, const char *path, int with_secret, char *err, size_t err_size)
{
    int rc = with_secret ? zcert_save (cert, path) : zcert_save_public (cert, path);
    if (rc != 0) {
        snprintf (err, err_size, "cannot write %s: %s", path, strerror (errno));
        return -1;
    }
    char secret[PATH_MAX + 8];
    snprintf (secret, sizeof secret, "%s_secret", path);
    if (s_chmod (path, 0644, err, err_size) != 0 || (with_secret && s_chmod (secret, 0600, err, err_size) != 0))
        return -1;
    return 0;
}

/* Make a key pair at path (and path_secret) unless one is there; its public
 * half also goes to admitted when that is not NULL and missing. */
static int
s_make_pair (const char *path, const char *role, const char *name, const char *admitted,
             void (*note) (const char *path, void *ctx), void *ctx, char *err, size_t err_size)
{
    if (s_exists (path))
        return 0;
    zcert_t *cert = zcert_new ();
    if (!cert) {
        snprintf (err, err_size, "cannot make a key pair");
        return -1;
    }
    zcert_set_meta (cert, "role", "%s", role);
    if (name)
        zcert_set_meta (cert, "name", "%s", name);
    int rc = s_save (cert, path, 1, err, err_size);
    if (rc == 0 && note)
        note (path, ctx);
    if (rc == 0 && admitted && !s_exists (admitted)) {
        rc = s_save (cert, admitted, 0, err, err_size);
        if (rc == 0 && note)
            note (admitted, ctx);
    }
    zcert_destroy (&cert);
    return rc;
}

int
sb_keys_create (const char *dir, const char *name, void (*note) (const char *path, void *ctx), void *ctx, char *err,
                size_t err_size)
{
    char allowed[PATH_MAX], coordinator[PATH_MAX], worker[PATH_MAX], admitted[PATH_MAX];
    if (!name || !*name || strchr (name, '/') || !strcmp (name, "coordinator") || name[0] == '.') {
        snprintf (err, err_size, "invalid certificate name '%s' (no '/', not 'coordinator')", name ? name : "");
        return -1;
    }
    if (sb_strf (allowed, sizeof allowed, "%s/allowed", dir) != 0
        || sb_strf (coordinator, sizeof coordinator, "%s/coordinator.cert", dir) != 0
        || sb_strf (worker, sizeof worker, "%s/%s.cert", dir, name) != 0
        || sb_strf (admitted, sizeof admitted, "%s/%s.cert", allowed, name) != 0) {
        snprintf (err, err_size, "key directory path too long: %s", dir);
        return -1;
    }
    /* Nothing is ever created open to others, whatever the caller's umask:
     * files are made under umask 077, then given their modes. CZMQ sets
     * the umask while saving a secret, so the caller's is restored after. */
    mode_t old = umask (077);
    int rc = sb_mkdirs (allowed, err, err_size);
    /* secrets inside: the owner only; allowed/ decides who joins */
    if (rc == 0)
        rc = s_chmod (dir, 0700, err, err_size);
    if (rc == 0)
        rc = s_chmod (allowed, 0700, err, err_size);
    if (rc == 0)
        rc = s_make_pair (coordinator, "shardbench coordinator", NULL, NULL, note, ctx, err, err_size);
    if (rc == 0)
        rc = s_make_pair (worker, "shardbench worker", name, admitted, note, ctx, err, err_size);
    umask (old);
    return rc;
}

/* Warn when path (a secret key file, or a directory deciding who is
 * admitted) can be read (secret) or written (directory) by others. */
static void
s_warn_open (const char *path, int secret)
{
    struct stat st;
    if (stat (path, &st) != 0)
        return;
    mode_t open = st.st_mode & (secret ? (S_IRWXG | S_IRWXO) : (S_IWGRP | S_IWOTH));
    if (!open)
        return;
    if (secret)
        sb_warn ("secret key file %s has mode %04o: other users can read it and impersonate its owner"
                 " (chmod 600 %s)", path, (unsigned) (st.st_mode & 07777), path);
    else
        sb_warn ("key directory %s has mode %04o: other users can add certificates to it (chmod 700 %s)",
                 path, (unsigned) (st.st_mode & 07777), path);
}

/* Load dir/file (and its _secret half when secret is set). */
static zcert_t *
s_load (const char *dir, const char *file, int secret, char *err, size_t err_size)
{
    char path[PATH_MAX], secret_path[PATH_MAX + 8];
    if (sb_strf (path, sizeof path, "%s/%s", dir, file) != 0) {
        snprintf (err, err_size, "key directory path too long: %s", dir);
        return NULL;
    }
    snprintf (secret_path, sizeof secret_path, "%s_secret", path);
    if (!s_exists (path) || (secret && !s_exists (secret_path))) {
        snprintf (err, err_size, "no certificate %s (create one with `shardbench keys --dir %s`)",
                  s_exists (path) ? secret_path : path, dir);
        return NULL;
    }
    if (secret)
        s_warn_open (secret_path, 1);
    zcert_t *cert = zcert_load (path);
    if (!cert)
        snprintf (err, err_size, "cannot read the certificate %s", path);
    return cert;
}

int
sb_curve_server (zsock_t *router, const char *dir, zactor_t **auth_p, char *err, size_t err_size)
{
    char allowed[PATH_MAX];
    if (sb_strf (allowed, sizeof allowed, "%s/allowed", dir) != 0 || !s_exists (allowed)) {
        snprintf (err, err_size, "no directory %s/allowed of admitted worker certificates (create it with"
                  " `shardbench keys --dir %s`)", dir, dir);
        return -1;
    }
    s_warn_open (allowed, 0);
    zcert_t *cert = s_load (dir, "coordinator.cert", 1, err, err_size);
    if (!cert)
        return -1;
    zactor_t *auth = zactor_new (zauth, NULL);
    if (!auth) {
        snprintf (err, err_size, "cannot start the authenticator");
        zcert_destroy (&cert);
        return -1;
    }
    /* every CURVE client must hold a certificate in allowed/ */
    if (zstr_sendx (auth, "CURVE", allowed, NULL) != 0 || zsock_wait (auth) != 0) {
        snprintf (err, err_size, "the authenticator refused %s", allowed);
        zactor_destroy (&auth);
        zcert_destroy (&cert);
        return -1;
    }
    zcert_apply (cert, router);
    zsock_set_curve_server (router, 1);
    zsock_set_zap_domain (router, "shardbench");
    zcert_destroy (&cert);
    *auth_p = auth;
    return 0;
}

int
sb_curve_client (zsock_t *dealer, const char *dir, const char *name, char *err, size_t err_size)
{
    char file[PATH_MAX];
    if (sb_strf (file, sizeof file, "%s.cert", name ? name : "worker") != 0) {
        snprintf (err, err_size, "certificate name too long");
        return -1;
    }
    zcert_t *server = s_load (dir, "coordinator.cert", 0, err, err_size);
    if (!server)
        return -1;
    zcert_t *mine = s_load (dir, file, 1, err, err_size);
    if (!mine) {
        zcert_destroy (&server);
        return -1;
    }
    zcert_apply (mine, dealer);
    zsock_set_curve_serverkey (dealer, zcert_public_txt (server));
    zcert_destroy (&mine);
    zcert_destroy (&server);
    return 0;
}

struct sb_handshake_watch {
    zsock_t *events;        /* PAIR: libzmq's monitor events */
    int      curve;         /* this side presents a CURVE certificate */
    unsigned disconnects;   /* connections lost since sb_handshake_disconnects last asked */
};

sb_handshake_watch_t *
sb_handshake_watch_new (zsock_t *sock, int curve)
{
    sb_handshake_watch_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->curve = curve;
    char endpoint[64];
    snprintf (endpoint, sizeof endpoint, "inproc://sb-handshake-%p", (void *) self);
    if (zmq_socket_monitor (zsock_resolve (sock), endpoint,
                            ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                                | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_DISCONNECTED) != 0
        || !(self->events = zsock_new (ZMQ_PAIR)) || zsock_connect (self->events, "%s", endpoint) != 0) {
        zsock_destroy (&self->events);
        free (self);
        return NULL;
    }
    zsock_set_rcvtimeo (self->events, 0);
    return self;
}

int
sb_handshake_failure (sb_handshake_watch_t *self, char *why, size_t why_size)
{
    if (!self)
        return 0;
    zmsg_t *m;
    zframe_t *head = NULL, *where = NULL;
    uint16_t event = 0;
    uint32_t value = 0;
    for (;;) {
        if (!(m = zmsg_recv (self->events)))
            return 0;
        head = zmsg_first (m);
        where = zmsg_next (m);
        if (head && zframe_size (head) >= 6) {
            memcpy (&event, zframe_data (head), 2);
            memcpy (&value, zframe_data (head) + 2, 4);
        }
        if (event != ZMQ_EVENT_DISCONNECTED)
            break;
        self->disconnects++;    /* not a failure: counted for sb_handshake_disconnects */
        zmsg_destroy (&m);
    }
    char *endpoint = where ? zframe_strdup (where) : NULL;
    const char *what = !self->curve
        ? "the coordinator requires CURVE and this worker has no keys: run it with --keys DIR (see `shardbench keys`)"
        : event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
        ? "the coordinator did not admit this worker's certificate (it is not in the coordinator's allowed/ directory)"
        : event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
        ? "security mismatch: this worker uses CURVE (--keys) and the coordinator does not, or not with these keys"
        : "the coordinator closed the connection during the CURVE handshake: this worker's certificate is not in"
          " its allowed/ directory, or coordinator.cert is not that coordinator's";
    snprintf (why, why_size, "%s (%s, ZeroMQ event 0x%x, code %u)", what, endpoint ? endpoint : "?",
              (unsigned) event, (unsigned) value);
    free (endpoint);
    zmsg_destroy (&m);
    return 1;
}

unsigned
sb_handshake_disconnects (sb_handshake_watch_t *self)
{
    if (!self)
        return 0;
    unsigned n = self->disconnects;
    self->disconnects = 0;
    return n;
}

zsock_t *
sb_handshake_watch_sock (sb_handshake_watch_t *self)
{
    return self ? self->events : NULL;
}

void
sb_handshake_watch_destroy (sb_handshake_watch_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    zsock_destroy (&(*self_p)->events);
    free (*self_p);
    *self_p = NULL;
}
