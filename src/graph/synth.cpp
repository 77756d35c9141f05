// Degree-corrected stochastic block model with class-correlated features (see
// include/dpgnn/graph/synth.h for the model and docs/synth.md for the user's view).
//
// How it is built, and why:
//   - Determinism independent of threads: every random stream is a Philox stream keyed by
//     (seed, what, index) (util/rng.h, Salmon et al. SC 2011): classes and splits by
//     (seed, stream) shuffles, propensities and feature rows by (seed, node), edges by
//     (seed, round, kind, block of 2^16 edges). Threads only decide who computes a block;
//     blocks land at fixed offsets, and floating-point sums run in a fixed order.
//   - Edges are packed into one 64-bit key (min << 32 | max) per undirected pair, sorted
//     and deduplicated (self-loops dropped), then merged with the edges already kept.
//     Walking the sorted keys and appending v to row u and u to row v yields every CSR
//     row already sorted (row x receives its smaller neighbours in increasing order
//     before any larger one), so no per-row sort is needed. Peak memory is about
//     three key arrays of the same-class edges (draw buffer, merge buffer, kept set)
//     plus the CSR: ~2 GB at ogbn-products scale.
//   - Endpoint draws use Walker/Vose alias tables (Vose, "A linear algorithm for
//     generating random numbers with a given distribution", IEEE TSE 17(9), 1991): one
//     over all nodes and one per class, O(1) per draw.
//   - The feature matrix is produced in row blocks straight into DatasetWriter; each row
//     comes from its node's own stream, so no block depends on another.
#include "dpgnn/graph/synth.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <numeric>
#include <thread>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/log.h"
#include "dpgnn/util/rng.h"
#include "dpgnn/util/system.h"

namespace dpgnn::graph {
namespace {

// Stream identifiers (the `stream_a` of CounterRng); fixed forever, or outputs change.
constexpr std::uint64_t kStreamClasses = 0x53594e5401ULL;
constexpr std::uint64_t kStreamSplit = 0x53594e5402ULL;
constexpr std::uint64_t kStreamTheta = 0x53594e5403ULL;
constexpr std::uint64_t kStreamMeans = 0x53594e5404ULL;
constexpr std::uint64_t kStreamFeatures = 0x53594e5405ULL;
constexpr std::uint64_t kStreamEdgesBase = 0x53594e5500000000ULL;  // | round << 1 | kind

constexpr std::int64_t kEdgeBlock = 1 << 16;  // edges per random block
constexpr int kMaxRounds = 64;                 // at most this many draw rounds
constexpr double kTwoPi = 6.283185307179586476925286766559;

enum EdgeKind : int { kSameClass = 0, kCrossClass = 1 };

// Runs f(begin, end, thread_id) over [0, n) split into `threads` contiguous ranges and
// rethrows the first exception of any worker.
template <typename F>
void parallel_for(std::int64_t n, int threads, F&& f) {
  const int t_count = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, n)));
  if (t_count == 1) {
    f(std::int64_t{0}, n, 0);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(t_count);
  for (int t = 0; t < t_count; ++t)
    pool.emplace_back([&, t] {
      try {
        f(n * t / t_count, n * (t + 1) / t_count, t);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Walker/Vose alias table over weights w[0..n): draw i with probability w[i] / sum(w).
// Written into caller-owned slices so that per-class tables can share one array.
void build_alias(const double* w, std::int64_t n, double* prob, std::int32_t* alias) {
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) sum += w[i];
  std::vector<double> scaled(n);
  std::vector<std::int32_t> small, large;
  for (std::int64_t i = 0; i < n; ++i) {
    scaled[i] = w[i] * static_cast<double>(n) / sum;
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<std::int32_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    const std::int32_t s = small.back(), l = large.back();
    small.pop_back();
    large.pop_back();
    prob[s] = scaled[s];
    alias[s] = l;
    scaled[l] = (scaled[l] + scaled[s]) - 1.0;
    (scaled[l] < 1.0 ? small : large).push_back(l);
  }
  // Leftovers are 1 up to rounding.
  for (auto i : large) prob[i] = 1.0, alias[i] = i;
  for (auto i : small) prob[i] = 1.0, alias[i] = i;
}

inline std::int64_t alias_draw(Xoshiro256& rng, std::int64_t n, const double* prob, const std::int32_t* alias) {
  const auto i = static_cast<std::int64_t>(rng.below_fast(static_cast<std::uint64_t>(n)));
  return rng.uniform() < prob[i] ? i : alias[i];
}

inline std::uint64_t edge_key(std::int64_t u, std::int64_t v) {
  const auto a = static_cast<std::uint64_t>(std::min(u, v)), b = static_cast<std::uint64_t>(std::max(u, v));
  return (a << 32) | b;
}
inline std::int64_t key_lo(std::uint64_t k) { return static_cast<std::int64_t>(k >> 32); }
inline std::int64_t key_hi(std::uint64_t k) { return static_cast<std::int64_t>(k & 0xffffffffULL); }

// Sorts, removes repeats and self-loops. Chunks are sorted in parallel, then merged
// pairwise; the result does not depend on `threads`.
void sort_unique_drop_loops(std::vector<std::uint64_t>& v, int threads) {
  const std::int64_t n = static_cast<std::int64_t>(v.size());
  const int chunks = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, n / 4096)));
  std::vector<std::int64_t> bounds(chunks + 1);
  for (int c = 0; c <= chunks; ++c) bounds[c] = n * c / chunks;
  parallel_for(chunks, chunks, [&](std::int64_t b, std::int64_t e, int) {
    for (std::int64_t c = b; c < e; ++c) std::sort(v.begin() + bounds[c], v.begin() + bounds[c + 1]);
  });
  if (chunks > 1) {
    std::vector<std::uint64_t> buf(v.size());
    while (bounds.size() > 2) {
      const std::int64_t runs = static_cast<std::int64_t>(bounds.size()) - 1;
      const std::int64_t pairs = (runs + 1) / 2;
      parallel_for(pairs, threads, [&](std::int64_t b, std::int64_t e, int) {
        for (std::int64_t p = b; p < e; ++p) {
          const std::int64_t lo = bounds[2 * p], mid = bounds[std::min(2 * p + 1, runs)],
                             hi = bounds[std::min(2 * p + 2, runs)];
          std::merge(v.begin() + lo, v.begin() + mid, v.begin() + mid, v.begin() + hi, buf.begin() + lo);
        }
      });
      std::vector<std::int64_t> next;
      for (std::int64_t r = 0; r <= runs; r += 2) next.push_back(bounds[r]);
      if (next.back() != n) next.push_back(n);
      bounds.swap(next);
      v.swap(buf);
    }
  }
  v.erase(std::unique(v.begin(), v.end()), v.end());
  v.erase(std::remove_if(v.begin(), v.end(), [](std::uint64_t k) { return key_lo(k) == key_hi(k); }), v.end());
}

