// Tests of `partition_dataset` and the partition file reader: every node in exactly one part,
// balance within the requested tolerance, the same content for the same seed, a file that
// validates as a dataset, a relabelling that round-trips, and the refusals (stale partition,
// plain dataset, existing output). On a planted-partition fixture, and on Cora when the
// shared data and `dpgnn import` are available.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>

#include "dpgnn/graph/validate.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/partition/partition_writer.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"
#include "partition_test_data.h"
#include "test_support.h"

namespace dpgnn::partition {
namespace {

using testing::ClusteredSpec;
using testing::TempDir;

template <typename T>
std::vector<T> read_partition_array(const std::string& file, const std::string& name) {
  return h5::File::open_read(file).open_dataset("/partition/" + name).read_all<T>();
}

// Checks every property the contract promises for `part_file` made from `dataset_file`,
// against the original dataset read independently.
void expect_valid_partition(const std::string& dataset_file, const std::string& part_file, int parts,
                            double imbalance, bool check_balance) {
  const graph::Dataset orig = graph::read_dataset(dataset_file);
  const std::int64_t n = orig.graph.num_nodes();
  // The partition file is a complete, valid dataset.
  graph::DatasetStats stats;
  const graph::Dataset rel = graph::load_and_validate(part_file, &stats);
  ASSERT_EQ(rel.graph.num_nodes(), n);
  ASSERT_EQ(rel.graph.num_edges(), orig.graph.num_edges());

  const auto part_of = read_partition_array<std::int32_t>(part_file, "part_of");
  const auto new_to_old = read_partition_array<std::int64_t>(part_file, "new_to_old");
  const auto offsets = read_partition_array<std::int64_t>(part_file, "part_offsets");
  ASSERT_EQ(static_cast<std::int64_t>(part_of.size()), n);
  ASSERT_EQ(static_cast<int>(offsets.size()), parts + 1);

  // Every node in exactly one part: new_to_old is a permutation, and the new ids of part p
  // are exactly the original nodes with part_of == p, in original-id order.
  std::vector<int> seen(n, 0);
  for (auto v : new_to_old) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, n);
    ++seen[v];
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
  for (int p = 0; p < parts; ++p) {
    std::vector<std::int64_t> members;
    for (std::int64_t v = 0; v < n; ++v)
      if (part_of[v] == p) members.push_back(v);
    const std::vector<std::int64_t> range(new_to_old.begin() + offsets[p], new_to_old.begin() + offsets[p + 1]);
    EXPECT_EQ(range, members) << "part " << p;
  }

  // Relabelling round-trips: the content of new id i is the original content of
  // new_to_old[i], and the edge {i, j} exists iff {new_to_old[i], new_to_old[j]} does.
  const std::int64_t f = orig.meta.num_features;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t o = new_to_old[i];
    ASSERT_TRUE(std::equal(rel.features.begin() + i * f, rel.features.begin() + (i + 1) * f,
                           orig.features.begin() + o * f));
    ASSERT_EQ(rel.labels[i], orig.labels[o]);
    ASSERT_EQ(rel.train_mask[i], orig.train_mask[o]);
    ASSERT_EQ(rel.val_mask[i], orig.val_mask[o]);
    ASSERT_EQ(rel.test_mask[i], orig.test_mask[o]);
    std::vector<std::int64_t> mapped;
    for (auto j : rel.graph.out_neigh(i)) mapped.push_back(new_to_old[j]);
    std::sort(mapped.begin(), mapped.end());
    std::vector<std::int64_t> want(orig.graph.out_neigh(o).begin(), orig.graph.out_neigh(o).end());
    std::sort(want.begin(), want.end());
    ASSERT_EQ(mapped, want) << "row of new id " << i;
  }

