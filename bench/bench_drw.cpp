// DRW / DRW-R generation throughput (issue 4, item 6) against a plain uniform random walk.
//
// Graphs are built in memory: a uniform random multigraph with the node count and the
// number of directed CSR entries of Reddit (232,965 nodes, 114.6M entries, average degree
// ~490) or ogbn-products (2,449,029 nodes, 123.7M entries, average degree ~51). Each of E/2
// undirected edges joins two uniformly random distinct nodes, so degrees are
// Poisson-like rather than the real graphs' skewed ones; memory access is what bounds a
// walk and that depends on the graph's size and degree, which these match. Rows are not
// sorted or deduplicated (the samplers need neither; ~0.2% repeats at Reddit density).
//
// Reported, one thread (= per core):
//   walk      plain uniform random walk of length L from uniformly random starts, with W
//             walkers interleaved per thread (prefetch, as ThunderRW): steps/s.
//   drw/drw-r a full pass of sampling::sample_drw over the graph with every node a root
//             candidate (the most work a pass can have): seconds per pass and steps/s,
//             where steps = nodes placed by walks (all subgraph nodes minus the roots),
//             timed over the whole call (shuffle, walks, output).
//
// Usage: bench_drw [reddit|products|all] [--repeat N] [--walk-length L] [--restarts R]
//                  [--train-fraction F]   (root candidates: all nodes, or a random fraction F)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dpgnn/graph/csr_graph.h"
#include "dpgnn/sampling/sampler.h"
#include "dpgnn/sampling/verify.h"
#include "dpgnn/util/rng.h"