// A standard normal pair by Box-Muller (one per two uniforms; u1 in (0, 1] so log is finite).
template <typename Rng>
inline void normal_pair(Rng& rng, double& z0, double& z1) {
  const double u1 = 1.0 - rng.uniform();
  const double u2 = rng.uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  z0 = r * std::cos(kTwoPi * u2);
  z1 = r * std::sin(kTwoPi * u2);
}

std::int64_t target_edge_count(const SynthParams& p) {
  return std::llround(static_cast<double>(p.nodes) * p.avg_degree / 2.0);
}

// Same-class target (the rest are cross-class). With one class every edge is inside it.
std::int64_t target_same_class(const SynthParams& p, std::int64_t m) {
  if (p.classes == 1) return m;
  return std::llround(p.homophily * static_cast<double>(m));
}

// Pairs available inside classes when sizes are balanced (differ by at most one).
std::int64_t same_class_pairs(std::int64_t n, std::int64_t c) {
  const std::int64_t small = n / c, big_count = n % c;
  auto pairs = [](std::int64_t s) { return s * (s - 1) / 2; };
  return big_count * pairs(small + 1) + (c - big_count) * pairs(small);
}

std::string fmt_double(double x) { return fmt::format("{:.6g}", x); }

// Balanced classes in random order: node i gets class perm(i) mod C.
std::vector<std::int64_t> draw_labels(const SynthParams& p) {
  std::vector<std::int64_t> labels(p.nodes);
  for (std::int64_t i = 0; i < p.nodes; ++i) labels[i] = i % p.classes;
  CounterRng rng(p.seed, kStreamClasses);
  for (std::int64_t i = p.nodes - 1; i > 0; --i)
    std::swap(labels[i], labels[static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(i + 1)))]);
  return labels;
}

