// APPR by ISTA (sampling/appr.h) against independent computations written here:
//  (a) rho -> 0: the personalized PageRank of the lazy walk, p = alpha s + (1-alpha) W p,
//      W = (I + A D^{-1}) / 2 (Andersen, Chung & Lang 2006), by a dense Gaussian elimination;
//  (b) rho = 1e-3: the optimality (KKT) conditions of the l1-regularised objective of
//      Fountoulakis et al. 2019, with its gradient computed densely from the definition;
//  (c) locality: rows read on a path graph do not depend on the path's length.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpgnn/sampling/appr.h"

namespace dpgnn::sampling {
namespace {

using Adj = std::vector<std::vector<std::int64_t>>;

// A small graph held as adjacency lists; counts the distinct rows asked for.
class ListGraph : public NeighbourSource {
 public:
  explicit ListGraph(Adj adj) : adj_(std::move(adj)) {}
  const std::vector<std::int64_t>& neighbours(std::int64_t node) override {
    asked.insert(node);
    return adj_.at(static_cast<std::size_t>(node));
  }
  const Adj& adj() const { return adj_; }
  std::set<std::int64_t> asked;

 private:
  Adj adj_;
};

void add_edge(Adj& a, std::int64_t u, std::int64_t v) {
  a[static_cast<std::size_t>(u)].push_back(v);
  a[static_cast<std::size_t>(v)].push_back(u);
}

Adj path_graph(int n) {
  Adj a(static_cast<std::size_t>(n));
  for (int i = 0; i + 1 < n; ++i) add_edge(a, i, i + 1);
  return a;
}
Adj star_graph(int leaves) {  // centre 0
  Adj a(static_cast<std::size_t>(leaves + 1));
  for (int i = 1; i <= leaves; ++i) add_edge(a, 0, i);
  return a;
}
Adj two_cliques(int size) {  // K_size on 0..size-1 and on size..2size-1, joined by one edge
  Adj a(static_cast<std::size_t>(2 * size));
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < size; ++i)
      for (int j = i + 1; j < size; ++j) add_edge(a, c * size + i, c * size + j);
  add_edge(a, size - 1, size);
  return a;
}
Adj random_graph(int n, double p, std::uint32_t seed) {  // G(n, p) plus a ring (no isolated node)
  std::mt19937 gen(seed);
  std::bernoulli_distribution coin(p);
  Adj a(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) add_edge(a, i, (i + 1) % n);
  for (int i = 0; i < n; ++i)
    for (int j = i + 2; j < n; ++j)
      if (!(i == 0 && j == n - 1) && coin(gen)) add_edge(a, i, j);
  return a;
}

// Dense solve of M x = b by Gaussian elimination with partial pivoting.
std::vector<double> solve(std::vector<std::vector<double>> m, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(m[r][c]) > std::fabs(m[piv][c])) piv = r;
    std::swap(m[c], m[piv]);
    std::swap(b[c], b[piv]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = m[r][c] / m[c][c];
      for (std::size_t k = c; k < n; ++k) m[r][k] -= f * m[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n);
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= m[i][k] * x[k];
    x[i] = s / m[i][i];
  }
  return x;
}

// Exact lazy-walk personalized PageRank: (I - (1-alpha) (I + A D^{-1}) / 2) p = alpha e_s.
std::vector<double> exact_ppr(const Adj& a, std::int64_t s, double alpha) {
  const std::size_t n = a.size();
  std::vector<std::vector<double>> m(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i) m[i][i] = 1.0 - (1.0 - alpha) / 2.0;
  for (std::size_t j = 0; j < n; ++j)  // column j of A D^{-1}: 1/d_j on j's neighbours
    for (const auto i : a[j]) m[static_cast<std::size_t>(i)][j] -= (1.0 - alpha) / 2.0 / static_cast<double>(a[j].size());
  std::vector<double> b(n, 0.0);
  b[static_cast<std::size_t>(s)] = alpha;
  return solve(m, b);
}

std::vector<double> densify(const SparseVector& v, std::size_t n) {
  std::vector<double> d(n, 0.0);
  for (std::size_t i = 0; i < v.index.size(); ++i) d[static_cast<std::size_t>(v.index[i])] = v.value[i];
  return d;
}

void expect_well_formed(const SparseVector& v) {
  ASSERT_EQ(v.index.size(), v.value.size());
  for (std::size_t i = 0; i < v.index.size(); ++i) {
    EXPECT_GT(v.value[i], 0.0);
    if (i > 0) {
      EXPECT_LT(v.index[i - 1], v.index[i]);
    }
  }
}

struct Named { std::string name; Adj adj; std::vector<std::int64_t> sources; };
std::vector<Named> small_graphs() {
  return {{"path12", path_graph(12), {0, 5}},
          {"star9", star_graph(9), {0, 3}},
          {"two_cliques5", two_cliques(5), {0, 4, 7}},
          {"random30", random_graph(30, 0.12, 11), {0, 13, 29}}};
}

