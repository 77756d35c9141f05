// Feature storage of the dataset file (graph/dataset_io.cpp; docs/data-format.md, "Feature
// storage", issue 25 item 5): compressed chunks round-trip and keep the checksum tables of the
// uncompressed rows; a damaged compressed chunk is a DataError naming the file, the array and
// the rows; files with uncompressed features (chunked as older dpgnn wrote them, or
// contiguous) still read; the feature block cache returns what uncached reads return.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdio>
#include <fstream>
#include <random>
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

constexpr std::int64_t kFeatures = 16;

// A path graph of n nodes with sparse 0/1 features (about 1 in 8 set, as bag-of-words
// features are) or, with `dense`, Gaussian features (which deflate cannot halve).
Dataset make_dataset(std::int64_t n, bool dense, std::uint32_t seed = 1, std::int64_t features = kFeatures) {
  Dataset d;
  d.meta.name = dense ? "dense" : "sparse";
  d.meta.num_features = features;
  d.meta.num_classes = 3;
  std::vector<EdgeIdx> indptr{0};
  std::vector<NodeId> indices;
  for (std::int64_t v = 0; v < n; ++v) {
    if (v > 0) indices.push_back(static_cast<NodeId>(v - 1));
    if (v + 1 < n) indices.push_back(static_cast<NodeId>(v + 1));
    indptr.push_back(static_cast<EdgeIdx>(indices.size()));
  }
  d.graph = CsrGraph(std::move(indptr), std::move(indices));
  std::mt19937 rng(seed);
  std::normal_distribution<float> gauss;
  for (std::int64_t i = 0; i < n * features; ++i)
    d.features.push_back(dense ? gauss(rng) : (rng() % 8 == 0 ? 1.0f : 0.0f));
  for (std::int64_t v = 0; v < n; ++v) {
    d.labels.push_back(v % 3);
    d.train_mask.push_back(v % 3 == 0);
    d.val_mask.push_back(v % 3 == 1);
    d.test_mask.push_back(v % 3 == 2);
  }
  return d;
}

std::vector<float> rows_of(const Dataset& d, std::int64_t r0, std::int64_t r1) {
  return std::vector<float>(d.features.begin() + r0 * kFeatures, d.features.begin() + r1 * kFeatures);
}

// The DataError message of `fn` ("" when it does not throw).
template <typename Fn>
std::string error_of(Fn&& fn) {
  return dpgnn::testing::message_of<DataError>(std::forward<Fn>(fn));
}

std::uint64_t raw_bytes(std::int64_t n) { return static_cast<std::uint64_t>(n * kFeatures) * sizeof(float); }

TEST(DatasetIo, CompressedFeaturesRoundTripWithTheTablesOfTheUncompressedRows) {
  TempDir tmp;
  const std::string packed = tmp.file("packed.h5"), plain = tmp.file("plain.h5");
  const Dataset d = make_dataset(9000, false);
  const std::string sum = write_dataset(d, packed);
  DatasetStorage off;
  off.compress_features = false;
  EXPECT_EQ(write_dataset(d, plain, off), sum);  // the content checksum ignores storage
  {
    const auto f = h5::File::open_read(packed);
    const auto ds = f.open_dataset("/features");
    EXPECT_EQ(ds.filters(), (std::vector<std::string>{"shuffle", "deflate"}));
    EXPECT_EQ(ds.chunk_rows(), kFeatureChunkRows);  // = the checksum block
    EXPECT_LT(ds.storage_bytes(), raw_bytes(9000) / 4) << "0/1 features must compress well";
    // The same per-block hashes as the uncompressed file: they cover the rows, not the bytes
    // on disk, so files from before compression verify the same way.
    const auto g = h5::File::open_read(plain);
    EXPECT_EQ(integrity::read_table(f, "/features", 9000).hashes, integrity::read_table(g, "/features", 9000).hashes);
    EXPECT_EQ(integrity::read_table(f, "/features", 9000).block_rows, kFeatureChunkRows);
  }
  const DatasetReader r(packed);
  EXPECT_EQ(r.read_features(0, 9000), d.features);
  EXPECT_EQ(r.read_features(4000, 8500), rows_of(d, 4000, 8500));
  EXPECT_EQ(r.read_features(8999, 9000), rows_of(d, 8999, 9000));  // the padded last chunk
  EXPECT_NO_THROW(r.verify_all());
  const Dataset back = read_dataset(packed);  // full validation, content checksum included
  EXPECT_EQ(back.features, d.features);
}

