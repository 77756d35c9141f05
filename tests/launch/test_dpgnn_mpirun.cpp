// launch/dpgnn-mpirun and launch/dpgnn-bind: the mpirun line they build (ranks, threads,
// exports, GPU binding by local rank), the run directory they name (stable under SLURM, so
// a requeued job resumes its own run), their usage errors, and one real 2-rank training.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using dpgnn::testing::CommandResult;
using dpgnn::testing::run_command;
using dpgnn::testing::TempDir;

const std::string kLauncher = std::string(DPGNN_SOURCE_DIR) + "/launch/dpgnn-mpirun";
const std::string kBind = std::string(DPGNN_SOURCE_DIR) + "/launch/dpgnn-bind";

// A clean environment for the launcher: no SLURM variables of an enclosing job, root allowed.
std::string launcher(const std::string& env = "") {
  return "env -u SLURM_JOB_ID -u SLURM_ARRAY_JOB_ID -u SLURM_ARRAY_TASK_ID -u SLURM_NTASKS "
         "-u SLURM_NTASKS_PER_NODE -u SLURM_JOB_NUM_NODES -u SLURM_CPUS_ON_NODE -u OMP_NUM_THREADS "
         "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 DPGNN_BIN=" +
         std::string(DPGNN_BINARY) + " " + env + " " + kLauncher + " ";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(DpgnnMpirun, PrintsAnMpirunLineWithRanksThreadsExportsAndTheBindWrapper) {
  const CommandResult r =
      run_command(launcher() + "--print -n 4 --threads 3 -x FOO=bar train --config c.yaml --out runs/x");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("mpirun -n 4 "))) << r.output;
  EXPECT_TRUE(contains(r.output, "-x OMP_NUM_THREADS ")) << r.output;
  EXPECT_TRUE(contains(r.output, "-x OPENBLAS_NUM_THREADS ")) << r.output;
  EXPECT_TRUE(contains(r.output, "-x DPGNN_GPUS ")) << r.output;
  EXPECT_TRUE(contains(r.output, "-x FOO=bar ")) << r.output;
  EXPECT_TRUE(contains(r.output, kBind + " " + DPGNN_BINARY + " train --config c.yaml --out runs/x")) << r.output;
}

