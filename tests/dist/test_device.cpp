// Rank -> GPU binding: local rank modulo the visible devices, and clear refusals when
// CUDA is missing from the build or no GPU is visible.
#include "dpgnn/dist/device.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/util/error.h"

namespace dpgnn::dist {
namespace {

TEST(CudaDeviceForLocalRank, RanksShareDevicesRoundRobin) {
  // 4 ranks on a node with 2 GPUs: 0,1,0,1; with 4 GPUs: one each.
  EXPECT_EQ(cuda_device_for_local_rank(0, 2), 0);
  EXPECT_EQ(cuda_device_for_local_rank(1, 2), 1);
  EXPECT_EQ(cuda_device_for_local_rank(2, 2), 0);
  EXPECT_EQ(cuda_device_for_local_rank(3, 2), 1);
  EXPECT_EQ(cuda_device_for_local_rank(3, 4), 3);
  EXPECT_EQ(cuda_device_for_local_rank(5, 1), 0);
}

TEST(CudaDeviceForLocalRank, NoVisibleDeviceIsAUsageError) {
  EXPECT_THROW(cuda_device_for_local_rank(0, 0), UsageError);
}

TEST(CudaAvailability, ReasonIsEmptyExactlyWhenADeviceIsVisible) {
  const std::string reason = cuda_unavailable_reason();
  EXPECT_EQ(reason.empty(), visible_cuda_devices() > 0) << reason;
  if (!built_with_cuda()) {
    EXPECT_EQ(reason.rfind("no CUDA in this build", 0), 0u) << reason;
  } else if (!reason.empty()) {
    EXPECT_EQ(reason.rfind("no CUDA GPU visible: ", 0), 0u) << reason;
  }
}

TEST(CudaAvailability, BindingWithoutAUsableGpuIsAUsageErrorWithTheReason) {
  const std::string reason = cuda_unavailable_reason();
  if (reason.empty()) GTEST_SKIP() << "a CUDA GPU is visible, so binding succeeds";
  try {
    bind_cuda_device(0);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
  EXPECT_THROW(CudaBuffer(16), Error);
}

TEST(CudaAvailability, NcclCommunicatorOutsideANcclBuildSaysWhichOptionToSet) {
  if (built_with_nccl()) GTEST_SKIP() << "this build has NCCL";
  try {
    Collectives::open(/*on_gpu=*/true);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("-DDPGNN_WITH_NCCL=ON"), std::string::npos) << e.what();
  }
}

// DPGNN_GPU_COLLECTIVES is read in dist alone: unset or empty means NCCL, mpi stages device
// buffers through host memory, anything else is a usage error naming the value.
TEST(GpuCollectives, TheVariableIsNcclOrMpiAndNothingElse) {
  const char* saved = std::getenv("DPGNN_GPU_COLLECTIVES");
  const std::string restore = saved != nullptr ? saved : "";
  ::unsetenv("DPGNN_GPU_COLLECTIVES");
  EXPECT_EQ(gpu_collectives_from_environment(), GpuCollectives::nccl);
  ::setenv("DPGNN_GPU_COLLECTIVES", "nccl", 1);
  EXPECT_EQ(gpu_collectives_from_environment(), GpuCollectives::nccl);
  ::setenv("DPGNN_GPU_COLLECTIVES", "mpi", 1);
  EXPECT_EQ(gpu_collectives_from_environment(), GpuCollectives::mpi);
  ::setenv("DPGNN_GPU_COLLECTIVES", "gloo", 1);
  try {
    gpu_collectives_from_environment();
    ADD_FAILURE() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("must be nccl or mpi, got 'gloo'"), std::string::npos) << e.what();
  }
  if (saved != nullptr)
    ::setenv("DPGNN_GPU_COLLECTIVES", restore.c_str(), 1);
  else
    ::unsetenv("DPGNN_GPU_COLLECTIVES");
}

}  // namespace
}  // namespace dpgnn::dist
