// Per-block checksums of the arrays in dpgnn's HDF5 files, so that a reader verifies
// exactly the rows it reads (a rank its hyperslab) instead of the whole file (issue 13,
// item 9; docs/data-format.md "Integrity").
//
// Layout: for an array at path P (e.g. /graph/indices) the writer stores
// /integrity/P = uint64 [ceil(rows / block_rows)], the XXH3-64 of each block of
// `block_rows` consecutive rows (row-major bytes as written, seeded with the block index,
// so a block found at another position does not verify), with the attribute block_rows.
// The tables themselves, and the file's attributes, are covered by a digest stored as an
// attribute (the dataset writer's on /integrity, the partition writer's on /partition), which
// readers check when they open the file. Not cryptographic: it detects corruption and
// accidental modification, not an adversary who rewrites the tables.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"

namespace dpgnn::integrity {

constexpr const char* kGroup = "/integrity";
// Rows per block for one-dimensional arrays (ids, offsets, masks): 64 Ki entries.
constexpr std::uint64_t kBlockRows1d = std::uint64_t{1} << 16;

struct Table {
  std::uint64_t block_rows = 0;
  std::vector<std::uint64_t> hashes;
};

// Hash of one block (bytes of its rows) at position `block`.
std::uint64_t block_hash(const void* data, std::size_t bytes, std::uint64_t block);

// Builds a Table while rows are appended in order (any number of rows per call).
class BlockHasher {
 public:
  BlockHasher(std::uint64_t row_bytes, std::uint64_t block_rows);
  ~BlockHasher();
  BlockHasher(BlockHasher&&) noexcept;
  BlockHasher& operator=(BlockHasher&&) noexcept;
  void update(const void* rows, std::uint64_t num_rows);
  // The table over everything appended (the last block may be short).
  Table finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Table of a whole in-memory array.
template <typename T>
Table table_of(const std::vector<T>& v, std::uint64_t row_width, std::uint64_t block_rows) {
  BlockHasher h(row_width * sizeof(T), block_rows);
  h.update(v.data(), row_width == 0 ? 0 : v.size() / row_width);
  return h.finish();
}

std::string table_path(const std::string& array_path);
bool has_tables(const h5::File& f);
void write_table(h5::File& f, const std::string& array_path, const Table& t);
// The table of `array_path`; DataError naming the file when it is missing or does not fit
// an array of `rows` rows.
Table read_table(const h5::File& f, const std::string& array_path, std::uint64_t rows);

// DataError naming the file, the array and the rows when the bytes of blocks
// [first_block, first_block + ...) in `data` do not match the table.
void check_blocks(const std::string& file, const std::string& array_path, const Table& t, std::uint64_t first_block,
                  const void* data, std::uint64_t num_rows, std::uint64_t row_bytes);

// Rows [r0, r1) of a 1-D or 2-D array, read by whole blocks and checked against `t`.
template <typename T>
std::vector<T> read_rows_verified(const h5::File& f, const std::string& array_path, const Table& t, std::uint64_t r0,
                                  std::uint64_t r1) {
  const h5::Dataset ds = f.open_dataset(array_path);
  const auto shape = ds.shape();
  std::uint64_t width = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) width *= shape[i];
  const std::uint64_t rows = shape.empty() ? 1 : shape[0];
  if (r0 > r1 || r1 > rows)
    throw DataError(f.path(), array_path,
                    "row range [" + std::to_string(r0) + ", " + std::to_string(r1) + ") outside the array's " +
                        std::to_string(rows) + " rows");
  if (r0 == r1) return {};
  const std::uint64_t b0 = r0 / t.block_rows, b1 = (r1 + t.block_rows - 1) / t.block_rows;
  const std::uint64_t lo = b0 * t.block_rows, hi = std::min(rows, b1 * t.block_rows);
  std::vector<T> buf = ds.read_rows<T>(lo, hi);
  check_blocks(f.path(), array_path, t, b0, buf.data(), hi - lo, width * sizeof(T));
  if (lo == r0 && hi == r1) return buf;
  return std::vector<T>(buf.begin() + static_cast<std::ptrdiff_t>((r0 - lo) * width),
                        buf.begin() + static_cast<std::ptrdiff_t>((r1 - lo) * width));
}

// Reads every block of the array (in pieces of about 8 MiB, small enough for malloc to reuse
// the buffer instead of mapping fresh pages each time) and checks it.
template <typename T>
void verify_array(const h5::File& f, const std::string& array_path, const Table& t) {
  const h5::Dataset ds = f.open_dataset(array_path);
  const auto shape = ds.shape();
  std::uint64_t width = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) width *= shape[i];
  const std::uint64_t rows = shape.empty() ? 1 : shape[0];
  const std::uint64_t block_bytes = std::max<std::uint64_t>(1, t.block_rows * width * sizeof(T));
  const std::uint64_t step = t.block_rows * std::max<std::uint64_t>(1, (std::uint64_t{8} << 20) / block_bytes);
  for (std::uint64_t lo = 0; lo < rows; lo += step) {
    const std::uint64_t hi = std::min(rows, lo + step);
    const std::vector<T> buf = ds.read_rows<T>(lo, hi);
    check_blocks(f.path(), array_path, t, lo / t.block_rows, buf.data(), hi - lo, width * sizeof(T));
  }
}

// A canonical digest (XXH3-128, hex) of named values and tables, for the header checks.
class Digest {
 public:
  Digest();
  ~Digest();
  void add(const std::string& name, const std::string& value);
  void add(const std::string& name, std::int64_t value);
  void add(const std::string& name, double value);
  void add(const std::string& name, const Table& t);
  std::string hex() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace dpgnn::integrity
