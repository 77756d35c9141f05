// APPR by ISTA on the l1-regularised PageRank problem (see appr.h for the objective and the
// sources: Fountoulakis et al. 2019, Algorithm 3; DPAR, Zhang et al., Sec. 3.1).
#include "dpgnn/sampling/appr.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

namespace dpgnn::sampling {
namespace {

void check_options(const ApprOptions& o) {
  // std::isnan checks are spelled out: comparisons with NaN are false and would pass.
  if (!(o.alpha > 0.0 && o.alpha < 1.0))
    throw std::invalid_argument("appr_ista: alpha must be in (0, 1), got " + std::to_string(o.alpha));
  if (!(o.rho >= 0.0) || std::isinf(o.rho))
    throw std::invalid_argument("appr_ista: rho must be finite and >= 0, got " + std::to_string(o.rho));
  if (!(o.epsilon >= 0.0) || std::isinf(o.epsilon))
    throw std::invalid_argument("appr_ista: epsilon must be finite and >= 0, got " + std::to_string(o.epsilon));
  if (o.max_iterations < 1)
    throw std::invalid_argument("appr_ista: max_iterations must be >= 1, got " + std::to_string(o.max_iterations));
}

// The rows ISTA needs, fetched once each: the full row (copied) of every node that has been
// in the support, the degree of every node seen. Sized by the support's neighbourhood only.
class RowCache {
 public:
  explicit RowCache(NeighbourSource& g) : graph_(g) {}

  // sqrt(d_i) of a node (reads its row the first time).
  double sqrt_degree(std::int64_t node) {
    auto it = sqrt_deg_.find(node);
    if (it != sqrt_deg_.end()) return it->second;
    const auto& row = graph_.neighbours(node);
    ++rows_read_;
    const double s = std::sqrt(static_cast<double>(row.size()));
    sqrt_deg_.emplace(node, s);
    return s;
  }
  // The neighbour list of a support node (a copy kept for the next iterations).
  const std::vector<std::int64_t>& row(std::int64_t node) {
    auto it = rows_.find(node);
    if (it != rows_.end()) return it->second;
    const auto& r = graph_.neighbours(node);
    if (sqrt_deg_.find(node) == sqrt_deg_.end()) {
      ++rows_read_;
      sqrt_deg_.emplace(node, std::sqrt(static_cast<double>(r.size())));
    }
    return rows_.emplace(node, r).first->second;
  }
  std::int64_t rows_read() const { return rows_read_; }