  // Per-part counts, edge cut and balance, recomputed from the original dataset.
  std::vector<std::int64_t> nodes(parts, 0), edges(parts, 0), train(parts, 0);
  std::int64_t cut = 0;
  for (std::int64_t v = 0; v < n; ++v) {
    ++nodes[part_of[v]];
    edges[part_of[v]] += orig.graph.out_degree(v);
    train[part_of[v]] += orig.train_mask[v];
    for (auto u : orig.graph.out_neigh(v))
      if (u > v && part_of[u] != part_of[v]) ++cut;
  }
  EXPECT_EQ(read_partition_array<std::int64_t>(part_file, "part_nodes"), nodes);
  EXPECT_EQ(read_partition_array<std::int64_t>(part_file, "part_edges"), edges);
  EXPECT_EQ(read_partition_array<std::int64_t>(part_file, "part_train_nodes"), train);
  const h5::File pf = h5::File::open_read(part_file);
  EXPECT_EQ(pf.attr_int("/partition", "edge_cut"), cut);
  EXPECT_EQ(pf.attr_string("/partition", "dataset_checksum"), orig.meta.checksum);
  EXPECT_EQ(pf.attr_string("/partition", "dataset_name"), orig.meta.name);
  EXPECT_EQ(pf.attr_int("/partition", "num_parts"), parts);
  if (check_balance) {
    // max part / mean <= 1 + imbalance for each METIS constraint.
    const double tol = 1.0 + imbalance + 1e-9;
    const auto max_train = *std::max_element(train.begin(), train.end());
    const auto max_edges = *std::max_element(edges.begin(), edges.end());
    const double total_train = static_cast<double>(stats.train), total_edges = static_cast<double>(orig.graph.num_edges());
    EXPECT_LE(max_train / (total_train / parts), tol) << "training nodes per part: " << ::testing::PrintToString(train);
    EXPECT_LE(max_edges / (total_edges / parts), tol) << "CSR entries per part: " << ::testing::PrintToString(edges);
  }
}

// Content of a partition file that must not depend on anything but input and seed.
struct Content {
  std::string checksum;
  std::vector<std::int32_t> part_of;
  std::vector<std::int64_t> new_to_old, offsets, nodes, edges, train;
  bool operator==(const Content& o) const {
    return checksum == o.checksum && part_of == o.part_of && new_to_old == o.new_to_old && offsets == o.offsets &&
           nodes == o.nodes && edges == o.edges && train == o.train;
  }
};
Content content_of(const std::string& f) {
  return {h5::File::open_read(f).attr_string("/", "checksum"),       read_partition_array<std::int32_t>(f, "part_of"),
          read_partition_array<std::int64_t>(f, "new_to_old"),       read_partition_array<std::int64_t>(f, "part_offsets"),
          read_partition_array<std::int64_t>(f, "part_nodes"),       read_partition_array<std::int64_t>(f, "part_edges"),
          read_partition_array<std::int64_t>(f, "part_train_nodes")};
}

PartitionOptions options(Method m, int parts, std::uint64_t seed) {
  PartitionOptions o;
  o.method = m;
  o.num_parts = parts;
  o.seed = seed;
  return o;
}

TEST(PartitionDataset, MetisFourPartsOfAClusteredGraphIsACompleteBalancedRelabelledPartition) {
  TempDir tmp;
  const std::string ds = tmp.file("g.h5"), part = tmp.file("g.part.h5");
  graph::write_dataset(testing::clustered_dataset(ClusteredSpec{}), ds);
  const auto rep = partition_dataset(ds, part, options(Method::metis, 4, 1));
  expect_valid_partition(ds, part, 4, 0.05, true);
  EXPECT_LT(rep.quality.edge_cut_fraction(), 0.3);
}

TEST(PartitionDataset, TheSameSeedGivesTheSameContentAndTheFeatureWindowDoesNotMatter) {
  TempDir tmp;
  const std::string ds = tmp.file("g.h5");
  graph::write_dataset(testing::clustered_dataset(ClusteredSpec{}), ds);
  partition_dataset(ds, tmp.file("a.h5"), options(Method::metis, 4, 5));
  auto small_window = options(Method::metis, 4, 5);
  small_window.feature_window_bytes = 7 * 5 * sizeof(float);  // 7 rows per pass: many passes
  partition_dataset(ds, tmp.file("b.h5"), small_window);
  EXPECT_TRUE(content_of(tmp.file("a.h5")) == content_of(tmp.file("b.h5")));
}

