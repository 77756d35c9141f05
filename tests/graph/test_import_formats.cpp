// The C++ importers (MUSAE, OGB, generic CSV, dpgnn-raw) and the canonical finalize path,
// on tiny hand-written inputs whose expected graphs are worked out by hand in comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dpgnn/graph/import/generic_csv.h"
#include "dpgnn/graph/import/musae.h"
#include "dpgnn/graph/import/ogb.h"
#include "dpgnn/graph/import/raw_hdf5.h"
#include "dpgnn/graph/validate.h"
#include "dpgnn/util/error.h"
#include "import_test_util.h"

namespace dpgnn::graph::import {
namespace {

using test::TempDir;
using test::write_gzip;
using test::write_text;

template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The sorted neighbours of v.
std::vector<NodeId> neigh(const CsrGraph& g, std::int64_t v) {
  auto r = g.out_neigh(v);
  std::vector<NodeId> out(r.begin(), r.end());
  std::sort(out.begin(), out.end());
  return out;
}

// ---- MUSAE ------------------------------------------------------------------------------

struct MusaeFiles {
  TempDir t;
  MusaeOptions o;
  MusaeFiles() {
    // 5 nodes; (2,2) is a self-loop; each undirected edge stored once, as MUSAE does.
    o.edges = write_text(t.file("g_edges.csv"), "id_1,id_2\n0,1\n1,2\n2,2\n3,4\n0,4\n");
    // Quoted names with commas and quotes, unsorted rows, node 3 twice with the same label.
    o.target = write_text(t.file("g_target.csv"),
                          "id,page_name,page_type\n"
                          "3,\"Smith, \"\"The\"\" Band\",tvshow\n"
                          "0,\"Ministry, of Things\",government\n"
                          "1,Acme,company\n"
                          "4,\"\xC3\x89lys\xC3\xA9\x65\",government\n"
                          "2,Bob,politician\n"
                          "3,\"Smith, \"\"The\"\" Band\",tvshow\n");
    // Node 1 lists id 2 twice: binary features count it once.
    o.features = write_text(t.file("g.json"), R"({"0":[0,3],"1":[2,2],"2":[],"3":[1],"4":[0,1,2,3]})");
    o.id_column = "id";
    o.label_column = "page_type";
  }
};

TEST(MusaeImport, StringLabelsBecomeSortedClassIdsAndDuplicateRowsAreDropped) {
  MusaeFiles f;
  RawGraph g = read_musae(f.o);
  EXPECT_EQ(g.num_nodes, 5);
  // sorted: company=0, government=1, politician=2, tvshow=3
  EXPECT_EQ(g.label_names, (std::vector<std::string>{"company", "government", "politician", "tvshow"}));
  EXPECT_EQ(g.labels, (std::vector<std::int64_t>{1, 0, 2, 3, 1}));
  EXPECT_EQ(g.num_classes, 4);
}

TEST(MusaeImport, FeaturesAreTheBinaryIndicatorOfTheListedIds) {
  MusaeFiles f;
  RawGraph g = read_musae(f.o);
  ASSERT_EQ(g.num_features, 4);  // max id 3 + 1
  const std::vector<float> expected = {1, 0, 0, 1,   // node 0: {0, 3}
                                       0, 0, 1, 0,   // node 1: {2, 2} -> {2}
                                       0, 0, 0, 0,   // node 2: {}
                                       0, 1, 0, 0,   // node 3: {1}
                                       1, 1, 1, 1};  // node 4
  EXPECT_EQ(g.features, expected);
}

TEST(MusaeImport, NumFeaturesFixesTheIdSpaceAndRejectsLargerIds) {
  MusaeFiles f;
  f.o.num_features = 6;
  EXPECT_EQ(read_musae(f.o).num_features, 6);
  f.o.num_features = 3;  // id 3 is listed
  EXPECT_TRUE(has(error_of([&] { read_musae(f.o); }), "--num-features 3"));
}

TEST(MusaeImport, FinalizeSymmetrisesAndDropsTheSelfLoop) {
  MusaeFiles f;
  FinalizeOptions fo;
  fo.split.train_per_class = 1;
  fo.split.val_per_class = 0;
  Dataset d = finalize(read_musae(f.o), fo, "test");
  // Undirected edges {0,1}, {1,2}, {3,4}, {0,4}: 8 CSR entries, the self-loop (2,2) dropped.
  EXPECT_EQ(d.graph.num_edges(), 8);
  EXPECT_EQ(neigh(d.graph, 0), (std::vector<NodeId>{1, 4}));
  EXPECT_EQ(neigh(d.graph, 2), (std::vector<NodeId>{1}));
  EXPECT_EQ(neigh(d.graph, 4), (std::vector<NodeId>{0, 3}));
  DatasetStats s = compute_stats(d.graph, d.train_mask, d.val_mask, d.test_mask);
  EXPECT_EQ(s.undirected_edges, 4);
  EXPECT_EQ(s.self_loops, 0);
  // One training node per class (4 classes), the one remaining government node in test.
  EXPECT_EQ(s.train, 4);
  EXPECT_EQ(s.val, 0);
  EXPECT_EQ(s.test, 1);
}

TEST(MusaeImport, BooleanLabelsMapFalseToZeroAndTrueToOne) {
  TempDir t;
  MusaeOptions o;
  o.edges = write_text(t.file("e.csv"), "from,to\n0,1\n1,2\n");
  o.target = write_text(t.file("t.csv"), "id,days,mature,views,partner,new_id\n"
                                         "77,10,True,5,False,2\n88,3,False,1,False,0\n99,4,True,9,False,1\n");
  o.id_column = "new_id";
  o.label_column = "mature";
  RawGraph g = read_musae(o);
  EXPECT_EQ(g.labels, (std::vector<std::int64_t>{0, 1, 1}));
  EXPECT_EQ(g.label_names, (std::vector<std::string>{"False", "True"}));
  EXPECT_EQ(g.num_features, 0);  // no --features
}

TEST(MusaeImport, ConflictingLabelsForOneIdAreAnError) {
  TempDir t;
  MusaeOptions o;
  o.edges = write_text(t.file("e.csv"), "a,b\n0,1\n");
  o.target = write_text(t.file("t.csv"), "id,y\n0,1\n1,0\n0,0\n");
  o.label_column = "y";
  const std::string m = error_of([&] { read_musae(o); });
  EXPECT_TRUE(has(m, "conflicting labels")) << m;
  EXPECT_TRUE(has(m, "line 2") && has(m, "line 4")) << m;
}

TEST(MusaeImport, MissingColumnNamesTheColumnAndLists) {
  MusaeFiles f;
  f.o.label_column = "category";
  const std::string m = error_of([&] { read_musae(f.o); });
  EXPECT_TRUE(has(m, "g_target.csv")) << m;
  EXPECT_TRUE(has(m, "'category'")) << m;
  EXPECT_TRUE(has(m, "'page_type'")) << m;
}

TEST(MusaeImport, MalformedEdgeLineNamesFileAndLine) {
  MusaeFiles f;
  f.o.edges = write_text(f.t.file("bad_edges.csv"), "id_1,id_2\n0,1\n1,x\n");
  const std::string m = error_of([&] { read_musae(f.o); });
  EXPECT_TRUE(has(m, "bad_edges.csv, line 3")) << m;
  EXPECT_TRUE(has(m, "'x' is not an integer")) << m;
}

TEST(MusaeImport, WrongFieldCountNamesFileAndLine) {
  MusaeFiles f;
  f.o.target = write_text(f.t.file("short.csv"), "id,page_name,page_type\n0,a,company\n1,company\n");
  const std::string m = error_of([&] { read_musae(f.o); });
  EXPECT_TRUE(has(m, "short.csv, line 3")) << m;
  EXPECT_TRUE(has(m, "expected 3 fields")) << m;
}

TEST(MusaeImport, InvalidJsonIsADataError) {
  MusaeFiles f;
  f.o.features = write_text(f.t.file("bad.json"), R"({"0":[1,2],)");
  EXPECT_THROW(read_musae(f.o), DataError);
}

// ---- OGB --------------------------------------------------------------------------------

TEST(OgbImport, ReadsGzipRawFilesAndTheSplit) {
  TempDir t;
  const auto dir = t.path() / "ogbn-tiny";
  write_gzip((dir / "raw/edge.csv.gz").string(), "0,1\n1,2\n2,0\n3,2\n0,1\n");
  write_gzip((dir / "raw/num-node-list.csv.gz").string(), "4\n");
  write_gzip((dir / "raw/node-feat.csv.gz").string(), "0.5,-1\n1,2\n-0.25,0\n3,1e-2\n");
  write_gzip((dir / "raw/node-label.csv.gz").string(), "2\n0\n1\n2\n");
  write_gzip((dir / "split/time/train.csv.gz").string(), "0\n1\n");
  write_gzip((dir / "split/time/valid.csv.gz").string(), "2\n");
  write_gzip((dir / "split/time/test.csv.gz").string(), "3\n");
  RawGraph g = read_ogb({dir.string(), ""});
  EXPECT_EQ(g.name, "ogbn-tiny");
  EXPECT_EQ(g.num_nodes, 4);
  EXPECT_EQ(g.src.size(), 5u);  // as stored, with the repeat of (0,1)
  EXPECT_EQ(g.num_features, 2);
  EXPECT_EQ(g.features, (std::vector<float>{0.5f, -1, 1, 2, -0.25f, 0, 3, 0.01f}));
  EXPECT_EQ(g.labels, (std::vector<std::int64_t>{2, 0, 1, 2}));
  EXPECT_EQ(g.num_classes, 3);
  ASSERT_TRUE(g.has_split);
  EXPECT_EQ(g.train_mask, (std::vector<std::uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(g.val_mask, (std::vector<std::uint8_t>{0, 0, 1, 0}));
  EXPECT_EQ(g.test_mask, (std::vector<std::uint8_t>{0, 0, 0, 1}));
  Dataset d = finalize(std::move(g), {}, "ogb");
  // {0,1}, {1,2}, {0,2}, {2,3}: the repeated (0,1) record is a duplicate.
  EXPECT_EQ(d.graph.num_edges(), 8);
  EXPECT_EQ(neigh(d.graph, 2), (std::vector<NodeId>{0, 1, 3}));
}

TEST(OgbImport, AcceptsUncompressedFilesAndMultiLabelRows) {
  TempDir t;
  const auto dir = t.path() / "ogbn-ml";
  write_text((dir / "raw/edge.csv").string(), "0,1\n1,2\n");
  write_text((dir / "raw/node-label.csv").string(), "1,0,1\n0,0,0\n0,1,0\n");
  write_text((dir / "split/s/train.csv").string(), "0\n");
  write_text((dir / "split/s/valid.csv").string(), "1\n");
  write_text((dir / "split/s/test.csv").string(), "2\n");
  RawGraph g = read_ogb({dir.string(), ""});
  EXPECT_TRUE(g.multilabel);
  EXPECT_EQ(g.num_classes, 3);
  EXPECT_EQ(g.label_matrix, (std::vector<std::uint8_t>{1, 0, 1, 0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(g.num_features, 0);
}

TEST(OgbImport, NanLabelsAreUnlabelled) {
  TempDir t;
  const auto dir = t.path() / "ogbn-nan";
  write_text((dir / "raw/edge.csv").string(), "0,1\n1,2\n");
  write_text((dir / "raw/node-label.csv").string(), "3.0\nnan\n1\n");
  RawGraph g = read_ogb({dir.string(), ""});
  EXPECT_EQ(g.labels, (std::vector<std::int64_t>{3, -1, 1}));
  EXPECT_FALSE(g.has_split);
}

TEST(OgbImport, SeveralSplitsNeedSplitName) {
  TempDir t;
  const auto dir = t.path() / "ogbn-two";
  write_text((dir / "raw/edge.csv").string(), "0,1\n");
  write_text((dir / "raw/node-label.csv").string(), "0\n1\n");
  for (const char* s : {"a", "b"})
    for (const char* p : {"train", "valid", "test"}) write_text((dir / "split" / s / (std::string(p) + ".csv")).string(), "0\n");
  EXPECT_THROW(read_ogb({dir.string(), ""}), UsageError);
  EXPECT_TRUE(read_ogb({dir.string(), "b"}).has_split);
}

TEST(OgbImport, MissingEdgeFileAndBadFeatureRowAreReported) {
  TempDir t;
  const auto dir = t.path() / "ogbn-bad";
  write_text((dir / "raw/node-label.csv").string(), "0\n1\n");
  EXPECT_TRUE(has(error_of([&] { read_ogb({dir.string(), ""}); }), "edge.csv.gz"));
  write_text((dir / "raw/edge.csv").string(), "0,1\n");
  write_gzip((dir / "raw/node-feat.csv.gz").string(), "1,2\n3\n");
  const std::string m = error_of([&] { read_ogb({dir.string(), ""}); });
  EXPECT_TRUE(has(m, "node-feat.csv.gz, line 2")) << m;
}

// ---- generic CSV ------------------------------------------------------------------------

TEST(GenericCsvImport, ReadsEdgesFeaturesLabelsAndSplit) {
  TempDir t;
  GenericCsvOptions o;
  o.edges = write_text(t.file("edges.csv"), "dst,src\n1,0\n2,1\n1,0\n");
  o.features = write_text(t.file("x.csv"), "id,f0,f1\n2,0.5,1\n0,1,2\n");
  o.labels = write_text(t.file("y.csv"), "id,label\n0,1\n1,0\n2,1\n3,-1\n");
  o.split = write_text(t.file("s.csv"), "id,split\n0,train\n1,val\n2,test\n");
  o.src_column = "src";
  o.dst_column = "dst";
  RawGraph g = read_generic_csv(o);
  EXPECT_EQ(g.num_nodes, 4);  // node 3 appears only in the label file
  EXPECT_EQ(g.src, (std::vector<std::int64_t>{0, 1, 0}));
  EXPECT_EQ(g.dst, (std::vector<std::int64_t>{1, 2, 1}));
  EXPECT_EQ(g.features, (std::vector<float>{1, 2, 0, 0, 0.5f, 1, 0, 0}));
  EXPECT_EQ(g.labels, (std::vector<std::int64_t>{1, 0, 1, -1}));
  EXPECT_EQ(g.num_classes, 2);
  Dataset d = finalize(std::move(g), {}, "csv");
  DatasetStats s = compute_stats(d.graph, d.train_mask, d.val_mask, d.test_mask);
  EXPECT_EQ(s.undirected_edges, 2);
  EXPECT_EQ(s.isolated, 1);
  EXPECT_EQ(s.train + s.val + s.test, 3);
}

TEST(GenericCsvImport, IdsBeyondNumNodesAreAnError) {
  TempDir t;
  GenericCsvOptions o;
  o.edges = write_text(t.file("edges.csv"), "a,b\n0,5\n");
  o.labels = write_text(t.file("y.csv"), "id,label\n0,0\n");
  o.num_nodes = 3;
  const std::string m = error_of([&] { read_generic_csv(o); });
  EXPECT_TRUE(has(m, "out of range")) << m;
}

TEST(GenericCsvImport, BadSplitValueNamesFileAndLine) {
  TempDir t;
  GenericCsvOptions o;
  o.edges = write_text(t.file("edges.csv"), "a,b\n0,1\n");
  o.labels = write_text(t.file("y.csv"), "id,label\n0,0\n1,1\n");
  o.split = write_text(t.file("s.csv"), "id,split\n0,train\n1,validation\n");
  const std::string m = error_of([&] { read_generic_csv(o); });
  EXPECT_TRUE(has(m, "s.csv, line 3")) << m;
  EXPECT_TRUE(has(m, "'validation'")) << m;
}

TEST(GenericCsvImport, NonNumericFeatureNamesColumn) {
  TempDir t;
  GenericCsvOptions o;
  o.edges = write_text(t.file("edges.csv"), "a,b\n0,1\n");
  o.labels = write_text(t.file("y.csv"), "id,label\n0,0\n1,1\n");
  o.features = write_text(t.file("x.csv"), "id,age,height\n0,3,1.5\n1,4,tall\n");
  const std::string m = error_of([&] { read_generic_csv(o); });
  EXPECT_TRUE(has(m, "x.csv, line 3")) << m;
  EXPECT_TRUE(has(m, "'height'")) << m;
}

// ---- split, finalize, dpgnn-raw -----------------------------------------------------------

TEST(RandomSplit, TakesTheRequestedCountsPerClassAndIsDeterministic) {
  std::vector<std::int64_t> labels;
  for (int i = 0; i < 300; ++i) labels.push_back(i % 3);
  labels.push_back(-1);
  SplitOptions o;
  o.seed = 7;
  const SplitMasks a = random_split(labels, 3, o);
  const SplitMasks b = random_split(labels, 3, o);
  EXPECT_EQ(a.train, b.train);
  std::int64_t per_class[3][3] = {};
  for (std::size_t v = 0; v + 1 < labels.size(); ++v) {
    per_class[labels[v]][0] += a.train[v];
    per_class[labels[v]][1] += a.val[v];
    per_class[labels[v]][2] += a.test[v];
    EXPECT_EQ(a.train[v] + a.val[v] + a.test[v], 1);
  }
  for (auto& c : per_class) {
    EXPECT_EQ(c[0], 20);
    EXPECT_EQ(c[1], 30);
    EXPECT_EQ(c[2], 50);
  }
  EXPECT_EQ(a.train.back() + a.val.back() + a.test.back(), 0);  // the unlabelled node
  o.seed = 8;
  EXPECT_NE(random_split(labels, 3, o).train, a.train);
}

TEST(RandomSplit, FractionsSplitTheLabelledNodes) {
  std::vector<std::int64_t> labels(100, 0);
  SplitOptions o;
  o.train_fraction = 0.6;
  o.val_fraction = 0.2;
  const SplitMasks m = random_split(labels, 1, o);
  EXPECT_EQ(std::count(m.train.begin(), m.train.end(), 1), 60);
  EXPECT_EQ(std::count(m.val.begin(), m.val.end(), 1), 20);
  EXPECT_EQ(std::count(m.test.begin(), m.test.end(), 1), 20);
  o.train_fraction = 1.5;
  EXPECT_THROW(random_split(labels, 1, o), UsageError);
}

TEST(Finalize, KeepDirectedStoresTheRecordsAsGiven) {
  RawGraph g;
  g.num_nodes = 3;
  g.src = {0, 1, 1, 2};
  g.dst = {1, 2, 2, 2};
  g.labels = {0, 1, 0};
  g.num_classes = 2;
  g.has_split = true;
  g.train_mask = {1, 1, 0};
  g.val_mask = {0, 0, 1};
  g.test_mask = {0, 0, 0};
  FinalizeOptions fo;
  fo.keep_directed = true;
  Dataset d = finalize(std::move(g), fo, "t");
  EXPECT_TRUE(d.meta.directed);
  EXPECT_EQ(d.graph.num_edges(), 2);  // (0,1), (1,2); duplicate (1,2) and loop (2,2) dropped
  EXPECT_EQ(neigh(d.graph, 1), (std::vector<NodeId>{2}));
  EXPECT_TRUE(neigh(d.graph, 2).empty());
}

TEST(Finalize, ShapeMismatchIsADataError) {
  RawGraph g;
  g.num_nodes = 3;
  g.labels = {0, 1};
  g.num_classes = 2;
  EXPECT_THROW(finalize(std::move(g), {}, "t"), DataError);
}

TEST(WriteImported, RefusesToOverwriteWithoutForce) {
  TempDir t;
  const auto out = write_text(t.file("exists.h5"), "x");
  const std::string m = error_of([&] { check_output_path(out, false); });
  EXPECT_TRUE(has(m, "exists.h5")) << m;
  EXPECT_TRUE(has(m, "--force")) << m;
  EXPECT_NO_THROW(check_output_path(out, true));
}

TEST(RawHdf5, RoundTripsThroughWriteAndReadAndImportsToAValidFile) {
  TempDir t;
  RawGraph g;
  g.name = "tiny";
  g.source = "test";
  g.setting = Setting::inductive;
  g.num_nodes = 4;
  g.src = {0, 1, 2, 2};
  g.dst = {1, 2, 3, 3};
  g.num_features = 2;
  g.features = {1, 0, 0, 1, 0.5f, 0.5f, 2, 3};
  g.multilabel = true;
  g.num_classes = 2;
  g.label_matrix = {1, 0, 0, 1, 1, 1, 0, 0};
  g.label_names = {"a", "b"};
  g.has_split = true;
  g.train_mask = {1, 1, 0, 0};
  g.val_mask = {0, 0, 1, 0};
  g.test_mask = {0, 0, 0, 1};
  write_raw_hdf5(g, t.file("raw.h5"));
  RawGraph r = read_raw_hdf5(t.file("raw.h5"));
  EXPECT_EQ(r.name, "tiny");
  EXPECT_EQ(r.setting, Setting::inductive);
  EXPECT_EQ(r.src, g.src);
  EXPECT_EQ(r.features, g.features);
  EXPECT_EQ(r.label_matrix, g.label_matrix);
  EXPECT_EQ(r.label_names, g.label_names);
  EXPECT_EQ(r.test_mask, g.test_mask);
  write_imported(std::move(r), {}, t.file("out.h5"), false);
  DatasetStats s;
  Dataset d = load_and_validate(t.file("out.h5"), &s);
  EXPECT_TRUE(d.meta.multilabel);
  EXPECT_EQ(d.meta.setting, Setting::inductive);
  EXPECT_EQ(s.undirected_edges, 3);  // {0,1}, {1,2}, {2,3}; (2,3) stored twice
  EXPECT_EQ(d.meta.label_names, (std::vector<std::string>{"a", "b"}));
}

TEST(RawHdf5, AFileOfAnotherFormatIsRejected) {
  TempDir t;
  const auto p = write_text(t.file("x.h5"), "not hdf5");
  EXPECT_THROW(read_raw_hdf5(p), DataError);
}

}  // namespace
}  // namespace dpgnn::graph::import
