// The NCCL communicator under mpiexec (-n 1, 2), on CUDA buffers: the collective checks of
// collective_checks.h, and the device-chosen factory. Compiled whenever the build has
// NCCL; every test skips, saying why, when no GPU is visible or there are fewer GPUs than
// ranks (NCCL refuses two ranks on one device). All ranks of a job see the same devices,
// so they all skip together and no rank waits in a collective alone.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "dist/collective_checks.h"
#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/dist/device.h"
#include "dpgnn/dist/environment.h"
#include "dpgnn/dist/mpi_communicator.h"
#include "dpgnn/dist/nccl_communicator.h"

namespace dpgnn::dist {
namespace {

class NcclCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string reason = cuda_unavailable_reason();
    if (!reason.empty()) GTEST_SKIP() << reason;
    const EnvironmentInfo& env = environment();
    if (visible_cuda_devices() < env.local_size)
      GTEST_SKIP() << "needs one GPU per rank on this node: " << env.local_size << " ranks, "
                   << visible_cuda_devices() << " visible devices";
    comms_.emplace(Collectives::open(/*on_gpu=*/true));
    comm_ = comms_->device();
    if (comm_ == nullptr) GTEST_SKIP() << "DPGNN_GPU_COLLECTIVES=mpi: no NCCL communicator was opened";
  }
  std::optional<Collectives> comms_;
  Communicator* comm_ = nullptr;
};

TEST_F(NcclCommunicatorTest, IsTheBackendForCudaBuffers) {
  EXPECT_EQ(std::string(comm_->backend()), "nccl");
  EXPECT_EQ(comm_->location(), BufferLocation::cuda);
  EXPECT_EQ(comm_->rank(), environment().world_rank);
  EXPECT_EQ(comm_->size(), environment().world_size);
}

TEST_F(NcclCommunicatorTest, AllReduceSumsEveryDtype) { testing::check_allreduce_every_dtype(*comm_, 1); }

TEST_F(NcclCommunicatorTest, BroadcastDeliversEachRootsBuffer) {
  testing::check_broadcast_from_every_root(*comm_, 1);
}

TEST_F(NcclCommunicatorTest, AllGatherPlacesBlocksInRankOrder) {
  testing::check_allgather_in_rank_order(*comm_, 1);
}

TEST_F(NcclCommunicatorTest, AllGatherVHandlesUnevenAndZeroCounts) {
  testing::check_allgatherv_uneven_and_zero(*comm_, 1);
}

TEST_F(NcclCommunicatorTest, AllToAllVHandlesUnevenAndZeroCounts) {
  testing::check_alltoallv_uneven_and_zero(*comm_, 1);
}

TEST_F(NcclCommunicatorTest, SendAndRecvDeliverMessagesInOrderBetweenEveryPair) {
  testing::check_send_recv_between_every_pair(*comm_, 1);
}

// Device buffers go over NCCL through Collectives, as host buffers go over MPI.
TEST_F(NcclCommunicatorTest, CollectivesRouteDeviceBuffersToNccl) {
  testing::SideBuffer buf(BufferLocation::cuda, sizeof(double));
  buf.put(std::vector<double>{1.0});
  comms_->allreduce_sum(static_cast<double*>(buf.data()), 1);
  EXPECT_EQ(buf.get<double>(1)[0], static_cast<double>(comms_->size()));
  EXPECT_STREQ(comms_->device_backend(), "nccl");
}

TEST_F(NcclCommunicatorTest, LargeBuffersAndBarrierWork) {
  testing::check_allreduce_sum<float>(*comm_, (1u << 22) + 3);  // 16 MB, odd length
  comm_->barrier();
}

}  // namespace
}  // namespace dpgnn::dist
