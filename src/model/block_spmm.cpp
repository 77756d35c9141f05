// The CPU training aggregation over a block's CSR (see block_spmm.h).
#include "block_spmm.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <cstring>
#include <vector>

#include "dpgnn/util/error.h"

namespace dpgnn::model::detail {
namespace {

// Rows per parallel task: a row is a few entries of d values; enough rows to amortise the
// scheduling.
constexpr std::int64_t kRowGrain = 512;

// out[i] = self[i] * x[i] (i < n_self) + sum_{k in row i} w[k] * x[col[k]], rows [0, rows).
template <typename scalar_t>
void rows_kernel(std::int64_t rows, const std::int64_t* ptr, const std::int64_t* col, const scalar_t* w,
                 const scalar_t* self, std::int64_t n_self, const scalar_t* x, std::int64_t d, scalar_t* out) {
  at::parallel_for(0, rows, kRowGrain, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t i = r0; i < r1; ++i) {
      scalar_t* __restrict o = out + i * d;
      std::fill(o, o + d, scalar_t(0));
      for (std::int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
        const scalar_t* __restrict xr = x + col[k] * d;
        const scalar_t wk = w != nullptr ? w[k] : scalar_t(1);
        for (std::int64_t f = 0; f < d; ++f) o[f] += wk * xr[f];
      }
      if (self != nullptr && i < n_self) {
        const scalar_t s = self[i];
        const scalar_t* __restrict xi = x + i * d;
        for (std::int64_t f = 0; f < d; ++f) o[f] += s * xi[f];
      }
    }
  });
}

// One direction of the product: the rows of (ptr, col), weights already in that order.
at::Tensor rows_product(const at::Tensor& x, std::int64_t rows, const at::Tensor& ptr, const at::Tensor& col,
                        const at::Tensor& w, const at::Tensor& self) {
  const at::Tensor xc = x.contiguous();
  at::Tensor out = at::empty({rows, x.size(1)}, x.options());
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "block_aggregate", [&] {
    rows_kernel<scalar_t>(rows, ptr.data_ptr<std::int64_t>(), col.data_ptr<std::int64_t>(),
                          w.defined() ? w.data_ptr<scalar_t>() : nullptr,
                          self.defined() ? self.data_ptr<scalar_t>() : nullptr, self.defined() ? self.size(0) : 0,
                          xc.data_ptr<scalar_t>(), x.size(1), out.data_ptr<scalar_t>());
  });
  return out;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor saved(AutogradContext* ctx, const char* key) {
  const auto it = ctx->saved_data.find(key);
  return it == ctx->saved_data.end() ? at::Tensor() : it->second.toTensor();
}

// The product's constant arrays. Passed to apply as one non-tensor argument: an undefined
// tensor argument is refused as an autograd input by LibTorch 1.13.
struct Arrays {
  std::int64_t num_dst = 0;
  at::Tensor ptr, col, w_rows, tptr, trow, w_cols, self;
};

// Differentiable in z only; the transposed arrays and weights travel in saved_data (the
// defined ones).
struct BlockAggregate : public torch::autograd::Function<BlockAggregate> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& z, const std::shared_ptr<const Arrays>& a) {
    ctx->saved_data["num_src"] = z.size(0);
    for (const auto& [key, t] : {std::pair<const char*, const at::Tensor*>{"tptr", &a->tptr},
                                 {"trow", &a->trow}, {"w_cols", &a->w_cols}, {"self", &a->self}}) {
      if (t->defined()) ctx->saved_data[key] = *t;
    }
    return rows_product(z, a->num_dst, a->ptr, a->col, a->w_rows, a->self);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const std::int64_t num_src = ctx->saved_data["num_src"].toInt();
    // A^T g: row j of the transpose lists the edges out of src j; the self term is diagonal.
    at::Tensor dz = rows_product(grads[0], num_src, saved(ctx, "tptr"), saved(ctx, "trow"), saved(ctx, "w_cols"),
                                 saved(ctx, "self"));
    return {dz, at::Tensor()};
  }
};

