#!/usr/bin/env python3
"""dlio_model: the per-rank read order of mlcommons/DLIO_local_changes (the
DLIO that MLPerf Storage v3.0 runs), modelled from its code with numpy's own
generator, as the oracle for shardbench's sampler (lib/dataset/sampler.h).

It calls np.random.seed / np.random.shuffle where and how DLIO does (on
Python lists where DLIO shuffles lists, on np.arange arrays where it shuffles
arrays), simulates the alltoall of the file reshard with real lists, and
consumes the loader's batches by running one generator per loader thread and
taking one batch from each in turn, not by formulas.

DLIO rules (file: function):
- main.py initialize: rank 0 lists train/ in name order; rank r keeps the
  files at positions r, r+R, ...; then every rank keeps only its first
  floor(min(expected, listed) / R) (expected = num_files_train, 0: listed);
  files_pre_sharded is True for every training run.
- config.py reconfigure(epoch), called with 1 before epoch 1 and with e+1
  after epoch e; with file_shuffle it runs _reshard_files(epoch), whose
  result is the input of the next epoch's reshard:
  seed(seed + epoch if seed_change_epoch else seed), shuffle(list(files)),
  file i to bucket (i + rank) % R, alltoall, concatenate what each source
  rank sent in rank order, seed(seed + epoch + 31 * rank), shuffle.
- index kind (pytorch map-style): get_global_map_index builds a
  VirtualIndexMap; with sample_shuffle it seeds and shuffles np.arange(k)
  (seed + epoch or seed) but dlio_sampler yields 0..k-1 and
  reader_handler.read_index resolves index i to local file i // spf, sample
  i % spf: the permutation never reaches the read order. DataLoader(batch,
  drop_last=True): batch q is fetched by worker q % threads.
- iterative kind (tensorflow): build_sample_map_iter: sample_list =
  np.arange(k), shuffled with seed(seed + epoch or seed) when sample_shuffle;
  entry i: file local[(i // spf) % files], sample sample_list[i] % spf, thread
  (i // (k // threads)) % threads; FormatReader.next yields full batches of a
  thread's entries in order (partial dropped); tf.data interleave
  (cycle_length = threads, block_length 1) takes one batch from each thread in
  turn, skipping exhausted ones.
- files kind (torch_data_loader.py TorchIterableDataset /
  TorchIterableDatasetSimple): worker w takes local files[w::threads], reads
  every sample of each in order, yields a batch whenever batch_size samples
  are buffered (carried across files, the partial rest dropped); the
  DataLoader takes one batch from each worker in turn, skipping exhausted ones.
- steps (main.py _train): the loop stops at training_steps
  (derive_configurations: allreduce_min(ceil(k / batch)); after _reshard_files
  allreduce_min(k // batch)), at train.total_training_steps (per epoch) or
  when the loader is exhausted.
- numpy raises ValueError for a seed outside 0 .. 2**32 - 1: DLIO stops there.
- evaluation (main.py run, _eval; evaluations below): after training epoch
  e when e >= next (next = eval_after_epoch, += epochs_between_evals), the
  evaluation map that reconfigure(e) built from valid/'s list (listed and
  trimmed as train/'s, expected = num_files_eval) with batch_size_eval, until
  eval_steps (ceil(k / batch_eval); after _reshard_files k // batch_eval) or
  the loader's end; no max_steps. reconfigure reshards the training list and
  then the evaluation list and builds the training map and then the
  evaluation map, each call seeding numpy first, so the evaluation order does
  not depend on the training shuffle's state. (Its branch for lists that are
  not pre-sharded, where the evaluation list is shuffled right after the
  training list from the same state, runs only without workflow.train, when
  no file is listed.)

Where DLIO misbehaves, shardbench does what it means (marked FIX below):
- FIX spt: build_sample_map_iter divides by k // threads, 0 when k < threads
  (ZeroDivisionError); the model uses max(1, k // threads).
- FIX tails: iterative and files kinds drop each thread's partial batch (up
  to threads * (batch - 1) samples per rank, every batch when a thread has
  fewer than batch samples: 0 steps). After DLIO's batches, the samples the
  threads left (thread 0's rest, then thread 1's, ...) make further full
  batches, so each rank reads floor(k / batch) batches and drops k % batch.
  DLIO's own count is returned as dlio_steps; its batches are a prefix.
- FIX stale list: the files kind's workers are persistent and keep the file
  list of epoch 1 (FormatReader captures args.file_list_train once); the
  model reads each epoch's resharded list, as DLIO's comments intend.

CLI: dlio_model.py --kind dlio_index --listed 100 --spf 4 --ranks 3 --batch 4
     [--expected N] [--threads 2] [--seed 123] [--sample-shuffle] [--file-shuffle]
     [--no-seed-change-epoch] [--max-steps N] [--epochs 3] [--first-rank 0]
     [--nranks R] [--json]
prints, per epoch, "epoch E files_per_rank F steps S samples_per_rank N
dropped D unused_files U" then "RANK EPOCH POSITION FILE SAMPLE THREAD" for
each read in consumption order; "error epoch E seed|batch: MESSAGE" ends the
output where DLIO would stop (seed) or no full batch exists (batch).
"""
import argparse
import json
import sys

