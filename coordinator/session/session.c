/* session: one command of the coordinator (sb_session_run, session.h).
 *
 * Checks the plan, sets up the storage (storage_setup.c), binds the
 * ROUTER, starts or awaits the workers (admission.c), then runs the phases
 * (phase_datagen.c, phase_train.c, phase_checkpoint.c), each a loop of the
 * same pump (loop.c) with its own "done" condition; tears everything down.
 * Also the signal handler and the descriptor limit check. The session's
 * state and the modules' internal functions: session_internal.h. */
#include "session.h"
#include "session_internal.h"
#include "dlio_stops.h"
#include "catalog.h"
#include "ckpt_plan.h"
#include "dataset.h"
#include "engine.h"
#include "security.h"
#include "launch.h"
#include "log.h"
#include "util.h"
#include "wire.h"
#include "progress.h"
#include "sampler.h"

#include <ctype.h>
#include <czmq.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>
#include <stdarg.h>

/* The first SIGINT, SIGTERM or SIGHUP asks for a clean stop: every phase
 * (listing, waiting for workers, datagen, training) checks zsys_interrupted
 * within a fraction of a second, ABORTs the workers, records the run and
 * prints the summary; the process then exits 128 + the signal number. A
 * second signal while stopping ends the process at once (default action). */
static volatile sig_atomic_t s_caught;


static void
s_on_signal (int sig)
{
    if (s_caught) {
        signal (sig, SIG_DFL);
        raise (sig);
        return;
    }
    s_caught = sig;
    zsys_interrupted = 1;
    zctx_interrupted = 1;
}

int
sb_session_catch_signals (void)
{
    zsys_handler_set (NULL);    /* CZMQ's own handler knows neither SIGHUP nor the signal number */
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sa.sa_flags = SA_RESTART;
    if (sigemptyset (&sa.sa_mask) != 0 || sigaction (SIGINT, &sa, NULL) != 0 || sigaction (SIGTERM, &sa, NULL) != 0)
        return -1;
    /* under nohup SIGHUP stays ignored, as nohup asked */
    struct sigaction old;
    if (sigaction (SIGHUP, NULL, &old) != 0)
        return -1;
    if (old.sa_handler != SIG_IGN && sigaction (SIGHUP, &sa, NULL) != 0)
        return -1;
    return 0;
}

int
sb_session_signal (void)
{
    return s_caught;
}

const char *
sess_signal_name (void)
{
    return s_caught == SIGINT ? "SIGINT" : s_caught == SIGTERM ? "SIGTERM" : s_caught == SIGHUP ? "SIGHUP" : "a signal";
}

/* Descriptors of the coordinator itself: stdio, the result database and its
 * journal, ZeroMQ's context, reaper and io thread, the CURVE authenticator,
 * a listing in progress (2 connections per listing stream and 4 of its own
 * client), with room to spare. */
#define S_FDS_BASE 64


/* Raise the soft RLIMIT_NOFILE to the hard limit, then check that the
 * workers' connections fit: one socket per worker, plus the file that keeps
 * ssh's errors per --hosts host. Returns 0, or -1 with the numbers in err. */
int
sb_session_check_limits (const sb_session_opts_t *o, char *err, size_t err_size)
{
    size_t workers = o->kind == SB_SESSION_CATALOG ? 0
                   : o->nhosts ? o->nhosts : o->local_workers ? o->local_workers : o->remote_workers;
    uint64_t soft, hard;
    if (sb_fd_limit_raise (&soft, &hard, err, err_size) != 0)
        return -1;
    uint64_t per_worker = o->nhosts && !o->slurm ? 2 : 1;
    /* an engine with endpoints: the coordinator's own connections and its listing streams' */
    uint64_t s3 = (sb_storage_caps (&o->wl->storage) & SB_ENGINE_ENDPOINTS) ? 4 + 2 * o->wl->storage.list_parallelism
                                                                            : 0;
    uint64_t need = (uint64_t) workers * per_worker + S_FDS_BASE + s3;
    if (soft < need) {
        snprintf (err, err_size,
                  "need %llu file descriptors for %zu worker(s) (%llu per worker connection%s, %d for the coordinator"
                  "%s%.0llu), limit is %llu (hard limit %llu): raise it with `ulimit -n %llu` or LimitNOFILE=%llu"
                  " (systemd), or use fewer workers",
                  (unsigned long long) need, workers, (unsigned long long) per_worker,
                  per_worker > 1 ? " and ssh error file" : "", S_FDS_BASE, s3 ? ", S3 listing " : "",
                  (unsigned long long) s3, (unsigned long long) soft,
                  hard == UINT64_MAX ? 0ull : (unsigned long long) hard, (unsigned long long) need,
                  (unsigned long long) need);
        return -1;
    }
    return 0;
}

