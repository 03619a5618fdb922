/* cli: argument parsing and the commands run, datagen and report. */
#include "cli.h"
#include "cli_series.h"
#include "config.h"
#include "datasize.h"
#include "dlio_args.h"
#include "embedded.h"
#include "host_proc.h"
#include "log.h"
#include "progress.h"
#include "metrics_server.h"
#include "report.h"
#include "resultdb.h"
#include "results_dir.h"
#include "results_dir_query.h"
#include "results_stamp.h"
#include "security.h"
#include "series_query.h"
#include "series_report.h"
#include "session.h"
#include "sb_version.h"
#include "slurm.h"
#include "util.h"
#include "workload.h"

#include <czmq.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define EXIT_RUN_FAILED 1
#define EXIT_USAGE 2

static void
s_usage_main (FILE *f)
{
    fprintf (f,
             "usage: shardbench COMMAND [ARGS]\n"
             "\n"
             "Distributed storage benchmark for AI training I/O (DLIO / MLPerf Storage workloads).\n"
             "\n"
             "commands:\n"
             "  run       [WORKLOAD] [KEY=VALUE ...] [options]  train (generating the dataset first if missing)\n"
             "  datagen   [WORKLOAD] [KEY=VALUE ...] [options]  only generate the dataset\n"
             "  catalog   [WORKLOAD] [KEY=VALUE ...] [--relist] [--db FILE]\n"
             "                                                 list the dataset into the catalog (or reuse it)\n"
             "  checkpoint [WORKLOAD] [KEY=VALUE ...] [--subset] [options]\n"
             "                                                 write, then read LLM checkpoints (llama3_* presets)\n"
             "  kvcache   [1|2|3] [kvcache.KEY=VALUE ...] [options]\n"
             "                                                 MLPerf Storage's KV-cache benchmark (option 1, 2, 3)\n"
             "  report    [RUN_ID|last] [--json | --csv [VIEW] | --html FILE | --results-dir DIR]\n"
             "            [--db FILE]                          print a run's summary again, or as JSON/CSV,\n"
             "                                                 or write MLPerf Storage's results directory\n"
             "  compare   RUN_A RUN_B [RUN_C ...] [--db FILE]   runs side by side: config diff, figures, ratios to A\n"
             "  series    [SERIES_ID|last] [--json] [--db FILE] a series of runs (--runs N): each run, the\n"
             "                                                 aggregate and MLPerf Storage's rules\n"
             "  runs      [--json] [--db FILE]                  list the runs, newest last\n"
             "  workloads                                      list the built-in workload presets\n"
             "  keys      [--dir DIR] [--worker NAME ...]       create CURVE certificates (see --keys)\n"
             "  datasize  [WORKLOAD] --hosts H --host-memory-gb M --accelerators A\n"
             "                                                 minimum dataset of the MLPerf Storage rules\n"
             "\n"
             "`shardbench COMMAND --help` describes each command. Exit status: 0 success,\n"
             "1 the run failed, 2 usage or configuration error, 128 + N stopped by signal N\n"
             "(130 SIGINT, 143 SIGTERM, 129 SIGHUP).\n");
}

/* The help of run, datagen, catalog and checkpoint: each lists only the
 * options its command takes (s_cmd_run refuses the others), with an example. */
static void
s_usage_run (FILE *f, sb_session_kind_t kind)
{
    int train = kind == SB_SESSION_TRAIN, datagen = kind == SB_SESSION_DATAGEN, catalog = kind == SB_SESSION_CATALOG,
        ckpt = kind == SB_SESSION_CHECKPOINT;
    if (train)
        fprintf (f,
                 "usage: shardbench run [WORKLOAD] [KEY=VALUE ...] [--accelerators A] [--local N | --workers N |\n"
                 "                  --hosts H,H,... | --hostfile FILE | --slurm] [--bind ENDPOINT] [--keys DIR | --insecure]\n"
                 "                  [--db FILE] [--seed S] [--relist] [--join-timeout S] [--progress MODE]\n"
                 "                  [--progress-interval S] [--metrics ADDR [--metrics-linger S]] [-v]\n"
                 "                  [--runs N [--warmup K]] [--label TEXT]\n"
                 "                  [--results-dir DIR [--submitter NAME] [--system NAME]]\n"
                 "\n"
                 "Train: list the dataset into the catalog (or reuse it), start the workers and read it for\n"
                 "train.epochs epochs as DLIO would (generating it first with workflow.generate_data).\n");
    else if (datagen)
        fprintf (f,
                 "usage: shardbench datagen [WORKLOAD] [KEY=VALUE ...] [--clean] [--dry-run] [--accelerators A]\n"
                 "                  [--local N | --workers N | --hosts H,H,... | --hostfile FILE | --slurm]\n"
                 "                  [--bind ENDPOINT] [--keys DIR | --insecure] [--db FILE] [--seed S]\n"
                 "                  [--join-timeout S] [--progress MODE] [--metrics ADDR [--metrics-linger S]]\n"
                 "                  [-v] [--label TEXT]\n"
                 "                  [--results-dir DIR [--submitter NAME] [--system NAME]]\n"
                 "\n"
                 "Only generate the dataset (DATA_FOLDER/train/, valid/ with dataset.num_files_eval), as\n"
                 "DLIO's workflow.generate_data, spread over the workers' ranks.\n");
    else if (catalog)
        fprintf (f,
                 "usage: shardbench catalog [WORKLOAD] [KEY=VALUE ...] [--relist] [--db FILE] [-v]\n"
                 "\n"
                 "List the dataset into the catalog of the result database, or reuse it when it is current;\n"
                 "starts no workers.\n");
    else
        fprintf (f,
                 "usage: shardbench checkpoint [WORKLOAD] [KEY=VALUE ...] [--subset] [--accelerators A]\n"
                 "                  [--local N | --workers N | --hosts H,H,... | --hostfile FILE | --slurm]\n"
                 "                  [--bind ENDPOINT] [--keys DIR | --insecure] [--db FILE] [--join-timeout S]\n"
                 "                  [--progress MODE] [--metrics ADDR [--metrics-linger S]] [-v]\n"
                 "                  [--runs N [--warmup K]] [--label TEXT]\n"
                 "                  [--results-dir DIR [--submitter NAME] [--system NAME]]\n"
                 "\n"
                 "Write, then read back LLM checkpoints (the llama3_* presets), as DLIO's checkpoint workflow.\n"
                 "DLIO's figures (save_/load_checkpoint_*) are DLIO's checkpoint size over rank 0's time\n"
                 "(checkpoint.rank_sync=true: until the last rank finished); shardbench's beside them\n"
                 "(*_slowest_rank_*) are the bytes of all ranks over the slowest rank's time.\n");
    fprintf (f,
             "\n"
             "WORKLOAD         a preset name (see `shardbench workloads`) or a DLIO workload YAML file;\n"
             "                 default: %s\n"
             "KEY=VALUE        override a workload key, e.g. %s;\n"
             "                 a key shardbench does not know is an error naming the nearest keys\n"
             "dlio_benchmark's command line, as mlpstorage builds it, is taken as it is:\n"
             "workload=NAME    the workload CONFIG_DIR/workload/NAME.yaml (as Hydra finds it), else\n"
             "                 the preset NAME; instead of WORKLOAD\n"
             "--config-dir DIR the folder holding workload/ (also --config-dir=DIR)\n"
             "++workload.K=V   override workload key K (+workload.K=V and workload.K=V too); the\n"
             "                 + forms may add a key shardbench does not know (a warning, as in DLIO)\n",
             ckpt ? "llama3_8b" : "quickstart",
             ckpt ? "checkpoint.num_checkpoints_read=0" : catalog ? "dataset.num_files_train=128"
                  : "reader.batch_size=4 train.epochs=2");
    if (!catalog)
        fprintf (f,
                 "++hydra.run.dir=DIR  the run's output folder: created, and the effective configuration\n"
                 "                 (credentials redacted) written to DIR/SUBDIR/config.yaml under\n"
                 "                 `workload:` with the overrides in DIR/SUBDIR/overrides.yaml, as\n"
                 "                 Hydra writes them for DLIO; when the run ends DLIO's other outputs\n"
                 "                 (summary.json and the per-rank files unless it only generated data,\n"
                 "                 dlio.log, SUBDIR/hydra.yaml) are written there too, and no more:\n"
                 "                 the metadata and stdout/stderr logs are mlpstorage's (also\n"
                 "                 hydra.run.dir=DIR);\n"
                 "                 a DIR holding such files already is refused unless --overwrite\n"
                 "++hydra.output_subdir=SUB  SUBDIR above (default .hydra; null: no configuration\n"
                 "                 written); other hydra.* settings are ignored with a warning\n"
                 "--overwrite      with ++hydra.run.dir: replace the results an earlier run left in DIR\n");
    if (datagen)
        fprintf (f,
                 "--clean          remove the dataset files of another generation from DATA_FOLDER/train\n"
                 "                 first (only PREFIX_I_of_N.EXT names and .*.tmp)\n"
                 "--dry-run        print the files, bytes, folder and free space it would use, and write\n"
                 "                 nothing\n");
    if (ckpt)
        fprintf (f,
                 "--subset         checkpoint.mode=subset: the ranks write only their share of the full\n"
                 "                 tensor x pipeline x data layout (MLPerf Storage subset mode)\n");
    if (!catalog)
        fprintf (f,
                 "--accelerators A total ranks (emulated accelerators), split evenly over the workers;\n"
                 "                 default: shardbench.accelerators of the workload, else 1\n"
                 "--local N        start N local shardbench-worker processes (default 1)\n"
                 "--workers N      wait for N workers started elsewhere with\n"
                 "                 `shardbench-worker --coordinator tcp://HOST:PORT`\n"
                 "--hosts H,H,...  start one worker per host over ssh (`ssh -o BatchMode=yes HOST\n"
                 "                 shardbench-worker ...`; $SHARDBENCH_SSH replaces `ssh`, the remote\n"
                 "                 binary is shardbench.remote_worker, else $SHARDBENCH_REMOTE_WORKER)\n"
                 "--hostfile FILE  the same, one host per line, # comments\n"
                 "--slurm          inside a Slurm allocation (sbatch, salloc): one worker on each node of\n"
                 "                 the job, started as one step (`srun --nodes=N --ntasks=N\n"
                 "                 --ntasks-per-node=1 --overlap --kill-on-bad-exit=1 WORKER ...`;\n"
                 "                 $SHARDBENCH_SRUN replaces `srun`, WORKER is shardbench.remote_worker,\n"
                 "                 else $SHARDBENCH_REMOTE_WORKER, else this worker binary's path)\n"
                 "--bind ENDPOINT  ZeroMQ endpoint to bind; default with --local: a Unix socket in a new\n"
                 "                 private (0700) folder, removed at the end; otherwise\n"
                 "                 tcp://*:5555 with --workers, --hosts and --slurm\n"
                 "--join-timeout S give up when the workers have not joined after S seconds\n"
                 "                 (default 60 with --local, --hosts and --slurm, 300 with --workers);\n"
                 "                 the error names who joined and who is missing\n"
                 "--keys DIR       ZeroMQ CURVE: encrypt all traffic and admit only workers holding a\n"
                 "                 certificate in DIR/allowed (make DIR with `shardbench keys`);\n"
                 "                 default $SHARDBENCH_KEYS. Required when --bind is not a loopback\n"
                 "                 address, unless --insecure\n"
                 "--insecure       bind a routable address without CURVE: any host can join and\n"
                 "                 read the workload\n");
    fprintf (f,
             "--db FILE        result database (SQLite), default ./shardbench.db\n"
             "--db-lock-timeout S  how long rows may wait while another process keeps the result\n"
             "                 database locked before the run fails (default 300; 0: forever);\n"
             "                 shorter waits delay the rows, not the run, and the summary says so\n");
    if (train || datagen)
        fprintf (f, "--seed S         run seed (default train.seed)\n");
    if (train || catalog)
        fprintf (f, "--relist         list the dataset again even when the catalog is current (a run on\n"
                    "                 synthetic:// derives its objects and lists nothing unless given this)\n");
    if (!catalog)
        fprintf (f,
                 "--progress MODE  live status on stderr: tty (a block redrawn in place), plain (a line\n"
                 "                 every --progress-interval S seconds, default 5), off; default auto:\n"
                 "                 tty on a terminal, else plain\n"
                 "--progress-interval S  seconds between two plain progress lines (default 5)\n"
                 "--metrics ADDR   serve the live figures for Prometheus at http://ADDR/metrics (plain\n"
                 "                 HTTP; ADDR: HOST:PORT, [IPV6]:PORT, or :PORT for every address; port\n"
                 "                 0 picks a free one, logged as `metrics: serving URL`); families and a\n"
                 "                 Grafana dashboard: docs/METRICS.md; e.g. --metrics 127.0.0.1:9464\n"
                 "--metrics-linger S  after the command, keep serving its final figures S seconds more\n"
                 "                 (default 0), for the next scrape; a signal ends the wait\n");
    if (train || ckpt)
        fprintf (f,
                 "--runs N         N runs back to back, a series: the same workload and overrides, each a\n"
                 "                 whole run with its own run id, rows and summary, then the series'\n"
                 "                 summary (see `shardbench series --help`); the dataset is generated at\n"
                 "                 most once, before the first (later runs never generate it). A run that\n"
                 "                 does not succeed ends the series (recorded 'failed'); a signal ends it\n"
                 "                 as it ends a run ('aborted', exit 128 + N). Not with --workers\n"
                 "--warmup K       (with --runs) the first K runs are warm-up runs, left out of the series'\n"
                 "                 aggregate; default 1 when N > 1 (MLPerf Storage: --runs 6 = 1 warm-up +\n"
                 "                 5 measured), else 0; K < N\n");
    if (!catalog)
        fprintf (f,
                 "--label TEXT     name the run (runs.label; `shardbench runs` lists it)%s\n"
                 "                 (at most 255 bytes of UTF-8)\n"
                 "--results-dir DIR  when the run ends (also when it failed), write each run of this command\n"
                 "                 as MLPerf Storage's results directory, from the result database:\n"
                 "                 %s\n"
                 "                 with summary.json, per-rank N_per_epoch_stats.json and N_output.json\n"
                 "                 (not for a datagen, as DLIO), TYPE_TS_metadata.json,\n"
                 "                 dlio_config/{config,overrides,hydra}.yaml, dlio.log and the\n"
                 "                 stdout/stderr logs. DIVISION: closed, or open when an override is\n"
                 "                 one only OPEN allows (mlpstorage's lists); TS: the run's start (local\n"
                 "                 time), the next second when that leaf exists. With ++hydra.run.dir=D the\n"
                 "                 last run's files go straight into D instead, as DLIO writes them\n"
                 "                 (docs/DLIO.md)\n"
                 "--submitter NAME the results directory's SUBMITTER (default: the one DIR/mlperf-results.yaml\n"
                 "                 pins, else shardbench, which that file then pins)\n"
                 "--system NAME    its SYSTEM (default the coordinator's host name)\n",
                 datagen ? "" : ", and the series",
                 ckpt ? "DIR/DIVISION/SUBMITTER/results/SYSTEM/checkpointing/MODEL/TS/"
                      : datagen ? "DIR/DIVISION/SUBMITTER/results/SYSTEM/training/MODEL/datagen/TS/"
                                : "DIR/DIVISION/SUBMITTER/results/SYSTEM/training/MODEL/{datagen,run}/TS/");
    fprintf (f, "-v, --verbose    debug messages\n\nexample:\n  %s\n\nworkload keys (defaults):\n",
             train ? "shardbench run unet3d_h100 --accelerators 8 --local 2 train.epochs=2 --results-dir results"
             : datagen ? "shardbench datagen unet3d_h100 --local 2 dataset.num_files_train=512"
             : catalog ? "shardbench catalog unet3d_h100 dataset.data_folder=/mnt/data/unet3d --relist"
                       : "shardbench checkpoint llama3_8b --accelerators 8 --local 2 checkpoint.scale=0.001");
    sb_workload_print_keys (f);
}

