// `dpgnn predict` on a finished 2-rank run: the test accuracy of summary.json reproduced
// exactly on 1 and 2 ranks (Cora from ../shared/data when present, else the synthetic
// 4-part fixture), the predictions file's layout, and a missing run refused.
#include <filesystem>
#include <fstream>

#include "dpgnn/util/hdf5.h"
#include "trainer_fixture.h"

namespace dpgnn::train {
namespace {

using dpgnn::testing::CommandResult;
using dpgnn::testing::run_command;

std::string mpiexec(int n) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "
         "DPGNN_PROGRESS=0 mpiexec -n " +
         std::to_string(n) + " --oversubscribe " + DPGNN_BINARY + " ";
}

using testing::last_json;

TEST(PredictCli, ReproducesTheRunsTestAccuracyExactlyOn1And2Ranks) {
  dpgnn::testing::TempDir tmp;
  std::string dataset, partition;
  const std::string planetoid = dpgnn::testing::shared_dir() + "/data/cora/planetoid";
  if (std::filesystem::exists(planetoid)) {
    dataset = tmp.file("cora.h5");
    partition = tmp.file("cora.p2.h5");
    CommandResult r = dpgnn::testing::run_dpgnn("import planetoid --dir " + planetoid + " --name cora --out " + dataset);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = dpgnn::testing::run_dpgnn("partition --dataset " + dataset + " --parts 2 --seed 1 --out " + partition);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  } else {
    dataset = testing::TrainerData::get().dataset;
    partition = testing::TrainerData::get().partition;
  }
  const std::string run = tmp.file("run");
  const std::string train = mpiexec(2) + "train --config " + std::string(DPGNN_SOURCE_DIR) +
                            "/configs/cora-drw.yaml --set data.dataset=" + dataset + " --set data.partition=" +
                            partition + " --set train.max_steps=30 --set train.eval_every=0 --out " + run;
  const CommandResult t = run_command(train);
  ASSERT_EQ(t.exit_code, 0) << t.output;
  const nlohmann::json summary = testing::read_json(run + "/summary.json");
  for (int ranks : {1, 2}) {
    const std::string out = tmp.file("pred" + std::to_string(ranks) + ".h5");
    const CommandResult p = run_command(mpiexec(ranks) + "predict --run " + run + " --json --out " + out);
    ASSERT_EQ(p.exit_code, 0) << p.output;
    const nlohmann::json j = last_json(p.output);
    ASSERT_TRUE(j.is_object()) << p.output;
    EXPECT_EQ(j["test_accuracy"].get<double>(), summary["test_accuracy"].get<double>()) << ranks << " ranks";
    EXPECT_EQ(j["val_accuracy"].get<double>(), summary["val_accuracy"].get<double>()) << ranks << " ranks";
    // One row per node; node_id maps the rows (partition order) to dataset ids, a permutation.
    auto f = h5::File::open_read(out);
    const auto ids = f.open_dataset("/node_id").read_all<std::int64_t>();
    const auto pred = f.open_dataset("/prediction").read_all<std::int64_t>();
    const auto logits_shape = f.open_dataset("/logits").shape();
    const auto n = static_cast<std::size_t>(j["nodes"].get<std::int64_t>());
    ASSERT_EQ(ids.size(), n);
    ASSERT_EQ(pred.size(), n);
    ASSERT_EQ(logits_shape.size(), 2u);
    EXPECT_EQ(logits_shape[0], n);
    std::vector<std::uint8_t> seen(n, 0);
    for (auto id : ids) {
      ASSERT_TRUE(id >= 0 && static_cast<std::size_t>(id) < n);
      EXPECT_EQ(seen[static_cast<std::size_t>(id)]++, 0);
    }
  }
  // An existing --out is refused without --force; a directory without a model is refused.
  const CommandResult again = run_command(mpiexec(1) + "predict --run " + run + " --out " + tmp.file("pred1.h5"));
  EXPECT_EQ(again.exit_code, 2) << again.output;
  const CommandResult none = run_command(mpiexec(1) + "predict --run " + tmp.file("nothing"));
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("does not exist"), std::string::npos) << none.output;
}

