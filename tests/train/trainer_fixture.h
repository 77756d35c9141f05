// A small synthetic dataset with a 4-part partition, made with the dpgnn binary once per
// test binary, and helpers to run the trainer in-process on 1..4 ranks (LocalGroup).
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/local_group.h"
#include "dpgnn/train/config.h"
#include "dpgnn/train/trainer.h"
#include "dpgnn/util/hdf5.h"
#include "model_file.h"
#include "test_support.h"

namespace dpgnn::train::testing {

class TrainerData {
 public:
  static const TrainerData& get() {
    static TrainerData d;
    return d;
  }
  std::string dataset, partition;

 private:
  TrainerData() {
    dataset = dir_.file("d.h5");
    partition = dir_.file("p4.h5");
    auto r = dpgnn::testing::run_dpgnn("synth --nodes 800 --avg-degree 8 --classes 3 --features 16 --homophily 0.8 "
                                       "--seed 3 --out " + dataset);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    r = dpgnn::testing::run_dpgnn("partition --dataset " + dataset + " --parts 4 --seed 1 --out " + partition);
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  dpgnn::testing::TempDir dir_;
};

inline Config base_config(const std::vector<std::string>& overrides) {
  const auto& d = TrainerData::get();
  std::vector<std::string> all = {"data.dataset=" + d.dataset, "data.partition=" + d.partition,
                                  "model.hidden=32", "train.batch_size=16", "train.max_steps=12",
                                  "train.eval_every=0", "train.checkpoint_every=0", "train.seed=5",
                                  "train.threads=1", "privacy.noise_seed=99"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return parse_config("", "test.yaml", all);
}

// Runs the trainer on `ranks` in-process ranks; returns rank 0's summary.
inline TrainSummary train_in_process(const Config& cfg, const std::string& out, int ranks) {
  dist::LocalGroup group(ranks);
  std::vector<TrainSummary> results(ranks);
  TrainOptions opt;
  opt.out_dir = out;
  opt.progress = false;
  opt.local_ranks = ranks;
  group.run([&](dist::Communicator& comm) {
    results[comm.rank()] = run_training(cfg, opt, dist::Collectives::over(comm));
  });
  return results[0];
}

using dpgnn::testing::model_parameter_names;  // tests/model_file.h
using dpgnn::testing::read_model;

// The fixture's dataset with a structure-independent partition into `parts` (node-level
// methods refuse METIS, DESIGN.md 5), made once per part count and test binary.
inline const std::string& random_partition(int parts) {
  static dpgnn::testing::TempDir dir;
  static std::map<int, std::string> made;
  auto it = made.find(parts);
  if (it != made.end()) return it->second;
  const std::string p = dir.file("random" + std::to_string(parts) + ".h5");
  const auto r = dpgnn::testing::run_dpgnn("partition --dataset " + TrainerData::get().dataset + " --parts " +
                                           std::to_string(parts) + " --method random --seed 1 --out " + p);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return made.emplace(parts, p).first->second;
}

// The last line of a command's output that parses as a JSON object (`--json` output).
inline nlohmann::json last_json(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  nlohmann::json j;
  while (std::getline(in, line))
    if (!line.empty() && line[0] == '{') j = nlohmann::json::parse(line, nullptr, false);
  return j;
}

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

inline std::int64_t count_lines(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::int64_t n = 0;
  while (std::getline(in, line))
    if (!line.empty()) ++n;
  return n;
}

}  // namespace dpgnn::train::testing
