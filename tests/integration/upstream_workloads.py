#!/usr/bin/env python3
"""Every upstream workload YAML (MLPerf Storage, DLIO), scaled down, through
shardbench's datagen and the file's own workflow.
Driven by test_upstream_workloads.sh, which starts the S3 test server.

usage: upstream_workloads.py buckets FOLDER
       upstream_workloads.py run FOLDER SCRATCH [ONLY ...]
       upstream_workloads.py keys FOLDER DOCS_DLIO_MD

`buckets` prints the S3 buckets the files name (the server creates them).
`keys` checks that docs/DLIO.md's key table names every key the files use
(see documented_keys). `run` runs every file (or only the named ones, relative paths), prints one
line per file and a final table, and exits 0 when every file did what its
workflow flags ask (files in UNRUNNABLE must still fail as documented).

What a file is given on the command line, and nothing else:
  - sizes: dataset.num_files_train (8; 1 stays 1), num_samples_per_file (2;
    1 stays 1; 16 when there is one file), record_length[_bytes] (at most
    4096), their stdev (at most 1024), num_files_eval (4), parquet
    row_group_size (at most 2), reader.batch_size and batch_size_eval (at
    most 2), train.epochs (at most 10), computation_time, eval_time and
    time_between_checkpoints (0), total_training_steps (at most 4, and
    steps_between_checkpoints in proportion), num_checkpoints_write/read (at
    most 2), model sizes (model.model_size[_bytes], checkpoint.model_size at
    most 4096; layer_parameters, optimization_groups / 100000) and, for
    transformer models, checkpoint.scale=1e-6;
  - where: absolute paths and file:// URIs of data_folder, storage_root,
    data_loader_root, checkpoint_folder and output.folder are moved under the
    file's scratch folder (/X -> SCRATCH/fNN/abs/X, relations between them
    kept); on S3 every endpoint_url / endpoint_uris points at the test server
    (added under the storage section when the file names none), literal
    credentials are replaced by the server's (empty and ${VAR} ones are
    left: the environment holds the server's), the files' own bucket names
    are kept (the server creates them), *_PLACEHOLDER values are filled in as
    their comments say mlpstorage does (bucket, library, endpoint);
  - as mlpstorage does for checkpoint workloads run on fewer processes than
    tensor x pipeline (or that set model.parallelism.data):
    checkpoint.mode=subset, model.parallelism.data=(the file's, else 1; at
    least what covers the ranks, as DLIO requires).
The workflow keys are never overridden. 1 local worker; 2 accelerators (1
when the file has a single data file).

Checks, from DLIO's main.py rules with the scaled sizes:
  generate_data: after the run (or datagen), num_files_train files under
    train/ and num_files_eval under valid/ (local disk, or the S3 server's
    folder); when False, `shardbench datagen` runs first and the run must
    leave every dataset file as it was (mtime, size) and start no datagen run;
  train: one train run, epochs rows 1..E, each with A x steps x batch samples
    and `steps` batches (steps = min(floor(floor(F/A) x spf / batch),
    total_training_steps)); when False, no train run and no epochs rows;
  evaluation: the evaluations DLIO runs (eval_after_epoch,
    epochs_between_evals) found in the result database (see eval_phases);
    when False, none;
  checkpoint: during training, DLIO's schedule (steps_between_checkpoints
    per epoch, else checkpoint_after_epoch / epochs_between_checkpoints) as
    checkpoints rows with op 'write'; without training, num_checkpoints_write
    writes and num_checkpoints_read reads; files under checkpoint_folder;
    when False, no checkpoints rows and no checkpoint folder.
"""
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time

import urllib.error
import urllib.parse
import urllib.request

import yaml

# The Azurite containers the upstream Azure files name (the test script creates them)
AZURE_CONTAINERS = ("mlperf-container",)

# Files that cannot run under shardbench, with the documented reason and a
# text the refusal must contain. The test fails when one of these passes
# (remove it from here), or fails without that text.
UNRUNNABLE = {
}

# Files DLIO_local_changes refuses to run (its config.py: LoadConfig's
# StorageType, validate's custom-loader and S3-library checks), with a text of
# the refusal. shardbench refuses them too (tests/unit/test_dlio_refusals_upstream.c);
# here they run with ++workload.shardbench.lenient=true, and the run must warn
# with that text.
_STORAGE_TYPE = ("datagen_s3dlio_azure", "datagen_s3dlio_multiendpoint", "datagen_s3dlio_s3", "hybrid_storage",
                 "multi_endpoint_mpi", "multi_endpoint_roundrobin", "resnet50_s3dlio_test", "test_local_datagen",
                 "zerocopy_file_test")
_LOADER_CLASS = ("pytorch_file_backend", "pytorch_s3dlio", "pytorch_s3dlio_azure", "pytorch_s3dlio_local_test",
                 "pytorch_s3dlio_multiendpoint", "pytorch_s3torchconnector", "test_local_train")