// The partition file's copy of the features is stored as the dataset's is (docs/partitioning.md,
// "Why the partition file holds the features again"): compressed chunks for sparse 0/1
// features, rows permuted correctly across chunk boundaries (5000 nodes = two chunks).
TEST(PartitionDataset, ThePartitionFileStoresSparseFeaturesCompressedLikeTheDataset) {
  TempDir tmp;
  const std::string ds = tmp.file("g.h5"), part = tmp.file("g.part.h5");
  ClusteredSpec spec;
  spec.nodes = 5000;
  spec.p_in = 0.004;
  spec.p_out = 0.0002;
  spec.features = 32;
  graph::Dataset d = testing::clustered_dataset(spec);
  std::mt19937_64 gen(3);
  for (auto& x : d.features) x = gen() % 10 == 0 ? 1.0f : 0.0f;  // bag-of-words-like
  graph::write_dataset(d, ds);
  partition_dataset(ds, part, options(Method::random, 3, 1));
  expect_valid_partition(ds, part, 3, 0.05, false);  // features permuted row for row
  const std::uint64_t raw = 5000u * 32u * sizeof(float);
  for (const auto& file : {ds, part}) {
    const auto f = h5::File::open_read(file).open_dataset("/features");
    EXPECT_EQ(f.filters(), (std::vector<std::string>{"shuffle", "deflate"})) << file;
    EXPECT_LT(f.storage_bytes(), raw / 4) << file;
  }
}

TEST(PartitionDataset, RandomMethodIsBalancedDeterministicAndValid) {
  TempDir tmp;
  const std::string ds = tmp.file("g.h5");
  graph::write_dataset(testing::clustered_dataset(ClusteredSpec{}), ds);
  partition_dataset(ds, tmp.file("r1.h5"), options(Method::random, 4, 9));
  partition_dataset(ds, tmp.file("r2.h5"), options(Method::random, 4, 9));
  partition_dataset(ds, tmp.file("r3.h5"), options(Method::random, 4, 10));
  expect_valid_partition(ds, tmp.file("r1.h5"), 4, 0.0, false);
  const Content a = content_of(tmp.file("r1.h5"));
  EXPECT_TRUE(a == content_of(tmp.file("r2.h5")));
  EXPECT_FALSE(a == content_of(tmp.file("r3.h5")));
  EXPECT_EQ(a.nodes, (std::vector<std::int64_t>{150, 150, 150, 150}));
  EXPECT_EQ(h5::File::open_read(tmp.file("r1.h5")).attr_string("/partition", "method"), "random");
}

TEST(PartitionDataset, InductiveMultiPartDatasetKeepsItsSettingAndValidates) {
  TempDir tmp;
  ClusteredSpec spec;
  spec.setting = graph::Setting::inductive;
  spec.nodes = 300;
  const std::string ds = tmp.file("g.h5");
  graph::write_dataset(testing::clustered_dataset(spec), ds);
  partition_dataset(ds, tmp.file("p.h5"), options(Method::metis, 3, 0));
  expect_valid_partition(ds, tmp.file("p.h5"), 3, 0.05, false);
  EXPECT_EQ(PartitionFile::open(tmp.file("p.h5")).meta().setting, graph::Setting::inductive);
}

TEST(PartitionDataset, RefusesAnExistingOutputWithoutForceAndTooManyParts) {
  TempDir tmp;
  ClusteredSpec spec;
  spec.nodes = 50;
  const std::string ds = tmp.file("g.h5");
  graph::write_dataset(testing::clustered_dataset(spec), ds);
  partition_dataset(ds, tmp.file("p.h5"), options(Method::random, 2, 0));
  EXPECT_THROW(partition_dataset(ds, tmp.file("p.h5"), options(Method::random, 2, 0)), UsageError);
  auto force = options(Method::random, 2, 0);
  force.overwrite = true;
  EXPECT_NO_THROW(partition_dataset(ds, tmp.file("p.h5"), force));
  EXPECT_THROW(partition_dataset(ds, tmp.file("q.h5"), options(Method::metis, 51, 0)), UsageError);
  EXPECT_FALSE(std::filesystem::exists(tmp.file("q.h5")));
}

