// The MPI communicator under real mpiexec (-n 1, 2, 4): the collective checks of
// collective_checks.h (also run in-process on LocalGroup), the chunked paths for counts
// above one MPI call (the per-call limit is lowered to 7 elements so small buffers take
// them: MPI counts are int, so real counts above INT_MAX take the same paths), and the
// environment's rank and local-rank facts against MPI's own answers.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "dist/collective_checks.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/environment.h"
#include "dpgnn/dist/mpi_communicator.h"
#include "dpgnn/util/error.h"
#include "mpi_check.h"  // src/dist/, private: tested here directly

namespace dpgnn::dist {
namespace {

TEST(MpiCommunicator, SpansTheWholeJob) {
  const Collectives comms = Collectives::open(/*on_gpu=*/false);
  Communicator* comm = &comms.host();
  EXPECT_EQ(comms.cuda_device(), -1);
  EXPECT_NE(comm->native_handle(), nullptr);
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(comm->rank(), rank);
  EXPECT_EQ(comm->size(), size);
  EXPECT_EQ(std::string(comm->backend()), "mpi");
  EXPECT_EQ(comm->location(), BufferLocation::host);
}

TEST(MpiCommunicator, AllReduceSumsEveryDtype) {
  auto comm = make_mpi_communicator();
  testing::check_allreduce_every_dtype(*comm, 1);
}

TEST(MpiCommunicator, BroadcastDeliversEachRootsBuffer) {
  auto comm = make_mpi_communicator();
  testing::check_broadcast_from_every_root(*comm, 1);
}

TEST(MpiCommunicator, AllGatherPlacesBlocksInRankOrder) {
  auto comm = make_mpi_communicator();
  testing::check_allgather_in_rank_order(*comm, 1);
}

TEST(MpiCommunicator, AllGatherVHandlesUnevenAndZeroCounts) {
  auto comm = make_mpi_communicator();
  testing::check_allgatherv_uneven_and_zero(*comm, 1);
}

TEST(MpiCommunicator, AllToAllVHandlesUnevenAndZeroCounts) {
  auto comm = make_mpi_communicator();
  testing::check_alltoallv_uneven_and_zero(*comm, 1);
}

TEST(MpiCommunicator, SendAndRecvDeliverMessagesInOrderBetweenEveryPair) {
  auto comm = make_mpi_communicator();
  testing::check_send_recv_between_every_pair(*comm, 1);
}

// The host path of Collectives: host buffers go over MPI, whatever the call.
TEST(Collectives, HostBuffersGoOverTheHostCommunicator) {
  const Collectives comms = Collectives::open(/*on_gpu=*/false);
  std::vector<std::int64_t> v = {comms.rank() + 1};
  comms.allreduce_sum(v.data(), 1);
  EXPECT_EQ(v[0], static_cast<std::int64_t>(comms.size()) * (comms.size() + 1) / 2);
  std::vector<std::int64_t> all(static_cast<std::size_t>(comms.size()));
  const std::int64_t mine = comms.rank();
  comms.allgather(&mine, all.data(), 1);
  for (int p = 0; p < comms.size(); ++p) EXPECT_EQ(all[static_cast<std::size_t>(p)], p);
  EXPECT_STREQ(comms.device_backend(), "mpi");
}

TEST(MpiCommunicator, CountsAboveThePerCallLimitAreSplitIntoChunks) {
  // With a limit of 7 elements, scale 5 makes every count and most displacements exceed
  // one call: all-reduce/broadcast loop over chunks, all-gather(v) falls back to chunked
  // broadcasts, all-to-all-v to chunked point-to-point messages.
  auto comm = make_mpi_communicator(7);
  testing::check_every_collective(*comm, 5);
}

TEST(MpiCommunicator, ALimitOfOneElementPerCallStillDeliversEverything) {
  auto comm = make_mpi_communicator(1);
  testing::check_every_collective(*comm, 1);
}

TEST(MpiCommunicator, PerCallLimitOutsideMpisIntRangeIsRejected) {
  EXPECT_THROW(make_mpi_communicator(0), UsageError);
  EXPECT_THROW(make_mpi_communicator(kMpiMaxElementsPerCall + 1), UsageError);
}

TEST(MpiEnvironment, WorldFactsMatchMpi) {
  const EnvironmentInfo& env = environment();
  int rank = -1, size = -1, provided = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Query_thread(&provided);
  EXPECT_EQ(env.world_rank, rank);
  EXPECT_EQ(env.world_size, size);
  EXPECT_GE(env.thread_level, MPI_THREAD_FUNNELED);
  EXPECT_EQ(env.thread_level, provided);
}

TEST(MpiEnvironment, LocalRankMatchesMpisSharedMemorySplit) {
  // All ranks of this test run on one node, so the node split is the whole world.
  MPI_Comm node;
  ASSERT_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            MPI_SUCCESS);
  int node_rank = -1, node_size = -1;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  const EnvironmentInfo& env = environment();
  EXPECT_EQ(env.local_rank, node_rank);
  EXPECT_EQ(env.local_size, node_size);
  // Under OpenMPI's mpiexec the launcher's variables are the source.
  if (std::getenv("OMPI_COMM_WORLD_LOCAL_RANK") != nullptr) {
    EXPECT_EQ(env.local_rank_source, "OMPI_COMM_WORLD_LOCAL_RANK");
  }
}

TEST(MpiCheck, AFailingCallThrowsIoErrorNamingTheCallAndMpisMessage) {
  // MPI_COMM_NULL is an invalid communicator for MPI_Comm_rank: MPI raises MPI_ERR_COMM on
  // MPI_COMM_WORLD's handler, which init_environment set to MPI_ERRORS_RETURN (with the
  // default MPI_ERRORS_ARE_FATAL this test would kill the job instead).
  char expected[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(MPI_ERR_COMM, expected, &length);
  int rank = -1;
  try {
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_NULL, &rank));
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("MPI_Comm_rank(MPI_COMM_NULL, &rank)"), std::string::npos) << what;
    EXPECT_NE(what.find(std::string(expected, static_cast<std::size_t>(length))), std::string::npos)
        << what;
    EXPECT_NE(what.find("test_mpi_communicator.cpp:"), std::string::npos) << what;
  }
}

TEST(MpiEnvironment, InitIsIdempotent) {
  const EnvironmentInfo& again = init_environment(nullptr, nullptr);
  EXPECT_EQ(&again, &environment());
}

}  // namespace
}  // namespace dpgnn::dist
