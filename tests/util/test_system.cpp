// Threads per rank: the OMP_NUM_THREADS convention launch/dpgnn-mpirun relies on.
#include "dpgnn/util/system.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace {

// Sets OMP_NUM_THREADS for one test and restores it afterwards.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(const char* value) {
    if (const char* old = std::getenv("OMP_NUM_THREADS")) old_ = old;
    if (value) ::setenv("OMP_NUM_THREADS", value, 1); else ::unsetenv("OMP_NUM_THREADS");
  }
  ~ScopedOmpThreads() {
    if (old_) ::setenv("OMP_NUM_THREADS", old_->c_str(), 1); else ::unsetenv("OMP_NUM_THREADS");
  }

 private:
  std::optional<std::string> old_;
};

TEST(DefaultThreadsPerRank, FollowsOmpNumThreadsWhenSet) {
  ScopedOmpThreads env("3");
  EXPECT_EQ(dpgnn::default_threads_per_rank(1), 3);
  EXPECT_EQ(dpgnn::default_threads_per_rank(8), 3);
}

TEST(DefaultThreadsPerRank, DividesTheCoresAmongLocalRanksOtherwise) {
  ScopedOmpThreads env(nullptr);
  const int cores = dpgnn::available_cores();
  EXPECT_EQ(dpgnn::default_threads_per_rank(1), cores);
  EXPECT_EQ(dpgnn::default_threads_per_rank(cores), 1);
  EXPECT_EQ(dpgnn::default_threads_per_rank(cores * 4), 1);  // never 0
}

TEST(DefaultThreadsPerRank, IgnoresAMalformedOmpNumThreads) {
  for (const char* bad : {"0", "-2", "4abc", ""}) {
    ScopedOmpThreads env(bad);
    EXPECT_EQ(dpgnn::default_threads_per_rank(1), dpgnn::available_cores()) << "OMP_NUM_THREADS='" << bad << "'";
  }
}

TEST(LoadedBlas, NamesOpenBlasThreadingAsItsConfigDoes) {
  // The trainer warns on OpenBLAS's pthreads build (its pool competes with LibTorch's threads).
  // scripts/install-deps.sh installs OpenBLAS on every machine that builds dpgnn.
  ASSERT_NE(dlopen("libopenblas.so.0", RTLD_NOW | RTLD_GLOBAL), nullptr) << "no libopenblas.so.0: run scripts/install-deps.sh";
  const dpgnn::BlasInfo b = dpgnn::loaded_blas();
  ASSERT_EQ(b.vendor, "openblas");
  ASSERT_TRUE(b.threading == "sequential" || b.threading == "pthreads" || b.threading == "openmp") << b.threading;
  EXPECT_EQ(b.threading == "openmp", b.config.find("USE_OPENMP") != std::string::npos) << b.config;
}

}  // namespace
