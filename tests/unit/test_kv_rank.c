/* kv_rank (worker/kvcache/kv_rank.c): one rank's KV-cache trial on local
 * files, driven as the rank actor drives it, its messages collected.
 * - the user set equals the reference's generate_mixed_users under
 *   random.seed(seed + rank) (tests/unit/test_kv_rank.py draws it with the
 *   system's python3; with SB_KV_REFERENCE set to the reference's
 *   kv_cache_benchmark/ folder, the reference's own function must agree),
 *   user by user, and KV_READY's counts by type and QoS class are its counts,
 *   its probe line the storage check's;
 * - a 1.5 s trial of 2 users (tiny-1b): KV_READY, STATS, KV_RESULT, RANK_DONE
 *   in that order; requests = the sum by type = the sum by QoS class =
 *   RANK_DONE samples; every write is a prefill write, every read a hit and a
 *   decode read; the folder holds exactly the storage entries, each a .npy
 *   numpy loads with np.save's header for its shape, a body of T x 24576
 *   bytes adding up to the storage tier's written bytes, no two blocks alike;
 *   the results JSON has the reference's keys in its order, json.dump's
 *   text, and bandwidths = bytes / 2^30 / the window;
 * - the same with a CPU tier (demotions to files) and O_DIRECT;
 * - a small storage tier: files deleted least recently used first, never more
 *   than the capacity left;
 * - on an object store (tests/integration/test_kv_rank_s3.sh): the objects;
 * - floats written as Python's repr writes them;
 * - a bad setting: ERROR naming the nearest key, nothing else;
 * - stop() saying 1 in the window: the rank returns and sends nothing more.
 * No timing is asserted. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "engine.h"
#include "kv_json.h"
#include "kv_rank.h"
#include "kv_stats.h"
#include "kv_users.h"
#include "proto.h"

#define S_MAX_MSGS 4096

static char s_dir[PATH_MAX];            /* the test's folder (data_root), '/'-ended */

/* what the rank sent */
static int s_types[S_MAX_MSGS], s_nmsgs;
static uint64_t s_ready_type[3], s_ready_qos[3], s_ready_rank, s_ready_trial;
static char s_ready_probe[2048];
static int s_errors;
static char s_err_op[64], s_err_msg[2048];
static uint64_t s_req, s_by_type[3], s_by_qos[3], s_ops[SB_KV_OP_COUNT], s_tier[4], s_res_trial, s_res_rank;
static size_t s_nops, s_ntier, s_nwrite_device;
static double s_elapsed;
static char *s_json;
static uint64_t s_done_samples, s_done_bytes, s_done_epoch, s_stats_samples;

static void
s_copy (uint64_t *to, const sb_u64s_t *v, size_t max)
{
    for (size_t i = 0; i < v->count && i < max; i++)
        to[i] = v->items[i];
}

static int
s_capture (void *ctx, const sb_msg_t *m)
{
    (void) ctx;
    if (s_nmsgs < S_MAX_MSGS)
        s_types[s_nmsgs++] = m->type;
    switch (m->type) {
    case SB_MSG_KV_READY:
        s_ready_rank = m->u.kv_ready.rank;
        s_ready_trial = m->u.kv_ready.trial;
        ck_assert_uint_eq (m->u.kv_ready.users_by_type.count, 3);
        ck_assert_uint_eq (m->u.kv_ready.users_by_qos.count, 3);
        s_copy (s_ready_type, &m->u.kv_ready.users_by_type, 3);
        s_copy (s_ready_qos, &m->u.kv_ready.users_by_qos, 3);
        snprintf (s_ready_probe, sizeof s_ready_probe, "%s", m->u.kv_ready.probe);
        break;
    case SB_MSG_ERROR:
        if (!s_errors++) {
            snprintf (s_err_op, sizeof s_err_op, "%s", m->u.error.op);
            snprintf (s_err_msg, sizeof s_err_msg, "%s", m->u.error.message);
        }
        break;
    case SB_MSG_KV_RESULT: {
        const sb_msg_kv_result_t *k = &m->u.kv_result;
        s_res_rank = k->rank;
        s_res_trial = k->trial;
        s_req = k->requests;
        s_elapsed = k->elapsed_s;
        s_copy (s_by_type, &k->requests_by_type, 3);
        s_copy (s_by_qos, &k->requests_by_qos, 3);
        s_nops = k->ops.count;
        s_copy (s_ops, &k->ops, SB_KV_OP_COUNT);
        s_ntier = k->tier_bytes.count;
        s_copy (s_tier, &k->tier_bytes, 4);
        s_nwrite_device = k->write_device.count;
        free (s_json);
        s_json = strdup (k->results_json);
        break;
    }
    case SB_MSG_RANK_DONE:
        s_done_samples = m->u.rank_done.samples;
        s_done_bytes = m->u.rank_done.bytes;
        s_done_epoch = m->u.rank_done.epoch;
        break;
    case SB_MSG_STATS:
        s_stats_samples += m->u.stats.samples;
        break;
    default:
        break;
    }
    return 0;
}

