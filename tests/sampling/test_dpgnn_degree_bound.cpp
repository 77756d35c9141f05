// DP-GNN degree bounding (issue 13, item 6; docs/privacy.md "DP-GNN degree bounding").
// Node-level adjacency: G and G minus a node v (its edges gone, no longer a training node;
// ids kept so subgraphs can be matched by root). Lemma 2's proof counts only the subgraphs
// that contain v; so with the same seed, no subgraph that does not contain v may differ.
// degree_bound: require must give 0 such subgraphs for every v; degree_bound: paper gives
// some on the same graph (the test can tell them apart).
// Issue 36 (below): no capped rule of the natural kinds has a bounded count of changed
// subgraphs (docs/privacy.md, "No capped degree bound has a bounded node-level count",
// Theorems A-C, checked on their graphs; and on Cora and Twitch ES).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "dpgnn/sampling/sampler.h"
#include "dpgnn/util/error.h"
#include "test_graphs.h"
#include "test_support.h"

namespace dpgnn::sampling {
namespace {

using testing::TestGraph;
using Edge = std::pair<std::int64_t, std::int64_t>;

// A random graph whose every node has at most `k` neighbours (all nodes train), so the
// training in-degree is <= k: Lemma 2's hypothesis.
std::vector<Edge> bounded_degree_edges(std::int64_t n, std::int64_t k, std::int64_t tries, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  std::vector<std::int64_t> deg(n, 0);
  std::set<Edge> seen;
  std::vector<Edge> e;
  for (std::int64_t t = 0; t < tries; ++t) {
    const std::int64_t u = pick(gen), v = pick(gen);
    if (u == v || deg[u] >= k || deg[v] >= k || !seen.insert({std::min(u, v), std::max(u, v)}).second) continue;
    ++deg[u];
    ++deg[v];
    e.push_back({u, v});
  }
  return e;
}

// The graph without v: same ids, v isolated and not a training node.
TestGraph without(const std::vector<Edge>& e, std::int64_t n, std::int64_t v) {
  std::vector<Edge> kept;
  for (const auto& [a, b] : e)
    if (a != v && b != v) kept.push_back({a, b});
  auto train = testing::all_train(n);
  train[v] = 0;
  return testing::make_graph("without", n, kept, train);
}

struct Sub {
  std::set<std::int64_t> nodes;
  std::set<Edge> edges;
  bool operator==(const Sub& o) const { return nodes == o.nodes && edges == o.edges; }
};

std::map<std::int64_t, Sub> by_root(const SubgraphSet& s) {
  std::map<std::int64_t, Sub> out;
  for (std::size_t i = 0; i < s.roots.size(); ++i) {
    Sub& sub = out[s.roots[i]];
    sub.nodes.insert(s.nodes.begin() + s.node_ptr[i], s.nodes.begin() + s.node_ptr[i + 1]);
    sub.edges.insert(s.edges.begin() + s.edge_ptr[i], s.edges.begin() + s.edge_ptr[i + 1]);
  }
  return out;
}

SubgraphSet run(const TestGraph& t, std::int64_t k, std::int64_t r, DegreeBound b, std::uint64_t seed) {
  DpgnnOptions o;
  o.max_degree = k;
  o.layers = r;
  o.degree_bound = b;
  return sample_dpgnn(t.g, t.train, o, {seed, 0, 0});
}

// Subgraphs of G (other than v's own) that differ in G without v although they do not
// contain v, summed over `trials` random v.
std::int64_t differing_without_v(const std::vector<Edge>& e, std::int64_t n, std::int64_t k, std::int64_t r,
                                 DegreeBound b, int trials, std::uint64_t seed) {
  const TestGraph g = testing::make_graph("g", n, e, testing::all_train(n));
  const auto full = by_root(run(g, k, r, b, seed));
  std::mt19937_64 gen(seed + 1);
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  std::int64_t bad = 0;
  for (int t = 0; t < trials; ++t) {
    const std::int64_t v = pick(gen);
    const auto reduced = by_root(run(without(e, n, v), k, r, b, seed));
    EXPECT_EQ(reduced.count(v), 0u);
    for (const auto& [root, sub] : full) {
      if (root == v || sub.nodes.count(v)) continue;
      const auto it = reduced.find(root);
      if (it == reduced.end() || !(it->second == sub)) ++bad;
    }
  }
  return bad;
}

TEST(DpgnnDegreeBound, RequireChangesOnlySubgraphsThatContainTheRemovedNode) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const std::int64_t n = 300, k = 3;
    const auto e = bounded_degree_edges(n, k, 2000, seed);
    for (std::int64_t r : {1, 2, 3})
      EXPECT_EQ(differing_without_v(e, n, k, r, DegreeBound::require, 25, seed), 0) << "seed " << seed << ", r " << r;
  }
}

