// busbw factors against the values nccl-tests documents (doc/PERFORMANCE.md): all-reduce
// 2(n-1)/n is 1 on 2 ranks, 1.5 on 4, 1.75 on 8; all-gather (n-1)/n is 0.5 on 2 ranks;
// broadcast 1.
#include "dpgnn/dist/bandwidth.h"

#include <gtest/gtest.h>

#include "dpgnn/util/error.h"

namespace dpgnn::dist {
namespace {

TEST(Bandwidth, AllReduceBusFactorIsTwoTimesNMinusOneOverN) {
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::allreduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::allreduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::allreduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::allreduce, 8), 1.75);
}

TEST(Bandwidth, OtherCollectivesUseTheirNcclTestsFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::allgather, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::alltoall, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::broadcast, 8), 1.0);
}

TEST(Bandwidth, BusBandwidthScalesAlgorithmBandwidth) {
  // 1 GB in 0.5 s: algbw 2 GB/s; on 4 ranks busbw 3 GB/s.
  EXPECT_DOUBLE_EQ(algbw(1000000000, 0.5), 2e9);
  EXPECT_DOUBLE_EQ(busbw(CollectiveKind::allreduce, 1000000000, 0.5, 4), 3e9);
  EXPECT_DOUBLE_EQ(algbw(1000, 0.0), 0.0);
}

TEST(Bandwidth, RejectsFewerThanOneRank) {
  EXPECT_THROW(busbw_factor(CollectiveKind::allreduce, 0), UsageError);
}

}  // namespace
}  // namespace dpgnn::dist
