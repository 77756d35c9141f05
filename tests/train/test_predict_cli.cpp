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

// The last line of the output that parses as a JSON object.
nlohmann::json last_json(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  nlohmann::json j;
  while (std::getline(in, line))
    if (!line.empty() && line[0] == '{') j = nlohmann::json::parse(line, nullptr, false);
  return j;
}

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

}  // namespace
}  // namespace dpgnn::train