// Stable counting sort of edge ids `order` by key[e] in [0, buckets); ptr [buckets + 1] gets
// each key's first position.
std::vector<std::int64_t> counting_sort(const std::vector<std::int64_t>& order, const std::int64_t* key,
                                        std::int64_t buckets, std::vector<std::int64_t>& ptr) {
  ptr.assign(static_cast<std::size_t>(buckets) + 1, 0);
  for (const std::int64_t e : order) ++ptr[static_cast<std::size_t>(key[e]) + 1];
  for (std::size_t k = 0; k < static_cast<std::size_t>(buckets); ++k) ptr[k + 1] += ptr[k];
  std::vector<std::int64_t> next(ptr.begin(), ptr.end() - 1), out(order.size());
  for (const std::int64_t e : order) out[static_cast<std::size_t>(next[static_cast<std::size_t>(key[e])]++)] = e;
  return out;
}

at::Tensor host_int64(const std::vector<std::int64_t>& v) {
  at::Tensor t = at::empty({static_cast<std::int64_t>(v.size())}, at::TensorOptions().dtype(at::kLong));
  if (!v.empty()) std::memcpy(t.data_ptr<std::int64_t>(), v.data(), v.size() * sizeof(std::int64_t));
  return t;
}

// Rows by `row_key` with their columns (`col_key`) sorted: sort by column, then stably by row.
void one_way(const std::int64_t* row_key, std::int64_t rows, const std::int64_t* col_key, std::int64_t cols,
             std::int64_t E, at::Tensor& ptr_t, at::Tensor& col_t, at::Tensor& edge_t) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(E)), ptr, col(static_cast<std::size_t>(E));
  for (std::int64_t e = 0; e < E; ++e) ids[static_cast<std::size_t>(e)] = e;
  const std::vector<std::int64_t> order = counting_sort(counting_sort(ids, col_key, cols, ptr), row_key, rows, ptr);
  for (std::size_t k = 0; k < order.size(); ++k) col[k] = col_key[order[k]];
  ptr_t = host_int64(ptr);
  col_t = host_int64(col);
  edge_t = host_int64(order);
}

thread_local CsrScope* t_scope = nullptr;

}  // namespace

bool block_kernel_applies(const at::Tensor& z) {
  return z.device().is_cpu() && (z.scalar_type() == at::kFloat || z.scalar_type() == at::kDouble);
}

BlockCsr block_csr(const GraphBlock& block) {
  if (!block.dst.device().is_cpu()) throw UsageError("block_csr: the CSR of a block is built on the CPU");
  const at::Tensor d = block.dst.contiguous(), s = block.src.contiguous();
  BlockCsr c;
  c.num_dst = block.num_dst;
  c.num_src = block.num_src;
  const std::int64_t E = d.numel();
  one_way(d.data_ptr<std::int64_t>(), block.num_dst, s.data_ptr<std::int64_t>(), block.num_src, E, c.ptr, c.col,
          c.edge);
  one_way(s.data_ptr<std::int64_t>(), block.num_src, d.data_ptr<std::int64_t>(), block.num_dst, E, c.tptr, c.trow,
          c.tedge);
  return c;
}

at::Tensor block_aggregate(const at::Tensor& z, const BlockCsr& csr, const at::Tensor& edge_weight,
                           const at::Tensor& self_weight) {
  at::Tensor w_rows, w_cols;
  if (edge_weight.defined()) {
    const at::Tensor w = edge_weight.to(z.scalar_type()).contiguous();
    w_rows = w.index_select(0, csr.edge);
    w_cols = w.index_select(0, csr.tedge);
  }
  auto a = std::make_shared<Arrays>();
  a->num_dst = csr.num_dst;
  a->ptr = csr.ptr;
  a->col = csr.col;
  a->w_rows = w_rows;
  a->tptr = csr.tptr;
  a->trow = csr.trow;
  a->w_cols = w_cols;
  a->self = self_weight.defined() ? self_weight.to(z.scalar_type()).contiguous() : at::Tensor();
  return BlockAggregate::apply(z, std::shared_ptr<const Arrays>(std::move(a)));
}

CsrScope::CsrScope(const GraphBlock& block) : block_(&block), csr_(block_csr(block)), outer_(t_scope) {
  t_scope = this;
}

CsrScope::~CsrScope() { t_scope = outer_; }

BlockCsr CsrScope::csr_of(const GraphBlock& block) {
  for (const CsrScope* s = t_scope; s != nullptr; s = s->outer_) {
    if (s->block_ == &block) return s->csr_;
  }
  return block_csr(block);
}

}  // namespace dpgnn::model::detail
