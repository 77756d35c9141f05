// Batch selection (see batch.h): Floyd's algorithm for uniform m-subsets and geometric
// skips for Poisson sampling, both driven by a Philox stream keyed by (seed, step).
#include "dpgnn/sampling/batch.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

#include "dpgnn/util/error.h"
#include "dpgnn/util/rng.h"

namespace dpgnn::sampling {
namespace {

// Batch streams use stream_b = this tag (samplers put the epoch there, which never gets
// this large), so a batch never reuses a sampler's random numbers.
constexpr std::uint64_t kBatchStream = 0xBA7C5E1EC7104E00ULL;
constexpr std::uint64_t kPoissonStream = 0xBA7C5E1EC7104E01ULL;

}  // namespace

std::vector<std::int64_t> sample_batch_without_replacement(std::uint64_t seed, std::uint64_t step,
                                                           std::int64_t total, std::int64_t m) {
  if (total < 1) throw UsageError("batch selection: no subgraphs to sample from (M = " + std::to_string(total) + ")");
  if (m < 1 || m > total)
    throw UsageError("batch selection: batch size m = " + std::to_string(m) + " must be in [1, M = " +
                     std::to_string(total) + "]");
  CounterRng rng(seed, step, kBatchStream);
  // Floyd: for j = M-m .. M-1, draw t uniform in [0, j]; take t unless already taken, then
  // take j. Every m-subset comes out with probability 1 / C(M, m) (Bentley & Floyd 1987).
  std::unordered_set<std::int64_t> chosen;
  chosen.reserve(static_cast<std::size_t>(m) * 2);
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(m));
  for (std::int64_t j = total - m; j < total; ++j) {
    const auto t = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(j) + 1));
    const std::int64_t pick = chosen.insert(t).second ? t : j;
    if (pick == j) chosen.insert(j);
    out.push_back(pick);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::int64_t> sample_batch_poisson(std::uint64_t seed, std::uint64_t step,
                                               std::int64_t total, double q) {
  if (total < 1) throw UsageError("batch selection: no subgraphs to sample from (M = " + std::to_string(total) + ")");
  if (!(q > 0.0 && q <= 1.0))
    throw UsageError("batch selection: Poisson sampling rate q = " + std::to_string(q) + " must be in (0, 1]");
  std::vector<std::int64_t> out;
  if (q == 1.0) {
    out.resize(static_cast<std::size_t>(total));
    for (std::int64_t i = 0; i < total; ++i) out[i] = i;
    return out;
  }
  CounterRng rng(seed, step, kPoissonStream);
  // The gap before the next selected id is Geometric(q) (failures before a success):
  // floor(log(U) / log(1 - q)) with U uniform in (0, 1].
  const double log1mq = std::log1p(-q);
  std::int64_t i = -1;
  for (;;) {
    const double u = 1.0 - rng.uniform();  // (0, 1]
    const double gap = std::floor(std::log(u) / log1mq);
    if (gap >= static_cast<double>(total - 1 - i)) break;
    i += 1 + static_cast<std::int64_t>(gap);
    if (i >= total) break;
    out.push_back(i);
  }
  return out;
}

}  // namespace dpgnn::sampling