TEST(DatasetIo, TheStreamingWriterGivesTheSameFeaturesForAnyRowBatches) {
  TempDir tmp;
  const Dataset d = make_dataset(9000, false);
  const std::string path = tmp.file("streamed.h5");
  DatasetMeta m = d.meta;
  m.num_nodes = 9000;
  DatasetWriter w(path, m);
  w.write_indptr(d.graph.indptr());
  w.append_indices(d.graph.indices().data(), d.graph.num_edges());
  // Batches that start and end inside chunks, cross chunk boundaries and fill one exactly.
  std::int64_t at = 0;
  for (std::int64_t batch : {1, 4095, 100, 3996, 1, 500, 307}) {
    w.append_feature_rows(d.features.data() + at * kFeatures, batch);
    at += batch;
  }
  ASSERT_EQ(at, 9000);
  w.write_labels(d.labels);
  w.write_masks(d.train_mask, d.val_mask, d.test_mask);
  EXPECT_EQ(w.finish(), content_checksum(d));
  EXPECT_EQ(DatasetReader(path).read_features(0, 9000), d.features);
}

TEST(DatasetIo, DenseFeaturesStayRawUnlessCompressionIsForced) {
  TempDir tmp;
  const std::string def = tmp.file("default.h5"), forced = tmp.file("forced.h5");
  const Dataset d = make_dataset(5000, true);
  write_dataset(d, def);
  DatasetStorage always;
  always.max_compressed_ratio = 1.0;
  write_dataset(d, forced, always);
  const std::uint64_t stored_default = h5::File::open_read(def).open_dataset("/features").storage_bytes();
  const std::uint64_t stored_forced = h5::File::open_read(forced).open_dataset("/features").storage_bytes();
  // Raw chunks (both filters skipped): the two chunks of 4096 rows, the last one padded.
  EXPECT_EQ(stored_default, 2 * kFeatureChunkRows * kFeatures * sizeof(float));
  EXPECT_LT(stored_forced, stored_default);
  EXPECT_GT(stored_forced, stored_default / 2);  // what the 0.5 limit is for
  EXPECT_EQ(DatasetReader(def).read_features(0, 5000), d.features);
  EXPECT_EQ(DatasetReader(forced).read_features(0, 5000), d.features);
}

TEST(DatasetIo, WideFeaturesGetSmallerChunksThatAreStillTheirChecksumBlocks) {
  TempDir tmp;
  const std::string path = tmp.file("wide.h5");
  constexpr std::int64_t n = 2000, f = 1000;  // 4096 rows x 4000 bytes would be 16 MB a chunk
  const Dataset d = make_dataset(n, false, 2, f);
  write_dataset(d, path);
  {
    const auto h = h5::File::open_read(path);
    EXPECT_EQ(h.open_dataset("/features").chunk_rows(), 512u);  // 2 MB: at most 2 MiB
    EXPECT_EQ(integrity::read_table(h, "/features", n).block_rows, 512u);
  }
  const DatasetReader r(path);
  EXPECT_EQ(r.read_features(0, n), d.features);
  const std::vector<float> row(d.features.begin() + 1500 * f, d.features.begin() + 1501 * f);
  EXPECT_EQ(r.read_features(1500, 1501), row);
  // Uncompressed files keep the 4096-row chunks of files written before compression.
  DatasetStorage off;
  off.compress_features = false;
  write_dataset(d, tmp.file("plain.h5"), off);
  EXPECT_EQ(h5::File::open_read(tmp.file("plain.h5")).open_dataset("/features").chunk_rows(), 2000u);  // = N
}

// Overwrites `count` bytes in the middle of the stored chunk that holds row `row` of
// /features (its position in the file from HDF5's chunk index).
void damage_feature_chunk(const std::string& path, std::uint64_t row, std::size_t count) {
  haddr_t addr = 0;
  hsize_t size = 0;
  {
    const auto f = h5::File::open_read(path);
    const auto ds = f.open_dataset("/features");
    const hsize_t offset[2] = {row / kFeatureChunkRows * kFeatureChunkRows, 0};
    unsigned mask = 0;
    ASSERT_GE(H5Dget_chunk_info_by_coord(ds.id(), offset, &mask, &addr, &size), 0);
    ASSERT_EQ(mask & 0x2u, 0u) << "the chunk must be stored deflated for this test";
    ASSERT_GT(size, 2 * count);
  }
  std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
  io.seekp(static_cast<std::streamoff>(addr + size / 2));
  const std::string junk(count, '\x5a');
  io.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  ASSERT_TRUE(io.good());
}