/* The help of kvcache: its own keys (lib/kvcache/kv_params.h), the common options. */
static void
s_usage_kvcache (FILE *f)
{
    fprintf (f,
             "usage: shardbench kvcache [1|2|3] [kvcache.KEY=VALUE ...] [storage.KEY=VALUE ...]\n"
             "                  [--accelerators N] [--local N | --workers N | --hosts H,H,... | --hostfile FILE |\n"
             "                  --slurm] [--bind ENDPOINT] [--keys DIR | --insecure] [--db FILE]\n"
             "                  [--join-timeout S] [--progress MODE] [--metrics ADDR [--metrics-linger S]] [-v]\n"
             "                  [--label TEXT] [--results-dir DIR [--submitter NAME] [--system NAME]]\n"
             "\n"
             "MLPerf Storage's KV-cache benchmark (mlcommons/storage kv_cache_benchmark), natively: each of\n"
             "the N ranks (--accelerators, the reference's MPI processes: one per client) emulates the\n"
             "reference's users, request queue and KV-cache tiers and writes, fsyncs, drops from the page\n"
             "cache and reads its entries (one .npy file a request, under kvcache.cache_dir/rank_<r>/)\n"
             "for kvcache.duration_s, kvcache.trials times. Every rank's window starts at the same instant\n"
             "and every rank's figures are collected; before the first trial each rank checks that fsync\n"
             "and the page-cache drop take effect on its storage, and the run is refused when they do not.\n"
             "Summary: per trial the ranks' storage read and write GiB/s summed, the largest storage I/O\n"
             "p95; the run: their means over trials and the largest p95 (docs/KVCACHE.md).\n"
             "\n"
             "1, 2, 3          MLPerf v3.0's CLOSED options (mlperf_wrapper.py): 1 llama3.1-8b x 200 users;\n"
             "                 2 llama3.1-8b x 100 users with a 4 GiB CPU tier; 3 llama3.1-70b-instruct x\n"
             "                 70 users, at most 4 allocations at once (1 and 2: 16); all 300 s, 3 trials,\n"
             "                 seed 42 + rank, generation none, 90 s pause before each trial. Keys given\n"
             "                 after it change it (the run is then OPEN). No option: the reference's\n"
             "                 defaults\n"
             "kvcache.KEY=VALUE  model (tiny-1b, mistral-7b, llama2-7b, llama3.1-8b, llama3.1-70b-instruct,\n"
             "                 deepseek-v3, qwen3-32b, gpt-oss-120b, gpt-oss-20b),\n"
             "                 users (per rank), duration_s, trials, pause_s, cache_dir (a folder, or\n"
             "                 s3://BUCKET/PREFIX with the storage.* keys), cpu_mem_gb, gpu_mem_gb (0 only),\n"
             "                 max_concurrent_allocs, seed, generation_mode (none, fast, realistic),\n"
             "                 multi_turn, prefix_caching, storage_capacity_gb, odirect, verify_storage\n"
             "                 (docs/CONFIGURATION.md); an unknown key names the nearest one\n"
             "storage.KEY=VALUE  the storage keys of a workload (docs/STORAGE.md), for an object store\n"
             "--accelerators N ranks (clients), split evenly over the workers (default 1)\n"
             "--local N, --workers N, --hosts, --hostfile, --slurm, --bind, --join-timeout, --keys,\n"
             "--insecure, --db, --db-lock-timeout, --progress, --progress-interval, --metrics,\n"
             "--metrics-linger, --label, -v: as for `shardbench run --help`\n"
             "--results-dir DIR  write the run as mlpstorage lays out a kv_cache run, from the result\n"
             "                 database (docs/RESULTS.md)\n"
             "--submitter NAME, --system NAME  as for `shardbench run --help`\n"
             "\n"
             "example:\n"
             "  shardbench kvcache 1 --accelerators 4 --local 2 kvcache.cache_dir=/mnt/nvme/kv --results-dir results\n"
             "  shardbench kvcache kvcache.model=tiny-1b kvcache.users=4 kvcache.duration_s=30 kvcache.trials=1\n");
}

static void
s_usage_report (FILE *f)
{
    fprintf (f,
             "usage: shardbench report [RUN_ID|last] [--json | --csv [VIEW] | --html FILE |\n"
             "                         --results-dir DIR [--submitter NAME] [--system NAME]] [--db FILE]\n"
             "\n"
             "Print the summary of a run from the result database (default: the newest run,\n"
             "database ./shardbench.db). Exit status 2 when the run does not exist.\n"
             "The summary, --json and --csv tell the same story: DLIO's metrics, read latency\n"
             "p50/p90/p99/p99.9 per epoch and p50/p99 per host, step barrier figures and the\n"
             "ranks' mean barrier wait, the rank the others waited for in each epoch (its\n"
             "worker held the step barriers longest, else the most time of its own) with its\n"
             "host and its split of the epoch's window, the page-cache flags\n"
             "(DLIO's potential_caching per host, epochs served from memory as measured), S3\n"
             "requests, errors and retries per endpoint; the status line says how many\n"
             "retries and errors a run had, even one that succeeded.\n"
             "--json           a train or checkpoint run as one JSON object with the metric\n"
             "                 names of DLIO's summary.json (\"metric\": train_au_percentage,\n"
             "                 ..., save_checkpoint_io_mean_GB_per_second, ...: DLIO's\n"
             "                 definitions, a checkpoint's DLIO size over rank 0's time) and a\n"
             "                 \"shardbench\" object (run id, status, passed, threshold,\n"
             "                 retries, endpoints, hosts, epochs with latency, slowest rank and\n"
             "                 per-host latency; checkpoints with their ranks and the\n"
             "                 slowest-rank figures, save_checkpoint_slowest_rank_*)\n"
             "--csv [VIEW]     one CSV table under a header line; VIEW:\n"
             "                 epochs       one row per epoch (default; a checkpoint run: per\n"
             "                              checkpoint)\n"
             "                 ranks        one row per rank and epoch (a checkpoint run: per rank\n"
             "                              and checkpoint, with its GB/s)\n"
             "                 detail       per epoch: read latency p50/p90/p99/p99.9, barrier\n"
             "                              figures and wait, page cache, the slowest rank's split\n"
             "                 hosts        read latency per epoch and host\n"
             "                 endpoints    S3 requests, bytes, errors, retries, latency per endpoint\n"
             "                 run          one row: status, retries, errors, page-cache flags,\n"
             "                              DLIO's headline and checkpoint metrics\n"
             "                 checkpoints  one row per checkpoint (duration, GB/s)\n"
             "                 a kvcache run has the views below and endpoints; any other\n"
             "                 view is refused (exit status 2), as trials and latency are\n"
             "                 on any other run:\n"
             "                 trials       one row per trial (its default): kv_trials, the\n"
             "                              largest device write/read p50/p95/p99 over\n"
             "                              the ranks, tokens/s\n"
             "                 ranks        one row per rank and trial: kv_ranks without\n"
             "                              its JSON, with its write_device, read_device,\n"
             "                              request_storage, request_e2e latency columns\n"
             "                 latency      kv_latency: per trial, rank and operation\n"
             "                 run          one row: the run, kv_runs, trials finished,\n"
             "                              requests, tokens/s, MLPerf Storage division\n"
             "--html FILE      a train or checkpoint run as one self-contained HTML page (\"-\":\n"
             "                 stdout); no script, nothing fetched from elsewhere. A run that\n"
             "                 did not succeed shows its error and errors first. Train runs:\n"
             "                 inline SVG charts of throughput per host over time (idle time\n"
             "                 at zero, epoch starts marked), AU per epoch against the\n"
             "                 threshold, compute / I/O wait / barrier wait per host and per\n"
             "                 rank, read latency histogram and p50/p90/p99/p99.9 per epoch\n"
             "                 and per host, the rank waited for in each epoch, barrier wait and\n"
             "                 page cache per epoch, requests, errors, retries and latency per\n"
             "                 S3 endpoint. Checkpoint runs: GiB/s per checkpoint written and\n"
             "                 read, MB/s per rank. Then the version, command line, overrides\n"
             "                 and every parameter of the run; a chart with no data is left\n"
             "                 out with a line saying why. Datagen runs are refused (exit\n"
             "                 status 2)\n"
             "--results-dir DIR  write the run as MLPerf Storage's results directory under DIR, the\n"
             "                 same files `run --results-dir` writes (see `shardbench run --help`),\n"
             "                 from the database alone; prints the leaf's path. A leaf that exists\n"
             "                 is never written into: the next second is taken. Exit status 2 when\n"
             "                 the run does not exist or DIR cannot be written\n"
             "--submitter NAME, --system NAME  its SUBMITTER (default: the one DIR/mlperf-results.yaml\n"
             "                 pins, else shardbench) and SYSTEM\n"
             "                 (default the host the run's coordinator ran on)\n");
}

static void
s_usage_compare (FILE *f)
{
    fprintf (f,
             "usage: shardbench compare RUN_A RUN_B [RUN_C ...] [--db FILE]\n"
             "\n"
             "Print 2 to 8 runs of the result database (default ./shardbench.db) side by side.\n"
             "First the configuration diff: workers, hosts, accelerators, then every key of\n"
             "the effective configuration whose value differs (defaults filled in, when every\n"
             "run recorded them: run_inputs.full_config; else runs.config, the keys given).\n"
             "Then the figures:\n"
             "workload, accelerators, hosts, epochs, DLIO's AU and throughput, samples/s and\n"
             "MiB/s (means over epochs), AU mean, verdict, step-barrier p50 (mean) and p99\n"
             "(max over epochs), read latency p50/p90/p99/p99.9 over the run, the ranks' mean\n"
             "barrier wait, the slowest rank's I/O wait, the page-cache flags, DLIO's\n"
             "checkpoint metrics, duration, retries and errors, each with its ratio to A\n"
             "(B/A, C/A, ...). Runs of different kinds (train, checkpoint, datagen) are said\n"
             "to be so, and only the figures at least two of them have are shown. Runs are\n"
             "run ids or 'last'. Exit status 2 when a run does not exist.\n"
             "kvcache runs (two or more): storage check, MLPerf Storage division, option,\n"
             "users per rank, trials finished, storage read and write GiB/s and tokens/s\n"
             "(means over the trials), storage p95 and device write/read p95 (the largest\n"
             "rank's), requests completed, and per user type and QoS class.\n");
}

