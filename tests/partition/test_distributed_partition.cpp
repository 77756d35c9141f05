// `mpiexec -n W dpgnn partition` (PT-Scotch, partition/distributed_partition.h) end to end:
// the file it writes is a valid partition file whose content is exactly the dataset relabelled
// by its own part_of (so its checksum equals what the single-process writer stores for that
// assignment), its quality figures match evaluate_partition, the same seed and rank count
// give the same file, directed datasets are symmetrised, and the refusals are clean.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/partition/distributed_partition.h"
#include "dpgnn/partition/partition_file.h"
#include "partition_test_data.h"
#include "test_support.h"

namespace dpgnn::partition {
namespace {

using dpgnn::testing::CommandResult;
using dpgnn::testing::run_command;

std::string mpiexec(int n) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 mpiexec -n " +
         std::to_string(n) + " --oversubscribe " + DPGNN_BINARY + " ";
}

CommandResult partition_on(int ranks, const std::string& dataset, const std::string& out, const std::string& extra = "") {
  return run_command(mpiexec(ranks) + "partition --dataset " + dataset + " --parts 4 --seed 3 --out " + out + " " + extra);
}

// The dataset relabelled by `part_of` exactly as docs/partitioning.md specifies it.
graph::Dataset relabelled(const graph::Dataset& d, const std::vector<PartId>& part_of, int parts) {
  const Relabelling r = make_relabelling(part_of, parts);
  const std::int64_t n = d.graph.num_nodes(), f = d.meta.num_features;
  graph::Dataset e;
  e.meta = d.meta;
  std::vector<graph::EdgeIdx> indptr{0};
  std::vector<graph::NodeId> indices;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t old = r.new_to_old[i];
    const auto begin = indices.size();
    for (graph::NodeId v : d.graph.out_neigh(old)) indices.push_back(static_cast<graph::NodeId>(r.old_to_new[v]));
    std::sort(indices.begin() + static_cast<std::ptrdiff_t>(begin), indices.end());
    indptr.push_back(static_cast<graph::EdgeIdx>(indices.size()));
    e.features.insert(e.features.end(), d.features.begin() + old * f, d.features.begin() + (old + 1) * f);
    e.labels.push_back(d.labels[old]);
    e.train_mask.push_back(d.train_mask[old]);
    e.val_mask.push_back(d.val_mask[old]);
    e.test_mask.push_back(d.test_mask[old]);
  }
  e.graph = graph::CsrGraph(std::move(indptr), std::move(indices), n);
  return e;
}

class DistributedPartition : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ClusteredSpec spec;
    spec.nodes = 600;
    data_ = testing::clustered_dataset(spec);
    dataset_ = tmp_.file("g.h5");
    graph::write_dataset(data_, dataset_);
  }
  // Checks everything a reader relies on; returns part_of.
  std::vector<PartId> check_file(const std::string& out, const graph::Dataset& original) {
    const PartitionFile pf = PartitionFile::open(out);  // attributes, digest, tables
    EXPECT_EQ(pf.method(), kPtScotchMethod);
    EXPECT_EQ(pf.num_parts(), 4);
    EXPECT_EQ(pf.seed(), 3u);
    EXPECT_NO_THROW(pf.check_matches_dataset(dataset_));
    const std::vector<PartId> part_of = pf.part_of();
    const Relabelling r = make_relabelling(part_of, 4);
    EXPECT_EQ(pf.new_to_old(), r.new_to_old);
    EXPECT_EQ(pf.part_offsets(), r.part_offsets);
    // The content is the original relabelled by part_of, byte for byte (same checksum as the
    // single-process writer computes for this assignment), and it reads back fully validated.
    const graph::Dataset expected = relabelled(original, part_of, 4);
    const graph::Dataset got = graph::read_dataset(out);
    EXPECT_EQ(got.graph.indptr(), expected.graph.indptr());
    EXPECT_EQ(got.graph.indices(), expected.graph.indices());
    EXPECT_EQ(got.features, expected.features);
    EXPECT_EQ(got.labels, expected.labels);
    EXPECT_EQ(got.train_mask, expected.train_mask);
    EXPECT_EQ(got.val_mask, expected.val_mask);
    EXPECT_EQ(got.test_mask, expected.test_mask);
    EXPECT_EQ(got.meta.checksum, graph::content_checksum(expected));
    // Quality figures as evaluate_partition computes them on the original graph.
    const PartitionQuality q = evaluate_partition(original.graph, original.train_mask, part_of, 4);
    EXPECT_EQ(pf.edge_cut(), q.edge_cut);
    EXPECT_EQ(pf.part_nodes(), q.part_nodes);
    EXPECT_EQ(pf.part_edges(), q.part_edges);
    EXPECT_EQ(pf.part_train_nodes(), q.part_train_nodes);
    // Structure-aware: 4 interleaved clusters are found (a random assignment cuts ~75%).
    EXPECT_LT(q.edge_cut_fraction(), 0.3) << "edge cut " << q.edge_cut << " of " << q.undirected_edges;
    return part_of;
  }
  testing::TempDir tmp_;
  graph::Dataset data_;
  std::string dataset_;
};