void
sess_fail (sess_t *self, const char *fmt, ...)
{
    /* whatever failed after a signal (a request it cut short, a phase it
     * stopped) failed because of it: the run is aborted, not failed */
    if (s_caught)
        self->aborted = 1;
    if (self->failed)
        return;     /* keep the first cause */
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (self->failure, sizeof self->failure, fmt, ap);
    va_end (ap);
    self->failed = 1;
    sb_error ("%s", self->failure);
}

/* The endpoint ZeroMQ can bind for `bind`: ZeroMQ takes a host name there
 * for a network interface (so tcp://localhost:P fails with ENODEV), and an
 * IPv6 address only on a socket with ZMQ_IPV6. A name is resolved to its
 * first address (IPv4 first); *ipv6 tells whether the socket needs ZMQ_IPV6.
 * Returns 0, or -1 with err. */
static int
s_bind_endpoint (const char *bind, char *out, size_t size, int *ipv6, char *err, size_t err_size)
{
    *ipv6 = 0;
    if (sb_strf (out, size, "%s", bind) != 0) {
        snprintf (err, err_size, "--bind %s: too long", bind);
        return -1;
    }
    if (strncmp (bind, "tcp://", 6) != 0)
        return 0;
    const char *host = bind + 6, *colon = strrchr (host, ':');
    if (!colon || colon == host || strchr (host, ';'))
        return 0;   /* ZeroMQ says what is wrong with it */
    size_t n = (size_t) (colon - host);
    if (host[0] == '[') {
        *ipv6 = 1;
        return 0;
    }
    char name[256];
    if (n >= sizeof name)
        return 0;
    memcpy (name, host, n);
    name[n] = '\0';
    if (!strcmp (name, "*") || strspn (name, "0123456789.") == n)
        return 0;   /* every interface, or an IPv4 address */
    if (if_nametoindex (name) != 0)
        return 0;   /* a network interface (tcp://ib0:5555): ZeroMQ binds its address */
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
    int rc = getaddrinfo (name, NULL, &hints, &ai);
    if (rc != 0) {
        snprintf (err, err_size, "cannot bind %s: host '%s': %s", bind, name, gai_strerror (rc));
        return -1;
    }
    const struct addrinfo *pick = NULL;
    for (const struct addrinfo *p = ai; p && !pick; p = p->ai_next)
        if (p->ai_family == AF_INET)
            pick = p;
    for (const struct addrinfo *p = ai; p && !pick; p = p->ai_next)
        if (p->ai_family == AF_INET6)
            pick = p;
    char addr[INET6_ADDRSTRLEN] = "";
    int family = pick ? pick->ai_family : AF_UNSPEC;
    if (pick && pick->ai_family == AF_INET)
        inet_ntop (AF_INET, &((const struct sockaddr_in *) pick->ai_addr)->sin_addr, addr, sizeof addr);
    else if (pick)
        inet_ntop (AF_INET6, &((const struct sockaddr_in6 *) pick->ai_addr)->sin6_addr, addr, sizeof addr);
    freeaddrinfo (ai);
    if (!addr[0]) {
        snprintf (err, err_size, "cannot bind %s: host '%s' has no IPv4 or IPv6 address", bind, name);
        return -1;
    }
    *ipv6 = family == AF_INET6;
    if (sb_strf (out, size, "tcp://%s%s%s%s", *ipv6 ? "[" : "", addr, *ipv6 ? "]" : "", colon) != 0) {
        snprintf (err, err_size, "--bind %s: too long", bind);
        return -1;
    }
    sb_debug ("--bind %s: %s is %s", bind, name, addr);
    return 0;
}

/* Make and bind the ROUTER. It is bound before the dataset is listed, so
 * that workers started with the coordinator connect at once (their HELLOs
 * are held, sess_hold_hello, until the listing is done) instead of being
 * refused. Returns 0, or the exit status with err. */
