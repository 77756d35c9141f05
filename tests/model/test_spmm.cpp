// CSR SpMM (spmm.h) against a direct dense reference written here, both backends, with a
// halo; Gnn::layer_forward_csr against the edge-list layer_forward (the pre-SpMM inference)
// for every architecture, on narrowing and widening layers (both aggregation orders).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <random>
#include <vector>

#include "dpgnn/model/gnn.h"
#include "dpgnn/model/spmm.h"
#include "dpgnn/util/error.h"
#include "model/random_batch.h"

namespace dpgnn::model {
namespace {

// A random CSR with `rows` rows over `cols` columns, about `per_row` entries a row (some
// rows empty), in increasing column order.
CsrAdjacency random_csr(std::int64_t rows, std::int64_t cols, int per_row, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> ip{0};
  std::vector<std::int32_t> idx;
  for (std::int64_t i = 0; i < rows; ++i) {
    const int k = i % 7 == 3 ? 0 : static_cast<int>(rng() % (2 * per_row + 1));
    std::vector<std::int32_t> row;
    for (int j = 0; j < k; ++j) row.push_back(static_cast<std::int32_t>(rng() % cols));
    std::sort(row.begin(), row.end());
    idx.insert(idx.end(), row.begin(), row.end());
    ip.push_back(static_cast<std::int64_t>(idx.size()));
  }
  CsrAdjacency a;
  a.indptr = at::tensor(ip, at::kLong);
  a.indices = at::tensor(idx, at::kInt);
  a.num_rows = rows;
  a.num_cols = cols;
  return a;
}

// out[i] = rs[i] * sum_k cs[c_k] * X[c_k], one scalar at a time.
at::Tensor direct(const CsrAdjacency& a, const at::Tensor& x, const at::Tensor& cs, const at::Tensor& rs) {
  at::Tensor out = at::zeros({a.num_rows, x.size(1)}, at::kDouble);
  const auto* ip = a.indptr.data_ptr<std::int64_t>();
  const auto* idx = a.indices.data_ptr<std::int32_t>();
  for (std::int64_t i = 0; i < a.num_rows; ++i)
    for (std::int64_t f = 0; f < x.size(1); ++f) {
      double s = 0;
      for (std::int64_t k = ip[i]; k < ip[i + 1]; ++k)
        s += cs[idx[k]].item<double>() * x[idx[k]][f].item<double>();
      out[i][f] = s * rs[i].item<double>();
    }
  return out;
}

TEST(Spmm, MatchesADirectSumOverLocalAndHaloRowsOnBothBackends) {
  const std::int64_t n_local = 40, n_halo = 25, d = 6;
  const CsrAdjacency a = random_csr(n_local, n_local + n_halo, 4, 3);
  a.validate();
  at::manual_seed(1);
  const at::Tensor local = at::randn({n_local, d}, at::kDouble), halo = at::randn({n_halo, d}, at::kDouble);
  const at::Tensor cs = at::rand({n_local + n_halo}, at::kDouble), rs = at::rand({n_local}, at::kDouble);
  const at::Tensor want = direct(a, at::cat({local, halo}, 0), cs, rs);
  for (SpmmBackend b : {SpmmBackend::kCpuKernel, SpmmBackend::kLibTorchSparse}) {
    // Blocks of at most 7 entries: many row blocks, and rows longer than a block.
    for (std::int64_t block : {std::int64_t{7}, std::int64_t{1} << 20}) {
      const at::Tensor got = csr_spmm(a, local, halo, cs, rs, b, block);
      EXPECT_LE((got - want).abs().max().item<double>(), 1e-12) << static_cast<int>(b) << " block " << block;
    }
  }
  // Scales are optional (1).
  const at::Tensor ones_c = at::ones({n_local + n_halo}, at::kDouble), ones_r = at::ones({n_local}, at::kDouble);
  EXPECT_LE((csr_spmm(a, local, halo, at::Tensor(), at::Tensor()) - direct(a, at::cat({local, halo}, 0), ones_c, ones_r))
                .abs()
                .max()
                .item<double>(),
            1e-12);
}

TEST(Spmm, RefusesMismatchedShapesAndBadCsr) {
  const CsrAdjacency a = random_csr(10, 15, 3, 4);
  const at::Tensor local = at::randn({10, 4}, at::kDouble);
  EXPECT_THROW(csr_spmm(a, local, at::randn({4, 4}, at::kDouble), {}, {}), DataError);   // 5 halo rows needed
  EXPECT_THROW(csr_spmm(a, local, at::randn({5, 3}, at::kDouble), {}, {}), DataError);   // width
  EXPECT_THROW(csr_spmm(a, local, at::randn({5, 4}, at::kDouble), at::ones({3}), {}), DataError);
  CsrAdjacency bad = a;
  bad.num_cols = 5;  // columns up to 14 listed
  EXPECT_THROW(bad.validate(), DataError);
}

// The whole graph on one "rank": the CSR rows of the block's edge list (dst-major).
CsrAdjacency csr_of(const GraphBlock& b) {
  const at::Tensor order = at::argsort(b.dst * b.num_src + b.src);
  const at::Tensor dst = b.dst.index_select(0, order), src = b.src.index_select(0, order);
  CsrAdjacency a;
  a.indptr = at::cat({at::zeros({1}, at::kLong), at::bincount(dst, {}, b.num_dst).cumsum(0)}).to(at::kLong);
  a.indices = src.to(at::kInt).contiguous();
  a.num_rows = b.num_dst;
  a.num_cols = b.num_src;
  return a;
}

TEST(Spmm, CsrLayerForwardEqualsTheEdgeListForwardForEveryArchitectureAndOrder) {
  testing::RandomBatchSpec spec;
  spec.sizes = {30, 17, 1, 25};
  spec.features = 9;
  spec.extra_edge_factor = 1.5;
  const Batch g = testing::random_batch(spec);
  const CsrAdjacency a = csr_of(g.block);
  a.validate();
  int halo_calls = 0;
  const Gnn::HaloExchange no_halo = [&](const at::Tensor& t) {
    ++halo_calls;
    return at::empty({0, t.size(1)}, t.options());
  };
  // hidden 4 < F = 9 (layer 0 narrows: transform first), hidden 20 > F (widens: aggregate first).
  for (int hidden : {4, 20}) {
    for (Arch arch : {Arch::kGcn, Arch::kSage, Arch::kGin, Arch::kMlp}) {
      ModelConfig c;
      c.arch = arch;
      c.layers = 3;
      c.hidden = hidden;
      c.in_features = 9;
      c.num_classes = 3;
      Gnn model(c, 11, at::kCPU, at::kDouble);
      at::Tensor h_old = g.x, h_new = g.x;
      for (int l = 0; l < 3; ++l) {
        halo_calls = 0;
        h_old = model.layer_forward(l, h_old, g.block);
        h_new = model.layer_forward_csr(l, h_new, a, g.block.deg_src, no_halo);
        ASSERT_EQ(h_new.sizes(), h_old.sizes());
        EXPECT_LE((h_new - h_old).abs().max().item<double>(), 1e-12)
            << arch_name(arch) << " hidden " << hidden << " layer " << l;
        EXPECT_EQ(halo_calls, arch == Arch::kMlp ? 0 : 1) << "one exchange per layer";
      }
    }
  }
}

}  // namespace
}  // namespace dpgnn::model
