#!/usr/bin/python3
"""Check one leaf of shardbench's MLPerf Storage results directory against the result database:
every file read back and every field compared with the rows it
came from, exact values. Standard library only (PyYAML may be absent: the YAML is read by a
small reader of the subset shardbench writes).

usage: results_dir_check.py DB RUN_ID LEAF ROOT SUBMITTER SYSTEM
  ROOT '-': the leaf was given (hydra.run.dir); its configuration folder is then 'dlio_config'.
Prints one 'ok - ...' or 'FAIL - ...' line per check; exits 1 when any failed."""
import datetime
import json
import os
import re
import sqlite3
import sys

# --- the field lists of the readers, written from their code (see docs/DLIO.md) -----------------

# DLIO_local_changes dlio_benchmark/utils/statscounter.py: summary.json keys in insertion order
SUMMARY_KEYS = ["start", "num_accelerators", "num_hosts", "hostname", "metric", "num_files_train",
                "num_files_eval", "num_samples_per_file", "host_cpu_count", "host_processor_name",
                "potential_caching", "host_cpuinfo", "host_meminfo", "host_memory_GB",
                "data_size_per_host_GB", "epochs", "end"]
TRAIN_METRIC_KEYS = ["train_au_percentage", "train_au_mean_percentage", "train_au_meet_expectation",
                     "train_au_stdev_percentage", "train_throughput_samples_per_second",
                     "train_throughput_mean_samples_per_second",
                     "train_throughput_stdev_samples_per_second", "train_io_mean_MB_per_second",
                     "train_io_stdev_MB_per_second"]
EVAL_METRIC_KEYS = [k.replace("train_", "eval_") for k in TRAIN_METRIC_KEYS]
SAVE_METRIC_KEYS = ["save_checkpoint_io_mean_GB_per_second", "save_checkpoint_io_stdev_GB_per_second",
                    "save_checkpoint_duration_mean_seconds", "save_checkpoint_duration_stdev_seconds"]
LOAD_METRIC_KEYS = [k.replace("save_", "load_") for k in SAVE_METRIC_KEYS]
# mlpstorage rules/models.py ResultFilesExtractor._is_complete_metadata
METADATA_COMPLETE = ["benchmark_type", "run_datetime", "num_processes", "parameters"]
# mlpstorage benchmarks/base.py Benchmark.metadata, and what the checkers read
METADATA_KEYS = ["benchmark_type", "model", "command", "run_datetime", "num_processes", "accelerator",
                 "result_dir", "parameters", "override_parameters", "system_info", "runtime",
                 "verification", "executed_command", "command_output_files", "args"]
ARGS_KEYS = ["results_dir", "data_dir", "hosts", "num_processes", "model", "command", "accelerator_type",
             "client_host_memory_in_gb", "closed", "loops", "mode", "orgname", "systemname"]
# submission_checker constants.py: RUN_REQUIRED_FILES, DATAGEN_REQUIRED_FILES, CHECKPOINT_REQUIRED_FILES
REQUIRED = {
    "training_run": [r"training_run\.stdout.log", r"training_run\.stderr.log", r".*output\.json",
                     r".*per_epoch_stats\.json", r".*summary\.json", r"dlio\.log"],
    # v3.0 (rules/editions.yaml checker): DLIO's datagen writes no statistics
    "training_datagen": [r"training_datagen\.stdout\.log$", r"training_datagen\.stderr\.log$", r"dlio\.log$",
                         r"training_.*_metadata\.json$"],
    "checkpointing_run": [r"checkpointing_run\.stdout\.log", r"checkpointing_run\.stderr\.log",
                          r".*output\.json", r".*per_epoch_stats\.json", r".*summary\.json", r"dlio\.log"],
}
CLOSED = {"dataset.skip_listing", "dataset.listing_validation_interval", "dataset.num_files_generated",
          "dataset.data_folder", "storage.storage_type", "storage.storage_root",
          "storage.storage_options.storage_library", "storage.storage_options.uri_scheme",
          "storage.s3_force_path_style", "dataset.total_disk_bytes", "dataset.num_files_train",
          "dataset.num_subfolders_train", "reader.read_threads", "reader.computation_threads",
          "reader.transfer_size", "reader.odirect", "reader.prefetch_size", "checkpoint.checkpoint_folder",
          "storage.storage_options.prefetch_window"}
OPEN = {"framework", "dataset.format", "dataset.num_samples_per_file", "reader.data_loader"}

# mlpstorage_py config.py LLM_ALLOWED_VALUES: (GPUs per data-parallel instance, CLOSED process count)
LLM_ALLOWED = {"llama3-8b": (8, 8), "llama3-70b": (8, 64), "llama3-405b": (256, 512), "llama3-1t": (512, 1024)}

