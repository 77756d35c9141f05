// `dpgnn train` end to end under mpiexec: the same model and epsilon on 1, 2 and 4 ranks
// from one 4-part partition, a run killed mid-way and resumed ending like an
// uninterrupted one, malformed configs failing before any rank works, with one message, and
// (with a GPU) device: cuda over NCCL ending where the CPU run ends.
#include <cmath>
#include <fstream>
#include <regex>

#include "dpgnn/dist/device.h"
#include "dpgnn/train/ledger.h"
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

std::string write_config(const dpgnn::testing::TempDir& tmp, const std::string& name, const std::string& extra) {
  const auto& d = testing::TrainerData::get();
  const std::string path = tmp.file(name);
  std::ofstream(path) << "method: drw\n"
                      << "data: {dataset: " << d.dataset << ", partition: " << d.partition << "}\n"
                      << "model: {hidden: 16}\n"
                      << "train: {batch_size: 16, max_steps: 30, seed: 4, eval_every: 10, checkpoint_every: 10, "
                         "threads: 1}\n"
                      << "privacy: {noise_multiplier: 2.0, noise_seed: 7, delta: 1.0e-5}\n"
                      << extra;
  return path;
}

double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::abs(double(a[i]) - b[i]) / std::max(1e-3, std::abs(double(a[i]))));
  return m;
}

TEST(TrainCli, OnePartitionFileGivesTheSameModelAndEpsilonOn1_2And4MpiRanks) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = write_config(tmp, "c.yaml", "");
  std::vector<std::vector<float>> params;
  std::vector<double> eps;
  std::vector<std::string> names;
  for (int n : {1, 2, 4}) {
    const std::string out = tmp.file("run" + std::to_string(n));
    const CommandResult r = run_command(mpiexec(n) + "train --config " + cfg + " --out " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    if (names.empty()) names = testing::model_parameter_names(out + "/model.h5");
    params.push_back(testing::read_model(out + "/model.h5", names));
    const auto s = testing::read_json(out + "/summary.json");
    EXPECT_EQ(s.at("ranks").get<int>(), n);
    EXPECT_EQ(s.at("steps").get<int>(), 30);
    eps.push_back(s.at("epsilon").get<double>());
  }
  EXPECT_LT(max_relative_difference(params[0], params[1]), 1e-4);
  EXPECT_LT(max_relative_difference(params[0], params[2]), 1e-4);
  EXPECT_EQ(eps[0], eps[1]);
  EXPECT_EQ(eps[0], eps[2]);
}