static void
s_usage_series (FILE *f)
{
    fprintf (f,
             "usage: shardbench series [SERIES_ID|last] [--json] [--db FILE]\n"
             "\n"
             "Print the summary of a series of runs (`shardbench run|checkpoint --runs N`) from the result\n"
             "database (default: the newest series, database ./shardbench.db), as printed at its end: each\n"
             "run (index, run id, warm-up, status, DLIO's AU %%, samples/s and MB/s, verdict), then over the\n"
             "measured runs (warm-up runs left out) the mean and population standard deviation across the\n"
             "runs of each run's figure, and the totals: every epoch's samples and bytes over the epochs'\n"
             "summed time. Then MLPerf Storage's rules for the series: every run succeeded; training: 6 runs\n"
             "with at least 5 measured (1 warm-up + 5), every run's train_au_meet_expectation 'success' (the\n"
             "warm-up's too: the submission checker reads every run directory), each start-to-start gap\n"
             "between consecutive runs (whole seconds, as the run directories' names) under 2 x the shortest\n"
             "run; checkpointing: every measured run wrote and read 10 checkpoints. Checkpoint series show\n"
             "write and read MB/s. MB is DLIO's, 2^20 bytes.\n"
             "--json           the same as one JSON object (runs, measured, rules)\n"
             "Exit status 2 when the series does not exist.\n");
}

static void
s_usage_runs (FILE *f)
{
    fprintf (f,
             "usage: shardbench runs [--json] [--db FILE]\n"
             "\n"
             "List the runs of the result database (default ./shardbench.db), oldest first (newest last):\n"
             "id, kind, workload, label (--label), status, start (local time), duration, DLIO's AU mean %%,\n"
             "verdict (train runs that succeeded: PASS or FAIL against the AU threshold) and series\n"
             "(SERIES #INDEX, with 'warm-up' for a warm-up run).\n"
             "A kvcache run has no AU ('-'); its verdict is its storage check: ok, unverifiable (no\n"
             "block device to check against) or refused.\n"
             "--json           a JSON array, one object per run (started_at in Unix seconds)\n");
}

static int
s_parse_u64 (const char *opt, const char *text, uint64_t min, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = text && *text != '-' ? strtoull (text, &end, 10) : 0;
    if (!text || *text == '-' || errno || !end || *end || end == text || v < min) {
        fprintf (stderr, "shardbench: %s expects a whole number >= %llu, got '%s'\n", opt, (unsigned long long) min,
                 text ? text : "");
        return -1;
    }
    *out = v;
    return 0;
}

/* Worker binary: $SHARDBENCH_WORKER, else beside this binary (installed),
 * else ../worker/ (build tree). */
static void
s_worker_path (char *out, size_t size)
{
    const char *env = getenv ("SHARDBENCH_WORKER");
    if (env && *env) {
        snprintf (out, size, "%s", env);
        return;
    }
    char self[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        snprintf (out, size, "shardbench-worker");
        return;
    }
    self[n] = '\0';
    char *slash = strrchr (self, '/');
    if (slash)
        *slash = '\0';
    snprintf (out, size, "%s/shardbench-worker", self);
    if (access (out, X_OK) == 0)
        return;
    snprintf (out, size, "%s/../worker/shardbench-worker", self);
}

typedef struct {
    const char *workload;
    const char *db_path;
    const char *bind;
    uint64_t    accelerators, local, workers, seed;
    int         have_seed, relist;
    double      join_timeout;
    int         have_join_timeout;
    const char *keys_dir;       /* --keys or $SHARDBENCH_KEYS: CURVE */
    int         insecure;       /* --insecure: plain TCP on a routable address */
    char      **hosts;          /* --hosts / --hostfile: owned copies */
    size_t      nhosts;
    int         hosts_given;
    int         slurm;          /* --slurm: hosts are the nodes of our Slurm job */
    sb_progress_mode_t progress;    /* --progress */
    uint64_t    progress_interval;  /* --progress-interval */
    int         clean, dry_run;     /* datagen --clean, --dry-run */
    uint64_t    db_lock_timeout;    /* --db-lock-timeout */
    uint64_t    runs, warmup;       /* --runs N, --warmup K */
    int         have_runs, have_warmup;
    const char *label;              /* --label TEXT */
    const char *results_dir;        /* --results-dir */
    const char *submitter, *system; /* --submitter, --system */
    int         overwrite;          /* --overwrite: hydra.run.dir's earlier results are replaced */
    const char *metrics;            /* --metrics ADDR */
    uint64_t    metrics_linger;     /* --metrics-linger S */
} s_run_args_t;

/* what a run is given, recorded with it */

/* argv as one shell-quoted line, the values of secret keys <redacted>;
 * NULL when out of memory. */
static char *
s_command_line (const char *cmd, int argc, char **argv)
{
    size_t cap = 64 + strlen (cmd);
    for (int i = 0; i < argc; i++)
        cap += 4 * strlen (argv[i]) + 16;
    char *line = malloc (cap);
    if (!line)
        return NULL;
    size_t n = (size_t) snprintf (line, cap, "shardbench %s", cmd);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *value = a[0] != '-' ? sb_workload_secret_value (a) : NULL;
        int secret = value != NULL;
        size_t end = secret ? (size_t) (value - a) : strlen (a);
        int plain = end > 0 && strspn (a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=+:,@%-") >= end;
        line[n++] = ' ';
        if (!plain)
            line[n++] = '\'';
        for (size_t c = 0; c < end; c++) {
            if (a[c] == '\'') {
                memcpy (line + n, "'\\''", 4);
                n += 4;
            }
            else
                line[n++] = a[c];
        }
        if (!plain)
            line[n++] = '\'';
        if (secret)
            n += (size_t) snprintf (line + n, cap - n, "<redacted>");
    }
    line[n] = '\0';
    return line;
}

/* cfg as YAML (*out, owned by the caller) with
 * workflow.generate_data false, as the runs of a series after the first
 * run (they do not generate the dataset, cli_series.h); cfg is left as it
 * was. Returns 0, or -1 when memory runs out. */
static int
s_yaml_without_datagen (sb_config_t *cfg, char **out)
{
    const sb_config_entry_t *e = sb_config_get (cfg, "workflow.generate_data");
    *out = NULL;
    if (!e || !e->value)
        return (*out = sb_config_to_yaml (cfg)) ? 0 : -1;
    char *value = strdup (e->value), *origin = strdup (e->origin);
    int line = e->line, rc = -1;
    if (value && origin && sb_config_set_at (cfg, "workflow.generate_data", "False", origin, line) == 0) {
        *out = sb_config_to_yaml (cfg);
        rc = sb_config_set_at (cfg, "workflow.generate_data", value, origin, line) == 0 && *out ? 0 : -1;
    }
    free (value);
    free (origin);
    return rc;
}

/* The overrides as given, secret values <redacted>, into out (owned
 * strings; the caller frees them). */
static int
s_redacted_overrides (const char **overrides, size_t n, char **out)
{
    for (size_t i = 0; i < n; i++) {
        const char *a = overrides[i], *value = sb_workload_secret_value (a);
        size_t size = strlen (a) + 16;
        if (!(out[i] = malloc (size)))
            return -1;
        if (value)
            snprintf (out[i], size, "%.*s<redacted>", (int) (value - a), a);
        else
            snprintf (out[i], size, "%s", a);
    }
    return 0;
}

/* One df(1) line (1K-blocks) of the file system holding path, or of its
 * nearest existing parent, appended to df (size bytes) unless its mount
 * point is there already; nothing for a URI (s3://, synthetic://) or when
 * /proc/self/mountinfo or statvfs cannot tell. */
static void
s_df_add (const char *path, char *df, size_t size)
{
    if (!path || !*path || strstr (path, "://"))
        return;
    char real[PATH_MAX], probe[PATH_MAX];
    snprintf (probe, sizeof probe, "%s", path);
    while (!realpath (probe, real)) {
        char *slash = strrchr (probe, '/');
        if (!slash || slash == probe) {
            if (!realpath (slash == probe ? "/" : ".", real))
                return;
            break;
        }
        *slash = '\0';
    }
    FILE *f = fopen ("/proc/self/mountinfo", "r");
    if (!f)
        return;
    char line[4096], mount[PATH_MAX] = "", source[1024] = "";
    size_t best = 0;
    while (fgets (line, sizeof line, f)) {
        /* ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS */
        char mp[PATH_MAX], src[1024];
        const char *dash = strstr (line, " - ");
        if (sscanf (line, "%*s %*s %*s %*s %4095s", mp) != 1 || !dash || sscanf (dash + 3, "%*s %1023s", src) != 1)
            continue;
        size_t n = strlen (mp);
        int under = !strcmp (mp, "/") || (!strncmp (real, mp, n) && (real[n] == '/' || real[n] == '\0'));
        if (under && n >= best) {
            best = n;
            snprintf (mount, sizeof mount, "%s", mp);
            snprintf (source, sizeof source, "%s", src);
        }
    }
    fclose (f);
    struct statvfs vfs;
    if (!mount[0] || statvfs (real, &vfs) != 0)
        return;
    /* the same mount point once */
    for (const char *l = strchr (df, '\n'); l && l[1]; l = strchr (l + 1, '\n')) {
        const char *end = strchr (l + 1, '\n'), *last = end;
        if (!end)
            break;
        while (last > l + 1 && last[-1] != ' ')
            last--;
        if ((size_t) (end - last) == strlen (mount) && !strncmp (last, mount, strlen (mount)))
            return;
    }
    unsigned long long k = vfs.f_frsize ? vfs.f_frsize / 1024 : 0, total = vfs.f_blocks * k,
                       used = (vfs.f_blocks - vfs.f_bfree) * k, avail = vfs.f_bavail * k;
    unsigned long long pct = used + avail ? (used * 100 + used + avail - 1) / (used + avail) : 0;
    size_t n = strlen (df);
    if (n == 0)
        n = (size_t) snprintf (df, size, "Filesystem 1K-blocks Used Available Use%% Mounted on\n");
    if (n < size)
        snprintf (df + n, size - n, "%s %llu %llu %llu %llu%% %s\n", source, total, used, avail, pct, mount);
}

/* Write the results directory of every run this command wrote (ids above
 * last_before whose coordinator is this process); with hydra.run.dir only
 * the last one, into that folder. Returns 0, or -1 after printing why. */
typedef struct {
    int64_t ids[64];
    size_t  n;
    char    host[256];
} s_my_runs_t;

static int
s_my_run (const sb_rdq_val_t *cols, int ncols, void *ctx)
{
    s_my_runs_t *mine = ctx;
    if (ncols < 3 || cols[2].i != (int64_t) getpid () || strcmp (cols[1].t, mine->host) != 0)
        return 0;
    if (mine->n == sizeof mine->ids / sizeof mine->ids[0]) {
        sb_warn ("results directory: run %lld and later are not written (%zu at most per command: `shardbench report"
                 " RUN --results-dir DIR` writes them)", (long long) cols[0].i, mine->n);
        return 1;
    }
    mine->ids[mine->n++] = cols[0].i;
    return 0;
}

static int
s_last_id (const sb_rdq_val_t *cols, int ncols, void *ctx)
{
    *(int64_t *) ctx = ncols ? cols[0].i : 0;
    return 0;
}

static int
s_write_results_dirs (sqlite3 *h, int64_t last_before, const s_run_args_t *a, const sb_dlio_args_t *dlio,
                      const char *cmd)
{
    s_my_runs_t mine = { .n = 0 };
    if (gethostname (mine.host, sizeof mine.host - 1) != 0)
        snprintf (mine.host, sizeof mine.host, "localhost");
    char err[4096], leaf[PATH_MAX];
    if (sb_rdq_rows (h, SB_RDQ_RUNS_AFTER, last_before, s_my_run, &mine, err, sizeof err) < 0) {
        fprintf (stderr, "shardbench %s: results directory: %s\n", cmd, err);
        return -1;
    }
    if (mine.n == 0) {
        fprintf (stderr, "shardbench %s: no run was recorded: no results directory written\n", cmd);
        return 0;
    }
    int rc = 0;
    for (size_t i = dlio->run_dir ? mine.n - 1 : 0; i < mine.n; i++) {
        sb_results_dir_opts_t ro = {
            .root = dlio->run_dir ? NULL : a->results_dir, .leaf = dlio->run_dir,
            .config_subdir = dlio->output_subdir ? dlio->output_subdir : ".hydra", .no_config = dlio->output_subdir_null,
            .submitter = a->submitter, .system = a->system, .overwrite = a->overwrite,
            .config_written = dlio->run_dir && !dlio->output_subdir_null,
        };
        if (sb_results_dir_write (h, mine.ids[i], &ro, leaf, sizeof leaf, err, sizeof err) != 0) {
            fprintf (stderr, "shardbench %s: results directory of run %lld: %s\n", cmd, (long long) mine.ids[i], err);
            rc = -1;
        }
        else
            printf ("results of run %lld: %s\n", (long long) mine.ids[i], leaf);
    }
    return rc;
}