static int s_go_answer;
static int
s_go (void *arg, uint64_t trial)
{
    (void) arg;
    ck_assert_uint_eq (trial, 7);
    return s_go_answer;
}

static int s_stop_after = -1, s_stop_calls;
static int
s_stop (void *arg)
{
    (void) arg;
    return s_stop_after >= 0 && s_stop_calls++ >= s_stop_after;
}

static void
s_setup (void)
{
    const char *base = getenv ("SB_TEST_BUILD_DIR");
    char tmpl[PATH_MAX];
    snprintf (tmpl, sizeof tmpl, "%s/sb-kv-rank.XXXXXX", base && *base ? base : ".");
    ck_assert_ptr_nonnull (mkdtemp (tmpl));
    snprintf (s_dir, sizeof s_dir, "%s/", tmpl);
    s_nmsgs = s_errors = 0;
    s_err_op[0] = s_err_msg[0] = '\0';
    s_req = s_done_samples = s_done_bytes = s_done_epoch = s_stats_samples = 0;
    s_stop_after = -1;
    s_stop_calls = 0;
    free (s_json);
    s_json = NULL;
}

static void
s_teardown (void)
{
    sb_check_remove_tree (s_dir);
}

/* Run the rank with settings kv (NULL-terminated) on storage (NULL: files
 * under s_dir) with data root root. */
static void
s_run_on (uint64_t rank, const char *const *kv, const sb_storage_cfg_t *storage, const char *root)
{
    sb_msg_welcome_t w;
    memset (&w, 0, sizeof w);
    w.ranks = w.total_ranks = 4;
    w.data_root = (char *) root;
    w.io_buffer = 1 << 20;
    sb_storage_cfg_t st;
    memset (&st, 0, sizeof st);
    snprintf (st.engine, sizeof st.engine, "file");
    if (storage)
        st = *storage;
    sb_interval_t interval = { .next = 0 };
    sb_sender_t out = { s_capture, NULL };
    sb_kv_rank_t r = { .cfg = &w, .storage = &st, .rank = rank, .out = &out, .interval = &interval,
                       .stop = s_stop, .wait_go = s_go };
    size_t n = 0;
    while (kv[n])
        n++;
    sb_msg_phase_start_t ps;
    memset (&ps, 0, sizeof ps);
    ps.phase = "kvcache";
    ps.epoch = 7;
    ps.kv = (sb_strs_t) { .count = n, .items = (char **) kv };
    sb_kv_rank_run (&r, &ps);
}

static void
s_run (uint64_t rank, const char *const *kv)
{
    s_run_on (rank, kv, NULL, s_dir);
}

/* Run tests/unit/test_kv_rank.py with args; its output into out (size), its exit status returned. */
static int
s_python (const char *args, char *out, size_t size)
{
    const char *src = getenv ("SB_SOURCE_ROOT");
    char cmd[PATH_MAX * 3];
    snprintf (cmd, sizeof cmd, "/usr/bin/python3 '%s/tests/unit/test_kv_rank.py' %s", src ? src : ".", args);
    FILE *p = popen (cmd, "r");
    ck_assert_ptr_nonnull (p);
    size_t len = fread (out, 1, size - 1, p);
    out[len] = '\0';
    int st = pclose (p);
    return WIFEXITED (st) ? WEXITSTATUS (st) : -1;
}

