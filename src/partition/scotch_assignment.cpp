// PT-Scotch k-way assignment of a distributed graph. See scotch_assignment.h.
#include "scotch_assignment.h"

#include <cstdio>  // ptscotch.h uses FILE
#include <ptscotch.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "dpgnn/util/error.h"
#include "dpgnn/util/rng.h"

namespace dpgnn::partition::detail {

// The 64-bit flavour (cmake/FindPTScotch.cmake): ids, offsets and weight sums of
// papers100M-sized graphs exceed 2^31.
static_assert(std::is_same<SCOTCH_Num, std::int64_t>::value,
              "dpgnn expects PT-Scotch built with a 64-bit SCOTCH_Num (Debian's scotch-int64 flavour)");

namespace {
// Stream of the edge-sampling hashes (distinct from other users of the seed).
constexpr std::uint64_t kSampleStream = 0x73636873616d706cULL;  // "schsampl"
}  // namespace

std::int64_t train_weight_ratio(std::int64_t num_nodes, std::int64_t num_edges, std::int64_t num_train) {
  if (num_train <= 0) return 0;
  return std::max<std::int64_t>(1, std::llround(static_cast<double>(num_nodes + num_edges) /
                                                static_cast<double>(num_train)));
}

double keep_fraction(std::int64_t num_nodes, std::int64_t adjacency_entries) {
  if (adjacency_entries <= 0) return 1.0;
  return std::min(1.0, kScotchSampleDegree * static_cast<double>(num_nodes) / static_cast<double>(adjacency_entries));
}

LocalGraph sample_edges(const LocalGraph& g, double keep, std::uint64_t seed) {
  if (keep >= 1.0) return g;
  // Keep {u, v} when the pair's 64-bit hash falls below keep * 2^64 (one Philox draw per
  // pair, keyed by the seed: util/rng.h).
  // (the largest double below 2^64 bounds it, so the conversion is defined)
  const auto threshold = static_cast<std::uint64_t>(std::min(std::ldexp(keep, 64), 18446744073709549568.0));
  LocalGraph s;
  s.begin = g.begin;
  s.weights = g.weights;
  const std::int64_t n = g.num_local();
  s.xadj.assign(static_cast<std::size_t>(n) + 1, 0);
  for (int pass = 0; pass < 2; ++pass) {
    std::int64_t out = 0;
    for (std::int64_t u = 0; u < n; ++u) {
      const std::int64_t gu = g.begin + u;
      for (std::int64_t i = g.xadj[u]; i < g.xadj[u + 1]; ++i) {
        const std::int64_t v = g.adjncy[i];
        const auto lo = static_cast<std::uint64_t>(std::min(gu, v)), hi = static_cast<std::uint64_t>(std::max(gu, v));
        CounterRng rng(seed, kSampleStream, (lo << 32) | hi);
        if (rng.next_u64() >= threshold) continue;
        if (pass == 1) s.adjncy[out] = v;
        ++out;
      }
      if (pass == 0) s.xadj[u + 1] = out;
    }
    if (pass == 0) s.adjncy.resize(static_cast<std::size_t>(out));
  }
  return s;
}

namespace {

// Releases Scotch structures on every exit path.
struct ScotchGraph {
  SCOTCH_Dgraph g;
  bool init = false;
  ~ScotchGraph() {
    if (init) SCOTCH_dgraphExit(&g);
  }
};
struct ScotchStrat {
  SCOTCH_Strat s;
  bool init = false;
  ~ScotchStrat() {
    if (init) SCOTCH_stratExit(&s);
  }
};

struct ScotchContext {
  SCOTCH_Context c;
  bool init = false;
  ~ScotchContext() {
    if (init) SCOTCH_contextExit(&c);
  }
};

}  // namespace

std::vector<PartId> ptscotch_assignment(LocalGraph& g, int num_parts, double imbalance, std::uint64_t seed,
                                        const void* mpi_comm, int ranks, const std::string& context) {
  if (mpi_comm == nullptr) throw IoError(context + ": PT-Scotch needs an MPI communicator");
  const MPI_Comm comm = *static_cast<const MPI_Comm*>(mpi_comm);  // ptscotch.h brings MPI's types
  const std::int64_t n = g.num_local();
  auto fail = [&](const std::string& call, int rc) {
    throw IoError(context + ": PT-Scotch " + call + " failed (return code " + std::to_string(rc) +
                  "; Scotch's own message is on stderr)");
  };
  ScotchGraph sg;
  if (const int rc = SCOTCH_dgraphInit(&sg.g, comm); rc != 0) fail("SCOTCH_dgraphInit", rc);
  sg.init = true;
  const auto edges = static_cast<SCOTCH_Num>(g.adjncy.size());
  // Scotch keeps pointers to our arrays (no copy): they must outlive the graph, which they do.
  if (const int rc = SCOTCH_dgraphBuild(&sg.g, /*baseval=*/0, n, n, g.xadj.data(), /*vendloctab=*/nullptr,
                                        g.weights.data(), /*vlblloctab=*/nullptr, edges, edges, g.adjncy.data(),
                                        /*edgegsttab=*/nullptr, /*edloloctab=*/nullptr);
      rc != 0)
    fail("SCOTCH_dgraphBuild", rc);
  ScotchStrat st;
  if (const int rc = SCOTCH_stratInit(&st.s); rc != 0) fail("SCOTCH_stratInit", rc);
  st.init = true;
  // The default k-way mapping strategy with the requested imbalance (kbalval).
  if (const int rc = SCOTCH_stratDgraphMapBuild(&st.s, SCOTCH_STRATDEFAULT, ranks, num_parts, imbalance); rc != 0)
    fail("SCOTCH_stratDgraphMapBuild", rc);
  // Same seed and rank count -> same partition (checked by tests/partition/test_distributed_partition):
  // the global generator alone is not enough (Scotch's threads), so the call runs in a context
  // with Scotch 7's deterministic option and its own seeded generator.
  SCOTCH_randomSeed(static_cast<SCOTCH_Num>(seed % (std::uint64_t{1} << 62)));
  SCOTCH_randomReset();
  ScotchContext ctx;
  if (const int rc = SCOTCH_contextInit(&ctx.c); rc != 0) fail("SCOTCH_contextInit", rc);
  ctx.init = true;
  if (const int rc = SCOTCH_contextOptionSetNum(&ctx.c, SCOTCH_OPTIONNUMDETERMINISTIC, 1); rc != 0)
    fail("SCOTCH_contextOptionSetNum(DETERMINISTIC)", rc);
  SCOTCH_contextRandomSeed(&ctx.c, static_cast<SCOTCH_Num>(seed % (std::uint64_t{1} << 62)));
  SCOTCH_Dgraph bound;  // a container pointing at sg.g (nothing to free)
  if (const int rc = SCOTCH_contextBindDgraph(&ctx.c, &sg.g, &bound); rc != 0) fail("SCOTCH_contextBindDgraph", rc);
  std::vector<SCOTCH_Num> part(static_cast<std::size_t>(n));
  if (const int rc = SCOTCH_dgraphPart(&bound, num_parts, &st.s, part.data()); rc != 0) fail("SCOTCH_dgraphPart", rc);
  std::vector<PartId> out(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) {
    if (part[v] < 0 || part[v] >= num_parts)
      throw IoError(context + ": PT-Scotch returned part " + std::to_string(part[v]) + " for node " +
                    std::to_string(g.begin + v) + ", outside [0, " + std::to_string(num_parts) + ")");
    out[v] = static_cast<PartId>(part[v]);
  }
  return out;
}

}  // namespace dpgnn::partition::detail