// device: cuda trains on the GPU with the gradient all-reduce and halo rows over NCCL, and
// ends where the CPU run ends (the noise is drawn on the host from the same pinned seed), both
// with the shard's features kept on the GPU (the default) and gathered on the host into pinned
// buffers (train.features_on_device: never).
TEST(TrainCli, OnAGpuTheRunUsesNcclAndMatchesTheCpuRun) {
  if (!dist::built_with_nccl()) GTEST_SKIP() << "needs a build with CUDA and NCCL (DPGNN_WITH_NCCL=ON)";
  const std::string no_gpu = dist::cuda_unavailable_reason();
  if (!no_gpu.empty()) GTEST_SKIP() << "needs a CUDA GPU: " << no_gpu;
  dpgnn::testing::TempDir tmp;
  std::vector<std::vector<float>> params;
  std::vector<nlohmann::json> summaries;
  std::vector<std::string> names;
  const std::vector<std::pair<std::string, std::string>> runs{
      {"cpu", "feature rows gathered on the host"},
      {"cuda", "feature rows gathered on cuda:0 from the shard's features kept there"},
      {"cuda-pinned", "feature rows gathered on the host into pinned buffers"}};
  for (const auto& [name, gather] : runs) {
    const std::string device = name == "cpu" ? "cpu" : "cuda";
    const std::string cfg = write_config(tmp, name + ".yaml", "device: " + device + "\n");
    const std::string out = tmp.file("run-" + name);
    const std::string pinned = name == "cuda-pinned" ? " --set train.features_on_device=never" : "";
    const CommandResult r = run_command(mpiexec(1) + "train --config " + cfg + pinned + " --out " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(device == "cpu" ? "device cpu: gradients all-reduced over mpi"
                                            : "device cuda:0: gradients all-reduced over nccl"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find(gather), std::string::npos) << name << ": " << r.output;
    if (names.empty()) names = testing::model_parameter_names(out + "/model.h5");
    params.push_back(testing::read_model(out + "/model.h5", names));
    summaries.push_back(testing::read_json(out + "/summary.json"));
  }
  for (std::size_t gpu : {1, 2}) {
    EXPECT_EQ(summaries[0].at("steps"), summaries[gpu].at("steps")) << runs[gpu].first;
    EXPECT_EQ(summaries[0].at("epsilon").get<double>(), summaries[gpu].at("epsilon").get<double>()) << runs[gpu].first;
    // Float sums in another order on the GPU: close, not identical.
    EXPECT_LT(max_relative_difference(params[0], params[gpu]), 1e-2) << runs[gpu].first;
    EXPECT_NEAR(summaries[0].at("test_accuracy").get<double>(), summaries[gpu].at("test_accuracy").get<double>(), 0.05)
        << runs[gpu].first;
  }
}

// DPGNN_GPU_COLLECTIVES picks how a GPU run's buffers travel (nccl, or mpi through host
// memory: bench/gpu-check.sh runs 2 ranks on one GPU so). Any other value stops every rank
// before it works, with one message; on the CPU, mpi changes nothing.
TEST(TrainCli, GpuCollectivesVariableIsNcclOrMpi) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = write_config(tmp, "c.yaml", "");
  const CommandResult bad =
      run_command("DPGNN_GPU_COLLECTIVES=gloo " + mpiexec(2) + "train --config " + cfg + " --out " + tmp.file("bad"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  const std::regex error_line("\\berror\\b.*DPGNN_GPU_COLLECTIVES must be nccl or mpi, got 'gloo'");
  EXPECT_EQ(std::distance(std::sregex_iterator(bad.output.begin(), bad.output.end(), error_line), std::sregex_iterator()), 1)
      << bad.output;
  EXPECT_FALSE(std::filesystem::exists(tmp.file("bad"))) << "no rank may have started work";
  const CommandResult ok = run_command("DPGNN_GPU_COLLECTIVES=mpi " + mpiexec(2) + "train --config " + cfg +
                                       " --set train.max_steps=3 --out " + tmp.file("ok"));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("gradients all-reduced over mpi"), std::string::npos) << ok.output;
}

TEST(TrainCli, ARunKilledMidwayAndResumedEndsLikeAnUninterruptedOne) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = write_config(tmp, "c.yaml", "");
  const std::string full = tmp.file("full"), cut = tmp.file("cut");
  ASSERT_EQ(run_command(mpiexec(2) + "train --config " + cfg + " --out " + full).exit_code, 0);

  // Rank 0 dies right after recording step 17 in the ledger (last checkpoint: step 10).
  const CommandResult crash =
      run_command("DPGNN_FAULT_EXIT_AFTER_STEP=17 " + mpiexec(2) + "train --config " + cfg + " --out " + cut);
  EXPECT_NE(crash.exit_code, 0) << crash.output;
  EXPECT_EQ(sgd_steps(read_ledger(cut + "/ledger.jsonl")), 18) << "steps 0..17 were taken (17 not yet applied)";
  EXPECT_FALSE(std::filesystem::exists(cut + "/summary.json"));

  // A different config is refused.
  const std::string other = write_config(tmp, "other.yaml", "sampler: {walk_length: 3}\n");
  const CommandResult refused = run_command(mpiexec(2) + "train --config " + other + " --out " + cut + " --resume");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("different config"), std::string::npos) << refused.output;

  const CommandResult resumed = run_command(mpiexec(2) + "train --config " + cfg + " --out " + cut + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const auto a = testing::read_json(full + "/summary.json"), b = testing::read_json(cut + "/summary.json");
  EXPECT_EQ(b.at("steps"), a.at("steps"));
  EXPECT_EQ(b.at("epsilon").get<double>(), a.at("epsilon").get<double>());
  EXPECT_EQ(sgd_steps(read_ledger(cut + "/ledger.jsonl")), a.at("steps").get<std::int64_t>());
  const auto names = testing::model_parameter_names(full + "/model.h5");
  EXPECT_LT(max_relative_difference(testing::read_model(full + "/model.h5", names),
                                    testing::read_model(cut + "/model.h5", names)),
            1e-4);
}