/* The user set, user by user, equals the reference's draws. */
START_TEST (test_users)
{
    static const uint64_t seeds[] = { 42, 43, 1000 };
    static char want[1 << 16], got[1 << 16];
    for (size_t s = 0; s < 3; s++) {
        char args[PATH_MAX];
        const char *ref = getenv ("SB_KV_REFERENCE");
        snprintf (args, sizeof args, "users %llu 300 %s", (unsigned long long) seeds[s], ref && *ref ? ref : "");
        ck_assert_int_eq (s_python (args, want, sizeof want), 0);
        sb_kv_rng_t rng;
        pthread_mutex_init (&rng.lock, NULL);
        sb_py_seed_u64 (&rng.r, seeds[s]);
        sb_kv_user_t users[300];
        sb_kv_users_make (&rng, 300, users);
        size_t at = 0;
        for (size_t i = 0; i < 300; i++) {
            char think[64];
            sb_kv_pyfloat (users[i].think, think, sizeof think);
            at += (size_t) snprintf (got + at, sizeof got - at, "%s %s %llu %llu %s\n", sb_kv_type_names[users[i].type],
                                     sb_kv_qos_names[users[i].qos], (unsigned long long) users[i].context,
                                     (unsigned long long) users[i].generation, think);
            char id[24];
            snprintf (id, sizeof id, "user_%04zu", i);
            ck_assert_str_eq (users[i].id, id);
        }
        pthread_mutex_destroy (&rng.lock);
        ck_assert_str_eq (got, want);
    }
}
END_TEST

/* Floats in the results JSON are written as Python's repr writes them. */
START_TEST (test_pyfloat)
{
    static const double v[] = { 0.0, -0.0, 1.0, -2.5, 0.1, 1e-4, 1e-5, 1.5e-7, 123456789.125, 1e15, 1e16, 1.5e16,
                                9007199254740993.0, 1.7976931348623157e308, 5e-324, 2.0 / 3.0, 1e22, 0.000123456,
                                638.8536669983296, 100.0, 1e-300 };
    size_t n = sizeof v / sizeof *v;
    char args[4096], want[4096], got[4096];
    size_t at = (size_t) snprintf (args, sizeof args, "repr");
    for (size_t i = 0; i < n; i++)
        at += (size_t) snprintf (args + at, sizeof args - at, " %a", v[i]);
    ck_assert_int_eq (s_python (args, want, sizeof want), 0);
    at = 0;
    for (size_t i = 0; i < n; i++) {
        char t[64];
        sb_kv_pyfloat (v[i], t, sizeof t);
        at += (size_t) snprintf (got + at, sizeof got - at, "%s\n", t);
    }
    ck_assert_str_eq (got, want);
}
END_TEST

/* KV_READY's counts are the user set's (seed 40 + rank 2 = 42); GO refused: nothing else. */
START_TEST (test_ready_counts)
{
    static char want[1 << 16];
    ck_assert_int_eq (s_python ("users 42 300", want, sizeof want), 0);
    uint64_t type[3] = { 0 }, qos[3] = { 0 };
    for (char *line = strtok (want, "\n"); line; line = strtok (NULL, "\n")) {
        type[strncmp (line, "chatbot", 7) == 0 ? 0 : strncmp (line, "coding", 6) == 0 ? 1 : 2]++;
        qos[strstr (line, " interactive ") ? 0 : strstr (line, " responsive ") ? 1 : 2]++;
    }
    s_go_answer = -1;
    const char *kv[] = { "kvcache.model=tiny-1b", "kvcache.users=300", "kvcache.seed=40", "kvcache.duration_s=1",
                         "kvcache.verify_storage=1", NULL };
    s_run (2, kv);
    ck_assert_int_eq (s_errors, 0);
    ck_assert_int_eq (s_nmsgs, 1);
    ck_assert_int_eq (s_types[0], SB_MSG_KV_READY);
    ck_assert_uint_eq (s_ready_rank, 2);
    ck_assert_uint_eq (s_ready_trial, 7);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq (s_ready_type[i], type[i]);
        ck_assert_uint_eq (s_ready_qos[i], qos[i]);
    }
    ck_assert_uint_eq (type[0] + type[1] + type[2], 300);
    printf ("probe: %s\n", s_ready_probe);
    /* the storage check ran on the folder and said what it measured (OK here, or UNVERIFIABLE where the
     * folder has no block device of its own) */
    ck_assert_msg (strncmp (s_ready_probe, "OK: ", 4) == 0 || strncmp (s_ready_probe, "UNVERIFIABLE: ", 14) == 0,
                   "%s", s_ready_probe);
}
END_TEST

