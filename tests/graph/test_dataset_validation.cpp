// Every validation error of the dataset format (issue: foundation, item 3) has a test with a
// deliberately broken file: the error names the file, the dataset path and the problem,
// and `dpgnn info` exits non-zero (3 for malformed data) without being killed by a signal.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/graph/validate.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"
#include "test_support.h"

namespace dpgnn::graph {
namespace {

using dpgnn::testing::TempDir;

// A valid 4-node path 0-1-2-3 with 2 features and 2 classes.
Dataset tiny_dataset() {
  Dataset d;
  d.meta.name = "tiny";
  d.meta.num_features = 2;
  d.meta.num_classes = 2;
  d.graph = CsrGraph({0, 1, 3, 5, 6}, {1, 0, 2, 1, 3, 2});
  d.features = {0, 1, 1, 0, 0.5f, 0.5f, 2, 3};
  d.labels = {0, 1, 0, 1};
  d.train_mask = {1, 1, 0, 0};
  d.val_mask = {0, 0, 1, 0};
  d.test_mask = {0, 0, 0, 1};
  return d;
}

// Writes the dataset layout directly (bypassing DatasetWriter's own checks) so that a
// test can store inconsistent content. The stored checksum matches the content unless
// `checksum` is given.
void write_raw(const std::string& path, const Dataset& d, const std::vector<std::int64_t>& indptr,
               const std::string& checksum = "") {
  auto f = h5::File::create(path);
  f.write_vector<std::int64_t>("/graph/indptr", indptr);
  f.write_vector<std::int32_t>("/graph/indices", d.graph.indices());
  const auto n = static_cast<std::uint64_t>(indptr.size() - 1);
  if (d.meta.num_features > 0) {
    auto ds = f.create_dataset<float>("/features", {d.features.size() / d.meta.num_features,
                                                    static_cast<std::uint64_t>(d.meta.num_features)});
    ds.write_rows(0, d.features.size() / d.meta.num_features, d.features.data());
  }
  f.write_vector<std::int64_t>("/labels", d.labels);
  f.write_vector<std::uint8_t>("/masks/train", d.train_mask);
  f.write_vector<std::uint8_t>("/masks/val", d.val_mask);
  f.write_vector<std::uint8_t>("/masks/test", d.test_mask);
  f.set_attr("/", "format", std::string(kDatasetFormat));
  f.set_attr("/", "format_version", kDatasetFormatVersion);
  f.set_attr("/", "name", d.meta.name);
  f.set_attr("/", "source", std::string("test"));
  f.set_attr("/", "num_nodes", static_cast<std::int64_t>(n));
  f.set_attr("/", "num_features", d.meta.num_features);
  f.set_attr("/", "num_classes", d.meta.num_classes);
  f.set_attr("/", "multilabel", static_cast<std::int64_t>(0));
  f.set_attr("/", "setting", std::string("transductive"));
  f.set_attr("/", "orientation", std::string(d.meta.directed ? "directed" : "undirected"));
  f.set_attr("/", "checksum", checksum.empty() ? content_checksum(d) : checksum);
}

void write_raw(const std::string& path, const Dataset& d) { write_raw(path, d, d.graph.indptr()); }

// Asserts that validating `path` fails with a DataError whose message contains every
// fragment, and that `dpgnn info` exits with code 3 and prints the same message.
void expect_invalid(const std::string& path, std::vector<std::string> fragments) {
  try {
    load_and_validate(path, nullptr);
    FAIL() << "expected a validation error for " << path;
  } catch (const DataError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
    for (const auto& frag : fragments) EXPECT_NE(msg.find(frag), std::string::npos) << msg;
  }
  const auto r = dpgnn::testing::run_dpgnn("info " + path);
  EXPECT_FALSE(r.signaled) << r.output;
  EXPECT_EQ(r.exit_code, kExitData) << r.output;
  for (const auto& frag : fragments) EXPECT_NE(r.output.find(frag), std::string::npos) << r.output;
}

TEST(DatasetValidation, AcceptsAValidFileAndReportsItsStatistics) {
  TempDir tmp;
  const auto path = tmp.file("ok.h5");
  const auto sum = write_dataset(tiny_dataset(), path);
  DatasetStats s;
  const Dataset d = load_and_validate(path, &s);
  EXPECT_EQ(d.meta.checksum, sum);
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.edges, 6);
  EXPECT_EQ(s.undirected_edges, 3);
  EXPECT_EQ(s.train, 2);
  EXPECT_EQ(s.isolated, 0);
  const auto r = dpgnn::testing::run_dpgnn("info --json " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"undirected_edges\": 3"), std::string::npos) << r.output;
  // Majority class: training labels {0, 1} tie, the smaller wins; val (label 0) 1, test (label 1) 0.
  const auto b = majority_baseline(d);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->label, 0);
  EXPECT_DOUBLE_EQ(b->train_share, 0.5);
  EXPECT_DOUBLE_EQ(b->val_accuracy, 1.0);
  EXPECT_DOUBLE_EQ(b->test_accuracy, 0.0);
  EXPECT_NE(r.output.find("\"test_accuracy\": 0.0"), std::string::npos) << r.output;
  Dataset skewed = tiny_dataset();
  skewed.labels = {1, 1, 0, 1};
  const auto c = majority_baseline(skewed);
  EXPECT_EQ(c->label, 1);
  EXPECT_DOUBLE_EQ(c->test_accuracy, 1.0);
  EXPECT_DOUBLE_EQ(c->val_accuracy, 0.0);
}