 private:
  NeighbourSource& graph_;
  std::unordered_map<std::int64_t, double> sqrt_deg_;
  std::unordered_map<std::int64_t, std::vector<std::int64_t>> rows_;
  std::int64_t rows_read_ = 0;
};

}  // namespace

SparseVector appr_ista(NeighbourSource& graph, std::int64_t source, const ApprOptions& o, ApprInfo* info) {
  check_options(o);
  ApprInfo local;
  ApprInfo& st = info ? *info : local;
  st = ApprInfo{};

  RowCache cache(graph);
  const double sqrt_ds = cache.sqrt_degree(source);
  if (sqrt_ds == 0.0) {
    // Isolated source: D^{-1/2} s is undefined. Documented choice (appr.h): the PageRank of a
    // walk that never leaves the source, p = e_source.
    st.converged = true;
    st.rows_read = cache.rows_read();
    return SparseVector{{source}, {1.0}};
  }

  const double alpha = o.alpha;
  const double thresh = o.rho * alpha;                      // prox threshold per unit sqrt(d_i)
  const double stop = (1.0 + o.epsilon) * o.rho * alpha;    // termination level (Algorithm 3)
  const double diag = (1.0 + alpha) / 2.0;                  // Q = (1+a)/2 I - (1-a)/2 D^-1/2 A D^-1/2
  const double off = (1.0 - alpha) / 2.0;

  // q restricted to its support (q_i > 0); all other entries are 0.
  std::unordered_map<std::int64_t, double> q;
  // grad f(q) = Q q - alpha D^{-1/2} s on the nodes where it can be non-zero: the support,
  // its neighbours and the source (grad f is 0 elsewhere, since Q's off-diagonal entries
  // follow the edges). Stored with sqrt(d_i) for the prox and the termination test.
  // `mag` sums the magnitudes of the terms of grad (for the rounding allowance below).
  struct Entry { double grad; double sqrt_d; double mag; };
  std::unordered_map<std::int64_t, Entry> grad;

  auto compute_gradient = [&]() {
    grad.clear();
    grad.reserve(q.size() * 4 + 1);
    // (A D^{-1/2} q)_i accumulated by scattering each support node's q_j / sqrt(d_j).
    std::unordered_map<std::int64_t, double> acc;
    for (const auto& [j, qj] : q) {
      const auto& row = cache.row(j);
      const double w = qj / cache.sqrt_degree(j);
      for (const std::int64_t i : row) acc[i] += w;
    }
    for (const auto& [i, qi] : q) grad[i] = Entry{diag * qi, cache.sqrt_degree(i), diag * qi};
    for (const auto& [i, a] : acc) {
      const double sd = cache.sqrt_degree(i);
      auto it = grad.try_emplace(i, Entry{0.0, sd, 0.0}).first;
      it->second.grad -= off * a / sd;
      it->second.mag += off * a / sd;
    }
    // - alpha D^{-1/2} s: only the source's entry.
    auto it = grad.try_emplace(source, Entry{0.0, sqrt_ds, 0.0}).first;
    it->second.grad -= alpha / sqrt_ds;
    it->second.mag += alpha / sqrt_ds;
  };

  compute_gradient();  // q_0 = 0: grad = -alpha D^{-1/2} s
  for (;;) {
    // Termination (Fountoulakis et al. 2019, Algorithm 3): ||D^{-1/2} grad f(q_k)||_inf <= (1+eps) rho alpha.
    // Each |grad_i| is first reduced by an allowance for its rounding error (64 ulps of the
    // sum of its terms' magnitudes): at the minimiser |grad_i| = rho alpha sqrt(d_i) exactly,
    // so with rho near the rounding level (or rho = 0) the test could otherwise never hold.
    // For DPAR's rho = 1e-4 the allowance is below 1e-9 of the threshold.
    bool done = true;
    for (const auto& [i, e] : grad) {
      const double rounding = 64.0 * std::numeric_limits<double>::epsilon() * e.mag;
      if (std::fabs(e.grad) - rounding > stop * e.sqrt_d) { done = false; break; }
    }
    if (done) { st.converged = true; break; }
    if (st.iterations >= o.max_iterations) break;
    // q_{k+1} = prox_g(q_k - grad f(q_k)) with step 1, prox_g(z)_i = sign(z_i) max(|z_i| - rho alpha sqrt(d_i), 0)
    // (ibid., Algorithm 3; soft thresholding, Beck & Teboulle 2009 for ISTA in general). Off
    // the gradient's nodes q_i = grad_i = 0, so they stay 0.
    std::unordered_map<std::int64_t, double> next;
    next.reserve(grad.size());
    for (const auto& [i, e] : grad) {
      auto qi_it = q.find(i);
      const double z = (qi_it == q.end() ? 0.0 : qi_it->second) - e.grad;
      const double t = thresh * e.sqrt_d;
      const double v = std::fabs(z) > t ? std::copysign(std::fabs(z) - t, z) : 0.0;
      // Started at 0 the iterates are non-negative (ibid.); a negative entry never arises, and
      // we keep only the positive ones as the support.
      if (v > 0.0) next.emplace(i, v);
    }
    q.swap(next);
    ++st.iterations;
    compute_gradient();
  }
  st.rows_read = cache.rows_read();

  // p = D^{1/2} q (ista_dinput_dense.py returns the same; DPAR uses p as the importance scores).
  std::vector<std::pair<std::int64_t, double>> out;
  out.reserve(q.size());
  for (const auto& [i, qi] : q) {
    const double p = qi * cache.sqrt_degree(i);
    if (p > 0.0) out.emplace_back(i, p);
  }
  std::sort(out.begin(), out.end());
  SparseVector r;
  r.index.reserve(out.size());
  r.value.reserve(out.size());
  for (const auto& [i, p] : out) {
    r.index.push_back(i);
    r.value.push_back(p);
  }
  return r;
}

}  // namespace dpgnn::sampling