/* A short trial on files: the messages, their counts and the files. */
START_TEST (test_trial)
{
    s_go_answer = 0;
    /* seed 50 + rank 1: two chatbot users (short think times, entries of at most 68 MB) */
    const char *kv[] = { "kvcache.model=tiny-1b", "kvcache.users=2", "kvcache.seed=50", "kvcache.duration_s=1.5",
                         "kvcache.generation_mode=none", "kvcache.cpu_mem_gb=0", "kvcache.verify_storage=0",
                         "kvcache.max_concurrent_allocs=1", NULL };
    s_run (1, kv);
    ck_assert_msg (s_errors == 0, "%s: %s", s_err_op, s_err_msg);
    /* KV_READY first, STATS, then KV_RESULT and RANK_DONE last */
    ck_assert_int_ge (s_nmsgs, 3);
    ck_assert_int_eq (s_types[0], SB_MSG_KV_READY);
    ck_assert_int_eq (s_types[s_nmsgs - 2], SB_MSG_KV_RESULT);
    ck_assert_int_eq (s_types[s_nmsgs - 1], SB_MSG_RANK_DONE);
    for (int i = 1; i < s_nmsgs - 2; i++)
        ck_assert_int_eq (s_types[i], SB_MSG_STATS);
    ck_assert_uint_eq (s_ready_type[0], 2);
    ck_assert_uint_eq (s_ready_qos[2], 2);        /* both batch */
    ck_assert_uint_eq (s_res_rank, 1);
    ck_assert_uint_eq (s_res_trial, 7);
    ck_assert_uint_eq (s_done_epoch, 7);
    /* requests */
    ck_assert_uint_eq (s_by_type[0] + s_by_type[1] + s_by_type[2], s_req);
    ck_assert_uint_eq (s_by_qos[0] + s_by_qos[1] + s_by_qos[2], s_req);
    ck_assert_uint_eq (s_by_type[0], s_req);       /* both users are chatbots */
    ck_assert_uint_eq (s_done_samples, s_req);
    ck_assert_uint_eq (s_stats_samples, s_req);
    /* operations */
    ck_assert_uint_eq (s_nops, SB_KV_OP_COUNT);
    ck_assert_uint_eq (s_ntier, 4);
    ck_assert_uint_eq (s_ops[SB_KV_OP_WRITE_OPERATIONS], s_ops[SB_KV_OP_PREFILL_WRITES]);
    ck_assert_uint_eq (s_ops[SB_KV_OP_READ_OPERATIONS], s_ops[SB_KV_OP_CACHE_HITS]);
    ck_assert_uint_eq (s_ops[SB_KV_OP_DECODE_READS], s_ops[SB_KV_OP_READ_OPERATIONS]);
    ck_assert_uint_eq (s_ops[SB_KV_OP_OFFLOADS_STORAGE], s_ops[SB_KV_OP_STORAGE_ENTRIES]);
    ck_assert_uint_eq (s_ops[SB_KV_OP_CPU_ENTRIES], 0);
    ck_assert_uint_eq (s_ops[SB_KV_OP_OFFLOADS_CPU], 0);
    ck_assert_uint_eq (s_ops[SB_KV_OP_EVICTIONS], 0);
    ck_assert_uint_eq (s_tier[2], 0);
    ck_assert_uint_eq (s_tier[3], 0);
    ck_assert_uint_eq (s_done_bytes, s_tier[0] + s_tier[1]);
    ck_assert_uint_eq (s_nwrite_device, s_ops[SB_KV_OP_OFFLOADS_STORAGE] ? 6 : 0);
    printf ("trial: %llu requests, %llu entries, %llu bytes written, %llu read, %llu reads, %.3f s\n",
            (unsigned long long) s_req, (unsigned long long) s_ops[SB_KV_OP_STORAGE_ENTRIES],
            (unsigned long long) s_tier[0], (unsigned long long) s_tier[1],
            (unsigned long long) s_ops[SB_KV_OP_READ_OPERATIONS], s_elapsed);
    /* the files: the storage entries, numpy's .npy each, their bodies the bytes written */
    char args[PATH_MAX + 128], out[4096];
    snprintf (args, sizeof args, "entries '%srank_1' %llu %llu", s_dir,
              (unsigned long long) s_ops[SB_KV_OP_STORAGE_ENTRIES], (unsigned long long) s_tier[0]);
    ck_assert_msg (s_python (args, out, sizeof out) == 0, "%s", out);
    /* the results JSON */
    char path[PATH_MAX];
    snprintf (path, sizeof path, "%sresults.json", s_dir);
    FILE *f = fopen (path, "w");
    ck_assert_ptr_nonnull (f);
    ck_assert_ptr_nonnull (s_json);
    ck_assert_int_eq (fputs (s_json, f) >= 0, 1);
    ck_assert_int_eq (fclose (f), 0);
    char elapsed[64];
    sb_kv_pyfloat (s_elapsed, elapsed, sizeof elapsed);
    snprintf (args, sizeof args, "json '%s' %llu %s %llu %llu batch", path, (unsigned long long) s_req, elapsed,
              (unsigned long long) s_tier[1], (unsigned long long) s_tier[0]);
    ck_assert_msg (s_python (args, out, sizeof out) == 0, "%s", out);
}
END_TEST