TEST(TrainCli, MalformedConfigsFailBeforeAnyRankWorksWithOneMessage) {
  dpgnn::testing::TempDir tmp;
  struct Case {
    std::string extra, fragment;
  };
  const std::vector<Case> cases = {
      {"model: {depth: 2}\n", "model.depth"},                        // unknown key (merged into a second map)
      {"privacy: {target_epsilon: 0}\n", "privacy.target_epsilon"},  // epsilon <= 0
      {"train: {lr: fast}\n", "train.lr"},                           // wrong type
  };
  for (const auto& c : cases) {
    // Later keys of the same section replace the earlier map in YAML; keep the dataset.
    const std::string cfg = write_config(tmp, "bad.yaml", c.extra);
    const CommandResult r = run_command(mpiexec(2) + "train --config " + cfg + " --out " + tmp.file("o"));
    EXPECT_FALSE(r.signaled) << r.output;
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(c.fragment), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(tmp.file("o"))) << "no rank may have started work";
  }
  {
    const std::string cfg = write_config(tmp, "big.yaml", "");
    const CommandResult r =
        run_command(mpiexec(2) + "train --config " + cfg + " --set train.batch_size=100000 --out " + tmp.file("o2"));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    const std::regex error_line("\\berror\\b.*train\\.batch_size");
    std::ptrdiff_t count = std::distance(std::sregex_iterator(r.output.begin(), r.output.end(), error_line),
                                         std::sregex_iterator());
    EXPECT_EQ(count, 1) << "one message, not one per rank:\n" << r.output;
  }
  {
    const std::string path = tmp.file("missing.yaml");
    std::ofstream(path) << "data: {dataset: /no/such/file.h5}\n";
    const CommandResult r = run_command(mpiexec(2) + "train --config " + path + " --out " + tmp.file("o3"));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("data.dataset"), std::string::npos) << r.output;
  }
  {
    // A data file every rank finds malformed: one message, its exit code (3), no MPI_Abort.
    std::ofstream(tmp.file("junk.h5")) << "not an HDF5 file\n";
    std::ofstream(tmp.file("junk.yaml")) << "method: drw\ndata: {dataset: " << tmp.file("junk.h5") << "}\n";
    const CommandResult r = run_command(mpiexec(2) + "train --config " + tmp.file("junk.yaml") + " --out " + tmp.file("o5"));
    EXPECT_EQ(r.exit_code, 3) << r.output;
    const std::regex error_line("\\berror\\b.*junk\\.h5");
    EXPECT_EQ(std::distance(std::sregex_iterator(r.output.begin(), r.output.end(), error_line), std::sregex_iterator()), 1)
        << r.output;
    EXPECT_EQ(r.output.find("MPI_ABORT"), std::string::npos) << r.output;
  }
  {
    // Two ranks and no partition: the message says that the partition is missing and how to make one.
    const std::string cfg = write_config(tmp, "nopart.yaml", "");
    const CommandResult r = run_command(mpiexec(2) + "train --config " + cfg +
                                        " --set data.partition= --out " + tmp.file("o4"));
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("'data.partition' is not set"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("dpgnn partition --dataset"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace dpgnn::train
