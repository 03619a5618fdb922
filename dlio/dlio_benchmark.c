/* dlio_benchmark: the command mlpstorage runs under `mpirun -n N`, answered
 * by shardbench (docs/DLIO.md, "dlio_benchmark under mpirun").
 *
 * DLIO is one MPI program of N ranks. shardbench is one coordinator that
 * starts its own workers, so under mpirun exactly one process may run the
 * benchmark: rank 0 runs `shardbench run --accelerators N --local N ARGS`
 * (the same Hydra arguments DLIO takes) and the other ranks wait for it and
 * exit with its status, so that mpirun's status, and with it mlpstorage's,
 * is the run's. Outside mpirun it runs as one rank.
 *
 * The ranks find each other without MPI: rank 0 listens on an abstract Unix
 * socket named by the user, the parent process (mpirun or its daemon starts
 * every rank of a host) and the arguments; each other rank connects and
 * reads one byte, rank 0's exit status. When rank 0 dies without sending
 * it, the kernel closes the socket and the waiting ranks read end of file
 * and exit 1: a rank never waits on a rank 0 that is gone. Only peers of
 * the same user are talked to (SO_PEERCRED). Every rank must be on rank 0's
 * host (OMPI_COMM_WORLD_LOCAL_SIZE / MPI_LOCALNRANKS equal to the world
 * size): ranks on other hosts are refused at once, by every rank, with exit
 * status 2 (shardbench reaches other hosts with its own --hosts). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S_EXIT_USAGE 2
#define S_JOIN_TIMEOUT_S 120    /* how long ranks wait to find each other at the start */

static const char *s_prog = "dlio_benchmark";

/* A rank variable's value as a whole number >= 0; -1 when absent, -2 when
 * not a number. */
static long
s_env_num (const char *name)
{
    const char *v = getenv (name);
    if (!v)
        return -1;
    char *end = NULL;
    errno = 0;
    long n = strtol (v, &end, 10);
    if (errno || end == v || *end || n < 0 || n > INT_MAX)
        return -2;
    return n;
}

typedef struct {
    long        rank, size, local_size;
    const char *rank_var, *size_var;
} s_world_t;

/* The rank and world size mpirun gave this process: Open MPI's, PMIx's,
 * then PMI's (MPICH's and Intel MPI's Hydra). 0 outside mpirun (rank 0 of
 * 1), -1 with a message on a value that is not a number. */
static int
s_world (s_world_t *w)
{
    static const char *const pairs[][3] = {
        { "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE" },
        { "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE" },
        { "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS" },
    };
    *w = (s_world_t) { 0, 1, -1, NULL, NULL };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        long rank = s_env_num (pairs[i][0]), size = s_env_num (pairs[i][1]);
        if (rank == -1)
            continue;
        if (rank == -2 || size == -2 || size == -1 || size == 0 || rank >= size) {
            fprintf (stderr, "%s: %s=%s with %s=%s is no rank of a world\n", s_prog, pairs[i][0],
                     getenv (pairs[i][0]), pairs[i][1], getenv (pairs[i][1]) ? getenv (pairs[i][1]) : "(unset)");
            return -1;
        }
        long local = s_env_num (pairs[i][2]);
        *w = (s_world_t) { rank, size, local >= 0 ? local : -1, pairs[i][0], pairs[i][1] };
        return 0;
    }
    return 0;
}

/* FNV-1a, to name the socket of one job */
static uint64_t
s_hash (uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char) *s) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;
}

/* The abstract socket address of this job: the ranks of one mpirun on one
 * host share the user, the parent (mpirun, orted or hydra_pmi_proxy), the
 * job's name where the launcher sets one, and the arguments. */
static socklen_t
s_address (struct sockaddr_un *sa, int argc, char **argv)
{
    uint64_t h = 1469598103934665603ull;
    char buf[64];
    snprintf (buf, sizeof buf, "%lu:%ld", (unsigned long) getuid (), (long) getppid ());
    h = s_hash (h, buf);
    static const char *const job_vars[] = { "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "PMI_KVSNAME",
                                            "SLURM_JOB_ID" };
    for (size_t i = 0; i < sizeof job_vars / sizeof job_vars[0]; i++)
        h = s_hash (h, getenv (job_vars[i]) ? getenv (job_vars[i]) : "");
    for (int i = 1; i < argc; i++)
        h = s_hash (h, argv[i]);
    memset (sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    /* abstract: sun_path[0] is NUL, no file is made anywhere */
    int n = snprintf (sa->sun_path + 1, sizeof sa->sun_path - 1, "shardbench-dlio-%016llx", (unsigned long long) h);
    return (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + (size_t) n);
}

/* 1 when the peer of fd is a process of this user */
static int
s_peer_mine (int fd)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    return getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == getuid ();
}

