/* launch: worker processes, local, over ssh or in one srun step. */
#include "launch.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    pid_t  pid;
    int    running;     /* 0 once reaped */
    char  *host;        /* ssh children: the host; NULL for local ones */
    int    errfd;       /* ssh and srun children: their stderr (a memfd); -1 */
    int    srun;        /* the srun step running every worker */
} s_child_t;

struct sb_launcher {
    char      *worker_path;
    s_child_t *children;
    size_t     count;
    /* --local: workers still to start (sb_launcher_start_more), with their
     * command line (owned copies) and the message of a failed exec */
    size_t     pending;
    char      *endpoint, *keys_dir;
    char       timeout[32];
    char       fail[PATH_MAX + 64];
    size_t     fail_len;
};

sb_launcher_t *
sb_launcher_new (const char *worker_path)
{
    sb_launcher_t *self = calloc (1, sizeof *self);
    if (!self || !(self->worker_path = strdup (worker_path))) {
        free (self);
        return NULL;
    }
    return self;
}

void
sb_launcher_destroy (sb_launcher_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_launcher_t *self = *self_p;
    sb_launcher_stop (self, 0);
    for (size_t i = 0; i < self->count; i++) {
        free (self->children[i].host);
        if (self->children[i].errfd >= 0)
            close (self->children[i].errfd);
    }
    free (self->children);
    free (self->worker_path);
    free (self->endpoint);
    free (self->keys_dir);
    free (self);
    *self_p = NULL;
}

static int
s_grow (sb_launcher_t *self, size_t n, char *err, size_t err_size)
{
    s_child_t *grown = realloc (self->children, (self->count + n) * sizeof *grown);
    if (!grown) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    self->children = grown;
    return 0;
}

/* In a forked child of the (threaded) coordinator, before exec: only
 * async-signal-safe calls. It dies with the coordinator, even on SIGKILL,
 * and leaves the terminal's process group: a Ctrl-C or a hangup reaches
 * the coordinator alone, which then ABORTs its workers in order. */
