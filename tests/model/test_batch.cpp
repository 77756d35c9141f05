// Batch assembly and validation (disjoint subgraphs, roots inside, labels in range) and
// sub-selection with re-indexing.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "dpgnn/model/batch.h"
#include "dpgnn/util/error.h"

namespace dpgnn::model {
namespace {

// Two subgraphs: rows {0, 1, 2} (path 0-1-2, root 1) and rows {3, 4} (edge 3-4, root 4).
Batch two_subgraphs() {
  const at::Tensor x = at::arange(10, at::kFloat).view({5, 2});
  return make_batch(x, {0, 3, 5}, {1, 4}, {100, 101, 102, 200, 201}, {0, 1, 1, 2, 3, 4},
                    {1, 0, 2, 1, 4, 3}, false, 3, {2, 0}, {});
}

TEST(Batch, MakeBatchCountsDegreesInsideEachSubgraph) {
  const Batch b = two_subgraphs();
  EXPECT_EQ(b.num_subgraphs(), 2);
  EXPECT_EQ(b.num_nodes(), 5);
  EXPECT_TRUE(b.block.deg_dst.equal(at::tensor({1.0f, 2.0f, 1.0f, 1.0f, 1.0f})));
}

TEST(Batch, RejectsAnEdgeBetweenTwoSubgraphs) {
  const at::Tensor x = at::zeros({4, 1});
  EXPECT_THROW(make_batch(x, {0, 2, 4}, {0, 2}, {0, 1, 2, 3}, {1, 2}, {2, 1}, false, 2, {0, 1}, {}),
               DataError);
}

TEST(Batch, RejectsARootOutsideItsSubgraphAndBadLabels) {
  const at::Tensor x = at::zeros({4, 1});
  EXPECT_THROW(make_batch(x, {0, 2, 4}, {2, 3}, {0, 1, 2, 3}, {}, {}, false, 2, {0, 1}, {}), DataError);
  EXPECT_THROW(make_batch(x, {0, 2, 4}, {0, 3}, {0, 1, 2, 3}, {}, {}, false, 2, {0, 2}, {}), DataError);
  EXPECT_THROW(make_batch(x, {0, 2, 4}, {0, 3}, {0, 1, 2, 3}, {}, {}, true, 2, {}, {1.0f}), DataError);
  EXPECT_THROW(make_batch(x, {0, 2, 2, 4}, {0, 1, 3}, {0, 1, 2, 3}, {}, {}, false, 2, {0, 1, 1}, {}),
               DataError);  // empty subgraph
}

TEST(Batch, SelectSubgraphsReindexesRowsEdgesAndRoots) {
  const Batch b = two_subgraphs();
  const Batch s = select_subgraphs(b, {1, 0});
  EXPECT_TRUE(s.node_ptr.equal(at::tensor({0, 2, 5}, at::kLong)));
  EXPECT_TRUE(s.node_key.equal(at::tensor({200, 201, 100, 101, 102}, at::kLong)));
  EXPECT_TRUE(s.root.equal(at::tensor({1, 3}, at::kLong)));
  EXPECT_TRUE(s.y.equal(at::tensor({0, 2}, at::kLong)));
  EXPECT_TRUE(s.x[0].equal(b.x[3]));
  EXPECT_EQ(s.block.num_edges(), 6);
  // Every edge of the old path 0-1-2 now connects rows 2-3-4.
  const at::Tensor pairs = s.block.dst * 10 + s.block.src;
  for (std::int64_t want : {23, 32, 34, 43, 1, 10}) {
    EXPECT_TRUE(pairs.eq(want).any().item<bool>()) << want;
  }
  EXPECT_NO_THROW(s.validate(false, 3));
  const Batch one = select_subgraphs(b, {1});
  EXPECT_EQ(one.num_nodes(), 2);
  EXPECT_EQ(one.block.num_edges(), 2);
  EXPECT_THROW(select_subgraphs(b, {2}), DataError);
}

}  // namespace
}  // namespace dpgnn::model
