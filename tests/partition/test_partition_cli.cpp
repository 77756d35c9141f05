// End-to-end tests of `dpgnn partition` through the binary: the summary it prints, the
// file it writes (readable by `dpgnn info`), and the exit codes of docs/cli.md for bad input
// (2 = bad argument, 4 = unreadable file).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "dpgnn/partition/partition_file.h"
#include "partition_test_data.h"

namespace dpgnn::partition {
namespace {

struct CliResult {
  int code;
  std::string output;
};

CliResult run_dpgnn(const std::string& args, const testing::TempDir& tmp) {
  const std::string log = tmp.file("run.log");
  const std::string cmd = std::string(DPGNN_BINARY) + " " + args + " > " + log + " 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ss.str()};
}

class PartitionCli : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ClusteredSpec spec;
    spec.nodes = 200;
    dataset_ = tmp_.file("g.h5");
    graph::write_dataset(testing::clustered_dataset(spec), dataset_);
  }
  testing::TempDir tmp_;
  std::string dataset_;
};

TEST_F(PartitionCli, WritesAPartitionFileAndPrintsPartsEdgeCutBalanceAndTime) {
  const std::string out = tmp_.file("p.h5");
  const CliResult r = run_dpgnn("partition --dataset " + dataset_ + " --parts 4 --seed 3 --out " + out, tmp_);
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* want : {"4 parts (metis, seed 3)", "edge cut", "balance", "training nodes", "time"})
    EXPECT_NE(r.output.find(want), std::string::npos) << "missing '" << want << "' in\n" << r.output;
  const PartitionFile pf = PartitionFile::open(out);
  EXPECT_EQ(pf.num_parts(), 4);
  EXPECT_EQ(pf.seed(), 3u);
  const CliResult info = run_dpgnn("info " + out, tmp_);
  EXPECT_EQ(info.code, 0) << info.output;
}

TEST_F(PartitionCli, RandomMethodIsAccepted) {
  const CliResult r = run_dpgnn("partition --dataset " + dataset_ + " --parts 3 --method random --out " + tmp_.file("r.h5"), tmp_);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(PartitionFile::open(tmp_.file("r.h5")).method(), "random");
}

TEST_F(PartitionCli, BadArgumentsExitWithCodeTwoAndAMissingDatasetWithFour) {
  const std::string out = tmp_.file("p.h5");
  ASSERT_EQ(run_dpgnn("partition --dataset " + dataset_ + " --parts 2 --out " + out, tmp_).code, 0);
  const CliResult exists = run_dpgnn("partition --dataset " + dataset_ + " --parts 2 --out " + out, tmp_);
  EXPECT_EQ(exists.code, 2) << exists.output;
  EXPECT_NE(exists.output.find("--force"), std::string::npos) << exists.output;
  EXPECT_EQ(run_dpgnn("partition --dataset " + dataset_ + " --parts 2 --force --out " + out, tmp_).code, 0);
  EXPECT_EQ(run_dpgnn("partition --dataset " + dataset_ + " --parts 201 --out " + tmp_.file("x.h5"), tmp_).code, 2);
  EXPECT_EQ(run_dpgnn("partition --dataset " + dataset_ + " --parts 2 --imbalance 0 --out " + tmp_.file("x.h5"), tmp_).code, 2);
  EXPECT_EQ(run_dpgnn("partition --dataset " + tmp_.file("none.h5") + " --parts 2 --out " + tmp_.file("x.h5"), tmp_).code, 4);
}

}  // namespace
}  // namespace dpgnn::partition
