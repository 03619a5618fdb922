/* kv_users: the reference's users and their requests (kv_cache/workload.py
 * UserSimulator, benchmark.py generate_requests, conversation.py
 * ConversationManager), and the one priority queue the service threads take
 * them from.
 *
 * The user set: UserSimulator.generate_mixed_users(n) drawn with CPython's
 * random seeded with seed + rank, the same draws in the same order (type by
 * random.choice, QoS by random.random, then randint(context),
 * randint(generation), uniform(think time)), so a seed gives the reference's
 * users. After that one generator thread stands for the reference's thread
 * per user: a timer heap of each user's next request, open loop (a user does
 * not wait for its requests): sleep think_time x uniform(0.8, 1.2), the
 * conversation (ended with probability 0.2 as random() >= 0.8, at most 50
 * turns, then a new one), context randint(max(1, ctx // 4), ctx), generation
 * randint(max(1, gen // 4), gen), phase PREFILL from 10000 tokens of
 * context, else PREFILL_DECODE, queued by (-QoS priority, enqueue time).
 * Every draw, the service threads' too, comes from one random (sb_kv_rng_t),
 * as the reference's threads share the module's. */
#ifndef SB_KV_USERS_H
#define SB_KV_USERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "pyrandom.h"
#include "kv_tiers.h"

enum { SB_KV_CHATBOT, SB_KV_CODING, SB_KV_DOCUMENT, SB_KV_TYPES };
enum { SB_KV_INTERACTIVE, SB_KV_RESPONSIVE, SB_KV_BATCH, SB_KV_QOS };

extern const char *const sb_kv_type_names[SB_KV_TYPES];
extern const char *const sb_kv_qos_names[SB_KV_QOS];

typedef struct {
    char     id[24];            /* user_0000 */
    int      type, qos, priority;
    uint64_t context, generation;
    double   think;
} sb_kv_user_t;

/* The module-level random every thread draws from. */
typedef struct {
    sb_py_random_t  r;
    pthread_mutex_t lock;
} sb_kv_rng_t;

/* generate_mixed_users(n) from rng (seeded by the caller). */
void sb_kv_users_make (sb_kv_rng_t *rng, uint64_t n, sb_kv_user_t *out);

typedef struct {
    uint32_t user;
    int      type, qos, priority, phase;
    uint64_t context, generation, turn;
    char     key[SB_KV_KEY];
    int64_t  conv;              /* the conversation's slot, -1 none */
    uint64_t conv_serial;       /* which conversation held the slot */
    double   submit;            /* sb_kv_clock () at creation (InferenceRequest.submit_time) */
    double   enqueued;          /* the priority's time */
    uint64_t seq;               /* ties */
} sb_kv_request_t;

/* ConversationManager: at most max conversations, the least recently used
 * one evicted for a new one. */
typedef struct {
    char     id[64];
    uint64_t turn, serial;
    double   created, last_access;
    int      used;
} sb_kv_conv_t;

typedef struct {
    /* settings */
    const sb_kv_user_t *users;
    uint64_t         nusers;
    int              multi_turn;
    sb_kv_rng_t     *rng;
    /* conversations */
    sb_kv_conv_t    *convs;
    size_t           max_convs, nconvs;
    uint64_t         serials;
    pthread_mutex_t  conv_lock;
    int              conv_lost;         /* a user's conversation was evicted (warned once) */
    /* the queue */
    sb_kv_request_t *heap;
    size_t           len, cap, max_len;
    uint64_t         seq, counter;      /* counter: the reference's request_counter */
    pthread_mutex_t  q_lock;
    pthread_cond_t   q_cond;            /* a request queued, or the end */
    pthread_cond_t   gen_cond;          /* the generator's timer */
    atomic_int       closed;            /* the window is over: no more requests */
    atomic_int       failed;            /* out of memory in the queue */
    pthread_t        gen;
    int              gen_started;
} sb_kv_flow_t;

int  sb_kv_flow_init (sb_kv_flow_t *f, const sb_kv_user_t *users, uint64_t n, int multi_turn, sb_kv_rng_t *rng);
void sb_kv_flow_free (sb_kv_flow_t *f);
/* Start the generator thread. 0, or -1 (errno). */
int  sb_kv_flow_start (sb_kv_flow_t *f);
/* The window is over: the generator ends, waiting service threads wake. */
void sb_kv_flow_close (sb_kv_flow_t *f);
void sb_kv_flow_join (sb_kv_flow_t *f);
/* The next request by priority, waiting up to 0.5 s (the reference's
 * queue.get(timeout=0.5)): 1 with *req, 0 none yet, -1 closed. */
int  sb_kv_flow_take (sb_kv_flow_t *f, sb_kv_request_t *req);
/* The keys of the conversation's turns other than turn (every earlier turn,
 * and any later one the user has already asked): turn numbers into turns
 * (up to max), the conversation's id into id. Returns how many (0: the
 * conversation is gone). */
size_t sb_kv_flow_prev_turns (sb_kv_flow_t *f, const sb_kv_request_t *req, char *id, size_t id_size,
                              uint64_t *turns, size_t max);
/* Requests queued now, and at most so far. */
void sb_kv_flow_depth (sb_kv_flow_t *f, size_t *now, size_t *max);

#endif
