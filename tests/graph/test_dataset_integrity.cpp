// Per-block checksums of dataset files (util/integrity.h, issue 13 item 9): a reader checks
// exactly the rows it reads, so a corrupt block is reported (naming the file, the array and
// the rows) by every read that touches it and by verify_all, while reads of other blocks
// succeed; the attributes and tables are covered by the header digest; a file from before
// the tables is verified by its whole content checksum instead.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"
#include "dpgnn/util/integrity.h"
#include "test_support.h"

namespace dpgnn::graph {
namespace {

using dpgnn::testing::TempDir;

// A cycle of n nodes with two features per node (n > one feature block of 4096 rows).
Dataset cycle_dataset(std::int64_t n) {
  Dataset d;
  d.meta.name = "cycle";
  d.meta.num_features = 2;
  d.meta.num_classes = 2;
  std::vector<EdgeIdx> indptr{0};
  std::vector<NodeId> indices;
  for (std::int64_t v = 0; v < n; ++v) {
    const auto a = static_cast<NodeId>((v + n - 1) % n), b = static_cast<NodeId>((v + 1) % n);
    indices.push_back(std::min(a, b));
    indices.push_back(std::max(a, b));
    indptr.push_back(static_cast<EdgeIdx>(indices.size()));
  }
  d.graph = CsrGraph(std::move(indptr), std::move(indices));
  for (std::int64_t v = 0; v < n; ++v) {
    d.features.push_back(static_cast<float>(v));
    d.features.push_back(1.0f);
    d.labels.push_back(v % 2);
    d.train_mask.push_back(v % 3 == 0);
    d.val_mask.push_back(v % 3 == 1);
    d.test_mask.push_back(v % 3 == 2);
  }
  return d;
}

// The DataError message of `fn` ("" when it does not throw).
template <typename Fn>
std::string error_of(Fn&& fn) {
  return dpgnn::testing::message_of<DataError>(std::forward<Fn>(fn));
}

TEST(DatasetIntegrity, ACorruptFeatureBlockFailsOnlyTheReadsThatTouchIt) {
  TempDir tmp;
  const std::string path = tmp.file("d.h5");
  write_dataset(cycle_dataset(9000), path);
  {
    auto f = h5::File::open_readwrite(path);
    const float bad[2] = {5000.5f, 1.0f};  // row 5000 lies in block 1 = rows [4096, 8192)
    f.open_dataset("/features").write_rows(5000, 1, bad);
  }
  const DatasetReader r(path);  // the header is intact
  EXPECT_EQ(r.read_features(0, 4096).size(), 2u * 4096);
  EXPECT_EQ(r.read_features(8192, 9000).size(), 2u * 808);
  const std::string err = error_of([&] { r.read_features(4990, 5010); });
  for (const std::string& want : std::vector<std::string>{path, "/features", "rows [4096, 8192)", "checksum mismatch"})
    EXPECT_NE(err.find(want), std::string::npos) << "'" << want << "' missing in: " << err;
  EXPECT_NE(error_of([&] { r.verify_all(); }).find("/features"), std::string::npos);
  EXPECT_EQ(r.read_labels(0, 9000).size(), 9000u);  // other arrays are fine
}

TEST(DatasetIntegrity, ACorruptIndexIsCaughtByTheGraphRead) {
  TempDir tmp;
  const std::string path = tmp.file("d.h5");
  write_dataset(cycle_dataset(300), path);
  {
    auto f = h5::File::open_readwrite(path);
    const NodeId other = 7;  // a valid id, so only the checksum can tell
    f.open_dataset("/graph/indices").write_rows(11, 1, &other);
  }
  const DatasetReader r(path);
  EXPECT_NE(error_of([&] { r.read_graph(); }).find("/graph/indices"), std::string::npos);
}

TEST(DatasetIntegrity, ChangedAttributesOrTablesFailTheHeaderDigestOnOpen) {
  TempDir tmp;
  const std::string a = tmp.file("a.h5"), b = tmp.file("b.h5");
  write_dataset(cycle_dataset(300), a);
  write_dataset(cycle_dataset(300), b);
  h5::File::open_readwrite(a).set_attr("/", "name", std::string("renamed"));
  {
    auto f = h5::File::open_readwrite(b);
    const std::uint64_t h = 12345;
    f.open_dataset(integrity::table_path("/masks/train")).write_rows(0, 1, &h);
  }
  for (const auto& p : {a, b}) {
    const std::string err = error_of([&] { DatasetReader r(p); });
    EXPECT_NE(err.find("header_checksum"), std::string::npos) << p << ": " << err;
  }
}

TEST(DatasetIntegrity, AFileWithoutTablesIsVerifiedByItsWholeContentChecksum) {
  TempDir tmp;
  const std::string good = tmp.file("good.h5"), bad = tmp.file("bad.h5");
  for (const auto& p : {good, bad}) {
    write_dataset(cycle_dataset(300), p);
    auto f = h5::File::open_readwrite(p);
    ASSERT_GE(H5Ldelete(f.id(), integrity::kGroup, H5P_DEFAULT), 0);  // as written before the tables
  }
  {
    auto f = h5::File::open_readwrite(bad);
    const std::uint8_t one = 1;
    f.open_dataset("/masks/val").write_rows(0, 1, &one);  // node 0 was in train only
  }
  EXPECT_EQ(DatasetReader(good).read_mask("train", 0, 300).size(), 300u);
  EXPECT_NO_THROW(DatasetReader(good).verify_all());
  const DatasetReader r(bad);
  EXPECT_NE(error_of([&] { r.read_mask("train", 0, 10); }).find("content checksum mismatch"), std::string::npos);
}

TEST(DatasetIntegrity, EmptyArraysHaveEmptyTablesAndVerify) {
  TempDir tmp;
  const std::string path = tmp.file("d.h5");
  Dataset d;
  d.meta.name = "isolated";
  d.meta.num_classes = 2;  // no features, no edges
  d.graph = CsrGraph({0, 0, 0, 0}, {});
  d.labels = {0, 1, 0};
  d.train_mask = {1, 0, 0};
  d.val_mask = {0, 1, 0};
  d.test_mask = {0, 0, 1};
  write_dataset(d, path);
  const DatasetReader r(path);
  EXPECT_NO_THROW(r.verify_all());
  EXPECT_EQ(r.read_graph().num_edges(), 0);
  EXPECT_EQ(r.read_labels(0, 3).size(), 3u);
}

}  // namespace
}  // namespace dpgnn::graph
