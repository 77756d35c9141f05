// CSR sparse-dense products for full-neighbourhood inference (see spmm.h).
#include "dpgnn/model/spmm.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <string>

#include "dpgnn/util/error.h"

namespace dpgnn::model {
namespace {

// Rows per parallel task: enough work per task to amortise the scheduling.
constexpr std::int64_t kRowGrain = 256;

template <typename scalar_t>
void cpu_kernel(const CsrAdjacency& adj, const at::Tensor& local, const at::Tensor& halo,
                const at::Tensor& col_scale, const at::Tensor& row_scale, at::Tensor& out) {
  const std::int64_t d = out.size(1);
  const std::int64_t n_local = local.size(0);
  const auto* ip = adj.indptr.data_ptr<std::int64_t>();
  const auto* idx = adj.indices.data_ptr<std::int32_t>();
  const scalar_t* lp = local.data_ptr<scalar_t>();
  const scalar_t* hp = halo.defined() ? halo.data_ptr<scalar_t>() : nullptr;
  const scalar_t* cs = col_scale.defined() ? col_scale.data_ptr<scalar_t>() : nullptr;
  const scalar_t* rs = row_scale.defined() ? row_scale.data_ptr<scalar_t>() : nullptr;
  scalar_t* op = out.data_ptr<scalar_t>();
  at::parallel_for(0, adj.num_rows, kRowGrain, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t i = r0; i < r1; ++i) {
      scalar_t* __restrict o = op + i * d;
      std::fill(o, o + d, scalar_t(0));
      for (std::int64_t k = ip[i]; k < ip[i + 1]; ++k) {
        const std::int64_t c = idx[k];
        const scalar_t* __restrict x = c < n_local ? lp + c * d : hp + (c - n_local) * d;
        const scalar_t s = cs != nullptr ? cs[c] : scalar_t(1);
        for (std::int64_t f = 0; f < d; ++f) o[f] += s * x[f];
      }
      if (rs != nullptr) {
        const scalar_t s = rs[i];
        for (std::int64_t f = 0; f < d; ++f) o[f] *= s;
      }
    }
  });
}

// Row blocks [r0, r1) with at most max_entries entries each (a longer row is a block alone).
template <typename F>
void for_each_row_block(const CsrAdjacency& adj, std::int64_t max_entries, F&& f) {
  const auto* ip = adj.indptr.data_ptr<std::int64_t>();
  std::int64_t r0 = 0;
  while (r0 < adj.num_rows) {
    std::int64_t r1 = r0 + 1;
    while (r1 < adj.num_rows && ip[r1 + 1] - ip[r0] <= max_entries) ++r1;
    f(r0, r1);
    r0 = r1;
  }
}

at::Tensor sparse_blocks(const CsrAdjacency& adj, const at::Tensor& local, const at::Tensor& halo,
                         const at::Tensor& col_scale, const at::Tensor& row_scale, std::int64_t max_entries) {
  const std::int64_t d = local.size(1);
  const at::Tensor x = halo.defined() && halo.size(0) > 0 ? at::cat({local, halo}, 0) : local;
  at::Tensor out = at::empty({adj.num_rows, d}, local.options());
  const auto* ip = adj.indptr.data_ptr<std::int64_t>();
  const auto dev = local.device();
  const auto host = local.options().device(c10::kCPU);
  const at::Tensor cs_host = col_scale.defined() ? col_scale.to(host) : at::Tensor();
  for_each_row_block(adj, max_entries, [&](std::int64_t r0, std::int64_t r1) {
    const std::int64_t e0 = ip[r0], e1 = ip[r1];
    // A COO block (rows may list columns unsorted or twice: coalesce sorts and sums them),
    // built on the host and moved; at::mm runs cuSPARSE on CUDA.
    const at::Tensor counts = adj.indptr.slice(0, r0 + 1, r1 + 1) - adj.indptr.slice(0, r0, r1);
    const at::Tensor rows = at::repeat_interleave(at::arange(r1 - r0, at::kLong), counts);
    const at::Tensor col = adj.indices.slice(0, e0, e1).to(at::kLong);
    const at::Tensor val = cs_host.defined() ? cs_host.index_select(0, col) : at::ones({e1 - e0}, host);
    const at::Tensor a =
        at::sparse_coo_tensor(at::stack({rows, col}), val, {r1 - r0, x.size(0)}).coalesce().to(dev);
    out.slice(0, r0, r1).copy_(at::mm(a, x));  // [r1 - r0, d]
  });
  if (row_scale.defined()) out.mul_(row_scale.unsqueeze(1));
  return out;
}

}  // namespace

