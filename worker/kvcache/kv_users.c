/* kv_users: the user set, the generator of their requests, the queue. */
#include "kv_users.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const sb_kv_type_names[SB_KV_TYPES] = { "chatbot", "coding", "document" };
const char *const sb_kv_qos_names[SB_KV_QOS] = { "interactive", "responsive", "batch" };

/* config.yaml user_templates (the reference's values): context, generation, think time */
static const struct {
    int64_t ctx_lo, ctx_hi, gen_lo, gen_hi;
    double  think_lo, think_hi;
} s_templates[SB_KV_TYPES] = {
    { 512, 4096, 50, 200, 0.1, 0.5 },
    { 4096, 25000, 100, 500, 0.2, 1.0 },
    { 4096, 16384, 200, 800, 0.3, 1.5 },
};

/* config.yaml qos_distribution and qos_profiles' priorities */
#define S_INTERACTIVE_P  0.15
#define S_RESPONSIVE_T   0.50
#define S_END_CONV_KEEP  0.8    /* random() >= 0.8 ends a conversation */
#define S_MAX_TURNS      50     /* conversation.max_turns_per_conv */
#define S_MAX_CONVS      1000   /* conversation.max_conversations */
#define S_PREFILL_ONLY   10000  /* contexts from this many tokens are prefill only */

void
sb_kv_users_make (sb_kv_rng_t *rng, uint64_t n, sb_kv_user_t *out)
{
    pthread_mutex_lock (&rng->lock);
    for (uint64_t i = 0; i < n; i++) {
        sb_kv_user_t *u = &out[i];
        memset (u, 0, sizeof *u);
        u->type = (int) sb_py_choice (&rng->r, SB_KV_TYPES);
        double q = sb_py_random (&rng->r);
        if (q < S_INTERACTIVE_P) {
            u->qos = SB_KV_INTERACTIVE;
            u->priority = 3;
        }
        else if (q < S_RESPONSIVE_T) {
            u->qos = SB_KV_RESPONSIVE;
            u->priority = 2;
        }
        else {
            u->qos = SB_KV_BATCH;
            u->priority = 1;
        }
        snprintf (u->id, sizeof u->id, "user_%04llu", (unsigned long long) i);
        u->context = (uint64_t) sb_py_randint (&rng->r, s_templates[u->type].ctx_lo, s_templates[u->type].ctx_hi);
        u->generation = (uint64_t) sb_py_randint (&rng->r, s_templates[u->type].gen_lo, s_templates[u->type].gen_hi);
        u->think = sb_py_uniform (&rng->r, s_templates[u->type].think_lo, s_templates[u->type].think_hi);
    }
    pthread_mutex_unlock (&rng->lock);
}

int
sb_kv_flow_init (sb_kv_flow_t *f, const sb_kv_user_t *users, uint64_t n, int multi_turn, sb_kv_rng_t *rng)
{
    memset (f, 0, sizeof *f);
    f->users = users;
    f->nusers = n;
    f->multi_turn = multi_turn;
    f->rng = rng;
    f->max_convs = S_MAX_CONVS;
    f->cap = 1024;
    if (!(f->convs = calloc (f->max_convs, sizeof *f->convs)) || !(f->heap = malloc (f->cap * sizeof *f->heap))) {
        free (f->convs);
        return -1;
    }
    pthread_mutex_init (&f->conv_lock, NULL);
    pthread_mutex_init (&f->q_lock, NULL);
    /* the timed waits are on the monotonic clock */
    pthread_condattr_t ca;
    pthread_condattr_init (&ca);
    pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
    pthread_cond_init (&f->q_cond, &ca);
    pthread_cond_init (&f->gen_cond, &ca);
    pthread_condattr_destroy (&ca);
    atomic_init (&f->closed, 0);
    atomic_init (&f->failed, 0);
    return 0;
}

void
sb_kv_flow_free (sb_kv_flow_t *f)
{
    free (f->convs);
    free (f->heap);
    f->convs = NULL;
    f->heap = NULL;
    pthread_mutex_destroy (&f->conv_lock);
    pthread_mutex_destroy (&f->q_lock);
    pthread_cond_destroy (&f->q_cond);
    pthread_cond_destroy (&f->gen_cond);
}