static void
s_child_setup (pid_t parent)
{
    if (prctl (PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid () != parent)
        _exit (127);
    if (setpgid (0, 0) != 0)
        _exit (127);
}

/* exec failed: the prebuilt "cannot run PATH: " and the cause, with
 * write(2) only (strerror is not async-signal-safe: the common causes are
 * literals, any other is its number) */
static void
s_child_fail (const char *msg, size_t len, int status)
{
    int e = errno;
    const char *why = e == ENOENT ? "No such file or directory" : e == EACCES ? "Permission denied"
                    : e == ENOEXEC ? "Exec format error" : e == ENOTDIR ? "Not a directory" : NULL;
    char num[24];
    size_t k = sizeof num;
    if (!why) {
        do {
            num[--k] = (char) ('0' + e % 10);
            e /= 10;
        } while (e && k > 7);
        memcpy (num + k - 6, "errno ", 6);
        k -= 6;
    }
    if (write (STDERR_FILENO, msg, len) < 0
        || (why ? write (STDERR_FILENO, why, strlen (why)) : write (STDERR_FILENO, num + k, sizeof num - k)) < 0
        || write (STDERR_FILENO, "\n", 1) < 0)
        _exit (status);
    _exit (status);
}

int
sb_launcher_start (sb_launcher_t *self, size_t n, const char *endpoint, double heartbeat_timeout_s,
                   const char *keys_dir, char *err, size_t err_size)
{
    if (access (self->worker_path, X_OK) != 0) {
        snprintf (err, err_size, "worker binary '%s': %s (set SHARDBENCH_WORKER to its path)", self->worker_path,
                  strerror (errno));
        return -1;
    }
    if (s_grow (self, n, err, err_size) != 0)
        return -1;
    free (self->endpoint);
    free (self->keys_dir);
    self->keys_dir = NULL;
    if (!(self->endpoint = strdup (endpoint)) || (keys_dir && !(self->keys_dir = strdup (keys_dir)))) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    snprintf (self->timeout, sizeof self->timeout, "%g", heartbeat_timeout_s);
    /* the coordinator has threads: the child runs only async-signal-safe
     * calls until exec, so its failure message is built here */
    int fail_len = snprintf (self->fail, sizeof self->fail, "shardbench: cannot run %s: ", self->worker_path);
    self->fail_len = fail_len < 0 || (size_t) fail_len >= sizeof self->fail ? strlen (self->fail) : (size_t) fail_len;
    self->pending = n;
    return sb_launcher_start_more (self, 0, 1, err, err_size);
}

int
sb_launcher_start_more (sb_launcher_t *self, double budget_s, size_t max, char *err, size_t err_size)
{
    if (!self->pending || !max)
        return 0;
    pid_t parent = getpid ();
    char *argv[] = { self->worker_path, "--coordinator", self->endpoint, "--timeout", self->timeout,
                     self->keys_dir ? "--keys" : NULL, self->keys_dir, NULL };
    /* at least one, then as many as fit in the budget: the loop answers
     * the HELLOs of those started between two calls */
    double until = sb_now () + budget_s;
    do {
        pid_t pid = fork ();
        if (pid < 0) {
            snprintf (err, err_size, "cannot start local worker %zu: fork: %s", self->count, strerror (errno));
            self->pending = 0;
            return -1;
        }
        if (pid == 0) {
            s_child_setup (parent);
            execv (self->worker_path, argv);
            s_child_fail (self->fail, self->fail_len, 127);
        }
        self->children[self->count++] = (s_child_t) { .pid = pid, .running = 1, .errfd = -1 };
        self->pending--;
    } while (self->pending && --max && sb_now () < until);
    return 0;
}

size_t
sb_launcher_pending (const sb_launcher_t *self)
{
    return self ? self->pending : 0;
}

/* The endpoint host should connect to: endpoint itself, unless it binds
 * every address; then the local address of the route to host. */
static int
s_endpoint_for (const char *endpoint, const char *host, char *out, size_t size, char *err, size_t err_size)
{
    const char *port = strrchr (endpoint, ':');
    if (strncmp (endpoint, "tcp://*:", 8) != 0 && strncmp (endpoint, "tcp://0.0.0.0:", 14) != 0) {
        snprintf (out, size, "%s", endpoint);
        return 0;
    }
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM }, *ai = NULL;
    int rc = getaddrinfo (host, "9", &hints, &ai);
    if (rc != 0) {
        snprintf (err, err_size, "host %s: %s", host, gai_strerror (rc));
        return -1;
    }
    /* a UDP connect sends nothing: it only picks the route and its source */
    int fd = socket (AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in local = { 0 };
    socklen_t len = sizeof local;
    char addr[INET_ADDRSTRLEN];
    if (fd < 0 || connect (fd, ai->ai_addr, ai->ai_addrlen) != 0
        || getsockname (fd, (struct sockaddr *) &local, &len) != 0
        || !inet_ntop (AF_INET, &local.sin_addr, addr, sizeof addr)) {
        snprintf (err, err_size, "host %s: no route to it: %s", host, strerror (errno));
        if (fd >= 0)
            close (fd);
        freeaddrinfo (ai);
        return -1;
    }
    close (fd);
    freeaddrinfo (ai);
    snprintf (out, size, "tcp://%s%s", addr, port);
    return 0;
}

#define S_MAX_WORDS 64

/* Split cmd (from the environment variable var) at spaces into argv[0..*argc),
 * the words pointing into words. At most S_MAX_WORDS words. */
static int
s_split_words (const char *cmd, const char *var, char *words, size_t size, char **argv, size_t *argc, char *err,
               size_t err_size)
{
    *argc = 0;
    if (snprintf (words, size, "%s", cmd) >= (int) size) {
        snprintf (err, err_size, "%s is too long", var);
        return -1;
    }
    for (char *save = NULL, *w = strtok_r (words, " \t", &save); w; w = strtok_r (NULL, " \t", &save)) {
        if (*argc == S_MAX_WORDS) {
            snprintf (err, err_size, "%s has more than %d words", var, S_MAX_WORDS);
            return -1;
        }
        argv[(*argc)++] = w;
    }
    if (*argc == 0) {
        snprintf (err, err_size, "%s is empty", var);
        return -1;
    }
    return 0;
}

/* argv0 as execv runs it: itself when it holds a '/', else the first
 * executable of that name on $PATH (resolved before fork: execvp is not
 * async-signal-safe). 0, or -1 when none is found. */
static int
s_resolve (const char *argv0, char *out, size_t size)
{
    if (strchr (argv0, '/'))
        return sb_strf (out, size, "%s", argv0);
    const char *path = getenv ("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t n = strcspn (p, ":");
        if (sb_strf (out, size, "%.*s/%s", (int) (n ? n : 1), n ? p : ".", argv0) == 0 && access (out, X_OK) == 0)
            return 0;
        p += n;
        if (*p == ':')
            p++;
    }
    return -1;
}

/* Run argv as a tracked child: stdin /dev/null, stderr into errfd. -1 with
 * errno when it cannot be started (ENOENT: argv[0] is not on $PATH). */
static pid_t
s_spawn (char **argv, int errfd)
{
    char exe[PATH_MAX], fail[PATH_MAX + 64];
    if (s_resolve (argv[0], exe, sizeof exe) != 0) {
        errno = ENOENT;
        return -1;
    }
    int fail_len = snprintf (fail, sizeof fail, "cannot run %s: ", exe);
    if (fail_len < 0 || (size_t) fail_len >= sizeof fail)
        fail_len = (int) strlen (fail);
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid == 0) {
        s_child_setup (parent);
        /* ssh and srun must not read the coordinator's stdin */
        int null = open ("/dev/null", O_RDONLY);
        if (null < 0 || dup2 (null, STDIN_FILENO) < 0 || dup2 (errfd, STDERR_FILENO) < 0)
            _exit (127);
        execv (exe, argv);
        s_child_fail (fail, (size_t) fail_len, 255);
    }
    return pid;
}