void CsrAdjacency::validate() const {
  auto bad = [](const std::string& what) { throw DataError("CSR adjacency", "", what); };
  if (!indptr.defined() || !indices.defined()) bad("indptr and indices must be set");
  if (indptr.scalar_type() != at::kLong || indptr.dim() != 1 || !indptr.device().is_cpu())
    bad("indptr must be a CPU int64 vector");
  if (indices.scalar_type() != at::kInt || indices.dim() != 1 || !indices.device().is_cpu())
    bad("indices must be a CPU int32 vector");
  if (!indptr.is_contiguous() || !indices.is_contiguous()) bad("indptr and indices must be contiguous");
  if (indptr.numel() != num_rows + 1) bad("indptr needs num_rows + 1 entries");
  const auto* ip = indptr.data_ptr<std::int64_t>();
  if (ip[0] != 0 || ip[num_rows] != indices.numel()) bad("indptr must run from 0 to the number of entries");
  for (std::int64_t i = 0; i < num_rows; ++i)
    if (ip[i + 1] < ip[i]) bad("indptr is not monotone at row " + std::to_string(i));
  if (indices.numel() > 0) {
    const auto lo = indices.min().item<std::int32_t>(), hi = indices.max().item<std::int32_t>();
    if (lo < 0 || hi >= num_cols) bad("a column index is outside [0, " + std::to_string(num_cols) + ")");
  }
}

at::Tensor csr_spmm(const CsrAdjacency& adj, const at::Tensor& local, const at::Tensor& halo,
                    const at::Tensor& col_scale, const at::Tensor& row_scale, SpmmBackend backend,
                    std::int64_t max_block_entries) {
  if (local.dim() != 2 || local.size(0) < adj.num_rows)
    throw DataError("csr_spmm", "local", "must be [n_local >= " + std::to_string(adj.num_rows) + ", d]");
  const std::int64_t n_halo = adj.num_cols - local.size(0);
  const std::int64_t halo_rows = halo.defined() ? halo.size(0) : 0;
  if (n_halo < 0 || halo_rows != n_halo || (halo.defined() && (halo.dim() != 2 || halo.size(1) != local.size(1))))
    throw DataError("csr_spmm", "halo", "must be [" + std::to_string(std::max<std::int64_t>(n_halo, 0)) + ", " +
                                            std::to_string(local.size(1)) + "]");
  if (col_scale.defined() && col_scale.numel() != adj.num_cols)
    throw DataError("csr_spmm", "col_scale", "must have num_cols entries");
  if (row_scale.defined() && row_scale.numel() != adj.num_rows)
    throw DataError("csr_spmm", "row_scale", "must have num_rows entries");
  if (max_block_entries < 1) throw UsageError("csr_spmm: max_block_entries must be >= 1");
  if (backend == SpmmBackend::kAuto)
    backend = local.device().is_cpu() ? SpmmBackend::kCpuKernel : SpmmBackend::kLibTorchSparse;
  const auto opts = local.options();
  auto same = [&](const at::Tensor& t) {
    return t.defined() ? t.to(opts).contiguous() : t;
  };
  const at::Tensor l = local.contiguous(), h = same(halo), cs = same(col_scale), rs = same(row_scale);
  if (backend == SpmmBackend::kLibTorchSparse) return sparse_blocks(adj, l, h, cs, rs, max_block_entries);
  if (!local.device().is_cpu()) throw UsageError("csr_spmm: the CPU kernel needs CPU tensors");
  at::Tensor out = at::empty({adj.num_rows, local.size(1)}, opts);
  AT_DISPATCH_FLOATING_TYPES(l.scalar_type(), "csr_spmm", [&] { cpu_kernel<scalar_t>(adj, l, h, cs, rs, out); });
  return out;
}

}  // namespace dpgnn::model