/* The shardbench beside this program (as meson installs both into bindir),
 * else the one on PATH. */
static void
s_exec_shardbench (char **argv)
{
    char self[PATH_MAX], path[PATH_MAX + 16];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr (self, '/');
        if (slash) {
            *slash = '\0';
            snprintf (path, sizeof path, "%s/shardbench", self);
            if (access (path, X_OK) == 0) {
                argv[0] = path;
                execv (path, argv);
                fprintf (stderr, "%s: cannot run %s: %s\n", s_prog, path, strerror (errno));
                _exit (127);
            }
        }
    }
    argv[0] = "shardbench";
    execvp ("shardbench", argv);
    fprintf (stderr, "%s: cannot run shardbench (not beside %s, not on PATH): %s\n", s_prog, s_prog,
             strerror (errno));
    _exit (127);
}

/* shardbench run --accelerators N --local N ARGS... (argv[0] filled in by s_exec_shardbench) */
static char **
s_shardbench_argv (int argc, char **argv, long n, char *nbuf, size_t nsize)
{
    char **a = calloc ((size_t) argc + 8, sizeof *a);
    if (!a)
        return NULL;
    snprintf (nbuf, nsize, "%ld", n);
    int k = 0;
    a[k++] = NULL;
    a[k++] = "run";
    a[k++] = "--accelerators";
    a[k++] = nbuf;
    a[k++] = "--local";
    a[k++] = nbuf;
    for (int i = 1; i < argc; i++)
        a[k++] = argv[i];
    a[k] = NULL;
    return a;
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Rank > 0: wait for rank 0's status and return it. */
static int
s_wait_rank0 (const s_world_t *w, int argc, char **argv)
{
    struct sockaddr_un sa;
    socklen_t len = s_address (&sa, argc, argv);
    double deadline = s_now () + S_JOIN_TIMEOUT_S;
    int fd = -1;
    for (;;) {
        fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            fprintf (stderr, "%s: rank %ld: socket: %s\n", s_prog, w->rank, strerror (errno));
            return 1;
        }
        if (connect (fd, (struct sockaddr *) &sa, len) == 0)
            break;
        int e = errno;
        close (fd);
        /* rank 0 has not bound its socket yet: it is starting */
        if ((e != ECONNREFUSED && e != ENOENT && e != EAGAIN) || s_now () > deadline) {
            fprintf (stderr, "%s: rank %ld of %ld: rank 0 of this job did not answer on this host within %d s"
                     " (%s)\n", s_prog, w->rank, w->size, S_JOIN_TIMEOUT_S, strerror (e));
            return 1;
        }
        struct timespec pause = { 0, 20 * 1000 * 1000 };
        nanosleep (&pause, NULL);
    }
    if (!s_peer_mine (fd)) {
        fprintf (stderr, "%s: rank %ld: the socket of this job is another user's: refused\n", s_prog, w->rank);
        close (fd);
        return 1;
    }
    unsigned char status;
    ssize_t n;
    do
        n = read (fd, &status, 1);
    while (n < 0 && errno == EINTR);
    close (fd);
    if (n != 1) {
        fprintf (stderr, "%s: rank %ld: rank 0 ended without giving its status\n", s_prog, w->rank);
        return 1;
    }
    return status;
}

/* Rank 0 of size > 1: run shardbench as a child, forward the signals that
 * stop a run to it, then give its status to every other rank. */
