// GraphBlock construction and validation (see include/dpgnn/model/graph_block.h).
#include "dpgnn/model/graph_block.h"

#include <ATen/ATen.h>

#include <cstring>
#include <string>

#include "dpgnn/util/error.h"

namespace dpgnn::model {
namespace {

// One copy, no kernel (blocks may be built on a thread beside the step's OpenMP team).
at::Tensor host_int64(const std::vector<std::int64_t>& v) {
  at::Tensor t = at::empty({static_cast<std::int64_t>(v.size())}, at::TensorOptions().dtype(at::kLong));
  if (!v.empty()) std::memcpy(t.data_ptr<std::int64_t>(), v.data(), v.size() * sizeof(std::int64_t));
  return t;
}

// Degrees in the block's floating dtype: a host loop for float32 / float64 on the CPU.
at::Tensor host_degrees(const std::vector<double>& v, c10::Device device, c10::ScalarType dtype) {
  const auto n = static_cast<std::int64_t>(v.size());
  if (device.is_cpu() && dtype == at::kFloat) {
    at::Tensor t = at::empty({n}, at::TensorOptions().dtype(at::kFloat));
    float* p = t.data_ptr<float>();
    for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(v[static_cast<std::size_t>(i)]);
    return t;
  }
  at::Tensor t = at::empty({n}, at::TensorOptions().dtype(at::kDouble));
  if (n > 0) std::memcpy(t.data_ptr<double>(), v.data(), v.size() * sizeof(double));
  return t.to(device, dtype);
}

void check_edges(const std::vector<std::int64_t>& dst, const std::vector<std::int64_t>& src,
                 std::int64_t num_dst, std::int64_t num_src) {
  if (num_dst < 0 || num_src < num_dst) {
    throw DataError("graph block", "", "needs 0 <= num_dst <= num_src, got num_dst=" +
                                           std::to_string(num_dst) +
                                           " num_src=" + std::to_string(num_src));
  }
  if (dst.size() != src.size()) {
    throw DataError("graph block", "edges", "dst has " + std::to_string(dst.size()) +
                                                " entries but src has " + std::to_string(src.size()));
  }
  for (std::size_t e = 0; e < dst.size(); ++e) {
    if (dst[e] < 0 || dst[e] >= num_dst || src[e] < 0 || src[e] >= num_src) {
      throw DataError("graph block", "edge " + std::to_string(e),
                      "(dst " + std::to_string(dst[e]) + ", src " + std::to_string(src[e]) +
                          ") outside [0, " + std::to_string(num_dst) + ") x [0, " +
                          std::to_string(num_src) + ")");
    }
    if (dst[e] == src[e]) {
      throw DataError("graph block", "edge " + std::to_string(e),
                      "self loop on node " + std::to_string(dst[e]) +
                          " (self connections are added by the model; do not list them)");
    }
  }
}

}  // namespace

GraphBlock GraphBlock::to(c10::Device device, c10::ScalarType float_dtype) const {
  GraphBlock b = *this;
  b.dst = dst.to(device);
  b.src = src.to(device);
  b.deg_dst = deg_dst.to(device, float_dtype);
  b.deg_src = deg_src.to(device, float_dtype);
  return b;
}

void GraphBlock::validate() const {
  if (!dst.defined() || !src.defined() || !deg_dst.defined() || !deg_src.defined()) {
    throw DataError("graph block", "", "dst, src, deg_dst and deg_src must all be set");
  }
  if (dst.dim() != 1 || src.dim() != 1 || dst.size(0) != src.size(0) ||
      dst.scalar_type() != at::kLong || src.scalar_type() != at::kLong) {
    throw DataError("graph block", "edges", "dst and src must be int64 vectors of equal length");
  }
  if (num_dst < 0 || num_src < num_dst) {
    throw DataError("graph block", "", "needs 0 <= num_dst <= num_src");
  }
  if (deg_dst.dim() != 1 || deg_dst.size(0) != num_dst || deg_src.dim() != 1 ||
      deg_src.size(0) != num_src) {
    throw DataError("graph block", "degrees",
                    "deg_dst must be [num_dst] and deg_src [num_src], got " +
                        std::to_string(deg_dst.numel()) + " and " + std::to_string(deg_src.numel()));
  }
  if (num_edges() > 0) {
    const bool dst_ok = dst.min().item<std::int64_t>() >= 0 && dst.max().item<std::int64_t>() < num_dst;
    const bool src_ok = src.min().item<std::int64_t>() >= 0 && src.max().item<std::int64_t>() < num_src;
    if (!dst_ok || !src_ok) throw DataError("graph block", "edges", "an edge index is out of range");
    if (dst.eq(src).any().item<bool>()) {
      throw DataError("graph block", "edges", "self loops must not be listed");
    }
  }
}

GraphBlock make_block(const std::vector<std::int64_t>& dst, const std::vector<std::int64_t>& src,
                      std::int64_t num_dst, std::int64_t num_src, c10::Device device,
                      c10::ScalarType float_dtype) {
  check_edges(dst, src, num_dst, num_src);
  std::vector<double> deg_dst(static_cast<std::size_t>(num_dst), 0.0);
  std::vector<double> deg_src(static_cast<std::size_t>(num_src), 0.0);
  for (std::size_t e = 0; e < dst.size(); ++e) {
    deg_dst[static_cast<std::size_t>(dst[e])] += 1.0;
    deg_src[static_cast<std::size_t>(src[e])] += 1.0;
  }
  return make_block_with_degrees(dst, src, num_dst, num_src, deg_dst, deg_src, device, float_dtype);
}

GraphBlock make_block_with_degrees(const std::vector<std::int64_t>& dst,
                                   const std::vector<std::int64_t>& src, std::int64_t num_dst,
                                   std::int64_t num_src, const std::vector<double>& deg_dst,
                                   const std::vector<double>& deg_src, c10::Device device,
                                   c10::ScalarType float_dtype) {
  check_edges(dst, src, num_dst, num_src);
  if (static_cast<std::int64_t>(deg_dst.size()) != num_dst ||
      static_cast<std::int64_t>(deg_src.size()) != num_src) {
    throw DataError("graph block", "degrees",
                    "expected " + std::to_string(num_dst) + " dst and " + std::to_string(num_src) +
                        " src degrees, got " + std::to_string(deg_dst.size()) + " and " +
                        std::to_string(deg_src.size()));
  }
  for (double d : deg_dst) {
    if (!(d >= 0.0)) throw DataError("graph block", "deg_dst", "degrees must be >= 0");
  }
  for (double d : deg_src) {
    if (!(d >= 0.0)) throw DataError("graph block", "deg_src", "degrees must be >= 0");
  }
  GraphBlock b;
  b.dst = host_int64(dst).to(device);
  b.src = host_int64(src).to(device);
  b.num_dst = num_dst;
  b.num_src = num_src;
  b.deg_dst = host_degrees(deg_dst, device, float_dtype);
  b.deg_src = host_degrees(deg_src, device, float_dtype);
  return b;
}

}  // namespace dpgnn::model