/* Append the hosts of text (separated by any of seps; with comments, a '#'
 * starts one that runs to the end of the line) to a. Returns 0, -1 when out
 * of memory. */
static int
s_add_hosts (s_run_args_t *a, const char *text, const char *seps, int comments)
{
    char *copy = strdup (text);
    if (!copy)
        return -1;
    if (comments)
        for (char *c = strchr (copy, '#'); c; c = strchr (c, '#')) {
            size_t n = strcspn (c, "\n");
            memset (c, ' ', n);
            c += n;
        }
    int rc = 0;
    for (char *save = NULL, *h = strtok_r (copy, seps, &save); h; h = strtok_r (NULL, seps, &save)) {
        char **grown = realloc (a->hosts, (a->nhosts + 1) * sizeof *grown);
        if (!grown || !(grown[a->nhosts] = strdup (h))) {
            if (grown)
                a->hosts = grown;
            rc = -1;
            break;
        }
        a->hosts = grown;
        a->nhosts++;
    }
    free (copy);
    return rc;
}

/* --hostfile FILE: one host per line, # comments. Prints and returns -1 on failure. */
static int
s_read_hostfile (s_run_args_t *a, const char *cmd, const char *path)
{
    FILE *f = fopen (path, "r");
    if (!f) {
        fprintf (stderr, "shardbench %s: --hostfile %s: %s\n", cmd, path, strerror (errno));
        return -1;
    }
    char line[1024];
    int rc = 0;
    while (rc == 0 && fgets (line, sizeof line, f))
        rc = s_add_hosts (a, line, " \t\r\n", 1);
    if (rc == 0 && ferror (f)) {
        fprintf (stderr, "shardbench %s: --hostfile %s: read error\n", cmd, path);
        rc = -1;
    }
    else if (rc != 0)
        fprintf (stderr, "shardbench: out of memory\n");
    fclose (f);
    return rc;
}

static int
s_add_slurm_host (const char *host, void *ctx)
{
    return s_add_hosts (ctx, host, ",", 0);
}

/* --slurm: the nodes of the Slurm job we run in, into a->hosts. Prints and
 * returns -1 outside a job or when its variables disagree. */