/* ---- the priority queue (q_lock held) ---- */

static int
s_before (const sb_kv_request_t *a, const sb_kv_request_t *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;       /* -priority ascending */
    if (a->enqueued != b->enqueued)
        return a->enqueued < b->enqueued;
    return a->seq < b->seq;
}

static int
s_push (sb_kv_flow_t *f, const sb_kv_request_t *r)
{
    if (f->len == f->cap) {
        sb_kv_request_t *h = realloc (f->heap, 2 * f->cap * sizeof *h);
        if (!h)
            return -1;
        f->heap = h;
        f->cap *= 2;
    }
    size_t i = f->len++;
    f->heap[i] = *r;
    f->heap[i].seq = f->seq++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!s_before (&f->heap[i], &f->heap[p]))
            break;
        sb_kv_request_t t = f->heap[i];
        f->heap[i] = f->heap[p];
        f->heap[p] = t;
        i = p;
    }
    if (f->len > f->max_len)
        f->max_len = f->len;
    return 0;
}

static void
s_pop (sb_kv_flow_t *f, sb_kv_request_t *out)
{
    *out = f->heap[0];
    f->heap[0] = f->heap[--f->len];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < f->len && s_before (&f->heap[l], &f->heap[m]))
            m = l;
        if (r < f->len && s_before (&f->heap[r], &f->heap[m]))
            m = r;
        if (m == i)
            break;
        sb_kv_request_t t = f->heap[i];
        f->heap[i] = f->heap[m];
        f->heap[m] = t;
        i = m;
    }
}

static void
s_deadline (struct timespec *ts, double seconds)
{
    clock_gettime (CLOCK_MONOTONIC, ts);
    double s = floor (seconds);
    ts->tv_sec += (time_t) s;
    ts->tv_nsec += (long) ((seconds - s) * 1e9);
    if (ts->tv_nsec >= 1000000000) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000;
    }
}

int
sb_kv_flow_take (sb_kv_flow_t *f, sb_kv_request_t *req)
{
    pthread_mutex_lock (&f->q_lock);
    if (f->len == 0 && !atomic_load (&f->closed)) {
        struct timespec ts;
        s_deadline (&ts, 0.5);
        pthread_cond_timedwait (&f->q_cond, &f->q_lock, &ts);
    }
    int rc = 0;
    if (atomic_load (&f->closed))
        rc = -1;
    else if (f->len > 0) {
        s_pop (f, req);
        rc = 1;
    }
    pthread_mutex_unlock (&f->q_lock);
    return rc;
}

void
sb_kv_flow_depth (sb_kv_flow_t *f, size_t *now, size_t *max)
{
    pthread_mutex_lock (&f->q_lock);
    *now = f->len;
    *max = f->max_len;
    pthread_mutex_unlock (&f->q_lock);
}

/* ---- conversations ---- */

/* start_conversation: a new one in a free slot, or in the least recently
 * used one's (conv_lock held). */
static int64_t
s_conv_start (sb_kv_flow_t *f, const char *user_id, uint64_t *serial)
{
    size_t slot = f->max_convs;
    if (f->nconvs < f->max_convs) {
        for (size_t i = 0; i < f->max_convs; i++)
            if (!f->convs[i].used) {
                slot = i;
                break;
            }
    }
    else {
        for (size_t i = 0; i < f->max_convs; i++) {
            const sb_kv_conv_t *c = &f->convs[i], *b = slot < f->max_convs ? &f->convs[slot] : NULL;
            if (!b || c->last_access < b->last_access
                || (c->last_access == b->last_access && c->created < b->created))
                slot = i;
        }
        f->nconvs--;
    }
    sb_kv_conv_t *c = &f->convs[slot];
    double now = sb_now ();
    snprintf (c->id, sizeof c->id, "conv_%s_%lld", user_id, (long long) (now * 1000));
    c->turn = 0;
    c->serial = ++f->serials;
    c->created = c->last_access = now;
    c->used = 1;
    f->nconvs++;
    *serial = c->serial;
    return (int64_t) slot;
}