void draw_splits(const SynthParams& p, SynthStructure& s) {
  const std::int64_t n = p.nodes;
  const std::int64_t n_train = std::llround(p.train_frac * static_cast<double>(n));
  const std::int64_t n_val = std::min(n - n_train, static_cast<std::int64_t>(std::llround(p.val_frac * static_cast<double>(n))));
  std::vector<std::int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  CounterRng rng(p.seed, kStreamSplit);
  for (std::int64_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(i + 1)))]);
  s.train_mask.assign(n, 0);
  s.val_mask.assign(n, 0);
  s.test_mask.assign(n, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    auto& mask = i < n_train ? s.train_mask : (i < n_train + n_val ? s.val_mask : s.test_mask);
    mask[order[i]] = 1;
  }
}

// Degree propensities: Pareto(x_min = 1, pdf ~ x^-gamma) by inversion, x = (1-u)^(-1/(gamma-1)),
// then capped at K so that the largest expected degree D * K / mean(theta) equals the cap.
// g(K) = K / mean(min(x, K)) is non-decreasing in K (its derivative has the sign of
// mean(min(x, K)) - K * P(x > K) >= 0), so K is found by bisection.
std::vector<double> draw_propensities(const SynthParams& p, double cap, int threads) {
  const std::int64_t n = p.nodes;
  std::vector<double> theta(n);
  const double inv = -1.0 / (p.degree_exponent - 1.0);
  parallel_for(n, threads, [&](std::int64_t b, std::int64_t e, int) {
    for (std::int64_t v = b; v < e; ++v) {
      CounterRng rng(p.seed, kStreamTheta, static_cast<std::uint64_t>(v));
      theta[v] = std::pow(1.0 - rng.uniform(), inv);
    }
  });
  const double ratio = cap / p.avg_degree;  // wanted max(theta) / mean(theta)
  const double x_max = *std::max_element(theta.begin(), theta.end());
  auto g = [&](double k) {
    double s = 0;
    for (double x : theta) s += std::min(x, k);
    return k * static_cast<double>(n) / s;
  };
  if (g(x_max) <= ratio) return theta;  // the heaviest node is within the cap already
  double lo = 1.0, hi = x_max;
  for (int it = 0; it < 100 && hi - lo > 1e-12 * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    (g(mid) <= ratio ? lo : hi) = mid;
  }
  for (double& x : theta) x = std::min(x, lo);
  return theta;
}

// The sampling state shared by the edge-drawing threads.
struct EdgeSampler {
  std::int64_t n = 0;
  const std::int64_t* labels = nullptr;
  std::vector<double> global_prob;                     // [N] alias over all nodes, weights theta
  std::vector<std::int32_t> global_alias;              // [N]
  std::vector<std::int64_t> class_begin;               // [C+1] offsets into members
  std::vector<std::int32_t> members;                   // [N] nodes grouped by class, ascending ids
  std::vector<double> class_prob;                      // [N] per-class alias (local indices)
  std::vector<std::int32_t> class_alias;               // [N]

  std::uint64_t draw(Xoshiro256& rng, EdgeKind kind) const {
    const std::int64_t u = alias_draw(rng, n, global_prob.data(), global_alias.data());
    if (kind == kSameClass) {
      const std::int64_t c = labels[u], b = class_begin[c], size = class_begin[c + 1] - b;
      const std::int64_t local = alias_draw(rng, size, class_prob.data() + b, class_alias.data() + b);
      return edge_key(u, members[b + local]);
    }
    for (;;) {  // cross-class: redraw v until its class differs (acceptance ~ 1 - 1/C)
      const std::int64_t v = alias_draw(rng, n, global_prob.data(), global_alias.data());
      if (labels[v] != labels[u]) return edge_key(u, v);
    }
  }
};