TEST(ApprIsta, TinyRhoGivesTheExactLazyPersonalizedPageRank) {
  for (const double alpha : {0.25, 0.1, 0.6}) {
    for (const auto& g : small_graphs()) {
      for (const auto s : g.sources) {
        ListGraph graph(g.adj);
        ApprOptions o;
        o.alpha = alpha;
        o.rho = 1e-12;
        ApprInfo info;
        const auto v = appr_ista(graph, s, o, &info);
        expect_well_formed(v);
        EXPECT_TRUE(info.converged) << g.name << " alpha " << alpha << " s " << s << " it " << info.iterations;
        const auto got = densify(v, g.adj.size());
        const auto want = exact_ppr(g.adj, s, alpha);
        double total = 0.0;
        for (std::size_t i = 0; i < want.size(); ++i) {
          EXPECT_NEAR(got[i], want[i], 1e-9) << g.name << " alpha " << alpha << " source " << s << " node " << i;
          total += want[i];
        }
        EXPECT_NEAR(total, 1.0, 1e-12);  // sanity of the oracle: PageRank is a distribution
      }
    }
  }
}

// The objective of Fountoulakis et al. 2019, written densely here:
// F(q) = 1/2 q^T Q q - alpha s^T D^{-1/2} q + rho alpha ||D^{1/2} q||_1,
// Q = D^{-1/2} (D - (1-alpha)/2 (D + A)) D^{-1/2}. Returns grad of the smooth part at q.
std::vector<double> smooth_gradient(const Adj& a, std::int64_t s, double alpha, const std::vector<double>& q) {
  const std::size_t n = a.size();
  std::vector<double> g(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double di = static_cast<double>(a[i].size());
    // (D - (1-alpha)/2 (D + A))_{ii} = d_i (1+alpha)/2, scaled by 1/d_i.
    double acc = (1.0 + alpha) / 2.0 * q[i];
    for (const auto j : a[i]) {
      const double dj = static_cast<double>(a[static_cast<std::size_t>(j)].size());
      acc -= (1.0 - alpha) / 2.0 * q[static_cast<std::size_t>(j)] / std::sqrt(di * dj);
    }
    g[i] = acc;
  }
  g[static_cast<std::size_t>(s)] -= alpha / std::sqrt(static_cast<double>(a[static_cast<std::size_t>(s)].size()));
  return g;
}

TEST(ApprIsta, SatisfiesTheKktConditionsOfTheL1RegularisedProblem) {
  for (const double eps : {1e-4, 1e-9}) {
    for (const auto& g : small_graphs()) {
      for (const auto s : g.sources) {
        ListGraph graph(g.adj);
        ApprOptions o;
        o.rho = 1e-3;
        o.epsilon = eps;
        ApprInfo info;
        const auto v = appr_ista(graph, s, o, &info);
        expect_well_formed(v);
        ASSERT_TRUE(info.converged);
        ASSERT_FALSE(v.index.empty());
        const auto p = densify(v, g.adj.size());
        std::vector<double> q(p.size());
        for (std::size_t i = 0; i < p.size(); ++i) q[i] = p[i] / std::sqrt(static_cast<double>(g.adj[i].size()));
        const auto grad = smooth_gradient(g.adj, s, o.alpha, q);
        // KKT of min f(q) + rho alpha sum_i sqrt(d_i) |q_i|: grad_i = -rho alpha sqrt(d_i) where
        // q_i > 0, |grad_i| <= rho alpha sqrt(d_i) where q_i = 0; to the relative tolerance eps
        // the stopping rule allows (plus rounding).
        for (std::size_t i = 0; i < q.size(); ++i) {
          const double lam = o.rho * o.alpha * std::sqrt(static_cast<double>(g.adj[i].size()));
          const double slack = eps * lam + 1e-13;
          if (q[i] > 0.0) {
            EXPECT_NEAR(grad[i], -lam, slack) << g.name << " source " << s << " node " << i;
          } else {
            EXPECT_LE(std::fabs(grad[i]), lam + slack) << g.name << " source " << s << " node " << i;
          }
        }
      }
    }
  }
}

TEST(ApprIsta, ResultSumsToAtMostOneAndIsSparserThanExact) {
  const auto adj = random_graph(30, 0.12, 5);
  ListGraph graph(adj);
  ApprOptions o;
  o.rho = 1e-2;
  const auto v = appr_ista(graph, 3, o);
  expect_well_formed(v);
  double total = 0.0;
  for (const double x : v.value) total += x;
  EXPECT_LE(total, 1.0 + 1e-12);
  const auto exact = exact_ppr(adj, 3, o.alpha);
  for (std::size_t i = 0; i < v.index.size(); ++i)  // the l1 term only shrinks (monotone iterates)
    EXPECT_LE(v.value[i], exact[static_cast<std::size_t>(v.index[i])] + 1e-12);
  EXPECT_LT(v.index.size(), adj.size());
}