static int
s_bind (sess_t *self, const sb_session_opts_t *opts, char *err, size_t err_size)
{
    self->router = zsock_new (ZMQ_ROUTER);
    if (!self->router) {
        snprintf (err, err_size, "cannot create the ZeroMQ socket: %s", zmq_strerror (zmq_errno ()));
        return 1;
    }
    sb_wire_configure (self->router, 1000);
    zsock_set_router_mandatory (self->router, 1);
    zsock_set_rcvtimeo (self->router, 0);
    if (opts->keys_dir && sb_curve_server (self->router, opts->keys_dir, &self->auth, err, err_size) != 0)
        return 2;
    char bind[512];
    int ipv6 = 0;
    if (s_bind_endpoint (opts->bind, bind, sizeof bind, &ipv6, err, err_size) != 0)
        return 2;
    if (ipv6)
        zsock_set_ipv6 (self->router, 1);
    int port = zsock_bind (self->router, "%s", bind);
    if (port < 0) {
        snprintf (err, err_size, "cannot bind %s: %s", opts->bind, zmq_strerror (zmq_errno ()));
        return 2;
    }
    char *last = zsock_last_endpoint (self->router);
    snprintf (self->endpoint, sizeof self->endpoint, "%s", last ? last : opts->bind);
    zstr_free (&last);
    self->poller = zpoller_new (self->router, NULL);
    if (!self->poller) {
        snprintf (err, err_size, "out of memory");
        return 1;
    }
    self->holding = 1;
    sb_debug ("bound %s: HELLOs are held until the dataset is listed", self->endpoint);
    return 0;
}