TEST_F(DistributedPartition, TwoAndFourRanksWriteTheDatasetRelabelledInTheSameFormat) {
  for (int ranks : {2, 4}) {
    SCOPED_TRACE("ranks " + std::to_string(ranks));
    const std::string out = tmp_.file("p" + std::to_string(ranks) + ".h5");
    const CommandResult r = partition_on(ranks, dataset_, out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const std::string& want : {"4 parts (ptscotch, seed 3, " + std::to_string(ranks) + " ranks)",
                                   std::string("edge cut"), std::string("peak RSS/rank")})
      EXPECT_NE(r.output.find(want), std::string::npos) << "missing '" << want << "' in\n" << r.output;
    check_file(out, data_);
    const CommandResult info = run_command(std::string(DPGNN_BINARY) + " info " + out);
    EXPECT_EQ(info.exit_code, 0) << info.output;
  }
}

TEST_F(DistributedPartition, SameSeedAndRankCountGiveTheSameFile) {
  const std::string a = tmp_.file("a.h5"), b = tmp_.file("b.h5");
  ASSERT_EQ(partition_on(4, dataset_, a).exit_code, 0);
  ASSERT_EQ(partition_on(4, dataset_, b).exit_code, 0);
  const PartitionFile pa = PartitionFile::open(a), pb = PartitionFile::open(b);
  EXPECT_EQ(pa.part_of(), pb.part_of());
  EXPECT_EQ(pa.meta().checksum, pb.meta().checksum);
  EXPECT_EQ(pa.edge_cut(), pb.edge_cut());
}

TEST_F(DistributedPartition, DirectedDatasetIsPartitionedOnItsSymmetrisedStructure) {
  // Keep only u -> v for u < v: PT-Scotch needs the reverse entries the exchange adds.
  graph::Dataset d = data_;
  std::vector<graph::EdgeIdx> indptr{0};
  std::vector<graph::NodeId> indices;
  for (std::int64_t u = 0; u < d.graph.num_nodes(); ++u) {
    for (graph::NodeId v : d.graph.out_neigh(u))
      if (v > u) indices.push_back(v);
    indptr.push_back(static_cast<graph::EdgeIdx>(indices.size()));
  }
  d.graph = graph::CsrGraph(std::move(indptr), std::move(indices), d.graph.num_nodes());
  d.meta.directed = true;
  dataset_ = tmp_.file("directed.h5");
  graph::write_dataset(d, dataset_);
  const std::string out = tmp_.file("pd.h5");
  const CommandResult r = partition_on(2, dataset_, out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  check_file(out, d);
}

TEST_F(DistributedPartition, DenseGraphIsPartitionedOnASymmetricDeterministicEdgeSample) {
  // Average degree ~45 > 16: PT-Scotch sees a hashed edge sample (scotch_assignment.h); the
  // file still describes the full graph and the cut, measured on it, stays low.
  testing::ClusteredSpec spec;
  spec.nodes = 600;
  spec.p_in = 0.3;
  data_ = testing::clustered_dataset(spec);
  dataset_ = tmp_.file("dense.h5");
  graph::write_dataset(data_, dataset_);
  const std::string a = tmp_.file("da.h5"), b = tmp_.file("db.h5");
  const CommandResult r = partition_on(2, dataset_, a);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PT-Scotch partitions a uniform sample of"), std::string::npos) << r.output;
  const std::vector<PartId> part_of = check_file(a, data_);
  ASSERT_EQ(partition_on(2, dataset_, b).exit_code, 0);
  EXPECT_EQ(PartitionFile::open(b).part_of(), part_of);
}

TEST_F(DistributedPartition, RandomMethodIsRefusedOnceWithExitCode2) {
  const CommandResult r = partition_on(2, dataset_, tmp_.file("r.h5"), "--method random");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const std::string want = "--method random runs on one process";
  const auto first = r.output.find(want);
  ASSERT_NE(first, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(want, first + 1), std::string::npos) << "reported more than once:\n" << r.output;
}

TEST_F(DistributedPartition, MissingDatasetAndExistingOutputAreUsageOrDataErrors) {
  const CommandResult missing = partition_on(2, tmp_.file("nope.h5"), tmp_.file("x.h5"));
  EXPECT_NE(missing.exit_code, 0) << missing.output;
  EXPECT_NE(missing.output.find("nope.h5"), std::string::npos) << missing.output;
  const std::string out = tmp_.file("exists.h5");
  ASSERT_EQ(partition_on(2, dataset_, out).exit_code, 0);
  const CommandResult again = partition_on(2, dataset_, out);
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("--force"), std::string::npos) << again.output;
  EXPECT_EQ(partition_on(2, dataset_, out, "--force").exit_code, 0);
}

TEST_F(DistributedPartition, OneRankKeepsMetis) {
  const std::string out = tmp_.file("one.h5");
  const CommandResult r = partition_on(1, dataset_, out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(PartitionFile::open(out).method(), "metis");
}

TEST(InputBlock, BlocksCoverTheIdsInRankOrder) {
  for (std::int64_t n : {1, 7, 600, 2449029})
    for (int w : {1, 2, 3, 4, 16}) {
      std::int64_t next = 0;
      for (int r = 0; r < w; ++r) {
        const auto [b, e] = input_block(n, r, w);
        EXPECT_EQ(b, next);
        EXPECT_LE(e - b, n / w + 1);
        next = e;
      }
      EXPECT_EQ(next, n);
    }
}

}  // namespace
}  // namespace dpgnn::partition