DLIO_REFUSED = dict(
    [(f"mlcommons-storage/{n}.yaml", "DLIO_local_changes refuses 's3dlio'") for n in _STORAGE_TYPE]
    + [(f"mlcommons-storage/test_unet3d_datagen_{n}.yaml", "DLIO_local_changes refuses 'object'")
       for n in ("minio", "s3")]
    + [(f"mlcommons-storage/{n}.yaml", "DLIO_local_changes refuses a custom data loader class") for n in _LOADER_CLASS]
    + [(f"dlio-local-changes/{n}.yaml", "DLIO_local_changes refuses storage_type s3 with framework pytorch")
       for n in ("dlrm_s3dlio_s3", "unet3d_a100_s3", "unet3d_h100_s3", "unet3d_v100_s3")])
LENIENT_WARNING = "; running it anyway (shardbench.lenient: true)"

S3_KEY = os.environ.get("AWS_ACCESS_KEY_ID", "S3RVER")
S3_SECRET = os.environ.get("AWS_SECRET_ACCESS_KEY", "S3RVER")
PLACEHOLDERS = {"BUCKET_PLACEHOLDER": "sb-placeholder", "LIBRARY_PLACEHOLDER": "s3dlio"}
PATH_KEYS = ("data_folder", "storage_root", "data_loader_root", "checkpoint_folder", "output.folder")
CMD_TIMEOUT = int(os.environ.get("SB_UPSTREAM_TIMEOUT", "90"))


def flatten(node, prefix=""):
    """Dotted leaf keys of a YAML mapping (lists and empty mappings are leaves)."""
    out = {}
    if isinstance(node, dict):
        for k, v in node.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict) and v:
                out.update(flatten(v, key))
            else:
                out[key] = v
    return out


def yaml_files(folder):
    found = []
    for root, _, names in os.walk(folder):
        for n in names:
            if n.endswith((".yaml", ".yml")):
                found.append(os.path.relpath(os.path.join(root, n), folder))
    return sorted(found)