static int
s_session_run (sess_t *self, const sb_session_opts_t *opts, int64_t *run_id, char *err, size_t err_size)
{
    *run_id = -1;
    int exit_code = 1;
    const sb_workload_t *wl = opts->wl;

    self->expected = opts->nhosts ? opts->nhosts : opts->local_workers ? opts->local_workers : opts->remote_workers;
    if (self->expected == 0 || opts->accelerators == 0 || opts->accelerators % self->expected != 0) {
        snprintf (err, err_size, "%llu accelerators cannot be split evenly over %zu workers",
                  (unsigned long long) opts->accelerators, self->expected);
        return 2;
    }
    self->ranks_per_worker = opts->accelerators / self->expected;
    if (self->ranks_per_worker > 4096) {
        snprintf (err, err_size, "%llu accelerators over %zu workers is %llu ranks per worker; at most 4096 run in one"
                  " worker: use more workers", (unsigned long long) opts->accelerators, self->expected,
                  (unsigned long long) self->ranks_per_worker);
        return 2;
    }
    /* the workers' connections must fit, and their tables in memory, before
     * anything is listed (a listing can take hours) */
    if (sb_session_check_limits (opts, err, err_size) != 0)
        return 2;
    if (opts->kind != SB_SESSION_CATALOG) {
        self->workers = calloc (self->expected, sizeof (sess_worker_t));
        self->rank_done = calloc (opts->accelerators, 1);
        self->live = sb_live_new (opts->accelerators, sess_silence_limit (wl));
        self->progress = self->live ? sb_progress_new ((sb_progress_mode_t) opts->progress, stderr,
                                                       opts->progress_interval_s, self->live) : NULL;
        if (!self->workers || !self->rank_done || !self->progress) {
            snprintf (err, err_size, "out of memory for %zu workers and %llu ranks", self->expected,
                      (unsigned long long) opts->accelerators);
            return 2;
        }
        sb_metrics_server_begin (opts->metrics);    /* scrapes wait for the loop's renderings */
    }
    self->files = wl->num_files_train;
    if (opts->kind == SB_SESSION_CHECKPOINT) {
        /* the sizes are checked before anything starts */
        if (sb_storage_caps (&wl->storage) & SB_ENGINE_NO_IO) {
            snprintf (err, err_size, "checkpoint: storage.storage_type must be local_fs or s3, not %s",
                      wl->storage.engine);
            return 2;
        }
        sb_ckpt_plan_t probe;
        if (sb_ckpt_plan_init (&probe, &wl->ckpt, opts->accelerators, err, err_size) != 0)
            return 2;
        sb_ckpt_plan_fini (&probe);
    }
    if (opts->kind == SB_SESSION_TRAIN && wl->ckpt.in_train) {
        /* the checkpoints a training run writes, and where */
        sb_ckpt_plan_t probe;
        if (sb_ckpt_plan_init (&probe, &wl->ckpt, opts->accelerators, err, err_size) != 0)
            return 2;
        sb_ckpt_plan_fini (&probe);
        int bad = sess_ckpt_target (self, wl, 0, err, err_size);
        if (bad)
            return bad;
    }
    if (opts->kind == SB_SESSION_TRAIN) {
        /* Check the shard arithmetic before starting anything. */
        sb_shard_plan_t plan;
        char why[256];
        if (sb_shard_plan (wl->num_files_train, wl->num_samples_per_file, opts->accelerators, wl->batch_size, &plan,
                           why, sizeof why) != 0) {
            snprintf (err, err_size, "%s: key 'reader.batch_size': %s", wl->batch_size_origin, why);
            return 2;
        }
        /* the evaluation set, when the workflow evaluates */
        if (wl->do_eval && wl->num_files_eval == 0) {
            snprintf (err, err_size, "workflow.evaluation needs an evaluation set: set dataset.num_files_eval (the"
                      " files under valid/, which datagen writes), or workflow.evaluation=False");
            return 2;
        }
        if (wl->do_eval && sb_shard_plan (wl->num_files_eval, wl->num_samples_per_file, opts->accelerators,
                                          wl->batch_size_eval, &plan, why, sizeof why) != 0) {
            snprintf (err, err_size, "key 'reader.batch_size_eval': the evaluation set (dataset.num_files_eval=%llu): %s",
                      (unsigned long long) wl->num_files_eval, why);
            return 2;
        }
    }

    if (opts->kind != SB_SESSION_CATALOG) {
        int bad = s_bind (self, opts, err, err_size);
        if (bad)
            return bad;
    }
    sb_info ("storage: %s", wl->storage_summary);  /* the engine, and the keys that chose it */
    if (opts->kind != SB_SESSION_CATALOG && opts->kind != SB_SESSION_KVCACHE) {     /* say once where DLIO itself would stop */
        char note[1024];
        for (size_t i = 0; sb_dlio_stop_note (wl, opts->kind == SB_SESSION_TRAIN, i, note, sizeof note); i++)
            sb_warn ("%s", note);
    }
    /* Object storage: every endpoint must answer before anything is listed. */
    unsigned caps = sb_storage_caps (&wl->storage);
    if (caps & SB_ENGINE_OBJECTS) {
        if (sess_key_prefix (wl, self->key_prefix, sizeof self->key_prefix, err, err_size) != 0)
            return 2;
        sb_storage_error_t e;
        self->objects = sess_storage_open (&wl->storage, 4, &e);
        if (!self->objects) {
            snprintf (err, err_size, "%s", e.text);
            return 1;
        }
        const char *source = sb_storage_credentials_source (self->objects);
        if (source && *source) {
            char name[sizeof wl->storage.engine];
            for (size_t i = 0; i < sizeof name; i++)
                name[i] = (char) toupper ((unsigned char) wl->storage.engine[i]);
            sb_info ("%s credentials from %s", name, source);
        }
        if (sess_preflight_own (self, err, err_size) != 0) {
            sb_storage_close (&self->objects);
            return 1;
        }
    }

    /* A local data folder is locked for the session: one datagen at a time,
     * and none while a run reads it (lib/dataset/datafolder.h). */
    if ((caps & SB_ENGINE_FOLDER)
        && (opts->kind == SB_SESSION_TRAIN || opts->kind == SB_SESSION_DATAGEN || opts->kind == SB_SESSION_KVCACHE)
        && sess_folder_lock (self, opts->kind != SB_SESSION_TRAIN, err, err_size) != 0)
        return 1;

    /* Dataset: list once, or generate first. With skip_listing there is no
     * listing: names follow DLIO's convention; the first object tells
     * whether the dataset exists, spot checks after that whether it is whole. */
    int missing = 0;
    if (opts->kind == SB_SESSION_KVCACHE) {
        /* no dataset: kvcache.cache_dir is the folder (or prefix) the ranks
         * write their entries under, each in rank_<r>/ (WELCOME data_root) */
        if (self->objects)
            snprintf (self->catalog_info.prefix, sizeof self->catalog_info.prefix, "%s", self->key_prefix);
        else if (sess_prepare_folder (wl->data_folder, self->catalog_info.prefix, sizeof self->catalog_info.prefix,
                                      err, err_size) != 0)
            return 1;
    }
    else if (opts->kind == SB_SESSION_CHECKPOINT) {
        /* no dataset: the checkpoint folder is the storage (PHASE_START ckpt_root, and WELCOME's data_root);
         * a read-only invocation reads what an earlier one wrote: all of it, checked now */
        int bad = sess_ckpt_target (self, wl, wl->ckpt.num_write == 0 ? wl->ckpt.num_read : 0, err, err_size);
        if (!bad)
            bad = sess_ckpt_space (self, err, err_size);
        if (bad) {
            sb_storage_close (&self->objects);
            return bad;
        }
        snprintf (self->catalog_info.prefix, sizeof self->catalog_info.prefix, "%s", self->ckpt_root);
    }
    else if (wl->skip_listing) {
        if (self->objects)
            snprintf (self->catalog_info.prefix, sizeof self->catalog_info.prefix, "%s", self->key_prefix);
        else if (caps & SB_ENGINE_FOLDER) {
            char real[PATH_MAX];
            if (realpath (wl->data_folder, real))
                snprintf (self->catalog_info.prefix, sizeof self->catalog_info.prefix, "%s/", real);
        }
        self->catalog_info.count = wl->num_files_train;
        sb_dataset_t ds;
        sess_dataset (self, &ds);
        char key[PATH_MAX], why[2048];
        int first = self->catalog_info.prefix[0] || !(caps & SB_ENGINE_FOLDER)
                  ? sess_object_exists (self, &ds, 0, key, sizeof key, why, sizeof why) : 0;
        if (first < 0) {
            snprintf (err, err_size, "dataset.skip_listing: cannot check the first object: %s", why);
            return 1;
        }
        missing = first == 0;
        if (!missing && opts->kind == SB_SESSION_TRAIN && sess_spot_check (self, err, err_size) != 0)
            return 2;
    }
    else if ((caps & SB_ENGINE_NO_IO) && opts->kind != SB_SESSION_CATALOG && !opts->relist)
        sess_derive (self);     /* --relist: list it into a catalog all the same (a listing to measure) */
    else if (sess_list (self, opts->relist, &missing, err, err_size) != 0)
        return 1;
    /* A datagen generates; a run generates only when workflow.generate_data
     * asks (as DLIO), and then not again over a whole dataset of this
     * workload (the generator is deterministic: the same bytes) */
    int synthetic = (caps & SB_ENGINE_NO_IO) != 0;
    int asked = opts->kind == SB_SESSION_DATAGEN || (opts->kind == SB_SESSION_TRAIN && wl->generate_data);
    int short_set = !missing && opts->kind == SB_SESSION_TRAIN && self->catalog_info.count < wl->num_files_train;
    int need_datagen = asked && !synthetic && (opts->kind == SB_SESSION_DATAGEN || missing || short_set);
    if (!need_datagen && !missing && opts->kind == SB_SESSION_TRAIN
        && (self->lock_fd >= 0 || self->read_only || self->objects)) {
        char why[4096];
        if (sess_dataset_check (self, why, sizeof why) != 0) {
            if (!asked) {
                snprintf (err, err_size, "%s", why);
                return 2;
            }
            sb_info ("workflow.generate_data: generating the dataset again: %s", why);
            need_datagen = 1;
        }
        else if (asked && !synthetic)
            sb_info ("workflow.generate_data: the dataset in %s%s is whole and of this workload: not generated again",
                     self->objects ? "s3 prefix " : "", self->objects ? self->key_prefix : wl->data_folder);
    }
    if (opts->kind == SB_SESSION_TRAIN && wl->do_eval && !need_datagen && !missing && !synthetic) {
        /* valid/ listed into its own catalog as train/ is; with
         * skip_listing, as DLIO names it, spot-checked as train/ is */
        sb_dataset_t eds;
        sess_eval_dataset (self, &eds);
        char why[3072];
        int listed = wl->skip_listing ? 0 : sess_list_eval (self, opts->relist, why, sizeof why);
        if (listed < 0) {
            snprintf (err, err_size, "%s", why);
            return 1;
        }
        if (listed > 0 || (wl->skip_listing && sess_check_objects (self, &eds, "evaluation set", why, sizeof why) != 0)) {
            if (!asked) {
                snprintf (err, err_size, "%s: generate the evaluation set with `shardbench datagen` and the same"
                          " workload (dataset.num_files_eval=%llu writes valid/), or run with"
                          " workflow.generate_data=True", why, (unsigned long long) wl->num_files_eval);
                return 2;
            }
            sb_info ("workflow.generate_data: generating the dataset again: %s", why);
            need_datagen = 1;
        }
    }
    if (!need_datagen && missing && !synthetic) {
        snprintf (err, err_size, "no dataset in %s%s (no train/ objects): generate it with `shardbench datagen`"
                  " and the same workload and overrides, or run with workflow.generate_data=True",
                  self->objects ? "s3 prefix " : "", self->objects ? self->key_prefix : wl->data_folder);
        return 2;
    }
    if (!need_datagen && opts->kind != SB_SESSION_CHECKPOINT && opts->kind != SB_SESSION_KVCACHE
        && self->catalog_info.count < wl->num_files_train) {
        snprintf (err, err_size, "%strain holds %llu files but the workload needs dataset.num_files_train=%llu:"
                  " generate it with `shardbench datagen` into an empty folder, or run with"
                  " workflow.generate_data=True, or lower num_files_train",
                  self->catalog_info.prefix, (unsigned long long) self->catalog_info.count,
                  (unsigned long long) wl->num_files_train);
        return 2;
    }
    if (need_datagen && self->objects)
        snprintf (self->catalog_info.prefix, sizeof self->catalog_info.prefix, "%s", self->key_prefix);
    else if (need_datagen && sess_prepare_folder (wl->data_folder, self->catalog_info.prefix,
                                                  sizeof self->catalog_info.prefix, err, err_size) != 0)
        return 1;
    if (need_datagen && (self->lock_fd >= 0 || self->objects)) {
        int refused = self->objects ? sess_objects_datagen_check (self, err, err_size) : sess_datagen_check (self, err, err_size);
        if (refused)
            return refused;
    }

    if (opts->kind == SB_SESSION_CATALOG) {
        if (wl->skip_listing)
            return sess_spot_check (self, err, err_size) == 0 ? 0 : 2;
        if (missing) {
            snprintf (err, err_size, "no dataset under %s%s (nothing to list)", self->objects ? "s3 prefix " : "",
                      self->catalog_info.prefix[0] ? self->catalog_info.prefix : wl->data_folder);
            return 1;
        }
        printf ("catalog %lld: %llu objects, %llu bytes, %s in %.3f s\n", (long long) self->catalog_info.id,
                (unsigned long long) self->catalog_info.count, (unsigned long long) self->catalog_info.bytes,
                self->catalog_info.reused ? "reused" : "listed", self->catalog_info.list_s);
        sb_storage_close (&self->objects);
        return 0;
    }

    /* every worker must see the coordinator's local folder (not one of its own) */
    if ((caps & SB_ENGINE_FOLDER) && self->catalog_info.prefix[0] == '/') {
        int prc = sess_probe_create (self, err, err_size);
        if (prc == -2) {    /* a read-only dataset: nothing to write a probe with */
            sb_warn ("%s: whether every worker sees this folder is not checked", err);
            err[0] = '\0';
        }
        else if (prc != 0)
            return 1;
    }

    if (opts->nhosts || opts->local_workers) {
        /* --slurm: one srun step; --hosts: ssh per host; --local: fork */
        int rc = -1;
        if (!(self->launcher = sb_launcher_new (opts->worker_path)))
            snprintf (err, err_size, "out of memory");
        else if (opts->nhosts && opts->slurm)
            rc = sb_launcher_start_srun (self->launcher, opts->hosts, opts->nhosts, opts->srun_cmd, opts->remote_worker,
                                         self->endpoint, wl->heartbeat_timeout_s, opts->keys_dir, err, err_size);
        else if (opts->nhosts)
            rc = sb_launcher_start_ssh (self->launcher, opts->hosts, opts->nhosts, opts->ssh_cmd, opts->remote_worker,
                                        self->endpoint, wl->heartbeat_timeout_s, opts->keys_dir, err, err_size);
        else
            rc = sb_launcher_start (self->launcher, opts->local_workers, self->endpoint, wl->heartbeat_timeout_s,
                                    opts->keys_dir, err, err_size);
        if (rc != 0)
            goto done;
    }
    else
        sb_info ("waiting for %zu workers: start `shardbench-worker --coordinator %s%s%s` on each node%s",
                 self->expected, self->endpoint, opts->keys_dir ? " --keys " : "", opts->keys_dir ? opts->keys_dir : "",
                 opts->keys_dir ? " (CURVE: copy coordinator.cert and a worker certificate there)" : "");

    /* heartbeats go on while a run's first row waits for the writer */
    sb_resultdb_set_keep_alive (opts->db, sess_keep_alive_db, self);
    char what[128];
    snprintf (what, sizeof what, "waiting for %zu workers to join %s", self->expected, self->endpoint);
    sess_admit_held (self);     /* the HELLOs that came while the dataset was listed */
    if (sess_pump_until (self, sess_all_joined, opts->join_timeout_s, what) != 0)
        goto done;
    sess_barrier_tree_send (self);  /* the relays are known once all joined */
    if (self->preflight) {
        sess_fail (self, "preflight failed: some workers cannot use their storage:\n  %-20s %-28s %s\n%s",
                   "host", "endpoint", "cause", self->preflight);
        goto done;
    }

    if (need_datagen) {
        if (sess_phase_datagen (self) != 0) {
            *run_id = self->run_id;
            goto done;
        }
        if (opts->kind == SB_SESSION_TRAIN && wl->skip_listing) {
            if (sess_spot_check (self, err, err_size) != 0) {
                sess_fail (self, "%s", err);
                goto done;
            }
        }
        else if (opts->kind == SB_SESSION_TRAIN || (self->objects && !wl->skip_listing)) {
            /* an object store has no change marker: list what was written,
             * so that the next run reuses a current catalog */
            if (sess_list (self, 1, &missing, err, err_size) != 0) {
                sess_fail (self, "%s", err);
                goto done;
            }
            if (self->catalog_info.count < wl->num_files_train) {
                sess_fail (self, "after generation %strain holds %llu files, expected %llu", self->catalog_info.prefix,
                           (unsigned long long) self->catalog_info.count, (unsigned long long) wl->num_files_train);
                goto done;
            }
            /* and valid/, which the same datagen wrote, for the evaluations */
            if (opts->kind == SB_SESSION_TRAIN && wl->do_eval && !synthetic
                && sess_list_eval (self, 1, err, err_size) != 0) {
                sess_fail (self, "after generation: %s", err);
                goto done;
            }
        }
    }
    if (opts->kind == SB_SESSION_TRAIN)
        sess_phase_train (self);
    else if (opts->kind == SB_SESSION_CHECKPOINT)
        sess_phase_checkpoint (self);
    else if (opts->kind == SB_SESSION_KVCACHE)
        sess_phase_kvcache (self);
    *run_id = self->run_id;
    exit_code = self->failed ? 1 : 0;

done:
    if (self->failed)   /* the first cause, also over what err held */
        snprintf (err, err_size, "%s", self->failure);
    if (self->router)
        sess_shutdown_workers (self);
    if (self->rejected_frames)
        sb_warn ("%llu malformed or unexpected frames were rejected", (unsigned long long) self->rejected_frames);
    sb_progress_destroy (&self->progress);
    if (self->live)     /* the final figures, as recorded: every later scrape's */
        sb_metrics_server_end (opts->metrics, self->live, sb_now ());
    sb_live_destroy (&self->live);
    sb_launcher_destroy (&self->launcher);
    sb_catalog_reader_destroy (&self->catalog);
    sb_catalog_reader_destroy (&self->eval_catalog);
    sb_storage_close (&self->objects);
    free (self->preflight);
    sb_sampler_destroy (&self->sampler);
    sb_sampler_destroy (&self->eval_sampler);
    zpoller_destroy (&self->poller);
    zsock_destroy (&self->router);
    zactor_destroy (&self->auth);
    for (size_t i = 0; i < self->nworkers; i++) {
        zframe_destroy (&self->workers[i].identity);
        free (self->workers[i].cpuinfo);
        free (self->workers[i].meminfo);
    }
    free (self->workers);
    self->workers = NULL;
    free (self->by_identity);
    self->by_identity = NULL;
    free (self->rank_done);
    self->rank_done = NULL;
    sb_ckpt_plan_fini (&self->ckpt);
    free (self->ckpt_steps);
    free (self->ckpt_arrived);
    free (self->ckpt_rank_next);
    self->ckpt_steps = self->ckpt_arrived = self->ckpt_rank_next = NULL;
    sb_resultdb_set_keep_alive (opts->db, NULL, NULL);
    if (*run_id < 0)
        *run_id = self->run_id;
    return exit_code;
}

