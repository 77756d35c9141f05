// Batch selection (see batch.h): Floyd's algorithm for uniform m-subsets and geometric
// skips for Poisson sampling, both driven by the XChaCha20 keystream of the batch secret
// (util/secure_rng.h) for (purpose, step).
#include "dpgnn/sampling/batch.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

#include "dpgnn/util/error.h"
#include "dpgnn/util/secure_rng.h"

namespace dpgnn::sampling {

std::vector<std::int64_t> sample_batch_without_replacement(const Secret& key, std::uint64_t step,
                                                           std::int64_t total, std::int64_t m) {
  if (total < 1) throw UsageError("batch selection: no subgraphs to sample from (M = " + std::to_string(total) + ")");
  if (m < 1 || m > total)
    throw UsageError("batch selection: batch size m = " + std::to_string(m) + " must be in [1, M = " +
                     std::to_string(total) + "]");
  SecureStream rng(key, StreamPurpose::batch_without_replacement, step);
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

std::vector<std::int64_t> sample_batch_poisson(const Secret& key, std::uint64_t step,
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
  SecureStream rng(key, StreamPurpose::batch_poisson, step);
  // The gap before the next selected id is Geometric(q) (failures before a success):
  // floor(log(U) / log(1 - q)) with U uniform in (0, 1].
  const double log1mq = std::log1p(-q);
  std::int64_t i = -1;
  for (;;) {
    // The skip lengths come from the secret keystream; their floating-point rounding changes
    // the inclusion probabilities by at most ~2^-50 relative, which the accountant ignores.
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