# --- mlpstorage 3.0 tooling (results layout 3), written from its code (see docs/DLIO.md) ------------
# mlpstorage_py/results_dir/schema.py MlperfResultsSentinel: exactly these keys (extra="forbid"),
# orgname [A-Za-z0-9._-]+, mlperf_results_version an int >= 1; results_dir/__init__.py
# MLPERF_RESULTS_VERSION 3 (leaves carry provenance.json)
SENTINEL_KEYS = ["mlperf_results_version", "orgname", "initialized_at", "initialized_by"]
LAYOUT_VERSION = 3
# mlpstorage_py/provenance.py RunProvenance.to_dict / _validate_stamp: the keys, the exact key sets of
# tool and dlio, the closed vocabulary of provenance tags, no null anywhere ("unknown" instead)
STAMP_KEYS = ["schema", "rules_edition", "layout_version", "tool", "dlio", "storage_library", "core_config",
              "stamped_at", "stamped_by", "provenance"]
STAMP_FIELDS = ["rules_edition", "layout_version", "tool", "dlio", "storage_library", "core_config"]
PROVENANCE_TAGS = {"runtime", "tool-constant", "package-metadata", "direct-url", "code-hash-json", "uv-lock",
                   "declared", "inferred", "n/a", "unknown"}
RULES_EDITION = "3.0"   # config.RULES_EDITION = rules/editions.yaml current_edition
# mlpstorage_py/benchmarks/fs_separation_probe.py probe_fs_separation: the sidecar's keys, in order
FS_SEP_KEYS = ["version", "method", "data_or_chkpt_path", "results_path", "data_or_chkpt_realpath",
               "results_realpath", "same_filesystem", "probed_at", "probed_by_rank", "probed_by_host"]

GIB = 1073741824.0
fails = 0


def check(what, got, want):
    global fails
    if got == want:
        print("ok - " + what)
    else:
        fails += 1
        print("FAIL - %s: got %r, expected %r" % (what, got, want))


def ts_dlio(t):
    return datetime.datetime.fromtimestamp(t).strftime("%Y-%m-%dT%H:%M:%S.%f")


def meet(r, kind):
    """summary.json's KIND_au_meet_expectation: the run's, but 'fail' for a run that did not succeed."""
    return r[kind + "_au_meet_expectation"] if r["status"] == "succeeded" else "fail"


def mean_std(v):
    m = sum(v) / len(v)
    return m, (sum((x - m) ** 2 for x in v) / len(v)) ** 0.5


def yaml_list(text):
    """A YAML block list of single-quoted scalars (or [])."""
    if text.strip() == "[]":
        return []
    out = []
    for line in text.splitlines():
        m = re.fullmatch(r"- '((?:[^']|'')*)'", line)
        if not m:
            raise ValueError("not a list item: %r" % line)
        out.append(m.group(1).replace("''", "'"))
    return out


def proc_dict(text, skip):
    d = {}
    for line in text.splitlines():
        if line.count(":") != 1:    # DLIO's lines_to_dict: exactly two parts
            continue
        k, v = line.split(":")
        k, v = k.strip(), v.strip()
        if k and k != skip:
            d[k] = v
    return d


def override_key(o):
    k = o.lstrip("+")
    if k.startswith("workload."):
        k = k[9:]
    return k.split("=", 1)[0]


def local_folder(r, inputs):
    """The data folder (checkpoint folder of a checkpoint run) as the full configuration gives it,
    when it is a folder here: the one mlpstorage's probe links from."""
    key = ("checkpoint", "checkpoint_folder") if r["kind"] == "checkpoint" else ("dataset", "data_folder")
    text = inputs["full_config"] if inputs else r["config"]
    m = re.search(r"(?m)^%s:[ \t]*\n(?:[ \t]+.*\n)*?[ \t]+%s:[ \t]*(.*?)[ \t]*$" % key, text + "\n")
    folder = m.group(1).strip("'\"") if m else ""
    return bool(folder) and "://" not in folder and os.path.isdir(folder)


def has_null(v):
    if v is None:
        return True
    if isinstance(v, dict):
        return any(has_null(x) for x in v.values())
    if isinstance(v, list):
        return any(has_null(x) for x in v)
    return False


def nonempty(v):
    return isinstance(v, str) and v != ""


def stamp_problems(d):
    """What mlpstorage_py/provenance.py _validate_stamp refuses in a stamp (PROV-01 reports it)."""
    p = []
    if not isinstance(d, dict):
        return ["not an object"]
    if d.get("schema") != "mlps-run-provenance/1":
        p.append("schema")
    p += ["missing " + k for k in STAMP_KEYS if k not in d]
    p += ["unexpected " + k for k in d if k not in STAMP_KEYS + ["notes"]]
    if p:
        return p
    if has_null(d):
        p.append("a null")
    if not nonempty(d["rules_edition"]):
        p.append("rules_edition")
    lv = d["layout_version"]
    if isinstance(lv, bool) or not isinstance(lv, int) or lv < 1:
        p.append("layout_version")
    for sec, keys in (("tool", ["name", "version", "git_sha", "code_image"]), ("dlio", ["version", "source", "commit"])):
        b = d[sec]
        if not isinstance(b, dict) or set(b) != set(keys) or not all(nonempty(b[k]) for k in keys):
            p.append(sec)
    sl = d["storage_library"]
    if not isinstance(sl, dict) or not set(sl) <= {"name", "version"} or not nonempty(sl.get("name")) \
            or (sl.get("name") != "none" and not nonempty(sl.get("version"))):
        p.append("storage_library")
    cc = d["core_config"]
    if not isinstance(cc, dict) or set(cc) != {"algorithm", "allowlist", "hash", "keys"} \
            or cc["algorithm"] != "core-config-v1" or not nonempty(cc["allowlist"]) or not nonempty(cc["hash"]) \
            or not isinstance(cc["keys"], list) or not all(isinstance(k, str) for k in cc["keys"]):
        p.append("core_config")
    if not nonempty(d["stamped_at"]) or not nonempty(d["stamped_by"]):
        p.append("stamped_at/by")
    pv = d["provenance"]
    if not isinstance(pv, dict) or set(pv) != set(STAMP_FIELDS) or not all(t in PROVENANCE_TAGS for t in pv.values()):
        p.append("provenance tags")
    if "notes" in d and not isinstance(d["notes"], str):
        p.append("notes")
    return p


