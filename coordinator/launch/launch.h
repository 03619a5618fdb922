/* launch: start and stop shardbench-worker processes, local (--local N),
 * one per host over ssh (--hosts), or one per node of a Slurm job in one
 * srun step (--slurm).
 *
 * Children (workers, or the ssh or srun clients running them) get PR_SET_PDEATHSIG,
 * so they die with the coordinator even if it is killed with SIGKILL; remote
 * workers also exit by themselves when BYE comes or heartbeats stop. */
#ifndef SB_LAUNCH_H
#define SB_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

typedef struct sb_launcher sb_launcher_t;

/* worker_path: the shardbench-worker binary (copied). NULL on failure. */
sb_launcher_t *sb_launcher_new (const char *worker_path);
/* Stop any running children (as sb_launcher_stop with no grace), free. */
void sb_launcher_destroy (sb_launcher_t **self_p);

/* Start n workers connecting to endpoint, with `--keys keys_dir` when
 * keys_dir is not NULL (CURVE): the first now, the others by
 * sb_launcher_start_more, so that the coordinator answers each worker as it
 * comes (a worker that waits longer than the heartbeat timeout for its
 * WELCOME gives up: forking a thousand first took longer than that).
 * Returns 0, or -1 with err set (children already started stay tracked). */
int sb_launcher_start (sb_launcher_t *self, size_t n, const char *endpoint, double heartbeat_timeout_s,
                       const char *keys_dir, char *err, size_t err_size);

/* Start more of the workers sb_launcher_start left to start: at most max,
 * at least one (when max > 0), and more while budget_s seconds have not
 * passed. Returns 0 (also when none is left), or -1 with err (fork failed:
 * none is left to start). */
int sb_launcher_start_more (sb_launcher_t *self, double budget_s, size_t max, char *err, size_t err_size);

/* Workers sb_launcher_start has still to start (0 for NULL). */
size_t sb_launcher_pending (const sb_launcher_t *self);

/* Write text into out (size bytes) as one single-quoted POSIX shell word
 * ('it'\''s' for it's). Returns 0, or -1 when it does not fit. */
int sb_launcher_shell_quote (const char *text, char *out, size_t size);

/* Start one worker per host over ssh: `SSH -o BatchMode=yes HOST
 * REMOTE_WORKER --coordinator ENDPOINT --host HOST --timeout T [--keys DIR]`,
 * each word after HOST quoted for the remote shell (sb_launcher_shell_quote).
 * A host starting with '-' is refused. ssh_cmd is split at spaces (no
 * quoting), e.g. "ssh" or "ssh -p 2222".
 * When endpoint binds every address (tcp://\*:P, tcp://0.0.0.0:P), each host
 * is given the local address the route to it uses. Each ssh's stderr is kept
 * (sb_launcher_output). Returns 0, or -1 with err set (children already
 * started stay tracked). */
int sb_launcher_start_ssh (sb_launcher_t *self, const char *const *hosts, size_t n, const char *ssh_cmd,
                           const char *remote_worker, const char *endpoint, double heartbeat_timeout_s,
                           const char *keys_dir, char *err, size_t err_size);

/* Start one worker on each of the n nodes of the Slurm job we run in, as
 * one step: `SRUN --nodes=N --ntasks=N --ntasks-per-node=1 --overlap
 * --kill-on-bad-exit=1 WORKER --coordinator ENDPOINT --timeout T [--keys
 * DIR]`. srun_cmd is split at spaces like ssh_cmd ("srun"); worker is the
 * worker binary's path on the nodes. hosts are the job's nodes: when
 * endpoint binds every address, the workers are given the local address of
 * the route to the first node that is not this one (SLURMD_NODENAME, else
 * the host name). srun's stderr, which carries the workers' too, is kept
 * (sb_launcher_output). Returns 0, or -1 with err set. */
int sb_launcher_start_srun (sb_launcher_t *self, const char *const *hosts, size_t n, const char *srun_cmd,
                            const char *worker, const char *endpoint, double heartbeat_timeout_s,
                            const char *keys_dir, char *err, size_t err_size);

/* The host an ssh child runs on (borrowed), NULL for a local or srun child
 * or an unknown pid. Valid after the child was reaped. */
const char *sb_launcher_host (const sb_launcher_t *self, pid_t pid);

/* 1 when pid is the srun step of sb_launcher_start_srun, else 0. */
int sb_launcher_is_srun (const sb_launcher_t *self, pid_t pid);

/* The last size-1 bytes an ssh or srun child wrote to stderr, trailing
 * newlines removed ("" when none or a local child). */
void sb_launcher_output (const sb_launcher_t *self, pid_t pid, char *buf, size_t size);

/* Reap one exited child without blocking. Returns 1 and sets *pid and
 * *status (waitpid status) when one exited, else 0. */
int sb_launcher_poll (sb_launcher_t *self, pid_t *pid, int *status);

/* A local worker child (not ssh, not srun) whose connection was just lost:
 * wait up to wait_s for it to end (the kernel closes a dying process's
 * sockets before it becomes reapable) and reap it. Returns 1 and sets
 * *status when it ended, 0 when it still runs or pid is no local child. */
int sb_launcher_await_local (sb_launcher_t *self, pid_t pid, double wait_s, int *status);

/* Children still running. */
size_t sb_launcher_running (const sb_launcher_t *self);
/* How many children were started, and the pid of child i (0 <= i < count),
 * in start order. */
size_t sb_launcher_count (const sb_launcher_t *self);
pid_t sb_launcher_pid (const sb_launcher_t *self, size_t i);

/* Wait up to grace_s for children to exit, then SIGTERM, then SIGKILL. */
void sb_launcher_stop (sb_launcher_t *self, double grace_s);

/* Describe a waitpid status ("exit status 3", "killed by signal 9"). */
void sb_launcher_describe (int status, char *buf, size_t size);

#endif