// A path 0 - 1 - ... - (length-1) generated on the fly: nothing sized by its length.
class CountingPath : public NeighbourSource {
 public:
  explicit CountingPath(std::int64_t length) : length_(length) {}
  const std::vector<std::int64_t>& neighbours(std::int64_t node) override {
    if (node < 0 || node >= length_) throw std::out_of_range("node outside the path");
    asked.insert(node);
    row_.clear();
    if (node > 0) row_.push_back(node - 1);
    if (node + 1 < length_) row_.push_back(node + 1);
    return row_;  // valid until the next call only, as NeighbourSource allows
  }
  std::set<std::int64_t> asked;

 private:
  std::int64_t length_;
  std::vector<std::int64_t> row_;
};

TEST(ApprIsta, ReadsOnlyRowsNearTheSourceWhateverThePathLength) {
  ApprOptions o;  // DPAR's alpha = 0.25, rho = 1e-4, gamma = 1e-4
  std::vector<std::size_t> rows;
  std::vector<std::vector<double>> values;
  for (const std::int64_t length : {std::int64_t{1000}, std::int64_t{1000000}, std::int64_t{1} << 40}) {
    CountingPath path(length);
    const std::int64_t source = length / 2;
    ApprInfo info;
    const auto v = appr_ista(path, source, o, &info);
    expect_well_formed(v);
    EXPECT_TRUE(info.converged);
    EXPECT_EQ(static_cast<std::size_t>(info.rows_read), path.asked.size());
    // Every row read lies within one hop of the support, the support around the source.
    for (const auto node : path.asked) EXPECT_LE(std::llabs(node - source), 100) << "length " << length;
    rows.push_back(path.asked.size());
    values.push_back(v.value);  // sorted by node id = by offset from the source
    EXPECT_EQ(v.index.size() + 2, path.asked.size());  // support plus its two boundary neighbours
  }
  EXPECT_LT(rows[0], 200u);
  EXPECT_EQ(rows[0], rows[1]);
  EXPECT_EQ(rows[1], rows[2]);
  // The same values (up to summation order, which follows the hash map's buckets).
  for (std::size_t r = 1; r < values.size(); ++r) {
    ASSERT_EQ(values[r].size(), values[0].size());
    for (std::size_t i = 0; i < values[0].size(); ++i) EXPECT_NEAR(values[r][i], values[0][i], 1e-14);
  }
}

TEST(ApprIsta, IsolatedSourceIsOneHot) {
  ListGraph graph(Adj(3));
  ApprInfo info;
  const auto v = appr_ista(graph, 1, ApprOptions{}, &info);
  ASSERT_EQ(v.index, std::vector<std::int64_t>{1});
  ASSERT_EQ(v.value, std::vector<double>{1.0});
  EXPECT_TRUE(info.converged);
}

TEST(ApprIsta, SourceWithRhoTimesDegreeAboveOneGivesTheEmptyVector) {
  // At q = 0 the scaled gradient is alpha / d_s; with rho d_s >= 1 it is <= rho alpha: q = 0
  // already meets the termination rule (and is the minimiser: KKT at 0).
  ListGraph graph(star_graph(20));
  ApprOptions o;
  o.rho = 0.05;  // rho * 20 = 1
  ApprInfo info;
  const auto v = appr_ista(graph, 0, o, &info);
  EXPECT_TRUE(v.index.empty());
  EXPECT_TRUE(info.converged);
  EXPECT_EQ(info.iterations, 0);
  // ... while a leaf (degree 1) gets a non-empty vector.
  EXPECT_FALSE(appr_ista(graph, 1, o).index.empty());
}

TEST(ApprIsta, MaxIterationsStopsEarlyAndSaysSo) {
  ListGraph graph(random_graph(30, 0.12, 2));
  ApprOptions o;
  o.rho = 1e-12;
  o.max_iterations = 3;
  ApprInfo info;
  const auto v = appr_ista(graph, 0, o, &info);
  EXPECT_FALSE(info.converged);
  EXPECT_EQ(info.iterations, 3);
  expect_well_formed(v);
}

TEST(ApprIsta, RejectsBadOptionsNamingThem) {
  ListGraph graph(path_graph(4));
  auto expect_throw_naming = [&](ApprOptions o, const std::string& name) {
    try {
      appr_ista(graph, 0, o);
      ADD_FAILURE() << "no throw for " << name;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  };
  ApprOptions o;
  o.alpha = 0.0; expect_throw_naming(o, "alpha");
  o.alpha = 1.0; expect_throw_naming(o, "alpha");
  o.alpha = std::nan(""); expect_throw_naming(o, "alpha");
  o = ApprOptions{}; o.rho = -1e-3; expect_throw_naming(o, "rho");
  o = ApprOptions{}; o.epsilon = -1.0; expect_throw_naming(o, "epsilon");
  o = ApprOptions{}; o.max_iterations = 0; expect_throw_naming(o, "max_iterations");
}

}  // namespace
}  // namespace dpgnn::sampling