/* A CPU tier of 72 MiB (every entry of these users fits, two rarely): entries go there, older ones are demoted
 * to storage (an eviction each: read from the CPU tier, written and fsync'ed
 * to a file) as the tier passes 80%; the files are still the storage entries.
 * With kvcache.odirect: every file written and read with O_DIRECT. */
START_TEST (test_cpu_tier)
{
    s_go_answer = 0;
    const char *kv[] = { "kvcache.model=tiny-1b", "kvcache.users=2", "kvcache.seed=50", "kvcache.duration_s=1.5",
                         "kvcache.generation_mode=none", "kvcache.cpu_mem_gb=0.0703125", "kvcache.verify_storage=0",
                         "kvcache.odirect=1",
                         NULL };
    s_run (1, kv);
    ck_assert_msg (s_errors == 0, "%s: %s", s_err_op, s_err_msg);
    ck_assert_int_eq (s_types[s_nmsgs - 1], SB_MSG_RANK_DONE);
    printf ("cpu tier: %llu requests, %llu cpu entries, %llu storage entries, %llu evictions, %llu B to cpu, %llu B"
            " read from cpu\n", (unsigned long long) s_req, (unsigned long long) s_ops[SB_KV_OP_CPU_ENTRIES],
            (unsigned long long) s_ops[SB_KV_OP_STORAGE_ENTRIES], (unsigned long long) s_ops[SB_KV_OP_EVICTIONS],
            (unsigned long long) s_tier[2], (unsigned long long) s_tier[3]);
    /* every entry counted is in one tier */
    ck_assert_uint_eq (s_ops[SB_KV_OP_CPU_ENTRIES] + s_ops[SB_KV_OP_STORAGE_ENTRIES],
                       s_ops[SB_KV_OP_OFFLOADS_CPU] + s_ops[SB_KV_OP_OFFLOADS_STORAGE] - s_ops[SB_KV_OP_EVICTIONS]);
    /* (how many writes end within the window depends on the machine's speed: no count of them is asserted) */
    ck_assert_uint_eq (s_ops[SB_KV_OP_WRITE_OPERATIONS], s_ops[SB_KV_OP_PREFILL_WRITES]);
    ck_assert_uint_eq (s_done_bytes, s_tier[0] + s_tier[1]);
    char args[PATH_MAX + 128], out[4096];
    snprintf (args, sizeof args, "entries '%srank_1' %llu -1", s_dir,
              (unsigned long long) s_ops[SB_KV_OP_STORAGE_ENTRIES]);
    ck_assert_msg (s_python (args, out, sizeof out) == 0, "%s", out);
    char path[PATH_MAX], elapsed[64];
    snprintf (path, sizeof path, "%sresults.json", s_dir);
    FILE *f = fopen (path, "w");
    ck_assert_ptr_nonnull (f);
    ck_assert_int_eq (fputs (s_json, f) >= 0, 1);
    ck_assert_int_eq (fclose (f), 0);
    sb_kv_pyfloat (s_elapsed, elapsed, sizeof elapsed);
    snprintf (args, sizeof args, "json '%s' %llu %s %llu %llu batch", path, (unsigned long long) s_req, elapsed,
              (unsigned long long) s_tier[1], (unsigned long long) s_tier[0]);
    ck_assert_msg (s_python (args, out, sizeof out) == 0, "%s", out);
}
END_TEST

/* A storage tier of 0.08 GiB (86 MB; an entry of these users is 17 to 68
 * MB) and one allocation at a time: the least recently used files are
 * deleted to make room, so the files left never hold more than the capacity;
 * they are the storage entries. */
