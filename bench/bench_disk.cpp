// Read speed of a dataset or partition file's features (issue 25 item 5, bench/disk.sh): the
// time for every rank of W to load its shard (partition::load_shard: CSR rows, features,
// labels, masks, halo metadata; the ranks one after another in this process, as each would
// alone), and single-row feature reads in a random order (the pattern of DPAR's
// aggregation, train/methods/dpar_appr.cpp) with the reader's block cache and without it.
// Shard loads are timed warm (the file in the page cache) and cold (its pages dropped with
// posix_fadvise before each round, so the bytes come from the disk).
// Each measurement runs `rounds` times; the minimum is printed (the machine is shared).
//
// Usage: build/bench/bench_disk FILE.h5 WORLD [ROWS=2000] [ROUNDS=3]
// (ROWS / 10 single-row reads without the cache and with it, then ROWS with it)
// Prints: storage of /features (bytes on disk, filters), then one line per measurement.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/util/hdf5.h"

using namespace dpgnn;
using Clock = std::chrono::steady_clock;

namespace {

template <typename Fn>
double best_of(int rounds, Fn&& fn) {
  double best = 1e300;
  for (int i = 0; i < rounds; ++i) {
    const auto t = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t).count());
  }
  return best;
}

// Drops the file's pages from the page cache (clean pages only; nothing else is touched),
// so that the next read comes from the disk: what a rank sees on first opening a file.
void evict(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_disk FILE.h5 WORLD [ROWS=2000] [ROUNDS=3]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int world = std::atoi(argv[2]);
  const int rows = argc > 3 ? std::atoi(argv[3]) : 2000;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 3;
  {
    const auto f = h5::File::open_read(path);
    const auto ds = f.open_dataset("/features");
    std::string filters;
    for (const auto& s : ds.filters()) filters += (filters.empty() ? "" : "+") + s;
    const auto shape = ds.shape();
    std::printf("%s: /features [%llu, %llu] raw %.1f MB, stored %.1f MB, filters %s\n", path.c_str(),
                static_cast<unsigned long long>(shape[0]), static_cast<unsigned long long>(shape[1]),
                static_cast<double>(shape[0] * shape[1] * 4) / 1e6, static_cast<double>(ds.storage_bytes()) / 1e6,
                filters.empty() ? "none" : filters.c_str());
  }
  const auto pf = partition::PartitionFile::open(path);
  for (const bool cold : {false, true}) {
    double total = 0, slowest = 0;
    std::size_t feature_values = 0;
    for (int r = 0; r < world; ++r) {
      double s = 1e300;
      for (int i = 0; i < rounds; ++i) {
        if (cold) evict(path);
        s = std::min(s, best_of(1, [&] {
                       const partition::Shard shard = partition::load_shard(pf, r, world);
                       feature_values = shard.features.size();
                     }));
      }
      total += s;
      slowest = std::max(slowest, s);
      std::printf("load_shard %s rank %d/%d: %.3f s (%zu feature values)\n", cold ? "cold" : "warm", r, world, s,
                  feature_values);
    }
    std::printf("load_shard %s all ranks: total %.3f s, slowest rank %.3f s\n", cold ? "cold" : "warm", total,
                slowest);
  }

  const graph::DatasetReader probe(path);
  const std::int64_t n = probe.meta().num_nodes;
  std::mt19937_64 rng(1);
  std::vector<std::int64_t> order(static_cast<std::size_t>(rows));
  for (auto& v : order) v = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n));
  // Without the cache every row decodes and checks a whole block: a tenth of the rows is
  // enough to time that; the cache is timed on the same tenth (the same blocks, so the same
  // page-cache state) and on all rows.
  for (const auto& [cache, k] : {std::pair<bool, int>{false, std::max(1, rows / 10)}, {true, std::max(1, rows / 10)},
                                 {true, rows}}) {
    const double s = best_of(rounds, [&] {
      graph::DatasetReader reader(path);  // one reader per pass, as dpar_appr.cpp does
      if (!cache) reader.set_feature_cache_bytes(0);
      double sink = 0;
      for (int i = 0; i < k; ++i) sink += reader.read_features(order[i], order[i] + 1)[0];
      if (sink == -1) std::printf(" ");
    });
    std::printf("single-row reads (%d random rows), cache %s: %.3f s (%.1f us/row)\n", k, cache ? "on " : "off", s,
                s / k * 1e6);
  }
  return 0;
}
