// Batch selection under mpiexec -n 1/2/4: every rank draws the same batch with no
// communication beyond the one broadcast of the batch secret (DESIGN.md 3, 7), and the ranks' owned shares of it add up to m. MPI is used
// only to compare what the ranks drew; sampling/ itself knows nothing about MPI.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "dpgnn/sampling/batch.h"
#include "dpgnn/util/secure_rng.h"
#include "dpgnn/sampling/global_ids.h"

namespace dpgnn::sampling {
namespace {

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// The trainer's arrangement: rank 0 draws the batch secret from the OS, broadcasts it once.
Secret broadcast_secret() {
  Secret s;
  if (rank() == 0) s = random_secret();
  MPI_Bcast(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_UINT8_T, 0, MPI_COMM_WORLD);
  return s;
}

std::uint64_t fnv1a(const std::vector<std::int64_t>& v, std::uint64_t h) {
  for (std::int64_t x : v) {
    h ^= static_cast<std::uint64_t>(x);
    h *= 0x100000001B3ULL;
  }
  return h;
}

// True on every rank when every rank holds the same value.
bool same_on_all_ranks(std::uint64_t value) {
  std::vector<std::uint64_t> all(static_cast<std::size_t>(world()));
  MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (auto a : all)
    if (a != all[0]) return false;
  return true;
}

TEST(BatchAcrossRanks, EveryRankDrawsTheSameBatches) {
  // Four parts, owned round-robin by the ranks; the global id space is built from the
  // counts every rank knows (as after the trainer's all-gather).
  const GlobalIds ids({37, 0, 51, 12});
  const std::int64_t m = 16;
  const Secret secret = broadcast_secret();
  std::uint64_t h = 0xCBF29CE484222325ULL, hp = h;
  std::int64_t owned_total = 0, steps = 300;
  for (std::int64_t step = 0; step < steps; ++step) {
    const auto batch = sample_batch_without_replacement(secret, static_cast<std::uint64_t>(step), ids.total(), m);
    h = fnv1a(batch, h);
    for (std::int64_t gid : batch) owned_total += (ids.owner(gid) % world() == rank()) ? 1 : 0;
    hp = fnv1a(sample_batch_poisson(secret, static_cast<std::uint64_t>(step), ids.total(), 0.1), hp);
  }
  EXPECT_TRUE(same_on_all_ranks(h));
  EXPECT_TRUE(same_on_all_ranks(hp));
  std::int64_t sum = 0;
  MPI_Allreduce(&owned_total, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sum, steps * m);  // each id of each batch is owned by exactly one rank
}

}  // namespace
}  // namespace dpgnn::sampling

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (dpgnn::sampling::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int result = RUN_ALL_TESTS();
  // A failure on any rank fails the job on every rank.
  int worst = result;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
