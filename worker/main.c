/* shardbench-worker: the node agent. All logic lives in libworker. */
#include "agent.h"
#include "log.h"

#include <czmq.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
s_usage (FILE *f)
{
    fprintf (f,
             "usage: shardbench-worker --coordinator ENDPOINT [--host NAME] [--timeout S]\n"
             "                         [--keys DIR [--cert NAME]] [-v]\n"
             "\n"
             "A stateless shardbench worker agent: connects to the coordinator, receives its\n"
             "ranks (emulated accelerators) and the workload, reads the dataset and reports\n"
             "timing. It keeps nothing between runs. One agent per node is enough.\n"
             "\n"
             "--coordinator ENDPOINT  ZeroMQ endpoint of `shardbench run`, e.g. tcp://10.0.0.1:5555\n"
             "--host NAME             name to report (default: this host's name)\n"
             "--timeout S             seconds to wait for the coordinator to answer (default 30)\n"
             "--keys DIR              ZeroMQ CURVE: present DIR/NAME.cert(_secret) and trust only the\n"
             "                        coordinator holding DIR/coordinator.cert (made by `shardbench keys`);\n"
             "                        default $SHARDBENCH_KEYS. Needed when the coordinator runs with --keys\n"
             "--cert NAME             the worker certificate in DIR (default: worker)\n"
             "-v, --verbose           debug messages\n"
             "\n"
             "Exit status: 0 the run ended normally, 1 aborted or the coordinator was lost,\n"
             "2 usage error.\n");
}

int
main (int argc, char **argv)
{
    sb_agent_opts_t opts = { .timeout_s = 30 };
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp (arg, "-h") || !strcmp (arg, "--help")) {
            s_usage (stdout);
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
            if (errno || !end || *end || !(opts.timeout_s > 0)) {
                fprintf (stderr, "shardbench-worker: --timeout expects seconds > 0, got '%s'\n", argv[i]);
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
    if (!opts.endpoint) {
        fprintf (stderr, "shardbench-worker: --coordinator ENDPOINT is required (see --help)\n");
        return 2;
    }
    static char ident[64];
    snprintf (ident, sizeof ident, "shardbench-worker[%d]", (int) getpid ());
    sb_log_set_ident (ident);
    zsys_init ();
    zsys_set_logstream (NULL);
    zsys_set_max_sockets (0);   /* ranks x reader threads can exceed 1023 */
    return sb_agent_run (&opts);
}
