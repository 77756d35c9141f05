// The global subgraph id space built from per-part counts.
#include <gtest/gtest.h>

#include "dpgnn/sampling/global_ids.h"
#include "dpgnn/util/error.h"

namespace dpgnn::sampling {
namespace {

TEST(GlobalIds, OffsetsArePrefixSumsAndEveryIdHasOneOwner) {
  const GlobalIds ids({3, 0, 5, 2});
  EXPECT_EQ(ids.total(), 10);
  EXPECT_EQ(ids.offsets(), (std::vector<std::int64_t>{0, 3, 3, 8, 10}));
  const std::vector<std::int64_t> owner = {0, 0, 0, 2, 2, 2, 2, 2, 3, 3};  // part 1 is empty
  const std::vector<std::int64_t> local = {0, 1, 2, 0, 1, 2, 3, 4, 0, 1};
  for (std::int64_t g = 0; g < 10; ++g) {
    EXPECT_EQ(ids.owner(g), owner[g]) << g;
    EXPECT_EQ(ids.local_index(g), local[g]) << g;
    EXPECT_EQ(ids.global_id(owner[g], local[g]), g);
  }
  EXPECT_EQ(ids.count(1), 0);
}

TEST(GlobalIds, RejectsBadInput) {
  EXPECT_THROW(GlobalIds({}), UsageError);
  EXPECT_THROW(GlobalIds({2, -1}), UsageError);
  const GlobalIds ids({2, 2});
  EXPECT_THROW(ids.owner(4), UsageError);
  EXPECT_THROW(ids.owner(-1), UsageError);
  EXPECT_THROW(ids.global_id(1, 2), UsageError);
  EXPECT_THROW(ids.offset(2), UsageError);
}

}  // namespace
}  // namespace dpgnn::sampling