TEST(DpgnnMpirun, PlacesRanksPerNodeOnTheGivenHosts) {
  const CommandResult r = run_command(launcher() + "--print -n 8 -N 4 --hosts a,b info x.h5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "--host a:4,b:4 ")) << r.output;
  EXPECT_TRUE(contains(r.output, "--map-by ppr:4:node ")) << r.output;
  const CommandResult too_many = run_command(launcher() + "--print -n 9 -N 4 --hosts a,b info x.h5");
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_TRUE(contains(too_many.output, "do not fit")) << too_many.output;
}

// A hostfile's distinct hosts (comments and repeats aside) are the nodes the ranks per node
// are checked against and the threads are divided by.
TEST(DpgnnMpirun, CountsTheHostsOfAHostfile) {
  TempDir tmp;
  const std::string hf = tmp.file("hosts"), empty = tmp.file("empty");
  std::ofstream(hf) << "# two hosts\nnodeA slots=2\n\nnodeB slots=2  # the second\nnodeA\n";
  std::ofstream(empty) << "# no host\n\n";
  const CommandResult r = run_command(launcher("SLURM_CPUS_ON_NODE=4") + "--print -n 4 -N 2 --hostfile " + hf + " info x.h5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "--hostfile " + hf + " --map-by ppr:2:node ")) << r.output;
  // An "mpirun" that reports the threads the launcher exported (nodeA and nodeB do not exist).
  const std::string fake = tmp.file("fake-mpirun");
  std::ofstream(fake) << "#!/bin/sh\necho threads=$OMP_NUM_THREADS\n";
  fs::permissions(fake, fs::perms::owner_all);
  const CommandResult threads =
      run_command(launcher("SLURM_CPUS_ON_NODE=4") + "-n 4 --hostfile " + hf + " --mpirun " + fake + " info x.h5");
  EXPECT_TRUE(contains(threads.output, "threads=2")) << threads.output;  // 4 cores / (4 ranks / 2 hosts)
  const CommandResult too_many = run_command(launcher() + "--print -n 5 -N 2 --hostfile " + hf + " info x.h5");
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_TRUE(contains(too_many.output, "-n 5 ranks do not fit on 2 host(s)")) << too_many.output;
  const CommandResult none = run_command(launcher() + "--print -n 2 --hostfile " + empty + " info x.h5");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(contains(none.output, "names no host")) << none.output;
}

TEST(DpgnnMpirun, EachRankGetsItsOwnGpuByLocalRankAndTheThreadCount) {
  // dpgnn-mpirun runs `sh` here instead of dpgnn, so each rank reports what it was given.
  const CommandResult r = run_command(
      launcher() + "-n 2 --oversubscribe --threads 1 --gpus 7,9 --dpgnn /bin/sh -- -c "
                   "'echo rank=$OMPI_COMM_WORLD_RANK gpu=$CUDA_VISIBLE_DEVICES threads=$OMP_NUM_THREADS'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "rank=0 gpu=7 threads=1")) << r.output;
  EXPECT_TRUE(contains(r.output, "rank=1 gpu=9 threads=1")) << r.output;
}

TEST(DpgnnMpirun, DividesTheNodesCoresAmongItsRanksByDefault) {
  const CommandResult r = run_command(launcher("SLURM_CPUS_ON_NODE=16") + "--print -n 4 info x.h5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const CommandResult ranks = run_command(
      launcher("SLURM_CPUS_ON_NODE=16") +
      "-n 4 --oversubscribe --dpgnn /bin/sh -- -c 'echo threads=$OMP_NUM_THREADS blas=$OPENBLAS_NUM_THREADS'");
  ASSERT_EQ(ranks.exit_code, 0) << ranks.output;
  EXPECT_TRUE(contains(ranks.output, "threads=4 blas=4")) << ranks.output;  // 16 cores / 4 ranks
}

TEST(DpgnnBind, AutoUsesTheNodesVisibleGpusAndNoneLeavesThemAlone) {
  const std::string show = " /bin/sh -c 'echo gpu=${CUDA_VISIBLE_DEVICES-unset}'";
  CommandResult r = run_command("DPGNN_GPUS=auto CUDA_VISIBLE_DEVICES=4,5,6 OMPI_COMM_WORLD_LOCAL_RANK=4 " + kBind + show);
  EXPECT_TRUE(contains(r.output, "gpu=5")) << r.output;  // local rank 4 mod 3 GPUs -> the second
  r = run_command("env -u CUDA_VISIBLE_DEVICES PATH=/usr/bin:/bin DPGNN_GPUS=none SLURM_LOCALID=1 " + kBind + show);
  EXPECT_TRUE(contains(r.output, "gpu=unset")) << r.output;
  r = run_command("env -u OMPI_COMM_WORLD_LOCAL_RANK DPGNN_GPUS=2,3 SLURM_LOCALID=1 " + kBind + show);
  EXPECT_TRUE(contains(r.output, "gpu=3")) << r.output;  // srun's local rank variable
}

TEST(DpgnnMpirun, NamesATrainRunDirectoryAfterTheConfigAndTheSlurmJob) {
  TempDir tmp;
  const std::string runs = tmp.file("runs");
  CommandResult r = run_command(launcher() + "--print --runs-dir " + runs + " train --config configs/cora/drw.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("--out " + runs + "/cora-drw-[0-9]{8}-[0-9]{6}"))) << r.output;
  // A reproduction (configs/<dataset>/paper/...) keeps every folder below configs/ in the name.
  r = run_command(launcher() + "--print --runs-dir " + runs + " train --config configs/cora/paper/drw.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("--out " + runs + "/cora-paper-drw-[0-9]{8}-[0-9]{6}")))
      << r.output;
  r = run_command(launcher() + "--print --runs-dir " + runs + " train --config configs/default.yaml");
  EXPECT_TRUE(std::regex_search(r.output, std::regex("--out " + runs + "/default-[0-9]{8}-[0-9]{6}"))) << r.output;

  r = run_command(launcher("SLURM_JOB_ID=123") + "--print --runs-dir " + runs + " train --config x/c.yaml");
  EXPECT_TRUE(contains(r.output, "--out " + runs + "/c-job123")) << r.output;
  EXPECT_FALSE(contains(r.output, "--resume")) << r.output;
  r = run_command(launcher("SLURM_ARRAY_JOB_ID=7 SLURM_ARRAY_TASK_ID=2 SLURM_JOB_ID=9") + "--print --runs-dir " + runs +
                  " train --config c.yaml");
  EXPECT_TRUE(contains(r.output, "--out " + runs + "/c-job7_2")) << r.output;

  // A requeued job finds its earlier attempt and resumes it; a finished one is left alone.
  fs::create_directories(runs + "/c-job123");
  std::ofstream(runs + "/c-job123/config.yaml") << "method: drw\n";
  r = run_command(launcher("SLURM_JOB_ID=123") + "--print --runs-dir " + runs + " train --config x/c.yaml");
  EXPECT_TRUE(contains(r.output, "--out " + runs + "/c-job123 --resume")) << r.output;
  std::ofstream(runs + "/c-job123/summary.json") << "{}";
  r = run_command(launcher("SLURM_JOB_ID=123") + "--print --runs-dir " + runs + " train --config x/c.yaml");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "finished already")) << r.output;
  EXPECT_FALSE(contains(r.output, "/mpirun -n")) << r.output;

  // An explicit --out, or a command that writes no run, is never renamed.
  r = run_command(launcher() + "--print train --config c.yaml --out mine");
  EXPECT_FALSE(contains(r.output, runs)) << r.output;
  r = run_command(launcher() + "--print train --config c.yaml --dry-run");
  EXPECT_FALSE(contains(r.output, "--out")) << r.output;
}

TEST(DpgnnMpirun, RejectsBadOptionsWithUsageErrors) {
  for (const char* bad : {"-n 0 info", "-n two info", "--threads 0 info", "--bogus info", "-n 2",
                                 "--gpus 0,,1 info", "--bind socket info", "-x 1BAD info",
                                 "--hosts a --hostfile f info", "--dpgnn /nonexistent/dpgnn info", "-n"}) {
    const CommandResult r = run_command(launcher() + "--print " + std::string(bad));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "dpgnn-mpirun: error:")) << bad << ": " << r.output;
  }
}

TEST(DpgnnMpirun, TrainsOnTwoRanksEndToEnd) {
  TempDir tmp;
  const std::string data = tmp.file("g.h5"), part = tmp.file("g.part2.h5"), cfg = tmp.file("tiny.yaml");
  ASSERT_EQ(dpgnn::testing::run_dpgnn("synth --nodes 600 --avg-degree 6 --classes 3 --features 8 --homophily 0.8 "
                                      "--seed 3 --out " + data).exit_code, 0);
  ASSERT_EQ(dpgnn::testing::run_dpgnn("partition --dataset " + data + " --parts 2 --seed 1 --out " + part).exit_code, 0);
  std::ofstream(cfg) << "method: drw\n"
                     << "data: {dataset: " << data << ", partition: " << part << "}\n"
                     << "model: {hidden: 8}\n"
                     << "train: {batch_size: 8, max_steps: 10, seed: 1, eval_every: 5}\n"
                     << "privacy: {noise_multiplier: 2.0, delta: 1.0e-5}\n";
  const std::string runs = tmp.file("runs");
  const CommandResult r = run_command("cd " + tmp.path().string() + " && DPGNN_PROGRESS=0 " + launcher() +
                                      "-n 2 --oversubscribe --runs-dir " + runs + " train --config " + cfg);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(runs)) dirs.push_back(e.path());
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_TRUE(std::regex_match(dirs[0].filename().string(), std::regex("tiny-[0-9]{8}-[0-9]{6}")));
  std::ifstream in(dirs[0] / "summary.json");
  ASSERT_TRUE(in) << r.output;
  const auto summary = nlohmann::json::parse(in);
  EXPECT_EQ(summary.at("ranks").get<int>(), 2);
  EXPECT_EQ(summary.at("steps").get<int>(), 10);
}

}  // namespace