def sentinel(root):
    """ROOT/mlperf-results.yaml as key: value lines (the block YAML safe_dump writes), quotes removed."""
    out = {}
    for line in open(os.path.join(root, "mlperf-results.yaml")).read().splitlines():
        k, _, v = line.partition(":")
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
            v = v[1:-1].replace("''", "'")
        out[k] = v
    return out


def link_probe(folder, leaf):
    """The probe of fs_separation_probe.py done here again: a file made in folder, linked into leaf;
    EXDEV says two file systems. None when it cannot tell."""
    import errno
    import tempfile
    fd, src = tempfile.mkstemp(prefix=".check-fs-sep-", dir=folder)
    os.close(fd)
    dst = os.path.join(leaf, os.path.basename(src))
    try:
        os.link(src, dst)
        os.unlink(dst)
        return True
    except OSError as e:
        return False if e.errno == errno.EXDEV else None
    finally:
        os.unlink(src)


def check_layout3(r, inputs, leaf, root, submitter, btype, command, files, md, params):
    """The files the current mlpstorage adds to DLIO's and mlpstorage 2.0's, as its readers read them."""
    # the sentinel: every mlpstorage command taking --results-dir reads it (results_dir/sentinel.py
    # read_sentinel, resolve_orgname) and the leaf's SUBMITTER is its orgname
    sen = sentinel(root)
    check("mlperf-results.yaml: exactly the sentinel's keys, in order", list(sen), SENTINEL_KEYS)
    check("mlperf-results.yaml: layout version, orgname = the leaf's SUBMITTER, non-empty stamps",
          (sen.get("mlperf_results_version"), sen.get("orgname"), bool(sen.get("initialized_at")),
           bool(sen.get("initialized_by"))), (str(LAYOUT_VERSION), submitter, True, True))
    check("mlperf-results.yaml: orgname a safe name", bool(re.fullmatch(r"[A-Za-z0-9._-]+", sen.get("orgname", ""))),
          True)
    # provenance.json: read by provenance.py read_leaf_provenance, checked by the submission checker's
    # PROV-01 (submission_checker/checks/provenance_checks.py leaf_provenance_check): the metadata
    # declares it (provenance_file), so it must be there and valid
    check("metadata declares provenance.json (provenance_file)", md.get("provenance_file"), "provenance.json")
    check("provenance.json present (PROV-01: declared, so required)", "provenance.json" in files, True)
    pv = json.load(open(os.path.join(leaf, "provenance.json")))
    check("provenance.json: what _validate_stamp refuses", stamp_problems(pv), [])
    check("provenance.json: key order of RunProvenance.to_dict", list(pv), STAMP_KEYS + ["notes"])
    folder = params["checkpoint"]["checkpoint_folder"] if r["kind"] == "checkpoint" else params["dataset"]["data_folder"]
    object_store = str(folder).startswith("s3://")
    check("provenance.json: the edition, the layout (= the sentinel's), shardbench and the version that ran it",
          (pv["rules_edition"], pv["layout_version"], pv["tool"]["name"], pv["tool"]["version"]),
          (RULES_EDITION, LAYOUT_VERSION, "shardbench", inputs["version"] if inputs else "unknown"))
    check("provenance.json: git_sha a commit or unknown, no code image, no DLIO (n/a)",
          (bool(re.fullmatch(r"unknown|[0-9a-f]{7,40}", pv["tool"]["git_sha"])), pv["tool"]["code_image"],
           pv["dlio"], pv["provenance"]["dlio"]),
          (True, "unknown", {"version": "unknown", "source": "unknown", "commit": "unknown"}, "n/a"))
    check("provenance.json: storage library", pv["storage_library"],
          {"name": "shardbench", "version": inputs["version"]} if object_store else {"name": "none"})
    check("provenance.json: core_config of the family's allowlist, not computed (unknown)",
          (pv["core_config"]["allowlist"], pv["core_config"]["hash"], pv["core_config"]["keys"],
           pv["provenance"]["core_config"]), (btype + "@1", "unknown", [], "unknown"))
    check("provenance.json: no code-image pointer to compare (.mlps-code-image absent)",
          ".mlps-code-image" in files, False)
    # PROV-02 compares reportgen's submission.yaml with the leaves; shardbench writes none (reportgen does)
    check("no submission.yaml (reportgen writes it)",
          os.path.exists(os.path.join(root, md["args"]["mode"], submitter, "submission.yaml")), False)
    # fs_separation.json: the submission checker's rules 3.4.2 / 4.4.2 read it before the df block
    # (checks/helpers.py read_fs_separation_sidecar; training_checks.py reads same_filesystem only)
    local = "://" not in str(folder) and os.path.isdir(folder)
    check("fs_separation.json: there exactly when the data (checkpoint) folder is a local folder",
          "fs_separation.json" in files, local)
    if local:
        fs = json.load(open(os.path.join(leaf, "fs_separation.json")))
        check("fs_separation.json: the probe's keys, in order", list(fs), FS_SEP_KEYS)
        check("fs_separation.json: version, method, the paths",
              (fs["version"], fs["method"], fs["data_or_chkpt_path"], fs["results_path"],
               fs["data_or_chkpt_realpath"], fs["results_realpath"]),
              (1, "link_exdev", folder, leaf, os.path.realpath(folder), os.path.realpath(leaf)))
        check("fs_separation.json: same_filesystem as a link probe here finds it",
              fs["same_filesystem"], link_probe(folder, leaf))
        check("fs_separation.json: probed now (UTC), by this host, by no rank",
              (bool(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", fs["probed_at"])), fs["probed_by_host"],
               fs["probed_by_rank"]), (True, __import__("socket").gethostname(), None))
    # reporting/directory_validator.py ResultsDirectoryValidator._validate_run_dir: a *_metadata.json
    # in every leaf (an error without), summary.json in a run leaf (a warning without)
    check("directory validator: metadata, and summary.json unless datagen",
          (any(f.endswith("_metadata.json") for f in files), "summary.json" in files or command == "datagen"),
          (True, True))


def main():
    db_path, run_id, leaf, root, submitter, system = sys.argv[1:7]
    run_id = int(run_id)
    db = sqlite3.connect(db_path)
    db.row_factory = sqlite3.Row
    r = db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
    inputs = db.execute("SELECT * FROM run_inputs WHERE run_id = ?", (run_id,)).fetchone()
    overrides = [x[0] for x in db.execute("SELECT override FROM run_overrides WHERE run_id = ? ORDER BY seq",
                                           (run_id,))]
    workers = db.execute("SELECT * FROM run_workers WHERE run_id = ? ORDER BY first_rank, worker",
                         (run_id,)).fetchall()
    hosts = []
    for w in workers:
        if w["host"] not in [h["host"] for h in hosts]:
            hosts.append(w)
    hostinfo = {h["host"]: h for h in db.execute("SELECT * FROM run_host_info WHERE run_id = ?", (run_id,))}
    kind = r["kind"]
    btype = "checkpointing" if kind == "checkpoint" else "training"
    command = "datagen" if kind == "datagen" else "run"
    prefix = btype + "_" + command
    ts = os.path.basename(leaf)
    # a leaf given (hydra.run.dir, mlpstorage's): DLIO's files only, the metadata and the
    # stdout/stderr logs are mlpstorage's; a datagen: no statistics (DLIO's generate_only)
    given = root == "-"
    has_stats = kind != "datagen"
    if not given:
        start_ts = datetime.datetime.fromtimestamp(int(r["started_at"]))
        check("leaf name is the start second (or later, bumped) as YYYYMMDD_HHMMSS",
              bool(re.fullmatch(r"\d{8}_\d{6}", ts)) and 0 <= (datetime.datetime.strptime(ts, "%Y%m%d_%H%M%S")
                                                               - start_ts).total_seconds() <= 10, True)

    # division from the overrides, by mlpstorage's lists
    level = 0
    for o in overrides:
        k = override_key(o)
        if k.startswith("workflow"):
            continue
        level = max(level, 0 if k in CLOSED else 1 if k in OPEN else 2)
    verification = ["closed", "open", "invalid"][level]
    wl = r["workload"]
    m = re.fullmatch(r"(.*)_(a100|h100|b200|mi355)", wl)
    accel = m.group(2) if m else None
    if wl.startswith("llama3_"):
        model = "llama3-" + wl[7:]
    elif m:
        model = m.group(1)
    else:
        model = None    # from model.name, checked below against the parameters
        # a run by path of mlpstorage's llama3_SIZE.yaml (model.name llama_SIZE): its LLM
        m_name = re.search(r"(?m)^model:[ \t]*\n(?:[ \t]+.*\n)*?[ \t]+name:[ \t]*['\"]?llama_(\w+?)['\"]?[ \t]*$",
                           r["config"])
        if m_name and "llama3-" + m_name.group(1) in LLM_ALLOWED:
            model = "llama3-" + m_name.group(1)
    if kind == "checkpoint":
        # mlpstorage_py's checkpointing checker: the model and the process count, not the overrides
        per_dp, closed = LLM_ALLOWED.get(model, (0, -1))
        n = r["accelerators"]
        verification = ("closed" if n == closed else "open" if per_dp and n > 0 and n % per_dp == 0
                        else "invalid")
    division = "closed" if verification == "closed" else "open"
    subdir = "dlio_config"
    if root != "-":
        parts = os.path.relpath(leaf, os.path.realpath(root)).split(os.sep)
        want = [division, submitter, "results", system or re.sub(r"[^A-Za-z0-9._-]", "-", r["coordinator_host"]),
                btype, model or parts[5]] + ([] if kind == "checkpoint" else [command])
        check("leaf path: DIVISION/SUBMITTER/results/SYSTEM/TYPE/MODEL[/COMMAND]/TS", parts[:-1], want)
        model = parts[5]

    # the files, exactly
    nranks = r["accelerators"]
    files = sorted(os.listdir(leaf))
    if given:   # mlpstorage's own run logs beside DLIO's files
        files = [f for f in files if f not in ("mlpstorage.log", "mlpstorage.errors.log")]
    want_files = sorted(["dlio.log", subdir]
                        + ([] if given else [prefix + ".stdout.log", prefix + ".stderr.log",
                                             "%s_%s_metadata.json" % (btype, ts), "provenance.json"]
                           + (["fs_separation.json"] if local_folder(r, inputs) else []))
                        + (["summary.json"] + ["%d_per_epoch_stats.json" % i for i in range(nranks)]
                           + ["%d_output.json" % i for i in range(nranks)] if has_stats else []))
    check("the leaf's files", files, want_files)
    check("dlio_config holds exactly config.yaml, hydra.yaml, overrides.yaml",
          sorted(os.listdir(os.path.join(leaf, subdir))), ["config.yaml", "hydra.yaml", "overrides.yaml"])
    for rx in REQUIRED[prefix]:
        # in a leaf given, the files mlpstorage writes itself are its own
        if not (given and re.search(r"metadata|stdout|stderr", rx)):
            check("submission checker's required file /%s/" % rx, any(re.match(rx, f) for f in files), True)
    check("*_metadata.json: one (reportgen), none in a leaf given (mlpstorage's own is the one)",
          len([f for f in files if f.endswith("_metadata.json")]), 0 if given else 1)
    if given:
        import yaml     # python3-yaml: the full configuration, as the metadata would carry it
        md = None
        params = yaml.safe_load(inputs["full_config"])
    else:
        md = json.load(open(os.path.join(leaf, "%s_%s_metadata.json" % (btype, ts))))
        params = md["parameters"]
    ds = params["dataset"]

    metric = {}
    if has_stats:
        # summary.json
        s = json.load(open(os.path.join(leaf, "summary.json")))
        want_keys = [k for k in SUMMARY_KEYS if not (k == "epochs" and kind == "datagen")]
        check("summary.json: DLIO's keys in DLIO's order", list(s.keys()), want_keys)
        check("summary start", s["start"], ts_dlio(r["started_at"]))
        check("summary end", s["end"], ts_dlio(r["finished_at"] if r["finished_at"] is not None else r["started_at"]))
        for k in ("start", "end"):
            check("summary %s parses with fromisoformat" % k, isinstance(datetime.datetime.fromisoformat(s[k]),
                                                                         datetime.datetime), True)
        check("summary num_accelerators", s["num_accelerators"], r["accelerators"])
        check("summary num_hosts", s["num_hosts"], r["hosts"])
        check("summary hostname (rank 0's host)", s["hostname"], hosts[0]["host"] if hosts else r["coordinator_host"])
        check("summary host_cpu_count", s["host_cpu_count"], [h["cores"] for h in hosts])
        check("summary host_memory_GB", s["host_memory_GB"], [h["memory"] / GIB for h in hosts])
        info0 = hostinfo.get(hosts[0]["host"]) if hosts else None
        check("summary host_processor_name", s["host_processor_name"], info0["processor"] if info0 else "")
        check("summary host_cpuinfo", s["host_cpuinfo"], proc_dict(info0["cpuinfo"], "processor") if info0 else {})
        check("summary host_meminfo", s["host_meminfo"], proc_dict(info0["meminfo"], None) if info0 else {})
        check("summary num_files_train", s["num_files_train"], ds["num_files_train"])
        check("summary num_files_eval", s["num_files_eval"], ds.get("num_files_eval", 0))
        check("summary num_samples_per_file", s["num_samples_per_file"], ds["num_samples_per_file"])
        rl = r["record_size_bytes"] if r["record_size_bytes"] is not None else ds["record_length_bytes"]
        size = r["accelerators"]
        dsize = (size // max(len(hosts), 1)) * ds["num_samples_per_file"] * ds["num_files_train"] // size * rl / GIB
        check("summary data_size_per_host_GB", s["data_size_per_host_GB"], dsize)
        check("summary potential_caching", s["potential_caching"], [int(h["memory"] / GIB > dsize) for h in hosts])
        epochs = db.execute("SELECT * FROM epochs WHERE run_id = ? AND epoch >= 1 ORDER BY epoch", (run_id,)).fetchall()
        if kind != "datagen":
            check("summary epochs", s["epochs"], len(epochs))
        metric = s["metric"]
        want_metric = {}
        if kind == "train":
            want_metric.update({
                "train_au_percentage": [e["train_au_percentage"] for e in epochs],
                "train_au_mean_percentage": r["train_au_mean_percentage"],
                "train_au_meet_expectation": meet(r, "train"),
                "train_au_stdev_percentage": r["train_au_stdev_percentage"],
                "train_throughput_samples_per_second": [e["train_throughput_samples_per_second"] for e in epochs],
                "train_throughput_mean_samples_per_second": r["train_throughput_mean_samples_per_second"],
                "train_throughput_stdev_samples_per_second": r["train_throughput_stdev_samples_per_second"],
                "train_io_mean_MB_per_second": r["train_io_mean_MB_per_second"],
                "train_io_stdev_MB_per_second": r["train_io_stdev_MB_per_second"]})
            evals = db.execute("SELECT * FROM evals WHERE run_id = ? ORDER BY epoch", (run_id,)).fetchall()
            if evals:
                want_metric.update({
                    "eval_au_percentage": [e["eval_au_percentage"] for e in evals],
                    "eval_au_mean_percentage": r["eval_au_mean_percentage"],
                    "eval_au_meet_expectation": meet(r, "eval"),
                    "eval_au_stdev_percentage": r["eval_au_stdev_percentage"],
                    "eval_throughput_samples_per_second": [e["eval_throughput_samples_per_second"] for e in evals],
                    "eval_throughput_mean_samples_per_second": r["eval_throughput_mean_samples_per_second"],
                    "eval_throughput_stdev_samples_per_second": r["eval_throughput_stdev_samples_per_second"],
                    "eval_io_mean_MB_per_second": r["eval_io_mean_MB_per_second"],
                    "eval_io_stdev_MB_per_second": r["eval_io_stdev_MB_per_second"]})
        ck = db.execute("SELECT * FROM checkpoints WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        for op, name in (("write", "save"), ("read", "load")):
            rows = [c for c in ck if c["op"] == op]
            if rows:
                # DLIO's figures: its checkpoint_size over rank 0's time (statscounter.py end_save_ckpt)
                gm, gs = mean_std([c["dlio_gib_per_s"] for c in rows])
                dm, dstd = mean_std([c["dlio_duration_s"] for c in rows])
                want_metric.update({name + "_checkpoint_io_mean_GB_per_second": gm,
                                    name + "_checkpoint_io_stdev_GB_per_second": gs,
                                    name + "_checkpoint_duration_mean_seconds": dm,
                                    name + "_checkpoint_duration_stdev_seconds": dstd})
        if ck:
            want_metric["checkpoint_size_GB"] = [c["dlio_bytes"] for c in ck if c["op"] == "write"][0] / GIB
        check("summary metric: keys", sorted(metric.keys()), sorted(want_metric.keys()))
        for k in want_metric:
            got = metric.get(k)
            want = want_metric[k]
            if isinstance(want, float) and isinstance(got, float) and k.endswith(("_stdev_GB_per_second",
                                                                                  "_stdev_seconds",
                                                                                  "_mean_GB_per_second",
                                                                                  "_mean_seconds")):
                # the same sums in C: equal to the last bits of a double
                got, want = round(got, 12), round(want, 12)
            check("summary metric %s" % k, got, want)
        check("summary types: DLIO's (floats stay floats)",
              [type(s[k]).__name__ for k in want_keys],
              [{"metric": "dict", "host_cpuinfo": "dict", "host_meminfo": "dict", "host_cpu_count": "list",
                "potential_caching": "list", "host_memory_GB": "list", "data_size_per_host_GB": "float",
                "hostname": "str", "host_processor_name": "str", "start": "str", "end": "str"}.get(k, "int")
               for k in want_keys])
        check("summary list types", (all(isinstance(x, int) for x in s["host_cpu_count"] + s["potential_caching"]),
                                     all(isinstance(x, float) for x in s["host_memory_GB"])), (True, True))
        check("metric values: floats, lists of floats, the verdicts text",
              [k for k, v in metric.items() if not (
                  isinstance(v, float) or (isinstance(v, list) and all(isinstance(x, float) for x in v))
                  or (k.endswith("_meet_expectation") and v in ("success", "fail"))
                  or (v is None and r["status"] != "succeeded"))], [])
        if kind == "train":
            check("train metric keys in DLIO's order", [k for k in metric if k.startswith("train_")], TRAIN_METRIC_KEYS)
            if any(k.startswith("eval_") for k in metric):
                check("eval metric keys in DLIO's order", [k for k in metric if k.startswith("eval_")],
                      EVAL_METRIC_KEYS)
            for k in TRAIN_METRIC_KEYS:
                check("metric %s is a %s" % (k, "list" if k in ("train_au_percentage",
                                                                "train_throughput_samples_per_second") else "scalar"),
                      isinstance(metric[k], list), k in ("train_au_percentage", "train_throughput_samples_per_second"))
        if kind == "checkpoint":
            check("save metrics present", all(k in metric for k in SAVE_METRIC_KEYS), True)
            check("load metrics present", all(k in metric for k in LOAD_METRIC_KEYS),
                  any(c["op"] == "read" for c in ck))

    if not given:
        # the metadata
        check("metadata: mlpstorage's fields", [k for k in METADATA_KEYS if k not in md], [])
        check("metadata complete for reportgen", all(k in md for k in METADATA_COMPLETE), True)
        check("metadata benchmark_type", md["benchmark_type"], btype)
        check("metadata command", md["command"], command)
        check("metadata run_datetime = the leaf's name", md["run_datetime"], ts)
        check("metadata num_processes", md["num_processes"], r["accelerators"])
        check("metadata accelerator", md["accelerator"], accel)
        check("metadata model", md["model"], model if model else re.sub(r"[^A-Za-z0-9._-]", "-",
                                                                         str(params["model"]["name"]).replace("_", "-")))
        check("metadata result_dir", md["result_dir"], os.path.realpath(leaf))
        check("metadata verification (lowercase)", md["verification"], verification)
        check("metadata override_parameters", md["override_parameters"],
              {override_key(o): o.split("=", 1)[1] for o in overrides})
        check("metadata runtime", md["runtime"], (r["finished_at"] if r["finished_at"] is not None else r["started_at"])
              - r["started_at"])
        check("metadata executed_command", md["executed_command"], inputs["command_line"])
        check("metadata args: fields", [k for k in ARGS_KEYS if k not in md["args"]], [])
        check("metadata args hosts", md["args"]["hosts"], [h["host"] for h in hosts])
        check("metadata args data_dir", md["args"]["data_dir"], ds["data_folder"])
        check("metadata args orgname, systemname, mode",
              (md["args"]["orgname"], md["args"]["systemname"], md["args"]["mode"]),
              (submitter, system or r["coordinator_host"], division))
        check("metadata end_datetime", md["end_datetime"],
              ts_dlio(r["finished_at"] if r["finished_at"] is not None else r["started_at"]))
        check("metadata metrics: the list metrics of summary.json",
              md["metrics"], {k: v for k, v in metric.items() if isinstance(v, list)})
        check("metadata system_info hosts", [(h["hostname"], h["memory"]["total"], h["cpu"]["num_logical_cores"])
                                             for h in md["system_info"]["hosts"]],
              [(h["host"], h["memory"], h["cores"]) for h in hosts])
        check("metadata shardbench run", (md["shardbench"]["run_id"], md["shardbench"]["status"],
                                          md["shardbench"]["version"], md["shardbench"]["overrides"]),
              (run_id, r["status"], inputs["version"], overrides))
        check("parameters.workflow present", isinstance(params.get("workflow"), dict), True)
        check_layout3(r, inputs, leaf, root, submitter, btype, command, files, md, params)

    # dlio_config
    cfg_text = open(os.path.join(leaf, subdir, "config.yaml")).read()
    lines = r["config"].splitlines()
    if kind == "datagen":
        # what the run did, whatever the workload's workflow said: DLIO's *_datagen.yaml workflow
        keep, inside = [], False
        for line in lines:
            if line and not line.startswith((" ", "#")):
                inside = line.startswith("workflow:")
            if not inside:
                keep.append(line)
        lines = keep + ["workflow:", "  generate_data: True", "  train: False", "  checkpoint: False"]
    check("config.yaml: the configuration as given (runs.config) under workload:",
          cfg_text, "workload:\n" + "".join(("  " + line if line else "") + "\n" for line in lines))
    check("parameters: the full configuration (defaults included)", params.get("shardbench", {}).get("sampler"),
          "dlio")
    ov = yaml_list(open(os.path.join(leaf, subdir, "overrides.yaml")).read())
    want_ov = ([] if "/" in wl or ".yaml" in wl else ["workload=" + wl]) + \
              ["++workload." + override_key(o) + "=" + o.split("=", 1)[1] for o in overrides]
    check("overrides.yaml", ov, want_ov)
    hy = open(os.path.join(leaf, subdir, "hydra.yaml")).read()
    check("hydra.yaml: run.dir is the leaf", "  run:\n    dir: '%s'\n" % os.path.realpath(leaf) in hy, True)
    try:
        import yaml  # optional: a real YAML parser agrees where there is one
        y = yaml.safe_load(cfg_text)["workload"]
        check("config.yaml (PyYAML): a mapping, model.name as in the parameters",
              (isinstance(y, dict), str(y["model"]["name"]) if "model" in y else str(params["model"]["name"])),
              (True, str(params["model"]["name"])))
        check("overrides.yaml (PyYAML)", yaml.safe_load(open(os.path.join(leaf, subdir, "overrides.yaml"))), want_ov)
        check("hydra.yaml (PyYAML)", yaml.safe_load(hy)["hydra"]["run"]["dir"], os.path.realpath(leaf))
    except ImportError:
        pass

    # per-rank files
    re_rows = db.execute("SELECT * FROM rank_epochs WHERE run_id = ? AND epoch >= 1 ORDER BY rank, epoch",
                         (run_id,)).fetchall()
    ck_rows = db.execute("SELECT * FROM checkpoint_ranks WHERE run_id = ? ORDER BY rank, seq", (run_id,)).fetchall()
    for rank in range(nranks if has_stats else 0):
        st = json.load(open(os.path.join(leaf, "%d_per_epoch_stats.json" % rank)))
        out = json.load(open(os.path.join(leaf, "%d_output.json" % rank)))
        want_st = {}
        want_out_epochs = {}
        if kind != "datagen":
            for x in re_rows:
                if x["rank"] != rank:
                    continue
                span = {"start": ts_dlio(x["started_at"]), "end": ts_dlio(x["finished_at"]),
                        "duration": "%.2f" % (x["finished_at"] - x["started_at"])}
                want_st[str(x["epoch"])] = dict(span, block1=dict(span))
                want_out_epochs[str(x["epoch"])] = {
                    "start": span["start"], "end": span["end"],
                    "throughput": {"block1": x["dlio_throughput_samples_per_second"]},
                    "au": {"block1": x["dlio_au_percentage"]}}
            for x in db.execute("SELECT * FROM eval_ranks WHERE run_id = ? AND rank = ?", (run_id, rank)):
                want_st[str(x["epoch"])]["eval"] = {"start": ts_dlio(x["started_at"]), "end": ts_dlio(x["finished_at"]),
                                                    "duration": "%.2f" % (x["finished_at"] - x["started_at"])}
        mine = [c for c in ck_rows if c["rank"] == rank] if kind == "checkpoint" else []
        if mine:
            # as DLIO's per_epoch_stats: with rank_sync a rank's clock stops at the barrier after the last
            # rank's finish; its throughput is DLIO's checkpoint_size (all ranks) over its own time
            ckd = {c["seq"]: c for c in db.execute("SELECT * FROM checkpoints WHERE run_id = ?", (run_id,))}
            last = {q: max(c["finished_at"] for c in ck_rows if c["seq"] == q) for q in ckd}
            end = lambda c: max(c["finished_at"], last[c["seq"]]) if ckd[c["seq"]]["rank_sync"] else c["finished_at"]
            e = {"start": ts_dlio(mine[0]["started_at"]), "end": ts_dlio(max(end(c) for c in mine))}
            for c in mine:
                d = end(c) - c["started_at"]
                e["%s_ckpt%d" % ("save" if c["op"] == "write" else "load", c["checkpoint"])] = {
                    "start": ts_dlio(c["started_at"]), "end": ts_dlio(end(c)), "duration": d,
                    "throughput": ckd[c["seq"]]["dlio_bytes"] / GIB / d if d > 0 else 0}
            want_st["1"] = e
        check("rank %d per_epoch_stats" % rank, st, want_st)
        host = [w["host"] for w in workers if w["first_rank"] <= rank < w["first_rank"] + w["ranks"]][0]
        h = [x for x in hosts if x["host"] == host][0]
        hi = hostinfo.get(host)
        want_out = {"host_memory_GB": h["memory"] / GIB, "host_cpu_count": h["cores"],
                    "host_processor_name": hi["processor"] if hi else "",
                    "potential_caching": int(h["memory"] / GIB > dsize),
                    "host_cpuinfo": proc_dict(hi["cpuinfo"], "processor") if hi else {},
                    "host_meminfo": proc_dict(hi["meminfo"], None) if hi else {}}
        want_out.update(want_out_epochs)
        want_out["hostname"] = host
        check("rank %d output" % rank, out, want_out)

    if not given:
        # logs
        stdout = open(os.path.join(leaf, prefix + ".stdout.log")).read()
        check("stdout log starts with the command line", stdout.split("\n", 1)[0], inputs["command_line"])
        if inputs["df"] is not None:
            check("stdout log: then the df block recorded at the run's start, a blank line after it",
                  stdout.split("\n", 1)[1].startswith(inputs["df"] + "\n"), True)
            # mlpstorage's rule 3.4.2 parser (submission_checker/checks/helpers.py _check_filesystem_separation)
            m = re.search(r"^Filesystem\s+\S+\s+Used\s+Avail\w*\s+Use%\s+Mounted on", stdout, re.M)
            mounts = []
            for line in stdout[stdout.find("\n", m.end()) + 1:].splitlines() if m else []:
                parts = line.rstrip().rsplit(None, 5)
                if not line.strip() or len(parts) < 6:
                    break
                mounts.append(parts[-1])
            folder = md["args"]["checkpoint_folder"] if kind == "checkpoint" else md["args"]["data_dir"]
            real = os.path.realpath(folder)
            check("df block: mlpstorage's parser finds the mount of the data (checkpoint) folder",
                  "://" in folder or any(real == x or real.startswith(x.rstrip("/") + "/") for x in mounts), True)
        errs = db.execute("SELECT count(*) FROM errors WHERE run_id = ?", (run_id,)).fetchone()[0]
        check("stderr log: one line per error", len(open(os.path.join(leaf, prefix + ".stderr.log")).read().splitlines()),
              errs)
    check("dlio.log ends with the status", open(os.path.join(leaf, "dlio.log")).read().splitlines()[-1].endswith(
        "run %d %s" % (run_id, r["status"])), True)
    check("no temporary file left", [f for f in files if f.startswith(".")], [])
    print("%s: %d failed" % (leaf, fails))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