import numpy as np

KINDS = ("dlio_index", "dlio_iterative", "dlio_files")


class ModelError(Exception):
    """DLIO stops here (reason 'seed') or no rank gets a batch ('batch')."""

    def __init__(self, reason, message):
        super().__init__(message)
        self.reason = reason


def np_seed(value):
    try:
        np.random.seed(value)
    except ValueError as e:
        raise ModelError("seed", f"np.random.seed({value}): {e}")


def listing(listed, expected, ranks):
    """main.py initialize: round-robin over the name-ordered listing, trim."""
    my_files = [[f for f in range(listed) if f % ranks == r] for r in range(ranks)]
    effective = min(expected, listed) if expected > 0 else listed
    per_rank = effective // ranks
    return [files[:per_rank] for files in my_files]


def reshard(lists, seed, epoch, seed_change_epoch):
    """config.py _reshard_files for every rank, the alltoall included."""
    ranks = len(lists)
    sent = []
    for rank in range(ranks):
        paths = list(lists[rank])
        np_seed(seed + epoch if seed_change_epoch else seed)
        np.random.shuffle(paths)
        buckets = [[] for _ in range(ranks)]
        for i, fpath in enumerate(paths):
            buckets[(i + rank) % ranks].append(fpath)
        sent.append(buckets)
    new_lists = []
    for rank in range(ranks):
        new_shard = []
        for src in range(ranks):
            new_shard.extend(sent[src][rank])
        np_seed(seed + epoch + rank * 31)
        np.random.shuffle(new_shard)
        new_lists.append(new_shard)
    return new_lists


def sample_permutation(k, seed, epoch, seed_change_epoch):
    """np.arange(k) shuffled as build_sample_map_iter / VirtualIndexMap do."""
    sample_list = np.arange(0, k)
    np_seed(seed + epoch if seed_change_epoch else seed)
    np.random.shuffle(sample_list)
    return sample_list