/* s_workflow_kind's kind for train false with generate_data and checkpoint
 * true: two runs, datagen then checkpoint */
#define S_DATAGEN_THEN_CHECKPOINT 100


/* What `shardbench run` does, from the workflow section as DLIO's main.py
 * and LoadConfig read it: train (default), generating the dataset first
 * only with workflow.generate_data; with workflow.train false, generate only
 * (generate_data), the checkpoint workflow (checkpoint), or both in turn.
 * `datagen`, `checkpoint` and `catalog` are what they say, whatever the
 * section says. Returns the kind to run, or -1 with err (a usage error:
 * exit 2). */
static int
s_workflow_kind (const sb_session_opts_t *o, char *err, size_t err_size)
{
    const sb_workload_t *wl = o->wl;
    if (o->kind != SB_SESSION_TRAIN || wl->do_train)
        return (int) o->kind;
    if (wl->do_checkpoint && wl->generate_data) {
        if (o->remote_workers) {
            /* workers started elsewhere serve one command */
            snprintf (err, err_size, "workflow: train false with both generate_data and checkpoint true runs two"
                      " commands, which workers started with --workers cannot both serve: generate the dataset"
                      " with `shardbench datagen`, then run the checkpoint workflow with"
                      " workflow.generate_data=False (or `shardbench checkpoint`)");
            return -1;
        }
        sb_info ("workflow: train false, generate_data and checkpoint true: generate the dataset, then the"
                 " checkpoint workflow (as DLIO's main.py)");
        return S_DATAGEN_THEN_CHECKPOINT;
    }
    if (wl->do_checkpoint) {
        sb_info ("workflow: train false, checkpoint true: the checkpoint workflow (as `shardbench checkpoint`)");
        return SB_SESSION_CHECKPOINT;
    }
    if (wl->generate_data) {
        sb_info ("workflow: train false, generate_data true: generate the dataset only (as `shardbench datagen`)");
        return SB_SESSION_DATAGEN;
    }
    snprintf (err, err_size, "workflow: train, generate_data and checkpoint are all false: nothing to run (set"
              " workflow.train=True, workflow.generate_data=True or workflow.checkpoint=True)");
    return -1;
}

