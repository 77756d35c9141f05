// Per-subgraph ghost norms on the CPU from contiguous row blocks (see segment_norms.h).
#include "segment_norms.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "dpgnn/util/error.h"

namespace dpgnn::model::detail {
namespace {

// Subgraphs per parallel task: a subgraph is O(S^2 d) work, a few of them amortise a task.
constexpr std::int64_t kSubgraphGrain = 8;

// The loop over a range of subgraphs is built twice on x86-64 Linux with GCC, for the baseline
// ISA and for x86-64-v3 (AVX2 + FMA), and the loader picks one per machine (an ifunc): the dot
// products run on 256-bit vectors where the CPU has them (about 1.4x faster norms than SSE2 on
// the bench machine), and the binary still runs on any x86-64. The helpers below are always
// inlined into it, so they are built for both targets.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define DPGNN_ISA_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#define DPGNN_INLINE inline __attribute__((always_inline))
#else
#define DPGNN_ISA_CLONES
#define DPGNN_INLINE inline
#endif

// x.y with K independent partial sums (two 256-bit registers' worth): the loop vectorises
// without reassociating a single accumulator (this file is built with -O3), and the partial
// sums are combined in a fixed order, so the result depends only on the inputs.
template <typename T>
DPGNN_INLINE T dot(const T* __restrict x, const T* __restrict y, std::int64_t d) {
  constexpr int K = 64 / static_cast<int>(sizeof(T));
  T acc[K] = {};
  std::int64_t k = 0;
  for (; k + K <= d; k += K) {
    for (int l = 0; l < K; ++l) acc[l] += x[k + l] * y[k + l];
  }
  T tail = 0;
  for (; k < d; ++k) tail += x[k] * y[k];
  for (int w = K / 2; w > 0; w /= 2) {
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  }
  return acc[0] + tail;
}

template <typename T>
struct Scratch {
  std::vector<std::int64_t> rows;  // rows of the subgraph whose g_i is not zero
  std::vector<double> g2;          // their ||g_i||^2
  std::vector<double> vec;         // [d_out] sum of the g_i (bias gradient)
  std::vector<T> mat;              // [d_in, d_out] materialised A_s^T G_s
};

template <typename T>
DPGNN_INLINE double bias_norm2(const T* G, std::int64_t dout, Scratch<T>& sc) {
  sc.vec.assign(static_cast<std::size_t>(dout), 0.0);
  for (const std::int64_t i : sc.rows) {
    const T* g = G + i * dout;
    for (std::int64_t c = 0; c < dout; ++c) sc.vec[static_cast<std::size_t>(c)] += static_cast<double>(g[c]);
  }
  double n2 = 0.0;
  for (const double v : sc.vec) n2 += v * v;
  return n2;
}

// Squared norm of one subgraph's gradient of one map's parameters; A and G point at the
// subgraph's first row, S rows.
template <typename T>
DPGNN_INLINE double map_norm2(const T* A, std::int64_t din, const T* G, std::int64_t dout, std::int64_t S,
                 bool has_weight, bool has_bias, NormStrategy strategy, Scratch<T>& sc) {
  sc.rows.clear();
  sc.g2.clear();
  for (std::int64_t i = 0; i < S; ++i) {
    const double n = static_cast<double>(dot(G + i * dout, G + i * dout, dout));
    if (n != 0.0) {
      sc.rows.push_back(i);
      sc.g2.push_back(n);
    }
  }
  const auto k = static_cast<std::int64_t>(sc.rows.size());
  if (k == 0) return 0.0;
  if (A == nullptr) return has_bias ? bias_norm2(G, dout, sc) : 0.0;
  const double beta = has_bias ? 1.0 : 0.0;  // the bias is a weight on a constant-1 input column
  auto gram_a = [&](std::int64_t i, std::int64_t j) {
    return has_weight ? static_cast<double>(dot(A + i * din, A + j * din, din)) + beta : beta;
  };
  if (k == 1 || use_ghost(k, din, dout, strategy)) {
    // sum_{i,j} (a_i.a_j + beta)(g_i.g_j) over the non-zero rows, symmetric half.
    double acc = 0.0;
    for (std::int64_t p = 0; p < k; ++p) {
      const std::int64_t i = sc.rows[static_cast<std::size_t>(p)];
      acc += gram_a(i, i) * sc.g2[static_cast<std::size_t>(p)];
      double off = 0.0;
      for (std::int64_t q = 0; q < p; ++q) {
        const std::int64_t j = sc.rows[static_cast<std::size_t>(q)];
        off += gram_a(i, j) * static_cast<double>(dot(G + i * dout, G + j * dout, dout));
      }
      acc += 2.0 * off;
    }
    return acc;
  }
  // Materialise: M = A_s^T G_s [d_in, d_out], one rank-1 update per non-zero row.
  double n2 = 0.0;
  if (has_weight) {
    sc.mat.assign(static_cast<std::size_t>(din * dout), T(0));
    T* M = sc.mat.data();
    for (const std::int64_t i : sc.rows) {
      const T* a = A + i * din;
      const T* __restrict g = G + i * dout;
      for (std::int64_t r = 0; r < din; ++r) {
        const T ar = a[r];
        if (ar == T(0)) continue;
        T* __restrict m = M + r * dout;
        for (std::int64_t c = 0; c < dout; ++c) m[c] += ar * g[c];
      }
    }
    n2 = static_cast<double>(dot(M, M, din * dout));
  }
  if (has_bias) n2 += bias_norm2(G, dout, sc);
  return n2;
}

template <typename T>
struct Raw {
  int layer;
  bool w, b;
  const T* A;
  std::int64_t din;
  const T* G;
  std::int64_t dout;
};

template <typename T>
DPGNN_INLINE void subgraph_range(const std::vector<Raw<T>>& raw, const std::int64_t* ptr, std::int64_t B,
                                 std::int64_t s0, std::int64_t s1, NormStrategy strategy, double* out) {
  Scratch<T> sc;
  for (std::int64_t s = s0; s < s1; ++s) {
    const std::int64_t r0 = ptr[s], S = ptr[s + 1] - ptr[s];
    for (const Raw<T>& m : raw) {
      out[m.layer * B + s] += map_norm2<T>(m.A != nullptr ? m.A + r0 * m.din : nullptr, m.din, m.G + r0 * m.dout,
                                           m.dout, S, m.w, m.b, strategy, sc);
    }
  }
}

// One non-template function per dtype (target_clones takes no templates).
DPGNN_ISA_CLONES void range_f32(const std::vector<Raw<float>>& raw, const std::int64_t* ptr, std::int64_t B,
                                std::int64_t s0, std::int64_t s1, NormStrategy strategy, double* out) {
  subgraph_range<float>(raw, ptr, B, s0, s1, strategy, out);
}
DPGNN_ISA_CLONES void range_f64(const std::vector<Raw<double>>& raw, const std::int64_t* ptr, std::int64_t B,
                                std::int64_t s0, std::int64_t s1, NormStrategy strategy, double* out) {
  subgraph_range<double>(raw, ptr, B, s0, s1, strategy, out);
}
void range(const std::vector<Raw<float>>& raw, const std::int64_t* ptr, std::int64_t B, std::int64_t s0,
           std::int64_t s1, NormStrategy strategy, double* out) {
  range_f32(raw, ptr, B, s0, s1, strategy, out);
}
void range(const std::vector<Raw<double>>& raw, const std::int64_t* ptr, std::int64_t B, std::int64_t s0,
           std::int64_t s1, NormStrategy strategy, double* out) {
  range_f64(raw, ptr, B, s0, s1, strategy, out);
}

template <typename T>
void run(const std::vector<SegmentMap>& maps, const std::int64_t* ptr, std::int64_t B, NormStrategy strategy,
         double* out) {
  std::vector<Raw<T>> raw;
  for (const SegmentMap& m : maps) {
    raw.push_back({m.layer, m.has_weight, m.has_bias, m.input.defined() ? m.input.data_ptr<T>() : nullptr,
                   m.input.defined() ? m.input.size(1) : 0, m.grad.data_ptr<T>(), m.grad.size(1)});
  }
  at::parallel_for(0, B, kSubgraphGrain,
                   [&](std::int64_t s0, std::int64_t s1) { range(raw, ptr, B, s0, s1, strategy, out); });
}

}  // namespace

bool use_ghost(std::int64_t k, std::int64_t din, std::int64_t dout, NormStrategy s) {
  if (s == NormStrategy::kGhost) return true;
  if (s == NormStrategy::kMaterialize) return false;
  // flops of two Gram matrices + inner product vs one per-sample gradient + its square sum
  const double ghost = static_cast<double>(k * k) * static_cast<double>(din + dout + 1);
  const double mat = static_cast<double>(k + 1) * static_cast<double>(din) * static_cast<double>(dout);
  return ghost <= mat;
}

at::Tensor segment_norms_cpu(const std::vector<SegmentMap>& maps, const std::int64_t* node_ptr,
                             std::int64_t num_subgraphs, int num_layers, NormStrategy strategy) {
  at::Tensor out = at::zeros({num_layers, num_subgraphs}, at::TensorOptions().dtype(at::kDouble));
  if (maps.empty() || num_subgraphs == 0) return out;
  const c10::ScalarType dtype = maps.front().grad.scalar_type();
  for (const SegmentMap& m : maps) {
    if (!m.grad.device().is_cpu() || !m.grad.is_contiguous() || m.grad.scalar_type() != dtype ||
        m.layer < 0 || m.layer >= num_layers ||
        (m.input.defined() && (!m.input.is_contiguous() || m.input.scalar_type() != dtype ||
                               m.input.size(0) != m.grad.size(0)))) {
      throw Error("segment_norms_cpu: maps must be contiguous CPU tensors of one dtype", kExitInternal);
    }
  }
  AT_DISPATCH_FLOATING_TYPES(dtype, "segment_norms_cpu", [&] {
    run<scalar_t>(maps, node_ptr, num_subgraphs, strategy, out.data_ptr<double>());
  });
  return out;
}

}  // namespace dpgnn::model::detail
