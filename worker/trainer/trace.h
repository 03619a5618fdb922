/* trace: the per-read trace of a worker (shardbench.trace=DIR).
 *
 * DIR/trace-HOST-PID.csv, one CSV line per read and one per sample served
 * from a parquet row group or a whole file (tensorflow's npz, tf_plan.h) an
 * earlier read of the epoch brought in (bytes 0,
 * latency 0, start when it was served), after the header
 *   rank,epoch,step,position,file_index,key,offset,length,start_s,latency_us,bytes,sample
 * position: in the rank's epoch order (step = position / batch); file_index:
 * the object's catalog index (name order); key: relative to the data folder,
 * quoted as CSV when it holds a comma or a quote; start_s: Unix seconds the
 * storage engine issued the read (not when the rank queued it: a read may
 * wait in its loader thread's lane), latency_us from there to its last
 * byte, so the reads a rank had in flight at time T are its lines with
 * start_s <= T < start_s + latency_us (lines of samples served by an earlier
 * read have latency 0 and start when they were served); length 0: the
 * whole object; sample: the sample in the file the position reads (a read
 * of a row group or of a whole file serves many, each on its own line). A
 * parquet footer read serves no sample: its line has empty step and
 * position fields; its bytes count in the epoch's. */
#ifndef SB_TRACE_H
#define SB_TRACE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sb_trace sb_trace_t;

typedef struct {
    uint64_t    rank, epoch, step, position, file, sample;
    const char *key;
    uint64_t    offset, length;
    double      start_s;
    uint64_t    latency_us, bytes;
    int         no_sample;      /* a read that serves no sample (a parquet footer): step and position empty */
} sb_trace_line_t;

/* Create DIR/trace-HOST-PID.csv (DIR must exist) and write the header.
 * NULL with err naming the file on failure. */
sb_trace_t *sb_trace_open (const char *dir, char *err, size_t err_size);

/* Append one line. Returns 0, or -1 with err naming the file and why. */
int sb_trace_write (sb_trace_t *self, const sb_trace_line_t *line, char *err, size_t err_size);

/* Push buffered lines to the file. 0, or -1 with err. */
int sb_trace_flush (sb_trace_t *self, char *err, size_t err_size);

/* Flush and close; accepts NULL and nulls the pointer. 0, or -1 with err. */
int sb_trace_close (sb_trace_t **self_p, char *err, size_t err_size);

#endif
