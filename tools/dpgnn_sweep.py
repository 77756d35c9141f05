#!/usr/bin/python3
"""Sweeps: run `dpgnn train` over a grid of config values (locally, or as a SLURM job array),
collect every run's summary.json into one CSV, and draw test accuracy versus epsilon, one
line per method -- the privacy/utility plot of Ayle et al. 2022 ("Training Differentially
Private Graph Neural Networks with Random Walk Sampling"), Figure 2 (F1 micro vs epsilon,
FDP against the best DRW sampler). docs/sweeps.md describes the spec and the commands.

    dpgnn_sweep.py plan SPEC.yaml --out SWEEP_DIR   # SWEEP_DIR/tasks.tsv, sweep.env, spec, configs
    dpgnn_sweep.py run SWEEP_DIR [--ranks R]        # every task, one after another, here
    dpgnn_sweep.py slurm SWEEP_DIR [--submit]       # the sbatch --array command for the same tasks
    dpgnn_sweep.py collect SWEEP_DIR                # SWEEP_DIR/results.csv, evaluations.csv
    dpgnn_sweep.py plot SWEEP_DIR [--checkpoints]   # SWEEP_DIR/accuracy_vs_epsilon[_checkpoints].png
    dpgnn_sweep.py all SPEC.yaml --out SWEEP_DIR    # plan + run + collect + plot

Why it is built this way:
- One implementation of "run task i": cluster/sweep-array.sbatch (on cluster/common.sh, the
  requeue logic of every dpgnn batch script). `run` calls it with SLURM_ARRAY_TASK_ID=i,
  exactly as a SLURM array task does, so the requeue-safe logic (skip a finished run, --resume
  a started one, start a fresh one) is the same code locally and on a cluster, and every local
  sweep exercises it.
- `plan` freezes the sweep: the base configs are copied into SWEEP_DIR/configs/, the tasks are
  written to tasks.tsv (one line per grid point) and the paths (working directory, dpgnn
  binary) to sweep.env. A requeued task weeks later resumes with the same config, which
  `dpgnn train --resume` demands.
- A grid over privacy.noise_multiplier fixes sigma; the trainer still stops before a step
  that would exceed privacy.target_epsilon (docs/configs.md). A sweep whose points should be
  limited by steps sets the target high (configs/sweeps/cora-figure2.yaml does); `collect`
  reports in `stopped_by` which limit ended each run and warns when the target did.
- Two readings of the paper's figure: `plot` puts one finished run at each point (a noise
  multiplier trained for its steps); `plot --checkpoints` draws each run's evaluations during
  training at the epsilon spent so far (metrics.jsonl), as the paper's "accuracy at various
  epsilon checkpoints during training" does.
- Keys are checked against `dpgnn train --help-config` (the trainer's own schema), so the
  sweep never disagrees with the trainer about which keys exist; values are checked by the
  trainer itself: `plan` runs `dpgnn train --check` (no data opened) on enough tasks to cover
  every grid value of every method (`--check-all`: every task; `--no-check`: none).
- Non-private methods (gcn, mlp) do not depend on privacy.* keys: their tasks drop the
  privacy.* grid keys (one run per remaining grid point) and they are drawn as horizontal
  lines, as the non-private baselines in the paper's Table 1.

Only the standard library and Debian's python3-yaml (spec, configs) and python3-matplotlib
(plot, Agg backend: no display) are used. Exit codes as dpgnn's (docs/cli.md): 0 ok,
1 some tasks failed, 2 bad spec or argument, 4 file or system error.
"""
import argparse
import csv
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

EXIT_FAILED, EXIT_USAGE, EXIT_IO = 1, 2, 4
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARRAY_SCRIPT = os.path.join(REPO, "cluster", "sweep-array.sbatch")
PRIVATE_METHODS = ("drw", "drw-r", "drw-d", "dpgnn", "dp-mlp")
NON_PRIVATE_METHODS = ("gcn", "mlp")
SPEC_KEYS = ("name", "description", "methods", "grid", "set", "ranks", "seed_key")
METHOD_KEYS = ("config", "set")
RESULTS_CSV = "results.csv"
EVALUATIONS_CSV = "evaluations.csv"
FIGURE = "accuracy_vs_epsilon.png"
CHECKPOINTS_FIGURE = "accuracy_vs_epsilon_checkpoints.png"


class SweepError(Exception):
    def __init__(self, message, code=EXIT_USAGE):
        super().__init__(message)
        self.code = code


def spec_error(path, field, problem):
    return SweepError("%s: %s: %s" % (path, field, problem))


def say(msg):
    print(msg, flush=True)


# ---- the dpgnn binary and its config schema ---------------------------------------------------


