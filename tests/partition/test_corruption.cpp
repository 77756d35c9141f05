// Corrupted files through the dpgnn binary (issue 13, item 9): seeded corrupted copies of a
// small dataset (truncated, bytes flipped, blocks overwritten). Whenever `dpgnn info` rejects
// a copy, `dpgnn partition` and `dpgnn sample` reject it too (exit 2-4: they verify what they
// read against the per-block checksums); no command crashes or hangs (each runs under
// timeout). Corrupted copies of a partition file: `dpgnn train` refuses every copy that
// `dpgnn info` or PartitionFile::open rejects.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "dpgnn/partition/partition_file.h"
#include "partition_test_data.h"
#include "test_support.h"

namespace dpgnn::partition {
namespace {

using ::dpgnn::testing::CommandResult;
using ::dpgnn::testing::run_command;

CommandResult dpgnn_cmd(const std::string& args) {
  // timeout(1) exits 124 when the command hangs; its output goes with the result.
  return run_command("OMP_NUM_THREADS=1 DPGNN_PROGRESS=0 timeout 120 " + std::string(DPGNN_BINARY) + " " + args);
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::vector<char>& b) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(b.size()));
}

// Variant i of `clean`: i % 3 == 0 truncated, 1 some bytes flipped, 2 a block overwritten.
std::vector<char> corrupt(const std::vector<char>& clean, int i, std::mt19937_64& rng) {
  std::vector<char> b = clean;
  auto pos = [&](std::size_t hi) { return std::uniform_int_distribution<std::size_t>(0, hi - 1)(rng); };
  switch (i % 3) {
    case 0:
      b.resize(pos(b.size()));
      break;
    case 1: {
      const int flips = 1 + static_cast<int>(pos(8));
      for (int k = 0; k < flips; ++k) b[pos(b.size())] ^= static_cast<char>(1 + pos(255));
      break;
    }
    default: {
      const std::size_t len = 16 + pos(4096), at = pos(b.size());
      for (std::size_t k = at; k < std::min(b.size(), at + len); ++k) b[k] = static_cast<char>(pos(256));
    }
  }
  return b;
}

bool refused(const CommandResult& r) { return !r.signaled && r.exit_code >= 2 && r.exit_code <= 4; }

TEST(Corruption, PartitionAndSampleRejectEveryDatasetCopyThatInfoRejectsAndNothingCrashes) {
  ::dpgnn::testing::TempDir tmp;
  testing::ClusteredSpec spec;
  spec.nodes = 300;
  const std::string clean_path = tmp.file("clean.h5");
  graph::write_dataset(testing::clustered_dataset(spec), clean_path);
  ASSERT_EQ(dpgnn_cmd("info " + clean_path).exit_code, 0);
  const std::vector<char> clean = read_bytes(clean_path);
  std::mt19937_64 rng(13);
  int info_rejects = 0, part_rejects = 0, sample_rejects = 0;
  for (int i = 0; i < 60; ++i) {
    const std::string copy = tmp.file("copy.h5");
    write_bytes(copy, corrupt(clean, i, rng));
    const CommandResult info = dpgnn_cmd("info " + copy);
    const CommandResult part =
        dpgnn_cmd("partition --dataset " + copy + " --parts 2 --method random --force --out " + tmp.file("p.h5"));
    const CommandResult sample =
        dpgnn_cmd("sample --dataset " + copy + " --sampler drw --force --out " + tmp.file("s.h5"));
    for (const auto* r : {&info, &part, &sample}) {
      EXPECT_FALSE(r->signaled) << "variant " << i << " crashed: " << r->output;
      EXPECT_NE(r->exit_code, 124) << "variant " << i << " hung";
      EXPECT_TRUE(r->exit_code == 0 || refused(*r)) << "variant " << i << ": exit " << r->exit_code << "\n" << r->output;
    }
    part_rejects += part.exit_code != 0;
    sample_rejects += sample.exit_code != 0;
    if (info.exit_code != 0) {
      ++info_rejects;
      EXPECT_TRUE(refused(part)) << "variant " << i << ": info rejects (" << info.output
                                 << ") but partition exits " << part.exit_code << "\n" << part.output;
      EXPECT_TRUE(refused(sample)) << "variant " << i << ": info rejects (" << info.output
                                   << ") but sample exits " << sample.exit_code << "\n" << sample.output;
      if (refused(part) && part.exit_code == 3) {
        EXPECT_NE(part.output.find(copy), std::string::npos) << "the message names the file: " << part.output;
      }
    }
  }
  std::cout << "of 60 corrupted copies: info rejects " << info_rejects << ", partition " << part_rejects
            << ", sample " << sample_rejects << "\n";
  // Most corruptions hit the data and must be caught: the test has power.
  EXPECT_GE(info_rejects, 40);
}

TEST(Corruption, TrainRefusesEveryPartitionCopyThatInfoOrTheReaderRejects) {
  ::dpgnn::testing::TempDir tmp;
  testing::ClusteredSpec spec;
  spec.nodes = 300;
  const std::string dataset = tmp.file("g.h5"), clean_path = tmp.file("p.h5");
  graph::write_dataset(testing::clustered_dataset(spec), dataset);
  ASSERT_EQ(dpgnn_cmd("partition --dataset " + dataset + " --parts 2 --method random --out " + clean_path).exit_code, 0);
  const std::vector<char> clean = read_bytes(clean_path);
  const std::string copy = tmp.file("copy.h5"), cfg = tmp.file("c.yaml");
  std::ofstream(cfg) << "method: drw\n"
                     << "data: {dataset: " << dataset << ", partition: " << copy << "}\n"
                     << "model: {hidden: 8}\n"
                     << "train: {batch_size: 8, max_steps: 2, seed: 4, eval_every: 0, checkpoint_every: 0, threads: 1}\n"
                     << "privacy: {noise_multiplier: 2.0, delta: 1.0e-5}\n";
  write_bytes(copy, clean);
  const CommandResult ok = dpgnn_cmd("train --config " + cfg + " --out " + tmp.file("run-clean"));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  std::mt19937_64 rng(17);
  int rejects = 0;
  for (int i = 0; i < 30; ++i) {
    write_bytes(copy, corrupt(clean, i, rng));
    const CommandResult info = dpgnn_cmd("info " + copy);
    bool reader_rejects = false;
    try {
      PartitionFile::open(copy);
    } catch (const std::exception&) {
      reader_rejects = true;
    }
    const CommandResult train = dpgnn_cmd("train --config " + cfg + " --out " + tmp.file("run" + std::to_string(i)));
    EXPECT_FALSE(train.signaled) << "variant " << i << " crashed: " << train.output;
    EXPECT_NE(train.exit_code, 124) << "variant " << i << " hung";
    if (info.exit_code != 0 || reader_rejects) {
      ++rejects;
      EXPECT_TRUE(refused(train)) << "variant " << i << ": info exit " << info.exit_code << ", reader "
                                  << (reader_rejects ? "rejects" : "accepts") << ", but train exits "
                                  << train.exit_code << "\n" << train.output;
    }
  }
  std::cout << "of 30 corrupted partition copies: info or the reader reject " << rejects << "\n";
  EXPECT_GE(rejects, 20);
}

}  // namespace
}  // namespace dpgnn::partition