EdgeSampler make_sampler(const SynthParams& p, const std::vector<std::int64_t>& labels,
                         const std::vector<double>& theta) {
  EdgeSampler s;
  const std::int64_t n = p.nodes, c = p.classes;
  s.n = n;
  s.labels = labels.data();
  s.global_prob.resize(n);
  s.global_alias.resize(n);
  build_alias(theta.data(), n, s.global_prob.data(), s.global_alias.data());
  s.class_begin.assign(c + 1, 0);
  for (std::int64_t v = 0; v < n; ++v) ++s.class_begin[labels[v] + 1];
  for (std::int64_t k = 0; k < c; ++k) s.class_begin[k + 1] += s.class_begin[k];
  s.members.resize(n);
  std::vector<std::int64_t> fill(s.class_begin.begin(), s.class_begin.end() - 1);
  for (std::int64_t v = 0; v < n; ++v) s.members[fill[labels[v]]++] = static_cast<std::int32_t>(v);
  std::vector<double> w(n);
  for (std::int64_t i = 0; i < n; ++i) w[i] = theta[s.members[i]];
  s.class_prob.resize(n);
  s.class_alias.resize(n);
  for (std::int64_t k = 0; k < c; ++k) {
    const std::int64_t b = s.class_begin[k];
    build_alias(w.data() + b, s.class_begin[k + 1] - b, s.class_prob.data() + b, s.class_alias.data() + b);
  }
  return s;
}

// `count` draws of one kind for one round, as keys in draw order (repeats and self-loops
// included).
std::vector<std::uint64_t> draw_edges(const SynthParams& p, const EdgeSampler& sampler, EdgeKind kind, int round,
                                      std::int64_t count, Progress* progress, std::int64_t progress_base) {
  std::vector<std::uint64_t> keys(count);
  const std::int64_t blocks = (count + kEdgeBlock - 1) / kEdgeBlock;
  const std::uint64_t stream = kStreamEdgesBase | (static_cast<std::uint64_t>(round) << 1) | kind;
  std::atomic<std::int64_t> done{0};
  parallel_for(blocks, p.threads, [&](std::int64_t b, std::int64_t e, int tid) {
    for (std::int64_t blk = b; blk < e; ++blk) {
      Xoshiro256 rng(CounterRng(p.seed, stream, static_cast<std::uint64_t>(blk)).next_u64());
      const std::int64_t lo = blk * kEdgeBlock, hi = std::min(count, lo + kEdgeBlock);
      for (std::int64_t i = lo; i < hi; ++i) keys[i] = sampler.draw(rng, kind);
      const std::int64_t d = done.fetch_add(hi - lo) + (hi - lo);
      if (tid == 0 && progress) progress->update(progress_base + d);
    }
  });
  return keys;
}

