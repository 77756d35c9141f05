// Cost of the per-block checksum verification (util/integrity.h, issue 13 item 9) on a
// dataset file: the same reads through DatasetReader (verified block by block) and straight
// through HDF5 (unverified), for the whole file (`dpgnn partition`, `dpgnn info`) and for a
// quarter of the rows (one of four ranks reading its shard), plus verify_all (`dpgnn
// sample`) and, for comparison, a full content checksum (what verifying the whole file on
// every rank would cost). Each measurement runs twice (the second with a warm page cache).
//
// Usage: build/bench/bench_integrity DATASET.h5   (results: docs/benchmarks.md)
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/util/checksum.h"
#include "dpgnn/util/hdf5.h"
#include "dpgnn/util/integrity.h"

using namespace dpgnn;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(const std::function<void()>& f) {
  const auto t = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Rows [b, e) of every array, unverified (raw HDF5 hyperslabs).
std::uint64_t raw_read(const std::string& path, const graph::DatasetMeta& m, std::int64_t b, std::int64_t e) {
  const h5::File f = h5::File::open_read(path);
  const auto ub = static_cast<std::uint64_t>(b), ue = static_cast<std::uint64_t>(e);
  const auto ip = f.open_dataset("/graph/indptr").read_rows<std::int64_t>(ub, ue + 1);
  std::uint64_t bytes = ip.size() * 8;
  bytes += f.open_dataset("/graph/indices")
               .read_rows<std::int32_t>(static_cast<std::uint64_t>(ip.front()), static_cast<std::uint64_t>(ip.back()))
               .size() * 4;
  if (m.num_features > 0) bytes += f.open_dataset("/features").read_rows<float>(ub, ue).size() * 4;
  bytes += m.multilabel ? f.open_dataset("/labels").read_rows<std::uint8_t>(ub, ue).size()
                        : f.open_dataset("/labels").read_rows<std::int64_t>(ub, ue).size() * 8;
  for (const char* p : {"/masks/train", "/masks/val", "/masks/test"})
    bytes += f.open_dataset(p).read_rows<std::uint8_t>(ub, ue).size();
  return bytes;
}

// The same rows through DatasetReader (header check on open, every block verified).
std::uint64_t verified_read(const std::string& path, std::int64_t b, std::int64_t e) {
  const graph::DatasetReader r(path);
  const auto g = r.read_rows(b, e);
  std::uint64_t bytes = (g.indptr().size()) * 8 + g.indices().size() * 4;
  bytes += r.read_features(b, e).size() * 4;
  bytes += r.meta().multilabel ? r.read_label_matrix(b, e).size() : r.read_labels(b, e).size() * 8;
  for (const char* p : {"train", "val", "test"}) bytes += r.read_mask(p, b, e).size();
  return bytes;
}

// The checksum work alone: rows [b, e) of every array (widened to whole blocks) read raw
// (untimed), then timed: checking them against their tables.
template <typename T>
double check_cost(const h5::File& f, const std::string& p, std::uint64_t rows, std::uint64_t b, std::uint64_t e) {
  const integrity::Table t = integrity::read_table(f, p, rows);
  const std::uint64_t lo = b / t.block_rows * t.block_rows, hi = std::min(rows, (e + t.block_rows - 1) / t.block_rows * t.block_rows);
  const auto ds = f.open_dataset(p);
  const auto shape = ds.shape();
  const std::uint64_t width = shape.size() > 1 ? shape[1] : 1;
  const std::vector<T> buf = ds.read_rows<T>(lo, hi);
  return seconds([&] { integrity::check_blocks(f.path(), p, t, lo / t.block_rows, buf.data(), hi - lo, width * sizeof(T)); });
}

double checksum_work(const std::string& path, const graph::DatasetMeta& m, std::int64_t b, std::int64_t e) {
  const h5::File f = h5::File::open_read(path);
  const auto n = static_cast<std::uint64_t>(m.num_nodes), ub = static_cast<std::uint64_t>(b), ue = static_cast<std::uint64_t>(e);
  const auto ip = f.open_dataset("/graph/indptr").read_rows<std::int64_t>(ub, ue + 1);
  double t = check_cost<std::int64_t>(f, "/graph/indptr", n + 1, ub, ue + 1);
  t += check_cost<std::int32_t>(f, "/graph/indices", static_cast<std::uint64_t>(m.num_edges),
                                static_cast<std::uint64_t>(ip.front()), static_cast<std::uint64_t>(ip.back()));
  if (m.num_features > 0) t += check_cost<float>(f, "/features", n, ub, ue);
  t += m.multilabel ? check_cost<std::uint8_t>(f, "/labels", n, ub, ue) : check_cost<std::int64_t>(f, "/labels", n, ub, ue);
  for (const char* p : {"/masks/train", "/masks/val", "/masks/test"}) t += check_cost<std::uint8_t>(f, p, n, ub, ue);
  return t;
}

void full_content_checksum(const std::string& path, const graph::DatasetMeta& m) {
  const h5::File f = h5::File::open_read(path);
  Checksum c;
  const std::uint64_t n = static_cast<std::uint64_t>(m.num_nodes), step = std::uint64_t{1} << 22;
  c.update(f.open_dataset("/graph/indptr").read_all<std::int64_t>());
  const auto idx = f.open_dataset("/graph/indices");
  for (std::uint64_t lo = 0; lo < static_cast<std::uint64_t>(m.num_edges); lo += step)
    c.update(idx.read_rows<std::int32_t>(lo, std::min<std::uint64_t>(m.num_edges, lo + step)));
  if (m.num_features > 0) {
    const auto x = f.open_dataset("/features");
    const std::uint64_t rows = std::max<std::uint64_t>(1, step / static_cast<std::uint64_t>(m.num_features));
    for (std::uint64_t lo = 0; lo < n; lo += rows) c.update(x.read_rows<float>(lo, std::min(n, lo + rows)));
  }
  std::printf("  (content checksum %s)\n", c.hex().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: bench_integrity DATASET.h5\n");
    return 2;
  }
  const std::string path = argv[1];
  const graph::DatasetMeta m = graph::DatasetReader(path).meta();
  const std::int64_t n = m.num_nodes, quarter = n / 4;
  std::printf("%s: %lld nodes, %lld CSR entries, %lld features\n", path.c_str(), static_cast<long long>(n),
              static_cast<long long>(m.num_edges), static_cast<long long>(m.num_features));
  for (int round = 1; round <= 2; ++round) {
    std::uint64_t bytes = 0;
    const double open = seconds([&] { graph::DatasetReader r(path); });
    const double raw_all = seconds([&] { bytes = raw_read(path, m, 0, n); });
    const double ver_all = seconds([&] { verified_read(path, 0, n); });
    std::uint64_t qbytes = 0;
    const double raw_q = seconds([&] { qbytes = raw_read(path, m, quarter, 2 * quarter); });
    const double ver_q = seconds([&] { verified_read(path, quarter, 2 * quarter); });
    const double all = seconds([&] { graph::DatasetReader(path).verify_all(); });
    const double work_all = checksum_work(path, m, 0, n), work_q = checksum_work(path, m, quarter, 2 * quarter);
    const double full = seconds([&] { full_content_checksum(path, m); });
    std::printf("round %d: open+header %.3f s | whole file (%.2f GB): raw HDF5 read %.2f s, DatasetReader "
                "(verified + content checks) %.2f s, checksum work alone %.2f s | one quarter of the rows (%.2f GB): "
                "raw %.2f s, DatasetReader %.2f s, checksum work alone %.3f s | verify_all %.2f s | full content "
                "checksum %.2f s\n",
                round, open, static_cast<double>(bytes) / 1e9, raw_all, ver_all, work_all,
                static_cast<double>(qbytes) / 1e9, raw_q, ver_q, work_q, all, full);
  }
  return 0;
}