static int
s_slurm_hosts (s_run_args_t *a, const char *cmd)
{
    const char *job = getenv ("SLURM_JOB_ID");
    if (!job || !*job) {
        fprintf (stderr,
                 "shardbench %s: --slurm runs inside a Slurm allocation, and SLURM_JOB_ID is not set: start it in an\n"
                 "  sbatch script or under salloc (e.g. `salloc -N 4 shardbench %s ... --slurm`)\n", cmd, cmd);
        return -1;
    }
    const char *nnodes_var = "SLURM_JOB_NUM_NODES", *nnodes = getenv (nnodes_var);
    if (!nnodes || !*nnodes)
        nnodes = getenv (nnodes_var = "SLURM_NNODES");
    const char *list = getenv ("SLURM_JOB_NODELIST");
    if (!list || !*list)
        list = getenv ("SLURM_NODELIST");
    uint64_t n = 0;
    if (!nnodes || !list) {
        fprintf (stderr, "shardbench %s: --slurm: Slurm job %s sets no %s\n", cmd, job,
                 !nnodes ? "SLURM_JOB_NUM_NODES (or SLURM_NNODES)" : "SLURM_JOB_NODELIST (or SLURM_NODELIST)");
        return -1;
    }
    if (s_parse_u64 (nnodes_var, nnodes, 1, &n) != 0)
        return -1;
    char err[1024];
    if (sb_slurm_hostlist_expand (list, s_add_slurm_host, a, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench %s: --slurm: SLURM_JOB_NODELIST: %s\n", cmd, err);
        return -1;
    }
    if (a->nhosts != n) {
        fprintf (stderr, "shardbench %s: --slurm: SLURM_JOB_NODELIST '%s' names %zu nodes, SLURM_JOB_NUM_NODES says %llu\n",
                 cmd, list, a->nhosts, (unsigned long long) n);
        return -1;
    }
    sb_debug ("Slurm job %s: %zu node(s): %s", job, a->nhosts, list);
    return 0;
}

static int
s_load_workload (sb_config_t *cfg, const char *name, const sb_dlio_args_t *dlio, char *err, size_t err_size)
{
    char path[4096];
    int found = dlio ? sb_dlio_workload_path (dlio, name, path, sizeof path, err, err_size) : 0;
    if (found < 0)
        return -1;
    if (found)
        return sb_config_load_file (cfg, path, err, err_size);
    if (!(dlio && dlio->workload == name)
        && (access (name, F_OK) == 0 || strchr (name, '/') || strstr (name, ".yaml") || strstr (name, ".yml")))
        return sb_config_load_file (cfg, name, err, err_size);
    for (const sb_embedded_t *p = sb_presets; p->name; p++)
        if (strcmp (p->name, name) == 0) {
            char origin[128];
            snprintf (origin, sizeof origin, "preset %s", name);
            return sb_config_load_string (cfg, p->text, origin, err, err_size);
        }
    int n = dlio && dlio->config_dir
        ? snprintf (err, err_size, "unknown workload '%s': no %s/workload/%s.yaml and no preset of that name (presets:",
                    name, dlio->config_dir, name)
        : snprintf (err, err_size, "unknown workload '%s': not a file and not a preset (presets:", name);
    for (const sb_embedded_t *p = sb_presets; p->name && n > 0 && (size_t) n < err_size; p++)
        n += snprintf (err + n, err_size - (size_t) n, " %s", p->name);
    if (n > 0 && (size_t) n < err_size)
        snprintf (err + n, err_size - (size_t) n, ")");
    return -1;
}

/* Load workload `name` into cfg, apply the KEY=VALUE overrides and resolve
 * the key table into *wl. Prints the error and returns -1 on failure. */
static int
s_resolve_workload (sb_config_t *cfg, const char *name, const sb_dlio_args_t *dlio, const char **overrides,
                    size_t noverrides, int kvcache, sb_workload_t *wl)
{
    char err[4096];
    if (s_load_workload (cfg, name, dlio, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench: error: %s\n", err);
        return -1;
    }
    /* a KV-cache run takes only its storage from the preset: it runs no DLIO
     * framework, so DLIO's refusals of a framework's settings (PyTorch's S3
     * client library) do not apply to it */
    if (kvcache && sb_config_set_at (cfg, "framework", "none", "shardbench kvcache", 0) != 0) {
        fprintf (stderr, "shardbench: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < noverrides; i++)
        if (sb_config_override (cfg, overrides[i], err, sizeof err) != 0) {
            fprintf (stderr, "shardbench: error: %s\n", err);
            return -1;
        }
    if (sb_workload_from_config (cfg, wl, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench: error: %s\n", err);
        return -1;
    }
    return 0;
}

/* --local without --bind: the coordinator listens on a Unix socket in a
 * folder of its own, made by mkdtemp (mode 0700, owned by this user), so
 * no other user of the host can connect: the file system's permission
 * check is the proof a local worker gives. A loopback TCP port would admit
 * any local user. */
typedef struct {
    char dir[PATH_MAX];         /* the private folder; "" when none */
    char endpoint[PATH_MAX + 32];
} s_private_ipc_t;

static int
s_private_ipc_make (s_private_ipc_t *self, char *err, size_t err_size)
{
    /* a Unix socket path holds at most 107 bytes: fall back to /tmp when
     * the runtime or temporary folder has a longer name */
    const char *bases[] = { getenv ("XDG_RUNTIME_DIR"), getenv ("TMPDIR"), "/tmp" };
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        const char *base = bases[i];
        if (!base || base[0] != '/' || strlen (base) + sizeof "/shardbench-XXXXXX/coordinator.sock" > 100)
            continue;
        snprintf (self->dir, sizeof self->dir, "%s/shardbench-XXXXXX", base);
        if (!mkdtemp (self->dir)) {
            snprintf (err, err_size, "cannot make a private folder for the local workers' socket in %s: %s", base,
                      strerror (errno));
            self->dir[0] = '\0';
            if (i + 1 < sizeof bases / sizeof bases[0])
                continue;
            return -1;
        }
        /* mkdtemp made it 0700; check that nobody swapped it */
        struct stat st;
        if (lstat (self->dir, &st) != 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid ()
            || (st.st_mode & 07777) != 0700) {
            snprintf (err, err_size, "the private folder %s is not a folder of mode 0700 owned by this user",
                      self->dir);
            return -1;
        }
        snprintf (self->endpoint, sizeof self->endpoint, "ipc://%s/coordinator.sock", self->dir);
        return 0;
    }
    snprintf (err, err_size, "no folder to hold the local workers' socket ($XDG_RUNTIME_DIR, $TMPDIR and /tmp are"
              " unusable)");
    return -1;
}

static void
s_private_ipc_remove (s_private_ipc_t *self)
{
    if (!self->dir[0])
        return;
    char sock[PATH_MAX + 32];
    snprintf (sock, sizeof sock, "%s/coordinator.sock", self->dir);
    if (unlink (sock) != 0 && errno != ENOENT)
        sb_warn ("cannot remove %s: %s", sock, strerror (errno));
    /* the step barrier's relays bind rPID.sock here (worker/agent/
     * barrier_tree.c); one killed before it closed leaves its socket */
    DIR *d = opendir (self->dir);
    struct dirent *de;
    while (d && (de = readdir (d))) {
        unsigned pid;
        char tail[8];
        struct stat st;
        if (sscanf (de->d_name, "r%u%7s", &pid, tail) != 2 || strcmp (tail, ".sock") != 0
            || fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK (st.st_mode))
            continue;
        if (unlinkat (dirfd (d), de->d_name, 0) != 0)
            sb_warn ("cannot remove %s/%s: %s", self->dir, de->d_name, strerror (errno));
    }
    if (d)
        closedir (d);
    if (rmdir (self->dir) != 0)
        sb_warn ("cannot remove %s: %s", self->dir, strerror (errno));
    self->dir[0] = '\0';
}

/* --metrics-linger S: the run is over and recorded; its final figures
 * stay served S seconds more, so that a scraper's next scrape gets them
 * (Prometheus scrapes every 15 s or so). A signal ends the wait; the exit
 * status stays the run's. */
static void
s_metrics_linger (sb_metrics_server_t *metrics, uint64_t seconds)
{
    if (!metrics || !seconds || sb_session_signal ())
        return;
    sb_info ("metrics: the run is over; its final figures stay at %s for %llu s (a signal ends the wait)",
             sb_metrics_server_url (metrics), (unsigned long long) seconds);
    double until = sb_now () + (double) seconds;
    while (sb_now () < until && !sb_session_signal ())
        sb_sleep_s (0.1);
}

/* kvcache: the reference's defaults, then option OPTION's preset (0: none),
 * then the kvcache.* keys in their order; the cache folder becomes the data
 * folder (its engine, the workers' data_root), given to the configuration
 * as an override (*folder owns its text). Keys of other sections but
 * storage.* and shardbench.* mean nothing to this command: refused. */
static int
s_kv_settings (sb_kv_params_t *kv, unsigned option, const char **given, size_t n, const char **overrides,
               size_t *noverrides, char **folder)
{
    char err[1024];
    sb_kv_params_default (kv);
    if (option && sb_kv_params_option (kv, option, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench kvcache: %s\n", err);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr (given[i], '=');
        char key[128];
        if ((size_t) (eq - given[i]) >= sizeof key) {
            fprintf (stderr, "shardbench kvcache: key '%.*s...' is too long\n", 64, given[i]);
            return -1;
        }
        snprintf (key, sizeof key, "%.*s", (int) (eq - given[i]), given[i]);
        if (sb_kv_params_set (kv, key, eq + 1, err, sizeof err) != 0) {
            fprintf (stderr, "shardbench kvcache: %s\n", err);
            return -1;
        }
    }
    if (sb_kv_params_check (kv, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench kvcache: %s\n", err);
        return -1;
    }
    for (size_t i = 0; i < *noverrides; i++)
        if (strncmp (overrides[i], "storage.", 8) != 0 && strncmp (overrides[i], "shardbench.", 11) != 0) {
            fprintf (stderr, "shardbench kvcache: '%s': not a setting of this command (kvcache.KEY=VALUE,"
                     " storage.KEY=VALUE, shardbench.KEY=VALUE; the cache folder is kvcache.cache_dir)\n",
                     overrides[i]);
            return -1;
        }
    if (!kv->cache_dir[0])     /* mlpstorage's default: kvcache_data beside the results */
        snprintf (kv->cache_dir, sizeof kv->cache_dir, "./kvcache_data");
    if (asprintf (folder, "dataset.data_folder=%s", kv->cache_dir) < 0) {
        *folder = NULL;
        fprintf (stderr, "shardbench: out of memory\n");
        return -1;
    }
    overrides[(*noverrides)++] = *folder;
    return 0;
}

/* The kvcache settings as a YAML section, appended to the run's recorded
 * configuration (runs.config) so that the run can be told apart and redone. */
static int
s_kv_append_yaml (const sb_kv_params_t *kv, char **yaml)
{
    char **items = NULL;
    size_t n = 0;
    if (sb_kv_params_to_strs (kv, &items, &n) != 0)
        return -1;
    size_t len = strlen (*yaml) + 32;
    for (size_t i = 0; i < n; i++)
        len += strlen (items[i]) + 8;
    char *out = malloc (len);
    int rc = -1;
    if (out) {
        size_t at = (size_t) snprintf (out, len, "%skvcache:\n", *yaml);
        for (size_t i = 0; i < n; i++) {
            const char *k = items[i] + (strncmp (items[i], "kvcache.", 8) == 0 ? 8 : 0), *eq = strchr (k, '=');
            if (eq)
                at += (size_t) snprintf (out + at, len - at, "  %.*s: %s\n", (int) (eq - k), k, eq + 1);
        }
        free (*yaml);
        *yaml = out;
        rc = 0;
    }
    for (size_t i = 0; i < n; i++)
        free (items[i]);
    free (items);
    return rc;
}

static int
s_cmd_run (int argc, char **argv, sb_session_kind_t kind)
{
    s_private_ipc_t ipc = { .dir = "" };
    const char *cmd = kind == SB_SESSION_TRAIN ? "run" : kind == SB_SESSION_DATAGEN ? "datagen"
                    : kind == SB_SESSION_CHECKPOINT ? "checkpoint" : kind == SB_SESSION_KVCACHE ? "kvcache"
                    : "catalog";
    s_run_args_t a = { .workload = kind == SB_SESSION_CHECKPOINT ? "llama3_8b" : "quickstart",
                       .db_path = "shardbench.db", .db_lock_timeout = 300 };
    char err[4096] = "";
    sb_config_t *cfg = sb_config_new ();
    const char **overrides = calloc ((size_t) argc + 1, sizeof (char *));
    size_t noverrides = 0;
    int have_workload = 0, rc = EXIT_USAGE;
    sb_resultdb_t *db = NULL;
    char *yaml = NULL, *full_yaml = NULL, *command_line = NULL, **given = NULL;
    char *later_yaml = NULL, *later_full_yaml = NULL;  /* the runs after the first */
    sb_host_proc_t hp = { 0 };   /* the coordinator's host, as DLIO describes a host */
    sb_dlio_args_t dlio = { 0 };
    sb_metrics_server_t *metrics = NULL;
    /* kvcache: its settings, and the data folder they name */
    const char **kv_given = calloc ((size_t) argc + 1, sizeof (char *));
    size_t nkv_given = 0;
    unsigned kv_option = 0;
    sb_kv_params_t kvp;
    char *kv_folder = NULL;
    if (!cfg || !overrides || !kv_given) {
        fprintf (stderr, "shardbench: out of memory\n");
        goto done;
    }
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDS_VALUE() do { if (!next) { fprintf (stderr, "shardbench: %s needs a value\n", arg); goto done; } i++; } while (0)
        int used_next = 0, dlio_form;
        const char *dlio_override = NULL;
        if (!strcmp (arg, "-h") || !strcmp (arg, "--help")) {
            if (kind == SB_SESSION_KVCACHE)
                s_usage_kvcache (stdout);
            else
                s_usage_run (stdout, kind);
            rc = 0;
            goto done;
        }
        else if ((dlio_form = sb_dlio_arg (&dlio, arg, next, &used_next, &dlio_override, err, sizeof err)) != 0) {
            /* DLIO / mlpstorage: workload=NAME, --config-dir, ++workload.K=V, ++hydra.* */
            if (dlio_form < 0) {
                fprintf (stderr, "shardbench %s: %s\n", cmd, err);
                goto done;
            }
            i += used_next;
            if (dlio_override)
                overrides[noverrides++] = dlio_override;
        }
        else if (!strcmp (arg, "-v") || !strcmp (arg, "--verbose"))
            sb_log_set_level (SB_LOG_DEBUG);
        else if (!strcmp (arg, "--accelerators")) {
            NEEDS_VALUE ();
            if (s_parse_u64 (arg, next, 1, &a.accelerators) != 0)
                goto done;
        }
        else if (!strcmp (arg, "--local")) {
            NEEDS_VALUE ();
            if (s_parse_u64 (arg, next, 1, &a.local) != 0)
                goto done;
        }
        else if (!strcmp (arg, "--workers")) {
            NEEDS_VALUE ();
            if (s_parse_u64 (arg, next, 1, &a.workers) != 0)
                goto done;
        }
        else if (!strcmp (arg, "--seed")) {
            NEEDS_VALUE ();
            if (s_parse_u64 (arg, next, 0, &a.seed) != 0)
                goto done;
            a.have_seed = 1;
        }
        else if (!strcmp (arg, "--join-timeout")) {
            NEEDS_VALUE ();
            uint64_t t;
            if (s_parse_u64 (arg, next, 1, &t) != 0)
                goto done;
            a.join_timeout = (double) t;
            a.have_join_timeout = 1;
        }
        else if (!strcmp (arg, "--bind")) {
            NEEDS_VALUE ();
            a.bind = next;
        }
        else if (!strcmp (arg, "--db")) {
            NEEDS_VALUE ();
            a.db_path = next;
        }
        else if (!strcmp (arg, "--db-lock-timeout")) {
            NEEDS_VALUE ();
            if (s_parse_u64 (arg, next, 0, &a.db_lock_timeout) != 0)
                goto done;
        }
        else if (!strcmp (arg, "--relist"))
            a.relist = 1;
        else if (!strcmp (arg, "--progress")) {
            NEEDS_VALUE ();
            if (sb_progress_parse_mode (next, &a.progress) != 0) {
                fprintf (stderr, "shardbench: --progress expects auto, tty, plain or off, got '%s'\n", next);
                goto done;
            }
        }
        else if (!strcmp (arg, "--progress-interval")) {
            NEEDS_VALUE ();
            if (s_parse_u64 (arg, next, 1, &a.progress_interval) != 0)
                goto done;
        }
        else if (!strcmp (arg, "--keys")) {
            NEEDS_VALUE ();
            a.keys_dir = next;
        }
        else if (!strcmp (arg, "--metrics") && kind != SB_SESSION_CATALOG) {
            NEEDS_VALUE ();
            a.metrics = next;
        }
        else if (!strcmp (arg, "--metrics-linger") && kind != SB_SESSION_CATALOG) {
            NEEDS_VALUE ();
            if (s_parse_u64 (arg, next, 0, &a.metrics_linger) != 0)
                goto done;
        }
        else if (!strcmp (arg, "--insecure"))
            a.insecure = 1;
        else if (!strcmp (arg, "--hosts")) {
            NEEDS_VALUE ();
            a.hosts_given = 1;
            if (s_add_hosts (&a, next, ", ", 0) != 0) {
                fprintf (stderr, "shardbench: out of memory\n");
                goto done;
            }
        }
        else if (!strcmp (arg, "--hostfile")) {
            NEEDS_VALUE ();
            a.hosts_given = 1;
            if (s_read_hostfile (&a, cmd, next) != 0)
                goto done;
        }
        else if (!strcmp (arg, "--slurm"))
            a.slurm = 1;
        else if (!strcmp (arg, "--clean") && kind == SB_SESSION_DATAGEN)
            a.clean = 1;
        else if (!strcmp (arg, "--dry-run") && kind == SB_SESSION_DATAGEN)
            a.dry_run = 1;
        else if (!strcmp (arg, "--subset") && kind == SB_SESSION_CHECKPOINT)
            overrides[noverrides++] = "checkpoint.mode=subset";
        else if (!strcmp (arg, "--runs") && (kind == SB_SESSION_TRAIN || kind == SB_SESSION_CHECKPOINT)) {
            NEEDS_VALUE ();
            if (s_parse_u64 (arg, next, 1, &a.runs) != 0)
                goto done;
            a.have_runs = 1;
        }
        else if (!strcmp (arg, "--warmup") && (kind == SB_SESSION_TRAIN || kind == SB_SESSION_CHECKPOINT)) {
            NEEDS_VALUE ();
            if (s_parse_u64 (arg, next, 0, &a.warmup) != 0)
                goto done;
            a.have_warmup = 1;
        }
        else if (!strcmp (arg, "--label") && kind != SB_SESSION_CATALOG) {
            NEEDS_VALUE ();
            /* shardbench runs / series print it whole (series_query.h's label[256]) */
            if (strlen (next) > 255 || !sb_utf8_valid (next) || sb_log_needs_escape (next)) {
                fprintf (stderr, "shardbench %s: --label: at most 255 bytes of UTF-8 text without control"
                         " characters\n", cmd);
                goto done;
            }
            a.label = next;
        }
        else if (!strcmp (arg, "--results-dir") && kind != SB_SESSION_CATALOG) {
            NEEDS_VALUE ();
            a.results_dir = next;
        }
        else if (!strcmp (arg, "--overwrite") && kind != SB_SESSION_CATALOG)
            a.overwrite = 1;
        else if (!strcmp (arg, "--submitter") || !strcmp (arg, "--system")) {
            NEEDS_VALUE ();
            if (!sb_results_dir_name_ok (next)) {
                fprintf (stderr, "shardbench %s: %s '%s': a name of letters, digits, '.', '_' and '-'\n", cmd, arg, next);
                goto done;
            }
            *(arg[3] == 'u' ? &a.submitter : &a.system) = next;
        }
        else if (arg[0] == '-') {
            fprintf (stderr, "shardbench %s: unknown option '%s' (see --help)\n", cmd, arg);
            goto done;
        }
        else if (kind == SB_SESSION_KVCACHE && !strncmp (arg, "kvcache.", 8) && strchr (arg, '='))
            kv_given[nkv_given++] = arg;    /* the KV-cache settings: applied over the option below */
        else if (strchr (arg, '='))
            overrides[noverrides++] = arg;
        else if (kind == SB_SESSION_KVCACHE) {
            if (kv_option || (strcmp (arg, "1") && strcmp (arg, "2") && strcmp (arg, "3"))) {
                fprintf (stderr, "shardbench kvcache: unexpected argument '%s' (one OPTION: 1, 2 or 3; settings are"
                         " kvcache.KEY=VALUE)\n", arg);
                goto done;
            }
            kv_option = (unsigned) (arg[0] - '0');
        }
        else if (!have_workload) {
            a.workload = arg;
            have_workload = 1;
        }
        else {
            fprintf (stderr, "shardbench %s: unexpected argument '%s' (one WORKLOAD only; overrides are KEY=VALUE)\n",
                     cmd, arg);
            goto done;
        }
#undef NEEDS_VALUE
    }
    if (dlio.workload && have_workload) {
        fprintf (stderr, "shardbench %s: two workloads: '%s' and workload=%s (give one)\n", cmd, a.workload,
                 dlio.workload);
        goto done;
    }
    if (dlio.workload)
        a.workload = dlio.workload;
    if (kind == SB_SESSION_KVCACHE && a.have_seed) {
        fprintf (stderr, "shardbench kvcache: --seed: the users' seed is kvcache.seed (rank r draws with seed + r)\n");
        goto done;
    }
    if (kind == SB_SESSION_KVCACHE && s_kv_settings (&kvp, kv_option, kv_given, nkv_given, overrides, &noverrides,
                                                     &kv_folder) != 0)
        goto done;
    /* --runs N, of which the first --warmup K (default 1 when
     * N > 1: MLPerf Storage's 1 warm-up + 5 measured) are warm-up runs */
    if (!a.have_runs)
        a.runs = 1;
    if (!a.have_warmup)
        a.warmup = a.runs > 1 ? 1 : 0;
    if (a.warmup >= a.runs && a.warmup > 0) {
        fprintf (stderr, "shardbench %s: --warmup %llu leaves no measured run of --runs %llu (the first K of the N runs"
                 " are warm-up runs: K must be less than N)\n", cmd, (unsigned long long) a.warmup,
                 (unsigned long long) a.runs);
        goto done;
    }
    if (a.runs > 1 && a.workers) {
        fprintf (stderr, "shardbench %s: --runs %llu with --workers: workers started elsewhere serve one run; use"
                 " --local, --hosts, --hostfile or --slurm, which start the workers of each run\n", cmd,
                 (unsigned long long) a.runs);
        goto done;
    }
    if (a.runs > 1 && dlio.run_dir) {
        fprintf (stderr, "shardbench %s: --runs %llu with hydra.run.dir: DLIO's run folder holds one run; use"
                 " --results-dir DIR, which gives each run of the series its own folder\n", cmd,
                 (unsigned long long) a.runs);
        goto done;
    }
    if (a.results_dir && dlio.run_dir) {
        fprintf (stderr, "shardbench %s: --results-dir and hydra.run.dir both say where the results go (give one)\n",
                 cmd);
        goto done;
    }
    if (a.results_dir && !a.dry_run) {
        /* found unwritable now, not after the run */
        if (sb_mkdirs (a.results_dir, err, sizeof err) != 0 || access (a.results_dir, W_OK) != 0) {
            fprintf (stderr, "shardbench %s: --results-dir %s: %s\n", cmd, a.results_dir,
                     err[0] ? err : strerror (errno));
            goto done;
        }
        /* a sentinel that pins another organisation, or cannot be read: now, not after the run */
        char org[256];
        int pinned = sb_results_sentinel_read (a.results_dir, org, sizeof org, err, sizeof err);
        if (pinned < 0 || (pinned && a.submitter && strcmp (org, a.submitter) != 0)) {
            if (pinned > 0)
                snprintf (err, sizeof err, "%s/%s pins the organisation '%s', not '%s' (--submitter)", a.results_dir,
                          SB_RESULTS_SENTINEL, org, a.submitter);
            fprintf (stderr, "shardbench %s: --results-dir %s: %s\n", cmd, a.results_dir, err);
            goto done;
        }
    }
    if (a.overwrite && !dlio.run_dir) {
        fprintf (stderr, "shardbench %s: --overwrite goes with ++hydra.run.dir (a --results-dir leaf is always new)\n",
                 cmd);
        goto done;
    }
    if (dlio.run_dir && !a.dry_run
        && sb_results_dir_leaf_check (dlio.run_dir, dlio.output_subdir_null ? NULL
                                      : dlio.output_subdir ? dlio.output_subdir : ".hydra",
                                      a.overwrite ? SB_RESULTS_DIR_OVERWRITE : 0, err, sizeof err) != 0) {
        /* DLIO writes into hydra.run.dir; another run's results there are not written over unless told */
        fprintf (stderr, "shardbench %s: hydra.run.dir: %s\n", cmd, err);
        goto done;
    }
    int using_hosts = a.hosts_given;
    if ((a.local != 0) + (a.workers != 0) + using_hosts + a.slurm > 1) {
        fprintf (stderr, "shardbench %s: --local, --workers, --hosts/--hostfile and --slurm exclude each other\n", cmd);
        goto done;
    }
    if (a.slurm && s_slurm_hosts (&a, cmd) != 0)
        goto done;
    if (using_hosts && a.nhosts == 0) {
        fprintf (stderr, "shardbench %s: --hosts/--hostfile name no host\n", cmd);
        goto done;
    }
    if (!a.local && !a.workers && !using_hosts && !a.slurm)
        a.local = 1;
    const char *bind = a.bind ? a.bind : "tcp://*:5555";
    if (a.local && !a.bind && kind != SB_SESSION_CATALOG) {
        if (s_private_ipc_make (&ipc, err, sizeof err) != 0) {
            fprintf (stderr, "shardbench %s: %s\n", cmd, err);
            goto done;
        }
        bind = ipc.endpoint;
    }
    if (!a.keys_dir && (a.keys_dir = getenv ("SHARDBENCH_KEYS")) && !*a.keys_dir)
        a.keys_dir = NULL;
    if (kind != SB_SESSION_CATALOG && !a.keys_dir && !a.insecure && !sb_endpoint_is_local (bind)) {
        fprintf (stderr,
                 "shardbench %s: %s can be reached from other hosts, so workers must authenticate (ZeroMQ CURVE):\n"
                 "  create keys with `shardbench keys --dir DIR` and pass --keys DIR (workers too), or bind a\n"
                 "  loopback address, or pass --insecure to accept any worker and send everything in clear text\n",
                 cmd, bind);
        goto done;
    }
    if (a.local && a.bind && !a.keys_dir && strncmp (bind, "ipc://", 6) != 0 && strncmp (bind, "inproc://", 9) != 0)
        sb_warn ("--local with --bind %s and no --keys: any user of this host can connect, join as a worker and read"
                 " the workload (without --bind, the local workers use a private socket)", bind);

    sb_workload_t wl;
    if (s_resolve_workload (cfg, a.workload, &dlio, overrides, noverrides, kind == SB_SESSION_KVCACHE, &wl) != 0)
        goto done;
    /* A workload file is data: it may come from anyone and never chooses a
     * command that runs on other hosts. Only the command line does. */
    const sb_config_entry_t *rw = sb_config_get (cfg, "shardbench.remote_worker");
    if (rw && (a.nhosts || a.slurm) && strcmp (rw->origin, "command line") != 0) {
        if (rw->line > 0)
            fprintf (stderr, "shardbench %s: %s:%d: ", cmd, rw->origin, rw->line);
        else
            fprintf (stderr, "shardbench %s: %s: ", cmd, rw->origin);
        fprintf (stderr, "key 'shardbench.remote_worker': a workload file does not choose the command run on other"
                 " hosts: give it on the command line (shardbench.remote_worker=PATH) or in $SHARDBENCH_REMOTE_WORKER\n");
        goto done;
    }
    if (a.runs > 1 && kind == SB_SESSION_TRAIN && !wl.do_train && !wl.do_checkpoint) {
        fprintf (stderr, "shardbench %s: --runs %llu repeats training or checkpoint runs, and this workflow only"
                 " generates the dataset (workflow.train and workflow.checkpoint are false)\n", cmd,
                 (unsigned long long) a.runs);
        goto done;
    }
    uint64_t accelerators = a.accelerators ? a.accelerators
                          : wl.accelerators && kind != SB_SESSION_KVCACHE ? wl.accelerators : 1;
    uint64_t seed = a.have_seed ? a.seed : wl.seed;
    int seed_drawn = 0;
    /* DLIO_local_changes seeds `random` shuffles with train.seed, as `seed`
     * (config.py: only Shuffle.OFF is told apart), so the dlio sampler does
     * too; the global sampler picks a new run seed */
    if (!a.have_seed && strcmp (wl.sampler, "global") == 0
        && (wl.sample_shuffle == SB_SHUFFLE_RANDOM || wl.file_shuffle == SB_SHUFFLE_RANDOM))
        seed = sb_mix ((uint64_t) time (NULL), (uint64_t) getpid ()), seed_drawn = 1;
    /* a seed numpy refuses in a later epoch is found now, not in epoch 2 */
    if (kind == SB_SESSION_TRAIN && (wl.do_train || wl.do_eval)
        && sb_workload_check_seed (cfg, &wl, seed, a.have_seed, accelerators, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench: error: %s\n", err);
        goto done;
    }
    /* credentials of the workload file: into this process's environment
     * (its storage clients and the local workers it forks), then redacted */
    if (sb_workload_export_credentials (cfg, err, sizeof err) < 0) {
        fprintf (stderr, "shardbench: error: %s\n", err);
        goto done;
    }
    (void) sb_workload_log_not_applicable (cfg);
    /* credentials are never recorded (runs.config) or shown */
    if (sb_config_redact (cfg, sb_workload_is_secret_key, "<redacted>") < 0 || !(yaml = sb_config_to_yaml (cfg))
        || (a.runs > 1 && wl.generate_data && s_yaml_without_datagen (cfg, &later_yaml) != 0)) {
        fprintf (stderr, "shardbench: out of memory\n");
        goto done;
    }
    /* what the run was given, recorded with it */
    if (!(command_line = s_command_line (cmd, argc, argv)) || !(given = calloc (noverrides + 1, sizeof *given))
        || s_redacted_overrides (overrides, noverrides, given) != 0 || sb_workload_add_defaults (cfg) < 0
        || !(full_yaml = sb_config_to_yaml (cfg))
        || (a.runs > 1 && wl.generate_data && s_yaml_without_datagen (cfg, &later_full_yaml) != 0)
        || (kind == SB_SESSION_KVCACHE && (s_kv_append_yaml (&kvp, &yaml) != 0
                                           || s_kv_append_yaml (&kvp, &full_yaml) != 0))) {
        fprintf (stderr, "shardbench: out of memory\n");
        goto done;
    }
    char host[256];
    if (gethostname (host, sizeof host - 1) != 0)
        snprintf (host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    if (sb_host_proc_read (&hp) != 0) {
        fprintf (stderr, "shardbench: out of memory\n");
        goto done;
    }
    /* the file systems the run reads or writes, and the one its results go to */
    char df[8192] = "";
    s_df_add (kind == SB_SESSION_CHECKPOINT || (wl.do_checkpoint && !wl.do_train) ? wl.ckpt.folder : wl.data_folder,
              df, sizeof df);
    s_df_add (a.results_dir ? a.results_dir : dlio.run_dir, df, sizeof df);
    sb_run_inputs_t inputs = {
        .version = SB_VERSION, .command_line = command_line, .full_config = full_yaml,
        .overrides = (const char *const *) given, .noverrides = noverrides, .host = host,
        .host_processor = hp.processor, .host_cpuinfo = hp.cpuinfo, .host_meminfo = hp.meminfo,
        .df = df[0] ? df : NULL,
    };
    /* ++hydra.run.dir: the run's output folder, with the configuration
     * where DLIO (Hydra) writes it; not on a dry run, which writes nothing */
    if (!a.dry_run && sb_dlio_write_outputs (&dlio, yaml, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench %s: hydra.run.dir: %s\n", cmd, err);
        goto done;
    }
    /* --metrics: bound before anything runs (a bad or taken address is a usage error) */
    if (a.metrics_linger && !a.metrics) {
        fprintf (stderr, "shardbench %s: --metrics-linger goes with --metrics ADDR\n", cmd);
        goto done;
    }
    if (a.metrics && !a.dry_run && !(metrics = sb_metrics_server_new (a.metrics, err, sizeof err))) {
        fprintf (stderr, "shardbench %s: %s\n", cmd, err);
        goto done;
    }
    db = sb_resultdb_open (a.db_path, err, sizeof err);
    if (!db) {
        fprintf (stderr, "shardbench: error: %s\n", err);
        goto done;
    }
    int stale = sb_resultdb_mark_interrupted (db);
    if (stale > 0)
        sb_warn ("%d earlier run(s) in %s were left 'running' by a coordinator that is gone: marked 'interrupted'",
                 stale, a.db_path);
    (void) sb_series_mark_interrupted (db);     /* and their series */

    char worker_path[PATH_MAX];
    s_worker_path (worker_path, sizeof worker_path);
    const char *remote_worker = *wl.remote_worker ? wl.remote_worker
                              : getenv ("SHARDBENCH_REMOTE_WORKER") && *getenv ("SHARDBENCH_REMOTE_WORKER")
                              ? getenv ("SHARDBENCH_REMOTE_WORKER")
                              /* the nodes of a Slurm job share the install, or the file system */
                              : a.slurm ? worker_path : "shardbench-worker";
    sb_session_opts_t opts = {
        .kind = kind, .wl = &wl, .config_yaml = yaml, .db = db,
        /* a KV-cache run has no workload file: its name says the option (runs.workload) */
        .workload_name = kind != SB_SESSION_KVCACHE ? a.workload : kv_option == 1 ? "kvcache_option_1"
                       : kv_option == 2 ? "kvcache_option_2" : kv_option == 3 ? "kvcache_option_3" : "kvcache",
        .accelerators = accelerators, .local_workers = a.local, .remote_workers = a.workers,
        .bind = bind, .keys_dir = a.keys_dir,
        .worker_path = worker_path, .seed = seed, .relist = a.relist,
        .progress = (int) a.progress, .progress_interval_s = (double) a.progress_interval,
        .join_timeout_s = a.have_join_timeout ? a.join_timeout : a.local || a.nhosts ? 60 : 300,
        .hosts = (const char *const *) a.hosts, .nhosts = a.nhosts,
        .ssh_cmd = getenv ("SHARDBENCH_SSH") && *getenv ("SHARDBENCH_SSH") ? getenv ("SHARDBENCH_SSH") : "ssh",
        .remote_worker = remote_worker, .slurm = a.slurm, .clean = a.clean, .dry_run = a.dry_run,
        .srun_cmd = getenv ("SHARDBENCH_SRUN") && *getenv ("SHARDBENCH_SRUN") ? getenv ("SHARDBENCH_SRUN") : "srun",
        .label = a.label,
        .inputs = &inputs,
        .metrics = metrics,
        .kv = kind == SB_SESSION_KVCACHE ? &kvp : NULL,
    };
    /* the descriptor limit is raised and checked before the writer thread's
     * sockets exist (CZMQ asserts when it cannot make a socket) */
    if (sb_session_check_limits (&opts, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench: error: %s\n", err);
        rc = 2;
        goto done;
    }
    /* the series row, written before the writer starts */
    if (a.runs > 1) {
        int workflow_ckpt = kind == SB_SESSION_TRAIN && !wl.do_train;
        sb_series_info_t si = { .kind = kind == SB_SESSION_CHECKPOINT || workflow_ckpt ? "checkpoint" : "train",
                                .workload = a.workload, .label = a.label, .runs = a.runs, .warmup = a.warmup };
        if ((opts.series_id = sb_series_begin (db, &si, err, sizeof err)) < 0) {
            fprintf (stderr, "shardbench: error: %s\n", err);
            rc = 1;
            goto done;
        }
    }
    /* rows from here on go through the writer thread: the event loop never
     * waits for the database */
    if (sb_resultdb_start_writer (db, (double) a.db_lock_timeout, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench: error: %s\n", err);
        rc = 1;
        goto done;
    }
    int64_t run_id = -1, last_before = 0;
    err[0] = '\0';
    if ((a.results_dir || dlio.run_dir)
        && sb_rdq_rows (sb_resultdb_handle (db), SB_RDQ_LAST_ID, 0, s_last_id, &last_before, err, sizeof err) < 0) {
        fprintf (stderr, "shardbench: error: %s\n", err);
        rc = 1;
        goto done;
    }
    if (opts.series_id > 0)     /* N runs, each summary, then the series' */
        rc = sb_cli_series_run (&opts, a.runs, a.warmup, seed_drawn, later_yaml, later_full_yaml, stdout);
    else {
        rc = sb_session_run (&opts, &run_id, err, sizeof err);
        if (run_id > 0)
            sb_report_print (sb_resultdb_handle (db), run_id, stdout);
        fflush (stdout);
        if (rc != 0)
            fprintf (stderr, "shardbench: error: %s\n", err[0] ? err : "run failed");
    }
    /* the results directory is written whatever the outcome, as mlpstorage
     * writes its metadata in a finally block; a failure to write it fails
     * a run that succeeded */
    if ((a.results_dir || dlio.run_dir) && !a.dry_run
        && s_write_results_dirs (sb_resultdb_handle (db), last_before, &a, &dlio, cmd) != 0 && rc == 0)
        rc = 1;
    fflush (stdout);
    s_metrics_linger (metrics, a.metrics_linger);
done:
    sb_metrics_server_destroy (&metrics);
    s_private_ipc_remove (&ipc);
    sb_resultdb_destroy (&db);
    free (yaml);
    free (full_yaml);
    free (later_yaml);
    free (later_full_yaml);
    free (command_line);
    sb_host_proc_fini (&hp);
    for (size_t i = 0; given && i < noverrides; i++)
        free (given[i]);
    free (given);
    free (overrides);
    free (kv_given);
    free (kv_folder);
    sb_dlio_args_fini (&dlio);
    for (size_t i = 0; i < a.nhosts; i++)
        free (a.hosts[i]);
    free (a.hosts);
    sb_config_destroy (&cfg);
    return rc;
}

/* Can this process write path and make files beside it (WAL)? */
static int
s_writable (const char *path)
{
    char dir[PATH_MAX];
    snprintf (dir, sizeof dir, "%s", path);
    char *slash = strrchr (dir, '/');
    if (!slash)
        snprintf (dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    return access (path, W_OK) == 0 && access (dir, W_OK) == 0;
}

/* Open the result database db_path for reading a run back, read-only; NULL
 * after a message when it does not exist, cannot be opened or is corrupt.
 * Where the file is writable, runs whose coordinator is gone are first
 * marked 'interrupted' (and an older schema upgraded); where it is not, it
 * is read as it is. */
static sb_resultdb_t *
s_open_results (const char *db_path, const char *who)
{
    if (access (db_path, R_OK) != 0) {
        fprintf (stderr, "shardbench %s: %s: %s\n", who, db_path, strerror (errno));
        return NULL;
    }
    char err[1024];
    int checked = 0;
    if (s_writable (db_path)) {
        sb_resultdb_t *rw = sb_resultdb_open (db_path, err, sizeof err);
        if (!rw) {
            /* not to be written (a page check after an unclean stop found
             * damage): still read what can be read, as it is */
            char rerr[1024];
            sb_resultdb_t *db = sb_resultdb_open_readonly (db_path, 1, rerr, sizeof rerr);
            if (db)
                sb_warn ("%s; read as it is, its stale runs not marked", err);
            else
                fprintf (stderr, "shardbench %s: %s\n", who, rerr);
            return db;
        }
        /* a run whose coordinator is gone is not reported as 'running' */
        int stale = sb_resultdb_mark_interrupted (rw);
        if (stale > 0)
            sb_warn ("%d earlier run(s) in %s were left 'running' by a coordinator that is gone: marked 'interrupted'",
                     stale, db_path);
        (void) sb_series_mark_interrupted (rw);     /* and their series */
        sb_resultdb_destroy (&rw);
        checked = 1;
    }
    sb_resultdb_t *db = sb_resultdb_open_readonly (db_path, !checked, err, sizeof err);
    if (!db)
        fprintf (stderr, "shardbench %s: %s\n", who, err);
    return db;
}

/* Run id named by `which` (a number or 'last'); -1 after a message. */
static int64_t
s_run_id (sb_resultdb_t *db, const char *which, const char *db_path, const char *who)
{
    if (!strcmp (which, "last")) {
        int64_t id = sb_report_last_run (sb_resultdb_handle (db), NULL);
        if (id <= 0)
            fprintf (stderr, "shardbench %s: %s holds no runs\n", who, db_path);
        return id > 0 ? id : -1;
    }
    uint64_t v;
    if (s_parse_u64 ("RUN_ID", which, 1, &v) != 0 || v > INT64_MAX)
        return -1;
    return (int64_t) v;
}

static int
s_cmd_report (int argc, char **argv)
{
    const char *db_path = "shardbench.db", *which = "last";
    int json = 0, csv = 0;
    const char *csv_view = NULL;
    const char *html = NULL;
    sb_results_dir_opts_t results = { .root = NULL };
    for (int i = 0; i < argc; i++) {
        if (!strcmp (argv[i], "-h") || !strcmp (argv[i], "--help")) {
            s_usage_report (stdout);
            return 0;
        }
        else if (!strcmp (argv[i], "--db") && i + 1 < argc)
            db_path = argv[++i];
        else if (!strcmp (argv[i], "--json"))
            json = 1;
        else if (!strcmp (argv[i], "--results-dir") || !strcmp (argv[i], "--submitter")
                 || !strcmp (argv[i], "--system")) {
            if (i + 1 >= argc) {
                fprintf (stderr, "shardbench report: %s needs a value\n", argv[i]);
                return EXIT_USAGE;
            }
            const char *v = argv[++i];
            if (argv[i - 1][2] == 'r')
                results.root = v;
            else if (!sb_results_dir_name_ok (v)) {
                fprintf (stderr, "shardbench report: %s '%s': a name of letters, digits, '.', '_' and '-'\n",
                         argv[i - 1], v);
                return EXIT_USAGE;
            }
            else
                *(argv[i - 1][3] == 'u' ? &results.submitter : &results.system) = v;
        }
        else if (!strcmp (argv[i], "--html")) {
            if (i + 1 >= argc) {
                fprintf (stderr, "shardbench report: --html needs a FILE (or - for stdout)\n");
                return 2;
            }
            html = argv[++i];
        }
        else if (!strcmp (argv[i], "--csv")) {
            csv = 1;
            if (i + 1 < argc && sb_report_csv_view_known (argv[i + 1]))
                csv_view = argv[++i];
        }
        else if (argv[i][0] == '-') {
            fprintf (stderr, "shardbench report: unknown option '%s' (see --help)\n", argv[i]);
            return EXIT_USAGE;
        }
        else
            which = argv[i];
    }
    if (json + csv + !!html + !!results.root > 1) {
        fprintf (stderr, "shardbench report: --json, --csv, --html and --results-dir exclude each other\n");
        return EXIT_USAGE;
    }
    if ((results.submitter || results.system) && !results.root) {
        fprintf (stderr, "shardbench report: --submitter and --system go with --results-dir\n");
        return EXIT_USAGE;
    }
    sb_resultdb_t *db = s_open_results (db_path, "report");
    if (!db)
        return EXIT_USAGE;
    int64_t id = s_run_id (db, which, db_path, "report");
    sqlite3 *h = sb_resultdb_handle (db);
    char rerr[4096], leaf[PATH_MAX];
    if (id > 0 && results.root) {
        int ok = sb_mkdirs (results.root, rerr, sizeof rerr) == 0
              && sb_results_dir_write (h, id, &results, leaf, sizeof leaf, rerr, sizeof rerr) == 0;
        if (ok)
            printf ("%s\n", leaf);
        else
            fprintf (stderr, "shardbench report: --results-dir %s: %s\n", results.root, rerr);
        sb_resultdb_destroy (&db);
        return ok ? 0 : EXIT_USAGE;
    }
    int rc = id <= 0 ? -1
           : json ? sb_report_json (h, id, stdout)
           : csv ? sb_report_csv (h, id, csv_view, stdout)
           : html ? sb_report_html_file (h, id, html)
           : sb_report_print (h, id, stdout);
    sb_resultdb_destroy (&db);
    return rc == 0 ? 0 : EXIT_USAGE;
}

static int
s_cmd_compare (int argc, char **argv)
{
    const char *db_path = "shardbench.db", *which[8];
    int nwhich = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp (argv[i], "-h") || !strcmp (argv[i], "--help")) {
            s_usage_compare (stdout);
            return 0;
        }
        else if (!strcmp (argv[i], "--db") && i + 1 < argc)
            db_path = argv[++i];
        else if (argv[i][0] == '-') {
            fprintf (stderr, "shardbench compare: unknown option '%s' (see --help)\n", argv[i]);
            return EXIT_USAGE;
        }
        else if (nwhich < 8)
            which[nwhich++] = argv[i];
        else {
            fprintf (stderr, "shardbench compare: unexpected argument '%s' (at most 8 runs)\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (nwhich < 2) {
        fprintf (stderr, "shardbench compare: RUN_A and RUN_B are required (see --help)\n");
        return EXIT_USAGE;
    }
    sb_resultdb_t *db = s_open_results (db_path, "compare");
    if (!db)
        return EXIT_USAGE;
    int64_t ids[8];
    int ok = 1;
    for (int i = 0; i < nwhich && ok; i++)
        ok = (ids[i] = s_run_id (db, which[i], db_path, "compare")) > 0;
    int rc = ok ? sb_report_compare (sb_resultdb_handle (db), ids, (size_t) nwhich, stdout) : -1;
    sb_resultdb_destroy (&db);
    return rc == 0 ? 0 : EXIT_USAGE;
}

/* `shardbench series [SERIES_ID|last] [--json] [--db FILE]` */
static int
s_cmd_series (int argc, char **argv)
{
    const char *db_path = "shardbench.db", *which = "last";
    int json = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp (argv[i], "-h") || !strcmp (argv[i], "--help")) {
            s_usage_series (stdout);
            return 0;
        }
        else if (!strcmp (argv[i], "--db") && i + 1 < argc)
            db_path = argv[++i];
        else if (!strcmp (argv[i], "--json"))
            json = 1;
        else if (argv[i][0] == '-') {
            fprintf (stderr, "shardbench series: unknown option '%s' (see --help)\n", argv[i]);
            return EXIT_USAGE;
        }
        else
            which = argv[i];
    }
    sb_resultdb_t *db = s_open_results (db_path, "series");
    if (!db)
        return EXIT_USAGE;
    sqlite3 *h = sb_resultdb_handle (db);
    int64_t id = -1;
    uint64_t v;
    if (!strcmp (which, "last")) {
        id = sb_series_last (h);
        if (id == 0)
            fprintf (stderr, "shardbench series: %s holds no series (run one with `shardbench run --runs N`)\n",
                     db_path);
        else if (id < 0)
            fprintf (stderr, "shardbench series: %s: %s\n", db_path, sb_report_error (h));
    }
    else if (s_parse_u64 ("SERIES_ID", which, 1, &v) == 0 && v <= INT64_MAX)
        id = (int64_t) v;
    int rc = id <= 0 ? -1 : json ? sb_series_json (h, id, stdout) : sb_series_print (h, id, stdout);
    sb_resultdb_destroy (&db);
    return rc == 0 ? 0 : EXIT_USAGE;
}

/* `shardbench runs [--json] [--db FILE]` */
static int
s_cmd_runs (int argc, char **argv)
{
    const char *db_path = "shardbench.db";
    int json = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp (argv[i], "-h") || !strcmp (argv[i], "--help")) {
            s_usage_runs (stdout);
            return 0;
        }
        else if (!strcmp (argv[i], "--db") && i + 1 < argc)
            db_path = argv[++i];
        else if (!strcmp (argv[i], "--json"))
            json = 1;
        else {
            fprintf (stderr, "shardbench runs: unexpected argument '%s' (see --help)\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    sb_resultdb_t *db = s_open_results (db_path, "runs");
    if (!db)
        return EXIT_USAGE;
    int rc = sb_runs_print (sb_resultdb_handle (db), json, stdout);
    sb_resultdb_destroy (&db);
    return rc == 0 ? 0 : EXIT_USAGE;
}

static int
s_parse_positive (const char *opt, const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = text ? strtod (text, &end) : 0;
    if (!text || errno || !end || *end || end == text || !(v > 0) || !isfinite (v)) {
        fprintf (stderr, "shardbench datasize: %s expects a number > 0, got '%s'\n", opt, text ? text : "");
        return -1;
    }
    *out = v;
    return 0;
}

/* `shardbench datasize`: the minimum dataset of the MLPerf Storage rules. */
static int
s_cmd_datasize (int argc, char **argv)
{
    const char *workload = "quickstart";
    const char **overrides = calloc ((size_t) argc + 1, sizeof (char *));
    size_t noverrides = 0;
    uint64_t hosts = 0, accelerators = 0;
    double memory = 0, measured = 0;
    int rc = EXIT_USAGE, have_workload = 0;
    char err[4096];
    sb_config_t *cfg = sb_config_new ();
    if (!cfg || !overrides) {
        fprintf (stderr, "shardbench: out of memory\n");
        goto done;
    }
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp (arg, "-h") || !strcmp (arg, "--help")) {
            printf ("usage: shardbench datasize [WORKLOAD] [KEY=VALUE ...] --hosts H --host-memory-gb M\n"
                    "                           --accelerators A [--measured-memory-gb T]\n"
                    "\n"
                    "The minimum training dataset of the MLPerf Storage rules, computed as mlpstorage's\n"
                    "`training datasize` does, for H hosts of M GiB of memory each running A accelerators\n"
                    "in all: the larger of ceil (5 x H x M GiB / (samples per file x record length)) files\n"
                    "and ceil (500 steps x batch x A / samples per file) files. The record length is\n"
                    "dataset.record_length_bytes as written (114660.07 stays fractional), else for Parquet\n"
                    "the sum of the columns' sizes. --measured-memory-gb T: the hosts' measured memory, T\n"
                    "GiB in all; the larger of it and H x M is used, as mlpstorage does. Prints the\n"
                    "arithmetic, then the overrides to pass to `shardbench datagen` and `run` on the last\n"
                    "line; above 10,000 files, int (files / 10,000) subfolders, as mlpstorage suggests,\n"
                    "unless the workload sets dataset.num_subfolders_train.\n");
            rc = 0;
            goto done;
        }
        if ((!strcmp (arg, "--hosts") || !strcmp (arg, "--host-memory-gb") || !strcmp (arg, "--accelerators")
             || !strcmp (arg, "--measured-memory-gb")) && !next) {
            fprintf (stderr, "shardbench datasize: %s needs a value\n", arg);
            goto done;
        }
        if (!strcmp (arg, "--hosts")) {
            if (s_parse_u64 (arg, argv[++i], 1, &hosts) != 0)
                goto done;
        }
        else if (!strcmp (arg, "--accelerators")) {
            if (s_parse_u64 (arg, argv[++i], 1, &accelerators) != 0)
                goto done;
        }
        else if (!strcmp (arg, "--host-memory-gb")) {
            if (s_parse_positive (arg, argv[++i], &memory) != 0)
                goto done;
        }
        else if (!strcmp (arg, "--measured-memory-gb")) {
            if (s_parse_positive (arg, argv[++i], &measured) != 0)
                goto done;
            if (measured > 8e9) {
                fprintf (stderr, "shardbench datasize: --measured-memory-gb %s is over 8e9 GiB\n", argv[i]);
                goto done;
            }
        }
        else if (arg[0] == '-' && arg[1] == '-' && !strchr (arg, '=')) {
            fprintf (stderr, "shardbench datasize: unknown option '%s' (see --help)\n", arg);
            goto done;
        }
        else if (strchr (arg, '='))
            overrides[noverrides++] = arg;
        else if (!have_workload) {
            workload = arg;
            have_workload = 1;
        }
        else {
            fprintf (stderr, "shardbench datasize: unexpected argument '%s'\n", arg);
            goto done;
        }
    }
    if (!hosts || !accelerators || !(memory > 0)) {
        fprintf (stderr, "shardbench datasize: --hosts, --host-memory-gb and --accelerators are required\n");
        goto done;
    }
    sb_workload_t wl;
    if (s_resolve_workload (cfg, workload, NULL, overrides, noverrides, 0, &wl) != 0)
        goto done;
    double record_length;
    const char *how;
    if (sb_datasize_record_length (cfg, wl.format, &record_length, &how, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench datasize: %s\n", err);
        goto done;
    }
    sb_datasize_in_t in = {
        .hosts = hosts, .host_memory_gb = memory, .accelerators = accelerators, .batch_size = wl.batch_size,
        .record_length = record_length, .samples_per_file = wl.num_samples_per_file,
        .measured_memory_bytes = (uint64_t) (measured * 1073741824.0),
    };
    sb_datasize_t ds;
    if (sb_datasize (&in, &ds, err, sizeof err) != 0) {
        fprintf (stderr, "shardbench datasize: %s\n", err);
        goto done;
    }
    printf ("datasize for %s: %llu accelerators on %llu host(s) of %g GiB\n", workload,
            (unsigned long long) accelerators, (unsigned long long) hosts, memory);
    if (ds.memory_measured)
        printf ("  memory: the measured %.1f GiB, more than the declared %llu x %g GiB\n",
                ds.memory_bytes / 1073741824.0, (unsigned long long) hosts, memory);
    printf ("  record length: %.15g bytes (%s)\n", record_length, how);
    if (!(record_length > 0))
        fprintf (stderr, "shardbench datasize: warning: no record length: sized by the 500 steps alone, as"
                 " mlpstorage does\n");
    printf ("  files for %d steps per epoch:  ceil (%d x batch %llu x %llu accelerators / %llu) = %llu\n",
            SB_DATASIZE_STEPS, SB_DATASIZE_STEPS, (unsigned long long) wl.batch_size,
            (unsigned long long) accelerators, (unsigned long long) wl.num_samples_per_file,
            (unsigned long long) ds.files_steps);
    printf ("  files for %d x host memory:     ceil (%d x %.1f GiB / (%llu x %.15g bytes)) = %llu\n",
            SB_DATASIZE_MEMORY_FACTOR, SB_DATASIZE_MEMORY_FACTOR, ds.memory_bytes / 1073741824.0,
            (unsigned long long) wl.num_samples_per_file, record_length, (unsigned long long) ds.files_memory);
    printf ("  minimum: %llu files of %llu sample(s), %llu samples, %.2f GiB\n", (unsigned long long) ds.files,
            (unsigned long long) wl.num_samples_per_file, (unsigned long long) ds.samples, ds.gib);
    /* what knowing that many objects costs the coordinator (docs/LIMITS.md) */
    printf ("  catalog: a listing of sizes that differ stores about %d bytes an object in the result database"
            " (%.1f GiB here); DLIO's names of one size, synthetic storage and dataset.skip_listing store none\n",
            SB_DATASIZE_CATALOG_BYTES_PER_OBJECT, sb_datasize_catalog_gib (ds.files));
    uint64_t subfolders = wl.num_subfolders_train > 1 ? wl.num_subfolders_train : ds.subfolders;
    if (subfolders > 0)
        printf ("  subfolders: %llu (%s)\n", (unsigned long long) subfolders,
                wl.num_subfolders_train > 1 ? "the workload's" : "int (files / 10,000), as mlpstorage suggests");
    printf ("dataset.num_files_train=%llu", (unsigned long long) ds.files);
    if (subfolders > 0)
        printf (" dataset.num_subfolders_train=%llu", (unsigned long long) subfolders);
    printf ("\n");
    rc = 0;
done:
    free (overrides);
    sb_config_destroy (&cfg);
    return rc;
}

static void
s_note_created (const char *path, void *ctx)
{
    printf ("created %s\n", path);
}

static int
s_cmd_keys (int argc, char **argv)
{
    const char *dir = "shardbench-keys";
    const char *names[64];
    size_t nnames = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp (arg, "-h") || !strcmp (arg, "--help")) {
            printf ("usage: shardbench keys [--dir DIR] [--worker NAME ...]\n"
                    "\n"
                    "Create the ZeroMQ CURVE certificates of a cluster in DIR (default ./shardbench-keys),\n"
                    "keeping any that exist:\n"
                    "  DIR/coordinator.cert         the coordinator's public certificate (copy to every node)\n"
                    "  DIR/coordinator.cert_secret  its secret key (stays on the coordinator's node)\n"
                    "  DIR/NAME.cert, NAME.cert_secret  a worker certificate, NAME default 'worker'\n"
                    "                               (copy both to the worker nodes)\n"
                    "  DIR/allowed/NAME.cert        the workers the coordinator admits\n"
                    "Then: `shardbench run --keys DIR ...` and `shardbench-worker --keys DIR [--cert NAME] ...`.\n"
                    "To shut a worker certificate out, delete it from DIR/allowed/.\n");
            return 0;
        }
        if ((!strcmp (arg, "--dir") || !strcmp (arg, "--worker")) && !next) {
            fprintf (stderr, "shardbench keys: %s needs a value\n", arg);
            return EXIT_USAGE;
        }
        if (!strcmp (arg, "--dir"))
            dir = argv[++i];
        else if (!strcmp (arg, "--worker") && nnames < sizeof names / sizeof names[0])
            names[nnames++] = argv[++i];
        else {
            fprintf (stderr, "shardbench keys: unexpected argument '%s' (see --help)\n", arg);
            return EXIT_USAGE;
        }
    }
    if (nnames == 0)
        names[nnames++] = "worker";
    char err[1024];
    for (size_t i = 0; i < nnames; i++)
        if (sb_keys_create (dir, names[i], s_note_created, NULL, err, sizeof err) != 0) {
            fprintf (stderr, "shardbench keys: %s\n", err);
            return EXIT_USAGE;
        }
    printf ("keys in %s\n", dir);
    return 0;
}

static int
s_cmd_workloads (int argc, char **argv)
{
    if (argc > 0 && (!strcmp (argv[0], "-h") || !strcmp (argv[0], "--help"))) {
        printf ("usage: shardbench workloads\n\nList the workload presets built into this binary.\n");
        return 0;
    }
    for (const sb_embedded_t *p = sb_presets; p->name; p++)
        printf ("%s\n", p->name);
    return 0;
}

int
sb_cli_main (int argc, char **argv)
{
    sb_log_set_ident ("shardbench");
    zsys_init ();
    zsys_set_logstream (NULL);
    /* SIGINT, SIGTERM and SIGHUP set zsys_interrupted, which every phase of a
     * session checks to stop cleanly (session.h) */
    if (sb_session_catch_signals () != 0) {
        fprintf (stderr, "shardbench: cannot install the signal handlers: %s\n", strerror (errno));
        return 1;
    }
    if (argc < 2) {
        return sb_cli_main (2, (char *[]) { argv[0], "run", NULL });
    }
    const char *cmd = argv[1];
    if (!strcmp (cmd, "-h") || !strcmp (cmd, "--help") || !strcmp (cmd, "help")) {
        s_usage_main (stdout);
        return 0;
    }
    if (!strcmp (cmd, "--version")) {
        printf ("shardbench %s\nbuild: %s\nbuilt with: %s\n", SB_VERSION, SB_BUILD,
                *SB_FEATURES ? SB_FEATURES : "(no optional parts)");
        return 0;
    }
    if (!strcmp (cmd, "run"))
        return s_cmd_run (argc - 2, argv + 2, SB_SESSION_TRAIN);
    if (!strcmp (cmd, "datagen"))
        return s_cmd_run (argc - 2, argv + 2, SB_SESSION_DATAGEN);
    if (!strcmp (cmd, "catalog"))
        return s_cmd_run (argc - 2, argv + 2, SB_SESSION_CATALOG);
    if (!strcmp (cmd, "checkpoint"))
        return s_cmd_run (argc - 2, argv + 2, SB_SESSION_CHECKPOINT);
    if (!strcmp (cmd, "kvcache"))
        return s_cmd_run (argc - 2, argv + 2, SB_SESSION_KVCACHE);
    if (!strcmp (cmd, "report"))
        return s_cmd_report (argc - 2, argv + 2);
    if (!strcmp (cmd, "compare"))
        return s_cmd_compare (argc - 2, argv + 2);
    if (!strcmp (cmd, "series"))
        return s_cmd_series (argc - 2, argv + 2);
    if (!strcmp (cmd, "runs"))
        return s_cmd_runs (argc - 2, argv + 2);
    if (!strcmp (cmd, "workloads"))
        return s_cmd_workloads (argc - 2, argv + 2);
    if (!strcmp (cmd, "keys"))
        return s_cmd_keys (argc - 2, argv + 2);
    if (!strcmp (cmd, "datasize"))
        return s_cmd_datasize (argc - 2, argv + 2);
    fprintf (stderr, "shardbench: unknown command '%s'\n\n", cmd);
    s_usage_main (stderr);
    return EXIT_USAGE;
}