TEST(DpgnnDegreeBound, PaperChangesSubgraphsThatDoNotContainTheRemovedNode) {
  // Degrees up to 3 with K = 2, so p = K / (2 |RE_u|) < 1 and coins are drawn.
  const std::int64_t n = 300;
  const auto e = bounded_degree_edges(n, 3, 2000, 5);
  EXPECT_GT(differing_without_v(e, n, 2, 2, DegreeBound::paper, 25, 5), 0);
}

TEST(DpgnnDegreeBound, RequireKeepsTheOccurrenceBoundAndUsesEveryTrainingEdge) {
  const std::int64_t n = 300, k = 4, r = 2;
  const auto e = bounded_degree_edges(n, k, 3000, 9);
  const TestGraph g = testing::make_graph("g", n, e, testing::all_train(n));
  const SubgraphSet s = run(g, k, r, DegreeBound::require, 9);
  const auto occ = testing::occurrences(s, n);
  EXPECT_LE(*std::max_element(occ.begin(), occ.end()), dpgnn_occurrence_bound(k, r));
  // r = 1: S_v is v and every neighbour (all train), E_v = RE's transpose, nothing dropped.
  const auto one = by_root(run(g, k, 1, DegreeBound::require, 9));
  for (std::int64_t v = 0; v < n; ++v) {
    std::set<std::int64_t> want{v};
    for (graph::NodeId w : g.g.out_neigh(v)) want.insert(w);
    EXPECT_EQ(one.at(v).nodes, want) << "node " << v;
  }
}

TEST(DpgnnDegreeBound, RequireRefusesAGraphWithTooManyTrainingInNeighbours) {
  const TestGraph star = testing::star_graph(5);  // the centre has 5 training neighbours
  try {
    run(star, 4, 2, DegreeBound::require, 1);
    FAIL() << "expected a DataError";
  } catch (const DataError& err) {
    EXPECT_NE(std::string(err.what()).find("node 0 has 5 training in-neighbours"), std::string::npos) << err.what();
  }
  EXPECT_NO_THROW(run(star, 5, 2, DegreeBound::require, 1));
  EXPECT_EQ(parse_degree_bound("require"), DegreeBound::require);
  EXPECT_EQ(parse_degree_bound("paper"), DegreeBound::paper);
  EXPECT_THROW(parse_degree_bound("covered"), UsageError);
}

// ---------------------------------------------------------------------------------------
// Issue 36 (docs/privacy.md, "No capped degree bound has a bounded node-level count"):
// no degree-bounding rule of the kinds below has a graph-independent bound on the number
// of subgraphs that change when one node is removed or added. The rules are written here,
// for r = 1, to check the theorems on concrete code; none of them ships.
//
// A rule maps (graph, public training mask, key) to kept in-sets RE'_u, a subset of RE_u
// (u's training neighbours) of size <= K; E_x = {u : x in RE'_u}; S_x = {x} plus E_x.
enum class Rule { topk, slots, all_or_nothing, paper_keyed };
const char* rule_name(Rule r) {
  switch (r) {
    case Rule::topk: return "keyed top-K";
    case Rule::slots: return "keyed slots";
    case Rule::all_or_nothing: return "all or nothing";
    case Rule::paper_keyed: return "SAMPLE-EDGELISTS, keyed coins";
  }
  return "?";
}
using Adj = std::vector<std::vector<std::int64_t>>;  // undirected adjacency lists

std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
// A keyed hash of the ordered pair (u, v); `salt` separates the slot hash from the priority.
std::uint64_t keyed(std::uint64_t key, std::int64_t u, std::int64_t v, std::uint64_t salt) {
  return mix64(mix64(mix64(key ^ salt) ^ static_cast<std::uint64_t>(u)) ^ static_cast<std::uint64_t>(v));
}

