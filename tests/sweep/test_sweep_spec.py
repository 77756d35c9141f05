#!/usr/bin/python3
"""tools/dpgnn_sweep.py without training: spec validation (every error names the file and the
field and exits 2), the plan (one task per method and grid point), collect (summary.json files
into results.csv) and the sbatch --array line. The summaries here are written by the test with
values it chose, so the CSV is checked against those values, not against the tool's own output.
"""
import csv
import json
import os
import struct

from sweep_support import SOURCE_DIR, TempDirTest, dpgnn_binary, main, run, sweep, test_env, write

BASES = {
    "drw": "method: drw\ndata: {dataset: data/x.h5}\ntrain: {max_steps: 50}\n",
    "dpmlp": "method: dp-mlp\ndata: {dataset: data/x.h5}\ntrain: {max_steps: 50}\n",
    "gcn": "method: gcn\ndata: {dataset: data/x.h5}\ntrain: {max_steps: 50}\n",
}

GOOD_SPEC = """name: unit
methods:
  drw: base/drw.yaml
  dp-mlp: {config: base/dpmlp.yaml, set: {train.lr: 0.05}}
  gcn: base/gcn.yaml
grid:
  privacy.noise_multiplier: [1, 2.5, 4]
  train.seed: [1, 2]
set:
  privacy.target_epsilon: 1000000
ranks: 2
"""


