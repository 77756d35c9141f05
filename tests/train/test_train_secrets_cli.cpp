// `dpgnn train` end to end under mpiexec -n 2, issue 13: batches and noise come from
// secrets, not from the public train.seed; a pinned privacy.noise_seed reproduces a run bit
// for bit and makes it private: false; a resume that cannot replay the ledger's steps
// exactly is refused and leaves the run directory as it was; secret files are 0600 while
// the run lives and gone when it ends; the training loss is not released by default.
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dpgnn/train/ledger.h"
#include "trainer_fixture.h"

namespace dpgnn::train {
namespace {

using dpgnn::testing::CommandResult;
using dpgnn::testing::run_command;
namespace fs = std::filesystem;

std::string mpiexec(int n) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "
         "DPGNN_PROGRESS=0 mpiexec -n " +
         std::to_string(n) + " --oversubscribe " + DPGNN_BINARY + " ";
}

// SGD with a tiny noise multiplier: the runs differ only through the batches (and noise).
std::string write_config(const dpgnn::testing::TempDir& tmp, const std::string& name, const std::string& privacy) {
  const auto& d = testing::TrainerData::get();
  const std::string path = tmp.file(name);
  std::ofstream(path) << "method: drw\n"
                      << "data: {dataset: " << d.dataset << ", partition: " << d.partition << "}\n"
                      << "model: {hidden: 16}\n"
                      << "train: {optimizer: sgd, lr: 0.5, batch_size: 8, max_steps: 30, seed: 4, eval_every: 0, "
                         "checkpoint_every: 10, threads: 1}\n"
                      << "privacy: {noise_multiplier: 0.001, delta: 1.0e-5, target_epsilon: 1.0e9" << privacy << "}\n";
  return path;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult train(const std::string& cfg, const std::string& out, const std::string& extra = "") {
  return run_command(mpiexec(2) + "train --config " + cfg + " --out " + out + extra);
}

TEST(TrainSecrets, UnpinnedRunsOfOneConfigDrawDifferentBatchesPinnedRunsAreBitIdentical) {
  dpgnn::testing::TempDir tmp;
  const std::string open_cfg = write_config(tmp, "open.yaml", "");
  const std::string pinned_cfg = write_config(tmp, "pinned.yaml", ", noise_seed: 11");
  std::vector<std::vector<float>> params;
  std::vector<std::string> names;
  for (const auto& [cfg, out] : std::vector<std::pair<std::string, std::string>>{
           {open_cfg, "a"}, {open_cfg, "b"}, {pinned_cfg, "p1"}, {pinned_cfg, "p2"}}) {
    const CommandResult r = train(cfg, tmp.file(out));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    if (names.empty()) names = testing::model_parameter_names(tmp.file(out) + "/model.h5");
    params.push_back(testing::read_model(tmp.file(out) + "/model.h5", names));
    const auto s = testing::read_json(tmp.file(out) + "/summary.json");
    const bool pinned = out[0] == 'p';
    EXPECT_EQ(s.at("private").get<bool>(), !pinned) << out;
    EXPECT_NE(r.output.find(pinned ? "private: false" : "private: true"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(tmp.file(out) + "/noise_secret")) << "secrets are removed when the run ends";
    EXPECT_FALSE(fs::exists(tmp.file(out) + "/batch_secret"));
    // The loss over private labels is not released by default.
    std::ifstream metrics(tmp.file(out) + "/metrics.jsonl");
    std::vector<std::string> lines;
    for (std::string line; std::getline(metrics, line);) {
      EXPECT_EQ(line.find("\"loss\""), std::string::npos) << line;
      lines.push_back(line);
    }
    // metrics.csv: the same lines as a table, the loss column empty.
    std::ifstream csv(tmp.file(out) + "/metrics.csv");
    std::string header;
    ASSERT_TRUE(std::getline(csv, header));
    EXPECT_EQ(header, "step,epsilon,steps_per_second,loss,val_accuracy,test_accuracy");
    std::size_t rows = 0;
    for (std::string row; std::getline(csv, row); ++rows) {
      ASSERT_LT(rows, lines.size());
      const auto j = nlohmann::json::parse(lines[rows]);
      EXPECT_EQ(row.substr(0, row.find(',')), j.at("step").dump()) << row;
      EXPECT_NE(row.find(",,"), std::string::npos) << "the loss column is empty: " << row;
    }
    EXPECT_EQ(rows, lines.size());
    EXPECT_FALSE(s.at("train_loss_released").get<bool>());
  }
  double max_abs = 0, sq = 0;
  for (std::size_t i = 0; i < params[0].size(); ++i) {
    const double d = std::abs(double(params[0][i]) - params[1][i]);
    max_abs = std::max(max_abs, d);
    sq += d * d;
  }
  EXPECT_GT(max_abs, 0.05) << "two unpinned runs ended within " << max_abs << ": the batches follow train.seed";
  EXPECT_GT(std::sqrt(sq), 0.05);
  EXPECT_EQ(params[2], params[3]) << "a pinned noise_seed must reproduce the run bit for bit";
  EXPECT_EQ(bytes_of(tmp.file("p1") + "/ledger.jsonl"), bytes_of(tmp.file("p2") + "/ledger.jsonl"));
}

TEST(TrainSecrets, SecretFilesAreMode0600WhileTheRunLives) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = write_config(tmp, "c.yaml", "");
  const std::string out = tmp.file("cut");
  const CommandResult crash = run_command("DPGNN_FAULT_EXIT_AFTER_STEP=17 " + mpiexec(2) + "train --config " + cfg +
                                          " --out " + out);
  EXPECT_NE(crash.exit_code, 0) << crash.output;
  for (const char* name : {"noise_secret", "batch_secret"}) {
    struct stat st {};
    ASSERT_EQ(::stat((out + "/" + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << name;
  }
  const std::string config_text = bytes_of(cfg);
  EXPECT_EQ(config_text.find("secret"), std::string::npos);
  // With its secrets the crashed run resumes and replays steps 10..17 exactly.
  const CommandResult resumed = train(cfg, out, " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(sgd_steps(read_ledger(out + "/ledger.jsonl")), 30);
  EXPECT_FALSE(fs::exists(out + "/noise_secret"));
}

TEST(TrainSecrets, AResumeThatCannotReplayTheLedgerIsRefusedAndChangesNothing) {
  // Killed after recording step 17 (last checkpoint: step 10), then a file lost: without its
  // secrets (and, here, its checkpoint) steps 10..17 (0..17) cannot be replayed; without its
  // ledger the spent budget is unknown. Both refused, nothing in the directory changed.
  dpgnn::testing::TempDir tmp;
  const std::string cfg = write_config(tmp, "c.yaml", "");
  for (const std::string removed : {"checkpoint.h5", "ledger.jsonl"}) {
    const std::string out = tmp.file("run-" + removed);
    ASSERT_NE(run_command("DPGNN_FAULT_EXIT_AFTER_STEP=17 " + mpiexec(2) + "train --config " + cfg + " --out " + out)
                  .exit_code,
              0);
    fs::remove(out + "/" + removed);
    fs::remove(out + "/noise_secret");
    fs::remove(out + "/batch_secret");
    const std::string ledger = fs::exists(out + "/ledger.jsonl") ? bytes_of(out + "/ledger.jsonl") : "",
                      metrics = bytes_of(out + "/metrics.jsonl");
    const CommandResult r = train(cfg, out, " --resume");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("refusing to resume"), std::string::npos) << r.output;
    if (!ledger.empty()) {
      EXPECT_EQ(bytes_of(out + "/ledger.jsonl"), ledger) << removed;
    }
    EXPECT_EQ(bytes_of(out + "/metrics.jsonl"), metrics) << removed;
    EXPECT_FALSE(fs::exists(out + "/" + removed)) << "nothing recreated";
    EXPECT_FALSE(fs::exists(out + "/noise_secret")) << "no fresh secrets written";
  }
}

TEST(TrainSecrets, LoggingTheTrainingLossIsOptInAndMakesTheRunNotPrivate) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = write_config(tmp, "c.yaml", "");
  const std::string out = tmp.file("loss");
  const CommandResult r =
      run_command(mpiexec(1) + "train --config " + cfg + " --out " + out + " --set train.log_train_loss=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto s = testing::read_json(out + "/summary.json");
  EXPECT_FALSE(s.at("private").get<bool>());
  EXPECT_TRUE(s.at("train_loss_released").get<bool>());
  std::ifstream metrics(out + "/metrics.jsonl");
  std::string first;
  std::getline(metrics, first);
  EXPECT_NE(first.find("\"loss\""), std::string::npos) << first;
}

}  // namespace
}  // namespace dpgnn::train
