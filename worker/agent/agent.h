/* agent: a stateless worker agent's session with the coordinator. */
#ifndef SB_AGENT_H
#define SB_AGENT_H

typedef struct {
    const char *endpoint;   /* coordinator, e.g. tcp://10.0.0.1:5555 */
    const char *host;       /* name reported to the coordinator; NULL: gethostname */
    double      timeout_s;  /* how long to wait for WELCOME; 0: no limit */
    int         wait_refused;   /* 1: a refused connection waits out timeout_s (--timeout given);
                                 * 0: it fails after a few seconds */
    const char *keys_dir;   /* CURVE key directory (lib/security/security.h), NULL: plain */
    const char *cert_name;  /* worker certificate in keys_dir, NULL: "worker" */
} sb_agent_opts_t;

/* Join the coordinator and serve until BYE (exit code 0), ABORT, a lost
 * coordinator or a failure (1), or a bad endpoint (2). */
int sb_agent_run (const sb_agent_opts_t *opts);

#endif