static sb_kv_conv_t *
s_conv (sb_kv_flow_t *f, int64_t slot, uint64_t serial)
{
    if (slot < 0 || (size_t) slot >= f->max_convs || !f->convs[slot].used || f->convs[slot].serial != serial)
        return NULL;
    return &f->convs[slot];
}

size_t
sb_kv_flow_prev_turns (sb_kv_flow_t *f, const sb_kv_request_t *req, char *id, size_t id_size, uint64_t *turns,
                       size_t max)
{
    size_t n = 0;
    pthread_mutex_lock (&f->conv_lock);
    sb_kv_conv_t *c = s_conv (f, req->conv, req->conv_serial);
    if (c) {
        snprintf (id, id_size, "%s", c->id);
        for (uint64_t t = 1; t <= c->turn && n < max; t++)
            if (t != req->turn)
                turns[n++] = t;
    }
    pthread_mutex_unlock (&f->conv_lock);
    return n;
}

/* ---- the generator ---- */

typedef struct {
    double   at;
    uint32_t user;
} s_timer_t;

typedef struct {
    s_timer_t *h;
    size_t     len;
} s_timers_t;

static void
s_timer_push (s_timers_t *t, double at, uint32_t user)
{
    size_t i = t->len++;
    t->h[i] = (s_timer_t) { at, user };
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (t->h[p].at <= t->h[i].at)
            break;
        s_timer_t x = t->h[i];
        t->h[i] = t->h[p];
        t->h[p] = x;
        i = p;
    }
}

static s_timer_t
s_timer_pop (s_timers_t *t)
{
    s_timer_t top = t->h[0];
    t->h[0] = t->h[--t->len];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < t->len && t->h[l].at < t->h[m].at)
            m = l;
        if (r < t->len && t->h[r].at < t->h[m].at)
            m = r;
        if (m == i)
            break;
        s_timer_t x = t->h[i];
        t->h[i] = t->h[m];
        t->h[m] = x;
        i = m;
    }
    return top;
}

/* The user's next think time: think_time x uniform(0.8, 1.2). */
static double
s_think (sb_kv_flow_t *f, const sb_kv_user_t *u)
{
    pthread_mutex_lock (&f->rng->lock);
    double k = sb_py_uniform (&f->rng->r, 0.8, 1.2);
    pthread_mutex_unlock (&f->rng->lock);
    return u->think * k;
}

/* One request of user i (user_worker's loop body after its sleep). */
static int
s_request (sb_kv_flow_t *f, uint32_t i, int64_t *conv, uint64_t *serial)
{
    const sb_kv_user_t *u = &f->users[i];
    sb_kv_request_t r;
    memset (&r, 0, sizeof r);
    r.conv = -1;
    if (f->multi_turn) {
        pthread_mutex_lock (&f->rng->lock);
        if (*conv >= 0 && sb_py_random (&f->rng->r) >= S_END_CONV_KEEP)
            *conv = -1;
        pthread_mutex_unlock (&f->rng->lock);
        pthread_mutex_lock (&f->conv_lock);
        const sb_kv_conv_t *c = *conv >= 0 ? s_conv (f, *conv, *serial) : NULL;
        if (c && c->turn >= S_MAX_TURNS)
            *conv = -1;
        if (*conv >= 0 && !c) {
            /* the manager evicted this user's live conversation (more than
             * max_conversations at once): the reference's add_turn raises
             * then and the user's thread ends; here the user goes on with a
             * new conversation */
            if (!f->conv_lost)
                sb_warn ("kvcache: more than %zu conversations at once: %s's conversation was evicted while going on;"
                         " the reference's user thread would die there (add_turn raises) and that user send no more"
                         " requests; here the user starts a new conversation", f->max_convs, u->id);
            f->conv_lost = 1;
            *conv = -1;
        }
        if (*conv < 0)
            *conv = s_conv_start (f, u->id, serial);
        pthread_mutex_unlock (&f->conv_lock);
    }
    pthread_mutex_lock (&f->rng->lock);
    int64_t ctx_lo = (int64_t) u->context / 4 > 1 ? (int64_t) u->context / 4 : 1;
    int64_t gen_lo = (int64_t) u->generation / 4 > 1 ? (int64_t) u->generation / 4 : 1;
    r.context = (uint64_t) sb_py_randint (&f->rng->r, ctx_lo, (int64_t) u->context);
    r.generation = (uint64_t) sb_py_randint (&f->rng->r, gen_lo, (int64_t) u->generation);
    pthread_mutex_unlock (&f->rng->lock);
    pthread_mutex_lock (&f->q_lock);
    uint64_t req_id = f->counter++;
    pthread_mutex_unlock (&f->q_lock);
    if (f->multi_turn && *conv >= 0) {
        pthread_mutex_lock (&f->conv_lock);
        sb_kv_conv_t *c = &f->convs[*conv];
        c->turn++;
        c->last_access = sb_now ();
        r.turn = c->turn;
        r.conv = *conv;
        r.conv_serial = *serial;
        snprintf (r.key, sizeof r.key, "%s_turn_%llu", c->id, (unsigned long long) c->turn);
        pthread_mutex_unlock (&f->conv_lock);
    }
    else {
        r.turn = 1;
        snprintf (r.key, sizeof r.key, "%s_req_%06llu", u->id, (unsigned long long) req_id);
    }
    r.user = i;
    r.type = u->type;
    r.qos = u->qos;
    r.priority = u->priority;
    r.phase = r.context >= S_PREFILL_ONLY ? SB_KV_PHASE_PREFILL : SB_KV_PHASE_BOTH;
    r.submit = sb_kv_clock ();
    r.enqueued = sb_now ();
    pthread_mutex_lock (&f->q_lock);
    int rc = atomic_load (&f->closed) ? 0 : s_push (f, &r);
    if (rc == 0)
        pthread_cond_signal (&f->q_cond);
    else
        atomic_store (&f->failed, 1);
    pthread_mutex_unlock (&f->q_lock);
    return rc;
}