TEST(DatasetValidation, RejectsNonMonotoneIndptr) {
  TempDir tmp;
  const auto path = tmp.file("bad.h5");
  write_raw(path, tiny_dataset(), {0, 3, 1, 5, 6});
  expect_invalid(path, {"/graph/indptr", "not monotone"});
}

TEST(DatasetValidation, RejectsIndicesOutOfRange) {
  TempDir tmp;
  const auto path = tmp.file("bad.h5");
  Dataset d = tiny_dataset();
  auto idx = d.graph.indices();
  idx[1] = 7;
  // Build the broken graph without CsrGraph's own checks by writing the arrays directly.
  auto f = [&] {
    Dataset b = d;
    write_raw(path, b);
    auto file = h5::File::open_readwrite(path);
    auto ds = file.open_dataset("/graph/indices");
    ds.write_rows(0, idx.size(), idx.data());
  };
  f();
  expect_invalid(path, {"/graph/indices", "out of range"});
}

TEST(DatasetValidation, RejectsAsymmetricAdjacencyDeclaredUndirected) {
  TempDir tmp;
  const auto path = tmp.file("bad.h5");
  Dataset d = tiny_dataset();
  d.graph = CsrGraph({0, 1, 2, 3, 3}, {1, 2, 3});  // 0->1->2->3 only
  write_raw(path, d);
  expect_invalid(path, {"/graph/indices", "not symmetric"});
}

TEST(DatasetValidation, AcceptsAsymmetricAdjacencyDeclaredDirected) {
  TempDir tmp;
  const auto path = tmp.file("ok.h5");
  Dataset d = tiny_dataset();
  d.meta.directed = true;
  d.graph = CsrGraph({0, 1, 2, 3, 3}, {1, 2, 3});
  write_raw(path, d);
  EXPECT_NO_THROW(load_and_validate(path, nullptr));
}

TEST(DatasetValidation, RejectsNanAndInfFeatures) {
  TempDir tmp;
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    const auto path = tmp.file(std::isnan(bad) ? "nan.h5" : "inf.h5");
    Dataset d = tiny_dataset();
    d.features[5] = bad;
    write_raw(path, d);
    expect_invalid(path, {"/features", std::isnan(bad) ? "NaN" : "Inf", "row 2, column 1"});
  }
}

TEST(DatasetValidation, RejectsLabelsOutOfRange) {
  TempDir tmp;
  const auto path = tmp.file("bad.h5");
  Dataset d = tiny_dataset();
  d.labels[3] = 2;
  write_raw(path, d);
  expect_invalid(path, {"/labels", "out of range", "node 3"});
}

TEST(DatasetValidation, RejectsAnUnlabelledNodeInASplit) {
  TempDir tmp;
  const auto path = tmp.file("bad.h5");
  Dataset d = tiny_dataset();
  d.labels[0] = -1;
  write_raw(path, d);
  expect_invalid(path, {"/labels", "unlabelled node in a split"});
}

TEST(DatasetValidation, RejectsAnEmptyTrainingSplit) {
  TempDir tmp;
  const auto path = tmp.file("bad.h5");
  Dataset d = tiny_dataset();
  d.train_mask = {0, 0, 0, 0};
  write_raw(path, d);
  expect_invalid(path, {"/masks/train", "empty"});
}

TEST(DatasetValidation, RejectsOverlappingSplits) {
  TempDir tmp;
  const auto path = tmp.file("bad.h5");
  Dataset d = tiny_dataset();
  d.val_mask[1] = 1;
  write_raw(path, d);
  expect_invalid(path, {"/masks", "overlap", "node 1"});
}