/* Append a remote worker's command line at argv[k]: WORKER --coordinator EP
 * [--host HOST] --timeout T [--keys DIR], then the closing NULL. argv must
 * have room for 10 more words. The strings are borrowed. */
static void
s_worker_words (char **argv, size_t k, const char *worker, const char *ep, const char *host, const char *timeout,
                const char *keys_dir)
{
    argv[k++] = (char *) worker;
    argv[k++] = "--coordinator";
    argv[k++] = (char *) ep;
    if (host) {
        argv[k++] = "--host";
        argv[k++] = (char *) host;
    }
    argv[k++] = "--timeout";
    argv[k++] = (char *) timeout;
    if (keys_dir) {
        argv[k++] = "--keys";
        argv[k++] = (char *) keys_dir;
    }
    argv[k] = NULL;
}

/* Quote text as one word of a POSIX shell: 'text', each ' written '\''.
 * ssh joins its remote words with spaces and gives them to the remote
 * user's shell, so every word we send goes through here: a path or a
 * binary name holding ';', '$(...)', spaces or quotes stays one word and
 * runs nothing. Returns 0, or -1 when out does not hold the result. */
int
sb_launcher_shell_quote (const char *text, char *out, size_t size)
{
    size_t n = 0;
    if (size < 3)
        return -1;
    out[n++] = '\'';
    for (const char *p = text; *p; p++) {
        if (*p == '\'') {
            if (n + 4 >= size)
                return -1;
            memcpy (out + n, "'\\''", 4);
            n += 4;
        }
        else {
            if (n + 1 >= size)
                return -1;
            out[n++] = *p;
        }
    }
    if (n + 2 > size)     /* the closing quote and the NUL */
        return -1;
    out[n++] = '\'';
    out[n] = '\0';
    return 0;
}

int
sb_launcher_start_ssh (sb_launcher_t *self, const char *const *hosts, size_t n, const char *ssh_cmd,
                       const char *remote_worker, const char *endpoint, double heartbeat_timeout_s,
                       const char *keys_dir, char *err, size_t err_size)
{
    if (s_grow (self, n, err, err_size) != 0)
        return -1;
    /* ssh's own words, then ours */
    char words[1024];
    char *argv[S_MAX_WORDS + 16];
    size_t argc = 0;
    if (s_split_words (ssh_cmd, "SHARDBENCH_SSH", words, sizeof words, argv, &argc, err, err_size) != 0)
        return -1;
    char timeout[32];
    snprintf (timeout, sizeof timeout, "%g", heartbeat_timeout_s);
    for (size_t i = 0; i < n; i++) {
        char ep[300];
        if (s_endpoint_for (endpoint, hosts[i], ep, sizeof ep, err, err_size) != 0)
            return -1;
        /* ssh's stderr goes to an anonymous in-memory file: shown only when
         * the host fails, and gone with the coordinator */
        int errfd = memfd_create ("shardbench-ssh-stderr", MFD_CLOEXEC);
        if (errfd < 0) {
            snprintf (err, err_size, "host %s: cannot create a file for ssh's errors: %s", hosts[i], strerror (errno));
            return -1;
        }
        char *host = strdup (hosts[i]);
        if (!host) {
            close (errfd);
            snprintf (err, err_size, "out of memory");
            return -1;
        }
        /* the remote words, quoted for the remote shell */
        char q_worker[2 * PATH_MAX], q_ep[700], q_host[600], q_timeout[40], q_keys[2 * PATH_MAX];
        if (hosts[i][0] == '-' || !hosts[i][0]) {
            snprintf (err, err_size, "host '%s': not a host name (it would be read as an ssh option)", hosts[i]);
            close (errfd);
            free (host);
            return -1;
        }
        if (sb_launcher_shell_quote (remote_worker, q_worker, sizeof q_worker) != 0
            || sb_launcher_shell_quote (ep, q_ep, sizeof q_ep) != 0
            || sb_launcher_shell_quote (host, q_host, sizeof q_host) != 0
            || sb_launcher_shell_quote (timeout, q_timeout, sizeof q_timeout) != 0
            || (keys_dir && sb_launcher_shell_quote (keys_dir, q_keys, sizeof q_keys) != 0)) {
            snprintf (err, err_size, "host %s: the remote worker's command line is too long", host);
            close (errfd);
            free (host);
            return -1;
        }
        size_t k = argc;
        argv[k++] = "-o";
        argv[k++] = "BatchMode=yes";
        argv[k++] = host;
        s_worker_words (argv, k, q_worker, q_ep, q_host, q_timeout, keys_dir ? q_keys : NULL);
        sb_debug ("host %s: %s ... %s %s", host, argv[0], q_worker, q_ep);
        pid_t pid = s_spawn (argv, errfd);
        if (pid < 0) {
            snprintf (err, err_size, "host %s: cannot start %s: %s", host, argv[0],
                      errno == ENOENT ? "not found on $PATH" : strerror (errno));
            close (errfd);
            free (host);
            return -1;
        }
        self->children[self->count++] = (s_child_t) { .pid = pid, .running = 1, .host = host, .errfd = errfd };
    }
    return 0;
}

