/* launch: local worker processes. */
#include "launch.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

struct sb_launcher {
    char   *worker_path;
    pid_t  *pids;       /* 0 once reaped */
    size_t  count;
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
    free (self->pids);
    free (self->worker_path);
    free (self);
    *self_p = NULL;
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
    pid_t *grown = realloc (self->pids, (self->count + n) * sizeof (pid_t));
    if (!grown) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    self->pids = grown;
    pid_t parent = getpid ();
    char timeout[32];
    snprintf (timeout, sizeof timeout, "%g", heartbeat_timeout_s);
    for (size_t i = 0; i < n; i++) {
        pid_t pid = fork ();
        if (pid < 0) {
            snprintf (err, err_size, "cannot start local worker %zu: fork: %s", i, strerror (errno));
            return -1;
        }
        if (pid == 0) {
            /* child: die with the coordinator, even on SIGKILL */
            if (prctl (PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid () != parent)
                _exit (127);
            char *argv[] = { self->worker_path, "--coordinator", (char *) endpoint, "--timeout", timeout,
                             keys_dir ? "--keys" : NULL, (char *) keys_dir, NULL };
            execv (self->worker_path, argv);
            fprintf (stderr, "shardbench: cannot run %s: %s\n", self->worker_path, strerror (errno));
            _exit (127);
        }
        self->pids[self->count++] = pid;
    }
    return 0;
}

int
sb_launcher_poll (sb_launcher_t *self, pid_t *pid, int *status)
{
    for (size_t i = 0; i < self->count; i++) {
        if (!self->pids[i])
            continue;
        int st = 0;
        pid_t r = waitpid (self->pids[i], &st, WNOHANG);
        if (r == self->pids[i] || (r < 0 && errno == ECHILD)) {
            *pid = self->pids[i];
            *status = r < 0 ? 0 : st;
            self->pids[i] = 0;
            return 1;
        }
    }
    return 0;
}

size_t
sb_launcher_running (const sb_launcher_t *self)
{
    size_t n = 0;
    for (size_t i = 0; i < self->count; i++)
        n += self->pids[i] != 0;
    return n;
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
        if (self->pids[i] && kill (self->pids[i], sig) != 0 && errno != ESRCH)
            sb_warn ("cannot signal worker pid %d: %s", (int) self->pids[i], strerror (errno));
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