TEST(DatasetValidation, RejectsShapeMismatchBetweenDatasets) {
  TempDir tmp;
  {
    const auto path = tmp.file("features.h5");
    Dataset d = tiny_dataset();
    d.features.resize(6);  // 3 rows for 4 nodes
    write_raw(path, d);
    expect_invalid(path, {"/features", "shape [3, 2]", "[4, 2]"});
  }
  {
    const auto path = tmp.file("labels.h5");
    Dataset d = tiny_dataset();
    d.labels.push_back(0);
    write_raw(path, d);
    expect_invalid(path, {"/labels", "shape [5]"});
  }
  {
    const auto path = tmp.file("mask.h5");
    Dataset d = tiny_dataset();
    d.test_mask.pop_back();
    write_raw(path, d);
    expect_invalid(path, {"/masks/test", "shape [3]"});
  }
}

TEST(DatasetValidation, RejectsAMissingDataset) {
  TempDir tmp;
  const auto path = tmp.file("bad.h5");
  write_raw(path, tiny_dataset());
  {
    auto f = h5::File::open_readwrite(path);
    H5Ldelete(f.id(), "/labels", H5P_DEFAULT);
  }
  expect_invalid(path, {"/labels", "missing"});
}

TEST(DatasetValidation, RejectsATruncatedFile) {
  TempDir tmp;
  const auto path = tmp.file("trunc.h5");
  write_dataset(tiny_dataset(), path);
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2);
  expect_invalid(path, {});
  const auto r = dpgnn::testing::run_dpgnn("info " + path);
  EXPECT_TRUE(r.output.find("truncated") != std::string::npos ||
              r.output.find("corrupt") != std::string::npos)
      << r.output;
}

TEST(DatasetValidation, RejectsANonHdf5File) {
  TempDir tmp;
  const auto path = tmp.file("notes.h5");
  std::ofstream(path) << "this is not an HDF5 file\n";
  expect_invalid(path, {"not an HDF5 file"});
}

TEST(DatasetValidation, RejectsAnHdf5FileThatIsNotADataset) {
  TempDir tmp;
  const auto path = tmp.file("other.h5");
  { auto f = h5::File::create(path); f.write_vector<float>("/x", {1, 2, 3}); }
  expect_invalid(path, {"not a dpgnn dataset"});
}

TEST(DatasetValidation, RejectsContentThatDoesNotMatchTheChecksum) {
  TempDir tmp;
  const auto path = tmp.file("bad.h5");
  Dataset d = tiny_dataset();
  write_raw(path, d, d.graph.indptr(), "0123456789abcdef0123456789abcdef");
  expect_invalid(path, {"checksum mismatch"});
}

TEST(DatasetValidation, AMissingFileIsAnIoErrorNotACrash) {
  const auto r = dpgnn::testing::run_dpgnn("info /nonexistent/dir/file.h5");
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.exit_code, kExitIo) << r.output;
  EXPECT_NE(r.output.find("/nonexistent/dir/file.h5"), std::string::npos) << r.output;
}

TEST(DatasetRoundTrip, StreamingAndInMemoryWritersAgreeOnTheChecksum) {
  TempDir tmp;
  const Dataset d = tiny_dataset();
  const auto a = write_dataset(d, tmp.file("a.h5"));
  DatasetMeta m = d.meta;
  m.num_nodes = 4;
  DatasetWriter w(tmp.file("b.h5"), m);
  w.write_indptr(d.graph.indptr());
  w.append_indices(d.graph.indices().data(), 3);
  w.append_indices(d.graph.indices().data() + 3, 3);
  w.append_feature_rows(d.features.data(), 1);
  w.append_feature_rows(d.features.data() + 2, 3);
  w.write_labels(d.labels);
  w.write_masks(d.train_mask, d.val_mask, d.test_mask);
  EXPECT_EQ(w.finish(), a);
  const Dataset back = read_dataset(tmp.file("b.h5"));
  EXPECT_EQ(back.features, d.features);
  EXPECT_EQ(back.graph.indices(), d.graph.indices());
}

TEST(DatasetReader, ReadsRowRangesWithoutTheRestOfTheFile) {
  TempDir tmp;
  write_dataset(tiny_dataset(), tmp.file("d.h5"));
  DatasetReader r(tmp.file("d.h5"));
  const CsrGraph rows = r.read_rows(1, 3);
  ASSERT_EQ(rows.num_nodes(), 2);
  EXPECT_EQ(rows.num_cols(), 4);
  EXPECT_EQ(std::vector<NodeId>(rows.out_neigh(0).begin(), rows.out_neigh(0).end()), (std::vector<NodeId>{0, 2}));
  EXPECT_EQ(r.read_features(2, 4), (std::vector<float>{0.5f, 0.5f, 2, 3}));
  EXPECT_EQ(r.read_labels(1, 2), (std::vector<std::int64_t>{1}));
}

}  // namespace
}  // namespace dpgnn::graph