/* One command of the kind the workflow chose. */
static int
s_run_kind (const sb_session_opts_t *opts_in, sb_session_kind_t kind, int64_t *run_id, char *err, size_t err_size)
{
    sb_session_opts_t eff = *opts_in;
    eff.kind = kind;
    const sb_session_opts_t *opts = &eff;
    sess_t s = { .o = opts, .run_id = -1, .lock_fd = -1 };
    if (opts->kind == SB_SESSION_DATAGEN && opts->dry_run) {
        *run_id = -1;
        return sess_dry_run (&s, err, err_size);
    }
    int rc = s_session_run (&s, opts, run_id, err, err_size);
    /* what the early returns (before the event loop) leave */
    if (s.failed)
        snprintf (err, err_size, "%s", s.failure);     /* the first cause (a worker of another version) */
    if (s.nheld) {
        char why[1024];
        snprintf (why, sizeof why, "the coordinator stopped before admitting workers: %s", err);
        sess_release_held (&s, why);
    }
    zpoller_destroy (&s.poller);
    zsock_destroy (&s.router);
    zactor_destroy (&s.auth);
    sess_folder_release (&s);
    free (s.workers);
    free (s.rank_done);
    free (s.dlio_au);
    free (s.dlio_tput);
    free (s.eval_au);
    free (s.eval_tput);
    sb_progress_destroy (&s.progress);
    if (s.live)         /* an early return: the figures as they are */
        sb_metrics_server_end (opts->metrics, s.live, sb_now ());
    sb_live_destroy (&s.live);
    sb_storage_close (&s.objects);     /* also wipes the client's credentials */
    return rc;
}

