-- shardbench result database, schema version 16 (PRAGMA user_version).
-- This file is the single source of truth: the coordinator compiles it in and
-- applies it to every database it opens. Rows are committed as they arrive
-- (WAL journal), so a crash loses at most the rows of the current second. A
-- writer thread commits them: another process that holds the database locked
-- delays rows (runs.db_locked_s), never the run's timing, and never drops one.
-- Times are Unix seconds (REAL). Sizes are bytes.
--
-- Train runs carry two sets of figures. The headline is DLIO's (MLPerf Storage's) metrics under
-- DLIO's names (train_au_*, train_throughput_*, train_io_*), computed as DLIO_local_changes'
-- utils/statscounter.py computes them (lib/metrics/dlio_metrics.h; docs/DLIO.md): the steps of
-- output.metric.exclude_start_steps / exclude_end_steps left out, AU and samples/s per rank over its
-- epoch's span less the excluded steps' load and compute time, the epoch AU the ranks' mean, the epoch
-- samples/s the ranks' sum, MB/s = samples/s x the nominal record size / 2^20. Beside them,
-- shardbench's own measured figures: every sample read, the bytes actually read, the epoch from the
-- first rank's start to the last rank's finish (samples_per_s, mib_per_s, au_mean, ...).

-- One row per shardbench command that did work: 'train' | 'datagen' | 'checkpoint'.
-- status: 'running' | 'succeeded' | 'failed' | 'aborted' | 'interrupted'.
CREATE TABLE IF NOT EXISTS runs (
  id            INTEGER PRIMARY KEY,
  kind          TEXT NOT NULL,
  workload      TEXT NOT NULL,      -- preset name or YAML path
  config        TEXT NOT NULL,      -- effective configuration, YAML
  status        TEXT NOT NULL,
  error         TEXT,               -- first error that failed the run
  started_at    REAL NOT NULL,
  finished_at   REAL,
  accelerators  INTEGER NOT NULL,   -- ranks (emulated accelerators)
  hosts         INTEGER NOT NULL,   -- distinct worker hosts
  seed          INTEGER NOT NULL,
  workers       INTEGER NOT NULL DEFAULT 0,
  au_threshold  REAL,               -- metric.au of the workload
  au_mean       REAL,               -- shardbench's own AU: mean of epochs.au_mean (train runs)
  passed        INTEGER,            -- train runs that succeeded: 1 when train_au_meet_expectation is
                                    --   'success' (DLIO's AU mean >= 100 x au_threshold), else 0
  coordinator_host TEXT,            -- where the coordinator ran
  coordinator_pid  INTEGER,         -- its pid: a dead one marks the run 'interrupted'
  db_locked_s   REAL,               -- seconds rows waited for a lock another process held on
                                    --   this database (0: none; results were written late)
  -- DLIO's run figures (train runs; over the epochs that finished; NULL before schema 9)
  train_au_mean_percentage   REAL,  -- mean of epochs.train_au_percentage
  train_au_stdev_percentage  REAL,  -- its population standard deviation (np.std)
  train_au_meet_expectation  TEXT,  -- 'success' when train_au_mean_percentage >= 100 x au_threshold, else 'fail'
  train_throughput_mean_samples_per_second  REAL,  -- mean of epochs.train_throughput_samples_per_second
  train_throughput_stdev_samples_per_second REAL,
  train_io_mean_MB_per_second  REAL, -- train_throughput_mean x record_size_bytes / 2^20 (MiB, as DLIO's "MB")
  train_io_stdev_MB_per_second REAL,
  record_size_bytes INTEGER,         -- DLIO's nominal record size: dataset.record_length_bytes, or with
                                     --   dataset.parquet.columns the sum of size x dtype bytes
  sampler       TEXT,               -- train: the read order, lib/dataset/sampler.h: 'dlio_index' | 'dlio_iterative' |
                                    --   'dlio_files' | 'global' (shardbench.sampler, reader.data_loader[_sampler])
  loader_threads INTEGER,           -- train: loader threads per rank the sampler ran with (reader.read_threads
                                    --   raised from 1 as DLIO does on worker 0's host; no comma in this comment:
                                    --   SQLite's DROP COLUMN of a following last column cuts at the last comma)
  workflow      TEXT,               -- the phases the command ran up to this run in order and comma-separated
                                    --   (datagen train eval checkpoint; workflow.*; NULL before schema 10)
  -- DLIO evaluation figures (train runs with workflow.evaluation; over the evals rows; NULL otherwise)
  eval_au_mean_percentage   REAL,   -- mean of evals.eval_au_percentage
  eval_au_stdev_percentage  REAL,   -- its population standard deviation (np.std)
  eval_au_meet_expectation  TEXT,   -- success when eval_au_mean_percentage >= 100 x au_threshold else fail
                                    --   (DLIO reports it; runs.passed stays the training verdict)
  eval_throughput_mean_samples_per_second  REAL,
  eval_throughput_stdev_samples_per_second REAL,
  eval_io_mean_MB_per_second  REAL, -- eval_throughput_mean x record_size_bytes / 2^20
  eval_io_stdev_MB_per_second REAL,
  -- runs as a series (`--runs N --warmup K --label TEXT`; NULL before schema 11)
  label         TEXT,               -- --label: the name the command line gave the run (every row the command wrote)
  series_id     INTEGER,            -- series.id: the series this run belongs to (train or checkpoint rows of a
                                    --   `--runs N` command; NULL: a run of its own or the datagen before a series)
  series_index  INTEGER,            -- 1-based place in the series
  warmup        INTEGER             -- 1: a warm-up run (the first --warmup K of the series) or 0; NULL outside one
);

-- One row per worker agent that joined a run.
CREATE TABLE IF NOT EXISTS run_workers (
  run_id     INTEGER NOT NULL REFERENCES runs(id),
  worker     INTEGER NOT NULL,      -- worker id, 0..workers-1
  host       TEXT NOT NULL,
  pid        INTEGER NOT NULL,
  ranks      INTEGER NOT NULL,      -- emulated accelerators on this worker
  first_rank INTEGER NOT NULL,
  cores      INTEGER,
  memory     INTEGER,               -- bytes of RAM on the host
  clock_offset_s REAL,              -- the worker's clock minus the coordinator's, measured at join
                                    --   (HELLO/WELCOME round trip); rank times are stored corrected
  clock_rtt_ms   REAL,              -- that round trip: the offset is right within half of it
  PRIMARY KEY (run_id, worker)
);

-- One row per finished epoch (train) or per finished generation (datagen, epoch 0).
CREATE TABLE IF NOT EXISTS epochs (
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  epoch         INTEGER NOT NULL,   -- 1-based for train, 0 for datagen
  samples       INTEGER NOT NULL,   -- samples read by all ranks (files written for datagen)
  dropped       INTEGER NOT NULL,   -- S - R*k samples no rank owned this epoch
  bytes         INTEGER NOT NULL,
  duration_s    REAL NOT NULL,      -- first rank start to last rank finish
  samples_per_s REAL NOT NULL,
  mib_per_s     REAL NOT NULL,
  mb_per_s      REAL NOT NULL,
  au_mean       REAL,               -- mean of rank_epochs.au (NULL for datagen)
  batches       INTEGER NOT NULL DEFAULT 0, -- steps per rank
  barrier_p50_ms REAL,              -- step barrier round trip (a rank's STEP sent to GO received),
  barrier_p99_ms REAL,              --   over every step of every rank, from merged log-linear bins
  read_p50_ms   REAL,               -- sample read latency (the I/O engine's time per sample),
  read_p99_ms   REAL,               --   over every sample of every rank (train), from read_latency
  resident_bytes INTEGER NOT NULL DEFAULT 0, -- page cache (train, file storage): bytes of the sampled reads
  checked_bytes  INTEGER NOT NULL DEFAULT 0, --   ranges resident just before they were read, of the bytes checked
                                    --   (mincore; 0 of 0 with O_DIRECT, an object store, synthetic storage)
  resident_fraction REAL,           -- resident_bytes / checked_bytes (NULL when nothing was checked)
  from_memory   INTEGER,            -- 1 when at least half the checked bytes were resident: the epoch was
                                    --   served (mostly) from the page cache, not the storage; NULL: not checked
  -- DLIO's epoch figures (train; NULL for datagen and before schema 9)
  train_au_percentage REAL,         -- mean over ranks of rank_epochs.dlio_au_percentage
  train_throughput_samples_per_second REAL, -- sum over ranks of rank_epochs.dlio_throughput_samples_per_second
  train_io_MB_per_second REAL,      -- train_throughput_samples_per_second x runs.record_size_bytes / 2^20
  unused_files  INTEGER,            -- train: listed files no rank read this epoch (DLIO's round-robin trim, extra files)
  barrier_own_p50_ms REAL,          -- the step barrier's own cost, without waiting for slower ranks: with one
  barrier_own_p99_ms REAL,          --   worker, its last rank's compute deadline to the release in the worker;
                                    --   with several, STEP sent to GO received on the worker whose STEP completed
                                    --   the barrier (NULL: no step barrier)
  PRIMARY KEY (run_id, epoch)
);

-- Sample read latency of a train epoch: the log-linear histogram (lib/metrics/histogram.h) merged
-- over the epoch's ranks, one row per non-empty bin; the counts of an epoch add up to
-- epochs.samples. A bin holds latencies from bin_low_us up to, not including, bin_high_us
-- (the last bin, from 2^41 us = 25 days, holds everything above its low end). Schema 15 gave the
-- two columns these names (the upgrade renames them; docs/RESULTS.md lists the old names).
-- Synthetic storage does no I/O: its reads count as 0 us.
CREATE TABLE IF NOT EXISTS read_latency (
  run_id         INTEGER NOT NULL REFERENCES runs(id),
  epoch          INTEGER NOT NULL,
  bin_low_us  INTEGER NOT NULL,
  bin_high_us INTEGER NOT NULL,
  count          INTEGER NOT NULL,
  PRIMARY KEY (run_id, epoch, bin_low_us)
);

-- One row per rank per epoch.
CREATE TABLE IF NOT EXISTS rank_epochs (
  run_id       INTEGER NOT NULL REFERENCES runs(id),
  epoch        INTEGER NOT NULL,
  rank         INTEGER NOT NULL,
  host         TEXT NOT NULL,
  samples      INTEGER NOT NULL,    -- samples (files for datagen) this rank handled
  batches      INTEGER NOT NULL,    -- steps computed
  bytes        INTEGER NOT NULL,
  started_at   REAL NOT NULL,
  finished_at  REAL NOT NULL,
  compute_s    REAL NOT NULL,       -- emulated compute, steps after the first
  au           REAL,                -- shardbench's own: compute_s / (wall time after the first step)
  io_wait_s    REAL NOT NULL DEFAULT 0, -- time the accelerator waited for data
  barrier_s    REAL NOT NULL DEFAULT 0, -- time spent in step barriers
  resident_bytes INTEGER NOT NULL DEFAULT 0, -- page cache: bytes of this rank's sampled reads resident
  checked_bytes  INTEGER NOT NULL DEFAULT 0, --   just before they were read, of the bytes checked
  -- DLIO's figures of the rank (train; NULL for datagen and before schema 9). A step's proc time
  -- runs from the rank's release from the previous barrier (or the epoch's start) to its compute's end.
  metric_steps      INTEGER,        -- steps in DLIO's window (exclude_start_steps .. N - exclude_end_steps)
  metric_compute_s  REAL,           -- their compute time
  metric_excluded_s REAL,           -- proc time of the steps left out (subtracted from the span)
  metric_time_s     REAL,           -- the time DLIO divides by: the rank's span (on its own clock) less metric_excluded_s
  dlio_au_percentage REAL,          -- 100 x metric_compute_s / metric_time_s
  dlio_throughput_samples_per_second REAL, -- metric_steps x batch size / metric_time_s
  compute_all_s REAL,               -- every step's compute, the first included (NULL before schema 16)
  held_s       REAL,                -- how long the other workers waited at step barriers for this rank's worker:
                                    -- per step it completed the barrier, from the arrival before it of another
                                    -- host (of any worker on one host); the same for its worker's ranks (NULL
                                    -- before schema 16; 0 without a step barrier: sync none, one worker)
  PRIMARY KEY (run_id, epoch, rank)
);

-- One row per evaluation (workflow.evaluation): the evaluation set under valid/ read after training
-- epoch `epoch` (evaluation.eval_after_epoch, epochs_between_evals), as DLIO's _eval reads it.
-- Its time is not in the epochs rows: the training figures are those of the training steps alone.
CREATE TABLE IF NOT EXISTS evals (
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  epoch         INTEGER NOT NULL,   -- the training epoch it followed
  samples       INTEGER NOT NULL,   -- samples read by all ranks
  dropped       INTEGER NOT NULL,   -- samples of the set no rank read (the sampler's remainder)
  bytes         INTEGER NOT NULL,
  steps         INTEGER NOT NULL,   -- steps per rank (reader.batch_size_eval samples each)
  duration_s    REAL NOT NULL,      -- first rank start to last rank finish
  samples_per_s REAL,
  mib_per_s     REAL,
  -- DLIO's figures (statscounter compute_metrics_eval): AU over the metric window, throughput over
  -- every step; the ranks' mean AU and summed throughput
  eval_au_percentage REAL,
  eval_throughput_samples_per_second REAL,
  eval_io_MB_per_second REAL,       -- that x runs.record_size_bytes / 2^20
  read_p50_ms   REAL,               -- sample read latency over every read of the evaluation
  read_p99_ms   REAL,
  PRIMARY KEY (run_id, epoch)
);

-- One row per rank per evaluation.
CREATE TABLE IF NOT EXISTS eval_ranks (
  run_id       INTEGER NOT NULL REFERENCES runs(id),
  epoch        INTEGER NOT NULL,    -- evals.epoch
  rank         INTEGER NOT NULL,
  host         TEXT NOT NULL,
  samples      INTEGER NOT NULL,
  steps        INTEGER NOT NULL,
  bytes        INTEGER NOT NULL,
  started_at   REAL NOT NULL,
  finished_at  REAL NOT NULL,
  compute_s    REAL NOT NULL,       -- emulated evaluation.eval_time of the steps after the first (as rank_epochs)
  io_wait_s    REAL NOT NULL,       -- waiting for data
  dlio_au_percentage REAL,          -- window compute / (span - excluded steps' proc time) x 100
  dlio_throughput_samples_per_second REAL, -- steps x batch_size_eval / span
  PRIMARY KEY (run_id, epoch, rank)
);

-- One row per checkpoint written or read by a `shardbench checkpoint` run, in run order.
CREATE TABLE IF NOT EXISTS checkpoints (
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  seq           INTEGER NOT NULL,   -- 1-based order in the run: the writes, then the reads
  op            TEXT NOT NULL,      -- 'write' | 'read'
  checkpoint    INTEGER NOT NULL,   -- 1-based checkpoint number (a read reads the files of that write)
  ranks         INTEGER NOT NULL,   -- ranks that took part
  files         INTEGER NOT NULL,   -- files (objects) over all ranks
  bytes         INTEGER NOT NULL,   -- over all ranks
  duration_s    REAL NOT NULL,      -- slowest rank's time (MLPerf Storage: max over processes)
  span_s        REAL NOT NULL,      -- first rank start to last rank finish
  mb_per_s      REAL,               -- bytes / 10^6 / duration_s
  gib_per_s     REAL,               -- bytes / 2^30 / duration_s
  min_rank_mb_per_s REAL,           -- slowest rank's own bytes / 10^6 / its time (ranks with bytes)
  -- DLIO's figures (statscounter.py end_save_ckpt / end_load_ckpt), schema 14:
  dlio_bytes      INTEGER,          -- the checkpoint_size DLIO divides by: the sizes it derives, over all ranks
                                    --   (not model.layer_parameters' / optimization_groups'; a model.type other
                                    --   than transformer: model_size_bytes once); runs before 14: bytes
  dlio_duration_s REAL,             -- rank 0's own time; with checkpoint.rank_sync (the checkpoint workflow
                                    --   only) until the last rank finished, as DLIO's barrier makes it
  dlio_gib_per_s  REAL,             -- dlio_bytes / 2^30 / dlio_duration_s (DLIO's "GB/s")
  rank_sync       INTEGER,          -- 1: timed as DLIO's checkpoint.rank_sync (each rank until the last finished)
  PRIMARY KEY (run_id, seq)
);

-- One row per rank per checkpoint.
CREATE TABLE IF NOT EXISTS checkpoint_ranks (
  run_id      INTEGER NOT NULL REFERENCES runs(id),
  seq         INTEGER NOT NULL,     -- checkpoints.seq
  rank        INTEGER NOT NULL,
  op          TEXT NOT NULL,        -- 'write' | 'read'
  checkpoint  INTEGER NOT NULL,
  host        TEXT NOT NULL,
  files       INTEGER NOT NULL,     -- model and optimizer state files of the rank (0 to 2)
  bytes       INTEGER NOT NULL,
  started_at  REAL NOT NULL,
  finished_at REAL NOT NULL,        -- after fsync (files) or the completed upload (object store)
  duration_s  REAL NOT NULL,
  mb_per_s    REAL,                 -- bytes / 10^6 / duration_s
  PRIMARY KEY (run_id, seq, rank)
);

-- Per-rank counters, one row per rank per second (deltas over that second).
CREATE TABLE IF NOT EXISTS timeseries (
  run_id     INTEGER NOT NULL REFERENCES runs(id),
  t          REAL NOT NULL,         -- Unix seconds at the end of the interval
  epoch      INTEGER NOT NULL,
  rank       INTEGER NOT NULL,
  samples    INTEGER NOT NULL,
  bytes      INTEGER NOT NULL,
  reads      INTEGER NOT NULL,
  read_s     REAL NOT NULL,         -- summed read latency
  compute_s  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS timeseries_run ON timeseries(run_id, rank, t);

-- Errors reported by workers or found by the coordinator.
CREATE TABLE IF NOT EXISTS errors (
  run_id    INTEGER NOT NULL REFERENCES runs(id),
  t         REAL NOT NULL,
  rank      INTEGER,                -- NULL when not tied to one rank
  host      TEXT,
  op        TEXT NOT NULL,          -- 'read', 'write', 'list', 'heartbeat', ...
  target    TEXT,                   -- path or key
  errno_val INTEGER,
  message   TEXT NOT NULL,
  endpoint    TEXT,                 -- endpoint of the failed request (NULL for files)
  http_status INTEGER,              -- HTTP status of the last attempt (0: no reply)
  service_code TEXT,                -- the storage service's own error code from its reply
                                    --   (an object store's NoSuchKey, BlobNotFound; NULL: none)
  library_code INTEGER,             -- the client library's result code for the transfer
                                    --   (the HTTP library's, 28 a timeout, 7 no connection; 0: none)
  attempt     INTEGER               -- attempt that failed last, retries included
  -- schema 15 gave service_code and library_code these names; the upgrade renames the columns,
  -- keeping every value (docs/RESULTS.md lists the old names)
);

-- Per-endpoint traffic of a run (engines with endpoints), summed over ranks and phases of that run.
CREATE TABLE IF NOT EXISTS endpoints (
  run_id    INTEGER NOT NULL REFERENCES runs(id),
  endpoint  TEXT NOT NULL,
  requests  INTEGER NOT NULL,       -- attempts sent, retries included
  bytes     INTEGER NOT NULL,       -- payload bytes received or sent
  errors    INTEGER NOT NULL,       -- failed attempts
  retries   INTEGER NOT NULL,       -- attempts that were retried
  mean_ms   REAL,                   -- latency of successful requests, from merged log-linear bins
  p50_ms    REAL,
  p90_ms    REAL,
  p99_ms    REAL,
  max_ms    REAL,
  PRIMARY KEY (run_id, endpoint)
);

-- Dataset listings, made once and reused (see catalog.c).
CREATE TABLE IF NOT EXISTS catalogs (
  id          INTEGER PRIMARY KEY,
  uri         TEXT NOT NULL,        -- e.g. file:///data/unet3d/train (valid: the evaluation set's)
  prefix      TEXT NOT NULL,        -- common prefix of every key, stored once
  fingerprint TEXT NOT NULL,        -- directory state when listed; a change relists
  listed_at   REAL NOT NULL,
  list_s      REAL NOT NULL,        -- time the listing took
  count       INTEGER NOT NULL,
  bytes       INTEGER NOT NULL,
  naming      TEXT                  -- "dlio PREFIX FORMAT FILES SUBFOLDERS[ valid]": objects whose key is the DLIO
                                    -- name of their idx store NULL instead (see objects.key)
);
CREATE INDEX IF NOT EXISTS catalogs_uri ON catalogs(uri);

-- Objects of a catalog in name order: idx 0..count-1. key is relative to catalogs.prefix.
-- The integer primary key oid = catalog_id * 2^40 + idx makes a lookup by (catalog, idx) a
-- plain rowid seek, the cheapest lookup SQLite has (the coordinator does one per sample);
-- catalog_id and idx are computed columns for queries.
-- Keys are stored compactly: the prefix once per catalog, and key NULL when the key is the
-- DLIO name (catalogs.naming) of the object's position in name order, which is true of every
-- object of a dataset shardbench or DLIO generated. A row is then a few bytes, so catalogs of
-- 10^7 objects stay in SQLite's page cache. When every key is such a name and every size the
-- same, a catalog has no objects row at all: object idx is the DLIO name of position idx under
-- catalogs.naming, of size catalogs.bytes / catalogs.count.
CREATE TABLE IF NOT EXISTS objects (
  oid        INTEGER PRIMARY KEY,
  key        TEXT,
  size       INTEGER NOT NULL,
  catalog_id INTEGER GENERATED ALWAYS AS (oid >> 40) VIRTUAL,
  idx        INTEGER GENERATED ALWAYS AS (oid & 1099511627775) VIRTUAL
);

-- one row per `shardbench run|checkpoint --runs N` command: N runs of the same
-- workload and overrides back to back, the first `warmup` of them warm-up runs (MLPerf Storage: 6 runs, 1
-- warm-up and 5 measured). Its runs point here (runs.series_id, series_index, warmup).
CREATE TABLE IF NOT EXISTS series (
  id            INTEGER PRIMARY KEY,
  kind          TEXT NOT NULL,      -- 'train' | 'checkpoint'
  workload      TEXT NOT NULL,      -- preset name or YAML path, as runs.workload
  label         TEXT,               -- --label
  runs          INTEGER NOT NULL,   -- runs asked for (--runs N)
  warmup        INTEGER NOT NULL,   -- of them warm-up runs (--warmup K), the first K
  status        TEXT NOT NULL,      -- 'running' | 'succeeded' (every run did) | 'failed' (a run failed: the series
                                    --   stopped there) | 'aborted' (stopped by a signal) | 'interrupted' (its
                                    --   coordinator is gone)
  started_at    REAL NOT NULL,
  finished_at   REAL,
  coordinator_host TEXT,            -- where the coordinator ran
  coordinator_pid  INTEGER          -- its pid: a dead one marks the series 'interrupted'
);

-- sample read latency of a train epoch per host, the histograms of that
-- host's ranks merged (RANK_DONE's read_latency), one row per non-empty bin, as read_latency
-- holds them merged over every host; the counts of an epoch's hosts add up to read_latency's. A
-- host is run_workers.host (the name its worker reported). Empty for runs before schema 12.
CREATE TABLE IF NOT EXISTS host_read_latency (
  run_id         INTEGER NOT NULL REFERENCES runs(id),
  epoch          INTEGER NOT NULL,
  host           TEXT NOT NULL,
  bin_low_us  INTEGER NOT NULL,
  bin_high_us INTEGER NOT NULL,
  count          INTEGER NOT NULL,
  PRIMARY KEY (run_id, epoch, host, bin_low_us)
);

-- what each run was given, so that a run explains itself and MLPerf
-- Storage's results directory (coordinator/report/results_dir.h, `--results-dir`) is written from
-- the database alone. Written when the run row is; runs of schema 12 and older have no rows here.
-- No credential is ever stored: values of secret keys read <redacted>, as in runs.config.
CREATE TABLE IF NOT EXISTS run_inputs (
  run_id        INTEGER PRIMARY KEY REFERENCES runs(id),
  version       TEXT NOT NULL,      -- the shardbench version that ran it (sb_version.h)
  command_line  TEXT NOT NULL,      -- the command line as given, each word shell-quoted where needed
  full_config   TEXT NOT NULL,      -- the effective configuration with every known key's default
                                    --   filled in, YAML (runs.config holds only the keys given)
  df            TEXT                -- at the run's start, df(1)'s lines (1K-blocks) of the file systems holding
                                    --   the data or checkpoint folder and the results directory, as MLPerf
                                    --   Storage's rule 3.4.2 reads them (NULL: none is a local folder)
);

-- The overrides of a run as the user gave them (KEY=VALUE, ++workload.KEY=VALUE), in order.
CREATE TABLE IF NOT EXISTS run_overrides (
  run_id    INTEGER NOT NULL REFERENCES runs(id),
  seq       INTEGER NOT NULL,       -- 1-based, in command-line order
  override  TEXT NOT NULL,          -- as written on the command line
  PRIMARY KEY (run_id, seq)
);

-- A host as DLIO describes it in summary.json and N_output.json (host_cpuinfo, host_meminfo,
-- host_processor_name): each worker host as its first worker sent it in HELLO (since
-- protocol 12), and the coordinator's host, read from /proc at the run's start, unless a worker's
-- row of that host name replaced it (docs/DLIO.md).
CREATE TABLE IF NOT EXISTS run_host_info (
  run_id    INTEGER NOT NULL REFERENCES runs(id),
  host      TEXT NOT NULL,          -- host name (gethostname), as run_workers.host
  processor TEXT NOT NULL,          -- machine name (uname -m), as Python's platform.processor() on Linux
  cpuinfo   TEXT NOT NULL,          -- the last processor's block of /proc/cpuinfo (at most 16 KiB)
  meminfo   TEXT NOT NULL,          -- /proc/meminfo as read (at most 16 KiB)
  PRIMARY KEY (run_id, host)
);

-- KV cache (`shardbench kvcache`, runs.kind 'kvcache'; schema 17): MLPerf Storage's KV-cache benchmark
-- (mlcommons/storage kv_cache_benchmark), one row per run, per trial, per rank and trial.
CREATE TABLE IF NOT EXISTS kv_runs (
  run_id        INTEGER PRIMARY KEY REFERENCES runs(id),
  option        INTEGER NOT NULL,     -- MLPerf v3 option 1, 2 or 3; 0: none (settings of one's own)
  model         TEXT NOT NULL,        -- kvcache.model (the reference's --model)
  users         INTEGER NOT NULL,     -- per rank
  duration_s    REAL NOT NULL,
  trials        INTEGER NOT NULL,     -- asked for
  cpu_mem_gb    REAL NOT NULL,
  max_concurrent_allocs INTEGER NOT NULL,
  seed          INTEGER NOT NULL,     -- rank r seeds its users with seed + r
  generation_mode TEXT NOT NULL,
  kv_bytes_per_position INTEGER NOT NULL, -- bytes a token adds to an entry: layers x kv_heads x head_dim x 2
                                      --   x bytes per element (no column name says "token": see test_no_secret_columns)
  storage_check TEXT NOT NULL,        -- 'ok', 'unverifiable' (no block device to check against) or 'refused'
  read_gib_per_s  REAL,               -- mean over finished trials of kv_trials.read_gib_per_s
  write_gib_per_s REAL,
  storage_p95_ms  REAL                -- max over ranks and trials of each rank's storage_io_latency p95
);

CREATE TABLE IF NOT EXISTS kv_trials (
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  trial         INTEGER NOT NULL,     -- 1-based
  started_at    REAL NOT NULL,        -- GO sent to every worker: every rank's window starts
  finished_at   REAL NOT NULL,        -- the last rank's window end
  ranks         INTEGER NOT NULL,     -- ranks that reported (always all: a lost rank fails the run)
  requests      INTEGER NOT NULL,
  generated     INTEGER NOT NULL,     -- tokens generated
  storage_read_bytes  INTEGER NOT NULL,
  storage_write_bytes INTEGER NOT NULL,
  read_gib_per_s  REAL NOT NULL,      -- sum over ranks of each rank's storage read GiB / its elapsed s
  write_gib_per_s REAL NOT NULL,
  storage_p95_ms  REAL,               -- max over ranks of storage_io_latency p95 (NULL: no request)
  PRIMARY KEY (run_id, trial)
);

CREATE TABLE IF NOT EXISTS kv_ranks (
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  trial         INTEGER NOT NULL,
  rank          INTEGER NOT NULL,
  host          TEXT NOT NULL,
  elapsed_s     REAL NOT NULL,
  started_at    REAL,                 -- the rank's window on the coordinator's clock (its RANK_DONE, the
  finished_at   REAL,                 --   worker's clock offset taken off): how close together GO started them
  requests      INTEGER NOT NULL,
  generated     INTEGER NOT NULL,     -- tokens generated (the requests' generate_tokens)
  chatbot       INTEGER NOT NULL,     -- requests completed per user type
  coding        INTEGER NOT NULL,
  document      INTEGER NOT NULL,
  interactive   INTEGER NOT NULL,     -- requests completed per QoS class
  responsive    INTEGER NOT NULL,
  batch         INTEGER NOT NULL,
  users_chatbot INTEGER NOT NULL,     -- the rank's users per type and class (seed + rank)
  users_coding  INTEGER NOT NULL,
  users_document INTEGER NOT NULL,
  users_interactive INTEGER NOT NULL,
  users_responsive  INTEGER NOT NULL,
  users_batch   INTEGER NOT NULL,
  write_ops     INTEGER NOT NULL,     -- the reference's write_operations (every tier)
  read_ops      INTEGER NOT NULL,     -- read_operations
  prefill_writes INTEGER NOT NULL,
  decode_reads  INTEGER NOT NULL,
  cache_hits    INTEGER NOT NULL,
  cache_misses  INTEGER NOT NULL,
  multi_turn_hits   INTEGER NOT NULL,
  multi_turn_misses INTEGER NOT NULL,
  storage_entries INTEGER NOT NULL,
  cpu_entries   INTEGER NOT NULL,
  evictions     INTEGER NOT NULL,
  offloads_cpu  INTEGER NOT NULL,
  offloads_storage INTEGER NOT NULL,
  system_prompt_hits INTEGER NOT NULL,
  queue_max     INTEGER NOT NULL,     -- the most requests waiting in the rank's queue at once
  storage_write_bytes INTEGER NOT NULL,
  storage_read_bytes  INTEGER NOT NULL,
  cpu_write_bytes INTEGER NOT NULL,
  cpu_read_bytes  INTEGER NOT NULL,
  read_gib_per_s  REAL NOT NULL,      -- the reference's tier_storage_read_bandwidth_gbps (GiB/s)
  write_gib_per_s REAL NOT NULL,
  storage_check TEXT,                 -- what the rank's storage check measured
  results_json  TEXT NOT NULL,        -- the rank's kvcache_results JSON (the reference's fields)
  PRIMARY KEY (run_id, trial, rank)
);

-- Latency of a rank in a trial, milliseconds: what is one of write_device (the fsync span), write_host,
-- read_device (the load span), read_host, write_total, read_total, cpu_total, request_storage (a
-- request's storage I/O, the reference's storage_io_latency), request_e2e (end_to_end_latency).
CREATE TABLE IF NOT EXISTS kv_latency (
  run_id   INTEGER NOT NULL REFERENCES runs(id),
  trial    INTEGER NOT NULL,
  rank     INTEGER NOT NULL,
  what     TEXT NOT NULL,
  mean_ms  REAL NOT NULL,
  p50_ms   REAL NOT NULL,
  p95_ms   REAL NOT NULL,
  p99_ms   REAL NOT NULL,
  p999_ms  REAL NOT NULL,
  p9999_ms REAL NOT NULL,
  PRIMARY KEY (run_id, trial, rank, what)
);