static int
s_rank0 (const s_world_t *w, int argc, char **argv)
{
    struct sockaddr_un sa;
    socklen_t len = s_address (&sa, argc, argv);
    int lfd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (lfd < 0 || bind (lfd, (struct sockaddr *) &sa, len) != 0 || listen (lfd, (int) w->size) != 0) {
        fprintf (stderr, "%s: rank 0: cannot listen for the other ranks on @%s: %s\n", s_prog, sa.sun_path + 1,
                 strerror (errno));
        return S_EXIT_USAGE;
    }
    sigset_t mask, old;
    sigemptyset (&mask);
    sigaddset (&mask, SIGCHLD);
    sigaddset (&mask, SIGTERM);
    sigaddset (&mask, SIGINT);
    sigaddset (&mask, SIGHUP);
    if (sigprocmask (SIG_BLOCK, &mask, &old) != 0) {
        fprintf (stderr, "%s: rank 0: sigprocmask: %s\n", s_prog, strerror (errno));
        return 1;
    }
    int sfd = signalfd (-1, &mask, SFD_CLOEXEC);
    char nbuf[32];
    char **args = s_shardbench_argv (argc, argv, w->size, nbuf, sizeof nbuf);
    if (sfd < 0 || !args) {
        fprintf (stderr, "%s: rank 0: %s\n", s_prog, sfd < 0 ? strerror (errno) : "out of memory");
        return 1;
    }
    pid_t child = fork ();
    if (child < 0) {
        fprintf (stderr, "%s: rank 0: fork: %s\n", s_prog, strerror (errno));
        return 1;
    }
    if (child == 0) {
        sigprocmask (SIG_SETMASK, &old, NULL);
        s_exec_shardbench (args);
    }
    free (args);
    int *peers = calloc ((size_t) w->size, sizeof *peers);
    if (!peers) {
        fprintf (stderr, "%s: rank 0: out of memory\n", s_prog);
        kill (child, SIGTERM);
    }
    size_t npeers = 0;
    int status = -1;
    double deadline = 0;
    /* until the run ended and every other rank was told (or stopped
     * coming: a rank that never connects is mpirun's to end) */
    while (status < 0 || (peers && npeers < (size_t) w->size - 1 && s_now () < deadline)) {
        struct pollfd p[2] = { { lfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
        int timeout = status < 0 ? -1 : (int) ((deadline - s_now ()) * 1000) + 1;
        if (poll (p, 2, timeout) < 0) {
            if (errno == EINTR)
                continue;
            fprintf (stderr, "%s: rank 0: poll: %s\n", s_prog, strerror (errno));
            break;
        }
        if (p[0].revents & POLLIN) {
            int c = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0 && peers && npeers < (size_t) w->size - 1 && s_peer_mine (c)) {
                peers[npeers++] = c;
                if (status >= 0) {
                    unsigned char b = (unsigned char) status;
                    if (write (c, &b, 1) != 1)
                        fprintf (stderr, "%s: rank 0: telling a rank: %s\n", s_prog, strerror (errno));
                }
            }
            else if (c >= 0)
                close (c);
        }
        if (p[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read (sfd, &si, sizeof si) != (ssize_t) sizeof si)
                continue;
            if (si.ssi_signo != SIGCHLD) {
                /* mpirun passes a stop on to its ranks: the run ends as shardbench ends a run */
                kill (child, (int) si.ssi_signo);
                continue;
            }
            int ws;
            pid_t r;
            while ((r = waitpid (child, &ws, WNOHANG)) < 0 && errno == EINTR)
                ;
            if (r != child)
                continue;
            status = WIFEXITED (ws) ? WEXITSTATUS (ws) : WIFSIGNALED (ws) ? 128 + WTERMSIG (ws) : 1;
            deadline = s_now () + S_JOIN_TIMEOUT_S;
            for (size_t i = 0; i < npeers; i++) {
                unsigned char b = (unsigned char) status;
                if (write (peers[i], &b, 1) != 1)
                    fprintf (stderr, "%s: rank 0: telling a rank: %s\n", s_prog, strerror (errno));
            }
        }
    }
    for (size_t i = 0; i < npeers; i++)
        close (peers[i]);
    free (peers);
    close (lfd);
    close (sfd);
    return status < 0 ? 1 : status;
}

int
main (int argc, char **argv)
{
    if (argc > 1 && (!strcmp (argv[1], "-h") || !strcmp (argv[1], "--help"))) {
        printf ("usage: dlio_benchmark workload=NAME [++workload.K=V ...] [++hydra.run.dir=DIR]\n"
                "                      [++hydra.output_subdir=SUB] [--config-dir=DIR]\n"
                "\n"
                "DLIO's command, answered by shardbench (`shardbench run --help` for the arguments).\n"
                "Under mpirun -n N rank 0 runs `shardbench run --accelerators N --local N ARGS` and the\n"
                "other ranks wait for it and exit with its status; every rank must be on rank 0's host.\n"
                "Outside mpirun: one rank.\n"
                "\n"
                "example (as mlpstorage runs DLIO):\n"
                "  mpirun -n 8 dlio_benchmark workload=unet3d_h100 ++workload.dataset.data_folder=/mnt/data \\\n"
                "      ++hydra.run.dir=results/run1 ++hydra.output_subdir=dlio_config\n");
        return 0;
    }
    s_world_t w;
    if (s_world (&w) != 0)
        return S_EXIT_USAGE;
    if (w.local_size >= 0 && w.local_size != w.size) {
        fprintf (stderr, "%s: rank %ld: %ld of the %ld ranks are on this host (%s): shardbench's dlio_benchmark"
                 " runs every rank on rank 0's host; for several hosts run shardbench with --hosts\n", s_prog,
                 w.rank, w.local_size, w.size, w.rank_var);
        return S_EXIT_USAGE;
    }
    if (w.size == 1) {
        char nbuf[32];
        char **args = s_shardbench_argv (argc, argv, 1, nbuf, sizeof nbuf);
        if (!args) {
            fprintf (stderr, "%s: out of memory\n", s_prog);
            return 1;
        }
        s_exec_shardbench (args);
    }
    return w.rank == 0 ? s_rank0 (&w, argc, argv) : s_wait_rank0 (&w, argc, argv);
}