int
sb_session_run (const sb_session_opts_t *opts_in, int64_t *run_id, char *err, size_t err_size)
{
    err[0] = '\0';
    *run_id = -1;
    int kind = s_workflow_kind (opts_in, err, err_size);
    if (kind < 0)
        return 2;
    int rc;
    if (kind == S_DATAGEN_THEN_CHECKPOINT) {
        /* DLIO's generate_data with checkpoint_only: the dataset, then the
         * checkpoints, each its own run row (runs.workflow) */
        rc = s_run_kind (opts_in, SB_SESSION_DATAGEN, run_id, err, err_size);
        if (rc == 0 && !s_caught && !opts_in->dry_run) {
            sb_info ("workflow: datagen run %lld done; the checkpoint workflow follows", (long long) *run_id);
            rc = s_run_kind (opts_in, SB_SESSION_CHECKPOINT, run_id, err, err_size);
        }
    }
    else
        rc = s_run_kind (opts_in, (sb_session_kind_t) kind, run_id, err, err_size);
    if (!s_caught)
        return rc;
    /* stopped by a signal, in whatever phase: say so first (a request it
     * cut short says "interrupted by a signal" further on), exit 128 + N */
    if (strncmp (err, "interrupted by ", 15) != 0) {
        char why[1024];
        snprintf (why, sizeof why, "%s", err);
        snprintf (err, err_size, "interrupted by %s%s%s", sess_signal_name (), why[0] ? ": " : "", why);
    }
    return 128 + s_caught;
}