// The first `need` pairs of `drawn` (in draw order) that are neither self-loops, nor in
// `kept`, nor repeats of an earlier draw; returned sorted. Keeping draw order makes the
// rounds together equal to drawing one edge at a time and rejecting repeats.
std::vector<std::uint64_t> first_new_pairs(const std::vector<std::uint64_t>& drawn,
                                           const std::vector<std::uint64_t>& kept, std::int64_t need) {
  std::vector<std::pair<std::uint64_t, std::int64_t>> by_key(drawn.size());  // (key, draw index)
  for (std::size_t i = 0; i < drawn.size(); ++i) by_key[i] = {drawn[i], static_cast<std::int64_t>(i)};
  std::sort(by_key.begin(), by_key.end());
  std::vector<std::pair<std::int64_t, std::uint64_t>> firsts;  // (draw index, key)
  for (std::size_t i = 0; i < by_key.size(); ++i) {
    const std::uint64_t k = by_key[i].first;
    if ((i > 0 && by_key[i - 1].first == k) || key_lo(k) == key_hi(k) ||
        std::binary_search(kept.begin(), kept.end(), k))
      continue;
    firsts.push_back({by_key[i].second, k});
  }
  if (static_cast<std::int64_t>(firsts.size()) > need) {
    std::nth_element(firsts.begin(), firsts.begin() + need, firsts.end());
    firsts.resize(need);
  }
  std::vector<std::uint64_t> out(firsts.size());
  for (std::size_t i = 0; i < firsts.size(); ++i) out[i] = firsts[i].second;
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::uint64_t> union_sorted(std::vector<std::uint64_t>&& kept, std::vector<std::uint64_t>&& fresh) {
  if (kept.empty()) return std::move(fresh);
  std::vector<std::uint64_t> out;
  out.reserve(kept.size() + fresh.size());
  std::set_union(kept.begin(), kept.end(), fresh.begin(), fresh.end(), std::back_inserter(out));
  return out;
}

// CSR from two disjoint sorted key sets; rows come out sorted (see the file comment).
CsrGraph build_csr_from_keys(std::int64_t n, const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
  std::vector<EdgeIdx> indptr(n + 1, 0);
  for (const auto* keys : {&a, &b})
    for (std::uint64_t k : *keys) {
      ++indptr[key_lo(k) + 1];
      ++indptr[key_hi(k) + 1];
    }
  for (std::int64_t v = 0; v < n; ++v) indptr[v + 1] += indptr[v];
  std::vector<NodeId> indices(indptr[n]);
  std::vector<EdgeIdx> pos(indptr.begin(), indptr.end() - 1);
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const std::uint64_t k = (j == b.size() || (i < a.size() && a[i] < b[j])) ? a[i++] : b[j++];
    const std::int64_t u = key_lo(k), v = key_hi(k);
    indices[pos[u]++] = static_cast<NodeId>(v);
    indices[pos[v]++] = static_cast<NodeId>(u);
  }
  return CsrGraph(std::move(indptr), std::move(indices));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void validate_synth_params(const SynthParams& p) {
  auto fail = [](const std::string& msg) { throw UsageError("synth: " + msg); };
  if (p.nodes < 1) fail("--nodes must be >= 1, got " + std::to_string(p.nodes));
  if (p.nodes > kMaxNodes)
    fail("--nodes " + std::to_string(p.nodes) + " exceeds 2^31-1 (dpgnn's node id limit)");
  if (!(p.avg_degree >= 0) || !std::isfinite(p.avg_degree))
    fail("--avg-degree must be a finite number >= 0, got " + fmt_double(p.avg_degree));
  if (p.avg_degree > static_cast<double>(p.nodes - 1))
    fail("--avg-degree " + fmt_double(p.avg_degree) + " must be < --nodes (at most nodes - 1 = " +
         std::to_string(p.nodes - 1) + " in a graph without self-loops or repeated edges)");
  if (p.classes < 1 || p.classes > p.nodes)
    fail("--classes must be in [1, --nodes = " + std::to_string(p.nodes) + "], got " + std::to_string(p.classes));
  if (p.features < 0) fail("--features must be >= 0, got " + std::to_string(p.features));
  if (!(p.homophily >= 0 && p.homophily <= 1))
    fail("--homophily must be in [0, 1], got " + fmt_double(p.homophily));
  if (!(p.train_frac > 0 && p.train_frac <= 1))
    fail("--train-frac must be in (0, 1], got " + fmt_double(p.train_frac));
  if (!(p.val_frac >= 0 && p.val_frac <= 1)) fail("--val-frac must be in [0, 1], got " + fmt_double(p.val_frac));
  if (p.train_frac + p.val_frac > 1 + 1e-9)
    fail("--train-frac + --val-frac must be <= 1 (test gets the rest), got " + fmt_double(p.train_frac) + " + " +
         fmt_double(p.val_frac));
  if (std::llround(p.train_frac * static_cast<double>(p.nodes)) < 1)
    fail("--train-frac " + fmt_double(p.train_frac) + " leaves the training split of " + std::to_string(p.nodes) +
         " nodes empty");
  if (!(p.degree_exponent > 1) || !std::isfinite(p.degree_exponent))
    fail("--degree-exponent must be a finite number > 1, got " + fmt_double(p.degree_exponent));
  if (!(p.max_degree == 0 || (p.max_degree >= p.avg_degree && std::isfinite(p.max_degree))))
    fail("--max-degree must be 0 (automatic) or a finite number >= --avg-degree (" + fmt_double(p.avg_degree) +
         "), got " + fmt_double(p.max_degree));
  if (!(p.feature_signal >= 0) || !std::isfinite(p.feature_signal))
    fail("--feature-signal must be a finite number >= 0, got " + fmt_double(p.feature_signal));
  if (p.threads < 1) fail("--threads must be >= 1, got " + std::to_string(p.threads));
  if (p.name.empty()) fail("--name must not be empty");
  const std::int64_t m = target_edge_count(p), same = target_same_class(p, m), cross = m - same;
  const std::int64_t same_pairs = same_class_pairs(p.nodes, p.classes);
  const std::int64_t cross_pairs = p.nodes * (p.nodes - 1) / 2 - same_pairs;
  if (same > same_pairs)
    fail("--homophily " + fmt_double(p.homophily) + " with --avg-degree " + fmt_double(p.avg_degree) + " asks for " +
         std::to_string(same) + " same-class edges, but " + std::to_string(p.classes) + " classes of " +
         std::to_string(p.nodes) + " nodes hold only " + std::to_string(same_pairs) + " same-class pairs");
  if (cross > cross_pairs)
    fail("--homophily " + fmt_double(p.homophily) + " with --avg-degree " + fmt_double(p.avg_degree) + " asks for " +
         std::to_string(cross) + " cross-class edges, but " + std::to_string(p.classes) + " classes of " +
         std::to_string(p.nodes) + " nodes hold only " + std::to_string(cross_pairs) + " cross-class pairs");
}

double default_max_degree(const SynthParams& p) {
  const double n = static_cast<double>(p.nodes), d = p.avg_degree;
  double cap = std::sqrt(n * d);
  if (p.classes == 1) {
    cap = std::min(cap, (n - 1) / 2);
  } else {
    // A node's expected same-class (H d) and cross-class ((1-H) d) degrees stay within
    // half of the nodes they can reach, so its block is not saturated.
    const double smallest = std::floor(n / static_cast<double>(p.classes));
    const double largest = std::ceil(n / static_cast<double>(p.classes));
    if (p.homophily > 0) cap = std::min(cap, (smallest - 1) / (2 * p.homophily));
    if (p.homophily < 1) cap = std::min(cap, (n - largest) / (2 * (1 - p.homophily)));
  }
  return std::max(cap, d);
}

SynthStructure generate_synth_structure(const SynthParams& p) {
  validate_synth_params(p);
  const auto t0 = std::chrono::steady_clock::now();
  SynthStructure s;
  s.labels = draw_labels(p);
  draw_splits(p, s);
  s.target_edges = target_edge_count(p);
  const std::int64_t target[2] = {target_same_class(p, s.target_edges),
                                  s.target_edges - target_same_class(p, s.target_edges)};
  s.max_expected_degree = p.max_degree > 0 ? p.max_degree : default_max_degree(p);
  if (s.target_edges == 0) {
    s.graph = CsrGraph(std::vector<EdgeIdx>(p.nodes + 1, 0), {});
    return s;
  }
  const std::vector<double> theta = draw_propensities(p, s.max_expected_degree, p.threads);
  const EdgeSampler sampler = make_sampler(p, s.labels, theta);
  spdlog::debug("synth: classes, splits, propensities and alias tables in {:.2f} s", seconds_since(t0));

  // Round 0 draws exactly the target of each kind and keeps the distinct pairs. Later
  // rounds draw more than they need (the shortfall over the last round's success rate,
  // plus slack) and keep the first new pairs in draw order, so all rounds together are
  // one sequential draw with repeats rejected. A kind whose rounds find nothing new three
  // times running is saturated and given up.
  std::vector<std::uint64_t> kept[2];
  double success[2] = {1.0, 1.0};  // new pairs per draw in the kind's last round
  int stalled[2] = {0, 0};
  for (int round = 0; round < kMaxRounds; ++round) {
    std::int64_t need[2], draws[2];
    for (int k = 0; k < 2; ++k) {
      need[k] = stalled[k] >= 3 ? 0 : target[k] - static_cast<std::int64_t>(kept[k].size());
      draws[k] = round == 0 || need[k] == 0
                     ? need[k]
                     : static_cast<std::int64_t>(std::ceil(1.25 * static_cast<double>(need[k]) /
                                                           std::max(success[k], 0.02))) + 1024;
    }
    if (need[0] == 0 && need[1] == 0) break;
    s.rounds = round + 1;
    Progress progress("synth: drawing edges", draws[0] + draws[1], "edges");
    std::int64_t done_before = 0;
    for (EdgeKind kind : {kSameClass, kCrossClass}) {
      if (need[kind] == 0) continue;
      auto drawn = draw_edges(p, sampler, kind, round, draws[kind], round == 0 ? &progress : nullptr, done_before);
      done_before += draws[kind];
      if (round == 0) progress.update(done_before);
      std::vector<std::uint64_t> fresh;
      if (round == 0) {
        sort_unique_drop_loops(drawn, p.threads);
        fresh = std::move(drawn);
      } else {
        fresh = first_new_pairs(drawn, kept[kind], need[kind]);
        drawn = {};
      }
      const auto added = static_cast<std::int64_t>(fresh.size());
      success[kind] = static_cast<double>(added) / static_cast<double>(draws[kind]);
      stalled[kind] = added == 0 ? stalled[kind] + 1 : 0;
      kept[kind] = union_sorted(std::move(kept[kind]), std::move(fresh));
    }
    if (round == 0) progress.finish();
    spdlog::debug("synth: round {}: {} + {} draws, {} same-class + {} cross-class kept of {} + {} wanted", round + 1,
                  draws[0], draws[1], kept[0].size(), kept[1].size(), target[0], target[1]);
  }
  s.same_class_edges = static_cast<std::int64_t>(kept[0].size());
  s.cross_class_edges = static_cast<std::int64_t>(kept[1].size());
  const std::int64_t realised = s.same_class_edges + s.cross_class_edges;
  if (realised < s.target_edges)
    spdlog::warn("synth: only {} of {} undirected edges after {} rounds ({} same-class of {}, {} cross-class of {}): "
                 "the blocks are too dense for more distinct pairs; lower --avg-degree or --max-degree",
                 realised, s.target_edges, s.rounds, s.same_class_edges, target[0], s.cross_class_edges, target[1]);
  s.graph = build_csr_from_keys(p.nodes, kept[0], kept[1]);
  return s;
}

std::vector<double> synth_class_means(const SynthParams& p) {
  const std::int64_t f = p.features;
  std::vector<double> means(static_cast<std::size_t>(p.classes * f));
  for (std::int64_t c = 0; c < p.classes && f > 0; ++c) {
    CounterRng rng(p.seed, kStreamMeans, static_cast<std::uint64_t>(c));
    double* mu = means.data() + c * f;
    for (std::int64_t j = 0; j < f; j += 2) {
      double z0, z1;
      normal_pair(rng, z0, z1);
      mu[j] = z0;
      if (j + 1 < f) mu[j + 1] = z1;
    }
    double norm2 = 0;
    for (std::int64_t j = 0; j < f; ++j) norm2 += mu[j] * mu[j];
    const double scale = norm2 > 0 ? p.feature_signal / std::sqrt(norm2) : 0.0;
    for (std::int64_t j = 0; j < f; ++j) mu[j] *= scale;
  }
  return means;
}

void synth_feature_rows(const SynthParams& p, const std::vector<double>& class_means,
                        const std::vector<std::int64_t>& labels, std::int64_t row_begin, std::int64_t row_end,
                        float* out) {
  const std::int64_t f = p.features;
  for (std::int64_t v = row_begin; v < row_end; ++v) {
    // Xoshiro seeded from the node's Philox stream: fast, and still keyed by (seed, node).
    Xoshiro256 rng(CounterRng(p.seed, kStreamFeatures, static_cast<std::uint64_t>(v)).next_u64());
    const double* mu = class_means.data() + labels[v] * f;
    float* x = out + (v - row_begin) * f;  // [F]
    for (std::int64_t j = 0; j < f; j += 2) {
      double z0, z1;
      normal_pair(rng, z0, z1);
      x[j] = static_cast<float>(mu[j] + z0);
      if (j + 1 < f) x[j + 1] = static_cast<float>(mu[j + 1] + z1);
    }
  }
}

SynthReport write_synthetic_dataset(const SynthParams& p, const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  validate_synth_params(p);
  {
    // Fail before minutes of generation, not at the end: DatasetWriter opens the file
    // only once the realised values for the `source` attribute are known.
    const std::filesystem::path parent = std::filesystem::absolute(path).parent_path();
    std::error_code ec;
    if (!std::filesystem::is_directory(parent, ec))
      throw IoError(path + ": cannot write the dataset: directory " + parent.string() + " does not exist");
    if (::access(parent.c_str(), W_OK) != 0)
      throw IoError(path + ": cannot write the dataset: directory " + parent.string() + " is not writable");
  }
  SynthStructure s = generate_synth_structure(p);
  const std::int64_t n = p.nodes;
  SynthReport r;
  r.nodes = n;
  r.csr_entries = s.graph.num_edges();
  r.undirected_edges = s.same_class_edges + s.cross_class_edges;
  r.target_edges = s.target_edges;
  r.max_expected_degree = s.max_expected_degree;
  r.rounds = s.rounds;
  for (std::int64_t v = 0; v < n; ++v) {
    r.max_degree = std::max(r.max_degree, s.graph.out_degree(v));
    if (s.graph.out_degree(v) == 0) ++r.isolated;
  }
  r.realised_avg_degree = static_cast<double>(r.csr_entries) / static_cast<double>(n);
  r.realised_homophily =
      r.undirected_edges > 0 ? static_cast<double>(s.same_class_edges) / static_cast<double>(r.undirected_edges) : 0.0;
  spdlog::info("synth: graph of {} nodes, {} undirected edges ({} CSR entries) in {:.1f} s, {} round(s)", n,
               r.undirected_edges, r.csr_entries, seconds_since(t0), r.rounds);

  // Everything that determines the content, and what came out; never the thread count.
  r.source = fmt::format(
      "dpgnn synth: degree-corrected stochastic block model (Karrer & Newman 2011) with Gaussian class-mean "
      "features; nodes={} avg_degree={} classes={} features={} homophily={} seed={} degree_exponent={} "
      "max_degree={} feature_signal={} train_frac={} val_frac={} setting={}; realised: undirected_edges={} "
      "(target {}) avg_degree={:.6f} homophily={} max_degree={} isolated={} rounds={}",
      n, fmt_double(p.avg_degree), p.classes, p.features, fmt_double(p.homophily), p.seed,
      fmt_double(p.degree_exponent), fmt_double(s.max_expected_degree), fmt_double(p.feature_signal),
      fmt_double(p.train_frac), fmt_double(p.val_frac), p.inductive ? "inductive" : "transductive",
      r.undirected_edges, r.target_edges, r.realised_avg_degree,
      r.undirected_edges > 0 ? fmt::format("{:.6f}", r.realised_homophily) : std::string("n/a"), r.max_degree,
      r.isolated, r.rounds);

  DatasetMeta meta;
  meta.name = p.name;
  meta.source = r.source;
  meta.setting = p.inductive ? Setting::inductive : Setting::transductive;
  meta.directed = false;
  meta.multilabel = false;
  meta.num_nodes = n;
  meta.num_edges = r.csr_entries;
  meta.num_features = p.features;
  meta.num_classes = p.classes;
  DatasetWriter writer(path, meta);
  writer.write_indptr(s.graph.indptr());
  {
    const NodeId* data = s.graph.indices().data();
    const std::int64_t total = s.graph.num_edges(), chunk = std::int64_t{1} << 24;
    Progress progress("synth: writing edges", total, "entries");
    for (std::int64_t off = 0; off < total; off += chunk) {
      writer.append_indices(data + off, std::min(chunk, total - off));
      progress.update(std::min(total, off + chunk));
    }
  }
  s.graph = CsrGraph();  // the structure is on disk: free it before the features

  if (p.features > 0) {
    const auto means = synth_class_means(p);
    // Row blocks of whole HDF5 chunks, ~64 MB each.
    const std::int64_t chunk = static_cast<std::int64_t>(kFeatureChunkRows);
    const std::int64_t rows_per_block =
        std::max<std::int64_t>(1, (std::int64_t{64} << 20) / (4 * p.features * chunk)) * chunk;
    std::vector<float> block(static_cast<std::size_t>(std::min(rows_per_block, n) * p.features));  // [rows, F]
    Progress progress("synth: writing features", n, "rows");
    for (std::int64_t b = 0; b < n; b += rows_per_block) {
      const std::int64_t e = std::min(n, b + rows_per_block);
      parallel_for(e - b, p.threads, [&](std::int64_t lo, std::int64_t hi, int) {
        synth_feature_rows(p, means, s.labels, b + lo, b + hi, block.data() + lo * p.features);
      });
      writer.append_feature_rows(block.data(), e - b);
      progress.update(e);
    }
    progress.finish();
  }
  writer.write_labels(s.labels);
  writer.write_masks(s.train_mask, s.val_mask, s.test_mask);
  r.checksum = writer.finish();
  spdlog::info(
      "synth: wrote {}: {} nodes, {} undirected edges ({} CSR entries), average degree {:.3f} (asked {}), "
      "homophily {} (asked {}), max degree {} (cap on expected degree {:.0f}), {} isolated, {} features, {} "
      "classes; {:.1f} s, peak RSS {:.2f} GiB, checksum {}",
      path, n, r.undirected_edges, r.csr_entries, r.realised_avg_degree, fmt_double(p.avg_degree),
      r.undirected_edges > 0 ? fmt::format("{:.4f}", r.realised_homophily) : std::string("n/a"),
      fmt_double(p.homophily), r.max_degree, r.max_expected_degree, r.isolated, p.features, p.classes,
      seconds_since(t0), static_cast<double>(peak_rss_bytes()) / (1024.0 * 1024.0 * 1024.0), r.checksum);
  return r;
}

}  // namespace dpgnn::graph