def scalar(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    return str(v)


def num(v, default):
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


class Plan:
    """What to run for one file and what must come of it."""

    def __init__(self, rel, doc, cwd, endpoints):
        self.rel = rel
        self.doc = doc if isinstance(doc, dict) else {}
        self.flat = flatten(self.doc)
        self.cwd = cwd
        self.overrides = []
        self.notes = []
        d = self.doc
        wf = d.get("workflow") if isinstance(d.get("workflow"), dict) else {}
        self.gen = bool(wf.get("generate_data", False))
        self.train = bool(wf.get("train", True))
        self.evaluation = bool(wf.get("evaluation", False))
        self.ckpt = bool(wf.get("checkpoint", False))
        self.kind = self._storage_kind()
        if rel in DLIO_REFUSED:
            self.set("shardbench.lenient", "true")
        self.buckets = set()
        self._where(endpoints)
        self._sizes()

    # -- storage ---------------------------------------------------------
    def _values(self):
        return [v for v in self.flat.values() if isinstance(v, str)]

    def _storage_kind(self):
        f = self.flat
        if any(v.startswith("az://") for v in self._values()):
            return "azure"
        st = str(f.get("storage.storage_type", f.get("reader.storage_type", ""))).lower()
        roots = [str(f.get(k, "")) for k in ("storage.storage_root", "reader.storage_root",
                                             "dataset.data_folder", "reader.data_loader_root")]
        if st in ("s3", "object") or any(r.startswith("s3://") for r in roots):
            return "s3"
        return "local"

    def _storage_section(self):
        for sec in ("storage", "reader"):
            keys = [k for k in self.flat if k.startswith(sec + ".")]
            if any(re.match(sec + r"\.(storage_|endpoint_uris|data_loader_root)", k) for k in keys):
                return sec
        return "storage"

    def set(self, key, value):
        # mlpstorage's form: the file's keys include some shardbench does not
        # know (model.optimization_groups), which KEY=VALUE refuses as a typo
        self.overrides.append(f"++workload.{key}={value}")

    def _where(self, endpoints):
        f = self.flat
        for key, v in f.items():
            if not isinstance(v, str):
                continue
            nv = v
            for ph, rep in PLACEHOLDERS.items():
                nv = nv.replace(ph, rep)
            if "ENDPOINT_PLACEHOLDER" in nv:
                nv = nv.replace("ENDPOINT_PLACEHOLDER", endpoints[0])
            if (key.endswith(PATH_KEYS) or key == "output.folder") and "${" not in nv:
                if nv.startswith("file:///"):
                    nv = "file://" + os.path.join(self.cwd, "abs", nv[len("file:///"):])
                elif nv.startswith("/"):
                    nv = os.path.join(self.cwd, "abs", nv[1:])
                if v.endswith("/") and not nv.endswith("/"):
                    nv += "/"
            if nv != v:
                self.set(key, nv)
                f[key] = nv  # what the run sees, for the checks below
        if self.kind != "s3":
            return
        have_endpoint = False
        for key, v in list(f.items()):
            if key.endswith("endpoint_url"):
                self.set(key, endpoints[0])
                have_endpoint = True
            elif key.endswith("endpoint_uris"):
                self.set(key, "[" + ", ".join(endpoints) + "]")
                have_endpoint = True
            elif key.endswith(("access_key_id", "secret_access_key")) and isinstance(v, str) \
                    and v and "${" not in v:
                self.set(key, S3_KEY if key.endswith("access_key_id") else S3_SECRET)
        if not have_endpoint:
            self.set(self._storage_section() + ".storage_options.endpoint_url", endpoints[0])
        for key in ("storage.storage_root", "reader.storage_root", "dataset.data_folder",
                    "reader.data_loader_root", "checkpoint.checkpoint_folder"):
            v = f.get(key)
            if not isinstance(v, str) or "${" in v or v.startswith(("file://", "/", ".")):
                continue
            if key in ("dataset.data_folder", "checkpoint.checkpoint_folder") and not v.startswith("s3://"):
                continue
            b = v[len("s3://"):] if v.startswith("s3://") else v
            b = b.split("/")[0]
            if b:
                self.buckets.add(b)

    # -- sizes -----------------------------------------------------------
    def _sizes(self):
        f = self.flat
        ds = "dataset."
        self.has_data = self.train or self.gen
        files0 = int(num(f.get(ds + "num_files_train"), 8))
        self.files = 1 if files0 == 1 else 8
        self.accel = 1 if self.files == 1 else 2
        spf0 = int(num(f.get(ds + "num_samples_per_file"), 1))
        self.spf = 1 if spf0 == 1 else (16 if self.files == 1 else 2)
        if self.has_data:
            self.set(ds + "num_files_train", self.files)
            if ds + "num_samples_per_file" in f:
                self.set(ds + "num_samples_per_file", self.spf)
        for key in ("record_length_bytes", "record_length"):
            if num(f.get(ds + key), 0) > 4096:
                self.set(ds + key, 4096)
        for key in ("record_length_bytes_stdev", "record_length_stdev"):
            if num(f.get(ds + key), 0) > 1024:
                self.set(ds + key, 1024)
        self.eval_files = 0
        if num(f.get(ds + "num_files_eval"), 0) > 0:
            self.eval_files = 4
            self.set(ds + "num_files_eval", self.eval_files)
        if num(f.get(ds + "parquet.row_group_size"), 0) > 2:
            self.set(ds + "parquet.row_group_size", 2)
        self.batch = int(min(num(f.get("reader.batch_size"), 1), 2))
        if "reader.batch_size" in f:
            self.set("reader.batch_size", self.batch)
        if num(f.get("reader.batch_size_eval"), 0) > 2:
            self.set("reader.batch_size_eval", 2)
        self.batch_eval = int(min(num(f.get("reader.batch_size_eval"), 1), 2))
        epochs0 = int(num(f.get("train.epochs"), 1))
        self.epochs = min(epochs0, 10)
        if epochs0 != self.epochs:
            self.set("train.epochs", self.epochs)
        for key in ("train.computation_time", "train.computation_time_stdev", "evaluation.eval_time",
                    "evaluation.eval_time_stdev", "checkpoint.time_between_checkpoints",
                    "reader.preprocess_time", "reader.preprocess_time_stdev"):
            if key in f and num(f[key], 0) != 0:
                self.set(key, 0)
        t0 = int(num(f.get("train.total_training_steps"), -1))
        self.total_steps = min(t0, 4) if t0 > 0 else -1
        if t0 > 4:
            self.set("train.total_training_steps", self.total_steps)
        sbc0 = int(num(f.get("checkpoint.steps_between_checkpoints"), -1))
        self.sbc = sbc0
        if sbc0 > 0 and t0 > 0:
            self.sbc = max(1, sbc0 * self.total_steps // t0)
        elif sbc0 > 0:
            self.sbc = 1
        if self.sbc != sbc0:
            self.set("checkpoint.steps_between_checkpoints", self.sbc)
        for key in ("checkpoint.num_checkpoints_write", "checkpoint.num_checkpoints_read"):
            if num(f.get(key), 0) > 2:
                self.set(key, 2)
        if self.ckpt:
            for key in ("model.model_size", "model.model_size_bytes", "checkpoint.model_size"):
                if num(f.get(key), 0) > 4096:
                    self.set(key, 4096)
            for key in ("model.layer_parameters", "model.optimization_groups"):
                if isinstance(f.get(key), list):
                    self.set(key, "[" + ", ".join(str(max(1, int(x) // 100000)) for x in f[key]) + "]")
            if "model.transformer" in {k.rsplit(".", 1)[0] for k in f}:
                self.set("checkpoint.scale", "1e-6")
            tp = int(num(f.get("model.parallelism.tensor"), 1)) * int(num(f.get("model.parallelism.pipeline"), 1))
            if "model.parallelism.data" in f or self.accel % tp != 0:
                # DLIO: data x tensor x pipeline must cover the ranks
                data = max(int(num(f.get("model.parallelism.data"), 1)), -(-self.accel // tp))
                self.set("checkpoint.mode", "subset")
                self.set("model.parallelism.data", data)

    # -- expectations ----------------------------------------------------
    def steps(self):
        k = (self.files // self.accel) * self.spf
        s = k // self.batch
        if self.total_steps > 0:
            s = min(s, self.total_steps)
        return s

    def expected_evals(self):
        if not (self.train and self.evaluation):
            return 0
        nxt = int(num(self.flat.get("evaluation.eval_after_epoch"), 1))
        between = int(num(self.flat.get("evaluation.epochs_between_evals"), 1))
        n = 0
        for e in range(1, self.epochs + 1):
            if e >= nxt:
                n += 1
                nxt += between
        return n

    def expected_ckpt(self):
        """(writes, reads) DLIO does with the scaled sizes."""
        if not self.ckpt:
            return 0, 0
        f = self.flat
        if not self.train:
            w = int(num(f.get("checkpoint.num_checkpoints_write"), -1))
            r = int(num(f.get("checkpoint.num_checkpoints_read"), -1))
            return min(max(w, 0), 2), min(max(r, 0), 2)
        if self.sbc >= 0:
            return (self.epochs * (self.steps() // self.sbc) if self.sbc > 0 else 0), 0
        nxt = int(num(f.get("checkpoint.checkpoint_after_epoch"), 1))
        between = int(num(f.get("checkpoint.epochs_between_checkpoints"), 1))
        n = 0
        for e in range(1, self.epochs + 1):
            if e == nxt:
                n += 1
                nxt += between
        return n, 0


# -- looking at what happened ----------------------------------------------

def fmt_ext(plan):
    return str(plan.flat.get("dataset.format", "npz"))


def azure_blobs(container):
    """{name: (etag, size)} of every blob of container on Azurite, listed by Python's standard
    library with the account SAS the test script made (AZURE_TEST_SAS; not shardbench's client)."""
    out, marker = {}, ""
    while True:
        url = (f"{os.environ['AZURITE_ENDPOINT']}/{urllib.parse.quote(container)}?restype=container&comp=list&"
               f"{os.environ['AZURE_TEST_SAS']}" + (f"&marker={urllib.parse.quote(marker)}" if marker else ""))
        try:
            body = urllib.request.urlopen(url, timeout=30).read().decode()
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return out
            raise
        for blob in re.findall(r"<Blob>(.*?)</Blob>", body, re.S):
            name = re.search(r"<Name>([^<]*)</Name>", blob).group(1)
            etag = re.search(r"<Etag>([^<]*)</Etag>", blob, re.I).group(1)
            size = int(re.search(r"<Content-Length>(\d+)</Content-Length>", blob).group(1))
            out[name] = (etag, size)
        m = re.search(r"<NextMarker>([^<]+)</NextMarker>", body)
        if not m:
            return out
        marker = m.group(1)


def dataset_files(plan, root, part):
    """Dataset files of the scaled set under root/.../part/, as {path: (mtime_ns, size)}.
    The S3 server keeps an object as a folder or file named after its key. A file on Azure
    Blob Storage (az://): its blobs on Azurite, as {container/name: (etag, size)}."""
    prefix = re.escape(str(plan.flat.get("dataset.file_prefix", "img")))
    n = plan.files if part == "train" else plan.eval_files
    pat = re.compile(rf"^{prefix}_\d+_of_{n}\.{re.escape(fmt_ext(plan))}(\._S3rver.*)?$")
    out = {}
    if plan.kind == "azure" and root != plan.cwd:
        for c in AZURE_CONTAINERS:
            for name, v in azure_blobs(c).items():
                parts = name.split("/")
                if part in parts[:-1] and pat.match(parts[-1]):
                    out[f"{c}/{name}"] = v
        return out
    if not os.path.isdir(root):
        return out
    for dirpath, dirnames, names in os.walk(root):
        rel = os.path.relpath(dirpath, root).split(os.sep)
        if part not in rel:
            continue
        for n_ in names + dirnames:
            if pat.match(n_):
                p = os.path.join(dirpath, n_)
                st = os.stat(p)
                key = re.sub(r"\._S3rver.*$", "", p)
                out.setdefault(key, (st.st_mtime_ns, st.st_size))
    return out


def files_under(path):
    if not path or not os.path.exists(path):
        return 0
    if os.path.isfile(path):
        return 1
    return sum(len(n) for _, _, n in os.walk(path))


def ckpt_locations(plan, s3root):
    """Where the checkpoint folder may be: on the S3 server (s3:// folders, and
    relative ones of a file on S3, under its bucket) and on the local disk."""
    v = str(plan.flat.get("checkpoint.checkpoint_folder", "./checkpoints"))
    if v.startswith("s3://"):
        return [os.path.join(s3root, v[len("s3://"):])]
    if v.startswith("file://"):
        v = v[len("file://"):]
    out = [v if os.path.isabs(v) else os.path.join(plan.cwd, v)]
    if plan.kind == "s3" and not os.path.isabs(v):
        root = str(plan.flat.get("storage.storage_root", plan.flat.get("reader.storage_root", "")))
        out.append(os.path.join(s3root, root.replace("s3://", "").split("/")[0], v))
    return out


def table_exists(db, name):
    return db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
                      (name,)).fetchone()[0] > 0


def columns(db, table):
    return [r[1] for r in db.execute(f"PRAGMA table_info({table})")]


def eval_phases(db, run_ids):
    """Evaluations recorded for these runs: (count, [samples of each, when the
    rows have a samples column], where they were found). Looks at, in order: a
    table whose name contains 'eval' with a run_id column; an epochs column
    named phase or kind equal to 'eval'; runs of kind 'eval'."""
    ids = ",".join(str(i) for i in run_ids) or "-1"
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%eval%'"):
        cols = columns(db, name)
        if "run_id" in cols and "rank" not in cols:
            rows = db.execute(f"SELECT {'samples' if 'samples' in cols else 'NULL'} FROM {name} "
                              f"WHERE run_id IN ({ids}) ORDER BY rowid").fetchall()
            return len(rows), [r[0] for r in rows if r[0] is not None], name
    for col in ("phase", "kind"):
        if col in columns(db, "epochs"):
            rows = db.execute(f"SELECT samples FROM epochs WHERE run_id IN ({ids}) AND {col} = 'eval' "
                              f"ORDER BY run_id, epoch").fetchall()
            return len(rows), [r[0] for r in rows], f"epochs.{col} = 'eval'"
    n = db.execute(f"SELECT count(*) FROM runs WHERE id IN ({ids}) AND kind = 'eval'").fetchone()[0]
    return n, [], "no eval table, no epochs.phase, runs.kind = 'eval'"


def first_error(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if re.search(r"\berror\b|refus|cannot|unknown|not supported", l, re.I) and "info:" not in l:
            return l[:300]
    return (lines[-1] if lines else "(no output)")[:300]


class Runner:
    def __init__(self, sb, plan, db_path):
        self.sb = sb
        self.plan = plan
        self.db_path = db_path
        self.log = []

    def max_run_id(self):
        if not os.path.exists(self.db_path):
            return 0
        with sqlite3.connect(self.db_path) as db:
            if not table_exists(db, "runs"):
                return 0
            return db.execute("SELECT coalesce(max(id), 0) FROM runs").fetchone()[0]

    def invoke(self, command, workload):
        p = self.plan
        argv = [self.sb, command, workload] + p.overrides + [
            "--accelerators", str(p.accel), "--local", "1", "--db", os.path.basename(self.db_path), "--progress", "off"]
        before = self.max_run_id()
        t = time.time()
        try:
            r = subprocess.run(argv, cwd=p.cwd, capture_output=True, text=True, timeout=CMD_TIMEOUT)
            rc, out, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            rc, out = 124, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = ((e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")) \
                + f"\ntimed out after {CMD_TIMEOUT} s"
        self.log.append((command, argv, rc, err, time.time() - t))
        runs = []
        if os.path.exists(self.db_path):
            with sqlite3.connect(self.db_path) as db:
                if table_exists(db, "runs"):
                    runs = db.execute("SELECT id, kind, status, coalesce(error, '') FROM runs WHERE id > ? "
                                      "ORDER BY id", (before,)).fetchall()
        return rc, err, runs


def check_file(sb, folder, rel, doc, cwd, endpoints, s3root):
    """Run one file; returns (failures, plan, runner)."""
    plan = Plan(rel, doc, cwd, endpoints)
    os.makedirs(cwd, exist_ok=True)
    runner = Runner(sb, plan, os.path.join(cwd, "results.db"))
    fails = []
    workload = os.path.join(folder, rel)
    data_root = s3root if plan.kind in ("s3", "azure") else cwd

    def bad(msg):
        fails.append(msg)

    # 1. a dataset to run on, when the workflow reads one it does not generate
    before_files = {}
    if plan.train and not plan.gen:
        # no dataset yet: DLIO's "Not enough dataset is found; Please run the
        # code with ++workload.workflow.generate_data=True"
        rc, err, runs = runner.invoke("run", workload)
        written = len(dataset_files(plan, s3root, "train")) + len(dataset_files(plan, cwd, "train"))
        if rc == 0 or written:
            bad(f"run without a dataset (generate_data False): exit {rc}, {written} dataset files written; "
                f"expected a refusal that says how to generate")
        elif not re.search(r"datagen|generate_data", err):
            if rc == 2:  # a configuration error: datagen and the run would fail the same way
                bad(f"rejected at load (run, exit 2): {first_error(err)}")
                return fails, plan, runner
            bad(f"run without a dataset (generate_data False) refused without saying how to generate: "
                f"exit {rc}: {first_error(err)}")
        clear_s3(s3root)
        for sub in os.listdir(cwd):
            if not sub.startswith(os.path.basename(runner.db_path)):  # the db, its -wal and -shm
                p = os.path.join(cwd, sub)
                shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
        rc, err, runs = runner.invoke("datagen", workload)
        if rc != 0:
            bad(f"datagen (to prepare a dataset, generate_data is False): exit {rc}: {first_error(err)}"
                if rc != 2 else f"rejected at load (datagen, exit 2): {first_error(err)}")
            return fails, plan, runner
        before_files = dataset_files(plan, data_root, "train")
        before_files.update(dataset_files(plan, data_root, "valid"))
        n_valid = len(dataset_files(plan, data_root, "valid"))
        if plan.eval_files and n_valid != plan.eval_files:
            bad(f"datagen wrote {n_valid} valid files, expected dataset.num_files_eval = {plan.eval_files}")
        if len(dataset_files(plan, data_root, "train")) != plan.files:
            elsewhere = ""
            if plan.kind == "s3":
                elsewhere = f" ({len(dataset_files(plan, cwd, 'train'))} on the local disk)"
            bad(f"datagen wrote {len(dataset_files(plan, data_root, 'train'))} train files "
                f"{'on the S3 server' if plan.kind == 's3' else 'under the local folder'}{elsewhere}, "
                f"expected {plan.files}")
            return fails, plan, runner
        time.sleep(0.01)  # a rewrite would show in the mtimes

    # 2. the file's own workflow
    rc, err, runs = runner.invoke("run", workload)
    if rc != 0:
        bad(f"{'rejected at load (run, exit 2)' if rc == 2 else f'run: exit {rc}'}: {first_error(err)}")
        return fails, plan, runner
    ids = [r[0] for r in runs]
    kinds = [r[1] for r in runs]
    for r in runs:
        if r[2] != "succeeded":
            bad(f"run {r[0]} ({r[1]}) status {r[2]}: {r[3][:200]}")
    db = sqlite3.connect(runner.db_path) if os.path.exists(runner.db_path) else sqlite3.connect(":memory:")
    has_runs = table_exists(db, "runs")

    # generate_data
    train_files = dataset_files(plan, data_root, "train")
    valid_files = dataset_files(plan, data_root, "valid")
    if plan.gen:
        if "datagen" not in kinds:
            bad("generate_data True: no datagen run recorded")
        if len(train_files) != plan.files:
            elsewhere = f" ({len(dataset_files(plan, cwd, 'train'))} on the local disk)" if plan.kind == "s3" else ""
            bad(f"generate_data True: {len(train_files)} train files"
                f"{' on the S3 server' if plan.kind == 's3' else ''}{elsewhere}, expected {plan.files}")
        if plan.eval_files and len(valid_files) != plan.eval_files:
            bad(f"generate_data True: {len(valid_files)} valid files, expected {plan.eval_files}")
    else:
        if "datagen" in kinds:
            bad("generate_data False: the run generated (a datagen run was recorded)")
        if before_files:
            after = dict(train_files)
            after.update(valid_files)
            changed = [k for k, v in before_files.items() if after.get(k) != v]
            if changed:
                bad(f"generate_data False: the run rewrote or removed {len(changed)} of "
                    f"{len(before_files)} dataset files")
        elif not plan.train and (train_files or valid_files):
            bad(f"generate_data False: {len(train_files) + len(valid_files)} dataset files written")

    # train
    train_ids = [r[0] for r in runs if r[1] == "train"]
    if plan.train:
        if len(train_ids) != 1:
            bad(f"train True: {len(train_ids)} train runs, expected 1")
        else:
            phase = "".join(f"AND {c} = 'train' " for c in ("phase", "kind") if c in columns(db, "epochs"))
            rows = db.execute("SELECT epoch, samples, batches FROM epochs WHERE run_id = ? AND epoch >= 1 "
                              + phase + "ORDER BY epoch", (train_ids[0],)).fetchall()
            steps = plan.steps()
            want = [(e, plan.accel * steps * plan.batch, steps) for e in range(1, plan.epochs + 1)]
            if rows != want:
                bad(f"train True: epochs (epoch, samples, steps) {rows[:3]}{'...' if len(rows) > 3 else ''} "
                    f"({len(rows)} rows), expected {want[:1]}.. ({len(want)} rows: {plan.accel} ranks x "
                    f"{steps} steps x batch {plan.batch})")
    else:
        if train_ids:
            bad(f"train False: {len(train_ids)} train run(s) recorded")
        elif has_runs and ids and db.execute(
                f"SELECT count(*) FROM epochs WHERE run_id IN ({','.join(map(str, ids))}) AND epoch >= 1"
        ).fetchone()[0]:
            bad("train False: training epochs recorded")

    # evaluation
    want_evals = plan.expected_evals()
    got_evals, eval_samples, where = eval_phases(db, ids) if has_runs else (0, [], "no runs table")
    if got_evals != want_evals:
        bad(f"evaluation {plan.evaluation}: {got_evals} evaluations found ({where}), expected {want_evals}")
    elif want_evals and eval_samples:
        # DLIO's _eval: floor(spf x eval files of the rank / batch_size_eval) steps a rank
        want = plan.accel * ((plan.eval_files // plan.accel) * plan.spf // plan.batch_eval) * plan.batch_eval
        if any(n != want for n in eval_samples):
            bad(f"evaluation True: samples per evaluation {eval_samples[:4]}, expected {want} "
                f"({plan.accel} ranks, {plan.eval_files // plan.accel} files x {plan.spf} samples, "
                f"batch {plan.batch_eval})")

    # checkpoint
    want_w, want_r = plan.expected_ckpt()
    got = dict(db.execute(f"SELECT op, count(*) FROM checkpoints WHERE run_id IN "
                          f"({','.join(map(str, ids)) or '-1'}) GROUP BY op").fetchall()) \
        if table_exists(db, "checkpoints") else {}
    got_w, got_r = got.get("write", 0), got.get("read", 0)
    if (got_w, got_r) != (want_w, want_r):
        bad(f"checkpoint {plan.ckpt}: {got_w} writes, {got_r} reads recorded, expected {want_w}, {want_r}")
    where_ckpt = ckpt_locations(plan, s3root)
    shown = " or ".join(os.path.relpath(w, os.path.dirname(cwd)) for w in where_ckpt)
    n_ckpt_files = sum(files_under(w) for w in where_ckpt)
    if want_w and not n_ckpt_files:
        bad(f"checkpoint True: no checkpoint files in {shown}")
    if not plan.ckpt and n_ckpt_files:
        bad(f"checkpoint False: {n_ckpt_files} files in {shown}")
    db.close()
    return fails, plan, runner


def clear_azure():
    """Delete every blob of the Azurite containers between files (the containers stay)."""
    if "AZURE_TEST_SAS" not in os.environ:
        return
    for c in AZURE_CONTAINERS:
        for name in azure_blobs(c):
            url = (f"{os.environ['AZURITE_ENDPOINT']}/{urllib.parse.quote(c)}/{urllib.parse.quote(name)}?"
                   f"{os.environ['AZURE_TEST_SAS']}")
            urllib.request.urlopen(urllib.request.Request(url, method="DELETE"), timeout=30).read()


def clear_s3(s3root):
    """Empty every bucket of the S3 server between files (the folders stay), and Azurite's containers."""
    clear_azure()
    if not os.path.isdir(s3root):
        return
    for b in os.listdir(s3root):
        bd = os.path.join(s3root, b)
        if not os.path.isdir(bd):
            continue
        for entry in os.listdir(bd):
            if entry.startswith("."):
                continue  # the server's bucket metadata
            p = os.path.join(bd, entry)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                try:
                    os.unlink(p)
                except OSError:
                    pass


def load(folder, rel):
    with open(os.path.join(folder, rel)) as fh:
        return yaml.safe_load(fh)


def cmd_buckets(folder):
    eps = ["http://127.0.0.1:1", "http://127.0.0.1:2"]
    names = set()
    for rel in yaml_files(folder):
        try:
            names |= Plan(rel, load(folder, rel), "/nonexistent", eps).buckets
        except yaml.YAMLError:
            pass
    print(" ".join(sorted(names)))


def cmd_run(folder, scratch, only):
    sb = os.environ["SHARDBENCH"]
    endpoints = os.environ.get("S3RVER_ENDPOINTS", "").split()
    if not endpoints:
        print("FAIL - no S3 test server endpoints (S3RVER_ENDPOINTS)")
        return 1
    if len(endpoints) == 1:
        endpoints = endpoints * 2
    s3root = os.path.join(scratch, "s3data")
    files = yaml_files(folder)
    if only:
        files = [f for f in files if f in only]
    for name in UNRUNNABLE:
        if name not in files and not only:
            print(f"FAIL - UNRUNNABLE names {name}, which is not in {folder}")
    results = []
    t_all = time.time()
    for i, rel in enumerate(files):
        cwd = os.path.join(scratch, f"f{i:02d}")
        t = time.time()
        try:
            doc = load(folder, rel)
        except yaml.YAMLError as e:
            doc = None
            fails, plan, runner = [f"not YAML to python3-yaml: {e}"], None, None
        if doc is not None:
            clear_s3(s3root)
            fails, plan, runner = check_file(sb, folder, rel, doc, cwd, endpoints, s3root)
        dt = time.time() - t
        fails = [m.replace(folder + "/", "") for m in fails]
        if rel in UNRUNNABLE:
            reason, text = UNRUNNABLE[rel]
            errs = " ".join(l[3] for l in runner.log) if runner else ""
            if not fails:
                status, why = "XPASS", (f"in UNRUNNABLE ({reason}) but exits 0 and passes the checks: "
                                        f"it runs for real now (take it out of the table) or ignores the "
                                        f"storage it names")
            elif text not in errs:
                status, why = "FAIL", f"in UNRUNNABLE but its failure does not mention '{text}': {fails[0]}"
            else:
                status, why = "XFAIL", reason
        else:
            status, why = ("PASS", "") if not fails else ("FAIL", fails[0])
        if rel in DLIO_REFUSED and status == "PASS":
            # every command the file ran warned that DLIO refuses it
            for command, argv, rc, err, secs in runner.log:
                if DLIO_REFUSED[rel] + " " not in err and DLIO_REFUSED[rel] + ":" not in err \
                        or LENIENT_WARNING not in err:
                    status, why = "FAIL", (f"run under shardbench.lenient without the warning "
                                           f"'{DLIO_REFUSED[rel]} ...{LENIENT_WARNING}' ({command})")
                    break
        tag = ""
        if plan is not None:
            tag = (f"[{plan.kind}, gen={'T' if plan.gen else 'F'} train={'T' if plan.train else 'F'} "
                   f"eval={'T' if plan.evaluation else 'F'} ckpt={'T' if plan.ckpt else 'F'}]")
        print(f"{status:5} {rel} {tag} {dt:.1f}s" + (f": {why}" if why else ""), flush=True)
        if status in ("FAIL", "XPASS"):
            for extra in fails[1:]:
                print(f"        also: {extra}")
            if runner:
                for command, argv, rc, err, secs in runner.log:
                    shown = " ".join(a if " " not in a else repr(a) for a in argv[1:])
                    print(f"        $ (cd {os.path.relpath(cwd, scratch)}) shardbench {shown}  -> exit {rc}")
        if status == "FAIL" and len(fails) > 1:
            why = "; ".join([why] + fails[1:])
        results.append((rel, status, why))
    total = time.time() - t_all
    print()
    print("| file | status | failed checks (all, in order) |")
    print("|---|---|---|")
    for rel, status, why in results:
        print(f"| {rel} | {status} | {why.replace('|', '/')} |")
    counts = {}
    for _, s, _ in results:
        counts[s] = counts.get(s, 0) + 1
    print()
    print(f"{len(results)} files in {total:.0f} s: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return 0 if not counts.get("FAIL") and not counts.get("XPASS") else 1


# -- docs/DLIO.md's key table ---------------------------------------------

SECTIONS = ("workflow", "framework", "model", "dataset", "reader", "data_reader", "train", "evaluation",
            "checkpoint", "output", "profiling", "metric", "storage", "logging", "generator", "hydra",
            "shardbench")


def upstream_keys(folder):
    """{dotted key: [files using it]} over every upstream file. DLIO's scalar
    `model: NAME` counts as model.name (what it sets)."""
    used = {}
    for rel in yaml_files(folder):
        doc = load(folder, rel)
        if not isinstance(doc, dict):
            continue
        if "model" in doc and not isinstance(doc["model"], dict):
            doc = dict(doc)
            doc["model"] = {"name": doc["model"]}
        for key in flatten(doc):
            used.setdefault(key, []).append(rel)
    return used


def expand_braces(token):
    m = re.search(r"\{([^{}]*)\}", token)
    if not m:
        return [token]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(token[:m.start()] + alt.strip() + token[m.end():])
    return out


def documented_keys(docs_path):
    """Keys named in the tables of docs/DLIO.md's
    "## Configuration keys" section (full dotted names anywhere in a row; in
    the first column a cell's later names may also be relative to the
    previous one's parent (`evaluation.eval_time`, `eval_time_stdev`) and
    use braces (`model.parallelism.{tensor,pipeline}`)). A wildcard
    (`storage.storage_options.*`) names no key: each key needs its own row
    entry, saying what shardbench does with it."""
    text = open(docs_path).read()
    if "\n## Configuration keys\n" not in text:
        raise SystemExit(f"{docs_path}: no '## Configuration keys' section")
    section = text.split("\n## Configuration keys\n", 1)[1].split("\n## ", 1)[0]
    named = set()
    for line in section.splitlines():
        if not line.startswith("|") or re.match(r"^\|[\s|:-]+\|?$", line):
            continue
        cells = line.split("|")[1:-1]
        for i, cell in enumerate(cells):
            parent = ""
            for token in re.findall(r"`([^`]+)`", cell):
                token = token.strip()
                if not re.fullmatch(r"[A-Za-z0-9_.{},* ]+", token) or token.startswith("DLIO_"):
                    continue
                for key in expand_braces(token.replace(" ", "")):
                    if key.split(".")[0] not in SECTIONS:
                        if i > 0 or not parent:
                            continue  # prose of the second column: full keys only
                        # `eval_time_stdev` after `evaluation.eval_time`: same parent;
                        # `hdf5.max_shape` after `dataset.hdf5.chunk_dims`: same section
                        key = (parent.split(".")[0] if "." in key else parent) + "." + key
                    if "." in key:
                        parent = key.rsplit(".", 1)[0]
                    if "*" not in key:
                        named.add(key)
    return named


def cmd_keys(folder, docs_path):
    used = upstream_keys(folder)
    named = documented_keys(docs_path)
    # an empty section (`storage_options:` with nothing under it) is named
    # by any key named under it
    missing = sorted(k for k in used if k not in named
                     and not any(n.startswith(k + ".") for n in named))
    if not missing:
        print(f"ok - docs/DLIO.md's key table names all {len(used)} keys of the upstream files")
        return 0
    print(f"FAIL - docs/DLIO.md's key table (## Configuration keys) does not name {len(missing)} of the "
          f"{len(used)} keys the upstream files use:")
    for k in missing:
        files = used[k]
        print(f"  {k}  ({len(files)} files, e.g. {files[0]})")
    return 1


def main(argv):
    if len(argv) >= 2 and argv[0] == "buckets":
        cmd_buckets(argv[1])
        return 0
    if len(argv) == 3 and argv[0] == "keys":
        return cmd_keys(argv[1], argv[2])
    if len(argv) >= 3 and argv[0] == "run":
        return cmd_run(argv[1], argv[2], set(argv[3:]))
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