def find_dpgnn(explicit=None):
    """--dpgnn, $DPGNN_BIN, <repo>/$DPGNN_BUILD_DIR/src/cli/dpgnn, <repo>/build/..., PATH."""
    for source, path in (("--dpgnn", explicit), ("DPGNN_BIN", os.environ.get("DPGNN_BIN"))):
        if path:
            if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                raise SweepError("dpgnn binary '%s' (from %s) is not an executable file" % (path, source), EXIT_IO)
            return os.path.abspath(path)
    build = os.environ.get("DPGNN_BUILD_DIR", "build")
    path = os.path.join(build if os.path.isabs(build) else os.path.join(REPO, build), "src", "cli", "dpgnn")
    for c in (path, os.path.join(REPO, "build", "src", "cli", "dpgnn"), shutil.which("dpgnn")):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise SweepError("no dpgnn binary: build it (scripts/build.sh), or give --dpgnn PATH or DPGNN_BIN", EXIT_IO)


def config_keys(dpgnn):
    """The keys `dpgnn train` accepts, from its --help-config --markdown table (| `key` | type | ...)."""
    try:
        out = subprocess.run([dpgnn, "train", "--help-config", "--markdown"], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SweepError("cannot read the config keys from '%s train --help-config': %s" % (dpgnn, e), EXIT_IO)
    keys = set(re.findall(r"^\| `([A-Za-z0-9_.]+)` \|", out, flags=re.M))
    if not keys:
        raise SweepError("'%s train --help-config' printed no key table" % dpgnn, EXIT_IO)
    return keys


# ---- the spec -----------------------------------------------------------------------------------


def load_yaml(path, what):
    import yaml  # only plan/collect need it; sweep-array.sbatch does not run Python

    try:
        with open(path) as f:
            return yaml.safe_load(f)
    except OSError as e:
        raise SweepError("%s: cannot read the %s: %s" % (path, what, e.strerror), EXIT_IO)
    except yaml.YAMLError as e:
        raise SweepError("%s: not valid YAML: %s" % (path, str(e).replace("\n", " ")))


def scalar_text(path, field, value):
    """A YAML scalar as `dpgnn train --set key=VALUE` reads it back."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise spec_error(path, field, "%r is not a finite number" % value)
        return repr(value)
    if isinstance(value, str):
        if value == "" or re.search(r"[\s'\"\\]", value):
            raise spec_error(path, field, "string %r must be non-empty, without spaces or quotes "
                             "(it travels in tasks.tsv as one key=value word)" % value)
        return value
    raise spec_error(path, field, "must be a scalar (number, string, true/false, null), not %s" % type(value).__name__)


def check_key(path, field, key, known, allow_method=False):
    if allow_method and key == "method":
        return
    if not isinstance(key, str) or key not in known:
        close = sorted(k for k in known if isinstance(key, str) and k.split(".")[-1] == key.split(".")[-1])
        hint = " (did you mean %s?)" % ", ".join(close) if close else " (see `dpgnn train --help-config`)"
        raise spec_error(path, field, "unknown config key %r%s" % (key, hint))
    if key == "method":
        raise spec_error(path, field, "the method comes from the methods: section (a method's config or its set:)")


def check_overrides(path, field, table, known, allow_method=False):
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise spec_error(path, field, "must be a mapping of config keys to values")
    out = {}
    for k, v in table.items():
        check_key(path, "%s.%s" % (field, k), k, known, allow_method)
        out[k] = scalar_text(path, "%s.%s" % (field, k), v)
    return out


def load_spec(path, dpgnn):
    """Reads and validates a sweep spec; every error names the file and the field."""
    spec = load_yaml(path, "sweep spec")
    if not isinstance(spec, dict):
        raise spec_error(path, "(top level)", "a sweep spec is a mapping with name, methods, grid, set, ranks")
    for k in spec:
        if k not in SPEC_KEYS:
            raise spec_error(path, k, "unknown field (expected one of: %s)" % ", ".join(SPEC_KEYS))
    known = config_keys(dpgnn)
    name = spec.get("name", os.path.splitext(os.path.basename(path))[0])
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        raise spec_error(path, "name", "must be a word of letters, digits, '.', '_' or '-'")
    ranks = spec.get("ranks", 1)
    if not isinstance(ranks, int) or isinstance(ranks, bool) or ranks < 1:
        raise spec_error(path, "ranks", "must be an integer >= 1 (MPI ranks per run)")
    seed_key = spec.get("seed_key", "train.seed")
    check_key(path, "seed_key", seed_key, known)

    methods = spec.get("methods")
    if not isinstance(methods, dict) or not methods:
        raise spec_error(path, "methods", "must be a non-empty mapping: LABEL: CONFIG.yaml or LABEL: {config: ..., set: {...}}")
    spec_dir = os.path.dirname(os.path.abspath(path))
    parsed_methods = []
    for label, m in methods.items():
        field = "methods.%s" % label
        if not isinstance(label, str) or not re.fullmatch(r"[A-Za-z0-9._-]+", label):
            raise spec_error(path, field, "a method label is a word of letters, digits, '.', '_' or '-'")
        if isinstance(m, str):
            m = {"config": m}
        if not isinstance(m, dict):
            raise spec_error(path, field, "must be a config path or a mapping {config: ..., set: {...}}")
        for k in m:
            if k not in METHOD_KEYS:
                raise spec_error(path, "%s.%s" % (field, k), "unknown field (expected config, set)")
        config = m.get("config")
        if not isinstance(config, str) or not config:
            raise spec_error(path, field + ".config", "missing: the base training config of this method")
        # Relative to the current directory (like dpgnn's data paths), else to the spec's folder.
        resolved = config if os.path.isabs(config) else (
            config if os.path.isfile(config) else os.path.join(spec_dir, config))
        if not os.path.isfile(resolved):
            raise spec_error(path, field + ".config", "base config '%s' does not exist" % config)
        base = load_yaml(resolved, "base config")
        if not isinstance(base, dict):
            raise spec_error(path, field + ".config", "'%s' is not a YAML mapping of config sections" % config)
        sets = check_overrides(path, field + ".set", m.get("set"), known, allow_method=True)
        method = sets.get("method", base.get("method", "drw"))
        if method not in PRIVATE_METHODS + NON_PRIVATE_METHODS:
            raise spec_error(path, field, "method %r (from %s) is not one of %s" %
                             (method, config, ", ".join(PRIVATE_METHODS + NON_PRIVATE_METHODS)))
        parsed_methods.append({"label": label, "config": os.path.abspath(resolved), "set": sets,
                               "method": method, "private": method in PRIVATE_METHODS})

    grid = spec.get("grid")
    if not isinstance(grid, dict) or not grid:
        raise spec_error(path, "grid", "must be a non-empty mapping of config keys to lists of values")
    parsed_grid = []
    for k, values in grid.items():
        field = "grid.%s" % k
        check_key(path, field, k, known)
        if not isinstance(values, list) or not values:
            raise spec_error(path, field, "must be a non-empty list of values")
        texts = [scalar_text(path, field, v) for v in values]
        if len(set(texts)) != len(texts):
            raise spec_error(path, field, "lists a value twice")
        parsed_grid.append((k, texts))
    fixed = check_overrides(path, "set", spec.get("set"), known)
    for k in fixed:
        if k in grid:
            raise spec_error(path, "set.%s" % k, "is also a grid key; give it in one place")
    return {"name": name, "ranks": ranks, "seed_key": seed_key, "methods": parsed_methods,
            "grid": parsed_grid, "set": fixed, "description": spec.get("description", "")}


# ---- plan -------------------------------------------------------------------------------------------


def expand(spec):
    """One task per (method, grid point); non-private methods skip the privacy.* grid keys."""
    tasks = []
    names = set()
    grid_keys = [k for k, _ in spec["grid"]]
    for m in spec["methods"]:
        axes = [(k, v) for k, v in spec["grid"] if m["private"] or not k.startswith("privacy.")]
        points = [[]]
        for k, values in axes:
            points = [p + [(k, v)] for p in points for v in values]
        for point in points:
            values = dict(point)
            short = "-".join("%s%s" % (k.split(".")[-1], v) for k, v in point)
            name = re.sub(r"[^A-Za-z0-9._-]", "_", m["label"] + ("-" + short if short else ""))
            if name in names:
                name = "%s-t%d" % (name, len(tasks))
            names.add(name)
            overrides = dict(spec["set"])
            overrides.update(m["set"])
            overrides.update(values)
            tasks.append({"task": len(tasks), "method": m["label"], "dpgnn_method": m["method"],
                          "config": "configs/%s.yaml" % m["label"], "run_dir": "runs/" + name,
                          "grid": {k: values.get(k, "") for k in grid_keys},
                          "set": ["%s=%s" % (k, v) for k, v in overrides.items()]})
    return tasks


def tasks_tsv(spec, tasks):
    grid_keys = [k for k, _ in spec["grid"]]
    lines = ["\t".join(["task", "method", "config", "run_dir"] + grid_keys + ["set"])]
    for t in tasks:
        lines.append("\t".join([str(t["task"]), t["method"], t["config"], t["run_dir"]] +
                               [t["grid"][k] or "-" for k in grid_keys] + [" ".join(t["set"])]))
    return "\n".join(lines) + "\n"


def read_text(path):
    with open(path) as f:
        return f.read()


def write_file(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def cmd_plan(args):
    dpgnn = find_dpgnn(args.dpgnn)
    spec = load_spec(args.spec, dpgnn)
    tasks = expand(spec)
    checked = 0 if args.no_check else validate_tasks(args.spec, spec, tasks, dpgnn, args.check_all)
    out = os.path.abspath(args.out)
    tsv = tasks_tsv(spec, tasks)
    old = os.path.join(out, "tasks.tsv")
    if os.path.exists(old) and not args.force:
        # The same plan again is a no-op; another one (other tasks, or a base config that changed
        # since: started runs would no longer resume) needs --force.
        differs = [] if read_text(old) == tsv else ["tasks.tsv"]
        for m in spec["methods"]:
            frozen = os.path.join(out, "configs", m["label"] + ".yaml")
            if os.path.exists(frozen) and read_text(frozen) != read_text(m["config"]):
                differs.append("configs/%s.yaml (the base config changed)" % m["label"])
        if differs:
            raise SweepError("%s: the sweep directory holds another plan (%s differs); choose another --out, or "
                             "--force to re-plan (runs already there are kept, never deleted)" % (out, ", ".join(differs)))
    try:
        os.makedirs(os.path.join(out, "configs"), exist_ok=True)
        os.makedirs(os.path.join(out, "runs"), exist_ok=True)
        os.makedirs(os.path.join(out, "logs"), exist_ok=True)
        for m in spec["methods"]:
            shutil.copyfile(m["config"], os.path.join(out, "configs", m["label"] + ".yaml"))
        shutil.copyfile(args.spec, os.path.join(out, "spec.yaml"))
        write_file(old, tsv)
        meta = {"name": spec["name"], "spec": os.path.abspath(args.spec), "workdir": os.getcwd(),
                "ranks": spec["ranks"], "seed_key": spec["seed_key"], "grid_keys": [k for k, _ in spec["grid"]],
                "methods": [{k: m[k] for k in ("label", "method", "private", "config")} for m in spec["methods"]],
                "tasks": tasks, "dpgnn": dpgnn, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        write_file(os.path.join(out, "sweep.json"), json.dumps(meta, indent=2) + "\n")
        # Sourced by cluster/sweep-array.sbatch; the environment wins over these defaults.
        env = ["# written by tools/dpgnn_sweep.py plan; sourced by cluster/sweep-array.sbatch.",
               "# A variable already set in the environment wins over the value here."]
        for var, value in (("DPGNN_SWEEP_WORKDIR", os.getcwd()), ("DPGNN_BIN", dpgnn), ("DPGNN_HOME", REPO)):
            env.append('[ -n "${%s:-}" ] || %s=%s' % (var, var, shlex.quote(value)))
        env += ["DPGNN_SWEEP_SPEC_RANKS=%d" % spec["ranks"], "DPGNN_SWEEP_TASKS=%d" % len(tasks)]
        write_file(os.path.join(out, "sweep.env"), "\n".join(env) + "\n")
    except OSError as e:
        raise SweepError("%s: cannot write the sweep directory: %s" % (out, e), EXIT_IO)
    say("planned %d tasks (%s) in %s; %d checked with dpgnn train --check" % (len(tasks), ", ".join(
        "%s: %d" % (m["label"], sum(t["method"] == m["label"] for t in tasks)) for m in spec["methods"]), out, checked))
    return 0


def covering_tasks(spec, tasks):
    """Per method, the "diagonal" tasks: task j takes the j-th value of every grid key (cycling),
    so every value of every key is checked with max(list lengths) tasks, not the whole product."""
    chosen = []
    for m in spec["methods"]:
        own = [t for t in tasks if t["method"] == m["label"]]
        axes = [(k, v) for k, v in spec["grid"] if m["private"] or not k.startswith("privacy.")]
        by_point = {tuple(t["grid"][k] for k, _ in axes): t for t in own}
        for j in range(max((len(v) for _, v in axes), default=1)):
            t = by_point[tuple(v[j % len(v)] for _, v in axes)]
            if t not in chosen:
                chosen.append(t)
    return chosen


def validate_tasks(spec_path, spec, tasks, dpgnn, check_all):
    """`dpgnn train --check` (the trainer's own validation, no data opened) on the tasks' configs."""
    configs = {m["label"]: m["config"] for m in spec["methods"]}
    todo = tasks if check_all else covering_tasks(spec, tasks)
    for t in todo:
        cmd = [dpgnn, "train", "--config", configs[t["method"]], "--check"]
        for kv in t["set"]:
            cmd += ["--set", kv]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or ["exit status %d" % r.returncode])[-1]
            last = re.sub(r"^\[[^]]*\] (error )?", "", last)
            point = " ".join("%s=%s" % kv for kv in t["grid"].items() if kv[1] != "")
            raise spec_error(spec_path, "methods.%s" % t["method"],
                             "dpgnn train --check rejects the task with %s: %s" % (point or "no grid values", last))
    return len(todo)


# ---- run ---------------------------------------------------------------------------------------------


def load_plan(sweep_dir):
    path = os.path.join(sweep_dir, "sweep.json")
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise SweepError("%s: not a planned sweep directory (%s): run `plan` first" % (sweep_dir, e.strerror), EXIT_IO)


def task_state(sweep_dir, t):
    run = os.path.join(sweep_dir, t["run_dir"])
    if os.path.isfile(os.path.join(run, "summary.json")):
        return "done"
    exit_file = os.path.join(sweep_dir, "logs", "task-%d.exit" % t["task"])
    if os.path.isfile(exit_file):
        with open(exit_file) as f:
            code = f.read().strip()
        if code not in ("", "0"):
            return "failed"
    if os.path.isfile(os.path.join(run, "config.yaml")):
        return "started"
    return "pending"


def describe(meta, t):
    vals = " ".join("%s=%s" % (k.split(".")[-1], v) for k, v in t["grid"].items() if v != "")
    return "%s %s" % (t["method"], vals)


def cmd_run(args):
    sweep_dir = os.path.abspath(args.sweep_dir)
    meta = load_plan(sweep_dir)
    ranks = args.ranks or meta["ranks"]
    tasks = meta["tasks"]
    if args.tasks:
        wanted = parse_ids(args.tasks, len(tasks))
        tasks = [t for t in tasks if t["task"] in wanted]
    env = dict(os.environ)
    env["DPGNN_SWEEP_RANKS"] = str(ranks)
    env.pop("SLURM_NTASKS", None)  # local runs: --ranks/the spec decide, not an enclosing allocation
    if args.dpgnn:
        env["DPGNN_BIN"] = os.path.abspath(args.dpgnn)
    failed = []
    for i, t in enumerate(tasks, 1):
        label = "task %d/%d (id %d) %s" % (i, len(tasks), t["task"], describe(meta, t))
        if task_state(sweep_dir, t) == "done":
            say("%s: done already, skipped" % label)
            continue
        say("%s: running in %s (%d ranks)" % (label, t["run_dir"], ranks))
        env["SLURM_ARRAY_TASK_ID"] = str(t["task"])
        start = time.time()
        log = os.path.join(sweep_dir, "logs", "task-%d.log" % t["task"])
        with open(log, "a") as f:
            rc = subprocess.run(["bash", ARRAY_SCRIPT, sweep_dir], env=env, stdout=f, stderr=subprocess.STDOUT).returncode
        took = time.time() - start
        summary = read_summary(os.path.join(sweep_dir, t["run_dir"]))
        if rc == 0 and summary is not None:
            eps = summary.get("epsilon")
            score = summary.get("test_accuracy", summary.get("test_f1_micro"))
            say("%s: ok, %s steps, epsilon %s, test %s (%.1f s)" % (
                label, summary.get("steps"), "-" if eps is None else "%.3f" % eps,
                "-" if score is None else "%.4f" % score, took))
        else:
            failed.append((t, rc, log))
            say("%s: FAILED (exit %d, %.1f s); log %s" % (label, rc, took, log))
    if failed:
        say("%d of %d tasks failed:" % (len(failed), len(tasks)))
        for t, rc, log in failed:
            say("  task %d %s: exit %d, log %s" % (t["task"], t["run_dir"], rc, log))
        say("run again to retry them (finished tasks are skipped, started ones resume)")
        return EXIT_FAILED
    return 0


def parse_ids(text, n):
    ids = set()
    for part in text.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part.strip())
        if not m:
            raise SweepError("--tasks: %r is not a task id or range (e.g. 0-3,7)" % part)
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo or hi >= n:
            raise SweepError("--tasks: %r is outside the tasks 0-%d" % (part, n - 1))
        ids.update(range(lo, hi + 1))
    return ids


def cmd_slurm(args):
    sweep_dir = os.path.abspath(args.sweep_dir)
    meta = load_plan(sweep_dir)
    ranks = args.ranks or meta["ranks"]
    ids = sorted(t["task"] for t in meta["tasks"] if task_state(sweep_dir, t) != "done")
    if not ids:
        say("every task of %s is done: nothing to submit" % sweep_dir)
        return 0
    runs = []  # consecutive ids as ranges: 1-2,4-8,10
    for i in ids:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    array = ",".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in runs)
    if args.max_parallel:
        array += "%%%d" % args.max_parallel
    cmd = ["sbatch", "--array=" + array, "--ntasks=%d" % ranks, "--job-name=sweep-" + meta["name"],
           "--output=" + os.path.join(sweep_dir, "logs", "task-%a.log"), "--open-mode=append"]
    cmd += args.sbatch_args + [ARRAY_SCRIPT, sweep_dir]
    env = dict(os.environ, DPGNN_HOME=REPO)
    say("DPGNN_HOME=%s %s" % (shlex.quote(REPO), " ".join(shlex.quote(c) for c in cmd)))
    if not args.submit:
        return 0
    if shutil.which("sbatch") is None:
        raise SweepError("sbatch is not on PATH: run the command above on a SLURM login node", EXIT_IO)
    return subprocess.run(cmd, env=env).returncode


# ---- collect -----------------------------------------------------------------------------------------


def read_summary(run_dir):
    try:
        with open(os.path.join(run_dir, "summary.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def max_steps_of(run_dir):
    """train.max_steps of the resolved config the run wrote (config.yaml: every key)."""
    path = os.path.join(run_dir, "config.yaml")
    if not os.path.isfile(path):
        return None
    cfg = load_yaml(path, "run config")
    try:
        return int(cfg["train"]["max_steps"])
    except (KeyError, TypeError, ValueError):
        return None


SUMMARY_COLUMNS = ("steps", "max_steps", "stopped_by", "epsilon", "delta", "target_epsilon", "noise_multiplier",
                   "sigma", "batch_size", "subgraphs", "ranks", "val_accuracy", "test_accuracy", "val_f1_micro",
                   "test_f1_micro", "wall_seconds")


def results_rows(sweep_dir, meta):
    rows = []
    for t in meta["tasks"]:
        run = os.path.join(sweep_dir, t["run_dir"])
        s = read_summary(run) or {}
        row = {"task": t["task"], "method": t["method"], "dpgnn_method": t["dpgnn_method"]}
        row.update(t["grid"])
        row["seed"] = s.get("seed", "")
        row["status"] = task_state(sweep_dir, t)
        for c in SUMMARY_COLUMNS:
            v = s.get(c)
            row[c] = "" if v is None else v
        if s:
            row["max_steps"] = max_steps_of(run) or ""
            private = t["dpgnn_method"] in PRIVATE_METHODS
            row["stopped_by"] = ("max_steps" if not private or row["max_steps"] == "" or s.get("steps", 0) >= row["max_steps"]
                                 else "target_epsilon")
        row["run_dir"] = t["run_dir"]
        rows.append(row)
    return rows


EVALUATION_COLUMNS = ("step", "epsilon", "val_accuracy", "test_accuracy", "val_f1_micro", "test_f1_micro")


def evaluation_rows(sweep_dir, meta):
    """Every evaluation during training (metrics.jsonl lines with a test metric), per task."""
    rows = []
    for t in meta["tasks"]:
        path = os.path.join(sweep_dir, t["run_dir"], "metrics.jsonl")
        if not os.path.isfile(path):
            continue
        by_step = {}
        with open(path) as f:
            for line in f:
                try:
                    m = json.loads(line)
                except ValueError:
                    continue  # a last line cut short by a kill
                if isinstance(m, dict) and ("test_accuracy" in m or "test_f1_micro" in m):
                    by_step[m.get("step")] = m  # a resumed run may evaluate a replayed step again: the last counts
        for step in sorted(k for k in by_step if isinstance(k, int)):
            row = {"task": t["task"], "method": t["method"], "dpgnn_method": t["dpgnn_method"]}
            row.update(t["grid"])
            row.update({c: ("" if by_step[step].get(c) is None else by_step[step][c]) for c in EVALUATION_COLUMNS})
            row["run_dir"] = t["run_dir"]
            rows.append(row)
    return rows


def write_csv(path, columns, rows):
    try:
        with open(path + ".tmp", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=columns)
            w.writeheader()
            for r in rows:
                w.writerow(r)  # floats as repr(): the shortest text that reads back the same number
        os.replace(path + ".tmp", path)
    except OSError as e:
        raise SweepError("%s: cannot write: %s" % (path, e.strerror), EXIT_IO)


def cmd_collect(args):
    sweep_dir = os.path.abspath(args.sweep_dir)
    meta = load_plan(sweep_dir)
    rows = results_rows(sweep_dir, meta)
    head = ["task", "method", "dpgnn_method"] + meta["grid_keys"]
    out = os.path.join(sweep_dir, RESULTS_CSV)
    write_csv(out, head + ["seed", "status"] + list(SUMMARY_COLUMNS) + ["run_dir"], rows)
    evals = evaluation_rows(sweep_dir, meta)
    write_csv(os.path.join(sweep_dir, EVALUATIONS_CSV), head + list(EVALUATION_COLUMNS) + ["run_dir"], evals)
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    say("wrote %s: %d rows (%s); %s: %d evaluations" % (
        out, len(rows), ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items())), EVALUATIONS_CSV, len(evals)))
    by_target = [r for r in rows if r["stopped_by"] == "target_epsilon"]
    # Only a grid over the noise multiplier wants fixed steps; elsewhere (a grid over the target, or
    # runs trained until the target as the paper does) stopping at the target is the protocol.
    if by_target and "privacy.noise_multiplier" in meta["grid_keys"] and "privacy.target_epsilon" not in meta["grid_keys"]:
        say("warning: %d run(s) stopped before train.max_steps because the next step would exceed "
            "privacy.target_epsilon (%s): their epsilon is set by the target, not by the noise multiplier and "
            "the steps; raise privacy.target_epsilon in the spec's set: for a fixed-steps sweep" %
            (len(by_target), ", ".join(r["run_dir"] for r in by_target[:3]) + (" ..." if len(by_target) > 3 else "")))
    return 0


# ---- plot ---------------------------------------------------------------------------------------------


def read_results(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise SweepError("%s: cannot read (%s): run `collect` first" % (path, e.strerror), EXIT_IO)


def num(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def plot_series(rows, grid_keys, seed_key, metric):
    """Per method: private -> points (mean epsilon, mean/min/max score) over seeds; non-private -> a level."""
    series = {}
    for r in rows:
        if r["status"] != "done" or num(r.get(metric)) is None:
            continue
        s = series.setdefault(r["method"], {"private": r["dpgnn_method"] in PRIVATE_METHODS, "groups": {}})
        point = tuple((k, r.get(k, "")) for k in grid_keys if k != seed_key)
        s["groups"].setdefault(point, []).append((num(r["epsilon"]), num(r[metric])))
    out = []
    for label, s in series.items():
        pts = []
        for point, runs in s["groups"].items():
            scores = [a for _, a in runs]
            eps = [e for e, _ in runs if e is not None]
            pts.append({"epsilon": sum(eps) / len(eps) if eps else None, "mean": sum(scores) / len(scores),
                        "min": min(scores), "max": max(scores), "n": len(scores)})
        if s["private"]:
            pts = sorted((p for p in pts if p["epsilon"] is not None), key=lambda p: p["epsilon"])
        out.append({"label": label, "private": s["private"], "points": pts})
    return out


def cmd_plot(args):
    sweep_dir = os.path.abspath(args.sweep_dir)
    meta = load_plan(sweep_dir)
    rows = read_results(os.path.join(sweep_dir, RESULTS_CSV))
    metric = "test_accuracy" if any(num(r.get("test_accuracy")) is not None for r in rows) else "test_f1_micro"
    if args.checkpoints:
        # The paper's reading: accuracy at the epsilon spent so far, at every evaluation of a run.
        # One line per private method and grid point (seeds averaged, step by step).
        other = [k for k in meta["grid_keys"] if k != meta["seed_key"]]
        pseudo = []
        for r in read_results(os.path.join(sweep_dir, EVALUATIONS_CSV)):
            if r["dpgnn_method"] in PRIVATE_METHODS:
                values = " ".join("%s=%s" % (k.split(".")[-1], r[k]) for k in other if r.get(k))
                pseudo.append(dict(r, method=(r["method"] + " " + values).strip(), status="done"))
        series = plot_series(pseudo, ["step"], None, metric) + plot_series(
            [r for r in rows if r["dpgnn_method"] not in PRIVATE_METHODS], meta["grid_keys"], meta["seed_key"], metric)
    else:
        series = plot_series(rows, meta["grid_keys"], meta["seed_key"], metric)
    if not any(s["private"] and s["points"] for s in series):
        raise SweepError("%s: no finished private run with an epsilon: nothing to plot" %
                         os.path.join(sweep_dir, RESULTS_CSV), EXIT_FAILED)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=args.dpi)
    # One colour per method of the spec (its label's first word); the lines of one method
    # (grid points, with --checkpoints) differ in marker and line style.
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    methods = [m["label"] for m in meta["methods"]]
    markers, styles = "osd^v<>px", ["-", "--", "-.", ":"]
    seen = {}
    for s in series:
        base = s["label"].split(" ")[0]
        c = colors[(methods.index(base) if base in methods else len(methods)) % len(colors)]
        k = seen[base] = seen.get(base, -1) + 1
        pts = s["points"]
        if s["private"]:
            x = [p["epsilon"] for p in pts]
            y = [p["mean"] for p in pts]
            err = [[p["mean"] - p["min"] for p in pts], [p["max"] - p["mean"] for p in pts]]
            ax.errorbar(x, y, yerr=err, color=c, marker=markers[k % len(markers)], linestyle=styles[k % len(styles)],
                        capsize=3, markersize=5, label=s["label"])
        else:
            runs = sum(p["n"] for p in pts)
            level = sum(p["mean"] * p["n"] for p in pts) / runs
            lo, hi = min(p["min"] for p in pts), max(p["max"] for p in pts)
            ax.axhline(level, color=c, linestyle="--", label="%s (non-private)" % s["label"])
            if hi > lo:
                ax.axhspan(lo, hi, color=c, alpha=0.15)
    deltas = sorted({r["delta"] for r in rows if num(r.get("delta")) is not None})
    ax.set_xlabel("epsilon" + (" (delta = %g)" % num(deltas[0]) if len(deltas) == 1 else ""))
    ax.set_ylabel("test accuracy" if metric == "test_accuracy" else "test F1 micro")
    if args.logx:
        ax.set_xscale("log")
    seeds = max((p["n"] for s in series for p in s["points"]), default=1)
    ax.set_title("%s: %s vs epsilon%s%s" % (meta["name"], "accuracy" if metric == "test_accuracy" else "F1 micro",
                                           " during training" if args.checkpoints else "",
                                           "\n(mean and min-max over %d seeds)" % seeds if seeds > 1 else ""),
                 fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small" if len(series) > 4 else "medium", ncol=2 if len(series) > 8 else 1)
    fig.tight_layout()
    out = os.path.abspath(args.out) if args.out else os.path.join(
        sweep_dir, CHECKPOINTS_FIGURE if args.checkpoints else FIGURE)
    try:
        fig.savefig(out)
    except OSError as e:
        raise SweepError("%s: cannot write: %s" % (out, e.strerror), EXIT_IO)
    plt.close(fig)
    say("wrote %s" % out)
    return 0


def cmd_all(args):
    cmd_plan(args)
    args.sweep_dir = args.out
    rc = cmd_run(args)
    cmd_collect(args)
    args.out = None
    try:
        cmd_plot(args)
    except SweepError as e:
        if rc == 0:
            raise
        say("no figure: %s" % e)
    return rc


# ---- command line ------------------------------------------------------------------------------------


def main(argv):
    p = argparse.ArgumentParser(prog=os.environ.get("DPGNN_SWEEP_PROG", "dpgnn_sweep.py"), description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Spec format, SLURM flow, CSV columns: docs/sweeps.md")
    sub = p.add_subparsers(dest="command", required=True)

    def plan_args(q):
        q.add_argument("spec", help="sweep spec (YAML), e.g. configs/sweeps/cora-figure2.yaml")
        q.add_argument("--out", required=True, help="sweep directory to create")
        q.add_argument("--force", action="store_true", help="re-plan a sweep directory that holds another plan")
        q.add_argument("--check-all", action="store_true",
                       help="check every task with dpgnn train --check (default: enough tasks to cover every grid value)")
        q.add_argument("--no-check", action="store_true", help="do not run dpgnn train --check")

    def run_args(q):
        q.add_argument("--ranks", type=int, help="MPI ranks per run (default: the spec's ranks)")
        q.add_argument("--tasks", help="only these task ids, e.g. 0-3,7")

    def plot_args(q):
        q.add_argument("--logx", action="store_true", help="logarithmic epsilon axis")
        q.add_argument("--dpi", type=int, default=120)
        q.add_argument("--checkpoints", action="store_true",
                       help="plot every evaluation during training (evaluations.csv) instead of the final results: "
                            "one line per private method and grid point (SWEEP_DIR/%s)" % CHECKPOINTS_FIGURE)

    q = sub.add_parser("plan", help="write SWEEP_DIR/tasks.tsv and the frozen configs")
    plan_args(q)
    q = sub.add_parser("run", help="run every unfinished task here, one after another")
    q.add_argument("sweep_dir")
    run_args(q)
    q = sub.add_parser("slurm", help="print (or --submit) the sbatch --array command; sbatch options after --",
                       usage="%(prog)s SWEEP_DIR [--ranks R] [--max-parallel K] [--submit] [-- SBATCH OPTIONS...]")
    q.add_argument("sweep_dir")
    q.add_argument("--ranks", type=int, help="MPI ranks (SLURM tasks) per run (default: the spec's ranks)")
    q.add_argument("--max-parallel", type=int, help="at most this many array tasks at once (--array=...%%K)")
    q.add_argument("--submit", action="store_true", help="run sbatch instead of printing the command")
    q = sub.add_parser("collect", help="every summary.json into SWEEP_DIR/results.csv")
    q.add_argument("sweep_dir")
    q = sub.add_parser("plot", help="SWEEP_DIR/accuracy_vs_epsilon.png from results.csv")
    q.add_argument("sweep_dir")
    q.add_argument("--out", help="PNG path (default SWEEP_DIR/%s)" % FIGURE)
    plot_args(q)
    q = sub.add_parser("all", help="plan, run, collect and plot")
    plan_args(q)
    run_args(q)
    plot_args(q)
    for q in sub.choices.values():
        q.add_argument("--dpgnn", help="the dpgnn binary (default $DPGNN_BIN, else <repo>/build/src/cli/dpgnn)")
    # Everything after "--" goes to sbatch unchanged (slurm only).
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if extra and args.command != "slurm":
        p.error("only `slurm` passes arguments after -- (to sbatch)")
    args.sbatch_args = extra
    for flag in ("ranks", "max_parallel"):
        if getattr(args, flag, None) is not None and getattr(args, flag) < 1:
            p.error("--%s must be >= 1" % flag.replace("_", "-"))
    try:
        return {"plan": cmd_plan, "run": cmd_run, "slurm": cmd_slurm, "collect": cmd_collect,
                "plot": cmd_plot, "all": cmd_all}[args.command](args)
    except SweepError as e:
        sys.stderr.write("dpgnn_sweep: error: %s\n" % e)
        return e.code
    except ImportError as e:  # python3-yaml (spec, configs) or python3-matplotlib (plot)
        sys.stderr.write("dpgnn_sweep: error: %s (interpreter %s): install python3-yaml and python3-matplotlib "
                         "(scripts/install-deps.sh does)\n" % (e, sys.executable))
        return EXIT_IO


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
