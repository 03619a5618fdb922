/* dlio_metrics: DLIO's training metrics, as MLPerf Storage reports them.
 *
 * The reference is DLIO_local_changes' dlio_benchmark/utils/statscounter.py
 * (StatsCounter.__init__, compute_metrics_train, end_train, end_run) with the
 * training loop of dlio_benchmark/main.py (_train). Per rank and epoch DLIO
 * keeps, for every step i, the step's compute time c_i (around the emulated
 * compute) and its "proc" time p_i (from the start of loading the batch, just
 * after the previous step's barrier, to the end of its compute; the barrier
 * itself is in neither). With N the nominal steps of an epoch
 * (train.total_training_steps when > 0, else floor(samples per file x files /
 * batch / ranks)), S = output.metric.exclude_start_steps and E =
 * output.metric.exclude_end_steps:
 *
 *   window      = steps [S, N - E) in Python slice terms (compute[S:N-E])
 *   total_time  = (end - start) - sum p[:S] - sum p[N-E:]
 *   au          = sum c[window] / total_time x 100         (0 if the window
 *   throughput  = len(window) / total_time x batch_size     is empty or
 *                                                            total_time <= 0)
 *
 * where start is the start of the epoch's first block and end the moment its
 * loop ended. The rank's epoch figure is the step-weighted mean over its
 * blocks (one block without checkpoints within an epoch). Over ranks, an
 * epoch's AU is the sum of the ranks' AU over comm_size (their mean) and its
 * throughput the sum of theirs. Over epochs, the run's figures are the mean
 * and population standard deviation (np.std) of the per-epoch lists, the
 * "MB/s" is samples/s x the nominal record size / 2^20 (MiB), and the run
 * meets the expectation when its mean AU >= metric.au x 100.
 *
 * Every function here is pure: the worker classifies steps with
 * sb_dlio_window (O(1) per step), the coordinator turns its sums into
 * figures, the reports print what was stored. */
#ifndef SB_DLIO_METRICS_H
#define SB_DLIO_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Nominal steps of an epoch per rank, as StatsCounter.__init__ computes
 * them: total_training_steps when > 0, else floor(samples_per_file x files /
 * batch_size / ranks) (0 when batch_size or ranks is 0). */
uint64_t sb_dlio_nominal_steps (uint64_t samples_per_file, uint64_t files, uint64_t batch_size, uint64_t ranks,
                                double total_training_steps);

/* Which of an epoch's `steps` actual steps (0-based) DLIO counts, with
 * Python's slice rules applied to index N - E (a negative index counts from
 * the end, then both bounds are clamped to [0, steps]). */
typedef struct {
    uint64_t head_end;      /* p[:S]: steps [0, head_end) are subtracted */
    uint64_t tail_start;    /* p[N-E:]: steps [tail_start, steps) are subtracted */
    uint64_t first, end;    /* c[S:N-E]: the metric window [first, end); empty when first >= end */
} sb_dlio_window_t;

void sb_dlio_window (uint64_t nominal_steps, uint64_t exclude_start, uint64_t exclude_end, uint64_t steps,
                     sb_dlio_window_t *w);

/* Step `step` in the window (1) or not (0). */
int sb_dlio_in_window (const sb_dlio_window_t *w, uint64_t step);

/* One rank's epoch: AU in percent and samples per second, from the epoch's
 * span (end - start, seconds), the proc time of the steps subtracted at the
 * start (head_s) and at the end (tail_s), the compute time and count of the
 * window's steps, all steps of the epoch (the block weight) and the batch
 * size. */
typedef struct {
    double au_percentage;
    double samples_per_second;
    double total_time_s;    /* the denominator: span minus the excluded steps' proc time */
} sb_dlio_rank_t;

void sb_dlio_rank_figures (double span_s, double head_s, double tail_s, double window_compute_s,
                           uint64_t window_steps, uint64_t steps, uint64_t batch_size, sb_dlio_rank_t *out);

/* The record size DLIO multiplies samples/s by (StatsCounter.record_size):
 * with dataset.parquet.columns (as "name:dtype:size,...", any format) the
 * sum of size x itemsize (float64, int64, uint64: 8; float32, int32, uint32:
 * 4; float16, int16, uint16: 2; uint8, int8, bool: 1; any other dtype: 4),
 * else record_length (dataset.record_length_bytes). */
uint64_t sb_dlio_record_size (uint64_t record_length, const char *parquet_columns);

/* "MB" per second as DLIO prints it: samples/s x record_size / 2^20. */
double sb_dlio_io_mib (double samples_per_second, uint64_t record_size);

/* The run's figures from its per-epoch AU (percent) and throughput lists
 * (end_run): means and population standard deviations (NAN for no
 * epochs), the I/O rates, and meet = mean AU >= au_threshold x 100 (0 for no
 * epochs). */
typedef struct {
    double au_mean, au_stdev;
    double throughput_mean, throughput_stdev;
    double io_mean, io_stdev;
    int    meet;
} sb_dlio_summary_t;

void sb_dlio_summarise (const double *au_percentage, const double *samples_per_second, size_t epochs,
                        uint64_t record_size, double au_threshold, sb_dlio_summary_t *out);

/* mean and population standard deviation (np.mean, np.std) of v[0..n-1];
 * NAN when n is 0 */
void sb_dlio_mean_std (const double *v, size_t n, double *mean, double *std);

/* numpy's pairwise summation of n contiguous doubles (pairwise_sum in
 * loops_utils.h, from -0.0): under 8 values a plain loop; up to 128 eight
 * running sums combined as a tree, then the tail; beyond, split at half
 * rounded down to a multiple of 8 and recurse. The rounding differs from a
 * plain loop, so the order matters for equality with numpy. */
double sb_np_pairwise_sum (const double *a, size_t n);

#endif