/* The host whose route the workers of a Slurm job use to reach this one:
 * the first node of the job that is not this one, else this one. */
static const char *
s_route_host (const char *const *hosts, size_t n)
{
    char self_name[256] = "";
    const char *env = getenv ("SLURMD_NODENAME");
    if (env && *env)
        snprintf (self_name, sizeof self_name, "%s", env);
    else if (gethostname (self_name, sizeof self_name - 1) != 0)
        self_name[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (strcmp (hosts[i], self_name) != 0)
            return hosts[i];
    return hosts[0];
}

int
sb_launcher_start_srun (sb_launcher_t *self, const char *const *hosts, size_t n, const char *srun_cmd,
                        const char *worker, const char *endpoint, double heartbeat_timeout_s, const char *keys_dir,
                        char *err, size_t err_size)
{
    if (n == 0) {
        snprintf (err, err_size, "the Slurm job has no nodes");
        return -1;
    }
    if (s_grow (self, 1, err, err_size) != 0)
        return -1;
    char words[1024];
    char *argv[S_MAX_WORDS + 16];
    size_t argc = 0;
    if (s_split_words (srun_cmd, "SHARDBENCH_SRUN", words, sizeof words, argv, &argc, err, err_size) != 0)
        return -1;
    char ep[300], why[512];
    const char *route = s_route_host (hosts, n);
    if (s_endpoint_for (endpoint, route, ep, sizeof ep, why, sizeof why) != 0) {
        snprintf (err, err_size, "cannot tell the workers where to connect: %s (pass --bind tcp://ADDRESS:PORT)", why);
        return -1;
    }
    char nodes[64], tasks[64], timeout[32];
    snprintf (nodes, sizeof nodes, "--nodes=%zu", n);
    snprintf (tasks, sizeof tasks, "--ntasks=%zu", n);
    snprintf (timeout, sizeof timeout, "%g", heartbeat_timeout_s);
    size_t k = argc;
    argv[k++] = nodes;
    argv[k++] = tasks;
    argv[k++] = "--ntasks-per-node=1";
    /* share the nodes with the step the coordinator may itself run in */
    argv[k++] = "--overlap";
    /* one worker failing ends the others */
    argv[k++] = "--kill-on-bad-exit=1";
    s_worker_words (argv, k, worker, ep, NULL, timeout, keys_dir);
    int errfd = memfd_create ("shardbench-srun-stderr", MFD_CLOEXEC);
    if (errfd < 0) {
        snprintf (err, err_size, "cannot create a file for srun's errors: %s", strerror (errno));
        return -1;
    }
    sb_info ("starting %zu worker(s) on the Slurm job's nodes: %s ... %s --coordinator %s", n, argv[0], worker, ep);
    pid_t pid = s_spawn (argv, errfd);
    if (pid < 0) {
        snprintf (err, err_size, "cannot start %s: %s", argv[0], errno == ENOENT ? "not found on $PATH" : strerror (errno));
        close (errfd);
        return -1;
    }
    self->children[self->count++] = (s_child_t) { .pid = pid, .running = 1, .errfd = errfd, .srun = 1 };
    return 0;
}

static const s_child_t *
s_child (const sb_launcher_t *self, pid_t pid)
{
    for (size_t i = 0; i < self->count; i++)
        if (self->children[i].pid == pid)
            return &self->children[i];
    return NULL;
}

const char *
sb_launcher_host (const sb_launcher_t *self, pid_t pid)
{
    const s_child_t *c = s_child (self, pid);
    return c ? c->host : NULL;
}

int
sb_launcher_is_srun (const sb_launcher_t *self, pid_t pid)
{
    const s_child_t *c = s_child (self, pid);
    return c && c->srun;
}

void
sb_launcher_output (const sb_launcher_t *self, pid_t pid, char *buf, size_t size)
{
    buf[0] = '\0';
    const s_child_t *c = s_child (self, pid);
    if (!c || c->errfd < 0 || size < 2)
        return;
    off_t end = lseek (c->errfd, 0, SEEK_END);
    off_t from = end > (off_t) size - 1 ? end - (off_t) (size - 1) : 0;
    ssize_t got = end > 0 ? pread (c->errfd, buf, (size_t) (end - from), from) : 0;
    if (got < 0)
        got = 0;
    buf[got] = '\0';
    while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\r'))
        buf[--got] = '\0';
}

int
sb_launcher_poll (sb_launcher_t *self, pid_t *pid, int *status)
{
    /* one syscall to learn that no child changed (the common case, once
     * per turn of the coordinator's loop), rather than one per child */
    siginfo_t info = { 0 };
    if (waitid (P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0)
        return 0;
    for (size_t i = 0; i < self->count; i++) {
        s_child_t *c = &self->children[i];
        if (!c->running)
            continue;
        int st = 0;
        pid_t r = waitpid (c->pid, &st, WNOHANG);
        if (r == c->pid || (r < 0 && errno == ECHILD)) {
            *pid = c->pid;
            *status = r < 0 ? 0 : st;
            c->running = 0;
            return 1;
        }
    }
    return 0;
}

int
sb_launcher_await_local (sb_launcher_t *self, pid_t pid, double wait_s, int *status)
{
    s_child_t *c = NULL;
    for (size_t i = 0; i < self->count && !c; i++)
        if (self->children[i].pid == pid)
            c = &self->children[i];
    if (!c || !c->running || c->host || c->srun)
        return 0;
    for (double waited = 0;; waited += 0.005) {
        int st = 0;
        pid_t r = waitpid (c->pid, &st, WNOHANG);
        if (r == c->pid || (r < 0 && errno == ECHILD)) {
            c->running = 0;
            *status = r < 0 ? 0 : st;
            return 1;
        }
        if (waited >= wait_s)
            return 0;
        struct timespec ts = { 0, 5000000 };
        nanosleep (&ts, NULL);
    }
}

size_t
sb_launcher_running (const sb_launcher_t *self)
{
    size_t n = 0;
    for (size_t i = 0; i < self->count; i++)
        n += self->children[i].running;
    return n;
}

size_t
sb_launcher_count (const sb_launcher_t *self)
{
    return self->count;
}

pid_t
sb_launcher_pid (const sb_launcher_t *self, size_t i)
{
    return i < self->count ? self->children[i].pid : -1;
}

static void
s_wait_all (sb_launcher_t *self, double seconds)
{
    double deadline = sb_now () + seconds;
    pid_t pid;
    int status;
    while (sb_launcher_running (self) > 0) {
        while (sb_launcher_poll (self, &pid, &status))
            ;
        if (sb_launcher_running (self) == 0 || sb_now () >= deadline)
            break;
        sb_sleep_s (0.01);
    }
}

static void
s_signal_all (sb_launcher_t *self, int sig)
{
    for (size_t i = 0; i < self->count; i++)
        if (self->children[i].running && kill (self->children[i].pid, sig) != 0 && errno != ESRCH)
            sb_warn ("cannot signal worker pid %d: %s", (int) self->children[i].pid, strerror (errno));
}

void
sb_launcher_stop (sb_launcher_t *self, double grace_s)
{
    s_wait_all (self, grace_s);
    if (sb_launcher_running (self) == 0)
        return;
    s_signal_all (self, SIGTERM);
    s_wait_all (self, 2.0);
    if (sb_launcher_running (self) == 0)
        return;
    s_signal_all (self, SIGKILL);
    s_wait_all (self, 5.0);
}

void
sb_launcher_describe (int status, char *buf, size_t size)
{
    if (WIFEXITED (status))
        snprintf (buf, size, "exit status %d", WEXITSTATUS (status));
    else if (WIFSIGNALED (status))
        snprintf (buf, size, "killed by signal %d (%s)", WTERMSIG (status), strsignal (WTERMSIG (status)));
    else
        snprintf (buf, size, "status 0x%x", status);
}