START_TEST (test_capacity)
{
    s_go_answer = 0;
    const char *kv[] = { "kvcache.model=tiny-1b", "kvcache.users=2", "kvcache.seed=50", "kvcache.duration_s=1.5",
                         "kvcache.generation_mode=none", "kvcache.cpu_mem_gb=0", "kvcache.verify_storage=0",
                         "kvcache.storage_capacity_gb=0.08", "kvcache.max_concurrent_allocs=1", NULL };
    s_run (1, kv);
    ck_assert_msg (s_errors == 0, "%s: %s", s_err_op, s_err_msg);
    ck_assert_int_eq (s_types[s_nmsgs - 1], SB_MSG_RANK_DONE);
    printf ("capacity: %llu requests, %llu writes, %llu storage entries, %llu evictions\n", (unsigned long long) s_req,
            (unsigned long long) s_ops[SB_KV_OP_OFFLOADS_STORAGE], (unsigned long long) s_ops[SB_KV_OP_STORAGE_ENTRIES],
            (unsigned long long) s_ops[SB_KV_OP_EVICTIONS]);
    /* an entry written is still there or was evicted (one more evicted uncounted after the window, at most) */
    ck_assert_uint_le (s_ops[SB_KV_OP_STORAGE_ENTRIES], s_ops[SB_KV_OP_OFFLOADS_STORAGE] - s_ops[SB_KV_OP_EVICTIONS]);
    char args[PATH_MAX + 128], out[4096];
    snprintf (args, sizeof args, "entries '%srank_1' %llu -1 %llu", s_dir,
              (unsigned long long) s_ops[SB_KV_OP_STORAGE_ENTRIES], (unsigned long long) (0.08 * 1073741824.0));
    ck_assert_msg (s_python (args, out, sizeof out) == 0, "%s", out);
}
END_TEST

/* On an object store ($S3_ENDPOINTS and $S3_BUCKET: the integration test
 * test_kv_rank_s3.sh starts s3rver): entries are objects rank_<r>/<key>.npy
 * under the run's prefix, as many as the storage entries, each the header
 * and body of its .npy (the sizes add up to the bytes written); an object
 * left there before is removed first. */
typedef struct {
    uint64_t n, bytes, other;
} s_listed_t;

static int
s_listed (void *ctx, const char *key, size_t len, uint64_t size)
{
    s_listed_t *l = ctx;
    if (len > 4 && memcmp (key + len - 4, ".npy", 4) == 0) {
        l->n++;
        l->bytes += size;
    }
    else
        l->other++;
    return 0;
}

static void
s_zeros (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    (void) ctx;
    (void) offset;
    memset (buf, 0, len);
}