// The kept in-set of u from its training in-neighbours `re` (node ids, any order).
std::vector<std::int64_t> keep(Rule rule, std::int64_t u, std::vector<std::int64_t> re, std::int64_t k,
                               std::uint64_t key) {
  const auto prio = [&](std::int64_t v) { return keyed(key, u, v, 1); };
  std::vector<std::int64_t> out;
  switch (rule) {
    case Rule::all_or_nothing:  // `require` without its refusal
      if (static_cast<std::int64_t>(re.size()) <= k) out = re;
      break;
    case Rule::topk:  // the k in-neighbours of smallest keyed priority
      std::sort(re.begin(), re.end(), [&](std::int64_t a, std::int64_t b) { return prio(a) < prio(b); });
      out.assign(re.begin(), re.begin() + std::min<std::int64_t>(k, static_cast<std::int64_t>(re.size())));
      break;
    case Rule::paper_keyed: {  // SAMPLE-EDGELISTS with keyed coins: p = K / (2 |RE_u|) <= 1, drop all if > K pass
      const double p = std::min(1.0, static_cast<double>(k) / (2.0 * static_cast<double>(re.size())));
      for (std::int64_t v : re)
        if (static_cast<double>(keyed(key, u, v, 3) >> 11) * 0x1.0p-53 < p) out.push_back(v);
      if (static_cast<std::int64_t>(out.size()) > k) out.clear();
      break;
    }
    case Rule::slots: {  // k keyed slots; each non-empty slot keeps its member of smallest priority
      std::vector<std::int64_t> best(k, -1);
      for (std::int64_t v : re) {
        std::int64_t& b = best[keyed(key, u, v, 2) % static_cast<std::uint64_t>(k)];
        if (b < 0 || prio(v) < prio(b)) b = v;
      }
      for (std::int64_t b : best)
        if (b >= 0) out.push_back(b);
      break;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The node-level neighbour of a graph: `removed` absent (no edges, not a training node).
struct Bounded {
  std::vector<std::vector<std::int64_t>> kept;  // RE'_u per node u
  std::vector<std::set<std::int64_t>> lists;    // E_x per node x
};
Bounded bound_graph(const Adj& adj, const std::vector<std::uint8_t>& train, std::int64_t removed, Rule rule,
                    std::int64_t k, std::uint64_t key) {
  const std::int64_t n = static_cast<std::int64_t>(adj.size());
  Bounded b;
  b.kept.resize(n);
  b.lists.resize(n);
  for (std::int64_t u = 0; u < n; ++u) {
    if (u == removed) continue;
    std::vector<std::int64_t> re;
    for (std::int64_t v : adj[u])
      if (v != removed && v != u && train[v]) re.push_back(v);
    b.kept[u] = keep(rule, u, re, k, key);
    for (std::int64_t v : b.kept[u]) b.lists[v].insert(u);
  }
  return b;
}

struct Change {
  std::int64_t total = 0;       // subgraphs S_x (x a root of G or of the neighbour) that differ, S_w included
  std::int64_t without_w = 0;   // of those, the ones with x != w that do not contain w in G
  std::int64_t pivots = 0;      // nodes u at which w is pivotal: RE'_u(G - w) != RE'_u(G) \ {w}
};
// Compares G (with w) and G - w. Node sets S_x = {x} plus E_x decide (a differing node set is
// a differing subgraph), so the counts are lower bounds on the changed subgraphs.
Change compare(const Bounded& with, const Bounded& without, const std::vector<std::uint8_t>& train,
               std::int64_t w) {
  Change c;
  const std::int64_t n = static_cast<std::int64_t>(train.size());
  if (train[w]) ++c.total;  // S_w exists in one graph only
  for (std::int64_t x = 0; x < n; ++x) {
    if (x == w || !train[x]) continue;
    const std::set<std::int64_t>& a = with.lists[x];
    const bool contains_w = a.count(w) > 0;
    if (a != without.lists[x]) {
      ++c.total;
      if (!contains_w) ++c.without_w;
    }
  }
  for (std::int64_t u = 0; u < n; ++u) {
    if (u == w) continue;
    std::vector<std::int64_t> minus_w;
    for (std::int64_t v : with.kept[u])
      if (v != w) minus_w.push_back(v);
    if (minus_w != without.kept[u]) ++c.pivots;
  }
  return c;
}

// G_{q,K}: lines L_{m,c} = {(a, m a + c mod q)}, slopes m = 0..K, as training nodes
// 0 .. q(K+1)-1; points (a, b) as non-training nodes q(K+1) + a q + b.
struct Plane {
  Adj adj;
  std::vector<std::uint8_t> train;
  std::int64_t lines = 0;
};
Plane affine_plane(std::int64_t q, std::int64_t k) {
  Plane p;
  p.lines = q * (k + 1);
  const std::int64_t n = p.lines + q * q;
  p.adj.resize(n);
  p.train.assign(n, 0);
  for (std::int64_t m = 0; m <= k; ++m)
    for (std::int64_t c = 0; c < q; ++c) {
      const std::int64_t line = m * q + c;
      p.train[line] = 1;
      for (std::int64_t a = 0; a < q; ++a) {
        const std::int64_t point = p.lines + a * q + (m * a + c) % q;
        p.adj[line].push_back(point);
        p.adj[point].push_back(line);
      }
    }
  return p;
}

TEST(DpgnnDegreeBound, NoCappedRuleHasABoundedCountOnTheAffinePlaneGraphs) {
  const std::uint64_t key = 0x36;
  for (const auto& [q, k] : std::vector<std::pair<std::int64_t, std::int64_t>>{{5, 1}, {31, 1}, {11, 3}, {37, 5}}) {
    const Plane p = affine_plane(q, k);
    const std::int64_t n = static_cast<std::int64_t>(p.adj.size());
    // Facts (i)-(iii).
    for (std::int64_t v = 0; v < n; ++v) {
      std::int64_t training = 0;
      for (std::int64_t u : p.adj[v]) training += p.train[u];
      if (p.train[v]) {
        EXPECT_EQ(static_cast<std::int64_t>(p.adj[v].size()), q);
        EXPECT_EQ(training, 0);
      } else {
        EXPECT_EQ(training, k + 1) << "point " << v;
      }
    }
    for (std::int64_t a = 0; a < p.lines; ++a)
      for (std::int64_t b = a + 1; b < p.lines; ++b) {
        std::vector<std::int64_t> common;
        std::set_intersection(p.adj[a].begin(), p.adj[a].end(), p.adj[b].begin(), p.adj[b].end(),
                              std::back_inserter(common));
        ASSERT_LE(common.size(), 1u) << "lines " << a << ", " << b;
      }
    for (Rule rule : {Rule::topk, Rule::slots, Rule::all_or_nothing}) {
      const Bounded g = bound_graph(p.adj, p.train, -1, rule, k, key);
      std::vector<std::int64_t> occ(n, 1);
      for (std::int64_t u = 0; u < n; ++u) {
        ASSERT_LE(static_cast<std::int64_t>(g.kept[u].size()), k);  // the cap holds
        occ[u] += static_cast<std::int64_t>(g.kept[u].size());
      }
      EXPECT_LE(*std::max_element(occ.begin(), occ.end()), dpgnn_occurrence_bound(k, 1));
      std::int64_t sum_without = 0, sum_pivots = 0, most = 0;
      for (std::int64_t w = 0; w < p.lines; ++w) {
        const Bounded gw = bound_graph(p.adj, p.train, w, rule, k, key);
        if (rule != Rule::slots) {  // complete below the cap: the points of w keep their K lines
          for (std::int64_t pt : p.adj[w]) ASSERT_EQ(static_cast<std::int64_t>(gw.kept[pt].size()), k);
        }
        const Change c = compare(g, gw, p.train, w);
        sum_without += c.without_w;
        sum_pivots += c.pivots;
        most = std::max(most, c.without_w);
      }
      const std::string what = "q " + std::to_string(q) + ", K " + std::to_string(k) + ", rule " + rule_name(rule);
      EXPECT_GE(sum_without, sum_pivots) << what;  // the counting lemma
      // Theorem A (topk, all_or_nothing): >= K pivots per point; Theorem B (slots): >= 1.
      const std::int64_t per_point = rule == Rule::slots ? 1 : k;
      EXPECT_GE(sum_pivots, q * q * per_point) << what;
      EXPECT_GE(most * p.lines, q * q * per_point) << what;  // max >= average = q per_point / (K+1)
      if (q * per_point > (k + 1) * (k + 1)) {  // then the maximum exceeds the accountant's N(K, 1)
        EXPECT_GT(most, dpgnn_occurrence_bound(k, 1)) << what;
      }
    }
  }
}

// Theorem C: w (node 0) joined to m non-training receivers, each with j - 1 training senders
// of its own. Any rule that reads only the keyed hashes of u's own in-list, keeps <= K and
// keeps a single in-neighbour with probability >= alpha has, for some j <= ceil(2K/alpha),
// a mean count of changed subgraphs without w of at least m alpha^2 / (4K).
TEST(DpgnnDegreeBound, NoLocalKeyedRuleHasABoundedCountOnStarsOfReceivers) {
  const std::int64_t m = 200;
  const int keys = 8;
  for (std::int64_t k : {1, 5})
    for (Rule rule : {Rule::topk, Rule::slots, Rule::all_or_nothing, Rule::paper_keyed}) {
      // alpha, the rule's probability of keeping a sole in-neighbour: 1, except the keyed
      // SAMPLE-EDGELISTS at K = 1 (p = K / 2 = 1/2); measured below on m single-sender receivers.
      const double alpha = rule == Rule::paper_keyed && k == 1 ? 0.5 : 1.0;
      const std::int64_t n_chain = static_cast<std::int64_t>(std::ceil(2.0 * static_cast<double>(k) / alpha));
      const std::string what = "K " + std::to_string(k) + ", rule " + rule_name(rule);
      double best = 0.0;
      for (std::int64_t j = 1; j <= n_chain; ++j) {
        const std::int64_t n = 1 + m + m * (j - 1);
        Adj adj(n);
        std::vector<std::uint8_t> train(n, 0);
        train[0] = 1;
        for (std::int64_t i = 0; i < m; ++i) {
          const std::int64_t u = 1 + i;
          adj[0].push_back(u);
          adj[u].push_back(0);
          for (std::int64_t l = 0; l < j - 1; ++l) {
            const std::int64_t x = 1 + m + i * (j - 1) + l;
            train[x] = 1;
            adj[x].push_back(u);
            adj[u].push_back(x);
          }
        }
        double mean = 0.0;
        std::int64_t sole_kept = 0;
        for (int key = 1; key <= keys; ++key) {
          const Bounded g = bound_graph(adj, train, -1, rule, k, static_cast<std::uint64_t>(key));
          for (std::int64_t u = 1; u <= m; ++u) ASSERT_LE(static_cast<std::int64_t>(g.kept[u].size()), k) << what;
          if (j == 1)
            for (std::int64_t u = 1; u <= m; ++u) sole_kept += static_cast<std::int64_t>(g.kept[u].size());
          mean += static_cast<double>(compare(g, bound_graph(adj, train, 0, rule, k, static_cast<std::uint64_t>(key)),
                                              train, 0)
                                          .without_w);
        }
        if (j == 1) {  // the premise: a sole in-neighbour is kept with probability alpha
          EXPECT_NEAR(static_cast<double>(sole_kept) / static_cast<double>(m * keys), alpha, 0.1) << what;
          EXPECT_EQ(mean, 0.0) << what;  // nothing else to change
        }
        best = std::max(best, mean / keys);
      }
      std::cout << "star of " << m << " receivers, " << what << ": best mean changed subgraphs without w " << best
                << " (Theorem C: >= " << static_cast<double>(m) * alpha * alpha / (4.0 * static_cast<double>(k))
                << ")\n";
      EXPECT_GE(best, static_cast<double>(m) * alpha * alpha / (4.0 * static_cast<double>(k))) << what;
      EXPECT_GT(best, static_cast<double>(dpgnn_occurrence_bound(k, 1))) << what;
    }
}

// Real graphs: an undirected edge list read from ../shared/data, ids compacted.
Adj read_edges(const std::string& path, char sep, bool header) {
  std::ifstream in(path);
  if (!in) return {};
  std::map<std::int64_t, std::int64_t> id;
  std::vector<std::pair<std::int64_t, std::int64_t>> e;
  std::string line;
  if (header) std::getline(in, line);
  while (std::getline(in, line)) {
    std::replace(line.begin(), line.end(), sep, ' ');
    std::istringstream s(line);
    std::int64_t a = 0, b = 0;
    if (!(s >> a >> b)) continue;
    const std::int64_t ia = id.emplace(a, static_cast<std::int64_t>(id.size())).first->second;
    const std::int64_t ib = id.emplace(b, static_cast<std::int64_t>(id.size())).first->second;
    if (ia != ib) e.push_back({ia, ib});
  }
  Adj adj(id.size());
  for (const auto& [a, b] : e) {
    adj[a].push_back(b);
    adj[b].push_back(a);
  }
  for (auto& row : adj) {
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
  }
  return adj;
}

// Removes the 10 highest-degree training nodes and 20 random nodes, and adds one new
// training node joined to every node that has exactly K training neighbours (adversarial:
// each of them goes over the cap); the largest numbers of changed subgraphs of each kind.
struct Worst {
  std::int64_t top = 0, random = 0, added = 0;
  std::int64_t most() const { return std::max({top, random, added}); }
};
Worst worst_change(Adj adj, double train_fraction, Rule rule, std::int64_t k) {
  const std::int64_t n = static_cast<std::int64_t>(adj.size());
  std::mt19937_64 gen(36);
  std::bernoulli_distribution coin(train_fraction);
  std::vector<std::uint8_t> train(n + 1, 0);
  for (std::int64_t v = 0; v < n; ++v) train[v] = coin(gen);
  std::vector<std::int64_t> order(n);
  for (std::int64_t v = 0; v < n; ++v) order[v] = v;
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return adj[a].size() > adj[b].size(); });
  std::vector<std::int64_t> victims;
  for (std::int64_t v : order)
    if (train[v] && victims.size() < 10) victims.push_back(v);
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  while (victims.size() < 30) victims.push_back(pick(gen));
  // The added node n (absent from `adj` rows until joined; `removed = n` gives G without it).
  adj.emplace_back();
  train[n] = 1;
  for (std::int64_t u = 0; u < n; ++u) {
    std::int64_t t = 0;
    for (std::int64_t v : adj[u]) t += train[v];
    if (t == k) {
      adj[u].push_back(n);
      adj[n].push_back(u);
    }
  }
  victims.push_back(n);
  const std::uint64_t key = 0x36;
  const Bounded g = bound_graph(adj, train, -1, rule, k, key);
  Worst worst;
  for (std::size_t i = 0; i < victims.size(); ++i) {
    // Removing an original node compares G (with the added node) and G minus w; the added
    // node's own pair is "G minus n" plus n: its addition.
    const std::int64_t w = victims[i];
    const std::int64_t c = compare(g, bound_graph(adj, train, w, rule, k, key), train, w).total;
    std::int64_t& slot = i < 10 ? worst.top : w == n ? worst.added : worst.random;
    slot = std::max(slot, c);
  }
  return worst;
}

TEST(DpgnnDegreeBound, NaturalCappedRulesExceedTheAccountantsCountOnRealGraphs) {
  DPGNN_NEED_SHARED_DATA();
  const std::string data = std::string(DPGNN_SHARED_DIR) + "/data/";
  const Adj cora = read_edges(data + "cora/pygcn/cora.cites", '\t', false);
  const Adj twitch = read_edges(data + "twitch-es/ES_edges.csv", ',', true);
  ASSERT_EQ(cora.size(), 2708u) << data << "cora/pygcn/cora.cites";
  ASSERT_EQ(twitch.size(), 4648u) << data << "twitch-es/ES_edges.csv";
  for (std::int64_t k : {1, 5})
    for (Rule rule : {Rule::topk, Rule::slots, Rule::paper_keyed}) {
      for (const auto& [name, adj, fraction] :
           {std::make_tuple("cora", &cora, 0.55), std::make_tuple("twitch-es", &twitch, 0.5)}) {
        const Worst c = worst_change(*adj, fraction, rule, k);
        std::cout << name << ", K " << k << ", rule " << rule_name(rule)
                  << ": most changed subgraphs removing a top-10-degree training node " << c.top
                  << ", a random node " << c.random << ", adding the adversarial node " << c.added
                  << " (N(K, 1) = " << dpgnn_occurrence_bound(k, 1) << ")\n";
        EXPECT_GT(c.most(), dpgnn_occurrence_bound(k, 1)) << name;
        EXPECT_GT(c.top, dpgnn_occurrence_bound(k, 1)) << name;
        EXPECT_GT(c.added, dpgnn_occurrence_bound(k, 1)) << name;
      }
    }
}

}  // namespace
}  // namespace dpgnn::sampling