class SweepSpec(TempDirTest):
    def setUp(self):
        super().setUp()
        dpgnn_binary()
        for name, text in BASES.items():
            write(os.path.join(self.tmp, "base", name + ".yaml"), text)

    def plan_bad(self, spec_text):
        spec = write(os.path.join(self.tmp, "bad.yaml"), spec_text)
        code, out = sweep("plan", spec, "--out", os.path.join(self.tmp, "sweep"), cwd=self.tmp, check=False)
        self.assertEqual(code, 2, out)
        self.assertIn(spec, out)  # the message names the file
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "sweep")), "a bad spec must not create the sweep")
        return out

    def plan_good(self, check=False):
        """Plans GOOD_SPEC; the trainer's value checks (0.5 s per task) only where asked for."""
        spec = write(os.path.join(self.tmp, "good.yaml"), GOOD_SPEC)
        code, out = sweep("plan", spec, "--out", os.path.join(self.tmp, "sweep"), *([] if check else ["--no-check"]),
                          cwd=self.tmp)
        if check:
            # drw and dp-mlp: 3 tasks cover the 3 noise multipliers and 2 seeds; gcn: its 2 seeds.
            self.assertIn("; 8 checked with dpgnn train --check", out)
        return os.path.join(self.tmp, "sweep")

    def test_an_unknown_top_level_field_is_an_error_naming_the_field(self):
        out = self.plan_bad(GOOD_SPEC + "gird: {train.seed: [1]}\n")
        self.assertIn("gird: unknown field", out)

    def test_an_unknown_config_key_in_the_grid_is_an_error_naming_the_key(self):
        out = self.plan_bad(GOOD_SPEC.replace("privacy.noise_multiplier:", "privacy.noise_multiplyer:"))
        self.assertIn("grid.privacy.noise_multiplyer: unknown config key", out)

    def test_a_key_without_its_section_is_an_error_that_suggests_the_full_key(self):
        out = self.plan_bad(GOOD_SPEC.replace("privacy.noise_multiplier:", "noise_multiplier:"))
        self.assertIn("grid.noise_multiplier: unknown config key", out)
        self.assertIn("did you mean privacy.noise_multiplier", out)

    def test_an_unknown_key_in_the_fixed_overrides_is_an_error(self):
        out = self.plan_bad(GOOD_SPEC.replace("privacy.target_epsilon:", "privacy.target_eps:"))
        self.assertIn("set.privacy.target_eps: unknown config key", out)

    def test_a_missing_base_config_is_an_error_naming_the_method(self):
        out = self.plan_bad(GOOD_SPEC.replace("base/drw.yaml", "base/nowhere.yaml"))
        self.assertIn("methods.drw.config: base config 'base/nowhere.yaml' does not exist", out)

    def test_a_base_config_with_an_unknown_method_is_an_error(self):
        write(os.path.join(self.tmp, "base", "drw.yaml"), "method: fdp\ndata: {dataset: x.h5}\n")
        out = self.plan_bad(GOOD_SPEC)
        self.assertIn("methods.drw: method 'fdp'", out)

    def test_an_empty_grid_is_an_error(self):
        spec = GOOD_SPEC[:GOOD_SPEC.index("grid:")] + "grid: {}" + GOOD_SPEC[GOOD_SPEC.index("\nset:"):]
        out = self.plan_bad(spec)
        self.assertIn("grid: must be a non-empty mapping", out)

    def test_an_empty_list_of_grid_values_is_an_error(self):
        out = self.plan_bad(GOOD_SPEC.replace("train.seed: [1, 2]", "train.seed: []"))
        self.assertIn("grid.train.seed: must be a non-empty list", out)

    def test_a_spec_without_methods_is_an_error(self):
        spec = GOOD_SPEC[:GOOD_SPEC.index("methods:")] + GOOD_SPEC[GOOD_SPEC.index("grid:"):]
        out = self.plan_bad(spec)
        self.assertIn("methods: must be a non-empty mapping", out)

    def test_a_grid_value_the_trainer_rejects_is_an_error_naming_the_method_and_the_value(self):
        out = self.plan_bad(GOOD_SPEC.replace("[1, 2.5, 4]", "[1, -2.5, 4]"))
        self.assertIn("methods.drw: dpgnn train --check rejects the task with privacy.noise_multiplier=-2.5", out)
        self.assertIn("privacy.noise_multiplier", out.split("rejects")[1].split(":", 1)[1])

    def test_a_grid_value_that_is_a_list_is_an_error(self):
        out = self.plan_bad(GOOD_SPEC.replace("train.seed: [1, 2]", "train.seed: [[1, 2]]"))
        self.assertIn("grid.train.seed: must be a scalar", out)

    def test_plan_writes_one_task_per_method_and_grid_point_and_non_private_methods_skip_the_privacy_keys(self):
        d = self.plan_good(check=True)
        with open(os.path.join(d, "tasks.tsv")) as f:
            rows = [line.rstrip("\n").split("\t") for line in f]
        self.assertEqual(rows[0], ["task", "method", "config", "run_dir", "privacy.noise_multiplier", "train.seed",
                                   "set"])
        body = rows[1:]
        # drw and dp-mlp: 3 noise multipliers x 2 seeds each; gcn: 2 seeds.
        self.assertEqual(len(body), 14)
        self.assertEqual([r[0] for r in body], [str(i) for i in range(14)])
        self.assertEqual([r[1] for r in body], ["drw"] * 6 + ["dp-mlp"] * 6 + ["gcn"] * 2)
        self.assertEqual(sorted({(r[4], r[5]) for r in body if r[1] == "drw"}),
                         [(z, s) for z in ("1", "2.5", "4") for s in ("1", "2")])
        self.assertEqual([(r[4], r[5]) for r in body if r[1] == "gcn"], [("-", "1"), ("-", "2")])
        self.assertEqual(len({r[3] for r in body}), 14, "every task has its own run directory")
        dpmlp = next(r for r in body if r[1] == "dp-mlp" and r[4] == "2.5" and r[5] == "2")
        self.assertEqual(sorted(dpmlp[6].split()), sorted(["privacy.target_epsilon=1000000", "train.lr=0.05",
                                                           "privacy.noise_multiplier=2.5", "train.seed=2"]))
        self.assertNotIn("noise_multiplier", body[-1][6])
        # The base configs are frozen into the sweep directory.
        with open(os.path.join(d, "configs", "dp-mlp.yaml")) as f:
            self.assertEqual(f.read(), BASES["dpmlp"])
        self.assertEqual(dpmlp[2], "configs/dp-mlp.yaml")

    def test_plan_again_is_a_no_op_but_another_plan_is_refused_without_force(self):
        d = self.plan_good()
        sweep("plan", os.path.join(self.tmp, "good.yaml"), "--out", d, "--no-check", cwd=self.tmp)
        other = write(os.path.join(self.tmp, "other.yaml"), GOOD_SPEC.replace("[1, 2]", "[1, 2, 3]"))
        code, out = sweep("plan", other, "--out", d, "--no-check", cwd=self.tmp, check=False)
        self.assertEqual(code, 2, out)
        self.assertIn("holds another plan", out)
        sweep("plan", other, "--out", d, "--force", "--no-check", cwd=self.tmp)
        with open(os.path.join(d, "tasks.tsv")) as f:
            self.assertEqual(len(f.readlines()), 1 + 2 * 9 + 3)
        # The same tasks from a base config that changed since: the frozen copy would no longer
        # match the runs it started, so this is another plan too.
        write(os.path.join(self.tmp, "base", "drw.yaml"), BASES["drw"] + "model: {hidden: 8}\n")
        code, out = sweep("plan", other, "--out", d, "--no-check", cwd=self.tmp, check=False)
        self.assertEqual(code, 2, out)
        self.assertIn("configs/drw.yaml (the base config changed) differs", out)

    def fake_run(self, d, run_dir, summary, max_steps):
        """A finished run as dpgnn train leaves it: the resolved config and the summary."""
        write(os.path.join(d, run_dir, "config.yaml"), "method: x\ntrain:\n  max_steps: %d\n" % max_steps)
        write(os.path.join(d, run_dir, "summary.json"), json.dumps(summary))

    def test_collect_writes_one_row_per_task_with_the_summary_values_and_what_stopped_the_run(self):
        d = self.plan_good()
        with open(os.path.join(d, "tasks.tsv")) as f:
            rows = [line.rstrip("\n").split("\t") for line in f][1:]
        drw_z4_s2 = next(r for r in rows if r[1] == "drw" and r[4] == "4" and r[5] == "2")
        self.fake_run(d, drw_z4_s2[3], {"method": "drw", "seed": 2, "steps": 50, "epsilon": 1.25, "delta": 1e-5,
                                        "noise_multiplier": 4.0, "test_accuracy": 0.625, "val_accuracy": 0.5}, 50)
        dpmlp_z1_s1 = next(r for r in rows if r[1] == "dp-mlp" and r[4] == "1" and r[5] == "1")
        self.fake_run(d, dpmlp_z1_s1[3], {"method": "dp-mlp", "seed": 1, "steps": 17, "epsilon": 7.5,
                                          "delta": 1e-5, "noise_multiplier": 1.0, "test_accuracy": 0.25}, 50)
        gcn_s1 = next(r for r in rows if r[1] == "gcn" and r[5] == "1")
        self.fake_run(d, gcn_s1[3], {"method": "gcn", "seed": 1, "steps": 50, "epsilon": None,
                                     "test_accuracy": 0.75}, 50)
        # Its evaluations during training; a resume evaluated step 50 again, and a kill cut a line.
        write(os.path.join(d, drw_z4_s2[3], "metrics.jsonl"), "\n".join([
            '{"step": 1, "loss": 1.5, "epsilon": 0.1}',
            '{"step": 25, "epsilon": 0.7, "val_accuracy": 0.3, "test_accuracy": 0.4}',
            '{"step": 50, "epsilon": 1.25, "val_accuracy": 0.5, "test_accuracy": 0.6}',
            '{"step": 50, "epsilon": 1.25, "val_accuracy": 0.5, "test_accuracy": 0.625}',
            '{"step": 51, "eps']) + "\n")
        code, out = sweep("collect", d)
        self.assertIn("1 run(s) stopped before train.max_steps", out)
        with open(os.path.join(d, "evaluations.csv"), newline="") as f:
            evals = list(csv.DictReader(f))
        self.assertEqual([(e["task"], e["step"], float(e["epsilon"]), float(e["test_accuracy"])) for e in evals],
                         [(drw_z4_s2[0], "25", 0.7, 0.4), (drw_z4_s2[0], "50", 1.25, 0.625)])
        self.assertEqual((evals[0]["method"], evals[0]["privacy.noise_multiplier"], evals[0]["train.seed"]),
                         ("drw", "4", "2"))
        with open(os.path.join(d, "results.csv"), newline="") as f:
            table = list(csv.DictReader(f))
        self.assertEqual(len(table), 14)
        by_dir = {r["run_dir"]: r for r in table}
        r = by_dir[drw_z4_s2[3]]
        self.assertEqual((r["method"], r["privacy.noise_multiplier"], r["train.seed"], r["seed"], r["status"]),
                         ("drw", "4", "2", "2", "done"))
        self.assertEqual((float(r["epsilon"]), float(r["test_accuracy"]), float(r["val_accuracy"]), r["steps"]),
                         (1.25, 0.625, 0.5, "50"))
        self.assertEqual((r["max_steps"], r["stopped_by"]), ("50", "max_steps"))
        self.assertEqual(by_dir[dpmlp_z1_s1[3]]["stopped_by"], "target_epsilon")
        self.assertEqual((by_dir[gcn_s1[3]]["epsilon"], by_dir[gcn_s1[3]]["stopped_by"]), ("", "max_steps"))
        self.assertEqual(sum(r["status"] == "pending" for r in table), 11)

        # The figure: a PNG (signature, IHDR) from the three finished runs.
        sweep("plot", d, "--dpi", "50")
        with open(os.path.join(d, "accuracy_vs_epsilon.png"), "rb") as f:
            png = f.read()
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(png[12:16], b"IHDR")
        self.assertEqual(struct.unpack(">II", png[16:24]), (320, 220))  # 6.4 x 4.4 inches at 50 dpi
        sweep("plot", d, "--checkpoints", "--dpi", "50")
        with open(os.path.join(d, "accuracy_vs_epsilon_checkpoints.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_slurm_prints_an_array_over_the_unfinished_tasks_with_the_ranks_as_tasks(self):
        d = self.plan_good()
        with open(os.path.join(d, "tasks.tsv")) as f:
            rows = [line.rstrip("\n").split("\t") for line in f][1:]
        for i in (0, 2, 13):
            self.fake_run(d, rows[i][3], {"steps": 50, "epsilon": 1.0, "test_accuracy": 0.5}, 50)
        code, out = sweep("slurm", d, "--max-parallel", "3", "--", "-p", "gpu")
        self.assertIn("sbatch --array=1,3-12%3 --ntasks=2 ", out)
        self.assertIn("-p gpu ", out)
        self.assertTrue(out.rstrip().endswith("cluster/sweep-array.sbatch " + d), out)

    def test_dpgnn_sweep_runs_the_tool_and_makes_it_train_with_the_same_binary(self):
        env = test_env()
        dpgnn = env.pop("DPGNN_BIN")
        spec = write(os.path.join(self.tmp, "good.yaml"), GOOD_SPEC)
        d = os.path.join(self.tmp, "sweep")
        code, out = run([dpgnn, "sweep", "plan", spec, "--out", d, "--no-check"], cwd=self.tmp, env=env)
        self.assertIn("planned 14 tasks", out)
        with open(os.path.join(d, "sweep.json")) as f:
            self.assertEqual(json.load(f)["dpgnn"], os.path.realpath(dpgnn))
        code, out = run([dpgnn, "sweep", "--help"], env=env)
        self.assertIn("usage: dpgnn sweep", out)
        code, out = run([dpgnn, "sweep", "frobnicate"], env=env, check=False)
        self.assertEqual(code, 2, out)

    def test_every_shipped_sweep_spec_plans_with_its_values_checked_by_the_trainer(self):
        folder = os.path.join(SOURCE_DIR, "configs", "sweeps")
        specs = []
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name)) as f:
                if name.endswith(".yaml") and any(line.startswith("methods:") for line in f):
                    specs.append(name)
        self.assertIn("cora-figure2.yaml", specs)
        for name in specs:
            # The trainer checks the values of the spec whose base configs are ours (configs/sweeps/);
            # tests/configs checks the catalogue's configs the other specs use.
            d = os.path.join(self.tmp, name)
            check = name == "cora-figure2.yaml"
            code, out = sweep("plan", os.path.join("configs", "sweeps", name), "--out", d,
                              *([] if check else ["--no-check"]), cwd=SOURCE_DIR)
            self.assertRegex(out, r"planned \d+ tasks .*; %s checked" % (r"[1-9]\d*" if check else "0"))


if __name__ == "__main__":
    main()
