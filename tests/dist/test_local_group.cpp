// In-process multi-rank tests: LocalGroup's communicators on 1, 2, 3 and 4 threads give
// the collective results of communicator.h (the same checks run on MPI in
// test_mpi_communicator.cpp), and the group turns the mistakes that hang MPI jobs
// (mismatched collectives, a rank that stops early or throws) into exceptions.
#include "dpgnn/dist/local_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "dist/collective_checks.h"
#include "dpgnn/util/error.h"

namespace dpgnn::dist {
namespace {

class LocalGroupOfSize : public ::testing::TestWithParam<int> {};

TEST_P(LocalGroupOfSize, AllReduceSumsEveryDtype) {
  LocalGroup group(GetParam());
  group.run([](Communicator& comm) { testing::check_allreduce_every_dtype(comm, 1); });
}

TEST_P(LocalGroupOfSize, BroadcastDeliversEachRootsBuffer) {
  LocalGroup group(GetParam());
  group.run([](Communicator& comm) { testing::check_broadcast_from_every_root(comm, 1); });
}

TEST_P(LocalGroupOfSize, AllGatherPlacesBlocksInRankOrder) {
  LocalGroup group(GetParam());
  group.run([](Communicator& comm) { testing::check_allgather_in_rank_order(comm, 1); });
}

TEST_P(LocalGroupOfSize, AllGatherVHandlesUnevenAndZeroCounts) {
  LocalGroup group(GetParam());
  group.run([](Communicator& comm) { testing::check_allgatherv_uneven_and_zero(comm, 1); });
}

TEST_P(LocalGroupOfSize, AllToAllVHandlesUnevenAndZeroCounts) {
  LocalGroup group(GetParam());
  group.run([](Communicator& comm) { testing::check_alltoallv_uneven_and_zero(comm, 1); });
}

TEST_P(LocalGroupOfSize, SendAndRecvDeliverMessagesInOrderBetweenEveryPair) {
  LocalGroup group(GetParam());
  group.run([](Communicator& comm) { testing::check_send_recv_between_every_pair(comm, 1); });
}

TEST_P(LocalGroupOfSize, ReportsItsRanksAndHostBuffers) {
  LocalGroup group(GetParam());
  for (int r = 0; r < GetParam(); ++r) {
    EXPECT_EQ(group.comm(r).rank(), r);
    EXPECT_EQ(group.comm(r).size(), GetParam());
    EXPECT_EQ(group.comm(r).location(), BufferLocation::host);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, LocalGroupOfSize, ::testing::Values(1, 2, 4, 3));

TEST(LocalGroup, AllReduceGivesBitwiseIdenticalFloatSumsOnEveryRank) {
  // Values whose float sum depends on the order: every rank must still agree exactly.
  LocalGroup group(4);
  std::vector<float> results(4);
  group.run([&](Communicator& comm) {
    const float values[4] = {1e8f, 1.0f, -1e8f, 0.5f};
    float x = values[comm.rank()];
    comm.allreduce_sum(&x, 1);
    results[static_cast<std::size_t>(comm.rank())] = x;
  });
  for (int r = 1; r < 4; ++r) EXPECT_EQ(results[r], results[0]) << "rank " << r;
}

TEST(LocalGroup, RanksCanRunManyCollectivesBackToBack) {
  // Reusing slots across consecutive collectives must not let a fast rank overwrite
  // what a slow one still reads.
  LocalGroup group(3);
  group.run([](Communicator& comm) {
    for (int step = 0; step < 200; ++step) {
      std::int64_t v = step * 10 + comm.rank();
      comm.allreduce_sum(&v, 1);
      ASSERT_EQ(v, step * 30 + 3) << "step " << step;
    }
  });
}

TEST(LocalGroup, MismatchedCollectivesThrowOnEveryRank) {
  LocalGroup group(2);
  std::atomic<int> usage_errors{0};
  group.run([&](Communicator& comm) {
    try {
      std::int32_t v = 1;
      if (comm.rank() == 0)
        comm.allreduce_sum(&v, 1);
      else
        comm.broadcast(&v, 1, 0);
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("called broadcast while rank 0 called allreduce_sum"),
                std::string::npos)
          << e.what();
      ++usage_errors;
    }
  });
  EXPECT_EQ(usage_errors.load(), 2);
}

TEST(LocalGroup, MismatchedAllToAllVCountsThrowNamingTheRanks) {
  LocalGroup group(2);
  std::atomic<int> usage_errors{0};
  group.run([&](Communicator& comm) {
    // Rank 0 sends 2 elements to rank 1, which expects 3.
    std::vector<std::int32_t> send(4), recv(4);
    const std::vector<std::size_t> send_counts =
        comm.rank() == 0 ? std::vector<std::size_t>{1, 2} : std::vector<std::size_t>{1, 1};
    const std::vector<std::size_t> recv_counts =
        comm.rank() == 0 ? std::vector<std::size_t>{1, 1} : std::vector<std::size_t>{3, 1};
    try {
      comm.alltoallv(send.data(), send_counts, recv.data(), recv_counts);
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("rank 0 sends 2 elements to rank 1, which expects 3"),
                std::string::npos)
          << e.what();
      ++usage_errors;
    }
  });
  EXPECT_EQ(usage_errors.load(), 2);
}

TEST(LocalGroup, ARankThatThrowsAbortsThePeersAndItsExceptionIsRethrown) {
  LocalGroup group(3);
  std::atomic<int> peers_aborted{0};
  EXPECT_THROW(group.run([&](Communicator& comm) {
                 if (comm.rank() == 1) throw std::runtime_error("rank 1 fails");
                 try {
                   comm.barrier();  // rank 1 never arrives
                 } catch (const IoError&) {
                   ++peers_aborted;
                   throw;
                 }
               }),
               std::runtime_error);
  EXPECT_EQ(peers_aborted.load(), 2);
}

TEST(LocalGroup, ARankThatReturnsEarlyMakesWaitingPeersThrowAtOnce) {
  // A generous timeout: the failure must come from the early return, not the clock.
  LocalGroup group(2, std::chrono::seconds(600));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(group.run([](Communicator& comm) {
                 if (comm.rank() == 0) return;  // skips the collective below
                 comm.barrier();
               }),
               IoError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(LocalGroup, ACollectiveNobodyJoinsTimesOut) {
  LocalGroup group(2, std::chrono::milliseconds(200));
  EXPECT_THROW(group.comm(0).barrier(), IoError);  // rank 1 never calls
}

TEST(LocalGroup, ArgumentsThatOneRankCanCheckAreRejectedBeforeCommunicating) {
  LocalGroup group(2);
  Communicator& comm = group.comm(0);
  std::int32_t x = 0;
  EXPECT_THROW(comm.broadcast(&x, 1, 2), UsageError);                        // root out of range
  EXPECT_THROW(comm.allreduce_sum(static_cast<float*>(nullptr), 3), UsageError);  // null buffer
  EXPECT_THROW(comm.allgatherv(&x, 1, &x, std::vector<std::size_t>{1}), UsageError);  // 1 count for 2 ranks
  EXPECT_THROW(comm.allgatherv(&x, 1, &x, std::vector<std::size_t>{2, 1}), UsageError);  // own count differs
  EXPECT_THROW(comm.alltoallv(&x, {1, 0}, &x, {0, 1}), UsageError);  // sends itself 1, expects 0
  EXPECT_THROW(LocalGroup(0), UsageError);
}

}  // namespace
}  // namespace dpgnn::dist
