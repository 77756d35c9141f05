// h5::encode_chunk (util/hdf5.h): each of its encodings (raw, deflate alone, shuffle +
// deflate) is what HDF5's own filters decode, so a dataset written chunk by chunk with
// write_chunk reads back through plain H5Dread; and the choice follows the data.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "dpgnn/util/hdf5.h"
#include "test_support.h"

namespace dpgnn::h5 {
namespace {

constexpr std::uint64_t kRows = 512, kCols = 8;

std::vector<float> chunk_of(int kind, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> gauss;
  std::vector<float> v(kRows * kCols);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (kind == 0) v[i] = gauss(rng);                           // dense: incompressible mantissas
    if (kind == 1) v[i] = rng() % 8 == 0 ? 1.0f : 0.0f;          // sparse 0/1
    // 10 random mantissa bits, constant exponent: after shuffling, two of the four byte
    // planes are constant and one is nearly so, which deflate alone cannot see as well.
    if (kind == 2) v[i] = 1.0f + static_cast<float>(rng() % 1024) / 1024.0f;
  }
  return v;
}

TEST(Hdf5, EncodedChunksOfEveryKindReadBackThroughHdf5sFilters) {
  dpgnn::testing::TempDir tmp;
  const std::string path = tmp.file("c.h5");
  std::vector<float> all;
  std::vector<std::uint32_t> masks;
  {
    File f = File::create(path);
    Dataset ds = f.create_dataset<float>("/x", {4 * kRows, kCols}, kRows, 1, true);
    ASSERT_EQ(ds.filters(), (std::vector<std::string>{"shuffle", "deflate"}));
    // dense with the default limit (stays raw), dense forced, sparse 0/1, few mantissa bits
    const std::vector<std::pair<int, double>> plan{{0, 0.5}, {0, 1.0}, {1, 0.5}, {2, 0.5}};
    for (std::size_t c = 0; c < plan.size(); ++c) {
      const auto v = chunk_of(plan[c].first, static_cast<std::uint32_t>(c));
      const EncodedChunk e = encode_chunk(v.data(), v.size() * sizeof(float), sizeof(float), 1, plan[c].second);
      if (e.filter_mask != 0x3u) {
        EXPECT_LE(e.bytes.size(), v.size() * sizeof(float));
      }
      ds.write_chunk(c * kRows, e.filter_mask, e.bytes.data(), e.bytes.size());
      masks.push_back(e.filter_mask);
      all.insert(all.end(), v.begin(), v.end());
    }
  }
  EXPECT_EQ(masks[0], 0x3u) << "dense floats do not halve: stored raw";
  EXPECT_NE(masks[1] & 0x2u, 0x2u) << "forced: deflated";
  EXPECT_EQ(masks[2] & 0x2u, 0u) << "sparse 0/1 values: deflated";
  EXPECT_EQ(masks[3], 0x0u) << "few mantissa bits: shuffle + deflate is the smaller";
  const File f = File::open_read(path);
  EXPECT_EQ(f.open_dataset("/x").read_all<float>(), all);
  EXPECT_LT(f.open_dataset("/x").storage_bytes(), all.size() * sizeof(float));
}

}  // namespace
}  // namespace dpgnn::h5