// The non-private GCN keeps the model of its evaluation with the best validation accuracy
// (train.model_selection: best_val, its default): summary.json names that step and holds that
// evaluation's metrics, and predict on model.h5 reproduces them (the saved model is that one).
// With model_selection last the run keeps its last model, as before.
TEST(PredictCli, AGcnRunKeepsTheModelOfItsBestValidationEvaluation) {
  dpgnn::testing::TempDir tmp;
  const auto& d = testing::TrainerData::get();
  const std::string cfg = tmp.file("gcn.yaml");
  std::ofstream(cfg) << "method: gcn\ndata: {dataset: " << d.dataset << ", partition: " << d.partition
                     << "}\nmodel: {hidden: 16}\ntrain: {max_steps: 40, eval_every: 5, seed: 3, lr: 0.05, "
                        "threads: 1}\n";
  for (const std::string selection : {"best_val", "last"}) {
    const std::string run = tmp.file("run-" + selection);
    const CommandResult t = run_command(mpiexec(2) + "train --config " + cfg + " --set train.model_selection=" +
                                        selection + " --out " + run);
    ASSERT_EQ(t.exit_code, 0) << t.output;
    const nlohmann::json summary = testing::read_json(run + "/summary.json");
    // The evaluations, in order (the last step's is logged twice: in the loop and at the end).
    std::vector<nlohmann::json> evals;
    std::ifstream metrics(run + "/metrics.jsonl");
    for (std::string line; std::getline(metrics, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j.contains("val_accuracy")) evals.push_back(j);
    }
    ASSERT_GE(evals.size(), 8u) << selection;
    if (selection == "best_val") {
      std::size_t best = 0;  // the first evaluation with the highest validation accuracy
      for (std::size_t i = 1; i < evals.size(); ++i)
        if (evals[i]["val_accuracy"].get<double>() > evals[best]["val_accuracy"].get<double>()) best = i;
      ASSERT_TRUE(summary.contains("selected_step")) << summary.dump();
      EXPECT_EQ(summary["selected_step"].get<std::int64_t>(), evals[best]["step"].get<std::int64_t>());
      EXPECT_EQ(summary["val_accuracy"].get<double>(), evals[best]["val_accuracy"].get<double>());
      EXPECT_EQ(summary["test_accuracy"].get<double>(), evals[best]["test_accuracy"].get<double>());
      EXPECT_NE(t.output.find("model selection: keeping the model of step"), std::string::npos) << t.output;
    } else {
      EXPECT_FALSE(summary.contains("selected_step")) << summary.dump();
      EXPECT_EQ(summary["val_accuracy"].get<double>(), evals.back()["val_accuracy"].get<double>());
    }
    const CommandResult p = run_command(mpiexec(2) + "predict --run " + run + " --json");
    ASSERT_EQ(p.exit_code, 0) << p.output;
    const nlohmann::json j = last_json(p.output);
    ASSERT_TRUE(j.is_object()) << p.output;
    EXPECT_EQ(j["test_accuracy"].get<double>(), summary["test_accuracy"].get<double>()) << selection;
    EXPECT_EQ(j["val_accuracy"].get<double>(), summary["val_accuracy"].get<double>()) << selection;
  }
}

// A run started with relative data paths records them resolved, so that predict, privacy
// --ledger and train --resume work from another directory.
TEST(PredictCli, ARunWorksFromAnotherDirectory) {
  dpgnn::testing::TempDir tmp;
  const auto& d = testing::TrainerData::get();
  std::filesystem::create_directories(tmp.file("a/data"));
  std::filesystem::create_directories(tmp.file("b"));
  std::filesystem::create_symlink(d.dataset, tmp.file("a/data/d.h5"));
  std::filesystem::create_symlink(d.partition, tmp.file("a/data/p.h5"));
  std::ofstream(tmp.file("a/c.yaml")) << "method: drw\ndata: {dataset: data/d.h5, partition: data/p.h5}\n"
                                      << "model: {hidden: 16}\ntrain: {batch_size: 16, max_steps: 5, threads: 1}\n"
                                      << "privacy: {noise_multiplier: 2.0, delta: 1.0e-5}\n";
  const CommandResult t = run_command("cd " + tmp.file("a") + " && " + mpiexec(2) + "train --config c.yaml --out run");
  ASSERT_EQ(t.exit_code, 0) << t.output;
  std::ifstream cfg(tmp.file("a/run/config.yaml"));
  const std::string text((std::istreambuf_iterator<char>(cfg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("dataset: " + std::filesystem::path(tmp.file("a/data/d.h5")).lexically_normal().string()),
            std::string::npos)
      << text;
  const std::string from_b = "cd " + tmp.file("b") + " && ";
  const CommandResult p = run_command(from_b + mpiexec(1) + "predict --run ../a/run --out p.h5");
  EXPECT_EQ(p.exit_code, 0) << p.output;
  const CommandResult l = run_command(from_b + DPGNN_BINARY + " privacy --ledger ../a/run/ledger.jsonl");
  EXPECT_EQ(l.exit_code, 0) << l.output;
  const CommandResult r = run_command(from_b + mpiexec(2) + "train --resume --out ../a/run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace dpgnn::train
