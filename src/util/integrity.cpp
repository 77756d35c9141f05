// Per-block checksums (include/dpgnn/util/integrity.h): XXH3 from libxxhash.
#include "dpgnn/util/integrity.h"

#include <xxhash.h>

#include <cstring>

#include "dpgnn/util/checksum.h"

namespace dpgnn::integrity {

std::uint64_t block_hash(const void* data, std::size_t bytes, std::uint64_t block) {
  return XXH3_64bits_withSeed(data, bytes, block);
}

struct BlockHasher::State {
  std::uint64_t row_bytes, block_rows, rows_in_block = 0;
  XXH3_state_t* xxh = nullptr;
  Table table;
  ~State() {
    if (xxh != nullptr) XXH3_freeState(xxh);
  }
};

BlockHasher::BlockHasher(std::uint64_t row_bytes, std::uint64_t block_rows) : s_(std::make_unique<State>()) {
  if (block_rows == 0) throw std::invalid_argument("BlockHasher: block_rows must be positive");
  s_->row_bytes = row_bytes;
  s_->block_rows = block_rows;
  s_->table.block_rows = block_rows;
  s_->xxh = XXH3_createState();
  XXH3_64bits_reset_withSeed(s_->xxh, 0);
}
BlockHasher::~BlockHasher() = default;
BlockHasher::BlockHasher(BlockHasher&&) noexcept = default;
BlockHasher& BlockHasher::operator=(BlockHasher&&) noexcept = default;

void BlockHasher::update(const void* rows, std::uint64_t num_rows) {
  auto& s = *s_;
  const auto* p = static_cast<const unsigned char*>(rows);
  while (num_rows > 0) {
    const std::uint64_t take = std::min(num_rows, s.block_rows - s.rows_in_block);
    XXH3_64bits_update(s.xxh, p, take * s.row_bytes);
    p += take * s.row_bytes;
    num_rows -= take;
    s.rows_in_block += take;
    if (s.rows_in_block == s.block_rows) {
      s.table.hashes.push_back(XXH3_64bits_digest(s.xxh));
      XXH3_64bits_reset_withSeed(s.xxh, s.table.hashes.size());
      s.rows_in_block = 0;
    }
  }
}

Table BlockHasher::finish() {
  auto& s = *s_;
  if (s.rows_in_block > 0) {
    s.table.hashes.push_back(XXH3_64bits_digest(s.xxh));
    s.rows_in_block = 0;
  }
  return s.table;
}

std::string table_path(const std::string& array_path) { return std::string(kGroup) + array_path; }

bool has_tables(const h5::File& f) { return f.exists(kGroup); }

void write_table(h5::File& f, const std::string& array_path, const Table& t) {
  const std::string p = table_path(array_path);
  const auto slash = p.rfind('/');
  if (slash > 0 && !f.exists(p.substr(0, slash))) f.create_group(p.substr(0, slash));
  auto ds = f.create_dataset<std::uint64_t>(p, {t.hashes.size()});
  if (!t.hashes.empty()) ds.write_rows(0, t.hashes.size(), t.hashes.data());
  f.set_attr(p, "block_rows", static_cast<std::int64_t>(t.block_rows));
}

Table read_table(const h5::File& f, const std::string& array_path, std::uint64_t rows) {
  const std::string p = table_path(array_path);
  if (!f.exists(p))
    throw DataError(f.path(), p, "missing: the checksum table of " + array_path + " is gone (file corrupt or modified)");
  if (!f.has_attr(p, "block_rows")) throw DataError(f.path(), p, "attribute 'block_rows' is missing");
  const std::int64_t br = f.attr_int(p, "block_rows");
  if (br < 1) throw DataError(f.path(), p, "attribute 'block_rows' must be >= 1");
  Table t;
  t.block_rows = static_cast<std::uint64_t>(br);
  const h5::Dataset ds = f.open_dataset(p);
  const auto shape = ds.shape();
  const std::uint64_t want = (rows + t.block_rows - 1) / t.block_rows;
  if (shape.size() != 1 || shape[0] != want)
    throw DataError(f.path(), p,
                    "must hold " + std::to_string(want) + " block checksums for the " + std::to_string(rows) +
                        " rows of " + array_path);
  t.hashes = ds.read_all<std::uint64_t>();
  return t;
}

void check_blocks(const std::string& file, const std::string& array_path, const Table& t, std::uint64_t first_block,
                  const void* data, std::uint64_t num_rows, std::uint64_t row_bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::uint64_t b = first_block, done = 0; done < num_rows; ++b) {
    const std::uint64_t take = std::min(t.block_rows, num_rows - done);
    if (b >= t.hashes.size() || block_hash(p + done * row_bytes, take * row_bytes, b) != t.hashes[b])
      throw DataError(file, array_path,
                      "checksum mismatch in rows [" + std::to_string(b * t.block_rows) + ", " +
                          std::to_string(b * t.block_rows + take) +
                          "): the file is corrupt or was modified after it was written");
    done += take;
  }
}

struct Digest::State {
  Checksum sum;
};

Digest::Digest() : s_(std::make_unique<State>()) {}
Digest::~Digest() = default;

void Digest::add(const std::string& name, const std::string& value) {
  s_->sum.update_tag("s:" + name);
  s_->sum.update_tag(value);
}

void Digest::add(const std::string& name, std::int64_t value) {
  s_->sum.update_tag("i:" + name);
  s_->sum.update(&value, sizeof value);
}

void Digest::add(const std::string& name, double value) {
  s_->sum.update_tag("d:" + name);
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  s_->sum.update(&bits, sizeof bits);
}

void Digest::add(const std::string& name, const Table& t) {
  s_->sum.update_tag("t:" + name);
  const std::uint64_t head[] = {t.block_rows, t.hashes.size()};
  s_->sum.update(head, sizeof head);
  s_->sum.update(t.hashes);
}

std::string Digest::hex() const { return s_->sum.hex(); }

}  // namespace dpgnn::integrity