static void *
s_gen_main (void *arg)
{
    sb_kv_flow_t *f = arg;
    s_timers_t t = { calloc (f->nusers ? f->nusers : 1, sizeof *t.h), 0 };
    int64_t *conv = malloc ((f->nusers ? f->nusers : 1) * sizeof *conv);
    uint64_t *serial = calloc (f->nusers ? f->nusers : 1, sizeof *serial);
    if (!t.h || !conv || !serial) {
        pthread_mutex_lock (&f->q_lock);
        atomic_store (&f->failed, 1);
        pthread_mutex_unlock (&f->q_lock);
        free (t.h);
        free (conv);
        free (serial);
        return NULL;
    }
    /* every user's thread starts at once and first sleeps its think time */
    double now = sb_kv_clock ();
    for (uint32_t i = 0; i < f->nusers; i++) {
        conv[i] = -1;
        s_timer_push (&t, now + s_think (f, &f->users[i]), i);
    }
    while (t.len > 0) {
        pthread_mutex_lock (&f->q_lock);
        while (!atomic_load (&f->closed) && t.h[0].at > sb_kv_clock ()) {
            struct timespec ts;
            s_deadline (&ts, t.h[0].at - sb_kv_clock ());
            pthread_cond_timedwait (&f->gen_cond, &f->q_lock, &ts);
        }
        int closed = atomic_load (&f->closed);
        pthread_mutex_unlock (&f->q_lock);
        if (closed)
            break;
        s_timer_t due = s_timer_pop (&t);
        if (s_request (f, due.user, &conv[due.user], &serial[due.user]) != 0)
            break;
        s_timer_push (&t, sb_kv_clock () + s_think (f, &f->users[due.user]), due.user);
    }
    free (t.h);
    free (conv);
    free (serial);
    return NULL;
}

int
sb_kv_flow_start (sb_kv_flow_t *f)
{
    int rc = pthread_create (&f->gen, NULL, s_gen_main, f);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    f->gen_started = 1;
    return 0;
}

void
sb_kv_flow_close (sb_kv_flow_t *f)
{
    pthread_mutex_lock (&f->q_lock);
    atomic_store (&f->closed, 1);
    pthread_cond_broadcast (&f->q_cond);
    pthread_cond_broadcast (&f->gen_cond);
    pthread_mutex_unlock (&f->q_lock);
}

void
sb_kv_flow_join (sb_kv_flow_t *f)
{
    if (f->gen_started)
        pthread_join (f->gen, NULL);
    f->gen_started = 0;
}
