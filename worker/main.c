/* shardbench-worker: the node agent. All logic lives in libworker. */
#include "agent.h"
#include "log.h"
#include "sb_version.h"
#include "util.h"

#include <czmq.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

static void
s_usage (FILE *f)
{
    fprintf (f,
             "usage: shardbench-worker --coordinator ENDPOINT [--host NAME] [--timeout S]\n"
             "                         [--keys DIR [--cert NAME]] [-v]\n"
             "       shardbench-worker --version\n"
             "\n"
             "A stateless shardbench worker agent: connects to the coordinator, receives its\n"
             "ranks (emulated accelerators) and the workload, reads the dataset and reports\n"
             "timing. It keeps nothing between runs. One agent per node is enough.\n"
             "\n"
             "--coordinator ENDPOINT  ZeroMQ endpoint of `shardbench run`, e.g. tcp://10.0.0.1:5555\n"
             "--host NAME             name to report (default: $SLURMD_NODENAME under srun, else this\n"
             "                        host's name)\n"
             "--timeout S             seconds to wait for the coordinator to answer (default 30; 0: wait\n"
             "                        for as long as it takes, for a long-lived agent). Without it, a\n"
             "                        coordinator address that refuses connections fails after 3 s; with\n"
             "                        it, the worker waits (a coordinator still starting)\n"
             "--keys DIR              ZeroMQ CURVE: present DIR/NAME.cert(_secret) and trust only the\n"
             "                        coordinator holding DIR/coordinator.cert (made by `shardbench keys`);\n"
             "                        default $SHARDBENCH_KEYS. Needed when the coordinator runs with --keys\n"
             "--cert NAME             the worker certificate in DIR (default: worker)\n"
             "-v, --verbose           debug messages\n"
             "\n"
             "Environment: SHARDBENCH_COORDINATOR is the endpoint when --coordinator is not given\n"
             "(for sbatch scripts and service units). Under srun (SLURM_JOB_ID, SLURM_PROCID set),\n"
             "the worker reports SLURMD_NODENAME as its host and logs its Slurm job, step and task.\n"
             "\n"
             "Exit status: 0 the run ended normally, 1 aborted or the coordinator was lost,\n"
             "2 usage error.\n");
}

/* The agent's own sockets, before any rank, need a few dozen descriptors
 * (CZMQ aborts on a socket it cannot create): raise the soft limit to the
 * hard one and refuse a limit below that. The ranks are counted once the
 * workload is known (worker/agent/agent.c). Returns 0, or -1 (said why). */
static int
s_fd_floor (void)
{
    const uint64_t floor = 64;
    uint64_t soft, hard;
    char err[256];
    if (sb_fd_limit_raise (&soft, &hard, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench-worker: %s\n", err);
        return -1;
    }
    if (soft < floor) {
        fprintf (stderr, "shardbench-worker: file descriptors: the limit is %llu (hard limit %llu), the agent needs"
                 " %llu before its first rank: raise it (`ulimit -n`, LimitNOFILE= for a service)\n",
                 (unsigned long long) soft, (unsigned long long) hard, (unsigned long long) floor);
        return -1;
    }
    return 0;
}

/* Started by srun: report the node under the name Slurm gives it (the
 * one in the job's node list) and say which task of which step this is. */
static void
s_slurm_task (sb_agent_opts_t *opts)
{
    const char *job = getenv ("SLURM_JOB_ID"), *task = getenv ("SLURM_PROCID");
    const char *step = getenv ("SLURM_STEP_ID"), *node = getenv ("SLURMD_NODENAME");
    if (!job || !*job || !task || !*task)
        return;
    if (!opts->host && node && *node)
        opts->host = node;
    sb_info ("slurm job %s step %s task %s on %s", job, step && *step ? step : "-", task,
             node && *node ? node : "(unknown node)");
}

int
main (int argc, char **argv)
{
    sb_agent_opts_t opts = { .timeout_s = 30 };
    /* compute deadlines are sub-millisecond: the kernel's default 50 us of
     * timer slack would add up to that to every step (not fatal if refused) */
    if (prctl (PR_SET_TIMERSLACK, 1UL, 0, 0, 0) != 0)
        sb_debug ("timer slack left at the default: %s", strerror (errno));
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp (arg, "-h") || !strcmp (arg, "--help")) {
            s_usage (stdout);
            return 0;
        }
        else if (!strcmp (arg, "--version")) {
            printf ("shardbench-worker %s\nbuild: %s\nbuilt with: %s\n", SB_VERSION, SB_BUILD,
                    *SB_FEATURES ? SB_FEATURES : "(no optional parts)");
            return 0;
        }
        else if (!strcmp (arg, "-v") || !strcmp (arg, "--verbose"))
            sb_log_set_level (SB_LOG_DEBUG);
        else if ((!strcmp (arg, "--coordinator") || !strcmp (arg, "--host") || !strcmp (arg, "--timeout")
                  || !strcmp (arg, "--keys") || !strcmp (arg, "--cert")) && !next) {
            fprintf (stderr, "shardbench-worker: %s needs a value\n", arg);
            return 2;
        }
        else if (!strcmp (arg, "--coordinator"))
            opts.endpoint = argv[++i];
        else if (!strcmp (arg, "--host"))
            opts.host = argv[++i];
        else if (!strcmp (arg, "--keys"))
            opts.keys_dir = argv[++i];
        else if (!strcmp (arg, "--cert"))
            opts.cert_name = argv[++i];
        else if (!strcmp (arg, "--timeout")) {
            char *end = NULL;
            errno = 0;
            opts.timeout_s = strtod (argv[++i], &end);
            opts.wait_refused = 1;
            if (errno || !end || *end || !(opts.timeout_s >= 0) || isinf (opts.timeout_s)) {
                fprintf (stderr, "shardbench-worker: --timeout expects seconds >= 0 (0: no limit), got '%s'\n", argv[i]);
                return 2;
            }
        }
        else {
            fprintf (stderr, "shardbench-worker: unknown argument '%s' (see --help)\n", arg);
            return 2;
        }
    }
    if (!opts.keys_dir && (opts.keys_dir = getenv ("SHARDBENCH_KEYS")) && !*opts.keys_dir)
        opts.keys_dir = NULL;
    if (!opts.endpoint && (opts.endpoint = getenv ("SHARDBENCH_COORDINATOR")) && !*opts.endpoint)
        opts.endpoint = NULL;
    if (!opts.endpoint) {
        fprintf (stderr, "shardbench-worker: --coordinator ENDPOINT (or $SHARDBENCH_COORDINATOR) is required (see --help)\n");
        return 2;
    }
    static char ident[64];
    snprintf (ident, sizeof ident, "shardbench-worker[%d]", (int) getpid ());
    sb_log_set_ident (ident);
    s_slurm_task (&opts);
    if (s_fd_floor () != 0)
        return 1;
    zsys_init ();
    zsys_set_logstream (NULL);
    zsys_set_max_sockets (0);   /* ranks x reader threads can exceed 1023 */
    return sb_agent_run (&opts);
}
