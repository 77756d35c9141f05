// main() for GoogleTest binaries launched with mpiexec (dpgnn_add_mpi_test).
//
// Starts MPI through dist::init_environment (as `dpgnn` does), lets only rank 0 print the
// GoogleTest report (ranks > 0 print just their failures, prefixed with the rank, so a
// failure on one rank is not lost), and makes every rank exit non-zero when any rank
// failed, or 77 when every test skipped (register the ctest with SKIP_RETURN_CODE 77).
// Tests run the same collectives in the same order on every rank, so test bodies
// must not return early before a collective that peers will enter.
// Reusable by other modules' MPI tests: add this file to their SOURCES with dpgnn_dist.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>

#include "dpgnn/dist/environment.h"
#include "dpgnn/dist/mpi_communicator.h"
#include "dpgnn/util/log.h"

namespace {

constexpr int kAllSkipped = 77;

class FailureOnlyPrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailureOnlyPrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.message());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  dpgnn::init_logging();
  const auto& env = dpgnn::dist::init_environment(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (env.world_rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailureOnlyPrinter(env.world_rank));
  }
  std::int32_t failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  {
    auto comm = dpgnn::dist::make_mpi_communicator();
    comm->allreduce_sum(&failed, 1);
  }
  if (env.world_rank == 0 && failed > 0)
    std::fprintf(stderr, "%d of %d ranks had failures\n", failed, env.world_size);
  dpgnn::dist::finalize_environment();
  if (failed > 0) return 1;
  // Every test skipped (e.g. NCCL tests without a GPU): exit 77, which ctest reports as
  // "Skipped" for tests with SKIP_RETURN_CODE 77 rather than as a pass.
  const auto* unit = ::testing::UnitTest::GetInstance();
  if (unit->test_to_run_count() > 0 && unit->skipped_test_count() == unit->test_to_run_count())
    return kAllSkipped;
  return 0;
}
