// Local-rank detection from launcher variables, without MPI: OpenMPI's variables win over
// SLURM's, partial or contradictory ones defer to MPI's node split, malformed ones are
// rejected naming the variable. (The MPI side, with real mpiexec, is in
// test_mpi_communicator.cpp.)
#include "dpgnn/dist/environment.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "dpgnn/util/error.h"

namespace dpgnn::dist {
namespace {

EnvLookup fake_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(LocalRankFromLauncher, OpenMpiVariablesGiveRankAndSize) {
  const auto found = local_rank_from_launcher(
      5, 8, fake_env({{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->local_rank, 1);
  EXPECT_EQ(found->local_size, 4);
  EXPECT_EQ(found->source, "OMPI_COMM_WORLD_LOCAL_RANK");
}

TEST(LocalRankFromLauncher, OpenMpiWinsOverSlurm) {
  // mpirun inside a SLURM allocation: SLURM_LOCALID describes the batch step, not our rank.
  const auto found = local_rank_from_launcher(
      3, 4,
      fake_env({{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS_PER_NODE", "1"}}));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->local_rank, 3);
  EXPECT_EQ(found->source, "OMPI_COMM_WORLD_LOCAL_RANK");
}

TEST(LocalRankFromLauncher, SlurmGivesRankAndSizeUnderSrun) {
  const auto found = local_rank_from_launcher(
      6, 8, fake_env({{"SLURM_LOCALID", "2"}, {"SLURM_NTASKS_PER_NODE", "4"}}));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->local_rank, 2);
  EXPECT_EQ(found->local_size, 4);
  EXPECT_EQ(found->source, "SLURM_LOCALID");
}

TEST(LocalRankFromLauncher, SlurmWithoutTasksPerNodeLeavesTheSizeToMpi) {
  const auto found = local_rank_from_launcher(1, 2, fake_env({{"SLURM_LOCALID", "1"}}));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->local_rank, 1);
  EXPECT_FALSE(found->local_size.has_value());
}

TEST(LocalRankFromLauncher, NoLauncherVariablesMeansAskMpi) {
  EXPECT_FALSE(local_rank_from_launcher(0, 1, fake_env({})).has_value());
}

TEST(LocalRankFromLauncher, VariablesContradictingTheWorldAreIgnored) {
  // A singleton run (world size 1) inside a 4-task SLURM step sees SLURM_LOCALID=3.
  EXPECT_FALSE(local_rank_from_launcher(
                   0, 1, fake_env({{"SLURM_LOCALID", "3"}, {"SLURM_NTASKS_PER_NODE", "4"}}))
                   .has_value());
  EXPECT_FALSE(local_rank_from_launcher(
                   0, 2, fake_env({{"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}}))
                   .has_value());
}

TEST(LocalRankFromLauncher, MalformedVariableIsAUsageErrorNamingIt) {
  try {
    local_rank_from_launcher(0, 2, fake_env({{"OMPI_COMM_WORLD_LOCAL_RANK", "one"}}));
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("OMPI_COMM_WORLD_LOCAL_RANK='one'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(local_rank_from_launcher(0, 2, fake_env({{"SLURM_LOCALID", "-1"}})), UsageError);
}

TEST(Environment, IsNotAvailableBeforeInit) {
  ASSERT_FALSE(environment_initialized());
  EXPECT_THROW(environment(), UsageError);
}

}  // namespace
}  // namespace dpgnn::dist