TEST(DatasetIo, ADamagedCompressedChunkIsADataErrorNamingFileArrayAndRows) {
  TempDir tmp;
  const std::string path = tmp.file("d.h5");
  const Dataset d = make_dataset(9000, false);
  write_dataset(d, path);
  damage_feature_chunk(path, 5000, 16);  // chunk 1 = rows [4096, 8192)
  const DatasetReader r(path);  // the header and the tables are intact
  EXPECT_EQ(r.read_features(0, 4096), rows_of(d, 0, 4096));
  EXPECT_EQ(r.read_features(8192, 9000), rows_of(d, 8192, 9000));
  for (const auto& [r0, r1] : std::vector<std::pair<std::int64_t, std::int64_t>>{{5000, 5001}, {0, 9000}}) {
    const std::string err = error_of([&, r0 = r0, r1 = r1] { r.read_features(r0, r1); });
    for (const std::string& want : {path, std::string("/features"), std::string("[4096, 8192)")})
      EXPECT_NE(err.find(want), std::string::npos) << "'" << want << "' missing in: " << err;
  }
  EXPECT_NE(error_of([&] { r.verify_all(); }).find("/features"), std::string::npos);
}

TEST(DatasetIo, UncompressedFilesOfOlderDpgnnStillRead) {
  TempDir tmp;
  const std::string chunked = tmp.file("chunked.h5"), contiguous = tmp.file("contiguous.h5");
  const Dataset d = make_dataset(9000, false);
  DatasetStorage off;
  off.compress_features = false;  // the writer of older dpgnn: chunked, no filters
  for (const auto& p : {chunked, contiguous}) write_dataset(d, p, off);
  {
    // Contiguous storage (no chunks at all), the same bytes: tables and header still hold.
    auto f = h5::File::open_readwrite(contiguous);
    ASSERT_GE(H5Ldelete(f.id(), "/features", H5P_DEFAULT), 0);
    auto ds = f.create_dataset<float>("/features", {9000, static_cast<std::uint64_t>(kFeatures)});
    ds.write_rows(0, 9000, d.features.data());
  }
  for (const auto& p : {chunked, contiguous}) {
    const auto f = h5::File::open_read(p);
    EXPECT_TRUE(f.open_dataset("/features").filters().empty()) << p;
    EXPECT_EQ(f.open_dataset("/features").chunk_rows(), p == chunked ? kFeatureChunkRows : 0u) << p;
    const DatasetReader r(p);
    EXPECT_EQ(r.read_features(0, 9000), d.features) << p;
    EXPECT_EQ(r.read_features(4095, 4097), rows_of(d, 4095, 4097)) << p;  // through the cache
    EXPECT_NO_THROW(r.verify_all()) << p;
    EXPECT_EQ(read_dataset(p).features, d.features) << p;
  }
}

TEST(DatasetIo, TheFeatureCacheReturnsWhatUncachedReadsReturn) {
  TempDir tmp;
  const std::string path = tmp.file("d.h5");
  const Dataset d = make_dataset(9000, false);
  write_dataset(d, path);
  DatasetReader cached(path), uncached(path), tiny(path);
  uncached.set_feature_cache_bytes(0);
  tiny.set_feature_cache_bytes(1);  // holds one block: every change of block evicts
  std::mt19937 rng(7);
  std::vector<std::pair<std::int64_t, std::int64_t>> reads{{0, 1}, {4095, 4097}, {8191, 8193}, {8999, 9000},
                                                           {100, 4196}, {5, 5}};
  for (int i = 0; i < 300; ++i) {
    const auto r0 = static_cast<std::int64_t>(rng() % 9000);
    reads.emplace_back(r0, std::min<std::int64_t>(9000, r0 + 1 + static_cast<std::int64_t>(rng() % 3)));
  }
  for (const auto& [r0, r1] : reads) {
    const auto want = rows_of(d, r0, r1);
    EXPECT_EQ(uncached.read_features(r0, r1), want) << r0 << ".." << r1;
    EXPECT_EQ(cached.read_features(r0, r1), want) << r0 << ".." << r1;
    EXPECT_EQ(tiny.read_features(r0, r1), want) << r0 << ".." << r1;
  }
  // The cached reader really serves verified blocks from memory: after the file's chunk 1 is
  // damaged it still returns those rows, while an uncached reader reports the damage.
  damage_feature_chunk(path, 5000, 16);
  EXPECT_EQ(cached.read_features(5000, 5001), rows_of(d, 5000, 5001));
  EXPECT_NE(error_of([&] { uncached.read_features(5000, 5001); }).find("/features"), std::string::npos);
  // Range errors are still reported as such.
  EXPECT_NE(error_of([&] { cached.read_features(8999, 9001); }).find("outside"), std::string::npos);
}

}  // namespace
}  // namespace dpgnn::graph
