#!/usr/bin/python3
"""cluster/sweep-array.sbatch run directly with bash and SLURM_ARRAY_TASK_ID set, as a SLURM array
task runs it, on a small synthetic graph (dpgnn synth, 2 parts, 2 ranks): a task trains its own
grid point; a finished task does nothing; a task killed mid-run (DPGNN_FAULT_EXIT_AFTER_STEP)
resumes and ends with the steps and epsilon of an uninterrupted task; `run` goes on past a
failed task and reports it with a non-zero exit.
"""
import json
import os
import shutil
import tempfile
import unittest

from sweep_support import ARRAY_SCRIPT, TempDirTest, dpgnn_binary, main, run, sweep, test_env, write

DATA = {}


def setUpModule():
    d = tempfile.mkdtemp(prefix="dpgnn-sweep-data-")
    DATA["dir"] = d
    dpgnn = dpgnn_binary()
    run([dpgnn, "synth", "--nodes", "300", "--avg-degree", "4", "--classes", "3", "--features", "8",
         "--homophily", "0.8", "--seed", "1", "--out", os.path.join(d, "g.h5")])
    run([dpgnn, "partition", "--dataset", os.path.join(d, "g.h5"), "--parts", "2", "--seed", "1",
         "--out", os.path.join(d, "g.part2.h5")])
    write(os.path.join(d, "drw.yaml"), """method: drw
data: {dataset: g.h5, partition: g.part2.h5}
model: {layers: 2, hidden: 16}
train: {batch_size: 20, max_steps: 12, checkpoint_every: 4, eval_every: 0, seed: 3}
privacy: {target_epsilon: 1000000, delta: 1.0e-5}
""")


def tearDownModule():
    shutil.rmtree(DATA["dir"], ignore_errors=True)


# Two tasks that differ only in train.eval_every: the same steps, batches and accounting.
SPEC = """name: array
methods:
  drw: drw.yaml
grid:
  privacy.noise_multiplier: [2]
  train.eval_every: [0, 6]
ranks: 2
"""


class SweepArrayTask(TempDirTest):
    def setUp(self):
        super().setUp()
        self.sweep_dir = os.path.join(self.tmp, "sweep")

    def plan(self, spec=SPEC, *options):
        # Planned from the data folder: the configs' relative data paths are relative to it.
        spec_path = write(os.path.join(DATA["dir"], "spec-%s.yaml" % os.path.basename(self.tmp)), spec)
        sweep("plan", spec_path, "--out", self.sweep_dir, *options, cwd=DATA["dir"])
        os.remove(spec_path)
        with open(os.path.join(self.sweep_dir, "tasks.tsv")) as f:
            return [line.rstrip("\n").split("\t") for line in f][1:]

    def task(self, task_id, check=True, **extra_env):
        env = test_env()
        env["SLURM_ARRAY_TASK_ID"] = str(task_id)
        env.update(extra_env)
        return run(["bash", ARRAY_SCRIPT, self.sweep_dir], cwd=self.tmp, env=env, check=check)

    def summary(self, run_dir):
        with open(os.path.join(self.sweep_dir, run_dir, "summary.json")) as f:
            return json.load(f)

    def test_a_task_trains_its_own_grid_point_into_its_own_run_directory(self):
        tasks = self.plan()
        code, out = self.task(1)
        s = self.summary(tasks[1][3])
        self.assertEqual((s["noise_multiplier"], s["steps"], s["ranks"], s["method"]), (2.0, 12, 2, "drw"))
        with open(os.path.join(self.sweep_dir, tasks[1][3], "config.yaml")) as f:
            self.assertIn("eval_every: 6", f.read())
        self.assertFalse(os.path.exists(os.path.join(self.sweep_dir, tasks[0][3])), "task 0 was not asked for")
        with open(os.path.join(self.sweep_dir, "logs", "task-1.exit")) as f:
            self.assertEqual(f.read().strip(), "0")

    def test_a_finished_task_does_nothing_when_it_runs_again(self):
        tasks = self.plan()
        self.task(0)
        path = os.path.join(self.sweep_dir, tasks[0][3], "summary.json")
        before = (os.stat(path).st_mtime_ns, self.summary(tasks[0][3]))
        code, out = self.task(0)
        self.assertIn("nothing to do", out)
        self.assertEqual((os.stat(path).st_mtime_ns, self.summary(tasks[0][3])), before)

    def test_a_killed_task_resumes_and_ends_with_the_steps_and_epsilon_of_an_uninterrupted_one(self):
        tasks = self.plan()
        self.task(0)
        code, out = self.task(1, check=False, DPGNN_FAULT_EXIT_AFTER_STEP="7")
        self.assertNotEqual(code, 0, out)
        run1 = os.path.join(self.sweep_dir, tasks[1][3])
        self.assertFalse(os.path.exists(os.path.join(run1, "summary.json")))
        with open(os.path.join(run1, "ledger.jsonl")) as f:
            recorded = sum('"step":' in line for line in f)
        self.assertTrue(7 <= recorded < 12, "the ledger keeps the steps before the kill, not all 12: %d" % recorded)
        with open(os.path.join(self.sweep_dir, "logs", "task-1.exit")) as f:
            self.assertNotEqual(f.read().strip(), "0")
        code, out = sweep("collect", self.sweep_dir)
        self.assertIn("1 done", out)
        self.assertIn("1 failed", out)

        code, out = self.task(1)  # the requeued attempt
        self.assertIn("resuming", out)
        resumed, uninterrupted = self.summary(tasks[1][3]), self.summary(tasks[0][3])
        self.assertEqual(resumed["steps"], 12)
        self.assertEqual(resumed["subgraphs"], uninterrupted["subgraphs"])
        self.assertAlmostEqual(resumed["epsilon"], uninterrupted["epsilon"], places=12)
        with open(os.path.join(run1, "ledger.jsonl")) as f:
            self.assertEqual(sum('"step":' in line for line in f), 12, "no step is recorded twice")

    def test_a_task_id_outside_the_sweep_is_an_error(self):
        self.plan()
        code, out = self.task(2, check=False)
        self.assertEqual(code, 2, out)
        self.assertIn("no task 2 (the sweep has 2 tasks: 0-1)", out)

    def test_run_goes_on_past_a_failed_task_and_exits_non_zero_naming_it(self):
        # train.lr must be > 0: planned without the checks, the first task fails when dpgnn
        # validates its config, the second trains.
        spec = SPEC.replace("train.eval_every: [0, 6]", "train.lr: [-1, 0.01]")
        tasks = self.plan(spec, "--no-check")
        code, out = sweep("run", self.sweep_dir, check=False)
        self.assertEqual(code, 1, out)
        self.assertIn("task 1/2 (id 0) drw noise_multiplier=2 lr=-1: FAILED", out)
        self.assertIn("task 2/2 (id 1) drw noise_multiplier=2 lr=0.01: ok, 12 steps", out)
        self.assertIn("1 of 2 tasks failed", out)
        self.assertEqual(self.summary(tasks[1][3])["steps"], 12)
        with open(os.path.join(self.sweep_dir, "logs", "task-0.log")) as f:
            self.assertIn("train.lr", f.read())


if __name__ == "__main__":
    main()
