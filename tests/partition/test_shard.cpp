// Tests of parts_for_rank and load_shard: every rank's shard loaded in one process (shards
// need no communication), checked against the whole partition file read independently.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/partition/partition_writer.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/util/error.h"
#include "partition_test_data.h"

namespace dpgnn::partition {
namespace {

using testing::ClusteredSpec;
using testing::TempDir;

TEST(PartsForRank, GivesEachRankAContiguousBlockCoveringAllParts) {
  EXPECT_EQ(parts_for_rank(0, 1, 4), (std::pair<int, int>{0, 4}));
  EXPECT_EQ(parts_for_rank(0, 2, 4), (std::pair<int, int>{0, 2}));
  EXPECT_EQ(parts_for_rank(1, 2, 4), (std::pair<int, int>{2, 4}));
  for (int r = 0; r < 4; ++r) EXPECT_EQ(parts_for_rank(r, 4, 4), (std::pair<int, int>{r, r + 1}));
  // Uneven: 3 ranks, 8 parts -> blocks of 2, 3, 3 covering [0, 8) in order.
  int next = 0;
  for (int r = 0; r < 3; ++r) {
    const auto [a, b] = parts_for_rank(r, 3, 8);
    EXPECT_EQ(a, next);
    EXPECT_GE(b - a, 2);
    EXPECT_LE(b - a, 3);
    next = b;
  }
  EXPECT_EQ(next, 8);
}

TEST(PartsForRank, MoreRanksThanPartsIsAUsageErrorNamingBothNumbers) {
  try {
    parts_for_rank(0, 8, 4);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("8 ranks"), std::string::npos) << m;
    EXPECT_NE(m.find("4 parts"), std::string::npos) << m;
  }
  EXPECT_THROW(parts_for_rank(2, 2, 4), UsageError);
  EXPECT_THROW(parts_for_rank(0, 0, 4), UsageError);
}

// A partitioned fixture shared by the shard tests.
struct Partitioned {
  TempDir tmp;
  std::string dataset, part;
  graph::Dataset whole;  // the partition file read completely (new ids)
  std::vector<std::int64_t> new_to_old, offsets;
  explicit Partitioned(graph::Setting setting, Method method = Method::metis) {
    ClusteredSpec spec;
    spec.setting = setting;
    dataset = tmp.file("g.h5");
    part = tmp.file("g.part.h5");
    graph::write_dataset(testing::clustered_dataset(spec), dataset);
    PartitionOptions o;
    o.method = method;
    o.num_parts = 4;
    o.seed = 2;
    partition_dataset(dataset, part, o);
    whole = graph::read_dataset(part);
    const PartitionFile pf = PartitionFile::open(part);
    new_to_old = pf.new_to_old();
    offsets = pf.part_offsets();
  }
  int part_of_new(std::int64_t v) const {
    return static_cast<int>(std::upper_bound(offsets.begin(), offsets.end(), v) - offsets.begin()) - 1;
  }
};

TEST(LoadShard, ShardsOfAllRanksCoverEveryNodeOnceForOneTwoAndFourRanks) {
  const Partitioned P(graph::Setting::transductive);
  const std::int64_t n = P.whole.graph.num_nodes(), f = P.whole.meta.num_features;
  for (int w : {1, 2, 4}) {
    std::vector<int> covered(n, 0);
    for (int r = 0; r < w; ++r) {
      const Shard s = load_shard(P.part, r, w);
      ASSERT_EQ(s.rows.num_nodes(), s.num_local());
      for (std::int64_t i = 0; i < s.num_local(); ++i) {
        const std::int64_t g = s.begin + i;
        ++covered[g];
        // The local row is the global row, with global neighbour ids.
        const auto want = P.whole.graph.out_neigh(g);
        ASSERT_TRUE(std::equal(want.begin(), want.end(), s.rows.out_neigh(i).begin(), s.rows.out_neigh(i).end()));
        ASSERT_EQ(s.degrees[i], want.size());
        ASSERT_TRUE(std::equal(s.features.begin() + i * f, s.features.begin() + (i + 1) * f,
                               P.whole.features.begin() + g * f));
        ASSERT_EQ(s.labels[i], P.whole.labels[g]);
        ASSERT_EQ(s.train_mask[i], P.whole.train_mask[g]);
        ASSERT_EQ(s.val_mask[i], P.whole.val_mask[g]);
        ASSERT_EQ(s.test_mask[i], P.whole.test_mask[g]);
        ASSERT_EQ(s.new_to_old[i], P.new_to_old[g]);
      }
      EXPECT_EQ(s.training_graphs.size(), static_cast<std::size_t>(4 / w));
    }
    EXPECT_TRUE(std::all_of(covered.begin(), covered.end(), [](int c) { return c == 1; })) << w << " ranks";
  }
}

TEST(LoadShard, TransductiveTrainingGraphsHoldExactlyTheIntraPartEdges) {
  const Partitioned P(graph::Setting::transductive);
  for (int w : {1, 2, 4})
    for (int r = 0; r < w; ++r) {
      const Shard s = load_shard(P.part, r, w);
      for (const PartGraph& pg : s.training_graphs) {
        ASSERT_EQ(pg.graph.num_nodes(), pg.end - pg.begin);
        // Expected: every stored entry of the part's rows whose other end is in the part.
        std::set<std::pair<std::int64_t, std::int64_t>> want, got;
        for (std::int64_t g = pg.begin; g < pg.end; ++g)
          for (auto v : P.whole.graph.out_neigh(g))
            if (P.part_of_new(v) == pg.part) want.insert({g, v});
        for (std::int64_t u = 0; u < pg.graph.num_nodes(); ++u)
          for (auto v : pg.graph.out_neigh(u)) got.insert({pg.begin + u, pg.begin + v});
        EXPECT_EQ(got, want) << "part " << pg.part << " with " << w << " ranks";
        EXPECT_GT(got.size(), 0u);
      }
    }
}

TEST(LoadShard, TrainingGraphsAreTheSameWhateverTheNumberOfRanks) {
  const Partitioned P(graph::Setting::transductive);
  std::map<int, graph::CsrGraph> by_part;
  for (int r = 0; r < 4; ++r)
    for (auto& pg : load_shard(P.part, r, 4).training_graphs) by_part[pg.part] = pg.graph;
  for (int w : {1, 2})
    for (int r = 0; r < w; ++r)
      for (const auto& pg : load_shard(P.part, r, w).training_graphs) {
        EXPECT_EQ(pg.graph.indptr(), by_part[pg.part].indptr());
        EXPECT_EQ(pg.graph.indices(), by_part[pg.part].indices());
      }
}

TEST(LoadShard, InductiveTrainingGraphsKeepOnlyEdgesAmongTrainingNodes) {
  const Partitioned P(graph::Setting::inductive);
  std::int64_t kept = 0;
  for (int r = 0; r < 2; ++r) {
    const Shard s = load_shard(P.part, r, 2);
    for (const PartGraph& pg : s.training_graphs) {
      for (std::int64_t u = 0; u < pg.graph.num_nodes(); ++u) {
        const std::int64_t gu = pg.begin + u;
        if (!P.whole.train_mask[gu]) {
          EXPECT_EQ(pg.graph.out_degree(u), 0) << "non-training node " << gu;
        }
        std::set<std::int64_t> want;
        if (P.whole.train_mask[gu])
          for (auto v : P.whole.graph.out_neigh(gu))
            if (P.part_of_new(v) == pg.part && P.whole.train_mask[v]) want.insert(v);
        std::set<std::int64_t> got;
        for (auto v : pg.graph.out_neigh(u)) got.insert(pg.begin + v);
        EXPECT_EQ(got, want) << "node " << gu;
        kept += static_cast<std::int64_t>(got.size());
      }
    }
  }
  EXPECT_GT(kept, 0);
}

TEST(LoadShard, HaloListsAreExactlyTheRemoteNeighboursGroupedByOwnerWithGlobalDegrees) {
  const Partitioned P(graph::Setting::transductive, Method::random);  // random: many remote edges
  for (int w : {1, 2, 4})
    for (int r = 0; r < w; ++r) {
      const Shard s = load_shard(P.part, r, w);
      ASSERT_EQ(s.halo.size(), static_cast<std::size_t>(w));
      // Brute force: neighbours of [begin, end) outside it, by owner rank.
      std::vector<std::set<std::int64_t>> want(w);
      for (std::int64_t g = s.begin; g < s.end; ++g)
        for (auto v : P.whole.graph.out_neigh(g))
          if (v < s.begin || v >= s.end) {
            const int owner_part = P.part_of_new(v);
            int owner = 0;
            while (!(parts_for_rank(owner, w, 4).first <= owner_part && owner_part < parts_for_rank(owner, w, 4).second))
              ++owner;
            want[owner].insert(v);
          }
      for (int q = 0; q < w; ++q) {
        const HaloGroup& h = s.halo[q];
        EXPECT_EQ(h.rank, q);
        EXPECT_EQ(std::vector<std::int64_t>(want[q].begin(), want[q].end()), h.nodes) << "rank " << r << " from " << q;
        ASSERT_EQ(h.degrees.size(), h.nodes.size());
        for (std::size_t i = 0; i < h.nodes.size(); ++i)
          EXPECT_EQ(h.degrees[i], P.whole.graph.out_degree(h.nodes[i]));
      }
      EXPECT_TRUE(s.halo[r].nodes.empty());
      if (w > 1) {
        EXPECT_FALSE(s.halo[(r + 1) % w].nodes.empty());
      }
    }
}

TEST(LoadShard, DatasetItselfIsAOnePartShardWithIdentityIds) {
  TempDir tmp;
  const std::string ds = tmp.file("g.h5");
  const auto d = testing::clustered_dataset(ClusteredSpec{});
  graph::write_dataset(d, ds);
  const PartitionFile pf = PartitionFile::open_or_single("", ds);
  ShardOptions no_features;
  no_features.load_features = false;
  const Shard s = load_shard(pf, 0, 1, no_features);
  EXPECT_EQ(s.begin, 0);
  EXPECT_EQ(s.end, 600);
  EXPECT_TRUE(s.features.empty());
  for (std::int64_t i = 0; i < 600; ++i) ASSERT_EQ(s.new_to_old[i], i);
  EXPECT_EQ(s.training_graphs.size(), 1u);
  EXPECT_EQ(s.training_graphs[0].graph.indices(), d.graph.indices());  // one part: every edge is intra-part
  EXPECT_THROW(load_shard(pf, 0, 2), UsageError);
}

TEST(LoadShard, OwnerOfMapsGlobalIdsToTheRankHoldingThem) {
  const Partitioned P(graph::Setting::transductive);
  const Shard s = load_shard(P.part, 1, 2);
  EXPECT_EQ(s.owner_of(0), 0);
  EXPECT_EQ(s.owner_of(s.begin), 1);
  EXPECT_EQ(s.owner_of(s.begin - 1), 0);
  EXPECT_EQ(s.owner_of(s.end - 1), 1);
}

}  // namespace
}  // namespace dpgnn::partition
