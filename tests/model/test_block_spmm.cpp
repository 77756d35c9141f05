// The CPU training aggregation (model/block_spmm.h): the block's CSR both ways, and the row
// kernel and its backward against a dense product with autograd.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <vector>

#include "block_spmm.h"
#include "dpgnn/model/graph_block.h"

namespace dpgnn::model::detail {
namespace {

// 4 dst rows, 7 src columns, edges in no particular order, not symmetric, one listed twice.
const std::vector<std::int64_t> kDst{3, 0, 2, 0, 1, 3, 0, 2, 1};
const std::vector<std::int64_t> kSrc{6, 5, 0, 1, 4, 2, 1, 6, 0};

TEST(BlockSpmm, CsrListsEachRowsEdgesSortedBothWays) {
  const GraphBlock b = make_block(kDst, kSrc, 4, 7, at::kCPU, at::kDouble);
  const BlockCsr c = block_csr(b);
  EXPECT_TRUE(c.ptr.equal(at::tensor({0, 3, 5, 7, 9}, at::kLong)));
  EXPECT_TRUE(c.col.equal(at::tensor({1, 1, 5, 0, 4, 0, 6, 2, 6}, at::kLong)));
  EXPECT_TRUE(c.edge.equal(at::tensor({3, 6, 1, 8, 4, 2, 7, 5, 0}, at::kLong)));  // stable for the repeat
  EXPECT_TRUE(c.tptr.equal(at::tensor({0, 2, 4, 5, 5, 6, 7, 9}, at::kLong)));
  EXPECT_TRUE(c.trow.equal(at::tensor({1, 2, 0, 0, 3, 1, 0, 2, 3}, at::kLong)));
  const GraphBlock empty = make_block({}, {}, 3, 3, at::kCPU);
  const BlockCsr e = block_csr(empty);
  EXPECT_TRUE(e.ptr.equal(at::zeros({4}, at::kLong)));
  EXPECT_EQ(e.col.numel(), 0);
}

TEST(BlockSpmm, ForwardAndBackwardMatchADenseProduct) {
  const GraphBlock b = make_block(kDst, kSrc, 4, 7, at::kCPU, at::kDouble);
  const at::Tensor w = at::rand({9}, at::kDouble) + 0.5;
  const at::Tensor self = at::rand({4}, at::kDouble);
  at::Tensor dense = at::zeros({4, 7}, at::kDouble);
  for (std::size_t e = 0; e < kDst.size(); ++e) {
    dense[kDst[e]][kSrc[e]] += w[static_cast<std::int64_t>(e)];
  }
  for (const bool weighted : {true, false}) {
    const at::Tensor z = at::randn({7, 3}, at::kDouble).requires_grad_(true);
    const at::Tensor r = at::randn({4, 3}, at::kDouble);  // a random linear loss
    const at::Tensor out = block_aggregate(z, block_csr(b), weighted ? w : at::Tensor(), weighted ? self : at::Tensor());
    // Unweighted: the pattern with multiplicity (the repeated edge counts twice), no self term.
    at::Tensor counts = at::zeros({4, 7}, at::kDouble);
    for (std::size_t e = 0; e < kDst.size(); ++e) counts[kDst[e]][kSrc[e]] += 1.0;
    const at::Tensor ref = weighted ? at::mm(dense, z) + self.unsqueeze(1) * z.narrow(0, 0, 4) : at::mm(counts, z);
    EXPECT_TRUE(at::allclose(out, ref, 1e-12, 1e-12)) << weighted;
    const at::Tensor g = torch::autograd::grad({(out * r).sum()}, {z})[0];
    const at::Tensor g_ref = torch::autograd::grad({(ref * r).sum()}, {z})[0];
    EXPECT_TRUE(at::allclose(g, g_ref, 1e-12, 1e-12)) << weighted;
  }
}

TEST(BlockSpmm, AScopeLendsItsCsrToItsBlockOnly) {
  const GraphBlock b = make_block(kDst, kSrc, 4, 7, at::kCPU);
  const GraphBlock other = make_block({0}, {1}, 2, 2, at::kCPU);
  const CsrScope scope(b);
  const BlockCsr c1 = CsrScope::csr_of(b), c2 = CsrScope::csr_of(b);
  EXPECT_TRUE(c1.ptr.is_same(c2.ptr));  // the scope's arrays, not built again
  const BlockCsr o = CsrScope::csr_of(other);
  EXPECT_EQ(o.num_dst, 2);
  EXPECT_TRUE(o.ptr.equal(at::tensor({0, 1, 1}, at::kLong)));
}

}  // namespace
}  // namespace dpgnn::model::detail
