/* dlio_metrics: DLIO's training metrics (see dlio_metrics.h). */
#include "dlio_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t
sb_dlio_nominal_steps (uint64_t samples_per_file, uint64_t files, uint64_t batch_size, uint64_t ranks,
                       double total_training_steps)
{
    if (total_training_steps > 0)
        return (uint64_t) total_training_steps;
    if (batch_size == 0 || ranks == 0)
        return 0;
    /* math.floor(spf * files / batch / ranks): the same integer as the exact quotient for any count that fits */
    return samples_per_file * files / batch_size / ranks;
}

/* Python's resolution of a slice bound i over a sequence of n items */
static uint64_t
s_py_bound (int64_t i, uint64_t n)
{
    if (i < 0)
        i += (int64_t) n;
    if (i < 0)
        return 0;
    return (uint64_t) i > n ? n : (uint64_t) i;
}

void
sb_dlio_window (uint64_t nominal_steps, uint64_t exclude_start, uint64_t exclude_end, uint64_t steps,
                sb_dlio_window_t *w)
{
    /* bounds are at most 1e9 (workload.c), steps far below 2^62: no overflow in int64 */
    const int64_t limit = (int64_t) 1 << 62;
    int64_t n = nominal_steps < (uint64_t) limit ? (int64_t) nominal_steps : limit;
    int64_t s = exclude_start < (uint64_t) limit ? (int64_t) exclude_start : limit;
    int64_t e = exclude_end < (uint64_t) limit ? (int64_t) exclude_end : limit;
    uint64_t stop = s_py_bound (n - e, steps);   /* metric_end_step + 1 = N - 1 - E + 1 */
    w->head_end = s_py_bound (s, steps);
    w->tail_start = stop;
    w->first = w->head_end;
    w->end = stop;
}

int
sb_dlio_in_window (const sb_dlio_window_t *w, uint64_t step)
{
    return step >= w->first && step < w->end;
}

void
sb_dlio_rank_figures (double span_s, double head_s, double tail_s, double window_compute_s, uint64_t window_steps,
                      uint64_t steps, uint64_t batch_size, sb_dlio_rank_t *out)
{
    /* compute_metrics_train: total_time = end - start - sum(proc[:S]) - sum(proc[N-E:]) */
    double total_time = span_s - head_s - tail_s, au = 0, throughput = 0;
    out->total_time_s = total_time;
    if (window_steps > 0 && total_time > 0) {
        au = window_compute_s > 0 ? window_compute_s / total_time : 0.0;
        throughput = (double) window_steps / total_time * (double) batch_size;
    }
    au *= 100;
    /* end_train: the block figures weighted by each block's steps (one block here) */
    if (steps == 0) {
        out->au_percentage = 0;
        out->samples_per_second = 0;
        return;
    }
    out->au_percentage = au * (double) steps / (double) steps;
    out->samples_per_second = throughput * (double) steps / (double) steps;
}

uint64_t
sb_dlio_record_size (uint64_t record_length, const char *parquet_columns)
{
    static const struct {
        const char *dtype;
        uint64_t    bytes;
    } itemsize[] = {
        { "float64", 8 }, { "int64", 8 }, { "uint64", 8 }, { "float32", 4 }, { "int32", 4 }, { "uint32", 4 },
        { "float16", 2 }, { "int16", 2 }, { "uint16", 2 }, { "uint8", 1 }, { "int8", 1 }, { "bool", 1 },
    };
    if (!parquet_columns || !*parquet_columns)
        return record_length;
    uint64_t total = 0;
    const char *p = parquet_columns;
    while (*p) {
        const char *end = strchr (p, ',');
        size_t len = end ? (size_t) (end - p) : strlen (p);
        /* name:dtype:size */
        const char *c1 = memchr (p, ':', len);
        const char *c2 = c1 ? memchr (c1 + 1, ':', len - (size_t) (c1 + 1 - p)) : NULL;
        uint64_t bytes = 4, size = 1;
        if (c1) {
            size_t dl = (size_t) ((c2 ? c2 : p + len) - (c1 + 1));
            for (size_t i = 0; i < sizeof itemsize / sizeof itemsize[0]; i++)
                if (strlen (itemsize[i].dtype) == dl && memcmp (itemsize[i].dtype, c1 + 1, dl) == 0)
                    bytes = itemsize[i].bytes;
        }
        if (c2) {
            uint64_t v = 0;
            const char *q = c2 + 1;
            for (; q < p + len && *q >= '0' && *q <= '9'; q++)
                v = v * 10 + (uint64_t) (*q - '0');
            if (q > c2 + 1)
                size = v;
        }
        total += size * bytes;
        p += len;
        if (*p == ',')
            p++;
    }
    return total;
}

double
sb_dlio_io_mib (double samples_per_second, uint64_t record_size)
{
    return samples_per_second * (double) record_size / 1024. / 1024.;
}

double
sb_np_pairwise_sum (const double *a, size_t n)
{
    if (n < 8) {
        double res = -0.0;
        for (size_t i = 0; i < n; i++)
            res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        size_t i;
        for (int j = 0; j < 8; j++)
            r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += a[i + (size_t) j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return sb_np_pairwise_sum (a, n2) + sb_np_pairwise_sum (a + n2, n - n2);
}

void
sb_dlio_mean_std (const double *v, size_t n, double *mean, double *std)
{
    if (n == 0) {
        *mean = *std = NAN;
        return;
    }
    double m = (0.0 + sb_np_pairwise_sum (v, n)) / (double) n;
    double *sq = malloc (n * sizeof *sq);
    if (!sq) {  /* the same figure, summed in order */
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += (v[i] - m) * (v[i] - m);
        *mean = m;
        *std = sqrt (s / (double) n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        sq[i] = (v[i] - m) * (v[i] - m);
    *mean = m;
    *std = sqrt ((0.0 + sb_np_pairwise_sum (sq, n)) / (double) n);
    free (sq);
}

void
sb_dlio_summarise (const double *au_percentage, const double *samples_per_second, size_t epochs,
                   uint64_t record_size, double au_threshold, sb_dlio_summary_t *out)
{
    sb_dlio_mean_std (au_percentage, epochs, &out->au_mean, &out->au_stdev);
    sb_dlio_mean_std (samples_per_second, epochs, &out->throughput_mean, &out->throughput_stdev);
    out->io_mean = sb_dlio_io_mib (out->throughput_mean, record_size);
    out->io_stdev = sb_dlio_io_mib (out->throughput_stdev, record_size);
    out->meet = epochs > 0 && out->au_mean >= au_threshold * 100;
}
