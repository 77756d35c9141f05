// GraphBlock construction: in-block degrees, given degrees, and rejection of bad edges.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "dpgnn/model/graph_block.h"
#include "dpgnn/util/error.h"

namespace dpgnn::model {
namespace {

TEST(GraphBlock, MakeBlockCountsDegreesInsideTheBlock) {
  // dst rows 0..1, src columns 0..3 (2, 3 are halo): edges into 0 from 1, 2, 3; into 1 from 0.
  const GraphBlock b = make_block({0, 0, 0, 1}, {1, 2, 3, 0}, 2, 4, at::kCPU);
  EXPECT_TRUE(b.deg_dst.equal(at::tensor({3.0f, 1.0f})));
  EXPECT_TRUE(b.deg_src.equal(at::tensor({1.0f, 1.0f, 1.0f, 1.0f})));
  EXPECT_EQ(b.num_edges(), 4);
  EXPECT_NO_THROW(b.validate());
}

TEST(GraphBlock, GivenDegreesAreKept) {
  const GraphBlock b = make_block_with_degrees({0}, {1}, 1, 2, {5.0}, {5.0, 9.0}, at::kCPU, at::kDouble);
  EXPECT_EQ(b.deg_src[1].item<double>(), 9.0);
  EXPECT_EQ(b.deg_dst.scalar_type(), at::kDouble);
  EXPECT_THROW(make_block_with_degrees({0}, {1}, 1, 2, {-1.0}, {1.0, 1.0}, at::kCPU), DataError);
  EXPECT_THROW(make_block_with_degrees({0}, {1}, 1, 2, {1.0}, {1.0}, at::kCPU), DataError);
}

TEST(GraphBlock, RejectsSelfLoopsOutOfRangeIndicesAndMismatchedLists) {
  EXPECT_THROW(make_block({0}, {0}, 2, 2, at::kCPU), DataError);
  EXPECT_THROW(make_block({2}, {0}, 2, 3, at::kCPU), DataError);  // dst must be < num_dst
  EXPECT_THROW(make_block({0}, {3}, 2, 3, at::kCPU), DataError);
  EXPECT_THROW(make_block({0, 1}, {1}, 2, 2, at::kCPU), DataError);
  EXPECT_THROW(make_block({}, {}, 3, 2, at::kCPU), DataError);  // num_dst > num_src
  try {
    make_block({0}, {0}, 2, 2, at::kCPU);
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("self loop"), std::string::npos);
  }
}

TEST(GraphBlock, EmptyBlockIsValid) {
  const GraphBlock b = make_block({}, {}, 3, 3, at::kCPU);
  EXPECT_EQ(b.num_edges(), 0);
  EXPECT_NO_THROW(b.validate());
  EXPECT_EQ(b.deg_dst.sum().item<float>(), 0.0f);
}

}  // namespace
}  // namespace dpgnn::model