START_TEST (test_objects)
{
    const char *eps = getenv ("S3_ENDPOINTS");
    const sb_engine_ops_t *ops = sb_engine_find ("s3");
    if (!eps || !*eps || !ops) {
        printf ("objects skipped: %s\n", ops ? "no S3_ENDPOINTS (tests/integration/test_kv_rank_s3.sh sets it)"
                                             : "this build has no s3 engine");
        return;
    }
    sb_storage_cfg_t st;
    memset (&st, 0, sizeof st);
    snprintf (st.engine, sizeof st.engine, "s3");
    snprintf (st.store, sizeof st.store, "%s", getenv ("S3_BUCKET") ? getenv ("S3_BUCKET") : "sbtest");
    snprintf (st.endpoints[0], sizeof st.endpoints[0], "%s", eps);
    st.nendpoints = 1;
    st.max_in_flight = 4;
    st.connect_timeout_s = 2;
    st.request_timeout_s = 20;
    st.max_retries = 1;
    char err[512], root[128];
    ck_assert_msg (ops->configure (&st, &(sb_engine_setup_t) { .scheme = ops->schemes[0] }, err, sizeof err) == 0,
                   "%s", err);
    snprintf (root, sizeof root, "kv-rank-%d/", (int) getpid ());
    /* an entry of an earlier run: removed before the trial */
    sb_storage_open_t how = { .root = "", .rank = 1, .depth = 1, .buffer_bytes = 1 << 20 };
    sb_storage_error_t e;
    sb_storage_t *client = sb_storage_open (&st, &how, &e);
    ck_assert_msg (client != NULL, "%s", e.text);
    char old[256];
    snprintf (old, sizeof old, "%srank_1/conv_old_turn_1.npy", root);
    ck_assert_msg (sb_storage_put (client, old, 100, s_zeros, NULL, 0, &e) == 0, "%s", e.text);
    s_go_answer = 0;
    const char *kv[] = { "kvcache.model=tiny-1b", "kvcache.users=2", "kvcache.seed=50", "kvcache.duration_s=1.5",
                         "kvcache.generation_mode=none", "kvcache.cpu_mem_gb=0", NULL };
    s_run_on (1, kv, &st, root);
    ck_assert_msg (s_errors == 0, "%s: %s", s_err_op, s_err_msg);
    ck_assert_int_eq (s_types[s_nmsgs - 1], SB_MSG_RANK_DONE);
    ck_assert_msg (strncmp (s_ready_probe, "UNVERIFIABLE: ", 14) == 0, "%s", s_ready_probe);
    printf ("objects: %llu requests, %llu entries, %llu bytes written, %llu read\n", (unsigned long long) s_req,
            (unsigned long long) s_ops[SB_KV_OP_STORAGE_ENTRIES], (unsigned long long) s_tier[0],
            (unsigned long long) s_tier[1]);
    ck_assert_uint_eq (s_ops[SB_KV_OP_OFFLOADS_STORAGE], s_ops[SB_KV_OP_STORAGE_ENTRIES]);
    ck_assert_uint_eq (s_ops[SB_KV_OP_READ_OPERATIONS], s_ops[SB_KV_OP_CACHE_HITS]);
    ck_assert_uint_eq (s_by_type[0] + s_by_type[1] + s_by_type[2], s_req);
    char prefix[256];
    snprintf (prefix, sizeof prefix, "%srank_1/", root);
    s_listed_t l = { 0 };
    ck_assert_int_ge (sb_storage_list (client, prefix, NULL, NULL, s_listed, &l, &e), 0);
    ck_assert_uint_eq (l.n, s_ops[SB_KV_OP_STORAGE_ENTRIES]);
    ck_assert_uint_eq (l.other, 0);
    /* every object: a 128-byte header (tiny-1b's shapes) and its body */
    ck_assert_uint_eq (l.bytes, s_tier[0] + 128 * l.n);
    sb_storage_close (&client);
}
END_TEST

/* A misspelt key: ERROR naming the key meant, and nothing else. */
START_TEST (test_bad_setting)
{
    s_go_answer = 0;
    const char *kv[] = { "kvcache.model=tiny-1b", "kvcache.usrs=2", NULL };
    s_run (0, kv);
    ck_assert_int_eq (s_nmsgs, 1);
    ck_assert_int_eq (s_errors, 1);
    ck_assert_str_eq (s_err_op, "kvcache");
    ck_assert_msg (strstr (s_err_msg, "kvcache.users") != NULL, "%s", s_err_msg);
}
END_TEST

/* stop() in the window: the rank ends, KV_READY the only message. */
START_TEST (test_stop)
{
    s_go_answer = 0;
    s_stop_after = 3;      /* the checks before KV_READY and GO, then the window's first */
    const char *kv[] = { "kvcache.model=tiny-1b", "kvcache.users=2", "kvcache.seed=50", "kvcache.duration_s=600",
                         "kvcache.generation_mode=none", "kvcache.verify_storage=0", NULL };
    s_run (1, kv);
    ck_assert_int_eq (s_errors, 0);
    ck_assert_int_eq (s_nmsgs, 1);
    ck_assert_int_eq (s_types[0], SB_MSG_KV_READY);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("kv_rank");
    TCase *tc = tcase_create ("kv_rank");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_users);
    tcase_add_test (tc, test_pyfloat);
    tcase_add_test (tc, test_ready_counts);
    tcase_add_test (tc, test_trial);
    tcase_add_test (tc, test_cpu_tier);
    tcase_add_test (tc, test_capacity);
    tcase_add_test (tc, test_bad_setting);
    tcase_add_test (tc, test_stop);
    suite_add_tcase (s, tc);
    TCase *objects = tcase_create ("objects");
    tcase_add_checked_fixture (objects, s_setup, s_teardown);
    tcase_set_timeout (objects, 60);
    tcase_add_test (objects, test_objects);
    suite_add_tcase (s, objects);
    return s;
}

SB_CHECK_MAIN (s_suite)