namespace {

using dpgnn::Xoshiro256;
using dpgnn::graph::CsrGraph;
using dpgnn::graph::EdgeIdx;
using dpgnn::graph::NodeId;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Uniform random multigraph with n nodes and about `entries` directed CSR entries, built
// by counting sort over two passes of the same random stream (no edge list in memory).
CsrGraph random_graph(std::int64_t n, std::int64_t entries, std::uint64_t seed) {
  const std::int64_t m = entries / 2;
  std::vector<EdgeIdx> indptr(n + 1, 0);
  auto pairs = [&](auto&& visit) {
    Xoshiro256 rng(seed);
    for (std::int64_t i = 0; i < m;) {
      const auto u = static_cast<NodeId>(rng.below_fast(static_cast<std::uint64_t>(n)));
      const auto v = static_cast<NodeId>(rng.below_fast(static_cast<std::uint64_t>(n)));
      if (u == v) continue;
      visit(u, v);
      ++i;
    }
  };
  pairs([&](NodeId u, NodeId v) {
    ++indptr[u + 1];
    ++indptr[v + 1];
  });
  for (std::int64_t v = 0; v < n; ++v) indptr[v + 1] += indptr[v];
  std::vector<NodeId> indices(static_cast<std::size_t>(indptr[n]));
  std::vector<EdgeIdx> fill(indptr.begin(), indptr.end() - 1);
  pairs([&](NodeId u, NodeId v) {
    indices[fill[u]++] = v;
    indices[fill[v]++] = u;
  });
  return CsrGraph(std::move(indptr), std::move(indices));
}

// Plain uniform random walks: `walkers` interleaved, `total_steps` steps in all.
double uniform_walk_steps_per_s(const CsrGraph& g, int walkers, std::int64_t total_steps, int length) {
  const EdgeIdx* indptr = g.indptr().data();
  const NodeId* indices = g.indices().data();
  const std::uint64_t n = static_cast<std::uint64_t>(g.num_nodes());
  Xoshiro256 rng(12345);
  std::vector<std::int64_t> cur(walkers), left(walkers);
  std::vector<EdgeIdx> pending(walkers);
  for (int w = 0; w < walkers; ++w) {
    cur[w] = static_cast<std::int64_t>(rng.below_fast(n));
    left[w] = length;
  }
  std::int64_t steps = 0;
  std::uint64_t sink = 0;
  const double t0 = now();
  while (steps < total_steps) {
    for (int w = 0; w < walkers; ++w) {
      const EdgeIdx b = indptr[cur[w]];
      const auto d = static_cast<std::uint64_t>(indptr[cur[w] + 1] - b);
      pending[w] = d == 0 ? -1 : b + static_cast<EdgeIdx>(rng.below_fast(d));
      if (pending[w] >= 0) __builtin_prefetch(indices + pending[w]);
    }
    for (int w = 0; w < walkers; ++w) {
      if (pending[w] < 0 || --left[w] == 0) {  // dead end or walk done: a new start
        cur[w] = static_cast<std::int64_t>(rng.below_fast(n));
        left[w] = length;
      } else {
        cur[w] = indices[pending[w]];
        sink += static_cast<std::uint64_t>(cur[w]);
        __builtin_prefetch(indptr + cur[w]);
      }
      ++steps;
    }
  }
  const double dt = now() - t0;
  if (sink == 42) std::printf(" ");
  return static_cast<double>(steps) / dt;
}

struct PassResult {
  double seconds = 1e300;
  std::int64_t steps = 0, subgraphs = 0;
};

PassResult drw_pass(const CsrGraph& g, const std::vector<std::uint8_t>& mask, std::int64_t L, std::int64_t R,
                    std::int64_t walkers, int repeat, bool verify) {
  PassResult best;
  for (int rep = 0; rep < repeat; ++rep) {
    dpgnn::sampling::DrwOptions o;
    o.walk_length = L;
    o.restarts = R;
    o.walkers = walkers;
    const double t0 = now();
    const auto s = dpgnn::sampling::sample_drw(g, mask, o, {static_cast<std::uint64_t>(rep), 0, 0});
    const double dt = now() - t0;
    if (dt < best.seconds) {
      best.seconds = dt;
      best.steps = static_cast<std::int64_t>(s.nodes.size()) - s.size();
      best.subgraphs = s.size();
    }
    if (verify && rep == 0) {
      dpgnn::sampling::SamplerOptions so;
      so.kind = R == 1 ? dpgnn::sampling::SamplerKind::drw : dpgnn::sampling::SamplerKind::drw_r;
      so.walk_length = L;
      so.restarts = R;
      const double v0 = now();
      dpgnn::sampling::verify_subgraphs(g, mask, s, dpgnn::sampling::checks_for(so), "bench");
      std::printf("    (verify_subgraphs: ok, %.3f s)\n", now() - v0);
    }
  }
  return best;
}

void run_scale(const char* name, std::int64_t n, std::int64_t entries, int repeat, std::int64_t L, std::int64_t R,
               double train_fraction) {
  std::printf("== %s-scale: %lld nodes, %lld directed entries requested\n", name, static_cast<long long>(n),
              static_cast<long long>(entries));
  double t0 = now();
  const CsrGraph g = random_graph(n, entries, 2024);
  std::printf("  graph built in %.1f s: %lld entries, average degree %.1f\n", now() - t0,
              static_cast<long long>(g.num_edges()), static_cast<double>(g.num_edges()) / static_cast<double>(n));
  for (int w : {1, 16, 64})
    std::printf("  uniform walk, L=%lld, %2d walker(s)/thread: %6.2f M steps/s\n", static_cast<long long>(L), w,
                uniform_walk_steps_per_s(g, w, 20000000, static_cast<int>(L)) / 1e6);
  // Root candidates: every node (fraction 1), or each node with probability train_fraction.
  std::vector<std::uint8_t> all(static_cast<std::size_t>(n), 1);
  if (train_fraction < 1.0) {
    Xoshiro256 coin(7);
    for (auto& m : all) m = coin.uniform() < train_fraction ? 1 : 0;
    std::printf("  root candidates: fraction %.2f of the nodes\n", train_fraction);
  }
  for (std::int64_t r : {std::int64_t{1}, R}) {
    for (std::int64_t w : {1, 16, 64}) {
      const PassResult p = drw_pass(g, all, L, r, w, repeat, w == 16);
      std::printf("  %-5s L=%lld R=%lld, %2lld walker(s)/thread: full pass %.3f s, %lld steps, %lld subgraphs, %6.2f M steps/s\n",
                  r == 1 ? "drw" : "drw-r", static_cast<long long>(L), static_cast<long long>(r),
                  static_cast<long long>(w), p.seconds, static_cast<long long>(p.steps),
                  static_cast<long long>(p.subgraphs), static_cast<double>(p.steps) / p.seconds / 1e6);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = "all";
  int repeat = 3;
  std::int64_t L = 4, R = 4;
  double train_fraction = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--walk-length") && i + 1 < argc) L = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--restarts") && i + 1 < argc) R = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--train-fraction") && i + 1 < argc) train_fraction = std::atof(argv[++i]);
    else which = argv[i];
  }
  if (which != "reddit" && which != "products" && which != "all") {
    std::fprintf(stderr, "usage: bench_drw [reddit|products|all] [--repeat N] [--walk-length L] [--restarts R] [--train-fraction F]\n");
    return 2;
  }
  if (which != "products") run_scale("Reddit", 232965, 114615892, repeat, L, R, train_fraction);
  if (which != "reddit") run_scale("ogbn-products", 2449029, 123718280, repeat, L, R, train_fraction);
  return 0;
}
