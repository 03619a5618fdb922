#!/usr/bin/env python3
"""The sampler's DLIO kinds against tests/dlio_model.py (DLIO's rules with
numpy's own np.random.seed / np.random.shuffle) over a grid: every read of
every rank, epoch by epoch, and each epoch's figures. Prints the first
mismatch and fails. Usage: test_sampler_oracle.py SAMPLER_DUMP"""
import itertools
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import dlio_model  # noqa: E402

KINDS = dlio_model.KINDS
TOP_SEED = 2**32 - 100


def grid():
    """(kind, listed, expected, spf, ranks, batch, threads, seed, ss, fs, sce, max_steps, epochs, first, nranks)"""
    files = [(100, 0), (7, 0), (3, 0), (10, 9), (13, 11), (23, 0)]   # (listed, expected)
    settings = list(itertools.product([0, 123, TOP_SEED], [0, 1], [0, 1], [1, 0]))  # seed, ss, fs, sce
    n = 0
    for (listed, expected), spf, batch, ranks, threads, kind in itertools.product(
            files, [1, 3, 4], [1, 2, 4, 5], [1, 2, 3, 4, 8], [1, 2, 3], KINDS):
        # three of the 24 (seed, sample_shuffle, file_shuffle, seed_change_epoch)
        # settings each, in turn, so that every setting meets every shape often
        for i in range(3):
            seed, ss, fs, sce = settings[(n + 7 * i) % len(settings)]
            yield (kind, listed, expected, spf, ranks, batch, threads, seed, ss, fs, sce, 0, 3, 0, ranks)
        n += 1
    # a few ranks asked about, step caps, the top of numpy's seed range, k < threads
    extra = [
        ("dlio_iterative", 100, 0, 4, 8, 2, 3, 123, 1, 1, 1, 0, 3, 3, 2),
        ("dlio_files", 100, 0, 3, 8, 5, 3, 7, 1, 1, 1, 0, 3, 7, 1),
        ("dlio_index", 100, 0, 3, 4, 4, 2, 9, 1, 1, 0, 0, 3, 1, 2),
        ("dlio_index", 100, 0, 4, 3, 5, 2, 123, 1, 1, 1, 7, 3, 0, 3),
        ("dlio_iterative", 100, 0, 4, 3, 5, 3, 123, 1, 1, 1, 7, 3, 0, 3),
        ("dlio_files", 100, 0, 4, 3, 5, 3, 123, 1, 1, 1, 7, 3, 0, 3),
        ("dlio_iterative", 7, 0, 1, 1, 1, 8, 5, 1, 1, 1, 0, 3, 0, 1),
        ("dlio_files", 100, 0, 1, 2, 4, 3, 2**32 - 3, 0, 1, 0, 0, 3, 0, 2),
        ("dlio_files", 100, 0, 1, 2, 4, 3, 2**32 - 3, 0, 1, 1, 0, 3, 0, 2),
        ("dlio_iterative", 100, 0, 1, 2, 4, 3, 2**32 - 2, 1, 0, 1, 0, 3, 0, 2),
        ("dlio_iterative", 100, 0, 1, 2, 4, 3, 2**32 - 1, 1, 0, 0, 0, 3, 0, 2),
        ("dlio_index", 100, 0, 1, 2, 4, 3, 2**32, 1, 0, 0, 0, 3, 0, 2),
        ("dlio_index", 100, 0, 1, 2, 4, 3, 2**32, 0, 0, 0, 0, 3, 0, 2),
        ("dlio_index", 100, 200, 2, 3, 4, 1, 1, 0, 1, 1, 0, 2, 0, 3),
        ("dlio_files", 24, 0, 4, 3, 4, 8, 3, 0, 1, 1, 0, 2, 0, 3),
        ("dlio_iterative", 24, 0, 4, 3, 4, 16, 3, 1, 1, 1, 0, 2, 0, 3),
    ]
    yield from extra


def model_lines(c):
    kind, listed, expected, spf, ranks, batch, threads, seed, ss, fs, sce, max_steps, epochs, first, nranks = c
    lines = dlio_model.run_lines(kind=kind, listed=listed, expected=expected, spf=spf, ranks=ranks, batch=batch,
                                 threads=threads, seed=seed, sample_shuffle=bool(ss), file_shuffle=bool(fs),
                                 seed_change_epoch=bool(sce), max_steps=max_steps, epochs=epochs,
                                 first_rank=first, nranks=nranks)
    return lines


def c_answers(dump, configs):
    text = "".join(" ".join(str(v) for v in c) + "\n" for c in configs)
    res = subprocess.run([dump, "-"], input=text, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"FAIL: sampler_dump exited {res.returncode}: {res.stderr}")
    answers, cur = [], []
    for line in res.stdout.splitlines():
        if line == "end":
            answers.append(cur)
            cur = []
        else:
            cur.append(line)
    if len(answers) != len(configs):
        sys.exit(f"FAIL: sampler_dump answered {len(answers)} of {len(configs)} configurations")
    return answers


def normalise_error(line):
    """'error epoch E MESSAGE' -> 'error epoch E seed|batch'"""
    parts = line.split(" ", 3)
    message = parts[3] if len(parts) > 3 else ""
    reason = "seed" if "seed" in message else "batch" if "batch" in message else "other: " + message
    return f"error epoch {parts[2]} {reason}"


def main():
    dump = sys.argv[1]
    configs = list(grid())
    answers = c_answers(dump, configs)
    reads = errors = 0
    for c, got in zip(configs, answers):
        want = model_lines(c)
        got = [normalise_error(g) if g.startswith("error") else g for g in got]
        if got != want:
            for i, (g, w) in enumerate(itertools.zip_longest(got, want, fillvalue="<nothing>")):
                if g != w:
                    print("FAIL: configuration (kind listed expected spf ranks batch threads seed sample_shuffle"
                          " file_shuffle seed_change_epoch max_steps epochs first_rank nranks):")
                    print("  " + " ".join(str(v) for v in c))
                    print(f"  line {i}: sampler '{g}'")
                    print(f"  line {i}: model   '{w}'")
                    print("  (lines are RANK EPOCH POSITION FILE SAMPLE THREAD)")
                    return 1
        reads += sum(1 for w in want if not w.startswith(("epoch", "error")))
        errors += sum(1 for w in want if w.startswith("error"))
    print(f"ok: {len(configs)} configurations, {reads} reads equal to the model, {errors} where both stop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
