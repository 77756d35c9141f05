"""Shared helpers of the sweep tests (tests/sweep/test_*.py): where the tool, the dpgnn binary
and the shared data are, a temporary directory per test, and the command runner.

The tests run tools/dpgnn_sweep.py and cluster/sweep-array.sbatch as a user does, as separate
processes, and judge them by their exit codes, messages and files. ctest passes DPGNN_BIN (the
dpgnn it built) and DPGNN_SHARED_DIR (tests/sweep/CMakeLists.txt).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(SOURCE_DIR, "tools", "dpgnn_sweep.py")
ARRAY_SCRIPT = os.path.join(SOURCE_DIR, "cluster", "sweep-array.sbatch")
PYTHON = "/usr/bin/python3"
SKIP = 77  # ctest SKIP_RETURN_CODE


def dpgnn_binary():
    path = os.environ.get("DPGNN_BIN", os.path.join(SOURCE_DIR, "build", "src", "cli", "dpgnn"))
    if not os.access(path, os.X_OK):
        sys.stderr.write("the sweep tests need the dpgnn binary: %s is missing (set DPGNN_BIN)\n" % path)
        sys.exit(1)
    return path


def shared_dir():
    return os.environ.get("DPGNN_SHARED_DIR", os.path.join(SOURCE_DIR, "..", "shared"))


def test_env():
    env = dict(os.environ)
    env.update({"DPGNN_BIN": dpgnn_binary(), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "DPGNN_PROGRESS": "0"})
    for var in ("SLURM_ARRAY_TASK_ID", "SLURM_NTASKS", "DPGNN_SWEEP_RANKS", "DPGNN_SWEEP_WORKDIR", "DPGNN_HOME",
                "SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID"):
        env.pop(var, None)
    return env


def run(cmd, cwd=None, env=None, check=True):
    """Runs a command; returns (exit code, stdout + stderr). check=True fails on a non-zero exit."""
    r = subprocess.run(cmd, cwd=cwd, env=env or test_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if check and r.returncode != 0:
        raise AssertionError("%s exited with %d:\n%s" % (" ".join(cmd), r.returncode, r.stdout))
    return r.returncode, r.stdout


def sweep(*args, cwd=None, env=None, check=True):
    return run([PYTHON, TOOL] + list(args), cwd=cwd, env=env, check=check)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


class TempDirTest(unittest.TestCase):
    """A fresh temporary directory per test (self.tmp), removed afterwards."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dpgnn-sweep-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    """unittest's main, with one line per test (the names read as sentences)."""
    unittest.main(verbosity=2)