TEST(PartitionFile, ExposesOffsetsNewToOldAndTheDatasetChecksum) {
  TempDir tmp;
  const std::string ds = tmp.file("g.h5");
  const std::string sum = graph::write_dataset(testing::clustered_dataset(ClusteredSpec{}), ds);
  partition_dataset(ds, tmp.file("p.h5"), options(Method::metis, 4, 3));
  const PartitionFile pf = PartitionFile::open(tmp.file("p.h5"));
  EXPECT_EQ(pf.num_parts(), 4);
  EXPECT_EQ(pf.dataset_checksum(), sum);
  EXPECT_EQ(pf.part_offsets(), read_partition_array<std::int64_t>(tmp.file("p.h5"), "part_offsets"));
  const auto all = pf.new_to_old();
  EXPECT_EQ(pf.read_new_to_old(100, 130), std::vector<std::int64_t>(all.begin() + 100, all.begin() + 130));
  EXPECT_EQ(pf.method(), "metis");
  EXPECT_EQ(pf.seed(), 3u);
  EXPECT_NO_THROW(pf.check_matches_dataset(ds));
}

TEST(PartitionFile, RefusesADatasetWhoseChecksumDiffersNamingBothFilesAndChecksums) {
  TempDir tmp;
  ClusteredSpec a, b;
  b.seed = 2;  // another graph
  const std::string da = tmp.file("a.h5"), db = tmp.file("b.h5");
  const std::string sum_a = graph::write_dataset(testing::clustered_dataset(a), da);
  const std::string sum_b = graph::write_dataset(testing::clustered_dataset(b), db);
  ASSERT_NE(sum_a, sum_b);
  partition_dataset(da, tmp.file("pa.h5"), options(Method::metis, 2, 0));
  const PartitionFile pf = PartitionFile::open(tmp.file("pa.h5"));
  try {
    pf.check_matches_dataset(db);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(tmp.file("pa.h5")), std::string::npos) << m;
    EXPECT_NE(m.find(db), std::string::npos) << m;
    EXPECT_NE(m.find(sum_a), std::string::npos) << m;
    EXPECT_NE(m.find(sum_b), std::string::npos) << m;
  }
  EXPECT_THROW(PartitionFile::open_or_single(tmp.file("pa.h5"), db), DataError);
}

TEST(PartitionFile, OpeningAPlainDatasetIsADataErrorNamingThePartitionGroup) {
  TempDir tmp;
  const std::string ds = tmp.file("g.h5");
  graph::write_dataset(testing::clustered_dataset(ClusteredSpec{}), ds);
  try {
    PartitionFile::open(ds);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("/partition"), std::string::npos) << e.what();
  }
}

TEST(PartitionFile, DatasetViewIsOnePartWithIdentityIdsAndItsOwnChecksum) {
  TempDir tmp;
  const std::string ds = tmp.file("g.h5");
  const auto d = testing::clustered_dataset(ClusteredSpec{});
  const std::string sum = graph::write_dataset(d, ds);
  const PartitionFile pf = PartitionFile::open_or_single("", ds);
  EXPECT_TRUE(pf.is_single_part_view());
  EXPECT_EQ(pf.num_parts(), 1);
  EXPECT_EQ(pf.part_offsets(), (std::vector<std::int64_t>{0, 600}));
  EXPECT_EQ(pf.dataset_checksum(), sum);
  EXPECT_EQ(pf.read_new_to_old(10, 13), (std::vector<std::int64_t>{10, 11, 12}));
  const auto train = std::count(d.train_mask.begin(), d.train_mask.end(), 1);
  EXPECT_EQ(pf.part_train_nodes(), (std::vector<std::int64_t>{train}));
  EXPECT_NO_THROW(pf.check_matches_dataset(ds));
}

TEST(PartitionDataset, CoraInFourMetisPartsIsCompleteBalancedAndDeterministic) {
  TempDir tmp;
  const std::string cora = tmp.file("cora.h5");
  DPGNN_NEED_SHARED_DATA();
  std::string why;
  ASSERT_TRUE(testing::import_cora(cora, &why)) << why;
  partition_dataset(cora, tmp.file("p1.h5"), options(Method::metis, 4, 0));
  partition_dataset(cora, tmp.file("p2.h5"), options(Method::metis, 4, 0));
  expect_valid_partition(cora, tmp.file("p1.h5"), 4, 0.05, true);
  EXPECT_TRUE(content_of(tmp.file("p1.h5")) == content_of(tmp.file("p2.h5")));
  EXPECT_NO_THROW(PartitionFile::open(tmp.file("p1.h5")).check_matches_dataset(cora));
}

}  // namespace
}  // namespace dpgnn::partition
