/* kv_stats: numpy's mean and linear percentile over a rank's samples (see kv_stats.h). */
#include "kv_stats.h"
#include "dlio_metrics.h"

#include <math.h>
#include <stdlib.h>

static const char *const s_op_names[SB_KV_OP_COUNT] = {
    "write_operations", "read_operations", "prefill_writes", "decode_reads", "cache_hits", "cache_misses",
    "multi_turn_hits", "multi_turn_misses", "storage_entries", "cpu_entries", "evictions", "offloads_cpu",
    "offloads_storage", "system_prompt_hits", "queue_max",
};

const double sb_kv_lat_q[SB_KV_LAT_COUNT - 1] = { 50, 95, 99, 99.9, 99.99 };

const char *
sb_kv_op_name (unsigned op)
{
    return op < SB_KV_OP_COUNT ? s_op_names[op] : NULL;
}

void
sb_kv_samples_init (sb_kv_samples_t *s)
{
    s->v = NULL;
    s->n = s->cap = 0;
    s->sorted = 1;
    s->mean = 0;
    s->mean_ok = 0;
}

void
sb_kv_samples_free (sb_kv_samples_t *s)
{
    free (s->v);
    sb_kv_samples_init (s);
}

void
sb_kv_samples_clear (sb_kv_samples_t *s)
{
    s->n = 0;
    s->sorted = 1;
    s->mean_ok = 0;
}

int
sb_kv_samples_add (sb_kv_samples_t *s, double seconds)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        if (cap > SIZE_MAX / sizeof *s->v)
            return -1;
        double *v = realloc (s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    if (s->n && seconds < s->v[s->n - 1])
        s->sorted = 0;
    s->v[s->n++] = seconds;
    s->mean_ok = 0;
    return 0;
}

size_t
sb_kv_samples_count (const sb_kv_samples_t *s)
{
    return s->n;
}

double
sb_kv_mean (const double *v, size_t n)
{
    if (n == 0)
        return 0;
    /* np.add.reduce walks the array in buffers of 8192 elements (numpy's
     * default bufsize), adding each buffer's pairwise sum to the running
     * total from 0 (which also makes a -0.0 sum +0.0); np.mean then
     * divides by the count */
    double sum = 0;
    for (size_t i = 0; i < n; i += 8192)
        sum += sb_np_pairwise_sum (v + i, n - i < 8192 ? n - i : 8192);
    return sum / (double) n;
}

double
sb_kv_percentile_sorted (const double *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    /* numpy: quantile = q / 100, virtual index (n - 1) * quantile */
    double vi = (double) (n - 1) * (q / 100.0);
    if (!(vi > 0))
        return v[0];
    if (vi >= (double) (n - 1))
        return v[n - 1];
    double prev = floor (vi);
    size_t i = (size_t) prev;
    double t = vi - prev, a = v[i], b = v[i + 1];
    double diff = b - a;
    /* numpy's _lerp: from the nearer end, so that t 1 gives b exactly */
    if (t >= 0.5)
        return b - diff * (1 - t);
    return a + diff * t;
}

static int
s_cmp_double (const void *x, const void *y)
{
    double a = *(const double *) x, b = *(const double *) y;
    return (a > b) - (a < b);
}

double
sb_kv_samples_mean (sb_kv_samples_t *s)
{
    if (!s->mean_ok) {
        s->mean = sb_kv_mean (s->v, s->n);
        s->mean_ok = 1;
    }
    return s->mean;
}

double
sb_kv_samples_percentile (sb_kv_samples_t *s, double q)
{
    if (!s->sorted) {
        /* the mean is summed in the order added: take it before reordering */
        sb_kv_samples_mean (s);
        qsort (s->v, s->n, sizeof *s->v, s_cmp_double);
        s->sorted = 1;
    }
    return sb_kv_percentile_sorted (s->v, s->n, q);
}

uint64_t
sb_kv_ns (double seconds)
{
    if (!(seconds > 0))
        return 0;
    double ns = nearbyint (seconds * 1e9);
    return ns >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t) ns;
}

size_t
sb_kv_samples_lat_ns (sb_kv_samples_t *s, uint64_t out[SB_KV_LAT_COUNT])
{
    if (s->n == 0)
        return 0;
    out[0] = sb_kv_ns (sb_kv_samples_mean (s));
    for (int i = 1; i < SB_KV_LAT_COUNT; i++)
        out[i] = sb_kv_ns (sb_kv_samples_percentile (s, sb_kv_lat_q[i - 1]));
    return SB_KV_LAT_COUNT;
}