def thread_streams_iterative(files, spf, threads, sample_list):
    """build_sample_map_iter's process_thread_file_map: per thread, its
    (file, sample) entries in order."""
    k = len(sample_list)
    spt = max(1, k // threads)  # FIX spt
    streams = [[] for _ in range(threads)]
    nfiles = len(files)
    for i in range(k):
        t = (i // spt) % threads
        streams[t].append((files[(i // spf) % nfiles], int(sample_list[i]) % spf))
    return streams


def thread_streams_files(files, spf, threads):
    """TorchIterable datasets: worker w reads every sample of files[w::threads]."""
    return [[(f, s) for f in files[w::threads] for s in range(spf)] for w in range(threads)]


def batches_in_turn(streams, batch):
    """Each stream yields full batches (partial dropped); take one from each
    stream in turn, skipping exhausted ones (tf.data interleave, PyTorch's
    DataLoader over iterable workers). Returns (batches, leftovers), a batch
    being a list of (file, sample, thread)."""
    def gen(t, stream):
        for b in range(len(stream) // batch):
            yield [(f, s, t) for f, s in stream[b * batch:(b + 1) * batch]]
    active = [gen(t, s) for t, s in enumerate(streams)]
    out = []
    while active:
        still = []
        for g in active:
            item = next(g, None)
            if item is not None:
                out.append(item)
                still.append(g)
        active = still
    leftovers = []
    for t, s in enumerate(streams):
        leftovers.extend((f, smp, t) for f, smp in s[(len(s) // batch) * batch:])
    return out, leftovers


def rank_batches(kind, files, spf, batch, threads, sample_list, loop_steps):
    """One rank's batches in consumption order, each a list of (file, sample,
    thread), and DLIO's own step count: the loader's batches, at most
    loop_steps (the bound main.py's loop stops at: training_steps or
    eval_steps). After DLIO's batches come the FIX tails batches."""
    k = len(files) * spf
    if kind == "dlio_index":
        order = [[(files[i // spf], i % spf, q % threads) for i in range(q * batch, (q + 1) * batch)]
                 for q in range(k // batch)]
        return order, min(len(order), loop_steps)
    if kind == "dlio_iterative":
        streams = thread_streams_iterative(files, spf, threads, sample_list)
    else:
        streams = thread_streams_files(files, spf, threads)
    order, leftovers = batches_in_turn(streams, batch)
    loader_batches = len(order)
    # FIX tails
    order += [leftovers[b * batch:(b + 1) * batch] for b in range(len(leftovers) // batch)]
    return order, min(loader_batches, loop_steps)


def model(kind, listed, spf, ranks, batch, expected=0, threads=1, seed=123, sample_shuffle=False,
          file_shuffle=False, seed_change_epoch=True, max_steps=0, epochs=1, first_rank=0, nranks=None):
    """Yield, per epoch, a dict: epoch, files_per_rank, steps, dlio_steps,
    samples_per_rank, dropped, unused_files, reads {rank: [(file, sample,
    thread), ...]} for ranks first_rank .. first_rank + nranks - 1. Raises
    ModelError where DLIO stops (after yielding the epochs before)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind}")
    if nranks is None:
        nranks = ranks - first_rank
    lists = listing(listed, expected, ranks)
    per_rank = len(lists[0])
    k = per_rank * spf
    for epoch in range(1, epochs + 1):
        # reconfigure(epoch)
        if file_shuffle:
            lists = reshard(lists, seed, epoch, seed_change_epoch)
        sample_list = np.arange(0, k)
        if sample_shuffle and per_rank > 0:
            sample_list = sample_permutation(k, seed, epoch, seed_change_epoch)
        if k // batch == 0:
            raise ModelError("batch", f"{k} samples per rank do not fill a batch of {batch}")
        # what main._train runs
        training_steps = k // batch if file_shuffle else -(-k // batch)
        reads = {}
        dlio_steps = None
        for rank in range(first_rank, first_rank + nranks):
            order, steps_dlio = rank_batches(kind, lists[rank], spf, batch, threads, sample_list, training_steps)
            steps = len(order)
            if max_steps > 0:
                steps_dlio = min(steps_dlio, max_steps)
                steps = min(steps, max_steps)
            dlio_steps = steps_dlio
            reads[rank] = [read for b in order[:steps] for read in b]
        yield {
            "epoch": epoch, "files_per_rank": per_rank, "steps": steps, "dlio_steps": dlio_steps,
            "samples_per_rank": steps * batch, "dropped": ranks * (k - steps * batch),
            "unused_files": listed - ranks * per_rank, "reads": reads,
        }


def evaluations(kind, listed_train, listed_eval, spf, ranks, batch, batch_eval, expected_train=0, threads=1,
                seed=123, sample_shuffle=False, file_shuffle=False, seed_change_epoch=True, epochs=1,
                eval_after_epoch=1, epochs_between_evals=1, first_rank=0, nranks=None):
    """DLIO's evaluation phases (main.py run and _eval): yield, per
    evaluation, a dict: epoch (the training epoch it follows),
    files_per_rank, steps, dlio_steps, samples_per_rank, reads {rank:
    [(file, sample, thread), ...]}, file being the valid/ file's position in
    the name-ordered listing. Every epoch's reconfigure runs in DLIO's order
    on numpy's one global generator (the training list's reshard, then the
    evaluation list's, then the training map's sample permutation, then the
    evaluation map's), so whatever state one call leaves reaches the next as
    in DLIO; every one of them seeds first, so it does not. Raises ModelError
    where DLIO stops."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind}")
    if nranks is None:
        nranks = ranks - first_rank
    train_lists = listing(listed_train, expected_train, ranks)
    eval_lists = listing(listed_eval, listed_eval, ranks)   # expected = num_files_eval (do_eval)
    k_train = len(train_lists[0]) * spf
    per_rank = len(eval_lists[0])
    k = per_rank * spf
    next_eval = eval_after_epoch
    for epoch in range(1, epochs + 1):
        # reconfigure(epoch): before epoch 1, then after each epoch's
        # evaluation for the next, so evaluation e reads reconfigure(e)'s lists
        if file_shuffle:    # files_pre_sharded: _reshard_files, train then eval
            train_lists = reshard(train_lists, seed, epoch, seed_change_epoch)
            eval_lists = reshard(eval_lists, seed, epoch, seed_change_epoch)
        sample_list = np.arange(0, k)
        if sample_shuffle:  # build_sample_map_iter / get_global_map_index: train's map, then eval's
            if k_train > 0:
                sample_permutation(k_train, seed, epoch, seed_change_epoch)
            if k > 0:
                sample_list = sample_permutation(k, seed, epoch, seed_change_epoch)
        if epoch < next_eval:
            continue
        next_eval += epochs_between_evals
        if k // batch_eval == 0:
            raise ModelError("batch", f"{k} evaluation samples per rank do not fill a batch of {batch_eval}")
        # what main._eval runs: eval_steps (derive_configurations:
        # allreduce_min(ceil(k / batch_eval)); after _reshard_files
        # allreduce_min(k // batch_eval)), or until the loader is exhausted
        eval_steps = k // batch_eval if file_shuffle else -(-k // batch_eval)
        reads = {}
        dlio_steps = steps = None
        for rank in range(first_rank, first_rank + nranks):
            order, dlio_steps = rank_batches(kind, eval_lists[rank], spf, batch_eval, threads, sample_list, eval_steps)
            steps = len(order)
            reads[rank] = [read for b in order for read in b]
        yield {
            "epoch": epoch, "files_per_rank": per_rank, "steps": steps, "dlio_steps": dlio_steps,
            "samples_per_rank": steps * batch_eval, "reads": reads,
        }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", required=True, choices=KINDS)
    ap.add_argument("--listed", type=int, required=True)
    ap.add_argument("--expected", type=int, default=0)
    ap.add_argument("--spf", type=int, required=True)
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=123)
    ap.add_argument("--sample-shuffle", action="store_true")
    ap.add_argument("--file-shuffle", action="store_true")
    ap.add_argument("--no-seed-change-epoch", action="store_true")
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--first-rank", type=int, default=0)
    ap.add_argument("--nranks", type=int)
    ap.add_argument("--json", action="store_true", help="one JSON object per epoch instead of lines")
    a = ap.parse_args(argv)
    out = sys.stdout
    epoch = 0
    try:
        for e in model(a.kind, a.listed, a.spf, a.ranks, a.batch, a.expected, a.threads, a.seed,
                       a.sample_shuffle, a.file_shuffle, not a.no_seed_change_epoch, a.max_steps,
                       a.epochs, a.first_rank, a.nranks):
            epoch = e["epoch"]
            if a.json:
                e = dict(e, reads={str(r): v for r, v in e["reads"].items()})
                out.write(json.dumps(e) + "\n")
                continue
            out.write(format_header(e) + "\n")
            for rank, reads in e["reads"].items():
                for pos, (f, s, t) in enumerate(reads):
                    out.write(f"{rank} {epoch} {pos} {f} {s} {t}\n")
    except ModelError as err:
        out.write(f"error epoch {epoch + 1} {err.reason}: {err}\n")
    return 0


def tf_reads(reads, rows_per_group=0):
    """The reads DLIO's tf.data loader (data_loader/tf_data_loader.py: one
    FormatReader per loader thread, made afresh every epoch) makes over one
    rank's epoch of the iterative kind, reads being that epoch's [(file,
    sample, thread), ...] in consumption order. Returns [(position, thread,
    file, group), ...], one per read, at the position that first needs it:
    - npz (rows_per_group 0; reader/npz_reader_iterable.py,
      _LocalFSIterableMixin._localfs_stream_next): each distinct file of a
      thread's entries is read once, whole (group None); a file whose
      entries two threads share is read by both;
    - parquet (rows_per_group > 0; reader/parquet_reader_file_iterable.py):
      each row group (sample // rows_per_group) a thread's samples fall in,
      once per thread and epoch (the reader's _rg_cache); its footer once
      per (thread, file), not listed here.
    DLIO's readers also read what a thread's dropped partial batch would
    have served, and npz's reads all files of a thread up front; over an
    epoch whose reads cover every entry (no max_steps, no dropped samples)
    the reads are the same."""
    out = []
    seen = set()
    for pos, (f, smp, t) in enumerate(reads):
        key = (t, f, smp // rows_per_group if rows_per_group else None)
        if key not in seen:
            seen.add(key)
            out.append((pos, t, f, key[2]))
    return out


def tf_opens(reads):
    """The (thread, file) pairs, in first-use order, whose reader opens the
    file in one rank's epoch of the iterative kind (reads as for tf_reads):
    DLIO's parquet reader (reader/parquet_reader_file_iterable.py open)
    reads the footer and submits a read of every row group of the file
    there, whichever its samples fall in."""
    out = []
    for _pos, t, f, _g in tf_reads(reads):
        if (t, f) not in out:
            out.append((t, f))
    return out


def format_header(e):
    return (f"epoch {e['epoch']} files_per_rank {e['files_per_rank']} steps {e['steps']} "
            f"samples_per_rank {e['samples_per_rank']} dropped {e['dropped']} unused_files {e['unused_files']}")


def run_lines(**cfg):
    """The model's CLI lines for one configuration (errors included)."""
    lines = []
    epoch = 0
    try:
        for e in model(**cfg):
            epoch = e["epoch"]
            lines.append(format_header(e))
            for rank, reads in e["reads"].items():
                lines.extend(f"{rank} {epoch} {pos} {f} {s} {t}" for pos, (f, s, t) in enumerate(reads))
    except ModelError as err:
        lines.append(f"error epoch {epoch + 1} {err.reason}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
